#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The distributed benchmark (issue 32) on every GPU of this machine: one
# process per GPU under mpirun, then one process driving all GPUs
# (--single-process). Run from the repository root after a build with the
# benchmark on (bench/run_gpu.sh, or cmake -DGPUPRIM_BUILD_BENCH=ON with MPI
# and NCCL found, which builds build-gpu/bench/distributed_bench):
#
#   bench/run_distributed.sh                      # every case, 2^28 keys per GPU
#   bench/run_distributed.sh --cases sort,alltoall --reps 11
#   NGPU="2 4" bench/run_distributed.sh           # on 2 of the 4 GPUs, then on 4
#
# Arguments go to distributed_bench, in both runs (see bench/README.md).
# Logs and CSVs go to $OUT when set, else build-gpu/bench/:
#   distributed_build.log, nvidia-smi-topo.txt,
#   distributed_p<N>.log / .csv (mpirun -np N), distributed_1proc.log / .csv.
# The exit status is non-zero if the build or any run failed (a failed
# check included).
#
# Environment:
#   BUILD_DIR=DIR      build tree (default build-gpu); configured here only if
#                      it has no CMakeCache.txt (then with CMAKE_ARGS added)
#   NGPU="N ..."       mpirun process counts (default: the GPU count, nvidia-smi -L)
#   MPIRUN_ARGS="..."  more mpirun arguments (e.g. --bind-to none)
#   SKIP_SINGLE=1      no --single-process run
#   DIST_TIMEOUT=S     per run (default 900)

set -u -o pipefail
cd "$(dirname "$0")/.." || exit 2

BUILD=${BUILD_DIR:-build-gpu}
RESULTS=${OUT:-$BUILD/bench}
mkdir -p "$RESULTS" || exit 2
RESULTS=$(cd "$RESULTS" && pwd)
BIN="$BUILD/bench/distributed_bench"
TIMEOUT=${DIST_TIMEOUT:-900}
# NVLink multicast stays off (the program sets it too when unset).
export NCCL_NVLS_ENABLE=0

GPUS=$(nvidia-smi -L 2>/dev/null | wc -l)
if [ "$GPUS" -lt 1 ]; then
    echo "run_distributed: nvidia-smi finds no GPU"
    exit 2
fi
NGPU=${NGPU:-$GPUS}
nvidia-smi topo -m > "$RESULTS/nvidia-smi-topo.txt" 2>&1
echo "run_distributed: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $GPUS GPU(s), runs on: $NGPU, results in $RESULTS"

# ---- build (configure first only when the build tree does not exist)
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
    CAP=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d ' .')
    [[ "$CAP" =~ ^[0-9]+$ ]] || CAP=native
    GEN=()
    command -v ninja >/dev/null 2>&1 && GEN=(-G Ninja)
    # shellcheck disable=SC2086
    cmake -S . -B "$BUILD" ${GEN[@]+"${GEN[@]}"} -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$CAP" \
        -DGPUPRIM_WITH_CUDA=ON -DGPUPRIM_BUILD_BENCH=ON -DBUILD_TESTING=OFF -DGPUPRIM_BUILD_EXAMPLES=OFF \
        ${CMAKE_ARGS:-} > "$RESULTS/distributed_build.log" 2>&1 || {
        echo "run_distributed: configure failed:"; tail -n 30 "$RESULTS/distributed_build.log"; exit 2; }
fi
if ! cmake --build "$BUILD" --target distributed_bench -j "$(nproc)" >> "$RESULTS/distributed_build.log" 2>&1; then
    echo "run_distributed: building distributed_bench failed (is it configured? the configure log says"
    echo "'distributed_bench skipped' when MPI or NCCL was not found):"
    grep -E 'distributed_bench|FAILED|error' "$RESULTS/distributed_build.log" | head -n 40
    exit 2
fi

STATUS=0
SUMMARY=()
for np in $NGPU; do
    log="$RESULTS/distributed_p$np.log"
    echo "=== mpirun -np $np"
    # shellcheck disable=SC2086
    timeout "$TIMEOUT" mpirun --allow-run-as-root --oversubscribe -np "$np" -x NCCL_NVLS_ENABLE=0 ${MPIRUN_ARGS:-} \
        "$BIN" --csv "$RESULTS/distributed_p$np.csv" "$@" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    [ "$rc" = 0 ] || STATUS=1
    SUMMARY+=("mpirun -np $np: exit $rc ($log)")
done

if [ "${SKIP_SINGLE:-0}" != 1 ]; then
    log="$RESULTS/distributed_1proc.log"
    echo "=== --single-process ($GPUS GPUs, one thread each)"
    timeout "$TIMEOUT" "$BIN" --single-process --csv "$RESULTS/distributed_1proc.csv" "$@" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    [ "$rc" = 0 ] || STATUS=1
    SUMMARY+=("--single-process: exit $rc ($log)")
fi

echo
echo "=== summary"
printf '  %s\n' "${SUMMARY[@]}"
exit "$STATUS"
