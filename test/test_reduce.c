/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpuprim_reduce / gpuprim_reduce_to_buffer (SUM, MIN, MAX x 12 dtypes) and
 * gpuprim_dot / gpuprim_dot_to_buffer against references computed here.
 * Integers (narrow ones wrap mod 2^8 / 2^16) and MIN/MAX bit for bit; f32/f64
 * sums within n * eps * sum|x|; f16/bf16 sums between the roundings of
 * exact +- n * 2^-24 * sum|x| (any f32 accumulation order, rounded once),
 * and exactly the rounded exact sum when every partial sum is exact in f32.
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

typedef struct reference {
    uint64_t bits;      /* exact result (integers, MIN/MAX) */
    long double sum;    /* float SUM/DOT: exact-ish value */
    long double sumabs; /* float SUM/DOT: sum of |terms| */
    int is_float_sum;
    int min_exponent;   /* float SUM/DOT: the least tc_lowest_bit_exponent of the terms */
} reference_t;

static reference_t reference_reduce(gpuprim_op_t op, gpuprim_dtype_t d, const void *x, uint64_t n) {
    reference_t r;
    uint64_t i;
    r.bits = tc_identity(op, d);
    r.sum = 0;
    r.sumabs = 0;
    r.is_float_sum = tc_is_float(d) && op == GPUPRIM_OP_SUM;
    r.min_exponent = INT_MAX;
    for (i = 0; i < n; ++i) {
        uint64_t v = tc_get(d, x, i);
        if (r.is_float_sum) {
            long double value = tc_value(d, v);
            int e = tc_lowest_bit_exponent(value);
            if (e < r.min_exponent) r.min_exponent = e;
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
    r.min_exponent = INT_MAX;
    for (i = 0; i < n; ++i) {
        uint64_t x = tc_get(d, a, i), y = tc_get(d, b, i);
        if (r.is_float_sum) {
            long double product = tc_value(d, x) * tc_value(d, y);
            int e = tc_lowest_bit_exponent(product);
            if (e < r.min_exponent) r.min_exponent = e;
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
        int exact = tc_is_half(d) && tc_sum_exact_in_f32(r->min_exponent, r->sumabs);
        if (n == 0 ? got != 0 : !tc_float_sum_ok_exact(d, got, r->sum, r->sumabs, n, exact))
            tc_fail(file, line, "%s: got %s, expected %.20Lg within %llu * eps * %.6Lg%s", what,
                    tc_format(d, got, g, sizeof g), r->sum, (unsigned long long)n, r->sumabs,
                    exact ? " (exact in f32: the rounded exact sum)" : "");
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
    for (di = 0; di < TC_DTYPE_COUNT; ++di) {
        gpuprim_dtype_t d = tc_all_dtypes[di];
        for (si = 0; si < SIZE_COUNT(d); ++si) {
            uint64_t n = SIZE_AT(si);
            if (n > tc_max_count()) continue;
            for (p = 0; p < TC_PATTERN_COUNT; ++p) {
                void *x;
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
                CHECK_BUFFER_EQ(ctx, input, d, x, n, "reduce input after the reduces");
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
    for (di = 0; di < TC_DTYPE_COUNT; ++di) {
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

/* One extreme value among ordinary ones, at the front, the middle or the
 * back, for sizes around the vector widths (the CPU backend's vectorized
 * folds and their tails), the 512-element leaves and the threads' pieces
 * (2^15 and up): MIN and MAX must pick it by the header's rules. Integers:
 * the type's lowest and highest, 0 and -1. Floats: every special of
 * test_common.h (NaNs of both signs and several payloads, +-0, +-inf,
 * subnormals), each with a second special elsewhere (two NaNs, a NaN and
 * -0, ...). */
static void test_reduce_extreme_positions(gpuprim_context_t ctx) {
    static const uint64_t sizes[] = {1,  2,  3,   7,   8,   9,     15,    16,    17,          31,    32,
                                     33, 63, 511, 513, 4097, 16385, 32769, 65543, 300007};
    size_t di, si, vi, pi, oi;
    for (di = 0; di < TC_DTYPE_COUNT; ++di) {
        const gpuprim_dtype_t d = tc_all_dtypes[di];
        const int is_float = tc_is_float(d);
        uint64_t values[TC_FLOAT_SPECIAL_COUNT];
        size_t value_count;
        if (is_float) {
            memcpy(values, tc_float_specials(d), sizeof values);
            value_count = TC_FLOAT_SPECIAL_COUNT;
        } else {
            values[0] = tc_identity(GPUPRIM_OP_MIN, d); /* highest */
            values[1] = tc_identity(GPUPRIM_OP_MAX, d); /* lowest */
            values[2] = 0;
            values[3] = tc_mask(d); /* -1 */
            value_count = 4;
        }
        for (si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
            const uint64_t n = sizes[si];
            void *base, *x;
            gpuprim_buffer_t input;
            if (n > tc_max_count()) continue;
            base = tc_xmalloc(n * tc_size(d));
            x = tc_xmalloc(n * tc_size(d));
            tc_fill(d, base, n, TC_MODERATE);
            input = tc_buffer(ctx, d, n);
            for (vi = 0; vi < value_count; ++vi)
                for (pi = 0; pi < 3; ++pi) {
                    const uint64_t at = pi == 0 ? 0 : pi == 1 ? n / 2 : n - 1;
                    memcpy(x, base, n * tc_size(d));
                    tc_set(d, x, at, values[vi]);
                    if (is_float && n > 2) tc_set(d, x, (at + n / 3 + 1) % n, values[(vi + 7) % value_count]);
                    REQUIRE_OK(gpuprim_buffer_upload(ctx, input, 0, x, n));
                    for (oi = 1; oi < 3; ++oi) {
                        tc_where("reduce %s %s n=%llu, special 0x%llx at %llu", tc_op_name(ops[oi]),
                                 tc_dtype_name(d), (unsigned long long)n, (unsigned long long)values[vi],
                                 (unsigned long long)at);
                        run_reduce(ctx, ops[oi], d, input, x, n);
                    }
                }
            CHECK_OK(gpuprim_buffer_destroy(ctx, input));
            free(base);
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

/* reduce(op) of the given bits of dtype d must be want (bit for bit). */
static void expect_reduce(gpuprim_context_t ctx, gpuprim_op_t op, gpuprim_dtype_t d, const uint64_t *bits,
                          uint64_t n, uint64_t want, const char *what) {
    void *x = tc_xmalloc(n * tc_size(d));
    unsigned char result[8];
    uint64_t i, got;
    char g[96], w[96];
    gpuprim_buffer_t b;
    for (i = 0; i < n; ++i) tc_set(d, x, i, bits[i]);
    b = tc_buffer_from(ctx, d, x, n);
    tc_where("known answers: %s %s: %s", tc_op_name(op), tc_dtype_name(d), what);
    tc_set(d, result, 0, tc_poison_bits(d));
    CHECK_OK(gpuprim_reduce(ctx, op, b, result));
    got = tc_get(d, result, 0);
    CHECKF(got == want, "%s: got %s, expected %s", what, tc_format(d, got, g, sizeof g),
           tc_format(d, want, w, sizeof w));
    CHECK_OK(gpuprim_buffer_destroy(ctx, b));
    free(x);
}

/* n copies of one value: SUM must be the exact n * value rounded once (f32
 * accumulation is exact for these), dot with itself n * value^2. */
static void expect_repeated_sum(gpuprim_context_t ctx, gpuprim_dtype_t d, uint64_t value_bits, uint64_t n,
                                uint64_t want_sum, uint64_t want_dot) {
    void *x = tc_xmalloc(n * tc_size(d));
    unsigned char result[8];
    uint64_t i, got;
    char g[96], w[96];
    gpuprim_buffer_t b;
    for (i = 0; i < n; ++i) tc_set(d, x, i, value_bits);
    b = tc_buffer_from(ctx, d, x, n);
    tc_where("known answers: %s sum of %llu x 0x%llx", tc_dtype_name(d), (unsigned long long)n,
             (unsigned long long)value_bits);
    tc_set(d, result, 0, tc_poison_bits(d));
    CHECK_OK(gpuprim_reduce(ctx, GPUPRIM_OP_SUM, b, result));
    got = tc_get(d, result, 0);
    CHECKF(got == want_sum, "sum: got %s, expected %s", tc_format(d, got, g, sizeof g),
           tc_format(d, want_sum, w, sizeof w));
    tc_set(d, result, 0, tc_poison_bits(d));
    CHECK_OK(gpuprim_dot(ctx, b, b, result));
    got = tc_get(d, result, 0);
    CHECKF(got == want_dot, "dot: got %s, expected %s", tc_format(d, got, g, sizeof g),
           tc_format(d, want_dot, w, sizeof w));
    CHECK_OK(gpuprim_buffer_destroy(ctx, b));
    free(x);
}

/* The new dtypes: narrow integers wrap; f16/bf16 accumulate in f32 and round
 * once to nearest even (a sum in the 16-bit format would stall: 2048 + 1 is
 * 2048 in f16, so 4097 ones would give 2048); canonical NaNs; MIN/MAX rules. */
static void test_reduce_known_answers_narrow(gpuprim_context_t ctx) {
    {
        static const uint64_t i8_max_plus_one[2] = {0x7F, 0x01};
        static const uint64_t u8_wrap[3] = {200, 100, 250};
        static const uint64_t i16_wrap[2] = {0x7FFF, 0x0001};
        static const uint64_t u16_wrap[3] = {0xFFFF, 0x0002, 0xFFFF};
        static const uint64_t i8_minmax[5] = {0x05, 0x80, 0x7F, 0xFF, 0x00};
        static const uint64_t u16_minmax[4] = {0x8000, 0xFFFF, 0x0000, 0x7FFF};
        static const uint64_t i16_minmax[4] = {0x8000, 0xFFFF, 0x0000, 0x7FFF};
        expect_reduce(ctx, GPUPRIM_OP_SUM, GPUPRIM_DTYPE_I8, i8_max_plus_one, 2, 0x80, "127 + 1 = -128");
        expect_reduce(ctx, GPUPRIM_OP_SUM, GPUPRIM_DTYPE_U8, u8_wrap, 3, (550u & 0xFF), "200 + 100 + 250 mod 256");
        expect_reduce(ctx, GPUPRIM_OP_SUM, GPUPRIM_DTYPE_I16, i16_wrap, 2, 0x8000, "32767 + 1 = -32768");
        expect_reduce(ctx, GPUPRIM_OP_SUM, GPUPRIM_DTYPE_U16, u16_wrap, 3, 0x0000, "65535 + 2 + 65535 mod 65536");
        expect_reduce(ctx, GPUPRIM_OP_MIN, GPUPRIM_DTYPE_I8, i8_minmax, 5, 0x80, "i8 min -128");
        expect_reduce(ctx, GPUPRIM_OP_MAX, GPUPRIM_DTYPE_I8, i8_minmax, 5, 0x7F, "i8 max 127");
        expect_reduce(ctx, GPUPRIM_OP_MIN, GPUPRIM_DTYPE_U16, u16_minmax, 4, 0x0000, "u16 min");
        expect_reduce(ctx, GPUPRIM_OP_MAX, GPUPRIM_DTYPE_U16, u16_minmax, 4, 0xFFFF, "u16 max");
        expect_reduce(ctx, GPUPRIM_OP_MIN, GPUPRIM_DTYPE_I16, i16_minmax, 4, 0x8000, "i16 min");
        expect_reduce(ctx, GPUPRIM_OP_MAX, GPUPRIM_DTYPE_I16, i16_minmax, 4, 0x7FFF, "i16 max");
        /* identities of the empty reduce */
        expect_reduce(ctx, GPUPRIM_OP_MIN, GPUPRIM_DTYPE_I8, NULL, 0, 0x7F, "empty i8 min");
        expect_reduce(ctx, GPUPRIM_OP_MAX, GPUPRIM_DTYPE_I8, NULL, 0, 0x80, "empty i8 max");
        expect_reduce(ctx, GPUPRIM_OP_MIN, GPUPRIM_DTYPE_U8, NULL, 0, 0xFF, "empty u8 min");
        expect_reduce(ctx, GPUPRIM_OP_MAX, GPUPRIM_DTYPE_U16, NULL, 0, 0x0000, "empty u16 max");
        expect_reduce(ctx, GPUPRIM_OP_MIN, GPUPRIM_DTYPE_F16, NULL, 0, 0x7C00, "empty f16 min = +inf");
        expect_reduce(ctx, GPUPRIM_OP_MAX, GPUPRIM_DTYPE_F16, NULL, 0, 0xFC00, "empty f16 max = -inf");
        expect_reduce(ctx, GPUPRIM_OP_MIN, GPUPRIM_DTYPE_BF16, NULL, 0, 0x7F80, "empty bf16 min = +inf");
        expect_reduce(ctx, GPUPRIM_OP_MAX, GPUPRIM_DTYPE_BF16, NULL, 0, 0xFF80, "empty bf16 max = -inf");
        expect_reduce(ctx, GPUPRIM_OP_SUM, GPUPRIM_DTYPE_BF16, NULL, 0, 0x0000, "empty bf16 sum = +0");
    }
    {
        /* sums accumulate in f32 and round once: n ones */
        expect_repeated_sum(ctx, GPUPRIM_DTYPE_F16, 0x3C00, 2049, 0x6800, 0x6800);  /* 2049 -> 2048 (tie, even) */
        expect_repeated_sum(ctx, GPUPRIM_DTYPE_F16, 0x3C00, 4097, 0x6C00, 0x6C00);  /* 4097 -> 4096 */
        expect_repeated_sum(ctx, GPUPRIM_DTYPE_F16, 0x3C00, 3001, tc_from_double(GPUPRIM_DTYPE_F16, 3001.0),
                            tc_from_double(GPUPRIM_DTYPE_F16, 3001.0));
        expect_repeated_sum(ctx, GPUPRIM_DTYPE_F16, 0x3C00, 65519, 0x7BFF, 0x7BFF); /* 65519 -> 65504 (max) */
        expect_repeated_sum(ctx, GPUPRIM_DTYPE_F16, 0x3C00, 65520, 0x7C00, 0x7C00); /* 65520 -> inf */
        expect_repeated_sum(ctx, GPUPRIM_DTYPE_F16, 0xBC00, 70001, 0xFC00, 0x7C00); /* -70001 -> -inf; dot +70001 -> +inf */
        expect_repeated_sum(ctx, GPUPRIM_DTYPE_BF16, 0x3F80, 257, 0x4380, 0x4380);  /* 257 -> 256 */
        expect_repeated_sum(ctx, GPUPRIM_DTYPE_BF16, 0x3F80, 1000, 0x447A, 0x447A); /* exact */
        expect_repeated_sum(ctx, GPUPRIM_DTYPE_BF16, 0x3F80, 100003, tc_from_double(GPUPRIM_DTYPE_BF16, 100003.0),
                            tc_from_double(GPUPRIM_DTYPE_BF16, 100003.0));
        /* 2^-24 (the least f16 subnormal) 1024 times: 2^-14, the least normal */
        expect_repeated_sum(ctx, GPUPRIM_DTYPE_F16, 0x0001, 1024, 0x0400, 0x0000 /* 2^-48 per term: 0 */);
        /* i8/u16 repeated: wrap */
        expect_repeated_sum(ctx, GPUPRIM_DTYPE_I8, 0x10, 17, (17u * 16u) & 0xFF, (17u * 256u) & 0xFF);
        expect_repeated_sum(ctx, GPUPRIM_DTYPE_U16, 0x0100, 300, (300u * 256u) & 0xFFFF, 0);
        expect_repeated_sum(ctx, GPUPRIM_DTYPE_I16, 0xFFFF, 40000, (uint64_t)(-40000 & 0xFFFF), 40000u & 0xFFFF);
        expect_repeated_sum(ctx, GPUPRIM_DTYPE_U8, 0xFF, 1000003, (1000003u * 255u) & 0xFF, 1000003u & 0xFF);
    }
    {
        /* ties to even in the final rounding: 2048 + 1 -> 2048, 2048 + 3 -> 2052 */
        static const uint64_t tie_down[2] = {0x6800, 0x3C00};
        static const uint64_t tie_up[2] = {0x6800, 0x4200};
        static const uint64_t bf_tie[2] = {0x4380, 0x3F80}; /* 256 + 1 -> 256 */
        static const uint64_t bf_tie_up[2] = {0x4380, 0x4040}; /* 256 + 3 -> 260 */
        expect_reduce(ctx, GPUPRIM_OP_SUM, GPUPRIM_DTYPE_F16, tie_down, 2, 0x6800, "f16 2048 + 1");
        expect_reduce(ctx, GPUPRIM_OP_SUM, GPUPRIM_DTYPE_F16, tie_up, 2, 0x6802, "f16 2048 + 3");
        expect_reduce(ctx, GPUPRIM_OP_SUM, GPUPRIM_DTYPE_BF16, bf_tie, 2, 0x4380, "bf16 256 + 1");
        expect_reduce(ctx, GPUPRIM_OP_SUM, GPUPRIM_DTYPE_BF16, bf_tie_up, 2, 0x4382, "bf16 256 + 3");
    }
    {
        /* MIN/MAX: -0 < +0, the NaN with the largest bits wins (both orders) */
        static const uint64_t f16_zeros[2] = {0x0000, 0x8000};
        static const uint64_t f16_nans[6] = {0x3C00, 0x7C01, 0xFE00, 0x7E01, 0xFC00, 0xFC01};
        static const uint64_t bf16_zeros[2] = {0x8000, 0x0000};
        static const uint64_t bf16_nans[5] = {0x3F80, 0x7FC1, 0xFF81, 0xFF80, 0x7F81};
        static const uint64_t f16_inf[3] = {0x7C00, 0x7BFF, 0xFC00};
        expect_reduce(ctx, GPUPRIM_OP_MIN, GPUPRIM_DTYPE_F16, f16_zeros, 2, 0x8000, "f16 min(+0, -0)");
        expect_reduce(ctx, GPUPRIM_OP_MAX, GPUPRIM_DTYPE_F16, f16_zeros, 2, 0x0000, "f16 max(+0, -0)");
        expect_reduce(ctx, GPUPRIM_OP_MIN, GPUPRIM_DTYPE_F16, f16_nans, 6, 0xFE00, "f16 min with NaNs");
        expect_reduce(ctx, GPUPRIM_OP_MAX, GPUPRIM_DTYPE_F16, f16_nans, 6, 0xFE00, "f16 max with NaNs");
        expect_reduce(ctx, GPUPRIM_OP_SUM, GPUPRIM_DTYPE_F16, f16_nans, 6, 0x7E00, "f16 sum with NaNs: canonical");
        expect_reduce(ctx, GPUPRIM_OP_MIN, GPUPRIM_DTYPE_BF16, bf16_zeros, 2, 0x8000, "bf16 min(-0, +0)");
        expect_reduce(ctx, GPUPRIM_OP_MAX, GPUPRIM_DTYPE_BF16, bf16_zeros, 2, 0x0000, "bf16 max(-0, +0)");
        expect_reduce(ctx, GPUPRIM_OP_MIN, GPUPRIM_DTYPE_BF16, bf16_nans, 5, 0xFF81, "bf16 min with NaNs");
        expect_reduce(ctx, GPUPRIM_OP_MAX, GPUPRIM_DTYPE_BF16, bf16_nans, 5, 0xFF81, "bf16 max with NaNs");
        expect_reduce(ctx, GPUPRIM_OP_SUM, GPUPRIM_DTYPE_BF16, bf16_nans, 5, 0x7FC0, "bf16 sum with NaNs: canonical");
        expect_reduce(ctx, GPUPRIM_OP_SUM, GPUPRIM_DTYPE_F16, f16_inf, 3, 0x7E00, "f16 inf + max - inf: canonical NaN");
        expect_reduce(ctx, GPUPRIM_OP_SUM, GPUPRIM_DTYPE_F16, f16_inf, 2, 0x7C00, "f16 inf + max");
        expect_reduce(ctx, GPUPRIM_OP_MIN, GPUPRIM_DTYPE_F16, f16_inf, 3, 0xFC00, "f16 min -inf");
        expect_reduce(ctx, GPUPRIM_OP_MAX, GPUPRIM_DTYPE_F16, f16_inf, 2, 0x7C00, "f16 max +inf");
    }
    {
        /* dot of NaNs: canonical NaN */
        uint16_t nan16[3] = {0x3C00, 0xFC01, 0x7C02};
        uint16_t result = 0;
        gpuprim_buffer_t b = tc_buffer_from(ctx, GPUPRIM_DTYPE_F16, nan16, 3);
        tc_where("known answers: f16 dot with NaNs");
        CHECK_OK(gpuprim_dot(ctx, b, b, &result));
        CHECKF(result == 0x7E00, "f16 dot with NaNs = 0x%04x, expected 0x7E00", (unsigned)result);
        CHECK_OK(gpuprim_buffer_destroy(ctx, b));
        nan16[1] = 0xFF81; /* a bf16 NaN */
        b = tc_buffer_from(ctx, GPUPRIM_DTYPE_BF16, nan16, 3);
        CHECK_OK(gpuprim_dot(ctx, b, b, &result));
        CHECKF(result == 0x7FC0, "bf16 dot with NaNs = 0x%04x, expected 0x7FC0", (unsigned)result);
        CHECK_OK(gpuprim_buffer_destroy(ctx, b));
    }
}

static void test_dot_all(gpuprim_context_t ctx) {
    static const tc_pattern_t patterns[] = {TC_MODERATE, TC_RANDOM_BITS, TC_EQUAL, TC_ZEROS,
                                            TC_SMALL_RANGE, TC_NAN_SPARSE, TC_INF_SPARSE};
    size_t di, si, pi;
    for (di = 0; di < TC_DTYPE_COUNT; ++di) {
        gpuprim_dtype_t d = tc_all_dtypes[di];
        for (si = 0; si < SIZE_COUNT(d); ++si) {
            uint64_t n = SIZE_AT(si);
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

/* A float SUM (and dot) of only -0.0 is +0.0: the sums start from +0.0
 * (CUB's and numpy's rule; the header's zeros' signs). */
static void test_reduce_negative_zeros(gpuprim_context_t ctx) {
    static const uint64_t sizes[3] = {1, 5, 200003};
    size_t t, k;
    for (t = 0; t < TC_FLOAT_DTYPE_COUNT; ++t)
        for (k = 0; k < 3; ++k)
            expect_repeated_sum(ctx, tc_float_dtypes[t], tc_sign_bit(tc_float_dtypes[t]), sizes[k], 0, 0);
}

int main(void) {
    gpuprim_context_t ctx = tc_init("test_reduce");
    test_reduce_known_answers(ctx);
    test_reduce_known_answers_narrow(ctx);
    test_reduce_negative_zeros(ctx);
    test_reduce_all(ctx);
    test_reduce_unaligned_views(ctx);
    test_reduce_extreme_positions(ctx);
    test_dot_all(ctx);
    return tc_finish();
}
