// SPDX-License-Identifier: Apache-2.0
// A driver's workspace as a list of parts: laid out first (each part aligned
// to 256 bytes), reserved once in one piece, then handed out by part.
#pragma once

#include "core/checked_size.h"

#include <cstdint>

namespace gpuprim::cuda {

struct WorkspacePart {
    uint64_t offset;
    uint64_t bytes;  // 0: the part is absent (its pointer is null)
};

class WorkspaceLayout {
public:
    static constexpr uint64_t kAlignment = 256;

    // Adds a part of count elements of element_bytes each (0: absent, takes
    // no room). Every size is checked: a count near 2^64 fails with
    // OUT_OF_MEMORY naming the driver's workspace instead of wrapping.
    WorkspacePart add(uint64_t count, uint64_t element_bytes = 1) {
        const char *what = "a CUDA driver's workspace";
        const uint64_t bytes = CheckedSize(count, what).times(element_bytes).aligned(kAlignment).value();
        const WorkspacePart part{total_, bytes};
        total_ = checked_add(total_, bytes, what);
        return part;
    }
    // What the parts need together: the size to reserve.
    uint64_t bytes() const { return total_; }

    // The part's address in a workspace of bytes() bytes at base; null for
    // an absent part.
    template <typename T>
    static T *at(void *base, WorkspacePart part) {
        return part.bytes == 0 ? nullptr : reinterpret_cast<T *>(static_cast<unsigned char *>(base) + part.offset);
    }

private:
    uint64_t total_ = 0;
};

}  // namespace gpuprim::cuda
