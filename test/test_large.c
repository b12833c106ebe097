/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Counts past 2^32 (run only with GPUPRIM_TEST_LARGE=1; meant for a GPU with
 * 80 GB): u32 SUM reduce, u32 inclusive SUM scan in place, u32 keys sort in
 * place. Device memory: one buffer of n u32 plus the sort's workspace (at
 * most another n u32): about 35 GB for the default n = 2^32 + 1234567.
 * Then the toolbox on n u8 keys (buffers freed in between): select keeping
 * all (a count past 2^32) and keeping half with U64 positions (positions past
 * 2^32), unique and reduce-by-key of runs of one (counts past 2^32) and of
 * runs of four (runs crossing tiles): n u8 keys and values, an n-element u8
 * output and n U64 positions (then a second u8 output instead), about 47 GB.
 * Host memory: one chunk of 2^26 elements.
 *
 * Verification is cheap and complete: the reduce and scan inputs are a cheap
 * function of the index, so the exact wrapped sum and every prefix are
 * recomputed on the host; the sorted keys are checked for order across the
 * whole array, and as a multiset by a 64-bit fingerprint and a 65536-bin
 * histogram of their high bits compared with the input's.
 *
 * GPUPRIM_TEST_LARGE_COUNT=<n> overrides n (to try the test itself on a
 * small count, e.g. on the CPU backend).
 */
#include "test_common.h"

#define CHUNK ((uint64_t)1 << 26)

static uint32_t scan_input(uint64_t i) { return (uint32_t)(i * 0x9E3779B1u) ^ (uint32_t)(i >> 29); }
static uint32_t sort_key(uint64_t i) { return (uint32_t)tc_mix64(i ^ 0x5DEECE66Dull); }
/* u8 keys where every key differs from the one before (runs of one), or in
 * runs of four (each run's key differs from the run before), and values. */
static uint8_t run_key(uint64_t i, unsigned run_shift) { return (uint8_t)((i >> run_shift) * 37u); }
static uint8_t run_value(uint64_t i) { return (uint8_t)(i * 0x9Du ^ (i >> 11)); }

static double step_start;
static void step(const char *what) {
    tc_where("%s", what);
    step_start = tc_seconds();
}
static void step_done(void) {
    printf("  %-44s %8.2f s\n", tc.where, tc_seconds() - step_start);
    fflush(stdout);
}

/* Reads a device buffer in order, a chunk at a time: next() gives element j,
 * for j = 0, 1, ... */
typedef struct {
    gpuprim_context_t ctx;
    gpuprim_buffer_t buffer;
    size_t width;
    unsigned char *chunk;
    uint64_t base, filled, total;
} Reader;

static void reader_start(Reader *r, gpuprim_context_t ctx, gpuprim_buffer_t buffer, size_t width, uint64_t total,
                         void *chunk) {
    r->ctx = ctx;
    r->buffer = buffer;
    r->width = width;
    r->chunk = (unsigned char *)chunk;
    r->base = 0;
    r->filled = 0;
    r->total = total;
}

static uint64_t reader_next(Reader *r, uint64_t j) {
    uint64_t value = 0;
    if (j >= r->base + r->filled) {
        r->base = j;
        r->filled = r->total - j < CHUNK ? r->total - j : CHUNK;
        if (gpuprim_buffer_download(r->ctx, r->buffer, r->base, r->chunk, r->filled) != GPUPRIM_SUCCESS) {
            CHECKF(0, "download of elements [%llu, +%llu) failed", (unsigned long long)r->base,
                   (unsigned long long)r->filled);
            r->filled = 0;
            return 0;
        }
    }
    memcpy(&value, r->chunk + (j - r->base) * r->width, r->width);
    return value;
}

/* Fills count elements of width bytes with 0xA5 bytes, so an output a call
 * leaves unwritten fails its check (the buffers are reused between calls). */
static void poison(gpuprim_context_t ctx, gpuprim_buffer_t buffer, uint64_t count, size_t width, void *chunk) {
    uint64_t base;
    memset(chunk, 0xA5, CHUNK * width);
    for (base = 0; base < count; base += CHUNK)
        REQUIRE_OK(gpuprim_buffer_upload(ctx, buffer, base, chunk, count - base < CHUNK ? count - base : CHUNK));
}

static void upload_u8(gpuprim_context_t ctx, gpuprim_buffer_t buffer, uint64_t n, uint8_t *chunk, unsigned run_shift,
                      int values) {
    uint64_t base, i;
    for (base = 0; base < n; base += CHUNK) {
        uint64_t m = n - base < CHUNK ? n - base : CHUNK;
        for (i = 0; i < m; ++i) chunk[i] = values ? run_value(base + i) : run_key(base + i, run_shift);
        REQUIRE_OK(gpuprim_buffer_upload(ctx, buffer, base, chunk, m));
    }
}

/* unique and reduce-by-key (SUM, wrapping in u8) of the keys in runs of
 * 2^run_shift, checked run by run against the index functions. */
static void check_runs(gpuprim_context_t ctx, gpuprim_buffer_t keys, gpuprim_buffer_t values, gpuprim_buffer_t out,
                       gpuprim_buffer_t results, uint64_t n, unsigned run_shift, void *chunk_a, void *chunk_b) {
    const uint64_t runs = ((n - 1) >> run_shift) + 1;
    uint64_t count = 0, r, bad = 0, first_bad = 0;
    Reader got_keys, got_results;

    poison(ctx, out, n, 1, chunk_a);
    step(run_shift ? "u8 unique, runs of 4" : "u8 unique, runs of 1");
    CHECK_OK(gpuprim_unique(ctx, keys, NULL, out, NULL, &count, NULL));
    step_done();
    CHECKF(count == runs, "unique: count %llu, expected %llu", (unsigned long long)count, (unsigned long long)runs);
    reader_start(&got_keys, ctx, out, 1, count < runs ? count : runs, chunk_a);
    for (r = 0; r < runs && r < count; ++r)
        if ((uint8_t)reader_next(&got_keys, r) != run_key(r << run_shift, run_shift) && bad++ == 0) first_bad = r;
    CHECKF(bad == 0, "unique: %llu wrong keys, first at [%llu]", (unsigned long long)bad, (unsigned long long)first_bad);

    poison(ctx, out, n, 1, chunk_a);
    poison(ctx, results, n, 1, chunk_b);
    step(run_shift ? "u8 reduce-by-key SUM, runs of 4" : "u8 reduce-by-key SUM, runs of 1");
    count = 0;
    CHECK_OK(gpuprim_reduce_by_key(ctx, keys, values, GPUPRIM_OP_SUM, out, results, NULL, &count, NULL));
    step_done();
    CHECKF(count == runs, "reduce-by-key: count %llu, expected %llu", (unsigned long long)count,
           (unsigned long long)runs);
    reader_start(&got_keys, ctx, out, 1, count < runs ? count : runs, chunk_a);
    reader_start(&got_results, ctx, results, 1, count < runs ? count : runs, chunk_b);
    bad = 0;
    for (r = 0; r < runs && r < count; ++r) {
        uint64_t first = r << run_shift, last = first + ((uint64_t)1 << run_shift), i;
        uint8_t sum = 0;
        if (last > n) last = n;
        for (i = first; i < last; ++i) sum = (uint8_t)(sum + run_value(i));
        if (((uint8_t)reader_next(&got_keys, r) != run_key(first, run_shift) ||
             (uint8_t)reader_next(&got_results, r) != sum) &&
            bad++ == 0)
            first_bad = r;
    }
    CHECKF(bad == 0, "reduce-by-key: %llu wrong runs, first at [%llu]", (unsigned long long)bad,
           (unsigned long long)first_bad);
}

static void test_toolbox(gpuprim_context_t ctx, uint64_t n) {
    uint8_t *chunk = (uint8_t *)tc_xmalloc(CHUNK);
    void *chunk_a = tc_xmalloc(CHUNK * 8), *chunk_b = tc_xmalloc(CHUNK * 8);
    gpuprim_buffer_t keys = NULL, values = NULL, out = NULL, results = NULL, positions = NULL;
    const uint8_t half = 128;
    gpuprim_predicate_t all = {GPUPRIM_KEEP_NOT_NAN, NULL, NULL, NULL};
    gpuprim_predicate_t below_half = {GPUPRIM_KEEP_LESS, NULL, &half, NULL};
    uint64_t count = 0, expected = 0, i, j, bad = 0, first_bad = 0;
    Reader got, got_positions;

    step("create u8 buffers");
    REQUIRE_OK(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U8, n, &keys));
    REQUIRE_OK(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U8, n, &values));
    REQUIRE_OK(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U8, n, &out));
    step_done();
    step("upload u8 keys (runs of 1) and values");
    upload_u8(ctx, keys, n, chunk, 0, 0);
    upload_u8(ctx, values, n, chunk, 0, 1);
    step_done();

    /* select keeping every key: the count and the output past 2^32 */
    poison(ctx, out, n, 1, chunk_a);
    step("u8 select, every key kept");
    CHECK_OK(gpuprim_select(ctx, keys, NULL, &all, out, NULL, NULL, &count, NULL));
    step_done();
    CHECKF(count == n, "select (all): count %llu, expected %llu", (unsigned long long)count, (unsigned long long)n);
    reader_start(&got, ctx, out, 1, count < n ? count : n, chunk_a);
    for (i = 0; i < n && i < count; ++i)
        if ((uint8_t)reader_next(&got, i) != run_key(i, 0) && bad++ == 0) first_bad = i;
    CHECKF(bad == 0, "select (all): %llu wrong keys, first at [%llu]", (unsigned long long)bad,
           (unsigned long long)first_bad);

    /* select keeping half, with U64 positions past 2^32 */
    for (i = 0; i < n; ++i) expected += run_key(i, 0) < half;
    REQUIRE_OK(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U64, n, &positions));  /* outputs hold the input's count */
    poison(ctx, out, n, 1, chunk_a);
    poison(ctx, positions, n, 8, chunk_b);
    step("u8 select, keys < 128, with U64 positions");
    count = 0;
    CHECK_OK(gpuprim_select(ctx, keys, NULL, &below_half, out, NULL, positions, &count, NULL));
    step_done();
    CHECKF(count == expected, "select (< 128): count %llu, expected %llu", (unsigned long long)count,
           (unsigned long long)expected);
    reader_start(&got, ctx, out, 1, count < expected ? count : expected, chunk_a);
    reader_start(&got_positions, ctx, positions, 8, count < expected ? count : expected, chunk_b);
    bad = 0;
    for (i = 0, j = 0; i < n && j < count; ++i) {
        if (run_key(i, 0) >= half) continue;
        if (((uint8_t)reader_next(&got, j) != run_key(i, 0) || reader_next(&got_positions, j) != i) && bad++ == 0)
            first_bad = j;
        ++j;
    }
    CHECKF(bad == 0, "select (< 128): %llu wrong keys or positions, first at [%llu]", (unsigned long long)bad,
           (unsigned long long)first_bad);
    CHECK_OK(gpuprim_buffer_destroy(ctx, positions));

    REQUIRE_OK(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U8, n, &results));
    check_runs(ctx, keys, values, out, results, n, 0, chunk_a, chunk_b);
    step("upload u8 keys (runs of 4)");
    upload_u8(ctx, keys, n, chunk, 2, 0);
    step_done();
    check_runs(ctx, keys, values, out, results, n, 2, chunk_a, chunk_b);

    CHECK_OK(gpuprim_buffer_destroy(ctx, results));
    CHECK_OK(gpuprim_buffer_destroy(ctx, out));
    CHECK_OK(gpuprim_buffer_destroy(ctx, values));
    CHECK_OK(gpuprim_buffer_destroy(ctx, keys));
    free(chunk);
    free(chunk_a);
    free(chunk_b);
}

int main(void) {
    gpuprim_context_t ctx;
    gpuprim_buffer_t buf = NULL;
    uint32_t *chunk;
    uint64_t n, i, base, *histogram_in, *histogram_out, fingerprint_in = 0, fingerprint_out = 0;
    uint32_t sum = 0, got = 0, running = 0, previous = 0;
    uint64_t bad = 0, first_bad = 0, workspace = 0;
    const char *count_text = getenv("GPUPRIM_TEST_LARGE_COUNT");

    if (!tc_env_flag("GPUPRIM_TEST_LARGE")) {
        return tc_skip("test_large: skipped (set GPUPRIM_TEST_LARGE=1 to run the cases past 2^32 elements)");
    }
    ctx = tc_init("test_large");
    n = count_text && *count_text ? strtoull(count_text, NULL, 0) : ((uint64_t)1 << 32) + 1234567;
    printf("test_large: n = %llu u32 elements (%.2f GB)\n", (unsigned long long)n, (double)n * 4 / 1e9);
    chunk = (uint32_t *)tc_xmalloc(CHUNK * 4);
    histogram_in = (uint64_t *)calloc(65536, sizeof *histogram_in);
    histogram_out = (uint64_t *)calloc(65536, sizeof *histogram_out);
    if (!histogram_in || !histogram_out) return 1;

    step("create buffer");
    REQUIRE_OK(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U32, n, &buf));
    step_done();

    /* reduce */
    step("upload reduce/scan input");
    for (base = 0; base < n; base += CHUNK) {
        uint64_t m = n - base < CHUNK ? n - base : CHUNK;
        for (i = 0; i < m; ++i) {
            chunk[i] = scan_input(base + i);
            sum += chunk[i];
        }
        REQUIRE_OK(gpuprim_buffer_upload(ctx, buf, base, chunk, m));
    }
    step_done();
    step("u32 sum reduce");
    CHECK_OK(gpuprim_reduce(ctx, GPUPRIM_OP_SUM, buf, &got));
    step_done();
    CHECKF(got == sum, "u32 sum of %llu elements: got %u, expected %u", (unsigned long long)n, got, sum);

    /* inclusive scan in place, every prefix checked */
    step("u32 inclusive sum scan in place");
    CHECK_OK(gpuprim_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, buf, buf));
    CHECK_OK(gpuprim_context_synchronize(ctx));
    step_done();
    step("verify scan");
    for (base = 0; base < n; base += CHUNK) {
        uint64_t m = n - base < CHUNK ? n - base : CHUNK;
        REQUIRE_OK(gpuprim_buffer_download(ctx, buf, base, chunk, m));
        for (i = 0; i < m; ++i) {
            running += scan_input(base + i);
            if (chunk[i] != running && bad++ == 0) first_bad = base + i;
        }
    }
    step_done();
    CHECKF(bad == 0, "inclusive scan: %llu wrong prefixes, first at [%llu]", (unsigned long long)bad,
           (unsigned long long)first_bad);
    CHECKF(running == sum, "last prefix %u != sum %u", running, sum);

    /* sort in place */
    step("upload sort keys");
    for (base = 0; base < n; base += CHUNK) {
        uint64_t m = n - base < CHUNK ? n - base : CHUNK;
        for (i = 0; i < m; ++i) {
            uint32_t k = sort_key(base + i);
            chunk[i] = k;
            fingerprint_in += tc_mix64(k);
            histogram_in[k >> 16]++;
        }
        REQUIRE_OK(gpuprim_buffer_upload(ctx, buf, base, chunk, m));
    }
    step_done();
    step("u32 keys sort in place");
    CHECK_OK(gpuprim_sort(ctx, buf, NULL, buf, NULL, GPUPRIM_ORDER_ASCENDING));
    CHECK_OK(gpuprim_context_synchronize(ctx));
    step_done();
    CHECK_OK(gpuprim_context_get_workspace_size(ctx, &workspace));
    printf("  workspace held after the sort: %.2f GB\n", (double)workspace / 1e9);
    step("verify sort");
    bad = 0;
    for (base = 0; base < n; base += CHUNK) {
        uint64_t m = n - base < CHUNK ? n - base : CHUNK;
        REQUIRE_OK(gpuprim_buffer_download(ctx, buf, base, chunk, m));
        for (i = 0; i < m; ++i) {
            uint32_t k = chunk[i];
            if (k < previous && bad++ == 0) first_bad = base + i;
            previous = k;
            fingerprint_out += tc_mix64(k);
            histogram_out[k >> 16]++;
        }
    }
    step_done();
    CHECKF(bad == 0, "sorted keys: %llu descents, first at [%llu]", (unsigned long long)bad,
           (unsigned long long)first_bad);
    CHECKF(fingerprint_in == fingerprint_out, "sorted keys are not a permutation of the input (fingerprint)");
    CHECKF(memcmp(histogram_in, histogram_out, 65536 * sizeof *histogram_in) == 0,
           "sorted keys are not a permutation of the input (histogram)");

    CHECK_OK(gpuprim_buffer_destroy(ctx, buf));
    free(chunk);
    free(histogram_in);
    free(histogram_out);
    CHECK_OK(gpuprim_context_release_workspace(ctx));

    test_toolbox(ctx, n);
    return tc_finish();
}
