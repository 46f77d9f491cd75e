#!/usr/bin/env bash
# CI's release + package section (.ci/run calls it after the tests):
#   1. the binary: with BUILD_DIR, the one already built there (it must be a GPUPREP_PORTABLE build at -O2,
#      e.g. CI's tested build/); without, a Release build in build-release/ with GPUPREP_PORTABLE
#      (spdlog/fmt header-only, yaml-cpp static),
#   2. the .deb from that binary (packaging/build-deb.sh strips it; nothing is compiled twice),
#   3. the binary and Depends checked with objdump against Ubuntu 22.04, 24.04 and Debian 12
#      (packaging/check-binary.sh, packaging/tables/),
#   4. lintian (fails on errors),
#   5. without BUILD_DIR: that .deb installed and run in the simulated server, first boot and the cloud-init
#      template (tests/integration/sim_deb.sh; with BUILD_DIR, ctest already ran it on this binary).
# Usage: ci-package.sh [BUILD_DIR]. Prints the time of each part. Needs root for step 5 (the simulated server).
set -euo pipefail
cd "$(dirname "$0")/.."
t() { date +%s; }
start=$(t)
given=${1:-}
if [[ -n $given ]]; then
  grep -q '^GPUPREP_PORTABLE:BOOL=ON$' "$given/CMakeCache.txt" ||
    { echo "ci-package: $given is not a GPUPREP_PORTABLE build" >&2; exit 2; }
  grep -Eq '^CMAKE_BUILD_TYPE:STRING=(Release|RelWithDebInfo)$' "$given/CMakeCache.txt" ||
    { echo "ci-package: $given is not an optimised (Release/RelWithDebInfo) build" >&2; exit 2; }
  out=$given
  echo "ci-package: packaging the tested binary $given/gpuprep"
else
  launcher=()
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  fi
  # -O2 as Debian builds its packages (dpkg-buildflags), not CMake's -O3.
  cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" \
    -DGPUPREP_WERROR=ON -DGPUPREP_PORTABLE=ON -DGPUPREP_TESTS=OFF "${launcher[@]}" >/dev/null
  cmake --build build-release --target gpuprep -j"$(nproc)"
  out=build-release
fi
t_build=$(t)
echo "ci-package: binary ready in $((t_build - start)) s"

deb=$(bash packaging/build-deb.sh "$out/gpuprep" "$out/deb")
echo "ci-package: built $deb ($(stat -c %s "$deb") bytes; Depends: $(dpkg-deb -f "$deb" Depends))"
bash packaging/check-binary.sh "$out/gpuprep" "$deb"
bash tests/integration/package_checks.sh "$out/gpuprep" "$PWD"
lintian --fail-on error --display-info "$deb" | tee "$out/lintian.txt"
echo "ci-package: lintian: $(grep -c '^E: ' "$out/lintian.txt" || true) errors, $(grep -c '^W: ' "$out/lintian.txt" || true) warnings"
t_deb=$(t)
echo "ci-package: package, symbol checks and lintian $((t_deb - t_build)) s"

if [[ -z $given ]]; then
  bash tests/integration/sim_deb.sh "$out/gpuprep" "$PWD" "$PWD/$out" "$deb"
  echo "ci-package: sim_deb (install, first boot, cloud-init) $(($(t) - t_deb)) s"
fi
echo "ci-package: done in $(($(t) - start)) s"
