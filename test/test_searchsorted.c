/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpuprim_searchsorted over all 12 dtypes, both orders, both sides and the
 * four index dtypes, against a reference written here from the header: the
 * number of keys that come before the query in the sort's order (strictly
 * for SIDE_LEFT, or equal too for SIDE_RIGHT), the order being the order
 * key tc_sort_key (floats: -0 < +0, NaNs last by bit pattern; descending by
 * complement). Small cases are also checked by counting every key. Keys with
 * duplicates at every bound; queries drawn from the keys, from outside their
 * range, and the specials (NaNs of both signs and several payloads, +-0,
 * +-inf, the type's min and max); queries in order (the merge path of the
 * CUDA kernel's tiles, dense and sparse), in sorted runs that break inside a
 * tile, and in random order; counts 0, 1, around the CUDA tile (2048
 * queries, 1024 for 8-byte keys) and its key window (two tiles), and the
 * CPU's pieces (4096); poisoned outputs; the errors, each leaving every
 * buffer as it was. gpuprim_searchsorted_rows: rows of their own keys and
 * queries (empty rows, one query, tiles +-1, many short rows).
 */
#include "test_common.h"

/* GCC 12 at -O3 follows check_search's constant-propagated clone into
 * tc_poison with a query count it also believes is 0 and reports a write past
 * a 16-byte allocation that cannot happen (tc_poison returns for 0). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

static const gpuprim_dtype_t index_dtypes[4] = {GPUPRIM_DTYPE_I32, GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_I64,
                                                GPUPRIM_DTYPE_U64};

/* The reference bound of one query: a binary search over the keys' order
 * keys, cross-checked by counting on small inputs. */
static uint64_t reference_bound(gpuprim_dtype_t d, const void *keys, uint64_t n, uint64_t query, int descending,
                                int upper) {
    const uint64_t q = tc_sort_key(d, query, descending);
    uint64_t lo = 0, hi = n;
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        const uint64_t k = tc_sort_key(d, tc_get(d, keys, mid), descending);
        if (upper ? k <= q : k < q) lo = mid + 1;
        else hi = mid;
    }
    if (n <= 64) {
        uint64_t i, counted = 0;
        for (i = 0; i < n; ++i) {
            const uint64_t k = tc_sort_key(d, tc_get(d, keys, i), descending);
            counted += (upper ? k <= q : k < q) ? 1 : 0;
        }
        CHECKF(counted == lo, "reference: binary search %llu, count %llu", (unsigned long long)lo,
               (unsigned long long)counted);
    }
    return lo;
}

typedef enum query_kind {
    Q_FROM_KEYS,  /* keys of the buffer: duplicates at every bound */
    Q_MIXED,      /* keys, their neighbours in bits, random values and the specials */
    Q_SPECIALS,   /* NaNs, +-0, +-inf, min, max only */
    Q_KIND_COUNT
} query_kind_t;
static const char *const query_kind_names[Q_KIND_COUNT] = {"from keys", "mixed", "specials"};

typedef enum query_order {
    O_RANDOM,      /* any order: binary searches */
    O_SORTED,      /* in the search's order: merge paths */
    O_RUNS,        /* sorted runs of 1500 that break inside tiles */
    O_ORDER_COUNT
} query_order_t;
static const char *const query_order_names[O_ORDER_COUNT] = {"random order", "sorted", "sorted runs"};

static uint64_t random_query(gpuprim_dtype_t d, const void *keys, uint64_t n, query_kind_t kind) {
    const int pick = (int)tc_below(kind == Q_FROM_KEYS ? 1 : kind == Q_SPECIALS ? 1 : 5);
    if (kind == Q_SPECIALS || (kind == Q_MIXED && pick == 4)) {
        if (tc_is_float(d)) return tc_float_specials(d)[tc_below(TC_FLOAT_SPECIAL_COUNT)];
        switch (tc_below(5)) {
        case 0: return tc_identity(GPUPRIM_OP_MAX, d); /* the type's least value */
        case 1: return tc_identity(GPUPRIM_OP_MIN, d); /* its greatest */
        case 2: return 0;
        case 3: return 1;
        default: return tc_mask(d); /* -1 signed */
        }
    }
    if (n > 0 && (kind == Q_FROM_KEYS || pick <= 1)) return tc_get(d, keys, tc_below(n));
    if (n > 0 && pick == 2) return (tc_get(d, keys, tc_below(n)) + (tc_below(2) ? 1 : tc_mask(d))) & tc_mask(d);
    return tc_rand() & tc_mask(d);
}

/* Queries of the kind, in the order asked (sorted in the search's order). */
static void *make_queries(gpuprim_dtype_t d, const void *keys, uint64_t n, uint64_t m, query_kind_t kind,
                          query_order_t order, int descending) {
    void *q = tc_xmalloc(m * tc_size(d) + 8);
    uint64_t i;
    for (i = 0; i < m; ++i) tc_set(d, q, i, random_query(d, keys, n, kind));
    if (order != O_RANDOM && m > 0) {
        const uint64_t run = order == O_SORTED ? m : 1500;
        uint64_t *perm = (uint64_t *)tc_xmalloc((run + 1) * sizeof(uint64_t));
        void *part = tc_xmalloc(run * tc_size(d) + 8);
        uint64_t start;
        for (start = 0; start < m; start += run) {
            const uint64_t len = m - start < run ? m - start : run;
            tc_reference_sort_permutation(d, (char *)q + start * tc_size(d), len, descending, perm);
            tc_permute(d, (char *)q + start * tc_size(d), perm, len, part);
            memcpy((char *)q + start * tc_size(d), part, len * tc_size(d));
        }
        free(perm);
        free(part);
    }
    return q;
}

/* One call: indices poisoned, then every index against the reference; the
 * inputs left as they were. */
static void check_search(gpuprim_context_t ctx, gpuprim_dtype_t d, gpuprim_dtype_t id, const void *keys, uint64_t n,
                         const void *queries, uint64_t m, int descending, int upper) {
    gpuprim_buffer_t kb = tc_buffer_from(ctx, d, keys, n), qb = tc_buffer_from(ctx, d, queries, m);
    gpuprim_buffer_t ib = tc_buffer(ctx, id, m);
    void *got;
    uint64_t j;
    long reported = 0;
    tc_poison(ctx, ib, id, m);
    CHECK_OK(gpuprim_searchsorted(ctx, kb, qb, upper ? GPUPRIM_SIDE_RIGHT : GPUPRIM_SIDE_LEFT,
                                  descending ? GPUPRIM_ORDER_DESCENDING : GPUPRIM_ORDER_ASCENDING, ib));
    got = tc_download(ctx, ib, id, m);
    for (j = 0; j < m; ++j) {
        const uint64_t want = reference_bound(d, keys, n, tc_get(d, queries, j), descending, upper);
        const uint64_t have = tc_get(id, got, j);
        tc.checks++;
        if (have != want && reported++ < 5) {
            char text[96];
            tc_fail(__FILE__, __LINE__, "query %llu (%s): index %llu, expected %llu", (unsigned long long)j,
                    tc_format(d, tc_get(d, queries, j), text, sizeof text), (unsigned long long)have,
                    (unsigned long long)want);
        }
    }
    free(got);
    CHECK_BUFFER_EQ(ctx, kb, d, keys, n, "sorted after the call");
    CHECK_BUFFER_EQ(ctx, qb, d, queries, m, "queries after the call");
    CHECK_OK(gpuprim_buffer_destroy(ctx, ib));
    CHECK_OK(gpuprim_buffer_destroy(ctx, qb));
    CHECK_OK(gpuprim_buffer_destroy(ctx, kb));
}

static void test_sizes(gpuprim_context_t ctx) {
    static const uint64_t key_counts[] = {0, 1, 2, 3, 33, 1000, 2047, 2049, 4095, 4097, 70001};
    static const tc_pattern_t patterns[] = {TC_SMALL_RANGE, TC_MODERATE, TC_SPECIAL, TC_EQUAL, TC_NAN_HEAVY};
    size_t di, ni;
    int combo = 0;
    for (di = 0; di < TC_DTYPE_COUNT; ++di) {
        const gpuprim_dtype_t d = tc_all_dtypes[di];
        const uint64_t tile = tc_size(d) == 8 ? 1024 : 2048;
        const uint64_t query_counts[] = {0, 1, 2, tile - 1, tile, tile + 1, 2 * tile + 1, 4097, 20011};
        for (ni = 0; ni < sizeof key_counts / sizeof key_counts[0]; ++ni) {
            const uint64_t n = key_counts[ni];
            size_t mi;
            for (mi = 0; mi < sizeof query_counts / sizeof query_counts[0]; ++mi) {
                const uint64_t m = query_counts[mi];
                const int descending = combo & 1, upper = (combo >> 1) & 1;
                const gpuprim_dtype_t id = index_dtypes[(combo >> 2) & 3];
                const tc_pattern_t p = patterns[combo % 5];
                const query_kind_t kind = (query_kind_t)(combo % Q_KIND_COUNT);
                const query_order_t order = (query_order_t)((combo / 3) % O_ORDER_COUNT);
                void *keys, *queries;
                ++combo;
                if (n > 4097 && m > 4097 && (combo & 3) != 0) continue; /* keep the run short */
                keys = tc_sorted_keys(d, n, p, descending);
                queries = make_queries(d, keys, n, m, kind, order, descending);
                tc_where("searchsorted %s n=%llu (%s) m=%llu (%s, %s) %s %s -> %s", tc_dtype_name(d),
                         (unsigned long long)n, tc_pattern_names[p], (unsigned long long)m, query_kind_names[kind],
                         query_order_names[order], descending ? "descending" : "ascending", upper ? "right" : "left",
                         tc_dtype_name(id));
                check_search(ctx, d, id, keys, n, queries, m, descending, upper);
                free(queries);
                free(keys);
            }
        }
    }
}

/* Every dtype, order, side and query order on one middling shape: the
 * specials and duplicates at every bound. */
static void test_every_combination(gpuprim_context_t ctx) {
    size_t di;
    int descending, upper, kind, order;
    for (di = 0; di < TC_DTYPE_COUNT; ++di) {
        const gpuprim_dtype_t d = tc_all_dtypes[di];
        for (descending = 0; descending < 2; ++descending)
            for (upper = 0; upper < 2; ++upper)
                for (kind = 0; kind < Q_KIND_COUNT; ++kind)
                    for (order = 0; order < O_ORDER_COUNT; ++order) {
                        const uint64_t n = 3001, m = 5003;
                        const gpuprim_dtype_t id = index_dtypes[(kind + order + upper) & 3];
                        void *keys = tc_sorted_keys(d, n, tc_is_float(d) ? TC_NAN_HEAVY : TC_SMALL_RANGE, descending);
                        void *queries = make_queries(d, keys, n, m, (query_kind_t)kind, (query_order_t)order,
                                                     descending);
                        tc_where("searchsorted %s %s %s, %s queries %s -> %s", tc_dtype_name(d),
                                 descending ? "descending" : "ascending", upper ? "right" : "left",
                                 query_kind_names[kind], query_order_names[order], tc_dtype_name(id));
                        check_search(ctx, d, id, keys, n, queries, m, descending, upper);
                        free(queries);
                        free(keys);
                    }
    }
}

/* Sorted queries much sparser than the keys (a tile's bounds span more keys
 * than the CUDA window) and much denser (many queries between two keys), and
 * many keys against a handful of queries. */
static void test_densities(gpuprim_context_t ctx) {
    static const gpuprim_dtype_t dtypes[4] = {GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_F32, GPUPRIM_DTYPE_I64,
                                              GPUPRIM_DTYPE_U8};
    static const uint64_t shapes[5][2] = {{300007, 5000}, {1000, 100003}, {1u << 20, 3}, {7, 70001}, {65536, 65536}};
    size_t di, si;
    for (di = 0; di < 4; ++di)
        for (si = 0; si < 5; ++si) {
            const gpuprim_dtype_t d = dtypes[di];
            const uint64_t n = shapes[si][0], m = shapes[si][1];
            const int descending = (int)(si & 1), upper = (int)(di & 1);
            void *keys = tc_sorted_keys(d, n, TC_MODERATE, descending);
            void *queries = make_queries(d, keys, n, m, Q_MIXED, O_SORTED, descending);
            tc_where("searchsorted %s n=%llu m=%llu sorted queries", tc_dtype_name(d), (unsigned long long)n,
                     (unsigned long long)m);
            check_search(ctx, d, GPUPRIM_DTYPE_U64, keys, n, queries, m, descending, upper);
            free(queries);
            free(keys);
        }
}

/* Enough queries that the CUDA driver keeps its whole tiles (2048 queries,
 * 1024 for 8-byte keys; it makes them smaller while the queries fill less
 * than a wave of them: 132 SMs x 4 blocks on an H100), random and sorted, over
 * keys many (the shared samples of unordered tiles) and few. */
static void test_whole_tiles(gpuprim_context_t ctx) {
    static const gpuprim_dtype_t dtypes[3] = {GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_F64, GPUPRIM_DTYPE_I8};
    static const uint64_t key_counts[2] = {(1u << 20) + 3, 5000};
    const uint64_t m = 1200007;
    size_t di, ni;
    int order;
    if (m > tc_max_count()) return;
    for (di = 0; di < 3; ++di)
        for (ni = 0; ni < 2; ++ni)
            for (order = 0; order < 2; ++order) {
                const gpuprim_dtype_t d = dtypes[di];
                const uint64_t n = key_counts[ni];
                const int descending = (int)ni, upper = (int)(di & 1);
                void *keys = tc_sorted_keys(d, n, TC_MODERATE, descending);
                void *queries = make_queries(d, keys, n, m, Q_MIXED, order ? O_SORTED : O_RANDOM, descending);
                tc_where("searchsorted %s n=%llu m=%llu %s queries (whole tiles)", tc_dtype_name(d),
                         (unsigned long long)n, (unsigned long long)m, order ? "sorted" : "random");
                check_search(ctx, d, di == 0 ? GPUPRIM_DTYPE_U32 : GPUPRIM_DTYPE_I64, keys, n, queries, m,
                             descending, upper);
                free(queries);
                free(keys);
            }
}

/* Answers spelled out (numpy's where the rules agree). */
static void expect_known(gpuprim_context_t ctx, gpuprim_dtype_t d, const uint64_t *keys, uint64_t n,
                         const uint64_t *queries, uint64_t m, int descending, int upper, const uint64_t *want,
                         const char *what) {
    void *k = tc_xmalloc(n * tc_size(d) + 8), *q = tc_xmalloc(m * tc_size(d) + 8);
    gpuprim_buffer_t kb, qb, ib;
    uint64_t got[16], j;
    for (j = 0; j < n; ++j) tc_set(d, k, j, keys[j]);
    for (j = 0; j < m; ++j) tc_set(d, q, j, queries[j]);
    kb = tc_buffer_from(ctx, d, k, n);
    qb = tc_buffer_from(ctx, d, q, m);
    ib = tc_buffer(ctx, GPUPRIM_DTYPE_U64, m);
    tc_where("searchsorted known answer %s: %s", tc_dtype_name(d), what);
    CHECK_OK(gpuprim_searchsorted(ctx, kb, qb, upper ? GPUPRIM_SIDE_RIGHT : GPUPRIM_SIDE_LEFT,
                                  descending ? GPUPRIM_ORDER_DESCENDING : GPUPRIM_ORDER_ASCENDING, ib));
    REQUIRE_OK(gpuprim_buffer_download(ctx, ib, 0, got, m));
    for (j = 0; j < m; ++j) {
        CHECKF(got[j] == want[j], "%s: query %llu -> %llu, expected %llu", what, (unsigned long long)j,
               (unsigned long long)got[j], (unsigned long long)want[j]);
        CHECKF(want[j] == reference_bound(d, k, n, queries[j], descending, upper),
               "%s: the test's expectation disagrees with its reference at %llu", what, (unsigned long long)j);
    }
    CHECK_OK(gpuprim_buffer_destroy(ctx, ib));
    CHECK_OK(gpuprim_buffer_destroy(ctx, qb));
    CHECK_OK(gpuprim_buffer_destroy(ctx, kb));
    free(k);
    free(q);
}

static void test_known_answers(gpuprim_context_t ctx) {
    /* np.searchsorted([1, 2, 2, 3], [0, 2, 3, 4], 'left') == [0, 1, 3, 4]; 'right' == [0, 3, 4, 4] */
    static const uint64_t ints[4] = {1, 2, 2, 3}, int_q[4] = {0, 2, 3, 4};
    static const uint64_t left[4] = {0, 1, 3, 4}, right[4] = {0, 3, 4, 4};
    /* descending [3, 2, 2, 1]: left [4, 1, 0, 0], right [4, 3, 1, 0] */
    static const uint64_t ints_desc[4] = {3, 2, 2, 1};
    static const uint64_t dleft[4] = {4, 1, 0, 0}, dright[4] = {4, 3, 1, 0};
    /* f32 [-inf, -0, +0, 1, +inf, nan]: queries -0, +0, nan, -nan(0xFFC00000), +inf */
    static const uint64_t f32[6] = {0xFF800000u, 0x80000000u, 0x00000000u, 0x3F800000u, 0x7F800000u, 0x7FC00000u};
    static const uint64_t f32_q[5] = {0x80000000u, 0x00000000u, 0x7FC00000u, 0xFFC00000u, 0x7F800000u};
    static const uint64_t f32_left[5] = {1, 2, 5, 6, 4}, f32_right[5] = {2, 3, 6, 6, 5};
    /* i8 [-128, -1, 0, 127]: queries -128, 127, -2 */
    static const uint64_t i8[4] = {0x80, 0xFF, 0x00, 0x7F}, i8_q[3] = {0x80, 0x7F, 0xFE};
    static const uint64_t i8_left[3] = {0, 3, 1}, i8_right[3] = {1, 4, 1};
    /* u64 [0, max]: max, max - 1 */
    static const uint64_t u64[2] = {0, 0xFFFFFFFFFFFFFFFFull}, u64_q[2] = {0xFFFFFFFFFFFFFFFFull, 0xFFFFFFFFFFFFFFFEull};
    static const uint64_t u64_left[2] = {1, 1}, u64_right[2] = {2, 1};
    /* no keys: every bound 0 */
    static const uint64_t none_want[2] = {0, 0};
    expect_known(ctx, GPUPRIM_DTYPE_I32, ints, 4, int_q, 4, 0, 0, left, "[1,2,2,3] left");
    expect_known(ctx, GPUPRIM_DTYPE_U16, ints, 4, int_q, 4, 0, 1, right, "[1,2,2,3] right");
    expect_known(ctx, GPUPRIM_DTYPE_I64, ints_desc, 4, int_q, 4, 1, 0, dleft, "[3,2,2,1] descending left");
    expect_known(ctx, GPUPRIM_DTYPE_U8, ints_desc, 4, int_q, 4, 1, 1, dright, "[3,2,2,1] descending right");
    expect_known(ctx, GPUPRIM_DTYPE_F32, f32, 6, f32_q, 5, 0, 0, f32_left, "f32 specials left");
    expect_known(ctx, GPUPRIM_DTYPE_F32, f32, 6, f32_q, 5, 0, 1, f32_right, "f32 specials right");
    expect_known(ctx, GPUPRIM_DTYPE_I8, i8, 4, i8_q, 3, 0, 0, i8_left, "i8 left");
    expect_known(ctx, GPUPRIM_DTYPE_I8, i8, 4, i8_q, 3, 0, 1, i8_right, "i8 right");
    expect_known(ctx, GPUPRIM_DTYPE_U64, u64, 2, u64_q, 2, 0, 0, u64_left, "u64 extremes left");
    expect_known(ctx, GPUPRIM_DTYPE_U64, u64, 2, u64_q, 2, 0, 1, u64_right, "u64 extremes right");
    expect_known(ctx, GPUPRIM_DTYPE_F64, u64, 0, u64_q, 2, 0, 1, none_want, "no keys");
}

/* Every failure: its status, a message naming the argument, every buffer as it was. */
static void test_errors(gpuprim_context_t ctx) {
    const int32_t data[3] = {1, 2, 3};
    gpuprim_buffer_t keys = tc_buffer_from(ctx, GPUPRIM_DTYPE_I32, data, 3);
    gpuprim_buffer_t queries = tc_buffer_from(ctx, GPUPRIM_DTYPE_I32, data, 3);
    gpuprim_buffer_t fqueries = tc_buffer(ctx, GPUPRIM_DTYPE_F32, 3);
    gpuprim_buffer_t gone = tc_buffer(ctx, GPUPRIM_DTYPE_I32, 3);
    tc_known_t out = tc_known(ctx, GPUPRIM_DTYPE_U64, 3), out_short = tc_known(ctx, GPUPRIM_DTYPE_U64, 2);
    tc_known_t out_f32 = tc_known(ctx, GPUPRIM_DTYPE_F32, 3), out_i16 = tc_known(ctx, GPUPRIM_DTYPE_I16, 3);
    gpuprim_buffer_t alias = NULL, big = NULL, out_i32 = NULL;
    gpuprim_context_t other = NULL;
    gpuprim_buffer_t foreign;
    int fake_context = 0;
    tc_where("searchsorted errors");
    CHECK_OK(gpuprim_buffer_destroy(ctx, gone));
    REQUIRE_OK(gpuprim_context_create(NULL, &other, NULL, 0));
    foreign = tc_buffer_from(other, GPUPRIM_DTYPE_I32, data, 3);

    TC_EXPECT_FAIL(ctx, gpuprim_searchsorted(ctx, NULL, queries, GPUPRIM_SIDE_LEFT, GPUPRIM_ORDER_ASCENDING, out.b),
                   GPUPRIM_ERROR_NULL_POINTER, "'sorted'");
    TC_EXPECT_FAIL(ctx, gpuprim_searchsorted(ctx, keys, NULL, GPUPRIM_SIDE_LEFT, GPUPRIM_ORDER_ASCENDING, out.b),
                   GPUPRIM_ERROR_NULL_POINTER, "'queries'");
    TC_EXPECT_FAIL(ctx, gpuprim_searchsorted(ctx, keys, queries, GPUPRIM_SIDE_LEFT, GPUPRIM_ORDER_ASCENDING, NULL),
                   GPUPRIM_ERROR_NULL_POINTER, "'indices'");
    TC_EXPECT_FAIL(ctx, gpuprim_searchsorted(ctx, gone, queries, GPUPRIM_SIDE_LEFT, GPUPRIM_ORDER_ASCENDING, out.b),
                   GPUPRIM_ERROR_INVALID_HANDLE, "'sorted'");
    TC_EXPECT_FAIL(ctx,
                   gpuprim_searchsorted(ctx, keys, foreign, GPUPRIM_SIDE_LEFT, GPUPRIM_ORDER_ASCENDING, out.b),
                   GPUPRIM_ERROR_CONTEXT_MISMATCH, "'queries'");
    TC_EXPECT_FAIL(ctx, gpuprim_searchsorted(ctx, keys, queries, (gpuprim_side_t)2, GPUPRIM_ORDER_ASCENDING, out.b),
                   GPUPRIM_ERROR_INVALID_ENUM, "'side'");
    TC_EXPECT_FAIL(ctx, gpuprim_searchsorted(ctx, keys, queries, (gpuprim_side_t)-1, GPUPRIM_ORDER_ASCENDING, out.b),
                   GPUPRIM_ERROR_INVALID_ENUM, "'side'");
    TC_EXPECT_FAIL(ctx, gpuprim_searchsorted(ctx, keys, queries, GPUPRIM_SIDE_RIGHT, (gpuprim_order_t)2, out.b),
                   GPUPRIM_ERROR_INVALID_ENUM, "'order'");
    TC_EXPECT_FAIL(ctx,
                   gpuprim_searchsorted(ctx, keys, fqueries, GPUPRIM_SIDE_LEFT, GPUPRIM_ORDER_ASCENDING, out.b),
                   GPUPRIM_ERROR_DTYPE_MISMATCH, "'queries'");
    TC_EXPECT_FAIL(ctx,
                   gpuprim_searchsorted(ctx, keys, queries, GPUPRIM_SIDE_LEFT, GPUPRIM_ORDER_ASCENDING, out_f32.b),
                   GPUPRIM_ERROR_DTYPE_MISMATCH, "'indices'");
    TC_EXPECT_FAIL(ctx,
                   gpuprim_searchsorted(ctx, keys, queries, GPUPRIM_SIDE_LEFT, GPUPRIM_ORDER_ASCENDING, out_i16.b),
                   GPUPRIM_ERROR_DTYPE_MISMATCH, "'indices'");
    TC_EXPECT_FAIL(ctx,
                   gpuprim_searchsorted(ctx, keys, queries, GPUPRIM_SIDE_LEFT, GPUPRIM_ORDER_ASCENDING, out_short.b),
                   GPUPRIM_ERROR_SIZE_MISMATCH, "'indices'");
    /* indices over the queries' memory: I32 indices wrapping the I32 queries */
    alias = tc_view(ctx, queries, GPUPRIM_DTYPE_I32, 0, 3);
    TC_EXPECT_FAIL(ctx, gpuprim_searchsorted(ctx, keys, queries, GPUPRIM_SIDE_LEFT, GPUPRIM_ORDER_ASCENDING, alias),
                   GPUPRIM_ERROR_INVALID_ARGUMENT, "'indices'");
    TC_EXPECT_FAIL(ctx, gpuprim_searchsorted(ctx, keys, keys, GPUPRIM_SIDE_LEFT, GPUPRIM_ORDER_ASCENDING, keys),
                   GPUPRIM_ERROR_INVALID_ARGUMENT, "'indices'");
    CHECK_OK(gpuprim_buffer_destroy(ctx, alias));
    /* n = 2^31 keys do not fit I32 indices (2^31 - 1 do); the buffer is never read */
    if (gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U8, 1ull << 31, &big) == GPUPRIM_SUCCESS) {
        gpuprim_buffer_t q8 = tc_buffer(ctx, GPUPRIM_DTYPE_U8, 3);
        out_i32 = tc_buffer(ctx, GPUPRIM_DTYPE_I32, 3);
        TC_EXPECT_FAIL(ctx, gpuprim_searchsorted(ctx, big, q8, GPUPRIM_SIDE_LEFT, GPUPRIM_ORDER_ASCENDING, out_i32),
                       GPUPRIM_ERROR_INVALID_ARGUMENT, "'indices'");
        CHECK_OK(gpuprim_buffer_destroy(ctx, out_i32));
        CHECK_OK(gpuprim_buffer_destroy(ctx, q8));
        CHECK_OK(gpuprim_buffer_destroy(ctx, big));
    }
    CHECK_STATUS(gpuprim_searchsorted(NULL, keys, queries, GPUPRIM_SIDE_LEFT, GPUPRIM_ORDER_ASCENDING, out.b),
                 GPUPRIM_ERROR_NULL_POINTER);
    CHECK_STATUS(gpuprim_searchsorted((gpuprim_context_t)&fake_context, keys, queries, GPUPRIM_SIDE_LEFT,
                                      GPUPRIM_ORDER_ASCENDING, out.b),
                 GPUPRIM_ERROR_INVALID_HANDLE);
    TC_CHECK_UNCHANGED(ctx, out);
    TC_CHECK_UNCHANGED(ctx, out_short);
    TC_CHECK_UNCHANGED(ctx, out_f32);
    TC_CHECK_UNCHANGED(ctx, out_i16);
    {
        int32_t after[3];
        REQUIRE_OK(gpuprim_buffer_download(ctx, queries, 0, after, 3));
        CHECKF(memcmp(after, data, sizeof data) == 0, "a failed searchsorted changed 'queries'");
        REQUIRE_OK(gpuprim_buffer_download(ctx, keys, 0, after, 3));
        CHECKF(memcmp(after, data, sizeof data) == 0, "a failed searchsorted changed 'sorted'");
    }
    /* After the failures the context still works; m = 0 writes nothing and succeeds. */
    {
        uint64_t got[3];
        gpuprim_buffer_t none = tc_buffer(ctx, GPUPRIM_DTYPE_I32, 0), none_out = tc_buffer(ctx, GPUPRIM_DTYPE_U32, 0);
        CHECK_OK(gpuprim_searchsorted(ctx, keys, none, GPUPRIM_SIDE_LEFT, GPUPRIM_ORDER_ASCENDING, none_out));
        CHECK_OK(gpuprim_searchsorted(ctx, keys, queries, GPUPRIM_SIDE_RIGHT, GPUPRIM_ORDER_ASCENDING, out.b));
        REQUIRE_OK(gpuprim_buffer_download(ctx, out.b, 0, got, 3));
        CHECKF(got[0] == 1 && got[1] == 2 && got[2] == 3, "searchsorted([1,2,3], [1,2,3], right) = %llu %llu %llu",
               (unsigned long long)got[0], (unsigned long long)got[1], (unsigned long long)got[2]);
        CHECK_OK(gpuprim_buffer_destroy(ctx, none_out));
        CHECK_OK(gpuprim_buffer_destroy(ctx, none));
    }
    CHECK_OK(gpuprim_buffer_destroy(other, foreign));
    CHECK_OK(gpuprim_context_destroy(other));
    tc_free_known(ctx, out);
    tc_free_known(ctx, out_short);
    tc_free_known(ctx, out_f32);
    tc_free_known(ctx, out_i16);
    CHECK_OK(gpuprim_buffer_destroy(ctx, fqueries));
    CHECK_OK(gpuprim_buffer_destroy(ctx, queries));
    CHECK_OK(gpuprim_buffer_destroy(ctx, keys));
}

/* gpuprim_searchsorted_rows: each row against its own sorted row, the indices counted from the row's first
 * key; rows of no keys, of one query, of tiles +-1 of queries, many short rows. */
static void test_rows(gpuprim_context_t ctx) {
    static const uint64_t shapes[][3] = {/* rows, keys per row, queries per row */
                                         {1, 100, 50},  {2, 0, 7},     {3, 1, 1},       {7, 3000, 2049},
                                         {1000, 5, 3},  {5, 4097, 1024}, {3, 20000, 9000}, {64, 100, 0},
                                         {2, 70001, 2047}};
    size_t si;
    int combo = 0;
    for (si = 0; si < sizeof shapes / sizeof shapes[0]; ++si) {
        const uint64_t rows = shapes[si][0], n = shapes[si][1], m = shapes[si][2];
        size_t di;
        for (di = 0; di < TC_DTYPE_COUNT; di += 3) {
            const gpuprim_dtype_t d = tc_all_dtypes[(di + si) % TC_DTYPE_COUNT];
            const int descending = combo & 1, upper = (combo >> 1) & 1;
            const gpuprim_dtype_t id = index_dtypes[(combo >> 2) & 3];
            const query_order_t order = (query_order_t)(combo % O_ORDER_COUNT);
            void *keys = tc_xmalloc(rows * n * tc_size(d) + 8), *queries = tc_xmalloc(rows * m * tc_size(d) + 8);
            gpuprim_buffer_t kb, qb, ib;
            void *got;
            uint64_t r, j;
            long reported = 0;
            ++combo;
            for (r = 0; r < rows; ++r) {
                void *row_keys = tc_sorted_keys(d, n, (r & 1) ? TC_SMALL_RANGE : TC_NAN_HEAVY, descending);
                void *row_queries = make_queries(d, row_keys, n, m, Q_MIXED, order, descending);
                memcpy((char *)keys + r * n * tc_size(d), row_keys, n * tc_size(d));
                memcpy((char *)queries + r * m * tc_size(d), row_queries, m * tc_size(d));
                free(row_keys);
                free(row_queries);
            }
            kb = tc_buffer_from(ctx, d, keys, rows * n);
            qb = tc_buffer_from(ctx, d, queries, rows * m);
            ib = tc_buffer(ctx, id, rows * m);
            tc_poison(ctx, ib, id, rows * m);
            tc_where("searchsorted_rows %s %llu rows of %llu keys, %llu queries (%s) %s %s -> %s", tc_dtype_name(d),
                     (unsigned long long)rows, (unsigned long long)n, (unsigned long long)m, query_order_names[order],
                     descending ? "descending" : "ascending", upper ? "right" : "left", tc_dtype_name(id));
            CHECK_OK(gpuprim_searchsorted_rows(ctx, kb, qb, rows, upper ? GPUPRIM_SIDE_RIGHT : GPUPRIM_SIDE_LEFT,
                                               descending ? GPUPRIM_ORDER_DESCENDING : GPUPRIM_ORDER_ASCENDING, ib));
            got = tc_download(ctx, ib, id, rows * m);
            for (r = 0; r < rows; ++r)
                for (j = 0; j < m; ++j) {
                    const uint64_t want = reference_bound(d, (const char *)keys + r * n * tc_size(d), n,
                                                          tc_get(d, queries, r * m + j), descending, upper);
                    const uint64_t have = tc_get(id, got, r * m + j);
                    tc.checks++;
                    if (have != want && reported++ < 5)
                        tc_fail(__FILE__, __LINE__, "row %llu query %llu: index %llu, expected %llu",
                                (unsigned long long)r, (unsigned long long)j, (unsigned long long)have,
                                (unsigned long long)want);
                }
            free(got);
            CHECK_OK(gpuprim_buffer_destroy(ctx, ib));
            CHECK_OK(gpuprim_buffer_destroy(ctx, qb));
            CHECK_OK(gpuprim_buffer_destroy(ctx, kb));
            free(keys);
            free(queries);
        }
    }
    {
        /* rows 0, counts not multiples of rows, n per row past I32 (the flat n would not be) */
        const int32_t data[6] = {1, 2, 3, 1, 2, 3};
        gpuprim_buffer_t kb = tc_buffer_from(ctx, GPUPRIM_DTYPE_I32, data, 6), qb = tc_buffer_from(ctx, GPUPRIM_DTYPE_I32, data, 6);
        gpuprim_buffer_t q5 = tc_buffer_from(ctx, GPUPRIM_DTYPE_I32, data, 5);
        tc_known_t out = tc_known(ctx, GPUPRIM_DTYPE_U32, 6), out5 = tc_known(ctx, GPUPRIM_DTYPE_U32, 5);
        uint32_t got[6];
        tc_where("searchsorted_rows errors");
        TC_EXPECT_FAIL(ctx, gpuprim_searchsorted_rows(ctx, kb, qb, 0, GPUPRIM_SIDE_LEFT, GPUPRIM_ORDER_ASCENDING, out.b),
                       GPUPRIM_ERROR_INVALID_ARGUMENT, "'rows'");
        TC_EXPECT_FAIL(ctx, gpuprim_searchsorted_rows(ctx, kb, qb, 4, GPUPRIM_SIDE_LEFT, GPUPRIM_ORDER_ASCENDING, out.b),
                       GPUPRIM_ERROR_INVALID_ARGUMENT, "'sorted'");
        TC_EXPECT_FAIL(ctx, gpuprim_searchsorted_rows(ctx, kb, q5, 2, GPUPRIM_SIDE_LEFT, GPUPRIM_ORDER_ASCENDING, out5.b),
                       GPUPRIM_ERROR_INVALID_ARGUMENT, "'queries'");
        TC_EXPECT_FAIL(ctx, gpuprim_searchsorted_rows(ctx, kb, qb, 2, (gpuprim_side_t)5, GPUPRIM_ORDER_ASCENDING, out.b),
                       GPUPRIM_ERROR_INVALID_ENUM, "'side'");
        TC_CHECK_UNCHANGED(ctx, out);
        TC_CHECK_UNCHANGED(ctx, out5);
        /* [1,2,3 | 1,2,3] rows against [1,2,3 | 1,2,3], right: 1 2 3 1 2 3 */
        CHECK_OK(gpuprim_searchsorted_rows(ctx, kb, qb, 2, GPUPRIM_SIDE_RIGHT, GPUPRIM_ORDER_ASCENDING, out.b));
        REQUIRE_OK(gpuprim_buffer_download(ctx, out.b, 0, got, 6));
        CHECKF(got[0] == 1 && got[2] == 3 && got[3] == 1 && got[5] == 3, "rows right: %u %u %u %u %u %u", got[0],
               got[1], got[2], got[3], got[4], got[5]);
        tc_free_known(ctx, out);
        tc_free_known(ctx, out5);
        CHECK_OK(gpuprim_buffer_destroy(ctx, q5));
        CHECK_OK(gpuprim_buffer_destroy(ctx, qb));
        CHECK_OK(gpuprim_buffer_destroy(ctx, kb));
    }
}

/* The same answers on CPU contexts of 1, 2 and 7 threads (several pieces). */
static void test_cpu_threads(void) {
    static const int threads[3] = {1, 2, 7};
    int t, order;
    for (t = 0; t < 3; ++t) {
        gpuprim_context_options_t options;
        gpuprim_context_t cpu = NULL;
        gpuprim_context_options_init(&options);
        options.backend = GPUPRIM_BACKEND_CPU;
        options.cpu_threads = threads[t];
        REQUIRE_OK(gpuprim_context_create(&options, &cpu, NULL, 0));
        for (order = 0; order < O_ORDER_COUNT; ++order) {
            const gpuprim_dtype_t d = order == 1 ? GPUPRIM_DTYPE_BF16 : GPUPRIM_DTYPE_F64;
            const uint64_t n = 100003, m = 50021;
            void *keys = tc_sorted_keys(d, n, TC_NAN_SPARSE, 0);
            void *queries = make_queries(d, keys, n, m, Q_MIXED, (query_order_t)order, 0);
            tc_where("searchsorted on %d CPU threads, %s %s", threads[t], tc_dtype_name(d), query_order_names[order]);
            check_search(cpu, d, GPUPRIM_DTYPE_I64, keys, n, queries, m, 0, order & 1);
            free(queries);
            free(keys);
        }
        CHECK_OK(gpuprim_context_destroy(cpu));
    }
}

int main(void) {
    gpuprim_context_t ctx = tc_init("test_searchsorted");
    test_known_answers(ctx);
    test_errors(ctx);
    test_every_combination(ctx);
    test_sizes(ctx);
    test_densities(ctx);
    test_whole_tiles(ctx);
    test_rows(ctx);
    test_cpu_threads();
    return tc_finish();
}
