#!/usr/bin/env bash
# make-apt-history.sh GPUPREP SRC BUILD_DIR OUT: writes OUT, the /var/log/apt/history.log of a simulated
# server (lib.sh) on which Debian's own unattended-upgrades moved the NVIDIA driver: an admin installs R535 at
# 535.129.03 from NVIDIA's repository with apt-get (no gpuprep: nothing pinned or held) and lets
# unattended-upgrades take NVIDIA's repository and the distribution's updates pocket (Origins-Pattern, as
# admins add a vendor's repository); `unattended-upgrade` then upgrades the driver and the kernel metas.
# unattended-upgrades and python3-distro-info are Debian's packages, fetched with `apt-get download` into
# BUILD_DIR/tests-sim-uu/ and installed with dpkg inside the simulated server. Run by hand, as root, to remake
# tests/fixtures/apt-history/unattended-upgrades.log (dates are the run's); not a ctest.
set -uo pipefail
GPUPREP=$1
SRC=$2
BUILD=$3
OUT=$4
source "$SRC/tests/sim/lib.sh"
sim_require
sim_init "$GPUPREP" "$SRC" "$BUILD"
sim_new_host
mkdir -p "$BUILD/tests-sim-uu"
(cd "$BUILD/tests-sim-uu" && rm -f ./*.deb && apt-get download -qq -o APT::Sandbox::User=root unattended-upgrades python3-distro-info) ||
  sim_fail "apt-get download unattended-upgrades python3-distro-info"
mkdir -p "$SIM_HOST/sim/uu" && cp "$BUILD"/tests-sim-uu/*.deb "$SIM_HOST/sim/uu/"
cp "$SIM_DIR/www/cuda.gpg" "$SIM_HOST/sim/uu/cuda-archive-keyring.gpg"
V=535.129.03-0ubuntu1
sim_run bash -ec "
  DEBIAN_FRONTEND=noninteractive dpkg -i /sim/uu/*.deb >/sim/uu/dpkg.out 2>&1
  # NVIDIA's repository as its install guide adds it (signed-by its keyring)
  install -m 0644 /sim/uu/cuda-archive-keyring.gpg /usr/share/keyrings/cuda-archive-keyring.gpg
  echo 'deb [signed-by=/usr/share/keyrings/cuda-archive-keyring.gpg] $SIM_URL/cuda/ /' >/etc/apt/sources.list.d/cuda.list
  /usr/lib/gpuprep-sim/apt-get.real -qq update
  : >/var/log/apt/history.log  # the build machine's own runs (the overlay's lower layer) are not this server's
  # apt writes argv[0] as the program was called: the admin's apt-get, not the simulated server's shim
  DEBIAN_FRONTEND=noninteractive bash -c 'exec -a apt-get /usr/lib/gpuprep-sim/apt-get.real \"\$@\"' apt-get -y -q install \
    nvidia-driver-535=$V nvidia-dkms-535=$V libnvidia-compute-535=$V nvidia-utils-535=$V nvidia-compute-utils-535=$V \
    linux-image-generic=5.15.0.25.27 >/sim/uu/install.out 2>&1
  cat >/etc/apt/apt.conf.d/51unattended-upgrades-local <<'CONF'
Unattended-Upgrade::Origins-Pattern {
  \"origin=NVIDIA,label=NVIDIA CUDA\";
  \"origin=Ubuntu,archive=jammy-updates\";
};
CONF
  unattended-upgrade -v >/sim/uu/unattended-upgrade.out 2>&1
  cp /var/log/apt/history.log /sim/uu/history.log" || { cat "$SIM_HOST"/sim/uu/*.out >&2; sim_fail "the unattended-upgrades run"; }
cp "$SIM_HOST/sim/uu/history.log" "$OUT"
grep -q '^Commandline: .*unattended-upgrade' "$OUT" || { cat "$SIM_HOST/sim/uu/unattended-upgrade.out" >&2; sim_fail "unattended-upgrades wrote no history entry"; }
echo "wrote $OUT"
