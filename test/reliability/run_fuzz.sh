#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer targets of the C API with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer, the library sources compiled in (CPU backend),
# and fuzzes each:
# - fuzz_api (test/reliability/fuzz_api.cpp): programs of API calls with
#   arbitrary arguments, from the committed seeds (test/reliability/corpus/,
#   not modified: new inputs go to $build/corpus);
# - fuzz_registry (test/reliability/fuzz_registry.cpp): every case of the
#   test registry (test/registry/) with its inputs' contents or its shape
#   changed, from one seed a case made here ($build/seeds_registry; new
#   inputs go to $build/corpus_registry).
# Any crash, leak, sanitizer report or contract violation fails the run; the
# input is left in $build/artifacts/.
# Reproduce one with: $build/fuzz_api <file> (or fuzz_registry; with
# GPUPRIM_FUZZ_TRACE=1 either prints every call and its status).
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
# Environment: FUZZ_SEED (1; with FUZZ_SECONDS: random), FUZZ_RUNS (20000, the
# API target), FUZZ_REGISTRY_RUNS (20000, the registry target),
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
registry_runs=${FUZZ_REGISTRY_RUNS:-20000}
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
# The registry's target (fuzz_registry.cpp): the test registry's cases
# compiled in, each case fuzzed without code of its own.
# Its table, written as test/CMakeLists.txt writes it.
test/registry/write_table.sh "$build/registry_table"
registry_objects=()
for source in test/registry/*.c; do
  object="$build/obj/$(echo "$source" | tr / _).o"
  registry_objects+=("$object")
  compile "$source" "$object" "$clang" -std=c99 $common $library_flags -I"$build/registry_table" &
  pids+=($!)
  if [ ${#pids[@]} -ge "$jobs" ]; then wait "${pids[0]}" || verdict "FAILED (build)" 1; pids=("${pids[@]:1}"); fi
done
compile test/reliability/fuzz_registry.cpp "$build/obj/fuzz_registry.o" "$clangxx" -std=c++17 $common \
  -fsanitize=fuzzer,address,undefined &
pids+=($!)
for pid in "${pids[@]}"; do wait "$pid" || verdict "FAILED (build)" 1; done
"$clangxx" -fsanitize=fuzzer,address,undefined "$build/obj/fuzz_api.o" "$build/obj/fuzz_shim.o" \
  "${objects[@]}" -o "$build/fuzz_api" || verdict "FAILED (link)" 1
"$clangxx" -fsanitize=fuzzer,address,undefined "$build/obj/fuzz_registry.o" "${registry_objects[@]}" \
  "${objects[@]}" -lm -o "$build/fuzz_registry" || verdict "FAILED (link)" 1

# Huge requests must return NULL (allocator_may_return_null) so the library
# can report OUT_OF_MEMORY; ASan's warning for each of them is filtered out.
export ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# One target's run: fuzz TARGET CORPUS RUNS "FLAGS" [SEED_DIR...]: new inputs
# go to CORPUS (emptied first in reproducible runs), the seed folders are only
# read; FLAGS: more libFuzzer flags.
fuzz() {
  local target=$1 corpus=$2 target_runs=$3 flags=$4
  shift 4
  local limit launch=()
  if [ -n "$seconds" ]; then
    echo "=== $target: fuzzing for $seconds s (seed $seed) from $*"
    limit=(-max_total_time="$seconds")
  else
    echo "=== $target: fuzzing $target_runs inputs from seed $seed and $* (reproducible)"
    rm -rf "${corpus:?}" && mkdir -p "$corpus"  # a run's inputs depend on nothing else
    limit=(-runs="$target_runs" -reload=0)
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
  mkdir -p "$corpus"
  # shellcheck disable=SC2086 # flags: words
  "${launch[@]}" "$build/$target" "${limit[@]}" $flags -seed="$seed" -timeout=30 -rss_limit_mb=2048 -max_len=4096 \
    -print_final_stats=1 -artifact_prefix="$build/artifacts/" \
    "$corpus" "$@" 2>&1 \
    | grep --line-buffered -v "WARNING: AddressSanitizer failed to allocate" | tee "$build/$target.log"
  local status=${PIPESTATUS[0]}
  local executions rate artifacts
  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$build/$target.log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$build/$target.log" | tail -1)
  artifacts=$(ls "$build/artifacts" | wc -l)
  if [ "$status" -ne 0 ] || [ "$artifacts" -ne 0 ]; then
    verdict "FAILED ($target exit $status; inputs in $build/artifacts: $(ls "$build/artifacts" | tr '\n' ' '))" 1
  fi
  summary+="$target ${executions:-?} executions (${rate:-?} exec/s); "
}

summary=""
fuzz fuzz_api "$build/corpus" "$runs" "" test/reliability/corpus
# The registry target's seeds: one input a case (its first byte), made here
# so that a new case needs none committed.
rm -rf "$build/seeds_registry" && mkdir -p "$build/seeds_registry"
for c in $(seq 0 31); do printf "\\x$(printf %02x "$c")\\x00\\x00\\x00" > "$build/seeds_registry/case_$c"; done
# Inputs of any length from the start (-len_control=0): its seeds are 4 bytes,
# and content changes need more (20,000 inputs: 9,772 edges against 9,514).
fuzz fuzz_registry "$build/corpus_registry" "$registry_runs" "-len_control=0" "$build/seeds_registry"
verdict "PASSED (${summary}seed $seed, no crash)" 0
