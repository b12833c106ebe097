// SPDX-License-Identifier: Apache-2.0
// Segmented reduce without the look-back of the general kernel
// (segmented_scan.cu), where every segment's work is known from its own
// bounds: uniform rows, and CSR segments that are all short.
//
// - Segments shorter than kChunkItems (rows), or CSR segments bounded by
//   kShortSegmentsMax: kGroup lanes a segment (a power of two up to a warp,
//   from the bound on the segments' length), each lane folding every
//   kGroup-th element into four running values in turn (four loads in
//   flight), then the four and the group's lanes combined in a fixed tree
//   (shuffles).
// - Longer rows, and few rows (kFewRowsMax) of kBlockRowMinLength elements
//   or more: chunks of kChunkItems elements, one block each (16 loads in
//   flight a thread); a row of one chunk is written by its block, otherwise
//   the chunks' results go to the workspace and a second launch folds each
//   row's chunks in order.
// Which path, group size and chunking a call uses depend on the call's shape
// alone (the row length; for offsets the bound known without reading them:
// the data's count, the promise), never on the offsets' values: float sums
// are bitwise the same run to run, and the same whether the offsets check
// waits or is deferred.
#include "core/portable.h"
#include "cuda/segmented_scan/segmented_reduce_direct.h"

#include "core/checked_size.h"
#include "core/dtype.h"
#include "core/ops.h"
#include "cuda/engine/in_kernel_check.cuh"
#include "cuda/engine/segment_bounds.cuh"
#include "cuda/segmented_scan/agent_segmented_scan.cuh"
#include "cuda/util/check.h"
#include "cuda/util/grid_limits.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>

namespace gpuprim::cuda {
namespace {

using segmented_scan_detail::Accumulation;

constexpr int kThreads = 256;
constexpr int kChunkPerThread = 16;
constexpr uint64_t kChunkItems = uint64_t(kThreads) * kChunkPerThread;  // 4096
// Few rows of a few hundred elements or more take a block a row: with a
// group of lanes a row they are too few warps to hide their loads' latency,
// and a lane waits for its four loads a round (a row of 1,024 f32: eight
// rounds of one warp), where a block has all of the row's loads in flight
// at once. Constants, not the device's size: the path, and so float sums'
// bits, depend on the call's shape alone.
constexpr uint64_t kFewRowsMax = 512;
constexpr uint64_t kBlockRowMinLength = 256;

template <typename Acc>
__device__ __forceinline__ Acc shuffle_xor(Acc value, int mask) {
    if constexpr (sizeof(Acc) == 8)
        return bit_cast<Acc>(__shfl_xor_sync(0xffffffffu, bit_cast<unsigned long long>(value), mask));
    else
        return bit_cast<Acc>(__shfl_xor_sync(0xffffffffu, bit_cast<uint32_t>(value), mask));
}

// The values of `group` consecutive lanes combined in a fixed tree (xor
// shuffles, the lower lane on the left: every lane gets the same value).
template <typename Acc, typename Combine>
__device__ __forceinline__ Acc combine_lanes(Acc value, uint32_t group, const Combine &combine) {
    const uint32_t lane = threadIdx.x % 32;
    for (uint32_t mask = 1; mask < group; mask <<= 1) {
        const Acc other = shuffle_xor(value, int(mask));
        value = (lane & mask) ? combine(other, value) : combine(value, other);
    }
    return value;
}

// The block's values combined: each warp's lanes, then the warps in order.
// Thread 0 gets the result.
template <typename Acc, typename Combine>
__device__ __forceinline__ Acc combine_block(Acc value, const Combine &combine, Acc (&warp_values)[kThreads / 32]) {
    value = combine_lanes(value, 32, combine);
    if (threadIdx.x % 32 == 0) warp_values[threadIdx.x / 32] = value;
    __syncthreads();
    Acc total = warp_values[0];
    for (int w = 1; w < kThreads / 32; ++w) total = combine(total, warp_values[w]);
    return total;
}

// Short segments: `group` lanes a segment. A deferred offsets check may have
// failed (skip word) or be this kernel's own (in_kernel): then every block
// returns before it reads anything, and nothing is written.
template <typename T, typename Op>
__global__ void __launch_bounds__(kThreads) reduce_short_segments_kernel(const T *input, T *output,
                                                                         SegmentBounds bounds, uint32_t group,
                                                                         InKernelCheck in_kernel) {
    using Accumulate = Accumulation<T, Op>;
    using Acc = typename Accumulate::Acc;
    using Combine = typename Accumulate::Combine;
    if (bounds.skipped()) return;
    if (in_kernel.offsets && in_kernel_offsets_fail(in_kernel)) return;
    const Combine combine{};
    const uint64_t segments = bounds.segments;
    const uint64_t stride = uint64_t(gridDim.x) * kThreads;
    const uint32_t lane = threadIdx.x % group;
    // The loop bound is the same for the whole block (shuffles need every lane).
    for (uint64_t base = uint64_t(blockIdx.x) * kThreads; base < segments * group; base += stride) {
        const uint64_t segment = (base + threadIdx.x) / group;
        Acc acc[4] = {Combine::identity(), Combine::identity(), Combine::identity(), Combine::identity()};
        if (segment < segments) {
            const uint64_t begin = bounds.offset(segment);
            const uint64_t length = bounds.offset(segment + 1) - begin;
            const T *source = input + begin;
            uint64_t i = lane;
            for (; i + 3 * uint64_t(group) < length; i += 4 * uint64_t(group)) {
                const T x0 = source[i], x1 = source[i + group], x2 = source[i + 2 * group], x3 = source[i + 3 * group];
                acc[0] = combine(acc[0], Accumulate::load(x0));
                acc[1] = combine(acc[1], Accumulate::load(x1));
                acc[2] = combine(acc[2], Accumulate::load(x2));
                acc[3] = combine(acc[3], Accumulate::load(x3));
            }
#pragma unroll
            for (int k = 0; k < 3; ++k)
                if (i + uint64_t(k) * group < length) acc[k] = combine(acc[k], Accumulate::load(source[i + uint64_t(k) * group]));
        }
        const Acc value = combine_lanes(combine(combine(acc[0], acc[1]), combine(acc[2], acc[3])), group, combine);
        if (segment < segments && lane == 0) output[segment] = Accumulate::store(value);
    }
}

// Longer rows: block `b` folds chunk b % chunks of row b / chunks.
template <typename T, typename Op>
__global__ void __launch_bounds__(kThreads) reduce_row_chunks_kernel(
    const T *input, T *output, typename Accumulation<T, Op>::Acc *partials, uint64_t length, uint64_t chunks) {
    using Accumulate = Accumulation<T, Op>;
    using Acc = typename Accumulate::Acc;
    using Combine = typename Accumulate::Combine;
    const Combine combine{};
    __shared__ Acc warp_values[kThreads / 32];
    const uint64_t row = blockIdx.x / chunks, chunk = blockIdx.x % chunks;
    const uint64_t begin = chunk * kChunkItems;
    const uint64_t end = min(begin + kChunkItems, length);
    const T *source = input + row * length;
    Acc acc[4] = {Combine::identity(), Combine::identity(), Combine::identity(), Combine::identity()};
    if (end - begin == kChunkItems) {
        T x[kChunkPerThread];
#pragma unroll
        for (int k = 0; k < kChunkPerThread; ++k) x[k] = source[begin + uint64_t(k) * kThreads + threadIdx.x];
#pragma unroll
        for (int k = 0; k < kChunkPerThread; ++k) acc[k % 4] = combine(acc[k % 4], Accumulate::load(x[k]));
    } else {
        // Every load of the thread issued before the first use (predicated).
        T x[kChunkPerThread];
#pragma unroll
        for (int k = 0; k < kChunkPerThread; ++k) {
            const uint64_t i = begin + uint64_t(k) * kThreads + threadIdx.x;
            if (i < end) x[k] = source[i];
        }
#pragma unroll
        for (int k = 0; k < kChunkPerThread; ++k)
            if (begin + uint64_t(k) * kThreads + threadIdx.x < end) acc[k % 4] = combine(acc[k % 4], Accumulate::load(x[k]));
    }
    const Acc total = combine_block(combine(combine(acc[0], acc[1]), combine(acc[2], acc[3])), combine, warp_values);
    if (threadIdx.x == 0) {
        if (chunks == 1) output[row] = Accumulate::store(total);
        else partials[blockIdx.x] = total;
    }
}

// Each row's chunk results, one block a row: thread t folds chunks t,
// t + kThreads, ... in order, then the threads' values combine in a fixed
// tree (a thread a row took 256 dependent loads for a 16-row shape).
template <typename T, typename Op>
__global__ void __launch_bounds__(kThreads) fold_row_chunks_kernel(const typename Accumulation<T, Op>::Acc *partials,
                                                                   T *output, uint64_t chunks) {
    using Accumulate = Accumulation<T, Op>;
    using Acc = typename Accumulate::Acc;
    using Combine = typename Accumulate::Combine;
    const Combine combine{};
    __shared__ Acc warp_values[kThreads / 32];
    const uint64_t row = blockIdx.x;
    Acc value = Combine::identity();
    for (uint64_t c = threadIdx.x; c < chunks; c += kThreads) value = combine(value, partials[row * chunks + c]);
    const Acc total = combine_block(value, combine, warp_values);
    if (threadIdx.x == 0) output[row] = Accumulate::store(total);
}

// The lanes a short segment gets: the smallest power of two that leaves a
// lane at most four elements of the longest, at most a warp.
uint32_t lanes_for(uint64_t longest) {
    uint32_t group = 1;
    while (group < 32 && uint64_t(group) * 4 < longest) group <<= 1;
    return group;
}

template <typename T, typename Op>
void reduce_short_typed(const DeviceEnv &env, const SegmentLayout &layout, uint64_t longest,
                        const InKernelCheck &in_kernel, const void *input, void *output) {
    const uint32_t group = lanes_for(longest);
    const uint64_t most_blocks = uint64_t(std::max(env.sm_count, 1)) * 64;
    const uint64_t threads = CheckedSize(layout.segments, "the short segments' lanes").times(group).value();
    const uint64_t blocks = std::max<uint64_t>(1, std::min(most_blocks, ceil_div(threads, kThreads)));
    if (env.measuring) return;
    reduce_short_segments_kernel<T, Op><<<uint32_t(blocks), kThreads, 0, env.stream>>>(
        static_cast<const T *>(input), static_cast<T *>(output), SegmentBounds::of(layout), group, in_kernel);
    check_launch("segmented reduce (short segments) launch");
}

template <typename T, typename Op>
void reduce_rows_typed(const DeviceEnv &env, const SegmentLayout &layout, const void *input, void *output) {
    using Acc = typename Accumulation<T, Op>::Acc;
    const uint64_t rows = layout.segments, length = layout.row_length;
    const bool block_a_row = rows <= kFewRowsMax && length >= kBlockRowMinLength;
    if (length < kChunkItems && !block_a_row)
        return reduce_short_typed<T, Op>(env, layout, length, InKernelCheck{}, input, output);
    const T *in = static_cast<const T *>(input);
    T *out = static_cast<T *>(output);
    const uint64_t chunks = ceil_div(length, kChunkItems);
    Acc *partials = nullptr;
    if (chunks > 1) partials = static_cast<Acc *>(env.workspace->reserve(
                        CheckedSize(rows, "the row reduce's partials").times(chunks).times(sizeof(Acc)).value()));
    if (env.measuring) return;
    reduce_row_chunks_kernel<T, Op><<<uint32_t(rows * chunks), kThreads, 0, env.stream>>>(in, out, partials, length,
                                                                                          chunks);
    check_launch("segmented reduce (row chunks) launch");
    if (chunks > 1) {
        fold_row_chunks_kernel<T, Op><<<uint32_t(rows), kThreads, 0, env.stream>>>(partials, out, chunks);
        check_launch("segmented reduce (row chunks fold) launch");
    }
}

template <typename Element, typename Operator>
struct Reduction {
    using T = Element;
    using Op = Operator;
};

// The dtype and op dispatch of both entry points. Integer SUM wraps: one
// instantiation per width, on the unsigned type.
template <typename Run>
void dispatch_reduce(gpuprim_op_t op, gpuprim_dtype_t dtype, const Run &run) {
    dispatch_dtype(dtype, [&](auto zero) {
        using T = decltype(zero);
        using W = wrapping_t<T>;
        switch (op) {
        case GPUPRIM_OP_SUM: return run(Reduction<W, SumOpFor<W>>{});
        case GPUPRIM_OP_MIN: return run(Reduction<T, MinOpFor<T>>{});
        case GPUPRIM_OP_MAX: return run(Reduction<T, MaxOpFor<T>>{});
        }
        fail(GPUPRIM_ERROR_INTERNAL, "segmented reduce: unknown op %d", static_cast<int>(op));
    });
}

}  // namespace

bool reduce_uniform_rows(const DeviceEnv &env, gpuprim_op_t op, gpuprim_dtype_t dtype, const SegmentLayout &layout,
                         const void *input, void *output) {
    const uint64_t rows = layout.segments, length = layout.row_length;
    if (layout.offsets || rows == 0 || length == 0) return false;  // the identity fill of the general driver
    // One block per chunk: the grid must hold every chunk.
    if (length >= kChunkItems && rows * (ceil_div(length, kChunkItems)) > kMaxGridX) return false;
    dispatch_reduce(op, dtype, [&](auto reduction) {
        using R = decltype(reduction);
        reduce_rows_typed<typename R::T, typename R::Op>(env, layout, input, output);
    });
    return true;
}

void reduce_short_segments(const DeviceEnv &env, gpuprim_op_t op, gpuprim_dtype_t dtype, const SegmentLayout &layout,
                           uint64_t longest_bound, const InKernelCheck &in_kernel, const void *input, void *output) {
    if (longest_bound > kShortSegmentsMax)
        fail(GPUPRIM_ERROR_INTERNAL, "segmented reduce: segments of up to %llu elements are not short",
             (unsigned long long)longest_bound);
    dispatch_reduce(op, dtype, [&](auto reduction) {
        using R = decltype(reduction);
        reduce_short_typed<typename R::T, typename R::Op>(env, layout, longest_bound, in_kernel, input, output);
    });
}

}  // namespace gpuprim::cuda
