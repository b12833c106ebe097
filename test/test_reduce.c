/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpuprim_reduce / gpuprim_reduce_to_buffer (SUM, MIN, MAX x 6 dtypes) and
 * gpuprim_dot / gpuprim_dot_to_buffer against references computed here.
 */
#include "test_common.h"

static const uint64_t sizes[] = {0, 1, 2, 3, 31, 32, 33, 255, 1023, 1024, 1025, 4097, 65537, 1000003};
static const gpuprim_op_t ops[] = {GPUPRIM_OP_SUM, GPUPRIM_OP_MIN, GPUPRIM_OP_MAX};

typedef struct reference {
    uint64_t bits;      /* exact result (integers, MIN/MAX) */
    long double sum;    /* float SUM/DOT: exact-ish value */
    long double sumabs; /* float SUM/DOT: sum of |terms| */
    int is_float_sum;
} reference_t;

static reference_t reference_reduce(gpuprim_op_t op, gpuprim_dtype_t d, const void *x, uint64_t n) {
    reference_t r;
    uint64_t i;
    r.bits = tc_identity(op, d);
    r.sum = 0;
    r.sumabs = 0;
    r.is_float_sum = tc_is_float(d) && op == GPUPRIM_OP_SUM;
    for (i = 0; i < n; ++i) {
        uint64_t v = tc_get(d, x, i);
        if (r.is_float_sum) {
            long double value = tc_value(d, v);
            r.sum += value;
            r.sumabs += fabsl(value);
        } else {
            r.bits = tc_apply(op, d, r.bits, v);
        }
    }
    return r;
}

static reference_t reference_dot(gpuprim_dtype_t d, const void *a, const void *b, uint64_t n) {
    reference_t r;
    uint64_t i;
    r.bits = 0;
    r.sum = 0;
    r.sumabs = 0;
    r.is_float_sum = tc_is_float(d);
    for (i = 0; i < n; ++i) {
        uint64_t x = tc_get(d, a, i), y = tc_get(d, b, i);
        if (r.is_float_sum) {
            long double product = tc_value(d, x) * tc_value(d, y);
            r.sum += product;
            r.sumabs += fabsl(product);
        } else {
            r.bits = (r.bits + x * y) & tc_mask(d); /* wraps like the unsigned type */
        }
    }
    return r;
}

/* Checks got (bits of one element) against r. */
#define CHECK_RESULT(d, got, r, n, what) check_result(__FILE__, __LINE__, d, got, r, n, what)
static void check_result(const char *file, int line, gpuprim_dtype_t d, uint64_t got,
                         const reference_t *r, uint64_t n, const char *what) {
    char g[96], w[96];
    tc.checks++;
    if (r->is_float_sum) {
        /* The empty sum is the identity, +0.0 exactly. */
        if (n == 0 ? got != 0 : !tc_float_sum_ok(d, got, r->sum, r->sumabs, n))
            tc_fail(file, line, "%s: got %s, expected %.20Lg within %llu * eps * %.6Lg", what,
                    tc_format(d, got, g, sizeof g), r->sum, (unsigned long long)n, r->sumabs);
    } else if (got != r->bits) {
        tc_fail(file, line, "%s: got %s, expected %s", what, tc_format(d, got, g, sizeof g),
                tc_format(d, r->bits, w, sizeof w));
    }
}

/* Host-result reduce and to-buffer reduce of buffer `input` holding x[0..n). */
static void run_reduce(gpuprim_context_t ctx, gpuprim_op_t op, gpuprim_dtype_t d,
                       gpuprim_buffer_t input, const void *x, uint64_t n) {
    reference_t r = reference_reduce(op, d, x, n);
    unsigned char result[8];
    uint64_t poison = tc_poison_bits(d), got;
    gpuprim_buffer_t out = tc_buffer(ctx, d, 3);
    void *downloaded;

    /* host result */
    tc_set(d, result, 0, poison);
    CHECK_OK(gpuprim_reduce(ctx, op, input, result));
    got = tc_get(d, result, 0);
    CHECK_RESULT(d, got, &r, n, "gpuprim_reduce");

    /* float SUM is deterministic run to run */
    if (r.is_float_sum && n > 1) {
        tc_set(d, result, 0, poison);
        CHECK_OK(gpuprim_reduce(ctx, op, input, result));
        CHECKF(tc_get(d, result, 0) == got, "float sum not deterministic: 0x%llx then 0x%llx",
               (unsigned long long)got, (unsigned long long)tc_get(d, result, 0));
    }

    /* result in element 0 of a buffer of 3; elements 1 and 2 untouched */
    tc_poison(ctx, out, d, 3);
    CHECK_OK(gpuprim_reduce_to_buffer(ctx, op, input, out));
    downloaded = tc_download(ctx, out, d, 3);
    CHECK_RESULT(d, tc_get(d, downloaded, 0), &r, n, "gpuprim_reduce_to_buffer");
    CHECKF(tc_get(d, downloaded, 1) == ((poison ^ 1) & tc_mask(d)) &&
               tc_get(d, downloaded, 2) == ((poison ^ 2) & tc_mask(d)),
           "gpuprim_reduce_to_buffer wrote past element 0");
    free(downloaded);
    CHECK_OK(gpuprim_buffer_destroy(ctx, out));
}

static void run_dot(gpuprim_context_t ctx, gpuprim_dtype_t d, gpuprim_buffer_t a_buf,
                    gpuprim_buffer_t b_buf, const void *a, const void *b, uint64_t n) {
    reference_t r = reference_dot(d, a, b, n);
    unsigned char result[8];
    gpuprim_buffer_t out = tc_buffer(ctx, d, 2);
    void *downloaded;
    uint64_t got;

    tc_set(d, result, 0, tc_poison_bits(d));
    CHECK_OK(gpuprim_dot(ctx, a_buf, b_buf, result));
    got = tc_get(d, result, 0);
    CHECK_RESULT(d, got, &r, n, "gpuprim_dot");
    if (r.is_float_sum && n > 1) {
        CHECK_OK(gpuprim_dot(ctx, a_buf, b_buf, result));
        CHECKF(tc_get(d, result, 0) == got, "float dot not deterministic");
    }

    tc_poison(ctx, out, d, 2);
    CHECK_OK(gpuprim_dot_to_buffer(ctx, a_buf, b_buf, out));
    downloaded = tc_download(ctx, out, d, 2);
    CHECK_RESULT(d, tc_get(d, downloaded, 0), &r, n, "gpuprim_dot_to_buffer");
    CHECKF(tc_get(d, downloaded, 1) == ((tc_poison_bits(d) ^ 1) & tc_mask(d)),
           "gpuprim_dot_to_buffer wrote past element 0");
    free(downloaded);
    CHECK_OK(gpuprim_buffer_destroy(ctx, out));
}

static void test_reduce_all(gpuprim_context_t ctx) {
    size_t di, si, oi;
    int p;
    for (di = 0; di < 6; ++di) {
        gpuprim_dtype_t d = tc_all_dtypes[di];
        for (si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
            uint64_t n = sizes[si];
            if (n > tc_max_count()) continue;
            for (p = 0; p < TC_PATTERN_COUNT; ++p) {
                void *x, *after;
                gpuprim_buffer_t input;
                if (n > 100000 && p != TC_MODERATE && p != TC_RANDOM_BITS && p != TC_SPECIAL &&
                    p != TC_NAN_SPARSE && p != TC_SMALL_RANGE)
                    continue;
                x = tc_xmalloc(n * tc_size(d));
                tc_fill(d, x, n, (tc_pattern_t)p);
                input = tc_buffer_from(ctx, d, x, n);
                for (oi = 0; oi < 3; ++oi) {
                    if (ops[oi] == GPUPRIM_OP_SUM && tc_is_float(d) &&
                        !tc_float_sum_ok_pattern((tc_pattern_t)p))
                        continue;
                    tc_where("reduce %s %s n=%llu pattern=%s", tc_op_name(ops[oi]), tc_dtype_name(d),
                             (unsigned long long)n, tc_pattern_names[p]);
                    run_reduce(ctx, ops[oi], d, input, x, n);
                }
                /* the input is left as it was */
                after = tc_download(ctx, input, d, n);
                CHECK_ARRAY_EQ(d, after, x, n, "reduce input after the reduces");
                free(after);
                CHECK_OK(gpuprim_buffer_destroy(ctx, input));
                free(x);
            }
        }
    }
}

/* Inputs that do not start at an aligned address: wrapped views of a buffer
 * at element offsets 1..3 (device memory on CUDA, host memory on CPU). */
static void test_reduce_unaligned_views(gpuprim_context_t ctx) {
    static const uint64_t view_sizes[] = {1, 30, 1021, 65531};
    size_t di, si, oi;
    uint64_t offset;
    for (di = 0; di < 6; ++di) {
        gpuprim_dtype_t d = tc_all_dtypes[di];
        for (si = 0; si < sizeof view_sizes / sizeof view_sizes[0]; ++si) {
            uint64_t n = view_sizes[si] + 3;
            void *x = tc_xmalloc(n * tc_size(d));
            gpuprim_buffer_t base;
            tc_fill(d, x, n, TC_MODERATE);
            base = tc_buffer_from(ctx, d, x, n);
            for (offset = 1; offset <= 3; ++offset) {
                uint64_t count = n - offset - (offset == 2 ? 1 : 0);
                gpuprim_buffer_t view = tc_view(ctx, base, d, offset, count);
                for (oi = 0; oi < 3; ++oi) {
                    tc_where("reduce %s %s view at +%llu, n=%llu", tc_op_name(ops[oi]), tc_dtype_name(d),
                             (unsigned long long)offset, (unsigned long long)count);
                    run_reduce(ctx, ops[oi], d, view, (const char *)x + offset * tc_size(d), count);
                }
                CHECK_OK(gpuprim_buffer_destroy(ctx, view));
            }
            CHECK_OK(gpuprim_buffer_destroy(ctx, base));
            free(x);
        }
    }
}

/* A few hand-made cases whose answers are spelled out. */
static void test_reduce_known_answers(gpuprim_context_t ctx) {
    {
        /* -0.0 < +0.0 for MIN/MAX, in either order. */
        float zeros[2] = {0.0f, -0.0f};
        float result = 1.0f;
        uint32_t bits;
        gpuprim_buffer_t b = tc_buffer_from(ctx, GPUPRIM_DTYPE_F32, zeros, 2);
        tc_where("known answers: f32 zeros");
        CHECK_OK(gpuprim_reduce(ctx, GPUPRIM_OP_MIN, b, &result));
        memcpy(&bits, &result, 4);
        CHECKF(bits == 0x80000000u, "min(+0, -0) = 0x%08x, expected -0 (0x80000000)", bits);
        CHECK_OK(gpuprim_reduce(ctx, GPUPRIM_OP_MAX, b, &result));
        memcpy(&bits, &result, 4);
        CHECKF(bits == 0x00000000u, "max(+0, -0) = 0x%08x, expected +0", bits);
        CHECK_OK(gpuprim_buffer_destroy(ctx, b));
    }
    {
        /* Several NaNs: the largest bit pattern wins, for MIN and MAX alike. */
        uint64_t values[5] = {0x3FF0000000000000ull, 0x7FF8000000000001ull, 0xFFF0000000000002ull,
                              0x7FF0000000000005ull, 0xFFF0000000000000ull};
        uint64_t result = 0;
        gpuprim_buffer_t b = tc_buffer_from(ctx, GPUPRIM_DTYPE_F64, values, 5);
        tc_where("known answers: f64 NaNs");
        CHECK_OK(gpuprim_reduce(ctx, GPUPRIM_OP_MIN, b, &result));
        CHECKF(result == 0xFFF0000000000002ull, "min with NaNs = 0x%016llx", (unsigned long long)result);
        CHECK_OK(gpuprim_reduce(ctx, GPUPRIM_OP_MAX, b, &result));
        CHECKF(result == 0xFFF0000000000002ull, "max with NaNs = 0x%016llx", (unsigned long long)result);
        /* A NaN sum or dot is the canonical quiet NaN, whatever the payloads. */
        CHECK_OK(gpuprim_reduce(ctx, GPUPRIM_OP_SUM, b, &result));
        CHECKF(result == 0x7FF8000000000000ull, "sum with NaNs = 0x%016llx, expected the canonical NaN",
               (unsigned long long)result);
        CHECK_OK(gpuprim_dot(ctx, b, b, &result));
        CHECKF(result == 0x7FF8000000000000ull, "dot with NaNs = 0x%016llx, expected the canonical NaN",
               (unsigned long long)result);
        CHECK_OK(gpuprim_buffer_destroy(ctx, b));
    }
    {
        /* Signed sums wrap like unsigned: INT32_MAX + 1 = INT32_MIN. */
        int32_t values[2] = {INT32_MAX, 1};
        int32_t result = 0;
        gpuprim_buffer_t b = tc_buffer_from(ctx, GPUPRIM_DTYPE_I32, values, 2);
        tc_where("known answers: i32 wrap");
        CHECK_OK(gpuprim_reduce(ctx, GPUPRIM_OP_SUM, b, &result));
        CHECKF(result == INT32_MIN, "INT32_MAX + 1 = %d", (int)result);
        CHECK_OK(gpuprim_buffer_destroy(ctx, b));
    }
    {
        /* +inf + -inf = NaN; 1 + inf = inf. */
        float values[3] = {1.0f, HUGE_VALF, -HUGE_VALF};
        float result = 0;
        gpuprim_buffer_t b = tc_buffer_from(ctx, GPUPRIM_DTYPE_F32, values, 3);
        tc_where("known answers: f32 infinities");
        CHECK_OK(gpuprim_reduce(ctx, GPUPRIM_OP_SUM, b, &result));
        {
            uint32_t bits;
            memcpy(&bits, &result, 4);
            CHECKF(bits == 0x7FC00000u, "1 + inf - inf = 0x%08x, expected the canonical NaN", bits);
        }
        CHECK_OK(gpuprim_buffer_destroy(ctx, b));
        b = tc_buffer_from(ctx, GPUPRIM_DTYPE_F32, values, 2);
        CHECK_OK(gpuprim_reduce(ctx, GPUPRIM_OP_SUM, b, &result));
        CHECKF(isinf(result) && result > 0, "1 + inf = %g", (double)result);
        CHECK_OK(gpuprim_buffer_destroy(ctx, b));
    }
}

static void test_dot_all(gpuprim_context_t ctx) {
    static const tc_pattern_t patterns[] = {TC_MODERATE, TC_RANDOM_BITS, TC_EQUAL, TC_ZEROS,
                                            TC_SMALL_RANGE, TC_NAN_SPARSE, TC_INF_SPARSE};
    size_t di, si, pi;
    for (di = 0; di < 6; ++di) {
        gpuprim_dtype_t d = tc_all_dtypes[di];
        for (si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
            uint64_t n = sizes[si];
            if (n > tc_max_count()) continue;
            for (pi = 0; pi < sizeof patterns / sizeof patterns[0]; ++pi) {
                tc_pattern_t p = patterns[pi];
                void *a, *b;
                gpuprim_buffer_t a_buf, b_buf;
                if (tc_is_float(d) && p == TC_RANDOM_BITS) continue; /* products overflow */
                if (n > 100000 && p != TC_MODERATE && p != TC_NAN_SPARSE) continue;
                a = tc_xmalloc(n * tc_size(d));
                b = tc_xmalloc(n * tc_size(d));
                tc_fill(d, a, n, p);
                tc_fill(d, b, n, p == TC_INF_SPARSE ? TC_MODERATE : p);
                a_buf = tc_buffer_from(ctx, d, a, n);
                b_buf = tc_buffer_from(ctx, d, b, n);
                tc_where("dot %s n=%llu pattern=%s", tc_dtype_name(d), (unsigned long long)n,
                         tc_pattern_names[p]);
                run_dot(ctx, d, a_buf, b_buf, a, b, n);
                /* the same buffer on both sides is allowed: a sum of squares */
                tc_where("dot %s n=%llu pattern=%s, a with itself", tc_dtype_name(d),
                         (unsigned long long)n, tc_pattern_names[p]);
                run_dot(ctx, d, a_buf, a_buf, a, a, n);
                CHECK_OK(gpuprim_buffer_destroy(ctx, a_buf));
                CHECK_OK(gpuprim_buffer_destroy(ctx, b_buf));
                free(a);
                free(b);
            }
        }
    }
}

int main(void) {
    gpuprim_context_t ctx = tc_init("test_reduce");
    test_reduce_known_answers(ctx);
    test_reduce_all(ctx);
    test_reduce_unaligned_views(ctx);
    test_dot_all(ctx);
    return tc_finish();
}
