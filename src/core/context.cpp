// SPDX-License-Identifier: Apache-2.0
#include "core/context.h"

#include "core/dtype.h"
#include "core/registry.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace gpuprim {

uint64_t Buffer::bytes() const { return count * dtype_size(dtype); }

Context::Context(std::unique_ptr<Backend> b)
    : backend(std::move(b)),
      distributed_workspace([this](uint64_t bytes) { return backend->allocate(bytes); },
                            [this](void *memory) { backend->deallocate(memory); }) {}

Context::~Context() { tear_down(); }

void Context::set_last_error(const char *message) noexcept {
    std::snprintf(last_error_, sizeof last_error_, "%s", message);
}

gpuprim_buffer_t Context::add_buffer(gpuprim_dtype_t dtype, uint64_t count, void *data,
                                     bool owned) {
    Registry &registry = Registry::instance();
    gpuprim_buffer_t handle = registry.add_buffer();
    try {
        buffers_.emplace(handle, Buffer{dtype, count, data, owned});
    } catch (...) {
        registry.remove_buffer(handle);
        throw;
    }
    return handle;
}

void Context::destroy_buffer(gpuprim_buffer_t handle) noexcept {
    auto found = buffers_.find(handle);
    if (found == buffers_.end()) return;
    if (found->second.owned) backend->deallocate(found->second.data);
    buffers_.erase(found);
    Registry::instance().remove_buffer(handle);
}

Buffer &Context::resolve(gpuprim_buffer_t handle, const char *name) {
    if (!handle) fail(GPUPRIM_ERROR_NULL_POINTER, "argument '%s' is a NULL buffer handle", name);
    auto found = buffers_.find(handle);
    if (found != buffers_.end()) return found->second;
    // Not ours: the registry tells why (off the fast path).
    switch (Registry::instance().buffer_standing(handle)) {
    case BufferStanding::kLive:
        fail(GPUPRIM_ERROR_CONTEXT_MISMATCH,
             "argument '%s' is a buffer of another context; buffers are used only with the "
             "context that made them",
             name);
    case BufferStanding::kGone:
        fail(GPUPRIM_ERROR_INVALID_HANDLE,
             "argument '%s' is a buffer that was already destroyed (by buffer_destroy or with its "
             "context)",
             name);
    case BufferStanding::kNeverIssued: break;
    }
    fail(GPUPRIM_ERROR_INVALID_HANDLE, "argument '%s' is not a buffer handle", name);
}

void Context::tear_down() noexcept {
    if (!backend) return;
    communicator.reset();
    distributed_workspace.release();
    try {
        backend->synchronize();
    } catch (...) {
        // Destroy cannot report more than its status; the memory is freed regardless.
    }
    Registry &registry = Registry::instance();
    for (auto &entry : buffers_) {
        if (entry.second.owned) backend->deallocate(entry.second.data);
        registry.remove_buffer(entry.first);
    }
    buffers_.clear();
    backend->release_workspace();
    backend.reset();
}

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
                                        void *stream, int32_t cpu_threads, const HostAllocator &allocator) {
    if (requested == GPUPRIM_BACKEND_AUTO) requested = backend_from_environment();
    switch (requested) {
    case GPUPRIM_BACKEND_CPU: return make_cpu_backend(cpu_threads, allocator);
    case GPUPRIM_BACKEND_CUDA: return make_cuda_backend(device_ordinal, stream, allocator);
    case GPUPRIM_BACKEND_AUTO:
        if (cuda_backend_built() && cuda_device_usable(device_ordinal))
            return make_cuda_backend(device_ordinal, stream, allocator);
        return make_cpu_backend(cpu_threads, allocator);
    }
    fail(GPUPRIM_ERROR_INVALID_ENUM, "options.backend = %d is not a gpuprim_backend_t",
         static_cast<int>(requested));
}

}  // namespace gpuprim
