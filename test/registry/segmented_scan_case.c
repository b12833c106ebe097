/* SPDX-License-Identifier: Apache-2.0 */
/* gpuprim_segmented_scan (every op, inclusive and exclusive): arg 0 the
 * input, arg 1 the output (poisoned, or in place: arg 0's buffer). */
#include "registry.h"

const tr_case_t tr_segmented_scan_case;

static gpuprim_status_t segmented_scan_invoke(const tr_call_t *c, gpuprim_context_t ctx, gpuprim_buffer_t const *b,
                                              const gpuprim_segments_t *segments, void *scalar) {
    (void)scalar;
    return gpuprim_segmented_scan(ctx, c->op, (gpuprim_scan_kind_t)c->kind, segments, b[0], b[1]);
}

/* Float sums within the f32 bound of all inputs plus a few units of each
 * output; the rest (elements outside every segment included) bit for bit. */
static int segmented_scan_agree(const tr_call_t *c, const tr_result_t *a, const tr_result_t *b, char *why,
                                size_t cap) {
    const gpuprim_dtype_t d = c->arg[0].dtype;
    if (c->op != GPUPRIM_OP_SUM || !tc_is_float(d)) return tr_same_bits(c, a, b, why, cap);
    return tr_scans_close(d, c->arg[0].host, c->arg[0].count, a->out[1], b->out[1], why, cap);
}

static void segmented_scan_call(tr_visit_t visit, void *user, const tc_layout_t *L, gpuprim_dtype_t d,
                                gpuprim_op_t op, int kind, int in_place, const void *in) {
    tr_call_t c;
    tr_call_init(&c, &tr_segmented_scan_case);
    c.layout = L;
    c.op = op;
    c.kind = kind;
    tr_set_arg(&c, 0, d, L->n, in, 0, 0);
    if (in_place) tr_set_in_place(&c, 1, 0, 1);
    else tr_set_arg(&c, 1, d, L->n, NULL, 0xA5, 1);
    tr_call_label(&c, "%s %s %s n=%llu, %llu segments (%s)%s", kind ? "exclusive" : "inclusive", tc_op_name(op),
                  tc_dtype_name(d), (unsigned long long)L->n, (unsigned long long)L->nseg, L->name,
                  in_place ? " in place" : "");
    visit(&c, user);
    tr_call_free(&c);
}

static void segmented_scan_each(tr_plan_t plan, tr_visit_t visit, void *user) {
    int op, kind;
    size_t k;
    if (plan == TR_PLAN_SMALL) {
        tc_layout_t L = tc_layout_rows(5, 20);
        int32_t in[100];
        tc_fill(GPUPRIM_DTYPE_I32, in, 100, TC_MODERATE);
        segmented_scan_call(visit, user, &L, GPUPRIM_DTYPE_I32, GPUPRIM_OP_SUM, GPUPRIM_SCAN_EXCLUSIVE, 0, in);
        tc_layout_free(&L);
    } else if (plan == TR_PLAN_CONCURRENCY) {
        for (k = 0; k < TC_DTYPE_COUNT; ++k) {
            tc_layout_t L = tr_concurrency_layout(k, tr_concurrency_count(k + 7));
            void *in = tc_xmalloc(L.n * 8 + 16);
            for (op = 0; op < 3; ++op)
                for (kind = 0; kind < 2; ++kind) {
                    tr_fill_small(tc_all_dtypes[k], in, L.n, op != GPUPRIM_OP_SUM);
                    segmented_scan_call(visit, user, &L, tc_all_dtypes[k], (gpuprim_op_t)op, kind, (op + kind) % 2,
                                        in);
                }
            free(in);
            tc_layout_free(&L);
        }
    } else if (plan == TR_PLAN_BACKENDS) {
        tc_layout_t layouts[12];
        const int count = tr_backend_layouts(layouts);
        int i;
        for (i = 0; i < count; ++i)
            for (k = 0; k < TC_DTYPE_COUNT; ++k) {
                void *in = tc_xmalloc(layouts[i].n * 8 + 16);
                for (op = 0; op < 3; ++op) {
                    tr_fill_random(tc_all_dtypes[k], in, layouts[i].n, op == GPUPRIM_OP_SUM, 0);
                    /* inclusive out of place, exclusive in place */
                    for (kind = 0; kind < 2; ++kind)
                        segmented_scan_call(visit, user, &layouts[i], tc_all_dtypes[k], (gpuprim_op_t)op, kind, kind,
                                            in);
                }
                free(in);
            }
        for (i = 0; i < count; ++i) tc_layout_free(&layouts[i]);
    } else {
        /* long segments past the parallel scan's thresholds */
        static const gpuprim_dtype_t dts[] = {GPUPRIM_DTYPE_F32, GPUPRIM_DTYPE_I8, GPUPRIM_DTYPE_F16, GPUPRIM_DTYPE_U64};
        int shape;
        for (shape = 0; shape < TR_THREADS_SHAPES; ++shape) {
            tc_layout_t L = tr_threads_layout(shape);
            for (k = 0; k < sizeof dts / sizeof dts[0]; ++k) {
                void *in = tc_xmalloc(L.n * 8);
                tc_fill(dts[k], in, L.n, TC_MODERATE);
                for (op = 0; op < 3; ++op)
                    segmented_scan_call(visit, user, &L, dts[k], (gpuprim_op_t)op, op & 1, 0, in);
                free(in);
            }
            tc_layout_free(&L);
        }
    }
}

/* Each segment scanned on its own; nothing outside the segments written.
 * Float sums only where each segment's has one exact answer
 * (tr_float_sum_exact). */
static int segmented_scan_reference(const tr_call_t *c, tr_result_t *want) {
    const gpuprim_dtype_t d = c->arg[0].dtype;
    const int float_sum = tc_is_float(d) && c->op == GPUPRIM_OP_SUM;
    uint64_t s, i, begin, end;
    for (s = 0; s < tr_segment_count(c) && float_sum; ++s) {
        tr_segment_bounds(c, s, &begin, &end);
        if (!tr_float_sum_exact(d, c->arg[0].host, NULL, begin, end)) return 0;
    }
    for (s = 0; s < tr_segment_count(c); ++s) {
        uint64_t acc = tc_identity(c->op, d);
        long double sum = 0;
        tr_segment_bounds(c, s, &begin, &end);
        for (i = begin; i < end; ++i) {
            const uint64_t x = tc_get(d, c->arg[0].host, i);
            if (c->kind == GPUPRIM_SCAN_EXCLUSIVE) tc_set(d, want->out[1], i, acc);
            if (float_sum) {
                sum += tr_float_term(d, c->arg[0].host, NULL, i);
                acc = tc_from_double(d, (double)sum);
            } else {
                acc = tc_apply(c->op, d, acc, x);
            }
            if (c->kind == GPUPRIM_SCAN_INCLUSIVE) tc_set(d, want->out[1], i, acc);
        }
    }
    return 1;
}

const tr_case_t tr_segmented_scan_case = {.name = "segmented_scan",
                                          .each = segmented_scan_each,
                                          .invoke = segmented_scan_invoke,
                                          .agree = segmented_scan_agree,
                                          .reference = segmented_scan_reference};
