#!/bin/bash
# Runs inside the simulated server at a simulated boot (lib.sh: sim_reboot), after /run was emptied.
# Decides what the kernel would load, from what is on disk:
#   - nouveau loads and binds the GPUs unless a modprobe.d file blacklists it;
#   - the nvidia module (the version the driver package's postinst recorded) loads when nouveau did not,
#     and binds the GPUs (NVSwitches to nvidia-nvswitch);
#   - other modules (loaded by the modprobe stand-in) are gone; those named in modules-load.d load, as
#     systemd-modules-load does;
#   - units enabled in /etc/systemd/system/*.wants become active.
# Prints "resume UNIT EXECSTART" for every enabled gpuprep*.service, for the harness to run.
set -euo pipefail
pci=/sys/bus/pci/devices
nvidia_devices() {  # BDF CLASS of every NVIDIA device
  local d
  local d vendor class
  for d in "$pci"/*; do
    read -r vendor <"$d/vendor"
    read -r class <"$d/class"
    [[ $vendor == 0x10de ]] && echo "${d##*/} $class"
  done
  return 0
}
bind() {  # bind BDF DRIVER|""
  rm -f "$pci/$1/driver"
  [[ -n $2 ]] && ln -s "../../../../bus/pci/drivers/$2" "$pci/$1/driver"
  return 0
}

rm -rf /sys/module/* /proc/driver/nvidia
# The build machine's own pyenv (inherited from the lower layer) takes a lock in its shims directory from
# every login shell; one killed by the simulated power cut would make each later ssh session wait a minute.
rm -f /root/.pyenv/shims/.pyenv-shim
while read -r bdf class; do bind "$bdf" ""; done < <(nvidia_devices)

if [[ -e /sim/control/has-nouveau ]] &&
  ! grep -qsE '^[[:space:]]*blacklist[[:space:]]+nouveau' /etc/modprobe.d/*.conf /lib/modprobe.d/*.conf /usr/lib/modprobe.d/*.conf; then
  mkdir -p /sys/module/nouveau /sys/bus/pci/drivers/nouveau
  echo live >/sys/module/nouveau/initstate
  while read -r bdf class; do [[ $class == 0x03* ]] && bind "$bdf" nouveau; done < <(nvidia_devices)
  echo "boot: nouveau loaded"
fi

version=$(cat /var/lib/gpuprep-sim/nvidia-module-version 2>/dev/null || true)
# With GRUB installed in the simulation (/sim/control/grub-boot) and its menu written, the kernel is GRUB's
# choice (grub-pick: the manual's default / saved_entry / next_entry rules), recorded for the modprobe
# stand-in, and nvidia loads only when that kernel's modules.dep lists an nvidia.ko that exists; its version
# is the module's own (.modinfo). Otherwise the running kernel boots and the version the driver package
# recorded loads.
mkdir -p /run/gpuprep-sim
if [[ -e /sim/control/grub-boot && -f /boot/grub/grub.cfg ]]; then
  picked=$(/sim/guest/grub-pick) || { echo "boot: GRUB found no kernel to boot" >&2; exit 1; }
  kernel=${picked%%$'\t'*}
  echo "$kernel" >/run/gpuprep-sim/kernel
  echo "boot: kernel $kernel (${picked#*$'\t'})"
  dir=/lib/modules/$kernel
  path=$(sed -nE 's/^(updates\/dkms\/nvidia\.ko(\.zst|\.xz)?|kernel\/.*\/nvidia\.ko(\.zst|\.xz)?):.*/\1/p' "$dir/modules.dep" 2>/dev/null | head -n 1)
  modinfo=
  if [[ -n $path && -f $dir/$path ]]; then
    case $path in
      *.zst) cat=(zstd -dcq) ;;
      *.xz) cat=(xz -dc) ;;
      *) cat=(cat) ;;
    esac
    tmp=$(mktemp)
    "${cat[@]}" "$dir/$path" >"$tmp" && objcopy -O binary --only-section=.modinfo "$tmp" "$tmp.info" 2>/dev/null &&
      modinfo=$(tr '\0' '\n' <"$tmp.info")
    rm -f "$tmp" "$tmp.info"
  fi
  module_version=$(sed -n 's/^version=//p' <<<"$modinfo")
  if [[ -z $module_version ]]; then
    [[ -n $version ]] && echo "boot: nvidia not loaded: no nvidia module for kernel $kernel (${path:-none in its modules.dep})"
    version=
  else
    version=$module_version
  fi
fi
if [[ -n $version && ! -d /sys/module/nouveau ]]; then
  mkdir -p /sys/module/nvidia /proc/driver/nvidia /sys/bus/pci/drivers/nvidia /sys/bus/pci/drivers/nvidia-nvswitch
  echo "$version" >/sys/module/nvidia/version
  # the NVRM line of each flavour (the open modules name themselves)
  if [[ $(cat /var/lib/gpuprep-sim/nvidia-module-flavour 2>/dev/null) == open ]]; then
    nvrm="NVIDIA UNIX Open Kernel Module for x86_64  $version  Release Build  (dvs-builder@U22-I3-B15-1-1)  Thu Sep 25 19:03:44 UTC 2025"
  else
    nvrm="NVIDIA UNIX x86_64 Kernel Module  $version  Thu Oct 19 18:56:32 UTC 2023"
  fi
  printf 'NVRM version: %s\nGCC version:  gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04)\n' "$nvrm" >/proc/driver/nvidia/version
  while read -r bdf class; do
    if [[ $class == 0x03* ]]; then bind "$bdf" nvidia; else bind "$bdf" nvidia-nvswitch; fi
  done < <(nvidia_devices)
  echo "boot: nvidia $version loaded ($(cat /var/lib/gpuprep-sim/nvidia-module-flavour 2>/dev/null || echo proprietary))"
elif [[ -n $version ]]; then
  echo "boot: nvidia $version not loaded (nouveau holds the GPUs)"
fi

# systemd-modules-load: one module name per line; '#' and ';' start comments.
declare -A seen_conf=()
for conf in /etc/modules-load.d/*.conf /run/modules-load.d/*.conf /usr/lib/modules-load.d/*.conf /lib/modules-load.d/*.conf; do
  [[ -f $conf ]] || continue
  real=$(readlink -f "$conf")
  [[ -n ${seen_conf[$real]:-} ]] && continue  # /lib is /usr/lib on a merged-/usr system
  seen_conf[$real]=1
  while read -r mod _; do
    [[ -z $mod || $mod == '#'* || $mod == ';'* ]] && continue
    if /usr/lib/gpuprep-sim/modprobe --sim-boot "$mod" 2>/dev/null; then
      echo "boot: $mod loaded ($conf)"
    else
      echo "boot: $mod not loaded ($conf): not found for this kernel"
    fi
  done <"$conf"
done

mkdir -p /run/gpuprep-sim/active
# systemd is PID 1 here (what maintainer scripts test before they call systemctl: deb-systemd-invoke,
# invoke-rc.d --skip-systemd-native), so a package's postinst starts its units through the systemctl stand-in.
mkdir -p /run/systemd/system
for link in /etc/systemd/system/*.wants/*; do
  [[ -L $link || -e $link ]] || continue
  unit=${link##*/}
  touch "/run/gpuprep-sim/active/$unit"
  if [[ $unit == gpuprep*.service ]]; then
    file=$(readlink -f "$link")
    # systemd skips a unit whose ConditionPathExists= fails ("!PATH": PATH must not exist).
    skip=0
    while read -r cond; do
      if [[ $cond == '!'* ]]; then [[ -e ${cond#!} ]] && skip=1; else [[ -e $cond ]] || skip=1; fi
    done < <(sed -n 's/^ConditionPathExists=//p' "$file")
    if ((skip)); then echo "boot: $unit skipped (ConditionPathExists)"; continue; fi
    exec_start=$(sed -n 's/^ExecStart=[-@+!]*//p' "$file" | head -n 1)
    echo "resume $unit $exec_start"
  fi
done
