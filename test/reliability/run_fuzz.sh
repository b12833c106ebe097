#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer target of the C API (test/reliability/fuzz_api.cpp)
# with clang, AddressSanitizer and UndefinedBehaviorSanitizer, the library
# sources compiled in (CPU backend), and fuzzes it starting from the committed
# seeds (test/reliability/corpus/, not modified: new inputs go to
# $build/corpus). Any crash, leak, sanitizer report or contract violation
# fails the run; the input is left in $build/artifacts/.
# Reproduce one with: $build/fuzz_api <file>   (GPUPRIM_FUZZ_TRACE=1 prints
# every call and its status).
#
# By default (CI) the run is reproducible: FUZZ_RUNS inputs (-runs) from the
# fixed FUZZ_SEED (-seed), one process, no time limit, $build/corpus emptied
# first and never re-read (-reload=0: a time-driven re-read changes the
# input sequence), and address-space randomization off for the fuzzer
# (setarch -R: the target compares addresses, and libFuzzer's comparison
# tracing feeds them back into its inputs) in an environment of the two
# sanitizer variables and a fixed PATH only. So every machine, fast or
# slow, runs the same inputs and passes or fails alike.
# FUZZ_SECONDS=N instead fuzzes for N seconds (-max_total_time) from a random
# seed (or FUZZ_SEED if given), keeping what it found in $build/corpus for
# the next such run: for longer searches outside CI.
# Environment: FUZZ_SEED (1; with FUZZ_SECONDS: random), FUZZ_RUNS (20000),
# FUZZ_SECONDS (unset), FUZZ_BUILD_DIR (build-fuzz), CLANG, CLANGXX, JOBS (2).
set -uo pipefail
cd "$(dirname "$0")/../.."
seconds=${FUZZ_SECONDS:-}
if [ -n "$seconds" ]; then
  seed=${FUZZ_SEED:-0}  # 0: libFuzzer picks one (and prints it: "Seed: N")
else
  seed=${FUZZ_SEED:-1}
fi
runs=${FUZZ_RUNS:-20000}
build=${FUZZ_BUILD_DIR:-build-fuzz}
jobs=${JOBS:-2}
started=$(date +%s)

verdict() {
  echo "run_fuzz: $1 ($(( $(date +%s) - started )) s)"
  exit "$2"
}

pick() {  # the first of the named compilers that exists
  for candidate in "$@"; do
    if command -v "$candidate" >/dev/null 2>&1; then echo "$candidate"; return; fi
  done
}
clangxx=${CLANGXX:-$(pick clang++ clang++-14)}
clang=${CLANG:-$(pick clang clang-14)}
[ -n "$clangxx" ] && [ -n "$clang" ] || verdict "FAILED (clang not found; install clang and libclang-rt-14-dev)" 1

mkdir -p "$build/obj" "$build/corpus" "$build/artifacts"
rm -f "$build"/artifacts/*
# GPUPRIM_FUZZ_NO_ENGINES: this build has no MPI or NCCL engine (src/comm's
# engines are left out), so the target may hand attach a pointer that is no
# communicator.
common="-g -O1 -fno-omit-frame-pointer -fno-sanitize-recover=all -Iinclude -Isrc -DGPUPRIM_STATIC_DEFINE -DGPUPRIM_EXPERIMENTAL_API -DGPUPRIM_FUZZ_NO_ENGINES"
library_flags="-fsanitize=fuzzer-no-link,address,undefined"

echo "=== building $build/fuzz_api with $clangxx"
compile() {  # source object flags...
  local source=$1 object=$2
  shift 2
  "$@" -c "$source" -o "$object" || { echo "compile failed: $source" >&2; return 1; }
}
pids=()
objects=()
for source in src/api/*.cpp src/core/*.cpp src/cpu/*.cpp src/dist/*.cpp src/comm/engines.cpp; do
  object="$build/obj/$(echo "$source" | tr / _).o"
  objects+=("$object")
  compile "$source" "$object" "$clangxx" -std=c++17 $common $library_flags &
  pids+=($!)
  if [ ${#pids[@]} -ge "$jobs" ]; then wait "${pids[0]}" || verdict "FAILED (build)" 1; pids=("${pids[@]:1}"); fi
done
compile test/reliability/fuzz_shim.c "$build/obj/fuzz_shim.o" "$clang" -std=c99 $common $library_flags &
pids+=($!)
compile test/reliability/fuzz_api.cpp "$build/obj/fuzz_api.o" "$clangxx" -std=c++17 $common \
  -fsanitize=fuzzer,address,undefined &
pids+=($!)
for pid in "${pids[@]}"; do wait "$pid" || verdict "FAILED (build)" 1; done
"$clangxx" -fsanitize=fuzzer,address,undefined "$build/obj/fuzz_api.o" "$build/obj/fuzz_shim.o" \
  "${objects[@]}" -o "$build/fuzz_api" || verdict "FAILED (link)" 1

# Huge requests must return NULL (allocator_may_return_null) so the library
# can report OUT_OF_MEMORY; ASan's warning for each of them is filtered out.
export ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
if [ -n "$seconds" ]; then
  echo "=== fuzzing for $seconds s (seed $seed) from test/reliability/corpus"
  limit=(-max_total_time="$seconds")
  launch=()
else
  echo "=== fuzzing $runs inputs from seed $seed and test/reliability/corpus (reproducible)"
  rm -rf "${build:?}/corpus" && mkdir -p "$build/corpus"  # a run's inputs depend on nothing else
  limit=(-runs="$runs" -reload=0)
  # The same environment everywhere: with randomization off, its size still
  # moves the stack, and with it the alignment of the target's stack arrays.
  # (A fixed PATH, for the sanitizers' llvm-symbolizer.)
  launch=(env -i "ASAN_OPTIONS=$ASAN_OPTIONS" "UBSAN_OPTIONS=$UBSAN_OPTIONS"
          "PATH=/usr/lib/llvm-14/bin:/usr/local/bin:/usr/bin:/bin")
  if setarch "$(uname -m)" -R true 2>/dev/null; then
    launch=(setarch "$(uname -m)" -R "${launch[@]}")
  else
    echo "run_fuzz: warning: setarch -R unavailable; with address randomization the inputs may differ from run to run"
  fi
fi
"${launch[@]}" "$build/fuzz_api" "${limit[@]}" -seed="$seed" -timeout=30 -rss_limit_mb=2048 -max_len=4096 \
  -print_final_stats=1 -artifact_prefix="$build/artifacts/" \
  "$build/corpus" test/reliability/corpus 2>&1 \
  | grep --line-buffered -v "WARNING: AddressSanitizer failed to allocate" | tee "$build/fuzz.log"
status=${PIPESTATUS[0]}

executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$build/fuzz.log" | tail -1)
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$build/fuzz.log" | tail -1)
artifacts=$(ls "$build/artifacts" | wc -l)
if [ "$status" -ne 0 ] || [ "$artifacts" -ne 0 ]; then
  verdict "FAILED (fuzzer exit $status; inputs in $build/artifacts: $(ls "$build/artifacts" | tr '\n' ' '))" 1
fi
verdict "PASSED (${executions:-?} executions, ${rate:-?} exec/s, seed $seed, no crash)" 0
