"""Per-job checks for check_trace.py: the jobs' GPU time and amounts add up to the run's, verdict by
verdict, on every trace; `expect job=KEY verdict=V gpus=0,1 share=X` lines (share: of the judged GPU time)
hold. `fail` reports and exits."""


def close(a, b):
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def check_jobs(summary, verdicts, expects, fail):
    jobs = summary.get("jobs")
    if jobs is None:
        fail("summary without jobs")
    cost = summary["cost"]
    keys = [j["key"] for j in jobs]
    if len(set(keys)) != len(keys):
        fail(f"jobs: a key twice: {keys}")
    for v in verdicts:
        if any(k not in keys for k in v.get("jobs", [])):
            fail(f"verdict names a job the summary does not: {v['jobs']}")
    for name, line in cost["by_verdict"].items():
        got = sum(j["cost"]["by_verdict"][name]["gpu_hours"] for j in jobs)
        if not close(got, line["gpu_hours"]):
            fail(f"jobs: {name} {got} GPU-hours, the run {line['gpu_hours']}")
    for j in jobs:
        if not close(j["cost"]["gpu_hours"], sum(l["gpu_hours"] for l in j["cost"]["by_verdict"].values())):
            fail(f"job {j['key']}: GPU-hours are not the sum of its lines")
    if cost["amount"] is not None and not close(sum(j["cost"]["amount"] for j in jobs), cost["amount"]):
        fail("jobs: amounts do not add up to the run's")
    judged = cost["gpu_hours"] - cost["by_verdict"]["unjudged"]["gpu_hours"]
    checked = 0
    for kv in expects:
        j = next((x for x in jobs if x["key"] == kv["job"]), None)
        if j is None:
            fail(f"no job {kv['job']} in the summary (jobs: {keys})")
        if "verdict" in kv and j["verdict"] != kv["verdict"]:
            fail(f"job {kv['job']}: verdict {j['verdict']}, expected {kv['verdict']}")
        if "gpus" in kv and j["gpus"] != [int(x) for x in kv["gpus"].split(",")]:
            fail(f"job {kv['job']}: GPUs {j['gpus']}, expected {kv['gpus']}")
        if "share" in kv:
            mine = j["cost"]["gpu_hours"] - j["cost"]["by_verdict"]["unjudged"]["gpu_hours"]
            if abs(mine / judged - float(kv["share"])) > 1e-6:
                fail(f"job {kv['job']}: {mine / judged} of the judged GPU time, expected {kv['share']}")
        checked += 1
    return checked
