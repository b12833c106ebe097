// SPDX-License-Identifier: Apache-2.0
// The process-wide registry of live handles: the one piece of global state
// (besides the fork flag in cpu/parallel.cpp, which says why), lock-protected,
// because checking a handle must never read through it.
//
// A handle is not a pointer. Its bits are a tag byte (contexts and buffers
// differ) and a serial number that the registry issues once per process and
// never again, so a destroyed context or buffer stays invalid forever, however
// many come after it, and any other value (a real pointer, a small integer,
// freed memory) is simply not found. The tag puts handles outside the user
// half of the address space, so no real pointer ever looks like one.
#pragma once

#include <gpuprim/gpuprim.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

namespace gpuprim {

class Context;

// What a buffer serial is to the registry, for telling apart the reasons a
// context does not know a buffer handle.
enum class BufferStanding {
    kLive,         // live (so, to a context whose table lacks it, another context's)
    kGone,         // issued once, since destroyed (alone or with its context)
    kNeverIssued,  // not a buffer handle at all
};

class Registry {
public:
    static Registry &instance();

    // Registers a new context and returns its handle. Throws OUT_OF_MEMORY
    // (the table could not grow); then nothing changed.
    gpuprim_context_t add_context(std::shared_ptr<Context> context);
    // The live context behind a handle, or null for any other value.
    std::shared_ptr<Context> find_context(gpuprim_context_t handle) const;
    // Unregisters a context: later lookups of its handle find nothing.
    // Returns it (null when the handle is not a live context).
    std::shared_ptr<Context> remove_context(gpuprim_context_t handle) noexcept;

    // Issues a buffer handle. Throws OUT_OF_MEMORY; then nothing changed.
    gpuprim_buffer_t add_buffer();
    void remove_buffer(gpuprim_buffer_t handle) noexcept;
    BufferStanding buffer_standing(gpuprim_buffer_t handle) const;

    static uint64_t context_serial(gpuprim_context_t handle);
    static uint64_t buffer_serial(gpuprim_buffer_t handle);

private:
    Registry() = default;

    // Contexts are spread over shards by serial, each with its own lock, so
    // threads working on different contexts do not contend on every call.
    static constexpr unsigned kContextShards = 64;
    struct alignas(64) ContextShard {
        mutable std::mutex mutex;
        std::unordered_map<uint64_t, std::shared_ptr<Context>> contexts;
    };
    ContextShard &shard_of(uint64_t serial) { return context_shards_[serial % kContextShards]; }
    const ContextShard &shard_of(uint64_t serial) const {
        return context_shards_[serial % kContextShards];
    }

    ContextShard context_shards_[kContextShards];
    std::mutex serial_mutex_;  // next_context_serial_
    uint64_t next_context_serial_ = 1;
    // Buffers are looked up here only on create, destroy and the error path;
    // the fast path is the owning context's own table.
    mutable std::mutex buffers_mutex_;
    std::unordered_set<uint64_t> live_buffers_;  // serials
    uint64_t next_buffer_serial_ = 1;
};

}  // namespace gpuprim
