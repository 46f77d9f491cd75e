#!/usr/bin/env bash
# ctest-labels: sim
# shellcheck disable=SC2034  # SIM_RC is set here and read by check_rc (tests/sim/lib.sh)
# gpuprep on the simulated GPU server with a stack whose CUDA toolkit is three of NVIDIA's redistributable
# archives (`source: redist`: cuda_cudart, cuda_nvcc, libcublas of redistrib_12.2.2.json) instead of apt: the whole
# stack applied from a bare server (driver from the apt repository, reboot, resume), the archives streamed from the
# loopback HTTPS server into one prefix, /opt/gpuprep/cuda/12.2.2, `current` switched to it, the loader entry
# written and used (ldconfig, libcudart loaded by verify); doctor finds the toolkit there; a re-apply fetches
# nothing.
# Usage: bash sim_redist_cuda.sh <gpuprep-binary> <source-dir> <build-dir>
set -uo pipefail
GPUPREP=$1
SRC=$2
source "$SRC/tests/sim/lib.sh"
source "$SRC/tests/sim/stacks.sh"
source "$SRC/tests/sim/redist.sh"
sim_require
sim_init "$GPUPREP" "$SRC" "${3:-}"
t_start=$(_sim_ms)

sim_redist_cuda_tree "$SIM_DIR/www/cuda-redist"
sim_redist_cuda_manifest cuda-redist "$SIM_SCHEME://127.0.0.1:$SIM_PORT/cuda-redist/"
PREFIX=/opt/gpuprep/cuda/12.2.2

sim_section "plan: one redist step for the three components"
sim_new_host
sim_gp plan --manifest /sim/cuda-redist.yaml plan --format json
check_rc "plan --format json" 0 plan
check "the step installs into the versioned prefix" grep -q "\"prefix\": *\"$PREFIX\"" "$SIM_DIR/plan.out"
check "it lists the three components" python3 -c "
import json, sys
p = json.load(open('$SIM_DIR/plan.out'))
found = [a['redist'] for s in p['steps'] for a in s.get('actions', []) if 'redist' in a]
sys.exit(0 if len(found) == 1 and found[0]['components'] == ['cuda_cudart', 'cuda_nvcc', 'libcublas'] else 1)"

sim_section "apply the whole stack: driver from apt, CUDA from NVIDIA's archives"
http0=$(sim_http_requests)
sim_stack_converge cuda-redist /sim/cuda-redist.yaml
check "three archives and the index came over HTTPS" test "$(grep -c 'cuda-redist/' "$SIM_DIR/http.log")" -ge 4
check_eq "current -> the versioned prefix" 12.2.2 "$(sim_run readlink /opt/gpuprep/cuda/current)"
check_eq "only the prefix and current are visible" "12.2.2 current" \
  "$(sim_run ls -A /opt/gpuprep/cuda | tr '\n' ' ' | sed 's/ $//')"
check "cudart's library and header" sim_run test -f "$PREFIX/lib/libcudart.so.12.2.140" -a -f "$PREFIX/include/cuda_runtime_api.h"
check_eq "cudart's soname link" libcudart.so.12.2.140 "$(sim_run readlink "$PREFIX/lib/libcudart.so.12")"
check "nvcc in bin/, runnable" sim_run "$PREFIX/bin/nvcc" --version
check "cuBLAS and cuBLASLt" sim_run test -f "$PREFIX/lib/libcublas.so.12.2.5.6" -a -f "$PREFIX/lib/libcublasLt.so.12.2.5.6"
check "nvcc's nvvm tree" sim_run test -f "$PREFIX/nvvm/libdevice/libdevice.10.bc"
check "no archive's top directory leaked into the prefix" sim_run test ! -e "$PREFIX/cuda_cudart-linux-x86_64-12.2.140-archive"
check_eq "the ld.so.conf.d entry" /opt/gpuprep/cuda/current/lib \
  "$(sim_run grep -v '^#' /etc/ld.so.conf.d/gpuprep-cuda.conf)"
sim_run ldconfig -p >"$SIM_DIR/ldconfig.out"
check "ldconfig -p lists libcudart from current" grep -q 'libcudart.so.12 .*=> /opt/gpuprep/cuda/current/lib/libcudart.so.12' "$SIM_DIR/ldconfig.out"
check "ldconfig -p lists libcublas from current" grep -q 'libcublas.so.12 .*=> /opt/gpuprep/cuda/current/lib/libcublas.so.12' "$SIM_DIR/ldconfig.out"
check "verify loaded libcudart 12.2 from the prefix" grep -q 'CUDA toolkit 12.2.2 in /opt/gpuprep/cuda/current; libcudart 12.2 loads' "$SIM_DIR/cuda-redist-verify.out" "$SIM_DIR/cuda-redist-verify.err"
check_eq "no CUDA toolkit package from apt" "" "$(sim_nvidia_installed | grep -E '^(cuda-(toolkit|cudart|nvcc|libraries)|libcublas)' || true)"

sim_gp doctor --manifest /sim/cuda-redist.yaml doctor --json
check "doctor: cuda ok, found in the redist prefix" python3 -c "
import json, sys
d = json.load(open('$SIM_DIR/doctor.out'))
l = [x for x in d['layers'] if x['name'] == 'cuda'][0]
sys.exit(0 if l['status'] == 'ok' and l['found'].startswith('12.2') else 1)"

http1=$(sim_http_requests)
sim_snapshot installed
sim_gp again --manifest /sim/cuda-redist.yaml apply --yes
check_rc "a second apply" 0 again
check_eq "fetches nothing" "$http1" "$(sim_http_requests)"
check_eq "changes nothing" "" "$(sim_diff installed)"

echo "sim_redist_cuda: scenarios took $(($(_sim_ms) - t_start)) ms"
sim_finish sim_redist_cuda
