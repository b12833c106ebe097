// SPDX-License-Identifier: Apache-2.0
// Scans of the narrow dtypes (8- and 16-bit integers, f16, bf16), whose
// running value is wider than the element (core/ops.h: WideSumOp,
// WideMinMaxOp): one launch, one tile per block, each thread 32 consecutive
// bytes (two 16-byte loads and stores) widened to running values, a fixed
// in-tile tree, and the decoupled look-back of the wider dtypes' scan on the
// running values (so float sums are deterministic); every output is rounded
// from its running value once. Float SUM pads and starts from the neutral
// -0.0 (warp/warp_scan.cuh: ScanOpTraits), as the wider dtypes' scan does, so
// a run of -0.0 scans to -0.0 wherever it lies; an exclusive scan without an
// initial value writes the identity +0.0 as its element 0.
#pragma once

#include "core/ops.h"
#include "cuda/block/block_reduce.cuh"
#include "cuda/scan/agent_scan.cuh"
#include "cuda/scan/tile_tickets.cuh"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

namespace gpuprim::cuda {
namespace narrow_scan {

constexpr int kThreads = 512;
// The single pass up to this many tiles (4 MiB), the three launches above:
// at 2^20 f16 one launch took 8.2 us, three 9.4; at 2^24 75 against 48.
constexpr uint64_t kSinglePassMaxTiles = 256;
constexpr int kPrefixThreads = 1024;
// Each thread takes 32 consecutive bytes: two 16-byte loads and stores.
constexpr int kThreadBytes = 32;
template <typename T>
constexpr int kItems = kThreadBytes / int(sizeof(T));
template <typename T>
constexpr uint64_t kTileItems = uint64_t(kThreads) * kItems<T>;

template <typename T>
__device__ __forceinline__ T load_one(const T *p) {
    return bit_cast<T>(__ldg(reinterpret_cast<const bits_t<T> *>(p)));
}

// The thread's items [first, first + kItems) as running values; positions
// at or past count read as fill.
template <typename T, typename Op, typename Acc>
__device__ __forceinline__ void load_items(const T *in, uint64_t first, uint64_t count, bool vectors,
                                           Acc (&x)[kItems<T>], Acc fill) {
    constexpr int kN = kItems<T>;
    if (vectors && first + kN <= count) {
        const uint4 *p = reinterpret_cast<const uint4 *>(in + first);
        const uint4 v[2] = {__ldg(p), __ldg(p + 1)};
        T items[kN];
        memcpy(items, v, sizeof items);
#pragma unroll
        for (int i = 0; i < kN; ++i) x[i] = Op::load(items[i]);
    } else {
#pragma unroll
        for (int i = 0; i < kN; ++i) x[i] = first + i < count ? Op::load(load_one(in + first + i)) : fill;
    }
}

// The thread's outputs from its inclusive scan x and base, everything before
// the thread: each rounded once (Op::store) and written as two 16-byte
// stores where whole and aligned, element by element otherwise. An exclusive
// scan without an initial value (identity_first) writes the identity as the
// scan's element 0, not base (the neutral -0.0 for float SUM).
template <typename T, typename Op, typename Acc>
__device__ __forceinline__ void store_items(T *out, uint64_t first, uint64_t count, bool vectors, bool exclusive,
                                            bool identity_first, Acc base, const Acc (&x)[kItems<T>]) {
    constexpr int kN = kItems<T>;
    using Combine = typename Op::Combine;
    const Combine op;
    T results[kN];
#pragma unroll
    for (int i = 0; i < kN; ++i)
        results[i] = Op::store(exclusive ? (i == 0 ? base : op(base, x[i - 1])) : op(base, x[i]));
    if (exclusive && identity_first && first == 0) results[0] = Op::store(Combine::identity());
    if (vectors && first + kN <= count) {
        uint4 v[2];
        memcpy(v, results, sizeof v);
        uint4 *q = reinterpret_cast<uint4 *>(out + first);
        q[0] = v[0];
        q[1] = v[1];
    } else {
#pragma unroll
        for (int i = 0; i < kN; ++i)
            if (first + i < count) out[first + i] = results[i];
    }
}

// Exclusive scan of one value per thread over the block, in a fixed shape:
// warps scan by shuffles, warp 0 scans the warp totals. Every thread calls it.
template <int kBlockThreads, typename Acc, typename Combine>
__device__ __forceinline__ Acc block_exclusive_scan(Acc value, Combine op, Acc *warp_totals) {
    constexpr int kWarps = kBlockThreads / 32;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    Acc inclusive = value;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const Acc up = bit_cast<Acc>(__shfl_up_sync(0xffffffffu, bit_cast<bits_t<Acc>>(inclusive), d));
        if (lane >= d) inclusive = op(up, inclusive);
    }
    const Acc exclusive_in_warp = bit_cast<Acc>(__shfl_up_sync(0xffffffffu, bit_cast<bits_t<Acc>>(inclusive), 1));
    if (lane == 31) warp_totals[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        Acc total = lane < kWarps ? warp_totals[lane] : ScanOpTraits<Acc, Combine>::neutral();
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            const Acc up = bit_cast<Acc>(__shfl_up_sync(0xffffffffu, bit_cast<bits_t<Acc>>(total), d));
            if (lane >= d) total = op(up, total);
        }
        if (lane < kWarps) warp_totals[lane] = total;  // inclusive over warps
    }
    __syncthreads();
    Acc prefix = warp == 0 ? ScanOpTraits<Acc, Combine>::neutral() : warp_totals[warp - 1];
    if (lane > 0) prefix = op(prefix, exclusive_in_warp);
    __syncthreads();  // warp_totals may be reused
    return prefix;
}

// Large inputs: reduce, then scan, in three launches of a fixed shape
// (every association depends on the count only):
// 1. tile_totals_kernel: each tile's total, folded by a fixed tree;
// 2. tile_prefix_kernel: one block turns the totals into each tile's
//    exclusive prefix, in tile order;
// 3. tile_scan_kernel: each tile again, scanned from its prefix.
// The input is read twice, yet at 2^24 and 2^28 elements this beat the
// single pass below, whose look-back (on 16 KB tiles of one block each)
// bounded it: f16 2^28 665 us against 1092, u8 345 against 426 (H100).
template <typename T, typename Op>
__global__ void __launch_bounds__(kThreads) tile_totals_kernel(const T *in, uint64_t count, bool vectors,
                                                             typename Op::Accumulator *totals) {
    using Acc = typename Op::Accumulator;
    using Combine = typename Op::Combine;
    constexpr int kN = kItems<T>;
    __shared__ typename BlockReduce<Acc, kThreads>::TempStorage storage;
    const Combine op;
    const uint64_t first = uint64_t(blockIdx.x) * kTileItems<T> + uint64_t(threadIdx.x) * kN;
    Acc x[kN];
    load_items<T, Op>(in, first, count, vectors, x, ScanOpTraits<Acc, Combine>::neutral());
    Acc total = x[0];
#pragma unroll
    for (int i = 1; i < kN; ++i) total = op(total, x[i]);
    total = BlockReduce<Acc, kThreads>::reduce(total, op, storage);
    if (threadIdx.x == 0) totals[blockIdx.x] = total;
}

// One block: totals[t] becomes the combination of totals [0, t), after
// `initial` where has_initial (the scan's initial value as a running value).
template <typename Acc, typename Combine>
__global__ void __launch_bounds__(kPrefixThreads)
    tile_prefix_kernel(Acc *totals, uint32_t tiles, bool has_initial, Acc initial) {
    __shared__ Acc warp_totals[kPrefixThreads / 32];
    const Combine op;
    const uint32_t chunk = (tiles + kPrefixThreads - 1) / kPrefixThreads;
    const uint32_t begin = min(tiles, threadIdx.x * chunk), end = min(tiles, begin + chunk);
    Acc local = ScanOpTraits<Acc, Combine>::neutral();
    for (uint32_t i = begin; i < end; ++i) local = op(local, totals[i]);
    Acc running = block_exclusive_scan<kPrefixThreads>(local, op, warp_totals);
    if (has_initial) running = op(initial, running);
    for (uint32_t i = begin; i < end; ++i) {
        const Acc value = totals[i];
        totals[i] = running;
        running = op(running, value);
    }
}

template <typename T, typename Op>
__global__ void __launch_bounds__(kThreads)
    tile_scan_kernel(const T *in, T *out, uint64_t count, bool in_vectors, bool out_vectors, bool exclusive,
                     bool has_initial, const typename Op::Accumulator *prefixes) {
    using Acc = typename Op::Accumulator;
    using Combine = typename Op::Combine;
    constexpr int kN = kItems<T>;
    __shared__ Acc warp_totals[kThreads / 32];
    const Combine op;
    const uint64_t first = uint64_t(blockIdx.x) * kTileItems<T> + uint64_t(threadIdx.x) * kN;
    Acc x[kN];
    load_items<T, Op>(in, first, count, in_vectors, x, ScanOpTraits<Acc, Combine>::neutral());
    // The thread's inclusive scan, then everything before the thread.
#pragma unroll
    for (int i = 1; i < kN; ++i) x[i] = op(x[i - 1], x[i]);
    const Acc before_thread = block_exclusive_scan<kThreads>(x[kN - 1], op, warp_totals);
    store_items<T, Op>(out, first, count, out_vectors, exclusive, !has_initial, op(prefixes[blockIdx.x], before_thread),
                       x);
}

// Inputs of up to kSinglePassMaxTiles tiles: one tile per block, tiles in
// ticket order, the decoupled look-back of the wider dtypes' scan on the
// running values (engine/tile_lookback.cuh; float
// SUM through its grouped look-back, so the association depends on tile
// numbers only). Config: the look-back parameters of a 4-byte scan.
template <typename T, typename Op, typename Config>
__global__ void __launch_bounds__(kThreads) narrow_scan_kernel(const scan_detail::ScanParams p, bool in_vectors,
                                                             bool out_vectors) {
    using Acc = typename Op::Accumulator;
    using Combine = typename Op::Combine;
    using Traits = ScanOpTraits<Acc, Combine>;
    constexpr int kN = kItems<T>;
    constexpr int kWarps = kThreads / 32;
    __shared__ uint32_t ticket, cleared;
    __shared__ Acc warp_totals[kWarps];
    __shared__ Acc tile_aggregate, tile_prefix;
    const Combine op;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

    if (threadIdx.x == 0) scan_detail::take_tile_ticket(p, ticket, cleared);
    __syncthreads();
    const uint32_t tile = ticket;
    const TileStatus<Acc> status{static_cast<unsigned long long *>(p.status_slots)};
    if (warp == kWarps - 1 && tile % p.clear_chunk == 0)
        clear_status_ahead<Traits::kOrdered>(status, p.counters, tile, p.num_tiles, p.clear_chunk, lane);

    const T *in = static_cast<const T *>(p.input);
    const uint64_t first = uint64_t(tile) * kTileItems<T> + uint64_t(threadIdx.x) * kN;
    Acc x[kN];
    load_items<T, Op>(in, first, p.count, in_vectors, x, Traits::neutral());
    // The thread's inclusive scan, everything before the thread, the tile's total.
#pragma unroll
    for (int i = 1; i < kN; ++i) x[i] = op(x[i - 1], x[i]);
    const Acc before_thread = block_exclusive_scan<kThreads>(x[kN - 1], op, warp_totals);
    if (threadIdx.x == kThreads - 1) tile_aggregate = op(before_thread, x[kN - 1]);
    __syncthreads();

    if (warp == 0) {
        const Acc aggregate = tile_aggregate;
        Acc exclusive = Traits::neutral();
        LookbackStats stats;
        if (lane == 0) p.counters.wait_cleared_past(tile, cleared);
        __syncwarp();
        if (tile == 0) {
            exclusive = scan_detail::scan_start<Acc, Combine>(p);  // the initial value, if any
            if (lane == 0) status.store(0, kTileInclusive, scan_detail::published_aggregate<Acc, Combine>(p, 0, aggregate));
        } else {
            if (lane == 0) status.store(tile, kTileAggregate, aggregate);
            exclusive = scan_detail::look_back<Acc, Combine, Config>(p, status, tile, aggregate, lane, stats);
        }
        if (lane == 0) tile_prefix = exclusive;
    }
    __syncthreads();

    store_items<T, Op>(static_cast<T *>(p.output), first, p.count, out_vectors, p.exclusive, !p.has_initial,
                       op(tile_prefix, before_thread), x);
    if (threadIdx.x == 0) p.counters.finish_tile(tile, p.num_tiles, tile % p.clear_chunk == 0);
}

}  // namespace narrow_scan
}  // namespace gpuprim::cuda
