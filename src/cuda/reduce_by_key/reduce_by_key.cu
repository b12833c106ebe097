// SPDX-License-Identifier: Apache-2.0
// reduce-by-key (reduce_by_key/reduce_by_key.h): two kernels.
// 1. The tile kernel (agent_reduce_by_key.cuh): a single pass of tiles with
//    a decoupled look-back over the tiles' INTEGER run counts only (exact in
//    any order), so every run gets its index, key and length in this pass,
//    and every run that begins and ends inside one tile its result too,
//    folded in a shape fixed by the data. Each tile leaves a record: its
//    head count, the fold of its last run piece, and the fold of the
//    elements before its first head with the run they end, if any.
// 2. The crossing-runs kernel (crossing_runs_kernel.cuh): for each run that
//    crosses tiles, its pieces folded in tile order. No float atomics, and no
//    fold takes what a look-back happened to see: float sums are the same
//    bits on every run. (An integer or MIN/MAX result could ride the
//    look-back; one path for all until measured: docs/tuning/reduce_by_key.md.)
// Keys travel by width (runs are by bits): 1-, 2- and 4-byte keys in 4-byte
// registers (tiles_narrow_keys.cu, the width in memory a kernel parameter),
// 8-byte keys (tiles_8byte_keys.cu); values by dtype (integers by width,
// run_ops.cuh), the op a template; 12 x 3 crossing kernels
// (crossing_runs.cu); this file is the driver (launch_runs.h).
#include "cuda/reduce_by_key/reduce_by_key.h"

#include "core/checked_size.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/portable.h"
#include "cuda/engine/count_prefix.cuh"
#include "cuda/engine/count_sink.cuh"
#include "cuda/reduce_by_key/launch_runs.h"
#include "cuda/reduce_by_key/reduce_by_key_policy.cuh"
#include "cuda/reduce_by_key/run_ops.cuh"
#include "cuda/util/check.h"
#include "cuda/util/counters.h"
#include "cuda/util/workspace_layout.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

namespace gpuprim::cuda {
namespace reduce_by_key_detail {

// Marks ((last head position + 1) << 2 | flag) must fit 64 bits.
constexpr uint64_t kMostElements = uint64_t(1) << 61;

void lay_out_workspace(const DeviceEnv &env, ReduceByKeyParams &p, const char *what) {
    p.status_slots = nullptr;
    p.records = TileRecords{};
    if (p.num_tiles <= 1) return;
    WorkspaceLayout layout;
    const WorkspacePart slots = layout.add(p.num_tiles, SelectTileStatus::kSlotBytes);
    const WorkspacePart heads = layout.add(p.num_tiles, sizeof(uint32_t));
    const WorkspacePart last_values = layout.add(p.num_tiles, sizeof(unsigned long long));
    const WorkspacePart open_values = layout.add(p.num_tiles, sizeof(unsigned long long));
    const WorkspacePart open_runs = layout.add(p.num_tiles, sizeof(unsigned long long));
    void *base = env.workspace->reserve(layout.bytes());
    p.status_slots = WorkspaceLayout::at<unsigned long long>(base, slots);
    p.records.heads = WorkspaceLayout::at<uint32_t>(base, heads);
    p.records.last_values = WorkspaceLayout::at<unsigned long long>(base, last_values);
    p.records.open_values = WorkspaceLayout::at<unsigned long long>(base, open_values);
    p.records.open_runs = WorkspaceLayout::at<unsigned long long>(base, open_runs);
    if (env.measuring) return;
    check(cudaMemsetAsync(p.status_slots, 0, slots.bytes, env.stream), what);
}

void run(const DeviceEnv &env, const SortedGroupsRequest &groups, const char *what) {
    const ReduceByKeyRequest &request = groups.runs;
    if (request.count == 0) return write_zero_count(env, request.runs, what);
    if (request.count >= kMostElements)
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "%s: %llu elements; at most 2^61 - 1", what,
             static_cast<unsigned long long>(request.count));
    if (!request.values != !request.results)
        fail(GPUPRIM_ERROR_INTERNAL, "%s: values and results must be both given or both absent", what);
    ReduceByKeyParams p{};
    p.keys = request.keys;
    p.count = request.count;
    p.values = request.values;
    p.value_flip = request.values ? value_flip(request.value_dtype, request.op) : 0;
    p.value_order = groups.value_order;
    p.value_order_bytes = groups.value_order_bytes;
    p.keys_out = request.keys_out;
    p.results = request.results;
    p.lengths = request.lengths;
    p.length_bytes = request.length_bytes;
    p.element_runs = groups.element_runs;
    p.element_run_bytes = groups.element_run_bytes;
    p.count_out = request.runs.device;
    p.count_out_bytes = request.runs.device_bytes;
    p.count_host = host_count_slot(env, request.runs);
    p.ticket = env.zeroed_counters + ReduceByKeyCounterWords::kTicket;
    p.poll_ns = reduce_by_key_tuning(env.code_arch).poll_ns;
    p.key_bytes = request.key_bytes;
    switch (request.key_bytes) {
    case 1: case 2: case 4: launch_for_values<uint32_t>(env, p, request, what); break;
    case 8: launch_for_values<uint64_t>(env, p, request, what); break;
    default: fail(GPUPRIM_ERROR_INTERNAL, "reduce-by-key: key width %u", request.key_bytes);
    }
    finish_host_count(env, request.runs, what);
}

}  // namespace reduce_by_key_detail

void reduce_by_key(const DeviceEnv &env, const ReduceByKeyRequest &request) {
    SortedGroupsRequest plain{};
    plain.runs = request;
    reduce_by_key_detail::run(env, plain, "reduce-by-key");
}

void reduce_sorted_groups(const DeviceEnv &env, const SortedGroupsRequest &request) {
    reduce_by_key_detail::run(env, request, "group-by (reduce of the sorted groups)");
}

}  // namespace gpuprim::cuda
