#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What a kernel change needs before it lands, in one device call (device time
# is scarce and a machine keeps its build outputs only while warm): the
# before/after of the benchmark rows it touches against a base commit, the
# whole ctest suite with GPUPRIM_BACKEND=cuda, and compute-sanitizer memcheck
# of the test programs it touches. Everything comes back as two files,
# $OUT/land.tgz and $OUT/land-summary.txt (the device tool returns at most
# 8 files, 2 folders down; the suite alone writes more).
#
#   here:   bench/ab_gpu.sh prepare BASE              the base's sources into .ab/base
#           ../shared/tools/get_cub36.sh .cccl        CUB 3.6 for the benchmark's CUB side
#   device: (carry .ab and .cccl)
#           AB="sort_matrix_bench --no-small --filter 'u32 pairs'" \
#           SANITIZE='^test_(sort|segmented)$' bench/land_gpu.sh
#
# AB        one benchmark and its arguments, as one string (eval'd: quote as
#           on a command line); empty: no before/after. AB_ROUNDS (default 2).
# SANITIZE  a regex of test program names for memcheck (run_gpu.sh's
#           SANITIZER_PROGRAMS, at its small sizes); empty: no sanitizer.
# LIMIT     seconds for the whole call (default 570, under the tool's 600);
#           the suite and the sanitizer get what the build and the
#           before/after leave, and the summary says what did not run.
# CCCL_INCLUDE defaults to .cccl/include when that exists.
#
# run_gpu.sh configures build-gpu (CONFIGURE_ONLY=1) before the benchmark
# builds into it, so the suite's run there rebuilds nothing; that run is
# configured without benchmarks (SKIP_BENCH=1), so its build adds the tests
# and examples only.
set -u -o pipefail
cd "$(dirname "$0")/.." || exit 2

LIMIT=${LIMIT:-570}
START=$(date +%s)
left() { echo $(( LIMIT - ($(date +%s) - START) )); }
DEST=${OUT:-build-gpu/land}
# The logs stay outside $OUT, which gets the two files alone.
WORK=build-gpu/land-work
rm -rf "$WORK" && mkdir -p "$WORK" "$DEST" || exit 2
SUMMARY=$DEST/land-summary.txt
: > "$SUMMARY"
note() { echo "$*" | tee -a "$SUMMARY"; }
pack() {
    git rev-parse HEAD > "$WORK/commit.txt" 2>/dev/null || true
    tar -czf "$DEST/land.tgz" -C "$WORK" . && note "packed $DEST/land.tgz at $(( $(date +%s) - START )) s"
}
trap pack EXIT

[ -z "${CCCL_INCLUDE:-}" ] && [ -d .cccl/include ] && CCCL_INCLUDE=.cccl/include
# Absolute: CMake reads a relative include folder from bench/.
[ -n "${CCCL_INCLUDE:-}" ] && CCCL_INCLUDE=$(cd "$CCCL_INCLUDE" && pwd)
export CCCL_INCLUDE=${CCCL_INCLUDE:-}
arch=${CUDA_ARCH:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')}
[ -n "$arch" ] || { note "land_gpu.sh: no GPU found (set CUDA_ARCH to build anyway)"; exit 2; }
note "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1), sm_$arch, CUB from ${CCCL_INCLUDE:-the toolkit}"


status=0
if [ -n "${AB:-}" ]; then
    ab=()
    eval "ab=($AB)"
    bench=${ab[0]}
    t0=$(date +%s)
    if ! OUT=$WORK/configure CONFIGURE_ONLY=1 CUDA_ARCH=$arch bench/run_gpu.sh > "$WORK/configure.log" 2>&1; then
        note "configure: FAIL (configure.log)"; exit 2
    fi
    if bench/ab_gpu.sh build "$bench" > "$WORK/ab-build.log" 2>&1; then
        note "before/after build of $bench: $(( $(date +%s) - t0 )) s"
        t0=$(date +%s)
        if OUT=$WORK/ab timeout $(( $(left) - 30 )) bench/ab_gpu.sh run "${AB_ROUNDS:-2}" "${ab[@]}" \
               > "$WORK/ab-run.log" 2>&1; then
            note "before/after ($AB, ${AB_ROUNDS:-2} rounds): $(( $(date +%s) - t0 )) s"
        else
            note "before/after: FAIL or out of time (ab-run.log)"; status=1
        fi
        python3 bench/ab_table.py "$WORK/ab" > "$WORK/ab-table.txt" 2>&1
        tail -n 40 "$WORK/ab-table.txt" | tee -a "$SUMMARY"
    else
        note "before/after build: FAIL (ab-build.log)"; tail -n 20 "$WORK/ab-build.log"; status=1
    fi
fi

# The suite (and the sanitizer) through run_gpu.sh, with what time is left.
t=$(left)
if [ "$t" -lt 120 ]; then
    note "suite: NOT RUN ($t s left)"; exit 1
fi
san=(SKIP_SANITIZER=1)
[ -n "${SANITIZE:-}" ] && san=(SANITIZER_TOOLS=memcheck "SANITIZER_PROGRAMS=$SANITIZE")
env OUT="$WORK/gpu" CUDA_ARCH="$arch" SKIP_BENCH=1 TEST_JOBS="${TEST_JOBS:-14}" TEST_TIMEOUT=$(( t - 60 )) \
    SANITIZER_TIMEOUT="${SANITIZER_TIMEOUT:-180}" "${san[@]}" \
    timeout $(( t - 10 )) bench/run_gpu.sh > "$WORK/run_gpu.log" 2>&1 || status=1
if [ -f "$WORK/gpu/summary.txt" ]; then
    cat "$WORK/gpu/summary.txt" >> "$SUMMARY"
    cat "$WORK/gpu/summary.txt"
else
    note "run_gpu.sh: no summary (run_gpu.log; out of time?)"; tail -n 20 "$WORK/run_gpu.log"
fi
exit $status
