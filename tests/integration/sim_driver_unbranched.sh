#!/usr/bin/env bash
# ctest-labels: sim
# shellcheck disable=SC2034  # SIM_RC is set here and read by check_rc (tests/sim/lib.sh)
# NVIDIA's driver packages from R590 on, on one simulated H100 server (tests/sim/README.md: the cuda
# repository's R595 releases 595.45.04, 595.71.05, 595.91.07 and the newer test value 595.99.01 without the
# branch in the package names, each with the branch's version-locking package nvidia-driver-pinning-595). Test
# stacks (driver only) first, then the shipped R595 stack:
# - R595 at 595.71.05 (the stack writes nvidia-open-595, the repository publishes nvidia-open, which depends on
#   nvidia-driver-open with no version; 595.99.01 is the newest release apt would take): plan, apply -> reboot
#   -> resume -> verify; every driver package and the locking package at 595.71.05, pinned and held; doctor
#   clean on gpu and driver (only the docker layer fails: no engine), driver.version-lock ok for R595;
# - `apt-get upgrade` and `apt-get install cuda-drivers` move no NVIDIA package, with the locking package and
#   after `dpkg -r` of it (gpuprep's pins and holds alone); doctor then says none is installed; apply puts it
#   back without a reboot;
# - a switch to an R580 test stack (580.173.02, open): the R595 packages swapped for the branch-suffixed ones,
#   the locking package removed in the same transaction, its pin and hold released; doctor as above;
# - forward to the shipped stack hopper-r595.91.07-cuda13.2.2 itself, through a site file that overrides only
#   its repositories' addresses and keys (tests/sim/stacks.sh), its apt layers (driver, CUDA, cuDNN, NCCL; the
#   container half is sim_stacks_hopper's): apply -> reboot -> resume -> verify; every package at the stack's
#   pins (595.91.07, not 595.99.01; CUDA 13.2.2; NCCL's +cuda13.2 build, not the newer +cuda13.3 one), the
#   locking package at 595.91.07, pinned and held; doctor clean on gpu, driver, cuda, cudnn and nccl, its stack
#   row naming the shipped stack; after `apt-get remove` of the locking package, upgrade moves nothing.
# Usage: bash sim_driver_unbranched.sh <gpuprep-binary> <source-dir> <build-dir>
set -uo pipefail
GPUPREP=$1
SRC=$2
source "$SRC/tests/sim/lib.sh"
source "$SRC/tests/sim/stacks.sh"
sim_require
sim_init "$GPUPREP" "$SRC" "${3:-}"
t_start=$(_sim_ms)
export SIM_GPU=H100 SIM_NVSWITCH=0

# _test_stack NAME BRANCH VERSION PACKAGE: a driver-only test stack (the cuda repository of the simulated
# server, its key pinned) written to common/NAME.yaml; prints its path inside the host.
_test_stack() {
  cat >"$SIM_DIR/common/$1.yaml" <<EOF
# Test stack of the simulated GPU server: driver $3 (open modules) only, from its local repository.
apiVersion: gpuprep/v1
kind: Stack
metadata:
  name: $1
  description: "simulated server: driver $3 (R$2, open modules) from a local repository"
os:
  - {id: ubuntu, version_id: "22.04"}
architectures: [hopper]
repositories:
  - name: cuda
    url: $SIM_URL/cuda/
    suite: /
    keyring_url: $SIM_URL/cuda.gpg
    keyring_path: /usr/share/keyrings/cuda-archive-keyring.gpg
    key_fingerprint: "$SIM_KEY_FPR"
    list_path: /etc/apt/sources.list.d/cuda-ubuntu2204-x86_64.list
driver:
  branch: $2
  version: $3
  flavour: open
  packages:
    - {name: $4}
cuda: {enabled: false}
cudnn: {enabled: false}
nccl: {enabled: false}
container_toolkit: {enabled: false}
image:
  ref: nvcr.io/nvidia/cuda:13.0.0-base-ubuntu22.04
  cuda: unknown
  cuda_unknown_reason: "a test stack without an image check"
workload:
  profile: general
EOF
  [[ -n $SIM_HOST && -d $SIM_HOST/sim ]] && cp "$SIM_DIR/common/$1.yaml" "$SIM_HOST/sim/"
  echo "/sim/$1.yaml"
}

# _converge NAME MANIFEST: apply -> exit 3 -> simulated reboot -> resume -> verify 0, one install transaction.
# APPLY_SEL and VERIFY_SEL (arrays, empty for the test stacks) select the layers.
APPLY_SEL=()
VERIFY_SEL=()
_converge() {
  local rc=0
  : >"$SIM_HOST/sim/log/apt-get.log"
  sim_gp "$1-apply" --manifest "$2" apply --yes "${APPLY_SEL[@]}"
  check_rc "apply stops for the reboot" 3 "$1-apply"
  check_eq "one apt-get install transaction" 1 "$(sim_log apt-get | grep -c ' install ')"
  sim_reboot || rc=$?
  check_eq "the resume unit converges after the simulated reboot" 0 "$rc"
  sim_gp "$1-verify" --manifest "$2" verify "${VERIFY_SEL[@]}"
  check_rc "verify" 0 "$1-verify"
}

# _doctor NAME MANIFEST WANT_LOCK: doctor --json (kept as NAME.out): no warn or fail on DOCTOR_CLEAN (gpu and
# driver); its only failures are those of the layers DOCTOR_FAILS names (the docker layer's: doctor checks
# every GPU server for a running Docker engine, which these runs do not set up; this machine's docker CLI shows
# through the overlay: docker.engine-down): exit 1 for that alone; its driver.version-lock findings are exactly
# WANT_LOCK ("STATUS MESSAGE-START", several joined by ";"; "" for none).
DOCTOR_CLEAN="gpu driver"
DOCTOR_FAILS="docker"
_doctor() {
  # shellcheck disable=SC2086  # a list of layer names
  sim_doctor_clean "$2" $DOCTOR_CLEAN
  cp "$SIM_DIR/doctor.out" "$SIM_DIR/$1.out"
  check_eq "doctor: exit 1 for the layers $DOCTOR_FAILS alone (warnings: $(python3 -c 'import json,sys
print(" ".join(f.get("code", "") for l in json.load(open(sys.argv[1]))["layers"] for f in l.get("findings", []) if f["status"] == "warn") or "none")' "$SIM_DIR/$1.out"))" \
    "1 $DOCTOR_FAILS" "$SIM_RC $(python3 -c 'import json,sys
print(" ".join(sorted({l["name"] for l in json.load(open(sys.argv[1]))["layers"] for f in l.get("findings", []) if f["status"] == "fail"})))' "$SIM_DIR/$1.out")"
  check_eq "doctor's driver.version-lock: ${3:-(none)}" "$3" "$(python3 - "$SIM_DIR/$1.out" <<'PY'
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
}

# _apt_moves_nothing WHAT ARGV...: ARGV (apt-get inside the host) leaves every NVIDIA package and the
# recorded kernel module as they were (apt may refuse: held packages; its exit code and last line are shown).
# One session: the state before, ARGV, the state after.
# shellcheck disable=SC2016  # expanded inside the simulated server
_apt_moves_nothing() {
  local what=$1 rc
  shift
  sim_run sh -c 'state() {
      dpkg-query -W -f "\${db:Status-Status} \${Package} \${Version}\n" | grep -E " (nvidia-|libnvidia-|cuda-)" | sort
      cat /var/lib/gpuprep-sim/nvidia-module-version
    }
    state >/sim/before
    DEBIAN_FRONTEND=noninteractive "$@" >/sim/apt.out 2>&1
    echo $? >/sim/apt.rc
    state >/sim/after' sh "$@"
  rc=$(cat "$SIM_HOST/sim/apt.rc")
  echo "   ($* -> exit $rc: $(grep -v '^$' "$SIM_HOST/sim/apt.out" | tail -n 1))"
  check "$what: no NVIDIA package installed, removed or moved" cmp -s "$SIM_HOST/sim/before" "$SIM_HOST/sim/after"
}

U=595.71.05-1ubuntu1
R595_SET=("nvidia-open $U" "nvidia-driver-open $U" "nvidia-dkms-open $U" "libnvidia-compute $U" "nvidia-utils $U"
  "nvidia-compute-utils $U" "nvidia-driver-pinning-595 $U")
LOCK_OK="ok NVIDIA's version-locking package nvidia-driver-pinning-595 locks branch R595"
LOCK_NONE="ok no NVIDIA version-locking package is installed"
SHIPPED_DOCTOR_FAILS="container_toolkit docker"   # left out by the shipped stack's run (its image layer does not fail)

sim_section "R595 at 595.71.05 on a bare H100 server (595.91.07 and 595.99.01 are newer in the repository)"
sim_new_host
R595=$(_test_stack test-r595 595 595.71.05 nvidia-open-595)
R580=$(_test_stack test-r580 580 580.173.02 nvidia-driver-580-open)
sim_gp r595-plan --manifest "$R595" plan
check_rc "plan" 0 r595-plan
_converge r595 "$R595"
sim_check_versions "the unsuffixed packages and the locking package at 595.71.05, not 595.91.07" "${R595_SET[@]}"
check_eq "the open module 595.71.05 is loaded" "595.71.05" "$(sim_inspect cat /sys/module/nvidia/version)"
check_eq "no branch-suffixed driver package installed" "" "$(sim_nvidia_installed | grep -v '^nvidia-driver-pinning-' | grep -E -- '-(595|580)(-open)? ')"
sim_check_pinned_and_held "R595"
_doctor r595-doctor "$R595" "$LOCK_OK"

sim_section "apt-get upgrade and apt-get install cuda-drivers, with the locking package"
_apt_moves_nothing "apt-get upgrade -y" apt-get -y -q upgrade
_apt_moves_nothing "apt-get install -y cuda-drivers" apt-get -y -q install cuda-drivers

sim_section "the locking package removed (dpkg -r): gpuprep's pins and holds alone"
sim_run dpkg -r nvidia-driver-pinning-595 >"$SIM_DIR/dpkg-r.out" 2>&1
check_eq "dpkg -r nvidia-driver-pinning-595 exits 0" 0 "$?"
check_eq "it is gone" "" "$(sim_nvidia_installed | grep '^nvidia-driver-pinning')"
_apt_moves_nothing "apt-get upgrade -y" apt-get -y -q upgrade
_apt_moves_nothing "apt-get install -y cuda-drivers" apt-get -y -q install cuda-drivers
sim_gp r595-nolock-verify --manifest "$R595" verify
check_rc "verify (the driver is still at the pin)" 0 r595-nolock-verify
_doctor r595-nolock-doctor "$R595" "$LOCK_NONE"
: >"$SIM_HOST/sim/log/apt-get.log"
sim_gp r595-relock --manifest "$R595" apply --yes
check_rc "apply puts the locking package back, with no reboot (the driver did not change)" 0 r595-relock
sim_check_versions "the locking package back at 595.71.05, the driver unchanged" "${R595_SET[@]}"
check_eq "and held again (the driver's packages stayed held)" "7" \
  "$(sim_holds | grep -cxE 'nvidia-(open|driver-open|dkms-open|utils|compute-utils|driver-pinning-595)|libnvidia-compute')"

sim_section "switch to the R580 test stack (580.173.02): the R595 locking package goes"
_converge r580 "$R580"
D=580.173.02-1ubuntu1
sim_check_versions "the R580 packages at 580.173.02 from NVIDIA's repository" \
  "nvidia-driver-580-open $D" "nvidia-dkms-580-open $D" "libnvidia-compute-580 $D" "nvidia-utils-580 $D" \
  "nvidia-compute-utils-580 $D"
check_eq "the R580 open module is loaded" "580.173.02" "$(sim_inspect cat /sys/module/nvidia/version)"
check_eq "no R595 driver package or locking package left" "" \
  "$(sim_nvidia_installed | grep -E '^(nvidia-(open|driver-open|dkms-open|utils|compute-utils|driver-pinning-595)|libnvidia-compute) ')"
check_eq "nothing of R595 pinned or held" "" "$(sim_pins | grep -E ' 595\.'; sim_holds | grep -E -- '^(nvidia-open|nvidia-driver-open|nvidia-dkms-open|nvidia-utils|nvidia-compute-utils|libnvidia-compute|nvidia-driver-pinning-595)$')"
sim_check_pinned_and_held "R580"
_doctor r580-doctor "$R580" ""
_apt_moves_nothing "R580: apt-get upgrade -y" apt-get -y -q upgrade

sim_section "forward to the shipped stack hopper-r595.91.07-cuda13.2.2 (595.99.01 is newer in the repository)"
SHIPPED=$(sim_site_file hopper-r595.91.07-cuda13.2.2)
# Its apt layers; the container half (Docker engine, toolkit, image) is sim_stacks_hopper's, at the same
# versions (toolkit 1.20.0, NGC PyTorch 25.12).
APPLY_SEL=(--skip docker,container_toolkit,image)
VERIFY_SEL=(--only driver,cuda,cudnn,nccl)
_converge shipped "$SHIPPED"
S=595.91.07-1ubuntu1
sim_check_versions "the stack's pins: the unsuffixed packages and the locking package at 595.91.07 (not 595.99.01), CUDA 13.2.2, cuDNN 9.25.1.1, NCCL 2.29.7 built for CUDA 13.2 (not 2.30.7 for 13.3)" \
  "nvidia-open $S" "nvidia-driver-open $S" "nvidia-dkms-open $S" "libnvidia-compute $S" "nvidia-utils $S" \
  "nvidia-compute-utils $S" "nvidia-driver-pinning-595 $S" "cuda-toolkit-13-2 13.2.2-1" "cuda-cudart-13-2 13.2.86-1" \
  "cuda-nvcc-13-2 13.2.86-1" "libcudnn9-cuda-13 9.25.1.1-1" "libnccl2 2.29.7-1+cuda13.2"
check_eq "the open module 595.91.07 is loaded" "595.91.07" "$(sim_inspect cat /sys/module/nvidia/version)"
check_eq "nothing of R580 pinned or held" "" "$(sim_pins | grep -E ' 580\.'; sim_holds | grep -E -- '-580(-open)?$')"
sim_check_pinned_and_held "the shipped R595 stack"
DOCTOR_CLEAN="gpu driver cuda cudnn nccl"
DOCTOR_FAILS="$SHIPPED_DOCTOR_FAILS"
_doctor shipped-doctor "$SHIPPED" "$LOCK_OK"
check_eq "doctor's stack row: the shipped stack's content, newer than the long-term-support default" \
  "ok stack.chosen site-hopper-r595.91.07-cuda13.2.2 (the content of hopper-r595.91.07-cuda13.2.2)" \
  "$(python3 -c 'import json,sys
l = [l for l in json.load(open(sys.argv[1]))["layers"] if l["name"] == "stack"][0]
print(l["status"], l["findings"][0]["code"], l.get("found", ""))' "$SIM_DIR/shipped-doctor.out")"
sim_run env DEBIAN_FRONTEND=noninteractive apt-get -y -q remove --allow-change-held-packages nvidia-driver-pinning-595 \
  >"$SIM_DIR/apt-remove.out" 2>&1
check_eq "apt-get remove of the (held) locking package exits 0" 0 "$?"
check_eq "it removed only the locking package" "nvidia-driver-pinning-595" \
  "$(grep -oE '^Removing [^ ]+' "$SIM_DIR/apt-remove.out" | cut -d' ' -f2 | tr '\n' ' ' | sed 's/ $//')"
_apt_moves_nothing "apt-get upgrade -y without it" apt-get -y -q upgrade

echo "sim_driver_unbranched: scenarios took $(($(_sim_ms) - t_start)) ms"
sim_finish sim_driver_unbranched
