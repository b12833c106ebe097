/* SPDX-License-Identifier: Apache-2.0 */
/* gpuprim_histogram_even (kind 0), gpuprim_histogram_range (kind 1) and
 * gpuprim_bincount (kind 2), and with c->k > 0 their _rows forms on c->k
 * rows (arg 0 then c->k rows of elements, arg 2 c->k rows of counts; the
 * same edges and bounds for every row): arg 0 the input, arg 1 the edges (kind 1),
 * arg 2 the counts (poisoned, read back), arg 3 (kind 0) two elements of the
 * input's dtype holding lower and upper: the call passes them from its host
 * copy (the buffer made of them is not used). Integer counts: the results
 * agree bit for bit on every backend. */
#include "registry.h"

const tr_case_t tr_histogram_case;

static gpuprim_status_t histogram_invoke(const tr_call_t *c, gpuprim_context_t ctx, gpuprim_buffer_t const *b,
                                         const gpuprim_segments_t *segments, void *scalar) {
    (void)segments;
    (void)scalar;
    if (c->kind == 0) {
        const size_t size = tc_size(c->arg[0].dtype);
        if (c->k > 0)
            return gpuprim_histogram_even_rows(ctx, b[0], c->k, c->arg[3].host, (const char *)c->arg[3].host + size,
                                               b[2]);
        return gpuprim_histogram_even(ctx, b[0], c->arg[3].host, (const char *)c->arg[3].host + size, b[2]);
    }
    if (c->kind == 1)
        return c->k > 0 ? gpuprim_histogram_range_rows(ctx, b[0], c->k, b[1], b[2])
                        : gpuprim_histogram_range(ctx, b[0], b[1], b[2]);
    return c->k > 0 ? gpuprim_bincount_rows(ctx, b[0], c->k, b[2]) : gpuprim_bincount(ctx, b[0], b[2]);
}

static const char *const histogram_kind_names[3] = {"even", "edges", "bincount"};

/* The bounds of even bins for dtype d: [-v, v) (unsigned: [0, 2v)) with v a few hundred (floats) or the
   type's whole range but its max (integers, bins_mode 1). */
static void histogram_bounds(gpuprim_dtype_t d, int whole, void *bounds) {
    if (!tc_is_float(d) && whole) {
        tc_set(d, bounds, 0, tc_identity(GPUPRIM_OP_MAX, d));
        tc_set(d, bounds, 1, tc_identity(GPUPRIM_OP_MIN, d));
    } else {
        const double v = tc_size(d) == 1 ? 100 : 300;
        tc_set(d, bounds, 0, tc_from_double(d, tc_is_signed(d) || tc_is_float(d) ? -v : 0));
        tc_set(d, bounds, 1, tc_from_double(d, tc_is_signed(d) || tc_is_float(d) ? v : 2 * v));
    }
}

/* rows 0: the flat call on n elements; else the _rows call on rows rows of n elements each. */
static void histogram_call(tr_visit_t visit, void *user, int kind, gpuprim_dtype_t d, gpuprim_dtype_t cd, uint64_t n,
                           uint64_t bins, int variant, uint64_t rows) {
    const uint64_t all = n * (rows ? rows : 1);
    void *x = tc_xmalloc(all * 8 + 16), *edges = NULL, *raw = NULL, *bounds = tc_xmalloc(16);
    uint64_t *perm = NULL, i;
    tr_call_t c;
    tr_fill_random(d, x, all, variant & 1, variant & 2);
    n = all;
    if (kind == 2 && !(variant & 2)) /* values around the bins: some below 0, some at or past bins */
        for (i = 0; i < n; ++i) tc_set(d, x, i, (uint64_t)((int64_t)(tr_random() % (bins + 20)) - 10) & tc_mask(d));
    tr_call_init(&c, &tr_histogram_case);
    c.kind = kind;
    tr_set_arg(&c, 0, d, n, x, 0, 0);
    if (kind == 1) {
        edges = tc_xmalloc((bins + 1) * 8 + 16);
        raw = tc_xmalloc((bins + 1) * 8 + 16);
        perm = (uint64_t *)tc_xmalloc((bins + 1) * sizeof(uint64_t));
        tr_fill_random(d, raw, bins + 1, 1, 0);
        for (i = 0; i <= bins && n > 0; i += 4) tc_set(d, raw, i, tc_get(d, x, tr_random() % n)); /* on elements */
        for (i = 0; i <= bins; ++i)
            if (tc_is_float(d) && tc_isnan_bits(d, tc_get(d, raw, i))) tc_set(d, raw, i, 0);
        tc_reference_sort_permutation(d, raw, bins + 1, 0, perm);
        tc_permute(d, raw, perm, bins + 1, edges);
        tr_set_arg(&c, 1, d, bins + 1, edges, 0, 0);
    }
    c.k = rows;
    tr_set_arg(&c, 2, cd, bins * (rows ? rows : 1), NULL, 0x5A, 1);
    if (kind == 0) {
        histogram_bounds(d, variant & 4, bounds);
        tr_set_arg(&c, 3, d, 2, bounds, 0, 0);
    }
    tr_call_label(&c, "histogram%s %s %s n=%llu (%llu rows), %llu bins -> %s (variant %d)", rows ? "_rows" : "",
                  histogram_kind_names[kind], tc_dtype_name(d), (unsigned long long)n, (unsigned long long)rows,
                  (unsigned long long)bins, tc_dtype_name(cd), variant);
    visit(&c, user);
    tr_call_free(&c);
    free(x);
    free(edges);
    free(raw);
    free(perm);
    free(bounds);
}

static void histogram_each(tr_plan_t plan, tr_visit_t visit, void *user) {
    size_t s, d, i = 0;
    int kind;
    if (plan == TR_PLAN_SMALL) {
        histogram_call(visit, user, 0, GPUPRIM_DTYPE_F32, GPUPRIM_DTYPE_U32, 100, 10, 1, 0);
        histogram_call(visit, user, 1, GPUPRIM_DTYPE_I16, GPUPRIM_DTYPE_U64, 100, 5, 0, 0);
        histogram_call(visit, user, 2, GPUPRIM_DTYPE_U8, GPUPRIM_DTYPE_U32, 100, 16, 0, 0);
        histogram_call(visit, user, 0, GPUPRIM_DTYPE_F64, GPUPRIM_DTYPE_U64, 25, 6, 1, 4);
        histogram_call(visit, user, 1, GPUPRIM_DTYPE_I32, GPUPRIM_DTYPE_U32, 20, 5, 0, 5);
        histogram_call(visit, user, 2, GPUPRIM_DTYPE_I8, GPUPRIM_DTYPE_U64, 30, 9, 0, 3);
    } else if (plan == TR_PLAN_CONCURRENCY) {
        /* every kind on every dtype (bincount: integers) */
        for (d = 0; d < TC_DTYPE_COUNT; ++d)
            for (kind = 0; kind < 3; ++kind, ++i) {
                if (kind == 2 && tc_is_float(tc_all_dtypes[d])) continue;
                histogram_call(visit, user, kind, tc_all_dtypes[d], (i & 1) ? GPUPRIM_DTYPE_U64 : GPUPRIM_DTYPE_U32,
                               tr_concurrency_count(d + (size_t)kind * 5), 1 + (i * 37) % 300, (int)(i % 8),
                               i % 3 == 2 ? 3 : 0); /* every third call the _rows call on 3 rows */
            }
    } else if (plan == TR_PLAN_BACKENDS) {
        /* the CUDA kernel's rounds (1024 elements a block), shared counters and the global path (65,536 bins) */
        static const uint64_t shapes[][2] = {{0, 3},    {1, 1},     {1023, 256},        {1025, 7},
                                             {70001, 24576}, {100003, 65536}, {(1u << 20) + 3, 1000}};
        for (s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
            for (d = 0; d < TC_DTYPE_COUNT; ++d)
                for (kind = 0; kind < 3; ++kind, ++i) {
                    if (kind == 2 && tc_is_float(tc_all_dtypes[d])) continue;
                    if (kind == 1 && shapes[s][1] > 4096 && (i % 3) != 0) continue; /* keep the plan short */
                    histogram_call(visit, user, kind, tc_all_dtypes[d], (i & 1) ? GPUPRIM_DTYPE_U64 : GPUPRIM_DTYPE_U32,
                                   shapes[s][0], shapes[s][1], (int)(i % 8), 0);
                }
        /* rows (rows, n, bins): empty rows, one row, rows of one element, more rows than a launch's 65,535,
           rows past a block's round, shared and global counters */
        {
            static const uint64_t row_shapes[][3] = {{4, 0, 3},     {1, 1025, 7},   {9, 1, 5},     {70001, 3, 4},
                                                     {7, 1023, 256}, {3, 70001, 24576}, {12, 3001, 65536}};
            for (s = 0; s < sizeof row_shapes / sizeof row_shapes[0]; ++s)
                for (d = 0; d < TC_DTYPE_COUNT; ++d)
                    for (kind = 0; kind < 3; ++kind, ++i) {
                        if (kind == 2 && tc_is_float(tc_all_dtypes[d])) continue;
                        if ((row_shapes[s][0] > 1000 || row_shapes[s][2] > 4096) && (i % 3) != 0) continue;
                        histogram_call(visit, user, kind, tc_all_dtypes[d],
                                       (i & 1) ? GPUPRIM_DTYPE_U64 : GPUPRIM_DTYPE_U32, row_shapes[s][1],
                                       row_shapes[s][2], (int)(i % 8), row_shapes[s][0]);
                    }
        }
    } else {
        /* past the CPU's pieces (2^16 elements) */
        static const uint64_t shapes[][2] = {{1000, 10}, {300007, 256}, {(1u << 20) + 5, 65536}};
        for (s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
            for (d = 0; d < TC_DTYPE_COUNT; ++d)
                for (kind = 0; kind < 3; ++kind, ++i) {
                    if (kind == 2 && tc_is_float(tc_all_dtypes[d])) continue;
                    histogram_call(visit, user, kind, tc_all_dtypes[d], (i & 1) ? GPUPRIM_DTYPE_U64 : GPUPRIM_DTYPE_U32,
                                   shapes[s][0], shapes[s][1], (int)(i % 8), 0);
                }
        /* rows: fewer long rows than threads (each row cut into pieces), many short rows (whole rows a
           thread), rows of one element */
        {
            static const uint64_t row_shapes[][3] = {{2, 300007, 256}, {5003, 13, 10}, {6, 140001, 65536},
                                                     {20011, 1, 3}};
            for (s = 0; s < sizeof row_shapes / sizeof row_shapes[0]; ++s)
                for (d = 0; d < TC_DTYPE_COUNT; ++d)
                    for (kind = 0; kind < 3; ++kind, ++i) {
                        if (kind == 2 && tc_is_float(tc_all_dtypes[d])) continue;
                        histogram_call(visit, user, kind, tc_all_dtypes[d],
                                       (i & 1) ? GPUPRIM_DTYPE_U64 : GPUPRIM_DTYPE_U32, row_shapes[s][1],
                                       row_shapes[s][2], (int)(i % 8), row_shapes[s][0]);
                    }
        }
    }
}

static int histogram_reference(const tr_call_t *c, tr_result_t *want) {
    const gpuprim_dtype_t d = c->arg[0].dtype, cd = c->arg[2].dtype;
    const uint64_t rows = c->k ? c->k : 1, bins = c->arg[2].count / rows, n = c->arg[0].count / rows;
    uint64_t *counts, i, r;
    if (c->expect != GPUPRIM_SUCCESS) return 1;
    counts = (uint64_t *)calloc(bins + 1, sizeof(uint64_t));
    if (!counts) tc_abort();
    for (r = 0; r < rows; ++r) {
        memset(counts, 0, (bins + 1) * sizeof(uint64_t));
        for (i = r * n; i < (r + 1) * n; ++i) {
            const uint64_t x = tc_get(d, c->arg[0].host, i);
            int64_t b;
            if (c->kind == 0)
                b = tc_histogram_even_bin(d, x, tc_get(d, c->arg[3].host, 0), tc_get(d, c->arg[3].host, 1), bins);
            else if (c->kind == 1)
                b = tc_histogram_range_bin(d, x, c->arg[1].host, bins);
            else
                b = tc_bincount_bin(d, x, bins);
            if (b >= 0) counts[b]++;
        }
        for (i = 0; i < bins; ++i) tc_set(cd, want->out[2], r * bins + i, counts[i] & tc_mask(cd));
    }
    free(counts);
    return 1;
}

/* the edges (arg 1) must be in order */
const tr_case_t tr_histogram_case = {.name = "histogram",
                                     .each = histogram_each,
                                     .invoke = histogram_invoke,
                                     .reference = histogram_reference,
                                     .ordered_args = 0x2,
                                     .host_args = 1u << 3};
