#!/usr/bin/env bash
# ctest-labels: differential
# Debian version ordering against dpkg itself: generated pairs of versions (tests/differential/dpkg_cases.py),
# each compared by `dpkg --compare-versions` and by gpuprep; the order (lt/eq/gt) and dpkg's refusals of
# malformed versions must agree. Exit 77 (skipped) without dpkg.
# Usage: differential_dpkg.sh <gpuprep-binary> <source-dir> <build-dir>
set -euo pipefail
SRC=$2
ANSWERS=$3/tests/gpuprep_answers
[[ -x $ANSWERS ]] || { echo "FAIL: $ANSWERS is not built" >&2; exit 1; }
command -v dpkg >/dev/null || { echo "SKIP: dpkg not found"; exit 77; }
work=$(mktemp -d /tmp/gpuprep-differential-dpkg.XXXXXX)
trap 'rm -rf "$work"' EXIT
python3 "$SRC/tests/differential/dpkg_cases.py" gen >"$work/cases"
"$ANSWERS" <"$work/cases" >"$work/gpuprep.jsonl"
python3 "$SRC/tests/differential/dpkg_cases.py" check "$work/cases" "$work/gpuprep.jsonl"
