// SPDX-License-Identifier: Apache-2.0
// The CUDA sort's tuning policy (sort.cu, radix_sort.cu, block_sort.cu): tile
// shapes (compile-time, each one kernel per key and value width), the size
// thresholds per architecture (SortTuningSm90, SortTuningSm80, chosen in
// sort_tuning()) and the size ladder that maps a count to a shape
// (radix_size_ladder).
#pragma once

#include "cuda/block/block_radix_rank.cuh"
#include "cuda/util/code_arch.h"

#include <cstdint>
#include <type_traits>

namespace gpuprim::cuda {

// One Onesweep pass kernel: kThreads x kItems keys per tile; kMinBlocks
// blocks per SM is what __launch_bounds__ asks the register allocator for;
// kStageValues copies the tile's values to shared memory asynchronously
// (cp.async) while the keys are ranked; kLookbackWindow predecessors are read
// at once during look-back; kPrefetch takes the next tile's ticket early and
// copies its keys to shared memory while the current tile is scattered;
// kEarlyCounts publishes the tile's digit counts before ranking (see
// BlockRadixRank).
template <int kThreads_, int kItems_, int kMinBlocks_, RadixMatch kMatch_, bool kStageValues_,
          int kLookbackWindow_, bool kPrefetch_ = false, bool kEarlyCounts_ = false>
struct OnesweepShape {
    static constexpr int kThreads = kThreads_;
    static constexpr int kItems = kItems_;
    static constexpr int kTile = kThreads_ * kItems_;
    static constexpr int kMinBlocks = kMinBlocks_;
    static constexpr RadixMatch kMatch = kMatch_;
    static constexpr bool kStageValues = kStageValues_;
    static constexpr int kLookbackWindow = kLookbackWindow_;
    static constexpr bool kPrefetch = kPrefetch_;
    static constexpr bool kEarlyCounts = kEarlyCounts_;
    static constexpr bool kMaskedDigits = false;  // whole-key sorts: byte digits
};

// A shape's kernel for bit-range sorts: digits at any bit, masked at the
// range's end (radix_plan.cuh pass_digit). Two shapes per key and value
// width (the fused one, then the large one), so bit ranges add two kernels
// each.
template <typename Shape>
struct MaskedDigitsShape : Shape {
    static constexpr bool kMaskedDigits = true;
};

// Shapes below were picked on an H100 (docs/tuning/sort.md has the sweep).
// AtomicOr ranking needs about half the instructions of ballots; packing the
// mask next to the count (AtomicOrPacked) was 2-8% slower on large tiles
// (bank conflicts of the 8-byte words) and match.any 40% slower; staging
// values keeps them out of registers; prefetching the next tile's keys did
// not pay.

// Large inputs: big tiles amortize the per-tile look-back and barriers.
// Early counts (session 6, 2^28 u32 keys): 5.84 ms against 6.12; u64 keys
// 2^26 at 384x22: 3.90 against 4.28 (384x14 without); u32/u32 pairs 2^28 at
// 384x20: 9.53 against 9.74 (384x16 without).
template <int kKeyBytes, int kValueBytes>
struct OnesweepLargeShape {  // 4-byte keys, 8-byte values; early counts: 2^26 3.55 ms against 3.67
    using type = OnesweepShape<384, 12, 2, RadixMatch::AtomicOr, true, 4, false, true>;
};
// 8-byte keys with values: early counts were slower (2^26 u64/u32 7.00 ms
// against 6.91, 2^25 u64/u64 4.44 against 4.23). u64/u64 2^25 on an H200
// (check_sort sweep): 384x12 3.25 ms, 384x10 3.38, 512x8 3.38, 384x14 3.65.
template <int kValueBytes>
struct OnesweepLargeShape<8, kValueBytes> {
    using type = OnesweepShape<384, 12, 2, RadixMatch::AtomicOr, true, 4>;
};
// u32/u32 pairs whose keys and values are placed differently (one in place,
// the other not); the others run packed (OnesweepPackedPairShape).
template <>
struct OnesweepLargeShape<4, 4> {
    using type = OnesweepShape<384, 20, 2, RadixMatch::AtomicOr, true, 4, false, true>;
};
// 1- and 2-byte keys with 4-byte values: the u32/u32 split-pairs tile.
template <>
struct OnesweepLargeShape<2, 4> {
    using type = OnesweepLargeShape<4, 4>::type;
};
template <>
struct OnesweepLargeShape<1, 4> {
    using type = OnesweepLargeShape<4, 4>::type;
};
// Keys placed while ranked (no rank array) fit three blocks per SM (56
// registers, no spills): 2^28 5.21 ms at 384x22 (384x20 5.28, 384x18 5.39-
// 5.41, 384x16 5.44, 256x24 x4 5.43, 512x16 x2 5.46) against 5.97 for
// 384x18 x2; 2^24 381 us (384x20 376, 384x18 380).
template <>
struct OnesweepLargeShape<4, 0> {
    using type = OnesweepShape<384, 22, 3, RadixMatch::AtomicOr, false, 4, false, true>;
};
template <>
struct OnesweepLargeShape<8, 0> {
    using type = OnesweepShape<384, 22, 2, RadixMatch::AtomicOr, false, 4, false, true>;
};

// 4-byte keys without values between medium_max and the large tile's range
// (three blocks per SM like it, smaller tiles so every SM gets some). Sweep
// (check_sort, us per call): 2^20 256x18 65.5 (384x18 71.4, 384x22 75.4,
// 384x18 x2 66.5, medium tile 69.2); 2^21 384x18 86.5 (256x18 91.6, 384x22
// 104.2); 2^22 384x18 130.5 (384x22 136.1); 2^24 384x18 381.5, 384x22 380.4.
using OnesweepKeys4SmallShape = OnesweepShape<256, 18, 3, RadixMatch::AtomicOr, false, 4, false, true>;
using OnesweepKeys4MidShape = OnesweepShape<384, 18, 3, RadixMatch::AtomicOr, false, 4, false, true>;
// 8-byte keys without values up to keys8_mid_max: 2^20 136.5 us against
// 160.3 for the large tile (medium 139.8), 2^21 198.2 against 200.3, 2^22
// 349.5 against 359.2.
using OnesweepKeys8MidShape = OnesweepShape<384, 14, 2, RadixMatch::AtomicOr, false, 4, false, true>;

// 4-byte keys with 4-byte values (keys and values both in place or both
// not): sorted as packed 8-byte elements (radix_onesweep_kernel, PackedPairs).
// 2^28 pairs: 8.53 ms at 384x22 (384x14 9.18; 384x18 without early counts
// 12.1), against 9.60 for the split pairs kernel (384x20) and 8.77 for CUB.
using OnesweepPackedPairShape = OnesweepShape<384, 22, 2, RadixMatch::AtomicOr, false, 4, false, true>;
// Packed pairs up to pairs4_mid_max: 2^20 76.9 us against 88.7 (split 384x16
// 83.6), 2^21 121.1 against 114.6.
using OnesweepPackedPairMidShape = OnesweepShape<384, 14, 2, RadixMatch::AtomicOr, false, 4, false, true>;

// 8-byte keys with 4-byte values past pairs8_large_max: wider blocks with
// early counts. check_sort sweep on an H200 (ms at 2^24 / 2^26 / 2^28):
// 512x12 1.37 / 4.99 / 19.55 against 384x12 1.41 / 5.23 / 20.80 (384x16
// early 1.39 / 5.11 / 20.07, 448x12 early 1.41 / 5.21 / 20.52, 640x8 early
// 1.43 / 5.18 / 20.31; CUB 3.6 1.43 / 5.18 / 20.21). At 2^20-2^24, and on
// keys ANDed from 4 words at 2^26, it was slower (sort_matrix_bench, bench/RESULTS.md).
using OnesweepPairs8HugeShape = OnesweepShape<512, 12, 2, RadixMatch::AtomicOr, true, 4, false, true>;

// Middle sizes: small tiles, so that every SM gets some.
template <int kKeyBytes, int kValueBytes>
struct OnesweepMediumShape {
    using type = OnesweepShape<256, 8, 4, RadixMatch::AtomicOr, true, 4>;
};

// Middle sizes up to kFusedMaxTiles tiles: one cooperative launch does the
// histogram and every pass (radix_fused_kernel), one tile per block.
template <int kKeyBytes, int kValueBytes>
struct OnesweepFusedShape {
    // 256x8 (Packed) was 3-20% faster than 256x4 from 2^16 to 2^18 keys
    // (2^18 now fits), 15% slower at 2^12.
    using type = OnesweepShape<256, 8, 1, RadixMatch::AtomicOrPacked, true, 16>;
};
constexpr int kFusedMaxTiles = 128;

// The upfront histogram kernel: kThreads x kItems keys per tile, kReplicas
// copies of each shared counter (lane % kReplicas picks one) so that lanes
// counting the same digit do not serialize on one address.
template <int kThreads_, int kItems_, int kReplicas_>
struct HistogramShape {
    static constexpr int kThreads = kThreads_;
    static constexpr int kItems = kItems_;
    static constexpr int kReplicas = kReplicas_;
};
// Two shapes, chosen by count (SortTuning::histogram_many_min). Many keys:
// 1,024 threads, 16 replicas (32 KiB for 1- and 2-byte keys, 128 KiB for
// 8-byte ones; 4-byte keys: 32 replicas, below): more warps and fewer
// shared-counter conflicts. H200, histogram alone, with the loop before
// count_digits: u32 keys 2^28 830 -> 598 us (whole sort -4.5%); u64 keys
// 2^26 with two-word AND 345 -> 289 us, uniform level, 256 distinct 269 ->
// 291 us (whole u64 sorts within 0.5%). Few keys: 256 threads, 32 KiB or less, so
// that the first pass's blocks start beside the histogram's (programmatic
// launch): the many-keys shape made whole u32 sorts of 2^19 / 2^20 keys 9%
// / 5% slower.
template <int kKeyBytes>
struct RadixHistogramShapesFor {
    using few = HistogramShape<256, 16, 8>;
    using many = HistogramShape<1024, 16, 16>;
};
// 4-byte keys: 32 replicas (128 KiB). H200, histogram of 2^28 u32 keys with
// the loop of whole tiles (count_digits): 1,024 x 16 351.9, x 32 316.6 us;
// whole sorts 4721.2 and 4711.0 us (two runs): no gain measured there, and
// where a block gets 99 KiB (sm_86, sm_89) 128 KiB does not fit, so those
// count with the few-keys shape (1,024 x 16 fit them): see docs/tuning/sort.md.
template <>
struct RadixHistogramShapesFor<4> {
    using few = HistogramShape<256, 16, 8>;
    using many = HistogramShape<1024, 16, 32>;
};
template <>
struct RadixHistogramShapesFor<8> {
    using few = HistogramShape<256, 16, 1>;
    using many = HistogramShape<1024, 16, 16>;
};

// The order check before the histogram (radix_order_kernel): threads x
// items per tile (64 bytes a thread; 16 items spilled registers on 8-byte
// keys), tiles between two exchanges of what the block found.
constexpr int kOrderCheckThreads = 256;
template <typename K>
constexpr int kOrderCheckItems = sizeof(K) >= 8 ? 8 : 16;
constexpr int kOrderCheckTilesPerRound = 4;

// Small inputs: one block of up to kBlockSortMaxThreads threads, each holding
// kBlockSortItemsPerThread keys, sorts up to their product in registers and
// shared memory (bitonic; threads = keys rounded up to a power of two / items).
// 4 items: at 2^10 keys, 256 threads (two warps per scheduler) hide the
// shuffle and compare latencies that bound 128 threads of 8 items
// (docs/tuning/sort.md: 11.8 vs 13.0 us, 2 x 512 12.1 us).
constexpr int kBlockSortMaxThreads = 1024;
constexpr int kBlockSortItemsPerThread = 4;

struct SortTuning {
    uint64_t block_sort_max;     // count <= this: one block, ...
    uint64_t block_network_max;  // ... by a bitonic network up to this count (block_sort.cu), by radix
                                 // passes past it and for bit ranges (block_radix_sort.cu)
    bool fused;                  // middle sizes in one cooperative launch
    uint64_t medium_max;         // count <= this: Onesweep with the medium tile
    // Past medium_max, count <= these: smaller tiles than the large ones
    // (OnesweepKeys4SmallShape, OnesweepKeys4MidShape for 4-byte keys without
    // values, OnesweepKeys8MidShape for 8-byte ones, OnesweepPackedPairMidShape).
    uint64_t keys4_small_max, keys4_mid_max, keys8_mid_max, pairs4_mid_max;
    // 8-byte keys with 4-byte values, count <= this: the large tile; past
    // it, OnesweepPairs8HugeShape.
    uint64_t pairs8_large_max;
    int histogram_blocks_per_sm;  // a multiprocessor at most, either histogram shape
    uint64_t histogram_many_min;  // count >= this: the many-keys histogram shape (RadixHistogramShapesFor)
    bool programmatic_launch;  // overlap the radix kernels' launches (sm_90+)
    // A pass ranks with match.any (PassPlan::skewed) when the chance that a
    // key shares its digit with the key beside it in the pass's order
    // exceeds this (neighbour_agreement, pass_ranking.h).
    double skewed_agreement;
    // count >= this: the histogram's blocks sample runs of keys for that
    // chance. Below it, where a block counts a tile or two, the sample would
    // lengthen every block; a pass is then skewed when the chance that two
    // keys share its digit exceeds skewed_agreement, or, after the first
    // pass that runs and over lower digits of few values each,
    // skewed_collisions (unsampled_pass_is_skewed).
    uint64_t ranking_sample_min;
    double skewed_collisions;
};

// Hopper (sm_90), measured on H100 (docs/tuning/sort.md).
struct SortTuningSm90 {
    static SortTuning tuning(uint32_t /*key_bytes*/, uint32_t value_bytes) {
        SortTuning tuning{};
        // H100, `check_sort paths` (docs/tuning/sort.md), us per call in a
        // batch of 100, network / radix passes / fused launch: u32 keys 4096
        // 13.5 / 14.0 / 25.5, 2048 7.0 / 11.7; u64 keys 4096 19.7 / 27.2 / 46.0;
        // pairs at 4096 u32/u32 20.9 / 16.1 / 28.9, u32/u64 22.1 / 16.3 / 30.0,
        // u64/u64 55.6 / 30.3 / 55.5; at 2048 u32/u32 10.6 / 13.1, u64/u64
        // 24.6 / 24.0. Keys sort by the network; pairs past 2048 by radix.
        tuning.block_sort_max = 4096;
        tuning.block_network_max = value_bytes == 0 ? 4096 : 2048;
        tuning.fused = true;
        tuning.medium_max = uint64_t(1) << 19;  // the large tile was 3-6% faster at 2^20 and 2^21
        tuning.keys4_small_max = uint64_t(1) << 20;
        tuning.keys4_mid_max = uint64_t(1) << 23;
        tuning.keys8_mid_max = uint64_t(1) << 22;
        tuning.pairs4_mid_max = uint64_t(1) << 20;
        // H200, sort_matrix_bench before/after (us), u64 keys with u32
        // values, 384x12 / 512x12: 2^28 uniform 21998 / 19968, Zipf 22125 /
        // 21002; 2^26 uniform 5462 / 5097 but AND of 4 words 5134 / 5259;
        // 2^20 uniform 164 / 174. So the wider tile from past 2^26 only.
        tuning.pairs8_large_max = uint64_t(1) << 26;
        tuning.histogram_blocks_per_sm = 4;
        // H200, whole u32 sorts, few / many shapes (us; `check_sort
        // histogram`): 2^20 77.9 / 82.0, 2^21 97.0 / 93.2, 2^22 140.8 / 136.4.
        tuning.histogram_many_min = uint64_t(1) << 21;
        tuning.programmatic_launch = true;  // sm_90 code and later: its kernels wait (code_arch.h)
        // match.any against AtomicOr by what a warp of the pass holds.
        // H100, 2^26, us, match.any / AtomicOr on every pass: u32 keys
        // uniform 4462 / 1440 (the chance 0.004), AND of 2 words 3692 / 1629
        // (0.023), AND of 4 1758 / 1966 (0.37); keys in input order, AtomicOr
        // up to 0.21 at least: 16 distinct u8 keys 568 / 293 (0.0625), the
        // high byte of f16 keys uniform in [0, 1) 883 / 618 (0.083), and of
        // bf16 normal keys (0.21; H200, 2^28, thresholds 0.1 / 0.25) 2505 /
        // 2427. A later pass of 16 distinct keys holds one digit a warp
        // (0.59 sampled), where match.any wins: H100, 2^28, u32 keys 5078 ->
        // 4076 with the first pass by AtomicOr and the others by match.any
        // (bench/RESULTS.md, run 110).
        tuning.skewed_agreement = 1.0 / 4;
        // Sorts of 2^19-2^20 keys were 2-6% slower sampled (bench/RESULTS.md,
        // runs 110, 112-115). Below 2^21, a later pass over lower digits of
        // few values takes the threshold of the rule before the sample
        // (`ce5cbc4`, 4-byte keys): 16 distinct keys (0.063) by match.any.
        tuning.ranking_sample_min = uint64_t(1) << 21;
        tuning.skewed_collisions = 1.0 / 25;
        return tuning;
    }
};

// Ampere and anything before Hopper that runs the sm_80 code: not measured;
// the Hopper thresholds, without programmatic dependent launch (sm_90+).
struct SortTuningSm80 {
    static SortTuning tuning(uint32_t key_bytes, uint32_t value_bytes) {
        SortTuning tuning = SortTuningSm90::tuning(key_bytes, value_bytes);
        tuning.programmatic_launch = false;
        return tuning;
    }
};

// Newer than Hopper: Hopper's until measured.
using SortTuningNewer = SortTuningSm90;

// The sort's run-time tuning for the device code's architecture
// (code_arch.h). The compile-time tile shapes above are shared by every
// architecture (one kernel per shape, key and value width).
inline SortTuning sort_tuning(int code_arch, uint32_t key_bytes, uint32_t value_bytes) {
    return with_arch_tuning<SortTuningSm80, SortTuningSm90, SortTuningNewer>(
        code_arch, [&](auto arch) { return decltype(arch)::tuning(key_bytes, value_bytes); });
}

template <typename Shape>
struct ShapeTag {
    using type = Shape;
};

// The radix path's size ladder: the fused launch, the medium tile, then per
// key and value width the tiles measured best for each range. Calls
// fused(ShapeTag<Shape>) (false: it did not run, go on) or
// onesweep(ShapeTag<Shape>, std::bool_constant<kPacked>).
// packed: the pairs may travel packed (packs_pairs: 4-byte keys with 4-byte
// values placed alike, or an argsort's 8-byte indices below 2^32 keys);
// whole_key: not a bit-range sort.
template <typename K, int kValueBytes, typename Fused, typename Onesweep>
void radix_size_ladder(const SortTuning &tuning, uint64_t count, bool packed, bool whole_key, Fused &&fused,
                       Onesweep &&onesweep) {
    using FusedShape = typename OnesweepFusedShape<sizeof(K), kValueBytes>::type;
    if (!whole_key) {  // a bit range: the masked fused launch, else the masked large tile
        using Large = typename OnesweepLargeShape<sizeof(K), kValueBytes>::type;
        if (tuning.fused && count <= uint64_t(kFusedMaxTiles) * FusedShape::kTile &&
            fused(ShapeTag<MaskedDigitsShape<FusedShape>>{}))
            return;
        onesweep(ShapeTag<MaskedDigitsShape<Large>>{}, std::false_type{});
        return;
    }
    if (tuning.fused && count <= uint64_t(kFusedMaxTiles) * FusedShape::kTile && fused(ShapeTag<FusedShape>{}))
        return;
    if (count <= tuning.medium_max)
        onesweep(ShapeTag<typename OnesweepMediumShape<sizeof(K), kValueBytes>::type>{}, std::false_type{});
    else if constexpr (sizeof(K) <= 4 && kValueBytes == 0) {  // 1- and 2-byte keys too
        if (count <= tuning.keys4_small_max)
            onesweep(ShapeTag<OnesweepKeys4SmallShape>{}, std::false_type{});
        else if (count <= tuning.keys4_mid_max)
            onesweep(ShapeTag<OnesweepKeys4MidShape>{}, std::false_type{});
        else
            onesweep(ShapeTag<typename OnesweepLargeShape<4, 0>::type>{}, std::false_type{});
    } else if constexpr (sizeof(K) == 8 && kValueBytes == 0) {
        if (count <= tuning.keys8_mid_max)
            onesweep(ShapeTag<OnesweepKeys8MidShape>{}, std::false_type{});
        else
            onesweep(ShapeTag<typename OnesweepLargeShape<8, 0>::type>{}, std::false_type{});
    } else if constexpr (sizeof(K) == 4 && (kValueBytes == 4 || kValueBytes == 8)) {
        if (packed && count <= tuning.pairs4_mid_max)
            onesweep(ShapeTag<OnesweepPackedPairMidShape>{}, std::true_type{});
        else if (packed)
            onesweep(ShapeTag<OnesweepPackedPairShape>{}, std::true_type{});
        else
            onesweep(ShapeTag<typename OnesweepLargeShape<4, kValueBytes>::type>{}, std::false_type{});
    } else if constexpr (sizeof(K) == 8 && kValueBytes == 4) {
        if (count <= tuning.pairs8_large_max)
            onesweep(ShapeTag<typename OnesweepLargeShape<8, 4>::type>{}, std::false_type{});
        else
            onesweep(ShapeTag<OnesweepPairs8HugeShape>{}, std::false_type{});
    } else
        onesweep(ShapeTag<typename OnesweepLargeShape<sizeof(K), kValueBytes>::type>{}, std::false_type{});
}

}  // namespace gpuprim::cuda
