// SPDX-License-Identifier: Apache-2.0
// The argument rules the C entry points share (validate.h).
#include "api/validate.h"

#include <initializer_list>

#include "core/checked_size.h"
#include "core/dtype.h"

namespace gpuprim::api {

gpuprim_status_t record(Context &context, gpuprim_status_t status, const char *message) {
    context.set_last_error(message);
    return status;
}

void require(const void *pointer, const char *name) {
    if (!pointer) fail(GPUPRIM_ERROR_NULL_POINTER, "argument '%s' is NULL", name);
}

void require_dtype(const gpuprim_dtype_t &dtype, const char *name) {
    require_enum(dtype, gpuprim::kDtypeFirst, gpuprim::kDtypeLast, name, "gpuprim_dtype_t");
}

void require_op(const gpuprim_op_t &op) { require_enum(op, GPUPRIM_OP_SUM, GPUPRIM_OP_MAX, "op", "gpuprim_op_t"); }

void require_min_max_op(const gpuprim_op_t &op, const char *writer) {
    require_op(op);
    if (enum_bits(op) == GPUPRIM_OP_SUM)
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
             "argument 'op' = GPUPRIM_OP_SUM does not apply to %s; it takes GPUPRIM_OP_MIN or GPUPRIM_OP_MAX",
             writer);
}

void require_scan_kind(const gpuprim_scan_kind_t &kind) {
    require_enum(kind, GPUPRIM_SCAN_INCLUSIVE, GPUPRIM_SCAN_EXCLUSIVE, "kind", "gpuprim_scan_kind_t");
}

void require_order(const gpuprim_order_t &order) {
    require_enum(order, GPUPRIM_ORDER_ASCENDING, GPUPRIM_ORDER_DESCENDING, "order", "gpuprim_order_t");
}

void require_side(const gpuprim_side_t &side) {
    require_enum(side, GPUPRIM_SIDE_LEFT, GPUPRIM_SIDE_RIGHT, "side", "gpuprim_side_t");
}

uint64_t byte_size(uint64_t count, gpuprim_dtype_t dtype, const char *name) {
    uint64_t bytes = 0;
    if (!gpuprim::multiply_fits(count, gpuprim::dtype_size(dtype), &bytes))
        fail(GPUPRIM_ERROR_OVERFLOW, "argument '%s' = %llu elements of %s is more than 2^64 bytes", name,
             static_cast<unsigned long long>(count), gpuprim::dtype_name(dtype));
    return bytes;
}

void require_same_dtype(const Buffer &a, const char *a_name, const Buffer &b, const char *b_name) {
    if (a.dtype != b.dtype)
        fail(GPUPRIM_ERROR_DTYPE_MISMATCH, "'%s' is %s but '%s' is %s", a_name, gpuprim::dtype_name(a.dtype), b_name,
             gpuprim::dtype_name(b.dtype));
}

void require_same_count(const Buffer &a, const char *a_name, const Buffer &b, const char *b_name) {
    if (a.count != b.count)
        fail(GPUPRIM_ERROR_SIZE_MISMATCH, "'%s' has %llu elements but '%s' has %llu", a_name,
             static_cast<unsigned long long>(a.count), b_name, static_cast<unsigned long long>(b.count));
}

namespace {

bool overlap(const Buffer &a, const Buffer &b) {
    if (a.bytes() == 0 || b.bytes() == 0) return false;
    auto a_begin = reinterpret_cast<uintptr_t>(a.data);
    auto b_begin = reinterpret_cast<uintptr_t>(b.data);
    return a_begin < b_begin + b.bytes() && b_begin < a_begin + a.bytes();
}

}  // namespace

void require_no_overlap(const Buffer &a, const char *a_name, const Buffer &b, const char *b_name, bool same_allowed) {
    bool same = a.data == b.data && a.count == b.count;
    if (same && same_allowed) return;
    if (&a == &b || overlap(a, b))
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "'%s' and '%s' overlap in memory%s", a_name, b_name,
             same_allowed ? " without being the same buffer" : "");
}

void require_output_for(const Buffer &output, const char *output_name, const Buffer &input, const char *input_name) {
    require_same_dtype(input, input_name, output, output_name);
    require_same_count(input, input_name, output, output_name);
    require_no_overlap(input, input_name, output, output_name, true);
}

void require_range(const Buffer &buffer, const char *buffer_name, uint64_t offset, uint64_t count) {
    if (offset > buffer.count || count > buffer.count - offset)
        fail(GPUPRIM_ERROR_OUT_OF_RANGE, "'offset' %llu + 'count' %llu is past the end of '%s' (%llu elements)",
             static_cast<unsigned long long>(offset), static_cast<unsigned long long>(count), buffer_name,
             static_cast<unsigned long long>(buffer.count));
}

bool is_index_dtype(gpuprim_dtype_t dtype) {
    return dtype == GPUPRIM_DTYPE_I32 || dtype == GPUPRIM_DTYPE_U32 || dtype == GPUPRIM_DTYPE_I64 ||
           dtype == GPUPRIM_DTYPE_U64;
}

uint64_t largest_index(gpuprim_dtype_t dtype) {
    switch (dtype) {
    case GPUPRIM_DTYPE_I32: return INT32_MAX;
    case GPUPRIM_DTYPE_U32: return UINT32_MAX;
    case GPUPRIM_DTYPE_I64: return INT64_MAX;
    default: return UINT64_MAX;
    }
}

void require_index_dtype(const Buffer &indices, const char *writer) {
    if (!is_index_dtype(indices.dtype))
        fail(GPUPRIM_ERROR_DTYPE_MISMATCH, "'indices' is %s; %s writes I32, U32, I64 or U64 indices",
             gpuprim::dtype_name(indices.dtype), writer);
}

void require_index_fits(const Buffer &indices, uint64_t longest, const char *keys_phrase) {
    if (longest > 0 && longest - 1 > largest_index(indices.dtype))
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "%s %llu keys: index %llu does not fit the %s 'indices' (at most %llu)",
             keys_phrase, static_cast<unsigned long long>(longest), static_cast<unsigned long long>(longest - 1),
             gpuprim::dtype_name(indices.dtype), static_cast<unsigned long long>(largest_index(indices.dtype)));
}

void require_position_fits(const Buffer &indices, uint64_t largest, const char *what) {
    if (largest > largest_index(indices.dtype))
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "%s %llu does not fit the %s 'indices' (at most %llu)", what,
             static_cast<unsigned long long>(largest), gpuprim::dtype_name(indices.dtype),
             static_cast<unsigned long long>(largest_index(indices.dtype)));
}

void require_outputs_apart(const NamedBuffer *outputs, size_t output_count, const NamedBuffer *inputs,
                           size_t input_count) {
    for (size_t o = 0; o < output_count; ++o) {
        if (!outputs[o].buffer) continue;
        for (size_t i = 0; i < input_count; ++i)
            if (inputs[i].buffer)
                require_no_overlap(*outputs[o].buffer, outputs[o].name, *inputs[i].buffer, inputs[i].name, false);
        for (size_t p = 0; p < o; ++p)
            if (outputs[p].buffer)
                require_no_overlap(*outputs[o].buffer, outputs[o].name, *outputs[p].buffer, outputs[p].name, false);
    }
}

void require_at_least(const Buffer &output, const char *name, uint64_t least, const char *phrase) {
    if (output.count < least)
        fail(GPUPRIM_ERROR_SIZE_MISMATCH, "'%s' has %llu elements, fewer than %s (%llu)", name,
             static_cast<unsigned long long>(output.count), phrase, static_cast<unsigned long long>(least));
}

void require_index_output(const Buffer &output, const char *name, uint64_t largest, const char *what) {
    if (!is_index_dtype(output.dtype))
        fail(GPUPRIM_ERROR_DTYPE_MISMATCH, "'%s' is %s; it takes I32, U32, I64 or U64", name,
             gpuprim::dtype_name(output.dtype));
    if (largest > largest_index(output.dtype))
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "%s %llu does not fit the %s '%s' (at most %llu)", what,
             static_cast<unsigned long long>(largest), gpuprim::dtype_name(output.dtype), name,
             static_cast<unsigned long long>(largest_index(output.dtype)));
}

CountSink count_sink(Context &context, uint64_t *count, gpuprim_buffer_t count_out, uint64_t largest,
                     const Buffer **count_buffer) {
    *count_buffer = nullptr;
    if (!count && !count_out)
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
             "'count' and 'count_out' are both NULL: the count goes to at least one of them");
    CountSink sink{};
    sink.host = count;
    if (count_out) {
        const Buffer &out = context.resolve(count_out, "count_out");
        require_index_output(out, "count_out", largest, "the input's count");
        if (out.count == 0)
            fail(GPUPRIM_ERROR_SIZE_MISMATCH, "'count_out' has no elements: the count goes to its element 0");
        sink.device = out.data;
        sink.device_bytes = static_cast<uint32_t>(gpuprim::dtype_size(out.dtype));
        *count_buffer = &out;
    }
    return sink;
}

uint64_t options_bytes_to_read(const void *options, uint64_t size, size_t known,
                               std::initializer_list<uint64_t> older_sizes, const char *name, const char *init_name) {
    constexpr uint64_t kLargestAccepted = 4096;
    bool older = false;
    char accepted[96] = "";  // ", 24 or 32 (older releases')"
    size_t used = 0;
    for (uint64_t older_size : older_sizes) {
        older = older || size == older_size;
        const int wrote = std::snprintf(accepted + used, sizeof accepted - used, "%s%llu",
                                        used ? " or " : ", or an older release's ",
                                        static_cast<unsigned long long>(older_size));
        if (wrote > 0 && size_t(wrote) < sizeof accepted - used) used += size_t(wrote);
    }
    if ((size < known && !older) || size > kLargestAccepted)
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
             "%s->struct_size = %llu, expected %zu%s (or a newer header's larger size): initialize it with %s()",
             name, static_cast<unsigned long long>(size), known, accepted, init_name);
    if (size < known) return size;  // an older release's struct
    const auto *bytes = static_cast<const unsigned char *>(options);
    for (uint64_t i = known; i < size; ++i)
        if (bytes[i] != 0)
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
                 "%s->struct_size = %llu: byte %llu, past the %zu bytes this version "
                 "(libgpuprim %s) knows, is not zero: a newer field was set that this version "
                 "cannot honour",
                 name, static_cast<unsigned long long>(size), static_cast<unsigned long long>(i), known,
                 gpuprim_version_string());
    return known;
}

void require_reserved_zero(uint64_t value, const char *field) {
    if (value != 0)
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
             "%s = %llu: it must be 0 (room for a later option, which this version, libgpuprim %s, does not "
             "know)",
             field, static_cast<unsigned long long>(value), gpuprim_version_string());
}

void copy_message(char *destination, size_t capacity, const char *message) {
    if (!destination || capacity == 0) return;
    std::snprintf(destination, capacity, "%s", message);
}

}  // namespace gpuprim::api
