// SPDX-License-Identifier: Apache-2.0
// The reduce kernel: per-thread folds, the block step and the cross-block
// step (reduce.cu has the design; dispatch_reduce.cuh launches it).
#pragma once

#include "core/dtype.h"
#include "core/ops.h"
#include "cuda/block/block_reduce.cuh"
#include "cuda/reduce/reduce_policy.cuh"

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace gpuprim::cuda {
namespace reduce_detail {

constexpr int kVectorBytes = 16;
// The vector body starts on a cache-line boundary: a warp's 512-byte load then
// touches 4 lines, not 5 (misaligned wrapped pointers lost 3-13% without it).
constexpr int kBodyAlignBytes = 128;

template <typename T>
constexpr int kVectorElements = kVectorBytes / static_cast<int>(sizeof(T));

// What one load brings in: a 16-byte vector or a single element.
template <typename T, int kElements>
struct alignas(sizeof(T) * kElements) Unit {
    T elements[kElements];
};

template <typename T>
__device__ __forceinline__ T load_element(const T *p) {
    return bit_cast<T>(__ldg(reinterpret_cast<const bits_t<T> *>(p)));
}

template <typename T, int kElements>
__device__ __forceinline__ Unit<T, kElements> load_unit(const T *base, uint64_t index) {
    if constexpr (kElements == 1) {
        return Unit<T, 1>{{load_element(base + index)}};
    } else {
        static_assert(sizeof(Unit<T, kElements>) == kVectorBytes, "vector unit is 16 bytes");
        return bit_cast<Unit<T, kElements>>(__ldg(reinterpret_cast<const uint4 *>(base) + index));
    }
}

// Float SUM and DOT inside the kernel: plain adds and fmas. A NaN stays NaN
// through every later add, so one canonical_nan_if_nan on the final value
// (CrossThread::decode) gives SumOp's result without a compare and a select
// after every element, which lengthened the dependent chain of each thread
// and of every tree step.
template <typename T>
struct PlainSum {
    __device__ static T identity() { return T(0); }
    __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};

template <typename T, typename Op>
using KernelOp = std::conditional_t<std::is_floating_point_v<T> && std::is_same_v<Op, SumOp<T>>, PlainSum<T>, Op>;

// A thread's running value (Acc) and how elements enter it and the result
// leaves it: the element itself with the plain operators; a 32-bit (or f32)
// value with the narrow dtypes' wide operators (core/ops.h WideSumOp,
// WideMinMaxOp), whose Combine is the operator on that value.
template <typename T, typename Op, typename = void>
struct Accumulation {
    using Acc = T;
    using Combine = Op;
    __device__ __forceinline__ static Acc load(T x) { return x; }
    __device__ __forceinline__ static T store(Acc a) { return canonical_nan_if_nan(a); }
};
template <typename T, typename Op>
struct Accumulation<T, Op, std::void_t<typename Op::Accumulator>> {
    using Acc = typename Op::Accumulator;
    using Combine = typename Op::Combine;
    __device__ __forceinline__ static Acc load(T x) { return Op::load(x); }
    __device__ __forceinline__ static T store(Acc a) { return Op::store(a); }
};

// Folds one element (reduce) or one pair (dot) into a thread's running value;
// Combine then merges running values across threads and blocks. (A dot's Op
// is its SUM operator.)
template <typename T, typename Op, bool kDot>
struct Fold {
    using Accumulate = Accumulation<T, Op>;
    using Acc = typename Accumulate::Acc;
    using Combine = KernelOp<Acc, typename Accumulate::Combine>;
    __device__ __forceinline__ Acc operator()(Acc acc, T a, T b) const {
        if constexpr (kDot && std::is_floating_point_v<Acc>)
            return fma(Accumulate::load(a), Accumulate::load(b), acc);
        else if constexpr (kDot) return multiply_add(Accumulate::load(a), Accumulate::load(b), acc);
        else return Combine()(acc, Accumulate::load(a));
    }
};

template <typename T, typename Op>
constexpr bool kFastFloatMinMax =
    std::is_floating_point_v<T> && (std::is_same_v<Op, MinOp<T>> || std::is_same_v<Op, MaxOp<T>>);

// 16-byte loads per thread and input each tile (reduce_tuning.cuh).
template <typename T, typename Op, bool kDot>
constexpr int kVectorsPerThread =
    kDot || kFastFloatMinMax<T, Op> ? kReduceVectorsPerThreadHeavy : kReduceVectorsPerThread;
constexpr int kSingleBlockVectorsPerThread = kReduceVectorsPerThreadHeavy;

// Folds units [0, units) of a (and b) into acc: tiles of kReduceBlockThreads *
// kPerThread units, dealt to blocks round robin; within a tile thread t takes
// units t, t + kReduceBlockThreads, ... so each warp load is contiguous. (One
// contiguous share per block instead measured 1-3% slower on H100 at 2^24 and
// 2^28 elements: the whole grid sweeping one region keeps DRAM pages open.)
// fold(acc, a_element, b_element) returns the new running value (of any type).
template <typename T, bool kDot, int kVectors, int kElements, typename Acc, typename FoldFn>
__device__ __forceinline__ Acc fold_units(const T *a, const T *b, uint64_t units, Acc acc, FoldFn fold) {
    // The same bytes in flight whether units are vectors or elements.
    constexpr int kPerThread = kVectors * kVectorElements<T> / kElements;
    using U = Unit<T, kElements>;
    const uint64_t tile_units = uint64_t(kReduceBlockThreads) * kPerThread;
    const uint64_t stride = uint64_t(gridDim.x) * tile_units;
    // The block size is a compile-time constant so the loads of a tile are
    // one address plus constant offsets (fewer registers: ptxas then keeps
    // them all in flight), and the loop needs no 64-bit division.
    uint64_t tile_start = uint64_t(blockIdx.x) * tile_units;
    for (; tile_start + tile_units <= units; tile_start += stride) {
        const uint64_t first = tile_start + threadIdx.x;
        U ua[kPerThread], ub[kPerThread];
        // All loads first, then the arithmetic: kPerThread requests in flight.
#pragma unroll
        for (int k = 0; k < kPerThread; ++k) {
            ua[k] = load_unit<T, kElements>(a, first + uint64_t(k) * kReduceBlockThreads);
            if constexpr (kDot) ub[k] = load_unit<T, kElements>(b, first + uint64_t(k) * kReduceBlockThreads);
        }
#pragma unroll
        for (int k = 0; k < kPerThread; ++k)
#pragma unroll
            for (int e = 0; e < kElements; ++e)
                acc = fold(acc, ua[k].elements[e], kDot ? ub[k].elements[e] : T());
    }

    // The partial last tile belongs to the block whose turn comes next: the
    // one whose next tile starts inside the input.
    if (tile_start < units) {
        // Fewer than a tile's units are left: 32-bit offsets within the tile,
        // and a slot is loaded (and folded) only if it lies before the end.
        static_assert(uint64_t(kReduceBlockThreads) * kPerThread < (uint64_t(1) << 32), "tile offsets fit 32 bits");
        const uint32_t left = static_cast<uint32_t>(units - tile_start);
        const T *a_tile = a + tile_start * kElements, *b_tile = kDot ? b + tile_start * kElements : nullptr;
        U ua[kPerThread], ub[kPerThread];
#pragma unroll
        for (int k = 0; k < kPerThread; ++k) {
            const uint32_t offset = uint32_t(k) * kReduceBlockThreads + threadIdx.x;
            if (offset < left) {
                ua[k] = load_unit<T, kElements>(a_tile, offset);
                if constexpr (kDot) ub[k] = load_unit<T, kElements>(b_tile, offset);
            }
        }
#pragma unroll
        for (int k = 0; k < kPerThread; ++k) {
            if (uint32_t(k) * kReduceBlockThreads + threadIdx.x < left) {
#pragma unroll
                for (int e = 0; e < kElements; ++e)
                    acc = fold(acc, ua[k].elements[e], kDot ? ub[k].elements[e] : T());
            }
        }
    }
    return acc;
}

// A thread's share of a float MIN/MAX, folded with one min/max instruction
// per element instead of the API's rule (NaN with the largest bits wins, -0
// before +0), which takes several: the hardware min/max skips NaNs and may
// return either zero, so the fold also notes whether it saw a NaN (then the
// share is folded again by the rule) and whether it saw the zero that the
// rule would pick (-0 for MIN, +0 for MAX). Same result as the rule.
template <typename T>
struct FastMinMaxShare {
    T value;
    bool saw_nan;
    bool saw_preferred_zero;
};

template <typename T, typename Op, bool kDot, int kElements, int kVectors>
__device__ __forceinline__ typename Fold<T, Op, kDot>::Acc fold_share(const T *a, const T *b, uint64_t units) {
    const Fold<T, Op, kDot> fold;
    const typename Fold<T, Op, kDot>::Acc identity = Fold<T, Op, kDot>::Combine::identity();
    if constexpr (!kDot && kFastFloatMinMax<T, Op>) {
        constexpr bool kMin = std::is_same_v<Op, MinOp<T>>;
        using B = bits_t<T>;
        constexpr B kSign = B(1) << (sizeof(T) * 8 - 1);
        constexpr B kPreferredZero = kMin ? kSign : B(0);
        constexpr B kOtherZero = kMin ? B(0) : kSign;
        FastMinMaxShare<T> share{Op::identity(), false, false};
        share = fold_units<T, kDot, kVectors, kElements>(a, b, units, share, [](FastMinMaxShare<T> s, T x, T) {
            s.value = kMin ? fmin(s.value, x) : fmax(s.value, x);
            s.saw_nan |= x != x;
            s.saw_preferred_zero |= bit_cast<B>(x) == kPreferredZero;
            return s;
        });
        if (share.saw_nan) return fold_units<T, kDot, kVectors, kElements>(a, b, units, identity, fold);
        if (share.value == T(0))
            share.value = bit_cast<T>(share.saw_preferred_zero ? kPreferredZero : kOtherZero);
        return share.value;
    } else {
        return fold_units<T, kDot, kVectors, kElements>(a, b, units, identity, fold);
    }
}

// What threads, warps and blocks combine once each thread has folded its
// share: the running value itself, or for float MIN/MAX its order key
// (MinMaxKey), whose integer min/max is one instruction (a warp-wide
// redux.sync for 4-byte keys) where the exact rule takes several compares
// and branches at every step of the trees.
template <typename T, typename Op, bool kDot, bool = !kDot && kFastFloatMinMax<T, Op>>
struct CrossThread {
    using Value = typename Fold<T, Op, kDot>::Acc;
    using Combine = typename Fold<T, Op, kDot>::Combine;
    static __device__ __forceinline__ Value encode(Value x) { return x; }
    // The one canonical NaN of a float SUM/DOT (see PlainSum), narrowed to T.
    static __device__ __forceinline__ T decode(Value v) { return Fold<T, Op, kDot>::Accumulate::store(v); }
};

template <typename T, typename Op, bool kDot>
struct CrossThread<T, Op, kDot, true> {
    using Keys = MinMaxKey<T, std::is_same_v<Op, MinOp<T>>>;
    using Value = typename Keys::Key;
    using Combine = std::conditional_t<std::is_same_v<Op, MinOp<T>>, MinOp<Value>, MaxOp<Value>>;
    static __device__ __forceinline__ Value encode(T x) { return Keys::key(x); }
    static __device__ __forceinline__ T decode(Value v) { return Keys::value(v); }
};

// b is used only when kDot. partials and ticket are unused when gridDim.x is 1.
template <typename T, typename Op, bool kDot>
__global__ void __launch_bounds__(kReduceBlockThreads, kReduceMinBlocksPerSm)
    reduce_kernel(const T *__restrict__ a, const T *__restrict__ b, uint64_t count,
                  typename CrossThread<T, Op, kDot>::Value *__restrict__ partials, uint32_t *ticket,
                  T *result) {
    using Folder = Fold<T, Op, kDot>;
    using Cross = CrossThread<T, Op, kDot>;
    using V = typename Cross::Value;
    using Block = BlockReduce<V, kReduceBlockThreads>;
    __shared__ typename Block::TempStorage storage;
    __shared__ bool is_last_block;

    const Folder fold;
    typename Folder::Acc share, edges = Folder::Combine::identity();
    // A one-block call loads 4 vectors per thread and tile whatever the
    // kernel: with 8, inputs of one 4-vector tile (4096 4-byte elements) went
    // through the guarded partial-tile loads, 0.05-0.13 us slower.
    constexpr int kVectors = kVectorsPerThread<T, Op, kDot>;
    auto fold_any_grid = [&](auto elements_tag, const T *a_from, const T *b_from, uint64_t units) {
        constexpr int kElements = decltype(elements_tag)::value;
        if constexpr (kVectors != kSingleBlockVectorsPerThread) {
            if (gridDim.x == 1)
                return fold_share<T, Op, kDot, kElements, kSingleBlockVectorsPerThread>(a_from, b_from, units);
        }
        return fold_share<T, Op, kDot, kElements, kVectors>(a_from, b_from, units);
    };
    constexpr unsigned kVec = kVectorElements<T>;
    bool vectorizable = true;
    if constexpr (kDot)
        vectorizable = reinterpret_cast<uintptr_t>(a) % kVectorBytes ==
                       reinterpret_cast<uintptr_t>(b) % kVectorBytes;

    if (vectorizable) {
        const unsigned misalign = reinterpret_cast<uintptr_t>(a) % kBodyAlignBytes;
        const uint64_t head =
            min(count, uint64_t((kBodyAlignBytes - misalign) % kBodyAlignBytes / sizeof(T)));
        const uint64_t vectors = (count - head) / kVec;
        const uint64_t tail_start = head + vectors * kVec;
        share = fold_any_grid(std::integral_constant<int, kVec>{}, a + head, kDot ? b + head : nullptr, vectors);
        // Head (< 32 elements) and tail (< kVec) go to block 0, after its
        // tiles, so the tile loads are the first thing every block issues.
        // (Loading them before the tiles and folding them after kept four
        // values live through the loop: the f64 dot then issued its tile
        // loads two at a time and lost 1% at 2^26-2^30.)
        if (blockIdx.x == 0) {
            const uint64_t tail_index = tail_start + threadIdx.x;
            if (threadIdx.x < head)
                edges = fold(edges, load_element(a + threadIdx.x), kDot ? load_element(b + threadIdx.x) : T());
            if (tail_index < count)
                edges = fold(edges, load_element(a + tail_index), kDot ? load_element(b + tail_index) : T());
        }
    } else {
        share = fold_any_grid(std::integral_constant<int, 1>{}, a, b, count);
    }

    using Combine = typename Cross::Combine;
    V value = Combine()(Cross::encode(share), Cross::encode(edges));
    value = Block::reduce(value, Combine(), storage);
    if (gridDim.x == 1) {
        if (threadIdx.x == 0) *result = Cross::decode(value);
        return;
    }

    if (threadIdx.x == 0) {
        partials[blockIdx.x] = value;
        __threadfence();  // the total must be visible before the ticket is
        const uint32_t taken = atomicAdd(ticket, 1u);
        is_last_block = taken == gridDim.x - 1;
        if (is_last_block) {
            *ticket = 0;      // every block has taken its ticket: leave it zero
            __threadfence();  // read the other totals only after seeing the ticket
        }
    }
    __syncthreads();  // also ends the first use of storage
    if (!is_last_block) return;

    // Fixed order: thread t folds totals t, t + kReduceBlockThreads, ..., then the block tree.
    V total = Combine::identity();
    for (uint32_t i = threadIdx.x; i < gridDim.x; i += kReduceBlockThreads)
        total = Combine()(total, bit_cast<V>(__ldcg(reinterpret_cast<const bits_t<V> *>(partials + i))));
    total = Block::reduce(total, Combine(), storage);
    if (threadIdx.x == 0) *result = Cross::decode(total);
}

// Inputs of at most single_block_max_bytes (all inputs together) run as one block.

}  // namespace reduce_detail
}  // namespace gpuprim::cuda
