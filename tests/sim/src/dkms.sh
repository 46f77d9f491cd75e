#!/bin/bash
# Stand-in dkms of the simulated server (the one piece of Debian's dkms package that is not real: the
# kernel hooks /etc/kernel/postinst.d/dkms, header_postinst.d/dkms and /usr/lib/dkms/dkms_autoinstaller
# beside it are Debian's own). Records its argv in /sim/log/commands.log, then does what dkms does to the
# files gpuprep and the simulated boot read:
#   add -m M -v V          registers M/V: /var/lib/dkms/M/V/source -> /usr/src/M-V
#   remove -m M -v V ...   forgets M/V and its builds
#   autoinstall -k K       (or --kernelver K) builds and installs every registered module whose dkms.conf says
#                          AUTOINSTALL="yes" for kernel K, only when K's headers are there
#                          (/lib/modules/K/build/include, what the hooks test too); otherwise it fails as dkms
#                          does and builds nothing
# A build is a real ELF object (gcc -c) with a .modinfo section (objcopy --add-section) naming the module's
# version and licence, compressed as the kernel's config asks (CONFIG_MODULE_COMPRESS_ZSTD / _XZ in
# /boot/config-K, as DKMS 3 reads it), installed to /lib/modules/K/updates/dkms/ and listed in K's modules.dep
# (depmod's part), with DKMS's make.log. build and install (the driver package's postinst, for the running
# kernel) are only recorded.
line=dkms
for a in "$@"; do line+=" $(printf '%q' "$a")"; done
echo "$line" >>/sim/log/commands.log 2>/dev/null || true
tree=/var/lib/dkms
cmd=${1:-}
[[ $# -gt 0 ]] && shift
m='' v='' k=''
while [[ $# -gt 0 ]]; do
  case $1 in
    -m) m=$2; shift ;;
    -v) v=$2; shift ;;
    -k | --kernelver) k=$2; shift ;;
    --kernelver=*) k=${1#*=} ;;
  esac
  shift
done
case $m$v in */* | *..*) echo "Error! Bad module name or version: $m/$v" >&2; exit 1 ;; esac

build() {  # build M V K: one module for kernel K
  local m=$1 v=$2 k=$3 arch dir obj info lic ext=
  arch=$(uname -m)
  dir=$tree/$m/$v/$k/$arch
  if [[ ! -e /lib/modules/$k/build/include ]]; then
    echo "Error! Your kernel headers for kernel $k cannot be found at /lib/modules/$k/build or /lib/modules/$k/source." >&2
    return 1
  fi
  mkdir -p "$dir/log" "$dir/module" "/lib/modules/$k/updates/dkms"
  lic=NVIDIA
  [[ $(cat /var/lib/gpuprep-sim/nvidia-module-flavour 2>/dev/null) == open ]] && lic="Dual MIT/GPL"
  obj=$dir/module/$m.ko
  info=$dir/modinfo
  echo "make -C /lib/modules/$k/build M=$tree/$m/$v/build (simulated)" >"$dir/log/make.log"
  printf 'int %s_sim_init(void) { return 0; }\n' "$m" | gcc -c -x c -o "$obj" - 2>>"$dir/log/make.log" || return 1
  printf 'version=%s\0license=%s\0name=%s\0vermagic=%s SMP mod_unload modversions \0' "$v" "$lic" "$m" "$k" >"$info"
  objcopy --add-section .modinfo="$info" --set-section-flags .modinfo=alloc,readonly "$obj" || return 1
  if grep -qs '^CONFIG_MODULE_COMPRESS_ZSTD=y' "/boot/config-$k"; then
    zstd -q -f --rm "$obj" && ext=.zst
  elif grep -qs '^CONFIG_MODULE_COMPRESS_XZ=y' "/boot/config-$k"; then
    xz -f --check=crc32 "$obj" && ext=.xz
  fi
  install -m 0644 "$obj$ext" "/lib/modules/$k/updates/dkms/$m.ko$ext"
  local dep=/lib/modules/$k/modules.dep
  grep -qs "^updates/dkms/$m\.ko" "$dep" || echo "updates/dkms/$m.ko$ext:" >>"$dep"
  echo "$m/$v: installed for kernel $k (updates/dkms/$m.ko$ext)"
}

case $cmd in
  add)
    [[ -n $m && -n $v && -d /usr/src/$m-$v ]] || { echo "Error! Could not find module source directory /usr/src/$m-$v" >&2; exit 1; }
    mkdir -p "$tree/$m/$v"
    ln -sfn "/usr/src/$m-$v" "$tree/$m/$v/source"
    ;;
  remove)
    [[ -n $m && -n $v ]] && rm -rf "${tree:?}/$m/$v"
    ;;
  autoinstall)
    k=${k:-$(uname -r)}
    rc=0
    for src in "$tree"/*/*/source; do
      [[ -e $src ]] || continue
      grep -qs '^AUTOINSTALL="\?yes' "$src/dkms.conf" || continue
      mv=${src%/source}
      mod=${mv%/*}
      build "${mod##*/}" "${mv##*/}" "$k" || rc=$?
    done
    exit $rc
    ;;
esac
exit 0
