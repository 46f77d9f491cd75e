#!/usr/bin/env bash
# ctest-labels: sim
# shellcheck disable=SC2034  # SIM_RC is set here and read by check_rc (tests/sim/lib.sh)
# Docker's own engine (docker-ce) from Docker's apt repository, its key pinned like NVIDIA's, on the simulated
# server. A test stack (not a shipped one) names the repository as Docker's install guide gives it
# (https://docs.docker.com/engine/install/ubuntu/: https://download.docker.com/linux/ubuntu, suite jammy,
# component stable, key fingerprint 9DC8 5822 9FC7 DD38 854A E2D8 8D81 803C 0EBF CD88) and pins docker-ce by
# its upstream version; a site file points the repository at a stand-in signed by a locally generated key
# (Docker's key cannot sign here), as sites do for a mirror. `apply --only docker`: the list written with
# signed-by, the key checked against the pin, docker-ce resolved to the repository's revision (a newer one sits
# beside it) and installed with its CLI, the engine enabled and answering with its version; a site file
# pinning another key's fingerprint is refused with nothing installed.
# Usage: bash sim_docker_ce.sh <gpuprep> <source-dir> <build-dir>
set -uo pipefail
GPUPREP=$1
SRC=$2
source "$SRC/tests/sim/lib.sh"
source "$SRC/tests/sim/containers.sh"
sim_require
sim_init "$GPUPREP" "$SRC" "${3:-}"
t_start=$(_sim_ms)
DOCKER_FPR=9DC858229FC7DD38854AE2D88D81803C0EBFCD88
V=5:28.3.2-1~ubuntu.22.04~jammy    # docker-ce's version scheme in Docker's repository (epoch 5)
VNEW=5:28.3.3-1~ubuntu.22.04~jammy

# Docker's repository as download.docker.com/linux/ubuntu serves it: dists/jammy/stable, signed by its own key
# (here a throwaway one). docker-ce and docker-ce-cli at two releases; the engine is the sim's stand-in
# (tests/support/fake_dockerd.py, from the sim's stand-in engine package: Docker 28 is not in Debian).
gpg --batch --quiet --passphrase '' --quick-gen-key "sim docker repository <sim-docker@localhost>" ed25519 sign never 2>/dev/null ||
  sim_fail "gpg key generation"
SIM_DOCKER_FPR=$(_sim_fpr sim-docker@localhost)
W=$SIM_DIR/www/docker
mkdir -p "$W/pool/stable" "$SIM_DIR/docker-build"
gpg --batch --export "$SIM_DOCKER_FPR" >"$SIM_DIR/www/docker.gpg"
stub() {  # stub NAME VERSION [FROM_DEB]: a docker-ce package (from the sim's docker.io files) or an empty one
  local d=$SIM_DIR/docker-build/$1-$2
  rm -rf "$d"
  if [[ -n ${3:-} ]]; then dpkg-deb -R "$3" "$d"; else mkdir -p "$d/DEBIAN"; fi
  python3 - "$d/DEBIAN/control" "$1" "$2" <<'PY'
import sys
path, name, version = sys.argv[1:]
deps = {"docker-ce": "Depends: docker-ce-cli\nConflicts: docker.io\n"}.get(name, "")
open(path, "w").write("Package: %s\nVersion: %s\nArchitecture: amd64\nMaintainer: gpuprep simulated server <gpuprep-sim@localhost>\n"
                      "Section: sim\nPriority: optional\n%sDescription: %s (simulated)\n Stand-in package of the gpuprep "
                      "simulated GPU server (tests/sim); not Docker software.\n" % (name, version, deps, name))
PY
  dpkg-deb --root-owner-group -Zgzip -z1 --build "$d" "$W/pool/stable/${1}_${2//:/%3a}_amd64.deb" >/dev/null ||
    sim_fail "building $1 $2"
}
DOCKERIO=$SIM_DIR/standin/docker.io-standin.deb
for v in "$V" "$VNEW"; do
  stub docker-ce "$v" "$DOCKERIO"
  stub docker-ce-cli "$v"
done
(
  cd "$W" || exit 1
  mkdir -p dists/jammy/stable/binary-amd64
  apt-ftparchive packages pool/stable >dists/jammy/stable/binary-amd64/Packages 2>/dev/null
  apt-ftparchive -o APT::FTPArchive::Release::Origin=Docker -o APT::FTPArchive::Release::Label="Docker CE" \
    -o APT::FTPArchive::Release::Suite=jammy -o APT::FTPArchive::Release::Codename=jammy \
    -o APT::FTPArchive::Release::Architectures=amd64 -o APT::FTPArchive::Release::Components=stable \
    release dists/jammy >Release.tmp && mv Release.tmp dists/jammy/Release
  gpg --batch --yes --quiet --local-user "$SIM_DOCKER_FPR" --clearsign -o dists/jammy/InRelease dists/jammy/Release
  gpg --batch --yes --quiet --local-user "$SIM_DOCKER_FPR" --armor --detach-sign -o dists/jammy/Release.gpg dists/jammy/Release
) || sim_fail "indexing Docker's repository"

sim_new_host
# The test stack: the simulated server's, plus Docker's repository as Docker publishes it and a docker:
# section with engine docker-ce pinned by upstream version.
python3 - "$SIM_HOST/sim/stack.yaml" "$SIM_HOST/sim/docker-ce.yaml" "$DOCKER_FPR" <<'PY'
import sys
src, dst, fpr = sys.argv[1:]
s = open(src).read()
repo = ("  - name: docker\n    url: https://download.docker.com/linux/ubuntu/\n    suite: jammy\n"
        "    components: [stable]\n    keyring_url: https://download.docker.com/linux/ubuntu/gpg\n"
        "    keyring_path: /etc/apt/keyrings/docker.gpg\n    key_fingerprint: %s\n"
        "    list_path: /etc/apt/sources.list.d/docker.list\n" % fpr)
assert "\ndriver:" in s
s = s.replace("\ndriver:", repo + "\ndriver:", 1)
s = s.replace("\nworkload:", "\ndocker:\n  engine: docker-ce\n  packages:\n    - {name: docker-ce, upstream: 28.3.2}\n"
              "    - {name: docker-ce-cli, upstream: 28.3.2}\n  gpu_access: runtime\n\nworkload:")
s = s.replace("name: sim-stack", "name: sim-docker-ce")
open(dst, "w").write(s)
PY
site() {  # site NAME FINGERPRINT: a site file pointing the docker repository at the stand-in
  printf 'apiVersion: gpuprep/v1\nkind: Stack\nextends: docker-ce.yaml\nmetadata: {name: %s}\nrepository_overrides:\n  docker: {url: %s/docker/, keyring_url: %s/docker.gpg, key_fingerprint: %s}\n' \
    "$1" "$SIM_URL" "$SIM_URL" "$2" >"$SIM_HOST/sim/$1.yaml"
}
site site-docker "$SIM_DOCKER_FPR"
site site-docker-badkey "$SIM_BAD_FPR"
SIM_ENGINE_VERSION=28.3.2 sim_registry_standin "nvcr.io/nvidia/pytorch:23.10-py3 CUDA_VERSION=12.2.2.009"
sim_snapshot bare

sim_section "a site file pinning another key: refused, nothing installed"
sim_gp badkey --manifest /sim/site-docker-badkey.yaml apply --yes --only docker
check_rc "apply refuses" 1 badkey
sim_err badkey >"$SIM_DIR/badkey.msg"
check "it names the repository and the pinned fingerprint" grep -q "docker.*$SIM_BAD_FPR" "$SIM_DIR/badkey.msg"
check_eq "docker-ce not installed" "" "$(sim_run dpkg-query -W -f '${db:Status-Status}' docker-ce 2>/dev/null | grep -x installed)"
check_eq "no install transaction" 0 "$(sim_log apt-get | grep -c ' install ')"

sim_section "apply --only docker: Docker's repository, its key pinned, docker-ce at the stack's release"
sim_gp plan --manifest /sim/site-docker.yaml plan --only docker
check_rc "plan" 0 plan
sim_gp apply --manifest /sim/site-docker.yaml apply --yes --only docker
check_rc "apply" 0 apply
check_eq "the list names Docker's suite and component, signed by the pinned keyring" \
  "deb [signed-by=/etc/apt/keyrings/docker.gpg] $SIM_URL/docker/ jammy stable" \
  "$(sim_run grep -h '^deb' /etc/apt/sources.list.d/docker.list | sed 's/arch=[a-z0-9]* //')"
check_eq "the keyring holds the pinned key" "$SIM_DOCKER_FPR" \
  "$(sim_run gpg --batch --no-default-keyring --keyring /etc/apt/keyrings/docker.gpg --with-colons --fingerprint 2>/dev/null | awk -F: '/^fpr:/ {print $10; exit}')"
check_eq "docker-ce and its CLI at 28.3.2 (not the newer 28.3.3)" "$V $V" \
  "$(sim_run dpkg-query -W -f '${Version} ' docker-ce docker-ce-cli | sed 's/ $//')"
check "the engine is enabled and started" grep -qx 'systemctl enable --now docker.service' "$SIM_HOST/sim/log/commands.log"
check "it answers on its socket with its version" sim_run sh -c 'curl -sf --unix-socket /var/run/docker.sock http://localhost/version | grep -q "\"Version\": *\"28.3.2\""'
check_eq "the distribution's docker.io is not installed" "" \
  "$(sim_run dpkg-query -W -f '${db:Status-Status}' docker.io 2>/dev/null | grep -x installed)"

echo "sim_docker_ce: scenarios took $(($(_sim_ms) - t_start)) ms"
sim_finish sim_docker_ce
