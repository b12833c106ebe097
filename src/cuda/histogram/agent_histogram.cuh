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
//
// Few bins (kHistogramColumnBins) get kHistogramBinColumns counters each:
// bin b of lane l is word b * columns + l % columns, so equal values from
// one warp meet 4-way bank conflicts, not 32-way ones. 1-byte dtypes
// (value_histogram_kernel) count values in a column per lane: a warp's 32
// atomics then fall in 32 different banks whatever the values.
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
    uint32_t columns;       // shared counters per bin: 1 or kHistogramBinColumns
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

// Shared counters per bin: kHistogramBinColumns for few bins, else one.
constexpr uint32_t counter_columns(uint64_t bins) { return bins <= kHistogramColumnBins ? kHistogramBinColumns : 1; }

// The bytes of shared memory a block of the shared path takes.
constexpr uint64_t edge_keys_offset(uint64_t bins) {
    return (bins * counter_columns(bins) * sizeof(uint32_t) + 7) / 8 * 8;
}
template <typename T>
constexpr uint64_t histogram_shared_bytes(uint64_t bins, bool edges) {
    return edge_keys_offset(bins) + (edges ? (bins + 1) * sizeof(bits_t<T>) : 0);
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

// Calls f on every element of input[0, count) the grid covers: the input
// as 16-byte vectors (kVector elements each) between a head before its
// first 16-byte boundary and a tail after its last whole vector; the head
// and tail go one element a thread, the vectors kHistogramItems a thread at
// a time, loaded before f sees them.
template <typename T, typename F>
__device__ __forceinline__ void for_each_element(const T *input, uint64_t count, F &&f) {
    constexpr int kVector = 16 / int(sizeof(T));
    const uint64_t misaligned = (reinterpret_cast<uintptr_t>(input) % 16) / sizeof(T);
    const uint64_t head =
        misaligned == 0 ? 0 : (uint64_t(kVector) - misaligned < count ? uint64_t(kVector) - misaligned : count);
    const uint64_t vectors = (count - head) / kVector;
    const uint64_t tail_begin = head + vectors * kVector;
    const uint64_t thread = uint64_t(blockIdx.x) * kHistogramBlockThreads + threadIdx.x;
    if (thread < head) f(input[thread]);
    if (thread < count - tail_begin) f(input[tail_begin + thread]);
    const uint4 *body = reinterpret_cast<const uint4 *>(input + head);
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
            for (int e = 0; e < kVector; ++e) f(x[e]);
        }
    }
}

// Sums bin b's columns starting at a column of its own, so the threads of a
// warp (consecutive bins) read 32 different banks.
__device__ __forceinline__ uint32_t column_total(const uint32_t *counters, uint64_t b, uint32_t columns) {
    uint32_t total = 0;
    for (uint32_t c = 0; c < columns; ++c) total += counters[b * columns + ((uint32_t(b) + c) & (columns - 1))];
    return total;
}

template <typename T, bool kEdges>
__global__ void __launch_bounds__(kHistogramBlockThreads) histogram_kernel(const HistogramArgs<T> launch_args) {
    const HistogramArgs<T> args = row_args(launch_args);
    extern __shared__ __align__(16) unsigned char histogram_shared[];
    uint32_t *counters = reinterpret_cast<uint32_t *>(histogram_shared);
    const bits_t<T> *edge_keys = nullptr;
    // This thread's column: counter (bin, column) is word bin * columns + column.
    const uint32_t column = threadIdx.x & (args.columns - 1);
    if (args.shared) {
        for (uint64_t w = threadIdx.x; w < args.bins * args.columns; w += kHistogramBlockThreads) counters[w] = 0;
        if constexpr (kEdges) {
            bits_t<T> *keys = reinterpret_cast<bits_t<T> *>(histogram_shared + edge_keys_offset(args.bins));
            for (uint64_t e = threadIdx.x; e <= args.bins; e += kHistogramBlockThreads)
                keys[e] = range_edge_key(args.edges[e]);
            edge_keys = keys;
        }
        __syncthreads();
    }
    for_each_element(args.input, args.count, [&](T x) {
        uint64_t bin;
        if (bin_of<T, kEdges>(args, edge_keys, x, bin)) {
            if (args.shared) atomicAdd(counters + bin * args.columns + column, 1u);
            else add_count(args.counts, args.count_bytes, bin, 1u);
        }
    });
    if (args.shared) {
        __syncthreads();
        for (uint64_t b = threadIdx.x; b < args.bins; b += kHistogramBlockThreads) {
            const uint32_t total = column_total(counters, b, args.columns);
            if (total != 0) add_count(args.counts, args.count_bytes, b, total);
        }
    }
}

// 1-byte dtypes, any bins: each block counts the 256 values (a column per
// lane), then adds each value's count to its bin. The loop then does no bin
// arithmetic at all: a byte, a shared atomic; the bins cost 256 bin_of calls
// a block (edges read from global memory).
template <typename T, bool kEdges>
__global__ void __launch_bounds__(kHistogramBlockThreads) value_histogram_kernel(const HistogramArgs<T> launch_args) {
    const HistogramArgs<T> args = row_args(launch_args);
    static_assert(sizeof(T) == 1, "a counter column per value of a byte");
    constexpr uint32_t kValues = 256;
    __shared__ uint32_t counters[kValues * kHistogramValueColumns];
    const uint32_t column = threadIdx.x % kHistogramValueColumns;
    for (uint32_t w = threadIdx.x; w < kValues * kHistogramValueColumns; w += kHistogramBlockThreads) counters[w] = 0;
    __syncthreads();
    for_each_element(args.input, args.count, [&](T x) {
        uint8_t byte;
        memcpy(&byte, &x, 1);
        atomicAdd(counters + uint32_t(byte) * kHistogramValueColumns + column, 1u);
    });
    __syncthreads();
    for (uint32_t value = threadIdx.x; value < kValues; value += kHistogramBlockThreads) {
        const uint32_t total = column_total(counters, value, kHistogramValueColumns);
        const uint8_t byte = uint8_t(value);
        T x;
        memcpy(&x, &byte, 1);
        uint64_t bin;
        if (total != 0 && bin_of<T, kEdges>(args, nullptr, x, bin))
            add_count(args.counts, args.count_bytes, bin, total);
    }
}

}  // namespace histogram_detail
}  // namespace gpuprim::cuda
