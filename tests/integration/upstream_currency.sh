#!/usr/bin/env bash
# ctest-labels: fixtures
# tools/upstream_currency.py on recorded upstream snapshots (tests/fixtures/upstream/: excerpts of NVIDIA's
# GPU Operator documentation, NCCL's and the open kernel modules' tags, redistributable manifests, each with its
# commit): what is new upstream and what no stack pins, the same answer from a directory and over HTTP from a
# loopback server serving that directory, exit codes, and one line naming FILE:LINE for every malformed input.
# No network: the server is tests/sim/http_server.py on 127.0.0.1.
# Usage: bash upstream_currency.sh <gpuprep-binary> <source-dir> <build-dir>
set -uo pipefail
SRC=$2
TOOL="$SRC/tools/upstream_currency.py"
PY="python3 -S"  # the standard library only: no site-packages to import at each start
FIX="$SRC/tests/fixtures/upstream"
fails=0
tmp=$(mktemp -d)
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$tmp"' EXIT

check() {  # check NAME WANT_RC PATTERN -- command...   (PATTERN: fixed text in stdout+stderr)
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

bad() {  # bad NAME DIR WANT_LINE: exit 2, nothing on stdout, exactly one line on stderr, starting with WANT_LINE
  local name=$1 dir=$2 want=$3 rc
  $PY "$TOOL" --snapshots "$dir" --root "$SRC" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$rc" -ne 2 ] || [ -s "$tmp/out" ] || [ "$(wc -l <"$tmp/err")" -ne 1 ] ||
    [ "$(head -c ${#want} "$tmp/err")" != "$want" ]; then
    echo "FAIL $name: rc=$rc (want 2), want one line starting with: $want"
    sed 's/^/     /' "$tmp/out" "$tmp/err" | head -10
    fails=$((fails + 1))
  else
    echo "ok   $name: $(cat "$tmp/err")"
  fi
}

# --- the recorded snapshots --------------------------------------------------------------------------------
# NVIDIA's matrix of 2026-08-19 lists 580.178.04 with a link to 580.173.02's notes: not NVIDIA's record of a
# release of its own, so it is new but unconfirmed; the release notes' prose names "595.91.97" (no such row).
$PY "$TOOL" --snapshots "$FIX" --root "$SRC" >"$tmp/fix.txt" 2>&1
rc=$?
[ "$rc" -eq 1 ] && echo "ok   exit 1: something new upstream" || { echo "FAIL exit $rc (want 1)"; fails=$((fails + 1)); }
has() {  # has NAME PATTERN: the recorded snapshots' text output holds PATTERN
  if grep -qF -- "$2" "$tmp/fix.txt"; then echo "ok   $1"; else
    echo "FAIL $1: no line with: $2"; sed 's/^/     /' "$tmp/fix.txt" | head -30; fails=$((fails + 1))
  fi
}
has "580.178.04: a matrix row linked to another release's notes" \
  "580.178.04   unconfirmed: its matrix row links to 580.173.02's release notes"
has "cited at its upstream line" \
  "NVIDIA/cloud-native-docs@ee48878104ac:gpu-operator/life-cycle-policy.rst:137 (2026-08-19)"
has "a version named only in prose" "595.91.97    unconfirmed: named only in the release notes' prose"
has "cuDNN newer than every stack's" "cuDNN              9.27.0.42    released 2026-09-29; builds for CUDA 12, 13"
has "a data-center branch no stack is on" "driver R610        610.57.04    no shipped stack is on this branch"
has "a known CUDA release no stack pins" \
  "CUDA               13.4.2       released 2026-09-16; runs natively from driver branch R615"
# The pinned releases themselves are not listed: 580.173.02 (every R580 stack), 595.91.07 (the R595 stacks),
# NCCL 2.30.7, toolkit 1.20.0.
for v in " 580.173.02 " " 595.91.07 " " 2.30.7 " " 1.20.0 " " 13.4.1 "; do
  if grep -qF -- "$v" "$tmp/fix.txt"; then
    echo "FAIL listed although pinned or superseded:$v"; fails=$((fails + 1))
  else
    echo "ok   not listed:$v"
  fi
done

# JSON: the same entries, machine-readable.
$PY "$TOOL" --snapshots "$FIX" --root "$SRC" --json >"$tmp/dir.json"
rc=$?
if [ "$rc" -eq 1 ] && python3 - "$tmp/dir.json" <<'PY'; then
import json, sys
doc = json.load(open(sys.argv[1]))
found = {(e["component"], e["version"]): e for e in doc["found"]}
assert found[("driver R580", "580.178.04")]["status"] == "new", found
assert found[("CUDA", "13.4.2")]["status"] == "unpinned"
assert found[("cuDNN", "9.27.0.42")]["evidence"].startswith("NixOS/nixpkgs@d193d7403679:")
assert all(set(e) >= {"component", "version", "status", "evidence", "note"} for e in doc["found"])
assert [s["commit"][:12] for s in doc["snapshots"]][0] == "ee48878104ac"
PY
  echo "ok   --json"
else
  echo "FAIL --json (rc=$rc)"; fails=$((fails + 1))
fi

# Nothing newer: exit 0.
mkdir -p "$tmp/old/nccl"
grep -E '^v2\.(2[0-9]|30)\.' "$FIX/nccl/tags" >"$tmp/old/nccl/tags"
printf 'nccl/tags\tNVIDIA/nccl\t5067397c2676d5aed50042fc39e5c8ee96eb0027\t2026-06-11\n' >"$tmp/old/SNAPSHOTS"
check "nothing newer" 0 "Nothing upstream is newer than the embedded data." -- \
  $PY "$TOOL" --snapshots "$tmp/old" --root "$SRC"
# A tag newer than every pin is found.
echo "v2.31.0-1" >>"$tmp/old/nccl/tags"
check "a newer NCCL tag" 1 "NCCL               2.31.0       release tag" -- $PY "$TOOL" --snapshots "$tmp/old" --root "$SRC"

# The toolkit's and NGC PyTorch's readers: a toolkit release heading above every pin and advisory, and an
# index of PyTorch release notes (the shape of NVIDIA's page: links to rel-YY-MM.html) with a tag above the
# stacks' image.
mkdir -p "$tmp/new/cloud-native-docs/container-toolkit" "$tmp/new/ngc-pytorch"
sed 's/^## NVIDIA Container Toolkit 1\.20\.0$/## NVIDIA Container Toolkit 1.21.0/' \
  "$FIX/cloud-native-docs/container-toolkit/release-notes.md" >"$tmp/new/cloud-native-docs/container-toolkit/release-notes.md"
printf '<li><a href="rel-26-03.html">Release 26.03</a></li>\n<li><a href="rel-25-12.html">Release 25.12</a></li>\n' \
  >"$tmp/new/ngc-pytorch/release-notes-index.html"
{ printf 'cloud-native-docs/container-toolkit/release-notes.md\tNVIDIA/cloud-native-docs\t%s\t2026-08-21\t1\n' \
  52dcb7b8d956784344e241df476de17094a4574c
  printf 'ngc-pytorch/release-notes-index.html\texample/test\t%s\t-\n' 0000000000000000000000000000000000000000; } \
  >"$tmp/new/SNAPSHOTS"
$PY "$TOOL" --snapshots "$tmp/new" --root "$SRC" >"$tmp/fix.txt" 2>&1
has "a newer toolkit release" "container toolkit  1.21.0       release notes"
has "a newer NGC PyTorch release" "NGC PyTorch        26.03        release notes published"
if grep -qE "^  NGC PyTorch +25\.12 " "$tmp/fix.txt"; then
  echo "FAIL the stacks' own NGC release listed as newer"; fails=$((fails + 1))
else
  echo "ok   the stacks' NGC release (25.12) not listed"
fi

# --- online: the same files from a loopback HTTP server ----------------------------------------------------
python3 "$SRC/tests/sim/http_server.py" "$FIX" "$tmp/port" "$tmp/http.log" &
server=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
port=$(cat "$tmp/port" 2>/dev/null)
$PY "$TOOL" --base-url "http://127.0.0.1:$port/" --root "$SRC" --json >"$tmp/url.json"
rc=$?
if [ "$rc" -eq 1 ] && cmp -s "$tmp/dir.json" "$tmp/url.json" && grep -q "^GET /SNAPSHOTS 200" "$tmp/http.log" &&
  grep -q "^GET /cudnn-redist/redistrib_9.27.0.json 200" "$tmp/http.log"; then
  echo "ok   online: the same answer from http://127.0.0.1:$port/"
else
  echo "FAIL online (rc=$rc)"; diff "$tmp/dir.json" "$tmp/url.json" | head; head "$tmp/http.log"; fails=$((fails + 1))
fi
check "online text" 1 "580.178.04" -- $PY "$TOOL" --base-url "http://127.0.0.1:$port" --root "$SRC"
check "online: a missing file" 3 "cannot fetch http://127.0.0.1:$port/nowhere/SNAPSHOTS: HTTP 404" -- \
  $PY "$TOOL" --base-url "http://127.0.0.1:$port/nowhere/" --root "$SRC"
check "online: not http" 2 "--base-url: want an http:// or https:// URL" -- \
  $PY "$TOOL" --base-url "file:///etc/" --root "$SRC"

# --- hostile input: one line, FILE:LINE, exit 2 -------------------------------------------------------------
copy() { rm -rf "$tmp/h"; cp -r "$FIX" "$tmp/h"; }
copy; printf 'nccl/tags\tNVIDIA/nccl\t5067397c\n' >>"$tmp/h/SNAPSHOTS"
bad "index: too few fields" "$tmp/h" "$tmp/h/SNAPSHOTS:14: want 4 or 5 tab-separated fields"
copy; sed -i 's/^nccl\/tags\tNVIDIA\/nccl\t5067397c2676/nccl\/tags\tNVIDIA\/nccl\tZZ67397c2676/' "$tmp/h/SNAPSHOTS"
bad "index: bad commit" "$tmp/h" "$tmp/h/SNAPSHOTS:9: bad commit"
copy; printf '../etc/passwd\tNVIDIA/nccl\t5067397c2676d5aed50042fc39e5c8ee96eb0027\t-\n' >>"$tmp/h/SNAPSHOTS"
bad "index: a path out of the directory" "$tmp/h" "$tmp/h/SNAPSHOTS:14: bad path"
copy; printf 'nccl/other\tNVIDIA/nccl\t5067397c2676d5aed50042fc39e5c8ee96eb0027\t-\n' >>"$tmp/h/SNAPSHOTS"
bad "index: an unknown file" "$tmp/h" "$tmp/h/SNAPSHOTS:14: unknown snapshot file"
copy; sed -i '3s/.*/    "release_label": 13.4.2,,/' "$tmp/h/cuda-redist/redistrib_13.4.2.json"
bad "JSON syntax" "$tmp/h" "$tmp/h/cuda-redist/redistrib_13.4.2.json:3: not JSON"
copy; sed -i 's/"release_label": "13.4.2"/"release_label": "13.4.3"/' "$tmp/h/cuda-redist/redistrib_13.4.2.json"
bad "JSON: label not the file's" "$tmp/h" "$tmp/h/cuda-redist/redistrib_13.4.2.json:3: release_label '13.4.3'"
copy; sed -i '72s/`_ (\*\*R\*\*)/ (**R**)/' "$tmp/h/cloud-native-docs/gpu-operator/life-cycle-policy.rst"
bad "a broken matrix row" "$tmp/h" "$tmp/h/cloud-native-docs/gpu-operator/life-cycle-policy.rst:72: unreadable driver entry"
copy; sed -i '5s/.*/v2.99 bad tag/' "$tmp/h/nccl/tags"
bad "a tag line with a blank" "$tmp/h" "$tmp/h/nccl/tags:5: not a git tag name"
copy; printf 'v2.99.0-1\033[2J\n' >>"$tmp/h/nccl/tags"
bad "a control character" "$tmp/h" "$tmp/h/nccl/tags:$(($(wc -l <"$FIX/nccl/tags") + 1)): control character"
copy; printf '\xff\xfe\n' >>"$tmp/h/open-gpu-kernel-modules/tags"
bad "not UTF-8" "$tmp/h" "$tmp/h/open-gpu-kernel-modules/tags:$(($(wc -l <"$FIX/open-gpu-kernel-modules/tags") + 1)): not UTF-8"
copy; rm "$tmp/h/cudnn-redist/redistrib_9.27.0.json"
bad "a listed file missing" "$tmp/h" "$tmp/h/SNAPSHOTS: cudnn-redist/redistrib_9.27.0.json is listed but not a regular file"
copy; head -c 1100000 /dev/zero | tr '\0' 'a' >"$tmp/h/nccl/tags"
bad "a file over 1 MiB" "$tmp/h" "$tmp/h/nccl/tags:1: larger than"

[ "$fails" -eq 0 ] && echo "all upstream_currency checks passed"
exit $((fails > 0))
