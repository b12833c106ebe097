// SPDX-License-Identifier: Apache-2.0
// The backend requests several families of entry points share (requests.h).
#include "api/requests.h"

#include "api/validate.h"
#include "core/checked_size.h"
#include "core/dtype.h"

namespace gpuprim::api {

namespace {

// The sort request that options and keys ask for (order, bit range), without
// its values.
SortRequest sort_request_for(const gpuprim_sort_options_t *options, const Buffer &keys_in, const Buffer *keys_out) {
    const gpuprim_sort_options_t chosen =
        read_options(options, "options", gpuprim_sort_options_init, "gpuprim_sort_options_init");
    static_assert(sizeof(gpuprim_sort_options_t) == 8 + 4 + 4 + 4 + 4, "gpuprim_sort_options_t has padding");
    require_reserved_zero(chosen.reserved, "options->reserved");
    if (chosen.order != GPUPRIM_ORDER_ASCENDING && chosen.order != GPUPRIM_ORDER_DESCENDING)
        fail(GPUPRIM_ERROR_INVALID_ENUM, "options->order = %d is not a gpuprim_order_t",
             static_cast<int>(chosen.order));
    SortRequest request{};
    request.key_kind = gpuprim::key_kind(keys_in.dtype);
    request.key_bytes = static_cast<uint32_t>(gpuprim::dtype_size(keys_in.dtype));
    const uint32_t key_bits = request.key_bytes * 8;
    const uint32_t end_bit = chosen.end_bit == 0 ? key_bits : chosen.end_bit;
    if (chosen.begin_bit >= end_bit || end_bit > key_bits)
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
             "options->begin_bit = %u and options->end_bit = %u: the bit range must satisfy "
             "begin_bit < end_bit <= %u, the bits of a %s key (end_bit 0 means %u)",
             chosen.begin_bit, chosen.end_bit, key_bits, gpuprim::dtype_name(keys_in.dtype), key_bits);
    request.begin_bit = chosen.begin_bit;
    request.end_bit = end_bit;
    request.descending = chosen.order == GPUPRIM_ORDER_DESCENDING;
    request.keys_in = keys_in.data;
    request.keys_out = keys_out ? keys_out->data : nullptr;
    request.count = keys_in.count;
    return request;
}

}  // namespace

SortKeys sort_keys_for(Context &ctx, const gpuprim_sort_options_t *options, gpuprim_buffer_t keys_in,
                       gpuprim_buffer_t keys_out, bool keys_out_optional) {
    Buffer &kin = ctx.resolve(keys_in, "keys_in");
    Buffer *kout = (keys_out || !keys_out_optional) ? &ctx.resolve(keys_out, "keys_out") : nullptr;
    SortRequest request = sort_request_for(options, kin, kout);
    if (kout) require_output_for(*kout, "keys_out", kin, "keys_in");
    return SortKeys{&kin, kout, request};
}

void add_sort_values(Context &ctx, SortRequest &request, const Buffer &kin, const Buffer &kout,
                     gpuprim_buffer_t values_in, gpuprim_buffer_t values_out) {
    if ((values_in == nullptr) != (values_out == nullptr))
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "'values_in' and 'values_out' must both be given or both be NULL");
    if (!values_in) return;
    Buffer &vin = ctx.resolve(values_in, "values_in");
    Buffer &vout = ctx.resolve(values_out, "values_out");
    require_same_count(kin, "keys_in", vin, "values_in");
    require_output_for(vout, "values_out", vin, "values_in");
    require_no_overlap(kin, "keys_in", vin, "values_in", false);
    require_no_overlap(kin, "keys_in", vout, "values_out", false);
    require_no_overlap(kout, "keys_out", vin, "values_in", false);
    require_no_overlap(kout, "keys_out", vout, "values_out", false);
    request.value_bytes = static_cast<uint32_t>(gpuprim::dtype_size(vin.dtype));
    request.values_in = vin.data;
    request.values_out = vout.data;
}

void add_argsort_indices(Context &ctx, SortRequest &request, const Buffer &kin, Buffer *kout, gpuprim_buffer_t indices,
                         uint64_t longest, bool longest_is_exact) {
    Buffer &idx = ctx.resolve(indices, "indices");
    require_index_dtype(idx, "argsort");
    require_same_count(kin, "keys_in", idx, "indices");
    require_no_overlap(kin, "keys_in", idx, "indices", false);
    if (kout) require_no_overlap(*kout, "keys_out", idx, "indices", false);
    if (longest_is_exact) require_index_fits(idx, longest, "argsort of");
    request.values_are_indices = true;
    request.largest_index = largest_index(idx.dtype);
    request.value_bytes = static_cast<uint32_t>(gpuprim::dtype_size(idx.dtype));
    request.values_in = nullptr;
    request.values_out = idx.data;
}

ScanOperands scan_operands(Context &ctx, const gpuprim_op_t &op, const gpuprim_scan_kind_t &kind,
                           gpuprim_buffer_t input, gpuprim_buffer_t output) {
    require_op(op);
    require_scan_kind(kind);
    Buffer &in = ctx.resolve(input, "input");
    Buffer &out = ctx.resolve(output, "output");
    require_output_for(out, "output", in, "input");
    return ScanOperands{&in, &out};
}

namespace {

void segments_defaults(gpuprim_segments_t *segments) { gpuprim_segments_init_rows(segments, 0, 0); }

}  // namespace

SegmentLayout segment_layout(Context &ctx, const gpuprim_segments_t *segments, uint64_t data_count) {
    require(segments, "segments");
    // 0.3.0's struct (32 bytes) ends before max_segment_length.
    const gpuprim_segments_t chosen =
        read_options(segments, "segments", segments_defaults,
                     "gpuprim_segments_init_rows() or gpuprim_segments_init_offsets", {32});
    SegmentLayout layout{};
    layout.data_count = data_count;
    if (!chosen.offsets) {
        const uint64_t rows = chosen.row_count, length = chosen.row_length;
        if (rows == kNullOffsetsMark && length == kNullOffsetsMark && chosen.max_segment_length == kNullOffsetsMark)
            fail(GPUPRIM_ERROR_NULL_POINTER,
                 "segments->offsets is NULL: gpuprim_segments_init_offsets() was given no offsets buffer "
                 "(uniform rows are made by gpuprim_segments_init_rows())");
        uint64_t covered = 0;
        if (!gpuprim::multiply_fits(rows, length, &covered))
            fail(GPUPRIM_ERROR_SIZE_MISMATCH,  // the header lists SIZE_MISMATCH (rows not covering the data), not
                                               // OVERFLOW
                 "segments: %llu rows of %llu elements overflow 64 bits, so they cannot cover the data",
                 static_cast<unsigned long long>(rows), static_cast<unsigned long long>(length));
        if (covered != data_count)
            fail(GPUPRIM_ERROR_SIZE_MISMATCH,
                 "segments: %llu rows of %llu elements are %llu elements, but the data has %llu",
                 static_cast<unsigned long long>(rows), static_cast<unsigned long long>(length),
                 static_cast<unsigned long long>(covered), static_cast<unsigned long long>(data_count));
        layout.segments = rows;
        layout.row_length = length;
        return layout;
    }
    Buffer &offsets = ctx.resolve(chosen.offsets, "segments->offsets");
    if (!is_index_dtype(offsets.dtype))
        fail(GPUPRIM_ERROR_DTYPE_MISMATCH, "'segments->offsets' is %s; offsets are I32, U32, I64 or U64",
             gpuprim::dtype_name(offsets.dtype));
    if (offsets.count == 0)
        fail(GPUPRIM_ERROR_SIZE_MISMATCH,
             "'segments->offsets' has no elements; it needs segment count + 1 (at least 1)");
    layout.segments = offsets.count - 1;
    layout.offsets = offsets.data;
    layout.offset_bytes = static_cast<uint32_t>(gpuprim::dtype_size(offsets.dtype));
    layout.offsets_signed = offsets.dtype == GPUPRIM_DTYPE_I32 || offsets.dtype == GPUPRIM_DTYPE_I64;
    layout.max_length = chosen.max_segment_length;
    return layout;
}

uint64_t longest_segment_by_shape(const SegmentLayout &layout, uint64_t data_count) {
    if (layout.offsets) return data_count;
    return layout.segments ? layout.row_length : 0;
}

void require_offsets_apart(const gpuprim_segments_t *segments, Context &ctx, const Buffer &output,
                           const char *output_name) {
    if (!segments->offsets) return;
    Buffer &offsets = ctx.resolve(segments->offsets, "segments->offsets");
    require_no_overlap(offsets, "segments->offsets", output, output_name, false);
}

// A top-k output holds exactly `slots` results.
static void require_slots(const Buffer &output, const char *name, uint64_t slots) {
    if (output.count != slots)
        fail(GPUPRIM_ERROR_SIZE_MISMATCH, "'%s' has %llu elements; top-k writes %llu", name,
             static_cast<unsigned long long>(output.count), static_cast<unsigned long long>(slots));
}

// The top-k request for keys_in: order, outputs (each NULL or exactly
// `slots` elements), and the positions the indices must hold (longest: the
// most elements one segment can have; exact unless offsets, which the
// backend checks).
TopkRequest topk_request_for(Context &ctx, const Buffer &kin, uint64_t k, const gpuprim_order_t &order,
                                      gpuprim_buffer_t keys_out, gpuprim_buffer_t indices, uint64_t slots,
                                      uint64_t longest, bool longest_is_exact) {
    require_order(order);
    if (!keys_out && !indices)
        fail(GPUPRIM_ERROR_NULL_POINTER, "'keys_out' and 'indices' are both NULL: top-k needs one of them to write");
    gpuprim::TopkRequest request{};
    request.key_kind = gpuprim::key_kind(kin.dtype);
    request.key_bytes = static_cast<uint32_t>(gpuprim::dtype_size(kin.dtype));
    request.descending = enum_bits(order) == GPUPRIM_ORDER_DESCENDING;
    request.keys_in = kin.data;
    request.k = k;
    Buffer *kout = keys_out ? &ctx.resolve(keys_out, "keys_out") : nullptr;
    Buffer *idx = indices ? &ctx.resolve(indices, "indices") : nullptr;
    if (kout) {
        require_same_dtype(kin, "keys_in", *kout, "keys_out");
        require_slots(*kout, "keys_out", slots);
        require_no_overlap(kin, "keys_in", *kout, "keys_out", false);
        request.keys_out = kout->data;
    }
    if (idx) {
        require_index_dtype(*idx, "top-k");
        require_slots(*idx, "indices", slots);
        require_no_overlap(kin, "keys_in", *idx, "indices", false);
        if (kout) require_no_overlap(*kout, "keys_out", *idx, "indices", false);
        if (longest_is_exact) require_index_fits(*idx, longest, "top-k over");
        request.indices = idx->data;
        request.index_bytes = static_cast<uint32_t>(gpuprim::dtype_size(idx->dtype));
        request.largest_index = largest_index(idx->dtype);
    }
    return request;
}


}  // namespace gpuprim::api
