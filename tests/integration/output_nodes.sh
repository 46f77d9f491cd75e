#!/usr/bin/env bash
# ctest-labels: fixtures
# What the binary does with the path a user names for output (`fleet-report -o`, `watch --prometheus`):
# a FIFO read by a background cat gets the report and stays a FIFO; a character device (one made with mknod,
# then /dev/null itself) is written and stays a device; /dev/stdout writes to the descriptor; a directory, a
# unix socket and a block device are exit 2 with one line naming the flag, left as they were; a regular file
# is replaced as before. watch --prometheus writes a FIFO with a reader and refuses a socket the same way.
# The system's /dev/null is only tried once a node made here has survived the same write.
# Usage: output_nodes.sh GPUPREP_BINARY SOURCE_DIR BUILD_DIR
set -uo pipefail
bin=${1:?gpuprep binary}
src=${2:?source dir}
build=${3:?build dir}
snap=$src/tests/fixtures/snapshots/h100x8-p5.json
work=$(mktemp -d)
cat_pid=""
cleanup() {
  [[ -n $cat_pid ]] && kill "$cat_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
status=0
check() {  # check NAME CONDITION...
  local name=$1
  shift
  if "$@"; then echo "output_nodes: ok: $name"; else echo "output_nodes: FAIL: $name"; status=1; fi
}
type_of() { stat -c %F "$1" 2>/dev/null; }
"$bin" fleet-report "$snap" >"$work/expected" 2>/dev/null

# A FIFO, read by a background cat.
mkfifo "$work/report.fifo"
timeout 20 cat "$work/report.fifo" >"$work/from-fifo" &  # bounded: a FIFO replaced by a file has no writer
cat_pid=$!
rc=0
timeout 60 "$bin" fleet-report -o "$work/report.fifo" "$snap" 2>"$work/err" || rc=$?
wait "$cat_pid" 2>/dev/null
cat_pid=""
check "FIFO: exit 0" test "$rc" = 0
check "FIFO: the reader got the report" cmp -s "$work/expected" "$work/from-fifo"
check "FIFO: still a FIFO" test "$(type_of "$work/report.fifo")" = fifo
check "FIFO: nothing left beside it" test -z "$(ls "$work" | grep gpuprep- || true)"

# A link to /proc/self/fd/1 (what /dev/stdout is): the descriptor, whatever it is (a pipe here), the link
# untouched. /dev/stdout itself only once the link made here has survived.
ln -s /proc/self/fd/1 "$work/stdout"
rc=0
out=$("$bin" fleet-report -o "$work/stdout" "$snap" 2>"$work/err" | cat) || rc=$?
check "link to /proc/self/fd/1: exit 0 and the report on stdout" test "$rc" = 0 -a "$out" = "$(cat "$work/expected")"
check "link to /proc/self/fd/1: still a link" test -L "$work/stdout"
if [[ -L $work/stdout ]]; then
  rc=0
  out=$("$bin" fleet-report -o /dev/stdout "$snap" 2>"$work/err" | cat) || rc=$?
  check "/dev/stdout: exit 0 and the report on stdout" test "$rc" = 0 -a "$out" = "$(cat "$work/expected")"
  check "/dev/stdout: still a link" test -L /dev/stdout
fi

# Character devices: one made here first, then /dev/null only when that one survived.
if [[ $(id -u) = 0 ]] && mknod "$work/null" c 1 3 2>/dev/null; then
  rc=0
  "$bin" fleet-report -o "$work/null" "$snap" 2>"$work/err" || rc=$?
  check "character device: exit 0" test "$rc" = 0
  check "character device: still a character device" test -c "$work/null"
  if [[ -c $work/null ]]; then
    rc=0
    "$bin" fleet-report -o /dev/null "$snap" 2>"$work/err" || rc=$?
    check "/dev/null: exit 0" test "$rc" = 0
    check "/dev/null: still a character device" test -c /dev/null
    check "/dev/null: still empty to read" test -z "$(head -c 1 /dev/null)"
  fi
  mknod "$work/block" b 7 0 2>/dev/null || true
else
  echo "output_nodes: (not root: no character or block device made; /dev/null not tried)"
fi

# Refused: a directory, a unix socket, a block device. Exit 2, one line naming the flag, left as they were.
mkdir "$work/dir"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$work/sock"
refused() {  # refused PATH KIND
  local rc=0
  "$bin" fleet-report -o "$1" "$snap" >"$work/out" 2>"$work/err" || rc=$?
  check "$2: exit 2" test "$rc" = 2
  check "$2: one line naming --output and saying $2" \
    test "$(wc -l <"$work/err")" = 1 -a -n "$(grep -F -- "gpuprep: error: --output: " "$work/err" | grep -F -- "$2")"
  check "$2: nothing on stdout" test ! -s "$work/out"
}
refused "$work/dir" "a directory"
check "directory: still a directory, empty" test -d "$work/dir" -a -z "$(ls -A "$work/dir")"
refused "$work/sock" "a socket"
check "socket: still a socket" test -S "$work/sock"
if [[ -b $work/block ]]; then
  refused "$work/block" "a block device"
  check "block device: still a block device" test -b "$work/block"
fi

# A regular file: replaced, mode 0644, as before.
echo old >"$work/report.txt"
chmod 600 "$work/report.txt"
rc=0
"$bin" fleet-report -o "$work/report.txt" "$snap" 2>"$work/err" || rc=$?
check "regular file: exit 0, replaced" test "$rc" = 0
check "regular file: the report, mode 644" cmp -s "$work/expected" "$work/report.txt"
check "regular file: mode 644" test "$(stat -c %a "$work/report.txt")" = 644

# watch --prometheus: a FIFO with a reader gets the textfile; a socket is refused before any sampling.
standin=$build/tests/standin/current
if [[ -f $standin/libnvidia-ml.so.1 ]]; then
  cat >"$work/gpus.trace" <<'TRACE'
gpus 1
gpu * nvlink_links=18 nvlink_mbps=26562 gpm=1 arch=9 memory_mib=81559 power_default_w=700 sm_max_mhz=1980
gpu 0 name="NVIDIA H100 80GB HBM3"
step_ms 100
sample_ms 50
step
at * duty=none mem_used_mib=0 power_w=70 power_limit_w=700 sm_mhz=345 reasons=0x1
at * nvlink_tx_bps=0 nvlink_rx_bps=0 pcie_tx_bps=0 pcie_rx_bps=0 sm_active=0 sm_occ=0 tensor=0 dram=0 procs=none
TRACE
  mkfifo "$work/w.prom"
  exec 3<>"$work/w.prom"  # a reader that is there before watch opens the FIFO
  rc=0
  LD_LIBRARY_PATH=$standin GPUPREP_STANDIN_TRACE=$work/gpus.trace timeout 60 \
    "$bin" watch --interval 100ms --window 500ms --duration 1s --prometheus "$work/w.prom" >/dev/null 2>"$work/err" || rc=$?
  timeout 2 cat <&3 >"$work/from-watch"
  exec 3<&-
  check "watch --prometheus FIFO: exit 0" test "$rc" = 0
  check "watch --prometheus FIFO: the reader got the textfile" grep -qx 'gpuprep_watch_up 0' "$work/from-watch"
  check "watch --prometheus FIFO: still a FIFO" test -p "$work/w.prom"
else
  echo "output_nodes: (stand-in NVML not built: watch's FIFO case not run)"
fi
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$work/s.prom"
rc=0
"$bin" watch --prometheus "$work/s.prom" >/dev/null 2>"$work/err" || rc=$?
check "watch --prometheus socket: exit 2, one line" test "$rc" = 2 -a "$(wc -l <"$work/err")" = 1
check "watch --prometheus socket: names the flag" grep -q '^gpuprep: error: --prometheus: .*a socket' "$work/err"
check "watch --prometheus socket: still a socket" test -S "$work/s.prom"
[[ $status = 0 ]] || sed 's/^/  last stderr: /' "$work/err"
exit $status
