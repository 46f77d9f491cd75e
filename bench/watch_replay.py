#!/usr/bin/env python3
"""bench/watch_replay.py OUT MB [JOBS_PER_SAMPLE]: writes a `gpuprep watch --json` recording of about MB
megabytes for bench/watch_replay.sh: one H100 (the first GPU of tests/fixtures/watch/hung_3gpu.jsonl's
first sample), sampled every second, one sample per 2 s window, and JOBS_PER_SAMPLE (default 4) GPU
processes in every sample, each in a Slurm job never seen before: the recording has as many windows as
samples and JOBS_PER_SAMPLE times as many distinct jobs, the shape that made the job summary quadratic.
Ends with a summary record. Generated at bench time, never committed."""
import copy, json, os, sys

out, megabytes = sys.argv[1], float(sys.argv[2])
per_sample = int(sys.argv[3]) if len(sys.argv) > 3 else 4
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "..", "tests", "fixtures", "watch", "hung_3gpu.jsonl")) as f:
    first = json.loads(f.readline())
gpu = first["gpus"][0]
host = first["host"]
host["processes"][0]["gpus"] = [gpu["gpu"]["index"]]
t0 = 1764590926000  # 2025-12-01T12:08:46Z


def rfc3339(ms):
    import datetime
    t = datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (ms % 1000)


limit = int(megabytes * 1e6)
written, i, job = 0, 0, 1
with open(out, "w") as f:
    while written < limit:
        g = copy.copy(gpu)
        procs = []
        for k in range(per_sample):
            procs.append({"pid": 27724 + k, "used_memory_bytes": 1 << 30, "gpu_instance_id": None,
                          "job": {"kind": "slurm", "id": str(job), "cgroup": "/slurm/uid_1000/job_%d/step_0/task_0" % job,
                                  "reason": None}})
            job += 1
        g["processes"] = procs
        rec = {"type": "sample", "schema": 1, "time": rfc3339(t0 + i * 2000), "interval_ms": 1000,
               "window_ms": 2000, "gpus": [g], "host": host}
        line = json.dumps(rec, separators=(",", ":")) + "\n"
        f.write(line)
        written += len(line)
        i += 1
    end = {"type": "summary", "schema": 1, "end": rfc3339(t0 + i * 2000)}
    f.write(json.dumps(end, separators=(",", ":")) + "\n")
print(f"{out}: {written / 1e6:.1f} MB, {i} samples (one per window), {job - 1} distinct jobs", file=sys.stderr)
