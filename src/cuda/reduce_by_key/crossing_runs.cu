// SPDX-License-Identifier: Apache-2.0
// reduce-by-key's crossing-runs kernels (crossing_runs_kernel.cuh), one per
// value operator (integers by width: run_ops.cuh dispatch_run_op) and op,
// whatever the keys' width (launch_runs.h).
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
    dispatch_run_op(request.value_dtype, request.op, what,
                    [&](auto op) { launch_crossing<decltype(op)>(env, p, what); });
}

}  // namespace reduce_by_key_detail
}  // namespace gpuprim::cuda
