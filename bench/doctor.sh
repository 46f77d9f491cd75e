#!/usr/bin/env bash
# `gpuprep doctor --json` against its floor (doctor_floor.c): alternating runs, medians, ratio.
# Target: doctor <= 1.5x the floor. Usage:
#   bash bench/doctor.sh [GPUPREP_BINARY] [ROUNDS]     (defaults: build/gpuprep, 30)
# Extra doctor arguments can go in DOCTOR_ARGS (e.g. DOCTOR_ARGS="--root tests/fixtures/hosts/healthy-h100").
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../build/gpuprep}
rounds=${2:-30}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -Wall "$here/doctor_floor.c" -o "$work/doctor_floor" -ldl

# Wall time of one run in microseconds, without forking anything to measure it (bash 5 EPOCHREALTIME).
run_us() {
  local t0=$EPOCHREALTIME
  "$@" >/dev/null 2>&1 || true
  local t1=$EPOCHREALTIME
  echo $(( (${t1/./} - ${t0/./}) ))
}
median() { sort -n | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print int((a[NR/2]+a[NR/2+1])/2)}'; }

# Warm the page cache and the dynamic loader's caches for both, then alternate.
for _ in 1 2 3; do
  "$work/doctor_floor" >/dev/null
  "$bin" doctor --json ${DOCTOR_ARGS:-} >/dev/null 2>&1 || true
done
: >"$work/floor"
: >"$work/doctor"
for _ in $(seq "$rounds"); do
  run_us "$work/doctor_floor" >>"$work/floor"
  run_us "$bin" doctor --json ${DOCTOR_ARGS:-} >>"$work/doctor"
done
f=$(median <"$work/floor")
d=$(median <"$work/doctor")
"$work/doctor_floor"
awk -v f="$f" -v d="$d" -v n="$rounds" 'BEGIN {
  printf "rounds: %d each, alternating\nfloor:  median %.1f ms\ndoctor: median %.1f ms\nratio:  %.2fx (target <= 1.5x)\n",
         n, f / 1000, d / 1000, d / f }'
