#!/usr/bin/env bash
# ctest-labels: fixtures
# `gpuprep accept --measurements` on the recorded runs of tests/fixtures/accept/: the healthy 8x H100 and
# 8x A100 recordings pass, and each fault make_faulty.py derives from them gets its verdict, exit code and
# evidence (table, JSON, Markdown and HTML reports); hostile recordings are refused with their line; the
# multi-node flags are checked before anything is measured, and measuring without a recording says so plainly.
# The check across nodes: the recordings make_nodes.py writes (a healthy InfiniBand run, a fallback to sockets,
# GPUDirect RDMA off) get their verdicts with the evidence from NCCL's own log.
# Usage: bash accept_fixtures.sh <gpuprep-binary> <source-dir> [build-dir]
set -uo pipefail
GPUPREP=$1
SRC=$2
FIX="$SRC/tests/fixtures/accept"
work=$(mktemp -d /tmp/gpuprep-accept.XXXXXX)
trap 'rm -rf "$work"' EXIT
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
accept() { "$GPUPREP" accept --measurements "$@"; }

# The healthy fixtures are what make_healthy.py writes.
python3 "$FIX/make_healthy.py" "$work"
for f in h100x8-healthy a100x8-healthy; do
  check "$f.jsonl is make_healthy.py's output" 0 "" -- cmp "$work/$f.jsonl" "$FIX/$f.jsonl"
done
python3 "$FIX/make_faulty.py" "$FIX/h100x8-healthy.jsonl" "$work"
python3 "$FIX/make_faulty.py" "$FIX/a100x8-healthy.jsonl" "$work"

H100_OFFER='8x"H100 SXM5 80GB",cpus=96,ram=1.9TB,nvme=8x3.84TB'
# Every measured check passes; the published runs carry no one-direction peer copy (and the A100's no
# device-to-host copy), so the verdict is incomplete, exit 0, and --strict makes it 1.
check "h100 healthy: incomplete, nothing failed" 0 "verdict: incomplete (1 checks skipped" -- accept "$FIX/h100x8-healthy.jsonl" --expect "$H100_OFFER"
check "h100 healthy: the peer copy not measured" 0 "not measured" -- accept "$FIX/h100x8-healthy.jsonl"
check "h100 healthy: no check below pass" 0 "0 0 1" -- bash -c "'$GPUPREP' accept --measurements '$FIX/h100x8-healthy.jsonl' --json --expect '$H100_OFFER' | python3 -c 'import json,sys; s=json.load(sys.stdin)[\"summary\"]; print(s[\"failed\"], s[\"warned\"], s[\"incomplete\"])'"
check "h100 healthy --strict: exit 1" 1 "verdict: incomplete" -- accept "$FIX/h100x8-healthy.jsonl" --strict
# A real H200 measured by gpuprep's own program (accept --runtime host --fast --save): everything measured
# passes; its PCIe link was not read under load, so the verdict is incomplete.
check "h200x1 measured here: nothing failed or warned" 0 "0 0 1" -- bash -c "'$GPUPREP' accept --measurements '$FIX/h200x1-measured.jsonl' --json | python3 -c 'import json,sys; s=json.load(sys.stdin)[\"summary\"]; print(s[\"failed\"], s[\"warned\"], s[\"incomplete\"])'"
check "h200x1 measured here: the matmul against the MAMF table" 0 "804 TFLOP/s  794.5" -- accept "$FIX/h200x1-measured.jsonl"
check "h100 healthy: sources in the JSON" 0 '"source": "stas00/ml-engineering@744d01e18b79512572f64a6bbd8b5f4a725203a7:compute/accelerator/README.md:354"' -- \
  accept "$FIX/h100x8-healthy.jsonl" --json
check "a100 healthy: incomplete, nothing failed" 0 "verdict: incomplete (2 checks skipped" -- accept "$FIX/a100x8-healthy.jsonl" --expect '8x0x20b2,ram=1.9TB'
check "a100 healthy: derived floor shown" 0 '"kind": "derived"' -- accept "$FIX/a100x8-healthy.jsonl" --json
check "h100 offered as A100: board fails" 1 "GPU 0 is 0x2330" -- accept "$FIX/h100x8-healthy.jsonl" --expect '8x"A100 SXM4 80GB"'
check "h100 offered 3 TB RAM: ram fails" 1 "fail" -- accept "$FIX/h100x8-healthy.jsonl" --expect '8x0x2330,ram=3TB'

# Burns (make_burn.py): a healthy one, a digest that changes at iteration 812, a GPU that disagrees with its
# peers from its first product, a failed CPU check, a power brake held for 40% of the burn, an Xid 79.
python3 "$FIX/make_burn.py" "$FIX/h100x8-healthy.jsonl" "$work"
check "burn healthy: nothing failed" 0 "0 0 1" -- bash -c "'$GPUPREP' accept --measurements '$work/h100x8-burn-healthy.jsonl' --json | python3 -c 'import json,sys; s=json.load(sys.stdin)[\"summary\"]; print(s[\"failed\"], s[\"warned\"], s[\"incomplete\"])'"
check "burn healthy: compared with the peers" 0 "equal to GPU 0, 1, 2, 4, 5, 6, 7 (the same 132 SMs)" -- accept "$work/h100x8-burn-healthy.jsonl"
check "burn digest at iteration 812: GPU 3 fails with the digests" 1 "at iteration 812 its product's digest was 44190860201, its first product's 44190843817" -- accept "$work/h100x8-burn-digest-gpu3-812.jsonl"
check "burn digest at iteration 812: one check failed" 1 "verdict: fail (1 failed," -- accept "$work/h100x8-burn-digest-gpu3-812.jsonl"
check "burn GPU 6 disagrees with its peers" 1 "at iteration 0 its product's digest was 44190827433, that of GPU 0, 1, 2, 3, 4, 5, 7" -- accept "$work/h100x8-burn-disagree-gpu6.jsonl"
check "burn CPU check of GPU 1" 1 "3 of 4096 values" -- accept "$work/h100x8-burn-cpu-check-gpu1.jsonl"
check "burn power brake on GPU 2: 40% of the burn" 1 "hw_slowdown held 40% of the burn, hw_power_brake held 40% of the burn" -- accept "$work/h100x8-burn-power-brake-gpu2.jsonl"
check "burn power brake: the clocks shown" 1 "SM clock median 1590 MHz, min 345 MHz" -- accept "$work/h100x8-burn-power-brake-gpu2.jsonl"
check "burn Xid 79 on GPU 4" 1 "the driver logged Xid 79 for this GPU 312.5 s into the burn" -- accept "$work/h100x8-burn-xid79-gpu4.jsonl"
check "burn in the JSON" 1 '"group": "burn"' -- accept "$work/h100x8-burn-digest-gpu3-812.jsonl" --json
check "burn in the report" 1 "" -- accept "$work/h100x8-burn-digest-gpu3-812.jsonl" --report "$work/burn.md"
check "  the burn's failing check" 0 "burn digest | 3 | fail" -- cat "$work/burn.md"

for b in h100x8 a100x8; do
  check "$b half HBM on GPU 3: fail" 1 "below the floor" -- accept "$work/$b-half-hbm-gpu3.jsonl"
  check "$b one NVLink down: fail" 1 "fewer NVLink links up than the board has" -- accept "$work/$b-nvlink-down-gpu3.jsonl"
  check "$b Gen4 x8 on GPU 5: fail" 1 "Gen4 x8" -- accept "$work/$b-gen4-x8-gpu5.jsonl"
  check "$b matmul above peak: invalid" 1 "invalid-measurement" -- accept "$work/$b-matmul-above-peak.jsonl"
  check "$b unknown board: incomplete" 0 "verdict: incomplete" -- accept "$work/$b-unknown-board.jsonl"
  check "$b unknown board --strict: exit 1" 1 "no expectation" -- accept "$work/$b-unknown-board.jsonl" --strict
  cut=$(($(wc -l <"$work/$b-truncated.jsonl") + 1))  # the cut line has no newline
  check "$b truncated: exit 2 with its line ($cut)" 2 "$b-truncated.jsonl:$cut:" -- accept "$work/$b-truncated.jsonl"
done
check "a100 NVLink down: all-reduce below its floor" 1 "below the floor 228" -- accept "$work/a100x8-nvlink-down-gpu3.jsonl"
check "h100 NVLink down: the 16 GiB floor is not judged at 8 GiB" 1 "not judged" -- accept "$work/h100x8-nvlink-down-gpu3.jsonl"
check "outlier at 5%: GPU 3 at half HBM named" 1 "below the median of its peers" -- \
  bash -c "sed 's/\"gpu\":3,\"tb_per_s\":2.9,/\"gpu\":3,\"tb_per_s\":2.7,/' '$FIX/h100x8-healthy.jsonl' >'$work/slow3.jsonl' && '$GPUPREP' accept --measurements '$work/slow3.jsonl' --outlier 5"
check "json verdict of a fault" 1 '"verdict": "fail"' -- accept "$work/h100x8-half-hbm-gpu3.jsonl" --json

# The reports: Markdown and HTML, with the identity, each measurement against typical, floor and peak, sources.
check "markdown report written" 1 "" -- accept "$work/h100x8-gen4-x8-gpu5.jsonl" --report "$work/r.md"
check "  identity: serial and UUID" 0 "FIXTURE0005" -- grep -F "GPU-fixture-0x2330-5" "$work/r.md"
check "  the failing link" 0 "Gen4 x8" -- grep -F "links pcie | 5 | fail" "$work/r.md"
check "  the sources" 0 "Azure/azurehpc-health-checks@0e0a1ac26a64b32ac4dd7632a529638505d3314a:conf/nd96isr_h100_v5.conf:49" -- cat "$work/r.md"
check "  the timestamps" 0 "2026-12-03T10:00:00Z" -- cat "$work/r.md"
check "html report written" 1 "" -- accept "$work/h100x8-matmul-above-peak.jsonl" --report "$work/r.html"
check "  html verdict" 0 'data-verdict="fail"' -- cat "$work/r.html"
check "report must be .md or .html" 2 "--report: the report is FILE.md or FILE.html" -- accept "$FIX/h100x8-healthy.jsonl" --report "$work/r.txt"

# Hostile recordings: each refused with file:line, exit 2.
head -1 "$FIX/h100x8-healthy.jsonl" >"$work/base.jsonl"
sed -n 2p "$FIX/h100x8-healthy.jsonl" | sed 's/"gpu":0/"gpu":0/' >>"$work/base.jsonl"
hostile() {  # hostile NAME LINE PATTERN: base + LINE + end
  { cat "$work/base.jsonl"; printf '%s\n' "$2"; echo '{"record":"end"}'; } >"$work/$1.jsonl"
  check "hostile: $1" 2 "$3" -- accept "$work/$1.jsonl"
}
hostile nan '{"record":"phase","phase":"h2d","gpu":0,"gb_per_s":NaN,"bytes":1,"duration_s":1}' "nan.jsonl:3:"
hostile negative '{"record":"phase","phase":"h2d","gpu":0,"gb_per_s":-51,"bytes":1,"duration_s":1}' "negative"
hostile unknown-record '{"record":"burn","gpu":0}' "unknown record"
hostile string-number '{"record":"phase","phase":"h2d","gpu":0,"gb_per_s":"51","bytes":1,"duration_s":1}' "must be a number"
python3 -c 'print("x" * (10 << 20))' >"$work/long-line.txt"
{ cat "$work/base.jsonl" "$work/long-line.txt"; echo '{"record":"end"}'; } >"$work/long.jsonl"
check "hostile: a 10 MB line" 2 "long.jsonl:3:1: line longer than 65536 bytes" -- accept "$work/long.jsonl"

# The offer as a kind: Offer document: the same fields as the spec, validated like every manifest kind.
cat >"$work/offer.yaml" <<'YAML'
apiVersion: gpuprep/v1
kind: Offer
metadata:
  name: h100-node
gpus:
  count: 8
  board: H100 SXM5 80GB
cpus: 96
ram: 1.9TB
nvme:
  count: 8
  size: 3.84TB
YAML
check "offer document: judged as the spec" 0 "verdict: incomplete (1 checks skipped" -- accept "$FIX/h100x8-healthy.jsonl" --expect "$work/offer.yaml"
check "offer document: the inventory passes" 0 "pass pass" -- bash -c "'$GPUPREP' accept --measurements '$FIX/h100x8-healthy.jsonl' --json --expect '$work/offer.yaml' | python3 -c 'import json,sys; c=json.load(sys.stdin)[\"checks\"]; print(*[x[\"status\"] for x in c if x[\"name\"] in (\"board\",\"ram\")])'"
check "offer document: manifest validate knows the kind" 0 "ok (kind Offer)" -- "$GPUPREP" manifest validate "$work/offer.yaml"
sed 's/board: H100 SXM5 80GB/board: H100 SXM9/' "$work/offer.yaml" >"$work/bad-board.yaml"
check "offer document: an unknown board at its position" 2 "bad-board.yaml:7:10: gpus.board: no board of the catalogue" -- accept "$FIX/h100x8-healthy.jsonl" --expect "$work/bad-board.yaml"
sed 's/^ram: 1.9TB/ram: lots/' "$work/offer.yaml" >"$work/bad-ram.yaml"
check "offer document: a bad size at its position" 2 "bad-ram.yaml:9:6: ram: not a size" -- accept "$FIX/h100x8-healthy.jsonl" --expect "$work/bad-ram.yaml"
sed 's/^cpus: 96/cpu: 96/' "$work/offer.yaml" >"$work/bad-key.yaml"
check "offer document: an unknown key at its position" 2 "bad-key.yaml:8:1: unknown key \"cpu\"" -- accept "$FIX/h100x8-healthy.jsonl" --expect "$work/bad-key.yaml"
sed '6d' "$work/offer.yaml" >"$work/no-count.yaml"
check "offer document: a board needs its count" 2 "no-count.yaml:6:10: gpus.board: give gpus.count too" -- accept "$FIX/h100x8-healthy.jsonl" --expect "$work/no-count.yaml"

# The check across nodes, recorded on node 0 of two.
python3 "$FIX/make_nodes.py" "$work"
for f in nodes-ib-healthy nodes-socket-fallback nodes-gdr-off; do
  check "$f.jsonl is make_nodes.py's output" 0 "" -- cmp "$work/$f.jsonl" "$FIX/$f.jsonl"
done
# nodes_check FILE CHECK: that check's "status|found|floor" in the JSON report.
nodes_check() {
  { "$GPUPREP" accept --measurements "$FIX/$1.jsonl" --json || true; } | python3 -c '
import json, sys
c = [c for c in json.load(sys.stdin)["checks"] if c["name"] == sys.argv[1]][0]
print("%s|%s|%s" % (c["status"], c["found"] or "", (c["floor"] or {}).get("value", "")))' "$2"
}
check "nodes over IB: pass" 0 "verdict: pass" -- accept "$FIX/nodes-ib-healthy.jsonl"
check "nodes over IB: the bus bandwidth above the ports' floor (8 x 185 Gb/s)" 0 "pass|16 GPUs on 2 nodes|185.0" -- nodes_check nodes-ib-healthy all_reduce_nodes
check "nodes over IB: the transport" 0 "pass|IB, 8 port(s)|" -- nodes_check nodes-ib-healthy transport
check "nodes over IB: GPUDirect RDMA on every network channel" 0 "pass|4 of 4 network channels|" -- nodes_check nodes-ib-healthy "gpudirect rdma"
check "nodes over IB: the floor's source" 0 "conf/nd96asr_v4.conf:64" -- accept "$FIX/nodes-ib-healthy.jsonl" --json
check "nodes, sockets: fail" 1 "NCCL ran between the nodes over TCP sockets although this node has ACTIVE RDMA ports" -- accept "$FIX/nodes-socket-fallback.jsonl"
check "nodes, sockets: the transport" 0 "fail|Socket|" -- nodes_check nodes-socket-fallback transport
check "nodes, sockets: the plugin's failure from NCCL's log" 0 "fail||" -- nodes_check nodes-socket-fallback nccl-log.plugin-load-failed
check "nodes, sockets: no floor for sockets" 0 "no expectation|16 GPUs on 2 nodes|" -- nodes_check nodes-socket-fallback all_reduce_nodes
check "nodes, GPUDirect RDMA off: fail" 1 "GPUDirect RDMA in use on none of 4 network channels" -- accept "$FIX/nodes-gdr-off.jsonl"
check "nodes, GPUDirect RDMA off: the channels" 0 "fail|0 of 4 network channels|" -- nodes_check nodes-gdr-off "gpudirect rdma"
check "nodes, GPUDirect RDMA off: below the floor" 0 "fail|16 GPUs on 2 nodes|185.0" -- nodes_check nodes-gdr-off all_reduce_nodes
check "nodes: the HTML report" 1 "" -- accept "$FIX/nodes-gdr-off.jsonl" --report "$work/nodes.html"
check "nodes: the HTML report names the GPUDirect check" 0 "gpudirect rdma" -- cat "$work/nodes.html"
sed 's/"record":"nodes",/"record":"nodes","extra":1,/' "$FIX/nodes-ib-healthy.jsonl" >"$work/nodes-extra.jsonl"
check "nodes: an unknown key refused at its line" 2 "nodes-extra.jsonl:10:1: unknown key \"extra\"" -- accept "$work/nodes-extra.jsonl"
grep -v '"record":"nodes"' "$FIX/nodes-ib-healthy.jsonl" >"$work/nodes-missing.jsonl"
check "nodes: all_reduce_nodes without its nodes record" 2 "an all_reduce_nodes record without a nodes record" -- accept "$work/nodes-missing.jsonl"

# Flags: the multi-node ones, the runtime, the outlier; measuring without a recording.
check "--nnodes alone" 2 "--node-rank: the check across nodes needs --nnodes, --node-rank and --master" -- "$GPUPREP" accept --nnodes 2
check "--master alone" 2 "--nnodes: the check across nodes needs" -- "$GPUPREP" accept --master 10.0.0.1:29500
check "--nnodes checked" 2 "--nnodes: a whole number from 2 to 1024, not \"1\"" -- "$GPUPREP" accept --nnodes 1 --node-rank 0 --master 10.0.0.1:29500
check "--node-rank below --nnodes" 2 "--node-rank: a whole number from 0 to 1, not \"2\"" -- "$GPUPREP" accept --nnodes 2 --node-rank 2 --master 10.0.0.1:29500
check "--master checked" 2 "--master: expected ADDR:PORT" -- "$GPUPREP" accept --nnodes 2 --node-rank 0 --master 10.0.0.1
check "--nnodes with a recording" 2 "--nnodes: applies when measuring" -- accept "$FIX/nodes-ib-healthy.jsonl" --nnodes 2 --node-rank 0 --master 10.0.0.1:29500
check "--nnodes with --burn" 2 "--burn: applies to one server" -- "$GPUPREP" accept --nnodes 2 --node-rank 0 --master 10.0.0.1:29500 --burn 10m
check "--nnodes: the gate holds under --root, nothing measured" 2 "measuring runs on the live host" -- \
  "$GPUPREP" accept --root "$SRC/tests/fixtures/hosts/healthy-h100" --manifest ubuntu22.04-r535-cuda12.2 --runtime host --nnodes 2 --node-rank 1 --master 10.0.0.1:29500
check "--runtime checked" 2 "--runtime: container or host" -- accept "$FIX/h100x8-healthy.jsonl" --runtime vm
check "--outlier checked" 2 "--outlier: a percentage" -- accept "$FIX/h100x8-healthy.jsonl" --outlier 150
check "--expect checked" 2 "--expect" -- accept "$FIX/h100x8-healthy.jsonl" --expect '8xNoSuchGPU'
check "--burn with a recording" 2 "--burn: applies when measuring" -- accept "$FIX/h100x8-healthy.jsonl" --burn 10m
check "--burn and --fast" 2 "--burn: give --fast or --burn, not both" -- "$GPUPREP" accept --fast --burn 10m
check "--burn checked" 2 "--burn: a whole number of seconds from 1s to 24h" -- \
  "$GPUPREP" accept --root "$SRC/tests/fixtures/hosts/healthy-h100" --manifest ubuntu22.04-r535-cuda12.2 --runtime host --burn 1.5s
# --task sizes the storage file as size's checkpoint: 1M parameters, bf16-mixed AdamW, 14 B each (2 weights, 4
# fp32 master, 8 optimizer states), rounded up to 4 KiB.
printf 'apiVersion: gpuprep/v1\nkind: Task\nmetadata:\n  name: tiny\nparams: 1M\nmethod: full\nprecision: bf16-mixed\noptimizer: adamw\n' >"$work/task.yaml"
mkdir -p "$work/disk"
check "--task: one checkpoint of the task's size" 0 "14000128 14000128" -- bash -c "'$GPUPREP' accept --storage-only --storage '$work/disk' --task '$work/task.yaml' --json 2>/dev/null | python3 -c 'import json,sys; print(*[c[\"bytes\"] for c in json.load(sys.stdin)[\"checks\"] if c[\"name\"] in (\"write\", \"read\")])'"
check "--task: nothing left behind" 0 "" -- test -z "$(ls -A "$work/disk")"
check "--storage: a missing directory, before anything is measured" 2 "--storage: $work/no-such-dir does not exist" -- "$GPUPREP" accept --storage "$work/no-such-dir"
check "--storage with a recording" 2 "--storage: applies when measuring" -- accept "$FIX/h100x8-healthy.jsonl" --storage "$work"
check "--task without --storage" 2 "--task: sizes or selects the storage measurement" -- "$GPUPREP" accept --task "$work/task.yaml"
check "--task and --storage-size" 2 "--storage-size: give --task" -- "$GPUPREP" accept --storage "$work" --task "$work/task.yaml" --storage-size 1GB
check "--storage-only and --burn" 2 "--burn: --storage-only measures no GPU" -- "$GPUPREP" accept --storage-only --storage "$work" --burn 10m
check "a storage floor with a recording: skipped" 0 "the offer gives a floor for /data" -- accept "$FIX/h100x8-healthy.jsonl" --expect 'storage=/data:2GB/s'
check "--save with a recording" 2 "--save: applies when measuring" -- accept "$FIX/h100x8-healthy.jsonl" --save "$work/x.jsonl"
check "gate holds under --root, nothing measured" 2 "measuring runs on the live host" -- \
  "$GPUPREP" accept --root "$SRC/tests/fixtures/hosts/healthy-h100" --manifest ubuntu22.04-r535-cuda12.2 --runtime host
check "gate fails on the driver layer" 1 "layer fails" -- \
  "$GPUPREP" accept --root "$SRC/tests/fixtures/hosts/bare-nouveau" --manifest ubuntu22.04-r535-cuda12.2 --runtime host
[ "$fails" -eq 0 ] && echo "all accept fixture checks passed"
exit $((fails > 0))
