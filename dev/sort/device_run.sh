#!/bin/bash
# One device call: correctness, timings vs CUB, shape sweep, past-2^32 test,
# sanitizers. Expects build-sort/check_sort (dev/sort/build.sh) carried along.
# Logs go to $OUT; a summary is printed last.
B=build-sort/check_sort
O=${OUT:-/tmp}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu --format=csv,noheader
run() { local name=$1 limit=$2; shift 2; local t0=$(date +%s)
  timeout "$limit" "$@" > "$O/$name.log" 2>&1; local rc=$?
  echo "== $name rc=$rc $(( $(date +%s) - t0 ))s" | tee -a "$O/summary.log"; }
for step in ${STEPS:-check time big sweep memcheck racecheck}; do
  case $step in
    check) run check 70 $B check ;;
    time) run time 50 $B time ;;
    big) run big 30 $B big ;;
    sweep) run sweep 40 $B sweep ;;
    memcheck) run memcheck 40 compute-sanitizer --tool memcheck --error-exitcode 3 $B sanitize ;;
    racecheck) run racecheck 50 compute-sanitizer --tool racecheck --error-exitcode 3 $B sanitize ;;
  esac
done
echo; echo "#### check"; grep -E "FAIL|checked" "$O/check.log" | head -25
echo "#### time"; grep -v "^device" "$O/time.log" | tail -20
echo "#### big"; grep -E "big|threw" "$O/big.log"
echo "#### sweep"; grep sweep "$O/sweep.log" | sed 's/sweep //'
for s in memcheck racecheck; do echo "#### $s"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|checked|Error|error" "$O/$s.log" | head -6; done
cat "$O/summary.log"
