#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# One device call: full checks + timings, then the three sanitizers on `small`
# (in parallel), then a short summary. Usage: dev/scan/device_run.sh [full_timeout_s]
OUT=${OUT:-/tmp/scan_out}; mkdir -p "$OUT"
B=build-scan/check_scan
[ -x $B ] || nvcc -std=c++17 -O3 -arch=sm_90 --expt-relaxed-constexpr -lineinfo -Isrc -Iinclude dev/scan/check_scan.cu -o $B
T=${1:-140}
CUOBJDUMP=cuobjdump; command -v $CUOBJDUMP >/dev/null || CUOBJDUMP=/usr/local/cuda/bin/cuobjdump
$CUOBJDUMP --dump-resource-usage $B 2>&1 | grep -A1 -E "scan_pipelined_kernel|scan_tile_per_block_kernel" | grep -o "REG:[0-9]* STACK:[0-9]* SHARED:[0-9]* LOCAL:[0-9]*" | sort | uniq -c > $OUT/resources.txt
timeout $T $B full > $OUT/full.log 2>&1; echo "full rc=$?" > $OUT/rc.txt
CS=compute-sanitizer; command -v $CS >/dev/null || CS=/usr/local/cuda/bin/compute-sanitizer
for tool in memcheck racecheck synccheck; do
  ( timeout 150 $CS --tool $tool --error-exitcode 9 $B small > $OUT/$tool.log 2>&1; echo "$tool rc=$?" >> $OUT/rc_$tool.txt ) &
done
wait
cat $OUT/rc*.txt
for tool in memcheck racecheck synccheck; do echo "== $tool"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|failures" $OUT/$tool.log | tail -3; done
echo "== full"; grep -E "FAIL|failures|differing" $OUT/full.log | head -20
echo "== registers (count, usage) of the look-back kernel instantiations"; cat $OUT/resources.txt
sed -n '/== tuning sweep/,$p' $OUT/full.log
