#!/usr/bin/python3
# Stand-in for NVIDIA's nvidia-container-runtime (the simulated server's toolkit package; not NVIDIA code):
# an OCI runtime that Docker calls as it calls runc. In its legacy mode the real one adds the toolkit's
# prestart hook to the container's config.json when the container asks for GPUs (NVIDIA_VISIBLE_DEVICES set),
# then runs runc with the same arguments; so does this one. Every call's argv is logged to
# /sim/log/nvidia-container-runtime.log. VERSION is replaced when the package is built.
import json
import os
import sys

VERSION = "@VERSION@"
HOOK = "/usr/bin/nvidia-container-runtime-hook"
args = sys.argv[1:]
try:
    with open("/sim/log/nvidia-container-runtime.log", "a") as f:
        f.write(" ".join(args) + "\n")
except OSError:
    pass
if args in (["--version"], ["-v"]):
    print(f"NVIDIA Container Runtime version {VERSION}")
    sys.exit(0)
if "create" in args:
    bundle = "."
    for i, a in enumerate(args):
        if a in ("--bundle", "-b") and i + 1 < len(args):
            bundle = args[i + 1]
        elif a.startswith("--bundle="):
            bundle = a.split("=", 1)[1]
    path = os.path.join(bundle, "config.json")
    with open(path) as f:
        cfg = json.load(f)
    env = [e for e in cfg.get("process", {}).get("env", []) if e.startswith("NVIDIA_VISIBLE_DEVICES=")]
    hooks = cfg.setdefault("hooks", {}).setdefault("prestart", [])
    if env and env[-1] not in ("NVIDIA_VISIBLE_DEVICES=", "NVIDIA_VISIBLE_DEVICES=void") and \
            not any(h.get("path") == HOOK for h in hooks):
        hooks.append({"path": HOOK, "args": ["nvidia-container-runtime-hook", "prestart"]})
        with open(path, "w") as f:
            json.dump(cfg, f)
os.execvp("runc", ["runc"] + args)
