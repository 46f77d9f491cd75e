#!/usr/bin/env bash
# ctest-labels: browser
# The fleet report's HTML page in a real headless browser (Debian's chromium): doctor --json on the fixture
# hosts, `gpuprep fleet-report --format html`, then the page as chromium renders it after its script ran:
# every host's row and finding groups are there, the filter box and the status selector (preset through
# the URL fragment, the same function the input events call) hide exactly the rows they should, and the
# page loads nothing from outside (its CSP forbids it; chromium would log the violation).
# Usage: bash fleet_browser.sh <gpuprep-binary> <source-dir> [build-dir]. Exit 77 when chromium is missing.
set -uo pipefail
GPUPREP=$1
SRC=$2
BROWSER=
for b in chromium chromium-browser; do command -v "$b" >/dev/null && { BROWSER=$b; break; }; done
[[ -n $BROWSER ]] || { echo "SKIP: chromium not found (packaging/install-deps.sh installs Debian's chromium)"; exit 77; }
work=$(mktemp -d /tmp/gpuprep-fleet-browser.XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0
check() { local d=$1; shift; if "$@"; then echo "  ok: $d"; else echo "  FAILED: $d" >&2; failures=$((failures + 1)); fi; }
check_eq() { if [[ $2 == "$3" ]]; then echo "  ok: $1"; else echo "  FAILED: $1: expected [$2], got [$3]" >&2; failures=$((failures + 1)); fi; }

trees=(healthy-h100 mismatch bare-nouveau nvswitch-no-fm open-module secure-boot-unsigned)
snaps=()
for t in "${trees[@]}"; do
  "$GPUPREP" doctor --json --root "$SRC/tests/fixtures/hosts/$t" --manifest ubuntu22.04-r535-cuda12.2 >"$work/$t.json" 2>/dev/null
  [[ $? -le 1 ]] || { echo "FAIL: doctor on $t" >&2; exit 1; }
  snaps+=("$work/$t.json")
done
"$GPUPREP" fleet-report --format html -o "$work/fleet.html" "${snaps[@]}"
check_eq "fleet-report exits 1 (some hosts fail)" 1 "$?"

# dom URL-FRAGMENT: the DOM after the page's script ran, one element per line.
dom() {
  timeout 120 "$BROWSER" --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions \
    --user-data-dir="$work/profile" --dump-dom "file://$work/$page$1" 2>"$work/browser.err" | sed 's/></>\n</g'
}
page=fleet.html
t0=$(date +%s%3N)
dom "" >"$work/all.dom"
[[ -s $work/all.dom ]] || { cat "$work/browser.err" >&2; echo "FAIL: $BROWSER rendered nothing" >&2; exit 1; }
echo "  ($BROWSER rendered the page in $(($(date +%s%3N) - t0)) ms)"
check_eq "every host has a row" "${#trees[@]}" "$(grep -c '<tr class="host"' "$work/all.dom")"
for label in gpu-node-01 gpu-node-02 nvswitch-no-fm.json open-module.json; do
  check "the page shows $label" grep -q "data-label=\"[^\"]*$label\"" "$work/all.dom"
done
check "the script ran: '6 of 6 hosts shown'" grep -Eq '<span id="shown"[^>]*>6 of 6 hosts shown</span>' "$work/all.dom"
check "the finding groups come first, the hosts table after" sh -c "grep -n -m1 -e '<section class=\"group' -e '<table' '$work/all.dom' | grep -q section"
check "each group's hosts are folded away" grep -q '<details class="hosts">' "$work/all.dom"
check "with 6 hosts the table is open" grep -q '<details id="hosts" open=""' "$work/all.dom"
check_eq "no row hidden without a filter" 0 "$(grep '<tr class="host"' "$work/all.dom" | grep -c ' hidden=')"
check "the module mismatch is one group" grep -q 'data-code="driver.module-mismatch"' "$work/all.dom"
check "cells are coloured by status" grep -q '<td class="st s-fail"' "$work/all.dom"
check "nothing blocked by the CSP (nothing external was asked for)" sh -c "! grep -qi 'content security policy' '$work/browser.err'"

dom "#filter=gpu-node-02" >"$work/filter.dom"
check "filter 'gpu-node-02': '1 of 6 hosts shown'" grep -Eq '<span id="shown"[^>]*>1 of 6 hosts shown</span>' "$work/filter.dom"
check_eq "  only gpu-node-02's row is visible" "gpu-node-02" \
  "$(grep '<tr class="host"' "$work/filter.dom" | grep -v ' hidden=' | sed 's/.*data-label="\([^"]*\)".*/\1/')"
check "  its module-mismatch group stays" sh -c "grep 'data-code=\"driver.module-mismatch\"' '$work/filter.dom' | grep -vq ' hidden='"
check "  the fabric manager group (another host's) is hidden" sh -c "grep 'data-code=\"fabricmanager.missing\"' '$work/filter.dom' | grep -q ' hidden='"

dom "#filter=fabricmanager.missing" >"$work/code.dom"
check_eq "filter by code 'fabricmanager.missing': the hosts with that finding" "nvswitch-no-fm.json" \
  "$(grep '<tr class="host"' "$work/code.dom" | grep -v ' hidden=' | sed 's/.*data-label="\([^"]*\)".*/\1/' | tr '\n' ' ' | sed 's/ $//')"

dom "#status=fail" >"$work/status.dom"
failing=$("$GPUPREP" fleet-report --format json "${snaps[@]}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["summary"]["failing"])')
check "status 'failing': '$failing of 6 hosts shown'" grep -Eq "<span id=\"shown\"[^>]*>$failing of 6 hosts shown</span>" "$work/status.dom"
check_eq "  every visible row is a failing host" "" \
  "$(grep '<tr class="host"' "$work/status.dom" | grep -v ' hidden=' | grep -v 'data-status="fail"')"

timeout 120 "$BROWSER" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$work/profile" \
  --window-size=1400,900 --screenshot="$work/fleet.png" "file://$work/fleet.html" >/dev/null 2>&1
check "a screenshot renders (PNG)" sh -c "head -c 8 '$work/fleet.png' | od -An -tx1 | grep -q '89 50 4e 47'"
check "the screenshot is not blank (over 20 kB)" test "$(stat -c %s "$work/fleet.png" 2>/dev/null || echo 0)" -gt 20000
# At fleet scale: 10,000 hosts (the six snapshots above, each host given its own name, machine-id and GPU ids).
# The page must load, start with the table folded away, and filter in well under a human's reaction time:
# the page's script records each filter pass's time in #shown's data-ms.
N=10000
python3 "$SRC/bench/fleet_snapshots.py" --compact "$work/fleet10k" "$N" "${snaps[@]}" >/dev/null
mapfile -t many < <(for ((i = 0; i < N; i++)); do printf '%s/fleet10k/host-%05d.json\n' "$work" "$i"; done)
t0=$(date +%s%3N)
"$GPUPREP" fleet-report --format html -o "$work/fleet10k.html" "${many[@]}"
echo "  (fleet-report wrote the $N-host page in $(($(date +%s%3N) - t0)) ms, $(($(stat -c %s "$work/fleet10k.html") / 1024)) KiB)"
"$GPUPREP" fleet-report --format json "${many[@]}" >"$work/fleet10k.json"
page=fleet10k.html
shown() { grep -oE '<span id="shown"[^>]*>[^<]*' "$1" | sed 's/.*>//'; }
ms() { grep -oE '<span id="shown" data-ms="[0-9.]+"' "$1" | grep -oE '[0-9.]+'; }
fast() { python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2]) else 1)' "${1:-1e9}" "$2"; }
check_eq "$N hosts: one row each" "$N" "$(grep -o '<tr class="host"' "$work/fleet10k.html" | wc -l)"
check "$N hosts: the table starts folded away" grep -q '<details id="hosts"><summary>' "$work/fleet10k.html"
t0=$(date +%s%3N)
dom "#filter=gpu-00042.dc0" >"$work/big-host.dom"
echo "  ($BROWSER loaded the $N-host page and filtered it in $(($(date +%s%3N) - t0)) ms)"
check_eq "$N hosts: filter one host" "1 of $N hosts shown" "$(shown "$work/big-host.dom")"
check "$N hosts: a filter pass takes under 300 ms ($(ms "$work/big-host.dom") ms)" fast "$(ms "$work/big-host.dom")" 300
check "$N hosts: a match opens the table" sh -c "grep -q '<details id=\"hosts\" open=\"\"' '$work/big-host.dom'"
want=$(python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(len([h for h in d["hosts"] if "fabricmanager.missing" in h["findings"] and h["status"] == "fail"]))' "$work/fleet10k.json")
dom "#filter=fabricmanager.missing&status=fail" >"$work/big-code.dom"
check_eq "$N hosts: filter by code and status: the failing hosts with that finding" "$want of $N hosts shown" \
  "$(shown "$work/big-code.dom")"
check "$N hosts: that pass takes under 300 ms too ($(ms "$work/big-code.dom") ms)" fast "$(ms "$work/big-code.dom")" 300
visible=$(grep '<section class="group' "$work/big-code.dom" | grep -v ' hidden=' | sed 's/.*data-code="\([^"]*\)".*/\1/')
check "$N hosts: its group is shown" grep -qx fabricmanager.missing <<<"$visible"
check "$N hosts: groups none of those hosts has are hidden" test "$(wc -l <<<"$visible")" -lt \
  "$(grep -c '<section class="group' "$work/big-code.dom")"

if ((failures)); then echo "fleet_browser: $failures check(s) failed" >&2; exit 1; fi
echo "fleet_browser: all checks passed"
