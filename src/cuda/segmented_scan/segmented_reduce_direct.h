// SPDX-License-Identifier: Apache-2.0
// The segmented reduce without a look-back (segmented_reduce_direct.cu): a
// lane group per short segment (uniform rows, or CSR segments all short), a
// block per chunk of a long row.
#pragma once

#include "core/backend.h"
#include "cuda/device_env.h"
#include "cuda/engine/segment_check.h"

#include <gpuprim/gpuprim.h>

#include <cstdint>

namespace gpuprim::cuda {

// The longest CSR segment reduce_short_segments takes: a lane group of a
// warp at most, so a segment of 512 elements costs each lane 16 loads (four
// rounds of four in flight); past it one tile a block does better.
constexpr uint64_t kShortSegmentsMax = 512;

// Uniform rows: writes output[r] for every row; false (nothing launched) when
// the shape is left to the general kernel (offsets, no rows, empty rows, more
// chunks than a grid).
bool reduce_uniform_rows(const DeviceEnv &env, gpuprim_op_t op, gpuprim_dtype_t dtype, const SegmentLayout &layout,
                         const void *input, void *output);

// CSR segments none of which is longer than longest_bound (at most
// kShortSegmentsMax; the group size follows it, never the offsets' values).
// Writes output[s] for every segment, the identity for an empty one. The
// offsets have been checked, or a check guards the kernel: a deferred
// one's skip word (the layout's), or in_kernel (check_in_kernel, either
// mode) done by every block.
void reduce_short_segments(const DeviceEnv &env, gpuprim_op_t op, gpuprim_dtype_t dtype, const SegmentLayout &layout,
                           uint64_t longest_bound, const InKernelCheck &in_kernel, const void *input, void *output);

}  // namespace gpuprim::cuda
