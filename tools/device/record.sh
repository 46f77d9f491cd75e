#!/usr/bin/env bash
# Records what gpuprep reads and measures on a real GPU machine, in one run, for fixtures that replay
# without one. Needs a bundle made by tools/device/bundle.sh in BUNDLE (default .dev).
# Usage: tools/device/record.sh OUTDIR [STEP...]
# Steps (default: all): env smi kmsg boot doctor measure accept accept-container accept-default watch size saved
# Each step's exit status is written to OUTDIR/steps.txt; a failed step does not stop the others.
set -uo pipefail
out=${1:?usage: record.sh OUTDIR [STEP...]}
shift
steps=${*:-env smi kmsg boot doctor measure accept accept-container accept-default watch size saved}
bundle=${BUNDLE:-.dev}
gp="$bundle/run"
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
mkdir -p "$out"
export PYTHONUNBUFFERED=1

step() {  # step NAME TIMEOUT CMD...: runs CMD with its output in OUTDIR/NAME.log, records its status
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  timeout --kill-after=5 "$limit" "$@" >"$out/$name.out" 2>"$out/$name.err"
  local rc=$?
  echo "$name rc=$rc seconds=$((SECONDS - t0))" | tee -a "$out/steps.txt"
}

for s in $steps; do
  case $s in
  env)
    step uname 10 uname -a
    step os-release 10 cat /etc/os-release
    step ldd 10 "$bundle/lib/ld-linux-x86-64.so.2" --library-path "$bundle/lib" --list "$bundle/gpuprep"
    step version 10 "$gp" --version
    step python 60 python3 -c 'import torch, sys; print(sys.version); print(torch.__version__, torch.version.cuda, torch.cuda.device_count(), torch.cuda.get_device_name(0))'
    step nvml-libs 10 sh -c 'ldconfig -p | grep -E "libnvidia-ml|libcuda\.so"; ls -l /usr/local/nvidia/lib64 2>/dev/null | head -50'
    ;;
  smi)
    step nvidia-smi 30 nvidia-smi
    step nvidia-smi-q 30 nvidia-smi -q
    step nvidia-smi-qx 30 nvidia-smi -q -x
    step nvidia-smi-query 30 nvidia-smi --format=csv --query-gpu=index,uuid,serial,name,pci.bus_id,pci.device_id,memory.total,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,clocks_event_reasons.active,ecc.mode.current,ecc.errors.uncorrected.volatile.total,retired_pages.pending,power.limit,power.default_limit,power.max_limit,persistence_mode,temperature.gpu,clocks.sm,clocks.max.sm,driver_version
    step nvidia-smi-topo 30 nvidia-smi topo -m
    step nvidia-smi-nvlink 30 nvidia-smi nvlink -s
    step nvidia-smi-remap 30 nvidia-smi --format=csv --query-remapped-rows=gpu_bus_id,remapped_rows.correctable,remapped_rows.uncorrectable,remapped_rows.pending,remapped_rows.failure
    step sysfs-gpu 10 sh -c 'for d in /sys/bus/pci/devices/*; do [ "$(cat $d/vendor)" = 0x10de ] || continue; echo "$d class=$(cat $d/class) device=$(cat $d/device) driver=$(basename "$(readlink $d/driver)") speed=$(cat $d/current_link_speed) width=$(cat $d/current_link_width) max_speed=$(cat $d/max_link_speed) max_width=$(cat $d/max_link_width)"; done'
    ;;
  kmsg)
    step kmsg 5 cat /dev/kmsg
    step dmesg 10 dmesg
    ;;
  boot)  # what doctor's kernel and next-boot checks read
    step boot-files 30 sh -c 'uname -r; ls -la /boot; ls /lib/modules; for k in /lib/modules/*; do echo "== $k"; grep -E "nvidia" "$k/modules.dep" | head; ls "$k" | head -20; done; ls -R /var/lib/dkms 2>/dev/null | head -60; cat /etc/default/grub 2>/dev/null; ls /etc/default/grub.d 2>/dev/null; cat /boot/grub/grubenv 2>/dev/null; grep -E "^[[:space:]]*(menuentry|submenu|set default)" /boot/grub/grub.cfg 2>/dev/null | head -40; dpkg -l "linux-image*" "linux-modules*" "nvidia-dkms*" 2>/dev/null | tail -n +6'
    step kern-log 10 sh -c 'ls -la /var/log/kern.log* /var/log/syslog* 2>&1; sysctl kernel.dmesg_restrict'
    ;;
  accept-container)  # the default runtime: no Docker engine there, so the gate names the docker layer
    step accept-container 120 "$gp" accept --fast
    ;;
  doctor)
    step doctor-json 120 "$gp" doctor --json
    step doctor-text 120 "$gp" doctor
    ;;
  measure)
    step measure-fast 180 python3 -c "$(cat "$repo/src/accept/program/measure.py")" --device cuda --gpus 1 --fast --seconds 3
    ;;
  accept)
    step accept-host-fast 300 "$gp" accept --runtime host --fast --json --save "$out/accept-recording.jsonl"
    step accept-host-fast-text 30 "$gp" accept --measurements "$out/accept-recording.jsonl"
    ;;
  accept-default)
    step accept-host-default 600 "$gp" accept --runtime host --json --save "$out/accept-recording-default.jsonl"
    ;;
  watch)
    python3 "$here/load.py" 12 >"$out/load.out" 2>"$out/load.err" &
    load=$!
    sleep 3
    step watch 75 "$gp" watch --json --interval 1s --window 10s --duration 50s
    wait "$load"
    echo "load rc=$?" >>"$out/steps.txt"
    ;;
  size)
    step size-peak 300 python3 "$here/size_peak.py" "$out"
    ;;
  saved)
    step saved-tensors 300 python3 "$repo/tests/differential/saved_tensors.py" --device cuda
    ;;
  *) echo "record.sh: unknown step $s" >&2 ;;
  esac
done
