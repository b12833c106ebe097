// SPDX-License-Identifier: Apache-2.0
// The message of a bad CSR offset, shared by the backends (the CPU checks
// the offsets where they lie, CUDA on the device: both name the same index).
#include "core/backend.h"

namespace gpuprim {

void fail_bad_offset(const SegmentLayout &layout, uint64_t index, int64_t value, int64_t previous) {
    const auto i = static_cast<unsigned long long>(index);
    const auto v = static_cast<long long>(value);
    if (value < 0)
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
             "segment offsets: offsets[%llu] = %lld is negative (as a signed 64-bit integer)", i, v);
    if (static_cast<uint64_t>(value) > layout.data_count)
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
             "segment offsets: offsets[%llu] = %lld is past the end of the data (%llu elements)", i, v,
             static_cast<unsigned long long>(layout.data_count));
    fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
         "segment offsets: offsets[%llu] = %lld is less than offsets[%llu] = %lld (offsets must not decrease)", i,
         v, i - 1, static_cast<long long>(previous));
}

void check_offsets_on_host(const SegmentLayout &layout) {
    if (!layout.offsets) return;
    int64_t previous = 0;
    for (uint64_t i = 0; i <= layout.segments; ++i) {
        const int64_t value = read_offset(layout.offsets, layout.offset_bytes, layout.offsets_signed, i);
        if (value < 0 || static_cast<uint64_t>(value) > layout.data_count || (i > 0 && value < previous))
            fail_bad_offset(layout, i, value, previous);
        previous = value;
    }
}

}  // namespace gpuprim
