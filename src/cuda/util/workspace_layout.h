// SPDX-License-Identifier: Apache-2.0
// A driver's workspace as a list of parts: laid out first (each part aligned
// to 256 bytes), reserved once in one piece, then handed out by part.
#pragma once

#include <cstdint>

namespace gpuprim::cuda {

struct WorkspacePart {
    uint64_t offset;
    uint64_t bytes;  // 0: the part is absent (its pointer is null)
};

class WorkspaceLayout {
public:
    static constexpr uint64_t kAlignment = 256;

    // Adds a part of at least `bytes` bytes (0: absent, takes no room).
    WorkspacePart add(uint64_t bytes) {
        const WorkspacePart part{total_, (bytes + kAlignment - 1) / kAlignment * kAlignment};
        total_ += part.bytes;
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
