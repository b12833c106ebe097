// SPDX-License-Identifier: Apache-2.0
// reduce-by-key's tile kernels by key register width (launch_runs.h):
// tiles_narrow_keys.cu instantiates launch_for_values for 4-byte registers
// (keys of 1, 2 and 4 bytes), tiles_8byte_keys.cu for 8-byte keys.
#pragma once

#include "core/dtype.h"
#include "core/error.h"
#include "core/portable.h"
#include "cuda/reduce_by_key/agent_reduce_by_key.cuh"
#include "cuda/reduce_by_key/launch_runs.h"
#include "cuda/util/check.h"
#include "cuda/util/grid_limits.h"

namespace gpuprim::cuda {
namespace reduce_by_key_detail {

template <typename Bits, typename Op>
void launch(const DeviceEnv &env, ReduceByKeyParams p, const ReduceByKeyRequest &request, const char *what) {
    using Agent = ReduceByKeyAgent<Bits, Op>;
    const uint64_t num_tiles = ceil_div(p.count, uint64_t(Agent::kTileItems));
    if (num_tiles > kMaxGridX)
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "%s: %llu tiles; at most 2^31 - 1", what,
             static_cast<unsigned long long>(num_tiles));
    p.num_tiles = uint32_t(num_tiles);
    lay_out_workspace(env, p, what);
    if (env.measuring) return;
    reduce_by_key_tiles_kernel<Bits, Op><<<p.num_tiles, Agent::kThreads, 0, env.stream>>>(p);
    check_launch(what);
    if (p.num_tiles > 1 && p.results) launch_crossing_runs(env, p, request, what);
}

template <typename Bits>
void launch_for_values(const DeviceEnv &env, const ReduceByKeyParams &p, const ReduceByKeyRequest &request,
                       const char *what) {
    if (!p.values) return launch<Bits, RunOp<uint32_t, GPUPRIM_OP_SUM>>(env, p, request, what);  // no aggregate
    dispatch_run_op(request.value_dtype, request.op, what,
                    [&](auto op) { launch<Bits, decltype(op)>(env, p, request, what); });
}

}  // namespace reduce_by_key_detail
}  // namespace gpuprim::cuda
