#!/usr/bin/env bash
# ctest-labels: fixtures
# Both gpuprep textfiles in one directory, read by a real node_exporter (Debian's prometheus-node-exporter
# with only the textfile collector, on loopback): `watch --prometheus` over a recorded trace (the power brake)
# on the stand-in NVML, and `doctor --health --prometheus` run as the shipped gpuprep-health.service runs it,
# on a fixture tree with a GPU off the bus. The scrape succeeds, node_textfile_scrape_error is 0, no series
# is in both files (node_exporter would serve one and only log the other), the two files share no metric name, and the unit writes where Debian's node_exporter
# reads by default. No systemctl runs: the unit's ExecStart is read from the template and run directly.
# Exits 77 (skipped) when the node_exporter binary is not installed (packaging/install-deps.sh installs it).
# Usage: health_prometheus.sh GPUPREP_BINARY SOURCE_DIR BUILD_DIR
set -euo pipefail
bin=$(realpath "${1:?gpuprep binary}")
src=${2:?source dir}
build=${3:?build dir}
ne=$(command -v prometheus-node-exporter || true)
[[ -n $ne ]] || { echo "health_prometheus: SKIP: prometheus-node-exporter is not installed"; exit 77; }
command -v curl >/dev/null || { echo "health_prometheus: SKIP: curl is not installed"; exit 77; }
standin=$build/tests/standin/current
[[ -f $standin/libnvidia-ml.so.1 ]] || { echo "health_prometheus: stand-in NVML not built ($standin)"; exit 1; }
work=$(mktemp -d)
ne_pid=""
cleanup() {
  [[ -n $ne_pid ]] && kill "$ne_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
status=0
check() {  # check NAME CONDITION...
  local name=$1
  shift
  if "$@"; then echo "health_prometheus: ok: $name"; else echo "health_prometheus: FAIL: $name"; status=1; fi
}

# The shipped unit writes into the directory Debian's node_exporter reads when nothing else is configured.
unit=$src/templates/gpuprep-health.service
exec_start=$(sed -n 's/^ExecStart=@GPUPREP@ //p' "$unit")
ne_dir=$("$ne" --help 2>&1 | sed -n 's/^ *--collector\.textfile\.directory="\([^"]*\)".*/\1/p')
check "node_exporter's default textfile directory is known ($ne_dir)" test -n "$ne_dir"
check "gpuprep-health.service writes a .prom file there" \
  grep -q "^doctor --health --prometheus $ne_dir/[a-z-]*\.prom\$" <<<"$exec_start"
# The units as systemd reads them (offline: systemd-analyze verify loads the files, starts nothing).
if command -v systemd-analyze >/dev/null; then
  mkdir -p "$work/units"
  for u in gpuprep-health.service gpuprep-health.timer; do
    sed "s|@GPUPREP@|$bin|" "$src/templates/$u" >"$work/units/$u"
  done
  rc=0
  (cd "$work/units" && systemd-analyze verify --man=no ./gpuprep-health.timer ./gpuprep-health.service) \
    >"$work/verify.txt" 2>&1 || rc=$?
  check "systemd-analyze verify: the timer and its service load without a word" test "$rc" = 0 -a ! -s "$work/verify.txt"
  [[ -s $work/verify.txt ]] && sed 's/^/  /' "$work/verify.txt"
else
  echo "health_prometheus: SKIP (this part): systemd-analyze is not installed"
fi
check "gpuprep-health.timer runs periodically" grep -q '^OnUnitActiveSec=' "$src/templates/gpuprep-health.timer"
dir=$work/textfile
mkdir -p "$dir"

# watch's textfile: a short live run over a recorded trace; once it has stopped, the file holds its last state.
LD_LIBRARY_PATH=$standin GPUPREP_STANDIN_TRACE=$src/tests/watch/traces/power_brake_throttled.trace \
  "$bin" watch --interval 100ms --window 500ms --duration 1200ms --prometheus "$dir/gpuprep-watch.prom" \
  >"$work/watch.out" 2>"$work/watch.err" || { echo "health_prometheus: FAIL: watch"; cat "$work/watch.err"; exit 1; }
# The health textfile: the unit's own command line, its directory swapped for this test's, on a fixture tree.
read -ra args <<<"${exec_start//$ne_dir/$dir}"
rc=0
t0=$(date +%s%N)
"$bin" --root "$src/tests/fixtures/health/off-bus" "${args[@]}" >"$work/health.out" 2>"$work/health.err" || rc=$?
t1=$(date +%s%N)
echo "health_prometheus: doctor --health --prometheus in $(((t1 - t0) / 1000000)) ms"
check "doctor --health --prometheus: exit 1 for a GPU off the bus, as --health" test "$rc" = 1
check "  one line on stdout, nothing on stderr" test "$(wc -l <"$work/health.out")" = 1 -a ! -s "$work/health.err"
check "the directory holds the two files and nothing else" \
  test "$(ls "$dir" | tr '\n' ' ')" = "gpuprep-health.prom gpuprep-watch.prom "

# node_exporter on a free loopback port.
source "$(dirname "$0")/lib/node_exporter.sh"
start_node_exporter "$ne" "$dir" "$work/ne.log"
[[ -n $port ]] || { echo "health_prometheus: FAIL: node_exporter did not start"; sed 's/^/  /' "$work/ne.log"; exit 1; }
rc=0
curl -fsS "http://127.0.0.1:$port/metrics" >"$work/scrape.txt" 2>"$work/curl.err" || rc=$?
check "the scrape succeeds (HTTP 200)" test "$rc" = 0
check "both files parsed (node_textfile_scrape_error 0)" grep -qx 'node_textfile_scrape_error 0' "$work/scrape.txt"
for f in gpuprep-health.prom gpuprep-watch.prom; do
  check "  $f read" grep -q "^node_textfile_mtime_seconds{file=\".*$f\"} " "$work/scrape.txt"
done
# A series in both files is no scrape error: node_exporter 1.5 serves one of the two, answers 200 and only
# logs "error gathering metrics: ... was collected before with the same name and label values". So the
# log is read, and the two files' own series are compared.
check "node_exporter logged no gathering error" eval '! grep -q "error gathering metrics" "$work/ne.log"'
grep "error gathering metrics" "$work/ne.log" | head -3 | sed 's/^/  /' || true
series() { grep -hv '^#' "$@" | sed 's/ [^ ]*$//' | sort; }
check "no series in the two files twice" test -z "$(series "$dir"/*.prom | uniq -d)"
names() { grep -v '^#' "$1" | sed 's/[{ ].*//' | sort -u; }
check "the health file has only gpuprep_health_* names" test -z "$(names "$dir/gpuprep-health.prom" | grep -v '^gpuprep_health_')"
check "the two files share no metric name" \
  test -z "$(comm -12 <(names "$dir/gpuprep-health.prom") <(names "$dir/gpuprep-watch.prom"))"
check "the health verdict is served: problem" grep -qx 'gpuprep_health_verdict{verdict="problem"} 1' "$work/scrape.txt"
check "  the finding with the GPU's labels and its code" grep -q \
  '^gpuprep_health_findings{UUID="",class="bus",code="gpu.off-bus",gpu="[0-9]*",modelName="[^"]*",pci_bus_id="0000:[0-9a-f:.]*",status="fail"} 1$' \
  "$work/scrape.txt"
check "  the Xid class unknown: the tree has no kernel log" \
  grep -qx 'gpuprep_health_check_status{class="xid",status="unknown"} 1' "$work/scrape.txt"
check "  when it ran" grep -q '^gpuprep_health_last_run_timestamp_seconds [0-9]' "$work/scrape.txt"
check "watch's series are served beside it" grep -qx 'gpuprep_watch_up 0' "$work/scrape.txt"
check "  the brake GPU throttled" grep -q '^gpuprep_watch_verdict{.*gpu="0".*verdict="throttled"} 1$' "$work/scrape.txt"
exit $status
