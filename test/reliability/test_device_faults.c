/* SPDX-License-Identifier: Apache-2.0 */
/* Device faults on the CUDA backend (exit 77, "skipped", on any other).
 *   rel_device_faults wrap          host / misaligned pointers refused with
 *                                   INVALID_ARGUMENT; real device memory wraps.
 *   rel_device_faults fault_reduce  a real CUDA fault inside a blocking call;
 *   rel_device_faults fault_async   ... inside a stream-ordered call, seen by
 *                                   the call, the next synchronize or download.
 * The fault: a buffer wrapping a real 1 MiB device allocation with a count of
 * 2^36 elements (256 GiB), so the kernel reads far past the allocation: CUDA
 * reports an illegal address. The call must return GPUPRIM_ERROR_DEVICE with
 * CUDA's error name in the message.
 *
 * An illegal address is a "sticky" CUDA error: it poisons the CUDA context of
 * the whole process, and only cudaDeviceReset() (which no library may call on
 * its users' behalf) clears it. So after the fault the test asserts what must
 * hold either way: every later call on any CUDA context returns SUCCESS with
 * a correct result or GPUPRIM_ERROR_DEVICE (never a wrong result, a crash, a
 * hang, or another status); contexts can be destroyed; and a CPU context
 * still computes correctly. It prints what it saw, including whether a fresh
 * CUDA context could be created and compute. Each mode runs in its own
 * process (its own ctest entry). */
#include "rel_common.h"

#include <stdint.h>

static int mentions_cuda_error(const char *message) {
    return message && strstr(message, "cudaError") != NULL;
}

static void *device_address(gpuprim_context_t ctx, gpuprim_buffer_t buffer) {
    void *data = NULL;
    REL_OK(ctx, gpuprim_buffer_get_info(ctx, buffer, NULL, NULL, &data));
    return data;
}

static int run_wrap(gpuprim_context_t ctx) {
    float host[256];
    float *heap = (float *)malloc(256 * sizeof(float));
    gpuprim_buffer_t real = NULL, wrapped = (gpuprim_buffer_t)(void *)host;
    gpuprim_status_t status;
    float values[256], total = 0;
    char *device;
    int i;
    for (i = 0; i < 256; ++i) values[i] = (float)i;

    /* (a) host memory, stack and heap. */
    status = gpuprim_buffer_wrap(ctx, GPUPRIM_DTYPE_F32, host, 256, &wrapped);
    printf("  wrap(stack pointer) -> %d: %s\n", (int)status, gpuprim_context_last_error(ctx));
    REL_CHECK(status == GPUPRIM_ERROR_INVALID_ARGUMENT, "wrapping a stack pointer -> %d", (int)status);
    REL_CHECK(wrapped == (gpuprim_buffer_t)(void *)host, "failed wrap wrote its output");
    REL_CHECK(strstr(gpuprim_context_last_error(ctx), "host") != NULL, "message does not say host");
    status = gpuprim_buffer_wrap(ctx, GPUPRIM_DTYPE_F32, heap, 256, &wrapped);
    printf("  wrap(malloc pointer) -> %d: %s\n", (int)status, gpuprim_context_last_error(ctx));
    REL_CHECK(status == GPUPRIM_ERROR_INVALID_ARGUMENT, "wrapping a malloc pointer -> %d", (int)status);

    /* Real device memory wraps; misaligned device memory does not. */
    REL_OK(ctx, gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_F32, 256, &real));
    REL_OK(ctx, gpuprim_buffer_upload(ctx, real, 0, values, 256));
    device = (char *)device_address(ctx, real);
    status = gpuprim_buffer_wrap(ctx, GPUPRIM_DTYPE_F32, device + 2, 16, &wrapped);
    printf("  wrap(misaligned device pointer) -> %d: %s\n", (int)status,
           gpuprim_context_last_error(ctx));
    REL_CHECK(status == GPUPRIM_ERROR_INVALID_ARGUMENT, "misaligned wrap -> %d", (int)status);
    REL_OK(ctx, gpuprim_buffer_wrap(ctx, GPUPRIM_DTYPE_F32, device, 256, &wrapped));
    REL_OK(ctx, gpuprim_reduce(ctx, GPUPRIM_OP_SUM, wrapped, &total));
    REL_CHECK(total == 32640.0f, "sum over wrapped device memory = %g", (double)total);
    REL_OK(ctx, gpuprim_buffer_destroy(ctx, wrapped));
    REL_OK(ctx, gpuprim_buffer_destroy(ctx, real));
    free(heap);
    return 0;
}

/* A later call: fine if it succeeds with the right answer or says DEVICE. */
static const char *after_fault(gpuprim_context_t ctx, const char *what, gpuprim_status_t status) {
    printf("  after the fault, %s -> %d (%s)%s%s\n", what, (int)status,
           gpuprim_get_error_string(status), status ? ": " : "",
           status ? gpuprim_context_last_error(ctx) : "");
    REL_CHECK(status == GPUPRIM_SUCCESS || status == GPUPRIM_ERROR_DEVICE,
              "%s after a device fault -> %d, expected SUCCESS or DEVICE", what, (int)status);
    if (status == GPUPRIM_ERROR_DEVICE)
        REL_CHECK(mentions_cuda_error(gpuprim_context_last_error(ctx)),
                  "DEVICE message without CUDA's error: %s", gpuprim_context_last_error(ctx));
    return status == GPUPRIM_SUCCESS ? "works" : "DEVICE";
}

static int run_fault(gpuprim_context_t ctx, int asynchronous) {
    const uint64_t real_count = 1 << 18; /* 1 MiB of f32 */
    const uint64_t huge_count = (uint64_t)1 << 36;
    gpuprim_buffer_t real = NULL, huge = NULL, result = NULL, swap;
    gpuprim_status_t status, seen = GPUPRIM_SUCCESS;
    gpuprim_context_options_t options;
    gpuprim_context_t fresh = NULL, cpu;
    char message[512];
    float total = 0, first = 0;
    const char *where = "the call";

    REL_OK(ctx, gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_F32, real_count, &real));
    REL_OK(ctx, gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_F32, real_count, &result));
    /* The bad buffer spans 256 GiB upward from its base, so the result
     * buffer must lie below it, or reduce_to_buffer rightly refuses the
     * overlap with INVALID_ARGUMENT. */
    if ((uintptr_t)device_address(ctx, result) > (uintptr_t)device_address(ctx, real)) {
        swap = real;
        real = result;
        result = swap;
    }
    REL_OK(ctx, gpuprim_buffer_wrap(ctx, GPUPRIM_DTYPE_F32, device_address(ctx, real), huge_count,
                                    &huge));
    if (!asynchronous) {
        seen = gpuprim_reduce(ctx, GPUPRIM_OP_SUM, huge, &total);
    } else {
        seen = gpuprim_reduce_to_buffer(ctx, GPUPRIM_OP_SUM, huge, result);
        printf("  reduce_to_buffer over the bad buffer -> %d\n", (int)seen);
        if (seen == GPUPRIM_SUCCESS) {
            where = "synchronize";
            seen = gpuprim_context_synchronize(ctx);
        }
        if (seen == GPUPRIM_SUCCESS) {
            where = "download";
            seen = gpuprim_buffer_download(ctx, result, 0, &first, 1);
        }
    }
    printf("  fault reported by %s: %d (%s): %s\n", where, (int)seen,
           gpuprim_get_error_string(seen), gpuprim_context_last_error(ctx));
    REL_CHECK(seen == GPUPRIM_ERROR_DEVICE, "reading past the allocation gave %d, expected DEVICE",
              (int)seen);
    REL_CHECK(mentions_cuda_error(gpuprim_context_last_error(ctx)),
              "the DEVICE message lacks CUDA's error name: %s", gpuprim_context_last_error(ctx));

    /* The same context, later. */
    after_fault(ctx, "synchronize (same context)", gpuprim_context_synchronize(ctx));
    status = rel_small_sort(ctx, 1000);
    printf("  same context computes: %s\n", after_fault(ctx, "small sort (same context)", status));
    status = gpuprim_buffer_destroy(ctx, huge);
    REL_CHECK(status == GPUPRIM_SUCCESS, "destroying the wrapped buffer -> %d", (int)status);
    status = gpuprim_buffer_destroy(ctx, real);
    REL_CHECK(status == GPUPRIM_SUCCESS || status == GPUPRIM_ERROR_DEVICE,
              "destroying a buffer after the fault -> %d", (int)status);
    REL_CHECK(gpuprim_context_destroy(ctx) == GPUPRIM_SUCCESS, "context_destroy after the fault");

    /* A fresh CUDA context in the same process. */
    gpuprim_context_options_init(&options);
    options.backend = GPUPRIM_BACKEND_CUDA;
    status = gpuprim_context_create(&options, &fresh, message, sizeof message);
    printf("  after the fault, a fresh CUDA context_create -> %d (%s)%s%s\n", (int)status,
           gpuprim_get_error_string(status), status ? ": " : "", status ? message : "");
    /* DEVICE is expected; BACKEND_UNAVAILABLE is what the backend says if
     * even cudaGetDeviceCount() fails then (misleading, but not wrong). */
    REL_CHECK(status == GPUPRIM_SUCCESS || status == GPUPRIM_ERROR_DEVICE ||
                  status == GPUPRIM_ERROR_BACKEND_UNAVAILABLE,
              "fresh context_create after the fault -> %d", (int)status);
    if (status != GPUPRIM_SUCCESS)
        REL_CHECK(strstr(message, "cudaError") != NULL, "its message lacks CUDA's error: %s", message);
    REL_CHECK((status == GPUPRIM_SUCCESS) == (fresh != NULL), "context handle vs status");
    if (fresh) {
        status = rel_small_sort(fresh, 100000);
        printf("  fresh CUDA context computes: %s\n",
               after_fault(fresh, "small sort (fresh context)", status));
        REL_CHECK(gpuprim_context_destroy(fresh) == GPUPRIM_SUCCESS, "destroy fresh context");
    }

    /* AUTO: CUDA if the device still counts as usable, else CPU. */
    gpuprim_context_options_init(&options);
    fresh = NULL;
    status = gpuprim_context_create(&options, &fresh, message, sizeof message);
    printf("  after the fault, an AUTO context_create -> %d (%s), backend %s%s%s\n", (int)status,
           gpuprim_get_error_string(status), fresh ? rel_backend_name(fresh) : "-",
           status ? ": " : "", status ? message : "");
    if (fresh) {
        status = rel_small_sort(fresh, 1000);
        printf("  AUTO context computes: %s\n", after_fault(fresh, "small sort (AUTO context)", status));
        REL_CHECK(gpuprim_context_destroy(fresh) == GPUPRIM_SUCCESS, "destroy AUTO context");
    }

    /* The CPU backend is unaffected. */
    cpu = rel_context(GPUPRIM_BACKEND_CPU);
    status = rel_small_sort(cpu, 100000);
    REL_CHECK(status == GPUPRIM_SUCCESS, "CPU context after a CUDA fault -> %d: %s", (int)status,
              gpuprim_context_last_error(cpu));
    printf("  a CPU context still computes correctly\n");
    REL_OK(cpu, gpuprim_context_destroy(cpu));
    return 0;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "wrap";
    gpuprim_context_options_t options;
    gpuprim_context_t ctx = NULL;
    gpuprim_backend_t backend = GPUPRIM_BACKEND_AUTO;
    char message[512];
    gpuprim_status_t status;
    gpuprim_context_options_init(&options);
    status = gpuprim_context_create(&options, &ctx, message, sizeof message);
    if (status != GPUPRIM_SUCCESS) {
        return tc_skip("SKIP: no context: %s", message);
    }
    REL_OK(ctx, gpuprim_context_get_backend(ctx, &backend));
    if (backend != GPUPRIM_BACKEND_CUDA) {
        const int skipped = tc_skip("SKIP: the context runs on %s, not CUDA", rel_backend_name(ctx));
        gpuprim_context_destroy(ctx);
        return skipped;
    }
    printf("device faults, mode %s\n", mode);
    if (strcmp(mode, "wrap") == 0) {
        run_wrap(ctx);
        REL_OK(ctx, gpuprim_context_destroy(ctx));
    } else if (strcmp(mode, "fault_reduce") == 0) {
        run_fault(ctx, 0);
    } else if (strcmp(mode, "fault_async") == 0) {
        run_fault(ctx, 1);
    } else {
        fprintf(stderr, "unknown mode '%s'\n", mode);
        return 2;
    }
    printf("device faults (%s): all checks passed\n", mode);
    return 0;
}
