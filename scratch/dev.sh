#!/bin/bash
# Scratch: configure if needed, build the library and the top-k bench, run the agreement check and the bench.
set -u
[ -f build-gpu/CMakeCache.txt ] || cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90-real -DGPUPRIM_BUILD_BENCH=ON -DGPUPRIM_BUILD_EXAMPLES=OFF > /dev/null
cmake --build build-gpu -j16 --target gpuprim_shared topk_bench 2>&1 | grep -E "error|warning" | head -20
gcc -O2 scratch/topk_agree.c -I include -L build-gpu -lgpuprim -o build-gpu/agree || exit 1
LD_LIBRARY_PATH=build-gpu timeout 200 build-gpu/agree ${AGREE_CASES:-800} > build-gpu/out.txt 2>&1; echo "agree rc $?"; grep -A1 MISMATCH build-gpu/out.txt | head -20; tail -1 build-gpu/out.txt
timeout 300 build-gpu/bench/topk_bench --quick ${BENCH_ARGS:-} 2>&1 | grep -v "^$"
if [ -n "${TESTS:-}" ]; then
  cmake --build build-gpu -j16 --target test_topk test_backends_agree test_segmented test_sort 2>&1 | grep -E "error|warning" | head
  for t in ${TESTS}; do GPUPRIM_BACKEND=cuda timeout 300 build-gpu/test/$t > build-gpu/$t.log 2>&1; echo "$t rc $?"; tail -3 build-gpu/$t.log; done
fi
