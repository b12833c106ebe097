// SPDX-License-Identifier: Apache-2.0
// The merge entry point (experimental): the stable merge of two sorted runs.
#include "api/validate.h"
#include "core/checked_size.h"
#include "core/context.h"
#include "core/dtype.h"

#include <gpuprim/gpuprim.h>

using gpuprim::Buffer;
using gpuprim::Context;
using gpuprim::fail;
using namespace gpuprim::api;  // guarded() and the argument rules

extern "C" {

gpuprim_status_t gpuprim_merge(gpuprim_context_t context, gpuprim_buffer_t keys_a, gpuprim_buffer_t values_a,
                               gpuprim_buffer_t keys_b, gpuprim_buffer_t values_b, gpuprim_buffer_t keys_out,
                               gpuprim_buffer_t values_out, gpuprim_order_t order) {
    return guarded(__func__, context, [&](Context &ctx) {
        require_order(order);
        Buffer &ka = ctx.resolve(keys_a, "keys_a");
        Buffer &kb = ctx.resolve(keys_b, "keys_b");
        Buffer &ko = ctx.resolve(keys_out, "keys_out");
        const int given = (values_a != nullptr) + (values_b != nullptr) + (values_out != nullptr);
        if (given != 0 && given != 3)
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
                 "'values_a', 'values_b' and 'values_out' are all NULL (keys only) or all given; here '%s' is NULL",
                 !values_a ? "values_a" : !values_b ? "values_b" : "values_out");
        require_same_dtype(kb, "keys_b", ka, "keys_a");
        require_same_dtype(ko, "keys_out", ka, "keys_a");
        uint64_t total = 0;
        if (!gpuprim::add_fits(ka.count, kb.count, &total))
            fail(GPUPRIM_ERROR_SIZE_MISMATCH,
                 "'keys_a' (%llu elements) and 'keys_b' (%llu) hold more than 2^64 - 1 keys together, more than "
                 "any 'keys_out' (%llu elements) can hold",
                 static_cast<unsigned long long>(ka.count), static_cast<unsigned long long>(kb.count),
                 static_cast<unsigned long long>(ko.count));
        if (ko.count != total)
            fail(GPUPRIM_ERROR_SIZE_MISMATCH, "'keys_out' has %llu elements but 'keys_a' and 'keys_b' hold %llu",
                 static_cast<unsigned long long>(ko.count), static_cast<unsigned long long>(total));
        require_no_overlap(ko, "keys_out", ka, "keys_a", false);
        require_no_overlap(ko, "keys_out", kb, "keys_b", false);
        gpuprim::MergeRequest request{};
        request.key_kind = gpuprim::key_kind(ka.dtype);
        request.key_bytes = static_cast<uint32_t>(gpuprim::dtype_size(ka.dtype));
        request.descending = enum_bits(order) == GPUPRIM_ORDER_DESCENDING;
        request.keys_a = ka.data;
        request.count_a = ka.count;
        request.keys_b = kb.data;
        request.count_b = kb.count;
        request.keys_out = ko.data;
        if (given == 3) {
            Buffer &va = ctx.resolve(values_a, "values_a");
            Buffer &vb = ctx.resolve(values_b, "values_b");
            Buffer &vo = ctx.resolve(values_out, "values_out");
            require_same_dtype(vb, "values_b", va, "values_a");
            require_same_dtype(vo, "values_out", va, "values_a");
            require_same_count(va, "values_a", ka, "keys_a");
            require_same_count(vb, "values_b", kb, "keys_b");
            require_same_count(vo, "values_out", ko, "keys_out");
            require_no_overlap(vo, "values_out", ka, "keys_a", false);
            require_no_overlap(vo, "values_out", kb, "keys_b", false);
            require_no_overlap(vo, "values_out", va, "values_a", false);
            require_no_overlap(vo, "values_out", vb, "values_b", false);
            require_no_overlap(vo, "values_out", ko, "keys_out", false);
            require_no_overlap(ko, "keys_out", va, "values_a", false);
            require_no_overlap(ko, "keys_out", vb, "values_b", false);
            request.values_a = va.data;
            request.values_b = vb.data;
            request.values_out = vo.data;
            request.value_bytes = static_cast<uint32_t>(gpuprim::dtype_size(va.dtype));
        }
        if (total == 0) return;
        ctx.backend->merge(request);
    });
}

}  // extern "C"
