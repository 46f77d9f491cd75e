#!/usr/bin/env bash
# ctest-labels: fixtures
# manifests/shipped-stacks.lock is append-only: every line any commit ever had is still in the working tree's
# lock, byte for byte. So a shipped stack cannot be edited in place even by changing its lock line in the same
# commit: its old line would be gone. (The unit test holds each embedded stack to its line; this holds the
# lines to history.) Needs the source tree as a git checkout with its history; skips (77) otherwise.
# Usage: bash shipped_stacks.sh <gpuprep> <source-dir> [build-dir]
set -uo pipefail
SRC=$2
LOCK=manifests/shipped-stacks.lock
if ! command -v git >/dev/null 2>&1 || ! git -C "$SRC" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "SKIP: $SRC is not a git checkout"
  exit 77
fi
if [[ $(git -C "$SRC" rev-parse --is-shallow-repository 2>/dev/null) == true ]]; then
  echo "SKIP: a shallow clone has no history to compare the lock with"
  exit 77
fi
now=$(grep -v '^#' "$SRC/$LOCK" | grep -v '^[[:space:]]*$' | LC_ALL=C sort -u)
fail=0
commits=$(git -C "$SRC" log --format=%H -- "$LOCK")
for c in $commits; do
  then_lines=$(git -C "$SRC" show "$c:$LOCK" 2>/dev/null | grep -v '^#' | grep -v '^[[:space:]]*$' | LC_ALL=C sort -u)
  gone=$(comm -23 <(echo "$then_lines") <(echo "$now") | grep -v '^$')
  if [[ -n $gone ]]; then
    echo "FAIL: commit ${c:0:12} shipped these lock lines, which the tree no longer has (a shipped stack changed or was removed):" >&2
    echo "$gone" >&2
    fail=1
  fi
done
n=$(echo "$commits" | grep -c .)
[[ $fail == 0 ]] && echo "ok: $(echo "$now" | grep -c .) lock lines; every line of $n commit(s) of $LOCK is still there"
exit $fail
