# shellcheck shell=bash
# shellcheck disable=SC2034  # the SIM_REGISTRY_* results are read by the scenarios
# A real registry playing NVIDIA's nvcr.io for the simulated server: Debian's docker-registry (the CNCF
# Distribution registry, 2.8) on $SIM_REGISTRY_ADDR:443 of the sim's network namespace, TLS with a throwaway CA,
# filesystem storage, optionally token auth through a stand-in of NGC's token server (registry_token.py).
# Images are pushed over the registry's HTTP API by registry_push.py (no Docker needed).
# Source it (after lib.sh or alone); every function runs in the calling shell.
#
# Needs: SIM_DIR (a temp dir; everything lives under $SIM_DIR/registry) and, for start/push/request/throttle,
# SIM_NETNS (a network namespace path, e.g. /run/netns/NAME: every process runs via `nsenter --net=$SIM_NETNS`,
# so its addresses are that namespace's). Tools: dpkg-deb, openssl, python3, nsenter, ip; tc for
# sim_registry_throttle.
#
# The registry's address, SIM_REGISTRY_ADDR, is 192.0.2.10 (TEST-NET-1, RFC 5737), added to the namespace's lo,
# not 127.0.0.1: dockerd counts every registry whose name resolves into 127.0.0.0/8 as insecure (its built-in
# insecure-registries range), and for an insecure registry it skips the certificate check and falls back to
# plain HTTP (https://docs.docker.com/reference/cli/dockerd/#insecure-registries), so nothing it pulled from a
# loopback nvcr.io would show that the host trusts the CA. On 192.0.2.10 Docker treats nvcr.io as the real one.
#
# sim_registry_debs DIR: extracts /usr/bin/docker-registry from DIR/docker-registry_*.deb (the newest there)
#   into $SIM_DIR/registry/bin/, once.
# sim_registry_start [token]: creates once per SIM_DIR a CA ($SIM_DIR/registry/ca.crt, ca.key) and a server
#   certificate for DNS:nvcr.io, IP:$SIM_REGISTRY_ADDR and IP:127.0.0.1 signed by it, writes
#   $SIM_DIR/registry/config.yml (listens on $SIM_REGISTRY_ADDR:443, TLS, storage in $SIM_DIR/registry/data,
#   no htpasswd; with `token`: auth.token with realm
#   https://nvcr.io:$SIM_REGISTRY_TOKEN_PORT/proxy_auth (the token server on that address too), service SIM_REGISTRY_SERVICE, a throwaway signing
#   certificate as rootcertbundle), starts the token server (with `token`) and the registry in the background
#   and waits until GET https://nvcr.io/v2/ answers (200; with token 401 and `WWW-Authenticate: Bearer`).
#   Sets SIM_REGISTRY_PID, SIM_REGISTRY_TOKEN_PID (empty without token), SIM_REGISTRY_PIDS (both), pid files
#   $SIM_DIR/registry/{registry,token}.pid, SIM_REGISTRY_START_MS. The storage survives a stop and a start
#   (in either mode). Logs: $SIM_DIR/registry/registry.log, token.log (one line per token issued).
#   Fails (exit 1) if it is already running or does not come up.
# sim_registry_stop: SIGTERM (the registry drains and exits), SIGKILL after 10 s; sim_registry_kill: SIGKILL at
#   once (the registry going away mid-transfer). Both stop the token server too, are idempotent and wait
#   until the processes are gone. sim_registry_cleanup: sim_registry_kill for an EXIT trap (never fails).
# sim_registry_trust HOSTROOT: writes what a host rooted at HOSTROOT (a directory such as an overlay's upper
#   layer) needs to trust and resolve the registry: HOSTROOT/etc/ssl/certs/ca-certificates.crt (this machine's
#   bundle copied first where absent) with the CA appended once, the same CA as
#   HOSTROOT/usr/local/share/ca-certificates/gpuprep-sim-nvcr.crt (so that update-ca-certificates keeps it),
#   HOSTROOT/etc/docker/certs.d/nvcr.io/ca.crt (Docker's per-registry CA, https://docs.docker.com/engine/security/certificates/),
#   and `$SIM_REGISTRY_ADDR nvcr.io` in HOSTROOT/etc/hosts (this machine's copied first where absent). Idempotent.
# sim_registry_push REF [--rootfs DIR] [--format docker|oci|oci-index|docker-list] [--platforms LIST]
#   [--extra-layer-mb N] [--cmd ARG]... [--label K=V]... [--json FILE] [ENV=VALUE]...: pushes an image
#   (registry_push.py's doc has the formats) and prints the digest `docker pull REF` records (manifest or index
#   digest). REF like nvcr.io/nvidia/pytorch:25.12-py3. Does the token dance when the registry asks for it.
#   Its wall time goes to SIM_REGISTRY_PUSH_MS and $SIM_DIR/registry/push.ms (for a call inside $(...)).
# sim_registry_request [--auth] [-H 'Name: value']... METHOD URL: one HTTPS request to the registry (or the
#   token server) from the namespace; prints `HTTP STATUS`, headers, a blank line, the body.
# sim_registry_throttle RATE|off: limits loopback traffic in the namespace (tc tbf on lo, e.g. 200mbit; its
#   bucket holds 1 MiB, more than lo's 64 KiB MTU, else tbf drops every full-size packet and connections stall),
#   so a pull lasts long enough to be interrupted; it slows everything on the namespace's loopback. `off` removes it.
# sim_registry_minimal_rootfs DIR: the smallest tree an image can run: this machine's /bin/sh and the libraries
#   ldd lists for it, at their paths (a --rootfs for tests that need no more).
# SIM_REGISTRY_HOST (nvcr.io), SIM_REGISTRY_ADDR, SIM_REGISTRY_SERVICE (ngc), SIM_REGISTRY_TOKEN_PORT (5443).

SIM_REGISTRY_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SIM_REGISTRY_HOST=nvcr.io
SIM_REGISTRY_ADDR=${SIM_REGISTRY_ADDR:-192.0.2.10}
SIM_REGISTRY_SERVICE=${SIM_REGISTRY_SERVICE:-ngc}
SIM_REGISTRY_TOKEN_PORT=${SIM_REGISTRY_TOKEN_PORT:-5443}
SIM_REGISTRY_ISSUER="gpuprep sim token server"
SIM_REGISTRY_PID=
SIM_REGISTRY_TOKEN_PID=
SIM_REGISTRY_PIDS=
SIM_REGISTRY_START_MS=
SIM_REGISTRY_PUSH_MS=

_sim_registry_fail() {
  if declare -F sim_fail >/dev/null; then sim_fail "registry: $*"; fi
  echo "FAIL: registry: $*" >&2
  exit 1
}
_sim_registry_need() {
  [[ -n ${SIM_DIR:-} && -d $SIM_DIR ]] || _sim_registry_fail "SIM_DIR is not set to a directory"
  mkdir -p "$SIM_DIR/registry"
}
_sim_registry_ns() {
  [[ -n ${SIM_NETNS:-} && -e $SIM_NETNS ]] || _sim_registry_fail "SIM_NETNS is not set to a network namespace"
}
_sim_registry_ms() { date +%s%3N; }

sim_registry_debs() {
  local dir=$1 reg deb x
  _sim_registry_need
  reg=$SIM_DIR/registry
  [[ -x $reg/bin/docker-registry ]] && return 0
  deb=$(find "$dir" -maxdepth 1 -name 'docker-registry_*.deb' | sort -V | tail -n 1)
  [[ -n $deb ]] || _sim_registry_fail "no docker-registry_*.deb in $dir"
  mkdir -p "$reg/bin"
  x=$(mktemp -d "$reg/deb.XXXXXX")
  dpkg-deb -x "$deb" "$x" || _sim_registry_fail "dpkg-deb -x $deb"
  install -m 0755 "$x/usr/bin/docker-registry" "$reg/bin/docker-registry"
  rm -rf "$x"
}

# _sim_registry_certs DIR: the CA, the server certificate and the token signing certificate, once.
_sim_registry_certs() {
  local reg=$1
  [[ -s $reg/server.crt && -s $reg/token-sign.crt ]] && return 0
  (
    set -e
    cd "$reg"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.crt -days 3650 \
      -subj "/CN=gpuprep sim registry CA" -addext "basicConstraints=critical,CA:TRUE" \
      -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server.key -out server.csr \
      -subj "/CN=$SIM_REGISTRY_HOST" 2>/dev/null
    printf '%s\n' "subjectAltName=DNS:$SIM_REGISTRY_HOST,IP:$SIM_REGISTRY_ADDR,IP:127.0.0.1" "basicConstraints=CA:FALSE" \
      "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth" >server.ext
    openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 825 -extfile server.ext \
      -out server.crt 2>/dev/null
    # the token signer: its own self-signed certificate, the only one in the registry's rootcertbundle
    openssl req -x509 -newkey rsa:2048 -nodes -keyout token-sign.key -out token-sign.crt -days 3650 \
      -subj "/CN=gpuprep sim token signer" 2>/dev/null
    rm -f server.csr server.ext ca.srl
  ) || _sim_registry_fail "creating the certificates with openssl"
}

_sim_registry_config() {  # _sim_registry_config DIR [token]
  local reg=$1 mode=${2:-}
  {
    cat <<EOF
version: 0.1
log:
  level: info
  formatter: text
storage:
  filesystem:
    rootdirectory: $reg/data
  delete:
    enabled: true
http:
  addr: $SIM_REGISTRY_ADDR:443
  secret: gpuprep-sim-registry
  draintimeout: 5s
  tls:
    certificate: $reg/server.crt
    key: $reg/server.key
EOF
    if [[ $mode == token ]]; then
      cat <<EOF
auth:
  token:
    realm: https://$SIM_REGISTRY_HOST:$SIM_REGISTRY_TOKEN_PORT/proxy_auth
    service: $SIM_REGISTRY_SERVICE
    issuer: $SIM_REGISTRY_ISSUER
    rootcertbundle: $reg/token-sign.crt
EOF
    fi
  } >"$reg/config.yml"
}

# _sim_registry_alive PID: true while PID runs (a zombie does not).
_sim_registry_alive() {
  local state
  [[ -n $1 && -r /proc/$1/stat ]] || return 1
  state=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
  [[ -n $state && $state != Z ]]
}

sim_registry_start() {
  local mode=${1:-} reg t0 ans
  _sim_registry_need
  reg=$SIM_DIR/registry
  _sim_registry_ns
  [[ -z $mode || $mode == token ]] || _sim_registry_fail "sim_registry_start: unknown mode '$mode'"
  [[ -x $reg/bin/docker-registry ]] || _sim_registry_fail "no registry binary: call sim_registry_debs first"
  _sim_registry_ours "$(cat "$reg/registry.pid" 2>/dev/null)" && _sim_registry_fail "already running"
  t0=$(_sim_registry_ms)
  mkdir -p "$reg/data"
  _sim_registry_certs "$reg"
  _sim_registry_config "$reg" "$mode"
  nsenter --net="$SIM_NETNS" ip link set lo up
  [[ $(nsenter --net="$SIM_NETNS" ip -o addr show dev lo) == *" $SIM_REGISTRY_ADDR/"* ]] ||
    nsenter --net="$SIM_NETNS" ip addr add "$SIM_REGISTRY_ADDR/32" dev lo ||
    _sim_registry_fail "cannot add $SIM_REGISTRY_ADDR to the namespace's lo"
  SIM_REGISTRY_TOKEN_PID=
  if [[ $mode == token ]]; then
    nsenter --net="$SIM_NETNS" python3 "$SIM_REGISTRY_LIB_DIR/registry_token.py" \
      --listen "$SIM_REGISTRY_ADDR:$SIM_REGISTRY_TOKEN_PORT" --cert "$reg/server.crt" --key "$reg/server.key" \
      --sign-key "$reg/token-sign.key" --sign-cert "$reg/token-sign.crt" --issuer "$SIM_REGISTRY_ISSUER" \
      --log "$reg/token.log" </dev/null >>"$reg/token-server.log" 2>&1 &
    SIM_REGISTRY_TOKEN_PID=$!
    disown "$SIM_REGISTRY_TOKEN_PID"  # no "Killed" notice from bash when sim_registry_kill takes it
    echo "$SIM_REGISTRY_TOKEN_PID" >"$reg/token.pid"
  fi
  nsenter --net="$SIM_NETNS" "$reg/bin/docker-registry" serve "$reg/config.yml" </dev/null >>"$reg/registry.log" 2>&1 &
  SIM_REGISTRY_PID=$!
  disown "$SIM_REGISTRY_PID"
  echo "$SIM_REGISTRY_PID" >"$reg/registry.pid"
  SIM_REGISTRY_PIDS="$SIM_REGISTRY_PID${SIM_REGISTRY_TOKEN_PID:+ $SIM_REGISTRY_TOKEN_PID}"
  if [[ $mode == token ]]; then
    sim_registry_request --wait 10 GET "https://$SIM_REGISTRY_HOST:$SIM_REGISTRY_TOKEN_PORT/" >/dev/null ||
      _sim_registry_fail "the token server did not come up (log: $(tail -n 5 "$reg/token-server.log"))"
  fi
  ans=$(sim_registry_request --wait 10 GET "https://$SIM_REGISTRY_HOST/v2/") ||
    _sim_registry_fail "the registry did not come up (log: $(tail -n 5 "$reg/registry.log"))"
  if [[ $mode == token ]]; then
    [[ $ans == "HTTP 401"* && $ans == *"Bearer realm="* ]] || _sim_registry_fail "GET /v2/ answered: ${ans%%$'\n'*}"
  else
    [[ $ans == "HTTP 200"* ]] || _sim_registry_fail "GET /v2/ answered: ${ans%%$'\n'*}"
  fi
  SIM_REGISTRY_START_MS=$(($(_sim_registry_ms) - t0))
}

# _sim_registry_ours PID: true while PID runs and is one of ours (its command line names $SIM_DIR/registry/), so
# that a pid file left by a process that died on its own never signals another that got its number.
_sim_registry_ours() {
  local cmdline
  _sim_registry_alive "$1" || return 1
  cmdline=$(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null)
  [[ $cmdline == *"$SIM_DIR/registry/"* ]]
}

# _sim_registry_signal SIGNAL GRACE_S: signals the processes of the pid files, waits (SIGKILL after GRACE_S).
_sim_registry_signal() {
  local sig=$1 grace=$2 reg f pid i
  [[ -n ${SIM_DIR:-} && -d $SIM_DIR/registry ]] || return 0
  reg=$SIM_DIR/registry
  for f in "$reg/registry.pid" "$reg/token.pid"; do
    [[ -f $f ]] || continue
    pid=$(cat "$f" 2>/dev/null)
    if _sim_registry_ours "$pid"; then
      kill "-$sig" "$pid" 2>/dev/null
      for ((i = 0; i < grace * 20; i++)); do
        _sim_registry_alive "$pid" || break
        sleep 0.05
      done
      _sim_registry_alive "$pid" && kill -KILL "$pid" 2>/dev/null
      while _sim_registry_alive "$pid"; do sleep 0.02; done  # bash reaps it (disowned), or its own parent
    fi
    rm -f "$f"
  done
  SIM_REGISTRY_PID=
  SIM_REGISTRY_TOKEN_PID=
  SIM_REGISTRY_PIDS=
  return 0
}
sim_registry_stop() { _sim_registry_signal TERM 10; }
sim_registry_kill() { _sim_registry_signal KILL 0; }
sim_registry_cleanup() { _sim_registry_signal KILL 0 2>/dev/null || true; }

sim_registry_trust() {
  local root=${1:?sim_registry_trust HOSTROOT} reg bundle hosts
  _sim_registry_need
  reg=$SIM_DIR/registry
  [[ -s $reg/ca.crt ]] || _sim_registry_fail "no CA yet: call sim_registry_start first"
  bundle=$root/etc/ssl/certs/ca-certificates.crt
  mkdir -p "${bundle%/*}" "$root/usr/local/share/ca-certificates" "$root/etc/docker/certs.d/$SIM_REGISTRY_HOST"
  if [[ ! -e $bundle ]]; then
    if [[ -r /etc/ssl/certs/ca-certificates.crt ]]; then cp /etc/ssl/certs/ca-certificates.crt "$bundle"; else : >"$bundle"; fi
  fi
  grep -qxF "# gpuprep sim registry CA ($SIM_REGISTRY_HOST)" "$bundle" ||
    { echo "# gpuprep sim registry CA ($SIM_REGISTRY_HOST)"; cat "$reg/ca.crt"; } >>"$bundle"
  install -m 0644 "$reg/ca.crt" "$root/usr/local/share/ca-certificates/gpuprep-sim-nvcr.crt"
  install -m 0644 "$reg/ca.crt" "$root/etc/docker/certs.d/$SIM_REGISTRY_HOST/ca.crt"
  hosts=$root/etc/hosts
  if [[ ! -e $hosts ]]; then
    if [[ -r /etc/hosts ]]; then cp /etc/hosts "$hosts"; else : >"$hosts"; fi
  fi
  grep -qE "^${SIM_REGISTRY_ADDR//./\\.}[[:space:]]+$SIM_REGISTRY_HOST([[:space:]]|\$)" "$hosts" ||
    echo "$SIM_REGISTRY_ADDR $SIM_REGISTRY_HOST" >>"$hosts"
}

sim_registry_request() {
  local reg
  _sim_registry_need
  reg=$SIM_DIR/registry
  _sim_registry_ns
  nsenter --net="$SIM_NETNS" python3 "$SIM_REGISTRY_LIB_DIR/registry_push.py" --connect "$SIM_REGISTRY_ADDR" --cacert "$reg/ca.crt" request "$@"
}

sim_registry_push() {
  local reg t0 rc=0
  _sim_registry_need
  reg=$SIM_DIR/registry
  _sim_registry_ns
  t0=$(_sim_registry_ms)
  nsenter --net="$SIM_NETNS" python3 "$SIM_REGISTRY_LIB_DIR/registry_push.py" --connect "$SIM_REGISTRY_ADDR" --cacert "$reg/ca.crt" push "$@" || rc=$?
  SIM_REGISTRY_PUSH_MS=$(($(_sim_registry_ms) - t0))
  echo "$SIM_REGISTRY_PUSH_MS" >"$reg/push.ms"
  return $rc
}

sim_registry_throttle() {
  local rate=${1:?sim_registry_throttle RATE|off}
  _sim_registry_ns
  if [[ $rate == off ]]; then
    nsenter --net="$SIM_NETNS" tc qdisc del dev lo root 2>/dev/null
    return 0
  fi
  nsenter --net="$SIM_NETNS" tc qdisc replace dev lo root tbf rate "$rate" burst 1mb latency 1s
}

sim_registry_minimal_rootfs() {
  local root=${1:?sim_registry_minimal_rootfs DIR} lib
  mkdir -p "$root/bin" "$root/etc" "$root/tmp"
  cp -L /bin/sh "$root/bin/sh" || _sim_registry_fail "copying /bin/sh"
  for lib in $(ldd /bin/sh | grep -o '/[^ ]*'); do
    cp -L --parents "$lib" "$root" || _sim_registry_fail "copying $lib"
  done
}
