/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Every status the API can return from argument errors, with a last-error
 * message that names the problem, and the guarantee that a failed call
 * leaves every buffer and output argument unchanged (poison and compare).
 *
 * Not reachable from a test: GPUPRIM_ERROR_DEVICE (needs a failing CUDA
 * runtime) and GPUPRIM_ERROR_INTERNAL (a library bug).
 */
#include "test_common.h"

/* Under AddressSanitizer (GPUPRIM_SANITIZE=ON) the 1 PiB allocation below must
 * fail like malloc does, not abort the process. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

static gpuprim_context_t ctx;   /* the test's context */
static gpuprim_context_t other; /* a second context, for CONTEXT_MISMATCH */

/* A failed call on ctx: the status and a message containing needle. */
#define EXPECT_ERROR(call, status, needle) \
    do {                                   \
        CHECK_STATUS(call, status);        \
        CHECK_MESSAGE(ctx, needle);        \
    } while (0)

/* A buffer of n elements of d holding a known pattern, and its host copy. */
typedef struct known {
    gpuprim_buffer_t buffer;
    gpuprim_dtype_t dtype;
    uint64_t count;
    void *host;
} known_t;

static known_t make_known(gpuprim_context_t c, gpuprim_dtype_t d, uint64_t n) {
    known_t k;
    k.dtype = d;
    k.count = n;
    k.host = tc_xmalloc(n * tc_size(d));
    tc_fill(d, k.host, n, TC_RANDOM_BITS);
    k.buffer = tc_buffer_from(c, d, k.host, n);
    return k;
}

/* The buffer still holds what make_known (or the last reset) put there. */
#define CHECK_UNCHANGED(k) check_unchanged(__FILE__, __LINE__, k)
static void check_unchanged(const char *file, int line, known_t k) {
    void *now = tc_download(ctx, k.buffer, k.dtype, k.count);
    tc_check_array_eq(file, line, k.dtype, now, k.host, k.count, "buffer after a failed call");
    free(now);
}

static void free_known(gpuprim_context_t c, known_t k) {
    CHECK_OK(gpuprim_buffer_destroy(c, k.buffer));
    free(k.host);
}

static void test_context_creation_errors(void) {
    gpuprim_context_options_t o;
    gpuprim_context_t c;
    char message[256];
    tc_where("context creation errors");

    message[0] = 0;
    CHECK_STATUS(gpuprim_context_create(NULL, NULL, message, sizeof message), GPUPRIM_ERROR_NULL_POINTER);
    CHECKF(tc_contains(message, "context"), "message \"%s\"", message);

    gpuprim_context_options_init(&o);
    o.struct_size = 0;
    c = (gpuprim_context_t)&o;
    message[0] = 0;
    CHECK_STATUS(gpuprim_context_create(&o, &c, message, sizeof message), GPUPRIM_ERROR_INVALID_ARGUMENT);
    CHECK(c == NULL);
    CHECKF(tc_contains(message, "struct_size"), "message \"%s\"", message);
    o.struct_size = 4;
    CHECK_STATUS(gpuprim_context_create(&o, &c, NULL, 0), GPUPRIM_ERROR_INVALID_ARGUMENT);
    o.struct_size = sizeof o - 1;
    CHECK_STATUS(gpuprim_context_create(&o, &c, message, sizeof message), GPUPRIM_ERROR_INVALID_ARGUMENT);

    gpuprim_context_options_init(&o);
    o.backend = 3;
    c = (gpuprim_context_t)&o;
    message[0] = 0;
    CHECK_STATUS(gpuprim_context_create(&o, &c, message, sizeof message), GPUPRIM_ERROR_INVALID_ENUM);
    CHECK(c == NULL);
    CHECKF(tc_contains(message, "backend"), "message \"%s\"", message);
    o.backend = -1;
    CHECK_STATUS(gpuprim_context_create(&o, &c, NULL, 0), GPUPRIM_ERROR_INVALID_ENUM);

    gpuprim_context_options_init(&o);
    o.device_ordinal = -1;
    message[0] = 0;
    CHECK_STATUS(gpuprim_context_create(&o, &c, message, sizeof message), GPUPRIM_ERROR_INVALID_ARGUMENT);
    CHECKF(tc_contains(message, "device"), "message \"%s\"", message);
    o.backend = GPUPRIM_BACKEND_CUDA;
    CHECK_STATUS(gpuprim_context_create(&o, &c, NULL, 0), GPUPRIM_ERROR_INVALID_ARGUMENT);

    /* CUDA on a device that does not exist (or without CUDA at all) */
    gpuprim_context_options_init(&o);
    o.backend = GPUPRIM_BACKEND_CUDA;
    o.device_ordinal = 4096;
    c = (gpuprim_context_t)&o;
    message[0] = 0;
    CHECK_STATUS(gpuprim_context_create(&o, &c, message, sizeof message), GPUPRIM_ERROR_BACKEND_UNAVAILABLE);
    CHECK(c == NULL);
    CHECKF(message[0] != 0, "no message for BACKEND_UNAVAILABLE");
}

static void test_null_pointers(void) {
    known_t k = make_known(ctx, GPUPRIM_DTYPE_U32, 16);
    known_t out = make_known(ctx, GPUPRIM_DTYPE_U32, 16);
    known_t vals = make_known(ctx, GPUPRIM_DTYPE_F64, 16);
    gpuprim_buffer_t untouched = (gpuprim_buffer_t)&k;
    gpuprim_backend_t backend = (gpuprim_backend_t)77;
    uint32_t result = 0xC0FFEEu, host[16];
    tc_where("NULL pointers");

    /* NULL context: NULL_POINTER, outputs untouched */
    CHECK_STATUS(gpuprim_context_get_backend(NULL, &backend), GPUPRIM_ERROR_NULL_POINTER);
    CHECK(backend == (gpuprim_backend_t)77);
    CHECK_STATUS(gpuprim_buffer_create(NULL, GPUPRIM_DTYPE_U32, 4, &untouched), GPUPRIM_ERROR_NULL_POINTER);
    CHECK(untouched == (gpuprim_buffer_t)&k);
    CHECK_STATUS(gpuprim_reduce(NULL, GPUPRIM_OP_SUM, k.buffer, &result), GPUPRIM_ERROR_NULL_POINTER);
    CHECK(result == 0xC0FFEEu);
    CHECK_STATUS(gpuprim_context_synchronize(NULL), GPUPRIM_ERROR_NULL_POINTER);
    CHECK_STATUS(gpuprim_buffer_destroy(NULL, k.buffer), GPUPRIM_ERROR_NULL_POINTER);
    CHECK_STATUS(gpuprim_sort(NULL, k.buffer, NULL, k.buffer, NULL, GPUPRIM_ORDER_ASCENDING),
                 GPUPRIM_ERROR_NULL_POINTER);
    CHECK_UNCHANGED(k);

    /* NULL outputs and host pointers */
    EXPECT_ERROR(gpuprim_context_get_backend(ctx, NULL), GPUPRIM_ERROR_NULL_POINTER, "backend");
    EXPECT_ERROR(gpuprim_context_get_workspace_size(ctx, NULL), GPUPRIM_ERROR_NULL_POINTER, "bytes");
    EXPECT_ERROR(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U32, 4, NULL), GPUPRIM_ERROR_NULL_POINTER, "buffer");
    EXPECT_ERROR(gpuprim_buffer_wrap(ctx, GPUPRIM_DTYPE_U32, host, 4, NULL), GPUPRIM_ERROR_NULL_POINTER, "buffer");
    EXPECT_ERROR(gpuprim_buffer_wrap(ctx, GPUPRIM_DTYPE_U32, NULL, 4, &untouched), GPUPRIM_ERROR_NULL_POINTER, "data");
    CHECK(untouched == (gpuprim_buffer_t)&k);
    EXPECT_ERROR(gpuprim_buffer_upload(ctx, k.buffer, 0, NULL, 4), GPUPRIM_ERROR_NULL_POINTER, "host_data");
    EXPECT_ERROR(gpuprim_buffer_download(ctx, k.buffer, 0, NULL, 4), GPUPRIM_ERROR_NULL_POINTER, "host_data");
    EXPECT_ERROR(gpuprim_reduce(ctx, GPUPRIM_OP_SUM, k.buffer, NULL), GPUPRIM_ERROR_NULL_POINTER, "result");
    EXPECT_ERROR(gpuprim_dot(ctx, k.buffer, k.buffer, NULL), GPUPRIM_ERROR_NULL_POINTER, "result");

    /* NULL buffer handles */
    EXPECT_ERROR(gpuprim_buffer_upload(ctx, NULL, 0, host, 4), GPUPRIM_ERROR_NULL_POINTER, "buffer");
    EXPECT_ERROR(gpuprim_buffer_get_info(ctx, NULL, NULL, NULL, NULL), GPUPRIM_ERROR_NULL_POINTER, "buffer");
    EXPECT_ERROR(gpuprim_reduce(ctx, GPUPRIM_OP_SUM, NULL, &result), GPUPRIM_ERROR_NULL_POINTER, "input");
    CHECK(result == 0xC0FFEEu);
    EXPECT_ERROR(gpuprim_reduce_to_buffer(ctx, GPUPRIM_OP_MAX, k.buffer, NULL), GPUPRIM_ERROR_NULL_POINTER, "result");
    EXPECT_ERROR(gpuprim_reduce_to_buffer(ctx, GPUPRIM_OP_MAX, NULL, out.buffer), GPUPRIM_ERROR_NULL_POINTER, "input");
    EXPECT_ERROR(gpuprim_dot(ctx, NULL, k.buffer, &result), GPUPRIM_ERROR_NULL_POINTER, "a");
    EXPECT_ERROR(gpuprim_dot(ctx, k.buffer, NULL, &result), GPUPRIM_ERROR_NULL_POINTER, "b");
    CHECK(result == 0xC0FFEEu);
    EXPECT_ERROR(gpuprim_dot_to_buffer(ctx, k.buffer, k.buffer, NULL), GPUPRIM_ERROR_NULL_POINTER, "result");
    EXPECT_ERROR(gpuprim_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, k.buffer, NULL),
                 GPUPRIM_ERROR_NULL_POINTER, "output");
    EXPECT_ERROR(gpuprim_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, NULL, out.buffer),
                 GPUPRIM_ERROR_NULL_POINTER, "input");
    EXPECT_ERROR(gpuprim_sort(ctx, NULL, NULL, out.buffer, NULL, GPUPRIM_ORDER_ASCENDING),
                 GPUPRIM_ERROR_NULL_POINTER, "keys_in");
    EXPECT_ERROR(gpuprim_sort(ctx, k.buffer, NULL, NULL, NULL, GPUPRIM_ORDER_ASCENDING),
                 GPUPRIM_ERROR_NULL_POINTER, "keys_out");
    /* one values buffer without the other */
    EXPECT_ERROR(gpuprim_sort(ctx, k.buffer, vals.buffer, out.buffer, NULL, GPUPRIM_ORDER_ASCENDING),
                 GPUPRIM_ERROR_INVALID_ARGUMENT, "values_out");
    EXPECT_ERROR(gpuprim_sort(ctx, k.buffer, NULL, out.buffer, vals.buffer, GPUPRIM_ORDER_ASCENDING),
                 GPUPRIM_ERROR_INVALID_ARGUMENT, "values_in");
    CHECK_UNCHANGED(k);
    CHECK_UNCHANGED(out);
    CHECK_UNCHANGED(vals);
    free_known(ctx, k);
    free_known(ctx, out);
    free_known(ctx, vals);
}

static void test_invalid_handles(void) {
    static uint64_t not_a_context[64]; /* zeroed memory: readable, but no context */
    gpuprim_context_t fake = (gpuprim_context_t)(void *)not_a_context;
    known_t k = make_known(ctx, GPUPRIM_DTYPE_I64, 8);
    gpuprim_buffer_t dead = NULL, untouched = (gpuprim_buffer_t)&k;
    gpuprim_dtype_t dtype = (gpuprim_dtype_t)55;
    uint64_t count = 4242, result = 0xABCD;
    int64_t host[8];
    tc_where("invalid handles");

    /* a context that is not a context */
    CHECK_STATUS(gpuprim_context_synchronize(fake), GPUPRIM_ERROR_INVALID_HANDLE);
    CHECK_STATUS(gpuprim_buffer_create(fake, GPUPRIM_DTYPE_U32, 4, &untouched), GPUPRIM_ERROR_INVALID_HANDLE);
    CHECK(untouched == (gpuprim_buffer_t)&k);
    CHECK_STATUS(gpuprim_reduce(fake, GPUPRIM_OP_SUM, k.buffer, &result), GPUPRIM_ERROR_INVALID_HANDLE);
    CHECK(result == 0xABCD);
    CHECK_STATUS(gpuprim_context_destroy(fake), GPUPRIM_ERROR_INVALID_HANDLE);
    CHECK(strcmp(gpuprim_context_last_error(fake), "invalid context handle") == 0);
    CHECK(strcmp(gpuprim_context_last_error(NULL), "invalid context handle") == 0);
    /* a buffer handle is not a context handle */
    CHECK_STATUS(gpuprim_context_synchronize((gpuprim_context_t)(void *)k.buffer), GPUPRIM_ERROR_INVALID_HANDLE);

    /* a destroyed buffer */
    REQUIRE_OK(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_I64, 8, &dead));
    REQUIRE_OK(gpuprim_buffer_destroy(ctx, dead));
    EXPECT_ERROR(gpuprim_buffer_get_info(ctx, dead, &dtype, &count, NULL), GPUPRIM_ERROR_INVALID_HANDLE, "destroyed");
    CHECK(dtype == (gpuprim_dtype_t)55 && count == 4242);
    EXPECT_ERROR(gpuprim_buffer_upload(ctx, dead, 0, host, 8), GPUPRIM_ERROR_INVALID_HANDLE, "destroyed");
    memset(host, 0x3C, sizeof host);
    EXPECT_ERROR(gpuprim_buffer_download(ctx, dead, 0, host, 8), GPUPRIM_ERROR_INVALID_HANDLE, "destroyed");
    CHECK(((unsigned char *)host)[0] == 0x3C && ((unsigned char *)host)[63] == 0x3C);
    EXPECT_ERROR(gpuprim_reduce(ctx, GPUPRIM_OP_MIN, dead, &result), GPUPRIM_ERROR_INVALID_HANDLE, "input");
    CHECK(result == 0xABCD);
    EXPECT_ERROR(gpuprim_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_EXCLUSIVE, k.buffer, dead),
                 GPUPRIM_ERROR_INVALID_HANDLE, "output");
    EXPECT_ERROR(gpuprim_sort(ctx, dead, NULL, k.buffer, NULL, GPUPRIM_ORDER_ASCENDING),
                 GPUPRIM_ERROR_INVALID_HANDLE, "keys_in");
    EXPECT_ERROR(gpuprim_buffer_destroy(ctx, dead), GPUPRIM_ERROR_INVALID_HANDLE, "destroyed");
    CHECK_UNCHANGED(k);
    free_known(ctx, k);
}

static void test_context_mismatch(void) {
    known_t mine = make_known(ctx, GPUPRIM_DTYPE_F32, 32);
    known_t mine_out = make_known(ctx, GPUPRIM_DTYPE_F32, 32);
    known_t theirs = make_known(other, GPUPRIM_DTYPE_F32, 32);
    float host[32], result = 1.5f;
    int i;
    tc_where("context mismatch");
    for (i = 0; i < 32; ++i) host[i] = (float)i;

    EXPECT_ERROR(gpuprim_buffer_upload(ctx, theirs.buffer, 0, host, 32), GPUPRIM_ERROR_CONTEXT_MISMATCH, "buffer");
    EXPECT_ERROR(gpuprim_buffer_download(ctx, theirs.buffer, 0, host, 32), GPUPRIM_ERROR_CONTEXT_MISMATCH, "buffer");
    CHECK(host[31] == 31.0f);
    EXPECT_ERROR(gpuprim_reduce(ctx, GPUPRIM_OP_SUM, theirs.buffer, &result), GPUPRIM_ERROR_CONTEXT_MISMATCH, "input");
    CHECK(result == 1.5f);
    EXPECT_ERROR(gpuprim_reduce_to_buffer(ctx, GPUPRIM_OP_SUM, mine.buffer, theirs.buffer),
                 GPUPRIM_ERROR_CONTEXT_MISMATCH, "result");
    EXPECT_ERROR(gpuprim_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, mine.buffer, theirs.buffer),
                 GPUPRIM_ERROR_CONTEXT_MISMATCH, "output");
    EXPECT_ERROR(gpuprim_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, theirs.buffer, mine_out.buffer),
                 GPUPRIM_ERROR_CONTEXT_MISMATCH, "input");
    EXPECT_ERROR(gpuprim_dot(ctx, mine.buffer, theirs.buffer, &result), GPUPRIM_ERROR_CONTEXT_MISMATCH, "b");
    EXPECT_ERROR(gpuprim_sort(ctx, mine.buffer, theirs.buffer, mine_out.buffer, theirs.buffer,
                              GPUPRIM_ORDER_ASCENDING),
                 GPUPRIM_ERROR_CONTEXT_MISMATCH, "values_in");
    EXPECT_ERROR(gpuprim_buffer_destroy(ctx, theirs.buffer), GPUPRIM_ERROR_CONTEXT_MISMATCH, "buffer");
    CHECK_UNCHANGED(mine);
    CHECK_UNCHANGED(mine_out);
    {
        /* the other context's buffer is still alive and intact */
        void *now = tc_download(other, theirs.buffer, GPUPRIM_DTYPE_F32, 32);
        CHECK_ARRAY_EQ(GPUPRIM_DTYPE_F32, now, theirs.host, 32, "other context's buffer");
        free(now);
    }
    free_known(ctx, mine);
    free_known(ctx, mine_out);
    free_known(other, theirs);

    /* another context's live buffer at an address this context's destroyed
     * buffer had (allocators reuse addresses): a mismatch, not "destroyed" */
    {
        gpuprim_buffer_t mine_dead = NULL, theirs_new = NULL;
        uint32_t h[4] = {1, 2, 3, 4};
        uintptr_t dead_address;
        REQUIRE_OK(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U32, 4, &mine_dead));
        dead_address = (uintptr_t)(void *)mine_dead;
        REQUIRE_OK(gpuprim_buffer_destroy(ctx, mine_dead));
        REQUIRE_OK(gpuprim_buffer_create(other, GPUPRIM_DTYPE_U32, 4, &theirs_new));
        tc_where("context mismatch, another context's buffer at a reused handle address (%s)",
                 (uintptr_t)(void *)theirs_new == dead_address ? "reused here" : "not reused here");
        EXPECT_ERROR(gpuprim_buffer_upload(ctx, theirs_new, 0, h, 4), GPUPRIM_ERROR_CONTEXT_MISMATCH, "context");
        CHECK_OK(gpuprim_buffer_upload(other, theirs_new, 0, h, 4));
        CHECK_OK(gpuprim_buffer_destroy(other, theirs_new));
    }
}

static void test_invalid_enums(void) {
    known_t in = make_known(ctx, GPUPRIM_DTYPE_U64, 20);
    known_t out = make_known(ctx, GPUPRIM_DTYPE_U64, 20);
    known_t vals = make_known(ctx, GPUPRIM_DTYPE_I32, 20);
    known_t one = make_known(ctx, GPUPRIM_DTYPE_U64, 1);
    gpuprim_buffer_t untouched = (gpuprim_buffer_t)&in;
    uint64_t result = 0x1234, host[4] = {0, 0, 0, 0};
    tc_where("invalid enums");

    EXPECT_ERROR(gpuprim_buffer_create(ctx, (gpuprim_dtype_t)12, 4, &untouched), GPUPRIM_ERROR_INVALID_ENUM, "dtype");
    EXPECT_ERROR(gpuprim_buffer_create(ctx, (gpuprim_dtype_t)-1, 4, &untouched), GPUPRIM_ERROR_INVALID_ENUM, "dtype");
    EXPECT_ERROR(gpuprim_buffer_wrap(ctx, (gpuprim_dtype_t)100, host, 4, &untouched), GPUPRIM_ERROR_INVALID_ENUM, "dtype");
    CHECK(untouched == (gpuprim_buffer_t)&in);
    EXPECT_ERROR(gpuprim_reduce(ctx, (gpuprim_op_t)3, in.buffer, &result), GPUPRIM_ERROR_INVALID_ENUM, "op");
    EXPECT_ERROR(gpuprim_reduce(ctx, (gpuprim_op_t)-1, in.buffer, &result), GPUPRIM_ERROR_INVALID_ENUM, "op");
    CHECK(result == 0x1234);
    EXPECT_ERROR(gpuprim_reduce_to_buffer(ctx, (gpuprim_op_t)7, in.buffer, one.buffer), GPUPRIM_ERROR_INVALID_ENUM, "op");
    EXPECT_ERROR(gpuprim_scan(ctx, (gpuprim_op_t)3, GPUPRIM_SCAN_INCLUSIVE, in.buffer, out.buffer),
                 GPUPRIM_ERROR_INVALID_ENUM, "op");
    EXPECT_ERROR(gpuprim_scan(ctx, GPUPRIM_OP_SUM, (gpuprim_scan_kind_t)2, in.buffer, out.buffer),
                 GPUPRIM_ERROR_INVALID_ENUM, "kind");
    EXPECT_ERROR(gpuprim_scan(ctx, GPUPRIM_OP_SUM, (gpuprim_scan_kind_t)-1, in.buffer, in.buffer),
                 GPUPRIM_ERROR_INVALID_ENUM, "kind");
    EXPECT_ERROR(gpuprim_sort(ctx, in.buffer, vals.buffer, out.buffer, vals.buffer, (gpuprim_order_t)2),
                 GPUPRIM_ERROR_INVALID_ENUM, "order");
    EXPECT_ERROR(gpuprim_sort(ctx, in.buffer, NULL, in.buffer, NULL, (gpuprim_order_t)-5),
                 GPUPRIM_ERROR_INVALID_ENUM, "order");
    CHECK_UNCHANGED(in);
    CHECK_UNCHANGED(out);
    CHECK_UNCHANGED(vals);
    CHECK_UNCHANGED(one);
    free_known(ctx, in);
    free_known(ctx, out);
    free_known(ctx, vals);
    free_known(ctx, one);
}

static void test_mismatches(void) {
    known_t f32 = make_known(ctx, GPUPRIM_DTYPE_F32, 50);
    known_t f32_out = make_known(ctx, GPUPRIM_DTYPE_F32, 50);
    known_t f32_short = make_known(ctx, GPUPRIM_DTYPE_F32, 49);
    known_t i32 = make_known(ctx, GPUPRIM_DTYPE_I32, 50);
    known_t u32_vals = make_known(ctx, GPUPRIM_DTYPE_U32, 50);
    known_t u32_vals_out = make_known(ctx, GPUPRIM_DTYPE_U32, 50);
    known_t i32_vals_out = make_known(ctx, GPUPRIM_DTYPE_I32, 50);
    known_t u32_vals_long = make_known(ctx, GPUPRIM_DTYPE_U32, 51);
    known_t f64_one = make_known(ctx, GPUPRIM_DTYPE_F64, 1);
    gpuprim_buffer_t f32_empty = tc_buffer(ctx, GPUPRIM_DTYPE_F32, 0);
    float result = 2.5f;
    tc_where("dtype and size mismatches");

    /* dtypes */
    EXPECT_ERROR(gpuprim_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, f32.buffer, i32.buffer),
                 GPUPRIM_ERROR_DTYPE_MISMATCH, "output");
    EXPECT_ERROR(gpuprim_reduce_to_buffer(ctx, GPUPRIM_OP_SUM, f32.buffer, f64_one.buffer),
                 GPUPRIM_ERROR_DTYPE_MISMATCH, "result");
    EXPECT_ERROR(gpuprim_dot(ctx, f32.buffer, i32.buffer, &result), GPUPRIM_ERROR_DTYPE_MISMATCH, "f32");
    CHECK(result == 2.5f);
    EXPECT_ERROR(gpuprim_dot_to_buffer(ctx, f32.buffer, f32_out.buffer, f64_one.buffer),
                 GPUPRIM_ERROR_DTYPE_MISMATCH, "result");
    EXPECT_ERROR(gpuprim_sort(ctx, f32.buffer, NULL, i32.buffer, NULL, GPUPRIM_ORDER_ASCENDING),
                 GPUPRIM_ERROR_DTYPE_MISMATCH, "keys_out");
    EXPECT_ERROR(gpuprim_sort(ctx, f32.buffer, u32_vals.buffer, f32_out.buffer, i32_vals_out.buffer,
                              GPUPRIM_ORDER_DESCENDING),
                 GPUPRIM_ERROR_DTYPE_MISMATCH, "values_out");

    /* counts */
    EXPECT_ERROR(gpuprim_scan(ctx, GPUPRIM_OP_MAX, GPUPRIM_SCAN_EXCLUSIVE, f32.buffer, f32_short.buffer),
                 GPUPRIM_ERROR_SIZE_MISMATCH, "output");
    EXPECT_ERROR(gpuprim_reduce_to_buffer(ctx, GPUPRIM_OP_MIN, f32.buffer, f32_empty),
                 GPUPRIM_ERROR_SIZE_MISMATCH, "result");
    EXPECT_ERROR(gpuprim_dot(ctx, f32.buffer, f32_short.buffer, &result), GPUPRIM_ERROR_SIZE_MISMATCH, "49");
    CHECK(result == 2.5f);
    EXPECT_ERROR(gpuprim_dot_to_buffer(ctx, f32.buffer, f32_out.buffer, f32_empty),
                 GPUPRIM_ERROR_SIZE_MISMATCH, "result");
    EXPECT_ERROR(gpuprim_sort(ctx, f32.buffer, NULL, f32_short.buffer, NULL, GPUPRIM_ORDER_ASCENDING),
                 GPUPRIM_ERROR_SIZE_MISMATCH, "keys_out");
    EXPECT_ERROR(gpuprim_sort(ctx, f32.buffer, u32_vals_long.buffer, f32_out.buffer, u32_vals_out.buffer,
                              GPUPRIM_ORDER_ASCENDING),
                 GPUPRIM_ERROR_SIZE_MISMATCH, "values_in");
    EXPECT_ERROR(gpuprim_sort(ctx, f32.buffer, u32_vals.buffer, f32_out.buffer, u32_vals_long.buffer,
                              GPUPRIM_ORDER_ASCENDING),
                 GPUPRIM_ERROR_SIZE_MISMATCH, "values_out");

    CHECK_UNCHANGED(f32);
    CHECK_UNCHANGED(f32_out);
    CHECK_UNCHANGED(f32_short);
    CHECK_UNCHANGED(i32);
    CHECK_UNCHANGED(u32_vals);
    CHECK_UNCHANGED(u32_vals_out);
    CHECK_UNCHANGED(i32_vals_out);
    CHECK_UNCHANGED(u32_vals_long);
    CHECK_UNCHANGED(f64_one);
    free_known(ctx, f32);
    free_known(ctx, f32_out);
    free_known(ctx, f32_short);
    free_known(ctx, i32);
    free_known(ctx, u32_vals);
    free_known(ctx, u32_vals_out);
    free_known(ctx, i32_vals_out);
    free_known(ctx, u32_vals_long);
    free_known(ctx, f64_one);
    CHECK_OK(gpuprim_buffer_destroy(ctx, f32_empty));
}

static void test_ranges_and_sizes(void) {
    known_t k = make_known(ctx, GPUPRIM_DTYPE_U32, 16);
    gpuprim_buffer_t untouched = (gpuprim_buffer_t)&k;
    uint32_t host[32];
    unsigned char poison[sizeof host];
    tc_where("out of range, overflow, out of memory");
    memset(host, 0x77, sizeof host);
    memcpy(poison, host, sizeof host);

    EXPECT_ERROR(gpuprim_buffer_upload(ctx, k.buffer, 10, host, 7), GPUPRIM_ERROR_OUT_OF_RANGE,
                 "'offset' 10 + 'count' 7 is past the end of 'buffer' (16 elements)");
    EXPECT_ERROR(gpuprim_buffer_upload(ctx, k.buffer, 0, host, 17), GPUPRIM_ERROR_OUT_OF_RANGE, "16");
    EXPECT_ERROR(gpuprim_buffer_upload(ctx, k.buffer, 17, host, 0), GPUPRIM_ERROR_OUT_OF_RANGE, "17");
    /* offset + count wraps around 2^64: still out of range, not a small range */
    EXPECT_ERROR(gpuprim_buffer_upload(ctx, k.buffer, UINT64_MAX - 1, host, 4), GPUPRIM_ERROR_OUT_OF_RANGE, "16");
    EXPECT_ERROR(gpuprim_buffer_download(ctx, k.buffer, 16, host, 1), GPUPRIM_ERROR_OUT_OF_RANGE, "16");
    EXPECT_ERROR(gpuprim_buffer_download(ctx, k.buffer, 2, host, UINT64_MAX), GPUPRIM_ERROR_OUT_OF_RANGE, "16");
    EXPECT_ERROR(gpuprim_buffer_download(ctx, k.buffer, 8, host, 9), GPUPRIM_ERROR_OUT_OF_RANGE, "16");
    CHECK(memcmp(host, poison, sizeof host) == 0);
    CHECK_UNCHANGED(k);

    /* count * size past 2^64: rejected before anything is allocated */
    EXPECT_ERROR(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U32, (uint64_t)1 << 62, &untouched),
                 GPUPRIM_ERROR_OVERFLOW, "count");
    EXPECT_ERROR(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_F64, ((uint64_t)1 << 61) + 5, &untouched),
                 GPUPRIM_ERROR_OVERFLOW, "count");
    EXPECT_ERROR(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_I64, UINT64_MAX, &untouched), GPUPRIM_ERROR_OVERFLOW, "count");
    EXPECT_ERROR(gpuprim_buffer_wrap(ctx, GPUPRIM_DTYPE_U32, host, (uint64_t)1 << 62, &untouched),
                 GPUPRIM_ERROR_OVERFLOW, "count");
    /* a range past the end of the address space: the message names both arguments */
    EXPECT_ERROR(gpuprim_buffer_wrap(ctx, GPUPRIM_DTYPE_U32, (void *)(UINTPTR_MAX - 15), 8, &untouched),
                 GPUPRIM_ERROR_OVERFLOW, "'data' = ");
    CHECK_MESSAGE(ctx, "'count' = 8");
    CHECK(untouched == (gpuprim_buffer_t)&k);
    {
        /* workspace sizes whose sum passes 2^64: refused before any growth, naming sizes */
        gpuprim_workspace_sizes_t sizes;
        memset(&sizes, 0, sizeof sizes);
        sizes.struct_size = sizeof sizes;
        sizes.main_bytes = UINT64_MAX;
        sizes.side_bytes = 1;
        EXPECT_ERROR(gpuprim_context_reserve_workspace_sizes(ctx, &sizes, 1), GPUPRIM_ERROR_OUT_OF_MEMORY,
                     "argument 'sizes'");
    }

    /* fits in 64 bits but is no allocation anyone has: 1 PiB (past x86-64's
     * 128 TiB of user address space, and any GPU) */
    EXPECT_ERROR(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U32, (uint64_t)1 << 48, &untouched),
                 GPUPRIM_ERROR_OUT_OF_MEMORY, "");
    /* 2^64 - 1 bytes fit too: out of memory, said of the size asked for (the
     * CPU backend's rounding to whole 2 MiB pages passes 2^64, which once
     * read as an overflow of the caller's size) */
    if (!tc_backend_is_cuda(ctx))
        EXPECT_ERROR(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U8, UINT64_MAX, &untouched), GPUPRIM_ERROR_OUT_OF_MEMORY,
                     "cannot allocate 18446744073709551615 bytes of host memory");
    CHECK(untouched == (gpuprim_buffer_t)&k);
    {
        /* 2^62 bytes fits in 64 bits: out of memory, or too large for the address space */
        gpuprim_status_t s = gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U64, (uint64_t)1 << 59, &untouched);
        CHECKF(s == GPUPRIM_ERROR_OUT_OF_MEMORY || s == GPUPRIM_ERROR_OVERFLOW, "2^62 bytes: status %d (%s)",
               (int)s, gpuprim_get_error_string(s));
        CHECK(untouched == (gpuprim_buffer_t)&k);
    }
    /* the context stays usable */
    {
        uint32_t sum = 0, want = 0;
        int i;
        for (i = 0; i < 16; ++i) want += ((uint32_t *)k.host)[i];
        CHECK_OK(gpuprim_reduce(ctx, GPUPRIM_OP_SUM, k.buffer, &sum));
        CHECK(sum == want);
    }
    free_known(ctx, k);
}

static void test_invalid_arguments(void) {
    known_t a = make_known(ctx, GPUPRIM_DTYPE_I64, 40);
    known_t b = make_known(ctx, GPUPRIM_DTYPE_I64, 40);
    known_t c = make_known(ctx, GPUPRIM_DTYPE_I64, 40);
    known_t d = make_known(ctx, GPUPRIM_DTYPE_I64, 40);
    known_t base = make_known(ctx, GPUPRIM_DTYPE_I64, 41);
    gpuprim_buffer_t view0 = NULL, view1 = NULL, untouched = (gpuprim_buffer_t)&a;
    void *data = NULL;
    int64_t result = 99;
    tc_where("invalid arguments");

    /* an output that is the input where that is not allowed */
    EXPECT_ERROR(gpuprim_reduce_to_buffer(ctx, GPUPRIM_OP_SUM, a.buffer, a.buffer),
                 GPUPRIM_ERROR_INVALID_ARGUMENT, "result");
    EXPECT_ERROR(gpuprim_dot_to_buffer(ctx, a.buffer, b.buffer, a.buffer), GPUPRIM_ERROR_INVALID_ARGUMENT, "result");
    EXPECT_ERROR(gpuprim_dot_to_buffer(ctx, a.buffer, b.buffer, b.buffer), GPUPRIM_ERROR_INVALID_ARGUMENT, "result");
    /* keys and values must be distinct buffers */
    EXPECT_ERROR(gpuprim_sort(ctx, a.buffer, a.buffer, b.buffer, c.buffer, GPUPRIM_ORDER_ASCENDING),
                 GPUPRIM_ERROR_INVALID_ARGUMENT, "values_in");
    EXPECT_ERROR(gpuprim_sort(ctx, a.buffer, b.buffer, a.buffer, a.buffer, GPUPRIM_ORDER_ASCENDING),
                 GPUPRIM_ERROR_INVALID_ARGUMENT, "values_out");
    EXPECT_ERROR(gpuprim_sort(ctx, a.buffer, b.buffer, c.buffer, c.buffer, GPUPRIM_ORDER_ASCENDING),
                 GPUPRIM_ERROR_INVALID_ARGUMENT, "values_out");
    EXPECT_ERROR(gpuprim_sort(ctx, a.buffer, b.buffer, b.buffer, c.buffer, GPUPRIM_ORDER_ASCENDING),
                 GPUPRIM_ERROR_INVALID_ARGUMENT, "keys_out");
    EXPECT_ERROR(gpuprim_sort(ctx, a.buffer, b.buffer, c.buffer, a.buffer, GPUPRIM_ORDER_ASCENDING),
                 GPUPRIM_ERROR_INVALID_ARGUMENT, "values_out");
    CHECK_UNCHANGED(a);
    CHECK_UNCHANGED(b);
    CHECK_UNCHANGED(c);

    /* wrapped memory that partly overlaps */
    REQUIRE_OK(gpuprim_buffer_get_info(ctx, base.buffer, NULL, NULL, &data));
    REQUIRE_OK(gpuprim_buffer_wrap(ctx, GPUPRIM_DTYPE_I64, data, 40, &view0));
    REQUIRE_OK(gpuprim_buffer_wrap(ctx, GPUPRIM_DTYPE_I64, (int64_t *)data + 1, 40, &view1));
    EXPECT_ERROR(gpuprim_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, view0, view1),
                 GPUPRIM_ERROR_INVALID_ARGUMENT, "overlap");
    EXPECT_ERROR(gpuprim_scan(ctx, GPUPRIM_OP_MIN, GPUPRIM_SCAN_EXCLUSIVE, view1, view0),
                 GPUPRIM_ERROR_INVALID_ARGUMENT, "overlap");
    EXPECT_ERROR(gpuprim_sort(ctx, view0, NULL, view1, NULL, GPUPRIM_ORDER_ASCENDING),
                 GPUPRIM_ERROR_INVALID_ARGUMENT, "overlap");
    EXPECT_ERROR(gpuprim_sort(ctx, view0, d.buffer, c.buffer, view1, GPUPRIM_ORDER_DESCENDING),
                 GPUPRIM_ERROR_INVALID_ARGUMENT, "overlap");
    /* element 0 of the result inside the input */
    EXPECT_ERROR(gpuprim_reduce_to_buffer(ctx, GPUPRIM_OP_MAX, view0, view1), GPUPRIM_ERROR_INVALID_ARGUMENT,
                 "result");
    CHECK_UNCHANGED(base);
    CHECK_UNCHANGED(c);
    CHECK_UNCHANGED(d);
    /* the same memory and count through two handles is in-place use, allowed */
    {
        gpuprim_buffer_t same = NULL;
        REQUIRE_OK(gpuprim_buffer_wrap(ctx, GPUPRIM_DTYPE_I64, data, 40, &same));
        CHECK_OK(gpuprim_scan(ctx, GPUPRIM_OP_MAX, GPUPRIM_SCAN_INCLUSIVE, view0, same));
        CHECK_OK(gpuprim_buffer_destroy(ctx, same));
        REQUIRE_OK(gpuprim_buffer_upload(ctx, base.buffer, 0, base.host, 41));
    }

    /* misaligned wrap: 1 byte off for 4-byte elements, 4 bytes off for 8-byte ones */
    EXPECT_ERROR(gpuprim_buffer_wrap(ctx, GPUPRIM_DTYPE_U32, (char *)data + 1, 8, &untouched),
                 GPUPRIM_ERROR_INVALID_ARGUMENT, "align");
    EXPECT_ERROR(gpuprim_buffer_wrap(ctx, GPUPRIM_DTYPE_F64, (char *)data + 4, 8, &untouched),
                 GPUPRIM_ERROR_INVALID_ARGUMENT, "align");
    /* 2-byte elements 1 byte off; 1-byte elements are never misaligned */
    EXPECT_ERROR(gpuprim_buffer_wrap(ctx, GPUPRIM_DTYPE_F16, (char *)data + 1, 8, &untouched),
                 GPUPRIM_ERROR_INVALID_ARGUMENT, "align");
    EXPECT_ERROR(gpuprim_buffer_wrap(ctx, GPUPRIM_DTYPE_I16, (char *)data + 3, 8, &untouched),
                 GPUPRIM_ERROR_INVALID_ARGUMENT, "align");
    CHECK(untouched == (gpuprim_buffer_t)&a);
    {
        gpuprim_buffer_t bytes = NULL;
        CHECK_OK(gpuprim_buffer_wrap(ctx, GPUPRIM_DTYPE_U8, (char *)data + 3, 8, &bytes));
        CHECK_OK(gpuprim_buffer_destroy(ctx, bytes));
    }
    CHECK(untouched == (gpuprim_buffer_t)&a);
    /* host memory on CUDA */
    if (tc_backend_is_cuda(ctx)) {
        int64_t host[8];
        EXPECT_ERROR(gpuprim_buffer_wrap(ctx, GPUPRIM_DTYPE_I64, host, 8, &untouched),
                     GPUPRIM_ERROR_INVALID_ARGUMENT, "data");
        CHECK(untouched == (gpuprim_buffer_t)&a);
    }
    CHECK_OK(gpuprim_reduce(ctx, GPUPRIM_OP_SUM, a.buffer, &result));

    CHECK_OK(gpuprim_buffer_destroy(ctx, view0));
    CHECK_OK(gpuprim_buffer_destroy(ctx, view1));
    CHECK_UNCHANGED(base); /* destroying views leaves the memory */
    free_known(ctx, a);
    free_known(ctx, b);
    free_known(ctx, c);
    free_known(ctx, d);
    free_known(ctx, base);
}

/* gpuprim_sort_with_options: bad bit ranges (the message names both bits),
 * bad order, bad struct_size; nothing changes on failure; NULL options and
 * the defaults are gpuprim_sort(..., ASCENDING). */
static void expect_bad_range(gpuprim_dtype_t d, uint64_t n, uint32_t begin_bit, uint32_t end_bit) {
    known_t keys = make_known(ctx, d, n), out = make_known(ctx, d, n);
    known_t vals = make_known(ctx, GPUPRIM_DTYPE_U16, n), vals_out = make_known(ctx, GPUPRIM_DTYPE_U16, n);
    gpuprim_sort_options_t o;
    char begin_text[32], end_text[32];
    gpuprim_sort_options_init(&o);
    o.begin_bit = begin_bit;
    o.end_bit = end_bit;
    snprintf(begin_text, sizeof begin_text, "%u", (unsigned)begin_bit);
    snprintf(end_text, sizeof end_text, "%u", (unsigned)end_bit);
    tc_where("sort options: %s keys (n=%llu), bits [%u, %u)", tc_dtype_name(d), (unsigned long long)n,
             (unsigned)begin_bit, (unsigned)end_bit);
    EXPECT_ERROR(gpuprim_sort_with_options(ctx, keys.buffer, NULL, out.buffer, NULL, &o),
                 GPUPRIM_ERROR_INVALID_ARGUMENT, "begin_bit");
    CHECK_MESSAGE(ctx, "end_bit");
    CHECK_MESSAGE(ctx, begin_text);
    CHECK_MESSAGE(ctx, end_text);
    EXPECT_ERROR(gpuprim_sort_with_options(ctx, keys.buffer, vals.buffer, keys.buffer, vals_out.buffer, &o),
                 GPUPRIM_ERROR_INVALID_ARGUMENT, "end_bit");
    CHECK_MESSAGE(ctx, "begin_bit");
    o.order = GPUPRIM_ORDER_DESCENDING;
    EXPECT_ERROR(gpuprim_sort_with_options(ctx, keys.buffer, vals.buffer, out.buffer, vals.buffer, &o),
                 GPUPRIM_ERROR_INVALID_ARGUMENT, "begin_bit");
    CHECK_UNCHANGED(keys);
    CHECK_UNCHANGED(out);
    CHECK_UNCHANGED(vals);
    CHECK_UNCHANGED(vals_out);
    free_known(ctx, keys);
    free_known(ctx, out);
    free_known(ctx, vals);
    free_known(ctx, vals_out);
}

static void test_sort_options(void) {
    known_t keys = make_known(ctx, GPUPRIM_DTYPE_U32, 50), out = make_known(ctx, GPUPRIM_DTYPE_U32, 50);
    gpuprim_sort_options_t o;
    uint64_t big_storage[4200 / 8]; /* a newer header's larger struct (aligned like the options) */
    unsigned char *big = (unsigned char *)big_storage;
    uint32_t want[50], got[50];
    uint64_t perm[50];
    gpuprim_sort_options_init(NULL); /* no-op */
    memset(&o, 0xA5, sizeof o);
    gpuprim_sort_options_init(&o);
    tc_where("sort options: defaults");
    CHECK(o.struct_size == sizeof o);
    CHECK(o.order == GPUPRIM_ORDER_ASCENDING);
    CHECK(o.begin_bit == 0 && o.end_bit == 0);

    /* bit ranges: begin >= end, end past the key's bits (end 0 = the width) */
    expect_bad_range(GPUPRIM_DTYPE_U32, 50, 16, 16);
    expect_bad_range(GPUPRIM_DTYPE_U32, 50, 20, 10);
    expect_bad_range(GPUPRIM_DTYPE_U32, 50, 0, 33);
    expect_bad_range(GPUPRIM_DTYPE_U32, 50, 32, 0);
    expect_bad_range(GPUPRIM_DTYPE_U64, 50, 0, 65);
    expect_bad_range(GPUPRIM_DTYPE_U64, 50, 64, 0);
    expect_bad_range(GPUPRIM_DTYPE_I8, 50, 0, 9);
    expect_bad_range(GPUPRIM_DTYPE_I8, 50, 8, 0);
    expect_bad_range(GPUPRIM_DTYPE_U8, 50, 3, 3);
    expect_bad_range(GPUPRIM_DTYPE_F16, 50, 0, 17);
    expect_bad_range(GPUPRIM_DTYPE_BF16, 50, 16, 0);
    expect_bad_range(GPUPRIM_DTYPE_I16, 50, 5, 4);
    expect_bad_range(GPUPRIM_DTYPE_F32, 50, 0xFFFFFFFFu, 0);
    expect_bad_range(GPUPRIM_DTYPE_F64, 50, 1, 0xFFFFFFFFu);
    expect_bad_range(GPUPRIM_DTYPE_U32, 0, 7, 3); /* no keys: still refused */

    /* order */
    tc_where("sort options: order");
    gpuprim_sort_options_init(&o);
    o.order = 2;
    EXPECT_ERROR(gpuprim_sort_with_options(ctx, keys.buffer, NULL, out.buffer, NULL, &o), GPUPRIM_ERROR_INVALID_ENUM,
                 "order");
    o.order = -1;
    EXPECT_ERROR(gpuprim_sort_with_options(ctx, keys.buffer, NULL, keys.buffer, NULL, &o), GPUPRIM_ERROR_INVALID_ENUM,
                 "order");
    o.order = INT32_MIN;
    EXPECT_ERROR(gpuprim_sort_with_options(ctx, keys.buffer, NULL, out.buffer, NULL, &o), GPUPRIM_ERROR_INVALID_ENUM,
                 "order");
    CHECK_UNCHANGED(keys);
    CHECK_UNCHANGED(out);

    /* struct_size: smaller, above 4096, or a larger one with a set byte past the known fields */
    tc_where("sort options: struct_size");
    gpuprim_sort_options_init(&o);
    o.struct_size = 0;
    EXPECT_ERROR(gpuprim_sort_with_options(ctx, keys.buffer, NULL, out.buffer, NULL, &o),
                 GPUPRIM_ERROR_INVALID_ARGUMENT, "struct_size");
    o.struct_size = sizeof o - 1;
    EXPECT_ERROR(gpuprim_sort_with_options(ctx, keys.buffer, NULL, out.buffer, NULL, &o),
                 GPUPRIM_ERROR_INVALID_ARGUMENT, "struct_size");
    o.struct_size = 8;
    EXPECT_ERROR(gpuprim_sort_with_options(ctx, keys.buffer, NULL, out.buffer, NULL, &o),
                 GPUPRIM_ERROR_INVALID_ARGUMENT, "struct_size");
    memset(big_storage, 0, sizeof big_storage);
    gpuprim_sort_options_init((gpuprim_sort_options_t *)(void *)big);
    ((gpuprim_sort_options_t *)(void *)big)->struct_size = 4097;
    EXPECT_ERROR(gpuprim_sort_with_options(ctx, keys.buffer, NULL, out.buffer, NULL, (gpuprim_sort_options_t *)(void *)big),
                 GPUPRIM_ERROR_INVALID_ARGUMENT, "struct_size");
    ((gpuprim_sort_options_t *)(void *)big)->struct_size = UINT64_MAX;
    EXPECT_ERROR(gpuprim_sort_with_options(ctx, keys.buffer, NULL, out.buffer, NULL, (gpuprim_sort_options_t *)(void *)big),
                 GPUPRIM_ERROR_INVALID_ARGUMENT, "struct_size");
    ((gpuprim_sort_options_t *)(void *)big)->struct_size = sizeof o + 16;
    big[sizeof o + 9] = 1;
    EXPECT_ERROR(gpuprim_sort_with_options(ctx, keys.buffer, NULL, out.buffer, NULL, (gpuprim_sort_options_t *)(void *)big),
                 GPUPRIM_ERROR_INVALID_ARGUMENT, "struct_size");
    CHECK_UNCHANGED(keys);
    CHECK_UNCHANGED(out);

    /* reserved: where the struct had padding until 0.4.0 */
    tc_where("sort options: reserved");
    gpuprim_sort_options_init(&o);
    CHECK(o.reserved == 0);
    o.reserved = 0x80000000u;
    EXPECT_ERROR(gpuprim_sort_with_options(ctx, keys.buffer, NULL, out.buffer, NULL, &o),
                 GPUPRIM_ERROR_INVALID_ARGUMENT, "options->reserved = 2147483648");
    CHECK_UNCHANGED(keys);
    CHECK_UNCHANGED(out);

    /* accepted: NULL options, a larger struct with a zero tail (up to 4096 bytes), both orders */
    tc_where("sort options: accepted");
    tc_reference_sort_permutation(GPUPRIM_DTYPE_U32, keys.host, 50, 0, perm);
    tc_permute(GPUPRIM_DTYPE_U32, keys.host, perm, 50, want);
    CHECK_OK(gpuprim_sort_with_options(ctx, keys.buffer, NULL, out.buffer, NULL, NULL));
    CHECK_OK(gpuprim_buffer_download(ctx, out.buffer, 0, got, 50));
    CHECK_ARRAY_EQ(GPUPRIM_DTYPE_U32, got, want, 50, "NULL options: ascending");
    big[sizeof o + 9] = 0;
    ((gpuprim_sort_options_t *)(void *)big)->struct_size = 4096;
    ((gpuprim_sort_options_t *)(void *)big)->order = GPUPRIM_ORDER_DESCENDING;
    REQUIRE_OK(gpuprim_buffer_upload(ctx, out.buffer, 0, out.host, 50));
    CHECK_OK(gpuprim_sort_with_options(ctx, keys.buffer, NULL, out.buffer, NULL, (gpuprim_sort_options_t *)(void *)big));
    tc_reference_sort_permutation(GPUPRIM_DTYPE_U32, keys.host, 50, 1, perm);
    tc_permute(GPUPRIM_DTYPE_U32, keys.host, perm, 50, want);
    CHECK_OK(gpuprim_buffer_download(ctx, out.buffer, 0, got, 50));
    CHECK_ARRAY_EQ(GPUPRIM_DTYPE_U32, got, want, 50, "4096-byte options, zero tail: descending");
    REQUIRE_OK(gpuprim_buffer_upload(ctx, out.buffer, 0, out.host, 50));
    CHECK_UNCHANGED(keys);
    /* the other argument errors come first or after, but still come */
    gpuprim_sort_options_init(&o);
    EXPECT_ERROR(gpuprim_sort_with_options(ctx, keys.buffer, NULL, NULL, NULL, &o), GPUPRIM_ERROR_NULL_POINTER,
                 "keys_out");
    EXPECT_ERROR(gpuprim_sort_with_options(ctx, keys.buffer, keys.buffer, out.buffer, NULL, &o),
                 GPUPRIM_ERROR_INVALID_ARGUMENT, "values");
    CHECK_STATUS(gpuprim_sort_with_options(NULL, keys.buffer, NULL, out.buffer, NULL, &o), GPUPRIM_ERROR_NULL_POINTER);
    CHECK_UNCHANGED(keys);
    CHECK_UNCHANGED(out);
    free_known(ctx, keys);
    free_known(ctx, out);
}

/* Each failure replaces the message; a new context has none. */
static void test_messages(void) {
    gpuprim_context_t fresh = NULL;
    gpuprim_buffer_t kept = NULL;
    uint32_t x = 0;
    tc_where("messages");
    REQUIRE_OK(gpuprim_context_create(NULL, &fresh, NULL, 0));
    CHECK(strcmp(gpuprim_context_last_error(fresh), "") == 0);
    CHECK_STATUS(gpuprim_reduce(fresh, GPUPRIM_OP_SUM, NULL, &x), GPUPRIM_ERROR_NULL_POINTER);
    CHECKF(tc_contains(gpuprim_context_last_error(fresh), "input"), "\"%s\"", gpuprim_context_last_error(fresh));
    CHECK_STATUS(gpuprim_buffer_create(fresh, (gpuprim_dtype_t)99, 1, NULL), GPUPRIM_ERROR_NULL_POINTER);
    CHECK_STATUS(gpuprim_buffer_create(fresh, (gpuprim_dtype_t)99, 1, &kept), GPUPRIM_ERROR_INVALID_ENUM);
    CHECK(kept == NULL);
    CHECKF(tc_contains(gpuprim_context_last_error(fresh), "dtype") &&
               !tc_contains(gpuprim_context_last_error(fresh), "input"),
           "\"%s\"", gpuprim_context_last_error(fresh));
    CHECK(x == 0);
    CHECK_OK(gpuprim_context_destroy(fresh));
}

int main(void) {
    ctx = tc_init("test_errors");
    REQUIRE_OK(gpuprim_context_create(NULL, &other, NULL, 0));
    test_context_creation_errors();
    test_null_pointers();
    test_invalid_handles();
    test_context_mismatch();
    test_invalid_enums();
    test_mismatches();
    test_ranges_and_sizes();
    test_invalid_arguments();
    test_sort_options();
    test_messages();
    CHECK_OK(gpuprim_context_destroy(other));
    return tc_finish();
}
