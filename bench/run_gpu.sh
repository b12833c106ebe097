#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# GPU verification and benchmark of libgpuprim, in one go. Run from the
# repository root on a machine with an NVIDIA GPU:
#
#   bench/run_gpu.sh
#
# Stages (each runs even when an earlier one failed, so one call gives all the
# information; the summary at the end shows each one's result and the exit
# status is non-zero if any failed):
#   gpu        nvidia-smi finds the GPU and its compute capability
#   configure  cmake Release for that architecture only, into build-gpu/
#   build      every target (ninja -k 0: one broken target does not stop the rest)
#   probe      a default context under GPUPRIM_BACKEND=cuda is a CUDA one
#   tests      the C test suite via ctest with GPUPRIM_BACKEND=cuda; every test
#              must report "backend cuda"
#   bench      build-gpu/bench/gpuprim_bench: libgpuprim vs CUB vs D2D copy,
#              results checked against CUB
#   sanitizer  compute-sanitizer memcheck, racecheck, synccheck, initcheck over
#              each test program in build-gpu/test/ (small sizes:
#              GPUPRIM_TEST_LARGE unset); any report fails
# The benchmark runs before the sanitizers so that its numbers arrive even if a
# sanitizer run hangs until its timeout.
#
# Results and logs go to $OUT when set, else build-gpu/bench/: summary.txt,
# bench.csv, bench.log, headline.txt, configure.log, build.log, ctest.log,
# probe.log, sanitizer/<tool>-<program>.log.
#
# Environment:
#   BENCH_QUICK=1        fewer sizes and repetitions
#   BENCH_FILTER=REGEX   only primitives whose name matches (e.g. 'sort|scan')
#   BENCH_ARGS="..."     more arguments for gpuprim_bench (e.g. --max-log2 26, or
#                        --narrow: only the rows of the narrow dtypes and bit ranges)
#   SKIP_TESTS=1         skip probe and ctest
#   SKIP_SANITIZER=1     skip the compute-sanitizer stage
#   SKIP_BENCH=1         skip the benchmark (and configure without the benchmarks,
#                        so the build makes the library, tests and examples only)
#   CONFIGURE_ONLY=1     stop after the configure stage (bench/land_gpu.sh: the
#                        benchmark's before/after builds into the same folder)
#   SANITIZER_TOOLS="memcheck racecheck synccheck initcheck"
#   SANITIZER_PROGRAMS=REGEX  only the test programs whose name matches (e.g.
#                        '^test_(sort|segmented)$'; default: every one)
#   SANITIZER_JOBS=N     sanitizer runs at once (default: cores, at most 16)
#   SANITIZER_TIMEOUT=S  per sanitizer run (default 240)
#   SANITIZER_LEAK_CHECK=1  add --leak-check full to memcheck
#   SANITIZER_API_ERRORS=explicit|all  also report failing CUDA API calls (default
#                        no: test_errors provokes out-of-memory on purpose; the
#                        library checks every call, so real ones fail the tests)
#   RACECHECK_ENV="VAR=VALUE ..."  more environment for racecheck alone (default
#                        GPUPRIM_TEST_MAX_COUNT=5000; it comes after SANITIZER_ENV)
#   SANITIZER_ENV="VAR=VALUE ..."  extra environment for the sanitized programs
#                        (default GPUPRIM_TEST_MAX_COUNT=70000: the suite's size
#                        loops stop there, which keeps instrumented runs quick)
#   TEST_TIMEOUT=S       whole ctest run (default 900: on an H200 the suite's 110
#                        entries take over 300 s at -j 10); BENCH_TIMEOUT=S (default 420)
#   TEST_JOBS=N          ctest entries at once (default 10)
#   CUDA_ARCH=NN         override the detected architecture (e.g. 90)
#   BUILD_DIR=DIR        build tree (default build-gpu)
#   CCCL_INCLUDE=DIR     CCCL headers for the benchmark's CUB side (e.g. .cccl/include
#                        from ../shared/tools/get_cub36.sh .cccl); default: the toolkit's

set -u -o pipefail
cd "$(dirname "$0")/.." || exit 2

BUILD=${BUILD_DIR:-build-gpu}
SANITIZER_ENV=${SANITIZER_ENV-GPUPRIM_TEST_MAX_COUNT=70000}
RESULTS=${OUT:-$BUILD/bench}
mkdir -p "$RESULTS" "$BUILD" || exit 2
RESULTS=$(cd "$RESULTS" && pwd)
JOBS=$(nproc 2>/dev/null || echo 4)

STAGES=()
summary_add() {  # name status detail
    STAGES+=("$(printf '%-10s %-5s %s' "$1" "$2" "$3")")
    printf '=== %-10s %-5s %s\n' "$1" "$2" "$3"
}
show_tail() {  # log lines: a failing stage shows the end of its log
    echo "--- last $2 lines of $1"
    tail -n "$2" "$1" | sed 's/^/    /'
}
now() { date +%s; }

START=$(now)
echo "libgpuprim GPU run: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), results in $RESULTS"

# --------------------------------------------------------------------------
# gpu: which GPU and which architecture
# --------------------------------------------------------------------------
ARCH=${CUDA_ARCH:-}
if command -v nvidia-smi >/dev/null 2>&1 &&
   nvidia-smi --query-gpu=name,compute_cap,memory.total,driver_version --format=csv,noheader \
       > "$RESULTS/nvidia-smi.txt" 2>&1; then
    GPU_LINE=$(head -n 1 "$RESULTS/nvidia-smi.txt")
    CAP=$(echo "$GPU_LINE" | cut -d, -f2 | tr -d ' .')
    if [ -z "$ARCH" ]; then
        if [[ "$CAP" =~ ^[0-9]+$ ]]; then ARCH=$CAP; else ARCH=native; fi
    fi
    summary_add gpu PASS "$GPU_LINE -> CMAKE_CUDA_ARCHITECTURES=$ARCH"
else
    [ -z "$ARCH" ] && ARCH=native
    summary_add gpu FAIL "nvidia-smi found no GPU (see nvidia-smi.txt); building for $ARCH"
fi

# --------------------------------------------------------------------------
# configure + build
# --------------------------------------------------------------------------
t0=$(now)
GEN_ARGS=()
if [ ! -f "$BUILD/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then
    GEN_ARGS=(-G Ninja)
fi
# The examples on and the Python layer at its default (on where nanobind
# is), whatever the folder's cache says: bench/ab_gpu.sh configures
# build-gpu without them, and the suite after it then lacked the demo and
# python_demo entries (fifty-eighth session, run 110: 152 of 154).
if cmake -S . -B "$BUILD" ${GEN_ARGS[@]+"${GEN_ARGS[@]}"} \
        -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_CUDA_ARCHITECTURES="$ARCH" \
        -DGPUPRIM_WITH_CUDA=ON \
        -DGPUPRIM_BUILD_BENCH="$([ "${SKIP_BENCH:-0}" = 1 ] && echo OFF || echo ON)" \
        -DGPUPRIM_BENCH_CCCL_INCLUDE="${CCCL_INCLUDE:-}" \
        -DGPUPRIM_BUILD_EXAMPLES=ON -UGPUPRIM_BUILD_PYTHON \
        -DBUILD_TESTING=ON > "$RESULTS/configure.log" 2>&1; then
    CONFIGURED=1
    summary_add configure PASS "$(( $(now) - t0 ))s"
else
    CONFIGURED=0
    summary_add configure FAIL "see configure.log"
    show_tail "$RESULTS/configure.log" 30
fi
[ "${CONFIGURE_ONLY:-0}" = 1 ] && { [ "$CONFIGURED" = 1 ]; exit; }

if [ "$CONFIGURED" = 1 ]; then
    t0=$(now)
    KEEP_GOING=()
    if grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja' "$BUILD/CMakeCache.txt"; then
        KEEP_GOING=(-- -k 0)
    else
        KEEP_GOING=(-- -k)
    fi
    if cmake --build "$BUILD" -j "$JOBS" "${KEEP_GOING[@]}" > "$RESULTS/build.log" 2>&1; then
        summary_add build PASS "$(( $(now) - t0 ))s"
    else
        summary_add build FAIL "see build.log ($(grep -c 'FAILED:' "$RESULTS/build.log") failed targets); later stages use whatever built"
        grep -A12 'FAILED:' "$RESULTS/build.log" | head -n 60 | sed 's/^/    /'
    fi
else
    summary_add build FAIL "not configured"
fi

BENCH_BIN="$BUILD/bench/gpuprim_bench"

# --------------------------------------------------------------------------
# probe + tests
# --------------------------------------------------------------------------
if [ "${SKIP_TESTS:-0}" = 1 ]; then
    summary_add probe SKIP "SKIP_TESTS=1"
    summary_add tests SKIP "SKIP_TESTS=1"
else
    if [ -x "$BENCH_BIN" ]; then
        if GPUPRIM_BACKEND=cuda "$BENCH_BIN" --probe > "$RESULTS/probe.log" 2>&1; then
            summary_add probe PASS "$(head -n 1 "$RESULTS/probe.log")"
        else
            summary_add probe FAIL "$(head -n 1 "$RESULTS/probe.log")"
        fi
    elif [ "${SKIP_BENCH:-0}" = 1 ]; then
        # Built without the benchmarks: the tests below check the backend
        # (every program must report cuda).
        summary_add probe SKIP "SKIP_BENCH=1: no benchmark to probe with"
    else
        summary_add probe FAIL "no $BENCH_BIN"
    fi

    if [ "$CONFIGURED" = 1 ]; then
        t0=$(now)
        GPUPRIM_BACKEND=cuda timeout -k 10 "${TEST_TIMEOUT:-900}" \
            ctest --test-dir "$BUILD" --output-on-failure -V -j "${TEST_JOBS:-10}" --no-tests=error \
            > "$RESULTS/ctest.log" 2>&1
        rc=$?
        # Each test program prints "<name>: libgpuprim X, backend cuda, device ...".
        n_cuda=$(grep -c ', backend cuda,' "$RESULTS/ctest.log")
        n_cpu=$(grep -c ', backend cpu,' "$RESULTS/ctest.log")
        result=$(grep -E 'tests passed|tests failed' "$RESULTS/ctest.log" | tail -n 1)
        detail="$result; $n_cuda programs reported backend cuda, $n_cpu cpu; $(( $(now) - t0 ))s"
        if [ "$rc" = 0 ] && [ "$n_cuda" -gt 0 ] && [ "$n_cpu" = 0 ]; then
            summary_add tests PASS "$detail"
        else
            [ "$rc" = 124 ] && detail="timed out after ${TEST_TIMEOUT:-900}s; $detail"
            [ "$n_cuda" = 0 ] && detail="$detail; NO TEST RAN ON THE GPU"
            summary_add tests FAIL "$detail (ctest rc $rc)"
            # per-test results, then the first failure messages of the programs
            grep -E 'Test +#[0-9]+: .*\*\*\*' "$RESULTS/ctest.log" | head -n 20 | sed 's/^/    /'
            grep -E '^[0-9]+: .*(FAIL|rror|failed)' "$RESULTS/ctest.log" | head -n 20 | sed 's/^/    /'
        fi
    else
        summary_add tests FAIL "not configured"
    fi
fi

# --------------------------------------------------------------------------
# bench
# --------------------------------------------------------------------------
if [ "${SKIP_BENCH:-0}" = 1 ]; then
    summary_add bench SKIP "SKIP_BENCH=1"
elif [ -x "$BENCH_BIN" ]; then
    t0=$(now)
    ARGS=(--csv "$RESULTS/bench.csv")
    [ "${BENCH_QUICK:-0}" = 1 ] && ARGS+=(--quick)
    [ -n "${BENCH_FILTER:-}" ] && ARGS+=(--filter "$BENCH_FILTER")
    # shellcheck disable=SC2206
    [ -n "${BENCH_ARGS:-}" ] && ARGS+=(${BENCH_ARGS})
    echo "=== bench: $BENCH_BIN ${ARGS[*]}"
    timeout -k 10 "${BENCH_TIMEOUT:-420}" "$BENCH_BIN" "${ARGS[@]}" > "$RESULTS/bench.log" 2>&1
    rc=$?
    sed -n '/^Headline/,$p' "$RESULTS/bench.log" > "$RESULTS/headline.txt"
    rows=$(grep -E '^rows:' "$RESULTS/bench.log" | tail -n 1)
    detail="${rows:-no summary line}; $(( $(now) - t0 ))s; csv: $RESULTS/bench.csv"
    if [ "$rc" = 0 ]; then
        summary_add bench PASS "$detail"
    else
        [ "$rc" = 124 ] && detail="timed out after ${BENCH_TIMEOUT:-420}s; $detail"
        summary_add bench FAIL "exit $rc; $detail"
        if grep -q '^FAILURES:' "$RESULTS/bench.log"; then
            sed -n '/^FAILURES:/,/^Headline/p' "$RESULTS/bench.log" | head -n 40 | sed 's/^/    /'
        else
            show_tail "$RESULTS/bench.log" 25
        fi
    fi
else
    summary_add bench FAIL "no $BENCH_BIN (build failed?)"
fi

# --------------------------------------------------------------------------
# sanitizer
# --------------------------------------------------------------------------
if [ "${SKIP_SANITIZER:-0}" = 1 ]; then
    summary_add sanitizer SKIP "SKIP_SANITIZER=1"
elif ! command -v compute-sanitizer >/dev/null 2>&1 &&
     [ ! -x /usr/local/cuda/bin/compute-sanitizer ]; then
    summary_add sanitizer FAIL "compute-sanitizer not found"
else
    SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    t0=$(now)
    SAN_DIR="$RESULTS/sanitizer"
    mkdir -p "$SAN_DIR"
    rm -f "$SAN_DIR"/*.log "$SAN_DIR"/*.rc
    PROGRAMS=()
    if [ -d "$BUILD/test" ]; then
        while IFS= read -r p; do
            [[ "$(basename "$p")" =~ ${SANITIZER_PROGRAMS:-.} ]] && PROGRAMS+=("$p")
        done < <(find "$BUILD/test" -maxdepth 1 -type f -perm -u+x ! -name '*.*' | sort)
    fi
    if [ ${#PROGRAMS[@]} = 0 ]; then
        summary_add sanitizer FAIL "no test programs in $BUILD/test"
    else
        TOOLS=${SANITIZER_TOOLS:-memcheck racecheck synccheck initcheck}
        PAR=${SANITIZER_JOBS:-$(( JOBS > 16 ? 16 : JOBS ))}
        # Reports that are findings, as compute-sanitizer words them.
        REPORT_RE='^========= (Invalid|Uninitialized|Error: Race|Race reported|Barrier error|Warning: Race|Leaked|Program hit|Out-of-range|Misaligned|Malloc|Free)'
        san_one() {  # tool program
            local tool=$1 prog=$2 log extra=() tool_env=()
            # racecheck instruments every shared-memory access and runs far
            # slower than the other tools: it gets smaller sizes.
            # shellcheck disable=SC2206
            [ "$tool" = racecheck ] && tool_env=(${RACECHECK_ENV-GPUPRIM_TEST_MAX_COUNT=5000})
            log="$SAN_DIR/$tool-$(basename "$prog").log"
            [ "$tool" = memcheck ] && [ "${SANITIZER_LEAK_CHECK:-0}" = 1 ] &&
                extra=(--leak-check full)
            # shellcheck disable=SC2086
            env -u GPUPRIM_TEST_LARGE GPUPRIM_BACKEND=cuda ${SANITIZER_ENV:-} ${tool_env[@]+"${tool_env[@]}"} \
                timeout -k 10 "${SANITIZER_TIMEOUT:-240}" \
                "$SAN" --tool "$tool" --error-exitcode 86 --print-limit 20 \
                --report-api-errors "${SANITIZER_API_ERRORS:-no}" ${extra[@]+"${extra[@]}"} \
                "$prog" > "$log" 2>&1
            echo $? > "$log.rc"
        }
        for tool in $TOOLS; do
            for prog in "${PROGRAMS[@]}"; do
                while [ "$(jobs -rp | wc -l)" -ge "$PAR" ]; do wait -n; done
                san_one "$tool" "$prog" &
            done
        done
        wait
        n_pass=0 n_skip=0 FAILED_RUNS=() FAILED_LOGS=()
        for tool in $TOOLS; do
            for prog in "${PROGRAMS[@]}"; do
                log="$SAN_DIR/$tool-$(basename "$prog").log"
                rc=$(cat "$log.rc" 2>/dev/null || echo missing)
                reports=$(grep -cE "$REPORT_RE" "$log")
                if [ "$rc" = 77 ] ||
                   grep -q 'terminated before first instrumented API call' "$log"; then
                    # skipped itself (test_large), or made no CUDA call (header_*)
                    n_skip=$((n_skip + 1))
                elif [ "$rc" = 0 ] && [ "$reports" = 0 ] &&
                     ! grep -qE 'ERROR SUMMARY: [1-9]|\([1-9][0-9]* errors' "$log"; then
                    n_pass=$((n_pass + 1))
                else
                    case $rc in
                        86) why="sanitizer errors" ;;
                        124|137) why="timed out after ${SANITIZER_TIMEOUT:-240}s" ;;
                        *) if grep -q 'ERROR SUMMARY: 0 errors' "$log"; then
                               why="the program itself failed (exit $rc), no sanitizer errors"
                           else
                               why="exit $rc"
                           fi ;;
                    esac
                    [ "$reports" != 0 ] && why="$why; $reports report lines"
                    FAILED_RUNS+=("$tool $(basename "$prog"): $why")
                    FAILED_LOGS+=("$log")
                fi
            done
        done
        detail="$n_pass passed, ${#FAILED_RUNS[@]} failed, $n_skip skipped of $(echo "$TOOLS" | wc -w) tools x ${#PROGRAMS[@]} programs; $(( $(now) - t0 ))s"
        if [ ${#FAILED_RUNS[@]} = 0 ]; then
            summary_add sanitizer PASS "$detail"
        else
            summary_add sanitizer FAIL "$detail"
            for i in "${!FAILED_RUNS[@]}"; do
                echo "    ${FAILED_RUNS[$i]}  [${FAILED_LOGS[$i]#"$RESULTS"/}]"
                { grep -E "$REPORT_RE" "${FAILED_LOGS[$i]}" | sort | uniq -c | sort -rn | head -n 4
                  grep -E '^[^=].*(FAIL|rror)' "${FAILED_LOGS[$i]}" | head -n 2; } |
                    cut -c 1-300 | sed 's/^/      /'
            done
        fi
    fi
fi

# --------------------------------------------------------------------------
# summary, headline table last
# --------------------------------------------------------------------------
{
    echo
    echo "================ libgpuprim GPU run summary ($(( $(now) - START ))s) ================"
    for s in "${STAGES[@]}"; do echo "$s"; done
    echo "results and logs: $RESULTS"
} | tee "$RESULTS/summary.txt"
if [ -s "$RESULTS/headline.txt" ]; then
    echo
    cat "$RESULTS/headline.txt"
fi
for s in "${STAGES[@]}"; do
    case $s in *" FAIL "*) exit 1 ;; esac
done
exit 0
