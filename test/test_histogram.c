/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpuprim_histogram_even, gpuprim_histogram_range and gpuprim_bincount over
 * every dtype they take and both count dtypes, against references written
 * here from the header: even bins of integers by exact 128-bit arithmetic
 * (the largest b with b * (upper - lower) <= (x - lower) * bins), of floats
 * by the header's f64 formula (and spelled-out answers where exact
 * arithmetic agrees); edges by value (long double, -0 == +0, NaN never);
 * bincount by value. Adversarial data: elements on every edge, just below
 * and above, outside the range, equal to upper, NaNs of both signs, +-0,
 * +-inf, the type's min and max; one bin, bins past the data, the CUDA
 * kernel's shared and global paths (up to 24,576 even bins in shared
 * memory on Hopper; 65,536 and 70,000 bins in global memory), counts 0, 1
 * and around the kernel's 1024-element rounds; poisoned counts; the errors,
 * each leaving the counts as they were. The _rows calls the same way, each
 * row against the reference of that row alone: one row (and the flat call
 * on it), rows of no and of one element, many rows of few elements (past
 * a CUDA launch's 65,535 rows), rows with nothing that counts, rows of one
 * value, every dtype and rule; their errors; 1, 2 and 7 CPU threads.
 */
#include "test_common.h"

/* The references are test_common.h's (tc_histogram_even_bin, tc_histogram_range_bin, tc_bincount_bin); the
 * registry's case uses them too. Small edge sets are also checked by a linear scan here. */

/* The bin of x among the edges by a linear scan by value, or -1. */
static int64_t scan_range_bin(gpuprim_dtype_t d, uint64_t x, const void *edges, uint64_t bins) {
    uint64_t b;
    if (tc_is_float(d) && tc_isnan_bits(d, x)) return -1;
    for (b = 0; b < bins; ++b) {
        const uint64_t e0 = tc_get(d, edges, b), e1 = tc_get(d, edges, b + 1);
        if (tc_is_float(d)) {
            const long double v = tc_value(d, x);
            if (v >= tc_value(d, e0) && v < tc_value(d, e1)) return (int64_t)b;
        } else if (tc_int_le(d, e0, x) && !tc_int_le(d, e1, x)) {
            return (int64_t)b;
        }
    }
    return -1;
}

/* mode 0 even, 1 edges, 2 bincount */
typedef struct hist_call {
    int mode;
    gpuprim_dtype_t d, cd;
    uint64_t lower, upper; /* even: bounds as bits */
    const void *edges;     /* edges: bins + 1 elements */
    uint64_t bins;
} hist_call_t;

static uint64_t *reference_counts(const hist_call_t *h, const void *x, uint64_t n) {
    uint64_t *counts = (uint64_t *)calloc(h->bins + 1, sizeof(uint64_t)), i;
    if (!counts) tc_abort();
    for (i = 0; i < n; ++i) {
        const uint64_t v = tc_get(h->d, x, i);
        int64_t b;
        if (h->mode == 0) {
            b = tc_histogram_even_bin(h->d, v, h->lower, h->upper, h->bins);
        } else if (h->mode == 1) {
            b = tc_histogram_range_bin(h->d, v, h->edges, h->bins);
            if (h->bins <= 64)
                CHECKF(b == scan_range_bin(h->d, v, h->edges, h->bins), "reference: edges search %lld, scan %lld",
                       (long long)b, (long long)scan_range_bin(h->d, v, h->edges, h->bins));
        } else {
            b = tc_bincount_bin(h->d, v, h->bins);
        }
        if (b >= 0) counts[b]++;
    }
    return counts;
}

/* One call on x[0..n): counts poisoned first, every count checked (U32: modulo 2^32), input unchanged. */
static void check_hist(gpuprim_context_t ctx, const hist_call_t *h, const void *x, uint64_t n) {
    gpuprim_buffer_t in = tc_buffer_from(ctx, h->d, x, n), out = tc_buffer(ctx, h->cd, h->bins), eb = NULL;
    uint64_t *want = reference_counts(h, x, n), b, total = 0;
    void *got, *after;
    long reported = 0;
    gpuprim_status_t status;
    unsigned char lower[8], upper[8];
    tc_poison(ctx, out, h->cd, h->bins);
    tc_set(h->d, lower, 0, h->lower);
    tc_set(h->d, upper, 0, h->upper);
    if (h->mode == 0) {
        status = gpuprim_histogram_even(ctx, in, lower, upper, out);
    } else if (h->mode == 1) {
        eb = tc_buffer_from(ctx, h->d, h->edges, h->bins + 1);
        status = gpuprim_histogram_range(ctx, in, eb, out);
    } else {
        status = gpuprim_bincount(ctx, in, out);
    }
    tc.checks++;
    if (status != GPUPRIM_SUCCESS) {
        tc_fail(__FILE__, __LINE__, "histogram call returned %d (%s): %s", (int)status,
                gpuprim_get_error_string(status), gpuprim_context_last_error(ctx));
    } else {
        got = tc_download(ctx, out, h->cd, h->bins);
        for (b = 0; b < h->bins; ++b) {
            const uint64_t expect = want[b] & tc_mask(h->cd), have = tc_get(h->cd, got, b);
            total += want[b];
            tc.checks++;
            if (have != expect && reported++ < 5)
                tc_fail(__FILE__, __LINE__, "bin %llu: count %llu, expected %llu", (unsigned long long)b,
                        (unsigned long long)have, (unsigned long long)expect);
        }
        CHECKF(total <= n, "reference counted %llu of %llu elements", (unsigned long long)total,
               (unsigned long long)n);
        free(got);
    }
    after = tc_download(ctx, in, h->d, n);
    CHECK_ARRAY_EQ(h->d, after, x, n, "input after the call");
    free(after);
    if (eb) CHECK_OK(gpuprim_buffer_destroy(ctx, eb));
    CHECK_OK(gpuprim_buffer_destroy(ctx, out));
    CHECK_OK(gpuprim_buffer_destroy(ctx, in));
    free(want);
}

/* ---- data ------------------------------------------------------------------ */

/* Elements on and around the bounds and the edges, outside them, the specials, and the pattern's values. */
static void *make_data(gpuprim_dtype_t d, uint64_t n, tc_pattern_t p, const uint64_t *marks, size_t mark_count) {
    void *x = tc_xmalloc(n * tc_size(d) + 8);
    uint64_t i;
    tc_fill(d, x, n, p);
    for (i = 0; i < n && mark_count > 0; i += 3) {
        const uint64_t m = marks[tc_below(mark_count)];
        const int nudge = (int)tc_below(3) - 1; /* the mark, one bit pattern below or above */
        uint64_t v = m;
        if (!tc_is_float(d)) v = (m + (uint64_t)(int64_t)nudge) & tc_mask(d);
        else if (nudge != 0 && !tc_isnan_bits(d, m) && (m & ~tc_sign_bit(d) & tc_mask(d)) != 0) v = m + (uint64_t)nudge;
        tc_set(d, x, i, v & tc_mask(d));
    }
    return x;
}

static const uint64_t sizes[] = {0, 1, 2, 1023, 1024, 1025, 4097, 100003};

/* Bounds of even bins per dtype: (lower, upper) as values. */
typedef struct bounds {
    double lower, upper;
    uint64_t bins;
} bounds_t;

static void test_even(gpuprim_context_t ctx) {
    static const bounds_t float_bounds[] = {{-1, 1, 10},    {0, 1, 1},      {-1000, 1000, 65536}, {-3, 5, 8},
                                            {-0.5, 0.75, 24576}, {0, 100, 24577}, {-2, 2, 3}};
    static const bounds_t int_bounds[] = {{-5, 5, 10}, {0, 10, 1}, {-100, 100, 7}, {0, 256, 256}, {3, 96, 65536},
                                          {-20, 60, 24576}, {0, 90, 30}};
    static const tc_pattern_t patterns[] = {TC_SMALL_RANGE, TC_SPECIAL, TC_MODERATE, TC_NAN_HEAVY, TC_TINY,
                                            TC_RANDOM_BITS, TC_INF_SPARSE};
    size_t di, bi, si;
    int combo = 0;
    for (di = 0; di < TC_DTYPE_COUNT; ++di) {
        const gpuprim_dtype_t d = tc_all_dtypes[di];
        const int is_float = tc_is_float(d);
        const size_t bound_count = is_float ? sizeof float_bounds / sizeof float_bounds[0]
                                            : sizeof int_bounds / sizeof int_bounds[0] + 2;
        for (bi = 0; bi < bound_count; ++bi) {
            hist_call_t h;
            uint64_t marks[16];
            size_t mark_count = 0;
            memset(&h, 0, sizeof h);
            h.mode = 0;
            h.d = d;
            if (is_float) {
                h.lower = tc_from_double(d, float_bounds[bi].lower);
                h.upper = tc_from_double(d, float_bounds[bi].upper);
                h.bins = float_bounds[bi].bins;
            } else if (bi < sizeof int_bounds / sizeof int_bounds[0]) {
                double lo = int_bounds[bi].lower, hi = int_bounds[bi].upper;
                if (!tc_is_signed(d) && lo < 0) {
                    hi -= lo;
                    lo = 0;
                }
                if (tc_size(d) == 1 && hi > 127) hi = tc_is_signed(d) ? 127 : 255; /* fits the type */
                h.lower = tc_from_double(d, lo);
                h.upper = tc_from_double(d, hi);
                h.bins = int_bounds[bi].bins;
            } else if (bi == sizeof int_bounds / sizeof int_bounds[0]) {
                /* the type's whole range but its max, in 1000 bins */
                h.lower = tc_identity(GPUPRIM_OP_MAX, d);
                h.upper = tc_identity(GPUPRIM_OP_MIN, d);
                h.bins = 1000;
            } else {
                /* 3 bins over [min, min + 3 * 2^(bits - 3)): the shift path near the type's low end */
                h.lower = tc_identity(GPUPRIM_OP_MAX, d);
                h.upper = (h.lower + (3ull << (tc_bits(d) - 3))) & tc_mask(d);
                h.bins = 3;
            }
            marks[mark_count++] = h.lower;
            marks[mark_count++] = h.upper;
            if (is_float) {
                const uint64_t *specials = tc_float_specials(d);
                int s;
                for (s = 0; s < 10; ++s) marks[mark_count++] = specials[s];
            } else {
                marks[mark_count++] = tc_identity(GPUPRIM_OP_MAX, d);
                marks[mark_count++] = tc_identity(GPUPRIM_OP_MIN, d);
            }
            {
                /* an inner edge: lower + (upper - lower) / bins, where it is a value of the type */
                const double lo = (double)tc_value(d, h.lower), hi = (double)tc_value(d, h.upper);
                marks[mark_count++] = tc_from_double(d, lo + (hi - lo) / (double)h.bins);
                marks[mark_count++] = tc_from_double(d, lo + (hi - lo) / 2);
            }
            for (si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
                const uint64_t n = sizes[si];
                const tc_pattern_t p = patterns[combo % 7];
                void *x;
                h.cd = (combo & 1) ? GPUPRIM_DTYPE_U64 : GPUPRIM_DTYPE_U32;
                ++combo;
                if (n > 5000 && (combo % 3) != 0) continue;
                x = make_data(d, n, p, marks, mark_count);
                tc_where("histogram_even %s n=%llu (%s) [%s, %s) in %llu bins -> %s", tc_dtype_name(d),
                         (unsigned long long)n, tc_pattern_names[p], "lower", "upper", (unsigned long long)h.bins,
                         tc_dtype_name(h.cd));
                check_hist(ctx, &h, x, n);
                free(x);
            }
        }
    }
}

/* Edges: sorted values drawn from the pattern and the specials (duplicates included), so elements fall on
   them; for floats -inf and +inf at the ends now and then. */
static void test_range(gpuprim_context_t ctx) {
    static const uint64_t edge_counts[] = {2, 3, 9, 65, 257, 4097, 24577, 65537};
    size_t di, ei, si;
    int combo = 0;
    for (di = 0; di < TC_DTYPE_COUNT; ++di) {
        const gpuprim_dtype_t d = tc_all_dtypes[di];
        for (ei = 0; ei < sizeof edge_counts / sizeof edge_counts[0]; ++ei) {
            const uint64_t e = edge_counts[ei];
            void *raw = tc_xmalloc(e * tc_size(d) + 8), *edges = tc_xmalloc(e * tc_size(d) + 8);
            uint64_t *perm = (uint64_t *)tc_xmalloc(e * sizeof(uint64_t) + 8), i;
            uint64_t marks[8];
            hist_call_t h;
            tc_fill(d, raw, e, (combo & 1) ? TC_MODERATE : TC_SMALL_RANGE);
            for (i = 0; i < e; ++i) /* no NaN edges */
                if (tc_is_float(d) && tc_isnan_bits(d, tc_get(d, raw, i))) tc_set(d, raw, i, 0);
            if (tc_is_float(d) && (combo & 2)) {
                tc_set(d, raw, 0, tc_inf_bits(d) | tc_sign_bit(d));
                tc_set(d, raw, e - 1, tc_inf_bits(d));
            }
            tc_reference_sort_permutation(d, raw, e, 0, perm);
            tc_permute(d, raw, perm, e, edges);
            memset(&h, 0, sizeof h);
            h.mode = 1;
            h.d = d;
            h.edges = edges;
            h.bins = e - 1;
            marks[0] = tc_get(d, edges, 0);
            marks[1] = tc_get(d, edges, e - 1);
            marks[2] = tc_get(d, edges, e / 2);
            marks[3] = tc_is_float(d) ? tc_sign_bit(d) : tc_identity(GPUPRIM_OP_MAX, d); /* -0 */
            marks[4] = 0;
            marks[5] = tc_is_float(d) ? tc_float_specials(d)[5] : tc_identity(GPUPRIM_OP_MIN, d);
            marks[6] = tc_is_float(d) ? tc_float_specials(d)[9] : 1;
            marks[7] = tc_get(d, edges, tc_below(e));
            for (si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
                const uint64_t n = sizes[si];
                void *x;
                h.cd = (combo & 1) ? GPUPRIM_DTYPE_U32 : GPUPRIM_DTYPE_U64;
                ++combo;
                if ((n > 5000 && (combo % 3) != 0) || (e > 4097 && n > 5000)) continue;
                x = make_data(d, n, (combo & 2) ? TC_NAN_HEAVY : TC_MODERATE, marks, 8);
                tc_where("histogram_range %s n=%llu, %llu edges -> %s", tc_dtype_name(d), (unsigned long long)n,
                         (unsigned long long)e, tc_dtype_name(h.cd));
                check_hist(ctx, &h, x, n);
                free(x);
            }
            free(raw);
            free(edges);
            free(perm);
        }
    }
}

static void test_bincount(gpuprim_context_t ctx) {
    static const uint64_t bin_counts[] = {1, 5, 9, 256, 24576, 65536, 70000};
    size_t di, bi, si;
    int combo = 0;
    for (di = 0; di < TC_DTYPE_COUNT; ++di) {
        const gpuprim_dtype_t d = tc_all_dtypes[di];
        if (tc_is_float(d)) continue;
        for (bi = 0; bi < sizeof bin_counts / sizeof bin_counts[0]; ++bi) {
            hist_call_t h;
            uint64_t marks[5];
            memset(&h, 0, sizeof h);
            h.mode = 2;
            h.d = d;
            h.bins = bin_counts[bi];
            marks[0] = 0;
            marks[1] = (h.bins - 1) & tc_mask(d);
            marks[2] = h.bins & tc_mask(d);
            marks[3] = tc_identity(GPUPRIM_OP_MAX, d);
            marks[4] = tc_identity(GPUPRIM_OP_MIN, d);
            for (si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
                const uint64_t n = sizes[si];
                void *x;
                h.cd = (combo & 1) ? GPUPRIM_DTYPE_U64 : GPUPRIM_DTYPE_U32;
                ++combo;
                if (n > 5000 && (combo % 2) != 0) continue;
                x = make_data(d, n, (combo & 2) ? TC_TINY : TC_SMALL_RANGE, marks, 5);
                tc_where("bincount %s n=%llu into %llu bins -> %s", tc_dtype_name(d), (unsigned long long)n,
                         (unsigned long long)h.bins, tc_dtype_name(h.cd));
                check_hist(ctx, &h, x, n);
                free(x);
            }
        }
    }
}

/* Answers spelled out (numpy's where the rules agree). */
static void test_known_answers(gpuprim_context_t ctx) {
    /* np.histogram([0, 0.25, 0.5, 0.75, 0.999, 1, -0.0, nan, -1], 4, (0, 1)) but 1 outside: [2, 1, 1, 2] */
    const float xf[9] = {0.0f, 0.25f, 0.5f, 0.75f, 0.999f, 1.0f, -0.0f, NAN, -1.0f};
    const float lo = 0.0f, hi = 1.0f;
    /* np.bincount([0, 1, 1, 3, -1, 7], minlength=4)[:4] with -1 and 7 ignored: [1, 2, 0, 1] */
    const int32_t xi[6] = {0, 1, 1, 3, -1, 7};
    /* edges [-1, 0, 0, 2]: elements -1 -> 0, -0.0 -> 2 (the empty bin [0, 0) gets nothing), 1.5 -> 2, 2 out */
    const double edges[4] = {-1.0, 0.0, 0.0, 2.0}, xd[5] = {-1.0, -0.0, 1.5, 2.0, -2.0};
    /* i8 over [-128, 127) in 255 bins: -128 -> 0, 126 -> 254, 127 out */
    const int8_t x8[3] = {-128, 126, 127}, lo8 = -128, hi8 = 127;
    /* u64 over [0, 2^64 - 1) in 2 bins: 2^63 - 1 -> 0, 2^63 -> 1 (exact 128-bit arithmetic) */
    const uint64_t x64[3] = {0x7FFFFFFFFFFFFFFFull, 0x8000000000000000ull, 0xFFFFFFFFFFFFFFFFull};
    const uint64_t lo64 = 0, hi64 = 0xFFFFFFFFFFFFFFFFull;
    uint64_t got[4];
    uint32_t got32[255];
    gpuprim_buffer_t in, out, eb;
    tc_where("histogram known answers");
    in = tc_buffer_from(ctx, GPUPRIM_DTYPE_F32, xf, 9);
    out = tc_buffer(ctx, GPUPRIM_DTYPE_U64, 4);
    CHECK_OK(gpuprim_histogram_even(ctx, in, &lo, &hi, out));
    REQUIRE_OK(gpuprim_buffer_download(ctx, out, 0, got, 4));
    CHECKF(got[0] == 2 && got[1] == 1 && got[2] == 1 && got[3] == 2, "f32 even: %llu %llu %llu %llu",
           (unsigned long long)got[0], (unsigned long long)got[1], (unsigned long long)got[2],
           (unsigned long long)got[3]);
    CHECK_OK(gpuprim_buffer_destroy(ctx, in));
    in = tc_buffer_from(ctx, GPUPRIM_DTYPE_I32, xi, 6);
    CHECK_OK(gpuprim_bincount(ctx, in, out));
    REQUIRE_OK(gpuprim_buffer_download(ctx, out, 0, got, 4));
    CHECKF(got[0] == 1 && got[1] == 2 && got[2] == 0 && got[3] == 1, "bincount: %llu %llu %llu %llu",
           (unsigned long long)got[0], (unsigned long long)got[1], (unsigned long long)got[2],
           (unsigned long long)got[3]);
    CHECK_OK(gpuprim_buffer_destroy(ctx, in));
    CHECK_OK(gpuprim_buffer_destroy(ctx, out));
    in = tc_buffer_from(ctx, GPUPRIM_DTYPE_F64, xd, 5);
    eb = tc_buffer_from(ctx, GPUPRIM_DTYPE_F64, edges, 4);
    out = tc_buffer(ctx, GPUPRIM_DTYPE_U64, 3);
    CHECK_OK(gpuprim_histogram_range(ctx, in, eb, out));
    REQUIRE_OK(gpuprim_buffer_download(ctx, out, 0, got, 3));
    CHECKF(got[0] == 1 && got[1] == 0 && got[2] == 2, "f64 edges: %llu %llu %llu", (unsigned long long)got[0],
           (unsigned long long)got[1], (unsigned long long)got[2]);
    CHECK_OK(gpuprim_buffer_destroy(ctx, out));
    CHECK_OK(gpuprim_buffer_destroy(ctx, eb));
    CHECK_OK(gpuprim_buffer_destroy(ctx, in));
    in = tc_buffer_from(ctx, GPUPRIM_DTYPE_I8, x8, 3);
    out = tc_buffer(ctx, GPUPRIM_DTYPE_U32, 255);
    CHECK_OK(gpuprim_histogram_even(ctx, in, &lo8, &hi8, out));
    REQUIRE_OK(gpuprim_buffer_download(ctx, out, 0, got32, 255));
    CHECKF(got32[0] == 1 && got32[254] == 1 && got32[127] == 0, "i8 even: %u %u", got32[0], got32[254]);
    CHECK_OK(gpuprim_buffer_destroy(ctx, out));
    CHECK_OK(gpuprim_buffer_destroy(ctx, in));
    in = tc_buffer_from(ctx, GPUPRIM_DTYPE_U64, x64, 3);
    out = tc_buffer(ctx, GPUPRIM_DTYPE_U64, 2);
    CHECK_OK(gpuprim_histogram_even(ctx, in, &lo64, &hi64, out));
    REQUIRE_OK(gpuprim_buffer_download(ctx, out, 0, got, 2));
    CHECKF(got[0] == 1 && got[1] == 1, "u64 even: %llu %llu", (unsigned long long)got[0],
           (unsigned long long)got[1]);
    CHECK_OK(gpuprim_buffer_destroy(ctx, out));
    CHECK_OK(gpuprim_buffer_destroy(ctx, in));
}

/* The next value of float dtype d below (dir < 0) or above (dir > 0) the finite value with these bits. */
static uint64_t float_step(gpuprim_dtype_t d, uint64_t bits, int dir) {
    const uint64_t sign = tc_sign_bit(d), magnitude = bits & ~sign & tc_mask(d);
    if (magnitude == 0) return dir < 0 ? (sign | 1) : 1; /* +-0 -> the smallest subnormal */
    if ((bits & sign) != 0) return dir < 0 ? bits + 1 : bits - 1;
    return dir < 0 ? bits - 1 : bits + 1;
}

/* Even bins at the edges of their range, for every float dtype: nextafter(upper, -inf) (which must count,
 * in the last bin: the f32 bench's dropped elements were of this kind), lower, upper, every inner edge
 * lower + k * (upper - lower) / bins as a value of the type and its neighbours, over ordinary, huge (up to
 * the type's max; f64 up to the largest finite width) and tiny ranges (bounds one and a few ulps apart,
 * f64 bounds a few subnormals apart, where bins / (upper - lower) overflows f64). Checked against the
 * reference and by a rule-free count: every element with lower <= x < upper lands in some bin. */
static void test_even_range_edges(gpuprim_context_t ctx) {
    enum { kCases = 12 };
    size_t di;
    int c;
    for (di = 0; di < TC_FLOAT_DTYPE_COUNT; ++di) {
        const gpuprim_dtype_t d = tc_float_dtypes[di];
        const uint64_t max_bits = tc_inf_bits(d) - 1; /* the largest finite value */
        for (c = 0; c < kCases; ++c) {
            hist_call_t h;
            uint64_t n = 0, cap, k, i, in_range = 0, counted = 0;
            void *x;
            uint64_t *want;
            memset(&h, 0, sizeof h);
            h.mode = 0;
            h.d = d;
            h.cd = (c & 1) ? GPUPRIM_DTYPE_U64 : GPUPRIM_DTYPE_U32;
            switch (c) {
            case 0: h.lower = tc_from_double(d, 0); h.upper = tc_from_double(d, 1); h.bins = 256; break;
            case 1: h.lower = tc_from_double(d, -1); h.upper = tc_from_double(d, 1); h.bins = 1; break;
            case 2: h.lower = tc_from_double(d, -3); h.upper = tc_from_double(d, 7); h.bins = 3; break;
            case 3: h.lower = tc_from_double(d, 0.1); h.upper = tc_from_double(d, 0.7); h.bins = 1000; break;
            case 4: /* the type's whole finite range but max (f64: half of it, so the width stays finite) */
                h.lower = max_bits | tc_sign_bit(d);
                h.upper = max_bits;
                if (d == GPUPRIM_DTYPE_F64) {
                    h.lower = tc_from_double(d, -DBL_MAX / 2);
                    h.upper = tc_from_double(d, DBL_MAX / 2);
                }
                h.bins = 256;
                break;
            case 5: h.lower = tc_from_double(d, 0); h.upper = max_bits; h.bins = 7; break;
            case 6: /* one ulp wide at 1 */
                h.lower = tc_from_double(d, 1); h.upper = float_step(d, h.lower, 1); h.bins = 256; break;
            case 7: /* three ulps wide below -2 */
                h.lower = tc_from_double(d, -2); h.lower = float_step(d, float_step(d, float_step(d, h.lower, -1), -1), -1);
                h.upper = tc_from_double(d, -2); h.bins = 2; break;
            case 8: /* subnormals: [0, 3 * smallest) */
                h.lower = 0; h.upper = 3; h.bins = 2; break;
            case 9: /* [-smallest, +smallest) in 65,536 bins */
                h.lower = tc_sign_bit(d) | 1; h.upper = 1; h.bins = 65536; break;
            case 10: h.lower = tc_from_double(d, -1e-3); h.upper = tc_from_double(d, 1e-3); h.bins = 24577; break;
            default: h.lower = tc_from_double(d, 100); h.upper = tc_from_double(d, 4000); h.bins = 4096; break;
            }
            cap = 8 * (h.bins + 1) + 64;
            x = tc_xmalloc(cap * tc_size(d) + 8);
            memset(x, 0, cap * tc_size(d) + 8);
            {
                const double lo = (double)tc_value(d, h.lower), hi = (double)tc_value(d, h.upper);
                const uint64_t top = float_step(d, h.upper, -1);
                /* nextafter(upper, -inf) many times (so one drop would show), lower, upper, outside */
                for (i = 0; i < 16; ++i) tc_set(d, x, n++, top);
                tc_set(d, x, n++, h.lower);
                tc_set(d, x, n++, h.upper);
                tc_set(d, x, n++, float_step(d, h.lower, -1));
                tc_set(d, x, n++, float_step(d, h.upper, 1) & tc_mask(d));
                tc_set(d, x, n++, tc_from_double(d, NAN));
                /* every inner edge, the values beside it */
                for (k = 1; k < h.bins && n + 3 <= cap; ++k) {
                    const uint64_t e = tc_from_double(d, lo + (hi - lo) * ((double)k / (double)h.bins));
                    tc_set(d, x, n++, e);
                    tc_set(d, x, n++, float_step(d, e, -1));
                    tc_set(d, x, n++, float_step(d, e, 1));
                }
            }
            tc_where("histogram_even range edges %s case %d [%.17g, %.17g) in %llu bins -> %s", tc_dtype_name(d), c,
                     (double)tc_value(d, h.lower), (double)tc_value(d, h.upper), (unsigned long long)h.bins,
                     tc_dtype_name(h.cd));
            CHECKF(tc_value(d, h.lower) < tc_value(d, h.upper), "case bounds not increasing");
            check_hist(ctx, &h, x, n);
            /* rule-free: the reference counts every element inside [lower, upper), each in [0, bins) */
            want = reference_counts(&h, x, n);
            for (i = 0; i < n; ++i) {
                const long double v = tc_value(d, tc_get(d, x, i));
                in_range += v >= tc_value(d, h.lower) && v < tc_value(d, h.upper);
            }
            for (k = 0; k < h.bins; ++k) counted += want[k];
            CHECKF(counted == in_range, "reference counted %llu of the %llu elements inside the range",
                   (unsigned long long)counted, (unsigned long long)in_range);
            free(want);
            free(x);
        }
    }
}

static void test_errors(gpuprim_context_t ctx) {
    const float data[3] = {0.5f, 1.5f, 2.5f};
    const float lo = 0.0f, hi = 3.0f, nan = NAN, inf = INFINITY;
    const double big = 1.5e308, neg_big = -1.5e308;
    const int32_t ilo = 5, ihi = 5;
    gpuprim_buffer_t in = tc_buffer_from(ctx, GPUPRIM_DTYPE_F32, data, 3);
    gpuprim_buffer_t in64 = tc_buffer(ctx, GPUPRIM_DTYPE_F64, 3), ints = tc_buffer(ctx, GPUPRIM_DTYPE_I32, 3);
    gpuprim_buffer_t edges = tc_buffer_from(ctx, GPUPRIM_DTYPE_F32, data, 3), one_edge = tc_buffer(ctx, GPUPRIM_DTYPE_F32, 1);
    gpuprim_buffer_t gone = tc_buffer(ctx, GPUPRIM_DTYPE_U32, 3), empty = tc_buffer(ctx, GPUPRIM_DTYPE_U32, 0);
    gpuprim_buffer_t alias;
    tc_known_t out = tc_known(ctx, GPUPRIM_DTYPE_U32, 3), out2 = tc_known(ctx, GPUPRIM_DTYPE_U64, 2);
    tc_known_t out_i32 = tc_known(ctx, GPUPRIM_DTYPE_I32, 3);
    gpuprim_context_t other = NULL;
    gpuprim_buffer_t foreign;
    int fake_context = 0;
    tc_where("histogram errors");
    CHECK_OK(gpuprim_buffer_destroy(ctx, gone));
    REQUIRE_OK(gpuprim_context_create(NULL, &other, NULL, 0));
    foreign = tc_buffer(other, GPUPRIM_DTYPE_U32, 3);
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_even(ctx, NULL, &lo, &hi, out.b), GPUPRIM_ERROR_NULL_POINTER, "'input'");
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_even(ctx, in, NULL, &hi, out.b), GPUPRIM_ERROR_NULL_POINTER, "'lower'");
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_even(ctx, in, &lo, NULL, out.b), GPUPRIM_ERROR_NULL_POINTER, "'upper'");
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_even(ctx, in, &lo, &hi, NULL), GPUPRIM_ERROR_NULL_POINTER, "'counts'");
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_even(ctx, in, &lo, &hi, gone), GPUPRIM_ERROR_INVALID_HANDLE, "'counts'");
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_even(ctx, in, &lo, &hi, foreign), GPUPRIM_ERROR_CONTEXT_MISMATCH,
                   "'counts'");
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_even(ctx, in, &lo, &hi, out_i32.b), GPUPRIM_ERROR_DTYPE_MISMATCH,
                   "'counts'");
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_even(ctx, in, &lo, &hi, empty), GPUPRIM_ERROR_INVALID_ARGUMENT, "'counts'");
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_even(ctx, in, &hi, &lo, out.b), GPUPRIM_ERROR_INVALID_ARGUMENT, "'lower'");
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_even(ctx, in, &lo, &lo, out.b), GPUPRIM_ERROR_INVALID_ARGUMENT, "'lower'");
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_even(ctx, in, &nan, &hi, out.b), GPUPRIM_ERROR_INVALID_ARGUMENT, "'lower'");
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_even(ctx, in, &lo, &inf, out.b), GPUPRIM_ERROR_INVALID_ARGUMENT, "'upper'");
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_even(ctx, in64, &neg_big, &big, out.b), GPUPRIM_ERROR_INVALID_ARGUMENT,
                   "not finite in f64");
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_even(ctx, ints, &ilo, &ihi, out.b), GPUPRIM_ERROR_INVALID_ARGUMENT,
                   "'lower'");
    /* counts over the input: U32 counts wrapping the F32 input's memory */
    alias = tc_view(ctx, in, GPUPRIM_DTYPE_U32, 0, 3);
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_even(ctx, in, &lo, &hi, alias), GPUPRIM_ERROR_INVALID_ARGUMENT, "'counts'");
    TC_EXPECT_FAIL(ctx, gpuprim_bincount(ctx, ints, out_i32.b), GPUPRIM_ERROR_DTYPE_MISMATCH, "'counts'");
    CHECK_OK(gpuprim_buffer_destroy(ctx, alias));
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_range(ctx, in, NULL, out2.b), GPUPRIM_ERROR_NULL_POINTER, "'edges'");
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_range(ctx, in, in64, out2.b), GPUPRIM_ERROR_DTYPE_MISMATCH, "'edges'");
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_range(ctx, in, one_edge, out2.b), GPUPRIM_ERROR_INVALID_ARGUMENT, "'edges'");
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_range(ctx, in, edges, out.b), GPUPRIM_ERROR_SIZE_MISMATCH, "'counts'");
    TC_EXPECT_FAIL(ctx, gpuprim_bincount(ctx, in, out.b), GPUPRIM_ERROR_DTYPE_MISMATCH, "'input'");
    TC_EXPECT_FAIL(ctx, gpuprim_bincount(ctx, ints, NULL), GPUPRIM_ERROR_NULL_POINTER, "'counts'");
    CHECK_STATUS(gpuprim_bincount(NULL, ints, out.b), GPUPRIM_ERROR_NULL_POINTER);
    CHECK_STATUS(gpuprim_histogram_range((gpuprim_context_t)&fake_context, in, edges, out2.b),
                 GPUPRIM_ERROR_INVALID_HANDLE);
    TC_CHECK_UNCHANGED(ctx, out);
    TC_CHECK_UNCHANGED(ctx, out2);
    TC_CHECK_UNCHANGED(ctx, out_i32);
    /* After the failures the context still works; an empty input gives zero counts. */
    {
        gpuprim_buffer_t none = tc_buffer(ctx, GPUPRIM_DTYPE_F32, 0);
        uint64_t got[2];
        CHECK_OK(gpuprim_histogram_range(ctx, none, edges, out2.b));
        REQUIRE_OK(gpuprim_buffer_download(ctx, out2.b, 0, got, 2));
        CHECKF(got[0] == 0 && got[1] == 0, "empty input: counts %llu %llu", (unsigned long long)got[0],
               (unsigned long long)got[1]);
        CHECK_OK(gpuprim_histogram_range(ctx, in, edges, out2.b));
        REQUIRE_OK(gpuprim_buffer_download(ctx, out2.b, 0, got, 2));
        CHECKF(got[0] == 1 && got[1] == 1, "[0.5, 1.5, 2.5) edges: counts %llu %llu", (unsigned long long)got[0],
               (unsigned long long)got[1]);
        CHECK_OK(gpuprim_buffer_destroy(ctx, none));
    }
    CHECK_OK(gpuprim_buffer_destroy(other, foreign));
    CHECK_OK(gpuprim_context_destroy(other));
    tc_free_known(ctx, out);
    tc_free_known(ctx, out2);
    tc_free_known(ctx, out_i32);
    CHECK_OK(gpuprim_buffer_destroy(ctx, empty));
    CHECK_OK(gpuprim_buffer_destroy(ctx, one_edge));
    CHECK_OK(gpuprim_buffer_destroy(ctx, edges));
    CHECK_OK(gpuprim_buffer_destroy(ctx, ints));
    CHECK_OK(gpuprim_buffer_destroy(ctx, in64));
    CHECK_OK(gpuprim_buffer_destroy(ctx, in));
}

/* Inputs that start off the 16-byte alignment of the library's buffers (views): the CUDA kernel's head
 * and tail elements beside its 16-byte vectors. */
static void test_unaligned_views(gpuprim_context_t ctx) {
    static const uint64_t view_sizes[] = {1, 5, 30, 1021, 70001};
    size_t di, si;
    uint64_t offset;
    int combo = 0;
    for (di = 0; di < TC_DTYPE_COUNT; ++di) {
        const gpuprim_dtype_t d = tc_all_dtypes[di];
        for (si = 0; si < sizeof view_sizes / sizeof view_sizes[0]; ++si) {
            const uint64_t n = view_sizes[si] + 16;
            void *x = tc_xmalloc(n * tc_size(d) + 8), *edges = tc_xmalloc(8 * tc_size(d) + 8);
            uint64_t *perm = (uint64_t *)tc_xmalloc(8 * sizeof(uint64_t)), i;
            gpuprim_buffer_t base;
            tc_fill(d, x, n, TC_SMALL_RANGE);
            /* the edges: the input's first 8 values (NaNs made 0), sorted; so elements fall on them */
            for (i = 0; i < 8; ++i)
                if (tc_is_float(d) && tc_isnan_bits(d, tc_get(d, x, i))) tc_set(d, x, i, 0);
            tc_reference_sort_permutation(d, x, 8, 0, perm);
            tc_permute(d, x, perm, 8, edges);
            base = tc_buffer_from(ctx, d, x, n);
            for (offset = 1; offset <= 15; offset += 2) {
                const uint64_t count = n - offset - (offset % 4 == 3 ? 1 : 0);
                const void *view_host = (const char *)x + offset * tc_size(d);
                gpuprim_buffer_t view = tc_view(ctx, base, d, offset, count);
                hist_call_t h;
                const int mode = tc_is_float(d) ? (combo & 1) : combo % 3;
                gpuprim_buffer_t out, eb = NULL;
                uint64_t *want, b;
                unsigned char lower[8], upper[8];
                void *got;
                gpuprim_status_t status;
                memset(&h, 0, sizeof h);
                h.mode = mode;
                h.d = d;
                h.cd = (combo & 2) ? GPUPRIM_DTYPE_U64 : GPUPRIM_DTYPE_U32;
                h.bins = mode == 1 ? 7 : 9;
                h.edges = edges;
                h.lower = tc_from_double(d, tc_is_signed(d) || tc_is_float(d) ? -3.0 : 0.0);
                h.upper = tc_from_double(d, 6.0);
                ++combo;
                tc_where("histogram mode %d %s view at +%llu, n=%llu -> %s", mode, tc_dtype_name(d),
                         (unsigned long long)offset, (unsigned long long)count, tc_dtype_name(h.cd));
                want = reference_counts(&h, view_host, count);
                out = tc_buffer(ctx, h.cd, h.bins);
                tc_poison(ctx, out, h.cd, h.bins);
                tc_set(d, lower, 0, h.lower);
                tc_set(d, upper, 0, h.upper);
                if (mode == 0) {
                    status = gpuprim_histogram_even(ctx, view, lower, upper, out);
                } else if (mode == 1) {
                    eb = tc_buffer_from(ctx, d, edges, 8);
                    status = gpuprim_histogram_range(ctx, view, eb, out);
                } else {
                    status = gpuprim_bincount(ctx, view, out);
                }
                CHECK_STATUS(status, GPUPRIM_SUCCESS);
                got = tc_download(ctx, out, h.cd, h.bins);
                for (b = 0; b < h.bins; ++b)
                    CHECKF(tc_get(h.cd, got, b) == (want[b] & tc_mask(h.cd)), "bin %llu: %llu, expected %llu",
                           (unsigned long long)b, (unsigned long long)tc_get(h.cd, got, b),
                           (unsigned long long)want[b]);
                free(got);
                free(want);
                if (eb) CHECK_OK(gpuprim_buffer_destroy(ctx, eb));
                CHECK_OK(gpuprim_buffer_destroy(ctx, out));
                CHECK_OK(gpuprim_buffer_destroy(ctx, view));
            }
            CHECK_OK(gpuprim_buffer_destroy(ctx, base));
            free(x);
            free(edges);
            free(perm);
        }
    }
}

/* ---- rows ------------------------------------------------------------------ */

/* One _rows call on rows rows of n elements at x: counts poisoned first, each row's counts checked against the
 * reference of that row alone, input unchanged. With rows 1 the flat call must give the same counts. */
static void check_hist_rows(gpuprim_context_t ctx, const hist_call_t *h, const void *x, uint64_t rows, uint64_t n) {
    const uint64_t total = rows * n, cells = rows * h->bins;
    gpuprim_buffer_t in = tc_buffer_from(ctx, h->d, x, total), out = tc_buffer(ctx, h->cd, cells), eb = NULL;
    gpuprim_status_t status;
    unsigned char lower[8], upper[8];
    long reported = 0;
    uint64_t r, b;
    void *after;
    tc_poison(ctx, out, h->cd, cells);
    tc_set(h->d, lower, 0, h->lower);
    tc_set(h->d, upper, 0, h->upper);
    if (h->mode == 0) {
        status = gpuprim_histogram_even_rows(ctx, in, rows, lower, upper, out);
    } else if (h->mode == 1) {
        eb = tc_buffer_from(ctx, h->d, h->edges, h->bins + 1);
        status = gpuprim_histogram_range_rows(ctx, in, rows, eb, out);
    } else {
        status = gpuprim_bincount_rows(ctx, in, rows, out);
    }
    tc.checks++;
    if (status != GPUPRIM_SUCCESS) {
        tc_fail(__FILE__, __LINE__, "histogram rows call returned %d (%s): %s", (int)status,
                gpuprim_get_error_string(status), gpuprim_context_last_error(ctx));
    } else {
        void *got = tc_download(ctx, out, h->cd, cells);
        for (r = 0; r < rows; ++r) {
            uint64_t *want = reference_counts(h, (const char *)x + r * n * tc_size(h->d), n);
            for (b = 0; b < h->bins; ++b) {
                const uint64_t expect = want[b] & tc_mask(h->cd), have = tc_get(h->cd, got, r * h->bins + b);
                tc.checks++;
                if (have != expect && reported++ < 5)
                    tc_fail(__FILE__, __LINE__, "row %llu bin %llu: count %llu, expected %llu", (unsigned long long)r,
                            (unsigned long long)b, (unsigned long long)have, (unsigned long long)expect);
            }
            free(want);
        }
        free(got);
    }
    after = tc_download(ctx, in, h->d, total);
    CHECK_ARRAY_EQ(h->d, after, x, total, "input after the rows call");
    free(after);
    if (rows == 1) check_hist(ctx, h, x, n); /* the flat call on the one row */
    if (eb) CHECK_OK(gpuprim_buffer_destroy(ctx, eb));
    CHECK_OK(gpuprim_buffer_destroy(ctx, out));
    CHECK_OK(gpuprim_buffer_destroy(ctx, in));
}

/* rows rows of n elements: each row its own pattern around the marks; every fifth row nothing that counts
 * (NaNs for floats; upper, or bins for bincount, for integers), every seventh row all one mark. */
static void *make_rows(const hist_call_t *h, uint64_t rows, uint64_t n, const uint64_t *marks, size_t mark_count,
                       int combo) {
    static const tc_pattern_t patterns[] = {TC_SMALL_RANGE, TC_SPECIAL, TC_MODERATE, TC_NAN_HEAVY, TC_TINY,
                                            TC_RANDOM_BITS, TC_INF_SPARSE, TC_EQUAL};
    const size_t size = tc_size(h->d);
    char *x = (char *)tc_xmalloc(rows * n * size + 8);
    uint64_t r, i;
    for (r = 0; r < rows; ++r) {
        char *row = x + r * n * size;
        void *part = make_data(h->d, n, patterns[(r + (uint64_t)combo) % 8], marks, mark_count);
        memcpy(row, part, n * size);
        free(part);
        if (r % 5 == 4) {
            const uint64_t none = tc_is_float(h->d) ? tc_from_double(h->d, NAN)
                                  : h->mode == 2     ? (h->bins & tc_mask(h->d))
                                                     : h->upper;
            for (i = 0; i < n; ++i) tc_set(h->d, row, i, none);
        } else if (r % 7 == 6) {
            for (i = 0; i < n; ++i) tc_set(h->d, row, i, marks[r % mark_count]);
        }
    }
    return x;
}

/* Every dtype, the three rules, the rows shapes: one row, rows of no element, of one element, many rows of few
 * elements (past a CUDA launch's 65,535 rows), few rows past a CUDA block's round and the CPU's pieces; one
 * bin, bins past the data, shared and global counters. */
static void test_rows(gpuprim_context_t ctx) {
    static const uint64_t shapes[][3] = {/* rows, n, bins */
                                         {1, 0, 4},     {1, 37, 5},      {3, 0, 7},    {6, 1, 3},  {5, 2, 1},
                                         {11, 33, 9},   {1000, 3, 6},    {4, 1025, 256}, {70001, 1, 2},
                                         {3, 70001, 24577}, {2, 3000, 65536}};
    size_t di, si;
    int combo = 0;
    for (di = 0; di < TC_DTYPE_COUNT; ++di) {
        const gpuprim_dtype_t d = tc_all_dtypes[di];
        int mode;
        for (mode = 0; mode < 3; ++mode) {
            if (mode == 2 && tc_is_float(d)) continue;
            for (si = 0; si < sizeof shapes / sizeof shapes[0]; ++si) {
                const uint64_t rows = shapes[si][0], n = shapes[si][1], bins = shapes[si][2];
                hist_call_t h;
                uint64_t marks[8];
                size_t mark_count = 0;
                void *edges = NULL, *x;
                ++combo;
                if ((rows * n > 50000 || bins > 4096) && (combo % 3) != 0) continue; /* keep it short */
                memset(&h, 0, sizeof h);
                h.mode = mode;
                h.d = d;
                h.cd = (combo & 1) ? GPUPRIM_DTYPE_U64 : GPUPRIM_DTYPE_U32;
                h.bins = bins;
                if (mode == 0) {
                    const double lo = tc_is_signed(d) || tc_is_float(d) ? -50 : 0, hi = tc_size(d) == 1 ? 100 : 300;
                    h.lower = tc_from_double(d, lo);
                    h.upper = tc_from_double(d, hi);
                    marks[mark_count++] = h.lower;
                    marks[mark_count++] = h.upper;
                    marks[mark_count++] = tc_from_double(d, lo + (hi - lo) / (double)bins);
                    marks[mark_count++] = tc_from_double(d, (lo + hi) / 2);
                } else if (mode == 1) {
                    /* bins + 1 edges: sorted values of the pattern (no NaN), so elements fall on them */
                    uint64_t *perm = (uint64_t *)tc_xmalloc((bins + 1) * sizeof(uint64_t) + 8), i;
                    void *raw = tc_xmalloc((bins + 1) * tc_size(d) + 8);
                    edges = tc_xmalloc((bins + 1) * tc_size(d) + 8);
                    tc_fill(d, raw, bins + 1, (combo & 2) ? TC_MODERATE : TC_SMALL_RANGE);
                    for (i = 0; i <= bins; ++i)
                        if (tc_is_float(d) && tc_isnan_bits(d, tc_get(d, raw, i))) tc_set(d, raw, i, 0);
                    tc_reference_sort_permutation(d, raw, bins + 1, 0, perm);
                    tc_permute(d, raw, perm, bins + 1, edges);
                    free(raw);
                    free(perm);
                    h.edges = edges;
                    marks[mark_count++] = tc_get(d, edges, 0);
                    marks[mark_count++] = tc_get(d, edges, bins);
                    marks[mark_count++] = tc_get(d, edges, bins / 2);
                    marks[mark_count++] = tc_get(d, edges, tc_below(bins + 1));
                } else {
                    marks[mark_count++] = 0;
                    marks[mark_count++] = (bins - 1) & tc_mask(d);
                    marks[mark_count++] = bins & tc_mask(d);
                    marks[mark_count++] = tc_identity(GPUPRIM_OP_MIN, d); /* the type's max */
                }
                if (tc_is_float(d)) {
                    marks[mark_count++] = tc_from_double(d, NAN);
                    marks[mark_count++] = tc_sign_bit(d); /* -0 */
                } else {
                    marks[mark_count++] = tc_identity(GPUPRIM_OP_MAX, d); /* the type's min */
                    marks[mark_count++] = tc_mask(d);                    /* -1 */
                }
                x = make_rows(&h, rows, n, marks, mark_count, combo);
                tc_where("histogram rows mode %d %s: %llu rows of %llu, %llu bins -> %s", mode, tc_dtype_name(d),
                         (unsigned long long)rows, (unsigned long long)n, (unsigned long long)bins,
                         tc_dtype_name(h.cd));
                check_hist_rows(ctx, &h, x, rows, n);
                free(x);
                free(edges);
            }
        }
    }
}

/* Rows spelled out, and the rows calls' errors, each leaving the counts as they were. */
static void test_rows_known_and_errors(gpuprim_context_t ctx) {
    /* [[0, 0.5, 1, nan], [0.25, 0.25, -1, 0.99]] in 2 bins over [0, 1): [[1, 1], [2, 1]] */
    const float xf[8] = {0.0f, 0.5f, 1.0f, NAN, 0.25f, 0.25f, -1.0f, 0.99f};
    const float lo = 0.0f, hi = 1.0f, edges3[3] = {0.0f, 0.5f, 1.0f};
    /* bincount rows [[0, 2, 2], [5, 1, -1]] into 3 bins: [[1, 0, 2], [0, 1, 0]] */
    const int16_t xi[6] = {0, 2, 2, 5, 1, -1};
    uint64_t got[6];
    gpuprim_buffer_t in = tc_buffer_from(ctx, GPUPRIM_DTYPE_F32, xf, 8), ints = tc_buffer_from(ctx, GPUPRIM_DTYPE_I16, xi, 6);
    gpuprim_buffer_t edges = tc_buffer_from(ctx, GPUPRIM_DTYPE_F32, edges3, 3), out4 = tc_buffer(ctx, GPUPRIM_DTYPE_U64, 4);
    gpuprim_buffer_t out6 = tc_buffer(ctx, GPUPRIM_DTYPE_U64, 6), alias;
    tc_known_t k4 = tc_known(ctx, GPUPRIM_DTYPE_U32, 4), k5 = tc_known(ctx, GPUPRIM_DTYPE_U64, 5),
               k6 = tc_known(ctx, GPUPRIM_DTYPE_U32, 6), kf = tc_known(ctx, GPUPRIM_DTYPE_F32, 4);
    tc_where("histogram rows known answers");
    CHECK_OK(gpuprim_histogram_even_rows(ctx, in, 2, &lo, &hi, out4));
    REQUIRE_OK(gpuprim_buffer_download(ctx, out4, 0, got, 4));
    CHECKF(got[0] == 1 && got[1] == 1 && got[2] == 2 && got[3] == 1, "even rows: %llu %llu / %llu %llu",
           (unsigned long long)got[0], (unsigned long long)got[1], (unsigned long long)got[2],
           (unsigned long long)got[3]);
    CHECK_OK(gpuprim_histogram_range_rows(ctx, in, 2, edges, out4));
    REQUIRE_OK(gpuprim_buffer_download(ctx, out4, 0, got, 4));
    CHECKF(got[0] == 1 && got[1] == 1 && got[2] == 2 && got[3] == 1, "range rows: %llu %llu / %llu %llu",
           (unsigned long long)got[0], (unsigned long long)got[1], (unsigned long long)got[2],
           (unsigned long long)got[3]);
    /* 4 rows of 2 in one bin each: [0, 0.5] [1, nan] [0.25, 0.25] [-1, 0.99] -> 2 0 2 1 */
    CHECK_OK(gpuprim_histogram_even_rows(ctx, in, 4, &lo, &hi, out4));
    REQUIRE_OK(gpuprim_buffer_download(ctx, out4, 0, got, 4));
    CHECKF(got[0] == 2 && got[1] == 0 && got[2] == 2 && got[3] == 1, "even rows of one bin: %llu %llu %llu %llu",
           (unsigned long long)got[0], (unsigned long long)got[1], (unsigned long long)got[2],
           (unsigned long long)got[3]);
    CHECK_OK(gpuprim_bincount_rows(ctx, ints, 2, out6));
    REQUIRE_OK(gpuprim_buffer_download(ctx, out6, 0, got, 6));
    CHECKF(got[0] == 1 && got[1] == 0 && got[2] == 2 && got[3] == 0 && got[4] == 1 && got[5] == 0,
           "bincount rows: %llu %llu %llu / %llu %llu %llu", (unsigned long long)got[0], (unsigned long long)got[1],
           (unsigned long long)got[2], (unsigned long long)got[3], (unsigned long long)got[4],
           (unsigned long long)got[5]);
    tc_where("histogram rows errors");
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_even_rows(ctx, in, 0, &lo, &hi, k4.b), GPUPRIM_ERROR_INVALID_ARGUMENT,
                   "'rows'");
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_even_rows(ctx, in, 3, &lo, &hi, k6.b), GPUPRIM_ERROR_INVALID_ARGUMENT,
                   "'input' has 8 elements, not a multiple of 'rows' = 3");
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_even_rows(ctx, in, 4, &lo, &hi, k6.b), GPUPRIM_ERROR_INVALID_ARGUMENT,
                   "'counts' has 6 elements, not a multiple of 'rows' = 4");
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_even_rows(ctx, in, 2, &hi, &lo, k4.b), GPUPRIM_ERROR_INVALID_ARGUMENT,
                   "'lower'");
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_even_rows(ctx, in, 2, NULL, &hi, k4.b), GPUPRIM_ERROR_NULL_POINTER,
                   "'lower'");
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_even_rows(ctx, in, 2, &lo, &hi, kf.b), GPUPRIM_ERROR_DTYPE_MISMATCH,
                   "'counts'");
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_even_rows(ctx, NULL, 2, &lo, &hi, k4.b), GPUPRIM_ERROR_NULL_POINTER,
                   "'input'");
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_range_rows(ctx, in, 2, edges, k6.b), GPUPRIM_ERROR_SIZE_MISMATCH,
                   "'counts' has 6 elements but 2 rows of the 2 bins");
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_range_rows(ctx, in, 4, edges, k4.b), GPUPRIM_ERROR_SIZE_MISMATCH,
                   "'counts'");
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_range_rows(ctx, in, 1, edges, k4.b), GPUPRIM_ERROR_SIZE_MISMATCH,
                   "'counts'");
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_range_rows(ctx, in, 2, edges, k5.b), GPUPRIM_ERROR_SIZE_MISMATCH,
                   "'counts' has 5 elements but 2 rows");
    {   /* counts with no elements: the rows call's count rule (SIZE_MISMATCH), as the header says */
        gpuprim_buffer_t none = tc_buffer(ctx, GPUPRIM_DTYPE_U64, 0);
        TC_EXPECT_FAIL(ctx, gpuprim_histogram_range_rows(ctx, in, 2, edges, none), GPUPRIM_ERROR_SIZE_MISMATCH,
                       "'counts' has 0 elements but 2 rows");
        CHECK_OK(gpuprim_buffer_destroy(ctx, none));
    }
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_range_rows(ctx, in, 0, edges, k4.b), GPUPRIM_ERROR_INVALID_ARGUMENT,
                   "'rows'");
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_range_rows(ctx, in, 2, ints, k4.b), GPUPRIM_ERROR_DTYPE_MISMATCH,
                   "'edges'");
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_range_rows(ctx, in, 2, NULL, k4.b), GPUPRIM_ERROR_NULL_POINTER, "'edges'");
    TC_EXPECT_FAIL(ctx, gpuprim_bincount_rows(ctx, in, 2, k4.b), GPUPRIM_ERROR_DTYPE_MISMATCH, "'input'");
    TC_EXPECT_FAIL(ctx, gpuprim_bincount_rows(ctx, ints, 4, k4.b), GPUPRIM_ERROR_INVALID_ARGUMENT,
                   "not a multiple of 'rows' = 4");
    TC_EXPECT_FAIL(ctx, gpuprim_bincount_rows(ctx, ints, 2, k5.b), GPUPRIM_ERROR_INVALID_ARGUMENT,
                   "'counts' has 5 elements, not a multiple of 'rows' = 2");
    TC_EXPECT_FAIL(ctx, gpuprim_bincount_rows(ctx, ints, 0, k6.b), GPUPRIM_ERROR_INVALID_ARGUMENT, "'rows'");
    CHECK_STATUS(gpuprim_bincount_rows(NULL, ints, 2, k6.b), GPUPRIM_ERROR_NULL_POINTER);
    /* counts over the input: U32 counts on the F32 input's memory */
    alias = tc_view(ctx, in, GPUPRIM_DTYPE_U32, 0, 4);
    TC_EXPECT_FAIL(ctx, gpuprim_histogram_even_rows(ctx, in, 2, &lo, &hi, alias), GPUPRIM_ERROR_INVALID_ARGUMENT,
                   "'counts'");
    CHECK_OK(gpuprim_buffer_destroy(ctx, alias));
    TC_CHECK_UNCHANGED(ctx, k4);
    TC_CHECK_UNCHANGED(ctx, k5);
    TC_CHECK_UNCHANGED(ctx, k6);
    TC_CHECK_UNCHANGED(ctx, kf);
    tc_free_known(ctx, k4);
    tc_free_known(ctx, k5);
    tc_free_known(ctx, k6);
    tc_free_known(ctx, kf);
    CHECK_OK(gpuprim_buffer_destroy(ctx, out6));
    CHECK_OK(gpuprim_buffer_destroy(ctx, out4));
    CHECK_OK(gpuprim_buffer_destroy(ctx, edges));
    CHECK_OK(gpuprim_buffer_destroy(ctx, ints));
    CHECK_OK(gpuprim_buffer_destroy(ctx, in));
}

/* The same counts on CPU contexts of 1, 2 and 7 threads (several pieces). */
static void test_cpu_threads(void) {
    static const int threads[3] = {1, 2, 7};
    int t;
    for (t = 0; t < 3; ++t) {
        gpuprim_context_options_t options;
        gpuprim_context_t cpu = NULL;
        hist_call_t h;
        const uint64_t n = 1000003, marks[1] = {0};
        void *x;
        gpuprim_context_options_init(&options);
        options.backend = GPUPRIM_BACKEND_CPU;
        options.cpu_threads = threads[t];
        REQUIRE_OK(gpuprim_context_create(&options, &cpu, NULL, 0));
        memset(&h, 0, sizeof h);
        h.mode = 0;
        h.d = GPUPRIM_DTYPE_F32;
        h.cd = GPUPRIM_DTYPE_U32;
        h.lower = tc_from_double(h.d, -100);
        h.upper = tc_from_double(h.d, 100);
        h.bins = 1000;
        x = make_data(h.d, n, TC_NAN_SPARSE, marks, 1);
        tc_where("histogram_even on %d CPU threads", threads[t]);
        check_hist(cpu, &h, x, n);
        free(x);
        h.mode = 2;
        h.d = GPUPRIM_DTYPE_I16;
        h.bins = 65536;
        x = make_data(h.d, n, TC_RANDOM_BITS, marks, 1);
        tc_where("bincount on %d CPU threads", threads[t]);
        check_hist(cpu, &h, x, n);
        free(x);
        /* rows: 3 long rows (fewer than 7 threads: each cut into pieces), 20011 rows of 11 (whole rows) */
        h.mode = 0;
        h.d = GPUPRIM_DTYPE_I32;
        h.cd = GPUPRIM_DTYPE_U64;
        h.lower = tc_from_double(h.d, -1000);
        h.upper = tc_from_double(h.d, 1000);
        h.bins = 777;
        x = make_data(h.d, 3 * 200003, TC_MODERATE, marks, 1);
        tc_where("histogram_even_rows 3 x 200003 on %d CPU threads", threads[t]);
        check_hist_rows(cpu, &h, x, 3, 200003);
        free(x);
        h.mode = 2;
        h.d = GPUPRIM_DTYPE_U8;
        h.cd = GPUPRIM_DTYPE_U32;
        h.bins = 200;
        x = make_data(h.d, 20011 * 11, TC_RANDOM_BITS, marks, 1);
        tc_where("bincount_rows 20011 x 11 on %d CPU threads", threads[t]);
        check_hist_rows(cpu, &h, x, 20011, 11);
        free(x);
        CHECK_OK(gpuprim_context_destroy(cpu));
    }
}

int main(void) {
    gpuprim_context_t ctx = tc_init("test_histogram");
    test_known_answers(ctx);
    test_errors(ctx);
    test_even(ctx);
    test_even_range_edges(ctx);
    test_range(ctx);
    test_bincount(ctx);
    test_unaligned_views(ctx);
    test_rows_known_and_errors(ctx);
    test_rows(ctx);
    test_cpu_threads();
    return tc_finish();
}
