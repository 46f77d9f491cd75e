#!/usr/bin/env bash
# ctest-labels: sim
# shellcheck disable=SC2034  # SIM_RC is set here and read by check_rc (tests/sim/lib.sh)
# gpuprep on the simulated GPU server (tests/sim) when things get in the way: apply killed with SIGKILL in
# the middle of the install (a power cut while the driver's DKMS postinst runs) -> the rerun repairs dpkg and
# converges, through `--reboot` and the resume unit; the dpkg lock held by unattended-upgrades for a few
# seconds -> apply says it waits, waits, and goes on.
# Usage: bash sim_interrupt.sh <gpuprep-binary> <source-dir> <build-dir>
set -uo pipefail
GPUPREP=$1
SRC=$2
source "$SRC/tests/sim/lib.sh"
sim_require
sim_init "$GPUPREP" "$SRC" "${3:-}"
t_start=$(_sim_ms)
M=(--manifest /sim/stack.yaml)

sim_section "SIGKILL in the middle of the install"
sim_new_host
touch "$SIM_HOST/sim/control/slow-postinst"
sim_run_bg /sim/bin/gpuprep "${M[@]}" apply --yes
if sim_wait_file "$SIM_HOST/sim/control/postinst-running" 120; then
  sim_kill
  echo "sim: power cut while nvidia-dkms-535's postinst ran" >&2
  rm -f "$SIM_HOST/sim/control/slow-postinst"
  check_eq "dpkg was left half-configured" "half-configured" \
    "$(sim_run dpkg-query -W -f '${db:Status-Status}' nvidia-dkms-535)"
  sim_gp rerun "${M[@]}" apply --yes --reboot
  check_rc "the rerun converges up to the reboot" 3 rerun
  check "it repaired dpkg first (journal step dpkg.repair)" sim_run grep -q '"dpkg.repair"' /var/lib/gpuprep/journal.json
  check_eq "every package configured" "" \
    "$(sim_run dpkg-query -W -f '${db:Status-Status} ${Package}\n' | grep -v '^installed ' | grep -v '^not-installed ')"
  check "--reboot asked systemd to reboot (recorded, not done)" grep -qx 'systemctl reboot' "$SIM_HOST/sim/log/commands.log"
  sim_reboot
  rc=$?
  check_eq "the resume unit converges after the reboot" 0 "$rc"
  sim_gp verify "${M[@]}" verify
  check_rc "verify" 0 verify
else
  check "nvidia-dkms-535's postinst started under apply" false
  sim_kill
fi

sim_section "the dpkg lock held by unattended-upgrades"
sim_new_host
t=$(_sim_ms)
SIM_RC=0
# Held for 15 s: apply reads the repositories' index into its own directories first (two apt-get updates that
# need no lock), and on a loaded machine that took more than 6 s, so the lock was gone before apply asked.
sim_run_locked 15 /sim/bin/gpuprep "${M[@]}" apply --yes >"$SIM_DIR/locked.out" 2>"$SIM_DIR/locked.err" || SIM_RC=$?
took=$(($(_sim_ms) - t))
check_rc "apply waits for the lock, then installs up to the reboot" 3 locked
check "it says what it waits for" grep -Eq '^gpuprep: waiting for the apt lock held by unattended-upgr \(pid [0-9]+\), up to 600 s$' "$SIM_DIR/locked.err"
check "it waited for the holder (${took} ms >= 15000 ms)" test "$took" -ge 15000
check_eq "the driver got installed after all" "installed" "$(sim_run dpkg-query -W -f '${db:Status-Status}' cuda-drivers)"

sim_section "the lock held longer than --lock-timeout: a clean failure"
sim_new_host
SIM_RC=0
sim_run_locked 30 /sim/bin/gpuprep "${M[@]}" apply --yes --only nccl --lock-timeout 2 >"$SIM_DIR/locktimeout.out" 2>"$SIM_DIR/locktimeout.err" || SIM_RC=$?
check_rc "apply gives up" 1 locktimeout
check "it said it was waiting" grep -q 'waiting for the apt lock held by unattended-upgr' "$SIM_DIR/locktimeout.err"
check_eq "nothing installed" "" "$(sim_run dpkg-query -W -f '${db:Status-Status} ${Package}\n' 2>/dev/null | grep -E '^(installed|half|unpacked).*nccl')"
check "dpkg is not left interrupted" sim_run sh -c '[ -z "$(ls -A /var/lib/dpkg/updates)" ]'

sim_section "an old conflicting list for the same repository (Signed-By conflict) is moved aside"
sim_new_host
sim_run sh -c "mkdir -p /etc/apt/sources.list.d && echo 'deb [signed-by=/usr/share/keyrings/old-cuda.gpg] https://127.0.0.1:$SIM_PORT/cuda/ /' >/etc/apt/sources.list.d/old-cuda.list"
sim_gp conflict "${M[@]}" apply --yes --only nccl
check_rc "apply --only nccl converges" 0 conflict
check "the old list is kept as a backup apt ignores" sim_run test -f /etc/apt/sources.list.d/old-cuda.list.gpuprep.bak
check "and gone from apt's view" sim_run test ! -e /etc/apt/sources.list.d/old-cuda.list
check "apt-get update works afterwards" sim_run apt-get -qq update
check_eq "NCCL installed at the pin" "2.18.5-1+cuda12.2" "$(sim_run dpkg-query -W -f '${Version}' libnccl2)"

echo "sim_interrupt: scenarios took $(($(_sim_ms) - t_start)) ms"
sim_finish sim_interrupt
