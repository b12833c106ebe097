/* SPDX-License-Identifier: Apache-2.0 */
/* gpuprim_merge: arg 0 keys_a, 1 keys_b (each sorted here in the call's
 * order), 2 keys_out (poisoned, read back); with values, 3 values_a,
 * 4 values_b, 5 values_out (read back). The merge is one stable order, so
 * results agree bit for bit on every backend. */
#include "registry.h"

const tr_case_t tr_merge_case;

static gpuprim_status_t merge_invoke(const tr_call_t *c, gpuprim_context_t ctx, gpuprim_buffer_t const *b,
                                     const gpuprim_segments_t *segments, void *scalar) {
    (void)segments;
    (void)scalar;
    return gpuprim_merge(ctx, b[0], b[3], b[1], b[4], b[2], b[5], (gpuprim_order_t)c->order);
}

static void *merge_run(gpuprim_dtype_t d, uint64_t n, int descending, int few) {
    void *raw = tc_xmalloc(n * 8 + 16), *keys = tc_xmalloc(n * 8 + 16);
    uint64_t *perm = (uint64_t *)tc_xmalloc(n * sizeof(uint64_t) + 8);
    tr_fill_random(d, raw, n, 0, few);
    tc_reference_sort_permutation(d, raw, n, descending, perm);
    tc_permute(d, raw, perm, n, keys);
    free(raw);
    free(perm);
    return keys;
}

/* vd: the values' dtype, or TR_NO_DTYPE for keys only. */
static void merge_call(tr_visit_t visit, void *user, gpuprim_dtype_t d, gpuprim_dtype_t vd, uint64_t na, uint64_t nb,
                       int descending, int few) {
    void *a = merge_run(d, na, descending, few), *b = merge_run(d, nb, descending, few);
    void *va = NULL, *vb = NULL;
    tr_call_t c;
    tr_call_init(&c, &tr_merge_case);
    c.order = descending;
    tr_set_arg(&c, 0, d, na, a, 0, 0);
    tr_set_arg(&c, 1, d, nb, b, 0, 0);
    tr_set_arg(&c, 2, d, na + nb, NULL, 0x5A, 1);
    if (vd != TR_NO_DTYPE) {
        va = tc_xmalloc(na * 8 + 16);
        vb = tc_xmalloc(nb * 8 + 16);
        tr_fill_random(vd, va, na, 0, 0);
        tr_fill_random(vd, vb, nb, 0, 0);
        tr_set_arg(&c, 3, vd, na, va, 0, 0);
        tr_set_arg(&c, 4, vd, nb, vb, 0, 0);
        tr_set_arg(&c, 5, vd, na + nb, NULL, 0x77, 1);
    }
    tr_call_label(&c, "merge %s na=%llu nb=%llu %s%s%s%s", tc_dtype_name(d), (unsigned long long)na,
                  (unsigned long long)nb, descending ? "descending" : "ascending", few ? ", few values" : "",
                  vd != TR_NO_DTYPE ? ", values " : "", vd != TR_NO_DTYPE ? tc_dtype_name(vd) : "");
    visit(&c, user);
    tr_call_free(&c);
    free(a);
    free(b);
    free(va);
    free(vb);
}

static gpuprim_dtype_t merge_value_dtype(size_t i) {
    static const gpuprim_dtype_t dtypes[] = {TR_NO_DTYPE, GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_U8, GPUPRIM_DTYPE_F64,
                                             GPUPRIM_DTYPE_I16};
    return dtypes[i % 5];
}

static void merge_each(tr_plan_t plan, tr_visit_t visit, void *user) {
    size_t s, d, i = 0;
    if (plan == TR_PLAN_SMALL) {
        merge_call(visit, user, GPUPRIM_DTYPE_U32, TR_NO_DTYPE, 60, 40, 0, 1);
        merge_call(visit, user, GPUPRIM_DTYPE_F16, GPUPRIM_DTYPE_U32, 30, 70, 1, 0);
    } else if (plan == TR_PLAN_CONCURRENCY) {
        for (d = 0; d < TC_DTYPE_COUNT; ++d, ++i)
            merge_call(visit, user, tc_all_dtypes[d], merge_value_dtype(i), tr_concurrency_count(d),
                       tr_concurrency_count(d + 6), (int)(i & 1), (int)(i % 3 == 0));
    } else if (plan == TR_PLAN_BACKENDS) {
        /* around the CUDA tiles (512 x 15 outputs for 4-byte keys, fewer for wide elements), empty runs */
        static const uint64_t shapes[][2] = {{0, 0},       {0, 9},          {9, 0},           {1, 1},
                                             {7679, 1},    {7680, 7681},    {3583, 3585},     {100001, 17},
                                             {17, 100001}, {(1u << 20) + 3, (1u << 19) + 5}};
        for (s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
            for (d = 0; d < TC_DTYPE_COUNT; ++d, ++i)
                merge_call(visit, user, tc_all_dtypes[d], merge_value_dtype(i), shapes[s][0], shapes[s][1],
                           (int)(i & 1), (int)(i % 3 == 0));
    } else {
        /* past the CPU's pieces (2^16 outputs) */
        static const uint64_t shapes[][2] = {{1000, 1}, {70001, 20011}, {(1u << 18) + 3, (1u << 17) + 5}};
        for (s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
            for (d = 0; d < TC_DTYPE_COUNT; ++d, ++i)
                merge_call(visit, user, tc_all_dtypes[d], merge_value_dtype(i), shapes[s][0], shapes[s][1],
                           (int)(i & 1), (int)(i % 3 == 0));
    }
}

static int merge_reference(const tr_call_t *c, tr_result_t *want) {
    const gpuprim_dtype_t d = c->arg[0].dtype;
    const uint64_t na = c->arg[0].count, nb = c->arg[1].count, n = na + nb;
    uint64_t *perm, i;
    if (c->expect != GPUPRIM_SUCCESS) return 1;
    perm = (uint64_t *)tc_xmalloc(n * sizeof(uint64_t) + 8);
    tc_reference_merge_permutation(d, c->arg[0].host, na, c->arg[1].host, nb, c->order, perm);
    for (i = 0; i < n; ++i)
        tc_set(d, want->out[2], i,
               perm[i] < na ? tc_get(d, c->arg[0].host, perm[i]) : tc_get(d, c->arg[1].host, perm[i] - na));
    if (c->arg[3].used) {
        const gpuprim_dtype_t vd = c->arg[3].dtype;
        for (i = 0; i < n; ++i)
            tc_set(vd, want->out[5], i,
                   perm[i] < na ? tc_get(vd, c->arg[3].host, perm[i]) : tc_get(vd, c->arg[4].host, perm[i] - na));
    }
    free(perm);
    return 1;
}

/* the runs (args 0, 1) must be in order */
const tr_case_t tr_merge_case = {.name = "merge",
                                 .each = merge_each,
                                 .invoke = merge_invoke,
                                 .reference = merge_reference,
                                 .ordered_args = 0x3};
