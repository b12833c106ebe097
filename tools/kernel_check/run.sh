#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Builds the kernel checkers (once) and runs one on this machine's GPU, then
# its small mode under compute-sanitizer. Logs go to $OUT (default
# /tmp/kernel_check). Usage, from the repository root:
#   tools/kernel_check/run.sh reduce [full|small|perf ...]
#   tools/kernel_check/run.sh scan   [full|small ...]
#   tools/kernel_check/run.sh sort   [check|time|sweep|big|trace|sanitize ...]
#   tools/kernel_check/run.sh select [check|small|big ...]
#   tools/kernel_check/run.sh reduce_by_key [check|small ...]
set -u
which=${1:?reduce, scan, sort, select or reduce_by_key}; shift
BUILD=${BUILD:-build-tools}
OUT=${OUT:-/tmp/kernel_check}
mkdir -p "$OUT"
if [ ! -x "$BUILD/tools/kernel_check/check_$which" ]; then
  cmake -S . -B "$BUILD" -DGPUPRIM_BUILD_TOOLS=ON -DBUILD_TESTING=OFF -DGPUPRIM_BUILD_EXAMPLES=OFF \
        -DCMAKE_BUILD_TYPE=Release ${CUDAARCHS:+-DCMAKE_CUDA_ARCHITECTURES=$CUDAARCHS} > "$OUT/cmake.log" || exit 1
  cmake --build "$BUILD" --target "check_$which" -j "${JOBS:-4}" || exit 1
fi
B=$BUILD/tools/kernel_check/check_$which
case $which in
  reduce|scan) modes=${*:-full}; small=small ;;
  sort) modes=${*:-check time big sweep}; small=sanitize ;;
  select) modes=${*:-check}; small=small ;;
  reduce_by_key) modes=${*:-check}; small=small ;;
  *) echo "unknown checker: $which" >&2; exit 2 ;;
esac
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu --format=csv,noheader 2>/dev/null
status=0
for mode in $modes; do
  "$B" "$mode" > "$OUT/$which-$mode.log" 2>&1; rc=$?
  echo "== $which $mode rc=$rc ($OUT/$which-$mode.log)"; [ $rc -eq 0 ] || status=1
done
CS=compute-sanitizer; command -v $CS > /dev/null || CS=/usr/local/cuda/bin/compute-sanitizer
if [ -z "${NO_SANITIZERS:-}" ] && command -v $CS > /dev/null; then
  for tool in memcheck racecheck synccheck; do
    timeout 300 $CS --tool $tool --error-exitcode 9 "$B" $small > "$OUT/$which-$tool.log" 2>&1; rc=$?
    echo "== $which $tool rc=$rc"; [ $rc -eq 0 ] || status=1
  done
fi
exit $status
