// SPDX-License-Identifier: Apache-2.0
// The CPU backend's segmented calls (gpuprim_segmented_*): every segment is
// computed exactly as the flat call computes that slice (cpu/reduce_scan.h,
// cpu/sort_by_width.h), so a segment's result does not depend on the thread
// count or on how segments are grouped into tasks.
//
// Parallelism: short segments are grouped into tasks of consecutive segments
// of about kSegmentTaskWeight elements, each task running its segments one
// after the other on one thread; long segments (where the flat call itself
// would use several threads) run one at a time on every thread. Offsets are
// checked (check_offsets_on_host) before anything is written.
#pragma once

#include "core/backend.h"
#include "core/workspace.h"
#include "cpu/parallel.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace gpuprim {
namespace cpu {

// measure non-null (segmented_sort, topk): nothing is read or written,
// *measure is set to the workspace bytes the call reserves: exactly with
// uniform rows, with CSR offsets the most it can (any segment as long as the
// data), the offsets left unread and unchecked.
void segmented_sort(Parallel &parallel, Workspace &workspace, const SortRequest &request,
                    const SegmentLayout &layout, uint64_t *measure = nullptr);
void segmented_reduce(Parallel &parallel, gpuprim_op_t op, gpuprim_dtype_t dtype, const SegmentLayout &layout,
                      const void *input, void *output);
void segmented_scan(Parallel &parallel, gpuprim_op_t op, gpuprim_scan_kind_t kind, gpuprim_dtype_t dtype,
                    const SegmentLayout &layout, const void *input, void *output);
// Top-k of every segment (cpu/topk.cpp); a flat top-k is one row.
void topk(Parallel &parallel, Workspace &workspace, const TopkRequest &request, const SegmentLayout &layout,
          uint64_t *measure = nullptr);

// A task's weight: its elements plus kSegmentCost per segment (the fixed
// cost of a segment, so that many empty or tiny segments still split).
constexpr uint64_t kSegmentTaskWeight = uint64_t(1) << 15;
constexpr uint64_t kSegmentCost = 16;

// Which segments run where: tasks of short segments (task t covers segments
// [task_bounds[t], task_bounds[t + 1]), skipping the long ones) and the long
// segments in order.
struct SegmentPlan {
    std::vector<uint64_t> task_bounds;
    std::vector<uint64_t> long_segments;
    uint64_t longest = 0;  // the longest segment's length
    size_t tasks() const { return task_bounds.empty() ? 0 : task_bounds.size() - 1; }
};

// is_long(length): whether a segment runs alone on every thread. Layout
// offsets must have been checked. Allocates (host) before anything is written.
template <typename IsLong>
SegmentPlan plan_segments(const SegmentLayout &layout, const IsLong &is_long) {
    SegmentPlan plan;
    plan.task_bounds.push_back(0);
    uint64_t weight = 0;
    for (uint64_t s = 0; s < layout.segments; ++s) {
        const uint64_t length = segment_span(layout, s).length;
        plan.longest = std::max(plan.longest, length);
        if (is_long(length)) {
            plan.long_segments.push_back(s);
            continue;
        }
        weight += length + kSegmentCost;
        if (weight >= kSegmentTaskWeight) {
            plan.task_bounds.push_back(s + 1);
            weight = 0;
        }
    }
    if (plan.task_bounds.back() != layout.segments) plan.task_bounds.push_back(layout.segments);
    return plan;
}

}  // namespace cpu
}  // namespace gpuprim
