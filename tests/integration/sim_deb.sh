#!/usr/bin/env bash
# ctest-labels: package,sim
# The .deb on the simulated GPU server (tests/sim; Debian 12 underneath, the only one of the three
# distributions that can be installed for real here): packaging/build-deb.sh turns the binary under test into
# gpuprep_*.deb; `apt-get install ./gpuprep_*.deb` installs it (Depends resolved by the real apt); the man page,
# completions and units are where Debian looks; the packaged first-boot unit applies the site file's stack
# (/etc/gpuprep/site.yaml, no --manifest anywhere) at the simulated boot, reboots, and the resume unit finishes, leaving /var/lib/gpuprep/status.json and POSTing it
# to a --callback. Then the cloud-init template's own commands, run as cloud-init would: the package fetched
# over HTTPS and checked against its sha256 (a wrong sum installs nothing), apply --yes --reboot, the resume.
# Usage: bash sim_deb.sh <gpuprep-binary> <source-dir> <build-dir> [DEB]  (DEB: test that package instead)
# Exit 77 (skipped) where help2man, dpkg-shlibdeps or python3-yaml are missing.
set -uo pipefail
GPUPREP=$1
SRC=$2
DEB=${4:-}
for t in help2man dpkg-shlibdeps objdump; do
  command -v "$t" >/dev/null || { echo "SKIP: $t not found (packaging/install-deps.sh installs it)"; exit 77; }
done
python3 -c 'import yaml' 2>/dev/null || { echo "SKIP: python3-yaml not found"; exit 77; }
source "$SRC/tests/sim/lib.sh"
sim_require
sim_init "$GPUPREP" "$SRC" "${3:-}"

if [[ -z $DEB ]]; then
  DEB=$(bash "$SRC/packaging/build-deb.sh" "$GPUPREP" "$SIM_DIR/deb") || sim_fail "packaging/build-deb.sh"
fi
cp "$DEB" "$SIM_DIR/www/gpuprep.deb"
DEB_SHA=$(sha256sum "$DEB" | cut -d' ' -f1)
URL=$SIM_SCHEME://127.0.0.1:$SIM_PORT

# A loopback receiver for --callback: one file per POST body.
mkdir -p "$SIM_DIR/callbacks"
# in the simulated server's network namespace, where gpuprep posts from (lib.sh)
nsenter --net="$SIM_NETNS" python3 - "$SIM_DIR/callbacks" "$SIM_DIR/callback.port" <<'PY' &
import http.server, os, sys
out, port_file = sys.argv[1:3]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        n = len(os.listdir(out))
        with open(os.path.join(out, "%02d.json" % n), "wb") as f:
            f.write(body)
        self.send_response(204)
        self.end_headers()
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(port_file + ".tmp", "w").write(str(s.server_address[1]))
os.rename(port_file + ".tmp", port_file)
ppid = os.getppid()
s.timeout = 0.5
while os.getppid() == ppid:
    s.handle_request()
PY
CB_PID=$!
trap 'kill $CB_PID 2>/dev/null; sim_cleanup' EXIT
for _ in $(seq 100); do [[ -s $SIM_DIR/callback.port ]] && break; sleep 0.05; done
CALLBACK=http://127.0.0.1:$(cat "$SIM_DIR/callback.port")/hook
status_field() { sim_run python3 -c "import json,sys; d=json.load(open('/var/lib/gpuprep/status.json')); print($1)"; }
last_callback() { ls "$SIM_DIR/callbacks" | tail -n 1; }
callback_field() { python3 -c "import json,sys; d=json.load(open('$SIM_DIR/callbacks/$(last_callback)')); print($1)"; }

sim_section "the package: contents and Depends"
check "dpkg-deb reads the package" dpkg-deb --info "$DEB"
contents=$(dpkg-deb --contents "$DEB" | awk '{print $6}')
for f in ./usr/bin/gpuprep ./usr/share/man/man1/gpuprep.1.gz ./usr/share/bash-completion/completions/gpuprep \
  ./usr/share/zsh/vendor-completions/_gpuprep ./usr/lib/systemd/system/gpuprep-firstboot.service \
  ./usr/lib/systemd/system/gpuprep-resume.service ./usr/lib/systemd/system/gpuprep-watch.service \
  ./usr/lib/systemd/system/gpuprep-health.service ./usr/lib/systemd/system/gpuprep-health.timer \
  ./usr/share/gpuprep/cloud-init.yaml ./usr/share/gpuprep/npd-gpuprep-health.json \
  ./usr/share/doc/gpuprep/copyright ./usr/share/doc/gpuprep/changelog.gz; do
  check "ships $f" grep -qx -- "$f" <<<"$contents"
done
depends=$(dpkg-deb -f "$DEB" Depends)
check "Depends names libcurl4 | libcurl4t64 (dlopen'ed)" grep -q 'libcurl4 | libcurl4t64' <<<"$depends"
check "Depends names libssl3 | libssl3t64 (dlopen'ed)" grep -q 'libssl3 | libssl3t64' <<<"$depends"
check "Depends names libc6 with a version" grep -qE 'libc6 \(>= 2\.[0-9]+\)' <<<"$depends"

sim_section "apt-get install ./gpuprep_*.deb"
sim_new_host
cp "$DEB" "$SIM_HOST/sim/gpuprep.deb"
sim_snapshot bare
check "apt-get installs the package" sim_run apt-get install -y -q --no-install-recommends /sim/gpuprep.deb
check_eq "dpkg says installed" "install ok installed" "$(sim_run dpkg-query -W -f '${Status}' gpuprep)"
check_eq "gpuprep --version runs from /usr/bin" "gpuprep $("$GPUPREP" --version | awk '{print $2}')" \
  "$(sim_run /usr/bin/gpuprep --version)"
check "the man page renders its commands section" sh -c "zcat '$SIM_HOST/upper/usr/share/man/man1/gpuprep.1.gz' | grep -q '^\.SS gpuprep fleet-report'"
check_eq "bash completion offers fleet-report for 'gpuprep fl'" "fleet-report" \
  "$(sim_run bash -c 'source /usr/share/bash-completion/completions/gpuprep; COMP_WORDS=(gpuprep fl); COMP_CWORD=1; _gpuprep; echo "${COMPREPLY[*]}"')"
check_eq "bash completion offers --format for 'gpuprep fleet-report --fo'" "--format" \
  "$(sim_run bash -c 'source /usr/share/bash-completion/completions/gpuprep; COMP_WORDS=(gpuprep fleet-report --fo); COMP_CWORD=2; _gpuprep; echo "${COMPREPLY[*]}"')"
if command -v zsh >/dev/null; then
  check "zsh parses the completion function" zsh -n "$SIM_HOST/upper/usr/share/zsh/vendor-completions/_gpuprep"
fi
rc=0
npd=$(sim_run /usr/bin/gpuprep doctor --health --npd --class bus) || rc=$?
check_eq "before the driver, doctor --health --npd is unknown (exit 2)" 2 "$rc"
check "  in one line: NVML answered for no GPU" grep -qx 'unknown: NVML answered for no GPU.\{0,47\}' <<<"$npd"
sim_run /usr/bin/gpuprep doctor --json >"$SIM_DIR/doctor.json"
check "doctor --json from the package carries the machine-id" python3 -c "import json; d=json.load(open('$SIM_DIR/doctor.json')); assert len(d['host']['machine_id'] or '') in (0, 32); assert all('code' in f for l in d['layers'] for f in l['findings'])"

sim_section "first boot through the packaged unit"
# As an image builder would: the site's stack at /etc/gpuprep/site.yaml (the packaged unit names no manifest;
# the site file is every verb's default), and, with systemctl edit --full, a callback on the unit's command line.
mkdir -p "$SIM_HOST/upper/etc/gpuprep"
cp "$SIM_HOST/sim/stack.yaml" "$SIM_HOST/upper/etc/gpuprep/site.yaml"
sed 's|apply --yes --reboot|apply --yes --reboot --callback '"$CALLBACK"'|' \
  "$SIM_HOST/upper/usr/lib/systemd/system/gpuprep-firstboot.service" >"$SIM_DIR/firstboot.service"
check "the packaged unit runs apply --yes --reboot" grep -qx 'ExecStart=/usr/bin/gpuprep apply --yes --reboot' \
  "$SIM_HOST/upper/usr/lib/systemd/system/gpuprep-firstboot.service"
mkdir -p "$SIM_HOST/upper/etc/systemd/system"
cp "$SIM_DIR/firstboot.service" "$SIM_HOST/upper/etc/systemd/system/gpuprep-firstboot.service"
check "systemctl enable gpuprep-firstboot.service" sim_run systemctl enable gpuprep-firstboot.service
rc=0
sim_reboot || rc=$?
check_eq "first boot: apply stops for the driver's reboot" 3 "$rc"
check "apply asked for the reboot" grep -q '^systemctl reboot' "$SIM_HOST/sim/log/commands.log"
check_eq "status.json: reboot-required, exit 3" "reboot-required 3" "$(status_field 'd["state"], d["exit_code"]')"
check_eq "the first boot applied the site file's stack" "/etc/gpuprep/site.yaml sim-stack" \
  "$(status_field 'd["manifest"], d["stack"]')"
check_eq "status.json: the driver layer waits for the reboot" "reboot-required" \
  "$(status_field '[l["verdict"] for l in d["layers"] if l["name"] == "driver"][0]')"
check "status.json has start and finish times" status_field 'd["started"] and d["finished"] or sys.exit(1)'
check_eq "the callback got the same document" "reboot-required 3" "$(callback_field 'd["state"], d["exit_code"]')"
check "the callback URL is kept for the resume, root-only" sh -c "stat -c %a '$SIM_HOST/upper/var/lib/gpuprep/callback' | grep -qx 600"
rc=0
sim_reboot || rc=$?
check_eq "second boot: the resume unit converges" 0 "$rc"
check "the first-boot unit did not run again (ConditionPathExists)" grep -q 'gpuprep-firstboot.service skipped' <<<"$SIM_BOOT_LOG"
check_eq "status.json: done, exit 0" "done 0" "$(status_field 'd["state"], d["exit_code"]')"
check_eq "status.json: every planned layer installed or ok" "" \
  "$(status_field '" ".join(l["name"] + "=" + l["verdict"] for l in d["layers"] if l["verdict"] not in ("installed", "ok", "n/a", "skipped"))')"
check_eq "the callback got the final verdict" "done 0" "$(callback_field 'd["state"], d["exit_code"]')"
check "the kept callback URL is gone" test ! -e "$SIM_HOST/upper/var/lib/gpuprep/callback"
sim_run /usr/bin/gpuprep --manifest /sim/stack.yaml doctor --json >"$SIM_DIR/doctor-after.json" 2>/dev/null
check_eq "doctor --json names every GPU by NVML's UUID and serial, matched by PCI address" "8 8 0000:18:00.0" \
  "$(python3 -c "import json; g=json.load(open('$SIM_DIR/doctor-after.json'))['host']['gpus']; print(sum(1 for x in g if (x['uuid'] or '').startswith('GPU-')), sum(1 for x in g if (x['serial'] or '').isdigit()), g[0]['pci'])")"
check_eq "  and gives each GPU's memory as NVML reports it (H100 80GB: 81559 MiB)" "8 $((81559 << 20))" \
  "$(python3 -c "import json; g=json.load(open('$SIM_DIR/doctor-after.json'))['host']['gpus']; print(sum(1 for x in g if x['memory_bytes']), g[0]['memory_bytes'])")"
rc=0
sim_run /usr/bin/gpuprep verify >"$SIM_DIR/verify.out" 2>&1 || rc=$?
check_eq "the packaged gpuprep verifies the host after first boot (the site file, no --manifest)" 0 "$rc"
check "and says it used the site file" grep -q '^gpuprep: using stack .*: the site file /etc/gpuprep/site.yaml' "$SIM_DIR/verify.out"

sim_section "doctor --health on the converged server (node-problem-detector's protocol)"
rc=0
t_health=$(_sim_ms)
npd=$(sim_run /usr/bin/gpuprep doctor --health --npd --class bus,memory,clocks,nvlink,recovery) || rc=$?
t_health=$(($(_sim_ms) - t_health))
check_eq "doctor --health --npd: exit 0 on eight healthy GPUs" 0 "$rc"
check "  one line: ok: 8 GPUs healthy" grep -qx 'ok: 8 GPUs healthy.\{0,61\}' <<<"$npd"
echo "sim_deb: doctor --health --npd on 8 GPUs in $t_health ms (a session of the simulated server included)"

sim_section "cloud-init: the template's commands"
sim_new_host
python3 - "$SRC/templates/cloud-init.yaml" "$SIM_HOST/upper" "$SIM_DIR/runcmd" <<'PY' || sim_fail "reading the cloud-init template"
import os, sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
assert open(sys.argv[1]).readline().strip() == "#cloud-config"
root = sys.argv[2]
for wf in doc["write_files"]:
    path = root + wf["path"]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(wf["content"])
    os.chmod(path, int(wf.get("permissions", "0644"), 8))
with open(sys.argv[3], "w") as f:
    for cmd in doc["runcmd"]:
        f.write("\0".join(cmd if isinstance(cmd, list) else ["sh", "-c", cmd]) + "\n")
PY
env_file=$SIM_HOST/upper/etc/gpuprep/firstboot.env
check "the template leaves the env file root-only" sh -c "stat -c %a '$env_file' | grep -qx 600"
run_template() {
  local line rc=0
  while IFS= read -r line; do
    mapfile -d '' -t argv < <(printf '%s' "$line")
    sim_run "${argv[@]}" >>"$SIM_DIR/cloud-init.log" 2>&1 || rc=$?
  done <"$SIM_DIR/runcmd"
  return $rc
}
sim_snapshot bare
sed -i -e "s|^GPUPREP_DEB_URL=.*|GPUPREP_DEB_URL=$URL/gpuprep.deb|" \
  -e "s|^GPUPREP_DEB_SHA256=.*|GPUPREP_DEB_SHA256=$(printf '%s' "$DEB_SHA" | tr 0-9a-f 1-9a-f0)|" "$env_file"
rc=0
run_template || rc=$?
check_eq "a package whose sha256 differs: the script fails" 1 "$rc"
check "it says so" grep -q 'sha256 mismatch' "$SIM_DIR/cloud-init.log"
not_installed() { ! sim_run dpkg-query -W gpuprep >/dev/null 2>&1; }
check "nothing was installed" not_installed
check "no /usr/bin/gpuprep on the host" sim_run test ! -e /usr/bin/gpuprep
ncb=$(ls "$SIM_DIR/callbacks" | wc -l)
sed -i -e "s|^GPUPREP_DEB_SHA256=.*|GPUPREP_DEB_SHA256=$DEB_SHA|" -e "s|^GPUPREP_CALLBACK=.*|GPUPREP_CALLBACK=$CALLBACK|" \
  -e "s|^GPUPREP_MANIFEST=.*|GPUPREP_MANIFEST=/sim/stack.yaml|" "$env_file"
rc=0
run_template || rc=$?
check_eq "with the right sha256: installed, applied, rebooting (the script exits 0)" 0 "$rc"
tail -n 5 "$SIM_DIR/cloud-init.log"
check_eq "the package is installed" "install ok installed" "$(sim_run dpkg-query -W -f '${Status}' gpuprep)"
check "the package was fetched over $SIM_SCHEME" grep -q '^GET /gpuprep.deb 200' "$SIM_DIR/http.log"
check_eq "status.json: reboot-required" "reboot-required" "$(status_field 'd["state"]')"
check_eq "one more callback" $((ncb + 1)) "$(ls "$SIM_DIR/callbacks" | wc -l)"
rc=0
sim_reboot || rc=$?
check_eq "after the reboot the resume unit converges" 0 "$rc"
check_eq "status.json: done" "done 0" "$(status_field 'd["state"], d["exit_code"]')"
check_eq "the callback got the final verdict" "done" "$(callback_field 'd["state"]')"
sim_finish sim_deb
