#!/usr/bin/env bash
# ctest-labels: sim
# gpuprep on the simulated GPU server (tests/sim) with a repository that must not be trusted: the key
# served is not the pinned fingerprint, the keyring's sha256 is not the pinned one, the repository is signed
# by another key, a package fails apt's checksum, a signed index names a package like an apt option. Each:
# exit 1, a one-line error, and the host untouched (no file changed outside gpuprep's own log and journal; no
# package installed).
# Usage: bash sim_badrepo.sh <gpuprep-binary> <source-dir> <build-dir>
set -uo pipefail
GPUPREP=$1
SRC=$2
source "$SRC/tests/sim/lib.sh"
sim_require
sim_init "$GPUPREP" "$SRC" "${3:-}"
t_start=$(_sim_ms)

bad_repo() {  # bad_repo VARIANT WHAT ERROR_REGEX|=EXACT_LAST_LINE [ALLOWED_CHANGES_REGEX WHAT_ALLOWED]
  sim_section "$2"
  sim_new_host
  sim_snapshot bare
  sim_gp "$1" --manifest "/sim/stack-$1.yaml" apply --yes
  check_rc "apply refuses" 1 "$1"
  if [[ $3 == =* ]]; then
    check_eq "the error, word for word" "${3#=}" "$(sim_err "$1" | tail -n 1)"
  else
    check "the error says why" grep -Eiq "$3" "$SIM_DIR/$1.err"
  fi
  if [[ -n ${4:-} ]]; then
    check_eq "nothing changed but ${5}" "" "$(sim_diff bare | grep -Ev "$4")"
  else
    check_eq "no file changed outside gpuprep's log and journal" "" "$(sim_diff bare)"
  fi
  check_eq "no command recorded (update-initramfs, systemctl...)" "" "$(sim_log commands)"
  check_eq "no NVIDIA package installed" "" "$(sim_run dpkg-query -W -f '${db:Status-Status} ${Package}\n' 2>/dev/null |
    grep -E '^(installed|half|unpacked).*(nvidia|cuda|cudnn|nccl)')"
  if [[ $1 != badsum && $1 != hostile ]]; then
    check "no install transaction" sh -c "! grep -q ' install ' '$SIM_HOST/sim/log/apt-get.log'"
  fi
}

U=$SIM_SCHEME://127.0.0.1:$SIM_PORT
bad_repo badkey "the key served is not the pinned fingerprint" \
  "=gpuprep: error: repository cuda: $U/stranger-keyring.gpg: key fingerprint mismatch: the key is $SIM_BAD_FPR, the stack pins $SIM_KEY_FPR; nothing was written; nothing was changed"
bad_repo badsha "the keyring does not match its pinned sha256" \
  "=gpuprep: error: repository cuda: $U/cuda.gpg: sha256 mismatch: downloaded $SIM_KEY_SHA256, the stack pins $(printf '0%.0s' $(seq 64)); nothing was written; nothing was changed"
bad_repo badsig "the repository is signed by another key" '^gpuprep: error: .*is not signed'

# A key file holding the pinned key and a stranger's (whoever serves the key file and the repository, or a
# mirror, adds their own): apt must trust the pinned key alone, so a repository the stranger signed is
# refused like any badly signed one.
primaries() {  # primaries: the primary fingerprints in the OpenPGP keys on stdin, one line
  gpg --batch --show-keys --with-colons 2>/dev/null | awk -F: '$1 == "pub" { p = 1; next } $1 == "fpr" && p { print $10; p = 0 }' |
    paste -sd' ' -
}
cat "$SIM_DIR/www/cuda.gpg" "$SIM_DIR/www/stranger-keyring.gpg" >"$SIM_DIR/www/twokeys.gpg"
check_eq "the key file holds both keys" "$SIM_KEY_FPR $SIM_BAD_FPR" "$(primaries <"$SIM_DIR/www/twokeys.gpg")"
_sim_manifest stack-twokeys badsig twokeys.gpg "$SIM_KEY_FPR" ""
_sim_manifest stack-twokeys-good cuda twokeys.gpg "$SIM_KEY_FPR" ""
bad_repo twokeys "the pinned key and a stranger's in one key file, the repository signed by the stranger" \
  "=gpuprep: error: apt-get update of the stack's repositories failed: E: The repository '$U/badsig  InRelease' is not signed.; nothing was changed"
check "gpg's own chatter is not in apply's output" sh -c "! grep -qi 'trustdb\|gpg:' '$SIM_DIR/twokeys.err' '$SIM_DIR/twokeys.out'"

sim_section "the same key file for a repository the pinned key signs: the keyring holds the pinned key alone"
sim_new_host
sim_gp twokeys-good --manifest /sim/stack-twokeys-good.yaml apply --yes --only nccl
check_rc "apply installs NCCL" 0 twokeys-good
check_eq "the keyring apply wrote lists one primary key, the pinned one" "$SIM_KEY_FPR" \
  "$(sim_inspect cat /usr/share/keyrings/cuda-archive-keyring.gpg | primaries)"

sim_section "the plan's script with the same key file and the repository the stranger signed"
sim_new_host
sim_gp twokeys-plan --manifest /sim/stack-twokeys.yaml plan --format sh --only nccl
check_rc "plan --format sh" 0 twokeys-plan
cp "$SIM_DIR/twokeys-plan.out" "$SIM_HOST/sim/twokeys-plan.sh"
SIM_RC=0
sim_run bash /sim/twokeys-plan.sh >"$SIM_DIR/twokeys-script.out" 2>"$SIM_DIR/twokeys-script.err" || SIM_RC=$?
check "the script fails" test "$SIM_RC" -ne 0
check "at apt-get update: the repository is not signed by the pinned key" \
  grep -Eq 'NO_PUBKEY|not signed|signatures (were invalid|could.t be verified)' "$SIM_DIR/twokeys-script.err"
check_eq "the keyring the script wrote lists one primary key, the pinned one" "$SIM_KEY_FPR" \
  "$(sim_inspect cat /usr/share/keyrings/cuda-archive-keyring.gpg | primaries)"
check_eq "no NVIDIA package installed" "" "$(sim_run dpkg-query -W -f '${db:Status-Status} ${Package}\n' 2>/dev/null |
  grep -E '^(installed|half|unpacked).*(nvidia|cuda|cudnn|nccl)')"

# The repository itself is sound here, so its keyring, list and apt's caches may stay; no package may, and
# nothing else (a nouveau blacklist or initramfs change for a driver that never got installed).
bad_repo badsum "a package fails apt's checksum" 'hash sum mismatch|checksum|apt-get' \
  '^[<>] \./(usr/share/keyrings/cuda-archive-keyring\.gpg|etc/apt/sources\.list\.d/cuda-ubuntu2204-x86_64\.list|var/lib/apt/lists/|var/cache/apt/)' \
  "the repository's keyring and list and apt's caches"

# A repository whose index, correctly signed, names a package like an apt option (a compromised mirror, a
# broken tool): libnccl2 depends on "--allow-unauthenticated", which the index also lists. The index is data:
# the name never reaches apt-get's or apt-mark's command line (it once did, as --allow-unauthenticated=1,
# which apt-get read as that option). apt itself then cannot fetch the listed package.
hostile_index() {
  python3 -c '
import sys
text = sys.stdin.read()
stanzas = text.rstrip("\n").split("\n\n")
out = []
for s in stanzas:
    if s.startswith("Package: libnccl2\n") and "\nVersion: 2.18.5-1+cuda12.2\n" in s:
        s = "\n".join(l if not l.startswith("Depends:") else l + ", --allow-unauthenticated (= 1)" for l in s.split("\n"))
        if "\nDepends:" not in s:
            s += "\nDepends: --allow-unauthenticated (= 1)"
    out.append(s)
out.append("Package: --allow-unauthenticated\nVersion: 1\nArchitecture: amd64\nFilename: ./allow-unauthenticated_1_amd64.deb\n"
           "Size: 1000\nSHA256: " + "0" * 64)
sys.stdout.write("\n\n".join(out) + "\n")'
}
cp -a "$SIM_DIR/www/cuda" "$SIM_DIR/www/hostile"
rm -f "$SIM_DIR/www/hostile/"{Release,InRelease,Release.gpg,Packages,Packages.gz}
_sim_index "$SIM_DIR/www/hostile" "$SIM_KEY_FPR" "NVIDIA" "NVIDIA CUDA" hostile_index
_sim_manifest stack-hostile hostile cuda.gpg "$SIM_KEY_FPR" "$SIM_KEY_SHA256"
check "the hostile index is what apt reads" grep -q '^Depends: .*--allow-unauthenticated (= 1)' "$SIM_DIR/www/hostile/Packages"
bad_repo hostile "a signed index naming a package like an apt option" 'fetch|allow-unauthenticated' \
  '^[<>] \./(usr/share/keyrings/cuda-archive-keyring\.gpg|etc/apt/sources\.list\.d/cuda-ubuntu2204-x86_64\.list|var/lib/apt/lists/|var/cache/apt/)' \
  "the repository's keyring and list and apt's caches"
check "no word of the index reached apt's command line" \
  sh -c "! grep -e '--allow-unauthenticated' '$SIM_HOST/sim/log/apt-get.log' '$SIM_HOST/sim/log/commands.log'"
check "the install line ends its options at --" grep -q ' install -- ' "$SIM_HOST/sim/log/apt-get.log"

# The repositories are sound, the host is not servable: its kernel (a provider's own build) has no headers
# package in the distribution, so DKMS could not build the driver. apply asks the host's own sources before
# any change; plan reads the host's lists.
sim_section "a kernel the distribution publishes no headers for"
sim_new_host
kernel=6.18.44-provider-gpu
echo "$kernel" >"$SIM_HOST/osrelease"
check_eq "the simulated server runs the provider's kernel" "$kernel" "$(sim_inspect cat /proc/sys/kernel/osrelease)"
sim_snapshot bare
sim_gp noheaders-plan --manifest /sim/stack.yaml plan
check "plan shows the driver refused, from the host's lists" \
  grep -q "linux-headers-$kernel is not in the host's apt lists" "$SIM_DIR/noheaders-plan.out"
sim_gp noheaders --manifest /sim/stack.yaml apply --yes
check_rc "apply refuses" 1 noheaders
check_eq "the error, word for word" "gpuprep: error: refused before any change: kernel $kernel has no headers package \
(linux-headers-$kernel is not in the index of this host's apt sources, fetched just now), so DKMS cannot build \
NVIDIA's module for it: install the distribution's current kernel (its meta package: linux-generic on Ubuntu, \
linux-image-amd64 on Debian) and reboot, or install this kernel's headers from its provider \
(/lib/modules/$kernel/build), then run gpuprep apply again; or leave the driver as it is with --skip driver" \
  "$(sim_err noheaders | tail -n 1)"
check_eq "no file changed outside gpuprep's log and journal" "" "$(sim_diff bare)"
check_eq "no command recorded" "" "$(sim_log commands)"
check "the host's sources were read into a private directory" \
  grep -q "Dir::State::Lists=/var/lib/gpuprep/preflight-host/lists .*update" "$SIM_HOST/sim/log/apt-get.log"
check "no install transaction" sh -c "! grep -q ' install ' '$SIM_HOST/sim/log/apt-get.log'"
check "the private lists are gone" sim_inspect test ! -e /var/lib/gpuprep/preflight-host
sim_gp noheaders-skip --manifest /sim/stack.yaml plan --skip driver
check_rc "with --skip driver the rest plans" 0 noheaders-skip
check "and nothing asks for the headers" sh -c "! grep -q 'headers' '$SIM_DIR/noheaders-skip.out'"

echo "sim_badrepo: scenarios took $(($(_sim_ms) - t_start)) ms"
sim_finish sim_badrepo
