/* SPDX-License-Identifier: Apache-2.0 */
/* Sorts and reduces a few numbers through an installed libgpuprim and checks the answers. */
#include <gpuprim/gpuprim.h>

#include <stdio.h>

#define N 8

int main(void) {
    int32_t keys[N] = {42, -7, 13, 0, 99, -7, 5, 1000};
    const int32_t sorted[N] = {-7, -7, 0, 5, 13, 42, 99, 1000};
    int32_t sum = 0, max = 0;
    char message[256] = "";
    gpuprim_context_t ctx = NULL;
    gpuprim_buffer_t buf = NULL;
    gpuprim_backend_t backend = GPUPRIM_BACKEND_AUTO;
    int i, failed = 0;

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
        gpuprim_buffer_download(ctx, buf, 0, keys, N) != GPUPRIM_SUCCESS) {
        fprintf(stderr, "gpuprim: %s\n", gpuprim_context_last_error(ctx));
        gpuprim_context_destroy(ctx);
        return 1;
    }
    for (i = 0; i < N; ++i) failed |= keys[i] != sorted[i];
    failed |= sum != 1145 || max != 1000;
    printf("gpuprim_consumer: libgpuprim %s on %s: sum %d, max %d, sorted %s\n", gpuprim_version_string(),
           backend == GPUPRIM_BACKEND_CUDA ? "CUDA" : "CPU", (int)sum, (int)max, failed ? "WRONG" : "ok");
    gpuprim_buffer_destroy(ctx, buf);
    gpuprim_context_destroy(ctx);
    return failed ? 1 : 0;
}
