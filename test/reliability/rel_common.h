/* SPDX-License-Identifier: Apache-2.0 */
/* Small helpers shared by the reliability tests (C99). */
#ifndef GPUPRIM_REL_COMMON_H
#define GPUPRIM_REL_COMMON_H

#include <gpuprim/gpuprim.h>

#include "../skip_note.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline void rel_fail(const char *file, int line, const char *format, ...) {
    va_list args;
    fprintf(stderr, "FAIL %s:%d: ", file, line);
    va_start(args, format);
    vfprintf(stderr, format, args);
    va_end(args);
    fputc('\n', stderr);
    exit(1);
}

#define REL_CHECK(condition, ...)                                  \
    do {                                                           \
        if (!(condition)) rel_fail(__FILE__, __LINE__, __VA_ARGS__); \
    } while (0)

/* A call that must succeed; the message names the call and the context's text. */
#define REL_OK(context, call)                                                             \
    do {                                                                                  \
        gpuprim_status_t rel_status_ = (call);                                            \
        if (rel_status_ != GPUPRIM_SUCCESS)                                               \
            rel_fail(__FILE__, __LINE__, "%s -> %d (%s): %s", #call, (int)rel_status_,    \
                     gpuprim_get_error_string(rel_status_),                               \
                     gpuprim_context_last_error(context));                                \
    } while (0)

static inline gpuprim_context_t rel_context(gpuprim_backend_t backend) {
    gpuprim_context_options_t options;
    gpuprim_context_t context = NULL;
    char message[512];
    gpuprim_status_t status;
    gpuprim_context_options_init(&options);
    options.backend = backend;
    status = gpuprim_context_create(&options, &context, message, sizeof message);
    REL_CHECK(status == GPUPRIM_SUCCESS, "context_create(backend %d) -> %d: %s", (int)backend,
              (int)status, message);
    return context;
}

static inline const char *rel_backend_name(gpuprim_context_t context) {
    gpuprim_backend_t backend = GPUPRIM_BACKEND_AUTO;
    if (gpuprim_context_get_backend(context, &backend) != GPUPRIM_SUCCESS) return "?";
    return backend == GPUPRIM_BACKEND_CUDA ? "CUDA" : "CPU";
}

/* The "context still works" probe: sorts n descending ints into ascending
 * order and checks the result. Returns the status of the first call that
 * failed, or SUCCESS when every call worked (a wrong result fails the test). */
static inline gpuprim_status_t rel_small_sort(gpuprim_context_t context, int n) {
    gpuprim_buffer_t keys = NULL;
    gpuprim_status_t status;
    int *host = (int *)malloc(sizeof(int) * (size_t)n);
    int i;
    REL_CHECK(host != NULL, "malloc");
    for (i = 0; i < n; ++i) host[i] = n - i - 1;
    status = gpuprim_buffer_create(context, GPUPRIM_DTYPE_I32, (uint64_t)n, &keys);
    if (status == GPUPRIM_SUCCESS)
        status = gpuprim_buffer_upload(context, keys, 0, host, (uint64_t)n);
    if (status == GPUPRIM_SUCCESS)
        status = gpuprim_sort(context, keys, NULL, keys, NULL, GPUPRIM_ORDER_ASCENDING);
    if (status == GPUPRIM_SUCCESS)
        status = gpuprim_buffer_download(context, keys, 0, host, (uint64_t)n);
    if (status == GPUPRIM_SUCCESS)
        for (i = 0; i < n; ++i)
            REL_CHECK(host[i] == i, "sorted[%d] = %d after a successful sort", i, host[i]);
    if (keys) gpuprim_buffer_destroy(context, keys);
    free(host);
    return status;
}

#endif
