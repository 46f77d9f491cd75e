#!/usr/bin/env bash
# bench/watch_replay.sh GPUPREP [MB] [JOBS_PER_SAMPLE]: `gpuprep watch --replay` over a recording of MB
# megabytes (default 100) made at bench time by watch_replay.py (one window per sample, every process in a
# Slurm job never seen before), timed by GNU time: wall, CPU and peak memory. The recording is removed after.
set -euo pipefail
gpuprep=${1:?path to the gpuprep binary}
mb=${2:-100}
per=${3:-4}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$here/watch_replay.py" "$work/rec.jsonl" "$mb" "$per"
ls -l "$work/rec.jsonl" | awk '{print "recording: " $5 " bytes"}'
cat "$work/rec.jsonl" >/dev/null  # warm the page cache
for fmt in json text; do
  args=(watch --replay "$work/rec.jsonl")
  [[ $fmt == json ]] && args+=(--json)
  /usr/bin/time -f "replay --$fmt: %e s wall, %U s user + %S s sys, %M KB peak" "$gpuprep" "${args[@]}" \
    >"$work/out.$fmt" || [[ $? == 1 ]]
  echo "  output: $(wc -c <"$work/out.$fmt") bytes"
done
