#!/usr/bin/env bash
# Checks that one binary (and the .deb's Depends) install on every distribution in packaging/tables/:
#   - no GLIBC_x.y symbol version newer than the table's glibc (objdump -T),
#   - no GLIBCXX_3.4.N newer than the table's libstdc++6,
#   - every NEEDED soname (objdump -p) and every soname gpuprep dlopens is shipped there,
#   - every package named in Depends (each alternative group has one that exists there).
# Usage: check-binary.sh BINARY [DEB]. Prints one line per distribution; exit 1 on the first violation list.
set -euo pipefail
bin=$1
deb=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
# What the binary dlopens (src/sys/dl.h, listed by dlopened.sh: libcurl, libcrypto, libarchive); NVIDIA's own
# libraries come with the driver and CUDA, not from the distribution, and are not dependencies.
mapfile -t dlopened < <(bash "$here/dlopened.sh")
[ ${#dlopened[@]} -gt 0 ] || { echo "check-binary: no dlopened sonames (packaging/dlopened.sh)" >&2; exit 1; }

ver_gt() { [ "$1" != "$2" ] && [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | tail -1)" = "$1" ]; }

syms=$(objdump -T "$bin")
glibc_max=$(grep -oE 'GLIBC_[0-9]+(\.[0-9]+)+' <<<"$syms" | sed 's/GLIBC_//' | sort -uV | tail -1)
glibcxx_max=$(grep -oE 'GLIBCXX_[0-9]+(\.[0-9]+)+' <<<"$syms" | sort -uV | tail -1 || true)
mapfile -t needed < <(objdump -p "$bin" | awk '$1 == "NEEDED" {print $2}')
depends=""
if [ -n "$deb" ]; then depends=$(dpkg-deb -f "$deb" Depends); fi

fail=0
for table in "$here"/tables/*.tsv; do
  dist=$(basename "$table" .tsv)
  errs=()
  glibc=$(awk -F'\t' '$1 == "glibc" {print $2}' "$table")
  glibcxx=$(awk -F'\t' '$1 == "glibcxx" {print $2}' "$table")
  if ver_gt "$glibc_max" "$glibc"; then errs+=("needs GLIBC_$glibc_max, $dist has $glibc"); fi
  if [ -n "$glibcxx_max" ] && ver_gt "${glibcxx_max#GLIBCXX_}" "${glibcxx#GLIBCXX_}"; then
    errs+=("needs $glibcxx_max, $dist has $glibcxx")
  fi
  for so in "${needed[@]}" "${dlopened[@]}"; do
    if awk -F'\t' -v s="$so" '$1 == "absent-soname" && $2 == s {f=1} END {exit !f}' "$table"; then
      errs+=("needs $so, which $dist does not ship")
    elif ! awk -F'\t' -v s="$so" '$1 == "soname" && $2 == s {f=1} END {exit !f}' "$table"; then
      errs+=("needs $so, not in the $dist table")
    fi
  done
  if [ -n "$depends" ]; then
    IFS=',' read -ra groups <<<"$depends"
    for g in "${groups[@]}"; do
      ok=0
      IFS='|' read -ra alts <<<"$g"
      for a in "${alts[@]}"; do
        name=$(awk '{print $1}' <<<"$a")
        if awk -F'\t' -v p="$name" '$1 == "package" && $2 == p {f=1} END {exit !f}' "$table"; then ok=1; fi
      done
      [ $ok = 1 ] || errs+=("Depends '$(xargs <<<"$g")': no such package in $dist")
    done
    libc_min=$(grep -oE 'libc6 \(>= [0-9.]+\)' <<<"$depends" | grep -oE '[0-9]+(\.[0-9]+)+' || true)
    if [ -n "$libc_min" ] && ver_gt "$libc_min" "$glibc"; then errs+=("Depends libc6 (>= $libc_min), $dist has $glibc"); fi
    for so in "${needed[@]}" "${dlopened[@]}"; do
      pkg=$(awk -F'\t' -v s="$so" '$1 == "soname" && $2 == s {print $3}' "$table")
      [ -z "$pkg" ] || tr ',|' '\n\n' <<<"$depends" | awk '{print $1}' | grep -qxF -- "$pkg" ||
        errs+=("$so: Depends lacks $pkg ($dist)")
    done
  fi
  if [ ${#errs[@]} -eq 0 ]; then
    echo "check-binary: $dist: ok (GLIBC_$glibc_max <= $glibc, ${glibcxx_max:-no GLIBCXX} <= $glibcxx, ${needed[*]} ${dlopened[*]})"
  else
    for e in "${errs[@]}"; do echo "check-binary: $dist: $e" >&2; done
    fail=1
  fi
done
exit $fail
