/* SPDX-License-Identifier: Apache-2.0 */
/* gpuprim_reduce_by_key and gpuprim_group_by (c->kind: RBK_GROUP_BY for
 * group-by, plus RBK_HOST_COUNT where the count goes to the host scalar, 8
 * bytes; c->op the op). Arguments: 0 keys, 1 values, 2 keys_out,
 * 3 results, 4 lengths (reduce-by-key) / counts (group-by), 5 inverse
 * (group-by), 6 count_out (two elements: the second must stay as it was);
 * every output poisoned and read back. Float sums have one exact answer
 * where tr_float_sum_exact says so for every group: the backend and
 * concurrency plans draw such values (tr_fill_small, no -0.0), so results
 * agree bit for bit; the thread plan draws any moderate floats, whose sums
 * must still repeat bit for bit on every thread count. */
#include "registry.h"

#define RBK_GROUP_BY 1
#define RBK_HOST_COUNT 2

const tr_case_t tr_reduce_by_key_case;

static gpuprim_status_t rbk_invoke(const tr_call_t *c, gpuprim_context_t ctx, gpuprim_buffer_t const *b,
                                   const gpuprim_segments_t *segments, void *scalar) {
    uint64_t count = 0, *host = (c->kind & RBK_HOST_COUNT) ? &count : NULL;
    gpuprim_status_t status;
    (void)segments;
    if (host) memcpy(&count, scalar, sizeof count); /* the runner's: a failed call leaves it as it was */
    if (c->kind & RBK_GROUP_BY) status = gpuprim_group_by(ctx, b[0], b[1], c->op, b[2], b[4], b[3], b[5], host, b[6]);
    else status = gpuprim_reduce_by_key(ctx, b[0], b[1], c->op, b[2], b[3], b[4], host, b[6]);
    if (host) memcpy(scalar, &count, sizeof count);
    return status;
}

/* Runs of equal keys (1 to max_run long) of few or any values. */
static void rbk_fill_runs(gpuprim_dtype_t d, void *x, uint64_t n, uint64_t max_run, int few) {
    uint64_t i = 0;
    while (i < n) {
        uint64_t v = 0, len = 1 + tr_random() % max_run, k;
        tr_fill_random(d, &v, 1, 0, few);
        for (k = 0; k < len && i < n; ++k, ++i) tc_set(d, x, i, tc_get(d, &v, 0));
    }
}

/* One call. variant picks the outputs given, their dtypes and the count's
 * sink. values: 0 exact (tr_fill_small), 1 any moderate (float sums round). */
static void rbk_call(tr_visit_t visit, void *user, int group_by, gpuprim_dtype_t kd, gpuprim_dtype_t vd, uint64_t n,
                     gpuprim_op_t op, unsigned variant, int small, int rounding) {
    static const gpuprim_dtype_t index_dtypes[4] = {GPUPRIM_DTYPE_I32, GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_I64,
                                                    GPUPRIM_DTYPE_U64};
    const int sink = (int)(variant % 3); /* 0 host, 1 count_out, 2 both */
    const int with_values = !group_by || variant % 5 != 3;
    void *keys = tc_xmalloc(n * 8 + 16), *values = tc_xmalloc(n * 8 + 16);
    uint64_t i;
    tr_call_t c;
    tr_call_init(&c, &tr_reduce_by_key_case);
    c.kind = (group_by ? RBK_GROUP_BY : 0) | (sink != 1 ? RBK_HOST_COUNT : 0);
    c.op = op;
    if (c.kind & RBK_HOST_COUNT) c.scalar_size = 8;
    if (small) {
        tr_fill_small(kd, keys, n, 1);
        if (!group_by)
            for (i = 1; i < n; i += 3) tc_set(kd, keys, i, tc_get(kd, keys, i - 1)); /* some runs */
    } else if (group_by) {
        tr_fill_random(kd, keys, n, 0, (int)(variant & 1));
    } else {
        rbk_fill_runs(kd, keys, n, variant % 4 == 0 ? 2 : 40, (int)(variant & 1));
    }
    if (rounding && op == GPUPRIM_OP_SUM) tr_fill_random(vd, values, n, 1, 0);
    else if (op == GPUPRIM_OP_SUM || small) tr_fill_small(vd, values, n, op != GPUPRIM_OP_SUM);
    else tr_fill_random(vd, values, n, 0, (int)(variant & 2));
    tr_set_arg(&c, 0, kd, n, keys, 0, 0);
    if (with_values) {
        tr_set_arg(&c, 1, vd, n, values, 0, 0);
        tr_set_arg(&c, 3, vd, n, NULL, 0x5A, 1);
    }
    if (variant % 4 != 2) tr_set_arg(&c, 2, kd, n, NULL, 0x3C, 1);
    if (variant % 6 != 4) tr_set_arg(&c, 4, index_dtypes[variant % 4], n, NULL, 0x4B, 1);
    if (group_by && (variant % 7 != 5 || !with_values)) tr_set_arg(&c, 5, index_dtypes[(variant / 4) % 4], n, NULL, 0x2D, 1);
    if (sink != 0) tr_set_arg(&c, 6, index_dtypes[(variant / 2) % 4], 2, NULL, 0x69, 1);
    tr_call_label(&c, "%s keys %s values %s %s n=%llu, variant %u", group_by ? "group_by" : "reduce_by_key",
                  tc_dtype_name(kd), with_values ? tc_dtype_name(vd) : "-", tc_op_name(op), (unsigned long long)n,
                  variant);
    visit(&c, user);
    tr_call_free(&c);
    free(keys);
    free(values);
}

static const gpuprim_op_t rbk_ops[3] = {GPUPRIM_OP_SUM, GPUPRIM_OP_MIN, GPUPRIM_OP_MAX};

static void rbk_each(tr_plan_t plan, tr_visit_t visit, void *user) {
    size_t s, d;
    unsigned i = 0;
    int call;
    if (plan == TR_PLAN_SMALL) {
        rbk_call(visit, user, 0, GPUPRIM_DTYPE_F32, GPUPRIM_DTYPE_I32, 100, GPUPRIM_OP_SUM, 3, 0, 0);
        rbk_call(visit, user, 1, GPUPRIM_DTYPE_I64, GPUPRIM_DTYPE_F64, 100, GPUPRIM_OP_MIN, 4, 0, 0);
        rbk_call(visit, user, 1, GPUPRIM_DTYPE_U8, GPUPRIM_DTYPE_F16, 100, GPUPRIM_OP_SUM, 3, 0, 0);
    } else if (plan == TR_PLAN_CONCURRENCY) {
        /* both entry points on every key dtype, the value dtypes and ops along the way */
        for (d = 0; d < TC_DTYPE_COUNT; ++d)
            for (call = 0; call < 2; ++call, ++i)
                rbk_call(visit, user, call, tc_all_dtypes[d], tc_all_dtypes[(d * 5 + (size_t)call) % TC_DTYPE_COUNT],
                         tr_concurrency_count(d + (size_t)call * 3), rbk_ops[i % 3], i, 1, 0);
    } else if (plan == TR_PLAN_BACKENDS) {
        /* around the CUDA tiles: empty, one, a tile's edges, many tiles */
        static const uint64_t sizes[] = {0, 1, 2305, 4351, 4353, 65537, (1u << 20) + 3};
        for (s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
            for (d = 0; d < TC_DTYPE_COUNT; ++d)
                for (call = 0; call < 2; ++call, ++i) {
                    if (sizes[s] > 100000 && i % 3 != 0) continue; /* keep the plan short */
                    rbk_call(visit, user, call, tc_all_dtypes[d], tc_all_dtypes[(d * 7 + i) % TC_DTYPE_COUNT],
                             sizes[s], rbk_ops[i % 3], i, 0, 0);
                }
    } else {
        /* past the CPU's pieces (2^16 elements); float sums that round */
        static const uint64_t sizes[] = {1000, 70001, (1u << 18) + 3};
        for (s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
            for (d = 0; d < TC_DTYPE_COUNT; ++d)
                for (call = 0; call < 2; ++call, ++i)
                    rbk_call(visit, user, call, tc_all_dtypes[d], tc_all_dtypes[(d * 7 + i) % TC_DTYPE_COUNT],
                             sizes[s], rbk_ops[i % 3], i, 0, 1);
    }
}

/* Group g's result: op over its values in order, or 0 (no one exact
 * answer) for a float sum tr_float_sum_exact does not vouch for. */
static int rbk_group_result(const tr_call_t *c, const uint64_t *order, uint64_t begin, uint64_t end, uint64_t *bits) {
    const gpuprim_dtype_t vd = c->arg[1].dtype;
    const void *values = c->arg[1].host;
    if (c->op == GPUPRIM_OP_SUM && tc_is_float(vd)) {
        unsigned char *group = (unsigned char *)tc_xmalloc((end - begin) * 8 + 8);
        long double sum = 0;
        uint64_t i;
        int exact;
        for (i = begin; i < end; ++i) tc_set(vd, group, i - begin, tc_get(vd, values, order[i]));
        exact = tr_float_sum_exact(vd, group, NULL, 0, end - begin);
        for (i = 0; exact && i < end - begin; ++i) sum += tr_float_term(vd, group, NULL, i);
        free(group);
        if (!exact) return 0;
        *bits = tc_from_double(vd, (double)sum);
        return 1;
    }
    *bits = tc_reference_reduce_at(c->op, vd, values, order, begin, end);
    return 1;
}

static int rbk_reference(const tr_call_t *c, tr_result_t *want) {
    const gpuprim_dtype_t kd = c->arg[0].dtype;
    const uint64_t n = c->arg[0].count;
    const void *keys = c->arg[0].host;
    uint64_t *order = (uint64_t *)tc_xmalloc((n + 1) * sizeof(uint64_t));
    uint64_t *first = (uint64_t *)tc_xmalloc((n + 1) * sizeof(uint64_t));
    uint64_t *length = (uint64_t *)tc_xmalloc((n + 1) * sizeof(uint64_t));
    uint64_t groups = 0, g, i;
    int exact = 1;
    if (c->expect == GPUPRIM_SUCCESS) {
        if (c->kind & RBK_GROUP_BY) tc_reference_sort_permutation(kd, keys, n, 0, order);
        else
            for (i = 0; i < n; ++i) order[i] = i;
        groups = tc_reference_groups(kd, keys, order, n, first, length);
        for (g = 0; g < groups; ++g) {
            const uint64_t b = first[g], e = b + length[g];
            if (c->arg[2].used) tc_set(kd, want->out[2], g, tc_get(kd, keys, order[b]));
            if (c->arg[3].used) {
                uint64_t bits = 0;
                if (exact && rbk_group_result(c, order, b, e, &bits)) tc_set(c->arg[3].dtype, want->out[3], g, bits);
                else exact = 0;
            }
            if (c->arg[4].used) tc_set(c->arg[4].dtype, want->out[4], g, length[g]);
            if (c->arg[5].used)
                for (i = b; i < e; ++i) tc_set(c->arg[5].dtype, want->out[5], order[i], g);
        }
        if (c->arg[6].used) tc_set(c->arg[6].dtype, want->out[6], 0, groups);
        if (c->kind & RBK_HOST_COUNT) memcpy(want->scalar, &groups, sizeof groups);
    }
    free(order);
    free(first);
    free(length);
    return exact;
}

const tr_case_t tr_reduce_by_key_case = {.name = "reduce_by_key",
                                         .each = rbk_each,
                                         .invoke = rbk_invoke,
                                         .reference = rbk_reference};
