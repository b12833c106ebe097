/* SPDX-License-Identifier: Apache-2.0 */
/* Concurrency: gpuprim.h says "a context and the buffers it made must be used
 * by one thread at a time; distinct contexts are independent and may be used
 * from different threads at once". Many threads (default 8), each with its own
 * context, run every primitive at once in a loop (reduce, reduce_to_buffer,
 * argmin/argmax, dot, inclusive/exclusive scan in and out of place, sort of keys and of
 * pairs, top-k, both orders, all twelve dtypes, sizes 0..65537) and check every
 * result exactly against a reference. Values are small integers (and
 * -0.0/+0.0 for floats), so float sums are exact in any order (f16/bf16:
 * exact in their f32 accumulator, then rounded once) and every check is
 * exact; narrow integer sums wrap.
 * The threads also share the read-only functions (error strings, version).
 * With "shared", all threads work on one context at once (calls on a context
 * are serialized by its lock), and then race a gpuprim_context_destroy().
 *   rel_concurrency [threads] [iterations] [shared]
 * Run under ThreadSanitizer by test/reliability/run_sanitizers.sh. */
#define _POSIX_C_SOURCE 200809L /* pthread barriers under -std=c99 */

#include "rel_common.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>

#define MAX_THREADS 64

typedef struct {
    int index;
    int iterations;
    uint64_t random_state;
    long checks;
    char failure[1024];
} Worker;

static pthread_barrier_t g_start;
/* "shared" mode: every thread works on this one context (with buffers of its own). */
static gpuprim_context_t g_shared;

/* ------------------------------------------------------------------------ */
/* Values: element i is the small integer v[i] (|v| <= 15; >= 0 for unsigned  */
/* dtypes), and for floats zero may be -0.0. ord() is the documented order:   */
/* -0.0 < +0.0, equal ord <=> equal bits.                                      */
/* ------------------------------------------------------------------------ */
typedef struct {
    int value;
    int negative_zero;
} Element;

static int ord(Element e) { return 2 * e.value + (e.value == 0 && !e.negative_zero ? 1 : 0); }

static uint64_t next_random(Worker *w) { /* splitmix64 */
    uint64_t z = (w->random_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int is_float(gpuprim_dtype_t d) {
    return d == GPUPRIM_DTYPE_F32 || d == GPUPRIM_DTYPE_F64 || d == GPUPRIM_DTYPE_F16 || d == GPUPRIM_DTYPE_BF16;
}
static int is_unsigned(gpuprim_dtype_t d) {
    return d == GPUPRIM_DTYPE_U32 || d == GPUPRIM_DTYPE_U64 || d == GPUPRIM_DTYPE_U8 || d == GPUPRIM_DTYPE_U16;
}

/* f16/bf16 (fraction bits 10/7, exponent bias 15/127): an integer-valued
 * double rounded to the format (nearest, ties to even; inf past the top),
 * and a pattern's value. */
static int half_fraction_bits(gpuprim_dtype_t d) { return d == GPUPRIM_DTYPE_F16 ? 10 : 7; }
static int half_bias(gpuprim_dtype_t d) { return d == GPUPRIM_DTYPE_F16 ? 15 : 127; }
static uint16_t half_inf(gpuprim_dtype_t d) { return d == GPUPRIM_DTYPE_F16 ? 0x7C00 : 0x7F80; }

static uint16_t half_bits(gpuprim_dtype_t d, double v) {
    const int fraction_bits = half_fraction_bits(d), bias = half_bias(d);
    uint16_t sign = v < 0 ? 0x8000 : 0;
    double magnitude = fabs(v), scaled;
    int e2, exponent;
    if (magnitude == 0) return sign;
    (void)frexp(magnitude, &e2);
    exponent = e2 - 1; /* integers: always normal */
    scaled = nearbyint(ldexp(magnitude, fraction_bits - exponent));
    if (scaled >= ldexp(1.0, fraction_bits + 1)) {
        scaled /= 2;
        ++exponent;
    }
    if (exponent > bias) return (uint16_t)(sign | half_inf(d));
    return (uint16_t)(sign | ((unsigned)(exponent + bias) << fraction_bits) |
                      ((unsigned)scaled - (1u << fraction_bits)));
}

static double half_double(gpuprim_dtype_t d, uint16_t bits) {
    const int fraction_bits = half_fraction_bits(d), bias = half_bias(d);
    const unsigned fraction = bits & ((1u << fraction_bits) - 1);
    const int exponent = (bits & 0x7FFF) >> fraction_bits;
    double magnitude;
    if ((bits & 0x7FFF) >= half_inf(d)) magnitude = (bits & 0x7FFF) == half_inf(d) ? HUGE_VAL : NAN;
    else if (exponent == 0) magnitude = ldexp(fraction, 1 - bias - fraction_bits);
    else magnitude = ldexp(fraction | (1u << fraction_bits), exponent - bias - fraction_bits);
    return bits & 0x8000 ? -magnitude : magnitude;
}

/* The value the dtype holds for the exact integer result v: narrow integers
 * wrap, f16/bf16 round once (v is exact in their f32 accumulator). */
static double held(gpuprim_dtype_t d, int64_t v) {
    switch (d) {
    case GPUPRIM_DTYPE_I8: return (int8_t)(uint8_t)((uint64_t)v & 0xFF);
    case GPUPRIM_DTYPE_U8: return (double)((uint64_t)v & 0xFF);
    case GPUPRIM_DTYPE_I16: return (int16_t)(uint16_t)((uint64_t)v & 0xFFFF);
    case GPUPRIM_DTYPE_U16: return (double)((uint64_t)v & 0xFFFF);
    case GPUPRIM_DTYPE_F16:
    case GPUPRIM_DTYPE_BF16: return half_double(d, half_bits(d, (double)v));
    default: return (double)v;
    }
}

static void store(gpuprim_dtype_t dtype, void *array, size_t i, Element e) {
    switch (dtype) {
    case GPUPRIM_DTYPE_I32: ((int32_t *)array)[i] = e.value; break;
    case GPUPRIM_DTYPE_U32: ((uint32_t *)array)[i] = (uint32_t)e.value; break;
    case GPUPRIM_DTYPE_I64: ((int64_t *)array)[i] = e.value; break;
    case GPUPRIM_DTYPE_U64: ((uint64_t *)array)[i] = (uint64_t)e.value; break;
    case GPUPRIM_DTYPE_F32: ((float *)array)[i] = e.negative_zero ? -0.0f : (float)e.value; break;
    case GPUPRIM_DTYPE_F64: ((double *)array)[i] = e.negative_zero ? -0.0 : (double)e.value; break;
    case GPUPRIM_DTYPE_F16:
    case GPUPRIM_DTYPE_BF16:
        ((uint16_t *)array)[i] = e.negative_zero ? 0x8000 : half_bits(dtype, e.value);
        break;
    case GPUPRIM_DTYPE_I8: ((int8_t *)array)[i] = (int8_t)e.value; break;
    case GPUPRIM_DTYPE_U8: ((uint8_t *)array)[i] = (uint8_t)e.value; break;
    case GPUPRIM_DTYPE_I16: ((int16_t *)array)[i] = (int16_t)e.value; break;
    case GPUPRIM_DTYPE_U16: ((uint16_t *)array)[i] = (uint16_t)e.value; break;
    }
}

/* The identity of MIN (the type's largest value, +inf) or MAX (the smallest,
 * -inf) in dtype's bits. */
static void store_identity(gpuprim_dtype_t dtype, void *array, size_t i, int is_min) {
    switch (dtype) {
    case GPUPRIM_DTYPE_I32: ((int32_t *)array)[i] = is_min ? INT32_MAX : INT32_MIN; break;
    case GPUPRIM_DTYPE_U32: ((uint32_t *)array)[i] = is_min ? UINT32_MAX : 0; break;
    case GPUPRIM_DTYPE_I64: ((int64_t *)array)[i] = is_min ? INT64_MAX : INT64_MIN; break;
    case GPUPRIM_DTYPE_U64: ((uint64_t *)array)[i] = is_min ? UINT64_MAX : 0; break;
    case GPUPRIM_DTYPE_F32: ((float *)array)[i] = is_min ? (float)HUGE_VAL : -(float)HUGE_VAL; break;
    case GPUPRIM_DTYPE_F64: ((double *)array)[i] = is_min ? HUGE_VAL : -HUGE_VAL; break;
    case GPUPRIM_DTYPE_F16:
    case GPUPRIM_DTYPE_BF16:
        ((uint16_t *)array)[i] = (uint16_t)(half_inf(dtype) | (is_min ? 0 : 0x8000));
        break;
    case GPUPRIM_DTYPE_I8: ((int8_t *)array)[i] = is_min ? INT8_MAX : INT8_MIN; break;
    case GPUPRIM_DTYPE_U8: ((uint8_t *)array)[i] = is_min ? UINT8_MAX : 0; break;
    case GPUPRIM_DTYPE_I16: ((int16_t *)array)[i] = is_min ? INT16_MAX : INT16_MIN; break;
    case GPUPRIM_DTYPE_U16: ((uint16_t *)array)[i] = is_min ? UINT16_MAX : 0; break;
    }
}

static double as_double(gpuprim_dtype_t dtype, const void *array, size_t i) {
    switch (dtype) {
    case GPUPRIM_DTYPE_I32: return ((const int32_t *)array)[i];
    case GPUPRIM_DTYPE_U32: return ((const uint32_t *)array)[i];
    case GPUPRIM_DTYPE_I64: return (double)((const int64_t *)array)[i];
    case GPUPRIM_DTYPE_U64: return (double)((const uint64_t *)array)[i];
    case GPUPRIM_DTYPE_F32: return ((const float *)array)[i];
    case GPUPRIM_DTYPE_F64: return ((const double *)array)[i];
    case GPUPRIM_DTYPE_F16:
    case GPUPRIM_DTYPE_BF16: return half_double(dtype, ((const uint16_t *)array)[i]);
    case GPUPRIM_DTYPE_I8: return ((const int8_t *)array)[i];
    case GPUPRIM_DTYPE_U8: return ((const uint8_t *)array)[i];
    case GPUPRIM_DTYPE_I16: return ((const int16_t *)array)[i];
    case GPUPRIM_DTYPE_U16: return ((const uint16_t *)array)[i];
    }
    return 0;
}

/* Stable merge sort of indices by ord (descending: reversed comparison). */
static void sort_indices(const Element *e, size_t *index, size_t *scratch, size_t n,
                         int descending) {
    size_t width, i;
    for (width = 1; width < n; width *= 2) {
        for (i = 0; i < n; i += 2 * width) {
            size_t left = i, middle = i + width < n ? i + width : n;
            size_t right = middle, end = i + 2 * width < n ? i + 2 * width : n, k = i;
            while (left < middle && right < end) {
                int a = ord(e[index[left]]), b = ord(e[index[right]]);
                int take_right = descending ? b > a : b < a;
                scratch[k++] = take_right ? index[right++] : index[left++];
            }
            while (left < middle) scratch[k++] = index[left++];
            while (right < end) scratch[k++] = index[right++];
        }
        memcpy(index, scratch, n * sizeof *index);
    }
}

static const size_t kSizes[] = {0, 1, 2, 3, 31, 32, 33, 255, 256, 257, 1000, 1024, 4097, 12345, 65537};

static int one_round(Worker *w, gpuprim_context_t ctx, gpuprim_dtype_t dtype, size_t n) {
    size_t size = gpuprim_dtype_size(dtype), i;
    Element *a = (Element *)malloc((n + 1) * sizeof *a), *b = (Element *)malloc((n + 1) * sizeof *b);
    size_t *index = (size_t *)malloc((n + 1) * sizeof *index);
    size_t *scratch = (size_t *)malloc((n + 1) * sizeof *scratch);
    unsigned char *host_a = (unsigned char *)malloc((n + 1) * size);
    unsigned char *host_b = (unsigned char *)malloc((n + 1) * size);
    unsigned char *host_out = (unsigned char *)malloc((n + 1) * size);
    unsigned char *expected = (unsigned char *)malloc((n + 1) * size);
    uint32_t *payload = (uint32_t *)malloc((n + 1) * sizeof *payload);
    uint32_t *payload_out = (uint32_t *)malloc((n + 1) * sizeof *payload_out);
    gpuprim_buffer_t buf_a = NULL, buf_b = NULL, buf_out = NULL, buf_result = NULL;
    gpuprim_buffer_t buf_values = NULL, buf_values_out = NULL, buf_top = NULL, buf_top_index = NULL;
    const size_t k_top = n / 3 + (n > 0); /* top-k: the first k_top of each sort order */
    unsigned char result[8], result_expected[8];
    int failed = 1, op, descending;
    int range = is_unsigned(dtype) ? 16 : 31, low = is_unsigned(dtype) ? 0 : -15;
    int64_t sum = 0, dot = 0, min_ord = 0, max_ord = 0;
    size_t min_at = 0, max_at = 0, argmin_at = 0, argmax_at = 0; /* argmin/argmax: by value, -0.0 == +0.0 */
    if (!a || !b || !index || !scratch || !host_a || !host_b || !host_out || !expected ||
        !payload || !payload_out) {
        snprintf(w->failure, sizeof w->failure, "malloc");
        goto done;
    }
    for (i = 0; i < n; ++i) {
        a[i].value = low + (int)(next_random(w) % (uint64_t)range);
        a[i].negative_zero = is_float(dtype) && a[i].value == 0 && (next_random(w) & 1);
        b[i].value = low + (int)(next_random(w) % (uint64_t)range);
        b[i].negative_zero = 0;
        store(dtype, host_a, i, a[i]);
        store(dtype, host_b, i, b[i]);
        payload[i] = (uint32_t)i;
        sum += a[i].value;
        dot += (int64_t)a[i].value * b[i].value;
        if (i == 0 || ord(a[i]) < min_ord) min_ord = ord(a[i]), min_at = i;
        if (i == 0 || ord(a[i]) > max_ord) max_ord = ord(a[i]), max_at = i;
        if (a[i].value < a[argmin_at].value) argmin_at = i;
        if (a[i].value > a[argmax_at].value) argmax_at = i;
    }
#define STEP(call)                                                             \
    do {                                                                            \
        gpuprim_status_t st_ = (call);                                              \
        if (st_ != GPUPRIM_SUCCESS) {                                               \
            snprintf(w->failure, sizeof w->failure, "line %d: %s -> %d: %s", __LINE__, #call, \
                     (int)st_, gpuprim_context_last_error(ctx));                   \
            goto done;                                                              \
        }                                                                           \
    } while (0)
#define EXPECT(condition, ...)                                                      \
    do {                                                                            \
        if (!(condition)) {                                                         \
            int used_ = snprintf(w->failure, sizeof w->failure, "line %d (dtype %d, n %zu): ", \
                                 __LINE__, (int)dtype, n);                          \
            snprintf(w->failure + used_, sizeof w->failure - (size_t)used_, __VA_ARGS__); \
            goto done;                                                              \
        }                                                                           \
        ++w->checks;                                                                \
    } while (0)

    STEP(gpuprim_buffer_create(ctx, dtype, n, &buf_a));
    STEP(gpuprim_buffer_create(ctx, dtype, n, &buf_b));
    STEP(gpuprim_buffer_create(ctx, dtype, n, &buf_out));
    STEP(gpuprim_buffer_create(ctx, dtype, 1, &buf_result));
    STEP(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U32, n, &buf_values));
    STEP(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U32, n, &buf_values_out));
    STEP(gpuprim_buffer_create(ctx, dtype, k_top, &buf_top));
    STEP(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U32, k_top, &buf_top_index));
    STEP(gpuprim_buffer_upload(ctx, buf_a, 0, host_a, n));
    STEP(gpuprim_buffer_upload(ctx, buf_b, 0, host_b, n));
    STEP(gpuprim_buffer_upload(ctx, buf_values, 0, payload, n));

    /* Reductions to the host. */
    STEP(gpuprim_reduce(ctx, GPUPRIM_OP_SUM, buf_a, result));
    EXPECT(as_double(dtype, result, 0) == held(dtype, sum), "reduce SUM %g, expected %g (%lld)",
           as_double(dtype, result, 0), held(dtype, sum), (long long)sum);
    for (op = GPUPRIM_OP_MIN; op <= GPUPRIM_OP_MAX; ++op) {
        STEP(gpuprim_reduce(ctx, (gpuprim_op_t)op, buf_a, result));
        if (n == 0) {
            store_identity(dtype, result_expected, 0, op == GPUPRIM_OP_MIN);
            EXPECT(memcmp(result, result_expected, size) == 0, "identity of op %d", op);
        } else {
            store(dtype, result_expected, 0, a[op == GPUPRIM_OP_MIN ? min_at : max_at]);
            EXPECT(memcmp(result, result_expected, size) == 0, "reduce %s: %g, expected %g",
                   op == GPUPRIM_OP_MIN ? "MIN" : "MAX", as_double(dtype, result, 0),
                   as_double(dtype, result_expected, 0));
        }
    }
    /* argmin / argmax: the first position of the extreme value (-0.0 ties with
       +0.0); an empty input is INVALID_ARGUMENT and leaves the index alone. */
    for (op = GPUPRIM_OP_MIN; op <= GPUPRIM_OP_MAX; ++op) {
        uint64_t position = UINT64_MAX;
        if (n == 0) {
            EXPECT(gpuprim_argreduce(ctx, (gpuprim_op_t)op, buf_a, &position) == GPUPRIM_ERROR_INVALID_ARGUMENT &&
                       position == UINT64_MAX,
                   "argreduce of no elements");
        } else {
            STEP(gpuprim_argreduce(ctx, (gpuprim_op_t)op, buf_a, &position));
            EXPECT(position == (op == GPUPRIM_OP_MIN ? argmin_at : argmax_at), "arg%s %llu, expected %zu",
                   op == GPUPRIM_OP_MIN ? "min" : "max", (unsigned long long)position,
                   op == GPUPRIM_OP_MIN ? argmin_at : argmax_at);
        }
    }
    STEP(gpuprim_dot(ctx, buf_a, buf_b, result));
    EXPECT(as_double(dtype, result, 0) == held(dtype, dot), "dot %g, expected %g (%lld)",
           as_double(dtype, result, 0), held(dtype, dot), (long long)dot);

    /* Results into buffers (stream-ordered). */
    STEP(gpuprim_reduce_to_buffer(ctx, GPUPRIM_OP_SUM, buf_a, buf_result));
    STEP(gpuprim_buffer_download(ctx, buf_result, 0, result, 1));
    EXPECT(as_double(dtype, result, 0) == held(dtype, sum), "reduce_to_buffer SUM");
    STEP(gpuprim_dot_to_buffer(ctx, buf_a, buf_b, buf_result));
    STEP(gpuprim_buffer_download(ctx, buf_result, 0, result, 1));
    EXPECT(as_double(dtype, result, 0) == held(dtype, dot), "dot_to_buffer");

    /* Inclusive SUM scan out of place. */
    STEP(gpuprim_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, buf_a, buf_out));
    STEP(gpuprim_buffer_download(ctx, buf_out, 0, host_out, n));
    {
        int64_t running = 0;
        for (i = 0; i < n; ++i) {
            running += a[i].value;
            EXPECT(as_double(dtype, host_out, i) == held(dtype, running), "inclusive scan [%zu]: %g vs %lld",
                   i, as_double(dtype, host_out, i), (long long)running);
        }
    }
    /* Exclusive MAX scan in place on b. */
    STEP(gpuprim_scan(ctx, GPUPRIM_OP_MAX, GPUPRIM_SCAN_EXCLUSIVE, buf_b, buf_b));
    STEP(gpuprim_buffer_download(ctx, buf_b, 0, host_out, n));
    {
        size_t best = 0;
        for (i = 0; i < n; ++i) {
            if (i == 0) store_identity(dtype, expected, 0, 0);
            else {
                if (i == 1 || ord(b[i - 1]) > ord(b[best])) best = i - 1;
                store(dtype, expected, i, b[best]);
            }
        }
        EXPECT(n == 0 || memcmp(host_out, expected, n * size) == 0, "exclusive MAX scan in place");
    }

    /* Sort pairs ascending out of place, then keys descending in place. */
    for (descending = 0; descending <= 1; ++descending) {
        for (i = 0; i < n; ++i) index[i] = i;
        sort_indices(a, index, scratch, n, descending);
        for (i = 0; i < n; ++i) store(dtype, expected, i, a[index[i]]);
        /* Top-k of the keys (before the in-place sort below): the sort's first k_top. */
        STEP(gpuprim_topk(ctx, buf_a, k_top, descending ? GPUPRIM_ORDER_DESCENDING : GPUPRIM_ORDER_ASCENDING,
                          buf_top, buf_top_index));
        STEP(gpuprim_buffer_download(ctx, buf_top, 0, host_out, k_top));
        STEP(gpuprim_buffer_download(ctx, buf_top_index, 0, payload_out, k_top));
        EXPECT(k_top == 0 || memcmp(host_out, expected, k_top * size) == 0, "top-k keys (%s)",
               descending ? "descending" : "ascending");
        for (i = 0; i < k_top; ++i)
            EXPECT(payload_out[i] == (uint32_t)index[i], "top-k: index[%zu] = %u, expected %zu", i, payload_out[i],
                   index[i]);
        if (!descending) {
            STEP(gpuprim_sort(ctx, buf_a, buf_values, buf_out, buf_values_out,
                              GPUPRIM_ORDER_ASCENDING));
            STEP(gpuprim_buffer_download(ctx, buf_out, 0, host_out, n));
            STEP(gpuprim_buffer_download(ctx, buf_values_out, 0, payload_out, n));
            for (i = 0; i < n; ++i)
                EXPECT(payload_out[i] == (uint32_t)index[i], "pair sort: value[%zu] = %u, expected %zu",
                       i, payload_out[i], index[i]);
        } else {
            STEP(gpuprim_sort(ctx, buf_a, NULL, buf_a, NULL, GPUPRIM_ORDER_DESCENDING));
            STEP(gpuprim_buffer_download(ctx, buf_a, 0, host_out, n));
        }
        EXPECT(n == 0 || memcmp(host_out, expected, n * size) == 0, "sort keys (%s)",
               descending ? "descending, in place" : "ascending");
        if (!descending) {
            /* searchsorted of the unsorted keys in their ascending sort (buf_out): each key's lower bound is
               the number of keys that order before it (-0.0 before +0.0). */
            STEP(gpuprim_searchsorted(ctx, buf_out, buf_a, GPUPRIM_SIDE_LEFT, GPUPRIM_ORDER_ASCENDING,
                                      buf_values_out));
            STEP(gpuprim_buffer_download(ctx, buf_values_out, 0, payload_out, n));
            for (i = 0; i < n; ++i) {
                size_t lo = 0, hi = n;
                while (lo < hi) {
                    const size_t mid = lo + (hi - lo) / 2;
                    if (ord(a[index[mid]]) < ord(a[i])) lo = mid + 1;
                    else hi = mid;
                }
                EXPECT(payload_out[i] == (uint32_t)lo, "searchsorted: index[%zu] = %u, expected %zu", i,
                       payload_out[i], lo);
            }
            /* merge of the sorted keys (buf_out) with the k_top smallest (buf_top, sorted too): the stable
               merge is the sort of the concatenation, checked against the reference order (ord). */
            if (k_top > 0) {
                gpuprim_buffer_t merged = NULL;
                unsigned char *merged_host = (unsigned char *)malloc((n + k_top + 1) * size);
                size_t ia = 0, ib = 0, d;
                EXPECT(merged_host != NULL, "malloc");
                if (gpuprim_buffer_create(ctx, dtype, n + k_top, &merged) != GPUPRIM_SUCCESS) {
                    free(merged_host);
                    EXPECT(0, "buffer_create for the merge");
                }
                if (gpuprim_merge(ctx, buf_out, NULL, buf_top, NULL, merged, NULL, GPUPRIM_ORDER_ASCENDING) !=
                        GPUPRIM_SUCCESS ||
                    gpuprim_buffer_download(ctx, merged, 0, merged_host, n + k_top) != GPUPRIM_SUCCESS) {
                    gpuprim_buffer_destroy(ctx, merged);
                    free(merged_host);
                    EXPECT(0, "merge");
                }
                for (d = 0; d < n + k_top; ++d) {
                    /* the next of the two sorted sequences a[index[..]] and a[index[..k_top]], ties to the first */
                    const int take_b = ia == n || (ib < k_top && ord(a[index[ib]]) < ord(a[index[ia]]));
                    store(dtype, expected, 0, a[index[take_b ? ib : ia]]);
                    if (take_b) ++ib;
                    else ++ia;
                    if (memcmp(merged_host + d * size, expected, size) != 0) break;
                }
                gpuprim_buffer_destroy(ctx, merged);
                free(merged_host);
                EXPECT(d == n + k_top, "merge: output %zu differs from the stable merge", d);
            }
            /* bincount of the integer keys into k_top bins (U32 counts in buf_top_index): counts by value */
            if (!is_float(dtype) && k_top > 0) {
                STEP(gpuprim_bincount(ctx, buf_a, buf_top_index));
                STEP(gpuprim_buffer_download(ctx, buf_top_index, 0, payload_out, k_top));
                for (i = 0; i < k_top; ++i) scratch[i] = 0; /* the counts by value (scratch is free here) */
                for (i = 0; i < n; ++i)
                    if (a[i].value >= 0 && (size_t)a[i].value < k_top) scratch[a[i].value]++;
                for (i = 0; i < k_top; ++i)
                    EXPECT(payload_out[i] == (uint32_t)scratch[i], "bincount[%zu] = %u, expected %zu", i,
                           payload_out[i], scratch[i]);
            }
        }
    }
    failed = 0;
done:
    if (buf_a) gpuprim_buffer_destroy(ctx, buf_a);
    if (buf_b) gpuprim_buffer_destroy(ctx, buf_b);
    if (buf_out) gpuprim_buffer_destroy(ctx, buf_out);
    if (buf_result) gpuprim_buffer_destroy(ctx, buf_result);
    if (buf_values) gpuprim_buffer_destroy(ctx, buf_values);
    if (buf_values_out) gpuprim_buffer_destroy(ctx, buf_values_out);
    if (buf_top) gpuprim_buffer_destroy(ctx, buf_top);
    if (buf_top_index) gpuprim_buffer_destroy(ctx, buf_top_index);
    free(a); free(b); free(index); free(scratch); free(host_a); free(host_b);
    free(host_out); free(expected); free(payload); free(payload_out);
    return failed;
}

static void *worker_main(void *argument) {
    Worker *w = (Worker *)argument;
    gpuprim_context_t ctx = NULL;
    gpuprim_context_options_t options;
    char message[256];
    int iteration, d;
    gpuprim_context_options_init(&options);
    /* Everyone creates at once too. */
    pthread_barrier_wait(&g_start);
    if (g_shared) {
        ctx = g_shared;
    } else if (gpuprim_context_create(&options, &ctx, message, sizeof message) != GPUPRIM_SUCCESS) {
        snprintf(w->failure, sizeof w->failure, "context_create: %s", message);
        return NULL;
    }
    for (iteration = 0; iteration < w->iterations; ++iteration) {
        for (d = 0; d < 12; ++d) {
            gpuprim_dtype_t dtype = (gpuprim_dtype_t)((d + w->index) % 12);
            size_t n = kSizes[next_random(w) % (sizeof kSizes / sizeof kSizes[0])];
            if (one_round(w, ctx, dtype, n)) goto out;
            if (strcmp(gpuprim_get_error_string(GPUPRIM_ERROR_OVERFLOW), "size overflow") != 0 ||
                gpuprim_version_number() != GPUPRIM_VERSION_NUMBER) {
                snprintf(w->failure, sizeof w->failure, "shared read-only functions");
                goto out;
            }
        }
        if (iteration % 4 == 3 &&
            gpuprim_context_release_workspace(ctx) != GPUPRIM_SUCCESS) {
            snprintf(w->failure, sizeof w->failure, "release_workspace");
            goto out;
        }
    }
out:
    if (!g_shared && gpuprim_context_destroy(ctx) != GPUPRIM_SUCCESS && !w->failure[0])
        snprintf(w->failure, sizeof w->failure, "context_destroy");
    return NULL;
}

/* A context destroyed while other threads are inside calls on it: each call
 * either completes (SUCCESS, right result) or finds the context gone
 * (INVALID_HANDLE), and once destroy has returned every call is INVALID_HANDLE. */
typedef struct {
    gpuprim_context_t context;
    gpuprim_buffer_t keys;
    int after_destroy_seen;
    char failure[256];
} Racer;

static int g_destroyed; /* read and written with __atomic builtins */

static void *racer_main(void *argument) {
    Racer *r = (Racer *)argument;
    int round;
    pthread_barrier_wait(&g_start);
    for (round = 0; round < 100000; ++round) {
        int destroyed_before = __atomic_load_n(&g_destroyed, __ATOMIC_SEQ_CST);
        uint32_t keys[64], i;
        gpuprim_status_t status;
        for (i = 0; i < 64; ++i) keys[i] = 64 - i;
        status = gpuprim_buffer_upload(r->context, r->keys, 0, keys, 64);
        if (status == GPUPRIM_SUCCESS)
            status = gpuprim_sort(r->context, r->keys, NULL, r->keys, NULL, GPUPRIM_ORDER_ASCENDING);
        if (status == GPUPRIM_SUCCESS) status = gpuprim_buffer_download(r->context, r->keys, 0, keys, 64);
        if (status == GPUPRIM_SUCCESS) {
            if (destroyed_before) {
                snprintf(r->failure, sizeof r->failure, "a call succeeded after destroy returned");
                return NULL;
            }
            for (i = 0; i < 64; ++i)
                if (keys[i] != i + 1) {
                    snprintf(r->failure, sizeof r->failure, "sorted[%u] = %u", i, keys[i]);
                    return NULL;
                }
        } else if (status != GPUPRIM_ERROR_INVALID_HANDLE) {
            snprintf(r->failure, sizeof r->failure, "a call racing destroy returned %d", (int)status);
            return NULL;
        } else if (++r->after_destroy_seen > 100) {
            return NULL;
        }
    }
    return NULL;
}

static int destroy_race(int threads) {
    pthread_t ids[MAX_THREADS];
    Racer racers[MAX_THREADS];
    gpuprim_context_t context = rel_context(GPUPRIM_BACKEND_AUTO);
    int i, failures = 0;
    struct timespec pause = {0, 2000000}; /* 2 ms of calls before the destroy */
    __atomic_store_n(&g_destroyed, 0, __ATOMIC_SEQ_CST);
    REL_CHECK(pthread_barrier_init(&g_start, NULL, (unsigned)threads + 1) == 0, "barrier");
    for (i = 0; i < threads; ++i) {
        memset(&racers[i], 0, sizeof racers[i]);
        racers[i].context = context;
        REL_OK(context, gpuprim_buffer_create(context, GPUPRIM_DTYPE_U32, 64, &racers[i].keys));
        REL_CHECK(pthread_create(&ids[i], NULL, racer_main, &racers[i]) == 0, "pthread_create");
    }
    pthread_barrier_wait(&g_start);
    nanosleep(&pause, NULL);
    REL_CHECK(gpuprim_context_destroy(context) == GPUPRIM_SUCCESS, "destroy while threads call");
    __atomic_store_n(&g_destroyed, 1, __ATOMIC_SEQ_CST);
    REL_CHECK(gpuprim_context_destroy(context) == GPUPRIM_ERROR_INVALID_HANDLE, "second destroy");
    for (i = 0; i < threads; ++i) {
        pthread_join(ids[i], NULL);
        if (racers[i].failure[0]) {
            ++failures;
            fprintf(stderr, "racer %d FAILED: %s\n", i, racers[i].failure);
        }
    }
    pthread_barrier_destroy(&g_start);
    printf("concurrency: destroy raced %d threads' calls: %s\n", threads,
           failures ? "FAILED" : "every call completed or saw INVALID_HANDLE");
    return failures;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 8;
    int iterations = argc > 2 ? atoi(argv[2]) : 6;
    int shared = argc > 3 && strcmp(argv[3], "shared") == 0;
    pthread_t ids[MAX_THREADS];
    Worker workers[MAX_THREADS];
    int i, failures = 0;
    long checks = 0;
    gpuprim_context_t probe = rel_context(GPUPRIM_BACKEND_AUTO);
    printf("concurrency: %d threads x %d iterations on the %s backend, %s\n", threads, iterations,
           rel_backend_name(probe), shared ? "all on one shared context" : "a context each");
    REL_OK(probe, gpuprim_context_destroy(probe));
    REL_CHECK(threads >= 1 && threads <= MAX_THREADS, "threads: 1..%d", MAX_THREADS);
    REL_CHECK(pthread_barrier_init(&g_start, NULL, (unsigned)threads) == 0, "barrier");
    if (shared) g_shared = rel_context(GPUPRIM_BACKEND_AUTO);
    for (i = 0; i < threads; ++i) {
        memset(&workers[i], 0, sizeof workers[i]);
        workers[i].index = i;
        workers[i].iterations = iterations;
        workers[i].random_state = 0x1234567ull * (uint64_t)(i + 1);
        REL_CHECK(pthread_create(&ids[i], NULL, worker_main, &workers[i]) == 0, "pthread_create");
    }
    for (i = 0; i < threads; ++i) {
        pthread_join(ids[i], NULL);
        checks += workers[i].checks;
        if (workers[i].failure[0]) {
            ++failures;
            fprintf(stderr, "thread %d FAILED: %s\n", i, workers[i].failure);
        }
    }
    pthread_barrier_destroy(&g_start);
    if (shared) REL_OK(g_shared, gpuprim_context_destroy(g_shared));
    printf("concurrency: %ld checks, %d of %d threads failed\n", checks, failures, threads);
    if (shared) failures += destroy_race(threads);
    return failures ? 1 : 0;
}
