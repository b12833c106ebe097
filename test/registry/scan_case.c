/* SPDX-License-Identifier: Apache-2.0 */
/* gpuprim_scan (every op, inclusive and exclusive): arg 0 the input, arg 1
 * the output (poisoned, or in place: arg 0's buffer). */
#include "registry.h"

const tr_case_t tr_scan_case;

static gpuprim_status_t scan_invoke(const tr_call_t *c, gpuprim_context_t ctx, gpuprim_buffer_t const *b,
                                    const gpuprim_segments_t *segments, void *scalar) {
    (void)segments;
    (void)scalar;
    return gpuprim_scan(ctx, c->op, (gpuprim_scan_kind_t)c->kind, b[0], b[1]);
}

/* Float sums within the f32 bound of the inputs plus a few units of each
 * output; everything else bit for bit. */
static int scan_agree(const tr_call_t *c, const tr_result_t *a, const tr_result_t *b, char *why, size_t cap) {
    const gpuprim_dtype_t d = c->arg[0].dtype;
    if (c->op != GPUPRIM_OP_SUM || !tc_is_float(d)) return tr_same_bits(c, a, b, why, cap);
    return tr_scans_close(d, c->arg[0].host, c->arg[0].count, a->out[1], b->out[1], why, cap);
}

/* poison < 0: in place. */
static void scan_call(tr_visit_t visit, void *user, gpuprim_dtype_t d, uint64_t n, gpuprim_op_t op, int kind,
                      const void *in, int poison) {
    tr_call_t c;
    tr_call_init(&c, &tr_scan_case);
    c.op = op;
    c.kind = kind;
    tr_set_arg(&c, 0, d, n, in, 0, 0);
    if (poison < 0) tr_set_in_place(&c, 1, 0, 1);
    else tr_set_arg(&c, 1, d, n, NULL, poison, 1);
    tr_call_label(&c, "%s %s %s n=%llu%s", kind ? "exclusive" : "inclusive", tc_op_name(op), tc_dtype_name(d),
                  (unsigned long long)n, poison < 0 ? " in place" : "");
    visit(&c, user);
    tr_call_free(&c);
}

static void scan_each(tr_plan_t plan, tr_visit_t visit, void *user) {
    size_t s, d;
    int op, kind;
    if (plan == TR_PLAN_SMALL) {
        int32_t a[100];
        tc_fill(GPUPRIM_DTYPE_I32, a, 100, TC_MODERATE);
        scan_call(visit, user, GPUPRIM_DTYPE_I32, 100, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, a, 0x5A);
    } else if (plan == TR_PLAN_CONCURRENCY) {
        /* every op, each kind out of place and in place */
        for (d = 0; d < TC_DTYPE_COUNT; ++d) {
            const uint64_t n = tr_concurrency_count(d + 5);
            void *a = tc_xmalloc(n * 8 + 16);
            for (op = 0; op < 3; ++op)
                for (kind = 0; kind < 2; ++kind) {
                    tr_fill_small(tc_all_dtypes[d], a, n, op != GPUPRIM_OP_SUM);
                    scan_call(visit, user, tc_all_dtypes[d], n, (gpuprim_op_t)op, kind, a,
                              (op + kind) % 2 ? -1 : 0x5A);
                }
            free(a);
        }
    } else if (plan == TR_PLAN_BACKENDS) {
        static const uint64_t sizes[] = {1, 2, 31, 33, 1000, 4095, 4096, 4097, 8191, 8193, 65537, (1u << 20) + 3,
                                         (1u << 22) + 1};
        for (s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
            for (d = 0; d < TC_DTYPE_COUNT; ++d) {
                const uint64_t n = sizes[s];
                void *a = tc_xmalloc(n * 8 + 16);
                for (op = 0; op < 3; ++op)
                    for (kind = 0; kind < 2; ++kind) {
                        tr_fill_random(tc_all_dtypes[d], a, n, op == GPUPRIM_OP_SUM, 0);
                        scan_call(visit, user, tc_all_dtypes[d], n, (gpuprim_op_t)op, kind, a, 0xA5);
                    }
                free(a);
            }
    } else {
        /* the parallel paths start at 2^16 elements */
        static const uint64_t counts[] = {1, 1000, 70001, (1u << 18) + 3, (1u << 20) + 12345};
        for (s = 0; s < sizeof counts / sizeof counts[0]; ++s)
            for (d = 0; d < 6; ++d) {
                const uint64_t n = counts[s];
                void *a = tc_xmalloc(n * 8);
                tc_fill(tc_all_dtypes[d], a, n, TC_MODERATE);
                for (op = 0; op < 3; ++op)
                    for (kind = 0; kind < 2; ++kind) scan_call(visit, user, tc_all_dtypes[d], n, (gpuprim_op_t)op, kind, a, 0);
                free(a);
            }
    }
}

/* Float sums only where they have one exact answer (tr_float_sum_exact). */
static int scan_reference(const tr_call_t *c, tr_result_t *want) {
    const gpuprim_dtype_t d = c->arg[0].dtype;
    const int float_sum = tc_is_float(d) && c->op == GPUPRIM_OP_SUM;
    uint64_t acc = tc_identity(c->op, d), i;
    long double sum = 0;
    if (float_sum && !tr_float_sum_exact(d, c->arg[0].host, NULL, 0, c->arg[0].count)) return 0;
    for (i = 0; i < c->arg[0].count; ++i) {
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
    return 1;
}

const tr_case_t tr_scan_case = {.name = "scan",
                                .each = scan_each,
                                .invoke = scan_invoke,
                                .agree = scan_agree,
                                .reference = scan_reference};
