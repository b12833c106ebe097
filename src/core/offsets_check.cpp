// SPDX-License-Identifier: Apache-2.0
// The rules and messages of the CSR offsets check, shared by the backends
// (the CPU checks the offsets where they lie, CUDA on the device: both name
// the same index), and the report of deferred checks.
#include "core/offsets_check.h"

#include "core/backend.h"
#include "core/error.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

namespace gpuprim {

namespace {

std::string formatted(const char *format, ...) __attribute__((format(printf, 1, 2)));
std::string formatted(const char *format, ...) {
    char text[512];
    va_list arguments;
    va_start(arguments, format);
    std::vsnprintf(text, sizeof text, format, arguments);
    va_end(arguments);
    return text;
}

using ull = unsigned long long;

}  // namespace

const char *segmented_entry_name(SegmentedEntry entry) {
    switch (entry) {
    case SegmentedEntry::kSort: return "gpuprim_segmented_sort";
    case SegmentedEntry::kArgsort: return "gpuprim_segmented_argsort";
    case SegmentedEntry::kReduce: return "gpuprim_segmented_reduce";
    case SegmentedEntry::kScan: return "gpuprim_segmented_scan";
    case SegmentedEntry::kTopk: return "gpuprim_segmented_topk";
    case SegmentedEntry::kCount: break;
    }
    return "a segmented call";
}

uint64_t segment_length_limit(const SegmentLayout &layout, uint64_t largest_index) {
    uint64_t limit = layout.max_length != 0 ? layout.max_length : UINT64_MAX;
    if (largest_index < UINT64_MAX) limit = std::min(limit, largest_index + 1);
    return limit;
}

uint64_t longest_segment_bound(const SegmentLayout &layout, uint64_t largest_index) {
    if (!layout.offsets) return layout.segments ? layout.row_length : 0;
    return std::min(layout.data_count, segment_length_limit(layout, largest_index));
}

SegmentFault find_segment_fault_on_host(const SegmentLayout &layout, uint64_t limit) {
    if (!layout.offsets) return {};
    int64_t previous = 0;
    for (uint64_t i = 0; i <= layout.segments; ++i) {
        const int64_t value = read_offset(layout.offsets, layout.offset_bytes, layout.offsets_signed, i);
        if (offset_is_bad(layout.offsets_signed, value, previous, i == 0, layout.data_count))
            return {SegmentFaultKind::kBadOffset, i, value, i > 0 ? previous : 0};
        previous = value;
    }
    if (limit == UINT64_MAX) return {};
    for (uint64_t s = 0; s < layout.segments; ++s) {
        const SegmentSpan span = segment_span(layout, s);
        if (span.length > limit) return {SegmentFaultKind::kTooLong, s, static_cast<int64_t>(span.length), 0};
    }
    return {};
}

std::string segment_fault_message(const SegmentLayout &layout, uint64_t limit, const SegmentFault &fault) {
    const auto i = static_cast<ull>(fault.index);
    if (fault.kind == SegmentFaultKind::kTooLong) {
        const auto length = static_cast<ull>(fault.value);
        if (layout.max_length != 0 && static_cast<uint64_t>(fault.value) > layout.max_length)
            return formatted("segments: segment %llu has %llu elements, more than segments->max_segment_length = %llu",
                             i, length, static_cast<ull>(layout.max_length));
        return formatted("segments: segment %llu has %llu keys; its last index, %llu, does not fit the indices' "
                         "type (at most %llu)",
                         i, length, length - 1, static_cast<ull>(limit - 1));
    }
    // Values in the offsets' own type: a U64 offset of 2^63 or more is past
    // the end, not negative.
    char value_text[32], previous_text[32];
    const auto format = [&](char *text, int64_t v) {
        if (layout.offsets_signed) std::snprintf(text, 32, "%lld", static_cast<long long>(v));
        else std::snprintf(text, 32, "%llu", static_cast<ull>(static_cast<uint64_t>(v)));
    };
    format(value_text, fault.value);
    format(previous_text, fault.previous);
    if (layout.offsets_signed && fault.value < 0)
        return formatted("segment offsets: offsets[%llu] = %s is negative", i, value_text);
    if (static_cast<uint64_t>(fault.value) > layout.data_count)
        return formatted("segment offsets: offsets[%llu] = %s is past the end of the data (%llu elements)", i,
                         value_text, static_cast<ull>(layout.data_count));
    return formatted("segment offsets: offsets[%llu] = %s is less than offsets[%llu] = %s (offsets must not "
                     "decrease)",
                     i, value_text, i - 1, previous_text);
}

void fail_segment_fault(const SegmentLayout &layout, uint64_t limit, const SegmentFault &fault) {
    fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "%s", segment_fault_message(layout, limit, fault).c_str());
}

void fail_bad_offset(const SegmentLayout &layout, uint64_t index, int64_t value, int64_t previous) {
    fail_segment_fault(layout, UINT64_MAX, {SegmentFaultKind::kBadOffset, index, value, previous});
}

void check_offsets_on_host(const SegmentLayout &layout, uint64_t largest_index) {
    const uint64_t limit = segment_length_limit(layout, largest_index);
    const SegmentFault fault = find_segment_fault_on_host(layout, limit);
    if (fault.kind != SegmentFaultKind::kNone) fail_segment_fault(layout, limit, fault);
}

std::string deferred_failure_text(SegmentedEntry entry, uint64_t call, const std::string &message) {
    return formatted("%s (call %llu on CSR offsets on this context, its offsets check deferred): ",
                     segmented_entry_name(entry), static_cast<ull>(call)) +
           message;
}

void DeferredOffsetsReport::keep(SegmentedEntry entry, uint64_t call, const std::string &message) {
    if (first_.empty()) first_ = deferred_failure_text(entry, call, message);
    else ++more_;
}

void DeferredOffsetsReport::report_and_clear() {
    if (first_.empty()) return;
    std::string message = std::move(first_);
    if (more_ != 0)
        message += formatted("; %llu more call(s) on offsets failed their deferred check after it",
                             static_cast<ull>(more_));
    first_.clear();
    more_ = 0;
    fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "%s", message.c_str());
}

}  // namespace gpuprim
