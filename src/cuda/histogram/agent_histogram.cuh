// SPDX-License-Identifier: Apache-2.0
// The histogram kernel (histogram.cu drives it). Each element's bin comes
// from core/histogram_bins.h, the arithmetic the CPU backend uses too.
//
// A launch covers one row (the flat calls) or up to 65,535 rows of a
// _rows call, one row per blockIdx.y; a block counts within its row only.
// Threads loop over the input as 16-byte vectors, kHistogramItems vectors
// at a time (loads first, then the bins; the elements before the first
// 16-byte boundary and after the last whole vector one a thread). With `shared`, each block counts into 32-bit
// counters of its own in shared memory (the edges' keys beside them, with
// edges) and at the end adds its non-zero counters to the output with one
// atomic each; otherwise every element is an atomic add to the output in
// global memory (many bins: few collisions). Integer atomics: the counts
// are the same whatever order they land in.
#pragma once

#include "core/element_traits.h"
#include "core/histogram_bins.h"
#include "cuda/histogram/histogram_policy.cuh"

#include <cuda_runtime.h>

#include <cstdint>

namespace gpuprim::cuda {
namespace histogram_detail {

template <typename T>
struct HistogramArgs {
    const T *input;
    uint64_t count;         // elements of this launch
    uint64_t bins;
    void *counts;
    uint32_t count_bytes;   // 4 or 8
    const T *edges;         // nullptr: even bins
    EvenBins even;
    bool shared;            // counters (and edge keys) in shared memory
    // Rows (the _rows calls): blockIdx.y is the row within the launch; row
    // y's elements start row_elements after row y - 1's, its counts bins
    // counts after. One row (blockIdx.y 0 only) for the flat calls.
    uint64_t row_elements;
};

// The arguments of this block's row: input and counts moved to row blockIdx.y.
template <typename T>
__device__ __forceinline__ HistogramArgs<T> row_args(const HistogramArgs<T> &launch) {
    HistogramArgs<T> args = launch;
    args.input += uint64_t(blockIdx.y) * launch.row_elements;
    args.counts = static_cast<unsigned char *>(launch.counts) +
                  uint64_t(blockIdx.y) * launch.bins * launch.count_bytes;
    return args;
}

__device__ __forceinline__ void add_count(void *counts, uint32_t count_bytes, uint64_t bin, uint32_t amount) {
    if (count_bytes == 4) atomicAdd(static_cast<unsigned int *>(counts) + bin, amount);
    else atomicAdd(static_cast<unsigned long long *>(counts) + bin, static_cast<unsigned long long>(amount));
}

// The bytes of shared memory a block of the shared path takes.
template <typename T>
constexpr uint64_t edge_keys_offset(uint64_t bins) {
    return (bins * sizeof(uint32_t) + 7) / 8 * 8;
}
template <typename T>
constexpr uint64_t histogram_shared_bytes(uint64_t bins, bool edges) {
    return edge_keys_offset<T>(bins) + (edges ? (bins + 1) * sizeof(bits_t<T>) : 0);
}

template <typename T, bool kEdges>
__device__ __forceinline__ bool bin_of(const HistogramArgs<T> &args, const bits_t<T> *edge_keys, T x, uint64_t &bin) {
    if constexpr (!kEdges) {
        (void)edge_keys;
        return even_bin(args.even, x, bin);
    } else {
        bits_t<T> key;
        if (!range_key(x, key)) return false;
        if (edge_keys)
            return range_bin([&](uint64_t i) { return edge_keys[i]; }, args.bins + 1, key, bin);
        return range_bin([&](uint64_t i) { return range_edge_key(args.edges[i]); }, args.bins + 1, key, bin);
    }
}

template <typename T, bool kEdges>
__global__ void __launch_bounds__(kHistogramBlockThreads) histogram_kernel(const HistogramArgs<T> launch_args) {
    const HistogramArgs<T> args = row_args(launch_args);
    extern __shared__ __align__(16) unsigned char histogram_shared[];
    uint32_t *counters = reinterpret_cast<uint32_t *>(histogram_shared);
    const bits_t<T> *edge_keys = nullptr;
    if (args.shared) {
        for (uint64_t b = threadIdx.x; b < args.bins; b += kHistogramBlockThreads) counters[b] = 0;
        if constexpr (kEdges) {
            bits_t<T> *keys = reinterpret_cast<bits_t<T> *>(histogram_shared + edge_keys_offset<T>(args.bins));
            for (uint64_t e = threadIdx.x; e <= args.bins; e += kHistogramBlockThreads)
                keys[e] = range_edge_key(args.edges[e]);
            edge_keys = keys;
        }
        __syncthreads();
    }
    auto count_one = [&](T x) {
        uint64_t bin;
        if (bin_of<T, kEdges>(args, edge_keys, x, bin)) {
            if (args.shared) atomicAdd(counters + bin, 1u);
            else add_count(args.counts, args.count_bytes, bin, 1u);
        }
    };
    // The input as 16-byte vectors (kVector elements each) between a head
    // before its first 16-byte boundary and a tail after its last whole
    // vector; the head and tail go one element a thread, the vectors
    // kHistogramItems a thread at a time, loaded before they are binned.
    constexpr int kVector = 16 / int(sizeof(T));
    const uint64_t misaligned = (reinterpret_cast<uintptr_t>(args.input) % 16) / sizeof(T);
    const uint64_t head = misaligned == 0 ? 0 : (uint64_t(kVector) - misaligned < args.count
                                                    ? uint64_t(kVector) - misaligned
                                                    : args.count);
    const uint64_t vectors = (args.count - head) / kVector;
    const uint64_t tail_begin = head + vectors * kVector;
    const uint64_t thread = uint64_t(blockIdx.x) * kHistogramBlockThreads + threadIdx.x;
    if (thread < head) count_one(args.input[thread]);
    if (thread < args.count - tail_begin) count_one(args.input[tail_begin + thread]);
    const uint4 *body = reinterpret_cast<const uint4 *>(args.input + head);
    const uint64_t step = uint64_t(gridDim.x) * kHistogramBlockThreads * kHistogramItems;
    for (uint64_t base = uint64_t(blockIdx.x) * kHistogramBlockThreads * kHistogramItems + threadIdx.x;
         base < vectors; base += step) {
        uint4 loaded[kHistogramItems];
#pragma unroll
        for (int r = 0; r < kHistogramItems; ++r) {
            const uint64_t v = base + uint64_t(r) * kHistogramBlockThreads;
            if (v < vectors) loaded[r] = body[v];
        }
#pragma unroll
        for (int r = 0; r < kHistogramItems; ++r) {
            const uint64_t v = base + uint64_t(r) * kHistogramBlockThreads;
            if (v >= vectors) continue;
            T x[kVector];
            memcpy(x, &loaded[r], sizeof loaded[r]);
#pragma unroll
            for (int e = 0; e < kVector; ++e) count_one(x[e]);
        }
    }
    if (args.shared) {
        __syncthreads();
        for (uint64_t b = threadIdx.x; b < args.bins; b += kHistogramBlockThreads)
            if (counters[b] != 0) add_count(args.counts, args.count_bytes, b, counters[b]);
    }
}

}  // namespace histogram_detail
}  // namespace gpuprim::cuda
