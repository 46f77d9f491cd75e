#!/usr/bin/env bash
# ctest-labels: fixtures
# `gpuprep doctor --root` over every fixture host tree, as a user runs it: exit code, the verdict the tree
# is built to show (in the table and in --json), and nothing of the live host read (the live machine's
# CUDA must not appear).
# Usage: bash doctor_fixtures.sh <gpuprep-binary> <source-dir> <build-dir>
set -uo pipefail
GPUPREP=$1
HOSTS=$2/tests/fixtures/hosts
STACK=ubuntu22.04-r535-cuda12.2
fails=0
expect() {  # expect NAME TREE WANT_RC PATTERN [stack]
  local name=$1 tree=$2 want=$3 pattern=$4 stack=${5:-$STACK} out rc
  out=$("$GPUPREP" doctor --root "$HOSTS/$tree" --manifest "$stack" 2>&1)
  rc=$?
  if [ "$rc" -ne "$want" ] || ! grep -qF -- "$pattern" <<<"$out"; then
    echo "FAIL $name: rc=$rc (want $want), pattern: $pattern"
    echo "$out" | sed 's/^/     /'
    fails=$((fails + 1))
  else
    echo "ok   $name"
  fi
}
# The legacy R535 stack: everything installed passes; the branch is past its end of life (June 2026), which
# doctor warns about (this test runs after that date).
expect "healthy host passes" healthy-h100 0 " 1 warn, 0 fail, "
expect "the legacy branch is past its end of life" healthy-h100 0 "reached end of life in 2026-06"
expect "nouveau is named with its fix" bare-nouveau 1 "fix: sudo gpuprep apply --yes --only driver (or: printf 'blacklist nouveau"
expect "module/library mismatch -> reboot" mismatch 1 "Driver/library version mismatch\")"
expect "NVSwitch without fabric manager" nvswitch-no-fm 1 "4 NVSwitches but no fabric manager"
expect "Blackwell on R535" blackwell-old-driver 1 "driver branch 535 does not support B200 (needs R570 or later)"
expect "V100 past R580" v100-new-driver 1 "driver branch 590 no longer supports Tesla V100 SXM2 32GB (its last branch is R580)"
expect "unsigned DKMS under Secure Boot" secure-boot-unsigned 1 "Secure Boot is on and the DKMS-built nvidia module"
expect "toolkit below a CVE fix" open-module 1 "toolkit 1.17.3 is affected by CVE-2025-23359" hopper-r580-cuda13.0

for tree in "$HOSTS"/*/; do
  json=$("$GPUPREP" doctor --json --root "$tree" --manifest "$STACK" 2>/dev/null)
  if ! python3 -c 'import json,sys; d=json.load(sys.stdin); assert not any((l["found"] or "").startswith("13.0.88") for l in d["layers"]); assert d["host"]["live"] is False' <<<"$json"; then
    echo "FAIL $(basename "$tree"): --json is not valid, or live-host facts leaked into a --root run"
    fails=$((fails + 1))
  fi
done

out=$("$GPUPREP" doctor --root "$HOSTS/healthy-h100" --manifest "$HOSTS/does-not-exist.yaml" 2>&1)
rc=$?
if [ "$rc" -ne 2 ] || [ "$(wc -l <<<"$out")" -ne 1 ] || [[ "$out" != "gpuprep: error: "* ]]; then
  echo "FAIL bad manifest: rc=$rc, output: $out"
  fails=$((fails + 1))
else
  echo "ok   bad manifest: one line, exit 2"
fi
exit $((fails > 0))
