// SPDX-License-Identifier: Apache-2.0
// The reduce driver: grid size, workspace and launch for one type and
// operator, and the run-time dispatch on dtype and operator.
#pragma once

#include "core/dtype.h"
#include "core/ops.h"
#include "cuda/device_env.h"
#include "cuda/reduce/agent_reduce.cuh"
#include "cuda/reduce/reduce_policy.cuh"

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace gpuprim::cuda {
namespace reduce_detail {

template <typename T, bool kDot>
bool is_single_block(const ReduceTuning &tuning, uint64_t count) {
    return count <= tuning.single_block_max_bytes / (sizeof(T) * (kDot ? 2 : 1));
}

// Blocks for count elements of T per input: a function of the count, the
// device and the kernel's build only (so float results are reproducible).
// blocks_per_sm: the tuning's, capped by how many of the kernel's blocks
// one SM holds (registers), so the persistent grid is one full wave.
template <typename T, typename Op, bool kDot>
uint32_t grid_size(const ReduceTuning &tuning, int sm_count, int blocks_per_sm, uint64_t count) {
    if (is_single_block<T, kDot>(tuning, count)) return 1;
    const uint64_t tile_elements =
        uint64_t(kReduceBlockThreads) * kVectorsPerThread<T, Op, kDot> * kVectorElements<T>;
    const uint64_t tiles = count / tile_elements + (count % tile_elements != 0);
    const uint64_t most = uint64_t(std::max(sm_count, 1)) * std::max(blocks_per_sm, 1);
    return static_cast<uint32_t>(std::min(tiles, most));
}

template <typename T, typename Op, bool kDot>
void launch(const DeviceEnv &env, const ReduceTuning &tuning, const void *a, const void *b,
            uint64_t count, void *result) {
    using V = typename CrossThread<T, Op, kDot>::Value;
    const auto kernel = reduce_kernel<T, Op, kDot>;
    const char *what = kDot ? "dot kernel launch" : "reduce kernel launch";
    int blocks_per_sm = tuning.blocks_per_sm;
    if (!is_single_block<T, kDot>(tuning, count))  // the residency query only where it matters
        blocks_per_sm = std::min(blocks_per_sm, resident_blocks(env, reinterpret_cast<const void *>(kernel),
                                                                kReduceBlockThreads, 0, what));
    const uint32_t grid = grid_size<T, Op, kDot>(tuning, env.sm_count, blocks_per_sm, count);
    V *partials = nullptr;
    uint32_t *ticket = nullptr;
    if (grid > 1) {
        partials = static_cast<V *>(env.workspace->reserve(uint64_t(grid) * sizeof(V)));
        ticket = env.zeroed_counters + ReduceCounterWords::kTicket;
    }
    if (env.measuring) return;
    kernel<<<grid, kReduceBlockThreads, 0, env.stream>>>(static_cast<const T *>(a), static_cast<const T *>(b),
                                                          count, partials, ticket, static_cast<T *>(result));
    check_launch(what);
}

inline void reduce_with(const DeviceEnv &env, const ReduceTuning &tuning, gpuprim_op_t op,
                        gpuprim_dtype_t dtype, const void *input, uint64_t count, void *result) {
    dispatch_dtype(dtype, [&](auto tag) {
        using T = decltype(tag);
        using W = wrapping_t<T>;
        switch (op) {
        case GPUPRIM_OP_SUM: return launch<W, SumOpFor<W>, false>(env, tuning, input, nullptr, count, result);
        case GPUPRIM_OP_MIN: return launch<T, MinOpFor<T>, false>(env, tuning, input, nullptr, count, result);
        case GPUPRIM_OP_MAX: return launch<T, MaxOpFor<T>, false>(env, tuning, input, nullptr, count, result);
        }
        fail(GPUPRIM_ERROR_INTERNAL, "reduce: unknown op %d", static_cast<int>(op));
    });
}

inline void dot_with(const DeviceEnv &env, const ReduceTuning &tuning, gpuprim_dtype_t dtype,
                     const void *a, const void *b, uint64_t count, void *result) {
    dispatch_dtype(dtype, [&](auto tag) {
        using W = wrapping_t<decltype(tag)>;
        launch<W, SumOpFor<W>, true>(env, tuning, a, b, count, result);
    });
}

}  // namespace reduce_detail
}  // namespace gpuprim::cuda
