#!/usr/bin/env bash
# Self-test of the simulated GPU server (tests/sim), without gpuprep: the signed loopback repository, the
# overlay host, the stub packages' contents, the fake sysfs and /proc/driver, the recording stand-ins and
# the simulated reboot, driven with apt-get and dpkg directly. If this fails, the gpuprep scenarios
# (sim_install.sh, sim_interrupt.sh, sim_badrepo.sh) cannot be trusted.
# Usage: bash sim_harness.sh <gpuprep-binary> <source-dir> <build-dir>
set -uo pipefail
GPUPREP=$1
SRC=$2
source "$SRC/tests/sim/lib.sh"
sim_require
sim_init "$GPUPREP" "$SRC" "${3:-}"
t_start=$(date +%s%3N)

sim_section "bare server"
sim_new_host
sim_snapshot bare
check_eq "os-release says Ubuntu 22.04" "ubuntu 22.04" "$(sim_run sh -c '. /etc/os-release; echo "$ID $VERSION_ID"')"
check_eq "8 NVIDIA GPUs bound to nouveau" 8 "$(sim_run sh -c 'readlink /sys/bus/pci/devices/*/driver' | grep -c '/nouveau$')"
check "nouveau is loaded" sim_run test -d /sys/module/nouveau
check "no nvidia module" sim_run test ! -e /proc/driver/nvidia/version
check "no apt sources left from this Debian machine" sim_run sh -c '! ls /etc/apt/sources.list.d/* /etc/apt/sources.list 2>/dev/null'
check "this machine's CUDA is hidden" sim_run sh -c '! ls -d /usr/local/cuda* 2>/dev/null && ! ldconfig -p | grep -q libcudart'
out=$(sim_run nvidia-smi 2>&1)
check_eq "no nvidia-smi yet" "" "$(sim_run sh -c 'command -v nvidia-smi')"
check "systemctl is the recording stand-in" sim_run grep -q 'Stand-in systemctl' /usr/bin/systemctl
sim_run systemctl reboot
sim_run reboot -f
check_eq "reboot calls are recorded, not made" $'systemctl reboot\nreboot -f' "$(sim_log commands)"

sim_section "signed repository, apt-get install inside"
URL=$SIM_SCHEME://127.0.0.1:$SIM_PORT
sim_run sh -c "/usr/lib/apt/apt-helper -qq download-file $URL/sim-archive-keyring.gpg /tmp/k.gpg && install -m 0644 /tmp/k.gpg /usr/share/keyrings/cuda-archive-keyring.gpg && rm /tmp/k.gpg &&
  echo 'deb [signed-by=/usr/share/keyrings/cuda-archive-keyring.gpg] $URL/repo/ /' >/etc/apt/sources.list.d/cuda.list"
check "apt-get update against the signed repository" sim_run apt-get -q update
PKGS=(cuda-drivers=535.129.03-1 nvidia-fabricmanager-535=535.129.03-1 cuda-toolkit-12-2=12.2.2-1
  libcudnn8=8.9.7.29-1+cuda12.2 libnccl2=2.18.5-1+cuda12.2 libnccl-dev=2.18.5-1+cuda12.2)
check "apt-get install of the stack's pins" sim_run env DEBIAN_FRONTEND=noninteractive apt-get -y -q install "${PKGS[@]}"
check_eq "apt-get calls are counted" 2 "$(sim_count apt-get)"
check_eq "driver packages installed at the pinned versions" \
  "cuda-drivers 535.129.03-1 libcudnn8 8.9.7.29-1+cuda12.2 libnccl2 2.18.5-1+cuda12.2 nvidia-driver-535 535.129.03-0ubuntu1" \
  "$(sim_run dpkg-query -W -f '${Package} ${Version}\n' cuda-drivers nvidia-driver-535 libcudnn8 libnccl2 | sort | tr '\n' ' ' | sed 's/ $//')"
check "the driver's postinst asked for a reboot" test -e "$SIM_HOST/run/reboot-required"
check_eq "the DKMS build was recorded" "dkms install -m nvidia -v 535.129.03" "$(sim_log commands | grep '^dkms install')"
out=$(sim_run nvidia-smi 2>&1)
check_eq "before the reboot nvidia-smi cannot reach the driver (exit 9)" \
  "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running." \
  "$(echo "$out" | head -n 1)"

sim_section "simulated reboot without blacklisting nouveau"
sim_reboot --no-resume
check "reboot-required is gone (/run emptied)" test ! -e "$SIM_HOST/run/reboot-required"
check "nouveau still holds the GPUs, nvidia not loaded" sim_run sh -c 'test -d /sys/module/nouveau && test ! -e /sys/module/nvidia/version'

sim_section "blacklist nouveau, reboot"
sim_run sh -c 'printf "blacklist nouveau\noptions nouveau modeset=0\n" >/etc/modprobe.d/blacklist-nouveau.conf'
sim_reboot --no-resume
check_eq "module version after reboot" 535.129.03 "$(sim_run cat /sys/module/nvidia/version)"
check_eq "/proc/driver/nvidia/version in the NVRM format" \
  "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023" \
  "$(sim_run head -n 1 /proc/driver/nvidia/version)"
check_eq "nvidia-smi --query-gpu csv,noheader" "0, NVIDIA H100 80GB HBM3, 535.129.03, 00000000:18:00.0" \
  "$(sim_run nvidia-smi --query-gpu=index,name,driver_version,pci.bus_id --format=csv,noheader | head -n 1)"
check_eq "nvidia-smi counts 8 GPUs" 8 "$(sim_run nvidia-smi -L | grep -c '^GPU ')"

sim_section "stand-in libraries through dlopen (python ctypes inside)"
PY='import ctypes,sys
n=ctypes.CDLL("libnvidia-ml.so.1"); c=ctypes.CDLL("libcuda.so.1")
n.nvmlErrorString.restype=ctypes.c_char_p
r=n.nvmlInit_v2(); cnt=ctypes.c_uint(0); n.nvmlDeviceGetCount_v2(ctypes.byref(cnt))
v=ctypes.create_string_buffer(80); n.nvmlSystemGetDriverVersion(v,80)
ci=c.cuInit(0); dc=ctypes.c_int(0); c.cuDeviceGetCount(ctypes.byref(dc)); dv=ctypes.c_int(0); c.cuDriverGetVersion(ctypes.byref(dv))
cudnn=ctypes.CDLL("libcudnn.so.8").cudnnGetVersion(); nc=ctypes.c_int(0); ctypes.CDLL("libnccl.so.2").ncclGetVersion(ctypes.byref(nc))
print(r, n.nvmlErrorString(r).decode(), cnt.value, v.value.decode(), ci, dc.value, dv.value, cudnn, nc.value)'
check_eq "NVML, CUDA, cuDNN, NCCL answers" "0 Success 8 535.129.03 0 8 12020 8907 21805" "$(sim_run python3 -c "$PY")"

sim_section "module/library mismatch (an older module still loaded)"
sim_run sh -c 'echo 535.104.05 >/sys/module/nvidia/version; sed -i "s/535.129.03/535.104.05/" /proc/driver/nvidia/version'
check_eq "NVML_ERROR_LIB_RM_VERSION_MISMATCH and cuInit 803" "18 RM has detected an NVML/RM version mismatch. 0 80 803 0 12020 8907 21805" \
  "$(sim_run python3 -c "${PY/v.value.decode()/len(v.value)+80}")"
check_eq "nvidia-smi reports the mismatch" $'Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 535.129' \
  "$(sim_run nvidia-smi)"
sim_run nvidia-smi >/dev/null
check_eq "nvidia-smi exits 18 on a mismatch" 18 "$?"

sim_section "systemctl stand-in keeps unit state like systemd on disk"
sim_run systemctl enable nvidia-persistenced.service 2>/dev/null
check "enable creates the wants link" sim_run test -L /etc/systemd/system/multi-user.target.wants/nvidia-persistenced.service
check_eq "is-enabled" enabled "$(sim_run systemctl is-enabled nvidia-persistenced.service)"
check_eq "inactive until boot" inactive "$(sim_run systemctl is-active nvidia-persistenced.service)"
sim_reboot --no-resume
check_eq "active after boot" active "$(sim_run systemctl is-active nvidia-persistenced.service)"

sim_section "upper layer diff sees the install"
check "the install changed the host" test -n "$(sim_diff bare | grep libnvidia-ml.so.535.129.03)"

sim_section "power cut during a slow postinst, then dpkg --configure -a"
sim_new_host
sim_run sh -c "/usr/lib/apt/apt-helper -qq download-file $URL/sim-archive-keyring.gpg /tmp/k.gpg && install -m 0644 /tmp/k.gpg /usr/share/keyrings/cuda-archive-keyring.gpg && rm /tmp/k.gpg &&
  echo 'deb [signed-by=/usr/share/keyrings/cuda-archive-keyring.gpg] $URL/repo/ /' >/etc/apt/sources.list.d/cuda.list && apt-get -qq update"
touch "$SIM_HOST/sim/control/slow-postinst"
sim_run_bg env DEBIAN_FRONTEND=noninteractive apt-get -y -q install "${PKGS[@]}"
if sim_wait_file "$SIM_HOST/sim/control/postinst-running" 60; then
  sim_kill
  rm -f "$SIM_HOST/sim/control/slow-postinst"
  check_eq "dpkg left nvidia-dkms-535 half-configured" "half-configured" \
    "$(sim_run dpkg-query -W -f '${db:Status-Status}' nvidia-dkms-535)"
  check "dpkg --configure -a repairs it" sim_run env DEBIAN_FRONTEND=noninteractive dpkg --configure -a
  check_eq "then installed" "installed" "$(sim_run dpkg-query -W -f '${db:Status-Status}' nvidia-dkms-535)"
else
  check "the slow postinst started" false
  sim_kill
fi

sim_section "the dpkg lock held by unattended-upgrades"
sim_run_locked_log() { sim_run_locked "$@" >"$SIM_DIR/lockwait.log" 2>&1; }
t=$(date +%s%3N)
check "apt-get waits for the lock (DPkg::Lock::Timeout)" sim_run_locked_log 3 env DEBIAN_FRONTEND=noninteractive apt-get -y -q -o DPkg::Lock::Timeout=30 install --reinstall libnccl-dev=2.18.5-1+cuda12.2
waited=$(($(date +%s%3N) - t))
check "it waited (${waited} ms >= 3000 ms)" test "$waited" -ge 3000
check "and says so" grep -q "Waiting for cache lock" "$SIM_DIR/lockwait.log"

echo "sim_harness: scenarios took $(($(date +%s%3N) - t_start)) ms"
sim_finish sim_harness
