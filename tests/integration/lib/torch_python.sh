# Sourced by the tests that run gpuprep's measurement program under a real PyTorch on the CPU.
# torch_python: prints the first python3 that imports torch (Debian's /usr/bin/python3 with python3-torch
# first, then python3 on PATH); prints nothing when none does.
torch_python() {
  local candidate
  for candidate in /usr/bin/python3 python3; do
    if command -v "$candidate" >/dev/null && "$candidate" -c 'import torch' 2>/dev/null; then
      command -v "$candidate"
      return 0
    fi
  done
}
