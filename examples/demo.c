/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libgpuprim demo: 10 million random u32 keys are sorted (with their indices
 * as values), prefix-summed and reduced on the context's backend; every
 * result is verified on the host. Prints the backend, the device and how long
 * each step took (first call, then the median of 5 steady-state calls; 1 on CPU).
 * Exits non-zero on a wrong result.
 *
 *   demo [count]          GPUPRIM_BACKEND=cpu|cuda chooses the backend
 */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#  define _POSIX_C_SOURCE 200809L
#endif
#include <gpuprim/gpuprim.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static gpuprim_context_t ctx;

#define CHECK(call)                                                                           \
    do {                                                                                      \
        gpuprim_status_t status_ = (call);                                                    \
        if (status_ != GPUPRIM_SUCCESS) {                                                     \
            fprintf(stderr, "demo: %s failed: %s: %s\n", #call, gpuprim_get_error_string(status_), \
                    gpuprim_context_last_error(ctx));                                         \
            exit(2);                                                                          \
        }                                                                                     \
    } while (0)

static double now_ms(void) {
#if defined(CLOCK_MONOTONIC) && !defined(_WIN32)
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
#else
    return 1e3 * (double)clock() / CLOCKS_PER_SEC;
#endif
}

static void *xmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "demo: out of host memory\n");
        exit(2);
    }
    return p;
}

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Times one stream-ordered step: the first call (which also sets up the
 * workspace), then the median of `repeats` more. */
static int repeats = 5;
typedef void (*step_fn)(void *arg);
static void time_step(const char *name, step_fn step, void *arg, uint64_t n) {
    double first, runs[5], start, median;
    int i;
    start = now_ms();
    step(arg);
    CHECK(gpuprim_context_synchronize(ctx));
    first = now_ms() - start;
    for (i = 0; i < repeats; ++i) {
        start = now_ms();
        step(arg);
        CHECK(gpuprim_context_synchronize(ctx));
        runs[i] = now_ms() - start;
    }
    qsort(runs, (size_t)repeats, sizeof runs[0], compare_double);
    median = runs[repeats / 2];
    printf("  %-26s first %9.3f ms   steady %9.3f ms  (%8.1f M elements/s)\n", name, first, median,
           median > 0 ? (double)n / median / 1e3 : 0.0);
}

struct buffers {
    gpuprim_buffer_t keys, indices, sorted_keys, sorted_indices, prefix;
    uint32_t sum, min, max;
};

static void sort_step(void *arg) {
    struct buffers *b = (struct buffers *)arg;
    CHECK(gpuprim_sort(ctx, b->keys, b->indices, b->sorted_keys, b->sorted_indices, GPUPRIM_ORDER_ASCENDING));
}
static void scan_step(void *arg) {
    struct buffers *b = (struct buffers *)arg;
    CHECK(gpuprim_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, b->keys, b->prefix));
}
static void reduce_step(void *arg) {
    struct buffers *b = (struct buffers *)arg;
    CHECK(gpuprim_reduce(ctx, GPUPRIM_OP_SUM, b->keys, &b->sum));
    CHECK(gpuprim_reduce(ctx, GPUPRIM_OP_MIN, b->keys, &b->min));
    CHECK(gpuprim_reduce(ctx, GPUPRIM_OP_MAX, b->keys, &b->max));
}

static int report(const char *what, int ok) {
    printf("  %-26s %s\n", what, ok ? "verified" : "WRONG");
    return ok;
}

int main(int argc, char **argv) {
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 10000000, i, state;
    uint32_t *keys, *indices, *out_keys, *out_indices, *prefix;
    uint32_t sum = 0, min = 0xFFFFFFFFu, max = 0, running = 0;
    char message[256], device[128];
    gpuprim_backend_t backend;
    int32_t ordinal;
    struct buffers b;
    double start;
    int ok = 1, sort_ok = 1, scan_ok = 1;
    unsigned char *seen;

    if (n >= ((uint64_t)1 << 32)) {
        fprintf(stderr, "demo: count must be below 2^32 (the indices are u32)\n");
        return 2;
    }
    if (gpuprim_context_create(NULL, &ctx, message, sizeof message) != GPUPRIM_SUCCESS) {
        fprintf(stderr, "demo: no context: %s\n", message);
        return 2;
    }
    CHECK(gpuprim_context_get_backend(ctx, &backend));
    CHECK(gpuprim_context_get_device(ctx, &ordinal, device, sizeof device));
    printf("libgpuprim %s demo: %llu random u32 keys on the %s backend, device %d \"%s\"\n",
           gpuprim_version_string(), (unsigned long long)n, backend == GPUPRIM_BACKEND_CUDA ? "CUDA" : "CPU",
           (int)ordinal, device);
    if (backend != GPUPRIM_BACKEND_CUDA) repeats = 1; /* the CPU is slow and steady */

    keys = (uint32_t *)xmalloc(n * 4);
    indices = (uint32_t *)xmalloc(n * 4);
    out_keys = (uint32_t *)xmalloc(n * 4);
    out_indices = (uint32_t *)xmalloc(n * 4);
    prefix = (uint32_t *)xmalloc(n * 4);
    state = (uint64_t)time(NULL) | 1;
    for (i = 0; i < n; ++i) { /* xorshift64* */
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        keys[i] = (uint32_t)((state * 0x2545F4914F6CDD1Dull) >> 32);
        indices[i] = (uint32_t)i;
    }

    start = now_ms();
    CHECK(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U32, n, &b.keys));
    CHECK(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U32, n, &b.indices));
    CHECK(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U32, n, &b.sorted_keys));
    CHECK(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U32, n, &b.sorted_indices));
    CHECK(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U32, n, &b.prefix));
    CHECK(gpuprim_buffer_upload(ctx, b.keys, 0, keys, n));
    CHECK(gpuprim_buffer_upload(ctx, b.indices, 0, indices, n));
    printf("  %-26s       %9.3f ms\n", "create + upload", now_ms() - start);

    time_step("sort pairs (key, index)", sort_step, &b, n);
    time_step("inclusive sum scan", scan_step, &b, n);
    time_step("reduce sum, min, max", reduce_step, &b, n);

    start = now_ms();
    CHECK(gpuprim_buffer_download(ctx, b.sorted_keys, 0, out_keys, n));
    CHECK(gpuprim_buffer_download(ctx, b.sorted_indices, 0, out_indices, n));
    CHECK(gpuprim_buffer_download(ctx, b.prefix, 0, prefix, n));
    printf("  %-26s       %9.3f ms\n", "download", now_ms() - start);

    /* sort: ordered, each key came with its own index, indices a permutation,
     * equal keys in input order (stable) */
    seen = (unsigned char *)calloc(n ? n : 1, 1);
    if (!seen) return 2;
    for (i = 0; i < n && sort_ok; ++i) {
        uint32_t index = out_indices[i];
        if (index >= n || seen[index] || keys[index] != out_keys[i]) sort_ok = 0;
        else seen[index] = 1;
        if (i > 0 && (out_keys[i - 1] > out_keys[i] ||
                      (out_keys[i - 1] == out_keys[i] && out_indices[i - 1] > out_indices[i])))
            sort_ok = 0;
    }
    free(seen);
    ok &= report("sort", sort_ok);

    for (i = 0; i < n; ++i) {
        sum += keys[i]; /* wraps like the library's u32 sum */
        if (keys[i] < min) min = keys[i];
        if (keys[i] > max) max = keys[i];
        running += keys[i];
        if (prefix[i] != running) scan_ok = 0;
    }
    ok &= report("scan", scan_ok);
    ok &= report("reduce", b.sum == sum && b.min == min && b.max == max);
    printf("  sum (mod 2^32) %u, min %u, max %u\n", b.sum, b.min, b.max);

    CHECK(gpuprim_buffer_destroy(ctx, b.keys));
    CHECK(gpuprim_buffer_destroy(ctx, b.indices));
    CHECK(gpuprim_buffer_destroy(ctx, b.sorted_keys));
    CHECK(gpuprim_buffer_destroy(ctx, b.sorted_indices));
    CHECK(gpuprim_buffer_destroy(ctx, b.prefix));
    CHECK(gpuprim_context_destroy(ctx));
    free(keys);
    free(indices);
    free(out_keys);
    free(out_indices);
    free(prefix);
    printf("demo: %s\n", ok ? "all results verified" : "WRONG RESULTS");
    return ok ? 0 : 1;
}
