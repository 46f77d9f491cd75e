#!/usr/bin/env bash
# ctest-labels: sim
# shellcheck disable=SC2034  # SIM_RC is set here and read by check_rc (tests/sim/lib.sh)
# The embedded default stack volta-r580.173.02-cuda12.9.1 itself, on a simulated V100 server (8 GPUs), through a site file that overrides only its
# repositories' addresses and keys (tests/sim/stacks.sh): listed by `manifest list`; plan, apply -> reboot ->
# resume -> verify; the stack's pins installed exactly although newer releases exist in NVIDIA's repository
# and in the distribution's; every package pinned and held; `apt-get upgrade` changes no NVIDIA package;
# doctor clean on the layers gpuprep installed; docker.io installed by the docker layer, the nvidia runtime
# in daemon.json, the CUDA image pulled, a container that sees every GPU (no PyTorch in it: no torch check).
# Usage: bash sim_stacks_volta.sh <gpuprep-binary> <source-dir> <build-dir>
set -uo pipefail
GPUPREP=$1
SRC=$2
source "$SRC/tests/sim/lib.sh"
source "$SRC/tests/sim/stacks.sh"
sim_require
sim_init "$GPUPREP" "$SRC" "${3:-}"
t_start=$(_sim_ms)

export SIM_GPU=V100
# The container half: docker.io installed by gpuprep, NVIDIA's CUDA 12.9.1 image (no PyTorch: no torch check).
export SIM_DOCKER=install SIM_IMAGE=nvcr.io/nvidia/cuda:12.9.1-cudnn-runtime-ubuntu22.04 SIM_IMAGE_TORCH=no-torch
D=580.173.02-1ubuntu1
sim_stack_scenario volta-r580.173.02-cuda12.9.1 "a bare V100 server (8 GPUs)" "stack gpu driver cuda cudnn nccl docker container_toolkit image" \
  "driver 580.173.02, proprietary modules (Volta has no open ones), every component at one revision|nvidia-driver-580 $D|nvidia-dkms-580 $D|libnvidia-compute-580 $D|nvidia-utils-580 $D|nvidia-compute-utils-580 $D" \
  "CUDA 12.9.1 with its own components|cuda-toolkit-12-9 12.9.1-1|cuda-cudart-12-9 12.9.79-1|cuda-nvcc-12-9 12.9.79-1" \
  "cuDNN 9.10.2.21 for CUDA 12, NCCL 2.30.7 built for CUDA 12.9|libcudnn9-cuda-12 9.10.2.21-1|libnccl2 2.30.7-1+cuda12.9"
check_eq "the proprietary kernel module is loaded" "580.173.02" \
  "$(sim_run sh -c 'cat /sys/module/nvidia/version; grep -q "Open Kernel Module" /proc/driver/nvidia/version && echo open' | tr '\n' ' ' | sed 's/ $//')"

echo "sim_stacks_volta: scenarios took $(($(_sim_ms) - t_start)) ms"
sim_finish sim_stacks_volta
