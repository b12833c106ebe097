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

static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
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
        qsort(a, n, 8, compare_u64);
        qsort(b, n, 8, compare_u64);
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

int main(void) {
    gpuprim_context_t ctx = tc_init("test_sort");
    test_sort_known_float_order(ctx);
    test_sort_known_half_order(ctx);
    test_sort_bit_ranges(ctx);
    test_sort_all_bit_patterns(ctx);
    test_sort_matrix(ctx);
    test_sort_stability(ctx);
    test_sort_bit_patterns(ctx);
    test_sort_unaligned_views(ctx, 5003);
    test_sort_unaligned_views(ctx, 700001);
    return tc_finish();
}
