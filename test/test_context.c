/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Contexts (create/destroy, options, GPUPRIM_BACKEND, backend and device
 * queries, synchronize, workspace), buffers (create, upload/download whole
 * and by range, wrap, info) and the version / dtype / status helpers.
 */
#include "test_common.h"

static void test_version_and_names(void) {
    char expected[32];
    int s;
    tc_where("version and names");
    CHECK(gpuprim_version_number() == GPUPRIM_VERSION_NUMBER);
    snprintf(expected, sizeof expected, "%d.%d.%d", GPUPRIM_VERSION_MAJOR, GPUPRIM_VERSION_MINOR,
             GPUPRIM_VERSION_PATCH);
    CHECKF(gpuprim_version_string() && strcmp(gpuprim_version_string(), expected) == 0,
           "version string \"%s\", expected \"%s\"", gpuprim_version_string(), expected);

    CHECK(gpuprim_dtype_size(GPUPRIM_DTYPE_I32) == 4);
    CHECK(gpuprim_dtype_size(GPUPRIM_DTYPE_U32) == 4);
    CHECK(gpuprim_dtype_size(GPUPRIM_DTYPE_F32) == 4);
    CHECK(gpuprim_dtype_size(GPUPRIM_DTYPE_I64) == 8);
    CHECK(gpuprim_dtype_size(GPUPRIM_DTYPE_U64) == 8);
    CHECK(gpuprim_dtype_size(GPUPRIM_DTYPE_F64) == 8);
    CHECK(gpuprim_dtype_size(GPUPRIM_DTYPE_F16) == 2);
    CHECK(gpuprim_dtype_size(GPUPRIM_DTYPE_BF16) == 2);
    CHECK(gpuprim_dtype_size(GPUPRIM_DTYPE_I8) == 1);
    CHECK(gpuprim_dtype_size(GPUPRIM_DTYPE_U8) == 1);
    CHECK(gpuprim_dtype_size(GPUPRIM_DTYPE_I16) == 2);
    CHECK(gpuprim_dtype_size(GPUPRIM_DTYPE_U16) == 2);
    CHECK(GPUPRIM_DTYPE_F16 == 6 && GPUPRIM_DTYPE_BF16 == 7 && GPUPRIM_DTYPE_I8 == 8 && GPUPRIM_DTYPE_U8 == 9 &&
          GPUPRIM_DTYPE_I16 == 10 && GPUPRIM_DTYPE_U16 == 11);
    CHECK(gpuprim_dtype_size((gpuprim_dtype_t)12) == 0);
    CHECK(gpuprim_dtype_size((gpuprim_dtype_t)-1) == 0);

    /* every status has its own non-empty name; unknown values are "unknown status" */
    for (s = GPUPRIM_SUCCESS; s <= GPUPRIM_ERROR_NOT_CAPTURABLE; ++s) {
        const char *name = gpuprim_get_error_string((gpuprim_status_t)s);
        int t;
        CHECKF(name && *name && strcmp(name, "unknown status") != 0, "status %d has name \"%s\"", s,
               name ? name : "(null)");
        for (t = GPUPRIM_SUCCESS; t < s && name; ++t) {
            const char *other = gpuprim_get_error_string((gpuprim_status_t)t);
            CHECKF(!other || strcmp(other, name) != 0, "statuses %d and %d share the name \"%s\"", t, s, name);
        }
    }
    CHECK(strcmp(gpuprim_get_error_string(GPUPRIM_ERROR_INVALID_HANDLE), "invalid handle") == 0);
    CHECK(strcmp(gpuprim_get_error_string((gpuprim_status_t)15), "unknown status") == 0);
    CHECK(strcmp(gpuprim_get_error_string((gpuprim_status_t)-1), "unknown status") == 0);
    CHECK(strcmp(gpuprim_get_error_string((gpuprim_status_t)1000000), "unknown status") == 0);
}

/* The stable structs' sizes in this release series (64-bit): the header
 * promises them unchanged within 0.MINOR.x, whose shared library keeps one
 * SONAME. A change to a stable struct needs the next minor version (a new
 * SONAME, so programs built against this one never load it) and a new row
 * here; a size changed under the same version fails this check. */
static void test_stable_struct_sizes(void) {
    tc_where("stable struct sizes of %s", gpuprim_version_string());
    if (sizeof(void *) != 8) return;
#if GPUPRIM_VERSION_MAJOR == 0 && GPUPRIM_VERSION_MINOR == 4
    CHECKF(sizeof(gpuprim_context_options_t) == 56, "gpuprim_context_options_t is %zu bytes in 0.4",
           sizeof(gpuprim_context_options_t));
    CHECKF(sizeof(gpuprim_sort_options_t) == 24, "gpuprim_sort_options_t is %zu bytes in 0.4",
           sizeof(gpuprim_sort_options_t));
#else
#    error "a new release series: write its stable structs' sizes here"
#endif
}

static void test_options_init(void) {
    gpuprim_context_options_t o;
    tc_where("options init");
    memset(&o, 0x7B, sizeof o);
    gpuprim_context_options_init(&o);
    CHECK(o.struct_size == sizeof(gpuprim_context_options_t));
    CHECK(o.backend == GPUPRIM_BACKEND_AUTO);
    CHECK(o.device_ordinal == 0);
    CHECK(o.cuda_stream == NULL);
    gpuprim_context_options_init(NULL); /* does nothing */
}

/* Creates a context with the given backend option (AUTO with env), returns
 * the status and the resulting backend (AUTO when creation failed). */
static gpuprim_status_t try_create(int backend, gpuprim_backend_t *got_backend, char *message, size_t cap) {
    gpuprim_context_options_t o;
    gpuprim_context_t ctx = (gpuprim_context_t)&o; /* must be replaced: by a handle or NULL */
    gpuprim_status_t status;
    gpuprim_context_options_init(&o);
    o.backend = backend;
    *got_backend = GPUPRIM_BACKEND_AUTO;
    status = gpuprim_context_create(&o, &ctx, message, cap);
    if (status == GPUPRIM_SUCCESS) {
        CHECK(ctx != NULL && ctx != (gpuprim_context_t)&o);
        if (ctx && ctx != (gpuprim_context_t)&o) {
            CHECK_OK(gpuprim_context_get_backend(ctx, got_backend));
            CHECK_OK(gpuprim_context_destroy(ctx));
        }
    } else {
        CHECKF(ctx == NULL, "a failed gpuprim_context_create must set *context to NULL");
        CHECKF(!message || !cap || message[0], "a failed gpuprim_context_create left no message");
    }
    return status;
}

static void test_backend_selection(void) {
    const char *saved = getenv("GPUPRIM_BACKEND");
    char *saved_copy = saved ? strcpy((char *)tc_xmalloc(strlen(saved) + 1), saved) : NULL;
    char message[256];
    gpuprim_backend_t b;
    gpuprim_status_t cuda_status;
    int cuda_usable;

    tc_where("backend selection");
    /* explicit CPU always works, whatever the environment says */
    tc_setenv("GPUPRIM_BACKEND", "cuda");
    CHECK_OK(try_create(GPUPRIM_BACKEND_CPU, &b, message, sizeof message));
    CHECK(b == GPUPRIM_BACKEND_CPU);

    /* explicit CUDA: usable or BACKEND_UNAVAILABLE, never a fallback */
    tc_setenv("GPUPRIM_BACKEND", "cpu");
    message[0] = 0;
    cuda_status = try_create(GPUPRIM_BACKEND_CUDA, &b, message, sizeof message);
    cuda_usable = cuda_status == GPUPRIM_SUCCESS;
    CHECKF(cuda_usable || cuda_status == GPUPRIM_ERROR_BACKEND_UNAVAILABLE,
           "explicit CUDA gave %d (%s): %s", (int)cuda_status, gpuprim_get_error_string(cuda_status), message);
    if (cuda_usable) CHECK(b == GPUPRIM_BACKEND_CUDA);
    printf("test_context: CUDA backend %s\n", cuda_usable ? "usable" : "not usable");

    /* env decides for AUTO: read at create time */
    tc_setenv("GPUPRIM_BACKEND", "cpu");
    CHECK_OK(try_create(GPUPRIM_BACKEND_AUTO, &b, message, sizeof message));
    CHECK(b == GPUPRIM_BACKEND_CPU);
    tc_setenv("GPUPRIM_BACKEND", "cuda");
    message[0] = 0;
    CHECK_STATUS(try_create(GPUPRIM_BACKEND_AUTO, &b, message, sizeof message),
                 cuda_usable ? GPUPRIM_SUCCESS : GPUPRIM_ERROR_BACKEND_UNAVAILABLE);
    CHECK(b == (cuda_usable ? GPUPRIM_BACKEND_CUDA : GPUPRIM_BACKEND_AUTO));
    if (!cuda_usable) CHECKF(message[0] != 0, "no message for an unavailable CUDA backend");

    /* a bad value is an error, with a message naming the variable */
    tc_setenv("GPUPRIM_BACKEND", "gpu-please");
    message[0] = 0;
    CHECK_STATUS(try_create(GPUPRIM_BACKEND_AUTO, &b, message, sizeof message), GPUPRIM_ERROR_INVALID_ARGUMENT);
    CHECKF(tc_contains(message, "GPUPRIM_BACKEND"), "message \"%s\" does not name GPUPRIM_BACKEND", message);
    {
        /* NULL options are the defaults: AUTO, so the env applies too */
        gpuprim_context_t ctx = (gpuprim_context_t)message;
        CHECK_STATUS(gpuprim_context_create(NULL, &ctx, NULL, 0), GPUPRIM_ERROR_INVALID_ARGUMENT);
        CHECK(ctx == NULL);
    }
    /* ... but an explicit backend ignores it */
    CHECK_OK(try_create(GPUPRIM_BACKEND_CPU, &b, message, sizeof message));

    /* the env is read when a context is created, not later */
    {
        gpuprim_context_t ctx = NULL;
        int32_t values[3] = {1, 2, 3}, sum = 0;
        gpuprim_buffer_t buf = NULL;
        tc_setenv("GPUPRIM_BACKEND", "cpu");
        CHECK_OK(gpuprim_context_create(NULL, &ctx, NULL, 0));
        tc_setenv("GPUPRIM_BACKEND", "nonsense");
        if (ctx) {
            CHECK_OK(gpuprim_context_get_backend(ctx, &b));
            CHECK(b == GPUPRIM_BACKEND_CPU);
            CHECK_OK(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_I32, 3, &buf));
            CHECK_OK(gpuprim_buffer_upload(ctx, buf, 0, values, 3));
            CHECK_OK(gpuprim_reduce(ctx, GPUPRIM_OP_SUM, buf, &sum));
            CHECK(sum == 6);
            CHECK_OK(gpuprim_context_destroy(ctx));
        }
    }

    /* unset (and empty): CUDA when usable, else CPU */
    tc_setenv("GPUPRIM_BACKEND", NULL);
    CHECK_OK(try_create(GPUPRIM_BACKEND_AUTO, &b, message, sizeof message));
    CHECK(b == (cuda_usable ? GPUPRIM_BACKEND_CUDA : GPUPRIM_BACKEND_CPU));
    tc_setenv("GPUPRIM_BACKEND", "");
    CHECK_OK(try_create(GPUPRIM_BACKEND_AUTO, &b, message, sizeof message));
    CHECK(b == (cuda_usable ? GPUPRIM_BACKEND_CUDA : GPUPRIM_BACKEND_CPU));

    /* the error message is truncated to the capacity and NUL-terminated */
    {
        char small[6];
        gpuprim_context_t ctx = NULL;
        memset(small, 'x', sizeof small);
        tc_setenv("GPUPRIM_BACKEND", "bogus");
        CHECK_STATUS(gpuprim_context_create(NULL, &ctx, small, 5), GPUPRIM_ERROR_INVALID_ARGUMENT);
        CHECKF(memchr(small, 0, 5) != NULL && strlen(small) <= 4 && small[5] == 'x',
               "error_message not truncated to 5 bytes with its NUL");
    }

    tc_setenv("GPUPRIM_BACKEND", saved_copy);
    free(saved_copy);
}

static void test_queries(gpuprim_context_t ctx) {
    gpuprim_backend_t backend = (gpuprim_backend_t)99;
    int32_t ordinal = -99;
    char name[128], tiny[4];
    tc_where("context queries");
    CHECK_OK(gpuprim_context_get_backend(ctx, &backend));
    CHECK(backend == GPUPRIM_BACKEND_CPU || backend == GPUPRIM_BACKEND_CUDA);
    memset(name, 'x', sizeof name);
    CHECK_OK(gpuprim_context_get_device(ctx, &ordinal, name, sizeof name));
    CHECK(memchr(name, 0, sizeof name) != NULL);
    if (backend == GPUPRIM_BACKEND_CPU) {
        CHECK(ordinal == -1);
        CHECKF(strcmp(name, "CPU") == 0, "CPU device name \"%s\"", name);
    } else {
        CHECK(ordinal >= 0);
        CHECK(strlen(name) > 0);
    }
    /* either output may be NULL; the name is truncated to the capacity */
    CHECK_OK(gpuprim_context_get_device(ctx, NULL, NULL, 0));
    CHECK_OK(gpuprim_context_get_device(ctx, &ordinal, NULL, 0));
    memset(tiny, 'x', sizeof tiny);
    CHECK_OK(gpuprim_context_get_device(ctx, NULL, tiny, 3));
    CHECKF(memchr(tiny, 0, 3) != NULL && tiny[3] == 'x' && strncmp(tiny, name, strlen(tiny)) == 0,
           "device name not truncated to 3 bytes with its NUL");
    memset(tiny, 'x', sizeof tiny);
    CHECK_OK(gpuprim_context_get_device(ctx, NULL, tiny, 1));
    CHECK(tiny[0] == 0 && tiny[1] == 'x');

    CHECK_OK(gpuprim_context_synchronize(ctx));
    CHECK(strcmp(gpuprim_context_last_error(ctx), "") == 0);
    CHECK(strcmp(gpuprim_context_last_error(NULL), "invalid context handle") == 0);

    /* options: default values are accepted; CPU ignores device_ordinal */
    {
        gpuprim_context_options_t o;
        gpuprim_context_t c = NULL;
        gpuprim_context_options_init(&o);
        o.backend = GPUPRIM_BACKEND_CPU;
        o.device_ordinal = 7;
        CHECK_OK(gpuprim_context_create(&o, &c, NULL, 0));
        if (c) {
            CHECK_OK(gpuprim_context_get_device(c, &ordinal, name, sizeof name));
            CHECK(ordinal == -1);
            CHECK_OK(gpuprim_context_destroy(c));
        }
        CHECK_OK(gpuprim_context_destroy(NULL)); /* no-op */
    }
}

static void test_buffers(gpuprim_context_t ctx) {
    size_t di;
    const uint64_t n = 1000;
    for (di = 0; di < TC_DTYPE_COUNT; ++di) {
        gpuprim_dtype_t d = tc_all_dtypes[di], got_dtype = (gpuprim_dtype_t)99;
        size_t sz = tc_size(d);
        unsigned char *data = (unsigned char *)tc_xmalloc(n * sz), *back = (unsigned char *)tc_xmalloc(n * sz);
        unsigned char *patch = (unsigned char *)tc_xmalloc(100 * sz), *want = (unsigned char *)tc_xmalloc(n * sz);
        gpuprim_buffer_t b = NULL, empty = NULL;
        uint64_t count = 12345;
        void *address = NULL;
        tc_where("buffers %s", tc_dtype_name(d));

        REQUIRE_OK(gpuprim_buffer_create(ctx, d, n, &b));
        CHECK_OK(gpuprim_buffer_get_info(ctx, b, &got_dtype, &count, &address));
        CHECK(got_dtype == d);
        CHECK(count == n);
        CHECK(address != NULL);
        CHECKF(((uintptr_t)address % sz) == 0, "buffer address %p not aligned to %zu", address, sz);
        CHECK_OK(gpuprim_buffer_get_info(ctx, b, NULL, NULL, NULL));

        /* whole */
        tc_fill(d, data, n, TC_RANDOM_BITS);
        CHECK_OK(gpuprim_buffer_upload(ctx, b, 0, data, n));
        tc_poison_host(d, back, n);
        CHECK_OK(gpuprim_buffer_download(ctx, b, 0, back, n));
        CHECK_ARRAY_EQ(d, back, data, n, "download after a whole upload");

        /* a range [300, 400) overwritten; the rest stays */
        tc_fill(d, patch, 100, TC_RANDOM_BITS);
        memcpy(want, data, n * sz);
        memcpy(want + 300 * sz, patch, 100 * sz);
        CHECK_OK(gpuprim_buffer_upload(ctx, b, 300, patch, 100));
        CHECK_OK(gpuprim_buffer_download(ctx, b, 0, back, n));
        CHECK_ARRAY_EQ(d, back, want, n, "download after a range upload");
        /* ranges downloaded: middle, tail ending exactly at the end, one element */
        tc_poison_host(d, back, n);
        CHECK_OK(gpuprim_buffer_download(ctx, b, 250, back, 200));
        CHECK_ARRAY_EQ(d, back, want + 250 * sz, 200, "range download [250, 450)");
        CHECK(tc_get(d, back, 200) == ((tc_poison_bits(d) ^ (200 & 0xF)) & tc_mask(d)));
        CHECK_OK(gpuprim_buffer_download(ctx, b, n - 7, back, 7));
        CHECK_ARRAY_EQ(d, back, want + (n - 7) * sz, 7, "range download of the last 7");
        CHECK_OK(gpuprim_buffer_download(ctx, b, 999, back, 1));
        CHECK(tc_get(d, back, 0) == tc_get(d, want, 999));
        /* count 0: host pointer may be NULL, also at offset == count */
        CHECK_OK(gpuprim_buffer_upload(ctx, b, 0, NULL, 0));
        CHECK_OK(gpuprim_buffer_upload(ctx, b, n, NULL, 0));
        CHECK_OK(gpuprim_buffer_download(ctx, b, 5, NULL, 0));
        CHECK_OK(gpuprim_buffer_download(ctx, b, n, back, 0));
        CHECK_OK(gpuprim_buffer_download(ctx, b, 0, back, n));
        CHECK_ARRAY_EQ(d, back, want, n, "buffer after empty uploads");

        /* empty buffers exist and work */
        CHECK_OK(gpuprim_buffer_create(ctx, d, 0, &empty));
        CHECK(empty != NULL);
        if (empty) {
            count = 99;
            CHECK_OK(gpuprim_buffer_get_info(ctx, empty, &got_dtype, &count, NULL));
            CHECK(count == 0 && got_dtype == d);
            CHECK_OK(gpuprim_buffer_upload(ctx, empty, 0, NULL, 0));
            CHECK_OK(gpuprim_buffer_destroy(ctx, empty));
        }

        CHECK_OK(gpuprim_buffer_destroy(ctx, b));
        CHECK_OK(gpuprim_buffer_destroy(ctx, NULL)); /* no-op */
        free(data);
        free(back);
        free(patch);
        free(want);
    }
}

static void test_wrap(gpuprim_context_t ctx) {
    int is_cuda = tc_backend_is_cuda(ctx);
    uint32_t host[64], back[64];
    gpuprim_buffer_t owner = NULL, view = NULL, host_view = NULL;
    void *address = NULL, *view_address = NULL;
    uint64_t count = 0, i;
    uint32_t sum = 0, want_sum = 0;
    gpuprim_dtype_t dtype;
    tc_where("wrap");
    for (i = 0; i < 64; ++i) {
        host[i] = (uint32_t)(i * 7 + 1);
        if (i >= 8) want_sum += host[i];
    }

    /* memory of the context's address space (device memory on CUDA) */
    owner = tc_buffer_from(ctx, GPUPRIM_DTYPE_U32, host, 64);
    REQUIRE_OK(gpuprim_buffer_get_info(ctx, owner, NULL, NULL, &address));
    CHECK_OK(gpuprim_buffer_wrap(ctx, GPUPRIM_DTYPE_U32, (uint32_t *)address + 8, 56, &view));
    if (view) {
        CHECK_OK(gpuprim_buffer_get_info(ctx, view, &dtype, &count, &view_address));
        CHECK(dtype == GPUPRIM_DTYPE_U32 && count == 56 && view_address == (uint32_t *)address + 8);
        CHECK_OK(gpuprim_reduce(ctx, GPUPRIM_OP_SUM, view, &sum));
        CHECK(sum == want_sum);
        /* writes through the view land in the owner's memory */
        {
            uint32_t one = 0xABCDEF01u;
            CHECK_OK(gpuprim_buffer_upload(ctx, view, 0, &one, 1));
            CHECK_OK(gpuprim_buffer_download(ctx, owner, 8, back, 1));
            CHECK(back[0] == one);
        }
        /* destroying the view leaves the memory alone */
        CHECK_OK(gpuprim_buffer_destroy(ctx, view));
        CHECK_OK(gpuprim_buffer_download(ctx, owner, 0, back, 8));
        CHECK(memcmp(back, host, 8 * 4) == 0);
    }
    CHECK_OK(gpuprim_buffer_destroy(ctx, owner));

    /* count 0 may have NULL data; any other address is not used either
     * (misaligned taken) and get_info reports NULL */
    view = NULL;
    CHECK_OK(gpuprim_buffer_wrap(ctx, GPUPRIM_DTYPE_F64, NULL, 0, &view));
    if (view) CHECK_OK(gpuprim_buffer_destroy(ctx, view));
    view = NULL;
    CHECK_OK(gpuprim_buffer_wrap(ctx, GPUPRIM_DTYPE_F64, (char *)host + 3, 0, &view));
    if (view) {
        view_address = (void *)&view;
        CHECK_OK(gpuprim_buffer_get_info(ctx, view, NULL, NULL, &view_address));
        CHECK(view_address == NULL);
        CHECK_OK(gpuprim_buffer_destroy(ctx, view));
    }

    /* host memory: the CPU backend's memory; refused on CUDA */
    if (is_cuda) {
        host_view = (gpuprim_buffer_t)&host_view;
        CHECK_STATUS(gpuprim_buffer_wrap(ctx, GPUPRIM_DTYPE_U32, host, 64, &host_view),
                     GPUPRIM_ERROR_INVALID_ARGUMENT);
        CHECK(host_view == (gpuprim_buffer_t)&host_view);
    } else {
        CHECK_OK(gpuprim_buffer_wrap(ctx, GPUPRIM_DTYPE_U32, host, 64, &host_view));
        if (host_view) {
            uint32_t value = 5;
            CHECK_OK(gpuprim_buffer_get_info(ctx, host_view, NULL, NULL, &view_address));
            CHECK(view_address == (void *)host);
            CHECK_OK(gpuprim_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, host_view, host_view));
            CHECK(host[63] == 64 * 1 + 7 * (63 * 64 / 2)); /* scanned in the caller's memory */
            CHECK_OK(gpuprim_buffer_upload(ctx, host_view, 0, &value, 1));
            CHECK(host[0] == 5);
            /* copies between the wrapped memory and an overlapping host
               range move the elements as memmove does, either way round */
            for (i = 0; i < 64; ++i) host[i] = (uint32_t)i;
            CHECK_OK(gpuprim_buffer_upload(ctx, host_view, 3, host, 40)); /* host[3..43) = 0..39 */
            for (i = 0; i < 64; ++i) CHECK(host[i] == (uint32_t)(i < 3 ? i : i < 43 ? i - 3 : i));
            CHECK_OK(gpuprim_buffer_download(ctx, host_view, 3, host + 1, 40)); /* host[1..41) = 0..39 */
            for (i = 0; i < 64; ++i) CHECK(host[i] == (uint32_t)(i == 0 ? 0 : i < 41 ? i - 1 : i < 43 ? i - 3 : i));
            host[0] = 5;
            CHECK_OK(gpuprim_buffer_destroy(ctx, host_view));
            host[1] = 77; /* still the caller's memory */
        }
        /* a context destroyed with a live wrapped buffer leaves the memory alone */
        {
            gpuprim_context_t other = NULL;
            gpuprim_buffer_t wrapped = NULL;
            gpuprim_context_options_t o;
            gpuprim_context_options_init(&o);
            o.backend = GPUPRIM_BACKEND_CPU;
            REQUIRE_OK(gpuprim_context_create(&o, &other, NULL, 0));
            CHECK_OK(gpuprim_buffer_wrap(other, GPUPRIM_DTYPE_U32, host, 64, &wrapped));
            CHECK_OK(gpuprim_context_destroy(other));
            host[2] = 78;
            CHECK(host[0] == 5 && host[1] == 77);
        }
    }
}

static void test_workspace(gpuprim_context_t ctx) {
    const uint64_t n = 1 << 20;
    uint64_t *keys = (uint64_t *)tc_xmalloc(n * 8), *values = (uint64_t *)tc_xmalloc(n * 8);
    uint64_t before = 1, after_first = 0, after_second = 0, after_small = 0, released = 1, i;
    gpuprim_buffer_t k, v, k2, v2;
    tc_where("workspace");
    for (i = 0; i < n; ++i) {
        keys[i] = tc_rand();
        values[i] = i;
    }
    CHECK_OK(gpuprim_context_release_workspace(ctx));
    CHECK_OK(gpuprim_context_get_workspace_size(ctx, &before));
    CHECK(before == 0);
    k = tc_buffer_from(ctx, GPUPRIM_DTYPE_U64, keys, n);
    v = tc_buffer_from(ctx, GPUPRIM_DTYPE_U64, values, n);
    k2 = tc_buffer(ctx, GPUPRIM_DTYPE_U64, n);
    v2 = tc_buffer(ctx, GPUPRIM_DTYPE_U64, n);
    CHECK_OK(gpuprim_sort(ctx, k, v, k2, v2, GPUPRIM_ORDER_ASCENDING));
    CHECK_OK(gpuprim_context_synchronize(ctx));
    CHECK_OK(gpuprim_context_get_workspace_size(ctx, &after_first));
    /* CUDA: "at most one extra copy of keys and values plus a few KiB"; CPU:
     * the keys packed with their positions (16 bytes each), twice when more
     * than two sorted runs are merged (plus the allocator's rounding: allow
     * 4 MiB) */
    {
        gpuprim_backend_t backend = GPUPRIM_BACKEND_AUTO;
        CHECK_OK(gpuprim_context_get_backend(ctx, &backend));
        CHECKF(after_first <= n * (backend == GPUPRIM_BACKEND_CPU ? 32 : 16) + (4u << 20),
               "sort of %llu u64 pairs holds %llu workspace bytes", (unsigned long long)n,
               (unsigned long long)after_first);
    }
    /* the same call again reuses it; a smaller one does not shrink it */
    CHECK_OK(gpuprim_sort(ctx, k, v, k2, v2, GPUPRIM_ORDER_DESCENDING));
    CHECK_OK(gpuprim_context_get_workspace_size(ctx, &after_second));
    CHECK(after_second == after_first);
    {
        gpuprim_buffer_t small = tc_buffer_from(ctx, GPUPRIM_DTYPE_U64, keys, 1000);
        CHECK_OK(gpuprim_sort(ctx, small, NULL, small, NULL, GPUPRIM_ORDER_ASCENDING));
        CHECK_OK(gpuprim_context_get_workspace_size(ctx, &after_small));
        CHECK(after_small == after_first);
        CHECK_OK(gpuprim_buffer_destroy(ctx, small));
    }
    CHECK_OK(gpuprim_context_release_workspace(ctx));
    CHECK_OK(gpuprim_context_get_workspace_size(ctx, &released));
    CHECK(released == 0);
    /* still works after a release */
    CHECK_OK(gpuprim_sort(ctx, k, v, k2, v2, GPUPRIM_ORDER_ASCENDING));
    {
        uint64_t *got = (uint64_t *)tc_download(ctx, k2, GPUPRIM_DTYPE_U64, n);
        uint64_t *got_values = (uint64_t *)tc_download(ctx, v2, GPUPRIM_DTYPE_U64, n);
        int ok = 1;
        for (i = 0; i < n && ok; ++i) {
            if (i > 0 && got[i - 1] > got[i]) ok = 0;
            if (got_values[i] >= n || keys[got_values[i]] != got[i]) ok = 0;
        }
        CHECKF(ok, "sort after release_workspace wrong near [%llu]", (unsigned long long)(i - 1));
        free(got);
        free(got_values);
    }
    CHECK_OK(gpuprim_buffer_destroy(ctx, k));
    CHECK_OK(gpuprim_buffer_destroy(ctx, v));
    CHECK_OK(gpuprim_buffer_destroy(ctx, k2));
    CHECK_OK(gpuprim_buffer_destroy(ctx, v2));
    free(keys);
    free(values);
}

/* Two contexts used side by side, and a context destroyed with live buffers. */
static void test_several_contexts(void) {
    gpuprim_context_t a = NULL, b = NULL;
    gpuprim_buffer_t ba = NULL, bb = NULL, leak = NULL;
    int64_t x[4] = {1, 2, 3, 4}, y[4] = {10, 20, 30, 40}, ra = 0, rb = 0;
    tc_where("several contexts");
    REQUIRE_OK(gpuprim_context_create(NULL, &a, NULL, 0));
    REQUIRE_OK(gpuprim_context_create(NULL, &b, NULL, 0));
    CHECK(a != b);
    CHECK_OK(gpuprim_buffer_create(a, GPUPRIM_DTYPE_I64, 4, &ba));
    CHECK_OK(gpuprim_buffer_create(b, GPUPRIM_DTYPE_I64, 4, &bb));
    CHECK_OK(gpuprim_buffer_upload(a, ba, 0, x, 4));
    CHECK_OK(gpuprim_buffer_upload(b, bb, 0, y, 4));
    CHECK_OK(gpuprim_reduce(a, GPUPRIM_OP_SUM, ba, &ra));
    CHECK_OK(gpuprim_reduce(b, GPUPRIM_OP_SUM, bb, &rb));
    CHECK(ra == 10 && rb == 100);
    CHECK_OK(gpuprim_buffer_create(a, GPUPRIM_DTYPE_F32, 1000, &leak)); /* freed by destroy */
    CHECK_OK(gpuprim_context_destroy(a));
    CHECK_OK(gpuprim_reduce(b, GPUPRIM_OP_MAX, bb, &rb));
    CHECK(rb == 40);
    CHECK_OK(gpuprim_context_destroy(b));
}

int main(void) {
    gpuprim_context_t ctx = tc_init("test_context");
    test_version_and_names();
    test_stable_struct_sizes();
    test_options_init();
    test_queries(ctx);
    test_backend_selection();
    test_buffers(ctx);
    test_wrap(ctx);
    test_workspace(ctx);
    test_several_contexts();
    return tc_finish();
}
