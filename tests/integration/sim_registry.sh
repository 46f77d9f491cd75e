#!/usr/bin/env bash
# ctest-labels: sim
# shellcheck disable=SC2317  # functions run from the EXIT trap and through check
# The simulated server's nvcr.io (tests/sim/registry.sh): Debian's docker-registry 2.8 with TLS from a throwaway
# CA, images pushed over its HTTP API by registry_push.py, pulled by Debian's real dockerd 20.10 (docker.io,
# containerd, runc, tini from Debian 12, fetched with `apt-get download` into <build-dir>/tests-sim-registry-debs/),
# all in a private network namespace; dockerd in its own mount and pid namespaces, where /etc/hosts resolves
# nvcr.io to the registry's address and /etc/docker/certs.d/nvcr.io/ca.crt holds the CA (as sim_registry_trust
# writes them; the engine trusts the registry through that file alone: without it the pull is refused).
# Checks: a Docker v2 image pulled by tag and by digest, RepoDigests equal to the digest the push printed,
# the image's configured environment (CUDA_VERSION) and a container of it; an OCI index pulled for linux/amd64;
# an index without linux/amd64 and an unknown digest refused with the engine's messages; what the registry
# answers to a manifest GET without Accept (a schema1 conversion); storage surviving a restart; token auth
# (401 with a Bearer challenge, the pull through the token server); the registry killed mid-pull (the
# engine's error), and back within the engine's retry delay (the pull completes). Nothing left behind: the
# namespaces, the engine's cgroups and every process are gone at the end.
# Exit 77 (skipped) without root, nsenter, unshare or `ip netns`, or where the packages cannot be fetched.
# Usage: bash sim_registry.sh <gpuprep> <source-dir> <build-dir>
set -uo pipefail
SRC=${2:?source dir}
BUILD=$(cd "${3:?build dir}" && pwd) || exit 1  # absolute: the engine refuses a relative PATH entry
source "$SRC/tests/sim/lib.sh"
source "$SRC/tests/sim/registry.sh"

[[ $(id -u) == 0 ]] || sim_skip "a network namespace and dockerd need root"
for tool in ip nsenter unshare tc openssl dpkg-deb python3 apt-get; do
  command -v "$tool" >/dev/null || sim_skip "$tool not found"
done
unshare --mount --pid --fork true 2>/dev/null || sim_skip "unshare --mount --pid is not permitted here"

# what an earlier run killed before its EXIT trap left behind (its pid, in the names, is gone): the processes
# in its network namespace, the namespace, its cgroups and its temp dir
for ns in /run/netns/gpuprep-regtest-*; do
  [[ -e $ns ]] || continue
  owner=${ns##*-}
  if [[ ! $owner =~ ^[0-9]+$ ]] || kill -0 "$owner" 2>/dev/null; then continue; fi
  for p in $(ip netns pids "${ns##*/}" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
  sleep 0.2
  ip netns del "${ns##*/}" 2>/dev/null
  for d in /sys/fs/cgroup/"gpuprep-regtest-$owner" /sys/fs/cgroup/*/"gpuprep-regtest-$owner"; do
    [[ -d $d ]] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
done
for d in /tmp/gpuprep-regtest.??????; do
  [[ -f $d/owner.pid ]] || continue
  owner=$(cat "$d/owner.pid")
  [[ $owner =~ ^[0-9]+$ ]] && ! kill -0 "$owner" 2>/dev/null && rm -rf "$d"
done

NS=gpuprep-regtest-$$
CGROUP=gpuprep-regtest-$$
PULL_PID=
ENGINE_PID=     # the unshare process that holds dockerd's namespaces
DOCKERD_PID=    # dockerd (pid 1 there), as this namespace sees it
SIM_DIR=$(mktemp -d /tmp/gpuprep-regtest.XXXXXX)
echo $$ >"$SIM_DIR/owner.pid"
SIM_NETNS=/run/netns/$NS

engine_stop() {
  [[ -n $ENGINE_PID ]] || return 0
  if [[ -n $DOCKERD_PID ]] && kill -TERM "$DOCKERD_PID" 2>/dev/null; then
    local i
    for ((i = 0; i < 200; i++)); do kill -0 "$ENGINE_PID" 2>/dev/null || break; sleep 0.05; done
  fi
  kill -KILL "$ENGINE_PID" 2>/dev/null  # --kill-child takes dockerd and its namespace with it
  wait "$ENGINE_PID" 2>/dev/null || true
  ENGINE_PID=
  DOCKERD_PID=
}
cgroups_remove() {
  local d
  for d in /sys/fs/cgroup/"$CGROUP" /sys/fs/cgroup/*/"$CGROUP"; do
    [[ -d $d ]] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
  return 0
}
cleanup() {
  local rc=$?
  [[ -n $PULL_PID ]] && kill -KILL "$PULL_PID" 2>/dev/null
  engine_stop
  sim_registry_cleanup
  [[ -e $SIM_NETNS ]] && ip netns del "$NS" 2>/dev/null
  cgroups_remove
  if [[ -n ${SIM_KEEP:-} ]]; then echo "kept $SIM_DIR" >&2; else rm -rf "$SIM_DIR"; fi
  return "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
ip netns add "$NS" 2>/dev/null || sim_skip "ip netns add is not permitted here"

sim_section "Debian packages"
DEBS=$BUILD/tests-sim-registry-debs
mkdir -p "$DEBS"
for pkg in docker-registry docker.io containerd runc tini; do
  compgen -G "$DEBS/${pkg}_*.deb" >/dev/null && continue
  (cd "$DEBS" && apt-get download "$pkg" >/dev/null 2>"$SIM_DIR/apt.err") ||
    sim_fail "apt-get download $pkg failed (Debian's archive is needed): $(tail -n 1 "$SIM_DIR/apt.err")"
done
sim_registry_debs "$DEBS"
# the engine's packages extracted once per set of .debs (a few seconds), beside them
ENGINE_DEBS=()
for pkg in docker.io containerd runc tini; do
  ENGINE_DEBS+=("$(find "$DEBS" -maxdepth 1 -name "${pkg}_*.deb" | sort -V | tail -n 1)")
done
ENGINE=$DEBS/engine-$(basename -a "${ENGINE_DEBS[@]}" | sha256sum | cut -c1-12)
if [[ ! -f $ENGINE/.complete ]]; then
  rm -rf "$DEBS"/engine-*
  for deb in "${ENGINE_DEBS[@]}"; do dpkg-deb -x "$deb" "$ENGINE" || sim_fail "dpkg-deb -x $deb"; done
  touch "$ENGINE/.complete"
fi
check "registry binary extracted" test -x "$SIM_DIR/registry/bin/docker-registry"
echo "   $("$SIM_DIR/registry/bin/docker-registry" --version), $("$ENGINE/usr/sbin/dockerd" --version)"

sim_section "registry up, images pushed"
sim_registry_start
echo "   registry started in $SIM_REGISTRY_START_MS ms"
check "registry running" _sim_registry_alive "$SIM_REGISTRY_PID"
check "a second start is refused" bash -c "! (source '$SRC/tests/sim/registry.sh'; SIM_DIR=$SIM_DIR SIM_NETNS=$SIM_NETNS; sim_registry_start) 2>/dev/null"
check_eq "GET /v2/ without auth" "HTTP 200" "$(sim_registry_request GET https://nvcr.io/v2/ | head -n 1)"

ROOTFS=$SIM_DIR/rootfs
sim_registry_minimal_rootfs "$ROOTFS"

PT=nvcr.io/nvidia/pytorch:25.12-py3
PT_ENV=(CUDA_VERSION=13.0.1 CUDA_DRIVER_VERSION=580.82.07 "NVIDIA_REQUIRE_CUDA=cuda>=13.0" NVIDIA_PYTORCH_VERSION=25.12)
PT_DIGEST=$(sim_registry_push "$PT" --rootfs "$ROOTFS" "${PT_ENV[@]}" --json "$SIM_DIR/pt.json")
PT_LAYER=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["layers"][0]["digest"])' "$SIM_DIR/pt.json")
echo "   $PT -> $PT_DIGEST (push $(cat "$SIM_DIR/registry/push.ms") ms)"
CU=nvcr.io/nvidia/cuda:13.0.1-base-ubuntu22.04
CU_DIGEST=$(sim_registry_push "$CU" --format oci-index --rootfs "$ROOTFS" CUDA_VERSION=13.0.1 --json "$SIM_DIR/cu.json")
echo "   $CU -> $CU_DIGEST (OCI index, push $(cat "$SIM_DIR/registry/push.ms") ms)"
ARM=nvcr.io/nvidia/l4t-jetpack:r36.4.0
ARM_DIGEST=$(sim_registry_push "$ARM" --platforms arm64 --rootfs "$ROOTFS" CUDA_VERSION=12.6.68)
echo "   $ARM -> $ARM_DIGEST (linux/arm64 only)"
# each image its own configuration: images whose configurations are the same bytes are one image to the
# engine, whose RepoDigests then lists every repository digest that led to it
OCI=nvcr.io/nvidia/cuda:13.0.1-runtime-ubuntu22.04
OCI_DIGEST=$(sim_registry_push "$OCI" --format oci --rootfs "$ROOTFS" CUDA_VERSION=13.0.1 NV_CUDA_FLAVOR=runtime)
LIST=nvcr.io/nvidia/cuda:13.0.1-devel-ubuntu22.04
LIST_DIGEST=$(sim_registry_push "$LIST" --format docker-list --rootfs "$ROOTFS" CUDA_VERSION=13.0.1 NV_CUDA_FLAVOR=devel)
BIG=nvcr.io/nvidia/tritonserver:25.12-py3
BIG_DIGEST=$(sim_registry_push "$BIG" --rootfs "$ROOTFS" --extra-layer-mb 100 CUDA_VERSION=13.0.1)
echo "   $BIG -> $BIG_DIGEST (100 MiB random layer, push $(cat "$SIM_DIR/registry/push.ms") ms)"
for d in "$PT_DIGEST" "$CU_DIGEST" "$ARM_DIGEST" "$OCI_DIGEST" "$LIST_DIGEST" "$BIG_DIGEST"; do
  check "push printed a digest ($d)" test "${#d}" -eq 71
done

sim_section "manifest GET without Accept"
V1=$(sim_registry_request GET "https://nvcr.io/v2/nvidia/pytorch/manifests/25.12-py3")
V1_TYPE=$(sed -n 's/^Content-Type: //p' <<<"$V1" | head -n 1)
V1_DIGEST=$(sed -n 's/^Docker-Content-Digest: //p' <<<"$V1" | head -n 1)
echo "   by tag: $(head -n 1 <<<"$V1"), $V1_TYPE, $V1_DIGEST"
check_eq "by tag, no Accept: converted to schema 1" "application/vnd.docker.distribution.manifest.v1+prettyjws" "$V1_TYPE"
check "the schema 1 digest is another than the pushed one" test "$V1_DIGEST" != "$PT_DIGEST"
V2=$(sim_registry_request GET "https://nvcr.io/v2/nvidia/pytorch/manifests/$PT_DIGEST")
echo "   by digest: $(head -n 1 <<<"$V2"), $(sed -n 's/^Content-Type: //p' <<<"$V2" | head -n 1)"
check_eq "by digest, no Accept: the stored manifest" "$PT_DIGEST" "$(sed -n 's/^Docker-Content-Digest: //p' <<<"$V2" | head -n 1)"
V3=$(sim_registry_request GET "https://nvcr.io/v2/nvidia/cuda/manifests/13.0.1-base-ubuntu22.04")
echo "   OCI index by tag: $(head -n 1 <<<"$V3"), $(sed -n 's/^Content-Type: //p' <<<"$V3" | head -n 1), body: $(tail -n 1 <<<"$V3" | head -c 200)"
H=$(sim_registry_request -H "Accept: application/vnd.docker.distribution.manifest.v2+json" HEAD \
  "https://nvcr.io/v2/nvidia/pytorch/manifests/25.12-py3")
check_eq "with Accept v2: the pushed digest" "$PT_DIGEST" "$(sed -n 's/^Docker-Content-Digest: //p' <<<"$H" | head -n 1)"

sim_section "dockerd in the namespace"
HOSTROOT=$SIM_DIR/hostroot
sim_registry_trust "$HOSTROOT"
sim_registry_trust "$HOSTROOT"  # idempotent
check_eq "hosts line once" 1 "$(grep -cxF "$SIM_REGISTRY_ADDR nvcr.io" "$HOSTROOT/etc/hosts")"
check_eq "CA in the bundle once" 1 "$(grep -c 'gpuprep sim registry CA' "$HOSTROOT/etc/ssl/certs/ca-certificates.crt")"
check "docker's per-registry CA" cmp -s "$SIM_DIR/registry/ca.crt" "$HOSTROOT/etc/docker/certs.d/nvcr.io/ca.crt"
mkdir -p "$SIM_DIR/docker-root" "$SIM_DIR/docker-cli" "$SIM_DIR/etc-upper" "$SIM_DIR/etc-work"
cat >"$SIM_DIR/engine.sh" <<'SH'
set -euo pipefail
mount --make-rprivate /
mount -t tmpfs tmpfs /run
mount -t proc proc /proc
mount -t tmpfs tmpfs "$SIM_DIR/docker-root"
# /etc as an overlay private to this namespace: the machine may have no /etc/docker to mount over
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$SIM_DIR/etc-upper,workdir=$SIM_DIR/etc-work" /etc
mkdir -p /etc/docker
mount --bind "$HOSTROOT/etc/docker" /etc/docker
mount --bind "$HOSTROOT/etc/hosts" /etc/hosts
export PATH=$ENGINE/usr/bin:$ENGINE/usr/sbin:$ENGINE/sbin:$PATH
# two download attempts instead of five: a pull whose registry stays away fails 15 s after, not 80 s
exec dockerd --max-download-attempts=2 --iptables=false --bridge=none --ip-forward=false --exec-opt native.cgroupdriver=cgroupfs \
  --cgroup-parent="/$CGROUP" --data-root "$SIM_DIR/docker-root" -H "unix://$SIM_DIR/docker.sock"
SH
T0=$(_sim_ms)
export SIM_DIR HOSTROOT ENGINE CGROUP
nsenter --net="$SIM_NETNS" unshare --mount --pid --fork --kill-child bash "$SIM_DIR/engine.sh" </dev/null >"$SIM_DIR/dockerd.log" 2>&1 &
ENGINE_PID=$!
docker() { DOCKER_CONFIG=$SIM_DIR/docker-cli "$ENGINE/usr/bin/docker" -H "unix://$SIM_DIR/docker.sock" "$@"; }
for ((i = 0; i < 600; i++)); do
  docker version >/dev/null 2>&1 && break
  kill -0 "$ENGINE_PID" 2>/dev/null || break
  sleep 0.05
done
docker version >/dev/null 2>&1 || { tail -n 20 "$SIM_DIR/dockerd.log" >&2; sim_fail "dockerd did not come up"; }
DOCKERD_PID=$(cut -d' ' -f1 "/proc/$ENGINE_PID/task/$ENGINE_PID/children" 2>/dev/null)
echo "   dockerd $(docker version --format '{{.Server.Version}}') up in $(($(_sim_ms) - T0)) ms (pid $DOCKERD_PID)"

# pull NAME REF: docker pull REF; output in $SIM_DIR/NAME.out, exit code in PULL_RC, wall time in PULL_MS
pull() {
  local t
  t=$(_sim_ms)
  PULL_RC=0
  docker pull "$2" >"$SIM_DIR/$1.out" 2>&1 || PULL_RC=$?
  PULL_MS=$(($(_sim_ms) - t))
  echo "   docker pull $2 -> exit $PULL_RC in $PULL_MS ms"
}
refused() { ! sim_registry_request GET https://nvcr.io/v2/ >/dev/null 2>&1; }
absent() { ! docker image inspect "$1" >/dev/null 2>&1; }
pulled_ok() { # pulled_ok NAME: the pull succeeded (else shows its output)
  [[ $PULL_RC == 0 ]] && return 0
  sed 's/^/     /' "$SIM_DIR/$1.out" >&2
  return 1
}

sim_section "pulls"
mv "$HOSTROOT/etc/docker/certs.d/nvcr.io/ca.crt" "$SIM_DIR/ca.crt.aside"
pull untrusted "$PT"
mv "$SIM_DIR/ca.crt.aside" "$HOSTROOT/etc/docker/certs.d/nvcr.io/ca.crt"
echo "   error (no CA in certs.d): $(tail -n 1 "$SIM_DIR/untrusted.out")"
check "without the CA the engine refuses the registry" grep -q 'x509: certificate signed by unknown authority' "$SIM_DIR/untrusted.out"
pull pt "$PT"
check "pull by tag" pulled_ok pt
check_eq "RepoDigests = the pushed digest" "[nvcr.io/nvidia/pytorch@$PT_DIGEST]" \
  "$(docker image inspect --format '{{.RepoDigests}}' "$PT" 2>&1)"
ENV_OUT=$(docker image inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$PT" 2>&1)
check "the image's environment carries CUDA_VERSION=13.0.1" grep -qx 'CUDA_VERSION=13.0.1' <<<"$ENV_OUT"
check "and NVIDIA_REQUIRE_CUDA" grep -qx 'NVIDIA_REQUIRE_CUDA=cuda>=13.0' <<<"$ENV_OUT"
RUN_OUT=$(docker run --rm --network none "$PT" sh -c 'echo "cuda $CUDA_VERSION"' 2>&1)
check_eq "a container of it runs with that environment" "cuda 13.0.1" "$RUN_OUT"
docker rmi -f "$PT" >/dev/null 2>&1
pull pt-digest "nvcr.io/nvidia/pytorch@$PT_DIGEST"
check "pull by digest" pulled_ok pt-digest
docker rmi -f "nvcr.io/nvidia/pytorch@$PT_DIGEST" >/dev/null 2>&1
pull pt-tag-digest "$PT@$PT_DIGEST"
check "pull by tag@digest" pulled_ok pt-tag-digest
echo "   $(tail -n 2 "$SIM_DIR/pt-tag-digest.out" | tr '\n' ' ')"
pull cu "$CU"
check "OCI index pulled" pulled_ok cu
check_eq "its RepoDigests = the index digest" "[nvcr.io/nvidia/cuda@$CU_DIGEST]" \
  "$(docker image inspect --format '{{.RepoDigests}}' "$CU" 2>&1)"
check_eq "the linux/amd64 entry's image" "amd64 $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["manifests"]["amd64"]["config"])' "$SIM_DIR/cu.json")" \
  "$(docker image inspect --format '{{.Architecture}} {{.Id}}' "$CU" 2>&1)"
pull oci "$OCI"
check "OCI manifest pulled" pulled_ok oci
check_eq "its RepoDigests" "[nvcr.io/nvidia/cuda@$OCI_DIGEST]" "$(docker image inspect --format '{{.RepoDigests}}' "$OCI" 2>&1)"
pull list "$LIST"
check "Docker manifest list pulled" pulled_ok list
check_eq "its RepoDigests = the list digest" "[nvcr.io/nvidia/cuda@$LIST_DIGEST]" \
  "$(docker image inspect --format '{{.RepoDigests}}' "$LIST" 2>&1)"
pull arm "$ARM"
check "an index without linux/amd64 is refused" test "$PULL_RC" != 0
ARM_ERR=$(tail -n 1 "$SIM_DIR/arm.out")
echo "   error: $ARM_ERR"
check "no matching manifest for linux/amd64" grep -q 'no matching manifest for linux/amd64 in the manifest list entries' "$SIM_DIR/arm.out"
WRONG=sha256:$(printf 0%.0s {1..64})
pull wrong "nvcr.io/nvidia/pytorch@$WRONG"
check "an unknown digest is refused" test "$PULL_RC" != 0
echo "   error: $(tail -n 1 "$SIM_DIR/wrong.out")"
check "manifest unknown" grep -q 'manifest unknown' "$SIM_DIR/wrong.out"
pull wrong-tag "$PT@$WRONG"
echo "   error (tag@digest): $(tail -n 1 "$SIM_DIR/wrong-tag.out")"
check "an unknown digest after the tag too" grep -q 'manifest unknown' "$SIM_DIR/wrong-tag.out"

sim_section "stop, start: storage kept"
T0=$(_sim_ms)
OLD=$SIM_REGISTRY_PID
sim_registry_stop
echo "   stopped in $(($(_sim_ms) - T0)) ms"
check "registry gone after stop" bash -c "! kill -0 $OLD 2>/dev/null"
check "nothing answers after stop" refused
sim_registry_stop  # idempotent
sim_registry_kill
docker rmi -f "$PT" >/dev/null 2>&1
pull down "$PT"
echo "   error (registry down): $(tail -n 1 "$SIM_DIR/down.out")"
check "pull with the registry down fails, over HTTPS only" grep -q "Get \"https://nvcr.io/v2/\": dial tcp $SIM_REGISTRY_ADDR:443: connect: connection refused" "$SIM_DIR/down.out"
sim_registry_start
check_eq "the layer blob is still there" "HTTP 200" \
  "$(sim_registry_request HEAD "https://nvcr.io/v2/nvidia/pytorch/blobs/$PT_LAYER" | head -n 1)"
pull pt-again "$PT"
check "pulled again after the restart" pulled_ok pt-again

sim_section "token auth"
sim_registry_stop
sim_registry_start token
echo "   registry with its token server started in $SIM_REGISTRY_START_MS ms"
CH=$(sim_registry_request GET https://nvcr.io/v2/)
check_eq "GET /v2/ -> 401" "HTTP 401" "$(head -n 1 <<<"$CH")"
CHALLENGE=$(sed -n 's/^Www-Authenticate: //Ip' <<<"$CH" | head -n 1)
echo "   challenge: $CHALLENGE"
check_eq "Bearer challenge" "Bearer realm=\"https://nvcr.io:$SIM_REGISTRY_TOKEN_PORT/proxy_auth\",service=\"$SIM_REGISTRY_SERVICE\"" "$CHALLENGE"
check_eq "a manifest without a token -> 401" "HTTP 401" \
  "$(sim_registry_request GET "https://nvcr.io/v2/nvidia/pytorch/manifests/25.12-py3" | head -n 1)"
docker rmi -f "$PT" >/dev/null 2>&1
pull pt-token "$PT"
check "pull through the token server" pulled_ok pt-token
check "docker asked the token server for pull" grep -q "scope=repository:nvidia/pytorch:pull account=-" "$SIM_DIR/registry/token.log"
TOK_DIGEST=$(sim_registry_push nvcr.io/nvidia/pytorch:25.12-py3-token --rootfs "$ROOTFS" "${PT_ENV[@]}")
check_eq "push through the token server (same image, same digest)" "$PT_DIGEST" "$TOK_DIGEST"
check "the push asked for pull,push" grep -q "scope=repository:nvidia/pytorch:pull,push" "$SIM_DIR/registry/token.log"
sim_registry_stop
check "token server gone" test -z "$(cat "$SIM_DIR/registry/token.pid" 2>/dev/null)"

sim_section "registry killed mid-pull"
sim_registry_start
BLOB_DIR=/proc/$DOCKERD_PID/root$SIM_DIR/docker-root/tmp
# blob_bytes: bytes dockerd has downloaded into its temporary blob files so far
blob_bytes() { find "$BLOB_DIR" -maxdepth 1 -name 'GetImageBlob*' -printf '%s\n' 2>/dev/null | awk '{s += $1} END {print s + 0}'; }
sim_registry_throttle 200mbit
T0=$(_sim_ms)
docker pull "$BIG" >"$SIM_DIR/big.out" 2>&1 &
PULL_PID=$!
for ((i = 0; i < 400; i++)); do (($(blob_bytes) > 20 * 1024 * 1024)) && break; sleep 0.05; done
GOT=$(blob_bytes)
sim_registry_kill
T_KILL=$(_sim_ms)
echo "   killed after $((T_KILL - T0)) ms with $((GOT / 1048576)) MiB of the layer downloaded"
check "the layer was being downloaded when the registry went away" test "$GOT" -gt $((20 * 1024 * 1024))
wait "$PULL_PID"
BIG_RC=$?
T_END=$(_sim_ms)
echo "   docker pull -> exit $BIG_RC, $((T_END - T_KILL)) ms after the kill; its output:"
grep -v 'Retrying in' "$SIM_DIR/big.out" | sed 's/^/     /'
echo "     ($(grep -c 'Retrying in' "$SIM_DIR/big.out") 'Retrying in N seconds' lines)"
check "the pull failed" test "$BIG_RC" != 0
check "connection refused" grep -q "dial tcp $SIM_REGISTRY_ADDR:443: connect: connection refused" "$SIM_DIR/big.out"
check "the image is not there" absent "$BIG"
grep -i 'level=\(error\|warn\)' "$SIM_DIR/dockerd.log" | grep -i 'download\|pull\|tritonserver' | tail -n 4 | sed 's/^/   dockerd: /'

sim_section "registry back within the engine's retry delay"
sim_registry_start
T0=$(_sim_ms)
docker pull "$BIG" >"$SIM_DIR/big2.out" 2>&1 &
PULL_PID=$!
for ((i = 0; i < 400; i++)); do (($(blob_bytes) > 20 * 1024 * 1024)) && break; sleep 0.05; done
sim_registry_kill
sleep 1
sim_registry_start
wait "$PULL_PID"
BIG_RC=$?
echo "   docker pull -> exit $BIG_RC in $(($(_sim_ms) - T0)) ms; its output:"
grep -v 'Retrying in' "$SIM_DIR/big2.out" | sed 's/^/     /'
echo "     ($(grep -c 'Retrying in' "$SIM_DIR/big2.out") 'Retrying in N seconds' lines)"
check "the pull completed" test "$BIG_RC" == 0
check_eq "at the pushed digest" "[nvcr.io/nvidia/tritonserver@$BIG_DIGEST]" \
  "$(docker image inspect --format '{{.RepoDigests}}' "$BIG" 2>&1)"
sim_registry_throttle off
T0=$(_sim_ms)
docker rmi -f "$BIG" >/dev/null 2>&1
pull big3 "$BIG"
check "the 100 MiB image unthrottled" pulled_ok big3

sim_section "nothing left behind"
PIDS_BEFORE="$ENGINE_PID $DOCKERD_PID $SIM_REGISTRY_PID"
engine_stop
sim_registry_stop
ip netns del "$NS"
cgroups_remove
for p in $PIDS_BEFORE; do check "process $p gone" bash -c "! kill -0 $p 2>/dev/null"; done
check "network namespace deleted" test ! -e "$SIM_NETNS"
check "no cgroup left" test -z "$(find /sys/fs/cgroup -maxdepth 2 -name "$CGROUP" 2>/dev/null)"
check "no process running from our directory" test -z "$(pgrep -f -- "$SIM_DIR")"

sim_finish sim_registry
