#!/usr/bin/python3
# Stand-in for NVIDIA's nvidia-container-runtime-hook (the simulated server's toolkit package; not NVIDIA
# code). dockerd registers its "nvidia" GPU driver (`--gpus`) only when this file is on PATH when the engine
# starts, and then runs it as an OCI prestart hook: `nvidia-container-runtime-hook prestart`, the container's
# state (bundle, pid) on stdin. The real hook reads NVIDIA_VISIBLE_DEVICES from the container's config.json
# and has nvidia-container-cli mount the driver's libraries, nvidia-smi and the device nodes of the chosen
# GPUs into the container's root. This one gives the container what the stand-in driver needs to answer
# there: nvidia-smi and libnvidia-ml (under their versioned names), and the GPU view under
# /run/nvidia-container-sim (the chosen GPUs' sysfs entries, the driver's version files), which the stand-in
# library reads inside a container. With no driver loaded it fails as nvidia-container-cli does.
# Every call is logged to /sim/log/nvidia-container-hook.log.
import json
import os
import shutil
import sys

VIEW = "run/nvidia-container-sim"


def log(line):
    try:
        with open("/sim/log/nvidia-container-hook.log", "a") as f:
            f.write(line + "\n")
    except OSError:
        pass


def fail(msg):
    log("error: " + msg)
    print("nvidia-container-cli: " + msg, file=sys.stderr)
    sys.exit(1)


def read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return ""


def main():
    log("argv: " + " ".join(sys.argv[1:]))
    if len(sys.argv) < 2 or sys.argv[1] != "prestart":
        return 0  # poststart, poststop: nothing to do, as the real hook
    state = json.load(sys.stdin)
    bundle = state["bundle"]
    with open(os.path.join(bundle, "config.json")) as f:
        cfg = json.load(f)
    root = cfg["root"]["path"]
    if not os.path.isabs(root):
        root = os.path.join(bundle, root)
    env = dict(e.split("=", 1) for e in cfg.get("process", {}).get("env", []) if "=" in e)
    visible = env.get("NVIDIA_VISIBLE_DEVICES")
    if visible is None or visible in ("", "void"):
        log("no NVIDIA_VISIBLE_DEVICES: nothing injected")
        return 0
    if not os.path.exists("/proc/driver/nvidia/version"):
        fail("initialization error: nvml error: driver not loaded")
    pci = "/sys/bus/pci/devices"
    gpus = sorted(d for d in os.listdir(pci)
                  if read(f"{pci}/{d}/vendor") == "0x10de" and read(f"{pci}/{d}/class").startswith("0x03"))
    if visible == "all":
        chosen = gpus
    elif visible == "none":
        chosen = []
    else:
        chosen = []
        for word in visible.split(","):
            if not word.isdigit() or int(word) >= len(gpus):
                fail(f"device error: {word}: unknown device")
            chosen.append(gpus[int(word)])
    view = os.path.join(root, VIEW)
    shutil.rmtree(view, ignore_errors=True)
    for d in os.listdir(pci):
        # every PCI function but the GPUs not handed in (NVSwitches and bridges answer the fabric calls)
        if d in gpus and d not in chosen:
            continue
        os.makedirs(f"{view}{pci}/{d}")
        for name in ("vendor", "device", "class"):
            if os.path.exists(f"{pci}/{d}/{name}"):
                shutil.copy(f"{pci}/{d}/{name}", f"{view}{pci}/{d}/{name}")
        if os.path.islink(f"{pci}/{d}/driver"):
            os.symlink(os.readlink(f"{pci}/{d}/driver"), f"{view}{pci}/{d}/driver")
        if os.path.exists(f"{pci}/{d}/vpd"):
            shutil.copy(f"{pci}/{d}/vpd", f"{view}{pci}/{d}/vpd")
    for f in ("/proc/driver/nvidia/version", "/sys/module/nvidia/version", "/run/gpuprep-sim/fabric-state"):
        if os.path.exists(f):
            os.makedirs(os.path.dirname(view + f), exist_ok=True)
            shutil.copy(f, view + f)
    # The driver's utility and compute pieces, under the names they were installed as (they report their
    # version from them).
    libdir = "/usr/lib/x86_64-linux-gnu"
    for lib in ("libnvidia-ml.so.1", "libcuda.so.1"):
        src = os.path.join(libdir, lib)
        if not os.path.exists(src):
            continue
        real = os.path.realpath(src)
        os.makedirs(root + libdir, exist_ok=True)
        shutil.copy(real, root + libdir + "/" + os.path.basename(real))
        link = root + libdir + "/" + lib
        if os.path.lexists(link):
            os.remove(link)
        os.symlink(os.path.basename(real), link)
    if os.path.exists("/usr/bin/nvidia-smi"):
        os.makedirs(root + "/usr/bin", exist_ok=True)
        shutil.copy("/usr/bin/nvidia-smi", root + "/usr/bin/nvidia-smi")
    log(f"container {state.get('id', '?')[:12]}: {len(chosen)} GPU(s) ({visible})")
    return 0


sys.exit(main())
