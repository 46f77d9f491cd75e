#!/usr/bin/env bash
# enter.sh HOST_DIR CMD...: runs as pid 1 of a fresh private mount+pid namespace (lib.sh: _sim_enter).
# Mounts the simulated server (overlay of / with HOST_DIR/upper, fake /sys, /proc/driver, /run, /sim),
# then runs CMD chrooted into it and exits with its status. The mounts vanish with the namespace.
set -euo pipefail
host=$1
shift
m=$host/merged
mount -t overlay gpuprep-sim -o "lowerdir=/,upperdir=$host/upper,workdir=$host/work" "$m"
mount -t proc proc "$m/proc"
# A kernel release other than this machine's (a provider's own kernel): HOST_DIR/osrelease, if present,
# is what the simulated server's /proc/sys/kernel/osrelease reads.
[[ -f $host/osrelease ]] && mount --bind "$host/osrelease" "$m/proc/sys/kernel/osrelease"
mount --bind "$host/procdriver" "$m/proc/driver"
mount --rbind /dev "$m/dev"
# Its own /dev/shm, of this machine's size (what doctor's host layer reads): this machine's holds other
# scenarios' upper layers, which nothing inside a simulated server may reach.
shm_k=$(df -Pk /dev/shm | awk 'NR == 2 { print $2 }')
mount -t tmpfs -o "size=${shm_k}k,mode=1777" gpuprep-sim-shm "$m/dev/shm"
mount --bind "$host/sys" "$m/sys"
mount --bind "$host/run" "$m/run"
mkdir -p "$m/sim"
mount --bind "$host/sim" "$m/sim"
# The daemons of active units (a stub package's /usr/lib/gpuprep-sim/daemons/UNIT) run in every session,
# as systemd keeps them running on a real server. SIM_DAEMONS=0 (lib.sh: sim_inspect): a session that only reads
# the host's state starts none.
[ "${SIM_DAEMONS:-1}" = 0 ] || chroot "$m" /bin/sh -c 'for d in /usr/lib/gpuprep-sim/daemons/*; do
  [ -x "$d" ] && [ -e "/run/gpuprep-sim/active/${d##*/}" ] && "$d"; done; true' </dev/null >/dev/null 2>&1 || true
# A sanitizer build's options reach the binary under test inside (.ci/run's ASan+UBSan pass).
san_env=()
[[ -n ${ASAN_OPTIONS:-} ]] && san_env+=("ASAN_OPTIONS=$ASAN_OPTIONS")
[[ -n ${UBSAN_OPTIONS:-} ]] && san_env+=("UBSAN_OPTIONS=$UBSAN_OPTIONS")
set +e
chroot "$m" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
  LANG=C.UTF-8 TERM="${TERM:-dumb}" "${san_env[@]}" ${SIM_ENV:-} "$@"
rc=$?
exit $rc
