/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpuprim_merge over all 12 key dtypes, both orders, keys only and with
 * values of several widths, against the header's definition: keys_out is
 * the stable sort (test_common.h's reference, by the documented order key)
 * of keys_a followed by keys_b, values moving with their keys. The values
 * are the elements' positions in that concatenation (in the value dtype's
 * width, wrapping for narrow ones), so stability (ties: keys_a first, each
 * run in order) is checked element by element. Duplicates across and
 * within the runs, NaNs of both signs, +-0, +-inf, the type's extremes;
 * empty runs, one element, the CUDA tiles' edges (512 threads x 15 keys,
 * fewer for wide elements), long against short runs; poisoned outputs;
 * runs out of order (unspecified output, but success and no access outside
 * the buffers); the errors, each leaving the outputs as they were.
 */
#include "test_common.h"

static const gpuprim_dtype_t value_dtypes[5] = {GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_U8, GPUPRIM_DTYPE_U64,
                                                GPUPRIM_DTYPE_F16, GPUPRIM_DTYPE_I32};

/* One merge of runs a and b (with_values: values vd holding the positions); check_result 0: only that it
 * succeeds and leaves the inputs alone (runs out of order). */
static void check_merge(gpuprim_context_t ctx, gpuprim_dtype_t d, int with_values, gpuprim_dtype_t vd, const void *a,
                        uint64_t na, const void *b, uint64_t nb, int descending, int check_result) {
    const uint64_t n = na + nb;
    void *both = tc_xmalloc(n * tc_size(d) + 8), *want = tc_xmalloc(n * tc_size(d) + 8);
    void *va = NULL, *vb = NULL, *want_values = NULL;
    uint64_t *perm = (uint64_t *)tc_xmalloc((n + 1) * sizeof(uint64_t)), i;
    gpuprim_buffer_t ka = tc_buffer_from(ctx, d, a, na), kb = tc_buffer_from(ctx, d, b, nb), ko = tc_buffer(ctx, d, n);
    gpuprim_buffer_t bva = NULL, bvb = NULL, bvo = NULL;
    memcpy(both, a, na * tc_size(d));
    memcpy((char *)both + na * tc_size(d), b, nb * tc_size(d));
    tc_reference_sort_permutation(d, both, n, descending, perm);
    tc_permute(d, both, perm, n, want);
    tc_poison(ctx, ko, d, n);
    if (with_values) {
        va = tc_xmalloc(na * 8 + 8);
        vb = tc_xmalloc(nb * 8 + 8);
        want_values = tc_xmalloc(n * 8 + 8);
        for (i = 0; i < na; ++i) tc_set(vd, va, i, i & tc_mask(vd));
        for (i = 0; i < nb; ++i) tc_set(vd, vb, i, (na + i) & tc_mask(vd));
        for (i = 0; i < n; ++i) tc_set(vd, want_values, i, perm[i] & tc_mask(vd));
        bva = tc_buffer_from(ctx, vd, va, na);
        bvb = tc_buffer_from(ctx, vd, vb, nb);
        bvo = tc_buffer(ctx, vd, n);
        tc_poison(ctx, bvo, vd, n);
    }
    CHECK_OK(gpuprim_merge(ctx, ka, bva, kb, bvb, ko, bvo,
                           descending ? GPUPRIM_ORDER_DESCENDING : GPUPRIM_ORDER_ASCENDING));
    if (check_result) {
        CHECK_BUFFER_EQ(ctx, ko, d, want, n, "merged keys");
        if (with_values) {
            CHECK_BUFFER_EQ(ctx, bvo, vd, want_values, n, "merged values (positions: stability)");
        }
    }
    CHECK_BUFFER_EQ(ctx, ka, d, a, na, "keys_a after the call");
    CHECK_BUFFER_EQ(ctx, kb, d, b, nb, "keys_b after the call");
    if (with_values) {
        CHECK_BUFFER_EQ(ctx, bva, vd, va, na, "values_a after the call");
        CHECK_BUFFER_EQ(ctx, bvb, vd, vb, nb, "values_b after the call");
        CHECK_OK(gpuprim_buffer_destroy(ctx, bva));
        CHECK_OK(gpuprim_buffer_destroy(ctx, bvb));
        CHECK_OK(gpuprim_buffer_destroy(ctx, bvo));
    }
    CHECK_OK(gpuprim_buffer_destroy(ctx, ka));
    CHECK_OK(gpuprim_buffer_destroy(ctx, kb));
    CHECK_OK(gpuprim_buffer_destroy(ctx, ko));
    free(both);
    free(want);
    free(perm);
    free(va);
    free(vb);
    free(want_values);
}

/* The CUDA tile for key and value widths: 512 threads x min(15, 60 / element bytes) outputs. */
static uint64_t cuda_tile(gpuprim_dtype_t d, int with_values, gpuprim_dtype_t vd) {
    const uint64_t bytes = tc_size(d) + (with_values ? tc_size(vd) : 0);
    const uint64_t items = bytes >= 60 ? 1 : (60 / bytes < 15 ? 60 / bytes : 15);
    return 512 * items;
}

static void test_shapes(gpuprim_context_t ctx) {
    static const tc_pattern_t patterns[] = {TC_SMALL_RANGE, TC_SPECIAL, TC_NAN_HEAVY, TC_EQUAL, TC_MODERATE,
                                            TC_RANDOM_BITS, TC_ZEROS};
    size_t di, si;
    int combo = 0;
    for (di = 0; di < TC_DTYPE_COUNT; ++di) {
        const gpuprim_dtype_t d = tc_all_dtypes[di];
        int with_values;
        for (with_values = 0; with_values < 2; ++with_values) {
            const gpuprim_dtype_t vd = value_dtypes[(di + (size_t)with_values) % 5];
            const uint64_t tile = cuda_tile(d, with_values, vd);
            const uint64_t shapes[][2] = {{0, 0},          {0, 5},           {5, 0},        {1, 1},
                                          {tile - 1, 1},   {tile, tile},     {tile + 1, tile - 2}, {3, 2 * tile + 1},
                                          {100003, 7},     {7, 100003},      {65537, 65536}};
            for (si = 0; si < sizeof shapes / sizeof shapes[0]; ++si) {
                const uint64_t na = shapes[si][0], nb = shapes[si][1];
                const int descending = combo & 1;
                const tc_pattern_t p = patterns[combo % 7];
                void *a, *b;
                ++combo;
                a = tc_sorted_keys(d, na, p, descending);
                b = tc_sorted_keys(d, nb, patterns[(combo + 3) % 7], descending);
                tc_where("merge %s na=%llu nb=%llu (%s) %s%s%s", tc_dtype_name(d), (unsigned long long)na,
                         (unsigned long long)nb, tc_pattern_names[p], descending ? "descending" : "ascending",
                         with_values ? ", values " : "", with_values ? tc_dtype_name(vd) : "");
                check_merge(ctx, d, with_values, vd, a, na, b, nb, descending, 1);
                free(a);
                free(b);
            }
        }
    }
}

/* Both runs from one pool of few values (ties across the runs everywhere). */
static void test_ties(gpuprim_context_t ctx) {
    size_t di;
    int descending;
    for (di = 0; di < TC_DTYPE_COUNT; ++di)
        for (descending = 0; descending < 2; ++descending) {
            const gpuprim_dtype_t d = tc_all_dtypes[di];
            void *a = tc_sorted_keys(d, 20011, TC_SMALL_RANGE, descending);
            void *b = tc_sorted_keys(d, 30013, TC_SMALL_RANGE, descending);
            tc_where("merge ties %s %s", tc_dtype_name(d), descending ? "descending" : "ascending");
            check_merge(ctx, d, 1, GPUPRIM_DTYPE_U32, a, 20011, b, 30013, descending, 1);
            free(a);
            free(b);
        }
}

/* Runs out of order: success, inputs unchanged, nothing outside the buffers (the sanitizers and
   compute-sanitizer runs see that). */
static void test_unsorted(gpuprim_context_t ctx) {
    static const uint64_t shapes[][2] = {{100003, 70001}, {7, 20000}, {8000, 3}};
    size_t si;
    for (si = 0; si < 3; ++si) {
        const uint64_t na = shapes[si][0], nb = shapes[si][1];
        void *a = tc_xmalloc(na * 4 + 8), *b = tc_xmalloc(nb * 4 + 8);
        tc_fill(GPUPRIM_DTYPE_U32, a, na, TC_RANDOM_BITS);
        tc_fill(GPUPRIM_DTYPE_U32, b, nb, TC_RANDOM_BITS);
        tc_where("merge of unsorted runs na=%llu nb=%llu", (unsigned long long)na, (unsigned long long)nb);
        check_merge(ctx, GPUPRIM_DTYPE_U32, (int)(si & 1), GPUPRIM_DTYPE_U64, a, na, b, nb, 0, 0);
        free(a);
        free(b);
    }
}

static void test_known_answers(gpuprim_context_t ctx) {
    /* f32 a = [-inf, -0, 1, nan], b = [-1, +0, 1, inf] -> [-inf, -1, -0, +0, 1(a), 1(b), inf, nan] */
    const float a[4] = {-INFINITY, -0.0f, 1.0f, NAN}, b[4] = {-1.0f, 0.0f, 1.0f, INFINITY};
    const uint32_t va[4] = {0, 1, 2, 3}, vb[4] = {4, 5, 6, 7}, want_values[8] = {0, 4, 1, 5, 2, 6, 7, 3};
    uint32_t got[8];
    gpuprim_buffer_t ka = tc_buffer_from(ctx, GPUPRIM_DTYPE_F32, a, 4), kb = tc_buffer_from(ctx, GPUPRIM_DTYPE_F32, b, 4);
    gpuprim_buffer_t bva = tc_buffer_from(ctx, GPUPRIM_DTYPE_U32, va, 4), bvb = tc_buffer_from(ctx, GPUPRIM_DTYPE_U32, vb, 4);
    gpuprim_buffer_t ko = tc_buffer(ctx, GPUPRIM_DTYPE_F32, 8), vo = tc_buffer(ctx, GPUPRIM_DTYPE_U32, 8);
    int i;
    tc_where("merge known answer");
    CHECK_OK(gpuprim_merge(ctx, ka, bva, kb, bvb, ko, vo, GPUPRIM_ORDER_ASCENDING));
    REQUIRE_OK(gpuprim_buffer_download(ctx, vo, 0, got, 8));
    for (i = 0; i < 8; ++i) CHECKF(got[i] == want_values[i], "value %d: %u, expected %u", i, got[i], want_values[i]);
    CHECK_OK(gpuprim_buffer_destroy(ctx, ka));
    CHECK_OK(gpuprim_buffer_destroy(ctx, kb));
    CHECK_OK(gpuprim_buffer_destroy(ctx, bva));
    CHECK_OK(gpuprim_buffer_destroy(ctx, bvb));
    CHECK_OK(gpuprim_buffer_destroy(ctx, ko));
    CHECK_OK(gpuprim_buffer_destroy(ctx, vo));
}

static void test_errors(gpuprim_context_t ctx) {
    const int32_t data[3] = {1, 2, 3};
    gpuprim_buffer_t a = tc_buffer_from(ctx, GPUPRIM_DTYPE_I32, data, 3), b = tc_buffer_from(ctx, GPUPRIM_DTYPE_I32, data, 3);
    gpuprim_buffer_t fb = tc_buffer(ctx, GPUPRIM_DTYPE_F32, 3), va = tc_buffer(ctx, GPUPRIM_DTYPE_U16, 3);
    gpuprim_buffer_t vb = tc_buffer(ctx, GPUPRIM_DTYPE_U16, 3), vb_short = tc_buffer(ctx, GPUPRIM_DTYPE_U16, 2);
    gpuprim_buffer_t gone = tc_buffer(ctx, GPUPRIM_DTYPE_I32, 6);
    tc_known_t out = tc_known(ctx, GPUPRIM_DTYPE_I32, 6), out_short = tc_known(ctx, GPUPRIM_DTYPE_I32, 5);
    tc_known_t vout = tc_known(ctx, GPUPRIM_DTYPE_U16, 6), vout_i8 = tc_known(ctx, GPUPRIM_DTYPE_I8, 6);
    gpuprim_context_t other = NULL;
    gpuprim_buffer_t foreign;
    int fake_context = 0;
    tc_where("merge errors");
    CHECK_OK(gpuprim_buffer_destroy(ctx, gone));
    REQUIRE_OK(gpuprim_context_create(NULL, &other, NULL, 0));
    foreign = tc_buffer(other, GPUPRIM_DTYPE_I32, 3);
    TC_EXPECT_FAIL(ctx, gpuprim_merge(ctx, NULL, NULL, b, NULL, out.b, NULL, GPUPRIM_ORDER_ASCENDING),
                   GPUPRIM_ERROR_NULL_POINTER, "'keys_a'");
    TC_EXPECT_FAIL(ctx, gpuprim_merge(ctx, a, NULL, NULL, NULL, out.b, NULL, GPUPRIM_ORDER_ASCENDING),
                   GPUPRIM_ERROR_NULL_POINTER, "'keys_b'");
    TC_EXPECT_FAIL(ctx, gpuprim_merge(ctx, a, NULL, b, NULL, NULL, NULL, GPUPRIM_ORDER_ASCENDING),
                   GPUPRIM_ERROR_NULL_POINTER, "'keys_out'");
    TC_EXPECT_FAIL(ctx, gpuprim_merge(ctx, a, NULL, b, NULL, gone, NULL, GPUPRIM_ORDER_ASCENDING),
                   GPUPRIM_ERROR_INVALID_HANDLE, "'keys_out'");
    TC_EXPECT_FAIL(ctx, gpuprim_merge(ctx, a, NULL, foreign, NULL, out.b, NULL, GPUPRIM_ORDER_ASCENDING),
                   GPUPRIM_ERROR_CONTEXT_MISMATCH, "'keys_b'");
    TC_EXPECT_FAIL(ctx, gpuprim_merge(ctx, a, NULL, b, NULL, out.b, NULL, (gpuprim_order_t)2),
                   GPUPRIM_ERROR_INVALID_ENUM, "'order'");
    TC_EXPECT_FAIL(ctx, gpuprim_merge(ctx, a, NULL, fb, NULL, out.b, NULL, GPUPRIM_ORDER_ASCENDING),
                   GPUPRIM_ERROR_DTYPE_MISMATCH, "'keys_b'");
    TC_EXPECT_FAIL(ctx, gpuprim_merge(ctx, a, NULL, b, NULL, out_short.b, NULL, GPUPRIM_ORDER_ASCENDING),
                   GPUPRIM_ERROR_SIZE_MISMATCH, "'keys_out'");
    TC_EXPECT_FAIL(ctx, gpuprim_merge(ctx, a, va, b, NULL, out.b, vout.b, GPUPRIM_ORDER_ASCENDING),
                   GPUPRIM_ERROR_INVALID_ARGUMENT, "'values_b'");
    TC_EXPECT_FAIL(ctx, gpuprim_merge(ctx, a, va, b, vb, out.b, vout_i8.b, GPUPRIM_ORDER_ASCENDING),
                   GPUPRIM_ERROR_DTYPE_MISMATCH, "'values_out'");
    TC_EXPECT_FAIL(ctx, gpuprim_merge(ctx, a, va, b, vb_short, out.b, vout.b, GPUPRIM_ORDER_ASCENDING),
                   GPUPRIM_ERROR_SIZE_MISMATCH, "'values_b'");
    /* outputs over the inputs or each other */
    {
        gpuprim_buffer_t sub = tc_view(ctx, out.b, GPUPRIM_DTYPE_I32, 0, 3), vsub = tc_view(ctx, vout.b, GPUPRIM_DTYPE_U16, 0, 3);
        TC_EXPECT_FAIL(ctx, gpuprim_merge(ctx, sub, NULL, b, NULL, out.b, NULL, GPUPRIM_ORDER_ASCENDING),
                       GPUPRIM_ERROR_INVALID_ARGUMENT, "'keys_out'");
        TC_EXPECT_FAIL(ctx, gpuprim_merge(ctx, a, vsub, b, vb, out.b, vout.b, GPUPRIM_ORDER_ASCENDING),
                       GPUPRIM_ERROR_INVALID_ARGUMENT, "'values_out'");
        CHECK_OK(gpuprim_buffer_destroy(ctx, sub));
        CHECK_OK(gpuprim_buffer_destroy(ctx, vsub));
    }
    CHECK_STATUS(gpuprim_merge(NULL, a, NULL, b, NULL, out.b, NULL, GPUPRIM_ORDER_ASCENDING), GPUPRIM_ERROR_NULL_POINTER);
    CHECK_STATUS(gpuprim_merge((gpuprim_context_t)&fake_context, a, NULL, b, NULL, out.b, NULL, GPUPRIM_ORDER_ASCENDING),
                 GPUPRIM_ERROR_INVALID_HANDLE);
    TC_CHECK_UNCHANGED(ctx, out_short);
    TC_CHECK_UNCHANGED(ctx, vout_i8);
    /* the outputs of the other failed calls */
    TC_CHECK_UNCHANGED(ctx, out);
    TC_CHECK_UNCHANGED(ctx, vout);
    CHECK_OK(gpuprim_buffer_destroy(other, foreign));
    CHECK_OK(gpuprim_context_destroy(other));
    tc_free_known(ctx, out);
    tc_free_known(ctx, out_short);
    tc_free_known(ctx, vout);
    tc_free_known(ctx, vout_i8);
    CHECK_OK(gpuprim_buffer_destroy(ctx, a));
    CHECK_OK(gpuprim_buffer_destroy(ctx, b));
    CHECK_OK(gpuprim_buffer_destroy(ctx, fb));
    CHECK_OK(gpuprim_buffer_destroy(ctx, va));
    CHECK_OK(gpuprim_buffer_destroy(ctx, vb));
    CHECK_OK(gpuprim_buffer_destroy(ctx, vb_short));
}

/* The same output on CPU contexts of 1, 2 and 7 threads (several pieces). */
static void test_cpu_threads(void) {
    static const int threads[3] = {1, 2, 7};
    int t;
    for (t = 0; t < 3; ++t) {
        gpuprim_context_options_t options;
        gpuprim_context_t cpu = NULL;
        void *a = tc_sorted_keys(GPUPRIM_DTYPE_F64, 300007, TC_NAN_SPARSE, t & 1);
        void *b = tc_sorted_keys(GPUPRIM_DTYPE_F64, 200003, TC_SMALL_RANGE, t & 1);
        gpuprim_context_options_init(&options);
        options.backend = GPUPRIM_BACKEND_CPU;
        options.cpu_threads = threads[t];
        REQUIRE_OK(gpuprim_context_create(&options, &cpu, NULL, 0));
        tc_where("merge on %d CPU threads", threads[t]);
        check_merge(cpu, GPUPRIM_DTYPE_F64, 1, GPUPRIM_DTYPE_U32, a, 300007, b, 200003, t & 1, 1);
        CHECK_OK(gpuprim_context_destroy(cpu));
        free(a);
        free(b);
    }
}

int main(void) {
    gpuprim_context_t ctx = tc_init("test_merge");
    test_known_answers(ctx);
    test_errors(ctx);
    test_shapes(ctx);
    test_ties(ctx);
    test_unsorted(ctx);
    test_cpu_threads();
    return tc_finish();
}
