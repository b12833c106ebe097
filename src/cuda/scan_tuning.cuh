// Per-architecture tuning of the prefix scan (src/cuda/scan.cu), by element
// width. The kernel geometry is a compile-time configuration; architectures
// that share one share its instantiations.
#pragma once

#include "cuda/block/block_scan.cuh"

#include <cstdint>

namespace gpuprim::cuda {

// What the kernels are compiled for: kThreads data threads per block,
// kVectors 16-byte vectors per thread, cache hints for the streaming loads
// and stores, how many 32-tile windows of aggregates a look-back may hold
// before it waits for an inclusive prefix instead of reading further back,
// whether an extra warp does the look-back while the data warps load, and a
// minimum of resident blocks per SM for the register allocator (0: none).
template <int Threads, int Vectors, CacheHint Load, CacheHint Store, int MaxSavedWindows,
          bool LookbackWarp, int MinBlocks = 0>
struct ScanKernelConfig {
    static constexpr int kThreads = Threads;
    static constexpr int kVectors = Vectors;
    static constexpr CacheHint kLoad = Load;
    static constexpr CacheHint kStore = Store;
    static constexpr int kMaxSavedWindows = MaxSavedWindows;
    static constexpr bool kLookbackWarp = LookbackWarp;
    static constexpr int kMinBlocks = MinBlocks;
    static constexpr int kBlockThreads = Threads + (LookbackWarp ? 32 : 0);
};

// Hopper (sm_90). Measured on H100 SXM with dev/scan/check_scan.cu.
template <int kElementBytes>
struct ScanTuningSm90 {
    using Config = ScanKernelConfig<256, 4, CacheHint::Default, CacheHint::Default, 8, true>;
    // Inputs of at most this many tiles run in one block: no ticket, no
    // look-back, no workspace.
    static constexpr uint32_t kSingleBlockMaxTiles = 1;
    // Status slots one clearing tile clears ahead (see block/tile_lookback.cuh).
    static constexpr uint32_t kClearChunk = 256;
    // Back-off between status polls of a look-back (ns).
    static constexpr uint32_t kPollNs = 64;
};

// Ampere and anything older than Hopper that runs the sm_80 code. Not
// measured; the Hopper geometry is a sound default (fewer SMs, same limits).
template <int kElementBytes>
struct ScanTuningSm80 {
    using Config = typename ScanTuningSm90<kElementBytes>::Config;
    static constexpr uint32_t kSingleBlockMaxTiles = 1;
    static constexpr uint32_t kClearChunk = 256;
    static constexpr uint32_t kPollNs = 64;
};

// Calls f(Tuning{}) with the tuning for compute capability cc (major*10+minor).
template <int kElementBytes, typename F>
void with_scan_tuning(int compute_capability, F &&f) {
    if (compute_capability >= 90) f(ScanTuningSm90<kElementBytes>{});
    else f(ScanTuningSm80<kElementBytes>{});
}

}  // namespace gpuprim::cuda
