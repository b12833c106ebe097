// SPDX-License-Identifier: Apache-2.0
// The objects behind the opaque handles. A handle is a registry serial, never
// a pointer (core/registry.h); these objects are reached only through the
// registry (contexts) and through their context's table (buffers).
#pragma once

#include "core/backend.h"
#include "core/communicator.h"
#include "core/error.h"
#include "core/workspace.h"

#include <gpuprim/gpuprim.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace gpuprim {

struct Buffer {
    gpuprim_dtype_t dtype;
    uint64_t count;
    void *data;   // backend address space
    bool owned;   // false for wrapped (borrowed) memory

    uint64_t bytes() const;
};

class Context {
public:
    // Room for any message fail() makes, so recording one never allocates.
    static constexpr size_t kMessageCapacity = 512;

    explicit Context(std::unique_ptr<Backend> backend);
    ~Context();
    Context(const Context &) = delete;
    Context &operator=(const Context &) = delete;

    // Serializes the calls made on this context: threads may share it.
    std::mutex mutex;
    // Set under `mutex` by gpuprim_context_destroy; a call that was waiting
    // for the lock then finds the context gone.
    bool destroyed = false;
    std::unique_ptr<Backend> backend;
    // The caller's communicator, borrowed for the distributed calls (null:
    // none attached). Declared after backend: it goes first (its staging
    // memory is the backend's).
    std::unique_ptr<Communicator> communicator;
    // The distributed calls' scratch (local copies, received candidates),
    // kept between calls like the backend's workspace and apart from it:
    // the local primitives a distributed call runs use that one meanwhile.
    Workspace distributed_workspace;

    void set_last_error(const char *message) noexcept;
    const char *last_error() const noexcept { return last_error_; }

    // Registers a buffer over `data` and returns its handle. Throws
    // OUT_OF_MEMORY; then nothing changed (the caller still owns data).
    gpuprim_buffer_t add_buffer(gpuprim_dtype_t dtype, uint64_t count, void *data, bool owned);
    // Unregisters the buffer and frees its memory unless wrapped. Never fails.
    void destroy_buffer(gpuprim_buffer_t handle) noexcept;
    // The live buffer behind a handle. Throws NULL_POINTER, INVALID_HANDLE
    // (destroyed, or not a buffer handle) or CONTEXT_MISMATCH (a live buffer
    // of another context). name: the argument's name, for the message.
    Buffer &resolve(gpuprim_buffer_t handle, const char *name);
    size_t buffer_count() const noexcept { return buffers_.size(); }
    // Frees every buffer and the workspace; the context is unusable after.
    void tear_down() noexcept;

private:
    std::unordered_map<gpuprim_buffer_t, Buffer> buffers_;
    char last_error_[kMessageCapacity] = "";
};

// Chooses and creates the backend for the options (after defaults are applied).
// cpu_threads: the CPU backend's thread count (0: every core); allocator:
// the host's, or an empty one.
std::unique_ptr<Backend> create_backend(gpuprim_backend_t requested, int32_t device_ordinal,
                                        void *stream, int32_t cpu_threads, const HostAllocator &allocator);

}  // namespace gpuprim
