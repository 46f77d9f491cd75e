#!/bin/bash
# Runs inside a new simulated server once (lib.sh: sim_new_host): turns the overlay of this Debian machine
# into a bare Ubuntu 22.04 GPU server: os-release, no apt sources or lists, no CUDA, recording stand-ins
# for everything that would reach the real machine (systemctl, reboot, initramfs, kernel modules).
set -euo pipefail
rm -f /etc/os-release /usr/lib/os-release
cat >/usr/lib/os-release <<'OS'
PRETTY_NAME="Ubuntu 22.04.4 LTS"
NAME="Ubuntu"
VERSION_ID="22.04"
VERSION="22.04.4 LTS (Jammy Jellyfish)"
VERSION_CODENAME=jammy
ID=ubuntu
ID_LIKE=debian
HOME_URL="https://www.ubuntu.com/"
SUPPORT_URL="https://help.ubuntu.com/"
BUG_REPORT_URL="https://bugs.launchpad.net/ubuntu/"
PRIVACY_POLICY_URL="https://www.ubuntu.com/legal/terms-and-policies/privacy-policy"
UBUNTU_CODENAME=jammy
OS
ln -s ../usr/lib/os-release /etc/os-release
printf 'DISTRIB_ID=Ubuntu\nDISTRIB_RELEASE=22.04\nDISTRIB_CODENAME=jammy\nDISTRIB_DESCRIPTION="Ubuntu 22.04.4 LTS"\n' >/etc/lsb-release
echo "bookworm/sid" >/etc/debian_version

# apt talks only to the simulated distribution archive (below) and the repositories gpuprep adds.
mkdir -p /etc/apt/sources-disabled-by-sim
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*; do
  [[ -e $f ]] && mv "$f" /etc/apt/sources-disabled-by-sim/
done
rm -rf /var/lib/apt/lists
# A server keeps its lists uncompressed; this build machine's container image compresses them.
rm -f /etc/apt/apt.conf.d/docker-gzip-indexes
mkdir -p /var/lib/apt/lists/partial
rm -f /var/cache/apt/*.bin

# No CUDA, cuDNN or NCCL installed by hand (this build machine has them under /usr/local/cuda-*).
for d in /usr/local/cuda /usr/local/cuda-*; do
  [[ -e $d || -L $d ]] && rm -rf "$d"
done
for f in /etc/ld.so.conf.d/*; do
  grep -qs cuda "$f" && rm -f "$f"
done
ldconfig

# Test speed: dpkg skips its fsync()s (the sim's "power cut" kills processes; the page cache survives).
echo force-unsafe-io >/etc/dpkg/dpkg.cfg.d/gpuprep-sim-unsafe-io
# and man-db's trigger does not rebuild its index after every install (a seventh of a scenario's CPU time):
# the setting `dpkg-reconfigure man-db` writes when "auto-update" is answered no, as minimised cloud images ship.
rm -f /var/lib/man-db/auto-update

# Ubuntu ships /etc/modprobe.d (this Debian machine has no kmod, so no such directory).
mkdir -p /etc/modprobe.d

# The loopback repository's throwaway certificate is trusted here (the bundle libcurl and apt read).
if [[ -f /sim/guest/tls.crt ]]; then
  cat /sim/guest/tls.crt >>/etc/ssl/certs/ca-certificates.crt
fi

# The distribution archive (the simulated jammy and jammy-updates), configured as on an Ubuntu server: its
# key in trusted.gpg.d (as the ubuntu-keyring package installs it), /etc/apt/sources.list, lists downloaded.
# This Debian machine's archive keys go first: an Ubuntu server has none of them, and apt-key dearmors every
# .asc there (one gpg per key) at each InRelease it verifies, a third of an apt-get update's time here.
mkdir -p /etc/apt/trusted-disabled-by-sim
for f in /etc/apt/trusted.gpg.d/*; do
  [[ -e $f ]] && mv "$f" /etc/apt/trusted-disabled-by-sim/
done
install -m 0644 /sim/guest/ubuntu-archive-keyring.gpg /etc/apt/trusted.gpg.d/ubuntu-keyring-2018-archive.gpg
install -m 0644 /sim/guest/sources.list /etc/apt/sources.list
apt-get -qq update

# A server runs what its packages start: this build machine's container image forbids it (policy-rc.d exit
# 101); an Ubuntu server has no such file.
rm -f /usr/sbin/policy-rc.d

# Recording stand-ins; the real apt-get is kept and counted.
install -d /usr/lib/gpuprep-sim /var/lib/gpuprep-sim
install -m 0755 /sim/guest/record /usr/lib/gpuprep-sim/record
for c in reboot shutdown poweroff halt update-initramfs rmmod insmod dkms; do
  rm -f "/usr/sbin/$c"
  ln -s /usr/lib/gpuprep-sim/record "/usr/sbin/$c"
done
# modprobe records too, and loads what the running kernel has (guest/modprobe)
install -m 0755 /sim/guest/modprobe /usr/lib/gpuprep-sim/modprobe
rm -f /usr/sbin/modprobe
ln -s /usr/lib/gpuprep-sim/modprobe /usr/sbin/modprobe
rm -f /usr/bin/systemctl
install -m 0755 /sim/guest/systemctl /usr/bin/systemctl
mv /usr/bin/apt-get /usr/lib/gpuprep-sim/apt-get.real
install -m 0755 /sim/guest/apt-get /usr/bin/apt-get
install -m 0755 /sim/guest/sim-holdlock /usr/local/bin/sim-holdlock
# systemd's part for the container engine (guest/docker-daemon): runs Debian's dockerd once docker.io is in
install -d /usr/lib/gpuprep-sim/daemons
install -m 0755 /sim/guest/docker-daemon /usr/lib/gpuprep-sim/daemons/docker.service
# The host's name resolution as the scenarios set it (the registry playing nvcr.io answers on 127.0.0.1).
[[ -e /etc/hosts ]] || printf '127.0.0.1 localhost\n' >/etc/hosts
# gpuprep as an admin would have it on PATH (the binary under test)
ln -sfn /sim/bin/gpuprep /usr/local/bin/gpuprep
