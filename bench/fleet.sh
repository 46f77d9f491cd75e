#!/usr/bin/env bash
# fleet-report at fleet scale, side by side with the loop a user would otherwise write: N snapshots generated
# from the fixture hosts' own `gpuprep doctor --json` (bench/fleet_snapshots.py), then, alternating and with a
# warm page cache, ROUNDS runs each of
#   gpuprep fleet-report --format FORMAT SNAPSHOT...   (every snapshot read, checked and reported)
#   python3: json.load of every snapshot, nothing else
# timed with GNU time (wall seconds, CPU seconds, peak RSS); prints the medians and their ratios (CPU time is
# the steadier one on a shared machine), with the load average before and after. Then fleet-report's output in
# each format is compared byte for byte with the report made from the reference reader alone
# (build/bench/fleet_parsers report), and with FLEET_BASELINE=PATH also with another gpuprep binary's (an
# earlier build); then the snapshot readers on the same texts in one process (build/bench/fleet_parsers).
# Usage: bench/fleet.sh [BUILD_DIR] [N] [ROUNDS] [FORMAT]   (defaults: build 10000 5 json)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
N=${2:-10000}
ROUNDS=${3:-5}
FORMAT=${4:-json}
GPUPREP=$BUILD/gpuprep
[[ -x $GPUPREP ]] || { echo "fleet.sh: build $GPUPREP first" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "fleet.sh: needs GNU time (/usr/bin/time, Debian's time package)" >&2; exit 2; }
work=${FLEET_DIR:-$(mktemp -d /tmp/gpuprep-fleet-bench.XXXXXX)}
mkdir -p "$work/base"
for h in tests/fixtures/hosts/*/; do
  "$GPUPREP" doctor --json --root "$h" >"$work/base/$(basename "$h").json" 2>/dev/null || true
done
if [[ ! -f $work/snaps/host-$(printf %05d $((N - 1))).json ]]; then
  python3 bench/fleet_snapshots.py "$work/snaps" "$N" "$work"/base/*.json
fi
mapfile -t files < <(for ((i = 0; i < N; i++)); do printf '%s/snaps/host-%05d.json\n' "$work" "$i"; done)
du -cb "${files[@]}" | tail -1 | awk '{printf "%d snapshots, %.1f MB\n", '"$N"', $1 / 1e6}'
python3 - "${files[@]}" <<'PY'
import statistics, sys
sizes = [len(open(f, "rb").read()) for f in sys.argv[1:]]
print("snapshot size: median %d bytes, min %d, max %d" % (statistics.median(sizes), min(sizes), max(sizes)))
PY
cat "${files[@]}" >/dev/null  # warm the page cache
loop='import json, sys
for name in sys.argv[1:]:
    with open(name) as f:
        json.load(f)'
run() {  # run LABEL CMD...: appends "seconds kilobytes" to $work/LABEL.times
  /usr/bin/time -f "%e %M %U %S" -o "$work/$1.one" "${@:2}" >/dev/null 2>"$work/$1.err" || [[ $1 == gpuprep ]]
  tail -1 "$work/$1.one" >>"$work/$1.times"  # GNU time says "Command exited with non-zero status" first
}
rm -f "$work"/*.times
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 0; r < ROUNDS; r++)); do
  run python python3 -c "$loop" "${files[@]}"
  run gpuprep "$GPUPREP" fleet-report --format "$FORMAT" "${files[@]}"
done
python3 - "$work" "$FORMAT" <<'PY'
import statistics, sys
work, fmt = sys.argv[1], sys.argv[2]
med = {}
for name in ("python", "gpuprep"):
    rows = [tuple(map(float, l.split())) for l in open("%s/%s.times" % (work, name)) if l.strip()]
    med[name] = (statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows) / 1024,
                 statistics.median(r[2] + r[3] for r in rows))
    print("%-40s wall %s s (median %.2f s), CPU median %.2f s, peak RSS %.0f MB" % (
        {"python": "python3 json.load loop", "gpuprep": "gpuprep fleet-report --format " + fmt}[name],
        " ".join("%.2f" % r[0] for r in rows), med[name][0], med[name][2], med[name][1]))
print("fleet-report: %.1fx less wall time than the loop, %.1fx less CPU time" % (
    med["python"][0] / med["gpuprep"][0], med["python"][2] / med["gpuprep"][2]))
PY
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
same_as() {  # same_as WHAT DIR: fleet-report's output in every format against DIR/report.FORMAT
  local f rc
  for f in text markdown json html; do
    rc=0
    "$GPUPREP" fleet-report --format "$f" "${files[@]}" >"$work/out.$f" 2>/dev/null || rc=$?
    (( rc <= 1 )) || { echo "fleet.sh: fleet-report --format $f exited $rc" >&2; exit 1; }
    cmp -s "$work/out.$f" "$2/report.$f" ||
      { echo "fleet.sh: fleet-report --format $f differs from $1 ($work/out.$f, $2/report.$f)" >&2; exit 1; }
  done
  echo "fleet-report output (text, markdown, json, html): byte for byte $1"
}
if [[ -x $BUILD/bench/fleet_parsers ]]; then
  mkdir -p "$work/reference"
  "$BUILD/bench/fleet_parsers" report "$work/reference" "${files[@]}"
  same_as "the report from the reference reader alone" "$work/reference"
fi
if [[ -n ${FLEET_BASELINE:-} ]]; then
  mkdir -p "$work/baseline"
  for f in text markdown json html; do
    "$FLEET_BASELINE" fleet-report --format "$f" "${files[@]}" >"$work/baseline/report.$f" 2>/dev/null || true
  done
  same_as "$FLEET_BASELINE's" "$work/baseline"
fi
if [[ -x $BUILD/bench/fleet_parsers ]]; then "$BUILD/bench/fleet_parsers" 3 "${files[@]}"; fi
[[ -n ${FLEET_DIR:-} ]] || rm -rf "$work"
