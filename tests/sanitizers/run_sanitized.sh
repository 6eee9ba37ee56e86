#!/usr/bin/env bash
# Builds Weft with sanitizers in a tree of its own (WEFT_SANITIZE, cmake/Sanitize.cmake) and runs part of the
# test suite there; fails on any failing test and on any sanitizer report, even one from a process whose exit
# status its test ignores. Run by CTest (sanitizers_asan) from the ordinary build, or by hand
# (docs/reliability.md, "Sanitizers"):
#   tests/sanitizers/run_sanitized.sh SOURCE_DIR BUILD_DIR [SANITIZERS]
#   e.g. tests/sanitizers/run_sanitized.sh . build-asan              (address,undefined, the CI subset)
#        WEFT_SANITIZE_SUBSET=all tests/sanitizers/run_sanitized.sh . build-asan   (every test)
#        WEFT_SANITIZE_TESTS=faults_ tests/sanitizers/run_sanitized.sh . build-asan  (some of the CI subset)
#        tests/sanitizers/run_sanitized.sh . build-tsan thread
# SANITIZERS: address,undefined (default) or thread.
# Environment:
#   WEFT_SANITIZE_SUBSET  ci (default): the targets and tests below; all: every target, every test
#   WEFT_SANITIZE_JOBS    parallel build jobs (2)
#   WEFT_SANITIZE_TEST_JOBS  ctest -j (4: many tests mostly wait, for a timeout or a killed peer; on two cores
#                         the CI subset's tests took 337-390 s instead of about 425 with -j2, and 206 s with
#                         -j4 against 235 s with -j3 in a later pair of runs, 2026-11-29)
#   WEFT_SANITIZE_OPT     optimisation level of the sanitized tree (-O1: builds about twice as fast as the
#                         tree's usual -O3 and is what the sanitizers' documentation suggests)
#   WEFT_SANITIZE_TESTS   only the tests whose names match this regular expression (Python's re.search)
#   WEFT_SANITIZE_CTEST   extra ctest arguments, e.g. "--repeat until-fail:3"
#   COLLTEST_COUNTS       the counts test_collectives sweeps (ci: 0,1,7,1000,65539, a sixteenth of the suite's
#                         largest: checking each element under ASan costs more than the collective; all: unset)
#   ALGOTEST_MATRIX       the algorithm simulations' types and ops (ci: sizes, one type per element size with sum
#                         and every op on float32; all: unset, the whole matrix)
# Reports are also written to BUILD_DIR/sanitizer-logs/ (cleared at each run).
# Exit 77 (CTest's skip) when the compiler cannot link the sanitizers' runtime.
set -euo pipefail

if (($# < 2 || $# > 3)); then
  echo "usage: $0 SOURCE_DIR BUILD_DIR [address,undefined|thread]" >&2
  exit 2
fi
src=$(cd "$1" && pwd)
build=$(mkdir -p "$2" && cd "$2" && pwd)
sanitize=${3:-address,undefined}
subset=${WEFT_SANITIZE_SUBSET:-ci}
jobs=${WEFT_SANITIZE_JOBS:-2}
test_jobs=${WEFT_SANITIZE_TEST_JOBS:-4}
opt=${WEFT_SANITIZE_OPT:--O1}
cxx=${CXX:-c++}
cc=${CC:-cc}

# The CI subset: the programs of the target sanitizers_ci (tests/sanitizers/CMakeLists.txt) and every test
# that runs only those: the unit tests of core/ (tuner, algorithms' schedules, reductions, settings, plugin
# loader, fusion planner, control messages, the public API on one rank), the shm and tcp plugins' own tests
# (wire handshakes, forked peers, a stranger on the tcp port), the fault tests (a rank killed, silent,
# aborting or late, over the node backend, shm and tcp), WEFT_CHECK's mismatch checks, and the multi-rank
# collectives on 2 and 3 ranks over the default plugins (shm node backend), the node backend's two paths, shm
# without it, and tcp alone; plans (recorded, launched and destroyed: nothing may leak), fusion on 2 ranks and
# its settings' entries (a fused group's small calls are packed into fusion buffers the node backend's peers
# map) and the 2-rank soak (10,000 mixed collectives). CI_EXCLUDE drops, among those, what costs most under
# ASan for what it adds: the algorithm tests' simulations of 5 to 8 ranks (1 to 4 cover powers of two and
# not), the collectives on 1, 4 and 5 ranks, on 3 ranks over the default plugins (3 ranks run over the node
# backend's direct path; 2 over the defaults) and on one CPU, and on emulated hosts, fusion on 3 to
# 5 ranks, plans on 3 and 4 ranks (2 ranks and the settings' entries stay), the soak over tcp on 3 and 4
# ranks, every collective on weftMemAlloc buffers (40 s under ASan: test_shm_node's WeftMemory tests cover
# that memory, and the 2-rank collectives' AllReduces bounce through it), misaligned buffers over tcp (the
# 3-rank misaligned run reaches the same reduction kernels), and the install test (it needs the whole tree).
# Cut on 2026-11-23, when a fresh-clone CI run took 45 minutes on a slower machine
# (2-vCPU AMD EPYC; this subset 18 of them), together with -g1 for the sanitized tree (line tables are
# all a report's stack needs). On 2026-11-23 (CI 29 min 20 s there) the algorithm simulations on 4 ranks went
# too, but for the hierarchical ones and the rings in host order (the only ones with two ranks per host; 1 to
# 3 ranks cover the others' powers of two and not): 67 s of the subset's test time. On 2026-11-26 (CI
# 28 min 14 s) the 3-rank collectives over tcp went too (43 s under ASan; the tcp plugin's own tests, the
# tcp fault and WEFT_CHECK tests stay), and fusion on mixed memory (fusion_np2 runs the same code on heap).
# Later that day (CI 29 min 30 s) the settings' entries of fusion on 3 and 4 ranks and of plans on 3 ranks
# went too (26 s of test time under ASan; the 2-rank entries parse the same settings); the next run still
# took 30 min 20 s (the box slower that hour), so FusedRing.CallBuffersMatchReference went as well (29 s under
# ASan: fusion's call layouts walked over 1-5 simulated ranks; FusedRing.LargeCalls keeps the fused ring on
# call buffers under ASan, and the ordinary build checks every layout).
CI_EXCLUDE='^collectives_np[145]$|^collectives_np2_misaligned_tcp$|^fusion_np[34]_env_|^plans_np3_env_|^FusedRing\.CallBuffersMatchReference$|^collectives_np[23]_weft_memory(_tcp)?$|^collectives_np3_(bounced_mixed_[a-z]+|tcp)$|^collectives_np4_|^fusion_np[345]$|^plans_np[34]$|^plans_np3_tcp$|^plans_np4_shm$|^collectives_np3$|^collectives_np3_one_cpu$|^fusion_np[34]_(tcp|shm|nocma|shm_node_off|mapped_buffers|mixed_memory|weft_memory)$|_hosts_|_mpi$|^weft_info_|^install_consumer$|^soak_np[34](_|$)|Test\..*_p[5-9]( |$)|Test\.(?!.*(Hierarchical|HostOrder)).*_p4( |$)'

skip() {
  echo "SKIPPED: $*"
  exit 77
}

# The runtime: a compiler that cannot link a sanitized program is a skip; one that links it but cannot run
# it is a failure (for TSan, usually the kernel's mmap randomisation; see docs/reliability.md).
probe=$build/probe
mkdir -p "$probe"
echo 'int main() { return 0; }' > "$probe/probe.cpp"
"$cxx" -fsanitize="$sanitize" "$probe/probe.cpp" -o "$probe/probe" > "$probe/log" 2>&1 ||
  skip "$cxx cannot link -fsanitize=$sanitize (the sanitizer runtime is missing; Debian: libasan8, libubsan1 and libtsan2 come with gcc): $(tail -n 3 "$probe/log")"
if ! "$probe/probe" > "$probe/log" 2>&1; then
  cat "$probe/log"
  echo "FAILED: a program built with -fsanitize=$sanitize does not run (for thread: try 'sysctl vm.mmap_rnd_bits=28' or 'setarch -R')"
  exit 1
fi

# Debug with the chosen level and NDEBUG: the top CMakeLists fixes RelWithDebInfo at -O3, Debug's flags come
# from the cache. A unity build (CMake batches of a target's sources in one translation unit): the sanitized
# subset built in 4 min 13 s instead of 7 min 50 s on the 2-vCPU EPYC CI box (2026-11-23); reports still name
# the original files and lines. It needs names in anonymous namespaces to differ between a target's files.
if ! cmake -S "$src" -B "$build" -DWEFT_SANITIZE="$sanitize" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="$opt -g1 -DNDEBUG" -DCMAKE_C_FLAGS_DEBUG="$opt -g1 -DNDEBUG" \
  -DCMAKE_UNITY_BUILD=ON \
  > "$build/configure.log" 2>&1; then
  tail -n 40 "$build/configure.log"
  echo "FAILED: configuring the sanitized tree in $build"
  exit 1
fi

targets=()
if [[ $subset == ci ]]; then
  targets=(--target sanitizers_ci)
  export COLLTEST_COUNTS=${COLLTEST_COUNTS:-0,1,7,1000,65539}
  export ALGOTEST_MATRIX=${ALGOTEST_MATRIX:-sizes}
elif [[ $subset != all ]]; then
  echo "WEFT_SANITIZE_SUBSET must be ci or all, not '$subset'" >&2
  exit 2
fi
start=$SECONDS
if ! cmake --build "$build" -j "$jobs" "${targets[@]}" > "$build/build.log" 2>&1; then
  grep -E "error|Error" "$build/build.log" | head -n 40
  echo "FAILED: building the sanitized tree (log: $build/build.log)"
  exit 1
fi
echo "built in $((SECONDS - start)) s"

# The tests whose programs were built: every file a test's command names must exist (a gtest program not
# built leaves a <name>_NOT_BUILT test, a multi-rank test the path of a missing program). By number (-I):
# a regular expression of all their names is too long for ctest.
# WEFT_SANITIZE_TESTS narrows it here too (ctest cannot combine -R with a list of numbers).
selection=()
if [[ $subset == ci ]]; then
  numbers=$(ctest --test-dir "$build" --show-only=json-v1 | python3 -c '
import json, os, re, sys
exclude, only = re.compile(sys.argv[1]), re.compile(sys.argv[2])
keep = []
for number, t in enumerate(json.load(sys.stdin)["tests"], 1):
    cmd = t.get("command") or []
    if not cmd or t["name"].endswith("_NOT_BUILT") or exclude.search(t["name"]) or not only.search(t["name"]):
        continue
    if all(os.path.exists(a) for a in cmd if a.startswith("/")):
        keep.append(str(number))
print(",".join(keep))
' "$CI_EXCLUDE" "${WEFT_SANITIZE_TESTS:-}")
  [[ -n $numbers ]] || {
    echo "FAILED: no test selected in $build"
    exit 1
  }
  selection=(-I "0,0,0,$numbers")
elif [[ -n ${WEFT_SANITIZE_TESTS:-} ]]; then
  selection=(-R "$WEFT_SANITIZE_TESTS")
fi

logs=$build/sanitizer-logs
rm -rf "$logs"
mkdir -p "$logs"
# ctest sets the runtimes' options itself (sanitizer_env.cmake); this adds log_path= to them.
export WEFT_SANITIZER_LOG_DIR=$logs
status=0
start=$SECONDS
# shellcheck disable=SC2086  # WEFT_SANITIZE_CTEST is a list of arguments
ctest --test-dir "$build" -j "$test_jobs" --output-on-failure --no-tests=error --timeout 600 --test-output-size-passed 10000000 \
  --test-output-size-failed 10000000 "${selection[@]}" ${WEFT_SANITIZE_CTEST:-} || status=$?
echo "tests ran in $((SECONDS - start)) s"

# ASan, LSan and TSan write their reports to $logs (log_path). UBSan, in GCC's runtime, ignores log_path and
# writes to stderr: look for its reports in every test's output as well, failed or passed.
collect_reports() {
  reports=$(find "$logs" -type f | sort)
  ubsan=$(grep -n -A 8 -E "runtime error:" "$build/Testing/Temporary/LastTest.log" || true)
}
collect_reports

# LeakSanitizer's stop-the-world tracer now and then dies at a process's exit ("Tracer caught signal 11",
# then "LeakSanitizer has encountered a fatal error", before any leak is looked for: a runtime flake,
# google/sanitizers#1353, seen here once in a 434-test run on 2026-11-23 and not in three reruns; on
# 2026-11-26 three times in one run, collectives_np3_node_direct twice in a row, and once in five local
# runs of collectives_np3_weft_memory). When that is all a run found, its failed tests run again on fresh
# logs, up to three times, and only the last run counts.
only_tracer_crashes() {
  [[ -n $reports && -z $ubsan ]] || return 1
  local f
  for f in $reports; do
    grep -q "Tracer caught signal" "$f" && grep -q "LeakSanitizer has encountered a fatal error" "$f" || return 1
    ! grep -qE "ERROR: |SUMMARY: " "$f" || return 1
  done
}
for _ in 1 2 3; do
  only_tracer_crashes || break
  for f in $reports; do
    echo "==== $f (LeakSanitizer's tracer crashed; the failed tests run again)"
    head -n 5 "$f"
  done
  rm -rf "$logs"
  mkdir -p "$logs"
  status=0
  ctest --test-dir "$build" --rerun-failed --output-on-failure --timeout 600 --test-output-size-failed 10000000 ||
    status=$?
  collect_reports
done
if [[ -n $reports || -n $ubsan ]]; then
  for f in $reports; do
    echo "==== $f"
    head -n 80 "$f"
  done
  [[ -z $ubsan ]] || printf '==== UBSan, in %s:\n%s\n' "$build/Testing/Temporary/LastTest.log" "$(head -n 80 <<< "$ubsan")"
  echo "FAILED: sanitizer report(s) (-fsanitize=$sanitize): $(grep -c . <<< "$reports") file(s) in $logs," \
    "$(grep -c "runtime error:" <<< "$ubsan") UBSan report(s) in the tests' output"
  exit 1
fi
if ((status != 0)); then
  echo "FAILED: tests failed in the sanitized tree $build (-fsanitize=$sanitize)"
  exit 1
fi
echo "no sanitizer report (-fsanitize=$sanitize)"
