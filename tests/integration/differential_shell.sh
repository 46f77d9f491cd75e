#!/usr/bin/env bash
# ctest-labels: differential
# Shell quoting round trips: generated and hostile argv vectors (reserved words and assignments as first
# words included; tests/differential/shell_cases.py) joined by gpuprep's ShellJoin, then read back by bash,
# dash (running a recording program named by the first word) and Python's shlex.split; each must give the
# argv back. Exit 77 (skipped) without bash or dash.
# Usage: differential_shell.sh <gpuprep-binary> <source-dir> <build-dir>
set -euo pipefail
SRC=$2
ANSWERS=$3/tests/gpuprep_answers
[[ -x $ANSWERS ]] || { echo "FAIL: $ANSWERS is not built" >&2; exit 1; }
for sh in bash dash; do command -v $sh >/dev/null || { echo "SKIP: $sh not found"; exit 77; }; done
work=$(mktemp -d /tmp/gpuprep-differential-shell.XXXXXX)
trap 'rm -rf "$work"' EXIT
python3 "$SRC/tests/differential/shell_cases.py" gen >"$work/cases"
"$ANSWERS" <"$work/cases" >"$work/gpuprep.jsonl"
python3 "$SRC/tests/differential/shell_cases.py" check "$work/gpuprep.jsonl" "$work"
