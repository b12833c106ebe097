// SPDX-License-Identifier: Apache-2.0
// The scan driver: path and configuration by size, workspace, launch, and
// the dispatch on operator and tuning.
#pragma once

#include "core/portable.h"
#include "core/checked_size.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/ops.h"
#include "cuda/device_env.h"
#include "cuda/scan/agent_scan.cuh"
#include "cuda/scan/narrow_scan.cuh"
#include "cuda/scan/scan_policy.cuh"
#include "cuda/scan/tile_tickets.cuh"
#include "cuda/util/grid_limits.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace gpuprim::cuda {
namespace scan_detail {

// What the kernel checkers (tools/kernel_check) may ask of the driver beyond
// the library's calls: a forced path, per-tile trace stamps
// (GPUPRIM_SCAN_TRACE builds; else ignored). The library passes the defaults.
enum class ScanPath { Auto, SingleBlock, Lookback };
// Whether every configuration compiles every path (the scan checker's
// build, GPUPRIM_SCAN_TRACE, compares the paths of one configuration).
#if defined(GPUPRIM_SCAN_TRACE)
constexpr bool kScanAllPaths = true;
#else
constexpr bool kScanAllPaths = false;
#endif
struct ScanHooks {
    ScanPath path = ScanPath::Auto;
    unsigned long long *trace = nullptr;
};

// Counter words used in env.zeroed_counters (cuda/util/counters.h): [0,1]
// ticket + cleared watermark (one 64-bit word), [2] blocks finished.
constexpr uint32_t kTicketWord = ScanCounterWords::kTicket;
constexpr uint32_t kDoneWord = ScanCounterWords::kDone;

// The bits of a scan's initial value (Backend::scan: nullptr or a host
// pointer to one element, of any alignment) for ScanParams, as `Kernel`,
// the type the kernel runs on, converted from the element by `convert`.
template <typename Element, typename Kernel, typename Convert>
void set_initial(ScanParams &p, const void *initial, Convert convert) {
    p.has_initial = initial != nullptr;
    p.initial = 0;
    if (!initial) return;
    Element element;
    std::memcpy(&element, initial, sizeof element);
    const Kernel value = convert(element);
    static_assert(sizeof(Kernel) <= sizeof(p.initial), "the initial value fits its field");
    std::memcpy(&p.initial, &value, sizeof value);  // the low bytes (little-endian, as the device reads them)
}

// launch_scan (below) with the checkers' hooks. Config: the operator's
// configuration (ScanConfigFor), or the tuning's MidConfig for inputs too
// small to pipeline. initial: nullptr, or a host pointer to the T the scan
// starts from (Backend::scan).
template <typename T, typename Op, typename Tuning, typename Config = typename ScanConfigFor<Tuning, Op>::type>
void launch_scan_with(const DeviceEnv &env, bool exclusive, const T *input, T *output, uint64_t count,
                      const ScanHooks &hooks, const void *initial = nullptr) {
    const ScanPath path = hooks.path;
    using Block = BlockVectorScan<T, Op, Config::kThreads, Config::kVectors>;
    if (count == 0) return;

    const uintptr_t in_address = reinterpret_cast<uintptr_t>(input);
    const uintptr_t out_address = reinterpret_cast<uintptr_t>(output);
    if (in_address % sizeof(T) != 0 || out_address % sizeof(T) != 0)
        fail(GPUPRIM_ERROR_INTERNAL, "scan: data not aligned to its element size");

    ScanParams p{};
    p.input = input;
    p.output = output;
    p.count = count;
    p.head = static_cast<uint32_t>((in_address % 16) / sizeof(T));
    p.exclusive = exclusive;
    p.vector_store = in_address % 16 == out_address % 16;
    const uint64_t tiles = (count + p.head + Block::kTileItems - 1) / Block::kTileItems;
    if (tiles > kMaxGridX)
        fail(GPUPRIM_ERROR_OVERFLOW, "scan: %llu elements is more than one launch can cover",
             static_cast<unsigned long long>(count));
    p.num_tiles = static_cast<uint32_t>(tiles);
    p.clear_chunk = Tuning::kClearChunk;
    p.poll_ns = Tuning::kPollNs;
    // Float SUM reports every NaN as the canonical one, an exclusive scan's
    // element 0 included.
    set_initial<T, T>(p, initial, [](T x) { return ScanOpTraits<T, Op>::kOrdered ? canonical_nan_if_nan(x) : x; });

    // Pipelines want several tiles per resident block: an input with fewer
    // (small and mid sizes), or a device whose shared memory cannot hold the
    // stages, runs the smaller tiles of MidConfig, one per block.
    [[maybe_unused]] uint64_t pipelined_grid = 0;
    if constexpr (Config::kStages > 1) {
        constexpr size_t kStageBytes = size_t(Config::kStages) * sizeof(T) * Block::kTileItems;
        const int per_sm = resident_blocks(env, reinterpret_cast<const void *>(scan_pipelined_kernel<T, Op, Config>),
                                           Config::kThreads, kStageBytes, "scan (look-back) occupancy");
        pipelined_grid = std::min<uint64_t>(tiles, uint64_t(env.sm_count) * uint64_t(per_sm));
        // per_sm == 0: the stages do not fit this device's shared memory
        // (e.g. 99 KB per block on sm_86/sm_89 for the sm_80 shape).
        if (per_sm == 0 && path != ScanPath::Auto)
            fail(GPUPRIM_ERROR_INTERNAL, "scan: the pipelined tile does not fit this device");
        if (path == ScanPath::Auto &&
            (per_sm == 0 || tiles < pipelined_grid * (ScanOpTraits<T, Op>::kOrdered
                                                            ? Tuning::kPipelineMinTilesPerBlockOrdered
                                                            : Tuning::kPipelineMinTilesPerBlock))) {
            using Mid = typename Tuning::MidConfig;
            static_assert(Mid::kStages == 1, "the mid-size configuration runs one tile per block");
            launch_scan_with<T, Op, Tuning, Mid>(env, exclusive, input, output, count,
                                                 ScanHooks{ScanPath::Auto, hooks.trace}, initial);
            return;
        }
    }

    const bool single_block = path == ScanPath::SingleBlock ||
                              (path == ScanPath::Auto && tiles <= Tuning::kSingleBlockMaxTiles);
    if (single_block) {
        // A pipelined configuration reaches here only when a checker asks
        // for the path (Auto sends inputs of a few tiles to MidConfig), so
        // the library compiles its one-block kernel only for the one-tile-
        // per-block configurations: the pipelined ones' large tiles made
        // the costliest kernels of scan.cu, and none ever ran.
        if constexpr (Config::kStages == 1 || kScanAllPaths) {
            if (env.measuring) return;
            scan_single_block_kernel<T, Op, Config><<<1, Config::kThreads, 0, env.stream>>>(p);
            check_launch("scan (single block) launch");
            return;
        } else {
            fail(GPUPRIM_ERROR_INTERNAL, "scan: a pipelined configuration has no single-block path");
        }
    }

    if (reinterpret_cast<uintptr_t>(env.zeroed_counters) % 8 != 0)
        fail(GPUPRIM_ERROR_INTERNAL, "scan: zeroed counters not 8-byte aligned");
    p.counters.ticket_word = reinterpret_cast<unsigned long long *>(env.zeroed_counters + kTicketWord);
    p.counters.done_word = env.zeroed_counters + kDoneWord;
    static_assert(Tuning::kClearChunk % kLookbackGroupTiles == 0, "a group's slot is cleared with its tiles");
    p.status_slots = env.workspace->reserve(checked_mul(status_slot_count(tiles, ScanOpTraits<T, Op>::kOrdered),
                                                        TileStatus<T>::kSlotBytes, "the scan's tile states"));
#if defined(GPUPRIM_SCAN_TRACE)
    p.trace = hooks.trace;
#endif

    if (env.measuring) return;
    if constexpr (Config::kStages == 1) {
        scan_tile_per_block_kernel<T, Op, Config>
            <<<static_cast<unsigned>(tiles), Config::kThreads, 0, env.stream>>>(p);
    } else {
        constexpr size_t kStageBytes = size_t(Config::kStages) * sizeof(T) * Block::kTileItems;
        scan_pipelined_kernel<T, Op, Config>
            <<<static_cast<unsigned>(pipelined_grid), Config::kThreads, kStageBytes, env.stream>>>(p);
    }
    check_launch("scan (look-back) launch");
}

// Scans count elements of input into output with Tuning's configuration
// for Op, from *initial where initial is not nullptr.
template <typename T, typename Op, typename Tuning>
void launch_scan(const DeviceEnv &env, bool exclusive, const T *input, T *output, uint64_t count,
                 const void *initial = nullptr) {
    launch_scan_with<T, Op, Tuning>(env, exclusive, input, output, count, ScanHooks{}, initial);
}

// Large inputs of the narrow dtypes: tile totals, their prefixes (after the
// initial value, if any), the scan.
template <typename T, typename Op>
void launch_narrow_scan_three_pass(const DeviceEnv &env, bool exclusive, const T *input, T *output,
                                   uint64_t count, const void *initial) {
    using namespace narrow_scan;
    using Acc = typename Op::Accumulator;
    const uint64_t tiles = (count + kTileItems<T> - 1) / kTileItems<T>;
    const bool in_vectors = reinterpret_cast<uintptr_t>(input) % 16 == 0;
    const bool out_vectors = reinterpret_cast<uintptr_t>(output) % 16 == 0;
    Acc *prefixes = static_cast<Acc *>(env.workspace->reserve(checked_mul(tiles, sizeof(Acc), "the scan's tile totals")));
    if (env.measuring) return;
    tile_totals_kernel<T, Op><<<unsigned(tiles), kThreads, 0, env.stream>>>(input, count, in_vectors, prefixes);
    check_launch("scan (tile totals) launch");
    Acc start = ScanOpTraits<Acc, typename Op::Combine>::neutral();
    if (initial) {
        T element;
        std::memcpy(&element, initial, sizeof element);
        start = Op::load(element);
    }
    tile_prefix_kernel<Acc, typename Op::Combine>
        <<<1, kPrefixThreads, 0, env.stream>>>(prefixes, uint32_t(tiles), initial != nullptr, start);
    check_launch("scan (tile prefixes) launch");
    tile_scan_kernel<T, Op><<<unsigned(tiles), kThreads, 0, env.stream>>>(input, output, count, in_vectors,
                                                                           out_vectors, exclusive,
                                                                           initial != nullptr, prefixes);
    check_launch("scan (tiles) launch");
}

// The narrow dtypes' scan (scan/narrow_scan.cuh): Op is a wide operator,
// the look-back tuned as for a 4-byte scan. initial: nullptr, or a host
// pointer to the T the scan starts from, which enters as a running value
// (Op::load: f16/bf16 sums in f32, small integers in 32 bits).
template <typename T, typename Op>
void launch_narrow_scan(const DeviceEnv &env, bool exclusive, const T *input, T *output, uint64_t count,
                        const void *initial) {
    using Acc = typename Op::Accumulator;
    constexpr uint64_t kTile = narrow_scan::kTileItems<T>;
    const uint64_t tiles = ceil_div(count, kTile);
    if (tiles > kMaxGridX)
        fail(GPUPRIM_ERROR_OVERFLOW, "scan: %llu elements is more than one launch can cover",
             static_cast<unsigned long long>(count));
    if (tiles > narrow_scan::kSinglePassMaxTiles)
        return launch_narrow_scan_three_pass<T, Op>(env, exclusive, input, output, count, initial);
    if (reinterpret_cast<uintptr_t>(env.zeroed_counters) % 8 != 0)
        fail(GPUPRIM_ERROR_INTERNAL, "scan: zeroed counters not 8-byte aligned");
    with_scan_tuning<4>(env.code_arch, [&](auto tuning) {
        using Tuning = decltype(tuning);
        using Config = typename Tuning::MidConfig;
        constexpr bool kOrdered = ScanOpTraits<Acc, typename Op::Combine>::kOrdered;
        ScanParams p{};
        p.input = input;
        p.output = output;
        p.count = count;
        p.num_tiles = uint32_t(tiles);
        p.clear_chunk = Tuning::kClearChunk;
        p.exclusive = exclusive;
        p.poll_ns = Tuning::kPollNs;
        set_initial<T, Acc>(p, initial, [](T x) { return Op::load(x); });
        p.counters.ticket_word = reinterpret_cast<unsigned long long *>(env.zeroed_counters + kTicketWord);
        p.counters.done_word = env.zeroed_counters + kDoneWord;
        p.status_slots = env.workspace->reserve(
            checked_mul(status_slot_count(tiles, kOrdered), TileStatus<Acc>::kSlotBytes, "the scan's tile states"));
        const bool in_vectors = reinterpret_cast<uintptr_t>(input) % 16 == 0;
        const bool out_vectors = reinterpret_cast<uintptr_t>(output) % 16 == 0;
        if (env.measuring) return;
        narrow_scan::narrow_scan_kernel<T, Op, Config>
            <<<unsigned(tiles), narrow_scan::kThreads, 0, env.stream>>>(p, in_vectors, out_vectors);
        check_launch("scan launch");
    });
}


template <typename T>
void scan_wide_typed(const DeviceEnv &env, gpuprim_op_t op, bool exclusive, const void *input,
                     void *output, uint64_t count, const void *initial);

// Integer SUM is the same bits for signed and unsigned, so it is compiled
// once per width, on the unsigned type (the initial value too: its bits).
// initial: nullptr or a host pointer to one T (Backend::scan).
template <typename T>
void scan_typed(const DeviceEnv &env, gpuprim_op_t op, bool exclusive, const void *input,
                void *output, uint64_t count, const void *initial) {
    if constexpr (kIsNarrow<T>) {
        using SumT = std::conditional_t<std::is_integral_v<T>, bits_t<T>, T>;
        const T *in = static_cast<const T *>(input);
        T *out = static_cast<T *>(output);
        switch (op) {
        case GPUPRIM_OP_SUM:
            return launch_narrow_scan<SumT, SumOpFor<SumT>>(env, exclusive, reinterpret_cast<const SumT *>(in),
                                                            reinterpret_cast<SumT *>(out), count, initial);
        case GPUPRIM_OP_MIN: return launch_narrow_scan<T, MinOpFor<T>>(env, exclusive, in, out, count, initial);
        case GPUPRIM_OP_MAX: return launch_narrow_scan<T, MaxOpFor<T>>(env, exclusive, in, out, count, initial);
        }
        fail(GPUPRIM_ERROR_INTERNAL, "scan: unknown op %d", static_cast<int>(op));
    } else {
        scan_wide_typed<T>(env, op, exclusive, input, output, count, initial);
    }
}

// The 4- and 8-byte dtypes: the look-back scan (scan/agent_scan.cuh).
template <typename T>
void scan_wide_typed(const DeviceEnv &env, gpuprim_op_t op, bool exclusive, const void *input,
                     void *output, uint64_t count, const void *initial) {
    using SumT = std::conditional_t<std::is_integral_v<T>, bits_t<T>, T>;
    with_scan_tuning<int(sizeof(T))>(env.code_arch, [&](auto tuning) {
        using Tuning = decltype(tuning);
        switch (op) {
        case GPUPRIM_OP_SUM:
            launch_scan<SumT, SumOp<SumT>, Tuning>(env, exclusive, static_cast<const SumT *>(input),
                                                   static_cast<SumT *>(output), count, initial);
            return;
        case GPUPRIM_OP_MIN:
            launch_scan<T, MinOp<T>, Tuning>(env, exclusive, static_cast<const T *>(input),
                                             static_cast<T *>(output), count, initial);
            return;
        case GPUPRIM_OP_MAX:
            launch_scan<T, MaxOp<T>, Tuning>(env, exclusive, static_cast<const T *>(input),
                                             static_cast<T *>(output), count, initial);
            return;
        }
        fail(GPUPRIM_ERROR_INTERNAL, "scan: unknown op %d", static_cast<int>(op));
    });
}

}  // namespace scan_detail
}  // namespace gpuprim::cuda
