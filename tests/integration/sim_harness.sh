#!/usr/bin/env bash
# ctest-labels: sim
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
check_eq "apt sources: only the distribution archive (jammy, jammy-updates), none of this Debian machine's" \
  "deb $SIM_URL/ubuntu/ jammy main|deb $SIM_URL/ubuntu/ jammy-updates main|" \
  "$(sim_run sh -c 'cat /etc/apt/sources.list; ls /etc/apt/sources.list.d/ 2>/dev/null' | tr '\n' '|')"
check_eq "its lists are downloaded: Ubuntu's own R580 build is known before any NVIDIA repository is added" \
  "580.173.02-0ubuntu0.22.04.1" "$(sim_run apt-cache madison nvidia-driver-580 | awk -F' [|] ' '{print $2}' | tr -d ' ' | tr '\n' ' ' | sed 's/ $//')"
check "this machine's CUDA is hidden" sim_run sh -c '! ls -d /usr/local/cuda* 2>/dev/null && ! ldconfig -p | grep -q libcudart'
check_eq "no nvidia-smi yet" "" "$(sim_run sh -c 'command -v nvidia-smi || true')"
check "systemctl is the recording stand-in" sim_run grep -q 'Stand-in systemctl' /usr/bin/systemctl
sim_run systemctl reboot
sim_run reboot -f
check_eq "reboot calls are recorded, not made" $'systemctl reboot\nreboot -f' "$(sim_log commands)"

sim_section "GPU knobs and site files (no host needed)"
for m in "H100 0x2330" "V100 0x1db1" "B200 0x2901"; do
  read -r model id <<<"$m"
  SIM_GPU=$model SIM_GPUS=2 _sim_sysfs "$SIM_DIR/sysfs-$model"
  check_eq "SIM_GPU=$model: 2 GPUs with device id $id" "$id $id" \
    "$(cat "$SIM_DIR/sysfs-$model"/bus/pci/devices/*/device | grep -v 0x1021 | tr '\n' ' ' | sed 's/ $//')"
done
site=$(sim_site_file hopper-r580-cuda13.0)
check_eq "sim_site_file: overrides only the repositories' addresses and keys" "/sim/site-hopper-r580-cuda13.0.yaml
apiVersion: gpuprep/v1
kind: Stack
metadata: {name: site-hopper-r580-cuda13.0}
extends: hopper-r580-cuda13.0
repository_overrides:
  cuda: {url: $SIM_URL/cuda/, keyring_url: $SIM_URL/cuda.gpg, key_fingerprint: $SIM_KEY_FPR}
  nvidia-container-toolkit: {url: $SIM_URL/nvidia-container-toolkit/, keyring_url: $SIM_URL/nvidia-container-toolkit.gpg, key_fingerprint: $SIM_CTK_KEY_FPR}" \
  "$site
$(cat "$SIM_HOST$site")"
check "the three keys differ" test "$SIM_KEY_FPR" != "$SIM_CTK_KEY_FPR" -a "$SIM_KEY_FPR" != "$SIM_UBUNTU_KEY_FPR" -a "$SIM_CTK_KEY_FPR" != "$SIM_UBUNTU_KEY_FPR"

sim_section "the repositories: NVIDIA's CUDA and container toolkit repositories next to the distribution's"
URL=$SIM_URL
sim_run sh -c "/usr/lib/apt/apt-helper -qq download-file $URL/cuda.gpg /tmp/k.gpg && install -m 0644 /tmp/k.gpg /usr/share/keyrings/cuda-archive-keyring.gpg &&
  /usr/lib/apt/apt-helper -qq download-file $URL/nvidia-container-toolkit.gpg /tmp/k.gpg && install -m 0644 /tmp/k.gpg /usr/share/keyrings/nvidia-container-toolkit-keyring.gpg && rm /tmp/k.gpg &&
  echo 'deb [signed-by=/usr/share/keyrings/cuda-archive-keyring.gpg] $URL/cuda/ /' >/etc/apt/sources.list.d/cuda.list &&
  echo 'deb [signed-by=/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg] $URL/nvidia-container-toolkit/ /' >/etc/apt/sources.list.d/nvidia-container-toolkit.list"
check "apt-get update against the three signed repositories" sim_run apt-get -q update
madison() {  # madison PKG: the versions apt knows, newest first, space-separated
  sim_run apt-cache madison "$1" | awk -F' [|] ' '{print $2}' | tr -d ' ' | tr '\n' ' ' | sed 's/ $//'
}
check_eq "nvidia-driver-580: NVIDIA's seven point releases in both revision styles (580.82.07 pruned), Ubuntu's build of 580.173.02 below NVIDIA's" \
  "580.178.04-1ubuntu1 580.173.02-1ubuntu1 580.173.02-0ubuntu0.22.04.1 580.159.04-1ubuntu1 580.126.09-1ubuntu1 580.105.08-0ubuntu1 580.95.05-0ubuntu1 580.65.06-0ubuntu1" \
  "$(madison nvidia-driver-580)"
check_eq "nvidia-open-580 (NVIDIA's only)" "580.178.04-1ubuntu1 580.173.02-1ubuntu1 580.159.04-1ubuntu1 580.126.09-1ubuntu1 580.105.08-0ubuntu1 580.95.05-0ubuntu1 580.65.06-0ubuntu1" \
  "$(madison nvidia-open-580)"
check_eq "cuda-drivers: the newest branch, then R535 in the old style" "595.99.01-1ubuntu1 595.91.07-1ubuntu1 595.71.05-1ubuntu1 595.45.04-1ubuntu1 535.183.01-1 535.129.03-1 535.104.05-1" \
  "$(madison cuda-drivers)"
check_eq "nvidia-open (unsuffixed): the newest branch only" "595.99.01-1ubuntu1 595.91.07-1ubuntu1 595.71.05-1ubuntu1 595.45.04-1ubuntu1" "$(madison nvidia-open)"
check_eq "R595 without the branch in the names (nvidia-dkms-open), none with it" \
  "595.99.01-1ubuntu1 595.91.07-1ubuntu1 595.71.05-1ubuntu1 595.45.04-1ubuntu1 /  / " \
  "$(madison nvidia-dkms-open) / $(madison nvidia-dkms-595-open) / $(madison nvidia-driver-595)"
check_eq "the branch's version-locking package at each release, one at a time (Provides, Conflicts, Replaces)" \
  "595.99.01-1ubuntu1 595.91.07-1ubuntu1 595.71.05-1ubuntu1 595.45.04-1ubuntu1|nvidia-driver-pinning|nvidia-driver-pinning|nvidia-driver-pinning" \
  "$(madison nvidia-driver-pinning-595)|$(sim_run apt-cache show nvidia-driver-pinning-595=595.71.05-1ubuntu1 | awk -F': ' '/^(Provides|Conflicts|Replaces):/ {print $2}' | tr '\n' '|' | sed 's/|$//')"
check_eq "cuda-compat-13-0 at the driver's versions" "580.178.04-1ubuntu1 580.173.02-1ubuntu1 580.159.04-1ubuntu1 580.126.09-1ubuntu1 580.105.08-0ubuntu1 580.95.05-0ubuntu1 580.65.06-0ubuntu1" \
  "$(madison cuda-compat-13-0)"
check_eq "nvidia-fabricmanager-580" "580.178.04-1 580.173.02-1 580.173.02-0ubuntu0.22.04.1 580.159.04-1 580.126.09-1 580.105.08-1 580.95.05-1 580.65.06-1" \
  "$(madison nvidia-fabricmanager-580)"
check_eq "cuda-toolkit-13-0 and 13-2" "13.0.3-1 13.0.2-1 13.0.1-1 13.0.0-1 / 13.2.2-1" \
  "$(madison cuda-toolkit-13-0) / $(madison cuda-toolkit-13-2)"
check_eq "nvidia-fabricmanager-595 (the branch in its name) at each R595 release" \
  "595.99.01-1 595.91.07-1 595.71.05-1 595.45.04-1" "$(madison nvidia-fabricmanager-595)"
check_eq "cuda-toolkit-12-9 and 12-2" "12.9.1-1 12.9.0-1 / 12.2.2-1 12.2.0-1" "$(madison cuda-toolkit-12-9) / $(madison cuda-toolkit-12-2)"
check_eq "libcudnn9-cuda-13 and -12" "9.25.1.1-1 9.24.1.1-1 9.23.2.1-1 9.14.0.64-1 9.13.0.50-1 9.12.0.46-1 / 9.10.2.21-1 9.8.0.87-1" \
  "$(madison libcudnn9-cuda-13) / $(madison libcudnn9-cuda-12)"
check_eq "libcudnn8 (CUDA build in the revision)" "8.9.7.29-1+cuda12.2 8.9.7.29-1+cuda11.8 8.9.5.29-1+cuda12.2" "$(madison libcudnn8)"
check_eq "libnccl2 (CUDA build in the revision)" \
  "2.30.7-1+cuda13.3 2.30.7-1+cuda12.9 2.29.7-1+cuda13.2 2.29.3-1+cuda13.1 2.28.9-1+cuda13.0 2.28.3-1+cuda13.0 2.27.7-1+cuda13.0 2.27.7-1+cuda12.9 2.27.3-1+cuda12.9 2.19.3-1+cuda12.2 2.18.5-1+cuda12.2 2.18.5-1+cuda11.8" \
  "$(madison libnccl2)"
check_eq "nvidia-container-toolkit (its own repository)" "1.20.1-1 1.20.0-1 1.19.1-1 1.17.8-1" "$(madison nvidia-container-toolkit)"
check_eq "kernel metas in both pockets" "5.15.0.160.160 5.15.0.25.27" "$(madison linux-image-generic)"
policy=$(sim_run apt-cache policy)
check "the cuda repository's Release: Origin NVIDIA, Label NVIDIA CUDA" grep -q 'release o=NVIDIA,l=NVIDIA CUDA' <<<"$policy"
check "the archive's: Origin Ubuntu, suite jammy-updates, codename jammy, component main" \
  grep -q 'release v=22.04,o=Ubuntu,a=jammy-updates,n=jammy,l=Ubuntu,c=main' <<<"$policy"
check_eq "unpinned, apt's candidate for nvidia-driver-580 is the newest release in any origin" "580.178.04-1ubuntu1" \
  "$(sim_run apt-cache policy nvidia-driver-580 | awk '/Candidate:/ {print $2}')"

# What apt does with these repositories when told only the top-level version (-s: apt's resolver, no change)
sim_apt_s() { sim_run env DEBIAN_FRONTEND=noninteractive apt-get -s install "$@" >"$SIM_DIR/apt-s.out" 2>&1; }
inst() { grep "^Inst $1 " "$SIM_DIR/apt-s.out" | sed -E 's/^Inst ([^ ]+) (\[[^]]*\] )?\(([^ ]+) .*/\1 \3/'; }
held_broken() { ! sim_apt_s "$@" && grep -q 'you have held broken packages' "$SIM_DIR/apt-s.out"; }
check "the unsuffixed nvidia-open installs the newest branch (595)" sim_apt_s nvidia-open
check_eq "  nvidia-driver-open at the newest point release" "nvidia-driver-open 595.99.01-1ubuntu1" "$(inst nvidia-driver-open)"
check "nvidia-open=595.71.05-1ubuntu1 alone still takes the newest components (no version in its Depends)" \
  sim_apt_s nvidia-open=595.71.05-1ubuntu1
check_eq "  nvidia-dkms-open" "nvidia-dkms-open 595.99.01-1ubuntu1" "$(inst nvidia-dkms-open)"
V=595.71.05-1ubuntu1
OPEN595=(nvidia-open=$V nvidia-driver-open=$V nvidia-dkms-open=$V libnvidia-compute=$V nvidia-utils=$V nvidia-compute-utils=$V nvidia-driver-pinning-595=$V)
check "R595's closure at one release with the locking package, every package named: installable" sim_apt_s "${OPEN595[@]}"
check_eq "  every package at 595.71.05-1ubuntu1" \
  "libnvidia-compute $V|nvidia-compute-utils $V|nvidia-dkms-open $V|nvidia-driver-open $V|nvidia-driver-pinning-595 $V|nvidia-open $V|nvidia-utils $V|" \
  "$(grep '^Inst ' "$SIM_DIR/apt-s.out" | grep -v '^Inst dkms ' | sed -E 's/^Inst ([^ ]+) (\[[^]]*\] )?\(([^ ]+) .*/\1 \3/' | sort | tr '\n' '|')"
# gpuprep's exact pins of that closure (priority 1001) beside the locking package's own file (unpacked from
# the package as apt downloads it): apt reads both without a complaint, installs the pinned release when asked
# for nvidia-open by name, and would rather not install cuda-drivers (the other flavour's newest release) than
# move a pinned package.
sim_run sh -c "for p in ${OPEN595[*]}; do printf 'Package: %s\nPin: version %s\nPin-Priority: 1001\n\n' \${p%%=*} \${p#*=}; done >/etc/apt/preferences.d/gpuprep"
check "the locking package's preferences file, unpacked" sim_run sh -c \
  "cd /tmp && apt-get download -q nvidia-driver-pinning-595=$V >/dev/null && dpkg-deb -x nvidia-driver-pinning-595_${V}_*.deb / && rm nvidia-driver-pinning-595_*.deb && test -s /etc/apt/preferences.d/nvidia-driver-pinning-595"
check_eq "apt reads both files without a complaint; nvidia-open's candidate is the pinned release" "$V" \
  "$(sim_run apt-cache policy nvidia-open 2>&1 | awk '/^[EW]:/ {print; exit} /Candidate:/ {print $2}')"
check "nvidia-open by name, pinned: installable" sim_apt_s nvidia-open
check_eq "  at the pinned release" "nvidia-dkms-open $V|nvidia-driver-open $V" "$(inst nvidia-dkms-open)|$(inst nvidia-driver-open)"
check "cuda-drivers with no version: held broken packages rather than a pinned package moved" held_broken cuda-drivers
sim_run rm -f /etc/apt/preferences.d/gpuprep /etc/apt/preferences.d/nvidia-driver-pinning-595
check "nvidia-open-580=580.95.05-0ubuntu1 alone: held broken packages (exact deps, newer components win)" \
  held_broken nvidia-open-580=580.95.05-0ubuntu1
V=580.95.05-0ubuntu1
OPEN580=(nvidia-open-580=$V nvidia-driver-580-open=$V nvidia-dkms-580-open=$V libnvidia-compute-580=$V nvidia-utils-580=$V nvidia-compute-utils-580=$V)
check "the same with every component pinned: installable" sim_apt_s "${OPEN580[@]}"
check_eq "  every component at 580.95.05-0ubuntu1" \
  "libnvidia-compute-580 $V|nvidia-compute-utils-580 $V|nvidia-dkms-580-open $V|nvidia-driver-580-open $V|nvidia-open-580 $V|nvidia-utils-580 $V|" \
  "$(grep '^Inst ' "$SIM_DIR/apt-s.out" | grep -v '^Inst dkms ' | sed -E 's/^Inst ([^ ]+) (\[[^]]*\] )?\(([^ ]+) .*/\1 \3/' | sort | tr '\n' '|')"
check "cuda-drivers-580=580.126.09-1ubuntu1 alone: held broken packages" held_broken cuda-drivers-580=580.126.09-1ubuntu1
check "cuda-drivers=535.129.03-1 alone: held broken packages (cuda-drivers-535 exact, newer candidate)" \
  held_broken cuda-drivers=535.129.03-1
check "cuda-drivers-535=535.129.03-1 (a >= dependency): installable..." sim_apt_s cuda-drivers-535=535.129.03-1
check_eq "  ...with a newer driver than asked for" "nvidia-driver-535 535.183.01-0ubuntu1" "$(inst nvidia-driver-535)"
check "cuda-toolkit-13-0=13.0.0-1: installable..." sim_apt_s cuda-toolkit-13-0=13.0.0-1
check_eq "  ...with newer components (>= dependencies)" "cuda-cudart-13-0 13.0.96-1 cuda-nvcc-13-0 13.0.96-1" \
  "$(inst cuda-cudart-13-0) $(inst cuda-nvcc-13-0)"
check "libcudnn9-dev-cuda-13=9.12.0.46-1 alone: held broken packages" held_broken libcudnn9-dev-cuda-13=9.12.0.46-1
check "libnccl-dev=2.27.7-1+cuda13.0 alone: held broken packages" held_broken libnccl-dev=2.27.7-1+cuda13.0
check "nvidia-container-toolkit=1.17.8-1 alone: held broken packages" held_broken nvidia-container-toolkit=1.17.8-1
D=535.129.03-0ubuntu1
DRV535=(nvidia-driver-535=$D nvidia-dkms-535=$D libnvidia-compute-535=$D nvidia-utils-535=$D nvidia-compute-utils-535=$D)
check "R535 with every component pinned: installable" sim_apt_s "${DRV535[@]}"
check "R535 and R580 cannot be installed together (each installable alone)" held_broken "${DRV535[@]}" "${OPEN580[@]}"
check "nor the open and proprietary flavours" held_broken nvidia-dkms-580=$V nvidia-dkms-580-open=$V

sim_section "apt-get install of the legacy stack, every package pinned"
D=535.129.03-0ubuntu1
PKGS=(cuda-drivers=535.129.03-1 cuda-drivers-535=535.129.03-1 nvidia-driver-535=$D nvidia-dkms-535=$D
  libnvidia-compute-535=$D nvidia-utils-535=$D nvidia-compute-utils-535=$D nvidia-fabricmanager-535=535.129.03-1
  cuda-toolkit-12-2=12.2.2-1 cuda-cudart-12-2=12.2.140-1 cuda-nvcc-12-2=12.2.140-1
  libcudnn8=8.9.7.29-1+cuda12.2 libnccl2=2.18.5-1+cuda12.2 libnccl-dev=2.18.5-1+cuda12.2)
apt0=$(sim_count apt-get)
check "apt-get install of the stack's pins" sim_run env DEBIAN_FRONTEND=noninteractive apt-get -y -q install "${PKGS[@]}"
check_eq "apt-get calls are counted" $((apt0 + 1)) "$(sim_count apt-get)"
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
check "nvidia-smi --version: its own version is the library's" \
  grep -qx 'NVIDIA-SMI version  : 535.129.03' <<<"$(sim_run nvidia-smi --version)"

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
sim_run sh -c "/usr/lib/apt/apt-helper -qq download-file $URL/cuda.gpg /tmp/k.gpg && install -m 0644 /tmp/k.gpg /usr/share/keyrings/cuda-archive-keyring.gpg && rm /tmp/k.gpg &&
  echo 'deb [signed-by=/usr/share/keyrings/cuda-archive-keyring.gpg] $URL/cuda/ /' >/etc/apt/sources.list.d/cuda.list && apt-get -qq update"
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

sim_section "without pins, apt-get upgrade moves the legacy stack (what gpuprep's pins must prevent)"
sim_run env DEBIAN_FRONTEND=noninteractive apt-get -y -qq install "${PKGS[@]}" >/dev/null 2>&1  # complete the cut transaction
sim_run env DEBIAN_FRONTEND=noninteractive apt-get -s upgrade >"$SIM_DIR/apt-s.out" 2>&1
check_eq "the driver to the newest 535 and NCCL to a build for another CUDA" \
  "nvidia-driver-535 535.183.01-0ubuntu1 libnccl2 2.30.7-1+cuda13.3" "$(inst nvidia-driver-535) $(inst libnccl2)"

sim_section "apt swaps branches: the 535 driver replaced by 580 open (Conflicts/Replaces), then reboot"
check "apt-get install of R580 open, every component pinned" \
  sim_run env DEBIAN_FRONTEND=noninteractive apt-get -y -q install "${OPEN580[@]}"
check_eq "the 535 driver packages are gone (the fabric manager is a separate choice)" "" \
  "$(sim_run dpkg-query -W -f '${db:Status-Status} ${Package}\n' 2>/dev/null | grep -E '^installed (nvidia-(driver|dkms|utils|compute-utils)-535|libnvidia-compute-535|cuda-drivers)')"
check_eq "the recorded module: 580.95.05, open" "580.95.05 open" \
  "$(sim_run cat /var/lib/gpuprep-sim/nvidia-module-version /var/lib/gpuprep-sim/nvidia-module-flavour | tr '\n' ' ' | sed 's/ $//')"
sim_run sh -c 'printf "blacklist nouveau\noptions nouveau modeset=0\n" >/etc/modprobe.d/blacklist-nouveau.conf'
sim_reboot --no-resume
check "/proc/driver/nvidia/version names the open kernel module" \
  grep -q '^NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  ' <<<"$(sim_run cat /proc/driver/nvidia/version)"
check_eq "NVML and the CUDA driver report 580.95.05 and CUDA 13.0 (one build, its version from its file name)" \
  "0 Success 8 580.95.05 0 8 13000" "$(sim_run python3 -c "${PY%%cudnn=*}print(r, n.nvmlErrorString(r).decode(), cnt.value, v.value.decode(), ci, dc.value, dv.value)")"
check_eq "NVML's fabric state on a host without NVLink switch bridges: NOT_SUPPORTED (3)" \
  "8 GPUs: 3 0 0 | bad version: 3" "$(sim_fabric)"

sim_section "the dpkg lock held by unattended-upgrades"
sim_run_locked_log() { sim_run_locked "$@" >"$SIM_DIR/lockwait.log" 2>&1; }
t=$(date +%s%3N)
check "apt-get waits for the lock (DPkg::Lock::Timeout)" sim_run_locked_log 3 env DEBIAN_FRONTEND=noninteractive apt-get -y -q -o DPkg::Lock::Timeout=30 install --reinstall libnccl-dev=2.18.5-1+cuda12.2
waited=$(($(date +%s%3N) - t))
check "it waited (${waited} ms >= 3000 ms)" test "$waited" -ge 3000
check "and says so" grep -q "Waiting for cache lock" "$SIM_DIR/lockwait.log"

sim_section "HGX B200 (SIM_HGX=1): NVLink switch bridges; the fabric completes only with NVLSM and ib_umad"
SIM_GPU=B200 SIM_HGX=1 sim_new_host
check_eq "four ConnectX-7 functions (15b3:1021) whose VPD says SMDL=SW_MNG, eight without; vpd mode 0600" \
  "bridges 4 nics 8 mode 600" "$(sim_inspect sh -c 'b=0 n=0
  for d in /sys/bus/pci/devices/*; do
    [ "$(cat $d/vendor):$(cat $d/device)" = 0x15b3:0x1021 ] && [ -f $d/vpd ] || continue
    if grep -qa SMDL=SW_MNG $d/vpd; then b=$((b + 1)); else n=$((n + 1)); fi
  done; echo bridges $b nics $n mode $(stat -c %a /sys/bus/pci/devices/0000:05:00.0/vpd)')"
sim_run sh -c "/usr/lib/apt/apt-helper -qq download-file $URL/cuda.gpg /tmp/k.gpg && install -m 0644 /tmp/k.gpg /usr/share/keyrings/cuda-archive-keyring.gpg && rm /tmp/k.gpg &&
  echo 'deb [signed-by=/usr/share/keyrings/cuda-archive-keyring.gpg] $URL/cuda/ /' >/etc/apt/sources.list.d/cuda.list && apt-get -qq update"
check_eq "nvlsm in NVIDIA's repository: the releases CUDA 13.0.0, 13.0.2, 13.0.3 and 13.2.2 list, and the test value 2025.99.1" \
  "2025.99.1-1 2025.10.12-1 2025.06.11-1 2025.06.6-1 2025.06.5-1" "$(madison nvlsm)"
V=580.173.02-1ubuntu1
check "apt-get install of R580 open, its fabric manager and nvlsm=2025.06.11-1, every package pinned" \
  sim_run env DEBIAN_FRONTEND=noninteractive apt-get -y -q install nvidia-driver-580-open=$V nvidia-dkms-580-open=$V \
  libnvidia-compute-580=$V nvidia-utils-580=$V nvidia-compute-utils-580=$V nvidia-fabricmanager-580=580.173.02-1 nvlsm=2025.06.11-1
check_eq "nvlsm pulled libibumad3 from the distribution (jammy's 39.0-1)" "libibumad3 39.0-1|nvlsm 2025.06.11-1|" \
  "$(sim_inspect dpkg-query -W -f '${Package} ${Version}\n' libibumad3 nvlsm | tr '\n' '|')"
sim_run sh -c 'printf "blacklist nouveau\n" >/etc/modprobe.d/blacklist-nouveau.conf && systemctl enable nvidia-fabricmanager.service 2>/dev/null'
sim_reboot --no-resume
check_eq "fabric manager enabled: it failed at start (no ib_umad), its log says NV_WARN_NOTHING_TO_DO" "failed 1 warned" \
  "$(sim_run sh -c 'systemctl is-active nvidia-fabricmanager.service; grep -c "ib_umad module is not loaded" /var/log/fabricmanager.log; grep -q NV_WARN_NOTHING_TO_DO /var/log/fabricmanager.log && echo warned' | tr '\n' ' ' | sed 's/ $//')"
check_eq "NVML: every GPU's fabric state in progress (2); an unknown structure version -> 25" \
  "8 GPUs: 0 2 0 | bad version: 25" "$(sim_fabric)"
KREL=$(uname -r)
check_eq "modprobe ib_umad before linux-modules-extra: modprobe's error, exit 1" \
  "modprobe: FATAL: Module ib_umad not found in directory /lib/modules/$KREL|rc 1|" \
  "$(sim_run sh -c 'modprobe ib_umad 2>&1; echo "rc $?"' | tr '\n' '|')"
check "apt-get install linux-modules-extra-$KREL (the distribution's)" \
  sim_run env DEBIAN_FRONTEND=noninteractive apt-get -y -q install "linux-modules-extra-$KREL"
check_eq "its postinst listed ib_umad in modules.dep; modprobe ib_umad loads it" \
  "kernel/drivers/infiniband/core/ib_umad.ko:|rc 0|loaded|" \
  "$(sim_run sh -c "cat /lib/modules/$KREL/modules.dep; modprobe ib_umad; echo \"rc \$?\"; test -d /sys/module/ib_umad && echo loaded" | tr '\n' '|')"
check_eq "systemctl restart nvidia-fabricmanager: active, nv-fabricmanager and nvlsm run" "active|nv-fabricmanage|nvlsm|" \
  "$(sim_run sh -c 'systemctl restart nvidia-fabricmanager.service && systemctl is-active nvidia-fabricmanager.service && cat /proc/[0-9]*/comm | grep -x -e nvlsm -e nv-fabricmanage | sort' | tr '\n' '|')"
check_eq "NVML: every GPU's fabric state completed (3), status success" "8 GPUs: 0 3 0 | bad version: 25" \
  "$(sim_fabric)"
sim_run sh -c 'echo ib_umad >/etc/modules-load.d/ib_umad.conf'
sim_reboot --no-resume
check "at boot ib_umad loads from /etc/modules-load.d" grep -qx 'boot: ib_umad loaded (/etc/modules-load.d/ib_umad.conf)' <<<"$SIM_BOOT_LOG"
check_eq "after the reboot the fabric manager starts NVLSM and the fabric completes" "active 8 GPUs: 0 3 0 | bad version: 25" \
  "$(sim_run systemctl is-active nvidia-fabricmanager.service) $(sim_fabric)"
check "apt-get remove nvlsm" sim_run env DEBIAN_FRONTEND=noninteractive apt-get -y -q remove nvlsm
check_eq "without NVLSM the fabric manager's restart fails (NV_WARN_NOTHING_TO_DO) and the fabric is in progress again" \
  "failed logged 8 GPUs: 0 2 0 | bad version: 25" \
  "$(sim_run sh -c 'systemctl restart nvidia-fabricmanager.service 2>/dev/null; systemctl is-active nvidia-fabricmanager.service; grep -q "NVLSM) not found" /var/log/fabricmanager.log && echo logged' | tr '\n' ' ')$(sim_fabric)"

echo "sim_harness: scenarios took $(($(date +%s%3N) - t_start)) ms"
sim_finish sim_harness
