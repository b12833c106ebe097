/* SPDX-License-Identifier: Apache-2.0 */
/* Resource exhaustion, on the backend GPUPRIM_BACKEND / AUTO picks:
 * - asking for more memory than exists gives OUT_OF_MEMORY with a message,
 *   the output handle untouched, and a context that still sorts correctly;
 * - a count whose size in bytes does not fit in 64 bits gives OVERFLOW (the
 *   check comes before any allocation: a failed allocation would say
 *   OUT_OF_MEMORY), and the largest count that does fit is not OVERFLOW;
 * - CUDA only: a call whose workspace cannot be had (device memory filled
 *   by other buffers) gives OUT_OF_MEMORY and succeeds once memory is back;
 *   a top-k then either succeeds or gives OUT_OF_MEMORY with nothing written,
 *   and is correct once memory is back.
 * - contexts made and destroyed in a loop (CPU backend, 2 threads, each
 *   running a parallel reduce) leave the process's resident memory flat:
 *   oneTBB keeps about 7 KiB of each arena that ran work, so the library
 *   reuses arenas instead of making one a context.
 * Under AddressSanitizer a huge malloc aborts unless
 * allocator_may_return_null=1 (set below and by CMakeLists.txt). */
#include "rel_common.h"

#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

/* Every dtype whose count can overflow 64-bit bytes: all but the 1-byte
 * I8 and U8 (count * 1 always fits). */
static const gpuprim_dtype_t kDtypes[] = {GPUPRIM_DTYPE_I32, GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_I64,
                                          GPUPRIM_DTYPE_U64, GPUPRIM_DTYPE_F32, GPUPRIM_DTYPE_F64,
                                          GPUPRIM_DTYPE_F16, GPUPRIM_DTYPE_BF16, GPUPRIM_DTYPE_I16,
                                          GPUPRIM_DTYPE_U16};
#define DTYPE_COUNT 10

static gpuprim_buffer_t sentinel(void) {
    static char storage[8];
    return (gpuprim_buffer_t)(void *)storage;
}

static void expect_create_fails(gpuprim_context_t context, gpuprim_dtype_t dtype, uint64_t count,
                                gpuprim_status_t expected, const char *needle) {
    gpuprim_buffer_t buffer = sentinel();
    gpuprim_status_t status = gpuprim_buffer_create(context, dtype, count, &buffer);
    const char *message = gpuprim_context_last_error(context);
    REL_CHECK(status == expected, "buffer_create(dtype %d, count %llu) -> %d (%s), expected %d: %s",
              (int)dtype, (unsigned long long)count, (int)status,
              gpuprim_get_error_string(status), (int)expected, message);
    REL_CHECK(buffer == sentinel(), "a failed buffer_create wrote its output handle");
    REL_CHECK(message && strstr(message, needle),
              "message of buffer_create(count %llu) lacks '%s': '%s'",
              (unsigned long long)count, needle, message ? message : "(null)");
}

static void expect_usable(gpuprim_context_t context, const char *after) {
    gpuprim_status_t status = rel_small_sort(context, 1000);
    REL_CHECK(status == GPUPRIM_SUCCESS, "context not usable after %s: %d: %s", after,
              (int)status, gpuprim_context_last_error(context));
}

static void test_out_of_memory(gpuprim_context_t context) {
    /* 2^50 bytes (1 PiB), 2^44 bytes (16 TiB): more than any host or device has. */
    expect_create_fails(context, GPUPRIM_DTYPE_I32, (uint64_t)1 << 48, GPUPRIM_ERROR_OUT_OF_MEMORY,
                        "allocate");
    printf("  2^50 bytes: OUT_OF_MEMORY: %s\n", gpuprim_context_last_error(context));
    expect_usable(context, "a 2^50-byte buffer_create");
    expect_create_fails(context, GPUPRIM_DTYPE_F64, (uint64_t)1 << 41, GPUPRIM_ERROR_OUT_OF_MEMORY,
                        "allocate");
    expect_usable(context, "a 2^44-byte buffer_create");
    /* The largest counts whose bytes still fit in 64 bits are memory
     * problems, not overflow. */
    expect_create_fails(context, GPUPRIM_DTYPE_F64, UINT64_MAX / 8, GPUPRIM_ERROR_OUT_OF_MEMORY,
                        "allocate");
    expect_create_fails(context, GPUPRIM_DTYPE_U32, UINT64_MAX / 4, GPUPRIM_ERROR_OUT_OF_MEMORY,
                        "allocate");
    expect_usable(context, "near-2^64-byte buffer_create calls");
}

static void test_overflow(gpuprim_context_t context) {
    int i;
    uint64_t workspace_before = 0, workspace_after = 0;
    REL_OK(context, gpuprim_context_get_workspace_size(context, &workspace_before));
    for (i = 0; i < DTYPE_COUNT; ++i) {
        gpuprim_dtype_t dtype = kDtypes[i];
        uint64_t size = gpuprim_dtype_size(dtype);
        uint64_t first_overflowing = UINT64_MAX / size + 1;
        expect_create_fails(context, dtype, first_overflowing, GPUPRIM_ERROR_OVERFLOW, "2^64");
        expect_create_fails(context, dtype, UINT64_MAX, GPUPRIM_ERROR_OVERFLOW, "2^64");
        expect_create_fails(context, dtype, (uint64_t)1 << 63, GPUPRIM_ERROR_OVERFLOW, "2^64");
        {
            /* Wrapping: the same check, before the memory is looked at. */
            gpuprim_buffer_t buffer = sentinel();
            gpuprim_status_t status;
            void *data = NULL;
            gpuprim_buffer_t real = NULL;
            REL_OK(context, gpuprim_buffer_create(context, dtype, 4, &real));
            REL_OK(context, gpuprim_buffer_get_info(context, real, NULL, NULL, &data));
            status = gpuprim_buffer_wrap(context, dtype, data, first_overflowing, &buffer);
            REL_CHECK(status == GPUPRIM_ERROR_OVERFLOW, "wrap(count %llu) -> %d: %s",
                      (unsigned long long)first_overflowing, (int)status,
                      gpuprim_context_last_error(context));
            REL_CHECK(buffer == sentinel(), "a failed wrap wrote its output handle");
            REL_OK(context, gpuprim_buffer_destroy(context, real));
        }
    }
    printf("  overflow: OVERFLOW: %s\n", gpuprim_context_last_error(context));
    REL_OK(context, gpuprim_context_get_workspace_size(context, &workspace_after));
    REL_CHECK(workspace_after == workspace_before, "rejected calls changed the workspace");
    expect_usable(context, "overflowing counts");
}

/* CUDA: fill device memory with buffers, then a sort whose workspace cannot
 * be had must say OUT_OF_MEMORY, and work once the filler is gone. */
#define MAX_FILLERS 4096
static void test_workspace_exhaustion(gpuprim_context_t context) {
    const uint64_t keys_count = (uint64_t)64 << 20; /* 256 MiB of u32 keys */
    const uint64_t top_k = (uint64_t)1 << 20;
    gpuprim_buffer_t keys = NULL, fillers[MAX_FILLERS], top_keys = NULL, top_index = NULL;
    int filler_count = 0, shift, i;
    uint64_t filled = 0;
    gpuprim_status_t status;
    uint32_t probe[4];
    uint32_t *host = (uint32_t *)malloc(keys_count * sizeof(uint32_t));
    REL_CHECK(host != NULL, "malloc");
    for (i = 0; i < (int)keys_count; ++i) host[i] = (uint32_t)(keys_count - (uint64_t)i);
    REL_OK(context, gpuprim_buffer_create(context, GPUPRIM_DTYPE_U32, keys_count, &keys));
    REL_OK(context, gpuprim_buffer_upload(context, keys, 0, host, keys_count));
    /* top-k outputs (k = 2^20), made before memory is filled, poisoned */
    REL_OK(context, gpuprim_buffer_create(context, GPUPRIM_DTYPE_U32, top_k, &top_keys));
    REL_OK(context, gpuprim_buffer_create(context, GPUPRIM_DTYPE_U32, top_k, &top_index));
    for (i = 0; i < (int)top_k; ++i) host[i] = 0xDEADBEEFu;
    REL_OK(context, gpuprim_buffer_upload(context, top_keys, 0, host, top_k));
    REL_OK(context, gpuprim_buffer_upload(context, top_index, 0, host, top_k));
    REL_OK(context, gpuprim_context_release_workspace(context));
    /* Greedy fill with u32 buffers of 64 GiB down to 16 MiB. */
    for (shift = 34; shift >= 22 && filler_count < MAX_FILLERS; --shift) {
        for (;;) {
            gpuprim_buffer_t filler = NULL;
            if (filler_count == MAX_FILLERS) break;
            status = gpuprim_buffer_create(context, GPUPRIM_DTYPE_U32, (uint64_t)1 << shift, &filler);
            if (status != GPUPRIM_SUCCESS) {
                REL_CHECK(status == GPUPRIM_ERROR_OUT_OF_MEMORY, "filling: %d: %s", (int)status,
                          gpuprim_context_last_error(context));
                break;
            }
            fillers[filler_count++] = filler;
            filled += ((uint64_t)4 << shift);
        }
    }
    printf("  filled %.1f GiB of device memory with %d buffers\n",
           (double)filled / (1 << 30), filler_count);
    status = gpuprim_sort(context, keys, NULL, keys, NULL, GPUPRIM_ORDER_ASCENDING);
    if (status == GPUPRIM_SUCCESS) status = gpuprim_context_synchronize(context);
    printf("  sort with device memory full: %d (%s): %s\n", (int)status,
           gpuprim_get_error_string(status), gpuprim_context_last_error(context));
    REL_CHECK(status == GPUPRIM_ERROR_OUT_OF_MEMORY,
              "sort with no memory for its workspace -> %d, expected OUT_OF_MEMORY", (int)status);
    /* A failed call leaves its buffers unchanged. */
    REL_OK(context, gpuprim_buffer_download(context, keys, 0, probe, 4));
    REL_CHECK(probe[0] == (uint32_t)keys_count && probe[3] == (uint32_t)keys_count - 3,
              "the failed sort changed its keys");
    /* Top-k with memory full: it may find the memory its workspace needs
       (candidates past the first digit) or not; OUT_OF_MEMORY changes nothing. */
    status = gpuprim_topk(context, keys, top_k, GPUPRIM_ORDER_ASCENDING, top_keys, top_index);
    if (status == GPUPRIM_SUCCESS) status = gpuprim_context_synchronize(context);
    printf("  top-k (k = 2^20) with device memory full: %d (%s): %s\n", (int)status,
           gpuprim_get_error_string(status), gpuprim_context_last_error(context));
    REL_CHECK(status == GPUPRIM_SUCCESS || status == GPUPRIM_ERROR_OUT_OF_MEMORY,
              "top-k with device memory full -> %d, expected SUCCESS or OUT_OF_MEMORY", (int)status);
    REL_OK(context, gpuprim_buffer_download(context, keys, 0, probe, 4));
    REL_CHECK(probe[0] == (uint32_t)keys_count && probe[3] == (uint32_t)keys_count - 3, "top-k changed its keys");
    if (status != GPUPRIM_SUCCESS) {
        REL_OK(context, gpuprim_buffer_download(context, top_keys, 0, probe, 4));
        REL_CHECK(probe[0] == 0xDEADBEEFu && probe[3] == 0xDEADBEEFu, "the failed top-k wrote keys_out");
        REL_OK(context, gpuprim_buffer_download(context, top_index, 0, probe, 4));
        REL_CHECK(probe[0] == 0xDEADBEEFu && probe[3] == 0xDEADBEEFu, "the failed top-k wrote indices");
    }
    for (i = 0; i < filler_count; ++i) REL_OK(context, gpuprim_buffer_destroy(context, fillers[i]));
    /* With memory back the top-k works: the 2^20 smallest keys (1, 2, ...) at
       positions keys_count - 1, keys_count - 2, ... */
    REL_OK(context, gpuprim_topk(context, keys, top_k, GPUPRIM_ORDER_ASCENDING, top_keys, top_index));
    REL_OK(context, gpuprim_buffer_download(context, top_keys, 0, host, top_k));
    for (i = 0; i < (int)top_k; ++i)
        REL_CHECK(host[i] == (uint32_t)i + 1, "top-k keys[%d] = %u after memory came back", i, host[i]);
    REL_OK(context, gpuprim_buffer_download(context, top_index, 0, host, top_k));
    for (i = 0; i < (int)top_k; ++i)
        REL_CHECK(host[i] == (uint32_t)(keys_count - 1 - (uint64_t)i), "top-k index[%d] = %u after memory came back",
                  i, host[i]);
    REL_OK(context, gpuprim_buffer_destroy(context, top_keys));
    REL_OK(context, gpuprim_buffer_destroy(context, top_index));
    REL_OK(context, gpuprim_sort(context, keys, NULL, keys, NULL, GPUPRIM_ORDER_ASCENDING));
    REL_OK(context, gpuprim_buffer_download(context, keys, 0, host, keys_count));
    for (i = 0; i < (int)keys_count; ++i)
        REL_CHECK(host[i] == (uint32_t)i + 1, "sorted[%d] = %u after memory came back", i, host[i]);
    REL_OK(context, gpuprim_buffer_destroy(context, keys));
    free(host);
    expect_usable(context, "workspace exhaustion");
}

/* Resident memory of the process in KiB (Linux), or -1. */
static long resident_kib(void) {
    long pages_total = 0, pages_resident = -1;
    FILE *statm = fopen("/proc/self/statm", "r");
    if (!statm) return -1;
    if (fscanf(statm, "%ld %ld", &pages_total, &pages_resident) != 2) pages_resident = -1;
    fclose(statm);
    return pages_resident < 0 ? -1 : pages_resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static void make_use_destroy(int cycles) {
    static const int32_t zeros[200000];
    for (int cycle = 0; cycle < cycles; ++cycle) {
        gpuprim_context_options_t options;
        gpuprim_context_t context = NULL;
        gpuprim_buffer_t buffer = NULL;
        int32_t total = -1;
        char message[256];
        gpuprim_context_options_init(&options);
        options.backend = GPUPRIM_BACKEND_CPU;
        options.cpu_threads = 2;
        REL_CHECK(gpuprim_context_create(&options, &context, message, sizeof message) == GPUPRIM_SUCCESS,
                  "context_create: %s", message);
        REL_OK(context, gpuprim_buffer_create(context, GPUPRIM_DTYPE_I32, 200000, &buffer));
        REL_OK(context, gpuprim_buffer_upload(context, buffer, 0, zeros, 200000));
        REL_OK(context, gpuprim_reduce(context, GPUPRIM_OP_SUM, buffer, &total));
        REL_CHECK(total == 0, "sum of zeros: %d", (int)total);
        REL_OK(context, gpuprim_context_destroy(context));
    }
}

/* Sanitizers keep freed memory in quarantine: resident memory grows there
 * whatever the library does. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#  define REL_UNDER_SANITIZER 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#    define REL_UNDER_SANITIZER 1
#  endif
#endif

static void test_context_cycles(void) {
    long before, after;
#if defined(REL_UNDER_SANITIZER)
    printf("context cycles: skipped under a sanitizer\n");
    return;
#endif
    make_use_destroy(300);  /* the engine's and allocator's pools settle */
    before = resident_kib();
    if (before < 0) {
        printf("context cycles: skipped (no /proc/self/statm)\n");
        return;
    }
    make_use_destroy(3000);
    after = resident_kib();
    /* Before arenas were reused: about 21 MiB more after 3000 cycles. */
    REL_CHECK(after - before < 4096, "3000 contexts made, used and destroyed: resident memory %ld -> %ld KiB",
              before, after);
    printf("context cycles: resident memory %ld -> %ld KiB over 3000 contexts\n", before, after);
}

/* rel_exhaustion [workspace]: with "workspace", only the CUDA workspace part. */
int main(int argc, char **argv) {
    gpuprim_context_t context = rel_context(GPUPRIM_BACKEND_AUTO);
    gpuprim_backend_t backend = GPUPRIM_BACKEND_AUTO;
    int only_workspace = argc > 1 && strcmp(argv[1], "workspace") == 0;
    REL_OK(context, gpuprim_context_get_backend(context, &backend));
    printf("exhaustion tests on the %s backend\n", rel_backend_name(context));
    if (!only_workspace) {
        test_out_of_memory(context);
        test_overflow(context);
        test_context_cycles();
    }
    if (backend == GPUPRIM_BACKEND_CUDA) test_workspace_exhaustion(context);
    REL_OK(context, gpuprim_context_destroy(context));
    printf("exhaustion: all checks passed\n");
    return 0;
}
