// SPDX-License-Identifier: Apache-2.0
// A grow-only scratch allocation owned by one context: a call asks for the
// bytes it needs, gets a pointer to at least that many, and the memory is
// kept for the next call, so steady-state calls allocate nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>

namespace gpuprim {

class Workspace {
public:
    using Allocate = std::function<void *(uint64_t)>;  // throws on failure
    using Deallocate = std::function<void(void *)>;

    Workspace(Allocate allocate, Deallocate deallocate)
        : allocate_(std::move(allocate)), deallocate_(std::move(deallocate)) {}
    Workspace(const Workspace &) = delete;
    Workspace &operator=(const Workspace &) = delete;
    ~Workspace() { release(); }

    // Valid until the next reserve() or release(). A failed growth (the
    // allocator's exception passes through) keeps the block the workspace
    // had: the new block is taken before the old one is freed, and only when
    // that fails for want of memory is the old one given back first and,
    // should the bigger one still not fit, taken again.
    void *reserve(uint64_t bytes) {
        if (bytes <= capacity_ && memory_) return memory_;
        // Round up so a slowly growing sequence of sizes does not reallocate every call.
        uint64_t rounded = (bytes + (uint64_t(1) << 20) - 1) & ~((uint64_t(1) << 20) - 1);
        if (rounded < bytes) rounded = bytes;
        void *grown = nullptr;
        try {
            grown = allocate_(rounded);
        } catch (...) {
            if (!memory_) throw;
            const uint64_t kept = capacity_;
            release();
            try {
                grown = allocate_(rounded);
            } catch (...) {
                try {
                    memory_ = allocate_(kept);
                    capacity_ = kept;
                } catch (...) {
                    // The old size no longer fits either: the workspace stays empty.
                }
                throw;
            }
        }
        release();
        memory_ = grown;
        capacity_ = rounded;
        return memory_;
    }

    void release() {
        if (memory_) deallocate_(memory_);
        memory_ = nullptr;
        capacity_ = 0;
    }

    uint64_t capacity() const { return capacity_; }

private:
    Allocate allocate_;
    Deallocate deallocate_;
    void *memory_ = nullptr;
    uint64_t capacity_ = 0;
};

}  // namespace gpuprim
