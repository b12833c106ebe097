#!/bin/bash
# Scratch: the recorded run: topk_bench (normal and uniform keys) and torch.topk through bench_torch.py.
set -u
[ -f build-gpu/CMakeCache.txt ] || cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90-real -DGPUPRIM_BUILD_BENCH=ON -DGPUPRIM_BUILD_EXAMPLES=OFF > /dev/null
cmake --build build-gpu -j16 --target gpuprim_shared topk_bench 2>&1 | grep -E "error|warning" | head -20
git rev-parse --short HEAD; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
build-gpu/bench/topk_bench --csv $OUT/topk.csv 2>&1 | grep -v "^$"
build-gpu/bench/topk_bench --quick --uniform --filter "flat 2^2" 2>&1 | grep -v "^$"
GPUPRIM_LIBRARY=$PWD/build-gpu/libgpuprim.so PYTHONPATH=$PWD/python timeout 300 python3 python/benchmarks/bench_torch.py --topk 2>&1 | tail -25
