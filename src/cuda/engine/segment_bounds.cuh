// SPDX-License-Identifier: Apache-2.0
// Where the segments of a segmented call lie, as kernels read it: uniform rows
// (segment s starts at s * row_length) or CSR offsets of 4 or 8 bytes. The
// offsets have been checked (segment_check.cu) before any kernel that uses
// this runs, so every one is in [0, count] and they do not decrease: signed
// and unsigned offsets of one width read alike. A deferred check may still
// be failing them: such a kernel asks skipped() before it reads any.
#pragma once

#include "core/backend.h"

#include <cstdint>

namespace gpuprim::cuda {

struct SegmentBounds {
    const void *offsets;    // nullptr: uniform rows
    uint32_t offset_bytes;  // 4 or 8
    uint64_t row_length;
    uint64_t segments;
    uint64_t origin;  // subtracted from every offset (SegmentLayout::origin)
    // Deferred offsets check: nonzero when the offsets failed it
    // (SegmentLayout::skip); nullptr otherwise.
    const uint32_t *skip;

    static SegmentBounds of(const SegmentLayout &layout) {
        return {layout.offsets, layout.offset_bytes, layout.row_length, layout.segments, layout.origin, layout.skip};
    }

    // True when the call's offsets failed a deferred check: a kernel that
    // reads them returns at once (every thread alike), writing nothing.
    __device__ __forceinline__ bool skipped() const { return skip && *skip != 0; }

    // Segment s's first element; s == segments gives the end of the last one.
    __device__ __forceinline__ uint64_t offset(uint64_t s) const {
        if (!offsets) return s * row_length;
        if (offset_bytes == 4) return __ldg(static_cast<const uint32_t *>(offsets) + s) - origin;
        return __ldg(reinterpret_cast<const unsigned long long *>(offsets) + s) - origin;
    }

    // The first segment whose start is at or past position (segments + 1 if
    // none): a binary search over the offsets, a division for rows.
    __device__ __forceinline__ uint64_t first_starting_at_or_after(uint64_t position) const {
        if (!offsets) {
            if (row_length == 0) return position == 0 ? 0 : segments + 1;
            const uint64_t s = (position + row_length - 1) / row_length;
            return s <= segments ? s : segments + 1;
        }
        uint64_t low = 0, high = segments + 1;  // answer in [low, high]
        while (low < high) {
            const uint64_t middle = low + (high - low) / 2;
            if (offset(middle) < position) low = middle + 1;
            else high = middle;
        }
        return low;
    }
};

}  // namespace gpuprim::cuda
