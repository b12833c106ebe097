// SPDX-License-Identifier: Apache-2.0
// The select entry points (experimental): select, partition, unique and
// run-length encode, the calls whose output size depends on the data.
#include "api/validate.h"
#include "core/context.h"
#include "core/dtype.h"

#include <gpuprim/gpuprim.h>

#include <cstring>

using gpuprim::Buffer;
using gpuprim::Context;
using gpuprim::fail;
using namespace gpuprim::api;  // guarded() and the argument rules

namespace {

constexpr const char *kInputPhrase = "the input's count";

bool is_integer_dtype(gpuprim_dtype_t dtype) {
    const gpuprim::KeyKind kind = gpuprim::key_kind(dtype);
    return kind == gpuprim::KeyKind::Signed || kind == gpuprim::KeyKind::Unsigned;
}

// Which arguments a kind reads.
bool needs_scalar(int32_t kind) { return kind >= GPUPRIM_KEEP_LESS && kind <= GPUPRIM_KEEP_IN_RANGE; }

// The optional values / values_out pair: both NULL or both given; values
// one per input element, values_out of values' dtype and long enough.
struct ValuePair {
    const Buffer *values = nullptr;
    const Buffer *values_out = nullptr;
};

ValuePair value_pair(Context &ctx, gpuprim_buffer_t values, gpuprim_buffer_t values_out, const Buffer &input,
                     const char *input_name) {
    if ((values == nullptr) != (values_out == nullptr))
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "'values' and 'values_out' are both NULL or both given; here '%s' is NULL",
             values ? "values_out" : "values");
    ValuePair pair;
    if (!values) return pair;
    const Buffer &in = ctx.resolve(values, "values");
    const Buffer &out = ctx.resolve(values_out, "values_out");
    require_same_count(in, "values", input, input_name);
    require_same_dtype(out, "values_out", in, "values");
    require_at_least(out, "values_out", input.count, kInputPhrase);
    pair.values = &in;
    pair.values_out = &out;
    return pair;
}

// The predicate as a KeepRule; *flags_buffer: the flags' buffer, if any.
gpuprim::KeepRule keep_rule(Context &ctx, const gpuprim_predicate_t *predicate, const Buffer &input,
                            const Buffer **flags_buffer) {
    require(predicate, "predicate");
    const int32_t kind = predicate->kind;
    if (kind < GPUPRIM_KEEP_FLAGGED || kind > GPUPRIM_KEEP_NOT_NAN)
        fail(GPUPRIM_ERROR_INVALID_ENUM, "argument 'predicate->kind' = %d is not a gpuprim_keep_t", kind);
    gpuprim::KeepRule rule{};
    rule.kind = static_cast<gpuprim_keep_t>(kind);
    *flags_buffer = nullptr;
    if (kind == GPUPRIM_KEEP_FLAGGED) {
        if (!predicate->flags)
            fail(GPUPRIM_ERROR_NULL_POINTER, "argument 'predicate->flags' is NULL: GPUPRIM_KEEP_FLAGGED reads it");
        const Buffer &flags = ctx.resolve(predicate->flags, "predicate->flags");
        if (!is_integer_dtype(flags.dtype))
            fail(GPUPRIM_ERROR_DTYPE_MISMATCH, "'predicate->flags' is %s; flags are of an integer dtype",
                 gpuprim::dtype_name(flags.dtype));
        require_same_count(flags, "predicate->flags", input, "input");
        rule.flags = flags.data;
        rule.flag_bytes = static_cast<uint32_t>(gpuprim::dtype_size(flags.dtype));
        *flags_buffer = &flags;
        return rule;
    }
    if (predicate->flags)
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
             "argument 'predicate->flags' is given but predicate->kind = %d %s: flags are for "
             "GPUPRIM_KEEP_FLAGGED only (else NULL)",
             kind, needs_scalar(kind) ? "compares with the scalars" : "tests x alone");
    const size_t bytes = gpuprim::dtype_size(input.dtype);
    if (needs_scalar(kind)) {
        if (!predicate->scalar)
            fail(GPUPRIM_ERROR_NULL_POINTER, "argument 'predicate->scalar' is NULL: predicate->kind = %d reads it",
                 kind);
        std::memcpy(&rule.scalar_bits, predicate->scalar, bytes);  // little-endian: the low bytes
    }
    if (kind == GPUPRIM_KEEP_IN_RANGE) {
        if (!predicate->scalar_high)
            fail(GPUPRIM_ERROR_NULL_POINTER,
                 "argument 'predicate->scalar_high' is NULL: GPUPRIM_KEEP_IN_RANGE reads it");
        std::memcpy(&rule.scalar_high_bits, predicate->scalar_high, bytes);
    }
    return rule;
}

// select (positions may be given) and partition (output always given).
void select_or_partition(Context &ctx, bool partition, gpuprim_buffer_t input, gpuprim_buffer_t values,
                         const gpuprim_predicate_t *predicate, gpuprim_buffer_t output, gpuprim_buffer_t values_out,
                         gpuprim_buffer_t positions, uint64_t *count, gpuprim_buffer_t count_out) {
    const Buffer &in = ctx.resolve(input, "input");
    const Buffer *flags = nullptr;
    const gpuprim::KeepRule rule = keep_rule(ctx, predicate, in, &flags);
    const ValuePair pair = value_pair(ctx, values, values_out, in, "input");
    if (!partition && !output && !values_out && !positions)
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
             "'output', 'values_out' and 'positions' are all NULL: select writes at least one of them");
    const Buffer *out = nullptr;
    if (partition || output) {
        out = &ctx.resolve(output, "output");
        require_same_dtype(*out, "output", in, "input");
        require_at_least(*out, "output", in.count, kInputPhrase);
    }
    const Buffer *where = nullptr;
    if (positions) {
        where = &ctx.resolve(positions, "positions");
        require_index_output(*where, "positions", in.count, kInputPhrase);
        require_at_least(*where, "positions", in.count, kInputPhrase);
    }
    const Buffer *count_buffer = nullptr;
    const gpuprim::CountSink sink = count_sink(ctx, count, count_out, in.count, &count_buffer);
    const NamedBuffer inputs[] = {{&in, "input"}, {pair.values, "values"}, {flags, "predicate->flags"}};
    const NamedBuffer outputs[] = {
        {out, "output"}, {pair.values_out, "values_out"}, {where, "positions"}, {count_buffer, "count_out"}};
    require_outputs_apart(outputs, 4, inputs, 3);

    gpuprim::SelectRequest request{};
    request.dtype = in.dtype;
    request.input = in.data;
    request.count = in.count;
    request.keep = rule;
    request.output = out ? out->data : nullptr;
    if (pair.values) {
        request.values = pair.values->data;
        request.values_out = pair.values_out->data;
        request.value_bytes = static_cast<uint32_t>(gpuprim::dtype_size(pair.values->dtype));
    }
    if (where) {
        request.positions = where->data;
        request.position_bytes = static_cast<uint32_t>(gpuprim::dtype_size(where->dtype));
    }
    request.partition = partition;
    request.kept = sink;
    ctx.backend->select(request);
}

// An index-typed output of run-length encode (starts, lengths), if given.
const Buffer *runs_index_output(Context &ctx, gpuprim_buffer_t handle, const char *name, uint64_t count) {
    if (!handle) return nullptr;
    const Buffer &buffer = ctx.resolve(handle, name);
    require_index_output(buffer, name, count, kInputPhrase);
    require_at_least(buffer, name, count, kInputPhrase);
    return &buffer;
}

}  // namespace

extern "C" {

gpuprim_status_t gpuprim_select(gpuprim_context_t context, gpuprim_buffer_t input, gpuprim_buffer_t values,
                                const gpuprim_predicate_t *predicate, gpuprim_buffer_t output,
                                gpuprim_buffer_t values_out, gpuprim_buffer_t positions, uint64_t *count,
                                gpuprim_buffer_t count_out) {
    return guarded(__func__, context, [&](Context &ctx) {
        select_or_partition(ctx, false, input, values, predicate, output, values_out, positions, count, count_out);
    });
}

gpuprim_status_t gpuprim_partition(gpuprim_context_t context, gpuprim_buffer_t input, gpuprim_buffer_t values,
                                   const gpuprim_predicate_t *predicate, gpuprim_buffer_t output,
                                   gpuprim_buffer_t values_out, uint64_t *count, gpuprim_buffer_t count_out) {
    return guarded(__func__, context, [&](Context &ctx) {
        select_or_partition(ctx, true, input, values, predicate, output, values_out, nullptr, count, count_out);
    });
}

gpuprim_status_t gpuprim_unique(gpuprim_context_t context, gpuprim_buffer_t keys, gpuprim_buffer_t values,
                                gpuprim_buffer_t keys_out, gpuprim_buffer_t values_out, uint64_t *count,
                                gpuprim_buffer_t count_out) {
    return guarded(__func__, context, [&](Context &ctx) {
        const Buffer &in = ctx.resolve(keys, "keys");
        const ValuePair pair = value_pair(ctx, values, values_out, in, "keys");
        const Buffer &out = ctx.resolve(keys_out, "keys_out");
        require_same_dtype(out, "keys_out", in, "keys");
        require_at_least(out, "keys_out", in.count, "the keys' count");
        const Buffer *count_buffer = nullptr;
        const gpuprim::CountSink sink = count_sink(ctx, count, count_out, in.count, &count_buffer);
        const NamedBuffer inputs[] = {{&in, "keys"}, {pair.values, "values"}};
        const NamedBuffer outputs[] = {{&out, "keys_out"}, {pair.values_out, "values_out"}, {count_buffer, "count_out"}};
        require_outputs_apart(outputs, 3, inputs, 2);

        gpuprim::RunsRequest request{};
        request.key_bytes = static_cast<uint32_t>(gpuprim::dtype_size(in.dtype));
        request.keys = in.data;
        request.count = in.count;
        request.keys_out = out.data;
        if (pair.values) {
            request.values = pair.values->data;
            request.values_out = pair.values_out->data;
            request.value_bytes = static_cast<uint32_t>(gpuprim::dtype_size(pair.values->dtype));
        }
        request.runs = sink;
        ctx.backend->runs(request);
    });
}

gpuprim_status_t gpuprim_run_length_encode(gpuprim_context_t context, gpuprim_buffer_t input, gpuprim_runs_t runs,
                                           gpuprim_buffer_t keys_out, gpuprim_buffer_t starts,
                                           gpuprim_buffer_t lengths, uint64_t *count, gpuprim_buffer_t count_out) {
    return guarded(__func__, context, [&](Context &ctx) {
        require_enum(runs, GPUPRIM_RUNS_ALL, GPUPRIM_RUNS_NON_TRIVIAL, "runs", "gpuprim_runs_t");
        const Buffer &in = ctx.resolve(input, "input");
        if (!keys_out && !starts && !lengths)
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
                 "'keys_out', 'starts' and 'lengths' are all NULL: run-length encode writes at least one of them");
        const Buffer *out = nullptr;
        if (keys_out) {
            out = &ctx.resolve(keys_out, "keys_out");
            require_same_dtype(*out, "keys_out", in, "input");
            require_at_least(*out, "keys_out", in.count, kInputPhrase);
        }
        const Buffer *first = runs_index_output(ctx, starts, "starts", in.count);
        const Buffer *length = runs_index_output(ctx, lengths, "lengths", in.count);
        const Buffer *count_buffer = nullptr;
        const gpuprim::CountSink sink = count_sink(ctx, count, count_out, in.count, &count_buffer);
        const NamedBuffer inputs[] = {{&in, "input"}};
        const NamedBuffer outputs[] = {
            {out, "keys_out"}, {first, "starts"}, {length, "lengths"}, {count_buffer, "count_out"}};
        require_outputs_apart(outputs, 4, inputs, 1);

        gpuprim::RunsRequest request{};
        request.key_bytes = static_cast<uint32_t>(gpuprim::dtype_size(in.dtype));
        request.keys = in.data;
        request.count = in.count;
        request.keys_out = out ? out->data : nullptr;
        request.non_trivial_only = enum_bits(runs) == GPUPRIM_RUNS_NON_TRIVIAL;
        if (first) {
            request.starts = first->data;
            request.start_bytes = static_cast<uint32_t>(gpuprim::dtype_size(first->dtype));
        }
        if (length) {
            request.lengths = length->data;
            request.length_bytes = static_cast<uint32_t>(gpuprim::dtype_size(length->dtype));
        }
        request.runs = sink;
        ctx.backend->runs(request);
    });
}

}  // extern "C"
