// SPDX-License-Identifier: Apache-2.0
// The upfront histogram kernel of the Onesweep radix sort (radix_sort.cuh).
#pragma once

#include "core/key_transform.h"
#include "cuda/sort/pass_ranking.h"
#include "cuda/sort/radix_plan.cuh"
#include "cuda/util/ptx.cuh"

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace gpuprim::cuda {
namespace radix_detail {
// ---------------------------------------------------------------------------
// Upfront histogram of every pass.

struct HistogramArgs {
    const void *keys;
    uint64_t count;
    KeyKind kind;
    bool descending;
    bool keys_in_place, has_values, values_in_place;
    uint64_t *digit_counts;   // passes * 256, accumulated here
    uint64_t *digit_offsets;  // passes * 256, exclusive scans out
    RadixPlan *plan;
    uint32_t *lookback;       // cleared here
    uint64_t lookback_words;  // multiple of 4, 16-byte aligned
    uint32_t *counters;       // env.zeroed_counters
    PassWindows windows;      // each pass's digit; empty windows are not counted
    // A pass is ranked as skewed (PassPlan::skewed) when the chance that a
    // key shares its digit with the key beside it in the pass's order
    // (neighbour_agreement) exceeds this many 2^-30ths.
    uint32_t skewed_agreement;
    // Whether the blocks sample (SortTuning::ranking_sample_min); unsampled,
    // a later pass over lower digits of few values is skewed when its
    // collision chance exceeds skewed_collisions (unsampled_pass_is_skewed).
    bool sample;
    uint32_t skewed_collisions;
};

// Thread 0 of the last block: the plan (which passes run, which are ranked
// as skewed, or an input already in order), and the other counter words
// reset for the next call.
template <typename K>
__device__ __forceinline__ void write_plan(const HistogramArgs &args, bool in_order, const bool *digit_constant,
                                           const bool *skewed) {
    constexpr int kPassCount = kPasses<K>;
    bool varies[kMaxPasses];
    for (int p = 0; p < kPassCount; ++p) varies[p] = !digit_constant[p];
    RadixPlan plan;
    make_radix_plan(kPassCount, varies, args.keys_in_place, args.has_values, args.values_in_place, plan);
    for (int p = 0; p < kPassCount; ++p) plan.pass[p].skewed = skewed[p];
    if (in_order) {
        const uint32_t broken = args.counters[kOrderBrokenWord];
        plan.input_order = (broken & 1) == 0 ? kAlreadySorted : kReversed;
        for (int p = 0; p < kPassCount; ++p) plan.pass[p].active = 0;
    }
    *args.plan = plan;
    args.counters[kOrderBrokenWord] = 0;
    args.counters[kSampledKeysWord] = 0;
    args.counters[kHistogramTicketWord] = 0;
    args.counters[kHistogramZeroedWord] = 0;
    args.counters[kHistogramDoneWord] = 0;
}

// Runs of 32 consecutive keys a block samples for each pass, spread over
// its first tile: one run a warp, so that the sample costs a block one load
// and one match.any a warp (8 runs a warp cost u64 sorts of 2^20 keys 12-13 us,
// bench/RESULTS.md runs 108-109). tools/radix_warp_digits.py prints what 132
// blocks count on each of the benchmark's distributions.
constexpr int kSampleRuns = 2;

// One warp: for each key of the run at run_start, whether an earlier key of
// the run has the same lower digits (those of the passes before `pass`),
// and whether the last such key has the same digit of this pass too; added
// to the counter words the last block reads (neighbour_agreement). Fixed
// keys, counted in a fixed order: the same plan every run.
template <typename K>
__device__ __forceinline__ void sample_neighbours(const HistogramArgs &args, uint64_t run_start, int pass) {
    using Word = std::conditional_t<sizeof(K) == 8, unsigned long long, unsigned>;
    constexpr uint32_t kWordBits = 8 * sizeof(Word);
    const DigitWindow window = args.windows.pass[pass];
    if (window.mask == 0) return;  // a constant digit: the pass never runs
    // The sorted bits below this pass's digit. Lanes past the keys take all
    // ones, which no key's lower bits are (they never reach this digit).
    const uint32_t low_bit = args.windows.pass[0].shift;
    const Word lower_mask = (window.shift >= kWordBits ? ~Word(0) : (Word(1) << window.shift) - 1) &
                            ~((Word(1) << low_bit) - 1);
    const uint32_t lane = threadIdx.x % 32;
    const uint64_t index = run_start + lane;
    const bool valid = index < args.count;
    const K radix_key = radix_key_map<K>(args.kind, args.descending)(
        valid ? static_cast<const K *>(args.keys)[index] : K(0));
    const Word lower = valid ? Word(radix_key) & lower_mask : ~Word(0);
    const uint32_t digit = digit_of(radix_key, window);
    const uint32_t earlier_peers = __match_any_sync(0xffffffffu, lower) & ((1u << lane) - 1);
    const int neighbour = earlier_peers != 0 ? 31 - __clz(earlier_peers) : int(lane);
    const uint32_t neighbour_digit = __shfl_sync(0xffffffffu, digit, neighbour);
    const bool has_neighbour = valid && earlier_peers != 0;
    const uint32_t sampled = __popc(__ballot_sync(0xffffffffu, valid));
    const uint32_t neighbours = __popc(__ballot_sync(0xffffffffu, has_neighbour));
    const uint32_t agreements = __popc(__ballot_sync(0xffffffffu, has_neighbour && neighbour_digit == digit));
    if (lane == 0 && sampled != 0) {
        if (pass == 0) atomicAdd(&args.counters[kSampledKeysWord], sampled);
        if (neighbours != 0) atomicAdd(&args.counters[kSampledNeighboursWord + pass], neighbours);
        if (agreements != 0) atomicAdd(&args.counters[kSampledAgreementsWord + pass], agreements);
    }
}

// A block's sample: warp w takes pass w % passes on run w / passes of its
// first tile, up to kSampleRuns runs (fewer where the block has fewer warps
// than that many runs of every pass; every pass gets at least one).
template <typename K, typename Shape>
__device__ __forceinline__ void sample_block(const HistogramArgs &args) {
    constexpr int kPassCount = kPasses<K>;
    constexpr int kWarps = Shape::kThreads / 32;
    static_assert(kWarps >= kPassCount, "a warp per pass at least");
    constexpr int kRuns = kWarps / kPassCount < kSampleRuns ? kWarps / kPassCount : kSampleRuns;
    constexpr uint64_t kTile = uint64_t(Shape::kThreads) * Shape::kItems;
    const int warp = int(threadIdx.x / 32);
    const int run = warp / kPassCount;
    if (run < kRuns)
        sample_neighbours<K>(args, uint64_t(blockIdx.x) * kTile + uint64_t(run) * (kTile / kRuns), warp % kPassCount);
}

// The counters' shared memory: kReplicas copies of every pass's digits.
template <typename K, typename Shape>
constexpr size_t radix_histogram_shared_bytes = sizeof(uint32_t) * kPasses<K> * kDigits * Shape::kReplicas;

// Adds the digits of the keys [0, n) that this block's tiles hold to its
// shared counters (kReplicas copies; lane % kReplicas picks one). Each key
// is mapped by RadixKeyMap (no branch on the kind) and, in a whole-key sort
// (kMaskedDigits false), its digits are its bytes at fixed shifts; a
// bit-range sort reads each pass's window and skips empty ones. Whole tiles
// load without bounds checks, as vectors where aligned. H200, 2^28 u32
// keys, 1,024 x 16 x 16 (tools/kernel_check/histogram_loops.cu): 560 us
// with run-time windows, kind and checks per key; 314 us so, 304 with
// vectors (a loop that only reads the keys: 243; f32 normal keys 618 ->
// 306).
template <typename K, typename Shape, bool kMaskedDigits>
__device__ __forceinline__ void count_digits(const HistogramArgs &args, uint64_t n, uint32_t *histogram) {
    constexpr int kThreads = Shape::kThreads;
    constexpr int kItems = Shape::kItems;
    constexpr int kReplicas = Shape::kReplicas;
    constexpr uint64_t kTile = uint64_t(kThreads) * kItems;
    // A whole-key sort's passes read the key's bytes; a 1-byte key's second
    // pass has an empty window (a constant digit, not counted).
    constexpr int kCounted = kMaskedDigits ? kPasses<K> : int(sizeof(K));
    const K *keys = static_cast<const K *>(args.keys);
    const RadixKeyMap<K> map = radix_key_map<K>(args.kind, args.descending);
    const uint32_t replica = threadIdx.x % kReplicas;
    auto count_key = [&](K key) {
        const K radix_key = map(key);
#pragma unroll
        for (int p = 0; p < kCounted; ++p) {
            uint32_t digit;
            if constexpr (kMaskedDigits) {
                if (args.windows.pass[p].mask == 0) continue;
                digit = digit_of(radix_key, args.windows.pass[p]);
            } else {
                digit = uint32_t(radix_key >> (p * kDigitBits)) & (kDigits - 1);
            }
            atomicAdd(&histogram[(p * kDigits + digit) * kReplicas + replica], 1u);
        }
    };
    const uint64_t whole_tiles_end = n / kTile * kTile;
    uint64_t base = uint64_t(blockIdx.x) * kTile;
    // Whole tiles as 16-byte vectors where the keys start 16-byte aligned
    // (a tile is a multiple of 16 bytes): which keys a thread counts does
    // not matter to the counts.
    constexpr int kPerVector = 16 / int(sizeof(K));
    static_assert(kItems % kPerVector == 0, "whole vectors a thread");
    if (reinterpret_cast<uintptr_t>(keys) % 16 == 0) {
        for (; base < whole_tiles_end; base += uint64_t(gridDim.x) * kTile) {
            const uint4 *vectors = reinterpret_cast<const uint4 *>(keys + base);
            uint4 vector[kItems / kPerVector];
#pragma unroll
            for (int i = 0; i < kItems / kPerVector; ++i) vector[i] = vectors[i * kThreads + threadIdx.x];
#pragma unroll
            for (int i = 0; i < kItems / kPerVector; ++i) {
                K key[kPerVector];
                memcpy(key, &vector[i], sizeof(key));
#pragma unroll
                for (int j = 0; j < kPerVector; ++j) count_key(key[j]);
            }
        }
    }
    for (; base < whole_tiles_end; base += uint64_t(gridDim.x) * kTile) {
        K key[kItems];
#pragma unroll
        for (int i = 0; i < kItems; ++i) key[i] = keys[base + uint64_t(i) * kThreads + threadIdx.x];
#pragma unroll
        for (int i = 0; i < kItems; ++i) count_key(key[i]);
    }
    if (base < n) {  // the last, partial tile (one block has it)
        for (int i = 0; i < kItems; ++i) {
            const uint64_t index = base + uint64_t(i) * kThreads + threadIdx.x;
            if (index < n) count_key(keys[index]);
        }
    }
}

// Runs after radix_order_kernel (waits for it when launched as its
// programmatic dependent): an input it found in order is not counted, and the
// plan runs no pass. kMaskedDigits: the pass kernels' (a bit-range sort).
template <typename K, typename Shape, bool kMaskedDigits>
__global__ void __launch_bounds__(Shape::kThreads) radix_histogram_kernel(const HistogramArgs args) {
    constexpr int kThreads = Shape::kThreads;
    constexpr int kReplicas = Shape::kReplicas;
    constexpr int kPassCount = kPasses<K>;
    constexpr int kCounters = kPassCount * kDigits;
    static_assert(kThreads >= kDigits, "one thread per digit in the final scan");

    // kCounters x kReplicas words (radix_histogram_shared_bytes).
    extern __shared__ uint4 dynamic_shared[];
    uint32_t *const histogram = reinterpret_cast<uint32_t *>(dynamic_shared);
    __shared__ uint64_t scan_totals[kDigits / 32];
    __shared__ uint32_t ticket;
    __shared__ bool last_block;
    __shared__ bool digit_constant[kPassCount];
    __shared__ uint32_t collisions[kPassCount];   // 2^-30ths, see HistogramArgs
    __shared__ uint32_t digits_seen[kPassCount];  // digits of nonzero count
    __shared__ uint32_t sampled_keys, sampled_neighbours[kPassCount], sampled_agreements[kPassCount];
    __shared__ bool skewed[kPassCount];

    // Before waiting for the order check: the sample reads the input only,
    // and overlaps that kernel's last blocks (after the wait, sorts of 2^22
    // keys took 2-4% longer, inputs in order too: bench/RESULTS.md, run 114).
    if (args.sample) sample_block<K, Shape>(args);
    wait_for_previous_grid();  // the order check
    allow_next_grid();
    // Both bits set: neither sorted nor reversed (every block sees the final word).
    const bool in_order = load_relaxed(&args.counters[kOrderBrokenWord]) != 3;
    for (int i = threadIdx.x; i < kCounters * kReplicas; i += kThreads) histogram[i] = 0;
    if (threadIdx.x < kPassCount) {
        digit_constant[threadIdx.x] = false;
        collisions[threadIdx.x] = 0;
        digits_seen[threadIdx.x] = 0;
    }
    if (threadIdx.x == 0) ticket = atomicAdd(&args.counters[kHistogramTicketWord], 1u);
    __syncthreads();

    // The first block to run clears the global counters; the others add to
    // them only once it says so (it is running, so they cannot wait forever).
    if (ticket == 0) {
        for (int i = threadIdx.x; i < kCounters; i += kThreads) args.digit_counts[i] = 0;
        __threadfence();
        __syncthreads();
        if (threadIdx.x == 0) atomicExch(&args.counters[kHistogramZeroedWord], 1u);
    }

    if (!in_order) {
        uint4 *words = reinterpret_cast<uint4 *>(args.lookback);
        const uint64_t vectors = args.lookback_words / 4;
        for (uint64_t i = uint64_t(blockIdx.x) * kThreads + threadIdx.x; i < vectors;
             i += uint64_t(gridDim.x) * kThreads)
            words[i] = make_uint4(0, 0, 0, 0);
    }

    const uint64_t n = in_order ? 0 : args.count;  // in order: nothing to count
    count_digits<K, Shape, kMaskedDigits>(args, n, histogram);
    __syncthreads();

    if (threadIdx.x == 0) {
        while (load_relaxed(&args.counters[kHistogramZeroedWord]) == 0) {
        }
        __threadfence();
    }
    __syncthreads();
    for (int i = threadIdx.x; i < kCounters; i += kThreads) {
        // Each lane starts at another replica: a warp's reads spread over banks.
        uint32_t sum = 0;
#pragma unroll
        for (int r = 0; r < kReplicas; ++r) sum += histogram[i * kReplicas + (r + i) % kReplicas];
        if (sum) atomicAdd(reinterpret_cast<unsigned long long *>(&args.digit_counts[i]),
                           static_cast<unsigned long long>(sum));
    }
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0)
        last_block = atomicAdd(&args.counters[kHistogramDoneWord], 1u) == gridDim.x - 1;
    __syncthreads();
    if (!last_block) return;

    // Last block: every other block's counts are in. Scan, plan, reset the
    // counter words for the next call.
    __threadfence();
    // Threads [0, kPassCount]: the sampled counts, read while the scans
    // run (into shared memory: registers live across the scans would count
    // against every block), used once the collision chances are in.
    if (threadIdx.x < kPassCount) {
        sampled_neighbours[threadIdx.x] = __ldcg(&args.counters[kSampledNeighboursWord + threadIdx.x]);
        sampled_agreements[threadIdx.x] = __ldcg(&args.counters[kSampledAgreementsWord + threadIdx.x]);
    } else if (threadIdx.x == kPassCount) {
        sampled_keys = __ldcg(&args.counters[kSampledKeysWord]);
    }
    for (int p = 0; p < kPassCount; ++p) {
        uint64_t count = 0;
        // An empty window's digit is 0 for every key.
        if (threadIdx.x < kDigits)
            count = args.windows.pass[p].mask != 0 ? __ldcg(&args.digit_counts[p * kDigits + threadIdx.x])
                                                   : (threadIdx.x == 0 ? n : 0);
        const uint64_t exclusive = digit_exclusive_scan64(count, scan_totals);
        if (threadIdx.x < kDigits && !in_order) {
            args.digit_offsets[p * kDigits + threadIdx.x] = exclusive;
            if (count == n) digit_constant[p] = true;
            // (count / n)^2 in 2^-30ths (integers: the same choice every run),
            // summed by warps (the squares of shares summing to 2^15 sum to
            // at most 2^30), then one shared atomic a warp.
            const uint32_t share = uint32_t(count * 32768 / n);
            uint32_t squares = share * share;
#pragma unroll
            for (int offset = 16; offset > 0; offset /= 2) squares += __shfl_xor_sync(0xffffffffu, squares, offset);
            if (threadIdx.x % 32 == 0 && squares != 0) atomicAdd(&collisions[p], squares);
            if (count != 0) atomicAdd(&digits_seen[p], 1u);
        }
    }
    __syncthreads();
    // Decided per pass here, not in write_plan: its one thread holds the
    // whole plan in registers, which count against every block.
    if (threadIdx.x < kPassCount) {
        const int pass = int(threadIdx.x);
        bool first_pass = true;  // no pass before it runs
        for (int p = 0; p < pass; ++p) first_pass = first_pass && digit_constant[p];
        // Bit p: pass p saw more than kFewLowerDigits digits. (A mask over
        // every pass, not a loop up to this one: that loop took the u32 keys'
        // few-keys histogram from 32 to 40 registers.)
        uint32_t passes_of_many = 0;
#pragma unroll
        for (int p = 0; p < kPassCount; ++p) passes_of_many |= uint32_t(digits_seen[p] > kFewLowerDigits) << p;
        const bool few_lower_digits = (passes_of_many & ((1u << pass) - 1)) == 0;
        skewed[pass] = args.sample ? pass_is_skewed(sampled_keys, sampled_neighbours[pass], sampled_agreements[pass],
                                                    collisions[pass], args.skewed_agreement)
                                   : unsampled_pass_is_skewed(first_pass, few_lower_digits, collisions[pass],
                                                              args.skewed_agreement, args.skewed_collisions);
        args.counters[kSampledNeighboursWord + threadIdx.x] = 0;
        args.counters[kSampledAgreementsWord + threadIdx.x] = 0;
    }
    __syncthreads();
    if (threadIdx.x == 0) write_plan<K>(args, in_order, digit_constant, skewed);
}

}  // namespace radix_detail
}  // namespace gpuprim::cuda
