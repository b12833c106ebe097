// SPDX-License-Identifier: Apache-2.0
// The CPU backend's sort. Keys travel as their "radix keys"
// (core/key_transform.h), whose plain unsigned order is the documented order
// (floats: NaN last ascending, -0.0 before +0.0; descending is the
// complement), so every sort below is a sort of unsigned integers:
// - keys only: the radix keys themselves (equal radix keys are equal bits,
//   so the order of equal keys cannot be seen);
// - pairs: each key packed with its input position, (key << 32 | i) in 64
//   bits for keys of 4 bytes or fewer and counts below 2^32, else a 128-bit
//   (key, i). The packed values are unique, so any sort of them is stable;
//   the values are then gathered by position.
// The unsigned sort: Highway's vqsort (SIMD; GPUPRIM_CPU_HWY), else
// std::sort. With T threads the input is cut into R runs (R the largest
// power of two <= T, at most 16, runs of at least 2^16 elements), sorted in
// parallel, then merged pairwise in parallel pieces (merge path), the last
// merge writing the output (keys transformed back, values gathered) as it
// goes. From kRadixMin elements, a parallel LSD radix sort (8-bit digits,
// digits that are the same in every element skipped; for pairs only the
// key's digits, since the positions below them are already in order and the
// sort is stable) takes the place of runs and merges: always without
// Highway, and with it for 4-byte elements where its vqsort of them is slow
// (radix_sorts).
// The sorted output is unique, so it is the same for every thread count and
// either way.
#pragma once

#include "core/portable.h"
#include "cpu/parallel.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(GPUPRIM_CPU_HWY)
#  include <hwy/contrib/sort/vqsort.h>
#endif

namespace gpuprim {
namespace cpu {

// A 128-bit sort element: ordered by hi, then lo.
#if defined(GPUPRIM_CPU_HWY)
using Wide = hwy::uint128_t;
#else
struct Wide {
    uint64_t lo;
    uint64_t hi;
};
inline bool operator<(const Wide &a, const Wide &b) {
    return a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo;
}
#endif

inline const char *sort_engine_name() {
#if defined(GPUPRIM_CPU_HWY)
    return "Highway vqsort";
#else
    return "std::sort (no Highway at build time)";
#endif
}

// Sorts p[0, n) ascending on the calling thread. Bytes by counting (256
// counters, then each value written out as many times: std::sort took
// ~310 ms for 10^7 1-byte keys on one thread, bench/RESULTS.md).
template <typename T>
void leaf_sort(T *p, uint64_t n) {
    if (n < 2) return;
    if constexpr (std::is_same_v<T, uint8_t>) {
        uint64_t counts[256] = {};
        for (uint64_t i = 0; i < n; ++i) ++counts[p[i]];
        uint64_t at = 0;
        for (unsigned v = 0; v < 256; ++v) {
            std::memset(p + at, int(v), counts[v]);
            at += counts[v];
        }
        return;
    }
#if defined(GPUPRIM_CPU_HWY)
    if constexpr (std::is_same_v<T, uint16_t> || std::is_same_v<T, uint32_t> ||
                  std::is_same_v<T, uint64_t> || std::is_same_v<T, Wide>) {
        hwy::Sorter sorter;
        sorter(p, static_cast<size_t>(n), hwy::SortAscending());
        return;
    }
#endif
    std::sort(p, p + n, [](const T &a, const T &b) { return a < b; });
}

// A key's sort bits packed with its position (the pairs' sort element),
// and the two parts read back.
inline uint64_t packed_position(uint64_t p) { return p & 0xFFFFFFFFu; }
inline uint64_t packed_position(const Wide &p) { return p.lo; }
inline uint64_t packed_bits(uint64_t p) { return p >> 32; }
inline uint64_t packed_bits(const Wide &p) { return p.hi; }

template <typename Packed>
Packed pack(uint64_t bits, uint64_t position) {
    if constexpr (std::is_same_v<Packed, Wide>) return Wide{position, bits};
    else return (bits << 32) | position;
}

// Sorts p[0, n) ascending on the calling thread (insertion sort for a few
// elements, std::sort for some, the leaf sort (vqsort where built) beyond).
template <typename T>
void small_sort(T *p, uint64_t n) {
    if (n <= 16) {
        for (uint64_t i = 1; i < n; ++i) {
            const T x = p[i];
            uint64_t j = i;
            for (; j > 0 && x < p[j - 1]; --j) p[j] = p[j - 1];
            p[j] = x;
        }
        return;
    }
    if (n < 1024) {
        std::sort(p, p + n, [](const T &a, const T &b) { return a < b; });
        return;
    }
    leaf_sort(p, n);
}


constexpr uint64_t kParallelSortMin = 1 << 16;  // below: one leaf sort, one thread
constexpr uint64_t kMaxRuns = 16;

// How many runs sort_and_emit sorts in parallel: a power of two, at most the
// thread count, each run at least kParallelSortMin elements.
inline uint64_t sort_runs(const Parallel &parallel, uint64_t n) {
    uint64_t runs = 1;
    while (runs * 2 <= static_cast<uint64_t>(parallel.threads()) && runs * 2 <= kMaxRuns &&
           n / (runs * 2) >= kParallelSortMin)
        runs *= 2;
    return runs;
}

constexpr uint64_t kRadixMin = 1 << 12;  // below: the leaf sort

// Whether Highway's vqsort of 4-byte elements is slow on this CPU: Highway
// 1.0 on an AMD CPU with AVX-512, whose AVX3 sort of 32-bit lanes took 4-5
// times the radix sort's time there (and 4 times its own sort of 64-bit
// lanes; bench/RESULTS.md). Later Highway releases have a target of their
// own for those CPUs. False without Highway. The same answer every call.
bool vqsort_slow_for_4byte_elements() noexcept;

// Whether sort_to_runs sorts n elements of T by the radix sort: from
// kRadixMin elements, always without Highway, with it only for 4-byte
// elements where its vqsort of them is slow.
template <typename T>
bool radix_sorts(uint64_t n) {
    if (n < kRadixMin) return false;
#if defined(GPUPRIM_CPU_HWY)
    return sizeof(T) == 4 && vqsort_slow_for_4byte_elements();
#else
    return true;
#endif
}

// Elements of scratch sort_and_emit needs besides `a` (n elements of T): 0,
// or n when more than two runs are merged in rounds or the radix sort runs.
template <typename T>
uint64_t sort_scratch_elements(const Parallel &parallel, uint64_t n) {
    if (radix_sorts<T>(n)) return n;
    return sort_runs(parallel, n) > 2 ? n : 0;
}

// The radix sort: 8-bit digits of an unsigned element (Wide: of lo, then
// hi).
template <typename T>
unsigned radix_digit(const T &x, unsigned bit) {
    if constexpr (std::is_same_v<T, Wide>) return unsigned((bit < 64 ? x.lo >> bit : x.hi >> (bit - 64)) & 0xFFu);
    else return unsigned((x >> bit) & 0xFFu);
}
template <typename T>
T radix_differ(const T &a, const T &b) {
    if constexpr (std::is_same_v<T, Wide>) return Wide{a.lo ^ b.lo, a.hi ^ b.hi};
    else return T(a ^ b);
}
template <typename T>
T radix_or(const T &a, const T &b) {
    if constexpr (std::is_same_v<T, Wide>) return Wide{a.lo | b.lo, a.hi | b.hi};
    else return T(a | b);
}

constexpr uint64_t kRadixTiles = 16;  // at most; each thread's share of a pass

// Sorts a[0, n) by the bits from low_bits up, stably (b: n elements of
// scratch); returns where the sorted elements are (a or b).
template <typename T>
T *radix_sort(Parallel &parallel, T *a, T *b, uint64_t n, unsigned low_bits) {
    constexpr unsigned kBits = sizeof(T) * 8;
    const uint64_t tiles = std::min<uint64_t>(kRadixTiles, uint64_t(std::max(1, parallel.workers())));
    auto tile_begin = [&](uint64_t t) { return n / tiles * t + std::min(t, n % tiles); };
    // The bits some element does not share with a[0]: digits without any
    // are skipped.
    T differ[kRadixTiles];
    parallel.for_each(tiles, [&](size_t t) {
        const T first = a[0];
        T d = radix_differ(first, first);
        for (uint64_t i = tile_begin(t), end = tile_begin(t + 1); i < end; ++i) d = radix_or(d, radix_differ(a[i], first));
        differ[t] = d;
    });
    T any = differ[0];
    for (uint64_t t = 1; t < tiles; ++t) any = radix_or(any, differ[t]);
    uint64_t offsets[kRadixTiles][256];
    for (unsigned bit = low_bits; bit < kBits; bit += 8) {
        if (radix_digit(any, bit) == 0) continue;
        parallel.for_each(tiles, [&](size_t t) {
            uint64_t *count = offsets[t];
            std::fill(count, count + 256, uint64_t(0));
            for (uint64_t i = tile_begin(t), end = tile_begin(t + 1); i < end; ++i) ++count[radix_digit(a[i], bit)];
        });
        // Digit d of tile t goes after every smaller digit, and after d in
        // the tiles before t.
        uint64_t sum = 0;
        for (unsigned d = 0; d < 256; ++d)
            for (uint64_t t = 0; t < tiles; ++t) {
                const uint64_t c = offsets[t][d];
                offsets[t][d] = sum;
                sum += c;
            }
        parallel.for_each(tiles, [&](size_t t) {
            uint64_t *next = offsets[t];
            for (uint64_t i = tile_begin(t), end = tile_begin(t + 1); i < end; ++i) {
                const T x = a[i];
                b[next[radix_digit(x, bit)]++] = x;
            }
        });
        std::swap(a, b);
    }
    return a;
}

// The first k elements of the merge of sorted A and B (ties: A first) take
// how many from A.
template <typename T>
uint64_t merge_corank(const T *A, uint64_t na, const T *B, uint64_t nb, uint64_t k) {
    uint64_t lo = k > nb ? k - nb : 0, hi = k < na ? k : na;
    while (lo < hi) {
        const uint64_t i = lo + (hi - lo) / 2;
        if (!(B[k - i - 1] < A[i])) lo = i + 1;  // A[i] <= B[k-i-1]: take more of A
        else hi = i;
    }
    return lo;
}

// Writes the next `count` outputs of the merge of A and B (ties: A first),
// from A[i] and B[j] on, to out[0, count), and advances i and j past them.
template <typename T>
void merge_next(const T *A, uint64_t na, const T *B, uint64_t nb, uint64_t &i, uint64_t &j, uint64_t count,
                T *out) {
    uint64_t o = 0;
    while (o < count && i < na && j < nb) {
        const T x = A[i], y = B[j];
        const bool take_b = y < x;
        out[o++] = take_b ? y : x;
        i += !take_b;
        j += take_b;
    }
    while (o < count && i < na) out[o++] = A[i++];
    while (o < count && j < nb) out[o++] = B[j++];
}

// Merges runs [bounds[r], bounds[r+1]) two by two, in parallel pieces of
// the output: merge(lo, mid, hi, k_begin, k_end) for the outputs [k_begin,
// k_end) of the merge of [lo, mid) and [mid, hi) (k counted from lo).
template <typename Merge>
void for_merge_pieces(Parallel &parallel, const uint64_t *bounds, uint64_t runs, uint64_t n, const Merge &merge) {
    const uint64_t piece = std::max<uint64_t>(
        kParallelSortMin, n / (4 * static_cast<uint64_t>(parallel.threads())) + 1);
    const uint64_t pieces = ceil_div(n, piece);
    parallel.for_each(pieces, [&](size_t p) {
        const uint64_t begin = p * piece, end = std::min(n, begin + piece);
        // The pair of runs each output position lies in; a piece may span pairs.
        for (uint64_t r = 0; r < runs; r += 2) {
            const uint64_t lo = bounds[r], mid = bounds[r + 1], hi = bounds[r + 2];
            const uint64_t b = std::max(begin, lo), e = std::min(end, hi);
            if (b >= e) continue;
            merge(lo, mid, hi, b - lo, e - lo);
        }
    });
}

// Where sort_and_emit writes the sorted elements: sink(first, elements,
// count) with the sorted elements [first, first + count), from any thread,
// every output position once. It holds a function pointer and the caller's
// object, so the sort and its merges are compiled once per element type,
// not once per caller (each caller's copy of the merge loop was most of the
// CPU sort's compile time).
template <typename T>
class SortedSink {
public:
    template <typename F>
    explicit SortedSink(const F &f)
        : call_([](const void *object, uint64_t first, const T *elements, uint64_t count) {
              (*static_cast<const F *>(object))(first, elements, count);
          }),
          object_(&f) {}
    void operator()(uint64_t first, const T *elements, uint64_t count) const { call_(object_, first, elements, count); }

private:
    void (*call_)(const void *object, uint64_t first, const T *elements, uint64_t count);
    const void *object_;
};

// Outputs [k_begin, k_end) of the merge of A and B to sink, at first + k,
// through a block on the stack (kSinkBlock elements a call).
constexpr uint64_t kSinkBlock = 256;
template <typename T>
void merge_piece_to_sink(const T *A, uint64_t na, const T *B, uint64_t nb, uint64_t k_begin, uint64_t k_end,
                         uint64_t first, const SortedSink<T> &sink) {
    T block[kSinkBlock];
    uint64_t i = merge_corank(A, na, B, nb, k_begin), j = k_begin - i;
    for (uint64_t k = k_begin; k < k_end; k += kSinkBlock) {
        const uint64_t count = std::min(kSinkBlock, k_end - k);
        merge_next(A, na, B, nb, i, j, count, block);
        sink(first + k, block, count);
    }
}

// What sort_to_runs leaves: the sorted elements at src (merged), or two
// sorted runs of src, [bounds[0], bounds[1]) and [bounds[1], bounds[2]),
// whose merge gives them.
template <typename T>
struct SortedRuns {
    const T *src;
    uint64_t bounds[3];
    bool merged;
};

// Sorts a[0, n) up to its last merge (sort_and_emit below, which merges the
// last two runs into the sink).
template <typename T>
SortedRuns<T> sort_to_runs(Parallel &parallel, T *a, T *scratch, uint64_t n, unsigned presorted_low_bits) {
    const uint64_t runs = sort_runs(parallel, n);
    if (radix_sorts<T>(n) && scratch) return {radix_sort(parallel, a, scratch, n, presorted_low_bits), {0, n, n}, true};
    if (runs == 1) {
        leaf_sort(a, n);
        return {a, {0, n, n}, true};
    }
    uint64_t bounds[kMaxRuns + 1];
    for (uint64_t r = 0; r <= runs; ++r) bounds[r] = n / runs * r + std::min(r, n % runs);
    parallel.for_each(runs, [&](size_t r) { leaf_sort(a + bounds[r], bounds[r + 1] - bounds[r]); });
    // Rounds of pairwise merges until two runs are left; sort_and_emit
    // merges those into the sink.
    T *src = a, *dst = scratch;
    uint64_t count = runs;
    while (count > 2) {
        T *to = dst;
        const T *from = src;
        for_merge_pieces(parallel, bounds, count, n, [&](uint64_t lo, uint64_t mid, uint64_t hi, uint64_t b, uint64_t e) {
            uint64_t i = merge_corank(from + lo, mid - lo, from + mid, hi - mid, b), j = b - i;
            merge_next(from + lo, mid - lo, from + mid, hi - mid, i, j, e - b, to + lo + b);
        });
        for (uint64_t r = 0; r <= count / 2; ++r) bounds[r] = bounds[2 * r];
        count /= 2;
        std::swap(src, dst);
    }
    return {src, {bounds[0], bounds[1], bounds[2]}, false};
}

// Sorts a[0, n) ascending and gives sink every output position's element
// (sink(first, elements, count): the k-th smallest elements for k in
// [first, first + count)), from any thread, each position once. a is left
// in any state. scratch: sort_scratch_elements(parallel, n) elements (may be
// null when that is 0). Allocates nothing.
// presorted_low_bits: elements of a that agree above their low
// presorted_low_bits bits are already in increasing order of those bits
// (pairs: the positions packed below the key), so a stable sort of the
// higher bits sorts a.
template <typename T>
void sort_and_emit(Parallel &parallel, T *a, T *scratch, uint64_t n, const SortedSink<T> &sink,
                   unsigned presorted_low_bits = 0) {
    constexpr uint64_t kGrain = 1 << 16;
    const SortedRuns<T> sorted = sort_to_runs(parallel, a, scratch, n, presorted_low_bits);
    if (sorted.merged) {
        const T *at = sorted.src;
        parallel.for_ranges(n, kGrain, [&](uint64_t begin, uint64_t end) { sink(begin, at + begin, end - begin); });
        return;
    }
    const T *src = sorted.src;
    for_merge_pieces(parallel, sorted.bounds, 2, n, [&](uint64_t lo, uint64_t mid, uint64_t hi, uint64_t b, uint64_t e) {
        merge_piece_to_sink(src + lo, mid - lo, src + mid, hi - mid, b, e, lo, sink);
    });
}

}  // namespace cpu
}  // namespace gpuprim
