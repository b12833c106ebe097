/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared helpers of the libgpuprim C tests: a seeded RNG, check macros that
 * report file:line, the seed and the context's last error, typed-array access
 * by dtype, input patterns, and reference semantics written from the
 * documented behaviour in include/gpuprim/gpuprim.h (never from src/).
 *
 * Include this header first in every test: it sets the POSIX feature macro
 * that setenv() and clock_gettime() need under -std=c99.
 */
#ifndef GPUPRIM_TEST_COMMON_H
#define GPUPRIM_TEST_COMMON_H

#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#  define _POSIX_C_SOURCE 200809L
#endif

#include <gpuprim/gpuprim.h>

#include "skip_note.h"

#include <ctype.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__GNUC__)
#  define TC_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#  define TC_PRINTF(f, a)
#endif

#define TC_MAX_REPORTED_FAILURES 40

/* The counters are bumped atomically where the compiler can: the registry's
 * calls run on several threads at once in rel_concurrency, whose checks
 * count in the program's totals like everyone's. */
#if defined(__GNUC__) || defined(__clang__)
#  define TC_COUNT(counter) ((void)__atomic_add_fetch(&(counter), 1, __ATOMIC_RELAXED))
#  define TC_BUMP(counter) __atomic_add_fetch(&(counter), 1, __ATOMIC_RELAXED)
#else
#  define TC_COUNT(counter) ((void)++(counter))
#  define TC_BUMP(counter) (++(counter))
#endif

typedef struct tc_state {
    const char *program;
    uint64_t seed;
    uint64_t rng;
    gpuprim_context_t ctx; /* the context whose last error failures print */
    long checks;
    long failures;
    char where[256]; /* what the test is doing now, printed with failures */
} tc_state_t;

/* One state per program. The registry's cases (test/registry/) are separate
 * files of the same program, so there it is defined once, in registry.c, and
 * shared (TC_SHARED_STATE): their checks count in the program's totals. */
#if defined(TC_SHARED_STATE) && defined(__cplusplus)
extern "C" tc_state_t tc;
#elif defined(TC_SHARED_STATE)
extern tc_state_t tc;
#else
static tc_state_t tc;
#endif

/* ------------------------------------------------------------------------ */
/* Environment                                                              */
/* ------------------------------------------------------------------------ */

static inline int tc_setenv(const char *name, const char *value) {
#if defined(_WIN32)
    return _putenv_s(name, value ? value : "");
#else
    return value ? setenv(name, value, 1) : unsetenv(name);
#endif
}

static inline int tc_env_flag(const char *name) {
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

/* GPUPRIM_TEST_MAX_COUNT caps the sizes the size loops try, so that slow
 * instrumented runs (compute-sanitizer, valgrind) stay quick. */
static inline uint64_t tc_max_count(void) {
    const char *v = getenv("GPUPRIM_TEST_MAX_COUNT");
    return v && *v ? (uint64_t)strtoull(v, NULL, 10) : UINT64_MAX;
}

/* Whether `name` is one of the comma-separated names of `list`. */
static inline int tc_name_listed(const char *list, const char *name) {
    const size_t length = strlen(name);
    for (;;) {
        const char *end = strchr(list, ',');
        const size_t n = end ? (size_t)(end - list) : strlen(list);
        if (n == length && strncmp(list, name, length) == 0) return 1;
        if (!end) return 0;
        list = end + 1;
    }
}

/* Whether a test program's section of this name runs: every one does
 * unless GPUPRIM_TEST_ONLY lists others (comma-separated), so that a slow
 * instrumented run (compute-sanitizer) can take just the code a change
 * touched, or GPUPRIM_TEST_SKIP lists it: ctest runs a program's slow
 * sections as entries of their own and the rest under the program's name
 * with those skipped (gpuprim_add_sectioned_test in test/CMakeLists.txt),
 * so a section added later runs in the rest. Programs whose main asks by
 * section name them in their header comment. */
static inline int tc_section(const char *name) {
    const char *only = getenv("GPUPRIM_TEST_ONLY"), *skip = getenv("GPUPRIM_TEST_SKIP");
    if (only && *only && !tc_name_listed(only, name)) return 0;
    return !(skip && *skip && tc_name_listed(skip, name));
}

/* Seconds on a monotonic clock, for the examples' and the large test's timings. */
static inline double tc_seconds(void) {
#if defined(CLOCK_MONOTONIC) && !defined(_WIN32)
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
#else
    return (double)clock() / CLOCKS_PER_SEC;
#endif
}

/* ------------------------------------------------------------------------ */
/* Failure reporting                                                        */
/* ------------------------------------------------------------------------ */

static inline void tc_where(const char *format, ...) TC_PRINTF(1, 2);
static inline void tc_where(const char *format, ...) {
    va_list args;
    va_start(args, format);
    vsnprintf(tc.where, sizeof tc.where, format, args);
    va_end(args);
}

static inline void tc_fail(const char *file, int line, const char *format, ...) TC_PRINTF(3, 4);
static inline void tc_fail(const char *file, int line, const char *format, ...) {
    va_list args;
    const long failures = TC_BUMP(tc.failures);
    if (failures > TC_MAX_REPORTED_FAILURES) return;
    fprintf(stderr, "%s:%d: FAIL [%s]: ", file, line, tc.where);
    va_start(args, format);
    vfprintf(stderr, format, args);
    va_end(args);
    fprintf(stderr, "\n    seed=%llu (rerun with GPUPRIM_TEST_SEED=%llu)", (unsigned long long)tc.seed,
            (unsigned long long)tc.seed);
    if (tc.ctx) fprintf(stderr, ", context last error: \"%s\"", gpuprim_context_last_error(tc.ctx));
    fprintf(stderr, "\n");
    if (failures == TC_MAX_REPORTED_FAILURES)
        fprintf(stderr, "(more failures are counted but not printed)\n");
    fflush(stderr);
}

static inline int tc_finish(void);

/* Setup that must work for the rest of the test to mean anything. */
static inline void tc_abort(void) {
    fprintf(stderr, "%s: aborting after a failed setup step\n", tc.program);
    if (tc.failures == 0) tc.failures = 1;
    (void)tc_finish();
    exit(1);
}

#define CHECK(cond)                                                   \
    do {                                                              \
        TC_COUNT(tc.checks);                                          \
        if (!(cond)) tc_fail(__FILE__, __LINE__, "%s", #cond);        \
    } while (0)

/* CHECKF(cond, "format", args...) */
#define CHECKF(cond, ...)                                             \
    do {                                                              \
        TC_COUNT(tc.checks);                                          \
        if (!(cond)) tc_fail(__FILE__, __LINE__, __VA_ARGS__);        \
    } while (0)

#define CHECK_STATUS(call, expected)                                                      \
    do {                                                                                  \
        gpuprim_status_t tc_got_ = (call);                                                \
        gpuprim_status_t tc_want_ = (expected);                                           \
        TC_COUNT(tc.checks);                                                              \
        if (tc_got_ != tc_want_)                                                          \
            tc_fail(__FILE__, __LINE__, "%s returned %d (%s), expected %d (%s)", #call,   \
                    (int)tc_got_, gpuprim_get_error_string(tc_got_), (int)tc_want_,       \
                    gpuprim_get_error_string(tc_want_));                                  \
    } while (0)

#define CHECK_OK(call) CHECK_STATUS(call, GPUPRIM_SUCCESS)

#define REQUIRE_OK(call)                                                                  \
    do {                                                                                  \
        gpuprim_status_t tc_got_ = (call);                                                \
        TC_COUNT(tc.checks);                                                              \
        if (tc_got_ != GPUPRIM_SUCCESS) {                                                 \
            tc_fail(__FILE__, __LINE__, "%s returned %d (%s)", #call, (int)tc_got_,       \
                    gpuprim_get_error_string(tc_got_));                                   \
            tc_abort();                                                                   \
        }                                                                                 \
    } while (0)

/* Case-insensitive substring test. */
static inline int tc_contains(const char *haystack, const char *needle) {
    size_t h, n = strlen(needle);
    if (!haystack) return 0;
    for (h = 0; haystack[h]; ++h) {
        size_t k = 0;
        while (k < n && haystack[h + k] &&
               tolower((unsigned char)haystack[h + k]) == tolower((unsigned char)needle[k]))
            ++k;
        if (k == n) return 1;
    }
    return n == 0;
}

/* The context's last error must name the problem: contain needle. */
#define CHECK_MESSAGE(context, needle)                                                    \
    do {                                                                                  \
        const char *tc_msg_ = gpuprim_context_last_error(context);                        \
        TC_COUNT(tc.checks);                                                              \
        if (!tc_msg_ || !*tc_msg_ || !tc_contains(tc_msg_, needle))                       \
            tc_fail(__FILE__, __LINE__, "last error \"%s\" does not mention \"%s\"",      \
                    tc_msg_ ? tc_msg_ : "(null)", needle);                                \
    } while (0)

/* ------------------------------------------------------------------------ */
/* RNG (splitmix64; reproducible from the printed seed)                     */
/* ------------------------------------------------------------------------ */

static inline uint64_t tc_mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline uint64_t tc_rand(void) {
    tc.rng += 0x9E3779B97F4A7C15ull;
    return tc_mix64(tc.rng);
}

/* Uniform in [0, n), n > 0 (the tiny modulo bias is irrelevant here). */
static inline uint64_t tc_below(uint64_t n) { return tc_rand() % n; }

/* Uniform in [0, 1). */
static inline double tc_uniform(void) { return (double)(tc_rand() >> 11) * (1.0 / 9007199254740992.0); }

/* ------------------------------------------------------------------------ */
/* dtypes                                                                   */
/* ------------------------------------------------------------------------ */

#define TC_DTYPE_COUNT 12
static const gpuprim_dtype_t tc_all_dtypes[TC_DTYPE_COUNT] = {
    GPUPRIM_DTYPE_I32, GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_I64, GPUPRIM_DTYPE_U64,
    GPUPRIM_DTYPE_F32, GPUPRIM_DTYPE_F64, GPUPRIM_DTYPE_F16, GPUPRIM_DTYPE_BF16,
    GPUPRIM_DTYPE_I8,  GPUPRIM_DTYPE_U8,  GPUPRIM_DTYPE_I16, GPUPRIM_DTYPE_U16};
#define TC_FLOAT_DTYPE_COUNT 4
static const gpuprim_dtype_t tc_float_dtypes[TC_FLOAT_DTYPE_COUNT] = {GPUPRIM_DTYPE_F32, GPUPRIM_DTYPE_F64,
                                                                     GPUPRIM_DTYPE_F16, GPUPRIM_DTYPE_BF16};

static inline size_t tc_size(gpuprim_dtype_t d) {
    switch (d) {
    case GPUPRIM_DTYPE_I8:
    case GPUPRIM_DTYPE_U8: return 1;
    case GPUPRIM_DTYPE_F16:
    case GPUPRIM_DTYPE_BF16:
    case GPUPRIM_DTYPE_I16:
    case GPUPRIM_DTYPE_U16: return 2;
    case GPUPRIM_DTYPE_I32:
    case GPUPRIM_DTYPE_U32:
    case GPUPRIM_DTYPE_F32: return 4;
    case GPUPRIM_DTYPE_I64:
    case GPUPRIM_DTYPE_U64:
    case GPUPRIM_DTYPE_F64: return 8;
    }
    return 0;
}

static inline const char *tc_dtype_name(gpuprim_dtype_t d) {
    switch (d) {
    case GPUPRIM_DTYPE_I32: return "i32";
    case GPUPRIM_DTYPE_U32: return "u32";
    case GPUPRIM_DTYPE_I64: return "i64";
    case GPUPRIM_DTYPE_U64: return "u64";
    case GPUPRIM_DTYPE_F32: return "f32";
    case GPUPRIM_DTYPE_F64: return "f64";
    case GPUPRIM_DTYPE_F16: return "f16";
    case GPUPRIM_DTYPE_BF16: return "bf16";
    case GPUPRIM_DTYPE_I8: return "i8";
    case GPUPRIM_DTYPE_U8: return "u8";
    case GPUPRIM_DTYPE_I16: return "i16";
    case GPUPRIM_DTYPE_U16: return "u16";
    }
    return "?";
}

static inline const char *tc_op_name(gpuprim_op_t op) {
    return op == GPUPRIM_OP_SUM ? "sum" : op == GPUPRIM_OP_MIN ? "min" : op == GPUPRIM_OP_MAX ? "max" : "?";
}

static inline int tc_is_float(gpuprim_dtype_t d) {
    return d == GPUPRIM_DTYPE_F32 || d == GPUPRIM_DTYPE_F64 || d == GPUPRIM_DTYPE_F16 ||
           d == GPUPRIM_DTYPE_BF16;
}
/* The 16-bit float formats (SUM accumulates in f32 and rounds once). */
static inline int tc_is_half(gpuprim_dtype_t d) { return d == GPUPRIM_DTYPE_F16 || d == GPUPRIM_DTYPE_BF16; }
static inline int tc_is_signed(gpuprim_dtype_t d) {
    return d == GPUPRIM_DTYPE_I32 || d == GPUPRIM_DTYPE_I64 || d == GPUPRIM_DTYPE_I8 ||
           d == GPUPRIM_DTYPE_I16;
}
static inline unsigned tc_bits(gpuprim_dtype_t d) { return (unsigned)tc_size(d) * 8; }
static inline uint64_t tc_mask(gpuprim_dtype_t d) {
    return tc_bits(d) >= 64 ? ~0ull : ((1ull << tc_bits(d)) - 1);
}
static inline uint64_t tc_sign_bit(gpuprim_dtype_t d) { return 1ull << (tc_bits(d) - 1); }
/* Mantissa (fraction) bits of a float dtype: f16 10, bf16 7, f32 23, f64 52. */
static inline int tc_mantissa_bits(gpuprim_dtype_t d) {
    return d == GPUPRIM_DTYPE_F16 ? 10 : d == GPUPRIM_DTYPE_BF16 ? 7 : d == GPUPRIM_DTYPE_F32 ? 23 : 52;
}
/* Exponent-all-ones pattern of a float dtype (the +inf bits). */
static inline uint64_t tc_inf_bits(gpuprim_dtype_t d) {
    switch (d) {
    case GPUPRIM_DTYPE_F16: return 0x7C00u;
    case GPUPRIM_DTYPE_BF16: return 0x7F80u;
    case GPUPRIM_DTYPE_F32: return 0x7F800000ull;
    default: return 0x7FF0000000000000ull;
    }
}
/* The canonical quiet NaN a float SUM/dot gives for any NaN result. */
static inline uint64_t tc_canonical_nan(gpuprim_dtype_t d) {
    switch (d) {
    case GPUPRIM_DTYPE_F16: return 0x7E00u;
    case GPUPRIM_DTYPE_BF16: return 0x7FC0u;
    case GPUPRIM_DTYPE_F32: return 0x7FC00000ull;
    default: return 0x7FF8000000000000ull;
    }
}

/* Element i of a typed array, as zero-extended bits. */
static inline uint64_t tc_get(gpuprim_dtype_t d, const void *p, uint64_t i) {
    switch (tc_size(d)) {
    case 1: return ((const unsigned char *)p)[i];
    case 2: {
        uint16_t v;
        memcpy(&v, (const char *)p + i * 2, 2);
        return v;
    }
    case 4: {
        uint32_t v;
        memcpy(&v, (const char *)p + i * 4, 4);
        return v;
    }
    default: {
        uint64_t v;
        memcpy(&v, (const char *)p + i * 8, 8);
        return v;
    }
    }
}

static inline void tc_set(gpuprim_dtype_t d, void *p, uint64_t i, uint64_t bits) {
    switch (tc_size(d)) {
    case 1: ((unsigned char *)p)[i] = (unsigned char)bits; break;
    case 2: {
        uint16_t v = (uint16_t)bits;
        memcpy((char *)p + i * 2, &v, 2);
        break;
    }
    case 4: {
        uint32_t v = (uint32_t)bits;
        memcpy((char *)p + i * 4, &v, 4);
        break;
    }
    default: memcpy((char *)p + i * 8, &bits, 8); break;
    }
}

static inline int tc_isnan_bits(gpuprim_dtype_t d, uint64_t bits) {
    uint64_t inf = tc_inf_bits(d), magnitude = bits & ~tc_sign_bit(d) & tc_mask(d);
    return tc_is_float(d) && magnitude > inf;
}

/* The value of a 16-bit float given its exponent width: decoded here from
 * the IEEE layout (sign, exponent, fraction), independently of the library. */
static inline long double tc_half_value(uint64_t bits, int mantissa_bits, int exponent_bits) {
    const uint64_t fraction = bits & ((1ull << mantissa_bits) - 1);
    const int exponent = (int)((bits >> mantissa_bits) & ((1u << exponent_bits) - 1));
    const int bias = (1 << (exponent_bits - 1)) - 1;
    const int negative = (int)((bits >> (mantissa_bits + exponent_bits)) & 1);
    long double magnitude;
    if (exponent == (1 << exponent_bits) - 1) {
        if (fraction) return (long double)NAN;
        magnitude = (long double)INFINITY;
    } else if (exponent == 0) {
        magnitude = ldexp((double)fraction, 1 - bias - mantissa_bits); /* exact in double: faster than ldexpl */
    } else {
        magnitude = ldexp((double)(fraction | (1ull << mantissa_bits)), exponent - bias - mantissa_bits);
    }
    return negative ? -magnitude : magnitude;
}

/* The numeric value of an element. */
static inline long double tc_value(gpuprim_dtype_t d, uint64_t bits) {
    switch (d) {
    case GPUPRIM_DTYPE_I8: return (long double)(int8_t)(uint8_t)bits;
    case GPUPRIM_DTYPE_U8: return (long double)(uint8_t)bits;
    case GPUPRIM_DTYPE_I16: return (long double)(int16_t)(uint16_t)bits;
    case GPUPRIM_DTYPE_U16: return (long double)(uint16_t)bits;
    case GPUPRIM_DTYPE_F16: return tc_half_value(bits & 0xFFFF, 10, 5);
    case GPUPRIM_DTYPE_BF16: return tc_half_value(bits & 0xFFFF, 7, 8);
    case GPUPRIM_DTYPE_I32: return (long double)(int32_t)(uint32_t)bits;
    case GPUPRIM_DTYPE_U32: return (long double)(uint32_t)bits;
    case GPUPRIM_DTYPE_I64: return (long double)(int64_t)bits;
    case GPUPRIM_DTYPE_U64: return (long double)bits;
    case GPUPRIM_DTYPE_F32: {
        uint32_t b = (uint32_t)bits;
        float f;
        memcpy(&f, &b, 4);
        return (long double)f;
    }
    case GPUPRIM_DTYPE_F64: {
        double f;
        memcpy(&f, &bits, 8);
        return (long double)f;
    }
    }
    return 0;
}

/* v rounded once to a 16-bit float format, to nearest, ties to even; NaN
 * gives the canonical quiet NaN, too large a magnitude the infinity. Written
 * from the IEEE definition: the quantum of v's binade (or of the subnormal
 * range), then the rounding to a whole number of quanta: in integers where
 * long double's significand fits 64 bits (x86's, or double's), else with
 * nearbyintl (the default rounding mode rounds ties to even). The checks of
 * every f16/bf16 sum call it twice an element: with the integer rounding
 * test_scan's all section takes 7.2 s, against 11.4 with the libm one. */
static inline uint64_t tc_round_half(gpuprim_dtype_t d, long double v) {
    const int mantissa_bits = tc_mantissa_bits(d);
    const int exponent_bits = d == GPUPRIM_DTYPE_F16 ? 5 : 8;
    const int bias = (1 << (exponent_bits - 1)) - 1;
    const int emin = 1 - bias, emax = bias;
    const uint64_t sign = signbit(v) ? 0x8000u : 0;
    long double magnitude = fabsl(v), fraction;
    uint64_t scaled;
    int e2, exponent;
    if (isnan(v)) return tc_canonical_nan(d);
    if (isinf(v)) return sign | tc_inf_bits(d);
    if (magnitude == 0) return sign;
    fraction = frexpl(magnitude, &e2); /* magnitude in [2^(e2-1), 2^e2) */
    exponent = e2 - 1;
    if (exponent < emin) exponent = emin;
#if LDBL_MANT_DIG <= 64
    {
        /* magnitude = whole * 2^(e2 - 64) exactly; scaled = whole * 2^-shift rounded */
        const uint64_t whole = (uint64_t)(fraction * 18446744073709551616.0L); /* 2^64 */
        const int shift = 64 - (e2 + mantissa_bits - exponent);               /* >= 63 - mantissa_bits */
        scaled = shift >= 64 ? 0 : whole >> shift;
        if (shift <= 64) {
            const uint64_t rest = shift == 64 ? whole : whole & ((1ull << shift) - 1);
            const uint64_t half = 1ull << (shift - 1);
            if (rest > half || (rest == half && (scaled & 1))) ++scaled;
        } /* shift > 64: below half the quantum, zero */
    }
#else
    scaled = (uint64_t)nearbyintl(ldexpl(magnitude, mantissa_bits - exponent));
#endif
    if (scaled >= 1ull << (mantissa_bits + 1)) { /* rounded up into the next binade: 2^(mantissa_bits + 1) */
        scaled >>= 1;
        exponent++;
    }
    if (exponent > emax) return sign | tc_inf_bits(d);
    if (scaled < 1ull << mantissa_bits) /* subnormal (or zero) */
        return sign | scaled;
    return sign | ((uint64_t)(exponent + bias) << mantissa_bits) | (scaled - (1ull << mantissa_bits));
}

/* Bits of a double value stored as dtype d (rounded to nearest even for the
 * floats; ints: |v| < 2^63, truncated, then wrapped to the width). */
static inline uint64_t tc_from_double(gpuprim_dtype_t d, double v) {
    switch (d) {
    case GPUPRIM_DTYPE_I8:
    case GPUPRIM_DTYPE_U8:
    case GPUPRIM_DTYPE_I16:
    case GPUPRIM_DTYPE_U16:
    case GPUPRIM_DTYPE_I32:
    case GPUPRIM_DTYPE_U32:
    case GPUPRIM_DTYPE_I64:
    case GPUPRIM_DTYPE_U64: return (uint64_t)(int64_t)v & tc_mask(d);
    case GPUPRIM_DTYPE_F16:
    case GPUPRIM_DTYPE_BF16: return tc_round_half(d, (long double)v);
    case GPUPRIM_DTYPE_F32: {
        float f = (float)v;
        uint32_t b;
        memcpy(&b, &f, 4);
        return b;
    }
    case GPUPRIM_DTYPE_F64: {
        uint64_t b;
        memcpy(&b, &v, 8);
        return b;
    }
    }
    return 0;
}

static inline const char *tc_format(gpuprim_dtype_t d, uint64_t bits, char *out, size_t cap) {
    if (tc_is_float(d))
        snprintf(out, cap, "%.17Lg (0x%0*llx)", tc_value(d, bits), (int)tc_size(d) * 2,
                 (unsigned long long)bits);
    else if (tc_is_signed(d))
        snprintf(out, cap, "%lld (0x%0*llx)", (long long)tc_value(d, bits), (int)tc_size(d) * 2,
                 (unsigned long long)bits);
    else
        snprintf(out, cap, "%llu (0x%0*llx)", (unsigned long long)bits, (int)tc_size(d) * 2,
                 (unsigned long long)bits);
    return out;
}

/* ------------------------------------------------------------------------ */
/* Documented semantics                                                     */
/* ------------------------------------------------------------------------ */

/*
 * The sort order as an unsigned key (gpuprim.h, gpuprim_sort): integers by
 * value; floats -inf < negatives < -0 < +0 < positives < +inf < NaN, NaNs
 * among themselves by bit pattern with the rotation of
 * src/core/key_transform.h: positive NaNs first (increasing bits), then the
 * negative NaNs. Descending order is the complement (stable either way).
 */
static inline uint64_t tc_sort_key(gpuprim_dtype_t d, uint64_t bits, int descending) {
    uint64_t mask = tc_mask(d), sign = tc_sign_bit(d), key = bits & mask;
    if (tc_is_signed(d)) {
        key ^= sign;
    } else if (tc_is_float(d)) {
        /* negative NaNs: every nonzero fraction with the sign set */
        uint64_t negative_nan_count = (1ull << tc_mantissa_bits(d)) - 1;
        key = (key & sign) ? (~key & mask) : (key ^ sign);
        key = (key - negative_nan_count) & mask;
    }
    return descending ? (~key & mask) : key;
}

/* Identity of op for dtype d, as bits. */
static inline uint64_t tc_identity(gpuprim_op_t op, gpuprim_dtype_t d) {
    if (op == GPUPRIM_OP_SUM) return 0;
    if (tc_is_float(d)) return op == GPUPRIM_OP_MIN ? tc_inf_bits(d) : (tc_inf_bits(d) | tc_sign_bit(d));
    if (tc_is_signed(d)) return op == GPUPRIM_OP_MIN ? (tc_sign_bit(d) - 1) : tc_sign_bit(d);
    return op == GPUPRIM_OP_MIN ? tc_mask(d) : 0;
}

/* a op b for integer SUM (wrapping) and for MIN/MAX of every dtype
 * (IEEE 754-2019 minimum/maximum: NaN wins, larger NaN bits among NaNs,
 * -0 < +0). Float SUM is computed separately in long double. */
static inline uint64_t tc_apply(gpuprim_op_t op, gpuprim_dtype_t d, uint64_t a, uint64_t b) {
    if (op == GPUPRIM_OP_SUM) return (a + b) & tc_mask(d);
    if (tc_is_float(d)) {
        int na = tc_isnan_bits(d, a), nb = tc_isnan_bits(d, b);
        if (na && nb) return a >= b ? a : b;
        if (na) return a;
        if (nb) return b;
    }
    /* For non-NaN values the ascending sort key order is the value order, with -0 < +0. */
    if (op == GPUPRIM_OP_MIN) return tc_sort_key(d, b, 0) < tc_sort_key(d, a, 0) ? b : a;
    return tc_sort_key(d, a, 0) < tc_sort_key(d, b, 0) ? b : a;
}

/* gpuprim_searchsorted: the bound of one query (bits) among n keys sorted in
 * the order: the number of keys before it in the order key, strictly (left
 * side) or equal too (upper, the right side). */
static inline uint64_t tc_searchsorted_bound(gpuprim_dtype_t d, const void *keys, uint64_t n, uint64_t query,
                                             int descending, int upper) {
    const uint64_t q = tc_sort_key(d, query, descending);
    uint64_t lo = 0, hi = n;
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2, k = tc_sort_key(d, tc_get(d, keys, mid), descending);
        if (upper ? k <= q : k < q) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* gpuprim_merge of two runs sorted in the order: the stable merge, ties to
 * run a. perm[i] < na is a's element perm[i], else b's element perm[i] - na. */
static inline void tc_reference_merge_permutation(gpuprim_dtype_t d, const void *a, uint64_t na, const void *b,
                                                  uint64_t nb, int descending, uint64_t *perm) {
    uint64_t i = 0, j = 0, out;
    for (out = 0; out < na + nb; ++out) {
        const int take_b = i == na || (j < nb && tc_sort_key(d, tc_get(d, b, j), descending) <
                                                     tc_sort_key(d, tc_get(d, a, i), descending));
        perm[out] = take_b ? na + j++ : i++;
    }
}

/* gpuprim_adjacent_difference's element i, written from the header: x[0]
 * at i = 0, else x[i] - x[i - 1]: integers wrapped to the width; F32 and
 * F64 one IEEE subtraction (C's float and double arithmetic, rounding to
 * nearest); F16 and BF16 both widened to f32 exactly, subtracted in f32 and
 * rounded once (tc_round_half); any NaN result the canonical quiet NaN. */
static inline uint64_t tc_reference_difference_at(gpuprim_dtype_t d, const void *x, uint64_t i) {
    const uint64_t a = tc_get(d, x, i);
    uint64_t b;
    if (i == 0) return a;
    b = tc_get(d, x, i - 1);
    switch (d) {
    case GPUPRIM_DTYPE_F16:
    case GPUPRIM_DTYPE_BF16: {
        const float difference = (float)tc_value(d, a) - (float)tc_value(d, b);
        return tc_round_half(d, (long double)difference);
    }
    case GPUPRIM_DTYPE_F32: {
        const uint32_t ua = (uint32_t)a, ub = (uint32_t)b;
        float fa, fb, difference;
        uint32_t bits;
        memcpy(&fa, &ua, 4);
        memcpy(&fb, &ub, 4);
        difference = fa - fb;
        if (difference != difference) return tc_canonical_nan(d);
        memcpy(&bits, &difference, 4);
        return bits;
    }
    case GPUPRIM_DTYPE_F64: {
        double fa, fb, difference;
        uint64_t bits;
        memcpy(&fa, &a, 8);
        memcpy(&fb, &b, 8);
        difference = fa - fb;
        if (difference != difference) return tc_canonical_nan(d);
        memcpy(&bits, &difference, 8);
        return bits;
    }
    default: return (a - b) & tc_mask(d);
    }
}

/* The whole reference: out[i] for i < n. */
static inline void tc_reference_adjacent_difference(gpuprim_dtype_t d, const void *x, uint64_t n, void *out) {
    uint64_t i;
    for (i = 0; i < n; ++i) tc_set(d, out, i, tc_reference_difference_at(d, x, i));
}

/* gpuprim_argreduce (numpy's argmin / argmax on the flat array), element by
 * element from the header: a NaN ends the search at its position (both ops);
 * otherwise the first strictly lesser (MIN) or greater (MAX) value in the
 * value order, -0.0 read as +0.0 (tc_sort_key orders values with -0 below
 * +0, so zeros are made +0 first). n >= 1. */
static inline uint64_t tc_reference_argreduce(gpuprim_op_t op, gpuprim_dtype_t d, const void *x, uint64_t n) {
    uint64_t best = 0, best_key = 0, i;
    for (i = 0; i < n; ++i) {
        uint64_t bits = tc_get(d, x, i), key;
        if (tc_is_float(d)) {
            if (tc_isnan_bits(d, bits)) return i;
            if (bits == tc_sign_bit(d)) bits = 0;
        }
        key = tc_sort_key(d, bits, 0);
        if (i == 0 || (op == GPUPRIM_OP_MIN ? key < best_key : key > best_key)) {
            best = i;
            best_key = key;
        }
    }
    return best;
}

/* Histogram references (gpuprim_histogram_even, _range, gpuprim_bincount),
 * written from the header: the bin of element bits x, or -1 when it does
 * not count. Integers exactly: the even bin is the largest b with
 * b * (upper - lower) <= (x - lower) * bins, compared in 128 bits; floats by
 * the header's f64 formula; edges and bincount by value (-0 == +0, NaN never). */
static inline void tc_mul128(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo) {
    const uint64_t al = a & 0xFFFFFFFFu, ah = a >> 32, bl = b & 0xFFFFFFFFu, bh = b >> 32;
    const uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
    const uint64_t mid = (ll >> 32) + (lh & 0xFFFFFFFFu) + (hl & 0xFFFFFFFFu);
    *lo = (ll & 0xFFFFFFFFu) | (mid << 32);
    *hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}

/* a * b <= c * d, compared in 128 bits */
static inline int tc_product_le(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
    uint64_t h1, l1, h2, l2;
    tc_mul128(a, b, &h1, &l1);
    tc_mul128(c, d, &h2, &l2);
    return h1 < h2 || (h1 == h2 && l1 <= l2);
}

/* An integer element's value: signed types sign-extended to 64 bits. */
static inline int64_t tc_int_value(gpuprim_dtype_t d, uint64_t bits) {
    if (tc_is_signed(d) && (bits & tc_sign_bit(d))) return (int64_t)(bits | ~tc_mask(d));
    return (int64_t)bits;
}

/* Integer a <= b by value. */
static inline int tc_int_le(gpuprim_dtype_t d, uint64_t a, uint64_t b) {
    return tc_is_signed(d) ? tc_int_value(d, a) <= tc_int_value(d, b) : a <= b;
}

static inline int64_t tc_histogram_even_bin(gpuprim_dtype_t d, uint64_t x, uint64_t lower, uint64_t upper,
                                            uint64_t bins) {
    if (tc_is_float(d)) {
        const double v = (double)tc_value(d, x), lo = (double)tc_value(d, lower), hi = (double)tc_value(d, upper);
        /* the header's rule: floor((x - lower) * (bins / (upper - lower))) in f64, or where that scale
           overflows floor((x - lower) / (upper - lower) * bins); clamped to bins - 1 for lower <= x < upper */
        const double width = hi - lo, scale = (double)bins / width;
        double scaled;
        if (!(v >= lo && v < hi)) return -1;
        scaled = scale <= DBL_MAX ? (v - lo) * scale : (v - lo) / width * (double)bins;
        return scaled < (double)bins ? (int64_t)(uint64_t)scaled : (int64_t)bins - 1;
    } else {
        const uint64_t offset = (uint64_t)tc_int_value(d, x) - (uint64_t)tc_int_value(d, lower);
        const uint64_t range = (uint64_t)tc_int_value(d, upper) - (uint64_t)tc_int_value(d, lower);
        uint64_t lo = 0, hi = bins - 1;
        if (!tc_int_le(d, lower, x) || tc_int_le(d, upper, x)) return -1;
        while (lo < hi) {
            const uint64_t mid = lo + (hi - lo + 1) / 2;
            if (tc_product_le(mid, range, offset, bins)) lo = mid;
            else hi = mid - 1;
        }
        return (int64_t)lo;
    }
}

/* edges: bins + 1 elements of d, increasing by value; the last edge at or below x, unless it is the last. */
static inline int64_t tc_histogram_range_bin(gpuprim_dtype_t d, uint64_t x, const void *edges, uint64_t bins) {
    uint64_t lo = 0, hi = bins + 1; /* the number of edges <= x */
    if (tc_is_float(d) && tc_isnan_bits(d, x)) return -1;
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2, e = tc_get(d, edges, mid);
        const int le = tc_is_float(d) ? tc_value(d, e) <= tc_value(d, x) : tc_int_le(d, e, x);
        if (le) lo = mid + 1;
        else hi = mid;
    }
    return (lo == 0 || lo == bins + 1) ? -1 : (int64_t)lo - 1;
}

static inline int64_t tc_bincount_bin(gpuprim_dtype_t d, uint64_t x, uint64_t bins) {
    const int64_t v = tc_int_value(d, x);
    if (tc_is_signed(d) ? (v < 0 || (uint64_t)v >= bins) : x >= bins) return -1;
    return v;
}

#if defined(GPUPRIM_EXPERIMENTAL_API)
/* gpuprim_select / gpuprim_partition: whether element x (bits of d) is
 * kept, from the header: comparisons by value (tc_value: integers exactly,
 * f16/bf16 decoded from their layout, so -0.0 == +0.0 and a NaN compares
 * false with everything), IN_RANGE scalar <= x < high, NAN / NOT_NAN by the
 * value; KEEP_FLAGGED: flag (the flag's bits) nonzero. */
static inline int tc_keeps(gpuprim_dtype_t d, uint64_t x, int kind, uint64_t scalar, uint64_t high, uint64_t flag) {
    const long double v = tc_value(d, x), s = tc_value(d, scalar), h = tc_value(d, high);
    switch (kind) {
    case GPUPRIM_KEEP_FLAGGED: return flag != 0;
    case GPUPRIM_KEEP_LESS: return v < s;
    case GPUPRIM_KEEP_LESS_EQUAL: return v <= s;
    case GPUPRIM_KEEP_GREATER: return v > s;
    case GPUPRIM_KEEP_GREATER_EQUAL: return v >= s;
    case GPUPRIM_KEEP_EQUAL: return v == s;
    case GPUPRIM_KEEP_NOT_EQUAL: return v != s;
    case GPUPRIM_KEEP_IN_RANGE: return s <= v && v < h;
    case GPUPRIM_KEEP_NAN: return isnan(v);
    case GPUPRIM_KEEP_NOT_NAN: return !isnan(v);
    }
    return 0;
}

/* keep[i] = tc_keeps of element i of x (flags: fd elements, KEEP_FLAGGED
 * only, else NULL); returns how many are kept. */
static inline uint64_t tc_reference_keep(gpuprim_dtype_t d, const void *x, uint64_t n, int kind, uint64_t scalar,
                                         uint64_t high, gpuprim_dtype_t fd, const void *flags, unsigned char *keep) {
    uint64_t i, kept = 0;
    for (i = 0; i < n; ++i) {
        keep[i] = (unsigned char)tc_keeps(d, tc_get(d, x, i), kind, scalar, high, flags ? tc_get(fd, flags, i) : 0);
        kept += keep[i];
    }
    return kept;
}

/* The order gpuprim_select (the kept, in order) or gpuprim_partition (the
 * kept, then the others, each in order) writes its outputs in: perm[j] is
 * the input position of output j; returns how many are kept. */
static inline uint64_t tc_reference_select_permutation(const unsigned char *keep, uint64_t n, int partition,
                                                       uint64_t *perm) {
    uint64_t i, j = 0, kept;
    for (i = 0; i < n; ++i)
        if (keep[i]) perm[j++] = i;
    kept = j;
    if (partition)
        for (i = 0; i < n; ++i)
            if (!keep[i]) perm[j++] = i;
    return kept;
}

/* gpuprim_unique / gpuprim_run_length_encode: the runs of consecutive
 * elements of x with equal bits (so -0.0 and +0.0 differ, NaNs with the
 * same bits are equal), in order; non_trivial: only runs of 2 or more.
 * starts[r], lengths[r] (n entries each, or NULL); returns the runs. */
static inline uint64_t tc_reference_runs(gpuprim_dtype_t d, const void *x, uint64_t n, int non_trivial,
                                         uint64_t *starts, uint64_t *lengths) {
    uint64_t i = 0, runs = 0;
    while (i < n) {
        uint64_t end = i + 1;
        while (end < n && tc_get(d, x, end) == tc_get(d, x, i)) ++end;
        if (!non_trivial || end - i >= 2) {
            if (starts) starts[runs] = i;
            if (lengths) lengths[runs] = end - i;
            ++runs;
        }
        i = end;
    }
    return runs;
}
#endif

static inline long double tc_epsilon(gpuprim_dtype_t d) {
    /* f16/bf16 sums accumulate in f32 */
    return d == GPUPRIM_DTYPE_F64 ? (long double)DBL_EPSILON : (long double)FLT_EPSILON;
}

/*
 * A float sum of nterms terms whose exact (long double) value is ref and
 * whose absolute values sum to sumabs. NaN exactly when ref is NaN, and then
 * the canonical quiet NaN (gpuprim.h: float SUM and dot); the same infinity
 * when ref is infinite.
 * f32/f64: |got - ref| <= n * eps * sum|x|.
 * f16/bf16 (accumulated in f32 in any order, rounded once to the format):
 * got must lie between the roundings (to nearest even, tc_round_half) of
 * ref - E and ref + E, E = n * 2^-24 * sum|x| (the error bound of an f32
 * sum of n terms in any order), since rounding is monotone.
 * Returns 1 if acceptable.
 */
static inline int tc_float_sum_ok_exact(gpuprim_dtype_t d, uint64_t got_bits, long double ref,
                                        long double sumabs, uint64_t nterms, int exact_in_f32);
static inline int tc_float_sum_ok(gpuprim_dtype_t d, uint64_t got_bits, long double ref,
                                  long double sumabs, uint64_t nterms) {
    return tc_float_sum_ok_exact(d, got_bits, ref, sumabs, nterms, 0);
}

/* The exponent of the lowest set bit of a term (it is a multiple of 2^that):
 * INT_MAX for zero, INT_MIN for inf and NaN. */
static inline int tc_lowest_bit_exponent(long double term) {
    int exponent, trailing = 0;
    uint64_t mantissa;
    if (term == 0) return INT_MAX;
    if (!isfinite(term)) return INT_MIN;
    /* |term| = m * 2^exponent, m in [0.5, 1); m * 2^64 is exact (<= 64 significant bits) */
    mantissa = (uint64_t)ldexpl(frexpl(fabsl(term), &exponent), 64);
    while (!(mantissa & 1)) {
        mantissa >>= 1;
        ++trailing;
    }
    return exponent - 64 + trailing;
}

/* Whether every partial sum, in any order, of terms that are multiples of
 * 2^min_exponent (the least tc_lowest_bit_exponent) with sum|x| = sumabs is
 * exact in f32: multiples of 2^min_exponent (>= 2^-149, f32's least
 * subnormal) below 2^(min_exponent + 24). Then an f16/bf16 sum must be the
 * exact sum rounded once, bit for bit. */
static inline int tc_sum_exact_in_f32(int min_exponent, long double sumabs) {
    if (min_exponent == INT_MAX) return 1; /* all zeros */
    if (min_exponent < -149) return 0;     /* INT_MIN: inf or NaN terms */
    return sumabs < ldexpl(1.0L, min_exponent + 24);
}

/* As tc_float_sum_ok; exact_in_f32 (f16/bf16, from tc_sum_exact_in_f32)
 * demands the one rounding of the exact sum, bit for bit up to the sign of
 * zero. */
static inline int tc_float_sum_ok_exact(gpuprim_dtype_t d, uint64_t got_bits, long double ref,
                                        long double sumabs, uint64_t nterms, int exact_in_f32) {
    long double got = tc_value(d, got_bits);
    long double tolerance = (long double)(nterms > 0 ? nterms : 1) * tc_epsilon(d) * sumabs;
    if (LDBL_MANT_DIG <= 53) tolerance *= 2; /* the reference itself rounds like double */
    if (isnan(ref)) return got_bits == tc_canonical_nan(d);
    if (isinf(ref)) return got == ref;
    if (isnan(got)) return 0;
    if (tc_is_half(d)) {
        long double bound = (long double)(nterms > 0 ? nterms : 1) * ldexpl(1.0L, -24) * sumabs;
        long double low, high;
        bound = bound * (1.0L + 1e-9L) + ldexpl(sumabs, -60); /* the reference's own rounding */
        if (exact_in_f32) bound = 0;
        low = tc_value(d, tc_round_half(d, ref - bound));
        high = tc_value(d, tc_round_half(d, ref + bound));
        return low <= got && got <= high;
    }
    if (isinf(got)) return 0;
    return fabsl(got - ref) <= tolerance;
}

/* ------------------------------------------------------------------------ */
/* Input patterns                                                           */
/* ------------------------------------------------------------------------ */

typedef enum tc_pattern {
    TC_RANDOM_BITS = 0, /* every bit random (floats: NaNs, infs, denormals included) */
    TC_MODERATE,        /* ints: random bits; floats: random of mixed magnitude, |x| <= 1024 */
    TC_EQUAL,           /* one value repeated */
    TC_SORTED,          /* ascending in the sort order */
    TC_REVERSED,        /* descending in the sort order */
    TC_SMALL_RANGE,     /* 8 distinct values: many duplicates (floats include -0 and +0) */
    TC_ZEROS,           /* ints 0; floats random -0.0/+0.0 */
    TC_SPECIAL,         /* type min/max, +-1, 0; floats NaNs of both signs, +-inf, +-0, denormals */
    TC_NAN_SPARSE,      /* floats: moderate with a few NaNs of random sign and payload */
    TC_INF_SPARSE,      /* floats: moderate with a few +inf and sometimes -inf; ints: type extremes */
    TC_NAN_HEAVY,       /* floats: half NaNs (both signs, every payload size), half specials; ints: specials */
    TC_TINY,            /* floats: subnormals of both signs, some +-0 and +-min normal; ints: -4..4 */
    TC_PATTERN_COUNT
} tc_pattern_t;

static const char *const tc_pattern_names[TC_PATTERN_COUNT] = {
    "random_bits", "moderate", "equal", "sorted", "reversed",
    "small_range", "zeros", "special", "nan_sparse", "inf_sparse", "nan_heavy", "tiny"};

/* Whether a float SUM over the pattern has an order-independent outcome
 * (no overflow of partial sums that the long double reference would miss). */
static inline int tc_float_sum_ok_pattern(tc_pattern_t p) {
    /* nan_heavy: specials (+-max) overflow partial sums when no NaN is drawn */
    return p != TC_RANDOM_BITS && p != TC_SPECIAL && p != TC_NAN_HEAVY;
}

static inline uint64_t tc_random_moderate(gpuprim_dtype_t d) {
    if (!tc_is_float(d)) return tc_rand() & tc_mask(d);
    {
        double magnitude = ldexp(1.0, (int)tc_below(19) - 8); /* 2^-8 .. 2^10 */
        return tc_from_double(d, (2.0 * tc_uniform() - 1.0) * magnitude);
    }
}

static inline uint64_t tc_random_nan(gpuprim_dtype_t d) {
    uint64_t payload = tc_rand() & ((1ull << tc_mantissa_bits(d)) - 1);
    if (payload == 0) payload = 1;
    return tc_inf_bits(d) | payload | ((tc_rand() & 1) ? tc_sign_bit(d) : 0);
}

/* The specials of each float format: +-0, +-inf, quiet NaNs of both signs,
 * the smallest NaN payloads, all-ones NaNs, +-max, +-min normal, +-min
 * subnormal, +-1, the largest subnormal. */
static const uint64_t tc_f16_specials[] = {0x0000u, 0x8000u, 0x7C00u, 0xFC00u, 0x7E00u, 0xFE00u,
                                           0x7C01u, 0xFC01u, 0x7FFFu, 0xFFFFu, 0x7BFFu, 0xFBFFu,
                                           0x0400u, 0x8400u, 0x0001u, 0x8001u, 0x3C00u, 0xBC00u,
                                           0x03FFu, 0x83FFu};
static const uint64_t tc_bf16_specials[] = {0x0000u, 0x8000u, 0x7F80u, 0xFF80u, 0x7FC0u, 0xFFC0u,
                                            0x7F81u, 0xFF81u, 0x7FFFu, 0xFFFFu, 0x7F7Fu, 0xFF7Fu,
                                            0x0080u, 0x8080u, 0x0001u, 0x8001u, 0x3F80u, 0xBF80u,
                                            0x007Fu, 0x807Fu};
static const uint64_t tc_f32_specials[] = {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u,
                                           0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF800001u,
                                           0x7FFFFFFFu, 0xFFFFFFFFu, 0x7F7FFFFFu, 0xFF7FFFFFu,
                                           0x00800000u, 0x80800000u, 0x00000001u, 0x80000001u,
                                           0x3F800000u, 0xBF800000u, 0x007FFFFFu, 0x807FFFFFu};
static const uint64_t tc_f64_specials[] = {
    0x0000000000000000ull, 0x8000000000000000ull, 0x7FF0000000000000ull, 0xFFF0000000000000ull,
    0x7FF8000000000000ull, 0xFFF8000000000000ull, 0x7FF0000000000001ull, 0xFFF0000000000001ull,
    0x7FFFFFFFFFFFFFFFull, 0xFFFFFFFFFFFFFFFFull, 0x7FEFFFFFFFFFFFFFull, 0xFFEFFFFFFFFFFFFFull,
    0x0010000000000000ull, 0x8010000000000000ull, 0x0000000000000001ull, 0x8000000000000001ull,
    0x3FF0000000000000ull, 0xBFF0000000000000ull, 0x000FFFFFFFFFFFFFull, 0x800FFFFFFFFFFFFFull};
#define TC_FLOAT_SPECIAL_COUNT 20

static inline const uint64_t *tc_float_specials(gpuprim_dtype_t d) {
    switch (d) {
    case GPUPRIM_DTYPE_F16: return tc_f16_specials;
    case GPUPRIM_DTYPE_BF16: return tc_bf16_specials;
    case GPUPRIM_DTYPE_F32: return tc_f32_specials;
    default: return tc_f64_specials;
    }
}

static inline uint64_t tc_special_value(gpuprim_dtype_t d) {
    if (tc_is_float(d)) {
        uint64_t k = tc_below(TC_FLOAT_SPECIAL_COUNT + 4);
        if (k >= TC_FLOAT_SPECIAL_COUNT) return tc_random_moderate(d);
        return tc_float_specials(d)[k];
    } else {
        uint64_t sign = tc_sign_bit(d), mask = tc_mask(d);
        uint64_t signed_values[] = {0, 1, mask, sign, sign - 1, sign + 1, sign - 2};
        uint64_t unsigned_values[] = {0, 1, mask, mask - 1, sign, sign - 1, 2};
        uint64_t k = tc_below(7);
        return tc_is_signed(d) ? signed_values[k] : unsigned_values[k];
    }
}

/* A subnormal of random sign and fraction (floats), or a value near zero
 * (integers: -4..4, wrapped). */
static inline uint64_t tc_random_tiny(gpuprim_dtype_t d) {
    if (tc_is_float(d)) {
        uint64_t fraction = tc_rand() & ((1ull << tc_mantissa_bits(d)) - 1);
        return fraction | ((tc_rand() & 1) ? tc_sign_bit(d) : 0);
    }
    return ((uint64_t)(int64_t)((int)tc_below(9) - 4)) & tc_mask(d);
}

static inline void *tc_xmalloc(size_t bytes);

/* The bits a sort with the bit range [begin_bit, end_bit) orders by
 * (gpuprim_sort_options_t): bits [begin_bit, end_bit) of the order key
 * (tc_sort_key, descending included), at the bottom. */
static inline uint64_t tc_sort_bits(gpuprim_dtype_t d, uint64_t bits, int descending, unsigned begin_bit,
                                    unsigned end_bit) {
    uint64_t key = tc_sort_key(d, bits, descending) >> begin_bit;
    unsigned width = end_bit - begin_bit;
    return width >= 64 ? key : key & ((1ull << width) - 1);
}

/* Stable LSD radix sort of n 64-bit words by their bits [low_bit, low_bit +
 * bits), digit_bits at a time (every pass's shift, low_bit + p * digit_bits,
 * below 64): counting passes, every pass's counts from one read, a pass
 * whose digit is the same for every word skipped. The words start in a; b
 * is the other buffer (n words). Returns the one holding the sorted words. */
static inline uint64_t *tc_radix_words(uint64_t *a, uint64_t *b, uint64_t n, unsigned low_bit, unsigned bits,
                                       unsigned digit_bits) {
    const uint64_t bins = 1ull << digit_bits;
    const unsigned passes = (bits + digit_bits - 1) / digit_bits;
    uint64_t *counts, *from = a, *to = b, *swap, i;
    unsigned p;
    if (n == 0 || passes == 0) return a;
    counts = (uint64_t *)tc_xmalloc(passes * bins * sizeof *counts);
    memset(counts, 0, passes * bins * sizeof *counts);
    for (i = 0; i < n; ++i)
        for (p = 0; p < passes; ++p) counts[p * bins + ((from[i] >> (low_bit + p * digit_bits)) & (bins - 1))]++;
    for (p = 0; p < passes; ++p) {
        const unsigned shift = low_bit + p * digit_bits;
        uint64_t *c = counts + p * bins, total = 0, d;
        if (c[(from[0] >> shift) & (bins - 1)] == n) continue; /* one digit value: nothing moves */
        for (d = 0; d < bins; ++d) {
            const uint64_t count = c[d];
            c[d] = total;
            total += count;
        }
        for (i = 0; i < n; ++i) to[c[(from[i] >> shift) & (bins - 1)]++] = from[i];
        swap = from, from = to, to = swap;
    }
    free(counts);
    return from;
}

/* Ascending (or descending) stable order of keys by the bits [begin_bit,
 * end_bit) of their order key: fills perm with the input index of each
 * output position. The reference every sort check uses: an LSD radix sort
 * (11-bit digits, stable counting passes) on the documented order key,
 * starting from the identity permutation, so keys equal in those bits keep
 * their input order. */
static inline void tc_reference_sort_permutation_bits(gpuprim_dtype_t d, const void *keys, uint64_t n,
                                                      int descending, unsigned begin_bit,
                                                      unsigned end_bit, uint64_t *perm) {
    /* LSD radix of (sort bits, position) pairs: one array of pairs, so each
     * pass scatters one stream; every pass's counts from one read; passes
     * whose digit is the same for every key skipped; up to 64 keys (short
     * segments) by insertion. Up to 32 sort bits (and fewer than 2^32 keys),
     * a pair is one 64-bit word, the bits above the position: half the bytes
     * a pass moves, and perm is the second buffer. */
    enum { DIGIT_BITS = 11, BINS = 1 << DIGIT_BITS };
    typedef struct {
        uint64_t bits, position;
    } keyed_t;
    const unsigned bits = end_bit - begin_bit, passes = (bits + DIGIT_BITS - 1) / DIGIT_BITS;
    uint64_t *counts, i;
    unsigned p;
    if (n == 0) return;
    if (n <= 64) { /* short (segments): a stable insertion sort */
        keyed_t from[64];
        for (i = 0; i < n; ++i) {
            const keyed_t item = {tc_sort_bits(d, tc_get(d, keys, i), descending, begin_bit, end_bit), i};
            uint64_t j = i;
            for (; j > 0 && from[j - 1].bits > item.bits; --j) from[j] = from[j - 1];
            from[j] = item;
        }
        for (i = 0; i < n; ++i) perm[i] = from[i].position;
        return;
    }
    if (bits <= 32 && n - 1 <= UINT32_MAX) {
        uint64_t *words = (uint64_t *)tc_xmalloc(n * sizeof *words), *sorted;
        for (i = 0; i < n; ++i) words[i] = tc_sort_bits(d, tc_get(d, keys, i), descending, begin_bit, end_bit) << 32 | i;
        sorted = tc_radix_words(words, perm, n, 32, bits, DIGIT_BITS);
        for (i = 0; i < n; ++i) perm[i] = sorted[i] & UINT32_MAX; /* sorted may be perm itself */
        free(words);
    } else {
        keyed_t *from = (keyed_t *)tc_xmalloc(n * sizeof *from), *to = (keyed_t *)tc_xmalloc(n * sizeof *to), *swap;
        counts = (uint64_t *)tc_xmalloc((passes ? passes : 1) * BINS * sizeof *counts);
        memset(counts, 0, (passes ? passes : 1) * BINS * sizeof *counts);
        for (i = 0; i < n; ++i) {
            from[i].bits = tc_sort_bits(d, tc_get(d, keys, i), descending, begin_bit, end_bit);
            from[i].position = i;
            for (p = 0; p < passes; ++p) counts[p * BINS + ((from[i].bits >> (p * DIGIT_BITS)) & (BINS - 1))]++;
        }
        for (p = 0; p < passes; ++p) {
            const unsigned shift = p * DIGIT_BITS;
            uint64_t *c = counts + p * BINS, total = 0, b;
            if (c[(from[0].bits >> shift) & (BINS - 1)] == n) continue; /* one digit value: nothing moves */
            for (b = 0; b < BINS; ++b) {
                const uint64_t count = c[b];
                c[b] = total;
                total += count;
            }
            for (i = 0; i < n; ++i) to[c[(from[i].bits >> shift) & (BINS - 1)]++] = from[i];
            swap = from, from = to, to = swap;
        }
        for (i = 0; i < n; ++i) perm[i] = from[i].position;
        free(from);
        free(to);
        free(counts);
    }
}

/* Ascending sort of n 64-bit values in place (LSD radix; passes whose digit
 * is the same for every value skipped). */
static inline void tc_sort_u64(uint64_t *v, uint64_t n) {
    uint64_t *tmp, *sorted;
    if (n < 2) return;
    tmp = (uint64_t *)tc_xmalloc(n * sizeof *tmp);
    sorted = tc_radix_words(v, tmp, n, 0, 64, 16);
    if (sorted != v) memcpy(v, sorted, n * sizeof *v);
    free(tmp);
}

/* The whole key (gpuprim_sort). */
static inline void tc_reference_sort_permutation(gpuprim_dtype_t d, const void *keys, uint64_t n,
                                                 int descending, uint64_t *perm) {
    tc_reference_sort_permutation_bits(d, keys, n, descending, 0, tc_bits(d), perm);
}

static inline void *tc_xmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 16); /* 16, not 1: GCC -Wstringop-overflow would see a 1-byte region */
    if (!p) {
        fprintf(stderr, "out of host memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

/* Reorder a typed array by perm (out[i] = in[perm[i]]). */
static inline void tc_permute(gpuprim_dtype_t d, const void *in, const uint64_t *perm, uint64_t n,
                              void *out) {
    uint64_t i;
    for (i = 0; i < n; ++i) tc_set(d, out, i, tc_get(d, in, perm[i]));
}

#if defined(GPUPRIM_EXPERIMENTAL_API)
/* gpuprim_reduce_by_key / gpuprim_group_by: the groups of the n keys (kd)
 * taken in the order order[0..n): runs of equal bits (-0.0 and +0.0 differ,
 * NaNs with the same bits are equal). reduce-by-key takes them in input
 * order (order[i] = i); group-by in the stable ascending sort order
 * (tc_reference_sort_permutation), so each group's elements stay in input
 * order. Group g is order[first[g] .. first[g] + length[g]) (first, length:
 * n entries each, or NULL). Returns the number of groups. */
static inline uint64_t tc_reference_groups(gpuprim_dtype_t kd, const void *keys, const uint64_t *order, uint64_t n,
                                           uint64_t *first, uint64_t *length) {
    uint64_t i = 0, groups = 0;
    while (i < n) {
        uint64_t end = i + 1;
        const uint64_t key = tc_get(kd, keys, order[i]);
        while (end < n && tc_get(kd, keys, order[end]) == key) ++end;
        if (first) first[groups] = i;
        if (length) length[groups] = end - i;
        ++groups;
        i = end;
    }
    return groups;
}

/* op over values[order[begin]], ..., values[order[end - 1]] (vd, end >
 * begin), as bits, for every op but a float SUM: integer sums wrap,
 * MIN/MAX by tc_apply (NaN of the largest bits, -0 < +0). */
static inline uint64_t tc_reference_reduce_at(gpuprim_op_t op, gpuprim_dtype_t vd, const void *values,
                                              const uint64_t *order, uint64_t begin, uint64_t end) {
    uint64_t acc = tc_get(vd, values, order[begin]), i;
    for (i = begin + 1; i < end; ++i) acc = tc_apply(op, vd, acc, tc_get(vd, values, order[i]));
    return acc;
}

/* Whether got (bits of the float dtype vd) is an acceptable SUM of
 * values[order[begin .. end)]: where every partial sum is exact in the
 * accumulator (f32 for f16, bf16 and f32; f64) in any order, e.g. small
 * integers, the exact sum rounded once (equal by value: the sign of a zero
 * sum is not fixed); else within tc_float_sum_ok's bound; a NaN sum the
 * canonical NaN. */
static inline int tc_float_sum_at_ok(gpuprim_dtype_t vd, const void *values, const uint64_t *order, uint64_t begin,
                                     uint64_t end, uint64_t got) {
    long double ref = 0, sumabs = 0;
    int min_exponent = INT_MAX, exact;
    uint64_t i;
    for (i = begin; i < end; ++i) {
        const long double term = tc_value(vd, tc_get(vd, values, order[i]));
        const int e = tc_lowest_bit_exponent(term);
        ref += term;
        sumabs += fabsl(term);
        if (e < min_exponent) min_exponent = e;
    }
    if (vd == GPUPRIM_DTYPE_F64)
        exact = min_exponent == INT_MAX || (min_exponent >= -1074 && sumabs < ldexpl(1.0L, min_exponent + 53));
    else exact = tc_sum_exact_in_f32(min_exponent, sumabs);
    if (exact && !tc_is_half(vd) && !isnan(ref)) return !tc_isnan_bits(vd, got) && tc_value(vd, got) == ref;
    return tc_float_sum_ok_exact(vd, got, ref, sumabs, end - begin, exact);
}
#endif

/* Fill p[0..n) with pattern. */
static inline void tc_fill(gpuprim_dtype_t d, void *p, uint64_t n, tc_pattern_t pattern) {
    uint64_t i;
    int is_float = tc_is_float(d);
    switch (pattern) {
    case TC_RANDOM_BITS:
        for (i = 0; i < n; ++i) tc_set(d, p, i, tc_rand());
        break;
    case TC_MODERATE:
        for (i = 0; i < n; ++i) tc_set(d, p, i, tc_random_moderate(d));
        break;
    case TC_EQUAL: {
        uint64_t v = tc_random_moderate(d);
        for (i = 0; i < n; ++i) tc_set(d, p, i, v);
        break;
    }
    case TC_SORTED:
    case TC_REVERSED: {
        uint64_t *perm = (uint64_t *)tc_xmalloc(n * sizeof *perm);
        void *tmp = tc_xmalloc(n * tc_size(d));
        memset(tmp, 0, n * tc_size(d)); /* for n = 0 too: GCC -Wmaybe-uninitialized (sanitizer builds) */
        for (i = 0; i < n; ++i) tc_set(d, tmp, i, tc_random_moderate(d));
        tc_reference_sort_permutation(d, tmp, n, pattern == TC_REVERSED, perm);
        tc_permute(d, tmp, perm, n, p);
        free(tmp);
        free(perm);
        break;
    }
    case TC_SMALL_RANGE:
        for (i = 0; i < n; ++i) {
            uint64_t k = tc_below(8);
            if (is_float) {
                static const double values[8] = {-1.5, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 1.5};
                tc_set(d, p, i, tc_from_double(d, values[k]));
            } else {
                tc_set(d, p, i, tc_is_signed(d) ? ((k - 3) & tc_mask(d)) : k);
            }
        }
        break;
    case TC_ZEROS:
        for (i = 0; i < n; ++i) tc_set(d, p, i, is_float && (tc_rand() & 1) ? tc_sign_bit(d) : 0);
        break;
    case TC_SPECIAL:
        for (i = 0; i < n; ++i) tc_set(d, p, i, tc_special_value(d));
        break;
    case TC_NAN_SPARSE:
        for (i = 0; i < n; ++i)
            tc_set(d, p, i, is_float && tc_below(300) == 0 ? tc_random_nan(d) : tc_random_moderate(d));
        if (is_float && n > 0) tc_set(d, p, tc_below(n), tc_random_nan(d));
        break;
    case TC_INF_SPARSE: {
        uint64_t pos_inf = is_float ? tc_inf_bits(d) : tc_identity(GPUPRIM_OP_MIN, d);
        uint64_t neg_inf = is_float ? (tc_inf_bits(d) | tc_sign_bit(d)) : tc_identity(GPUPRIM_OP_MAX, d);
        for (i = 0; i < n; ++i) {
            uint64_t r = tc_below(300);
            tc_set(d, p, i, r == 0 ? pos_inf : r == 1 && !is_float ? neg_inf : tc_random_moderate(d));
        }
        if (n > 0) tc_set(d, p, tc_below(n), pos_inf);
        if (n > 1 && (tc_rand() & 1)) tc_set(d, p, tc_below(n), neg_inf);
        break;
    }
    case TC_NAN_HEAVY:
        for (i = 0; i < n; ++i)
            tc_set(d, p, i, is_float && (tc_rand() & 1) ? tc_random_nan(d) : tc_special_value(d));
        break;
    case TC_TINY:
        for (i = 0; i < n; ++i) {
            uint64_t r = tc_below(16);
            if (is_float && r == 0) tc_set(d, p, i, (tc_rand() & 1) ? tc_sign_bit(d) : 0);
            else if (is_float && r == 1)
                tc_set(d, p, i, ((uint64_t)1 << tc_mantissa_bits(d)) | ((tc_rand() & 1) ? tc_sign_bit(d) : 0));
            else tc_set(d, p, i, tc_random_tiny(d));
        }
        break;
    default: break;
    }
}

/* n keys of pattern p in the sort order (descending or not): the
 * reference's order, best first. 8 bytes of room past the last key; the
 * caller frees them. */
static inline void *tc_sorted_keys(gpuprim_dtype_t d, uint64_t n, tc_pattern_t p, int descending) {
    void *raw = tc_xmalloc(n * tc_size(d) + 8), *keys = tc_xmalloc(n * tc_size(d) + 8);
    uint64_t *perm = (uint64_t *)tc_xmalloc((n + 1) * sizeof(uint64_t));
    memset(raw, 0, n * tc_size(d) + 8); /* newer GCC at -O3 -Werror: maybe-uninitialized */
    tc_fill(d, raw, n, p);
    tc_reference_sort_permutation(d, raw, n, descending, perm);
    tc_permute(d, raw, perm, n, keys);
    free(raw);
    free(perm);
    return keys;
}

/* ------------------------------------------------------------------------ */
/* Buffers                                                                  */
/* ------------------------------------------------------------------------ */

static inline gpuprim_buffer_t tc_buffer(gpuprim_context_t ctx, gpuprim_dtype_t d, uint64_t n) {
    gpuprim_buffer_t b = NULL;
    REQUIRE_OK(gpuprim_buffer_create(ctx, d, n, &b));
    return b;
}

static inline gpuprim_buffer_t tc_buffer_from(gpuprim_context_t ctx, gpuprim_dtype_t d,
                                              const void *host, uint64_t n) {
    gpuprim_buffer_t b = tc_buffer(ctx, d, n);
    REQUIRE_OK(gpuprim_buffer_upload(ctx, b, 0, host, n));
    return b;
}

/* A buffer wrapping `count` elements of `base`'s memory from element
 * `offset` on (device memory on CUDA): a view that need not start on the
 * alignment the library's own allocations have. Destroy it before `base`. */
static inline gpuprim_buffer_t tc_view(gpuprim_context_t ctx, gpuprim_buffer_t base, gpuprim_dtype_t d,
                                       uint64_t offset, uint64_t count) {
    void *data = NULL;
    gpuprim_buffer_t view = NULL;
    REQUIRE_OK(gpuprim_buffer_get_info(ctx, base, NULL, NULL, &data));
    REQUIRE_OK(gpuprim_buffer_wrap(ctx, d, (char *)data + offset * tc_size(d), count, &view));
    return view;
}

/* The value poisoned outputs hold: a pattern no test computes by chance. */
static inline uint64_t tc_poison_bits(gpuprim_dtype_t d) { return 0x5AA5C33C96691EE1ull & tc_mask(d); }

static inline void tc_poison_host(gpuprim_dtype_t d, void *p, uint64_t n) {
    uint64_t i;
    for (i = 0; i < n; ++i) tc_set(d, p, i, tc_poison_bits(d) ^ (i & 0xF));
}

static inline void tc_poison(gpuprim_context_t ctx, gpuprim_buffer_t b, gpuprim_dtype_t d, uint64_t n) {
    void *host;
    if (n == 0) return;
    host = tc_xmalloc(n * tc_size(d));
    tc_poison_host(d, host, n);
    REQUIRE_OK(gpuprim_buffer_upload(ctx, b, 0, host, n));
    free(host);
}

static inline void *tc_download(gpuprim_context_t ctx, gpuprim_buffer_t b, gpuprim_dtype_t d, uint64_t n) {
    void *host = tc_xmalloc(n * tc_size(d));
    REQUIRE_OK(gpuprim_buffer_download(ctx, b, 0, host, n));
    return host;
}

/* gpuprim_argsort of the keys in kin (kd, n of them) into a new poisoned
 * index buffer of id, returned: keys_out_mode 0 no keys_out, 1 a new
 * poisoned buffer (in *kout), 2 kin itself (in place; *kout = kin). */
static inline gpuprim_buffer_t tc_run_argsort(gpuprim_context_t ctx, gpuprim_buffer_t kin, gpuprim_dtype_t kd,
                                              gpuprim_dtype_t id, uint64_t n, const gpuprim_sort_options_t *options,
                                              int keys_out_mode, gpuprim_buffer_t *kout) {
    gpuprim_buffer_t idx;
    *kout = NULL;
    if (keys_out_mode == 1) {
        *kout = tc_buffer(ctx, kd, n);
        tc_poison(ctx, *kout, kd, n);
    } else if (keys_out_mode == 2) {
        *kout = kin;
    }
    idx = tc_buffer(ctx, id, n);
    tc_poison(ctx, idx, id, n);
    CHECK_OK(gpuprim_argsort(ctx, kin, *kout, idx, options));
    return idx;
}

/* How many positions of idx[0..n) (dtype id) break a stable sorted
 * permutation of keys (kd) by their sort bits [begin_bit, end_bit): an index
 * out of range or repeated, or one that does not follow its predecessor
 * (smaller sort bits, or equal ones at a lower index). */
static inline uint64_t tc_argsort_breaks(gpuprim_dtype_t kd, const void *keys, gpuprim_dtype_t id, const void *idx,
                                         uint64_t n, int descending, unsigned begin_bit, unsigned end_bit) {
    unsigned char *seen = (unsigned char *)calloc(n ? n : 1, 1);
    uint64_t i, broken = 0;
    for (i = 0; i < n; ++i) {
        uint64_t at = tc_get(id, idx, i);
        if (at >= n || seen[at]) {
            ++broken;
            continue;
        }
        seen[at] = 1;
        if (i > 0) {
            uint64_t before = tc_get(id, idx, i - 1);
            uint64_t x = tc_sort_bits(kd, tc_get(kd, keys, before < n ? before : 0), descending, begin_bit, end_bit);
            uint64_t y = tc_sort_bits(kd, tc_get(kd, keys, at), descending, begin_bit, end_bit);
            if (x > y || (x == y && before >= at)) ++broken;
        }
    }
    free(seen);
    return broken;
}

/* Bitwise comparison of two typed arrays; one failure naming the first
 * mismatch and the number of mismatches. Returns 1 if equal. */
#define CHECK_ARRAY_EQ(d, got, want, n, what) tc_check_array_eq(__FILE__, __LINE__, d, got, want, n, what)
static inline int tc_check_array_eq(const char *file, int line, gpuprim_dtype_t d, const void *got,
                                    const void *want, uint64_t n, const char *what) {
    uint64_t i, first = 0, bad = 0;
    TC_COUNT(tc.checks);
    if (n == 0 || memcmp(got, want, n * tc_size(d)) == 0) return 1;
    for (i = 0; i < n; ++i)
        if (tc_get(d, got, i) != tc_get(d, want, i)) {
            if (bad++ == 0) first = i;
        }
    {
        char g[96], w[96];
        tc_fail(file, line, "%s: %llu of %llu elements differ; first at [%llu]: got %s, expected %s",
                what, (unsigned long long)bad, (unsigned long long)n, (unsigned long long)first,
                tc_format(d, tc_get(d, got, first), g, sizeof g),
                tc_format(d, tc_get(d, want, first), w, sizeof w));
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Segment layouts                                                          */
/* ------------------------------------------------------------------------ */

/* A segmentation of n elements: the whole input (flat: set by the test),
 * uniform rows, or CSR offsets (absolute positions, nseg + 1 of them) stored
 * in a buffer of dtype od. */
typedef struct tc_layout {
    const char *name;
    int flat, uniform;
    uint64_t rows, len; /* uniform (flat: 1 row of n) */
    uint64_t n;         /* data elements */
    uint64_t nseg;
    uint64_t *off; /* nseg + 1 offsets (uniform too: r * len), host */
    uint64_t longest;
    gpuprim_dtype_t od;
} tc_layout_t;

static inline tc_layout_t tc_layout_rows(uint64_t rows, uint64_t len) {
    tc_layout_t L;
    uint64_t r;
    memset(&L, 0, sizeof L);
    L.name = "uniform rows";
    L.uniform = 1;
    L.rows = rows;
    L.len = len;
    L.n = rows * len;
    L.nseg = rows;
    L.longest = rows ? len : 0;
    L.off = (uint64_t *)tc_xmalloc((rows + 1) * sizeof *L.off);
    for (r = 0; r <= rows; ++r) L.off[r] = r * len;
    return L;
}

/* CSR from a list of lengths, with `lead` elements before the first
 * segment and `tail` after the last. */
static inline tc_layout_t tc_layout_csr(const char *name, const uint64_t *lengths, uint64_t count, uint64_t lead,
                                        uint64_t tail, gpuprim_dtype_t od) {
    tc_layout_t L;
    uint64_t s, at = lead;
    memset(&L, 0, sizeof L);
    L.name = name;
    L.nseg = count;
    L.od = od;
    L.off = (uint64_t *)tc_xmalloc((count + 1) * sizeof *L.off);
    for (s = 0; s < count; ++s) {
        L.off[s] = at;
        at += lengths[s];
        if (lengths[s] > L.longest) L.longest = lengths[s];
    }
    L.off[count] = at;
    L.n = at + tail;
    return L;
}

static inline void tc_layout_free(tc_layout_t *L) {
    free(L->off);
    L->off = NULL;
}

/* The segments descriptor (and, for CSR, its offsets buffer on ctx in
 * *offsets). */
static inline gpuprim_segments_t tc_make_segments(gpuprim_context_t ctx, const tc_layout_t *L,
                                                  gpuprim_buffer_t *offsets) {
    gpuprim_segments_t seg;
    *offsets = NULL;
    if (L->uniform) {
        gpuprim_segments_init_rows(&seg, L->rows, L->len);
    } else {
        uint64_t s;
        void *host = tc_xmalloc((L->nseg + 1) * tc_size(L->od));
        for (s = 0; s <= L->nseg; ++s) tc_set(L->od, host, s, L->off[s]);
        *offsets = tc_buffer_from(ctx, L->od, host, L->nseg + 1);
        free(host);
        gpuprim_segments_init_offsets(&seg, *offsets);
    }
    return seg;
}

/* Lengths that fit what is left of a budget (GPUPRIM_TEST_MAX_COUNT). */
static inline uint64_t tc_capped(uint64_t length, uint64_t *budget) {
    if (length > *budget) length = *budget;
    *budget -= length;
    return length;
}

/* What the CSR layouts of tc_layout_of_kind take from the test. */
typedef struct tc_csr_kinds {
    const uint64_t *boundary; /* kind 0: these lengths, with gaps before and after */
    uint64_t boundary_count;
    uint64_t empty_lead;    /* kind 1: elements before the mostly empty segments */
    uint64_t giant;         /* kind 2: the giant segment's length */
    uint64_t power_law_max; /* kind 3: the longest power-law length */
} tc_csr_kinds_t;

/* The CSR layouts the segmented tests run through, with offsets of dtype od
 * and at most `budget` elements (lengths capped): kind 0 the boundary
 * lengths, 1 mostly empty segments, 2 one giant segment, 3 power-law
 * lengths, 4 short random lengths, any other kind no segments. */
static inline tc_layout_t tc_layout_of_kind(int kind, gpuprim_dtype_t od, uint64_t budget,
                                            const tc_csr_kinds_t *kinds) {
    uint64_t lengths[512], count = 0, i;
    uint64_t lead = 0, tail = 0;
    const char *name = "";
    switch (kind) {
    case 0: /* the boundary lengths, with gaps before and after */
        name = "boundary lengths, lead and tail";
        lead = tc_capped(7, &budget);
        for (i = 0; i < kinds->boundary_count; ++i) lengths[count++] = tc_capped(kinds->boundary[i], &budget);
        tail = tc_capped(5, &budget);
        break;
    case 1: /* mostly empty segments */
        name = "mostly empty segments";
        lead = tc_capped(kinds->empty_lead, &budget);
        for (i = 0; i < 200; ++i) lengths[count++] = tc_below(5) == 0 ? tc_capped(1 + tc_below(40), &budget) : 0;
        break;
    case 2: /* one giant segment between empties, leaving a tail */
        name = "one giant segment";
        lengths[count++] = 0;
        lengths[count++] = tc_capped(kinds->giant, &budget);
        lengths[count++] = 0;
        tail = tc_capped(3, &budget);
        break;
    case 3: /* power-law lengths */
        name = "power-law lengths";
        lead = tc_capped(1, &budget);
        for (i = 0; i < 300; ++i) {
            double u = tc_uniform();
            uint64_t length = (uint64_t)(1.0 / ((u + 1e-4) * (u + 1e-4)));
            if (length > kinds->power_law_max) length = kinds->power_law_max;
            lengths[count++] = tc_capped(length - 1, &budget);
        }
        break;
    case 4: /* many short segments of random small lengths */
        name = "short random lengths";
        for (i = 0; i < 500; ++i) lengths[count++] = tc_capped(tc_below(70), &budget);
        tail = tc_capped(2, &budget);
        break;
    default: /* zero segments over data (nothing read or written) */
        name = "no segments";
        lead = tc_capped(10, &budget);
        break;
    }
    return tc_layout_csr(name, lengths, count, lead, tail, od);
}

/* ------------------------------------------------------------------------ */
/* Error checks                                                             */
/* ------------------------------------------------------------------------ */

/* A buffer with known (poisoned) contents, to see that a failed call changed
 * nothing. */
typedef struct tc_known_buffer {
    gpuprim_buffer_t b;
    gpuprim_dtype_t d;
    uint64_t n;
    void *host;
} tc_known_t;

static inline tc_known_t tc_known(gpuprim_context_t ctx, gpuprim_dtype_t d, uint64_t n) {
    tc_known_t k;
    k.d = d;
    k.n = n;
    /* 8 bytes an element, the widest dtype: with tc_size(d) unknown at
       compile time GCC's -Wstringop-overflow (at -O3) would otherwise follow
       a path where it is 0 and flag the poisoning loop. */
    k.host = tc_xmalloc(n * 8);
    tc_poison_host(d, k.host, n);
    k.b = tc_buffer_from(ctx, d, k.host, n);
    return k;
}

/* Buffer b of ctx (n elements of d) holds `want`: downloaded, compared, freed. */
#define CHECK_BUFFER_EQ(ctx, b, d, want, n, what) tc_check_buffer_eq(__FILE__, __LINE__, ctx, b, d, want, n, what)
static inline int tc_check_buffer_eq(const char *file, int line, gpuprim_context_t ctx, gpuprim_buffer_t b,
                                     gpuprim_dtype_t d, const void *want, uint64_t n, const char *what) {
    void *now = tc_download(ctx, b, d, n);
    const int same = tc_check_array_eq(file, line, d, now, want, n, what);
    free(now);
    return same;
}

/* The sinks of a data-dependent count (gpuprim_select, gpuprim_unique,
 * gpuprim_reduce_by_key, ...) in a test call: mode 0 the host, 1 count_out,
 * 2 both; cd count_out's dtype (an index dtype). */
typedef struct tc_count_sink {
    int mode;
    gpuprim_dtype_t cd;
} tc_count_sink_t;

/* The sink of combination `combo`: every mode with every count_out dtype. */
static inline tc_count_sink_t tc_count_sink_of(int combo) {
    static const gpuprim_dtype_t count_dtypes[4] = {GPUPRIM_DTYPE_I32, GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_I64,
                                                    GPUPRIM_DTYPE_U64};
    tc_count_sink_t s;
    s.mode = combo % 3;
    s.cd = count_dtypes[(combo / 3) % 4];
    return s;
}

/* count_out (2 elements, poisoned) for the sink, or NULL. */
static inline gpuprim_buffer_t tc_make_count_out(gpuprim_context_t ctx, tc_count_sink_t s) {
    gpuprim_buffer_t b;
    if (s.mode == 0) return NULL;
    b = tc_buffer(ctx, s.cd, 2);
    tc_poison(ctx, b, s.cd, 2);
    return b;
}

/* The count arrived where the sink says (count_out's element 1 untouched);
 * count_out is freed. */
#define TC_CHECK_COUNT(ctx, s, host_count, count_out, want) \
    tc_check_count(__FILE__, __LINE__, ctx, s, host_count, count_out, want)
static inline void tc_check_count(const char *file, int line, gpuprim_context_t ctx, tc_count_sink_t s,
                                  uint64_t host_count, gpuprim_buffer_t count_out, uint64_t want) {
    TC_COUNT(tc.checks);
    if (s.mode != 1 && host_count != want)
        tc_fail(file, line, "*count = %llu, expected %llu", (unsigned long long)host_count,
                (unsigned long long)want);
    if (count_out) {
        unsigned char want_out[16];
        tc_poison_host(s.cd, want_out, 2);
        tc_set(s.cd, want_out, 0, want);
        (void)tc_check_buffer_eq(file, line, ctx, count_out, s.cd, want_out, 2,
                                 "count_out (element 0 the count, 1 untouched)");
        CHECK_OK(gpuprim_buffer_destroy(ctx, count_out));
    }
}

/* The buffer of k (on ctx) still holds what tc_known put there. */
#define TC_CHECK_UNCHANGED(ctx, k) tc_check_unchanged(__FILE__, __LINE__, ctx, &(k))
static inline void tc_check_unchanged(const char *file, int line, gpuprim_context_t ctx, const tc_known_t *k) {
    void *now = tc_download(ctx, k->b, k->d, k->n);
    tc_check_array_eq(file, line, k->d, now, k->host, k->n, "buffer after a failed call");
    free(now);
}

static inline void tc_free_known(gpuprim_context_t ctx, tc_known_t k) {
    if (k.b) CHECK_OK(gpuprim_buffer_destroy(ctx, k.b));
    free(k.host);
}

/* A call that must fail with `status` and leave a message on ctx containing
 * needle. */
#define TC_EXPECT_FAIL(ctx, call, status, needle)                                          \
    do {                                                                                   \
        CHECK_STATUS(call, status);                                                        \
        CHECK_MESSAGE(ctx, needle);                                                        \
    } while (0)

/* ------------------------------------------------------------------------ */
/* Start and end                                                            */
/* ------------------------------------------------------------------------ */

/* Seeds the RNG, creates the default context (GPUPRIM_BACKEND honoured) and
 * prints which backend and device the test runs on. */
static inline gpuprim_context_t tc_init(const char *program) {
    const char *seed_text = getenv("GPUPRIM_TEST_SEED");
    char message[512] = "";
    gpuprim_backend_t backend = GPUPRIM_BACKEND_AUTO;
    int32_t ordinal = -2;
    char name[256] = "";
    gpuprim_status_t status;

    tc.program = program;
    tc.seed = seed_text && *seed_text ? strtoull(seed_text, NULL, 0)
                                      : ((uint64_t)time(NULL) * 2654435761ull) ^ (uint64_t)clock();
    tc.rng = tc.seed;
    snprintf(tc.where, sizeof tc.where, "setup");

    status = gpuprim_context_create(NULL, &tc.ctx, message, sizeof message);
    if (status != GPUPRIM_SUCCESS) {
        fprintf(stderr, "%s: gpuprim_context_create failed: %d (%s): %s\n", program, (int)status,
                gpuprim_get_error_string(status), message);
        exit(1);
    }
    REQUIRE_OK(gpuprim_context_get_backend(tc.ctx, &backend));
    REQUIRE_OK(gpuprim_context_get_device(tc.ctx, &ordinal, name, sizeof name));
    printf("%s: libgpuprim %s, backend %s, device %d \"%s\", seed %llu (GPUPRIM_BACKEND=%s)\n",
           program, gpuprim_version_string(),
           backend == GPUPRIM_BACKEND_CUDA ? "cuda" : backend == GPUPRIM_BACKEND_CPU ? "cpu" : "?",
           (int)ordinal, name, (unsigned long long)tc.seed,
           getenv("GPUPRIM_BACKEND") ? getenv("GPUPRIM_BACKEND") : "(unset)");
    fflush(stdout);
    return tc.ctx;
}

static inline int tc_backend_is_cuda(gpuprim_context_t ctx) {
    gpuprim_backend_t backend = GPUPRIM_BACKEND_AUTO;
    REQUIRE_OK(gpuprim_context_get_backend(ctx, &backend));
    return backend == GPUPRIM_BACKEND_CUDA;
}

static inline int tc_finish(void) {
    gpuprim_context_t ctx = tc.ctx;
    tc.ctx = NULL;
    if (ctx && gpuprim_context_destroy(ctx) != GPUPRIM_SUCCESS) tc.failures++;
    printf("%s: %ld checks, %ld failures%s (seed %llu)\n", tc.program, tc.checks, tc.failures,
           tc.failures ? " -- FAILED" : "", (unsigned long long)tc.seed);
    return tc.failures ? 1 : 0;
}

#endif /* GPUPRIM_TEST_COMMON_H */
