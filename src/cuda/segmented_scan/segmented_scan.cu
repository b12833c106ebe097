// SPDX-License-Identifier: Apache-2.0
// Segmented scan and segmented reduce (SUM, MIN, MAX) over uniform rows or
// CSR offsets, in one single-pass kernel that serves every shape alike (a
// million rows of 16, 16 rows of a million, power-law CSR) at the speed of
// the flat data, with no per-shape path.
//
// The data is cut into tiles of consecutive elements (16 KB of 4- and 8-byte
// elements), one block per tile in launch order. A block stages its tile in
// shared memory, marks the tile's segment heads (the positions some offset
// names; rows: multiples of the row length; the end of the covered range is
// a head too, so the uncovered tail never joins a segment) in a bitmap, and
// scans the tile with the segmented operator on (head, value) pairs. The
// running value crossing from one tile to the next (the carry) comes from a
// decoupled look-back over per-tile status words: a tile with a head
// publishes its inclusive value (the fold from its last head) at once; a
// tile without one publishes its aggregate, looks back, and then its
// inclusive value. The carry is the left fold of the aggregates after the
// newest inclusive tile found, in tile order, and every inclusive value is
// that same left fold, so float sums are bitwise reproducible whichever tile
// the look-back stopped at; within a tile the association is fixed by the
// code. A tile whose first element is a head waits for nothing.
//
// Scan outputs are written for the covered elements only ([offsets[0],
// offsets[segments]); rows: all); a tile reads all its input before writing
// any output, so the scan works in place. A reduce keeps each element's
// running value in shared memory and writes every segment whose end lies in
// its tile (an empty segment: the identity). Narrow dtypes run wide (SUM in
// 32 bits or f32, core/ops.h) and every output is converted from its
// running value once; float sums give the canonical NaN, as the flat scan.
//
// Status slots (one per tile, in the workspace) are zeroed by a memset on the
// stream before the launch (one tile looks back at nothing: no memset); more tiles than one grid holds (2^31 - 1) take
// further launches, whose tiles look back into the finished slots of the
// ones before.
//
// Offsets checked in deferred mode (engine/segment_check.h): the tiles cover
// the whole data (nothing narrowed) and every block returns at once when the
// check failed. A small call (few offsets, few elements), in either mode,
// has its tiles check the offsets themselves instead of a check kernel, and
// covers the whole data too.
#include "cuda/segmented_scan/segmented_scan.h"

#include "core/checked_size.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/portable.h"
#include "cuda/device_env.h"
#include "cuda/engine/segment_check.h"
#include "cuda/segmented_scan/agent_segmented_scan.cuh"
#include "cuda/segmented_scan/segmented_reduce_direct.h"
#include "cuda/segmented_scan/segmented_scan_policy.cuh"
#include "cuda/util/check.h"
#include "cuda/util/grid_limits.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace gpuprim::cuda {
namespace segmented_scan_detail {

// Every output the identity (a reduce of empty segments only).
template <typename T, typename Op>
void fill_identity(const DeviceEnv &env, void *output, uint64_t segments, const uint32_t *skip) {
    using Bits = bits_t<T>;
    constexpr int kThreads = 256;
    const uint64_t wanted = segments / kThreads + (segments % kThreads != 0);
    const uint64_t blocks = std::max<uint64_t>(1, std::min<uint64_t>(wanted, uint64_t(std::max(env.sm_count, 1)) * 8));
    if (env.measuring) return;
    fill_kernel<Bits><<<unsigned(blocks), kThreads, 0, env.stream>>>(static_cast<Bits *>(output), segments,
                                                                     bit_cast<Bits>(identity_element<T, Op>()), skip);
    check_launch("segmented reduce fill launch");
}

template <typename T, typename Op, typename Config, bool kReduce>
void launch_tiles(const DeviceEnv &env, const SegmentLayout &layout, const void *input, void *output,
                  bool exclusive, const InKernelCheck &in_kernel) {
    using Acc = typename Accumulation<T, Op>::Acc;
    using Status = TileStatus<Acc>;
    const char *what = kReduce ? "segmented reduce launch" : "segmented scan launch";
    const uint64_t count = layout.data_count;
    constexpr uint64_t kTileItems = Config::kTileItems;
    const uint64_t tiles = ceil_div(count, kTileItems);
    const uint64_t slot_bytes = checked_mul(tiles, Status::kSlotBytes, "the segmented scan's tile states");
    auto *slots = static_cast<unsigned long long *>(env.workspace->reserve(slot_bytes));
    if (env.measuring) return;
    // One tile only publishes (it has nothing to look back at): no zeroed
    // slots needed, one launch less for small calls.
    if (tiles > 1)
        check(cudaMemsetAsync(slots, 0, slot_bytes, env.stream),
              kReduce ? "segmented reduce (cudaMemsetAsync)" : "segmented scan (cudaMemsetAsync)");
    SegmentedScanParams p{};
    p.input = input;
    p.output = output;
    p.count = count;
    p.bounds = SegmentBounds::of(layout);
    p.status_slots = slots;
    p.exclusive = exclusive;
    p.in_kernel = in_kernel;
    for (uint64_t base = 0; base < tiles; base += kMaxGridX) {
        p.tile_base = base;
        const uint64_t blocks = std::min(kMaxGridX, tiles - base);
        segmented_scan_kernel<T, Op, Config, kReduce><<<unsigned(blocks), Config::kThreads, 0, env.stream>>>(p);
        check_launch(what);
    }
}

template <typename T, typename Op, typename Config, bool kReduce>
void run(const DeviceEnv &env, const SegmentLayout &layout, const void *input, void *output, bool exclusive,
         const InKernelCheck &in_kernel) {
    if (layout.data_count == 0) {
        // No elements (rows of length 0 among them): every segment is empty.
        if constexpr (kReduce) fill_identity<T, Op>(env, output, layout.segments, layout.skip);
        return;
    }
    launch_tiles<T, Op, Config, kReduce>(env, layout, input, output, exclusive, in_kernel);
}

// Integer SUM wraps: the same bits signed or unsigned, so it is compiled once
// per width, on the unsigned type. MIN/MAX keep the element's own order.
template <bool kReduce, typename T>
void run_typed(const DeviceEnv &env, gpuprim_op_t op, const SegmentLayout &layout, const void *input, void *output,
               bool exclusive, const InKernelCheck &in_kernel) {
    using SumT = std::conditional_t<std::is_integral_v<T>, bits_t<T>, T>;
    with_segmented_scan_tuning<int(sizeof(T))>(env.code_arch, [&](auto tuning) {
        using Config = typename decltype(tuning)::Config;
        switch (op) {
        case GPUPRIM_OP_SUM: return run<SumT, SumOpFor<SumT>, Config, kReduce>(env, layout, input, output, exclusive, in_kernel);
        case GPUPRIM_OP_MIN: return run<T, MinOpFor<T>, Config, kReduce>(env, layout, input, output, exclusive, in_kernel);
        case GPUPRIM_OP_MAX: return run<T, MaxOpFor<T>, Config, kReduce>(env, layout, input, output, exclusive, in_kernel);
        }
        fail(GPUPRIM_ERROR_INTERNAL, "%s: unknown op %d", kReduce ? "segmented reduce" : "segmented scan",
             static_cast<int>(op));
    });
}

}  // namespace segmented_scan_detail

namespace {

// Past this many elements a call's tiles are many, and each would read all
// the offsets again: one check kernel costs less there.
constexpr uint64_t kInKernelCheckMaxElements = uint64_t(1) << 16;

// The check of a call on offsets: in its one tile kernel when the offsets
// are few and the data small but not empty (else no tile would run it);
// else the check kernel.
SegmentSummary check_for_tiles(const DeviceEnv &env, const SegmentLayout &layout) {
    if (can_check_in_kernel(env, layout) && layout.segments != 0 && layout.data_count != 0 &&
        layout.data_count <= kInKernelCheckMaxElements)
        return check_in_kernel(env, layout);
    return check_segments(env, layout);
}

}  // namespace

void segmented_reduce(const DeviceEnv &env, gpuprim_op_t op, gpuprim_dtype_t dtype, const SegmentLayout &layout,
                      const void *input, void *output) {
    // Uniform rows need no look-back (segmented_reduce_direct.cu).
    if (!layout.offsets && reduce_uniform_rows(env, op, dtype, layout, input, output)) return;
    // Neither do CSR segments all short by a bound known before the offsets
    // are read (the data's count, the promise): the path is the same whether
    // the check waits or is deferred, and so are float sums' bits.
    const uint64_t longest_bound = longest_segment_bound(layout);
    if (layout.offsets && layout.segments != 0 && layout.data_count != 0 && longest_bound <= kShortSegmentsMax) {
        // The kernel's blocks depend on the segments only: with few offsets
        // it checks them itself.
        const SegmentSummary summary =
            can_check_in_kernel(env, layout) ? check_in_kernel(env, layout) : check_segments(env, layout);
        reduce_short_segments(env, op, dtype, narrowed_to_covered(layout, summary), longest_bound, summary.in_kernel,
                              at_covered(input, summary, dtype_size(dtype)), output);
        await_in_kernel_check(env, layout, summary);
        return;
    }
    const SegmentSummary summary = check_for_tiles(env, layout);
    if (layout.segments == 0) return;
    // Tiles over what the segments cover only.
    const SegmentLayout narrowed = narrowed_to_covered(layout, summary);
    const void *covered_input = at_covered(input, summary, dtype_size(dtype));
    dispatch_dtype(dtype, [&](auto zero) {
        segmented_scan_detail::run_typed<true, decltype(zero)>(env, op, narrowed, covered_input, output, false,
                                                               summary.in_kernel);
    });
    await_in_kernel_check(env, layout, summary);
}

void segmented_scan(const DeviceEnv &env, gpuprim_op_t op, gpuprim_scan_kind_t kind, gpuprim_dtype_t dtype,
                    const SegmentLayout &layout, const void *input, void *output) {
    const SegmentSummary summary = check_for_tiles(env, layout);
    if (layout.segments == 0 || summary.covered_length == 0) return;
    const bool exclusive = kind == GPUPRIM_SCAN_EXCLUSIVE;
    // Tiles over what the segments cover only.
    const SegmentLayout narrowed = narrowed_to_covered(layout, summary);
    const uint64_t element_bytes = dtype_size(dtype);
    const void *covered_input = at_covered(input, summary, element_bytes);
    void *covered_output = at_covered(output, summary, element_bytes);
    dispatch_dtype(dtype, [&](auto zero) {
        segmented_scan_detail::run_typed<false, decltype(zero)>(env, op, narrowed, covered_input, covered_output,
                                                                exclusive, summary.in_kernel);
    });
    await_in_kernel_check(env, layout, summary);
}

}  // namespace gpuprim::cuda
