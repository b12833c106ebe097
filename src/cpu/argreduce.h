// SPDX-License-Identifier: Apache-2.0
// The CPU backend's argmin / argmax (gpuprim_argreduce), argreduce.cpp.
#pragma once

#include "cpu/parallel.h"

#include <gpuprim/gpuprim.h>

#include <cstdint>

namespace gpuprim {
namespace cpu {

// The first position of the least (op MIN) or greatest (op MAX) of count >= 1
// elements of dtype, with numpy's rules (core/ops.h ArgKey: the first NaN
// wins, -0.0 ties with +0.0).
uint64_t argreduce(Parallel &parallel, gpuprim_op_t op, gpuprim_dtype_t dtype, const void *input, uint64_t count);

}  // namespace cpu
}  // namespace gpuprim
