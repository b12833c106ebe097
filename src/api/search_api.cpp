// SPDX-License-Identifier: Apache-2.0
// The search entry points (experimental): searchsorted.
#include "api/validate.h"
#include "core/context.h"
#include "core/dtype.h"

#include <gpuprim/gpuprim.h>

using gpuprim::Buffer;
using gpuprim::Context;
using namespace gpuprim::api;  // guarded() and the argument rules

namespace {

// Both entry points: rows rows (1 for the flat call; 0 is refused by the
// rows call before it gets here).
void searchsorted_rows(Context &ctx, gpuprim_buffer_t sorted, gpuprim_buffer_t queries, uint64_t rows,
                       const gpuprim_side_t &side, const gpuprim_order_t &order, gpuprim_buffer_t indices) {
    require_side(side);
    require_order(order);
    Buffer &keys = ctx.resolve(sorted, "sorted");
    Buffer &wanted = ctx.resolve(queries, "queries");
    Buffer &out = ctx.resolve(indices, "indices");
    require_same_dtype(wanted, "queries", keys, "sorted");
    require_index_dtype(out, "searchsorted");
    require_same_count(out, "indices", wanted, "queries");
    if (rows == 0) gpuprim::fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "argument 'rows' is 0: there is at least one row");
    if (keys.count % rows != 0)
        gpuprim::fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "'sorted' has %llu elements, not a multiple of 'rows' = %llu",
                      static_cast<unsigned long long>(keys.count), static_cast<unsigned long long>(rows));
    if (wanted.count % rows != 0)
        gpuprim::fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "'queries' has %llu elements, not a multiple of 'rows' = %llu",
                      static_cast<unsigned long long>(wanted.count), static_cast<unsigned long long>(rows));
    require_position_fits(out, keys.count / rows,
                          rows == 1 ? "searchsorted into 'sorted' of" : "searchsorted into rows of 'sorted' of");
    require_no_overlap(out, "indices", keys, "sorted", false);
    require_no_overlap(out, "indices", wanted, "queries", false);
    if (wanted.count == 0) return;
    gpuprim::SearchRequest request{};
    request.key_kind = gpuprim::key_kind(keys.dtype);
    request.key_bytes = static_cast<uint32_t>(gpuprim::dtype_size(keys.dtype));
    request.descending = enum_bits(order) == GPUPRIM_ORDER_DESCENDING;
    request.upper = enum_bits(side) == GPUPRIM_SIDE_RIGHT;
    request.sorted = keys.data;
    request.count = keys.count / rows;
    request.queries = wanted.data;
    request.query_count = wanted.count / rows;
    request.indices = out.data;
    request.index_bytes = static_cast<uint32_t>(gpuprim::dtype_size(out.dtype));
    request.rows = rows;
    ctx.backend->searchsorted(request);
}

}  // namespace

extern "C" {

gpuprim_status_t gpuprim_searchsorted(gpuprim_context_t context, gpuprim_buffer_t sorted, gpuprim_buffer_t queries,
                                      gpuprim_side_t side, gpuprim_order_t order, gpuprim_buffer_t indices) {
    return guarded(__func__, context, [&](Context &ctx) {
        searchsorted_rows(ctx, sorted, queries, 1, side, order, indices);
    });
}

gpuprim_status_t gpuprim_searchsorted_rows(gpuprim_context_t context, gpuprim_buffer_t sorted,
                                           gpuprim_buffer_t queries, uint64_t rows, gpuprim_side_t side,
                                           gpuprim_order_t order, gpuprim_buffer_t indices) {
    return guarded(__func__, context, [&](Context &ctx) {
        searchsorted_rows(ctx, sorted, queries, rows, side, order, indices);
    });
}

}  // extern "C"
