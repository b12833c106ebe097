// SPDX-License-Identifier: Apache-2.0
// Device-wide reduce (SUM/MIN/MAX) and dot product: one kernel launch per
// call at every size.
//
// - Each thread folds many elements with 16-byte coalesced loads, several in
//   flight per tile. Buffers may be aligned only to the element size: the
//   elements before the first 128-byte boundary (head) and after the last
//   whole vector (tail) are folded one by one. A dot whose two inputs are
//   misaligned differently loads element by element, same bytes per tile.
// - The grid is persistent, min(tiles, sm_count * blocks_per_sm): a function
//   of the count and the device only. Tiles go to blocks round robin, so which
//   elements each thread folds, and in which order, is fixed, and so is every
//   later combination: float results are bitwise reproducible (no float
//   atomics).
// - Cross-block step inside the same launch: each block stores its total in
//   the workspace and takes a ticket (env.zeroed_counters[0]); the last block
//   resets the ticket to zero, folds the totals in block order and writes the
//   result with one plain store (result may be mapped pinned host memory).
// - Tiny inputs run as one block: no workspace, no ticket.
// - Integer SUM and DOT wrap, so signed and unsigned types share one
//   instantiation per width.
#include "cuda/reduce/reduce.h"

#include "cuda/reduce/dispatch_reduce.cuh"

namespace gpuprim::cuda {

void reduce(const DeviceEnv &env, gpuprim_op_t op, gpuprim_dtype_t dtype, const void *input,
            uint64_t count, void *result) {
    reduce_detail::reduce_with(env, reduce_tuning(env.code_arch), op, dtype, input,
                               count, result);
}

void dot(const DeviceEnv &env, gpuprim_dtype_t dtype, const void *a, const void *b,
         uint64_t count, void *result) {
    reduce_detail::dot_with(env, reduce_tuning(env.code_arch), dtype, a, b, count,
                            result);
}

}  // namespace gpuprim::cuda
