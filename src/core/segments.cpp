// SPDX-License-Identifier: Apache-2.0
// The message of a bad CSR offset, shared by the backends (the CPU checks
// the offsets where they lie, CUDA on the device: both name the same index).
#include "core/backend.h"

#include <cstdio>

namespace gpuprim {

void fail_bad_offset(const SegmentLayout &layout, uint64_t index, int64_t value, int64_t previous) {
    // Values in the offsets' own type: a U64 offset of 2^63 or more is past
    // the end, not negative.
    char value_text[32], previous_text[32];
    const auto format = [&](char *text, int64_t v) {
        if (layout.offsets_signed) std::snprintf(text, 32, "%lld", static_cast<long long>(v));
        else std::snprintf(text, 32, "%llu", static_cast<unsigned long long>(static_cast<uint64_t>(v)));
    };
    format(value_text, value);
    format(previous_text, previous);
    const auto i = static_cast<unsigned long long>(index);
    if (layout.offsets_signed && value < 0)
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "segment offsets: offsets[%llu] = %s is negative", i, value_text);
    if (static_cast<uint64_t>(value) > layout.data_count)
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
             "segment offsets: offsets[%llu] = %s is past the end of the data (%llu elements)", i, value_text,
             static_cast<unsigned long long>(layout.data_count));
    fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
         "segment offsets: offsets[%llu] = %s is less than offsets[%llu] = %s (offsets must not decrease)", i,
         value_text, i - 1, previous_text);
}

void check_offsets_on_host(const SegmentLayout &layout) {
    if (!layout.offsets) return;
    int64_t previous = 0;
    for (uint64_t i = 0; i <= layout.segments; ++i) {
        const int64_t value = read_offset(layout.offsets, layout.offset_bytes, layout.offsets_signed, i);
        if (offset_is_bad(layout.offsets_signed, value, previous, i == 0, layout.data_count))
            fail_bad_offset(layout, i, value, previous);
        previous = value;
    }
}

}  // namespace gpuprim
