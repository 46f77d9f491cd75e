#!/usr/bin/env bash
# `gpuprep doctor --json` against its floor (doctor_floor.c) in user-space instructions, counted by callgrind:
# a figure that does not move with the machine's load (doctor.sh's wall times do), and where they go, phase by
# phase (inclusive counts). It leaves out the kernel's share (file reads, page faults, mmap of the dlopened
# libraries), which is most of the floor's time: doctor.sh on an idle machine stays the test of the target.
# Usage: bash bench/doctor_instr.sh [GPUPREP_BINARY]   (default: build/gpuprep; DOCTOR_ARGS as in doctor.sh)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../build/gpuprep}
command -v valgrind >/dev/null || { echo "doctor_instr.sh: needs valgrind (callgrind)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -Wall "$here/doctor_floor.c" -o "$work/doctor_floor" -ldl

# Total instructions of one run under callgrind, and its inclusive profile for the phase lines below.
count() {
  local out=$1
  shift
  valgrind --tool=callgrind --callgrind-out-file="$work/$out" "$@" >/dev/null 2>"$work/$out.log" || true
  callgrind_annotate --inclusive=yes "$work/$out" 2>/dev/null >"$work/$out.txt"
  sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$work/$out.log"
}
f=$(count floor "$work/doctor_floor")
v=$(count start "$bin" --version)
# shellcheck disable=SC2086  # DOCTOR_ARGS is a list of words
d=$(count doctor "$bin" doctor --json ${DOCTOR_ARGS:-})

# The inclusive count of the first function whose line matches PATTERN in a profile (doctor's unless a third
# argument names another).
phase() { awk -v pat="$2" '$0 ~ pat { gsub(",", "", $1); printf "  %-44s %6.2f M\n", "'"$1"'", $1 / 1e6; exit }' \
  "$work/${3:-doctor}.txt"; }
awk -v f="$f" -v v="$v" -v d="$d" 'BEGIN {
  printf "floor (doctor_floor)            %6.2f M instructions\n", f / 1e6
  printf "gpuprep --version (start only)  %6.2f M\n", v / 1e6
  printf "gpuprep doctor --json           %6.2f M  (%.2fx the floor)\n", d / 1e6, d / f }'
echo "doctor, inclusive:"
phase "dynamic loader start (ld.so)" 'rtld.c:_dl_start '
phase "command-line set-up (--version's RunCli)" 'app.cc:gp::cli::RunCli' start
phase "  of which size's options" 'gp::cli::RegisterSize\(' start
phase "host probe" 'gp::probe::ProbeHost\('
phase "  of which the dpkg database" 'gp::probe::ProbeDpkg\('
phase "  of which cuDNN" 'gp::probe::ProbeCudnn\('
phase "  of which NCCL" 'gp::probe::ProbeNccl\('
phase "compat facts (this host's catalogue rows)" 'gp::manifest::EmbeddedHostCompat\(\) '
phase "default stack choice" 'gp::manifest::ChooseDefaultStack\('
phase "layer checks" 'gp::layers::CheckAll\('
phase "JSON report" 'gp::doctor::ReportJson\('
