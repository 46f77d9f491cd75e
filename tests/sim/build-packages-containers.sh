#!/usr/bin/env bash
# build-packages-containers.sh OUT_DEB BUILD_DIR: the stand-in engine package (called by lib.sh next to
# build-packages.sh; the toolkit's stand-ins are built there). The simulated distribution archive serves
# Debian's real docker.io (lib.sh: _sim_debian_debs); this package stays for what the real 20.10 engine cannot
# show (Docker 25 and newer: CDI, the version-gated findings), the scenarios repackaging it (sim_docker_ce).
# Its engine is the stand-in Engine API (tests/support/fake_dockerd.py) listening on
# /var/run/docker.sock, reading /etc/docker/daemon.json at start and on SIGHUP (systemctl reload), with its
# registry described by /sim/dockerd-state.json (written by the scenario: NVIDIA's registry cannot exist
# here), pulled images kept under /var/lib/docker, requests recorded in /sim/log/dockerd-requests.jsonl.
# Never commit the results.
set -euo pipefail
OUT=$1
BUILD=$2
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$(dirname "$OUT")" "$BUILD"
ARCH=$(dpkg --print-architecture)
DOCKER=24.0.7-0ubuntu2~22.04.1   # jammy-updates' docker.io at the time of writing (Ubuntu package page)

P=$BUILD/stage-containers/docker.io
rm -rf "$P"
mkdir -p "$P/DEBIAN" "$P/usr/bin" "$P/usr/lib/gpuprep-sim/daemons" "$P/lib/systemd/system" "$P/usr/share/doc/docker.io"
cat >"$P/DEBIAN/control" <<CTL
Package: docker.io
Version: $DOCKER
Architecture: $ARCH
Maintainer: gpuprep simulated server <gpuprep-sim@localhost>
Section: sim
Priority: optional
Description: Linux container runtime (simulated)
 Stand-in package of the gpuprep simulated GPU server (tests/sim); not Docker software.
CTL
echo "gpuprep simulated package docker.io $DOCKER" >"$P/usr/share/doc/docker.io/README.sim"
install -m 0644 "$HERE/../support/fake_dockerd.py" "$P/usr/lib/gpuprep-sim/fake_dockerd.py"
cat >"$P/usr/bin/dockerd" <<'SH'
#!/bin/sh
# The simulated engine: the stand-in Engine API in the foreground (as dockerd runs under systemd).
exec python3 /usr/lib/gpuprep-sim/fake_dockerd.py /var/run/docker.sock /sim/log/dockerd-requests.jsonl \
  /sim/dockerd-state.json
SH
# Started in every session of the simulated server while docker.service is active (tests/sim/enter.sh),
# as systemd keeps it running; the pid is what `systemctl reload` signals (tests/sim/guest/systemctl).
cat >"$P/usr/lib/gpuprep-sim/daemons/docker.service" <<'SH'
#!/bin/sh
pid=$(cat /run/gpuprep-sim/pid/docker.service 2>/dev/null || echo 0)
if [ "${1:-}" = stop ]; then
  grep -qs fake_dockerd "/proc/$pid/cmdline" && kill "$pid"
  exit 0
fi
[ -S /var/run/docker.sock ] && grep -qs fake_dockerd "/proc/$pid/cmdline" && exit 0
rm -f /var/run/docker.sock
mkdir -p /run/gpuprep-sim/pid
setsid /usr/bin/dockerd </dev/null >>/sim/log/dockerd.log 2>&1 &
echo $! >/run/gpuprep-sim/pid/docker.service
i=0
while [ ! -S /var/run/docker.sock ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done  # 30 s: a loaded machine
SH
chmod 0755 "$P/usr/bin/dockerd" "$P/usr/lib/gpuprep-sim/daemons/docker.service"
cat >"$P/lib/systemd/system/docker.service" <<'UNIT'
[Unit]
Description=Docker Application Container Engine (simulated)

[Service]
ExecStart=/usr/bin/dockerd
ExecReload=/bin/kill -s HUP $MAINPID

[Install]
WantedBy=multi-user.target
UNIT
# Like Ubuntu's docker.io: enabled and started on install.
cat >"$P/DEBIAN/postinst" <<'SH'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
  systemctl enable docker.service >/dev/null 2>&1 || true
  mkdir -p /run/gpuprep-sim/active
  touch /run/gpuprep-sim/active/docker.service
  /usr/lib/gpuprep-sim/daemons/docker.service
fi
SH
chmod 0755 "$P/DEBIAN/postinst"
dpkg-deb --root-owner-group -Zgzip -z1 --build "$P" "$OUT" >/dev/null
