#!/usr/bin/env bash
# Installs what gpuprep needs to build, and with --tests what its tests need, from the distribution's own
# packages only (Debian 12, Ubuntu 22.04/24.04). Run as root. Idempotent: apt-get skips what is installed.
#   install-deps.sh           what building the gpuprep binary needs
#   install-deps.sh --tests   and everything the test suite, the package checks and CI use
set -euo pipefail
tests=0
for arg in "$@"; do
  case $arg in
    --tests) tests=1 ;;
    -h | --help)
      sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "install-deps.sh: $arg: unknown argument (use --tests, or nothing for the build alone)" >&2
      exit 2
      ;;
  esac
done
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps.sh: run as root (it calls apt-get)" >&2
  exit 2
fi
export DEBIAN_FRONTEND=noninteractive
build_pkgs=(
  cmake ninja-build g++ pkg-config ccache
  libcurl4-openssl-dev libyaml-cpp-dev libcli11-dev libspdlog-dev libfmt-dev
  catch2 nlohmann-json3-dev libssl-dev libarchive-dev
)
if [ "$tests" = 0 ]; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${build_pkgs[@]}" >/dev/null
  echo "install-deps.sh: done (the build; add --tests for the test suite's tools)"
  exit 0
fi
pkgs=(
  "${build_pkgs[@]}"
  # tests: the simulated GPU server (local signed apt repo, stub packages, overlay namespace) and the
  # stand-in Docker Engine API
  dpkg-dev apt-utils gnupg python3 gcc util-linux ca-certificates curl strace
  # the simulated server's kernel modules: zstd-compressed as Ubuntu's kernels and DKMS write them (tests/sim)
  zstd
  # the .deb and its checks (packaging/ci-package.sh): man page from --help, objdump, lintian; the cloud-init,
  # Ansible (over SSH to a loopback sshd in the simulated server) and headless-browser tests
  help2man binutils lintian python3-yaml ansible openssh-server openssh-client chromium
  # watch --prometheus is read back by a real node_exporter (tests/integration/watch_prometheus.sh); watch's live
  # table is read in a real terminal (tests/integration/watch_table.sh)
  prometheus-node-exporter tmux
  # an Xid journal written from export format by systemd's own writer, read back with journalctl --file
  systemd-journal-remote
  # bench/fleet.sh times fleet-report with GNU time
  time
  # tests and benchmark of NVIDIA's redistributable archives (tests/redist, bench/redist.sh)
  xz-utils openssl libarchive-tools
  # the curl client's loopback rule in a private network namespace (tests/integration/http_netns.sh)
  iproute2
  # accept's storage check on a loop-mounted ext4 (tests/integration/accept_storage.sh): mkfs.ext4, not in a
  # minimal Debian root
  e2fsprogs
  # fuzzing and static analysis (libapt-pkg is the fuzzers' version-ordering oracle)
  clang clang-tidy libapt-pkg-dev
  # the differential tests (tests/differential): Docker's reference and size parsers, built with Go from the
  # distribution's packaged sources, and dash beside bash for the shell round trips
  golang-go golang-github-docker-distribution-dev golang-github-docker-go-units-dev dash
  # the fleet report's Markdown read by GitHub's own renderer (tests/integration/differential_markdown.sh)
  cmark-gfm
  # the saved-tensor counts that `size`'s vision layer tables are held against (CPU builds of PyTorch;
  # tests/integration/differential_saved_tensors.sh)
  python3-torch python3-torchvision
  # the golden set of plan and doctor outputs runs at a fixed date (tests/integration/golden.sh); the C++
  # sources' format is checked in CI (tools/format.sh)
  faketime clang-format
)
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
# libFuzzer and the sanitizer runtimes: Debian 12 ships them apart from clang (libclang-rt-dev); Ubuntu 22.04
# has them in libclang-common-*-dev, which clang already pulls in.
if apt-cache show libclang-rt-dev >/dev/null 2>&1; then
  apt-get install -y -qq --no-install-recommends libclang-rt-dev >/dev/null
fi
# The launch round-trip tests drive the real docker CLI against a stand-in engine. Use the one on PATH
# (docker 28 on the build machines); otherwise unpack the distribution's CLI from docker.io's package into
# /usr/local/bin without installing the package: the simulated server is an overlay of this machine, and its
# scenarios install docker.io themselves (from this machine's archive, which must still offer it).
if ! command -v docker >/dev/null 2>&1; then
  cli_tmp=$(mktemp -d)
  if (cd "$cli_tmp" && apt-get download -qq -o APT::Sandbox::User=root docker.io >/dev/null &&
    dpkg-deb -x docker.io_*.deb root); then
    install -m 0755 "$cli_tmp/root/usr/bin/docker" /usr/local/bin/docker
  else
    echo "install-deps.sh: docker.io's CLI could not be fetched; the launch round trips will fail" >&2
  fi
  rm -rf "$cli_tmp"
fi
# Packages that ship .desktop or metainfo files (chromium) leave AppStream's cache older than its sources; the
# simulated server's apt-get update would then rewrite it, and sim_badrepo (nothing may change) would see that.
if command -v appstreamcli >/dev/null 2>&1; then
  appstreamcli refresh-cache --force >/dev/null 2>&1 || true
fi
echo "install-deps.sh: done"
