// SPDX-License-Identifier: Apache-2.0
// Per-architecture tuning of the prefix scan (src/cuda/scan/scan.cu), by element
// width. The kernel geometry is a compile-time configuration; architectures
// that share one share its instantiations.
#pragma once

#include "core/ops.h"
#include "cuda/block/block_scan.cuh"
#include "cuda/util/code_arch.h"

#include <cstdint>
#include <type_traits>

namespace gpuprim::cuda {

// What the kernels are compiled for: kThreads threads per block, kVectors
// 16-byte vectors per thread (tile = kThreads * kVectors * 16 bytes), cache
// hints for the single-block path's loads and the stores, how many groups of
// 32 tiles float SUM's grouped look-back may walk before it waits for a group
// prefix instead of reading further back (the other operators' look-back
// walks without limit: engine/tile_lookback.cuh), the resident blocks per
// SM the register allocator must allow, kStages, and the windows one
// look-back poll reads at once, and how many bulk copies fill one stage of
// the pipelined kernel (sm_90 and later; 0: cp.async by every thread).
// kStages == 1: one block per tile (scan_tile_per_block_kernel); kStages >=
// 2: persistent blocks with kStages tiles in flight each
// (scan_pipelined_kernel).
template <int Threads, int Vectors, CacheHint Load, CacheHint Store, int MaxSavedGroups,
          int MinBlocks, int Stages, int WindowsPerPoll, int BulkCopies = 0, unsigned Archs = kAllArchs>
struct ScanKernelConfig {
    static constexpr int kThreads = Threads;
    static constexpr int kVectors = Vectors;
    static constexpr CacheHint kLoad = Load;
    static constexpr CacheHint kStore = Store;
    static constexpr int kMaxSavedGroups = MaxSavedGroups;
    static constexpr int kMinBlocks = MinBlocks;
    static constexpr int kStages = Stages;
    static constexpr int kWindowsPerPoll = WindowsPerPoll;
    static constexpr int kBulkCopies = BulkCopies;
    // The architectures whose tunings name this configuration (code_arch.h):
    // the pipelined kernel's body is compiled only in their device passes.
    static constexpr unsigned kArchs = Archs;
    static_assert(Threads >= 64, "a second warp takes the next ticket while the first looks back");
    static_assert(Stages >= 1, "at least the tile being scanned");
};

// Tunings may give MIN/MAX (MinMaxConfig) and float SUM (OrderedSumConfig,
// the grouped look-back) their own configurations; anything without one
// uses Config. Either way one configuration per operator.
template <typename Op>
struct ScanSumKind {
    static constexpr bool kSum = false, kOrdered = false;
};
template <typename T>
struct ScanSumKind<SumOp<T>> {
    static constexpr bool kSum = true, kOrdered = ScanOpTraits<T, SumOp<T>>::kOrdered;
};

// Tuning's configuration named by Member, or its Config if it has none.
template <typename Tuning>
using OrderedSumMember = typename Tuning::OrderedSumConfig;
template <typename Tuning>
using MinMaxMember = typename Tuning::MinMaxConfig;
template <typename Tuning, template <typename> class Member, typename = void>
struct MemberConfigOr {
    using type = typename Tuning::Config;
};
template <typename Tuning, template <typename> class Member>
struct MemberConfigOr<Tuning, Member, std::void_t<Member<Tuning>>> {
    using type = Member<Tuning>;
};

template <typename Tuning, typename Op>
struct ScanConfigFor {
    using type = std::conditional_t<
        !ScanSumKind<Op>::kSum, typename MemberConfigOr<Tuning, MinMaxMember>::type,
        std::conditional_t<ScanSumKind<Op>::kOrdered, typename MemberConfigOr<Tuning, OrderedSumMember>::type,
                           typename Tuning::Config>>;
};

// Hopper (sm_90), measured on H100 SXM (docs/tuning/scan.md has the runs).
// One block per tile, the tile staged in shared memory (32 KB x 6 blocks per
// SM), reached 2.42 TB/s (4-byte SUM at 2^28); traced, a tile lived ~20 us:
// ~4 waiting for its ticket, ~5 loading, ~9 waiting on older tiles, all the
// while holding its shared memory. SUM runs persistent blocks, one per SM;
// 384 threads with three 72 KB cp.async tiles in flight gave 2.67 TB/s i32,
// 2.88 TB/s i64 at 2^28. Sweeps (u32 2^28, TB/s): 384x12 2.62, 256x24 with two
// stages 2.64, 256x16 2.5, 512x8 2.5, two blocks of 3 x 32 KB 2.2; fewer,
// larger tiles shorten the look-back, whose cohorts hold one tile per block.
// One look-back window per poll beat 2 and 4 (the extra reads cost more
// than the round trips they save).
// MIN/MAX (float: NaN and signed-zero rules, many instructions per element)
// are compute-bound with few warps per SM: they keep one tile per block and
// many blocks (f32 max 2^28: 2.0 TB/s; pipelined with 8 warps per SM: 0.42).
// Integer SUM of 4-byte elements fills two 112 KB stages by bulk copy
// (TMA): 2^28 u32 765 us against 815 for the three cp.async stages of 72 KB
// (93.8% and 88% of a device copy, same run; docs/tuning/scan.md). Float SUM
// and 8-byte SUM lost with every bulk geometry tried (f64 2^27: 847 us at
// best vs 822, two stages 1010+) and keep cp.async: f32 with 320 threads x
// 14 vectors (819 us at 2^28 vs 849 for 384x12; 448x10 820), f64 with
// 384x12 (320x14 986 us, 448x10 887, 512x9 872 vs 818-824).
// The pipelined configurations are Hopper's and newer architectures' only
// (kSm90Up); the one-tile-per-block ones are shared with sm_80.
constexpr unsigned kSm90Up = arch_bit(TuningArch::Sm90) | arch_bit(TuningArch::Newer);
template <int kElementBytes>
struct ScanTuningSm90 {
    using Config = std::conditional_t<
        kElementBytes == 4, ScanKernelConfig<256, 28, CacheHint::Default, CacheHint::Default, 16, 1, 2, 1, 1, kSm90Up>,
        ScanKernelConfig<384, 12, CacheHint::Default, CacheHint::Default, 16, 1, 3, 1, 0, kSm90Up>>;
    using OrderedSumConfig = std::conditional_t<
        kElementBytes == 4, ScanKernelConfig<320, 14, CacheHint::Default, CacheHint::Default, 16, 1, 3, 1, 0, kSm90Up>,
        ScanKernelConfig<384, 12, CacheHint::Default, CacheHint::Default, 16, 1, 3, 1, 0, kSm90Up>>;
    using MinMaxConfig = std::conditional_t<
        kElementBytes == 4, ScanKernelConfig<128, 8, CacheHint::Default, CacheHint::Default, 8, 12, 1, 1>,
        ScanKernelConfig<128, 16, CacheHint::Default, CacheHint::Default, 8, 6, 1, 1>>;
    // SUM inputs with fewer than this many pipelined tiles per resident block
    // (under ~118 MB of 4-byte integers, ~76 MB of 8-byte ones, on an H100)
    // run MidConfig instead, the one-tile-per-block shape SUM had before the
    // pipeline: more, smaller tiles finish a mid-size input sooner (2^20
    // i32: 9.1 us vs 11.6 pipelined; f32 2^24: 64 us vs 70), and a one-tile
    // input runs in one block of 128 threads (2^10: 3.8 us vs 5.4 with the
    // 384-thread block).
    static constexpr uint64_t kPipelineMinTilesPerBlock = 8;
    // Float SUM (grouped look-back: prefixes by groups of 32 tiles, so more,
    // smaller tiles mean a longer chain of group prefixes) turns pipelined
    // sooner: f32 2^24 (7 pipelined tiles per block) 69 us vs 101 one tile
    // per block; 2^22 (2 per block) 23.9 vs 24.5, kept one tile per block.
    static constexpr uint64_t kPipelineMinTilesPerBlockOrdered = 4;
    // Walking back 8 groups per poll measured f32 2^23 56 us vs 65 (2^20-2^22
    // within 1%, f64 1-2% slower) but was never enabled; the code is gone
    // (docs/tuning/scan.md has the measurement).
    using MidConfig = ScanKernelConfig<128, 16, CacheHint::Default, CacheHint::Default, 8, 6, 1, 1>;
    // Inputs of at most this many tiles run in one block: no ticket, no
    // look-back, no workspace.
    static constexpr uint32_t kSingleBlockMaxTiles = 1;
    // Status slots one clearing tile clears ahead (see scan/tile_tickets.cuh).
    static constexpr uint32_t kClearChunk = 256;
    // Back-off between status polls of a look-back (ns); 0..200 measured
    // within noise of each other.
    static constexpr uint32_t kPollNs = 64;
};

// Ampere and anything older than Hopper that runs the sm_80 code. Not
// measured; the Hopper geometry fits its limits (164 KB of shared memory per
// SM: the pipelined SUM block of 192 KB does not, so it takes 3 x 32 KB; the
// persistent grid follows the occupancy the runtime reports).
template <int kElementBytes>
struct ScanTuningSm80 {
    using Config = ScanKernelConfig<128, 16, CacheHint::Default, CacheHint::Default, 16, 1, 3, 2, 0,
                                    arch_bit(TuningArch::Sm80)>;
    using MinMaxConfig = typename ScanTuningSm90<kElementBytes>::MinMaxConfig;
    static constexpr uint64_t kPipelineMinTilesPerBlock = 8;
    static constexpr uint64_t kPipelineMinTilesPerBlockOrdered = 4;
    using MidConfig = typename ScanTuningSm90<kElementBytes>::MidConfig;
    static constexpr uint32_t kSingleBlockMaxTiles = 1;
    static constexpr uint32_t kClearChunk = 256;
    static constexpr uint32_t kPollNs = 64;
};

// Newer than Hopper: Hopper's until measured (the same instantiations).
template <int kElementBytes>
using ScanTuningNewer = ScanTuningSm90<kElementBytes>;

// Calls f(Tuning{}) with the scan's tuning for the device code's
// architecture (code_arch.h).
template <int kElementBytes, typename F>
void with_scan_tuning(int code_arch, F &&f) {
    with_arch_tuning<ScanTuningSm80<kElementBytes>, ScanTuningSm90<kElementBytes>, ScanTuningNewer<kElementBytes>>(
        code_arch, f);
}

}  // namespace gpuprim::cuda
