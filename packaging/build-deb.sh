#!/usr/bin/env bash
# Builds gpuprep_<version>_amd64.deb from an already built binary (no second compile): stages the Debian
# tree (binary, man page generated from the CLI's own --help, bash/zsh completions generated the same way,
# the systemd units, the cloud-init template, docs), computes Depends (dpkg-shlibdeps for the linked
# libraries, the tables in packaging/tables/ for the ones gpuprep dlopens, listed by packaging/dlopened.sh from
# src/sys/dl.h, and their *t64 names) and runs dpkg-deb.
# Usage: build-deb.sh BINARY OUTDIR   -> prints the .deb's path. Needs: dpkg-dev, help2man, binutils.
set -euo pipefail
bin=$(readlink -f "$1")
out=$(mkdir -p "$2" && cd "$2" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
here=$src/packaging
version=$("$bin" --version | awk '{print $2}')
[[ $version =~ ^[0-9]+(\.[0-9]+)*$ ]] || { echo "build-deb: unexpected version '$version'" >&2; exit 1; }
maintainer=${GPUPREP_MAINTAINER:-gpuprep maintainers <gpuprep-maintainers@example.org>}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$src" log -1 --format=%ct 2>/dev/null || date +%s)}

stage=$out/stage
rm -rf "$stage"
mkdir -p "$stage/DEBIAN" "$stage/usr/bin" "$stage/usr/share/doc/gpuprep" "$stage/usr/share/man/man1" \
  "$stage/usr/share/bash-completion/completions" "$stage/usr/share/zsh/vendor-completions" \
  "$stage/usr/lib/systemd/system" "$stage/usr/share/gpuprep"
install -m 0755 "$bin" "$stage/usr/bin/gpuprep"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$stage/usr/bin/gpuprep"

# The man page: help2man over `gpuprep --help`, with every verb's own --help as a section.
inc=$out/man.include
{
  echo "[COMMANDS]"
  for verb in $(bash "$here/completions.sh" verbs "$bin"); do
    echo ".SS gpuprep $verb"
    echo ".nf"
    "$bin" "$verb" --help | sed -e 's/\\/\\e/g' -e 's/^\./\\\&./'
    echo ".fi"
  done
  cat <<'MAN'
[FILES]
.TP
/var/lib/gpuprep/status.json
the outcome of the last apply: stack, per-layer verdicts, timestamps, exit code
.TP
/var/lib/gpuprep/journal.json
apply's step-by-step journal, read by the resume after the driver's reboot
.TP
/var/log/gpuprep.log
every apply's log
.TP
/usr/share/gpuprep/cloud-init.yaml
a cloud-init user-data template that installs this package and applies the stack at first boot
.TP
/var/lib/prometheus/node-exporter/gpuprep-health.prom
the GPU health verdict for node_exporter's textfile collector, written by gpuprep-health.timer (not enabled)
[EXIT STATUS]
0 nothing failed; 1 a check or step failed; 2 bad usage or bad input (nothing changed); 3 a reboot is
required before apply can continue.
MAN
} >"$inc"
help2man --no-info --no-discard-stderr --section=1 --name="turn a GPU server into a verified training host" \
  --include="$inc" --output="$out/gpuprep.1" "$bin"
gzip -9n -c "$out/gpuprep.1" >"$stage/usr/share/man/man1/gpuprep.1.gz"

bash "$here/completions.sh" bash "$bin" >"$stage/usr/share/bash-completion/completions/gpuprep"
bash "$here/completions.sh" zsh "$bin" >"$stage/usr/share/zsh/vendor-completions/_gpuprep"
for unit in gpuprep-firstboot.service gpuprep-resume.service gpuprep-watch.service gpuprep-health.service \
  gpuprep-health.timer; do
  sed 's|@GPUPREP@|/usr/bin/gpuprep|' "$src/templates/$unit" >"$stage/usr/lib/systemd/system/$unit"
done
install -m 0644 "$src/templates/cloud-init.yaml" "$stage/usr/share/gpuprep/cloud-init.yaml"
install -m 0644 "$src/templates/npd-gpuprep-health.json" "$stage/usr/share/gpuprep/npd-gpuprep-health.json"
install -m 0644 "$here/deb/copyright" "$stage/usr/share/doc/gpuprep/copyright"
install -D -m 0644 "$here/deb/lintian-overrides" "$stage/usr/share/lintian/overrides/gpuprep"
gzip -9n -c "$here/deb/changelog" >"$stage/usr/share/doc/gpuprep/changelog.gz"
find "$stage" -type d -exec chmod 0755 {} +
find "$stage/usr/share" -type f -exec chmod 0644 {} +

# Depends: what dpkg-shlibdeps computes for the NEEDED sonames (minimal versions from this machine's
# symbols files), then each package widened to the names the other distributions use (tables), then the
# dlopen'ed libraries, which dpkg-shlibdeps cannot see.
work=$out/shlibdeps
rm -rf "$work" && mkdir -p "$work/debian"
printf 'Source: gpuprep\n\nPackage: gpuprep\nArchitecture: any\n' >"$work/debian/control"
shlibs=$(cd "$work" && dpkg-shlibdeps -O -e"$stage/usr/bin/gpuprep" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
rm -rf "$work"
alternatives() {  # alternatives SONAME -> "pkgA | pkgB" over every table (first table's name first)
  awk -F'\t' -v s="$1" '$1 == "soname" && $2 == s && !seen[$3]++ {printf "%s%s", (n++ ? " | " : ""), $3}' \
    "$here"/tables/debian-12.tsv "$here"/tables/ubuntu-22.04.tsv "$here"/tables/ubuntu-24.04.tsv
}
depends=()
IFS=',' read -ra parts <<<"$shlibs"
for p in "${parts[@]}"; do
  p=$(xargs <<<"$p")
  name=${p%% *}
  rest=${p#"$name"}
  # A package the tables map from a soname to other names gets those names as alternatives (same bounds).
  so=$(awk -F'\t' -v n="$name" '$1 == "soname" && $3 == n {print $2; exit}' "$here"/tables/debian-12.tsv)
  if [[ -n $so ]]; then
    alts=$(alternatives "$so")
    if [[ $alts == *"|"* ]]; then
      p=$(sed "s/ | /${rest} | /g" <<<"$alts")$rest
    fi
  fi
  depends+=("$p")
done
# The libraries gpuprep itself dlopens (src/sys/dl.h, through dlopened.sh), with each distribution's name.
while read -r so; do
  alts=$(alternatives "$so")
  [[ -n $alts ]] || { echo "build-deb: $so (dlopened) is in no table of packaging/tables/" >&2; exit 1; }
  depends+=("$alts")
done < <(bash "$here/dlopened.sh")
dep_line=$(IFS=','; echo "${depends[*]}" | sed 's/,/, /g')

(cd "$stage" && find usr -type f -printf '%P\n' | LC_ALL=C sort | sed 's|^|usr/|' | xargs md5sum) >"$stage/DEBIAN/md5sums"
chmod 0644 "$stage/DEBIAN/md5sums"
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
sed -e "s#@VERSION@#$version#" -e "s#@INSTALLED_SIZE@#$size#" -e "s#@DEPENDS@#$dep_line#" \
  -e "s#@MAINTAINER@#$maintainer#" "$here/deb/control.in" >"$stage/DEBIAN/control"
deb=$out/gpuprep_${version}_amd64.deb
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "$deb"
