#!/usr/bin/env bash
# The simulated GPU server for gpuprep's install tests (README.md).
# Source this file, then: sim_require; sim_init GPUPREP SRC; sim_new_host; sim_run ARGV...; sim_reboot.
# Everything lives in one temp dir ($SIM_DIR) and is removed, and the HTTP server stopped, on exit (trap).
# Mounts exist only inside the private namespaces of sim_run, so they vanish with them.

SIM_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# A command that does not exist (a helper renamed or removed, a tool that is not installed) fails the
# scenario at once, wherever it is called: bash would print "command not found", return 127 and carry on,
# and a scenario would pass without testing anything. Two nets: bash calls command_not_found_handle for a
# name it cannot find (in a function, a condition or a $(...) alike; the handler runs in a subshell, so it
# signals this script, which exits 1), and the ERR trap (inherited by functions and subshells: set -E) fails
# on status 127 from anything else, such as a command missing inside the simulated server (sim_run).
SIM_MAIN_PID=$$
set -E
_sim_not_found() {  # _sim_not_found WHAT: the verdict for a command that was not found (in a subshell too)
  echo "FAIL: $1: command not found (status 127); the scenario cannot be trusted" >&2
  [[ $BASHPID == "$SIM_MAIN_PID" ]] || kill -USR1 "$SIM_MAIN_PID" 2>/dev/null
  exit 1
}
command_not_found_handle() {
  echo "FAIL: $1: command not found (status 127); the scenario cannot be trusted" >&2
  kill -USR1 "$SIM_MAIN_PID" 2>/dev/null
  return 127
}
trap 'echo "FAIL: a command was not found (above): exit 1" >&2; exit 1' USR1
trap 'if [[ $? == 127 ]]; then _sim_not_found "${BASH_COMMAND%% *} (line $LINENO)"; fi' ERR
SIM_DIR=
SIM_HOST=
SIM_HTTP_PID=
SIM_PORT=
SIM_BG_PID=
SIM_NETNS=
SIM_NETNS_NAME=
SIM_CLEANUP_HOOKS=()  # commands sim_cleanup runs first (registry.sh: the registry and its token server)

sim_skip() {
  echo "SKIP: $*"
  exit 77  # ctest SKIP_RETURN_CODE: reported as skipped, never as passed
}

sim_fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# Skips (exit 77) only where the simulation cannot run: not root, no unshare, no mount namespaces or no
# overlayfs. Missing build tools are a failure, not a skip.
sim_require() {
  [[ $(id -u) -eq 0 ]] || sim_skip "the simulated GPU server needs root (mount namespaces, overlayfs, chroot)"
  command -v unshare >/dev/null || sim_skip "unshare (util-linux) not found"
  unshare --mount --propagation private true 2>/dev/null || sim_skip "unshare --mount is not permitted here"
  local t
  for t in dpkg-deb apt-ftparchive gpg gcc objcopy zstd python3 chroot openssl; do
    command -v "$t" >/dev/null || sim_fail "$t not found (install: dpkg-dev apt-utils gnupg gcc binutils zstd python3 openssl)"
  done
  # The upper layer must be on a filesystem overlayfs accepts as upper (not itself an overlay, as /tmp is
  # inside some containers). /dev/shm first where it has 4 GiB free: on tmpfs dpkg's fsync calls cost
  # nothing (a stack scenario takes a fifth less time than on ext4), and a scenario's upper layer holds a
  # few hundred MiB at most; else /tmp. SIM_BASE (one directory or a list) overrides the choice.
  local base candidates=${SIM_BASE:-}
  if [[ -z $candidates ]]; then
    local shm_free_k
    shm_free_k=$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }')
    if [[ $shm_free_k =~ ^[0-9]+$ ]] && ((shm_free_k >= 4 * 1024 * 1024)); then
      candidates="/dev/shm /tmp"
    else
      candidates="/tmp /dev/shm"
    fi
  fi
  for base in $candidates; do
    t=$(mktemp -d "$base/gpuprep-sim-probe.XXXXXX" 2>/dev/null) || continue
    mkdir -p "$t/u" "$t/w" "$t/m"
    if unshare --mount --propagation private \
      mount -t overlay gpuprep-sim-probe -o "lowerdir=/,upperdir=$t/u,workdir=$t/w" "$t/m" 2>/dev/null; then
      rm -rf "$t"
      SIM_BASE=$base
      return 0
    fi
    rm -rf "$t"
  done
  sim_skip "overlayfs with lowerdir=/ is unavailable here (tried an upper layer in $candidates)"
}

sim_cleanup() {
  local rc=$?
  if [[ -n $SIM_BG_PID ]]; then
    kill -KILL "$SIM_BG_PID" 2>/dev/null
    wait "$SIM_BG_PID" 2>/dev/null
  fi
  local hook
  for hook in "${SIM_CLEANUP_HOOKS[@]}"; do $hook; done
  [[ -n $SIM_HTTP_PID ]] && kill "$SIM_HTTP_PID" 2>/dev/null && wait "$SIM_HTTP_PID" 2>/dev/null
  if [[ -n $SIM_HOST ]]; then _sim_wait_gone "$SIM_HOST"; fi
  [[ -n $SIM_DIR ]] && _sim_cgroups_remove "gpuprep-sim-${SIM_DIR##*.}"
  [[ -n $SIM_NETNS_NAME ]] && ip netns del "$SIM_NETNS_NAME" 2>/dev/null
  # Nothing of the simulation may stay behind on this machine.
  if [[ -n $SIM_DIR ]]; then
    local left
    left=$(find /sys/fs/cgroup -maxdepth 2 -name "gpuprep-sim-${SIM_DIR##*.}" 2>/dev/null)
    [[ -n $SIM_NETNS_NAME && -e /run/netns/$SIM_NETNS_NAME ]] && left+=" /run/netns/$SIM_NETNS_NAME"
    if [[ -n ${left// /} ]]; then
      echo "FAIL: the simulation left behind:$(tr '\n' ' ' <<<" $left")" >&2
      exit 1
    fi
  fi
  if [[ -n $SIM_DIR && -d $SIM_DIR ]]; then
    if [[ -n ${SIM_KEEP:-} ]]; then echo "sim: kept $SIM_DIR" >&2; else rm -rf "$SIM_DIR"; fi
  fi
  return $rc
}

_sim_ms() { date +%s%3N; }

# _sim_cgroups_remove NAME: removes the cgroup NAME (the engine's --cgroup-parent) and everything under it
# from every hierarchy of this machine, as dockerd leaves them behind.
_sim_cgroups_remove() {
  local d
  for d in /sys/fs/cgroup/"$1" /sys/fs/cgroup/*/"$1"; do
    [[ -d $d ]] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
  done
  return 0
}

# _sim_reap_stale: removes the temp dirs of earlier runs that were killed before their trap ran (their owner
# process is gone and nothing runs inside them).
_sim_reap_stale() {
  local d pid
  for d in /tmp/gpuprep-sim.?????? /dev/shm/gpuprep-sim.??????; do
    [[ -f $d/owner.pid ]] || continue
    pid=
    read -r pid <"$d/owner.pid" 2>/dev/null
    [[ $pid =~ ^[0-9]+$ ]] || continue  # being written (or not ours): never a reason to delete
    kill -0 "$pid" 2>/dev/null && continue
    [[ -n $(find /proc/[0-9]*/root -maxdepth 0 -lname "$d/host/merged" 2>/dev/null) ]] && continue
    rm -rf "$d"
  done
  local ns
  for ns in /run/netns/gpuprep-sim-??????; do
    [[ -e $ns ]] || continue
    ns=${ns##*/}
    [[ -d /tmp/gpuprep-sim.${ns#gpuprep-sim-} || -d /dev/shm/gpuprep-sim.${ns#gpuprep-sim-} ]] && continue
    ip netns del "$ns" 2>/dev/null
    _sim_cgroups_remove "$ns"
  done
}

# sim_init GPUPREP SRC [BUILD_DIR]: builds the stand-in libraries and packages (cached under
# BUILD_DIR/tests-sim-cache/, keyed by the sources' hash), indexes and signs the three repositories (README.md)
# and the cuda repository's bad variants, starts the loopback HTTPS server and writes the test manifests.
# Once per script. Sets SIM_PORT, SIM_SCHEME, SIM_URL (the server's root URL), and the throwaway keys'
# fingerprints: SIM_KEY_FPR (cuda), SIM_CTK_KEY_FPR (nvidia-container-toolkit), SIM_UBUNTU_KEY_FPR (the
# distribution archive), SIM_BAD_FPR (a stranger's), with SIM_KEY_SHA256 / SIM_CTK_KEY_SHA256 (keyrings).
sim_init() {
  local gpuprep=$1 build_dir=${3:-} t0
  t0=$(_sim_ms)
  [[ -x $gpuprep ]] || sim_fail "gpuprep binary not found: $gpuprep"
  _sim_reap_stale
  SIM_DIR=$(mktemp -d "${SIM_BASE:-/tmp}/gpuprep-sim.XXXXXX")
  echo $$ >"$SIM_DIR/owner.pid.new" && mv "$SIM_DIR/owner.pid.new" "$SIM_DIR/owner.pid"  # whole or absent
  trap sim_cleanup EXIT
  trap 'exit 130' INT TERM
  mkdir -p "$SIM_DIR/common/bin" "$SIM_DIR/common/guest" "$SIM_DIR/www" "$SIM_DIR/gnupg"
  install -m 0755 "$gpuprep" "$SIM_DIR/common/bin/gpuprep"
  # The HTTP server starts first: its interpreter's start-up overlaps the packages, keys and indexes below
  # (it serves each file as it is asked for, and nothing asks before sim_init returns). Served over HTTPS
  # with a throwaway certificate for 127.0.0.1 that only the simulated server trusts (SIM_SCHEME=http: plain
  # loopback HTTP instead).
  SIM_SCHEME=${SIM_SCHEME:-https}
  local tls=()
  if [[ $SIM_SCHEME == https ]]; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj "/CN=gpuprep sim 127.0.0.1" \
      -addext "subjectAltName=IP:127.0.0.1" -keyout "$SIM_DIR/tls.key" -out "$SIM_DIR/common/guest/tls.crt" 2>/dev/null ||
      sim_fail "openssl: creating the loopback certificate"
    tls=("$SIM_DIR/common/guest/tls.crt" "$SIM_DIR/tls.key")
  fi
  # The simulated server's network: a namespace of its own with only loopback, so what listens there (this
  # server, the registry on 127.0.0.1:443, the engine) meets no other simulation and changes no interface of
  # this machine. Every session enters it (_sim_enter).
  SIM_NETNS_NAME=gpuprep-sim-${SIM_DIR##*.}
  ip netns add "$SIM_NETNS_NAME" 2>/dev/null || sim_fail "ip netns add $SIM_NETNS_NAME (iproute2) failed"
  SIM_NETNS=/run/netns/$SIM_NETNS_NAME
  ip -n "$SIM_NETNS_NAME" link set lo up || sim_fail "bringing up loopback in $SIM_NETNS_NAME"
  _sim_machine_state >"$SIM_DIR/machine.state"  # sim_host_changes compares against it
  nsenter --net="$SIM_NETNS" python3 "$SIM_LIB_DIR/http_server.py" "$SIM_DIR/www" "$SIM_DIR/http.port" "$SIM_DIR/http.log" "${tls[@]}" &
  SIM_HTTP_PID=$!
  _sim_packages "$build_dir"

  # Throwaway signing keys: one per repository, like the real ones, and a stranger's for the bad-key scenarios.
  export GNUPGHOME=$SIM_DIR/gnupg
  chmod 700 "$GNUPGHOME"
  local who
  for who in "sim cuda repository <sim-cuda@localhost>" "sim container toolkit repository <sim-ctk@localhost>" \
    "sim ubuntu archive <sim-ubuntu@localhost>" "someone else <stranger@localhost>"; do
    gpg --batch --quiet --passphrase '' --quick-gen-key "$who" ed25519 sign never 2>/dev/null || sim_fail "gpg key generation"
  done
  SIM_KEY_FPR=$(_sim_fpr sim-cuda@localhost)
  SIM_CTK_KEY_FPR=$(_sim_fpr sim-ctk@localhost)
  SIM_UBUNTU_KEY_FPR=$(_sim_fpr sim-ubuntu@localhost)
  SIM_BAD_FPR=$(_sim_fpr stranger@localhost)
  gpg --batch --export "$SIM_KEY_FPR" >"$SIM_DIR/www/cuda.gpg"
  gpg --batch --export "$SIM_CTK_KEY_FPR" >"$SIM_DIR/www/nvidia-container-toolkit.gpg"
  gpg --batch --export "$SIM_UBUNTU_KEY_FPR" >"$SIM_DIR/common/guest/ubuntu-archive-keyring.gpg"
  gpg --batch --export "$SIM_BAD_FPR" >"$SIM_DIR/www/stranger-keyring.gpg"
  SIM_KEY_SHA256=$(sha256sum "$SIM_DIR/www/cuda.gpg" | cut -d' ' -f1)
  # shellcheck disable=SC2034  # for the scenarios
  SIM_CTK_KEY_SHA256=$(sha256sum "$SIM_DIR/www/nvidia-container-toolkit.gpg" | cut -d' ' -f1)

  # Release fields as the real repositories write them (NVIDIA's repo tooling: Origin NVIDIA, Label NVIDIA
  # CUDA; the container toolkit's are test values).
  _sim_index "$SIM_DIR/www/cuda" "$SIM_KEY_FPR" "NVIDIA" "NVIDIA CUDA"
  _sim_index "$SIM_DIR/www/nvidia-container-toolkit" "$SIM_CTK_KEY_FPR" "NVIDIA" "NVIDIA Container Toolkit"
  _sim_index_dist "$SIM_DIR/www/ubuntu" "$SIM_UBUNTU_KEY_FPR"
  # badsig/: the cuda packages signed by the stranger's key; badsum/: one .deb altered after indexing.
  cp -a "$SIM_DIR/www/cuda" "$SIM_DIR/www/badsig"
  rm -f "$SIM_DIR/www/badsig/"{Release,InRelease,Release.gpg,Packages,Packages.gz}
  _sim_index "$SIM_DIR/www/badsig" "$SIM_BAD_FPR" "NVIDIA" "NVIDIA CUDA"
  cp -a "$SIM_DIR/www/cuda" "$SIM_DIR/www/badsum"
  printf 'tampered' >>"$SIM_DIR/www/badsum/libnccl2_2.18.5-1+cuda12.2_amd64.deb"

  local i
  for i in $(seq 600); do [[ -s $SIM_DIR/http.port ]] && break; sleep 0.05; done  # 30 s: a loaded machine
  [[ -s $SIM_DIR/http.port ]] || sim_fail "HTTP server did not start"
  SIM_PORT=$(cat "$SIM_DIR/http.port")
  SIM_URL=$SIM_SCHEME://127.0.0.1:$SIM_PORT

  # The simulated host's own sources: the distribution archive, as an Ubuntu server has it.
  printf 'deb %s/ubuntu/ jammy main\ndeb %s/ubuntu/ jammy-updates main\n' "$SIM_URL" "$SIM_URL" \
    >"$SIM_DIR/common/guest/sources.list"

  _sim_manifest stack cuda cuda.gpg "$SIM_KEY_FPR" "$SIM_KEY_SHA256"
  _sim_manifest stack-badkey cuda stranger-keyring.gpg "$SIM_KEY_FPR" ""      # key served != pinned fingerprint
  _sim_manifest stack-badsha cuda cuda.gpg "" "$(printf '0%.0s' $(seq 64))"  # sha256 pin wrong
  _sim_manifest stack-badsig badsig cuda.gpg "$SIM_KEY_FPR" "$SIM_KEY_SHA256"  # repo signed by another key
  _sim_manifest stack-badsum badsum cuda.gpg "$SIM_KEY_FPR" "$SIM_KEY_SHA256"  # a .deb fails its checksum
  echo "sim: packages, three signed repositories and $SIM_URL/ ready in $(($(_sim_ms) - t0)) ms" >&2
}

_sim_fpr() { gpg --batch --with-colons --fingerprint "$1" 2>/dev/null | awk -F: '/^fpr:/ {print $10; exit}'; }

# _sim_packages [BUILD_DIR]: the stub .debs into $SIM_DIR/www/{cuda,nvidia-container-toolkit,ubuntu} and
# sim-holdlock into common/guest.
_sim_packages() {
  local key cache tmp src t0
  t0=$(_sim_ms)
  _sim_boot_debs "${1:-$SIM_DIR}"
  export SIM_BOOT_TREE
  tar -C "$SIM_BOOT_TREE/grub" -cf "$SIM_DIR/common/guest/grub-common.tar" .
  if [[ -n $1 && -d $1 ]]; then
    key=$(cat "$SIM_LIB_DIR/build-packages.sh" "$SIM_LIB_DIR"/src/* "$SIM_LIB_DIR/build-packages-containers.sh" \
      "$SIM_LIB_DIR/../support/fake_dockerd.py" <(uname -r) <(echo "$SIM_BOOT_TREE") | sha256sum | cut -c1-16)
    cache=$1/tests-sim-cache/$key
    if [[ ! -d $cache ]]; then
      tmp=$(mktemp -d "$1/tests-sim-cache.tmp.XXXXXX")
      { bash "$SIM_LIB_DIR/build-packages.sh" "$tmp/repo" "$tmp/build" &&
        bash "$SIM_LIB_DIR/build-packages-containers.sh" "$tmp/repo/standin-engine.deb" "$tmp/build"; } ||
        { rm -rf "$tmp"; sim_fail "building stub packages"; }
      mkdir -p "$1/tests-sim-cache"
      find "$1/tests-sim-cache" -mindepth 1 -maxdepth 1 -name '[0-9a-f]*' ! -name "$key" -exec rm -rf {} + 2>/dev/null
      install -m 0755 "$tmp/build/sim-holdlock" "$tmp/sim-holdlock"
      rm -rf "$tmp/build"
      mv -T "$tmp" "$cache" 2>/dev/null || rm -rf "$tmp"  # another run may have won the race
      echo "sim: built the stub packages in $(($(_sim_ms) - t0)) ms" >&2
    fi
    src=$cache
  else
    { bash "$SIM_LIB_DIR/build-packages.sh" "$SIM_DIR/pkgs/repo" "$SIM_DIR/pkgs/build" &&
      bash "$SIM_LIB_DIR/build-packages-containers.sh" "$SIM_DIR/pkgs/repo/standin-engine.deb" "$SIM_DIR/pkgs/build"; } ||
      sim_fail "building stub packages"
    install -m 0755 "$SIM_DIR/pkgs/build/sim-holdlock" "$SIM_DIR/pkgs/sim-holdlock"
    rm -rf "$SIM_DIR/pkgs/build"
    src=$SIM_DIR/pkgs
  fi
  cp -a "$src/repo/." "$SIM_DIR/www/"
  mkdir -p "$SIM_DIR/standin"
  mv "$SIM_DIR/www/standin-engine.deb" "$SIM_DIR/standin/docker.io-standin.deb"
  install -m 0755 "$src/sim-holdlock" "$SIM_DIR/common/guest/sim-holdlock"
  _sim_debian_debs "${1:-$SIM_DIR}"
  local f
  for f in "$SIM_DEBS"/*.deb; do
    [[ ${f##*/} == docker-registry_* ]] || cp "$f" "$SIM_DIR/www/ubuntu/pool/jammy/"
  done
}

# _sim_debian_debs DIR: the real container engine from Debian's archive, fetched with `apt-get download` into
# DIR/tests-sim-debian/ (never installed on this machine): docker.io, containerd, runc, tini, what of their
# Depends closure this machine lacks (iptables and its libraries...), and docker-registry (the registry that
# plays NVIDIA's). The simulated distribution archive serves all but the registry. Sets SIM_DEBS. The set is
# what `apt-get install -s` would install here, so a fresh machine fetches the closure and the cache is reused
# while the machine's archive offers the same versions.
SIM_DEBS=
_sim_debian_debs() {
  local want names key dir tmp
  # apt's answer changes only with its lists, dpkg's status or apt's configuration: it is kept per state of
  # those (the resolution costs 5-8 s, and the container images' apt keeps no package cache).
  local state answer
  state=$(stat -c '%n %s %Y' /var/lib/apt/lists/* /var/lib/dpkg/status /etc/apt/preferences* /etc/apt/apt.conf.d/* \
    2>/dev/null | sha256sum | cut -c1-16)
  answer=$1/tests-sim-debian/apt-answer.$state
  if [[ -s $answer ]]; then
    want=$(<"$answer")
  else
    want=$(apt-get install -s --no-install-recommends docker.io containerd runc tini docker-registry 2>&1 |
      awk '/^Inst / { v = $3; if (v ~ /^\[/) v = $4; gsub(/[()]/, "", v); print $2 "=" v }' | LC_ALL=C sort)
  fi
  for names in docker.io containerd runc tini docker-registry; do
    grep -q "^$names=" <<<"$want" ||
      sim_fail "$names: apt-get does not offer it from this machine's archive (Debian's docker.io and docker-registry are needed: apt-get update?)"
  done
  key=$(sha256sum <<<"$want" | cut -c1-16)
  dir=$1/tests-sim-debian/$key
  if [[ ! -s $answer ]]; then
    mkdir -p "$1/tests-sim-debian"
    printf '%s\n' "$want" >"$answer.$$" && mv "$answer.$$" "$answer"
  fi
  if [[ ! -f $dir/.complete ]]; then
    tmp=$(mktemp -d "$1/tests-sim-debian.tmp.XXXXXX")
    # shellcheck disable=SC2046  # one word per package
    (cd "$tmp" && apt-get download -qq -o APT::Sandbox::User=root $want) ||
      { rm -rf "$tmp"; sim_fail "apt-get download of Debian's container engine failed"; }
    touch "$tmp/.complete"
    mkdir -p "$1/tests-sim-debian"
    find "$1/tests-sim-debian" -mindepth 1 -maxdepth 1 -regextype posix-extended -regex '.*/[0-9a-f]{16}' \
      ! -name "$key" -exec rm -rf {} + 2>/dev/null
    mv -T "$tmp" "$dir" 2>/dev/null || rm -rf "$tmp"
  fi
  SIM_DEBS=$dir
}

# _sim_boot_debs DIR: Debian's own boot pieces, fetched with `apt-get download` into DIR/tests-sim-boot/
# (never installed on this machine) and extracted: dkms (its kernel hooks /etc/kernel/postinst.d/dkms,
# header_postinst.d/dkms and /usr/lib/dkms/dkms_autoinstaller go into the simulated dkms package; its dkms
# program does not: src/dkms.sh stands in for it), grub-common and grub2-common (grub-mkconfig, /etc/grub.d,
# grub-editenv, grub-reboot: put into the simulated server by sim_grub_install, with a stand-in grub-probe).
# Sets SIM_BOOT_TREE (dkms/ and grub/ under it), keyed by the versions, so the cache follows the archive.
SIM_BOOT_TREE=
_sim_boot_debs() {
  local want key dir tmp d f
  want=$(apt-cache policy dkms grub-common grub2-common 2>/dev/null |
    awk '/^[^ ]/ {sub(/:$/, "", $1); p = $1} /^  Candidate:/ {print p "=" $2}' | LC_ALL=C sort)
  [[ $(grep -c '=[0-9]' <<<"$want") == 3 ]] ||
    sim_fail "dkms, grub-common, grub2-common: apt-get does not offer them from this machine's archive (apt-get update?)"
  key=$(sha256sum <<<"$want" | cut -c1-16)
  dir=$1/tests-sim-boot/$key
  if [[ ! -f $dir/.complete ]]; then
    tmp=$(mktemp -d "$1/tests-sim-boot.tmp.XXXXXX")
    # shellcheck disable=SC2086  # one word per package
    (cd "$tmp" && apt-get download -qq -o APT::Sandbox::User=root $want) ||
      { rm -rf "$tmp"; sim_fail "apt-get download of Debian's dkms and grub-common failed"; }
    mkdir -p "$tmp/dkms" "$tmp/grub"
    dpkg-deb -x "$tmp"/dkms_*.deb "$tmp/dkms.all" || sim_fail "extracting dkms"
    for d in etc/kernel/postinst.d etc/kernel/header_postinst.d usr/lib/dkms; do
      mkdir -p "$tmp/dkms/$d" && cp -a "$tmp/dkms.all/$d/." "$tmp/dkms/$d/"
    done
    for f in "$tmp"/grub-common_*.deb "$tmp"/grub2-common_*.deb; do
      dpkg-deb -x "$f" "$tmp/grub.all" || sim_fail "extracting ${f##*/}"
    done
    # What grub-mkconfig runs to write a menu of Linux kernels: its library, 00_header and 10_linux (the other
    # /etc/grub.d scripts look for other systems and firmware), grub-mkrelpath and grub-script-check; then
    # grub-editenv and grub-reboot for grubenv; the default /etc/default/grub.
    for f in usr/sbin/grub-mkconfig usr/share/grub/grub-mkconfig_lib etc/grub.d/00_header etc/grub.d/10_linux \
      usr/bin/grub-mkrelpath usr/bin/grub-script-check usr/bin/grub-editenv usr/sbin/grub-reboot \
      usr/share/grub/default/grub; do
      [[ -e $tmp/grub.all/$f ]] || sim_fail "grub-common: no $f in the package"
      mkdir -p "$tmp/grub/${f%/*}" && cp -a "$tmp/grub.all/$f" "$tmp/grub/$f"
    done
    rm -rf "$tmp/dkms.all" "$tmp/grub.all" "$tmp"/*.deb
    touch "$tmp/.complete"
    mkdir -p "$1/tests-sim-boot"
    find "$1/tests-sim-boot" -mindepth 1 -maxdepth 1 ! -name "$key" -exec rm -rf {} + 2>/dev/null
    mv -T "$tmp" "$dir" 2>/dev/null || rm -rf "$tmp"
  fi
  SIM_BOOT_TREE=$dir
}

# _sim_index DIR FPR ORIGIN LABEL [FILTER]: a flat ("/") apt repository in DIR, signed with FPR (InRelease and
# Release.gpg), like NVIDIA's. FILTER (a command) edits the Packages text before it is signed.
_sim_index() {
  (
    cd "$1" || exit 1
    apt-ftparchive packages . 2>/dev/null | ${5:-cat} >Packages
    gzip -9kn Packages
    apt-ftparchive -o APT::FTPArchive::Release::Origin="$3" -o APT::FTPArchive::Release::Label="$4" \
      release . >Release
    gpg --batch --yes --quiet --local-user "$2" --clearsign -o InRelease Release
    gpg --batch --yes --quiet --local-user "$2" --armor --detach-sign -o Release.gpg Release
  ) || sim_fail "indexing $1"
}

# _sim_index_dist DIR FPR: the distribution archive in DIR (pool/SUITE/*.deb) as Ubuntu's: dists/SUITE/
# with component main, Origin/Label Ubuntu, suites jammy and jammy-updates, signed with FPR.
_sim_index_dist() {
  (
    cd "$1" || exit 1
    local suite
    for suite in jammy jammy-updates; do
      mkdir -p "dists/$suite/main/binary-amd64"
      apt-ftparchive packages "pool/$suite" >"dists/$suite/main/binary-amd64/Packages" 2>/dev/null
      gzip -9kn "dists/$suite/main/binary-amd64/Packages"
      apt-ftparchive -o APT::FTPArchive::Release::Origin=Ubuntu -o APT::FTPArchive::Release::Label=Ubuntu \
        -o APT::FTPArchive::Release::Suite="$suite" -o APT::FTPArchive::Release::Codename=jammy \
        -o APT::FTPArchive::Release::Version=22.04 -o APT::FTPArchive::Release::Architectures=amd64 \
        -o APT::FTPArchive::Release::Components=main release "dists/$suite" >"$suite.Release"
      mv "$suite.Release" "dists/$suite/Release"
      gpg --batch --yes --quiet --local-user "$2" --clearsign -o "dists/$suite/InRelease" "dists/$suite/Release"
      gpg --batch --yes --quiet --local-user "$2" --armor --detach-sign -o "dists/$suite/Release.gpg" "dists/$suite/Release"
    done
  ) || sim_fail "indexing $1"
}

# _sim_manifest NAME REPO_DIR KEYFILE FPR SHA256: $SIM_DIR/common/NAME.yaml from tests/sim/stack.yaml.in.
_sim_manifest() {
  local fpr_line='' sha_line=''
  [[ -n $4 ]] && fpr_line="key_fingerprint: \"$4\""
  [[ -n $5 ]] && sha_line="keyring_sha256: \"$5\""
  sed -e "s|@NAME@|sim-$1|g" -e "s|@URL@|$SIM_URL/$2/|g" \
    -e "s|@KEYRING_URL@|$SIM_URL/$3|g" -e "s|@FINGERPRINT_LINE@|$fpr_line|" \
    -e "s|@SHA256_LINE@|$sha_line|" "$SIM_LIB_DIR/stack.yaml.in" >"$SIM_DIR/common/$1.yaml"
}

# sim_site_file STACK [NAME [EXTRA_YAML]]: a site file for the embedded stack STACK that overrides only its
# repositories' addresses and keys, pointing them at the simulated server (the form a site uses for a
# mirror). EXTRA_YAML (optional) is appended as is. Written to common/NAME.yaml (default site-STACK) for every
# later host, and into the current host's /sim; prints the path inside the host (/sim/NAME.yaml).
sim_site_file() {
  local stack=$1 name=${2:-site-$1} f
  f=$SIM_DIR/common/$name.yaml
  {
    echo "apiVersion: gpuprep/v1"
    echo "kind: Stack"
    echo "metadata: {name: $name}"
    echo "extends: $stack"
    echo "repository_overrides:"
    echo "  cuda: {url: $SIM_URL/cuda/, keyring_url: $SIM_URL/cuda.gpg, key_fingerprint: $SIM_KEY_FPR}"
    echo "  nvidia-container-toolkit: {url: $SIM_URL/nvidia-container-toolkit/, keyring_url: $SIM_URL/nvidia-container-toolkit.gpg, key_fingerprint: $SIM_CTK_KEY_FPR}"
    if [[ -n ${3:-} ]]; then printf '%s\n' "$3"; fi
  } >"$f"
  if [[ -n $SIM_HOST && -d $SIM_HOST/sim ]]; then cp "$f" "$SIM_HOST/sim/"; fi
  echo "/sim/$name.yaml"
}

# _sim_gpu_id: the PCI device id of the simulated GPUs: SIM_GPU_ID if set, else by model SIM_GPU
# (H100 = H100 SXM 0x2330, the default, B200 with SIM_HGX=1; V100 = V100 SXM2 0x1db1; B200 = 0x2901).
_sim_gpu_id() {
  if [[ -n ${SIM_GPU_ID:-} ]]; then echo "$SIM_GPU_ID"; return 0; fi
  local model=H100
  [[ ${SIM_HGX:-0} == 1 ]] && model=B200
  case ${SIM_GPU:-$model} in
    H100 | h100) echo 0x2330 ;;
    V100 | v100) echo 0x1db1 ;;
    B200 | b200) echo 0x2901 ;;
    *) sim_fail "SIM_GPU=$SIM_GPU: unknown model (H100, V100, B200; or set SIM_GPU_ID)" ;;
  esac
}

# sim_new_host: a fresh bare server (Ubuntu 22.04, GPUs on nouveau, nothing NVIDIA installed).
# Its apt sources hold the distribution archive (jammy, jammy-updates), with lists already downloaded.
# Fixture knobs (environment): SIM_GPUS (default 8), SIM_GPU=H100|V100|B200 (default H100 SXM) or SIM_GPU_ID
# (a PCI device id), SIM_NVSWITCH=1 (4 NVSwitches, SIM_NVSWITCH_ID, default 0x22a3), SIM_SECURE_BOOT=1,
# SIM_NOUVEAU=0 (no nouveau module on this kernel), SIM_HGX=1 (an HGX B200 baseboard, with SIM_GPU=B200: four
# ConnectX-7 NVLink switch bridges whose VPD says SMDL=SW_MNG, eight ConnectX-7 NICs; README.md).
sim_new_host() {
  local t0 h
  t0=$(_sim_ms)
  [[ -n $SIM_HOST ]] && _sim_wait_gone "$SIM_HOST"
  SIM_HOST=$SIM_DIR/host
  h=$SIM_HOST
  rm -rf "$h"
  mkdir -p "$h"/{upper,work,merged,run,procdriver} "$h/sim"/{bin,log,control,guest}
  cp "$SIM_DIR/common/"*.yaml "$h/sim/"
  cp "$SIM_DIR/common/guest/"* "$h/sim/guest/"
  install -m 0755 "$SIM_DIR/common/bin/gpuprep" "$h/sim/bin/gpuprep"
  install -m 0755 "$SIM_LIB_DIR/guest/"* "$h/sim/guest/"
  echo "gpuprep-sim-${SIM_DIR##*.}" >"$h/sim/control/docker-cgroup-parent"
  : >"$h/sim/log/commands.log"
  : >"$h/sim/log/apt-get.log"
  [[ ${SIM_NOUVEAU:-1} == 1 ]] && touch "$h/sim/control/has-nouveau"
  _sim_sysfs "$h/sys"
  # Provisioning gives the same upper layer for the same guest files and distribution archive: the first host
  # of a script provisions, the next ones start from a copy of its result (cp -a keeps the whiteouts and
  # overlayfs's opaque-directory attributes), which saves an apt-get update and an ldconfig per host.
  local key
  key=$(cat "$SIM_DIR/common/guest/"* "$SIM_LIB_DIR/guest/"* "$SIM_DIR/www/ubuntu/dists/"*/InRelease | sha256sum | cut -c1-16)
  if [[ -d $SIM_DIR/provisioned.$key ]]; then
    rm -rf "$h/upper"
    cp -a "$SIM_DIR/provisioned.$key" "$h/upper"
    echo "provisioned: a copy of this script's first provisioned host ($key)" >"$h/provision.log"
  else
    _sim_provision "$h"
    cp -a "$h/upper" "$SIM_DIR/provisioned.$key.new" && mv "$SIM_DIR/provisioned.$key.new" "$SIM_DIR/provisioned.$key"
  fi
  sim_run /sim/guest/boot.sh >>"$h/provision.log" 2>&1 || { cat "$h/provision.log" >&2; sim_fail "first boot"; }
  echo "sim: new bare host in $(($(_sim_ms) - t0)) ms" >&2
}

# _sim_provision HOST: turns HOST's empty upper layer into a bare server (guest/provision.sh).
_sim_provision() {
  local h=$1 d
  # Hide this build machine's CUDA (pip-wheel toolkit under /usr/local/cuda-*): overlayfs whiteouts
  # (0/0 character devices in the upper layer) are instant, unlike deleting thousands of files inside.
  mkdir -p "$h/upper/usr/local"
  for d in /usr/local/cuda /usr/local/cuda-*; do
    [[ -e $d || -L $d ]] && mknod "$h/upper/usr/local/${d##*/}" c 0 0
  done
  sim_run /sim/guest/provision.sh >"$h/provision.log" 2>&1 || { cat "$h/provision.log" >&2; sim_fail "provisioning the simulated server"; }
}

# _sim_vpd_images: DIR with bridge.vpd and nic.vpd, the ConnectX-7 VPD images of the HGX B200 fixture hosts
# (tests/fixtures/make_fabric_hosts.py builds both), made once per script.
_sim_vpd_images() {
  local d=${SIM_DIR:-/tmp}/vpd
  [[ -s $d/bridge.vpd && -s $d/nic.vpd ]] ||
    python3 "$SIM_LIB_DIR/../fixtures/make_fabric_hosts.py" --vpd "$d" || sim_fail "building the VPD images"
  echo "$d"
}

# _sim_sysfs DIR: the fake /sys (same layout as tests/fixtures/hosts): NVIDIA GPUs (+ NVSwitches), one NIC,
# EFI variables, the CPU list; with SIM_HGX=1 the HGX B200 baseboard's ConnectX-7 functions (bridges + NICs).
_sim_sysfs() {
  local s=$1 i bdf n=${SIM_GPUS:-8} gpu_id vpd
  gpu_id=$(_sim_gpu_id) || exit 1
  local gpu_bdfs=(0000:18:00.0 0000:2a:00.0 0000:3a:00.0 0000:5d:00.0 0000:9a:00.0 0000:ab:00.0 0000:ba:00.0 0000:db:00.0)
  mkdir -p "$s/bus/pci/devices" "$s/bus/pci/drivers/mlx5_core" "$s/module" "$s/firmware/efi/efivars" "$s/devices/system/cpu"
  _dev() {  # _dev BDF VENDOR DEVICE CLASS DRIVER [VPD_IMAGE]: VPD_IMAGE becomes its vpd file, 0600 as in sysfs
    mkdir -p "$s/bus/pci/devices/$1"
    echo "$2" >"$s/bus/pci/devices/$1/vendor"
    echo "$3" >"$s/bus/pci/devices/$1/device"
    echo "$4" >"$s/bus/pci/devices/$1/class"
    echo 0 >"$s/bus/pci/devices/$1/numa_node"
    [[ -n $5 ]] && ln -s "../../../../bus/pci/drivers/$5" "$s/bus/pci/devices/$1/driver"
    [[ -n ${6:-} ]] && install -m 0600 "$6" "$s/bus/pci/devices/$1/vpd"
    return 0
  }
  for ((i = 0; i < n && i < ${#gpu_bdfs[@]}; i++)); do
    _dev "${gpu_bdfs[$i]}" 0x10de "$gpu_id" 0x030200 ""
  done
  [[ ${SIM_HGX:-0} == 1 && ${SIM_NVSWITCH:-0} == 1 ]] &&
    sim_fail "SIM_HGX=1 and SIM_NVSWITCH=1: an HGX B200 board's NVSwitches are not PCI devices of the host"
  if [[ ${SIM_NVSWITCH:-0} == 1 ]]; then
    for bdf in 0000:05:00.0 0000:06:00.0 0000:07:00.0 0000:08:00.0; do _dev "$bdf" 0x10de "${SIM_NVSWITCH_ID:-0x22a3}" 0x068000 ""; done
  fi
  _dev 0000:0c:00.0 0x15b3 0x1021 0x020000 mlx5_core
  if [[ ${SIM_HGX:-0} == 1 ]]; then
    # An HGX B200 baseboard (the fixture host hgx-b200's layout): its NVSwitches are reached through four
    # ConnectX-7 functions whose VPD carries SMDL=SW_MNG; beside them eight ConnectX-7 NICs (InfiniBand class).
    vpd=$(_sim_vpd_images) || exit 1
    for bdf in 0000:05:00.0 0000:06:00.0 0000:07:00.0 0000:08:00.0; do
      _dev "$bdf" 0x15b3 0x1021 0x020700 mlx5_core "$vpd/bridge.vpd"
    done
    for bdf in 0000:19:00.0 0000:2b:00.0 0000:3b:00.0 0000:5e:00.0 0000:9b:00.0 0000:ac:00.0 0000:bb:00.0 0000:dc:00.0; do
      _dev "$bdf" 0x15b3 0x1021 0x020700 mlx5_core "$vpd/nic.vpd"
    done
  fi
  # efivarfs: 4 attribute bytes (NV|BS|RT = 0x06), then the value
  if [[ ${SIM_SECURE_BOOT:-0} == 1 ]]; then printf '\x06\x00\x00\x00\x01'; else printf '\x06\x00\x00\x00\x00'; fi \
    >"$s/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
  cat /sys/devices/system/cpu/online >"$s/devices/system/cpu/online" 2>/dev/null || echo 0 >"$s/devices/system/cpu/online"
}

# _sim_enter ARGV: one command inside the simulated server (fresh mount+pid namespace, same upper layer).
_sim_enter() {
  nsenter --net="$SIM_NETNS" unshare --mount --pid --fork --kill-child --propagation private -- \
    bash "$SIM_LIB_DIR/enter.sh" "$SIM_HOST" "$@"
}

# _sim_wait_gone HOST: waits until no process is chrooted into HOST/merged any more (after a kill).
_sim_wait_gone() {
  local i
  for i in $(seq 100); do
    [[ -z $(find /proc/[0-9]*/root -maxdepth 0 -lname "$1/merged" 2>/dev/null) ]] && return 0
    sleep 0.05
  done
  echo "sim: processes still inside $1/merged; killing them" >&2
  local pids
  pids=$(find /proc/[0-9]*/root -maxdepth 0 -lname "$1/merged" 2>/dev/null | cut -d/ -f3)
  [[ -n $pids ]] && kill -KILL $pids 2>/dev/null
  sleep 0.2
}

# sim_run ARGV...: runs ARGV inside the simulated server as root, stdin /dev/null; returns its exit code.
sim_run() {
  _sim_enter "$@" </dev/null
}

# sim_inspect ARGV...: like sim_run, for a command that only reads the host's state (dpkg-query, apt-cache,
# cat): the session starts no daemon of an active unit (each session would start the stand-in dockerd anew).
sim_inspect() {
  SIM_DAEMONS=0 _sim_enter "$@" </dev/null
}

# sim_run_bg ARGV...: like sim_run, in the background; sim_kill cuts the power (SIGKILL to every process).
sim_run_bg() {
  # unshare itself must be the background job (not a subshell), so that killing it kills the namespace
  nsenter --net="$SIM_NETNS" unshare --mount --pid --fork --kill-child --propagation private -- \
    bash "$SIM_LIB_DIR/enter.sh" "$SIM_HOST" "$@" </dev/null &
  SIM_BG_PID=$!
}
sim_wait_bg() {  # returns the background command's exit code
  local rc=0
  wait "$SIM_BG_PID" || rc=$?
  SIM_BG_PID=
  _sim_wait_gone "$SIM_HOST"
  return $rc
}
sim_kill() {
  kill -KILL "$SIM_BG_PID" 2>/dev/null
  wait "$SIM_BG_PID" 2>/dev/null
  SIM_BG_PID=
  _sim_wait_gone "$SIM_HOST"
}

# sim_run_locked SECONDS ARGV...: ARGV runs while another process ("unattended-upgr") holds the dpkg
# lock for SECONDS (guest/with-lock.sh).
sim_run_locked() {
  sim_run /sim/guest/with-lock.sh "$@"
}

# sim_wait_file PATH [SECONDS]: waits for PATH (a host path, e.g. $SIM_HOST/sim/control/x) to exist.
sim_wait_file() {
  local i
  for i in $(seq $((${2:-30} * 20))); do [[ -e $1 ]] && return 0; sleep 0.05; done
  return 1
}

# sim_reboot [--no-resume]: the simulated reboot (README.md); then runs the ExecStart of every enabled
# gpuprep*.service and returns its exit code (100 when no such unit is enabled).
SIM_BOOT_LOG=
sim_reboot() {
  local line unit rc=100 cmd
  rm -rf "${SIM_HOST:?}/run" && mkdir -p "$SIM_HOST/run"
  SIM_BOOT_LOG=$(sim_run /sim/guest/boot.sh) || sim_fail "simulated boot failed"
  echo "$SIM_BOOT_LOG" | grep '^boot:' >&2
  [[ ${1:-} == --no-resume ]] && return 0
  while read -r line; do
    [[ $line == resume\ * ]] || continue
    read -r _ unit cmd <<<"$line"
    echo "sim: boot runs $unit: $cmd" >&2
    read -ra argv <<<"$cmd"
    rc=0
    sim_run "${argv[@]}" || rc=$?
  done <<<"$SIM_BOOT_LOG"
  [[ $rc == 100 ]] && echo "sim: no gpuprep unit is enabled; nothing resumed at boot" >&2
  return $rc
}

# sim_snapshot NAME / sim_diff NAME: the upper layer's files (type, size, mode, link target, content) and what changed
# since. Not counted as changes: the sim's own /sim; gpuprep's log and journal (/var/log/gpuprep.log,
# /var/lib/gpuprep/); directories that only got copied up (a directory this machine's / lacks counts); the lock files
# apt and dpkg create empty; apt's partial-download and auxfiles directories.
_sim_state() {
  local prune=(\( -path ./sim -o -path ./var/lib/gpuprep -o -path './var/log/gpuprep.log*'
    -o -path ./var/lib/apt/lists/partial -o -path ./var/lib/apt/lists/auxfiles -o -path ./var/cache/apt/archives/partial
    -o -path ./var/lib/dpkg/lock -o -path ./var/lib/dpkg/lock-frontend -o -path ./var/lib/apt/lists/lock
    -o -path ./var/cache/apt/archives/lock \) -prune)
  (
    cd "$SIM_HOST/upper" || exit 1
    find . "${prune[@]}" -o ! -type d -printf '%p %y %s %m %l\n' -o -type d -printf '%p d\n' |
      while read -r p t rest; do
        [[ $t == d && -d /${p#./} ]] || echo "$p $t $rest"
      done
    find . "${prune[@]}" -o -type f -exec md5sum {} + | awk '{print $2 " content " $1}'
  ) | LC_ALL=C sort
}
sim_snapshot() { _sim_state >"$SIM_DIR/snapshot.$1"; }
sim_diff() { _sim_state | diff "$SIM_DIR/snapshot.$1" - | grep '^[<>]'; return 0; }

# sim_fabric: every GPU's NVLink fabric state as the stand-in NVML answers nvmlDeviceGetGpuFabricInfoV (the v3
# structure) in a session of the current host: "COUNT GPUs: RETURN STATE STATUS[, ...] | bad version: RETURN"
# (each distinct answer once; the last, for a structure version NVML does not know). STATE: 2 in progress,
# 3 completed; RETURN 3: not supported (no NVLink switch bridges), 25: argument version mismatch.
sim_fabric() {
  cat >"$SIM_HOST/sim/fabric.py" <<'PY'
import ctypes
class Info(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint), ("uuid", ctypes.c_ubyte * 16), ("status", ctypes.c_int),
                ("clique", ctypes.c_uint), ("state", ctypes.c_ubyte), ("health", ctypes.c_uint),
                ("summary", ctypes.c_ubyte)]
n = ctypes.CDLL("libnvidia-ml.so.1")
n.nvmlInit_v2()
cnt = ctypes.c_uint(0)
n.nvmlDeviceGetCount_v2(ctypes.byref(cnt))
seen, d = [], ctypes.c_void_p()
for i in range(cnt.value):
    n.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(d))
    info = Info()
    info.version = ctypes.sizeof(Info) | 3 << 24
    r = n.nvmlDeviceGetGpuFabricInfoV(d, ctypes.byref(info))
    a = "%d %d %d" % (r, info.state, info.status)
    if a not in seen:
        seen.append(a)
bad = Info()
bad.version = ctypes.sizeof(Info) | 9 << 24
print(cnt.value, "GPUs:", ", ".join(seen), "| bad version:", n.nvmlDeviceGetGpuFabricInfoV(d, ctypes.byref(bad)))
PY
  sim_run python3 /sim/fabric.py
}

# sim_host_changes: what changed on this machine itself since sim_init (nothing should): its mounts, network
# interfaces, cgroups (two levels) and installed packages, leaving out what belongs to a simulation (its
# network namespace's mount, its cgroup parent, this and any other run's). Empty when nothing changed.
_sim_machine_state() {
  {
    findmnt -rn -o TARGET,FSTYPE | grep -Ev '^/run/netns/gpuprep-(sim|regtest)-' | sed 's/^/mount /'
    ip -o link show | awk -F': ' '{ print "link " $2 }'
    find /sys/fs/cgroup -mindepth 1 -maxdepth 2 -type d 2>/dev/null | grep -Ev '/gpuprep-(sim|regtest)-' |
      sed 's/^/cgroup /'
    dpkg-query -W -f 'package ${Package} ${Version} ${Status}\n'
  } | LC_ALL=C sort
}
sim_host_changes() { _sim_machine_state | diff "$SIM_DIR/machine.state" - | grep '^[<>]'; return 0; }

sim_log() { cat "$SIM_HOST/sim/log/$1.log"; }
sim_finish() {  # sim_finish NAME: the script's verdict and exit code
  sim_section ""
  if ((SIM_FAILURES == 0)); then echo "$1: all checks passed"; exit 0; fi
  echo "$1: $SIM_FAILURES check(s) failed:" >&2
  printf '  FAILED: %s\n' "${SIM_FAILED[@]}" >&2
  exit 1
}
sim_count() { wc -l <"$SIM_HOST/sim/log/$1.log"; }  # sim_count apt-get|commands
sim_http_requests() { wc -l <"$SIM_DIR/http.log"; }
sim_http_bytes() { awk '{s += $4} END {print s + 0}' "$SIM_DIR/http.log"; }

# sim_gp NAME ARGS...: runs /sim/bin/gpuprep ARGS inside; stdout/stderr kept in $SIM_DIR/NAME.{out,err},
# exit code in SIM_RC, wall time in SIM_MS. Always returns 0 (assert on SIM_RC).
sim_gp() {
  local name=$1 t
  shift
  t=$(_sim_ms)
  SIM_RC=0
  sim_run /sim/bin/gpuprep "$@" >"$SIM_DIR/$name.out" 2>"$SIM_DIR/$name.err" || SIM_RC=$?
  SIM_MS=$(($(_sim_ms) - t))
  echo "sim: gpuprep $* -> exit $SIM_RC in $SIM_MS ms" >&2
  return 0
}
sim_show() {  # sim_show NAME: prints a sim_gp run's output (for failures)
  echo "--- $1 stdout" >&2
  tail -n 40 "$SIM_DIR/$1.out" >&2
  echo "--- $1 stderr" >&2
  tail -n 40 "$SIM_DIR/$1.err" >&2
}
sim_err() { cat "$SIM_DIR/$1.err"; }
sim_out() { cat "$SIM_DIR/$1.out"; }

# sim_section TITLE: starts a scenario section; prints how long the previous one took.
SIM_SECTION=
SIM_SECTION_T=
sim_section() {
  local now
  now=$(_sim_ms)
  [[ -n $SIM_SECTION ]] && echo "   ($SIM_SECTION: $((now - SIM_SECTION_T)) ms)"
  SIM_SECTION=$1
  SIM_SECTION_T=$now
  [[ -n $1 ]] && echo "== $1"
  return 0
}

# Small assertion helpers for the scenario scripts.
SIM_FAILURES=0
SIM_FAILED=()  # each failed check's line, repeated by sim_finish (a long log's failure is then at its end)
_sim_failed() {  # _sim_failed LINE: prints and records one failed check
  echo "  FAILED: $1" >&2
  SIM_FAILED+=("$1")
  SIM_FAILURES=$((SIM_FAILURES + 1))
}
check() {  # check DESCRIPTION COMMAND...: runs COMMAND, records pass/fail
  local d=$1
  shift
  if "$@"; then echo "  ok: $d"; else _sim_failed "$d"; fi
}
# pending WHAT_IS_MISSING CHECK_FN ARGS...: a check of behaviour gpuprep does not have yet (named in the
# first argument). Run and reported, but a failure is printed as
# PENDING and not counted; a pass says so, so the marker can be removed.
pending() {
  local why=$1 before=$SIM_FAILURES
  shift
  "$@" >"$SIM_DIR/pending.out" 2>&1
  sed 's/^  FAILED: /  PENDING (not counted): /' "$SIM_DIR/pending.out"
  if ((SIM_FAILURES > before)); then
    SIM_FAILURES=$before
    SIM_FAILED=("${SIM_FAILED[@]:0:before}")
    echo "  PENDING: needs $why"
  fi
}
check_rc() {  # check_rc DESCRIPTION EXPECTED NAME: SIM_RC of the sim_gp run NAME; shows its output if wrong
  if [[ $SIM_RC == "$2" ]]; then echo "  ok: $1 (exit $2)"; else
    _sim_failed "$1: expected exit $2, got $SIM_RC"
    sim_show "$3"
  fi
}
check_eq() {  # check_eq DESCRIPTION EXPECTED ACTUAL
  if [[ $2 == "$3" ]]; then echo "  ok: $1"; else
    _sim_failed "$1: expected [$2], got [$3]"
  fi
}
