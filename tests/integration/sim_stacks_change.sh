#!/usr/bin/env bash
# ctest-labels: sim
# shellcheck disable=SC2034  # SIM_RC is set here and read by check_rc (tests/sim/lib.sh)
# Embedded stacks on the simulated server (tests/sim/stacks.sh), when the repository and the host move:
# - a site file pinning a driver point release NVIDIA pruned (580.82.07) -> apply refuses before any change,
#   with one line naming the package, the version wanted and the nearest versions the repository has;
# - a host converged to the legacy ubuntu22.04-r535-cuda12.2, then applied hopper-r580-cuda13.0 -> gpuprep
#   releases its own pins and holds, swaps the driver branch, converges and pins the new stack.
# Usage: bash sim_stacks_change.sh <gpuprep-binary> <source-dir> <build-dir>
set -uo pipefail
GPUPREP=$1
SRC=$2
source "$SRC/tests/sim/lib.sh"
source "$SRC/tests/sim/stacks.sh"
sim_require
sim_init "$GPUPREP" "$SRC" "${3:-}"
t_start=$(_sim_ms)
D=580.95.05-0ubuntu1

sim_section "a pruned point release (580.82.07): refused before any change"
sim_new_host
PRUNED=$(sim_site_file hopper-r580-cuda13.0 site-pruned "driver:
  version: 580.82.07")
sim_snapshot pruned
sim_gp pruned --manifest "$PRUNED" apply --yes
check_rc "apply refuses" 1 pruned
check_eq "one error line" 1 "$(grep -c '^gpuprep: error: ' "$SIM_DIR/pruned.err")"
check "it names a driver package, the version wanted and the nearest releases (580.65.06, 580.95.05)" \
  grep -Eq '^gpuprep: error: .*nvidia-[a-z0-9-]*580.*580\.82\.07.*580\.65\.06.*580\.95\.05' "$SIM_DIR/pruned.err"
check_eq "no install transaction" 0 "$(sim_log apt-get | grep -c ' install ')"
check_eq "nothing recorded (initramfs, systemctl)" "" "$(sim_log commands)"
check_eq "no NVIDIA package installed" "" "$(sim_nvidia_installed)"
# apt's downloaded indexes (lists, its binary cache) are apt's own state, refreshed by every update.
check_eq "no file changed outside gpuprep's log and journal and apt's downloaded indexes" "" \
  "$(sim_diff pruned | grep -Ev '^[<>] \./(var/lib/apt/lists/|var/cache/apt/)')"

sim_section "a host converged to the legacy ubuntu22.04-r535-cuda12.2"
sim_new_host
LEGACY=$(sim_site_file ubuntu22.04-r535-cuda12.2)
HOPPER=$(sim_site_file hopper-r580-cuda13.0)
sim_stack_converge legacy "$LEGACY"
L=535.129.03-0ubuntu1
sim_check_versions "driver 535.129.03 (not the newer 535.183.01), CUDA 12.2.2, cuDNN 8.9.7, NCCL 2.18.5 for CUDA 12.2" \
  "nvidia-driver-535 $L" "nvidia-dkms-535 $L" "libnvidia-compute-535 $L" "nvidia-utils-535 $L" \
  "cuda-toolkit-12-2 12.2.2-1" "libcudnn8 8.9.7.29-1+cuda12.2" "libnccl2 2.18.5-1+cuda12.2"
sim_check_pinned_and_held legacy

sim_section "then hopper-r580-cuda13.0: old pins and holds released, driver branch swapped, new stack pinned"
: >"$SIM_HOST/sim/log/apt-get.log"
sim_gp change --manifest "$HOPPER" apply --yes
check_rc "apply of the new stack stops for the reboot" 3 change
rc=0
sim_reboot || rc=$?
check_eq "the resume unit converges after the reboot" 0 "$rc"
sim_gp change-verify --manifest "$HOPPER" verify
check_rc "verify with the new stack" 0 change-verify
sim_check_versions "the new stack's pins" \
  "nvidia-driver-580-open $D" "nvidia-dkms-580-open $D" "libnvidia-compute-580 $D" "nvidia-utils-580 $D" \
  "cuda-toolkit-13-0 13.0.2-1" "libcudnn9-cuda-13 9.12.0.46-1" "libnccl2 2.27.7-1+cuda13.0"
check_eq "the 535 driver is gone" "" \
  "$(sim_nvidia_installed | grep -E '^(nvidia-(driver|dkms|utils|compute-utils)-535|libnvidia-compute-535) ')"
check_eq "the R580 open module is loaded" "580.95.05" "$(sim_run cat /sys/module/nvidia/version)"
check_eq "nothing of the old stack is pinned or held any more" "" \
  "$(sim_pins | grep -E ' (535\.|12\.2\.|8\.9\.|2\.18\.)'; sim_holds | grep -E -- '-535$|^cuda-drivers$|^libcudnn8$')"
LEFT='^(cuda-[a-z-]+-12-2|libcudnn8|nvidia-fabricmanager-535) '
check_eq "what the old stack left and the new one does not manage is neither pinned nor held" "" \
  "$(comm -12 <(sim_nvidia_installed | grep -E "$LEFT" | cut -d' ' -f1) <( (sim_pins | cut -d' ' -f1; sim_holds) | LC_ALL=C sort -u))"
sim_check_pinned_and_held "after the change" "$LEFT"

echo "sim_stacks_change: scenarios took $(($(_sim_ms) - t_start)) ms"
sim_finish sim_stacks_change
