// SPDX-License-Identifier: Apache-2.0
// The objects behind the opaque handles, and the handle checks every entry
// point goes through.
#pragma once

#include "core/backend.h"
#include "core/error.h"

#include <gpuprim/gpuprim.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_set>

// The C handle types are these structs; they live in the global namespace
// because the header declares them there.
struct gpuprim_context_s;

struct gpuprim_buffer_s {
    gpuprim_context_s *owner;
    gpuprim_dtype_t dtype;
    uint64_t count;
    void *data;   // backend address space
    bool owned;   // false for wrapped (borrowed) memory

    uint64_t bytes() const;
};

struct gpuprim_context_s {
    static constexpr uint64_t kMagic = 0x6770757072696d31ull;  // "gpuprim1"
    uint64_t magic = kMagic;
    std::unique_ptr<gpuprim::Backend> backend;
    std::string last_error;

    explicit gpuprim_context_s(std::unique_ptr<gpuprim::Backend> b) : backend(std::move(b)) {}
    ~gpuprim_context_s();

    gpuprim_buffer_s *add_buffer(gpuprim_dtype_t dtype, uint64_t count, void *data, bool owned);
    void destroy_buffer(gpuprim_buffer_s *buffer);
    // The live buffer behind a handle; throws INVALID_HANDLE for a destroyed
    // one and CONTEXT_MISMATCH for one this context never made. Never
    // dereferences a handle it does not own. name: the argument's name.
    gpuprim_buffer_s &resolve(gpuprim_buffer_t handle, const char *name);

private:
    std::unordered_set<gpuprim_buffer_s *> live_;
    // Recently destroyed buffers, kept allocated (memory freed) to tell
    // "destroyed" from "another context's"; bounded so a long-lived context
    // does not grow.
    static constexpr size_t kRememberedDestroyed = 4096;
    std::deque<gpuprim_buffer_s *> destroyed_order_;
    std::unordered_set<gpuprim_buffer_s *> destroyed_;
};

namespace gpuprim {
// Chooses and creates the backend for the options (after defaults are applied).
std::unique_ptr<Backend> create_backend(gpuprim_backend_t requested, int32_t device_ordinal,
                                        void *stream);
}  // namespace gpuprim
