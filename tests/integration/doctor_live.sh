#!/usr/bin/env bash
# ctest-labels: fixtures
# `gpuprep doctor` on the machine running the tests (the live host, real seams): invariants, not versions.
#  - stdout of --json is one valid JSON object of docs/json.md's shape, the stack row and every layer present (fabricmanager
#    exactly when the host has NVSwitches), summary counts that add up, exit 0 iff no layer failed;
#  - the table run exits with the same code and ends with the same summary;
#  - on a host without an NVIDIA PCI device (the build machines) the gpu layer fails and the exit code is 1;
#  - where this machine's CUDA 13.0 pip-wheel toolkit is installed (/usr/local/cuda-13.0), doctor finds
#    CUDA 13.x, cuDNN and NCCL.
# Usage: bash doctor_live.sh <gpuprep-binary> <source-dir> <build-dir>
set -uo pipefail
GPUPREP=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$GPUPREP" doctor --json >"$tmp/out.json" 2>"$tmp/err"
rc=$?
"$GPUPREP" doctor >"$tmp/table" 2>/dev/null
rc_table=$?
has_gpu=0
for v in /sys/bus/pci/devices/*/vendor; do
  [ "$(cat "$v" 2>/dev/null)" = "0x10de" ] && c=$(cat "$(dirname "$v")/class") && case $c in 0x03*) has_gpu=1 ;; esac
done
has_cuda13=0
[ -d /usr/local/cuda-13.0 ] && has_cuda13=1

python3 - "$tmp/out.json" "$rc" "$rc_table" "$tmp/table" "$has_gpu" "$has_cuda13" "$tmp/err" <<'PY'
import json, sys
path, rc, rc_table, table_path, has_gpu, has_cuda13, err_path = sys.argv[1:]
rc, rc_table, has_gpu, has_cuda13 = int(rc), int(rc_table), has_gpu == "1", has_cuda13 == "1"
failures = []
def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond: failures.append(what)

try:
    doc = json.load(open(path))
except Exception as e:
    check(False, "stdout is valid JSON (%s)" % e); sys.exit(1)
check(list(doc.keys())[:5] == ["gpuprep", "manifest", "host", "layers", "summary"], "top-level keys in order")
host = doc["host"]
for k, t in [("kernel", str), ("arch", str), ("cpus", int), ("memory_bytes", int), ("shm_bytes", int), ("gpus", list)]:
    check(isinstance(host.get(k), t), "host.%s is %s" % (k, t.__name__))
check(all(isinstance(host["os"].get(k), str) for k in ("id", "version_id", "pretty_name")), "host.os has id, version_id, pretty_name")
names = [l["name"] for l in doc["layers"]]
expected = ["stack", "os", "host", "gpu", "driver", "fabricmanager", "cuda", "cudnn", "nccl", "docker", "container_toolkit", "image"]
if host.get("nvswitch_count", 0) == 0:
    expected.remove("fabricmanager")
if host.get("network"):  # written only on hosts with RDMA devices, where doctor shows the network layer
    expected.append("network")
check(names == expected, "every layer present, in order: %s" % names)
for l in doc["layers"]:
    check(l["status"] in ("ok", "warn", "fail", "skip"), "%s status is valid" % l["name"])
    if l["status"] in ("warn", "fail"):
        check(isinstance(l["fix"], str) and l["fix"], "%s has a fix" % l["name"])
s = doc["summary"]
counts = {k: sum(1 for l in doc["layers"] if l["status"] == k) for k in ("ok", "warn", "fail", "skip")}
check(s == counts, "summary counts add up: %s" % s)
check(rc == (1 if counts["fail"] else 0), "exit code %d matches the failures" % rc)
check(rc_table == rc, "table run exits the same (%d)" % rc_table)
table = open(table_path).read()
check(table.endswith("%d ok, %d warn, %d fail, %d skip\n" % (s["ok"], s["warn"], s["fail"], s["skip"])), "table ends with the summary")
err = open(err_path).read()
named = [l for l in err.splitlines() if l.startswith("gpuprep: using stack ")]
check(len(named) == 1 and " that supports " in named[0], "the default stack and why, in one stderr line")
layer = {l["name"]: l for l in doc["layers"]}
if not has_gpu:
    check(layer["gpu"]["status"] == "fail", "no NVIDIA GPU here: gpu layer fails")
    check(rc == 1, "no NVIDIA GPU here: exit code 1")
    check(host["gpus"] == [], "no NVIDIA GPU here: host.gpus is empty")
if has_cuda13:
    check((layer["cuda"]["found"] or "").startswith("13."), "CUDA found is 13.x: %s" % layer["cuda"]["found"])
    check(bool(layer["cudnn"]["found"]), "cuDNN found: %s" % layer["cudnn"]["found"])
    check(bool(layer["nccl"]["found"]), "NCCL found: %s" % layer["nccl"]["found"])
sys.exit(1 if failures else 0)
PY
