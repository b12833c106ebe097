// SPDX-License-Identifier: Apache-2.0
// The check every segmented call runs first (segment_check.cu), and what it
// learns about the segments: the drivers of segmented sort, segmented scan
// and reduce, and top-k pick their path by it and narrow their work to the
// elements the segments cover.
#pragma once

#include "core/backend.h"
#include "cuda/device_env.h"

#include <cstdint>
#include <type_traits>

namespace gpuprim::cuda {

// What the device check of CSR offsets learns about the segments, for the
// drivers that pick a path by shape.
struct SegmentSummary {
    uint64_t longest;  // the longest segment's length
    // The elements the segments cover together, [covered_begin,
    // covered_begin + covered_length): CSR segments follow each other from
    // offsets[0] to offsets[segments]; rows cover all the data. Scratch
    // sized by this stays proportional to the work, not to the buffer.
    uint64_t covered_begin;
    uint64_t covered_length;
};
// Uniform rows: computed on the host. Offsets: one kernel reads them all,
// the call waits for its result (written to the context's mapped host slot),
// and throws INVALID_ARGUMENT naming the first bad index (fail_bad_offset).
SegmentSummary check_segments(const DeviceEnv &env, const SegmentLayout &layout);
// The call narrowed to the elements its segments cover (checked offsets):
// data_count becomes summary.covered_length and origin covered_begin, so
// tiles, scratch and workspace follow the segments, not the whole buffer.
// The caller moves its data pointers by the same covered_begin elements
// (at_covered). Rows cover all the data: nothing changes.
SegmentLayout narrowed_to_covered(const SegmentLayout &layout, const SegmentSummary &summary);
template <typename Pointer>
Pointer at_covered(Pointer data, const SegmentSummary &summary, uint64_t element_bytes) {
    if (!data) return data;
    using Byte = std::conditional_t<std::is_const_v<std::remove_pointer_t<Pointer>>, const char, char>;
    return static_cast<Pointer>(static_cast<Byte *>(data) + summary.covered_begin * element_bytes);
}

}  // namespace gpuprim::cuda
