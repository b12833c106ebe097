/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The caller's floating-point environment does not reach the library's
 * results, and is left as it was (the header, "Floating-point
 * environment"). Each call below runs first in the default environment,
 * then with the calling thread set to:
 * - each other rounding mode (fesetround): f32 sums, inclusive scans and
 *   reduce-by-key sums of 2^20 + 3 terms 1 / (i + 1) (rounding at every
 *   step), bit for bit the default's;
 * - flush-to-zero and denormals-are-zero (x86's MXCSR bits, what
 *   -ffast-math and torch.set_flush_denormal(True) set): a select of the
 *   subnormals > 0 keeps them all, their MAX and SUM are the default's;
 * - traps on invalid, divide-by-zero and overflow (glibc's feenableexcept,
 *   where the machine traps): a select of x < 2.5 and a MIN over NaNs, and a
 *   sum of +inf and -inf (an invalid operation), do not stop the program.
 * After every call the caller's rounding mode, MXCSR bits and enabled traps
 * are as it set them, and the exception flags raised inside the library
 * (the NaN compares, the inf - inf) are not among the caller's. The sizes
 * make the CPU backend split the work over its threads, whose environment
 * the library sets too. On CUDA the device's arithmetic never read the
 * host's environment; the same checks hold.
 */
#if defined(__GLIBC__) || defined(__linux__)
#  ifndef _GNU_SOURCE
#    define _GNU_SOURCE /* feenableexcept */
#  endif
#endif
#include "test_common.h"

#include <fenv.h>

#if defined(__x86_64__) || defined(__i386__) || defined(_M_X64)
#  include <xmmintrin.h>
#  define HAVE_MXCSR 1
#  define MXCSR_FTZ_DAZ 0x8040u
#else
#  define HAVE_MXCSR 0
#endif

#define N ((1u << 20) + 3)

static gpuprim_context_t ctx;

typedef struct results {
    uint32_t sum, scan_last, by_key_sum;
    uint64_t scan_hash;
} results_t;

static uint64_t hash_bits(const uint32_t *bits, uint64_t n) {
    uint64_t h = 1469598103934665603ull, i;
    for (i = 0; i < n; ++i) h = (h ^ bits[i]) * 1099511628211ull;
    return h;
}

/* The sums of 1 / (i + 1): a reduce, an inclusive scan (its last element and
 * a hash of all), a reduce-by-key of one key. */
static results_t sums(gpuprim_buffer_t values, gpuprim_buffer_t keys) {
    results_t r;
    float total = 0.0f;
    /* results: the keys' count (the most groups there can be) */
    gpuprim_buffer_t scanned = tc_buffer(ctx, GPUPRIM_DTYPE_F32, N), result = tc_buffer(ctx, GPUPRIM_DTYPE_F32, N);
    uint32_t *scan_bits, *result_bits;
    uint64_t groups = 0;
    memset(&r, 0, sizeof r);
    REQUIRE_OK(gpuprim_reduce(ctx, GPUPRIM_OP_SUM, values, &total));
    memcpy(&r.sum, &total, 4);
    REQUIRE_OK(gpuprim_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, values, scanned));
    scan_bits = (uint32_t *)tc_download(ctx, scanned, GPUPRIM_DTYPE_F32, N);
    r.scan_last = scan_bits[N - 1];
    r.scan_hash = hash_bits(scan_bits, N);
    REQUIRE_OK(gpuprim_reduce_by_key(ctx, keys, values, GPUPRIM_OP_SUM, NULL, result, NULL, &groups, NULL));
    CHECKF(groups == 1, "one key: %llu groups", (unsigned long long)groups);
    result_bits = (uint32_t *)tc_download(ctx, result, GPUPRIM_DTYPE_F32, 1);
    r.by_key_sum = result_bits[0];
    free(scan_bits);
    free(result_bits);
    REQUIRE_OK(gpuprim_buffer_destroy(ctx, scanned));
    REQUIRE_OK(gpuprim_buffer_destroy(ctx, result));
    return r;
}

static void check_same(const char *what, results_t got, results_t want) {
    CHECKF(got.sum == want.sum, "%s: reduce SUM bits 0x%08x, default environment 0x%08x", what, got.sum, want.sum);
    CHECKF(got.scan_last == want.scan_last && got.scan_hash == want.scan_hash,
           "%s: the inclusive scan differs from the default environment's (last 0x%08x vs 0x%08x)", what,
           got.scan_last, want.scan_last);
    CHECKF(got.by_key_sum == want.by_key_sum, "%s: reduce_by_key SUM bits 0x%08x, default environment 0x%08x",
           what, got.by_key_sum, want.by_key_sum);
}

static void test_rounding_modes(void) {
    static const int modes[3] = {FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO};
    static const char *const names[3] = {"FE_UPWARD", "FE_DOWNWARD", "FE_TOWARDZERO"};
    float *host = (float *)tc_xmalloc(N * sizeof(float));
    int32_t *zeros = (int32_t *)tc_xmalloc(N * sizeof(int32_t));
    gpuprim_buffer_t values, keys;
    results_t want;
    uint32_t i;
    int m;
    for (i = 0; i < N; ++i) {
        host[i] = 1.0f / (float)(i + 1);
        zeros[i] = 0;
    }
    values = tc_buffer_from(ctx, GPUPRIM_DTYPE_F32, host, N);
    keys = tc_buffer_from(ctx, GPUPRIM_DTYPE_I32, zeros, N);
    want = sums(values, keys);
    for (m = 0; m < 3; ++m) {
        results_t got;
        if (fesetround(modes[m]) != 0) continue; /* a mode this machine lacks */
        got = sums(values, keys);
        CHECKF(fegetround() == modes[m], "%s: the caller's rounding mode changed to %d", names[m], fegetround());
        fesetround(FE_TONEAREST);
        check_same(names[m], got, want);
    }
    REQUIRE_OK(gpuprim_buffer_destroy(ctx, values));
    REQUIRE_OK(gpuprim_buffer_destroy(ctx, keys));
    free(host);
    free(zeros);
}

/* Subnormal f32 bit patterns 1, 2, ..., n (all below 2^-126), at a size
 * the CPU backend runs on the calling thread alone and at one it splits. */
static void test_flush_to_zero(void) {
#if HAVE_MXCSR
    static const uint32_t sizes[2] = {1000, N};
    uint32_t *bits = (uint32_t *)tc_xmalloc(N * 4), zero_bits = 0, i;
    int32_t *keys_host = (int32_t *)tc_xmalloc(N * 4);
    const unsigned int saved = _mm_getcsr();
    unsigned si;
    for (i = 0; i < N; ++i) {
        bits[i] = i + 1;
        keys_host[i] = 7;
    }
    for (si = 0; si < 2; ++si) {
        const uint32_t n = sizes[si];
        gpuprim_buffer_t values = tc_buffer_from(ctx, GPUPRIM_DTYPE_F32, bits, n);
        gpuprim_buffer_t keys = tc_buffer_from(ctx, GPUPRIM_DTYPE_I32, keys_host, n);
        gpuprim_buffer_t kept = tc_buffer(ctx, GPUPRIM_DTYPE_F32, n), result = tc_buffer(ctx, GPUPRIM_DTYPE_F32, n);
        gpuprim_predicate_t predicate;
        uint64_t count[2] = {0, 0}, groups = 0;
        uint32_t max_bits[2], sum_bits[2], by_key_bits[2];
        int round;
        memset(&predicate, 0, sizeof predicate);
        predicate.kind = GPUPRIM_KEEP_GREATER;
        predicate.scalar = &zero_bits;
        for (round = 0; round < 2; ++round) { /* 0: default, 1: FTZ and DAZ set by the caller */
            float value;
            uint32_t *got;
            if (round == 1) _mm_setcsr(saved | MXCSR_FTZ_DAZ);
            REQUIRE_OK(gpuprim_select(ctx, values, NULL, &predicate, kept, NULL, NULL, &count[round], NULL));
            REQUIRE_OK(gpuprim_reduce(ctx, GPUPRIM_OP_MAX, values, &value));
            memcpy(&max_bits[round], &value, 4);
            REQUIRE_OK(gpuprim_reduce(ctx, GPUPRIM_OP_SUM, values, &value));
            memcpy(&sum_bits[round], &value, 4);
            REQUIRE_OK(gpuprim_reduce_by_key(ctx, keys, values, GPUPRIM_OP_MAX, NULL, result, NULL, &groups, NULL));
            if (round == 1) {
                CHECKF((_mm_getcsr() & MXCSR_FTZ_DAZ) == MXCSR_FTZ_DAZ,
                       "the caller's FTZ/DAZ bits were cleared (MXCSR 0x%x)", _mm_getcsr());
                _mm_setcsr(saved);
            }
            got = (uint32_t *)tc_download(ctx, result, GPUPRIM_DTYPE_F32, 1);
            by_key_bits[round] = got[0];
            free(got);
        }
        CHECKF(count[0] == n, "select(x > 0) of %u subnormals kept %llu", n, (unsigned long long)count[0]);
        CHECKF(count[1] == count[0], "n = %u with FTZ/DAZ: select(x > 0) kept %llu of the default's %llu", n,
               (unsigned long long)count[1], (unsigned long long)count[0]);
        CHECKF(max_bits[0] == n && by_key_bits[0] == n, "MAX of %u subnormals: bits 0x%08x (reduce), 0x%08x (by key)",
               n, max_bits[0], by_key_bits[0]);
        CHECKF(max_bits[1] == max_bits[0], "n = %u with FTZ/DAZ: MAX bits 0x%08x, default 0x%08x", n, max_bits[1],
               max_bits[0]);
        CHECKF(by_key_bits[1] == by_key_bits[0], "n = %u with FTZ/DAZ: reduce_by_key MAX bits 0x%08x, default 0x%08x",
               n, by_key_bits[1], by_key_bits[0]);
        CHECKF(sum_bits[1] == sum_bits[0], "n = %u with FTZ/DAZ: SUM bits 0x%08x, default 0x%08x", n, sum_bits[1],
               sum_bits[0]);
        REQUIRE_OK(gpuprim_buffer_destroy(ctx, values));
        REQUIRE_OK(gpuprim_buffer_destroy(ctx, keys));
        REQUIRE_OK(gpuprim_buffer_destroy(ctx, kept));
        REQUIRE_OK(gpuprim_buffer_destroy(ctx, result));
    }
    free(bits);
    free(keys_host);
#else
    printf("test_float_environment: flush-to-zero case skipped (no MXCSR on this machine)\n");
#endif
}

/* NaNs at every 7th place, +inf first and -inf last, at a size the CPU
 * backend runs on the calling thread alone and at one it splits. */
static void test_traps_and_flags(void) {
    static const uint32_t sizes[2] = {9, N};
    float *host = (float *)tc_xmalloc(N * sizeof(float)), bound = 2.5f, value = 0.0f;
    unsigned si;
    for (si = 0; si < 2; ++si) {
        const uint32_t n = sizes[si];
        gpuprim_buffer_t values, kept;
        gpuprim_predicate_t predicate;
        uint64_t count = 0;
        uint32_t i;
        for (i = 0; i < n; ++i) host[i] = i % 7 == 3 ? NAN : (float)(i % 5);
        host[0] = INFINITY;
        host[n - 1] = -INFINITY;
        values = tc_buffer_from(ctx, GPUPRIM_DTYPE_F32, host, n);
        kept = tc_buffer(ctx, GPUPRIM_DTYPE_F32, n);
        memset(&predicate, 0, sizeof predicate);
        predicate.kind = GPUPRIM_KEEP_LESS;
        predicate.scalar = &bound;

        /* Flags: none of the library's reach the caller. */
        feclearexcept(FE_ALL_EXCEPT);
        REQUIRE_OK(gpuprim_select(ctx, values, NULL, &predicate, kept, NULL, NULL, &count, NULL));
        REQUIRE_OK(gpuprim_reduce(ctx, GPUPRIM_OP_SUM, values, &value));
        CHECKF(fetestexcept(FE_ALL_EXCEPT) == 0,
               "n = %u: the library's floating-point exception flags reached the caller: 0x%x", n,
               fetestexcept(FE_ALL_EXCEPT));
        CHECKF(isnan(value), "n = %u: the sum of +inf and -inf with NaNs: %g", n, (double)value);
        /* A flag the caller raised stays raised. */
        feraiseexcept(FE_INEXACT);
        REQUIRE_OK(gpuprim_reduce(ctx, GPUPRIM_OP_MIN, values, &value));
        CHECKF(fetestexcept(FE_INEXACT) != 0, "n = %u: the caller's FE_INEXACT flag was cleared", n);
        feclearexcept(FE_ALL_EXCEPT);

#if defined(__GLIBC__)
        {
            const int traps = FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW;
            uint64_t trapped_count = 0;
            fedisableexcept(FE_ALL_EXCEPT);
            if (feenableexcept(traps) == -1) {
                printf("test_float_environment: trap case skipped (this machine does not trap)\n");
            } else {
                /* Reaching the checks at all is the test: a trap is SIGFPE. */
                REQUIRE_OK(gpuprim_select(ctx, values, NULL, &predicate, kept, NULL, NULL, &trapped_count, NULL));
                REQUIRE_OK(gpuprim_reduce(ctx, GPUPRIM_OP_MIN, values, &value));
                REQUIRE_OK(gpuprim_reduce(ctx, GPUPRIM_OP_SUM, values, &value));
                CHECKF(fegetexcept() == traps, "n = %u: the caller's enabled traps changed: 0x%x, set 0x%x", n,
                       fegetexcept(), traps);
                fedisableexcept(FE_ALL_EXCEPT);
                feclearexcept(FE_ALL_EXCEPT);
                CHECKF(trapped_count == count, "n = %u: with traps enabled select kept %llu, without %llu", n,
                       (unsigned long long)trapped_count, (unsigned long long)count);
                CHECKF(isnan(value), "n = %u: with traps enabled the sum of +inf and -inf: %g", n, (double)value);
            }
        }
#else
        printf("test_float_environment: trap case skipped (no feenableexcept)\n");
#endif
        REQUIRE_OK(gpuprim_buffer_destroy(ctx, values));
        REQUIRE_OK(gpuprim_buffer_destroy(ctx, kept));
    }
    free(host);
}

int main(void) {
    ctx = tc_init("test_float_environment");
    test_rounding_modes();
    test_flush_to_zero();
    test_traps_and_flags();
    return tc_finish();
}
