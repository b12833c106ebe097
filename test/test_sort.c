/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpuprim_sort: keys only and key/value pairs, every key dtype, values of
 * every dtype, both orders, in place and out of place; checked bit for bit
 * against a stable reference sort (qsort on (order key, input index)).
 */
#include "test_common.h"

static const uint64_t sizes[] = {0, 1, 2, 3, 31, 32, 33, 255, 1023, 1024, 1025, 4097, 65537, 1000003};

/* Value configurations rotated through the matrix: -1 means keys only. */
static const int value_configs[] = {-1, GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_U64, GPUPRIM_DTYPE_F64,
                                    GPUPRIM_DTYPE_I32, GPUPRIM_DTYPE_F32, GPUPRIM_DTYPE_I64};
#define VALUE_CONFIG_COUNT (sizeof value_configs / sizeof value_configs[0])

static const char *placement_names[4] = {"keys and values out of place", "keys and values in place",
                                         "keys in place, values out of place",
                                         "keys out of place, values in place"};

/* Values that identify their input position (integers: the index; floats:
 * random bits, NaN payloads included, which must still move bit for bit). */
static void fill_values(gpuprim_dtype_t vd, void *values, uint64_t n) {
    uint64_t i;
    for (i = 0; i < n; ++i) tc_set(vd, values, i, tc_is_float(vd) ? tc_rand() : i);
}

/*
 * Sorts keys[0..n) (with values when value_dtype >= 0) through the library
 * and checks keys, values and, out of place, that the inputs are untouched.
 * placement: index into placement_names.
 */
static void run_sort(gpuprim_context_t ctx, gpuprim_dtype_t kd, const void *keys, uint64_t n,
                     int value_dtype, int descending, int placement) {
    gpuprim_order_t order = descending ? GPUPRIM_ORDER_DESCENDING : GPUPRIM_ORDER_ASCENDING;
    int keys_in_place = placement == 1 || placement == 2;
    int values_in_place = placement == 1 || placement == 3;
    gpuprim_dtype_t vd = value_dtype >= 0 ? (gpuprim_dtype_t)value_dtype : GPUPRIM_DTYPE_U32;
    uint64_t *perm = (uint64_t *)tc_xmalloc(n * sizeof *perm);
    void *want_keys = tc_xmalloc(n * tc_size(kd)), *values = NULL, *want_values = NULL, *got;
    gpuprim_buffer_t kin, kout, vin = NULL, vout = NULL;

    tc_reference_sort_permutation(kd, keys, n, descending, perm);
    tc_permute(kd, keys, perm, n, want_keys);

    kin = tc_buffer_from(ctx, kd, keys, n);
    kout = keys_in_place ? kin : tc_buffer(ctx, kd, n);
    if (!keys_in_place) tc_poison(ctx, kout, kd, n);
    if (value_dtype >= 0) {
        values = tc_xmalloc(n * tc_size(vd));
        want_values = tc_xmalloc(n * tc_size(vd));
        fill_values(vd, values, n);
        tc_permute(vd, values, perm, n, want_values);
        vin = tc_buffer_from(ctx, vd, values, n);
        vout = values_in_place ? vin : tc_buffer(ctx, vd, n);
        if (!values_in_place) tc_poison(ctx, vout, vd, n);
    }

    CHECK_OK(gpuprim_sort(ctx, kin, vin, kout, vout, order));

    got = tc_download(ctx, kout, kd, n);
    CHECK_ARRAY_EQ(kd, got, want_keys, n, "sorted keys");
    free(got);
    if (!keys_in_place) {
        got = tc_download(ctx, kin, kd, n);
        CHECK_ARRAY_EQ(kd, got, keys, n, "keys_in after an out-of-place sort");
        free(got);
        CHECK_OK(gpuprim_buffer_destroy(ctx, kout));
    }
    CHECK_OK(gpuprim_buffer_destroy(ctx, kin));
    if (value_dtype >= 0) {
        got = tc_download(ctx, vout, vd, n);
        CHECK_ARRAY_EQ(vd, got, want_values, n, "values after the sort (stable order)");
        free(got);
        if (!values_in_place) {
            got = tc_download(ctx, vin, vd, n);
            CHECK_ARRAY_EQ(vd, got, values, n, "values_in after an out-of-place sort");
            free(got);
            CHECK_OK(gpuprim_buffer_destroy(ctx, vout));
        }
        CHECK_OK(gpuprim_buffer_destroy(ctx, vin));
    }
    free(values);
    free(want_values);
    free(want_keys);
    free(perm);
}

static void where_sort(gpuprim_dtype_t kd, uint64_t n, int pattern, int value_dtype, int descending,
                       int placement) {
    tc_where("sort %s keys%s%s n=%llu pattern=%s %s, %s", tc_dtype_name(kd),
             value_dtype >= 0 ? " with values " : " only",
             value_dtype >= 0 ? tc_dtype_name((gpuprim_dtype_t)value_dtype) : "",
             (unsigned long long)n, pattern >= 0 ? tc_pattern_names[pattern] : "custom",
             descending ? "descending" : "ascending", placement_names[placement]);
}

static void test_sort_matrix(gpuprim_context_t ctx) {
    size_t di, si;
    unsigned rotation = 0;
    int p, descending;
    for (di = 0; di < 6; ++di) {
        gpuprim_dtype_t kd = tc_all_dtypes[di];
        for (si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
            uint64_t n = sizes[si];
            if (n > tc_max_count()) continue;
            for (p = 0; p < TC_PATTERN_COUNT; ++p) {
                void *keys;
                if (n > 100000 && p != TC_RANDOM_BITS && p != TC_SMALL_RANGE) continue;
                keys = tc_xmalloc(n * tc_size(kd));
                tc_fill(kd, keys, n, (tc_pattern_t)p);
                for (descending = 0; descending < 2; ++descending) {
                    int value_dtype = value_configs[rotation % VALUE_CONFIG_COUNT];
                    int placement = (int)((rotation / VALUE_CONFIG_COUNT) % 4);
                    ++rotation;
                    where_sort(kd, n, p, value_dtype, descending, placement);
                    run_sort(ctx, kd, keys, n, value_dtype, descending, placement);
                }
                free(keys);
            }
        }
    }
}

/* Every key dtype x every value dtype x both orders x all placements, on
 * keys with many duplicates: stability and bit-exact value movement. */
static void test_sort_stability(gpuprim_context_t ctx) {
    size_t di;
    unsigned vi;
    int descending, placement;
    const uint64_t n = 4099;
    for (di = 0; di < 6; ++di) {
        gpuprim_dtype_t kd = tc_all_dtypes[di];
        void *keys = tc_xmalloc(n * tc_size(kd));
        tc_fill(kd, keys, n, TC_SMALL_RANGE);
        for (vi = 0; vi < VALUE_CONFIG_COUNT; ++vi)
            for (descending = 0; descending < 2; ++descending)
                for (placement = 0; placement < 4; ++placement) {
                    where_sort(kd, n, TC_SMALL_RANGE, value_configs[vi], descending, placement);
                    run_sort(ctx, kd, keys, n, value_configs[vi], descending, placement);
                }
        /* all keys equal: the values must come out in input order */
        tc_fill(kd, keys, n, TC_EQUAL);
        for (descending = 0; descending < 2; ++descending) {
            where_sort(kd, n, TC_EQUAL, GPUPRIM_DTYPE_U32, descending, 0);
            run_sort(ctx, kd, keys, n, GPUPRIM_DTYPE_U32, descending, 0);
        }
        free(keys);
    }
}

/* Keys that differ only in a few bit positions, so that many radix digits
 * are constant (a sort that skips trivial passes must still be right), for
 * high, middle and low bits. */
static void test_sort_bit_patterns(gpuprim_context_t ctx) {
    size_t di;
    unsigned shift;
    const uint64_t n = 70001;
    for (di = 0; di < 6; ++di) {
        gpuprim_dtype_t kd = tc_all_dtypes[di];
        unsigned bits = (unsigned)tc_size(kd) * 8;
        void *keys = tc_xmalloc(n * tc_size(kd));
        for (shift = 0; shift + 3 <= bits; shift += bits / 4 - 1) {
            uint64_t i, base = tc_rand();
            for (i = 0; i < n; ++i) tc_set(kd, keys, i, base ^ ((tc_rand() & 7) << shift));
            tc_where("sort %s keys differing in bits %u..%u", tc_dtype_name(kd), shift, shift + 2);
            run_sort(ctx, kd, keys, n, GPUPRIM_DTYPE_U32, 0, 0);
            run_sort(ctx, kd, keys, n, -1, 1, 1);
        }
        free(keys);
    }
}

/* Keys and values whose first elements are not aligned: wrapped views. n:
 * one middle size and one that takes the per-pass kernels with full tiles
 * (which stage aligned values 16 bytes at a time, misaligned ones by element). */
static void test_sort_unaligned_views(gpuprim_context_t ctx, uint64_t n) {
    size_t di;
    uint64_t offset;
    if (n > tc_max_count()) return;
    /* The large size: one 4-byte and one 8-byte key type (i32, u64) only. */
    for (di = 0; di < 6; di += n > 100000 ? 3 : 1) {
        gpuprim_dtype_t kd = tc_all_dtypes[di];
        void *keys = tc_xmalloc((n + 3) * tc_size(kd)), *want = tc_xmalloc(n * tc_size(kd)), *got;
        uint32_t *values = (uint32_t *)tc_xmalloc((n + 3) * 4), *want_values = (uint32_t *)tc_xmalloc(n * 4);
        uint64_t *perm = (uint64_t *)tc_xmalloc(n * sizeof *perm);
        void *kdata = NULL, *vdata = NULL, *kout_data = NULL;
        gpuprim_buffer_t kbase, vbase, kout_base;
        tc_fill(kd, keys, n + 3, TC_RANDOM_BITS);
        fill_values(GPUPRIM_DTYPE_U32, values, n + 3);
        kbase = tc_buffer_from(ctx, kd, keys, n + 3);
        vbase = tc_buffer_from(ctx, GPUPRIM_DTYPE_U32, values, n + 3);
        kout_base = tc_buffer(ctx, kd, n + 3);
        REQUIRE_OK(gpuprim_buffer_get_info(ctx, kbase, NULL, NULL, &kdata));
        REQUIRE_OK(gpuprim_buffer_get_info(ctx, vbase, NULL, NULL, &vdata));
        REQUIRE_OK(gpuprim_buffer_get_info(ctx, kout_base, NULL, NULL, &kout_data));
        for (offset = 1; offset <= 3; ++offset) {
            gpuprim_buffer_t kview = NULL, vview = NULL, kout_view = NULL;
            uint64_t voffset = 4 - offset, koffset_out = offset % 3;
            const char *host_keys = (const char *)keys + offset * tc_size(kd);
            tc_where("sort %s n=%llu keys view at +%llu, values in place at +%llu, keys out at +%llu",
                     tc_dtype_name(kd), (unsigned long long)n, (unsigned long long)offset,
                     (unsigned long long)voffset - 1, (unsigned long long)koffset_out);
            REQUIRE_OK(gpuprim_buffer_upload(ctx, kbase, 0, keys, n + 3));
            REQUIRE_OK(gpuprim_buffer_upload(ctx, vbase, 0, values, n + 3));
            REQUIRE_OK(gpuprim_buffer_wrap(ctx, kd, (char *)kdata + offset * tc_size(kd), n, &kview));
            REQUIRE_OK(gpuprim_buffer_wrap(ctx, GPUPRIM_DTYPE_U32, (char *)vdata + (voffset - 1) * 4, n, &vview));
            REQUIRE_OK(gpuprim_buffer_wrap(ctx, kd, (char *)kout_data + koffset_out * tc_size(kd), n,
                                           &kout_view));
            tc_reference_sort_permutation(kd, host_keys, n, 0, perm);
            tc_permute(kd, host_keys, perm, n, want);
            tc_permute(GPUPRIM_DTYPE_U32, values + (voffset - 1), perm, n, want_values);
            CHECK_OK(gpuprim_sort(ctx, kview, vview, kout_view, vview, GPUPRIM_ORDER_ASCENDING));
            got = tc_download(ctx, kout_view, kd, n);
            CHECK_ARRAY_EQ(kd, got, want, n, "sorted keys (views)");
            free(got);
            got = tc_download(ctx, vview, GPUPRIM_DTYPE_U32, n);
            CHECK_ARRAY_EQ(GPUPRIM_DTYPE_U32, got, want_values, n, "values (views)");
            free(got);
            got = tc_download(ctx, kbase, kd, n + 3);
            CHECK_ARRAY_EQ(kd, got, keys, n + 3, "keys input buffer after sorting a view of it");
            free(got);
            CHECK_OK(gpuprim_buffer_destroy(ctx, kview));
            CHECK_OK(gpuprim_buffer_destroy(ctx, vview));
            CHECK_OK(gpuprim_buffer_destroy(ctx, kout_view));
        }
        CHECK_OK(gpuprim_buffer_destroy(ctx, kbase));
        CHECK_OK(gpuprim_buffer_destroy(ctx, vbase));
        CHECK_OK(gpuprim_buffer_destroy(ctx, kout_base));
        free(keys);
        free(want);
        free(values);
        free(want_values);
        free(perm);
    }
}

/* The documented float order, spelled out. */
static void test_sort_known_float_order(gpuprim_context_t ctx) {
    /* NaN, 1, -0, +inf, -inf, +0, -1, -NaN, NaN with payload 1, -2.5 */
    uint32_t in[10] = {0x7FC00000u, 0x3F800000u, 0x80000000u, 0x7F800000u, 0xFF800000u,
                       0x00000000u, 0xBF800000u, 0xFFC00000u, 0x7F800001u, 0xC0200000u};
    uint32_t ascending[10] = {0xFF800000u, 0xC0200000u, 0xBF800000u, 0x80000000u, 0x00000000u,
                              0x3F800000u, 0x7F800000u, 0x7F800001u, 0x7FC00000u, 0xFFC00000u};
    uint32_t descending[10], got[10];
    int32_t index[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, got_index[10];
    int32_t ascending_index[10] = {4, 9, 6, 2, 5, 1, 3, 8, 0, 7};
    int i;
    gpuprim_buffer_t k = tc_buffer_from(ctx, GPUPRIM_DTYPE_F32, in, 10);
    gpuprim_buffer_t v = tc_buffer_from(ctx, GPUPRIM_DTYPE_I32, index, 10);
    for (i = 0; i < 10; ++i) descending[i] = ascending[9 - i];
    tc_where("sort f32 known order");
    CHECK_OK(gpuprim_sort(ctx, k, v, k, v, GPUPRIM_ORDER_ASCENDING));
    CHECK_OK(gpuprim_buffer_download(ctx, k, 0, got, 10));
    CHECK_OK(gpuprim_buffer_download(ctx, v, 0, got_index, 10));
    CHECK_ARRAY_EQ(GPUPRIM_DTYPE_F32, got, ascending, 10, "ascending f32 specials");
    CHECK_ARRAY_EQ(GPUPRIM_DTYPE_I32, got_index, ascending_index, 10, "ascending f32 specials, values");
    CHECK_OK(gpuprim_buffer_upload(ctx, k, 0, in, 10));
    CHECK_OK(gpuprim_sort(ctx, k, NULL, k, NULL, GPUPRIM_ORDER_DESCENDING));
    CHECK_OK(gpuprim_buffer_download(ctx, k, 0, got, 10));
    CHECK_ARRAY_EQ(GPUPRIM_DTYPE_F32, got, descending, 10, "descending f32 specials");
    CHECK_OK(gpuprim_buffer_destroy(ctx, k));
    CHECK_OK(gpuprim_buffer_destroy(ctx, v));
    {
        /* signed integers by value, unsigned by value */
        int64_t s[6] = {5, INT64_MIN, -1, INT64_MAX, 0, -7};
        int64_t s_sorted[6] = {INT64_MIN, -7, -1, 0, 5, INT64_MAX};
        int64_t s_got[6];
        uint32_t u[5] = {0xFFFFFFFFu, 0u, 0x80000000u, 7u, 0x7FFFFFFFu};
        uint32_t u_desc[5] = {0xFFFFFFFFu, 0x80000000u, 0x7FFFFFFFu, 7u, 0u};
        uint32_t u_got[5];
        gpuprim_buffer_t sb = tc_buffer_from(ctx, GPUPRIM_DTYPE_I64, s, 6);
        gpuprim_buffer_t ub = tc_buffer_from(ctx, GPUPRIM_DTYPE_U32, u, 5);
        tc_where("sort integer known order");
        CHECK_OK(gpuprim_sort(ctx, sb, NULL, sb, NULL, GPUPRIM_ORDER_ASCENDING));
        CHECK_OK(gpuprim_buffer_download(ctx, sb, 0, s_got, 6));
        CHECK_ARRAY_EQ(GPUPRIM_DTYPE_I64, s_got, s_sorted, 6, "ascending i64");
        CHECK_OK(gpuprim_sort(ctx, ub, NULL, ub, NULL, GPUPRIM_ORDER_DESCENDING));
        CHECK_OK(gpuprim_buffer_download(ctx, ub, 0, u_got, 5));
        CHECK_ARRAY_EQ(GPUPRIM_DTYPE_U32, u_got, u_desc, 5, "descending u32");
        CHECK_OK(gpuprim_buffer_destroy(ctx, sb));
        CHECK_OK(gpuprim_buffer_destroy(ctx, ub));
    }
}

int main(void) {
    gpuprim_context_t ctx = tc_init("test_sort");
    test_sort_known_float_order(ctx);
    test_sort_matrix(ctx);
    test_sort_stability(ctx);
    test_sort_bit_patterns(ctx);
    test_sort_unaligned_views(ctx, 5003);
    test_sort_unaligned_views(ctx, 700001);
    return tc_finish();
}
