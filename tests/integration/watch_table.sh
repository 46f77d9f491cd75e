#!/usr/bin/env bash
# ctest-labels: fixtures
# `gpuprep watch`'s live table in a real terminal (tmux on a private socket) against the stand-in NVML
# replaying the 8-GPU trace: the table redraws in place (no scrollback), one row per GPU with its verdict
# and evidence, within 100 columns; after a resize to 72 columns no line is wider; colour unless NO_COLOR;
# Ctrl-C prints the summary and exits 0; with stdout not a terminal the output is line-based, no escapes.
# Exits 77 (skipped) without tmux.
# Usage: watch_table.sh GPUPREP_BINARY SOURCE_DIR BUILD_DIR
set -euo pipefail
bin=${1:?gpuprep binary}
src=${2:?source dir}
build=${3:?build dir}
command -v tmux >/dev/null || { echo "watch_table: SKIP: tmux is not installed"; exit 77; }
standin=$build/tests/standin/current
[[ -f $standin/libnvidia-ml.so.1 ]] || { echo "watch_table: stand-in NVML not built ($standin)"; exit 1; }
trace=$src/tests/watch/traces/healthy_8gpu_power_cap.trace
work=$(mktemp -d)
sock=gpuprep-watch-table-$$
pids=()
cleanup() {
  for k in table short plain replay; do tmux -L "$sock-$k" kill-server 2>/dev/null || true; done
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
for k in 0 1 2 3 4 5 6 7; do
  sleep 60 &
  pids+=("$!")
done
status=0
check() {  # check NAME CONDITION...
  local name=$1
  shift
  if "$@"; then echo "watch_table: ok: $name"; else echo "watch_table: FAIL: $name"; status=1; fi
}
# Each terminal on its own tmux server (T names it): a client that reaches a server while its last session
# is ending gets "server exited unexpectedly", and tmux 3.3a's server crashes creating a session after
# window-size was set to manual.
T=table
t() { tmux -L "$sock-$T" -f /dev/null "$@"; }
wait_for() {  # wait_for SESSION REGEX: bounded wait until the pane shows it
  for _ in $(seq 100); do
    t capture-pane -p -t "$1" | grep -qE "$2" && return 0
    sleep 0.1
  done
  return 1
}
widest() { awk '{ n = length($0); if (n > m) m = n } END { print m + 0 }'; }
cat >"$work/run.sh" <<RUN
#!/usr/bin/env bash
export LD_LIBRARY_PATH=$standin GPUPREP_STANDIN_TRACE=$trace GPUPREP_STANDIN_PIDS="${pids[*]}"
"$bin" watch --interval 100ms --window 500ms --duration 30s 2>/dev/null
echo "EXITED \$?"
sleep 30
RUN
chmod +x "$work/run.sh"

t new-session -d -s table -x 100 -y 40 "$work/run.sh"
t set-option -t table -g window-size manual >/dev/null 2>&1 || true
check "the table shows a verdict for the 8 GPUs" wait_for table '^7 .*healthy'
t capture-pane -p -t table >"$work/screen.txt"
t capture-pane -p -e -t table >"$work/screen_escapes.txt"
sed 's/^/  | /' "$work/screen.txt"
check "one row per GPU, 0 to 7" test "$(grep -cE '^[0-7] +[0-9]+%' "$work/screen.txt")" = 8
check "the header and columns" grep -q 'GPU DUTY.*MEM GiB.*POWER W.*PCIe GB/s.*NVLink GB/s.*VERDICT' "$work/screen.txt"
check "each GPU's verdict with its evidence" test "$(grep -c '^GPU [0-7]: healthy (high): ' "$work/screen.txt")" = 8
check "power and limit in the row" grep -qE '^0 .* 69[0-9]/700 ' "$work/screen.txt"
check "within 100 columns" test "$(widest <"$work/screen.txt")" -le 100
check "redrawn in place: nothing scrolled off" test "$(t display-message -p -t table '#{history_size}')" = 0
check "colour on a terminal" grep -q $'\x1b\\[32mhealthy' "$work/screen_escapes.txt"
t resize-window -t table -x 72 -y 40
sleep 0.5
t capture-pane -p -t table >"$work/narrow.txt"
check "after a resize to 72 columns no line is wider" test "$(widest <"$work/narrow.txt")" -le 72
check "and the table is still there" test "$(grep -cE '^[0-7] +[0-9]+%' "$work/narrow.txt")" = 8
t send-keys -t table C-c
check "Ctrl-C: the summary" wait_for table '^summary: '
check "Ctrl-C: exit 0" wait_for table '^EXITED 0$'
t capture-pane -p -t table >"$work/after.txt"
check "the summary gives the cost lines" grep -q '^  cost: .* GPU-hours paid' "$work/after.txt"
t kill-session -t table

# A terminal too short for every evidence line: the redraw still never scrolls, the rest is counted.
T=short
t new-session -d -s short -x 100 -y 14 "$work/run.sh"
check "short terminal: the table" wait_for short '^7 .*healthy'
sleep 0.3
t capture-pane -p -t short >"$work/short.txt"
check "short terminal: the evidence that fits, then a count" grep -q '^\.\.\. 6 more verdicts' "$work/short.txt"
check "short terminal: nothing scrolled off" test "$(t display-message -p -t short '#{history_size}')" = 0
t kill-session -t short

# NO_COLOR: the same table, no colour codes.
T=plain
t new-session -d -s plain -x 100 -y 40 "NO_COLOR=1 $work/run.sh"
check "NO_COLOR: the table" wait_for plain '^7 .*healthy'
t capture-pane -p -e -t plain >"$work/plain.txt"
check "NO_COLOR: no colour codes" test "$(grep -c $'\x1b\\[3[0-9]m' "$work/plain.txt")" = 0
t kill-session -t plain

# Not a terminal: line-based verdicts, no escape sequences.
LD_LIBRARY_PATH=$standin GPUPREP_STANDIN_TRACE=$trace GPUPREP_STANDIN_PIDS="${pids[*]}" \
  "$bin" watch --interval 100ms --window 500ms --duration 1200ms >"$work/lines.txt" 2>/dev/null
check "not a terminal: verdict lines" grep -q '  GPU 7 .* healthy (high confidence)' "$work/lines.txt"
check "not a terminal: no escape sequences" test "$(grep -c $'\x1b' "$work/lines.txt")" = 0

# A replay on a terminal has no samples to draw: its verdicts stay lines.
LD_LIBRARY_PATH=$standin GPUPREP_STANDIN_TRACE=$trace GPUPREP_STANDIN_PIDS="${pids[*]}" \
  "$bin" watch --json --interval 100ms --window 500ms --duration 1200ms >"$work/rec.jsonl" 2>/dev/null
T=replay
t new-session -d -s replay -x 100 -y 40 "$bin watch --replay $work/rec.jsonl; echo EXITED \$?; sleep 30"
check "replay on a terminal: the summary" wait_for replay '^EXITED 0$'
t capture-pane -p -t replay -S - >"$work/replay.txt"
check "replay on a terminal: verdict lines" grep -q '  GPU 7 .* healthy (high confidence)' "$work/replay.txt"
exit $status
