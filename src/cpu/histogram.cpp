// SPDX-License-Identifier: Apache-2.0
// Histograms on the CPU: each element's bin by core/histogram_bins.h (the
// same arithmetic as the CUDA kernels). Large inputs are cut into pieces, one
// private histogram of 64-bit counts each, added up at the end; the counts
// are integers, so the result is the same however the input is cut. The
// pieces' private histograms together stay within kPrivateBytes (many bins:
// fewer pieces, down to one, which counts straight into the output).
//
// Rows (the _rows calls): short rows, or at least as many rows as threads,
// run whole rows in parallel, each counted on one thread straight into its
// own counts; fewer long rows run one after another, each cut into pieces
// as above. Either way a row's counts are the flat call's on that row.
#include "cpu/plain_calls.h"

#include "core/dtype.h"
#include "core/error.h"
#include "core/histogram_bins.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

namespace gpuprim {
namespace cpu {
namespace {

constexpr uint64_t kPieceElements = uint64_t(1) << 16;
constexpr uint64_t kMostPieces = 64;
constexpr uint64_t kPrivateBytes = uint64_t(64) << 20;

template <typename T>
struct Binner {
    const HistogramRequest &request;
    const T *edges;
    // The edges' keys made once (range_edge_key), when memory for them was
    // there: the searches then read keys instead of converting edges (a
    // 65,536-edge search takes 17 steps an element), several at once
    // (count_searched_into).
    const bits_t<T> *edge_keys;

    bool operator()(T x, uint64_t &bin) const {
        if (!edges) return even_bin(request.even, x, bin);
        bits_t<T> key;
        if (!range_key(x, key)) return false;
        return range_bin(*this, request.bins + 1, key, bin);
    }
    // The key of edge i (range_bin reads the edges through it).
    bits_t<T> operator()(uint64_t i) const { return edge_keys ? edge_keys[i] : range_edge_key(edges[i]); }
};

// Elements whose edge searches run side by side (count_searched_into).
constexpr int kSearchLanes = 8;

// range_bin's answer for kSearchLanes elements at once, from the edges'
// keys: each search halves its range without a branch on the keys, and as
// the halving depends only on the number of edges, every lane takes the
// same steps, so their loads overlap (one search is a chain of dependent
// loads that mostly miss L1; a branch on each step was mispredicted half
// the time).
template <typename T, typename Count>
void count_searched_into(const Binner<T> &binner, const T *x, uint64_t begin, uint64_t end, Count *counts) {
    using Bits = bits_t<T>;
    const uint64_t edge_count = binner.request.bins + 1;
    const Bits *const edge_keys = binner.edge_keys;
    uint64_t i = begin;
    for (; i + kSearchLanes <= end; i += kSearchLanes) {
        Bits keys[kSearchLanes];
        bool counts_at_all[kSearchLanes];
        const Bits *base[kSearchLanes];
        // Unrolled, so that the lanes live in registers, not in stack arrays
        // (which the sanitizer builds would check at every access).
#pragma GCC unroll 8
        for (int j = 0; j < kSearchLanes; ++j) {
            keys[j] = 0;  // a NaN's (it does not count) is not set
            counts_at_all[j] = range_key(x[i + j], keys[j]);
            base[j] = edge_keys;
        }
        for (uint64_t len = edge_count; len > 1;) {
            const uint64_t half = len / 2;
#pragma GCC unroll 8
            for (int j = 0; j < kSearchLanes; ++j) base[j] = base[j][half - 1] <= keys[j] ? base[j] + half : base[j];
            len -= half;
        }
#pragma GCC unroll 8
        for (int j = 0; j < kSearchLanes; ++j) {
            // the number of edge keys <= the key; 0 or all: outside the edges
            const uint64_t at_or_below = uint64_t(base[j] - edge_keys) + (*base[j] <= keys[j] ? 1 : 0);
            if (counts_at_all[j] && at_or_below != 0 && at_or_below != edge_count)
                counts[at_or_below - 1] = Count(counts[at_or_below - 1] + 1);
        }
    }
    for (; i < end; ++i) {
        uint64_t bin;
        if (binner(x[i], bin)) counts[bin] = Count(counts[bin] + 1);
    }
}

template <typename T, typename Count>
void count_into(const Binner<T> &binner, const T *x, uint64_t begin, uint64_t end, Count *counts) {
    if (binner.edge_keys) return count_searched_into(binner, x, begin, end, counts);
    for (uint64_t i = begin; i < end; ++i) {
        uint64_t bin;
        if (binner(x[i], bin)) counts[bin] = Count(counts[bin] + 1);
    }
}

// How many pieces a row of n elements is counted in (1: one thread).
uint64_t row_pieces(const Parallel &parallel, uint64_t n, uint64_t bins) {
    uint64_t pieces = std::min<uint64_t>(ceil_div(n, kPieceElements), uint64_t(std::max(parallel.threads(), 1)));
    pieces = std::min(pieces, kMostPieces);
    return std::min(pieces, std::max<uint64_t>(1, kPrivateBytes / (bins * sizeof(uint64_t))));
}

// One row: the n elements at x into the bins counts at counts, in `pieces`
// (row_pieces()); past one, `partial` holds pieces * bins counters
// (allocated by the caller once for every row, so that a failing
// allocation comes before any row is written).
template <typename T, typename Count>
void histogram_row(Parallel &parallel, const Binner<T> &binner, const T *x, uint64_t n, Count *counts,
                   uint64_t pieces, std::vector<uint64_t> &partial) {
    const uint64_t bins = binner.request.bins;
    if (pieces <= 1) {
        std::memset(counts, 0, bins * sizeof(Count));
        count_into(binner, x, 0, n, counts);
        return;
    }
    std::fill(partial.begin(), partial.end(), uint64_t(0));
    parallel.for_each(static_cast<size_t>(pieces), [&](size_t p) {
        const uint64_t begin = n / pieces * p + std::min<uint64_t>(p, n % pieces);
        const uint64_t end = begin + n / pieces + (p < n % pieces ? 1 : 0);
        count_into(binner, x, begin, end, partial.data() + p * bins);
    });
    parallel.for_ranges(bins, 4096, [&](uint64_t begin, uint64_t end) {
        for (uint64_t b = begin; b < end; ++b) {
            uint64_t total = 0;
            for (uint64_t p = 0; p < pieces; ++p) total += partial[p * bins + b];
            counts[b] = Count(total);
        }
    });
}

template <typename T, typename Count>
void histogram_typed(Parallel &parallel, const HistogramRequest &request) {
    const T *x = static_cast<const T *>(request.input);
    Count *counts = static_cast<Count *>(request.counts);
    const T *edges = static_cast<const T *>(request.edges);
    const uint64_t n = request.count, bins = request.bins, rows = request.rows;
    // Where the elements' searches would convert more edges than there are
    // (a search reads about log2(bins) edges, taken as 16), and the keys fit
    // kPrivateBytes (the pieces' counts' bound). Not an error without the
    // memory: the searches then convert the edges they read.
    std::unique_ptr<bits_t<T>[]> edge_keys;
    if (edges && n * rows > bins / 16 && bins < kPrivateBytes / sizeof(bits_t<T>)) {
        edge_keys.reset(new (std::nothrow) bits_t<T>[bins + 1]);
        if (edge_keys)
            // up to 2^20 edges (about a millisecond) on the calling thread
            parallel.for_ranges(bins + 1, uint64_t(1) << 20, [&](uint64_t begin, uint64_t end) {
                for (uint64_t i = begin; i < end; ++i) edge_keys[i] = range_edge_key(edges[i]);
            });
    }
    const Binner<T> binner{request, edges, edge_keys.get()};
    const bool row_by_row = rows == 1 || (n >= kPieceElements && rows < uint64_t(std::max(parallel.threads(), 1)));
    if (row_by_row) {
        const uint64_t pieces = row_pieces(parallel, n, bins);
        std::vector<uint64_t> partial(pieces > 1 ? pieces * bins : 0);
        for (uint64_t r = 0; r < rows; ++r)
            histogram_row(parallel, binner, x + r * n, n, counts + r * bins, pieces, partial);
        return;
    }
    // Whole rows a thread, about kPieceElements elements and counts a range of rows.
    const uint64_t grain = std::max<uint64_t>(1, kPieceElements / (n + bins));
    parallel.for_ranges(rows, grain, [&](uint64_t begin, uint64_t end) {
        for (uint64_t r = begin; r < end; ++r) {
            Count *row_counts = counts + r * bins;
            std::memset(row_counts, 0, bins * sizeof(Count));
            count_into(binner, x + r * n, 0, n, row_counts);
        }
    });
}

}  // namespace

// counts[b] = the number of the request's elements in bin b
// (core/backend.h HistogramRequest; core/histogram_bins.h the bins).
void histogram(Parallel &parallel, const HistogramRequest &request) {
    if (request.count_bytes != 4 && request.count_bytes != 8)
        fail(GPUPRIM_ERROR_INTERNAL, "histogram: %u-byte counts", request.count_bytes);
    dispatch_dtype(request.dtype, [&](auto tag) {
        using T = decltype(tag);
        if (request.count_bytes == 4) histogram_typed<T, uint32_t>(parallel, request);
        else histogram_typed<T, uint64_t>(parallel, request);
    });
}

}  // namespace cpu
}  // namespace gpuprim
