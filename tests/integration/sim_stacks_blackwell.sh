#!/usr/bin/env bash
# ctest-labels: sim
# shellcheck disable=SC2034  # SIM_RC is set here and read by check_rc (tests/sim/lib.sh)
# The embedded default stack blackwell-r580.173.02-cuda13.0.3-nvlsm itself, on a simulated B200 server (8 GPUs), through a site file that overrides only its
# repositories' addresses and keys (tests/sim/stacks.sh): listed by `manifest list`; plan, apply -> reboot ->
# resume -> verify; the stack's pins installed exactly although newer releases exist in NVIDIA's repository
# and in the distribution's; every package pinned and held; `apt-get upgrade` changes no NVIDIA package;
# doctor clean on the layers gpuprep installed; a Docker engine installed before gpuprep left alone, the
# nvidia runtime in daemon.json, NGC PyTorch 25.12 pulled, a container that sees every GPU and torch counting them.
# Usage: bash sim_stacks_blackwell.sh <gpuprep-binary> <source-dir> <build-dir>
set -uo pipefail
GPUPREP=$1
SRC=$2
source "$SRC/tests/sim/lib.sh"
source "$SRC/tests/sim/stacks.sh"
sim_require
sim_init "$GPUPREP" "$SRC" "${3:-}"
t_start=$(_sim_ms)

export SIM_GPU=B200
# The container half: docker.io already installed before gpuprep (left alone), NGC PyTorch 25.12.
export SIM_DOCKER=preinstalled SIM_IMAGE=nvcr.io/nvidia/pytorch:25.12-py3 SIM_IMAGE_TORCH=torch
D=580.173.02-1ubuntu1
sim_stack_scenario blackwell-r580.173.02-cuda13.0.3-nvlsm "a bare B200 server (8 GPUs)" "stack gpu driver cuda cudnn nccl docker container_toolkit image" \
  "driver 580.173.02, open modules (Blackwell has no other), every component at one revision|nvidia-driver-580-open $D|nvidia-dkms-580-open $D|libnvidia-compute-580 $D|nvidia-utils-580 $D|nvidia-compute-utils-580 $D" \
  "CUDA 13.0.3 with its own components|cuda-toolkit-13-0 13.0.3-1|cuda-cudart-13-0 13.0.96-1|cuda-nvcc-13-0 13.0.96-1" \
  "cuDNN 9.25.1.1 for CUDA 13, NCCL 2.28.9 built for CUDA 13.0|libcudnn9-cuda-13 9.25.1.1-1|libnccl2 2.28.9-1+cuda13.0"
check_eq "the open kernel module is loaded" "580.173.02 open" \
  "$(sim_run sh -c 'cat /sys/module/nvidia/version; grep -q "Open Kernel Module" /proc/driver/nvidia/version && echo open' | tr '\n' ' ' | sed 's/ $//')"
check_eq "nvidia-smi sees 8 B200" 8 "$(sim_run nvidia-smi -L | grep -c 'NVIDIA B200')"

echo "sim_stacks_blackwell: scenarios took $(($(_sim_ms) - t_start)) ms"
sim_finish sim_stacks_blackwell
