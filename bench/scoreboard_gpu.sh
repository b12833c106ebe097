#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 34's targets in one device call: builds the four benchmarks that
# hold its rows against CUB (CCCL_INCLUDE, e.g. .cccl/include from
# ../shared/tools/get_cub36.sh .cccl; without it the toolkit's CUB, and the
# table says which), runs each into $OUT/scoreboard (or
# build-gpu/scoreboard), then prints bench/scoreboard.py's verdicts.
#
#   CCCL_INCLUDE=.cccl/include bench/scoreboard_gpu.sh
#
# The benchmarks, in this order, each under its own time limit so one slow
# benchmark cannot take the others' time (SCOREBOARD_LIMIT_S seconds each,
# default 240; not yet timed as a whole, the build ~2 min on 16 cores):
#   sort_matrix_bench  the distribution matrix 2^20-2^28, the float rows,
#                      the small rows 2^10-2^20 (single and batched)
#   topk_bench         flat f32 2^10-2^26 beside DeviceTopK and one read
#   segmented_bench    the segment shapes of 2^24 f32 (CSR and rows), then
#                      the scans of 256 and 16 segments at 2^28 in total
#   gpuprim_bench      inclusive scans of f16, bf16 and u8 at 2^28
# SCOREBOARD_ONLY="sort_matrix topk" runs a subset. Record the table in
# bench/RESULTS.md with the GPU, the commit and the CUB version printed.
set -u -o pipefail
cd "$(dirname "$0")/.." || exit 2

BUILD=${BUILD_DIR:-build-gpu}
DEST=${OUT:-$BUILD}/scoreboard
LIMIT=${SCOREBOARD_LIMIT_S:-240}
ONLY=${SCOREBOARD_ONLY:-sort_matrix topk segmented segmented_long scan}
mkdir -p "$DEST" || exit 2

arch=${CUDA_ARCH:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d .)}
[ -n "$arch" ] || { echo "scoreboard_gpu.sh: no GPU found (set CUDA_ARCH to build anyway)" >&2; exit 2; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$DEST/gpu.txt"
cccl=()
[ -n "${CCCL_INCLUDE:-}" ] && cccl=("-DGPUPRIM_BENCH_CCCL_INCLUDE=$(cd "$CCCL_INCLUDE" && pwd)")
generator=()
[ -f "$BUILD/CMakeCache.txt" ] || generator=(-G Ninja)
started=$(date +%s)
cmake "${generator[@]}" -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$arch" \
    -DGPUPRIM_WITH_CUDA=ON -DGPUPRIM_BUILD_BENCH=ON "${cccl[@]}" >"$DEST/configure.log" 2>&1 ||
    { tail -20 "$DEST/configure.log"; exit 2; }
cmake --build "$BUILD" -j "$(nproc)" --target sort_matrix_bench topk_bench segmented_bench gpuprim_bench \
    >"$DEST/build.log" 2>&1 || { tail -30 "$DEST/build.log"; exit 2; }
echo "built in $(( $(date +%s) - started )) s"

status=0
run() {  # name program args...
    local name=$1; shift
    case " $ONLY " in *" $name "*) ;; *) return 0 ;; esac
    local t0
    t0=$(date +%s)
    timeout "$LIMIT" "$@" --csv "$DEST/$name.csv" >"$DEST/$name.log" 2>&1
    local rc=$?
    echo "$name: exit $rc, $(( $(date +%s) - t0 )) s ($(head -1 "$DEST/$name.log" | cut -c1-100))"
    [ $rc -eq 0 ] || status=1
}
bin=$BUILD/bench
run sort_matrix "$bin/sort_matrix_bench"
run topk "$bin/topk_bench"
run segmented "$bin/segmented_bench"
run segmented_long "$bin/segmented_bench" --filter scan --long-log2 28
run scan "$bin/gpuprim_bench" --filter '^scan_inclusive$' --dtypes '^(f16|bf16|u8)$' --min-log2 28 --max-log2 28
python3 bench/scoreboard.py "$DEST" ${SCOREBOARD_ALL:+--all} | tee "$DEST/scoreboard.txt"
# One file for the device tool, which returns eight at most.
[ -n "${OUT:-}" ] && tar -czf "$OUT/scoreboard.tgz" -C "$DEST" --exclude=build.log .
exit $status
