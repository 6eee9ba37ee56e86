#!/usr/bin/env bash
# Builds the libFuzzer targets in a clang tree of their own and runs each one for a short while; fails on any
# crash, sanitizer report, broken invariant, timeout or out-of-memory. Run by CTest (fuzz_short) from the
# ordinary GCC build, or by hand for a longer run (docs/reliability.md, "Fuzzing"):
#   tests/fuzz/run_fuzz.sh SOURCE_DIR BUILD_DIR     e.g. tests/fuzz/run_fuzz.sh . build-fuzz
# Environment: WEFT_FUZZ_SECONDS per target (10), WEFT_FUZZ_TARGETS (all: "fuzz_algo_rules fuzz_bootstrap"),
# WEFT_FUZZ_JOBS for the build (2). New inputs libFuzzer finds are kept in BUILD_DIR/corpus/<target>, crashes
# in BUILD_DIR/artifacts/.
# Exit 77 (CTest's skip) when clang or libFuzzer is not installed.
set -euo pipefail

if (($# != 2)); then
  echo "usage: $0 SOURCE_DIR BUILD_DIR" >&2
  exit 2
fi
src=$(cd "$1" && pwd)
build=$(mkdir -p "$2" && cd "$2" && pwd)
seconds=${WEFT_FUZZ_SECONDS:-10}
jobs=${WEFT_FUZZ_JOBS:-2}

skip() {
  echo "SKIPPED: $* (install the Debian package clang; setup.sh does)"
  exit 77
}
command -v clang++ > /dev/null || skip "clang++ is not installed"
command -v clang > /dev/null || skip "clang is not installed"
# libFuzzer ships with clang's runtime; a clang without it cannot link -fsanitize=fuzzer.
probe=$build/probe
mkdir -p "$probe"
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' > "$probe/probe.cpp"
clang++ -fsanitize=fuzzer,address,undefined "$probe/probe.cpp" -o "$probe/probe" > "$probe/log" 2>&1 ||
  skip "clang++ cannot link -fsanitize=fuzzer,address,undefined (libFuzzer or sanitizer runtimes missing): $(tail -n 3 "$probe/log")"

# The project's own CMake, only the fuzz targets built (tests/fuzz/CMakeLists.txt), as a unity build (64 s
# instead of 79 on the 2-vCPU EPYC CI box).
if ! cmake -S "$src" -B "$build" -DWEFT_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_UNITY_BUILD=ON > "$build/configure.log" 2>&1; then
  tail -n 40 "$build/configure.log"
  echo "FAILED: configuring the clang fuzz tree in $build"
  exit 1
fi
if ! cmake --build "$build" --target weft_fuzz -j "$jobs" > "$build/build.log" 2>&1; then
  grep -E "error|Error" "$build/build.log" | head -n 40
  echo "FAILED: building the fuzz targets (log: $build/build.log)"
  exit 1
fi

targets=${WEFT_FUZZ_TARGETS:-$(cd "$build/fuzz-bin" && ls fuzz_*)}
mkdir -p "$build/artifacts" "$build/logs"
failed=()
for target in $targets; do
  corpus=$build/corpus/$target
  mkdir -p "$corpus"
  log=$build/logs/$target.log
  # New inputs go to the first folder; the seeds (read only) are the second. -error_exitcode: libFuzzer's own
  # default, 77, is CTest's skip. -timeout: one input may take at most 10 s. -rss_limit_mb/-malloc_limit_mb:
  # an allocation an input can make unbounded is a finding.
  status=0
  "$build/fuzz-bin/$target" -max_total_time="$seconds" -error_exitcode=1 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
    -print_final_stats=1 -artifact_prefix="$build/artifacts/$target-" "$corpus" "$src/tests/fuzz/corpus/$target" \
    > "$log" 2>&1 || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<< "$done_line")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<< "$done_line")
  files=$(find "$corpus" -type f | wc -l)
  if ((status != 0)); then
    tail -n 40 "$log"
    echo "FAILED: $target (exit $status; log $log, input in $build/artifacts/)"
    failed+=("$target")
  else
    printf '%-24s %10s runs %8s exec/s  cov %5s  ft %6s  corpus %5s files\n' "$target" "${runs:-?}" \
      "${speed:-?}" "${cov:-?}" "${ft:-?}" "$files"
  fi
done
if ((${#failed[@]})); then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "all fuzz targets ran ${seconds} s each without a finding"
