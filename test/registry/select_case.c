/* SPDX-License-Identifier: Apache-2.0 */
/* gpuprim_select, gpuprim_partition, gpuprim_unique and
 * gpuprim_run_length_encode (c->kind: SELECT_* below, plus SELECT_HOST_COUNT
 * where the count goes to the host scalar, 8 bytes). Arguments: 0 the input
 * (keys), 1 values, 2 KEEP_FLAGGED's flags or, for a comparison, the two
 * scalars (their host contents; the buffer made for them is not passed),
 * 3 output / keys_out, 4 values_out, 5 positions / starts, 6 count_out (two
 * elements: the second must stay as it was), 7 lengths; every output
 * poisoned and read back. c->k: the keep kind. The outputs are one exact
 * answer, so results agree bit for bit on every backend. */
#include "registry.h"

#define SELECT_SELECT 0
#define SELECT_PARTITION 1
#define SELECT_UNIQUE 2
#define SELECT_RUNS 3             /* run-length encode, every run */
#define SELECT_RUNS_NON_TRIVIAL 4 /* run-length encode, runs of 2 or more */
#define SELECT_CALL_MASK 7
#define SELECT_HOST_COUNT 8

const tr_case_t tr_select_case;

static const char *const select_call_names[5] = {"select", "partition", "unique", "run-length encode",
                                                 "run-length encode (non-trivial)"};
static const char *const keep_kind_names[10] = {"flagged", "less",      "less_equal", "greater", "greater_equal",
                                                "equal",   "not_equal", "in_range",   "nan",     "not_nan"};

static gpuprim_status_t select_invoke(const tr_call_t *c, gpuprim_context_t ctx, gpuprim_buffer_t const *b,
                                      const gpuprim_segments_t *segments, void *scalar) {
    const int call = c->kind & SELECT_CALL_MASK;
    uint64_t count = 0, *host = (c->kind & SELECT_HOST_COUNT) ? &count : NULL;
    gpuprim_predicate_t predicate;
    gpuprim_status_t status;
    (void)segments;
    if (host) memcpy(&count, scalar, sizeof count); /* the runner's: a failed call leaves it as it was */
    memset(&predicate, 0, sizeof predicate);
    predicate.kind = (int32_t)c->k;
    if (c->k == GPUPRIM_KEEP_FLAGGED) {
        predicate.flags = b[2];
    } else if (c->arg[2].used) {
        predicate.scalar = c->arg[2].host;
        predicate.scalar_high = (const char *)c->arg[2].host + tc_size(c->arg[2].dtype);
    }
    switch (call) {
    case SELECT_SELECT: status = gpuprim_select(ctx, b[0], b[1], &predicate, b[3], b[4], b[5], host, b[6]); break;
    case SELECT_PARTITION: status = gpuprim_partition(ctx, b[0], b[1], &predicate, b[3], b[4], host, b[6]); break;
    case SELECT_UNIQUE: status = gpuprim_unique(ctx, b[0], b[1], b[3], b[4], host, b[6]); break;
    default:
        status = gpuprim_run_length_encode(ctx, b[0], call == SELECT_RUNS ? GPUPRIM_RUNS_ALL : GPUPRIM_RUNS_NON_TRIVIAL,
                                           b[3], b[5], b[7], host, b[6]);
        break;
    }
    if (host) memcpy(scalar, &count, sizeof count);
    return status;
}

/* Runs of equal elements (1 to max_run long) of few or any values. */
static void select_fill_runs(gpuprim_dtype_t d, void *x, uint64_t n, uint64_t max_run, int few) {
    uint64_t i = 0;
    while (i < n) {
        uint64_t v = 0, len = 1 + tr_random() % max_run, k;
        tr_fill_random(d, &v, 1, 0, few);
        for (k = 0; k < len && i < n; ++k, ++i) tc_set(d, x, i, tc_get(d, &v, 0));
    }
}

/* One call. variant picks the outputs given, their dtypes and the count's sink. small: values of
 * tr_fill_small (the concurrency plan). */
static void select_call(tr_visit_t visit, void *user, int call, gpuprim_dtype_t d, uint64_t n, int keep,
                        unsigned variant, int small) {
    static const gpuprim_dtype_t index_dtypes[4] = {GPUPRIM_DTYPE_I32, GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_I64,
                                                    GPUPRIM_DTYPE_U64};
    static const gpuprim_dtype_t value_dtypes[4] = {GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_U8, GPUPRIM_DTYPE_F64,
                                                    GPUPRIM_DTYPE_I16};
    static const gpuprim_dtype_t flag_dtypes[4] = {GPUPRIM_DTYPE_U8, GPUPRIM_DTYPE_I16, GPUPRIM_DTYPE_U32,
                                                   GPUPRIM_DTYPE_I64};
    const int runs = call >= SELECT_UNIQUE;
    const int sink = (int)(variant % 3); /* 0 host, 1 count_out, 2 both */
    const gpuprim_dtype_t vd = (variant / 3) % 3 == 0 ? TR_NO_DTYPE : value_dtypes[(variant / 9) % 4];
    void *x = tc_xmalloc(n * 8 + 16), *values = NULL, *flags = NULL;
    unsigned char scalars[16];
    uint64_t i;
    tr_call_t c;
    tr_call_init(&c, &tr_select_case);
    c.kind = call | (sink != 1 ? SELECT_HOST_COUNT : 0);
    c.k = runs ? 0 : (uint64_t)keep;
    if (c.kind & SELECT_HOST_COUNT) c.scalar_size = 8;
    if (runs) {
        if (small) {
            tr_fill_small(d, x, n, 1);
            for (i = 1; i < n; i += 3) tc_set(d, x, i, tc_get(d, x, i - 1)); /* some runs */
        } else {
            select_fill_runs(d, x, n, variant % 4 == 0 ? 2 : 9, (int)(variant & 1));
        }
    } else if (small) {
        tr_fill_small(d, x, n, 1);
    } else {
        tr_fill_random(d, x, n, 0, (int)(variant & 1));
    }
    tr_set_arg(&c, 0, d, n, x, 0, 0);
    if (vd != TR_NO_DTYPE && call != SELECT_RUNS && call != SELECT_RUNS_NON_TRIVIAL) {
        values = tc_xmalloc(n * 8 + 16);
        tr_fill_random(vd, values, n, 0, 0);
        tr_set_arg(&c, 1, vd, n, values, 0, 0);
        tr_set_arg(&c, 4, vd, n, NULL, 0x77, 1);
    }
    if (!runs && keep == GPUPRIM_KEEP_FLAGGED) {
        const gpuprim_dtype_t fd = flag_dtypes[variant % 4];
        flags = tc_xmalloc(n * 8 + 16);
        tr_fill_random(fd, flags, n, 0, 0);
        for (i = 0; i < n; ++i)
            if (tr_random() & 1) tc_set(fd, flags, i, 0);
        tr_set_arg(&c, 2, fd, n, flags, 0, 0);
    } else if (!runs) {
        /* the scalars: elements of the input where there are some, else random */
        tr_fill_random(d, scalars, 2, 0, 0);
        if (n > 0) tc_set(d, scalars, 0, tc_get(d, x, tr_random() % n));
        if (n > 0 && (variant & 2)) tc_set(d, scalars, 1, tc_get(d, x, tr_random() % n));
        tr_set_arg(&c, 2, d, 2, scalars, 0, 0);
    }
    /* the outputs: select may leave out output, partition never; run-length encode any two of three */
    if (call == SELECT_PARTITION || call == SELECT_UNIQUE || variant % 5 != 4) tr_set_arg(&c, 3, d, n, NULL, 0x5A, 1);
    if (call == SELECT_SELECT && (variant % 4 != 1 || (variant % 5 == 4 && vd == TR_NO_DTYPE)))
        tr_set_arg(&c, 5, index_dtypes[variant % 4], n, NULL, 0x3C, 1);
    if (call == SELECT_RUNS || call == SELECT_RUNS_NON_TRIVIAL) {
        if (variant % 4 != 1) tr_set_arg(&c, 5, index_dtypes[variant % 4], n, NULL, 0x3C, 1);
        if (variant % 4 != 2) tr_set_arg(&c, 7, index_dtypes[(variant / 4) % 4], n, NULL, 0x4B, 1);
    }
    if (sink != 0) tr_set_arg(&c, 6, index_dtypes[(variant / 2) % 4], 2, NULL, 0x69, 1);
    tr_call_label(&c, "%s %s n=%llu%s%s%s%s, variant %u", select_call_names[call], tc_dtype_name(d),
                  (unsigned long long)n, runs ? "" : " keep kind ", runs ? "" : keep_kind_names[keep],
                  vd != TR_NO_DTYPE && c.arg[1].used ? " values " : "",
                  vd != TR_NO_DTYPE && c.arg[1].used ? tc_dtype_name(vd) : "", variant);
    visit(&c, user);
    tr_call_free(&c);
    free(x);
    free(values);
    free(flags);
}

static void select_each(tr_plan_t plan, tr_visit_t visit, void *user) {
    size_t s, d;
    unsigned i = 0;
    int call;
    if (plan == TR_PLAN_SMALL) {
        select_call(visit, user, SELECT_SELECT, GPUPRIM_DTYPE_F32, 100, GPUPRIM_KEEP_LESS, 3, 0);
        select_call(visit, user, SELECT_PARTITION, GPUPRIM_DTYPE_I32, 100, GPUPRIM_KEEP_FLAGGED, 4, 0);
        select_call(visit, user, SELECT_UNIQUE, GPUPRIM_DTYPE_U16, 100, 0, 5, 0);
        select_call(visit, user, SELECT_RUNS, GPUPRIM_DTYPE_F64, 100, 0, 6, 0);
        select_call(visit, user, SELECT_RUNS_NON_TRIVIAL, GPUPRIM_DTYPE_I8, 100, 0, 7, 0);
    } else if (plan == TR_PLAN_CONCURRENCY) {
        /* every entry point on every dtype, every keep kind along the way */
        for (d = 0; d < TC_DTYPE_COUNT; ++d)
            for (call = 0; call < 5; ++call, ++i)
                select_call(visit, user, call, tc_all_dtypes[d], tr_concurrency_count(d + (size_t)call * 3),
                            (int)(i % 10), i, 1);
    } else if (plan == TR_PLAN_BACKENDS) {
        /* around the CUDA tiles: empty, one, a tile's edges, many tiles */
        static const uint64_t sizes[] = {0, 1, 4095, 4096, 4097, 65537, (1u << 20) + 3};
        for (s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
            for (d = 0; d < TC_DTYPE_COUNT; ++d)
                for (call = 0; call < 5; ++call, ++i) {
                    if (sizes[s] > 100000 && i % 3 != 0) continue; /* keep the plan short */
                    select_call(visit, user, call, tc_all_dtypes[d], sizes[s], (int)(i % 10), i, 0);
                }
    } else {
        /* past the CPU's pieces (2^16 elements) */
        static const uint64_t sizes[] = {1000, 70001, (1u << 18) + 3};
        for (s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
            for (d = 0; d < TC_DTYPE_COUNT; ++d)
                for (call = 0; call < 5; ++call, ++i)
                    select_call(visit, user, call, tc_all_dtypes[d], sizes[s], (int)(i % 10), i, 0);
    }
}

static int select_reference(const tr_call_t *c, tr_result_t *want) {
    const int call = c->kind & SELECT_CALL_MASK;
    const gpuprim_dtype_t d = c->arg[0].dtype;
    const uint64_t n = c->arg[0].count;
    const void *x = c->arg[0].host;
    uint64_t *order = (uint64_t *)tc_xmalloc((n + 1) * sizeof(uint64_t));
    uint64_t *lengths = (uint64_t *)tc_xmalloc((n + 1) * sizeof(uint64_t));
    uint64_t count, written, j;
    if (c->expect != GPUPRIM_SUCCESS) {
        free(order);
        free(lengths);
        return 1;
    }
    if (call <= SELECT_PARTITION) {
        unsigned char *keep = (unsigned char *)tc_xmalloc(n + 1);
        const int flagged = c->k == GPUPRIM_KEEP_FLAGGED;
        const gpuprim_dtype_t sd = c->arg[2].dtype;
        count = tc_reference_keep(d, x, n, (int)c->k, flagged ? 0 : tc_get(sd, c->arg[2].host, 0),
                                  flagged ? 0 : tc_get(sd, c->arg[2].host, 1), sd, flagged ? c->arg[2].host : NULL,
                                  keep);
        (void)tc_reference_select_permutation(keep, n, call == SELECT_PARTITION, order);
        written = call == SELECT_PARTITION ? n : count;
        free(keep);
    } else {
        count = tc_reference_runs(d, x, n, call == SELECT_RUNS_NON_TRIVIAL, order, lengths);
        written = count;
    }
    for (j = 0; j < written; ++j) {
        if (c->arg[3].used) tc_set(d, want->out[3], j, tc_get(d, x, order[j]));
        if (c->arg[4].used) tc_set(c->arg[4].dtype, want->out[4], j, tc_get(c->arg[1].dtype, c->arg[1].host, order[j]));
        if (c->arg[5].used) tc_set(c->arg[5].dtype, want->out[5], j, order[j]);
        if (c->arg[7].used) tc_set(c->arg[7].dtype, want->out[7], j, lengths[j]);
    }
    if (c->arg[6].used) tc_set(c->arg[6].dtype, want->out[6], 0, count);
    if (c->kind & SELECT_HOST_COUNT) memcpy(want->scalar, &count, sizeof count);
    free(order);
    free(lengths);
    return 1;
}

const tr_case_t tr_select_case = {.name = "select",
                                  .each = select_each,
                                  .invoke = select_invoke,
                                  .reference = select_reference,
                                  .host_args = 1u << 2};
