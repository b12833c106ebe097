// SPDX-License-Identifier: Apache-2.0
// The buffers a context has made over callers' memory, by (address, dtype,
// element count): a wrap holds only those three, so one made for the same
// three is the same buffer, and a call on arrays seen before makes none
// (wrapping CUDA memory asks the driver about the pointer). Least recently
// used first out. One per gpuprim.Context (its `_wraps`), used under the GIL.
#pragma once

#include "library.h"

#include <cstdint>
#include <list>
#include <unordered_map>

namespace gpuprim_ext {

class WrapCache {
public:
    static constexpr std::size_t capacity = 256;

    explicit WrapCache(gpuprim_context_t context) : context_(context) {}
    ~WrapCache() { close(); }
    WrapCache(const WrapCache &) = delete;
    WrapCache &operator=(const WrapCache &) = delete;

    // The buffer over `count` elements of dtype `code` at `data`, made on a
    // miss; its status on failure (buffer untouched).
    gpuprim_status_t wrap(int code, void *data, std::uint64_t count, gpuprim_buffer_t *buffer);

    // Destroys every cached buffer and forgets the context (Context.close()
    // calls it once the context is destroyed, which took the buffers with
    // it: their destroys then fail harmlessly).
    void close();

    gpuprim_context_t context() const { return context_; }
    std::size_t size() const { return entries_.size(); }

private:
    struct Key {
        std::uintptr_t data;
        int code;
        std::uint64_t count;
        bool operator==(const Key &other) const {
            return data == other.data && code == other.code && count == other.count;
        }
    };
    struct KeyHash {
        std::size_t operator()(const Key &key) const {
            return std::hash<std::uintptr_t>()(key.data) ^ (std::hash<std::uint64_t>()(key.count) * 31u) ^
                   static_cast<std::size_t>(key.code);
        }
    };
    struct Entry {
        gpuprim_buffer_t buffer;
        std::list<Key>::iterator age;  // position in order_
    };

    gpuprim_context_t context_;
    std::unordered_map<Key, Entry, KeyHash> entries_;
    std::list<Key> order_;  // least recently used first
};

}  // namespace gpuprim_ext
