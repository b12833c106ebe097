// SPDX-License-Identifier: Apache-2.0
// The sort entry points: sort, its options, argsort.
#include "api/requests.h"
#include "api/validate.h"
#include "core/context.h"

#include <gpuprim/gpuprim.h>

#include <cstring>

using gpuprim::Context;
using namespace gpuprim::api;  // guarded() and the argument rules

extern "C" {

gpuprim_status_t gpuprim_sort(gpuprim_context_t context, gpuprim_buffer_t keys_in, gpuprim_buffer_t values_in,
                              gpuprim_buffer_t keys_out, gpuprim_buffer_t values_out, gpuprim_order_t order) {
    // The order is checked here, by reference, so that the message names this
    // function's argument; the options path checks it again.
    const int bits = enum_bits(order);
    if (bits < GPUPRIM_ORDER_ASCENDING || bits > GPUPRIM_ORDER_DESCENDING)
        return guarded(__func__, context, [&](Context &) { require_order(order); });
    gpuprim_sort_options_t options;
    gpuprim_sort_options_init(&options);
    options.order = enum_bits(order);
    return gpuprim_sort_with_options(context, keys_in, values_in, keys_out, values_out, &options);
}

void gpuprim_sort_options_init(gpuprim_sort_options_t *options) {
    if (!options) return;
    std::memset(options, 0, sizeof *options);
    options->struct_size = sizeof *options;
    options->order = GPUPRIM_ORDER_ASCENDING;
    options->begin_bit = 0;
    options->end_bit = 0;
}

gpuprim_status_t gpuprim_sort_with_options(gpuprim_context_t context, gpuprim_buffer_t keys_in,
                                           gpuprim_buffer_t values_in, gpuprim_buffer_t keys_out,
                                           gpuprim_buffer_t values_out, const gpuprim_sort_options_t *options) {
    return guarded(__func__, context, [&](Context &ctx) {
        SortKeys keys = sort_keys_for(ctx, options, keys_in, keys_out, false);
        add_sort_values(ctx, keys.request, *keys.in, *keys.out, values_in, values_out);
        if (keys.request.count == 0) return;
        ctx.backend->sort(keys.request);
    });
}

gpuprim_status_t gpuprim_argsort(gpuprim_context_t context, gpuprim_buffer_t keys_in, gpuprim_buffer_t keys_out,
                                 gpuprim_buffer_t indices, const gpuprim_sort_options_t *options) {
    return guarded(__func__, context, [&](Context &ctx) {
        SortKeys keys = sort_keys_for(ctx, options, keys_in, keys_out, true);
        add_argsort_indices(ctx, keys.request, *keys.in, keys.out, indices, keys.in->count, true);
        if (keys.request.count == 0) return;
        ctx.backend->sort(keys.request);
    });
}

}  // extern "C"
