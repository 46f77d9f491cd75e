#!/usr/bin/env bash
# CI's release + package section (.ci/run calls it after the sanitizer build and its tests):
#   1. a Release build in build-release/ with GPUPREP_PORTABLE (spdlog/fmt header-only, yaml-cpp static),
#   2. the .deb from that binary (packaging/build-deb.sh; nothing is compiled twice),
#   3. the binary and Depends checked with objdump against Ubuntu 22.04, 24.04 and Debian 12
#      (packaging/check-binary.sh, packaging/tables/),
#   4. lintian (fails on errors),
#   5. that .deb installed and run in the simulated server, first boot and the cloud-init template
#      (tests/integration/sim_deb.sh). The Ansible role (sim_ansible.sh) and the browser test run in ctest.
# Prints the time of each part. Needs root for step 5 (the simulated server), like the rest of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
t() { date +%s; }
start=$(t)
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
# -O2 as Debian builds its packages (dpkg-buildflags), not CMake's -O3.
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" \
  -DGPUPREP_WERROR=ON -DGPUPREP_PORTABLE=ON -DGPUPREP_TESTS=OFF "${launcher[@]}" >/dev/null
cmake --build build-release --target gpuprep -j"$(nproc)"
t_build=$(t)
echo "ci-package: release build $((t_build - start)) s"

deb=$(bash packaging/build-deb.sh build-release/gpuprep build-release/deb)
echo "ci-package: built $deb ($(stat -c %s "$deb") bytes; Depends: $(dpkg-deb -f "$deb" Depends))"
bash packaging/check-binary.sh build-release/gpuprep "$deb"
bash tests/integration/package_checks.sh build-release/gpuprep "$PWD"
lintian --fail-on error --display-info "$deb" | tee build-release/lintian.txt
echo "ci-package: lintian: $(grep -c '^E: ' build-release/lintian.txt || true) errors, $(grep -c '^W: ' build-release/lintian.txt || true) warnings"
t_deb=$(t)
echo "ci-package: package, symbol checks and lintian $((t_deb - t_build)) s"

bash tests/integration/sim_deb.sh build-release/gpuprep "$PWD" "$PWD/build-release" "$deb"
t_sim=$(t)
echo "ci-package: sim_deb (install, first boot, cloud-init) $((t_sim - t_deb)) s"
echo "ci-package: done in $(($(t) - start)) s"
