// SPDX-License-Identifier: Apache-2.0
// How calls on CSR offsets check them (gpuprim_context_set_offsets_check):
// what a failed check found (a SegmentFault), its message, and the first
// failure a deferred check kept for gpuprim_context_check_deferred. Both
// backends use it: the CPU checks host offsets here, CUDA on the device
// (cuda/engine/segment_check.cu) with the same rules and the same messages.
#pragma once

#include <cstdint>
#include <string>

namespace gpuprim {

struct SegmentLayout;  // core/backend.h

// What a check of CSR offsets found wrong first. A bad offset anywhere
// (offset_is_bad) comes before a segment longer than the call's limit.
enum class SegmentFaultKind : uint32_t { kNone = 0, kBadOffset = 1, kTooLong = 2 };

struct SegmentFault {
    SegmentFaultKind kind = SegmentFaultKind::kNone;
    uint64_t index = 0;    // kBadOffset: the offset's index; kTooLong: the segment's
    int64_t value = 0;     // kBadOffset: offsets[index]; kTooLong: the segment's length
    int64_t previous = 0;  // kBadOffset: offsets[index - 1] (0 for index 0)
};

// The entry points whose segments may be CSR offsets, as the deferred
// report names them.
enum class SegmentedEntry : uint32_t { kSort = 0, kArgsort, kReduce, kScan, kTopk, kCount };
const char *segmented_entry_name(SegmentedEntry entry);

// The most elements one segment of this call may have: the caller's promise
// (segments->max_segment_length, 0: none) and, for calls that write indices
// (largest_index < UINT64_MAX), the indices' type.
uint64_t segment_length_limit(const SegmentLayout &layout, uint64_t largest_index);

// The most a segment of the call can have, known without reading the
// offsets: rows their length; offsets the data's count, the caller's
// promise, the indices' type (largest_index; UINT64_MAX: none).
uint64_t longest_segment_bound(const SegmentLayout &layout, uint64_t largest_index = UINT64_MAX);

// The first fault of host offsets (the CPU backend's), or kNone.
SegmentFault find_segment_fault_on_host(const SegmentLayout &layout, uint64_t limit);

// The message of a fault, as INVALID_ARGUMENT gives it. data_count,
// offsets_signed and max_length come from the layout; limit is what
// segment_length_limit gave the check.
std::string segment_fault_message(const SegmentLayout &layout, uint64_t limit, const SegmentFault &fault);
[[noreturn]] void fail_segment_fault(const SegmentLayout &layout, uint64_t limit, const SegmentFault &fault);

// The calls on offsets a context has made in deferred mode, and the first
// failure their checks found (one per context, as the header promises).
class DeferredOffsetsReport {
public:
    bool deferred() const { return deferred_; }
    void set_deferred(bool deferred) { deferred_ = deferred; }
    // The number the next call on offsets gets in messages (from 1).
    uint64_t next_call() { return ++calls_; }
    // Keeps the first failure; later ones are counted.
    void keep(SegmentedEntry entry, uint64_t call, const std::string &message);
    void count_more(uint64_t more) { more_ += more; }
    // Throws INVALID_ARGUMENT with the kept failure, which it clears; does
    // nothing when none is kept.
    void report_and_clear();

private:
    bool deferred_ = false;
    uint64_t calls_ = 0;
    std::string first_;
    uint64_t more_ = 0;
};

// The text the report gives for one failed call (also how CUDA's device
// record is turned into a message).
std::string deferred_failure_text(SegmentedEntry entry, uint64_t call, const std::string &message);

}  // namespace gpuprim
