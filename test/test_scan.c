/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpuprim_scan: inclusive/exclusive x SUM/MIN/MAX x 6 dtypes, in place and
 * out of place, against references computed here.
 */
#include "test_common.h"

static const uint64_t sizes[] = {0, 1, 2, 3, 31, 32, 33, 255, 1023, 1024, 1025, 4097, 65537, 1000003};
static const gpuprim_op_t ops[] = {GPUPRIM_OP_SUM, GPUPRIM_OP_MIN, GPUPRIM_OP_MAX};
static const gpuprim_scan_kind_t kinds[] = {GPUPRIM_SCAN_INCLUSIVE, GPUPRIM_SCAN_EXCLUSIVE};

/* Checks got[0..n) as the scan of x[0..n). Returns 1 if all elements are right. */
#define CHECK_SCAN(op, kind, d, x, got, n, what) check_scan(__FILE__, __LINE__, op, kind, d, x, got, n, what)
static int check_scan(const char *file, int line, gpuprim_op_t op, gpuprim_scan_kind_t kind,
                      gpuprim_dtype_t d, const void *x, const void *got, uint64_t n, const char *what) {
    int float_sum = tc_is_float(d) && op == GPUPRIM_OP_SUM;
    uint64_t acc = tc_identity(op, d), i, bad = 0, first = 0, first_want = 0;
    long double sum = 0, sumabs = 0, first_sum = 0, first_sumabs = 0;
    tc.checks++;
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
            ok = terms == 0 ? g == 0 /* the identity, +0.0 */ : tc_float_sum_ok(d, g, sum, sumabs, terms);
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
    void *again;
    tc_poison(ctx, output, d, n);
    CHECK_OK(gpuprim_scan(ctx, op, kind, input, output));
    again = tc_download(ctx, output, d, n);
    CHECK_ARRAY_EQ(d, again, first, n, "float sum scan, second run vs first");
    free(again);
}

static void run_scan(gpuprim_context_t ctx, gpuprim_op_t op, gpuprim_scan_kind_t kind,
                     gpuprim_dtype_t d, gpuprim_buffer_t input, const void *x, uint64_t n,
                     int in_place) {
    void *got, *after;
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
    after = tc_download(ctx, input, d, n);
    CHECK_ARRAY_EQ(d, after, x, n, "scan input after an out-of-place scan");
    free(after);
    if (tc_is_float(d) && op == GPUPRIM_OP_SUM && n > 1)
        check_scan_repeats(ctx, op, kind, d, input, output, got, n);
    free(got);
    CHECK_OK(gpuprim_buffer_destroy(ctx, output));
}

static void test_scan_all(gpuprim_context_t ctx) {
    size_t di, si, oi, ki;
    int p;
    for (di = 0; di < 6; ++di) {
        gpuprim_dtype_t d = tc_all_dtypes[di];
        for (si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
            uint64_t n = sizes[si];
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
    for (di = 0; di < 6; ++di) {
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
 * in place. Float sums are also repeated and compared bit for bit. */
static void test_scan_pipelined_sizes(gpuprim_context_t ctx) {
    size_t di;
    for (di = 0; di < 6; ++di) {
        gpuprim_dtype_t d = tc_all_dtypes[di];
        const uint64_t n = tc_size(d) == 4 ? 48000017u : 24000007u;
        void *x, *got;
        gpuprim_buffer_t in_base, out_base, in_view, out_view;
        if (n + 1 > tc_max_count()) continue;
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
        static const gpuprim_dtype_t float_types[2] = {GPUPRIM_DTYPE_F32, GPUPRIM_DTYPE_F64};
        const uint64_t n = 200003, first_nan = 70001;
        size_t t;
        for (t = 0; t < 2; ++t) {
            gpuprim_dtype_t d = float_types[t];
            uint64_t canonical = d == GPUPRIM_DTYPE_F32 ? 0x7FC00000ull : 0x7FF8000000000000ull;
            uint64_t i, wrong = 0, first_wrong = 0;
            void *x = tc_xmalloc(n * tc_size(d)), *y;
            gpuprim_buffer_t b;
            for (i = 0; i < n; ++i) tc_set(d, x, i, tc_from_double(d, (double)(i % 7)));
            for (i = first_nan; i < n; i += 997) {
                uint64_t payload = tc_rand() | 1u; /* non-zero, so the pattern is a NaN */
                uint64_t nan = d == GPUPRIM_DTYPE_F32
                                   ? 0x7F800000ull | (payload & 0x7FFFFFull) | ((payload >> 40 & 1) << 31)
                                   : 0x7FF0000000000000ull | (payload & 0xFFFFFFFFFFFFFull) |
                                         ((payload >> 60 & 1) << 63);
                tc_set(d, x, i, nan);
            }
            b = tc_buffer_from(ctx, d, x, n);
            tc_where(d == GPUPRIM_DTYPE_F32 ? "f32 sum scan through NaNs" : "f64 sum scan through NaNs");
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

int main(void) {
    gpuprim_context_t ctx = tc_init("test_scan");
    test_scan_known_answers(ctx);
    test_scan_all(ctx);
    test_scan_unaligned_views(ctx);
    test_scan_pipelined_sizes(ctx);
    return tc_finish();
}
