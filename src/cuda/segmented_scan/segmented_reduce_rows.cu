// SPDX-License-Identifier: Apache-2.0
// Segmented reduce of uniform rows, without the look-back of the general
// kernel (segmented_scan.cu): every row's work is known from its index.
//
// - Rows shorter than kChunkItems: kGroup lanes a row (a power of two up to a
//   warp, from the row length), each lane folding every kGroup-th element into
//   four running values in turn (four loads in flight), then the four and the
//   group's lanes combined in a fixed tree (shuffles).
// - Longer rows: chunks of kChunkItems elements, one block each (16 loads in
//   flight a thread); a row of one chunk is written by its block, otherwise
//   the chunks' results go to the workspace and a second launch folds each
//   row's chunks in order.
// Which path, group size and chunking a call uses depend on the row length
// alone, and every combination is in a fixed order: float sums are bitwise
// the same run to run.
#include "core/portable.h"
#include "cuda/segmented_scan/segmented_reduce_rows.h"

#include "core/checked_size.h"
#include "core/dtype.h"
#include "core/ops.h"
#include "cuda/segmented_scan/agent_segmented_scan.cuh"
#include "cuda/util/check.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>

namespace gpuprim::cuda {
namespace {

using segmented_scan_detail::Accumulation;

constexpr int kThreads = 256;
constexpr int kChunkPerThread = 16;
constexpr uint64_t kChunkItems = uint64_t(kThreads) * kChunkPerThread;  // 4096

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

// Rows of fewer than kChunkItems elements: `group` lanes a row.
template <typename T, typename Op>
__global__ void __launch_bounds__(kThreads) reduce_short_rows_kernel(const T *input, T *output, uint64_t rows,
                                                                     uint64_t length, uint32_t group) {
    using Accumulate = Accumulation<T, Op>;
    using Acc = typename Accumulate::Acc;
    using Combine = typename Accumulate::Combine;
    const Combine combine{};
    const uint64_t stride = uint64_t(gridDim.x) * kThreads;
    const uint32_t lane = threadIdx.x % group;
    // The loop bound is the same for the whole block (shuffles need every lane).
    for (uint64_t base = uint64_t(blockIdx.x) * kThreads; base < rows * group; base += stride) {
        const uint64_t row = (base + threadIdx.x) / group;
        Acc acc[4] = {Combine::identity(), Combine::identity(), Combine::identity(), Combine::identity()};
        if (row < rows) {
            const T *source = input + row * length;
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
        if (row < rows && lane == 0) output[row] = Accumulate::store(value);
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
        for (int k = 0; k < kChunkPerThread; ++k) {
            const uint64_t i = begin + uint64_t(k) * kThreads + threadIdx.x;
            if (i < end) acc[k % 4] = combine(acc[k % 4], Accumulate::load(source[i]));
        }
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

template <typename T, typename Op>
void reduce_rows_typed(const DeviceEnv &env, uint64_t rows, uint64_t length, const void *input, void *output) {
    using Acc = typename Accumulation<T, Op>::Acc;
    const T *in = static_cast<const T *>(input);
    T *out = static_cast<T *>(output);
    const uint64_t most_blocks = uint64_t(std::max(env.sm_count, 1)) * 16;
    if (length < kChunkItems) {
        uint32_t group = 1;
        while (group < 32 && uint64_t(group) * 4 < length) group <<= 1;
        const uint64_t threads = rows * group;
        const uint64_t blocks = std::max<uint64_t>(1, std::min(most_blocks * 4, ceil_div(threads, kThreads)));
        if (env.measuring) return;
        reduce_short_rows_kernel<T, Op><<<uint32_t(blocks), kThreads, 0, env.stream>>>(in, out, rows, length, group);
        check_launch("segmented reduce (rows) launch");
        return;
    }
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

template <typename T, bool = std::is_integral_v<T>>
struct Wrap {
    using type = T;
};
template <typename T>
struct Wrap<T, true> {
    using type = std::make_unsigned_t<T>;
};

}  // namespace

bool reduce_uniform_rows(const DeviceEnv &env, gpuprim_op_t op, gpuprim_dtype_t dtype, uint64_t rows,
                         uint64_t length, const void *input, void *output) {
    if (rows == 0 || length == 0) return false;  // the identity fill of the general driver
    // One block per chunk: the grid must hold every chunk.
    if (length >= kChunkItems && rows * (ceil_div(length, kChunkItems)) > 0x7fffffffull) return false;
    dispatch_dtype(dtype, [&](auto zero) {
        using T = decltype(zero);
        using W = typename Wrap<T>::type;  // wrapping sums: one instantiation per width
        switch (op) {
        case GPUPRIM_OP_SUM: return reduce_rows_typed<W, SumOpFor<W>>(env, rows, length, input, output);
        case GPUPRIM_OP_MIN: return reduce_rows_typed<T, MinOpFor<T>>(env, rows, length, input, output);
        case GPUPRIM_OP_MAX: return reduce_rows_typed<T, MaxOpFor<T>>(env, rows, length, input, output);
        }
        fail(GPUPRIM_ERROR_INTERNAL, "segmented reduce: unknown op %d", static_cast<int>(op));
    });
    return true;
}

}  // namespace gpuprim::cuda
