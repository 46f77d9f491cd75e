#!/usr/bin/env bash
# ctest-labels: differential
# The journal's export format against systemd itself: systemd-journal-remote (systemd's own journal writer)
# writes a journal file from tests/fixtures/xid/journal-export, journalctl prints it back (-o export, -o json,
# and -k -b -o export as the live-host reader runs it), and the "[journal-file]" case of the unit binary reads
# what journalctl printed: every entry as journalctl's json reads it, and the Xid history through the stand-in
# journalctl of the live-host reader's tests. Exit 77 (skipped) without systemd-journal-remote or journalctl
# (packaging/install-deps.sh installs Debian's systemd-journal-remote).
# Usage: differential_journal.sh <gpuprep-binary> <source-dir> <build-dir>
set -euo pipefail
SRC=$2
TESTS=$3/tests/gpuprep_tests
[[ -x $TESTS ]] || { echo "FAIL: $TESTS is not built" >&2; exit 1; }
remote=""
for candidate in /lib/systemd/systemd-journal-remote /usr/lib/systemd/systemd-journal-remote; do
  [[ -x $candidate ]] && { remote=$candidate; break; }
done
[[ -n $remote ]] || { echo "SKIP: systemd-journal-remote not found"; exit 77; }
command -v journalctl >/dev/null || { echo "SKIP: journalctl not found"; exit 77; }
work=$(mktemp -d /tmp/gpuprep-differential-journal.XXXXXX)
trap 'rm -rf "$work"' EXIT
# systemd-journal-remote reads export format on stdin ("-") and writes one journal file (--split-mode=none).
"$remote" --split-mode=none --output="$work/xid.journal" - <"$SRC/tests/fixtures/xid/journal-export" \
  2>"$work/remote.log" || { cat "$work/remote.log" >&2; echo "FAIL: systemd-journal-remote" >&2; exit 1; }
journalctl --file="$work/xid.journal" --no-pager -o export >"$work/all.export"
journalctl --file="$work/xid.journal" --no-pager -o json >"$work/all.json"
journalctl --file="$work/xid.journal" -k -o export --no-pager -b >"$work/boot.export"
journalctl --version | head -1
GPUPREP_JOURNAL_DIR=$work "$TESTS" "[journal-file]"
