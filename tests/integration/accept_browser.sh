#!/usr/bin/env bash
# ctest-labels: browser
# The acceptance report's HTML page in a real headless browser (Debian's chromium), as the fleet report's test
# does: a faulty recording whose host name and serial numbers carry markup is judged with --report FILE.html;
# the page chromium renders holds one row per check of the JSON, the failing check coloured, the markup as
# text (no element made of it), and it loads nothing from outside (its CSP would log the attempt).
# Usage: bash accept_browser.sh <gpuprep-binary> <source-dir> [build-dir]. Exit 77 when chromium is missing.
set -uo pipefail
GPUPREP=$1
SRC=$2
BROWSER=
for b in chromium chromium-browser; do command -v "$b" >/dev/null && { BROWSER=$b; break; }; done
[[ -n $BROWSER ]] || { echo "SKIP: chromium not found (packaging/install-deps.sh installs Debian's chromium)"; exit 77; }
work=$(mktemp -d /tmp/gpuprep-accept-browser.XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0
check() { local d=$1; shift; if "$@"; then echo "  ok: $d"; else echo "  FAILED: $d" >&2; failures=$((failures + 1)); fi; }
check_eq() { if [[ $2 == "$3" ]]; then echo "  ok: $1"; else echo "  FAILED: $1: expected [$2], got [$3]" >&2; failures=$((failures + 1)); fi; }

python3 "$SRC/tests/fixtures/accept/make_faulty.py" "$SRC/tests/fixtures/accept/h100x8-healthy.jsonl" "$work"
# Markup in what the recording says about the server.
sed -e 's/"host":"h100-published"/"host":"<script>document.title=1<\/script><img src=x onerror=alert(1)>"/' \
    -e 's/"serial":"FIXTURE0003"/"serial":"<b id=\\"injected\\">3<\/b>"/' \
    "$work/h100x8-gen4-x8-gpu5.jsonl" >"$work/hostile.jsonl"
"$GPUPREP" accept --measurements "$work/hostile.jsonl" --report "$work/report.html" >/dev/null
check_eq "accept exits 1 (the Gen4 x8 link fails)" 1 "$?"
checks=$("$GPUPREP" accept --measurements "$work/hostile.jsonl" --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["checks"]))')

timeout 120 "$BROWSER" --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions \
  --user-data-dir="$work/profile" --dump-dom "file://$work/report.html" 2>"$work/browser.err" |
  sed 's/></>\n</g' >"$work/dom"
[[ -s $work/dom ]] || { cat "$work/browser.err" >&2; echo "FAIL: $BROWSER rendered nothing" >&2; exit 1; }
check_eq "one row per check of the JSON ($checks)" "$checks" "$(grep -c '<tr class="check"' "$work/dom")"
check_eq "eight GPU rows" 8 "$(grep -c '<tr class="gpu"' "$work/dom")"
check "the verdict is fail" grep -q 'data-verdict="fail"' "$work/dom"
check "the failing link is coloured" sh -c "grep -A3 'links pcie' '$work/dom' | grep -q 's-fail'"
check "no script element made of the host name" sh -c "! grep -qi '<script' '$work/dom'"
check "no img element made of the host name" sh -c "! grep -qi '<img' '$work/dom'"
check "no element made of a serial number" sh -c "! grep -q '<b id=\"injected\"' '$work/dom'"
check "the host name shown as text" grep -qF '&lt;script&gt;document.title=1&lt;/script&gt;' "$work/dom"
check "the sources listed" grep -qF 'Azure/azurehpc-health-checks@0e0a1ac26a64b32ac4dd7632a529638505d3314a:conf/nd96isr_h100_v5.conf:49' "$work/dom"
check "nothing blocked by the CSP (nothing external was asked for)" sh -c "! grep -qi 'content security policy' '$work/browser.err'"
timeout 120 "$BROWSER" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$work/profile" \
  --window-size=1400,900 --screenshot="$work/report.png" "file://$work/report.html" >/dev/null 2>&1
check "a screenshot renders (PNG)" sh -c "head -c 8 '$work/report.png' | od -An -tx1 | grep -q '89 50 4e 47'"
[[ $failures -eq 0 ]] && echo "all accept browser checks passed"
exit $((failures > 0))
