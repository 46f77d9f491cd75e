#!/usr/bin/env bash
# ctest-labels: fixtures
# ARCHITECTURE.md "Heavy libraries load lazily": doctor (and manifest list) start without mapping libcurl,
# libcrypto or libarchive; they are dlopen'ed only by the commands that download, hash or extract.
# Reads the dynamic loader's own record (glibc LD_DEBUG=files). Usage: bash lazy_libs.sh <gpuprep> <source-dir>
set -uo pipefail
GPUPREP=$1
fail=0
for args in "doctor --json" "manifest list"; do
  # shellcheck disable=SC2086
  loaded=$(LD_DEBUG=files "$GPUPREP" $args 2>&1 >/dev/null | grep -oE 'file=[^ ]+' | sort -u)
  if [[ -z $loaded ]]; then
    echo "SKIP: LD_DEBUG=files reports nothing here (not glibc?)"
    exit 77
  fi
  heavy=$(grep -E 'libcurl|libcrypto|libarchive' <<<"$loaded")
  if [[ -n $heavy ]]; then
    echo "FAIL: gpuprep $args mapped: $heavy" >&2
    fail=1
  else
    echo "ok: gpuprep $args maps no libcurl, libcrypto or libarchive"
  fi
done
exit $fail
