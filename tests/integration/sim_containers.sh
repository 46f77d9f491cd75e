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
# and a second apply changes nothing; accept measures in the stack's image (a recorded run replayed, and with a
# short burn under gpuprep's NVML sampler), and a hang, a flood and a SIGKILLed gpuprep leave no container behind.
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

sim_new_host
# NVIDIA's registry, played by a real registry: one image, its config's environment as NGC sets it.
sim_registry "$IMAGE CUDA_VERSION=12.2.2.009 CUDA_DRIVER_VERSION=535.104.05 NVIDIA_REQUIRE_CUDA=cuda>=9.0 NVIDIA_PYTORCH_VERSION=23.10"
D=$(sim_image_digest "$IMAGE")
# The stack: the simulated server's, with its container half and the image pinned to its digest.
sim_container_stack containers "$IMAGE" "$D"
# An admin's daemon.json, with keys to keep and "runtimes": null, managed by configuration management
# elsewhere in /etc and linked into place (as configuration management tools do).
sim_run sh -c 'mkdir -p /etc/docker /etc/cm/docker && printf "%s\n" "{\"log-driver\": \"json-file\", \"log-opts\": {\"max-size\": \"10m\", \"max-file\": \"3\"}, \"runtimes\": null, \"features\": {\"buildkit\": true}, \"data-root\": \"/var/lib/docker\", \"registry-mirrors\": [\"https://mirror.gpuprep-sim.internal\"]}" >/etc/cm/docker/daemon.json && ln -s ../cm/docker/daemon.json /etc/docker/daemon.json'
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
  "log-driver log-opts runtimes features data-root registry-mirrors | max-size max-file | nvidia-container-runtime True" "$keys"
check_eq "daemon.json is still the link configuration management made" ../cm/docker/daemon.json \
  "$(sim_run readlink /etc/docker/daemon.json)"
check "the link's target got the runtime" sim_run grep -q nvidia-container-runtime /etc/cm/docker/daemon.json
check "the replaced file is kept as a backup beside the target" \
  sim_run grep -q '"runtimes": null' /etc/cm/docker/daemon.json.gpuprep-bak
check_eq "and no backup or temp file is left in /etc/docker (dockerd's key.json, the registry's CA beside it)" \
  "certs.d daemon.json key.json" "$(sim_inspect ls -A /etc/docker | tr '\n' ' ' | sed 's/ $//')"
check "docker.io's own postinst started the engine" grep -qx 'systemctl --quiet --system start docker.service docker.socket' "$SIM_HOST/sim/log/commands.log"
# The daemon.json step runs after the reboot, where the engine started with the toolkit's hook on PATH: a reload.
check "Docker reloaded, not restarted" grep -qx 'systemctl reload docker.service' "$SIM_HOST/sim/log/commands.log"
check "never restarted" sh -c "! grep -q 'systemctl restart docker' '$SIM_HOST/sim/log/commands.log'"
sim_check_pulled "$IMAGE"
check "recorded for the digest-pinned reference" sim_run grep -qF "\"$IMAGE@$D\": \"$D\"" /var/lib/gpuprep/images.json

sim_section "a container sees every GPU"
sim_gp verify "${M[@]}" verify
check_rc "verify" 0 verify
sim_check_container_gpus verify 8 torch
# The registered runtime (docker run --runtime nvidia, as the toolkit's legacy mode runs): it adds the hook to
# the container's spec for the GPUs NVIDIA_VISIBLE_DEVICES names, and runs runc.
two=$(sim_run docker run --rm --runtime nvidia -e NVIDIA_VISIBLE_DEVICES=0,1 "${IMAGE%:*}@$D" nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
check_eq "--runtime nvidia with NVIDIA_VISIBLE_DEVICES=0,1: the container lists 2 GPUs" 2 "$two"
check "the engine ran the nvidia runtime for it" grep -q ' create .*--bundle ' "$SIM_HOST/sim/log/nvidia-container-runtime.log"
sim_gp doctor "${M[@]}" doctor --json
img=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); l=[x for x in d["layers"] if x["name"]=="image"][0]; print(l["found"], "|", l["detail"])' "$SIM_DIR/doctor.out" 2>&1)
check "doctor: the image's digest and its own CUDA_VERSION" grep -q "^$D | .*the image's CUDA_VERSION 12.2.2.009" <<<"$img"

sim_section "dockerd runs with the merged daemon.json: every key the admin set is in force"
# The engine that reads the file (Debian's dockerd 20.10) says what it took: the mirror, the data root, the
# logging driver, the nvidia runtime; the log options reach every container it creates.
info=$(sim_run docker info --format '{{json .RegistryConfig.Mirrors}} {{.DockerRootDir}} {{.LoggingDriver}} {{(index .Runtimes "nvidia").Path}} {{.ServerVersion}}' 2>&1)
check_eq "docker info: mirrors, data root, logging driver, the nvidia runtime" \
  '["https://mirror.gpuprep-sim.internal/"] /var/lib/docker json-file nvidia-container-runtime 20.10.24+dfsg1' "$info"
logcfg=$(sim_run sh -c "docker create --name gpuprep-sim-logs '${IMAGE%:*}@$D' true >/dev/null 2>&1 && docker inspect -f '{{json .HostConfig.LogConfig}}' gpuprep-sim-logs; docker rm gpuprep-sim-logs >/dev/null" 2>&1)
check_eq "a container it creates gets the admin's log options" '{"Type":"json-file","Config":{"max-file":"3","max-size":"10m"}}' "$logcfg"

sim_section "launch's docker run, as the real engine takes it"
sim_gp launch "${M[@]}" launch --image "${IMAGE%:*}@$D" -- nvidia-smi -L
check_rc "launch" 0 launch
check "it asks for every GPU, the host's IPC namespace and unlimited locked memory" \
  grep -qF -- "--ulimit memlock=-1" "$SIM_DIR/launch.out"
# This machine cannot raise a hard limit, so no container with --ulimit memlock=-1 starts here; the values
# the engine took are read back from the container it created (docker create + docker inspect).
sed -e 's/^docker run --rm /docker create --name gpuprep-sim-launch /' "$SIM_DIR/launch.out" >"$SIM_HOST/sim/launch-create.sh"
sim_run sh -c 'sh /sim/launch-create.sh >/dev/null 2>&1 && docker inspect -f "{{json .HostConfig.DeviceRequests}} {{.HostConfig.IpcMode}} {{json .HostConfig.Ulimits}}" gpuprep-sim-launch' \
  >"$SIM_DIR/launch-inspect.out" 2>&1
check_eq "docker inspect: --gpus all, --ipc=host, memlock and stack ulimits" \
  '[{"Driver":"","Count":-1,"DeviceIDs":null,"Capabilities":[["gpu"]],"Options":{}}] host [{"Name":"memlock","Hard":-1,"Soft":-1},{"Name":"stack","Hard":67108864,"Soft":67108864}]' \
  "$(cat "$SIM_DIR/launch-inspect.out")"
start_err=$(sim_run sh -c 'docker start -a gpuprep-sim-launch 2>&1; docker rm gpuprep-sim-launch >/dev/null')
if grep -q "error setting rlimit type 8: operation not permitted" <<<"$start_err"; then
  echo "  SKIP (this machine): no container starts with --ulimit memlock=-1 here (runc: error setting rlimit type 8: operation not permitted); the values reaching dockerd are checked above"
else
  check "the container started with the launch's limits and listed every GPU" grep -q "^GPU 7: " <<<"$start_err"
fi
sim_gp launch-shm "${M[@]}" launch --image "${IMAGE%:*}@$D" --ipc private --shm 16g -- cat /proc/mounts
check_rc "launch --ipc private --shm 16g" 0 launch-shm
# Without the ulimits this machine refuses, the same command runs: its /dev/shm is the size asked for.
sed -e '/--ulimit/d' "$SIM_DIR/launch-shm.out" >"$SIM_HOST/sim/launch-shm.sh"
check "the container runs with --ipc=private and a 16 GiB /dev/shm" \
  sim_run sh -c 'sh /sim/launch-shm.sh | grep -q "^shm /dev/shm tmpfs .*size=16777216k"'

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
check_eq "nothing pulled again" 1 "$(sim_registry_manifest_gets "${IMAGE%:*}@$D")"

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

# Back to the converged host's daemon.json (the link configuration management made).
sim_run sh -c 'ln -sfn ../cm/docker/daemon.json /etc/docker/daemon.json'

sim_section "the toolkit installed while Docker runs: --gpus fails until a restart; doctor names it, apply restarts"
# One session (the engine keeps running through it, as on a real server): the toolkit's packages go away and
# Docker restarts without its hook; they come back while it runs, and a reload does not make it see the hook.
cat >"$SIM_HOST/sim/late-hook.sh" <<SH
#!/bin/sh
TK="nvidia-container-toolkit nvidia-container-toolkit-base libnvidia-container-tools libnvidia-container1"
export DEBIAN_FRONTEND=noninteractive
apt-get -y -qq remove --allow-change-held-packages nvidia-container-toolkit >/dev/null 2>&1 || exit 10
systemctl restart docker.service || exit 11
apt-get -y -qq install --allow-change-held-packages nvidia-container-toolkit=1.19.1-1 >/dev/null 2>&1 || exit 12
systemctl reload docker.service || exit 13
echo "--- run"
docker run --rm --gpus all ${IMAGE%:*}@$D nvidia-smi -L 2>&1
echo "--- doctor"
gpuprep --manifest /sim/containers.yaml doctor 2>&1 | sed -n '/^container_toolkit/,/^image/p'
echo "--- apply"
gpuprep --manifest /sim/containers.yaml apply --yes --only container_toolkit 2>&1 | grep -i 'docker'
echo "--- run again"
docker run --rm --gpus all ${IMAGE%:*}@$D nvidia-smi -L 2>&1 | grep -c '^GPU '
SH
sim_run sh /sim/late-hook.sh >"$SIM_DIR/late-hook.out" 2>&1
late_rc=$?
check_eq "the scenario's steps ran" 0 "$late_rc"
check "the engine refuses --gpus with dockerd's own error" \
  grep -qF 'could not select device driver "" with capabilities: [[gpu]]' "$SIM_DIR/late-hook.out"
check "doctor: Docker started before the hook, restart it" \
  grep -qF 'Docker started before nvidia-container-runtime-hook was installed' "$SIM_DIR/late-hook.out"
check "apply restarts Docker for it" grep -qF "restart Docker (it started before the toolkit's hook was installed" "$SIM_DIR/late-hook.out"
check_eq "then a container gets every GPU" 8 "$(sed -n '/^--- run again/,$p' "$SIM_DIR/late-hook.out" | tail -n 1)"

sim_section "a daemon.json dockerd refuses: the engine stays down, apply says so"
# A key no dockerd knows (a typo of debug): Docker refuses to start with it; gpuprep keeps it (it edits only
# its own keys), tries to start the engine its later steps need and reports systemd's failure, changing
# nothing else.
sim_run sh -c 'cp /etc/cm/docker/daemon.json /etc/cm/docker/daemon.json.good && printf "%s\n" "{\"debugg\": true, \"log-driver\": \"json-file\"}" >/etc/cm/docker/daemon.json'
sim_run sh -c 'systemctl restart docker.service' >"$SIM_DIR/refused-restart.out" 2>&1
check "dockerd refuses the file (its own message in its log)" \
  grep -q "unable to configure the Docker daemon with file /etc/docker/daemon.json: the following directives don't match any configuration option: debugg" "$SIM_HOST/sim/log/dockerd.log"
check "and the unit is failed" sim_inspect sh -c 'systemctl is-active docker.service | grep -qx failed'
sim_gp refused-doctor "${M[@]}" doctor
check "doctor: the engine does not answer" grep -qE '^docker +fail ' "$SIM_DIR/refused-doctor.out"
sim_gp refused-apply "${M[@]}" apply --yes
check_rc "apply cannot finish while the engine refuses its configuration" 1 refused-apply
check "it stops where the engine does not start, with systemd's answer" \
  grep -qF 'error: docker.start: systemctl start docker.service exited with 1: See "systemctl status docker.service"' "$SIM_DIR/refused-apply.err"
check "no pull was attempted" sh -c "! grep -q 'cannot pull' '$SIM_DIR/refused-apply.err'"
check_eq "daemon.json as the admin left it (gpuprep's step after the start did not run)" \
  '{"debugg": true, "log-driver": "json-file"}' "$(sim_inspect cat /etc/cm/docker/daemon.json)"
sim_run sh -c 'mv /etc/cm/docker/daemon.json.good /etc/cm/docker/daemon.json && systemctl restart docker.service' >/dev/null 2>&1

sim_section "accept measures in the stack's image through the real engine: streamed, bounded, removed"
# The image's python replays a recorded run of 8 H100 (tests/fixtures/accept/h100x8-healthy.jsonl), with a
# healthy burn of --burn's length after it (tests/fixtures/accept/make_burn.py's records), hangs in hbm_copy or
# floods its output, as its environment says; accept pulls the two variants itself.
sim_registry "$IMAGE-hang CUDA_VERSION=12.2.2.009 NVIDIA_PYTORCH_VERSION=23.10 SIM_ACCEPT=hang" \
  "$IMAGE-flood CUDA_VERSION=12.2.2.009 NVIDIA_PYTORCH_VERSION=23.10 SIM_ACCEPT=flood"
sim_container_stack accept-hang "$IMAGE-hang" "$(sim_image_digest "$IMAGE-hang")"
sim_container_stack accept-flood "$IMAGE-flood" "$(sim_image_digest "$IMAGE-flood")"
# One session (the engine and its containers live as long as it does, as on a real server between reboots):
# each run, then how many labelled containers the engine still has.
cat >"$SIM_HOST/sim/accept.sh" <<'SH'
#!/bin/sh
left() { docker ps -aq --filter label=gpuprep.accept | grep -c .; }
run() {
  name=$1
  shift
  t0=$(date +%s%N)
  /sim/bin/gpuprep "$@" >"/sim/out/$name.out" 2>"/sim/out/$name.err"
  echo "$name rc $? ms $((($(date +%s%N) - t0) / 1000000)) left $(left)"
}
run ok --manifest /sim/containers.yaml accept --fast --save /sim/out/accept.jsonl
run burn --manifest /sim/containers.yaml accept --burn 3s --json --save /sim/out/burn.jsonl
run hang --manifest /sim/accept-hang.yaml accept --fast
run flood --manifest /sim/accept-flood.yaml accept --fast
# gpuprep killed with SIGKILL mid-phase: its container runs on; the next accept removes it first.
/sim/bin/gpuprep --manifest /sim/accept-hang.yaml accept --fast >/dev/null 2>&1 &
pid=$!
i=0
until docker ps -q --filter label=gpuprep.accept | grep -q .; do
  i=$((i + 1))
  [ $i -lt 150 ] || break
  sleep 0.2
done
sleep 1
kill -9 $pid
wait $pid 2>/dev/null
echo "killed left $(left)"
run reap --manifest /sim/containers.yaml accept --fast
SH
rm -rf "$SIM_HOST/sim/out" && mkdir -p "$SIM_HOST/sim/out"
sim_run sh /sim/accept.sh >"$SIM_DIR/accept.out" 2>&1
O=$SIM_HOST/sim/out
result() { awk -v n="$1" -v f="$2" '$1 == n { for (i = 2; i < NF; i += 2) if ($i == f) print $(i + 1) }' "$SIM_DIR/accept.out"; }
check_eq "a healthy recorded run passes" 0 "$(result ok rc)"
check_eq "every phase record of the run was read, streamed from the container" 33 \
  "$(grep -c '"record":"phase"' "$O/accept.jsonl" 2>/dev/null)"
check "progress named the phases as they came" grep -q 'measuring all_reduce on 8 GPU' "$O/ok.err"
check_eq "no container is left (AutoRemove, waited for)" 0 "$(result ok left)"
check_eq "a run with a 3 s burn passes" 0 "$(result burn rc)"
check "it lasted the burn" test "$(result burn ms)" -ge 3000
check_eq "the program's burn: one record per GPU, read from the container" 8 \
  "$(grep -c '"record":"phase","phase":"burn"' "$O/burn.jsonl" 2>/dev/null)"
check_eq "gpuprep's NVML sampler summarised each GPU's clocks under the burn" 8 \
  "$(grep -c '"record":"burn_clocks"' "$O/burn.jsonl" 2>/dev/null)"
check_eq "every burn check passes (cpu check, digest and clocks on each GPU; no Xid, so no xid check)" "clocks pass 8
cpu check pass 8
digest pass 8" "$(python3 -c 'import collections, json, sys
c = collections.Counter((k["name"], k["status"]) for k in json.load(open(sys.argv[1]))["checks"] if k["group"] == "burn")
print("\n".join("%s %s %d" % (n, s, c[n, s]) for n, s in sorted(c)))' "$O/burn.out" 2>&1)"
check_eq "no container is left after the burn" 0 "$(result burn left)"
check_eq "a phase that hangs fails the run" 1 "$(result hang rc)"
check "the finding names the phase" grep -qE 'hbm_copy' "$O/hang.out"
check "within the phase's allowance (20 s) and little more" test "$(result hang ms)" -lt 45000
check_eq "the hung container is gone" 0 "$(result hang left)"
check_eq "a flood of output fails the run" 1 "$(result flood rc)"
check "the finding says the output was bounded" grep -qE 'MiB' "$O/flood.out"
check_eq "the flooding container is gone" 0 "$(result flood left)"
check_eq "a SIGKILLed accept leaves its container running" 1 "$(result killed left)"
check_eq "the next accept measures" 0 "$(result reap rc)"
check "and says it removed the one left behind" grep -q 'that a stopped gpuprep accept left running' "$O/reap.err"
check_eq "nothing labelled is left" 0 "$(result reap left)"
sed 's/^/  accept.sh: /' "$SIM_DIR/accept.out"  # each run's exit, time and what it left, for the log

sim_section "this machine is as it was"
check_eq "its mounts, interfaces, cgroups and packages are unchanged (the engine, the registry and their cgroups stayed in the simulation)" \
  "" "$(sim_host_changes)"

sim_finish sim_containers
