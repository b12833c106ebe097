// SPDX-License-Identifier: Apache-2.0
// select / partition / unique / run-length encode (select/select.h): one
// single-pass kernel of tiles with a decoupled look-back over the tiles'
// kept counts (agent_select.cuh), the rule that says what a tile keeps
// chosen at compile time (select_rules.cuh). Keys travel as bits of their
// width; comparisons are by dtype (core/keep_rule.h): 12 comparison
// kernels, 4 flag kernels (by key width; the flags' width is switched in the
// kernel), 4 run kernels (by key width). Values (any width), positions and
// lengths (4 or 8 bytes) are switched in the kernel too, so they add no
// kernel.
//
// Partition runs two passes, the first (kCount) only counting, because the
// others' place depends on the total kept: reading the keys twice and
// writing each once costs 3n key bytes (and the values once each way),
// where one pass with the others parked in a workspace and copied after
// costs 4n - 2k key bytes (k kept) and the same again for the values: the
// two passes move less whenever k < n/2, and always for the values.
//
// A run's length needs its end, which may lie in a later tile: each tile
// writes the lengths of the runs that END in it (a key whose successor
// differs), the start coming from the tile or, for a run begun earlier,
// from the look-back, which carries the last kept position along with the
// count. So unique, both run-length encodings and their lengths are one
// pass as well.
#include "cuda/select/select.h"

#include "core/dtype.h"
#include "core/error.h"
#include "core/keep_rule.h"
#include "core/portable.h"
#include "cuda/select/agent_select.cuh"
#include "cuda/util/check.h"
#include "cuda/util/grid_limits.h"
#include "cuda/util/counters.h"
#include "cuda/util/workspace_layout.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

namespace gpuprim::cuda {
namespace select_detail {

// Marks ((last kept position + 1) << 2 | flag) must fit 64 bits.
constexpr uint64_t kMostElements = uint64_t(1) << 61;

// The tiles of p.keys under rule: one launch (select, runs, a partition of
// one tile) or two (partition: count, then place). The count goes to sink;
// a host count waits for the stream.
template <typename Rule>
void launch_tiles(const DeviceEnv &env, SelectParams p, const Rule &rule, bool partition, const CountSink &sink,
                  const char *what) {
    using Agent = SelectAgent<Rule>;
    if (p.count >= kMostElements)
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "%s: %llu elements; at most 2^61 - 1", what,
             static_cast<unsigned long long>(p.count));
    const uint64_t num_tiles = ceil_div(p.count, Agent::kTileItems);
    if (num_tiles > kMaxGridX)
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "%s: %llu tiles; at most 2^31 - 1", what,
             static_cast<unsigned long long>(num_tiles));
    p.num_tiles = uint32_t(num_tiles);
    p.poll_ns = select_tuning(env.code_arch).poll_ns;
    p.ticket = env.zeroed_counters + SelectCounterWords::kTicket;
    p.count_out = sink.device;
    p.count_out_bytes = sink.device_bytes;
    p.count_host = host_count_slot(env, sink);
    p.status_slots = nullptr;
    if (num_tiles > 1) {
        // Look-back status words, zeroed (kTileInvalid) before the tiles run.
        WorkspaceLayout layout;
        const WorkspacePart slots = layout.add(num_tiles, SelectTileStatus::kSlotBytes);
        void *base = env.workspace->reserve(layout.bytes());
        p.status_slots = WorkspaceLayout::at<unsigned long long>(base, slots);
        if (env.measuring) return;
        check(cudaMemsetAsync(p.status_slots, 0, slots.bytes, env.stream), what);
    }
    if (env.measuring) return;
    auto launch = [&](SelectPhase phase, bool write_count) {
        p.phase = phase;
        p.write_count = write_count;
        select_tiles_kernel<Rule><<<unsigned(num_tiles), Agent::kThreads, 0, env.stream>>>(p, rule);
        check_launch(what);
    };
    if (!partition) {
        launch(SelectPhase::kSelect, true);
    } else if (num_tiles == 1) {
        launch(SelectPhase::kPartition, true);
    } else {
        launch(SelectPhase::kCount, true);
        launch(SelectPhase::kPartition, false);
    }
    finish_host_count(env, sink, what);
}

}  // namespace select_detail

void select_elements(const DeviceEnv &env, const SelectRequest &request) {
    using namespace select_detail;
    const char *what = request.partition ? "partition" : "select";
    if (request.count == 0) return write_zero_count(env, request.kept, what);
    SelectParams p{};
    p.keys = request.input;
    p.count = request.count;
    p.flags = request.keep.flags;
    p.flag_bytes = request.keep.flag_bytes;
    p.keys_out = request.output;
    p.values = request.values;
    p.values_out = request.values && request.value_bytes ? request.values_out : nullptr;
    p.value_bytes = request.value_bytes;
    p.positions = request.partition ? nullptr : request.positions;
    p.position_bytes = request.position_bytes;
    if (request.keep.kind == GPUPRIM_KEEP_FLAGGED) {
        // Flags decide: keys move as bits of their width.
        dispatch_width(uint32_t(dtype_size(request.dtype)), "select: key width", [&](auto bits) {
            using Bits = decltype(bits);
            launch_tiles(env, p, FlagRule<Bits>{}, request.partition, request.kept, what);
        });
        return;
    }
    dispatch_dtype(request.dtype, [&](auto type) {
        using T = decltype(type);
        launch_tiles(env, p, CompareRule<T>{keep_test_of<T>(request.keep)}, request.partition, request.kept, what);
    });
}

void find_runs(const DeviceEnv &env, const RunsRequest &request) {
    using namespace select_detail;
    const char *what = request.non_trivial_only ? "run-length encode (non-trivial runs)"
                                                : (request.lengths || request.starts ? "run-length encode" : "unique");
    if (request.count == 0) return write_zero_count(env, request.runs, what);
    SelectParams p{};
    p.keys = request.keys;
    p.count = request.count;
    p.non_trivial = request.non_trivial_only;
    p.keys_out = request.keys_out;
    p.values = request.values;
    p.values_out = request.values && request.value_bytes ? request.values_out : nullptr;
    p.value_bytes = request.value_bytes;
    p.positions = request.starts;
    p.position_bytes = request.start_bytes;
    p.lengths = request.lengths;
    p.length_bytes = request.length_bytes;
    dispatch_width(request.key_bytes, "runs: key width", [&](auto bits) {
        using Bits = decltype(bits);
        launch_tiles(env, p, RunRule<Bits>{}, false, request.runs, what);
    });
}

}  // namespace gpuprim::cuda
