#!/usr/bin/env bash
# ctest-labels: differential
# URLs against libcurl's own URL parser (curl_url, reached through the same dlopen of libcurl.so.4 as the
# HTTP client): generated and hostile URLs (tests/differential/url_cases.py); a URL gpuprep accepts must be
# read by libcurl as the same scheme, host, port and path, and every URL gpuprep refuses while libcurl
# accepts it must be refused for a documented reason (listed). Exit 77 (skipped) without libcurl's URL API.
# Usage: differential_curl.sh <gpuprep-binary> <source-dir> <build-dir>
set -euo pipefail
SRC=$2
ANSWERS=$3/tests/gpuprep_answers
[[ -x $ANSWERS ]] || { echo "FAIL: $ANSWERS is not built" >&2; exit 1; }
work=$(mktemp -d /tmp/gpuprep-differential-curl.XXXXXX)
trap 'rm -rf "$work"' EXIT
python3 "$SRC/tests/differential/url_cases.py" gen >"$work/cases"
rc=0
"$ANSWERS" <"$work/cases" >"$work/gpuprep.jsonl" || rc=$?
if ((rc == 77)); then echo "SKIP: libcurl.so.4 with its URL API (libcurl4) is not installed"; exit 77; fi
((rc == 0)) || exit "$rc"
python3 "$SRC/tests/differential/url_cases.py" check "$work/gpuprep.jsonl"
