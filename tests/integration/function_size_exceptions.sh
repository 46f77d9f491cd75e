#!/usr/bin/env bash
# ctest-labels: lint
# The list of functions allowed over 60 lines (tools/function-size-exceptions.txt) and its filter
# (tools/function-size-exceptions.py, which tools/clang-tidy.sh runs over clang-tidy's findings):
#  - the filter drops an excepted readability-function-size finding, keeps any other finding, and reports an
#    entry with no reason and an entry that excepted nothing (a function split or renamed), so the list
#    only shrinks; it is proved on recorded findings;
#  - the committed list is well formed: every entry names a file under src/ that defines that function,
#    gives a reason, and the list holds no more entries than its ceiling (max below: lower it with each
#    split; the goal is 25).
# (clang-tidy itself, which counts the lines, runs in CI's gating step, not here: about 1 s a file.)
# Usage: function_size_exceptions.sh GPUPREP_BINARY SOURCE_DIR BUILD_DIR
set -euo pipefail
src=${2:?source dir}
filter="$src/tools/function-size-exceptions.py"
list="$src/tools/function-size-exceptions.txt"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "function_size_exceptions: $*" >&2; exit 1; }

cat >"$work/list" <<'LIST'
# comment
src/a/x.cc Outer::Long: a table written out on purpose
src/a/y.cc Gone: was split, the entry stayed behind
src/a/z.cc NoReason:
LIST
# As clang-tidy prints them: an error under .clang-tidy's WarningsAsErrors, a warning without it.
cat >"$work/findings" <<FINDINGS
/repo/src/a/x.cc:10:6: error: function 'Long' exceeds recommended size/complexity thresholds [readability-function-size,-warnings-as-errors]
/repo/src/a/x.cc:90:6: warning: function 'Other' exceeds recommended size/complexity thresholds [readability-function-size]
/repo/src/a/x.cc:95:3: warning: use nullptr [modernize-use-nullptr]
FINDINGS
python3 "$filter" "$work/list" /repo <"$work/findings" >"$work/kept"
grep -q "function 'Long'" "$work/kept" && fail "an excepted function was kept: $(cat "$work/kept")"
grep -q "function 'Other'" "$work/kept" || fail "a function not in the list was dropped"
grep -q "modernize-use-nullptr" "$work/kept" || fail "another check's finding was dropped"
grep -q "list:4: expected .* with a reason" "$work/kept" || fail "an entry without a reason passed"
grep -q "list:3: warning: src/a/y.cc Gone is excepted but was not found" "$work/kept" ||
  fail "a stale entry passed"
[[ $(grep -c . "$work/kept") -eq 4 ]] || fail "expected 4 lines kept, got: $(cat "$work/kept")"
python3 "$filter" --quiet "$work/list" /repo <"$work/findings" >"$work/quiet"
[[ $(grep -c . "$work/quiet") -eq 2 ]] || fail "--quiet: expected the 2 findings only, got: $(cat "$work/quiet")"

# The committed list.
n=0
while read -r file name why; do
  [[ -z "$file" || "$file" == \#* ]] && continue
  n=$((n + 1))
  name=${name%:}
  [[ "$file" == src/* && -f "$src/$file" ]] || fail "$file: not a file under src/"
  [[ ${#why} -ge 10 ]] || fail "$file $name: no reason given"
  grep -qE "(^|[^A-Za-z0-9_])${name##*::} ?\(" "$src/$file" || fail "$file: defines no function ${name}"
done <"$list"
max=2  # the two generated tables (58 when the check came in)
(( n <= max )) || fail "$n functions excepted; at most $max (split one rather than adding it)"
python3 "$filter" "$list" "$src" </dev/null | grep -v 'excepted but was not found' && fail "malformed list"
echo "function_size_exceptions: filter proved on recorded findings; $n exceptions, each with a reason"
