#!/usr/bin/env bash
# The C++ sources follow the checked-in .clang-format (Google style, 110 columns).
# Usage: tools/format.sh           rewrites every tracked .cc/.h/.c file in place
#        tools/format.sh --check   lists the files that differ and exits 1 (CI runs this; nothing changes)
# Generated and third-party data under tools/data/ are left as they are.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "format.sh: clang-format is missing (packaging/install-deps.sh)" >&2; exit 2; }
mapfile -t files < <(git ls-files '*.cc' '*.h' '*.c' | grep -v '^tools/data/')
if [[ ${1:-} == --check ]]; then
  # One process over every file: each difference is a "FILE:LINE:COL: error: code should be clang-formatted".
  mapfile -t bad < <(clang-format --dry-run --Werror "${files[@]}" 2>&1 | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: .*/\1/p' | sort -u)
  if ((${#bad[@]})); then
    printf 'format.sh: not formatted (run tools/format.sh): %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "format.sh: ${#files[@]} files follow .clang-format ($(clang-format --version | grep -o 'version [0-9.]*'))"
  exit 0
fi
printf '%s\0' "${files[@]}" | xargs -0 -n 32 -P "$(nproc)" clang-format -i
echo "format.sh: formatted ${#files[@]} files"
