#!/usr/bin/env bash
# Runs clang-tidy (the checked-in .clang-tidy) over every src/**/*.cc with the flags of a configured build.
# Usage: tools/clang-tidy.sh [BUILD_DIR] [JOBS]   (defaults: build, the number of CPUs).
# Exit 0 only when every file was analysed with zero findings. One clang-tidy per file, JOBS at a time;
# each file's findings are printed as soon as it is done (a run cut short by a time limit still shows what
# it found), then the total and the time. The generated sources are data tables and are not analysed.
# A function over readability-function-size's 60 lines is a finding unless tools/function-size-exceptions.txt
# names it (FILE FUNCTION: why); an entry that names no such function is a finding too, so the list shrinks.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
jobs=${2:-$(nproc)}
[[ -f "$build/compile_commands.json" ]] || { echo "clang-tidy.sh: no $build/compile_commands.json (configure first)" >&2; exit 2; }
mapfile -t files < <(git ls-files 'src/*.cc')
start=$(date +%s)
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
# A unity build's database names its batches (Unity/unity_*_cxx.cxx), not the files: each file gets its
# batch's command, so it is analysed alone with the flags it is compiled with.
mkdir "$logs/db"
python3 - "$build/compile_commands.json" "$logs/db/compile_commands.json" <<'PY'
import json, re, sys
out = []
for e in json.load(open(sys.argv[1])):
    f = e["file"]
    if re.search(r"/Unity/unity_[^/]+_cxx\.cxx$", f):
        for src in re.findall(r'^#include "([^"]+)"$', open(f).read(), re.M):
            out.append(dict(e, file=src, command=e["command"].replace(f, src)))
    else:
        out.append(e)
json.dump(out, open(sys.argv[2], "w"), indent=1)
PY
# One file: its whole output kept in $logs, its findings (and compile errors) printed in one write.
one() {
  local log
  log="$2/$(tr / _ <<<"$3").log"
  clang-tidy -p "$1" --quiet "$3" >"$log" 2>&1 || true
  grep -E '(warning|error): ' "$log" | sort -u || true
}
export -f one
printf '%s\n' "${files[@]}" | xargs -P "$jobs" -I{} bash -c 'one "$@"' one "$logs/db" "$logs" {} | tee "$logs/findings" | python3 tools/function-size-exceptions.py --quiet tools/function-size-exceptions.txt "$PWD"
python3 tools/function-size-exceptions.py tools/function-size-exceptions.txt "$PWD" \
  <"$logs/findings" >"$logs/kept"
grep '^tools/function-size-exceptions' "$logs/kept" || true  # the list's own problems (findings are above)
findings=$(sort -u "$logs/kept" | grep -c . || true)
took=$(( $(date +%s) - start ))
if [[ "$findings" -ne 0 ]]; then
  echo "clang-tidy.sh: $findings finding(s) in ${#files[@]} files (${took} s)" >&2
  exit 1
fi
echo "clang-tidy.sh: ${#files[@]} files, no findings (${took} s)"
