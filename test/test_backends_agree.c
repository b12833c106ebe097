/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CUDA backend against the CPU backend on the same inputs: every dtype,
 * op and order, sort with every value width and with bit ranges. Integer
 * results, MIN/MAX and sorts must be bit-identical; float SUM, dot and scan
 * within an f32 accumulation bound (the backends associate differently).
 * Skipped (exit 77) when no CUDA device is usable.
 */
#include <gpuprim/gpuprim.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define TC_CHECK(cond, ...)                                           \
    do {                                                              \
        if (!(cond)) {                                                \
            if (++failures <= 40) {                                   \
                fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__); \
                fprintf(stderr, __VA_ARGS__);                         \
                fprintf(stderr, "\n");                                \
            }                                                         \
        }                                                             \
    } while (0)
#define TC_CHECK_OK(ctx, call)                                                                        \
    do {                                                                                             \
        gpuprim_status_t status_ = (call);                                                           \
        if (status_ != GPUPRIM_SUCCESS) {                                                            \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,                     \
                    gpuprim_context_last_error(ctx));                                                \
            exit(1);                                                                                 \
        }                                                                                            \
    } while (0)

static const char *tc_dtype_name(gpuprim_dtype_t d) {
    static const char *names[] = {"i32", "u32", "i64", "u64", "f32", "f64", "f16", "bf16", "i8", "u8", "i16", "u16"};
    return (unsigned)d < 12 ? names[d] : "?";
}
static const char *tc_op_name(gpuprim_op_t op) {
    return op == GPUPRIM_OP_SUM ? "sum" : op == GPUPRIM_OP_MIN ? "min" : "max";
}

static gpuprim_context_t cpu, gpu;

static const gpuprim_dtype_t dtypes[] = {GPUPRIM_DTYPE_I32, GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_I64,
                                         GPUPRIM_DTYPE_U64, GPUPRIM_DTYPE_F32, GPUPRIM_DTYPE_F64,
                                         GPUPRIM_DTYPE_F16, GPUPRIM_DTYPE_BF16, GPUPRIM_DTYPE_I8,
                                         GPUPRIM_DTYPE_U8,  GPUPRIM_DTYPE_I16, GPUPRIM_DTYPE_U16};
#define DTYPE_COUNT (sizeof dtypes / sizeof dtypes[0])

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_random(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int is_float16(gpuprim_dtype_t d) { return d == GPUPRIM_DTYPE_F16 || d == GPUPRIM_DTYPE_BF16; }
static int is_floaty(gpuprim_dtype_t d) {
    return d == GPUPRIM_DTYPE_F32 || d == GPUPRIM_DTYPE_F64 || is_float16(d);
}

static double value_of(gpuprim_dtype_t d, const void *p, uint64_t i) {
    switch (d) {
    case GPUPRIM_DTYPE_F32: return ((const float *)p)[i];
    case GPUPRIM_DTYPE_F64: return ((const double *)p)[i];
    case GPUPRIM_DTYPE_F16: {
        uint16_t h = ((const uint16_t *)p)[i];
        int e = (h >> 10) & 31, m = h & 1023;
        double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
        return (h & 0x8000) ? -v : v;
    }
    case GPUPRIM_DTYPE_BF16: {
        uint32_t b = (uint32_t)((const uint16_t *)p)[i] << 16;
        float f;
        memcpy(&f, &b, 4);
        return f;
    }
    default: return 0;
    }
}

/* Random elements: any bit pattern (MIN/MAX, sort), or for float sums
 * values of moderate size (so the sums are comparable). Some runs draw from
 * few distinct values. */
static void fill(gpuprim_dtype_t d, void *p, uint64_t n, int for_sum, int few) {
    size_t size = gpuprim_dtype_size(d);
    for (uint64_t i = 0; i < n; ++i) {
        uint64_t bits = few ? (next_random() % 5) * 0x0123456789ABCDEFull : next_random();
        if (for_sum && is_floaty(d)) {
            double v = (double)(int64_t)(next_random() % 2000001) / 1000.0 - 1000.0;
            if (d == GPUPRIM_DTYPE_F16) v /= 100.0;
            switch (d) {
            case GPUPRIM_DTYPE_F32: { float f = (float)v; memcpy(&bits, &f, 4); break; }
            case GPUPRIM_DTYPE_F64: memcpy(&bits, &v, 8); break;
            case GPUPRIM_DTYPE_BF16: { float f = (float)v; uint32_t b; memcpy(&b, &f, 4); bits = b >> 16; break; }
            default: { /* f16: truncate the f32 pattern's mantissa into binary16 (|v| <= 10) */
                float f = (float)v;
                uint32_t b;
                memcpy(&b, &f, 4);
                int e = (int)((b >> 23) & 255) - 127 + 15;
                bits = e <= 0 ? (b >> 16) & 0x8000 : ((b >> 16) & 0x8000) | (uint32_t)e << 10 | ((b >> 13) & 1023);
            }
            }
        }
        memcpy((char *)p + i * size, &bits, size);
    }
}

static gpuprim_buffer_t upload(gpuprim_context_t c, gpuprim_dtype_t d, const void *host, uint64_t n) {
    gpuprim_buffer_t b = NULL;
    TC_CHECK_OK(c, gpuprim_buffer_create(c, d, n, &b));
    if (n) TC_CHECK_OK(c, gpuprim_buffer_upload(c, b, 0, host, n));
    return b;
}

static void download(gpuprim_context_t c, gpuprim_buffer_t b, void *host, uint64_t n) {
    if (n) TC_CHECK_OK(c, gpuprim_buffer_download(c, b, 0, host, n));
}

static int close_enough(gpuprim_dtype_t d, const void *a, const void *b, uint64_t i, double bound) {
    double x = value_of(d, a, i), y = value_of(d, b, i);
    if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
    return fabs(x - y) <= bound;
}

static double sum_bound(gpuprim_dtype_t d, const void *in, uint64_t n, double result) {
    double abs_sum = 0;
    for (uint64_t i = 0; i < n; ++i) abs_sum += fabs(value_of(d, in, i));
    double unit = d == GPUPRIM_DTYPE_F64 ? ldexp(1, -52) : ldexp(1, -23);
    double format = d == GPUPRIM_DTYPE_F16 ? ldexp(1, -10) : d == GPUPRIM_DTYPE_BF16 ? ldexp(1, -7) : unit;
    return 2 * (double)n * unit * abs_sum + 2 * format * fabs(result) + 1e-300;
}

static void check_reduce(gpuprim_dtype_t d, uint64_t n) {
    size_t size = gpuprim_dtype_size(d);
    void *host = malloc(n * size + 16), *other = malloc(n * size + 16);
    for (int op = 0; op < 3; ++op) {
        fill(d, host, n, op == GPUPRIM_OP_SUM, 0);
        gpuprim_buffer_t bc = upload(cpu, d, host, n), bg = upload(gpu, d, host, n);
        unsigned char rc[8] = {0}, rg[8] = {0xAB};
        TC_CHECK_OK(cpu, gpuprim_reduce(cpu, (gpuprim_op_t)op, bc, rc));
        TC_CHECK_OK(gpu, gpuprim_reduce(gpu, (gpuprim_op_t)op, bg, rg));
        if (op == GPUPRIM_OP_SUM && is_floaty(d)) {
            double bound = sum_bound(d, host, n, value_of(d, rc, 0));
            TC_CHECK(close_enough(d, rc, rg, 0, bound), "reduce sum %s n=%llu: cpu %.9g gpu %.9g", tc_dtype_name(d),
                     (unsigned long long)n, value_of(d, rc, 0), value_of(d, rg, 0));
        } else {
            TC_CHECK(memcmp(rc, rg, size) == 0, "reduce %s %s n=%llu differs", tc_op_name((gpuprim_op_t)op),
                     tc_dtype_name(d), (unsigned long long)n);
        }
        if (op == GPUPRIM_OP_SUM) {  /* dot of the input with a second one */
            fill(d, other, n, 1, 0);
            gpuprim_buffer_t oc = upload(cpu, d, other, n), og = upload(gpu, d, other, n);
            TC_CHECK_OK(cpu, gpuprim_dot(cpu, bc, oc, rc));
            TC_CHECK_OK(gpu, gpuprim_dot(gpu, bg, og, rg));
            if (is_floaty(d)) {
                TC_CHECK(isnan(value_of(d, rc, 0)) || value_of(d, rc, 0) == value_of(d, rg, 0) ||
                             fabs(value_of(d, rc, 0) - value_of(d, rg, 0)) <=
                             1e-3 * fabs(value_of(d, rc, 0)) + 1e3 * sum_bound(d, host, n, 0) + 1e-6,
                         "dot %s n=%llu: cpu %.9g gpu %.9g", tc_dtype_name(d), (unsigned long long)n,
                         value_of(d, rc, 0), value_of(d, rg, 0));
            } else {
                TC_CHECK(memcmp(rc, rg, size) == 0, "dot %s n=%llu differs", tc_dtype_name(d), (unsigned long long)n);
            }
            gpuprim_buffer_destroy(cpu, oc);
            gpuprim_buffer_destroy(gpu, og);
        }
        gpuprim_buffer_destroy(cpu, bc);
        gpuprim_buffer_destroy(gpu, bg);
    }
    free(host);
    free(other);
}

static void check_scan(gpuprim_dtype_t d, uint64_t n) {
    size_t size = gpuprim_dtype_size(d);
    void *host = malloc(n * size + 16), *oc_host = malloc(n * size + 16), *og_host = malloc(n * size + 16);
    for (int op = 0; op < 3; ++op) {
        for (int kind = 0; kind < 2; ++kind) {
            fill(d, host, n, op == GPUPRIM_OP_SUM, 0);
            gpuprim_buffer_t bc = upload(cpu, d, host, n), bg = upload(gpu, d, host, n);
            memset(og_host, 0xA5, n * size);
            gpuprim_buffer_t outg = upload(gpu, d, og_host, n), outc = upload(cpu, d, og_host, n);
            TC_CHECK_OK(cpu, gpuprim_scan(cpu, (gpuprim_op_t)op, (gpuprim_scan_kind_t)kind, bc, outc));
            TC_CHECK_OK(gpu, gpuprim_scan(gpu, (gpuprim_op_t)op, (gpuprim_scan_kind_t)kind, bg, outg));
            download(cpu, outc, oc_host, n);
            download(gpu, outg, og_host, n);
            if (op == GPUPRIM_OP_SUM && is_floaty(d)) {
                double bound = sum_bound(d, host, n, 0);
                for (uint64_t i = 0; i < n; ++i) {
                    double b = bound + 2 * ldexp(1, is_float16(d) ? (d == GPUPRIM_DTYPE_F16 ? -10 : -7) : -22) *
                                           fabs(value_of(d, oc_host, i));
                    if (!close_enough(d, oc_host, og_host, i, b)) {
                        TC_CHECK(0, "scan sum %s kind %d n=%llu at %llu: cpu %.9g gpu %.9g", tc_dtype_name(d), kind,
                                 (unsigned long long)n, (unsigned long long)i, value_of(d, oc_host, i),
                                 value_of(d, og_host, i));
                        break;
                    }
                }
            } else {
                TC_CHECK(memcmp(oc_host, og_host, n * size) == 0, "scan %s kind %d %s n=%llu differs",
                         tc_op_name((gpuprim_op_t)op), kind, tc_dtype_name(d), (unsigned long long)n);
            }
            gpuprim_buffer_destroy(cpu, bc);
            gpuprim_buffer_destroy(gpu, bg);
            gpuprim_buffer_destroy(cpu, outc);
            gpuprim_buffer_destroy(gpu, outg);
        }
    }
    free(host);
    free(oc_host);
    free(og_host);
}

static void check_sort(gpuprim_dtype_t kd, gpuprim_dtype_t vd, uint64_t n, uint32_t begin, uint32_t end,
                       int descending, int in_place, int few) {
    size_t ks = gpuprim_dtype_size(kd), vs = vd == (gpuprim_dtype_t)-1 ? 0 : gpuprim_dtype_size(vd);
    void *keys = malloc(n * ks + 16), *values = malloc(n * 8 + 16);
    void *kc = malloc(n * ks + 16), *kg = malloc(n * ks + 16), *vc = malloc(n * 8 + 16), *vg = malloc(n * 8 + 16);
    fill(kd, keys, n, 0, few);
    fill(vs ? vd : GPUPRIM_DTYPE_U8, values, n, 0, 0);
    gpuprim_context_t ctx[2] = {cpu, gpu};
    void *kout[2] = {kc, kg}, *vout[2] = {vc, vg};
    gpuprim_sort_options_t options;
    gpuprim_sort_options_init(&options);
    options.order = descending;
    options.begin_bit = begin;
    options.end_bit = end;
    for (int c = 0; c < 2; ++c) {
        gpuprim_buffer_t ki = upload(ctx[c], kd, keys, n), vi = vs ? upload(ctx[c], vd, values, n) : NULL;
        gpuprim_buffer_t ko = ki, vo = vi;
        if (!in_place) {
            memset(kout[c], 0x5A, n * ks);
            ko = upload(ctx[c], kd, kout[c], n);
            if (vs) vo = upload(ctx[c], vd, kout[c], n);
        }
        TC_CHECK_OK(ctx[c], gpuprim_sort_with_options(ctx[c], ki, vi, ko, vo, &options));
        download(ctx[c], ko, kout[c], n);
        if (vs) download(ctx[c], vo, vout[c], n);
        gpuprim_buffer_destroy(ctx[c], ki);
        if (vi) gpuprim_buffer_destroy(ctx[c], vi);
        if (!in_place) {
            gpuprim_buffer_destroy(ctx[c], ko);
            if (vo) gpuprim_buffer_destroy(ctx[c], vo);
        }
    }
    TC_CHECK(memcmp(kc, kg, n * ks) == 0, "sort keys %s values %s n=%llu bits [%u,%u) desc %d in place %d few %d differ",
             tc_dtype_name(kd), vs ? tc_dtype_name(vd) : "-", (unsigned long long)n, begin, end, descending, in_place, few);
    if (vs)
        TC_CHECK(memcmp(vc, vg, n * vs) == 0, "sort values %s values %s n=%llu bits [%u,%u) desc %d in place %d differ",
                 tc_dtype_name(kd), tc_dtype_name(vd), (unsigned long long)n, begin, end, descending, in_place);
    free(keys);
    free(values);
    free(kc);
    free(kg);
    free(vc);
    free(vg);
}

int main(void) {
    gpuprim_context_options_t options;
    gpuprim_context_options_init(&options);
    options.backend = GPUPRIM_BACKEND_CUDA;
    if (gpuprim_context_create(&options, &gpu, NULL, 0) != GPUPRIM_SUCCESS) {
        printf("SKIP: no usable CUDA device\n");
        return 77;
    }
    options.backend = GPUPRIM_BACKEND_CPU;
    TC_CHECK(gpuprim_context_create(&options, &cpu, NULL, 0) == GPUPRIM_SUCCESS, "CPU context");

    const uint64_t sizes[] = {1, 2, 31, 33, 1000, 4095, 4096, 4097, 8191, 8193, 65537, (1u << 20) + 3, (1u << 22) + 1};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
        for (size_t d = 0; d < DTYPE_COUNT; ++d) {
            check_reduce(dtypes[d], sizes[s]);
            check_scan(dtypes[d], sizes[s]);
        }
    }
    const uint64_t sort_sizes[] = {1, 33, 4096, 4097, 100000, 300001, (1u << 21) + 5};
    for (size_t s = 0; s < sizeof sort_sizes / sizeof sort_sizes[0]; ++s) {
        uint64_t n = sort_sizes[s];
        for (size_t k = 0; k < DTYPE_COUNT; ++k) {
            gpuprim_dtype_t kd = dtypes[k];
            uint32_t bits = (uint32_t)gpuprim_dtype_size(kd) * 8;
            for (int desc = 0; desc < 2; ++desc) {
                check_sort(kd, (gpuprim_dtype_t)-1, n, 0, 0, desc, desc, (int)(s % 2));
                check_sort(kd, GPUPRIM_DTYPE_U8, n, 0, 0, desc, 0, 1);
                check_sort(kd, GPUPRIM_DTYPE_I16, n, 0, 0, desc, 1, 0);
                check_sort(kd, GPUPRIM_DTYPE_U32, n, 0, 0, desc, desc, 0);
                check_sort(kd, GPUPRIM_DTYPE_F64, n, 0, 0, desc, 0, 1);
                /* bit ranges: low half, an unaligned middle, one bit */
                check_sort(kd, (gpuprim_dtype_t)-1, n, 0, bits / 2, desc, 0, 0);
                check_sort(kd, GPUPRIM_DTYPE_U32, n, 3, bits > 8 ? bits - 5 : 7, desc, 1, 0);
                check_sort(kd, GPUPRIM_DTYPE_U16, n, bits - 1, bits, desc, 0, 0);
            }
        }
    }
    gpuprim_context_destroy(cpu);
    gpuprim_context_destroy(gpu);
    if (failures) {
        fprintf(stderr, "test_backends_agree: %d failures\n", failures);
        return 1;
    }
    printf("test_backends_agree: PASS\n");
    return 0;
}
