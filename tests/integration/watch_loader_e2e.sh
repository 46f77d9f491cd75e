#!/usr/bin/env bash
# ctest-labels: fixtures
# End to end on the host side: a real "trainer" process with two children that name themselves
# pt_data_worker (as PyTorch's DataLoader workers do) and burn CPU pinned to one core; the stand-in NVML
# reports the trainer as the GPU's process and a duty cycle with gaps. watch must find the workers under
# the trainer in /proc, see them saturate the CPU they may use, and call the GPU input-bound; the replay
# of the recording must agree. Skips (77) where /proc/PID/comm cannot be written.
# Usage: watch_loader_e2e.sh GPUPREP_BINARY SOURCE_DIR BUILD_DIR
set -euo pipefail
bin=${1:?gpuprep binary}
src=${2:?source dir}
build=${3:?build dir}
work=$(mktemp -d)
trainer=
cleanup() {  # the workers and the trainer, by their PIDs
  if [[ -s $work/workers ]]; then kill $(cat "$work/workers") 2>/dev/null || true; fi
  if [[ -n $trainer ]]; then kill "$trainer" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# The trainer: sleeps; its two workers rename themselves and spin on the first CPU it may use. It writes
# its workers' PIDs and ends them (and itself) after 30 s whatever happens.
cat >"$work/trainer.py" <<'PY'
import os, signal, sys, time
cpu = sorted(os.sched_getaffinity(0))[0]
workers = []
for _ in range(2):
    pid = os.fork()
    if pid == 0:
        with open("/proc/self/comm", "w") as f:
            f.write("pt_data_worker")
        os.sched_setaffinity(0, {cpu})
        end = time.time() + 30
        while time.time() < end:
            pass
        os._exit(0)
    workers.append(pid)
with open(sys.argv[1], "w") as f:
    f.write(" ".join(map(str, workers)))
time.sleep(30)
for w in workers:
    try:
        os.kill(w, signal.SIGKILL)
    except ProcessLookupError:
        pass
PY
python3 "$work/trainer.py" "$work/workers" &
trainer=$!
for _ in $(seq 50); do [[ -s $work/workers ]] && break; sleep 0.1; done
[[ -s $work/workers ]] || { echo "watch_loader_e2e: the trainer did not start its workers"; exit 1; }
for w in $(cat "$work/workers"); do
  if [[ $(cat "/proc/$w/comm") != pt_data_worker ]]; then
    echo "watch_loader_e2e: skipped: cannot name a process pt_data_worker here"
    exit 77
  fi
done
sleep 0.5  # the workers are at full speed before the first sample

trace=$src/tests/watch/e2e/loader_bound.trace
rc=0
LD_LIBRARY_PATH=$build/tests/standin/current GPUPREP_STANDIN_TRACE=$trace GPUPREP_STANDIN_PIDS=$trainer \
  "$bin" watch --json --interval 100ms --window 1s --duration 4s --price-per-gpu-hour 2.5 >"$work/live.jsonl" 2>"$work/err" || rc=$?
rrc=0
"$bin" watch --replay "$work/live.jsonl" --json --price-per-gpu-hour 2.5 >"$work/replay.jsonl" 2>>"$work/err" || rrc=$?
python3 "$src/tests/watch/check_trace.py" "$trace" "$work/live.jsonl" "$rc" "$work/replay.jsonl" "$rrc" || {
  sed 's/^/  stderr: /' "$work/err"
  exit 1
}
# The sample records name the workers as the trainer's loaders, for GPU 0.
python3 - "$work/live.jsonl" "$trainer" <<'PY'
import json, sys
trainer = int(sys.argv[2])
verdicts = [json.loads(l)["verdict"] for l in open(sys.argv[1]) if '"type":"verdict"' in l]
assert len(verdicts) >= 3 and all(v == "input_bound" for v in verdicts[1:]), verdicts  # only the first may lag
last = [json.loads(l) for l in open(sys.argv[1]) if '"type":"sample"' in l][-1]
procs = last["host"]["processes"]
loaders = [p for p in procs if p["role"] == "loader"]
gpu = [p for p in procs if p["role"] == "gpu"]
assert len(gpu) == 1 and gpu[0]["pid"] == trainer, gpu
assert len(loaders) == 2 and all(p["ppid"] == trainer and p["comm"] == "pt_data_worker" and p["gpus"] == [0] for p in loaders), loaders
assert all(p["cpus_allowed"] == 1 for p in loaders), loaders
total = sum(p["cpu_pct"] or 0 for p in loaders)
print(f"watch_loader_e2e: ok (2 pt_data_worker loaders at {total:.0f} % of their 1 CPU together)")
PY
