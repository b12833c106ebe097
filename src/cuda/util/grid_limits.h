// SPDX-License-Identifier: Apache-2.0
// The largest grid a kernel launch may ask for, on every device the library
// runs on (compute capability 8.0 and up): a driver whose work can take more
// blocks launches it in pieces of at most these.
#pragma once

#include <cstdint>

namespace gpuprim::cuda {

constexpr uint64_t kMaxGridX = 0x7fffffffull;  // gridDim.x: 2^31 - 1
constexpr uint32_t kMaxGridY = 65535;          // gridDim.y

}  // namespace gpuprim::cuda
