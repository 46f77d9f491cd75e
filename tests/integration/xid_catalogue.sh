#!/usr/bin/env bash
# ctest-labels: fixtures
# The Xid table in src/util/xid_catalogue.cc is exactly what tools/xid_catalogue.py generates from the
# checked-in extract of NVIDIA's Xid catalogue (tools/data/gpud/xid-catalog.tsv, as gpud mirrors it at a named
# commit), and the check notices a hand edit of either side. Python 3 only; takes about a second.
# Usage: bash xid_catalogue.sh <gpuprep-binary> <source-dir> <build-dir>
set -uo pipefail
SRC=$2
TOOL="$SRC/tools/xid_catalogue.py"
TABLE="$SRC/src/util/xid_catalogue.cc"
TSV="$SRC/tools/data/gpud/xid-catalog.tsv"
fails=0
check() {  # check NAME WANT_RC PATTERN -- command...
  local name=$1 want=$2 pattern=$3 out rc
  shift 4
  out=$("$@" 2>&1)
  rc=$?
  if [ "$rc" -ne "$want" ] || ! grep -qF -- "$pattern" <<<"$out"; then
    echo "FAIL $name: rc=$rc (want $want), pattern: $pattern"
    echo "$out" | sed 's/^/     /' | head -20
    fails=$((fails + 1))
  else
    echo "ok   $name"
  fi
}
check "checked-in table = generated" 0 "xid_catalogue.cc is up to date" -- python3 "$TOOL" check
check "the extract names its upstream commit" 0 "# commit: " -- grep -m1 "^# commit: [0-9a-f]\{40\}$" "$TSV"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A hand edit of the table (Xid 79's immediate action) is reported with a diff...
sed 's/"GPU has fallen off the bus", "RESTART_BM"/"GPU has fallen off the bus", "IGNORE"/' "$TABLE" >"$tmp/table.cc"
cmp -s "$TABLE" "$tmp/table.cc" && { echo "FAIL the table edit did not apply"; fails=$((fails + 1)); }
check "a hand edit of the table is caught" 1 '+      {79, XidClass::kHardware, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS"' -- \
  python3 "$TOOL" check --out "$tmp/table.cc"
# ...as is an extract that changed without the table being generated again...
sed 's/^95\t\(.*\)\tRESET_GPU\t/95\t\1\tRESTART_APP\t/' "$TSV" >"$tmp/x.tsv"
cmp -s "$TSV" "$tmp/x.tsv" && { echo "FAIL the extract edit did not apply"; fails=$((fails + 1)); }
check "a changed extract is caught" 1 '"ROBUST_CHANNEL_UNCONTAINED_ERROR", "Uncontained memory error", "RESTART_APP"' -- \
  python3 "$TOOL" check --tsv "$tmp/x.tsv"
# ...as is a changed NVLink decode extract (Xid 145 RLW_RXPIPE, error status 8: IGNORE made RESET_GPU)...
NVLINK_TSV="$SRC/tools/data/gpud/xid-nvlink-decode.tsv"
sed 's/^\(145\tRLW_RXPIPE\t[^\t]*\t[^\t]*\t0x00000008\t\)IGNORE/\1RESET_GPU/' "$NVLINK_TSV" >"$tmp/n.tsv"
cmp -s "$NVLINK_TSV" "$tmp/n.tsv" && { echo "FAIL the NVLink extract edit did not apply"; fails=$((fails + 1)); }
check "a changed NVLink decode extract is caught" 1 '0x00000008u, "RESET_GPU"' -- \
  python3 "$TOOL" check --nvlink-tsv "$tmp/n.tsv"
# ...and generate puts the table back.
check "generate restores it" 0 "wrote" -- python3 "$TOOL" generate --out "$tmp/table.cc"
cmp -s "$TABLE" "$tmp/table.cc" || { echo "FAIL generate did not restore the table"; fails=$((fails + 1)); }
# A malformed extract row is refused with its line.
printf '# commit: %040d\nnot-a-code\tx\n' 0 >"$tmp/bad.tsv"
check "a malformed extract is refused" 1 "bad.tsv:2:1: want 5 tab-separated columns" -- \
  python3 "$TOOL" check --tsv "$tmp/bad.tsv"
check "the NVLink extract is from the same commit" 0 "$(grep -m1 '^# commit: ' "$TSV")" -- grep -m1 "^# commit: " "$NVLINK_TSV"
size=$(stat -c %s "$TSV")
[ "$size" -lt 1048576 ] || { echo "FAIL the extract is $size bytes, over 1 MiB"; fails=$((fails + 1)); }
[ "$fails" -eq 0 ] && echo "all xid_catalogue checks passed"
exit $((fails > 0))
