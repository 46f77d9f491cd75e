#!/usr/bin/env bash
# ctest-labels: fixtures
# launch's NCCL_SOCKET_IFNAME comes from the route the kernel takes toward MASTER_ADDR. A private network
# namespace (`unshare -n`) gets two subnets on veth pairs, a docker0 look-alike and a default route on the
# management subnet; the unit test binary's hidden [netns-route] case reads the routes there
# (tests/launch/nccl_env_test.cc) and writes gpuprep's choice and the interface it says NCCL would take by
# itself. Then NCCL's own bootstrap (ncclGetUniqueId through python3's ctypes, which needs no GPU) runs in
# the same namespace, with NCCL_SOCKET_IFNAME set to gpuprep's choice and without it: its "Bootstrap: Using"
# line must name the same interfaces. Then the other end of the fabric pair goes into a second namespace, node 0
# at 10.2.0.1: gpuprep's measurement program (its check across nodes, on the CPU: gloo) runs an all-reduce
# between the two namespaces, which succeeds on gpuprep's interface and fails on the one NCCL would take alone.
# Exit 77 (skipped) without root, unshare or ip; the route half still runs, and the script exits 77 after it,
# when python3 or NCCL (GP_NCCL_LIB, default the CUDA toolkit's) is missing, or no python3 imports torch.
# Usage: bash launch_netns.sh <gpuprep-binary> <source-dir> <build-dir>
set -uo pipefail
src=${2:?source dir}
build=${3:?build dir}
tests=$build/tests/gpuprep_tests
nccl=${GP_NCCL_LIB:-/usr/local/cuda/lib64/libnccl.so.2}
[[ -x $tests ]] || { echo "FAIL: no unit test binary at $tests" >&2; exit 1; }
[[ $(id -u) == 0 ]] || { echo "SKIP: a network namespace needs root"; exit 77; }
command -v unshare >/dev/null && command -v ip >/dev/null || { echo "SKIP: unshare or ip not found"; exit 77; }
unshare -n true 2>/dev/null || { echo "SKIP: unshare -n is not permitted here"; exit 77; }
have_nccl=1
command -v python3 >/dev/null && [[ -r $nccl ]] || have_nccl=0
# shellcheck source=tests/integration/lib/torch_python.sh
source "$src/tests/integration/lib/torch_python.sh"
torch_py=$(torch_python)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
GP_NETNS_ROUTE=1 GP_NETNS_OUT=$out/choice unshare -n bash -c '
  set -e
  ip link set lo up
  pair() {  # NAME ADDRESS/PREFIX: one end of a veth pair, up, with the address; the peer end up
    ip link add "$1" type veth peer name "$1p"
    ip addr add "$2" dev "$1"
    ip link set "$1" up
    ip link set "$1p" up
  }
  pair docker0 172.17.0.1/16
  pair mgmt0 10.1.0.2/24
  pair fabric0 10.2.0.2/24
  ip route add default via 10.1.0.1 dev mgmt0
  "$1" "[netns-route]" || exit 1
  . "$4"
  if [[ $3 == 1 ]]; then
    bootstrap() {  # NCCL_DEBUG=INFO ncclGetUniqueId; prints the interface of its "Bootstrap: Using" line
      NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,BOOTSTRAP,ENV python3 -c "
import ctypes, sys
buf = ctypes.create_string_buffer(128)
sys.exit(ctypes.CDLL(sys.argv[1]).ncclGetUniqueId(buf))" "$2" 2>&1 |
        sed -n "s/.*Bootstrap *: Using \([^:]*\):.*/\1/p" | head -n 1
    }
    with=$(NCCL_SOCKET_IFNAME="=$route" bootstrap x "$2")
    without=$(unset NCCL_SOCKET_IFNAME; bootstrap x "$2")
    echo "gpuprep: route $route, NCCL alone: $own; NCCL with the variable: $with, without: $without"
    [[ $with == "$route" ]] || { echo "FAIL: NCCL bootstrapped on \"$with\", not on gpuprep'\''s $route" >&2; exit 1; }
    [[ $without == "$own" ]] || { echo "FAIL: NCCL alone took \"$without\", gpuprep said $own" >&2; exit 1; }
  fi
  [[ -n $5 ]] || exit 0
  py=$5 srcdir=$6
  # Node 0 in its own namespace: a process that unshares it and says so through a fifo (no polling).
  mkfifo "$7/ready"
  unshare -n sh -c "echo up >\"$7/ready\"; exec sleep 600" &
  peer=$!
  read -r _ <"$7/ready"
  trap "kill $peer 2>/dev/null" EXIT
  ip link set fabric0p netns "$peer"
  nsenter -t "$peer" -n sh -c "ip link set lo up; ip addr add 10.2.0.1/24 dev fabric0p; ip link set fabric0p up"
  node() {  # RANK IFNAME PORT PYTHON SOURCE-DIR: the check across nodes on the CPU, one worker, gloo on IFNAME
    GLOO_SOCKET_IFNAME=$2 OMP_NUM_THREADS=1 "$4" "$5/src/accept/program/measure.py" --device cpu --tiny --fast \
      --gpus 1 --seconds 1 --nnodes 2 --node-rank "$1" --master "10.2.0.1:$3" --allreduce-bytes 4096 \
      --rendezvous-seconds 5
  }
  allreduce() {  # IFNAME PORT: node 0 over fabric0p in its namespace, node 1 here over IFNAME; prints the records of node 1
    nsenter -t "$peer" -n bash -c "$(declare -f node); node 0 fabric0p $2 \"$py\" \"$srcdir\"" >/dev/null 2>&1 &
    local n0=$!
    node 1 "$1" "$2" "$py" "$srcdir" 2>/dev/null
    wait "$n0"
  }
  good=$(allreduce "$route" 29501)
  grep -q "\"phase\":\"all_reduce_nodes\",\"nodes\":2,\"gpus\":2" <<<"$good" ||
    { echo "FAIL: no all-reduce between the namespaces over $route: $good" >&2; exit 1; }
  bad=$(allreduce "$own" 29502)
  grep -q "\"record\":\"error\",\"phase\":\"all_reduce_nodes\"" <<<"$bad" && ! grep -q "\"record\":\"phase\"" <<<"$bad" ||
    { echo "FAIL: the all-reduce over $own (NCCL'\''s own choice) did not fail: $bad" >&2; exit 1; }
  echo "gpuprep: a gloo all-reduce between the namespaces over $route succeeds; over $own it fails"
' launch_netns "$tests" "$nccl" "$have_nccl" "$out/choice" "$torch_py" "$src" "$out" || exit 1
if [[ $have_nccl == 0 ]]; then
  echo "SKIP: the routes (and the all-reduce, where torch is) passed; NCCL's own bootstrap not compared (no python3 or no $nccl)"
  exit 77
fi
if [[ -z $torch_py ]]; then
  echo "SKIP: the routes and NCCL's bootstrap passed; no python3 imports torch for the all-reduce"
  exit 77
fi
echo "PASS"
