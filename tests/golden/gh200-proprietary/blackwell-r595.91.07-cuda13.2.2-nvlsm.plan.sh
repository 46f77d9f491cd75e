#!/bin/bash
# gpuprep plan for stack blackwell-r595.91.07-cuda13.2.2-nvlsm: the commands `gpuprep apply` runs, in order.
# Review, then run as root. Each command is exactly one argv; nothing relies on word splitting.
set -eu
if (set -o pipefail) 2>/dev/null; then set -o pipefail; fi
# layer driver: refused - GPU 0000:18:00.0 (GH200 120GB) is hopper, which stack blackwell-r595.91.07-cuda13.2.2-nvlsm does not support (blackwell); choose a stack for hopper GPUs with --manifest
# layer fabricmanager: install - missing: nvidia-fabricmanager-595 595.91.07
# layer cuda: install - missing: cuda-toolkit-13-2 13.2.2
# layer cudnn: install - missing: libcudnn9-cuda-13 9.25.1.1 (+cuda13.2), libcudnn9-dev-cuda-13 9.25.1.1 (+cuda13.2)
# layer nccl: install - missing: libnccl2 2.29.7 (+cuda13.2), libnccl-dev 2.29.7 (+cuda13.2)
# layer docker: none - Docker 5:24.0.7-1~ubuntu.22.04~jammy is installed; an existing engine is left as it is
# layer container_toolkit: install - missing: nvidia-container-toolkit 1.20.0, nvidia-container-toolkit-base 1.20.0, libnvidia-container-tools 1.20.0, libnvidia-container1 1.20.0
# layer image: install - not pulled
echo 'blocked: GPU 0000:18:00.0 (GH200 120GB) is hopper, which stack blackwell-r595.91.07-cuda13.2.2-nvlsm does not support (blackwell); choose a stack for hopper GPUs with --manifest' >&2; exit 1
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
# gpuprep: repository cuda of stack blackwell-r595.91.07-cuda13.2.2-nvlsm (do not edit; gpuprep apply rewrites it)
deb [signed-by=/usr/share/keyrings/cuda-archive-keyring.gpg] https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64/ /
GPUPREP_EOF

# 3. repository nvidia-container-toolkit: fetch the signing key https://nvidia.github.io/libnvidia-container/gpgkey and check its fingerprint [repo.nvidia-container-toolkit.key]
curl --fail --silent --show-error --location --proto-redir =https --output "$tmp/key3" https://nvidia.github.io/libnvidia-container/gpgkey
mkdir -m 0700 "$tmp/gnupg3"
gpg --batch --quiet --no-autostart --homedir "$tmp/gnupg3" --import "$tmp/key3" || true
gpg --batch --quiet --no-autostart --homedir "$tmp/gnupg3" --export C95B321B61E88C1809C4F759DDCAE044F796ECB0 > "$tmp/key3.pinned"
if [ "$(gpg --batch --quiet --no-autostart --homedir "$tmp/gnupg3" --show-keys --with-colons "$tmp/key3.pinned" | awk -F: '$1 == "pub" { p = 1; next } $1 == "fpr" && p { print $10; p = 0 }')" != C95B321B61E88C1809C4F759DDCAE044F796ECB0 ]; then
  echo 'gpuprep: https://nvidia.github.io/libnvidia-container/gpgkey does not hold the pinned key C95B321B61E88C1809C4F759DDCAE044F796ECB0' >&2; exit 1
fi
gpuprep_write /usr/share/keyrings/nvidia-container-toolkit-keyring.gpg 0644 backup < "$tmp/key3.pinned"

# 4. repository nvidia-container-toolkit: /etc/apt/sources.list.d/nvidia-container-toolkit.list [repo.nvidia-container-toolkit.list]
gpuprep_write /etc/apt/sources.list.d/nvidia-container-toolkit.list 0644 replace <<'GPUPREP_EOF'
# gpuprep: repository nvidia-container-toolkit of stack blackwell-r595.91.07-cuda13.2.2-nvlsm (do not edit; gpuprep apply rewrites it)
deb [signed-by=/usr/share/keyrings/nvidia-container-toolkit-keyring.gpg] https://nvidia.github.io/libnvidia-container/stable/deb/amd64/ /
GPUPREP_EOF

# 5. refresh the package lists [apt.update]
DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 -o Acquire::GzipIndexes=false update

# 6. stop: the rest of the plan needs the index just fetched; make it, review it, run it
printf '%s\n' 'gpuprep: the repositories are set up. The rest of the plan (exact versions from their index) is a second script: make it, review it, then run it as root:' '  gpuprep --root @SRC@/tests/fixtures/hosts/gh200-proprietary/ --manifest blackwell-r595.91.07-cuda13.2.2-nvlsm --manifest-sha256 fa675fad9bc900ff312f2c16e8ef09e25f9315b841ea625b3944d16d188f4ba2 plan --format sh > gpuprep-plan-2.sh' '  bash gpuprep-plan-2.sh'
exit 0
