/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The registry's table and what every case shares: making, running and
 * comparing calls (registry.h).
 */
#include "registry.h"

tc_state_t tc; /* the program's test state, shared with the cases (test_common.h) */

/* The cases of registry_cases.h (written by test/CMakeLists.txt, one line
 * per registry/<name>_case.c), declared, then listed. */
#define TR_CASE(name) extern const tr_case_t tr_##name##_case;
#include "registry_cases.h"
#undef TR_CASE

const tr_case_t *const tr_cases[] = {
#define TR_CASE(name) &tr_##name##_case,
#include "registry_cases.h"
#undef TR_CASE
};
const size_t tr_case_count = sizeof tr_cases / sizeof tr_cases[0];

const tr_case_t *tr_find_case(const char *name) {
    size_t i;
    for (i = 0; i < tr_case_count; ++i)
        if (strcmp(tr_cases[i]->name, name) == 0) return tr_cases[i];
    return NULL;
}

/* ---- calls --------------------------------------------------------------- */

void tr_call_init(tr_call_t *call, const tr_case_t *kase) {
    int i;
    memset(call, 0, sizeof *call);
    call->kase = kase;
    for (i = 0; i < TR_MAX_ARGS; ++i) call->arg[i].same_as = -1;
}

void tr_call_label(tr_call_t *call, const char *format, ...) {
    va_list args;
    int used = snprintf(call->label, sizeof call->label, "%s: ", call->kase->name);
    va_start(args, format);
    if (used > 0 && (size_t)used < sizeof call->label)
        vsnprintf(call->label + used, sizeof call->label - (size_t)used, format, args);
    va_end(args);
}

void tr_set_arg(tr_call_t *call, int i, gpuprim_dtype_t dtype, uint64_t count, const void *host, int fill,
                int read_back) {
    tr_arg_t *a = &call->arg[i];
    size_t bytes = (size_t)count * tc_size(dtype);
    if (a->owns_host) free(a->host);
    a->used = 1;
    a->dtype = dtype;
    a->count = count;
    a->same_as = -1;
    a->read_back = read_back;
    a->owns_host = host == NULL;
    if (host) {
        a->host = (void *)(uintptr_t)host; /* borrowed, never written */
    } else {
        a->host = tc_xmalloc(bytes + 16);
        memset(a->host, fill, bytes);
    }
}

void tr_set_in_place(tr_call_t *call, int i, int same_as, int read_back) {
    tr_arg_t *a = &call->arg[i];
    if (a->owns_host) free(a->host);
    *a = call->arg[same_as];
    a->host = NULL;
    a->owns_host = 0;
    a->same_as = same_as;
    a->read_back = read_back;
}

void tr_call_free(tr_call_t *call) {
    int i;
    for (i = 0; i < TR_MAX_ARGS; ++i) {
        if (call->arg[i].owns_host) free(call->arg[i].host);
        call->arg[i].host = NULL;
        call->arg[i].owns_host = 0;
    }
}

tr_call_t *tr_call_clone(const tr_call_t *call) {
    tr_call_t *copy = (tr_call_t *)tc_xmalloc(sizeof *copy);
    int i;
    *copy = *call;
    for (i = 0; i < TR_MAX_ARGS; ++i) {
        const tr_arg_t *a = &call->arg[i];
        if (!a->host) continue;
        copy->arg[i].host = tc_xmalloc((size_t)a->count * tc_size(a->dtype) + 16);
        copy->arg[i].owns_host = 1;
        memcpy(copy->arg[i].host, a->host, (size_t)a->count * tc_size(a->dtype));
    }
    if (call->layout) {
        tc_layout_t *layout = (tc_layout_t *)tc_xmalloc(sizeof *layout);
        *layout = *call->layout;
        layout->off = (uint64_t *)tc_xmalloc((layout->nseg + 1) * sizeof *layout->off);
        memcpy(layout->off, call->layout->off, (layout->nseg + 1) * sizeof *layout->off);
        copy->layout = layout;
    }
    return copy;
}

void tr_call_destroy(tr_call_t *call) {
    if (!call) return;
    tr_call_free(call);
    if (call->layout) {
        tc_layout_t *layout = (tc_layout_t *)(uintptr_t)call->layout; /* the clone's own copy */
        tc_layout_free(layout);
        free(layout);
    }
    free(call);
}

/* ---- running ------------------------------------------------------------- */

void tr_run(const tr_call_t *call, gpuprim_context_t ctx, tr_result_t *result) {
    tr_run_with(call, ctx, ctx, result);
}

void tr_make(const tr_call_t *call, gpuprim_context_t ctx, tr_made_t *made) {
    int i;
    memset(made, 0, sizeof *made);
    for (i = 0; i < TR_MAX_ARGS; ++i) {
        const tr_arg_t *a = &call->arg[i];
        if (!a->used) continue;
        if (a->same_as >= 0) made->b[i] = made->b[a->same_as];
        else if (a->count) made->b[i] = tc_buffer_from(ctx, a->dtype, a->host, a->count);
        else made->b[i] = tc_buffer(ctx, a->dtype, 0);
    }
    if (call->layout) made->segments = tc_make_segments(ctx, call->layout, &made->offsets);
}

gpuprim_status_t tr_invoke(const tr_call_t *call, gpuprim_context_t call_ctx, const tr_made_t *made, void *scalar) {
    return call->kase->invoke(call, call_ctx, made->b, call->layout ? &made->segments : NULL, scalar);
}

void tr_unmake(const tr_call_t *call, gpuprim_context_t ctx, tr_made_t *made) {
    int i;
    for (i = 0; i < TR_MAX_ARGS; ++i)
        if (call->arg[i].used && call->arg[i].same_as < 0) CHECK_OK(gpuprim_buffer_destroy(ctx, made->b[i]));
    if (made->offsets) CHECK_OK(gpuprim_buffer_destroy(ctx, made->offsets));
    memset(made, 0, sizeof *made);
}

void tr_run_with(const tr_call_t *call, gpuprim_context_t ctx, gpuprim_context_t call_ctx, tr_result_t *result) {
    tr_made_t made;
    memset(result, 0, sizeof *result);
    tr_make(call, ctx, &made);
    result->status = tr_invoke(call, call_ctx, &made, result->scalar);
    if (result->status != GPUPRIM_SUCCESS)
        snprintf(result->message, sizeof result->message, "%s", gpuprim_context_last_error(call_ctx));
    tr_read_back(call, ctx, &made, result);
    tr_unmake(call, ctx, &made);
}

void tr_read_back(const tr_call_t *call, gpuprim_context_t ctx, const tr_made_t *made, tr_result_t *result) {
    int i;
    for (i = 0; i < TR_MAX_ARGS; ++i) {
        const tr_arg_t *a = &call->arg[i];
        if (a->used && a->read_back) {
            free(result->out[i]);
            result->out[i] = (unsigned char *)tc_xmalloc((size_t)a->count * tc_size(a->dtype) + 16);
            if (a->count) REQUIRE_OK(gpuprim_buffer_download(ctx, made->b[i], 0, result->out[i], a->count));
        }
    }
}

void tr_refill(const tr_call_t *call, gpuprim_context_t ctx, const tr_made_t *made) {
    int i;
    for (i = 0; i < TR_MAX_ARGS; ++i) {
        const tr_arg_t *a = &call->arg[i];
        if (a->used && a->same_as < 0 && a->count)
            REQUIRE_OK(gpuprim_buffer_upload(ctx, made->b[i], 0, a->host, a->count));
    }
}

void tr_result_free(tr_result_t *result) {
    int i;
    for (i = 0; i < TR_MAX_ARGS; ++i) {
        free(result->out[i]);
        result->out[i] = NULL;
    }
}

int tr_unchanged(const tr_call_t *call, const tr_result_t *r, char *why, size_t cap) {
    int i;
    for (i = 0; i < TR_MAX_ARGS; ++i) {
        const tr_arg_t *g = &call->arg[i];
        const tr_arg_t *origin = g->same_as >= 0 ? &call->arg[g->same_as] : g;
        if (!g->used || !g->read_back) continue;
        if (memcmp(r->out[i], origin->host, (size_t)g->count * tc_size(g->dtype)) != 0) {
            snprintf(why, cap, "argument %d (%s) was written", i, tc_dtype_name(g->dtype));
            return 0;
        }
    }
    return 1;
}

int tr_reference(const tr_call_t *call, tr_result_t *want) {
    int i;
    memset(want, 0, sizeof *want);
    for (i = 0; i < TR_MAX_ARGS; ++i) {
        const tr_arg_t *a = &call->arg[i];
        const tr_arg_t *origin = a->same_as >= 0 ? &call->arg[a->same_as] : a;
        if (!a->used || !a->read_back) continue;
        want->out[i] = (unsigned char *)tc_xmalloc((size_t)a->count * tc_size(a->dtype) + 16);
        memcpy(want->out[i], origin->host, (size_t)a->count * tc_size(a->dtype));
    }
    if (!call->kase->reference || !call->kase->reference(call, want)) {
        tr_result_free(want);
        return 0;
    }
    return 1;
}

int tr_check(const tr_call_t *call, const tr_result_t *got, char *why, size_t cap) {
    tr_result_t want;
    int same;
    if (!tr_reference(call, &want)) return 1;
    same = tr_same_bits(call, got, &want, why, cap);
    tr_result_free(&want);
    return same;
}

uint64_t tr_segment_count(const tr_call_t *call) { return call->layout ? call->layout->nseg : 1; }

void tr_segment_bounds(const tr_call_t *call, uint64_t s, uint64_t *begin, uint64_t *end) {
    if (call->layout) {
        *begin = call->layout->off[s];
        *end = call->layout->off[s + 1];
    } else {
        *begin = 0;
        *end = call->arg[0].count;
    }
}

void tr_stable_order(const tr_call_t *call, uint64_t begin, uint64_t end, uint64_t *perm) {
    const gpuprim_dtype_t d = call->arg[0].dtype;
    const unsigned end_bit = call->end_bit ? call->end_bit : tc_bits(d);
    tc_reference_sort_permutation_bits(d, (const char *)call->arg[0].host + begin * tc_size(d), end - begin,
                                       call->order, call->begin_bit, end_bit, perm);
}

int tr_same_bits(const tr_call_t *call, const tr_result_t *a, const tr_result_t *b, char *why, size_t cap) {
    int i;
    if (call->scalar_size && memcmp(a->scalar, b->scalar, call->scalar_size) != 0) {
        snprintf(why, cap, "the results differ");
        return 0;
    }
    for (i = 0; i < TR_MAX_ARGS; ++i) {
        const tr_arg_t *g = &call->arg[i];
        if (!g->used || !g->read_back) continue;
        if (memcmp(a->out[i], b->out[i], (size_t)g->count * tc_size(g->dtype)) != 0) {
            snprintf(why, cap, "argument %d (%s) differs", i, tc_dtype_name(g->dtype));
            return 0;
        }
    }
    return 1;
}

int tr_agree(const tr_call_t *call, const tr_result_t *a, const tr_result_t *b, char *why, size_t cap) {
    return call->kase->agree ? call->kase->agree(call, a, b, why, cap) : tr_same_bits(call, a, b, why, cap);
}

/* ---- inputs and float comparison of the backend test --------------------- */

static uint64_t tr_rng = 0x9E3779B97F4A7C15ull;

uint64_t tr_random(void) {
    tr_rng ^= tr_rng << 13;
    tr_rng ^= tr_rng >> 7;
    tr_rng ^= tr_rng << 17;
    return tr_rng;
}

static int tr_is_float16(gpuprim_dtype_t d) { return d == GPUPRIM_DTYPE_F16 || d == GPUPRIM_DTYPE_BF16; }

double tr_value_of(gpuprim_dtype_t d, const void *p, uint64_t i) {
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
        uint32_t bits = (uint32_t)((const uint16_t *)p)[i] << 16;
        float f;
        memcpy(&f, &bits, 4);
        return f;
    }
    default: return 0;
    }
}

void tr_fill_random(gpuprim_dtype_t d, void *p, uint64_t n, int for_sum, int few) {
    uint64_t i;
    for (i = 0; i < n; ++i) {
        uint64_t bits = few ? (tr_random() % 5) * 0x0123456789ABCDEFull : tr_random();
        if (for_sum && tc_is_float(d)) {
            double v = (double)(int64_t)(tr_random() % 2000001) / 1000.0 - 1000.0;
            if (d == GPUPRIM_DTYPE_F16) v /= 100.0;
            switch (d) {
            case GPUPRIM_DTYPE_F32: {
                float f = (float)v;
                memcpy(&bits, &f, 4);
                break;
            }
            case GPUPRIM_DTYPE_F64: memcpy(&bits, &v, 8); break;
            case GPUPRIM_DTYPE_BF16: {
                float f = (float)v;
                uint32_t b;
                memcpy(&b, &f, 4);
                bits = b >> 16;
                break;
            }
            default: { /* f16: truncate the f32 pattern's mantissa into binary16 (|v| <= 10) */
                float f = (float)v;
                uint32_t b;
                int e;
                memcpy(&b, &f, 4);
                e = (int)((b >> 23) & 255) - 127 + 15;
                bits = e <= 0 ? (b >> 16) & 0x8000 : ((b >> 16) & 0x8000) | (uint32_t)e << 10 | ((b >> 13) & 1023);
            }
            }
        }
        tc_set(d, p, i, bits); /* a store of the width (a memcpy of tc_size(d) bytes was a call an element) */
    }
}

int tr_close_enough(gpuprim_dtype_t d, const void *a, const void *b, uint64_t i, double bound) {
    double x = tr_value_of(d, a, i), y = tr_value_of(d, b, i);
    if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
    return fabs(x - y) <= bound;
}

double tr_sum_bound(gpuprim_dtype_t d, const void *in, uint64_t n, double result) {
    double abs_sum = 0, unit, format;
    uint64_t i;
    for (i = 0; i < n; ++i) abs_sum += fabs(tr_value_of(d, in, i));
    unit = d == GPUPRIM_DTYPE_F64 ? ldexp(1, -52) : ldexp(1, -23);
    format = d == GPUPRIM_DTYPE_F16 ? ldexp(1, -10) : d == GPUPRIM_DTYPE_BF16 ? ldexp(1, -7) : unit;
    return 2 * (double)n * unit * abs_sum + 2 * format * fabs(result) + 1e-300;
}

int tr_scans_close(gpuprim_dtype_t d, const void *in, uint64_t n, const void *a, const void *b, char *why,
                   size_t cap) {
    double bound = tr_sum_bound(d, in, n, 0);
    uint64_t i;
    for (i = 0; i < n; ++i) {
        double e = bound + 2 * ldexp(1, tr_is_float16(d) ? (d == GPUPRIM_DTYPE_F16 ? -10 : -7) : -22) *
                               fabs(tr_value_of(d, a, i));
        if (!tr_close_enough(d, a, b, i, e)) {
            snprintf(why, cap, "at %llu: %.9g against %.9g", (unsigned long long)i, tr_value_of(d, a, i),
                     tr_value_of(d, b, i));
            return 0;
        }
    }
    return 1;
}

tc_layout_t tr_layout_offsets(const char *name, const uint64_t *offsets, uint64_t nseg, uint64_t n,
                              gpuprim_dtype_t od) {
    tc_layout_t L;
    uint64_t s;
    memset(&L, 0, sizeof L);
    L.name = name;
    L.nseg = nseg;
    L.n = n;
    L.od = od;
    L.off = (uint64_t *)tc_xmalloc((nseg + 1) * sizeof *L.off);
    for (s = 0; s <= nseg; ++s) L.off[s] = offsets[s];
    for (s = 0; s < nseg; ++s)
        if (offsets[s + 1] - offsets[s] > L.longest) L.longest = offsets[s + 1] - offsets[s];
    return L;
}

/* ---- the segment layouts the plans share ---------------------------------- */

/* kind 0: power-law lengths with empties; 1: one giant segment among short
 * ones; 2: lengths at the network and tile edges. */
static tc_layout_t tr_backend_csr(gpuprim_dtype_t od, uint64_t segments, int kind, uint64_t lead, uint64_t tail) {
    static const uint64_t edges[] = {0, 1, 2, 3, 4, 5, 31, 32, 33, 127, 128, 129, 511, 512, 513, 4095, 4096, 4097, 8193};
    uint64_t *offsets = (uint64_t *)tc_xmalloc((segments + 1) * sizeof *offsets), at = lead, s;
    tc_layout_t L;
    for (s = 0; s <= segments; ++s) {
        uint64_t length;
        offsets[s] = at;
        if (s == segments) break;
        if (kind == 0) {
            uint64_t r = tr_random();
            length = (r % 7 == 0) ? 0 : (uint64_t)(1.0 / (((r >> 8) % 100000) / 100000.0 + 1e-4)); /* heavy tail */
            if (length > 200000) length = 200000;
        } else if (kind == 1) {
            length = s == segments / 2 ? 300001 : tr_random() % 40;
        } else {
            length = edges[s % (sizeof edges / sizeof edges[0])];
        }
        at += length;
    }
    L = tr_layout_offsets("csr", offsets, segments, at + tail, od);
    free(offsets);
    return L;
}

int tr_backend_layouts(tc_layout_t *layouts) {
    int count = 0;
    layouts[count++] = tc_layout_rows(1000, 16);
    layouts[count++] = tc_layout_rows(300, 256);
    layouts[count++] = tc_layout_rows(37, 1000);
    layouts[count++] = tc_layout_rows(5, 4096);
    layouts[count++] = tc_layout_rows(3, 70001);
    layouts[count++] = tc_layout_rows(7, 1);
    layouts[count++] = tc_layout_rows(4, 0);
    layouts[count++] = tr_backend_csr(GPUPRIM_DTYPE_I32, 3000, 0, 0, 0);
    layouts[count++] = tr_backend_csr(GPUPRIM_DTYPE_U64, 200, 1, 5, 9);
    layouts[count++] = tr_backend_csr(GPUPRIM_DTYPE_I64, 190, 2, 0, 3);
    layouts[count++] = tr_backend_csr(GPUPRIM_DTYPE_U32, 0, 0, 4, 2);
    layouts[count++] = tr_backend_csr(GPUPRIM_DTYPE_U32, 400, 0, 1, 0);
    return count;
}

tc_layout_t tr_threads_layout(int shape) {
    /* CSR: short segments around long ones (2^17 + 5 sorts in runs; 70001
     * scans and reduces in parallel; past top-k's 2^16-key chunks), a gap
     * before, between and after. */
    static const uint64_t lengths[] = {3, 0, 131077, 17, 1, 70001, 40000, 2, 4097, 33};
    uint64_t offsets[sizeof lengths / sizeof lengths[0] + 1], nseg = sizeof lengths / sizeof lengths[0], at = 5, s;
    for (s = 0; s < nseg; ++s) {
        offsets[s] = at;
        at += lengths[s] + (s == 4 ? 7 : 0);
    }
    offsets[nseg] = at;
    if (shape == 1) return tc_layout_rows(8192, 16);
    if (shape == 2) return tc_layout_rows(2, 150000);
    return tr_layout_offsets("csr with gaps", offsets, nseg, at + 11, GPUPRIM_DTYPE_U64);
}

/* ---- the concurrency plan -------------------------------------------------- */

uint64_t tr_concurrency_count(size_t i) {
    static const uint64_t counts[TR_CONCURRENCY_SIZES] = {0,   1,    2,    3,    31,   32,    33,   255,
                                                          256, 257, 1000, 1024, 4097, 12345, 65537};
    return counts[i % TR_CONCURRENCY_SIZES];
}

tc_layout_t tr_concurrency_layout(size_t i, uint64_t n) {
    /* CSR: these lengths in turn (empty ones among them) after a gap of 2, the rest a gap at the end */
    static const uint64_t lengths[] = {5, 0, 33, 1, 4097, 0, 300, 32, 31, 2};
    static const gpuprim_dtype_t offset_dtypes[] = {GPUPRIM_DTYPE_I32, GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_I64,
                                                    GPUPRIM_DTYPE_U64};
    uint64_t offsets[257], at = n > 2 ? 2 : 0, nseg = 0;
    if (i % 3 == 0) return tc_layout_rows(n / 33, 33);
    if (i % 3 == 1) return tc_layout_rows(1, n);
    offsets[0] = at;
    while (nseg < 256) {
        const uint64_t length = lengths[(nseg + i) % (sizeof lengths / sizeof lengths[0])];
        if (at + length > n) break;
        at += length;
        offsets[++nseg] = at;
    }
    return tr_layout_offsets("csr with gaps", offsets, nseg, n, offset_dtypes[i % 4]);
}

void tr_fill_small(gpuprim_dtype_t d, void *p, uint64_t n, int negative_zeros) {
    const int is_unsigned = !tc_is_signed(d) && !tc_is_float(d);
    uint64_t i;
    for (i = 0; i < n; ++i) {
        const int64_t v = is_unsigned ? (int64_t)(tr_random() % 16) : (int64_t)(tr_random() % 31) - 15;
        if (tc_is_float(d) && v == 0 && negative_zeros && (tr_random() & 1)) tc_set(d, p, i, tc_sign_bit(d));
        else tc_set(d, p, i, tc_from_double(d, (double)v));
    }
}

long double tr_float_term(gpuprim_dtype_t d, const void *a, const void *b, uint64_t i) {
    const long double x = tc_value(d, tc_get(d, a, i));
    return b ? x * tc_value(d, tc_get(d, b, i)) : x;
}

/* Significant bits of a finite nonzero value that is a multiple of 2^lowest. */
static int tr_significant_bits(long double x, int lowest) {
    int exponent;
    (void)frexpl(fabsl(x), &exponent);
    return exponent - lowest;
}

int tr_float_sum_exact(gpuprim_dtype_t d, const void *a, const void *b, uint64_t begin, uint64_t end) {
    long double sum_abs = 0;
    int least = INT_MAX;
    uint64_t i;
    if (!tc_is_float(d)) return 0;
    for (i = begin; i < end; ++i) {
        const long double term = tr_float_term(d, a, b, i);
        const int lowest = tc_lowest_bit_exponent(term);
        if (i == begin && term == 0 && signbit(term)) return 0;
        if (b) { /* the product is exact in long double (and in the backend) only for short factors */
            const long double x = tc_value(d, tc_get(d, a, i)), y = tc_value(d, tc_get(d, b, i));
            const int lx = tc_lowest_bit_exponent(x), ly = tc_lowest_bit_exponent(y);
            if (lx == INT_MIN || ly == INT_MIN) return 0;
            if ((x != 0 && tr_significant_bits(x, lx) > 24) || (y != 0 && tr_significant_bits(y, ly) > 24)) return 0;
        }
        if (lowest == INT_MIN) return 0;
        if (lowest < least) least = lowest;
        sum_abs += fabsl(term);
    }
    return tc_sum_exact_in_f32(least, sum_abs);
}
