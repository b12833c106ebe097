/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Handles and the contract rules of gpuprim.h's conventions, on the backend
 * the default context picks:
 * - a destroyed buffer stays INVALID_HANDLE forever, however many buffers
 *   come and go after it, and using it never touches a newer buffer;
 * - any value that is not a live context (small integers, pointers to stack,
 *   heap and freed memory, buffer handles, destroyed contexts, random bits)
 *   is INVALID_HANDLE on every entry point and is never read through (the
 *   sanitizer build runs this test under AddressSanitizer);
 * - a buffer value that is not a live buffer is INVALID_HANDLE; only a live
 *   buffer of another live context is CONTEXT_MISMATCH;
 * - options->struct_size: larger sizes with zero tails are accepted, any
 *   non-zero byte past the known fields is refused; device_ordinal < 0 is
 *   refused on every backend; GPUPRIM_BACKEND's accepted spellings;
 * - aliasing: two handles over the same memory are "in place"; partial
 *   overlap is refused; *_to_buffer checks only element 0 of the result.
 */
#include "registry/registry_main.h"

#include <stddef.h>
#include <stdint.h>

static gpuprim_context_t ctx;

/* Every entry point that takes a context, called with `bad`: each must say
 * INVALID_HANDLE and leave its outputs alone. `buffer` is a live buffer of
 * ctx (the bad context must not accept it either). */
static void expect_not_a_context(gpuprim_context_t bad, gpuprim_buffer_t buffer, const char *what) {
    gpuprim_buffer_t out = (gpuprim_buffer_t)(uintptr_t)0x77;
    gpuprim_backend_t backend = (gpuprim_backend_t)42;
    gpuprim_dtype_t dtype = (gpuprim_dtype_t)42;
    int32_t ordinal = 42;
    uint64_t count = 42, bytes = 42, result = 42;
    void *data = (void *)&count;
    char name[16] = "untouched";
    uint32_t host[4] = {1, 2, 3, 4};
    const gpuprim_status_t H = GPUPRIM_ERROR_INVALID_HANDLE;
    tc_where("not a context: %s", what);

    CHECK_STATUS(gpuprim_context_get_backend(bad, &backend), H);
    CHECK_STATUS(gpuprim_context_get_device(bad, &ordinal, name, sizeof name), H);
    CHECK_STATUS(gpuprim_context_synchronize(bad), H);
    CHECK_STATUS(gpuprim_context_get_workspace_size(bad, &bytes), H);
    CHECK_STATUS(gpuprim_context_release_workspace(bad), H);
    CHECK_STATUS(gpuprim_context_reserve_workspace(bad, 1u << 20, 1), H);
    CHECK_STATUS(gpuprim_context_get_stream(bad, &data), H);
    CHECK(data == (void *)&count);
    /* the deferred offsets check (experimental): the handle comes before the mode */
    CHECK_STATUS(gpuprim_context_set_offsets_check(bad, GPUPRIM_OFFSETS_CHECK_DEFERRED), H);
    CHECK_STATUS(gpuprim_context_set_offsets_check(bad, GPUPRIM_OFFSETS_CHECK_WAIT), H);
    CHECK_STATUS(gpuprim_context_set_offsets_check(bad, (gpuprim_offsets_check_t)7), H);
    CHECK_STATUS(gpuprim_context_check_deferred(bad), H);
    CHECK_STATUS(gpuprim_context_begin_workspace_query(bad), H);
    {
        gpuprim_workspace_sizes_t sizes;
        memset(&sizes, 0x5A, sizeof sizes);
        sizes.struct_size = sizeof sizes;
        CHECK_STATUS(gpuprim_context_end_workspace_query(bad, &sizes), H);
        CHECK(sizes.main_bytes == 0x5A5A5A5A5A5A5A5Aull && sizes.bounded == 0x5A5A5A5A);
        CHECK_STATUS(gpuprim_context_reserve_workspace_sizes(bad, &sizes, 1), H);
    }
    CHECK_STATUS(gpuprim_buffer_create(bad, GPUPRIM_DTYPE_U32, 4, &out), H);
    CHECK_STATUS(gpuprim_buffer_wrap(bad, GPUPRIM_DTYPE_U32, host, 4, &out), H);
    CHECK_STATUS(gpuprim_buffer_destroy(bad, buffer), H);
    CHECK_STATUS(gpuprim_buffer_get_info(bad, buffer, &dtype, &count, &data), H);
    CHECK_STATUS(gpuprim_buffer_upload(bad, buffer, 0, host, 4), H);
    CHECK_STATUS(gpuprim_buffer_download(bad, buffer, 0, host, 4), H);
    CHECK_STATUS(gpuprim_reduce(bad, GPUPRIM_OP_SUM, buffer, &result), H);
    CHECK_STATUS(gpuprim_reduce_to_buffer(bad, GPUPRIM_OP_SUM, buffer, buffer), H);
    CHECK_STATUS(gpuprim_dot(bad, buffer, buffer, &result), H);
    CHECK_STATUS(gpuprim_dot_to_buffer(bad, buffer, buffer, buffer), H);
    CHECK_STATUS(gpuprim_scan(bad, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, buffer, buffer), H);
    CHECK_STATUS(gpuprim_sort(bad, buffer, NULL, buffer, NULL, GPUPRIM_ORDER_ASCENDING), H);
    {
        gpuprim_sort_options_t sort_options;
        gpuprim_sort_options_init(&sort_options);
        CHECK_STATUS(gpuprim_sort_with_options(bad, buffer, NULL, buffer, NULL, &sort_options), H);
        CHECK_STATUS(gpuprim_sort_with_options(bad, buffer, NULL, buffer, NULL, NULL), H);
        /* the handle is checked whatever the options: bad ones do not get there first */
        sort_options.order = 7;
        sort_options.struct_size = 1;
        CHECK_STATUS(gpuprim_sort_with_options(bad, buffer, buffer, buffer, buffer, &sort_options), H);
    }
    {
        gpuprim_segments_t segments;
        gpuprim_segments_init_rows(&segments, 1, 4);
        CHECK_STATUS(gpuprim_argsort(bad, buffer, NULL, buffer, NULL), H);
        CHECK_STATUS(gpuprim_segmented_sort(bad, &segments, buffer, NULL, buffer, NULL, NULL), H);
        CHECK_STATUS(gpuprim_segmented_argsort(bad, &segments, buffer, NULL, buffer, NULL), H);
        CHECK_STATUS(gpuprim_segmented_reduce(bad, GPUPRIM_OP_SUM, &segments, buffer, buffer), H);
        CHECK_STATUS(gpuprim_segmented_scan(bad, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, &segments, buffer, buffer), H);
        CHECK_STATUS(gpuprim_topk(bad, buffer, 1, GPUPRIM_ORDER_DESCENDING, NULL, buffer), H);
        CHECK_STATUS(gpuprim_segmented_topk(bad, &segments, buffer, 1, GPUPRIM_ORDER_ASCENDING, buffer, NULL), H);
        /* the handle is checked before the segments are read, and before k and the order */
        CHECK_STATUS(gpuprim_segmented_reduce(bad, GPUPRIM_OP_SUM, NULL, buffer, buffer), H);
        CHECK_STATUS(gpuprim_segmented_topk(bad, NULL, buffer, 1, GPUPRIM_ORDER_ASCENDING, buffer, NULL), H);
        CHECK_STATUS(gpuprim_topk(bad, buffer, UINT64_MAX, (gpuprim_order_t)9, NULL, NULL), H);
    }
    CHECK_STATUS(gpuprim_context_destroy(bad), H);
    CHECK(strcmp(gpuprim_context_last_error(bad), "invalid context handle") == 0);
    CHECK(out == (gpuprim_buffer_t)(uintptr_t)0x77 && backend == (gpuprim_backend_t)42);
    CHECK(dtype == (gpuprim_dtype_t)42 && ordinal == 42 && count == 42 && bytes == 42);
    CHECK(result == 42 && data == (void *)&count && strcmp(name, "untouched") == 0);
    CHECK(host[0] == 1 && host[3] == 4);
}

/* Every registry case's small calls (test/registry/) with a value that is
 * not a context: INVALID_HANDLE, the outputs untouched; each call first
 * succeeds on the live context (with the case's reference result), so the
 * handle is what fails it. */
typedef struct {
    gpuprim_context_t bad[16];
    const char *what[16];
    int count;
    long calls;
} handles_run_t;

static void handles_visit(const tr_call_t *call, void *user) {
    handles_run_t *run = (handles_run_t *)user;
    tr_result_t r;
    char why[256] = "";
    int i;
    tc_where("%s", call->label);
    run->calls++;
    tr_run(call, ctx, &r);
    CHECKF(r.status == GPUPRIM_SUCCESS, "on the live context: %d (%s)", (int)r.status, r.message);
    if (r.status == GPUPRIM_SUCCESS) CHECKF(tr_check(call, &r, why, sizeof why), "against the reference: %s", why);
    tr_result_free(&r);
    for (i = 0; i < run->count; ++i) {
        tc_where("%s, context: %s", call->label, run->what[i]);
        tr_run_with(call, ctx, run->bad[i], &r);
        CHECKF(r.status == GPUPRIM_ERROR_INVALID_HANDLE, "returned %d (%s), expected INVALID_HANDLE", (int)r.status,
               gpuprim_get_error_string(r.status));
        CHECKF(tr_unchanged(call, &r, why, sizeof why), "%s", why);
        CHECK(strcmp(gpuprim_context_last_error(run->bad[i]), "invalid context handle") == 0);
        tr_result_free(&r);
    }
}

static void test_registry_garbage_contexts(int argc, char **argv) {
    int32_t small_int = 7;
    int32_t *freed = (int32_t *)malloc(sizeof *freed);
    volatile uintptr_t freed_bits = (uintptr_t)(void *)freed; /* only the value is passed on */
    gpuprim_context_t dead = NULL;
    gpuprim_buffer_t buffer = tc_buffer(ctx, GPUPRIM_DTYPE_U32, 4);
    handles_run_t run;
    int i;
    free(freed);
    memset(&run, 0, sizeof run);
    REQUIRE_OK(gpuprim_context_create(NULL, &dead, NULL, 0));
    REQUIRE_OK(gpuprim_context_destroy(dead));
    run.bad[run.count] = (gpuprim_context_t)(uintptr_t)1, run.what[run.count++] = "(gpuprim_context_t)1";
    run.bad[run.count] = (gpuprim_context_t)UINTPTR_MAX, run.what[run.count++] = "all ones";
    run.bad[run.count] = (gpuprim_context_t)(void *)&small_int, run.what[run.count++] = "a 4-byte stack int";
    run.bad[run.count] = (gpuprim_context_t)freed_bits, run.what[run.count++] = "freed heap memory";
    run.bad[run.count] = (gpuprim_context_t)(void *)buffer, run.what[run.count++] = "a buffer handle";
    run.bad[run.count] = dead, run.what[run.count++] = "a destroyed context";
    for (i = 0; i < 4; ++i) {
        uintptr_t bits = (uintptr_t)tc_rand();
        if (i % 2) bits = (bits & ~(uintptr_t)0xFFFF) | ((uintptr_t)(void *)ctx & 0xFFFF);
        if ((gpuprim_context_t)bits == ctx) continue;
        run.bad[run.count] = (gpuprim_context_t)bits, run.what[run.count++] = "random bits";
    }
    tr_for_named_cases(argc, argv, TR_PLAN_SMALL, handles_visit, &run, &run.calls);
    printf("test_handles: %ld registry calls, each with %d values that are not contexts\n", run.calls, run.count);
    REQUIRE_OK(gpuprim_buffer_destroy(ctx, buffer));
}

static void test_garbage_contexts(void) {
    int32_t small_int = 7; /* 4 bytes: reading 8 through it would overflow */
    int32_t *freed = (int32_t *)malloc(sizeof *freed);
    /* kept as bits (through a volatile, so the compiler does not track the
     * pointer): the memory is freed below, and only the value is passed on */
    volatile uintptr_t freed_bits = (uintptr_t)(void *)freed;
    gpuprim_context_t dead = NULL;
    gpuprim_buffer_t buffer = tc_buffer(ctx, GPUPRIM_DTYPE_U32, 4);
    uint32_t values[4] = {5, 6, 7, 8}, check[4];
    int i;
    REQUIRE_OK(gpuprim_buffer_upload(ctx, buffer, 0, values, 4));
    free(freed);

    expect_not_a_context((gpuprim_context_t)(uintptr_t)1, buffer, "(gpuprim_context_t)1");
    expect_not_a_context((gpuprim_context_t)(uintptr_t)8, buffer, "(gpuprim_context_t)8");
    expect_not_a_context((gpuprim_context_t)UINTPTR_MAX, buffer, "all ones");
    expect_not_a_context((gpuprim_context_t)(void *)&small_int, buffer, "a 4-byte stack int");
    expect_not_a_context((gpuprim_context_t)freed_bits, buffer, "freed heap memory");
    expect_not_a_context((gpuprim_context_t)(void *)buffer, buffer, "a buffer handle");
    expect_not_a_context((gpuprim_context_t)(void *)&values, buffer, "host data");
    for (i = 0; i < 64; ++i) {
        uintptr_t bits = (uintptr_t)tc_rand();
        if (i % 2) bits = (bits & ~(uintptr_t)0xFFFF) | ((uintptr_t)(void *)ctx & 0xFFFF);
        if (i % 4 == 3) bits ^= (uintptr_t)1 << (tc_rand() % (8 * sizeof bits));
        if ((gpuprim_context_t)bits == ctx) continue;
        expect_not_a_context((gpuprim_context_t)bits, buffer, "random bits");
    }
    /* a context that was destroyed, after many others came and went */
    REQUIRE_OK(gpuprim_context_create(NULL, &dead, NULL, 0));
    REQUIRE_OK(gpuprim_context_destroy(dead));
    for (i = 0; i < 200; ++i) {
        gpuprim_context_t churn = NULL;
        REQUIRE_OK(gpuprim_context_create(NULL, &churn, NULL, 0));
        CHECK(churn != dead);
        REQUIRE_OK(gpuprim_context_destroy(churn));
    }
    expect_not_a_context(dead, buffer, "a destroyed context");
    /* the live context saw none of it */
    REQUIRE_OK(gpuprim_buffer_download(ctx, buffer, 0, check, 4));
    CHECK(memcmp(check, values, sizeof values) == 0);
    REQUIRE_OK(gpuprim_buffer_destroy(ctx, buffer));
}

static void test_stale_buffers(void) {
    enum { kChurn = 10000 };
    uint32_t mine[8] = {10, 11, 12, 13, 14, 15, 16, 17}, got[8], zeros[8] = {0};
    gpuprim_buffer_t stale = NULL, newest = NULL;
    gpuprim_dtype_t dtype = (gpuprim_dtype_t)42;
    int i;
    tc_where("stale buffer handles after %d create/destroy cycles", kChurn);
    REQUIRE_OK(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U32, 8, &stale));
    REQUIRE_OK(gpuprim_buffer_destroy(ctx, stale));
    for (i = 0; i < kChurn; ++i) {
        gpuprim_buffer_t b = NULL;
        REQUIRE_OK(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U32, 8, &b));
        CHECK(b != stale);
        REQUIRE_OK(gpuprim_buffer_destroy(ctx, b));
        /* the stale handle never comes back to life */
        if (i % 1000 == 999)
            CHECK_STATUS(gpuprim_buffer_get_info(ctx, stale, &dtype, NULL, NULL),
                         GPUPRIM_ERROR_INVALID_HANDLE);
    }
    newest = tc_buffer_from(ctx, GPUPRIM_DTYPE_U32, mine, 8);
    CHECK(newest != stale);
    CHECK_STATUS(gpuprim_buffer_get_info(ctx, stale, &dtype, NULL, NULL), GPUPRIM_ERROR_INVALID_HANDLE);
    CHECK_MESSAGE(ctx, "destroyed");
    CHECK(dtype == (gpuprim_dtype_t)42);
    CHECK_STATUS(gpuprim_buffer_upload(ctx, stale, 0, zeros, 8), GPUPRIM_ERROR_INVALID_HANDLE);
    CHECK_STATUS(gpuprim_sort(ctx, stale, NULL, stale, NULL, GPUPRIM_ORDER_DESCENDING),
                 GPUPRIM_ERROR_INVALID_HANDLE);
    CHECK_STATUS(gpuprim_sort_with_options(ctx, stale, NULL, stale, NULL, NULL), GPUPRIM_ERROR_INVALID_HANDLE);
    CHECK_STATUS(gpuprim_sort_with_options(ctx, newest, stale, newest, stale, NULL), GPUPRIM_ERROR_INVALID_HANDLE);
    CHECK_STATUS(gpuprim_topk(ctx, stale, 1, GPUPRIM_ORDER_ASCENDING, newest, NULL), GPUPRIM_ERROR_INVALID_HANDLE);
    CHECK_STATUS(gpuprim_topk(ctx, newest, 8, GPUPRIM_ORDER_ASCENDING, stale, NULL), GPUPRIM_ERROR_INVALID_HANDLE);
    CHECK_STATUS(gpuprim_topk(ctx, newest, 8, GPUPRIM_ORDER_ASCENDING, NULL, stale), GPUPRIM_ERROR_INVALID_HANDLE);
    {
        gpuprim_segments_t rows, csr;
        gpuprim_segments_init_rows(&rows, 1, 8);
        gpuprim_segments_init_offsets(&csr, stale);
        CHECK_STATUS(gpuprim_segmented_topk(ctx, &rows, newest, 8, GPUPRIM_ORDER_DESCENDING, NULL, stale),
                     GPUPRIM_ERROR_INVALID_HANDLE);
        CHECK_STATUS(gpuprim_segmented_topk(ctx, &csr, newest, 1, GPUPRIM_ORDER_DESCENDING, newest, NULL),
                     GPUPRIM_ERROR_INVALID_HANDLE);
    }
    CHECK_STATUS(gpuprim_buffer_destroy(ctx, stale), GPUPRIM_ERROR_INVALID_HANDLE);
    CHECK_STATUS(gpuprim_buffer_destroy(ctx, stale), GPUPRIM_ERROR_INVALID_HANDLE);
    /* none of that reached the newest buffer */
    REQUIRE_OK(gpuprim_buffer_download(ctx, newest, 0, got, 8));
    CHECK(memcmp(got, mine, sizeof mine) == 0);
    /* a double destroy fails the second time and frees nothing else */
    {
        gpuprim_buffer_t twice = tc_buffer(ctx, GPUPRIM_DTYPE_U32, 8);
        REQUIRE_OK(gpuprim_buffer_destroy(ctx, twice));
        CHECK_STATUS(gpuprim_buffer_destroy(ctx, twice), GPUPRIM_ERROR_INVALID_HANDLE);
        REQUIRE_OK(gpuprim_buffer_download(ctx, newest, 0, got, 8));
        CHECK(memcmp(got, mine, sizeof mine) == 0);
    }
    REQUIRE_OK(gpuprim_buffer_destroy(ctx, newest));
}

static void test_garbage_and_foreign_buffers(void) {
    gpuprim_context_t other = NULL, gone = NULL;
    gpuprim_buffer_t theirs = NULL, orphan = NULL;
    gpuprim_buffer_t mine = tc_buffer(ctx, GPUPRIM_DTYPE_F32, 4);
    int32_t small_int = 3;
    uint64_t count = 42;
    int i;
    tc_where("buffer values that are not buffers of this context");
    REQUIRE_OK(gpuprim_context_create(NULL, &other, NULL, 0));
    REQUIRE_OK(gpuprim_buffer_create(other, GPUPRIM_DTYPE_F32, 4, &theirs));
    REQUIRE_OK(gpuprim_context_create(NULL, &gone, NULL, 0));
    REQUIRE_OK(gpuprim_buffer_create(gone, GPUPRIM_DTYPE_F32, 4, &orphan));
    REQUIRE_OK(gpuprim_context_destroy(gone)); /* orphan dies with its context */

    CHECK_STATUS(gpuprim_buffer_get_info(ctx, theirs, NULL, &count, NULL), GPUPRIM_ERROR_CONTEXT_MISMATCH);
    CHECK_MESSAGE(ctx, "another context");
    CHECK_STATUS(gpuprim_buffer_get_info(ctx, orphan, NULL, &count, NULL), GPUPRIM_ERROR_INVALID_HANDLE);
    CHECK_STATUS(gpuprim_buffer_get_info(other, orphan, NULL, &count, NULL), GPUPRIM_ERROR_INVALID_HANDLE);
    CHECK_STATUS(gpuprim_buffer_get_info(ctx, (gpuprim_buffer_t)(uintptr_t)1, NULL, &count, NULL),
                 GPUPRIM_ERROR_INVALID_HANDLE);
    CHECK_MESSAGE(ctx, "not a buffer handle");
    CHECK_STATUS(gpuprim_buffer_get_info(ctx, (gpuprim_buffer_t)(void *)&small_int, NULL, &count, NULL),
                 GPUPRIM_ERROR_INVALID_HANDLE);
    CHECK_STATUS(gpuprim_buffer_get_info(ctx, (gpuprim_buffer_t)(void *)ctx, NULL, &count, NULL),
                 GPUPRIM_ERROR_INVALID_HANDLE);
    CHECK_STATUS(gpuprim_buffer_destroy(ctx, (gpuprim_buffer_t)(void *)&small_int),
                 GPUPRIM_ERROR_INVALID_HANDLE);
    CHECK_STATUS(gpuprim_sort_with_options(ctx, mine, NULL, theirs, NULL, NULL), GPUPRIM_ERROR_CONTEXT_MISMATCH);
    CHECK_STATUS(gpuprim_sort_with_options(ctx, (gpuprim_buffer_t)(void *)&small_int, NULL, mine, NULL, NULL),
                 GPUPRIM_ERROR_INVALID_HANDLE);
    CHECK_STATUS(gpuprim_sort_with_options(ctx, mine, orphan, mine, orphan, NULL), GPUPRIM_ERROR_INVALID_HANDLE);
    CHECK_STATUS(gpuprim_topk(ctx, mine, 4, GPUPRIM_ORDER_ASCENDING, theirs, NULL), GPUPRIM_ERROR_CONTEXT_MISMATCH);
    CHECK_STATUS(gpuprim_topk(ctx, theirs, 4, GPUPRIM_ORDER_ASCENDING, mine, NULL), GPUPRIM_ERROR_CONTEXT_MISMATCH);
    CHECK_STATUS(gpuprim_topk(ctx, mine, 4, GPUPRIM_ORDER_ASCENDING, NULL, orphan), GPUPRIM_ERROR_INVALID_HANDLE);
    {
        gpuprim_segments_t csr;
        gpuprim_segments_init_offsets(&csr, theirs);
        CHECK_STATUS(gpuprim_segmented_topk(ctx, &csr, mine, 1, GPUPRIM_ORDER_ASCENDING, mine, NULL),
                     GPUPRIM_ERROR_CONTEXT_MISMATCH);
    }
    for (i = 0; i < 64; ++i) {
        uintptr_t bits = (uintptr_t)tc_rand();
        if (i % 2) bits = (bits & ~(uintptr_t)0xFFFF) | ((uintptr_t)(void *)mine & 0xFFFF);
        if (i % 4 == 3) bits = (uintptr_t)(void *)mine + 1 + tc_below(1000);
        if ((gpuprim_buffer_t)bits == mine || (gpuprim_buffer_t)bits == theirs || bits == 0) continue;
        CHECK_STATUS(gpuprim_buffer_get_info(ctx, (gpuprim_buffer_t)bits, NULL, &count, NULL),
                     GPUPRIM_ERROR_INVALID_HANDLE);
    }
    CHECK(count == 42);
    /* the other context is untouched and still owns its buffer */
    CHECK_OK(gpuprim_buffer_get_info(other, theirs, NULL, &count, NULL));
    CHECK(count == 4);
    REQUIRE_OK(gpuprim_context_destroy(other));
    /* once its context is gone, the foreign buffer is simply invalid */
    CHECK_STATUS(gpuprim_buffer_get_info(ctx, theirs, NULL, &count, NULL), GPUPRIM_ERROR_INVALID_HANDLE);
    REQUIRE_OK(gpuprim_buffer_destroy(ctx, mine));
}

/* options->struct_size and the other create-time rules. */
typedef struct {
    gpuprim_context_options_t options;
    unsigned char newer_fields[24];
} newer_options_t;

static gpuprim_status_t create_with(const void *options, gpuprim_context_t *out, char *message,
                                    size_t capacity) {
    gpuprim_status_t status =
        gpuprim_context_create((const gpuprim_context_options_t *)options, out, message, capacity);
    if (status == GPUPRIM_SUCCESS) CHECK_OK(gpuprim_context_destroy(*out));
    return status;
}

static void test_options_rules(void) {
    newer_options_t newer;
    gpuprim_context_options_t options;
    gpuprim_context_t made = (gpuprim_context_t)(uintptr_t)0x99;
    char message[512];
    tc_where("context options");

    /* a newer header's larger struct whose new fields keep their defaults (zero) */
    memset(&newer, 0, sizeof newer);
    gpuprim_context_options_init(&newer.options);
    newer.options.backend = GPUPRIM_BACKEND_CPU;
    newer.options.struct_size = sizeof newer;
    CHECK_STATUS(create_with(&newer, &made, message, sizeof message), GPUPRIM_SUCCESS);
    /* ...and one that sets a newer field: refused, the byte named */
    newer.newer_fields[5] = 1;
    made = (gpuprim_context_t)(uintptr_t)0x99;
    CHECK_STATUS(create_with(&newer, &made, message, sizeof message), GPUPRIM_ERROR_INVALID_ARGUMENT);
    CHECKF(tc_contains(message, "is not zero"), "message: %s", message);
    CHECK(made == NULL);
    /* 0.2.0's struct (it ends after cuda_stream): accepted, cpu_threads left at
       its default however the bytes after it are set */
    gpuprim_context_options_init(&options);
    options.backend = GPUPRIM_BACKEND_CPU;
    options.struct_size = offsetof(gpuprim_context_options_t, cpu_threads);
    CHECK(options.struct_size == 24);
    options.cpu_threads = -5;
    CHECK_STATUS(create_with(&options, &made, message, sizeof message), GPUPRIM_SUCCESS);
    /* 0.3.0's struct (it ends after cpu_threads): accepted, the allocator left
       at its default however the bytes after it are set */
    gpuprim_context_options_init(&options);
    options.backend = GPUPRIM_BACKEND_CPU;
    options.struct_size = offsetof(gpuprim_context_options_t, allocate);
    CHECK(options.struct_size == 32);
    options.allocate = (gpuprim_allocate_fn)(uintptr_t)0x10; /* past the struct: never called */
    options.reserved = 7; /* padding in 0.3.0's struct: not read */
    CHECK_STATUS(create_with(&options, &made, message, sizeof message), GPUPRIM_SUCCESS);
    options.allocate = NULL;
    /* this version's struct: reserved, where 0.3.0 had padding, must be 0 */
    options.struct_size = sizeof options;
    made = (gpuprim_context_t)(uintptr_t)0x99;
    CHECK_STATUS(create_with(&options, &made, message, sizeof message), GPUPRIM_ERROR_INVALID_ARGUMENT);
    CHECKF(tc_contains(message, "options->reserved = 7"), "message: %s", message);
    CHECK(made == NULL);
    options.reserved = 0;
    options.struct_size = 28;
    CHECK_STATUS(create_with(&options, &made, message, sizeof message), GPUPRIM_ERROR_INVALID_ARGUMENT);
    CHECKF(tc_contains(message, "24 or 32"), "message: %s", message);
    /* other sizes smaller than this version's, or absurdly large */
    options.cpu_threads = 0;
    options.struct_size = sizeof options - 4;
    CHECK_STATUS(create_with(&options, &made, message, sizeof message), GPUPRIM_ERROR_INVALID_ARGUMENT);
    CHECKF(tc_contains(message, "struct_size"), "message: %s", message);
    options.struct_size = 16;
    CHECK_STATUS(create_with(&options, &made, message, sizeof message), GPUPRIM_ERROR_INVALID_ARGUMENT);
    options.struct_size = 23;
    CHECK_STATUS(create_with(&options, &made, message, sizeof message), GPUPRIM_ERROR_INVALID_ARGUMENT);
    options.struct_size = 4097;
    CHECK_STATUS(create_with(&options, &made, message, sizeof message), GPUPRIM_ERROR_INVALID_ARGUMENT);
    options.struct_size = UINT64_MAX;
    CHECK_STATUS(create_with(&options, &made, message, sizeof message), GPUPRIM_ERROR_INVALID_ARGUMENT);

    /* a negative device ordinal is refused on the CPU backend too */
    gpuprim_context_options_init(&options);
    options.backend = GPUPRIM_BACKEND_CPU;
    options.device_ordinal = -1;
    CHECK_STATUS(create_with(&options, &made, message, sizeof message), GPUPRIM_ERROR_INVALID_ARGUMENT);
    CHECKF(tc_contains(message, "device_ordinal"), "message: %s", message);
    options.device_ordinal = 3; /* not used by the CPU backend */
    CHECK_STATUS(create_with(&options, &made, message, sizeof message), GPUPRIM_SUCCESS);

    /* cpu_threads: 0 (every core) and any positive count are fine, on every
       backend; negative is refused on every backend */
    gpuprim_context_options_init(&options);
    options.backend = GPUPRIM_BACKEND_CPU;
    options.cpu_threads = 3;
    CHECK_STATUS(create_with(&options, &made, message, sizeof message), GPUPRIM_SUCCESS);
    options.cpu_threads = -1;
    made = (gpuprim_context_t)(uintptr_t)0x99;
    CHECK_STATUS(create_with(&options, &made, message, sizeof message), GPUPRIM_ERROR_INVALID_ARGUMENT);
    CHECKF(tc_contains(message, "cpu_threads"), "message: %s", message);
    CHECK(made == NULL);
    options.backend = GPUPRIM_BACKEND_AUTO;
    options.cpu_threads = INT32_MIN;
    CHECK_STATUS(create_with(&options, &made, message, sizeof message), GPUPRIM_ERROR_INVALID_ARGUMENT);
}

static void test_backend_environment(void) {
    const char *saved = getenv("GPUPRIM_BACKEND");
    char *copy = saved ? strcpy((char *)tc_xmalloc(strlen(saved) + 1), saved) : NULL;
    gpuprim_context_t made = NULL;
    gpuprim_backend_t backend = GPUPRIM_BACKEND_AUTO;
    char message[512];
    static const char *const accepted_cpu[] = {"cpu", "CPU", "Cpu"};
    static const char *const refused[] = {"gpu", "cpu ", "1", "cudaa"};
    size_t i;
    tc_where("GPUPRIM_BACKEND");
    for (i = 0; i < sizeof accepted_cpu / sizeof accepted_cpu[0]; ++i) {
        tc_setenv("GPUPRIM_BACKEND", accepted_cpu[i]);
        CHECK_STATUS(gpuprim_context_create(NULL, &made, message, sizeof message), GPUPRIM_SUCCESS);
        CHECK_OK(gpuprim_context_get_backend(made, &backend));
        CHECKF(backend == GPUPRIM_BACKEND_CPU, "GPUPRIM_BACKEND=%s gave backend %d", accepted_cpu[i],
               (int)backend);
        CHECK_OK(gpuprim_context_destroy(made));
    }
    /* "" and auto are AUTO: whatever the machine has, the same as unset */
    tc_setenv("GPUPRIM_BACKEND", NULL);
    REQUIRE_OK(gpuprim_context_create(NULL, &made, NULL, 0));
    REQUIRE_OK(gpuprim_context_get_backend(made, &backend));
    CHECK_OK(gpuprim_context_destroy(made));
    {
        static const char *const automatic[] = {"", "auto", "AUTO"};
        for (i = 0; i < 3; ++i) {
            gpuprim_backend_t got = GPUPRIM_BACKEND_AUTO;
            tc_setenv("GPUPRIM_BACKEND", automatic[i]);
            CHECK_STATUS(gpuprim_context_create(NULL, &made, message, sizeof message), GPUPRIM_SUCCESS);
            CHECK_OK(gpuprim_context_get_backend(made, &got));
            CHECKF(got == backend, "GPUPRIM_BACKEND='%s' gave %d, unset gives %d", automatic[i],
                   (int)got, (int)backend);
            CHECK_OK(gpuprim_context_destroy(made));
        }
    }
    for (i = 0; i < sizeof refused / sizeof refused[0]; ++i) {
        tc_setenv("GPUPRIM_BACKEND", refused[i]);
        made = (gpuprim_context_t)(uintptr_t)0x99;
        CHECK_STATUS(gpuprim_context_create(NULL, &made, message, sizeof message),
                     GPUPRIM_ERROR_INVALID_ARGUMENT);
        CHECKF(tc_contains(message, "GPUPRIM_BACKEND"), "message: %s", message);
        CHECK(made == NULL);
    }
    /* an explicit backend option does not read the variable */
    {
        gpuprim_context_options_t options;
        gpuprim_context_options_init(&options);
        options.backend = GPUPRIM_BACKEND_CPU;
        CHECK_STATUS(gpuprim_context_create(&options, &made, message, sizeof message), GPUPRIM_SUCCESS);
        CHECK_OK(gpuprim_context_destroy(made));
    }
    tc_setenv("GPUPRIM_BACKEND", copy);
    free(copy);
}

/* Two handles over the same memory are in place; partial overlap is not. */
static void test_aliasing_rules(void) {
    enum { N = 64 };
    uint32_t host[N], got[N], expect[N];
    gpuprim_buffer_t base = NULL, twin_a = NULL, twin_b = NULL, shifted = NULL, result = NULL;
    uint32_t running = 0;
    int i;
    tc_where("aliasing: two handles over one memory");
    for (i = 0; i < N; ++i) host[i] = (uint32_t)(N - i) * 3u;
    base = tc_buffer_from(ctx, GPUPRIM_DTYPE_U32, host, N);
    twin_a = tc_view(ctx, base, GPUPRIM_DTYPE_U32, 0, N); /* a wrap of the owned buffer's data */
    twin_b = tc_view(ctx, base, GPUPRIM_DTYPE_U32, 0, N); /* and a second wrap of it */
    shifted = tc_view(ctx, base, GPUPRIM_DTYPE_U32, 1, N - 1);

    /* scan with output over the same memory as input: in place */
    CHECK_OK(gpuprim_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, twin_a, twin_b));
    for (i = 0; i < N; ++i) expect[i] = running += host[i];
    REQUIRE_OK(gpuprim_buffer_download(ctx, base, 0, got, N));
    CHECK_ARRAY_EQ(GPUPRIM_DTYPE_U32, got, expect, N, "scan through two wraps of one memory");
    CHECK_OK(gpuprim_scan(ctx, GPUPRIM_OP_MAX, GPUPRIM_SCAN_INCLUSIVE, base, twin_a));
    /* sort: owned buffer in, its wrap out */
    REQUIRE_OK(gpuprim_buffer_upload(ctx, base, 0, host, N));
    CHECK_OK(gpuprim_sort(ctx, base, NULL, twin_b, NULL, GPUPRIM_ORDER_ASCENDING));
    for (i = 0; i < N; ++i) expect[i] = (uint32_t)(i + 1) * 3u;
    REQUIRE_OK(gpuprim_buffer_download(ctx, twin_a, 0, got, N));
    CHECK_ARRAY_EQ(GPUPRIM_DTYPE_U32, got, expect, N, "sort from an owned buffer into its wrap");
    /* partial overlap: refused, nothing written */
    {
        gpuprim_buffer_t first = tc_view(ctx, base, GPUPRIM_DTYPE_U32, 0, N - 1);
        CHECK_STATUS(gpuprim_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, first, shifted),
                     GPUPRIM_ERROR_INVALID_ARGUMENT);
        CHECK_MESSAGE(ctx, "overlap");
        CHECK_STATUS(gpuprim_sort(ctx, shifted, NULL, first, NULL, GPUPRIM_ORDER_ASCENDING),
                     GPUPRIM_ERROR_INVALID_ARGUMENT);
        /* keys and values over the same memory: refused even though "same" */
        CHECK_STATUS(gpuprim_sort(ctx, twin_a, twin_b, twin_a, twin_b, GPUPRIM_ORDER_ASCENDING),
                     GPUPRIM_ERROR_INVALID_ARGUMENT);
        REQUIRE_OK(gpuprim_buffer_download(ctx, base, 0, got, N));
        CHECK_ARRAY_EQ(GPUPRIM_DTYPE_U32, got, expect, N, "refused calls left the memory alone");
        REQUIRE_OK(gpuprim_buffer_destroy(ctx, first));
    }
    /* *_to_buffer: only element 0 of result counts */
    tc_where("aliasing: element 0 of a *_to_buffer result");
    CHECK_STATUS(gpuprim_reduce_to_buffer(ctx, GPUPRIM_OP_SUM, twin_a, twin_b),
                 GPUPRIM_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(gpuprim_reduce_to_buffer(ctx, GPUPRIM_OP_SUM, twin_a, shifted),
                 GPUPRIM_ERROR_INVALID_ARGUMENT); /* element 0 of result is input[1] */
    CHECK_STATUS(gpuprim_dot_to_buffer(ctx, twin_a, twin_a, shifted), GPUPRIM_ERROR_INVALID_ARGUMENT);
    {
        /* result's element 0 just before the input, the rest over it: allowed */
        gpuprim_buffer_t input = tc_view(ctx, base, GPUPRIM_DTYPE_U32, 1, N - 1);
        uint32_t sum = 0, head = 0;
        REQUIRE_OK(gpuprim_buffer_download(ctx, base, 0, got, N));
        for (i = 1; i < N; ++i) sum += got[i];
        result = tc_view(ctx, base, GPUPRIM_DTYPE_U32, 0, N);
        CHECK_OK(gpuprim_reduce_to_buffer(ctx, GPUPRIM_OP_SUM, input, result));
        REQUIRE_OK(gpuprim_buffer_download(ctx, base, 0, &head, 1));
        CHECK(head == sum);
        REQUIRE_OK(gpuprim_buffer_destroy(ctx, input));
        REQUIRE_OK(gpuprim_buffer_destroy(ctx, result));
    }
    REQUIRE_OK(gpuprim_buffer_destroy(ctx, shifted));
    REQUIRE_OK(gpuprim_buffer_destroy(ctx, twin_b));
    REQUIRE_OK(gpuprim_buffer_destroy(ctx, twin_a));
    REQUIRE_OK(gpuprim_buffer_destroy(ctx, base));
}

/* test_handles [case ...]: with case names, only the registry's calls of
 * those cases with bad contexts. */
int main(int argc, char **argv) {
    ctx = tc_init("test_handles");
    test_registry_garbage_contexts(argc, argv);
    if (argc > 1) return tc_finish();
    test_stale_buffers();
    test_garbage_contexts();
    test_garbage_and_foreign_buffers();
    test_options_rules();
    test_backend_environment();
    test_aliasing_rules();
    return tc_finish();
}
