// SPDX-License-Identifier: Apache-2.0
// Per-architecture shape of the argreduce (argmin / argmax) kernels
// (src/cuda/argreduce/). Not yet measured on a GPU: the values follow the
// reduce's (reduce_policy.cuh, docs/tuning/reduce.md), whose first pass
// moves the same bytes; docs/tuning/argreduce.md keeps the record.
#pragma once

#include "cuda/util/code_arch.h"

#include <cstdint>

namespace gpuprim::cuda {

// Compile-time part, the same for every architecture so each kernel is
// instantiated once per dtype and op.
// Threads per block of both passes: a constant, so a tile's loads are one
// address plus constant offsets and BlockReduce's warp totals fold unrolled.
constexpr int kArgreduceBlockThreads = 256;
// Blocks per SM the first pass is compiled for (__launch_bounds__): up to 64
// registers a thread, enough for a tile's loads and the (key, position) pair.
constexpr int kArgreduceMinBlocksPerSm = 4;
// 16-byte loads per thread issued back to back each tile (64 bytes in flight
// per thread; the reduce's float MIN/MAX kernel, which also carries more
// than a value per thread, takes as many).
constexpr int kArgreduceVectorsPerThread = 4;
// 1-byte elements take 2: a vector is 16 keys, and 4 of them (64 keys, fully
// unrolled) spilled registers under the 64 the launch bounds allow (ptxas
// --resource-usage: ~150 bytes of spill stores for i8/u8; none with 2).
constexpr int kArgreduceVectorsPerThreadBytes = 2;
template <typename T>
constexpr int kArgreduceVectorsFor = sizeof(T) == 1 ? kArgreduceVectorsPerThreadBytes : kArgreduceVectorsPerThread;

struct ArgreduceTuning {
    // The first pass's grid is at most sm_count * blocks_per_sm blocks (one
    // wave), fewer per SM when fewer of the kernel's blocks fit.
    int blocks_per_sm;
    // Inputs of at most this many bytes run as one block: the first pass
    // writes the position itself, no partials, no second pass.
    uint64_t single_block_max_bytes;
};

// Hopper (sm_90): the reduce's measured shape (4 blocks/SM, one block up to
// 64 KiB); not measured for argreduce yet.
struct ArgreduceTuningSm90 {
    static ArgreduceTuning tuning() { return {4, 65536}; }
};

// Ampere/Ada (sm_80 code): the same shape; not measured.
struct ArgreduceTuningSm80 {
    static ArgreduceTuning tuning() { return {4, 65536}; }
};

// Newer than Hopper: Hopper's until measured.
using ArgreduceTuningNewer = ArgreduceTuningSm90;

// Argmin/argmax's tuning for the device code's architecture (code_arch.h).
inline ArgreduceTuning argreduce_tuning(int code_arch) {
    return with_arch_tuning<ArgreduceTuningSm80, ArgreduceTuningSm90, ArgreduceTuningNewer>(
        code_arch, [](auto arch) { return decltype(arch)::tuning(); });
}

}  // namespace gpuprim::cuda
