/* SPDX-License-Identifier: Apache-2.0 */
/* gpuprim_segmented_reduce (every op): arg 0 the input, arg 1 one result a
 * segment (poisoned). Also bad offsets, which must fail the same way (status,
 * message, output untouched) everywhere. */
#include "registry.h"

const tr_case_t tr_segmented_reduce_case;

static gpuprim_status_t segmented_reduce_invoke(const tr_call_t *c, gpuprim_context_t ctx, gpuprim_buffer_t const *b,
                                                const gpuprim_segments_t *segments, void *scalar) {
    (void)scalar;
    return gpuprim_segmented_reduce(ctx, c->op, segments, b[0], b[1]);
}

/* Float sums within the f32 bound of each segment's inputs; the rest bit
 * for bit. */
static int segmented_reduce_agree(const tr_call_t *c, const tr_result_t *a, const tr_result_t *b, char *why,
                                  size_t cap) {
    const gpuprim_dtype_t d = c->arg[0].dtype;
    const tc_layout_t *L = c->layout;
    const size_t size = tc_size(d);
    uint64_t s;
    if (c->op != GPUPRIM_OP_SUM || !tc_is_float(d)) return tr_same_bits(c, a, b, why, cap);
    for (s = 0; s < L->nseg; ++s) {
        const uint64_t begin = L->off[s], end = L->off[s + 1];
        const double bound = tr_sum_bound(d, (const char *)c->arg[0].host + begin * size, end - begin,
                                          tr_value_of(d, a->out[1], s));
        if (!tr_close_enough(d, a->out[1], b->out[1], s, bound)) {
            snprintf(why, cap, "segment %llu: %.9g against %.9g", (unsigned long long)s, tr_value_of(d, a->out[1], s),
                     tr_value_of(d, b->out[1], s));
            return 0;
        }
    }
    return 1;
}

static void segmented_reduce_call(tr_visit_t visit, void *user, const tc_layout_t *L, gpuprim_dtype_t d,
                                  gpuprim_op_t op, const void *in, int poison) {
    tr_call_t c;
    tr_call_init(&c, &tr_segmented_reduce_case);
    c.layout = L;
    c.op = op;
    tr_set_arg(&c, 0, d, L->n, in, 0, 0);
    tr_set_arg(&c, 1, d, L->nseg, NULL, poison, 1);
    tr_call_label(&c, "%s %s n=%llu, %llu segments (%s)", tc_op_name(op), tc_dtype_name(d), (unsigned long long)L->n,
                  (unsigned long long)L->nseg, L->name);
    visit(&c, user);
    tr_call_free(&c);
}

/* A bad offset (decreasing, past the end, a start after the end) fails on
 * every backend with the same message and leaves the output as it was. */
static void segmented_reduce_bad_offsets(tr_visit_t visit, void *user) {
    static const uint64_t bad[][6] = {{0, 3, 2, 5, 6, 6}, {0, 1, 2, 3, 4, 99}, {2, 2, 2, 2, 1, 3}};
    const float data[6] = {1, 2, 3, 4, 5, 6}, result[5] = {7, 7, 7, 7, 7};
    int k;
    for (k = 0; k < 3; ++k) {
        tc_layout_t L = tr_layout_offsets("bad offsets", bad[k], 5, 6, GPUPRIM_DTYPE_U32);
        tr_call_t c;
        tr_call_init(&c, &tr_segmented_reduce_case);
        c.layout = &L;
        c.op = GPUPRIM_OP_SUM;
        c.expect = GPUPRIM_ERROR_INVALID_ARGUMENT;
        tr_set_arg(&c, 0, GPUPRIM_DTYPE_F32, 6, data, 0, 0);
        tr_set_arg(&c, 1, GPUPRIM_DTYPE_F32, 5, result, 0, 1);
        tr_call_label(&c, "bad offsets %d", k);
        visit(&c, user);
        tr_call_free(&c);
        tc_layout_free(&L);
    }
}

static void segmented_reduce_each(tr_plan_t plan, tr_visit_t visit, void *user) {
    int op;
    size_t k;
    if (plan == TR_PLAN_SMALL) {
        static const uint64_t lengths[] = {10, 0, 60, 25};
        tc_layout_t L = tc_layout_csr("csr", lengths, 4, 3, 2, GPUPRIM_DTYPE_I32);
        double in[100];
        tc_fill(GPUPRIM_DTYPE_F64, in, L.n, TC_MODERATE);
        segmented_reduce_call(visit, user, &L, GPUPRIM_DTYPE_F64, GPUPRIM_OP_MAX, in, 0x5A);
        tc_layout_free(&L);
    } else if (plan == TR_PLAN_CONCURRENCY) {
        for (k = 0; k < TC_DTYPE_COUNT; ++k) {
            tc_layout_t L = tr_concurrency_layout(k + 1, tr_concurrency_count(k + 9));
            void *in = tc_xmalloc(L.n * 8 + 16);
            for (op = 0; op < 3; ++op) {
                tr_fill_small(tc_all_dtypes[k], in, L.n, op != GPUPRIM_OP_SUM);
                segmented_reduce_call(visit, user, &L, tc_all_dtypes[k], (gpuprim_op_t)op, in, 0x5A);
            }
            free(in);
            tc_layout_free(&L);
        }
    } else if (plan == TR_PLAN_BACKENDS) {
        tc_layout_t layouts[12];
        const int count = tr_backend_layouts(layouts);
        int i;
        segmented_reduce_bad_offsets(visit, user);
        for (i = 0; i < count; ++i)
            for (k = 0; k < TC_DTYPE_COUNT; ++k) {
                void *in = tc_xmalloc(layouts[i].n * 8 + 16);
                for (op = 0; op < 3; ++op) {
                    tr_fill_random(tc_all_dtypes[k], in, layouts[i].n, op == GPUPRIM_OP_SUM, 0);
                    segmented_reduce_call(visit, user, &layouts[i], tc_all_dtypes[k], (gpuprim_op_t)op, in, 0xA5);
                }
                free(in);
            }
        for (i = 0; i < count; ++i) tc_layout_free(&layouts[i]);
    } else {
        /* long segments past the parallel reduce's thresholds */
        static const gpuprim_dtype_t dts[] = {GPUPRIM_DTYPE_F32, GPUPRIM_DTYPE_I8, GPUPRIM_DTYPE_F16, GPUPRIM_DTYPE_U64};
        int shape;
        for (shape = 0; shape < TR_THREADS_SHAPES; ++shape) {
            tc_layout_t L = tr_threads_layout(shape);
            for (k = 0; k < sizeof dts / sizeof dts[0]; ++k) {
                void *in = tc_xmalloc(L.n * 8);
                tc_fill(dts[k], in, L.n, TC_MODERATE);
                for (op = 0; op < 3; ++op) segmented_reduce_call(visit, user, &L, dts[k], (gpuprim_op_t)op, in, 0);
                free(in);
            }
            tc_layout_free(&L);
        }
    }
}

/* Float sums only where each segment's has one exact answer
 * (tr_float_sum_exact). */
static int segmented_reduce_reference(const tr_call_t *c, tr_result_t *want) {
    const gpuprim_dtype_t d = c->arg[0].dtype;
    const int float_sum = tc_is_float(d) && c->op == GPUPRIM_OP_SUM;
    uint64_t s, i, begin, end;
    if (c->expect != GPUPRIM_SUCCESS) return 1; /* outputs as they were */
    for (s = 0; s < tr_segment_count(c) && float_sum; ++s) {
        tr_segment_bounds(c, s, &begin, &end);
        if (!tr_float_sum_exact(d, c->arg[0].host, NULL, begin, end)) return 0;
    }
    for (s = 0; s < tr_segment_count(c); ++s) {
        uint64_t acc = tc_identity(c->op, d);
        long double sum = 0;
        tr_segment_bounds(c, s, &begin, &end);
        for (i = begin; i < end; ++i) {
            if (float_sum) sum += tr_float_term(d, c->arg[0].host, NULL, i);
            else acc = tc_apply(c->op, d, acc, tc_get(d, c->arg[0].host, i));
        }
        tc_set(d, want->out[1], s, float_sum ? tc_from_double(d, (double)sum) : acc);
    }
    return 1;
}

const tr_case_t tr_segmented_reduce_case = {.name = "segmented_reduce",
                                            .each = segmented_reduce_each,
                                            .invoke = segmented_reduce_invoke,
                                            .agree = segmented_reduce_agree,
                                            .reference = segmented_reduce_reference};
