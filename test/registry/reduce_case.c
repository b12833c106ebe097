/* SPDX-License-Identifier: Apache-2.0 */
/* gpuprim_reduce (every op), gpuprim_dot and their _to_buffer forms: arg 0
 * the input, arg 1 dot's second input, arg 2 the _to_buffer result (one
 * element, poisoned); the host calls write the host scalar. c->kind holds
 * REDUCE_DOT and REDUCE_TO_BUFFER. */
#include "registry.h"

#define REDUCE_DOT 1
#define REDUCE_TO_BUFFER 2

const tr_case_t tr_reduce_case;

static gpuprim_status_t reduce_invoke(const tr_call_t *c, gpuprim_context_t ctx, gpuprim_buffer_t const *b,
                                      const gpuprim_segments_t *segments, void *scalar) {
    (void)segments;
    switch (c->kind) {
    case REDUCE_DOT: return gpuprim_dot(ctx, b[0], b[1], scalar);
    case REDUCE_TO_BUFFER: return gpuprim_reduce_to_buffer(ctx, c->op, b[0], b[2]);
    case REDUCE_DOT | REDUCE_TO_BUFFER: return gpuprim_dot_to_buffer(ctx, b[0], b[1], b[2]);
    default: return gpuprim_reduce(ctx, c->op, b[0], scalar);
    }
}

/* Where the call's result is: the host scalar or the one-element buffer. */
static const void *reduce_result(const tr_call_t *c, const tr_result_t *r) {
    return c->kind & REDUCE_TO_BUFFER ? (const void *)r->out[2] : (const void *)r->scalar;
}

/* Integers and MIN/MAX bit for bit; float sums within the f32 bound of the
 * inputs (the backends associate differently), dots a looser one. */
static int reduce_agree(const tr_call_t *c, const tr_result_t *a, const tr_result_t *b, char *why, size_t cap) {
    const gpuprim_dtype_t d = c->arg[0].dtype;
    const uint64_t n = c->arg[0].count;
    const void *ra = reduce_result(c, a), *rb = reduce_result(c, b);
    double x = tr_value_of(d, ra, 0), y = tr_value_of(d, rb, 0);
    int ok;
    if (!tc_is_float(d) || (!(c->kind & REDUCE_DOT) && c->op != GPUPRIM_OP_SUM)) return tr_same_bits(c, a, b, why, cap);
    if (!(c->kind & REDUCE_DOT))
        ok = tr_close_enough(d, ra, rb, 0, tr_sum_bound(d, c->arg[0].host, n, x));
    else
        ok = isnan(x) || x == y || fabs(x - y) <= 1e-3 * fabs(x) + 1e3 * tr_sum_bound(d, c->arg[0].host, n, 0) + 1e-6;
    if (!ok) snprintf(why, cap, "%.9g against %.9g", x, y);
    return ok;
}

static void reduce_call(tr_visit_t visit, void *user, gpuprim_dtype_t d, uint64_t n, int kind, gpuprim_op_t op,
                        const void *a, const void *b) {
    tr_call_t c;
    tr_call_init(&c, &tr_reduce_case);
    c.kind = kind;
    c.op = op;
    tr_set_arg(&c, 0, d, n, a, 0, 0);
    if (kind & REDUCE_DOT) tr_set_arg(&c, 1, d, n, b, 0, 0);
    if (kind & REDUCE_TO_BUFFER) tr_set_arg(&c, 2, d, 1, NULL, 0x5A, 1);
    else c.scalar_size = tc_size(d);
    tr_call_label(&c, "%s%s %s n=%llu", kind & REDUCE_DOT ? "dot" : tc_op_name(op),
                  kind & REDUCE_TO_BUFFER ? " to buffer" : "", tc_dtype_name(d), (unsigned long long)n);
    visit(&c, user);
    tr_call_free(&c);
}

static void reduce_each(tr_plan_t plan, tr_visit_t visit, void *user) {
    size_t s, d;
    int op;
    if (plan == TR_PLAN_SMALL) {
        uint32_t a[100], b[100];
        tc_fill(GPUPRIM_DTYPE_U32, a, 100, TC_MODERATE);
        tc_fill(GPUPRIM_DTYPE_U32, b, 100, TC_MODERATE);
        reduce_call(visit, user, GPUPRIM_DTYPE_U32, 100, 0, GPUPRIM_OP_SUM, a, NULL);
        reduce_call(visit, user, GPUPRIM_DTYPE_U32, 100, REDUCE_DOT, GPUPRIM_OP_SUM, a, b);
        reduce_call(visit, user, GPUPRIM_DTYPE_U32, 100, REDUCE_TO_BUFFER, GPUPRIM_OP_MAX, a, NULL);
        reduce_call(visit, user, GPUPRIM_DTYPE_U32, 100, REDUCE_DOT | REDUCE_TO_BUFFER, GPUPRIM_OP_SUM, a, b);
    } else if (plan == TR_PLAN_CONCURRENCY) {
        /* every op, dot and both _to_buffer forms; n = 0 gives the identities */
        for (d = 0; d < TC_DTYPE_COUNT; ++d) {
            const gpuprim_dtype_t dt = tc_all_dtypes[d];
            const uint64_t n = tr_concurrency_count(d + 3);
            void *a = tc_xmalloc(n * 8 + 16), *b = tc_xmalloc(n * 8 + 16);
            tr_fill_small(dt, a, n, 1);
            for (op = GPUPRIM_OP_MIN; op <= GPUPRIM_OP_MAX; ++op) reduce_call(visit, user, dt, n, 0, (gpuprim_op_t)op, a, NULL);
            tr_fill_small(dt, a, n, 0);
            tr_fill_small(dt, b, n, 0);
            reduce_call(visit, user, dt, n, 0, GPUPRIM_OP_SUM, a, NULL);
            reduce_call(visit, user, dt, n, REDUCE_DOT, GPUPRIM_OP_SUM, a, b);
            reduce_call(visit, user, dt, n, REDUCE_TO_BUFFER, GPUPRIM_OP_SUM, a, NULL);
            reduce_call(visit, user, dt, n, REDUCE_DOT | REDUCE_TO_BUFFER, GPUPRIM_OP_SUM, a, b);
            free(a);
            free(b);
        }
    } else if (plan == TR_PLAN_BACKENDS) {
        static const uint64_t sizes[] = {1, 2, 31, 33, 1000, 4095, 4096, 4097, 8191, 8193, 65537, (1u << 20) + 3,
                                         (1u << 22) + 1};
        for (s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
            for (d = 0; d < TC_DTYPE_COUNT; ++d) {
                const gpuprim_dtype_t dt = tc_all_dtypes[d];
                const uint64_t n = sizes[s];
                void *a = tc_xmalloc(n * 8 + 16), *b = tc_xmalloc(n * 8 + 16);
                for (op = 0; op < 3; ++op) {
                    tr_fill_random(dt, a, n, op == GPUPRIM_OP_SUM, 0);
                    reduce_call(visit, user, dt, n, 0, (gpuprim_op_t)op, a, NULL);
                    if (op == GPUPRIM_OP_SUM) { /* dot of the input with a second one */
                        tr_fill_random(dt, b, n, 1, 0);
                        reduce_call(visit, user, dt, n, REDUCE_DOT, GPUPRIM_OP_SUM, a, b);
                    }
                }
                free(a);
                free(b);
            }
    } else {
        /* the parallel paths start at 2^15 elements */
        static const uint64_t counts[] = {1, 1000, 70001, (1u << 18) + 3, (1u << 20) + 12345};
        for (s = 0; s < sizeof counts / sizeof counts[0]; ++s)
            for (d = 0; d < 6; ++d) {
                const gpuprim_dtype_t dt = tc_all_dtypes[d];
                const uint64_t n = counts[s];
                void *a = tc_xmalloc(n * 8), *b = tc_xmalloc(n * 8);
                tc_fill(dt, a, n, TC_MODERATE);
                tc_fill(dt, b, n, TC_MODERATE);
                for (op = 0; op < 3; ++op) reduce_call(visit, user, dt, n, 0, (gpuprim_op_t)op, a, NULL);
                reduce_call(visit, user, dt, n, REDUCE_DOT, GPUPRIM_OP_SUM, a, b);
                free(a);
                free(b);
            }
    }
}

/* Integer sums and dots wrap; MIN/MAX as the header orders; float sums and
 * dots only where they have one exact answer (tr_float_sum_exact). */
static int reduce_reference(const tr_call_t *c, tr_result_t *want) {
    const gpuprim_dtype_t d = c->arg[0].dtype;
    const int dot = c->kind & REDUCE_DOT;
    const gpuprim_op_t op = dot ? GPUPRIM_OP_SUM : c->op;
    const void *second = dot ? c->arg[1].host : NULL;
    void *result = c->kind & REDUCE_TO_BUFFER ? (void *)want->out[2] : (void *)want->scalar;
    uint64_t acc = tc_identity(op, d), i;
    if (tc_is_float(d) && op == GPUPRIM_OP_SUM) {
        long double sum = 0;
        if (!tr_float_sum_exact(d, c->arg[0].host, second, 0, c->arg[0].count)) return 0;
        for (i = 0; i < c->arg[0].count; ++i) sum += tr_float_term(d, c->arg[0].host, second, i);
        tc_set(d, result, 0, tc_from_double(d, (double)sum));
        return 1;
    }
    for (i = 0; i < c->arg[0].count; ++i) {
        uint64_t x = tc_get(d, c->arg[0].host, i);
        if (dot) x = (x * tc_get(d, c->arg[1].host, i)) & tc_mask(d);
        acc = tc_apply(op, d, acc, x);
    }
    tc_set(d, result, 0, acc);
    return 1;
}

const tr_case_t tr_reduce_case = {.name = "reduce",
                                  .each = reduce_each,
                                  .invoke = reduce_invoke,
                                  .agree = reduce_agree,
                                  .reference = reduce_reference};
