/* SPDX-License-Identifier: Apache-2.0 */
/* gpuprim_searchsorted (c->k 0) and gpuprim_searchsorted_rows (c->k rows):
 * arg 0 the sorted keys (each row sorted here in the call's order), arg 1
 * the queries, arg 2 the indices (poisoned, read back); order in c->order,
 * the side in c->kind (0 left, 1 right). Exact on every backend (one bound
 * is the answer), so results agree bit for bit. */
#include "registry.h"

const tr_case_t tr_searchsorted_case;

static gpuprim_status_t searchsorted_invoke(const tr_call_t *c, gpuprim_context_t ctx, gpuprim_buffer_t const *b,
                                            const gpuprim_segments_t *segments, void *scalar) {
    (void)segments;
    (void)scalar;
    if (c->k > 0)
        return gpuprim_searchsorted_rows(ctx, b[0], b[1], c->k, (gpuprim_side_t)c->kind, (gpuprim_order_t)c->order,
                                         b[2]);
    return gpuprim_searchsorted(ctx, b[0], b[1], (gpuprim_side_t)c->kind, (gpuprim_order_t)c->order, b[2]);
}

/* sorted_queries: the queries sorted in the call's order too (the merge paths). */
static void searchsorted_call(tr_visit_t visit, void *user, gpuprim_dtype_t d, gpuprim_dtype_t id, uint64_t n,
                              uint64_t m, int descending, int upper, int sorted_queries, int few) {
    void *raw = tc_xmalloc(n * 8 + 16), *keys = tc_xmalloc(n * 8 + 16), *queries = tc_xmalloc(m * 8 + 16);
    uint64_t *perm = (uint64_t *)tc_xmalloc((n > m ? n : m) * sizeof(uint64_t) + 8);
    uint64_t j;
    tr_call_t c;
    tr_fill_random(d, raw, n, 0, few);
    tc_reference_sort_permutation(d, raw, n, descending, perm);
    tc_permute(d, raw, perm, n, keys);
    tr_fill_random(d, queries, m, 0, few);
    for (j = 0; j < m && n > 0; j += 3) tc_set(d, queries, j, tc_get(d, keys, tr_random() % n)); /* duplicates */
    if (sorted_queries) {
        free(raw);
        raw = tc_xmalloc(m * 8 + 16);
        memcpy(raw, queries, m * tc_size(d));
        tc_reference_sort_permutation(d, raw, m, descending, perm);
        tc_permute(d, raw, perm, m, queries);
    }
    tr_call_init(&c, &tr_searchsorted_case);
    c.order = descending;
    c.kind = upper;
    tr_set_arg(&c, 0, d, n, keys, 0, 0);
    tr_set_arg(&c, 1, d, m, queries, 0, 0);
    tr_set_arg(&c, 2, id, m, NULL, 0x5A, 1);
    tr_call_label(&c, "searchsorted %s n=%llu m=%llu %s %s%s%s -> %s", tc_dtype_name(d), (unsigned long long)n,
                  (unsigned long long)m, descending ? "descending" : "ascending", upper ? "right" : "left",
                  sorted_queries ? ", sorted queries" : "", few ? ", few values" : "", tc_dtype_name(id));
    visit(&c, user);
    tr_call_free(&c);
    free(raw);
    free(keys);
    free(queries);
    free(perm);
}

/* rows rows of n keys and m queries each (the queries in order within each row when sorted_queries). */
static void searchsorted_rows_call(tr_visit_t visit, void *user, gpuprim_dtype_t d, gpuprim_dtype_t id, uint64_t rows,
                                   uint64_t n, uint64_t m, int descending, int upper, int sorted_queries) {
    void *keys = tc_xmalloc(rows * n * 8 + 16), *queries = tc_xmalloc(rows * m * 8 + 16);
    void *raw = tc_xmalloc((n > m ? n : m) * 8 + 16);
    uint64_t *perm = (uint64_t *)tc_xmalloc((n > m ? n : m) * sizeof(uint64_t) + 8), r, j;
    tr_call_t c;
    for (r = 0; r < rows; ++r) {
        char *row_keys = (char *)keys + r * n * tc_size(d), *row_queries = (char *)queries + r * m * tc_size(d);
        tr_fill_random(d, raw, n, 0, (int)(r & 1));
        tc_reference_sort_permutation(d, raw, n, descending, perm);
        tc_permute(d, raw, perm, n, row_keys);
        tr_fill_random(d, row_queries, m, 0, (int)(r & 1));
        for (j = 0; j < m && n > 0; j += 2) tc_set(d, row_queries, j, tc_get(d, row_keys, tr_random() % n));
        if (sorted_queries) {
            memcpy(raw, row_queries, m * tc_size(d));
            tc_reference_sort_permutation(d, raw, m, descending, perm);
            tc_permute(d, raw, perm, m, row_queries);
        }
    }
    tr_call_init(&c, &tr_searchsorted_case);
    c.order = descending;
    c.kind = upper;
    c.k = rows;
    tr_set_arg(&c, 0, d, rows * n, keys, 0, 0);
    tr_set_arg(&c, 1, d, rows * m, queries, 0, 0);
    tr_set_arg(&c, 2, id, rows * m, NULL, 0x5A, 1);
    tr_call_label(&c, "searchsorted_rows %s %llu rows of n=%llu m=%llu %s %s%s -> %s", tc_dtype_name(d),
                  (unsigned long long)rows, (unsigned long long)n, (unsigned long long)m,
                  descending ? "descending" : "ascending", upper ? "right" : "left",
                  sorted_queries ? ", sorted queries" : "", tc_dtype_name(id));
    visit(&c, user);
    tr_call_free(&c);
    free(keys);
    free(queries);
    free(raw);
    free(perm);
}

static gpuprim_dtype_t searchsorted_index_dtype(size_t i) {
    static const gpuprim_dtype_t index_dtypes[] = {GPUPRIM_DTYPE_I32, GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_I64,
                                                   GPUPRIM_DTYPE_U64};
    return index_dtypes[i % 4];
}

static void searchsorted_each(tr_plan_t plan, tr_visit_t visit, void *user) {
    size_t s, d, i = 0;
    if (plan == TR_PLAN_SMALL) {
        searchsorted_call(visit, user, GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_I64, 100, 50, 0, 0, 0, 1);
        searchsorted_call(visit, user, GPUPRIM_DTYPE_F16, GPUPRIM_DTYPE_U32, 100, 50, 1, 1, 1, 0);
        searchsorted_rows_call(visit, user, GPUPRIM_DTYPE_I32, GPUPRIM_DTYPE_U64, 4, 25, 10, 0, 1, 1);
    } else if (plan == TR_PLAN_CONCURRENCY) {
        /* both sides and orders, sorted queries or not, every index dtype; rows now and then */
        for (d = 0; d < TC_DTYPE_COUNT; ++d, ++i) {
            searchsorted_call(visit, user, tc_all_dtypes[d], searchsorted_index_dtype(i), tr_concurrency_count(d + 6),
                              tr_concurrency_count(d + 2), (int)(i & 1), (int)((i >> 1) & 1), (int)((i >> 2) & 1),
                              (int)(i % 3 == 0));
            if (d % 3 == 0)
                searchsorted_rows_call(visit, user, tc_all_dtypes[d], searchsorted_index_dtype(i + 1), 3,
                                       tr_concurrency_count(d + 9) / 3, 20, (int)((i >> 1) & 1), (int)(i & 1), 1);
        }
    } else if (plan == TR_PLAN_BACKENDS) {
        /* around the CUDA tiles (2048 queries, 1024 for 8-byte keys) and the keys' window (two tiles),
           sparse and dense sorted queries, no keys */
        static const uint64_t shapes[][2] = {{0, 5},        {1, 1},       {33, 2049},     {4097, 2047},
                                             {4095, 4097},  {100001, 1025}, {1000, 70001}, {(1u << 20) + 3, 9000}};
        for (s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
            for (d = 0; d < TC_DTYPE_COUNT; ++d, ++i)
                searchsorted_call(visit, user, tc_all_dtypes[d], searchsorted_index_dtype(i), shapes[s][0],
                                  shapes[s][1], (int)(i & 1), (int)((i >> 1) & 1), (int)((i >> 2) % 2),
                                  (int)(i % 3 == 0));
        /* rows: short rows, rows of a tile +- 1 of queries, rows of no keys */
        for (d = 0; d < TC_DTYPE_COUNT; ++d, ++i) {
            static const uint64_t row_shapes[][3] = {{300, 17, 5}, {3, 5000, 2049}, {4, 0, 100}, {2, 70001, 1023}};
            const uint64_t *shape = row_shapes[i % 4];
            searchsorted_rows_call(visit, user, tc_all_dtypes[d], searchsorted_index_dtype(i), shape[0], shape[1],
                                   shape[2], (int)(i & 1), (int)((i >> 1) & 1), (int)((i >> 2) % 2));
        }
    } else {
        /* past the CPU's pieces (4096 queries) */
        static const uint64_t shapes[][2] = {{1000, 1}, {70001, 20011}, {(1u << 18) + 3, (1u << 17) + 5}};
        for (s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
            for (d = 0; d < TC_DTYPE_COUNT; ++d, ++i)
                searchsorted_call(visit, user, tc_all_dtypes[d], searchsorted_index_dtype(i), shapes[s][0],
                                  shapes[s][1], (int)(i & 1), (int)((i >> 1) & 1), (int)(i % 2), (int)(i % 3 == 0));
        /* rows past the CPU's pieces */
        for (d = 0; d < TC_DTYPE_COUNT; d += 2, ++i)
            searchsorted_rows_call(visit, user, tc_all_dtypes[d], searchsorted_index_dtype(i), 5, 30011, 9001,
                                   (int)(i & 1), (int)((i >> 1) & 1), (int)(i % 2));
    }
}

static int searchsorted_reference(const tr_call_t *c, tr_result_t *want) {
    const gpuprim_dtype_t d = c->arg[0].dtype, id = c->arg[2].dtype;
    const uint64_t rows = c->k > 0 ? c->k : 1, n = c->arg[0].count / rows, m = c->arg[1].count / rows;
    uint64_t r, j;
    if (c->expect != GPUPRIM_SUCCESS) return 1;
    for (r = 0; r < rows; ++r)
        for (j = 0; j < m; ++j)
            tc_set(id, want->out[2], r * m + j,
                   tc_searchsorted_bound(d, (const char *)c->arg[0].host + r * n * tc_size(d), n,
                                      tc_get(d, c->arg[1].host, r * m + j), c->order, c->kind));
    return 1;
}

/* the keys (arg 0) must be in order */
const tr_case_t tr_searchsorted_case = {.name = "searchsorted",
                                        .each = searchsorted_each,
                                        .invoke = searchsorted_invoke,
                                        .reference = searchsorted_reference,
                                        .ordered_args = 0x1};
