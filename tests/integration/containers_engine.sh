#!/usr/bin/env bash
# ctest-labels: fixtures
# doctor and plan read the stack's image from the local engine (the stand-in Engine API,
# tests/support/fake_dockerd.py, reached through DOCKER_HOST): its digest against the stack's pin, "not
# pulled" when the engine lacks it, and the plan's pull step pinned by digest. Nothing else of the live
# host is changed (doctor and plan are read-only).
# Usage: bash containers_engine.sh <gpuprep-binary> <source-dir> <build-dir>
set -uo pipefail
GPUPREP=$1
SRC=$2
WORK=$(mktemp -d /tmp/gpuprep-containers.XXXXXX)
DOCKERD=
trap '[ -n "$DOCKERD" ] && kill $DOCKERD 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"' EXIT
fails=0
check() {  # check NAME CONDITION-EXIT-CODE
  if [ "$2" -eq 0 ]; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi
}
D=sha256:$(printf 'a%.0s' $(seq 64))
E=sha256:$(printf 'e%.0s' $(seq 64))

start_engine() {  # start_engine IMAGES-JSON
  [ -n "$DOCKERD" ] && kill $DOCKERD 2>/dev/null && wait $DOCKERD 2>/dev/null
  cat >"$WORK/state.json" <<JSON
{"version": "28.3.2", "daemon_json": "$WORK/daemon.json", "hook": "$WORK/hook", "cdi_dirs": ["$WORK/cdi"],
 "images": $1}
JSON
  rm -f "$WORK/docker.sock"
  python3 "$SRC/tests/support/fake_dockerd.py" "$WORK/docker.sock" "$WORK/requests.jsonl" "$WORK/state.json" &
  DOCKERD=$!
  for _ in $(seq 100); do [ -S "$WORK/docker.sock" ] && break; sleep 0.1; done
}

site() {  # site DIGEST
  cat >"$WORK/site.yaml" <<YAML
apiVersion: gpuprep/v1
kind: Stack
extends: ubuntu22.04-r535-cuda12.2
metadata: {name: site}
image:
  ref: nvcr.io/nvidia/pytorch:23.10-py3
  cuda: unknown
  cuda_unknown_reason: "read from the image itself"
  digest: "$1"
YAML
}

layer() {  # layer FILE NAME FIELD
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print([l for l in d["layers"] if l["name"]==sys.argv[2]][0].get(sys.argv[3]))' "$@"
}

start_engine "{\"nvcr.io/nvidia/pytorch:23.10-py3\": {\"digest\": \"$D\", \"env\": [\"CUDA_VERSION=12.2.2.009\", \"CUDA_DRIVER_VERSION=535.104.05\", \"NVIDIA_REQUIRE_CUDA=cuda>=9.0\"]}}"
site "$D"
DOCKER_HOST="unix://$WORK/docker.sock" "$GPUPREP" doctor --json --manifest "$WORK/site.yaml" >"$WORK/doctor.json" 2>"$WORK/doctor.err"
check "doctor --json answers with the engine reachable" $([ -s "$WORK/doctor.json" ]; echo $?)
check "the image layer found the image's digest" $([ "$(layer "$WORK/doctor.json" image found)" = "$D" ]; echo $?)
grep -q "\"GET\", \"path\": \"/v1.47/images/nvcr.io/nvidia/pytorch:23.10-py3@$D/json\"" "$WORK/requests.jsonl"
check "doctor asked the engine about the image as apply pulls it (pinned by digest)" $?
grep -q '"path": "/v1.47/images/create"' "$WORK/requests.jsonl"
check "doctor never pulls" $([ $? -ne 0 ]; echo $?)

site "$E"
DOCKER_HOST="unix://$WORK/docker.sock" "$GPUPREP" doctor --json --manifest "$WORK/site.yaml" >"$WORK/doctor2.json" 2>/dev/null
check "a present image at another digest than the stack pins fails" \
  $([ "$(layer "$WORK/doctor2.json" image status)" = fail ]; echo $?)

start_engine "{}"
site "$D"
DOCKER_HOST="unix://$WORK/docker.sock" "$GPUPREP" doctor --json --manifest "$WORK/site.yaml" >"$WORK/doctor3.json" 2>/dev/null
layer "$WORK/doctor3.json" image detail | grep -q "is not pulled"
check "an image the engine lacks is reported not pulled" $?
DOCKER_HOST="unix://$WORK/docker.sock" "$GPUPREP" plan --manifest "$WORK/site.yaml" --only image >"$WORK/plan.txt" 2>"$WORK/plan.err"
grep -qF "pull nvcr.io/nvidia/pytorch:23.10-py3@$D (Docker Engine API, digest must be $D)" "$WORK/plan.txt"
check "plan pulls the image pinned by digest" $?

[ "$fails" -eq 0 ] && echo "containers_engine: all passed" || echo "containers_engine: $fails failed"
exit $((fails > 0))
