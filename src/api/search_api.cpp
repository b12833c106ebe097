// SPDX-License-Identifier: Apache-2.0
// The search entry points (experimental): searchsorted.
#include "api/validate.h"
#include "core/context.h"
#include "core/dtype.h"

#include <gpuprim/gpuprim.h>

using gpuprim::Buffer;
using gpuprim::Context;
using namespace gpuprim::api;  // guarded() and the argument rules

extern "C" {

gpuprim_status_t gpuprim_searchsorted(gpuprim_context_t context, gpuprim_buffer_t sorted, gpuprim_buffer_t queries,
                                      gpuprim_side_t side, gpuprim_order_t order, gpuprim_buffer_t indices) {
    return guarded(__func__, context, [&](Context &ctx) {
        require_side(side);
        require_order(order);
        Buffer &keys = ctx.resolve(sorted, "sorted");
        Buffer &wanted = ctx.resolve(queries, "queries");
        Buffer &out = ctx.resolve(indices, "indices");
        require_same_dtype(wanted, "queries", keys, "sorted");
        require_index_dtype(out, "searchsorted");
        require_same_count(out, "indices", wanted, "queries");
        require_position_fits(out, keys.count, "searchsorted into 'sorted' of");
        require_no_overlap(out, "indices", keys, "sorted", false);
        require_no_overlap(out, "indices", wanted, "queries", false);
        if (wanted.count == 0) return;
        gpuprim::SearchRequest request{};
        request.key_kind = gpuprim::key_kind(keys.dtype);
        request.key_bytes = static_cast<uint32_t>(gpuprim::dtype_size(keys.dtype));
        request.descending = enum_bits(order) == GPUPRIM_ORDER_DESCENDING;
        request.upper = enum_bits(side) == GPUPRIM_SIDE_RIGHT;
        request.sorted = keys.data;
        request.count = keys.count;
        request.queries = wanted.data;
        request.query_count = wanted.count;
        request.indices = out.data;
        request.index_bytes = static_cast<uint32_t>(gpuprim::dtype_size(out.dtype));
        ctx.backend->searchsorted(request);
    });
}

}  // extern "C"
