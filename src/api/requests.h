// SPDX-License-Identifier: Apache-2.0
// The backend requests that several families of entry points build the same
// way, checking their arguments on the way: the sort request (sort, argsort
// and their segmented forms), the scan operands (scan, segmented scan) and
// the segment layout (segmented calls, top-k).
#pragma once

#include "core/backend.h"
#include "core/context.h"

#include <gpuprim/gpuprim.h>

#include <cstdint>

namespace gpuprim::api {

// The keys of a sort and the request they make (order and bit range from
// options, no values yet): keys_out mirrors keys_in, and may be NULL (out is
// then NULL) only where keys_out_optional (argsort).
struct SortKeys {
    Buffer *in;
    Buffer *out;
    SortRequest request;
};
SortKeys sort_keys_for(Context &ctx, const gpuprim_sort_options_t *options, gpuprim_buffer_t keys_in,
                       gpuprim_buffer_t keys_out, bool keys_out_optional);

// Adds values_in/values_out (both NULL: keys only) to a sort request.
void add_sort_values(Context &ctx, SortRequest &request, const Buffer &kin, const Buffer &kout,
                     gpuprim_buffer_t values_in, gpuprim_buffer_t values_out);

// The argsort part of a request: keys_out (NULL or the sorted keys) and the
// generated indices. longest: the most elements one segment (or the whole
// input) can have, whose last index must fit the indices' dtype (offsets:
// the data's count here; the backend checks the real longest segment).
void add_argsort_indices(Context &ctx, SortRequest &request, const Buffer &kin, Buffer *kout, gpuprim_buffer_t indices,
                         uint64_t longest, bool longest_is_exact);

// The operands of a scan (scan, segmented scan): op and kind valid, output
// mirroring input.
struct ScanOperands {
    Buffer *in;
    Buffer *out;
};
ScanOperands scan_operands(Context &ctx, const gpuprim_op_t &op, const gpuprim_scan_kind_t &kind,
                           gpuprim_buffer_t input, gpuprim_buffer_t output);

// What gpuprim_segments_init_offsets(segments, NULL) leaves in row_count,
// row_length and max_segment_length (the header says so), so that a call
// given these segments names the NULL offsets instead of reading "0 rows of
// 0". init_rows() always leaves max_segment_length 0, so its rows of
// UINT64_MAX x UINT64_MAX stay rows (SIZE_MISMATCH: they overflow).
constexpr uint64_t kNullOffsetsMark = UINT64_MAX;

// The layout a segments descriptor gives data of data_count elements: rows
// must cover the data exactly; offsets are checked by the backend.
SegmentLayout segment_layout(Context &ctx, const gpuprim_segments_t *segments, uint64_t data_count);

// The most elements one segment can have: the rows' length (none when there
// are no rows, whatever length they declare), or with offsets the data's
// count (the backend checks the real longest segment).
uint64_t longest_segment_by_shape(const SegmentLayout &layout, uint64_t data_count);

// Offsets are read by the call: they must not be written by it.
void require_offsets_apart(const gpuprim_segments_t *segments, Context &ctx, const Buffer &output,
                           const char *output_name);

// The top-k request for keys_in: order, outputs (each NULL or exactly
// `slots` elements; at least one given), and the positions the indices must
// hold (longest: the most elements one segment can have; checked only where
// exact: with offsets the backend checks, in the distributed call the caller
// checks the global count).
TopkRequest topk_request_for(Context &ctx, const Buffer &kin, uint64_t k, const gpuprim_order_t &order,
                             gpuprim_buffer_t keys_out, gpuprim_buffer_t indices, uint64_t slots, uint64_t longest,
                             bool longest_is_exact);

}  // namespace gpuprim::api
