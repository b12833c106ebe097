/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CUDA backend against the CPU backend on the same inputs: every dtype,
 * op and order, sort with every value width and with bit ranges. Integer
 * results, MIN/MAX and sorts must be bit-identical; float SUM, dot and scan
 * within an f32 accumulation bound (the backends associate differently).
 * Top-k (flat, rows, CSR) bit-identical, untouched slots included.
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

/* ---- segmented calls ---------------------------------------------------- */

/* A segmentation of n elements: uniform rows, or CSR offsets (of dtype od)
 * built from lengths, starting at `lead` and leaving a tail uncovered. */
typedef struct {
    int rows;
    uint64_t row_count, row_length;
    gpuprim_dtype_t od;
    uint64_t segments;
    uint64_t *offsets; /* segments + 1 */
    uint64_t n;
} layout_t;

static layout_t rows_layout(uint64_t rows, uint64_t length) {
    layout_t l;
    memset(&l, 0, sizeof l);
    l.rows = 1;
    l.row_count = rows;
    l.row_length = length;
    l.n = rows * length;
    return l;
}

/* kind 0: power-law lengths with empties; 1: one giant segment among short
 * ones; 2: lengths at the network and tile edges. */
static layout_t offsets_layout(gpuprim_dtype_t od, uint64_t segments, int kind, uint64_t lead, uint64_t tail) {
    static const uint64_t edges[] = {0, 1, 2, 3, 4, 5, 31, 32, 33, 127, 128, 129, 511, 512, 513, 4095, 4096, 4097, 8193};
    layout_t l;
    memset(&l, 0, sizeof l);
    l.od = od;
    l.segments = segments;
    l.offsets = malloc((segments + 1) * sizeof(uint64_t));
    uint64_t at = lead;
    for (uint64_t s = 0; s <= segments; ++s) {
        l.offsets[s] = at;
        if (s == segments) break;
        uint64_t length;
        if (kind == 0) {
            uint64_t r = next_random();
            length = (r % 7 == 0) ? 0 : (uint64_t)(1.0 / (((r >> 8) % 100000) / 100000.0 + 1e-4));  /* heavy tail */
            if (length > 200000) length = 200000;
        } else if (kind == 1) {
            length = s == segments / 2 ? 300001 : next_random() % 40;
        } else {
            length = edges[s % (sizeof edges / sizeof edges[0])];
        }
        at += length;
    }
    l.n = at + tail;
    return l;
}

static gpuprim_buffer_t make_segments(gpuprim_context_t c, const layout_t *l, gpuprim_segments_t *segments) {
    if (l->rows) {
        gpuprim_segments_init_rows(segments, l->row_count, l->row_length);
        return NULL;
    }
    size_t os = gpuprim_dtype_size(l->od);
    unsigned char *packed = malloc((l->segments + 1) * os);
    for (uint64_t s = 0; s <= l->segments; ++s) {
        if (os == 4) { uint32_t v = (uint32_t)l->offsets[s]; memcpy(packed + s * 4, &v, 4); }
        else memcpy(packed + s * 8, &l->offsets[s], 8);
    }
    gpuprim_buffer_t b = upload(c, l->od, packed, l->segments + 1);
    free(packed);
    gpuprim_segments_init_offsets(segments, b);
    return b;
}

static void free_layout(layout_t *l) { free(l->offsets); }

static uint64_t layout_segments(const layout_t *l) { return l->rows ? l->row_count : l->segments; }

/* Sorts keys (and values, or argsort indices of dtype vd when argsort) by
 * segment on both backends; everything must be bit-identical, including the
 * poisoned elements outside every segment. */
static void check_segmented_sort(const layout_t *l, gpuprim_dtype_t kd, gpuprim_dtype_t vd, int argsort,
                                 int descending, int in_place, uint32_t begin, uint32_t end, int few) {
    uint64_t n = l->n;
    size_t ks = gpuprim_dtype_size(kd), vs = vd == (gpuprim_dtype_t)-1 ? 0 : gpuprim_dtype_size(vd);
    void *keys = malloc(n * ks + 16), *values = malloc(n * 8 + 16);
    void *kc = malloc(n * ks + 16), *kg = malloc(n * ks + 16), *vc = malloc(n * 8 + 16), *vg = malloc(n * 8 + 16);
    fill(kd, keys, n, 0, few);
    fill(GPUPRIM_DTYPE_U64, values, n, 0, 0);
    gpuprim_context_t ctx[2] = {cpu, gpu};
    void *kout[2] = {kc, kg}, *vout[2] = {vc, vg};
    gpuprim_sort_options_t options;
    gpuprim_sort_options_init(&options);
    options.order = descending;
    options.begin_bit = begin;
    options.end_bit = end;
    for (int c = 0; c < 2; ++c) {
        gpuprim_segments_t segments;
        gpuprim_buffer_t ob = make_segments(ctx[c], l, &segments);
        gpuprim_buffer_t ki = upload(ctx[c], kd, keys, n), vi = vs && !argsort ? upload(ctx[c], vd, values, n) : NULL;
        gpuprim_buffer_t ko = ki, vo = vi;
        if (!in_place) {
            memset(kout[c], 0x5A, n * ks);
            ko = upload(ctx[c], kd, kout[c], n);
        }
        if (vs && (argsort || !in_place)) {
            memset(vout[c], 0x3C, n * vs);
            vo = upload(ctx[c], vd, vout[c], n);
        }
        if (argsort)
            TC_CHECK_OK(ctx[c], gpuprim_segmented_argsort(ctx[c], &segments, ki, ko, vo, &options));
        else
            TC_CHECK_OK(ctx[c], gpuprim_segmented_sort(ctx[c], &segments, ki, vi, ko, vo, &options));
        download(ctx[c], ko, kout[c], n);
        if (vs) download(ctx[c], vo, vout[c], n);
        gpuprim_buffer_destroy(ctx[c], ki);
        if (vi) gpuprim_buffer_destroy(ctx[c], vi);
        if (ko != ki) gpuprim_buffer_destroy(ctx[c], ko);
        if (vo && vo != vi) gpuprim_buffer_destroy(ctx[c], vo);
        if (ob) gpuprim_buffer_destroy(ctx[c], ob);
    }
    TC_CHECK(memcmp(kc, kg, n * ks) == 0,
             "segmented %s keys %s values %s n=%llu segs=%llu bits [%u,%u) desc %d in place %d differ",
             argsort ? "argsort" : "sort", tc_dtype_name(kd), vs ? tc_dtype_name(vd) : "-", (unsigned long long)n,
             (unsigned long long)layout_segments(l), begin, end, descending, in_place);
    if (vs)
        TC_CHECK(memcmp(vc, vg, n * vs) == 0,
                 "segmented %s values/indices %s of %s keys n=%llu segs=%llu desc %d in place %d differ",
                 argsort ? "argsort" : "sort", tc_dtype_name(vd), tc_dtype_name(kd), (unsigned long long)n,
                 (unsigned long long)layout_segments(l), descending, in_place);
    free(keys);
    free(values);
    free(kc);
    free(kg);
    free(vc);
    free(vg);
}

static void check_argsort(gpuprim_dtype_t kd, gpuprim_dtype_t id, uint64_t n, int descending, int with_keys) {
    size_t ks = gpuprim_dtype_size(kd), is = gpuprim_dtype_size(id);
    void *keys = malloc(n * ks + 16), *kc = malloc(n * ks + 16), *kg = malloc(n * ks + 16);
    void *ic = malloc(n * is + 16), *ig = malloc(n * is + 16);
    fill(kd, keys, n, 0, (int)(n % 2));
    gpuprim_context_t ctx[2] = {cpu, gpu};
    void *kout[2] = {kc, kg}, *iout[2] = {ic, ig};
    gpuprim_sort_options_t options;
    gpuprim_sort_options_init(&options);
    options.order = descending;
    for (int c = 0; c < 2; ++c) {
        gpuprim_buffer_t ki = upload(ctx[c], kd, keys, n), ko = NULL, io = NULL;
        memset(kout[c], 0, n * ks);
        memset(iout[c], 0x77, n * is);
        if (with_keys) ko = upload(ctx[c], kd, kout[c], n);
        io = upload(ctx[c], id, iout[c], n);
        TC_CHECK_OK(ctx[c], gpuprim_argsort(ctx[c], ki, ko, io, &options));
        if (ko) download(ctx[c], ko, kout[c], n);
        download(ctx[c], io, iout[c], n);
        gpuprim_buffer_destroy(ctx[c], ki);
        if (ko) gpuprim_buffer_destroy(ctx[c], ko);
        gpuprim_buffer_destroy(ctx[c], io);
    }
    TC_CHECK(memcmp(ic, ig, n * is) == 0, "argsort %s indices %s n=%llu desc %d differ", tc_dtype_name(kd),
             tc_dtype_name(id), (unsigned long long)n, descending);
    if (with_keys)
        TC_CHECK(memcmp(kc, kg, n * ks) == 0, "argsort %s keys n=%llu desc %d differ", tc_dtype_name(kd),
                 (unsigned long long)n, descending);
    free(keys);
    free(kc);
    free(kg);
    free(ic);
    free(ig);
}

/* Top-k of every segment (flat: gpuprim_topk over all n keys when l is
 * NULL) on both backends; keys and indices must be bit-identical, the slots
 * a short CSR segment leaves (poisoned) included. mode: 0 keys_out only,
 * 1 indices only, 2 both. */
static void check_topk(const layout_t *l, uint64_t flat_n, gpuprim_dtype_t kd, gpuprim_dtype_t id, uint64_t k,
                       int descending, int mode, int few) {
    uint64_t n = l ? l->n : flat_n, segs = l ? layout_segments(l) : 1, slots = segs * k;
    size_t ks = gpuprim_dtype_size(kd), is = gpuprim_dtype_size(id);
    void *keys = malloc(n * ks + 16), *kc = malloc(slots * ks + 16), *kg = malloc(slots * ks + 16);
    void *ic = malloc(slots * is + 16), *ig = malloc(slots * is + 16);
    fill(kd, keys, n, 0, few);
    gpuprim_context_t ctx[2] = {cpu, gpu};
    void *kout[2] = {kc, kg}, *iout[2] = {ic, ig};
    for (int c = 0; c < 2; ++c) {
        gpuprim_segments_t segments;
        gpuprim_buffer_t ob = l ? make_segments(ctx[c], l, &segments) : NULL;
        gpuprim_buffer_t ki = upload(ctx[c], kd, keys, n), ko = NULL, io = NULL;
        memset(kout[c], 0x5A, slots * ks);
        memset(iout[c], 0x77, slots * is);
        if (mode != 1) ko = upload(ctx[c], kd, kout[c], slots);
        if (mode != 0) io = upload(ctx[c], id, iout[c], slots);
        if (l)
            TC_CHECK_OK(ctx[c], gpuprim_segmented_topk(ctx[c], &segments, ki, k, (gpuprim_order_t)descending, ko, io));
        else
            TC_CHECK_OK(ctx[c], gpuprim_topk(ctx[c], ki, k, (gpuprim_order_t)descending, ko, io));
        if (ko) download(ctx[c], ko, kout[c], slots);
        if (io) download(ctx[c], io, iout[c], slots);
        gpuprim_buffer_destroy(ctx[c], ki);
        if (ko) gpuprim_buffer_destroy(ctx[c], ko);
        if (io) gpuprim_buffer_destroy(ctx[c], io);
        if (ob) gpuprim_buffer_destroy(ctx[c], ob);
    }
    if (mode != 1)
        TC_CHECK(memcmp(kc, kg, slots * ks) == 0, "top-k %s keys n=%llu segs=%llu k=%llu desc %d differ",
                 tc_dtype_name(kd), (unsigned long long)n, (unsigned long long)segs, (unsigned long long)k, descending);
    if (mode != 0)
        TC_CHECK(memcmp(ic, ig, slots * is) == 0, "top-k %s indices %s n=%llu segs=%llu k=%llu desc %d differ",
                 tc_dtype_name(kd), tc_dtype_name(id), (unsigned long long)n, (unsigned long long)segs,
                 (unsigned long long)k, descending);
    free(keys);
    free(kc);
    free(kg);
    free(ic);
    free(ig);
}

/* Segmented reduce and scan on both backends: exact for integers and
 * MIN/MAX, within the f32 bound of each segment for float sums. */
static void check_segmented_reduce_scan(const layout_t *l, gpuprim_dtype_t d) {
    uint64_t n = l->n, segs = layout_segments(l);
    size_t size = gpuprim_dtype_size(d);
    void *host = malloc(n * size + 16), *oc = malloc((n > segs ? n : segs) * size + 16),
         *og = malloc((n > segs ? n : segs) * size + 16);
    gpuprim_context_t ctx[2] = {cpu, gpu};
    void *out[2] = {oc, og};
    for (int op = 0; op < 3; ++op) {
        fill(d, host, n, op == GPUPRIM_OP_SUM, 0);
        /* reduce */
        for (int c = 0; c < 2; ++c) {
            gpuprim_segments_t segments;
            gpuprim_buffer_t ob = make_segments(ctx[c], l, &segments);
            gpuprim_buffer_t in = upload(ctx[c], d, host, n);
            memset(out[c], 0xA5, segs * size);
            gpuprim_buffer_t o = upload(ctx[c], d, out[c], segs);
            TC_CHECK_OK(ctx[c], gpuprim_segmented_reduce(ctx[c], (gpuprim_op_t)op, &segments, in, o));
            download(ctx[c], o, out[c], segs);
            gpuprim_buffer_destroy(ctx[c], in);
            gpuprim_buffer_destroy(ctx[c], o);
            if (ob) gpuprim_buffer_destroy(ctx[c], ob);
        }
        for (uint64_t s = 0; s < segs; ++s) {
            int same;
            if (op == GPUPRIM_OP_SUM && is_floaty(d)) {
                uint64_t b = l->rows ? s * l->row_length : l->offsets[s];
                uint64_t e = l->rows ? (s + 1) * l->row_length : l->offsets[s + 1];
                double bound = sum_bound(d, (const char *)host + b * size, e - b, value_of(d, oc, s));
                same = close_enough(d, oc, og, s, bound);
            } else {
                same = memcmp((char *)oc + s * size, (char *)og + s * size, size) == 0;
            }
            if (!same) {
                TC_CHECK(0, "segmented reduce %s %s n=%llu segment %llu of %llu: cpu %.9g gpu %.9g", tc_op_name((gpuprim_op_t)op),
                         tc_dtype_name(d), (unsigned long long)n, (unsigned long long)s, (unsigned long long)segs,
                         value_of(d, oc, s), value_of(d, og, s));
                break;
            }
        }
        /* scan, inclusive and exclusive, out of place and in place */
        for (int kind = 0; kind < 2; ++kind) {
            for (int c = 0; c < 2; ++c) {
                gpuprim_segments_t segments;
                gpuprim_buffer_t ob = make_segments(ctx[c], l, &segments);
                gpuprim_buffer_t in = upload(ctx[c], d, host, n);
                memset(out[c], 0xA5, n * size);
                gpuprim_buffer_t o = kind == 0 ? upload(ctx[c], d, out[c], n) : in;
                TC_CHECK_OK(ctx[c], gpuprim_segmented_scan(ctx[c], (gpuprim_op_t)op, (gpuprim_scan_kind_t)kind,
                                                           &segments, in, o));
                download(ctx[c], o, out[c], n);
                gpuprim_buffer_destroy(ctx[c], in);
                if (o != in) gpuprim_buffer_destroy(ctx[c], o);
                if (ob) gpuprim_buffer_destroy(ctx[c], ob);
            }
            if (op == GPUPRIM_OP_SUM && is_floaty(d)) {
                double bound = sum_bound(d, host, n, 0);
                for (uint64_t i = 0; i < n; ++i) {
                    double b = bound + 2 * ldexp(1, is_float16(d) ? (d == GPUPRIM_DTYPE_F16 ? -10 : -7) : -22) *
                                           fabs(value_of(d, oc, i));
                    if (!close_enough(d, oc, og, i, b)) {
                        TC_CHECK(0, "segmented scan sum %s kind %d n=%llu at %llu: cpu %.9g gpu %.9g", tc_dtype_name(d),
                                 kind, (unsigned long long)n, (unsigned long long)i, value_of(d, oc, i), value_of(d, og, i));
                        break;
                    }
                }
            } else {
                TC_CHECK(memcmp(oc, og, n * size) == 0, "segmented scan %s kind %d %s n=%llu segs=%llu differs",
                         tc_op_name((gpuprim_op_t)op), kind, tc_dtype_name(d), (unsigned long long)n,
                         (unsigned long long)segs);
            }
        }
    }
    free(host);
    free(oc);
    free(og);
}

/* A bad offset fails on the device as on the CPU, with the same message,
 * and leaves the output as it was. */
static void check_bad_offsets(void) {
    const uint32_t bad[][6] = {{0, 3, 2, 5, 6, 6}, {0, 1, 2, 3, 4, 99}, {2, 2, 2, 2, 1, 3}};
    for (int k = 0; k < 3; ++k) {
        char message[2][256];
        for (int c = 0; c < 2; ++c) {
            gpuprim_context_t x = c ? gpu : cpu;
            float data[6] = {1, 2, 3, 4, 5, 6}, result[5] = {7, 7, 7, 7, 7};
            gpuprim_buffer_t in = upload(x, GPUPRIM_DTYPE_F32, data, 6), out = upload(x, GPUPRIM_DTYPE_F32, result, 5);
            gpuprim_buffer_t ob = upload(x, GPUPRIM_DTYPE_U32, bad[k], 6);
            gpuprim_segments_t segments;
            gpuprim_segments_init_offsets(&segments, ob);
            gpuprim_status_t status = gpuprim_segmented_reduce(x, GPUPRIM_OP_SUM, &segments, in, out);
            TC_CHECK(status == GPUPRIM_ERROR_INVALID_ARGUMENT, "bad offsets %d: status %d", k, (int)status);
            snprintf(message[c], sizeof message[c], "%s", gpuprim_context_last_error(x));
            float after[5];
            download(x, out, after, 5);
            TC_CHECK(memcmp(after, result, sizeof after) == 0, "bad offsets %d: output written", k);
            gpuprim_buffer_destroy(x, in);
            gpuprim_buffer_destroy(x, out);
            gpuprim_buffer_destroy(x, ob);
        }
        TC_CHECK(strcmp(message[0], message[1]) == 0, "bad offsets %d: cpu says '%s', cuda '%s'", k, message[0],
                 message[1]);
    }
}

static gpuprim_dtype_t index_dtypes_for(size_t i) {
    static const gpuprim_dtype_t index_dtypes[] = {GPUPRIM_DTYPE_I32, GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_I64,
                                                   GPUPRIM_DTYPE_U64};
    return index_dtypes[i % 4];
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
    check_bad_offsets();
    {
        static const gpuprim_dtype_t index_dtypes[] = {GPUPRIM_DTYPE_I32, GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_I64,
                                                       GPUPRIM_DTYPE_U64};
        const uint64_t argsort_sizes[] = {1, 1000, 4097, 100001, (1u << 20) + 7};
        for (size_t s = 0; s < sizeof argsort_sizes / sizeof argsort_sizes[0]; ++s)
            for (size_t k = 0; k < DTYPE_COUNT; ++k)
                for (int desc = 0; desc < 2; ++desc)
                    check_argsort(dtypes[k], index_dtypes[(s + k + desc) % 4], argsort_sizes[s], desc, (int)((s + k) % 2));
    }
    {
        /* flat top-k: the argsort sizes and the selection's edges, k from 0 to n */
        const uint64_t topk_sizes[] = {1, 33, 1000, 4097, 8193, 100001, (1u << 20) + 7};
        const uint64_t topk_ks[] = {0, 1, 2, 8, 64, 65, 1024, 4097};
        for (size_t s = 0; s < sizeof topk_sizes / sizeof topk_sizes[0]; ++s) {
            const uint64_t n = topk_sizes[s];
            for (size_t k = 0; k < DTYPE_COUNT; ++k)
                for (int desc = 0; desc < 2; ++desc) {
                    for (size_t j = 0; j < sizeof topk_ks / sizeof topk_ks[0]; ++j)
                        if (topk_ks[j] <= n)
                            check_topk(NULL, n, dtypes[k], index_dtypes_for(s + k + j), topk_ks[j], desc,
                                       (int)((s + j + desc) % 3), (int)((k + j) % 2));
                    check_topk(NULL, n, dtypes[k], index_dtypes_for(s + k), n - 1, desc, 2, (int)(k % 2));
                    check_topk(NULL, n, dtypes[k], index_dtypes_for(s + k + 1), n, desc, (int)(s % 3), 1);
                }
        }
    }
    {
        layout_t layouts[12];
        int count = 0;
        layouts[count++] = rows_layout(1000, 16);
        layouts[count++] = rows_layout(300, 256);
        layouts[count++] = rows_layout(37, 1000);
        layouts[count++] = rows_layout(5, 4096);
        layouts[count++] = rows_layout(3, 70001);
        layouts[count++] = rows_layout(7, 1);
        layouts[count++] = rows_layout(4, 0);
        layouts[count++] = offsets_layout(GPUPRIM_DTYPE_I32, 3000, 0, 0, 0);
        layouts[count++] = offsets_layout(GPUPRIM_DTYPE_U64, 200, 1, 5, 9);
        layouts[count++] = offsets_layout(GPUPRIM_DTYPE_I64, 190, 2, 0, 3);
        layouts[count++] = offsets_layout(GPUPRIM_DTYPE_U32, 0, 0, 4, 2);
        layouts[count++] = offsets_layout(GPUPRIM_DTYPE_U32, 400, 0, 1, 0);
        for (int i = 0; i < count; ++i) {
            const layout_t *l = &layouts[i];
            for (size_t k = 0; k < DTYPE_COUNT; ++k) {
                gpuprim_dtype_t kd = dtypes[k];
                uint32_t bits = (uint32_t)gpuprim_dtype_size(kd) * 8;
                check_segmented_reduce_scan(l, kd);
                for (int desc = 0; desc < 2; ++desc) {
                    check_segmented_sort(l, kd, (gpuprim_dtype_t)-1, 0, desc, desc, 0, 0, (int)(k % 2));
                    check_segmented_sort(l, kd, GPUPRIM_DTYPE_U32, 0, desc, !desc, 0, 0, 1);
                    check_segmented_sort(l, kd, GPUPRIM_DTYPE_U8, 0, desc, desc, 0, 0, 0);
                    check_segmented_sort(l, kd, GPUPRIM_DTYPE_F64, 0, desc, 0, 0, 0, 0);
                    check_segmented_sort(l, kd, index_dtypes_for(k + desc), 1, desc, 0, 0, 0, (int)(k % 2));
                    check_segmented_sort(l, kd, (gpuprim_dtype_t)-1, 0, desc, 0, 1, bits - 1, 0);
                    check_segmented_sort(l, kd, GPUPRIM_DTYPE_U16, 0, desc, 1, 0, bits / 2, 0);
                    /* top-k: k past the rows is refused, so rows take k up to their length; CSR any k */
                    {
                        const uint64_t topk_ks[] = {0, 1, 8, 64, 65, 1024, 4097};
                        for (size_t j = 0; j < sizeof topk_ks / sizeof topk_ks[0]; ++j) {
                            if (l->rows && topk_ks[j] > l->row_length) continue;
                            if (layout_segments(l) * topk_ks[j] > (8u << 20)) continue;
                            check_topk(l, 0, kd, index_dtypes_for(k + j + desc), topk_ks[j], desc,
                                       (int)((k + j + desc) % 3), (int)((k + j) % 2));
                        }
                        if (l->rows && l->row_length > 0)
                            check_topk(l, 0, kd, index_dtypes_for(k), l->row_length, desc, 2, 0);
                    }
                }
            }
        }
        for (int i = 0; i < count; ++i) free_layout(&layouts[i]);
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
