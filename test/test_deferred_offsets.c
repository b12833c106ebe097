/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The deferred CSR offsets check (experimental, issue 39):
 * gpuprim_context_set_offsets_check, gpuprim_context_check_deferred,
 * segments->max_segment_length, and gpuprim_context_synchronize reporting a
 * deferred failure, on the backend the default context picks
 * (GPUPRIM_BACKEND=cpu|cuda).
 *
 * - Valid offsets: every segmented call on CSR offsets (sort of keys, of
 *   pairs with 4- and 8-byte keys and values, of a bit range; argsort with
 *   U32 and U64 indices; reduce SUM, MIN, MAX; scan inclusive, exclusive and
 *   in place; top-k with k small and k past some segments' lengths, with and
 *   without keys_out) gives in DEFERRED mode bitwise what it gives in WAIT
 *   mode, and the cheap ones match a reference here. Offsets of every index
 *   dtype; shapes that reach each CUDA path: 4 segments of 8 (one sorting
 *   network), ~2000 segments of 0..300 keys with and without
 *   max_segment_length (device-counted classes / the internal wait),
 *   segments up to 10000 keys (top-k's long path), 100000 segments (a
 *   multi-block check), offsets that do not start at 0 or do not reach n,
 *   empty segments, n = 0 and no segments.
 * - Bad offsets in DEFERRED mode (negative, past the end, decreasing; at
 *   index 0, at the last index, deep in 100001 and in 1500001 offsets (more
 *   CUDA check blocks than a block has threads); the lowest of
 *   several; a bad offset ranking before an earlier too-long segment), a
 *   segment longer than max_segment_length, and a segment whose last index
 *   does not fit I32 / U32 indices: the call returns SUCCESS and writes
 *   nothing (a reduce's identities included), check_deferred reports
 *   INVALID_ARGUMENT naming the entry point, the call's number and the fault,
 *   then SUCCESS; in WAIT mode the same call fails at once with the same
 *   fault text. Two or three bad calls: the first reported, "N more";
 *   synchronize reports too; the failure is kept across a switch to WAIT;
 *   calls on uniform rows are not numbered; a valid call after a bad one is
 *   right.
 * - struct_size 32 (0.3.0's gpuprim_segments_t) still accepted, its
 *   max_segment_length not read; the promise equal to the longest segment
 *   accepted; set_offsets_check with a bad mode is INVALID_ENUM and changes
 *   nothing; NULL and destroyed contexts; a context destroyed with a failure
 *   kept.
 */
#include "test_common.h"

static gpuprim_context_t ctx;
/* The calls on CSR offsets made on ctx: the deferred report numbers them
 * (from 1, both modes). */
static uint64_t csr_calls;

static void destroy(gpuprim_buffer_t b) {
    if (b) CHECK_OK(gpuprim_buffer_destroy(ctx, b));
}

static void set_mode(gpuprim_offsets_check_t mode) { REQUIRE_OK(gpuprim_context_set_offsets_check(ctx, mode)); }

static const gpuprim_dtype_t offset_dtypes[4] = {GPUPRIM_DTYPE_I32, GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_I64,
                                                 GPUPRIM_DTYPE_U64};

/* ------------------------------------------------------------------------ */
/* The calls                                                                */
/* ------------------------------------------------------------------------ */

typedef enum call_kind {
    K_SORT_KEYS = 0,  /* I32 keys, ascending */
    K_SORT_PAIRS,     /* I32 keys, U32 values, descending */
    K_SORT_PAIRS64,   /* F64 keys, U64 values (the smaller sorting network) */
    K_SORT_BITS,      /* I32 keys bits [2, 9), U32 values, descending */
    K_ARGSORT_U32,    /* I32 keys, no keys_out, U32 indices */
    K_ARGSORT_U64,    /* F64 keys, keys_out, U64 indices, descending */
    K_REDUCE_SUM,     /* I32 */
    K_REDUCE_MIN,
    K_REDUCE_MAX,
    K_SCAN_INCLUSIVE, /* SUM */
    K_SCAN_EXCLUSIVE, /* MAX */
    K_SCAN_IN_PLACE,  /* SUM exclusive, output = input */
    K_TOPK_SMALL,     /* k = 3, descending, keys_out and U32 indices */
    K_TOPK_BIG,       /* k = big_k (past some segments' lengths), ascending, I64 indices only */
    K_TOPK_KEYS,      /* k = 7, F64 keys, descending, keys_out only */
    K_COUNT
} call_kind_t;

static const char *const kind_names[K_COUNT] = {
    "sort keys",   "sort pairs",  "sort pairs F64/U64", "sort bit range", "argsort U32", "argsort U64",
    "reduce SUM",  "reduce MIN",  "reduce MAX",         "scan inclusive", "scan exclusive", "scan in place",
    "top-k small", "top-k big k", "top-k keys only"};

static const char *entry_of(call_kind_t k) {
    if (k <= K_SORT_BITS) return "gpuprim_segmented_sort";
    if (k <= K_ARGSORT_U64) return "gpuprim_segmented_argsort";
    if (k <= K_REDUCE_MAX) return "gpuprim_segmented_reduce";
    if (k <= K_SCAN_IN_PLACE) return "gpuprim_segmented_scan";
    return "gpuprim_segmented_topk";
}

#define ALL_KINDS ((1u << K_COUNT) - 1)

/* The inputs every call reads: n of each. */
typedef struct inputs {
    uint64_t n;
    int32_t *keys;
    double *fkeys;
    uint32_t *values;
    uint64_t *values64;
    gpuprim_buffer_t kin, fin, vin, vin64;
} inputs_t;

static inputs_t inputs_make(uint64_t n) {
    inputs_t in;
    uint64_t i;
    in.n = n;
    in.keys = (int32_t *)tc_xmalloc(n * 4);
    in.fkeys = (double *)tc_xmalloc(n * 8);
    in.values = (uint32_t *)tc_xmalloc(n * 4);
    in.values64 = (uint64_t *)tc_xmalloc(n * 8);
    for (i = 0; i < n; ++i) {
        in.keys[i] = (int32_t)tc_below(101) - 50; /* ties */
        in.fkeys[i] = ((double)tc_below(401) - 200.0) / 4.0;
        if (in.fkeys[i] == 0.0 && tc_below(2)) in.fkeys[i] = -0.0;
        in.values[i] = (uint32_t)i;
        in.values64[i] = tc_rand();
    }
    in.kin = tc_buffer_from(ctx, GPUPRIM_DTYPE_I32, in.keys, n);
    in.fin = tc_buffer_from(ctx, GPUPRIM_DTYPE_F64, in.fkeys, n);
    in.vin = tc_buffer_from(ctx, GPUPRIM_DTYPE_U32, in.values, n);
    in.vin64 = tc_buffer_from(ctx, GPUPRIM_DTYPE_U64, in.values64, n);
    return in;
}

static void inputs_free(inputs_t *in) {
    destroy(in->kin);
    destroy(in->fin);
    destroy(in->vin);
    destroy(in->vin64);
    free(in->keys);
    free(in->fkeys);
    free(in->values);
    free(in->values64);
}

/* A call's outputs (up to two) and what they held before it. */
typedef struct outs {
    gpuprim_buffer_t b[2];
    gpuprim_dtype_t d[2];
    uint64_t n[2];
    void *host[2];
    uint64_t k; /* top-k's k */
} outs_t;

static void out_add(outs_t *o, int i, gpuprim_dtype_t d, uint64_t n, const void *initial) {
    o->d[i] = d;
    o->n[i] = n;
    o->host[i] = tc_xmalloc(n * 8); /* 8, the widest (GCC's -Wstringop-overflow, as in tc_known) */
    if (initial) memcpy(o->host[i], initial, n * tc_size(d));
    else tc_poison_host(d, o->host[i], n);
    o->b[i] = n ? tc_buffer_from(ctx, d, o->host[i], n) : tc_buffer(ctx, d, 0);
}

static uint64_t topk_k(call_kind_t k, uint64_t big_k) {
    return k == K_TOPK_SMALL ? 3 : k == K_TOPK_BIG ? big_k : 7;
}

static outs_t outs_make(call_kind_t k, const inputs_t *in, uint64_t nseg, uint64_t big_k) {
    const uint64_t n = in->n;
    outs_t o;
    memset(&o, 0, sizeof o);
    switch (k) {
    case K_SORT_KEYS: out_add(&o, 0, GPUPRIM_DTYPE_I32, n, NULL); break;
    case K_SORT_PAIRS:
    case K_SORT_BITS:
        out_add(&o, 0, GPUPRIM_DTYPE_I32, n, NULL);
        out_add(&o, 1, GPUPRIM_DTYPE_U32, n, NULL);
        break;
    case K_SORT_PAIRS64:
        out_add(&o, 0, GPUPRIM_DTYPE_F64, n, NULL);
        out_add(&o, 1, GPUPRIM_DTYPE_U64, n, NULL);
        break;
    case K_ARGSORT_U32: out_add(&o, 1, GPUPRIM_DTYPE_U32, n, NULL); break;
    case K_ARGSORT_U64:
        out_add(&o, 0, GPUPRIM_DTYPE_F64, n, NULL);
        out_add(&o, 1, GPUPRIM_DTYPE_U64, n, NULL);
        break;
    case K_REDUCE_SUM:
    case K_REDUCE_MIN:
    case K_REDUCE_MAX: out_add(&o, 0, GPUPRIM_DTYPE_I32, nseg, NULL); break;
    case K_SCAN_INCLUSIVE:
    case K_SCAN_EXCLUSIVE: out_add(&o, 0, GPUPRIM_DTYPE_I32, n, NULL); break;
    case K_SCAN_IN_PLACE: out_add(&o, 0, GPUPRIM_DTYPE_I32, n, in->keys); break;
    case K_TOPK_SMALL:
    case K_TOPK_BIG:
    case K_TOPK_KEYS:
        o.k = topk_k(k, big_k);
        if (k != K_TOPK_BIG)
            out_add(&o, 0, k == K_TOPK_KEYS ? GPUPRIM_DTYPE_F64 : GPUPRIM_DTYPE_I32, nseg * o.k, NULL);
        if (k != K_TOPK_KEYS)
            out_add(&o, 1, k == K_TOPK_SMALL ? GPUPRIM_DTYPE_U32 : GPUPRIM_DTYPE_I64, nseg * o.k, NULL);
        break;
    case K_COUNT: break;
    }
    return o;
}

static void outs_free(outs_t *o) {
    int i;
    for (i = 0; i < 2; ++i) {
        destroy(o->b[i]);
        free(o->host[i]);
        o->b[i] = NULL;
        o->host[i] = NULL;
    }
}

/* Runs call k; counts it among the calls on offsets when it has them. */
static gpuprim_status_t do_call(call_kind_t k, const gpuprim_segments_t *seg, const inputs_t *in, const outs_t *o) {
    gpuprim_sort_options_t options;
    gpuprim_sort_options_init(&options);
    if (seg->offsets) ++csr_calls;
    switch (k) {
    case K_SORT_KEYS: return gpuprim_segmented_sort(ctx, seg, in->kin, NULL, o->b[0], NULL, &options);
    case K_SORT_PAIRS:
        options.order = GPUPRIM_ORDER_DESCENDING;
        return gpuprim_segmented_sort(ctx, seg, in->kin, in->vin, o->b[0], o->b[1], &options);
    case K_SORT_PAIRS64: return gpuprim_segmented_sort(ctx, seg, in->fin, in->vin64, o->b[0], o->b[1], &options);
    case K_SORT_BITS:
        options.order = GPUPRIM_ORDER_DESCENDING;
        options.begin_bit = 2;
        options.end_bit = 9;
        return gpuprim_segmented_sort(ctx, seg, in->kin, in->vin, o->b[0], o->b[1], &options);
    case K_ARGSORT_U32: return gpuprim_segmented_argsort(ctx, seg, in->kin, NULL, o->b[1], &options);
    case K_ARGSORT_U64:
        options.order = GPUPRIM_ORDER_DESCENDING;
        return gpuprim_segmented_argsort(ctx, seg, in->fin, o->b[0], o->b[1], &options);
    case K_REDUCE_SUM: return gpuprim_segmented_reduce(ctx, GPUPRIM_OP_SUM, seg, in->kin, o->b[0]);
    case K_REDUCE_MIN: return gpuprim_segmented_reduce(ctx, GPUPRIM_OP_MIN, seg, in->kin, o->b[0]);
    case K_REDUCE_MAX: return gpuprim_segmented_reduce(ctx, GPUPRIM_OP_MAX, seg, in->kin, o->b[0]);
    case K_SCAN_INCLUSIVE:
        return gpuprim_segmented_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, seg, in->kin, o->b[0]);
    case K_SCAN_EXCLUSIVE:
        return gpuprim_segmented_scan(ctx, GPUPRIM_OP_MAX, GPUPRIM_SCAN_EXCLUSIVE, seg, in->kin, o->b[0]);
    case K_SCAN_IN_PLACE:
        return gpuprim_segmented_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_EXCLUSIVE, seg, o->b[0], o->b[0]);
    case K_TOPK_SMALL:
        return gpuprim_segmented_topk(ctx, seg, in->kin, o->k, GPUPRIM_ORDER_DESCENDING, o->b[0], o->b[1]);
    case K_TOPK_BIG: return gpuprim_segmented_topk(ctx, seg, in->kin, o->k, GPUPRIM_ORDER_ASCENDING, NULL, o->b[1]);
    case K_TOPK_KEYS:
        return gpuprim_segmented_topk(ctx, seg, in->fin, o->k, GPUPRIM_ORDER_DESCENDING, o->b[0], NULL);
    case K_COUNT: break;
    }
    return GPUPRIM_ERROR_INTERNAL;
}

/* The outputs now, against `want` (another call's outputs) or, with want
 * NULL, against what they held before the call. */
static void outs_compare(const outs_t *o, const outs_t *want, const char *what) {
    int i;
    for (i = 0; i < 2; ++i) {
        void *got;
        if (!o->b[i]) continue;
        got = tc_download(ctx, o->b[i], o->d[i], o->n[i]);
        if (want) {
            void *other = tc_download(ctx, want->b[i], want->d[i], want->n[i]);
            CHECK_ARRAY_EQ(o->d[i], got, other, o->n[i], what);
            free(other);
        } else {
            CHECK_ARRAY_EQ(o->d[i], got, o->host[i], o->n[i], what);
        }
        free(got);
    }
}

/* The reference of the cheap calls (sort keys, reduce, inclusive scan,
 * top-k's keys) over layout L; the others are held to WAIT mode's. */
static void check_reference(call_kind_t k, const tc_layout_t *L, const inputs_t *in, const outs_t *o) {
    uint64_t s, i;
    void *want, *got;
    uint64_t *perm;
    if (k != K_SORT_KEYS && k != K_REDUCE_SUM && k != K_REDUCE_MIN && k != K_REDUCE_MAX && k != K_SCAN_INCLUSIVE &&
        k != K_TOPK_SMALL)
        return;
    want = tc_xmalloc(o->n[0] * 4);
    memcpy(want, o->host[0], o->n[0] * 4);
    perm = (uint64_t *)tc_xmalloc((L->longest ? L->longest : 1) * sizeof *perm);
    for (s = 0; s < L->nseg; ++s) {
        const uint64_t b = L->off[s], len = L->off[s + 1] - b;
        const int32_t *x = in->keys + b;
        if (k == K_SORT_KEYS || k == K_TOPK_SMALL) {
            const int descending = k == K_TOPK_SMALL;
            tc_reference_sort_permutation(GPUPRIM_DTYPE_I32, x, len, descending, perm);
            if (k == K_SORT_KEYS)
                for (i = 0; i < len; ++i) tc_set(GPUPRIM_DTYPE_I32, want, b + i, (uint32_t)x[perm[i]]);
            else
                for (i = 0; i < len && i < o->k; ++i) tc_set(GPUPRIM_DTYPE_I32, want, s * o->k + i, (uint32_t)x[perm[i]]);
        } else if (k == K_SCAN_INCLUSIVE) {
            uint64_t acc = 0;
            for (i = 0; i < len; ++i) {
                acc = tc_apply(GPUPRIM_OP_SUM, GPUPRIM_DTYPE_I32, acc, (uint32_t)x[i]);
                tc_set(GPUPRIM_DTYPE_I32, want, b + i, acc);
            }
        } else {
            const gpuprim_op_t op =
                k == K_REDUCE_SUM ? GPUPRIM_OP_SUM : k == K_REDUCE_MIN ? GPUPRIM_OP_MIN : GPUPRIM_OP_MAX;
            uint64_t acc = tc_identity(op, GPUPRIM_DTYPE_I32);
            for (i = 0; i < len; ++i) acc = tc_apply(op, GPUPRIM_DTYPE_I32, acc, (uint32_t)x[i]);
            tc_set(GPUPRIM_DTYPE_I32, want, s, acc);
        }
    }
    got = tc_download(ctx, o->b[0], o->d[0], o->n[0]);
    CHECK_ARRAY_EQ(o->d[0], got, want, o->n[0], "against the reference");
    free(got);
    free(want);
    free(perm);
}

/* ------------------------------------------------------------------------ */
/* Valid offsets: DEFERRED gives what WAIT gives                           */
/* ------------------------------------------------------------------------ */

/* Every call over the layout, in WAIT mode and then (on fresh outputs, all
 * calls before one check_deferred) in DEFERRED mode, with the promise
 * max_segment_length = promise (0: none). */
static void run_shape(const tc_layout_t *L, uint64_t promise, uint64_t big_k) {
    inputs_t in = inputs_make(L->n);
    gpuprim_buffer_t offsets;
    gpuprim_segments_t seg = tc_make_segments(ctx, L, &offsets);
    outs_t wait[K_COUNT], deferred[K_COUNT];
    int k;
    seg.max_segment_length = promise;
    tc_where("%s, offsets %s, n %llu, %llu segments, longest %llu, max_segment_length %llu: WAIT", L->name,
             tc_dtype_name(L->od), (unsigned long long)L->n, (unsigned long long)L->nseg,
             (unsigned long long)L->longest, (unsigned long long)promise);
    set_mode(GPUPRIM_OFFSETS_CHECK_WAIT);
    for (k = 0; k < K_COUNT; ++k) {
        wait[k] = outs_make((call_kind_t)k, &in, L->nseg, big_k);
        CHECKF(do_call((call_kind_t)k, &seg, &in, &wait[k]) == GPUPRIM_SUCCESS, "WAIT %s: %s", kind_names[k],
               gpuprim_context_last_error(ctx));
    }
    tc_where("%s, offsets %s, n %llu, %llu segments, longest %llu, max_segment_length %llu: DEFERRED", L->name,
             tc_dtype_name(L->od), (unsigned long long)L->n, (unsigned long long)L->nseg,
             (unsigned long long)L->longest, (unsigned long long)promise);
    set_mode(GPUPRIM_OFFSETS_CHECK_DEFERRED);
    for (k = 0; k < K_COUNT; ++k) {
        deferred[k] = outs_make((call_kind_t)k, &in, L->nseg, big_k);
        CHECKF(do_call((call_kind_t)k, &seg, &in, &deferred[k]) == GPUPRIM_SUCCESS, "DEFERRED %s: %s",
               kind_names[k], gpuprim_context_last_error(ctx));
    }
    CHECK_OK(gpuprim_context_check_deferred(ctx));
    for (k = 0; k < K_COUNT; ++k) {
        tc_where("%s, offsets %s, n %llu, max_segment_length %llu: %s, DEFERRED against WAIT", L->name,
                 tc_dtype_name(L->od), (unsigned long long)L->n, (unsigned long long)promise, kind_names[k]);
        outs_compare(&deferred[k], &wait[k], kind_names[k]);
        check_reference((call_kind_t)k, L, &in, &deferred[k]);
        outs_free(&wait[k]);
        outs_free(&deferred[k]);
    }
    set_mode(GPUPRIM_OFFSETS_CHECK_WAIT);
    destroy(offsets);
    inputs_free(&in);
}

static void test_valid_offsets(void) {
    uint64_t *lengths = (uint64_t *)tc_xmalloc(100000 * sizeof *lengths);
    uint64_t i;
    int o;
    tc_layout_t L;
    /* tiny: 4 segments of 8 (one sorting network), every offsets dtype */
    for (o = 0; o < 4; ++o) {
        for (i = 0; i < 4; ++i) lengths[i] = 8;
        L = tc_layout_csr("4 segments of 8", lengths, 4, 0, 0, offset_dtypes[o]);
        run_shape(&L, 0, 12);
        run_shape(&L, 8, 5);
        tc_layout_free(&L);
    }
    /* ~2000 segments of 0..300 keys: with a promise <= 4096 (CUDA: classes
       counted on the device), a loose one, and none (CUDA waits inside) */
    for (i = 0; i < 2000; ++i) lengths[i] = tc_below(301);
    lengths[tc_below(2000)] = 300;
    L = tc_layout_csr("2000 segments of 0..300", lengths, 2000, 0, 0, GPUPRIM_DTYPE_I32);
    run_shape(&L, 300, 200);
    L.od = GPUPRIM_DTYPE_U64;
    run_shape(&L, 4096, 200);
    L.od = GPUPRIM_DTYPE_U32;
    run_shape(&L, 0, 200);
    tc_layout_free(&L);
    /* segments up to 10000 keys (top-k's long path past 8192), some empty;
       k = 5000 past most of them */
    for (i = 0; i < 12; ++i) lengths[i] = i % 4 == 3 ? 0 : tc_below(10001);
    lengths[5] = 10000;
    lengths[8] = 8193;
    L = tc_layout_csr("segments up to 10000", lengths, 12, 3, 4, GPUPRIM_DTYPE_I64);
    run_shape(&L, 10000, 5000);
    L.od = GPUPRIM_DTYPE_I32;
    run_shape(&L, 0, 100);
    tc_layout_free(&L);
    /* 100000 segments (a check over many blocks) */
    for (i = 0; i < 100000; ++i) lengths[i] = tc_below(4);
    L = tc_layout_csr("100000 segments of 0..3", lengths, 100000, 0, 0, GPUPRIM_DTYPE_U32);
    run_shape(&L, 3, 5);
    L.od = GPUPRIM_DTYPE_I64;
    run_shape(&L, 0, 2);
    tc_layout_free(&L);
    /* around the CUDA in-kernel check (offsets arrays of up to 1024 entries,
       scan/reduce over up to 2^16 elements): 1023 and 1024 segments, short
       and long enough to pass 2^16 elements */
    for (i = 0; i < 1024; ++i) lengths[i] = tc_below(41);
    L = tc_layout_csr("1023 segments of 0..40", lengths, 1023, 0, 0, GPUPRIM_DTYPE_I32);
    run_shape(&L, 40, 20);
    L.od = GPUPRIM_DTYPE_U64;
    run_shape(&L, 0, 3);
    tc_layout_free(&L);
    L = tc_layout_csr("1024 segments of 0..40", lengths, 1024, 2, 1, GPUPRIM_DTYPE_U32);
    run_shape(&L, 40, 20);
    tc_layout_free(&L);
    for (i = 0; i < 1023; ++i) lengths[i] = tc_below(201);
    L = tc_layout_csr("1023 segments of 0..200 (past 2^16 elements)", lengths, 1023, 0, 0, GPUPRIM_DTYPE_I64);
    run_shape(&L, 200, 20);
    tc_layout_free(&L);
    /* offsets that start past 0 and end before n */
    for (o = 0; o < 4; ++o) {
        for (i = 0; i < 50; ++i) lengths[i] = tc_below(40);
        L = tc_layout_csr("lead 17 and tail 9", lengths, 50, 17, 9, offset_dtypes[o]);
        run_shape(&L, o % 2 ? 40 : 0, 30);
        tc_layout_free(&L);
    }
    /* empty segments only, with elements around them */
    for (i = 0; i < 30; ++i) lengths[i] = 0;
    L = tc_layout_csr("30 empty segments", lengths, 30, 5, 5, GPUPRIM_DTYPE_U64);
    run_shape(&L, 0, 2);
    run_shape(&L, 1, 2);
    tc_layout_free(&L);
    /* n = 0 */
    L = tc_layout_csr("n = 0, 3 empty segments", lengths, 3, 0, 0, GPUPRIM_DTYPE_I32);
    run_shape(&L, 0, 2);
    tc_layout_free(&L);
    /* no segments (one offset) */
    L = tc_layout_csr("no segments", lengths, 0, 4, 3, GPUPRIM_DTYPE_I64);
    run_shape(&L, 0, 2);
    tc_layout_free(&L);
    free(lengths);
}

/* ------------------------------------------------------------------------ */
/* Bad offsets                                                              */
/* ------------------------------------------------------------------------ */

/* An offset as the library words it: in its own type. */
static void offset_text(char *out, size_t cap, gpuprim_dtype_t od, int64_t value) {
    if (tc_is_signed(od)) snprintf(out, cap, "%lld", (long long)value);
    else snprintf(out, cap, "%llu", (unsigned long long)((uint64_t)value & tc_mask(od)));
}

/* The fault text of the first bad offset in values[0..count) (n data
 * elements), or "" when none. */
static void bad_offset_text(char *out, size_t cap, gpuprim_dtype_t od, const int64_t *values, uint64_t count,
                            uint64_t n) {
    uint64_t i;
    out[0] = '\0';
    for (i = 0; i < count; ++i) {
        const int64_t v = tc_is_signed(od) ? values[i] : (int64_t)((uint64_t)values[i] & tc_mask(od));
        const int64_t p = i ? (tc_is_signed(od) ? values[i - 1] : (int64_t)((uint64_t)values[i - 1] & tc_mask(od)))
                            : 0;
        char vt[32], pt[32];
        offset_text(vt, sizeof vt, od, v);
        offset_text(pt, sizeof pt, od, p);
        if (tc_is_signed(od) && v < 0) {
            snprintf(out, cap, "segment offsets: offsets[%llu] = %s is negative", (unsigned long long)i, vt);
            return;
        }
        if ((uint64_t)v > n) {
            snprintf(out, cap, "segment offsets: offsets[%llu] = %s is past the end of the data (%llu elements)",
                     (unsigned long long)i, vt, (unsigned long long)n);
            return;
        }
        if (i > 0 && (tc_is_signed(od) ? v < p : (uint64_t)v < (uint64_t)p)) {
            snprintf(out, cap,
                     "segment offsets: offsets[%llu] = %s is less than offsets[%llu] = %s (offsets must not decrease)",
                     (unsigned long long)i, vt, (unsigned long long)(i - 1), pt);
            return;
        }
    }
}

static void promise_text(char *out, size_t cap, uint64_t segment, uint64_t length, uint64_t promise) {
    snprintf(out, cap, "segments: segment %llu has %llu elements, more than segments->max_segment_length = %llu",
             (unsigned long long)segment, (unsigned long long)length, (unsigned long long)promise);
}

/* v[from..count) continue from v[from - 1], segment i holding least + i % cycle
 * elements (cycle 0: least). */
static void continue_offsets(int64_t *v, uint64_t from, uint64_t count, int64_t least, uint64_t cycle) {
    uint64_t i;
    for (i = from; i < count; ++i) v[i] = v[i - 1] + least + (cycle ? (int64_t)(i % cycle) : 0);
}

static gpuprim_buffer_t offsets_from(gpuprim_dtype_t od, const int64_t *values, uint64_t count) {
    void *host = tc_xmalloc(count * 8); /* 8, the widest: GCC's -Wstringop-overflow as in tc_known */
    gpuprim_buffer_t b;
    uint64_t i;
    for (i = 0; i < count; ++i) tc_set(od, host, i, (uint64_t)values[i]);
    b = tc_buffer_from(ctx, od, host, count);
    free(host);
    return b;
}

/* The context's last error holds the deferred report of call `call` of
 * entry point `entry` with fault text `fault`, and `more` more failures. */
static void check_report(const char *entry, uint64_t call, const char *fault, uint64_t more) {
    char text[160];
    const char *message = gpuprim_context_last_error(ctx);
    CHECK_MESSAGE(ctx, entry);
    snprintf(text, sizeof text, "(call %llu on CSR offsets on this context, its offsets check deferred): ",
             (unsigned long long)call);
    CHECK_MESSAGE(ctx, text);
    CHECK_MESSAGE(ctx, fault);
    if (more) {
        snprintf(text, sizeof text, "; %llu more call(s) on offsets failed their deferred check after it",
                 (unsigned long long)more);
        CHECK_MESSAGE(ctx, text);
    } else {
        CHECKF(message && !tc_contains(message, "more call(s)"), "\"%s\" counts more failures", message ? message : "(null)");
    }
    /* the entry point comes first, the fault after the call's number */
    CHECKF(message && strstr(message, entry) == message, "\"%s\" does not start with %s",
           message ? message : "(null)", entry);
}

/* Every call of `kinds` over the offsets values[0..count) (of dtype od, n
 * data elements, the promise `promise`), which `fault` says are bad: in
 * DEFERRED mode SUCCESS, nothing written, then check_deferred's report; in
 * WAIT mode INVALID_ARGUMENT at once with the same fault and nothing
 * written. */
static void expect_fault(const char *what, gpuprim_dtype_t od, const int64_t *values, uint64_t count, uint64_t n,
                         uint64_t promise, const char *fault, unsigned kinds) {
    inputs_t in = inputs_make(n);
    gpuprim_buffer_t offsets = offsets_from(od, values, count);
    gpuprim_segments_t seg;
    int k;
    gpuprim_segments_init_offsets(&seg, offsets);
    seg.max_segment_length = promise;
    for (k = 0; k < K_COUNT; ++k) {
        outs_t o;
        uint64_t call;
        if (!(kinds & (1u << k))) continue;
        tc_where("%s, offsets %s: %s, DEFERRED", what, tc_dtype_name(od), kind_names[k]);
        o = outs_make((call_kind_t)k, &in, count - 1, 4);
        set_mode(GPUPRIM_OFFSETS_CHECK_DEFERRED);
        CHECKF(do_call((call_kind_t)k, &seg, &in, &o) == GPUPRIM_SUCCESS, "DEFERRED call: %s",
               gpuprim_context_last_error(ctx));
        call = csr_calls;
        /* alternate: the outputs read before and after the report */
        if (k % 2) outs_compare(&o, NULL, "outputs of a call whose deferred check failed");
        CHECK_STATUS(gpuprim_context_check_deferred(ctx), GPUPRIM_ERROR_INVALID_ARGUMENT);
        check_report(entry_of((call_kind_t)k), call, fault, 0);
        CHECK_OK(gpuprim_context_check_deferred(ctx));
        if (!(k % 2)) outs_compare(&o, NULL, "outputs of a call whose deferred check failed");

        tc_where("%s, offsets %s: %s, WAIT", what, tc_dtype_name(od), kind_names[k]);
        set_mode(GPUPRIM_OFFSETS_CHECK_WAIT);
        CHECK_STATUS(do_call((call_kind_t)k, &seg, &in, &o), GPUPRIM_ERROR_INVALID_ARGUMENT);
        CHECK_MESSAGE(ctx, fault);
        {
            const char *message = gpuprim_context_last_error(ctx);
            CHECKF(message && !tc_contains(message, "deferred"), "WAIT mode's message \"%s\" speaks of deferral",
                   message ? message : "(null)");
        }
        outs_compare(&o, NULL, "outputs of a call whose check failed");
        CHECK_OK(gpuprim_context_check_deferred(ctx)); /* a waiting check keeps nothing */
        outs_free(&o);
    }
    destroy(offsets);
    inputs_free(&in);
}

/* offsets v (valid) with offsets[at] made less than offsets[at - 1]: every
 * kind in `kinds` fails naming offsets[at]; v is left as it was. */
static void expect_decrease_at(const char *what, gpuprim_dtype_t od, int64_t *v, uint64_t count, uint64_t at,
                               unsigned kinds) {
    char fault[256], needle[48];
    const uint64_t n = (uint64_t)v[count - 1];
    const int64_t kept = v[at];
    v[at] = v[at - 1] - 1;
    bad_offset_text(fault, sizeof fault, od, v, count, n);
    snprintf(needle, sizeof needle, "offsets[%llu]", (unsigned long long)at);
    CHECK(tc_contains(fault, needle));
    expect_fault(what, od, v, count, n, 0, fault, kinds);
    v[at] = kept;
}

static void test_bad_offsets(void) {
    char fault[256];
    int o;
    for (o = 0; o < 4; ++o) {
        const gpuprim_dtype_t od = offset_dtypes[o];
        /* index 0: negative (unsigned: a huge value, past the end) */
        {
            const int64_t v[4] = {-3, 0, 4, 8};
            bad_offset_text(fault, sizeof fault, od, v, 4, 8);
            expect_fault("offsets[0] negative", od, v, 4, 8, 0, fault, ALL_KINDS);
        }
        /* index 0 past the end */
        {
            const int64_t v[3] = {9, 9, 9};
            bad_offset_text(fault, sizeof fault, od, v, 3, 8);
            CHECK(tc_contains(fault, "offsets[0] = 9 is past the end of the data (8 elements)"));
            expect_fault("offsets[0] past the end", od, v, 3, 8, 0, fault, ALL_KINDS);
        }
        /* the last index past the end, then less than the one before */
        {
            const int64_t v[4] = {0, 4, 8, 9};
            const int64_t w[4] = {0, 4, 8, 7};
            bad_offset_text(fault, sizeof fault, od, v, 4, 8);
            expect_fault("last offset past the end", od, v, 4, 8, 0, fault, ALL_KINDS);
            bad_offset_text(fault, sizeof fault, od, w, 4, 8);
            CHECK(tc_contains(fault, "offsets[3] = 7 is less than offsets[2] = 8 (offsets must not decrease)"));
            expect_fault("last offset decreasing", od, w, 4, 8, 0, fault, ALL_KINDS);
        }
        /* no segments: the one offset negative (unsigned: past the end) */
        {
            const int64_t v[1] = {-1};
            bad_offset_text(fault, sizeof fault, od, v, 1, 8);
            expect_fault("the only offset negative", od, v, 1, 8, 0, fault, ALL_KINDS);
        }
        /* decreasing in the middle; a negative one in the middle */
        {
            const int64_t v[5] = {0, 4, 3, 8, 8};
            const int64_t w[5] = {0, 4, -1, 8, 8};
            bad_offset_text(fault, sizeof fault, od, v, 5, 8);
            expect_fault("middle offset decreasing", od, v, 5, 8, 0, fault, ALL_KINDS);
            bad_offset_text(fault, sizeof fault, od, w, 5, 8);
            expect_fault("middle offset negative", od, w, 5, 8, 0, fault, ALL_KINDS);
        }
    }
    /* deep in 100001 offsets (a check over many blocks): the lowest bad
       index of several; one in the last block only; a bad offset ranks
       before a too-long segment earlier in the array */
    {
        const uint64_t count = 100001;
        int64_t *v = (int64_t *)tc_xmalloc(count * sizeof *v);
        uint64_t i, n;
        v[0] = 0;
        for (i = 1; i < count; ++i) v[i] = v[i - 1] + (int64_t)(1 + tc_below(3));
        n = (uint64_t)v[count - 1];
        v[73457] = v[73456] - 1;               /* decreasing */
        v[90001] = (int64_t)n + 5;             /* past the end, later */
        v[95000] = -7;                         /* negative, later still */
        for (o = 0; o < 4; ++o) {
            const gpuprim_dtype_t od = offset_dtypes[o];
            bad_offset_text(fault, sizeof fault, od, v, count, n);
            CHECK(tc_contains(fault, "offsets[73457]"));
            expect_fault("the lowest of several bad offsets among 100001", od, v, count, n, 0, fault,
                         o == 0 ? ALL_KINDS : (1u << K_SORT_KEYS) | (1u << K_REDUCE_SUM) | (1u << K_TOPK_SMALL));
        }
        v[73457] = v[73456] + 1;
        v[90001] = v[90000] + 1;
        v[95000] = v[94999] + 1;
        v[99998] = v[99997] + 3; /* still fine */
        v[99999] = (int64_t)n + 1;
        bad_offset_text(fault, sizeof fault, GPUPRIM_DTYPE_I64, v, count, n);
        CHECK(tc_contains(fault, "offsets[99999]"));
        expect_fault("a bad offset in the last block only", GPUPRIM_DTYPE_I64, v, count, n, 0, fault,
                     (1u << K_SORT_PAIRS) | (1u << K_ARGSORT_U32) | (1u << K_SCAN_INCLUSIVE) | (1u << K_TOPK_BIG));
        v[99999] = v[99998] + 1;
        v[100000] = v[99999] + 1;
        n = (uint64_t)v[100000];
        /* segment 10 too long for the promise 3, and offsets[80000] bad */
        v[11] = v[10] + 5;
        continue_offsets(v, 12, count, 1, 3);
        n = (uint64_t)v[count - 1];
        v[80000] = v[79999] - 2;
        bad_offset_text(fault, sizeof fault, GPUPRIM_DTYPE_U32, v, count, n);
        CHECK(tc_contains(fault, "offsets[80000]"));
        expect_fault("a bad offset after a too-long segment", GPUPRIM_DTYPE_U32, v, count, n, 3, fault,
                     (1u << K_SORT_KEYS) | (1u << K_REDUCE_MAX) | (1u << K_TOPK_SMALL));
        /* without the bad offset: the too-long segment, the lowest of two */
        v[80000] = v[79999] + 1;
        v[80001] = v[80000] + 6;
        continue_offsets(v, 80002, count, 1, 0);
        n = (uint64_t)v[count - 1];
        promise_text(fault, sizeof fault, 10, 5, 3);
        expect_fault("two segments longer than the promise", GPUPRIM_DTYPE_I64, v, count, n, 3, fault, ALL_KINDS);
        free(v);
    }
    /* 1500001 offsets: on CUDA more check blocks than a block has threads
       (an H100 runs 528), whose results the last block folds with every
       thread a strided share; a bad offset far in, then a too-long segment
       far in */
    {
        const uint64_t count = 1500001;
        int64_t *v = (int64_t *)tc_xmalloc(count * sizeof *v);
        v[0] = 0;
        continue_offsets(v, 1, count, 0, 3);
        expect_decrease_at("a bad offset deep in 1500001", GPUPRIM_DTYPE_I32, v, count, 1433333,
                           (1u << K_SORT_KEYS) | (1u << K_REDUCE_SUM) | (1u << K_TOPK_SMALL));
        v[1499000] = v[1498999] + 4; /* segment 1498999, longer than the promise 3 */
        continue_offsets(v, 1499001, count, 1, 0);
        promise_text(fault, sizeof fault, 1498999, 4, 3);
        expect_fault("a segment longer than the promise deep in 1500001", GPUPRIM_DTYPE_U32, v, count,
                     (uint64_t)v[count - 1], 3, fault,
                     (1u << K_ARGSORT_U32) | (1u << K_REDUCE_MAX) | (1u << K_SCAN_INCLUSIVE));
        free(v);
    }
    /* around the CUDA in-kernel check: 1024 offsets (1023 segments) of short
       segments (one tile and many), and 1025; faults at the first, a middle
       and the last index, and a broken promise in the last segment */
    {
        static const struct {
            uint64_t count, longest, where;
            int how; /* 0 decreasing, 1 past the end, 2 negative (offset `where`); 3 segment `where` past the promise */
        } cases[] = {{1024, 40, 1023, 0}, {1024, 40, 700, 1}, {1024, 40, 0, 2},  {1024, 200, 1000, 0},
                     {1024, 200, 1023, 1}, {1025, 40, 1024, 0}, {1025, 40, 3, 2},  {1024, 40, 1022, 3},
                     {1024, 200, 1022, 3}, {1025, 40, 1023, 3}, {2, 40, 1, 0},     {1024, 2, 1022, 3}};
        unsigned c;
        for (c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
            const uint64_t count = cases[c].count, where = cases[c].where;
            const gpuprim_dtype_t od = offset_dtypes[c % 4];
            int64_t *v = (int64_t *)tc_xmalloc(count * sizeof *v);
            uint64_t i, n, promise = 0;
            char what[96];
            v[0] = 0;
            for (i = 1; i < count; ++i) v[i] = v[i - 1] + 1 + (int64_t)tc_below(cases[c].longest);
            n = (uint64_t)v[count - 1] + 3;
            switch (cases[c].how) {
            case 0: v[where] = v[where - 1] - 1; break;
            case 1: v[where] = (int64_t)n + 1; break;
            case 2: v[where] = -2; break;
            default:
                promise = cases[c].longest + 1;
                v[where + 1] = v[where] + (int64_t)promise + 1;
                for (i = where + 2; i < count; ++i) v[i] = v[i - 1] + 1;
                n = (uint64_t)v[count - 1] + 3;
                break;
            }
            if (cases[c].how == 3) promise_text(fault, sizeof fault, where, promise + 1, promise);
            else bad_offset_text(fault, sizeof fault, od, v, count, n);
            snprintf(what, sizeof what, "%llu offsets, fault %d at %llu", (unsigned long long)count, cases[c].how,
                     (unsigned long long)where);
            expect_fault(what, od, v, count, n, promise, fault, ALL_KINDS);
            free(v);
        }
    }
    /* small: the promise broken by the last segment only; the promise equal
       to the longest segment is kept (checked in test_structs) */
    for (o = 0; o < 4; ++o) {
        const int64_t v[5] = {2, 6, 6, 10, 21};
        promise_text(fault, sizeof fault, 3, 11, 10);
        expect_fault("the last segment longer than the promise", offset_dtypes[o], v, 5, 24, 10, fault, ALL_KINDS);
    }
}

/* A segment whose last index does not fit the indices: I32 (2^31 + 1 keys)
 * and U32 (2^32 + 1 keys) for top-k, whose indices need only k slots, and
 * I32 for argsort, whose indices have the keys' count. The keys (U8) are
 * never read, nor most of the indices: on the CPU they wrap untouched host
 * memory; skipped where the memory cannot be had. I64 and U64 indices fit
 * every segment. */
static void test_index_dtype(void) {
    static const struct {
        gpuprim_dtype_t id;
        uint64_t n;
    } cases[2] = {{GPUPRIM_DTYPE_I32, ((uint64_t)1 << 31) + 1}, {GPUPRIM_DTYPE_U32, ((uint64_t)1 << 32) + 1}};
    const int cuda = tc_backend_is_cuda(ctx);
    unsigned c;
    if (sizeof(size_t) < 8) {
        printf("test_deferred_offsets: indices too small: skipped (32-bit size_t)\n");
        return;
    }
    for (c = 0; c < 2; ++c) {
        const uint64_t n = cases[c].n, largest = cases[c].id == GPUPRIM_DTYPE_I32 ? INT32_MAX : UINT32_MAX;
        void *host = NULL;
        gpuprim_buffer_t kin = NULL, off;
        tc_known_t idx = tc_known(ctx, cases[c].id, 2);
        gpuprim_segments_t seg;
        uint64_t offsets[3];
        char fault[256];
        int deferred;
        tc_where("top-k: a segment of %llu keys with %s indices", (unsigned long long)n, tc_dtype_name(cases[c].id));
        if (cuda) {
            if (gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U8, n, &kin) != GPUPRIM_SUCCESS) kin = NULL;
        } else {
            host = malloc((size_t)n + 64);
            if (host && gpuprim_buffer_wrap(ctx, GPUPRIM_DTYPE_U8, host, n, &kin) != GPUPRIM_SUCCESS) kin = NULL;
        }
        if (!kin) {
            printf("test_deferred_offsets: indices too small (%s, %llu keys): skipped, no memory for the keys\n",
                   tc_dtype_name(cases[c].id), (unsigned long long)n);
            free(host);
            tc_free_known(ctx, idx);
            continue;
        }
        /* an empty segment, then one of all n keys */
        offsets[0] = 0, offsets[1] = 0, offsets[2] = n;
        off = tc_buffer_from(ctx, GPUPRIM_DTYPE_U64, offsets, 3);
        gpuprim_segments_init_offsets(&seg, off);
        snprintf(fault, sizeof fault,
                 "segments: segment 1 has %llu keys; its last index, %llu, does not fit the indices' type (at most "
                 "%llu)",
                 (unsigned long long)n, (unsigned long long)(n - 1), (unsigned long long)largest);
        for (deferred = 1; deferred >= 0; --deferred) {
            set_mode(deferred ? GPUPRIM_OFFSETS_CHECK_DEFERRED : GPUPRIM_OFFSETS_CHECK_WAIT);
            ++csr_calls;
            if (deferred) {
                CHECK_OK(gpuprim_segmented_topk(ctx, &seg, kin, 1, GPUPRIM_ORDER_ASCENDING, NULL, idx.b));
                CHECK_STATUS(gpuprim_context_check_deferred(ctx), GPUPRIM_ERROR_INVALID_ARGUMENT);
                check_report("gpuprim_segmented_topk", csr_calls, fault, 0);
                CHECK_OK(gpuprim_context_check_deferred(ctx));
            } else {
                TC_EXPECT_FAIL(ctx, gpuprim_segmented_topk(ctx, &seg, kin, 1, GPUPRIM_ORDER_ASCENDING, NULL, idx.b),
                               GPUPRIM_ERROR_INVALID_ARGUMENT, fault);
            }
            TC_CHECK_UNCHANGED(ctx, idx);
        }
        /* a promise of n itself breaks nothing more: the index type is the fault */
        seg.max_segment_length = n;
        set_mode(GPUPRIM_OFFSETS_CHECK_DEFERRED);
        ++csr_calls;
        CHECK_OK(gpuprim_segmented_topk(ctx, &seg, kin, 1, GPUPRIM_ORDER_ASCENDING, NULL, idx.b));
        CHECK_STATUS(gpuprim_context_check_deferred(ctx), GPUPRIM_ERROR_INVALID_ARGUMENT);
        check_report("gpuprim_segmented_topk", csr_calls, fault, 0);
        TC_CHECK_UNCHANGED(ctx, idx);

        /* argsort, I32 only: its indices (n of them) poisoned at both ends */
        if (cases[c].id == GPUPRIM_DTYPE_I32) {
            void *ihost = NULL;
            gpuprim_buffer_t indices = NULL;
            if (cuda) {
                if (gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_I32, n, &indices) != GPUPRIM_SUCCESS) indices = NULL;
            } else {
                ihost = malloc((size_t)n * 4 + 64);
                if (ihost && gpuprim_buffer_wrap(ctx, GPUPRIM_DTYPE_I32, ihost, n, &indices) != GPUPRIM_SUCCESS)
                    indices = NULL;
            }
            if (!indices) {
                printf("test_deferred_offsets: argsort into I32 indices of %llu keys: skipped, no memory\n",
                       (unsigned long long)n);
            } else {
                int32_t ends[16], got[16];
                gpuprim_sort_options_t options;
                gpuprim_sort_options_init(&options);
                tc_poison_host(GPUPRIM_DTYPE_I32, ends, 16);
                REQUIRE_OK(gpuprim_buffer_upload(ctx, indices, 0, ends, 8));
                REQUIRE_OK(gpuprim_buffer_upload(ctx, indices, n - 8, ends + 8, 8));
                seg.max_segment_length = 0;
                for (deferred = 1; deferred >= 0; --deferred) {
                    tc_where("argsort: a segment of %llu keys with I32 indices, %s", (unsigned long long)n,
                             deferred ? "DEFERRED" : "WAIT");
                    set_mode(deferred ? GPUPRIM_OFFSETS_CHECK_DEFERRED : GPUPRIM_OFFSETS_CHECK_WAIT);
                    ++csr_calls;
                    if (deferred) {
                        CHECK_OK(gpuprim_segmented_argsort(ctx, &seg, kin, NULL, indices, &options));
                        CHECK_STATUS(gpuprim_context_check_deferred(ctx), GPUPRIM_ERROR_INVALID_ARGUMENT);
                        check_report("gpuprim_segmented_argsort", csr_calls, fault, 0);
                    } else {
                        TC_EXPECT_FAIL(ctx, gpuprim_segmented_argsort(ctx, &seg, kin, NULL, indices, &options),
                                       GPUPRIM_ERROR_INVALID_ARGUMENT, fault);
                    }
                    REQUIRE_OK(gpuprim_buffer_download(ctx, indices, 0, got, 8));
                    REQUIRE_OK(gpuprim_buffer_download(ctx, indices, n - 8, got + 8, 8));
                    CHECK_ARRAY_EQ(GPUPRIM_DTYPE_I32, got, ends, 16, "the indices' ends after a failed check");
                }
                destroy(indices);
            }
            free(ihost);
        }
        set_mode(GPUPRIM_OFFSETS_CHECK_WAIT);
        destroy(off);
        destroy(kin);
        free(host);
        tc_free_known(ctx, idx);
    }
}

/* Several bad calls, synchronize, the mode switched with a failure kept,
 * calls on rows, and a valid call right after a bad one. */
static void test_reports(void) {
    const int64_t bad[4] = {0, 5, 4, 12};  /* offsets[2] = 4 is less than offsets[1] = 5 */
    const int64_t good[4] = {0, 5, 9, 12};
    const char *fault = "segment offsets: offsets[2] = 4 is less than offsets[1] = 5 (offsets must not decrease)";
    inputs_t in = inputs_make(12);
    gpuprim_buffer_t bad_off = offsets_from(GPUPRIM_DTYPE_I32, bad, 4), good_off = offsets_from(GPUPRIM_DTYPE_I32, good, 4);
    gpuprim_segments_t bad_seg, good_seg, rows;
    outs_t a, b, c, w;
    uint64_t first;
    tc_layout_t L;
    const uint64_t lengths[3] = {5, 4, 3};
    gpuprim_segments_init_offsets(&bad_seg, bad_off);
    gpuprim_segments_init_offsets(&good_seg, good_off);
    gpuprim_segments_init_rows(&rows, 3, 4);
    L = tc_layout_csr("5, 4, 3", lengths, 3, 0, 0, GPUPRIM_DTYPE_I32);

    tc_where("reports: nothing to report");
    CHECK_OK(gpuprim_context_check_deferred(ctx));
    CHECK_OK(gpuprim_context_synchronize(ctx));

    tc_where("reports: two bad calls");
    set_mode(GPUPRIM_OFFSETS_CHECK_DEFERRED);
    a = outs_make(K_REDUCE_MIN, &in, 3, 4);
    b = outs_make(K_SORT_PAIRS, &in, 3, 4);
    CHECK_OK(do_call(K_REDUCE_MIN, &bad_seg, &in, &a));
    first = csr_calls;
    /* a call on rows between them is not numbered */
    c = outs_make(K_REDUCE_SUM, &in, 3, 4);
    CHECK_OK(do_call(K_REDUCE_SUM, &rows, &in, &c));
    CHECK_OK(do_call(K_SORT_PAIRS, &bad_seg, &in, &b));
    CHECK_STATUS(gpuprim_context_check_deferred(ctx), GPUPRIM_ERROR_INVALID_ARGUMENT);
    check_report("gpuprim_segmented_reduce", first, fault, 1);
    CHECK_OK(gpuprim_context_check_deferred(ctx));
    outs_compare(&a, NULL, "reduce (empty-free segments) after a failed deferred check");
    outs_compare(&b, NULL, "sort pairs after a failed deferred check");
    {
        int32_t want[3] = {0, 0, 0};
        uint64_t r, i;
        for (r = 0; r < 3; ++r)
            for (i = 0; i < 4; ++i) want[r] += in.keys[r * 4 + i];
        CHECK_BUFFER_EQ(ctx, c.b[0], GPUPRIM_DTYPE_I32, want, 3, "a reduce of rows in DEFERRED mode");
    }
    outs_free(&a);
    outs_free(&b);
    outs_free(&c);

    tc_where("reports: three bad calls, synchronize reports");
    a = outs_make(K_TOPK_SMALL, &in, 3, 4);
    b = outs_make(K_SCAN_IN_PLACE, &in, 3, 4);
    c = outs_make(K_ARGSORT_U64, &in, 3, 4);
    CHECK_OK(do_call(K_TOPK_SMALL, &bad_seg, &in, &a));
    first = csr_calls;
    CHECK_OK(do_call(K_SCAN_IN_PLACE, &bad_seg, &in, &b));
    CHECK_OK(do_call(K_ARGSORT_U64, &bad_seg, &in, &c));
    CHECK_STATUS(gpuprim_context_synchronize(ctx), GPUPRIM_ERROR_INVALID_ARGUMENT);
    check_report("gpuprim_segmented_topk", first, fault, 2);
    CHECK_OK(gpuprim_context_synchronize(ctx));
    CHECK_OK(gpuprim_context_check_deferred(ctx));
    outs_compare(&a, NULL, "top-k after a failed deferred check");
    outs_compare(&b, NULL, "scan in place after a failed deferred check");
    outs_compare(&c, NULL, "argsort after a failed deferred check");
    outs_free(&a);
    outs_free(&b);
    outs_free(&c);

    tc_where("reports: a valid call right after a bad one");
    a = outs_make(K_SORT_PAIRS, &in, 3, 4);
    b = outs_make(K_SORT_PAIRS, &in, 3, 4);
    c = outs_make(K_REDUCE_MIN, &in, 3, 4);
    w = outs_make(K_REDUCE_MIN, &in, 3, 4);
    CHECK_OK(do_call(K_SORT_PAIRS, &bad_seg, &in, &a));
    first = csr_calls;
    CHECK_OK(do_call(K_SORT_PAIRS, &good_seg, &in, &b));
    CHECK_OK(do_call(K_REDUCE_MIN, &good_seg, &in, &c));
    /* the mode switched: the kept failure is still reported, and later
       calls wait */
    set_mode(GPUPRIM_OFFSETS_CHECK_WAIT);
    CHECK_OK(do_call(K_REDUCE_MIN, &good_seg, &in, &w));
    CHECK_STATUS(do_call(K_REDUCE_MIN, &bad_seg, &in, &w), GPUPRIM_ERROR_INVALID_ARGUMENT);
    CHECK_MESSAGE(ctx, fault);
    CHECK_STATUS(gpuprim_context_check_deferred(ctx), GPUPRIM_ERROR_INVALID_ARGUMENT);
    check_report("gpuprim_segmented_sort", first, fault, 0);
    CHECK_OK(gpuprim_context_check_deferred(ctx));
    outs_compare(&a, NULL, "the bad sort");
    outs_compare(&c, &w, "reduce after a bad call: DEFERRED against WAIT");
    check_reference(K_REDUCE_MIN, &L, &in, &c);
    {
        outs_t ws = outs_make(K_SORT_PAIRS, &in, 3, 4);
        CHECK_OK(do_call(K_SORT_PAIRS, &good_seg, &in, &ws));
        outs_compare(&b, &ws, "sort pairs after a bad call: DEFERRED against WAIT");
        outs_free(&ws);
    }
    outs_free(&a);
    outs_free(&b);
    outs_free(&c);
    outs_free(&w);

    /* top-k with k = 0 (no slots): its offsets are checked even so */
    tc_where("reports: top-k with k = 0 on bad offsets");
    {
        gpuprim_buffer_t none = tc_buffer(ctx, GPUPRIM_DTYPE_U32, 0);
        set_mode(GPUPRIM_OFFSETS_CHECK_WAIT);
        ++csr_calls;
        TC_EXPECT_FAIL(ctx, gpuprim_segmented_topk(ctx, &bad_seg, in.kin, 0, GPUPRIM_ORDER_ASCENDING, NULL, none),
                       GPUPRIM_ERROR_INVALID_ARGUMENT, fault);
        set_mode(GPUPRIM_OFFSETS_CHECK_DEFERRED);
        ++csr_calls;
        CHECK_OK(gpuprim_segmented_topk(ctx, &bad_seg, in.kin, 0, GPUPRIM_ORDER_ASCENDING, NULL, none));
        CHECK_STATUS(gpuprim_context_check_deferred(ctx), GPUPRIM_ERROR_INVALID_ARGUMENT);
        check_report("gpuprim_segmented_topk", csr_calls, fault, 0);
        set_mode(GPUPRIM_OFFSETS_CHECK_WAIT);
        destroy(none);
    }

    /* the number counts calls of both modes: a WAIT failure, then a
       deferred one */
    tc_where("reports: numbering across modes");
    a = outs_make(K_SCAN_EXCLUSIVE, &in, 3, 4);
    CHECK_STATUS(do_call(K_SCAN_EXCLUSIVE, &bad_seg, &in, &a), GPUPRIM_ERROR_INVALID_ARGUMENT);
    CHECK_OK(do_call(K_SCAN_EXCLUSIVE, &good_seg, &in, &a));
    set_mode(GPUPRIM_OFFSETS_CHECK_DEFERRED);
    CHECK_OK(do_call(K_SCAN_EXCLUSIVE, &bad_seg, &in, &a));
    CHECK_STATUS(gpuprim_context_check_deferred(ctx), GPUPRIM_ERROR_INVALID_ARGUMENT);
    check_report("gpuprim_segmented_scan", csr_calls, fault, 0);
    outs_free(&a);

    set_mode(GPUPRIM_OFFSETS_CHECK_WAIT);
    tc_layout_free(&L);
    destroy(bad_off);
    destroy(good_off);
    inputs_free(&in);
}

/* ------------------------------------------------------------------------ */
/* The struct, the mode, the handles                                        */
/* ------------------------------------------------------------------------ */

static void test_structs(void) {
    const int64_t v[4] = {0, 8, 10, 16};
    inputs_t in = inputs_make(16);
    gpuprim_buffer_t offsets = offsets_from(GPUPRIM_DTYPE_U32, v, 4);
    gpuprim_segments_t seg;
    char fault[256];
    int k, deferred;
    gpuprim_segments_init_offsets(&seg, offsets);
    tc_where("segments: the init functions' max_segment_length");
    CHECK(seg.max_segment_length == 0);
    CHECK(seg.struct_size == sizeof(gpuprim_segments_t));
    {
        gpuprim_segments_t rows;
        memset(&rows, 0xAB, sizeof rows);
        gpuprim_segments_init_rows(&rows, 2, 3);
        CHECK(rows.max_segment_length == 0);
    }
    /* WAIT: a promise of 7 broken by segment 0 (8 elements); 8 kept */
    promise_text(fault, sizeof fault, 0, 8, 7);
    expect_fault("max_segment_length 7 < 8", GPUPRIM_DTYPE_U32, v, 4, 16, 7, fault, ALL_KINDS);
    for (deferred = 0; deferred < 2; ++deferred)
        for (k = 0; k < K_COUNT; ++k) {
            outs_t with, without;
            tc_where("max_segment_length = the longest segment, and struct_size 32, %s: %s",
                     deferred ? "DEFERRED" : "WAIT", kind_names[k]);
            set_mode(deferred ? GPUPRIM_OFFSETS_CHECK_DEFERRED : GPUPRIM_OFFSETS_CHECK_WAIT);
            seg.struct_size = sizeof seg;
            seg.max_segment_length = 8;
            with = outs_make((call_kind_t)k, &in, 3, 4);
            CHECK_OK(do_call((call_kind_t)k, &seg, &in, &with));
            /* 0.3.0's struct ends before max_segment_length: not read */
            seg.struct_size = 32;
            seg.max_segment_length = 1;
            without = outs_make((call_kind_t)k, &in, 3, 4);
            CHECK_OK(do_call((call_kind_t)k, &seg, &in, &without));
            CHECK_OK(gpuprim_context_check_deferred(ctx));
            outs_compare(&with, &without, kind_names[k]);
            outs_free(&with);
            outs_free(&without);
        }
    /* sizes between 32 and the struct's, and a non-zero tail, are refused */
    set_mode(GPUPRIM_OFFSETS_CHECK_DEFERRED);
    {
        outs_t o = outs_make(K_REDUCE_SUM, &in, 3, 4);
        seg.struct_size = 36;
        seg.max_segment_length = 0;
        CHECK_STATUS(gpuprim_segmented_reduce(ctx, GPUPRIM_OP_SUM, &seg, in.kin, o.b[0]),
                     GPUPRIM_ERROR_INVALID_ARGUMENT);
        CHECK_MESSAGE(ctx, "struct_size");
        outs_compare(&o, NULL, "a reduce refused for its struct_size");
        CHECK_OK(gpuprim_context_check_deferred(ctx));
        outs_free(&o);
    }
    set_mode(GPUPRIM_OFFSETS_CHECK_WAIT);
    destroy(offsets);
    inputs_free(&in);
}

static void test_mode_and_handles(void) {
    static const int32_t bad_modes[4] = {2, -1, 0x100, INT32_MAX};
    const int64_t v[3] = {0, 6, 5};
    inputs_t in = inputs_make(8);
    gpuprim_buffer_t offsets = offsets_from(GPUPRIM_DTYPE_I64, v, 3);
    gpuprim_segments_t seg;
    outs_t o;
    int m, deferred;
    gpuprim_segments_init_offsets(&seg, offsets);
    o = outs_make(K_REDUCE_SUM, &in, 2, 4);
    for (deferred = 0; deferred < 2; ++deferred)
        for (m = 0; m < 4; ++m) {
            tc_where("set_offsets_check(%d) with the mode %s", (int)bad_modes[m], deferred ? "DEFERRED" : "WAIT");
            set_mode(deferred ? GPUPRIM_OFFSETS_CHECK_DEFERRED : GPUPRIM_OFFSETS_CHECK_WAIT);
            TC_EXPECT_FAIL(ctx, gpuprim_context_set_offsets_check(ctx, (gpuprim_offsets_check_t)bad_modes[m]),
                           GPUPRIM_ERROR_INVALID_ENUM, "mode");
            /* the mode is as it was */
            if (deferred) {
                CHECK_OK(do_call(K_REDUCE_SUM, &seg, &in, &o));
                CHECK_STATUS(gpuprim_context_check_deferred(ctx), GPUPRIM_ERROR_INVALID_ARGUMENT);
                CHECK_MESSAGE(ctx, "offsets[2] = 5 is less than offsets[1] = 6");
            } else {
                CHECK_STATUS(do_call(K_REDUCE_SUM, &seg, &in, &o), GPUPRIM_ERROR_INVALID_ARGUMENT);
                CHECK_OK(gpuprim_context_check_deferred(ctx));
            }
            outs_compare(&o, NULL, "a reduce over bad offsets");
        }
    set_mode(GPUPRIM_OFFSETS_CHECK_WAIT);

    tc_where("NULL and destroyed contexts");
    CHECK_STATUS(gpuprim_context_set_offsets_check(NULL, GPUPRIM_OFFSETS_CHECK_DEFERRED), GPUPRIM_ERROR_NULL_POINTER);
    CHECK_STATUS(gpuprim_context_check_deferred(NULL), GPUPRIM_ERROR_NULL_POINTER);
    {
        gpuprim_context_t other = NULL, dead = NULL;
        gpuprim_buffer_t other_off, other_in, other_out;
        int32_t keys[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        uint64_t bad_values[3] = {0, 9, 8};
        gpuprim_segments_t other_seg;
        REQUIRE_OK(gpuprim_context_create(NULL, &dead, NULL, 0));
        REQUIRE_OK(gpuprim_context_set_offsets_check(dead, GPUPRIM_OFFSETS_CHECK_DEFERRED));
        REQUIRE_OK(gpuprim_context_destroy(dead));
        CHECK_STATUS(gpuprim_context_set_offsets_check(dead, GPUPRIM_OFFSETS_CHECK_WAIT), GPUPRIM_ERROR_INVALID_HANDLE);
        CHECK_STATUS(gpuprim_context_check_deferred(dead), GPUPRIM_ERROR_INVALID_HANDLE);
        /* a context destroyed with a failure kept (the sanitizer run sees
           any leak); its failure is not ctx's */
        REQUIRE_OK(gpuprim_context_create(NULL, &other, NULL, 0));
        REQUIRE_OK(gpuprim_context_set_offsets_check(other, GPUPRIM_OFFSETS_CHECK_DEFERRED));
        REQUIRE_OK(gpuprim_buffer_create(other, GPUPRIM_DTYPE_U64, 3, &other_off));
        REQUIRE_OK(gpuprim_buffer_upload(other, other_off, 0, bad_values, 3));
        REQUIRE_OK(gpuprim_buffer_create(other, GPUPRIM_DTYPE_I32, 8, &other_in));
        REQUIRE_OK(gpuprim_buffer_upload(other, other_in, 0, keys, 8));
        REQUIRE_OK(gpuprim_buffer_create(other, GPUPRIM_DTYPE_I32, 2, &other_out));
        gpuprim_segments_init_offsets(&other_seg, other_off);
        CHECK_OK(gpuprim_segmented_reduce(other, GPUPRIM_OP_SUM, &other_seg, other_in, other_out));
        CHECK_OK(gpuprim_context_check_deferred(ctx));
        CHECK_OK(gpuprim_context_destroy(other));
    }
    outs_free(&o);
    destroy(offsets);
    inputs_free(&in);
}

int main(void) {
    double start;
    ctx = tc_init("test_deferred_offsets");
    start = tc_seconds();
    test_mode_and_handles();
    test_structs();
    test_reports();
    printf("test_deferred_offsets: reports done (%.1f s)\n", tc_seconds() - start);
    test_bad_offsets();
    printf("test_deferred_offsets: bad offsets done (%.1f s)\n", tc_seconds() - start);
    test_valid_offsets();
    printf("test_deferred_offsets: valid offsets done (%.1f s)\n", tc_seconds() - start);
    test_index_dtype();
    printf("test_deferred_offsets: index dtypes done (%.1f s)\n", tc_seconds() - start);
    return tc_finish();
}
