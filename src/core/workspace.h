// SPDX-License-Identifier: Apache-2.0
// A grow-only scratch allocation owned by one context: a call asks for the
// bytes it needs, gets a pointer to at least that many, and the memory is
// kept for the next call, so steady-state calls allocate nothing.
// A recorder (Workspace::Record) stands in for one during a workspace query
// (gpuprim_context_begin_workspace_query): it only remembers the largest
// request.
#pragma once

#include "core/error.h"

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
    // A recorder: reserve() allocates nothing and hands out recorded_base(),
    // which no one dereferences (the calls of a query return before they
    // enqueue or touch anything).
    struct Record {};
    explicit Workspace(Record) : recording_(true) {}
    Workspace(const Workspace &) = delete;
    Workspace &operator=(const Workspace &) = delete;
    ~Workspace() { release(); }

    // Valid until the next reserve() or release(). A failed growth (the
    // allocator's exception passes through) keeps the block the workspace
    // had: the new block is taken before the old one is freed, and only when
    // that fails for want of memory is the old one given back first and,
    // should the bigger one still not fit, taken again.
    // Only a shortage (OUT_OF_MEMORY) takes that path; any other failure
    // (NOT_CAPTURABLE during a graph capture, a device error) leaves the
    // block as it is. A workspace held still (hold()) never grows: a call
    // that needs more fails with OUT_OF_MEMORY.
    void *reserve(uint64_t bytes) {
        if (bytes > largest_request_) largest_request_ = bytes;
        if (recording_) return recorded_base();
        if (bytes <= capacity_) return memory_;  // null only for 0 bytes and no block
        if (held_)
            fail(GPUPRIM_ERROR_OUT_OF_MEMORY,
                 "the call needs %llu bytes of workspace; the workspace is held still at %llu bytes "
                 "(gpuprim_context_reserve_workspace with fix)",
                 static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(capacity_));
        const uint64_t rounded = rounded_size(bytes);
        void *grown = nullptr;
        try {
            grown = allocate_(rounded);
        } catch (const Error &error) {
            if (!memory_ || error.status() != GPUPRIM_ERROR_OUT_OF_MEMORY) throw;
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

    // Gives the block back; a workspace held still is let go too.
    void release() {
        if (memory_) deallocate_(memory_);
        memory_ = nullptr;
        capacity_ = 0;
        held_ = false;
    }

    // Held still, the block neither grows nor moves (a CUDA graph keeps its
    // address) until release() or hold(false).
    void hold(bool held) { held_ = held; }
    bool held() const { return held_; }

    // Grows to at least `bytes` (0: as it is), then holds still or not. The
    // new block is taken before the old one is given back, so a failed
    // growth leaves the block where it was, and the old hold (unlike
    // reserve(), no retry with the old block freed: that could move a block
    // a CUDA graph holds, or leave a held workspace empty).
    void grow_and_hold(uint64_t bytes, bool held) {
        if (recording_) {
            reserve(bytes);
        } else {
            adopt(take(bytes), bytes);
        }
        held_ = held;
    }

    // grow_and_hold for two workspaces at once: on failure neither block
    // nor either hold has changed, since both new blocks are taken before
    // either old one is given back (so, unlike reserve(), a shortage gets
    // no retry with the old block freed).
    static void grow_and_hold(Workspace &first, uint64_t first_bytes, Workspace &second, uint64_t second_bytes,
                              bool held) {
        void *const first_block = first.take(first_bytes);
        void *second_block = nullptr;
        try {
            second_block = second.take(second_bytes);
        } catch (...) {
            if (first_block) first.deallocate_(first_block);
            throw;
        }
        first.adopt(first_block, first_bytes);
        second.adopt(second_block, second_bytes);
        first.held_ = held;
        second.held_ = held;
    }

    uint64_t capacity() const { return capacity_; }

    // The most bytes one reserve() asked for since the workspace was made
    // or the last forget_requests(): a recorder's result, and on a real
    // workspace a testing hook (test_workspace_query compares the two).
    uint64_t largest_request() const { return largest_request_; }
    void forget_requests() { largest_request_ = 0; }

private:
    // Non-null and aligned as any block is (256 bytes), so the drivers'
    // layout arithmetic on it stays well defined.
    static void *recorded_base() { return reinterpret_cast<void *>(uintptr_t(1) << 20); }

    // Rounded up so a slowly growing sequence of sizes does not reallocate every call.
    static uint64_t rounded_size(uint64_t bytes) {
        const uint64_t rounded = (bytes + (uint64_t(1) << 20) - 1) & ~((uint64_t(1) << 20) - 1);
        return rounded < bytes ? bytes : rounded;
    }
    // The block a growth to `bytes` needs, not yet in use (null: none needed).
    void *take(uint64_t bytes) { return bytes > capacity_ ? allocate_(rounded_size(bytes)) : nullptr; }
    // Puts a block take(bytes) gave in place of the old one.
    void adopt(void *block, uint64_t bytes) {
        if (!block) return;
        if (memory_) deallocate_(memory_);
        memory_ = block;
        capacity_ = rounded_size(bytes);
    }

    bool recording_ = false;
    uint64_t largest_request_ = 0;
    Allocate allocate_;
    Deallocate deallocate_;
    void *memory_ = nullptr;
    uint64_t capacity_ = 0;
    bool held_ = false;
};

}  // namespace gpuprim
