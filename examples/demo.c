/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libgpuprim demo: 10 million random u32 keys are sorted (with their indices
 * as values), prefix-summed and reduced on the context's backend; every
 * result is verified on the host. Prints which backend runs and why, then a
 * table of each step's time: the first call (which also sets up the device
 * workspace) and the steady state (median of 5 more calls on a GPU, the
 * second call on the CPU). Exits non-zero on a wrong result.
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

/* One row of the table printed at the end. */
struct row {
    const char *name;
    double first_ms, steady_ms; /* steady_ms < 0: the step runs once */
    uint64_t elements;
    const char *result; /* "verified", "WRONG" or "" */
};
static struct row rows[8];
static int row_count;

static struct row *add_row(const char *name, double first_ms, double steady_ms, uint64_t elements) {
    struct row *r = &rows[row_count++];
    r->name = name;
    r->first_ms = first_ms;
    r->steady_ms = steady_ms;
    r->elements = elements;
    r->result = "";
    return r;
}

/* Times one stream-ordered step: the first call (which also sets up the
 * workspace), then the median of `repeats` more. */
static int repeats = 5;
typedef void (*step_fn)(void *arg);
static struct row *time_step(const char *name, step_fn step, void *arg, uint64_t n) {
    double first, runs[5], start;
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
    return add_row(name, first, runs[repeats / 2], n);
}

static void print_table(void) {
    int i;
    printf("\n  %-24s %12s %13s %15s   %s\n", "step", "first call", "steady state", "throughput", "result");
    for (i = 0; i < row_count; ++i) {
        const struct row *r = &rows[i];
        char steady[32] = "", rate[32] = "";
        if (r->steady_ms >= 0) {
            snprintf(steady, sizeof steady, "%10.3f ms", r->steady_ms);
            if (r->steady_ms > 0)
                snprintf(rate, sizeof rate, "%8.1f Mkeys/s", (double)r->elements / r->steady_ms / 1e3);
        }
        if (r->result[0])
            printf("  %-24s %9.3f ms %13s %15s   %s\n", r->name, r->first_ms, steady, rate, r->result);
        else if (steady[0])
            printf("  %-24s %9.3f ms %13s %15s\n", r->name, r->first_ms, steady, rate);
        else
            printf("  %-24s %9.3f ms\n", r->name, r->first_ms);
    }
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

static int report(struct row *r, int ok) {
    r->result = ok ? "verified" : "WRONG";
    return ok;
}

/* One line saying which backend runs and why (a CPU run on a machine without
 * a GPU says what is missing). */
static void explain_backend(gpuprim_backend_t backend) {
    const char *forced = getenv("GPUPRIM_BACKEND");
    gpuprim_context_options_t options;
    gpuprim_context_t probe = NULL;
    char why[256] = "";

    if (backend == GPUPRIM_BACKEND_CUDA) {
        printf("Running on the GPU (CUDA backend)%s.\n",
               forced && forced[0] ? " as GPUPRIM_BACKEND asks" : "");
        return;
    }
    if (forced && forced[0]) {
        printf("Running on the CPU, as GPUPRIM_BACKEND=%s asks.\n", forced);
        return;
    }
    /* Ask for CUDA explicitly: the error says why it cannot run here. */
    gpuprim_context_options_init(&options);
    options.backend = GPUPRIM_BACKEND_CUDA;
    if (gpuprim_context_create(&options, &probe, why, sizeof why) == GPUPRIM_SUCCESS) {
        gpuprim_context_destroy(probe); /* a device appeared since: AUTO picked the CPU anyway */
        printf("Running on the CPU.\n");
    } else if (strstr(why, "built without CUDA")) {
        printf("CUDA backend not built (configured without nvcc or without a GPU, or with GPUPRIM_WITH_CUDA=OFF): running on the CPU.\n");
    } else {
        printf("CUDA backend built, but %s: running on the CPU.\n", why);
    }
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
    struct row *sort_row, *scan_row, *reduce_row;
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
    printf("libgpuprim %s demo: sort, scan and reduce %llu random u32 keys; every result is checked on the host.\n",
           gpuprim_version_string(), (unsigned long long)n);
    explain_backend(backend);
    if (backend == GPUPRIM_BACKEND_CUDA)
        printf("  backend CUDA, device %d: %s\n", (int)ordinal, device);
    else
        printf("  backend CPU (host memory, no GPU device)\n");
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
    add_row("create + upload", now_ms() - start, -1, n);

    sort_row = time_step("sort (key, index) pairs", sort_step, &b, n);
    scan_row = time_step("inclusive sum scan", scan_step, &b, n);
    reduce_row = time_step("reduce: sum, min, max", reduce_step, &b, n);

    start = now_ms();
    CHECK(gpuprim_buffer_download(ctx, b.sorted_keys, 0, out_keys, n));
    CHECK(gpuprim_buffer_download(ctx, b.sorted_indices, 0, out_indices, n));
    CHECK(gpuprim_buffer_download(ctx, b.prefix, 0, prefix, n));
    add_row("download", now_ms() - start, -1, n);

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
    ok &= report(sort_row, sort_ok);

    for (i = 0; i < n; ++i) {
        sum += keys[i]; /* wraps like the library's u32 sum */
        if (keys[i] < min) min = keys[i];
        if (keys[i] > max) max = keys[i];
        running += keys[i];
        if (prefix[i] != running) scan_ok = 0;
    }
    ok &= report(scan_row, scan_ok);
    ok &= report(reduce_row, b.sum == sum && b.min == min && b.max == max);
    print_table();
    if (repeats > 1)
        printf("  first call: includes one-time set-up (device workspace); steady state: median of %d more calls\n",
               repeats);
    else
        printf("  first call: includes one-time set-up; steady state: the second call\n");
    printf("  reduce results: sum (mod 2^32) %u, min %u, max %u\n", b.sum, b.min, b.max);

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
