// SPDX-License-Identifier: Apache-2.0
// Top-k of segments past a block's shared memory but short enough for one
// block to read a few times (BlockSelectPolicy::kMaxLength <
// length <= BlockStreamSelectPolicy::kMaxLength): one block a segment, one
// launch, no workspace. The grid select (radix_select.cuh) spends three
// launches and their chains of block barriers and tickets on such a segment
// (a 2^14-key flat call: 39 us against CUB 3.6's 30); one block reads a
// 2^16-key f32 segment (256 KB) twice in about 20 us, its next loads in
// flight while it counts.
//
// The select runs over (select key, position) pairs, digit by digit as in
// radix_select.cuh (SelectDigits: 11-bit digits of the key from the top,
// then of the position), so the pair is unique and the k smallest pairs
// are exactly a stable sort's first k. For a segment, the block
// 1. counts the digit of the keys matching the prefix chosen so far, over
//    the input (count_input), and extends the prefix by the bin that holds
//    the wanted rank (choose_bin), until the keys at or below the prefix
//    fit the candidate memory, or the bin holds exactly the keys still
//    wanted: for f32 logits one round;
// 2. reads the input once more (gather_input): the keys at or below the
//    prefix become candidates in shared memory (when the bin holds exactly
//    the ones wanted, they are the chosen);
// 3. else runs the remaining digits over the candidates in shared memory
//    (finish_candidates), then takes those at or below the final prefix;
// 4. sorts the chosen pairs in registers (block/block_bitonic_sort.cuh)
//    and writes them out.
#pragma once

#include "cuda/block/block_bitonic_sort.cuh"
#include "cuda/topk/radix_select.cuh"
#include "cuda/topk/select_common.cuh"
#include "cuda/topk/topk_policy.cuh"

namespace gpuprim::cuda::selection {

using StreamPolicy = BlockStreamSelectPolicy;

// Candidate pairs the shared memory holds: kCandidateBytes of 4- or 8-byte
// keys and 4-byte positions (a multiple of 4, so that the positions after
// the keys stay 16-byte aligned).
template <typename R>
__host__ __device__ constexpr uint32_t stream_candidate_slots() {
    return uint32_t(StreamPolicy::kCandidateBytes / int(sizeof(R) + sizeof(uint32_t))) & ~3u;
}

// Items a thread holds in the sort of `wanted` chosen pairs: the network is
// kThreads times that, at least `wanted`.
__host__ __device__ constexpr int stream_sort_items(uint32_t wanted) {
    int items = 2;
    while (uint32_t(StreamPolicy::kThreads) * uint32_t(items) < wanted) items *= 2;
    return items;
}
static_assert(stream_sort_items(StreamPolicy::kMaxWanted) <= 8, "sort_and_write's instances");

// Shared memory of the select: the bins, the candidates, then `slots`
// chosen pairs; the sort's two buffers reuse it from the start.
__host__ __device__ constexpr size_t stream_bins_bytes() {
    return size_t(RadixSelectPolicy::kBins) * StreamPolicy::kReplicas * sizeof(uint32_t);
}
template <typename R>
__host__ __device__ constexpr size_t stream_chosen_offset() {
    return stream_bins_bytes() + size_t(stream_candidate_slots<R>()) * (sizeof(R) + sizeof(uint32_t));
}
template <typename R>
__host__ __device__ constexpr size_t stream_chosen_positions_offset(uint32_t slots) {
    return stream_chosen_offset<R>() + (size_t(slots) * sizeof(R) + 15) / 16 * 16;
}
template <typename R>
__host__ __device__ constexpr size_t stream_sort_bytes(int items) {
    using Item = SortKeyIndex<R>;
    return 2 * size_t(StreamPolicy::kThreads * items + StreamPolicy::kThreads * items / 16) * sizeof(Item);
}
template <typename R>
__host__ __device__ constexpr size_t block_stream_select_shared_bytes(uint32_t wanted) {
    const size_t select = stream_chosen_positions_offset<R>(wanted) + size_t(wanted) * sizeof(uint32_t);
    const size_t sort = stream_sort_bytes<R>(stream_sort_items(wanted));
    return select > sort ? select : sort;
}

template <typename K>
struct BlockStreamSelect {
    using R = SelectKey<K>;
    static constexpr int kThreads = StreamPolicy::kThreads;
    static constexpr int kBins = RadixSelectPolicy::kBins;
    static constexpr int kReplicas = StreamPolicy::kReplicas;
    static constexpr int kBinsPerThread = kBins / kThreads;
    static constexpr uint32_t kCandidateSlots = stream_candidate_slots<R>();
    // Keys in one 16-byte load.
    static constexpr uint32_t kVector = 16 / sizeof(K);
    static_assert(kBins % kThreads == 0, "whole bins a thread");

    struct Shared {
        uint32_t *bins;  // kReplicas copies of kBins
        R *candidate_keys;
        uint32_t *candidate_positions;
        R *chosen_keys;  // wanted
        uint32_t *chosen_positions;
        uint32_t *warp_sums;  // 33
        uint32_t &candidates, &chosen;  // pairs written so far
        uint32_t &chosen_bin, &chosen_below, &chosen_count;
    };

    const Shared sh;
    const TopkArgs &args;
    const K *const in;
    const uint32_t length, wanted;
    const SelectDigits digits;
    const RadixKeyMap<K> map;  // to_radix_key without a branch a key
    uint32_t *const my_bins;  // the copy this thread counts into
    // The pairs (key, position) whose chosen digits equal the prefix are in
    // play; `remaining` of them are wanted, at most `matching` match.
    R key_prefix = 0, key_mask = 0;
    uint32_t index_prefix = 0, index_mask = 0;
    uint32_t remaining, matching;
    uint32_t pass = 0;

    __device__ __forceinline__ BlockStreamSelect(const Shared &shared, const TopkArgs &a, uint64_t begin,
                                                 uint32_t segment_length)
        : sh(shared),
          args(a),
          in(static_cast<const K *>(a.keys_in) + begin),
          length(segment_length),
          wanted(uint32_t(a.k < segment_length ? a.k : segment_length)),
          digits(SelectDigits::of(8 * sizeof(K), position_bits(segment_length))),
          map(radix_key_map<K>(a.kind, a.descending)),
          my_bins(shared.bins + (threadIdx.x % kReplicas) * kBins),
          remaining(wanted),
          matching(segment_length) {}

    // Bits of the largest position (at least one).
    __device__ __forceinline__ static uint32_t position_bits(uint32_t length) {
        uint32_t bits = 1;
        while (bits < 32 && ((length - 1) >> bits) != 0) ++bits;
        return bits;
    }

    __device__ __forceinline__ bool collecting() const { return matching == remaining; }

    // Whether the pair matches the prefix (0), falls below it (-1) or above
    // (1). The prefixes are their masks' top bits, so a key below its
    // prefix is below it in whole (no mask), and so is a position; no
    // branch: warps stay converged for their votes.
    __device__ __forceinline__ int compare(R key, uint32_t position) const {
        const bool key_equal = ((key ^ key_prefix) & key_mask) == 0;
        const bool position_equal = ((position ^ index_prefix) & index_mask) == 0;
        const bool below = key < key_prefix || (key_equal && position < index_prefix);
        return below ? -1 : key_equal && position_equal ? 0 : 1;
    }

    // Calls visit(key, position, valid) for every key of the input, every
    // lane of a warp together (valid false past the end), so that visit may
    // use warp votes. The keys from the first 16-byte boundary on come in
    // rounds of kLoads 16-byte loads a thread, the next round's loads issued
    // before this round's keys are visited (one block has no other blocks
    // to hide its loads' latency behind); the few keys before the boundary
    // and after the last whole load come one a lane of warp 0.
    template <typename Visit>
    __device__ __forceinline__ void sweep_input(Visit &&visit) const {
        const uint32_t misaligned = uint32_t(reinterpret_cast<uintptr_t>(in) % 16) / sizeof(K);
        const uint32_t head = misaligned == 0 ? 0 : kVector - misaligned;
        const uint32_t vectors = length > head ? (length - head) / kVector : 0;
        const uint32_t body_end = head + vectors * kVector;
        if (threadIdx.x < 32) {
            const uint32_t lane = threadIdx.x;
            const bool valid_head = lane < head && lane < length;
            visit(valid_head ? R(map(in[lane])) : R(0), lane, valid_head);
            const uint32_t tail = body_end + lane;
            const bool valid_tail = lane < kVector && tail < length;
            visit(valid_tail ? R(map(in[tail])) : R(0), tail, valid_tail);
        }
        const uint4 *vector_in = reinterpret_cast<const uint4 *>(in + head);
        constexpr uint32_t kLoads = StreamPolicy::kLoads;
        constexpr uint32_t kRound = kThreads * kLoads;
        uint4 loaded[kLoads];
        const auto load_round = [&](uint32_t first) {
#pragma unroll
            for (uint32_t u = 0; u < kLoads; ++u) {
                const uint32_t v = first + u * kThreads + threadIdx.x;
                loaded[u] = v < vectors ? __ldg(vector_in + v) : make_uint4(0, 0, 0, 0);
            }
        };
        load_round(0);
        for (uint32_t first = 0; first < vectors; first += kRound) {  // uniform over the block
            K keys[kLoads][kVector];
#pragma unroll
            for (uint32_t u = 0; u < kLoads; ++u) memcpy(keys[u], &loaded[u], 16);
            const bool whole = first + kRound <= vectors;  // uniform: no key of the round past the end
            if (first + kRound < vectors) load_round(first + kRound);
            if (whole) {
#pragma unroll
                for (uint32_t u = 0; u < kLoads; ++u) {
                    const uint32_t v = first + u * kThreads + threadIdx.x;
#pragma unroll
                    for (uint32_t e = 0; e < kVector; ++e) visit(R(map(keys[u][e])), head + v * kVector + e, true);
                }
            } else {
#pragma unroll
                for (uint32_t u = 0; u < kLoads; ++u) {
                    const uint32_t v = first + u * kThreads + threadIdx.x;
#pragma unroll
                    for (uint32_t e = 0; e < kVector; ++e)
                        visit(R(map(keys[u][e])), head + v * kVector + e, v < vectors);
                }
            }
        }
    }

    // The same over the candidates in shared memory.
    template <typename Visit>
    __device__ __forceinline__ void sweep_candidates(Visit &&visit) const {
        const uint32_t count = sh.candidates;
        for (uint32_t first = 0; first < count; first += kThreads) {  // uniform over the block
            const uint32_t i = first + threadIdx.x;
            const bool valid = i < count;
            visit(valid ? sh.candidate_keys[i] : R(0), valid ? sh.candidate_positions[i] : 0u, valid);
        }
    }

    __device__ __forceinline__ void clear_bins() const {
        for (int b = threadIdx.x; b < kBins * kReplicas; b += kThreads) sh.bins[b] = 0;
        __syncthreads();
    }

    // Counts a digit of a pair in play: of the key (kInIndex false) or of
    // the position. kFirst: the first pass, which has no prefix yet, so
    // every pair is in play.
    template <bool kInIndex, bool kFirst>
    __device__ __forceinline__ void count(R key, uint32_t position, bool valid, PassDigit digit) const {
        if (valid && (kFirst || compare(key, position) == 0)) {
            const uint32_t field = kInIndex ? position >> digit.shift : uint32_t(key >> digit.shift);
            atomicAdd(&my_bins[field & ((1u << digit.width) - 1)], 1u);
        }
    }

    // One pass's count over the input or the candidates (sweep: sweep_input
    // or sweep_candidates), the visit chosen for its digit once.
    template <bool kFromInput>
    __device__ __forceinline__ void count_pass(PassDigit digit) {
        const auto sweep = [&](auto visit) {
            if constexpr (kFromInput) sweep_input(visit);
            else sweep_candidates(visit);
        };
        if (kFromInput && pass == 0)
            sweep([&](R key, uint32_t position, bool valid) { count<false, true>(key, position, valid, digit); });
        else if (digit.in_index)
            sweep([&](R key, uint32_t position, bool valid) { count<true, false>(key, position, valid, digit); });
        else
            sweep([&](R key, uint32_t position, bool valid) { count<false, false>(key, position, valid, digit); });
    }

    // Appends the marked pairs of a warp at slots taken with one shared
    // atomic (every lane calls it).
    __device__ __forceinline__ static void append(bool marked, R key, uint32_t position, uint32_t &counter, R *keys,
                                                  uint32_t *positions, uint32_t capacity) {
        const uint32_t votes = __ballot_sync(0xffffffffu, marked);
        if (votes == 0) return;
        const uint32_t slot = warp_append_slot(votes, counter);
        if (marked && slot < capacity) {  // the counts bound it; a guard
            keys[slot] = key;
            positions[slot] = position;
        }
    }

    // The bin of pass `pass`'s digit that holds rank `remaining`: the prefix
    // extended by it.
    __device__ __forceinline__ void choose_bin(PassDigit digit) {
        uint32_t counts[kBinsPerThread];
#pragma unroll
        for (int b = 0; b < kBinsPerThread; ++b) {
            uint32_t c = 0;
#pragma unroll
            for (int r = 0; r < kReplicas; ++r) c += sh.bins[r * kBins + threadIdx.x * kBinsPerThread + b];
            counts[b] = c;
        }
        choose_rank_bin(counts, remaining, sh.warp_sums, sh.chosen_bin, sh.chosen_below, sh.chosen_count);
        extend_prefix(digit, sh.chosen_bin, key_prefix, key_mask, index_prefix, index_mask);
        remaining -= sh.chosen_below;
        matching = sh.chosen_count;
        ++pass;
        __syncthreads();  // the chosen bin is rewritten by the next round
    }

    // Step 1: rounds over the input until the pairs at or below the prefix
    // (the chosen so far, wanted - remaining, and those in play) fit the
    // candidates, or those in play are exactly the ones still wanted (after
    // every digit one pair is in play, so the loop ends).
    __device__ __forceinline__ void count_input() {
        while (!collecting() && matching + (wanted - remaining) > kCandidateSlots) {
            const PassDigit digit = digits.digit(pass);
            clear_bins();
            count_pass<true>(digit);
            __syncthreads();
            choose_bin(digit);
        }
    }

    // Step 2: the pairs at or below the prefix become candidates (one
    // append a key: a warp's vote, and one shared atomic where it found
    // any). When collecting they are exactly the chosen.
    __device__ __forceinline__ void gather_input() {
        const auto visit = [&](R key, uint32_t position, bool valid, bool at_or_below) {
            append(valid && at_or_below, key, position, sh.candidates, sh.candidate_keys, sh.candidate_positions,
                   kCandidateSlots);
        };
        if (index_mask == 0) {
            // Only key digits chosen: the key alone orders it.
            sweep_input([&](R key, uint32_t position, bool valid) {
                visit(key, position, valid, key < key_prefix || ((key ^ key_prefix) & key_mask) == 0);
            });
        } else {
            sweep_input(
                [&](R key, uint32_t position, bool valid) { visit(key, position, valid, compare(key, position) <= 0); });
        }
        __syncthreads();
    }

    // Step 3: the rest of the digits over the candidates (those below the
    // prefix are not in play: compare), then the ones at or below the final
    // prefix are chosen.
    __device__ __forceinline__ void finish_candidates() {
        while (!collecting()) {
            const PassDigit digit = digits.digit(pass);
            clear_bins();
            count_pass<false>(digit);
            __syncthreads();
            choose_bin(digit);
        }
        sweep_candidates([&](R key, uint32_t position, bool valid) {
            append(valid && compare(key, position) <= 0, key, position, sh.chosen, sh.chosen_keys,
                   sh.chosen_positions, wanted);
        });
        __syncthreads();
    }

    // Step 4: the `wanted` chosen pairs (keys, positions) sorted by (key,
    // position) in registers, written as segment s's results. The sort's
    // buffers reuse the shared memory. Up to 32 * kItems chosen, warp 0
    // sorts alone (no block step).
    template <int kItems>
    __device__ __forceinline__ void sort_and_write(uint64_t s, unsigned char *shared, const R *keys,
                                                   const uint32_t *positions) const {
        using Item = SortKeyIndex<R>;
        using Sort = BlockBitonicSort<Item, kItems>;
        Item items[kItems];
#pragma unroll
        for (int e = 0; e < kItems; ++e) {
            const uint32_t i = threadIdx.x * kItems + e;
            // Past the chosen: the largest item (no 32-bit position of this path reaches ~0).
            items[e] = i < wanted ? sort_make_item(keys[i], positions[i]) : sort_make_item(~R(0), ~0u);
        }
        uint32_t group = Sort::kWarpItems;
        while (group < wanted) group <<= 1;
        if (group == Sort::kWarpItems) {
            if (threadIdx.x >= 32) return;  // uniform over each warp
        } else {
            __syncthreads();  // the chosen are read before the buffers overwrite them
        }
        // Only the first group holds chosen pairs: the other threads meet the barriers.
        Sort::sort_groups(items, reinterpret_cast<Item *>(shared), group, threadIdx.x * kItems < group);
#pragma unroll
        for (int e = 0; e < kItems; ++e) {
            const uint32_t r = threadIdx.x * kItems + e;
            if (r < wanted) write_result<K>(args, s, r, sort_item_key(items[e]), sort_item_index(items[e]));
        }
    }

    __device__ __forceinline__ void run(uint64_t s, unsigned char *shared) {
        if (threadIdx.x == 0) {
            sh.candidates = 0;
            sh.chosen = 0;
        }
        // count_input's first barrier (or gather_input's, when it runs no
        // round) orders these before any append.
        __syncthreads();
        count_input();
        const bool collected = collecting();
        gather_input();
        const R *keys = sh.candidate_keys;
        const uint32_t *positions = sh.candidate_positions;
        if (!collected) {
            finish_candidates();
            keys = sh.chosen_keys;
            positions = sh.chosen_positions;
        }
        constexpr int kMostItems = stream_sort_items(StreamPolicy::kMaxWanted);
        const int items = stream_sort_items(wanted);
        if (items == 2) sort_and_write<2>(s, shared, keys, positions);
        else if constexpr (kMostItems == 4) sort_and_write<4>(s, shared, keys, positions);
        else if (items == 4) sort_and_write<4>(s, shared, keys, positions);
        else sort_and_write<8>(s, shared, keys, positions);
    }
};

// One block a segment of length in (min_length, max_length]; the others
// are another launch's. Dynamic shared memory:
// block_stream_select_shared_bytes(the largest wanted).
template <typename K>
__global__ void __launch_bounds__(BlockStreamSelectPolicy::kThreads, 1)
    block_stream_select_kernel(const TopkArgs args, uint32_t min_length, uint32_t max_length) {
    if (args.bounds.skipped()) return;  // offsets failed a deferred check
    using Select = BlockStreamSelect<K>;
    using R = SelectKey<K>;
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    __shared__ uint32_t warp_sums[33];
    __shared__ uint32_t candidates, chosen, chosen_bin, chosen_below, chosen_count;
    for (uint64_t g = blockIdx.x; g < args.groups; g += gridDim.x) {
        const uint64_t s = segment_of(args, g);
        const uint64_t begin = args.bounds.offset(s);
        const uint64_t length = args.bounds.offset(s + 1) - begin;
        if (length <= min_length || length > max_length) continue;  // uniform over the block
        const uint32_t wanted = uint32_t(args.k < length ? args.k : length);
        const typename Select::Shared shared{
            reinterpret_cast<uint32_t *>(shared_bytes),
            reinterpret_cast<R *>(shared_bytes + stream_bins_bytes()),
            reinterpret_cast<uint32_t *>(shared_bytes + stream_bins_bytes() +
                                         size_t(Select::kCandidateSlots) * sizeof(R)),
            reinterpret_cast<R *>(shared_bytes + stream_chosen_offset<R>()),
            reinterpret_cast<uint32_t *>(shared_bytes + stream_chosen_positions_offset<R>(wanted)),
            warp_sums,
            candidates,
            chosen,
            chosen_bin,
            chosen_below,
            chosen_count};
        Select(shared, args, begin, uint32_t(length)).run(s, shared_bytes);
        __syncthreads();  // shared memory is the next segment's
    }
}

}  // namespace gpuprim::cuda::selection
