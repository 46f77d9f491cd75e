#!/usr/bin/env bash
# ctest-labels: sim
# shellcheck disable=SC2034  # SIM_RC is set here and read by check_rc (tests/sim/lib.sh)
# The embedded default stack hopper-r580.173.02-cuda13.0.3 itself, on the simulated HGX H100 (8 GPUs, NVSwitches), through a site file that overrides only its
# repositories' addresses and keys (tests/sim/stacks.sh): listed by `manifest list`; plan, apply -> reboot ->
# resume -> verify; the stack's pins installed exactly although newer releases exist in NVIDIA's repository
# and in the distribution's; every package pinned and held; `apt-get upgrade` changes no NVIDIA package;
# doctor clean on the layers gpuprep installed; the distribution's docker.io installed by the docker layer,
# the nvidia runtime in daemon.json, NGC PyTorch 25.12 pulled, a container that sees every GPU and torch counting them;
# doctor's stack row: this is the stack gpuprep picks for a new host like this one.
# Usage: bash sim_stacks_hopper.sh <gpuprep-binary> <source-dir> <build-dir>
set -uo pipefail
GPUPREP=$1
SRC=$2
source "$SRC/tests/sim/lib.sh"
source "$SRC/tests/sim/stacks.sh"
sim_require
sim_init "$GPUPREP" "$SRC" "${3:-}"
t_start=$(_sim_ms)

export SIM_GPU=H100 SIM_NVSWITCH=1
# The container half: the distribution's docker.io installed by gpuprep, NGC PyTorch 25.12 (torch counts the GPUs).
export SIM_DOCKER=install SIM_IMAGE=nvcr.io/nvidia/pytorch:25.12-py3 SIM_IMAGE_TORCH=torch
# NVIDIA's 580.173.02-1ubuntu1, not Ubuntu's build of the same release (580.173.02-0ubuntu0.22.04.1) nor NVIDIA's
# newer 580.178.04; NCCL's +cuda13.0 build, not the newer releases built for CUDA 13.1 and 13.3.
D=580.173.02-1ubuntu1
sim_stack_scenario hopper-r580.173.02-cuda13.0.3 "a bare HGX H100 (8 GPUs, NVSwitches)" "stack gpu driver fabricmanager cuda cudnn nccl docker container_toolkit image" \
  "driver 580.173.02 from NVIDIA's repository, open modules, every component at one revision; fabric manager at the driver's version|nvidia-driver-580-open $D|nvidia-dkms-580-open $D|libnvidia-compute-580 $D|nvidia-utils-580 $D|nvidia-compute-utils-580 $D|nvidia-fabricmanager-580 580.173.02-1" \
  "CUDA 13.0.3 with its own components|cuda-toolkit-13-0 13.0.3-1|cuda-cudart-13-0 13.0.96-1|cuda-nvcc-13-0 13.0.96-1" \
  "cuDNN 9.25.1.1 for CUDA 13, NCCL 2.28.9 built for CUDA 13.0, toolkit 1.20.0 (not 1.20.1)|libcudnn9-cuda-13 9.25.1.1-1|libnccl2 2.28.9-1+cuda13.0|nvidia-container-toolkit 1.20.0-1"
check_eq "the open kernel module is loaded" "580.173.02 open" \
  "$(sim_run sh -c 'cat /sys/module/nvidia/version; grep -q "Open Kernel Module" /proc/driver/nvidia/version && echo open' | tr '\n' ' ' | sed 's/ $//')"

echo "sim_stacks_hopper: scenarios took $(($(_sim_ms) - t_start)) ms"
sim_finish sim_stacks_hopper
