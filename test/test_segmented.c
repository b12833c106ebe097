/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpuprim_argsort and the segmented calls (gpuprim_segmented_sort,
 * _argsort, _reduce, _scan) on whichever backend GPUPRIM_BACKEND picks,
 * against references written here (the stable LSD reference sort of
 * test_common.h run on each segment's slice; folds of tc_apply; long double
 * float sums within the usual bound).
 *
 * Segments: uniform rows and CSR offsets of every offset dtype, with empty
 * segments, one giant segment, lengths 1, 2, 31, 32, 33, 4095, 4096, 4097
 * and 65537 (tile boundaries of the CUDA paths), power-law lengths, and
 * offsets[0] > 0 / offsets[last] < n so that elements outside every segment
 * must keep their poisoned (or, in place, original) values. Errors: NULL
 * pointers, struct_size, rows that do not cover the data, offsets of a
 * non-index dtype or of no elements, bad offsets (negative, past the end,
 * decreasing) naming the first bad index; outputs unchanged after a failure.
 * GPUPRIM_TEST_MAX_COUNT caps the data sizes.
 */
#include "test_common.h"

static gpuprim_context_t ctx;
static uint64_t max_count;

static const gpuprim_dtype_t index_dtypes[4] = {GPUPRIM_DTYPE_I32, GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_I64,
                                                GPUPRIM_DTYPE_U64};
static const gpuprim_op_t ops[3] = {GPUPRIM_OP_SUM, GPUPRIM_OP_MIN, GPUPRIM_OP_MAX};

static void destroy(gpuprim_buffer_t b) {
    if (b) CHECK_OK(gpuprim_buffer_destroy(ctx, b));
}

/* ------------------------------------------------------------------------ */
/* Layouts                                                                  */
/* ------------------------------------------------------------------------ */

/* The CSR layouts every test runs through (kind 0..LAYOUT_KINDS-1: those of
 * tc_layout_of_kind, the last with no segments), with offsets of dtype od;
 * `big`: include the long boundary lengths. */
#define LAYOUT_KINDS 6
static tc_layout_t layout_of_kind(int kind, gpuprim_dtype_t od, int big) {
    /* the first six are the short ones */
    static const uint64_t boundary[] = {1, 2, 31, 32, 33, 0, 4095, 4096, 4097, 65537};
    tc_csr_kinds_t kinds;
    kinds.boundary = boundary;
    kinds.boundary_count = big ? sizeof boundary / sizeof boundary[0] : 6;
    kinds.empty_lead = 0;
    kinds.giant = big ? 70001 : 9000;
    kinds.power_law_max = big ? 40000u : 3000u;
    return tc_layout_of_kind(kind, od, max_count, &kinds);
}

/* ------------------------------------------------------------------------ */
/* Sort and argsort                                                         */
/* ------------------------------------------------------------------------ */

typedef enum sort_mode { MODE_KEYS = 0, MODE_PAIRS, MODE_ARGSORT } sort_mode_t;

typedef struct sort_case {
    gpuprim_dtype_t kd;
    sort_mode_t mode;
    gpuprim_dtype_t vd; /* pairs: values; argsort: indices */
    int descending;
    unsigned begin_bit, end_bit; /* end_bit 0: the whole key */
    int in_place;                /* keys and values (not indices) in place */
    int keys_out_null;           /* argsort only */
    tc_pattern_t pattern;
} sort_case_t;

/* Runs one segmented sort/argsort case over layout L and checks every output
 * element: inside segments against the reference, outside unchanged. */
static void run_segmented_sort(const tc_layout_t *L, sort_case_t c) {
    const uint64_t n = L->n;
    const size_t ks = tc_size(c.kd);
    const unsigned end_bit = c.end_bit ? c.end_bit : tc_bits(c.kd);
    gpuprim_buffer_t offsets, kin, kout = NULL, vin = NULL, vout = NULL;
    gpuprim_segments_t seg = tc_make_segments(ctx, L, &offsets);
    gpuprim_sort_options_t options;
    void *keys = tc_xmalloc(n * ks), *values = NULL, *want_keys, *want_values = NULL, *got;
    uint64_t *perm = (uint64_t *)tc_xmalloc((n ? n : 1) * sizeof *perm), s, k;
    gpuprim_status_t status;

    tc_where("segmented %s %s keys %s values %s, %s, bits [%u, %u), %s, %s, %s, offsets %s, n %llu",
             c.mode == MODE_ARGSORT ? "argsort" : "sort", tc_dtype_name(c.kd),
             c.mode == MODE_KEYS ? "-" : tc_dtype_name(c.vd), c.keys_out_null ? "keys_out NULL" : "",
             c.descending ? "descending" : "ascending", c.begin_bit, end_bit, c.in_place ? "in place" : "apart",
             tc_pattern_names[c.pattern], L->name, L->uniform ? "-" : tc_dtype_name(L->od), (unsigned long long)n);
    tc_fill(c.kd, keys, n, c.pattern);
    kin = tc_buffer_from(ctx, c.kd, keys, n);
    if (!c.keys_out_null) {
        kout = c.in_place ? kin : tc_buffer(ctx, c.kd, n);
        if (!c.in_place) tc_poison(ctx, kout, c.kd, n);
    }
    if (c.mode != MODE_KEYS) {
        values = tc_xmalloc(n * tc_size(c.vd));
        if (c.mode == MODE_PAIRS) {
            for (k = 0; k < n; ++k) tc_set(c.vd, values, k, tc_is_float(c.vd) ? tc_rand() : k);
            vin = tc_buffer_from(ctx, c.vd, values, n);
        }
        vout = c.mode == MODE_PAIRS && c.in_place ? vin : tc_buffer(ctx, c.vd, n);
        if (vout != vin) tc_poison(ctx, vout, c.vd, n);
    }
    gpuprim_sort_options_init(&options);
    options.order = c.descending ? GPUPRIM_ORDER_DESCENDING : GPUPRIM_ORDER_ASCENDING;
    options.begin_bit = c.begin_bit;
    options.end_bit = c.end_bit;
    if (c.mode == MODE_ARGSORT) status = gpuprim_segmented_argsort(ctx, &seg, kin, kout, vout, &options);
    else status = gpuprim_segmented_sort(ctx, &seg, kin, vin, kout, vout, &options);
    CHECK_STATUS(status, GPUPRIM_SUCCESS);

    /* The expected outputs: untouched outside the segments. */
    want_keys = tc_xmalloc(n * ks);
    if (c.in_place) memcpy(want_keys, keys, n * ks);
    else tc_poison_host(c.kd, want_keys, n);
    if (c.mode != MODE_KEYS) {
        want_values = tc_xmalloc(n * tc_size(c.vd));
        if (c.mode == MODE_PAIRS && c.in_place) memcpy(want_values, values, n * tc_size(c.vd));
        else tc_poison_host(c.vd, want_values, n);
    }
    for (s = 0; s < L->nseg; ++s) {
        const uint64_t b = L->off[s], len = L->off[s + 1] - b;
        tc_reference_sort_permutation_bits(c.kd, (const char *)keys + b * ks, len, c.descending, c.begin_bit, end_bit,
                                           perm);
        for (k = 0; k < len; ++k) {
            tc_set(c.kd, want_keys, b + k, tc_get(c.kd, keys, b + perm[k]));
            if (c.mode == MODE_PAIRS) tc_set(c.vd, want_values, b + k, tc_get(c.vd, values, b + perm[k]));
            if (c.mode == MODE_ARGSORT) tc_set(c.vd, want_values, b + k, perm[k]);
        }
    }
    if (kout) {
        got = tc_download(ctx, kout, c.kd, n);
        CHECK_ARRAY_EQ(c.kd, got, want_keys, n, "segmented sort: keys_out");
        free(got);
    }
    if (!c.in_place && c.mode != MODE_ARGSORT) {
        got = tc_download(ctx, kin, c.kd, n);
        CHECK_ARRAY_EQ(c.kd, got, keys, n, "segmented sort: keys_in unchanged");
        free(got);
    }
    if (c.mode != MODE_KEYS) {
        got = tc_download(ctx, vout, c.vd, n);
        CHECK_ARRAY_EQ(c.vd, got, want_values, n, c.mode == MODE_ARGSORT ? "segmented argsort: indices" : "segmented sort: values_out");
        free(got);
    }
    if (kout != kin) destroy(kout);
    if (vout != vin) destroy(vout);
    destroy(vin);
    destroy(kin);
    destroy(offsets);
    free(keys);
    free(values);
    free(want_keys);
    free(want_values);
    free(perm);
}

/* A bit range inside the key that still says something (a few cases per width). */
static void bit_range_for(gpuprim_dtype_t d, unsigned which, unsigned *begin_bit, unsigned *end_bit) {
    const unsigned bits = tc_bits(d);
    switch (which % 3) {
    case 0: *begin_bit = 0, *end_bit = bits / 2; break;
    case 1: *begin_bit = bits / 4, *end_bit = bits; break;
    default: *begin_bit = bits - 1, *end_bit = 0; break;
    }
}

static void test_segmented_sort_matrix(void) {
    static const tc_pattern_t patterns[] = {TC_RANDOM_BITS, TC_NAN_HEAVY, TC_SMALL_RANGE, TC_SPECIAL, TC_EQUAL,
                                            TC_TINY,        TC_ZEROS,     TC_MODERATE};
    const unsigned pattern_count = sizeof patterns / sizeof patterns[0];
    unsigned di, order, kind, mode, turn = 0;
    for (di = 0; di < TC_DTYPE_COUNT; ++di) {
        for (order = 0; order < 2; ++order) {
            for (mode = 0; mode < 3; ++mode) {
                /* uniform rows */
                {
                    tc_layout_t L = tc_layout_rows(max_count >= 640 ? 40 : 2, max_count >= 640 ? 16 : 3);
                    sort_case_t c;
                    memset(&c, 0, sizeof c);
                    c.kd = tc_all_dtypes[di];
                    c.mode = (sort_mode_t)mode;
                    c.vd = mode == MODE_ARGSORT ? index_dtypes[turn % 4] : tc_all_dtypes[(di + turn) % TC_DTYPE_COUNT];
                    c.descending = (int)order;
                    c.in_place = (int)(turn & 1);
                    c.keys_out_null = mode == MODE_ARGSORT && (turn % 3) == 2;
                    c.pattern = patterns[turn % pattern_count];
                    run_segmented_sort(&L, c);
                    tc_layout_free(&L);
                    ++turn;
                }
                for (kind = 0; kind < LAYOUT_KINDS; ++kind) {
                    tc_layout_t L = layout_of_kind((int)kind, index_dtypes[(turn + kind) % 4],
                                                /* the long lengths once per dtype and mode */ order == 0 && kind <= 3);
                    sort_case_t c;
                    memset(&c, 0, sizeof c);
                    c.kd = tc_all_dtypes[di];
                    c.mode = (sort_mode_t)mode;
                    c.vd = mode == MODE_ARGSORT ? index_dtypes[turn % 4] : tc_all_dtypes[(di + turn) % TC_DTYPE_COUNT];
                    c.descending = (int)order;
                    c.in_place = (int)(turn & 1);
                    c.keys_out_null = mode == MODE_ARGSORT && (turn % 3) == 2;
                    c.pattern = patterns[turn % pattern_count];
                    if (turn % 5 == 4) bit_range_for(c.kd, turn / 5, &c.begin_bit, &c.end_bit);
                    run_segmented_sort(&L, c);
                    tc_layout_free(&L);
                    ++turn;
                }
            }
        }
    }
}

/* Every value width with every key width, and the bit ranges, on one layout. */
static void test_segmented_sort_widths(void) {
    static const gpuprim_dtype_t key_dtypes[] = {GPUPRIM_DTYPE_U8, GPUPRIM_DTYPE_F16, GPUPRIM_DTYPE_F32,
                                                 GPUPRIM_DTYPE_I64};
    static const gpuprim_dtype_t value_dtypes[] = {GPUPRIM_DTYPE_I8, GPUPRIM_DTYPE_BF16, GPUPRIM_DTYPE_U32,
                                                   GPUPRIM_DTYPE_F64};
    unsigned k, v, r;
    for (k = 0; k < 4; ++k) {
        for (v = 0; v < 4; ++v) {
            tc_layout_t L = layout_of_kind(4, GPUPRIM_DTYPE_U32, 0);
            sort_case_t c;
            memset(&c, 0, sizeof c);
            c.kd = key_dtypes[k];
            c.mode = MODE_PAIRS;
            c.vd = value_dtypes[v];
            c.descending = (int)(v & 1);
            c.in_place = (int)(k & 1);
            c.pattern = TC_RANDOM_BITS;
            run_segmented_sort(&L, c);
            bit_range_for(c.kd, v, &c.begin_bit, &c.end_bit);
            c.in_place = !c.in_place;
            run_segmented_sort(&L, c);
            tc_layout_free(&L);
        }
        for (r = 0; r < 3; ++r) { /* keys only and argsort with bit ranges, in place */
            tc_layout_t L = layout_of_kind(3, GPUPRIM_DTYPE_I64, 0);
            sort_case_t c;
            memset(&c, 0, sizeof c);
            c.kd = key_dtypes[k];
            c.mode = r == 0 ? MODE_KEYS : MODE_ARGSORT;
            c.vd = r == 1 ? GPUPRIM_DTYPE_U32 : GPUPRIM_DTYPE_I64;
            c.in_place = 1;
            c.keys_out_null = r == 2;
            c.descending = (int)(r & 1);
            c.pattern = TC_SMALL_RANGE;
            bit_range_for(c.kd, r, &c.begin_bit, &c.end_bit);
            run_segmented_sort(&L, c);
            tc_layout_free(&L);
        }
    }
}

/* Rows of a typical shape: many short rows, and few long ones. */
static void test_segmented_sort_shapes(void) {
    static const uint64_t shapes[][2] = {{4096, 16}, {1, 70001}, {3, 40000}, {2, 0}, {0, 0}, {70, 1}, {5, 4097}};
    unsigned i;
    for (i = 0; i < sizeof shapes / sizeof shapes[0]; ++i) {
        tc_layout_t L;
        sort_case_t c;
        if (shapes[i][0] * shapes[i][1] > max_count) continue;
        L = tc_layout_rows(shapes[i][0], shapes[i][1]);
        memset(&c, 0, sizeof c);
        c.kd = GPUPRIM_DTYPE_F32;
        c.pattern = TC_NAN_SPARSE;
        c.mode = MODE_KEYS;
        run_segmented_sort(&L, c);
        c.mode = MODE_ARGSORT;
        c.vd = GPUPRIM_DTYPE_I32;
        c.descending = 1;
        run_segmented_sort(&L, c);
        c.mode = MODE_PAIRS;
        c.vd = GPUPRIM_DTYPE_U64;
        c.in_place = 1;
        run_segmented_sort(&L, c);
        tc_layout_free(&L);
    }
}

/* Flat argsort: indices against the reference, explicitly stable, and
 * keys_out equal to gpuprim_sort_with_options's keys. */
static void run_argsort(gpuprim_dtype_t kd, gpuprim_dtype_t id, uint64_t n, int descending, unsigned begin_bit,
                        unsigned end_bit_option, int keys_out_mode, tc_pattern_t pattern) {
    const unsigned end_bit = end_bit_option ? end_bit_option : tc_bits(kd);
    void *keys = tc_xmalloc(n * tc_size(kd)), *got_idx, *got_keys = NULL, *sorted;
    uint64_t *perm = (uint64_t *)tc_xmalloc((n ? n : 1) * sizeof *perm), i, bad = 0;
    gpuprim_buffer_t kin, kout, idx, ref_out;
    gpuprim_sort_options_t options;
    tc_where("argsort %s -> %s, n %llu, %s, bits [%u, %u), keys_out %s, %s", tc_dtype_name(kd), tc_dtype_name(id),
             (unsigned long long)n, descending ? "descending" : "ascending", begin_bit, end_bit,
             keys_out_mode == 0 ? "NULL" : keys_out_mode == 1 ? "apart" : "in place", tc_pattern_names[pattern]);
    tc_fill(kd, keys, n, pattern);
    kin = tc_buffer_from(ctx, kd, keys, n);
    gpuprim_sort_options_init(&options);
    options.order = descending ? GPUPRIM_ORDER_DESCENDING : GPUPRIM_ORDER_ASCENDING;
    options.begin_bit = begin_bit;
    options.end_bit = end_bit_option;
    idx = tc_run_argsort(ctx, kin, kd, id, n, &options, keys_out_mode, &kout);
    got_idx = tc_download(ctx, idx, id, n);
    tc_reference_sort_permutation_bits(kd, keys, n, descending, begin_bit, end_bit, perm);
    for (i = 0; i < n; ++i)
        if (tc_get(id, got_idx, i) != perm[i]) ++bad;
    CHECKF(bad == 0, "argsort: %llu of %llu indices differ from the reference", (unsigned long long)bad,
           (unsigned long long)n);
    /* Independently: a permutation, ordered by the sort bits, equal bits by increasing index. */
    {
        uint64_t broken = tc_argsort_breaks(kd, keys, id, got_idx, n, descending, begin_bit, end_bit);
        CHECKF(broken == 0, "argsort: %llu positions not a stable sorted permutation", (unsigned long long)broken);
    }
    /* keys_out: what the sort gives */
    ref_out = tc_buffer(ctx, kd, n);
    {
        gpuprim_buffer_t ref_in = tc_buffer_from(ctx, kd, keys, n);
        CHECK_OK(gpuprim_sort_with_options(ctx, ref_in, NULL, ref_out, NULL, &options));
        destroy(ref_in);
    }
    sorted = tc_download(ctx, ref_out, kd, n);
    if (kout) {
        got_keys = tc_download(ctx, kout, kd, n);
        CHECK_ARRAY_EQ(kd, got_keys, sorted, n, "argsort keys_out vs gpuprim_sort_with_options");
    } else {
        void *after = tc_download(ctx, kin, kd, n);
        CHECK_ARRAY_EQ(kd, after, keys, n, "argsort with keys_out NULL: keys_in unchanged");
        free(after);
    }
    free(sorted);
    free(got_keys);
    free(got_idx);
    destroy(ref_out);
    destroy(idx);
    if (kout && kout != kin) destroy(kout);
    destroy(kin);
    free(keys);
    free(perm);
}

static void test_argsort(void) {
    static const uint64_t sizes[] = {0, 1, 2, 33, 4097, 70001};
    static const tc_pattern_t patterns[] = {TC_RANDOM_BITS, TC_SMALL_RANGE, TC_NAN_HEAVY, TC_EQUAL, TC_SPECIAL};
    unsigned di, order, ii, km, turn = 0;
    for (di = 0; di < TC_DTYPE_COUNT; ++di)
        for (order = 0; order < 2; ++order)
            for (ii = 0; ii < 4; ++ii)
                for (km = 0; km < 3; ++km) {
                    uint64_t n = sizes[turn % (sizeof sizes / sizeof sizes[0])];
                    unsigned b = 0, e = 0;
                    if (n > max_count) n = max_count;
                    if (turn % 4 == 3) bit_range_for(tc_all_dtypes[di], turn, &b, &e);
                    run_argsort(tc_all_dtypes[di], index_dtypes[ii], n, (int)order, b, e, (int)km,
                                patterns[turn % (sizeof patterns / sizeof patterns[0])]);
                    ++turn;
                }
    /* a bigger one: the CPU's parallel merge, the CUDA multi-tile paths */
    if (max_count >= 300000) {
        run_argsort(GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_I32, 300000, 0, 0, 0, 1, TC_SMALL_RANGE);
        run_argsort(GPUPRIM_DTYPE_F64, GPUPRIM_DTYPE_U64, 300000, 1, 0, 0, 0, TC_NAN_HEAVY);
        run_argsort(GPUPRIM_DTYPE_I16, GPUPRIM_DTYPE_U32, 300000, 0, 4, 12, 2, TC_RANDOM_BITS);
    }
}

/* ------------------------------------------------------------------------ */
/* Reduce and scan                                                          */
/* ------------------------------------------------------------------------ */

static int float_sum_ok(gpuprim_dtype_t d, uint64_t got, const void *x, uint64_t n) {
    long double sum = 0, sumabs = 0;
    uint64_t i;
    if (n == 0) return got == 0;
    for (i = 0; i < n; ++i) {
        long double v = tc_value(d, tc_get(d, x, i));
        sum += v;
        sumabs += fabsl(v);
    }
    return tc_float_sum_ok(d, got, sum, sumabs, n);
}

static void run_segmented_reduce(const tc_layout_t *L, gpuprim_dtype_t d, gpuprim_op_t op, tc_pattern_t pattern) {
    const uint64_t n = L->n;
    const size_t size = tc_size(d);
    void *x = tc_xmalloc(n * size), *got;
    gpuprim_buffer_t offsets, in, out;
    gpuprim_segments_t seg = tc_make_segments(ctx, L, &offsets);
    uint64_t s, i, bad = 0, first = 0;
    tc_where("segmented reduce %s %s, %s, %s (%llu segments, n %llu)", tc_op_name(op), tc_dtype_name(d),
             tc_pattern_names[pattern], L->name, (unsigned long long)L->nseg, (unsigned long long)n);
    tc_fill(d, x, n, pattern);
    in = tc_buffer_from(ctx, d, x, n);
    out = tc_buffer(ctx, d, L->nseg);
    tc_poison(ctx, out, d, L->nseg);
    CHECK_OK(gpuprim_segmented_reduce(ctx, op, &seg, in, out));
    got = tc_download(ctx, out, d, L->nseg);
    for (s = 0; s < L->nseg; ++s) {
        const uint64_t b = L->off[s], len = L->off[s + 1] - b;
        const uint64_t g = tc_get(d, got, s);
        int ok;
        if (tc_is_float(d) && op == GPUPRIM_OP_SUM) {
            ok = float_sum_ok(d, g, (const char *)x + b * size, len);
        } else {
            uint64_t acc = tc_identity(op, d);
            for (i = 0; i < len; ++i) acc = tc_apply(op, d, acc, tc_get(d, x, b + i));
            ok = g == acc;
        }
        if (!ok && bad++ == 0) first = s;
    }
    if (bad) {
        char g[96];
        CHECKF(0, "segmented reduce: %llu of %llu segments wrong; first %llu (length %llu): got %s",
               (unsigned long long)bad, (unsigned long long)L->nseg, (unsigned long long)first,
               (unsigned long long)(L->off[first + 1] - L->off[first]), tc_format(d, tc_get(d, got, first), g, sizeof g));
    } else {
        CHECK(1);
    }
    /* Deterministic: a second run gives the same bits. */
    if (L->nseg) {
        tc_poison(ctx, out, d, L->nseg);
        CHECK_OK(gpuprim_segmented_reduce(ctx, op, &seg, in, out));
        CHECK_BUFFER_EQ(ctx, out, d, got, L->nseg, "segmented reduce: second run");
    }
    free(got);
    destroy(out);
    destroy(in);
    destroy(offsets);
    free(x);
}

/* Checks got[0, n) as the scan of x[0, n) (a segment). Returns the number of bad outputs. */
static uint64_t check_scan_segment(gpuprim_op_t op, gpuprim_scan_kind_t kind, gpuprim_dtype_t d, const void *x,
                                   const void *got, uint64_t n, uint64_t *first) {
    const int float_sum = tc_is_float(d) && op == GPUPRIM_OP_SUM;
    uint64_t acc = tc_identity(op, d), i, bad = 0;
    long double sum = 0, sumabs = 0;
    for (i = 0; i < n; ++i) {
        const uint64_t v = tc_get(d, x, i), g = tc_get(d, got, i);
        int ok;
        if (kind == GPUPRIM_SCAN_INCLUSIVE) {
            sum += tc_value(d, v);
            sumabs += fabsl(tc_value(d, v));
            acc = float_sum ? acc : tc_apply(op, d, acc, v);
        }
        if (float_sum) {
            const uint64_t terms = kind == GPUPRIM_SCAN_INCLUSIVE ? i + 1 : i;
            ok = terms == 0 ? g == 0 : tc_float_sum_ok(d, g, sum, sumabs, terms);
        } else {
            ok = g == acc;
        }
        if (!ok && bad++ == 0) *first = i;
        if (kind == GPUPRIM_SCAN_EXCLUSIVE) {
            sum += tc_value(d, v);
            sumabs += fabsl(tc_value(d, v));
            acc = float_sum ? acc : tc_apply(op, d, acc, v);
        }
    }
    return bad;
}

static void run_segmented_scan(const tc_layout_t *L, gpuprim_dtype_t d, gpuprim_op_t op, gpuprim_scan_kind_t kind,
                               tc_pattern_t pattern, int in_place) {
    const uint64_t n = L->n;
    const size_t size = tc_size(d);
    void *x = tc_xmalloc(n * size), *got, *want_outside;
    gpuprim_buffer_t offsets, in, out;
    gpuprim_segments_t seg = tc_make_segments(ctx, L, &offsets);
    uint64_t s, bad = 0, first_seg = 0, first = 0;
    tc_where("segmented %s scan %s %s, %s, %s, %s (%llu segments, n %llu)",
             kind == GPUPRIM_SCAN_INCLUSIVE ? "inclusive" : "exclusive", tc_op_name(op), tc_dtype_name(d),
             tc_pattern_names[pattern], in_place ? "in place" : "apart", L->name, (unsigned long long)L->nseg,
             (unsigned long long)n);
    tc_fill(d, x, n, pattern);
    in = tc_buffer_from(ctx, d, x, n);
    out = in_place ? in : tc_buffer(ctx, d, n);
    want_outside = tc_xmalloc(n * size);
    if (in_place) {
        memcpy(want_outside, x, n * size);
    } else {
        tc_poison(ctx, out, d, n);
        tc_poison_host(d, want_outside, n);
    }
    CHECK_OK(gpuprim_segmented_scan(ctx, op, kind, &seg, in, out));
    got = tc_download(ctx, out, d, n);
    for (s = 0; s < L->nseg; ++s) {
        const uint64_t b = L->off[s], len = L->off[s + 1] - b;
        uint64_t at = 0, wrong = check_scan_segment(op, kind, d, (const char *)x + b * size, (const char *)got + b * size,
                                                    len, &at);
        if (wrong && bad == 0) first_seg = s, first = b + at;
        bad += wrong;
        /* inside the segments the expected "outside" copy takes the output */
        memcpy((char *)want_outside + b * size, (const char *)got + b * size, len * size);
    }
    if (bad) {
        char g[96];
        CHECKF(0, "segmented scan: %llu outputs wrong; first at [%llu] (segment %llu from %llu): got %s",
               (unsigned long long)bad, (unsigned long long)first, (unsigned long long)first_seg,
               (unsigned long long)L->off[first_seg], tc_format(d, tc_get(d, got, first), g, sizeof g));
    } else {
        CHECK(1);
    }
    CHECK_ARRAY_EQ(d, got, want_outside, n, "segmented scan: elements outside every segment unchanged");
    if (!in_place) {
        void *after = tc_download(ctx, in, d, n);
        CHECK_ARRAY_EQ(d, after, x, n, "segmented scan: input unchanged");
        free(after);
    }
    free(got);
    free(want_outside);
    if (out != in) destroy(out);
    destroy(in);
    destroy(offsets);
    free(x);
}

static tc_pattern_t reduce_pattern(gpuprim_dtype_t d, gpuprim_op_t op, unsigned turn) {
    static const tc_pattern_t any[] = {TC_RANDOM_BITS, TC_NAN_HEAVY, TC_SPECIAL, TC_TINY, TC_SMALL_RANGE, TC_ZEROS};
    static const tc_pattern_t sums[] = {TC_MODERATE, TC_NAN_SPARSE, TC_INF_SPARSE, TC_TINY, TC_SMALL_RANGE, TC_ZEROS};
    return tc_is_float(d) && op == GPUPRIM_OP_SUM ? sums[turn % 6] : any[turn % 6];
}

static void test_segmented_reduce_scan(void) {
    unsigned di, oi, kind, turn = 0;
    for (di = 0; di < TC_DTYPE_COUNT; ++di) {
        const gpuprim_dtype_t d = tc_all_dtypes[di];
        for (oi = 0; oi < 3; ++oi) {
            tc_layout_t R = tc_layout_rows(max_count >= 3000 ? 100 : 3, max_count >= 3000 ? 30 : 2);
            run_segmented_reduce(&R, d, ops[oi], reduce_pattern(d, ops[oi], turn++));
            run_segmented_scan(&R, d, ops[oi], GPUPRIM_SCAN_INCLUSIVE, reduce_pattern(d, ops[oi], turn++), 0);
            run_segmented_scan(&R, d, ops[oi], GPUPRIM_SCAN_EXCLUSIVE, reduce_pattern(d, ops[oi], turn++), 1);
            tc_layout_free(&R);
            for (kind = 0; kind < LAYOUT_KINDS; ++kind) {
                tc_layout_t L = layout_of_kind((int)kind, index_dtypes[(turn + kind) % 4], oi == 0 && kind <= 2);
                run_segmented_reduce(&L, d, ops[oi], reduce_pattern(d, ops[oi], turn++));
                run_segmented_scan(&L, d, ops[oi], (turn & 1) ? GPUPRIM_SCAN_EXCLUSIVE : GPUPRIM_SCAN_INCLUSIVE,
                                   reduce_pattern(d, ops[oi], turn), (int)((turn >> 1) & 1));
                ++turn;
                tc_layout_free(&L);
            }
        }
    }
    /* Empty rows: every output the identity; rows of one element. */
    {
        tc_layout_t L = tc_layout_rows(5, 0);
        run_segmented_reduce(&L, GPUPRIM_DTYPE_F32, GPUPRIM_OP_MIN, TC_MODERATE);
        run_segmented_reduce(&L, GPUPRIM_DTYPE_I8, GPUPRIM_OP_MAX, TC_MODERATE);
        run_segmented_reduce(&L, GPUPRIM_DTYPE_F16, GPUPRIM_OP_SUM, TC_MODERATE);
        run_segmented_scan(&L, GPUPRIM_DTYPE_F64, GPUPRIM_OP_SUM, GPUPRIM_SCAN_EXCLUSIVE, TC_MODERATE, 0);
        tc_layout_free(&L);
        L = tc_layout_rows(max_count >= 1000 ? 1000 : 1, 1);
        run_segmented_reduce(&L, GPUPRIM_DTYPE_BF16, GPUPRIM_OP_SUM, TC_TINY);
        run_segmented_scan(&L, GPUPRIM_DTYPE_U16, GPUPRIM_OP_SUM, GPUPRIM_SCAN_EXCLUSIVE, TC_RANDOM_BITS, 1);
        tc_layout_free(&L);
    }
    /* Rows around the CUDA reduce's paths: a group of lanes a row (255
     * elements; 513 rows), a block a row for up to 512 rows of 256 to 4095
     * elements (partial chunks), one chunk a row at 4096. */
    {
        static const uint64_t shapes[][2] = {{1, 1024}, {3, 4095}, {512, 257}, {7, 256}, {2, 255}, {513, 300},
                                             {1, 4096}};
        size_t s;
        for (s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
            for (di = 0; di < TC_DTYPE_COUNT; di += 1 + (unsigned)(s % 2)) {
                const gpuprim_dtype_t d = tc_all_dtypes[di];
                tc_layout_t L;
                if (shapes[s][0] * shapes[s][1] > max_count) continue;
                L = tc_layout_rows(shapes[s][0], shapes[s][1]);
                oi = (unsigned)((s + di) % 3);
                run_segmented_reduce(&L, d, ops[oi], reduce_pattern(d, ops[oi], turn++));
                tc_layout_free(&L);
            }
    }
    /* Long segments (the parallel paths of each segment) */
    if (max_count >= 200000) {
        tc_layout_t L = tc_layout_rows(2, 100000);
        run_segmented_reduce(&L, GPUPRIM_DTYPE_F32, GPUPRIM_OP_SUM, TC_MODERATE);
        run_segmented_reduce(&L, GPUPRIM_DTYPE_U64, GPUPRIM_OP_MAX, TC_RANDOM_BITS);
        run_segmented_scan(&L, GPUPRIM_DTYPE_F64, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, TC_MODERATE, 1);
        run_segmented_scan(&L, GPUPRIM_DTYPE_I32, GPUPRIM_OP_MIN, GPUPRIM_SCAN_EXCLUSIVE, TC_RANDOM_BITS, 0);
        tc_layout_free(&L);
    }
}

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */
/* ------------------------------------------------------------------------ */

/* Every segmented call with segments seg over 8-element data: each must fail
 * with `status` (message containing `needle` when given), outputs unchanged. */
static void expect_all_fail(const gpuprim_segments_t *seg, uint64_t nseg_out, gpuprim_status_t status,
                            const char *needle) {
    tc_known_t keys = tc_known(ctx, GPUPRIM_DTYPE_F32, 8), kout = tc_known(ctx, GPUPRIM_DTYPE_F32, 8);
    tc_known_t vals = tc_known(ctx, GPUPRIM_DTYPE_U16, 8), vout = tc_known(ctx, GPUPRIM_DTYPE_U16, 8);
    tc_known_t idx = tc_known(ctx, GPUPRIM_DTYPE_I32, 8),
               red = tc_known(ctx, GPUPRIM_DTYPE_F32, nseg_out ? nseg_out : 1);
    CHECK_STATUS(gpuprim_segmented_sort(ctx, seg, keys.b, vals.b, kout.b, vout.b, NULL), status);
    if (needle) CHECK_MESSAGE(ctx, needle);
    CHECK_STATUS(gpuprim_segmented_sort(ctx, seg, keys.b, NULL, keys.b, NULL, NULL), status);
    if (needle) CHECK_MESSAGE(ctx, needle);
    CHECK_STATUS(gpuprim_segmented_argsort(ctx, seg, keys.b, kout.b, idx.b, NULL), status);
    if (needle) CHECK_MESSAGE(ctx, needle);
    CHECK_STATUS(gpuprim_segmented_argsort(ctx, seg, keys.b, NULL, idx.b, NULL), status);
    if (needle) CHECK_MESSAGE(ctx, needle);
    CHECK_STATUS(gpuprim_segmented_reduce(ctx, GPUPRIM_OP_SUM, seg, keys.b, red.b), status);
    if (needle) CHECK_MESSAGE(ctx, needle);
    CHECK_STATUS(gpuprim_segmented_scan(ctx, GPUPRIM_OP_MAX, GPUPRIM_SCAN_INCLUSIVE, seg, keys.b, kout.b), status);
    if (needle) CHECK_MESSAGE(ctx, needle);
    CHECK_STATUS(gpuprim_segmented_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_EXCLUSIVE, seg, keys.b, keys.b), status);
    if (needle) CHECK_MESSAGE(ctx, needle);
    TC_CHECK_UNCHANGED(ctx, keys);
    TC_CHECK_UNCHANGED(ctx, kout);
    TC_CHECK_UNCHANGED(ctx, vals);
    TC_CHECK_UNCHANGED(ctx, vout);
    TC_CHECK_UNCHANGED(ctx, idx);
    TC_CHECK_UNCHANGED(ctx, red);
    tc_free_known(ctx, keys);
    tc_free_known(ctx, kout);
    tc_free_known(ctx, vals);
    tc_free_known(ctx, vout);
    tc_free_known(ctx, idx);
    tc_free_known(ctx, red);
}

/* CSR offsets (as signed values, stored in od) that must be rejected naming
 * offsets[bad] and, when given, saying `why` (values in od's own type). */
static void expect_bad_offsets(gpuprim_dtype_t od, const int64_t *values, uint64_t count, uint64_t bad,
                               const char *why) {
    gpuprim_segments_t seg;
    gpuprim_buffer_t offsets;
    char needle[160];
    uint64_t host[16], i; /* count <= 16 elements of at most 8 bytes */
    for (i = 0; i < count && i < 16; ++i) tc_set(od, host, i, (uint64_t)values[i]);
    offsets = tc_buffer_from(ctx, od, host, count);
    gpuprim_segments_init_offsets(&seg, offsets);
    if (why) snprintf(needle, sizeof needle, "offsets[%llu] = %s", (unsigned long long)bad, why);
    else snprintf(needle, sizeof needle, "offsets[%llu]", (unsigned long long)bad);
    tc_where("bad offsets (%s), first bad index %llu", tc_dtype_name(od), (unsigned long long)bad);
    expect_all_fail(&seg, count - 1, GPUPRIM_ERROR_INVALID_ARGUMENT, needle);
    destroy(offsets);
}

static void test_errors(void) {
    gpuprim_segments_t seg, rows;
    tc_known_t keys = tc_known(ctx, GPUPRIM_DTYPE_F32, 8), kout = tc_known(ctx, GPUPRIM_DTYPE_F32, 8),
               idx = tc_known(ctx, GPUPRIM_DTYPE_U32, 8);
    tc_known_t red = tc_known(ctx, GPUPRIM_DTYPE_F32, 2), f64 = tc_known(ctx, GPUPRIM_DTYPE_F64, 8);
    gpuprim_sort_options_t options;
    unsigned oi;
    tc_where("segmented errors");
    gpuprim_segments_init_rows(&rows, 2, 4);

    /* NULL pointers */
    CHECK_STATUS(gpuprim_argsort(NULL, keys.b, NULL, idx.b, NULL), GPUPRIM_ERROR_NULL_POINTER);
    CHECK_STATUS(gpuprim_argsort(ctx, NULL, NULL, idx.b, NULL), GPUPRIM_ERROR_NULL_POINTER);
    CHECK_STATUS(gpuprim_argsort(ctx, keys.b, NULL, NULL, NULL), GPUPRIM_ERROR_NULL_POINTER);
    CHECK_STATUS(gpuprim_segmented_sort(NULL, &rows, keys.b, NULL, kout.b, NULL, NULL), GPUPRIM_ERROR_NULL_POINTER);
    CHECK_STATUS(gpuprim_segmented_sort(ctx, NULL, keys.b, NULL, kout.b, NULL, NULL), GPUPRIM_ERROR_NULL_POINTER);
    CHECK_MESSAGE(ctx, "segments");
    CHECK_STATUS(gpuprim_segmented_sort(ctx, &rows, NULL, NULL, kout.b, NULL, NULL), GPUPRIM_ERROR_NULL_POINTER);
    CHECK_STATUS(gpuprim_segmented_sort(ctx, &rows, keys.b, NULL, NULL, NULL, NULL), GPUPRIM_ERROR_NULL_POINTER);
    CHECK_STATUS(gpuprim_segmented_sort(ctx, &rows, keys.b, idx.b, kout.b, NULL, NULL), GPUPRIM_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(gpuprim_segmented_argsort(NULL, &rows, keys.b, NULL, idx.b, NULL), GPUPRIM_ERROR_NULL_POINTER);
    CHECK_STATUS(gpuprim_segmented_argsort(ctx, NULL, keys.b, NULL, idx.b, NULL), GPUPRIM_ERROR_NULL_POINTER);
    CHECK_STATUS(gpuprim_segmented_argsort(ctx, &rows, NULL, NULL, idx.b, NULL), GPUPRIM_ERROR_NULL_POINTER);
    CHECK_STATUS(gpuprim_segmented_argsort(ctx, &rows, keys.b, NULL, NULL, NULL), GPUPRIM_ERROR_NULL_POINTER);
    CHECK_STATUS(gpuprim_segmented_reduce(NULL, GPUPRIM_OP_SUM, &rows, keys.b, red.b), GPUPRIM_ERROR_NULL_POINTER);
    CHECK_STATUS(gpuprim_segmented_reduce(ctx, GPUPRIM_OP_SUM, NULL, keys.b, red.b), GPUPRIM_ERROR_NULL_POINTER);
    CHECK_STATUS(gpuprim_segmented_reduce(ctx, GPUPRIM_OP_SUM, &rows, NULL, red.b), GPUPRIM_ERROR_NULL_POINTER);
    CHECK_STATUS(gpuprim_segmented_reduce(ctx, GPUPRIM_OP_SUM, &rows, keys.b, NULL), GPUPRIM_ERROR_NULL_POINTER);
    CHECK_STATUS(gpuprim_segmented_scan(NULL, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, &rows, keys.b, kout.b),
                 GPUPRIM_ERROR_NULL_POINTER);
    CHECK_STATUS(gpuprim_segmented_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, NULL, keys.b, kout.b),
                 GPUPRIM_ERROR_NULL_POINTER);
    CHECK_STATUS(gpuprim_segmented_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, &rows, NULL, kout.b),
                 GPUPRIM_ERROR_NULL_POINTER);
    CHECK_STATUS(gpuprim_segmented_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, &rows, keys.b, NULL),
                 GPUPRIM_ERROR_NULL_POINTER);
    gpuprim_segments_init_rows(NULL, 1, 1);   /* does nothing */
    gpuprim_segments_init_offsets(NULL, NULL); /* does nothing */
    /* NULL offsets are named, not read as "0 rows of 0 elements". */
    gpuprim_segments_init_offsets(&seg, NULL);
    expect_all_fail(&seg, 0, GPUPRIM_ERROR_NULL_POINTER, "segments->offsets is NULL");
    /* Rows of UINT64_MAX x UINT64_MAX are rows that overflow, not missing offsets. */
    gpuprim_segments_init_rows(&seg, UINT64_MAX, UINT64_MAX);
    expect_all_fail(&seg, 0, GPUPRIM_ERROR_SIZE_MISMATCH, "overflow 64 bits");
    /* A bad segments struct_size names the segments, not the sort options. */
    gpuprim_segments_init_rows(&seg, 2, 4);
    seg.struct_size = 3;
    expect_all_fail(&seg, 2, GPUPRIM_ERROR_INVALID_ARGUMENT, "segments->struct_size = 3");

    /* enums, dtypes, sizes */
    CHECK_STATUS(gpuprim_segmented_reduce(ctx, (gpuprim_op_t)7, &rows, keys.b, red.b), GPUPRIM_ERROR_INVALID_ENUM);
    CHECK_STATUS(gpuprim_segmented_scan(ctx, GPUPRIM_OP_SUM, (gpuprim_scan_kind_t)9, &rows, keys.b, kout.b),
                 GPUPRIM_ERROR_INVALID_ENUM);
    gpuprim_sort_options_init(&options);
    options.order = 5;
    CHECK_STATUS(gpuprim_segmented_sort(ctx, &rows, keys.b, NULL, kout.b, NULL, &options), GPUPRIM_ERROR_INVALID_ENUM);
    CHECK_STATUS(gpuprim_argsort(ctx, keys.b, NULL, idx.b, &options), GPUPRIM_ERROR_INVALID_ENUM);
    gpuprim_sort_options_init(&options);
    options.begin_bit = 8;
    options.end_bit = 8;
    CHECK_STATUS(gpuprim_segmented_argsort(ctx, &rows, keys.b, NULL, idx.b, &options), GPUPRIM_ERROR_INVALID_ARGUMENT);
    CHECK_MESSAGE(ctx, "begin_bit");
    CHECK_STATUS(gpuprim_argsort(ctx, keys.b, NULL, f64.b, NULL), GPUPRIM_ERROR_DTYPE_MISMATCH);
    CHECK_STATUS(gpuprim_argsort(ctx, keys.b, f64.b, idx.b, NULL), GPUPRIM_ERROR_DTYPE_MISMATCH);
    CHECK_STATUS(gpuprim_segmented_argsort(ctx, &rows, keys.b, NULL, f64.b, NULL), GPUPRIM_ERROR_DTYPE_MISMATCH);
    CHECK_STATUS(gpuprim_segmented_reduce(ctx, GPUPRIM_OP_SUM, &rows, keys.b, f64.b), GPUPRIM_ERROR_DTYPE_MISMATCH);
    CHECK_STATUS(gpuprim_segmented_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, &rows, keys.b, f64.b),
                 GPUPRIM_ERROR_DTYPE_MISMATCH);
    CHECK_STATUS(gpuprim_segmented_reduce(ctx, GPUPRIM_OP_SUM, &rows, keys.b, kout.b), GPUPRIM_ERROR_SIZE_MISMATCH);
    CHECK_STATUS(gpuprim_argsort(ctx, keys.b, NULL, red.b, NULL), GPUPRIM_ERROR_DTYPE_MISMATCH);
    /* overlaps */
    {
        gpuprim_buffer_t view = tc_view(ctx, keys.b, GPUPRIM_DTYPE_F32, 3, 2);
        CHECK_STATUS(gpuprim_segmented_reduce(ctx, GPUPRIM_OP_SUM, &rows, keys.b, view), GPUPRIM_ERROR_INVALID_ARGUMENT);
        CHECK_STATUS(gpuprim_argsort(ctx, keys.b, NULL, kout.b, NULL), GPUPRIM_ERROR_DTYPE_MISMATCH);
        destroy(view);
    }
    TC_CHECK_UNCHANGED(ctx, keys);
    TC_CHECK_UNCHANGED(ctx, kout);
    TC_CHECK_UNCHANGED(ctx, idx);
    TC_CHECK_UNCHANGED(ctx, red);

    /* struct_size */
    seg = rows;
    seg.struct_size = 0;
    expect_all_fail(&seg, 2, GPUPRIM_ERROR_INVALID_ARGUMENT, "struct_size");
    seg.struct_size = 8;
    expect_all_fail(&seg, 2, GPUPRIM_ERROR_INVALID_ARGUMENT, "struct_size");
    seg.struct_size = 1u << 20;
    expect_all_fail(&seg, 2, GPUPRIM_ERROR_INVALID_ARGUMENT, "struct_size");

    /* rows that do not cover the data */
    gpuprim_segments_init_rows(&seg, 3, 4);
    expect_all_fail(&seg, 3, GPUPRIM_ERROR_SIZE_MISMATCH, "rows");
    gpuprim_segments_init_rows(&seg, 1, 7);
    expect_all_fail(&seg, 1, GPUPRIM_ERROR_SIZE_MISMATCH, "rows");
    gpuprim_segments_init_rows(&seg, 0, 8);
    expect_all_fail(&seg, 0, GPUPRIM_ERROR_SIZE_MISMATCH, "rows");

    /* offsets of a non-index dtype; of no elements */
    gpuprim_segments_init_offsets(&seg, f64.b);
    expect_all_fail(&seg, 7, GPUPRIM_ERROR_DTYPE_MISMATCH, "offsets");
    {
        gpuprim_buffer_t empty = tc_buffer(ctx, GPUPRIM_DTYPE_I64, 0);
        gpuprim_segments_init_offsets(&seg, empty);
        expect_all_fail(&seg, 0, GPUPRIM_ERROR_SIZE_MISMATCH, "offsets");
        destroy(empty);
    }

    /* bad offsets: decreasing, negative, past the end; the first bad index named */
    for (oi = 0; oi < 4; ++oi) {
        const gpuprim_dtype_t od = index_dtypes[oi];
        const int is_signed = od == GPUPRIM_DTYPE_I32 || od == GPUPRIM_DTYPE_I64;
        const int64_t decreasing[] = {0, 2, 5, 4, 8};
        const int64_t past_end[] = {0, 2, 9, 9};
        const int64_t first_past[] = {9, 9};
        const int64_t late_bad[] = {1, 1, 1, 2, 3, 3, 8, 7};
        expect_bad_offsets(od, decreasing, 5, 3, "4 is less than offsets[2] = 5");
        expect_bad_offsets(od, past_end, 4, 2, "9 is past the end");
        expect_bad_offsets(od, first_past, 2, 0, "9 is past the end");
        expect_bad_offsets(od, late_bad, 8, 7, "7 is less than offsets[6] = 8");
        if (is_signed) {
            const int64_t negative[] = {0, 3, -1, 8};
            const int64_t negative_first[] = {-5, 3};
            expect_bad_offsets(od, negative, 4, 2, "-1 is negative");
            expect_bad_offsets(od, negative_first, 2, 0, "-5 is negative");
        } else if (od == GPUPRIM_DTYPE_U64) {
            /* 2^63 and up: past the end, in the offsets' own (unsigned) type. */
            const int64_t huge[] = {0, 4, (int64_t)0x8000000000000004ll};
            const int64_t all_ones[] = {0, (int64_t)-1};
            expect_bad_offsets(od, huge, 3, 2, "9223372036854775812 is past the end");
            expect_bad_offsets(od, all_ones, 2, 1, "18446744073709551615 is past the end");
        } else {
            const int64_t big[] = {0, 4, (int64_t)0xFFFFFFFFll};
            expect_bad_offsets(od, big, 3, 2, "4294967295 is past the end");
        }
    }

    /* Offsets may not be an output; indices may not overlap keys. */
    {
        gpuprim_buffer_t offsets = tc_buffer(ctx, GPUPRIM_DTYPE_U32, 3);
        uint32_t host[3] = {0, 4, 8};
        REQUIRE_OK(gpuprim_buffer_upload(ctx, offsets, 0, host, 3));
        gpuprim_segments_init_offsets(&seg, offsets);
        CHECK_STATUS(gpuprim_segmented_argsort(ctx, &seg, keys.b, NULL, offsets, NULL), GPUPRIM_ERROR_SIZE_MISMATCH);
        {
            gpuprim_buffer_t offsets8 = tc_buffer(ctx, GPUPRIM_DTYPE_U32, 8);
            uint32_t host8[8] = {0, 4, 8, 8, 8, 8, 8, 8};
            gpuprim_segments_t seg8;
            REQUIRE_OK(gpuprim_buffer_upload(ctx, offsets8, 0, host8, 8));
            gpuprim_segments_init_offsets(&seg8, offsets8);
            CHECK_STATUS(gpuprim_segmented_argsort(ctx, &seg8, keys.b, NULL, offsets8, NULL),
                         GPUPRIM_ERROR_INVALID_ARGUMENT);
            CHECK_STATUS(gpuprim_segmented_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, &seg8, idx.b, offsets8),
                         GPUPRIM_ERROR_INVALID_ARGUMENT);
            destroy(offsets8);
        }
        CHECK_STATUS(gpuprim_segmented_argsort(ctx, &seg, keys.b, keys.b, kout.b, NULL), GPUPRIM_ERROR_DTYPE_MISMATCH);
        destroy(offsets);
    }
    TC_CHECK_UNCHANGED(ctx, keys);
    TC_CHECK_UNCHANGED(ctx, kout);
    TC_CHECK_UNCHANGED(ctx, idx);
    tc_free_known(ctx, keys);
    tc_free_known(ctx, kout);
    tc_free_known(ctx, idx);
    tc_free_known(ctx, red);
    tc_free_known(ctx, f64);
}

/* Accepted edge cases: no segments at all, zero-length data. */
static void test_edges(void) {
    gpuprim_segments_t seg;
    gpuprim_buffer_t empty = tc_buffer(ctx, GPUPRIM_DTYPE_F32, 0), out0 = tc_buffer(ctx, GPUPRIM_DTYPE_F32, 0);
    gpuprim_buffer_t idx0 = tc_buffer(ctx, GPUPRIM_DTYPE_I32, 0), out3 = tc_buffer(ctx, GPUPRIM_DTYPE_F32, 3);
    float got[3];
    tc_where("segmented edge cases");
    gpuprim_segments_init_rows(&seg, 0, 0);
    CHECK_OK(gpuprim_segmented_sort(ctx, &seg, empty, NULL, empty, NULL, NULL));
    CHECK_OK(gpuprim_segmented_argsort(ctx, &seg, empty, NULL, idx0, NULL));
    CHECK_OK(gpuprim_segmented_reduce(ctx, GPUPRIM_OP_SUM, &seg, empty, out0));
    CHECK_OK(gpuprim_segmented_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, &seg, empty, out0));
    CHECK_OK(gpuprim_argsort(ctx, empty, NULL, idx0, NULL));
    /* no rows, whatever length they declare: no index to fit (the fuzzer
       found the length checked against I32 indices) */
    gpuprim_segments_init_rows(&seg, 0, (uint64_t)1 << 40);
    CHECK_OK(gpuprim_segmented_argsort(ctx, &seg, empty, NULL, idx0, NULL));
    CHECK_OK(gpuprim_segmented_topk(ctx, &seg, empty, 1, GPUPRIM_ORDER_DESCENDING, NULL, idx0));
    /* three empty rows: identities */
    gpuprim_segments_init_rows(&seg, 3, 0);
    CHECK_OK(gpuprim_segmented_reduce(ctx, GPUPRIM_OP_MIN, &seg, empty, out3));
    REQUIRE_OK(gpuprim_buffer_download(ctx, out3, 0, got, 3));
    CHECK(got[0] == INFINITY && got[1] == INFINITY && got[2] == INFINITY);
    CHECK_OK(gpuprim_segmented_sort(ctx, &seg, empty, NULL, out0, NULL, NULL));
    CHECK_OK(gpuprim_segmented_argsort(ctx, &seg, empty, out0, idx0, NULL));
    CHECK_OK(gpuprim_segmented_scan(ctx, GPUPRIM_OP_MAX, GPUPRIM_SCAN_EXCLUSIVE, &seg, empty, out0));
    /* a struct from a newer header with a zero tail is accepted */
    {
        unsigned char bigger[sizeof(gpuprim_segments_t) + 16];
        gpuprim_segments_t *s = (gpuprim_segments_t *)(void *)bigger;
        memset(bigger, 0, sizeof bigger);
        gpuprim_segments_init_rows(s, 3, 0);
        s->struct_size = sizeof bigger;
        CHECK_OK(gpuprim_segmented_reduce(ctx, GPUPRIM_OP_MAX, s, empty, out3));
        bigger[sizeof bigger - 1] = 1;
        CHECK_STATUS(gpuprim_segmented_reduce(ctx, GPUPRIM_OP_MAX, s, empty, out3), GPUPRIM_ERROR_INVALID_ARGUMENT);
    }
    destroy(empty);
    destroy(out0);
    destroy(idx0);
    destroy(out3);
}

/* Known answers spelled out: ties keep their order, indices restart. */
static void test_known_answers(void) {
    const float keys[10] = {3, 1, 2, 1, 5, 5, -0.0f, 0.0f, -0.0f, 4};
    const uint32_t offsets[4] = {1, 5, 9, 9}; /* [1,5) [5,9) [9,9); 0 and 9 outside */
    const int32_t want_idx_asc[10] = {-7, 0, 2, 1, 3, 1, 3, 2, 0, -7};
    const float want_keys_asc[10] = {99, 1, 1, 2, 5, -0.0f, -0.0f, 0.0f, 5, 99};
    gpuprim_buffer_t kin = tc_buffer_from(ctx, GPUPRIM_DTYPE_F32, keys, 10), kout = tc_buffer(ctx, GPUPRIM_DTYPE_F32, 10);
    gpuprim_buffer_t idx = tc_buffer(ctx, GPUPRIM_DTYPE_I32, 10), off = tc_buffer_from(ctx, GPUPRIM_DTYPE_U32, offsets, 4);
    gpuprim_segments_t seg;
    float fill[10], got_keys[10];
    int32_t ifill[10], got_idx[10];
    unsigned i;
    tc_where("segmented known answers");
    for (i = 0; i < 10; ++i) fill[i] = 99, ifill[i] = -7;
    REQUIRE_OK(gpuprim_buffer_upload(ctx, kout, 0, fill, 10));
    REQUIRE_OK(gpuprim_buffer_upload(ctx, idx, 0, ifill, 10));
    gpuprim_segments_init_offsets(&seg, off);
    CHECK_OK(gpuprim_segmented_argsort(ctx, &seg, kin, kout, idx, NULL));
    REQUIRE_OK(gpuprim_buffer_download(ctx, kout, 0, got_keys, 10));
    REQUIRE_OK(gpuprim_buffer_download(ctx, idx, 0, got_idx, 10));
    CHECK(memcmp(got_idx, want_idx_asc, sizeof got_idx) == 0);
    CHECK(memcmp(got_keys, want_keys_asc, sizeof got_keys) == 0);
    destroy(kin);
    destroy(kout);
    destroy(idx);
    destroy(off);
}

/* Float SUM segmented scans of -0.0 (as gpuprim_scan's), every float
 * dtype: a segment's inclusive element 0 is its input's, a run of -0.0
 * stays -0.0, an exclusive scan's first element is +0.0. Rows of 3 and rows
 * past a tile. */
static void test_negative_zero_scans(void) {
    static const uint64_t row_lengths[2] = {3, 70001};
    size_t r, t;
    for (t = 0; t < TC_FLOAT_DTYPE_COUNT; ++t)
        for (r = 0; r < 2; ++r) {
            const gpuprim_dtype_t d = tc_float_dtypes[t];
            const uint64_t rows = 4, length = row_lengths[r], n = rows * length, minus_zero = tc_sign_bit(d);
            void *x = tc_xmalloc(n * tc_size(d)), *got;
            gpuprim_segments_t seg;
            gpuprim_buffer_t in, out;
            uint64_t i, wrong, first_wrong = 0;
            int kind;
            for (i = 0; i < n; ++i) tc_set(d, x, i, minus_zero);
            in = tc_buffer_from(ctx, d, x, n);
            out = tc_buffer(ctx, d, n);
            gpuprim_segments_init_rows(&seg, rows, length);
            for (kind = 0; kind < 2; ++kind) {
                tc_where("segmented %s sum scan of -0.0, %s, rows of %llu", kind ? "exclusive" : "inclusive",
                         tc_dtype_name(d), (unsigned long long)length);
                tc_poison(ctx, out, d, n);
                CHECK_OK(gpuprim_segmented_scan(ctx, GPUPRIM_OP_SUM, (gpuprim_scan_kind_t)kind, &seg, in, out));
                got = tc_download(ctx, out, d, n);
                for (i = 0, wrong = 0; i < n; ++i) {
                    const uint64_t want = kind && i % length == 0 ? 0 : minus_zero;
                    if (tc_get(d, got, i) != want && wrong++ == 0) first_wrong = i;
                }
                CHECKF(wrong == 0, "%llu outputs wrong; first at [%llu] = 0x%llx", (unsigned long long)wrong,
                       (unsigned long long)first_wrong, (unsigned long long)tc_get(d, got, first_wrong));
                free(got);
            }
            destroy(in);
            destroy(out);
            free(x);
        }
}

int main(void) {
    double start;
    ctx = tc_init("test_segmented");
    max_count = tc_max_count();
    if (max_count > 1u << 20) max_count = 1u << 20;
    start = tc_seconds();
    test_known_answers();
    test_negative_zero_scans();
    test_edges();
    test_errors();
    test_argsort();
    printf("test_segmented: argsort done (%.1f s)\n", tc_seconds() - start);
    test_segmented_sort_matrix();
    test_segmented_sort_widths();
    test_segmented_sort_shapes();
    printf("test_segmented: segmented sort done (%.1f s)\n", tc_seconds() - start);
    test_segmented_reduce_scan();
    printf("test_segmented: segmented reduce and scan done (%.1f s)\n", tc_seconds() - start);
    return tc_finish();
}
