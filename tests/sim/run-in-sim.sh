#!/usr/bin/env bash
# run-in-sim.sh GPUPREP SRC [--build-dir DIR] [--converged] [--keep] -- CMD...
# Starts the simulated GPU server (a bare Ubuntu 22.04 with 8 H100, tests/sim/README.md), optionally
# brings it to the converged state first (gpuprep apply -> simulated reboot -> resume unit), runs CMD
# inside it (as root, chrooted; the binary under test is /sim/bin/gpuprep, the test stack /sim/stack.yaml,
# HOST_DIR=/sim) and tears everything down. Exits with CMD's status. Example, the re-apply benchmark:
#   tests/sim/run-in-sim.sh build/gpuprep . --converged -- /sim/bin/gpuprep --manifest /sim/stack.yaml apply --yes
# Files CMD writes under /sim/out come back in ./sim-out/ (the directory is replaced).
set -uo pipefail
[[ $# -ge 2 ]] || { sed -n '2,9p' "$0" >&2; exit 2; }
GPUPREP=$(realpath "$1")
SRC=$(realpath "$2")
shift 2
build_dir=
converged=0
keep=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --build-dir) build_dir=$2; shift 2 ;;
    --converged) converged=1; shift ;;
    --keep) keep=1; shift ;;
    --) shift; break ;;
    *) echo "run-in-sim: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ $# -gt 0 ]] || { echo "run-in-sim: no command after --" >&2; exit 2; }
source "$SRC/tests/sim/lib.sh"
sim_require
((keep)) && export SIM_KEEP=1
sim_init "$GPUPREP" "$SRC" "$build_dir"
sim_new_host
mkdir -p "$SIM_HOST/sim/out"
if ((converged)); then
  sim_gp converge --manifest /sim/stack.yaml apply --yes
  [[ $SIM_RC == 3 ]] || { sim_show converge; sim_fail "run-in-sim: apply on the bare server exited $SIM_RC, not 3"; }
  sim_reboot
  rc=$?
  [[ $rc == 0 ]] || sim_fail "run-in-sim: the resume after the simulated reboot exited $rc"
  echo "run-in-sim: converged (apt-get calls so far: $(sim_count apt-get))" >&2
fi
apt0=$(sim_count apt-get)
http0=$(sim_http_requests)
cmd0=$(sim_count commands)
t=$(_sim_ms)
rc=0
_sim_enter "$@" || rc=$?
echo "run-in-sim: exit $rc in $(($(_sim_ms) - t)) ms (namespace setup included); apt-get calls $(($(sim_count apt-get) - apt0)), HTTP requests $(($(sim_http_requests) - http0)), recorded commands $(($(sim_count commands) - cmd0))" >&2
if [[ -n $(ls -A "$SIM_HOST/sim/out") ]]; then rm -rf ./sim-out && cp -a "$SIM_HOST/sim/out" ./sim-out; fi
exit $rc
