/* SPDX-License-Identifier: Apache-2.0 */
/* Host cost of one API call's handle validation: a tight loop of calls that
 * do nothing but check their handles (get_info, get_backend), on one thread
 * and on several threads each with a context of its own (which shows any
 * contention on shared validation state). A measurement tool, not a test:
 *   rel_call_overhead [threads] [calls per thread]
 * prints nanoseconds per call (median of 5 runs). GPUPRIM_BACKEND chooses the
 * backend; the calls measured never reach the device. */
#define _POSIX_C_SOURCE 200809L

#include "rel_common.h"

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#define MAX_THREADS 64
#define RUNS 5

static long g_calls = 2000000;

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct {
    gpuprim_context_t context;
    gpuprim_buffer_t buffer;
    double seconds_info;
    double seconds_backend;
} Worker;

static void *run(void *argument) {
    Worker *w = (Worker *)argument;
    gpuprim_dtype_t dtype;
    gpuprim_backend_t backend;
    uint64_t count = 0;
    long i;
    double start = now_seconds();
    for (i = 0; i < g_calls; ++i)
        if (gpuprim_buffer_get_info(w->context, w->buffer, &dtype, &count, NULL) != GPUPRIM_SUCCESS)
            rel_fail(__FILE__, __LINE__, "get_info failed");
    w->seconds_info = now_seconds() - start;
    start = now_seconds();
    for (i = 0; i < g_calls; ++i)
        if (gpuprim_context_get_backend(w->context, &backend) != GPUPRIM_SUCCESS)
            rel_fail(__FILE__, __LINE__, "get_backend failed");
    w->seconds_backend = now_seconds() - start;
    return NULL;
}

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 1, t, r;
    Worker workers[MAX_THREADS];
    pthread_t ids[MAX_THREADS];
    double info[RUNS], backend[RUNS];
    if (argc > 2) g_calls = atol(argv[2]);
    if (threads < 1 || threads > MAX_THREADS) threads = 1;
    for (t = 0; t < threads; ++t) {
        workers[t].context = rel_context(GPUPRIM_BACKEND_AUTO);
        REL_OK(workers[t].context, gpuprim_buffer_create(workers[t].context, GPUPRIM_DTYPE_F32, 16,
                                                         &workers[t].buffer));
    }
    for (r = 0; r < RUNS; ++r) {
        double worst_info = 0, worst_backend = 0;
        for (t = 0; t < threads; ++t) pthread_create(&ids[t], NULL, run, &workers[t]);
        for (t = 0; t < threads; ++t) {
            pthread_join(ids[t], NULL);
            if (workers[t].seconds_info > worst_info) worst_info = workers[t].seconds_info;
            if (workers[t].seconds_backend > worst_backend) worst_backend = workers[t].seconds_backend;
        }
        info[r] = worst_info * 1e9 / (double)g_calls;
        backend[r] = worst_backend * 1e9 / (double)g_calls;
    }
    qsort(info, RUNS, sizeof info[0], compare_double);
    qsort(backend, RUNS, sizeof backend[0], compare_double);
    printf("%s backend, %d thread(s), a context each, %ld calls per thread per run, median of %d:\n",
           rel_backend_name(workers[0].context), threads, g_calls, RUNS);
    printf("  gpuprim_buffer_get_info      %7.1f ns per call\n", info[RUNS / 2]);
    printf("  gpuprim_context_get_backend  %7.1f ns per call\n", backend[RUNS / 2]);
    for (t = 0; t < threads; ++t) {
        REL_OK(workers[t].context, gpuprim_buffer_destroy(workers[t].context, workers[t].buffer));
        REL_OK(workers[t].context, gpuprim_context_destroy(workers[t].context));
    }
    return 0;
}
