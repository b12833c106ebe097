// SPDX-License-Identifier: Apache-2.0
// The scan kernels: one tile per block, pipelined persistent blocks, one
// block for one-tile inputs (scan.cu has the design; dispatch_scan.cuh
// launches them).
#pragma once

#include "core/dtype.h"
#include "core/error.h"
#include "core/ops.h"
#include "cuda/block/block_scan.cuh"
#include "cuda/engine/tile_lookback.cuh"
#include "cuda/scan/tile_tickets.cuh"
#include "cuda/scan/scan_policy.cuh"
#include "cuda/util/trace_clock.cuh"

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace gpuprim::cuda {
namespace scan_detail {

struct ScanParams {
    const void *input;
    void *output;
    uint64_t count;
    uint32_t head;       // pad positions before element 0 (input misalignment / element size)
    uint32_t num_tiles;
    uint32_t clear_chunk;
    bool exclusive;
    bool vector_store;   // output has the input's 16-byte alignment
    // The scan starts from a value (Backend::scan's initial): its bits, in
    // the low bytes of `initial`, as the kernel's running type (T; the
    // running value Op::Accumulator for the narrow dtypes). It is what comes
    // before tile 0 (scan_start below), read where that is needed: tile 0,
    // the grouped look-back's P_0, an exclusive scan's element 0. Absent
    // (has_initial false), the kernels compute what they did without it.
    bool has_initial;
    uint32_t poll_ns;    // back-off between look-back polls
    uint64_t initial;
    void *status_slots;
    ScanCounters counters;
#if defined(GPUPRIM_SCAN_TRACE)
    unsigned long long *trace;  // per-tile timestamps (the checkers' builds only)
#endif
};

// Tracing (tools/kernel_check only): globaltimer stamps per tile at fixed slots:
// 0 loads issued, 1 data landed, 2 aggregate published, 3 prefix known,
// 4 stores issued, 5 look-back statistics.
#if defined(GPUPRIM_SCAN_TRACE)
#define GPUPRIM_SCAN_TRACE_AT(who, params, tile, slot, value)                               \
    do {                                                                                  \
        if ((who) && (params).trace) (params).trace[uint64_t(tile) * 8 + (slot)] = (value); \
    } while (0)
#else
#define GPUPRIM_SCAN_TRACE_AT(who, params, tile, slot, value) ((void)0)
#endif

// Everything before tile 0 combined: the scan's initial value where one is
// given, else the operator's neutral element. For the grouped look-back
// (float SUM) it is P_0, the prefix of group 0 (engine/tile_lookback.cuh); for
// the others tile 0 publishes it combined with its aggregate
// (published_aggregate), so later tiles find it through the look-back.
template <typename T, typename Op>
__device__ __forceinline__ T scan_start(const ScanParams &p) {
    if (!p.has_initial) return ScanOpTraits<T, Op>::neutral();
    return bit_cast<T>(static_cast<bits_t<T>>(p.initial));
}

// What a tile publishes first: its aggregate, which for tile 0 is its
// inclusive prefix, so tile 0 puts the initial value in front where one is
// given. Not the grouped look-back: its tile slots hold aggregates only (the
// initial value is its P_0).
template <typename T, typename Op>
__device__ __forceinline__ T published_aggregate(const ScanParams &p, uint32_t tile, T aggregate) {
    T published = aggregate;
    if constexpr (!ScanOpTraits<T, Op>::kOrdered) {
        if (tile == 0 && p.has_initial) published = Op()(scan_start<T, Op>(p), aggregate);
    }
    return published;
}

template <typename T, typename Op, typename Config>
struct TileIo {
    using Block = BlockVectorScan<T, Op, Config::kThreads, Config::kVectors>;
    using Items = typename Block::Items;

    // Index of the tile's first position (negative for the head pads).
    __device__ __forceinline__ static int64_t first_index(const ScanParams &p, uint32_t tile) {
        return int64_t(tile) * Block::kTileItems - int64_t(p.head);
    }
    // Tile 0 always takes the element path, which also writes the identity
    // as element 0 of an exclusive scan (the initial value, where there is
    // one, is written over it: write_initial_first).
    __device__ __forceinline__ static bool is_full(const ScanParams &p, uint32_t tile) {
        return tile != 0 && uint64_t(first_index(p, tile)) + Block::kTileItems <= p.count;
    }
    __device__ __forceinline__ static void load(const ScanParams &p, uint32_t tile, bool full,
                                                Items &x, int warp, int lane) {
        const T *in = static_cast<const T *>(p.input);
        const int64_t first = first_index(p, tile);
        if (full) Block::template load_full<Config::kLoad>(in + first, x, warp, lane);
        else Block::load_partial(in, first, p.count, x, warp, lane);
    }
    __device__ __forceinline__ static void store(const ScanParams &p, uint32_t tile, bool full,
                                                 Items &x, int warp, int lane) {
        T *out = static_cast<T *>(p.output);
        const int64_t first = first_index(p, tile);
        if (full && p.vector_store) {
            Block::template store_full<Config::kStore>(out + first, x, warp, lane);
            return;
        }
        if (p.exclusive && tile == 0 && warp == 0 && lane == 0) {
            // Element 0 sits at position head of lane 0's first vector.
            // Selects, not a store at a computed index: x stays in registers.
#pragma unroll
            for (int j = 0; j < Block::kVec; ++j) x[0][j] = uint32_t(j) == p.head ? Op::identity() : x[0][j];
        }
        Block::store_partial(out, first, p.count, x, warp, lane);
        write_initial_first(p, tile, warp, lane);
    }
    // An exclusive scan from an initial value: element 0 is that value. The
    // thread that stored element 0 (lane 0 of warp 0 of tile 0, its first
    // vector) stores it again, after: its own stores land in program order.
    // Kept apart from the element stores, so that those run the same code
    // as without an initial value.
    __device__ __forceinline__ static void write_initial_first(const ScanParams &p, uint32_t tile, int warp,
                                                               int lane) {
        if (p.has_initial && p.exclusive && tile == 0 && warp == 0 && lane == 0)
            static_cast<T *>(p.output)[0] = scan_start<T, Op>(p);
    }
    // A staged tile's output: each thread finishes its own vectors with the
    // prefix of everything before them and stores them, 16 bytes at a time
    // for a full tile whose output has the input's alignment, element by
    // element otherwise (with the identity as an exclusive scan's element 0,
    // or the initial value: write_initial_first).
    __device__ __forceinline__ static void finish_staged(const ScanParams &p, uint32_t tile,
                                                         const T *staged,
                                                         const T (&lane_prefix)[Config::kVectors],
                                                         T segment_prefix, int warp, int lane) {
        const Op op;
        T *out = static_cast<T *>(p.output);
        const int64_t first = first_index(p, tile);
        const bool vector_out = is_full(p, tile) && p.vector_store;
#pragma unroll
        for (int k = 0; k < Config::kVectors; ++k) {
            T v[Block::kVec];
            Block::finish_staged_vector(staged, warp, lane, k, op(segment_prefix, lane_prefix[k]),
                                        p.exclusive, v);
            const uint32_t offset = Block::vector_offset(warp, lane, k);
            if (vector_out) {
                store_vector<Config::kStore>(out + first + offset, pack_vector(v));
                continue;
            }
            if (k == 0 && p.exclusive && tile == 0 && warp == 0 && lane == 0) {
#pragma unroll
                for (int j = 0; j < Block::kVec; ++j) v[j] = uint32_t(j) == p.head ? Op::identity() : v[j];
            }
#pragma unroll
            for (int j = 0; j < Block::kVec; ++j) {
                const int64_t i = first + offset + j;
                if (i >= 0 && uint64_t(i) < p.count) out[i] = v[j];
            }
        }
        write_initial_first(p, tile, warp, lane);
    }
};

// Starts loading `tile` into `staged`: asynchronous copies for a full tile,
// plain loads for the partial first and last tiles. Nothing for tickets past
// the end.
template <typename T, typename Op, typename Config>
__device__ __forceinline__ void stage_tile(const ScanParams &p, uint32_t tile, T *staged, int warp,
                                           int lane) {
    using Io = TileIo<T, Op, Config>;
    using Block = typename Io::Block;
    if (tile >= p.num_tiles) return;
    const T *in = static_cast<const T *>(p.input);
    const int64_t first = Io::first_index(p, tile);
    if (Io::is_full(p, tile)) Block::stage_full_async(staged, in + first, warp, lane);
    else Block::stage_partial(staged, in, first, p.count, warp, lane);
}

// The tile this block scans (tickets come in launch order, so a tile only
// ever waits on tiles whose blocks are running or done) and the cleared
// watermark seen with it.
__device__ __forceinline__ void take_tile_ticket(const ScanParams &p, uint32_t &ticket,
                                                 uint32_t &cleared) {
    const unsigned long long word = p.counters.take_tickets(1);
    ticket = static_cast<uint32_t>(word);
    cleared = static_cast<uint32_t>(word >> 32);
}

// Warp 0 of tile `tile` (> 0), its aggregate published: the exclusive prefix,
// by the look-back its operator needs, with what successors read from this
// tile published: its inclusive prefix, or for float SUM the group prefixes
// it learned (engine/tile_lookback.cuh; P_0 is scan_start: the initial value,
// if any).
template <typename T, typename Op, typename Config, typename Status>
__device__ __forceinline__ T look_back(const ScanParams &p, const Status &status, uint32_t tile,
                                       T aggregate, int lane, LookbackStats &stats) {
    if constexpr (ScanOpTraits<T, Op>::kOrdered) {
        return look_back_grouped<T, Op, Config::kMaxSavedGroups>(status, p.num_tiles, tile, aggregate,
                                                                 scan_start<T, Op>(p), lane, p.poll_ns, stats);
    } else {
        const T exclusive = look_back_windows<OperatorFold<T, Op>, 0, Config::kWindowsPerPoll>(
            status, tile, nullptr, lane, p.poll_ns, stats);
        if (lane == 0) status.store(tile, kTileInclusive, Op()(exclusive, aggregate));
        return exclusive;
    }
}

// One tile per block, one block launched per tile (kStages == 1). The tile
// is staged in shared memory (see BlockVectorScan), so a block needs few
// registers and many tiles can wait for their prefixes on one SM; warp 0
// looks back once the tile's aggregate is published. Runs MIN/MAX (heavy
// per element: they need many warps per SM) and inputs too small to fill
// the pipelines of scan_pipelined_kernel.
template <typename T, typename Op, typename Config>
__global__ void __launch_bounds__(Config::kThreads, Config::kMinBlocks)
    scan_tile_per_block_kernel(const ScanParams p) {
    using Io = TileIo<T, Op, Config>;
    using Block = typename Io::Block;
    using Traits = ScanOpTraits<T, Op>;
    const Op op;
    __shared__ alignas(16) T staged[Block::kTileItems];
    __shared__ typename Block::TempStorage temp;
    __shared__ uint32_t ticket, cleared;
    __shared__ T tile_prefix;

    const int warp = threadIdx.x / kWarpLanes;
    const int lane = threadIdx.x % kWarpLanes;
    if (threadIdx.x == 0) take_tile_ticket(p, ticket, cleared);
    __syncthreads();
    const uint32_t tile = ticket;
    const TileStatus<T> status{static_cast<unsigned long long *>(p.status_slots)};
    GPUPRIM_SCAN_TRACE_AT(threadIdx.x == 0, p, tile, 0, global_timer_ns());

    stage_tile<T, Op, Config>(p, tile, staged, warp, lane);
    cp_async_commit();
    cp_async_wait<0>();
    GPUPRIM_SCAN_TRACE_AT(threadIdx.x == 0, p, tile, 1, global_timer_ns());

    if (warp == Block::kWarps - 1 && tile % p.clear_chunk == 0)
        clear_status_ahead<Traits::kOrdered>(status, p.counters, tile, p.num_tiles, p.clear_chunk, lane);

    T lane_prefix[Config::kVectors];
    const T warp_total = Block::scan_staged_segment(staged, lane_prefix, warp, lane);
    if (lane == 0) temp.warp_totals[warp] = warp_total;
    __syncthreads();

    if (warp == 0) {
        const T aggregate = Block::tile_total(temp);
        T exclusive = Traits::neutral();
        LookbackStats stats;
        if (lane == 0) p.counters.wait_cleared_past(tile, cleared);
        __syncwarp();
        if (tile == 0) {
            exclusive = scan_start<T, Op>(p);
            if (lane == 0) status.store(0, kTileInclusive, published_aggregate<T, Op>(p, 0, aggregate));
        } else {
            if (lane == 0) status.store(tile, kTileAggregate, aggregate);
            GPUPRIM_SCAN_TRACE_AT(lane == 0, p, tile, 2, global_timer_ns());
            exclusive = look_back<T, Op, Config>(p, status, tile, aggregate, lane, stats);
        }
        GPUPRIM_SCAN_TRACE_AT(lane == 0, p, tile, 3, global_timer_ns());
        GPUPRIM_SCAN_TRACE_AT(lane == 0, p, tile, 5, (uint64_t(stats.windows) << 32) | stats.polls);
        if (lane == 0) tile_prefix = exclusive;
    }
    __syncthreads();

    const T segment_prefix = op(tile_prefix, Block::warp_prefix(temp, warp));
    Io::finish_staged(p, tile, staged, lane_prefix, segment_prefix, warp, lane);
    GPUPRIM_SCAN_TRACE_AT(threadIdx.x == 0, p, tile, 4, global_timer_ns());
    if (threadIdx.x == 0) p.counters.finish_tile(tile, p.num_tiles, tile % p.clear_chunk == 0);
}

// Warp 0 publishes the aggregate of `tile` (the inclusive prefix for tile 0)
// once the cleared watermark has passed it; the tile at the start of a
// clearing chunk clears ahead first (scan/tile_tickets.cuh).
template <typename T, typename Op, typename Status>
__device__ __forceinline__ void publish_aggregate(const ScanParams &p, const Status &status,
                                                  uint32_t tile, uint32_t cleared_seen, T aggregate,
                                                  int lane) {
    if (tile % p.clear_chunk == 0)
        clear_status_ahead<ScanOpTraits<T, Op>::kOrdered>(status, p.counters, tile, p.num_tiles, p.clear_chunk,
                                                          lane);
    if (lane == 0) {
        p.counters.wait_cleared_past(tile, cleared_seen);
        T published = aggregate;  // published_aggregate, spelled out (fewer registers in the pipelined kernel)
        if constexpr (!ScanOpTraits<T, Op>::kOrdered) {
            if (tile == 0 && p.has_initial) published = Op()(scan_start<T, Op>(p), aggregate);
        }
        status.store(tile, tile == 0 ? kTileInclusive : kTileAggregate, published);
    }
    __syncwarp();
}

// Persistent blocks, each with kStages tiles in flight in shared memory (a
// ring of stages filled by cp.async), scanned in ticket order. One step per
// tile: reduce the next tile, which has landed by now, and publish its
// aggregate; look back for the current tile (whose aggregate went out one
// step earlier) while another warp takes the ticket that will refill its
// stage; add the prefix, store, refill. Publishing one step ahead matters: a
// tile's successors, in other blocks, need only its aggregate, and would
// otherwise wait for this block to finish the look-back of its previous
// tile, which waits on another block, and so on down a chain (measured: 30x
// slower).
//
// No tile waits forever, whichever blocks are resident: a tile only ever
// waits for older tiles, and the block holding an older tile is either
// working on it or waiting for a still older one.
// Each thread only touches its own vectors of a staged tile, so no barrier is
// needed between its copies landing and its reading them.
// Warp 0 of a pipelined step: the exclusive prefix of `tile`, whose
// aggregate went out one step earlier (tile 0: none to look for, it starts
// from the initial value or nothing).
template <typename T, typename Op, typename Config, typename Status>
__device__ __forceinline__ T tile_exclusive_prefix(const ScanParams &p, const Status &status, uint32_t tile,
                                                   T aggregate, int lane) {
    T exclusive = scan_start<T, Op>(p);
    LookbackStats stats;
    if (tile != 0) exclusive = look_back<T, Op, Config>(p, status, tile, aggregate, lane, stats);
    GPUPRIM_SCAN_TRACE_AT(lane == 0, p, tile, 3, global_timer_ns());
    GPUPRIM_SCAN_TRACE_AT(lane == 0, p, tile, 5, (uint64_t(stats.windows) << 32) | stats.polls);
    return exclusive;
}

// The ring of kStages tiles of a pipelined block in shared memory: filling
// a stage and waiting for it. cp.async: every thread copies its own vectors
// and commits one group per fill, empty or not, so the group counts of the
// waits hold. Bulk: lanes of warp 0 start kBulkCopies copies of a full tile
// and thread 0 tells the stage's barrier their bytes; partial tiles take
// plain loads (each thread reads only its own vectors back) and tickets past
// the end nothing, thread 0 completing the barrier's phase either way. Each
// thread tracks the parity of the phase it waits for next, stage by stage.
template <typename T, typename Op, typename Config>
struct ScanStageRing {
    using Io = TileIo<T, Op, Config>;
    using Block = typename Io::Block;
    static constexpr int kStages = Config::kStages;
    static constexpr int kBulkCopies = kHasBulkCopy ? Config::kBulkCopies : 0;
    static constexpr bool kBulkLoad = kBulkCopies > 0;
    static_assert(Config::kThreads % (kBulkCopies > 0 ? kBulkCopies : 1) == 0 && kBulkCopies <= kWarpLanes,
                  "whole vectors per bulk copy, issued by lanes of warp 0");

    const ScanParams &p;
    T *const base;                      // kStages tiles of Block::kTileItems elements
    unsigned long long *const landed;   // bulk fills: one barrier per stage
    const int warp, lane;
    uint32_t parity = 0;

    __device__ __forceinline__ T *data(uint32_t s) const { return base + s * Block::kTileItems; }

    // Ready after the next barrier.
    __device__ __forceinline__ void init() {
        if constexpr (kBulkLoad) {
            if (threadIdx.x == 0)
                for (int s = 0; s < kStages; ++s) stage_barrier_init(&landed[s]);
        }
    }

    __device__ __forceinline__ void fill(uint32_t s, uint32_t tile) {
        if constexpr (kBulkLoad) {
            if (tile < p.num_tiles && Io::is_full(p, tile)) {
                constexpr uint32_t kCopyItems = Block::kTileItems / kBulkCopies;
                if (threadIdx.x == 0) stage_barrier_expect(&landed[s], uint32_t(sizeof(T)) * Block::kTileItems);
                if (threadIdx.x < kBulkCopies)
                    bulk_load_to_shared(data(s) + threadIdx.x * kCopyItems,
                                        static_cast<const T *>(p.input) + Io::first_index(p, tile) +
                                            threadIdx.x * kCopyItems,
                                        uint32_t(sizeof(T)) * kCopyItems, &landed[s]);
            } else {
                stage_tile<T, Op, Config>(p, tile, data(s), warp, lane);
                if (threadIdx.x == 0) stage_barrier_arrive(&landed[s]);
            }
        } else {
            stage_tile<T, Op, Config>(p, tile, data(s), warp, lane);
            cp_async_commit();
        }
    }

    // kPending: cp.async groups committed after stage s's (ignored for bulk fills).
    template <int kPending>
    __device__ __forceinline__ void wait(uint32_t s) {
        if constexpr (kBulkLoad) {
            stage_barrier_wait(&landed[s], (parity >> s) & 1u);
            parity ^= 1u << s;
        } else {
            cp_async_wait<kPending>();
        }
    }
};

// Persistent blocks, each with kStages tiles in flight in shared memory (a
// ring of stages filled by cp.async), scanned in ticket order. One step per
// tile: reduce the next tile, which has landed by now, and publish its
// aggregate; look back for the current tile (whose aggregate went out one
// step earlier) while another warp takes the ticket that will refill its
// stage; add the prefix, store, refill. Publishing one step ahead matters: a
// tile's successors, in other blocks, need only its aggregate, and would
// otherwise wait for this block to finish the look-back of its previous
// tile, which waits on another block, and so on down a chain (measured: 30x
// slower).
//
// No tile waits forever, whichever blocks are resident: a tile only ever
// waits for older tiles, and the block holding an older tile is either
// working on it or waiting for a still older one.
// Each thread only touches its own vectors of a staged tile, so no barrier is
// needed between its copies landing and its reading them.
template <typename T, typename Op, typename Config>
__device__ __forceinline__ void scan_pipelined_tiles(const ScanParams &p) {
    using Ring = ScanStageRing<T, Op, Config>;
    using Io = TileIo<T, Op, Config>;
    using Block = typename Io::Block;
    constexpr int kStages = Config::kStages;
    const Op op;
    extern __shared__ uint4 stage_memory[];  // kStages tiles of Block::kTileItems elements
    __shared__ unsigned long long stage_landed[Ring::kBulkLoad ? kStages : 1];  // bulk fills: one barrier per stage
    __shared__ typename Block::TempStorage temp, next_temp;
    __shared__ T stage_aggregate[kStages];
    __shared__ uint32_t stage_ticket[kStages], stage_cleared[kStages];
    __shared__ uint32_t next_ticket, next_cleared;
    __shared__ T tile_prefix;

    const int warp = threadIdx.x / kWarpLanes;
    const int lane = threadIdx.x % kWarpLanes;
    const TileStatus<T> status{static_cast<unsigned long long *>(p.status_slots)};
    Ring ring{p, reinterpret_cast<T *>(stage_memory), stage_landed, warp, lane};
    ring.init();

    // One ticket per stage, one at a time: every block's first tile comes
    // before any block's second, so no block starts out behind the others.
    // Once a ticket is past the end, so are all later ones: no more asking.
    for (int s = 0; s < kStages; ++s) {
        if (threadIdx.x == 0) {
            if (s > 0 && stage_ticket[s - 1] >= p.num_tiles) {
                stage_ticket[s] = stage_ticket[s - 1];
            } else {
                const unsigned long long word = p.counters.take_tickets(1);
                stage_ticket[s] = static_cast<uint32_t>(word);
                stage_cleared[s] = static_cast<uint32_t>(word >> 32);
            }
        }
        __syncthreads();
        GPUPRIM_SCAN_TRACE_AT(threadIdx.x == 0 && stage_ticket[s] < p.num_tiles, p, stage_ticket[s], 0,
                              global_timer_ns());
        ring.fill(s, stage_ticket[s]);
    }
    if (stage_ticket[0] < p.num_tiles) {  // the first tile's aggregate, before the first step
        ring.template wait<kStages - 1>(0);
        const T warp_total = Block::reduce_staged_segment(ring.data(0), warp, lane);
        if (lane == 0) next_temp.warp_totals[warp] = warp_total;
        __syncthreads();
        if (warp == 0) {
            const T aggregate = Block::tile_total(next_temp);
            publish_aggregate<T, Op>(p, status, stage_ticket[0], stage_cleared[0], aggregate, lane);
            if (lane == 0) stage_aggregate[0] = aggregate;
        }
        __syncthreads();  // next_temp is read before the first step writes it again
    }

    for (uint32_t step = 0;; ++step) {
        const uint32_t s = step % kStages;
        const uint32_t tile = stage_ticket[s];
        if (tile >= p.num_tiles) break;  // the same for the whole block; later stages are newer
        T *const staged = ring.data(s);
        const uint32_t s_next = (step + 1) % kStages;
        const uint32_t next_tile = stage_ticket[s_next];
        const bool publish_next = next_tile < p.num_tiles;

        // The next stage's copies are the oldest group still pending.
        ring.template wait<kStages - 2>(s_next);
        if (publish_next) {
            const T warp_total = Block::reduce_staged_segment(ring.data(s_next), warp, lane);
            if (lane == 0) next_temp.warp_totals[warp] = warp_total;
        }
        GPUPRIM_SCAN_TRACE_AT(threadIdx.x == 0, p, tile, 1, global_timer_ns());

        T lane_prefix[Config::kVectors];
        const T warp_total = Block::scan_staged_segment(staged, lane_prefix, warp, lane);
        if (lane == 0) temp.warp_totals[warp] = warp_total;
        __syncthreads();

        if (warp == 0) {
            const T aggregate = stage_aggregate[s];
            if (publish_next) {
                const T next_aggregate = Block::tile_total(next_temp);
                publish_aggregate<T, Op>(p, status, next_tile, stage_cleared[s_next], next_aggregate, lane);
                if (lane == 0) stage_aggregate[s_next] = next_aggregate;
            }
            GPUPRIM_SCAN_TRACE_AT(lane == 0, p, tile, 2, global_timer_ns());
            const T exclusive = tile_exclusive_prefix<T, Op, Config>(p, status, tile, aggregate, lane);
            if (lane == 0) tile_prefix = exclusive;
        } else if (threadIdx.x == kWarpLanes) {
            // The ticket that refills this stage, taken while warp 0 waits.
            const unsigned long long word = p.counters.take_tickets(1);
            next_ticket = static_cast<uint32_t>(word);
            next_cleared = static_cast<uint32_t>(word >> 32);
        }
        __syncthreads();

        const T segment_prefix = op(tile_prefix, Block::warp_prefix(temp, warp));
        const uint32_t refill = next_ticket;
        if (threadIdx.x == 0) {
            stage_ticket[s] = refill;
            stage_cleared[s] = next_cleared;
        }
        Io::finish_staged(p, tile, staged, lane_prefix, segment_prefix, warp, lane);
        GPUPRIM_SCAN_TRACE_AT(threadIdx.x == 0, p, tile, 4, global_timer_ns());
        __syncthreads();  // the stage, both temps and tile_prefix are free again

        GPUPRIM_SCAN_TRACE_AT(threadIdx.x == 0 && refill < p.num_tiles, p, refill, 0, global_timer_ns());
        ring.fill(s, refill);
    }

    // Every ticket this block will take is taken, and its clears (if any)
    // were made visible before their watermark updates.
    cp_async_wait<0>();
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        p.counters.finish_block(gridDim.x);
    }
}

// The pipelined scan (scan_pipelined_tiles), its body compiled only in the
// device passes of the architectures whose tunings name Config.
template <typename T, typename Op, typename Config>
__global__ void __launch_bounds__(Config::kThreads, Config::kMinBlocks)
    scan_pipelined_kernel(const ScanParams p) {
    if constexpr (compiled_for_this_pass(Config::kArchs)) scan_pipelined_tiles<T, Op, Config>(p);
    else __trap();  // launched only with the tuning of the device code's architecture
}

template <typename T, typename Op, typename Config>
__global__ void __launch_bounds__(Config::kThreads) scan_single_block_kernel(const ScanParams p) {
    using Io = TileIo<T, Op, Config>;
    using Block = typename Io::Block;
    using Traits = ScanOpTraits<T, Op>;
    const Op op;
    __shared__ typename Block::TempStorage temp;

    // Float SUM: the aggregates of the current group of tiles, to combine
    // them exactly as the grouped look-back does (engine/tile_lookback.cuh).
    __shared__ T group_aggregates[Traits::kOrdered ? kLookbackGroupTiles : 1];

    const int warp = threadIdx.x / kWarpLanes;
    const int lane = threadIdx.x % kWarpLanes;
    // The initial value, if any, is everything before tile 0 (float SUM: P_0).
    T carry = scan_start<T, Op>(p);         // everything before the tile
    T group_prefix = scan_start<T, Op>(p);  // float SUM: P_g, everything before the tile's group
    for (uint32_t tile = 0; tile < p.num_tiles; ++tile) {
        if constexpr (Traits::kOrdered) {
            // Every warp scans the group's aggregates the way the look-back
            // warp does: lane k holds tile 32g + k (the whole previous group
            // when a new one starts).
            const uint32_t position = tile % kLookbackGroupTiles;
            T scanned[1] = {Traits::neutral()};
            if ((position == 0 && tile > 0) || uint32_t(lane) < position) scanned[0] = group_aggregates[lane];
            warp_inclusive_scan(scanned, op, lane);
            if (position == 0) {
                if (tile > 0) group_prefix = op(group_prefix, __shfl_sync(kWarpLaneMask, scanned[0], kWarpLanes - 1));
                carry = group_prefix;
            } else {
                carry = op(group_prefix, __shfl_sync(kWarpLaneMask, scanned[0], position - 1));
            }
        }
        const bool full = Io::is_full(p, tile);
        typename Io::Items x;
        Io::load(p, tile, full, x, warp, lane);
        T lane_prefix[Config::kVectors];
        const T warp_total = Block::scan_warp_segment(x, lane_prefix, lane);
        if (lane == 0) temp.warp_totals[warp] = warp_total;
        __syncthreads();
        const T aggregate = Block::tile_total(temp);
        const T segment_prefix = op(carry, Block::warp_prefix(temp, warp));
        // Every warp has read the group's aggregates for this tile.
        if (Traits::kOrdered && threadIdx.x == 0) group_aggregates[tile % kLookbackGroupTiles] = aggregate;
        __syncthreads();  // totals read before the next tile overwrites them
        Block::finish(x, lane_prefix, segment_prefix, p.exclusive);
        Io::store(p, tile, full, x, warp, lane);
        if constexpr (!Traits::kOrdered) carry = op(carry, aggregate);
    }
}

}  // namespace scan_detail
}  // namespace gpuprim::cuda
