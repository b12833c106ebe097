/* SPDX-License-Identifier: Apache-2.0 */
/* Sorts and reduces numbers through an installed libgpuprim and checks the answers:
 * 8 fixed keys, then 100000 pseudo-random keys sorted descending and compared with
 * the host's sort. Prints one line; exits 0 only when every result is right.
 * Built by examples/cmake_consumer/CMakeLists.txt and by the pkg-config tests. */
#include <gpuprim/gpuprim.h>

#include <stdio.h>
#include <stdlib.h>

#define N 8
#define BIG 100000

static int descending(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

int main(void) {
    int32_t keys[N] = {42, -7, 13, 0, 99, -7, 5, 1000};
    const int32_t sorted[N] = {-7, -7, 0, 5, 13, 42, 99, 1000};
    int32_t sum = 0, max = 0;
    static uint32_t big[BIG], expected[BIG];
    uint32_t state = 12345u;
    char message[256] = "";
    gpuprim_context_t ctx = NULL;
    gpuprim_buffer_t buf = NULL, big_buf = NULL;
    gpuprim_backend_t backend = GPUPRIM_BACKEND_AUTO;
    int i, failed = 0;

    for (i = 0; i < BIG; ++i) {
        state = state * 1664525u + 1013904223u;
        big[i] = expected[i] = state >> 8;
    }
    qsort(expected, BIG, sizeof expected[0], descending);

    if (gpuprim_context_create(NULL, &ctx, message, sizeof message) != GPUPRIM_SUCCESS) {
        fprintf(stderr, "gpuprim_context_create: %s\n", message);
        return 1;
    }
    gpuprim_context_get_backend(ctx, &backend);
    if (gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_I32, N, &buf) != GPUPRIM_SUCCESS ||
        gpuprim_buffer_upload(ctx, buf, 0, keys, N) != GPUPRIM_SUCCESS ||
        gpuprim_reduce(ctx, GPUPRIM_OP_SUM, buf, &sum) != GPUPRIM_SUCCESS ||
        gpuprim_reduce(ctx, GPUPRIM_OP_MAX, buf, &max) != GPUPRIM_SUCCESS ||
        gpuprim_sort(ctx, buf, NULL, buf, NULL, GPUPRIM_ORDER_ASCENDING) != GPUPRIM_SUCCESS ||
        gpuprim_buffer_download(ctx, buf, 0, keys, N) != GPUPRIM_SUCCESS ||
        gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U32, BIG, &big_buf) != GPUPRIM_SUCCESS ||
        gpuprim_buffer_upload(ctx, big_buf, 0, big, BIG) != GPUPRIM_SUCCESS ||
        gpuprim_sort(ctx, big_buf, NULL, big_buf, NULL, GPUPRIM_ORDER_DESCENDING) != GPUPRIM_SUCCESS ||
        gpuprim_buffer_download(ctx, big_buf, 0, big, BIG) != GPUPRIM_SUCCESS) {
        fprintf(stderr, "gpuprim: %s\n", gpuprim_context_last_error(ctx));
        gpuprim_context_destroy(ctx);
        return 1;
    }
    for (i = 0; i < N; ++i) failed |= keys[i] != sorted[i];
    for (i = 0; i < BIG; ++i) failed |= big[i] != expected[i];
    failed |= sum != 1145 || max != 1000;
    printf("gpuprim_consumer: libgpuprim %s on %s: sum %d, max %d, %d keys sorted %s\n",
           gpuprim_version_string(), backend == GPUPRIM_BACKEND_CUDA ? "CUDA" : "CPU", (int)sum, (int)max,
           N + BIG, failed ? "WRONG" : "ok");
    gpuprim_buffer_destroy(ctx, big_buf);
    gpuprim_buffer_destroy(ctx, buf);
    gpuprim_context_destroy(ctx);
    return failed ? 1 : 0;
}
