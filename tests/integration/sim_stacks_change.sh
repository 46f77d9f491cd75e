#!/usr/bin/env bash
# ctest-labels: sim
# shellcheck disable=SC2034  # SIM_RC is set here and read by check_rc (tests/sim/lib.sh)
# Embedded stacks on the simulated server (tests/sim/stacks.sh), when the repository and the host move:
# - a site file pinning a driver point release NVIDIA pruned (580.82.07) -> apply refuses before any change,
#   with one line naming the package, the version wanted and the nearest versions the repository has;
# - a host converged to the legacy ubuntu22.04-r535-cuda12.2, then applied hopper-r580-cuda13.0 -> gpuprep
#   releases its own pins and holds, swaps the driver branch, converges and pins the new stack;
# - that host keeps hopper-r580-cuda13.0 although a newer stack (hopper-r580.173.02-cuda13.0.3) is embedded and is
#   the default for a new host: without --manifest, doctor warns stack.newer-available with the commands to move,
#   plan and apply change nothing; `plan --manifest NEW` lists what the move changes and the reboot;
#   `apply --manifest NEW` moves it with one reboot, ends verified, and the host's stack is NEW from then on;
# - /etc/gpuprep/site.yaml with that content is used before the record; one with other pins stops apply (exit 2).
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

sim_section "a newer stack is embedded: the host keeps its stack (doctor warns; plan and apply change nothing)"
NEW=hopper-r580.173.02-cuda13.0.3
NEWSITE=$(sim_site_file "$NEW")
sim_snapshot kept
apt0=$(sim_count apt-get)
cmd0=$(sim_count commands)
check_eq "status.json: converged to the site file of hopper-r580-cuda13.0, with its content hash" \
  "site-hopper-r580-cuda13.0 $HOPPER $(sim_gp_hash hopper-r580-cuda13.0)" \
  "$(sim_inspect cat /var/lib/gpuprep/status.json | python3 -c 'import json,sys; c=json.load(sys.stdin)["converged"]; print(c["stack"], c["manifest"], c["content_hash"])')"
sim_gp kept-doctor doctor --json
check_rc "doctor without --manifest: warnings only" 0 kept-doctor
check "it uses the host's stack and says so" grep -q "using stack site-hopper-r580-cuda13.0: the stack this host converged to" "$SIM_DIR/kept-doctor.err"
check_eq "the stack row: stack.newer-available (warn) naming $NEW, the fix moves with --manifest $NEW" \
  "warn stack.newer-available $NEW yes" \
  "$(python3 -c 'import json,sys
d = json.load(open(sys.argv[1])); l = [x for x in d["layers"] if x["name"] == "stack"][0]
f = [x for x in l["findings"] if x["status"] == "warn"][0]
print(l["status"], f["code"], l["wanted"], "yes" if "apply --manifest " + sys.argv[2] + " --yes" in f["fix"] else "no")' "$SIM_DIR/kept-doctor.out" "$NEW")"
sim_doctor_clean "$HOPPER" gpu driver cuda cudnn nccl container_toolkit
sim_gp kept-plan plan
check_rc "plan without --manifest" 0 kept-plan
check "plan: nothing to do (the host's stack, not the newer default)" grep -qx 'nothing to do' "$SIM_DIR/kept-plan.out"
sim_gp kept-apply apply --yes
check_rc "apply --yes without --manifest (a cron job, a resume unit)" 0 kept-apply
check_eq "it finds nothing to do" "nothing to do: the host matches stack site-hopper-r580-cuda13.0" "$(sim_out kept-apply)"
check_eq "no apt-get call, no recorded command" "$apt0 $cmd0" "$(sim_count apt-get) $(sim_count commands)"
check_eq "no file changed outside gpuprep's log, journal and status" "" "$(sim_diff kept)"

sim_section "apply --manifest NEW moves it: plan shows the changes and the reboot; one reboot; verified"
sim_gp move-plan --manifest "$NEWSITE" plan
check_rc "plan --manifest NEW" 0 move-plan
check "it names the move from the host's stack" grep -q "^moving this host from stack site-hopper-r580-cuda13.0 (the stack it runs) to site-$NEW:" "$SIM_DIR/move-plan.out"
for change in "driver.version: 580.95.05 -> 580.173.02" "cuda.version: 13.0.2 -> 13.0.3" "cudnn.version: 9.12.0.46 -> 9.25.1.1" \
  "nccl.version: 2.27.7 -> 2.28.9" "container_toolkit.version: 1.19.1 -> 1.20.0"; do
  check "  $change" grep -qF "  $change" "$SIM_DIR/move-plan.out"
done
check "and that it reboots" grep -q "^reboot: the new driver loads only after a reboot" "$SIM_DIR/move-plan.out"
: >"$SIM_HOST/sim/log/apt-get.log"
sim_gp move --manifest "$NEWSITE" apply --yes
check_rc "apply --manifest NEW stops for the reboot" 3 move
check_eq "one apt-get install transaction" 1 "$(sim_log apt-get | grep -c ' install ')"
sim_gp moving-plan plan
check_eq "until it converges, plan without --manifest plans the stack it moves to (a move is finished, not undone)" \
  "stack site-$NEW" "$(head -n 1 "$SIM_DIR/moving-plan.out")"
rc=0
sim_reboot || rc=$?
check_eq "the resume unit converges after one reboot" 0 "$rc"
check "nothing asks for another reboot" sim_run test ! -e /var/run/reboot-required
sim_gp move-verify verify
check_rc "verify without --manifest: the host's stack is now NEW" 0 move-verify
check "  and it says so" grep -q "using stack site-$NEW: the stack this host converged to" "$SIM_DIR/move-verify.err"
N=580.173.02-1ubuntu1
sim_check_versions "the new stack's pins" \
  "nvidia-driver-580-open $N" "nvidia-dkms-580-open $N" "libnvidia-compute-580 $N" "nvidia-utils-580 $N" \
  "cuda-toolkit-13-0 13.0.3-1" "libcudnn9-cuda-13 9.25.1.1-1" \
  "libnccl2 2.28.9-1+cuda13.0" "nvidia-container-toolkit 1.20.0-1"
check_eq "the new open module is loaded" "580.173.02" "$(sim_run cat /sys/module/nvidia/version)"
check_eq "status.json: converged to NEW" "done site-$NEW $NEWSITE" \
  "$(sim_inspect cat /var/lib/gpuprep/status.json | python3 -c 'import json,sys; d=json.load(sys.stdin); c=d["converged"]; print(d["state"], c["stack"], c["manifest"])')"
sim_check_pinned_and_held "after the move" "$LEFT"
sim_gp moved-doctor doctor --json
check_rc "doctor without --manifest" 0 moved-doctor
check_eq "the stack row: ok, the stack gpuprep picks for a new host like this one" "ok $NEW" \
  "$(python3 -c 'import json,sys; l=[x for x in json.load(open(sys.argv[1]))["layers"] if x["name"] == "stack"][0]; print(l["status"], l["wanted"])' "$SIM_DIR/moved-doctor.out")"

sim_section "the site file /etc/gpuprep/site.yaml: used before the recorded stack; other pins move nothing"
sim_run sh -c 'mkdir -p /etc/gpuprep && cp "$1" /etc/gpuprep/site.yaml' sh "$NEWSITE"
sim_gp site-plan plan
check_rc "plan with a site file that has the content of the host's stack" 0 site-plan
check "  it uses the site file and says so" grep -qF "using stack site-$NEW: the site file /etc/gpuprep/site.yaml, with the content of the stack this host converged to" "$SIM_DIR/site-plan.err"
check "  nothing to do" grep -qx 'nothing to do' "$SIM_DIR/site-plan.out"
sim_run cp "$HOPPER" /etc/gpuprep/site.yaml
sim_snapshot site
apt0=$(sim_count apt-get)
sim_gp site-apply apply --yes
check_rc "apply --yes with a site file naming other pins (a config-management run): refused" 2 site-apply
check "  with the commands to move" grep -qF 'review the change with `gpuprep plan --manifest /etc/gpuprep/site.yaml`, make it with `sudo gpuprep apply --manifest /etc/gpuprep/site.yaml --yes`' "$SIM_DIR/site-apply.err"
check_eq "  no apt-get call, no file changed" "$apt0" "$(sim_count apt-get)$(sim_diff site)"
sim_run rm /etc/gpuprep/site.yaml

echo "sim_stacks_change: scenarios took $(($(_sim_ms) - t_start)) ms"
sim_finish sim_stacks_change
