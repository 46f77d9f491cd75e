#!/usr/bin/env bash
# bench/watch.sh BUILD_DIR [SAMPLES]: gpuprep watch's own CPU per sample for 8 GPUs (the stand-in NVML
# answering at once, bench/watch_8gpu.trace) with 1,000 sleeping processes on the host besides 8 training
# processes (each 16 threads and 4 pt_data_worker children); then what reading /proc the usual way costs
# with the same process table: one `ps -eo pid,ppid,stat,pcpu,comm` and one `top -b -n 1` (a procps
# poller beside `watch -n 1 nvidia-smi`). There is no real nvidia-smi here to measure.
# Needs: cmake --build BUILD_DIR --target watch_sampler nvml_standin_current
set -euo pipefail
build=${1:?build dir}
samples=${2:-100}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
kids=()
cleanup() {
  for p in "${kids[@]}"; do kill "$p" 2>/dev/null || true; done
  if [[ -s $work/workers ]]; then kill $(cat "$work/workers") 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

for _ in $(seq 1000); do
  sleep 600 &
  kids+=("$!")
done
cat >"$work/trainer.py" <<'PY'
import os, sys, threading, time
for _ in range(16):
    threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
workers = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        with open("/proc/self/comm", "w") as f:
            f.write("pt_data_worker")
        time.sleep(600)
        os._exit(0)
    workers.append(pid)
with open(sys.argv[1], "a") as f:
    f.write(" ".join(map(str, workers)) + " ")
time.sleep(600)
PY
trainers=()
for _ in $(seq 8); do
  python3 "$work/trainer.py" "$work/workers" &
  kids+=("$!")
  trainers+=("$!")
done
sleep 2
echo "host: $(ls /proc | grep -c '^[0-9]') processes"

LD_LIBRARY_PATH=$build/tests/standin/current GPUPREP_STANDIN_TRACE=$here/watch_8gpu.trace \
  GPUPREP_STANDIN_PIDS="${trainers[*]}" ${WATCH_BENCH_WRAP:-} "$build/bench/watch_sampler" "$samples" 110

python3 - <<'PY'
import resource, subprocess
def cost(argv, n=20):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    for _ in range(n):
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) / n * 1000
for argv in (["ps", "-eo", "pid,ppid,stat,pcpu,comm"], ["top", "-b", "-n", "1"]):
    ms = cost(argv)
    print(f"{' '.join(argv)}: {ms:.2f} ms CPU per run ({ms / 10:.2f} % of one core at 1 s)")
PY
