#!/bin/bash
# with-lock.sh SECONDS CMD...: inside the simulated server, a process named "unattended-upgr" takes apt's
# and dpkg's locks (fcntl, as apt does) for SECONDS; once they are held, CMD runs. Exits with CMD's status.
# (Both must run in the same namespace: locks do not cross two overlay mounts of the same upper layer.)
secs=$1
shift
fifo=$(mktemp -u /tmp/sim-lock.XXXXXX)
mkfifo "$fifo"
/usr/local/bin/sim-holdlock "$secs" /var/lib/dpkg/lock-frontend /var/lib/dpkg/lock >"$fifo" &
holder=$!
read -r state <"$fifo"
rm -f "$fifo"
[[ $state == locked ]] || { echo "with-lock: the lock holder failed" >&2; exit 99; }
echo "sim: dpkg lock held for ${secs}s by unattended-upgr (pid $holder)" >&2
"$@"
rc=$?
kill "$holder" 2>/dev/null  # done with the lock (it may have ended already)
exit $rc
