#!/bin/bash
# gpuprep plan for stack test-r595-unbranched: the commands `gpuprep apply` runs, in order.
# Review, then run as root. Each command is exactly one argv; nothing relies on word splitting.
set -eu
if (set -o pipefail) 2>/dev/null; then set -o pipefail; fi
# the new driver loads only after a reboot
# layer driver: install - missing: nvidia-open=595.71.05-1ubuntu1, nvidia-driver-pinning-595=595.71.05-1ubuntu1; replace cuda-drivers-580, libnvidia-common-580, libnvidia-compute-580, nvidia-dkms-580-open, nvidia-driver-580-open, nvidia-kernel-common-580, nvidia-kernel-source-580-open, nvidia-utils-580 (another driver release, held outside gpuprep)
# layer fabricmanager: n/a - no NVSwitch on this host
# layer cuda: n/a - not part of stack test-r595-unbranched
# layer cudnn: n/a - not part of stack test-r595-unbranched
# layer nccl: n/a - not part of stack test-r595-unbranched
# layer docker: none - Docker 5:24.0.7-1~ubuntu.22.04~jammy is installed; an existing engine is left as it is
# layer container_toolkit: n/a - not part of stack test-r595-unbranched
# layer image: install - not pulled
tmp="$(mktemp -d)"
trap 'rm -rf -- "$tmp"' EXIT
gpuprep_backup() {
  [ -e "$1" ] || return 0
  local b="$1.gpuprep-bak" i=0
  while [ -e "$b" ] || [ -L "$b" ]; do
    if cmp -s -- "$1" "$b"; then return 0; fi
    i=$((i + 1))
    b="$1.gpuprep-bak.$i"
  done
  cp -p -- "$1" "$b"
}
gpuprep_write() {
  if [ -d "$1" ] && [ ! -L "$1" ]; then echo "gpuprep: $1: is a directory" >&2; exit 1; fi
  mkdir -p -- "$(dirname -- "$1")"
  local new
  new="$(mktemp -- "$1.gpuprep-new.XXXXXXXXXXXXXXXX")"
  cat > "$new"
  chmod "$2" "$new"
  if [ "$3" = backup ]; then gpuprep_backup "$1"; fi
  mv -f -T -- "$new" "$1"
}

# 1. repository cuda: fetch the signing key https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64/3bf863cc.pub and check its fingerprint [repo.cuda.key]
curl --fail --silent --show-error --location --proto-redir =https --output "$tmp/key1" https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64/3bf863cc.pub
mkdir -m 0700 "$tmp/gnupg1"
gpg --batch --quiet --no-autostart --homedir "$tmp/gnupg1" --import "$tmp/key1" || true
gpg --batch --quiet --no-autostart --homedir "$tmp/gnupg1" --export EB693B3035CD5710E231E123A4B469963BF863CC > "$tmp/key1.pinned"
if [ "$(gpg --batch --quiet --no-autostart --homedir "$tmp/gnupg1" --show-keys --with-colons "$tmp/key1.pinned" | awk -F: '$1 == "pub" { p = 1; next } $1 == "fpr" && p { print $10; p = 0 }')" != EB693B3035CD5710E231E123A4B469963BF863CC ]; then
  echo 'gpuprep: https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64/3bf863cc.pub does not hold the pinned key EB693B3035CD5710E231E123A4B469963BF863CC' >&2; exit 1
fi
gpuprep_write /usr/share/keyrings/cuda-archive-keyring.gpg 0644 backup < "$tmp/key1.pinned"

# 2. repository cuda: /etc/apt/sources.list.d/cuda-ubuntu2204-x86_64.list [repo.cuda.list]
gpuprep_write /etc/apt/sources.list.d/cuda-ubuntu2204-x86_64.list 0644 replace <<'GPUPREP_EOF'
# gpuprep: repository cuda of stack test-r595-unbranched (do not edit; gpuprep apply rewrites it)
deb [signed-by=/usr/share/keyrings/cuda-archive-keyring.gpg] https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64/ /
GPUPREP_EOF

# 3. refresh the package lists [apt.update]
DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 -o Acquire::GzipIndexes=false update

# 4. pin every package of the stack at its exact version (/etc/apt/preferences.d/gpuprep, priority 1001) [apt.pin]
gpuprep_write /etc/apt/preferences.d/gpuprep 0644 replace <<'GPUPREP_EOF'
# gpuprep: the packages of stack test-r595-unbranched at their exact versions (do not edit; gpuprep apply
# rewrites it, and `gpuprep apply` with another stack replaces it). Priority 1001 > 1000: apt takes these
# versions from any origin, and upgrades cannot move them.

Explanation: gpuprep layers: driver
Package: libnvidia-compute
Pin: version 595.71.05-1ubuntu1
Pin-Priority: 1001

Explanation: gpuprep layers: driver
Package: nvidia-compute-utils
Pin: version 595.71.05-1ubuntu1
Pin-Priority: 1001

Explanation: gpuprep layers: driver
Package: nvidia-dkms-open
Pin: version 595.71.05-1ubuntu1
Pin-Priority: 1001

Explanation: gpuprep layers: driver
Package: nvidia-driver-open
Pin: version 595.71.05-1ubuntu1
Pin-Priority: 1001

Explanation: gpuprep layers: driver
Package: nvidia-driver-pinning-595
Pin: version 595.71.05-1ubuntu1
Pin-Priority: 1001

Explanation: gpuprep layers: driver
Package: nvidia-open
Pin: version 595.71.05-1ubuntu1
Pin-Priority: 1001

Explanation: gpuprep layers: driver
Package: nvidia-utils
Pin: version 595.71.05-1ubuntu1
Pin-Priority: 1001
GPUPREP_EOF

# 5. one apt transaction for every missing package, pinned exactly [apt.install]
DEBIAN_FRONTEND=noninteractive apt-get -y -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold -o DPkg::Lock::Timeout=600 --allow-change-held-packages install -- nvidia-open=595.71.05-1ubuntu1 nvidia-driver-pinning-595=595.71.05-1ubuntu1 libnvidia-compute=595.71.05-1ubuntu1 nvidia-compute-utils=595.71.05-1ubuntu1 nvidia-dkms-open=595.71.05-1ubuntu1 nvidia-driver-open=595.71.05-1ubuntu1 nvidia-utils=595.71.05-1ubuntu1

# 6. hold every pinned package so upgrades cannot move them [apt.hold]
apt-mark hold -- libnvidia-compute nvidia-compute-utils nvidia-dkms-open nvidia-driver-open nvidia-driver-pinning-595 nvidia-open nvidia-utils

# 7. reboot if the new driver is not the loaded one [reboot.check]
if [ -e /var/run/reboot-required ] || ! grep -qs ' 595.71.05 ' /proc/driver/nvidia/version; then
  echo 'gpuprep: a reboot is required; reboot, then run the rest of this script' >&2
  exit 3
fi

# 8. pull nvcr.io/nvidia/cuda:13.0.0-base-ubuntu22.04 through the Docker Engine API [image.pull]
docker pull nvcr.io/nvidia/cuda:13.0.0-base-ubuntu22.04

# 9. verify driver [verify.driver]
gpuprep --root @ROOT@ --manifest @SRC@/tests/fixtures/golden-cases/r595-unbranched/stack.yaml --manifest-sha256 b4c035b6ff7cd41ef453690597f1dba700d524556587b52b596b622b04324d81 verify --only driver

# 10. verify image [verify.image]
gpuprep --root @ROOT@ --manifest @SRC@/tests/fixtures/golden-cases/r595-unbranched/stack.yaml --manifest-sha256 b4c035b6ff7cd41ef453690597f1dba700d524556587b52b596b622b04324d81 verify --only image
