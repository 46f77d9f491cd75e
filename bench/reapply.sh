#!/usr/bin/env bash
# bench/reapply.sh GPUPREP SRC [RUNS]
# The converged re-apply benchmark, inside the simulated GPU server (tests/sim): a bare
# server is brought to the converged state (apply -> simulated reboot -> resume unit), then
# `gpuprep apply --yes` runs RUNS more times. Prints, for the re-apply: wall time (min/median/max, measured
# inside the server, without namespace setup), processes spawned and network connects (one run under
# strace -f), apt/dpkg calls and HTTP requests; and for the full install: apt-get calls and install
# transactions. Targets: < 300 ms, 0 apt-get, 0 network; 1 install transaction.
set -euo pipefail
[[ $# -ge 2 ]] || { sed -n '2,9p' "$0" >&2; exit 2; }
GPUPREP=$(realpath "$1")
SRC=$(realpath "$2")
RUNS=${3:-10}

inside=$(cat <<'SCRIPT'
set -u
out=/sim/out
M="--manifest /sim/stack.yaml"
installs=$(grep -c ' install ' /sim/log/apt-get.log || true)
apt_full=$(wc -l </sim/log/apt-get.log)
/sim/bin/gpuprep $M apply --yes >/dev/null 2>&1   # warm the page cache
for _ in $(seq "$RUNS"); do
  s=$(date +%s%N)
  /sim/bin/gpuprep $M apply --yes >/dev/null 2>&1 || echo "apply exited $?" >&2
  e=$(date +%s%N)
  echo $(((e - s) / 1000000))
done | sort -n >"$out/times"
procs=na connects=na apt_exec=na
if command -v strace >/dev/null; then
  strace -f -qq -e trace=execve,connect -o "$out/trace" /sim/bin/gpuprep $M apply --yes >/dev/null 2>&1 || true
  procs=$(($(grep -c 'execve(' "$out/trace") - 1))
  connects=$(grep -c 'connect(' "$out/trace" || true)
  apt_exec=$(grep -Ec 'execve\("[^"]*/(apt-get|apt|dpkg|apt-mark)"' "$out/trace" || true)
fi
apt_after=$(wc -l </sim/log/apt-get.log)
n=$(wc -l <"$out/times")
{
  echo "full install: apt-get calls $apt_full, install transactions $installs"
  echo "re-apply x$n: wall ms min $(head -n1 "$out/times") median $(sed -n "$(((n + 1) / 2))p" "$out/times") max $(tail -n1 "$out/times")"
  echo "re-apply: processes spawned $procs, apt/dpkg execs $apt_exec, network connects $connects, apt-get calls during the re-applies $((apt_after - apt_full))"
} | tee "$out/summary"
SCRIPT
)
exec "$SRC/tests/sim/run-in-sim.sh" "$GPUPREP" "$SRC" --converged -- env RUNS="$RUNS" bash -c "$inside"
