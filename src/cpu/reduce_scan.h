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
//
// Exact operators (integer SUM, MIN, MAX and dot; float and 16-bit float
// MIN and MAX) give one answer however they associate, so their blocking is
// free and chosen for speed:
// - reduce and dot: up to kExactPieces contiguous ranges, each folded in one
//   loop the compiler vectorizes (float MIN/MAX as an unsigned min and max
//   of the sign-flipped bits, MinMaxKey's NaN rule applied once at the end:
//   reduce_float_min_max);
// - scan: one pass on one thread; on several, tiles of kExactScanTile
//   elements. Integer SUM scans of 4- and 8-byte elements take 16 bytes at
//   a time (SSE2 prefix sums), and outputs past kStreamOutputBytes are
//   written with streaming stores.
// Threads scan in tiles taken in order (a float SUM's tile: whole blocks):
// a tile adds up its blocks' totals (reading them into cache), waits for the
// carry out of the tile before it, passes its own on, then scans its blocks
// from cache. The carries are still added in block order.
//
// SIMD: the library is built for baseline x86-64; the float SUM / dot leaves
// and the exact folds also exist compiled for AVX2 (and FMA), chosen at run
// time (GCC/Clang target attributes). The AVX2 leaves keep the kLanes lanes
// (in vector registers), the same fused multiply-adds and the same pairwise
// combine, so the bits do not depend on the CPU either.
#pragma once

#include "core/portable.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/ops.h"
#include "cpu/parallel.h"

#include <gpuprim/gpuprim.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <thread>
#include <type_traits>

#if defined(__x86_64__) || defined(__SSE2__)
#  include <immintrin.h>
#endif

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

// One leaf of count <= kLeaf elements of a float SUM (element i
// contributes load(i)): kLanes lanes, then the pairwise combine.
template <typename Acc, typename Op, typename Load>
Acc reduce_leaf(uint64_t begin, uint64_t count, Op op, const Load &load) {
    static_assert(std::is_floating_point_v<Acc>, "exact operators fold (fold_dispatch)");
    Acc lanes[kLanes];
    for (uint64_t k = 0; k < kLanes; ++k) lanes[k] = Op::identity();
    uint64_t i = 0;
    for (; i + kLanes <= count; i += kLanes)
        for (uint64_t k = 0; k < kLanes; ++k) lanes[k] = op(lanes[k], load(begin + i + k));
    for (uint64_t k = 0; i + k < count; ++k) lanes[k] = op(lanes[k], load(begin + i + k));
    for (uint64_t width = kLanes / 2; width > 0; width /= 2)
        for (uint64_t k = 0; k < width; ++k) lanes[k] = op(lanes[k], lanes[k + width]);
    return lanes[0];
}

// A leaf of a float dot: lanes of fused multiply-adds in Acc.
template <typename Acc, typename T>
Acc dot_leaf(const T *a, const T *b, uint64_t count) {
    static_assert(std::is_floating_point_v<Acc>, "integer dots fold (fold_dispatch)");
    using A = Accumulator<T>;
    Acc lanes[kLanes];
    for (uint64_t k = 0; k < kLanes; ++k) lanes[k] = Acc(0);
    uint64_t i = 0;
    for (; i + kLanes <= count; i += kLanes)
        for (uint64_t k = 0; k < kLanes; ++k) lanes[k] = std::fma(A::load(a[i + k]), A::load(b[i + k]), lanes[k]);
    for (uint64_t k = 0; i + k < count; ++k) lanes[k] = std::fma(A::load(a[i + k]), A::load(b[i + k]), lanes[k]);
    for (uint64_t width = kLanes / 2; width > 0; width /= 2)
        for (uint64_t k = 0; k < width; ++k) lanes[k] = lanes[k] + lanes[k + width];
    return lanes[0];
}

// The float SUM and dot leaves for AVX2 (and FMA): the kLanes lanes held in
// vector registers (lane k in element k % W of vector k / W, W elements a
// vector), the same additions (and fused multiply-adds, rounded once like
// std::fma) lane by lane, and the same pairwise combine (k + kLanes/2 into
// k, halving), so the same bits as reduce_leaf / dot_leaf.
#if defined(__x86_64__) && defined(__GNUC__)
#  define GPUPRIM_CPU_FMA_DISPATCH 1
// leaves [lo, hi) of sum(a) (b null) or dot(a, b), float.
template <bool kDot>
__attribute__((target("avx2,fma"))) void float_leaves_avx2(const float *a, const float *b, uint64_t count,
                                                           uint64_t lo, uint64_t hi, float *out) {
    static_assert(kLanes == 32, "4 vectors of 8 lanes");
    for (uint64_t j = lo; j < hi; ++j) {
        const uint64_t begin = j * kLeaf, n = count - begin < kLeaf ? count - begin : kLeaf;
        const float *x = a + begin, *y = kDot ? b + begin : nullptr;
        __m256 v0 = _mm256_setzero_ps(), v1 = v0, v2 = v0, v3 = v0;
        uint64_t i = 0;
        for (; i + kLanes <= n; i += kLanes) {
            if constexpr (kDot) {
                v0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), v0);
                v1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8), _mm256_loadu_ps(y + i + 8), v1);
                v2 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 16), _mm256_loadu_ps(y + i + 16), v2);
                v3 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 24), _mm256_loadu_ps(y + i + 24), v3);
            } else {
                v0 = _mm256_add_ps(v0, _mm256_loadu_ps(x + i));
                v1 = _mm256_add_ps(v1, _mm256_loadu_ps(x + i + 8));
                v2 = _mm256_add_ps(v2, _mm256_loadu_ps(x + i + 16));
                v3 = _mm256_add_ps(v3, _mm256_loadu_ps(x + i + 24));
            }
        }
        if (i < n) {  // the last, partial round: lanes 0 .. n - i - 1
            alignas(32) float lanes[kLanes];
            _mm256_store_ps(lanes, v0);
            _mm256_store_ps(lanes + 8, v1);
            _mm256_store_ps(lanes + 16, v2);
            _mm256_store_ps(lanes + 24, v3);
            for (uint64_t k = 0; i + k < n; ++k)
                lanes[k] = kDot ? __builtin_fmaf(x[i + k], y[i + k], lanes[k]) : lanes[k] + x[i + k];
            v0 = _mm256_load_ps(lanes);
            v1 = _mm256_load_ps(lanes + 8);
            v2 = _mm256_load_ps(lanes + 16);
            v3 = _mm256_load_ps(lanes + 24);
        }
        v0 = _mm256_add_ps(v0, v2);  // width 16
        v1 = _mm256_add_ps(v1, v3);
        v0 = _mm256_add_ps(v0, v1);  // width 8
        __m128 h = _mm_add_ps(_mm256_castps256_ps128(v0), _mm256_extractf128_ps(v0, 1));  // 4
        h = _mm_add_ps(h, _mm_movehl_ps(h, h));                                          // 2
        h = _mm_add_ss(h, _mm_shuffle_ps(h, h, 1));                                      // 1
        out[j - lo] = _mm_cvtss_f32(h);
    }
}
// The same for double: 8 vectors of 4 lanes.
template <bool kDot>
__attribute__((target("avx2,fma"))) void float_leaves_avx2(const double *a, const double *b, uint64_t count,
                                                           uint64_t lo, uint64_t hi, double *out) {
    static_assert(kLanes == 32, "8 vectors of 4 lanes");
    for (uint64_t j = lo; j < hi; ++j) {
        const uint64_t begin = j * kLeaf, n = count - begin < kLeaf ? count - begin : kLeaf;
        const double *x = a + begin, *y = kDot ? b + begin : nullptr;
        __m256d v[8];
        for (int q = 0; q < 8; ++q) v[q] = _mm256_setzero_pd();
        uint64_t i = 0;
        for (; i + kLanes <= n; i += kLanes) {
            for (int q = 0; q < 8; ++q) {
                if constexpr (kDot)
                    v[q] = _mm256_fmadd_pd(_mm256_loadu_pd(x + i + 4 * q), _mm256_loadu_pd(y + i + 4 * q), v[q]);
                else
                    v[q] = _mm256_add_pd(v[q], _mm256_loadu_pd(x + i + 4 * q));
            }
        }
        if (i < n) {
            alignas(32) double lanes[kLanes];
            for (int q = 0; q < 8; ++q) _mm256_store_pd(lanes + 4 * q, v[q]);
            for (uint64_t k = 0; i + k < n; ++k)
                lanes[k] = kDot ? __builtin_fma(x[i + k], y[i + k], lanes[k]) : lanes[k] + x[i + k];
            for (int q = 0; q < 8; ++q) v[q] = _mm256_load_pd(lanes + 4 * q);
        }
        for (int q = 0; q < 4; ++q) v[q] = _mm256_add_pd(v[q], v[q + 4]);  // width 16
        for (int q = 0; q < 2; ++q) v[q] = _mm256_add_pd(v[q], v[q + 2]);  // width 8
        v[0] = _mm256_add_pd(v[0], v[1]);                                  // width 4
        __m128d h = _mm_add_pd(_mm256_castpd256_pd128(v[0]), _mm256_extractf128_pd(v[0], 1));  // 2
        h = _mm_add_sd(h, _mm_unpackhi_pd(h, h));                                              // 1
        out[j - lo] = _mm_cvtsd_f64(h);
    }
}
inline bool cpu_has_fma() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
#  define GPUPRIM_CPU_AVX2 __attribute__((target("avx2")))
inline bool cpu_has_avx2() { return __builtin_cpu_supports("avx2"); }
#endif

// Leaf `index` of count elements: its first element and its length.
inline uint64_t leaf_begin(uint64_t index) { return index * kLeaf; }
inline uint64_t leaf_length(uint64_t index, uint64_t count) {
    return count - index * kLeaf < kLeaf ? count - index * kLeaf : kLeaf;
}

// Leaves are evaluated in batches: leaves(lo, hi, out) writes the values of
// leaves [lo, hi) (at most kLeafBatch of them) to out, one call looping
// over consecutive leaves (one call a leaf, through the tree's recursion,
// measured twice as slow on 10^7 f32).
constexpr uint64_t kLeafBatch = 64;

// The float SUM leaves [lo, hi) of x[0, count): the AVX2 loop where the CPU
// has it (the same bits).
template <typename Acc, typename T>
void sum_leaves_portable(const T *x, uint64_t count, uint64_t lo, uint64_t hi, Acc *out) {
    for (uint64_t j = lo; j < hi; ++j)
        out[j - lo] = reduce_leaf<Acc>(leaf_begin(j), leaf_length(j, count), LaneSum<Acc>{},
                                       [&](uint64_t i) { return load_as<Acc>(x[i]); });
}
template <typename Acc, typename T>
void sum_leaves(const T *x, uint64_t count, uint64_t lo, uint64_t hi, Acc *out) {
#if defined(GPUPRIM_CPU_FMA_DISPATCH)
    if constexpr (std::is_floating_point_v<T> && std::is_same_v<Acc, T>)
        if (cpu_has_fma()) return float_leaves_avx2<false>(x, static_cast<const T *>(nullptr), count, lo, hi, out);
#endif
    sum_leaves_portable<Acc>(x, count, lo, hi, out);
}

// Exact operators: acc op load(0) op ... op load(n - 1), any association
// (integer SUM wraps, MIN/MAX pick, so every one gives the same bits): in
// kFoldLanes independent lanes, a loop the compiler vectorizes into several
// independent vectors.
constexpr uint64_t kFoldLanes = 8;
// The bodies are inlined into each ISA's copy of the loop.
#define GPUPRIM_CPU_BODY GPUPRIM_ALWAYS_INLINE
template <typename Acc, typename Op, typename Load>
GPUPRIM_CPU_BODY Acc fold_body(uint64_t n, Acc acc, Op op, const Load &load) {
    Acc lanes[kFoldLanes];
    for (uint64_t k = 0; k < kFoldLanes; ++k) lanes[k] = Op::identity();
    uint64_t i = 0;
    for (; i + kFoldLanes <= n; i += kFoldLanes)
        for (uint64_t k = 0; k < kFoldLanes; ++k) lanes[k] = op(lanes[k], load(i + k));
    for (; i < n; ++i) acc = op(acc, load(i));
    for (uint64_t k = 0; k < kFoldLanes; ++k) acc = op(acc, lanes[k]);
    return acc;
}
template <typename Acc, typename Op, typename Load>
Acc fold(uint64_t n, Acc acc, Op op, const Load &load) {
    return fold_body(n, acc, op, load);
}
#if defined(GPUPRIM_CPU_FMA_DISPATCH)
template <typename Acc, typename Op, typename Load>
GPUPRIM_CPU_AVX2 Acc fold_avx2(uint64_t n, Acc acc, Op op, const Load &load) {
    return fold_body(n, acc, op, load);
}
#endif
template <typename Acc, typename Op, typename Load>
Acc fold_dispatch(uint64_t n, Acc acc, Op op, const Load &load) {
#if defined(GPUPRIM_CPU_FMA_DISPATCH)
    if (cpu_has_avx2()) return fold_avx2(n, acc, op, load);
#endif
    return fold(n, acc, op, load);
}

// An exact reduction of count elements on the context's threads: range(begin,
// n) folds elements [begin, begin + n) (the identity when n is 0), and the
// ranges' values combine with op. Any cut gives the same bits.
constexpr uint64_t kExactPieces = 64;        // at most, for every thread count
constexpr uint64_t kExactMinPiece = 1 << 14;  // elements
template <typename Acc, typename Op, typename Range>
Acc exact_reduce(Parallel &parallel, uint64_t count, Op op, const Range &range) {
    if (parallel.threads() <= 1 || count < kParallelReduceMin) return range(0, count);
    const uint64_t pieces = std::min(kExactPieces, ceil_div(count, kExactMinPiece));
    const uint64_t size = ceil_div(count, pieces);
    Acc values[kExactPieces];
    parallel.for_each(pieces, [&](size_t p) {
        const uint64_t begin = std::min(count, p * size);
        values[p] = range(begin, std::min(size, count - begin));
    });
    Acc acc = values[0];
    for (uint64_t p = 1; p < pieces; ++p) acc = op(acc, values[p]);
    return acc;
}

// Float MIN/MAX through the sign-flip order of MinMaxKey (core/ops.h): o =
// ordered(bits) puts negative NaNs lowest (larger bits lower), then -inf ..
// -0 +0 .. +inf, then positive NaNs (larger bits higher). MinMaxKey's MIN
// keys rank negative NaNs first, then positive NaNs, then the rest; its MAX
// keys rank negative NaNs last. So from the least and greatest o of the
// input: MIN is the least o if that is a negative NaN, else the greatest o
// if that is a positive NaN, else the least o; MAX is the least o if that is
// a negative NaN, else the greatest o. Exactly MinOp / MaxOp's pick.
template <typename Key>
struct OrderedBounds {
    Key low, high;
};
template <typename Key>
struct OrderedBoundsOp {
    OrderedBounds<Key> operator()(OrderedBounds<Key> a, OrderedBounds<Key> b) const {
        return {b.low < a.low ? b.low : a.low, a.high < b.high ? b.high : a.high};
    }
};
// The least and greatest o of x[0, n), folded into b. Kept as o ^ sign
// (bits ^ (sign-fill without the sign bit)), whose signed order is o's
// unsigned order: AVX2 has signed 32-bit min/max and a one-instruction
// signed 64-bit compare.
template <typename T>
OrderedBounds<bits_t<T>> ordered_fold(const T *x, uint64_t n, OrderedBounds<bits_t<T>> b) {
    using Key = bits_t<T>;
    using Signed = std::make_signed_t<Key>;
    constexpr Key kSign = ElementTraits<T>::kSignBit;
    Signed low = Signed(b.low ^ kSign), high = Signed(b.high ^ kSign);
    for (uint64_t i = 0; i < n; ++i) {
        Key bits;
        std::memcpy(&bits, x + i, sizeof bits);
        const Signed v = Signed(bits ^ (Key(Signed(bits) >> (sizeof(Key) * 8 - 1)) & Key(~kSign)));
        low = v < low ? v : low;
        high = high < v ? v : high;
    }
    return {Key(Key(low) ^ kSign), Key(Key(high) ^ kSign)};
}
#if defined(GPUPRIM_CPU_FMA_DISPATCH)
// Two vectors of lanes for each bound, so no compare waits on the one before.
GPUPRIM_CPU_AVX2 inline OrderedBounds<uint32_t> ordered_fold_avx2(const float *x, uint64_t n,
                                                                  OrderedBounds<uint32_t> b) {
    const __m256i keep = _mm256_set1_epi32(0x7FFFFFFF);
    __m256i low0 = _mm256_set1_epi32(int(b.low ^ 0x80000000u)), low1 = low0;
    __m256i high0 = _mm256_set1_epi32(int(b.high ^ 0x80000000u)), high1 = high0;
    uint64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(x + i));
        __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(x + i + 8));
        v0 = _mm256_xor_si256(v0, _mm256_and_si256(_mm256_srai_epi32(v0, 31), keep));
        v1 = _mm256_xor_si256(v1, _mm256_and_si256(_mm256_srai_epi32(v1, 31), keep));
        low0 = _mm256_min_epi32(low0, v0);
        low1 = _mm256_min_epi32(low1, v1);
        high0 = _mm256_max_epi32(high0, v0);
        high1 = _mm256_max_epi32(high1, v1);
    }
    alignas(32) int32_t lows[8], highs[8];
    _mm256_store_si256(reinterpret_cast<__m256i *>(lows), _mm256_min_epi32(low0, low1));
    _mm256_store_si256(reinterpret_cast<__m256i *>(highs), _mm256_max_epi32(high0, high1));
    int32_t low = lows[0], high = highs[0];
    for (int k = 1; k < 8; ++k) {
        low = lows[k] < low ? lows[k] : low;
        high = high < highs[k] ? highs[k] : high;
    }
    return ordered_fold(x + i, n - i, {uint32_t(low) ^ 0x80000000u, uint32_t(high) ^ 0x80000000u});
}
GPUPRIM_CPU_AVX2 inline __m256i flip_negative_epi64(__m256i v) {
    const __m256i keep = _mm256_set1_epi64x(INT64_MAX);
    return _mm256_xor_si256(v, _mm256_and_si256(_mm256_cmpgt_epi64(_mm256_setzero_si256(), v), keep));
}
GPUPRIM_CPU_AVX2 inline __m256i least_epi64(__m256i a, __m256i v) {
    return _mm256_blendv_epi8(a, v, _mm256_cmpgt_epi64(a, v));
}
GPUPRIM_CPU_AVX2 inline __m256i most_epi64(__m256i a, __m256i v) {
    return _mm256_blendv_epi8(a, v, _mm256_cmpgt_epi64(v, a));
}
GPUPRIM_CPU_AVX2 inline OrderedBounds<uint64_t> ordered_fold_avx2(const double *x, uint64_t n,
                                                                  OrderedBounds<uint64_t> b) {
    constexpr uint64_t kSign = uint64_t(1) << 63;
    __m256i low0 = _mm256_set1_epi64x(int64_t(b.low ^ kSign)), low1 = low0;
    __m256i high0 = _mm256_set1_epi64x(int64_t(b.high ^ kSign)), high1 = high0;
    uint64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256i v0 = flip_negative_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(x + i)));
        const __m256i v1 = flip_negative_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(x + i + 4)));
        low0 = least_epi64(low0, v0);
        low1 = least_epi64(low1, v1);
        high0 = most_epi64(high0, v0);
        high1 = most_epi64(high1, v1);
    }
    alignas(32) int64_t lows[4], highs[4];
    _mm256_store_si256(reinterpret_cast<__m256i *>(lows), least_epi64(low0, low1));
    _mm256_store_si256(reinterpret_cast<__m256i *>(highs), most_epi64(high0, high1));
    int64_t low = lows[0], high = highs[0];
    for (int k = 1; k < 4; ++k) {
        low = lows[k] < low ? lows[k] : low;
        high = high < highs[k] ? highs[k] : high;
    }
    return ordered_fold(x + i, n - i, {uint64_t(low) ^ kSign, uint64_t(high) ^ kSign});
}
#endif
template <typename T>
OrderedBounds<bits_t<T>> ordered_bounds(const T *x, uint64_t n) {
    const OrderedBounds<bits_t<T>> none{~bits_t<T>(0), 0};
#if defined(GPUPRIM_CPU_FMA_DISPATCH)
    if (cpu_has_avx2()) return ordered_fold_avx2(x, n, none);
#endif
    return ordered_fold(x, n, none);
}

// The tree over values[0, n): the tree of n leaves (its shape depends on
// n only, so a subtree of the leaves' tree is this tree of its leaves).
template <typename Acc, typename Op>
Acc combine_values(const Acc *values, uint64_t n, Op op) {
    if (n == 1) return values[0];
    const uint64_t half = n / 2;
    return op(combine_values(values, half, op), combine_values(values + half, n - half, op));
}

// The tree over leaves [lo, hi): leaves(first, last, out) gives leaf values
// in batches.
template <typename Acc, typename Op, typename Leaves>
Acc reduce_tree(uint64_t lo, uint64_t hi, Op op, const Leaves &leaves) {
    if (hi - lo <= kLeafBatch) {
        Acc values[kLeafBatch];
        leaves(lo, hi, values);
        return combine_values(values, hi - lo, op);
    }
    const uint64_t mid = lo + (hi - lo) / 2;
    return op(reduce_tree<Acc>(lo, mid, op, leaves), reduce_tree<Acc>(mid, hi, op, leaves));
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

// Reduce count elements with op over the fixed tree (leaf(lo, hi, out): the
// values of leaves [lo, hi)); threads share the subtrees. count > 0.
template <typename Acc, typename Op, typename Leaves>
Acc blocked_reduce(Parallel &parallel, uint64_t count, Op op, const Leaves &leaf) {
    const uint64_t leaves = ceil_div(count, kLeaf);
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

// An exact operator (integer SUM/MIN/MAX, 16-bit float MIN/MAX) of the
// elements as Acc.
template <typename Acc, typename T, typename Op>
Acc reduce_exact(Parallel &parallel, const T *input, uint64_t count, Op op) {
    return exact_reduce<Acc>(parallel, count, op, [&](uint64_t begin, uint64_t n) {
        const T *x = input + begin;
        return fold_dispatch(n, Op::identity(), op, [x](uint64_t i) { return load_as<Acc>(x[i]); });
    });
}

template <typename T, bool kMin>
T reduce_float_min_max(Parallel &parallel, const T *input, uint64_t count) {
    using Key = bits_t<T>;
    using Keys = MinMaxKey<T, kMin>;
    if (count == 0) return kMin ? MinOp<T>::identity() : MaxOp<T>::identity();
    const OrderedBounds<Key> b = exact_reduce<OrderedBounds<Key>>(
        parallel, count, OrderedBoundsOp<Key>{},
        [&](uint64_t begin, uint64_t n) { return ordered_bounds(input + begin, n); });
    const bool negative_nan = b.low < Keys::kNans, positive_nan = b.high > Key(~Keys::kNans);
    const Key o = negative_nan ? b.low : kMin ? (positive_nan ? b.high : b.low) : b.high;
    return bit_cast<T>(Keys::unordered(o));
}

template <typename T>
T reduce_sum(Parallel &parallel, const T *input, uint64_t count) {
    using A = Accumulator<T>;
    using Acc = typename A::type;
    if (count == 0) return A::store(Acc(0));
    LaneSum<Acc> op;
    if constexpr (std::is_integral_v<Acc>) {
        return A::store(reduce_exact<Acc>(parallel, input, count, op));
    } else {
        Acc total = blocked_reduce<Acc>(parallel, count, op, [&](uint64_t lo, uint64_t hi, Acc *out) {
            sum_leaves<Acc>(input, count, lo, hi, out);
        });
        return canonical_nan_if_nan(A::store(total));
    }
}

template <typename T>
T reduce(Parallel &parallel, gpuprim_op_t op, const T *input, uint64_t count) {
    switch (op) {
    case GPUPRIM_OP_SUM: return reduce_sum(parallel, input, count);
    case GPUPRIM_OP_MIN:
        if constexpr (std::is_floating_point_v<T>)
            return reduce_float_min_max<T, true>(parallel, input, count);
        else return reduce_exact<T>(parallel, input, count, MinOp<T>{});
    case GPUPRIM_OP_MAX:
        if constexpr (std::is_floating_point_v<T>)
            return reduce_float_min_max<T, false>(parallel, input, count);
        else return reduce_exact<T>(parallel, input, count, MaxOp<T>{});
    }
    fail(GPUPRIM_ERROR_INTERNAL, "reduce: unknown op %d", static_cast<int>(op));
}

template <typename T>
T dot(Parallel &parallel, const T *a, const T *b, uint64_t count) {
    using A = Accumulator<T>;
    using Acc = typename A::type;
    if (count == 0) return A::store(Acc(0));
    if constexpr (std::is_integral_v<Acc>) {
        // Wrapping multiply-adds: exact, so one vectorized loop a range.
        const Acc total = exact_reduce<Acc>(parallel, count, LaneSum<Acc>{}, [&](uint64_t begin, uint64_t n) {
            const T *x = a + begin, *y = b + begin;
            return fold_dispatch(n, Acc(0), LaneSum<Acc>{}, [x, y](uint64_t i) {
                return multiply_add(A::load(x[i]), A::load(y[i]), Acc(0));
            });
        });
        return A::store(total);
    } else {
#if defined(GPUPRIM_CPU_FMA_DISPATCH)
        if constexpr (std::is_floating_point_v<T> && std::is_same_v<Acc, T>) {
            if (cpu_has_fma()) {
                Acc total = blocked_reduce<Acc>(parallel, count, LaneSum<Acc>{},
                                                [&](uint64_t lo, uint64_t hi, Acc *out) {
                                                    float_leaves_avx2<true>(a, b, count, lo, hi, out);
                                                });
                return canonical_nan_if_nan(A::store(total));
            }
        }
#endif
        Acc total = blocked_reduce<Acc>(parallel, count, LaneSum<Acc>{}, [&](uint64_t lo, uint64_t hi, Acc *out) {
            for (uint64_t j = lo; j < hi; ++j)
                out[j - lo] = dot_leaf<Acc>(a + leaf_begin(j), b + leaf_begin(j), leaf_length(j, count));
        });
        return canonical_nan_if_nan(A::store(total));
    }
}

// Whether every element of x[0, count) is -0.0 (its bits: the sign alone).
template <typename T>
bool only_negative_zeros(const T *x, uint64_t count) {
    using Bits = bits_t<T>;
    for (uint64_t i = 0; i < count; ++i) {
        Bits bits;
        std::memcpy(&bits, &x[i], sizeof bits);
        if (bits != ElementTraits<T>::kSignBit) return false;
    }
    return true;
}

// The scan's block totals: a float SUM's is the leaf reduction over the
// block (the leaves and tree of reduce); an exact operator folds the block.
template <typename T, typename Acc, typename Op>
Acc block_total(const T *input, uint64_t count, Op op) {
    constexpr bool kFloatSum = std::is_same_v<Op, LaneSum<Acc>> && std::is_floating_point_v<Acc>;
    if constexpr (!kFloatSum) {
        return fold_dispatch(count, Op::identity(), op, [input](uint64_t i) { return load_as<Acc>(input[i]); });
    } else {
        const Acc total = reduce_tree<Acc>(0, ceil_div(count, kLeaf), op, [&](uint64_t lo, uint64_t hi, Acc *out) {
            sum_leaves<Acc>(input, count, lo, hi, out);
        });
        // The tree's lanes start from +0.0, so a block of only -0.0 sums to
        // +0.0 there; the scan's carry needs -0.0 (a run of -0.0 scans to
        // -0.0, as in[0] alone does). Only such a block sums to -0.0
        // (x + -x is +0.0 under round to nearest), so look only at zeros.
        if (total == Acc(0) && only_negative_zeros(input, count)) return Acc(-0.0);
        return total;
    }
}

// Outputs at least this large (bytes) of an integer SUM scan are written
// with streaming stores (x86-64), which skip the cache: for outputs much
// larger than the cache they save reading each output line before it is
// written. stream_fence() before other threads read them.
constexpr uint64_t kStreamOutputBytes = uint64_t(32) << 20;
inline void stream_fence() {
#if defined(__SSE2__)
    _mm_sfence();
#endif
}

// Outputs [0, count) from `running`, one element at a time.
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

// The integer SUM scan of 4- and 8-byte elements, 16 bytes at a time
// (SSE2, baseline x86-64): the wrapping sums are exact, so a vector's
// prefix sums (log steps) plus the carry give the same bits as one element
// at a time. kStream: 16-byte streaming stores.
template <typename T>
constexpr bool kVectorSumScan =
#if defined(__SSE2__)
    std::is_integral_v<T> && (sizeof(T) == 4 || sizeof(T) == 8);
#else
    false;
#endif
#if defined(__SSE2__)
template <bool kExclusive, bool kStream, typename T>
T scan_sum_sse2(const T *input, T *output, uint64_t count, T running) {
    constexpr uint64_t kPer = 16 / sizeof(T);
    const LaneSum<T> op;
    uint64_t i = 0;
    // Elements one at a time until the output is 16-byte aligned.
    while (i < count && (reinterpret_cast<uintptr_t>(output + i) & 15) != 0) {
        const T x = input[i];
        if (kExclusive) output[i] = running;
        running = op(running, x);
        if (!kExclusive) output[i] = running;
        ++i;
    }
    if (i + kPer <= count) {
        auto add = [](__m128i a, __m128i b) {
            if constexpr (sizeof(T) == 4) return _mm_add_epi32(a, b);
            else return _mm_add_epi64(a, b);
        };
        __m128i carry;
        if constexpr (sizeof(T) == 4) carry = _mm_set1_epi32(static_cast<int>(running));
        else carry = _mm_set1_epi64x(static_cast<long long>(running));
        for (; i + kPer <= count; i += kPer) {
            const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i *>(input + i));
            __m128i prefix = add(x, _mm_slli_si128(x, sizeof(T)));
            if constexpr (sizeof(T) == 4) prefix = add(prefix, _mm_slli_si128(prefix, 8));
            const __m128i inclusive = add(prefix, carry);
            __m128i out = inclusive;
            if constexpr (kExclusive) {
                if constexpr (sizeof(T) == 4) out = _mm_sub_epi32(inclusive, x);
                else out = _mm_sub_epi64(inclusive, x);
            }
            auto *to = reinterpret_cast<__m128i *>(output + i);
            if constexpr (kStream) _mm_stream_si128(to, out);
            else _mm_store_si128(to, out);
            carry = _mm_shuffle_epi32(inclusive, sizeof(T) == 4 ? 0xFF : 0xEE);  // the last element
        }
        T last;
        if constexpr (sizeof(T) == 4) last = static_cast<T>(_mm_cvtsi128_si32(carry));
        else last = static_cast<T>(_mm_cvtsi128_si64(carry));
        running = last;
    }
    return scan_chain<kExclusive>(input + i, output + i, count - i, running, op);
}
#endif

template <typename T>
void canonicalize_nans(T *output, uint64_t count) {
    for (uint64_t i = 0; i < count; ++i) output[i] = canonical_nan_if_nan(output[i]);
}

// One scan block from `carry`. Reads each element before writing its output,
// so output may alias input. A float SUM's NaN outputs are made canonical
// afterwards (a NaN, once in the running value, stays to the end, so only a
// NaN end needs the pass). kStream: an integer SUM's streaming stores.
template <bool kExclusive, bool kStream = false, typename T, typename Acc, typename Op>
void scan_block(const T *input, T *output, uint64_t count, Acc carry, Op op) {
    constexpr bool kFloatSum = std::is_same_v<Op, LaneSum<Acc>> && std::is_floating_point_v<Acc>;
#if defined(__SSE2__)
    if constexpr (kVectorSumScan<T> && std::is_same_v<Acc, T> && std::is_same_v<Op, LaneSum<Acc>>) {
        scan_sum_sse2<kExclusive, kStream>(input, output, count, carry);
        return;
    }
#endif
    const Acc end = scan_chain<kExclusive>(input, output, count, carry, op);
    if constexpr (kFloatSum)
        if (is_nan(end)) canonicalize_nans(output, count);
}

inline void cpu_pause() {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __builtin_ia32_pause();
#endif
}

// Until counter == value (another thread of the same loop sets it): spins a
// little, then yields the CPU (a shared machine may have descheduled the
// thread that sets it).
inline void wait_for(const std::atomic<uint64_t> &counter, uint64_t value) {
    for (unsigned spins = 0; counter.load(std::memory_order_acquire) != value; ++spins) {
        if (spins < 256) cpu_pause();
        else std::this_thread::yield();
    }
}

// Exact operators' tiles (elements): their block boundaries change no bit.
constexpr uint64_t kExactScanTile = 1 << 15;
// A float SUM's tile: this many scan blocks.
constexpr uint64_t kFloatScanTileBlocks = 4;

// start: the carry of block 0, the operator's identity or the scan's
// initial value (Backend::scan), which so enters as the first partial total.
template <typename T, typename Acc, typename Op>
void scan_blocks(Parallel &parallel, const T *input, T *output, uint64_t count, bool exclusive,
                 Op op, Acc start) {
    constexpr bool kFloatSum = std::is_same_v<Op, LaneSum<Acc>> && std::is_floating_point_v<Acc>;
    // Integer SUM outputs past the cache's size skip it.
    constexpr bool kCanStream = kVectorSumScan<T> && std::is_same_v<Acc, T> && std::is_same_v<Op, LaneSum<Acc>>;
    const bool stream = kCanStream && count * sizeof(T) >= kStreamOutputBytes;
    auto scan_one = [&](uint64_t begin, uint64_t n, Acc carry) {
        if constexpr (kCanStream) {
            if (stream) {
                if (exclusive) scan_block<true, true>(input + begin, output + begin, n, carry, op);
                else scan_block<false, true>(input + begin, output + begin, n, carry, op);
                stream_fence();
                return;
            }
        }
        if (exclusive) scan_block<true>(input + begin, output + begin, n, carry, op);
        else scan_block<false>(input + begin, output + begin, n, carry, op);
    };
    if (parallel.workers() <= 1 || count < kParallelScanMin) {
        // Exact operators: one pass, the running value is every carry.
        if constexpr (!kFloatSum) {
            scan_one(0, count, start);
        } else {
            // A float SUM: block b starts from the blocks' totals added in order.
            Acc carry = start;
            for (uint64_t begin = 0; begin < count; begin += kScanBlock) {
                const uint64_t n = std::min(kScanBlock, count - begin);
                const Acc total = begin + n < count ? block_total<T, Acc>(input + begin, n, op) : Acc{};
                scan_one(begin, n, carry);
                carry = op(carry, total);
            }
        }
        return;
    }
    // Tiles of tile_blocks blocks, taken in order: a tile's totals (its reads
    // bring it into cache), then the carry out of the tile before it (tile
    // t waits until done == t; the tile before is always running already),
    // its own carry out, then its outputs from cache.
    const uint64_t block = kFloatSum ? kScanBlock : kExactScanTile;
    constexpr uint64_t tile_blocks = kFloatSum ? kFloatScanTileBlocks : 1;
    const uint64_t blocks = ceil_div(count, block), tiles = ceil_div(blocks, tile_blocks);
    std::atomic<uint64_t> next{0}, done{0};
    Acc carry = start;  // the carry into tile `done`
    const size_t workers = static_cast<size_t>(std::min<uint64_t>(tiles, uint64_t(parallel.workers())));
    parallel.for_each(workers, [&](size_t) {
        for (uint64_t t; (t = next.fetch_add(1, std::memory_order_relaxed)) < tiles;) {
            const uint64_t first = t * tile_blocks, last = std::min(blocks, first + tile_blocks);
            Acc totals[tile_blocks]{}, carries[tile_blocks]{};
            for (uint64_t b = first; b < last; ++b)
                totals[b - first] = b + 1 < blocks
                                        ? block_total<T, Acc>(input + b * block, std::min(block, count - b * block), op)
                                        : Acc{};
            wait_for(done, t);
            Acc running = carry;
            for (uint64_t b = first; b < last; ++b) {
                carries[b - first] = running;
                running = op(running, totals[b - first]);
            }
            carry = running;
            done.store(t + 1, std::memory_order_release);
            for (uint64_t b = first; b < last; ++b)
                scan_one(b * block, std::min(block, count - b * block), carries[b - first]);
        }
    });
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
        if constexpr (std::is_floating_point_v<Acc>) {
            if (!initial) {
                // Float sums from -0.0, not the identity +0.0: -0.0 + x == x
                // for every x, so an inclusive scan's out[0] is in[0] itself
                // (-0.0 included, as numpy's cumsum and the CUDA kernels
                // give), while an exclusive scan's element 0 stays the
                // identity. f16/bf16 too (accumulated in f32).
                scan_blocks<T, Acc>(parallel, input, output, count, exclusive, LaneSum<Acc>{}, Acc(-0.0));
                if (exclusive) output[0] = store_as<T>(LaneSum<Acc>::identity());
                return;
            }
        }
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

// reduce, dot and scan of every dtype are instantiated once, in
// reduce_scan.cpp (for the CPU backend and its segmented calls alike): the
// AVX2 copies of their loops made each including file compile twice as long.
#if !defined(GPUPRIM_CPU_REDUCE_SCAN_INSTANTIATIONS)
#  define GPUPRIM_CPU_REDUCE_SCAN_EXTERN(e, type, name)                                         \
      extern template type reduce<type>(Parallel &, gpuprim_op_t, const type *, uint64_t);      \
      extern template type dot<type>(Parallel &, const type *, const type *, uint64_t);         \
      extern template void scan<type>(Parallel &, gpuprim_op_t, bool, const type *, type *, uint64_t, \
                                      const type *);
GPUPRIM_DTYPE_TABLE(GPUPRIM_CPU_REDUCE_SCAN_EXTERN)
#  undef GPUPRIM_CPU_REDUCE_SCAN_EXTERN
#endif

}  // namespace cpu
}  // namespace gpuprim
