#!/usr/bin/env python3
"""check_trace.py TRACE LIVE.jsonl LIVE_RC REPLAY.jsonl REPLAY_RC: the trace's `expect` lines hold for a
live `gpuprep watch --json` run against the stand-in NVML, and its replay gave the same verdicts and
summary. Prints what it checked; exits 1 on the first mismatch."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_jobs import check_jobs  # noqa: E402

trace, live_path, live_rc, replay_path, replay_rc = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
name = trace.rsplit("/", 1)[-1]


def fail(msg):
    print(f"{name}: FAIL: {msg}")
    sys.exit(1)


def records(path):
    out = []
    for n, line in enumerate(open(path), 1):
        try:
            out.append((line.rstrip("\n"), json.loads(line)))
        except json.JSONDecodeError as e:
            fail(f"{path}:{n}: not JSON: {e}")
    return out


def sel(text, count):
    if text == "*":
        return list(range(count))
    if "-" in text:
        a, b = text.split("-")
        return list(range(int(a), int(b) + 1))
    return [int(x) for x in text.split(",")]


live = records(live_path)
replay = records(replay_path)
samples = [r for _, r in live if r["type"] == "sample"]
verdict_lines = [l for l, r in live if r["type"] == "verdict"]
summary = [r for _, r in live if r["type"] == "summary"]
if len(summary) != 1 or live[-1][1]["type"] != "summary":
    fail("the live run did not end with exactly one summary record")
summary = summary[0]
if not samples:
    fail("no sample record")
ngpus = len(samples[0]["gpus"])
for _, r in live:
    if r.get("schema") != 1:
        fail(f"record without schema 1: {r.get('type')}")

# Replay gives the same verdicts, byte for byte, and the same summary.
replay_verdicts = [l for l, r in replay if r["type"] == "verdict"]
if replay_verdicts != verdict_lines:
    fail(f"replay verdicts differ from the live ones ({len(replay_verdicts)} vs {len(verdict_lines)} lines)")
replay_summary = [l for l, r in replay if r["type"] == "summary"]
live_summary_line = [l for l, r in live if r["type"] == "summary"]
if replay_summary != live_summary_line:
    fail(f"replay summary differs:\n live   {live_summary_line}\n replay {replay_summary}")
if replay_rc != live_rc:
    fail(f"replay exit {replay_rc}, live exit {live_rc}")

verdicts = [r for _, r in live if r["type"] == "verdict"]
live_verdicts_all = verdicts

# The cost adds up: GPU-hours paid = wall time x GPUs; every GPU-hour is in exactly one line (a verdict,
# unclassified or unjudged); shares sum to 1, amounts to the amount paid at the flat price the run gave.
PRICE = 2.5  # watch_traces.sh and watch_loader_e2e.sh pass --price-per-gpu-hour 2.5


def close(a, b, what):
    if abs(a - b) > 1e-9 * max(1.0, abs(a), abs(b)):
        fail(f"cost: {what}: {a} != {b}")


cost = summary.get("cost")
if not cost:
    fail("summary without cost")
from datetime import datetime, timezone


def ms(t):
    return datetime.strptime(t, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp() * 1000
close(cost["wall_s"], (ms(summary["end"]) - ms(summary["start"])) / 1000, "wall_s")
close(cost["gpus"], ngpus, "gpus")
close(cost["gpu_hours"], cost["wall_s"] * ngpus / 3600, "gpu_hours = wall x GPUs")
if cost["amount"] is None:
    fail("cost: no amount (the run must be given --price-per-gpu-hour 2.5)")
close(cost["amount"], cost["gpu_hours"] * PRICE, "amount = GPU-hours x price")
by = cost["by_verdict"]
close(sum(l["share"] for l in by.values()), 1.0, "shares sum to 1")
close(sum(l["gpu_hours"] for l in by.values()), cost["gpu_hours"], "GPU-hours sum")
close(sum(l["amount"] for l in by.values()), cost["amount"], "amounts sum")
for l in by.values():
    if l["share"] < 0 or l["gpu_hours"] < 0:
        fail(f"cost: a negative line {l}")
    close(l["amount"], l["gpu_hours"] * PRICE, "line amount")
close(cost["idle"]["gpu_hours"], by["idle"]["gpu_hours"] + by["idle_memory_held"]["gpu_hours"], "idle")
under = ["input_bound", "launch_or_small_batch", "communication_bound", "throttled", "hung_collective"]
close(cost["underuse"]["gpu_hours"], sum(by[u]["gpu_hours"] for u in under), "underuse")
# A verdict has time exactly when some GPU had it in a window; the judged time is whole windows.
for vname, line in by.items():
    had = sum(g["windows"].get(vname, 0) for g in summary["gpus"])
    if vname != "unjudged" and (line["gpu_hours"] > 0) != (had > 0):
        fail(f"cost: {vname} has {line['gpu_hours']} GPU-hours but {had} windows")
judged_h = sum(n for g in summary["gpus"] for n in g["windows"].values()) * summary["window_ms"] / 3.6e6
if not any(k[1] is not None for k in [(v["gpu"]["index"], v["gpu_instance_id"]) for v in live_verdicts_all]):
    close(cost["gpu_hours"] - by["unjudged"]["gpu_hours"], judged_h, "judged time = windows x window")
sm = [1 - g["gpm"]["sm_active_ratio"] for s in samples for g in s["gpus"]
      if g["state"] == "ok" and g.get("gpm") and g["gpm"].get("sm_active_ratio") is not None]
if sm:
    close(cost["sm_inactive_share"], sum(sm) / len(sm), "SM inactive share")
elif cost["sm_inactive_share"] is not None:
    fail("cost: an SM inactive share without GPM samples")
if not summary["judged"]:
    fail(f"nothing judged: {summary['reason']}")
checked = 0
seen = {}
for v in verdicts:
    key = (v["gpu"]["index"], v["gpu_instance_id"])
    seen.setdefault(key, []).append(v)
    for k in ("gpu", "window", "verdict", "confidence", "evidence", "fix", "reasons", "straggler_gpu"):
        if k not in v:
            fail(f"verdict without {k}")
    if not v["evidence"]:
        fail("verdict without evidence")

expected_keys = set()
job_expects = []
for line in open(trace):
    if not line.startswith("expect "):
        continue
    kv = dict(w.split("=", 1) if "=" in w else (w, "") for w in line.split()[1:])
    if "job" in kv:
        job_expects.append(kv)
        continue
    if "exit" in kv:
        if live_rc != int(kv["exit"]):
            fail(f"exit {live_rc}, expected {kv['exit']}")
        checked += 1
        continue
    if "lost" in kv:
        lost = sorted(l["index"] for l in summary["lost_gpus"])
        if lost != sel(kv["lost"], ngpus):
            fail(f"lost_gpus {lost}, expected {kv['lost']}")
        # A lost GPU carries doctor's finding for it, in the summary and in every sample that found it lost.
        for l in summary["lost_gpus"]:
            if l.get("code") != "gpu.lost":
                fail(f"lost GPU {l['index']}: code {l.get('code')!r}, expected 'gpu.lost'")
        for s in samples:
            for g in s["gpus"]:
                if (g.get("code") == "gpu.lost") != (g["state"] == "lost"):
                    fail(f"GPU {g['gpu']['index']} state {g['state']} with code {g.get('code')!r}")
        checked += 1
        continue
    if "note" in kv:
        if not any(kv["note"].replace("_", " ") in n for n in summary["notes"]):
            fail(f"no summary note containing {kv['note']!r}: {summary['notes']}")
        checked += 1
        continue
    if "sample" in kv:  # sample=KEY:OP:VALUE on every ok sample of the selected GPUs
        key, op, val = kv["sample"].split(":")
        for s in samples:
            for g in s["gpus"]:
                if g["gpu"]["index"] not in sel(kv["gpu"], ngpus) or g["state"] != "ok":
                    continue
                x = g.get(key)
                if op == "null" and x is not None:
                    fail(f"GPU {g['gpu']['index']} {key}={x}, expected null")
                if op == "le" and (x is not None and x > float(val)):
                    fail(f"GPU {g['gpu']['index']} {key}={x} > {val}")
                if op == "eq" and x != json.loads(val):
                    fail(f"GPU {g['gpu']['index']} {key}={x}, expected {val}")
        checked += 1
        continue
    if "state" in kv:  # state=gap:N at least N samples of the GPU in that state
        st, n = kv["state"].split(":")
        for i in sel(kv["gpu"], ngpus):
            c = sum(1 for s in samples if s["gpus"][i]["state"] == st)
            if c < int(n):
                fail(f"GPU {i}: {c} samples in state {st}, expected at least {n}")
        checked += 1
        continue
    inst = int(kv["instance"]) if "instance" in kv else None
    for i in sel(kv["gpu"], ngpus):
        key = (i, inst)
        expected_keys.add(key)
        got = seen.get(key, [])
        if "none" in kv:
            if got:
                fail(f"GPU {i}: expected no verdict, got {[v['verdict'] for v in got]}")
            checked += 1
            continue
        allowed = kv["verdict"].split("|")
        if not got:
            fail(f"GPU {i} instance {inst}: no verdict, expected {allowed[0]}")
        names = [v["verdict"] for v in got]
        if any(n not in allowed for n in names):
            fail(f"GPU {i} instance {inst}: verdicts {names}, expected only {allowed}")
        if allowed[0] not in names:
            fail(f"GPU {i} instance {inst}: verdicts {names} never {allowed[0]}")
        for v in got:
            if v["verdict"] != allowed[0]:
                continue
            if "confidence" in kv and v["confidence"] != kv["confidence"]:
                fail(f"GPU {i}: confidence {v['confidence']}, expected {kv['confidence']}")
            if "straggler" in kv:
                sg = v["straggler_gpu"]
                if (sg or {}).get("index") != int(kv["straggler"]):
                    fail(f"GPU {i}: straggler_gpu {sg}, expected GPU {kv['straggler']}")
            if "closest" in kv and v["evidence"].get("closest_rule") != kv["closest"]:
                fail(f"GPU {i}: closest_rule {v['evidence'].get('closest_rule')}, expected {kv['closest']}")
            if "reasons" in kv and sorted(v["reasons"]) != sorted(kv["reasons"].split(",")):
                fail(f"GPU {i}: reasons {v['reasons']}, expected {kv['reasons']}")
            # doctor's health codes: exactly those the line names (health=a,b), else none (key absent).
            want = sorted(kv["health"].split(",")) if "health" in kv else None
            if sorted(v.get("health_codes", [])) != (want or []) or ("health_codes" in v and not want):
                fail(f"GPU {i}: health_codes {v.get('health_codes')}, expected {kv.get('health', 'none')}")
        checked += 1
# No verdict for a GPU (or instance) the trace did not expect one for.
for key in seen:
    if key not in expected_keys:
        fail(f"unexpected verdict for GPU {key[0]} instance {key[1]}: {[v['verdict'] for v in seen[key]]}")
checked += check_jobs(summary, verdicts, job_expects, fail)
windows = summary["windows"]
print(f"{name}: ok ({len(samples)} samples, {windows} windows, {len(verdicts)} verdicts, {checked} expectations, replay identical)")
