/* SPDX-License-Identifier: Apache-2.0 */
/*
 * options.cpu_threads far above the CPUs (the header's rule: accepted, and
 * a call never runs on more threads than the CPUs the process may run on):
 * CPU contexts of 100,000 and INT32_MAX threads run reduce, argmin/argmax, dot, scan, sort
 * (keys, pairs, argsort), segmented reduce, scan and sort, and top-k, and
 * give bitwise the results of a 1-thread context, quickly. (OpenMP used to
 * start every thread asked for: a reduce of 300,000 elements on 100,000
 * threads died of SIGSEGV inside libgomp.) The default context (0, every
 * CPU) too: ctest runs this test a second time with OMP_NUM_THREADS=100000,
 * the OpenMP engine's default.
 */
#include "test_common.h"

#define COUNTS 3
static const int32_t kThreads[COUNTS] = {1, 100000, INT32_MAX};

static gpuprim_context_t cpu_context(int32_t threads) {
    gpuprim_context_options_t options;
    gpuprim_context_t ctx = NULL;
    char message[256] = "";
    gpuprim_status_t status;
    gpuprim_context_options_init(&options);
    options.backend = GPUPRIM_BACKEND_CPU;
    options.cpu_threads = threads;
    status = gpuprim_context_create(&options, &ctx, message, sizeof message);
    CHECKF(status == GPUPRIM_SUCCESS, "no CPU context with cpu_threads = %ld: %d (%s): %s", (long)threads,
           (int)status, gpuprim_get_error_string(status), message);
    if (status != GPUPRIM_SUCCESS) tc_abort();
    return ctx;
}

/* Every output of one run, in host memory, for comparing runs bitwise. */
typedef struct outputs {
    uint32_t sum;
    uint64_t argmin, argmax, float_argmin;
    float dot;
    uint32_t *scanned, *sorted, *pair_values, *seg_sorted, *seg_scanned, *seg_sums, *top, *top_index;
    int64_t *order;
} outputs_t;

#define N 300000u          /* the report's reduce */
#define SORT_N (1u << 21)  /* 16 runs of 2^17 when cut for many threads */
#define ROWS 3u            /* of 100,000: long segments, threaded */
#define TOP_K 100u

static void run_all(gpuprim_context_t ctx, const uint32_t *keys, const float *floats, outputs_t *o) {
    gpuprim_buffer_t in, big, out, values, values_out, idx, fa, sums, top, top_index;
    gpuprim_segments_t seg;
    uint32_t *iota = (uint32_t *)tc_xmalloc(sizeof(uint32_t) * SORT_N), i;
    for (i = 0; i < SORT_N; ++i) iota[i] = i;

    in = tc_buffer_from(ctx, GPUPRIM_DTYPE_U32, keys, N);
    CHECK_OK(gpuprim_reduce(ctx, GPUPRIM_OP_SUM, in, &o->sum));
    CHECK_OK(gpuprim_argreduce(ctx, GPUPRIM_OP_MIN, in, &o->argmin));
    CHECK_OK(gpuprim_argreduce(ctx, GPUPRIM_OP_MAX, in, &o->argmax));
    fa = tc_buffer_from(ctx, GPUPRIM_DTYPE_F32, floats, N);
    CHECK_OK(gpuprim_argreduce(ctx, GPUPRIM_OP_MIN, fa, &o->float_argmin));
    CHECK_OK(gpuprim_dot(ctx, fa, fa, &o->dot));
    out = tc_buffer(ctx, GPUPRIM_DTYPE_U32, N);
    CHECK_OK(gpuprim_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_EXCLUSIVE, in, out));
    o->scanned = (uint32_t *)tc_download(ctx, out, GPUPRIM_DTYPE_U32, N);

    gpuprim_segments_init_rows(&seg, ROWS, N / ROWS);
    sums = tc_buffer(ctx, GPUPRIM_DTYPE_U32, ROWS);
    CHECK_OK(gpuprim_segmented_reduce(ctx, GPUPRIM_OP_MAX, &seg, in, sums));
    o->seg_sums = (uint32_t *)tc_download(ctx, sums, GPUPRIM_DTYPE_U32, ROWS);
    CHECK_OK(gpuprim_segmented_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, &seg, in, out));
    o->seg_scanned = (uint32_t *)tc_download(ctx, out, GPUPRIM_DTYPE_U32, N);
    CHECK_OK(gpuprim_segmented_sort(ctx, &seg, in, NULL, out, NULL, NULL));
    o->seg_sorted = (uint32_t *)tc_download(ctx, out, GPUPRIM_DTYPE_U32, N);
    top = tc_buffer(ctx, GPUPRIM_DTYPE_U32, TOP_K);
    top_index = tc_buffer(ctx, GPUPRIM_DTYPE_U32, TOP_K);
    CHECK_OK(gpuprim_topk(ctx, in, TOP_K, GPUPRIM_ORDER_DESCENDING, top, top_index));
    o->top = (uint32_t *)tc_download(ctx, top, GPUPRIM_DTYPE_U32, TOP_K);
    o->top_index = (uint32_t *)tc_download(ctx, top_index, GPUPRIM_DTYPE_U32, TOP_K);

    big = tc_buffer_from(ctx, GPUPRIM_DTYPE_U32, keys, SORT_N);
    CHECK_OK(gpuprim_buffer_destroy(ctx, out));
    out = tc_buffer(ctx, GPUPRIM_DTYPE_U32, SORT_N);
    values = tc_buffer_from(ctx, GPUPRIM_DTYPE_U32, iota, SORT_N);
    values_out = tc_buffer(ctx, GPUPRIM_DTYPE_U32, SORT_N);
    CHECK_OK(gpuprim_sort(ctx, big, values, out, values_out, GPUPRIM_ORDER_ASCENDING));
    o->sorted = (uint32_t *)tc_download(ctx, out, GPUPRIM_DTYPE_U32, SORT_N);
    o->pair_values = (uint32_t *)tc_download(ctx, values_out, GPUPRIM_DTYPE_U32, SORT_N);
    idx = tc_buffer(ctx, GPUPRIM_DTYPE_I64, SORT_N);
    CHECK_OK(gpuprim_argsort(ctx, big, NULL, idx, NULL));
    o->order = (int64_t *)tc_download(ctx, idx, GPUPRIM_DTYPE_I64, SORT_N);

    CHECK_OK(gpuprim_buffer_destroy(ctx, in));
    CHECK_OK(gpuprim_buffer_destroy(ctx, big));
    CHECK_OK(gpuprim_buffer_destroy(ctx, fa));
    CHECK_OK(gpuprim_buffer_destroy(ctx, out));
    CHECK_OK(gpuprim_buffer_destroy(ctx, values));
    CHECK_OK(gpuprim_buffer_destroy(ctx, values_out));
    CHECK_OK(gpuprim_buffer_destroy(ctx, idx));
    CHECK_OK(gpuprim_buffer_destroy(ctx, sums));
    CHECK_OK(gpuprim_buffer_destroy(ctx, top));
    CHECK_OK(gpuprim_buffer_destroy(ctx, top_index));
    free(iota);
}

static void free_outputs(outputs_t *o) {
    free(o->scanned);
    free(o->sorted);
    free(o->pair_values);
    free(o->seg_sorted);
    free(o->seg_scanned);
    free(o->seg_sums);
    free(o->top);
    free(o->top_index);
    free(o->order);
}

static void compare(const outputs_t *a, const outputs_t *b, const char *what) {
    uint64_t i;
    int sorted = 1;
    CHECKF(a->sum == b->sum, "%s: reduce %u, 1 thread %u", what, (unsigned)b->sum, (unsigned)a->sum);
    CHECKF(a->argmin == b->argmin && a->argmax == b->argmax && a->float_argmin == b->float_argmin,
           "%s: argmin/argmax %llu/%llu/%llu, 1 thread %llu/%llu/%llu", what, (unsigned long long)b->argmin,
           (unsigned long long)b->argmax, (unsigned long long)b->float_argmin, (unsigned long long)a->argmin,
           (unsigned long long)a->argmax, (unsigned long long)a->float_argmin);
    CHECKF(memcmp(&a->dot, &b->dot, sizeof a->dot) == 0, "%s: dot %.9g, 1 thread %.9g", what, (double)b->dot,
           (double)a->dot);
    CHECKF(memcmp(a->scanned, b->scanned, sizeof(uint32_t) * N) == 0, "%s: scan differs", what);
    CHECKF(memcmp(a->seg_sums, b->seg_sums, sizeof(uint32_t) * ROWS) == 0, "%s: segmented reduce differs", what);
    CHECKF(memcmp(a->seg_scanned, b->seg_scanned, sizeof(uint32_t) * N) == 0, "%s: segmented scan differs", what);
    CHECKF(memcmp(a->seg_sorted, b->seg_sorted, sizeof(uint32_t) * N) == 0, "%s: segmented sort differs", what);
    CHECKF(memcmp(a->top, b->top, sizeof(uint32_t) * TOP_K) == 0 &&
               memcmp(a->top_index, b->top_index, sizeof(uint32_t) * TOP_K) == 0,
           "%s: top-k differs", what);
    CHECKF(memcmp(a->sorted, b->sorted, sizeof(uint32_t) * SORT_N) == 0, "%s: sort differs", what);
    CHECKF(memcmp(a->pair_values, b->pair_values, sizeof(uint32_t) * SORT_N) == 0, "%s: pairs sort differs", what);
    CHECKF(memcmp(a->order, b->order, sizeof(int64_t) * SORT_N) == 0, "%s: argsort differs", what);
    for (i = 1; i < SORT_N; ++i) sorted &= b->sorted[i - 1] <= b->sorted[i];
    CHECKF(sorted, "%s: the sort's output is not ascending", what);
}

int main(void) {
    gpuprim_context_t ctx = tc_init("test_cpu_thread_cap");
    uint32_t *keys = (uint32_t *)tc_xmalloc(sizeof(uint32_t) * SORT_N), i;
    float *floats = (float *)tc_xmalloc(sizeof(float) * N);
    outputs_t reference, got;
    int t;
    for (i = 0; i < SORT_N; ++i) keys[i] = (uint32_t)tc_rand() % 1000003u;
    for (i = 0; i < N; ++i) floats[i] = (float)tc_uniform();
    for (t = 0; t < COUNTS + 1; ++t) {
        /* The last round: cpu_threads 0 (the engine's default). */
        const int32_t threads = t < COUNTS ? kThreads[t] : 0;
        gpuprim_context_t cpu = cpu_context(threads);
        char what[64];
        const double start = tc_seconds();
        snprintf(what, sizeof what, "cpu_threads = %ld", (long)threads);
        tc_where("%s", what);
        run_all(cpu, keys, floats, t == 0 ? &reference : &got);
        printf("  %s: every call in %.3f s\n", what, tc_seconds() - start);
        if (t > 0) {
            compare(&reference, &got, what);
            free_outputs(&got);
        }
        CHECK_OK(gpuprim_context_destroy(cpu));
    }
    free_outputs(&reference);
    free(keys);
    free(floats);
    (void)ctx;
    return tc_finish();
}
