// SPDX-License-Identifier: Apache-2.0
// The check every segmented call runs first (segment_check.cu), and what it
// learns about the segments: the drivers of segmented sort, segmented scan
// and reduce, and top-k pick their path by it and narrow their work to the
// elements the segments cover.
#pragma once

#include "core/backend.h"
#include "core/offsets_check.h"
#include "cuda/device_env.h"

#include <cstdint>
#include <type_traits>

namespace gpuprim::cuda {

// The first failure a deferred check found, in the context's mapped host
// memory (DeviceEnv::deferred_record): the check kernel fills it when kind
// is 0 and counts later failures in `more`; the host reads and clears it in
// gpuprim_context_check_deferred and gpuprim_context_synchronize. A
// context's calls run in stream order, graph replays too: no atomics.
struct DeferredRecord {
    uint32_t kind;   // SegmentFaultKind; 0: none kept
    uint32_t entry;  // SegmentedEntry
    uint64_t call;   // the call's number on the context, as enqueued (captured)
    uint64_t index;  // SegmentFault
    int64_t value;
    int64_t previous;
    uint64_t data_count;  // what the message needs of the call's layout
    uint64_t max_length;
    uint64_t limit;
    uint32_t offsets_signed;
    uint32_t more;  // failures after this one
    // The last call whose check failed (kept or counted): a call that then
    // fails on the host takes its fault back (discard_deferred_fault).
    uint64_t last_failed_call;
};

// A check done by the call's one kernel itself, in every block, before it
// reads the offsets (engine/in_kernel_check.cuh): for small offsets arrays
// (kInKernelCheckMax entries) it saves the check's own launch, and in
// waiting mode the wait between that launch and the call's kernel. Where
// the fault goes: deferred mode, the context's DeferredRecord; waiting
// mode, the context's mapped host slot (waited), which the host reads after
// the kernel (await_in_kernel_check). offsets == nullptr: none.
constexpr uint64_t kInKernelCheckMax = 1024;
// The fault a waited in-kernel check found; kind 0: none (the host clears it
// before the launch).
struct InKernelFault {
    uint32_t kind;  // SegmentFaultKind
    uint32_t reserved;
    uint64_t index;
    int64_t value;
    int64_t previous;
};
struct InKernelCheck {
    const void *offsets;
    uint32_t offset_bytes;
    bool offsets_signed;
    uint64_t segments;
    uint64_t data_count;
    uint64_t limit;  // segment_length_limit
    uint64_t max_length;
    DeferredRecord *record;  // deferred mode: the context's (DeviceEnv::deferred_record)
    uint32_t entry;
    uint64_t call;
    InKernelFault *waited;  // waiting mode: the host slot's device address, else nullptr
};

// What the device check of CSR offsets learns about the segments, for the
// drivers that pick a path by shape.
struct SegmentSummary {
    // The longest segment's length; in deferred mode a bound on it
    // (longest_segment_bound).
    uint64_t longest;
    // The elements the segments cover together, [covered_begin,
    // covered_begin + covered_length): CSR segments follow each other from
    // offsets[0] to offsets[segments]; rows cover all the data. Scratch
    // sized by this stays proportional to the work. Deferred mode: all the
    // data.
    uint64_t covered_begin;
    uint64_t covered_length;
    // Deferred mode: the word the check sets when the offsets fail it
    // (SegmentLayout::skip), else nullptr.
    const uint32_t *skip = nullptr;
    // Checked by the call's kernel (check_in_kernel), either mode.
    InKernelCheck in_kernel{};
};

// Uniform rows: computed on the host. Offsets: one kernel reads them all,
// checks the rules (offset_is_bad) and each segment's length against
// segment_length_limit(layout, largest_index) (UINT64_MAX: no indices).
// - Waiting mode (the default): the call waits for its result (written to
//   the context's mapped host slot), and throws INVALID_ARGUMENT naming the
//   first fault (core/offsets_check.h).
// - Deferred mode (env.defer_offsets_check): nothing waits. The kernel sets
//   the skip word when the offsets fail, which every later kernel of the
//   call reads (SegmentBounds::skipped) to write nothing, and keeps the
//   fault in the context's DeferredRecord. The summary holds bounds, not
//   the data's values: nothing narrowed, longest = longest_segment_bound.
SegmentSummary check_segments(const DeviceEnv &env, const SegmentLayout &layout,
                              uint64_t largest_index = UINT64_MAX);
// For a call that reads its offsets in one kernel only and has fewer than
// kInKernelCheckMax segments, in either mode: nothing is launched, and the
// summary's in_kernel says what that kernel checks (the drivers put it in
// the kernel's arguments). Its bounds are check_segments' deferred ones
// (longest = longest_segment_bound, nothing narrowed), so the call's path
// is the same in both modes. Waiting mode: after launching that kernel the
// driver calls await_in_kernel_check.
bool can_check_in_kernel(const DeviceEnv &env, const SegmentLayout &layout);
SegmentSummary check_in_kernel(const DeviceEnv &env, const SegmentLayout &layout,
                               uint64_t largest_index = UINT64_MAX);
// Waiting mode, the offsets checked by the kernel just launched: waits for
// the stream and throws INVALID_ARGUMENT naming the fault it found (the
// kernel then wrote nothing). Does nothing otherwise (no in-kernel check,
// deferred mode, a workspace query).
void await_in_kernel_check(const DeviceEnv &env, const SegmentLayout &layout, const SegmentSummary &summary);
// A call that fails after its deferred check was enqueued (its workspace
// refused, say) changes nothing, the deferred report included: this
// enqueues, in stream order after that check, the undoing of what the
// check kept for env.offsets_call, if anything. Nothing is thrown; where
// it cannot be enqueued the call's own failure is what the caller sees.
void discard_deferred_fault(const DeviceEnv &env) noexcept;
// longest_segment_bound (core/offsets_check.h): the most a segment of the
// call can have, known without reading the offsets.
// Whether this call's offsets check is deferred (offsets given, deferred mode).
inline bool check_is_deferred(const DeviceEnv &env, const SegmentLayout &layout) {
    return layout.offsets && env.defer_offsets_check;
}
// The call narrowed to the elements its segments cover (checked offsets):
// data_count becomes summary.covered_length and origin covered_begin, so
// tiles, scratch and workspace follow the segments, not the whole buffer.
// The caller moves its data pointers by the same covered_begin elements
// (at_covered). Rows cover all the data: nothing changes. The skip word
// travels with it.
SegmentLayout narrowed_to_covered(const SegmentLayout &layout, const SegmentSummary &summary);
template <typename Pointer>
Pointer at_covered(Pointer data, const SegmentSummary &summary, uint64_t element_bytes) {
    if (!data) return data;
    using Byte = std::conditional_t<std::is_const_v<std::remove_pointer_t<Pointer>>, const char, char>;
    return static_cast<Pointer>(static_cast<Byte *>(data) + summary.covered_begin * element_bytes);
}

}  // namespace gpuprim::cuda
