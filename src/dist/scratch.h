// SPDX-License-Identifier: Apache-2.0
// A distributed call's scratch as named parts of one block of the context's
// distributed workspace: sized (checked) before the ranks agree, so a rank
// short of memory fails the call on every rank before any data moves.
#pragma once

#include "core/checked_size.h"

#include <cstdint>
#include <vector>

namespace gpuprim::dist {

class ScratchPlan {
public:
    // Adds a part of `bytes` (256-byte aligned start) and returns its index.
    size_t add(uint64_t bytes) {
        offsets_.push_back(total_.value());
        total_ = total_.plus(bytes).aligned(256);
        return offsets_.size() - 1;
    }
    uint64_t bytes() const { return total_.value(); }
    // The part's address in a block of bytes() bytes.
    template <typename T = void>
    T *part(void *block, size_t index) const {
        return reinterpret_cast<T *>(static_cast<char *>(block) + offsets_[index]);
    }

private:
    std::vector<uint64_t> offsets_;
    CheckedSize total_{0, "the distributed call's scratch"};
};

}  // namespace gpuprim::dist
