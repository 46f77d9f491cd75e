#!/usr/bin/env bash
# Prints the sonames gpuprep itself dlopens, one per line, read from where the code declares them
# (src/sys/dl.h: one `inline constexpr const char* kLib...Soname = "SONAME";` per seam), so the package's
# Depends (build-deb.sh) and its checks (check-binary.sh) follow the code. Fails when it finds none.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sonames=$(sed -n 's/^inline constexpr const char\* kLib[A-Za-z]*Soname = "\(lib[a-z0-9_+.-]*\.so\.[0-9]*\)";$/\1/p' \
  "$here/../src/sys/dl.h")
[[ -n $sonames ]] || { echo "dlopened.sh: no kLib...Soname in src/sys/dl.h" >&2; exit 1; }
echo "$sonames"
