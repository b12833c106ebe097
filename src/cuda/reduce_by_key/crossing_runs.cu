// SPDX-License-Identifier: Apache-2.0
// reduce-by-key's crossing-runs kernels (crossing_runs_kernel.cuh), one per
// value dtype and op, whatever the keys' width (launch_runs.h).
#include "core/dtype.h"
#include "core/error.h"
#include "core/portable.h"
#include "cuda/reduce_by_key/crossing_runs_kernel.cuh"
#include "cuda/reduce_by_key/launch_runs.h"
#include "cuda/util/check.h"

namespace gpuprim::cuda {
namespace reduce_by_key_detail {
namespace {

template <typename Op>
void launch_crossing(const DeviceEnv &env, const ReduceByKeyParams &p, const char *what) {
    const uint64_t blocks = ceil_div(uint64_t(p.num_tiles), uint64_t(CrossingRunsShape::kWarps));
    crossing_runs_kernel<Op><<<unsigned(blocks), CrossingRunsShape::kThreads, 0, env.stream>>>(p);
    check_launch(what);
}

}  // namespace

void launch_crossing_runs(const DeviceEnv &env, const ReduceByKeyParams &p, const ReduceByKeyRequest &request,
                          const char *what) {
    dispatch_dtype(request.value_dtype, [&](auto type) {
        using T = decltype(type);
        switch (request.op) {
        case GPUPRIM_OP_SUM: return launch_crossing<RunOp<T, GPUPRIM_OP_SUM>>(env, p, what);
        case GPUPRIM_OP_MIN: return launch_crossing<RunOp<T, GPUPRIM_OP_MIN>>(env, p, what);
        case GPUPRIM_OP_MAX: return launch_crossing<RunOp<T, GPUPRIM_OP_MAX>>(env, p, what);
        default:
            fail(GPUPRIM_ERROR_INTERNAL, "%s: op %d is not SUM, MIN or MAX", what, static_cast<int>(request.op));
        }
    });
}

}  // namespace reduce_by_key_detail
}  // namespace gpuprim::cuda
