/* SPDX-License-Identifier: Apache-2.0 */
/* gpuprim_sort_with_options (kind 0) and gpuprim_sort (kind 1): arg 0 keys
 * in, arg 1 values in (or unused), arg 2 keys out, arg 3 values out (in
 * place: the same buffers as args 0 and 1). */
#include "registry.h"

const tr_case_t tr_sort_case;

static gpuprim_status_t sort_invoke(const tr_call_t *c, gpuprim_context_t ctx, gpuprim_buffer_t const *b,
                                    const gpuprim_segments_t *segments, void *scalar) {
    gpuprim_sort_options_t options;
    (void)segments;
    (void)scalar;
    if (c->kind) return gpuprim_sort(ctx, b[0], b[1], b[2], b[3], (gpuprim_order_t)c->order);
    gpuprim_sort_options_init(&options);
    options.order = (gpuprim_order_t)c->order;
    options.begin_bit = c->begin_bit;
    options.end_bit = c->end_bit;
    return gpuprim_sort_with_options(ctx, b[0], b[1], b[2], b[3], &options);
}

/* vd TR_NO_DTYPE: keys only. Out of place: outputs poisoned with 0x5A. */
static void sort_call(tr_visit_t visit, void *user, int kind, gpuprim_dtype_t kd, gpuprim_dtype_t vd,
                      const void *keys, const void *values, uint64_t n, uint32_t begin, uint32_t end, int descending,
                      int in_place) {
    tr_call_t c;
    tr_call_init(&c, &tr_sort_case);
    c.kind = kind;
    c.order = descending;
    c.begin_bit = begin;
    c.end_bit = end;
    tr_set_arg(&c, 0, kd, n, keys, 0, 0);
    if (vd != TR_NO_DTYPE) tr_set_arg(&c, 1, vd, n, values, 0, 0);
    if (in_place) {
        tr_set_in_place(&c, 2, 0, 1);
        if (vd != TR_NO_DTYPE) tr_set_in_place(&c, 3, 1, 1);
    } else {
        tr_set_arg(&c, 2, kd, n, NULL, 0x5A, 1);
        if (vd != TR_NO_DTYPE) tr_set_arg(&c, 3, vd, n, NULL, 0x5A, 1);
    }
    tr_call_label(&c, "%s keys %s values %s n=%llu bits [%u,%u) %s%s", kind ? "gpuprim_sort" : "with options",
                  tc_dtype_name(kd), vd != TR_NO_DTYPE ? tc_dtype_name(vd) : "-", (unsigned long long)n, begin, end,
                  descending ? "descending" : "ascending", in_place ? " in place" : "");
    visit(&c, user);
    tr_call_free(&c);
}

static void sort_backends(tr_visit_t visit, void *user) {
    static const uint64_t sizes[] = {1, 33, 4096, 4097, 100000, 300001, (1u << 21) + 5};
    size_t s, k;
    int desc;
    for (s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
        const uint64_t n = sizes[s];
        for (k = 0; k < TC_DTYPE_COUNT; ++k) {
            const gpuprim_dtype_t kd = tc_all_dtypes[k];
            const uint32_t bits = tc_bits(kd);
            for (desc = 0; desc < 2; ++desc) {
                /* { value dtype, begin, end, in place, few distinct keys } */
                const struct {
                    gpuprim_dtype_t vd;
                    uint32_t begin, end;
                    int in_place, few;
                } v[8] = {{TR_NO_DTYPE, 0, 0, desc, (int)(s % 2)},
                          {GPUPRIM_DTYPE_U8, 0, 0, 0, 1},
                          {GPUPRIM_DTYPE_I16, 0, 0, 1, 0},
                          {GPUPRIM_DTYPE_U32, 0, 0, desc, 0},
                          {GPUPRIM_DTYPE_F64, 0, 0, 0, 1},
                          /* bit ranges: low half, an unaligned middle, one bit */
                          {TR_NO_DTYPE, 0, bits / 2, 0, 0},
                          {GPUPRIM_DTYPE_U32, 3, bits > 8 ? bits - 5 : 7, 1, 0},
                          {GPUPRIM_DTYPE_U16, bits - 1, bits, 0, 0}};
                size_t i;
                for (i = 0; i < 8; ++i) {
                    void *keys = tc_xmalloc(n * 8 + 16), *values = tc_xmalloc(n * 8 + 16);
                    tr_fill_random(kd, keys, n, 0, v[i].few);
                    tr_fill_random(v[i].vd != TR_NO_DTYPE ? v[i].vd : GPUPRIM_DTYPE_U8, values, n, 0, 0);
                    sort_call(visit, user, 0, kd, v[i].vd, keys, values, n, v[i].begin, v[i].end, desc, v[i].in_place);
                    free(keys);
                    free(values);
                }
            }
        }
    }
}

/* The parallel sort starts at 2^17 keys; 7 threads merge 4 sorted runs in
 * two rounds. Keys with duplicates, and for floats NaNs, infinities and
 * both zeros. */
static void sort_threads(tr_visit_t visit, void *user) {
    static const uint64_t counts[] = {1, 1000, 70001, (1u << 18) + 3, (1u << 20) + 12345};
    size_t c, d;
    int desc;
    for (c = 0; c < sizeof counts / sizeof counts[0]; ++c)
        for (d = 0; d < 6; ++d) {
            const gpuprim_dtype_t dt = tc_all_dtypes[d];
            const uint64_t n = counts[c];
            void *keys = tc_xmalloc(n * 8), *values = tc_xmalloc(n * 8);
            uint64_t i;
            tc_fill(dt, keys, n, c % 2 ? TC_SMALL_RANGE : TC_NAN_SPARSE);
            for (i = 0; i < n; i += 97) tc_set(dt, keys, i, tc_special_value(dt));
            for (i = 0; i < n; ++i) ((uint64_t *)values)[i] = i * 0x9E3779B97F4A7C15ull;
            for (desc = 0; desc < 2; ++desc) {
                sort_call(visit, user, 1, dt, TR_NO_DTYPE, keys, NULL, n, 0, 0, desc, 0);
                sort_call(visit, user, 1, dt, GPUPRIM_DTYPE_U32, keys, values, n, 0, 0, desc, 0);
                sort_call(visit, user, 1, dt, GPUPRIM_DTYPE_U64, keys, values, n, 0, 0, desc, 1);
            }
            free(keys);
            free(values);
        }
}

static void sort_each(tr_plan_t plan, tr_visit_t visit, void *user) {
    if (plan == TR_PLAN_SMALL) {
        uint64_t keys[100], values[100];
        tc_fill(GPUPRIM_DTYPE_U64, keys, 100, TC_MODERATE);
        tc_fill(GPUPRIM_DTYPE_U64, values, 100, TC_MODERATE);
        sort_call(visit, user, 0, GPUPRIM_DTYPE_U64, GPUPRIM_DTYPE_U64, keys, values, 100, 0, 0, 1, 0);
        sort_call(visit, user, 1, GPUPRIM_DTYPE_U64, TR_NO_DTYPE, keys, NULL, 100, 0, 0, 0, 1);
    } else if (plan == TR_PLAN_CONCURRENCY) {
        /* pairs out of place, keys in place, a bit range with pairs in place; both zeros among the keys */
        size_t d;
        for (d = 0; d < TC_DTYPE_COUNT; ++d) {
            const gpuprim_dtype_t kd = tc_all_dtypes[d];
            const uint64_t n = tr_concurrency_count(d + 1);
            void *keys = tc_xmalloc(n * 8 + 16), *values = tc_xmalloc(n * 8 + 16);
            uint64_t i;
            tr_fill_small(kd, keys, n, 1);
            for (i = 0; i < n; ++i) ((uint64_t *)values)[i] = i * 0x9E3779B97F4A7C15ull;
            sort_call(visit, user, 1, kd, GPUPRIM_DTYPE_U32, keys, values, n, 0, 0, 0, 0);
            sort_call(visit, user, 1, kd, TR_NO_DTYPE, keys, NULL, n, 0, 0, 1, 1);
            sort_call(visit, user, 0, kd, GPUPRIM_DTYPE_U64, keys, values, n, 1, tc_bits(kd) - 1, (int)(d & 1), 1);
            free(keys);
            free(values);
        }
    } else if (plan == TR_PLAN_BACKENDS) sort_backends(visit, user);
    else sort_threads(visit, user);
}

static int sort_reference(const tr_call_t *c, tr_result_t *want) {
    const uint64_t n = c->arg[0].count;
    uint64_t *perm = (uint64_t *)tc_xmalloc(n * sizeof *perm + 16);
    tr_stable_order(c, 0, n, perm);
    tc_permute(c->arg[0].dtype, c->arg[0].host, perm, n, want->out[2]);
    if (c->arg[1].used) tc_permute(c->arg[1].dtype, c->arg[1].host, perm, n, want->out[3]);
    free(perm);
    return 1;
}

const tr_case_t tr_sort_case = {.name = "sort",
                                .each = sort_each,
                                .invoke = sort_invoke,
                                .reference = sort_reference};
