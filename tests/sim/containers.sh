# shellcheck shell=bash
# The container half on the simulated server, shared by the scenarios that set Docker up
# (tests/integration/sim_containers.sh, the embedded-stack scenarios through stacks.sh): the registry that plays
# NVIDIA's and its images, and the checks that a converged host runs a container that sees every GPU.
# Source after lib.sh.
source "$SIM_LIB_DIR/registry.sh"

# The registry that plays NVIDIA's (registry.sh: Debian's docker-registry on 127.0.0.1:443 of the simulated
# server's network, TLS for nvcr.io from the simulation's own CA) and the images it serves, built here.

# sim_container_stack NAME REF [DIGEST]: writes $SIM_HOST/sim/NAME.yaml, the simulated server's stack with its
# container half: the toolkit 1.19.1 from its own repository (1.17.8 and 1.20.0 sit beside it in the index),
# Ubuntu's Docker with the toolkit's runtime, and the image REF (pinned to DIGEST when given) whose CUDA is
# read from the image.
sim_container_stack() {
  python3 - "$SIM_HOST/sim/stack.yaml" "$SIM_HOST/sim/$1.yaml" "$1" "$2" "${3:-}" "$SIM_URL" "$SIM_CTK_KEY_FPR" <<'PY' || sim_fail "writing stack $1"
import sys
src, dst, name, ref, digest, url, fpr = sys.argv[1:]
s = open(src).read()
tk = "\n".join(["container_toolkit:", "  version: 1.19.1", "  packages:"] +
               ["    - {name: %s}" % n for n in
                ("nvidia-container-toolkit", "nvidia-container-toolkit-base", "libnvidia-container-tools",
                 "libnvidia-container1")]) + "\n"
assert "container_toolkit:\n  enabled: false\n" in s
s = s.replace("container_toolkit:\n  enabled: false\n", tk)
repo = ("  - name: nvidia-container-toolkit\n    url: %s/nvidia-container-toolkit/\n"
        "    keyring_url: %s/nvidia-container-toolkit.gpg\n"
        "    keyring_path: /usr/share/keyrings/nvidia-container-toolkit-keyring.gpg\n"
        "    key_fingerprint: %s\n"
        "    list_path: /etc/apt/sources.list.d/nvidia-container-toolkit.list\n" % (url, url, fpr))
assert "\ndriver:" in s
s = s.replace("\ndriver:", repo + "\ndriver:", 1)
old = "  ref: nvcr.io/nvidia/pytorch:23.10-py3\n  cuda: unknown\n  cuda_unknown_reason: \"not known (as in the embedded stack)\"\n"
assert old in s
new = "  ref: %s\n  cuda: unknown\n  cuda_unknown_reason: \"read from the image's CUDA_VERSION\"\n" % ref
if digest:
    new += "  digest: \"%s\"\n" % digest
s = s.replace(old, new).replace("name: sim-stack", "name: sim-" + name)
s = s.replace("\nworkload:", "\ndocker:\n  engine: docker.io\n  gpu_access: runtime\n\nworkload:")
open(dst, "w").write(s)
PY
}

# sim_image_digest REF: the digest the registry gives REF (what `docker pull` records), once sim_registry
# pushed it.
sim_image_digest() {
  awk -v r="$1" '$1 == r { print $2; found = 1 } END { exit !found }' "$SIM_DIR/registry/digests" 2>/dev/null ||
    sim_fail "sim_image_digest: $1 was not pushed (sim_registry)"
}

# _sim_image_rootfs DIR torch|plain: a small image root built from this machine's binaries: dash as /bin/sh,
# grep, sed, head, cat, env, ls and the libraries they load (a merged /usr, like the images NGC builds on).
# nvidia-smi and the driver's libraries are not in it: the toolkit's hook puts them in a container. torch: a
# `python` that runs the torch check (torch.cuda counts the GPUs nvidia-smi -L lists, as the hook handed them
# in); plain: a `python` without torch.
_sim_image_rootfs() {
  local r=$1 b p dest
  rm -rf "$r"
  mkdir -p "$r/usr/bin" "$r/usr/lib" "$r/usr/lib64" "$r/etc" "$r/tmp" "$r/root" "$r/proc" "$r/sys" "$r/dev" "$r/run"
  ln -s usr/bin "$r/bin"
  ln -s usr/bin "$r/sbin"
  ln -s usr/lib "$r/lib"
  ln -s usr/lib64 "$r/lib64"
  for b in dash grep sed head cat env ls true sleep yes; do
    p=$(type -P "$b") || sim_fail "$b not found (building the image's root)"
    cp -L "$p" "$r/usr/bin/$b"
    while read -r p; do
      dest=$r/usr/${p#/usr/}
      [[ -e $dest ]] && continue
      mkdir -p "$(dirname "$dest")"
      cp -L "$p" "$dest"
    done < <(ldd "$p" | grep -o '/[^ ]*')
  done
  ln -s dash "$r/usr/bin/sh"
  printf 'root:x:0:0:root:/root:/bin/sh\n' >"$r/etc/passwd"
  printf 'root:x:0:\n' >"$r/etc/group"
  if [[ $2 == torch ]]; then
    mkdir -p "$r/usr/share/gpuprep-sim"
    _sim_measure_replay "$SIM_LIB_DIR/../fixtures/accept/h100x8-healthy.jsonl" >"$r/usr/share/gpuprep-sim/measure.jsonl" ||
      sim_fail "writing the measurement replay"
    _sim_burn_replay "$SIM_LIB_DIR/../fixtures/accept/h100x8-healthy.jsonl" >"$r/usr/share/gpuprep-sim/burn.jsonl" ||
      sim_fail "writing the burn replay"
    cat >"$r/usr/bin/python" <<'SH'
#!/bin/sh
# gpuprep accept's measurement program (python -c PROGRAM --device cuda ...): a recorded run replayed as
# SIM_ACCEPT (the image's environment) says: healthy, hang (in hbm_copy, after matmul) or flood. Healthy with
# --burn-seconds D: the burn after the other phases, as the program runs it (its progress start, D seconds, one
# burn record per GPU with D as its duration, its progress done), before the run's done.
if [ "$1" = -c ] && [ "$3" = --device ]; then
  f=/usr/share/gpuprep-sim/measure.jsonl
  burn=0
  while [ $# -gt 1 ]; do
    [ "$1" = --burn-seconds ] && burn=$2
    shift
  done
  case $burn in '' | *[!0-9.]*) echo "sim image: --burn-seconds $burn" >&2; exit 2 ;; esac
  case "${SIM_ACCEPT:-healthy}" in
    healthy)
      [ "$burn" = 0 ] && { cat "$f"; exit 0; }
      sed '$d' "$f"
      echo "{\"record\":\"progress\",\"phase\":\"burn\",\"state\":\"start\",\"budget_s\":$burn}"
      sleep "$burn"
      sed "s/\"duration_s\":[0-9.]*/\"duration_s\":$burn/" /usr/share/gpuprep-sim/burn.jsonl
      echo '{"record":"progress","phase":"burn","state":"done"}'
      echo '{"record":"done"}'
      exit 0 ;;
    hang) sed -n '1,/"phase":"hbm_copy","state":"start"/p' "$f"; exec sleep 3600 ;;
    flood) head -n 1 "$f"; exec yes '{"record":"progress","phase":"matmul_bf16","state":"note"}' ;;
  esac
  echo "sim image: SIM_ACCEPT=$SIM_ACCEPT" >&2
  exit 2
fi
case "$1 $2" in *torch.cuda.device_count*) ;; *) echo "sim image: only the torch check is simulated" >&2; exit 2 ;; esac
out=$(nvidia-smi -L 2>/dev/null)
n=$(printf '%s\n' "$out" | grep -c '^GPU ')
[ "$n" -gt 0 ] || { echo "RuntimeError: No CUDA GPUs are available" >&2; exit 1; }
printf '%s %s\n' "$n" "$(printf '%s\n' "$out" | head -n 1 | sed 's/^GPU 0: \(.*\) (UUID.*/\1/')"
SH
  else
    cat >"$r/usr/bin/python" <<'SH'
#!/bin/sh
echo "ModuleNotFoundError: No module named 'torch'" >&2
exit 1
SH
  fi
  chmod 0755 "$r/usr/bin/python"
}

# _sim_measure_replay RECORDING: the measurement program's output for a recording's phase records (each
# phase's records between its progress start and done, then done), as the image's python replays it.
_sim_measure_replay() {
  python3 - "$1" <<'PY'
import json, sys
phases = []
for line in open(sys.argv[1]):
    j = json.loads(line)
    if j.get("record") != "phase":
        continue
    if not phases or phases[-1][0] != j["phase"]:
        phases.append((j["phase"], []))
    phases[-1][1].append(line.strip())
for name, lines in phases:
    print(json.dumps({"record": "progress", "phase": name, "state": "start", "budget_s": 3.0}, separators=(",", ":")))
    print("\n".join(lines))
    print(json.dumps({"record": "progress", "phase": name, "state": "done"}, separators=(",", ":")))
print('{"record":"done"}')
PY
}

# _sim_burn_replay RECORDING: the burn records (one per GPU) the measurement program reports for a healthy burn
# on the recording's GPUs, as tests/fixtures/accept/make_burn.py writes them (burn-healthy).
_sim_burn_replay() {
  local tmp board
  tmp=$(mktemp -d) || return 1
  board=$(basename "$1")
  board=${board%%-*}
  python3 "$SIM_LIB_DIR/../fixtures/accept/make_burn.py" "$1" "$tmp" &&
    grep '"record":"phase","phase":"burn"' "$tmp/$board-burn-healthy.jsonl"
  local rc=$?
  rm -rf "$tmp"
  return $rc
}

# sim_registry "REF ENV..." ...: starts the registry (once per script) and pushes each REF to it, an image
# whose config's environment is the usual PATH and ENV... (no spaces in a value); the simulated server
# resolves nvcr.io to it and trusts its CA (system store and /etc/docker/certs.d/nvcr.io/). An image whose
# environment sets PYTORCH_VERSION or NVIDIA_PYTORCH_VERSION (as NGC's PyTorch images do) gets the torch
# check's python, any other a python without torch. SIM_IMAGE_FORMAT: docker (a Docker v2 manifest, the
# default) or oci-index (an OCI index for linux/amd64 and linux/arm64); SIM_IMAGE_PLATFORMS: the index's
# platforms instead (e.g. arm64 alone: none for this host); SIM_IMAGE_EXTRA_MB: a second layer of that many
# MiB of incompressible bytes (a pull that lasts). Each digest: sim_image_digest REF. SIM_REGISTRY_AUTH=token
# starts it with token authentication.
sim_registry() {
  local spec ref kind digest
  [[ -n ${SIM_REGISTRY_STARTED:-} ]] || {
    sim_registry_debs "$SIM_DEBS"
    SIM_CLEANUP_HOOKS+=(sim_registry_cleanup)
    sim_registry_start ${SIM_REGISTRY_AUTH:-} || sim_fail "the registry did not start"
    SIM_REGISTRY_STARTED=1
  }
  mkdir -p "$SIM_DIR/registry"
  for spec in "$@"; do
    read -r ref _ <<<"$spec"
    awk -v r="$ref" '$1 == r { found = 1 } END { exit !found }' "$SIM_DIR/registry/digests" 2>/dev/null && continue
    kind=plain
    [[ " $spec" == *" PYTORCH_VERSION="* || " $spec" == *" NVIDIA_PYTORCH_VERSION="* ]] && kind=torch
    [[ -d $SIM_DIR/registry/rootfs-$kind ]] || _sim_image_rootfs "$SIM_DIR/registry/rootfs-$kind" "$kind"
    # shellcheck disable=SC2086  # ENV words
    local extra=()
    [[ -n ${SIM_IMAGE_PLATFORMS:-} ]] && extra+=(--platforms "$SIM_IMAGE_PLATFORMS")
    [[ -n ${SIM_IMAGE_EXTRA_MB:-} ]] && extra+=(--extra-layer-mb "$SIM_IMAGE_EXTRA_MB")
    digest=$(sim_registry_push "$ref" --rootfs "$SIM_DIR/registry/rootfs-$kind" \
      --format "${SIM_IMAGE_FORMAT:-docker}" "${extra[@]}" ${spec#"$ref"}) || sim_fail "pushing $ref to the registry"
    echo "$ref $digest" >>"$SIM_DIR/registry/digests"
  done
  sim_registry_trust "$SIM_HOST/upper"
}

# The stand-in engine's registry (tests/support/fake_dockerd.py), for the scenarios that stay on the stand-in
# engine (Docker 25 and newer: sim_docker_ce).

# sim_image_digest_standin REF: the manifest digest the stand-in registry gives REF.
sim_image_digest_standin() { echo "sha256:$(printf 'gpuprep sim image %s' "$1" | sha256sum | cut -d' ' -f1)"; }

# sim_registry_standin "REF ENV..." ...: /sim/dockerd-state.json of the current host (read by the stand-in engine when
# it starts and on every request): a registry holding each REF at sim_image_digest REF, its config's
# environment ENV... (no spaces in a value). An image whose environment sets PYTORCH_VERSION or
# NVIDIA_PYTORCH_VERSION (as NGC's PyTorch images do) gets the torch check's python (/sim/image/torch); any other image a python without torch
# (/sim/image/plain), so a torch check run on it fails as it would on the real image. The engine answers with
# version SIM_ENGINE_VERSION (default 24.0.7, the sim's docker.io).
sim_registry_standin() {
  mkdir -p "$SIM_HOST/sim/image/torch" "$SIM_HOST/sim/image/plain"
  # torch.cuda counts the GPUs the container runtime handed in (nvidia-smi is the driver's, as the toolkit
  # mounts it into a container).
  cat >"$SIM_HOST/sim/image/torch/python" <<'SH'
#!/bin/sh
case "$1 $2" in *torch.cuda.device_count*) ;; *) echo "sim image: only the torch check is simulated" >&2; exit 2 ;; esac
out=$(nvidia-smi -L 2>/dev/null)
n=$(printf '%s\n' "$out" | grep -c '^GPU ')
[ "$n" -gt 0 ] || { echo "RuntimeError: No CUDA GPUs are available" >&2; exit 1; }
printf '%s %s\n' "$n" "$(printf '%s\n' "$out" | head -n 1 | sed 's/^GPU 0: \(.*\) (UUID.*/\1/')"
SH
  cat >"$SIM_HOST/sim/image/plain/python" <<'SH'
#!/bin/sh
echo "ModuleNotFoundError: No module named 'torch'" >&2
exit 1
SH
  chmod 0755 "$SIM_HOST/sim/image/torch/python" "$SIM_HOST/sim/image/plain/python"
  python3 - "$SIM_HOST/sim/dockerd-state.json" "$@" <<'PY' || sim_fail "writing the simulated registry"
import hashlib, json, os, sys
registry = {}
for spec in sys.argv[2:]:
    ref, *env = spec.split()
    h = lambda what: "sha256:" + hashlib.sha256(("gpuprep sim %s %s" % (what, ref)).encode()).hexdigest()
    registry[ref] = {
        "digest": "sha256:" + hashlib.sha256(("gpuprep sim image %s" % ref).encode()).hexdigest(),
        "id": h("config"),
        "layers": [29534055, 1048576000, 734003200],
        "env": ["PATH=/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"] + env,
        "bin": "/sim/image/torch" if any(e.startswith(("PYTORCH_VERSION=", "NVIDIA_PYTORCH_VERSION=")) for e in env)
               else "/sim/image/plain",
    }
state = {"version": os.environ.get("SIM_ENGINE_VERSION", "24.0.7"), "api_version": "1.43", "daemon_json": "/etc/docker/daemon.json",
         "store": "/var/lib/docker/images.json", "hook": "/usr/bin/nvidia-container-runtime-hook",
         "cdi_dirs": ["/etc/cdi", "/var/run/cdi"], "registry": registry}
json.dump(state, open(sys.argv[1], "w"), indent=1)
PY
}

# sim_registry_manifest_gets REF: how many times the registry served the manifest REF names (REPO:TAG or
# REPO@DIGEST, as pulled), from its access log.
sim_registry_manifest_gets() {
  local ref=${1#nvcr.io/} repo what
  if [[ $ref == *@* ]]; then repo=${ref%@*} what=${ref#*@}; else repo=${ref%:*} what=${ref##*:}; fi
  grep -c "\"GET /v2/$repo/manifests/$what HTTP" "$SIM_DIR/registry/registry.log" 2>/dev/null || true
}

# sim_check_daemon_json: /etc/docker/daemon.json parses and registers the nvidia runtime (not as the default).
sim_check_daemon_json() {
  check_eq "daemon.json registers the nvidia runtime, not as the default" "nvidia-container-runtime None" \
    "$(sim_run python3 -c 'import json; d=json.load(open("/etc/docker/daemon.json")); print(d["runtimes"]["nvidia"]["path"], d.get("default-runtime"))' 2>&1)"
}

# sim_check_pulled REF: the engine holds REF at the digest the registry gave it (its RepoDigests), pulled once
# (the registry served its manifest once), and gpuprep recorded that digest.
sim_check_pulled() {
  local d repo
  d=$(sim_image_digest "$1")
  repo=${1%:*}
  check "the engine holds $1 at the registry's digest" \
    sim_run sh -c "docker image inspect --format '{{range .RepoDigests}}{{println .}}{{end}}' '$repo@$d' | grep -qxF '$repo@$d'"
  check_eq "its manifest was fetched from the registry once (by tag or by digest)" 1 \
    "$(($(sim_registry_manifest_gets "$1") + $(sim_registry_manifest_gets "$repo@$d")))"
  check "its digest is recorded" sim_run grep -qF "\": \"$d\"" /var/lib/gpuprep/images.json
}

# sim_check_container_gpus VERIFY_NAME GPUS [torch|no-torch]: the sim_gp verify run VERIFY_NAME ran nvidia-smi -L
# in a container through the engine and it listed all GPUS; torch: the torch check in the image counted them;
# no-torch: the image carries no PyTorch and verify ran no torch check.
sim_check_container_gpus() {
  local out=$SIM_DIR/$1.out
  check "nvidia-smi -L in a container lists all $2 GPUs" \
    grep -q "container_toolkit *ok *a container sees every GPU ($2, nvidia-smi -L)" "$out"
  case ${3:-torch} in
    torch) check "the torch check counts them and names them" grep -q "image *ok *torch in .* sees $2 GPUs (" "$out" ;;
    no-torch) check "an image without PyTorch gets no torch check" grep -q "image *skip *.* carries no PyTorch" "$out" ;;
  esac
  check "the engine ran them with the toolkit's hook, which handed in all $2 GPUs" \
    grep -q "^container [0-9a-f]*: $2 GPU(s) (all)" "$SIM_HOST/sim/log/nvidia-container-hook.log"
}
