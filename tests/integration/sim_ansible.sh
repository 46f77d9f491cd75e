#!/usr/bin/env bash
# ctest-labels: package,sim
# packaging/ansible/ for real: Debian's ansible-playbook drives the simulated GPU server (tests/sim) over SSH
# to an sshd listening on a loopback address inside it. The role copies and installs the .deb, runs
# `gpuprep apply --yes` (exit 3: the driver wants a reboot), reboots through Ansible's own reboot module, waits
# for gpuprep-resume.service's verdict in /var/lib/gpuprep/status.json and brings the host's doctor --json
# back; the second play writes the fleet report. The machine's reboot is the sim's: the reboot command asks
# this script, which stops sshd, runs the simulated boot (which runs the resume unit), starts sshd again and
# changes the boot id Ansible watches. A second run changes nothing.
# Usage: bash sim_ansible.sh <gpuprep-binary> <source-dir> <build-dir> [DEB]. Exit 77 without ansible/sshd.
set -uo pipefail
GPUPREP=$1
SRC=$2
DEB=${4:-}
for t in ansible-playbook ssh ssh-keygen help2man dpkg-shlibdeps; do
  command -v "$t" >/dev/null || { echo "SKIP: $t not found (packaging/install-deps.sh installs it)"; exit 77; }
done
[[ -x /usr/sbin/sshd ]] || { echo "SKIP: /usr/sbin/sshd not found (openssh-server)"; exit 77; }
source "$SRC/tests/sim/lib.sh"
sim_require
sim_init "$GPUPREP" "$SRC" "${3:-}"
t_start=$(_sim_ms)
if [[ -z $DEB ]]; then
  DEB=$(bash "$SRC/packaging/build-deb.sh" "$GPUPREP" "$SIM_DIR/deb") || sim_fail "packaging/build-deb.sh"
fi

sim_new_host
h=$SIM_HOST
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
ssh-keygen -q -t ed25519 -N '' -f "$SIM_DIR/id_ed25519" -C ansible-controller
mkdir -p "$h/upper/etc/ssh"
ssh-keygen -q -t ed25519 -N '' -f "$h/upper/etc/ssh/gpuprep_sim_host_key" -C sim-gpu-01
cp "$SIM_DIR/id_ed25519.pub" "$h/upper/etc/ssh/gpuprep_sim_authorized_keys"
cat >"$h/upper/etc/ssh/sshd_config_gpuprep_sim" <<CONF
ListenAddress 127.0.0.1:$PORT
HostKey /etc/ssh/gpuprep_sim_host_key
PermitRootLogin prohibit-password
AuthorizedKeysFile /etc/ssh/gpuprep_sim_authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile none
Subsystem sftp /usr/lib/openssh/sftp-server
CONF
# The reboot Ansible asks for: recorded, then performed by this script (below).
cat >"$h/sim/bin/request-reboot" <<'SH'
#!/bin/sh
echo "reboot (ansible reboot module)" >>/sim/log/commands.log
touch /sim/control/reboot-request
SH
chmod 0755 "$h/sim/bin/request-reboot"
echo boot-1 >"$h/sim/control/boot_id"

SSHD_PID=
start_sshd() {
  mkdir -p "$h/run/sshd" && chmod 0755 "$h/run/sshd"
  nsenter --net="$SIM_NETNS" unshare --mount --pid --fork --kill-child --propagation private -- \
    bash "$SIM_LIB_DIR/enter.sh" "$h" /usr/sbin/sshd -D -e -f /etc/ssh/sshd_config_gpuprep_sim </dev/null >>"$SIM_DIR/sshd.log" 2>&1 &
  SSHD_PID=$!
  local i
  # the simulated server's loopback is its network namespace's (lib.sh), where the controller connects from
  for i in $(seq 100); do nsenter --net="$SIM_NETNS" bash -c "echo >/dev/tcp/127.0.0.1/$PORT" 2>/dev/null && return 0; sleep 0.05; done
  cat "$SIM_DIR/sshd.log" >&2
  sim_fail "sshd did not start on 127.0.0.1:$PORT"
}
stop_sshd() {
  [[ -n $SSHD_PID ]] || return 0
  kill -KILL "$SSHD_PID" 2>/dev/null
  wait "$SSHD_PID" 2>/dev/null
  SSHD_PID=
  _sim_wait_gone "$h"
}
trap 'stop_sshd; sim_cleanup' EXIT
start_sshd

cat >"$SIM_DIR/inventory.ini" <<INV
[gpu_hosts]
sim-gpu-01 ansible_host=127.0.0.1 ansible_port=$PORT ansible_user=root

[gpu_hosts:vars]
ansible_ssh_private_key_file=$SIM_DIR/id_ed25519
ansible_ssh_common_args='-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null'
ansible_python_interpreter=/usr/bin/python3
gpuprep_become=false
gpuprep_manifest=/sim/stack.yaml
gpuprep_reboot_command=/sim/bin/request-reboot
gpuprep_boot_time_command=cat /sim/control/boot_id
gpuprep_reboot_timeout=300
INV
mkdir -p "$SIM_DIR/home" "$SIM_DIR/fleet"
run_playbook() {  # run_playbook LOG: ansible-playbook in the background; performs the reboots it asks for
  HOME=$SIM_DIR/home ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=0 ANSIBLE_HOST_KEY_CHECKING=False \
    ANSIBLE_REMOTE_TMP=/tmp/.ansible-gpuprep ANSIBLE_LOCAL_TEMP=$SIM_DIR/home/.ansible/tmp \
    nsenter --net="$SIM_NETNS" ansible-playbook -i "$SIM_DIR/inventory.ini" "$SRC/packaging/ansible/site.yml" \
    -e "gpuprep_deb=$DEB" -e "gpuprep_snapshot_dir=$SIM_DIR/fleet" -e "gpuprep_controller_binary=$GPUPREP" \
    >"$1" 2>&1 &
  local pid=$! n=1 rc=0
  while kill -0 "$pid" 2>/dev/null; do
    if [[ -e $h/sim/control/reboot-request ]]; then
      rm -f "$h/sim/control/reboot-request"
      stop_sshd
      REBOOT_RC=0
      sim_reboot || REBOOT_RC=$?
      n=$((n + 1))
      echo "boot-$n" >"$h/sim/control/boot_id"
      REBOOTS=$((REBOOTS + 1))
      start_sshd
    fi
    sleep 0.2
  done
  wait "$pid" || rc=$?
  return $rc
}

sim_section "ansible-playbook site.yml against the simulated server"
REBOOTS=0
t0=$(_sim_ms)
rc=0
run_playbook "$SIM_DIR/play1.log" || rc=$?
echo "   (playbook: $(($(_sim_ms) - t0)) ms)"
check_eq "the playbook succeeds" 0 "$rc"
((rc == 0)) || tail -n 40 "$SIM_DIR/play1.log" >&2
check_eq "Ansible's reboot module rebooted the server once" 1 "$REBOOTS"
check_eq "the resume unit ran at that boot and converged" 0 "${REBOOT_RC:-none}"
check "apply itself did not reboot (no --reboot)" sh -c "! grep -q '^systemctl reboot' '$h/sim/log/commands.log'"
check_eq "the package is installed" "install ok installed" "$(sim_run dpkg-query -W -f '${Status}' gpuprep)"
check_eq "status.json: done, exit 0" "done 0" \
  "$(sim_run python3 -c 'import json; d=json.load(open("/var/lib/gpuprep/status.json")); print(d["state"], d["exit_code"])')"
check "the host's doctor snapshot came back" python3 -c "import json; d=json.load(open('$SIM_DIR/fleet/sim-gpu-01.json')); assert d['layers']"
for f in fleet.html fleet.md fleet.txt; do check "the fleet report: $f" test -s "$SIM_DIR/fleet/$f"; done
label=$(python3 -c "import json; h=json.load(open('$SIM_DIR/fleet/sim-gpu-01.json'))['host']; print(h['hostname'] or (h['machine_id'] or '')[:12] or 'sim-gpu-01.json')")
check "the text report has the host's row ($label)" grep -q "^$label " "$SIM_DIR/fleet/fleet.txt"
check "the HTML report has the host's row" grep -q "data-label=\"$label\"" "$SIM_DIR/fleet/fleet.html"

sim_section "a second run changes nothing"
REBOOTS=0
rc=0
run_playbook "$SIM_DIR/play2.log" || rc=$?
check_eq "the playbook succeeds" 0 "$rc"
check_eq "no reboot" 0 "$REBOOTS"
echo "   $(grep -E '^sim-gpu-01 +:' "$SIM_DIR/play2.log")"
# Only the fresh snapshot copied to the controller may change (doctor's disk-free figure moves).
check_eq "nothing changed on the host (no 'changed: [sim-gpu-01]')" "" "$(grep -B3 '^changed: \[sim-gpu-01\]$' "$SIM_DIR/play2.log")"
check_eq "install and apply report ok, not changed" "2" \
  "$(grep -A1 -E 'TASK \[gpuprep : (Install the gpuprep package|gpuprep apply)' "$SIM_DIR/play2.log" | grep -c '^ok: \[sim-gpu-01\]')"
echo "   (sim_ansible: $(($(_sim_ms) - t_start)) ms)"
sim_finish sim_ansible
