// SPDX-License-Identifier: Apache-2.0
// The Onesweep radix sort's pass plan and the small device helpers its
// kernels share: digits, look-back codes, warp slots (see radix_sort.cuh).
#pragma once

#include "core/key_transform.h"
#include "core/portable.h"
#include "cuda/block/block_radix_rank.cuh"
#include "cuda/util/counters.h"

#include <cstdint>
#include <type_traits>

namespace gpuprim::cuda {
namespace radix_detail {

constexpr int kDigitBits = kRadixRankDigitBits;
constexpr int kDigits = kRadixRankDigits;
constexpr int kMaxPasses = 64 / kDigitBits;
// Pass slots of a key width: one per digit, at least two, so that an in-place
// sort can always run an even number of passes (a 1-byte key's second pass
// has an empty window: a stable copy, run only when the plan needs it).
template <typename K>
constexpr int kPasses = int(sizeof(K)) * 8 / kDigitBits < 2 ? 2 : int(sizeof(K)) * 8 / kDigitBits;
static_assert(kPasses<uint8_t> % 2 == 0 && kPasses<uint16_t> % 2 == 0 && kPasses<uint32_t> % 2 == 0 &&
                  kPasses<uint64_t> % 2 == 0,
              "the plan assumes an even number of passes");

// The digit windows of every pass slot for a bit range (core/key_transform.h).
struct PassWindows {
    DigitWindow pass[kMaxPasses];
};
inline PassWindows pass_windows(uint32_t begin_bit, uint32_t end_bit) {
    PassWindows windows{};
    for (int p = 0; p < kMaxPasses; ++p) windows.pass[p] = digit_window(begin_bit, end_bit, p, kDigitBits);
    return windows;
}

// Look-back portions: counts in a look-back word must fit 30 bits. (At 2^28
// the benchmark's 2^28 keys took two launches per pass, the second with one
// real tile and ~39,000 padding tiles.)
constexpr uint64_t kMaxPortionKeys = (uint64_t(1) << 30) - 1;
constexpr uint32_t kLookbackValueMask = (1u << 30) - 1;

// env.zeroed_counters words used (each kernel leaves its words zero); owned
// in cuda/util/counters.h.
constexpr int kTileTicketWord = SortCounterWords::kTileTicket;
constexpr int kHistogramTicketWord = SortCounterWords::kHistogramTicket;
constexpr int kHistogramZeroedWord = SortCounterWords::kHistogramZeroed;
constexpr int kHistogramDoneWord = SortCounterWords::kHistogramDone;
constexpr int kFusedFlagWord = SortCounterWords::kFusedFlag;
constexpr int kOrderBrokenWord = SortCounterWords::kOrderBroken;
constexpr int kSampledKeysWord = SortCounterWords::kSampledKeys;
constexpr int kSampledNeighboursWord = SortCounterWords::kSampledNeighbours;  // + pass slot
constexpr int kSampledAgreementsWord = SortCounterWords::kSampledAgreements;  // + pass slot

// A tile of a segmented sort: its first key's index in the buffers, its key
// count (1 to the tile size), its segment, and whether it is the segment's
// first tile.
struct SegmentTile {
    uint64_t begin;
    uint32_t keys;
    uint32_t segment;
    uint32_t first;
    uint32_t unused;
};

enum BufferId : uint8_t { kInputBuffer = 0, kOutputBuffer = 1, kTempBuffer = 2 };

struct PassPlan {
    uint32_t active;        // 0: skipped
    uint32_t launch_index;  // executed passes before this one
    uint8_t key_source, key_destination, value_source, value_destination;
    // Between the first and the last executed pass the buffers hold radix
    // keys: the first transforms on load, the last transforms back on store.
    uint8_t transform_in, transform_out;
    // The pass's digits repeat a lot: peers found by match.any (BlockRadixRank).
    uint8_t skewed;
};
// An input the order check (radix_order_kernel) found already in order: no
// pass runs.
enum InputOrder : uint32_t {
    kUnordered = 0,
    kAlreadySorted = 1,  // out of place, the order check copied it
    kReversed = 2,       // strictly against the order: out of place, the order
                         // check wrote it mirrored; in place, pass 0 reverses it
};
// 16-byte aligned: the segmented sort stores 8-byte fields right after it.
struct alignas(16) RadixPlan {
    PassPlan pass[kMaxPasses];
    uint32_t input_order;  // InputOrder
};

// Chooses the passes to execute and their buffers. digit_varies[p]: pass p's
// digit is not the same for every key.
GPUPRIM_HD void make_radix_plan(int passes, const bool *digit_varies, bool keys_in_place,
                                bool has_values, bool values_in_place, RadixPlan &plan) {
    bool execute[kMaxPasses];
    int executed = 0;
    for (int p = 0; p < passes; ++p) {
        execute[p] = digit_varies[p];
        executed += execute[p];
    }
    // Out of place, the output must be written at least once; in place, the
    // data must come back to the buffer it started in.
    const bool need_one = !keys_in_place || (has_values && !values_in_place);
    const bool need_even = keys_in_place || (has_values && values_in_place);
    for (int p = 0; p < passes; ++p) {
        const bool want_more = (need_one && executed == 0) || (need_even && executed % 2 == 1);
        if (want_more && !execute[p]) {
            execute[p] = true;
            ++executed;
        }
    }
    uint8_t key_current = kInputBuffer, value_current = kInputBuffer;
    int index = 0;
    for (int p = 0; p < kMaxPasses; ++p) {
        PassPlan pass{0, 0, 0, 0, 0, 0, 0, 0, 0};
        if (p < passes && execute[p]) {
            const bool last_is_even = (executed - 1 - index) % 2 == 0;
            const uint8_t key_destination = keys_in_place
                                                ? (index % 2 == 0 ? kTempBuffer : kOutputBuffer)
                                                : (last_is_even ? kOutputBuffer : kTempBuffer);
            const uint8_t value_destination = values_in_place
                                                  ? (index % 2 == 0 ? kTempBuffer : kOutputBuffer)
                                                  : (last_is_even ? kOutputBuffer : kTempBuffer);
            pass.active = 1;
            pass.launch_index = uint32_t(index);
            pass.key_source = key_current;
            pass.key_destination = key_destination;
            pass.value_source = value_current;
            pass.value_destination = value_destination;
            pass.transform_in = index == 0;
            pass.transform_out = index == executed - 1;
            key_current = key_destination;
            value_current = value_destination;
            ++index;
        }
        plan.pass[p] = pass;
    }
    plan.input_order = kUnordered;
}

// Status codes of look-back words in launch number `launch` of a call; the
// "empty" code of a launch is the "inclusive" code of the one before.
struct LookbackCodes {
    uint32_t aggregate, inclusive;
};
GPUPRIM_HD LookbackCodes lookback_codes(uint32_t launch) {
    const uint32_t empty = (2 * (launch % 3)) % 3;
    return {(empty + 1) % 3, (empty + 2) % 3};
}

template <int kValueBytes>
using RadixValue = typename UnsignedBits<kValueBytes == 0 ? 4 : kValueBytes>::type;

// A warp's slots of a tile: slot i is tile position warp_first + 32 * i (so
// each slot's reads are coalesced); positions past the tile's end (unless
// full) read as zero. tile may point to global or shared memory.
template <int kItems, typename T>
__device__ __forceinline__ void read_warp_slots(T (&items)[kItems], const T *tile, uint32_t warp_first,
                                                bool full, uint32_t tile_keys) {
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
        const uint32_t position = warp_first + i * 32;
        items[i] = (full || position < tile_keys) ? tile[position] : T(0);
    }
}

// The digit of a radix key in a pass's window: its bits [shift, shift +
// width), any shift (bit ranges need not start on a byte).
template <typename K>
__device__ __forceinline__ uint32_t digit_of(K radix_key, DigitWindow window) {
    if constexpr (sizeof(K) == 8) return uint32_t(uint64_t(radix_key) >> window.shift) & window.mask;
    else return (uint32_t(radix_key) >> window.shift) & window.mask;
}

// The same for a whole-key sort, whose windows are whole bytes (shift a
// multiple of 8; an empty window reads a byte past a 1-byte key, always 0):
// one byte permute (PRMT) instead of a shift and a mask. Digits are extracted
// three times per key; the masked form cost 5% at 2^28 u32 keys.
template <typename K>
__device__ __forceinline__ uint32_t digit_of_byte(K radix_key, DigitWindow window) {
    static_assert(kDigitBits == 8, "byte digits");
    uint32_t word = uint32_t(radix_key);
    if constexpr (sizeof(K) == 8) {
        if (window.shift >= 32) word = uint32_t(uint64_t(radix_key) >> 32);
    }
    return __byte_perm(word, 0u, 0x4440u | ((window.shift >> 3) & 3u));
}

// The pass kernels' digit: masked (Shape::kMaskedDigits, bit-range sorts) or by bytes.
template <bool kMasked, typename K>
__device__ __forceinline__ uint32_t pass_digit(K radix_key, DigitWindow window) {
    if constexpr (kMasked) return digit_of(radix_key, window);
    else return digit_of_byte(radix_key, window);
}

// Exclusive scan of one 64-bit value per thread over threads 0..255; every
// thread of the block must call it. totals: 8 words of shared memory.
__device__ __forceinline__ uint64_t digit_exclusive_scan64(uint64_t value, uint64_t *totals) {
    const uint32_t lane = radix_lane_id();
    const uint32_t warp = threadIdx.x / 32;
    uint64_t inclusive = value;
#pragma unroll
    for (int offset = 1; offset < 32; offset <<= 1) {
        const uint64_t other = __shfl_up_sync(kFullWarpMask, inclusive, offset);
        if (lane >= uint32_t(offset)) inclusive += other;
    }
    if (threadIdx.x < kDigits && lane == 31) totals[warp] = inclusive;
    __syncthreads();
    uint64_t exclusive = inclusive - value;
    for (uint32_t w = 0; w < warp && w < kDigits / 32; ++w) exclusive += totals[w];
    __syncthreads();
    return exclusive;
}

}  // namespace radix_detail
}  // namespace gpuprim::cuda
