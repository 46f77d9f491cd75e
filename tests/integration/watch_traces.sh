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
  rm -f "$work/$name.log"
  LD_LIBRARY_PATH=$lib GPUPREP_STANDIN_TRACE=$trace GPUPREP_STANDIN_PIDS="${sleepers[*]:-}" GPUPREP_STANDIN_LOG=$work/$name.log \
    "$bin" watch --json --interval 100ms --window 1s --duration 2200ms --price-per-gpu-hour 2.5 "$@" >"$work/$name.jsonl" 2>"$work/$name.err" || rc=$?
  # nvmlDeviceGetPcieThroughput measures a 20 ms window per call (nvml.h): never in the loop.
  if grep -q nvmlDeviceGetPcieThroughput "$work/$name.log" 2>/dev/null; then
    echo "$name: FAIL: nvmlDeviceGetPcieThroughput was called"
    return 1
  fi
  "$bin" watch --replay "$work/$name.jsonl" --json --price-per-gpu-hour 2.5 >"$work/$name.replay.jsonl" 2>>"$work/$name.err" || rrc=$?
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

# ---------------------------------------------------------------- the run itself: stops, errors, exit codes
special=$src/tests/watch/special
check() {  # check NAME CONDITION...: prints ok or FAIL
  local name=$1
  shift
  if "$@"; then echo "watch: ok: $name"; else echo "watch: FAIL: $name"; status=1; fi
}
live() {  # live TRACE ARGS...: runs watch against the stand-in; sets rc, out, err
  local trace=$1
  shift
  rc=0
  LD_LIBRARY_PATH=$standin/current GPUPREP_STANDIN_TRACE=$trace GPUPREP_STANDIN_LOG=$work/nvml.log \
    "$bin" watch "$@" >"$work/out" 2>"$work/err" || rc=$?
  out=$(cat "$work/out")
  err=$(cat "$work/err")
}

# A call stuck past --duration: the run ends on time, summary printed, no join, no nvmlShutdown.
rm -f "$work/nvml.log"
start=$(date +%s%N)
live "$special/stall_forever.trace" --json --interval 100ms --window 1s --duration 1500ms
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
check "a stuck call does not hold the run past --duration (${elapsed_ms} ms)" test "$elapsed_ms" -lt 5000
check "stuck: exit 0 with a summary" test "$rc" = 0 -a "$(tail -n1 "$work/out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["type"])')" = summary
check "stuck: GPU 0 is gaps after the stall" grep -q '"state":"gap"' "$work/out"
check "stuck: no nvmlShutdown under a call in progress" test ! -s "$work/nvml.log"
# A normal run ends with nvmlShutdown.
rm -f "$work/nvml.log"
live "$src/tests/watch/traces/idle.trace" --interval 100ms --window 1s --duration 300ms
check "a run shorter than one window: exit 0, not judged" test "$rc" = 0
check "short run: the summary says why" grep -q "not judged: the run (.*) is shorter than one window (1s)" "$work/out"
check "a normal run calls nvmlShutdown once" test "$(cat "$work/nvml.log" 2>/dev/null)" = nvmlShutdown
# Ctrl-C (SIGINT) prints the summary and exits 0.
LD_LIBRARY_PATH=$standin/current GPUPREP_STANDIN_TRACE=$src/tests/watch/traces/idle.trace \
  "$bin" watch --json --interval 100ms --window 1s >"$work/int.out" 2>/dev/null &
wpid=$!
pids+=("$wpid")
sleep 1.5
kill -INT "$wpid"
irc=0
wait "$wpid" || irc=$?
check "SIGINT: exit 0 with the summary" test "$irc" = 0 -a "$(tail -n1 "$work/int.out" | grep -c '"type":"summary"')" = 1
# NVML cannot be initialised, no GPU, no NVML at all: exit 1, one line.
live "$special/init_fails.trace"
check "nvmlInit fails: exit 1" test "$rc" = 1
check "nvmlInit fails: says why" test "$err" = "gpuprep: error: watch: nvmlInit_v2: Unknown Error"
live "$special/no_gpu.trace"
check "no GPU: exit 1" test "$rc" = 1 -a "$err" = "gpuprep: error: watch: NVML found no GPU"
rc=0
env -u LD_LIBRARY_PATH "$bin" watch --duration 1s >/dev/null 2>"$work/err" || rc=$?
check "no libnvidia-ml.so.1: exit 1" test "$rc" = 1
check "no libnvidia-ml.so.1: names the library" grep -q "cannot load libnvidia-ml.so.1" "$work/err"
# Usage errors: exit 2, one line.
mkdir -p "$work/noproc"
live "$src/tests/watch/traces/idle.trace" --root "$work/noproc"
check "--root without a proc directory" test "$rc" = 2 -a "$err" = "gpuprep: error: --root: \"$work/noproc\": no proc directory under it"
rc=0
"$bin" --root "$work/noproc" watch --replay "$work/idle.jsonl" >/dev/null 2>"$work/err" || rc=$?
check "--root with --replay refused" test "$rc" = 2 -a "$(cat "$work/err")" = "gpuprep: error: --root: a live run only (a replay reads no host)"
live "$src/tests/watch/traces/idle.trace" --interval 10ms
check "--interval below 100ms" test "$rc" = 2 -a "$err" = "gpuprep: error: --interval: at least 100ms (GPM needs that between samples)"
live "$src/tests/watch/traces/idle.trace" --duration 5d
check "--duration 5d" test "$rc" = 2 -a "$err" = 'gpuprep: error: --duration: "5d" is not a duration (a number with ms, s, m or h; bare = seconds)'
live "$src/tests/watch/traces/idle.trace" --gpu 7
check "--gpu that names no GPU" test "$rc" = 2 -a "$err" = 'gpuprep: error: --gpu: "7" is neither the index nor the UUID of a GPU here (indexes: 0, 1)'
live "$src/tests/watch/traces/idle.trace" --threshold idle_duty_pcx=3
check "--threshold unknown" test "$rc" = 2 -a "$err" = 'gpuprep: error: --threshold: unknown threshold "idle_duty_pcx" (did you mean "idle_duty_pct"?)'
rc=0
"$bin" watch --list-thresholds --threshold held_memory_bytes=2147483648 >"$work/out" || rc=$?
check "--list-thresholds: every threshold, values as set" test "$rc" = 0 -a "$(wc -l <"$work/out")" = 23 -a \
  "$(grep -c '^held_memory_bytes=2147483648$\|^healthy_sm_active=0.8$' "$work/out")" = 2
# --gpu by UUID samples only that GPU.
live "$src/tests/watch/traces/idle.trace" --json --interval 100ms --duration 200ms
uuid=$(head -n1 "$work/out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["gpus"][1]["gpu"]["uuid"])')
live "$src/tests/watch/traces/idle.trace" --json --interval 100ms --duration 200ms --gpu "$uuid"
check "--gpu UUID selects that GPU" test "$(head -n1 "$work/out" | python3 -c 'import json,sys; print([g["gpu"]["index"] for g in json.load(sys.stdin)["gpus"]])')" = "[1]"
# --fail-on: exit 1 when a listed verdict held, 0 otherwise; an unknown name is a usage error.
rc=0
"$bin" watch --replay "$work/idle.jsonl" --fail-on throttled,idle >"$work/out" 2>"$work/err" || rc=$?
check "--fail-on idle on an idle run: exit 1, summary printed" test "$rc" = 1 -a "$(grep -c '^summary: ' "$work/out")" = 1
check "--fail-on says which GPU" grep -q -- "--fail-on: GPU 0 was idle in" "$work/err"
rc=0
"$bin" watch --replay "$work/idle.jsonl" --fail-on throttled,hung_collective >/dev/null 2>&1 || rc=$?
check "--fail-on verdicts that did not hold: exit 0" test "$rc" = 0
rc=0
"$bin" watch --replay "$work/idle.jsonl" --fail-on idel >/dev/null 2>"$work/err" || rc=$?
check "--fail-on unknown verdict: exit 2, one line" test "$rc" = 2 -a "$(cat "$work/err")" = 'gpuprep: error: --fail-on: unknown verdict "idel" (did you mean "idle"?)'
rc=0
"$bin" watch --replay "$work/idle.jsonl" --prices "$work/nope.yaml" >/dev/null 2>"$work/err" || rc=$?
check "--prices of a missing file: exit 2" test "$rc" = 2
# --prices: the price list size reads, looked up by the NVML name's catalogue board.
printf '%s\n' 'apiVersion: gpuprep/v1' 'kind: Prices' 'metadata: {name: test}' 'currency: EUR' 'prices:' \
  '  - {gpu: "H100 SXM5 80GB", per_gpu_hour: 4}' >"$work/prices.yaml"
"$bin" watch --replay "$work/healthy_8gpu_power_cap.jsonl" --prices "$work/prices.yaml" --json >"$work/out"
check "--prices: priced by board, in the list's currency" python3 -c '
import json, sys
c = json.loads(open(sys.argv[1]).read().splitlines()[-1])["cost"]
assert c["currency"] == "EUR" and c["unpriced_gpus"] == [], c
assert abs(c["amount"] - c["gpu_hours"] * 4) < 1e-9, c' "$work/out"
"$bin" watch --replay "$work/a100_no_gpm.jsonl" --prices "$work/prices.yaml" >"$work/out"
check "--prices without this GPU's model: no amount, says which" grep -q "no price for GPU 0" "$work/out"
# A recording that is not one: exit 2 with its line.
printf '%s\n' '{"type":"sample","schema":1,"time":"2026-01-01T00:00:00.000Z"}' >"$work/bad.jsonl"
rc=0
"$bin" watch --replay "$work/bad.jsonl" >/dev/null 2>"$work/err" || rc=$?
check "replay of a bad record: exit 2, FILE:LINE:COL" test "$rc" = 2 -a "$(cat "$work/err")" = "gpuprep: error: $work/bad.jsonl:1:1: sample.interval_ms: missing"
# Xid events of the run: the kernel log from the run's start (under --root, the tree's dev/kmsg: here a regular
# file this test appends records to, in /dev/kmsg's "PRIORITY,SEQ,USEC,FLAGS;MESSAGE" form, as the driver's
# lines reach it), each event given to the GPU its PCI address names. The stand-in's GPU 1 is at 0000:29:00.
xroot=$work/xidroot
cp -a "$src/tests/fixtures/proc/two-jobs" "$xroot"
mkdir -p "$xroot/dev"
printf '%s\n' '4,100,1000000,-;NVRM: Xid (PCI:0000:18:00): 79, pid=7, name=old, logged before the run' >"$xroot/dev/kmsg"
LD_LIBRARY_PATH=$standin/current GPUPREP_STANDIN_TRACE=$src/tests/watch/traces/idle.trace \
  "$bin" --root "$xroot" watch --json --interval 100ms --window 1s --duration 2500ms \
  --prometheus "$work/xid.prom" >"$work/xid.jsonl" 2>"$work/xid.err" &
wpid=$!
pids+=("$wpid")
for _ in $(seq 200); do [[ -s $work/xid.jsonl ]] && break; sleep 0.05; done
printf '%s\n' '4,200,2000000,-;NVRM: Xid (PCI:0000:29:00): 79, pid=4242, name=python3, GPU has fallen off the bus.' \
  ' SUBSYSTEM=pci' ' DEVICE=+pci:0000:29:00.0' \
  '4,201,2000100,-;NVRM: Xid (PCI:0000:99:00): 13, pid=1, name=x, a GPU this run does not watch' >>"$xroot/dev/kmsg"
xrc=0
wait "$wpid" || xrc=$?
"$bin" watch --replay "$work/xid.jsonl" --json >"$work/xid.replay.jsonl" 2>>"$work/xid.err" || xrc=$((xrc + $?))
check "Xid during the run: exit 0 (an Xid alone fails no run)" test "$xrc" = 0
check "Xid during the run: given to GPU 1 once, with doctor's code; none before the run" python3 -c '
import json, sys
xids = {0: [], 1: []}
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["type"] == "sample":
        for g in r["gpus"]:
            xids[g["gpu"]["index"]] += g.get("xids", [])
assert xids[0] == [], xids
assert [(x["xid"], x["code"], x["pid"], x["process"]) for x in xids[1]] == [(79, "gpu.xid-hardware", "4242", "python3")], xids
assert xids[1][0]["detail"] == "GPU has fallen off the bus.", xids' "$work/xid.jsonl"
check "Xid during the run: GPU 1's verdict carries the code, live and replayed; the summary notes it" python3 -c '
import json, sys
for path in sys.argv[1:]:
    recs = [json.loads(l) for l in open(path)]
    codes = {v["gpu"]["index"]: set() for v in recs if v["type"] == "verdict"}
    for v in recs:
        if v["type"] == "verdict":
            codes[v["gpu"]["index"]] |= set(v.get("health_codes", []))
    assert codes[1] == {"gpu.xid-hardware"} and codes[0] == set(), (path, codes)
    notes = recs[-1]["notes"]
    assert any(n.startswith("GPU 1 logged Xid 79 (") and "gpu.xid-hardware" in n for n in notes), notes
' "$work/xid.jsonl" "$work/xid.replay.jsonl"
check "Xid during the run: the textfile counts it" grep -q '^gpuprep_watch_gpu_xid_events_total{gpu="1",.*,xid="79",code="gpu.xid-hardware"} 1$' "$work/xid.prom"
check "Xid during the run: the kernel log was followed (no warning)" test "$(grep -c "not followed" "$work/xid.err")" = 0
exit $status
