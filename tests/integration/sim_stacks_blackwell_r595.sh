#!/usr/bin/env bash
# ctest-labels: sim
# shellcheck disable=SC2034  # SIM_RC is set here and read by check_rc (tests/sim/lib.sh)
# The shipped R595 Blackwell stacks themselves, each on a bare simulated server of its kind, through a site file
# that overrides only its repositories' addresses and keys (tests/sim/stacks.sh): blackwell-r595.91.07-cuda13.2.2-nvlsm
# on an HGX B200 (8 GPUs, the NVLink switches behind four ConnectX-7 bridges), then the stack it is built on,
# blackwell-r595.91.07-cuda13.2.2, on a B200 server without NVLink switches (its apt layers: the container half
# it shares with the first ran there). Each: listed by `manifest list`; plan, apply -> reboot ->
# resume -> verify; the stack's pins installed exactly although newer releases exist in NVIDIA's repository
# (595.99.01, NCCL 2.30.7 for CUDA 13.3, toolkit 1.20.1) and in the distribution's; NVIDIA's R590+ package shape:
# the unsuffixed driver packages the repository publishes for the stack's nvidia-open-595 and the branch's
# version-locking package nvidia-driver-pinning-595 at the driver's release, no branch-suffixed driver package,
# the open module 595.91.07 loaded; every package pinned and held; `apt-get upgrade` changes no NVIDIA package;
# doctor clean on the layers gpuprep installed, its driver.version-lock ok for R595, its stack row the shipped
# stack's content. On the HGX host the container half: the distribution's docker.io installed by the docker layer,
# the nvidia runtime in daemon.json, NGC PyTorch 25.12 pulled, a container that sees every GPU and torch counting
# them; and its NVLink fabric: Fabric Manager (the branch in its name) at the driver's
# version and NVLSM at the R595 stacks' own 2025.10.12 (not the newer 2025.99.1), both running, pinned and held,
# NVLSM left where it is by `apt-get upgrade`; the umad library and the kernel's extra modules by name, never
# pinned; ib_umad loaded at boot; NVML's fabric state completed on every GPU, as verify and doctor report it.
# The other host gets neither Fabric Manager nor NVLSM.
# Usage: bash sim_stacks_blackwell_r595.sh <gpuprep-binary> <source-dir> <build-dir>
set -uo pipefail
GPUPREP=$1
SRC=$2
source "$SRC/tests/sim/lib.sh"
source "$SRC/tests/sim/stacks.sh"
sim_require
sim_init "$GPUPREP" "$SRC" "${3:-}"
t_start=$(_sim_ms)

# NVIDIA's 595.91.07-1ubuntu1 under the names the repository has from R590 on (nvidia-open for the stacks'
# nvidia-open-595), not the newer 595.99.01; CUDA 13.2.2; NCCL's +cuda13.2 build, not 2.30.7 +cuda13.3.
S=595.91.07-1ubuntu1
DRIVER="driver 595.91.07 (not 595.99.01): the unsuffixed packages, open modules, every component and the branch's locking package at one revision|nvidia-open $S|nvidia-driver-open $S|nvidia-dkms-open $S|libnvidia-compute $S|nvidia-utils $S|nvidia-compute-utils $S|nvidia-driver-pinning-595 $S"
CUDA="CUDA 13.2.2 with its own components|cuda-toolkit-13-2 13.2.2-1|cuda-cudart-13-2 13.2.86-1|cuda-nvcc-13-2 13.2.86-1"
LIBS="cuDNN 9.25.1.1 for CUDA 13, NCCL 2.29.7 built for CUDA 13.2 (not 2.30.7 for 13.3)|libcudnn9-cuda-13 9.25.1.1-1|libnccl2 2.29.7-1+cuda13.2"

# check_r595_shape STACK DOCTOR_FAILS: after sim_stack_scenario STACK: NVIDIA's R590+ package shape (no
# branch-suffixed driver package, nothing of R580), the open module 595.91.07 loaded, nvidia-smi's 8 B200,
# doctor's driver.version-lock ok for R595, its stack row naming the shipped stack's content and its failures
# exactly those of the layers DOCTOR_FAILS names (those the scenario left out; "" for none).
check_r595_shape() {
  check_eq "no branch-suffixed driver package and nothing of R580 installed (Fabric Manager keeps the branch in its name)" "" \
    "$(sim_nvidia_installed | grep -Ev '^nvidia-(driver-pinning|fabricmanager)-595 ' | grep -E -- '-(595|580)(-open)? |-13-0 | 580\.')"
  check_eq "the open kernel module 595.91.07 is loaded" "595.91.07 open" \
    "$(sim_run sh -c 'cat /sys/module/nvidia/version; grep -q "Open Kernel Module" /proc/driver/nvidia/version && echo open' | tr '\n' ' ' | sed 's/ $//')"
  check_eq "nvidia-smi sees 8 B200" 8 "$(sim_run nvidia-smi -L | grep -c 'NVIDIA B200')"
  check_eq "doctor's driver.version-lock: the locking package locks R595" \
    "ok NVIDIA's version-locking package nvidia-driver-pinning-595 locks branch R595" "$(python3 - "$SIM_DIR/doctor.out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
out = []
for l in d["layers"]:
    if l["name"] == "driver":
        for f in l.get("findings", []):
            if f.get("code") == "driver.version-lock":
                out.append(f["status"] + " " + f["message"].split(" (")[0].split(":")[0])
print(";".join(out))
PY
)"
  check_eq "doctor's stack row: the shipped stack's content" "ok site-$1 (the content of $1)" \
    "$(python3 -c 'import json,sys
l = [l for l in json.load(open(sys.argv[1]))["layers"] if l["name"] == "stack"][0]
print(l["status"], l.get("found", ""))' "$SIM_DIR/doctor.out")"
  check_eq "doctor fails on the layers left out alone: ${2:-none}" "$2" "$(python3 -c 'import json,sys
print(" ".join(sorted({l["name"] for l in json.load(open(sys.argv[1]))["layers"] for f in l.get("findings", []) if f["status"] == "fail"})))' "$SIM_DIR/doctor.out")"
}

STACK=blackwell-r595.91.07-cuda13.2.2-nvlsm
export SIM_GPU=B200 SIM_HGX=1
# The container half: the distribution's docker.io installed by gpuprep, NGC PyTorch 25.12 (torch counts the GPUs).
export SIM_DOCKER=install SIM_IMAGE=nvcr.io/nvidia/pytorch:25.12-py3 SIM_IMAGE_TORCH=torch
sim_stack_scenario "$STACK" "a bare HGX B200 server (8 GPUs)" "stack gpu driver fabricmanager cuda cudnn nccl docker container_toolkit image" \
  "$DRIVER" \
  "Fabric Manager at the driver's version, NVLSM at the R595 stack's own 2025.10.12 (not the newer 2025.99.1)|nvidia-fabricmanager-595 595.91.07-1|nvlsm 2025.10.12-1" \
  "$CUDA" "$LIBS" "the container toolkit at 1.20.0 (not 1.20.1)|nvidia-container-toolkit 1.20.0-1"
# shellcheck disable=SC2016  # dpkg-query's format, not the shell's
check_eq "apt-get upgrade left NVLSM at the stack's version" "nvlsm 2025.10.12-1" \
  "$(sim_inspect dpkg-query -W -f '${Package} ${Version}' nvlsm)"

sim_section "R595 as NVIDIA publishes it from R590 on, and the open modules"
check "manifest list also lists the stack it is built on" grep -qw -- blackwell-r595.91.07-cuda13.2.2 "$SIM_DIR/list.out"
check_r595_shape "$STACK" ""

sim_section "the NVLink fabric of the HGX B200 baseboard"
sim_check_hgx_fabric 2025.10.12-1
check_eq "apt's candidate for nvlsm is the pinned release (2025.99.1 is newer)" "2025.10.12-1" \
  "$(sim_inspect apt-cache policy nvlsm | awk '/^  Candidate:/ {print $2}')"
check_eq "Fabric Manager pinned at the driver's version and held" "nvidia-fabricmanager-595 595.91.07-1 held" \
  "$(sim_pins | awk '$1 == "nvidia-fabricmanager-595" {printf "%s %s", $1, $2}')$(sim_holds | grep -qx nvidia-fabricmanager-595 && echo ' held')"
check "verify read the fabric state from NVML" grep -q "NVLink fabric completed on 8 GPU(s)" \
  "$SIM_DIR/${STACK%%-*}-verify.out" "$SIM_DIR/${STACK%%-*}-verify.err"

# blackwell-r595.91.07-cuda13.2.2, the stack the first is built on, on a B200 server without NVLink switches.
STACK=blackwell-r595.91.07-cuda13.2.2
# No fabric: neither NVSwitches nor an HGX baseboard. Its apt layers alone: its container half (Docker setup,
# toolkit, image) is also the first stack's, which is built on it and changes none of it, and ran above.
export SIM_HGX=0 SIM_NVSWITCH=0 SIM_STACK_APT_ONLY=1
sim_stack_scenario "$STACK" "a bare B200 server (8 GPUs, no NVLink switches)" "stack gpu driver cuda cudnn nccl" \
  "$DRIVER" "$CUDA" "$LIBS"
# Doctor checks every GPU server for a running Docker engine and the toolkit (this machine's docker CLI shows
# through the overlay); the image layer does not fail without an engine.
check_r595_shape "$STACK" "container_toolkit docker"
# shellcheck disable=SC2016  # dpkg-query's format and awk's program, not the shell's
check_eq "neither Fabric Manager nor NVLSM nor the umad library installed" "" \
  "$(sim_inspect dpkg-query -W -f '${db:Status-Status} ${Package}\n' 2>/dev/null | awk '$1 == "installed" && $2 ~ /^(nvidia-fabricmanager|nvlsm|libibumad)/')"

echo "sim_stacks_blackwell_r595: scenarios took $(($(_sim_ms) - t_start)) ms"
sim_finish sim_stacks_blackwell_r595
