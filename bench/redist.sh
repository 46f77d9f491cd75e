#!/usr/bin/env bash
# The streaming redist install (bench/redist_install.cc -> redist::Install) against the sequential way,
# on one fixed archive served over HTTPS from loopback (tests/redist/redist_server.py):
#   1. throttled to 100 MB/s: streaming vs `curl -o f && sha256sum f && tar -xf f`  target <= 0.65x
#   2. unthrottled:           streaming vs `xz -dc archive > /dev/null` (the floor)   target <= 1.1x
# and where the sequential time goes: the download alone, sha256sum, xz -dc, tar -xf; and the streaming install
# from a local directory (file://, an air-gapped host's share) against the same floor.
# BASELINE=PATH/TO/redist_install (another build's, e.g. main's) times that binary too, alternating with this one
# in every round of the three sources, and prints this build's time relative to it.
# The archive (tests/redist/make_redist.py --pad-mb): a single-block .tar.xz in NVIDIA's cuDNN layout whose
# library data is matched to real cuDNN shared objects (xz ratio 0.633 and xz's decoding cost per MB, see
# library_like() there). Real sizes, from https://developer.download.nvidia.com/compute/cudnn/redist/redistrib_9.12.0.json:
# cudnn-linux-x86_64-9.12.0.46_cuda13-archive.tar.xz 587,854,960 bytes, _cuda12 845,538,764 bytes. The default
# PAD_MB 448 makes ~300 MB (half the CUDA 13 one: generating it takes minutes); 896 matches it. Download and
# decoding both scale with the size, so the ratios hardly depend on it.
# Usage: bash bench/redist.sh [BUILD_DIR] [PAD_MB] [ROUNDS]   (defaults: build, 448, 3)
# ARCHIVE_DIR=DIR keeps the generated archive there between runs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
pad=${2:-448}
rounds=${3:-3}
bin=$build/bench/redist_install
[[ -x $bin ]] || { echo "build it first: cmake --build $build --target redist_install" >&2; exit 2; }
work=$(mktemp -d)
srv=
cleanup() { if [[ -n $srv ]]; then kill "$srv" 2>/dev/null; wait 2>/dev/null || true; fi; rm -rf "$work"; }
trap cleanup EXIT

tree=${ARCHIVE_DIR:-$work/tree}
archive=$tree/cudnn/linux-x86_64/cudnn-linux-x86_64-9.12.0.46_cuda13-archive.tar.xz
if [[ ! -f $archive ]]; then
  echo "generating a ${pad} MiB archive (once)..." >&2
  python3 "$here/../tests/redist/make_redist.py" "$tree" --release 9.12.0 --version 9.12.0.46 --cuda 13 \
    --pad-mb "$pad" >/dev/null
fi
raw=$(xz --robot --list "$archive" | awk '$1 == "totals" {print $5}')
blocks=$(xz --robot --list "$archive" | awk '$1 == "totals" {print $3}')
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj "/CN=gpuprep bench" \
  -addext "subjectAltName=IP:127.0.0.1" -keyout "$work/tls.key" -out "$work/tls.crt" 2>/dev/null

serve() {  # serve [--throttle B/s]: (re)starts the server; sets $url
  if [[ -n $srv ]]; then kill "$srv" 2>/dev/null; wait "$srv" 2>/dev/null || true; fi
  rm -f "$work/port"
  python3 "$here/../tests/redist/redist_server.py" "$tree" "$work/port" /dev/null --cert "$work/tls.crt" \
    --key "$work/tls.key" "$@" &
  srv=$!
  for _ in $(seq 100); do [[ -s $work/port ]] && break; sleep 0.05; done
  url=https://127.0.0.1:$(cat "$work/port")/
}
# Each timed run starts with nothing left to write back from the one before (sync, untimed).
ms() { sync; local t0=$EPOCHREALTIME; "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }; local t1=$EPOCHREALTIME; echo $(((${t1/./} - ${t0/./}) / 1000)); }
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2)}'; }
# one_install BIN SOURCE [CA]: one streaming install into a fresh root; its CPU time (user + sys, ms) is appended to
# $work/cpu-$tag (set tag=... on the call): on a shared machine CPU time is the steadier comparison.
one_install() {
  rm -rf "$work/root" && mkdir -p "$work/root" &&
    /usr/bin/time -f "%U %S" -o "$work/tm" "$1" "$2" "$work/root" "${@:3}" &&
    awk '{printf "%d\n", ($1 + $2) * 1000}' "$work/tm" >>"$work/cpu-$tag"
}
streaming() { one_install "$bin" "$url" "$work/tls.crt"; }
baseline() { one_install "$BASELINE" "$url" "$work/tls.crt"; }
local_dir() { one_install "$bin" "$tree/"; }
local_baseline() { one_install "$BASELINE" "$tree/"; }
BASELINE=${BASELINE:-}
rel=${archive#"$tree"/}
sequential() {
  rm -rf "$work/seq" && mkdir -p "$work/seq"
  curl --fail --silent --show-error --cacert "$work/tls.crt" -o "$work/seq/a.tar.xz" "${url}${rel}" &&
    sha256sum "$work/seq/a.tar.xz" >/dev/null && tar -xf "$work/seq/a.tar.xz" -C "$work/seq"
}
# The sequential way's parts, each alone (the archive file of the last sequential run).
download() { curl --fail --silent --show-error --cacert "$work/tls.crt" -o /dev/null "${url}${rel}"; }
hashonly() { sha256sum "$work/seq/a.tar.xz"; }
untar() { rm -rf "$work/untar" && mkdir -p "$work/untar" && tar -xf "$work/seq/a.tar.xz" -C "$work/untar"; }
floor() { xz -dc "$archive" >/dev/null; }

echo "archive: $(stat -c %s "$archive") bytes (.tar.xz, $blocks xz block(s)), $raw bytes unpacked; $rounds rounds each, alternating"
echo "machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')), load average $(cut -d' ' -f1-3 /proc/loadavg)"
serve --throttle 100000000
for f in s q d h t x bs bu bl l; do : >"$work/$f"; done
for _ in $(seq "$rounds"); do
  tag=s ms streaming >>"$work/s"; [[ -z $BASELINE ]] || tag=bs ms baseline >>"$work/bs"; ms sequential >>"$work/q"
  ms download >>"$work/d"; ms hashonly >>"$work/h"; ms untar >>"$work/t"; ms floor >>"$work/x"
done
s=$(median <"$work/s"); q=$(median <"$work/q")
d=$(median <"$work/d"); h=$(median <"$work/h"); t=$(median <"$work/t"); x=$(median <"$work/x")
serve
: >"$work/u" && : >"$work/f"
for _ in $(seq "$rounds"); do
  tag=u ms streaming >>"$work/u"; [[ -z $BASELINE ]] || tag=bu ms baseline >>"$work/bu"; ms floor >>"$work/f"
  tag=l ms local_dir >>"$work/l"; [[ -z $BASELINE ]] || tag=bl ms local_baseline >>"$work/bl"
done
u=$(median <"$work/u"); f=$(median <"$work/f"); l=$(median <"$work/l")
echo "medians (ms): sequential parts: download at 100 MB/s $d, sha256sum $h, tar -xf $t (xz -dc alone $x)"
awk -v s="$s" -v q="$q" -v u="$u" -v f="$f" -v l="$l" -v d="$d" -v h="$h" -v t="$t" 'BEGIN {
  printf "100 MB/s: streaming %d ms, curl+sha256sum+tar %d ms: %.2fx (target <= 0.65x)\n", s, q, s / q
  m = d > t ? d : t
  printf "          (no pipeline beats max(download, tar -xf) = %d ms: %.2fx of the sequential time)\n", m, m / q
  printf "unthrottled: streaming %d ms, xz -dc floor %d ms: %.2fx (target <= 1.1x)\n", u, f, u / f
  printf "local directory (file://): streaming %d ms: %.2fx the floor\n", l, l / f
  printf "load average after: " } END {}'
cut -d' ' -f1-3 /proc/loadavg
echo "streaming install CPU (user+sys, median ms): 100 MB/s $(median <"$work/cpu-s"), unthrottled $(median <"$work/cpu-u"), local directory $(median <"$work/cpu-l")"
if [[ -n $BASELINE ]]; then
  for k in s u l; do
    awk -v name="$k" -v a="$(median <"$work/$k")" -v b="$(median <"$work/b$k")" -v ca="$(median <"$work/cpu-$k")" \
        -v cb="$(median <"$work/cpu-b$k")" 'BEGIN {
      label = name == "s" ? "100 MB/s" : name == "u" ? "unthrottled" : "local directory"
      printf "this build vs BASELINE, %s (medians, alternating runs): wall %d vs %d ms: %.3fx; CPU %d vs %d ms: %.3fx\n", label, a, b, a / b, ca, cb, ca / cb }'
  done
fi
