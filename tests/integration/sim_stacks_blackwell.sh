#!/usr/bin/env bash
# ctest-labels: sim
# shellcheck disable=SC2034  # SIM_RC is set here and read by check_rc (tests/sim/lib.sh)
# The embedded default stack blackwell-r580.173.02-cuda13.0.3-nvlsm itself, on a simulated HGX B200 server (8 GPUs,
# the NVLink switches behind four ConnectX-7 bridges), through a site file that overrides only its
# repositories' addresses and keys (tests/sim/stacks.sh): listed by `manifest list`; plan, apply -> reboot ->
# resume -> verify; the stack's pins installed exactly although newer releases exist in NVIDIA's repository
# and in the distribution's; every package pinned and held; `apt-get upgrade` changes no NVIDIA package;
# doctor clean on the layers gpuprep installed; a Docker engine installed before gpuprep left alone, the
# nvidia runtime in daemon.json, NGC PyTorch 25.12 pulled, a container that sees every GPU and torch counting them.
# The NVLink fabric: Fabric Manager and NVLSM installed and running, NVLSM pinned and held at the stack's
# version, the umad library and the kernel's extra modules (ib_umad) by name, never pinned; ib_umad loaded at
# boot; NVML's fabric state completed on every GPU, as verify and doctor report it. Then NVLSM removed by hand:
# apply puts it back and restarts Fabric Manager without a reboot, and the fabric completes again.
# Usage: bash sim_stacks_blackwell.sh <gpuprep-binary> <source-dir> <build-dir>
set -uo pipefail
GPUPREP=$1
SRC=$2
source "$SRC/tests/sim/lib.sh"
source "$SRC/tests/sim/stacks.sh"
sim_require
sim_init "$GPUPREP" "$SRC" "${3:-}"
t_start=$(_sim_ms)

export SIM_GPU=B200 SIM_HGX=1
# The container half: docker.io already installed before gpuprep (left alone), NGC PyTorch 25.12.
export SIM_DOCKER=preinstalled SIM_IMAGE=nvcr.io/nvidia/pytorch:25.12-py3 SIM_IMAGE_TORCH=torch
D=580.173.02-1ubuntu1
sim_stack_scenario blackwell-r580.173.02-cuda13.0.3-nvlsm "a bare HGX B200 server (8 GPUs)" "stack gpu driver fabricmanager cuda cudnn nccl docker container_toolkit image" \
  "driver 580.173.02, open modules (Blackwell has no other), every component at one revision|nvidia-driver-580-open $D|nvidia-dkms-580-open $D|libnvidia-compute-580 $D|nvidia-utils-580 $D|nvidia-compute-utils-580 $D" \
  "Fabric Manager at the driver's version, NVLSM at the stack's own 2025.06.11|nvidia-fabricmanager-580 580.173.02-1|nvlsm 2025.06.11-1" \
  "CUDA 13.0.3 with its own components|cuda-toolkit-13-0 13.0.3-1|cuda-cudart-13-0 13.0.96-1|cuda-nvcc-13-0 13.0.96-1" \
  "cuDNN 9.25.1.1 for CUDA 13, NCCL 2.28.9 built for CUDA 13.0|libcudnn9-cuda-13 9.25.1.1-1|libnccl2 2.28.9-1+cuda13.0"
check_eq "the open kernel module is loaded" "580.173.02 open" \
  "$(sim_run sh -c 'cat /sys/module/nvidia/version; grep -q "Open Kernel Module" /proc/driver/nvidia/version && echo open' | tr '\n' ' ' | sed 's/ $//')"
check_eq "nvidia-smi sees 8 B200" 8 "$(sim_run nvidia-smi -L | grep -c 'NVIDIA B200')"

sim_section "the NVLink fabric of the HGX B200 baseboard"
sim_check_hgx_fabric 2025.06.11-1
sim_gp fabric-verify --manifest "$(sim_site_file blackwell-r580.173.02-cuda13.0.3-nvlsm)" verify
check_rc "verify" 0 fabric-verify
check "verify reads the fabric state from NVML" grep -q "NVLink fabric completed on 8 GPU(s)" "$SIM_DIR/fabric-verify.out" "$SIM_DIR/fabric-verify.err"

sim_section "NVLSM removed by hand: apply puts it back and restarts Fabric Manager, without a reboot"
site=$(sim_site_file blackwell-r580.173.02-cuda13.0.3-nvlsm)
sim_run env DEBIAN_FRONTEND=noninteractive apt-get -y -q remove --allow-change-held-packages nvlsm >"$SIM_DIR/rm-nvlsm.out" 2>&1
sim_run systemctl restart nvidia-fabricmanager.service >/dev/null 2>&1
check_eq "without NVLSM the fabric is in progress again" "8 GPUs: 0 2 0" "$(sim_fabric | sed 's/ |.*//')"
restarts=$(sim_log commands | grep -c 'systemctl restart nvidia-fabricmanager.service')
sim_gp fabric-reapply --manifest "$site" apply --yes
check_rc "apply installs NVLSM again and ends without a reboot" 0 fabric-reapply
check_eq "nvlsm back at the stack's version" "nvlsm 2025.06.11-1" "$(sim_inspect dpkg-query -W -f '${Package} ${Version}' nvlsm)"
check_eq "apply restarted Fabric Manager once" $((restarts + 1)) "$(sim_log commands | grep -c 'systemctl restart nvidia-fabricmanager.service')"
check_eq "NVML: the fabric completed again on every GPU" "8 GPUs: 0 3 0" "$(sim_fabric | sed 's/ |.*//')"

echo "sim_stacks_blackwell: scenarios took $(($(_sim_ms) - t_start)) ms"
sim_finish sim_stacks_blackwell
