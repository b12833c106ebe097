// SPDX-License-Identifier: Apache-2.0
#include "core/registry.h"

#include "core/context.h"
#include "core/error.h"

#include <climits>
#include <mutex>
#include <new>

namespace gpuprim {
namespace {

constexpr unsigned kSerialBits = sizeof(uintptr_t) * CHAR_BIT - 8;
constexpr uint64_t kMaxSerial = (uint64_t(1) << kSerialBits) - 1;
// Top bytes of the two handle kinds: above every user-space address.
constexpr uintptr_t kContextTag = 0xC7;
constexpr uintptr_t kBufferTag = 0xB5;

uintptr_t encode(uintptr_t tag, uint64_t serial) {
    return (tag << kSerialBits) | static_cast<uintptr_t>(serial);
}

// The serial in a handle's bits, or 0 (never issued) when the tag is not `tag`.
uint64_t decode(uintptr_t bits, uintptr_t tag) {
    if ((bits >> kSerialBits) != tag) return 0;
    return bits & static_cast<uintptr_t>(kMaxSerial);
}

// Serials are never reused; 2^56 of them outlast any process.
void require_serial_left(uint64_t next, const char *what) {
    if (next > kMaxSerial)
        fail(GPUPRIM_ERROR_OUT_OF_MEMORY, "no %s handles are left in this process", what);
}

}  // namespace

Registry &Registry::instance() {
    // Never destroyed: a call made from another library's static destructor
    // still finds a registry (and LeakSanitizer sees it as reachable).
    static Registry *registry = new Registry();
    return *registry;
}

uint64_t Registry::context_serial(gpuprim_context_t handle) {
    return decode(reinterpret_cast<uintptr_t>(handle), kContextTag);
}

uint64_t Registry::buffer_serial(gpuprim_buffer_t handle) {
    return decode(reinterpret_cast<uintptr_t>(handle), kBufferTag);
}

gpuprim_context_t Registry::add_context(std::shared_ptr<Context> context) {
    uint64_t serial;
    {
        std::lock_guard<std::mutex> lock(serial_mutex_);
        require_serial_left(next_context_serial_, "context");
        serial = next_context_serial_++;  // a serial lost to a failure below is never reused either
    }
    ContextShard &shard = shard_of(serial);
    std::lock_guard<std::mutex> lock(shard.mutex);
    shard.contexts.emplace(serial, std::move(context));  // throws bad_alloc before any change
    return reinterpret_cast<gpuprim_context_t>(encode(kContextTag, serial));
}

std::shared_ptr<Context> Registry::find_context(gpuprim_context_t handle) const {
    uint64_t serial = context_serial(handle);
    if (serial == 0) return nullptr;
    const ContextShard &shard = shard_of(serial);
    std::lock_guard<std::mutex> lock(shard.mutex);
    auto found = shard.contexts.find(serial);
    return found == shard.contexts.end() ? nullptr : found->second;
}

std::shared_ptr<Context> Registry::remove_context(gpuprim_context_t handle) noexcept {
    uint64_t serial = context_serial(handle);
    if (serial == 0) return nullptr;
    ContextShard &shard = shard_of(serial);
    std::lock_guard<std::mutex> lock(shard.mutex);
    auto found = shard.contexts.find(serial);
    if (found == shard.contexts.end()) return nullptr;
    std::shared_ptr<Context> context = std::move(found->second);
    shard.contexts.erase(found);
    return context;
}

gpuprim_buffer_t Registry::add_buffer() {
    std::lock_guard<std::mutex> lock(buffers_mutex_);
    uint64_t serial = next_buffer_serial_;
    require_serial_left(serial, "buffer");
    live_buffers_.insert(serial);  // throws bad_alloc before any change
    ++next_buffer_serial_;
    return reinterpret_cast<gpuprim_buffer_t>(encode(kBufferTag, serial));
}

void Registry::remove_buffer(gpuprim_buffer_t handle) noexcept {
    uint64_t serial = buffer_serial(handle);
    std::lock_guard<std::mutex> lock(buffers_mutex_);
    live_buffers_.erase(serial);
}

BufferStanding Registry::buffer_standing(gpuprim_buffer_t handle) const {
    uint64_t serial = buffer_serial(handle);
    if (serial == 0) return BufferStanding::kNeverIssued;
    std::lock_guard<std::mutex> lock(buffers_mutex_);
    if (live_buffers_.count(serial)) return BufferStanding::kLive;
    return serial < next_buffer_serial_ ? BufferStanding::kGone : BufferStanding::kNeverIssued;
}

}  // namespace gpuprim
