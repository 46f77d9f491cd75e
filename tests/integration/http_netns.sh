#!/usr/bin/env bash
# ctest-labels: fixtures
# The libcurl client refuses plain http to a peer that is not loopback, on a real connection that cannot
# leave this machine: a private network namespace (`unshare -n`) whose only interface is lo, brought up and
# given the TEST-NET-1 address 192.0.2.1/32 (RFC 5737), runs the unit test binary's hidden [netns] case
# (tests/sys/http_netns_test.cc): a server there on 192.0.2.1 gets no request, the same server on
# 127.0.0.1 answers. Exit 77 (skipped) without root, unshare, ip or python3.
# Usage: bash http_netns.sh <gpuprep-binary> <source-dir> <build-dir>
set -uo pipefail
build=${3:?build dir}
tests=$build/tests/gpuprep_tests
[[ -x $tests ]] || { echo "FAIL: no unit test binary at $tests" >&2; exit 1; }
[[ $(id -u) == 0 ]] || { echo "SKIP: a network namespace needs root"; exit 77; }
for tool in unshare ip python3; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool not found"; exit 77; }
done
unshare -n true 2>/dev/null || { echo "SKIP: unshare -n is not permitted here"; exit 77; }
GP_NETNS_ADDR=192.0.2.1 unshare -n bash -c '
  set -e
  ip link set lo up
  ip addr add 192.0.2.1/32 dev lo
  # nothing but lo exists here: no route leads out of the namespace
  [[ $(ip -o link show | wc -l) == 1 ]] || { echo "FAIL: the new namespace has more than lo" >&2; exit 1; }
  exec "$1" "[netns]"
' http_netns "$tests"
