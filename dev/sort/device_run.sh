#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# One device call: correctness, timings vs CUB, shape sweep, past-2^32 test,
# sanitizers, ncu profiles. Expects build-sort/check_sort (dev/sort/build.sh)
# carried along. Logs go to $OUT; a summary is printed last.
B=build-sort/check_sort
O=${OUT:-/tmp}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu --format=csv,noheader
run() { local name=$1 limit=$2; shift 2; local t0=$(date +%s)
  timeout "$limit" "$@" > "$O/$name.log" 2>&1; local rc=$?
  echo "== $name rc=$rc $(( $(date +%s) - t0 ))s" | tee -a "$O/summary.log"; }
NCU="ncu --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section InstructionStats"
for step in ${STEPS:-check time big sweep memcheck racecheck}; do
  case $step in
    check) run check 100 $B check ;;
    time) run time 50 $B time ;;
    trace) run trace 40 $B trace ;;
    big) run big 30 $B big ;;
    sweep) run sweep 150 $B sweep ;;
    memcheck) run memcheck 30 compute-sanitizer --tool memcheck --error-exitcode 3 $B sanitize ;;
    racecheck) run racecheck 40 compute-sanitizer --tool racecheck --error-exitcode 3 $B sanitize ;;
    ncu) run ncu_ours 40 $NCU -k regex:"onesweep|histogram" $B profile k32 ours
         run ncu_cub 40 $NCU -k regex:"Onesweep|Histogram" $B profile k32 cub ;;
  esac
done
cat "$O"/ncu_ours.log "$O"/ncu_cub.log > "$O/ncu.log" 2>/dev/null; rm -f "$O"/ncu_ours.log "$O"/ncu_cub.log
echo; echo "#### check"; grep -E "FAIL|checked" "$O/check.log" | head -25
echo "#### time"; grep -v "^device" "$O/time.log" | tail -24
echo "#### trace"; grep "^trace" "$O/trace.log" 2>/dev/null | cut -c1-260
echo "#### big"; grep -E "big|threw" "$O/big.log"
echo "#### sweep"; grep sweep "$O/sweep.log" | sed 's/sweep //; s/  */ /g'
for s in memcheck racecheck; do echo "#### $s"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|checked|Error|error" "$O/$s.log" | head -6; done
echo "#### ncu"; grep -E "^  [a-z_:]*(onesweep|histogram|Onesweep|Histogram)|Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Issued Ipc Active|Warp Cycles Per Issued|Memory Throughput|DRAM Throughput|Executed Instructions  " "$O/ncu.log" | sed 's/  */ /g; s/(.*//' | cut -c1-80 | head -90
cat "$O/summary.log"
