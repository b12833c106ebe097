// SPDX-License-Identifier: Apache-2.0
// Writing a data-dependent count to its sinks (core/backend.h CountSink) on
// the CPU backend, where backend memory is host memory.
#pragma once

#include "core/backend.h"

#include <cstdint>
#include <cstring>

namespace gpuprim {
namespace cpu {

inline void write_count(const CountSink &sink, uint64_t count) {
    if (sink.host) *sink.host = count;
    if (!sink.device) return;
    if (sink.device_bytes == 4) {
        const uint32_t narrow = uint32_t(count);  // fits: src/api checked
        std::memcpy(sink.device, &narrow, sizeof narrow);
    } else {
        std::memcpy(sink.device, &count, sizeof count);
    }
}

}  // namespace cpu
}  // namespace gpuprim
