// SPDX-License-Identifier: Apache-2.0
// Top-k of segments that fit one block's shared memory (up to
// BlockSelectPolicy::kMaxLength keys): one block a segment, which
// 1. loads the segment's select keys into shared memory (the only read of
//    the input);
// 2. finds the k-th smallest by a radix select over 8-bit digits from the
//    top: a 256-bin count of the keys that match the digits chosen so far,
//    a scan to find the bin holding rank k, and so on down; it stops early
//    once the chosen bin holds exactly the keys still wanted;
// 3. takes every key below the chosen prefix and, of the keys equal to it,
//    the first ones by position (a block scan of the ties gives each its
//    rank), compacting them in position order;
// 4. sorts the chosen pairs (key, position) with a bitonic network in
//    shared memory and writes them out.
// Long segments in the same call are left to the radix select driver.
#pragma once

#include "cuda/topk/select_common.cuh"
#include "cuda/topk/topk_policy.cuh"

namespace gpuprim::cuda::selection {

// Key i of the segment sits at padded(i) in shared memory: one spare word
// every 32 keys, so that the position-order passes, where thread t reads
// keys t * run + i, hit distinct banks.
__host__ __device__ __forceinline__ uint32_t padded(uint32_t i) { return i + (i >> 5); }

// Shared memory of the kernel: the segment's keys (max_length, padded),
// then the chosen pairs (slots, a power of two).
template <typename K>
__host__ __device__ constexpr size_t block_select_shared_bytes(uint32_t max_length, uint32_t slots) {
    return size_t(max_length + max_length / 32 + 1) * sizeof(SelectKey<K>) +
           size_t(slots) * (sizeof(SelectKey<K>) + sizeof(uint32_t));
}

template <typename K>
__global__ void __launch_bounds__(BlockSelectPolicy::kThreads)
    block_select_kernel(const TopkArgs args, uint32_t max_length, uint32_t slots) {
    if (args.bounds.skipped()) return;  // offsets failed a deferred check
    using R = SelectKey<K>;
    constexpr int kThreads = BlockSelectPolicy::kThreads;
    constexpr int kDigitBits = BlockSelectPolicy::kDigitBits;
    constexpr int kBins = 1 << kDigitBits;
    constexpr int kReplicas = BlockSelectPolicy::kReplicas;
    static_assert(kBins == kThreads, "one bin a thread");
    constexpr int kKeyBits = 8 * sizeof(K);
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    R *keys = reinterpret_cast<R *>(shared_bytes);
    R *chosen_keys = keys + max_length + max_length / 32 + 1;
    uint32_t *chosen_positions = reinterpret_cast<uint32_t *>(chosen_keys + slots);
    __shared__ uint32_t bins[kBins * kReplicas];
    __shared__ uint32_t warp_sums[33];
    __shared__ uint32_t chosen_bin, chosen_below, chosen_count;

    for (uint64_t g = blockIdx.x; g < args.groups; g += gridDim.x) {
        const uint64_t s = segment_of(args, g);
        const uint64_t begin = args.bounds.offset(s);
        const uint64_t length64 = args.bounds.offset(s + 1) - begin;
        if (length64 == 0 || length64 > max_length) continue;  // uniform over the block
        const uint32_t length = uint32_t(length64);
        const uint32_t wanted = uint32_t(args.k < length ? args.k : length);
        const K *in = static_cast<const K *>(args.keys_in) + begin;
        // kLoads independent loads a thread in flight.
        constexpr int kLoads = 8;
        for (uint32_t base = 0; base < length; base += kThreads * kLoads) {
            K loaded[kLoads];
#pragma unroll
            for (int u = 0; u < kLoads; ++u) {
                const uint32_t i = base + u * kThreads + threadIdx.x;
                if (i < length) loaded[u] = in[i];
            }
#pragma unroll
            for (int u = 0; u < kLoads; ++u) {
                const uint32_t i = base + u * kThreads + threadIdx.x;
                if (i < length) keys[padded(i)] = select_key<K>(args, loaded[u]);
            }
        }
        __syncthreads();

        // Radix select: prefix/mask are the digits chosen so far; remaining
        // is how many keys matching them are still wanted.
        R prefix = 0, mask = 0;
        uint32_t remaining = wanted;
        for (int shift = kKeyBits - kDigitBits; shift >= 0; shift -= kDigitBits) {
#pragma unroll
            for (int r = 0; r < kReplicas; ++r) bins[threadIdx.x * kReplicas + r] = 0;
            __syncthreads();
            const uint32_t replica = threadIdx.x % kReplicas;
            for (uint32_t i = threadIdx.x; i < length; i += kThreads) {
                const R key = keys[padded(i)];
                if ((key & mask) == prefix) atomicAdd(&bins[((key >> shift) & (kBins - 1)) * kReplicas + replica], 1u);
            }
            __syncthreads();
            uint32_t count = 0;
#pragma unroll
            for (int r = 0; r < kReplicas; ++r) count += bins[threadIdx.x * kReplicas + r];
            uint32_t total;
            const uint32_t below = block_exclusive_sum(count, warp_sums, total);
            if (below < remaining && remaining <= below + count) {
                chosen_bin = threadIdx.x;
                chosen_below = below;
                chosen_count = count;
            }
            __syncthreads();
            prefix |= R(chosen_bin) << shift;
            mask |= R(kBins - 1) << shift;
            remaining -= chosen_below;
            if (chosen_count == remaining) break;  // every key with this prefix is wanted
        }

        // Keys below the prefix are in; of those equal to it, the first
        // `remaining` by position. Thread t looks at positions
        // [t * run, (t + 1) * run), so block scans give position order.
        const uint32_t run = (length + kThreads - 1) / kThreads;
        const uint32_t first = threadIdx.x * run;
        const uint32_t last = first + run < length ? first + run : length;
        uint32_t ties = 0;
        for (uint32_t i = first; i < last; ++i) ties += (keys[padded(i)] & mask) == prefix;
        uint32_t total;
        uint32_t tie_rank = block_exclusive_sum(ties, warp_sums, total);
        uint32_t taken = 0;
        {
            uint32_t rank = tie_rank;
            for (uint32_t i = first; i < last; ++i) {
                const R masked = keys[padded(i)] & mask;
                taken += masked < prefix || (masked == prefix && rank++ < remaining);
            }
        }
        uint32_t at = block_exclusive_sum(taken, warp_sums, total);
        for (uint32_t i = first; i < last; ++i) {
            const R key = keys[padded(i)];
            const R masked = key & mask;
            if (masked < prefix || (masked == prefix && tie_rank++ < remaining)) {
                chosen_keys[at] = key;
                chosen_positions[at] = i;
                ++at;
            }
        }
        const uint32_t padded = next_power_of_two(wanted);
        for (uint32_t i = wanted + threadIdx.x; i < padded; i += kThreads) {
            chosen_keys[i] = ~R(0);
            chosen_positions[i] = ~uint32_t(0);
        }
        __syncthreads();
        block_sort_pairs(chosen_keys, chosen_positions, padded);
        for (uint32_t r = threadIdx.x; r < wanted; r += kThreads)
            write_result<K>(args, s, r, chosen_keys[r], chosen_positions[r]);
        __syncthreads();  // shared memory is the next segment's
    }
}

}  // namespace gpuprim::cuda::selection
