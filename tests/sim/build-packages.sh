#!/usr/bin/env bash
# build-packages.sh OUT_DIR BUILD_DIR: builds the simulated GPU server's stub packages into three trees,
# shaped like the repositories a real Ubuntu 22.04 GPU server sees (tests/sim/README.md):
#   OUT_DIR/cuda/                       NVIDIA's flat CUDA repository (compute/cuda/repos/ubuntu2204/x86_64/):
#                                       many point releases of every package, pruned ones missing, both
#                                       revision styles, a newer branch behind the unsuffixed metas
#   OUT_DIR/nvidia-container-toolkit/   the container toolkit's flat repository (libnvidia-container/stable/deb/amd64/)
#   OUT_DIR/ubuntu/pool/{jammy,jammy-updates}/  the distribution archive: dkms, kernel headers and metas, and
#                                       Ubuntu's own build of an R580 release NVIDIA's repository also has
# lib.sh indexes and signs them. Stand-in libraries and nvidia-smi are compiled ONCE from tests/sim/src/*.c
# into BUILD_DIR and installed under each release's versioned file name (libnvidia-ml.so.580.95.05), from
# which they report their version: many point releases cost no extra compiles. Never commit the results.
#
# Versions: the point releases, revision styles and package names follow what NVIDIA's and Ubuntu's
# repositories publish (the R580 releases 580.65.06 ... 580.178.04, -0ubuntu1 up to 580.105.08 and -1ubuntu1
# after; R595 without the branch in the names, 595.45.04, 595.71.05 and 595.91.07 at -1ubuntu1 (and the test
# value 595.99.01 after them), with the branch's version-locking package; CUDA 13.0 and 13.2 toolkits; cuDNN
# 9.12.0.46-1 ... 9.25.1.1-1 for CUDA 13;
# NCCL 2.27.7-1+cuda13.0 ... 2.30.7-1+cuda13.3, newer releases built for newer CUDA minors only; Ubuntu's
# 580.173.02-0ubuntu0.22.04.1, the same upstream release as NVIDIA's 580.173.02-1ubuntu1). Values marked "test
# value" are plausible stand-ins where the real string is not known; only the tests read them.
set -euo pipefail
OUT=$1
BUILD=$2
SRC_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/src
mkdir -p "$OUT" "$BUILD"
KREL=$(uname -r)
ARCH=$(dpkg --print-architecture)
MA=$(gcc -print-multiarch)   # x86_64-linux-gnu
LIBDIR=usr/lib/$MA
STAGE=$BUILD/stage
LIST=$BUILD/debs.list
rm -rf "$STAGE" && mkdir -p "$STAGE"
: >"$LIST"

# ------------------------------------------------------------------ stand-in binaries (compiled once)
CF=(-O2 -Wall -Wextra -Werror)
verlib() {  # verlib KIND SONAME: one build of versionlib.c per kind
  gcc "${CF[@]}" -shared -fPIC -Wl,-soname,"$2" -DSIM_KIND_"$1" -o "$BUILD/${2%%.so*}.$1.so" "$SRC_DIR/versionlib.c" -ldl
}
# (two compilers at a time; each job's failure fails the build)
pair() {
  local a b
  "$1" & a=$!
  "$2" & b=$!
  wait "$a" && wait "$b"
}
c_nvml() { gcc "${CF[@]}" -shared -fPIC -Wl,-soname,libnvidia-ml.so.1 -o "$BUILD/libnvidia-ml.so" "$SRC_DIR/nvml.c" -ldl; }
c_cuda() { gcc "${CF[@]}" -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$BUILD/libcuda.so" "$SRC_DIR/cuda.c" -ldl; }
c_smi() { gcc "${CF[@]}" -o "$BUILD/nvidia-smi" "$SRC_DIR/nvidia-smi.c" -ldl; }
c_lock() { gcc "${CF[@]}" -o "$BUILD/sim-holdlock" "$SRC_DIR/holdlock.c"; }
c_umad() { gcc "${CF[@]}" -shared -fPIC -Wl,-soname,libibumad.so.3 -o "$BUILD/libibumad.so" -x c /dev/null; }
c_cudnn() { verlib CUDNN libcudnn.so.9; }
c_nccl() { verlib NCCL libnccl.so.2; }
c_cudart() { verlib CUDART libcudart.so.13; }
c_nvc() { verlib NVC libnvidia-container.so.1; }
pair c_nvml c_cuda
pair c_smi c_lock
pair c_cudnn c_nccl
pair c_cudart c_nvc
c_umad

# ------------------------------------------------------------------ package helpers
# pkg ORIGIN NAME VERSION DESCRIPTION ["Field: value"]...: starts a package tree in $P (fields with an empty
# value are left out). The caller adds files and maintainer scripts, then calls finish, which queues the tree
# for dpkg-deb (built at the end, two at a time). ORIGIN is the tree under OUT_DIR the .deb goes to.
pkg() {
  local origin=$1 name=$2 version=$3 desc=$4 f
  shift 4
  P=$STAGE/$origin/${name}_$version
  rm -rf "$P"
  mkdir -p "$P/DEBIAN" "$P/usr/share/doc/$name" "$OUT/$origin"
  {
    echo "Package: $name"
    echo "Version: $version"
    echo "Architecture: $ARCH"
    echo "Maintainer: gpuprep simulated server <gpuprep-sim@localhost>"
    for f in "$@"; do if [[ -n ${f#*: } && $f == *": "* ]]; then echo "$f"; fi; done
    echo "Section: sim"
    echo "Priority: optional"
    echo "Description: $desc"
    echo " Stand-in package of the gpuprep simulated GPU server (tests/sim); not NVIDIA software."
  } >"$P/DEBIAN/control"
  echo "gpuprep simulated package $name $version" >"$P/usr/share/doc/$name/README.sim"
  PKG_OUT=$OUT/$origin/${name}_${version//:/%3a}_$ARCH.deb
}
script() {  # script (postinst|postrm|preinst) BODY: a maintainer script of the current package
  printf '#!/bin/sh\nset -e\n%s\n' "$2" >"$P/DEBIAN/$1"
  chmod 0755 "$P/DEBIAN/$1"
}
finish() { printf '%s\n%s\n' "$P" "$PKG_OUT" >>"$LIST"; }
install_file() {  # install_file MODE SRC DEST (DEST relative to the package root)
  mkdir -p "$(dirname "$P/$3")"
  install -m "$1" "$2" "$P/$3"
}
text_file() {  # text_file MODE DEST <<EOF
  mkdir -p "$(dirname "$P/$2")"
  cat >"$P/$2"
  chmod "$1" "$P/$2"
}
symlink() {  # symlink TARGET DEST (DEST relative to the package root)
  mkdir -p "$(dirname "$P/$2")"
  ln -sfn "$1" "$P/$2"
}
ldconfig_scripts() {
  script postinst 'if [ "$1" = configure ]; then ldconfig; fi'
  script postrm 'if [ "$1" = remove ] || [ "$1" = purge ]; then ldconfig; fi'
}
# Ubuntu-style branch packages (nvidia-graphics-drivers-NNN): each provides and conflicts with a name every
# branch's counterpart also provides, so two branches (or the open and proprietary flavours) cannot be
# installed together and apt replaces one with the other.
# exclusive NAME: sets EX to those three fields, for pkg "${EX[@]}".
exclusive() { EX=("Provides: $1" "Conflicts: $1" "Replaces: $1"); }

# ------------------------------------------------------------------ NVIDIA driver packages
# dkms_pkg ORIGIN NAME VERSION UPSTREAM FLAVOUR: the kernel module. Its postinst "builds" it: records the
# version and flavour the next (simulated) boot loads and asks for a reboot, like Ubuntu's update-notifier
# hook. /sim/control/slow-postinst makes it slow, so a scenario can cut the power in the middle of it.
dkms_pkg() {
  local origin=$1 name=$2 version=$3 up=$4 flavour=$5
  pkg "$origin" "$name" "$version" "NVIDIA DKMS package, $flavour kernel modules (simulated)" \
    "Depends: dkms" "Provides: nvidia-dkms-kernel" "Conflicts: nvidia-dkms-kernel"
  text_file 0644 "usr/src/nvidia-$up/dkms.conf" <<EOF
PACKAGE_NAME="nvidia"
PACKAGE_VERSION="$up"
AUTOINSTALL="yes"
EOF
  script postinst "$(cat <<EOF
if [ "\$1" = configure ]; then
  if [ -e /sim/control/slow-postinst ]; then
    touch /sim/control/postinst-running
    sleep 60
  fi
  dkms add -m nvidia -v $up
  dkms build -m nvidia -v $up
  dkms install -m nvidia -v $up
  mkdir -p /lib/modules/\$(uname -r)/updates/dkms /var/lib/gpuprep-sim
  echo "simulated nvidia.ko version $up ($flavour)" >/lib/modules/\$(uname -r)/updates/dkms/nvidia.ko
  echo $up >/var/lib/gpuprep-sim/nvidia-module-version
  echo $flavour >/var/lib/gpuprep-sim/nvidia-module-flavour
  touch /var/run/reboot-required
  echo $name >>/var/run/reboot-required.pkgs
fi
EOF
)"
  # Only its own record: when apt swaps branches, the new module may already be recorded.
  script postrm "$(cat <<EOF
if [ "\$1" = remove ] || [ "\$1" = purge ]; then
  if [ "\$(cat /var/lib/gpuprep-sim/nvidia-module-version 2>/dev/null)" = $up ]; then
    rm -f /var/lib/gpuprep-sim/nvidia-module-version /var/lib/gpuprep-sim/nvidia-module-flavour \
      /lib/modules/\$(uname -r)/updates/dkms/nvidia.ko
  fi
fi
EOF
)"
  finish
}

# driver_set ORIGIN BRANCH UPSTREAM REVISION FLAVOURS: one release of a branch as Ubuntu-style packages:
# nvidia-driver-B[-open] -> (= V) nvidia-dkms-B[-open], libnvidia-compute-B, nvidia-utils-B,
# nvidia-compute-utils-B. FLAVOURS: "proprietary", "open" or both. BRANCH "": the same packages without the
# branch in their names (nvidia-driver-open, nvidia-dkms-open, libnvidia-compute...), as NVIDIA's repository
# names them from R590 on.
driver_set() {
  local origin=$1 b=${2:+-$2} up=$3 v=$3-$4 flavours=$5 f sfx
  for f in $flavours; do
    sfx=
    [[ $f == open ]] && sfx=-open
    dkms_pkg "$origin" "nvidia-dkms$b$sfx" "$v" "$up" "$f"
    pkg "$origin" "nvidia-driver$b$sfx" "$v" "NVIDIA driver metapackage, $f kernel modules (simulated)" \
      "Depends: nvidia-dkms$b$sfx (= $v), libnvidia-compute$b (= $v), nvidia-utils$b (= $v), nvidia-compute-utils$b (= $v)" \
      "Provides: nvidia-driver-binary" "Conflicts: nvidia-driver-binary"
    finish
  done

  exclusive libnvidia-compute
  pkg "$origin" "libnvidia-compute$b" "$v" "NVIDIA libcompute package (simulated NVML and CUDA driver)" \
    "${EX[@]}"
  install_file 0644 "$BUILD/libnvidia-ml.so" "$LIBDIR/libnvidia-ml.so.$up"
  install_file 0644 "$BUILD/libcuda.so" "$LIBDIR/libcuda.so.$up"
  symlink "libnvidia-ml.so.$up" "$LIBDIR/libnvidia-ml.so.1"
  symlink "libcuda.so.$up" "$LIBDIR/libcuda.so.1"
  symlink libcuda.so.1 "$LIBDIR/libcuda.so"
  ldconfig_scripts
  finish

  exclusive nvidia-utils
  pkg "$origin" "nvidia-utils$b" "$v" "NVIDIA driver support binaries (simulated nvidia-smi)" \
    "Depends: libnvidia-compute$b (= $v)" "${EX[@]}"
  install_file 0755 "$BUILD/nvidia-smi" usr/bin/nvidia-smi
  finish

  exclusive nvidia-compute-utils
  pkg "$origin" "nvidia-compute-utils$b" "$v" "NVIDIA compute utilities (simulated persistence daemon)" \
    "${EX[@]}"
  text_file 0755 usr/bin/nvidia-persistenced <<<$'#!/bin/sh\nexit 0'
  text_file 0644 lib/systemd/system/nvidia-persistenced.service <<'EOF'
[Unit]
Description=NVIDIA Persistence Daemon
Wants=syslog.target

[Service]
Type=forking
ExecStart=/usr/bin/nvidia-persistenced --user nvidia-persistenced --no-persistence-mode --verbose
ExecStopPost=/bin/rm -rf /var/run/nvidia-persistenced

[Install]
WantedBy=multi-user.target
EOF
  finish
}

# fm_pkg ORIGIN BRANCH VERSION UPSTREAM: the fabric manager of a branch (NVSwitch systems). With the
# service's arguments (-c CONFIG) nv-fabricmanager is the daemon (it runs until killed), else it prints its
# version. Its daemon hook (fm_daemon_hook) starts it while the unit is active.
fm_pkg() {
  exclusive nvidia-fabricmanager
  pkg "$1" "nvidia-fabricmanager-$2" "$3" "Fabric Manager for NVSwitch based systems (simulated)" \
    "${EX[@]}"
  text_file 0755 usr/bin/nv-fabricmanager <<EOF
#!/bin/sh
case "\${1:-}" in
  -c | --config) while :; do sleep 3600; done ;;
  *) echo 'Fabric Manager version is : $4' ;;
esac
EOF
  fm_daemon_hook
  text_file 0644 lib/systemd/system/nvidia-fabricmanager.service <<'EOF'
[Unit]
Description=NVIDIA fabric manager service

[Service]
ExecStart=/usr/bin/nv-fabricmanager -c /usr/share/nvidia/nvswitch/fabricmanager.cfg
Type=forking

[Install]
WantedBy=multi-user.target
EOF
  finish
}

# fm_daemon_hook: the fabric manager's service start in the simulated server (tests/sim/enter.sh runs it in
# every session while nvidia-fabricmanager.service is active, the systemctl stand-in on start and restart).
# Only on an HGX B200-style board (a ConnectX-7 VPD with SMDL=SW_MNG, lib.sh: SIM_HGX): there, as Fabric
# Manager's start script does on HGX B200, it starts NVLSM first (package nvlsm) and needs the InfiniBand umad
# interface (ib_umad loaded); without either it logs NV_WARN_NOTHING_TO_DO to /var/log/fabricmanager.log and
# the unit fails. Running, it records the fabric as completed in /run/gpuprep-sim/fabric-state, which the
# stand-in NVML reports (nvmlDeviceGetGpuFabricInfoV); a reboot clears it. Elsewhere the unit is only marked
# active (no process), as before.
fm_daemon_hook() {
  text_file 0755 usr/lib/gpuprep-sim/daemons/nvidia-fabricmanager.service <<'EOF'
#!/bin/sh
grep -qas 'SMDL=SW_MNG' /sys/bus/pci/devices/*/vpd || exit 0
unit=nvidia-fabricmanager.service
run=/run/gpuprep-sim
log=/var/log/fabricmanager.log
alive() {  # alive PIDFILE COMM: sets pid
  pid=$(cat "$1" 2>/dev/null || echo 0)
  [ "$pid" -gt 0 ] 2>/dev/null && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ]
}
stop() {  # stop PIDFILE COMM
  if alive "$1" "$2"; then kill "$pid" 2>/dev/null; fi
  rm -f "$1"
}
mkdir -p "$run/pid" "$run/active" "$run/failed"
if [ "${1:-}" = restart ]; then
  stop "$run/pid/$unit" nv-fabricmanage
  stop "$run/pid/nvlsm" nvlsm
fi
alive "$run/pid/$unit" nv-fabricmanage && exit 0
stamp() { date '+[%b %d %Y %H:%M:%S]'; }
fail() {
  echo "$(stamp) [ERROR] [tid 1] $1" >>"$log"
  echo "$(stamp) [ERROR] [tid 1] request to query NVSwitch device information from NVSwitch driver failed with error:WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]" >>"$log"
  rm -f "$run/active/$unit" "$run/fabric-state"
  touch "$run/failed/$unit"
  exit 1
}
[ -x /opt/nvidia/nvlsm/sbin/nvlsm ] || fail "NVLink Subnet Manager (NVLSM) not found: /opt/nvidia/nvlsm/sbin/nvlsm"
[ -d /sys/module/ib_umad ] || fail "NVLSM cannot open the InfiniBand umad interface: the ib_umad module is not loaded"
if ! alive "$run/pid/nvlsm" nvlsm; then
  setsid /opt/nvidia/nvlsm/sbin/nvlsm </dev/null >>/var/log/nvlsm.log 2>&1 &
  echo $! >"$run/pid/nvlsm"
fi
setsid /usr/bin/nv-fabricmanager -c /usr/share/nvidia/nvswitch/fabricmanager.cfg </dev/null >/dev/null 2>&1 &
echo $! >"$run/pid/$unit"
rm -f "$run/failed/$unit"
echo "$(stamp) [INFO] [tid 1] NVLink fabric configured with NVLSM (simulated)" >>"$log"
echo completed >"$run/fabric-state"
EOF
}

# nvlsm_pkg VERSION: NVIDIA's NVLink Subnet Manager (HGX B200 and later baseboards), installed under
# /opt/nvidia/nvlsm/ as NVIDIA's package does; its stand-in daemon (process name nvlsm) runs until killed.
nvlsm_pkg() {
  pkg cuda nvlsm "$1" "NVIDIA NVLink Subnet Manager (simulated)" "Depends: libibumad3"
  text_file 0755 opt/nvidia/nvlsm/sbin/nvlsm <<'EOF'
#!/bin/sh
# Simulated NVLSM: a daemon that runs until killed (started by the fabric manager's service).
while :; do sleep 3600; done
EOF
  finish
}

meta() {  # meta ORIGIN NAME VERSION DEPENDS DESCRIPTION: a package with dependencies only
  pkg "$1" "$2" "$3" "$5" "Depends: $4"
  finish
}

# R535 (the legacy stack) in the repository's older style: cuda-drivers/cuda-drivers-535 at -1 with a ">="
# dependency on nvidia-driver-535 (so apt takes the newest 535 unless told otherwise), the driver at -0ubuntu1
# with exact dependencies, the fabric manager at -1.
for up in 535.104.05 535.129.03 535.183.01; do
  driver_set cuda 535 "$up" 0ubuntu1 proprietary
  meta cuda cuda-drivers-535 "$up-1" "nvidia-driver-535 (>= $up)" "CUDA Driver meta-package, branch-specific (simulated)"
  meta cuda cuda-drivers "$up-1" "cuda-drivers-535 (= $up-1)" "CUDA Driver meta-package (simulated)"
  fm_pkg cuda 535 "$up-1" "$up"
done

# R580 (LTS): both revision styles; 580.82.07 is missing on purpose (a point release NVIDIA pruned).
# cuda-compat-13-0 carries the driver's version, like NVIDIA's. The fabric manager's "-1" revision follows
# the one R580 string seen for it (nvidia-fabricmanager-580=580.105.08-1); its other releases are test values.
# 580.173.02 (the newest production release, the current stacks' pin) and 580.178.04 after it.
for v in 580.65.06-0ubuntu1 580.95.05-0ubuntu1 580.105.08-0ubuntu1 580.126.09-1ubuntu1 580.159.04-1ubuntu1 \
  580.173.02-1ubuntu1 580.178.04-1ubuntu1; do
  up=${v%-*}
  driver_set cuda 580 "$up" "${v##*-}" "proprietary open"
  meta cuda nvidia-open-580 "$v" "nvidia-driver-580-open (= $v)" "NVIDIA driver 580, open kernel modules (simulated meta-package)"
  meta cuda cuda-drivers-580 "$v" "nvidia-driver-580 (= $v)" "CUDA Driver meta-package, branch 580 (simulated)"
  fm_pkg cuda 580 "$up-1" "$up"
  pkg cuda cuda-compat-13-0 "$v" "CUDA 13.0 forward compatibility package (simulated)"
  install_file 0644 "$BUILD/libcuda.so" "usr/local/cuda-13.0/compat/libcuda.so.$up"
  symlink "libcuda.so.$up" usr/local/cuda-13.0/compat/libcuda.so.1
  finish
done

# NVLSM: the releases NVIDIA's CUDA 13.0.0, 13.0.2, 13.0.3 and 13.2.2 redistributable manifests list for it
# (https://developer.download.nvidia.com/compute/cuda/redist/redistrib_13.0.3.json and its siblings, "nvlsm").
# 2025.99.1 is a test value (no such month): a release newer than 2025.10.12, the R595 stacks' pin, so that
# their pin and hold are tested against a newer release as the R580 stack's are against 2025.10.12.
for v in 2025.06.5-1 2025.06.6-1 2025.06.11-1 2025.10.12-1 2025.99.1-1; do nvlsm_pkg "$v"; done

# locking_pkg BRANCH VERSION: NVIDIA's version-locking package of a branch. Its control fields follow
# `apt-cache show` of NVIDIA's (Section: NVIDIA; Provides, Conflicts and Replaces nvidia-driver-pinning: one at
# a time); it installs an apt preferences file that keeps NVIDIA's driver packages on the branch at priority
# 1000 ("Version locking" in NVIDIA's Driver Installation Guide,
# https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/version-locking.html). The file's name
# and its package list are test values.
locking_pkg() {
  exclusive nvidia-driver-pinning
  pkg cuda "nvidia-driver-pinning-$1" "$2" "APT driver pinning file for driver branch $1 (simulated)" "${EX[@]}"
  text_file 0644 "etc/apt/preferences.d/nvidia-driver-pinning-$1" <<EOF
Package: src:*nvidia*:any src:cuda-drivers:any src:cuda-compat:any
Pin: version $1.*
Pin-Priority: 1000
EOF
  finish
}

# R590 and later as NVIDIA's repository publishes them: the driver packages without the branch in their names
# ("Ubuntu 590 and later packages" in NVIDIA's Driver Installation Guide,
# https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/recent-updates.html), three point releases
# of R595, so `apt-get install nvidia-open` (or cuda-drivers, or `apt-get upgrade`) with no version takes the
# newest, not the release a stack pins. The unsuffixed nvidia-open depends on nvidia-driver-open with no
# version, as `apt-cache show nvidia-open` prints it from NVIDIA's repository; each release has its branch's
# locking package beside it. 595.99.01 is a test value: a release newer than 595.91.07 (the shipped R595 stacks'
# pin), which NVIDIA had not published when this was written; the branch's locking package alone would take it.
for v in 595.45.04-1ubuntu1 595.71.05-1ubuntu1 595.91.07-1ubuntu1 595.99.01-1ubuntu1; do
  driver_set cuda "" "${v%-*}" "${v##*-}" "proprietary open"
  meta cuda nvidia-open "$v" "nvidia-driver-open" "NVIDIA driver, open kernel modules, newest branch (simulated)"
  meta cuda cuda-drivers "$v" "nvidia-driver (= $v)" "CUDA Driver meta-package, newest branch (simulated)"
  locking_pkg 595 "$v"
  # Fabric Manager keeps the branch in its name (Ubuntu's nvidia-fabricmanager-595); "-1" as for R580 (test value).
  fm_pkg cuda 595 "${v%-*}-1" "${v%-*}"
done

# ------------------------------------------------------------------ CUDA toolkits
# toolkit X-Y META COMPONENT: cuda-toolkit-X-Y META-1 depends on its components with ">=" like NVIDIA's
# metas; cuda-cudart-X-Y and cuda-nvcc-X-Y COMPONENT-1 (each built once). Component versions: 13.0.48
# (13.0.0), 13.0.88 (13.0.1 and 13.0.2), 13.0.96 (13.0.3: its cudart; its nvcc is 13.0.88), 13.2.86 (13.2.2:
# cudart and nvcc, redistrib_13.2.2.json), 12.9.37 (12.9.0),
# 12.9.79 (12.9.1) and 12.2.140 (12.2.2) as NVIDIA ships them; 12.2.53 (12.2.0) is a test value.
declare -A BUILT=()
toolkit() {
  local xy=$1 meta_v=$2 comp=$3 dot=${1/-/.} major=${1%-*} root=usr/local/cuda-${1/-/.}
  local year=2025
  [[ $major == 12 && ${xy#*-} -lt 8 ]] && year=2023
  if [[ -z ${BUILT[cudart-$xy-$comp]:-} ]]; then
    BUILT[cudart-$xy-$comp]=1
    pkg cuda "cuda-cudart-$xy" "$comp-1" "CUDA Runtime native Libraries (simulated)"
    install_file 0644 "$BUILD/libcudart.CUDART.so" "$root/targets/x86_64-linux/lib/libcudart.so.$comp"
    symlink "libcudart.so.$comp" "$root/targets/x86_64-linux/lib/libcudart.so.$major"
    symlink targets/x86_64-linux/lib "$root/lib64"
    text_file 0644 "etc/ld.so.conf.d/988_cuda-$xy.conf" <<<"/$root/targets/x86_64-linux/lib"
    ldconfig_scripts
    finish
    pkg cuda "cuda-nvcc-$xy" "$comp-1" "CUDA nvcc (simulated: prints its version only)"
    text_file 0755 "$root/bin/nvcc" <<EOF
#!/bin/sh
# Simulated nvcc: only --version, in nvcc's format.
cat <<'V'
nvcc: NVIDIA (R) Cuda compiler driver
Copyright (c) 2005-$year NVIDIA Corporation
Cuda compilation tools, release $dot, V$comp
V
EOF
    finish
  fi
  pkg cuda "cuda-toolkit-$xy" "$meta_v-1" "CUDA Toolkit $dot meta-package (simulated)" \
    "Depends: cuda-cudart-$xy (>= $comp), cuda-nvcc-$xy (>= $comp)"
  text_file 0644 "$root/version.json" <<EOF
{
   "cuda" : {
      "name" : "CUDA SDK",
      "version" : "$meta_v"
   },
   "cuda_cudart" : {
      "name" : "CUDA Runtime (cudart)",
      "version" : "$comp"
   },
   "cuda_nvcc" : {
      "name" : "CUDA NVCC",
      "version" : "$comp"
   }
}
EOF
  script postinst "if [ \"\$1\" = configure ]; then update-alternatives --install /usr/local/cuda cuda /usr/local/cuda-$dot ${xy/-/}; fi"
  script postrm "if [ \"\$1\" = remove ]; then update-alternatives --remove cuda /usr/local/cuda-$dot; fi"
  finish
}
toolkit 13-0 13.0.0 13.0.48
toolkit 13-0 13.0.1 13.0.88
toolkit 13-0 13.0.2 13.0.88
toolkit 13-0 13.0.3 13.0.96
toolkit 13-2 13.2.2 13.2.86
toolkit 12-9 12.9.0 12.9.37
toolkit 12-9 12.9.1 12.9.79
toolkit 12-2 12.2.0 12.2.53
toolkit 12-2 12.2.2 12.2.140

# ------------------------------------------------------------------ cuDNN
cudnn_header() {  # cudnn_header DEST M.m.p: cudnn_version.h's macro layout
  local p
  IFS=. read -ra p <<<"$2"
  text_file 0644 "$1" <<EOF
/* cudnn_version.h: stand-in with the cuDNN macro layout (gpuprep simulated server) */
#ifndef CUDNN_VERSION_H_
#define CUDNN_VERSION_H_

#define CUDNN_MAJOR ${p[0]}
#define CUDNN_MINOR ${p[1]}
#define CUDNN_PATCHLEVEL ${p[2]}

#define CUDNN_VERSION (CUDNN_MAJOR * $([[ ${p[0]} -ge 9 ]] && echo 10000 || echo 1000) + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)

#endif /* CUDNN_VERSION_H */
EOF
}
# The headers are registered as alternatives (/usr/include/cudnn_version.h), the newest major winning, as
# NVIDIA's cuDNN packages do.
header_alternative() {  # header_alternative FILE PRIORITY
  script postinst "if [ \"\$1\" = configure ]; then update-alternatives --install /usr/include/cudnn_version.h libcudnn_version_h $1 $2; fi"
  script postrm "if [ \"\$1\" = remove ]; then update-alternatives --remove libcudnn_version_h $1; fi"
}

# cuDNN 9: the CUDA major is in the package name (libcudnn9-cuda-13), the revision is -1. The two CUDA
# variants carry the same libcudnn.so.9 here, so they exclude each other.
cudnn9() {  # cudnn9 CUDA_MAJOR VERSION
  local cm=$1 v=$2 other=12 up=${2%-*} mmp
  [[ $cm == 12 ]] && other=13
  mmp=${up%.*}
  pkg cuda "libcudnn9-cuda-$cm" "$v" "cuDNN runtime libraries for CUDA $cm (simulated)" \
    "Conflicts: libcudnn9-cuda-$other" "Replaces: libcudnn9-cuda-$other"
  install_file 0644 "$BUILD/libcudnn.CUDNN.so" "$LIBDIR/libcudnn.so.$mmp"
  symlink "libcudnn.so.$mmp" "$LIBDIR/libcudnn.so.9"
  ldconfig_scripts
  finish
  pkg cuda "libcudnn9-headers-cuda-$cm" "$v" "cuDNN header files for CUDA $cm (simulated)" \
    "Conflicts: libcudnn9-headers-cuda-$other" "Replaces: libcudnn9-headers-cuda-$other"
  cudnn_header "usr/include/$MA/cudnn_version_v9.h" "$mmp"
  header_alternative "/usr/include/$MA/cudnn_version_v9.h" 90
  finish
  pkg cuda "libcudnn9-dev-cuda-$cm" "$v" "cuDNN development libraries for CUDA $cm (simulated)" \
    "Depends: libcudnn9-cuda-$cm (= $v), libcudnn9-headers-cuda-$cm (= $v)" \
    "Conflicts: libcudnn9-dev-cuda-$other" "Replaces: libcudnn9-dev-cuda-$other"
  symlink libcudnn.so.9 "$LIBDIR/libcudnn.so"
  finish
}
# CUDA 13 builds: releases NVIDIA's redistrib_<label>.json files name (9.23.2.1, 9.24.1.1, 9.25.1.1 among them).
for v in 9.12.0.46-1 9.13.0.50-1 9.14.0.64-1 9.23.2.1-1 9.24.1.1-1 9.25.1.1-1; do cudnn9 13 "$v"; done
for v in 9.8.0.87-1 9.10.2.21-1; do cudnn9 12 "$v"; done

# cuDNN 8: the CUDA build is in the revision (8.9.7.29-1+cuda12.2).
for v in 8.9.7.29-1+cuda12.2 8.9.7.29-1+cuda11.8 8.9.5.29-1+cuda12.2; do
  mmp=${v%%-*}
  mmp=${mmp%.*}
  pkg cuda libcudnn8 "$v" "cuDNN runtime libraries (simulated)"
  install_file 0644 "$BUILD/libcudnn.CUDNN.so" "$LIBDIR/libcudnn.so.$mmp"
  symlink "libcudnn.so.$mmp" "$LIBDIR/libcudnn.so.8"
  ldconfig_scripts
  finish
  pkg cuda libcudnn8-dev "$v" "cuDNN development headers (simulated)" "Depends: libcudnn8 (= $v)"
  cudnn_header "usr/include/$MA/cudnn_version_v8.h" "$mmp"
  header_alternative "/usr/include/$MA/cudnn_version_v8.h" 80
  symlink libcudnn.so.8 "$LIBDIR/libcudnn.so"
  finish
done

# ------------------------------------------------------------------ NCCL (CUDA build in the revision)
# Newer releases exist only for newer CUDA minors (2.29.3 +cuda13.1, 2.29.7 +cuda13.2, 2.30.7 +cuda13.3), as
# NVIDIA builds them.
for v in 2.27.7-1+cuda13.0 2.27.7-1+cuda12.9 2.28.3-1+cuda13.0 2.28.9-1+cuda13.0 2.29.3-1+cuda13.1 2.29.7-1+cuda13.2 \
  2.30.7-1+cuda13.3 2.30.7-1+cuda12.9 2.27.3-1+cuda12.9 2.18.5-1+cuda12.2 2.18.5-1+cuda11.8 2.19.3-1+cuda12.2; do
  up=${v%%-*}
  IFS=. read -ra p <<<"$up"
  code=$((p[0] * 10000 + p[1] * 100 + p[2]))
  pkg cuda libnccl2 "$v" "NVIDIA Collective Communication Library (NCCL) Runtime (simulated)"
  install_file 0644 "$BUILD/libnccl.NCCL.so" "$LIBDIR/libnccl.so.$up"
  symlink "libnccl.so.$up" "$LIBDIR/libnccl.so.2"
  ldconfig_scripts
  finish
  pkg cuda libnccl-dev "$v" "NVIDIA Collective Communication Library (NCCL) Development Files (simulated)" \
    "Depends: libnccl2 (= $v)"
  text_file 0644 usr/include/nccl.h <<EOF
/* nccl.h: stand-in with NCCL's version macro layout (gpuprep simulated server) */
#ifndef NCCL_H_
#define NCCL_H_

#define NCCL_MAJOR ${p[0]}
#define NCCL_MINOR ${p[1]}
#define NCCL_PATCH ${p[2]}
#define NCCL_SUFFIX ""

#define NCCL_VERSION_CODE $code
#define NCCL_VERSION(X,Y,Z) (((X) <= 2 && (Y) <= 8) ? (X) * 1000 + (Y) * 100 + (Z) : (X) * 10000 + (Y) * 100 + (Z))

#endif
EOF
  symlink libnccl.so.2 "$LIBDIR/libnccl.so"
  finish
done

# ------------------------------------------------------------------ NVIDIA Container Toolkit (own repository)
# 1.20.1 is a test value (no such release was seen): a release after the current stacks' 1.20.0 in the same
# repository, so a test can tell the pin from apt's candidate.
CTK=nvidia-container-toolkit
for up in 1.17.8 1.19.1 1.20.0 1.20.1; do
  v=$up-1
  pkg $CTK libnvidia-container1 "$v" "NVIDIA container runtime library (simulated)"
  install_file 0644 "$BUILD/libnvidia-container.NVC.so" "$LIBDIR/libnvidia-container.so.$up"
  symlink "libnvidia-container.so.$up" "$LIBDIR/libnvidia-container.so.1"
  ldconfig_scripts
  finish
  pkg $CTK libnvidia-container-tools "$v" "NVIDIA container runtime library, command-line tools (simulated)" \
    "Depends: libnvidia-container1 (= $v)"
  text_file 0755 usr/bin/nvidia-container-cli <<<$'#!/bin/sh\n'"echo \"cli-version: $up\"; echo \"lib-version: $up\""
  finish
  pkg $CTK nvidia-container-toolkit-base "$v" "NVIDIA Container Toolkit Base (simulated)"
  text_file 0755 usr/bin/nvidia-ctk <<<$'#!/bin/sh\n'"echo \"NVIDIA Container Toolkit CLI version $up\""
  sed "s/@VERSION@/$up/" "$SRC_DIR/nvidia-container-runtime.py" | text_file 0755 usr/bin/nvidia-container-runtime
  finish
  pkg $CTK nvidia-container-toolkit "$v" "NVIDIA Container toolkit (simulated)" \
    "Depends: nvidia-container-toolkit-base (= $v), libnvidia-container-tools (= $v)"
  text_file 0755 usr/bin/nvidia-container-runtime-hook <"$SRC_DIR/nvidia-container-runtime-hook.py"
  finish
done

# ------------------------------------------------------------------ the distribution archive (Ubuntu jammy)
JAMMY=ubuntu/pool/jammy
UPDATES=ubuntu/pool/jammy-updates
# dkms: Debian's own kernel hooks (/etc/kernel/postinst.d/dkms, header_postinst.d/dkms, and the
# dkms_autoinstaller they run; lib.sh fetches Debian's dkms package into SIM_BOOT_TREE) around a stand-in dkms
# program (src/dkms.sh: records, and builds a module for a kernel only when its headers are there).
pkg $JAMMY dkms 3.0.3-1ubuntu1 "Dynamic Kernel Module Support Framework (simulated)"
install_file 0755 "$SRC_DIR/dkms.sh" usr/sbin/dkms
[[ -d ${SIM_BOOT_TREE:-}/dkms/etc/kernel/postinst.d ]] || { echo "build-packages: SIM_BOOT_TREE has no dkms hooks" >&2; exit 1; }
cp -a "$SIM_BOOT_TREE/dkms/." "$P/"
finish

pkg $JAMMY "linux-headers-$KREL" "${KREL%%-*}.1" "Linux kernel headers for $KREL (simulated)"
text_file 0644 "usr/src/linux-headers-$KREL/Makefile" <<<"# simulated kernel headers for $KREL"
symlink "/usr/src/linux-headers-$KREL" "lib/modules/$KREL/build"
finish

# The running kernel's extra modules (Ubuntu's linux-modules-extra-$(uname -r)), here only the InfiniBand umad
# module NVLSM needs. modules.dep belongs to depmod, which a kernel package's postinst runs: the stand-in's
# postinst adds (and its postrm removes) the module's line, so modprobe and gpuprep find it once installed.
# Its version is a test value, the headers stand-in's.
pkg $JAMMY "linux-modules-extra-$KREL" "${KREL%%-*}.1" "Linux kernel extra modules for $KREL (simulated)"
text_file 0644 "lib/modules/$KREL/kernel/drivers/infiniband/core/ib_umad.ko" <<<"simulated ib_umad.ko for $KREL"
script postinst "$(cat <<EOF
if [ "\$1" = configure ]; then
  dep=/lib/modules/$KREL/modules.dep
  grep -qs '^kernel/drivers/infiniband/core/ib_umad.ko:' "\$dep" || echo 'kernel/drivers/infiniband/core/ib_umad.ko:' >>"\$dep"
fi
EOF
)"
script postrm "$(cat <<EOF
if [ "\$1" = remove ] || [ "\$1" = purge ]; then
  dep=/lib/modules/$KREL/modules.dep
  if [ -f "\$dep" ]; then sed -i '\\|^kernel/drivers/infiniband/core/ib_umad.ko:|d' "\$dep"; fi
  if [ -f "\$dep" ] && [ ! -s "\$dep" ]; then rm -f "\$dep"; fi
fi
EOF
)"
finish

# A kernel update after apply: linux-image-K2 and linux-headers-K2, K2 newer than the running kernel (the next
# major release; lib.sh's sim_k2 says the same). As Debian's kernel packages do, the image's postinst runs
# depmod (here: writes modules.dep for its one in-tree module) and then every hook in /etc/kernel/postinst.d with
# the release and the image's path; the headers' postinst runs /etc/kernel/header_postinst.d with the release
# (Debian's kernel-handbook, "Kernel hooks"; linux's scripts/package/builddeb). The image ships /boot/vmlinuz-K2
# (which grub's 10_linux lists), /boot/config-K2 (zstd-compressed modules, as Ubuntu's kernels since 6.2 are
# configured) and a real ELF module with a .modinfo section, zstd-compressed; the headers ship include/ (what
# the dkms hooks test) and the /lib/modules/K2/build link.
K2=$((${KREL%%.*} + 1)).0.0-1-generic
pkg $UPDATES "linux-image-$K2" "${K2%-generic}.1" "Linux kernel image for version $K2 (simulated)"
text_file 0644 "boot/vmlinuz-$K2" <<<"simulated kernel image $K2"
text_file 0644 "boot/config-$K2" <<<"CONFIG_MODULES=y
CONFIG_MODULE_COMPRESS_ZSTD=y"
mkdir -p "$P/lib/modules/$K2/kernel/drivers/char"
printf 'int sim_dummy_init(void) { return 0; }\n' | gcc -c -x c -o "$BUILD/sim_dummy.ko" -
printf 'license=GPL\0name=sim_dummy\0vermagic=%s SMP mod_unload modversions \0' "$K2" >"$BUILD/sim_dummy.modinfo"
objcopy --add-section .modinfo="$BUILD/sim_dummy.modinfo" --set-section-flags .modinfo=alloc,readonly "$BUILD/sim_dummy.ko"
zstd -q -19 -f -o "$P/lib/modules/$K2/kernel/drivers/char/sim_dummy.ko.zst" "$BUILD/sim_dummy.ko"
script postinst "$(cat <<EOF
if [ "\$1" = configure ]; then
  dep=/lib/modules/$K2/modules.dep
  grep -qs '^kernel/drivers/char/sim_dummy.ko.zst:' "\$dep" || echo 'kernel/drivers/char/sim_dummy.ko.zst:' >>"\$dep"
  run-parts --report --exit-on-error --arg=$K2 --arg=/boot/vmlinuz-$K2 /etc/kernel/postinst.d
fi
EOF
)"
finish
pkg $UPDATES "linux-headers-$K2" "${K2%-generic}.1" "Linux kernel headers for $K2 (simulated)"
text_file 0644 "usr/src/linux-headers-$K2/Makefile" <<<"# simulated kernel headers for $K2"
text_file 0644 "usr/src/linux-headers-$K2/include/generated/utsrelease.h" <<<"#define UTS_RELEASE \"$K2\""
symlink "/usr/src/linux-headers-$K2" "lib/modules/$K2/build"
script postinst "$(cat <<EOF
if [ "\$1" = configure ]; then
  run-parts --report --exit-on-error --arg=$K2 /etc/kernel/header_postinst.d
fi
EOF
)"
finish

# The InfiniBand userspace MAD library NVLSM depends on (rdma-core's libibumad3, jammy's 39.0-1).
pkg $JAMMY libibumad3 39.0-1 "InfiniBand Userspace Management Datagram (uMAD) library (simulated)"
install_file 0644 "$BUILD/libibumad.so" "$LIBDIR/libibumad.so.3"
ldconfig_scripts
finish

# Kernel metas in both pockets (test values of Ubuntu's x.y.z.ABI.upload form), so a test can check that
# gpuprep never pins or holds linux-* packages and that `apt-get upgrade` still moves them.
for pocket in "$JAMMY 5.15.0.25.27" "$UPDATES 5.15.0.160.160"; do
  read -r origin v <<<"$pocket"
  meta "$origin" linux-image-generic "$v" "" "Generic Linux kernel image (simulated meta-package)"
  meta "$origin" linux-headers-generic "$v" "" "Generic Linux kernel headers (simulated meta-package)"
done

# Ubuntu's own build of R580 (nvidia-graphics-drivers-580, jammy-updates/security), with the same package
# names as NVIDIA's: above every release older stacks pin (without pins apt would move them to it), and the same
# upstream release as NVIDIA's 580.173.02-1ubuntu1 at a lower revision (an upstream pin alone would match both;
# gpuprep pins the exact revision the stack's repository has). Its fabric manager version is a test value.
driver_set $UPDATES 580 580.173.02 0ubuntu0.22.04.1 "proprietary open"
fm_pkg $UPDATES 580 580.173.02-0ubuntu0.22.04.1 580.173.02

# ------------------------------------------------------------------ build every queued package, two at a time
xargs -d '\n' -n 2 -P 2 dpkg-deb --root-owner-group -Zgzip -z1 --build <"$LIST" >/dev/null
echo "build-packages: $(($(wc -l <"$LIST") / 2)) packages" >&2
