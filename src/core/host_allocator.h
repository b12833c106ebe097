// SPDX-License-Identifier: Apache-2.0
// The host's allocator of a context (gpuprim_context_options_t.allocate /
// .deallocate): every block of the context's memory comes from it when set.
// It remembers each block's size, which the host's deallocate is given back.
#pragma once

#include "core/error.h"

#include <gpuprim/gpuprim.h>

#include <cstdint>
#include <new>
#include <unordered_map>

namespace gpuprim {

class HostAllocator {
public:
    // The alignment asked of the host: what cudaMalloc gives, and what the
    // kernels' vector loads and the workspace layout assume.
    static constexpr uint64_t kAlignment = 256;

    HostAllocator() = default;
    HostAllocator(gpuprim_allocate_fn allocate_fn, gpuprim_deallocate_fn deallocate_fn, void *user)
        : allocate_(allocate_fn), deallocate_(deallocate_fn), user_(user) {}

    bool present() const { return allocate_ != nullptr; }

    // bytes > 0. Throws OUT_OF_MEMORY when the host's allocate fails,
    // INVALID_ARGUMENT when its block is misaligned (given back first).
    void *allocate(uint64_t bytes, void *stream, const char *memory_kind) {
        void *memory = nullptr;
        const int result = allocate_(user_, bytes, stream, &memory);
        if (result != 0 || !memory)
            fail(GPUPRIM_ERROR_OUT_OF_MEMORY,
                 "the context's allocator (options.allocate) could not give %llu bytes of %s (it returned %d%s)",
                 static_cast<unsigned long long>(bytes), memory_kind, result, memory ? "" : ", no block");
        if (reinterpret_cast<uintptr_t>(memory) % kAlignment != 0) {
            deallocate_(user_, memory, bytes, stream);
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
                 "the context's allocator (options.allocate) gave %p for %llu bytes, not aligned to %llu bytes",
                 memory, static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(kAlignment));
        }
        try {
            blocks_.emplace(memory, bytes);
        } catch (...) {
            deallocate_(user_, memory, bytes, stream);
            fail(GPUPRIM_ERROR_OUT_OF_MEMORY, "cannot allocate host memory to remember a block's size");
        }
        return memory;
    }

    // True when memory came from the host's allocate (then it is given back).
    bool deallocate(void *memory, void *stream) noexcept {
        auto found = blocks_.find(memory);
        if (found == blocks_.end()) return false;
        const uint64_t bytes = found->second;
        blocks_.erase(found);
        deallocate_(user_, memory, bytes, stream);
        return true;
    }

private:
    gpuprim_allocate_fn allocate_ = nullptr;
    gpuprim_deallocate_fn deallocate_ = nullptr;
    void *user_ = nullptr;
    std::unordered_map<void *, uint64_t> blocks_;
};

}  // namespace gpuprim
