// SPDX-License-Identifier: Apache-2.0
// Device-wide argmin / argmax (agent_argreduce.cuh has the kernels):
//
// - Pass 1: a persistent grid, min(tiles, sm_count * blocks_per_sm) blocks
//   (a function of the count, the device and the kernel's build only). Tiles
//   of 16-byte vectors go to blocks round robin; the elements before the
//   input's first 16-byte boundary and after its last whole vector go to
//   block 0, one a thread. Each thread keeps a (key, position) candidate
//   (core/ops.h ArgKey: the first position of the least key is the answer,
//   NaNs first, -0.0 tied with +0.0); the block reduces its threads'
//   candidates (BlockReduce) and writes one to the workspace.
// - Pass 2: one block reduces the partials and writes the position.
// - Inputs of at most single_block_max_bytes run as one block of pass 1,
//   which writes the position itself: no workspace, no pass 2.
// Candidates combine by key, then position: a total order, so the answer is
// the same for any grid and tree (no atomics at all). position is written by
// a plain store (it may be mapped pinned host memory, the backend's result
// slot); the backend synchronizes before reading it.
#include "cuda/argreduce/argreduce.h"

#include "core/checked_size.h"
#include "core/dtype.h"
#include "core/error.h"
#include "cuda/argreduce/agent_argreduce.cuh"
#include "cuda/argreduce/argreduce_policy.cuh"

#include <algorithm>
#include <cstdint>

namespace gpuprim::cuda {
namespace argreduce_detail {

// Pass 1's grid: one block up to the single-block size, else a block a tile
// of the vector body, at most one wave (blocks_per_sm capped by how many of
// the kernel's blocks one SM holds).
template <typename T>
uint32_t grid_size(const ArgreduceTuning &tuning, int sm_count, int blocks_per_sm, const T *input, uint64_t count) {
    using Agent = ArgreduceAgent<T, true>;  // the shapes do not depend on the op
    if (count <= tuning.single_block_max_bytes / sizeof(T)) return 1;
    const uint64_t units = (count - Agent::head_of(input, count)) / Agent::kVec;
    const uint64_t tile_units = uint64_t(kArgreduceBlockThreads) * Agent::kVectorsPerThread;
    const uint64_t tiles = std::max<uint64_t>(1, ceil_div(units, tile_units));
    const uint64_t most = uint64_t(std::max(sm_count, 1)) * uint64_t(std::max(blocks_per_sm, 1));
    return static_cast<uint32_t>(std::min(tiles, most));
}

template <typename T, bool kMin>
void launch(const DeviceEnv &env, const ArgreduceTuning &tuning, const T *input, uint64_t count, uint64_t *position) {
    const auto kernel = argreduce_tiles_kernel<T, kMin>;
    const char *what = "argreduce pass 1 launch";
    int blocks_per_sm = tuning.blocks_per_sm;
    if (count > tuning.single_block_max_bytes / sizeof(T))  // the residency query only where it matters
        blocks_per_sm = std::min(blocks_per_sm, resident_blocks(env, reinterpret_cast<const void *>(kernel),
                                                                kArgreduceBlockThreads, 0, what));
    const uint32_t grid = grid_size(tuning, env.sm_count, blocks_per_sm, input, count);
    Candidate *partials = nullptr;
    if (grid > 1)
        partials = static_cast<Candidate *>(
            env.workspace->reserve(checked_mul(grid, sizeof(Candidate), "argreduce partials")));
    if (env.measuring) return;
    kernel<<<grid, kArgreduceBlockThreads, 0, env.stream>>>(input, count, partials, position);
    check_launch(what);
    if (grid > 1) {
        argreduce_partials_kernel<<<1, kArgreduceBlockThreads, 0, env.stream>>>(partials, grid, position);
        check_launch("argreduce pass 2 launch");
    }
}

inline void argreduce_with(const DeviceEnv &env, const ArgreduceTuning &tuning, gpuprim_op_t op, gpuprim_dtype_t dtype,
                           const void *input, uint64_t count, uint64_t *position) {
    if (count == 0) fail(GPUPRIM_ERROR_INTERNAL, "argreduce: no elements (the API refuses an empty input)");
    dispatch_dtype(dtype, [&](auto tag) {
        using T = decltype(tag);
        const T *x = static_cast<const T *>(input);
        switch (op) {
        case GPUPRIM_OP_MIN: return launch<T, true>(env, tuning, x, count, position);
        case GPUPRIM_OP_MAX: return launch<T, false>(env, tuning, x, count, position);
        default: break;
        }
        fail(GPUPRIM_ERROR_INTERNAL, "argreduce: op %d is neither MIN nor MAX", static_cast<int>(op));
    });
}

}  // namespace argreduce_detail

void argreduce(const DeviceEnv &env, gpuprim_op_t op, gpuprim_dtype_t dtype, const void *input, uint64_t count,
               uint64_t *position) {
    argreduce_detail::argreduce_with(env, argreduce_tuning(env.code_arch), op, dtype, input, count, position);
}

}  // namespace gpuprim::cuda
