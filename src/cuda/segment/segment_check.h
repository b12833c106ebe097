// SPDX-License-Identifier: Apache-2.0
// The device check of CSR offsets that every segmented call runs first, and
// what it learns about the segments for the drivers that pick a path by
// shape (segment_check.cu).
#pragma once

#include "core/backend.h"
#include "cuda/device_env.h"

#include <cstdint>

namespace gpuprim::cuda {

struct SegmentSummary {
    uint64_t longest;  // the longest segment's length
};

// Uniform rows: computed on the host. Offsets: one kernel reads them all,
// the call waits for its result (written to the context's mapped host slot),
// and throws INVALID_ARGUMENT naming the first bad index (fail_bad_offset).
SegmentSummary check_segments(const DeviceEnv &env, const SegmentLayout &layout);

}  // namespace gpuprim::cuda
