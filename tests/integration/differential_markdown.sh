#!/usr/bin/env bash
# ctest-labels: differential
# The fleet report's Markdown read by GitHub's own renderer (Debian's cmark-gfm, with the extensions GitHub
# turns on: tables, autolinks, strike-through, tag filter; raw HTML let through, so nothing is hidden): snapshots
# whose host names (file names), messages and fixes carry links, images, HTML, autolinks, e-mail addresses,
# emphasis, backticks and '|' render as text. No <a> or <img> element, no tag but the report's own, every
# findings row has its five cells, each message is shown as written and each fix is one code element whose
# text is the fix as written (tests/differential/markdown_check.py).
# Usage: differential_markdown.sh <gpuprep-binary> <source-dir> <build-dir>. Exit 77 without cmark-gfm.
set -euo pipefail
GPUPREP=$1
SRC=$2
command -v cmark-gfm >/dev/null || { echo "SKIP: cmark-gfm not found (packaging/install-deps.sh installs it)"; exit 77; }
work=$(mktemp -d /tmp/gpuprep-differential-markdown.XXXXXX)
trap 'rm -rf "$work"' EXIT
rc=0
"$GPUPREP" doctor --json --root "$SRC/tests/fixtures/hosts/mismatch" --manifest ubuntu22.04-r535-cuda12.2 \
  >"$work/base.json" 2>/dev/null || rc=$?
((rc <= 1)) || { echo "FAIL: doctor on the fixture exited $rc" >&2; exit 1; }
python3 "$SRC/tests/differential/markdown_check.py" make "$work/base.json" "$work" >"$work/snapshots"
mapfile -t snaps <"$work/snapshots"
rc=0
"$GPUPREP" fleet-report --format markdown "${snaps[@]}" >"$work/report.md" || rc=$?
((rc <= 1)) || { echo "FAIL: fleet-report exited $rc" >&2; exit 1; }
cmark-gfm --unsafe --extension table --extension autolink --extension strikethrough --extension tagfilter \
  "$work/report.md" >"$work/report.html"
python3 "$SRC/tests/differential/markdown_check.py" check "$work/report.html" "$work/cases.json"
