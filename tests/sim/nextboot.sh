# shellcheck shell=bash
# The next boot keeps its driver: a kernel update after apply, on a converged simulated server. Real dpkg
# installs linux-image-K2, then linux-headers-K2 (stub packages of the simulated archive, build-packages.sh)
# through Debian's own kernel hooks (/etc/kernel/postinst.d/dkms, header_postinst.d/dkms, dkms_autoinstaller
# from Debian's dkms package; only the dkms program stands in: src/dkms.sh, which builds a module only when
# K2's headers are there). GRUB's menu is written by Debian's grub-mkconfig and /etc/grub.d/10_linux
# (grub-common, with a stand-in grub-probe), grubenv by the real grub-editenv and grub-reboot; the simulated
# boot picks the kernel by GRUB's rules (guest/grub-pick) and loads nvidia only from that kernel's modules.dep.
# Source after lib.sh.

# sim_k2: the kernel release of the update (build-packages.sh: the running kernel's next major release).
sim_k2() { echo "$(($(uname -r | cut -d. -f1) + 1)).0.0-1-generic"; }

# _sim_grub_install (a shell script for the simulated server): Debian's grub-mkconfig,
# /etc/grub.d/{00_header,10_linux}, grub-editenv and grub-reboot (lib.sh: _sim_boot_debs), the stand-in
# grub-probe, /etc/default/grub as grub2-common ships it, an empty grubenv, and the running kernel's image in
# /boot (10_linux lists /boot/vmlinuz-*; the build machine's own kernels there are hidden); from then on the
# simulated boot is GRUB's (/sim/control/grub-boot).
# shellcheck disable=SC2016  # expanded inside the simulated server
_sim_grub_install='tar -xf /sim/guest/grub-common.tar -C / --no-same-owner
  install -m 0755 /sim/guest/grub-probe /usr/sbin/grub-probe
  rm -rf /boot/grub /boot/vmlinuz-* /boot/initrd.img-*
  mkdir -p /boot/grub
  touch /sim/control/grub-boot
  cp /usr/share/grub/default/grub /etc/default/grub
  echo "simulated kernel image $(uname -r)" >"/boot/vmlinuz-$(uname -r)"
  grub-editenv /boot/grub/grubenv create'

# _sim_driver_findings NAME: "CODE STATUS MESSAGE" of each driver finding in doctor --json's NAME.out.
_sim_driver_findings() {
  python3 - "$SIM_DIR/$1.out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for l in d["layers"]:
    if l["name"] == "driver":
        for f in l.get("findings", []):
            print(f.get("code", ""), f["status"], f["message"])
PY
}

# sim_next_boot_scenario MANIFEST VERSION: on a server converged to MANIFEST (driver VERSION, DKMS), the
# kernel update without its headers (doctor names K2 before the reboot; the reboot into K2 has no driver),
# then with them (DKMS builds K2's module through the header hook; grub-reboot into K2 loads the driver).
sim_next_boot_scenario() {
  local m=$1 ver=$2 k1 k2 t0 f u=$SIM_HOST/upper
  k1=$(uname -r)
  k2=$(sim_k2)
  t0=$(_sim_ms)
  sim_section "a kernel update after apply, its headers not installed: doctor names $k2 before the reboot"
  # One session (each costs a namespace and mounts): GRUB, the kernel image by apt-get and dpkg, the menu.
  sim_run bash -c "set -e; $_sim_grub_install
    DEBIAN_FRONTEND=noninteractive apt-get -y -q install linux-image-$k2 >/sim/k2-image.out 2>&1 || echo image >>/sim/k2-failed
    ls /lib/modules/$k2/updates/dkms >/sim/k2-dkms-built 2>/dev/null || true
    grub-mkconfig -o /boot/grub/grub.cfg >/sim/grub-mkconfig.out 2>&1 || echo grub-mkconfig >>/sim/k2-failed" ||
    sim_fail "installing grub-common into the simulated server"
  check_eq "apt-get installs linux-image-$k2 from the archive (real dpkg); grub-mkconfig writes the menu" "" \
    "$(cat "$SIM_HOST/sim/k2-failed" 2>/dev/null)"
  check "Debian's dkms hook ran for $k2 and skipped it: no headers" \
    grep -q "autoinstall for kernel $k2 was skipped since the kernel headers for this kernel do not seem to be installed" "$SIM_HOST/sim/k2-image.out"
  check_eq "no nvidia module for $k2" "" "$(cat "$SIM_HOST/sim/k2-dkms-built")"
  check "grub.cfg's first entry boots $k2 (10_linux: newest first), the running $k1 after it" sh -c \
    "grep -E '^[[:space:]]*linux[[:space:]]' '$u/boot/grub/grub.cfg' | head -n 1 | grep -q 'vmlinuz-$k2 ' &&
     grep -q 'vmlinuz-$k1 ' '$u/boot/grub/grub.cfg'"
  sim_gp nextboot-doctor-noheaders --manifest "$m" doctor --json
  f=$(_sim_driver_findings nextboot-doctor-noheaders)
  check "doctor: driver.kernel-no-module names $k2 and says it has no headers" \
    grep -qE "^driver.kernel-no-module warn installed kernel $k2 .*no headers for it" <<<"$f"
  check "doctor: driver.next-boot-no-module names $k2 (GRUB's default)" \
    grep -qE "^driver.next-boot-no-module fail the next boot starts kernel $k2 " <<<"$f"
  check_eq "doctor exits 1 (a fail finding)" 1 "$SIM_RC"
  sim_reboot --no-resume
  check "the simulated boot starts $k2 (GRUB's default, entry 0)" grep -q "^boot: kernel $k2 (default '0'" <<<"$SIM_BOOT_LOG"
  check "and loads no nvidia module: $k2 has none" grep -q "^boot: nvidia not loaded: no nvidia module for kernel $k2" <<<"$SIM_BOOT_LOG"
  check "no driver after the reboot (/sys/module/nvidia absent)" test ! -e "$SIM_HOST/sys/module/nvidia"
  echo "   (kernel update without headers: $(($(_sim_ms) - t0)) ms)"

  t0=$(_sim_ms)
  sim_section "its headers installed: DKMS builds $k2's module through Debian's header hook; grub-reboot into $k2"
  # One session: the headers by apt-get and dpkg; the module's .modinfo read back; GRUB_DEFAULT=saved with the
  # running kernel saved and a one-shot grub-reboot into K2 by id (next_entry wins over saved_entry once).
  rm -f "$SIM_HOST/sim/k2-failed"
  cat >"$SIM_HOST/sim/k2-headers.sh" <<'SH'
k1=$1 k2=$2
DEBIAN_FRONTEND=noninteractive apt-get -y -q install "linux-headers-$k2" >/sim/k2-headers.out 2>&1 || echo headers >>/sim/k2-failed
zstd -dcq "/lib/modules/$k2/updates/dkms/nvidia.ko.zst" >/tmp/nvidia.ko &&
  objcopy -O binary --only-section=.modinfo /tmp/nvidia.ko /tmp/nvidia.info && tr '\0' '\n' </tmp/nvidia.info >/sim/k2-modinfo
od -An -c -N4 /tmp/nvidia.ko | tr -d ' ' >/sim/k2-magic
cp "/lib/modules/$k2/modules.dep" /sim/k2-modules.dep
sed -i 's/^GRUB_DEFAULT=.*/GRUB_DEFAULT=saved/' /etc/default/grub
grub-mkconfig -o /boot/grub/grub.cfg >>/sim/grub-mkconfig.out 2>&1 || echo grub-mkconfig >>/sim/k2-failed
# 10_linux's ids: submenu '...' $menuentry_id_option 'gnulinux-advanced-UUID', and in it
# menuentry '..., with Linux K' ... $menuentry_id_option 'gnulinux-K-advanced-UUID'
id_of() { sed -nE "s/^[[:space:]]*$1 '$2' .*[$]menuentry_id_option '([^']+)'.*/\1/p" /boot/grub/grub.cfg | head -n 1; }
sub=$(id_of submenu "[^']*") k1id=$(id_of menuentry "[^']*$k1") k2id=$(id_of menuentry "[^']*$k2")
[ -n "$sub" ] && [ -n "$k1id" ] && [ -n "$k2id" ] || echo menu-ids >>/sim/k2-failed
grub-editenv /boot/grub/grubenv set "saved_entry=$sub>$k1id" || echo grub-editenv >>/sim/k2-failed
grub-reboot "$sub>$k2id" || echo grub-reboot >>/sim/k2-failed
echo "$sub>$k2id" >/sim/k2-entry
SH
  sim_run bash /sim/k2-headers.sh "$k1" "$k2"
  check_eq "apt-get installs linux-headers-$k2; grub-mkconfig, grub-editenv and grub-reboot succeed" "" \
    "$(cat "$SIM_HOST/sim/k2-failed" 2>/dev/null)"
  check "Debian's header hook ran dkms autoinstall for $k2" grep -qx "dkms autoinstall --kernelver $k2" "$SIM_HOST/sim/log/commands.log"
  check_eq "DKMS's module for $k2 is an ELF object, zstd-compressed (as $k2's config asks)" '177ELF' "$(cat "$SIM_HOST/sim/k2-magic")"
  check_eq "whose .modinfo names the driver's version" "version=$ver" "$(grep '^version=' "$SIM_HOST/sim/k2-modinfo")"
  check "listed in $k2's modules.dep" grep -qx "updates/dkms/nvidia.ko.zst:" "$SIM_HOST/sim/k2-modules.dep"
  check "grub-reboot wrote the one-shot next_entry" grep -qx "next_entry=$(cat "$SIM_HOST/sim/k2-entry")" "$u/boot/grub/grubenv"
  sim_gp nextboot-doctor-headers --manifest "$m" doctor --json
  f=$(_sim_driver_findings nextboot-doctor-headers)
  check_eq "doctor: $k2 has its module now" "" "$(grep -E "^driver\.(kernel-no-module|next-boot-no-module|dkms-build-failed) .* ${k2}[ ,]" <<<"$f")"
  check "doctor: the next boot is $k2 by grubenv's next_entry, and it has the module" \
    grep -qE "^driver.next-boot ok next boot: kernel $k2, which has the module" <<<"$f"
  sim_reboot --no-resume
  check "the simulated boot starts $k2 by that next_entry (over saved_entry)" \
    grep -qF "boot: kernel $k2 (next_entry (one-shot, now cleared) '$(cat "$SIM_HOST/sim/k2-entry")'" <<<"$SIM_BOOT_LOG"
  check_eq "the driver is loaded on $k2, at the module's own version" "$ver" "$(cat "$SIM_HOST/sys/module/nvidia/version" 2>/dev/null)"
  check "the one-shot next_entry is used up (GRUB's save_env)" grep -qx "next_entry=" "$u/boot/grub/grubenv"
  echo "   (kernel update with headers: $(($(_sim_ms) - t0)) ms)"
}
