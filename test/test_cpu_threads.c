/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CPU backend's thread count (options.cpu_threads) changes no bit of
 * any result: every op and dtype, on counts that take the parallel paths
 * (reduce from 2^15, scan from 2^16, sort from 2^17 elements; 7 threads
 * merge 4 sorted runs in two rounds), on 1, 2 and 7 threads.
 * The segmented calls too (reduce, scan, sort, argsort, bit ranges) on
 * short and long segments. Top-k (flat, rows, CSR; short and long
 * segments, small k and k past a quarter of a segment) likewise.
 * And the float SUM / dot / scan error bounds the header states, against a
 * long double reference: SUM and dot within
 * (15 + log2(32) + ceil(log2(ceil(n / 512)))) u sum|x| and, on uniform
 * [0, 1) input, a relative error below 1e-6 (f32: numpy's pairwise sum
 * gives 2e-8); an inclusive scan's outputs within (8192 + blocks) u sum|x|.
 */
#include "test_common.h"

#define THREAD_COUNTS 3
static const int32_t kThreads[THREAD_COUNTS] = {1, 2, 7};
static gpuprim_context_t contexts[THREAD_COUNTS];

static gpuprim_context_t cpu_context(int32_t threads) {
    gpuprim_context_options_t options;
    gpuprim_context_t ctx = NULL;
    char message[256];
    gpuprim_context_options_init(&options);
    options.backend = GPUPRIM_BACKEND_CPU;
    options.cpu_threads = threads;
    if (gpuprim_context_create(&options, &ctx, message, sizeof message) != GPUPRIM_SUCCESS) {
        fprintf(stderr, "test_cpu_threads: no CPU context with %d threads: %s\n", (int)threads, message);
        exit(1);
    }
    return ctx;
}

/* Runs one op on every context and checks the bytes of the output agree. */
typedef enum { OP_REDUCE, OP_DOT, OP_SCAN, OP_SORT_KEYS, OP_SORT_PAIRS, OP_SORT_PAIRS_IN_PLACE } op_kind_t;

static void same_bits(op_kind_t kind, gpuprim_op_t op, int variant, gpuprim_dtype_t d,
                      gpuprim_dtype_t value_dtype, const void *a, const void *b, const void *values,
                      uint64_t n) {
    size_t size = tc_size(d), vsize = tc_size(value_dtype);
    unsigned char *first = NULL, *first_values = NULL;
    int t;
    for (t = 0; t < THREAD_COUNTS; ++t) {
        gpuprim_context_t ctx = contexts[t];
        gpuprim_buffer_t in = tc_buffer_from(ctx, d, a, n), out = NULL, vin = NULL, vout = NULL;
        unsigned char *got = NULL, *got_values = NULL;
        size_t got_bytes = size;
        switch (kind) {
        case OP_REDUCE:
            got = (unsigned char *)tc_xmalloc(size);
            CHECK_OK(gpuprim_reduce(ctx, op, in, got));
            break;
        case OP_DOT: {
            gpuprim_buffer_t other = tc_buffer_from(ctx, d, b, n);
            got = (unsigned char *)tc_xmalloc(size);
            CHECK_OK(gpuprim_dot(ctx, in, other, got));
            CHECK_OK(gpuprim_buffer_destroy(ctx, other));
            break;
        }
        case OP_SCAN:
            out = tc_buffer(ctx, d, n);
            CHECK_OK(gpuprim_scan(ctx, op, variant ? GPUPRIM_SCAN_EXCLUSIVE : GPUPRIM_SCAN_INCLUSIVE, in, out));
            got = (unsigned char *)tc_download(ctx, out, d, n);
            got_bytes = size * n;
            break;
        case OP_SORT_KEYS:
            out = tc_buffer(ctx, d, n);
            CHECK_OK(gpuprim_sort(ctx, in, NULL, out, NULL, variant ? GPUPRIM_ORDER_DESCENDING : GPUPRIM_ORDER_ASCENDING));
            got = (unsigned char *)tc_download(ctx, out, d, n);
            got_bytes = size * n;
            break;
        case OP_SORT_PAIRS:
        case OP_SORT_PAIRS_IN_PLACE:
            vin = tc_buffer_from(ctx, value_dtype, values, n);
            if (kind == OP_SORT_PAIRS) {
                out = tc_buffer(ctx, d, n);
                vout = tc_buffer(ctx, value_dtype, n);
            }
            CHECK_OK(gpuprim_sort(ctx, in, vin, out ? out : in, vout ? vout : vin,
                                  variant ? GPUPRIM_ORDER_DESCENDING : GPUPRIM_ORDER_ASCENDING));
            got = (unsigned char *)tc_download(ctx, out ? out : in, d, n);
            got_values = (unsigned char *)tc_download(ctx, vout ? vout : vin, value_dtype, n);
            got_bytes = size * n;
            break;
        }
        if (t == 0) {
            first = got;
            first_values = got_values;
        } else {
            CHECKF(memcmp(first, got, got_bytes) == 0,
                   "op %d (%s, variant %d) on %s x %llu: %d threads differ from 1 thread", (int)kind,
                   tc_op_name(op), variant, tc_dtype_name(d), (unsigned long long)n, (int)kThreads[t]);
            if (got_values)
                CHECKF(memcmp(first_values, got_values, vsize * n) == 0,
                       "sort pairs (%d, variant %d) on %s x %llu: %d threads move values differently",
                       (int)kind, variant, tc_dtype_name(d), (unsigned long long)n, (int)kThreads[t]);
            free(got);
            free(got_values);
        }
        CHECK_OK(gpuprim_buffer_destroy(ctx, in));
        if (out) CHECK_OK(gpuprim_buffer_destroy(ctx, out));
        if (vin) CHECK_OK(gpuprim_buffer_destroy(ctx, vin));
        if (vout) CHECK_OK(gpuprim_buffer_destroy(ctx, vout));
    }
    free(first);
    free(first_values);
}

static void test_determinism(void) {
    static const uint64_t counts[] = {1, 1000, 70001, (1u << 18) + 3, (1u << 20) + 12345};
    size_t c, d;
    for (c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
        uint64_t n = counts[c];
        for (d = 0; d < 6; ++d) {
            gpuprim_dtype_t dt = tc_all_dtypes[d];
            void *a = tc_xmalloc(n * 8), *b = tc_xmalloc(n * 8), *keys = tc_xmalloc(n * 8);
            void *values = tc_xmalloc(n * 8);
            uint64_t i;
            int variant;
            gpuprim_op_t op;
            tc_where("determinism across thread counts: %s x %llu", tc_dtype_name(dt), (unsigned long long)n);
            tc_fill(dt, a, n, TC_MODERATE);
            tc_fill(dt, b, n, TC_MODERATE);
            /* keys: duplicates, and for floats NaNs, infinities and both zeros */
            tc_fill(dt, keys, n, c % 2 ? TC_SMALL_RANGE : TC_NAN_SPARSE);
            for (i = 0; i < n; i += 97) tc_set(dt, keys, i, tc_special_value(dt));
            for (i = 0; i < n; ++i) ((uint64_t *)values)[i] = i * 0x9E3779B97F4A7C15ull;
            for (op = GPUPRIM_OP_SUM; op <= GPUPRIM_OP_MAX; op = (gpuprim_op_t)(op + 1)) {
                same_bits(OP_REDUCE, op, 0, dt, dt, a, NULL, NULL, n);
                for (variant = 0; variant < 2; ++variant) same_bits(OP_SCAN, op, variant, dt, dt, a, NULL, NULL, n);
            }
            same_bits(OP_DOT, GPUPRIM_OP_SUM, 0, dt, dt, a, b, NULL, n);
            for (variant = 0; variant < 2; ++variant) {
                same_bits(OP_SORT_KEYS, GPUPRIM_OP_SUM, variant, dt, dt, keys, NULL, NULL, n);
                same_bits(OP_SORT_PAIRS, GPUPRIM_OP_SUM, variant, dt, GPUPRIM_DTYPE_U32, keys, NULL, values, n);
                same_bits(OP_SORT_PAIRS_IN_PLACE, GPUPRIM_OP_SUM, variant, dt, GPUPRIM_DTYPE_U64, keys, NULL,
                          values, n);
            }
            free(a);
            free(b);
            free(keys);
            free(values);
        }
    }
}

/* The segmented calls: every output byte the same on 1, 2 and 7 threads, for
 * many short segments, a mix of short and long ones (CSR, long ones past
 * the parallel thresholds of reduce, scan and sort), and few long rows. */
typedef enum { SEG_REDUCE, SEG_SCAN, SEG_SORT_KEYS, SEG_SORT_PAIRS_IN_PLACE, SEG_ARGSORT, SEG_ARGSORT_BITS } seg_kind_t;

static void same_bits_segmented(seg_kind_t kind, gpuprim_op_t op, int variant, gpuprim_dtype_t d, const void *a,
                                uint64_t n, const uint64_t *offsets, uint64_t nseg, int uniform) {
    unsigned char *first = NULL, *first_values = NULL;
    const size_t size = tc_size(d);
    int t;
    for (t = 0; t < THREAD_COUNTS; ++t) {
        gpuprim_context_t ctx = contexts[t];
        gpuprim_buffer_t in = tc_buffer_from(ctx, d, a, n), out = NULL, values = NULL, off = NULL;
        gpuprim_segments_t seg;
        gpuprim_sort_options_t options;
        unsigned char *got = NULL, *got_values = NULL;
        uint64_t got_bytes = 0, got_values_bytes = 0;
        if (uniform) {
            gpuprim_segments_init_rows(&seg, nseg, n / nseg);
        } else {
            off = tc_buffer_from(ctx, GPUPRIM_DTYPE_U64, offsets, nseg + 1);
            gpuprim_segments_init_offsets(&seg, off);
        }
        gpuprim_sort_options_init(&options);
        options.order = variant ? GPUPRIM_ORDER_DESCENDING : GPUPRIM_ORDER_ASCENDING;
        switch (kind) {
        case SEG_REDUCE:
            out = tc_buffer(ctx, d, nseg);
            CHECK_OK(gpuprim_segmented_reduce(ctx, op, &seg, in, out));
            got = (unsigned char *)tc_download(ctx, out, d, nseg);
            got_bytes = size * nseg;
            break;
        case SEG_SCAN:
            out = tc_buffer(ctx, d, n);
            tc_poison(ctx, out, d, n);
            CHECK_OK(gpuprim_segmented_scan(ctx, op, variant ? GPUPRIM_SCAN_EXCLUSIVE : GPUPRIM_SCAN_INCLUSIVE, &seg,
                                            in, out));
            got = (unsigned char *)tc_download(ctx, out, d, n);
            got_bytes = size * n;
            break;
        case SEG_SORT_KEYS:
            out = tc_buffer(ctx, d, n);
            tc_poison(ctx, out, d, n);
            CHECK_OK(gpuprim_segmented_sort(ctx, &seg, in, NULL, out, NULL, &options));
            got = (unsigned char *)tc_download(ctx, out, d, n);
            got_bytes = size * n;
            break;
        case SEG_SORT_PAIRS_IN_PLACE: {
            uint64_t *v = (uint64_t *)tc_xmalloc(n * 8), i;
            for (i = 0; i < n; ++i) v[i] = i * 0x9E3779B97F4A7C15ull;
            values = tc_buffer_from(ctx, GPUPRIM_DTYPE_U64, v, n);
            free(v);
            CHECK_OK(gpuprim_segmented_sort(ctx, &seg, in, values, in, values, &options));
            got = (unsigned char *)tc_download(ctx, in, d, n);
            got_bytes = size * n;
            got_values = (unsigned char *)tc_download(ctx, values, GPUPRIM_DTYPE_U64, n);
            got_values_bytes = 8 * n;
            break;
        }
        case SEG_ARGSORT:
        case SEG_ARGSORT_BITS:
            values = tc_buffer(ctx, GPUPRIM_DTYPE_I64, n);
            tc_poison(ctx, values, GPUPRIM_DTYPE_I64, n);
            if (kind == SEG_ARGSORT_BITS) {
                options.begin_bit = 1;
                options.end_bit = tc_bits(d) - 1;
                out = tc_buffer(ctx, d, n);
                tc_poison(ctx, out, d, n);
            }
            CHECK_OK(gpuprim_segmented_argsort(ctx, &seg, in, out, values, &options));
            got_values = (unsigned char *)tc_download(ctx, values, GPUPRIM_DTYPE_I64, n);
            got_values_bytes = 8 * n;
            if (out) {
                got = (unsigned char *)tc_download(ctx, out, d, n);
                got_bytes = size * n;
            }
            break;
        }
        if (t == 0) {
            first = got;
            first_values = got_values;
        } else {
            CHECKF(got_bytes == 0 || memcmp(first, got, got_bytes) == 0,
                   "segmented %d (%s, variant %d) on %s x %llu, %llu segments: %d threads differ from 1 thread",
                   (int)kind, tc_op_name(op), variant, tc_dtype_name(d), (unsigned long long)n,
                   (unsigned long long)nseg, (int)kThreads[t]);
            CHECKF(got_values_bytes == 0 || memcmp(first_values, got_values, got_values_bytes) == 0,
                   "segmented %d (variant %d) on %s x %llu, %llu segments: %d threads give other values/indices",
                   (int)kind, variant, tc_dtype_name(d), (unsigned long long)n, (unsigned long long)nseg,
                   (int)kThreads[t]);
            free(got);
            free(got_values);
        }
        CHECK_OK(gpuprim_buffer_destroy(ctx, in));
        if (out) CHECK_OK(gpuprim_buffer_destroy(ctx, out));
        if (values) CHECK_OK(gpuprim_buffer_destroy(ctx, values));
        if (off) CHECK_OK(gpuprim_buffer_destroy(ctx, off));
    }
    free(first);
    free(first_values);
}

static void test_segmented_determinism(void) {
    /* CSR: short segments around long ones (2^17 + 5 sorts in runs; 70001
     * scans and reduces in parallel), a gap before, between and after. */
    static const uint64_t lengths[] = {3, 0, 131077, 17, 1, 70001, 40000, 2, 4097, 33};
    static const gpuprim_dtype_t dts[] = {GPUPRIM_DTYPE_F32, GPUPRIM_DTYPE_I8, GPUPRIM_DTYPE_F16, GPUPRIM_DTYPE_U64};
    uint64_t offsets[sizeof lengths / sizeof lengths[0] + 1], nseg = sizeof lengths / sizeof lengths[0], at = 5, s;
    size_t di, shape;
    for (s = 0; s < nseg; ++s) {
        offsets[s] = at;
        at += lengths[s] + (s == 4 ? 7 : 0);
    }
    offsets[nseg] = at;
    for (shape = 0; shape < 3; ++shape) {
        /* 0: CSR above; 1: 8192 rows of 16; 2: 2 rows of 150000 */
        const uint64_t n = shape == 0 ? at + 11 : shape == 1 ? 8192 * 16 : 300000;
        const uint64_t segments = shape == 0 ? nseg : shape == 1 ? 8192 : 2;
        for (di = 0; di < sizeof dts / sizeof dts[0]; ++di) {
            const gpuprim_dtype_t d = dts[di];
            void *a = tc_xmalloc(n * 8), *keys = tc_xmalloc(n * 8);
            gpuprim_op_t op;
            int variant;
            uint64_t i;
            tc_where("segmented determinism across thread counts: %s x %llu, shape %d", tc_dtype_name(d),
                     (unsigned long long)n, (int)shape);
            tc_fill(d, a, n, TC_MODERATE);
            tc_fill(d, keys, n, shape == 1 ? TC_SMALL_RANGE : TC_NAN_SPARSE);
            for (i = 0; i < n; i += 89) tc_set(d, keys, i, tc_special_value(d));
            for (op = GPUPRIM_OP_SUM; op <= GPUPRIM_OP_MAX; op = (gpuprim_op_t)(op + 1)) {
                same_bits_segmented(SEG_REDUCE, op, 0, d, a, n, offsets, segments, shape != 0);
                same_bits_segmented(SEG_SCAN, op, (int)(op & 1), d, a, n, offsets, segments, shape != 0);
            }
            for (variant = 0; variant < 2; ++variant) {
                same_bits_segmented(SEG_SORT_KEYS, GPUPRIM_OP_SUM, variant, d, keys, n, offsets, segments, shape != 0);
                same_bits_segmented(SEG_SORT_PAIRS_IN_PLACE, GPUPRIM_OP_SUM, variant, d, keys, n, offsets, segments,
                                    shape != 0);
                same_bits_segmented(variant ? SEG_ARGSORT_BITS : SEG_ARGSORT, GPUPRIM_OP_SUM, variant, d, keys, n,
                                    offsets, segments, shape != 0);
            }
            free(a);
            free(keys);
        }
    }
}

/* Top-k: keys and indices the same on 1, 2 and 7 threads, flat (nseg 0:
 * gpuprim_topk over all n keys), uniform rows or CSR offsets. */
static void same_bits_topk(gpuprim_dtype_t d, const void *keys, uint64_t n, const uint64_t *offsets, uint64_t nseg,
                           int uniform, uint64_t k, int descending, gpuprim_dtype_t id) {
    const uint64_t slots = (nseg ? nseg : 1) * k;
    unsigned char *first = NULL, *first_idx = NULL;
    int t;
    for (t = 0; t < THREAD_COUNTS; ++t) {
        gpuprim_context_t ctx = contexts[t];
        gpuprim_buffer_t in = tc_buffer_from(ctx, d, keys, n), off = NULL;
        gpuprim_buffer_t kout = tc_buffer(ctx, d, slots), idx = tc_buffer(ctx, id, slots);
        const gpuprim_order_t order = descending ? GPUPRIM_ORDER_DESCENDING : GPUPRIM_ORDER_ASCENDING;
        unsigned char *got, *got_idx;
        tc_poison(ctx, kout, d, slots);
        tc_poison(ctx, idx, id, slots);
        if (nseg == 0) {
            CHECK_OK(gpuprim_topk(ctx, in, k, order, kout, idx));
        } else {
            gpuprim_segments_t seg;
            if (uniform) {
                gpuprim_segments_init_rows(&seg, nseg, n / nseg);
            } else {
                off = tc_buffer_from(ctx, GPUPRIM_DTYPE_U64, offsets, nseg + 1);
                gpuprim_segments_init_offsets(&seg, off);
            }
            CHECK_OK(gpuprim_segmented_topk(ctx, &seg, in, k, order, kout, idx));
        }
        got = (unsigned char *)tc_download(ctx, kout, d, slots);
        got_idx = (unsigned char *)tc_download(ctx, idx, id, slots);
        if (t == 0) {
            first = got;
            first_idx = got_idx;
        } else {
            CHECKF(memcmp(first, got, slots * tc_size(d)) == 0 && memcmp(first_idx, got_idx, slots * tc_size(id)) == 0,
                   "top-k of %s x %llu, %llu segments, k %llu, %s: %d threads differ from 1 thread", tc_dtype_name(d),
                   (unsigned long long)n, (unsigned long long)nseg, (unsigned long long)k,
                   descending ? "descending" : "ascending", (int)kThreads[t]);
            free(got);
            free(got_idx);
        }
        CHECK_OK(gpuprim_buffer_destroy(ctx, in));
        CHECK_OK(gpuprim_buffer_destroy(ctx, kout));
        CHECK_OK(gpuprim_buffer_destroy(ctx, idx));
        if (off) CHECK_OK(gpuprim_buffer_destroy(ctx, off));
    }
    free(first);
    free(first_idx);
}

static void test_topk_determinism(void) {
    /* CSR: short segments around long ones (past the 2^16-key chunks that
     * select on every thread), gaps before, between and after. */
    static const uint64_t lengths[] = {3, 0, 131077, 17, 1, 70001, 40000, 2, 4097, 33};
    static const gpuprim_dtype_t dts[] = {GPUPRIM_DTYPE_F32, GPUPRIM_DTYPE_I8, GPUPRIM_DTYPE_F16, GPUPRIM_DTYPE_U64};
    static const uint64_t ks[] = {1, 8, 64, 1024, 4097};
    uint64_t offsets[sizeof lengths / sizeof lengths[0] + 1], nseg = sizeof lengths / sizeof lengths[0], at = 5, s;
    size_t di, shape, ki;
    for (s = 0; s < nseg; ++s) {
        offsets[s] = at;
        at += lengths[s] + (s == 4 ? 7 : 0);
    }
    offsets[nseg] = at;
    for (shape = 0; shape < 4; ++shape) {
        /* 0: CSR above; 1: 8192 rows of 16; 2: 2 rows of 150000; 3: flat 2^20 + 3 */
        const uint64_t n = shape == 0 ? at + 11 : shape == 1 ? 8192 * 16 : shape == 2 ? 300000 : (1u << 20) + 3;
        const uint64_t segments = shape == 0 ? nseg : shape == 1 ? 8192 : shape == 2 ? 2 : 0;
        for (di = 0; di < sizeof dts / sizeof dts[0]; ++di) {
            const gpuprim_dtype_t d = dts[di];
            void *keys = tc_xmalloc(n * 8);
            uint64_t i;
            tc_where("top-k determinism across thread counts: %s x %llu, shape %d", tc_dtype_name(d),
                     (unsigned long long)n, (int)shape);
            tc_fill(d, keys, n, (di + shape) % 2 ? TC_SMALL_RANGE : TC_NAN_SPARSE);
            for (i = 0; i < n; i += 89) tc_set(d, keys, i, tc_special_value(d));
            for (ki = 0; ki < sizeof ks / sizeof ks[0]; ++ki) {
                const uint64_t k = shape == 1 && ks[ki] > 16 ? 16 : ks[ki];
                same_bits_topk(d, keys, n, offsets, segments, shape != 0, k, (int)((ki + di) & 1),
                               ki % 2 ? GPUPRIM_DTYPE_U32 : GPUPRIM_DTYPE_I64);
            }
            if (shape >= 2) /* more than a quarter of a long segment: selected whole */
                same_bits_topk(d, keys, n, offsets, segments, 1, n / (segments ? segments : 1) / 3, (int)(di & 1),
                               GPUPRIM_DTYPE_I32);
            free(keys);
        }
    }
}

static long double sum_bound(uint64_t n, gpuprim_dtype_t d) {
    uint64_t leaves = (n + 511) / 512, depth = 0;
    while ((1ull << depth) < leaves) ++depth;
    return (long double)(15 + 5 + depth) * tc_epsilon(d) / 2; /* u = eps / 2 */
}

static void test_accuracy(void) {
    const uint64_t n = 3000017;
    gpuprim_dtype_t dts[2] = {GPUPRIM_DTYPE_F32, GPUPRIM_DTYPE_F64};
    int k, t;
    for (k = 0; k < 2; ++k) {
        gpuprim_dtype_t d = dts[k];
        void *a = tc_xmalloc(n * 8), *b = tc_xmalloc(n * 8);
        long double exact = 0, exact_dot = 0, sumabs = 0, sumabs_dot = 0, running = 0, running_abs = 0;
        long double scan_bound_factor = (long double)(8192 + (n + 8191) / 8192) * tc_epsilon(d) / 2;
        uint64_t i, got = 0, got_dot = 0, worst_at = 0;
        long double worst = 0;
        void *scanned;
        gpuprim_buffer_t in, other, out;
        tc_where("float accuracy: %s x %llu", tc_dtype_name(d), (unsigned long long)n);
        for (i = 0; i < n; ++i) {
            tc_set(d, a, i, tc_from_double(d, tc_uniform()));
            tc_set(d, b, i, tc_from_double(d, 2.0 * tc_uniform() - 1.0));
            exact += tc_value(d, tc_get(d, a, i));
            sumabs += fabsl(tc_value(d, tc_get(d, a, i)));
            exact_dot += tc_value(d, tc_get(d, a, i)) * tc_value(d, tc_get(d, b, i));
            sumabs_dot += fabsl(tc_value(d, tc_get(d, a, i)) * tc_value(d, tc_get(d, b, i)));
        }
        for (t = 0; t < THREAD_COUNTS; ++t) {
            gpuprim_context_t ctx = contexts[t];
            long double err;
            in = tc_buffer_from(ctx, d, a, n);
            other = tc_buffer_from(ctx, d, b, n);
            CHECK_OK(gpuprim_reduce(ctx, GPUPRIM_OP_SUM, in, &got));
            CHECK_OK(gpuprim_dot(ctx, in, other, &got_dot));
            err = fabsl(tc_value(d, tc_get(d, &got, 0)) - exact);
            CHECKF(err <= sum_bound(n, d) * sumabs, "%s sum error %Lg above the bound %Lg", tc_dtype_name(d), err,
                   sum_bound(n, d) * sumabs);
            CHECKF(err / exact < (d == GPUPRIM_DTYPE_F32 ? 1e-6L : 1e-14L), "%s sum relative error %Lg",
                   tc_dtype_name(d), err / exact);
            if (t == 0)
                printf("  %s sum of %llu uniform [0,1): relative error %.3Lg (bound %.3Lg)\n", tc_dtype_name(d),
                       (unsigned long long)n, err / exact, sum_bound(n, d) * sumabs / exact);
            err = fabsl(tc_value(d, tc_get(d, &got_dot, 0)) - exact_dot);
            CHECKF(err <= sum_bound(n, d) * sumabs_dot, "%s dot error %Lg above the bound %Lg", tc_dtype_name(d),
                   err, sum_bound(n, d) * sumabs_dot);
            if (t == 0) {
                out = tc_buffer(ctx, d, n);
                CHECK_OK(gpuprim_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, in, out));
                scanned = tc_download(ctx, out, d, n);
                running = running_abs = 0;
                worst = 0;
                for (i = 0; i < n; ++i) {
                    long double e;
                    running += tc_value(d, tc_get(d, a, i));
                    running_abs += fabsl(tc_value(d, tc_get(d, a, i)));
                    e = fabsl(tc_value(d, tc_get(d, scanned, i)) - running) / running_abs;
                    if (e > worst) {
                        worst = e;
                        worst_at = i;
                    }
                }
                CHECKF(worst <= scan_bound_factor, "%s scan error %Lg sum|x| at [%llu], above %Lg", tc_dtype_name(d),
                       worst, (unsigned long long)worst_at, scan_bound_factor);
                printf("  %s inclusive scan: worst error %.3Lg sum|x| (bound %.3Lg)\n", tc_dtype_name(d), worst,
                       scan_bound_factor);
                free(scanned);
                CHECK_OK(gpuprim_buffer_destroy(ctx, out));
            }
            CHECK_OK(gpuprim_buffer_destroy(ctx, in));
            CHECK_OK(gpuprim_buffer_destroy(ctx, other));
        }
        free(a);
        free(b);
    }
}

int main(void) {
    int t;
    gpuprim_context_t ctx = tc_init("test_cpu_threads");
    for (t = 0; t < THREAD_COUNTS; ++t) contexts[t] = cpu_context(kThreads[t]);
    test_determinism();
    test_segmented_determinism();
    test_topk_determinism();
    test_accuracy();
    for (t = 0; t < THREAD_COUNTS; ++t) CHECK_OK(gpuprim_context_destroy(contexts[t]));
    (void)ctx;
    return tc_finish();
}
