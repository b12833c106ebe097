#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Builds the sort check driver into build-sort/ (run from the repository root).
# ARCH=sm_90 by default; JOBS parallel compiles.
set -e
ARCH=${ARCH:-sm_90}
OUT=${BUILD:-build-sort}
mkdir -p "$OUT"
FLAGS="-std=c++17 -O3 -arch=$ARCH -Isrc -Iinclude -Idev/sort -lineinfo -DGPUPRIM_SORT_TRACE"
compile() { nvcc $FLAGS -c "$1" -o "$OUT/$(basename "$1" .cu).o"; }
export -f compile; export FLAGS OUT
printf '%s\n' src/cuda/sort.cu src/cuda/radix_sort.cu src/cuda/block_sort.cu dev/sort/check_sort.cu \
    dev/sort/cub_bar.cu dev/sort/sweep_shapes.cu | xargs -P "${JOBS:-2}" -I{} bash -c 'compile {}'
nvcc $FLAGS "$OUT"/sort.o "$OUT"/radix_sort.o "$OUT"/block_sort.o "$OUT"/check_sort.o "$OUT"/cub_bar.o \
    "$OUT"/sweep_shapes.o -o "$OUT"/check_sort
echo built "$OUT"/check_sort
