#!/usr/bin/env bash
# ctest-labels: sim
# shellcheck disable=SC2034  # SIM_RC is set here and read by check_rc (tests/sim/lib.sh)
# The image layer against the real engine and a real registry (tests/sim): Debian's dockerd 20.10 on the
# simulated server pulls from Debian's docker-registry 2.8 playing nvcr.io (TLS from the simulation's CA,
# 127.0.0.1:443 of its network). doctor --registry and launch --registry read an image's CUDA from the
# registry before anything is pulled (also through token authentication: 401, Bearer, the token server);
# apply pulls by digest a Docker v2 manifest and an OCI index, with progress on a terminal and quiet
# otherwise; a digest the registry does not have, an image with no manifest for this host's platform and the
# registry going away mid-pull each fail the run with the engine's own words and record nothing, and the
# next apply finishes.
# Usage: bash sim_image_pull.sh <gpuprep> <source-dir> <build-dir>
set -uo pipefail
GPUPREP=$1
SRC=$2
source "$SRC/tests/sim/lib.sh"
source "$SRC/tests/sim/containers.sh"
sim_require
sim_init "$GPUPREP" "$SRC" "${3:-}"

TORCH=nvcr.io/nvidia/pytorch:24.01-py3
CUDA=nvcr.io/nvidia/cuda:12.2.2-base-ubuntu22.04
ARM=nvcr.io/nvidia/pytorch:24.01-py3-igpu
BIG=nvcr.io/nvidia/pytorch:24.02-py3
sim_new_host
sim_registry "$TORCH CUDA_VERSION=12.2.2.009 CUDA_DRIVER_VERSION=535.104.05 NVIDIA_REQUIRE_CUDA=cuda>=12.2 NVIDIA_PYTORCH_VERSION=24.01"
SIM_IMAGE_FORMAT=oci-index sim_registry "$CUDA CUDA_VERSION=12.2.2 NVIDIA_REQUIRE_CUDA=cuda>=12.2"
SIM_IMAGE_FORMAT=oci-index SIM_IMAGE_PLATFORMS=arm64 sim_registry "$ARM CUDA_VERSION=12.2.2 NVIDIA_PYTORCH_VERSION=24.01"
SIM_IMAGE_EXTRA_MB=64 sim_registry "$BIG CUDA_VERSION=12.2.2 NVIDIA_PYTORCH_VERSION=24.02"
DT=$(sim_image_digest "$TORCH")
DC=$(sim_image_digest "$CUDA")
DA=$(sim_image_digest "$ARM")
DB=$(sim_image_digest "$BIG")

not() { ! "$@"; }  # not CMD...: CMD fails
registry_asks_token() {  # three tries: one request may time out on a loaded machine
  local i
  for i in 1 2 3; do
    sim_registry_request --wait 10 GET https://nvcr.io/v2/ 2>/dev/null | grep -q '^HTTP 401' && return 0
    sleep 1
  done
  return 1
}
sim_container_stack torch "$TORCH" "$DT"
sim_container_stack cuda "$CUDA" "$DC"
sim_container_stack arm "$ARM" "$DA"
sim_container_stack big "$BIG" "$DB"
sim_container_stack wrong "$TORCH" "sha256:$(printf 'gpuprep sim: no such manifest' | sha256sum | cut -d' ' -f1)"
sim_container_stack unpinned "$TORCH"

sim_section "a server converged to the stack (driver, toolkit, Docker, its image), the other images not pulled"
# The admin's daemon.json: one download attempt per layer (dockerd's default is 5, with a growing wait), so a
# pull the registry cuts fails at once; gpuprep keeps the key.
sim_run sh -c 'mkdir -p /etc/docker && echo "{\"max-download-attempts\": 1}" >/etc/docker/daemon.json'
sim_gp converge --manifest /sim/torch.yaml apply --yes
check_rc "apply on the bare server stops for the reboot" 3 converge
rc=0
sim_reboot || rc=$?
check_eq "the resume unit converges" 0 "$rc"
check "daemon.json keeps the admin's key beside the nvidia runtime" \
  sim_inspect python3 -c 'import json,sys; d=json.load(open("/etc/docker/daemon.json")); sys.exit(not (d["max-download-attempts"] == 1 and "nvidia" in d["runtimes"]))'

sim_section "doctor --registry and launch --registry read the image's CUDA from the registry, nothing pulled"
sim_gp doctor-reg --manifest /sim/cuda.yaml doctor --registry --json
img=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); l=[x for x in d["layers"] if x["name"]=="image"][0]; print(l["detail"])' "$SIM_DIR/doctor-reg.out" 2>&1)
check "doctor: the image's CUDA_VERSION, read from the registry (an OCI index, its linux/amd64 config)" \
  grep -qF "the image's CUDA_VERSION 12.2.2, read from its registry" <<<"$img"
sim_gp doctor-off --manifest /sim/cuda.yaml doctor --json
img_off=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); l=[x for x in d["layers"] if x["name"]=="image"][0]; print(l["status"], l["detail"])' "$SIM_DIR/doctor-off.out" 2>&1)
check "without --registry doctor stays offline (the image's CUDA not known)" grep -q "is unknown: read from the image's CUDA_VERSION" <<<"$img_off"
sim_gp launch-reg --manifest /sim/unpinned.yaml launch --registry --image "$CUDA" -- python train.py
check_rc "launch --registry" 0 launch-reg
check "launch --registry knows the image's CUDA (no warning that it is unknown)" \
  not grep -q "is not known to gpuprep" "$SIM_DIR/launch-reg.err"
check_eq "the registry served manifests, no blob of a layer" 0 \
  "$(grep -c '"GET /v2/nvidia/cuda/blobs/sha256:[0-9a-f]* HTTP/1.1" 200 [0-9]\{6,\}' "$SIM_DIR/registry/registry.log")"

sim_section "the same through token authentication (401, Bearer, a token from the token server)"
sim_registry_stop
sim_registry_start token || sim_fail "the registry did not start with token authentication"
check "the registry now asks for a token" registry_asks_token
sim_gp doctor-token --manifest /sim/cuda.yaml doctor --registry --json
img=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); l=[x for x in d["layers"] if x["name"]=="image"][0]; print(l["detail"])' "$SIM_DIR/doctor-token.out" 2>&1)
check "doctor --registry reads it through the token dance" grep -qF "the image's CUDA_VERSION 12.2.2, read from its registry" <<<"$img"
check "the token server issued a token for the repository" grep -q "nvidia/cuda" "$SIM_DIR/registry/token.log"
sim_registry_stop
sim_registry_start || sim_fail "the registry did not start again"

sim_section "apply pulls a Docker v2 manifest by digest: quiet without a terminal, progress on one"
check "the converging apply recorded its digest" sim_inspect grep -qF "\"${TORCH}@$DT\": \"$DT\"" /var/lib/gpuprep/images.json
check "no progress line without a terminal" not grep -q 'pulling ' "$SIM_DIR/converge.err"
sim_run docker image rm "${TORCH%:*}@$DT" >/dev/null 2>&1
sim_run script -qec "gpuprep --manifest /sim/torch.yaml apply --yes --only image" /dev/null >"$SIM_DIR/torch-tty.out" 2>&1
check "on a terminal the pull shows its progress (layers, bytes)" \
  grep -qE "pulling ${TORCH}@$DT: [0-9]+/[0-9]+ layers" "$SIM_DIR/torch-tty.out"

sim_section "apply pulls an OCI index by digest (the engine picks linux/amd64)"
gets0=$(grep -c '"GET /v2/nvidia/cuda/manifests/sha256:' "$SIM_DIR/registry/registry.log")
sim_gp cuda --manifest /sim/cuda.yaml apply --yes --only image
check_rc "apply --only image" 0 cuda
check "it records the index's digest" sim_inspect grep -qF "\"${CUDA}@$DC\": \"$DC\"" /var/lib/gpuprep/images.json
check_eq "the engine fetched the index, then the amd64 manifest" 2 \
  "$(($(grep -c '"GET /v2/nvidia/cuda/manifests/sha256:' "$SIM_DIR/registry/registry.log") - gets0))"

sim_section "a digest the registry does not have: exit 1, the engine's words, nothing recorded"
sim_snapshot before-wrong
sim_gp wrong --manifest /sim/wrong.yaml apply --yes --only image
check_rc "apply --only image" 1 wrong
check "it says the manifest is unknown" grep -q "manifest unknown" "$SIM_DIR/wrong.err"
check_eq "nothing recorded" "" "$(sim_diff before-wrong | grep -v '^[<>] ./var/lib/gpuprep')"

sim_section "an image with no manifest for this host's platform: exit 1, the engine's words"
sim_gp arm --manifest /sim/arm.yaml apply --yes --only image
check_rc "apply --only image" 1 arm
check "no matching manifest for linux/amd64" grep -q "no matching manifest for linux/amd64" "$SIM_DIR/arm.err"
check "nothing recorded for it" not sim_inspect grep -qF "$DA" /var/lib/gpuprep/images.json

sim_section "the registry goes away mid-pull: exit 1, nothing recorded; the next apply finishes"
sim_registry_throttle 40mbit
sim_run_bg sh -c '/sim/bin/gpuprep --manifest /sim/big.yaml apply --yes --only image >/sim/big-cut.out 2>&1'
bg=$SIM_BG_PID
for _ in $(seq 400); do
  grep -q '"GET /v2/nvidia/pytorch/blobs/sha256:' "$SIM_DIR/registry/registry.log" 2>/dev/null && break
  sleep 0.05
done
sleep 0.5
sim_registry_kill
big_rc=0
sim_wait_bg || big_rc=$?
sim_registry_throttle off
check_eq "apply fails when the registry goes away" 1 "$big_rc"
check "the engine took the admin's max-download-attempts (it never retried a second time)" \
  not grep -q "Download failed, retrying (2/" "$SIM_HOST/sim/log/dockerd.log"
check "with the engine's words" grep -qE "error: image.pull: cannot pull ${BIG}@$DB: .*(connection refused|EOF|connection reset)" "$SIM_HOST/sim/big-cut.out"
check "nothing recorded for the image" not sim_inspect grep -qF "$DB" /var/lib/gpuprep/images.json
sim_registry_start || sim_fail "the registry did not come back"
sim_gp big --manifest /sim/big.yaml apply --yes --only image
check_rc "with the registry back, apply pulls it" 0 big
check "and records it" sim_inspect grep -qF "\"${BIG}@$DB\": \"$DB\"" /var/lib/gpuprep/images.json

sim_section "this machine is as it was"
check_eq "its mounts, interfaces, cgroups and packages are unchanged (the engine, the registry and their cgroups stayed in the simulation)" \
  "" "$(sim_host_changes)"

sim_finish sim_image_pull
