/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpuprim_adjacent_difference over all 12 dtypes against the reference
 * written from the header (test_common.h tc_reference_difference_at:
 * output[0] = input[0], output[i] = input[i] - input[i - 1]; integers wrap,
 * f16/bf16 in f32 rounded once, any NaN result the canonical NaN). Out of
 * place into a poisoned output (the input left as it was) and in place, on
 * every pattern (NaNs of both signs, infinities, subnormals, type extremes,
 * ...) and sizes around the CUDA kernel's chunks (32 x 16 / 8 / 4 elements
 * for 1- and 2-, 4- and 8-byte elements) and blocks (8 warps), and the CPU
 * backend's pieces (2^16) and parallel threshold (2^17); the integer scan
 * round trip (an inclusive SUM scan of the differences gives the input
 * back); unaligned views, in place through a second handle on the same
 * memory; CPU contexts of 1, 2 and 7 threads; the errors, each leaving the
 * output as it was.
 */
#include "test_common.h"

/* One call: output (poisoned) or the input itself (in_place) must hold the
 * reference afterwards, and out of place the input must be unchanged. */
static void check_difference(gpuprim_context_t ctx, gpuprim_dtype_t d, const void *x, uint64_t n, int in_place) {
    void *want = tc_xmalloc((n ? n : 1) * tc_size(d));
    gpuprim_buffer_t in = tc_buffer_from(ctx, d, x, n), out = in;
    tc_reference_adjacent_difference(d, x, n, want);
    if (!in_place) {
        out = tc_buffer(ctx, d, n);
        tc_poison(ctx, out, d, n);
    }
    CHECK_OK(gpuprim_adjacent_difference(ctx, in, out));
    CHECK_BUFFER_EQ(ctx, out, d, want, n, in_place ? "differences in place" : "differences");
    if (!in_place) {
        CHECK_BUFFER_EQ(ctx, in, d, x, n, "input after the call");
        CHECK_OK(gpuprim_buffer_destroy(ctx, out));
    }
    CHECK_OK(gpuprim_buffer_destroy(ctx, in));
    free(want);
}

static void test_known_answers(gpuprim_context_t ctx) {
    const int32_t i32[4] = {5, 3, 10, INT32_MIN};
    const int32_t i32_want[4] = {5, -2, 7, (int32_t)(0x80000000u - 10u)};
    const uint8_t u8[3] = {10, 5, 255};
    const uint8_t u8_want[3] = {10, 251, 250};
    const float f32[5] = {1.0f, INFINITY, INFINITY, 0.5f, -0.0f};
    const uint32_t f32_want_bits[5] = {0x3F800000u, 0x7F800000u, 0x7FC00000u, 0xFF800000u, 0xBF000000u};
    /* f16: 1.0, 1.0 + 2^-10 (0x3C01), 2048 (0x6800), 2049 is not an f16: 2048 + 2 (0x6801) */
    const uint16_t f16[4] = {0x3C00u, 0x3C01u, 0x6800u, 0x6801u};
    /* 1.0; 2^-10 (0x1400); 2048 - (1 + 2^-10) = 2046.999..., rounded once: 2047 (0x67FF); 2 (0x4000) */
    const uint16_t f16_want[4] = {0x3C00u, 0x1400u, 0x67FFu, 0x4000u};
    tc_where("adjacent difference known answers");
    {
        gpuprim_buffer_t b = tc_buffer_from(ctx, GPUPRIM_DTYPE_I32, i32, 4), o = tc_buffer(ctx, GPUPRIM_DTYPE_I32, 4);
        CHECK_OK(gpuprim_adjacent_difference(ctx, b, o));
        CHECK_BUFFER_EQ(ctx, o, GPUPRIM_DTYPE_I32, i32_want, 4, "i32 differences (the last wraps)");
        CHECK_OK(gpuprim_buffer_destroy(ctx, o));
        CHECK_OK(gpuprim_buffer_destroy(ctx, b));
    }
    {
        gpuprim_buffer_t b = tc_buffer_from(ctx, GPUPRIM_DTYPE_U8, u8, 3);
        CHECK_OK(gpuprim_adjacent_difference(ctx, b, b));
        CHECK_BUFFER_EQ(ctx, b, GPUPRIM_DTYPE_U8, u8_want, 3, "u8 differences in place (wrapping)");
        CHECK_OK(gpuprim_buffer_destroy(ctx, b));
    }
    {
        gpuprim_buffer_t b = tc_buffer_from(ctx, GPUPRIM_DTYPE_F32, f32, 5), o = tc_buffer(ctx, GPUPRIM_DTYPE_F32, 5);
        CHECK_OK(gpuprim_adjacent_difference(ctx, b, o));
        CHECK_BUFFER_EQ(ctx, o, GPUPRIM_DTYPE_F32, f32_want_bits, 5, "f32: inf - inf the canonical NaN");
        CHECK_OK(gpuprim_buffer_destroy(ctx, o));
        CHECK_OK(gpuprim_buffer_destroy(ctx, b));
    }
    {
        gpuprim_buffer_t b = tc_buffer_from(ctx, GPUPRIM_DTYPE_F16, f16, 4), o = tc_buffer(ctx, GPUPRIM_DTYPE_F16, 4);
        CHECK_OK(gpuprim_adjacent_difference(ctx, b, o));
        CHECK_BUFFER_EQ(ctx, o, GPUPRIM_DTYPE_F16, f16_want, 4, "f16 in f32, rounded once");
        CHECK_OK(gpuprim_buffer_destroy(ctx, o));
        CHECK_OK(gpuprim_buffer_destroy(ctx, b));
    }
}

/* Sizes: small ones; per dtype the CUDA chunk (32 x items) and block (8
 * chunks) +-1; the CPU's pieces (2^16) and parallel threshold (2^17) +-1;
 * non-powers of two past them. */
static size_t sizes_for(gpuprim_dtype_t d, uint64_t *out) {
    static const uint64_t common[] = {1,     2,      3,      31,     32,     33,     63,    64,    65,
                                      1000,  65535,  65536,  65537,  131071, 131072, 131073,
                                      196611, 300007, 1000003};
    const uint64_t items = tc_size(d) >= 8 ? 4 : tc_size(d) == 4 ? 8 : 16, chunk = 32 * items, block = 8 * chunk;
    size_t k = 0, i;
    for (i = 0; i < sizeof common / sizeof common[0]; ++i) out[k++] = common[i];
    out[k++] = chunk - 1;
    out[k++] = chunk;
    out[k++] = chunk + 1;
    out[k++] = 2 * chunk + 1;
    out[k++] = block - 1;
    out[k++] = block;
    out[k++] = block + 1;
    return k;
}

static void test_patterns(gpuprim_context_t ctx) {
    size_t di, si, count;
    int p, in_place;
    uint64_t sizes[64];
    for (di = 0; di < TC_DTYPE_COUNT; ++di) {
        const gpuprim_dtype_t d = tc_all_dtypes[di];
        count = sizes_for(d, sizes);
        for (si = 0; si < count; ++si) {
            const uint64_t n = sizes[si];
            if (n > tc_max_count()) continue;
            for (p = 0; p < TC_PATTERN_COUNT; ++p) {
                void *x;
                if (n > 70000 && p != TC_MODERATE && p != TC_RANDOM_BITS && p != TC_NAN_HEAVY && p != TC_TINY)
                    continue;
                x = tc_xmalloc(n * tc_size(d));
                tc_fill(d, x, n, (tc_pattern_t)p);
                for (in_place = 0; in_place < 2; ++in_place) {
                    tc_where("adjacent difference %s n=%llu pattern=%s%s", tc_dtype_name(d), (unsigned long long)n,
                             tc_pattern_names[p], in_place ? " in place" : "");
                    check_difference(ctx, d, x, n, in_place);
                }
                free(x);
            }
        }
    }
}

/* Integers: an inclusive SUM scan of the differences gives the input back
 * (the header's delta-decoding promise), in place both ways. */
static void test_scan_round_trip(gpuprim_context_t ctx) {
    size_t di;
    const uint64_t n = 100003;
    for (di = 0; di < TC_DTYPE_COUNT; ++di) {
        const gpuprim_dtype_t d = tc_all_dtypes[di];
        void *x;
        gpuprim_buffer_t b;
        if (tc_is_float(d)) continue;
        x = tc_xmalloc(n * tc_size(d));
        tc_fill(d, x, n, TC_RANDOM_BITS);
        b = tc_buffer_from(ctx, d, x, n);
        tc_where("adjacent difference then scan, %s", tc_dtype_name(d));
        CHECK_OK(gpuprim_adjacent_difference(ctx, b, b));
        CHECK_OK(gpuprim_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, b, b));
        CHECK_BUFFER_EQ(ctx, b, d, x, n, "scan of the differences");
        CHECK_OK(gpuprim_buffer_destroy(ctx, b));
        free(x);
    }
}

/* Views that start off the allocations' alignment, out of place between
 * two views of one buffer and in place through a second handle wrapping
 * the same memory (the header's "the same memory"). */
static void test_unaligned_views(gpuprim_context_t ctx) {
    static const gpuprim_dtype_t dtypes[4] = {GPUPRIM_DTYPE_U8, GPUPRIM_DTYPE_F16, GPUPRIM_DTYPE_F32,
                                              GPUPRIM_DTYPE_F64};
    const uint64_t n = 5003;
    size_t di;
    uint64_t offset;
    for (di = 0; di < 4; ++di) {
        const gpuprim_dtype_t d = dtypes[di];
        for (offset = 1; offset <= 3; ++offset) {
            void *x = tc_xmalloc(n * tc_size(d)), *want = tc_xmalloc(n * tc_size(d));
            gpuprim_buffer_t base = tc_buffer(ctx, d, 2 * n + 8), in, out, alias;
            tc_fill(d, x, n, TC_MODERATE);
            tc_reference_adjacent_difference(d, x, n, want);
            tc_poison(ctx, base, d, 2 * n + 8);
            in = tc_view(ctx, base, d, offset, n);
            out = tc_view(ctx, base, d, n + 4 + offset, n);
            REQUIRE_OK(gpuprim_buffer_upload(ctx, in, 0, x, n));
            tc_where("adjacent difference %s views at +%llu", tc_dtype_name(d), (unsigned long long)offset);
            CHECK_OK(gpuprim_adjacent_difference(ctx, in, out));
            CHECK_BUFFER_EQ(ctx, out, d, want, n, "differences into a view");
            CHECK_BUFFER_EQ(ctx, in, d, x, n, "input view after the call");
            alias = tc_view(ctx, base, d, offset, n); /* the same memory as `in` */
            CHECK_OK(gpuprim_adjacent_difference(ctx, in, alias));
            CHECK_BUFFER_EQ(ctx, in, d, want, n, "in place through a second handle");
            CHECK_OK(gpuprim_buffer_destroy(ctx, alias));
            CHECK_OK(gpuprim_buffer_destroy(ctx, out));
            CHECK_OK(gpuprim_buffer_destroy(ctx, in));
            CHECK_OK(gpuprim_buffer_destroy(ctx, base));
            free(want);
            free(x);
        }
    }
}

static void test_errors(gpuprim_context_t ctx) {
    const int32_t data[4] = {2, 1, 3, 7};
    gpuprim_buffer_t b = tc_buffer_from(ctx, GPUPRIM_DTYPE_I32, data, 4);
    gpuprim_buffer_t empty = tc_buffer(ctx, GPUPRIM_DTYPE_I32, 0), empty_out = tc_buffer(ctx, GPUPRIM_DTYPE_I32, 0);
    gpuprim_buffer_t gone = tc_buffer(ctx, GPUPRIM_DTYPE_I32, 4);
    tc_known_t out = tc_known(ctx, GPUPRIM_DTYPE_I32, 4), wrong_dtype = tc_known(ctx, GPUPRIM_DTYPE_U32, 4);
    tc_known_t short_out = tc_known(ctx, GPUPRIM_DTYPE_I32, 3);
    tc_known_t wide = tc_known(ctx, GPUPRIM_DTYPE_I32, 9);
    gpuprim_buffer_t shifted_in = tc_view(ctx, wide.b, GPUPRIM_DTYPE_I32, 0, 4);
    gpuprim_buffer_t shifted_out = tc_view(ctx, wide.b, GPUPRIM_DTYPE_I32, 1, 4);
    gpuprim_context_t other = NULL;
    gpuprim_buffer_t foreign = NULL;
    int fake_context = 0;
    tc_where("adjacent difference errors");
    CHECK_OK(gpuprim_buffer_destroy(ctx, gone));
    REQUIRE_OK(gpuprim_context_create(NULL, &other, NULL, 0));
    foreign = tc_buffer_from(other, GPUPRIM_DTYPE_I32, data, 4);

    TC_EXPECT_FAIL(ctx, gpuprim_adjacent_difference(ctx, NULL, out.b), GPUPRIM_ERROR_NULL_POINTER, "'input'");
    TC_EXPECT_FAIL(ctx, gpuprim_adjacent_difference(ctx, b, NULL), GPUPRIM_ERROR_NULL_POINTER, "'output'");
    TC_EXPECT_FAIL(ctx, gpuprim_adjacent_difference(ctx, gone, out.b), GPUPRIM_ERROR_INVALID_HANDLE, "'input'");
    TC_EXPECT_FAIL(ctx, gpuprim_adjacent_difference(ctx, b, gone), GPUPRIM_ERROR_INVALID_HANDLE, "'output'");
    TC_EXPECT_FAIL(ctx, gpuprim_adjacent_difference(ctx, foreign, out.b), GPUPRIM_ERROR_CONTEXT_MISMATCH, "'input'");
    TC_EXPECT_FAIL(ctx, gpuprim_adjacent_difference(ctx, b, wrong_dtype.b), GPUPRIM_ERROR_DTYPE_MISMATCH, "'output'");
    TC_EXPECT_FAIL(ctx, gpuprim_adjacent_difference(ctx, b, short_out.b), GPUPRIM_ERROR_SIZE_MISMATCH, "'output'");
    TC_EXPECT_FAIL(ctx, gpuprim_adjacent_difference(ctx, empty, short_out.b), GPUPRIM_ERROR_SIZE_MISMATCH, "'output'");
    /* overlapping without being in place: output one element past input */
    TC_EXPECT_FAIL(ctx, gpuprim_adjacent_difference(ctx, shifted_in, shifted_out), GPUPRIM_ERROR_INVALID_ARGUMENT,
                   "overlap");
    CHECK_STATUS(gpuprim_adjacent_difference(NULL, b, out.b), GPUPRIM_ERROR_NULL_POINTER);
    CHECK_STATUS(gpuprim_adjacent_difference((gpuprim_context_t)&fake_context, b, out.b),
                 GPUPRIM_ERROR_INVALID_HANDLE);
    CHECK_STATUS(gpuprim_adjacent_difference((gpuprim_context_t)b, b, out.b), GPUPRIM_ERROR_INVALID_HANDLE);
    TC_CHECK_UNCHANGED(ctx, out);
    TC_CHECK_UNCHANGED(ctx, wrong_dtype);
    TC_CHECK_UNCHANGED(ctx, short_out);
    TC_CHECK_UNCHANGED(ctx, wide);
    CHECK_BUFFER_EQ(ctx, b, GPUPRIM_DTYPE_I32, data, 4, "input after the failed calls");
    /* Empty buffers: nothing to do, success. After the failures the context still works. */
    CHECK_OK(gpuprim_adjacent_difference(ctx, empty, empty_out));
    CHECK_OK(gpuprim_adjacent_difference(ctx, b, out.b));
    {
        const int32_t want[4] = {2, -1, 2, 4};
        CHECK_BUFFER_EQ(ctx, out.b, GPUPRIM_DTYPE_I32, want, 4, "differences after the failed calls");
    }
    CHECK_OK(gpuprim_buffer_destroy(ctx, shifted_out));
    CHECK_OK(gpuprim_buffer_destroy(ctx, shifted_in));
    CHECK_OK(gpuprim_buffer_destroy(other, foreign));
    CHECK_OK(gpuprim_context_destroy(other));
    tc_free_known(ctx, wide);
    tc_free_known(ctx, short_out);
    tc_free_known(ctx, wrong_dtype);
    tc_free_known(ctx, out);
    CHECK_OK(gpuprim_buffer_destroy(ctx, empty_out));
    CHECK_OK(gpuprim_buffer_destroy(ctx, empty));
    CHECK_OK(gpuprim_buffer_destroy(ctx, b));
}

/* The same bits on CPU contexts of 1, 2 and 7 threads (past the parallel
 * threshold: pieces on several threads), out of place and in place. */
static void test_cpu_threads(void) {
    static const int threads[3] = {1, 2, 7};
    static const gpuprim_dtype_t dtypes[3] = {GPUPRIM_DTYPE_F32, GPUPRIM_DTYPE_BF16, GPUPRIM_DTYPE_I64};
    const uint64_t n = 1000003;
    int t, k, in_place;
    for (t = 0; t < 3; ++t) {
        gpuprim_context_options_t options;
        gpuprim_context_t cpu = NULL;
        gpuprim_context_options_init(&options);
        options.backend = GPUPRIM_BACKEND_CPU;
        options.cpu_threads = threads[t];
        REQUIRE_OK(gpuprim_context_create(&options, &cpu, NULL, 0));
        for (k = 0; k < 3; ++k) {
            const gpuprim_dtype_t d = dtypes[k];
            void *x = tc_xmalloc(n * tc_size(d));
            tc_fill(d, x, n, TC_NAN_SPARSE);
            for (in_place = 0; in_place < 2; ++in_place) {
                tc_where("adjacent difference on %d CPU threads, %s%s", threads[t], tc_dtype_name(d),
                         in_place ? " in place" : "");
                check_difference(cpu, d, x, n, in_place);
            }
            free(x);
        }
        CHECK_OK(gpuprim_context_destroy(cpu));
    }
}

int main(void) {
    gpuprim_context_t ctx = tc_init("test_adjacent_difference");
    test_known_answers(ctx);
    test_errors(ctx);
    test_patterns(ctx);
    test_scan_round_trip(ctx);
    test_unaligned_views(ctx);
    test_cpu_threads();
    return tc_finish();
}
