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
// The unsigned sort: Highway's vqsort (SIMD; GPUPRIM_CPU_HWY) or std::sort
// on pieces, and with more than one thread a most-significant-digit radix
// partition first (8 bits below the common prefix of the smallest and
// largest key; stable, by pieces of the input) whose 256 buckets are sorted
// in parallel, a bucket too large for its share partitioned again.
// The sorted output is unique, so it is the same for every thread count.
#pragma once

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

// The most significant word: what the radix partition looks at.
template <typename T>
uint64_t top_word(const T &x) {
    if constexpr (std::is_same_v<T, Wide>) return x.hi;
    else return x;
}

inline const char *sort_engine_name() {
#if defined(GPUPRIM_CPU_HWY)
    return "Highway vqsort";
#else
    return "std::sort (no Highway at build time)";
#endif
}

// Sorts p[0, n) ascending on the calling thread.
template <typename T>
void leaf_sort(T *p, uint64_t n) {
    if (n < 2) return;
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

constexpr uint64_t kParallelSortMin = 1 << 16;  // below: one leaf sort
constexpr int kDigitBits = 8;
constexpr uint64_t kBuckets = uint64_t(1) << kDigitBits;
constexpr uint64_t kMaxPieces = 16;  // of the partition; its counts live on the stack
constexpr uint64_t kLeafMax = 1 << 20;  // a larger bucket is partitioned again

// Sorts n elements, using a and b (both of n elements) as the two halves of
// a ping-pong: returns a or b, whichever holds the sorted result (the other
// is left as scratch). Allocates nothing.
template <typename T>
T *sort_pingpong(Parallel &parallel, T *a, T *b, uint64_t n) {
    if (parallel.threads() <= 1 || n < kParallelSortMin) {
        leaf_sort(a, n);
        return a;
    }
    const uint64_t pieces = std::min<uint64_t>(kMaxPieces, (n + kParallelSortMin - 1) / kParallelSortMin);
    const uint64_t grain = (n + pieces - 1) / pieces;
    auto piece_range = [&](uint64_t p, uint64_t &begin, uint64_t &end) {
        begin = std::min(n, p * grain);
        end = std::min(n, begin + grain);
    };

    // The range of the top words, then the digit: the first kDigitBits bits
    // below their common prefix.
    uint64_t lows[kMaxPieces] = {}, highs[kMaxPieces] = {};
    parallel.for_each(pieces, [&](size_t p) {
        uint64_t begin, end;
        piece_range(p, begin, end);
        uint64_t lo = ~uint64_t(0), hi = 0;
        for (uint64_t i = begin; i < end; ++i) {
            const uint64_t w = top_word(a[i]);
            lo = w < lo ? w : lo;
            hi = w > hi ? w : hi;
        }
        lows[p] = lo;
        highs[p] = hi;
    });
    uint64_t lo = lows[0], hi = highs[0];
    for (uint64_t p = 1; p < pieces; ++p) {
        lo = std::min(lo, lows[p]);
        hi = std::max(hi, highs[p]);
    }
    if (lo == hi) {
        // Every top word equal: sorted already unless the low word orders.
        if constexpr (std::is_same_v<T, Wide>) leaf_sort(a, n);
        return a;
    }
    int top_bit = 63;
    while (!((lo ^ hi) >> top_bit)) --top_bit;
    const int shift = top_bit + 1 >= kDigitBits ? top_bit + 1 - kDigitBits : 0;
    auto digit = [shift](const T &x) { return (top_word(x) >> shift) & (kBuckets - 1); };

    // Stable scatter a -> b by digit, piece by piece.
    uint64_t counts[kMaxPieces][kBuckets];
    parallel.for_each(pieces, [&](size_t p) {
        uint64_t begin, end;
        piece_range(p, begin, end);
        uint64_t *c = counts[p];
        std::fill(c, c + kBuckets, uint64_t(0));
        for (uint64_t i = begin; i < end; ++i) ++c[digit(a[i])];
    });
    uint64_t starts[kBuckets + 1];
    uint64_t running = 0;
    for (uint64_t d = 0; d < kBuckets; ++d) {
        starts[d] = running;
        for (uint64_t p = 0; p < pieces; ++p) {
            const uint64_t c = counts[p][d];
            counts[p][d] = running;
            running += c;
        }
    }
    starts[kBuckets] = running;
    parallel.for_each(pieces, [&](size_t p) {
        uint64_t begin, end;
        piece_range(p, begin, end);
        uint64_t *next = counts[p];
        for (uint64_t i = begin; i < end; ++i) b[next[digit(a[i])]++] = a[i];
    });

    // Each bucket sorted in b, in parallel.
    parallel.for_each(kBuckets, [&](size_t d) {
        const uint64_t begin = starts[d], size = starts[d + 1] - starts[d];
        if (size < 2) return;
        if (size >= kParallelSortMin && (size > kLeafMax || size > n / 2)) {
            T *sorted = sort_pingpong(parallel, b + begin, a + begin, size);
            if (sorted != b + begin) std::memcpy(b + begin, sorted, size * sizeof(T));
        } else {
            leaf_sort(b + begin, size);
        }
    });
    return b;
}

}  // namespace cpu
}  // namespace gpuprim
