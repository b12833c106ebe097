#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the seed corpus of the API fuzz target (test/reliability/corpus/).

Each seed is a small program in the byte language fuzz_api.cpp reads: one
byte picks the operation (op % 22; bytes >= 224 the argsort, segmented and top-k calls; 253 searchsorted, the
histograms, merge, select, partition, unique and run-length encode (by the next byte); 254 argreduce;
255 the distributed calls), the following bytes its arguments, in
the order the target reads them. The seeds start the fuzzer (and the replay
test) in the interesting places: sorting NaNs and signed zeros with values,
aliasing wrapped views, buffers of the other context and destroyed ones,
absurd counts, unknown enum values, odd context options.

    python3 test/reliability/make_seeds.py   # rewrites corpus/seed_*
"""
import os
import struct

# Operations (fuzz_api.cpp, Harness::run).
CREATE, WRAP, DESTROY, FILL, UPLOAD, DOWNLOAD, REDUCE, REDUCE_TO_BUFFER = 0, 2, 3, 4, 6, 7, 8, 9
DOT, DOT_TO_BUFFER, SCAN, SORT, GET_INFO, QUERIES, CONTEXT_CREATE, GLOBALS = 10, 11, 12, 14, 16, 17, 18, 19
SORT_WITH_OPTIONS = 21
# Op bytes >= 224 (fuzz_api.cpp): (op - 224) % 6 picks argsort, the segmented calls and top-k.
ARGSORT, SEGMENTED_SORT, SEGMENTED_ARGSORT, SEGMENTED_REDUCE, SEGMENTED_SCAN, TOPK = 224, 225, 226, 227, 228, 229
# Op byte 254: gpuprim_argreduce (Harness::op_argreduce): context, op, input, index byte (255: NULL).
ARGREDUCE = 254
# Op byte 253: searchsorted and the histograms; the next byte % 5 picks the call: 0 gpuprim_searchsorted
# (Harness::op_searchsorted: context, side, order, sorted, queries, indices, rows byte: 200 + rows for
# gpuprim_searchsorted_rows, less for the flat call), 1 gpuprim_histogram_even
# (context, input, counts, bound mode (255: NULL lower, 254: NULL upper), lower and upper as 8 bytes each),
# 2 gpuprim_histogram_range (context, input, edges, counts), 3 gpuprim_bincount (context, input, counts)
# (a call byte of 240 and more, 241-243 here: the _rows form of calls 1-3, a rows byte (% 8) after the rest),
# 4 gpuprim_merge (context, order, keys_a, keys_b, keys_out, values mode (odd: three values buffers follow;
# 254: values_a only), the values buffers).
# Call bytes 244, 249 and 254 of op byte 253 (% 5 == 4, >= 240; merge's seeds use 4): select, partition,
# unique and run-length encode (Harness::op_select: the next byte % 4 picks the call; then context, input,
# a mode byte (bit 0 values and values_out, bit 1 values alone, bit 2 the host count, bit 3 count_out,
# bit 4 no output / keys_out, bit 5 positions / starts, bit 6 lengths, bit 7 flags with a comparison), the
# buffers the mode names, run-length encode's runs byte, select's and partition's predicate byte (255 NULL,
# 254 NULL scalars, else the kind % 12), their flags, and the two scalars as 8 bytes each).
# Call bytes 240, 245, 250 and 255 of op byte 253 (% 5 == 0, >= 240; searchsorted's seeds use 0):
# reduce-by-key and group-by (Harness::op_reduce_by_key: the next byte, odd for group-by; then context,
# keys, the op byte (draw_enum), a mode byte (bit 0 values, bit 1 results, bit 2 the host count, bit 3
# count_out, bit 4 keys_out, bit 5 lengths / counts, bit 6 inverse, group-by only) and the buffers the
# mode names, in that order).
SEARCH_COUNT = 253
SELECT_CALL = 244
KEYED_CALL = 245
SELECT, PARTITION, UNIQUE, RUN_LENGTH = range(4)
# Op byte 255: the distributed calls (Harness::op_distributed); its next byte % 8 picks the call.
DISTRIBUTED = 255
D_REDUCE, D_SCAN, D_SORT, D_ARGSORT, D_TOPK, D_GET_RANK, D_ATTACH, D_DETACH = range(8)
I32, U32, I64, U64, F32, F64, F16, BF16, I8, U8, I16, U16 = range(12)
CTX0, CTX1, NULL_CTX, FAKE_CTX = 0, 7, 250, 251


def u8(v):
    return bytes([v & 0xFF])


def u16(v):
    return struct.pack("<H", v)


def u64(v):
    return struct.pack("<Q", v)


def small_count(n):  # draw_count, mode < 170: u8 % 40
    assert n < 40
    return u8(0) + u8(n)


def medium_count(n):  # mode < 215: u16 % 4096
    return u8(180) + u16(n)


def edge_count(k):  # mode 215..234: kEdges[mode % 10]
    mode = 220 + ((k - 220) % 10)
    return u8(mode)


def absurd_count(v):  # mode >= 235: u64 | 2^60
    return u8(240) + u64(v)


def buf(index, other_context=False):  # draw_buffer: a live buffer, by index
    return u8(30 if other_context else 100) + u8(index)


NULL_BUF = u8(0)
JUNK_BUF = u8(6)


def stale(k=0):
    return u8(8 + k)  # choice 8..19 picks stale_[choice % size]


def create(dtype, count, ctx=CTX0):
    return u8(CREATE) + u8(ctx) + u8(dtype) + count + u8(0)


def wrap(dtype, offset8, count, ctx=CTX0, misaligned=0):
    placement = 15 if misaligned else 0
    body = u8(WRAP) + u8(ctx) + u8(dtype) + u8(placement) + u16(offset8)
    if misaligned:
        body += u8(misaligned - 1)
    return body + u8(100) + u16(count)


def wrap_huge(dtype, ctx=CTX0):
    return u8(WRAP) + u8(ctx) + u8(dtype) + u8(0) + u16(0) + u8(240) + u64(0x123456789)


def fill_palette(index, picks, floats):
    """op_fill with mode >= 96: one draw_value per element, each a palette
    pick (draw_value: a mode byte >= 48 picks palette[mode % size], 28
    entries for floats, 16 for integers)."""
    body = u8(FILL) + u8(index) + u8(200) + u8(60)  # mode, then `repeated`
    for p in picks:
        body += u8(p + (56 if floats else 64))
    return body


def sort(order, keys_in, keys_out=None, values_in=None, values_out=None, ctx=CTX0):
    """keys_out / values_out None: in place. The shape byte says which
    handles follow: % 4 == 0 a keys_out, % 3 != 0 values, then % 5 == 0 a
    values_out (7 and 11 drop one of the values handles)."""
    want_keys_out, want_values = keys_out is not None, values_in is not None
    want_values_out = values_out is not None
    shape = next(x for x in range(256) if x not in (7, 11, 255)
                 and (x % 4 == 0) == want_keys_out and (x % 3 != 0) == want_values
                 and (not want_values or (x % 5 == 0) == want_values_out))
    body = u8(SORT) + u8(ctx) + u8(order) + u8(shape) + keys_in
    if shape % 4 == 0:
        body += keys_out
    if shape % 3 != 0:
        body += values_in
        if shape % 5 == 0:
            body += values_out
    return body


def scan(op, kind, input_, output=None, ctx=CTX0):
    if output is None:
        return u8(SCAN) + u8(ctx) + u8(op) + u8(kind) + input_ + u8(0)  # in place
    return u8(SCAN) + u8(ctx) + u8(op) + u8(kind) + input_ + u8(100) + output


def reduce_(op, input_, ctx=CTX0):
    return u8(REDUCE) + u8(ctx) + u8(op) + input_ + u8(0)


def argreduce(op, input_, ctx=CTX0, null_index=False):
    return u8(ARGREDUCE) + u8(ctx) + u8(op) + input_ + u8(255 if null_index else 0)


def searchsorted(side, order, sorted_, queries, indices, ctx=CTX0, rows=None):
    # rows: None for gpuprim_searchsorted, else gpuprim_searchsorted_rows with rows 0..4
    rows_byte = 0 if rows is None else 200 + rows
    return u8(SEARCH_COUNT) + u8(0) + u8(ctx) + u8(side) + u8(order) + sorted_ + queries + indices + u8(rows_byte)


# rows: None for the flat histogram calls, else their _rows form with rows 0..7 (call byte 240 + call).
def histogram_call_byte(call, rows):
    return u8(call if rows is None else 240 + call)


def rows_byte(rows):
    return b"" if rows is None else u8(rows)


def histogram_even(input_, counts, lower, upper, ctx=CTX0, bound_mode=0, rows=None):
    # call 1; lower and upper: 8 bytes each, the input dtype's value in the low bytes
    return (u8(SEARCH_COUNT) + histogram_call_byte(1, rows) + u8(ctx) + input_ + counts + u8(bound_mode) + lower
            + upper + rows_byte(rows))


def histogram_range(input_, edges, counts, ctx=CTX0, rows=None):
    return u8(SEARCH_COUNT) + histogram_call_byte(2, rows) + u8(ctx) + input_ + edges + counts + rows_byte(rows)


def bincount(input_, counts, ctx=CTX0, rows=None):
    return u8(SEARCH_COUNT) + histogram_call_byte(3, rows) + u8(ctx) + input_ + counts + rows_byte(rows)


def merge(order, keys_a, keys_b, keys_out, values=None, ctx=CTX0, only_values_a=None):
    body = u8(SEARCH_COUNT) + u8(4) + u8(ctx) + u8(order) + keys_a + keys_b + keys_out
    if only_values_a is not None:
        return body + u8(254) + only_values_a
    if values is None:
        return body + u8(0)
    return body + u8(1) + values[0] + values[1] + values[2]


def select_family(call, input_, mode, output=None, values=None, values_out=None, positions=None, lengths=None,
                  count_out=None, runs=0, predicate=0, flags=None, scalar=0, high=0, ctx=CTX0):
    """One op_select call; the mode byte decides which of the buffers are read (they must be given)."""
    body = u8(SEARCH_COUNT) + u8(SELECT_CALL) + u8(call) + u8(ctx) + input_ + u8(mode)
    if call != RUN_LENGTH and mode & 3:
        body += values
        if not mode & 2:
            body += values_out
    if not mode & 16 or call in (PARTITION, UNIQUE):
        body += output
    if call in (SELECT, RUN_LENGTH) and mode & 32:
        body += positions
    if call == RUN_LENGTH and mode & 64:
        body += lengths
    if mode & 8:
        body += count_out
    if call == RUN_LENGTH:
        body += u8(runs)
    if call in (SELECT, PARTITION):
        body += u8(predicate)
        if predicate != 255 and (predicate % 12 == 0 or mode & 128):
            body += flags
        body += u64(scalar) + u64(high)
    return body


def keyed(group_by, keys, op, mode, values=None, results=None, count_out=None, keys_out=None, lengths=None,
          inverse=None, ctx=CTX0):
    """One op_reduce_by_key call; the mode byte decides which of the buffers are read (they must be given)."""
    body = u8(SEARCH_COUNT) + u8(KEYED_CALL) + u8(1 if group_by else 0) + u8(ctx) + keys + u8(op) + u8(mode)
    for bit, handle in ((1, values), (2, results), (8, count_out), (16, keys_out), (32, lengths)):
        if mode & bit:
            body += handle
    if group_by and mode & 64:
        body += inverse
    return body


def f32_bits(v):
    return struct.unpack("<I", struct.pack("<f", v))[0]


def reduce_to_buffer(op, input_, result, ctx=CTX0):
    return u8(REDUCE_TO_BUFFER) + u8(ctx) + u8(op) + input_ + result


def dot(a, b, ctx=CTX0):
    return u8(DOT) + u8(ctx) + a + u8(100) + b + u8(0)


def dot_to_buffer(a, b, result, ctx=CTX0):
    return u8(DOT_TO_BUFFER) + u8(ctx) + a + u8(100) + b + result


def upload(handle, offset, count_byte, data=b"", ctx=CTX0):
    return u8(UPLOAD) + u8(ctx) + handle + offset + u8(0) + u8(count_byte) + u8(0) + data


def download(handle, offset, count_byte, ctx=CTX0):
    return u8(DOWNLOAD) + u8(ctx) + handle + offset + u8(0) + u8(count_byte) + u8(0)


def sort_with_options(order, keys_in, keys_out=None, values_in=None, values_out=None, ctx=CTX0,
                      options="range", begin=0, end_extra=0, width=16):
    """op_sort_with_options: options "null", "default" (the order only) or
    "range": bits [begin, begin + 1 + end_extra) of a key of `width` bits
    (the target reads begin % width, then end_extra % (width - begin))."""
    mode = {"null": 0, "default": 1, "range": 3}[options]
    body = u8(SORT_WITH_OPTIONS) + u8(ctx) + u8(order) + u8(mode) + u8(0)  # range_mode 0: inside the width
    rest = sort(order, keys_in, keys_out, values_in, values_out, ctx)[3:]  # shape byte and handles
    body += rest
    if options == "range":
        body += u8(begin % width) + u8(end_extra)
    return body


def rows(length, extra_rows=0):
    """draw_segments: uniform rows of `length` (data_count / length rows; +extra_rows:
    rows that do not cover the data), struct_size right."""
    twist = 0 if extra_rows else 100
    return u8(0) + u8(length) + u8(twist) + u8(100)


def fresh_offsets(dtype_index, steps, lead=0, bad=None, size=100):
    """draw_segments: a fresh offsets buffer (dtype_index: I32, U32, I64, U64)
    of len(steps) - 1 segments; `lead` elements before the first; steps are
    the step bytes (64..199: length step % (left + 1) % 9); bad: (where, how);
    size: the size_mode byte (< 8: struct_size cases; >> 5: max_segment_length,
    4: 1 + size % 4, 5: 5 + size % 8, 6: n / 2 + size % 4, 7: huge, else none)."""
    body = u8(1) + u8(dtype_index) + u8(len(steps) - 1) + u8(lead) + u8(200 if lead else 0)
    body += b"".join(u8(x) for x in steps)
    body += u8(0) + u8(bad[0]) + u8(bad[1]) if bad else u8(100)
    return body + u8(size)


def offsets_check(mode, ctx=CTX0):
    """op_context_queries 9: gpuprim_context_set_offsets_check (mode byte: < 232 mode % 2, else not a mode)."""
    return u8(QUERIES) + u8(ctx) + u8(9) + u8(mode)


def check_deferred(ctx=CTX0):
    """op_context_queries 10: gpuprim_context_check_deferred."""
    return u8(QUERIES) + u8(ctx) + u8(10)


def synchronize(ctx=CTX0):
    """op_context_queries 2: gpuprim_context_synchronize (which reports a deferred failure too)."""
    return u8(QUERIES) + u8(ctx) + u8(2)


def argsort(order, keys_in, indices, keys_out="null", segments=None, ctx=CTX0):
    """gpuprim_argsort (segments None) or gpuprim_segmented_argsort; default
    options with the order; keys_out "null", "in place" or a handle."""
    shape = 1 if keys_out == "null" else 2 if keys_out == "in place" else 0
    body = u8(SEGMENTED_ARGSORT if segments else ARGSORT) + u8(ctx) + u8(order) + u8(1) + u8(0) + u8(shape) + keys_in
    if shape == 0:
        body += keys_out
    return body + indices + (segments or b"")


def segmented_sort(order, segments, keys_in, keys_out=None, values_in=None, values_out=None, ctx=CTX0):
    rest = sort(order, keys_in, keys_out, values_in, values_out, ctx)[3:]
    return u8(SEGMENTED_SORT) + u8(ctx) + u8(order) + u8(1) + u8(0) + rest + segments


def segmented_reduce(op, input_, output, segments, ctx=CTX0):
    return u8(SEGMENTED_REDUCE) + u8(ctx) + u8(op) + input_ + output + segments


def segmented_scan(op, kind, input_, segments, output=None, ctx=CTX0):
    body = u8(SEGMENTED_SCAN) + u8(ctx) + u8(op) + u8(kind) + input_
    body += u8(0) if output is None else u8(100) + output
    return body + segments


def topk(order, keys_in, k="outputs", keys_out=None, indices=None, segments=None, ctx=CTX0, both_null=False):
    """gpuprim_topk (segments None) or gpuprim_segmented_topk (op_topk). k:
    "outputs" (what the first output's count asks for: its count, or its
    count / segments), a number below 70, "n-1", "n", "n+1" of the keys'
    count, or "all ones" (2^64 - 1). Outputs: a handle or None; both_null passes neither."""
    shape = 255 if both_null else 2 if keys_out is not None and indices is not None else 0 if keys_out is not None else 1
    if k == "outputs":
        k_bytes = u8(0) + u8(0)
    elif k == "all ones":  # k_mode 232: kEdges[0] = 2^64 - 1
        k_bytes = u8(232) + u8(0)
    elif k in ("n-1", "n", "n+1"):
        k_bytes = u8({"n-1": 171, "n": 172, "n+1": 170}[k]) + u8(0)
    else:
        assert k < 70
        k_bytes = u8(150) + u8(k)
    body = u8(TOPK) + u8(ctx) + u8(1 if segments else 0) + u8(order) + k_bytes + u8(shape) + keys_in
    if shape % 4 != 1:
        body += keys_out if keys_out is not None else NULL_BUF
    if shape % 4 != 0:
        body += indices if indices is not None else NULL_BUF
    return body + (segments or b"")


def distributed(call, a, b=None, c=None, d=None, op=0, kind=0, order=0, k=1, extra=b"", ctx=CTX0):
    # op_distributed: context, call, four buffers, op, scan kind, order, k (a non-zero byte, then k), then
    # the call's own bytes (extra).
    null = u8(0)  # draw_buffer: a byte below 6 is NULL
    return (u8(DISTRIBUTED) + u8(ctx) + u8(call) + a + (b or null) + (c or null) + (d or null)
            + u8(op) + u8(kind) + u8(order) + u8(1) + u8(k) + extra)


def destroy(handle, ctx=CTX0):
    return u8(DESTROY) + u8(ctx) + handle


# Half palette indexes (draw_value for f16/bf16: mode % 25): 0 +0, 1 -0, 2 1,
# 3 -1, 8 max, 10 +inf, 11 -inf, 12 qNaN, 13 -qNaN, 14 least subnormal,
# 21..24 NaN payloads of both signs (24: all ones).
HALF_PICKS = [12, 1, 0, 13, 10, 11, 21, 22, 23, 24, 2, 2, 3, 1, 0, 14]

# Float palette indexes (draw_value: mode % 28): 0 +0, 1 -0, 2 1, 3 -1,
# 10 +inf, 11 -inf, 12 qNaN, 13 -qNaN, 14 denorm, 17 max, 18 lowest,
# 24..27 NaN payloads of both signs (27: all ones).
FLOAT_PICKS = [12, 1, 0, 13, 10, 11, 24, 25, 26, 27, 2, 2, 3, 1, 0, 14]

SEEDS = {
    # Sort float keys with NaNs of both signs, signed zeros and duplicates,
    # carrying i64 values, ascending then descending; MIN/MAX over NaNs.
    "seed_sort_specials": (
        create(F32, small_count(16)) + create(I64, small_count(16)) + create(F32, small_count(16))
        + create(I64, small_count(16))
        + fill_palette(0, FLOAT_PICKS, True) + fill_palette(1, [3, 3, 1, 0] * 4, False)
        + sort(0, buf(0), buf(2), buf(1), buf(3))
        + sort(1, buf(0), None, buf(1))
        + reduce_(1, buf(0)) + reduce_(2, buf(0)) + reduce_(0, buf(0))
        + scan(1, 0, buf(0), buf(2)) + scan(0, 1, buf(0))),
    # Integer sums that wrap, dot, results into buffers, scans in place.
    "seed_integers": (
        create(I32, small_count(33)) + create(I32, small_count(33)) + create(I32, small_count(1))
        + create(U64, small_count(7))
        + fill_palette(0, ([7, 8, 9, 10, 14] * 7)[:33], False)
        + fill_palette(1, [7, 10, 14] * 11, False)
        + dot(buf(0), buf(1)) + dot_to_buffer(buf(0), buf(1), buf(2))
        + reduce_to_buffer(0, buf(0), buf(2)) + reduce_to_buffer(2, buf(0), buf(0))
        + scan(0, 0, buf(0)) + scan(0, 1, buf(1), buf(0)) + scan(1, 1, buf(3))),
    # Wrapped views of one host arena: in place through two handles,
    # partial overlap (INVALID_ARGUMENT), misaligned wrap, NULL data.
    "seed_aliasing": (
        wrap(F64, 0, 16) + wrap(F64, 0, 16) + wrap(F64, 4, 16) + wrap(F32, 16, 8, misaligned=2)
        + fill_palette(0, FLOAT_PICKS, True)
        + scan(0, 0, buf(0), buf(1)) + scan(0, 0, buf(0), buf(2))
        + sort(0, buf(0), buf(2)) + sort(0, buf(1), None, buf(2))
        + reduce_to_buffer(0, buf(0), buf(2)) + dot_to_buffer(buf(0), buf(1), buf(1))),
    # Buffers of the other context, destroyed buffers, NULL and junk handles.
    "seed_handles": (
        create(U32, small_count(8)) + create(U32, small_count(8), ctx=CTX1)
        + reduce_(0, buf(0, other_context=True), ctx=CTX1)
        + sort(0, buf(1, other_context=True), None, buf(0, other_context=True))
        + destroy(buf(0)) + reduce_(0, stale(0)) + destroy(stale(0)) + destroy(NULL_BUF)
        + reduce_(0, JUNK_BUF) + scan(0, 0, NULL_BUF) + download(stale(0), u8(0) + u8(0), 1)
        + u8(GET_INFO) + u8(CTX0) + JUNK_BUF + u8(7)
        + u8(GET_INFO) + u8(CTX1) + u8(100) + u8(0) + u8(7)
        + u8(QUERIES) + u8(CTX1) + u8(6)  # destroy context 1 with its buffer, make a new one
        + reduce_(0, stale(1))),
    # Absurd counts: OVERFLOW or OUT_OF_MEMORY before allocating; ranges
    # past the end, offsets near 2^64.
    "seed_huge_counts": (
        create(F64, edge_count(220)) + create(F32, edge_count(221)) + create(I64, edge_count(227))
        + create(U32, absurd_count(0)) + create(F64, absurd_count(0xFFFFFFFFFFFF))
        + wrap_huge(F64) + wrap_huge(U32)
        + create(I32, small_count(10))
        + upload(buf(0), u8(230) + u8(1), 3, bytes(12))
        + upload(buf(0), u8(0) + u8(8), 3, bytes(12))
        + download(buf(0), u8(0) + u8(9), 2) + download(buf(0), u8(0) + u8(10), 0)),
    # The narrow dtypes: f16/bf16 keys with NaNs of both signs and signed
    # zeros sorted with u16/i8 values, whole and by bit ranges, both orders;
    # their sums, MIN/MAX and scans; i8 sums that wrap.
    "seed_narrow_dtypes": (
        create(F16, small_count(16)) + create(U16, small_count(16)) + create(BF16, small_count(16))
        + create(I8, small_count(16)) + create(F16, small_count(16))
        + u8(FILL) + u8(0) + u8(200) + u8(60) + b"".join(u8(p + 50) for p in HALF_PICKS)
        + u8(FILL) + u8(2) + u8(200) + u8(60) + b"".join(u8(p + 50) for p in HALF_PICKS)
        + fill_palette(3, [7, 8, 9, 10] * 4, False)
        + sort_with_options(0, buf(0), buf(4), buf(1), None, begin=10, end_extra=5)
        + sort_with_options(1, buf(2), None, buf(3), options="default")
        + sort_with_options(0, buf(0), None, None, None, options="null")
        + sort_with_options(1, buf(3), None, None, None, begin=4, end_extra=3, width=8)
        + sort(1, buf(2), None, buf(1))
        + reduce_(0, buf(0)) + reduce_(1, buf(2)) + reduce_(2, buf(0)) + reduce_(0, buf(3))
        + dot(buf(2), buf(2)) + scan(0, 0, buf(0), buf(4)) + scan(0, 1, buf(3)) + scan(2, 0, buf(2))),
    # Argsort and the segmented calls: rows, offsets of each dtype with gaps
    # before and after, empty segments, a bad offset; NaNs and signed zeros.
    "seed_segmented": (
        create(F32, small_count(16)) + create(U32, small_count(16)) + create(F32, small_count(4))
        + create(I64, small_count(16)) + create(F16, small_count(16)) + create(F32, small_count(16))
        + fill_palette(0, [12, 1, 0, 13, 10, 11, 21, 22, 23, 24, 2, 2, 3, 1, 0, 14], True)
        + u8(FILL) + u8(4) + u8(200) + u8(60) + b"".join(u8(p + 50) for p in HALF_PICKS)
        + argsort(0, buf(0), buf(1), keys_out=buf(5)) + argsort(1, buf(0), buf(3))
        + argsort(0, buf(4), buf(1), keys_out="in place")
        + argsort(0, buf(0), buf(1), segments=rows(4)) + argsort(1, buf(0), buf(3), keys_out=buf(5), segments=rows(8))
        + argsort(0, buf(4), buf(3), segments=fresh_offsets(2, [70, 68, 64, 0, 75], lead=2))
        + segmented_sort(0, rows(4), buf(0), buf(5), buf(4), None)
        + segmented_sort(1, fresh_offsets(1, [66, 0, 72, 69]), buf(0), None, buf(1), None)
        + segmented_sort(0, fresh_offsets(0, [65, 67, 70], bad=(1, 0)), buf(0), buf(5))
        + segmented_reduce(0, buf(0), buf(2), rows(4)) + segmented_reduce(1, buf(0), buf(2), rows(4))
        + segmented_reduce(2, buf(4), buf(2), rows(4)) + segmented_reduce(0, buf(0), buf(2), rows(4, 1))
        + segmented_reduce(0, buf(0), buf(2), fresh_offsets(3, [66, 0, 0, 68, 71], lead=3))
        + segmented_scan(0, 0, buf(0), rows(4), buf(5)) + segmented_scan(2, 1, buf(4), rows(2))
        + segmented_scan(0, 1, buf(0), fresh_offsets(2, [67, 0, 70, 66], lead=1), buf(5))
        + segmented_scan(1, 0, buf(3), fresh_offsets(0, [70, 71], bad=(2, 1)))),
    # The deferred offsets check (issue 39): DEFERRED, a reduce, scan, sort and top-k on bad offsets
    # (negative, past the end, decreasing) or past max_segment_length succeed and write nothing, then
    # check_deferred and synchronize report; a 0.3.0 struct (32 bytes) with its promise unread; an
    # invalid mode; back to WAIT, where the same faults fail at the call; bad contexts.
    "seed_deferred_offsets": (
        create(I32, small_count(16)) + create(I32, small_count(4)) + create(I32, small_count(16))
        + create(I32, small_count(16)) + create(U32, small_count(8))
        + fill_palette(0, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], False)
        + check_deferred() + offsets_check(1)
        + segmented_reduce(0, buf(0), buf(1), fresh_offsets(0, [66, 67, 0, 68, 69], bad=(2, 0)))
        + check_deferred() + check_deferred()
        + segmented_scan(0, 0, buf(0), fresh_offsets(1, [66, 67, 70], bad=(3, 1)), buf(2))
        + segmented_sort(1, fresh_offsets(2, [70, 68, 64], size=129), buf(0), buf(3))
        + topk(1, buf(0), k=2, indices=buf(4), segments=fresh_offsets(3, [70, 72, 0, 71, 68], bad=(3, 2)))
        + synchronize() + synchronize()
        + segmented_reduce(2, buf(0), buf(1), fresh_offsets(3, [66, 67, 0, 68, 69], size=194))
        + segmented_reduce(1, buf(0), buf(1), fresh_offsets(1, [66, 70, 0, 68, 69], size=1))
        + check_deferred() + offsets_check(240) + offsets_check(255)
        + segmented_reduce(0, buf(0), buf(1), fresh_offsets(0, [66, 67, 0, 68, 69], bad=(4, 0)))
        + offsets_check(0) + check_deferred()
        + segmented_reduce(0, buf(0), buf(1), fresh_offsets(0, [66, 67, 0, 68, 69], bad=(1, 0)))
        + segmented_sort(0, fresh_offsets(2, [70, 68, 64], size=136), buf(0), buf(3))
        + check_deferred() + offsets_check(1, ctx=CTX1) + check_deferred(ctx=CTX1)
        + check_deferred(ctx=NULL_CTX) + check_deferred(ctx=FAKE_CTX) + offsets_check(1, ctx=FAKE_CTX)
        + offsets_check(1, ctx=NULL_CTX)),
    # Top-k: flat and per segment (rows, CSR offsets with segments shorter
    # than k), both orders, keys and/or indices of each index dtype; NaNs of
    # both signs, signed zeros, ties; k = 0, k = n; errors: k > n, rows
    # shorter than k, both outputs NULL, a bad order, a bad offset.
    "seed_topk": (
        create(F32, small_count(16)) + create(I32, small_count(4)) + create(F32, small_count(4))
        + create(U64, small_count(16)) + create(F16, small_count(16)) + create(F16, small_count(8))
        + create(I64, small_count(8)) + create(F32, small_count(12)) + create(U32, small_count(0))
        + create(F32, small_count(16))
        + fill_palette(0, [12, 1, 0, 13, 10, 11, 24, 25, 2, 2, 3, 1, 0, 14, 2, 27], True)
        + u8(FILL) + u8(4) + u8(200) + u8(60) + b"".join(u8(p + 50) for p in HALF_PICKS)
        + topk(1, buf(0), keys_out=buf(2), indices=buf(1)) + topk(0, buf(0), indices=buf(1))
        + topk(0, buf(0), keys_out=buf(2)) + topk(1, buf(0), k="n", indices=buf(3))
        + topk(1, buf(0), k="n", keys_out=buf(9), indices=buf(3))
        + topk(0, buf(4), keys_out=buf(5)) + topk(1, buf(4), indices=buf(6))
        + topk(0, buf(0), indices=buf(8))
        + topk(1, buf(0), indices=buf(6), segments=rows(4)) + topk(0, buf(4), keys_out=buf(5), indices=buf(6),
                                                                  segments=rows(4))
        + topk(1, buf(0), keys_out=buf(7), segments=fresh_offsets(3, [70, 66, 0, 75], lead=1))
        + topk(0, buf(0), keys_out=buf(7), indices=buf(3), segments=fresh_offsets(0, [65, 0, 69, 250]))
        + topk(0, buf(0), indices=buf(8), segments=fresh_offsets(2, [80, 66, 0, 64]))
        + topk(1, buf(0), k="n+1", keys_out=buf(2)) + topk(0, buf(0), both_null=True)
        + topk(240, buf(0), keys_out=buf(2)) + topk(0, buf(0), k=5, indices=buf(6), segments=rows(4))
        + topk(1, buf(0), keys_out=buf(7), segments=fresh_offsets(1, [66, 67, 70, 71], bad=(1, 0)))
        + topk(0, buf(0), keys_out=buf(0)) + topk(1, buf(0), keys_out=buf(2), indices=buf(2))),
    # The fuzzer's find (issue #30): one segment of k = 2^64 - 1 results is
    # a real output count of 2^64 - 1 (SIZE_MISMATCH against 0 indices), not
    # "unknown" (the model's old sentinel).
    "regress_topk_slots_all_ones": (
        create(F32, small_count(16)) + create(U64, small_count(0)) + create(F32, small_count(0))
        + topk(1, buf(0), k="all ones", indices=buf(1), segments=fresh_offsets(3, [0, 70]))
        + topk(0, buf(0), k="all ones", keys_out=buf(2), indices=buf(1), segments=fresh_offsets(1, [0, 66]))),
    # The distributed calls with no communicator attached (every one must fail and change nothing),
    # attaching (no engine in the fuzz build), get_rank and detach, on good and bad contexts.
    "seed_distributed": (
        create(U32, small_count(8)) + create(U32, small_count(8)) + create(I64, small_count(8))
        + create(F32, small_count(8))
        + distributed(D_REDUCE, buf(0), extra=u8(0))
        + distributed(D_REDUCE, buf(3), op=1, extra=u8(255))
        + distributed(D_SCAN, buf(0), buf(1), kind=1)
        + distributed(D_SORT, buf(0), None, buf(1))
        + distributed(D_SORT, buf(0), buf(3), buf(1), buf(2))
        + distributed(D_ARGSORT, buf(0), None, buf(1), buf(2), extra=u8(0))
        + distributed(D_TOPK, buf(0), None, buf(1), buf(2), k=3, order=1)
        + distributed(D_GET_RANK, buf(0), extra=u8(0))
        + distributed(D_GET_RANK, buf(0), extra=u8(255))
        + distributed(D_ATTACH, buf(0), extra=u8(2) + u8(0))
        + distributed(D_ATTACH, buf(0), extra=u8(1) + u8(0))
        + distributed(D_ATTACH, buf(0), extra=u8(2) + u8(255))
        + distributed(D_ATTACH, buf(0), extra=u8(0) + u8(0))
        + distributed(D_DETACH, buf(0))
        + distributed(D_SORT, buf(0), None, buf(1), ctx=NULL_CTX)
        + distributed(D_REDUCE, buf(0), extra=u8(0), ctx=FAKE_CTX)
        + distributed(D_ATTACH, buf(0), extra=u8(2) + u8(0), ctx=FAKE_CTX)
        + distributed(D_DETACH, buf(0), ctx=NULL_CTX)),
    # argmin / argmax: NaNs of both signs, signed zeros, infinities, ties,
    # integers of every width; op SUM and unknown ops, an empty input, a NULL
    # index, a stale buffer, one of the other context, bad contexts.
    "seed_argreduce": (
        create(F32, small_count(16)) + create(I8, small_count(16)) + create(F16, small_count(16))
        + create(U64, small_count(16)) + create(F64, small_count(0)) + create(I32, small_count(3), ctx=CTX1)
        + create(F64, small_count(16))
        + fill_palette(0, [12, 1, 0, 13, 10, 11, 21, 22, 23, 24, 2, 2, 3, 1, 0, 14], True)
        + fill_palette(1, [7, 8, 9, 10] * 4, False)
        + u8(FILL) + u8(2) + u8(200) + u8(60) + b"".join(u8(p + 50) for p in HALF_PICKS)
        + fill_palette(3, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], False)
        + fill_palette(6, [1, 0, 1, 1, 0, 0, 1, 0, 2, 1, 0, 1, 0, 0, 1, 1], True)  # signed zeros, one 1.0
        + argreduce(1, buf(0)) + argreduce(2, buf(0)) + argreduce(1, buf(1)) + argreduce(2, buf(1))
        + argreduce(1, buf(2)) + argreduce(2, buf(2)) + argreduce(1, buf(3)) + argreduce(2, buf(3))
        + argreduce(1, buf(6)) + argreduce(2, buf(6))
        + argreduce(0, buf(0)) + argreduce(240, buf(0)) + argreduce(1, buf(4)) + argreduce(2, buf(0), null_index=True)
        + argreduce(1, NULL_BUF) + argreduce(1, buf(5, other_context=True)) + argreduce(1, JUNK_BUF)
        + argreduce(1, buf(0), ctx=NULL_CTX) + argreduce(2, buf(0), ctx=FAKE_CTX)
        + destroy(buf(6)) + argreduce(1, stale(2))),
    # searchsorted: sorted keys of both orders (floats with -inf, -0, +0, +inf and NaNs of both signs;
    # integers with duplicates and the type's max and min), queries of specials, both sides, every index
    # dtype; an unknown side and order, queries of another dtype, float indices, a count mismatch,
    # indices over the queries, NULL, stale and foreign buffers, bad contexts.
    "seed_searchsorted": (
        create(F32, small_count(14)) + create(F32, small_count(16)) + create(U64, small_count(16))
        + create(I32, small_count(12)) + create(I32, small_count(16)) + create(U32, small_count(0))
        + create(F32, small_count(14)) + create(I64, small_count(3), ctx=CTX1) + create(I32, small_count(16))
        + fill_palette(0, [11, 7, 3, 1, 1, 0, 4, 2, 5, 6, 10, 12, 12, 13], True)
        + fill_palette(1, FLOAT_PICKS, True)
        + fill_palette(3, [8, 0, 0, 1, 1, 2, 2, 3, 4, 5, 6, 7], False)
        + fill_palette(4, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], False)
        + fill_palette(6, [13, 12, 12, 10, 6, 5, 2, 4, 0, 1, 1, 3, 7, 11], True)
        + searchsorted(0, 0, buf(0), buf(1), buf(2)) + searchsorted(1, 0, buf(0), buf(1), buf(2))
        + searchsorted(0, 1, buf(6), buf(1), buf(2)) + searchsorted(1, 1, buf(6), buf(1), buf(8))
        + searchsorted(0, 0, buf(3), buf(4), buf(8)) + searchsorted(1, 0, buf(3), buf(4), buf(2))
        + searchsorted(0, 0, buf(5), buf(4), buf(2)) + searchsorted(0, 0, buf(4), buf(4), buf(2))
        + searchsorted(240, 0, buf(0), buf(1), buf(2)) + searchsorted(0, 250, buf(0), buf(1), buf(2))
        + searchsorted(0, 0, buf(0), buf(4), buf(2)) + searchsorted(0, 0, buf(0), buf(6), buf(1))
        + searchsorted(0, 0, buf(0), buf(1), buf(5)) + searchsorted(0, 0, buf(3), buf(4), buf(4))
        + searchsorted(0, 0, NULL_BUF, buf(1), buf(2)) + searchsorted(0, 0, buf(0), NULL_BUF, buf(2))
        + searchsorted(0, 0, buf(0), buf(1), NULL_BUF) + searchsorted(0, 0, buf(7, other_context=True), buf(1), buf(2))
        + searchsorted(1, 0, buf(0), buf(1), JUNK_BUF)
        + searchsorted(0, 0, buf(0), buf(1), buf(2), ctx=NULL_CTX) + searchsorted(1, 1, buf(0), buf(1), buf(2), ctx=FAKE_CTX)
        + searchsorted(0, 0, buf(3), buf(4), buf(2), rows=2) + searchsorted(1, 0, buf(3), buf(4), buf(2), rows=4)
        + searchsorted(0, 0, buf(3), buf(4), buf(2), rows=0) + searchsorted(0, 0, buf(0), buf(1), buf(2), rows=3)
        + destroy(buf(8)) + searchsorted(0, 0, buf(3), buf(4), stale(0))),
    # Histograms: even bins of floats (NaNs, +-0, +-inf on and off the bounds) and integers (the type's
    # extremes), edges in order and out of order, bincount with values outside the bins; bad bounds (NaN,
    # infinite, lower >= upper, NULL), counts of a wrong dtype or none, edges of another dtype or too few,
    # a count mismatch, counts over the input, bad handles and contexts.
    "seed_histogram": (
        create(F32, small_count(16)) + create(U32, small_count(4)) + create(I32, small_count(12))
        + create(U64, small_count(5)) + create(F32, small_count(5)) + create(I8, small_count(16))
        + create(U32, small_count(0)) + create(F64, small_count(3)) + create(I16, small_count(3), ctx=CTX1)
        + fill_palette(0, FLOAT_PICKS, True)
        + fill_palette(2, [8, 0, 0, 1, 1, 2, 2, 3, 4, 5, 6, 7], False)
        + fill_palette(4, [11, 3, 0, 2, 10], True)
        + fill_palette(5, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], False)
        + histogram_even(buf(0), buf(1), u64(0xBF800000), u64(0x3F800000))
        + histogram_even(buf(0), buf(3), u64(0xFF7FFFFF), u64(0x7F7FFFFF))
        + histogram_even(buf(2), buf(1), u64(0xFFFFFFFB), u64(5))
        + histogram_even(buf(2), buf(3), u64(0x80000000), u64(0x7FFFFFFF))
        + histogram_even(buf(5), buf(1), u64(0x80), u64(0x7F))
        + histogram_range(buf(0), buf(4), buf(1)) + histogram_range(buf(2), buf(2), buf(1))
        + histogram_range(buf(0), buf(0), buf(3))
        + bincount(buf(2), buf(3)) + bincount(buf(5), buf(1)) + bincount(buf(0), buf(1))
        + histogram_even(buf(0), buf(1), u64(0x7FC00000), u64(0x3F800000))
        + histogram_even(buf(0), buf(1), u64(0), u64(0x7F800000))
        + histogram_even(buf(0), buf(1), u64(0x3F800000), u64(0x3F800000))
        + histogram_even(buf(7), buf(1), u64(0xFFEFFFFFFFFFFFFF), u64(0x7FEFFFFFFFFFFFFF))
        + histogram_even(buf(0), buf(1), u64(0), u64(0x3F800000), bound_mode=255)
        + histogram_even(buf(0), buf(1), u64(0), u64(0x3F800000), bound_mode=254)
        + histogram_even(buf(0), buf(2), u64(0), u64(0x3F800000)) + histogram_even(buf(0), buf(6), u64(0), u64(1))
        + histogram_range(buf(0), buf(7), buf(1)) + histogram_range(buf(0), buf(1), buf(3))
        + histogram_range(buf(0), buf(4), buf(3)) + bincount(buf(2), buf(2))
        + histogram_even(buf(0), NULL_BUF, u64(0), u64(1)) + bincount(buf(2), buf(8, other_context=True))
        + bincount(JUNK_BUF, buf(1)) + bincount(buf(2), buf(1), ctx=NULL_CTX)
        + histogram_range(buf(0), buf(4), buf(1), ctx=FAKE_CTX)
        + destroy(buf(6)) + bincount(buf(2), stale(0))),
    # Per-row histograms (the _rows calls): floats with NaNs and +-inf and integers split into 1 to 6 rows,
    # one bin a row, edges shared by the rows; rows 0, inputs and counts not a multiple of the rows, counts
    # not rows * (edges - 1), no counts, bad handles.
    "seed_histogram_rows": (
        create(F32, small_count(16)) + create(U32, small_count(4)) + create(I32, small_count(12))
        + create(U64, small_count(6)) + create(F32, small_count(3)) + create(I8, small_count(16))
        + create(U32, small_count(0)) + create(U64, small_count(8)) + create(I16, small_count(3), ctx=CTX1)
        + fill_palette(0, FLOAT_PICKS, True)
        + fill_palette(2, [8, 0, 0, 1, 1, 2, 2, 3, 4, 5, 6, 7], False)
        + fill_palette(4, [11, 3, 0], True)
        + fill_palette(5, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], False)
        + histogram_even(buf(0), buf(1), u64(0xBF800000), u64(0x3F800000), rows=2)
        + histogram_even(buf(0), buf(1), u64(0xFF7FFFFF), u64(0x7F7FFFFF), rows=4)
        + histogram_even(buf(2), buf(3), u64(0xFFFFFFFB), u64(5), rows=2)
        + histogram_even(buf(2), buf(3), u64(0x80000000), u64(0x7FFFFFFF), rows=3)
        + histogram_even(buf(5), buf(7), u64(0x80), u64(0x7F), rows=4)
        + histogram_range(buf(0), buf(4), buf(1), rows=2) + histogram_range(buf(0), buf(4), buf(7), rows=4)
        + histogram_range(buf(2), buf(2), buf(3), rows=3) + histogram_range(buf(0), buf(4), buf(1), rows=1)
        + bincount(buf(2), buf(3), rows=2) + bincount(buf(5), buf(7), rows=4) + bincount(buf(5), buf(1), rows=1)
        + bincount(buf(2), buf(3), rows=6) + bincount(buf(5), buf(1), rows=2)
        + histogram_even(buf(0), buf(1), u64(0xBF800000), u64(0x3F800000), rows=0)
        + histogram_even(buf(0), buf(1), u64(0xBF800000), u64(0x3F800000), rows=3)
        + bincount(buf(2), buf(3), rows=4) + bincount(buf(2), buf(6), rows=2) + bincount(buf(2), buf(3), rows=0)
        + histogram_range(buf(0), buf(4), buf(3), rows=2) + histogram_range(buf(0), buf(4), buf(7), rows=0)
        + histogram_even(buf(0), buf(1), u64(0x3F800000), u64(0xBF800000), rows=2)
        + histogram_even(buf(0), buf(1), u64(0), u64(0x3F800000), bound_mode=255, rows=2)
        + bincount(buf(0), buf(1), rows=2) + bincount(buf(2), buf(8, other_context=True), rows=2)
        + bincount(JUNK_BUF, buf(1), rows=2) + bincount(buf(2), buf(1), ctx=NULL_CTX, rows=2)
        + histogram_range(buf(0), buf(4), buf(1), ctx=FAKE_CTX, rows=2)
        + destroy(buf(6)) + bincount(buf(2), stale(0), rows=2)),
    # Merge: sorted runs of floats (NaNs, +-0, +-inf) and integers with ties across them, both orders,
    # keys only and with values, empty runs, runs out of order; an unknown order, mixed dtypes, a wrong
    # output count, some values NULL, outputs over the inputs, bad handles and contexts.
    "seed_merge": (
        create(F32, small_count(14)) + create(F32, small_count(14)) + create(F32, small_count(28))
        + create(I32, small_count(12)) + create(I32, small_count(12)) + create(I32, small_count(24))
        + create(U16, small_count(14)) + create(U16, small_count(14)) + create(U16, small_count(28))
        + create(F32, small_count(0)) + create(I64, small_count(3), ctx=CTX1) + create(F32, small_count(27))
        + fill_palette(0, [11, 7, 3, 1, 1, 0, 4, 2, 5, 6, 10, 12, 12, 13], True)
        + fill_palette(1, [11, 3, 1, 0, 0, 2, 2, 5, 6, 6, 10, 10, 12, 13], True)
        + fill_palette(3, [8, 0, 0, 1, 1, 2, 2, 3, 4, 5, 6, 7], False)
        + fill_palette(4, [8, 8, 0, 1, 2, 2, 2, 3, 3, 5, 7, 7], False)
        + fill_palette(6, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13], False)
        + fill_palette(7, [13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0], False)
        + merge(0, buf(0), buf(1), buf(2)) + merge(0, buf(0), buf(1), buf(2), values=(buf(6), buf(7), buf(8)))
        + merge(0, buf(3), buf(4), buf(5)) + merge(0, buf(3), buf(4), buf(5), values=(buf(6), buf(7), buf(8)))
        + merge(1, buf(4), buf(3), buf(5)) + merge(0, buf(9), buf(1), buf(0))
        + merge(0, buf(1), buf(1), buf(2)) + merge(0, buf(7), buf(6), buf(8))
        + merge(240, buf(0), buf(1), buf(2)) + merge(0, buf(0), buf(3), buf(2)) + merge(0, buf(0), buf(1), buf(11))
        + merge(0, buf(0), buf(1), buf(2), only_values_a=buf(6)) + merge(0, buf(0), buf(1), buf(0))
        + merge(0, buf(0), buf(1), buf(2), values=(buf(6), buf(7), buf(2)))
        + merge(0, NULL_BUF, buf(1), buf(2)) + merge(0, buf(0), buf(10, other_context=True), buf(2))
        + merge(0, buf(0), JUNK_BUF, buf(2)) + merge(0, buf(0), buf(1), buf(2), ctx=NULL_CTX)
        + merge(1, buf(0), buf(1), buf(2), ctx=FAKE_CTX)
        + destroy(buf(2)) + merge(0, buf(0), buf(1), stale(0))),
    # Select, partition, unique, run-length encode: floats with NaNs, +-0 and +-inf in runs, integers with
    # runs; every keep kind, flags of two widths, values, positions, starts and lengths, the count on the
    # host and in count_out; then the errors: an unknown kind and runs, NULL predicate and scalars, flags
    # with a comparison, float flags, no output, short outputs, overlaps, no count sink, a float count_out,
    # bad handles and contexts.
    "seed_select": (
        create(F32, small_count(14)) + create(F32, small_count(14)) + create(I32, small_count(12))
        + create(I32, small_count(12)) + create(U8, small_count(14)) + create(I16, small_count(14))
        + create(I16, small_count(14)) + create(U32, small_count(14)) + create(U64, small_count(2))
        + create(I64, small_count(12)) + create(F32, small_count(5)) + create(I64, small_count(3), ctx=CTX1)
        + create(F64, small_count(14))
        + fill_palette(0, [11, 11, 7, 3, 3, 1, 1, 0, 4, 2, 2, 5, 6, 6], True)
        + fill_palette(2, [8, 8, 0, 1, 1, 1, 2, 3, 3, 5, 7, 8], False)
        + fill_palette(4, [0, 1, 0, 2, 0, 0, 3, 1, 0, 0, 4, 0, 5, 0], False)
        + fill_palette(5, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13], False)
        + fill_palette(12, [1, 0, 0, 3, 2, 2, 9, 9, 4, 0, 1, 1, 1, 7], True)
        + select_family(SELECT, buf(0), 1 | 4 | 32, output=buf(1), values=buf(5), values_out=buf(6),
                        positions=buf(7), predicate=1, scalar=f32_bits(0.5))
        + select_family(SELECT, buf(0), 4 | 8, output=buf(1), count_out=buf(8), predicate=8)
        + select_family(SELECT, buf(0), 4 | 16 | 32, positions=buf(7), predicate=6, scalar=0)
        + select_family(SELECT, buf(0), 4, output=buf(1), predicate=7, scalar=f32_bits(-1.0),
                        high=f32_bits(1.0))
        + select_family(SELECT, buf(0), 8 | 32, output=buf(1), positions=buf(9), count_out=buf(8), predicate=9)
        + select_family(PARTITION, buf(2), 1 | 4 | 8, output=buf(3), values=buf(5), values_out=buf(6),
                        count_out=buf(8), predicate=0, flags=buf(4))
        + select_family(PARTITION, buf(0), 4, output=buf(1), predicate=0, flags=buf(4))
        + select_family(PARTITION, buf(2), 4, output=buf(3), predicate=5, scalar=1)
        + select_family(UNIQUE, buf(0), 4 | 8, output=buf(1), count_out=buf(8))
        + select_family(UNIQUE, buf(2), 1 | 4, output=buf(3), values=buf(5), values_out=buf(6))
        + select_family(UNIQUE, buf(12), 4, output=buf(0))
        + select_family(RUN_LENGTH, buf(2), 4 | 32 | 64, output=buf(3), positions=buf(7), lengths=buf(9))
        + select_family(RUN_LENGTH, buf(0), 8 | 16 | 32 | 64, positions=buf(9), lengths=buf(7), count_out=buf(8),
                        runs=1)
        + select_family(RUN_LENGTH, buf(2), 4 | 16 | 64, lengths=buf(7), runs=1)
        # errors
        + select_family(SELECT, buf(0), 4, output=buf(1), predicate=10)
        + select_family(SELECT, buf(0), 4, output=buf(1), predicate=255)
        + select_family(SELECT, buf(0), 4, output=buf(1), predicate=254)
        + select_family(SELECT, buf(0), 4 | 128, output=buf(1), predicate=1, flags=buf(4))
        + select_family(SELECT, buf(0), 4, output=buf(1), predicate=0, flags=buf(10))
        + select_family(SELECT, buf(0), 4 | 16, predicate=1)
        + select_family(SELECT, buf(0), 4, output=buf(10), predicate=1)
        + select_family(SELECT, buf(0), 4, output=buf(0), predicate=1)
        + select_family(SELECT, buf(0), 0, output=buf(1), predicate=1)
        + select_family(SELECT, buf(0), 8, output=buf(1), count_out=buf(10), predicate=1)
        + select_family(SELECT, buf(0), 4 | 2, output=buf(1), values=buf(5), predicate=1)
        + select_family(PARTITION, buf(0), 4, output=buf(1), predicate=0, flags=buf(4, other_context=True))
        + select_family(UNIQUE, buf(0), 4, output=buf(2))
        + select_family(UNIQUE, buf(0), 4, output=NULL_BUF)
        + select_family(RUN_LENGTH, buf(2), 4 | 16, runs=0)
        + select_family(RUN_LENGTH, buf(2), 4 | 32, output=buf(3), positions=buf(1), runs=240)
        + select_family(RUN_LENGTH, buf(2), 4 | 32 | 64, output=buf(3), positions=buf(7), lengths=buf(7))
        + select_family(SELECT, buf(0), 4, output=buf(1), predicate=1, ctx=NULL_CTX)
        + select_family(UNIQUE, buf(0), 4, output=buf(1), ctx=FAKE_CTX)
        + select_family(UNIQUE, JUNK_BUF, 4, output=buf(1))
        + destroy(buf(1)) + select_family(SELECT, buf(0), 4, output=stale(0), predicate=1)),
    # Reduce-by-key and group-by: f32 keys with NaNs, +-0 and +-inf in runs, i32 keys with runs and
    # repeats; f16, f32, f64 and i32 values; SUM, MIN and MAX; keys_out, lengths / counts and inverse of
    # index dtypes, the count on the host and in count_out, group-by without values; then the errors: an
    # unknown op, NULL keys, values or results, only one of values and results, no output, short and
    # mistyped outputs, overlaps, no count sink, a float count_out, bad handles and contexts.
    "seed_reduce_by_key": (
        create(F32, small_count(14)) + create(F32, small_count(14)) + create(I32, small_count(12))
        + create(I32, small_count(12)) + create(F16, small_count(14)) + create(F16, small_count(14))
        + create(U32, small_count(14)) + create(I64, small_count(14)) + create(U64, small_count(2))
        + create(F32, small_count(14)) + create(F32, small_count(3))
        + create(F64, small_count(12)) + create(F64, small_count(12)) + create(I32, small_count(12))
        + create(I64, small_count(3), ctx=CTX1)
        + fill_palette(0, [11, 11, 7, 3, 3, 1, 1, 0, 4, 2, 2, 5, 6, 6], True)
        + fill_palette(2, [8, 8, 0, 1, 1, 1, 2, 3, 3, 5, 7, 8], False)
        + fill_palette(4, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13], True)
        + fill_palette(9, [1, 1, 2, 3, 1, 2, 2, 3, 1, 1, 2, 2, 3, 3], True)
        + fill_palette(11, [1, 0, 0, 3, 2, 2, 9, 9, 4, 0, 1, 1], True)
        + fill_palette(13, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], False)
        + keyed(False, buf(0), 0, 1 | 2 | 4 | 32, values=buf(9), results=buf(1), lengths=buf(6))
        + keyed(False, buf(0), 1, 1 | 2 | 8, values=buf(4), results=buf(5), count_out=buf(8))
        + keyed(False, buf(2), 2, 1 | 2 | 4 | 16, values=buf(11), results=buf(12), keys_out=buf(3))
        + keyed(False, buf(2), 0, 1 | 2 | 4 | 8 | 32, values=buf(13), results=buf(3), count_out=buf(8),
                lengths=buf(7))
        + keyed(True, buf(0), 0, 1 | 2 | 4 | 32 | 64, values=buf(4), results=buf(5), lengths=buf(6), inverse=buf(7))
        + keyed(True, buf(2), 1, 1 | 2 | 4 | 16 | 64, values=buf(11), results=buf(12), keys_out=buf(3),
                inverse=buf(7))
        + keyed(True, buf(2), 2, 1 | 2 | 8 | 32, values=buf(13), results=buf(3), count_out=buf(8), lengths=buf(6))
        + keyed(True, buf(0), 0, 4 | 16 | 32 | 64, keys_out=buf(1), lengths=buf(6), inverse=buf(7))
        + keyed(True, buf(11), 0, 1 | 2 | 4, values=buf(13), results=buf(3))
        # errors
        + keyed(False, buf(0), 240, 1 | 2 | 4, values=buf(9), results=buf(1))
        + keyed(True, buf(0), 235, 4 | 16, keys_out=buf(1))
        + keyed(False, NULL_BUF, 0, 1 | 2 | 4, values=buf(9), results=buf(1))
        + keyed(False, buf(0), 0, 2 | 4, results=buf(1))
        + keyed(False, buf(0), 0, 1 | 4, values=buf(9))
        + keyed(True, buf(0), 0, 1 | 4 | 16, values=buf(9), keys_out=buf(1))
        + keyed(True, buf(0), 0, 2 | 4 | 16, results=buf(1), keys_out=buf(1))
        + keyed(True, buf(0), 0, 4)
        + keyed(False, buf(0), 0, 1 | 2 | 4, values=buf(9), results=buf(10))
        + keyed(False, buf(0), 0, 1 | 2 | 4, values=buf(9), results=buf(5))
        + keyed(False, buf(0), 0, 1 | 2 | 4 | 16, values=buf(9), results=buf(1), keys_out=buf(2))
        + keyed(False, buf(0), 0, 1 | 2 | 4 | 32, values=buf(9), results=buf(1), lengths=buf(9))
        + keyed(True, buf(0), 0, 4 | 64, inverse=buf(10))
        + keyed(True, buf(0), 0, 4 | 64, inverse=buf(0))
        + keyed(False, buf(0), 0, 1 | 2 | 4, values=buf(9), results=buf(9))
        + keyed(False, buf(0), 0, 1 | 2 | 4 | 16, values=buf(9), results=buf(1), keys_out=buf(1))
        + keyed(False, buf(0), 0, 1 | 2, values=buf(9), results=buf(1))
        + keyed(False, buf(0), 0, 1 | 2 | 8, values=buf(9), results=buf(1), count_out=buf(10))
        + keyed(True, buf(0), 0, 4 | 16, keys_out=buf(14, other_context=True))
        + keyed(False, buf(0), 0, 1 | 2 | 4, values=buf(9), results=buf(1), ctx=NULL_CTX)
        + keyed(True, buf(0), 0, 4 | 16, keys_out=buf(1), ctx=FAKE_CTX)
        + keyed(True, JUNK_BUF, 0, 4 | 16, keys_out=buf(1))
        + destroy(buf(1)) + keyed(True, buf(0), 0, 4 | 16, keys_out=stale(0))),
    # Unknown enum values, NULL and fake contexts, odd context options, globals.
    "seed_enums_contexts": (
        create(I32, small_count(4)) + create(255, small_count(4))
        + u8(REDUCE) + u8(CTX0) + u8(240) + buf(0) + u8(0)
        + u8(SCAN) + u8(CTX0) + u8(0) + u8(250) + buf(0) + u8(0)
        + u8(SORT) + u8(CTX0) + u8(245) + u8(3) + buf(0)
        + reduce_(0, buf(0), ctx=NULL_CTX) + reduce_(0, buf(0), ctx=FAKE_CTX)
        + u8(REDUCE) + u8(252) + u8(0) + buf(0) + u8(0)
        + u8(CONTEXT_CREATE) + u8(1) + u8(0) + u8(0) + u8(40)
        + u8(CONTEXT_CREATE) + u8(0) + u8(5) + u8(4) + u8(1)
        + u8(CONTEXT_CREATE) + u8(0) + u8(2) + u8(0) + u8(60)
        + u8(QUERIES) + u8(CTX0) + u8(1) + u8(3)
        + u8(QUERIES) + u8(FAKE_CTX) + u8(3)
        + u8(GLOBALS) + u8(200) + u8(6) + u8(240)),
}


def main():
    directory = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
    os.makedirs(directory, exist_ok=True)
    for name, program in SEEDS.items():
        with open(os.path.join(directory, name), "wb") as f:
            f.write(program)
        print(f"{name}: {len(program)} bytes")


if __name__ == "__main__":
    main()
