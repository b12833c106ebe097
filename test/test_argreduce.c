/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpuprim_argreduce (argmin with GPUPRIM_OP_MIN, argmax with GPUPRIM_OP_MAX)
 * over all 12 dtypes against a reference written here from the header
 * (numpy's np.argmin / np.argmax on the flat array): the first position of
 * the extreme; floats: the first NaN if there is one (both ops, any sign or
 * payload), -0.0 equal to +0.0, +-inf ordinary. Sizes around the CPU
 * backend's pieces and search blocks and the CUDA kernels' vectors, tiles
 * (256 threads of 4 vectors of 16 bytes, 2 for 1-byte elements) and
 * single-block limit (64 KiB); the extreme
 * at the front, middle and back, repeated, NaNs and zeros of both signs;
 * unaligned views; the errors, each leaving *index as it was.
 */
#include "test_common.h"

#define POISON_INDEX 0xDEADBEEFCAFEF00Dull

static const gpuprim_op_t arg_ops[2] = {GPUPRIM_OP_MIN, GPUPRIM_OP_MAX};

/* One call on buffer b (holding x[0..n)) must give the reference. */
#define CHECK_ARG(ctx, op, d, b, x, n) check_arg(__FILE__, __LINE__, ctx, op, d, b, x, n)
static void check_arg(const char *file, int line, gpuprim_context_t ctx, gpuprim_op_t op, gpuprim_dtype_t d,
                      gpuprim_buffer_t b, const void *x, uint64_t n) {
    const uint64_t want = tc_reference_argreduce(op, d, x, n);
    uint64_t got = POISON_INDEX;
    gpuprim_status_t status = gpuprim_argreduce(ctx, op, b, &got);
    tc.checks++;
    if (status != GPUPRIM_SUCCESS) {
        tc_fail(file, line, "gpuprim_argreduce(%s) returned %d (%s)", tc_op_name(op), (int)status,
                gpuprim_get_error_string(status));
        return;
    }
    tc.checks++;
    if (got != want) {
        char g[96], w[96];
        tc_fail(file, line, "arg%s: got %llu (%s), expected %llu (%s)", tc_op_name(op), (unsigned long long)got,
                got < n ? tc_format(d, tc_get(d, x, got), g, sizeof g) : "out of range", (unsigned long long)want,
                tc_format(d, tc_get(d, x, want), w, sizeof w));
    }
}

static void check_both(gpuprim_context_t ctx, gpuprim_dtype_t d, gpuprim_buffer_t b, const void *x, uint64_t n) {
    int o;
    for (o = 0; o < 2; ++o) check_arg(__FILE__, __LINE__, ctx, arg_ops[o], d, b, x, n);
}

/* The sizes: small ones around the vector widths and the CPU's 64-element
 * search blocks; per dtype the CUDA tile +-1,
 * two tiles + 1, the single-block limit (64 KiB) +-1; the CPU's parallel
 * threshold (2^15) and pieces (2^14); a few non-powers of two past them. */
static size_t sizes_for(gpuprim_dtype_t d, uint64_t *out) {
    static const uint64_t common[] = {1,     2,     3,     7,     8,     9,     15,     16,     17,   31,
                                      32,    33,    63,    64,    65,    127,   129,    1000,   4095, 4097,
                                      16383, 16385, 32767, 32768, 32769, 65537, 300007, 1000003};
    /* a CUDA tile: 256 threads of 4 vectors (2 for 1-byte elements) of 16 bytes */
    const uint64_t tile = 256u * (tc_size(d) == 1 ? 2u : 4u) * (16u / tc_size(d)), single = 65536u / tc_size(d);
    size_t k = 0, i;
    for (i = 0; i < sizeof common / sizeof common[0]; ++i) out[k++] = common[i];
    out[k++] = tile - 1;
    out[k++] = tile;
    out[k++] = tile + 1;
    out[k++] = 2 * tile + 1;
    out[k++] = single - 1;
    out[k++] = single;
    out[k++] = single + 1;
    return k;
}

static void test_patterns(gpuprim_context_t ctx) {
    size_t di, si, count;
    int p;
    uint64_t sizes[64];
    for (di = 0; di < TC_DTYPE_COUNT; ++di) {
        const gpuprim_dtype_t d = tc_all_dtypes[di];
        count = sizes_for(d, sizes);
        for (si = 0; si < count; ++si) {
            const uint64_t n = sizes[si];
            if (n > tc_max_count()) continue;
            for (p = 0; p < TC_PATTERN_COUNT; ++p) {
                void *x, *after;
                gpuprim_buffer_t b;
                if (n > 70000 && p != TC_MODERATE && p != TC_RANDOM_BITS && p != TC_NAN_SPARSE && p != TC_SMALL_RANGE &&
                    p != TC_EQUAL)
                    continue;
                x = tc_xmalloc(n * tc_size(d));
                tc_fill(d, x, n, (tc_pattern_t)p);
                b = tc_buffer_from(ctx, d, x, n);
                tc_where("argreduce %s n=%llu pattern=%s", tc_dtype_name(d), (unsigned long long)n,
                         tc_pattern_names[p]);
                check_both(ctx, d, b, x, n);
                if (p == TC_EQUAL) { /* all equal (a NaN or not): position 0 */
                    uint64_t got = POISON_INDEX;
                    CHECK_OK(gpuprim_argreduce(ctx, GPUPRIM_OP_MAX, b, &got));
                    CHECKF(got == 0, "all equal: argmax %llu, expected 0", (unsigned long long)got);
                }
                after = tc_download(ctx, b, d, n); /* the input is left as it was */
                CHECK_ARRAY_EQ(d, after, x, n, "argreduce input after the call");
                free(after);
                CHECK_OK(gpuprim_buffer_destroy(ctx, b));
                free(x);
            }
        }
    }
}

/* bits at the given positions of a moderate (or, for zeros, one-signed)
 * background; every op's answer checked against the reference, and the
 * expected positions spelled out where the rule fixes them. */
static void place(gpuprim_dtype_t d, void *x, uint64_t n, const uint64_t *at, const uint64_t *bits, int k) {
    int j;
    for (j = 0; j < k; ++j)
        if (at[j] < n) tc_set(d, x, at[j], bits[j]);
}

static uint64_t magnitude_only(gpuprim_dtype_t d, uint64_t bits, int negative) {
    if (!tc_is_float(d)) return bits;
    bits &= ~tc_sign_bit(d) & tc_mask(d);
    return negative ? bits | tc_sign_bit(d) : bits;
}

static void expect_position(gpuprim_context_t ctx, gpuprim_op_t op, gpuprim_dtype_t d, gpuprim_buffer_t b,
                            const void *x, uint64_t n, uint64_t want, const char *what) {
    uint64_t got = POISON_INDEX;
    CHECK_OK(gpuprim_argreduce(ctx, op, b, &got));
    CHECKF(got == want, "%s: arg%s = %llu, expected %llu", what, tc_op_name(op), (unsigned long long)got,
           (unsigned long long)want);
    CHECKF(want == tc_reference_argreduce(op, d, x, n), "%s: the test's own expectation disagrees with its reference",
           what);
}

static void test_extremes(gpuprim_context_t ctx) {
    static const uint64_t sizes[] = {1, 2, 3, 17, 64, 65, 513, 4097, 16385, 32769, 65543, 300007};
    size_t di, si;
    for (di = 0; di < TC_DTYPE_COUNT; ++di) {
        const gpuprim_dtype_t d = tc_all_dtypes[di];
        const int is_float = tc_is_float(d);
        const uint64_t lowest = is_float ? (tc_inf_bits(d) | tc_sign_bit(d)) : tc_identity(GPUPRIM_OP_MAX, d);
        const uint64_t highest = is_float ? tc_inf_bits(d) : tc_identity(GPUPRIM_OP_MIN, d);
        for (si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
            const uint64_t n = sizes[si];
            void *base = tc_xmalloc(n * tc_size(d)), *x = tc_xmalloc(n * tc_size(d));
            gpuprim_buffer_t b = tc_buffer(ctx, d, n);
            uint64_t i;
            int where, copies;
            if (n > tc_max_count()) {
                free(base);
                free(x);
                CHECK_OK(gpuprim_buffer_destroy(ctx, b));
                continue;
            }
            tc_fill(d, base, n, TC_MODERATE);
            if (!is_float) /* keep the type's extremes out of the background */
                for (i = 0; i < n; ++i)
                    if (tc_get(d, base, i) == lowest || tc_get(d, base, i) == highest) tc_set(d, base, i, 1);
            /* the type's lowest / highest (floats: -inf / +inf) at the front, middle, back, one to three
               times: the first copy wins */
            for (where = 0; where < 3; ++where)
                for (copies = 1; copies <= 3; ++copies) {
                    const uint64_t first = where == 0 ? 0 : where == 1 ? n / 2 : n - 1;
                    uint64_t at[3], lows[3], highs[3];
                    int j;
                    for (j = 0; j < 3; ++j) {
                        at[j] = j < copies ? first + (uint64_t)j * (n / 7 + 1) : n;
                        lows[j] = lowest;
                        highs[j] = highest;
                    }
                    tc_where("argreduce %s n=%llu: extreme at %llu, %d copies", tc_dtype_name(d), (unsigned long long)n,
                             (unsigned long long)first, copies);
                    memcpy(x, base, n * tc_size(d));
                    place(d, x, n, at, lows, 3);
                    REQUIRE_OK(gpuprim_buffer_upload(ctx, b, 0, x, n));
                    expect_position(ctx, GPUPRIM_OP_MIN, d, b, x, n, first, "lowest");
                    memcpy(x, base, n * tc_size(d));
                    place(d, x, n, at, highs, 3);
                    REQUIRE_OK(gpuprim_buffer_upload(ctx, b, 0, x, n));
                    expect_position(ctx, GPUPRIM_OP_MAX, d, b, x, n, first, "highest");
                    if (is_float) {
                        /* NaNs of both signs and several payloads after an infinity: the first NaN wins both */
                        const uint64_t *specials = tc_float_specials(d);
                        uint64_t nan_at[4], nans[4];
                        int s;
                        for (s = 0; s < 6; ++s) {
                            static const int nan_index[6] = {4, 5, 6, 7, 8, 9}; /* quiet, least, all-ones, +- */
                            memcpy(x, base, n * tc_size(d));
                            nan_at[0] = 0;
                            nans[0] = (s & 1) ? lowest : highest;
                            nan_at[1] = first;
                            nans[1] = specials[nan_index[s]];
                            nan_at[2] = first + n / 5 + 1;
                            nans[2] = specials[nan_index[(s + 3) % 6]];
                            nan_at[3] = n - 1;
                            nans[3] = specials[nan_index[(s + 1) % 6]];
                            place(d, x, n, nan_at, nans, 4);
                            REQUIRE_OK(gpuprim_buffer_upload(ctx, b, 0, x, n));
                            tc_where("argreduce %s n=%llu: NaN 0x%llx first at %llu", tc_dtype_name(d),
                                     (unsigned long long)n, (unsigned long long)nans[1], (unsigned long long)first);
                            expect_position(ctx, GPUPRIM_OP_MIN, d, b, x, n, first == 0 && n > 0 ? 0 : first,
                                            "first NaN");
                            expect_position(ctx, GPUPRIM_OP_MAX, d, b, x, n, first, "first NaN");
                        }
                    }
                }
            if (is_float) {
                /* zeros: on a positive background the least is a zero, on a negative one the greatest;
                   -0 and +0 tie, so whichever comes first wins */
                int order;
                for (order = 0; order < 2; ++order) {
                    const uint64_t first_zero = order ? tc_sign_bit(d) : 0, second_zero = order ? 0 : tc_sign_bit(d);
                    const uint64_t p1 = n / 3, p2 = n - 1;
                    int sign;
                    for (sign = 0; sign < 2; ++sign) {
                        for (i = 0; i < n; ++i) {
                            uint64_t v = magnitude_only(d, tc_get(d, base, i), sign);
                            if ((v & ~tc_sign_bit(d)) == 0) v |= 1; /* no zeros but the placed ones */
                            tc_set(d, x, i, v);
                        }
                        tc_set(d, x, p2, second_zero);
                        tc_set(d, x, p1, first_zero);
                        REQUIRE_OK(gpuprim_buffer_upload(ctx, b, 0, x, n));
                        tc_where("argreduce %s n=%llu: zeros 0x%llx at %llu, 0x%llx at %llu, %s background",
                                 tc_dtype_name(d), (unsigned long long)n, (unsigned long long)first_zero,
                                 (unsigned long long)p1, (unsigned long long)second_zero, (unsigned long long)p2,
                                 sign ? "negative" : "positive");
                        expect_position(ctx, sign ? GPUPRIM_OP_MAX : GPUPRIM_OP_MIN, d, b, x, n, p1,
                                        "first of -0 and +0");
                    }
                }
                /* subnormals only (and a few +-0): the least and greatest by value */
                tc_fill(d, x, n, TC_TINY);
                REQUIRE_OK(gpuprim_buffer_upload(ctx, b, 0, x, n));
                tc_where("argreduce %s n=%llu: subnormals", tc_dtype_name(d), (unsigned long long)n);
                check_both(ctx, d, b, x, n);
            }
            CHECK_OK(gpuprim_buffer_destroy(ctx, b));
            free(base);
            free(x);
        }
    }
}

/* Views that start off the 16-byte alignment of the library's buffers (the
 * CUDA kernel's head elements). */
static void test_unaligned_views(gpuprim_context_t ctx) {
    static const uint64_t view_sizes[] = {1, 5, 30, 1021, 65531, 70001};
    size_t di, si;
    uint64_t offset;
    for (di = 0; di < TC_DTYPE_COUNT; ++di) {
        const gpuprim_dtype_t d = tc_all_dtypes[di];
        for (si = 0; si < sizeof view_sizes / sizeof view_sizes[0]; ++si) {
            const uint64_t n = view_sizes[si] + 16;
            void *x = tc_xmalloc(n * tc_size(d));
            gpuprim_buffer_t base;
            tc_fill(d, x, n, TC_SMALL_RANGE);
            base = tc_buffer_from(ctx, d, x, n);
            for (offset = 1; offset <= 15; offset += 2) {
                const uint64_t count = n - offset - (offset % 4 == 3 ? 1 : 0);
                gpuprim_buffer_t view = tc_view(ctx, base, d, offset, count);
                tc_where("argreduce %s view at +%llu, n=%llu", tc_dtype_name(d), (unsigned long long)offset,
                         (unsigned long long)count);
                check_both(ctx, d, view, (const char *)x + offset * tc_size(d), count);
                CHECK_OK(gpuprim_buffer_destroy(ctx, view));
            }
            CHECK_OK(gpuprim_buffer_destroy(ctx, base));
            free(x);
        }
    }
}

/* Hand-made inputs whose answers are spelled out (numpy's). */
static void expect_known(gpuprim_context_t ctx, gpuprim_dtype_t d, const uint64_t *bits, uint64_t n, uint64_t want_min,
                         uint64_t want_max, const char *what) {
    void *x = tc_xmalloc(n * tc_size(d));
    gpuprim_buffer_t b;
    uint64_t i;
    for (i = 0; i < n; ++i) tc_set(d, x, i, bits[i]);
    b = tc_buffer_from(ctx, d, x, n);
    tc_where("argreduce known answer %s: %s", tc_dtype_name(d), what);
    expect_position(ctx, GPUPRIM_OP_MIN, d, b, x, n, want_min, what);
    expect_position(ctx, GPUPRIM_OP_MAX, d, b, x, n, want_max, what);
    CHECK_OK(gpuprim_buffer_destroy(ctx, b));
    free(x);
}

static void test_known_answers(gpuprim_context_t ctx) {
    /* np.argmin([3, 1, 2, 1]) == 1, np.argmax == 0 */
    static const uint64_t ints[4] = {3, 1, 2, 1};
    /* i8: -128 and 127 twice */
    static const uint64_t i8[6] = {0x05, 0x7F, 0x80, 0x7F, 0x80, 0xFF};
    /* u64 extremes: 0 and UINT64_MAX (the kernels' identity key must not hide it) */
    static const uint64_t u64[4] = {5, 0xFFFFFFFFFFFFFFFFull, 0, 0xFFFFFFFFFFFFFFFFull};
    static const uint64_t u64_all_max[3] = {0xFFFFFFFFFFFFFFFFull, 0xFFFFFFFFFFFFFFFFull, 0xFFFFFFFFFFFFFFFFull};
    static const uint64_t u32_all_max[3] = {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu};
    static const uint64_t i64[3] = {0, 0x8000000000000000ull, 0x7FFFFFFFFFFFFFFFull};
    /* f32: np.argmin([1, nan, -inf, nan]) == 1, np.argmax == 1 */
    static const uint64_t f32_nan[4] = {0x3F800000u, 0xFFC00001u, 0xFF800000u, 0x7FC00000u};
    /* f32: [+0, -0, 1]: argmin 0 (zeros equal), argmax 2; [-0, +0, -1]: argmin 2, argmax 0 */
    static const uint64_t f32_zeros[3] = {0x00000000u, 0x80000000u, 0x3F800000u};
    static const uint64_t f32_zeros2[3] = {0x80000000u, 0x00000000u, 0xBF800000u};
    /* f32 infinities and the largest finite: [max, +inf, -max, -inf, +inf]: argmin 3, argmax 1 */
    static const uint64_t f32_inf[5] = {0x7F7FFFFFu, 0x7F800000u, 0xFF7FFFFFu, 0xFF800000u, 0x7F800000u};
    /* f32 subnormals: [2^-149, -2^-149, 0, -2^-148]: argmin 3, argmax 0 */
    static const uint64_t f32_sub[4] = {0x00000001u, 0x80000001u, 0x00000000u, 0x80000002u};
    /* f64: a negative NaN with the all-ones payload after ordinary values */
    static const uint64_t f64_nan[4] = {0x3FF0000000000000ull, 0xBFF0000000000000ull, 0xFFFFFFFFFFFFFFFFull,
                                        0x7FF8000000000000ull};
    /* f16: [1, -2, 65504, -65504, -0]; bf16 NaN 0x7F81 at 2 */
    static const uint64_t f16[5] = {0x3C00u, 0xC000u, 0x7BFFu, 0xFBFFu, 0x8000u};
    static const uint64_t bf16[4] = {0x3F80u, 0xFF80u, 0x7F81u, 0x7F80u};
    /* f16 zeros only: every position ties, the first wins */
    static const uint64_t f16_zeros[3] = {0x8000u, 0x0000u, 0x8000u};
    expect_known(ctx, GPUPRIM_DTYPE_I32, ints, 4, 1, 0, "[3, 1, 2, 1]");
    expect_known(ctx, GPUPRIM_DTYPE_U16, ints, 4, 1, 0, "[3, 1, 2, 1]");
    expect_known(ctx, GPUPRIM_DTYPE_I8, i8, 6, 2, 1, "i8 [5, 127, -128, 127, -128, -1]");
    expect_known(ctx, GPUPRIM_DTYPE_U8, i8, 6, 0, 5, "u8 [5, 127, 128, 127, 128, 255]");
    expect_known(ctx, GPUPRIM_DTYPE_U64, u64, 4, 2, 1, "u64 [5, max, 0, max]");
    expect_known(ctx, GPUPRIM_DTYPE_U64, u64_all_max, 3, 0, 0, "u64 all UINT64_MAX");
    expect_known(ctx, GPUPRIM_DTYPE_U32, u32_all_max, 3, 0, 0, "u32 all UINT32_MAX");
    expect_known(ctx, GPUPRIM_DTYPE_I64, i64, 3, 1, 2, "i64 [0, min, max]");
    expect_known(ctx, GPUPRIM_DTYPE_F32, f32_nan, 4, 1, 1, "f32 [1, -nan, -inf, nan]");
    expect_known(ctx, GPUPRIM_DTYPE_F32, f32_zeros, 3, 0, 2, "f32 [+0, -0, 1]");
    expect_known(ctx, GPUPRIM_DTYPE_F32, f32_zeros2, 3, 2, 0, "f32 [-0, +0, -1]");
    expect_known(ctx, GPUPRIM_DTYPE_F32, f32_inf, 5, 3, 1, "f32 [max, inf, -max, -inf, inf]");
    expect_known(ctx, GPUPRIM_DTYPE_F32, f32_sub, 4, 3, 0, "f32 subnormals");
    expect_known(ctx, GPUPRIM_DTYPE_F64, f64_nan, 4, 2, 2, "f64 [1, -1, -nan(all ones), nan]");
    expect_known(ctx, GPUPRIM_DTYPE_F16, f16, 5, 3, 2, "f16 [1, -2, 65504, -65504, -0]");
    expect_known(ctx, GPUPRIM_DTYPE_BF16, bf16, 4, 2, 2, "bf16 [1, -inf, nan, inf]");
    expect_known(ctx, GPUPRIM_DTYPE_F16, f16_zeros, 3, 0, 0, "f16 [-0, +0, -0]");
}

/* Every failure: its status, a message naming the argument, *index untouched. */
#define EXPECT_ARG_FAIL(ctx, call, status, needle)                                                                  \
    do {                                                                                                            \
        index = POISON_INDEX;                                                                                       \
        TC_EXPECT_FAIL(ctx, call, status, needle);                                                                  \
        CHECKF(index == POISON_INDEX, "a failed gpuprim_argreduce wrote *index (%llu)", (unsigned long long)index); \
    } while (0)

static void test_errors(gpuprim_context_t ctx) {
    uint64_t index = POISON_INDEX;
    const int32_t data[3] = {2, 1, 3};
    gpuprim_buffer_t b = tc_buffer_from(ctx, GPUPRIM_DTYPE_I32, data, 3);
    gpuprim_buffer_t empty = tc_buffer(ctx, GPUPRIM_DTYPE_F32, 0);
    gpuprim_buffer_t gone = tc_buffer(ctx, GPUPRIM_DTYPE_I32, 3);
    gpuprim_context_t other = NULL;
    gpuprim_buffer_t foreign = NULL;
    int fake_context = 0;
    tc_where("argreduce errors");
    CHECK_OK(gpuprim_buffer_destroy(ctx, gone));
    REQUIRE_OK(gpuprim_context_create(NULL, &other, NULL, 0));
    foreign = tc_buffer_from(other, GPUPRIM_DTYPE_I32, data, 3);

    EXPECT_ARG_FAIL(ctx, gpuprim_argreduce(ctx, GPUPRIM_OP_MIN, empty, &index), GPUPRIM_ERROR_INVALID_ARGUMENT,
                    "'input'");
    CHECK_MESSAGE(ctx, "empty");
    EXPECT_ARG_FAIL(ctx, gpuprim_argreduce(ctx, GPUPRIM_OP_MAX, empty, &index), GPUPRIM_ERROR_INVALID_ARGUMENT,
                    "empty buffer");
    EXPECT_ARG_FAIL(ctx, gpuprim_argreduce(ctx, GPUPRIM_OP_SUM, b, &index), GPUPRIM_ERROR_INVALID_ARGUMENT, "'op'");
    CHECK_MESSAGE(ctx, "GPUPRIM_OP_MIN or GPUPRIM_OP_MAX");
    EXPECT_ARG_FAIL(ctx, gpuprim_argreduce(ctx, (gpuprim_op_t)3, b, &index), GPUPRIM_ERROR_INVALID_ENUM, "'op'");
    EXPECT_ARG_FAIL(ctx, gpuprim_argreduce(ctx, (gpuprim_op_t)-1, b, &index), GPUPRIM_ERROR_INVALID_ENUM, "'op'");
    /* A NULL required pointer is NULL_POINTER (the header's convention for every call). */
    TC_EXPECT_FAIL(ctx, gpuprim_argreduce(ctx, GPUPRIM_OP_MIN, b, NULL), GPUPRIM_ERROR_NULL_POINTER, "'index'");
    EXPECT_ARG_FAIL(ctx, gpuprim_argreduce(ctx, GPUPRIM_OP_MIN, NULL, &index), GPUPRIM_ERROR_NULL_POINTER, "'input'");
    EXPECT_ARG_FAIL(ctx, gpuprim_argreduce(ctx, GPUPRIM_OP_MIN, gone, &index), GPUPRIM_ERROR_INVALID_HANDLE, "'input'");
    EXPECT_ARG_FAIL(ctx, gpuprim_argreduce(ctx, GPUPRIM_OP_MIN, foreign, &index), GPUPRIM_ERROR_CONTEXT_MISMATCH,
                    "'input'");
    /* The op is checked first, then the input, then index, then the count. */
    EXPECT_ARG_FAIL(ctx, gpuprim_argreduce(ctx, GPUPRIM_OP_SUM, empty, &index), GPUPRIM_ERROR_INVALID_ARGUMENT, "'op'");
    TC_EXPECT_FAIL(ctx, gpuprim_argreduce(ctx, GPUPRIM_OP_MIN, empty, NULL), GPUPRIM_ERROR_NULL_POINTER, "'index'");
    /* Contexts: NULL, and values that are no context. */
    index = POISON_INDEX;
    CHECK_STATUS(gpuprim_argreduce(NULL, GPUPRIM_OP_MIN, b, &index), GPUPRIM_ERROR_NULL_POINTER);
    CHECK_STATUS(gpuprim_argreduce((gpuprim_context_t)&fake_context, GPUPRIM_OP_MIN, b, &index),
                 GPUPRIM_ERROR_INVALID_HANDLE);
    CHECK_STATUS(gpuprim_argreduce((gpuprim_context_t)b, GPUPRIM_OP_MIN, b, &index), GPUPRIM_ERROR_INVALID_HANDLE);
    CHECKF(index == POISON_INDEX, "a failed gpuprim_argreduce wrote *index");
    /* After the failures the context still works. */
    CHECK_OK(gpuprim_argreduce(ctx, GPUPRIM_OP_MIN, b, &index));
    CHECKF(index == 1, "argmin [2, 1, 3] = %llu", (unsigned long long)index);
    CHECK_OK(gpuprim_buffer_destroy(other, foreign));
    CHECK_OK(gpuprim_context_destroy(other));
    CHECK_OK(gpuprim_buffer_destroy(ctx, b));
    CHECK_OK(gpuprim_buffer_destroy(ctx, empty));
}

/* The same answers on CPU contexts of 1, 2 and 7 threads (past the parallel
 * threshold: the pieces are folded on several threads). */
static void test_cpu_threads(void) {
    static const int threads[3] = {1, 2, 7};
    static const uint64_t n = 1000003;
    int t, p;
    for (t = 0; t < 3; ++t) {
        gpuprim_context_options_t options;
        gpuprim_context_t cpu = NULL;
        gpuprim_context_options_init(&options);
        options.backend = GPUPRIM_BACKEND_CPU;
        options.cpu_threads = threads[t];
        REQUIRE_OK(gpuprim_context_create(&options, &cpu, NULL, 0));
        for (p = 0; p < 3; ++p) {
            static const tc_pattern_t patterns[3] = {TC_SMALL_RANGE, TC_NAN_SPARSE, TC_RANDOM_BITS};
            static const gpuprim_dtype_t dtypes[3] = {GPUPRIM_DTYPE_F32, GPUPRIM_DTYPE_BF16, GPUPRIM_DTYPE_I64};
            const gpuprim_dtype_t d = dtypes[p];
            void *x = tc_xmalloc(n * tc_size(d));
            gpuprim_buffer_t b;
            tc_fill(d, x, n, patterns[p]);
            b = tc_buffer_from(cpu, d, x, n);
            tc_where("argreduce on %d CPU threads, %s %s", threads[t], tc_dtype_name(d), tc_pattern_names[patterns[p]]);
            check_both(cpu, d, b, x, n);
            CHECK_OK(gpuprim_buffer_destroy(cpu, b));
            free(x);
        }
        CHECK_OK(gpuprim_context_destroy(cpu));
    }
}

int main(void) {
    gpuprim_context_t ctx = tc_init("test_argreduce");
    test_known_answers(ctx);
    test_errors(ctx);
    test_extremes(ctx);
    test_patterns(ctx);
    test_unaligned_views(ctx);
    test_cpu_threads();
    return tc_finish();
}
