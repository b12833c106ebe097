/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpuprim_scan: inclusive/exclusive x SUM/MIN/MAX x 12 dtypes, in place and
 * out of place, against references computed here. Integer scans (narrow ones
 * wrap mod 2^8 / 2^16) and MIN/MAX bit for bit; f16/bf16 SUM outputs each
 * between the roundings of exact +- n * 2^-24 * sum|x| (f32 accumulation in
 * any order, each output rounded once), bit-exact where f32 is exact.
 * Sections (GPUPRIM_TEST_ONLY / GPUPRIM_TEST_SKIP, test_common.h):
 * known_answers, bit_patterns, all (every size, pattern, op and kind),
 * unaligned_views, pipelined_wide and pipelined_narrow (the 25-190 MB
 * inputs of 4/8-byte and of 1/2-byte dtypes; ctest runs these three as
 * entries of their own).
 */
#include "test_common.h"

static const uint64_t sizes[] = {0, 1, 2, 3, 31, 32, 33, 255, 1023, 1024, 1025, 4097, 65537, 1000003};
/* CUDA tiles hold a fixed number of bytes (16-byte vectors per thread), so
 * 1- and 2-byte elements have 2-4x (or 8x) the 4-byte tile's count: their
 * boundaries too, for the narrow dtypes. */
static const uint64_t narrow_sizes[] = {2047, 2049, 8191, 8193, 16383, 16384, 16385, 32769, 131073};
#define SIZE_COUNT(d) (sizeof sizes / sizeof sizes[0] + (tc_size(d) <= 2 ? sizeof narrow_sizes / sizeof narrow_sizes[0] : 0))
#define SIZE_AT(si) ((si) < sizeof sizes / sizeof sizes[0] ? sizes[si] : narrow_sizes[(si) - sizeof sizes / sizeof sizes[0]])
static const gpuprim_op_t ops[] = {GPUPRIM_OP_SUM, GPUPRIM_OP_MIN, GPUPRIM_OP_MAX};
static const gpuprim_scan_kind_t kinds[] = {GPUPRIM_SCAN_INCLUSIVE, GPUPRIM_SCAN_EXCLUSIVE};

/* Checks got[0..n) as the scan of x[0..n). Returns 1 if all elements are right. */
#define CHECK_SCAN(op, kind, d, x, got, n, what) check_scan(__FILE__, __LINE__, op, kind, d, x, got, n, what)
static int check_scan(const char *file, int line, gpuprim_op_t op, gpuprim_scan_kind_t kind,
                      gpuprim_dtype_t d, const void *x, const void *got, uint64_t n, const char *what) {
    int float_sum = tc_is_float(d) && op == GPUPRIM_OP_SUM;
    uint64_t acc = tc_identity(op, d), i, bad = 0, first = 0, first_want = 0;
    long double sum = 0, sumabs = 0, first_sum = 0, first_sumabs = 0;
    int exact_in_f32 = 0; /* f16/bf16: every prefix sum exact in f32 (tc_sum_exact_in_f32) */
    tc.checks++;
    if (float_sum && tc_is_half(d)) {
        int min_exponent = INT_MAX;
        long double total = 0;
        for (i = 0; i < n; ++i) {
            long double value = tc_value(d, tc_get(d, x, i));
            int e = tc_lowest_bit_exponent(value);
            if (e < min_exponent) min_exponent = e;
            total += fabsl(value);
        }
        exact_in_f32 = tc_sum_exact_in_f32(min_exponent, total);
    }
    for (i = 0; i < n; ++i) {
        uint64_t v = tc_get(d, x, i), g = tc_get(d, got, i);
        uint64_t terms = kind == GPUPRIM_SCAN_INCLUSIVE ? i + 1 : i;
        int ok;
        if (kind == GPUPRIM_SCAN_INCLUSIVE) {
            if (float_sum) {
                sum += tc_value(d, v);
                sumabs += fabsl(tc_value(d, v));
            } else {
                acc = tc_apply(op, d, acc, v);
            }
        }
        if (float_sum)
            ok = terms == 0 ? g == 0 /* the identity, +0.0 */
                            : tc_float_sum_ok_exact(d, g, sum, sumabs, terms, exact_in_f32);
        else
            ok = g == acc;
        if (!ok && bad++ == 0) {
            first = i;
            first_want = acc;
            first_sum = sum;
            first_sumabs = sumabs;
        }
        if (kind == GPUPRIM_SCAN_EXCLUSIVE) {
            if (float_sum) {
                sum += tc_value(d, v);
                sumabs += fabsl(tc_value(d, v));
            } else {
                acc = tc_apply(op, d, acc, v);
            }
        }
    }
    if (bad) {
        char g[96], w[96];
        if (float_sum)
            tc_fail(file, line, "%s: %llu of %llu wrong; first at [%llu]: got %s, expected %.20Lg (sum|x| %.6Lg)",
                    what, (unsigned long long)bad, (unsigned long long)n, (unsigned long long)first,
                    tc_format(d, tc_get(d, got, first), g, sizeof g), first_sum, first_sumabs);
        else
            tc_fail(file, line, "%s: %llu of %llu wrong; first at [%llu]: got %s, expected %s", what,
                    (unsigned long long)bad, (unsigned long long)n, (unsigned long long)first,
                    tc_format(d, tc_get(d, got, first), g, sizeof g),
                    tc_format(d, first_want, w, sizeof w));
        return 0;
    }
    return 1;
}

/* Float SUM scans are deterministic: scanning input into output again (after
 * poisoning it) gives `first`, the first run's result, bit for bit. */
static void check_scan_repeats(gpuprim_context_t ctx, gpuprim_op_t op, gpuprim_scan_kind_t kind,
                               gpuprim_dtype_t d, gpuprim_buffer_t input, gpuprim_buffer_t output,
                               const void *first, uint64_t n) {
    tc_poison(ctx, output, d, n);
    CHECK_OK(gpuprim_scan(ctx, op, kind, input, output));
    CHECK_BUFFER_EQ(ctx, output, d, first, n, "float sum scan, second run vs first");
}

static void run_scan(gpuprim_context_t ctx, gpuprim_op_t op, gpuprim_scan_kind_t kind,
                     gpuprim_dtype_t d, gpuprim_buffer_t input, const void *x, uint64_t n,
                     int in_place) {
    void *got;
    gpuprim_buffer_t output;
    if (in_place) {
        REQUIRE_OK(gpuprim_buffer_upload(ctx, input, 0, x, n));
        CHECK_OK(gpuprim_scan(ctx, op, kind, input, input));
        got = tc_download(ctx, input, d, n);
        CHECK_SCAN(op, kind, d, x, got, n, "in-place scan");
        free(got);
        return;
    }
    output = tc_buffer(ctx, d, n);
    tc_poison(ctx, output, d, n);
    CHECK_OK(gpuprim_scan(ctx, op, kind, input, output));
    got = tc_download(ctx, output, d, n);
    CHECK_SCAN(op, kind, d, x, got, n, "out-of-place scan");
    CHECK_BUFFER_EQ(ctx, input, d, x, n, "scan input after an out-of-place scan");
    if (tc_is_float(d) && op == GPUPRIM_OP_SUM && n > 1)
        check_scan_repeats(ctx, op, kind, d, input, output, got, n);
    free(got);
    CHECK_OK(gpuprim_buffer_destroy(ctx, output));
}

static void test_scan_all(gpuprim_context_t ctx) {
    size_t di, si, oi, ki;
    int p;
    for (di = 0; di < TC_DTYPE_COUNT; ++di) {
        gpuprim_dtype_t d = tc_all_dtypes[di];
        for (si = 0; si < SIZE_COUNT(d); ++si) {
            uint64_t n = SIZE_AT(si);
            if (n > tc_max_count()) continue;
            for (p = 0; p < TC_PATTERN_COUNT; ++p) {
                void *x;
                gpuprim_buffer_t input, scratch;
                int large = n > 100000;
                if (large && p != TC_MODERATE && p != TC_NAN_SPARSE && p != TC_SPECIAL) continue;
                x = tc_xmalloc(n * tc_size(d));
                tc_fill(d, x, n, (tc_pattern_t)p);
                input = tc_buffer_from(ctx, d, x, n);
                scratch = tc_buffer(ctx, d, n);
                for (oi = 0; oi < 3; ++oi) {
                    if (ops[oi] == GPUPRIM_OP_SUM && tc_is_float(d) &&
                        !tc_float_sum_ok_pattern((tc_pattern_t)p))
                        continue;
                    for (ki = 0; ki < 2; ++ki) {
                        tc_where("scan %s %s %s n=%llu pattern=%s",
                                 kinds[ki] == GPUPRIM_SCAN_INCLUSIVE ? "inclusive" : "exclusive",
                                 tc_op_name(ops[oi]), tc_dtype_name(d), (unsigned long long)n,
                                 tc_pattern_names[p]);
                        /* large inputs: inclusive out of place, exclusive in place */
                        if (!large || kinds[ki] == GPUPRIM_SCAN_INCLUSIVE)
                            run_scan(ctx, ops[oi], kinds[ki], d, input, x, n, 0);
                        if (!large || kinds[ki] == GPUPRIM_SCAN_EXCLUSIVE)
                            run_scan(ctx, ops[oi], kinds[ki], d, scratch, x, n, 1);
                    }
                }
                CHECK_OK(gpuprim_buffer_destroy(ctx, input));
                CHECK_OK(gpuprim_buffer_destroy(ctx, scratch));
                free(x);
            }
        }
    }
}

/* Input and output that do not start at aligned addresses: wrapped views at
 * element offsets 1..3 of two buffers (device memory on CUDA). */
static void test_scan_unaligned_views(gpuprim_context_t ctx) {
    static const uint64_t view_sizes[] = {1, 30, 1021, 65531};
    size_t di, si, oi, ki;
    uint64_t offset;
    for (di = 0; di < TC_DTYPE_COUNT; ++di) {
        gpuprim_dtype_t d = tc_all_dtypes[di];
        for (si = 0; si < sizeof view_sizes / sizeof view_sizes[0]; ++si) {
            uint64_t n = view_sizes[si] + 3;
            void *x = tc_xmalloc(n * tc_size(d));
            gpuprim_buffer_t in_base, out_base;
            tc_fill(d, x, n, TC_MODERATE);
            in_base = tc_buffer_from(ctx, d, x, n);
            out_base = tc_buffer(ctx, d, n);
            for (offset = 1; offset <= 3; ++offset) {
                uint64_t count = n - 3, out_offset = 3 - offset + 0;
                gpuprim_buffer_t in_view = tc_view(ctx, in_base, d, offset, count);
                gpuprim_buffer_t out_view = tc_view(ctx, out_base, d, out_offset, count);
                for (oi = 0; oi < 3; ++oi) {
                    for (ki = 0; ki < 2; ++ki) {
                        void *got;
                        tc_where("scan %s %s %s, input view at +%llu, output view at +%llu, n=%llu",
                                 kinds[ki] == GPUPRIM_SCAN_INCLUSIVE ? "inclusive" : "exclusive",
                                 tc_op_name(ops[oi]), tc_dtype_name(d), (unsigned long long)offset,
                                 (unsigned long long)out_offset, (unsigned long long)count);
                        tc_poison(ctx, out_view, d, count);
                        CHECK_OK(gpuprim_scan(ctx, ops[oi], kinds[ki], in_view, out_view));
                        got = tc_download(ctx, out_view, d, count);
                        CHECK_SCAN(ops[oi], kinds[ki], d, (const char *)x + offset * tc_size(d), got,
                                   count, "scan of views");
                        free(got);
                    }
                }
                CHECK_OK(gpuprim_buffer_destroy(ctx, in_view));
                CHECK_OK(gpuprim_buffer_destroy(ctx, out_view));
            }
            CHECK_OK(gpuprim_buffer_destroy(ctx, in_base));
            CHECK_OK(gpuprim_buffer_destroy(ctx, out_base));
            free(x);
        }
    }
}

/* Sum scans of about 190 MB: past the size where the CUDA backend switches to
 * its pipelined kernel (persistent blocks with several tiles in flight; ~76
 * MB on an H100), through views one element off alignment in and out, and
 * in place. Float sums are also repeated and compared bit for bit. narrow:
 * the 1- and 2-byte dtypes, else the 4- and 8-byte ones. */
static void test_scan_pipelined_sizes(gpuprim_context_t ctx, int narrow) {
    size_t di;
    /* The CPU backend has no pipelined kernel: there the 6 dtypes of 4 and 8
     * bytes run (as before the narrow dtypes came), the 6 narrow ones only on
     * CUDA, to keep the CPU suite quick. */
    if (narrow && !tc_backend_is_cuda(ctx)) return;
    for (di = 0; di < TC_DTYPE_COUNT; ++di) {
        gpuprim_dtype_t d = tc_all_dtypes[di];
        /* about 190 MB for 4 and 8-byte elements, 96 MB for 1 and 2-byte ones */
        const uint64_t n = tc_size(d) == 1 ? 96000011u : tc_size(d) == 2 ? 48000017u
                         : tc_size(d) == 4 ? 48000017u : 24000007u;
        void *x, *got;
        gpuprim_buffer_t in_base, out_base, in_view, out_view;
        if ((tc_size(d) <= 2) != (narrow != 0) || n + 1 > tc_max_count()) continue;
        x = tc_xmalloc((n + 1) * tc_size(d));
        tc_fill(d, x, n + 1, TC_MODERATE);
        in_base = tc_buffer_from(ctx, d, x, n + 1);
        out_base = tc_buffer(ctx, d, n + 1);
        in_view = tc_view(ctx, in_base, d, 1, n);
        out_view = tc_view(ctx, out_base, d, 1, n);

        tc_where("inclusive sum scan %s n=%llu, views at +1", tc_dtype_name(d), (unsigned long long)n);
        tc_poison(ctx, out_view, d, n);
        CHECK_OK(gpuprim_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, in_view, out_view));
        got = tc_download(ctx, out_view, d, n);
        CHECK_SCAN(GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, d, (const char *)x + tc_size(d), got, n,
                   "large inclusive sum scan of views");
        if (tc_is_float(d))
            check_scan_repeats(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, d, in_view, out_view, got, n);
        free(got);

        tc_where("exclusive sum scan %s n=%llu, in place", tc_dtype_name(d), (unsigned long long)n);
        CHECK_OK(gpuprim_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_EXCLUSIVE, in_base, in_base));
        got = tc_download(ctx, in_base, d, n + 1);
        CHECK_SCAN(GPUPRIM_OP_SUM, GPUPRIM_SCAN_EXCLUSIVE, d, x, got, n + 1, "large exclusive sum scan in place");
        free(got);

        CHECK_OK(gpuprim_buffer_destroy(ctx, in_view));
        CHECK_OK(gpuprim_buffer_destroy(ctx, out_view));
        CHECK_OK(gpuprim_buffer_destroy(ctx, in_base));
        CHECK_OK(gpuprim_buffer_destroy(ctx, out_base));
        free(x);
    }
}

static void test_scan_known_answers(gpuprim_context_t ctx) {
    int32_t x[5] = {3, -1, 4, INT32_MAX, 5};
    int32_t out[5];
    int32_t inclusive_sum[5] = {3, 2, 6, (int32_t)(6u + 2147483647u), (int32_t)(6u + 2147483647u + 5u)};
    int32_t exclusive_min[5] = {INT32_MAX, 3, -1, -1, -1};
    int32_t exclusive_max[5] = {INT32_MIN, 3, 3, 4, INT32_MAX};
    gpuprim_buffer_t in = tc_buffer_from(ctx, GPUPRIM_DTYPE_I32, x, 5);
    gpuprim_buffer_t o = tc_buffer(ctx, GPUPRIM_DTYPE_I32, 5);
    tc_where("scan known answers");
    CHECK_OK(gpuprim_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, in, o));
    CHECK_OK(gpuprim_buffer_download(ctx, o, 0, out, 5));
    CHECK_ARRAY_EQ(GPUPRIM_DTYPE_I32, out, inclusive_sum, 5, "inclusive sum {3,-1,4,INT32_MAX,5}");
    CHECK_OK(gpuprim_scan(ctx, GPUPRIM_OP_MIN, GPUPRIM_SCAN_EXCLUSIVE, in, o));
    CHECK_OK(gpuprim_buffer_download(ctx, o, 0, out, 5));
    CHECK_ARRAY_EQ(GPUPRIM_DTYPE_I32, out, exclusive_min, 5, "exclusive min");
    CHECK_OK(gpuprim_scan(ctx, GPUPRIM_OP_MAX, GPUPRIM_SCAN_EXCLUSIVE, in, o));
    CHECK_OK(gpuprim_buffer_download(ctx, o, 0, out, 5));
    CHECK_ARRAY_EQ(GPUPRIM_DTYPE_I32, out, exclusive_max, 5, "exclusive max");
    CHECK_OK(gpuprim_buffer_destroy(ctx, in));
    CHECK_OK(gpuprim_buffer_destroy(ctx, o));
    {
        /* float MIN/MAX scans: -0 < +0 and the NaN with the largest bits wins */
        uint32_t f[5] = {0x00000000u, 0x80000000u, 0x7FC00001u, 0x3F800000u, 0xFFC00000u};
        uint32_t inclusive_min[5] = {0x00000000u, 0x80000000u, 0x7FC00001u, 0x7FC00001u, 0xFFC00000u};
        uint32_t exclusive_max_f[5] = {0xFF800000u, 0x00000000u, 0x00000000u, 0x7FC00001u, 0x7FC00001u};
        uint32_t got[5];
        gpuprim_buffer_t b = tc_buffer_from(ctx, GPUPRIM_DTYPE_F32, f, 5);
        CHECK_OK(gpuprim_scan(ctx, GPUPRIM_OP_MIN, GPUPRIM_SCAN_INCLUSIVE, b, b));
        CHECK_OK(gpuprim_buffer_download(ctx, b, 0, got, 5));
        CHECK_ARRAY_EQ(GPUPRIM_DTYPE_F32, got, inclusive_min, 5, "f32 inclusive min with -0 and NaNs");
        CHECK_OK(gpuprim_buffer_upload(ctx, b, 0, f, 5));
        CHECK_OK(gpuprim_scan(ctx, GPUPRIM_OP_MAX, GPUPRIM_SCAN_EXCLUSIVE, b, b));
        CHECK_OK(gpuprim_buffer_download(ctx, b, 0, got, 5));
        CHECK_ARRAY_EQ(GPUPRIM_DTYPE_F32, got, exclusive_max_f, 5, "f32 exclusive max with -0 and NaNs");
        CHECK_OK(gpuprim_buffer_destroy(ctx, b));
    }
    {
        /* Float sum scans through NaNs of many payloads and both signs, over
         * many tiles: every prefix from the first NaN on is the canonical
         * quiet NaN, every prefix before it is a number. */
        const uint64_t n = 200003, first_nan = 70001;
        size_t t;
        for (t = 0; t < TC_FLOAT_DTYPE_COUNT; ++t) {
            gpuprim_dtype_t d = tc_float_dtypes[t];
            uint64_t canonical = tc_canonical_nan(d);
            uint64_t i, wrong = 0, first_wrong = 0;
            void *x = tc_xmalloc(n * tc_size(d)), *y;
            gpuprim_buffer_t b;
            for (i = 0; i < n; ++i) tc_set(d, x, i, tc_from_double(d, (double)(i % 7)));
            for (i = first_nan; i < n; i += 997) {
                uint64_t payload = tc_rand() | 1u; /* non-zero, so the pattern is a NaN */
                uint64_t nan = tc_inf_bits(d) | (payload & ((1ull << tc_mantissa_bits(d)) - 1)) |
                               ((payload >> 40 & 1) ? tc_sign_bit(d) : 0);
                tc_set(d, x, i, nan);
            }
            b = tc_buffer_from(ctx, d, x, n);
            tc_where("%s sum scan through NaNs", tc_dtype_name(d));
            CHECK_OK(gpuprim_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, b, b));
            y = tc_download(ctx, b, d, n);
            for (i = 0; i < n; ++i) {
                uint64_t bits = tc_get(d, y, i);
                int ok = i < first_nan ? !tc_isnan_bits(d, bits) : bits == canonical;
                if (!ok && wrong++ == 0) first_wrong = i;
            }
            CHECKF(wrong == 0, "%llu prefixes wrong; first at [%llu] = 0x%llx",
                   (unsigned long long)wrong, (unsigned long long)first_wrong,
                   (unsigned long long)tc_get(d, y, first_wrong));
            free(x);
            free(y);
            CHECK_OK(gpuprim_buffer_destroy(ctx, b));
        }
    }
}

/* scan of bits[0..n) of dtype d must be want[0..n) bit for bit, out of place and in place. */
static void expect_scan(gpuprim_context_t ctx, gpuprim_op_t op, gpuprim_scan_kind_t kind, gpuprim_dtype_t d,
                        const uint64_t *bits, const uint64_t *want_bits, uint64_t n, const char *what) {
    void *x = tc_xmalloc(n * tc_size(d)), *want = tc_xmalloc(n * tc_size(d)), *got;
    uint64_t i;
    gpuprim_buffer_t in, out;
    for (i = 0; i < n; ++i) {
        tc_set(d, x, i, bits[i]);
        tc_set(d, want, i, want_bits[i]);
    }
    tc_where("scan known answers: %s %s %s: %s", kind == GPUPRIM_SCAN_INCLUSIVE ? "inclusive" : "exclusive",
             tc_op_name(op), tc_dtype_name(d), what);
    in = tc_buffer_from(ctx, d, x, n);
    out = tc_buffer(ctx, d, n);
    tc_poison(ctx, out, d, n);
    CHECK_OK(gpuprim_scan(ctx, op, kind, in, out));
    got = tc_download(ctx, out, d, n);
    CHECK_ARRAY_EQ(d, got, want, n, what);
    free(got);
    CHECK_OK(gpuprim_scan(ctx, op, kind, in, in));
    got = tc_download(ctx, in, d, n);
    CHECK_ARRAY_EQ(d, got, want, n, what);
    free(got);
    CHECK_OK(gpuprim_buffer_destroy(ctx, in));
    CHECK_OK(gpuprim_buffer_destroy(ctx, out));
    free(x);
    free(want);
}

/* Float SUM scans of -0.0 (every float dtype; f16/bf16 accumulate in f32):
 * -0.0 + x == x, so an inclusive scan's out[0] is in[0] itself and a run of
 * -0.0 stays -0.0 (numpy's cumsum); an exclusive scan's element 0 is the
 * identity, +0.0. Sizes past the CPU's blocks and the kernels' tiles (the
 * CUDA narrow scan once gave +0.0 in some places and -0.0 in others), and
 * past the 256 tiles of its single pass (2^21 16-bit elements: its three
 * launches). */
static void test_scan_negative_zero(gpuprim_context_t ctx) {
    static const uint64_t sizes[4] = {1, 5, 200003, 2100003};
    size_t t, k;
    for (t = 0; t < TC_FLOAT_DTYPE_COUNT; ++t)
        for (k = 0; k < 4; ++k) {
            gpuprim_dtype_t d = tc_float_dtypes[t];
            const uint64_t n = sizes[k], minus_zero = tc_sign_bit(d);
            uint64_t *x = (uint64_t *)tc_xmalloc(n * sizeof *x), *inclusive = (uint64_t *)tc_xmalloc(n * sizeof *x),
                     *exclusive = (uint64_t *)tc_xmalloc(n * sizeof *x);
            uint64_t i;
            for (i = 0; i < n; ++i) x[i] = inclusive[i] = exclusive[i] = minus_zero;
            exclusive[0] = 0;
            expect_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, d, x, inclusive, n, "every element -0.0");
            expect_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_EXCLUSIVE, d, x, exclusive, n, "every element -0.0");
            if (n == 5) {
                /* -0, -0, +0, -0, -0: a +0.0 turns the sums to +0.0 */
                x[2] = 0;
                inclusive[2] = inclusive[3] = inclusive[4] = 0;
                exclusive[3] = exclusive[4] = 0;
                expect_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, d, x, inclusive, n, "-0 -0 +0 -0 -0");
                expect_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_EXCLUSIVE, d, x, exclusive, n, "-0 -0 +0 -0 -0");
            }
            free(x);
            free(inclusive);
            free(exclusive);
        }
}

static void test_scan_known_answers_narrow(gpuprim_context_t ctx) {
    {
        static const uint64_t i8_in[4] = {0x7F, 0x01, 0x01, 0xFE};
        static const uint64_t i8_inclusive[4] = {0x7F, 0x80, 0x81, 0x7F};
        static const uint64_t i8_exclusive[4] = {0x00, 0x7F, 0x80, 0x81};
        static const uint64_t i8_exclusive_min[4] = {0x7F, 0x7F, 0x01, 0x01};
        static const uint64_t i8_inclusive_max[4] = {0x7F, 0x7F, 0x7F, 0x7F};
        static const uint64_t u16_in[3] = {0xFFFF, 0x0001, 0x8000};
        static const uint64_t u16_inclusive[3] = {0xFFFF, 0x0000, 0x8000};
        static const uint64_t u16_exclusive_max[3] = {0x0000, 0xFFFF, 0xFFFF};
        static const uint64_t i16_in[3] = {0x8000, 0xFFFF, 0x7FFF};
        static const uint64_t i16_inclusive[3] = {0x8000, 0x7FFF, 0xFFFE};
        static const uint64_t i16_exclusive_min[3] = {0x7FFF, 0x8000, 0x8000};
        static const uint64_t u8_in[3] = {0xFF, 0xFF, 0x02};
        static const uint64_t u8_inclusive[3] = {0xFF, 0xFE, 0x00};
        static const uint64_t u8_exclusive_min[3] = {0xFF, 0xFF, 0xFF};
        expect_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, GPUPRIM_DTYPE_I8, i8_in, i8_inclusive, 4, "i8 wraps");
        expect_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_EXCLUSIVE, GPUPRIM_DTYPE_I8, i8_in, i8_exclusive, 4, "i8 wraps");
        expect_scan(ctx, GPUPRIM_OP_MIN, GPUPRIM_SCAN_EXCLUSIVE, GPUPRIM_DTYPE_I8, i8_in, i8_exclusive_min, 4, "i8 min");
        expect_scan(ctx, GPUPRIM_OP_MAX, GPUPRIM_SCAN_INCLUSIVE, GPUPRIM_DTYPE_I8, i8_in, i8_inclusive_max, 4, "i8 max");
        expect_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, GPUPRIM_DTYPE_U16, u16_in, u16_inclusive, 3, "u16 wraps");
        expect_scan(ctx, GPUPRIM_OP_MAX, GPUPRIM_SCAN_EXCLUSIVE, GPUPRIM_DTYPE_U16, u16_in, u16_exclusive_max, 3, "u16 max");
        expect_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, GPUPRIM_DTYPE_I16, i16_in, i16_inclusive, 3, "i16 wraps");
        expect_scan(ctx, GPUPRIM_OP_MIN, GPUPRIM_SCAN_EXCLUSIVE, GPUPRIM_DTYPE_I16, i16_in, i16_exclusive_min, 3, "i16 min");
        expect_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, GPUPRIM_DTYPE_U8, u8_in, u8_inclusive, 3, "u8 wraps");
        expect_scan(ctx, GPUPRIM_OP_MIN, GPUPRIM_SCAN_EXCLUSIVE, GPUPRIM_DTYPE_U8, u8_in, u8_exclusive_min, 3, "u8 min");
    }
    {
        /* f16/bf16 MIN/MAX scans: -0 < +0, the NaN with the largest bits wins, identities +-inf */
        static const uint64_t f16_in[5] = {0x0000, 0x8000, 0x7C01, 0x3C00, 0xFE00};
        static const uint64_t f16_inclusive_min[5] = {0x0000, 0x8000, 0x7C01, 0x7C01, 0xFE00};
        static const uint64_t f16_exclusive_max[5] = {0xFC00, 0x0000, 0x0000, 0x7C01, 0x7C01};
        static const uint64_t bf16_in[5] = {0x8000, 0x0000, 0xFF81, 0x7FC0, 0xFF80};
        static const uint64_t bf16_inclusive_max[5] = {0x8000, 0x0000, 0xFF81, 0xFF81, 0xFF81};
        static const uint64_t bf16_exclusive_min[5] = {0x7F80, 0x8000, 0x8000, 0xFF81, 0xFF81};
        expect_scan(ctx, GPUPRIM_OP_MIN, GPUPRIM_SCAN_INCLUSIVE, GPUPRIM_DTYPE_F16, f16_in, f16_inclusive_min, 5, "f16 min");
        expect_scan(ctx, GPUPRIM_OP_MAX, GPUPRIM_SCAN_EXCLUSIVE, GPUPRIM_DTYPE_F16, f16_in, f16_exclusive_max, 5, "f16 max");
        expect_scan(ctx, GPUPRIM_OP_MAX, GPUPRIM_SCAN_INCLUSIVE, GPUPRIM_DTYPE_BF16, bf16_in, bf16_inclusive_max, 5, "bf16 max");
        expect_scan(ctx, GPUPRIM_OP_MIN, GPUPRIM_SCAN_EXCLUSIVE, GPUPRIM_DTYPE_BF16, bf16_in, bf16_exclusive_min, 5, "bf16 min");
    }
    {
        /* f16/bf16 SUM scans of ones across many tiles: each output is the exact
         * prefix (exact in f32) rounded once, e.g. 2049 -> 2048, 2051 -> 2052, and
         * 65520 and up -> inf (f16); never a prefix accumulated in 16 bits. */
        static const gpuprim_dtype_t halves[2] = {GPUPRIM_DTYPE_F16, GPUPRIM_DTYPE_BF16};
        const uint64_t n = 70001;
        uint64_t *in = (uint64_t *)tc_xmalloc(n * sizeof *in), *inclusive = (uint64_t *)tc_xmalloc(n * sizeof *in),
                 *exclusive = (uint64_t *)tc_xmalloc(n * sizeof *in);
        size_t t;
        uint64_t i;
        for (t = 0; t < 4; ++t) {
            /* ones, then the least subnormal (k * 2^-24 for f16: exact in f32,
               ties to even in every binade from 2^-13 up) */
            gpuprim_dtype_t d = halves[t % 2];
            uint64_t unit = t < 2 ? tc_from_double(d, 1.0) : 0x0001;
            long double value = tc_value(d, unit);
            for (i = 0; i < n; ++i) {
                in[i] = unit;
                inclusive[i] = tc_round_half(d, (long double)(i + 1) * value);
                exclusive[i] = tc_round_half(d, (long double)i * value);
            }
            expect_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, d, in, inclusive, n,
                        t < 2 ? "prefix sums of ones" : "prefix sums of the least subnormal");
            expect_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_EXCLUSIVE, d, in, exclusive, n,
                        t < 2 ? "prefix sums of ones" : "prefix sums of the least subnormal");
        }
        free(in);
        free(inclusive);
        free(exclusive);
    }
}

/* Every bit pattern of the 1- and 2-byte dtypes (65536 or 256 values) in
 * random, ascending and descending sort order: MIN and MAX scans (each step
 * compares the running value with the next pattern: neighbours in the
 * documented order, so every pair of adjacent patterns meets), and SUM scans
 * for f16 and the integers (bf16's largest values overflow an f32 partial
 * sum, which the bound does not cover). */
static void test_scan_all_bit_patterns(gpuprim_context_t ctx) {
    static const gpuprim_dtype_t narrow[6] = {GPUPRIM_DTYPE_F16, GPUPRIM_DTYPE_BF16, GPUPRIM_DTYPE_I16,
                                              GPUPRIM_DTYPE_U16, GPUPRIM_DTYPE_I8, GPUPRIM_DTYPE_U8};
    size_t t, oi, ki;
    int arrangement;
    for (t = 0; t < 6; ++t) {
        gpuprim_dtype_t d = narrow[t];
        uint64_t n = (uint64_t)1 << tc_bits(d), i;
        void *x = tc_xmalloc(n * tc_size(d)), *tmp = tc_xmalloc(n * tc_size(d));
        uint64_t *perm = (uint64_t *)tc_xmalloc(n * sizeof *perm);
        gpuprim_buffer_t in, out;
        for (i = 0; i < n; ++i) tc_set(d, tmp, i, i);
        in = tc_buffer(ctx, d, n);
        out = tc_buffer(ctx, d, n);
        for (arrangement = 0; arrangement < 3; ++arrangement) {
            if (arrangement == 0) {
                memcpy(x, tmp, n * tc_size(d));
                for (i = n - 1; i > 0; --i) { /* Fisher-Yates */
                    uint64_t j = tc_below(i + 1), a = tc_get(d, x, i);
                    tc_set(d, x, i, tc_get(d, x, j));
                    tc_set(d, x, j, a);
                }
            } else {
                tc_reference_sort_permutation(d, tmp, n, arrangement == 2, perm);
                tc_permute(d, tmp, perm, n, x);
            }
            REQUIRE_OK(gpuprim_buffer_upload(ctx, in, 0, x, n));
            for (oi = 0; oi < 3; ++oi) {
                if (ops[oi] == GPUPRIM_OP_SUM && d == GPUPRIM_DTYPE_BF16) continue;
                for (ki = 0; ki < 2; ++ki) {
                    void *got;
                    tc_where("scan %s %s of all %llu %s bit patterns, %s", tc_op_name(ops[oi]),
                             kinds[ki] == GPUPRIM_SCAN_INCLUSIVE ? "inclusive" : "exclusive",
                             (unsigned long long)n, tc_dtype_name(d),
                             arrangement == 0 ? "shuffled" : arrangement == 1 ? "ascending" : "descending");
                    tc_poison(ctx, out, d, n);
                    CHECK_OK(gpuprim_scan(ctx, ops[oi], kinds[ki], in, out));
                    got = tc_download(ctx, out, d, n);
                    CHECK_SCAN(ops[oi], kinds[ki], d, x, got, n, "scan of all bit patterns");
                    free(got);
                }
            }
        }
        CHECK_OK(gpuprim_buffer_destroy(ctx, in));
        CHECK_OK(gpuprim_buffer_destroy(ctx, out));
        free(x);
        free(tmp);
        free(perm);
    }
}

int main(void) {
    gpuprim_context_t ctx = tc_init("test_scan");
    const char *only = getenv("GPUPRIM_TEST_ONLY");
    /* The narrow dtypes' pipelined sizes run on CUDA only: that section alone on the CPU is a skip, not a pass. */
    if (only && strcmp(only, "pipelined_narrow") == 0 && !tc_backend_is_cuda(ctx)) {
        tc.ctx = NULL;
        CHECK_OK(gpuprim_context_destroy(ctx));
        return tc_skip("test_scan.pipelined_narrow: skipped: the 1- and 2-byte dtypes' pipelined sizes run on the "
                       "CUDA backend only (this context runs on the CPU)");
    }
    if (tc_section("known_answers")) {
        test_scan_known_answers(ctx);
        test_scan_known_answers_narrow(ctx);
        test_scan_negative_zero(ctx);
    }
    if (tc_section("bit_patterns")) test_scan_all_bit_patterns(ctx);
    if (tc_section("all")) test_scan_all(ctx);
    if (tc_section("unaligned_views")) test_scan_unaligned_views(ctx);
    if (tc_section("pipelined_wide")) test_scan_pipelined_sizes(ctx, 0);
    if (tc_section("pipelined_narrow")) test_scan_pipelined_sizes(ctx, 1);
    return tc_finish();
}
