/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpuprim_sort and gpuprim_sort_with_options: keys only and key/value pairs,
 * every key dtype (1, 2, 4, 8 bytes), values of every dtype, both orders, in
 * place and out of place, whole keys and bit ranges [begin_bit, end_bit).
 * Checked bit for bit against a stable reference sort (an LSD radix sort of
 * the documented order key, test_common.h), and independently of it: the
 * output is sorted under the documented order, a permutation of the input
 * (keys: the same multiset; with index values: keys_out[i] ==
 * keys_in[values_out[i]]), and stable (equal sort bits: increasing index).
 * test_sort_distributions: key distributions (presorted and strictly
 * reversed in the requested order and their near misses, non-increasing with
 * ties, low-entropy keys, float orders with NaNs and +-0, bit ranges sorted
 * in the range but not as whole keys and the other way round, argsort) up to
 * the CUDA sort's large-input sizes. test_argsort_wide_indices: 4-byte keys
 * into 8-byte indices past the medium tile, 1 to 4 executed passes.
 * test_sort_many_keys_histogram: past 2^21 keys (the CUDA sort's many-keys
 * histogram). test_sort_packed_pairs: 4-byte pairs and argsorts at even
 * and odd counts, outputs off 8-byte alignment (the CUDA passes' packed
 * pairs). Sections (GPUPRIM_TEST_ONLY / GPUPRIM_TEST_SKIP,
 * test_common.h): known_orders, bit_ranges, bit_patterns, matrix,
 * stability, unaligned_views, distributions, argsort_wide,
 * many_keys_histogram, huge_pairs8, packed_pairs (ctest runs matrix,
 * distributions and unaligned_views as entries of their own).
 */
#include "test_common.h"

/* Around the CUDA paths' limits: one block up to 2048/4096 keys, the fused
 * launch up to 128 tiles of 2048 keys (262144), the medium tile to 2^19. */
static const uint64_t sizes[] = {0,    1,    2,    3,    31,    32,     33,     255,    1023,   1024,
                                 1025, 2048, 2049, 4096, 4097, 65537, 262145, 524289, 1000003};

/* Value configurations rotated through the matrix: -1 means keys only. */
static const int value_configs[] = {-1,
                                    GPUPRIM_DTYPE_U32,
                                    GPUPRIM_DTYPE_U64,
                                    GPUPRIM_DTYPE_F64,
                                    GPUPRIM_DTYPE_I32,
                                    GPUPRIM_DTYPE_F16,
                                    GPUPRIM_DTYPE_U8,
                                    GPUPRIM_DTYPE_F32,
                                    GPUPRIM_DTYPE_I64,
                                    GPUPRIM_DTYPE_I16,
                                    GPUPRIM_DTYPE_BF16,
                                    GPUPRIM_DTYPE_I8,
                                    GPUPRIM_DTYPE_U16};
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

/* How a sort is asked for: gpuprim_sort(order), or gpuprim_sort_with_options
 * with NULL options (ascending only), default options with the order set,
 * or an explicit bit range. */
typedef enum sort_call { CALL_SORT = 0, CALL_OPTIONS_NULL, CALL_OPTIONS_DEFAULT, CALL_OPTIONS_RANGE } sort_call_t;

typedef struct sort_spec {
    sort_call_t call;
    unsigned begin_bit, end_bit; /* CALL_OPTIONS_RANGE: as passed (end_bit 0: the key's width) */
} sort_spec_t;

static const sort_spec_t whole_sort = {CALL_SORT, 0, 0};

static gpuprim_status_t call_sort(gpuprim_context_t ctx, sort_spec_t spec, gpuprim_buffer_t kin,
                                  gpuprim_buffer_t vin, gpuprim_buffer_t kout, gpuprim_buffer_t vout,
                                  int descending) {
    gpuprim_sort_options_t options;
    gpuprim_order_t order = descending ? GPUPRIM_ORDER_DESCENDING : GPUPRIM_ORDER_ASCENDING;
    if (spec.call == CALL_SORT) return gpuprim_sort(ctx, kin, vin, kout, vout, order);
    if (spec.call == CALL_OPTIONS_NULL) return gpuprim_sort_with_options(ctx, kin, vin, kout, vout, NULL);
    gpuprim_sort_options_init(&options);
    options.order = (int32_t)order;
    if (spec.call == CALL_OPTIONS_RANGE) {
        options.begin_bit = spec.begin_bit;
        options.end_bit = spec.end_bit;
    }
    return gpuprim_sort_with_options(ctx, kin, vin, kout, vout, &options);
}

/*
 * Checks of a sort result that do not use the reference sort:
 * - sorted: the sort bits of got_keys never decrease;
 * - a permutation: got_keys is the multiset of keys (bits compared);
 * - with index values (index != NULL: values_out as input positions):
 *   every index once, got_keys[i] == keys[index[i]] bit for bit, and keys
 *   equal in the sort bits keep their input order (stability).
 */
static void check_sort_properties(gpuprim_dtype_t kd, const void *keys, const void *got_keys,
                                  const uint64_t *index, uint64_t n, int descending, unsigned begin_bit,
                                  unsigned end_bit) {
    uint64_t i, unsorted = 0, unstable = 0, first_unsorted = 0, first_unstable = 0;
    tc.checks++;
    for (i = 1; i < n; ++i) {
        uint64_t a = tc_sort_bits(kd, tc_get(kd, got_keys, i - 1), descending, begin_bit, end_bit);
        uint64_t b = tc_sort_bits(kd, tc_get(kd, got_keys, i), descending, begin_bit, end_bit);
        if (a > b && unsorted++ == 0) first_unsorted = i;
        if (index && a == b && index[i - 1] >= index[i] && unstable++ == 0) first_unstable = i;
    }
    if (unsorted)
        tc_fail(__FILE__, __LINE__, "output not sorted: %llu descents, first at [%llu]: 0x%llx then 0x%llx",
                (unsigned long long)unsorted, (unsigned long long)first_unsorted,
                (unsigned long long)tc_get(kd, got_keys, first_unsorted - 1),
                (unsigned long long)tc_get(kd, got_keys, first_unsorted));
    if (unstable)
        tc_fail(__FILE__, __LINE__, "not stable: %llu equal-key pairs out of input order, first at [%llu] "
                "(input positions %llu then %llu)", (unsigned long long)unstable,
                (unsigned long long)first_unstable, (unsigned long long)index[first_unstable - 1],
                (unsigned long long)index[first_unstable]);
    if (index) {
        unsigned char *seen = (unsigned char *)tc_xmalloc(n);
        uint64_t bad = 0, first_bad = 0;
        memset(seen, 0, n);
        for (i = 0; i < n; ++i) {
            int ok = index[i] < n && !seen[index[i]] &&
                     tc_get(kd, got_keys, i) == tc_get(kd, keys, index[i]);
            if (index[i] < n) seen[index[i]] = 1;
            if (!ok && bad++ == 0) first_bad = i;
        }
        if (bad)
            tc_fail(__FILE__, __LINE__, "not a permutation: %llu positions wrong, first at [%llu] "
                    "(index %llu, key 0x%llx)", (unsigned long long)bad, (unsigned long long)first_bad,
                    (unsigned long long)index[first_bad], (unsigned long long)tc_get(kd, got_keys, first_bad));
        free(seen);
    } else {
        uint64_t *a = (uint64_t *)tc_xmalloc(n * 8), *b = (uint64_t *)tc_xmalloc(n * 8);
        for (i = 0; i < n; ++i) {
            a[i] = tc_get(kd, keys, i);
            b[i] = tc_get(kd, got_keys, i);
        }
        tc_sort_u64(a, n);
        tc_sort_u64(b, n);
        if (n && memcmp(a, b, n * 8) != 0)
            tc_fail(__FILE__, __LINE__, "output keys are not the input keys' multiset");
        free(a);
        free(b);
    }
}

/*
 * Sorts keys[0..n) (with values when value_dtype >= 0) through the library,
 * as spec says, and checks keys, values and, out of place, that the inputs
 * are untouched; outputs are poisoned first. placement: index into
 * placement_names.
 */
static void run_sort_spec(gpuprim_context_t ctx, gpuprim_dtype_t kd, const void *keys, uint64_t n,
                          int value_dtype, int descending, int placement, sort_spec_t spec) {
    int keys_in_place = placement == 1 || placement == 2;
    int values_in_place = placement == 1 || placement == 3;
    gpuprim_dtype_t vd = value_dtype >= 0 ? (gpuprim_dtype_t)value_dtype : GPUPRIM_DTYPE_U32;
    unsigned begin_bit = spec.call == CALL_OPTIONS_RANGE ? spec.begin_bit : 0;
    unsigned end_bit = spec.call == CALL_OPTIONS_RANGE && spec.end_bit != 0 ? spec.end_bit : tc_bits(kd);
    uint64_t *perm = (uint64_t *)tc_xmalloc(n * sizeof *perm);
    void *want_keys = tc_xmalloc(n * tc_size(kd)), *values = NULL, *want_values = NULL, *got;
    gpuprim_buffer_t kin, kout, vin = NULL, vout = NULL;

    if (spec.call == CALL_OPTIONS_NULL) descending = 0;
    tc_reference_sort_permutation_bits(kd, keys, n, descending, begin_bit, end_bit, perm);
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

    CHECK_OK(call_sort(ctx, spec, kin, vin, kout, vout, descending));

    got = tc_download(ctx, kout, kd, n);
    CHECK_ARRAY_EQ(kd, got, want_keys, n, "sorted keys");
    if (value_dtype < 0) {
        check_sort_properties(kd, keys, got, NULL, n, descending, begin_bit, end_bit);
    } else if (!tc_is_float(vd) && tc_size(vd) >= 4) {
        /* the values are the input positions */
        void *got_values = tc_download(ctx, vout, vd, n);
        uint64_t i, *index = (uint64_t *)tc_xmalloc(n * sizeof *index);
        for (i = 0; i < n; ++i) index[i] = tc_get(vd, got_values, i);
        check_sort_properties(kd, keys, got, index, n, descending, begin_bit, end_bit);
        free(index);
        free(got_values);
    }
    free(got);
    if (!keys_in_place) {
        CHECK_BUFFER_EQ(ctx, kin, kd, keys, n, "keys_in after an out-of-place sort");
        CHECK_OK(gpuprim_buffer_destroy(ctx, kout));
    }
    CHECK_OK(gpuprim_buffer_destroy(ctx, kin));
    if (value_dtype >= 0) {
        CHECK_BUFFER_EQ(ctx, vout, vd, want_values, n, "values after the sort (stable order)");
        if (!values_in_place) {
            CHECK_BUFFER_EQ(ctx, vin, vd, values, n, "values_in after an out-of-place sort");
            CHECK_OK(gpuprim_buffer_destroy(ctx, vout));
        }
        CHECK_OK(gpuprim_buffer_destroy(ctx, vin));
    }
    free(values);
    free(want_values);
    free(want_keys);
    free(perm);
}

static void run_sort(gpuprim_context_t ctx, gpuprim_dtype_t kd, const void *keys, uint64_t n,
                     int value_dtype, int descending, int placement) {
    run_sort_spec(ctx, kd, keys, n, value_dtype, descending, placement, whole_sort);
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
    for (di = 0; di < TC_DTYPE_COUNT; ++di) {
        gpuprim_dtype_t kd = tc_all_dtypes[di];
        for (si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
            uint64_t n = sizes[si];
            if (n > tc_max_count()) continue;
            for (p = 0; p < TC_PATTERN_COUNT; ++p) {
                void *keys;
                if (n > 100000 && p != TC_RANDOM_BITS && p != TC_SMALL_RANGE) continue;
                /* the largest size: the radix sort's last pass in full tiles */
                if (n > 600000 && p != TC_RANDOM_BITS) continue;
                keys = tc_xmalloc(n * tc_size(kd));
                tc_fill(kd, keys, n, (tc_pattern_t)p);
                for (descending = 0; descending < 2; ++descending) {
                    int value_dtype = value_configs[rotation % VALUE_CONFIG_COUNT];
                    int placement = (int)((rotation / VALUE_CONFIG_COUNT) % 4);
                    /* the entry point: gpuprim_sort, or with_options (NULL, defaults
                       with the order, or the whole key as an explicit range) */
                    sort_spec_t spec = whole_sort;
                    switch ((rotation / 3) % 4) {
                    case 0: break;
                    case 1: spec.call = descending ? CALL_OPTIONS_DEFAULT : CALL_OPTIONS_NULL; break;
                    case 2: spec.call = CALL_OPTIONS_DEFAULT; break;
                    default: spec.call = CALL_OPTIONS_RANGE, spec.end_bit = tc_bits(kd); break;
                    }
                    ++rotation;
                    where_sort(kd, n, p, value_dtype, descending, placement);
                    run_sort_spec(ctx, kd, keys, n, value_dtype, descending, placement, spec);
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
    for (di = 0; di < TC_DTYPE_COUNT; ++di) {
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
    for (di = 0; di < TC_DTYPE_COUNT; ++di) {
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
    /* The large size: i32, u64, f16 and u8 keys only. */
    for (di = 0; di < TC_DTYPE_COUNT; di += n > 100000 ? 3 : 1) {
        gpuprim_dtype_t kd = tc_all_dtypes[di];
        void *keys = tc_xmalloc((n + 3) * tc_size(kd)), *want = tc_xmalloc(n * tc_size(kd));
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
            CHECK_BUFFER_EQ(ctx, kout_view, kd, want, n, "sorted keys (views)");
            CHECK_BUFFER_EQ(ctx, vview, GPUPRIM_DTYPE_U32, want_values, n, "values (views)");
            CHECK_BUFFER_EQ(ctx, kbase, kd, keys, n + 3, "keys input buffer after sorting a view of it");
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

/* The documented order of the 16-bit floats, spelled out: -inf < ... < -0 <
 * +0 < ... < +inf < positive NaNs by increasing bits < negative NaNs by
 * decreasing bits; descending is the exact reverse. */
static void test_sort_known_half_order(gpuprim_context_t ctx) {
    /* NaN, 1, -0, +inf, -inf, +0, -1, -NaN, NaN payload 1, -2.5, all-ones -NaN,
       the least -NaN, +min subnormal, -min subnormal */
    static const uint16_t f16_in[14] = {0x7E00, 0x3C00, 0x8000, 0x7C00, 0xFC00, 0x0000, 0xBC00,
                                        0xFE00, 0x7C01, 0xC100, 0xFFFF, 0xFC01, 0x0001, 0x8001};
    static const uint16_t bf16_in[14] = {0x7FC0, 0x3F80, 0x8000, 0x7F80, 0xFF80, 0x0000, 0xBF80,
                                         0xFFC0, 0x7F81, 0xC020, 0xFFFF, 0xFF81, 0x0001, 0x8001};
    /* the same positions for both formats */
    static const int32_t ascending_index[14] = {4, 9, 6, 13, 2, 5, 12, 1, 3, 8, 0, 10, 7, 11};
    const gpuprim_dtype_t types[2] = {GPUPRIM_DTYPE_F16, GPUPRIM_DTYPE_BF16};
    int t, descending;
    for (t = 0; t < 2; ++t) {
        const uint16_t *in = t == 0 ? f16_in : bf16_in;
        gpuprim_dtype_t d = types[t];
        for (descending = 0; descending < 2; ++descending) {
            int32_t index[14], got_index[14], want_index[14];
            uint16_t got[14], want[14];
            int i;
            gpuprim_buffer_t k = tc_buffer_from(ctx, d, in, 14), v;
            for (i = 0; i < 14; ++i) {
                index[i] = i;
                want_index[i] = ascending_index[descending ? 13 - i : i];
                want[i] = in[want_index[i]];
            }
            v = tc_buffer_from(ctx, GPUPRIM_DTYPE_I32, index, 14);
            tc_where("sort %s known order, %s", tc_dtype_name(d), descending ? "descending" : "ascending");
            CHECK_OK(gpuprim_sort(ctx, k, v, k, v, descending ? GPUPRIM_ORDER_DESCENDING : GPUPRIM_ORDER_ASCENDING));
            CHECK_OK(gpuprim_buffer_download(ctx, k, 0, got, 14));
            CHECK_OK(gpuprim_buffer_download(ctx, v, 0, got_index, 14));
            CHECK_ARRAY_EQ(d, got, want, 14, "16-bit float specials");
            CHECK_ARRAY_EQ(GPUPRIM_DTYPE_I32, got_index, want_index, 14, "16-bit float specials, values");
            CHECK_OK(gpuprim_buffer_destroy(ctx, k));
            CHECK_OK(gpuprim_buffer_destroy(ctx, v));
        }
    }
    {
        int8_t s[6] = {5, INT8_MIN, -1, INT8_MAX, 0, -7};
        int8_t s_sorted[6] = {INT8_MIN, -7, -1, 0, 5, INT8_MAX};
        uint8_t u[5] = {0xFF, 0, 0x80, 7, 0x7F};
        uint8_t u_desc[5] = {0xFF, 0x80, 0x7F, 7, 0};
        int16_t s16[5] = {-2, INT16_MAX, INT16_MIN, 0, 300};
        int16_t s16_desc[5] = {INT16_MAX, 300, 0, -2, INT16_MIN};
        uint16_t u16[4] = {0x8000, 0xFFFF, 0x7FFF, 1};
        uint16_t u16_sorted[4] = {1, 0x7FFF, 0x8000, 0xFFFF};
        int8_t s_got[6];
        uint8_t u_got[5];
        int16_t s16_got[5];
        uint16_t u16_got[4];
        gpuprim_buffer_t sb = tc_buffer_from(ctx, GPUPRIM_DTYPE_I8, s, 6);
        gpuprim_buffer_t ub = tc_buffer_from(ctx, GPUPRIM_DTYPE_U8, u, 5);
        gpuprim_buffer_t s16b = tc_buffer_from(ctx, GPUPRIM_DTYPE_I16, s16, 5);
        gpuprim_buffer_t u16b = tc_buffer_from(ctx, GPUPRIM_DTYPE_U16, u16, 4);
        tc_where("sort narrow integer known order");
        CHECK_OK(gpuprim_sort(ctx, sb, NULL, sb, NULL, GPUPRIM_ORDER_ASCENDING));
        CHECK_OK(gpuprim_buffer_download(ctx, sb, 0, s_got, 6));
        CHECK_ARRAY_EQ(GPUPRIM_DTYPE_I8, s_got, s_sorted, 6, "ascending i8");
        CHECK_OK(gpuprim_sort(ctx, ub, NULL, ub, NULL, GPUPRIM_ORDER_DESCENDING));
        CHECK_OK(gpuprim_buffer_download(ctx, ub, 0, u_got, 5));
        CHECK_ARRAY_EQ(GPUPRIM_DTYPE_U8, u_got, u_desc, 5, "descending u8");
        CHECK_OK(gpuprim_sort(ctx, s16b, NULL, s16b, NULL, GPUPRIM_ORDER_DESCENDING));
        CHECK_OK(gpuprim_buffer_download(ctx, s16b, 0, s16_got, 5));
        CHECK_ARRAY_EQ(GPUPRIM_DTYPE_I16, s16_got, s16_desc, 5, "descending i16");
        CHECK_OK(gpuprim_sort(ctx, u16b, NULL, u16b, NULL, GPUPRIM_ORDER_ASCENDING));
        CHECK_OK(gpuprim_buffer_download(ctx, u16b, 0, u16_got, 4));
        CHECK_ARRAY_EQ(GPUPRIM_DTYPE_U16, u16_got, u16_sorted, 4, "ascending u16");
        CHECK_OK(gpuprim_buffer_destroy(ctx, sb));
        CHECK_OK(gpuprim_buffer_destroy(ctx, ub));
        CHECK_OK(gpuprim_buffer_destroy(ctx, s16b));
        CHECK_OK(gpuprim_buffer_destroy(ctx, u16b));
    }
}

/* Bit ranges [begin_bit, end_bit) of gpuprim_sort_with_options: keys only and
 * pairs, both orders, against the reference stable sort by
 * (order key >> begin_bit) & mask, and the independent checks. */
static void test_sort_bit_ranges(gpuprim_context_t ctx) {
    static const struct {
        gpuprim_dtype_t d;
        unsigned begin_bit, end_bit;
    } ranges[] = {{GPUPRIM_DTYPE_U32, 0, 16},  {GPUPRIM_DTYPE_U64, 3, 11},  {GPUPRIM_DTYPE_U64, 8, 64},
                  {GPUPRIM_DTYPE_U32, 0, 1},   {GPUPRIM_DTYPE_U32, 0, 0},   {GPUPRIM_DTYPE_U32, 31, 32},
                  {GPUPRIM_DTYPE_U32, 5, 6},   {GPUPRIM_DTYPE_I32, 31, 32}, {GPUPRIM_DTYPE_I32, 0, 32},
                  {GPUPRIM_DTYPE_I32, 4, 28},  {GPUPRIM_DTYPE_U64, 63, 64}, {GPUPRIM_DTYPE_U64, 0, 64},
                  {GPUPRIM_DTYPE_I64, 1, 63},  {GPUPRIM_DTYPE_F16, 0, 16},  {GPUPRIM_DTYPE_F16, 10, 16},
                  {GPUPRIM_DTYPE_F16, 0, 8},   {GPUPRIM_DTYPE_F16, 15, 16}, {GPUPRIM_DTYPE_F16, 0, 0},
                  {GPUPRIM_DTYPE_BF16, 7, 15}, {GPUPRIM_DTYPE_BF16, 0, 0},  {GPUPRIM_DTYPE_I8, 0, 8},
                  {GPUPRIM_DTYPE_I8, 4, 8},    {GPUPRIM_DTYPE_I8, 7, 8},    {GPUPRIM_DTYPE_I8, 0, 3},
                  {GPUPRIM_DTYPE_U8, 3, 4},    {GPUPRIM_DTYPE_U8, 0, 0},    {GPUPRIM_DTYPE_I16, 0, 9},
                  {GPUPRIM_DTYPE_U16, 8, 16},  {GPUPRIM_DTYPE_F32, 23, 32}, {GPUPRIM_DTYPE_F32, 0, 31},
                  {GPUPRIM_DTYPE_F64, 52, 64}, {GPUPRIM_DTYPE_F64, 0, 0}};
    static const uint64_t range_sizes[] = {1, 33, 4096, 4097, 70001};
    static const tc_pattern_t patterns[] = {TC_RANDOM_BITS, TC_SMALL_RANGE, TC_NAN_HEAVY};
    size_t r, si, pi;
    unsigned rotation = 0;
    int descending;
    for (r = 0; r < sizeof ranges / sizeof ranges[0]; ++r) {
        gpuprim_dtype_t kd = ranges[r].d;
        sort_spec_t spec;
        spec.call = CALL_OPTIONS_RANGE;
        spec.begin_bit = ranges[r].begin_bit;
        spec.end_bit = ranges[r].end_bit;
        for (si = 0; si < sizeof range_sizes / sizeof range_sizes[0]; ++si) {
            uint64_t n = range_sizes[si];
            void *keys = tc_xmalloc(n * tc_size(kd));
            if (n > tc_max_count()) {
                free(keys);
                continue;
            }
            for (pi = 0; pi < sizeof patterns / sizeof patterns[0]; ++pi) {
                tc_fill(kd, keys, n, patterns[pi]);
                for (descending = 0; descending < 2; ++descending) {
                    /* pairs with index values (the independent stability check),
                       then keys only or values of a rotating width */
                    int value_dtype = value_configs[1 + rotation % (VALUE_CONFIG_COUNT - 1)];
                    int placement = (int)(rotation % 4);
                    ++rotation;
                    tc_where("sort %s bits [%u, %u) n=%llu pattern=%s %s, u32 index values, %s", tc_dtype_name(kd),
                             spec.begin_bit, spec.end_bit, (unsigned long long)n, tc_pattern_names[patterns[pi]],
                             descending ? "descending" : "ascending", placement_names[placement]);
                    run_sort_spec(ctx, kd, keys, n, GPUPRIM_DTYPE_U32, descending, placement, spec);
                    tc_where("sort %s bits [%u, %u) n=%llu pattern=%s %s, keys only, in place", tc_dtype_name(kd),
                             spec.begin_bit, spec.end_bit, (unsigned long long)n, tc_pattern_names[patterns[pi]],
                             descending ? "descending" : "ascending");
                    run_sort_spec(ctx, kd, keys, n, -1, descending, 1, spec);
                    tc_where("sort %s bits [%u, %u) n=%llu pattern=%s %s, %s values, %s", tc_dtype_name(kd),
                             spec.begin_bit, spec.end_bit, (unsigned long long)n, tc_pattern_names[patterns[pi]],
                             descending ? "descending" : "ascending", tc_dtype_name((gpuprim_dtype_t)value_dtype),
                             placement_names[(placement + 1) % 4]);
                    run_sort_spec(ctx, kd, keys, n, value_dtype, descending, (placement + 1) % 4, spec);
                }
            }
            free(keys);
        }
    }
    {
        /* u32 keys below 65536: bits [0, 16) give the whole sort's result (the
           header's example), keys only and pairs, both orders */
        const uint64_t n = 100003;
        uint32_t *keys = (uint32_t *)tc_xmalloc(n * 4), *full = (uint32_t *)tc_xmalloc(n * 4),
                 *ranged = (uint32_t *)tc_xmalloc(n * 4);
        uint32_t *index = (uint32_t *)tc_xmalloc(n * 4), *full_index = (uint32_t *)tc_xmalloc(n * 4),
                 *ranged_index = (uint32_t *)tc_xmalloc(n * 4);
        uint64_t i;
        gpuprim_buffer_t k, v, ko, vo;
        gpuprim_sort_options_t options;
        for (i = 0; i < n; ++i) {
            keys[i] = (uint32_t)tc_below(65536);
            index[i] = (uint32_t)i;
        }
        k = tc_buffer_from(ctx, GPUPRIM_DTYPE_U32, keys, n);
        v = tc_buffer_from(ctx, GPUPRIM_DTYPE_U32, index, n);
        ko = tc_buffer(ctx, GPUPRIM_DTYPE_U32, n);
        vo = tc_buffer(ctx, GPUPRIM_DTYPE_U32, n);
        for (descending = 0; descending < 2; ++descending) {
            tc_where("sort u32 keys < 2^16, bits [0, 16) vs the whole key, %s", descending ? "descending" : "ascending");
            tc_poison(ctx, ko, GPUPRIM_DTYPE_U32, n);
            tc_poison(ctx, vo, GPUPRIM_DTYPE_U32, n);
            CHECK_OK(gpuprim_sort(ctx, k, v, ko, vo, descending ? GPUPRIM_ORDER_DESCENDING : GPUPRIM_ORDER_ASCENDING));
            CHECK_OK(gpuprim_buffer_download(ctx, ko, 0, full, n));
            CHECK_OK(gpuprim_buffer_download(ctx, vo, 0, full_index, n));
            gpuprim_sort_options_init(&options);
            options.order = descending ? GPUPRIM_ORDER_DESCENDING : GPUPRIM_ORDER_ASCENDING;
            options.begin_bit = 0;
            options.end_bit = 16;
            tc_poison(ctx, ko, GPUPRIM_DTYPE_U32, n);
            tc_poison(ctx, vo, GPUPRIM_DTYPE_U32, n);
            CHECK_OK(gpuprim_sort_with_options(ctx, k, v, ko, vo, &options));
            CHECK_OK(gpuprim_buffer_download(ctx, ko, 0, ranged, n));
            CHECK_OK(gpuprim_buffer_download(ctx, vo, 0, ranged_index, n));
            CHECK_ARRAY_EQ(GPUPRIM_DTYPE_U32, ranged, full, n, "keys: bits [0, 16) vs whole key");
            CHECK_ARRAY_EQ(GPUPRIM_DTYPE_U32, ranged_index, full_index, n, "values: bits [0, 16) vs whole key");
            /* keys only, in place */
            REQUIRE_OK(gpuprim_buffer_upload(ctx, ko, 0, keys, n));
            CHECK_OK(gpuprim_sort_with_options(ctx, ko, NULL, ko, NULL, &options));
            CHECK_OK(gpuprim_buffer_download(ctx, ko, 0, ranged, n));
            CHECK_ARRAY_EQ(GPUPRIM_DTYPE_U32, ranged, full, n, "keys only in place: bits [0, 16) vs whole key");
        }
        CHECK_OK(gpuprim_buffer_destroy(ctx, k));
        CHECK_OK(gpuprim_buffer_destroy(ctx, v));
        CHECK_OK(gpuprim_buffer_destroy(ctx, ko));
        CHECK_OK(gpuprim_buffer_destroy(ctx, vo));
        free(keys);
        free(full);
        free(ranged);
        free(index);
        free(full_index);
        free(ranged_index);
    }
    {
        /* Floats: the order form is the key's rank in the documented order of
           all bit patterns (-inf is 0), i.e. for positive non-NaN floats
           (bits | sign) minus the number of negative NaNs (0x3FF for f16), NOT
           the bits with the sign bit set that the gpuprim_sort_options_t
           comment in gpuprim.h says (that map would not put every NaN last).
           So f16 bits [10, 15) are not the exponent field: 1.0 (0x3C00) -> 14,
           but 0x3FFF (1.999) and 2.0 (0x4000) -> 15. */
        uint16_t keys[3] = {0x4000, 0x3FFF, 0x3C00}, want[3] = {0x3C00, 0x4000, 0x3FFF}, got[3];
        gpuprim_sort_options_t options;
        gpuprim_buffer_t k = tc_buffer_from(ctx, GPUPRIM_DTYPE_F16, keys, 3);
        gpuprim_sort_options_init(&options);
        options.begin_bit = 10;
        options.end_bit = 15;
        tc_where("sort f16 bits [10, 15): the order form is the rank, not the sign-flipped bits");
        CHECK_OK(gpuprim_sort_with_options(ctx, k, NULL, k, NULL, &options));
        CHECK_OK(gpuprim_buffer_download(ctx, k, 0, got, 3));
        CHECK_ARRAY_EQ(GPUPRIM_DTYPE_F16, got, want, 3, "f16 bits [10, 15)");
        CHECK_OK(gpuprim_buffer_destroy(ctx, k));
    }
    {
        /* spelled out: i8 keys by bits [4, 8) of key ^ 0x80 (the high nibble of
           the order key), others carried in input order */
        int8_t keys[8] = {0x13, -0x70, 0x1F, 0x10, -1, 0x7F, -0x80, 0x15};
        /* order keys: 0x93 0x10 0x9F 0x90 0x7F 0xFF 0x00 0x95; high nibbles 9 1 9 9 7 F 0 9 */
        int8_t want[8] = {-0x80, -0x70, -1, 0x13, 0x1F, 0x10, 0x15, 0x7F};
        int8_t want_desc[8] = {0x7F, 0x13, 0x1F, 0x10, 0x15, -1, -0x70, -0x80};
        int8_t got[8];
        gpuprim_sort_options_t options;
        gpuprim_buffer_t k = tc_buffer_from(ctx, GPUPRIM_DTYPE_I8, keys, 8);
        gpuprim_sort_options_init(&options);
        options.begin_bit = 4;
        options.end_bit = 8;
        tc_where("sort i8 bits [4, 8) spelled out");
        CHECK_OK(gpuprim_sort_with_options(ctx, k, NULL, k, NULL, &options));
        CHECK_OK(gpuprim_buffer_download(ctx, k, 0, got, 8));
        CHECK_ARRAY_EQ(GPUPRIM_DTYPE_I8, got, want, 8, "i8 bits [4, 8) ascending");
        REQUIRE_OK(gpuprim_buffer_upload(ctx, k, 0, keys, 8));
        options.order = GPUPRIM_ORDER_DESCENDING;
        CHECK_OK(gpuprim_sort_with_options(ctx, k, NULL, k, NULL, &options));
        CHECK_OK(gpuprim_buffer_download(ctx, k, 0, got, 8));
        CHECK_ARRAY_EQ(GPUPRIM_DTYPE_I8, got, want_desc, 8, "i8 bits [4, 8) descending");
        CHECK_OK(gpuprim_buffer_destroy(ctx, k));
    }
}

/* Every bit pattern of the 1- and 2-byte dtypes, shuffled, twice over (so
 * every key has an equal twin whose order stability decides), sorted both
 * ways with index values, whole and by a few bit ranges. */
static void test_sort_all_bit_patterns(gpuprim_context_t ctx) {
    static const gpuprim_dtype_t narrow[6] = {GPUPRIM_DTYPE_F16, GPUPRIM_DTYPE_BF16, GPUPRIM_DTYPE_I16,
                                              GPUPRIM_DTYPE_U16, GPUPRIM_DTYPE_I8, GPUPRIM_DTYPE_U8};
    size_t t;
    int descending;
    for (t = 0; t < 6; ++t) {
        gpuprim_dtype_t d = narrow[t];
        unsigned width = tc_bits(d);
        uint64_t n = (uint64_t)2 << width, i;
        void *keys = tc_xmalloc(n * tc_size(d));
        sort_spec_t spec;
        for (i = 0; i < n; ++i) tc_set(d, keys, i, i);
        for (i = n - 1; i > 0; --i) {
            uint64_t j = tc_below(i + 1), a = tc_get(d, keys, i);
            tc_set(d, keys, i, tc_get(d, keys, j));
            tc_set(d, keys, j, a);
        }
        for (descending = 0; descending < 2; ++descending) {
            tc_where("sort all %s bit patterns twice, %s", tc_dtype_name(d), descending ? "descending" : "ascending");
            run_sort(ctx, d, keys, n, GPUPRIM_DTYPE_U32, descending, descending ? 1 : 0);
            spec.call = CALL_OPTIONS_RANGE;
            spec.begin_bit = width / 2;
            spec.end_bit = width;
            tc_where("sort all %s bit patterns twice by bits [%u, %u), %s", tc_dtype_name(d), spec.begin_bit,
                     spec.end_bit, descending ? "descending" : "ascending");
            run_sort_spec(ctx, d, keys, n, GPUPRIM_DTYPE_I32, descending, 2, spec);
            spec.begin_bit = 1;
            spec.end_bit = width - 1;
            tc_where("sort all %s bit patterns twice by bits [%u, %u), %s", tc_dtype_name(d), spec.begin_bit,
                     spec.end_bit, descending ? "descending" : "ascending");
            run_sort_spec(ctx, d, keys, n, GPUPRIM_DTYPE_U64, descending, 3, spec);
        }
        free(keys);
    }
}

/* ------------------------------------------------------------------------ */
/* Key distributions: presorted, reversed and low-entropy inputs            */
/* ------------------------------------------------------------------------ */

/*
 * Inputs a sort may treat specially: sorted or strictly reversed in the
 * requested order (a detector may answer with a copy or a reversed copy),
 * near misses of both (one element or pair out of place, one tie in a
 * reversed run, which must NOT be reversed: equal keys keep their input
 * order), and low-entropy keys (skewed digit histograms). Everything "in the
 * sort's order" is built from the order key K = tc_sort_key(d, bits,
 * descending) of the order asked for (descending: sorted means descending),
 * so float inputs follow the documented order (-0 before +0, NaNs by sign
 * and payload). Checked by run_sort_spec (the reference stable sort, bit for
 * bit, and the independent sorted/permutation/stability checks).
 */
typedef enum dist {
    DIST_UNIFORM = 0,       /* every bit random */
    DIST_AND2,              /* AND of 2 random words */
    DIST_AND4,              /* AND of 4 random words (low entropy) */
    DIST_FEW16,             /* 16 distinct values (random, specials included) */
    DIST_EQUAL,             /* one value */
    DIST_LOW8,              /* high bits constant (random, nonzero), the low 8 random (1-byte keys: 4) */
    DIST_ZIPF,              /* floor of a power-law draw: many repeats of small values */
    DIST_SORTED,            /* in the sort's order (ties, floats: NaNs of both signs, +-0, +-inf, subnormals) */
    DIST_SORTED_DISPLACED,  /* sorted, then 0.1% of the elements swapped pairwise at random positions */
    DIST_SORTED_RUNS,       /* sorted, in runs of 1 to 12 equal keys */
    DIST_SORTED_BUT_LAST,   /* sorted except the last element (the least) */
    DIST_SORTED_BUT_FIRST,  /* sorted except the first element (the greatest) */
    DIST_SORTED_SWAP_4095,  /* sorted except one adjacent pair swapped at 4095/4096 */
    DIST_SORTED_SWAP_MID,   /* sorted except one adjacent pair swapped in the middle */
    DIST_REVERSED,          /* strictly against the sort's order: no ties */
    DIST_REVERSED_TIES,     /* non-increasing in the sort's order with ties (not strictly reversed) */
    DIST_REVERSED_ONE_TIE,  /* strictly reversed except one tie in the middle */
    DIST_REVERSED_TIE_END,  /* strictly reversed except the last two keys equal */
    DIST_REVERSED_SWAP_MID, /* strictly reversed except one adjacent pair in order, in the middle */
    DIST_REVERSED_BUT_LAST, /* strictly reversed except the last element (the greatest) */
    DIST_ZEROS_IN_ORDER,    /* floats: sorted, -0.0 then +0.0 as the order wants (descending: +0 then -0) */
    DIST_ZEROS_SWAPPED,     /* floats: sorted except +0.0 then -0.0 (descending: -0 then +0) */
    DIST_COUNT
} dist_t;

static const char *const dist_names[DIST_COUNT] = {
    "uniform",         "and2",           "and4",             "few16",           "equal",
    "low8",            "zipf",           "sorted",           "sorted_displaced", "sorted_runs",
    "sorted_but_last", "sorted_but_first", "sorted_swap_4095", "sorted_swap_mid", "reversed",
    "reversed_ties",   "reversed_one_tie", "reversed_tie_end", "reversed_swap_mid", "reversed_but_last",
    "zeros_in_order",  "zeros_swapped"};

static int dist_applies(gpuprim_dtype_t d, dist_t dist) {
    return tc_is_float(d) || (dist != DIST_ZEROS_IN_ORDER && dist != DIST_ZEROS_SWAPPED);
}

/* The bits whose order key (tc_sort_key(d, bits, descending)) is key: the
 * inverse of tc_sort_key, checked against it in test_sort_distributions. */
static uint64_t dist_bits_of_key(gpuprim_dtype_t d, uint64_t key, int descending) {
    uint64_t mask = tc_mask(d), sign = tc_sign_bit(d);
    key &= mask;
    if (descending) key = ~key & mask;
    if (tc_is_signed(d)) return key ^ sign;
    if (tc_is_float(d)) {
        uint64_t negative_nan_count = (1ull << tc_mantissa_bits(d)) - 1;
        key = (key + negative_nan_count) & mask;
        return (key & sign) ? (key ^ sign) : (~key & mask);
    }
    return key;
}

static uint64_t dist_key(gpuprim_dtype_t d, const void *keys, uint64_t i, int descending) {
    return tc_sort_key(d, tc_get(d, keys, i), descending);
}

/* A random key of every kind: specials (floats: NaNs of both signs and
 * several payloads, +-0, +-inf, +-max, subnormals; integers: the extremes),
 * random NaNs, values near zero, moderate values, random bits. The specials
 * repeat, so a few thousand keys have ties. */
static uint64_t dist_mixed_key(gpuprim_dtype_t d) {
    switch (tc_below(8)) {
    case 0: return tc_special_value(d);
    case 1: return tc_is_float(d) ? tc_random_nan(d) : tc_random_tiny(d);
    case 2: return tc_random_tiny(d);
    case 3: return tc_random_moderate(d);
    default: return tc_rand() & tc_mask(d);
    }
}

/* keys[0..n) as the stable sort (against = 0) or the stable sort in the
 * opposite order (against = 1: non-increasing in the sort's order, ties in
 * input order) of n mixed keys; with ties = 1 half the keys repeat an
 * earlier one. */
static void dist_sorted_mixed(gpuprim_dtype_t d, void *keys, uint64_t n, int descending, int against, int ties) {
    uint64_t *perm = (uint64_t *)tc_xmalloc(n * sizeof *perm), i;
    void *tmp = tc_xmalloc(n * 8);
    memset(tmp, 0, n * 8);
    for (i = 0; i < n; ++i)
        tc_set(d, tmp, i, ties && i > 0 && (tc_rand() & 1) ? tc_get(d, tmp, tc_below(i)) : dist_mixed_key(d));
    tc_reference_sort_permutation(d, tmp, n, against ? !descending : descending, perm);
    tc_permute(d, tmp, perm, n, keys);
    free(tmp);
    free(perm);
}

/* The most distinct keys of dtype d that n asks for: min(n, 2^bits). */
static uint64_t dist_distinct_count(gpuprim_dtype_t d, uint64_t n) {
    return tc_bits(d) >= 64 || n <= (1ull << tc_bits(d)) ? n : (1ull << tc_bits(d));
}

/* m <= 2^bits keys strictly increasing (against: strictly decreasing) in the
 * sort's order: one random order key in each of m equal slices of the key
 * space (so both ends: -inf, the NaNs of both signs), and for floats the
 * specials (+-0, +-inf, NaNs of both signs and several payloads, subnormals)
 * each replacing the key of its slice (of specials sharing a slice, such as
 * -0 and +0 when slices are wide, the last stays). */
static void dist_distinct(gpuprim_dtype_t d, void *keys, uint64_t m, int descending, int against) {
    uint64_t width, i, s;
    if (m == 0) return;
    width = tc_bits(d) >= 64 ? UINT64_MAX / m : (1ull << tc_bits(d)) / m;
    for (i = 0; i < m; ++i) tc_set(d, keys, i, dist_bits_of_key(d, i * width + tc_below(width), descending));
    if (tc_is_float(d)) {
        for (s = 0; s < TC_FLOAT_SPECIAL_COUNT + 8; ++s) {
            uint64_t bits = s < TC_FLOAT_SPECIAL_COUNT ? tc_float_specials(d)[s]
                                                       : s & 1 ? tc_random_nan(d) : tc_random_tiny(d);
            uint64_t key = tc_sort_key(d, bits, descending), slice = key / width;
            tc_set(d, keys, slice < m ? slice : m - 1, bits); /* still strictly increasing */
        }
    }
    if (against)
        for (i = 0; i < m / 2; ++i) {
            uint64_t a = tc_get(d, keys, i);
            tc_set(d, keys, i, tc_get(d, keys, m - 1 - i));
            tc_set(d, keys, m - 1 - i, a);
        }
}

static void dist_swap(gpuprim_dtype_t d, void *keys, uint64_t i, uint64_t j) {
    uint64_t a = tc_get(d, keys, i);
    tc_set(d, keys, i, tc_get(d, keys, j));
    tc_set(d, keys, j, a);
}

/* Rotate keys[0..n) by one: left (the first goes last) or right. */
static void dist_rotate(gpuprim_dtype_t d, void *keys, uint64_t n, int left) {
    size_t size = tc_size(d);
    unsigned char first_or_last[8];
    if (n < 2) return;
    if (left) {
        memcpy(first_or_last, keys, size);
        memmove(keys, (char *)keys + size, (n - 1) * size);
        memcpy((char *)keys + (n - 1) * size, first_or_last, size);
    } else {
        memcpy(first_or_last, (char *)keys + (n - 1) * size, size);
        memmove((char *)keys + size, keys, (n - 1) * size);
        memcpy(keys, first_or_last, size);
    }
}

/* Swaps the first adjacent pair at or after at (else the last one before it)
 * whose keys are strictly in order, so that the pair ends up out of order. */
static void dist_swap_pair_near(gpuprim_dtype_t d, void *keys, uint64_t n, uint64_t at, int descending) {
    uint64_t i;
    if (n < 2) return;
    if (at > n - 2) at = n - 2;
    for (i = at; i + 1 < n; ++i)
        if (dist_key(d, keys, i, descending) < dist_key(d, keys, i + 1, descending)) {
            dist_swap(d, keys, i, i + 1);
            return;
        }
    for (i = at; i-- > 0;)
        if (dist_key(d, keys, i, descending) < dist_key(d, keys, i + 1, descending)) {
            dist_swap(d, keys, i, i + 1);
            return;
        }
}

/* Fills keys (room for n) with dist for a sort in the given order; returns
 * the count to sort: n, or for the strictly reversed inputs of narrow dtypes
 * at most 2^bits. */
static uint64_t dist_fill(gpuprim_dtype_t d, void *keys, uint64_t n, dist_t dist, int descending) {
    uint64_t i, mask = tc_mask(d), m = dist_distinct_count(d, n);
    switch (dist) {
    case DIST_UNIFORM:
        for (i = 0; i < n; ++i) tc_set(d, keys, i, tc_rand());
        return n;
    case DIST_AND2:
        for (i = 0; i < n; ++i) tc_set(d, keys, i, tc_rand() & tc_rand());
        return n;
    case DIST_AND4:
        for (i = 0; i < n; ++i) tc_set(d, keys, i, tc_rand() & tc_rand() & tc_rand() & tc_rand());
        return n;
    case DIST_FEW16: {
        uint64_t values[16];
        for (i = 0; i < 16; ++i) values[i] = dist_mixed_key(d);
        for (i = 0; i < n; ++i) tc_set(d, keys, i, values[tc_rand() & 15]);
        return n;
    }
    case DIST_EQUAL: {
        uint64_t v = tc_rand();
        for (i = 0; i < n; ++i) tc_set(d, keys, i, v);
        return n;
    }
    case DIST_LOW8: {
        uint64_t low = tc_bits(d) > 8 ? 0xFF : 0xF, high = tc_rand() & mask & ~low;
        if (high == 0) high = low + 1;
        for (i = 0; i < n; ++i) tc_set(d, keys, i, high | (tc_rand() & low));
        return n;
    }
    case DIST_ZIPF: {
        double limit = ldexp(1.0, (int)tc_bits(d) - 1) - 1.0;
        for (i = 0; i < n; ++i) {
            double v = floor(pow(1.0 - tc_uniform(), -1.0 / 1.1)) - 1.0; /* P(v >= x) = (x + 1)^-1.1 */
            if (v > limit) v = limit;
            tc_set(d, keys, i, tc_is_float(d) ? tc_from_double(d, v) : (uint64_t)v & mask);
        }
        return n;
    }
    case DIST_SORTED:
        dist_sorted_mixed(d, keys, n, descending, 0, 0);
        return n;
    case DIST_SORTED_DISPLACED: {
        uint64_t swaps = n / 2000 + 1;
        dist_sorted_mixed(d, keys, n, descending, 0, 0);
        for (i = 0; i < swaps; ++i) dist_swap(d, keys, tc_below(n), tc_below(n));
        return n;
    }
    case DIST_SORTED_RUNS: {
        uint64_t at = 0, count = dist_distinct_count(d, n / 6 + 1);
        void *distinct = tc_xmalloc(count * 8);
        dist_distinct(d, distinct, count, descending, 0);
        for (i = 0; i < count && at < n; ++i) {
            uint64_t run = 1 + tc_below(12);
            if (i == count - 1) run = n - at; /* the last value takes the rest */
            for (; run > 0 && at < n; --run) tc_set(d, keys, at++, tc_get(d, distinct, i));
        }
        free(distinct);
        return n;
    }
    case DIST_SORTED_BUT_LAST:
    case DIST_SORTED_BUT_FIRST:
        dist_sorted_mixed(d, keys, n, descending, 0, 0);
        dist_rotate(d, keys, n, dist == DIST_SORTED_BUT_LAST);
        return n;
    case DIST_SORTED_SWAP_4095:
    case DIST_SORTED_SWAP_MID:
        dist_sorted_mixed(d, keys, n, descending, 0, 0);
        dist_swap_pair_near(d, keys, n, dist == DIST_SORTED_SWAP_4095 && n > 4097 ? 4095 : n / 2, descending);
        return n;
    case DIST_REVERSED:
        dist_distinct(d, keys, m, descending, 1);
        return m;
    case DIST_REVERSED_TIES:
        dist_sorted_mixed(d, keys, n, descending, 1, 1);
        return n;
    case DIST_REVERSED_ONE_TIE:
    case DIST_REVERSED_TIE_END:
        dist_distinct(d, keys, m, descending, 1);
        if (m >= 2) {
            uint64_t at = dist == DIST_REVERSED_TIE_END ? m - 1 : m / 2;
            tc_set(d, keys, at, tc_get(d, keys, at - 1));
        }
        return m;
    case DIST_REVERSED_SWAP_MID:
        dist_distinct(d, keys, m, descending, 1);
        if (m >= 2) dist_swap(d, keys, m > 2 ? m / 2 - 1 : 0, m > 2 ? m / 2 : 1);
        return m;
    case DIST_REVERSED_BUT_LAST:
        dist_distinct(d, keys, m, descending, 1);
        dist_rotate(d, keys, m, 1);
        return m;
    case DIST_ZEROS_IN_ORDER:
    case DIST_ZEROS_SWAPPED: {
        /* the two zeros are adjacent in the order: the last of the first
           zero's copies meets the first of the other's */
        uint64_t first_zero = descending ? 0 : tc_sign_bit(d);
        if (n < 2) return n;
        for (i = 0; i < n - 2; ++i) tc_set(d, keys, i, dist_mixed_key(d));
        tc_set(d, keys, n - 2, tc_sign_bit(d));
        tc_set(d, keys, n - 1, 0);
        {
            uint64_t *perm = (uint64_t *)tc_xmalloc(n * sizeof *perm);
            void *tmp = tc_xmalloc(n * 8);
            memcpy(tmp, keys, n * tc_size(d));
            tc_reference_sort_permutation(d, tmp, n, descending, perm);
            tc_permute(d, tmp, perm, n, keys);
            free(tmp);
            free(perm);
        }
        if (dist == DIST_ZEROS_SWAPPED)
            for (i = 0; i + 1 < n; ++i)
                if (tc_get(d, keys, i) == first_zero && tc_get(d, keys, i + 1) == (first_zero ^ tc_sign_bit(d))) {
                    dist_swap(d, keys, i, i + 1);
                    break;
                }
        return n;
    }
    default: return n;
    }
}

/* The input is what dist promises (so a generator slip cannot quietly test
 * less): counts of descents, ascents and ties of the order key. */
static void dist_check_shape(gpuprim_dtype_t d, const void *keys, uint64_t m, dist_t dist, int descending) {
    uint64_t i, descents = 0, ascents = 0, ties = 0;
    for (i = 0; i + 1 < m; ++i) {
        uint64_t a = dist_key(d, keys, i, descending), b = dist_key(d, keys, i + 1, descending);
        descents += a > b;
        ascents += a < b;
        ties += a == b;
    }
    switch (dist) {
    case DIST_SORTED:
    case DIST_SORTED_RUNS:
    case DIST_ZEROS_IN_ORDER: CHECKF(descents == 0, "input not sorted: %llu descents", (unsigned long long)descents); break;
    case DIST_SORTED_BUT_LAST:
    case DIST_SORTED_BUT_FIRST:
    case DIST_SORTED_SWAP_4095:
    case DIST_SORTED_SWAP_MID:
    case DIST_ZEROS_SWAPPED:
        if (m >= 3) CHECKF(descents == 1, "input: %llu descents, not 1", (unsigned long long)descents);
        break;
    case DIST_REVERSED:
        CHECKF(ascents == 0 && ties == 0, "input not strictly reversed: %llu ascents, %llu ties",
               (unsigned long long)ascents, (unsigned long long)ties);
        break;
    case DIST_REVERSED_TIES:
        CHECKF(ascents == 0 && (m < 33 || ties > 0), "input: %llu ascents, %llu ties", (unsigned long long)ascents,
               (unsigned long long)ties);
        break;
    case DIST_REVERSED_ONE_TIE:
    case DIST_REVERSED_TIE_END:
        if (m >= 2)
            CHECKF(ascents == 0 && ties == 1, "input: %llu ascents, %llu ties, not 0 and 1",
                   (unsigned long long)ascents, (unsigned long long)ties);
        break;
    case DIST_REVERSED_SWAP_MID:
    case DIST_REVERSED_BUT_LAST:
        if (m >= 2)
            CHECKF(ascents == 1 && ties == 0, "input: %llu ascents, %llu ties, not 1 and 0",
                   (unsigned long long)ascents, (unsigned long long)ties);
        break;
    default: break;
    }
}

/* Index value dtypes (the values are the input positions: the stability and
 * permutation checks of run_sort_spec apply). */
static const gpuprim_dtype_t dist_index_values[4] = {GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_U64, GPUPRIM_DTYPE_I32,
                                                     GPUPRIM_DTYPE_I64};
static unsigned dist_rotation;

static const char *dist_call_name(sort_spec_t spec) {
    switch (spec.call) {
    case CALL_SORT: return "gpuprim_sort";
    case CALL_OPTIONS_NULL: return "with_options(NULL)";
    case CALL_OPTIONS_DEFAULT: return "with_options";
    default: return "with_options(whole range)";
    }
}

/* The entry point, rotated: gpuprim_sort, with_options (the order set), the
 * whole key as an explicit range, NULL options (ascending only). */
static sort_spec_t dist_spec(gpuprim_dtype_t kd, int descending, unsigned rotation) {
    sort_spec_t spec = whole_sort;
    switch (rotation % 4) {
    case 0: break;
    case 1: spec.call = CALL_OPTIONS_DEFAULT; break;
    case 2: spec.call = CALL_OPTIONS_RANGE, spec.end_bit = tc_bits(kd); break;
    default: spec.call = descending ? CALL_SORT : CALL_OPTIONS_NULL; break;
    }
    return spec;
}

/* Modes of dist_run. */
enum { DIST_PAIRS = 1, DIST_KEYS = 2, DIST_ALL_PLACEMENTS = 4 };

/* One distribution, one order: pairs with index values (the placement, the
 * value dtype and the entry point rotating; every placement with
 * DIST_ALL_PLACEMENTS) and/or keys only (in place and out of place
 * alternating, or both). */
static void dist_run(gpuprim_context_t ctx, gpuprim_dtype_t kd, uint64_t n, dist_t dist, int descending, int modes) {
    void *keys;
    uint64_t m;
    int placement, first, last;
    if (n > tc_max_count() || !dist_applies(kd, dist)) return;
    keys = tc_xmalloc(n * 8);
    tc_where("distribution %s %s n=%llu %s: generating", dist_names[dist], tc_dtype_name(kd), (unsigned long long)n,
             descending ? "descending" : "ascending");
    m = dist_fill(kd, keys, n, dist, descending);
    dist_check_shape(kd, keys, m, dist, descending);
    first = modes & DIST_ALL_PLACEMENTS ? 0 : (int)(dist_rotation % 4);
    last = modes & DIST_ALL_PLACEMENTS ? 3 : first;
    for (placement = first; (modes & DIST_PAIRS) && placement <= last; ++placement) {
        gpuprim_dtype_t vd = dist_index_values[(dist_rotation / 4) % 4];
        sort_spec_t spec = dist_spec(kd, descending, dist_rotation / 3);
        ++dist_rotation;
        tc_where("distribution %s: sort %s keys, %s index values, n=%llu %s, %s, %s", dist_names[dist],
                 tc_dtype_name(kd), tc_dtype_name(vd), (unsigned long long)m, descending ? "descending" : "ascending",
                 placement_names[placement], dist_call_name(spec));
        run_sort_spec(ctx, kd, keys, m, (int)vd, descending, placement, spec);
    }
    first = modes & DIST_ALL_PLACEMENTS ? 0 : (int)(dist_rotation % 2);
    last = modes & DIST_ALL_PLACEMENTS ? 1 : first;
    for (placement = first; (modes & DIST_KEYS) && placement <= last; ++placement) {
        sort_spec_t spec = dist_spec(kd, descending, dist_rotation / 2);
        ++dist_rotation;
        tc_where("distribution %s: sort %s keys only, n=%llu %s, %s, %s", dist_names[dist], tc_dtype_name(kd),
                 (unsigned long long)m, descending ? "descending" : "ascending",
                 placement ? "in place" : "out of place", dist_call_name(spec));
        run_sort_spec(ctx, kd, keys, m, -1, descending, placement, spec);
    }
    free(keys);
}

/* Bit-range sorts (gpuprim_sort_with_options, bits [b, e) of the order key)
 * on inputs presorted in the range but not as whole keys, and the other way
 * round. */
typedef enum range_dist {
    RANGE_SORTED_IN_RANGE = 0,     /* bits [b, e) sorted, the others random: the sort is the identity */
    RANGE_REVERSED_IN_RANGE,       /* bits [b, e) strictly reversed (ties only where 2^(e-b) < n) */
    RANGE_REVERSED_TIES_IN_RANGE,  /* bits [b, e) non-increasing with ties: stable, not reversed */
    RANGE_WHOLE_SORTED,            /* whole keys sorted, so bits [b, e) below the top are not */
    RANGE_WHOLE_REVERSED,          /* whole keys strictly reversed: bits [b, e) have ties or are unsorted */
    RANGE_DIST_COUNT
} range_dist_t;

static const char *const range_dist_names[RANGE_DIST_COUNT] = {
    "sorted in range, not whole", "strictly reversed in range, not whole", "reversed with ties in range",
    "whole keys sorted", "whole keys strictly reversed"};

static void range_reverse_u64(uint64_t *v, uint64_t n) {
    uint64_t i;
    for (i = 0; i < n / 2; ++i) {
        uint64_t a = v[i];
        v[i] = v[n - 1 - i];
        v[n - 1 - i] = a;
    }
}

/* n keys of dtype d for a sort by bits [b, e) in the given order, built on
 * the order key (tc_sort_key with the order), whose bits [b, e) are what the
 * sort compares. */
static void range_fill(gpuprim_dtype_t d, void *keys, uint64_t n, range_dist_t rd, int descending, unsigned b,
                       unsigned e) {
    const unsigned width = e - b, bits = tc_bits(d);
    const uint64_t range_mask = width >= 64 ? ~0ull : (1ull << width) - 1;
    const uint64_t other_mask = tc_mask(d) & ~(range_mask << b);
    uint64_t *v = (uint64_t *)tc_xmalloc(n * sizeof *v), i;
    int in_range = rd != RANGE_WHOLE_SORTED && rd != RANGE_WHOLE_REVERSED;
    switch (rd) {
    case RANGE_SORTED_IN_RANGE:
        for (i = 0; i < n; ++i) v[i] = tc_rand() & range_mask;
        tc_sort_u64(v, n);
        break;
    case RANGE_REVERSED_IN_RANGE:
    case RANGE_WHOLE_REVERSED: {
        unsigned w_bits = rd == RANGE_WHOLE_REVERSED ? bits : width;
        if (w_bits < 64 && (1ull << w_bits) < n) {
            for (i = 0; i < n; ++i) v[i] = (i << w_bits) / n; /* 2^w_bits < n <= 2^63: no overflow */
        } else {
            uint64_t w = w_bits >= 64 ? UINT64_MAX / n : (1ull << w_bits) / n;
            for (i = 0; i < n; ++i) v[i] = i * w + tc_below(w);
        }
        range_reverse_u64(v, n);
        break;
    }
    case RANGE_REVERSED_TIES_IN_RANGE:
        for (i = 0; i < n; ++i) v[i] = i > 0 && (tc_rand() & 1) ? v[tc_below(i)] : tc_rand() & range_mask;
        tc_sort_u64(v, n);
        range_reverse_u64(v, n);
        break;
    default: /* RANGE_WHOLE_SORTED */
        for (i = 0; i < n; ++i) v[i] = tc_rand() & tc_mask(d);
        tc_sort_u64(v, n);
        break;
    }
    for (i = 0; i < n; ++i) {
        uint64_t key = in_range ? (v[i] << b) | (tc_rand() & other_mask) : v[i];
        tc_set(d, keys, i, dist_bits_of_key(d, key, descending));
    }
    free(v);
}

/* Argsort of keys[0..n): indices (poisoned first) against the reference
 * stable permutation and independently a stable sorted permutation; keys_out
 * (mode 0 NULL, 1 apart, 2 in place) the reference's sorted keys; keys_in
 * untouched unless in place. */
static void dist_argsort(gpuprim_context_t ctx, gpuprim_dtype_t kd, gpuprim_dtype_t id, const void *keys,
                         uint64_t n, int descending, int keys_out_mode, unsigned begin_bit, unsigned end_bit) {
    const unsigned end = end_bit ? end_bit : tc_bits(kd);
    uint64_t *perm = (uint64_t *)tc_xmalloc(n * sizeof *perm), i, wrong = 0, first_wrong = 0, broken;
    void *want_keys = tc_xmalloc(n * 8), *got_idx;
    gpuprim_buffer_t kin, kout, idx;
    gpuprim_sort_options_t options;
    tc_reference_sort_permutation_bits(kd, keys, n, descending, begin_bit, end, perm);
    tc_permute(kd, keys, perm, n, want_keys);
    kin = tc_buffer_from(ctx, kd, keys, n);
    gpuprim_sort_options_init(&options);
    options.order = descending ? GPUPRIM_ORDER_DESCENDING : GPUPRIM_ORDER_ASCENDING;
    options.begin_bit = begin_bit;
    options.end_bit = end_bit;
    idx = tc_run_argsort(ctx, kin, kd, id, n, &options, keys_out_mode, &kout);
    got_idx = tc_download(ctx, idx, id, n);
    for (i = 0; i < n; ++i)
        if (tc_get(id, got_idx, i) != perm[i] && wrong++ == 0) first_wrong = i;
    broken = tc_argsort_breaks(kd, keys, id, got_idx, n, descending, begin_bit, end);
    CHECKF(wrong == 0, "argsort: %llu of %llu indices differ from the reference stable order, first at [%llu]: "
           "got %llu, expected %llu", (unsigned long long)wrong, (unsigned long long)n,
           (unsigned long long)first_wrong, (unsigned long long)(n ? tc_get(id, got_idx, first_wrong) : 0),
           (unsigned long long)(n ? perm[first_wrong] : 0));
    CHECKF(broken == 0, "argsort: %llu positions break a stable sorted permutation", (unsigned long long)broken);
    if (kout) {
        CHECK_BUFFER_EQ(ctx, kout, kd, want_keys, n, "argsort keys_out");
    }
    if (kout != kin) {
        CHECK_BUFFER_EQ(ctx, kin, kd, keys, n, "argsort keys_in after the call");
    }
    CHECK_OK(gpuprim_buffer_destroy(ctx, idx));
    if (kout && kout != kin) CHECK_OK(gpuprim_buffer_destroy(ctx, kout));
    CHECK_OK(gpuprim_buffer_destroy(ctx, kin));
    free(got_idx);
    free(want_keys);
    free(perm);
}

/* The distributions the large sizes run: the presorted and reversed shapes
 * and their near misses (for a detector), and the low-entropy keys (skewed
 * digits). */
static const dist_t dist_large[] = {DIST_AND4,
                                    DIST_FEW16,
                                    DIST_EQUAL,
                                    DIST_LOW8,
                                    DIST_ZIPF,
                                    DIST_SORTED,
                                    DIST_SORTED_DISPLACED,
                                    DIST_SORTED_RUNS,
                                    DIST_SORTED_BUT_LAST,
                                    DIST_SORTED_BUT_FIRST,
                                    DIST_SORTED_SWAP_4095,
                                    DIST_SORTED_SWAP_MID,
                                    DIST_REVERSED,
                                    DIST_REVERSED_TIES,
                                    DIST_REVERSED_ONE_TIE,
                                    DIST_REVERSED_TIE_END,
                                    DIST_REVERSED_SWAP_MID,
                                    DIST_REVERSED_BUT_LAST,
                                    DIST_ZEROS_SWAPPED};
#define DIST_LARGE_COUNT (sizeof dist_large / sizeof dist_large[0])

/* Where a detector answers with a copy or a reversed copy (every placement
 * must then be right) or must not (ties: a reversed copy breaks stability). */
static int dist_is_edge(dist_t dist) {
    return dist == DIST_SORTED || dist == DIST_REVERSED || dist == DIST_REVERSED_TIES ||
           dist == DIST_REVERSED_ONE_TIE;
}

/* Skewed digit histograms. */
static int dist_is_low_entropy(dist_t dist) {
    return dist == DIST_AND2 || dist == DIST_AND4 || dist == DIST_FEW16 || dist == DIST_EQUAL || dist == DIST_LOW8 ||
           dist == DIST_ZIPF;
}

/* Where the float order decides: NaNs of both signs, +-0. */
static int dist_is_float_edge(dist_t dist) {
    return dist == DIST_SORTED || dist == DIST_REVERSED || dist == DIST_REVERSED_TIES || dist == DIST_ZEROS_SWAPPED;
}

/* Bit ranges: presorted in the range and not as whole keys, or the other
 * way round (range_dist_t), pairs with index values and (with_keys_only 1)
 * keys only, or (2) keys only in one order. */
static void dist_range_run(gpuprim_context_t ctx, gpuprim_dtype_t kd, uint64_t n, unsigned begin_bit,
                           unsigned end_bit, int with_keys_only) {
    sort_spec_t spec;
    void *keys;
    int rd, descending;
    if (n > tc_max_count()) return;
    keys = tc_xmalloc(n * 8);
    spec.call = CALL_OPTIONS_RANGE;
    spec.begin_bit = begin_bit;
    spec.end_bit = end_bit;
    for (rd = 0; rd < RANGE_DIST_COUNT; ++rd)
        for (descending = 0; descending < 2; ++descending) {
            int placement = (int)(dist_rotation % 4);
            gpuprim_dtype_t vd = dist_index_values[(dist_rotation / 4) % 4];
            ++dist_rotation;
            range_fill(kd, keys, n, (range_dist_t)rd, descending, begin_bit, end_bit);
            tc_where("distribution %s: sort %s bits [%u, %u), %s index values, n=%llu %s, %s", range_dist_names[rd],
                     tc_dtype_name(kd), begin_bit, end_bit, tc_dtype_name(vd), (unsigned long long)n,
                     descending ? "descending" : "ascending", placement_names[placement]);
            if (rd == RANGE_SORTED_IN_RANGE) {
                /* the input is sorted in the range: the sort is the identity */
                uint64_t i, descents = 0;
                for (i = 1; i < n; ++i)
                    descents += tc_sort_bits(kd, tc_get(kd, keys, i - 1), descending, begin_bit, end_bit) >
                                tc_sort_bits(kd, tc_get(kd, keys, i), descending, begin_bit, end_bit);
                CHECKF(descents == 0, "input: %llu descents in the range", (unsigned long long)descents);
            }
            run_sort_spec(ctx, kd, keys, n, (int)vd, descending, placement, spec);
            if (!with_keys_only || (with_keys_only == 2 && (rd + descending) % 2)) continue;
            tc_where("distribution %s: sort %s bits [%u, %u), keys only, n=%llu %s, %s", range_dist_names[rd],
                     tc_dtype_name(kd), begin_bit, end_bit, (unsigned long long)n,
                     descending ? "descending" : "ascending", dist_rotation % 2 ? "in place" : "out of place");
            run_sort_spec(ctx, kd, keys, n, -1, descending, (int)(dist_rotation % 2), spec);
        }
    free(keys);
}

/* gpuprim_argsort on presorted, strictly reversed and non-increasing-with-
 * ties keys (indices of a rotating index dtype, keys_out NULL, apart or in
 * place; one order, or both), then strictly reversed whole keys by their top
 * half: ties in the range, which must keep their input order. */
static void dist_argsort_run(gpuprim_context_t ctx, gpuprim_dtype_t kd, uint64_t n, int both_orders) {
    static const dist_t dists[] = {DIST_SORTED, DIST_REVERSED, DIST_REVERSED_TIES, DIST_REVERSED_ONE_TIE};
    static const gpuprim_dtype_t index_dtypes[4] = {GPUPRIM_DTYPE_I32, GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_I64,
                                                    GPUPRIM_DTYPE_U64};
    const unsigned begin_bit = tc_bits(kd) / 2;
    void *keys;
    size_t k;
    int descending;
    if (n > tc_max_count()) return;
    keys = tc_xmalloc(n * 8);
    for (k = 0; k < sizeof dists / sizeof dists[0]; ++k)
        for (descending = 0; descending < 2; ++descending) {
            gpuprim_dtype_t id = index_dtypes[dist_rotation % 4];
            int keys_out_mode = (int)((dist_rotation / 4) % 3);
            uint64_t m;
            if (!both_orders && (int)(k % 2) != descending) continue;
            ++dist_rotation;
            tc_where("distribution %s: argsort %s n=%llu %s, generating", dist_names[dists[k]], tc_dtype_name(kd),
                     (unsigned long long)n, descending ? "descending" : "ascending");
            m = dist_fill(kd, keys, n, dists[k], descending);
            dist_check_shape(kd, keys, m, dists[k], descending);
            tc_where("distribution %s: argsort %s -> %s indices, n=%llu %s, keys_out %s", dist_names[dists[k]],
                     tc_dtype_name(kd), tc_dtype_name(id), (unsigned long long)m,
                     descending ? "descending" : "ascending",
                     keys_out_mode == 0 ? "NULL" : keys_out_mode == 1 ? "apart" : "in place");
            dist_argsort(ctx, kd, id, keys, m, descending, keys_out_mode, 0, 0);
        }
    for (descending = 0; descending < 2; ++descending) {
        if (!both_orders && descending != (int)(dist_rotation % 2)) continue;
        range_fill(kd, keys, n, RANGE_WHOLE_REVERSED, descending, begin_bit, tc_bits(kd));
        tc_where("distribution whole keys strictly reversed: argsort %s bits [%u, %u) -> u32 indices, n=%llu %s",
                 tc_dtype_name(kd), begin_bit, tc_bits(kd), (unsigned long long)n,
                 descending ? "descending" : "ascending");
        dist_argsort(ctx, kd, GPUPRIM_DTYPE_U32, keys, n, descending, descending ? 2 : 1, begin_bit, 0);
    }
    free(keys);
}

/*
 * Key distributions, for correctness and stability on whatever backend runs
 * the test: sizes 2, 33 and 5000 for every dtype, 262145 (past the CUDA
 * sort's fused path), 600001 and 1048583 (its large-input radix path) for
 * u32, u64, i32, f32 and f64, rotated so that every distribution meets u32
 * pairs at every size and the other dtypes, keys only and the placements in
 * turn. Sizes past GPUPRIM_TEST_MAX_COUNT are skipped.
 */
static void test_sort_distributions(gpuprim_context_t ctx) {
    static const uint64_t small_sizes[] = {2, 33, 5000};
    /* 262145: besides u32, one of these per distribution and order */
    static const gpuprim_dtype_t others[4] = {GPUPRIM_DTYPE_U64, GPUPRIM_DTYPE_I32, GPUPRIM_DTYPE_F32,
                                              GPUPRIM_DTYPE_F64};
    /* 600001: one of these per distribution and order (modes: DIST_*) */
    static const struct {
        gpuprim_dtype_t d;
        int modes;
    } at_600001[5] = {{GPUPRIM_DTYPE_U32, DIST_KEYS},
                      {GPUPRIM_DTYPE_I32, DIST_PAIRS},
                      {GPUPRIM_DTYPE_F64, DIST_PAIRS},
                      {GPUPRIM_DTYPE_U64, DIST_PAIRS},
                      {GPUPRIM_DTYPE_F32, DIST_PAIRS}};
    size_t di, si, k;
    int dist, descending;

    /* The generators' inverse of tc_sort_key, at both ends of the key space
       and at random, every dtype and order. */
    for (di = 0; di < TC_DTYPE_COUNT; ++di) {
        gpuprim_dtype_t d = tc_all_dtypes[di];
        for (descending = 0; descending < 2; ++descending) {
            uint64_t i, bad = 0;
            tc_where("distribution generators: the inverse of the order key, %s %s", tc_dtype_name(d),
                     descending ? "descending" : "ascending");
            for (i = 0; i < 4096; ++i) {
                uint64_t key = i < 1024 ? i : i < 2048 ? tc_mask(d) - (i - 1024) : tc_rand();
                key &= tc_mask(d);
                if (tc_sort_key(d, dist_bits_of_key(d, key, descending), descending) != key) ++bad;
            }
            CHECKF(bad == 0, "%llu order keys do not map back", (unsigned long long)bad);
        }
    }

    /* Every dtype at small sizes: every distribution, both orders, pairs and
       keys only; at 5000 the edges in every placement. */
    for (di = 0; di < TC_DTYPE_COUNT; ++di)
        for (si = 0; si < sizeof small_sizes / sizeof small_sizes[0]; ++si)
            for (dist = 0; dist < DIST_COUNT; ++dist)
                for (descending = 0; descending < 2; ++descending)
                    dist_run(ctx, tc_all_dtypes[di], small_sizes[si], (dist_t)dist, descending,
                             DIST_PAIRS | DIST_KEYS |
                                 (small_sizes[si] == 5000 && dist_is_edge((dist_t)dist) ? DIST_ALL_PLACEMENTS : 0));

    /* 262145: every distribution and order with u32 pairs (keys only in one
       order, both for the edges), and pairs of one of u64, i32, f32, f64 (the
       float distributions: f32 and f64). */
    for (dist = 0; dist < DIST_COUNT; ++dist)
        for (descending = 0; descending < 2; ++descending) {
            dist_t dt = (dist_t)dist;
            int keys_only = (dist + descending) % 2 == 0 || dist_is_edge(dt) ? DIST_KEYS : 0;
            if (!dist_applies(GPUPRIM_DTYPE_U32, dt)) {
                dist_run(ctx, GPUPRIM_DTYPE_F32, 262145, dt, descending, DIST_PAIRS | DIST_KEYS);
                dist_run(ctx, GPUPRIM_DTYPE_F64, 262145, dt, descending, DIST_PAIRS);
                continue;
            }
            dist_run(ctx, GPUPRIM_DTYPE_U32, 262145, dt, descending, DIST_PAIRS | keys_only);
            dist_run(ctx, others[(dist + 3 * descending) % 4], 262145, dt, descending, DIST_PAIRS);
        }

    /* The large-input radix path. 1048583: u32 pairs every distribution and
       order, u32 keys only and u64 pairs for the low-entropy keys in one
       order; sorted and strictly reversed: u32 pairs and keys only in every
       placement, both orders; u64 pairs for the edges, both orders; f32 pairs
       where the float order decides. 600001: one configuration of at_600001
       each (u32 keys only among them). */
    for (k = 0; k < DIST_LARGE_COUNT; ++k)
        for (descending = 0; descending < 2; ++descending) {
            dist_t dl = dist_large[k];
            int edge = dist_is_edge(dl), one_order = (int)(k % 2) == descending;
            int every_placement = dl == DIST_SORTED || dl == DIST_REVERSED ? DIST_ALL_PLACEMENTS : 0;
            if (!dist_applies(GPUPRIM_DTYPE_U32, dl)) {
                dist_run(ctx, GPUPRIM_DTYPE_F32, 1048583, dl, descending, DIST_PAIRS | DIST_KEYS);
                dist_run(ctx, GPUPRIM_DTYPE_F64, 600001, dl, descending, DIST_PAIRS);
                continue;
            }
            dist_run(ctx, GPUPRIM_DTYPE_U32, 1048583, dl, descending,
                     DIST_PAIRS | (every_placement || (dist_is_low_entropy(dl) && one_order) ? DIST_KEYS : 0) |
                         every_placement);
            if (edge || (dist_is_low_entropy(dl) && !one_order))
                dist_run(ctx, GPUPRIM_DTYPE_U64, 1048583, dl, descending, DIST_PAIRS);
            if (dist_is_float_edge(dl)) dist_run(ctx, GPUPRIM_DTYPE_F32, 1048583, dl, descending, DIST_PAIRS);
            dist_run(ctx, at_600001[(k + 2 * (size_t)descending) % 5].d, 600001, dl, descending,
                     at_600001[(k + 2 * (size_t)descending) % 5].modes);
        }

    /* Past one tile per block of the CUDA order check (4096 4-byte keys or
       2048 8-byte ones a tile, a few blocks per SM): an input out of order
       only at its very end, where a block's last round of tiles ends short. */
    for (descending = 0; descending < 2; ++descending) {
        dist_run(ctx, GPUPRIM_DTYPE_U32, 4000037, DIST_SORTED_BUT_LAST, descending, DIST_PAIRS | DIST_KEYS);
        dist_run(ctx, GPUPRIM_DTYPE_U32, 4000037, DIST_REVERSED_TIE_END, descending, DIST_PAIRS);
        dist_run(ctx, GPUPRIM_DTYPE_U64, 4000037, descending ? DIST_REVERSED_BUT_LAST : DIST_SORTED_BUT_LAST,
                 descending, DIST_PAIRS);
    }

    /* 1- and 2-byte keys (the CUDA order check without cp.async staging) at
       the large-input path: in order with ties, both orders, and near misses
       (strictly reversed keys need more distinct values than they have). */
    {
        static const gpuprim_dtype_t narrow[6] = {GPUPRIM_DTYPE_F16, GPUPRIM_DTYPE_BF16, GPUPRIM_DTYPE_U16,
                                                  GPUPRIM_DTYPE_I16, GPUPRIM_DTYPE_U8,   GPUPRIM_DTYPE_I8};
        static const dist_t in_order[4] = {DIST_SORTED, DIST_REVERSED_TIES, DIST_SORTED_RUNS, DIST_SORTED_BUT_LAST};
        for (di = 0; di < 6; ++di)
            for (descending = 0; descending < 2; ++descending) {
                dist_run(ctx, narrow[di], 600001, in_order[(di + (size_t)descending) % 2], descending,
                         DIST_PAIRS | DIST_KEYS);
                dist_run(ctx, narrow[di], 600001, in_order[2 + (di + (size_t)descending) % 2], descending, DIST_PAIRS);
            }
    }

    /* Bit ranges [begin_bit, end_bit). */
    dist_range_run(ctx, GPUPRIM_DTYPE_U32, 5000, 8, 24, 1);
    dist_range_run(ctx, GPUPRIM_DTYPE_U32, 5000, 0, 12, 1);
    dist_range_run(ctx, GPUPRIM_DTYPE_U64, 5000, 40, 64, 1);
    dist_range_run(ctx, GPUPRIM_DTYPE_I64, 5000, 0, 20, 1);
    dist_range_run(ctx, GPUPRIM_DTYPE_F64, 5000, 12, 64, 1);
    dist_range_run(ctx, GPUPRIM_DTYPE_F16, 5000, 4, 16, 1);
    dist_range_run(ctx, GPUPRIM_DTYPE_BF16, 5000, 0, 9, 1);
    dist_range_run(ctx, GPUPRIM_DTYPE_U8, 5000, 2, 6, 1);
    dist_range_run(ctx, GPUPRIM_DTYPE_I16, 5000, 8, 16, 1);
    dist_range_run(ctx, GPUPRIM_DTYPE_U32, 262145, 16, 32, 1);
    dist_range_run(ctx, GPUPRIM_DTYPE_U32, 600001, 0, 20, 2);
    dist_range_run(ctx, GPUPRIM_DTYPE_I32, 262145, 4, 28, 0);
    dist_range_run(ctx, GPUPRIM_DTYPE_F64, 262145, 12, 64, 0);
    dist_range_run(ctx, GPUPRIM_DTYPE_F32, 600001, 20, 32, 0);
    dist_range_run(ctx, GPUPRIM_DTYPE_U64, 600001, 16, 48, 0);
    dist_range_run(ctx, GPUPRIM_DTYPE_U32, 1048583, 8, 24, 0);
    /* ... within the one-block sort's 4096 keys (radix passes over the range) */
    dist_range_run(ctx, GPUPRIM_DTYPE_U32, 4096, 8, 24, 1);
    dist_range_run(ctx, GPUPRIM_DTYPE_F32, 1000, 20, 32, 1);
    dist_range_run(ctx, GPUPRIM_DTYPE_U64, 2048, 16, 48, 1);
    dist_range_run(ctx, GPUPRIM_DTYPE_I16, 4095, 8, 16, 1);
    dist_range_run(ctx, GPUPRIM_DTYPE_U8, 300, 2, 6, 1);
    dist_range_run(ctx, GPUPRIM_DTYPE_F64, 1025, 0, 13, 1);

    /* gpuprim_argsort. */
    for (di = 0; di < TC_DTYPE_COUNT; ++di) dist_argsort_run(ctx, tc_all_dtypes[di], 5000, 1);
    for (di = 0; di < TC_DTYPE_COUNT; ++di) dist_argsort_run(ctx, tc_all_dtypes[di], di % 2 ? 4096 : 1500, 0);
    dist_argsort_run(ctx, GPUPRIM_DTYPE_U32, 1048583, 1);
    dist_argsort_run(ctx, GPUPRIM_DTYPE_F32, 1048583, 0);
    dist_argsort_run(ctx, GPUPRIM_DTYPE_U64, 600001, 0);
}

/* Argsort of 4-byte keys into 8-byte indices past the medium tile (2^19
 * keys): the positions travel as 4-byte halves of packed pairs and the last
 * executed pass writes them wide. The key patterns set how many passes
 * execute (1 to 4: keys below 2^8, 2^16, 2^24 or any); with 3 the first
 * pass writes the output's values as 4-byte words and the next reads them
 * back. Full-entropy floats bring NaNs of both signs, infinities and
 * subnormals; few distinct values bring long runs of ties. */
static void test_argsort_wide_indices(gpuprim_context_t ctx) {
    static const gpuprim_dtype_t key_dtypes[] = {GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_I32, GPUPRIM_DTYPE_F32};
    static const uint64_t sizes[] = {(1u << 19) + 5, (1u << 21) + 1};
    static const unsigned live_bits[] = {8, 16, 24, 32};
    size_t s, k, b;
    unsigned rotation = 0;
    for (s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
        const uint64_t n = sizes[s];
        uint32_t *keys;
        if (n > tc_max_count()) continue;
        keys = (uint32_t *)tc_xmalloc(n * 4);
        for (k = 0; k < sizeof key_dtypes / sizeof key_dtypes[0]; ++k)
            for (b = 0; b < sizeof live_bits / sizeof live_bits[0] + 1; ++b, ++rotation) {
                const gpuprim_dtype_t kd = key_dtypes[k];
                const gpuprim_dtype_t id = rotation % 2 ? GPUPRIM_DTYPE_U64 : GPUPRIM_DTYPE_I64;
                const int descending = (int)(rotation / 2 % 2);
                const int keys_out_mode = (int)(rotation % 3); /* NULL, apart, in place (not packed) */
                uint64_t i;
                if (b < sizeof live_bits / sizeof live_bits[0]) {
                    const uint32_t mask = live_bits[b] == 32 ? 0xffffffffu : (1u << live_bits[b]) - 1;
                    for (i = 0; i < n; ++i) keys[i] = (uint32_t)tc_rand() & mask;
                } else {
                    tc_fill(kd, keys, n, TC_SMALL_RANGE);
                }
                tc_where("argsort %s -> %s indices, n=%llu, %s %u, %s, keys_out %s", tc_dtype_name(kd),
                         tc_dtype_name(id), (unsigned long long)n,
                         b < sizeof live_bits / sizeof live_bits[0] ? "random bits below bit" : "distinct values:",
                         b < sizeof live_bits / sizeof live_bits[0] ? live_bits[b] : 8,
                         descending ? "descending" : "ascending",
                         keys_out_mode == 0 ? "NULL" : keys_out_mode == 1 ? "apart" : "in place");
                dist_argsort(ctx, kd, id, keys, n, descending, keys_out_mode, 0, 0);
            }
        free(keys);
    }
}

/* Past 2^21 keys the CUDA sort counts digits with its many-keys histogram
 * (1,024 threads, 16 or 32 replicas of each shared counter); below, the
 * few-keys one. Every key width, keys alone and pairs (packed and split),
 * both orders, a bit range, and the distributions that crowd counters:
 * special floats, few distinct values, all equal but one in the middle
 * (neither sorted nor reversed, so the order check does not stop the sort). */
static void test_sort_many_keys_histogram(gpuprim_context_t ctx) {
    static const struct {
        gpuprim_dtype_t keys;
        int values; /* -1: keys only */
        tc_pattern_t pattern;
        int descending, placement;
        unsigned begin_bit, end_bit; /* both 0: the whole key */
    } cases[] = {
        {GPUPRIM_DTYPE_U32, -1, TC_RANDOM_BITS, 0, 0, 0, 0},
        {GPUPRIM_DTYPE_F32, -1, TC_SPECIAL, 1, 2, 0, 0},
        {GPUPRIM_DTYPE_I32, GPUPRIM_DTYPE_U32, TC_SMALL_RANGE, 0, 0, 0, 0},
        {GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_U32, TC_MODERATE, 1, 3, 0, 0},
        {GPUPRIM_DTYPE_U32, -1, TC_RANDOM_BITS, 0, 0, 8, 24},
        {GPUPRIM_DTYPE_U8, -1, TC_RANDOM_BITS, 1, 0, 0, 0},
        {GPUPRIM_DTYPE_F16, GPUPRIM_DTYPE_U32, TC_NAN_SPARSE, 0, 1, 0, 0},
        {GPUPRIM_DTYPE_U64, -1, TC_RANDOM_BITS, 0, 0, 0, 0},
        {GPUPRIM_DTYPE_F64, GPUPRIM_DTYPE_I64, TC_MODERATE, 1, 0, 0, 0},
        {GPUPRIM_DTYPE_I64, -1, TC_EQUAL, 0, 2, 0, 0},
        /* 8-byte keys with 4-byte values have a tile of their own (512 x 12) */
        {GPUPRIM_DTYPE_U64, GPUPRIM_DTYPE_U32, TC_RANDOM_BITS, 0, 0, 0, 0},
        {GPUPRIM_DTYPE_F64, GPUPRIM_DTYPE_F32, TC_SPECIAL, 1, 3, 0, 0},
        {GPUPRIM_DTYPE_U64, GPUPRIM_DTYPE_I32, TC_MODERATE, 0, 1, 4, 44},
    };
    const uint64_t n = ((uint64_t)1 << 21) + 3;
    size_t c;
    if (n > tc_max_count()) return;
    for (c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        const gpuprim_dtype_t kd = cases[c].keys;
        sort_spec_t spec = whole_sort;
        void *keys = tc_xmalloc(n * tc_size(kd));
        tc_fill(kd, keys, n, cases[c].pattern);
        /* all equal but one: one digit takes every count but one */
        if (cases[c].pattern == TC_EQUAL) tc_set(kd, keys, n / 2, tc_get(kd, keys, 0) ^ 0x0101);
        if (cases[c].end_bit != 0) {
            spec.call = CALL_OPTIONS_RANGE;
            spec.begin_bit = cases[c].begin_bit;
            spec.end_bit = cases[c].end_bit;
        }
        where_sort(kd, n, (int)cases[c].pattern, cases[c].values, cases[c].descending, cases[c].placement);
        run_sort_spec(ctx, kd, keys, n, cases[c].values, cases[c].descending, cases[c].placement, spec);
        free(keys);
    }
}

/*
 * Past pairs8_large_max (2^26; sort_policy.cuh) the CUDA sort of 8-byte keys
 * with 4-byte values runs a tile of its own (OnesweepPairs8HugeShape). GPU
 * only: the CPU backend has no such path, and the host reference of 2^26
 * pairs would double CI's test time.
 */
static void test_sort_huge_pairs8(gpuprim_context_t ctx) {
    static const struct {
        gpuprim_dtype_t keys, values;
        tc_pattern_t pattern;
        int descending, placement;
    } cases[] = {
        {GPUPRIM_DTYPE_U64, GPUPRIM_DTYPE_U32, TC_RANDOM_BITS, 0, 0},
        {GPUPRIM_DTYPE_F64, GPUPRIM_DTYPE_I32, TC_SPECIAL, 1, 1},
    };
    const uint64_t n = ((uint64_t)1 << 26) + 6151; /* one tile and a part past the threshold */
    size_t c;
    if (!tc_backend_is_cuda(ctx) || n > tc_max_count()) return;
    for (c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        void *keys = tc_xmalloc(n * tc_size(cases[c].keys));
        tc_fill(cases[c].keys, keys, n, cases[c].pattern);
        where_sort(cases[c].keys, n, (int)cases[c].pattern, cases[c].values, cases[c].descending,
                   cases[c].placement);
        run_sort(ctx, cases[c].keys, keys, n, cases[c].values, cases[c].descending, cases[c].placement);
        free(keys);
    }
}

/* Out of place with the outputs at +key_offset / +value_offset elements of
 * larger buffers (4-byte elements: +1 is off 8-byte alignment). */
static void run_sort_offset_outputs(gpuprim_context_t ctx, gpuprim_dtype_t kd, gpuprim_dtype_t vd, const void *keys,
                                    uint64_t n, uint64_t key_offset, uint64_t value_offset) {
    uint64_t *perm = (uint64_t *)tc_xmalloc(n * sizeof *perm);
    void *want_keys = tc_xmalloc(n * tc_size(kd)), *values = tc_xmalloc(n * tc_size(vd));
    void *want_values = tc_xmalloc(n * tc_size(vd));
    gpuprim_buffer_t kin, vin, kbase, vbase, kout, vout;
    tc_where("sort %s keys with %s values n=%llu, keys out at +%llu, values out at +%llu", tc_dtype_name(kd),
             tc_dtype_name(vd), (unsigned long long)n, (unsigned long long)key_offset,
             (unsigned long long)value_offset);
    fill_values(vd, values, n);
    tc_reference_sort_permutation(kd, keys, n, 0, perm);
    tc_permute(kd, keys, perm, n, want_keys);
    tc_permute(vd, values, perm, n, want_values);
    kin = tc_buffer_from(ctx, kd, keys, n);
    vin = tc_buffer_from(ctx, vd, values, n);
    kbase = tc_buffer(ctx, kd, n + key_offset);
    vbase = tc_buffer(ctx, vd, n + value_offset);
    tc_poison(ctx, kbase, kd, n + key_offset);
    tc_poison(ctx, vbase, vd, n + value_offset);
    kout = tc_view(ctx, kbase, kd, key_offset, n);
    vout = tc_view(ctx, vbase, vd, value_offset, n);
    CHECK_OK(gpuprim_sort(ctx, kin, vin, kout, vout, GPUPRIM_ORDER_ASCENDING));
    CHECK_BUFFER_EQ(ctx, kout, kd, want_keys, n, "sorted keys (offset outputs)");
    CHECK_BUFFER_EQ(ctx, vout, vd, want_values, n, "values (offset outputs)");
    CHECK_BUFFER_EQ(ctx, kin, kd, keys, n, "keys_in after an out-of-place sort");
    CHECK_BUFFER_EQ(ctx, vin, vd, values, n, "values_in after an out-of-place sort");
    CHECK_OK(gpuprim_buffer_destroy(ctx, kout));
    CHECK_OK(gpuprim_buffer_destroy(ctx, vout));
    CHECK_OK(gpuprim_buffer_destroy(ctx, kbase));
    CHECK_OK(gpuprim_buffer_destroy(ctx, vbase));
    CHECK_OK(gpuprim_buffer_destroy(ctx, kin));
    CHECK_OK(gpuprim_buffer_destroy(ctx, vin));
    free(perm);
    free(want_keys);
    free(values);
    free(want_values);
}

/* 4-byte keys with 4-byte values (and argsorts of 4-byte keys) travel as
 * packed 8-byte elements through CUDA's radix passes: packed in the
 * temporary buffer, split in the input and output buffers, which a pass
 * between the first and the last may write and read too. Even and odd
 * counts past the fused launch (the matrix and distributions use odd ones),
 * 4 and 3 executed passes (keys of 24 varying bits: out of place, the first
 * pass writes the output), a bit range, both placements and orders,
 * argsorts with 4- and 8-byte indices, and outputs off 8-byte alignment. */
static void test_sort_packed_pairs(gpuprim_context_t ctx) {
    static const struct {
        gpuprim_dtype_t keys, values;
    } types[] = {{GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_U32},
                 {GPUPRIM_DTYPE_F32, GPUPRIM_DTYPE_I32},
                 {GPUPRIM_DTYPE_I32, GPUPRIM_DTYPE_F32}};
    static const uint64_t counts[] = {600000, 1000002, 1000001};
    size_t ci, ti;
    unsigned rotation = 0;
    for (ci = 0; ci < sizeof counts / sizeof counts[0]; ++ci) {
        const uint64_t n = counts[ci];
        /* the CPU backend has no such passes: one count there */
        if (n > tc_max_count() || (!tc_backend_is_cuda(ctx) && ci != 1)) continue;
        for (ti = 0; ti < sizeof types / sizeof types[0]; ++ti) {
            const gpuprim_dtype_t kd = types[ti].keys, vd = types[ti].values;
            uint32_t *keys = (uint32_t *)tc_xmalloc(n * 4);
            int low24, placement, descending;
            for (low24 = 0; low24 < 2; ++low24) {
                uint64_t i;
                tc_fill(kd, keys, n, TC_RANDOM_BITS);
                /* non-negative and below 2^24: the top byte never varies */
                if (low24)
                    for (i = 0; i < n; ++i) keys[i] &= 0xFFFFFFu;
                for (placement = 0; placement < 2; ++placement)
                    for (descending = 0; descending < 2; ++descending) {
                        sort_spec_t spec = whole_sort;
                        if (rotation++ % 3 == 2) spec.call = CALL_OPTIONS_RANGE, spec.begin_bit = 4, spec.end_bit = 28;
                        where_sort(kd, n, low24 ? -1 : TC_RANDOM_BITS, vd, descending, placement);
                        run_sort_spec(ctx, kd, keys, n, (int)vd, descending, placement, spec);
                    }
                tc_where("argsort %s n=%llu%s, u32 and u64 indices", tc_dtype_name(kd), (unsigned long long)n,
                         low24 ? " (24-bit keys)" : "");
                dist_argsort(ctx, kd, GPUPRIM_DTYPE_U32, keys, n, low24, (int)(rotation % 3), 0, 0);
                dist_argsort(ctx, kd, GPUPRIM_DTYPE_U64, keys, n, !low24, (int)((rotation + 1) % 3), 0, 0);
            }
            if (ti == 0) {
                run_sort_offset_outputs(ctx, kd, vd, keys, n, 1, 0);
                run_sort_offset_outputs(ctx, kd, vd, keys, n, 0, 1);
                run_sort_offset_outputs(ctx, kd, vd, keys, n, 1, 1);
            }
            free(keys);
        }
    }
}

int main(void) {
    gpuprim_context_t ctx = tc_init("test_sort");
    if (tc_section("known_orders")) {
        test_sort_known_float_order(ctx);
        test_sort_known_half_order(ctx);
    }
    if (tc_section("bit_ranges")) test_sort_bit_ranges(ctx);
    if (tc_section("bit_patterns")) {
        test_sort_all_bit_patterns(ctx);
        test_sort_bit_patterns(ctx);
    }
    if (tc_section("matrix")) test_sort_matrix(ctx);
    if (tc_section("stability")) test_sort_stability(ctx);
    if (tc_section("unaligned_views")) {
        test_sort_unaligned_views(ctx, 5003);
        test_sort_unaligned_views(ctx, 700001);
    }
    if (tc_section("distributions")) test_sort_distributions(ctx);
    if (tc_section("argsort_wide")) test_argsort_wide_indices(ctx);
    if (tc_section("many_keys_histogram")) test_sort_many_keys_histogram(ctx);
    if (tc_section("huge_pairs8")) test_sort_huge_pairs8(ctx);
    if (tc_section("packed_pairs")) test_sort_packed_pairs(ctx);
    return tc_finish();
}
