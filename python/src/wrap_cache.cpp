// SPDX-License-Identifier: Apache-2.0
#include "wrap_cache.h"

namespace gpuprim_ext {

gpuprim_status_t WrapCache::wrap(int code, void *data, std::uint64_t count, gpuprim_buffer_t *buffer) {
    const Key key{reinterpret_cast<std::uintptr_t>(data), code, count};
    auto found = entries_.find(key);
    if (found != entries_.end()) {
        // Most recently used last: a call's own operands are never the
        // oldest when a new wrap evicts one.
        order_.splice(order_.end(), order_, found->second.age);
        *buffer = found->second.buffer;
        return GPUPRIM_SUCCESS;
    }
    gpuprim_buffer_t made = nullptr;
    gpuprim_status_t status =
        library().buffer_wrap(context_, static_cast<gpuprim_dtype_t>(code), data, count, &made);
    if (status != GPUPRIM_SUCCESS) return status;
    order_.push_back(key);
    entries_.emplace(key, Entry{made, std::prev(order_.end())});
    if (entries_.size() > capacity) {
        const Key oldest = order_.front();
        order_.pop_front();
        auto evicted = entries_.find(oldest);
        library().buffer_destroy(context_, evicted->second.buffer);
        entries_.erase(evicted);
    }
    *buffer = made;
    return GPUPRIM_SUCCESS;
}

void WrapCache::close() {
    if (context_) {
        for (auto &entry : entries_) library().buffer_destroy(context_, entry.second.buffer);
    }
    entries_.clear();
    order_.clear();
    context_ = nullptr;
}

}  // namespace gpuprim_ext
