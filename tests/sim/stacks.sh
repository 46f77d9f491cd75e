# shellcheck shell=bash
# Scenario steps shared by the embedded-stack scenarios (tests/integration/sim_stacks_*.sh): an embedded
# default stack, through a site file that overrides only its repositories' addresses and keys
# (lib.sh: sim_site_file), applied to a bare simulated server and checked against what a real host needs:
# the stack's pins exactly although newer releases exist in NVIDIA's repository and in the distribution's,
# every package of every layer pinned and held, `apt-get upgrade` harmless, doctor clean, and the container
# half (containers.sh): Docker, the nvidia runtime, the image, a container that sees every GPU.
# Source after lib.sh.

# shellcheck source=tests/sim/containers.sh
source "${BASH_SOURCE[0]%/*}/containers.sh"

# sim_nvidia_installed: "PACKAGE VERSION" of every installed package from NVIDIA's repositories, sorted.
sim_nvidia_installed() {
  sim_inspect dpkg-query -W -f '${db:Status-Status} ${Package} ${Version}\n' 2>/dev/null |
    awk '$1 == "installed" && $2 ~ /^(nvidia-|libnvidia-|cuda-|libcudnn|libnccl)/ {print $2, $3}' | LC_ALL=C sort
}

# sim_pins: "PACKAGE VERSION PRIORITY" for each package gpuprep's apt preferences file pins by version, sorted.
sim_pins() {
  sim_inspect cat /etc/apt/preferences.d/gpuprep 2>/dev/null | awk '
    /^Package:/ { n = split($0, a, /[ \t]+/); delete names; for (i = 2; i <= n; i++) names[a[i]] = 1; v = "" }
    /^Pin:[ \t]+version[ \t]/ { v = $3 }
    /^Pin-Priority:/ { for (p in names) print p, v, $2; delete names }' | LC_ALL=C sort
}

sim_holds() { sim_inspect apt-mark showhold | LC_ALL=C sort; }

# sim_check_pinned_and_held WHAT [EXCLUDE_REGEX]: every installed NVIDIA package (but those matching
# EXCLUDE_REGEX: what an earlier stack left and this one does not manage) is held and pinned at its installed
# version above priority 1000, apt's candidate is that version (the pin works for apt itself), and no linux-*
# package is pinned or held.
sim_check_pinned_and_held() {
  local installed pins holds missing_hold missing_pin p v cand bad=""
  installed=$(sim_nvidia_installed | grep -Ev "${2:-^$}")
  pins=$(sim_pins)
  holds=$(sim_holds)
  missing_hold=$(comm -23 <(cut -d' ' -f1 <<<"$installed") <(echo "$holds"))
  check_eq "$1: every installed NVIDIA package is held (apt-mark showhold)" "" "$missing_hold"
  missing_pin=$(comm -23 <(echo "$installed") <(awk '$3 > 1000 {print $1, $2}' <<<"$pins" | LC_ALL=C sort))
  check_eq "$1: every one is pinned at its installed version, priority > 1000 (/etc/apt/preferences.d/gpuprep)" "" "$missing_pin"
  check_eq "$1: no linux-* package pinned or held" "" "$(grep -E '^linux-' <<<"$pins$(printf '\n')$holds")"
  # shellcheck disable=SC2046  # one package name per word
  cand=$(sim_inspect apt-cache policy $(cut -d' ' -f1 <<<"$installed") | awk '/^[^ ]/ {sub(/:$/, "", $1); p = $1} /^  Candidate:/ {print p, $2}' | LC_ALL=C sort)
  while read -r p v; do
    [[ -n $p ]] || continue
    [[ $(grep "^$p " <<<"$cand") == "$p $v" ]] || bad+="$p: candidate $(grep "^$p " <<<"$cand" | cut -d' ' -f2), installed $v; "
  done <<<"$installed"
  check_eq "$1: apt's candidate for each is the installed version (the pins hold against newer releases)" "" "$bad"
}

# sim_check_versions WHAT "PACKAGE VERSION"...: the installed versions, exactly.
sim_check_versions() {
  local what=$1 want got inst
  shift
  want=$(printf '%s\n' "$@" | LC_ALL=C sort)
  # One session for all (dpkg-query prints only the installed ones; a missing one shows as "PKG ").
  inst=$(sim_inspect dpkg-query -W -f '${db:Status-Status} ${Package} ${Version}\n' "${@%% *}" 2>/dev/null |
    awk '$1 == "installed" {print $2, $3}')
  got=$(for pv in "$@"; do
    p=${pv%% *}
    printf '%s %s\n' "$p" "$(awk -v p="$p" '$1 == p {print $2}' <<<"$inst")"
  done | LC_ALL=C sort)
  check_eq "$what" "$(tr '\n' ';' <<<"$want")" "$(tr '\n' ';' <<<"$got")"
}

# sim_doctor_clean MANIFEST LAYER...: doctor --json reports none of LAYERs as warn or fail.
sim_doctor_clean() {
  local m=$1 layers
  shift
  sim_gp doctor --manifest "$m" doctor --json
  layers=$(python3 - "$SIM_DIR/doctor.out" "$@" <<'PY' 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
want = sys.argv[2:]
by = {l["name"]: l for l in d["layers"]}
out = []
for name in want:
    l = by.get(name)
    if l is None:
        out.append(name + "=missing")
    elif l["status"] in ("warn", "fail"):
        msgs = "; ".join(f["status"] + ": " + f["message"] for f in l.get("findings", []) if f["status"] in ("warn", "fail"))
        out.append(name + "=" + l["status"] + " (" + (msgs or l.get("detail", "")) + ")")
print("\n".join(out))
PY
)
  check_eq "doctor: no warn or fail on the layers gpuprep installed ($*)" "" "$layers"
}

# sim_gp_hash STACK: the content hash this gpuprep holds for embedded STACK (manifest list --json, run outside
# the sim: listing reads no system state it could change).
sim_gp_hash() {
  "$SIM_DIR/common/bin/gpuprep" --root "$SIM_DIR/common" manifest list --json 2>/dev/null |
    python3 -c 'import json,sys; print([s["content_hash"] for s in json.load(sys.stdin)["stacks"] if s["name"] == sys.argv[1]][0])' "$1"
}

# sim_registry_embedded: the simulated NVIDIA registry (containers.sh) holding every image an embedded stack
# names, each with the environment its config sets: NGC PyTorch 25.12 "based on CUDA 13.1.0"
# (NVIDIA_PYTORCH_VERSION, as NGC's PyTorch images set it), NVIDIA's CUDA 12.9.1 cuDNN runtime image (no PyTorch).
sim_registry_embedded() {
  sim_registry "nvcr.io/nvidia/pytorch:25.12-py3 CUDA_VERSION=13.1.0 NVIDIA_PYTORCH_VERSION=25.12" \
    "nvcr.io/nvidia/cuda:12.9.1-cudnn-runtime-ubuntu22.04 CUDA_VERSION=12.9.1"
}

# _sim_stack_selection: the layer selections of apply and verify (SIM_STACK_APPLY_SEL, SIM_STACK_VERIFY_SEL):
# none, or with SIM_STACK_APT_ONLY=1 the stack's apt layers alone (no Docker engine, toolkit or image), as for a
# stack whose container half another scenario of the same script already ran.
_sim_stack_selection() {
  SIM_STACK_APPLY_SEL=()
  SIM_STACK_VERIFY_SEL=()
  if [[ ${SIM_STACK_APT_ONLY:-0} == 1 ]]; then
    SIM_STACK_APPLY_SEL=(--skip "docker,container_toolkit,image")
    SIM_STACK_VERIFY_SEL=(--only "driver,fabricmanager,cuda,cudnn,nccl")
  fi
}

# sim_stack_converge NAME MANIFEST: plan, then apply -> exit 3 -> simulated reboot -> resume -> verify 0.
# The simulated registry serves the embedded stacks' images (sim_registry_embedded); with SIM_STACK_APT_ONLY=1
# only the apt layers are applied and verified (_sim_stack_selection).
sim_stack_converge() {
  local name=$1 m=$2 rc
  _sim_stack_selection
  [[ ${SIM_STACK_APT_ONLY:-0} == 1 ]] || sim_registry_embedded
  sim_snapshot "$name-bare"
  sim_gp "$name-plan" --manifest "$m" plan "${SIM_STACK_APPLY_SEL[@]}"
  check_rc "plan" 0 "$name-plan"
  check_eq "plan changed nothing" "" "$(sim_diff "$name-bare")"
  sim_gp "$name-apply" --manifest "$m" apply --yes "${SIM_STACK_APPLY_SEL[@]}"
  check_rc "apply on the bare server stops for the reboot" 3 "$name-apply"
  check_eq "one apt-get install transaction" 1 "$(sim_log apt-get | grep -c ' install ')"
  rc=0
  sim_reboot || rc=$?
  check_eq "the resume unit converges after the simulated reboot" 0 "$rc"
  sim_gp "$name-verify" --manifest "$m" verify "${SIM_STACK_VERIFY_SEL[@]}"
  check_rc "verify" 0 "$name-verify"
}

# sim_check_upgrade_harmless MANIFEST: `apt-get upgrade -y` moves the kernel metas (installed old before
# apply) and no NVIDIA package; verify still passes (the apt layers alone with SIM_STACK_APT_ONLY=1).
sim_check_upgrade_harmless() {
  local before after
  before=$(sim_nvidia_installed)
  sim_run env DEBIAN_FRONTEND=noninteractive apt-get -y -q upgrade >"$SIM_DIR/upgrade.out" 2>&1
  check_eq "apt-get upgrade -y exits 0" 0 "$?"
  after=$(sim_nvidia_installed)
  check_eq "apt-get upgrade -y changed no NVIDIA package" "" "$(diff <(echo "$before") <(echo "$after") | grep '^[<>]')"
  check_eq "but it did upgrade the kernel metas (not pinned, not held)" "5.15.0.160.160 5.15.0.160.160" \
    "$(sim_inspect dpkg-query -W -f '${Version} ' linux-image-generic linux-headers-generic | sed 's/ $//')"
  _sim_stack_selection
  sim_gp upgrade-verify --manifest "$1" verify "${SIM_STACK_VERIFY_SEL[@]}"
  check_rc "verify after the upgrade" 0 upgrade-verify
}

# sim_old_kernel_metas: installs the distribution's older kernel metas (jammy), as a host would have them.
sim_old_kernel_metas() {
  sim_run env DEBIAN_FRONTEND=noninteractive apt-get -y -qq install linux-image-generic=5.15.0.25.27 \
    linux-headers-generic=5.15.0.25.27 >/dev/null 2>&1 || sim_fail "installing the old kernel metas"
  : >"$SIM_HOST/sim/log/apt-get.log"
}

# sim_preinstall_docker: the distribution's docker.io installed before gpuprep runs (an engine already there),
# started by its package.
sim_preinstall_docker() {
  sim_run env DEBIAN_FRONTEND=noninteractive apt-get -y -qq install docker.io >/dev/null 2>&1 ||
    sim_fail "installing docker.io before gpuprep"
  sim_run test -S /var/run/docker.sock || sim_fail "the pre-installed engine does not answer"
  : >"$SIM_HOST/sim/log/commands.log"
}

# sim_check_stack_containers NAME: after sim_stack_converge NAME with an embedded stack (its docker: section:
# the distribution's docker.io, runtime mode): the docker layer installed docker.io from the distribution's
# archive in the one transaction, enabled (SIM_DOCKER=install, the default) or left the pre-installed
# engine alone (SIM_DOCKER=preinstalled); daemon.json registers the nvidia runtime; the stack's image
# (SIM_IMAGE) pulled once at its digest; verify's container lists every GPU (SIM_GPUS, default 8) and, for a
# PyTorch image (SIM_IMAGE_TORCH=torch, the default; no-torch otherwise), torch counts them.
sim_check_stack_containers() {
  local name=$1 origin
  [[ -n ${SIM_IMAGE:-} ]] || sim_fail "sim_check_stack_containers: set SIM_IMAGE to the stack's image"
  origin=$(sim_inspect apt-cache policy docker.io | awk '/^ \*\*\* / {getline; print $2, $3; exit}')
  check_eq "docker.io is installed from the distribution's archive (jammy)" "$SIM_URL/ubuntu jammy/main" "$origin"
  if [[ ${SIM_DOCKER:-install} == preinstalled ]]; then
    check "plan: the engine already there is left alone" grep -q 'docker .*an existing engine is left as it is' "$SIM_DIR/$name-plan.out"
    check_eq "docker.io is not in gpuprep's transaction" 0 "$(sim_log apt-get | grep ' install ' | grep -c 'docker\.io')"
    check "the engine is not enabled or started again" sh -c "! grep -q 'systemctl enable --now docker' '$SIM_HOST/sim/log/commands.log'"
  else
    check_eq "docker.io joins gpuprep's one transaction, by name" 1 "$(sim_log apt-get | grep ' install ' | grep -c ' docker\.io')"
  fi
  check "the engine is enabled (started at boot)" sim_inspect test -L /etc/systemd/system/multi-user.target.wants/docker.service
  check "the engine answers on its socket after the reboot" sim_run test -S /var/run/docker.sock
  sim_check_daemon_json
  check "Docker reloaded to read it (SIGHUP), not restarted" sh -c \
    "grep -qx 'systemctl reload docker.service' '$SIM_HOST/sim/log/commands.log' && ! grep -q 'systemctl restart docker' '$SIM_HOST/sim/log/commands.log'"
  sim_check_pulled "$SIM_IMAGE"
  sim_check_container_gpus "$name-verify" "${SIM_GPUS:-8}" "${SIM_IMAGE_TORCH:-torch}"
}

# sim_stack_scenario STACK HOST_DESCRIPTION "DOCTOR_LAYERS" CHECK...: the whole scenario for one embedded stack
# on a new host (the caller sets the host knobs: SIM_GPU, SIM_NVSWITCH...; and SIM_IMAGE, SIM_IMAGE_TORCH,
# SIM_DOCKER for the container half): listed by `manifest list`, site file, old kernel metas,
# plan/apply/reboot/resume/verify, the container half (sim_check_stack_containers; left out with
# SIM_STACK_APT_ONLY=1, which applies and verifies the apt layers alone), then each CHECK
# ("DESCRIPTION|PKG VER|PKG VER..."): the installed versions exactly; pinned and held; doctor clean on
# DOCTOR_LAYERS; apt-get upgrade harmless.
sim_stack_scenario() {
  local stack=$1 host=$2 layers=$3 c site
  shift 3
  sim_section "$stack on $host, kernel metas from the distribution installed"
  sim_new_host
  # The registry outlives a host: its log counts this host's pulls only (sim_check_pulled), so that a script
  # may run one scenario after another.
  if [[ -f $SIM_DIR/registry/registry.log ]]; then : >"$SIM_DIR/registry/registry.log"; fi
  sim_gp list manifest list
  check_rc "manifest list" 0 list
  check "it lists $stack" grep -qw -- "$stack" "$SIM_DIR/list.out"
  site=$(sim_site_file "$stack")
  if [[ ${SIM_DOCKER:-install} == preinstalled ]]; then
    sim_registry_embedded
    sim_preinstall_docker
  fi
  sim_old_kernel_metas
  sim_stack_converge "${stack%%-*}" "$site"

  if [[ ${SIM_STACK_APT_ONLY:-0} != 1 ]]; then
    sim_section "the container half: Docker, the nvidia runtime, the image, a container that sees every GPU"
    sim_check_stack_containers "${stack%%-*}"
  fi

  sim_section "the stack's pins, exactly (newer releases are in NVIDIA's repository and the distribution's)"
  for c in "$@"; do
    local what=${c%%|*} rest=${c#*|} pvs=()
    IFS='|' read -ra pvs <<<"$rest"
    sim_check_versions "$what" "${pvs[@]}"
  done

  sim_section "pinned and held"
  sim_check_pinned_and_held "$stack"

  sim_section "doctor"
  # shellcheck disable=SC2086  # a list of layer names
  sim_doctor_clean "$site" $layers

  sim_section "apt-get upgrade afterwards"
  sim_check_upgrade_harmless "$site"
}

# sim_check_hgx_fabric NVLSM_VERSION: the NVLink fabric of an HGX Blackwell baseboard after a stack with NVLSM
# converged: the umad library and the kernel's extra modules installed by name and never pinned or held, NVLSM
# pinned at NVLSM_VERSION and held, ib_umad listed for every boot and loaded, Fabric Manager and NVLSM running,
# NVML's fabric completed on every GPU, and doctor's fabricmanager findings (doctor.out) saying so.
sim_check_hgx_fabric() {
  local k
  k=$(uname -r)
  # shellcheck disable=SC2016  # dpkg-query's format, not the shell's
  check_eq "the umad library and the kernel's extra modules installed by name, from the distribution" \
    "libibumad3 39.0-1;linux-modules-extra-$k installed" \
    "$(sim_inspect dpkg-query -W -f '${Package} ${Version}\n' libibumad3 | tr '\n' ';')$(sim_inspect dpkg-query -W -f '${Package} ${db:Status-Status}' "linux-modules-extra-$k")"
  check_eq "NVLSM pinned at the stack's version and held" "nvlsm $1 held" \
    "$(sim_pins | awk '$1 == "nvlsm" {printf "%s %s", $1, $2}')$(sim_holds | grep -qx nvlsm && echo ' held')"
  check_eq "neither the umad library nor a kernel package is pinned or held" "" \
    "$(sim_pins | awk '$1 ~ /^(libibumad3|linux-)/'; sim_holds | grep -E '^(libibumad3|linux-)')"
  check_eq "ib_umad listed for every boot" "ib_umad" "$(sim_inspect cat /etc/modules-load.d/gpuprep-ib_umad.conf)"
  check_eq "ib_umad loaded (after the reboot, from modules-load.d)" yes "$(sim_inspect test -d /sys/module/ib_umad && echo yes)"
  check_eq "Fabric Manager and NVLSM run" "nv-fabricmanager nvlsm" \
    "$(sim_run sh -c 'pgrep -f "/usr/bin/[n]v-fabricmanager -c" >/dev/null && printf "nv-fabricmanager "; pgrep -f "/[n]vlsm" >/dev/null && printf nvlsm')"
  check_eq "NVML: the fabric completed on every GPU, status success" "8 GPUs: 0 3 0" "$(sim_fabric | sed 's/ |.*//')"
  check "doctor: the bridges found from their VPD, NVLSM at the stack's version, the fabric completed" python3 -c '
import json, sys
d = {l["name"]: l for l in json.load(open(sys.argv[1]))["layers"]}
codes = {f["code"] for f in d["fabricmanager"]["findings"]}
want = {"fabricmanager.hgx-blackwell", "fabricmanager.nvlsm-match", "fabricmanager.ib-umad", "fabricmanager.fabric-completed"}
sys.exit(0 if want <= codes else "missing: %s" % sorted(want - codes))' "$SIM_DIR/doctor.out"
}
