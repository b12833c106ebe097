/* SPDX-License-Identifier: Apache-2.0 */
/* gpuprim_segmented_sort (kind 0) and gpuprim_segmented_argsort (kind 1):
 * arg 0 keys in, arg 1 values in (sort only, or unused), arg 2 keys out
 * (argsort: or unused), arg 3 values out / indices. Outputs are poisoned,
 * so the elements outside every segment are compared too. */
#include "registry.h"

const tr_case_t tr_segmented_sort_case;

static gpuprim_status_t segmented_sort_invoke(const tr_call_t *c, gpuprim_context_t ctx, gpuprim_buffer_t const *b,
                                              const gpuprim_segments_t *segments, void *scalar) {
    gpuprim_sort_options_t options;
    (void)scalar;
    gpuprim_sort_options_init(&options);
    options.order = (gpuprim_order_t)c->order;
    options.begin_bit = c->begin_bit;
    options.end_bit = c->end_bit;
    if (c->kind) return gpuprim_segmented_argsort(ctx, segments, b[0], b[2], b[3], &options);
    return gpuprim_segmented_sort(ctx, segments, b[0], b[1], b[2], b[3], &options);
}

typedef struct {
    gpuprim_dtype_t vd; /* values or indices (TR_NO_DTYPE: keys only) */
    int argsort, in_place, keys_out;
    uint32_t begin, end;
} segmented_sort_shape_t;

static void segmented_sort_call(tr_visit_t visit, void *user, const tc_layout_t *L, gpuprim_dtype_t kd,
                                const void *keys, const void *values, int descending,
                                const segmented_sort_shape_t *v) {
    const uint64_t n = L->n;
    const int has_values = v->vd != TR_NO_DTYPE;
    tr_call_t c;
    tr_call_init(&c, &tr_segmented_sort_case);
    c.layout = L;
    c.kind = v->argsort;
    c.order = descending;
    c.begin_bit = v->begin;
    c.end_bit = v->end;
    tr_set_arg(&c, 0, kd, n, keys, 0, 0);
    if (has_values && !v->argsort) tr_set_arg(&c, 1, v->vd, n, values, 0, 0);
    if (v->in_place) tr_set_in_place(&c, 2, 0, 1);
    else if (v->keys_out) tr_set_arg(&c, 2, kd, n, NULL, 0x5A, 1);
    if (has_values && (v->argsort || !v->in_place)) tr_set_arg(&c, 3, v->vd, n, NULL, 0x3C, 1);
    else if (has_values) tr_set_in_place(&c, 3, 1, 1);
    tr_call_label(&c, "%s keys %s values %s n=%llu, %llu segments (%s), bits [%u,%u) %s%s",
                  v->argsort ? "argsort" : "sort", tc_dtype_name(kd), has_values ? tc_dtype_name(v->vd) : "-",
                  (unsigned long long)n, (unsigned long long)L->nseg, L->name, v->begin, v->end,
                  descending ? "descending" : "ascending", v->in_place ? " in place" : "");
    visit(&c, user);
    tr_call_free(&c);
}

static void segmented_sort_backends(tr_visit_t visit, void *user) {
    static const gpuprim_dtype_t index_dtypes[] = {GPUPRIM_DTYPE_I32, GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_I64,
                                                   GPUPRIM_DTYPE_U64};
    tc_layout_t layouts[12];
    const int count = tr_backend_layouts(layouts);
    int i, desc;
    size_t k;
    for (i = 0; i < count; ++i) {
        const tc_layout_t *L = &layouts[i];
        const uint64_t n = L->n;
        for (k = 0; k < TC_DTYPE_COUNT; ++k) {
            const gpuprim_dtype_t kd = tc_all_dtypes[k];
            const uint32_t bits = tc_bits(kd);
            for (desc = 0; desc < 2; ++desc) {
                /* { values, argsort, in place, keys out, begin, end }, few distinct keys */
                const segmented_sort_shape_t v[7] = {
                    {TR_NO_DTYPE, 0, desc, 1, 0, 0},
                    {GPUPRIM_DTYPE_U32, 0, !desc, 1, 0, 0},
                    {GPUPRIM_DTYPE_U8, 0, desc, 1, 0, 0},
                    {GPUPRIM_DTYPE_F64, 0, 0, 1, 0, 0},
                    {index_dtypes[(k + (size_t)desc) % 4], 1, 0, 1, 0, 0},
                    {TR_NO_DTYPE, 0, 0, 1, 1, bits - 1},
                    {GPUPRIM_DTYPE_U16, 0, 1, 1, 0, bits / 2}};
                const int few[7] = {(int)(k % 2), 1, 0, 0, (int)(k % 2), 0, 0};
                int j;
                for (j = 0; j < 7; ++j) {
                    void *keys = tc_xmalloc(n * 8 + 16), *values = tc_xmalloc(n * 8 + 16);
                    tr_fill_random(kd, keys, n, 0, few[j]);
                    tr_fill_random(GPUPRIM_DTYPE_U64, values, n, 0, 0);
                    segmented_sort_call(visit, user, L, kd, keys, values, desc, &v[j]);
                    free(keys);
                    free(values);
                }
            }
        }
    }
    for (i = 0; i < count; ++i) tc_layout_free(&layouts[i]);
}

/* Short and long segments (past the parallel sort's 2^17 keys). */
static void segmented_sort_threads(tr_visit_t visit, void *user) {
    static const gpuprim_dtype_t dts[] = {GPUPRIM_DTYPE_F32, GPUPRIM_DTYPE_I8, GPUPRIM_DTYPE_F16, GPUPRIM_DTYPE_U64};
    int shape, variant;
    size_t di;
    for (shape = 0; shape < TR_THREADS_SHAPES; ++shape) {
        tc_layout_t L = tr_threads_layout(shape);
        const uint64_t n = L.n;
        for (di = 0; di < sizeof dts / sizeof dts[0]; ++di) {
            const gpuprim_dtype_t d = dts[di];
            void *keys = tc_xmalloc(n * 8), *values = tc_xmalloc(n * 8);
            uint64_t i;
            tc_fill(d, keys, n, shape == 1 ? TC_SMALL_RANGE : TC_NAN_SPARSE);
            for (i = 0; i < n; i += 89) tc_set(d, keys, i, tc_special_value(d));
            for (i = 0; i < n; ++i) ((uint64_t *)values)[i] = i * 0x9E3779B97F4A7C15ull;
            for (variant = 0; variant < 2; ++variant) {
                const segmented_sort_shape_t keys_only = {TR_NO_DTYPE, 0, 0, 1, 0, 0};
                const segmented_sort_shape_t pairs_in_place = {GPUPRIM_DTYPE_U64, 0, 1, 1, 0, 0};
                /* argsort: no keys out; with a bit range, keys out */
                const segmented_sort_shape_t argsort = {GPUPRIM_DTYPE_I64, 1, 0, variant, (uint32_t)variant,
                                                        variant ? tc_bits(d) - 1 : 0};
                segmented_sort_call(visit, user, &L, d, keys, values, variant, &keys_only);
                segmented_sort_call(visit, user, &L, d, keys, values, variant, &pairs_in_place);
                segmented_sort_call(visit, user, &L, d, keys, values, variant, &argsort);
            }
            free(keys);
            free(values);
        }
        tc_layout_free(&L);
    }
}

static void segmented_sort_each(tr_plan_t plan, tr_visit_t visit, void *user) {
    if (plan == TR_PLAN_SMALL) {
        tc_layout_t L = tc_layout_rows(4, 25);
        const segmented_sort_shape_t pairs = {GPUPRIM_DTYPE_U32, 0, 0, 1, 0, 0};
        const segmented_sort_shape_t argsort = {GPUPRIM_DTYPE_I32, 1, 0, 0, 0, 0};
        int16_t keys[100];
        uint32_t values[100];
        tc_fill(GPUPRIM_DTYPE_I16, keys, 100, TC_MODERATE);
        tc_fill(GPUPRIM_DTYPE_U32, values, 100, TC_MODERATE);
        segmented_sort_call(visit, user, &L, GPUPRIM_DTYPE_I16, keys, values, 0, &pairs);
        segmented_sort_call(visit, user, &L, GPUPRIM_DTYPE_I16, keys, values, 1, &argsort);
        tc_layout_free(&L);
    } else if (plan == TR_PLAN_CONCURRENCY) {
        /* keys in place, pairs out of place, argsort, a bit range */
        size_t k;
        int j;
        for (k = 0; k < TC_DTYPE_COUNT; ++k) {
            const gpuprim_dtype_t kd = tc_all_dtypes[k];
            tc_layout_t L = tr_concurrency_layout(k + 2, tr_concurrency_count(k + 11));
            const segmented_sort_shape_t v[4] = {{TR_NO_DTYPE, 0, 1, 1, 0, 0},
                                                 {GPUPRIM_DTYPE_U32, 0, 0, 1, 0, 0},
                                                 {GPUPRIM_DTYPE_I64, 1, 0, (int)(k & 1), 0, 0},
                                                 {GPUPRIM_DTYPE_U16, 0, 1, 1, 1, tc_bits(kd) - 1}};
            void *keys = tc_xmalloc(L.n * 8 + 16), *values = tc_xmalloc(L.n * 8 + 16);
            tr_fill_small(kd, keys, L.n, 1);
            tr_fill_random(GPUPRIM_DTYPE_U64, values, L.n, 0, 0);
            for (j = 0; j < 4; ++j) segmented_sort_call(visit, user, &L, kd, keys, values, (int)((k + (size_t)j) & 1), &v[j]);
            free(keys);
            free(values);
            tc_layout_free(&L);
        }
    } else if (plan == TR_PLAN_BACKENDS) segmented_sort_backends(visit, user);
    else segmented_sort_threads(visit, user);
}

/* Each segment sorted (or argsorted, positions within it) on its own;
 * nothing outside the segments written. */
static int segmented_sort_reference(const tr_call_t *c, tr_result_t *want) {
    const gpuprim_dtype_t kd = c->arg[0].dtype;
    uint64_t s, j, begin, end;
    for (s = 0; s < tr_segment_count(c); ++s) {
        uint64_t *perm;
        tr_segment_bounds(c, s, &begin, &end);
        perm = (uint64_t *)tc_xmalloc((end - begin) * sizeof *perm + 16);
        tr_stable_order(c, begin, end, perm);
        for (j = 0; j < end - begin; ++j) {
            if (c->arg[2].used) tc_set(kd, want->out[2], begin + j, tc_get(kd, c->arg[0].host, begin + perm[j]));
            if (c->kind && c->arg[3].used) tc_set(c->arg[3].dtype, want->out[3], begin + j, perm[j]);
            else if (c->arg[3].used)
                tc_set(c->arg[3].dtype, want->out[3], begin + j, tc_get(c->arg[1].dtype, c->arg[1].host, begin + perm[j]));
        }
        free(perm);
    }
    return 1;
}

const tr_case_t tr_segmented_sort_case = {.name = "segmented_sort",
                                          .each = segmented_sort_each,
                                          .invoke = segmented_sort_invoke,
                                          .reference = segmented_sort_reference};
