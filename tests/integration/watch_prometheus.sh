#!/usr/bin/env bash
# ctest-labels: fixtures
# `gpuprep watch --prometheus FILE` read by a real node_exporter: Debian's prometheus-node-exporter with only
# the textfile collector, on loopback, scraped with curl while watch runs against the stand-in NVML (a GPU
# whose NVML name and UUID carry a backslash and non-ASCII text): the gpuprep_ metrics are served with
# dcgm-exporter's labels, node_textfile_scrape_error is 0, and once watch has stopped gpuprep_watch_up is 0.
# Every series is gpuprep_watch_*; a braked GPU and a lost one carry doctor's health codes.
# Exits 77 (skipped) when the node_exporter binary is not installed (packaging/install-deps.sh installs it).
# Usage: watch_prometheus.sh GPUPREP_BINARY SOURCE_DIR BUILD_DIR
set -euo pipefail
bin=${1:?gpuprep binary}
src=${2:?source dir}
build=${3:?build dir}
ne=$(command -v prometheus-node-exporter || true)
[[ -n $ne ]] || { echo "watch_prometheus: SKIP: prometheus-node-exporter is not installed"; exit 77; }
command -v curl >/dev/null || { echo "watch_prometheus: SKIP: curl is not installed"; exit 77; }
standin=$build/tests/standin/current
[[ -f $standin/libnvidia-ml.so.1 ]] || { echo "watch_prometheus: stand-in NVML not built ($standin)"; exit 1; }
work=$(mktemp -d)
ne_pid=""
w_pid=""
cleanup() {
  [[ -n $w_pid ]] && kill "$w_pid" 2>/dev/null || true
  [[ -n $ne_pid ]] && kill "$ne_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
status=0
check() {  # check NAME CONDITION...
  local name=$1
  shift
  if "$@"; then echo "watch_prometheus: ok: $name"; else echo "watch_prometheus: FAIL: $name"; status=1; fi
}
mkdir -p "$work/textfile"
# An idle GPU and a busy one; the first one's name and UUID are hostile. A third is held down by the power
# brake and a fourth falls off the bus at 300 ms: doctor's codes for both, as gpuprep_watch_gpu_health.
cat >"$work/gpus.trace" <<'TRACE'
gpus 4
gpu * nvlink_links=18 nvlink_mbps=26562 gpm=1 arch=9 memory_mib=81559 power_default_w=700 sm_max_mhz=1980
gpu 0 name="NVIDIA H100\ 80GB Ü" uuid="GPU-\bad"
gpu 1 name="NVIDIA H100 80GB HBM3"
event 3 at_ms=300 lost
step_ms 100
sample_ms 50
step
at * duty=none mem_used_mib=0 power_w=70 power_limit_w=700 sm_mhz=345 reasons=0x1
at * nvlink_tx_bps=0 nvlink_rx_bps=0 pcie_tx_bps=0 pcie_rx_bps=0 sm_active=0 sm_occ=0 tensor=0 dram=0 procs=none
at 1 duty=100,100 mem_used_mib=70000 power_w=690 sm_mhz=1755 reasons=0x4 powercap_ratio=0.97 sm_active=88 sm_occ=42 tensor=55 dram=48
at 2 duty=100,100 mem_used_mib=70000 power_w=300 sm_mhz=810 reasons=0x88 brake_ratio=0.9 sm_active=72 sm_occ=38 tensor=45 dram=40
at 3 duty=100,100 mem_used_mib=70000 power_w=690 sm_mhz=1755 sm_active=88 sm_occ=42 tensor=55 dram=48
TRACE

# node_exporter on a free loopback port.
source "$(dirname "$0")/lib/node_exporter.sh"
start_node_exporter "$ne" "$work/textfile" "$work/ne.log"
[[ -n $port ]] || { echo "watch_prometheus: FAIL: node_exporter did not start"; sed 's/^/  /' "$work/ne.log"; exit 1; }
scrape() { curl -fsS "http://127.0.0.1:$port/metrics"; }

prom=$work/textfile/gpuprep-watch.prom
LD_LIBRARY_PATH=$standin GPUPREP_STANDIN_TRACE=$work/gpus.trace \
  "$bin" watch --interval 100ms --window 500ms --duration 4s --prometheus "$prom" >"$work/out" 2>"$work/err" &
w_pid=$!
# Wait (bounded) for two judged windows in the file: the second lies wholly in the trace's busy phase.
for _ in $(seq 100); do
  grep -q '^gpuprep_watch_windows_judged_total \([2-9]\|[1-9][0-9]\)' "$prom" 2>/dev/null && break
  sleep 0.1
done
scrape >"$work/running.txt"
check "node_exporter serves gpuprep_watch_up 1 while watch runs" grep -qx 'gpuprep_watch_up 1' "$work/running.txt"
check "the textfile parsed (node_textfile_scrape_error 0)" grep -qx 'node_textfile_scrape_error 0' "$work/running.txt"
check "the busy GPU's verdict with dcgm-exporter's labels" grep -q \
  '^gpuprep_watch_verdict{UUID=".*",gpu="1",modelName="NVIDIA H100 80GB HBM3",pci_bus_id=".*",verdict="healthy"} 1$' "$work/running.txt"
check "the idle GPU is idle, its hostile labels escaped" grep -qF \
  'gpuprep_watch_verdict{UUID="GPU-\\bad",gpu="0",modelName="NVIDIA H100\\ 80GB Ü",pci_bus_id=' "$work/running.txt"
# The scrape may land after one window or after several (a loaded machine): the idle GPU's verdict seconds
# are the 0.5 s window times the windows judged, both read from the same scrape.
judged=$(sed -n 's/^gpuprep_watch_windows_judged_total \([0-9]*\)$/\1/p' "$work/running.txt")
idle_s=$(sed -n 's/^gpuprep_watch_verdict_seconds_total{.*gpu="0".*verdict="idle"} \([0-9.]*\)$/\1/p' "$work/running.txt")
check "a counter: verdict seconds ($idle_s s idle in $judged windows of 0.5 s)" \
  python3 -c 'import sys; n, v = int(sys.argv[1]), float(sys.argv[2]); sys.exit(not (n >= 1 and abs(v - 0.5 * n) < 1e-9))' \
  "${judged:-0}" "${idle_s:-nan}"
check "a ratio in 0-1: SM activity 0.88" grep -q '^gpuprep_watch_gpu_sm_active_ratio{.*gpu="1".*} 0\.88' "$work/running.txt"
check "the braked GPU carries doctor's code" grep -q \
  '^gpuprep_watch_gpu_health{UUID=".*",code="gpu.clocks-power-brake",gpu="2",.*} 1$' "$work/running.txt"
check "the lost GPU carries doctor's code" grep -q \
  '^gpuprep_watch_gpu_health{UUID=".*",code="gpu.lost",gpu="3",.*} 1$' "$work/running.txt"
check "no health series for the healthy and idle GPUs" \
  test -z "$(grep '^gpuprep_watch_gpu_health{.*gpu="[01]"' "$work/running.txt")"
# Every series of the file is watch's own (doctor --health's textfile has gpuprep_health_*): none shared.
check "every gpuprep series is gpuprep_watch_*" \
  test -z "$(grep '^gpuprep_' "$work/running.txt" | grep -v '^gpuprep_watch_')"
check "no client timestamps in the file" test -z "$(grep -v '^#' "$prom" | sed 's/{.*}//' | awk 'NF != 2')"
rc=0
wait "$w_pid" || rc=$?
w_pid=""
check "watch exits 1 (a GPU was lost)" test "$rc" = 1
# Checked once watch has exited: while it runs, a scrape may meet the temporary of a rewrite in progress.
check "no leftover temporary beside the file" test "$(ls "$work/textfile")" = gpuprep-watch.prom
scrape >"$work/stopped.txt"
check "after exit node_exporter serves gpuprep_watch_up 0" grep -qx 'gpuprep_watch_up 0' "$work/stopped.txt"
check "after exit: still parsed" grep -qx 'node_textfile_scrape_error 0' "$work/stopped.txt"
check "after exit: the lost GPU still carries its code" grep -q \
  '^gpuprep_watch_gpu_health{UUID=".*",code="gpu.lost",gpu="3",.*} 1$' "$work/stopped.txt"
# Usage: a name node_exporter would not read, a missing directory, a replay.
rc=0
"$bin" watch --prometheus "$work/textfile/x.txt" >/dev/null 2>"$work/err" || rc=$?
check "--prometheus without .prom: exit 2, one line" test "$rc" = 2 -a "$(wc -l <"$work/err")" = 1
grep -q '^gpuprep: error: --prometheus: ' "$work/err" || { echo "  $(cat "$work/err")"; status=1; }
rc=0
"$bin" watch --prometheus "$work/nodir/x.prom" >/dev/null 2>"$work/err" || rc=$?
check "--prometheus in a missing directory: exit 2" test "$rc" = 2
exit $status
