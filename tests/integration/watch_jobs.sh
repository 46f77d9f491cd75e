#!/usr/bin/env bash
# ctest-labels: fixtures
# Per-job grouping on a shared host: the stand-in NVML replays tests/watch/e2e/two_jobs_8gpu.trace (8 GPUs,
# a Slurm job, a docker container and a process whose cgroup cannot be read), and watch reads the host side
# from the fixture tree tests/fixtures/proc/two-jobs (--root), where those PIDs have their cgroups. Each job
# gets its own verdict and GPU time, and they add up to the run's (check_trace.py, check_jobs.py); the
# replay gives the same verdicts and summary; an old recording without jobs still replays.
# Usage: watch_jobs.sh GPUPREP_BINARY SOURCE_DIR BUILD_DIR
set -euo pipefail
bin=${1:?gpuprep binary}
src=${2:?source dir}
build=${3:?build dir}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
trace=$src/tests/watch/e2e/two_jobs_8gpu.trace
root=$src/tests/fixtures/proc/two-jobs
status=0
check() {  # check NAME CONDITION...
  local name=$1
  shift
  if "$@"; then echo "watch_jobs: ok: $name"; else echo "watch_jobs: FAIL: $name"; status=1; fi
}

rc=0
LD_LIBRARY_PATH=$build/tests/standin/current GPUPREP_STANDIN_TRACE=$trace \
  GPUPREP_STANDIN_PIDS="4101 4102 4201 4202 4203 4204 4301" \
  "$bin" --root "$root" watch --json --interval 100ms --window 1s --duration 2200ms --price-per-gpu-hour 2.5 \
  >"$work/live.jsonl" 2>"$work/err" || rc=$?
rrc=0
"$bin" watch --replay "$work/live.jsonl" --json --price-per-gpu-hour 2.5 >"$work/replay.jsonl" 2>>"$work/err" || rrc=$?
python3 "$src/tests/watch/check_trace.py" "$trace" "$work/live.jsonl" "$rc" "$work/replay.jsonl" "$rrc" || {
  sed 's/^/  stderr: /' "$work/err"
  exit 1
}
# Every GPU process of every sample carries its job, as its cgroup names it.
check "the samples carry each process's job" python3 - "$work/live.jsonl" <<'PY'
import json, sys
want = {4101: ("slurm", "101"), 4102: ("slurm", "101"), 4301: ("unknown", None)}
for pid in (4201, 4202, 4203, 4204):
    want[pid] = ("docker", "3f4e" * 16)
seen = set()
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["type"] != "sample":
        continue
    for g in r["gpus"]:
        for p in g["processes"]:
            j = p["job"]
            assert (j["kind"], j["id"]) == want[p["pid"]], (p["pid"], j)
            if j["kind"] == "unknown":
                assert j["reason"] == "/proc/PID/cgroup cannot be read" and j["cgroup"] is None, j
            else:
                assert j["cgroup"].startswith("/system.slice/"), j
            seen.add(p["pid"])
assert seen == set(want), seen
PY
# The text summary names the jobs with their verdicts and costs.
"$bin" watch --replay "$work/live.jsonl" --price-per-gpu-hour 2.5 >"$work/text" 2>/dev/null
check "text: the Slurm job, mostly healthy (GPU-windows: healthy 8)" grep -q "^    slurm job 101 on GPU 0,1,2,3: mostly healthy" "$work/text"
check "text: the container, by its short id" grep -q "^    docker 3f4e3f4e3f4e on GPU 3,4,5,6,7: mostly idle_memory_held" "$work/text"
check "text: the unknown process, with the reason" grep -q "^    unknown (/proc/PID/cgroup cannot be read) on GPU 7" "$work/text"
# --fail-on stays per GPU: the idle GPUs fail the run whichever job held them.
frc=0
"$bin" watch --replay "$work/live.jsonl" --fail-on idle_memory_held >/dev/null 2>"$work/err" || frc=$?
check "--fail-on is per GPU" test "$frc" = 1 -a "$(grep -c -- '--fail-on: GPU [4-7] was idle_memory_held' "$work/err")" = 4
# A recording made before per-job grouping (no job in its records) replays; its processes are "unknown".
orc=0
"$bin" watch --replay "$src/tests/fixtures/watch/hung_3gpu.jsonl" --json >"$work/old.jsonl" 2>/dev/null || orc=$?
check "an old recording replays" test "$orc" = 0
check "an old recording's jobs: unknown, not in the recording" python3 - "$work/old.jsonl" <<'PY'
import json, sys
s = [json.loads(l) for l in open(sys.argv[1])][-1]
assert [j["key"] for j in s["jobs"]] == ["unknown"], s["jobs"]
assert s["jobs"][0]["reason"].startswith("not in the recording"), s["jobs"][0]
PY
exit $status
