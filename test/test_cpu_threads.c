/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CPU backend's thread count (options.cpu_threads) changes no bit of
 * any result: every op and dtype, on counts that take the parallel paths
 * (reduce from 2^15, scan from 2^16, sort from 2^17 elements; 7 threads
 * merge 4 sorted runs in two rounds), on 1, 2 and 7 threads.
 * The segmented calls too (reduce, scan, sort, argsort, bit ranges) on
 * short and long segments. Top-k (flat, rows, CSR; short and long
 * segments, small k and k past a quarter of a segment) likewise. The calls
 * are each registry case's thread plan (test/registry/<case>_case.c).
 * And the float SUM / dot / scan error bounds the header states, against a
 * long double reference: SUM and dot within
 * (15 + log2(32) + ceil(log2(ceil(n / 512)))) u sum|x| and, on uniform
 * [0, 1) input, a relative error below 1e-6 (f32: numpy's pairwise sum
 * gives 2e-8); an inclusive scan's outputs within (8192 + blocks) u sum|x|.
 * With --cap, the thread counts are INT32_MAX and 0 (every CPU; ctest also
 * runs it with OMP_NUM_THREADS=100000, the OpenMP engine's default) instead,
 * each against 1 thread. The header's rule:
 * accepted, and a call never runs on more threads than the CPUs. (OpenMP
 * used to start every thread asked for: a reduce of 300,000 elements on
 * 100,000 threads died of SIGSEGV inside libgomp.)
 */
#include "registry/registry_main.h"

#define THREAD_COUNTS 3
static const int32_t kUsualThreads[THREAD_COUNTS] = {1, 2, 7};
static const int32_t kCapThreads[THREAD_COUNTS] = {1, INT32_MAX, 0};
/* The run's thread counts; [0] is 1, which the others are compared with. */
static const int32_t *kThreads = kUsualThreads;
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

/* Every call of every registry case's thread plan (test/registry/) on each
 * context: every output byte as on 1 thread. */
typedef struct {
    long calls;
} threads_run_t;

static void threads_visit(const tr_call_t *call, void *user) {
    tr_result_t first, got;
    char why[256] = "";
    int t;
    tc_where("%s", call->label);
    ((threads_run_t *)user)->calls++;
    tr_run(call, contexts[0], &first);
    CHECKF(first.status == call->expect, "1 thread returned %d (%s)", (int)first.status, first.message);
    for (t = 1; t < THREAD_COUNTS; ++t) {
        tr_run(call, contexts[t], &got);
        CHECKF(got.status == call->expect, "%d threads returned %d (%s)", (int)kThreads[t], (int)got.status,
               got.message);
        if (first.status == GPUPRIM_SUCCESS && got.status == GPUPRIM_SUCCESS)
            CHECKF(tr_same_bits(call, &first, &got, why, sizeof why), "%d threads differ from 1 thread: %s",
                   (int)kThreads[t], why);
        tr_result_free(&got);
    }
    tr_result_free(&first);
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

/* test_cpu_threads [--cap] [case ... | accuracy]: the registry's cases
 * named (all of them and the accuracy bounds without arguments). */
int main(int argc, char **argv) {
    threads_run_t run;
    int t, i, accuracy = argc < 2, named = 0, cap = 0;
    char **names = (char **)tc_xmalloc(sizeof(char *) * (size_t)(argc + 1));
    gpuprim_context_t ctx = tc_init("test_cpu_threads");
    names[named++] = argv[0];
    for (i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "accuracy") == 0) accuracy = 1;
        else if (strcmp(argv[i], "--cap") == 0) {
            kThreads = kCapThreads;
            cap = 1;
        } else names[named++] = argv[i];
    }
    for (t = 0; t < THREAD_COUNTS; ++t) contexts[t] = cpu_context(kThreads[t]);
    memset(&run, 0, sizeof run);
    /* No case named: all of them (with --cap alone too). */
    if (argc < 2 || named > 1 || (cap && named == 1))
        tr_for_named_cases(named, names, TR_PLAN_THREADS, threads_visit, &run, &run.calls);
    printf("test_cpu_threads: %ld calls on %d thread counts (1, %ld, %ld)\n", run.calls, THREAD_COUNTS,
           (long)kThreads[1], (long)kThreads[2]);
    if (accuracy) test_accuracy();
    for (t = 0; t < THREAD_COUNTS; ++t) CHECK_OK(gpuprim_context_destroy(contexts[t]));
    free(names);
    (void)ctx;
    return tc_finish();
}
