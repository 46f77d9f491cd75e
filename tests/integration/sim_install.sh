#!/usr/bin/env bash
# ctest-labels: sim
# shellcheck disable=SC2034  # SIM_RC is set here and read by check_rc (tests/sim/lib.sh)
# gpuprep on the simulated GPU server (tests/sim): a manifest error changes nothing (exit 2); a bare
# Ubuntu 22.04 server with 8 H100 on nouveau -> apply -> exit 3 (reboot) -> simulated reboot -> the resume
# unit converges -> verify exit 0; a second apply changes nothing, runs no apt-get and fetches nothing; a
# kernel update afterwards keeps the driver across the next boot or is named by doctor before it.
# Usage: bash sim_install.sh <gpuprep-binary> <source-dir> <build-dir>
set -uo pipefail
GPUPREP=$1
SRC=$2
source "$SRC/tests/sim/lib.sh"
source "$SRC/tests/sim/nextboot.sh"
sim_require
sim_init "$GPUPREP" "$SRC" "${3:-}"
t_start=$(_sim_ms)
M=(--manifest /sim/stack.yaml)

sim_new_host
sim_snapshot bare

sim_section "a manifest error: exit 2 before any change"
sed 's/^driver:/drivr:/' "$SIM_HOST/sim/stack.yaml" >"$SIM_HOST/sim/broken.yaml"
line=$(grep -n '^drivr:' "$SIM_HOST/sim/broken.yaml" | cut -d: -f1)
sim_gp broken --manifest /sim/broken.yaml apply --yes
check_rc "apply with a misspelt key" 2 broken
check_eq "the error names file, line and column" \
  "gpuprep: error: /sim/broken.yaml:$line:1: unknown key \"drivr\" (did you mean \"driver\"?)" "$(sim_err broken | tail -n 1)"
sim_gp noyes "${M[@]}" apply
check_rc "apply without --yes" 2 noyes
check_eq "says why" "gpuprep: error: --yes: required to change the host (review first with: gpuprep plan)" \
  "$(sim_err noyes | tail -n 1)"
check_eq "nothing changed on the host" "" "$(sim_diff bare)"
check_eq "no apt-get ran" 0 "$(sim_count apt-get)"
check_eq "no command was recorded" 0 "$(sim_count commands)"

sim_section "plan on the bare server"
sim_gp plan "${M[@]}" plan --format sh
check_rc "plan --format sh" 0 plan
shebang=$(sim_out plan | head -n 1)
check "the script starts with #!/bin/bash or #!/bin/sh (got: $shebang)" test "$shebang" = "#!/bin/bash" -o "$shebang" = "#!/bin/sh"
PLAN_SHELL=/bin/sh
[[ $shebang == "#!/bin/bash" ]] && PLAN_SHELL=/bin/bash
check "the script stops after apt-get update and prints the command for the rest (exact versions from the index)" \
  grep -q "plan --format sh > gpuprep-plan-2.sh' " "$SIM_DIR/plan.out"
check "$PLAN_SHELL -n accepts the script" "$PLAN_SHELL" -n "$SIM_DIR/plan.out"
check_eq "plan changed nothing" "" "$(sim_diff bare)"

sim_section "apply on the bare server"
http0=$(sim_http_requests)
sim_gp apply1 "${M[@]}" apply --yes
check_rc "first apply stops for the reboot" 3 apply1
check "stdout says why: reboot required: ..." grep -q '^reboot required: ' "$SIM_DIR/apply1.out"
t_apply1=$SIM_MS
check_eq "one apt-get install transaction" 1 "$(sim_log apt-get | grep -c ' install ')"
check "it pins every package of the stack" grep -q 'cuda-drivers=535.129.03-1 .*cuda-toolkit-12-2=12.2.2-1 .*libcudnn8=8.9.7.29-1+cuda12.2 .*libnccl2=2.18.5-1+cuda12.2 .*libnccl-dev=2.18.5-1+cuda12.2' "$SIM_HOST/sim/log/apt-get.log"
check "no fabric manager without NVSwitches" sh -c "! grep -q nvidia-fabricmanager '$SIM_HOST/sim/log/apt-get.log'"
check_eq "driver, CUDA, cuDNN, NCCL installed at the pins" \
  "cuda-drivers 535.129.03-1 cuda-toolkit-12-2 12.2.2-1 libcudnn8 8.9.7.29-1+cuda12.2 libnccl-dev 2.18.5-1+cuda12.2 libnccl2 2.18.5-1+cuda12.2" \
  "$(sim_run dpkg-query -W -f '${Package} ${Version}\n' cuda-drivers cuda-toolkit-12-2 libcudnn8 libnccl2 libnccl-dev | sort | tr '\n' ' ' | sed 's/ $//')"
check_eq "every package of the closure held (metas and components)" \
  "cuda-cudart-12-2 cuda-drivers cuda-drivers-535 cuda-nvcc-12-2 cuda-toolkit-12-2 libcudnn8 libnccl-dev libnccl2 libnvidia-compute-535 nvidia-compute-utils-535 nvidia-dkms-535 nvidia-driver-535 nvidia-utils-535" \
  "$(sim_run apt-mark showhold | sort | tr '\n' ' ' | sed 's/ $//')"
check "nouveau blacklisted" sim_run grep -qx 'blacklist nouveau' /etc/modprobe.d/blacklist-nouveau.conf
check "initramfs updated" grep -qx 'update-initramfs -u' "$SIM_HOST/sim/log/commands.log"
check "the resume unit is installed" sim_run test -f /etc/systemd/system/gpuprep-resume.service
check "and enabled" sim_run test -e /etc/systemd/system/multi-user.target.wants/gpuprep-resume.service
check "no reboot without --reboot" sh -c "! grep -q 'systemctl reboot' '$SIM_HOST/sim/log/commands.log'"
check "journal says reboot-required" sim_run grep -q '"state": *"reboot-required"' /var/lib/gpuprep/journal.json
check "the pinned keyring is where signed-by points" cmp -s "$SIM_DIR/www/cuda.gpg" "$SIM_HOST/upper/usr/share/keyrings/cuda-archive-keyring.gpg"
check "the list uses signed-by" sim_run grep -q "^deb \[signed-by=/usr/share/keyrings/cuda-archive-keyring.gpg\] https://127.0.0.1:$SIM_PORT/cuda/ /" \
  /etc/apt/sources.list.d/cuda-ubuntu2204-x86_64.list
check "verify before the reboot fails" sim_run sh -c '! /sim/bin/gpuprep --manifest /sim/stack.yaml verify >/dev/null 2>&1'

sim_section "simulated reboot -> the resume unit runs"
sim_reboot
rc=$?
check_eq "resume after the reboot converges" 0 "$rc"
check_eq "the nvidia module is loaded" 535.129.03 "$(sim_run cat /sys/module/nvidia/version 2>/dev/null)"
check "journal says done" sim_run grep -q '"state": *"done"' /var/lib/gpuprep/journal.json
check "the resume unit is disabled" sim_run test ! -e /etc/systemd/system/multi-user.target.wants/gpuprep-resume.service
check "and removed" sim_run test ! -e /etc/systemd/system/gpuprep-resume.service
check "persistence daemon enabled" sim_run test -e /etc/systemd/system/multi-user.target.wants/nvidia-persistenced.service
check_eq "still one install transaction in all" 1 "$(sim_log apt-get | grep -c ' install ')"
bytes_install=$(sim_http_bytes)
files_install=$(($(sim_http_requests) - http0))

sim_section "verify"
sim_gp verify "${M[@]}" verify
check_rc "verify on the converged server" 0 verify

sim_section "doctor agrees"
sim_gp doctor "${M[@]}" doctor --json
layers=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(l["name"]+"="+l["status"] for l in d["layers"] if l["name"] in ("gpu","driver","cuda","cudnn","nccl")))' "$SIM_DIR/doctor.out" 2>&1)
check_eq "doctor --json: GPU, driver, CUDA, cuDNN, NCCL ok" "gpu=ok driver=ok cuda=ok cudnn=ok nccl=ok" "$layers"

sim_section "a second apply changes nothing"
sim_snapshot converged
apt0=$(sim_count apt-get)
cmd0=$(sim_count commands)
http1=$(sim_http_requests)
sim_gp apply2 "${M[@]}" apply --yes
check_rc "re-apply" 0 apply2
check_eq "stdout" "nothing to do: the host matches stack sim-stack" "$(sim_out apply2)"
t_apply2=$SIM_MS
check_eq "no apt-get call" "$apt0" "$(sim_count apt-get)"
check_eq "no recorded command (systemctl, initramfs...)" "$cmd0" "$(sim_count commands)"
check_eq "nothing fetched" "$http1" "$(sim_http_requests)"
check_eq "no file changed outside gpuprep's log and journal" "" "$(sim_diff converged)"
sim_gp plan2 "${M[@]}" plan
check_rc "plan on the converged server" 0 plan2
check "says nothing to do" grep -q 'nothing to do' "$SIM_DIR/plan2.out"

sim_section "an older kernel module still loaded (driver/library mismatch): detected, reboot, converged"
sim_run sh -c 'echo 535.104.05 >/sys/module/nvidia/version; sed -i "s/535.129.03/535.104.05/" /proc/driver/nvidia/version'
sim_gp mmverify "${M[@]}" verify
check_rc "verify fails on the mismatch" 1 mmverify
check "and says so" grep -qi 'mismatch' "$SIM_DIR/mmverify.out" "$SIM_DIR/mmverify.err"
apt0=$(sim_count apt-get)
sim_gp mmapply "${M[@]}" apply --yes
check_rc "apply detects that a reboot is needed" 3 mmapply
check_eq "without installing anything" "$apt0" "$(sim_count apt-get)"
sim_reboot
rc=$?
check_eq "after the reboot the resume unit converges" 0 "$rc"
check_eq "the module matches again" 535.129.03 "$(sim_run cat /sys/module/nvidia/version)"

# A kernel update on the converged server (tests/sim/nextboot.sh): without its headers doctor names the
# kernel before the reboot and the reboot into it has no driver; with them DKMS builds its module through
# Debian's kernel hooks and the reboot into it (grub-reboot) loads the driver.
sim_next_boot_scenario /sim/stack.yaml 535.129.03

sim_section "HGX with NVSwitches: the fabric manager at the driver's version"
SIM_NVSWITCH=1 sim_new_host
sim_gp fm1 "${M[@]}" apply --yes
check_rc "apply on the NVSwitch host stops for the reboot" 3 fm1
check "the one transaction includes nvidia-fabricmanager-535=535.129.03-1" \
  grep -q ' install .*nvidia-fabricmanager-535=535\.129\.03-1' "$SIM_HOST/sim/log/apt-get.log"
check_eq "one install transaction" 1 "$(sim_log apt-get | grep -c ' install ')"
check "fabric manager enabled" sim_run test -e /etc/systemd/system/multi-user.target.wants/nvidia-fabricmanager.service
check_eq "and held" nvidia-fabricmanager-535 "$(sim_run apt-mark showhold | grep -x nvidia-fabricmanager-535)"
sim_reboot
rc=$?
check_eq "resume after the reboot converges" 0 "$rc"
check_eq "fabric manager running after the boot" active "$(sim_run systemctl is-active nvidia-fabricmanager.service)"
sim_gp fmverify "${M[@]}" verify
check_rc "verify on the NVSwitch host" 0 fmverify

sim_section "Secure Boot on, unsigned modules: refused with MOK instructions, nothing changed"
SIM_SECURE_BOOT=1 sim_new_host
sim_snapshot sb
sim_gp sb "${M[@]}" apply --yes
check_rc "apply refuses the driver layer" 1 sb
check "it explains MOK enrolment" grep -q 'mokutil' "$SIM_DIR/sb.err" "$SIM_DIR/sb.out"
check_eq "no apt-get install" 0 "$(sim_log apt-get | grep -c ' install ')"
check_eq "nothing recorded (initramfs, systemctl)" "" "$(sim_log commands)"

unsupported_host() {  # unsupported_host NAME ERROR: apply on a host the stack cannot serve changes nothing
  sim_snapshot "$1"
  sim_gp "$1" "${M[@]}" apply --yes
  check_rc "apply refuses" 1 "$1"
  check_eq "the error, word for word" "$2" "$(sim_err "$1" | tail -n 1)"
  check_eq "no apt-get ran" 0 "$(sim_count apt-get)"
  check_eq "nothing recorded (initramfs, systemctl)" "" "$(sim_log commands)"
  check_eq "nothing changed on the host" "" "$(sim_diff "$1")"
}
sim_section "B200 GPUs on the R535 stack (R535 predates Blackwell): refused"
SIM_GPU_ID=0x2901 sim_new_host
unsupported_host blackwell "gpuprep: error: refused before any change: GPU 0000:18:00.0 (B200) is blackwell, which stack sim-stack does not support (volta, turing, ampere, ada, hopper); choose a stack for blackwell GPUs with --manifest"
sim_section "no NVIDIA GPU at all: refused"
SIM_GPUS=0 SIM_NOUVEAU=0 sim_new_host
unsupported_host nogpu "gpuprep: error: refused before any change: no NVIDIA GPU on this host: stack sim-stack sets up a GPU driver (to install only the libraries: --skip driver)"

sim_section "a cloud image's driver (nvidia-driver-535 at the pinned version, loaded) is left alone"
sim_new_host
D=535.129.03-0ubuntu1
URL=$SIM_SCHEME://127.0.0.1:$SIM_PORT
sim_run sh -c "/usr/lib/apt/apt-helper -qq download-file $URL/cuda.gpg /tmp/k.gpg &&
  install -m 0644 /tmp/k.gpg /usr/share/keyrings/cuda-archive-keyring.gpg && rm /tmp/k.gpg &&
  echo 'deb [signed-by=/usr/share/keyrings/cuda-archive-keyring.gpg] $URL/cuda/ /' >/etc/apt/sources.list.d/cuda-ubuntu2204-x86_64.list &&
  apt-get -qq update && DEBIAN_FRONTEND=noninteractive apt-get -y -qq install nvidia-driver-535=$D nvidia-dkms-535=$D libnvidia-compute-535=$D nvidia-utils-535=$D nvidia-compute-utils-535=$D >/dev/null &&
  printf 'blacklist nouveau\noptions nouveau modeset=0\n' >/etc/modprobe.d/blacklist-nouveau.conf" >/dev/null 2>&1
sim_reboot --no-resume
check_eq "the image's driver is loaded" 535.129.03 "$(sim_run cat /sys/module/nvidia/version 2>/dev/null)"
: >"$SIM_HOST/sim/log/apt-get.log"
sim_gp image "${M[@]}" apply --yes
check_rc "apply completes without a reboot" 0 image
check_eq "one install transaction, without NVIDIA's driver packages" \
  "1 0" "$(sim_log apt-get | grep -c ' install ') $(sim_log apt-get | grep ' install ' | grep -c 'cuda-drivers')"
check "the libraries got installed" sim_run sh -c "dpkg-query -W libcudnn8 libnccl2 cuda-toolkit-12-2 >/dev/null"
sim_gp imageverify "${M[@]}" verify
check_rc "verify" 0 imageverify

sim_section "plan --format sh --one-shot, run by an admin on a bare server: reboot, run again, verified"
if command -v curl >/dev/null; then
  sim_new_host
  sim_gp plansh "${M[@]}" plan --format sh --one-shot
  cp "$SIM_DIR/plansh.out" "$SIM_HOST/sim/plan.sh"
  SIM_RC=0
  sim_run "$PLAN_SHELL" /sim/plan.sh >"$SIM_DIR/plansh1.out" 2>"$SIM_DIR/plansh1.err" || SIM_RC=$?
  check_rc "the script stops for the reboot" 3 plansh1
  check_eq "the same one install transaction as apply" 1 "$(sim_log apt-get | grep -c ' install ')"
  sim_reboot --no-resume
  SIM_RC=0
  sim_run "$PLAN_SHELL" /sim/plan.sh >"$SIM_DIR/plansh2.out" 2>"$SIM_DIR/plansh2.err" || SIM_RC=$?
  check_rc "run again after the reboot, it ends verified" 0 plansh2
  sim_gp plansh_apply "${M[@]}" apply --yes
  check_rc "apply then finds nothing to do" 0 plansh_apply
else
  echo "  SKIP (this section): curl is not installed here; the plan's script downloads the key with curl"
fi

sim_section "plan --format sh --skip driver, in two reviewed parts: the driver stays uninstalled"
if command -v curl >/dev/null; then
  sim_new_host
  sim_gp skip1 "${M[@]}" plan --format sh --skip driver
  check_rc "plan --format sh --skip driver" 0 skip1
  check "the script runs no plan made while it runs" sh -c "! grep -q 'exec bash' '$SIM_DIR/skip1.out'"
  cp "$SIM_DIR/skip1.out" "$SIM_HOST/sim/part1.sh"
  SIM_RC=0
  sim_run sh -c 'cd /sim && bash part1.sh' >"$SIM_DIR/part1.out" 2>"$SIM_DIR/part1.err" || SIM_RC=$?
  check_rc "the first part sets up the repositories and stops" 0 part1
  check_eq "it installs nothing" 0 "$(sim_log apt-get | grep -c ' install ')"
  second=$(grep -A1 '^gpuprep: the repositories are set up' "$SIM_DIR/part1.out" | sed -n 2p)  # after apt's lines
  sha=$(sha256sum "$SIM_HOST/sim/stack.yaml" | cut -d' ' -f1)
  check_eq "it prints the command for the second part: the stack pinned by its sha256, --skip driver kept" \
    "  gpuprep --manifest /sim/stack.yaml --manifest-sha256 $sha plan --format sh --skip driver > gpuprep-plan-2.sh" \
    "$second"
  SIM_RC=0
  sim_run sh -c "cd /sim && $second" >"$SIM_DIR/part2make.out" 2>"$SIM_DIR/part2make.err" || SIM_RC=$?
  check_rc "the printed command makes the second part" 0 part2make
  check_eq "the second part installs no driver package" 0 \
    "$(grep '^apt-get' "$SIM_HOST/sim/gpuprep-plan-2.sh" | grep -Ec 'cuda-drivers|nvidia-driver|nvidia-dkms|nvidia-open')"
  SIM_RC=0
  sim_run sh -c 'cd /sim && bash gpuprep-plan-2.sh' >"$SIM_DIR/part2.out" 2>"$SIM_DIR/part2.err" || SIM_RC=$?
  echo "  (the second part exited $SIM_RC)"
  check_eq "one install transaction, without a driver package" "1 0" \
    "$(sim_log apt-get | grep -c ' install ') $(sim_log apt-get | grep ' install ' | grep -Ec 'cuda-drivers|nvidia-driver|nvidia-dkms|nvidia-open')"
  check "the libraries are installed" sim_inspect sh -c "dpkg-query -W libcudnn8 libnccl2 cuda-toolkit-12-2 >/dev/null"
  check_eq "no driver package is installed" "" \
    "$(sim_inspect dpkg-query -W -f '${db:Status-Status} ${Package}\n' 'cuda-drivers*' 'nvidia-driver-*' 'nvidia-dkms-*' 'nvidia-open*' 2>/dev/null | grep '^installed ')"
  # A manifest changed after the plan was made: the second part's command refuses it.
  printf '# changed after the plan was made\n' >>"$SIM_HOST/sim/stack.yaml"
  SIM_RC=0
  sim_run sh -c "cd /sim && $second" >"$SIM_DIR/part2changed.out" 2>"$SIM_DIR/part2changed.err" || SIM_RC=$?
  check_rc "the same command with the manifest changed is refused" 2 part2changed
  check "  saying it changed since the plan was made" grep -q 'it changed since the plan was made' "$SIM_DIR/part2changed.err"
else
  echo "  SKIP (this section): curl is not installed here; the plan's script downloads the key with curl"
fi

echo "sim_install: first apply ${t_apply1} ms, re-apply ${t_apply2} ms (wall time of sim_run, namespace setup included),"
echo "sim_install: the install fetched ${files_install} files, ${bytes_install} bytes; all scenarios $(($(_sim_ms) - t_start)) ms"
sim_finish sim_install
