#!/usr/bin/env bash
# ctest-labels: fixtures
# `gpuprep watch` against the stand-in NVML (tests/watch/standin/) replaying every synthetic trace in
# tests/watch/traces/: each gives the verdicts its `expect` lines name and no other, and `watch --replay`
# of the live recording gives the same verdicts and summary. GPU processes are real sleepers (their PIDs
# handed to the stand-in), so the host side is this machine's /proc.
# Usage: watch_traces.sh GPUPREP_BINARY SOURCE_DIR BUILD_DIR
set -euo pipefail
bin=${1:?gpuprep binary}
src=${2:?source dir}
build=${3:?build dir}
standin=$build/tests/standin
[[ -f $standin/current/libnvidia-ml.so.1 ]] || { echo "watch_traces: stand-in NVML not built ($standin)"; exit 1; }
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

run_trace() {  # run_trace TRACE [extra watch args]
  local trace=$1
  shift
  local name lib n k sleepers=() rc=0 rrc=0
  name=$(basename "$trace" .trace)
  lib=$standin/current
  grep -q '^# library: legacy' "$trace" && lib=$standin/legacy
  n=$(grep -o '@[0-9]*' "$trace" | sort -u | wc -l)
  for ((k = 0; k < n; k++)); do
    sleep 300 &
    sleepers+=("$!")
    pids+=("$!")
  done
  LD_LIBRARY_PATH=$lib GPUPREP_STANDIN_TRACE=$trace GPUPREP_STANDIN_PIDS="${sleepers[*]:-}" \
    "$bin" watch --json --interval 100ms --window 1s --duration 2200ms "$@" >"$work/$name.jsonl" 2>"$work/$name.err" || rc=$?
  "$bin" watch --replay "$work/$name.jsonl" --json >"$work/$name.replay.jsonl" 2>>"$work/$name.err" || rrc=$?
  python3 "$src/tests/watch/check_trace.py" "$trace" "$work/$name.jsonl" "$rc" "$work/$name.replay.jsonl" "$rrc" || {
    sed 's/^/  stderr: /' "$work/$name.err"
    return 1
  }
  for p in "${sleepers[@]}"; do kill "$p" 2>/dev/null || true; done
}

status=0
count=0
for trace in "$src"/tests/watch/traces/*.trace; do
  run_trace "$trace" || status=1
  count=$((count + 1))
done
echo "watch_traces: $count traces"
exit $status
