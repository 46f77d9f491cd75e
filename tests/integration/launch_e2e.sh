#!/usr/bin/env bash
# ctest-labels: fixtures
# The launch story end to end, as a team lead runs it: `gpuprep doctor --json > node.json` on the server
# (here: a fixture host tree through --root), then `gpuprep launch --host node.json --gpus 0,1 -- python
# train.py` anywhere; the printed command is run by a real POSIX shell with the real docker CLI against
# the stand-in Engine API (tests/support/fake_dockerd.py), and the container it would create is checked. The
# refusals and the other formats need no docker CLI and run without one (then the script reports skipped).
# Usage: bash launch_e2e.sh <gpuprep-binary> <source-dir> <build-dir>
set -uo pipefail
GPUPREP=$1
SRC=$2
WORK=$(mktemp -d /tmp/gpuprep-launch-e2e.XXXXXX)
DOCKERD=
trap '[ -n "$DOCKERD" ] && kill $DOCKERD 2>/dev/null && wait $DOCKERD 2>/dev/null; rm -rf "$WORK"' EXIT
fails=0
check() {  # check NAME CONDITION-EXIT-CODE
  if [ "$2" -eq 0 ]; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi
}

"$GPUPREP" doctor --root "$SRC/tests/fixtures/hosts/healthy-h100" --manifest ubuntu22.04-r535-cuda12.2 --json \
  >"$WORK/node.json" 2>"$WORK/doctor.err"
check "doctor --json writes a snapshot" $?

"$GPUPREP" launch --host "$WORK/node.json" --gpus 0,1 -v "$WORK/data dir:/data:ro" -e 'NOTE=it'"'"'s $HOME' \
  -- python train.py --name "a b" >"$WORK/cmd.sh" 2>"$WORK/launch.err"
check "launch --host node.json --gpus 0,1 exits 0" $?
grep -qF -- "--gpus '\"device=0,1\"'" "$WORK/cmd.sh"
check "the device list keeps its inner quotes" $?

out=$("$GPUPREP" launch --host "$WORK/node.json" --gpus 0,9 -- python train.py 2>"$WORK/err9")
rc=$?
[ $rc -eq 2 ] && [ -z "$out" ] && [ "$(cat "$WORK/err9")" = "gpuprep: error: --gpus: GPU 9 does not exist on the host in $WORK/node.json (it has 8: 0, 1, 2, 3, 4, 5, 6, 7)" ]
check "a GPU the host lacks: exit 2, one line, nothing on stdout" $?

out=$("$GPUPREP" launch --host "$WORK/node.json" --image=--privileged -- ubuntu bash 2>"$WORK/errimg")
rc=$?
[ $rc -eq 2 ] && [ -z "$out" ] && [ "$(cat "$WORK/errimg")" = 'gpuprep: error: --image: "--privileged" is not an image reference' ]
check "an image reference starting with '-' is refused, not passed to docker as an option" $?

out=$("$GPUPREP" launch --host "$WORK/node.json" --gpus 0 -- python train.py 2>"$WORK/err0")
rc=$?
[ $rc -eq 2 ] && [ -z "$out" ] && [ "$(cat "$WORK/err0")" = "gpuprep: error: --gpus: 0 requests no GPU; for GPU index 0 use --gpus device=0 (or --gpus none for a CPU-only container)" ]
check "--gpus 0 is refused rather than launching without GPUs" $?

for f in compose k8s slurm torchrun json; do
  "$GPUPREP" launch --host "$WORK/node.json" --gpus 2 --format $f -- python train.py >"$WORK/out.$f" 2>/dev/null
  check "--format $f renders" $?
done
bash -n "$WORK/out.slurm"
check "the sbatch script is valid bash" $?

# The printed command through a real shell and the real docker CLI, against the stand-in Engine API. Everything
# above (the refusals included) needs no docker CLI and has run already; without one, only this part is skipped.
if ! command -v docker >/dev/null; then
  if [ $fails -ne 0 ]; then echo "$fails launch e2e check(s) failed"; exit 1; fi
  echo "SKIP: the docker CLI part (no docker CLI here); every other check passed"
  exit 77
fi
python3 "$SRC/tests/support/fake_dockerd.py" "$WORK/docker.sock" "$WORK/requests.jsonl" &
DOCKERD=$!
for _ in $(seq 100); do [ -S "$WORK/docker.sock" ] && break; sleep 0.1; done
DOCKER_HOST="unix://$WORK/docker.sock" DOCKER_CONFIG="$WORK/cfg" sh -c "$(cat "$WORK/cmd.sh")" 2>"$WORK/docker.err"
[ $? -eq 125 ] && grep -q "fake dockerd: create recorded" "$WORK/docker.err"
check "docker run reached the engine's create call" $?

python3 - "$WORK/requests.jsonl" "$WORK" <<'PY'
import json, sys
work = sys.argv[2]
create = [e for e in map(json.loads, open(sys.argv[1])) if e["path"].endswith("/containers/create")][-1]["body"]
hc = create["HostConfig"]
want = {
    "DeviceRequests": [{"Driver": "", "Count": 0, "DeviceIDs": ["0", "1"], "Capabilities": [["gpu"]], "Options": {}}],
    "IpcMode": "host",
    "Ulimits": [{"Name": "memlock", "Hard": -1, "Soft": -1}, {"Name": "stack", "Hard": 67108864, "Soft": 67108864}],
    "Binds": [work + "/data dir:/data:ro"],
    "AutoRemove": True,
}
got = {k: hc[k] for k in want}
assert got == want, (got, want)
assert create["Cmd"] == ["python", "train.py", "--name", "a b"], create["Cmd"]
assert create["Env"] == ["NOTE=it's $HOME"], create["Env"]
assert create["Image"] == "nvcr.io/nvidia/pytorch:23.10-py3", create["Image"]
assert create["Tty"] is False
PY
check "the recorded create request is the validated config" $?

[ $fails -eq 0 ] && echo "all launch e2e checks passed" || echo "$fails launch e2e check(s) failed"
exit $((fails > 0))
