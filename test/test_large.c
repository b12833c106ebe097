/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Counts past 2^32 (run only with GPUPRIM_TEST_LARGE=1; meant for a GPU with
 * 80 GB): u32 SUM reduce, u32 inclusive SUM scan in place, u32 keys sort in
 * place. Device memory: one buffer of n u32 plus the sort's workspace (at
 * most another n u32): about 35 GB for the default n = 2^32 + 1234567.
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

static double step_start;
static void step(const char *what) {
    tc_where("%s", what);
    step_start = tc_seconds();
}
static void step_done(void) {
    printf("  %-44s %8.2f s\n", tc.where, tc_seconds() - step_start);
    fflush(stdout);
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
    return tc_finish();
}
