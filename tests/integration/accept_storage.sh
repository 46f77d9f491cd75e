#!/usr/bin/env bash
# ctest-labels: fixtures
# `gpuprep accept --storage-only --storage DIR` on real filesystems inside a private mount namespace
# (`unshare -m`): a tmpfs and a loop-mounted ext4 image made with mkfs.ext4. Whether each takes O_DIRECT is
# asked of dd (oflag=direct), independently of gpuprep, and the report must say the same mode (ext4 takes it;
# tmpfs refuses it before Linux 6.6 and takes it since). The throughputs are printed. A floor from --expect
# passes or fails the figures; a tmpfs of 1 MiB is refused before anything is written, and so is a ramfs (it
# reports no size, so its room is unknown); a missing path and a
# file are bad input; SIGTERM mid-measurement stops it; no file is left behind on any of these paths.
# Exit 77 (skipped) without root or where unshare -m, mount or a loop device is not permitted.
# Usage: bash accept_storage.sh <gpuprep-binary> <source-dir> [build-dir]
set -uo pipefail
GPUPREP=$1
[[ $(id -u) == 0 ]] || { echo "SKIP: mounting a tmpfs and an ext4 image needs root"; exit 77; }
command -v unshare >/dev/null && command -v mkfs.ext4 >/dev/null && command -v dd >/dev/null ||
  { echo "SKIP: unshare, mkfs.ext4 or dd not found"; exit 77; }
unshare -m true 2>/dev/null || { echo "SKIP: unshare -m is not permitted here"; exit 77; }
work=$(mktemp -d /tmp/gpuprep-accept-storage.XXXXXX)
trap 'rm -rf "$work"' EXIT
export GPUPREP work
unshare -m bash -s <<'INNER'
set -uo pipefail
mount --make-rprivate / || { echo "SKIP: no private mounts"; exit 77; }
mkdir -p "$work/tmpfs" "$work/ext4" "$work/tiny"
mount -t tmpfs -o size=64m gpuprep-tmpfs "$work/tmpfs" || { echo "SKIP: cannot mount a tmpfs"; exit 77; }
mount -t tmpfs -o size=1m gpuprep-tiny "$work/tiny" || exit 1
mkdir -p "$work/ramfs" && mount -t ramfs gpuprep-ramfs "$work/ramfs" || exit 1
truncate -s 256M "$work/ext4.img" && mkfs.ext4 -q -F "$work/ext4.img" >/dev/null || exit 1
mount -o loop "$work/ext4.img" "$work/ext4" || { echo "SKIP: no loop device for the ext4 image"; exit 77; }
fails=0
# check NAME WANT_RC PATTERN -- command...: the exit code, and PATTERN in stdout+stderr.
check() {
  local name=$1 want=$2 pattern=$3 out rc
  shift 4
  out=$("$@" 2>&1)
  rc=$?
  if [ "$rc" -ne "$want" ] || ! grep -qF -- "$pattern" <<<"$out"; then
    echo "FAIL $name: rc=$rc (want $want), pattern: $pattern"
    echo "$out" | sed 's/^/     /' | tail -15
    fails=$((fails + 1))
  else
    echo "ok   $name"
  fi
}
# Nothing of gpuprep's left in DIR.
clean() {
  if ls -A "$1" | grep -q gpuprep; then
    echo "FAIL $2: a file was left behind in $1: $(ls -A "$1")"
    fails=$((fails + 1))
  else
    echo "ok   $2: nothing left behind"
  fi
}
# The mode the filesystem allows, asked of dd.
mode_of() {
  if dd if=/dev/zero of="$1/dd-probe" bs=4096 count=1 oflag=direct status=none 2>/dev/null; then
    echo "O_DIRECT"
  else
    echo "fsync + POSIX_FADV_DONTNEED"
  fi
  rm -f "$1/dd-probe"
}
# One storage check's fields from the JSON report: status, io, measured.
fields() {
  python3 -c '
import json, sys
doc = json.load(sys.stdin)
for c in doc["checks"]:
    if c["group"] == "storage" and c["name"] == sys.argv[1]:
        print(c["status"], "|", c["io"], "|", c["measured"], c["unit"], "|", c["path"])' "$1"
}
acc() { "$GPUPREP" accept --storage-only "$@"; }

for fs in tmpfs ext4; do
  dir="$work/$fs"
  mode=$(mode_of "$dir")
  echo "     $fs: dd says $mode"
  json=$(acc --storage "$dir" --storage-size 16MiB --json 2>/dev/null)
  check "$fs: the report says $mode" 0 "no expectation | $mode |" -- fields write <<<"$json"
  check "$fs: read back" 0 "no expectation | $mode |" -- fields read <<<"$json"
  echo "     $fs: $(fields write <<<"$json"); $(fields read <<<"$json")"
  clean "$dir" "$fs"
done
check "ext4: the table shows the checkpoint" 0 "one checkpoint of 0.008389 GB takes" -- acc --storage "$work/ext4" --storage-size 8MiB
check "ext4: a floor it reaches passes" 0 "verdict: pass" -- acc --storage "$work/ext4/" --storage-size 8MiB --expect "storage=$work/ext4:1MB/s"
check "ext4: a floor it cannot reach fails" 1 "below the offer's 100TB/s" -- acc --storage "$work/ext4" --storage-size 8MiB --expect "storage=$work/ext4:100TB/s"
check "a floor for a path not measured" 0 "measures it" -- acc --storage "$work/ext4" --storage-size 8MiB --expect "storage=/elsewhere:1GB/s"
clean "$work/ext4" "ext4 judged"
check "tiny tmpfs refused before writing" 2 "--storage: $work/tiny has 0.001049 GB free; the measurement writes 0.008389 GB" -- acc --storage "$work/tiny" --storage-size 8MiB
clean "$work/tiny" "tiny tmpfs"
check "tiny tmpfs: nothing written" 0 "0" -- bash -c "df --output=used -B1 '$work/tiny' | tail -1 | tr -d ' '"
check "ramfs: no size, refused" 2 "its filesystem reports no size" -- acc --storage "$work/ramfs" --storage-size 8MiB
clean "$work/ramfs" "ramfs"
check "a missing path" 2 "--storage: $work/none does not exist" -- acc --storage "$work/none"
check "a file" 2 "is not a directory" -- acc --storage "$work/ext4.img"
check "--storage-only needs --storage" 2 "--storage-only: sizes or selects" -- acc
check "--storage-size checked" 2 "--storage-size: a size from 1MiB" -- acc --storage "$work/ext4" --storage-size 2KB

# SIGTERM while the file is being written: the run stops (exit 1) and the file goes with it.
"$GPUPREP" accept --storage-only --storage "$work/ext4" --storage-size 160MiB >"$work/term.out" 2>&1 &
pid=$!
for _ in $(seq 1 1000); do
  compgen -G "$work/ext4/.gpuprep-accept-storage-*" >/dev/null && break
  sleep 0.005
done
if compgen -G "$work/ext4/.gpuprep-accept-storage-*" >/dev/null; then
  kill -TERM "$pid"
  wait "$pid"
  rc=$?
  check "SIGTERM stops the measurement" 0 "interrupted; the storage measurement was stopped" -- cat "$work/term.out"
  [ "$rc" -eq 1 ] || { echo "FAIL SIGTERM: rc=$rc (want 1)"; fails=$((fails + 1)); }
else
  wait "$pid"
  echo "FAIL SIGTERM: the measurement's file never appeared"
  fails=$((fails + 1))
fi
clean "$work/ext4" "SIGTERM"
umount "$work/ext4" "$work/tmpfs" "$work/tiny" "$work/ramfs"
[ "$fails" -eq 0 ] && echo "all accept storage checks passed"
exit $((fails > 0))
INNER
