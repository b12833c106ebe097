// SPDX-License-Identifier: Apache-2.0
// The CPU segmented reduce and scan (see cpu/segmented.h): each segment is
// cpu::reduce / cpu::scan of its slice, bit for bit, whatever the thread
// count (those are thread-count independent themselves).
#include "core/dtype.h"
#include "core/error.h"
#include "cpu/reduce_scan.h"
#include "cpu/segmented.h"

namespace gpuprim {
namespace cpu {

namespace {

// Calls run(s, span, threads) for every segment: the short ones in parallel
// tasks of many segments, each on one thread; the long ones (is_long) one
// after another, each on every thread.
template <typename IsLong, typename Run>
void for_each_segment(Parallel &parallel, const SegmentLayout &layout, const IsLong &is_long, const Run &run) {
    const SegmentPlan plan = plan_segments(layout, is_long);
    Parallel serial(1);
    parallel.for_each(plan.tasks(), [&](size_t t) {
        for (uint64_t s = plan.task_bounds[t]; s < plan.task_bounds[t + 1]; ++s) {
            const SegmentSpan span = segment_span(layout, s);
            if (!is_long(span.length)) run(s, span, serial);
        }
    });
    for (const uint64_t s : plan.long_segments) run(s, segment_span(layout, s), parallel);
}

}  // namespace

void segmented_reduce(Parallel &parallel, gpuprim_op_t op, gpuprim_dtype_t dtype, const SegmentLayout &layout,
                      const void *input, void *output) {
    check_offsets_on_host(layout);
    const bool threaded = parallel.threads() > 1;
    const auto is_long = [threaded](uint64_t length) { return threaded && length >= kParallelReduceMin; };
    dispatch_dtype(dtype, [&](auto zero) {
        using T = decltype(zero);
        const T *in = static_cast<const T *>(input);
        T *out = static_cast<T *>(output);
        for_each_segment(parallel, layout, is_long, [&](uint64_t s, SegmentSpan span, Parallel &threads) {
            out[s] = cpu::reduce<T>(threads, op, in + span.begin, span.length);
        });
    });
}

void segmented_scan(Parallel &parallel, gpuprim_op_t op, gpuprim_scan_kind_t kind, gpuprim_dtype_t dtype,
                    const SegmentLayout &layout, const void *input, void *output) {
    check_offsets_on_host(layout);
    if (!layout.offsets && layout.row_length == 0) return;  // no elements (the row count may be anything)
    const bool threaded = parallel.threads() > 1;
    const auto is_long = [threaded](uint64_t length) { return threaded && length >= kParallelScanMin; };
    const bool exclusive = kind == GPUPRIM_SCAN_EXCLUSIVE;
    dispatch_dtype(dtype, [&](auto zero) {
        using T = decltype(zero);
        const T *in = static_cast<const T *>(input);
        T *out = static_cast<T *>(output);
        for_each_segment(parallel, layout, is_long, [&](uint64_t, SegmentSpan span, Parallel &threads) {
            cpu::scan<T>(threads, op, exclusive, in + span.begin, out + span.begin, span.length);
        });
    });
}

}  // namespace cpu
}  // namespace gpuprim
