// Device-wide prefix scan (inclusive/exclusive; SUM, MIN, MAX).
//
// Large inputs: one launch, one block per tile, tiles in ticket order with a
// decoupled look-back (block/tile_lookback.cuh). A tile waits several
// microseconds for its prefix, so throughput depends on how many tiles can
// wait per SM: the tile is parked in shared memory (cp.async) rather than
// registers. Small inputs: one block walks the tiles with a running carry,
// in registers; no look-back, no workspace.
//
// Tiles are laid out on 16-byte boundaries of the input: "head" pad
// positions before element 0 make every full tile start aligned, so wrapped
// pointers aligned only to the element size still get 16-byte loads. The
// output uses 16-byte stores when it has the input's alignment, element
// stores otherwise. Pads read as the operator's neutral element.
//
// Float SUM is deterministic: within a tile the association is fixed by the
// code, and across tiles every tile's prefix is the left fold of the tile
// aggregates, whatever the timing. Both paths give the same bits.
#include "core/dtype.h"
#include "core/error.h"
#include "core/ops.h"
#include "cuda/block/block_scan.cuh"
#include "cuda/block/tile_lookback.cuh"
#include "cuda/device_env.h"
#include "cuda/scan_tuning.cuh"

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
    uint32_t poll_ns;    // back-off between look-back polls
    void *status_slots;
    ScanCounters counters;
    unsigned long long *trace;  // per-tile timestamps in tracing dev builds; else unused
};

// Tracing (dev/scan only): globaltimer stamps per tile at fixed slots.
#if defined(GPUPRIM_SCAN_TRACE)
__device__ __forceinline__ unsigned long long scan_clock() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
#define GPUPRIM_SCAN_TRACE_START unsigned long long trace_start = scan_clock()
#define GPUPRIM_SCAN_TRACE_AT(who, params, tile, slot, value)                               \
    do {                                                                                  \
        if ((who) && (params).trace) (params).trace[uint64_t(tile) * 8 + (slot)] = (value); \
    } while (0)
#else
#define GPUPRIM_SCAN_TRACE_START ((void)0)
#define GPUPRIM_SCAN_TRACE_AT(who, params, tile, slot, value) ((void)0)
#endif

template <typename T, typename Op, typename Config>
struct TileIo {
    using Block = BlockVectorScan<T, Op, Config::kThreads, Config::kVectors>;
    using Items = typename Block::Items;

    // Index of the tile's first position (negative for the head pads).
    __device__ __forceinline__ static int64_t first_index(const ScanParams &p, uint32_t tile) {
        return int64_t(tile) * Block::kTileItems - int64_t(p.head);
    }
    // Tile 0 always takes the element path, which also writes the identity
    // as element 0 of an exclusive scan.
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
#pragma unroll
            for (int j = 0; j < Block::kVec; ++j)
                if (uint32_t(j) == p.head) x[0][j] = Op::identity();
        }
        Block::store_partial(out, first, p.count, x, warp, lane);
    }
};

// The tile this block scans (tickets come in launch order, so a tile only
// ever waits on tiles whose blocks are running or done) and the cleared
// watermark seen with it.
__device__ __forceinline__ void take_tile_ticket(const ScanParams &p, uint32_t &ticket,
                                                 uint32_t &cleared) {
    const unsigned long long word = p.counters.take_ticket();
    ticket = static_cast<uint32_t>(word);
    cleared = static_cast<uint32_t>(word >> 32);
}

// One tile per block. The tile is staged in shared memory (see
// BlockVectorScan), so a block needs few registers and many tiles can wait
// for their prefixes on one SM; warp 0 looks back once the tile's aggregate
// is published.
template <typename T, typename Op, typename Config>
__global__ void __launch_bounds__(Config::kThreads, Config::kMinBlocks)
    scan_staged_kernel(const ScanParams p) {
    using Io = TileIo<T, Op, Config>;
    using Block = typename Io::Block;
    using Traits = ScanOpTraits<T, Op>;
    const Op op;
    __shared__ alignas(16) T staged[Block::kTileItems];
    __shared__ typename Block::TempStorage temp;
    __shared__ T saved_aggregates[Config::kMaxSavedWindows * kWarpLanes];
    __shared__ uint32_t ticket, cleared;
    __shared__ T tile_prefix;
    GPUPRIM_SCAN_TRACE_START;

    const int warp = threadIdx.x / kWarpLanes;
    const int lane = threadIdx.x % kWarpLanes;
    if (threadIdx.x == 0) take_tile_ticket(p, ticket, cleared);
    __syncthreads();
    const uint32_t tile = ticket;
    const TileStatus<T> status{static_cast<unsigned long long *>(p.status_slots)};
    GPUPRIM_SCAN_TRACE_AT(threadIdx.x == 0, p, tile, 0, trace_start);
    GPUPRIM_SCAN_TRACE_AT(threadIdx.x == 0, p, tile, 1, scan_clock());

    const bool full = Io::is_full(p, tile);
    const T *in = static_cast<const T *>(p.input);
    const int64_t first = Io::first_index(p, tile);
    if (full) Block::stage_full(staged, in + first, warp, lane);
    else Block::stage_partial(staged, in, first, p.count, warp, lane);

    if (warp == Block::kWarps - 1 && tile % p.clear_chunk == 0)
        clear_status_ahead(status, p.counters, tile, p.num_tiles, p.clear_chunk, lane);

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
            if (lane == 0) status.store(0, kTileInclusive, aggregate);
        } else {
            if (lane == 0) status.store(tile, kTileAggregate, aggregate);
            GPUPRIM_SCAN_TRACE_AT(lane == 0, p, tile, 2, scan_clock());
            exclusive = lookback_exclusive_prefix<T, Op, Config::kMaxSavedWindows>(
                status, tile, saved_aggregates, lane, p.poll_ns, stats);
            if (lane == 0) status.store(tile, kTileInclusive, op(exclusive, aggregate));
        }
        GPUPRIM_SCAN_TRACE_AT(lane == 0, p, tile, 3, scan_clock());
        GPUPRIM_SCAN_TRACE_AT(lane == 0, p, tile, 5, (uint64_t(stats.windows) << 32) | stats.polls);
        if (lane == 0) tile_prefix = exclusive;
    }
    __syncthreads();

    const T segment_prefix = op(tile_prefix, Block::warp_prefix(temp, warp));
    T *out = static_cast<T *>(p.output);
    const bool vector_out = full && p.vector_store;
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
            for (int j = 0; j < Block::kVec; ++j)
                if (uint32_t(j) == p.head) v[j] = Op::identity();
        }
#pragma unroll
        for (int j = 0; j < Block::kVec; ++j) {
            const int64_t i = first + offset + j;
            if (i >= 0 && uint64_t(i) < p.count) out[i] = v[j];
        }
    }
    GPUPRIM_SCAN_TRACE_AT(threadIdx.x == 0, p, tile, 4, scan_clock());
    if (threadIdx.x == 0) p.counters.finish_tile(tile, p.num_tiles, tile % p.clear_chunk == 0);
}

template <typename T, typename Op, typename Config>
__global__ void __launch_bounds__(Config::kThreads) scan_single_block_kernel(const ScanParams p) {
    using Io = TileIo<T, Op, Config>;
    using Block = typename Io::Block;
    using Traits = ScanOpTraits<T, Op>;
    const Op op;
    __shared__ typename Block::TempStorage temp;

    const int warp = threadIdx.x / kWarpLanes;
    const int lane = threadIdx.x % kWarpLanes;
    T carry = Traits::neutral();  // same fold of tile aggregates as the look-back path
    for (uint32_t tile = 0; tile < p.num_tiles; ++tile) {
        const bool full = Io::is_full(p, tile);
        typename Io::Items x;
        Io::load(p, tile, full, x, warp, lane);
        T lane_prefix[Config::kVectors];
        const T warp_total = Block::scan_warp_segment(x, lane_prefix, lane);
        if (lane == 0) temp.warp_totals[warp] = warp_total;
        __syncthreads();
        const T aggregate = Block::tile_total(temp);
        const T segment_prefix = op(carry, Block::warp_prefix(temp, warp));
        __syncthreads();  // totals read before the next tile overwrites them
        Block::finish(x, lane_prefix, segment_prefix, p.exclusive);
        Io::store(p, tile, full, x, warp, lane);
        carry = op(carry, aggregate);
    }
}

enum class ScanPath { Auto, SingleBlock, Lookback };

// Counter words used in env.zeroed_counters: [0,1] ticket + cleared
// watermark (one 64-bit word), [2] done count.
constexpr uint32_t kTicketWord = 0;
constexpr uint32_t kDoneWord = 2;

template <typename T, typename Op, typename Tuning>
void launch_scan(const DeviceEnv &env, bool exclusive, const T *input, T *output, uint64_t count,
                 ScanPath path = ScanPath::Auto, unsigned long long *trace = nullptr) {
    using Config = typename ScanConfigFor<Tuning, Op>::type;
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
    if (tiles > 0x7fffffffull)
        fail(GPUPRIM_ERROR_OVERFLOW, "scan: %llu elements is more than one launch can cover",
             static_cast<unsigned long long>(count));
    p.num_tiles = static_cast<uint32_t>(tiles);
    p.clear_chunk = Tuning::kClearChunk;
    p.poll_ns = Tuning::kPollNs;

    const bool single_block = path == ScanPath::SingleBlock ||
                              (path == ScanPath::Auto && tiles <= Tuning::kSingleBlockMaxTiles);
    if (single_block) {
        scan_single_block_kernel<T, Op, Config><<<1, Config::kThreads, 0, env.stream>>>(p);
        check_launch("scan (single block) launch");
        return;
    }

    if (reinterpret_cast<uintptr_t>(env.zeroed_counters) % 8 != 0)
        fail(GPUPRIM_ERROR_INTERNAL, "scan: zeroed counters not 8-byte aligned");
    p.counters.ticket_word = reinterpret_cast<unsigned long long *>(env.zeroed_counters + kTicketWord);
    p.counters.done_word = env.zeroed_counters + kDoneWord;
    p.status_slots = env.workspace->reserve(tiles * TileStatus<T>::kSlotBytes);
    p.trace = trace;
    scan_staged_kernel<T, Op, Config>
        <<<static_cast<unsigned>(tiles), Config::kThreads, 0, env.stream>>>(p);
    check_launch("scan (look-back) launch");
}

// Integer SUM is the same bits for signed and unsigned, so it is compiled
// once per width, on the unsigned type.
template <typename T>
void scan_typed(const DeviceEnv &env, gpuprim_op_t op, bool exclusive, const void *input,
                void *output, uint64_t count) {
    using SumT = std::conditional_t<std::is_integral_v<T>, bits_t<T>, T>;
    with_scan_tuning<int(sizeof(T))>(env.compute_capability, [&](auto tuning) {
        using Tuning = decltype(tuning);
        switch (op) {
        case GPUPRIM_OP_SUM:
            launch_scan<SumT, SumOp<SumT>, Tuning>(env, exclusive, static_cast<const SumT *>(input),
                                                   static_cast<SumT *>(output), count);
            return;
        case GPUPRIM_OP_MIN:
            launch_scan<T, MinOp<T>, Tuning>(env, exclusive, static_cast<const T *>(input),
                                             static_cast<T *>(output), count);
            return;
        case GPUPRIM_OP_MAX:
            launch_scan<T, MaxOp<T>, Tuning>(env, exclusive, static_cast<const T *>(input),
                                             static_cast<T *>(output), count);
            return;
        }
        fail(GPUPRIM_ERROR_INTERNAL, "scan: unknown op %d", static_cast<int>(op));
    });
}

}  // namespace scan_detail

void scan(const DeviceEnv &env, gpuprim_op_t op, gpuprim_scan_kind_t kind, gpuprim_dtype_t dtype,
          const void *input, void *output, uint64_t count) {
    if (count == 0) return;
    const bool exclusive = kind == GPUPRIM_SCAN_EXCLUSIVE;
    dispatch_dtype(dtype, [&](auto zero) {
        scan_detail::scan_typed<decltype(zero)>(env, op, exclusive, input, output, count);
    });
}

}  // namespace gpuprim::cuda
