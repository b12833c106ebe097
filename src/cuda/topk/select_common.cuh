// SPDX-License-Identifier: Apache-2.0
// What the top-k kernels share: their arguments, the select key of a key
// width (its radix key, core/key_transform.h, whose unsigned order is the
// requested order, so every path looks for the k smallest select keys, ties
// by position), writing a result, and two block-wide tools (an exclusive
// sum, a bitonic sort of (key, index) pairs in shared memory).
#pragma once

#include "core/element_traits.h"
#include "core/key_transform.h"
#include "cuda/engine/segment_bounds.cuh"

#include <cstdint>
#include <type_traits>

namespace gpuprim::cuda::selection {

// Keys of 1, 2 and 4 bytes select as 32-bit radix keys, 8-byte keys as 64-bit.
template <typename K>
using SelectKey = std::conditional_t<sizeof(K) == 8, uint64_t, uint32_t>;

struct TopkArgs {
    const void *keys_in;
    void *keys_out;  // nullptr: not wanted
    void *indices;   // nullptr: not wanted
    uint32_t index_bytes;
    KeyKind kind;
    bool descending;
    uint64_t k;
    SegmentBounds bounds;
    const void *list;  // ids of the segments a launch works on (8 bytes each), or nullptr: all
    uint64_t groups;   // segments a launch works on
};

__device__ __forceinline__ uint64_t segment_of(const TopkArgs &args, uint64_t g) {
    return args.list ? static_cast<const unsigned long long *>(args.list)[g] : g;
}

template <typename K>
__device__ __forceinline__ SelectKey<K> select_key(const TopkArgs &args, K bits) {
    return SelectKey<K>(to_radix_key<K>(bits, args.kind, args.descending));
}

// Result `rank` of segment s: its key (from the select key) and its index.
template <typename K>
__device__ __forceinline__ void write_result(const TopkArgs &args, uint64_t s, uint64_t rank, SelectKey<K> key,
                                             uint64_t index) {
    const uint64_t at = s * args.k + rank;
    if (args.keys_out) static_cast<K *>(args.keys_out)[at] = from_radix_key<K>(K(key), args.kind, args.descending);
    if (args.indices) {
        if (args.index_bytes == 4) static_cast<uint32_t *>(args.indices)[at] = uint32_t(index);
        else static_cast<unsigned long long *>(args.indices)[at] = index;
    }
}

// Exclusive prefix sum over the lanes of a warp (all 32 must call it).
__device__ __forceinline__ uint32_t warp_exclusive_sum(uint32_t value) {
    const int lane = threadIdx.x & 31;
    uint32_t inclusive = value;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const uint32_t other = __shfl_up_sync(0xffffffffu, inclusive, d);
        if (lane >= d) inclusive += other;
    }
    return inclusive - value;
}

// Exclusive prefix sum of one value a thread over the block (every thread
// must call it); total gets the block's sum. warp_sums: 33 words of shared
// memory, free again when this returns.
__device__ __forceinline__ uint32_t block_exclusive_sum(uint32_t value, uint32_t *warp_sums, uint32_t &total) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int warps = (blockDim.x + 31) >> 5;
    uint32_t inclusive = value;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const uint32_t other = __shfl_up_sync(0xffffffffu, inclusive, d);
        if (lane >= d) inclusive += other;
    }
    if (lane == 31) warp_sums[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        uint32_t sum = lane < warps ? warp_sums[lane] : 0;
        uint32_t scanned = sum;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            const uint32_t other = __shfl_up_sync(0xffffffffu, scanned, d);
            if (lane >= d) scanned += other;
        }
        warp_sums[lane] = scanned - sum;  // exclusive prefix of warp `lane`
        if (lane == 31) warp_sums[32] = scanned;
    }
    __syncthreads();
    const uint32_t result = warp_sums[warp] + inclusive - value;
    total = warp_sums[32];
    __syncthreads();  // warp_sums may be reused by the caller's next call
    return result;
}

// This lane's slot among a warp's marked lanes (votes: the warp's ballot of
// them, not 0), in lane order, from slots taken off `counter` (shared
// memory) with one atomic for the warp. Every lane of the warp calls it.
__device__ __forceinline__ uint32_t warp_append_slot(uint32_t votes, uint32_t &counter) {
    const uint32_t lane = threadIdx.x & 31;
    uint32_t base = 0;
    if (lane == 0) base = atomicAdd(&counter, uint32_t(__popc(votes)));
    base = __shfl_sync(0xffffffffu, base, 0);
    return base + __popc(votes & ((1u << lane) - 1));
}

// The bin holding rank `rank` of a radix select's count: each thread holds
// kBinsPerThread consecutive bins' counts, in thread order; the thread
// whose bin has below < rank <= below + count (below: the keys in the bins
// before it) writes the bin, below and count, which every thread may read
// on return (every thread must call it). warp_sums: as for
// block_exclusive_sum.
template <int kBinsPerThread>
__device__ __forceinline__ void choose_rank_bin(const uint32_t (&counts)[kBinsPerThread], uint32_t rank,
                                                uint32_t *warp_sums, uint32_t &chosen_bin, uint32_t &chosen_below,
                                                uint32_t &chosen_count) {
    uint32_t mine = 0;
#pragma unroll
    for (int b = 0; b < kBinsPerThread; ++b) mine += counts[b];
    uint32_t total;
    uint32_t below = block_exclusive_sum(mine, warp_sums, total);
#pragma unroll
    for (int b = 0; b < kBinsPerThread; ++b) {
        if (below < rank && rank <= below + counts[b]) {
            chosen_bin = threadIdx.x * kBinsPerThread + b;
            chosen_below = below;
            chosen_count = counts[b];
        }
        below += counts[b];
    }
    __syncthreads();
}

// Sorts count (a power of two) pairs in shared memory by key, then index,
// ascending; the whole block takes part and the sorted pairs are visible to
// every thread on return. Up to 64 pairs a step's compare-exchanges fit one
// warp: warp 0 sorts alone between warp barriers and the block waits once
// (a block barrier a step made the sort of 16 chosen ~2 us).
template <typename R, typename I>
__device__ __forceinline__ void block_sort_pairs(R *keys, I *indices, uint32_t count) {
    const bool one_warp = count <= 64;  // uniform
    if (one_warp && threadIdx.x >= 32) count = 0;  // no step for the other warps
    for (uint32_t size = 2; size <= count; size <<= 1) {
        for (uint32_t stride = size >> 1; stride > 0; stride >>= 1) {
            for (uint32_t t = threadIdx.x; t < count / 2; t += blockDim.x) {
                const uint32_t i = 2 * t - (t & (stride - 1));
                const uint32_t j = i + stride;
                const bool ascending = (i & size) == 0;
                const R ki = keys[i], kj = keys[j];
                const I ii = indices[i], ij = indices[j];
                const bool greater = ki > kj || (ki == kj && ii > ij);
                if (greater == ascending) {
                    keys[i] = kj;
                    keys[j] = ki;
                    indices[i] = ij;
                    indices[j] = ii;
                }
            }
            if (one_warp)
                __syncwarp();
            else
                __syncthreads();
        }
    }
    if (one_warp) __syncthreads();
}

__host__ __device__ __forceinline__ uint32_t next_power_of_two(uint32_t x) {
    uint32_t p = 1;
    while (p < x) p <<= 1;
    return p;
}

}  // namespace gpuprim::cuda::selection
