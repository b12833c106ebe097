// SPDX-License-Identifier: Apache-2.0
#include "core/context.h"

#include "core/dtype.h"

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <string>

uint64_t gpuprim_buffer_s::bytes() const { return count * gpuprim::dtype_size(dtype); }

gpuprim_context_s::~gpuprim_context_s() {
    if (backend) {
        try {
            backend->synchronize();
        } catch (...) {
            // Destroy cannot report more than its status; the memory is freed regardless.
        }
        for (gpuprim_buffer_s *buffer : live_) {
            if (buffer->owned) backend->deallocate(buffer->data);
            delete buffer;
        }
        for (gpuprim_buffer_s *tombstone : destroyed_order_) delete tombstone;
        backend->release_workspace();
    }
    magic = 0;  // a stale handle used later fails the magic check more often than not
}

gpuprim_buffer_s *gpuprim_context_s::add_buffer(gpuprim_dtype_t dtype, uint64_t count, void *data,
                                                bool owned) {
    auto buffer = std::make_unique<gpuprim_buffer_s>(
        gpuprim_buffer_s{this, dtype, count, data, owned});
    live_.insert(buffer.get());
    return buffer.release();
}

void gpuprim_context_s::destroy_buffer(gpuprim_buffer_s *buffer) {
    live_.erase(buffer);
    if (buffer->owned) backend->deallocate(buffer->data);
    // The struct stays allocated as a tombstone for a while, so its address
    // cannot be reused by a new buffer (of any context) that would then be
    // mistaken for the destroyed one.
    buffer->data = nullptr;
    buffer->count = 0;
    if (destroyed_order_.size() == kRememberedDestroyed) {
        gpuprim_buffer_s *oldest = destroyed_order_.front();
        destroyed_order_.pop_front();
        destroyed_.erase(oldest);
        delete oldest;
    }
    destroyed_order_.push_back(buffer);
    destroyed_.insert(buffer);
}

gpuprim_buffer_s &gpuprim_context_s::resolve(gpuprim_buffer_t handle, const char *name) {
    using gpuprim::fail;
    if (!handle) fail(GPUPRIM_ERROR_NULL_POINTER, "argument '%s' is a NULL buffer handle", name);
    if (live_.count(handle)) return *handle;
    if (destroyed_.count(handle))
        fail(GPUPRIM_ERROR_INVALID_HANDLE, "argument '%s' is a buffer that was already destroyed",
             name);
    fail(GPUPRIM_ERROR_CONTEXT_MISMATCH,
         "argument '%s' is not a buffer of this context (made by another context, or not a "
         "buffer handle)",
         name);
}

namespace gpuprim {

namespace {

// GPUPRIM_BACKEND=cpu|cuda (any case) overrides AUTO; anything else is an error.
gpuprim_backend_t backend_from_environment() {
    const char *value = std::getenv("GPUPRIM_BACKEND");
    if (!value || !*value) return GPUPRIM_BACKEND_AUTO;
    std::string lowered;
    for (const char *c = value; *c; ++c)
        lowered += static_cast<char>(std::tolower(static_cast<unsigned char>(*c)));
    if (lowered == "cpu") return GPUPRIM_BACKEND_CPU;
    if (lowered == "cuda") return GPUPRIM_BACKEND_CUDA;
    if (lowered == "auto") return GPUPRIM_BACKEND_AUTO;
    fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
         "environment variable GPUPRIM_BACKEND='%.64s' is not one of cpu, cuda, auto", value);
}

}  // namespace

std::unique_ptr<Backend> create_backend(gpuprim_backend_t requested, int32_t device_ordinal,
                                        void *stream) {
    if (requested == GPUPRIM_BACKEND_AUTO) requested = backend_from_environment();
    switch (requested) {
    case GPUPRIM_BACKEND_CPU: return make_cpu_backend();
    case GPUPRIM_BACKEND_CUDA: return make_cuda_backend(device_ordinal, stream);
    case GPUPRIM_BACKEND_AUTO:
        if (cuda_backend_built() && cuda_device_usable(device_ordinal))
            return make_cuda_backend(device_ordinal, stream);
        return make_cpu_backend();
    }
    fail(GPUPRIM_ERROR_INVALID_ENUM, "options.backend = %d is not a gpuprim_backend_t",
         static_cast<int>(requested));
}

}  // namespace gpuprim
