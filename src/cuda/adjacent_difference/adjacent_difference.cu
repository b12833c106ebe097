// SPDX-License-Identifier: Apache-2.0
// Device-wide adjacent difference (agent_adjacent_difference.cuh has the
// kernels):
//
// - Out of place: one kernel. A grid of at most sm_count * blocks_per_sm
//   blocks; each warp takes chunks of 32 * items elements round robin, reads
//   the element before its chunk from the input and the rest from its own
//   registers, and writes the chunk's differences.
// - In place (output == input): first a small kernel copies the element
//   before each chunk (one per chunk, to the workspace), so that no chunk
//   reads an element another warp has already written over; then the same
//   kernel, taking those copies.
// Each result depends only on its element and the one before it (core/ops.h
// DifferenceOp), so the grid and the chunking change nothing in the output.
// Kernels are instantiated by dtype: 1- and 2-byte integers and floats by
// the arithmetic (wrapping integer subtraction is the same bits for signed
// and unsigned of a width, so the integers go by width).
#include "cuda/adjacent_difference/adjacent_difference.h"

#include "core/checked_size.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/half.h"
#include "cuda/adjacent_difference/adjacent_difference_policy.cuh"
#include "cuda/adjacent_difference/agent_adjacent_difference.cuh"
#include "cuda/util/grid_limits.h"

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace gpuprim::cuda {
namespace difference_detail {

template <typename T>
void launch(const DeviceEnv &env, const AdjacentDifferenceTuning &tuning, const T *input, T *output,
            uint64_t count) {
    using Agent = DifferenceAgent<T>;
    const uint64_t chunks = ceil_div(count, Agent::kChunk);
    const bool in_place = input == output;
    T *saved_befores = nullptr;
    if (in_place && chunks > 1)
        saved_befores = static_cast<T *>(env.workspace->reserve(
            checked_mul(chunks - 1, sizeof(T), "adjacent difference: the elements before the chunks")));
    if (env.measuring) return;
    const uint64_t warps_per_block = kDifferenceBlockThreads / 32;
    const uint64_t most_blocks = tuning.blocks_per_sm > 0
                                     ? uint64_t(std::max(env.sm_count, 1)) * uint64_t(tuning.blocks_per_sm)
                                     : kMaxGridX;
    const uint32_t grid = static_cast<uint32_t>(std::min(ceil_div(chunks, warps_per_block), most_blocks));
    if (saved_befores) {
        const uint32_t save_grid = static_cast<uint32_t>(
            std::min(ceil_div(chunks - 1, kDifferenceBlockThreads), most_blocks));
        save_chunk_befores_kernel<T><<<save_grid, kDifferenceBlockThreads, 0, env.stream>>>(input, chunks,
                                                                                            saved_befores);
        check_launch("adjacent difference: saving the elements before the chunks");
    }
    adjacent_difference_kernel<T><<<grid, kDifferenceBlockThreads, 0, env.stream>>>(input, output, count,
                                                                                   saved_befores);
    check_launch("adjacent difference launch");
}

}  // namespace difference_detail

void adjacent_difference(const DeviceEnv &env, gpuprim_dtype_t dtype, const void *input, void *output,
                         uint64_t count) {
    if (count == 0) fail(GPUPRIM_ERROR_INTERNAL, "adjacent difference: no elements (the API returns before)");
    const AdjacentDifferenceTuning tuning = adjacent_difference_tuning(env.code_arch);
    dispatch_dtype(dtype, [&](auto tag) {
        using E = wrapping_t<decltype(tag)>;  // integers by width
        difference_detail::launch<E>(env, tuning, static_cast<const E *>(input), static_cast<E *>(output), count);
    });
}

}  // namespace gpuprim::cuda
