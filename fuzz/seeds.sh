#!/usr/bin/env bash
# Writes the seed corpus of each fuzz target into DIR/<target>/ from the repository's own inputs: the
# shipped manifests and the test fixtures (host trees, snapshots, broken manifests). Usage: fuzz/seeds.sh DIR
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: fuzz/seeds.sh DIR}
mkdir -p "$out"/{fuzz_manifest,fuzz_version,fuzz_probe_parsers,fuzz_snapshot,fuzz_input,fuzz_remote,fuzz_size,fuzz_watch_record,fuzz_apt_argv,fuzz_redist_archive,fuzz_daemon_json,fuzz_nccl_log,fuzz_journal_export,fuzz_apt_history}
n=0
seed() {  # seed TARGET FILE
  n=$((n + 1))
  cp -- "$2" "$out/$1/seed-$n"
}
for f in manifests/*.yaml manifests/*/*.yaml tests/fixtures/manifests/*.yaml tests/sim/stack.yaml.in; do
  seed fuzz_manifest "$f"
done
for f in tests/fixtures/snapshots/*.json; do seed fuzz_snapshot "$f"; done
# daemon.json: each fixture host's, after a first byte that asks for everything (default runtime, CDI on).
for f in tests/fixtures/hosts/*/etc/docker/daemon.json; do
  n=$((n + 1))
  { printf '\x07'; cat -- "$f"; } >"$out/fuzz_daemon_json/seed-$n"
done
# watch recordings: the whole file, and its first lines (a sample, then samples and a verdict).
for f in tests/fixtures/watch/*.jsonl; do
  seed fuzz_watch_record "$f"
  head -n 3 "$f" >"$out/fuzz_watch_record/head-$(basename "$f")"
done
# NCCL logs: each recorded log.
for f in tests/fixtures/nccl-logs/*.log; do seed fuzz_nccl_log "$f"; done
# The journal's export format: the Xid fixture (kernel and program entries, a binary field), and its first
# entry alone. apt's history.log: the fixture, plain and unpacked from its rotation.
seed fuzz_journal_export tests/fixtures/xid/journal-export
awk 'BEGIN{RS="\n\n"} NR==1{printf "%s\n\n", $0}' tests/fixtures/xid/journal-export >"$out/fuzz_journal_export/first-entry"
seed fuzz_apt_history tests/fixtures/apt-history/history.log
gzip -dc tests/fixtures/apt-history/history.log.1.gz >"$out/fuzz_apt_history/rotated"
# /proc/PID/cgroup files of the fixture trees (the target reads its bytes as one too).
for f in tests/fixtures/proc/*/*/proc/*/cgroup tests/fixtures/proc/two-jobs/proc/*/cgroup; do
  seed fuzz_watch_record "$f"
done
# Probe inputs: every small regular file of the fixture host trees (os-release, /proc, /sys, dpkg status,
# headers, daemon.json, CDI specs...).
while IFS= read -r -d '' f; do seed fuzz_probe_parsers "$f"; done \
  < <(find tests/fixtures/hosts -type f -size -64k -print0 | sort -z)
# Version pairs (one per line) as they appear in the stacks and in dpkg status files.
i=0
for pair in "535.129.03-1\n535.129.03-0ubuntu1" "1:2.0~rc1-1\n2.0-1" "8.9.7.29-1+cuda12.2\n8.9.7.29-1+cuda12.1" \
            "2.18.5-1+cuda12.2\n2.18.5-1+cuda12.2" "580.95.05-0ubuntu1\n580.95.05-1" "1.0~~a\n1.0~" \
            "0:1.2.3\n1.2.3" "12.2.2-1\n12.2.140-1" ">= 535\n535.129.03"; do
  i=$((i + 1))
  printf '%b' "$pair" >"$out/fuzz_version/pair-$i"
done
i=0
for s in "plain" "a b\x01c'd\x01" "\$(reboot)\x01\`id\`" "http://127.0.0.1@example.com/x" \
         "https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64/" \
         "/etc/apt/sources.list.d/cuda.list" "caf\xc3\xa9 \xff\x1b[2J" "file:///srv/mirror/"; do
  i=$((i + 1))
  printf '%b' "$s" >"$out/fuzz_input/seed-$i"
done
# What servers send: NVIDIA's redistrib JSON in both layouts (the unit tests' copies), registry challenges,
# image references.
python3 - "$out/fuzz_remote" tests/redist/redistrib_test.cc <<'PY'
import re, sys
text = open(sys.argv[2]).read()
for i, body in enumerate(re.findall(r'R"J\((.*?)\)J"', text, re.S)):
    open(f"{sys.argv[1]}/json-{i}", "w").write(body)
PY
i=0
for s in 'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/ubuntu:pull"' \
         'Basic realm="x", Bearer realm="https://nvcr.io/proxy_auth",scope="repository:nvidia/pytorch:pull,push"' \
         'Bearer realm="http://127.0.0.1:5000/t\"q\"",error="insufficient_scope"' \
         nvcr.io/nvidia/pytorch:25.12-py3 ubuntu "mirror.local:5000/nvidia/pytorch@sha256:$(printf 'a%.0s' $(seq 64))" \
         "[::1]:5000/a/b:c" "12.2.2.009"; do
  i=$((i + 1))
  printf '%s' "$s" >"$out/fuzz_remote/seed-$i"
done
# size: config.json shapes (first byte 0) and Task documents (first byte 1) from its unit tests and docs.
i=0
for s in '{"model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008, "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 32, "vocab_size": 32000}' \
         '{"model_type": "qwen2", "hidden_size": 896, "intermediate_size": 4864, "num_attention_heads": 14, "num_hidden_layers": 24, "num_key_value_heads": 2, "tie_word_embeddings": true, "vocab_size": 151936}' \
         '{"model_type": "t5", "d_model": 512, "d_kv": 64, "d_ff": 2048, "num_layers": 6, "num_heads": 8, "vocab_size": 32128}'; do
  i=$((i + 1))
  { printf '\x00'; printf '%s' "$s"; } >"$out/fuzz_size/config-$i"
done
{ printf '\x01'; sed -n '/^apiVersion: gpuprep\/v1$/,/^constants:/p' docs/size.md; } >"$out/fuzz_size/task-1"
printf '\x01apiVersion: gpuprep/v1\nkind: Task\nmetadata: {name: t}\nparams: 7e9\narchitecture: {layers: 32, hidden: 4096, heads: 32, ffn: 11008, vocab: 32000}\nparallel: {strategy: fsdp, gpus: 8}\ngpu_memory: 80GB\n' >"$out/fuzz_size/task-2"
# fuzz_apt_argv: each embedded stack, \x01, a Packages index serving its packages (each layer's version with a
# -1 revision, and a +cudaX.Y build), \x01, a dpkg status, \x01, a pins file; plus the hostile inputs that once
# reached apt's command line (a docker package named like an option, a dependency on one).
python3 - "$out/fuzz_apt_argv" manifests/stacks/*.yaml <<'PY'
import re, sys
out, stacks = sys.argv[1], sys.argv[2:]
for i, path in enumerate(stacks):
    text = open(path).read()
    stanzas, section, version = [], None, None
    for line in text.splitlines():
        m = re.match(r"^([a-z_]+):", line)
        if m:
            section, version = m.group(1), None
        m = re.match(r"^  version: ([0-9][0-9.]*)", line)
        if m:
            version = m.group(1)
        m = re.search(r"\{name: ([a-z0-9][a-z0-9+.-]+)", line)
        if m and version:
            for rev in ("-1", "-1+cuda13.0", "-0ubuntu1"):
                stanzas.append("Package: %s\nVersion: %s%s\nArchitecture: amd64\n" % (m.group(1), version, rev))
    status = stanzas[0].replace("Architecture", "Status: hold ok installed\nArchitecture") if stanzas else ""
    pins = "Explanation: gpuprep layers: driver\nPackage: x-y\nPin: version 1.0-1\nPin-Priority: 1001\n"
    open("%s/stack-%d" % (out, i), "w").write(text + "\x01" + "\n".join(stanzas) + "\x01" + status + "\x01" + pins)
hostile = open(stacks[0]).read().replace("    - {name: docker.io}", '    - {name: "-oDpkg::Pre-Invoke::=touch${IFS}PWNED"}')
open(out + "/hostile-docker-name", "w").write(hostile + "\x01\x01\x01")
open(out + "/hostile-index", "w").write(open(stacks[0]).read() + "\x01" +
    "Package: nvidia-driver-580-open\nVersion: 580.95.05-0ubuntu1\nArchitecture: amd64\n"
    "Depends: --allow-unauthenticated (= 1)\n\nPackage: --allow-unauthenticated\nVersion: 1\nArchitecture: amd64\n"
    "\x01\x01")
PY
# Archives for the redist extraction: NVIDIA's layout and the hostile shapes the installer refuses (raw: first
# byte 0, a plain tar, an xz and a gzip one), and the same shapes as structured entries (first byte 1).
python3 - "$out/fuzz_redist_archive" <<'PY'
import gzip, io, lzma, sys, tarfile
out = sys.argv[1]
top = "cudnn-linux-x86_64-9.12.0.46_cuda12-archive"
def tar(members):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as t:
        for name, kind, link, data in members:
            ti = tarfile.TarInfo(name)
            ti.type, ti.linkname, ti.size, ti.mtime = kind, link, len(data), 1700000000
            t.addfile(ti, io.BytesIO(data) if data else None)
    return buf.getvalue()
D, F, S, H = tarfile.DIRTYPE, tarfile.REGTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE
good = [(top, D, "", b""), (top + "/lib", D, "", b""), (top + "/lib/libcudnn.so.9.12.0.46", F, "", b"\x7fELF" * 64),
        (top + "/lib/libcudnn.so.9", S, "libcudnn.so.9.12.0.46", b""), (top + "/lib/hard", H, top + "/lib/libcudnn.so.9.12.0.46", b"")]
shapes = {
    "good": good,
    "hardlink-symlink": good + [(top + "/lib/a/b/up", S, "../../../include", b""), (top + "/include2", H, top + "/lib/a/b/up", b"")],
    "link-climb": good + [(top + "/lib/s", S, ".", b""), (top + "/lib/up", S, "s/../../../x", b"")],
    "symlink-escape": good + [(top + "/lib/e", S, "../../../../tmp", b""), (top + "/lib/e/x", F, "", b"x")],
    "traversal": good + [(top + "/../../evil", F, "", b"x")],
    "bytes": good + [(top + "/lib/big%d" % i, F, "", bytes(8192)) for i in range(4)],
    "deep": good + [(top + "/" + "/".join(["d" * 200] * 6) + "/f", F, "", b"x")],
}
for name, members in shapes.items():
    raw = tar(members)
    open(f"{out}/raw-{name}", "wb").write(b"\0" + raw)
    if name == "good":
        open(f"{out}/xz-{name}", "wb").write(b"\0" + lzma.compress(raw, format=lzma.FORMAT_XZ))
        open(f"{out}/gz-{name}", "wb").write(b"\0" + gzip.compress(raw))
    kinds = {F: 0, D: 1, S: 2, H: 3}
    s = bytearray(b"\1")
    for path, kind, link, data in members:
        under = path.startswith(top + "/")
        rel = path[len(top) + 1:] if under else path
        hard_under = kind == H and link.startswith(top + "/")
        link = link[len(top) + 1:] if hard_under else link
        s += bytes([kinds[kind] | (0x80 if under else 0) | (0x40 if hard_under else 0), min(len(rel), 255)])
        s += rel.encode()[:255] + bytes([min(len(link), 255)]) + link.encode()[:255] + bytes([min(len(data) // 4096, 255)])
    open(f"{out}/entries-{name}", "wb").write(bytes(s))
PY
echo "fuzz/seeds.sh: $(find "$out" -type f | wc -l) seeds in $out"
