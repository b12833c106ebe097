/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CPU backend's thread count (options.cpu_threads) changes no bit of
 * any result: every op and dtype, on counts that take the parallel paths
 * (reduce from 2^15, scan from 2^16, sort from 2^17 elements; 7 threads
 * merge 4 sorted runs in two rounds), on 1, 2 and 7 threads.
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
    test_accuracy();
    for (t = 0; t < THREAD_COUNTS; ++t) CHECK_OK(gpuprim_context_destroy(contexts[t]));
    (void)ctx;
    return tc_finish();
}
