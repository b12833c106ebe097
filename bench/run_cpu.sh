#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The CPU benchmark against numpy: a Release build of the CPU backend (in
# BUILD_DIR, default build-bench-cpu), then bench/cpu_table.py, which runs
# gpuprim_cpu_bench on 1 thread and all threads and numpy in the same run and
# prints the Markdown table for bench/RESULTS.md.
# Environment: BUILD_DIR; COUNTS (default 1000,100000,1000000,10000000);
# REPS (default 5); OPS (a comma-separated subset of cpu_table.py's ops); BASELINE (a gpuprim_cpu_bench built against another
# libgpuprim, for a column of its 1-thread times); WAIT_QUIET (seconds to
# wait, before each op, for other processes to leave the CPU idle; default 0).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-bench-cpu}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DGPUPRIM_WITH_CUDA=OFF \
  | grep "gpuprim: CPU engine"
cmake --build "$build" -j 2 --target gpuprim_cpu_bench
echo "date: $(date -u +%Y-%m-%d), commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)," \
     "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
python3 bench/cpu_table.py "$build/gpuprim_cpu_bench" --counts "${COUNTS:-1000,100000,1000000,10000000}" \
  --reps "${REPS:-5}" ${OPS:+--ops "$OPS"} --wait-quiet "${WAIT_QUIET:-0}" ${BASELINE:+--baseline "$BASELINE"}
