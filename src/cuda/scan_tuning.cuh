// Per-architecture tuning of the prefix scan (src/cuda/scan.cu), by element
// width. The kernel geometry is a compile-time configuration; architectures
// that share one share its instantiations.
#pragma once

#include "core/ops.h"
#include "cuda/block/block_scan.cuh"

#include <cstdint>
#include <type_traits>

namespace gpuprim::cuda {

// What the kernels are compiled for: kThreads threads per block, kVectors
// 16-byte vectors per thread (tile = kThreads * kVectors * 16 bytes), cache
// hints for the single-block path's loads and the stores, how many 32-tile
// windows of aggregates a look-back may hold before it waits for an
// inclusive prefix instead of reading further back, and the resident blocks
// per SM the register allocator must allow.
template <int Threads, int Vectors, CacheHint Load, CacheHint Store, int MaxSavedWindows,
          int MinBlocks>
struct ScanKernelConfig {
    static constexpr int kThreads = Threads;
    static constexpr int kVectors = Vectors;
    static constexpr CacheHint kLoad = Load;
    static constexpr CacheHint kStore = Store;
    static constexpr int kMaxSavedWindows = MaxSavedWindows;
    static constexpr int kMinBlocks = MinBlocks;
};

// Tunings may give MIN/MAX their own configuration (MinMaxConfig); SUM and
// tunings without one use Config. Either way one configuration per operator.
template <typename Op>
struct IsScanSum : std::false_type {};
template <typename T>
struct IsScanSum<SumOp<T>> : std::true_type {};

template <typename Tuning, typename Op, typename = void>
struct ScanConfigFor {
    using type = typename Tuning::Config;
};
template <typename Tuning, typename Op>
struct ScanConfigFor<Tuning, Op, std::void_t<typename Tuning::MinMaxConfig>> {
    using type = std::conditional_t<IsScanSum<Op>::value, typename Tuning::Config,
                                    typename Tuning::MinMaxConfig>;
};

// Hopper (sm_90), measured on H100 SXM with dev/scan/check_scan.cu. A tile
// waits ~8 us (registers) to ~20 us (staged, busier) for its prefix, so
// throughput follows how much tile data can wait per SM. Kept in registers
// (256x4 .. 256x8, with or without a separate look-back warp) it tops out
// near 2.1 TB/s; staged in shared memory, 32 KB tiles x 6 blocks per SM:
// 2.40 TB/s (4-byte), 2.64 TB/s (8-byte) at 2^28 / 2^27 elements.
// 128x8 with 12 blocks: 2.30 / 2.43; 256x8 x 6: 2.34 / 2.35.
// With the last tile's done count taken without a reply (block/tile_lookback.cuh):
// SUM 2^28 i32 2.42 TB/s, f32 2.44, f64 2^27 2.64; 128x20/128x13/128x12 and
// streaming stores all within 2% of 128x16. Traced: a 32 KB tile lives
// ~20 us, ~4 of them for its ticket, ~5 to load, ~9 waiting on older tiles.
// 4-byte MIN/MAX (float: NaN and signed-zero rules, many instructions per
// element) are compute-bound at 6 blocks of 4 warps (f32 min 1.03 TB/s) and
// take 128x8 with 12 blocks, twice the warps (1.89 TB/s measured before).
template <int kElementBytes>
struct ScanTuningSm90 {
    using Config = ScanKernelConfig<128, 16, CacheHint::Default, CacheHint::Default, 8, 6>;
    using MinMaxConfig =
        std::conditional_t<kElementBytes == 4,
                           ScanKernelConfig<128, 8, CacheHint::Default, CacheHint::Default, 8, 12>, Config>;
    // Inputs of at most this many tiles run in one block: no ticket, no
    // look-back, no workspace.
    static constexpr uint32_t kSingleBlockMaxTiles = 1;
    // Status slots one clearing tile clears ahead (see block/tile_lookback.cuh).
    static constexpr uint32_t kClearChunk = 256;
    // Back-off between status polls of a look-back (ns); 0..200 measured
    // within noise of each other.
    static constexpr uint32_t kPollNs = 64;
};

// Ampere and anything older than Hopper that runs the sm_80 code. Not
// measured; the Hopper geometry fits its limits (164 KB shared memory per SM
// allows 4-5 such blocks instead of 6).
template <int kElementBytes>
struct ScanTuningSm80 {
    using Config = typename ScanTuningSm90<kElementBytes>::Config;
    using MinMaxConfig = typename ScanTuningSm90<kElementBytes>::MinMaxConfig;
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
