# shellcheck shell=bash
# The container half on the simulated server, shared by the scenarios that set Docker up
# (tests/integration/sim_containers.sh, the embedded-stack scenarios through stacks.sh): NVIDIA's registry as
# the stand-in engine serves it, and the checks that a converged host runs a container that sees every GPU.
# Source after lib.sh.

# sim_image_digest REF: the manifest digest the simulated registry gives REF.
sim_image_digest() { echo "sha256:$(printf 'gpuprep sim image %s' "$1" | sha256sum | cut -d' ' -f1)"; }

# sim_registry "REF ENV..." ...: /sim/dockerd-state.json of the current host (read by the stand-in engine when
# it starts and on every request): a registry holding each REF at sim_image_digest REF, its config's
# environment ENV... (no spaces in a value). An image whose environment sets PYTORCH_VERSION or
# NVIDIA_PYTORCH_VERSION (as NGC's PyTorch images do) gets the torch check's python (/sim/image/torch); any other image a python without torch
# (/sim/image/plain), so a torch check run on it fails as it would on the real image. The engine answers with
# version SIM_ENGINE_VERSION (default 24.0.7, the sim's docker.io).
sim_registry() {
  mkdir -p "$SIM_HOST/sim/image/torch" "$SIM_HOST/sim/image/plain"
  # torch.cuda counts the GPUs the container runtime handed in (nvidia-smi is the driver's, as the toolkit
  # mounts it into a container).
  cat >"$SIM_HOST/sim/image/torch/python" <<'SH'
#!/bin/sh
case "$1 $2" in *torch.cuda.device_count*) ;; *) echo "sim image: only the torch check is simulated" >&2; exit 2 ;; esac
out=$(nvidia-smi -L 2>/dev/null)
n=$(printf '%s\n' "$out" | grep -c '^GPU ')
[ "$n" -gt 0 ] || { echo "RuntimeError: No CUDA GPUs are available" >&2; exit 1; }
printf '%s %s\n' "$n" "$(printf '%s\n' "$out" | head -n 1 | sed 's/^GPU 0: \(.*\) (UUID.*/\1/')"
SH
  cat >"$SIM_HOST/sim/image/plain/python" <<'SH'
#!/bin/sh
echo "ModuleNotFoundError: No module named 'torch'" >&2
exit 1
SH
  chmod 0755 "$SIM_HOST/sim/image/torch/python" "$SIM_HOST/sim/image/plain/python"
  python3 - "$SIM_HOST/sim/dockerd-state.json" "$@" <<'PY' || sim_fail "writing the simulated registry"
import hashlib, json, os, sys
registry = {}
for spec in sys.argv[2:]:
    ref, *env = spec.split()
    h = lambda what: "sha256:" + hashlib.sha256(("gpuprep sim %s %s" % (what, ref)).encode()).hexdigest()
    registry[ref] = {
        "digest": "sha256:" + hashlib.sha256(("gpuprep sim image %s" % ref).encode()).hexdigest(),
        "id": h("config"),
        "layers": [29534055, 1048576000, 734003200],
        "env": ["PATH=/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"] + env,
        "bin": "/sim/image/torch" if any(e.startswith(("PYTORCH_VERSION=", "NVIDIA_PYTORCH_VERSION=")) for e in env)
               else "/sim/image/plain",
    }
state = {"version": os.environ.get("SIM_ENGINE_VERSION", "24.0.7"), "api_version": "1.43", "daemon_json": "/etc/docker/daemon.json",
         "store": "/var/lib/docker/images.json", "hook": "/usr/bin/nvidia-container-runtime-hook",
         "cdi_dirs": ["/etc/cdi", "/var/run/cdi"], "registry": registry}
json.dump(state, open(sys.argv[1], "w"), indent=1)
PY
}

# sim_check_daemon_json: /etc/docker/daemon.json parses and registers the nvidia runtime (not as the default).
sim_check_daemon_json() {
  check_eq "daemon.json registers the nvidia runtime, not as the default" "nvidia-container-runtime None" \
    "$(sim_run python3 -c 'import json; d=json.load(open("/etc/docker/daemon.json")); print(d["runtimes"]["nvidia"]["path"], d.get("default-runtime"))' 2>&1)"
}

# sim_check_pulled REF: the stand-in engine pulled REF through the Engine API once, and gpuprep recorded its
# digest.
sim_check_pulled() {
  local d
  d=$(sim_image_digest "$1")
  check_eq "the engine pulled $1 through the Engine API, once" 1 \
    "$(grep -c '"path": "/v1.43/images/create"' "$SIM_HOST/sim/log/dockerd-requests.jsonl" 2>/dev/null)"
  check "its digest is recorded" sim_run grep -qF "\": \"$d\"" /var/lib/gpuprep/images.json
}

# sim_check_container_gpus VERIFY_NAME GPUS [torch|no-torch]: the sim_gp verify run VERIFY_NAME ran nvidia-smi -L
# in a container through the engine and it listed all GPUS; torch: the torch check in the image counted them;
# no-torch: the image carries no PyTorch and verify ran no torch check.
sim_check_container_gpus() {
  local out=$SIM_DIR/$1.out
  check "nvidia-smi -L in a container lists all $2 GPUs" \
    grep -q "container_toolkit *ok *a container sees every GPU ($2, nvidia-smi -L)" "$out"
  case ${3:-torch} in
    torch) check "the torch check counts them and names them" grep -q "image *ok *torch in .* sees $2 GPUs (" "$out" ;;
    no-torch) check "an image without PyTorch gets no torch check" grep -q "image *skip *.* carries no PyTorch" "$out" ;;
  esac
  check "the containers ran through the stand-in engine" \
    grep -q '"path": "/v1.43/containers/create"' "$SIM_HOST/sim/log/dockerd-requests.jsonl"
}
