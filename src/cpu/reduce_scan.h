// SPDX-License-Identifier: Apache-2.0
// The CPU backend's reduce, dot and scan: templates over the element type T
// with a separate accumulator type Acc (Accumulator<T>: T, except that
// 16-bit floats accumulate in float and 8/16-bit integers in 32 bits, each
// output rounded once).
//
// Fixed blocking, so that results are bitwise the same for every thread
// count and engine:
// - Reduce and dot: the input is cut into leaves of kLeaf elements (the last
//   may be shorter). A leaf runs kLanes independent accumulators (lane k
//   takes elements k, k + kLanes, ...: 16 each in a full leaf), then adds
//   the lanes pairwise (k + kLanes/2 into k, halving). Leaves combine in a
//   binary tree: a range of leaves [lo, hi) is split at lo + (hi - lo) / 2.
//   Threads evaluate the subtrees of one fixed depth (a function of the
//   count only) and the same tree combines them. Float SUM error: at most
//   (15 + log2(kLanes) + ceil(log2(leaves))) u sum|x_i| to first order
//   (u = 2^-24 for f32): for 10^7 elements 35 u sum|x_i|, numpy's pairwise
//   sum bound being about the same.
// - Scan: blocks of kScanBlock elements. Each block's total comes from the
//   leaf reduction above; block b starts from carry_b, where carry_0 is the
//   identity (or the scan's initial value, in Acc: Backend::scan) and
//   carry_{b+1} = carry_b op total_b, added up in block order;
//   within a block the running value takes one element at a time. Float SUM
//   error: at most (kScanBlock + number of blocks) u sum|x_j| per output.
// Integer SUM wraps; MIN/MAX are exact, so only float SUM and dot care.
#pragma once

#include "core/portable.h"
#include "core/error.h"
#include "core/ops.h"
#include "cpu/parallel.h"

#include <gpuprim/gpuprim.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace gpuprim {
namespace cpu {

// The type a SUM or dot of T accumulates in, and the conversions: core/ops.h's
// sum accumulator (T itself; 32 bits for 8- and 16-bit integers, float for
// f16/bf16, rounded once per output).
template <typename T>
struct Accumulator {
    using type = sum_accumulator_t<T>;
    static type load(T x) { return to_accumulator(x); }
    static T store(type x) { return from_accumulator<T>(x); }
};

constexpr uint64_t kLanes = 32;
constexpr uint64_t kLeaf = 16 * kLanes;       // 512 elements
constexpr uint64_t kScanBlock = 8 * 1024;     // elements per scan block
// Below these counts a call runs on the calling thread alone.
constexpr uint64_t kParallelReduceMin = 1 << 15;
constexpr uint64_t kParallelScanMin = 1 << 16;

// The SUM the lanes and the tree use: for floats a plain addition (the
// canonical NaN is applied once, to the result: a NaN anywhere stays NaN to
// the end, so this is what SumOp's step-by-step rule gives), for integers
// SumOp's wrapping addition.
template <typename Acc>
struct LaneSum {
    static Acc identity() { return Acc(0); }
    Acc operator()(Acc a, Acc b) const {
        if constexpr (std::is_floating_point_v<Acc>) return a + b;
        else return SumOp<Acc>{}(a, b);
    }
};

// acc + a * b without the NaN canonicalization (applied to the result).
template <typename T>
T multiply_add_raw(T a, T b, T acc) {
    if constexpr (std::is_integral_v<T>) return multiply_add(a, b, acc);
    else return std::fma(a, b, acc);
}

// Element x of T as Acc: Accumulator's conversion where Acc is its type.
template <typename Acc, typename T>
Acc load_as(T x) {
    if constexpr (std::is_same_v<Acc, T>) return x;
    else return Accumulator<T>::load(x);
}
template <typename T, typename Acc>
T store_as(Acc x) {
    if constexpr (std::is_same_v<Acc, T>) return x;
    else return Accumulator<T>::store(x);
}

// Lanes of a leaf: kLanes for floats (the order is part of the result);
// integer operators are associative, so their lane count is free: 8 for
// 8-byte integers, whose vector min/max/multiply the baseline x86-64 ISA
// lacks.
template <typename Acc>
constexpr uint64_t lanes_of() {
    return std::is_integral_v<Acc> && sizeof(Acc) == 8 ? 8 : kLanes;
}

// One leaf of count <= kLeaf elements: element i contributes load(i).
template <typename Acc, typename Op, typename Load>
Acc reduce_leaf(uint64_t begin, uint64_t count, Op op, const Load &load) {
    if constexpr (std::is_integral_v<Acc>) {
        // Associative and exact: one loop the compiler vectorizes as it likes.
        Acc acc = Op::identity();
        for (uint64_t i = 0; i < count; ++i) acc = op(acc, load(begin + i));
        return acc;
    }
    constexpr uint64_t kN = lanes_of<Acc>();
    Acc lanes[kN];
    for (uint64_t k = 0; k < kN; ++k) lanes[k] = Op::identity();
    uint64_t i = 0;
    for (; i + kN <= count; i += kN)
        for (uint64_t k = 0; k < kN; ++k) lanes[k] = op(lanes[k], load(begin + i + k));
    for (uint64_t k = 0; i + k < count; ++k) lanes[k] = op(lanes[k], load(begin + i + k));
    for (uint64_t width = kN / 2; width > 0; width /= 2)
        for (uint64_t k = 0; k < width; ++k) lanes[k] = op(lanes[k], lanes[k + width]);
    return lanes[0];
}

// A leaf of dot: lanes of multiply_add in Acc.
template <typename Acc, typename T>
Acc dot_leaf(const T *a, const T *b, uint64_t count) {
    using A = Accumulator<T>;
    constexpr uint64_t kN = lanes_of<Acc>();
    Acc lanes[kN];
    for (uint64_t k = 0; k < kN; ++k) lanes[k] = Acc(0);
    uint64_t i = 0;
    for (; i + kN <= count; i += kN)
        for (uint64_t k = 0; k < kN; ++k)
            lanes[k] = multiply_add_raw(A::load(a[i + k]), A::load(b[i + k]), lanes[k]);
    for (uint64_t k = 0; i + k < count; ++k)
        lanes[k] = multiply_add_raw(A::load(a[i + k]), A::load(b[i + k]), lanes[k]);
    LaneSum<Acc> op;
    for (uint64_t width = kN / 2; width > 0; width /= 2)
        for (uint64_t k = 0; k < width; ++k) lanes[k] = op(lanes[k], lanes[k + width]);
    return lanes[0];
}

// dot_leaf with the fused multiply-add in hardware: the same bits as
// std::fma (both round once), without a library call per element on a
// build for the baseline x86-64 ISA.
#if defined(__x86_64__) && defined(__GNUC__)
#  define GPUPRIM_CPU_FMA_DISPATCH 1
// The fused multiply-add of T in hardware (fmaf for float: the double form
// would widen).
template <typename T>
__attribute__((target("avx2,fma"))) inline T fma_avx2(T x, T y, T z) {
    if constexpr (std::is_same_v<T, float>) return __builtin_fmaf(x, y, z);
    else return __builtin_fma(x, y, z);
}
template <typename T>
__attribute__((target("avx2,fma"))) T dot_leaf_fma(const T *a, const T *b, uint64_t count) {
    T lanes[kLanes];
    for (uint64_t k = 0; k < kLanes; ++k) lanes[k] = T(0);
    uint64_t i = 0;
    for (; i + kLanes <= count; i += kLanes)
        for (uint64_t k = 0; k < kLanes; ++k) lanes[k] = fma_avx2(a[i + k], b[i + k], lanes[k]);
    for (uint64_t k = 0; i + k < count; ++k) lanes[k] = fma_avx2(a[i + k], b[i + k], lanes[k]);
    for (uint64_t width = kLanes / 2; width > 0; width /= 2)
        for (uint64_t k = 0; k < width; ++k) lanes[k] = lanes[k] + lanes[k + width];
    return lanes[0];
}
// A float SUM leaf on AVX2 (the same lanes and pairwise combine: the same bits).
template <typename T>
__attribute__((target("avx2"))) T sum_leaf_avx2(const T *x, uint64_t count) {
    T lanes[kLanes];
    for (uint64_t k = 0; k < kLanes; ++k) lanes[k] = T(0);
    uint64_t i = 0;
    for (; i + kLanes <= count; i += kLanes)
        for (uint64_t k = 0; k < kLanes; ++k) lanes[k] = lanes[k] + x[i + k];
    for (uint64_t k = 0; i + k < count; ++k) lanes[k] = lanes[k] + x[i + k];
    for (uint64_t width = kLanes / 2; width > 0; width /= 2)
        for (uint64_t k = 0; k < width; ++k) lanes[k] = lanes[k] + lanes[k + width];
    return lanes[0];
}
inline bool cpu_has_fma() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
#endif

// The tree over leaves [lo, hi): leaf(index) gives a leaf's value.
template <typename Acc, typename Op, typename Leaf>
Acc reduce_tree(uint64_t lo, uint64_t hi, Op op, const Leaf &leaf) {
    if (hi - lo == 1) return leaf(lo);
    const uint64_t mid = lo + (hi - lo) / 2;
    return op(reduce_tree<Acc>(lo, mid, op, leaf), reduce_tree<Acc>(mid, hi, op, leaf));
}

// The same tree, its subtrees at depth `depth` (or smaller, where the tree
// ends sooner) taken from `values` in left-to-right order.
template <typename Acc, typename Op>
Acc combine_tree(uint64_t lo, uint64_t hi, int depth, Op op, const Acc *values, size_t &next) {
    if (depth == 0 || hi - lo == 1) return values[next++];
    const uint64_t mid = lo + (hi - lo) / 2;
    Acc left = combine_tree(lo, mid, depth - 1, op, values, next);
    Acc right = combine_tree(mid, hi, depth - 1, op, values, next);
    return op(left, right);
}

template <typename F>
void for_subtrees(uint64_t lo, uint64_t hi, int depth, F &&f) {
    if (depth == 0 || hi - lo == 1) return f(lo, hi);
    const uint64_t mid = lo + (hi - lo) / 2;
    for_subtrees(lo, mid, depth - 1, f);
    for_subtrees(mid, hi, depth - 1, f);
}

// Reduce count elements (load(i) gives element i in Acc) with op over the
// fixed tree; threads share the subtrees. count > 0.
template <typename Acc, typename Op, typename LeafOf>
Acc blocked_reduce(Parallel &parallel, uint64_t count, Op op, const LeafOf &leaf_of) {
    const uint64_t leaves = ceil_div(count, kLeaf);
    auto leaf = [&](uint64_t index) {
        const uint64_t begin = index * kLeaf;
        return leaf_of(begin, count - begin < kLeaf ? count - begin : kLeaf);
    };
    if (parallel.threads() <= 1 || count < kParallelReduceMin)
        return reduce_tree<Acc>(0, leaves, op, leaf);
    // Subtrees of at least ~64 leaves (32K elements), at most 256 of them:
    // the depth depends on the count only.
    constexpr int kMaxDepth = 8;
    int depth = 0;
    while (depth < kMaxDepth && (leaves >> (depth + 1)) >= 64) ++depth;
    uint64_t bounds[2 << kMaxDepth];
    size_t subtrees = 0;
    for_subtrees(0, leaves, depth, [&](uint64_t lo, uint64_t hi) {
        bounds[2 * subtrees] = lo;
        bounds[2 * subtrees + 1] = hi;
        ++subtrees;
    });
    Acc values[1 << kMaxDepth];
    parallel.for_each(subtrees, [&](size_t s) {
        values[s] = reduce_tree<Acc>(bounds[2 * s], bounds[2 * s + 1], op, leaf);
    });
    size_t next = 0;
    return combine_tree<Acc>(0, leaves, depth, op, values, next);
}

template <typename T, typename Op>
T reduce_op(Parallel &parallel, const T *input, uint64_t count, Op op) {
    if (count == 0) return Op::identity();
    return blocked_reduce<T>(parallel, count, op, [&](uint64_t begin, uint64_t n) {
        return reduce_leaf<T>(begin, n, op, [&](uint64_t i) { return input[i]; });
    });
}

// Float MIN/MAX as an unsigned min/max of MinMaxKey's keys (core/ops.h): the
// same result as MinOp/MaxOp bit for bit, without their NaN branches.
template <typename Key>
struct KeyMin {
    static Key identity() { return ~Key(0); }
    Key operator()(Key a, Key b) const { return b < a ? b : a; }
};
template <typename Key>
struct KeyMax {
    static Key identity() { return Key(0); }
    Key operator()(Key a, Key b) const { return a < b ? b : a; }
};

template <typename T, bool kMin>
T reduce_float_min_max(Parallel &parallel, const T *input, uint64_t count) {
    using Keys = MinMaxKey<T, kMin>;
    using Key = typename Keys::Key;
    using KeyOp = std::conditional_t<kMin, KeyMin<Key>, KeyMax<Key>>;
    if (count == 0) return kMin ? MinOp<T>::identity() : MaxOp<T>::identity();
    KeyOp op;
    const Key key = blocked_reduce<Key>(parallel, count, op, [&](uint64_t begin, uint64_t n) {
        return reduce_leaf<Key>(begin, n, op, [&](uint64_t i) { return Keys::key(input[i]); });
    });
    return Keys::value(key);
}

template <typename T>
T reduce_sum(Parallel &parallel, const T *input, uint64_t count) {
    using A = Accumulator<T>;
    using Acc = typename A::type;
    if (count == 0) return A::store(Acc(0));
    LaneSum<Acc> op;
#if defined(GPUPRIM_CPU_FMA_DISPATCH)
    if constexpr (std::is_floating_point_v<T> && std::is_same_v<Acc, T>) {
        if (cpu_has_fma()) {
            Acc total = blocked_reduce<Acc>(parallel, count, op, [&](uint64_t begin, uint64_t n) {
                return sum_leaf_avx2<T>(input + begin, n);
            });
            return canonical_nan_if_nan(A::store(total));
        }
    }
#endif
    Acc total = blocked_reduce<Acc>(parallel, count, op, [&](uint64_t begin, uint64_t n) {
        return reduce_leaf<Acc>(begin, n, op, [&](uint64_t i) { return A::load(input[i]); });
    });
    return canonical_nan_if_nan(A::store(total));
}

template <typename T>
T reduce(Parallel &parallel, gpuprim_op_t op, const T *input, uint64_t count) {
    switch (op) {
    case GPUPRIM_OP_SUM: return reduce_sum(parallel, input, count);
    case GPUPRIM_OP_MIN:
        if constexpr (std::is_floating_point_v<T>)
            return reduce_float_min_max<T, true>(parallel, input, count);
        else return reduce_op(parallel, input, count, MinOp<T>{});
    case GPUPRIM_OP_MAX:
        if constexpr (std::is_floating_point_v<T>)
            return reduce_float_min_max<T, false>(parallel, input, count);
        else return reduce_op(parallel, input, count, MaxOp<T>{});
    }
    fail(GPUPRIM_ERROR_INTERNAL, "reduce: unknown op %d", static_cast<int>(op));
}

template <typename T>
T dot(Parallel &parallel, const T *a, const T *b, uint64_t count) {
    using A = Accumulator<T>;
    using Acc = typename A::type;
    if (count == 0) return A::store(Acc(0));
#if defined(GPUPRIM_CPU_FMA_DISPATCH)
    if constexpr (std::is_floating_point_v<T> && std::is_same_v<Acc, T>) {
        if (cpu_has_fma()) {
            Acc total = blocked_reduce<Acc>(parallel, count, LaneSum<Acc>{},
                                            [&](uint64_t begin, uint64_t n) {
                                                return dot_leaf_fma<T>(a + begin, b + begin, n);
                                            });
            return canonical_nan_if_nan(A::store(total));
        }
    }
#endif
    Acc total = blocked_reduce<Acc>(parallel, count, LaneSum<Acc>{},
                                    [&](uint64_t begin, uint64_t n) {
                                        return dot_leaf<Acc>(a + begin, b + begin, n);
                                    });
    return canonical_nan_if_nan(A::store(total));
}

// One scan block from `carry`. Reads each element before writing its output,
// so output may alias input.
// The scan's block totals: the leaf reduction over one block.
template <typename T, typename Acc, typename Op>
Acc block_total(const T *input, uint64_t count, Op op) {
    const uint64_t leaves = ceil_div(count, kLeaf);
    return reduce_tree<Acc>(0, leaves, op, [&](uint64_t index) {
        const uint64_t begin = index * kLeaf;
        return reduce_leaf<Acc>(begin, count - begin < kLeaf ? count - begin : kLeaf, op,
                                [&](uint64_t i) { return load_as<Acc>(input[i]); });
    });
}

// Outputs [0, count) from `running`, one element at a time. kCanonical: a
// float SUM, whose NaN outputs are made canonical afterwards (a NaN, once in
// the running value, stays to the end, so only a NaN end needs the pass).
template <bool kExclusive, typename T, typename Acc, typename Op>
Acc scan_chain(const T *input, T *output, uint64_t count, Acc running, Op op) {
    for (uint64_t i = 0; i < count; ++i) {
        const Acc x = load_as<Acc>(input[i]);
        if (kExclusive) output[i] = store_as<T>(running);
        running = op(running, x);
        if (!kExclusive) output[i] = store_as<T>(running);
    }
    return running;
}

template <typename T>
void canonicalize_nans(T *output, uint64_t count) {
    for (uint64_t i = 0; i < count; ++i) output[i] = canonical_nan_if_nan(output[i]);
}

// One scan block from `carry`. Reads each element before writing its output,
// so output may alias input.
template <bool kExclusive, typename T, typename Acc, typename Op>
void scan_block(const T *input, T *output, uint64_t count, Acc carry, Op op) {
    constexpr bool kFloatSum = std::is_same_v<Op, LaneSum<Acc>> && std::is_floating_point_v<Acc>;
    const Acc end = scan_chain<kExclusive>(input, output, count, carry, op);
    if constexpr (kFloatSum)
        if (is_nan(end)) canonicalize_nans(output, count);
}

// start: the carry of block 0, the operator's identity or the scan's
// initial value (Backend::scan), which so enters as the first partial total.
template <typename T, typename Acc, typename Op>
void scan_blocks(Parallel &parallel, const T *input, T *output, uint64_t count, bool exclusive,
                 Op op, Acc start) {
    const uint64_t blocks = ceil_div(count, kScanBlock);
    auto block_count = [&](uint64_t b) {
        const uint64_t begin = b * kScanBlock;
        return count - begin < kScanBlock ? count - begin : kScanBlock;
    };
    Acc carry = start;
    if (parallel.threads() <= 1 || count < kParallelScanMin) {
        // The carries are the blocks' totals added in order. Exact operators
        // (integers, MIN/MAX) give the same carry as the running value, so
        // only a float SUM reads each block twice.
        constexpr bool kExact = !std::is_floating_point_v<Acc> || !std::is_same_v<Op, LaneSum<Acc>>;
        if constexpr (kExact) {
            if (exclusive) scan_block<true>(input, output, count, carry, op);
            else scan_block<false>(input, output, count, carry, op);
            return;
        }
        for (uint64_t b = 0; b < blocks; ++b) {
            const uint64_t begin = b * kScanBlock, n = block_count(b);
            Acc total = b + 1 < blocks ? block_total<T, Acc>(input + begin, n, op) : Acc{};
            if (exclusive) scan_block<true>(input + begin, output + begin, n, carry, op);
            else scan_block<false>(input + begin, output + begin, n, carry, op);
            carry = op(carry, total);
        }
        return;
    }
    // Groups of blocks small enough to stay in cache between the totals pass
    // and the scan pass; the values do not depend on the grouping.
    constexpr uint64_t kGroup = 32;
    Acc totals[kGroup], carries[kGroup];
    for (uint64_t first = 0; first < blocks; first += kGroup) {
        const uint64_t in_group = blocks - first < kGroup ? blocks - first : kGroup;
        parallel.for_each(in_group, [&](size_t j) {
            const uint64_t b = first + j;
            totals[j] = b + 1 < blocks
                            ? block_total<T, Acc>(input + b * kScanBlock, block_count(b), op)
                            : Acc{};
        });
        for (uint64_t j = 0; j < in_group; ++j) {
            carries[j] = carry;
            carry = op(carry, totals[j]);
        }
        parallel.for_each(in_group, [&](size_t j) {
            const uint64_t b = first + j;
            if (exclusive)
                scan_block<true>(input + b * kScanBlock, output + b * kScanBlock, block_count(b),
                                 carries[j], op);
            else
                scan_block<false>(input + b * kScanBlock, output + b * kScanBlock,
                                  block_count(b), carries[j], op);
        });
    }
}

// initial: nullptr, or the value the scan starts from (Backend::scan): block
// 0's carry, in the accumulator type for SUM (as if it were one more
// element in front of the input).
template <typename T>
void scan(Parallel &parallel, gpuprim_op_t op, bool exclusive, const T *input, T *output,
          uint64_t count, const T *initial = nullptr) {
    if (count == 0) return;
    using Acc = typename Accumulator<T>::type;
    switch (op) {
    case GPUPRIM_OP_SUM:
        return scan_blocks<T, Acc>(parallel, input, output, count, exclusive, LaneSum<Acc>{},
                                   initial ? load_as<Acc>(*initial) : LaneSum<Acc>::identity());
    case GPUPRIM_OP_MIN:
        return scan_blocks<T, T>(parallel, input, output, count, exclusive, MinOp<T>{},
                                 initial ? *initial : MinOp<T>::identity());
    case GPUPRIM_OP_MAX:
        return scan_blocks<T, T>(parallel, input, output, count, exclusive, MaxOp<T>{},
                                 initial ? *initial : MaxOp<T>::identity());
    }
    fail(GPUPRIM_ERROR_INTERNAL, "scan: unknown op %d", static_cast<int>(op));
}

}  // namespace cpu
}  // namespace gpuprim
