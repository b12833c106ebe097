// SPDX-License-Identifier: Apache-2.0
// The buffer entry points: create, wrap, destroy, query, upload and download.
#include "api/validate.h"
#include "core/context.h"
#include "core/dtype.h"

#include <gpuprim/gpuprim.h>

#include <cstdint>

using gpuprim::Buffer;
using gpuprim::Context;
using gpuprim::fail;
using namespace gpuprim::api;  // guarded() and the argument rules

namespace {

struct DeviceSpan {
    char *data;
    uint64_t bytes;
};

// The buffer's side of an upload or download of `count` elements from
// `offset`, once the range and the host pointer are checked; no bytes when
// count is 0 (host_data may then be NULL).
DeviceSpan copy_span(Context &ctx, gpuprim_buffer_t buffer, uint64_t offset, const void *host_data, uint64_t count) {
    Buffer &resolved = ctx.resolve(buffer, "buffer");
    require_range(resolved, "buffer", offset, count);
    if (count == 0) return DeviceSpan{nullptr, 0};
    require(host_data, "host_data");
    size_t size = gpuprim::dtype_size(resolved.dtype);
    return DeviceSpan{static_cast<char *>(resolved.data) + offset * size, count * size};
}

}  // namespace

extern "C" {

gpuprim_status_t gpuprim_buffer_create(gpuprim_context_t context, gpuprim_dtype_t dtype, uint64_t count,
                                       gpuprim_buffer_t *buffer) {
    return guarded(__func__, context, [&](Context &ctx) {
        require(buffer, "buffer");
        require_dtype(dtype, "dtype");
        uint64_t bytes = byte_size(count, dtype, "count");
        void *data = ctx.backend->allocate(bytes);
        try {
            *buffer = ctx.add_buffer(dtype, count, data, true);
        } catch (...) {
            ctx.backend->deallocate(data);
            throw;
        }
    });
}

gpuprim_status_t gpuprim_buffer_wrap(gpuprim_context_t context, gpuprim_dtype_t dtype, void *data, uint64_t count,
                                     gpuprim_buffer_t *buffer) {
    return guarded(__func__, context, [&](Context &ctx) {
        require(buffer, "buffer");
        require_dtype(dtype, "dtype");
        uint64_t bytes = byte_size(count, dtype, "count");
        if (count > 0) {
            require(data, "data");
            if (reinterpret_cast<uintptr_t>(data) % gpuprim::dtype_size(dtype) != 0)
                fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
                     "argument 'data' = %p is not aligned to the %zu-byte %s element size", data,
                     gpuprim::dtype_size(dtype), gpuprim::dtype_name(dtype));
            if (reinterpret_cast<uintptr_t>(data) > UINTPTR_MAX - bytes)
                fail(GPUPRIM_ERROR_OVERFLOW,
                     "arguments 'data' = %p and 'count' = %llu: the wrapped range of %llu bytes passes the end of "
                     "the address space",
                     data, static_cast<unsigned long long>(count), static_cast<unsigned long long>(bytes));
            ctx.backend->check_wrappable(data, bytes);
        }
        *buffer = ctx.add_buffer(dtype, count, count > 0 ? data : nullptr, false);
    });
}

gpuprim_status_t gpuprim_buffer_destroy(gpuprim_context_t context, gpuprim_buffer_t buffer) {
    return guarded(__func__, context, [&](Context &ctx) {
        if (!buffer) return;
        Buffer &resolved = ctx.resolve(buffer, "buffer");
        // Work queued on the buffer must finish before its memory goes back;
        // nothing changes when that fails, and nothing after it can fail.
        if (resolved.owned) {
            ctx.backend->refuse_during_capture(__func__, "it waits for the device and gives the memory back");
            ctx.backend->synchronize();
        }
        ctx.destroy_buffer(buffer);
    });
}

gpuprim_status_t gpuprim_buffer_get_info(gpuprim_context_t context, gpuprim_buffer_t buffer, gpuprim_dtype_t *dtype,
                                         uint64_t *count, void **data) {
    return guarded(__func__, context, [&](Context &ctx) {
        Buffer &resolved = ctx.resolve(buffer, "buffer");
        if (dtype) *dtype = resolved.dtype;
        if (count) *count = resolved.count;
        if (data) *data = resolved.data;
    });
}

gpuprim_status_t gpuprim_buffer_upload(gpuprim_context_t context, gpuprim_buffer_t buffer, uint64_t offset,
                                       const void *host_data, uint64_t count) {
    return guarded(__func__, context, [&](Context &ctx) {
        const DeviceSpan span = copy_span(ctx, buffer, offset, host_data, count);
        if (span.bytes == 0) return;
        ctx.backend->upload(span.data, host_data, span.bytes);
    });
}

gpuprim_status_t gpuprim_buffer_download(gpuprim_context_t context, gpuprim_buffer_t buffer, uint64_t offset,
                                         void *host_data, uint64_t count) {
    return guarded(__func__, context, [&](Context &ctx) {
        const DeviceSpan span = copy_span(ctx, buffer, offset, host_data, count);
        if (span.bytes == 0) return;
        ctx.backend->download(host_data, span.data, span.bytes);
    });
}

}  // extern "C"
