// SPDX-License-Identifier: Apache-2.0
// Per-architecture shape of the reduce/dot kernel (src/cuda/reduce/).
#pragma once

#include "cuda/util/code_arch.h"

#include <cstdint>

namespace gpuprim::cuda {

// Compile-time part, the same for every architecture so the kernel is
// instantiated once per dtype and op.
// Threads per block. A constant, so a thread's loads of one tile are one
// address plus constant offsets: with a run-time block size ptxas spent the
// registers on addresses and issued the i32 sum's loads two at a time. 256 was
// the best block size measured on H100 (128-thread blocks, or 512 with 1-2
// blocks/SM, lost up to 7% on float min/max; docs/tuning/reduce.md).
constexpr int kReduceBlockThreads = 256;
// Blocks per SM the kernel is compiled for (__launch_bounds__): lets ptxas
// spend up to 64 registers so every load of a tile is issued before the
// first is used (left to itself it squeezed the 4-byte sums into 32 and
// issued three loads, then the fourth after the first adds).
constexpr int kReduceMinBlocksPerSm = 4;
// 16-byte loads per thread and input issued back to back each tile. Sums and
// integer MIN/MAX take 8 (128 bytes in flight per thread, 128 KiB per SM at
// 4 blocks of 256: H100, 1 GiB, 0.5-1% faster than 4 for the 4- and 8-byte
// sums); the float MIN/MAX (fast fold with its NaN and zero flags) and dot
// (two inputs) kernels take 4, which 64 registers hold without spilling.
// Items per thread follow the vector size, so every dtype moves the same
// bytes per tile.
constexpr int kReduceVectorsPerThread = 8;
constexpr int kReduceVectorsPerThreadHeavy = 4;

struct ReduceTuning {
    // The persistent grid is at most sm_count * blocks_per_sm blocks, and at
    // most one wave: fewer per SM when fewer of the kernel's blocks fit
    // (the float MIN/MAX and dot kernels need more registers than the sums).
    int blocks_per_sm;
    // Inputs of at most this many bytes (all inputs together) run as a single
    // block: no workspace, no ticket, no second round trip through memory.
    uint64_t single_block_max_bytes;
};

// Hopper (sm_90), measured on H100 (docs/tuning/reduce.md): 4 blocks/SM. 8
// (as many as fit: 5 for the float MIN/MAX and dot kernels) was within 1% at
// 2^16-2^26 and 1-2% slower at 2^28-2^30. One block beats the ticket round
// trip up to 64 KiB.
struct ReduceTuningSm90 {
    static ReduceTuning tuning() { return {4, 65536}; }
};

// Ampere/Ada (sm_80 code): same shape (2048 threads/SM, 64K registers); not
// measured here.
struct ReduceTuningSm80 {
    static ReduceTuning tuning() { return {4, 65536}; }
};

// Newer than Hopper: Hopper's until measured.
using ReduceTuningNewer = ReduceTuningSm90;

// The reduce's (and dot's) tuning for the device code's architecture (code_arch.h).
inline ReduceTuning reduce_tuning(int code_arch) {
    return with_arch_tuning<ReduceTuningSm80, ReduceTuningSm90, ReduceTuningNewer>(
        code_arch, [](auto arch) { return decltype(arch)::tuning(); });
}

}  // namespace gpuprim::cuda
