// SPDX-License-Identifier: Apache-2.0
// The keyed reductions (experimental): reduce-by-key (runs of equal
// consecutive keys) and group-by (equal keys anywhere, in sort order). Both
// follow the rules of the calls whose output size depends on the data
// (gpuprim.h, at gpuprim_select): count sinks, outputs at least the keys'
// count, outputs apart from the inputs and each other.
#include "api/validate.h"
#include "core/context.h"
#include "core/dtype.h"

#include <gpuprim/gpuprim.h>

using gpuprim::Buffer;
using gpuprim::Context;
using gpuprim::fail;
using namespace gpuprim::api;  // guarded() and the argument rules

namespace {

constexpr const char *kKeysPhrase = "the keys' count";

uint32_t element_bytes(const Buffer &buffer) { return static_cast<uint32_t>(gpuprim::dtype_size(buffer.dtype)); }

// An output of the keys' dtype (keys_out), if given.
const Buffer *keys_output(Context &ctx, gpuprim_buffer_t handle, const Buffer &keys) {
    if (!handle) return nullptr;
    const Buffer &out = ctx.resolve(handle, "keys_out");
    require_same_dtype(out, "keys_out", keys, "keys");
    require_at_least(out, "keys_out", keys.count, kKeysPhrase);
    return &out;
}

// An index-typed output (lengths, counts, inverse), if given: the keys'
// count fits it, and it holds at least that many elements.
const Buffer *index_output(Context &ctx, gpuprim_buffer_t handle, const char *name, uint64_t count) {
    if (!handle) return nullptr;
    const Buffer &buffer = ctx.resolve(handle, name);
    require_index_output(buffer, name, count, kKeysPhrase);
    require_at_least(buffer, name, count, kKeysPhrase);
    return &buffer;
}

// The aggregate's results: values' dtype, at least the keys' count.
const Buffer &results_output(Context &ctx, gpuprim_buffer_t handle, const Buffer &values, uint64_t count) {
    const Buffer &out = ctx.resolve(handle, "results");
    require_same_dtype(out, "results", values, "values");
    require_at_least(out, "results", count, kKeysPhrase);
    return out;
}

}  // namespace

extern "C" {

gpuprim_status_t gpuprim_reduce_by_key(gpuprim_context_t context, gpuprim_buffer_t keys, gpuprim_buffer_t values,
                                       gpuprim_op_t op, gpuprim_buffer_t keys_out, gpuprim_buffer_t results,
                                       gpuprim_buffer_t lengths, uint64_t *count, gpuprim_buffer_t count_out) {
    return guarded(__func__, context, [&](Context &ctx) {
        require_op(op);
        const Buffer &in = ctx.resolve(keys, "keys");
        const Buffer &vals = ctx.resolve(values, "values");
        require_same_count(vals, "values", in, "keys");
        const Buffer *out = keys_output(ctx, keys_out, in);
        const Buffer &reduced = results_output(ctx, results, vals, in.count);
        const Buffer *length = index_output(ctx, lengths, "lengths", in.count);
        const Buffer *count_buffer = nullptr;
        const gpuprim::CountSink sink = count_sink(ctx, count, count_out, in.count, &count_buffer);
        const NamedBuffer inputs[] = {{&in, "keys"}, {&vals, "values"}};
        const NamedBuffer outputs[] = {
            {out, "keys_out"}, {&reduced, "results"}, {length, "lengths"}, {count_buffer, "count_out"}};
        require_outputs_apart(outputs, 4, inputs, 2);

        gpuprim::ReduceByKeyRequest request{};
        request.key_bytes = element_bytes(in);
        request.keys = in.data;
        request.count = in.count;
        request.op = static_cast<gpuprim_op_t>(enum_bits(op));
        request.value_dtype = vals.dtype;
        request.values = vals.data;
        request.keys_out = out ? out->data : nullptr;
        request.results = reduced.data;
        if (length) {
            request.lengths = length->data;
            request.length_bytes = element_bytes(*length);
        }
        request.runs = sink;
        ctx.backend->reduce_by_key(request);
    });
}

gpuprim_status_t gpuprim_group_by(gpuprim_context_t context, gpuprim_buffer_t keys, gpuprim_buffer_t values,
                                  gpuprim_op_t op, gpuprim_buffer_t keys_out, gpuprim_buffer_t counts,
                                  gpuprim_buffer_t results, gpuprim_buffer_t inverse, uint64_t *count,
                                  gpuprim_buffer_t count_out) {
    return guarded(__func__, context, [&](Context &ctx) {
        require_op(op);
        const Buffer &in = ctx.resolve(keys, "keys");
        if ((values == nullptr) != (results == nullptr))
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
                 "'values' and 'results' are both NULL or both given; here '%s' is NULL",
                 values ? "results" : "values");
        const Buffer *vals = nullptr;
        const Buffer *reduced = nullptr;
        if (values) {
            vals = &ctx.resolve(values, "values");
            require_same_count(*vals, "values", in, "keys");
            reduced = &results_output(ctx, results, *vals, in.count);
        }
        if (!keys_out && !counts && !results && !inverse)
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
                 "'keys_out', 'counts', 'results' and 'inverse' are all NULL: group-by writes at least one of them");
        const Buffer *out = keys_output(ctx, keys_out, in);
        const Buffer *sizes = index_output(ctx, counts, "counts", in.count);
        const Buffer *groups_of = index_output(ctx, inverse, "inverse", in.count);
        const Buffer *count_buffer = nullptr;
        const gpuprim::CountSink sink = count_sink(ctx, count, count_out, in.count, &count_buffer);
        const NamedBuffer inputs[] = {{&in, "keys"}, {vals, "values"}};
        const NamedBuffer outputs[] = {{out, "keys_out"},
                                       {sizes, "counts"},
                                       {reduced, "results"},
                                       {groups_of, "inverse"},
                                       {count_buffer, "count_out"}};
        require_outputs_apart(outputs, 5, inputs, 2);

        gpuprim::GroupByRequest request{};
        request.key_kind = gpuprim::key_kind(in.dtype);
        request.key_bytes = element_bytes(in);
        request.keys = in.data;
        request.count = in.count;
        request.op = static_cast<gpuprim_op_t>(enum_bits(op));
        request.value_dtype = vals ? vals->dtype : in.dtype;
        if (vals) {
            request.values = vals->data;
            request.results = reduced->data;
        }
        request.keys_out = out ? out->data : nullptr;
        if (sizes) {
            request.counts = sizes->data;
            request.count_bytes = element_bytes(*sizes);
        }
        if (groups_of) {
            request.inverse = groups_of->data;
            request.inverse_bytes = element_bytes(*groups_of);
        }
        request.groups = sink;
        ctx.backend->group_by(request);
    });
}

}  // extern "C"
