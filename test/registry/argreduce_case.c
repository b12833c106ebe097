/* SPDX-License-Identifier: Apache-2.0 */
/* gpuprim_argreduce (argmin with op MIN, argmax with op MAX): arg 0 the
 * input; the position is the host scalar (8 bytes). Exact on every backend
 * (one position is the answer), so results agree bit for bit. */
#include "registry.h"

const tr_case_t tr_argreduce_case;

static gpuprim_status_t argreduce_invoke(const tr_call_t *c, gpuprim_context_t ctx, gpuprim_buffer_t const *b,
                                         const gpuprim_segments_t *segments, void *scalar) {
    uint64_t index;
    gpuprim_status_t status;
    (void)segments;
    memcpy(&index, scalar, sizeof index); /* a failed call leaves it, so the scalar stays as it was */
    status = gpuprim_argreduce(ctx, c->op, b[0], &index);
    memcpy(scalar, &index, sizeof index);
    return status;
}

static void argreduce_call(tr_visit_t visit, void *user, gpuprim_dtype_t d, uint64_t n, gpuprim_op_t op, const void *x,
                           gpuprim_status_t expect, const char *what) {
    tr_call_t c;
    tr_call_init(&c, &tr_argreduce_case);
    c.op = op;
    c.scalar_size = sizeof(uint64_t);
    c.expect = expect;
    tr_set_arg(&c, 0, d, n, x, 0, 0);
    tr_call_label(&c, "arg%s %s n=%llu %s", tc_op_name(op), tc_dtype_name(d), (unsigned long long)n, what);
    visit(&c, user);
    tr_call_free(&c);
}

/* Both ops on random bits (floats: NaNs of every kind now and then), on
 * few distinct values (ties everywhere: the first position must win) and,
 * for floats, on moderate values (no NaN: the extreme decides). */
static void argreduce_inputs(tr_visit_t visit, void *user, gpuprim_dtype_t d, uint64_t n) {
    static const char *const names[3] = {"random bits", "few values", "moderate"};
    void *x = tc_xmalloc(n * 8 + 16);
    int kind, o;
    for (kind = 0; kind < (tc_is_float(d) ? 3 : 2); ++kind) {
        tr_fill_random(d, x, n, kind == 2, kind == 1);
        for (o = GPUPRIM_OP_MIN; o <= GPUPRIM_OP_MAX; ++o)
            argreduce_call(visit, user, d, n, (gpuprim_op_t)o, x, GPUPRIM_SUCCESS, names[kind]);
    }
    free(x);
}

static void argreduce_each(tr_plan_t plan, tr_visit_t visit, void *user) {
    size_t s, d;
    if (plan == TR_PLAN_SMALL) {
        uint32_t a[100];
        uint16_t h[100];
        tc_fill(GPUPRIM_DTYPE_U32, a, 100, TC_MODERATE);
        tc_fill(GPUPRIM_DTYPE_F16, h, 100, TC_NAN_SPARSE);
        argreduce_call(visit, user, GPUPRIM_DTYPE_U32, 100, GPUPRIM_OP_MIN, a, GPUPRIM_SUCCESS, "");
        argreduce_call(visit, user, GPUPRIM_DTYPE_F16, 100, GPUPRIM_OP_MAX, h, GPUPRIM_SUCCESS, "");
    } else if (plan == TR_PLAN_CONCURRENCY) {
        /* both ops on every dtype, both zeros among the values; no elements: INVALID_ARGUMENT */
        for (d = 0; d < TC_DTYPE_COUNT; ++d) {
            const uint64_t n = tr_concurrency_count(d);
            void *x = tc_xmalloc(n * 8 + 16);
            int o;
            tr_fill_small(tc_all_dtypes[d], x, n, 1);
            for (o = GPUPRIM_OP_MIN; o <= GPUPRIM_OP_MAX; ++o)
                argreduce_call(visit, user, tc_all_dtypes[d], n, (gpuprim_op_t)o, x,
                               n ? GPUPRIM_SUCCESS : GPUPRIM_ERROR_INVALID_ARGUMENT, "small integers");
            free(x);
        }
    } else if (plan == TR_PLAN_BACKENDS) {
        /* around the CUDA vectors, tiles (4096 4-byte elements; 2 vectors a thread for 1-byte ones), the
           single-block limit (64 KiB) and multi-block grids */
        static const uint64_t sizes[] = {1,    2,    31,    33,    1000,  4095,  4096,           4097,
                                         8191, 8193, 16383, 16385, 32769, 65537, (1u << 20) + 3, (1u << 22) + 1};
        const float one = 1.0f;
        for (s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
            for (d = 0; d < TC_DTYPE_COUNT; ++d) argreduce_inputs(visit, user, tc_all_dtypes[d], sizes[s]);
        /* calls that must fail alike everywhere: an empty input, op SUM */
        argreduce_call(visit, user, GPUPRIM_DTYPE_F32, 0, GPUPRIM_OP_MIN, &one, GPUPRIM_ERROR_INVALID_ARGUMENT,
                       "empty");
        argreduce_call(visit, user, GPUPRIM_DTYPE_F32, 1, GPUPRIM_OP_SUM, &one, GPUPRIM_ERROR_INVALID_ARGUMENT,
                       "op SUM");
    } else {
        /* past the CPU's parallel threshold (2^15) and its pieces (2^14) */
        static const uint64_t counts[] = {1, 1000, 70001, (1u << 18) + 3, (1u << 20) + 12345};
        for (s = 0; s < sizeof counts / sizeof counts[0]; ++s)
            for (d = 0; d < TC_DTYPE_COUNT; ++d) argreduce_inputs(visit, user, tc_all_dtypes[d], counts[s]);
    }
}

static int argreduce_reference(const tr_call_t *c, tr_result_t *want) {
    uint64_t index;
    if (c->expect != GPUPRIM_SUCCESS) return 1; /* the scalar as it was */
    index = tc_reference_argreduce(c->op, c->arg[0].dtype, c->arg[0].host, c->arg[0].count);
    memcpy(want->scalar, &index, sizeof index);
    return 1;
}

const tr_case_t tr_argreduce_case = {.name = "argreduce",
                                     .each = argreduce_each,
                                     .invoke = argreduce_invoke,
                                     .reference = argreduce_reference,
                                     .host_results_only = 1};
