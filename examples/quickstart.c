/* SPDX-License-Identifier: Apache-2.0 */
/* libgpuprim quick start: sum, prefix-sum and sort an array. */
#include <gpuprim/gpuprim.h>

#include <stdio.h>

#define CHECK(call)                                                                       \
    do {                                                                                  \
        gpuprim_status_t s = (call);                                                      \
        if (s != GPUPRIM_SUCCESS) {                                                       \
            fprintf(stderr, "%s: %s: %s\n", #call, gpuprim_get_error_string(s),           \
                    gpuprim_context_last_error(ctx));                                     \
            return 1;                                                                     \
        }                                                                                 \
    } while (0)

int main(void) {
    float data[6] = {3.5f, -1.0f, 8.25f, 0.5f, -4.0f, 2.0f}, total;
    char message[256];
    gpuprim_context_t ctx; /* CUDA if usable (or GPUPRIM_BACKEND=cpu|cuda), else CPU */
    gpuprim_buffer_t buf;
    int i;

    if (gpuprim_context_create(NULL, &ctx, message, sizeof message) != GPUPRIM_SUCCESS) {
        fprintf(stderr, "no context: %s\n", message);
        return 1;
    }
    CHECK(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_F32, 6, &buf));
    CHECK(gpuprim_buffer_upload(ctx, buf, 0, data, 6));

    CHECK(gpuprim_reduce(ctx, GPUPRIM_OP_SUM, buf, &total));                   /* 9.25 */
    CHECK(gpuprim_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, buf, buf)); /* in place */
    CHECK(gpuprim_sort(ctx, buf, NULL, buf, NULL, GPUPRIM_ORDER_DESCENDING));
    CHECK(gpuprim_buffer_download(ctx, buf, 0, data, 6));

    printf("sum %.2f; prefix sums, largest first:", total);
    for (i = 0; i < 6; ++i) printf(" %.2f", data[i]); /* 11.25 10.75 9.25 7.25 3.50 2.50 */
    printf("\n");

    CHECK(gpuprim_buffer_destroy(ctx, buf));
    CHECK(gpuprim_context_destroy(ctx));
    return 0;
}
