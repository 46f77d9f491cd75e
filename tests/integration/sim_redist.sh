#!/usr/bin/env bash
# ctest-labels: sim
# shellcheck disable=SC2034  # SIM_RC is set here and read by check_rc (tests/sim/lib.sh)
# gpuprep on the simulated GPU server (tests/sim) with a stack whose cuDNN comes from NVIDIA's
# redistributable archive (`source: redist`) instead of apt: installed from the loopback HTTPS server and,
# on an air-gapped host, from a local directory; verified through the real loader (ldconfig + dlopen);
# doctor agrees; a re-apply fetches nothing; switching to a newer version and back, each verified by a new
# gpuprep process (this one loaded the old library while probing); a hostile archive, a tampered one and a
# decompression bomb (~500 KB that unpack to 2 GiB, built here) are refused with nothing changed.
# Usage: bash sim_redist.sh <gpuprep-binary> <source-dir> <build-dir>
set -uo pipefail
GPUPREP=$1
SRC=$2
source "$SRC/tests/sim/lib.sh"
source "$SRC/tests/sim/redist.sh"
sim_require
sim_init "$GPUPREP" "$SRC" "${3:-}"
t_start=$(_sim_ms)

sim_redist_tree "$SIM_DIR/www/redist" good
sim_redist_tree "$SIM_DIR/www/redist-evil" symlink-escape
sim_redist_tree "$SIM_DIR/www/redist-badsha" tamper
sim_redist_tree "$SIM_DIR/www/redist-bomb" bomb
sim_redist_manifest redist "$SIM_SCHEME://127.0.0.1:$SIM_PORT/redist/"
sim_redist_manifest redist-evil "$SIM_SCHEME://127.0.0.1:$SIM_PORT/redist-evil/"
sim_redist_manifest redist-badsha "$SIM_SCHEME://127.0.0.1:$SIM_PORT/redist-badsha/"
sim_redist_manifest redist-bomb "$SIM_SCHEME://127.0.0.1:$SIM_PORT/redist-bomb/"
sim_redist_manifest redist-local /sim/redist-local
PREFIX=/opt/gpuprep/cudnn/9.12.0.46-cuda12

installed_ok() {  # installed_ok NAME: the checks after a successful install
  check_rc "apply --only cudnn" 0 "$1"
  check_eq "current -> the versioned prefix" 9.12.0.46-cuda12 "$(sim_run readlink /opt/gpuprep/cudnn/current)"
  check_eq "only the prefix and current are visible" "9.12.0.46-cuda12 current" \
    "$(sim_run ls -A /opt/gpuprep/cudnn | tr '\n' ' ' | sed 's/ $//')"
  check "the header in NVIDIA's layout" sim_run grep -q 'define CUDNN_MINOR 12' "$PREFIX/include/cudnn_version.h"
  check_eq "the ld.so.conf.d entry" /opt/gpuprep/cudnn/current/lib \
    "$(sim_run grep -v '^#' /etc/ld.so.conf.d/gpuprep-cudnn.conf)"
  sim_run ldconfig -p >"$SIM_DIR/ldconfig.out"
  check "ldconfig -p lists it" grep -q 'libcudnn.so.9 .*=> /opt/gpuprep/cudnn/current/lib/libcudnn.so.9' "$SIM_DIR/ldconfig.out"
  check "apply verified cuDNN through the loader, in a new process" \
    grep -q 'verified cudnn in a new process: cuDNN 9.12.0 loads' "$SIM_DIR/$1.err"
  check_eq "no apt-get ran" 0 "$(sim_count apt-get)"
}

sim_section "plan: the redist step"
sim_new_host
sim_snapshot bare
sim_gp plan --manifest /sim/redist.yaml plan --only cudnn --format json
check_rc "plan --format json" 0 plan
check "the step installs the archive into the versioned prefix" \
  grep -q "\"prefix\": *\"$PREFIX\"" "$SIM_DIR/plan.out"
check "it names NVIDIA's redistrib JSON on the mirror" grep -q "redistrib_9.12.0.json" "$SIM_DIR/plan.out"
check_eq "plan changed nothing" "" "$(sim_diff bare)"

sim_section "install from the loopback HTTPS server"
http0=$(sim_http_requests)
sim_gp apply --manifest /sim/redist.yaml apply --yes --only cudnn
installed_ok apply
check "the archive came over HTTPS" test "$(sim_http_requests)" -ge $((http0 + 2))
sim_gp doctor --manifest /sim/redist.yaml doctor --json
check "doctor: cudnn ok, found 9.12.0.46" python3 -c "
import json, sys
d = json.load(open('$SIM_DIR/doctor.out'))
l = [x for x in d['layers'] if x['name'] == 'cudnn'][0]
sys.exit(0 if l['status'] == 'ok' and l['found'] == '9.12.0.46' else 1)"
sim_gp verify --manifest /sim/redist.yaml verify --only cudnn
check_rc "verify --only cudnn" 0 verify
http1=$(sim_http_requests)
sim_snapshot installed
sim_gp again --manifest /sim/redist.yaml apply --yes --only cudnn
check_rc "a second apply" 0 again
check_eq "fetches nothing" "$http1" "$(sim_http_requests)"
check_eq "changes nothing" "" "$(sim_diff installed)"
sim_gp apt --manifest /sim/stack.yaml doctor --json
check "doctor with the apt stack: the tarball is not the apt package" python3 -c "
import json, sys
d = json.load(open('$SIM_DIR/apt.out'))
l = [x for x in d['layers'] if x['name'] == 'cudnn'][0]
sys.exit(0 if l['status'] != 'ok' else 1)"

sim_section "switching versions: to 9.13.0.50 and back to 9.12.0.46, each verified by a new process"
# The probe at apply's start loads libcudnn.so.9 as it is; only a new process loads the one just switched to.
sim_redist_tree "$SIM_DIR/www/redist" good 9.13.0.50 9.13.0
sim_redist_manifest redist-913 "$SIM_SCHEME://127.0.0.1:$SIM_PORT/redist/" 9.13.0.50 9.13.0
cp "$SIM_DIR/common/redist-913.yaml" "$SIM_HOST/sim/"
sim_gp to913 --manifest /sim/redist-913.yaml apply --yes --only cudnn
check_rc "apply of the newer version" 0 to913
check_eq "current -> 9.13.0.50" 9.13.0.50-cuda12 "$(sim_run readlink /opt/gpuprep/cudnn/current)"
check "verified by a new process at the new version" \
  grep -q 'verified cudnn in a new process: cuDNN 9.13.0 loads' "$SIM_DIR/to913.err"
check_eq "both versions side by side" "9.12.0.46-cuda12 9.13.0.50-cuda12 current" \
  "$(sim_run ls -A /opt/gpuprep/cudnn | tr '\n' ' ' | sed 's/ $//')"
sim_gp back --manifest /sim/redist.yaml apply --yes --only cudnn
check_rc "apply of the previous version again" 0 back
check_eq "current -> 9.12.0.46" 9.12.0.46-cuda12 "$(sim_run readlink /opt/gpuprep/cudnn/current)"
check "verified by a new process at the previous version" \
  grep -q 'verified cudnn in a new process: cuDNN 9.12.0 loads' "$SIM_DIR/back.err"
sim_gp back-verify --manifest /sim/redist.yaml verify --only cudnn
check_rc "verify --only cudnn afterwards" 0 back-verify
check_eq "the loader entry was left as it was: no backup of it, however many switches" "gpuprep-cudnn.conf" \
  "$(sim_inspect ls -A /etc/ld.so.conf.d | grep gpuprep)"

sim_section "hostile and tampered archives: refused, nothing visible"
for bad in redist-evil redist-badsha redist-bomb; do
  sim_new_host
  sim_snapshot bare
  sim_gp "$bad" --manifest "/sim/$bad.yaml" apply --yes --only cudnn
  check_rc "$bad: apply fails" 1 "$bad"
  check "$bad: the error says nothing was installed" grep -q 'nothing was installed' "$SIM_DIR/$bad.err"
  check_eq "$bad: no file or directory changed outside gpuprep's log and journal" "" "$(sim_diff bare)"
done
check "the escape was refused by name" grep -q 'lib/escape": symlink to ".*" leaves the prefix' "$SIM_DIR/redist-evil.err"
check "the bomb was refused at its limit, 32 times its size" \
  grep -q "refused: it unpacks to more than [0-9]* bytes of file data .*, and 32 times the archive's [0-9]* bytes is the most accepted" \
  "$SIM_DIR/redist-bomb.err"

sim_section "air-gapped: a local directory, no network"
sim_new_host
cp -a "$SIM_DIR/www/redist" "$SIM_HOST/sim/redist-local"
http0=$(sim_http_requests)
sim_gp local --manifest /sim/redist-local.yaml apply --yes --only cudnn
installed_ok local
check_eq "no HTTP request" "$http0" "$(sim_http_requests)"

echo "sim_redist: scenarios took $(($(_sim_ms) - t_start)) ms"
sim_finish sim_redist
