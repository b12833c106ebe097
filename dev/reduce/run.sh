#!/bin/bash
# Runs on the device machine from the repo root. The binary is built on the
# dev machine (see check_reduce.cu) and carried in build-reduce/.
# usage: dev/reduce/run.sh [sweep]
set -o pipefail
OUT=${OUT:-/tmp/reduce-out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv 2>&1 | tee "$OUT/gpu.txt"
build-reduce/check_reduce full ${1:-} 2>&1 | tee "$OUT/full.log"
echo "full rc=$?"
# Kernel durations (no launch overhead), warm L2, clocks as found.
timeout 150 ncu --metrics gpu__time_duration.sum --cache-control none --clock-control none \
    -k "regex:reduce_kernel|DeviceReduce" --csv --log-file "$OUT/ncu.csv" \
    build-reduce/check_reduce ncu "$OUT/ncu_labels.txt" > "$OUT/ncu_stdout.txt" 2>&1
echo "ncu rc=$? $(wc -l < "$OUT/ncu.csv") lines"
for tool in memcheck synccheck racecheck initcheck; do
    timeout 45 compute-sanitizer --tool $tool --error-exitcode 9 build-reduce/check_reduce small > "$OUT/san_$tool.log" 2>&1
    echo "sanitizer $tool rc=$? : $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/san_$tool.log" | tail -1) : $(grep SUMMARY: "$OUT/san_$tool.log" | grep cases)"
done
