#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang, ASan+UBSan) in build-fuzz/ and runs each one.
#   tools/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
# CI runs it with 20 s per target (10 targets: about 4 minutes after the build). For long runs give hours:
#   tools/fuzz.sh 3600            # an hour per target; the corpus grows in build-fuzz/corpus/<target>
# First every input in fuzz/regressions/<target>/ (each one crashed once) is replayed; then the target runs
# from the seeds (fuzz/seeds.sh) and its saved corpus. A crash leaves the input in build-fuzz/crashes/ and
# fails the run: fix the bug, then commit the input to fuzz/regressions/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-50}
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(fuzz_manifest fuzz_version fuzz_probe_parsers fuzz_snapshot fuzz_input fuzz_remote fuzz_size fuzz_watch_record fuzz_apt_argv fuzz_daemon_json)
build=build-fuzz
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
if [[ ! -f $build/build.ninja ]]; then
  cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
        -DCMAKE_C_COMPILER=clang -DGPUPREP_FUZZ=ON -DGPUPREP_TESTS=OFF "${launcher[@]}" >/dev/null
fi
cmake --build $build -j"$(nproc)" --target fuzzers
seeds=$build/seeds
rm -rf "$seeds"
bash fuzz/seeds.sh "$seeds" >/dev/null
mkdir -p $build/crashes
status=0
for t in "${targets[@]}"; do
  bin=$build/fuzz/$t
  corpus=$build/corpus/$t
  mkdir -p "$corpus"
  mapfile -t regressions < <(find fuzz/regressions/$t -type f 2>/dev/null | sort)
  if [[ ${#regressions[@]} -gt 0 ]] && ! "$bin" -runs=0 "${regressions[@]}" >$build/$t.replay.log 2>&1; then
    echo "fuzz: $t: a regression input crashes again (see $build/$t.replay.log)" >&2
    status=1
    continue
  fi
  log=$build/$t.log
  if "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
       -artifact_prefix=$build/crashes/$t- "$corpus" "$seeds/$t" >"$log" 2>&1; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
    echo "fuzz: $t: ${execs:-?} executions in ${seconds} s, ${cov:-cov: ?}, ${#regressions[@]} regression inputs, no crash"
  else
    echo "fuzz: $t: CRASH (input in $build/crashes/; log $log)" >&2
    grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$log" | head -5 >&2 || true
    status=1
  fi
done
exit $status
