// SPDX-License-Identifier: Apache-2.0
// The histogram entry points (experimental): even bins, bins by edges,
// bincount.
#include "api/validate.h"
#include "core/checked_size.h"
#include "core/context.h"
#include "core/dtype.h"
#include "core/histogram_bins.h"

#include <gpuprim/gpuprim.h>

#include <cmath>
#include <cstring>

using gpuprim::Buffer;
using gpuprim::Context;
using gpuprim::fail;
using namespace gpuprim::api;  // guarded() and the argument rules

namespace {

constexpr uint64_t kMostBins = uint64_t(1) << 32;

// The rows of the _rows calls (1 for the flat ones): at least one, the
// input's count a multiple of them (each row count / rows elements).
void require_rows(const Buffer &input, uint64_t rows) {
    if (rows == 0) fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "argument 'rows' is 0: there is at least one row");
    if (input.count % rows != 0)
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "'input' has %llu elements, not a multiple of 'rows' = %llu",
             static_cast<unsigned long long>(input.count), static_cast<unsigned long long>(rows));
}

// Histograms count in U32 or U64.
void require_count_dtype(const Buffer &counts) {
    if (counts.dtype != GPUPRIM_DTYPE_U32 && counts.dtype != GPUPRIM_DTYPE_U64)
        fail(GPUPRIM_ERROR_DTYPE_MISMATCH, "'counts' is %s; histograms count in U32 or U64",
             gpuprim::dtype_name(counts.dtype));
}

// The counts output of every histogram call: U32 or U64, rows rows of 1 to
// 2^32 bins each, apart from the input. Returns the bins of a row.
uint64_t require_counts(const Buffer &counts, const Buffer &input, uint64_t rows) {
    require_count_dtype(counts);
    if (counts.count == 0)
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "'counts' has no elements: a histogram needs at least one bin");
    if (counts.count % rows != 0)
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
             "'counts' has %llu elements, not a multiple of 'rows' = %llu (each row has the same bins)",
             static_cast<unsigned long long>(counts.count), static_cast<unsigned long long>(rows));
    const uint64_t bins = counts.count / rows;
    if (bins > kMostBins) {
        if (rows == 1)
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "'counts' has %llu elements: at most 2^32 bins",
                 static_cast<unsigned long long>(counts.count));
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "'counts' has %llu elements, %llu bins a row: at most 2^32 bins",
             static_cast<unsigned long long>(counts.count), static_cast<unsigned long long>(bins));
    }
    require_no_overlap(counts, "counts", input, "input", false);
    return bins;
}

gpuprim::HistogramRequest request_for(const Buffer &input, const Buffer &counts, uint64_t rows, uint64_t bins) {
    gpuprim::HistogramRequest request{};
    request.dtype = input.dtype;
    request.input = input.data;
    request.count = input.count / rows;
    request.bins = bins;
    request.counts = counts.data;
    request.count_bytes = static_cast<uint32_t>(gpuprim::dtype_size(counts.dtype));
    request.rows = rows;
    return request;
}

// The bounds of even bins, read from the caller's host memory (any alignment).
template <typename T>
gpuprim::EvenBins even_bins(const void *lower, const void *upper, uint64_t bins) {
    T lo, hi;
    std::memcpy(&lo, lower, sizeof lo);
    std::memcpy(&hi, upper, sizeof hi);
    if constexpr (gpuprim::kIsFloat<T>) {
        const double l = gpuprim::histogram_value(lo), u = gpuprim::histogram_value(hi);
        if (!std::isfinite(l)) fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "'lower' = %g is not a finite value", l);
        if (!std::isfinite(u)) fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "'upper' = %g is not a finite value", u);
        if (!(l < u)) fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "'lower' = %g is not below 'upper' = %g", l, u);
        if (!std::isfinite(u - l))
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "'upper' - 'lower' = %g - %g is not finite in f64", u, l);
    } else if constexpr (std::is_signed_v<T>) {
        if (!(lo < hi))
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "'lower' = %lld is not below 'upper' = %lld",
                 static_cast<long long>(lo), static_cast<long long>(hi));
    } else {
        if (!(lo < hi))
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "'lower' = %llu is not below 'upper' = %llu",
                 static_cast<unsigned long long>(lo), static_cast<unsigned long long>(hi));
    }
    return gpuprim::even_bins_of<T>(lo, hi, bins);
}

bool is_integer_dtype(gpuprim_dtype_t dtype) {
    const gpuprim::KeyKind kind = gpuprim::key_kind(dtype);
    return kind == gpuprim::KeyKind::Signed || kind == gpuprim::KeyKind::Unsigned;
}

// The entry points with their rows (1: the flat calls).
void histogram_even_rows(Context &ctx, gpuprim_buffer_t input, const void *lower, const void *upper,
                         uint64_t rows, gpuprim_buffer_t counts) {
    Buffer &in = ctx.resolve(input, "input");
    require(lower, "lower");
    require(upper, "upper");
    Buffer &out = ctx.resolve(counts, "counts");
    require_rows(in, rows);
    const uint64_t bins = require_counts(out, in, rows);
    gpuprim::HistogramRequest request = request_for(in, out, rows, bins);
    request.even = gpuprim::dispatch_dtype(in.dtype, [&](auto tag) {
        return even_bins<decltype(tag)>(lower, upper, bins);
    });
    ctx.backend->histogram(request);
}

void histogram_range_rows(Context &ctx, gpuprim_buffer_t input, gpuprim_buffer_t edges, uint64_t rows,
                          gpuprim_buffer_t counts) {
    Buffer &in = ctx.resolve(input, "input");
    Buffer &levels = ctx.resolve(edges, "edges");
    Buffer &out = ctx.resolve(counts, "counts");
    require_same_dtype(levels, "edges", in, "input");
    if (levels.count < 2)
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "'edges' has %llu elements: bins need at least 2 edges",
             static_cast<unsigned long long>(levels.count));
    require_rows(in, rows);
    // The flat call: the rules of every histogram's counts first, then their
    // count. The rows call: counts' count is rows * the edges' bins, or a
    // SIZE_MISMATCH (a count not a multiple of rows, or none, included).
    if (rows == 1) {
        require_counts(out, in, rows);
        if (out.count != levels.count - 1)
            fail(GPUPRIM_ERROR_SIZE_MISMATCH, "'counts' has %llu elements but the %llu 'edges' make %llu bins",
                 static_cast<unsigned long long>(out.count), static_cast<unsigned long long>(levels.count),
                 static_cast<unsigned long long>(levels.count - 1));
    }
    require_count_dtype(out);
    uint64_t wanted = 0;
    if (!gpuprim::multiply_fits(rows, levels.count - 1, &wanted))
        fail(GPUPRIM_ERROR_SIZE_MISMATCH,
             "'counts' has %llu elements but %llu rows of the %llu bins the 'edges' make are more than 2^64",
             static_cast<unsigned long long>(out.count), static_cast<unsigned long long>(rows),
             static_cast<unsigned long long>(levels.count - 1));
    if (out.count != wanted)
        fail(GPUPRIM_ERROR_SIZE_MISMATCH,
             "'counts' has %llu elements but %llu rows of the %llu bins the %llu 'edges' make are %llu counts",
             static_cast<unsigned long long>(out.count), static_cast<unsigned long long>(rows),
             static_cast<unsigned long long>(levels.count - 1), static_cast<unsigned long long>(levels.count),
             static_cast<unsigned long long>(wanted));
    const uint64_t bins = require_counts(out, in, rows);
    require_no_overlap(out, "counts", levels, "edges", false);
    gpuprim::HistogramRequest request = request_for(in, out, rows, bins);
    request.edges = levels.data;
    ctx.backend->histogram(request);
}

void bincount_rows(Context &ctx, gpuprim_buffer_t input, uint64_t rows, gpuprim_buffer_t counts) {
    Buffer &in = ctx.resolve(input, "input");
    Buffer &out = ctx.resolve(counts, "counts");
    if (!is_integer_dtype(in.dtype))
        fail(GPUPRIM_ERROR_DTYPE_MISMATCH, "'input' is %s; bincount counts integers", gpuprim::dtype_name(in.dtype));
    require_rows(in, rows);
    const uint64_t bins = require_counts(out, in, rows);
    gpuprim::HistogramRequest request = request_for(in, out, rows, bins);
    // Even bins of width 1 over [0, bins), whatever the input's range.
    gpuprim::EvenBins &e = request.even;
    e.bins = bins;
    e.lower_signed = 0;
    e.upper_signed = static_cast<int64_t>(bins);
    e.lower_unsigned = 0;
    e.upper_unsigned = bins;
    e.range = bins;
    e.by_shift = true;
    e.shift = 0;
    ctx.backend->histogram(request);
}

}  // namespace

extern "C" {

gpuprim_status_t gpuprim_histogram_even(gpuprim_context_t context, gpuprim_buffer_t input, const void *lower,
                                        const void *upper, gpuprim_buffer_t counts) {
    return guarded(__func__, context,
                   [&](Context &ctx) { histogram_even_rows(ctx, input, lower, upper, 1, counts); });
}

gpuprim_status_t gpuprim_histogram_even_rows(gpuprim_context_t context, gpuprim_buffer_t input, uint64_t rows,
                                             const void *lower, const void *upper, gpuprim_buffer_t counts) {
    return guarded(__func__, context,
                   [&](Context &ctx) { histogram_even_rows(ctx, input, lower, upper, rows, counts); });
}

gpuprim_status_t gpuprim_histogram_range(gpuprim_context_t context, gpuprim_buffer_t input, gpuprim_buffer_t edges,
                                         gpuprim_buffer_t counts) {
    return guarded(__func__, context, [&](Context &ctx) { histogram_range_rows(ctx, input, edges, 1, counts); });
}

gpuprim_status_t gpuprim_histogram_range_rows(gpuprim_context_t context, gpuprim_buffer_t input, uint64_t rows,
                                              gpuprim_buffer_t edges, gpuprim_buffer_t counts) {
    return guarded(__func__, context, [&](Context &ctx) { histogram_range_rows(ctx, input, edges, rows, counts); });
}

gpuprim_status_t gpuprim_bincount(gpuprim_context_t context, gpuprim_buffer_t input, gpuprim_buffer_t counts) {
    return guarded(__func__, context, [&](Context &ctx) { bincount_rows(ctx, input, 1, counts); });
}

gpuprim_status_t gpuprim_bincount_rows(gpuprim_context_t context, gpuprim_buffer_t input, uint64_t rows,
                                       gpuprim_buffer_t counts) {
    return guarded(__func__, context, [&](Context &ctx) { bincount_rows(ctx, input, rows, counts); });
}

}  // extern "C"
