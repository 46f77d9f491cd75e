#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/: clang, ASan+UBSan, in the sanitizer build beside its tests) and runs
# each one.
#   tools/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
# The build directory is $GPUPREP_FUZZ_BUILD, by default build-asan (configured here with clang when it
# does not exist; an existing one must be a clang GPUPREP_SANITIZE + GPUPREP_FUZZ build, as .ci/run's is).
# Without TARGETs, every target of fuzz/CMakeLists.txt's GP_FUZZERS list.
# CI runs it with 20 s per target, one target per CPU (14 targets on two CPUs: about 2.5 minutes). For long runs give hours:
#   tools/fuzz.sh 3600            # an hour per target; the corpus grows in BUILD/corpus/<target>
# First every input in fuzz/regressions/<target>/ (each one crashed once) is replayed; then the target runs
# from the seeds (fuzz/seeds.sh) and its saved corpus. A crash leaves the input in BUILD/crashes/ and
# fails the run: fix the bug, then commit the input to fuzz/regressions/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-50}
shift || true
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  mapfile -t targets < <(sed -n '/^set(GP_FUZZERS/,/)/p' fuzz/CMakeLists.txt | grep -o '\bfuzz_[a-z0-9_]*')
  [[ ${#targets[@]} -gt 0 ]] || { echo "fuzz.sh: no GP_FUZZERS list in fuzz/CMakeLists.txt" >&2; exit 2; }
fi
build=${GPUPREP_FUZZ_BUILD:-build-asan}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
if [[ ! -f $build/build.ninja ]]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
        -DCMAKE_C_FLAGS_DEBUG="-O1 -g1" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
        -DGPUPREP_SANITIZE=ON -DGPUPREP_FUZZ=ON "${launcher[@]}" >/dev/null
fi
grep -q '^GPUPREP_FUZZ:BOOL=ON$' "$build/CMakeCache.txt" ||
  { echo "fuzz.sh: $build is not a GPUPREP_FUZZ build (set GPUPREP_FUZZ_BUILD or remove it)" >&2; exit 2; }
cmake --build "$build" -j"$(nproc)" --target fuzzers
seeds=$build/seeds
rm -rf "$seeds"
bash fuzz/seeds.sh "$seeds" >/dev/null
mkdir -p $build/crashes
# One target per CPU at a time (GPUPREP_FUZZ_JOBS, default nproc): each is single-threaded, so two CPUs fuzz
# every target for its full time in half the wall time. Each writes its verdict to $build/TARGET.verdict;
# they are printed in the list's order once all have ended.
fuzz_one() {  # fuzz_one TARGET: exit 0 when no input crashes it
  local t=$1 bin=$build/fuzz/$1 corpus=$build/corpus/$1 log=$build/$1.log verdict=$build/$1.verdict execs cov
  local regressions=()
  mkdir -p "$corpus"
  mapfile -t regressions < <(find fuzz/regressions/$t -type f 2>/dev/null | sort)
  if [[ ${#regressions[@]} -gt 0 ]] && ! "$bin" -runs=0 "${regressions[@]}" >$build/$t.replay.log 2>&1; then
    echo "fuzz: $t: a regression input crashes again (see $build/$t.replay.log)" >"$verdict"
    return 1
  fi
  if "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
       -artifact_prefix=$build/crashes/$t- "$corpus" "$seeds/$t" >"$log" 2>&1; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
    echo "fuzz: $t: ${execs:-?} executions in ${seconds} s, ${cov:-cov: ?}, ${#regressions[@]} regression inputs, no crash" >"$verdict"
  else
    { echo "fuzz: $t: CRASH (input in $build/crashes/; log $log)"
      grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$log" | head -5 || true; } >"$verdict"
    return 1
  fi
}
parallel=${GPUPREP_FUZZ_JOBS:-$(nproc)}
for t in "${targets[@]}"; do
  rm -f "$build/$t.verdict"
  while (( $(jobs -rp | wc -l) >= parallel )); do wait -n || true; done
  fuzz_one "$t" &
done
wait || true
status=0
for t in "${targets[@]}"; do
  if [[ ! -s $build/$t.verdict ]]; then
    echo "fuzz: $t: no verdict (the run did not finish)" >&2
    status=1
  elif grep -q '^fuzz: [a-z0-9_]*: [0-9?]* executions' "$build/$t.verdict"; then
    cat "$build/$t.verdict"
  else
    cat "$build/$t.verdict" >&2
    status=1
  fi
done
exit $status
