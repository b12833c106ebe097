// Per-architecture shape of the reduce/dot kernel (src/cuda/reduce.cu).
#pragma once

#include <cstdint>

namespace gpuprim::cuda {

// Compile-time part, the same for every architecture so the kernel is
// instantiated once per dtype and op: it sizes shared memory (largest block)
// and the register array of loads each thread keeps in flight.
constexpr int kReduceMaxBlockThreads = 512;
// 16-byte loads per thread and input issued back to back each tile: 64 bytes
// in flight per thread at >= 1024 threads/SM covers HBM latency on A100 and
// H100. Items per thread follow: 16 for 4-byte types, 8 for 8-byte types, so
// every dtype moves the same bytes per tile.
constexpr int kReduceVectorsPerThread = 4;

struct ReduceTuning {
    int block_threads;  // multiple of 32, <= kReduceMaxBlockThreads
    int blocks_per_sm;  // the persistent grid is at most sm_count * blocks_per_sm blocks
    // Inputs of at most this many bytes (all inputs together) run as a single
    // block: no workspace, no ticket, no second round trip through memory.
    uint64_t single_block_max_bytes;
};

inline ReduceTuning reduce_tuning(int compute_capability) {
    // H100, measured (dev/reduce/NOTES.md): 256 x 4 reaches 3040-3095 GB/s at 1 GiB
    // for every dtype and op, and 4 blocks of 256 keep even the 62-register dot
    // kernels fully resident; 128-thread blocks or 1-2 blocks/SM lost up to 7%
    // on float min/max. One block beats the ticket round trip up to 64 KiB.
    if (compute_capability >= 90) return {256, 4, 65536};
    // Ampere/Ada: same shape (2048 threads/SM, 64K registers); not measured here.
    if (compute_capability >= 80) return {256, 4, 65536};
    return {256, 4, 32768};
}

}  // namespace gpuprim::cuda
