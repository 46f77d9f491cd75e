#!/usr/bin/env bash
# ctest-labels: package
# packaging/check-binary.sh on the binary under test, against the per-distribution tables: a default build
# links Debian 12's libspdlog.so.1.10/libfmt.so.9/libyaml-cpp.so.0.7 and must be refused for Ubuntu 22.04 and
# 24.04 with the soname named; a GPUPREP_PORTABLE build (the .deb's) must pass for all three. Also: the
# tables cite a public page on every row, the libraries gpuprep dlopens (src/sys/dl.h) are in every table and in
# the .deb's Depends, and the completions generated from --help parse in bash.
# Usage: bash package_checks.sh <gpuprep-binary> <source-dir>. Exit 77 without objdump.
set -uo pipefail
bin=$1
src=$2
command -v objdump >/dev/null || { echo "SKIP: objdump (binutils) not found"; exit 77; }
failures=0
check() { local d=$1; shift; if "$@"; then echo "  ok: $d"; else echo "  FAILED: $d" >&2; failures=$((failures + 1)); fi; }
out=$(bash "$src/packaging/check-binary.sh" "$bin" 2>&1)
rc=$?
echo "$out" | sed 's/^/    /'
# Read the whole header first: with pipefail, `objdump | grep -q` fails when grep stops early and objdump
# takes SIGPIPE, which would test a linked build as if it were the portable one.
needed=$(objdump -p "$bin" | grep 'NEEDED')
if grep -q 'NEEDED *libspdlog' <<<"$needed"; then
  check "a build linking libspdlog is refused" test "$rc" = 1
  check "  for Ubuntu 22.04, naming libspdlog.so.1.10" grep -q '^check-binary: ubuntu-22.04: .*needs libspdlog.so.1.10, which ubuntu-22.04 does not ship' <<<"$out"
  check "  for Ubuntu 24.04, naming libyaml-cpp.so.0.7" grep -q 'needs libyaml-cpp.so.0.7, which ubuntu-24.04 does not ship' <<<"$out"
  check "  and passes Debian 12" grep -q '^check-binary: debian-12: ok' <<<"$out"
else
  check "the portable build passes all three distributions" test "$rc" = 0
  check_count=$(grep -c ': ok (' <<<"$out")
  check "  three ok lines" test "$check_count" = 3
fi
# Depends is checked too: a package naming only Debian 12's libcurl4/libssl3 cannot install on 24.04 (*t64).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/stage/DEBIAN"
printf 'Package: gpuprep-probe\nVersion: 0\nArchitecture: amd64\nMaintainer: t <t@example.org>\nDepends: libc6 (>= 2.34), libgcc-s1, libstdc++6, libcurl4, libssl3\nDescription: t\n' \
  >"$tmp/stage/DEBIAN/control"
dpkg-deb --root-owner-group --build "$tmp/stage" "$tmp/probe.deb" >/dev/null
out=$(bash "$src/packaging/check-binary.sh" "$bin" "$tmp/probe.deb" 2>&1)
check "a Depends without libcurl4t64 is refused for Ubuntu 24.04" \
  grep -q "^check-binary: ubuntu-24.04: Depends 'libcurl4': no such package in ubuntu-24.04" <<<"$out"
check "  and libssl3 likewise" grep -q "^check-binary: ubuntu-24.04: Depends 'libssl3': no such package" <<<"$out"
printf 'Package: gpuprep-probe\nVersion: 0\nArchitecture: amd64\nMaintainer: t <t@example.org>\nDepends: libc6 (>= 2.36), libgcc-s1, libstdc++6, libcurl4 | libcurl4t64, libssl3 | libssl3t64\nDescription: t\n' \
  >"$tmp/stage/DEBIAN/control"
dpkg-deb --root-owner-group --build "$tmp/stage" "$tmp/probe.deb" >/dev/null
out=$(bash "$src/packaging/check-binary.sh" "$bin" "$tmp/probe.deb" 2>&1)
check "libc6 (>= 2.36) is refused for Ubuntu 22.04 (glibc 2.35)" \
  grep -q "^check-binary: ubuntu-22.04: Depends libc6 (>= 2.36), ubuntu-22.04 has 2.35" <<<"$out"
# gpuprep dlopens libarchive for redistributable archives: a Depends without it is refused on every distribution,
# under each one's name (libarchive13t64 on 24.04).
for d in "debian-12 libarchive13" "ubuntu-22.04 libarchive13" "ubuntu-24.04 libarchive13t64"; do
  check "a Depends without libarchive is refused: ${d%% *} needs ${d#* }" \
    grep -q "^check-binary: ${d%% *}: libarchive.so.13: Depends lacks ${d#* } (${d%% *})" <<<"$out"
done
# The dlopened sonames are the code's own (src/sys/dl.h): every DlOpen and DlLoadOnce in src/ names one of its
# kLib...Soname constants (or kNvidia...Soname: NVIDIA's libraries, which the driver brings), never a literal,
# and the list has the three seams' libraries.
check_eq() { if [[ $2 == "$3" ]]; then echo "  ok: $1"; else echo "  FAILED: $1: expected [$2], got [$3]" >&2; failures=$((failures + 1)); fi; }
check_eq "packaging/dlopened.sh lists libcurl, libcrypto and libarchive" "libcurl.so.4 libcrypto.so.3 libarchive.so.13" \
  "$(bash "$src/packaging/dlopened.sh" | tr '\n' ' ' | sed 's/ $//')"
check_eq "every DlOpen and DlLoadOnce call in src/ names a kLib...Soname (or kNvidia...Soname) of src/sys/dl.h" "" \
  "$(grep -rnE 'Dl(Open|LoadOnce)\(' "$src/src" | grep -v 'src/sys/dl\.\(h\|cc\):' | grep -vE 'Dl(Open|LoadOnce)\(k(Lib|Nvidia)[A-Za-z]*Soname[,)]')"
for so in $(bash "$src/packaging/dlopened.sh"); do
  const=$(sed -n "s/^inline constexpr const char\* \(kLib[A-Za-z]*Soname\) = \"$so\";\$/\1/p" "$src/src/sys/dl.h")
  check "$so (${const:-no constant}) is what a seam in src/sys/ dlopens" grep -rqE "Dl(Open|LoadOnce)\(${const:-none}[,)]" "$src/src/sys"
done
# The package itself: its Depends names each dlopened library with every distribution's name.
if command -v help2man >/dev/null && command -v dpkg-shlibdeps >/dev/null; then
  deb=$(bash "$src/packaging/build-deb.sh" "$bin" "$tmp/deb") || { echo "  FAILED: build-deb.sh" >&2; failures=$((failures + 1)); }
  deps=$(dpkg-deb -f "$deb" Depends 2>/dev/null)
  for alt in "libcurl4 | libcurl4t64" "libssl3 | libssl3t64" "libarchive13 | libarchive13t64"; do
    check "the .deb's Depends has $alt" grep -qF -- "$alt" <<<"$deps"
  done
  out=$(bash "$src/packaging/check-binary.sh" "$bin" "$deb" 2>&1)
  # (Only the dlopened ones: a default build also links Debian 12's spdlog/fmt/yaml-cpp, refused above.)
  check_eq "check-binary finds every dlopened library's package in the .deb's Depends, on every distribution" "" \
    "$(grep -F -f <(bash "$src/packaging/dlopened.sh" | sed 's/$/: Depends lacks/') <<<"$out")"

else
  echo "  SKIP (this part): help2man or dpkg-shlibdeps missing, the .deb is not built here"
fi
# A table row without a public source is not allowed.
check "every table row cites packages.ubuntu.com or packages.debian.org" \
  sh -c "! grep -vE '^#|^\$' '$src'/packaging/tables/*.tsv | grep -vE 'https://packages\.(ubuntu|debian)\.(com|org)/'"
bash "$src/packaging/completions.sh" bash "$bin" >"$tmp/gpuprep.bash"
check "the generated bash completion parses" bash -n "$tmp/gpuprep.bash"
check "it completes every verb" sh -c "for v in \$(bash '$src/packaging/completions.sh' verbs '$bin'); do grep -q \"^    \$v)\" '$tmp/gpuprep.bash' || exit 1; done"
if ((failures)); then echo "package_checks: $failures failed" >&2; exit 1; fi
echo "package_checks: all checks passed"
