#!/usr/bin/env bash
# Runs clang-tidy (the checked-in .clang-tidy) over src/ with the flags of a configured build.
# Usage: tools/clang-tidy.sh [BUILD_DIR] [JOBS] [FILE...]   (defaults: build, the number of CPUs, every
# src/**/*.cc). Exit 0 only when every file was analysed with zero findings. JOBS clang-tidy at a time; each
# one's findings are printed as soon as it is done (a run cut short by a time limit still shows what it
# found), then the total and the time. The generated sources are data tables and are not analysed.
# A whole run analyses what the build compiles: a unity build's batches (up to 8 files of a folder as one
# translation unit, CMakeLists.txt), so the headers are parsed once per batch instead of once per file; a
# finding still names its file and line. Files given by name are analysed one at a time (quicker for a few).
# A function over readability-function-size's 60 lines is a finding unless tools/function-size-exceptions.txt
# names it (FILE FUNCTION: why); in a whole run, an entry that names no such function is a finding too, so
# the list shrinks.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
jobs=${2:-$(nproc)}
shift $(( $# < 2 ? $# : 2 ))
[[ -f "$build/compile_commands.json" ]] || { echo "clang-tidy.sh: no $build/compile_commands.json (configure first)" >&2; exit 2; }
whole=1
if (( $# > 0 )); then
  whole=0
  files=("$@")
else
  mapfile -t files < <(git ls-files 'src/*.cc')
fi
start=$(date +%s)
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
# The units to analyse and their compile commands ($logs/db). A batch (Unity/unity_*_cxx.cxx) is one unit in
# a whole run when every file it includes is one of ours; otherwise, and for files given by name, each file
# gets its batch's command and is analysed alone, with the flags it is compiled with.
mkdir "$logs/db"
printf '%s\n' "${files[@]}" >"$logs/wanted"
python3 - "$build/compile_commands.json" "$logs/db/compile_commands.json" "$logs/wanted" "$whole" "$PWD" \
  >"$logs/units" <<'PY'
import json, os, re, sys
db_in, db_out, wanted_path, whole, root = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1", sys.argv[5]
wanted = {os.path.join(root, f) for f in open(wanted_path).read().split()}
out, units, covered, singles = [], [], set(), {}
for e in json.load(open(db_in)):
    f = e["file"]
    if re.search(r"/Unity/unity_[^/]+_cxx\.cxx$", f):
        srcs = re.findall(r'^#include "([^"]+)"$', open(f).read(), re.M)
        if whole and srcs and all(s in wanted for s in srcs):
            out.append(e)
            units.append(f)
            covered.update(srcs)
            continue
        for s in srcs:
            singles.setdefault(s, dict(e, file=s, command=e["command"].replace(f, s)))
    else:
        singles.setdefault(os.path.abspath(os.path.join(e.get("directory", ""), f)), e)
for f in sorted(wanted - covered):
    if f in singles:
        out.append(singles[f])
        units.append(f)
json.dump(out, open(db_out, "w"), indent=1)
print("\n".join(units))
PY
# One unit: its whole output kept in $logs, its findings (and compile errors) printed in one write. The files
# a batch includes are its headers to clang-tidy, so the header filter takes them too; a batch including .cc
# files is the unity build's design, not a suspicious include.
one() {
  local log
  log="$2/$(tr / _ <<<"$3").log"
  clang-tidy -p "$1" --quiet --header-filter='.*/src/.*\.(h|cc)$' --checks=-bugprone-suspicious-include "$3" \
    >"$log" 2>&1 || true
  grep -E '(warning|error): ' "$log" | sort -u || true
}
export -f one
xargs -P "$jobs" -I{} bash -c 'one "$@"' one "$logs/db" "$logs" {} <"$logs/units" | tee "$logs/findings" |
  python3 tools/function-size-exceptions.py --quiet tools/function-size-exceptions.txt "$PWD"
if (( whole )); then
  python3 tools/function-size-exceptions.py tools/function-size-exceptions.txt "$PWD" \
    <"$logs/findings" >"$logs/kept"
  grep '^tools/function-size-exceptions' "$logs/kept" || true  # the list's own problems (findings are above)
else
  python3 tools/function-size-exceptions.py --quiet tools/function-size-exceptions.txt "$PWD" \
    <"$logs/findings" >"$logs/kept"
fi
findings=$(sort -u "$logs/kept" | grep -c . || true)
took=$(( $(date +%s) - start ))
units=$(grep -c . "$logs/units" || true)
analysed=$(grep -c . "$logs/wanted" || true)
if [[ "$findings" -ne 0 ]]; then
  echo "clang-tidy.sh: $findings finding(s) in $analysed files ($units units, ${took} s)" >&2
  exit 1
fi
echo "clang-tidy.sh: $analysed files ($units units), no findings (${took} s)"
