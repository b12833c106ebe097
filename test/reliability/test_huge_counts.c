/* SPDX-License-Identifier: Apache-2.0 */
/* Declared counts near 2^64 (issue #30): buffers wrapped over a real 1 MiB
 * block but declaring up to 2^64 bytes, on the backend GPUPRIM_BACKEND /
 * AUTO picks.
 * - Segmented calls (sort in place, whole keys and bit ranges, every key
 *   width; top-k, reduce, scan in place; CSR offsets covering a few
 *   elements, from 0 and from further in) must succeed, give the reference
 *   result on the segments, touch nothing outside them, and leave the
 *   workspace proportional to the segments (not to the declared count).
 *   The huge buffer starts 64 KiB into the block; the small outputs lie
 *   below it, where its declared range cannot reach them. Pairs and argsort
 *   would need a second buffer of the same huge count, which must overlap
 *   the first: they are refused (INVALID_ARGUMENT) with nothing written.
 * - Flat sort and top-k of such buffers need scratch for the whole declared
 *   count: they must fail cleanly (OUT_OF_MEMORY or OVERFLOW, with a
 *   message) with nothing written; so must argsort (its indices overlap the
 *   keys: INVALID_ARGUMENT).
 * Calls that need no memory of their own (reduce, dot, scan of the whole
 * buffer) read what the buffer declares, as the caller promised: they are
 * not driven with such counts.
 * The first case is the fuzzer's find: U64 keys of count 0x0AAAAAAAAAAAAAAB,
 * offsets {0, 10}, bit range [0, 40), in place, whose scratch size
 * n * 16 + n * 8 wrapped to 64 bytes before sizes were checked. */
#include "rel_common.h"

#include <stdint.h>
#include <string.h>

const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

#define ARENA_BYTES ((uint64_t)1 << 20)
#define MAX_COVERED 64
/* The workspace a call on a few segments may keep: generous, but far below
 * what the declared counts would need (2^60 bytes and up). */
#define WORKSPACE_LIMIT ((uint64_t)1 << 30)

typedef struct {
    gpuprim_context_t context;
    gpuprim_buffer_t block[3]; /* real memory: keys, values/indices/outputs, spare */
    void *block_data[3];
    unsigned char *host_before[3];
    unsigned char *host_after;
} Arena;

static uint64_t pattern_byte(int block, uint64_t i) {
    uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull + (uint64_t)block * 0xD1B54A32D192ED03ull;
    x ^= x >> 29;
    return (x * 0xBF58476D1CE4E5B9ull) >> 56;
}

static void arena_fill(Arena *arena) {
    int b;
    uint64_t i;
    for (b = 0; b < 3; ++b) {
        for (i = 0; i < ARENA_BYTES; ++i) arena->host_before[b][i] = (unsigned char)pattern_byte(b, i);
        REL_OK(arena->context, gpuprim_buffer_upload(arena->context, arena->block[b], 0, arena->host_before[b],
                                                     ARENA_BYTES));
    }
}

static void arena_open(Arena *arena) {
    int b;
    arena->context = rel_context(GPUPRIM_BACKEND_AUTO);
    for (b = 0; b < 3; ++b) {
        gpuprim_dtype_t dtype;
        uint64_t count;
        REL_OK(arena->context, gpuprim_buffer_create(arena->context, GPUPRIM_DTYPE_U8, ARENA_BYTES, &arena->block[b]));
        REL_OK(arena->context, gpuprim_buffer_get_info(arena->context, arena->block[b], &dtype, &count,
                                                       &arena->block_data[b]));
        arena->host_before[b] = (unsigned char *)malloc(ARENA_BYTES);
        REL_CHECK(arena->host_before[b] != NULL, "malloc");
    }
    arena->host_after = (unsigned char *)malloc(ARENA_BYTES);
    REL_CHECK(arena->host_after != NULL, "malloc");
}

#define HUGE_AT ((uint64_t)1 << 16) /* where huge buffers start in their block */

static void arena_close(Arena *arena) {
    int b;
    for (b = 0; b < 3; ++b) {
        REL_OK(arena->context, gpuprim_buffer_destroy(arena->context, arena->block[b]));
        free(arena->host_before[b]);
    }
    free(arena->host_after);
    REL_CHECK(gpuprim_context_destroy(arena->context) == GPUPRIM_SUCCESS, "context_destroy");
}

/* Block b's bytes from HUGE_AT on after the call (returned from HUGE_AT):
 * unchanged outside [first, first + bytes) of them. The bytes below HUGE_AT
 * hold the small buffers, checked through their contents. */
static const unsigned char *arena_check(Arena *arena, int b, uint64_t first, uint64_t bytes, const char *what) {
    uint64_t i;
    REL_OK(arena->context, gpuprim_buffer_download(arena->context, arena->block[b], 0, arena->host_after,
                                                   ARENA_BYTES));
    for (i = HUGE_AT; i < ARENA_BYTES; ++i)
        if (i - HUGE_AT < first || i - HUGE_AT >= first + bytes)
            REL_CHECK(arena->host_after[i] == arena->host_before[b][i],
                      "%s: byte %llu of block %d changed outside the segments (%u -> %u)", what,
                      (unsigned long long)i, b, arena->host_before[b][i], arena->host_after[i]);
    return arena->host_after + HUGE_AT;
}

/* Block b's contents before the call, from HUGE_AT on. */
static const unsigned char *before(const Arena *arena, int b) { return arena->host_before[b] + HUGE_AT; }

/* The largest count of `width`-byte elements a wrap accepts at data, and at
 * data2 when given (its bytes must not pass the end of the address space),
 * and a few below it. */
static uint64_t huge_count2(const void *data, const void *data2, uint64_t width, int which) {
    const uint64_t top = (uint64_t)(uintptr_t)data > (uint64_t)(uintptr_t)data2 ? (uint64_t)(uintptr_t)data
                                                                                : (uint64_t)(uintptr_t)data2;
    const uint64_t room = (UINT64_MAX - top) / width;
    switch (which) {
    case 0: return room;
    case 1: return room / 3 + 1;   /* n * 16 + n * 8 just past 2^64 for 8-byte keys */
    case 2: return room / 24 + 7;  /* 24 bytes an element fits; sums of such parts do not */
    default: return (uint64_t)1 << 33;
    }
}

static uint64_t huge_count(const void *data, uint64_t width, int which) {
    return huge_count2(data, data, width, which);
}

static void *huge_data(Arena *arena, int b) { return (char *)arena->block_data[b] + HUGE_AT; }

/* A buffer declaring `count` elements from HUGE_AT into block b. */
static gpuprim_buffer_t wrap(Arena *arena, int b, gpuprim_dtype_t dtype, uint64_t count) {
    gpuprim_buffer_t buffer = NULL;
    REL_OK(arena->context, gpuprim_buffer_wrap(arena->context, dtype, huge_data(arena, b), count, &buffer));
    return buffer;
}

/* A small buffer of count elements at byte `at` (< HUGE_AT) of block 0:
 * below the huge buffers, so their declared ranges never reach it. */
static gpuprim_buffer_t wrap_small(Arena *arena, gpuprim_dtype_t dtype, uint64_t at, uint64_t count) {
    gpuprim_buffer_t buffer = NULL;
    REL_CHECK(at + count * gpuprim_dtype_size(dtype) <= HUGE_AT, "small buffer past HUGE_AT");
    REL_OK(arena->context, gpuprim_buffer_wrap(arena->context, dtype, (char *)arena->block_data[0] + at, count,
                                               &buffer));
    return buffer;
}

/* CSR offsets as U64, in block 0 below the huge buffers. */
static gpuprim_buffer_t offsets_buffer(Arena *arena, const uint64_t *offsets, uint64_t count) {
    gpuprim_buffer_t buffer = wrap_small(arena, GPUPRIM_DTYPE_U64, 0, count);
    REL_OK(arena->context, gpuprim_buffer_upload(arena->context, buffer, 0, offsets, count));
    return buffer;
}

static uint64_t load(const unsigned char *bytes, uint64_t width, uint64_t i) {
    uint64_t value = 0;
    memcpy(&value, bytes + i * width, width); /* little-endian hosts */
    return value;
}

static uint64_t sort_bits(uint64_t key, uint32_t begin_bit, uint32_t end_bit) {
    const uint64_t bits = end_bit - begin_bit;
    return (key >> begin_bit) & (bits >= 64 ? UINT64_MAX : (((uint64_t)1 << bits) - 1));
}

/* The stable ascending order of keys [first, last) by bits [b, e): the
 * positions within the segment, in sorted order. */
static void reference_order(const unsigned char *keys, uint64_t width, uint64_t first, uint64_t last, uint32_t b,
                            uint32_t e, uint64_t *order) {
    uint64_t n = last - first, i, j;
    for (i = 0; i < n; ++i) {
        const uint64_t bits = sort_bits(load(keys, width, first + i), b, e);
        for (j = i; j > 0 && sort_bits(load(keys, width, first + order[j - 1]), b, e) > bits; --j)
            order[j] = order[j - 1];
        order[j] = i;
    }
}

static void check_workspace(Arena *arena, const char *what) {
    uint64_t bytes = 0;
    REL_OK(arena->context, gpuprim_context_get_workspace_size(arena->context, &bytes));
    REL_CHECK(bytes <= WORKSPACE_LIMIT, "%s: the context keeps %llu bytes of workspace for a few segments", what,
              (unsigned long long)bytes);
}

static const gpuprim_dtype_t kKeyDtypes[] = {GPUPRIM_DTYPE_U8, GPUPRIM_DTYPE_U16, GPUPRIM_DTYPE_U32,
                                             GPUPRIM_DTYPE_U64};

/* Segmented sort (keys in place, keys + values out of place) and argsort. */
static void test_segmented_sorts(Arena *arena, const uint64_t *offsets, uint64_t offset_count, int which) {
    const uint64_t first = offsets[0], last = offsets[offset_count - 1];
    int d, mode;
    for (d = 0; d < 4; ++d) {
        const gpuprim_dtype_t dtype = kKeyDtypes[d];
        const uint64_t width = gpuprim_dtype_size(dtype);
        for (mode = 0; mode < 4; ++mode) { /* 0 keys in place, 1 bit range in place, 2 pairs, 3 argsort */
            /* Argsort: the U64 indices declare the keys' count too. */
            const uint64_t count =
                huge_count2(huge_data(arena, 0), huge_data(arena, 1), mode == 3 ? 8 : width, which);
            const uint32_t end_bit = mode == 1 ? (uint32_t)(width * 8 > 40 ? 40 : width * 8 - 1) : 0;
            char what[160];
            gpuprim_sort_options_t options;
            gpuprim_segments_t segments;
            gpuprim_buffer_t keys, values = NULL, offsets_handle;
            gpuprim_status_t status;
            uint64_t order[MAX_COVERED], s, i;
            const unsigned char *after;
            snprintf(what, sizeof what, "segmented %s of %d-byte keys%s, count %llu, offsets [%llu, %llu)",
                     mode == 3 ? "argsort" : mode == 2 ? "sort of pairs" : "sort", (int)width,
                     mode == 1 ? " (bit range)" : "", (unsigned long long)count, (unsigned long long)first,
                     (unsigned long long)last);
            arena_fill(arena);
            offsets_handle = offsets_buffer(arena, offsets, offset_count);
            keys = wrap(arena, 0, dtype, count);
            gpuprim_sort_options_init(&options);
            options.end_bit = end_bit;
            gpuprim_segments_init_offsets(&segments, offsets_handle);
            if (mode >= 2) {
                /* A second buffer of the same huge count overlaps the first. */
                values = wrap(arena, 1, mode == 3 ? GPUPRIM_DTYPE_U64 : dtype, count);
                status = mode == 3 ? gpuprim_segmented_argsort(arena->context, &segments, keys, NULL, values, NULL)
                                   : gpuprim_segmented_sort(arena->context, &segments, keys, values, keys, values,
                                                            &options);
                REL_CHECK(status == GPUPRIM_ERROR_INVALID_ARGUMENT, "%s -> %d (%s): %s", what, (int)status,
                          gpuprim_get_error_string(status), gpuprim_context_last_error(arena->context));
                arena_check(arena, 0, 0, 0, what);
                arena_check(arena, 1, 0, 0, what);
            } else {
                REL_OK(arena->context,
                       gpuprim_segmented_sort(arena->context, &segments, keys, NULL, keys, NULL, &options));
                check_workspace(arena, what);
                for (s = 0; s + 1 < offset_count; ++s)
                    reference_order(before(arena, 0), width, offsets[s], offsets[s + 1], 0,
                                    end_bit ? end_bit : (uint32_t)width * 8, order + (offsets[s] - first));
                after = arena_check(arena, 0, first * width, (last - first) * width, what);
                for (s = 0; s + 1 < offset_count; ++s)
                    for (i = offsets[s]; i < offsets[s + 1]; ++i) {
                        const uint64_t from = offsets[s] + order[i - first];
                        REL_CHECK(load(after, width, i) == load(before(arena, 0), width, from),
                                  "%s: key %llu is wrong", what, (unsigned long long)i);
                    }
            }
            gpuprim_buffer_destroy(arena->context, keys);
            if (values) gpuprim_buffer_destroy(arena->context, values);
            gpuprim_buffer_destroy(arena->context, offsets_handle);
        }
    }
}

/* Segmented top-k (k = 3), reduce (sum) and scan (inclusive sum, in place)
 * of U32 elements. */
static void test_segmented_others(Arena *arena, const uint64_t *offsets, uint64_t offset_count, int which) {
    const uint64_t first = offsets[0], last = offsets[offset_count - 1], segments_count = offset_count - 1;
    const uint64_t count = huge_count(huge_data(arena, 0), 4, which), k = 3;
    gpuprim_segments_t segments;
    gpuprim_buffer_t input, offsets_handle, top_keys, top_indices, sums;
    uint32_t got_keys[3 * MAX_COVERED], got_sums[MAX_COVERED];
    uint64_t got_indices[3 * MAX_COVERED], order[MAX_COVERED], s, j, i;
    const unsigned char *after;
    char what[160];
    snprintf(what, sizeof what, "segmented top-k/reduce/scan of u32, count %llu, offsets [%llu, %llu)",
             (unsigned long long)count, (unsigned long long)first, (unsigned long long)last);
    arena_fill(arena);
    offsets_handle = offsets_buffer(arena, offsets, offset_count);
    gpuprim_segments_init_offsets(&segments, offsets_handle);
    input = wrap(arena, 0, GPUPRIM_DTYPE_U32, count);
    top_keys = wrap_small(arena, GPUPRIM_DTYPE_U32, 1024, segments_count * k);
    top_indices = wrap_small(arena, GPUPRIM_DTYPE_U64, 2048, segments_count * k);
    sums = wrap_small(arena, GPUPRIM_DTYPE_U32, 4096, segments_count);
    memset(got_keys, 0xA5, sizeof got_keys);
    memset(got_indices, 0xA5, sizeof got_indices);
    REL_OK(arena->context, gpuprim_buffer_upload(arena->context, top_keys, 0, got_keys, segments_count * k));
    REL_OK(arena->context, gpuprim_buffer_upload(arena->context, top_indices, 0, got_indices, segments_count * k));
    REL_OK(arena->context, gpuprim_segmented_topk(arena->context, &segments, input, k, GPUPRIM_ORDER_ASCENDING,
                                                  top_keys, top_indices));
    REL_OK(arena->context, gpuprim_segmented_reduce(arena->context, GPUPRIM_OP_SUM, &segments, input, sums));
    REL_OK(arena->context, gpuprim_buffer_download(arena->context, top_keys, 0, got_keys, segments_count * k));
    REL_OK(arena->context, gpuprim_buffer_download(arena->context, top_indices, 0, got_indices, segments_count * k));
    REL_OK(arena->context, gpuprim_buffer_download(arena->context, sums, 0, got_sums, segments_count));
    arena_check(arena, 0, 0, 0, what); /* top-k and reduce only read */
    REL_OK(arena->context, gpuprim_segmented_scan(arena->context, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, &segments,
                                                  input, input));
    check_workspace(arena, what);
    after = arena_check(arena, 0, first * 4, (last - first) * 4, what);
    for (s = 0; s < segments_count; ++s) {
        const uint64_t b = offsets[s], e = offsets[s + 1];
        uint32_t sum = 0;
        reference_order(before(arena, 0), 4, b, e, 0, 32, order);
        for (j = 0; j < k && j < e - b; ++j) {
            REL_CHECK(got_indices[s * k + j] == order[j], "%s: top-k index %llu of segment %llu", what,
                      (unsigned long long)j, (unsigned long long)s);
            REL_CHECK(got_keys[s * k + j] == (uint32_t)load(before(arena, 0), 4, b + order[j]),
                      "%s: top-k key %llu of segment %llu", what, (unsigned long long)j, (unsigned long long)s);
        }
        for (i = b; i < e; ++i) {
            sum += (uint32_t)load(before(arena, 0), 4, i);
            REL_CHECK((uint32_t)load(after, 4, i) == sum, "%s: scan element %llu", what, (unsigned long long)i);
        }
        REL_CHECK(got_sums[s] == sum, "%s: sum of segment %llu", what, (unsigned long long)s);
    }
    gpuprim_buffer_destroy(arena->context, input);
    gpuprim_buffer_destroy(arena->context, top_keys);
    gpuprim_buffer_destroy(arena->context, top_indices);
    gpuprim_buffer_destroy(arena->context, sums);
    gpuprim_buffer_destroy(arena->context, offsets_handle);
}

/* Segmented top-k with k far past every segment (2^36) into outputs that
 * declare segments * k slots: only min(k, length) are written, and no
 * scratch is sized by k (CUDA's long-segment path keeps results for
 * min(k, longest) a segment). 12000 U32 keys in one segment: past the
 * in-shared-memory paths. */
static void test_topk_huge_k(Arena *arena) {
    enum { kKeys = 12000 };
    const uint64_t k = (uint64_t)1 << 36, offsets[2] = {0, kKeys};
    uint64_t order[kKeys], i;
    int mode;
    for (mode = 0; mode < 2; ++mode) { /* 0: keys_out only, 1: indices only */
        const char *what = mode ? "segmented top-k, k = 2^36, indices" : "segmented top-k, k = 2^36, keys";
        gpuprim_segments_t segments;
        gpuprim_buffer_t keys, offsets_handle, out;
        const unsigned char *after;
        arena_fill(arena);
        keys = wrap_small(arena, GPUPRIM_DTYPE_U32, 0, kKeys);
        offsets_handle = wrap_small(arena, GPUPRIM_DTYPE_U64, 4 * kKeys, 2);
        REL_OK(arena->context, gpuprim_buffer_upload(arena->context, offsets_handle, 0, offsets, 2));
        gpuprim_segments_init_offsets(&segments, offsets_handle);
        /* Above the keys and offsets: the declared range reaches only upward. */
        out = wrap(arena, 0, mode ? GPUPRIM_DTYPE_U64 : GPUPRIM_DTYPE_U32, k);
        REL_OK(arena->context, gpuprim_segmented_topk(arena->context, &segments, keys, k, GPUPRIM_ORDER_DESCENDING,
                                                      mode ? NULL : out, mode ? out : NULL));
        check_workspace(arena, what);
        /* Descending: the reference's ascending order of the complements. */
        {
            static unsigned char complemented[4 * kKeys];
            for (i = 0; i < 4 * kKeys; ++i) complemented[i] = (unsigned char)~arena->host_before[0][i];
            reference_order(complemented, 4, 0, kKeys, 0, 32, order);
        }
        after = arena_check(arena, 0, 0, (uint64_t)kKeys * (mode ? 8 : 4), what);
        for (i = 0; i < kKeys; ++i) {
            if (mode)
                REL_CHECK(load(after, 8, i) == order[i], "%s: index %llu", what, (unsigned long long)i);
            else
                REL_CHECK(load(after, 4, i) == load(arena->host_before[0], 4, order[i]), "%s: key %llu", what,
                          (unsigned long long)i);
        }
        gpuprim_buffer_destroy(arena->context, keys);
        gpuprim_buffer_destroy(arena->context, offsets_handle);
        gpuprim_buffer_destroy(arena->context, out);
    }
}

/* 2^38 rows of one key, sorted in place: on CUDA 2^31 blocks of the 4-key
 * network (128 segments a block), more than one grid holds. Measured by a
 * workspace query (which returns what the call would, running nothing: the
 * real call would read 256 GiB): the call is valid, so the query succeeds
 * and the keys stay as they were. */
static void test_more_segments_than_a_grid(Arena *arena) {
    const uint64_t rows = (uint64_t)1 << 38;
    gpuprim_segments_t segments;
    gpuprim_workspace_sizes_t sizes;
    gpuprim_buffer_t keys;
    gpuprim_status_t status;
    arena_fill(arena);
    keys = wrap(arena, 0, GPUPRIM_DTYPE_U8, rows);
    gpuprim_segments_init_rows(&segments, rows, 1);
    REL_OK(arena->context, gpuprim_context_begin_workspace_query(arena->context));
    status = gpuprim_segmented_sort(arena->context, &segments, keys, NULL, keys, NULL, NULL);
    memset(&sizes, 0, sizeof sizes);
    sizes.struct_size = sizeof sizes;
    REL_OK(arena->context, gpuprim_context_end_workspace_query(arena->context, &sizes));
    REL_CHECK(status == GPUPRIM_SUCCESS, "segmented sort of 2^38 one-key rows, measured: %s (%s)",
              gpuprim_get_error_string(status), gpuprim_context_last_error(arena->context));
    arena_check(arena, 0, 0, 0, "segmented sort of 2^38 one-key rows, measured");
    gpuprim_buffer_destroy(arena->context, keys);
}

/* Flat sort, argsort and top-k of a whole huge buffer: scratch for the
 * declared count cannot be had. */
static void test_flat_calls_fail_cleanly(Arena *arena, int which) {
    int d, call;
    for (d = 0; d < 4; ++d) {
        const gpuprim_dtype_t dtype = kKeyDtypes[d];
        const uint64_t width = gpuprim_dtype_size(dtype);
        for (call = 0; call < 3; ++call) {
            /* Argsort: the U64 indices declare the keys' count too. */
            const uint64_t count =
                huge_count2(huge_data(arena, 0), huge_data(arena, 1), call == 1 ? 8 : width, which);
            gpuprim_buffer_t keys, indices = NULL, top = NULL;
            gpuprim_status_t status;
            const char *message;
            arena_fill(arena);
            keys = wrap(arena, 0, dtype, count);
            if (call == 0) {
                status = gpuprim_sort(arena->context, keys, NULL, keys, NULL, GPUPRIM_ORDER_ASCENDING);
            } else if (call == 1) {
                indices = wrap(arena, 1, GPUPRIM_DTYPE_U64, count);
                status = gpuprim_argsort(arena->context, keys, NULL, indices, NULL);
            } else {
                top = wrap_small(arena, GPUPRIM_DTYPE_U64, 1024, 1024);
                status = gpuprim_topk(arena->context, keys, 1024, GPUPRIM_ORDER_DESCENDING, NULL, top);
            }
            message = gpuprim_context_last_error(arena->context);
            /* Argsort's indices of the same huge count overlap the keys. */
            REL_CHECK(status == GPUPRIM_ERROR_OUT_OF_MEMORY || status == GPUPRIM_ERROR_OVERFLOW ||
                          (call == 1 && status == GPUPRIM_ERROR_INVALID_ARGUMENT),
                      "flat call %d on %llu %d-byte keys -> %d (%s): %s", call, (unsigned long long)count,
                      (int)width, (int)status, gpuprim_get_error_string(status), message);
            REL_CHECK(message && message[0], "flat call %d failed without a message", call);
            arena_check(arena, 0, 0, 0, "a failed flat call");
            arena_check(arena, 1, 0, 0, "a failed flat call");
            gpuprim_buffer_destroy(arena->context, keys);
            if (indices) gpuprim_buffer_destroy(arena->context, indices);
            if (top) gpuprim_buffer_destroy(arena->context, top);
        }
    }
    REL_CHECK(rel_small_sort(arena->context, 1000) == GPUPRIM_SUCCESS, "context unusable after huge flat calls");
}

/* Two runs whose counts add past 2^64 - 1: no keys_out can hold them
 * (SIZE_MISMATCH, the message naming the three buffers), nothing written. */
static void test_merge_counts_past_2_64(Arena *arena) {
    gpuprim_buffer_t a, b, out;
    gpuprim_status_t status;
    const char *message;
    arena_fill(arena);
    a = wrap(arena, 0, GPUPRIM_DTYPE_U8, huge_count(huge_data(arena, 0), 1, 0));
    b = wrap(arena, 1, GPUPRIM_DTYPE_U8, huge_count(huge_data(arena, 1), 1, 0));
    out = wrap_small(arena, GPUPRIM_DTYPE_U8, 1024, 16);
    status = gpuprim_merge(arena->context, a, NULL, b, NULL, out, NULL, GPUPRIM_ORDER_ASCENDING);
    message = gpuprim_context_last_error(arena->context);
    REL_CHECK(status == GPUPRIM_ERROR_SIZE_MISMATCH, "merge of counts past 2^64 -> %d: %s", (int)status, message);
    REL_CHECK(strstr(message, "'keys_a'") && strstr(message, "'keys_b'") && strstr(message, "'keys_out'") &&
                  strstr(message, "more than 2^64 - 1 keys"),
              "merge of counts past 2^64: the message names the counts and keys_out: %s", message);
    arena_check(arena, 0, 0, 0, "a refused merge");
    arena_check(arena, 1, 0, 0, "a refused merge");
    gpuprim_buffer_destroy(arena->context, a);
    gpuprim_buffer_destroy(arena->context, b);
    gpuprim_buffer_destroy(arena->context, out);
}

int main(void) {
    static const uint64_t kFromZero[] = {0, 10};
    static const uint64_t kFurtherIn[] = {5, 17};
    static const uint64_t kSeveral[] = {3, 4, 4, 20, 41};
    Arena arena;
    int which;
    arena_open(&arena);
    printf("declared counts near 2^64 on the %s backend\n", rel_backend_name(arena.context));

    /* The fuzzer's find, as it was reported. */
    {
        static const uint64_t offsets[] = {0, 10};
        gpuprim_buffer_t keys, offsets_handle;
        gpuprim_segments_t segments;
        gpuprim_sort_options_t options;
        arena_fill(&arena);
        offsets_handle = offsets_buffer(&arena, offsets, 2);
        keys = wrap(&arena, 0, GPUPRIM_DTYPE_U64, 0x0AAAAAAAAAAAAAABull);
        gpuprim_segments_init_offsets(&segments, offsets_handle);
        gpuprim_sort_options_init(&options);
        options.end_bit = 40;
        REL_OK(arena.context, gpuprim_segmented_sort(arena.context, &segments, keys, NULL, keys, NULL, &options));
        arena_check(&arena, 0, 0, 80, "the fuzzer's segmented sort");
        check_workspace(&arena, "the fuzzer's segmented sort");
        gpuprim_buffer_destroy(arena.context, keys);
        gpuprim_buffer_destroy(arena.context, offsets_handle);
    }
    for (which = 0; which < 4; ++which) {
        test_segmented_sorts(&arena, kFromZero, 2, which);
        test_segmented_sorts(&arena, kFurtherIn, 2, which);
        test_segmented_sorts(&arena, kSeveral, 5, which);
        test_segmented_others(&arena, kFurtherIn, 2, which);
        test_segmented_others(&arena, kSeveral, 5, which);
        if (which < 3) test_flat_calls_fail_cleanly(&arena, which);
    }
    test_topk_huge_k(&arena);
    test_merge_counts_past_2_64(&arena);
    test_more_segments_than_a_grid(&arena);
    printf("  segmented calls on the segments only, flat calls refused cleanly\n");
    arena_close(&arena);
    printf("huge counts: passed\n");
    return 0;
}
