#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Sanitizer builds of libgpuprim on the CPU backend, run from the repository
# root (or anywhere: it finds the root itself).
#  1. AddressSanitizer + UndefinedBehaviorSanitizer + LeakSanitizer: the
#     library, every test and the examples, then the whole ctest suite.
#     Any sanitizer report fails (the runtimes abort on the first one, and
#     the test log is searched for reports besides).
#  2. ThreadSanitizer: the library (CPU threads on std::threads per call,
#     see below; Highway's vqsort when installed) and test/reliability/test_concurrency.c (threads with
#     a context each, then threads sharing one context and racing its
#     destroy) and test/test_cpu_threads.c (every op on 1, 2 and 7 threads;
#     JOBS programs at once, each a share of the cases), built directly.
# Exits non-zero on any failure; the last line is the verdict.
# Environment: JOBS (default 2), SANITIZE_BUILD_DIR (default build-sanitize),
# TSAN_BUILD_DIR (default build-tsan), SKIP_TSAN=1 to skip step 2.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
jobs=${JOBS:-2}
build=${SANITIZE_BUILD_DIR:-build-sanitize}
tsan_build=${TSAN_BUILD_DIR:-build-tsan}
started=$(date +%s)

verdict() {
  echo "run_sanitizers: $1 ($(( $(date +%s) - started )) s)"
  exit "$2"
}

flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
# GCC's object-size warnings give false positives on sanitizer-instrumented
# code (e.g. test_common.h tc_poison: "writing 8 bytes into a region of size
# 1"), and the tests build with -Werror; the ordinary build keeps them.
flags="$flags -Wno-stringop-overflow -Wno-array-bounds -Wno-stringop-overread"
# Line tables only (-g1), which the reports' stack traces need: full debug
# information made the build a quarter slower (sort_narrow_keys.cpp 25.6 s
# against 19.6) for nothing the reports print.
optimize="-O2 -g1 -DNDEBUG"
echo "=== [1/2] ASan+UBSan+LSan build in $build"
mkdir -p "$build"
# Ninja where there is one (and the folder is new: its generator is kept):
# it compiles the tests' files while the library's are still compiling.
generator=()
if command -v ninja >/dev/null && [ ! -f "$build/CMakeCache.txt" ]; then generator=(-G Ninja); fi
cmake "${generator[@]}" -S . -B "$build" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DGPUPRIM_WITH_CUDA=OFF \
  -DGPUPRIM_SANITIZE=ON \
  -DBUILD_TESTING=ON \
  -DGPUPRIM_BUILD_EXAMPLES=ON \
  -DCMAKE_C_FLAGS="$flags" \
  -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="$optimize" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$optimize" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" >"$build/configure.log" 2>&1 \
  || { cat "$build/configure.log"; verdict "FAILED (configure)" 1; }
cmake --build "$build" -j "$jobs" || verdict "FAILED (build)" 1

# Reports abort the process (abort_on_error) so the test fails; leaks are
# reported at exit (detect_leaks). Tests that need more (allocator_may_return_null
# for huge requests) append to ASAN_OPTIONS in their CMake properties.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export LSAN_OPTIONS=report_objects=1
ctest_status=0
ctest --test-dir "$build" --output-on-failure -j "$jobs" --timeout 900 --no-tests=error \
  -E '^python_demo$' || ctest_status=$?
log="$build/Testing/Temporary/LastTest.log"
reports=$(grep -cE "ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|SUMMARY: UndefinedBehaviorSanitizer" "$log" 2>/dev/null || true)
reports=${reports:-0}

# The ctypes example loads the sanitized shared libgpuprim into an
# unsanitized Python: the ASan runtime (and libstdc++, whose __cxa_throw ASan
# intercepts) must be preloaded, and Python's own allocations at exit are not
# ours to leak-check.
python_status=0
python_reports=0
if ctest --test-dir "$build" -N -R '^python_demo$' | grep -q "Total Tests: 1"; then
  preload="$(${CC:-cc} -print-file-name=libasan.so) $(${CXX:-c++} -print-file-name=libstdc++.so)"
  LD_PRELOAD="$preload" ASAN_OPTIONS="detect_leaks=0:abort_on_error=1" \
    ctest --test-dir "$build" --output-on-failure --timeout 900 -R '^python_demo$' \
    || python_status=$?
  python_reports=$(grep -cE "ERROR: AddressSanitizer|runtime error:" "$log" 2>/dev/null || true)
  python_reports=${python_reports:-0}
fi

if [ "$ctest_status" -ne 0 ] || [ "$python_status" -ne 0 ] || [ "$reports" -ne 0 ] ||
   [ "$python_reports" -ne 0 ]; then
  verdict "FAILED (ctest exit $ctest_status, python_demo exit $python_status, sanitizer reports: $reports + $python_reports; see $build/Testing/Temporary)" 1
fi
echo "=== [1/2] passed: every test clean under ASan+UBSan+LSan"

if [ "${SKIP_TSAN:-0}" = 1 ]; then
  verdict "PASSED (ASan+UBSan+LSan; ThreadSanitizer skipped)" 0
fi
echo "=== [2/2] ThreadSanitizer: library + test_concurrency + test_cpu_threads in $tsan_build"
mkdir -p "$tsan_build"
cc_tsan="${CC:-cc} -std=c99 -O1 -g -fsanitize=thread"
cxx_tsan="${CXX:-c++} -std=c++17 -O1 -g -fsanitize=thread"
# The CPU backend's threads: the same pieces of work as with oneTBB or
# OpenMP, on std::threads started per call (GPUPRIM_CPU_STD_THREADS, a
# sanitizer-only engine): TSan cannot see the synchronization inside the
# uninstrumented libtbb or libgomp and reports their hand-overs (oneTBB's
# task objects and tree counts), while std::thread start/join it sees whole.
# Highway's vqsort when installed, as the CMake build picks it.
engine_flags=(-DGPUPRIM_CPU_STD_THREADS=1)
engine_libs=()
if pkg-config --exists libhwy-contrib 2>/dev/null; then
  engine_flags+=(-DGPUPRIM_CPU_HWY=1); engine_libs+=(-lhwy_contrib -lhwy)
fi
echo "    CPU engine flags: ${engine_flags[*]}"
objects=()
pids=()
for source in src/api/*.cpp src/core/*.cpp src/cpu/*.cpp src/dist/*.cpp src/comm/engines.cpp; do
  object="$tsan_build/$(echo "$source" | tr / _).o"
  objects+=("$object")
  $cxx_tsan -Iinclude -Isrc -DGPUPRIM_STATIC_DEFINE -DGPUPRIM_EXPERIMENTAL_API "${engine_flags[@]}" -c "$source" -o "$object" &
  pids+=($!)
  if [ ${#pids[@]} -ge "$jobs" ]; then wait "${pids[0]}" || verdict "FAILED (TSan compile)" 1; pids=("${pids[@]:1}"); fi
done
for pid in "${pids[@]}"; do wait "$pid" || verdict "FAILED (TSan compile)" 1; done
# The test registry's table, as test/CMakeLists.txt writes it.
test/registry/write_table.sh "$tsan_build/registry_table" || verdict "FAILED (the registry's table)" 1
$cc_tsan -Iinclude -I"$tsan_build/registry_table" -DGPUPRIM_STATIC_DEFINE -DGPUPRIM_EXPERIMENTAL_API test/reliability/test_concurrency.c test/registry/*.c "${objects[@]}" \
  "${engine_libs[@]}" -lstdc++ -lm -lpthread -o "$tsan_build/rel_concurrency_tsan" || verdict "FAILED (TSan link)" 1
$cc_tsan -Iinclude -I"$tsan_build/registry_table" -DGPUPRIM_STATIC_DEFINE -DGPUPRIM_EXPERIMENTAL_API test/test_cpu_threads.c test/registry/*.c "${objects[@]}" \
  "${engine_libs[@]}" -lstdc++ -lm -lpthread -o "$tsan_build/test_cpu_threads_tsan" || verdict "FAILED (TSan link)" 1
TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1" "$tsan_build/rel_concurrency_tsan" 8 3 \
  || verdict "FAILED (ThreadSanitizer: test_concurrency)" 1
TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1" "$tsan_build/rel_concurrency_tsan" 8 2 shared \
  || verdict "FAILED (ThreadSanitizer: test_concurrency, one shared context)" 1
# test_cpu_threads in $jobs programs at once, each a share of the run's
# calls (--shard: every Nth call, so the shares cost alike however unlike the
# cases are; the first program also the accuracy checks): its calls on one
# thread leave a core idle, and under TSan it is the stage's longest step.
shard_pids=()
rm -f "$tsan_build"/test_cpu_threads_*.log  # an earlier run's shards are not this one's
for ((shard = 0; shard < jobs; ++shard)); do
  extra=()
  [ "$shard" -eq 0 ] && extra=(accuracy)
  TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1" "$tsan_build/test_cpu_threads_tsan" \
    "--shard=$shard/$jobs" "${extra[@]}" > "$tsan_build/test_cpu_threads_$shard.log" 2>&1 &
  shard_pids+=($!)
done
shards_failed=0
for ((shard = 0; shard < jobs; ++shard)); do
  wait "${shard_pids[$shard]}" || shards_failed=1
  cat "$tsan_build/test_cpu_threads_$shard.log"
done
[ "$shards_failed" -eq 0 ] || verdict "FAILED (ThreadSanitizer: test_cpu_threads)" 1
# The shards together made every call of the run ("shard I/N: R of the
# run's C calls", C the same in each): a share that ran nothing, or programs
# whose runs differ, must not pass unseen.
if [ "$jobs" -gt 1 ]; then
  shard_calls=$(sed -n 's/^  shard [0-9]*\/[0-9]*: \([0-9]*\) of the run.s \([0-9]*\) calls$/\1 \2/p' \
    "$tsan_build"/test_cpu_threads_*.log)
  made=$(echo "$shard_calls" | awk '{ sum += $1 } END { print sum + 0 }')
  run_calls=$(echo "$shard_calls" | awk '{ print $2 }' | sort -u)
  [ "$(echo "$shard_calls" | grep -c .)" = "$jobs" ] && [ "$(echo "$run_calls" | grep -c .)" = 1 ] &&
    [ "$made" = "$run_calls" ] ||
    verdict "FAILED (ThreadSanitizer: test_cpu_threads's shards made $made calls of runs of $(echo $run_calls))" 1
  echo "    test_cpu_threads: the run's $run_calls calls in $jobs shards"
fi
verdict "PASSED (ASan+UBSan+LSan: all tests; ThreadSanitizer: concurrency, CPU threads)" 0
