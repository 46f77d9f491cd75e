#!/usr/bin/env bash
# Helpers for the redistributable-archive scenario (tests/integration/sim_redist.sh); source after lib.sh.
# NVIDIA-layout cuDNN trees (tests/redist/make_redist.py) with a stand-in libcudnn.so.9 that answers
# cudnnGetVersion, and stacks whose cudnn section says `source: redist`.

SIM_REDIST_MAKE=$SIM_LIB_DIR/../redist/make_redist.py

# sim_redist_lib OUT CODE: a shared library with soname libcudnn.so.9 whose cudnnGetVersion returns CODE.
sim_redist_lib() {
  printf '#include <stddef.h>\nsize_t cudnnGetVersion(void) { return %s; }\n' "$2" >"$SIM_DIR/cudnn_stub.c"
  gcc -shared -fPIC -Wl,-soname,libcudnn.so.9 -o "$1" "$SIM_DIR/cudnn_stub.c" || sim_fail "building the libcudnn stand-in"
}

# sim_redist_tree DIR VARIANT [VERSION [RELEASE]]: a redist tree (redistrib_RELEASE.json, default 9.12.0, +
# archive) in DIR; another release beside it in the same DIR is a second index, as on NVIDIA's server.
sim_redist_tree() {
  local version=${3:-9.12.0.46} release=${4:-9.12.0} minor
  minor=$(cut -d. -f2 <<<"$version")
  sim_redist_lib "$SIM_DIR/libcudnn.so" "$((90000 + minor * 100))"
  python3 "$SIM_REDIST_MAKE" "$1" --release "$release" --version "$version" --cuda 12 --variant "$2" \
    --lib "$SIM_DIR/libcudnn.so" >/dev/null || sim_fail "make_redist.py $2"
}

# sim_stack_with_section NAME SECTION YAML: $SIM_DIR/common/NAME.yaml, the sim stack (named sim-NAME) with its
# top-level SECTION replaced by YAML (the whole section, its key line included).
sim_stack_with_section() {
  python3 - "$SIM_DIR/common/stack.yaml" "$SIM_DIR/common/$1.yaml" "$1" "$2" "$3" <<'PY' || sim_fail "writing $1.yaml"
import re, sys
src, dst, name, section, body = sys.argv[1:6]
text = open(src).read()
text = re.sub(r"(?m)^  name: .*$", "  name: sim-" + name, text, count=1)
text, n = re.subn(r"(?m)^" + re.escape(section) + r":\n(?:  .*\n)+", lambda m: body, text)
assert n == 1
open(dst, "w").write(text)
PY
}

# sim_redist_manifest NAME BASE [VERSION RELEASE]: $SIM_DIR/common/NAME.yaml, the sim stack with cuDNN VERSION
# (default 9.12.0.46, release 9.12.0) for CUDA 12 from NVIDIA's redistributable archive at BASE (URL or
# directory) instead of apt.
sim_redist_manifest() {
  sim_stack_with_section "$1" cudnn "cudnn:
  version: ${3:-9.12.0.46}
  cuda_major: 12
  source: redist
  redist:
    release: \"${4:-9.12.0}\"
    base: $2
"
}

# sim_redist_cuda_tree DIR: NVIDIA's CUDA 12.2.2 redist layout in DIR (redistrib_12.2.2.json + one archive per
# component), the versions of https://developer.download.nvidia.com/compute/cuda/redist/redistrib_12.2.2.json:
# cuda_cudart 12.2.140 (a stand-in libcudart.so.12.2.140 answering cudaRuntimeGetVersion), cuda_nvcc 12.2.140,
# libcublas 12.2.5.6 (a stand-in ELF with soname libcublas.so.12, so that ldconfig takes it).
sim_redist_cuda_tree() {
  gcc -O2 -shared -fPIC -Wl,-soname,libcudart.so.12 -DSIM_KIND_CUDART -o "$SIM_DIR/libcudart.so" \
    "$SIM_LIB_DIR/src/versionlib.c" -ldl || sim_fail "building the libcudart stand-in"
  printf 'int cublasGetVersion_sim(void) { return 12; }\n' >"$SIM_DIR/cublas_stub.c"
  gcc -O2 -shared -fPIC -Wl,-soname,libcublas.so.12 -o "$SIM_DIR/libcublas.so" "$SIM_DIR/cublas_stub.c" ||
    sim_fail "building the libcublas stand-in"
  local c a
  for c in "cuda_cudart 12.2.140 --lib $SIM_DIR/libcudart.so" "cuda_nvcc 12.2.140" \
    "libcublas 12.2.5.6 --lib $SIM_DIR/libcublas.so"; do
    read -ra a <<<"$c"
    python3 "$SIM_REDIST_MAKE" "$1" --release 12.2.2 --component "${a[0]}" --version "${a[1]}" "${a[@]:2}" \
      >/dev/null || sim_fail "make_redist.py ${a[0]}"
  done
}

# sim_redist_cuda_manifest NAME BASE: $SIM_DIR/common/NAME.yaml, the sim stack with CUDA 12.2.2's cudart, nvcc
# and cuBLAS from NVIDIA's redistributable archives at BASE instead of apt.
sim_redist_cuda_manifest() {
  sim_stack_with_section "$1" cuda "cuda:
  version: 12.2.2
  source: redist
  redist:
    release: \"12.2.2\"
    components: [cuda_cudart, cuda_nvcc, libcublas]
    base: $2
"
}
