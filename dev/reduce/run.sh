#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Runs on the device machine from the repo root. The binary is built on the
# dev machine (see check_reduce.cu) and carried in build-reduce/.
# usage: dev/reduce/run.sh [sweep]
set -o pipefail
OUT=${OUT:-/tmp/reduce-out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv 2>&1
build-reduce/check_reduce full ${1:-} 2>&1 | tee "$OUT/full.log"
echo "full rc=$?"
# Kernel durations (no launch overhead), warm L2, clocks as found.
profile() {  # binary, csv, labels
    timeout 150 ncu --metrics gpu__time_duration.sum --cache-control none --clock-control none \
        -k "regex:reduce_kernel|DeviceReduce" --csv --log-file "$2" "$1" ncu "$3" > /tmp/ncu_stdout.txt 2>&1
    echo "ncu $1 rc=$? $(wc -l < "$2") lines"
}
profile build-reduce/check_reduce "$OUT/ncu.csv" "$OUT/ncu_labels.txt"
# A/B: a build of the driver against another reduce.cu (-Ibuild-reduce/old
# ahead of -Isrc), if present, timed on the same machine.
if [ -x build-reduce/check_reduce_run2 ]; then
    build-reduce/check_reduce_run2 perf > "$OUT/perf_prev.log" 2>&1
    echo "previous version:"; sed -n '/i32 sum  /,/2^28/p' "$OUT/perf_prev.log"
    profile build-reduce/check_reduce_run2 "$OUT/ncu_prev.csv" "$OUT/ncu_prev_labels.txt"
fi
for tool in memcheck synccheck racecheck initcheck; do
    timeout 45 compute-sanitizer --tool $tool --error-exitcode 9 build-reduce/check_reduce small > /tmp/san.log 2>&1
    rc=$?
    cat /tmp/san.log >> "$OUT/san.log"
    echo "sanitizer $tool rc=$rc : $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tail -1) : $(grep SUMMARY: /tmp/san.log | grep cases)"
done
