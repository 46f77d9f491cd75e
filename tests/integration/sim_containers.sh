#!/usr/bin/env bash
# ctest-labels: sim
# shellcheck disable=SC2034  # SIM_RC is set here and read by check_rc (tests/sim/lib.sh)
# The container half on the simulated server (tests/sim): a bare Ubuntu 22.04 server with 8 H100 reaches
# "a container sees every GPU" through `gpuprep apply` alone: the driver (exit 3, reboot, the resume unit
# finishes), Ubuntu's docker.io (its engine is the stand-in Engine API), the toolkit's four packages pinned
# and held, the nvidia runtime added to an admin's daemon.json with every other key kept (and "runtimes":
# null handled; the file is a link configuration management made, edited through the link), Docker reloaded
# (SIGHUP), the image pulled through the Engine API at its pinned digest; then
# verify runs nvidia-smi -L and the torch check in a container, doctor reads the image's CUDA from the image,
# and a second apply changes nothing.
# Usage: bash sim_containers.sh <gpuprep> <source-dir> <build-dir>
set -uo pipefail
GPUPREP=$1
SRC=$2
source "$SRC/tests/sim/lib.sh"
source "$SRC/tests/sim/containers.sh"
sim_require
sim_init "$GPUPREP" "$SRC" "${3:-}"
M=(--manifest /sim/containers.yaml)
IMAGE=nvcr.io/nvidia/pytorch:23.10-py3
D=$(sim_image_digest "$IMAGE")

sim_new_host
# The stack: the simulated server's, with the toolkit from its own repository (1.19.1, resolved from the index:
# 1.17.8 and 1.20.0 sit beside it), Ubuntu's Docker and a digest-pinned image whose CUDA comes from the image.
python3 - "$SIM_HOST/sim/stack.yaml" "$SIM_HOST/sim/containers.yaml" "$D" "$SIM_URL" "$SIM_CTK_KEY_FPR" <<'PY'
import sys
src, dst, digest, url, fpr = sys.argv[1:]
s = open(src).read()
tk = "\n".join(["container_toolkit:", "  version: 1.19.1", "  packages:"] +
               ["    - {name: %s}" % n for n in
                ("nvidia-container-toolkit", "nvidia-container-toolkit-base", "libnvidia-container-tools",
                 "libnvidia-container1")]) + "\n"
assert "container_toolkit:\n  enabled: false\n" in s
s = s.replace("container_toolkit:\n  enabled: false\n", tk)
repo = ("  - name: nvidia-container-toolkit\n    url: %s/nvidia-container-toolkit/\n"
        "    keyring_url: %s/nvidia-container-toolkit.gpg\n"
        "    keyring_path: /usr/share/keyrings/nvidia-container-toolkit-keyring.gpg\n"
        "    key_fingerprint: %s\n"
        "    list_path: /etc/apt/sources.list.d/nvidia-container-toolkit.list\n" % (url, url, fpr))
assert "\ndriver:" in s
s = s.replace("\ndriver:", repo + "\ndriver:", 1)
s = s.replace("  cuda_unknown_reason: \"not known (as in the embedded stack)\"\n",
              "  cuda_unknown_reason: \"read from the image's CUDA_VERSION\"\n  digest: \"%s\"\n" % digest)
s = s.replace("\nworkload:", "\ndocker:\n  engine: docker.io\n  gpu_access: runtime\n\nworkload:")
s = s.replace("name: sim-stack", "name: sim-containers")
open(dst, "w").write(s)
PY
# NVIDIA's registry, as the stand-in engine serves it: one image, its config's environment as NGC sets it.
sim_registry "$IMAGE CUDA_VERSION=12.2.2.009 CUDA_DRIVER_VERSION=535.104.05 NVIDIA_REQUIRE_CUDA=cuda>=9.0 NVIDIA_PYTORCH_VERSION=23.10"
# An admin's daemon.json, with keys to keep and "runtimes": null, managed by configuration management
# elsewhere in /etc and linked into place (as configuration management tools do).
sim_run sh -c 'mkdir -p /etc/docker /etc/cm/docker && printf "%s\n" "{\"log-driver\": \"json-file\", \"log-opts\": {\"max-size\": \"10m\", \"max-file\": \"3\"}, \"runtimes\": null, \"features\": {\"buildkit\": true}, \"data-root\": \"/var/lib/docker\"}" >/etc/cm/docker/daemon.json && ln -s ../cm/docker/daemon.json /etc/docker/daemon.json'
sim_snapshot bare

sim_section "a docker package named like an apt option: refused where the stack is read, nothing runs"
# apt-get reads a word starting with '-' as an option: -oDpkg::Pre-Invoke::=... runs a shell command as root.
python3 - "$SIM_HOST/sim/containers.yaml" "$SIM_HOST/sim/hostile.yaml" <<'PY'
import sys
s = open(sys.argv[1]).read()
old = "docker:\n  engine: docker.io\n"
assert old in s
open(sys.argv[2], "w").write(s.replace(old, old + '  packages:\n    - {name: "-oDpkg::Pre-Invoke::=touch${IFS}/PWNED"}\n'))
PY
sim_snapshot hostile
apt0=$(sim_count apt-get)
line=$(grep -n PWNED "$SIM_HOST/sim/hostile.yaml" | cut -d: -f1)
why='"-oDpkg::Pre-Invoke::=touch${IFS}/PWNED" is not a Debian package name ([a-z0-9][a-z0-9+.-]+)'
sim_gp hostile-validate manifest validate /sim/hostile.yaml
check_rc "manifest validate refuses it" 2 hostile-validate
check_eq "one line: where, and why" "gpuprep: error: /sim/hostile.yaml:$line:14: $why" "$(sim_err hostile-validate)"
sim_gp hostile-apply --manifest /sim/hostile.yaml apply --yes
check_rc "apply refuses it" 2 hostile-apply
check_eq "apply's error is the same line" "gpuprep: error: /sim/hostile.yaml:$line:14: $why" "$(sim_err hostile-apply | tail -n 1)"
check_eq "no apt-get ran" "$apt0" "$(sim_count apt-get)"
check "no shell command ran through apt" sim_inspect test ! -e /PWNED
check_eq "nothing changed" "" "$(sim_diff hostile)"

sim_section "plan: Docker, the toolkit, daemon.json (with its diff), the image"
sim_gp plan "${M[@]}" plan
check_rc "plan" 0 plan
# Offline (no lists for the repositories yet): the upstream pins; apply resolves the revisions first.
check "the toolkit joins the one transaction, pinned; docker.io by name" grep -qF " 'nvidia-container-toolkit=1.19.1-*' 'nvidia-container-toolkit-base=1.19.1-*' 'libnvidia-container-tools=1.19.1-*' 'libnvidia-container1=1.19.1-*' docker.io" "$SIM_DIR/plan.out"
check "daemon.json's diff is shown" grep -q '^       + *"nvidia": {' "$SIM_DIR/plan.out"
check "the image is pulled pinned by digest" grep -qF "pull nvcr.io/nvidia/pytorch:23.10-py3@$D" "$SIM_DIR/plan.out"
check_eq "plan changed nothing" "" "$(sim_diff bare)"

sim_section "apply on the bare server -> reboot -> the resume unit finishes"
sim_gp apply1 "${M[@]}" apply --yes
check_rc "first apply stops for the driver's reboot" 3 apply1
check_eq "one apt-get install transaction" 1 "$(sim_log apt-get | grep -c ' install ')"
check "Docker is running (its package started it)" sim_run test -S /var/run/docker.sock
sim_reboot
rc=$?
check_eq "resume after the reboot converges" 0 "$rc"
check "journal says done" sim_run grep -q '"state": *"done"' /var/lib/gpuprep/journal.json
check_eq "docker.io and the toolkit installed" \
  "docker.io libnvidia-container-tools libnvidia-container1 nvidia-container-toolkit nvidia-container-toolkit-base" \
  "$(sim_run dpkg-query -W -f '${Package}\n' docker.io nvidia-container-toolkit nvidia-container-toolkit-base libnvidia-container-tools libnvidia-container1 | sort | tr '\n' ' ' | sed 's/ $//')"
check_eq "the toolkit's packages are held" 4 "$(sim_run apt-mark showhold | grep -c container)"
keys=$(sim_run python3 -c 'import json; d=json.load(open("/etc/docker/daemon.json")); print(" ".join(d), "|", " ".join(d["log-opts"]), "|", d["runtimes"]["nvidia"]["path"], d["features"]["buildkit"])')
check_eq "daemon.json: every key kept in order, the nvidia runtime added" \
  "log-driver log-opts runtimes features data-root | max-size max-file | nvidia-container-runtime True" "$keys"
check_eq "daemon.json is still the link configuration management made" ../cm/docker/daemon.json \
  "$(sim_run readlink /etc/docker/daemon.json)"
check "the link's target got the runtime" sim_run grep -q nvidia-container-runtime /etc/cm/docker/daemon.json
check "the replaced file is kept as a backup beside the target" \
  sim_run grep -q '"runtimes": null' /etc/cm/docker/daemon.json.gpuprep-bak
check_eq "and nothing else is left in /etc/docker" daemon.json "$(sim_inspect ls -A /etc/docker)"
check "Docker reloaded, not restarted" grep -qx 'systemctl reload docker.service' "$SIM_HOST/sim/log/commands.log"
check "never restarted" sh -c "! grep -q 'systemctl restart docker' '$SIM_HOST/sim/log/commands.log'"
sim_check_pulled "$IMAGE"
check "recorded for the digest-pinned reference" sim_run grep -qF "\"$IMAGE@$D\": \"$D\"" /var/lib/gpuprep/images.json

sim_section "a container sees every GPU"
sim_gp verify "${M[@]}" verify
check_rc "verify" 0 verify
sim_check_container_gpus verify 8 torch
sim_gp doctor "${M[@]}" doctor --json
img=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); l=[x for x in d["layers"] if x["name"]=="image"][0]; print(l["found"], "|", l["detail"])' "$SIM_DIR/doctor.out" 2>&1)
check "doctor: the image's digest and its own CUDA_VERSION" grep -q "^$D | .*the image's CUDA_VERSION 12.2.2.009" <<<"$img"

sim_section "a second apply changes nothing"
sim_snapshot converged
apt0=$(sim_count apt-get)
cmd0=$(sim_count commands)
sim_gp apply2 "${M[@]}" apply --yes
check_rc "re-apply" 0 apply2
check_eq "stdout" "nothing to do: the host matches stack sim-containers" "$(sim_out apply2)"
check_eq "no apt-get call" "$apt0" "$(sim_count apt-get)"
check_eq "no recorded command (no reload)" "$cmd0" "$(sim_count commands)"
check_eq "no file changed outside gpuprep's log and journal" "" "$(sim_diff converged)"
check_eq "nothing pulled again" 1 "$(grep -c '"path": "/v1.43/images/create"' "$SIM_HOST/sim/log/dockerd-requests.jsonl")"

sim_section "apply --only L, for every layer: no other layer's hold or pin changes"
# apt-mark showhold, and the stanzas of the pins file text on stdin, of every package that SKIP (a regex; ""
# = none) does not match.
holds_except() { sim_inspect apt-mark showhold | grep -Ev "${1:-^$}" | LC_ALL=C sort; }
pins_except() {
  awk -v RS= -v skip="${1:-^$}" '{ p = ""; n = split($0, l, "\n")
    for (i = 1; i <= n; i++) if (l[i] ~ /^Package: /) p = substr(l[i], 10)
    if (p == "" || p !~ skip) print $0 "\n" }'
}
pins_file() { sim_inspect cat /etc/apt/preferences.d/gpuprep; }
holds0=$(holds_except)
prefs0=$(pins_file)
check "the converged host holds the driver, CUDA, cuDNN, NCCL and the toolkit (9 packages or more)" \
  test "$(wc -l <<<"$holds0")" -ge 9
check "each pin names its layer" grep -q '^Explanation: gpuprep layers: container_toolkit$' <<<"$prefs0"
for L in driver fabricmanager cuda cudnn nccl docker container_toolkit image; do
  sim_gp "only-$L" "${M[@]}" apply --yes --only "$L"
  check_rc "apply --only $L on the converged host" 0 "only-$L"
  check_eq "--only $L: apt-mark showhold byte for byte as before" "$holds0" "$(holds_except)"
  check_eq "--only $L: the pins file byte for byte as before" "$prefs0" "$(pins_file)"
  check "--only $L: it says which layers it left alone" grep -q "^left alone: .*(not selected: their packages, holds and pins stay as they are)" "$SIM_DIR/only-$L.out"
done
TK='^(nvidia-container-toolkit|nvidia-container-toolkit-base|libnvidia-container-tools|libnvidia-container1)$'
sim_run apt-mark unhold nvidia-container-toolkit nvidia-container-toolkit-base libnvidia-container-tools libnvidia-container1 >/dev/null
sim_gp only-tk "${M[@]}" apply --yes --only container_toolkit
check_rc "apply --only container_toolkit with the toolkit's holds gone" 0 only-tk
check_eq "the toolkit's four packages are held again" 4 "$(sim_inspect apt-mark showhold | grep -cE "$TK")"
check_eq "every other layer's holds as before" "$(grep -Ev "$TK" <<<"$holds0")" "$(holds_except "$TK")"
check_eq "every other layer's pins as before" "$(pins_except "$TK" <<<"$prefs0")" "$(pins_file | pins_except "$TK")"
check "and those are the driver's, CUDA's, cuDNN's and NCCL's" grep -q '^Explanation: gpuprep layers: driver$' <<<"$(pins_file | pins_except "$TK")"
check_eq "the whole pins file as before" "$prefs0" "$(pins_file)"
sim_gp only-verify "${M[@]}" verify
check_rc "verify afterwards (every layer still held and pinned)" 0 only-verify

sim_section "a daemon.json linked to a file outside /etc: refused, exit 2, nothing changed"
sim_run sh -c 'mkdir -p /srv/cm && printf "{\"log-driver\": \"journald\"}\n" >/srv/cm/daemon.json && ln -sfn /srv/cm/daemon.json /etc/docker/daemon.json'
sim_snapshot outside
sim_gp outside "${M[@]}" apply --yes
check_rc "apply refuses the link" 2 outside
check_eq "one line naming the link and its target" \
  "gpuprep: error: /etc/docker/daemon.json is a symbolic link to /srv/cm/daemon.json, outside /etc: gpuprep edits a linked system file only when the link stays inside /etc (put the file itself at /etc/docker/daemon.json, or link it to a file under /etc)" \
  "$(sim_err outside | tail -n 1)"
check_eq "nothing changed" "" "$(sim_diff outside)"

sim_finish sim_containers
