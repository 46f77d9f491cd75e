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
# The container engine's storage lives off the overlay (overlay2 refuses an overlayfs as its backing
# filesystem): HOST_DIR/docker-root, on the tmpfs or ext4 the sim's directory is on.
mkdir -p "$host/docker-root" "$m/var/lib/docker"
mount --bind "$host/docker-root" "$m/var/lib/docker"
# Fresh cgroup mounts, the same hierarchies as this machine's (a tmpfs over the fake /sys's fs/cgroup, each
# v1 controller or the v2 tree under it), for the engine's containers. dockerd runs with a --cgroup-parent of
# this simulation's own name (/sim/control/docker-cgroup-parent), which lib.sh removes from every hierarchy.
# A session that only reads the host's state (SIM_DAEMONS=0, below) runs no engine and gets none: a dozen
# mounts less for each such check.
if [ "${SIM_DAEMONS:-1}" != 0 ]; then
  mkdir -p "$m/sys/fs/cgroup"
  cg_v2=
  while read -r _ mnt fstype opts _; do
    case $fstype in
      cgroup2) [[ $mnt == /sys/fs/cgroup ]] && cg_v2=1 ;;
    esac
  done </proc/self/mounts
  if [[ -n $cg_v2 ]]; then
    mount -t cgroup2 cgroup2 "$m/sys/fs/cgroup"
  else
    mount -t tmpfs -o mode=0755 gpuprep-sim-cgroup "$m/sys/fs/cgroup"
    while read -r _ mnt fstype opts _; do
      [[ $mnt == /sys/fs/cgroup/* && ($fstype == cgroup || $fstype == cgroup2) ]] || continue
      name=${mnt#/sys/fs/cgroup/}
      mkdir -p "$m/sys/fs/cgroup/$name"
      if [[ $fstype == cgroup2 ]]; then
        mount -t cgroup2 cgroup2 "$m/sys/fs/cgroup/$name"
        continue
      fi
      ctl=
      IFS=, read -ra words <<<"$opts"
      for w in "${words[@]}"; do
        case $w in
          name=* | cpu | cpuacct | cpuset | memory | devices | freezer | net_cls | net_prio | blkio | perf_event | hugetlb | pids | rdma | misc)
            ctl+=${ctl:+,}$w ;;
        esac
      done
      [[ -n $ctl ]] && mount -t cgroup -o "$ctl" cgroup "$m/sys/fs/cgroup/$name"
    done </proc/self/mounts
  fi
fi
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
# The session ends as a shutdown does: the engine stops (its containers, containerd and the mounts it
# made go with it) before the namespace takes the rest.
[[ -x $m/usr/lib/gpuprep-sim/daemons/docker.service ]] &&
  chroot "$m" /usr/lib/gpuprep-sim/daemons/docker.service stop </dev/null >/dev/null 2>&1
exit $rc
