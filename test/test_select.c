/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpuprim_select, gpuprim_partition, gpuprim_unique and
 * gpuprim_run_length_encode against references written from the header
 * (test_common.h: tc_keeps by value, tc_reference_runs by bits): all 12
 * dtypes, every keep kind (flags of every integer width, flags with only
 * high bits set), values of several widths carried along (each element's
 * value is its position, so the order is checked element by element),
 * positions / starts / lengths of every index dtype, the count to the host,
 * to count_out of each index dtype, or both. Inputs: NaNs of both signs and
 * several payloads, +-0, +-inf, subnormals, each type's extremes, all kept,
 * none kept, alternating, all equal, one long run, runs of one, sorted, few
 * distinct values; sizes 0, 1, 2, around the CUDA tiles (4095, 4096, 4097),
 * 65537, 2^20 + 3 and ~3e6. Outputs are poisoned and longer than needed
 * sometimes: every element past those written must be as it was. Then the
 * known answers, the errors (each leaving every output as it was), and the
 * same results on 1, 2 and 7 CPU threads.
 */
#include "test_common.h"

static const gpuprim_dtype_t index_dtypes[4] = {GPUPRIM_DTYPE_I32, GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_I64,
                                                GPUPRIM_DTYPE_U64};
static const gpuprim_dtype_t value_dtypes[5] = {GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_U8, GPUPRIM_DTYPE_U64,
                                                GPUPRIM_DTYPE_F16, GPUPRIM_DTYPE_I16};
static const gpuprim_dtype_t flag_dtypes[8] = {GPUPRIM_DTYPE_U8,  GPUPRIM_DTYPE_I8,  GPUPRIM_DTYPE_U16,
                                               GPUPRIM_DTYPE_I16, GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_I32,
                                               GPUPRIM_DTYPE_U64, GPUPRIM_DTYPE_I64};
static const char *const kind_names[10] = {"flagged",   "less",      "less_equal", "greater", "greater_equal",
                                           "equal",     "not_equal", "in_range",   "nan",     "not_nan"};

#define NO_DTYPE ((gpuprim_dtype_t)-1)

/* A scalar for comparisons with x: one of its elements, a special, zero of
 * either sign, a NaN or a random value. */
static uint64_t pick_scalar(gpuprim_dtype_t d, const void *x, uint64_t n) {
    const uint64_t r = tc_below(8);
    if (r < 3 && n > 0) return tc_get(d, x, tc_below(n));
    if (r == 3) return tc_special_value(d);
    if (r == 4) return tc_is_float(d) && (tc_rand() & 1) ? tc_sign_bit(d) : 0;
    if (r == 5 && tc_is_float(d)) return tc_random_nan(d);
    return tc_random_moderate(d);
}

/* Flags of fd: pattern 0 random sparse, 1 none set, 2 all set, 3 alternating, 4 only high bits (the top bit, or
 * bit 8 of wide flags), 5 random bits. */
static void fill_flags(gpuprim_dtype_t fd, void *flags, uint64_t n, int pattern) {
    uint64_t i;
    for (i = 0; i < n; ++i) {
        uint64_t v;
        switch (pattern) {
        case 0: v = tc_below(5) == 0 ? tc_rand() | 1 : 0; break;
        case 1: v = 0; break;
        case 2: v = tc_rand() | 1; break;
        case 3: v = i & 1; break;
        case 4: v = (tc_rand() & 1) ? (tc_size(fd) > 1 && (i & 2) ? 0x100u : tc_sign_bit(fd)) : 0; break;
        default: v = tc_rand(); break;
        }
        tc_set(fd, flags, i, v & tc_mask(fd));
    }
}

/* One select or partition call of kind on x (n elements of d), checked:
 * vd values (NO_DTYPE: none), pd positions (select; NO_DTYPE: none),
 * with_output (select: the output given), extra elements past n in each
 * output (poisoned, untouched). */
typedef struct select_shape {
    int partition;
    int with_output;
    gpuprim_dtype_t vd;
    gpuprim_dtype_t pd;
    tc_count_sink_t sink;
    uint64_t extra;
} select_shape_t;

static void check_select(gpuprim_context_t ctx, gpuprim_dtype_t d, const void *x, uint64_t n, int kind,
                         uint64_t scalar, uint64_t high, gpuprim_dtype_t fd, const void *flags, select_shape_t sh) {
    const uint64_t m = n + sh.extra;
    unsigned char *keep = (unsigned char *)tc_xmalloc(n + 1);
    uint64_t *perm = (uint64_t *)tc_xmalloc((n + 1) * sizeof(uint64_t));
    void *want_out = tc_xmalloc(m * 8 + 8), *want_values = tc_xmalloc(m * 8 + 8), *want_positions = tc_xmalloc(m * 8 + 8);
    void *values = NULL;
    unsigned char scalar_bytes[8], high_bytes[8];
    gpuprim_buffer_t in = tc_buffer_from(ctx, d, x, n), out = NULL, bv = NULL, bvo = NULL, bp = NULL, bf = NULL;
    gpuprim_buffer_t count_out = tc_make_count_out(ctx, sh.sink);
    gpuprim_predicate_t predicate;
    uint64_t kept, written, j, host_count = 0xC0FFEEull;
    gpuprim_status_t status;

    kept = tc_reference_keep(d, x, n, kind, scalar, high, fd, flags, keep);
    (void)tc_reference_select_permutation(keep, n, sh.partition, perm);
    written = sh.partition ? n : kept;
    memset(&predicate, 0, sizeof predicate);
    predicate.kind = kind;
    tc_set(d, scalar_bytes, 0, scalar);
    tc_set(d, high_bytes, 0, high);
    if (kind == GPUPRIM_KEEP_FLAGGED) {
        bf = tc_buffer_from(ctx, fd, flags, n);
        predicate.flags = bf;
    } else {
        predicate.scalar = scalar_bytes;
        predicate.scalar_high = high_bytes;
    }
    if (sh.partition || sh.with_output) {
        out = tc_buffer(ctx, d, m);
        tc_poison(ctx, out, d, m);
        tc_poison_host(d, want_out, m);
        for (j = 0; j < written; ++j) tc_set(d, want_out, j, tc_get(d, x, perm[j]));
    }
    if (sh.vd != NO_DTYPE) {
        values = tc_xmalloc(n * 8 + 8);
        for (j = 0; j < n; ++j) tc_set(sh.vd, values, j, (j * 0x9E3779B97F4A7C15ull >> 7) & tc_mask(sh.vd));
        bv = tc_buffer_from(ctx, sh.vd, values, n);
        bvo = tc_buffer(ctx, sh.vd, m);
        tc_poison(ctx, bvo, sh.vd, m);
        tc_poison_host(sh.vd, want_values, m);
        for (j = 0; j < written; ++j) tc_set(sh.vd, want_values, j, tc_get(sh.vd, values, perm[j]));
    }
    if (!sh.partition && sh.pd != NO_DTYPE) {
        bp = tc_buffer(ctx, sh.pd, m);
        tc_poison(ctx, bp, sh.pd, m);
        tc_poison_host(sh.pd, want_positions, m);
        for (j = 0; j < kept; ++j) tc_set(sh.pd, want_positions, j, perm[j]);
    }
    tc_where("%s %s n=%llu kind %s%s%s%s%s%s sink %d/%s extra %llu", sh.partition ? "partition" : "select",
             tc_dtype_name(d), (unsigned long long)n, kind_names[kind], kind == GPUPRIM_KEEP_FLAGGED ? " flags " : "",
             kind == GPUPRIM_KEEP_FLAGGED ? tc_dtype_name(fd) : "", sh.vd != NO_DTYPE ? " values " : "",
             sh.vd != NO_DTYPE ? tc_dtype_name(sh.vd) : "", bp ? " positions" : "", sh.sink.mode,
             tc_dtype_name(sh.sink.cd), (unsigned long long)sh.extra);
    if (sh.partition)
        status = gpuprim_partition(ctx, in, bv, &predicate, out, bvo, sh.sink.mode != 1 ? &host_count : NULL,
                                   count_out);
    else
        status = gpuprim_select(ctx, in, bv, &predicate, out, bvo, bp, sh.sink.mode != 1 ? &host_count : NULL,
                                count_out);
    CHECK_STATUS(status, GPUPRIM_SUCCESS);
    if (status == GPUPRIM_SUCCESS) {
        TC_CHECK_COUNT(ctx, sh.sink, host_count, count_out, kept);
        count_out = NULL;
        if (out) CHECK_BUFFER_EQ(ctx, out, d, want_out, m, "output");
        if (bvo) CHECK_BUFFER_EQ(ctx, bvo, sh.vd, want_values, m, "values_out");
        if (bp) CHECK_BUFFER_EQ(ctx, bp, sh.pd, want_positions, m, "positions");
    }
    CHECK_BUFFER_EQ(ctx, in, d, x, n, "input after the call");
    if (count_out) CHECK_OK(gpuprim_buffer_destroy(ctx, count_out));
    CHECK_OK(gpuprim_buffer_destroy(ctx, in));
    if (out) CHECK_OK(gpuprim_buffer_destroy(ctx, out));
    if (bv) CHECK_OK(gpuprim_buffer_destroy(ctx, bv));
    if (bvo) CHECK_OK(gpuprim_buffer_destroy(ctx, bvo));
    if (bp) CHECK_OK(gpuprim_buffer_destroy(ctx, bp));
    if (bf) CHECK_OK(gpuprim_buffer_destroy(ctx, bf));
    free(keep);
    free(perm);
    free(want_out);
    free(want_values);
    free(want_positions);
    free(values);
}

/* Runs: 0 unique, 1 unique with values, 2 run-length encode (all), 3 run-length encode (non-trivial). */
typedef struct runs_shape {
    int mode;
    gpuprim_dtype_t vd;      /* unique with values */
    int with_keys;           /* run-length encode: keys_out given */
    gpuprim_dtype_t sd, ld;  /* starts' and lengths' dtypes, NO_DTYPE: not given */
    tc_count_sink_t sink;
    uint64_t extra;
} runs_shape_t;

static void check_runs(gpuprim_context_t ctx, gpuprim_dtype_t d, const void *x, uint64_t n, runs_shape_t sh) {
    const uint64_t m = n + sh.extra;
    const int rle = sh.mode >= 2;
    uint64_t *starts = (uint64_t *)tc_xmalloc((n + 1) * sizeof(uint64_t));
    uint64_t *lengths = (uint64_t *)tc_xmalloc((n + 1) * sizeof(uint64_t));
    void *want_keys = tc_xmalloc(m * 8 + 8), *want_values = tc_xmalloc(m * 8 + 8);
    void *want_starts = tc_xmalloc(m * 8 + 8), *want_lengths = tc_xmalloc(m * 8 + 8), *values = NULL;
    gpuprim_buffer_t in = tc_buffer_from(ctx, d, x, n), ko = NULL, bv = NULL, bvo = NULL, bs = NULL, bl = NULL;
    gpuprim_buffer_t count_out = tc_make_count_out(ctx, sh.sink);
    uint64_t runs, r, host_count = 0xC0FFEEull;
    gpuprim_status_t status;

    runs = tc_reference_runs(d, x, n, sh.mode == 3, starts, lengths);
    if (!rle || sh.with_keys) {
        ko = tc_buffer(ctx, d, m);
        tc_poison(ctx, ko, d, m);
        tc_poison_host(d, want_keys, m);
        for (r = 0; r < runs; ++r) tc_set(d, want_keys, r, tc_get(d, x, starts[r]));
    }
    if (sh.mode == 1) {
        values = tc_xmalloc(n * 8 + 8);
        for (r = 0; r < n; ++r) tc_set(sh.vd, values, r, (r * 0x9E3779B97F4A7C15ull >> 5) & tc_mask(sh.vd));
        bv = tc_buffer_from(ctx, sh.vd, values, n);
        bvo = tc_buffer(ctx, sh.vd, m);
        tc_poison(ctx, bvo, sh.vd, m);
        tc_poison_host(sh.vd, want_values, m);
        for (r = 0; r < runs; ++r) tc_set(sh.vd, want_values, r, tc_get(sh.vd, values, starts[r]));
    }
    if (rle && sh.sd != NO_DTYPE) {
        bs = tc_buffer(ctx, sh.sd, m);
        tc_poison(ctx, bs, sh.sd, m);
        tc_poison_host(sh.sd, want_starts, m);
        for (r = 0; r < runs; ++r) tc_set(sh.sd, want_starts, r, starts[r]);
    }
    if (rle && sh.ld != NO_DTYPE) {
        bl = tc_buffer(ctx, sh.ld, m);
        tc_poison(ctx, bl, sh.ld, m);
        tc_poison_host(sh.ld, want_lengths, m);
        for (r = 0; r < runs; ++r) tc_set(sh.ld, want_lengths, r, lengths[r]);
    }
    tc_where("%s %s n=%llu%s%s%s%s%s%s sink %d/%s extra %llu",
             sh.mode == 0   ? "unique"
             : sh.mode == 1 ? "unique by key"
             : sh.mode == 2 ? "run-length encode"
                            : "run-length encode (non-trivial)",
             tc_dtype_name(d), (unsigned long long)n, sh.mode == 1 ? " values " : "",
             sh.mode == 1 ? tc_dtype_name(sh.vd) : "", ko ? " keys_out" : "", bs ? " starts " : "",
             bs ? tc_dtype_name(sh.sd) : "", bl ? " lengths" : "", sh.sink.mode, tc_dtype_name(sh.sink.cd),
             (unsigned long long)sh.extra);
    if (rle)
        status = gpuprim_run_length_encode(ctx, in, sh.mode == 3 ? GPUPRIM_RUNS_NON_TRIVIAL : GPUPRIM_RUNS_ALL, ko, bs,
                                           bl, sh.sink.mode != 1 ? &host_count : NULL, count_out);
    else
        status = gpuprim_unique(ctx, in, bv, ko, bvo, sh.sink.mode != 1 ? &host_count : NULL, count_out);
    CHECK_STATUS(status, GPUPRIM_SUCCESS);
    if (status == GPUPRIM_SUCCESS) {
        TC_CHECK_COUNT(ctx, sh.sink, host_count, count_out, runs);
        count_out = NULL;
        if (ko) CHECK_BUFFER_EQ(ctx, ko, d, want_keys, m, "keys_out");
        if (bvo) CHECK_BUFFER_EQ(ctx, bvo, sh.vd, want_values, m, "values_out");
        if (bs) CHECK_BUFFER_EQ(ctx, bs, sh.sd, want_starts, m, "starts");
        if (bl) CHECK_BUFFER_EQ(ctx, bl, sh.ld, want_lengths, m, "lengths");
    }
    CHECK_BUFFER_EQ(ctx, in, d, x, n, "input after the call");
    if (count_out) CHECK_OK(gpuprim_buffer_destroy(ctx, count_out));
    CHECK_OK(gpuprim_buffer_destroy(ctx, in));
    if (ko) CHECK_OK(gpuprim_buffer_destroy(ctx, ko));
    if (bv) CHECK_OK(gpuprim_buffer_destroy(ctx, bv));
    if (bvo) CHECK_OK(gpuprim_buffer_destroy(ctx, bvo));
    if (bs) CHECK_OK(gpuprim_buffer_destroy(ctx, bs));
    if (bl) CHECK_OK(gpuprim_buffer_destroy(ctx, bl));
    free(starts);
    free(lengths);
    free(want_keys);
    free(want_values);
    free(want_starts);
    free(want_lengths);
    free(values);
}

static const uint64_t sizes[] = {0, 1, 2, 3, 17, 1000, 4095, 4096, 4097, 12289, 65537};
#define SIZE_COUNT (sizeof sizes / sizeof sizes[0])

static const tc_pattern_t select_patterns[] = {TC_SPECIAL,  TC_NAN_HEAVY, TC_SMALL_RANGE, TC_ZEROS,    TC_TINY,
                                               TC_MODERATE, TC_EQUAL,     TC_SORTED,      TC_INF_SPARSE, TC_RANDOM_BITS};
#define SELECT_PATTERN_COUNT (sizeof select_patterns / sizeof select_patterns[0])

static select_shape_t select_shape(int combo, int partition) {
    select_shape_t sh;
    sh.partition = partition;
    sh.with_output = partition || combo % 5 != 4;
    sh.vd = combo % 3 == 0 ? NO_DTYPE : value_dtypes[combo % 5];
    sh.pd = combo % 4 == 1 ? NO_DTYPE : index_dtypes[(combo / 4) % 4];
    if (!sh.with_output && sh.vd == NO_DTYPE && sh.pd == NO_DTYPE) sh.pd = GPUPRIM_DTYPE_U32;
    sh.sink = tc_count_sink_of(combo / 2);
    sh.extra = combo % 7 == 3 ? 5 : 0;
    return sh;
}

/* Every dtype and kind, on three sizes each, select and partition. */
static void test_kinds(gpuprim_context_t ctx) {
    size_t di;
    int kind, partition, combo = 0;
    for (di = 0; di < TC_DTYPE_COUNT; ++di) {
        const gpuprim_dtype_t d = tc_all_dtypes[di];
        for (kind = GPUPRIM_KEEP_FLAGGED; kind <= GPUPRIM_KEEP_NOT_NAN; ++kind)
            for (partition = 0; partition < 2; ++partition) {
                int s;
                for (s = 0; s < 3; ++s, ++combo) {
                    const uint64_t n = sizes[(size_t)(combo * 7 + s) % SIZE_COUNT];
                    const tc_pattern_t p = select_patterns[(size_t)combo % SELECT_PATTERN_COUNT];
                    const gpuprim_dtype_t fd = flag_dtypes[combo % 8];
                    void *x = tc_xmalloc(n * 8 + 8), *flags = tc_xmalloc(n * 8 + 8);
                    uint64_t scalar, high;
                    tc_fill(d, x, n, p);
                    fill_flags(fd, flags, n, combo % 6);
                    scalar = pick_scalar(d, x, n);
                    high = pick_scalar(d, x, n);
                    check_select(ctx, d, x, n, kind, scalar, high, fd, kind == GPUPRIM_KEEP_FLAGGED ? flags : NULL,
                                 select_shape(combo, partition));
                    free(x);
                    free(flags);
                }
            }
    }
}

/* All kept, none kept, alternating, by comparisons with the type's extremes. */
static void test_all_none_alternating(gpuprim_context_t ctx) {
    size_t di;
    int combo = 0;
    for (di = 0; di < TC_DTYPE_COUNT; ++di) {
        const gpuprim_dtype_t d = tc_all_dtypes[di];
        const uint64_t n = 4097;
        const uint64_t lowest = tc_is_float(d) ? (tc_inf_bits(d) | tc_sign_bit(d)) : tc_identity(GPUPRIM_OP_MAX, d);
        const uint64_t highest = tc_is_float(d) ? tc_inf_bits(d) : tc_identity(GPUPRIM_OP_MIN, d);
        void *x = tc_xmalloc(n * 8), *alternating = tc_xmalloc(n * 8);
        uint64_t i;
        int partition;
        tc_fill(d, x, n, TC_MODERATE);
        for (i = 0; i < n; ++i) tc_set(d, alternating, i, (i & 1) ? highest : lowest);
        for (partition = 0; partition < 2; ++partition, ++combo) {
            /* x >= lowest: all (integers; floats: all but NaNs, which MODERATE has none of) */
            check_select(ctx, d, x, n, GPUPRIM_KEEP_GREATER_EQUAL, lowest, 0, NO_DTYPE, NULL,
                         select_shape(combo, partition));
            /* x < lowest: none */
            check_select(ctx, d, x, n, GPUPRIM_KEEP_LESS, lowest, 0, NO_DTYPE, NULL, select_shape(combo + 1, partition));
            /* alternating extremes: every other one */
            check_select(ctx, d, alternating, n, GPUPRIM_KEEP_EQUAL, highest, 0, NO_DTYPE, NULL,
                         select_shape(combo + 2, partition));
            check_select(ctx, d, alternating, n, GPUPRIM_KEEP_IN_RANGE, lowest, highest, NO_DTYPE, NULL,
                         select_shape(combo + 3, partition));
        }
        free(x);
        free(alternating);
    }
}

/* Keys in runs: kind 0 runs of one (random bits), 1 one value, 2 runs of random lengths up to max_run of values of
 * pattern p, 3 alternating two values, 4 sorted few values (long runs). */
static void fill_runs(gpuprim_dtype_t d, void *x, uint64_t n, int kind, tc_pattern_t p, uint64_t max_run) {
    uint64_t i = 0;
    if (kind == 0 || kind == 1) {
        tc_fill(d, x, n, kind == 0 ? TC_RANDOM_BITS : TC_EQUAL);
        return;
    }
    if (kind == 4) {
        tc_fill(d, x, n, TC_SMALL_RANGE);
        if (n > 0) {
            uint64_t *perm = (uint64_t *)tc_xmalloc(n * sizeof *perm);
            void *tmp = tc_xmalloc(n * 8);
            memcpy(tmp, x, n * tc_size(d));
            tc_reference_sort_permutation(d, tmp, n, 0, perm);
            tc_permute(d, tmp, perm, n, x);
            free(perm);
            free(tmp);
        }
        return;
    }
    if (kind == 3) {
        uint64_t a[2] = {0, 0};
        tc_fill(d, a, 2, p);
        for (i = 0; i < n; ++i) tc_set(d, x, i, tc_get(d, a, i & 1));
        return;
    }
    while (i < n) {
        uint64_t v = 0, len = 1 + tc_below(max_run), k;
        tc_fill(d, &v, 1, p);
        for (k = 0; k < len && i < n; ++k, ++i) tc_set(d, x, i, tc_get(d, &v, 0));
    }
}

static const tc_pattern_t run_patterns[] = {TC_NAN_HEAVY, TC_ZEROS, TC_SPECIAL, TC_SMALL_RANGE, TC_TINY, TC_MODERATE};
#define RUN_PATTERN_COUNT (sizeof run_patterns / sizeof run_patterns[0])

static runs_shape_t runs_shape(int combo, int mode) {
    runs_shape_t sh;
    sh.mode = mode;
    sh.vd = value_dtypes[combo % 5];
    sh.with_keys = combo % 4 != 2;
    sh.sd = combo % 5 == 1 ? NO_DTYPE : index_dtypes[combo % 4];
    sh.ld = combo % 6 == 4 ? NO_DTYPE : index_dtypes[(combo / 4) % 4];
    if (!sh.with_keys && sh.sd == NO_DTYPE && sh.ld == NO_DTYPE) sh.ld = GPUPRIM_DTYPE_I64;
    sh.sink = tc_count_sink_of(combo / 2);
    sh.extra = combo % 7 == 2 ? 3 : 0;
    return sh;
}

/* Every dtype and mode on run shapes of each kind. */
static void test_runs(gpuprim_context_t ctx) {
    size_t di;
    int mode, kind, combo = 0;
    for (di = 0; di < TC_DTYPE_COUNT; ++di) {
        const gpuprim_dtype_t d = tc_all_dtypes[di];
        for (mode = 0; mode < 4; ++mode)
            for (kind = 0; kind < 5; ++kind, ++combo) {
                const uint64_t n = sizes[(size_t)(combo * 5 + kind) % SIZE_COUNT];
                const tc_pattern_t p = run_patterns[(size_t)combo % RUN_PATTERN_COUNT];
                void *x = tc_xmalloc(n * 8 + 16);
                fill_runs(d, x, n, kind, p, combo % 3 == 0 ? 3 : 40);
                check_runs(ctx, d, x, n, runs_shape(combo, mode));
                free(x);
            }
    }
}

/* Large inputs: several pieces of the CPU's parallel path, many CUDA tiles. */
static void test_large(gpuprim_context_t ctx) {
    const uint64_t n1 = (1ull << 20) + 3, n2 = 3000017;
    void *x = tc_xmalloc(n2 * 8), *flags = tc_xmalloc(n2 * 8);
    select_shape_t sh = select_shape(2, 0);
    runs_shape_t rs = runs_shape(3, 2);
    tc_fill(GPUPRIM_DTYPE_F32, x, n1, TC_NAN_SPARSE);
    sh.vd = GPUPRIM_DTYPE_U64;
    sh.pd = GPUPRIM_DTYPE_I64;
    check_select(ctx, GPUPRIM_DTYPE_F32, x, n1, GPUPRIM_KEEP_LESS, tc_from_double(GPUPRIM_DTYPE_F32, 0.25), 0,
                 NO_DTYPE, NULL, sh);
    fill_flags(GPUPRIM_DTYPE_U8, flags, n2, 0);
    tc_fill(GPUPRIM_DTYPE_U8, x, n2, TC_RANDOM_BITS);
    sh = select_shape(1, 1);
    check_select(ctx, GPUPRIM_DTYPE_U8, x, n2, GPUPRIM_KEEP_FLAGGED, 0, 0, GPUPRIM_DTYPE_U8, flags, sh);
    fill_runs(GPUPRIM_DTYPE_I64, x, n2, 2, TC_SMALL_RANGE, 9);
    check_runs(ctx, GPUPRIM_DTYPE_I64, x, n2, runs_shape(1, 1));
    fill_runs(GPUPRIM_DTYPE_F16, x, n1, 4, TC_SMALL_RANGE, 1);
    rs.with_keys = 1;
    rs.sd = GPUPRIM_DTYPE_U32;
    rs.ld = GPUPRIM_DTYPE_I32;
    check_runs(ctx, GPUPRIM_DTYPE_F16, x, n1, rs);
    fill_runs(GPUPRIM_DTYPE_U32, x, n2, 2, TC_MODERATE, 3);
    rs = runs_shape(4, 3);
    rs.sd = NO_DTYPE;
    rs.ld = GPUPRIM_DTYPE_U64;
    check_runs(ctx, GPUPRIM_DTYPE_U32, x, n2, rs);
    free(x);
    free(flags);
}

/* Answers worked out by hand from the header, independent of the references. */
static void test_known_answers(gpuprim_context_t ctx) {
    /* f32: -0, +0, NaN, -NaN, 1, +inf, NaN(payload 1) */
    const uint32_t x[7] = {0x80000000u, 0x00000000u, 0x7FC00000u, 0xFFC00000u, 0x3F800000u, 0x7F800000u, 0x7F800001u};
    const float zero = 0.0f, one = 1.0f;
    gpuprim_buffer_t in = tc_buffer_from(ctx, GPUPRIM_DTYPE_F32, x, 7), out = tc_buffer(ctx, GPUPRIM_DTYPE_F32, 7);
    gpuprim_buffer_t pos = tc_buffer(ctx, GPUPRIM_DTYPE_U32, 7);
    gpuprim_predicate_t p;
    uint32_t got[7];
    uint64_t count = 0;
    tc_where("select known answers");
    tc_poison(ctx, pos, GPUPRIM_DTYPE_U32, 7); /* the downloads read past each count */
    tc_poison(ctx, out, GPUPRIM_DTYPE_F32, 7);
    memset(&p, 0, sizeof p);
    p.scalar = &zero;
    p.kind = GPUPRIM_KEEP_EQUAL; /* both zeros */
    CHECK_OK(gpuprim_select(ctx, in, NULL, &p, NULL, NULL, pos, &count, NULL));
    REQUIRE_OK(gpuprim_buffer_download(ctx, pos, 0, got, 7));
    CHECKF(count == 2 && got[0] == 0 && got[1] == 1, "EQUAL 0.0: count %llu positions %u %u",
           (unsigned long long)count, got[0], got[1]);
    p.kind = GPUPRIM_KEEP_NOT_EQUAL; /* the NaNs, 1, inf */
    CHECK_OK(gpuprim_select(ctx, in, NULL, &p, NULL, NULL, pos, &count, NULL));
    REQUIRE_OK(gpuprim_buffer_download(ctx, pos, 0, got, 7));
    CHECKF(count == 5 && got[0] == 2 && got[1] == 3 && got[2] == 4 && got[3] == 5 && got[4] == 6,
           "NOT_EQUAL 0.0: count %llu", (unsigned long long)count);
    p.kind = GPUPRIM_KEEP_NAN;
    CHECK_OK(gpuprim_select(ctx, in, NULL, &p, NULL, NULL, pos, &count, NULL));
    REQUIRE_OK(gpuprim_buffer_download(ctx, pos, 0, got, 7));
    CHECKF(count == 3 && got[0] == 2 && got[1] == 3 && got[2] == 6, "NAN: count %llu", (unsigned long long)count);
    p.kind = GPUPRIM_KEEP_GREATER_EQUAL; /* >= 1: 1, inf */
    p.scalar = &one;
    CHECK_OK(gpuprim_partition(ctx, in, NULL, &p, out, NULL, &count, NULL));
    REQUIRE_OK(gpuprim_buffer_download(ctx, out, 0, got, 7));
    CHECKF(count == 2 && got[0] == x[4] && got[1] == x[5] && got[2] == x[0] && got[3] == x[1] && got[4] == x[2] &&
               got[5] == x[3] && got[6] == x[6],
           "partition >= 1: count %llu, stable others", (unsigned long long)count);
    /* unique by bits: -0 | +0 | NaN | -NaN | 1 | inf | NaN(1) = 7 runs; with +0 +0 NaN NaN: fewer */
    {
        const uint32_t y[6] = {0x00000000u, 0x00000000u, 0x80000000u, 0x7FC00000u, 0x7FC00000u, 0x7FC00001u};
        const uint32_t want_keys[4] = {0x00000000u, 0x80000000u, 0x7FC00000u, 0x7FC00001u};
        const uint64_t want_starts[4] = {0, 2, 3, 5}, want_lengths[4] = {2, 1, 2, 1};
        gpuprim_buffer_t yin = tc_buffer_from(ctx, GPUPRIM_DTYPE_F32, y, 6), ko = tc_buffer(ctx, GPUPRIM_DTYPE_F32, 6);
        gpuprim_buffer_t st = tc_buffer(ctx, GPUPRIM_DTYPE_U64, 6), le = tc_buffer(ctx, GPUPRIM_DTYPE_U64, 6);
        uint64_t starts[4], lengths[4];
        int i;
        tc_poison(ctx, ko, GPUPRIM_DTYPE_F32, 6);
        tc_poison(ctx, st, GPUPRIM_DTYPE_U64, 6);
        tc_poison(ctx, le, GPUPRIM_DTYPE_U64, 6);
        CHECK_OK(gpuprim_run_length_encode(ctx, yin, GPUPRIM_RUNS_ALL, ko, st, le, &count, NULL));
        REQUIRE_OK(gpuprim_buffer_download(ctx, ko, 0, got, 4));
        REQUIRE_OK(gpuprim_buffer_download(ctx, st, 0, starts, 4));
        REQUIRE_OK(gpuprim_buffer_download(ctx, le, 0, lengths, 4));
        CHECKF(count == 4, "run-length encode: %llu runs, expected 4", (unsigned long long)count);
        for (i = 0; i < 4; ++i)
            CHECKF(got[i] == want_keys[i] && starts[i] == want_starts[i] && lengths[i] == want_lengths[i],
                   "run %d: key %08x start %llu length %llu", i, got[i], (unsigned long long)starts[i],
                   (unsigned long long)lengths[i]);
        CHECK_OK(gpuprim_run_length_encode(ctx, yin, GPUPRIM_RUNS_NON_TRIVIAL, NULL, st, le, &count, NULL));
        REQUIRE_OK(gpuprim_buffer_download(ctx, st, 0, starts, 2));
        REQUIRE_OK(gpuprim_buffer_download(ctx, le, 0, lengths, 2));
        CHECKF(count == 2 && starts[0] == 0 && lengths[0] == 2 && starts[1] == 3 && lengths[1] == 2,
               "non-trivial runs: %llu", (unsigned long long)count);
        CHECK_OK(gpuprim_buffer_destroy(ctx, yin));
        CHECK_OK(gpuprim_buffer_destroy(ctx, ko));
        CHECK_OK(gpuprim_buffer_destroy(ctx, st));
        CHECK_OK(gpuprim_buffer_destroy(ctx, le));
    }
    /* i8 flags with only the sign bit, u16 flags 0x100: set */
    {
        const int8_t f8[4] = {0, -128, 0, 1};
        const uint16_t f16[4] = {0x100, 0, 0x8000, 0};
        gpuprim_buffer_t bf8 = tc_buffer_from(ctx, GPUPRIM_DTYPE_I8, f8, 4), bf16 = tc_buffer_from(ctx, GPUPRIM_DTYPE_U16, f16, 4);
        gpuprim_buffer_t sub = tc_view(ctx, in, GPUPRIM_DTYPE_F32, 0, 4);
        memset(&p, 0, sizeof p);
        p.kind = GPUPRIM_KEEP_FLAGGED;
        p.flags = bf8;
        CHECK_OK(gpuprim_select(ctx, sub, NULL, &p, NULL, NULL, pos, &count, NULL));
        REQUIRE_OK(gpuprim_buffer_download(ctx, pos, 0, got, 2));
        CHECKF(count == 2 && got[0] == 1 && got[1] == 3, "i8 flags: %llu", (unsigned long long)count);
        p.flags = bf16;
        CHECK_OK(gpuprim_select(ctx, sub, NULL, &p, NULL, NULL, pos, &count, NULL));
        REQUIRE_OK(gpuprim_buffer_download(ctx, pos, 0, got, 2));
        CHECKF(count == 2 && got[0] == 0 && got[1] == 2, "u16 flags: %llu", (unsigned long long)count);
        CHECK_OK(gpuprim_buffer_destroy(ctx, sub));
        CHECK_OK(gpuprim_buffer_destroy(ctx, bf8));
        CHECK_OK(gpuprim_buffer_destroy(ctx, bf16));
    }
    /* i32 IN_RANGE [-1, 2): -1, 0, 1; and an empty range (high <= low) */
    {
        const int32_t v[6] = {-2, -1, 0, 1, 2, INT32_MIN};
        const int32_t low = -1, high = 2;
        gpuprim_buffer_t bi = tc_buffer_from(ctx, GPUPRIM_DTYPE_I32, v, 6);
        memset(&p, 0, sizeof p);
        p.kind = GPUPRIM_KEEP_IN_RANGE;
        p.scalar = &low;
        p.scalar_high = &high;
        CHECK_OK(gpuprim_select(ctx, bi, NULL, &p, NULL, NULL, pos, &count, NULL));
        REQUIRE_OK(gpuprim_buffer_download(ctx, pos, 0, got, 3));
        CHECKF(count == 3 && got[0] == 1 && got[1] == 2 && got[2] == 3, "IN_RANGE: %llu", (unsigned long long)count);
        p.scalar = &high;
        p.scalar_high = &low;
        CHECK_OK(gpuprim_select(ctx, bi, NULL, &p, NULL, NULL, pos, &count, NULL));
        CHECKF(count == 0, "IN_RANGE [2, -1): %llu", (unsigned long long)count);
        p.kind = GPUPRIM_KEEP_NAN;
        CHECK_OK(gpuprim_select(ctx, bi, NULL, &p, NULL, NULL, pos, &count, NULL));
        CHECKF(count == 0, "NAN of integers: %llu", (unsigned long long)count);
        p.kind = GPUPRIM_KEEP_NOT_NAN;
        CHECK_OK(gpuprim_select(ctx, bi, NULL, &p, NULL, NULL, pos, &count, NULL));
        CHECKF(count == 6, "NOT_NAN of integers: %llu", (unsigned long long)count);
        CHECK_OK(gpuprim_buffer_destroy(ctx, bi));
    }
    CHECK_OK(gpuprim_buffer_destroy(ctx, in));
    CHECK_OK(gpuprim_buffer_destroy(ctx, out));
    CHECK_OK(gpuprim_buffer_destroy(ctx, pos));
}

/* Every error: the status, a message naming the argument, and nothing written (outputs, *count). */
static void test_errors(gpuprim_context_t ctx) {
    const int32_t data[4] = {3, 1, 2, 5}, scalar = 2;
    gpuprim_buffer_t in = tc_buffer_from(ctx, GPUPRIM_DTYPE_I32, data, 4);
    gpuprim_buffer_t fin = tc_buffer(ctx, GPUPRIM_DTYPE_F32, 4), flags = tc_buffer(ctx, GPUPRIM_DTYPE_U8, 4);
    gpuprim_buffer_t fflags = tc_buffer(ctx, GPUPRIM_DTYPE_F32, 4), short_flags = tc_buffer(ctx, GPUPRIM_DTYPE_U8, 3);
    gpuprim_buffer_t values = tc_buffer(ctx, GPUPRIM_DTYPE_U16, 4), short_values = tc_buffer(ctx, GPUPRIM_DTYPE_U16, 3);
    gpuprim_buffer_t big = tc_buffer(ctx, GPUPRIM_DTYPE_U8, 200), gone = tc_buffer(ctx, GPUPRIM_DTYPE_I32, 4);
    gpuprim_buffer_t big_in = NULL, i8_positions = NULL, foreign;
    tc_known_t out = tc_known(ctx, GPUPRIM_DTYPE_I32, 4), out_short = tc_known(ctx, GPUPRIM_DTYPE_I32, 3);
    tc_known_t out_f32 = tc_known(ctx, GPUPRIM_DTYPE_F32, 4), vout = tc_known(ctx, GPUPRIM_DTYPE_U16, 4);
    tc_known_t vout_u8 = tc_known(ctx, GPUPRIM_DTYPE_U8, 4), vout_short = tc_known(ctx, GPUPRIM_DTYPE_U16, 3);
    tc_known_t positions = tc_known(ctx, GPUPRIM_DTYPE_U32, 4), positions_short = tc_known(ctx, GPUPRIM_DTYPE_U32, 3);
    tc_known_t positions_f32 = tc_known(ctx, GPUPRIM_DTYPE_F32, 4), count_out = tc_known(ctx, GPUPRIM_DTYPE_U64, 1);
    tc_known_t count_out_f32 = tc_known(ctx, GPUPRIM_DTYPE_F32, 1), starts = tc_known(ctx, GPUPRIM_DTYPE_I64, 4);
    tc_known_t lengths = tc_known(ctx, GPUPRIM_DTYPE_I32, 4), lengths_f64 = tc_known(ctx, GPUPRIM_DTYPE_F64, 4);
    tc_known_t lengths_short = tc_known(ctx, GPUPRIM_DTYPE_U32, 2);
    gpuprim_buffer_t count_empty = tc_buffer(ctx, GPUPRIM_DTYPE_U32, 0);
    gpuprim_context_t other = NULL;
    gpuprim_predicate_t p, bad;
    uint64_t count = 77;
    int fake_context = 0;
    tc_where("select errors");
    CHECK_OK(gpuprim_buffer_destroy(ctx, gone));
    REQUIRE_OK(gpuprim_context_create(NULL, &other, NULL, 0));
    foreign = tc_buffer(other, GPUPRIM_DTYPE_I32, 4);
    memset(&p, 0, sizeof p);
    p.kind = GPUPRIM_KEEP_LESS;
    p.scalar = &scalar;

    /* context and handles */
    CHECK_STATUS(gpuprim_select(NULL, in, NULL, &p, out.b, NULL, NULL, &count, NULL), GPUPRIM_ERROR_NULL_POINTER);
    CHECK_STATUS(gpuprim_select((gpuprim_context_t)&fake_context, in, NULL, &p, out.b, NULL, NULL, &count, NULL),
                 GPUPRIM_ERROR_INVALID_HANDLE);
    CHECK_STATUS(gpuprim_partition(NULL, in, NULL, &p, out.b, NULL, &count, NULL), GPUPRIM_ERROR_NULL_POINTER);
    CHECK_STATUS(gpuprim_unique(NULL, in, NULL, out.b, NULL, &count, NULL), GPUPRIM_ERROR_NULL_POINTER);
    CHECK_STATUS(gpuprim_run_length_encode(NULL, in, GPUPRIM_RUNS_ALL, out.b, NULL, NULL, &count, NULL),
                 GPUPRIM_ERROR_NULL_POINTER);
    TC_EXPECT_FAIL(ctx, gpuprim_select(ctx, NULL, NULL, &p, out.b, NULL, NULL, &count, NULL), GPUPRIM_ERROR_NULL_POINTER,
                   "'input'");
    TC_EXPECT_FAIL(ctx, gpuprim_select(ctx, gone, NULL, &p, out.b, NULL, NULL, &count, NULL),
                   GPUPRIM_ERROR_INVALID_HANDLE, "'input'");
    TC_EXPECT_FAIL(ctx, gpuprim_select(ctx, foreign, NULL, &p, out.b, NULL, NULL, &count, NULL),
                   GPUPRIM_ERROR_CONTEXT_MISMATCH, "'input'");
    TC_EXPECT_FAIL(ctx, gpuprim_select(ctx, in, NULL, &p, gone, NULL, NULL, &count, NULL), GPUPRIM_ERROR_INVALID_HANDLE,
                   "'output'");
    TC_EXPECT_FAIL(ctx, gpuprim_partition(ctx, in, NULL, &p, NULL, NULL, &count, NULL), GPUPRIM_ERROR_NULL_POINTER,
                   "'output'");
    TC_EXPECT_FAIL(ctx, gpuprim_partition(ctx, in, NULL, &p, foreign, NULL, &count, NULL),
                   GPUPRIM_ERROR_CONTEXT_MISMATCH, "'output'");

    /* the predicate */
    TC_EXPECT_FAIL(ctx, gpuprim_select(ctx, in, NULL, NULL, out.b, NULL, NULL, &count, NULL), GPUPRIM_ERROR_NULL_POINTER,
                   "'predicate'");
    bad = p;
    bad.kind = 10;
    TC_EXPECT_FAIL(ctx, gpuprim_select(ctx, in, NULL, &bad, out.b, NULL, NULL, &count, NULL), GPUPRIM_ERROR_INVALID_ENUM,
                   "'predicate->kind'");
    bad.kind = -1;
    TC_EXPECT_FAIL(ctx, gpuprim_partition(ctx, in, NULL, &bad, out.b, NULL, &count, NULL), GPUPRIM_ERROR_INVALID_ENUM,
                   "'predicate->kind'");
    bad = p;
    bad.scalar = NULL;
    TC_EXPECT_FAIL(ctx, gpuprim_select(ctx, in, NULL, &bad, out.b, NULL, NULL, &count, NULL), GPUPRIM_ERROR_NULL_POINTER,
                   "'predicate->scalar'");
    bad.kind = GPUPRIM_KEEP_IN_RANGE;
    bad.scalar = &scalar;
    TC_EXPECT_FAIL(ctx, gpuprim_select(ctx, in, NULL, &bad, out.b, NULL, NULL, &count, NULL), GPUPRIM_ERROR_NULL_POINTER,
                   "'predicate->scalar_high'");
    bad = p;
    bad.kind = GPUPRIM_KEEP_FLAGGED;
    TC_EXPECT_FAIL(ctx, gpuprim_select(ctx, in, NULL, &bad, out.b, NULL, NULL, &count, NULL), GPUPRIM_ERROR_NULL_POINTER,
                   "'predicate->flags'");
    bad.flags = fflags;
    TC_EXPECT_FAIL(ctx, gpuprim_select(ctx, in, NULL, &bad, out.b, NULL, NULL, &count, NULL),
                   GPUPRIM_ERROR_DTYPE_MISMATCH, "'predicate->flags'");
    bad.flags = short_flags;
    TC_EXPECT_FAIL(ctx, gpuprim_select(ctx, in, NULL, &bad, out.b, NULL, NULL, &count, NULL),
                   GPUPRIM_ERROR_SIZE_MISMATCH, "'predicate->flags'");
    bad.flags = gone;
    TC_EXPECT_FAIL(ctx, gpuprim_select(ctx, in, NULL, &bad, out.b, NULL, NULL, &count, NULL),
                   GPUPRIM_ERROR_INVALID_HANDLE, "'predicate->flags'");
    bad = p;
    bad.flags = flags; /* flags with a comparison */
    TC_EXPECT_FAIL(ctx, gpuprim_select(ctx, in, NULL, &bad, out.b, NULL, NULL, &count, NULL),
                   GPUPRIM_ERROR_INVALID_ARGUMENT, "compares with the scalars");
    bad.kind = GPUPRIM_KEEP_NOT_NAN; /* flags with a kind that reads no scalar: the message says so */
    TC_EXPECT_FAIL(ctx, gpuprim_select(ctx, in, NULL, &bad, out.b, NULL, NULL, &count, NULL),
                   GPUPRIM_ERROR_INVALID_ARGUMENT, "tests x alone");

    /* outputs and values */
    TC_EXPECT_FAIL(ctx, gpuprim_select(ctx, in, NULL, &p, NULL, NULL, NULL, &count, NULL),
                   GPUPRIM_ERROR_INVALID_ARGUMENT, "'positions'");
    TC_EXPECT_FAIL(ctx, gpuprim_select(ctx, in, NULL, &p, out_f32.b, NULL, NULL, &count, NULL),
                   GPUPRIM_ERROR_DTYPE_MISMATCH, "'output'");
    TC_EXPECT_FAIL(ctx, gpuprim_partition(ctx, in, NULL, &p, out_short.b, NULL, &count, NULL),
                   GPUPRIM_ERROR_SIZE_MISMATCH, "'output'");
    TC_EXPECT_FAIL(ctx, gpuprim_select(ctx, in, values, &p, out.b, NULL, NULL, &count, NULL),
                   GPUPRIM_ERROR_INVALID_ARGUMENT, "'values_out'");
    TC_EXPECT_FAIL(ctx, gpuprim_partition(ctx, in, NULL, &p, out.b, vout.b, &count, NULL),
                   GPUPRIM_ERROR_INVALID_ARGUMENT, "'values'");
    TC_EXPECT_FAIL(ctx, gpuprim_select(ctx, in, short_values, &p, out.b, vout.b, NULL, &count, NULL),
                   GPUPRIM_ERROR_SIZE_MISMATCH, "'values'");
    TC_EXPECT_FAIL(ctx, gpuprim_select(ctx, in, values, &p, out.b, vout_u8.b, NULL, &count, NULL),
                   GPUPRIM_ERROR_DTYPE_MISMATCH, "'values_out'");
    TC_EXPECT_FAIL(ctx, gpuprim_partition(ctx, in, values, &p, out.b, vout_short.b, &count, NULL),
                   GPUPRIM_ERROR_SIZE_MISMATCH, "'values_out'");
    TC_EXPECT_FAIL(ctx, gpuprim_select(ctx, in, NULL, &p, NULL, NULL, positions_f32.b, &count, NULL),
                   GPUPRIM_ERROR_DTYPE_MISMATCH, "'positions'");
    TC_EXPECT_FAIL(ctx, gpuprim_select(ctx, in, NULL, &p, NULL, NULL, positions_short.b, &count, NULL),
                   GPUPRIM_ERROR_SIZE_MISMATCH, "'positions'");

    /* the count */
    TC_EXPECT_FAIL(ctx, gpuprim_select(ctx, in, NULL, &p, out.b, NULL, NULL, NULL, NULL), GPUPRIM_ERROR_INVALID_ARGUMENT,
                   "'count_out'");
    TC_EXPECT_FAIL(ctx, gpuprim_unique(ctx, in, NULL, out.b, NULL, NULL, NULL), GPUPRIM_ERROR_INVALID_ARGUMENT,
                   "'count'");
    TC_EXPECT_FAIL(ctx, gpuprim_select(ctx, in, NULL, &p, out.b, NULL, NULL, &count, count_out_f32.b),
                   GPUPRIM_ERROR_DTYPE_MISMATCH, "'count_out'");
    TC_EXPECT_FAIL(ctx, gpuprim_partition(ctx, in, NULL, &p, out.b, NULL, &count, count_empty),
                   GPUPRIM_ERROR_SIZE_MISMATCH, "'count_out'");
    TC_EXPECT_FAIL(ctx, gpuprim_unique(ctx, in, NULL, out.b, NULL, NULL, gone), GPUPRIM_ERROR_INVALID_HANDLE,
                   "'count_out'");

    /* index outputs of a dtype that is not an index dtype */
    {
        const uint8_t scalar8 = 100;
        gpuprim_predicate_t p8;
        gpuprim_buffer_t i8_count = tc_buffer(ctx, GPUPRIM_DTYPE_I8, 1);
        memset(&p8, 0, sizeof p8);
        p8.kind = GPUPRIM_KEEP_LESS;
        p8.scalar = &scalar8;
        big_in = tc_buffer(ctx, GPUPRIM_DTYPE_U8, 200);
        i8_positions = tc_buffer(ctx, GPUPRIM_DTYPE_I8, 200);
        TC_EXPECT_FAIL(ctx, gpuprim_select(ctx, big_in, NULL, &p8, NULL, NULL, i8_positions, &count, NULL),
                       GPUPRIM_ERROR_DTYPE_MISMATCH, "'positions'");
        TC_EXPECT_FAIL(ctx, gpuprim_select(ctx, big_in, NULL, &p8, big, NULL, NULL, &count, i8_count),
                       GPUPRIM_ERROR_DTYPE_MISMATCH, "'count_out'");
        CHECK_OK(gpuprim_buffer_destroy(ctx, i8_count));
    }
    /* the input's count must fit count_out: buffers wrapped over a small block declaring 2^31 + 1 elements (refused
       before anything is read), where the backend lets them be wrapped */
    {
        void *data = NULL;
        gpuprim_buffer_t huge = NULL, huge_out = NULL;
        REQUIRE_OK(gpuprim_buffer_get_info(ctx, big, NULL, NULL, &data));
        if (gpuprim_buffer_wrap(ctx, GPUPRIM_DTYPE_U8, data, (1ull << 31) + 1, &huge) == GPUPRIM_SUCCESS) {
            tc_known_t i32_count = tc_known(ctx, GPUPRIM_DTYPE_I32, 1);
            const uint8_t s8 = 1;
            gpuprim_predicate_t p8;
            memset(&p8, 0, sizeof p8);
            p8.kind = GPUPRIM_KEEP_LESS;
            p8.scalar = &s8;
            /* the output is checked for length first: make one long enough, apart (a second wrap past the first) */
            if (gpuprim_buffer_wrap(ctx, GPUPRIM_DTYPE_U8, (char *)data + ((1ull << 31) + 64), (1ull << 31) + 1,
                                    &huge_out) == GPUPRIM_SUCCESS) {
                TC_EXPECT_FAIL(ctx, gpuprim_select(ctx, huge, NULL, &p8, huge_out, NULL, NULL, &count, i32_count.b),
                               GPUPRIM_ERROR_INVALID_ARGUMENT, "'count_out'");
                TC_EXPECT_FAIL(ctx,
                               gpuprim_unique(ctx, huge, NULL, huge_out, NULL, &count, i32_count.b),
                               GPUPRIM_ERROR_INVALID_ARGUMENT, "'count_out'");
                CHECK_OK(gpuprim_buffer_destroy(ctx, huge_out));
            }
            TC_CHECK_UNCHANGED(ctx, i32_count);
            tc_free_known(ctx, i32_count);
            CHECK_OK(gpuprim_buffer_destroy(ctx, huge));
        }
    }

    /* overlaps: outputs over inputs and over each other */
    {
        gpuprim_buffer_t in_view = tc_view(ctx, out.b, GPUPRIM_DTYPE_I32, 0, 4);
        gpuprim_buffer_t pos_over_out = tc_view(ctx, out.b, GPUPRIM_DTYPE_U32, 0, 4);
        gpuprim_buffer_t count_over_out = tc_view(ctx, out.b, GPUPRIM_DTYPE_U32, 3, 1);
        gpuprim_buffer_t flags_over_out = tc_view(ctx, out.b, GPUPRIM_DTYPE_U8, 0, 4);
        gpuprim_predicate_t pf;
        memset(&pf, 0, sizeof pf);
        pf.kind = GPUPRIM_KEEP_FLAGGED;
        pf.flags = flags_over_out;
        TC_EXPECT_FAIL(ctx, gpuprim_select(ctx, in_view, NULL, &p, out.b, NULL, NULL, &count, NULL),
                       GPUPRIM_ERROR_INVALID_ARGUMENT, "overlap");
        TC_EXPECT_FAIL(ctx, gpuprim_partition(ctx, in_view, NULL, &p, out.b, NULL, &count, NULL),
                       GPUPRIM_ERROR_INVALID_ARGUMENT, "'output'");
        TC_EXPECT_FAIL(ctx, gpuprim_select(ctx, in, NULL, &p, out.b, NULL, pos_over_out, &count, NULL),
                       GPUPRIM_ERROR_INVALID_ARGUMENT, "'positions'");
        TC_EXPECT_FAIL(ctx, gpuprim_select(ctx, in, NULL, &p, out.b, NULL, NULL, &count, count_over_out),
                       GPUPRIM_ERROR_INVALID_ARGUMENT, "'count_out'");
        TC_EXPECT_FAIL(ctx, gpuprim_select(ctx, in, NULL, &pf, out.b, NULL, NULL, &count, NULL),
                       GPUPRIM_ERROR_INVALID_ARGUMENT, "'predicate->flags'");
        TC_EXPECT_FAIL(ctx, gpuprim_unique(ctx, in_view, NULL, out.b, NULL, &count, NULL), GPUPRIM_ERROR_INVALID_ARGUMENT,
                       "'keys_out'");
        TC_EXPECT_FAIL(ctx, gpuprim_unique(ctx, in, NULL, out.b, NULL, &count, count_over_out),
                       GPUPRIM_ERROR_INVALID_ARGUMENT, "'count_out'");
        TC_EXPECT_FAIL(ctx,
                       gpuprim_run_length_encode(ctx, in, GPUPRIM_RUNS_ALL, out.b, pos_over_out, NULL, &count, NULL),
                       GPUPRIM_ERROR_INVALID_ARGUMENT, "'starts'");
        TC_EXPECT_FAIL(ctx,
                       gpuprim_run_length_encode(ctx, in_view, GPUPRIM_RUNS_ALL, NULL, NULL, pos_over_out, &count,
                                                 NULL),
                       GPUPRIM_ERROR_INVALID_ARGUMENT, "'lengths'");
        TC_EXPECT_FAIL(ctx, gpuprim_select(ctx, in, values, &p, out.b, values, NULL, &count, NULL),
                       GPUPRIM_ERROR_INVALID_ARGUMENT, "'values_out'");
        CHECK_OK(gpuprim_buffer_destroy(ctx, in_view));
        CHECK_OK(gpuprim_buffer_destroy(ctx, pos_over_out));
        CHECK_OK(gpuprim_buffer_destroy(ctx, count_over_out));
        CHECK_OK(gpuprim_buffer_destroy(ctx, flags_over_out));
    }

    /* unique */
    TC_EXPECT_FAIL(ctx, gpuprim_unique(ctx, NULL, NULL, out.b, NULL, &count, NULL), GPUPRIM_ERROR_NULL_POINTER, "'keys'");
    TC_EXPECT_FAIL(ctx, gpuprim_unique(ctx, in, NULL, NULL, NULL, &count, NULL), GPUPRIM_ERROR_NULL_POINTER,
                   "'keys_out'");
    TC_EXPECT_FAIL(ctx, gpuprim_unique(ctx, in, NULL, out_f32.b, NULL, &count, NULL), GPUPRIM_ERROR_DTYPE_MISMATCH,
                   "'keys_out'");
    TC_EXPECT_FAIL(ctx, gpuprim_unique(ctx, in, NULL, out_short.b, NULL, &count, NULL), GPUPRIM_ERROR_SIZE_MISMATCH,
                   "'keys_out'");
    TC_EXPECT_FAIL(ctx, gpuprim_unique(ctx, in, values, out.b, NULL, &count, NULL), GPUPRIM_ERROR_INVALID_ARGUMENT,
                   "'values_out'");
    TC_EXPECT_FAIL(ctx, gpuprim_unique(ctx, in, short_values, out.b, vout.b, &count, NULL), GPUPRIM_ERROR_SIZE_MISMATCH,
                   "'values'");
    TC_EXPECT_FAIL(ctx, gpuprim_unique(ctx, in, values, out.b, vout_u8.b, &count, NULL), GPUPRIM_ERROR_DTYPE_MISMATCH,
                   "'values_out'");
    TC_EXPECT_FAIL(ctx, gpuprim_unique(ctx, foreign, NULL, out.b, NULL, &count, NULL), GPUPRIM_ERROR_CONTEXT_MISMATCH,
                   "'keys'");

    /* run-length encode */
    TC_EXPECT_FAIL(ctx, gpuprim_run_length_encode(ctx, in, (gpuprim_runs_t)2, out.b, NULL, NULL, &count, NULL),
                   GPUPRIM_ERROR_INVALID_ENUM, "'runs'");
    TC_EXPECT_FAIL(ctx, gpuprim_run_length_encode(ctx, in, (gpuprim_runs_t)-1, out.b, NULL, NULL, &count, NULL),
                   GPUPRIM_ERROR_INVALID_ENUM, "'runs'");
    TC_EXPECT_FAIL(ctx, gpuprim_run_length_encode(ctx, NULL, GPUPRIM_RUNS_ALL, out.b, NULL, NULL, &count, NULL),
                   GPUPRIM_ERROR_NULL_POINTER, "'input'");
    TC_EXPECT_FAIL(ctx, gpuprim_run_length_encode(ctx, in, GPUPRIM_RUNS_ALL, NULL, NULL, NULL, &count, NULL),
                   GPUPRIM_ERROR_INVALID_ARGUMENT, "'lengths'");
    TC_EXPECT_FAIL(ctx, gpuprim_run_length_encode(ctx, in, GPUPRIM_RUNS_ALL, out_f32.b, NULL, NULL, &count, NULL),
                   GPUPRIM_ERROR_DTYPE_MISMATCH, "'keys_out'");
    TC_EXPECT_FAIL(ctx, gpuprim_run_length_encode(ctx, in, GPUPRIM_RUNS_ALL, out_short.b, NULL, NULL, &count, NULL),
                   GPUPRIM_ERROR_SIZE_MISMATCH, "'keys_out'");
    TC_EXPECT_FAIL(ctx, gpuprim_run_length_encode(ctx, in, GPUPRIM_RUNS_ALL, NULL, NULL, lengths_f64.b, &count, NULL),
                   GPUPRIM_ERROR_DTYPE_MISMATCH, "'lengths'");
    TC_EXPECT_FAIL(ctx, gpuprim_run_length_encode(ctx, in, GPUPRIM_RUNS_ALL, NULL, positions_f32.b, NULL, &count, NULL),
                   GPUPRIM_ERROR_DTYPE_MISMATCH, "'starts'");
    TC_EXPECT_FAIL(ctx, gpuprim_run_length_encode(ctx, in, GPUPRIM_RUNS_ALL, NULL, NULL, lengths_short.b, &count, NULL),
                   GPUPRIM_ERROR_SIZE_MISMATCH, "'lengths'");
    TC_EXPECT_FAIL(ctx,
                   gpuprim_run_length_encode(ctx, in, GPUPRIM_RUNS_NON_TRIVIAL, NULL, starts.b, lengths.b, NULL, NULL),
                   GPUPRIM_ERROR_INVALID_ARGUMENT, "'count'");
    TC_EXPECT_FAIL(ctx,
                   gpuprim_run_length_encode(ctx, in, GPUPRIM_RUNS_ALL, NULL, starts.b, lengths.b, &count,
                                             count_out_f32.b),
                   GPUPRIM_ERROR_DTYPE_MISMATCH, "'count_out'");
    TC_EXPECT_FAIL(ctx, gpuprim_run_length_encode(ctx, in, GPUPRIM_RUNS_ALL, NULL, starts.b, starts.b, &count, NULL),
                   GPUPRIM_ERROR_INVALID_ARGUMENT, "overlap");

    CHECKF(count == 77, "*count = %llu after failed calls: written", (unsigned long long)count);
    TC_CHECK_UNCHANGED(ctx, out);
    TC_CHECK_UNCHANGED(ctx, out_short);
    TC_CHECK_UNCHANGED(ctx, out_f32);
    TC_CHECK_UNCHANGED(ctx, vout);
    TC_CHECK_UNCHANGED(ctx, vout_u8);
    TC_CHECK_UNCHANGED(ctx, vout_short);
    TC_CHECK_UNCHANGED(ctx, positions);
    TC_CHECK_UNCHANGED(ctx, positions_short);
    TC_CHECK_UNCHANGED(ctx, positions_f32);
    TC_CHECK_UNCHANGED(ctx, count_out);
    TC_CHECK_UNCHANGED(ctx, count_out_f32);
    TC_CHECK_UNCHANGED(ctx, starts);
    TC_CHECK_UNCHANGED(ctx, lengths);
    TC_CHECK_UNCHANGED(ctx, lengths_f64);
    TC_CHECK_UNCHANGED(ctx, lengths_short);
    CHECK_OK(gpuprim_buffer_destroy(other, foreign));
    CHECK_OK(gpuprim_context_destroy(other));
    tc_free_known(ctx, out);
    tc_free_known(ctx, out_short);
    tc_free_known(ctx, out_f32);
    tc_free_known(ctx, vout);
    tc_free_known(ctx, vout_u8);
    tc_free_known(ctx, vout_short);
    tc_free_known(ctx, positions);
    tc_free_known(ctx, positions_short);
    tc_free_known(ctx, positions_f32);
    tc_free_known(ctx, count_out);
    tc_free_known(ctx, count_out_f32);
    tc_free_known(ctx, starts);
    tc_free_known(ctx, lengths);
    tc_free_known(ctx, lengths_f64);
    tc_free_known(ctx, lengths_short);
    CHECK_OK(gpuprim_buffer_destroy(ctx, count_empty));
    CHECK_OK(gpuprim_buffer_destroy(ctx, in));
    CHECK_OK(gpuprim_buffer_destroy(ctx, fin));
    CHECK_OK(gpuprim_buffer_destroy(ctx, flags));
    CHECK_OK(gpuprim_buffer_destroy(ctx, fflags));
    CHECK_OK(gpuprim_buffer_destroy(ctx, short_flags));
    CHECK_OK(gpuprim_buffer_destroy(ctx, values));
    CHECK_OK(gpuprim_buffer_destroy(ctx, short_values));
    CHECK_OK(gpuprim_buffer_destroy(ctx, big));
    if (big_in) CHECK_OK(gpuprim_buffer_destroy(ctx, big_in));
    if (i8_positions) CHECK_OK(gpuprim_buffer_destroy(ctx, i8_positions));
}

/* The same outputs on CPU contexts of 1, 2 and 7 threads (many pieces). */
static void test_cpu_threads(void) {
    static const int threads[3] = {1, 2, 7};
    const uint64_t n = 300007;
    void *x = tc_xmalloc(n * 8), *runs = tc_xmalloc(n * 8), *flags = tc_xmalloc(n);
    int t;
    tc_fill(GPUPRIM_DTYPE_F64, x, n, TC_NAN_SPARSE);
    fill_runs(GPUPRIM_DTYPE_U16, runs, n, 2, TC_SMALL_RANGE, 5);
    fill_flags(GPUPRIM_DTYPE_U8, flags, n, 0);
    for (t = 0; t < 3; ++t) {
        gpuprim_context_options_t options;
        gpuprim_context_t cpu = NULL;
        select_shape_t sh = select_shape(t, 0);
        gpuprim_context_options_init(&options);
        options.backend = GPUPRIM_BACKEND_CPU;
        options.cpu_threads = threads[t];
        REQUIRE_OK(gpuprim_context_create(&options, &cpu, NULL, 0));
        tc_where("select on %d CPU threads", threads[t]);
        sh.vd = GPUPRIM_DTYPE_U32;
        check_select(cpu, GPUPRIM_DTYPE_F64, x, n, GPUPRIM_KEEP_GREATER, 0, 0, NO_DTYPE, NULL, sh);
        sh.partition = 1;
        check_select(cpu, GPUPRIM_DTYPE_F64, x, n, GPUPRIM_KEEP_FLAGGED, 0, 0, GPUPRIM_DTYPE_U8, flags, sh);
        check_runs(cpu, GPUPRIM_DTYPE_U16, runs, n, runs_shape(t, 2));
        check_runs(cpu, GPUPRIM_DTYPE_U16, runs, n, runs_shape(t + 1, 3));
        check_runs(cpu, GPUPRIM_DTYPE_U16, runs, n, runs_shape(t, 1));
        CHECK_OK(gpuprim_context_destroy(cpu));
    }
    free(x);
    free(runs);
    free(flags);
}

int main(void) {
    gpuprim_context_t ctx = tc_init("test_select");
    test_known_answers(ctx);
    test_errors(ctx);
    test_kinds(ctx);
    test_all_none_alternating(ctx);
    test_runs(ctx);
    test_large(ctx);
    test_cpu_threads();
    return tc_finish();
}
