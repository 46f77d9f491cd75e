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
# doctor warns about (this test runs after that date), and a newer stack exists for the host (the stack row).
expect "healthy host passes" healthy-h100 0 " 2 warn, 0 fail, "
expect "a newer stack exists for it (a warning: the host stays on its stack)" healthy-h100 0 \
  "a newer stack exists for this host: hopper-r580.173.02-cuda13.0.3"
expect "the legacy branch is past its end of life" healthy-h100 0 "reached end of life in 2026-06"
# The host layer's minimums are the sourced ratios (the shipped stacks give no numbers of their own).
expect "host: CPU cores and RAM from the sourced ratios" healthy-h100 0 \
  "for 8 GPUs (llm-finetune): >= 28 CPUs (8 x (2 + 1) + 4: 2 DataLoader workers per GPU for llm), >= 637.2 GiB RAM (the GPUs' memory)"
expect "host: the general profile gets the floor" p100-r580 1 \
  ">= 16 CPUs (4 x (2 + 1) + 4: 2 DataLoader workers per GPU, the floor)" volta-r580-cuda12.9
expect "nouveau is named with its fix" bare-nouveau 1 "fix: sudo gpuprep apply --yes --only driver (or: printf 'blacklist nouveau"
expect "module/library mismatch -> reboot" mismatch 1 "Driver/library version mismatch\")"
expect "NVSwitch without fabric manager" nvswitch-no-fm 1 "4 NVSwitches but no fabric manager"
expect "Blackwell on R535" blackwell-old-driver 1 "driver branch 535 does not support B200 (needs R570 or later)"
expect "V100 past R580" v100-new-driver 1 "driver branch 590 no longer supports Tesla V100 SXM2 32GB (its last branch is R580)"
expect "unsigned DKMS under Secure Boot" secure-boot-unsigned 1 "Secure Boot is on and the DKMS-built nvidia module"
expect "toolkit below a CVE fix" open-module 1 "toolkit 1.17.3 is affected by CVE-2025-23359" hopper-r580-cuda13.0
# Support per driver release (compat.yaml gpus: support, production releases only; driver_rules).
expect "H200 on open 550.54.15: warned, naming 550.90.07" h200-open-550 1 \
  "driver 550.54.15 predates 550.90.07, the first R550 release (betas aside) whose supported-GPU list names H200" \
  hopper-r580-cuda13.0
expect "HGX H200 on R535: no R535 release lists it" hgx-h200-r535 0 \
  "no R535 release (betas aside) lists H200; the branches that do: R550 from 550.90.07"
expect "HGX H200 on R535: the stack does not claim it" hgx-h200-r535 0 \
  "stack ubuntu22.04-r535-cuda12.2 is not made for H200 (hopper; it claims volta, turing, ampere, ada, hopper less its boards_excluded); the newest that can is hopper-r580.173.02-cuda13.0.3"
expect "H20 on R545: the branch skips it" h20-r545 0 \
  "no R545 release (betas aside) lists H20; the branches that do: R535 from 535.161.07, R550 from 550.54.14"
expect "GH200 on the proprietary modules is refused" gh200-proprietary 1 \
  "GH200 120GB runs only on NVIDIA's open kernel modules; the loaded module is proprietary"
expect "GH200: the proprietary stack cannot run here" gh200-proprietary 1 \
  "stack ubuntu22.04-r535-cuda12.2 cannot run here: GH200 120GB runs only on NVIDIA's open kernel modules; the newest that can is hopper-r580.173.02-cuda13.0.3"
expect "P100 with a CUDA 13 stack: cannot run here, names the newest that can" p100-r580 1 \
  "stack hopper-r580-cuda13.0 cannot run here: the open kernel modules do not drive Tesla P100 PCIe 16GB (pascal); the newest that can is volta-r580.173.02-cuda12.9.1" \
  hopper-r580-cuda13.0
expect "P100: CUDA 13 is past its last CUDA" p100-r580 1 \
  "the stack's CUDA 13.0.2 no longer supports Tesla P100 PCIe 16GB (compute capability 6.0; the last CUDA for it is 12.x)" \
  hopper-r580-cuda13.0
expect "T4 on open 570: the README lag is a warning" t4-open-570 1 \
  "no R570 release (betas aside) lists Tesla T4; the branches that do: R575 from 575.57.08" volta-r580-cuda12.9
# Without --manifest a P100 host gets the stack that can run it.
out=$("$GPUPREP" doctor --root "$HOSTS/p100-r580" 2>&1)
if ! grep -qF "using stack volta-r580.173.02-cuda12.9.1" <<<"$out" || grep -qF "cannot run here" <<<"$out"; then
  echo "FAIL P100 default stack"; echo "$out" | sed 's/^/     /'; fails=$((fails + 1))
else
  echo "ok   P100 default stack is volta-r580.173.02-cuda12.9.1"
fi
# Libraries against the boards (compat.yaml library_builds): NCCL carries no Maxwell code from 2.28.3 on, so
# the stack pinning NCCL 2.30.7 warns on an M60 host (a warning: the exit code is the other layers'), and the
# default choice skips it for the one pinning NCCL 2.27.3.
expect "M60 with NCCL 2.30.7: the library cannot run on it (a warning)" m60-r580 1 \
  "but NCCL 2.30.7 (its CUDA 12.9 build) has no code for compute capability 5.2" volta-r580.173.02-cuda12.9.1
expect "M60 with NCCL 2.27.3: no library warning" m60-r580 1 "stack              ok" volta-r580-cuda12.9
out=$("$GPUPREP" doctor --root "$HOSTS/m60-r580" 2>&1)
if ! grep -qF "using stack volta-r580-cuda12.9:" <<<"$out" || grep -qF "stack.library-unsupported-board" <<<"$out"; then
  echo "FAIL M60 default stack"; echo "$out" | sed 's/^/     /'; fails=$((fails + 1))
else
  echo "ok   M60 default stack is volta-r580-cuda12.9 (NCCL 2.27.3)"
fi
codes=$("$GPUPREP" doctor --json --root "$HOSTS/m60-r580" --manifest volta-r580.173.02-cuda12.9.1 2>/dev/null |
  python3 -c 'import json,sys; d=json.load(sys.stdin); print(" ".join(f["code"] + "=" + f["status"] for l in d["layers"] if l["name"] == "stack" for f in l["findings"]))')
if [[ " $codes " != *" stack.library-unsupported-board=warn "* ]]; then
  echo "FAIL M60 stack row codes: $codes"; fails=$((fails + 1))
else
  echo "ok   M60: stack.library-unsupported-board is a warning"
fi
# A branch newer than the per-release data (R595): judged by branch, and doctor says so in one line.
expect "H200 on 595.91.07: judged by branch, said once" h200-open-595 1 \
  "no per-release support data for R595: judged by branch" hopper-r580-cuda13.0
driver=$("$GPUPREP" doctor --json --root "$HOSTS/h200-open-595" --manifest hopper-r580-cuda13.0 2>/dev/null |
  python3 -c 'import json,sys; d=json.load(sys.stdin); l=[l for l in d["layers"] if l["name"] == "driver"][0]; print(l["status"], sum("per-release" in f["message"] for f in l["findings"]))')
if [ "$driver" != "ok 1" ]; then
  echo "FAIL H200 on 595.91.07: driver row $driver (want ok, one note)"; fails=$((fails + 1))
else
  echo "ok   H200 on 595.91.07: driver ok with one note"
fi
# H100 SXM on 580.65.06, the first R580 release: a data-center release on NVIDIA's record (the GPU Operator
# documentation), whose README lists the H100: no support finding (the stack's pinned 580.95.05 is judged apart).
driver=$("$GPUPREP" doctor --json --root "$HOSTS/h100-open-580" --manifest hopper-r580-cuda13.0 2>/dev/null |
  python3 -c 'import json,sys; d=json.load(sys.stdin); l=[l for l in d["layers"] if l["name"] == "driver"][0]
print(l["found"], " ".join(sorted(f["code"] for f in l["findings"] if f["code"].startswith("driver.board-"))) or "-")')
if [ "$driver" != "580.65.06 -" ]; then
  echo "FAIL H100 on 580.65.06: driver row $driver (want 580.65.06, no driver.board-* finding)"; fails=$((fails + 1))
else
  echo "ok   H100 on 580.65.06: no support finding"
fi
# T4 on open 570 passes the GPU and driver layers (warnings only): not listed is not unsupported.
layers=$("$GPUPREP" doctor --json --root "$HOSTS/t4-open-570" --manifest volta-r580-cuda12.9 2>/dev/null |
  python3 -c 'import json,sys; d=json.load(sys.stdin); print(" ".join(l["name"] + "=" + l["status"] for l in d["layers"] if l["name"] in ("gpu", "driver")))')
if [ "$layers" != "gpu=ok driver=warn" ]; then
  echo "FAIL T4 on open 570: $layers (want gpu=ok driver=warn)"; fails=$((fails + 1))
else
  echo "ok   T4 on open 570: gpu ok, driver warn"
fi

# GPU health from sysfs (tests/fixtures/health, make_health_hosts.py): each tree's gpu findings as code=status,
# and the finding's message and fix word for word in the table. Under --root there is no performance state:
# width is judged, speed is "not judged".
HEALTH=$2/tests/fixtures/health
health_codes() {  # health_codes TREE: the gpu layer's code=status list
  "$GPUPREP" doctor --json --root "$HEALTH/$1" --manifest hopper-r580-cuda13.0 2>/dev/null |
    python3 -c 'import json,sys; d=json.load(sys.stdin); print(" ".join(f["code"] + "=" + f["status"] for l in d["layers"] if l["name"] == "gpu" for f in l["findings"]))'
}
want_codes() {  # want_codes NAME TREE WANT
  local got
  got=$(health_codes "$2")
  if [ "$got" != "$3" ]; then
    echo "FAIL $1: gpu findings \"$got\" (want \"$3\")"; fails=$((fails + 1))
  else
    echo "ok   $1"
  fi
}
hexpect() {  # hexpect NAME TREE PATTERN: doctor's table for a health tree holds PATTERN
  local out
  out=$("$GPUPREP" doctor --root "$HEALTH/$2" --manifest hopper-r580-cuda13.0 2>&1)
  if ! grep -qF -- "$3" <<<"$out"; then
    echo "FAIL $1: pattern: $3"; echo "$out" | sed 's/^/     /'; fails=$((fails + 1))
  else
    echo "ok   $1"
  fi
}
want_codes "x8 of x16: a width finding, speed not judged" pcie-x8 \
  "gpu.pcie-width=warn gpu.pcie-speed-not-judged=skip gpu.xid-not-read=skip"
hexpect "x8 of x16: the message" pcie-x8 "GPU 1 (0000:2a:00.0) PCIe link runs at x8 of its x16"
hexpect "x8 of x16: the fix" pcie-x8 \
  "sudo reboot retrains the link; if it comes up degraded again, reseat the GPU or its riser, or report the slot to the provider (check: sudo lspci -vv -s 0000:2a:00.0 | grep LnkSta)"
want_codes "a Gen5 GPU in a Gen4 slot: no finding" gen5-in-gen4 \
  "gpu.pcie-speed-not-judged=skip gpu.found=ok gpu.xid-not-read=skip"
want_codes "an idle GPU at Gen1: no finding" idle-gen1 \
  "gpu.pcie-speed-not-judged=skip gpu.found=ok gpu.xid-not-read=skip"
want_codes "config space of all ones: off the bus" off-bus \
  "gpu.off-bus=fail gpu.pcie-speed-not-judged=skip gpu.xid-not-read=skip"
hexpect "off the bus: message and fix" off-bus \
  "GPU 2 (0000:ab:00.0) is off the bus: its PCI config space reads all ones"
hexpect "off the bus: NVIDIA's action" off-bus \
  "sudo reboot (NVIDIA's action for a GPU that fell off the bus, Xid 79: restart the node)"
want_codes "a function unbound after a fall" unbound \
  "gpu.unbound=warn gpu.pcie-speed-not-judged=skip gpu.xid-history=ok gpu.xid-hardware=fail"
hexpect "unbound: the message" unbound \
  "GPU 3 (0000:db:00.0) is bound to no driver while the others are bound to nvidia: the driver unbinds a GPU that fell off the bus"
# The tree's kern.log holds the boot's record and the Xid 79 of GPU 3: the history is of this boot, the event on
# its GPU with NVIDIA's action; the trees without a text log say so with a skip (above).
hexpect "unbound: the Xid on its GPU" unbound \
  "GPU 3 (0000:db:00.0) logged Xid 79 (GPU has fallen off the bus), a hardware event, once, at Jun  3 14:22:07"
hexpect "unbound: NVIDIA's action for Xid 79" unbound \
  "drain the node and restart it (sudo reboot); if it recurs, report the board to the provider or NVIDIA support (NVIDIA's Xid catalogue: RESTART_BM, then CONTACT_SUPPORT)"
hexpect "off the bus: no text log, a skip" off-bus \
  "the Xid history was not read: no kernel text log under the tree (/var/log/kern.log, /var/log/syslog)"

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
