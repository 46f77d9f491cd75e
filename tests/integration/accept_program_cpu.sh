#!/usr/bin/env bash
# ctest-labels: fixtures
# The embedded measurement program under a real PyTorch, on the CPU (the "[torch]" case of the unit binary:
# every phase, two workers, gloo's all-reduce, every record read back by gpuprep's own reader). Skipped (77)
# where no python3 imports torch (packaging/install-deps.sh installs Debian's python3-torch).
# Usage: accept_program_cpu.sh <gpuprep-binary> <source-dir> <build-dir>
set -euo pipefail
BUILD=$3
# shellcheck source=tests/integration/lib/torch_python.sh
source "$2/tests/integration/lib/torch_python.sh"
py=$(torch_python)
[ -n "$py" ] || { echo "SKIP: no python3 that imports torch"; exit 77; }
"$py" -c 'import torch; print("torch", torch.__version__)'
GPUPREP_TORCH_PYTHON=$py "$BUILD/tests/gpuprep_tests" "[torch]"
