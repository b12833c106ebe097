// SPDX-License-Identifier: Apache-2.0
// The reduce entry points: reduce and dot, to the host or to a buffer, and
// argreduce (argmin / argmax, experimental).
#include "api/validate.h"
#include "core/context.h"

#include <gpuprim/gpuprim.h>

using gpuprim::Buffer;
using gpuprim::Context;
using gpuprim::fail;
using namespace gpuprim::api;  // guarded() and the argument rules

namespace {

// The checks shared by the *_to_buffer variants: one element of the input's dtype.
void require_result_buffer(const Buffer &result, const Buffer &input, const char *input_name) {
    require_same_dtype(result, "result", input, input_name);
    if (result.count == 0) fail(GPUPRIM_ERROR_SIZE_MISMATCH, "'result' has no elements; it needs at least one");
    // Only element 0 is written, so only that element must not alias the input.
    Buffer first = result;
    first.count = 1;
    require_no_overlap(first, "result", input, input_name, false);
}

void require_dot_operands(const Buffer &a, const Buffer &b) {
    require_same_dtype(a, "a", b, "b");
    require_same_count(a, "a", b, "b");
}

}  // namespace

extern "C" {

gpuprim_status_t gpuprim_reduce(gpuprim_context_t context, gpuprim_op_t op, gpuprim_buffer_t input, void *result) {
    return guarded(__func__, context, [&](Context &ctx) {
        require_op(op);
        Buffer &in = ctx.resolve(input, "input");
        require(result, "result");
        ctx.backend->reduce(op, in.dtype, in.data, in.count, result, true);
    });
}

gpuprim_status_t gpuprim_reduce_to_buffer(gpuprim_context_t context, gpuprim_op_t op, gpuprim_buffer_t input,
                                          gpuprim_buffer_t result) {
    return guarded(__func__, context, [&](Context &ctx) {
        require_op(op);
        Buffer &in = ctx.resolve(input, "input");
        Buffer &out = ctx.resolve(result, "result");
        require_result_buffer(out, in, "input");
        ctx.backend->reduce(op, in.dtype, in.data, in.count, out.data, false);
    });
}

gpuprim_status_t gpuprim_dot(gpuprim_context_t context, gpuprim_buffer_t a, gpuprim_buffer_t b, void *result) {
    return guarded(__func__, context, [&](Context &ctx) {
        Buffer &left = ctx.resolve(a, "a");
        Buffer &right = ctx.resolve(b, "b");
        require_dot_operands(left, right);
        require(result, "result");
        ctx.backend->dot(left.dtype, left.data, right.data, left.count, result, true);
    });
}

gpuprim_status_t gpuprim_dot_to_buffer(gpuprim_context_t context, gpuprim_buffer_t a, gpuprim_buffer_t b,
                                       gpuprim_buffer_t result) {
    return guarded(__func__, context, [&](Context &ctx) {
        Buffer &left = ctx.resolve(a, "a");
        Buffer &right = ctx.resolve(b, "b");
        Buffer &out = ctx.resolve(result, "result");
        require_dot_operands(left, right);
        require_result_buffer(out, left, "a");
        require_result_buffer(out, right, "b");
        ctx.backend->dot(left.dtype, left.data, right.data, left.count, out.data, false);
    });
}

gpuprim_status_t gpuprim_argreduce(gpuprim_context_t context, gpuprim_op_t op, gpuprim_buffer_t input,
                                   uint64_t *index) {
    return guarded(__func__, context, [&](Context &ctx) {
        require_min_max_op(op, "argreduce");
        Buffer &in = ctx.resolve(input, "input");
        require(index, "index");
        if (in.count == 0)
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
                 "argument 'input' has no elements: there is no argmin or argmax of an empty buffer");
        ctx.backend->argreduce(op, in.dtype, in.data, in.count, index);
    });
}

}  // extern "C"
