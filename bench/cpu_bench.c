/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CPU backend's benchmark: every primitive x dtype at the given counts,
 * on 1 thread and on all threads (options.cpu_threads), median of R runs.
 * bench/run_cpu.sh runs it with numpy in the same run and writes the table.
 *
 *   gpuprim_cpu_bench [--counts 100000,1000000,10000000] [--reps 5]
 *                     [--threads 1,0]
 *                     [--ops sort_keys,sort_pairs,scan,sum,min,dot,topk_16,topk_1024,...]
 *                     [--dtypes i32,u32,i64,u64,f32,f64]
 *
 * One line per measurement on stdout:
 *   op dtype count threads median_ms min_ms
 * (threads 0 = every core). Inputs: uniform random bits for integers,
 * uniform [0, 1) for floats (the same seed every run). Sorts run out of
 * place (keys_in -> keys_out), pairs carry u32 values; scans are inclusive
 * sums out of place; sum/min are gpuprim_reduce to the host; dot is
 * gpuprim_dot to the host; topk_K is gpuprim_topk of the K (at most the
 * count) smallest keys with their I64 indices (numpy's: np.argpartition,
 * then the chosen sorted). searchsorted: the count's sorted keys, random
 * queries (searchsorted_sorted: sorted queries), I64 indices;
 * histogram_256: 256 even bins over the inputs' range; merge: two sorted
 * halves. Issue 37's: select_half keeps the keys below the middle of the
 * range (about half; gpuprim_select LESS, the count to the host); unique:
 * gpuprim_group_by of the keys alone (the sorted distinct keys, as
 * np.unique); groupby_sum: u32 keys of 1,024 distinct values, the dtype's
 * values summed per key (gpuprim_group_by SUM: keys and sums).
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#define GPUPRIM_EXPERIMENTAL_API  /* gpuprim_topk */
#include <gpuprim/gpuprim.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DIE(...)                                                                 \
    do {                                                                         \
        fprintf(stderr, "gpuprim_cpu_bench: " __VA_ARGS__);                      \
        fprintf(stderr, "\n");                                                   \
        exit(1);                                                                 \
    } while (0)
#define CK(call)                                                                       \
    do {                                                                               \
        gpuprim_status_t s_ = (call);                                                  \
        if (s_ != GPUPRIM_SUCCESS)                                                     \
            DIE("%s: %s: %s", #call, gpuprim_get_error_string(s_),                     \
                gpuprim_context_last_error(ctx));                                      \
    } while (0)

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t next_random(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void fill(gpuprim_dtype_t dtype, void *data, size_t n) {
    size_t i;
    for (i = 0; i < n; ++i) {
        uint64_t r = next_random();
        switch (dtype) {
        case GPUPRIM_DTYPE_I32:
        case GPUPRIM_DTYPE_U32: ((uint32_t *)data)[i] = (uint32_t)r; break;
        case GPUPRIM_DTYPE_I64:
        case GPUPRIM_DTYPE_U64: ((uint64_t *)data)[i] = r; break;
        case GPUPRIM_DTYPE_F32: ((float *)data)[i] = (float)(r >> 40) * (1.0f / 16777216.0f); break;
        case GPUPRIM_DTYPE_F64: ((double *)data)[i] = (double)(r >> 11) * (1.0 / 9007199254740992.0); break;
        /* 16-bit floats in [0.5, 1): the exponent of 0.5, a random mantissa */
        case GPUPRIM_DTYPE_F16: ((uint16_t *)data)[i] = (uint16_t)(0x3800u | (r & 0x3FFu)); break;
        case GPUPRIM_DTYPE_BF16: ((uint16_t *)data)[i] = (uint16_t)(0x3F00u | (r & 0x7Fu)); break;
        case GPUPRIM_DTYPE_I8:
        case GPUPRIM_DTYPE_U8: ((uint8_t *)data)[i] = (uint8_t)r; break;
        case GPUPRIM_DTYPE_I16:
        case GPUPRIM_DTYPE_U16: ((uint16_t *)data)[i] = (uint16_t)r; break;
        }
    }
}

static const struct {
    const char *name;
    gpuprim_dtype_t dtype;
} kDtypes[] = {{"i32", GPUPRIM_DTYPE_I32}, {"u32", GPUPRIM_DTYPE_U32}, {"i64", GPUPRIM_DTYPE_I64},
               {"u64", GPUPRIM_DTYPE_U64}, {"f32", GPUPRIM_DTYPE_F32}, {"f64", GPUPRIM_DTYPE_F64},
               {"f16", GPUPRIM_DTYPE_F16}, {"bf16", GPUPRIM_DTYPE_BF16}, {"i8", GPUPRIM_DTYPE_I8},
               {"u8", GPUPRIM_DTYPE_U8},   {"i16", GPUPRIM_DTYPE_I16},  {"u16", GPUPRIM_DTYPE_U16}};
static const char *kOps[] = {"sort_keys", "sort_pairs",   "scan",          "sum",          "min",
                             "dot",       "topk_16",      "topk_1024",     "searchsorted", "searchsorted_sorted",
                             "histogram_256", "merge", "select_half", "unique", "groupby_sum"};

/* value (a power of two, so exact in every float dtype) as dtype's bits in
 * out; 0 (nothing written) for an integer dtype. */
static int float_bits(gpuprim_dtype_t dtype, float value, unsigned char *out) {
    uint32_t bits;
    uint16_t narrow;
    memcpy(&bits, &value, 4);
    switch (dtype) {
    case GPUPRIM_DTYPE_F32: memcpy(out, &value, 4); return 1;
    case GPUPRIM_DTYPE_F64: {
        const double wide = value;
        memcpy(out, &wide, 8);
        return 1;
    }
    case GPUPRIM_DTYPE_BF16: narrow = (uint16_t)(bits >> 16); break;
    case GPUPRIM_DTYPE_F16: /* the exponent rebased from 127 to 15, the top 10 mantissa bits */
        narrow = (uint16_t)(((bits >> 16) & 0x8000u) | ((((bits >> 23) & 0xFFu) - 112u) << 10) | ((bits >> 13) & 0x3FFu));
        break;
    default: return 0;
    }
    memcpy(out, &narrow, 2);
    return 1;
}

/* A view of count elements of buffer b from element offset (a buffer of its own). */
static gpuprim_buffer_t view_of(gpuprim_context_t ctx, gpuprim_buffer_t b, gpuprim_dtype_t dtype, size_t offset,
                                size_t count) {
    void *data;
    gpuprim_buffer_t view;
    if (gpuprim_buffer_get_info(ctx, b, NULL, NULL, &data) != GPUPRIM_SUCCESS ||
        gpuprim_buffer_wrap(ctx, dtype, (char *)data + offset * gpuprim_dtype_size(dtype), count, &view) !=
            GPUPRIM_SUCCESS)
        DIE("view_of");
    return view;
}

static int listed(const char *list, const char *name) {
    size_t len = strlen(name);
    const char *p = list;
    if (!list) return 1;
    while ((p = strstr(p, name)) != NULL) {
        if ((p == list || p[-1] == ',') && (p[len] == 0 || p[len] == ',')) return 1;
        p += len;
    }
    return 0;
}

static size_t parse_list(const char *text, long long *out, size_t cap) {
    size_t n = 0;
    char *end;
    while (*text && n < cap) {
        out[n++] = strtoll(text, &end, 10);
        if (*end != ',') break;
        text = end + 1;
    }
    return n;
}

int main(int argc, char **argv) {
    long long counts[16] = {100000, 1000000, 10000000}, threads[8] = {1, 0};
    size_t n_counts = 3, n_threads = 2, c, t, d, o;
    int reps = 5, i;
    const char *ops = NULL, *dtypes = NULL;
    gpuprim_context_t ctx = NULL;

    for (i = 1; i < argc; ++i) {
        if (i + 1 >= argc) DIE("%s needs a value", argv[i]);
        if (!strcmp(argv[i], "--counts")) n_counts = parse_list(argv[++i], counts, 16);
        else if (!strcmp(argv[i], "--threads")) n_threads = parse_list(argv[++i], threads, 8);
        else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ops")) ops = argv[++i];
        else if (!strcmp(argv[i], "--dtypes")) dtypes = argv[++i];
        else DIE("unknown argument %s", argv[i]);
    }
    if (reps < 1 || reps > 1000) DIE("--reps must be 1..1000");

    for (t = 0; t < n_threads; ++t) {
        gpuprim_context_options_t options;
        char message[256];
        gpuprim_context_options_init(&options);
        options.backend = GPUPRIM_BACKEND_CPU;
#ifndef GPUPRIM_BENCH_NO_CPU_THREADS /* for timing a 0.2.0 library */
        options.cpu_threads = (int32_t)threads[t];
#endif
        if (gpuprim_context_create(&options, &ctx, message, sizeof message) != GPUPRIM_SUCCESS)
            DIE("no CPU context: %s", message);
        for (c = 0; c < n_counts; ++c) {
            size_t n = (size_t)counts[c];
            for (d = 0; d < sizeof kDtypes / sizeof kDtypes[0]; ++d) {
                gpuprim_dtype_t dtype = kDtypes[d].dtype;
                size_t size = gpuprim_dtype_size(dtype);
                void *host;
                gpuprim_buffer_t in, in2, out, values, values_out, indices, keys_sorted = NULL, queries_sorted = NULL;
                gpuprim_buffer_t counts = NULL, group_keys = NULL;
                if (!listed(dtypes, kDtypes[d].name)) continue;
                host = malloc(n * (size > 4 ? size : 4) + 16); /* the values (u32) too */
                if (!host) DIE("out of host memory");
                rng_state = 0x9E3779B97F4A7C15ull + n + d;
                fill(dtype, host, n);
                CK(gpuprim_buffer_create(ctx, dtype, n, &in));
                CK(gpuprim_buffer_create(ctx, dtype, n, &in2));
                CK(gpuprim_buffer_create(ctx, dtype, n, &out));
                CK(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U32, n, &values));
                CK(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U32, n, &values_out));
                CK(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_I64, n, &indices));
                CK(gpuprim_buffer_upload(ctx, in, 0, host, n));
                fill(dtype, host, n);
                CK(gpuprim_buffer_upload(ctx, in2, 0, host, n));
                fill(GPUPRIM_DTYPE_U32, host, n);
                CK(gpuprim_buffer_upload(ctx, values, 0, host, n));
                /* searchsorted and merge: the keys (in) and the queries (in2) sorted, once */
                if (listed(ops, "searchsorted") || listed(ops, "searchsorted_sorted") || listed(ops, "merge")) {
                    CK(gpuprim_buffer_create(ctx, dtype, n, &keys_sorted));
                    CK(gpuprim_buffer_create(ctx, dtype, n, &queries_sorted));
                    CK(gpuprim_sort(ctx, in, NULL, keys_sorted, NULL, GPUPRIM_ORDER_ASCENDING));
                    CK(gpuprim_sort(ctx, in2, NULL, queries_sorted, NULL, GPUPRIM_ORDER_ASCENDING));
                }
                CK(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U64, 256, &counts));
                /* groupby_sum: u32 keys of 1,024 distinct values (a multiple of a random 10-bit number) */
                if (listed(ops, "groupby_sum")) {
                    uint32_t *keys32 = (uint32_t *)host;
                    size_t j;
                    for (j = 0; j < n; ++j) keys32[j] = (uint32_t)(next_random() & 1023u) * 2654435761u;
                    CK(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U32, n, &group_keys));
                    CK(gpuprim_buffer_upload(ctx, group_keys, 0, host, n));
                }
                for (o = 0; o < sizeof kOps / sizeof kOps[0]; ++o) {
                    double times[1000], result[2];
                    int r;
                    /* top-k: outputs of exactly k elements (views of out and indices) */
                    uint64_t k = o == 6 ? 16 : 1024;
                    gpuprim_buffer_t top_keys = NULL, top_indices = NULL, half_a = NULL, half_b = NULL, merged = NULL;
                    /* histogram_256: floats over [0, 1) (the inputs' range), integers over [min, max) */
                    unsigned char lower[8] = {0}, upper[8] = {0};
                    gpuprim_predicate_t below_middle;
                    uint64_t found = 0;
                    if (!listed(ops, kOps[o])) continue;
                    if (o == 10 || o == 12) {
                        const int is_signed = dtype == GPUPRIM_DTYPE_I32 || dtype == GPUPRIM_DTYPE_I64 ||
                                              dtype == GPUPRIM_DTYPE_I8 || dtype == GPUPRIM_DTYPE_I16;
                        if (!float_bits(dtype, 1.0f, upper)) {
                            /* min: the sign bit alone (signed) or 0; max: all ones but the sign bit, or all */
                            const size_t width = gpuprim_dtype_size(dtype);
                            memset(upper, 0xFF, width);
                            if (is_signed) {
                                upper[width - 1] = 0x7F;
                                lower[width - 1] = 0x80;
                            }
                        }
                    }
                    if (o == 12) { /* below the middle of [lower, upper]: 0.5, 0, or 2^(w-1) */
                        const size_t width = gpuprim_dtype_size(dtype);
                        memset(&below_middle, 0, sizeof below_middle);
                        below_middle.kind = GPUPRIM_KEEP_LESS;
                        memset(lower, 0, sizeof lower);
                        if (!float_bits(dtype, 0.5f, lower) && upper[width - 1] == 0xFF)
                            lower[width - 1] = 0x80; /* unsigned: 2^(w-1); signed: 0 */
                        below_middle.scalar = lower;
                    }
                    if (o == 11) {
                        half_a = view_of(ctx, keys_sorted, dtype, 0, n / 2);
                        half_b = view_of(ctx, queries_sorted, dtype, 0, n - n / 2);
                        merged = out;
                    }
                    if (k > n) k = n;
                    if (o == 6 || o == 7) {
                        void *data;
                        CK(gpuprim_buffer_get_info(ctx, out, NULL, NULL, &data));
                        CK(gpuprim_buffer_wrap(ctx, dtype, data, k, &top_keys));
                        CK(gpuprim_buffer_get_info(ctx, indices, NULL, NULL, &data));
                        CK(gpuprim_buffer_wrap(ctx, GPUPRIM_DTYPE_I64, data, k, &top_indices));
                    }
                    for (r = -1; r < reps; ++r) { /* r = -1: warm-up */
                        double start = now_ms();
                        switch (o) {
                        case 0: CK(gpuprim_sort(ctx, in, NULL, out, NULL, GPUPRIM_ORDER_ASCENDING)); break;
                        case 1: CK(gpuprim_sort(ctx, in, values, out, values_out, GPUPRIM_ORDER_ASCENDING)); break;
                        case 2: CK(gpuprim_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, in, out)); break;
                        case 3: CK(gpuprim_reduce(ctx, GPUPRIM_OP_SUM, in, result)); break;
                        case 4: CK(gpuprim_reduce(ctx, GPUPRIM_OP_MIN, in, result)); break;
                        case 5: CK(gpuprim_dot(ctx, in, in2, result)); break;
                        case 6:
                        case 7:
                            CK(gpuprim_topk(ctx, in, k, GPUPRIM_ORDER_ASCENDING, top_keys, top_indices));
                            break;
                        case 8:
                            CK(gpuprim_searchsorted(ctx, keys_sorted, in2, GPUPRIM_SIDE_LEFT, GPUPRIM_ORDER_ASCENDING,
                                                    indices));
                            break;
                        case 9:
                            CK(gpuprim_searchsorted(ctx, keys_sorted, queries_sorted, GPUPRIM_SIDE_LEFT,
                                                    GPUPRIM_ORDER_ASCENDING, indices));
                            break;
                        case 10: CK(gpuprim_histogram_even(ctx, in, lower, upper, counts)); break;
                        case 12: CK(gpuprim_select(ctx, in, NULL, &below_middle, out, NULL, NULL, &found, NULL)); break;
                        case 13:
                            CK(gpuprim_group_by(ctx, in, NULL, GPUPRIM_OP_SUM, out, NULL, NULL, NULL, &found, NULL));
                            break;
                        case 14:
                            CK(gpuprim_group_by(ctx, group_keys, in, GPUPRIM_OP_SUM, values_out, NULL, out, NULL, &found,
                                                NULL));
                            break;
                        case 11:
                            CK(gpuprim_merge(ctx, half_a, NULL, half_b, NULL, merged, NULL, GPUPRIM_ORDER_ASCENDING));
                            break;
                        }
                        CK(gpuprim_context_synchronize(ctx));
                        if (r >= 0) times[r] = now_ms() - start;
                    }
                    qsort(times, (size_t)reps, sizeof times[0], cmp_double);
                    printf("%s %s %zu %lld %.4f %.4f\n", kOps[o], kDtypes[d].name, n, threads[t],
                           times[reps / 2], times[0]);
                    fflush(stdout);
                    if (top_keys) CK(gpuprim_buffer_destroy(ctx, top_keys));
                    if (top_indices) CK(gpuprim_buffer_destroy(ctx, top_indices));
                    if (half_a) CK(gpuprim_buffer_destroy(ctx, half_a));
                    if (half_b) CK(gpuprim_buffer_destroy(ctx, half_b));
                }
                if (keys_sorted) CK(gpuprim_buffer_destroy(ctx, keys_sorted));
                if (queries_sorted) CK(gpuprim_buffer_destroy(ctx, queries_sorted));
                if (group_keys) CK(gpuprim_buffer_destroy(ctx, group_keys));
                CK(gpuprim_buffer_destroy(ctx, counts));
                CK(gpuprim_buffer_destroy(ctx, in));
                CK(gpuprim_buffer_destroy(ctx, in2));
                CK(gpuprim_buffer_destroy(ctx, out));
                CK(gpuprim_buffer_destroy(ctx, values));
                CK(gpuprim_buffer_destroy(ctx, values_out));
                CK(gpuprim_buffer_destroy(ctx, indices));
                free(host);
            }
        }
        CK(gpuprim_context_destroy(ctx));
    }
    return 0;
}
