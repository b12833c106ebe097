/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpuprim_reduce_by_key and gpuprim_group_by against references written from
 * the header (test_common.h: tc_reference_groups over keys by bits, in input
 * order or the stable sort order; tc_reference_reduce_at for integer sums
 * and MIN/MAX bit for bit; tc_float_sum_at_ok for float sums: exact where
 * every partial sum is, else within the accumulation bound, NaN the
 * canonical one). Keys of all 12 dtypes, values of all 12, ops SUM, MIN and
 * MAX; lengths, counts and inverse of every index dtype; the count to the
 * host, to count_out of each index dtype, or both; every optional output
 * given or not. Keys: runs of one, one long run, runs of random lengths,
 * alternating, few distinct values, sorted and reversed (group-by), NaNs of
 * both signs and payloads, +-0, +-inf, subnormals, each type's extremes.
 * Values: small integers (exact float sums, compared exactly), moderate
 * floats (a tolerance), NaNs, infinities, subnormals. Sizes 0, 1, 2, 3, 17,
 * 1000, around the CUDA tiles (2305; 4351, 4352, 4353), 12289, 65537, 2^20 + 3 and
 * ~3e6. Outputs are poisoned and sometimes longer than needed: every
 * element past those written must be as it was. Float sums are run twice
 * and must repeat bit for bit, and give the same bits on 1, 2 and 7 CPU
 * threads. Then known answers and every error, each leaving every output as
 * it was.
 */
#include "test_common.h"

static const gpuprim_dtype_t index_dtypes[4] = {GPUPRIM_DTYPE_I32, GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_I64,
                                                GPUPRIM_DTYPE_U64};
static const gpuprim_op_t ops[3] = {GPUPRIM_OP_SUM, GPUPRIM_OP_MIN, GPUPRIM_OP_MAX};

#define NO_DTYPE ((gpuprim_dtype_t)-1)

/* An output of n + extra poisoned elements, or NULL for NO_DTYPE. */
static gpuprim_buffer_t make_output(gpuprim_context_t ctx, gpuprim_dtype_t d, uint64_t count) {
    gpuprim_buffer_t b;
    if (d == NO_DTYPE) return NULL;
    b = tc_buffer(ctx, d, count);
    tc_poison(ctx, b, d, count);
    return b;
}

/* What one call asks for. */
typedef struct shape {
    gpuprim_op_t op;
    int with_keys;       /* keys_out given */
    int with_values;     /* group-by: values and results given */
    gpuprim_dtype_t ld;  /* lengths / counts dtype, or NO_DTYPE */
    gpuprim_dtype_t id;  /* group-by: inverse dtype, or NO_DTYPE */
    tc_count_sink_t sink;
    uint64_t extra;      /* outputs this much longer than the keys */
} shape_t;

static shape_t shape_of(int combo, int group_by) {
    shape_t sh;
    sh.op = ops[combo % 3];
    sh.with_keys = combo % 4 != 2;
    sh.with_values = !group_by || combo % 5 != 3;
    sh.ld = combo % 6 == 4 ? NO_DTYPE : index_dtypes[(combo / 2) % 4];
    sh.id = !group_by || combo % 7 == 5 ? NO_DTYPE : index_dtypes[(combo / 3) % 4];
    if (group_by && !sh.with_keys && !sh.with_values && sh.ld == NO_DTYPE && sh.id == NO_DTYPE)
        sh.id = GPUPRIM_DTYPE_I64;
    sh.sink = tc_count_sink_of(combo / 5);
    sh.extra = combo % 7 == 2 ? 3 : 0;
    return sh;
}

/* The results (vd) of the groups against the reference: first[g], len[g]
 * into order; elements past the groups as poisoned. */
static void check_results(gpuprim_dtype_t vd, gpuprim_op_t op, const void *values, const uint64_t *order,
                          const uint64_t *first, const uint64_t *length, uint64_t groups, const void *got,
                          uint64_t total) {
    uint64_t g, bad = 0, at = 0;
    const int float_sum = op == GPUPRIM_OP_SUM && tc_is_float(vd);
    for (g = 0; g < groups; ++g) {
        const uint64_t b = first[g], e = b + length[g], bits = tc_get(vd, got, g);
        const int ok = float_sum ? tc_float_sum_at_ok(vd, values, order, b, e, bits)
                                 : bits == tc_reference_reduce_at(op, vd, values, order, b, e);
        if (!ok && bad++ == 0) at = g;
    }
    for (g = groups; g < total; ++g)
        if (tc_get(vd, got, g) != (tc_poison_bits(vd) ^ (g & 0xF)) && bad++ == 0) at = g;
    TC_COUNT(tc.checks);
    if (bad) {
        char text[96];
        tc_fail(__FILE__, __LINE__, "results (%s %s): %llu of %llu wrong; first [%llu] = %s (group of %llu)",
                tc_op_name(op), tc_dtype_name(vd), (unsigned long long)bad, (unsigned long long)total,
                (unsigned long long)at, tc_format(vd, tc_get(vd, got, at), text, sizeof text),
                (unsigned long long)(at < groups ? length[at] : 0));
    }
}

/* Runs the call described by sh on keys (kd) and values (vd), n each, and
 * checks every output. group_by: 0 reduce-by-key, 1 group-by. */
static void check_call(gpuprim_context_t ctx, int group_by, gpuprim_dtype_t kd, const void *keys, gpuprim_dtype_t vd,
                       const void *values, uint64_t n, shape_t sh) {
    const uint64_t total = n + sh.extra;
    const int with_values = group_by ? sh.with_values : 1;
    gpuprim_buffer_t kin = tc_buffer_from(ctx, kd, keys, n);
    gpuprim_buffer_t vin = with_values ? tc_buffer_from(ctx, vd, values, n) : NULL;
    gpuprim_buffer_t kout = make_output(ctx, sh.with_keys ? kd : NO_DTYPE, total);
    gpuprim_buffer_t res = make_output(ctx, with_values ? vd : NO_DTYPE, total);
    gpuprim_buffer_t len = make_output(ctx, sh.ld, total);
    gpuprim_buffer_t inv = make_output(ctx, group_by ? sh.id : NO_DTYPE, total);
    gpuprim_buffer_t count_out = tc_make_count_out(ctx, sh.sink);
    uint64_t host_count = 0x77, *order = (uint64_t *)tc_xmalloc(n * 8 + 8);
    uint64_t *first = (uint64_t *)tc_xmalloc(n * 8 + 8), *length = (uint64_t *)tc_xmalloc(n * 8 + 8);
    uint64_t groups, i, g;
    uint64_t *count_arg = sh.sink.mode != 1 ? &host_count : NULL;
    gpuprim_status_t status;
    tc_where("%s keys %s values %s op %s n %llu keys_out %d values %d lengths %s inverse %s sink %d/%s extra %llu",
             group_by ? "group_by" : "reduce_by_key", tc_dtype_name(kd), tc_dtype_name(vd), tc_op_name(sh.op),
             (unsigned long long)n, sh.with_keys, with_values, sh.ld == NO_DTYPE ? "-" : tc_dtype_name(sh.ld),
             inv ? tc_dtype_name(sh.id) : "-", sh.sink.mode, tc_dtype_name(sh.sink.cd), (unsigned long long)sh.extra);
    if (group_by) {
        tc_reference_sort_permutation(kd, keys, n, 0, order);
        status = gpuprim_group_by(ctx, kin, vin, sh.op, kout, len, res, inv, count_arg, count_out);
    } else {
        for (i = 0; i < n; ++i) order[i] = i;
        status = gpuprim_reduce_by_key(ctx, kin, vin, sh.op, kout, res, len, count_arg, count_out);
    }
    CHECK_STATUS(status, GPUPRIM_SUCCESS);
    groups = tc_reference_groups(kd, keys, order, n, first, length);
    TC_CHECK_COUNT(ctx, sh.sink, host_count, count_out, groups);
    if (kout) {
        void *want = tc_xmalloc(total * 8 + 8);
        tc_poison_host(kd, want, total);
        for (g = 0; g < groups; ++g) tc_set(kd, want, g, tc_get(kd, keys, order[first[g]]));
        CHECK_BUFFER_EQ(ctx, kout, kd, want, total, "keys_out");
        free(want);
    }
    if (len) {
        void *want = tc_xmalloc(total * 8 + 8);
        tc_poison_host(sh.ld, want, total);
        for (g = 0; g < groups; ++g) tc_set(sh.ld, want, g, length[g]);
        CHECK_BUFFER_EQ(ctx, len, sh.ld, want, total, group_by ? "counts" : "lengths");
        free(want);
    }
    if (inv) {
        void *want = tc_xmalloc(total * 8 + 8);
        tc_poison_host(sh.id, want, total);
        for (g = 0; g < groups; ++g)
            for (i = first[g]; i < first[g] + length[g]; ++i) tc_set(sh.id, want, order[i], g);
        CHECK_BUFFER_EQ(ctx, inv, sh.id, want, total, "inverse");
        free(want);
    }
    if (res) {
        void *got = tc_download(ctx, res, vd, total);
        check_results(vd, sh.op, values, order, first, length, groups, got, total);
        if (sh.op == GPUPRIM_OP_SUM && tc_is_float(vd) && n > 0) {
            /* Again, into the same outputs: the same bits (deterministic float sums). */
            if (group_by) status = gpuprim_group_by(ctx, kin, vin, sh.op, kout, len, res, inv, &host_count, NULL);
            else status = gpuprim_reduce_by_key(ctx, kin, vin, sh.op, kout, res, len, &host_count, NULL);
            CHECK_STATUS(status, GPUPRIM_SUCCESS);
            CHECK_BUFFER_EQ(ctx, res, vd, got, total, "results of a second run (float sums repeat bit for bit)");
        }
        free(got);
        CHECK_OK(gpuprim_buffer_destroy(ctx, res));
    }
    if (kout) CHECK_OK(gpuprim_buffer_destroy(ctx, kout));
    if (len) CHECK_OK(gpuprim_buffer_destroy(ctx, len));
    if (inv) CHECK_OK(gpuprim_buffer_destroy(ctx, inv));
    if (vin) CHECK_OK(gpuprim_buffer_destroy(ctx, vin));
    CHECK_OK(gpuprim_buffer_destroy(ctx, kin));
    free(order);
    free(first);
    free(length);
}

/* ---- Inputs ------------------------------------------------------------- */

/* Keys: kind 0 runs of one (random bits), 1 one value, 2 runs of random
 * lengths up to max_run of values of pattern p, 3 alternating two values,
 * 4 sorted few values, 5 the pattern as it is (group-by: any order). */
static void fill_keys(gpuprim_dtype_t d, void *x, uint64_t n, int kind, tc_pattern_t p, uint64_t max_run) {
    uint64_t i = 0;
    switch (kind) {
    case 0: tc_fill(d, x, n, TC_RANDOM_BITS); return;
    case 1: tc_fill(d, x, n, TC_EQUAL); return;
    case 3: {
        uint64_t a[2] = {0, 0};
        tc_fill(d, a, 2, p);
        for (i = 0; i < n; ++i) tc_set(d, x, i, tc_get(d, a, i & 1));
        return;
    }
    case 4: tc_fill(d, x, n, TC_SORTED); return;
    case 5: tc_fill(d, x, n, p); return;
    default: break;
    }
    while (i < n) {
        uint64_t v = 0, run = 1 + tc_below(max_run), k;
        tc_fill(d, &v, 1, p);
        for (k = 0; k < run && i < n; ++k, ++i) tc_set(d, x, i, tc_get(d, &v, 0));
    }
}

/* Values: 0 small integers (every float sum exact), 1 moderate, 2 NaNs here
 * and there, 3 subnormals and zeros, 4 specials (MIN/MAX only: sums
 * overflow in some orders), 5 NaN heavy (MIN/MAX only). */
static void fill_values(gpuprim_dtype_t d, void *x, uint64_t n, int kind) {
    uint64_t i;
    static const tc_pattern_t patterns[6] = {TC_SMALL_RANGE, TC_MODERATE, TC_NAN_SPARSE,
                                             TC_TINY,        TC_SPECIAL,  TC_NAN_HEAVY};
    if (kind == 0) {
        for (i = 0; i < n; ++i) {
            const int64_t v = (int64_t)tc_below(17) - 8;
            tc_set(d, x, i, tc_is_float(d) ? tc_from_double(d, (double)v) : (uint64_t)v & tc_mask(d));
        }
        return;
    }
    tc_fill(d, x, n, patterns[kind]);
}

static const uint64_t sizes[] = {0, 1, 2, 3, 17, 1000, 2305, 4351, 4352, 4353, 12289, 65537};
#define SIZE_COUNT (sizeof sizes / sizeof sizes[0])
static const tc_pattern_t key_patterns[] = {TC_NAN_HEAVY, TC_ZEROS,    TC_SPECIAL, TC_SMALL_RANGE,
                                            TC_TINY,      TC_MODERATE, TC_REVERSED};
#define KEY_PATTERN_COUNT (sizeof key_patterns / sizeof key_patterns[0])

/* Every key dtype with every value dtype, each op, key shapes of each kind. */
static void test_dtypes(gpuprim_context_t ctx, int group_by) {
    size_t ki, vi;
    int combo = 0;
    for (ki = 0; ki < TC_DTYPE_COUNT; ++ki)
        for (vi = 0; vi < TC_DTYPE_COUNT; ++vi) {
            int round;
            for (round = 0; round < 3; ++round, ++combo) {
                const gpuprim_dtype_t kd = tc_all_dtypes[ki], vd = tc_all_dtypes[vi];
                const uint64_t n = sizes[(size_t)(combo * 7 + round) % SIZE_COUNT];
                const int kind = group_by ? (combo % 3 == 0 ? 5 : combo % 6) : combo % 5;
                const tc_pattern_t p = key_patterns[(size_t)combo % KEY_PATTERN_COUNT];
                shape_t sh = shape_of(combo, group_by);
                int value_kind = (combo / 3) % 6;
                void *keys = tc_xmalloc(n * 8 + 16), *values = tc_xmalloc(n * 8 + 16);
                sh.op = ops[round];
                if (sh.op == GPUPRIM_OP_SUM && value_kind >= 4) value_kind -= 4;
                fill_keys(kd, keys, n, kind, p, combo % 3 == 0 ? 3 : 40);
                fill_values(vd, values, n, value_kind);
                check_call(ctx, group_by, kd, keys, vd, values, n, sh);
                free(keys);
                free(values);
            }
        }
}

/* Large inputs: many pieces of the CPU's parallel path, many CUDA tiles. */
static void test_large(gpuprim_context_t ctx) {
    static const uint64_t counts[2] = {(1ull << 20) + 3, 3000017};
    int c;
    for (c = 0; c < 2; ++c) {
        const uint64_t n = counts[c];
        void *keys = tc_xmalloc(n * 8), *values = tc_xmalloc(n * 8);
        shape_t sh = shape_of(c, 0);
        sh.op = GPUPRIM_OP_SUM;
        sh.with_keys = 1;
        sh.ld = GPUPRIM_DTYPE_U32;
        /* reduce-by-key: runs of up to 100 of few values; exact f32 sums */
        fill_keys(GPUPRIM_DTYPE_I64, keys, n, 2, TC_SMALL_RANGE, 100);
        fill_values(GPUPRIM_DTYPE_F32, values, n, 0);
        check_call(ctx, 0, GPUPRIM_DTYPE_I64, keys, GPUPRIM_DTYPE_F32, values, n, sh);
        /* one long run of moderate f64 values */
        fill_keys(GPUPRIM_DTYPE_U16, keys, n, 1, TC_MODERATE, 1);
        fill_values(GPUPRIM_DTYPE_F64, values, n, 1);
        check_call(ctx, 0, GPUPRIM_DTYPE_U16, keys, GPUPRIM_DTYPE_F64, values, n, sh);
        /* group-by: random f32 keys of few distinct values, f16 sums; u32 keys, many groups, i64 MAX */
        sh.id = index_dtypes[c + 2];
        sh.with_values = 1;
        fill_keys(GPUPRIM_DTYPE_F32, keys, n, 5, TC_SMALL_RANGE, 1);
        fill_values(GPUPRIM_DTYPE_F16, values, n, 0);
        check_call(ctx, 1, GPUPRIM_DTYPE_F32, keys, GPUPRIM_DTYPE_F16, values, n, sh);
        {
            uint64_t i;
            for (i = 0; i < n; ++i) tc_set(GPUPRIM_DTYPE_U32, keys, i, tc_below(n / 3 + 1));
        }
        fill_values(GPUPRIM_DTYPE_I64, values, n, 1);
        sh.op = GPUPRIM_OP_MAX;
        check_call(ctx, 1, GPUPRIM_DTYPE_U32, keys, GPUPRIM_DTYPE_I64, values, n, sh);
        /* group-by: three values for three quarters of the keys, then every key its own
         * (the CPU's hashing of few distinct keys gives up late and sorts) */
        {
            uint64_t i;
            for (i = 0; i < n; ++i) tc_set(GPUPRIM_DTYPE_U64, keys, i, i < n / 4 * 3 ? i % 3 : i);
        }
        fill_values(GPUPRIM_DTYPE_F64, values, n, 0);
        sh.op = GPUPRIM_OP_SUM;
        check_call(ctx, 1, GPUPRIM_DTYPE_U64, keys, GPUPRIM_DTYPE_F64, values, n, sh);
        free(keys);
        free(values);
    }
}

/* Group-by of 4- and 8-byte keys of few distinct values past 2^15 elements
 * (the CPU hashes those instead of sorting): every such key dtype, with
 * and without values, inverse and counts, one piece and several. */
static void test_few_distinct(gpuprim_context_t ctx) {
    static const gpuprim_dtype_t key_dtypes[6] = {GPUPRIM_DTYPE_I32, GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_F32,
                                                  GPUPRIM_DTYPE_I64, GPUPRIM_DTYPE_U64, GPUPRIM_DTYPE_F64};
    static const tc_pattern_t patterns[3] = {TC_SPECIAL, TC_NAN_HEAVY, TC_SMALL_RANGE};
    static const uint64_t counts[2] = {70001, 200003};
    int k;
    for (k = 0; k < 12; ++k) {
        const gpuprim_dtype_t kd = key_dtypes[k % 6];
        const uint64_t n = counts[k / 6];
        void *keys = tc_xmalloc(n * 8), *values = tc_xmalloc(n * 8);
        shape_t sh = shape_of(k, 1);
        sh.op = ops[k % 3];
        sh.with_keys = 1;
        sh.with_values = k % 4 != 3;
        sh.ld = k % 2 ? GPUPRIM_DTYPE_U32 : NO_DTYPE;
        sh.id = k % 3 ? index_dtypes[k % 4] : NO_DTYPE;
        fill_keys(kd, keys, n, 5, patterns[k % 3], 1);
        fill_values(k % 2 ? GPUPRIM_DTYPE_F32 : GPUPRIM_DTYPE_I16, values, n, k % 2);
        check_call(ctx, 1, kd, keys, k % 2 ? GPUPRIM_DTYPE_F32 : GPUPRIM_DTYPE_I16, values, n, sh);
        free(keys);
        free(values);
    }
    /* u32 keys at the CPU's limit of 4,096 distinct (hashed), one past it, and
     * halves of 3,000 and 4,000 distinct that are 6,000 together (sorted) */
    for (k = 0; k < 3; ++k) {
        const uint64_t n = 200003;
        void *keys = tc_xmalloc(n * 8), *values = tc_xmalloc(n * 8);
        shape_t sh = shape_of(k, 1);
        uint64_t i;
        sh.op = GPUPRIM_OP_SUM;
        sh.with_keys = 1;
        sh.with_values = 1;
        sh.ld = GPUPRIM_DTYPE_I64;
        sh.id = GPUPRIM_DTYPE_U32;
        for (i = 0; i < n; ++i) {
            const uint64_t g = k == 0 ? i % 4096 : k == 1 ? i % 4097 : i < n / 2 ? i % 3000 : 2000 + i % 4000;
            tc_set(GPUPRIM_DTYPE_U32, keys, i, (g * 2654435761u) & 0xFFFFFFFFu);
        }
        fill_values(GPUPRIM_DTYPE_F64, values, n, 0);
        check_call(ctx, 1, GPUPRIM_DTYPE_U32, keys, GPUPRIM_DTYPE_F64, values, n, sh);
        free(keys);
        free(values);
    }
}

/* ---- Known answers ------------------------------------------------------ */

static void test_known_answers(gpuprim_context_t ctx) {
    /* reduce-by-key of f32 keys by bits: -0 and +0 differ, the same NaN bits join */
    const uint32_t keys_bits[8] = {0x3F800000u, 0x3F800000u, 0x80000000u, 0x00000000u,
                                   0x7FC00001u, 0x7FC00001u, 0xFFC00000u, 0x3F800000u};
    const int32_t values[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    const int32_t want_sums[6] = {3, 3, 4, 11, 7, 8};
    const uint32_t want_lengths[6] = {2, 1, 1, 2, 1, 1};
    const int32_t group_keys[7] = {5, -1, 5, 3, -1, 5, 0};
    const float group_values[7] = {1.0f, 2.0f, 3.5f, -4.0f, 0.5f, -1.0f, 9.0f};
    const int32_t want_group_keys[4] = {-1, 0, 3, 5};
    const float want_group_min[4] = {0.5f, 9.0f, -4.0f, -1.0f};
    const uint64_t want_group_counts[4] = {2, 1, 1, 3};
    const int32_t want_inverse[7] = {3, 0, 3, 2, 0, 3, 1};
    gpuprim_buffer_t k = tc_buffer_from(ctx, GPUPRIM_DTYPE_F32, keys_bits, 8);
    gpuprim_buffer_t v = tc_buffer_from(ctx, GPUPRIM_DTYPE_I32, values, 8);
    gpuprim_buffer_t kout = tc_buffer(ctx, GPUPRIM_DTYPE_F32, 8), res = tc_buffer(ctx, GPUPRIM_DTYPE_I32, 8);
    gpuprim_buffer_t len = tc_buffer(ctx, GPUPRIM_DTYPE_U32, 8);
    gpuprim_buffer_t gk = tc_buffer_from(ctx, GPUPRIM_DTYPE_I32, group_keys, 7);
    gpuprim_buffer_t gv = tc_buffer_from(ctx, GPUPRIM_DTYPE_F32, group_values, 7);
    gpuprim_buffer_t gkout = tc_buffer(ctx, GPUPRIM_DTYPE_I32, 7), gres = tc_buffer(ctx, GPUPRIM_DTYPE_F32, 7);
    gpuprim_buffer_t gcounts = tc_buffer(ctx, GPUPRIM_DTYPE_U64, 7), ginv = tc_buffer(ctx, GPUPRIM_DTYPE_I32, 7);
    uint64_t count = 0;
    uint32_t want_keys[6] = {0x3F800000u, 0x80000000u, 0x00000000u, 0x7FC00001u, 0xFFC00000u, 0x3F800000u};
    tc_where("reduce_by_key known answer");
    CHECK_OK(gpuprim_reduce_by_key(ctx, k, v, GPUPRIM_OP_SUM, kout, res, len, &count, NULL));
    CHECK(count == 6);
    {
        void *got = tc_download(ctx, kout, GPUPRIM_DTYPE_F32, 6);
        CHECK_ARRAY_EQ(GPUPRIM_DTYPE_F32, got, want_keys, 6, "keys_out");
        free(got);
    }
    CHECK_BUFFER_EQ(ctx, res, GPUPRIM_DTYPE_I32, want_sums, 6, "sums");
    CHECK_BUFFER_EQ(ctx, len, GPUPRIM_DTYPE_U32, want_lengths, 6, "lengths");

    tc_where("group_by known answer");
    CHECK_OK(gpuprim_group_by(ctx, gk, gv, GPUPRIM_OP_MIN, gkout, gcounts, gres, ginv, &count, NULL));
    CHECK(count == 4);
    CHECK_BUFFER_EQ(ctx, gkout, GPUPRIM_DTYPE_I32, want_group_keys, 4, "group keys");
    CHECK_BUFFER_EQ(ctx, gres, GPUPRIM_DTYPE_F32, want_group_min, 4, "group MIN");
    CHECK_BUFFER_EQ(ctx, gcounts, GPUPRIM_DTYPE_U64, want_group_counts, 4, "group counts");
    CHECK_BUFFER_EQ(ctx, ginv, GPUPRIM_DTYPE_I32, want_inverse, 7, "inverse");
    /* np.unique(return_counts): no values */
    CHECK_OK(gpuprim_group_by(ctx, gk, NULL, GPUPRIM_OP_SUM, gkout, gcounts, NULL, NULL, &count, NULL));
    CHECK(count == 4);
    CHECK_BUFFER_EQ(ctx, gcounts, GPUPRIM_DTYPE_U64, want_group_counts, 4, "group counts without values");

    /* f16 sums round once: 4097 ones are 4096 in f16 (f32 accumulation) */
    {
        const uint64_t n = 4097;
        uint16_t *ones = (uint16_t *)tc_xmalloc(n * 2), got = 0;
        uint8_t *same = (uint8_t *)tc_xmalloc(n);
        uint64_t i;
        gpuprim_buffer_t hk, hv, hr;
        for (i = 0; i < n; ++i) {
            ones[i] = 0x3C00u;
            same[i] = 7;
        }
        hk = tc_buffer_from(ctx, GPUPRIM_DTYPE_U8, same, n);
        hv = tc_buffer_from(ctx, GPUPRIM_DTYPE_F16, ones, n);
        hr = tc_buffer(ctx, GPUPRIM_DTYPE_F16, n);
        tc_where("f16 sum of 4097 ones");
        CHECK_OK(gpuprim_reduce_by_key(ctx, hk, hv, GPUPRIM_OP_SUM, NULL, hr, NULL, &count, NULL));
        CHECK(count == 1);
        REQUIRE_OK(gpuprim_buffer_download(ctx, hr, 0, &got, 1));
        CHECKF(got == 0x6C00u, "f16 sum 0x%04x, expected 0x6C00 (4096)", got);
        CHECK_OK(gpuprim_group_by(ctx, hk, hv, GPUPRIM_OP_SUM, NULL, NULL, hr, NULL, &count, NULL));
        REQUIRE_OK(gpuprim_buffer_download(ctx, hr, 0, &got, 1));
        CHECKF(count == 1 && got == 0x6C00u, "group-by f16 sum 0x%04x, expected 0x6C00 (4096)", got);
        CHECK_OK(gpuprim_buffer_destroy(ctx, hk));
        CHECK_OK(gpuprim_buffer_destroy(ctx, hv));
        CHECK_OK(gpuprim_buffer_destroy(ctx, hr));
        free(ones);
        free(same);
    }
    {
        gpuprim_buffer_t all[13] = {k, v, kout, res, len, gk, gv, gkout, gres, gcounts, ginv, NULL, NULL};
        int b;
        for (b = 0; all[b]; ++b) CHECK_OK(gpuprim_buffer_destroy(ctx, all[b]));
    }
}

/* ---- Errors ------------------------------------------------------------- */

static void test_errors(gpuprim_context_t ctx) {
    const int32_t data[4] = {3, 3, 2, 5};
    gpuprim_buffer_t keys = tc_buffer_from(ctx, GPUPRIM_DTYPE_I32, data, 4);
    gpuprim_buffer_t values = tc_buffer(ctx, GPUPRIM_DTYPE_F32, 4), short_values = tc_buffer(ctx, GPUPRIM_DTYPE_F32, 3);
    gpuprim_buffer_t gone = tc_buffer(ctx, GPUPRIM_DTYPE_I32, 4), foreign, big = tc_buffer(ctx, GPUPRIM_DTYPE_U8, 64);
    gpuprim_buffer_t alias_keys = NULL, alias_out = NULL;
    tc_known_t kout = tc_known(ctx, GPUPRIM_DTYPE_I32, 4), kout_short = tc_known(ctx, GPUPRIM_DTYPE_I32, 3);
    tc_known_t kout_u32 = tc_known(ctx, GPUPRIM_DTYPE_U32, 4), res = tc_known(ctx, GPUPRIM_DTYPE_F32, 4);
    tc_known_t res_short = tc_known(ctx, GPUPRIM_DTYPE_F32, 3), res_f64 = tc_known(ctx, GPUPRIM_DTYPE_F64, 4);
    tc_known_t len = tc_known(ctx, GPUPRIM_DTYPE_U32, 4), len_f32 = tc_known(ctx, GPUPRIM_DTYPE_F32, 4);
    tc_known_t len_i8 = tc_known(ctx, GPUPRIM_DTYPE_I8, 4), len_short = tc_known(ctx, GPUPRIM_DTYPE_I64, 3);
    tc_known_t inv = tc_known(ctx, GPUPRIM_DTYPE_I64, 4), inv_short = tc_known(ctx, GPUPRIM_DTYPE_I64, 3);
    tc_known_t inv_f64 = tc_known(ctx, GPUPRIM_DTYPE_F64, 4), count_out = tc_known(ctx, GPUPRIM_DTYPE_U64, 1);
    tc_known_t count_out_f32 = tc_known(ctx, GPUPRIM_DTYPE_F32, 1);
    gpuprim_buffer_t count_empty = tc_buffer(ctx, GPUPRIM_DTYPE_U32, 0);
    gpuprim_context_t other = NULL;
    uint64_t count = 77;
    int fake_context = 0;
    tc_where("reduce_by_key / group_by errors");
    CHECK_OK(gpuprim_buffer_destroy(ctx, gone));
    REQUIRE_OK(gpuprim_context_create(NULL, &other, NULL, 0));
    foreign = tc_buffer(other, GPUPRIM_DTYPE_I32, 4);

    /* context and handles */
    CHECK_STATUS(gpuprim_reduce_by_key(NULL, keys, values, GPUPRIM_OP_SUM, kout.b, res.b, NULL, &count, NULL),
                 GPUPRIM_ERROR_NULL_POINTER);
    CHECK_STATUS(gpuprim_reduce_by_key((gpuprim_context_t)&fake_context, keys, values, GPUPRIM_OP_SUM, kout.b, res.b,
                                       NULL, &count, NULL),
                 GPUPRIM_ERROR_INVALID_HANDLE);
    CHECK_STATUS(gpuprim_group_by(NULL, keys, values, GPUPRIM_OP_SUM, kout.b, NULL, res.b, NULL, &count, NULL),
                 GPUPRIM_ERROR_NULL_POINTER);
    CHECK_STATUS(gpuprim_group_by((gpuprim_context_t)&fake_context, keys, NULL, GPUPRIM_OP_SUM, kout.b, NULL, NULL,
                                  NULL, &count, NULL),
                 GPUPRIM_ERROR_INVALID_HANDLE);
    TC_EXPECT_FAIL(ctx, gpuprim_reduce_by_key(ctx, NULL, values, GPUPRIM_OP_SUM, kout.b, res.b, NULL, &count, NULL),
                   GPUPRIM_ERROR_NULL_POINTER, "'keys'");
    TC_EXPECT_FAIL(ctx, gpuprim_reduce_by_key(ctx, keys, NULL, GPUPRIM_OP_SUM, kout.b, res.b, NULL, &count, NULL),
                   GPUPRIM_ERROR_NULL_POINTER, "'values'");
    TC_EXPECT_FAIL(ctx, gpuprim_reduce_by_key(ctx, keys, values, GPUPRIM_OP_SUM, kout.b, NULL, NULL, &count, NULL),
                   GPUPRIM_ERROR_NULL_POINTER, "'results'");
    TC_EXPECT_FAIL(ctx, gpuprim_reduce_by_key(ctx, gone, values, GPUPRIM_OP_SUM, kout.b, res.b, NULL, &count, NULL),
                   GPUPRIM_ERROR_INVALID_HANDLE, "'keys'");
    TC_EXPECT_FAIL(ctx, gpuprim_reduce_by_key(ctx, keys, values, GPUPRIM_OP_SUM, foreign, res.b, NULL, &count, NULL),
                   GPUPRIM_ERROR_CONTEXT_MISMATCH, "'keys_out'");
    TC_EXPECT_FAIL(ctx, gpuprim_group_by(ctx, NULL, NULL, GPUPRIM_OP_SUM, kout.b, NULL, NULL, NULL, &count, NULL),
                   GPUPRIM_ERROR_NULL_POINTER, "'keys'");
    TC_EXPECT_FAIL(ctx, gpuprim_group_by(ctx, keys, NULL, GPUPRIM_OP_SUM, kout.b, NULL, NULL, gone, &count, NULL),
                   GPUPRIM_ERROR_INVALID_HANDLE, "'inverse'");
    TC_EXPECT_FAIL(ctx, gpuprim_group_by(ctx, foreign, NULL, GPUPRIM_OP_SUM, kout.b, NULL, NULL, NULL, &count, NULL),
                   GPUPRIM_ERROR_CONTEXT_MISMATCH, "'keys'");

    /* op */
    TC_EXPECT_FAIL(ctx,
                   gpuprim_reduce_by_key(ctx, keys, values, (gpuprim_op_t)3, kout.b, res.b, NULL, &count, NULL),
                   GPUPRIM_ERROR_INVALID_ENUM, "'op'");
    TC_EXPECT_FAIL(ctx,
                   gpuprim_group_by(ctx, keys, values, (gpuprim_op_t)-1, kout.b, NULL, res.b, NULL, &count, NULL),
                   GPUPRIM_ERROR_INVALID_ENUM, "'op'");

    /* dtypes and sizes */
    TC_EXPECT_FAIL(ctx, gpuprim_reduce_by_key(ctx, keys, values, GPUPRIM_OP_SUM, kout_u32.b, res.b, NULL, &count, NULL),
                   GPUPRIM_ERROR_DTYPE_MISMATCH, "'keys_out'");
    TC_EXPECT_FAIL(ctx, gpuprim_reduce_by_key(ctx, keys, values, GPUPRIM_OP_SUM, kout.b, res_f64.b, NULL, &count, NULL),
                   GPUPRIM_ERROR_DTYPE_MISMATCH, "'results'");
    TC_EXPECT_FAIL(ctx, gpuprim_reduce_by_key(ctx, keys, values, GPUPRIM_OP_SUM, kout.b, res.b, len_f32.b, &count, NULL),
                   GPUPRIM_ERROR_DTYPE_MISMATCH, "'lengths'");
    TC_EXPECT_FAIL(ctx, gpuprim_reduce_by_key(ctx, keys, values, GPUPRIM_OP_SUM, kout.b, res.b, len_i8.b, &count, NULL),
                   GPUPRIM_ERROR_DTYPE_MISMATCH, "'lengths'");
    TC_EXPECT_FAIL(ctx,
                   gpuprim_reduce_by_key(ctx, keys, short_values, GPUPRIM_OP_SUM, kout.b, res.b, NULL, &count, NULL),
                   GPUPRIM_ERROR_SIZE_MISMATCH, "'values'");
    TC_EXPECT_FAIL(ctx,
                   gpuprim_reduce_by_key(ctx, keys, values, GPUPRIM_OP_SUM, kout_short.b, res.b, NULL, &count, NULL),
                   GPUPRIM_ERROR_SIZE_MISMATCH, "'keys_out'");
    TC_EXPECT_FAIL(ctx,
                   gpuprim_reduce_by_key(ctx, keys, values, GPUPRIM_OP_SUM, kout.b, res_short.b, NULL, &count, NULL),
                   GPUPRIM_ERROR_SIZE_MISMATCH, "'results'");
    TC_EXPECT_FAIL(ctx,
                   gpuprim_reduce_by_key(ctx, keys, values, GPUPRIM_OP_SUM, kout.b, res.b, len_short.b, &count, NULL),
                   GPUPRIM_ERROR_SIZE_MISMATCH, "'lengths'");
    TC_EXPECT_FAIL(ctx, gpuprim_group_by(ctx, keys, values, GPUPRIM_OP_SUM, NULL, NULL, res_f64.b, NULL, &count, NULL),
                   GPUPRIM_ERROR_DTYPE_MISMATCH, "'results'");
    TC_EXPECT_FAIL(ctx, gpuprim_group_by(ctx, keys, NULL, GPUPRIM_OP_SUM, NULL, len_f32.b, NULL, NULL, &count, NULL),
                   GPUPRIM_ERROR_DTYPE_MISMATCH, "'counts'");
    TC_EXPECT_FAIL(ctx, gpuprim_group_by(ctx, keys, NULL, GPUPRIM_OP_SUM, NULL, NULL, NULL, inv_f64.b, &count, NULL),
                   GPUPRIM_ERROR_DTYPE_MISMATCH, "'inverse'");
    TC_EXPECT_FAIL(ctx, gpuprim_group_by(ctx, keys, NULL, GPUPRIM_OP_SUM, NULL, NULL, NULL, inv_short.b, &count, NULL),
                   GPUPRIM_ERROR_SIZE_MISMATCH, "'inverse'");
    TC_EXPECT_FAIL(ctx, gpuprim_group_by(ctx, keys, NULL, GPUPRIM_OP_SUM, kout_short.b, NULL, NULL, NULL, &count, NULL),
                   GPUPRIM_ERROR_SIZE_MISMATCH, "'keys_out'");
    TC_EXPECT_FAIL(ctx,
                   gpuprim_group_by(ctx, keys, short_values, GPUPRIM_OP_SUM, NULL, NULL, res.b, NULL, &count, NULL),
                   GPUPRIM_ERROR_SIZE_MISMATCH, "'values'");
    TC_EXPECT_FAIL(ctx, gpuprim_group_by(ctx, keys, values, GPUPRIM_OP_SUM, NULL, NULL, res_short.b, NULL, &count, NULL),
                   GPUPRIM_ERROR_SIZE_MISMATCH, "'results'");

    /* optional arguments */
    TC_EXPECT_FAIL(ctx, gpuprim_group_by(ctx, keys, values, GPUPRIM_OP_SUM, kout.b, NULL, NULL, NULL, &count, NULL),
                   GPUPRIM_ERROR_INVALID_ARGUMENT, "'results'");
    TC_EXPECT_FAIL(ctx, gpuprim_group_by(ctx, keys, NULL, GPUPRIM_OP_SUM, kout.b, NULL, res.b, NULL, &count, NULL),
                   GPUPRIM_ERROR_INVALID_ARGUMENT, "'values'");
    TC_EXPECT_FAIL(ctx, gpuprim_group_by(ctx, keys, NULL, GPUPRIM_OP_SUM, NULL, NULL, NULL, NULL, &count, NULL),
                   GPUPRIM_ERROR_INVALID_ARGUMENT, "all NULL");
    TC_EXPECT_FAIL(ctx, gpuprim_reduce_by_key(ctx, keys, values, GPUPRIM_OP_SUM, kout.b, res.b, NULL, NULL, NULL),
                   GPUPRIM_ERROR_INVALID_ARGUMENT, "'count_out'");
    TC_EXPECT_FAIL(ctx, gpuprim_group_by(ctx, keys, NULL, GPUPRIM_OP_SUM, kout.b, NULL, NULL, NULL, NULL, NULL),
                   GPUPRIM_ERROR_INVALID_ARGUMENT, "'count_out'");
    TC_EXPECT_FAIL(ctx,
                   gpuprim_reduce_by_key(ctx, keys, values, GPUPRIM_OP_SUM, kout.b, res.b, NULL, NULL, count_out_f32.b),
                   GPUPRIM_ERROR_DTYPE_MISMATCH, "'count_out'");
    TC_EXPECT_FAIL(ctx,
                   gpuprim_group_by(ctx, keys, NULL, GPUPRIM_OP_SUM, kout.b, NULL, NULL, NULL, NULL, count_empty),
                   GPUPRIM_ERROR_SIZE_MISMATCH, "'count_out'");

    /* overlaps: outputs with inputs and each other */
    TC_EXPECT_FAIL(ctx, gpuprim_reduce_by_key(ctx, keys, values, GPUPRIM_OP_SUM, keys, res.b, NULL, &count, NULL),
                   GPUPRIM_ERROR_INVALID_ARGUMENT, "overlap");
    TC_EXPECT_FAIL(ctx, gpuprim_reduce_by_key(ctx, keys, values, GPUPRIM_OP_SUM, kout.b, values, NULL, &count, NULL),
                   GPUPRIM_ERROR_INVALID_ARGUMENT, "overlap");
    TC_EXPECT_FAIL(ctx,
                   gpuprim_reduce_by_key(ctx, keys, values, GPUPRIM_OP_SUM, kout.b, res.b, NULL, &count, kout.b),
                   GPUPRIM_ERROR_INVALID_ARGUMENT, "overlap");
    TC_EXPECT_FAIL(ctx, gpuprim_group_by(ctx, keys, NULL, GPUPRIM_OP_SUM, kout.b, NULL, NULL, keys, &count, NULL),
                   GPUPRIM_ERROR_INVALID_ARGUMENT, "overlap");
    {
        /* i32 views of one block: keys_out and lengths / inverse overlapping */
        alias_keys = tc_view(ctx, big, GPUPRIM_DTYPE_I32, 0, 8);
        alias_out = tc_view(ctx, big, GPUPRIM_DTYPE_I32, 4, 8);
        TC_EXPECT_FAIL(ctx,
                       gpuprim_reduce_by_key(ctx, keys, values, GPUPRIM_OP_SUM, alias_keys, res.b, alias_out, &count,
                                             NULL),
                       GPUPRIM_ERROR_INVALID_ARGUMENT, "overlap");
        TC_EXPECT_FAIL(ctx,
                       gpuprim_group_by(ctx, keys, NULL, GPUPRIM_OP_SUM, alias_keys, NULL, NULL, alias_out, &count,
                                        NULL),
                       GPUPRIM_ERROR_INVALID_ARGUMENT, "overlap");
        TC_EXPECT_FAIL(ctx,
                       gpuprim_group_by(ctx, alias_keys, NULL, GPUPRIM_OP_SUM, NULL, alias_out, NULL, NULL, &count,
                                        NULL),
                       GPUPRIM_ERROR_INVALID_ARGUMENT, "overlap");
    }
    CHECKF(count == 77, "*count written by a failed call: %llu", (unsigned long long)count);
    TC_CHECK_UNCHANGED(ctx, kout);
    TC_CHECK_UNCHANGED(ctx, kout_short);
    TC_CHECK_UNCHANGED(ctx, kout_u32);
    TC_CHECK_UNCHANGED(ctx, res);
    TC_CHECK_UNCHANGED(ctx, res_short);
    TC_CHECK_UNCHANGED(ctx, res_f64);
    TC_CHECK_UNCHANGED(ctx, len);
    TC_CHECK_UNCHANGED(ctx, len_f32);
    TC_CHECK_UNCHANGED(ctx, len_i8);
    TC_CHECK_UNCHANGED(ctx, len_short);
    TC_CHECK_UNCHANGED(ctx, inv);
    TC_CHECK_UNCHANGED(ctx, inv_short);
    TC_CHECK_UNCHANGED(ctx, inv_f64);
    TC_CHECK_UNCHANGED(ctx, count_out);
    TC_CHECK_UNCHANGED(ctx, count_out_f32);
    {
        const int32_t still[4] = {3, 3, 2, 5};
        CHECK_BUFFER_EQ(ctx, keys, GPUPRIM_DTYPE_I32, still, 4, "keys after failed calls");
    }
    tc_free_known(ctx, kout);
    tc_free_known(ctx, kout_short);
    tc_free_known(ctx, kout_u32);
    tc_free_known(ctx, res);
    tc_free_known(ctx, res_short);
    tc_free_known(ctx, res_f64);
    tc_free_known(ctx, len);
    tc_free_known(ctx, len_f32);
    tc_free_known(ctx, len_i8);
    tc_free_known(ctx, len_short);
    tc_free_known(ctx, inv);
    tc_free_known(ctx, inv_short);
    tc_free_known(ctx, inv_f64);
    tc_free_known(ctx, count_out);
    tc_free_known(ctx, count_out_f32);
    CHECK_OK(gpuprim_buffer_destroy(ctx, alias_keys));
    CHECK_OK(gpuprim_buffer_destroy(ctx, alias_out));
    CHECK_OK(gpuprim_buffer_destroy(ctx, big));
    CHECK_OK(gpuprim_buffer_destroy(ctx, count_empty));
    CHECK_OK(gpuprim_buffer_destroy(ctx, keys));
    CHECK_OK(gpuprim_buffer_destroy(ctx, values));
    CHECK_OK(gpuprim_buffer_destroy(ctx, short_values));
    CHECK_OK(gpuprim_context_destroy(other));
}

/* CPU backend (docs/HOW_IT_RUNS.md): a run's float SUM is gpuprim_reduce()'s of
 * its values, bit for bit (the same leaves and tree), at every length. */
static void test_cpu_run_sum_is_reduce(gpuprim_context_t ctx) {
    static const uint64_t lengths[] = {1, 2, 3, 5, 16, 17, 31, 32, 33, 64, 511, 512, 513, 1025, 40000};
    size_t f, l;
    if (tc_backend_is_cuda(ctx)) return;
    for (f = 0; f < TC_FLOAT_DTYPE_COUNT; ++f)
        for (l = 0; l < sizeof lengths / sizeof lengths[0]; ++l) {
            const gpuprim_dtype_t d = tc_float_dtypes[f];
            const uint64_t n = lengths[l];
            void *values = tc_xmalloc(n * 8), *zeros = tc_xmalloc(n * 8);
            uint64_t count = 0, reduced = 0, by_key = 0;
            gpuprim_buffer_t k, v, r;
            memset(zeros, 0, n * 8);
            tc_fill(d, values, n, l % 3 == 0 ? TC_TINY : TC_MODERATE);
            k = tc_buffer_from(ctx, GPUPRIM_DTYPE_U8, zeros, n);
            v = tc_buffer_from(ctx, d, values, n);
            r = tc_buffer(ctx, d, n);
            tc_where("run sum of %llu %s against gpuprim_reduce", (unsigned long long)n, tc_dtype_name(d));
            CHECK_OK(gpuprim_reduce(ctx, GPUPRIM_OP_SUM, v, &reduced));
            CHECK_OK(gpuprim_reduce_by_key(ctx, k, v, GPUPRIM_OP_SUM, NULL, r, NULL, &count, NULL));
            REQUIRE_OK(gpuprim_buffer_download(ctx, r, 0, &by_key, 1));
            CHECKF(count == 1 && by_key == reduced, "%llu runs; run sum bits 0x%llx, reduce 0x%llx",
                   (unsigned long long)count, (unsigned long long)by_key, (unsigned long long)reduced);
            CHECK_OK(gpuprim_buffer_destroy(ctx, k));
            CHECK_OK(gpuprim_buffer_destroy(ctx, v));
            CHECK_OK(gpuprim_buffer_destroy(ctx, r));
            free(values);
            free(zeros);
        }
}

/* ---- Threads ------------------------------------------------------------ */

/* Every output of reduce-by-key and group-by of moderate f32 / f64 values
 * (sums with rounding) on CPU contexts of 1, 2 and 7 threads: the same
 * bits. */
static void test_cpu_threads(void) {
    static const int threads[3] = {1, 2, 7};
    const uint64_t n = 300007;
    void *keys = tc_xmalloc(n * 8), *group_keys = tc_xmalloc(n * 8), *values = tc_xmalloc(n * 8);
    void *first[4] = {NULL, NULL, NULL, NULL};
    uint64_t counts[4] = {0, 0, 0, 0};
    int t, call;
    fill_keys(GPUPRIM_DTYPE_U32, keys, n, 2, TC_SMALL_RANGE, 300);
    fill_keys(GPUPRIM_DTYPE_F64, group_keys, n, 5, TC_SMALL_RANGE, 1);
    fill_values(GPUPRIM_DTYPE_F32, values, n, 1);
    for (t = 0; t < 3; ++t) {
        gpuprim_context_options_t options;
        gpuprim_context_t cpu = NULL;
        gpuprim_buffer_t k, g, v, res, inv;
        gpuprim_context_options_init(&options);
        options.backend = GPUPRIM_BACKEND_CPU;
        options.cpu_threads = threads[t];
        REQUIRE_OK(gpuprim_context_create(&options, &cpu, NULL, 0));
        tc_where("reduce_by_key / group_by on %d CPU threads", threads[t]);
        k = tc_buffer_from(cpu, GPUPRIM_DTYPE_U32, keys, n);
        g = tc_buffer_from(cpu, GPUPRIM_DTYPE_F64, group_keys, n);
        v = tc_buffer_from(cpu, GPUPRIM_DTYPE_F32, values, n);
        res = tc_buffer(cpu, GPUPRIM_DTYPE_F32, n);
        inv = tc_buffer(cpu, GPUPRIM_DTYPE_U32, n);
        for (call = 0; call < 4; ++call) {
            uint64_t count = 0;
            void *got;
            tc_poison(cpu, res, GPUPRIM_DTYPE_F32, n);
            if (call == 0) CHECK_OK(gpuprim_reduce_by_key(cpu, k, v, GPUPRIM_OP_SUM, NULL, res, NULL, &count, NULL));
            else if (call == 1)
                CHECK_OK(gpuprim_group_by(cpu, g, v, GPUPRIM_OP_SUM, NULL, NULL, res, NULL, &count, NULL));
            else if (call == 2)
                CHECK_OK(gpuprim_group_by(cpu, k, v, GPUPRIM_OP_MAX, NULL, NULL, res, NULL, &count, NULL));
            else CHECK_OK(gpuprim_group_by(cpu, g, NULL, GPUPRIM_OP_SUM, NULL, NULL, NULL, inv, &count, NULL));
            got = call == 3 ? tc_download(cpu, inv, GPUPRIM_DTYPE_U32, n) : tc_download(cpu, res, GPUPRIM_DTYPE_F32, n);
            if (t == 0) {
                first[call] = got;
                counts[call] = count;
                continue;
            }
            CHECKF(count == counts[call], "call %d: %llu groups, %llu on 1 thread", call, (unsigned long long)count,
                   (unsigned long long)counts[call]);
            CHECK_ARRAY_EQ(GPUPRIM_DTYPE_F32, got, first[call], n, "outputs against 1 thread");
            free(got);
        }
        CHECK_OK(gpuprim_buffer_destroy(cpu, k));
        CHECK_OK(gpuprim_buffer_destroy(cpu, g));
        CHECK_OK(gpuprim_buffer_destroy(cpu, v));
        CHECK_OK(gpuprim_buffer_destroy(cpu, res));
        CHECK_OK(gpuprim_buffer_destroy(cpu, inv));
        CHECK_OK(gpuprim_context_destroy(cpu));
    }
    for (call = 0; call < 4; ++call) free(first[call]);
    free(keys);
    free(group_keys);
    free(values);
}

int main(void) {
    gpuprim_context_t ctx = tc_init("test_reduce_by_key");
    test_known_answers(ctx);
    test_errors(ctx);
    test_dtypes(ctx, 0);
    test_dtypes(ctx, 1);
    test_large(ctx);
    test_few_distinct(ctx);
    test_cpu_run_sum_is_reduce(ctx);
    test_cpu_threads();
    return tc_finish();
}
