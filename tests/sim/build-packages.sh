#!/usr/bin/env bash
# build-packages.sh OUT_DIR BUILD_DIR: builds the simulated GPU server's stub packages (named and versioned
# like NVIDIA's, tests/sim/README.md) into OUT_DIR/*.deb. Stand-in libraries and nvidia-smi are compiled
# from tests/sim/src/*.c into BUILD_DIR first. Never commit the results.
set -euo pipefail
OUT=$1
BUILD=$2
SRC_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/src
mkdir -p "$OUT" "$BUILD"

# The stack the test manifest pins (tests/sim/stack.yaml.in); versions as NVIDIA's repositories spell them
# (shared/facts/nvidia-compat.md §3.2, §3.3).
DRV=535.129.03            # driver branch 535
DRV_UBUNTU=$DRV-0ubuntu1  # nvidia-driver-535 and its parts, as in NVIDIA's CUDA repo
DRV_NV=$DRV-1             # cuda-drivers-535, nvidia-fabricmanager-535
CUDA_PKG=12.2.2-1         # cuda-toolkit-12-2
CUDA_COMP=12.2.140        # cudart / nvcc of CUDA 12.2.2 (https://developer.download.nvidia.com/compute/cuda/redist/redistrib_12.2.2.json)
CUDNN=8.9.7.29-1+cuda12.2
NCCL=2.18.5-1+cuda12.2
CTK=1.17.8-1
KREL=$(uname -r)
ARCH=$(dpkg --print-architecture)
MA=$(gcc -print-multiarch)   # x86_64-linux-gnu
LIBDIR=usr/lib/$MA

# ------------------------------------------------------------------ stand-in binaries
CF=(-O2 -Wall -Wextra -Werror -DSIM_DRIVER_VERSION="\"$DRV\"" -DSIM_CUDA_MAJOR=12 -DSIM_CUDA_DRIVER_API=12020)
gcc "${CF[@]}" -shared -fPIC -Wl,-soname,libnvidia-ml.so.1 -o "$BUILD/libnvidia-ml.so.$DRV" "$SRC_DIR/nvml.c"
gcc "${CF[@]}" -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$BUILD/libcuda.so.$DRV" "$SRC_DIR/cuda.c"
gcc "${CF[@]}" -o "$BUILD/nvidia-smi" "$SRC_DIR/nvidia-smi.c" -ldl
gcc -O2 -Wall -Werror -o "$BUILD/sim-holdlock" "$SRC_DIR/holdlock.c"
verlib() {  # verlib OUT SONAME FUNC VALUE [out-param]
  gcc -O2 -Wall -Werror -shared -fPIC -Wl,-soname,"$2" -DSIM_FUNC="$3" -DSIM_VALUE="$4" ${5:+-DSIM_OUT_PARAM} \
    -o "$BUILD/$1" "$SRC_DIR/versionlib.c"
}
verlib libcudnn.so.8.9.7 libcudnn.so.8 cudnnGetVersion 8907          # cuDNN 8: MAJOR*1000+MINOR*100+PATCH
verlib libnccl.so.2.18.5 libnccl.so.2 ncclGetVersion 21805 out       # NCCL >= 2.9: X*10000+Y*100+Z
verlib libcudart.so.$CUDA_COMP libcudart.so.12 cudaRuntimeGetVersion 12020 out
verlib libnvidia-container.so.1.17.8 libnvidia-container.so.1 nvc_version_sim 1178

# ------------------------------------------------------------------ package helper
STAGE=$BUILD/stage
# pkg NAME VERSION ARCH DEPENDS DESCRIPTION: starts a package tree in $P (files are added by the caller,
# then `finish` builds it). Maintainer scripts: write $P/DEBIAN/{postinst,postrm} before finish.
pkg() {
  P=$STAGE/$1
  rm -rf "$P"
  mkdir -p "$P/DEBIAN" "$P/usr/share/doc/$1"
  {
    echo "Package: $1"
    echo "Version: $2"
    echo "Architecture: $3"
    echo "Maintainer: gpuprep simulated server <gpuprep-sim@localhost>"
    [[ -n $4 ]] && echo "Depends: $4"
    echo "Section: sim"
    echo "Priority: optional"
    echo "Description: $5"
    echo " Stand-in package of the gpuprep simulated GPU server (tests/sim); not NVIDIA software."
  } >"$P/DEBIAN/control"
  echo "gpuprep simulated package $1 $2" >"$P/usr/share/doc/$1/README.sim"
  PKG_FILE=$OUT/${1}_${2//:/%3a}_$3.deb
}
script() {  # script NAME (postinst|postrm|preinst) BODY
  printf '#!/bin/sh\nset -e\n%s\n' "$3" >"$STAGE/$1/DEBIAN/$2"
  chmod 0755 "$STAGE/$1/DEBIAN/$2"
}
finish() {
  dpkg-deb --root-owner-group -Zgzip -z1 --build "$P" "$PKG_FILE" >/dev/null
}
install_file() {  # install_file MODE SRC DEST (DEST relative to the package root)
  mkdir -p "$(dirname "$P/$3")"
  install -m "$1" "$2" "$P/$3"
}
text_file() {  # text_file MODE DEST <<EOF
  mkdir -p "$(dirname "$P/$2")"
  cat >"$P/$2"
  chmod "$1" "$P/$2"
}
ldconfig_scripts() {
  script "$1" postinst 'if [ "$1" = configure ]; then ldconfig; fi'
  script "$1" postrm 'if [ "$1" = remove ] || [ "$1" = purge ]; then ldconfig; fi'
}

# ------------------------------------------------------------------ driver 535
pkg dkms 0.0.1-sim1 all "" "Dynamic Kernel Module Support Framework (simulated)"
text_file 0755 usr/sbin/dkms <<'EOF'
#!/bin/bash
# Simulated dkms: records its argv in /sim/log/commands.log, builds nothing.
line=dkms; for a in "$@"; do line+=" $(printf '%q' "$a")"; done
echo "$line" >>/sim/log/commands.log 2>/dev/null || true
EOF
finish

pkg "linux-headers-$KREL" "${KREL%%-*}.1" "$ARCH" "" "Linux kernel headers for $KREL (simulated)"
text_file 0644 "usr/src/linux-headers-$KREL/Makefile" <<<"# simulated kernel headers for $KREL"
mkdir -p "$P/lib/modules/$KREL"
ln -s "/usr/src/linux-headers-$KREL" "$P/lib/modules/$KREL/build"
finish

pkg nvidia-dkms-535 "$DRV_UBUNTU" "$ARCH" "dkms" "NVIDIA DKMS package (simulated)"
text_file 0644 "usr/src/nvidia-$DRV/dkms.conf" <<EOF
PACKAGE_NAME="nvidia"
PACKAGE_VERSION="$DRV"
AUTOINSTALL="yes"
EOF
# The DKMS build is what takes minutes on a real server; /sim/control/slow-postinst makes it slow here so a
# scenario can kill apply in the middle of it. The "installed module" is what a reboot will load.
script nvidia-dkms-535 postinst "$(cat <<EOF
if [ "\$1" = configure ]; then
  if [ -e /sim/control/slow-postinst ]; then
    touch /sim/control/postinst-running
    sleep 60
  fi
  dkms add -m nvidia -v $DRV
  dkms build -m nvidia -v $DRV
  dkms install -m nvidia -v $DRV
  mkdir -p /lib/modules/\$(uname -r)/updates/dkms /var/lib/gpuprep-sim
  echo "simulated nvidia.ko version $DRV" >/lib/modules/\$(uname -r)/updates/dkms/nvidia.ko
  echo $DRV >/var/lib/gpuprep-sim/nvidia-module-version
  # like Ubuntu's update-notifier hook
  touch /var/run/reboot-required
  echo nvidia-dkms-535 >>/var/run/reboot-required.pkgs
fi
EOF
)"
script nvidia-dkms-535 postrm "$(cat <<EOF
if [ "\$1" = remove ] || [ "\$1" = purge ]; then
  rm -f /var/lib/gpuprep-sim/nvidia-module-version /lib/modules/\$(uname -r)/updates/dkms/nvidia.ko
fi
EOF
)"
finish

pkg libnvidia-compute-535 "$DRV_UBUNTU" "$ARCH" "" "NVIDIA libcompute package (simulated NVML and CUDA driver)"
install_file 0644 "$BUILD/libnvidia-ml.so.$DRV" "$LIBDIR/libnvidia-ml.so.$DRV"
install_file 0644 "$BUILD/libcuda.so.$DRV" "$LIBDIR/libcuda.so.$DRV"
ln -s "libnvidia-ml.so.$DRV" "$P/$LIBDIR/libnvidia-ml.so.1"
ln -s "libcuda.so.$DRV" "$P/$LIBDIR/libcuda.so.1"
ln -s libcuda.so.1 "$P/$LIBDIR/libcuda.so"
ldconfig_scripts libnvidia-compute-535
finish

pkg nvidia-utils-535 "$DRV_UBUNTU" "$ARCH" "libnvidia-compute-535 (= $DRV_UBUNTU)" "NVIDIA driver support binaries (simulated nvidia-smi)"
install_file 0755 "$BUILD/nvidia-smi" usr/bin/nvidia-smi
finish

pkg nvidia-compute-utils-535 "$DRV_UBUNTU" "$ARCH" "" "NVIDIA compute utilities (simulated persistence daemon)"
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

pkg nvidia-driver-535 "$DRV_UBUNTU" "$ARCH" \
  "nvidia-dkms-535 (= $DRV_UBUNTU), libnvidia-compute-535 (= $DRV_UBUNTU), nvidia-utils-535 (= $DRV_UBUNTU), nvidia-compute-utils-535 (= $DRV_UBUNTU)" \
  "NVIDIA driver metapackage (simulated)"
finish

pkg cuda-drivers-535 "$DRV_NV" "$ARCH" "nvidia-driver-535 (>= $DRV)" "CUDA Driver meta-package, branch-specific (simulated)"
finish

pkg cuda-drivers "$DRV_NV" "$ARCH" "cuda-drivers-535 (= $DRV_NV)" "CUDA Driver meta-package (simulated)"
finish

pkg nvidia-fabricmanager-535 "$DRV_NV" "$ARCH" "" "Fabric Manager for NVSwitch based systems (simulated)"
text_file 0755 usr/bin/nv-fabricmanager <<<"#!/bin/sh
echo 'Fabric Manager version is : $DRV'"
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

# ------------------------------------------------------------------ CUDA 12.2
CUDA_ROOT=usr/local/cuda-12.2
pkg cuda-cudart-12-2 "$CUDA_COMP-1" "$ARCH" "" "CUDA Runtime native Libraries (simulated)"
install_file 0644 "$BUILD/libcudart.so.$CUDA_COMP" "$CUDA_ROOT/targets/x86_64-linux/lib/libcudart.so.$CUDA_COMP"
ln -s "libcudart.so.$CUDA_COMP" "$P/$CUDA_ROOT/targets/x86_64-linux/lib/libcudart.so.12"
ln -s targets/x86_64-linux/lib "$P/$CUDA_ROOT/lib64"
text_file 0644 etc/ld.so.conf.d/988_cuda-12.conf <<<"/usr/local/cuda-12.2/targets/x86_64-linux/lib"
ldconfig_scripts cuda-cudart-12-2
finish

pkg cuda-nvcc-12-2 "$CUDA_COMP-1" "$ARCH" "" "CUDA nvcc (simulated: prints its version only)"
text_file 0755 "$CUDA_ROOT/bin/nvcc" <<'EOF'
#!/bin/sh
# Simulated nvcc: only --version, in nvcc's format.
cat <<'V'
nvcc: NVIDIA (R) Cuda compiler driver
Copyright (c) 2005-2023 NVIDIA Corporation
Cuda compilation tools, release 12.2, V12.2.140
V
EOF
finish

pkg cuda-toolkit-12-2 "$CUDA_PKG" "$ARCH" "cuda-cudart-12-2 (>= $CUDA_COMP), cuda-nvcc-12-2 (>= $CUDA_COMP)" "CUDA Toolkit 12.2 meta-package (simulated)"
text_file 0644 "$CUDA_ROOT/version.json" <<EOF
{
   "cuda" : {
      "name" : "CUDA SDK",
      "version" : "12.2.20230823"
   },
   "cuda_cudart" : {
      "name" : "CUDA Runtime (cudart)",
      "version" : "$CUDA_COMP"
   },
   "cuda_nvcc" : {
      "name" : "CUDA NVCC",
      "version" : "$CUDA_COMP"
   }
}
EOF
script cuda-toolkit-12-2 postinst 'if [ "$1" = configure ]; then update-alternatives --install /usr/local/cuda cuda /usr/local/cuda-12.2 122; fi'
script cuda-toolkit-12-2 postrm 'if [ "$1" = remove ]; then update-alternatives --remove cuda /usr/local/cuda-12.2; fi'
finish

# ------------------------------------------------------------------ cuDNN 8.9.7, NCCL 2.18.5
pkg libcudnn8 "$CUDNN" "$ARCH" "" "cuDNN runtime libraries (simulated)"
install_file 0644 "$BUILD/libcudnn.so.8.9.7" "$LIBDIR/libcudnn.so.8.9.7"
ln -s libcudnn.so.8.9.7 "$P/$LIBDIR/libcudnn.so.8"
ldconfig_scripts libcudnn8
finish

pkg libcudnn8-dev "$CUDNN" "$ARCH" "libcudnn8 (= $CUDNN)" "cuDNN development headers (simulated)"
text_file 0644 usr/include/cudnn_version.h <<'EOF'
/* cudnn_version.h: stand-in with the cuDNN 8 macro layout (gpuprep simulated server) */
#ifndef CUDNN_VERSION_H_
#define CUDNN_VERSION_H_

#define CUDNN_MAJOR 8
#define CUDNN_MINOR 9
#define CUDNN_PATCHLEVEL 7

#define CUDNN_VERSION (CUDNN_MAJOR * 1000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)

#endif /* CUDNN_VERSION_H */
EOF
mkdir -p "$P/$LIBDIR" && ln -s libcudnn.so.8 "$P/$LIBDIR/libcudnn.so"
finish

pkg libnccl2 "$NCCL" "$ARCH" "" "NVIDIA Collective Communication Library (NCCL) Runtime (simulated)"
install_file 0644 "$BUILD/libnccl.so.2.18.5" "$LIBDIR/libnccl.so.2.18.5"
ln -s libnccl.so.2.18.5 "$P/$LIBDIR/libnccl.so.2"
ldconfig_scripts libnccl2
finish

pkg libnccl-dev "$NCCL" "$ARCH" "libnccl2 (= $NCCL)" "NVIDIA Collective Communication Library (NCCL) Development Files (simulated)"
text_file 0644 usr/include/nccl.h <<'EOF'
/* nccl.h: stand-in with NCCL's version macro layout (gpuprep simulated server) */
#ifndef NCCL_H_
#define NCCL_H_

#define NCCL_MAJOR 2
#define NCCL_MINOR 18
#define NCCL_PATCH 5
#define NCCL_SUFFIX ""

#define NCCL_VERSION_CODE 21805
#define NCCL_VERSION(X,Y,Z) (((X) <= 2 && (Y) <= 8) ? (X) * 1000 + (Y) * 100 + (Z) : (X) * 10000 + (Y) * 100 + (Z))

#endif
EOF
mkdir -p "$P/$LIBDIR" && ln -s libnccl.so.2 "$P/$LIBDIR/libnccl.so"
finish

# ------------------------------------------------------------------ NVIDIA Container Toolkit 1.17.8
pkg libnvidia-container1 "$CTK" "$ARCH" "" "NVIDIA container runtime library (simulated)"
install_file 0644 "$BUILD/libnvidia-container.so.1.17.8" "$LIBDIR/libnvidia-container.so.1.17.8"
ln -s libnvidia-container.so.1.17.8 "$P/$LIBDIR/libnvidia-container.so.1"
ldconfig_scripts libnvidia-container1
finish
pkg libnvidia-container-tools "$CTK" "$ARCH" "libnvidia-container1 (= $CTK)" "NVIDIA container runtime library, command-line tools (simulated)"
text_file 0755 usr/bin/nvidia-container-cli <<<$'#!/bin/sh\necho "cli-version: 1.17.8"\necho "lib-version: 1.17.8"'
finish
pkg nvidia-container-toolkit-base "$CTK" "$ARCH" "" "NVIDIA Container Toolkit Base (simulated)"
text_file 0755 usr/bin/nvidia-ctk <<<$'#!/bin/sh\necho "NVIDIA Container Toolkit CLI version 1.17.8"\necho "commit: f202b80a9b9d0db00d9b1d73c0128c8962c55f4d"'
text_file 0755 usr/bin/nvidia-container-runtime <<<$'#!/bin/sh\necho "NVIDIA Container Runtime version 1.17.8"'
finish
pkg nvidia-container-toolkit "$CTK" "$ARCH" "nvidia-container-toolkit-base (= $CTK), libnvidia-container-tools (= $CTK)" "NVIDIA Container toolkit (simulated)"
text_file 0755 usr/bin/nvidia-container-runtime-hook <<<$'#!/bin/sh\nexit 0'
finish

