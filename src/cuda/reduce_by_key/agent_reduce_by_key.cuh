// SPDX-License-Identifier: Apache-2.0
// The tile agent of reduce-by-key, one block a tile, in named steps
// (ReduceByKeyAgent::run):
// 1. take_tile: a ticket, in launch order (a tile only ever waits on tiles
//    whose blocks run or are done);
// 2. load_tile: the tile's keys and values into registers, striped
//    (coalesced), with the keys just outside the tile, every load issued
//    before any is used; values entered into running values (run_ops.cuh),
//    through group-by's permutation when there is one;
// 3. arrange_keys, arrange_values: each through shared memory to its thread
//    as kItems consecutive elements; for the keys, which of them start a run
//    (a head: the key before differs by bits) and which end one (a tail),
//    from the thread's own keys and one neighbour on either side;
// 4. fold_thread: each thread's piece: heads, its last head, the fold of its
//    elements since its last head (all of them if none);
// 5. scan_block: the pieces of the threads before each thread, a segmented
//    scan of fixed shape (lanes by shuffles, then warps in order), so every
//    fold depends on the data alone, never on timing;
// 6. find_prefix: warp 0 publishes the tile's head count and looks back
//    (engine/tile_lookback.cuh) for the runs of the tiles before it and
//    where the last of them began: integer counts, exact in any order;
// 7. write_results, write_keys, write_lengths: each run that ends in the
//    tile: its result when it also began in the tile (a run begun in an
//    earlier tile leaves its piece in this tile to the crossing-runs kernel,
//    crossing_runs_kernel.cuh, which folds it with the pieces before in tile
//    order), its key, its length, each staged by rank in shared memory and
//    written out coalesced; write_element_runs: group-by's run of each
//    element;
// 8. write_record: the tile's record for that kernel.
#pragma once

#include "cuda/engine/count_prefix.cuh"
#include "cuda/engine/count_sink.cuh"
#include "cuda/engine/tile_ticket.cuh"
#include "cuda/reduce_by_key/reduce_by_key_params.cuh"
#include "cuda/reduce_by_key/reduce_by_key_policy.cuh"
#include "cuda/reduce_by_key/run_ops.cuh"

#include <cstdint>

namespace gpuprim::cuda {
namespace reduce_by_key_detail {

template <typename Bits, typename Op>
struct ReduceByKeyAgent {
    using T = typename Op::Value;
    using Acc = typename Op::Acc;
    using Shape = ReduceByKeyShape<int(sizeof(Bits)), int(sizeof(Acc))>;
    static constexpr int kThreads = Shape::kThreads;
    static constexpr int kItems = Shape::kItems;
    static constexpr int kWarps = kThreads / 32;
    static constexpr uint32_t kTileItems = Shape::kTileItems;
    static_assert(kItems <= 32, "a thread's heads and tails are the bits of one word");
    static_assert(sizeof(Bits) <= 8 && sizeof(Acc) <= 8, "keys and running values fit a staging slot");

    // A stretch of elements in tile order: its heads, the local index of its
    // last head (-1: none), and the fold of its elements since that head
    // (all of them if none); any: it holds an element at all.
    struct Piece {
        uint32_t heads;
        int32_t last_head;
        uint32_t any;
        Acc value;
    };
    __device__ __forceinline__ static Piece empty_piece() { return Piece{0, -1, 0, Acc{}}; }
    // older then newer, back to back.
    __device__ __forceinline__ static Piece join(const Piece &older, const Piece &newer) {
        if (!newer.any) return older;
        if (!older.any) return newer;
        return Piece{older.heads + newer.heads, newer.last_head >= 0 ? newer.last_head : older.last_head, 1u,
                     newer.heads ? newer.value : Op::combine(older.value, newer.value)};
    }
    __device__ __forceinline__ static Piece shuffle_up_piece(const Piece &piece, unsigned delta) {
        return Piece{__shfl_up_sync(0xffffffffu, piece.heads, delta), __shfl_up_sync(0xffffffffu, piece.last_head, delta),
                     __shfl_up_sync(0xffffffffu, piece.any, delta), shuffle_up_value(piece.value, delta)};
    }
    // Adds element `local` (value v, a head or not) to a piece.
    __device__ __forceinline__ static void extend(Piece &piece, bool head, uint32_t local, Acc v) {
        if (head) {
            ++piece.heads;
            piece.last_head = int32_t(local);
            piece.value = v;
        } else {
            piece.value = piece.any ? Op::combine(piece.value, v) : v;
        }
        piece.any = 1u;
    }

    struct Storage {
        // The tile's keys, then its running values, then the results, keys
        // and lengths of its runs by rank.
        alignas(16) unsigned long long stage[kTileItems];
        Piece warps[kWarps];
        SelectPrefix prefix;
        unsigned long long last_value, open_value, open_run;
        uint32_t tile;
        uint32_t open;          // the tile's first element continues a run begun before it
        uint32_t last_is_tail;  // the tile's last element ends a run
    };

    const ReduceByKeyParams &p;
    Storage &storage;
    const int warp = int(threadIdx.x) / 32;
    const int lane = int(threadIdx.x) % 32;
    const uint32_t base = threadIdx.x * uint32_t(kItems);  // this thread's first element in the tile
    uint32_t tile = 0;
    uint64_t first = 0;  // the tile's first position
    uint32_t valid = 0;  // elements of the tile inside the input
    Bits keys[kItems];  // this thread's kItems consecutive elements (blocked)
    Acc values[kItems];
    Bits striped_keys[kItems];  // elements threadIdx.x + k * kThreads, as loaded
    Acc striped_values[kItems];
    uint32_t heads = 0, tails = 0;  // bit k: element k of this thread starts / ends a run
    Bits key_before_tile{}, key_after_tile{};  // the input's keys at first - 1 and first + valid, where they exist
    Piece before{}, tile_total{};
    SelectPrefix prefix{0, 0};
    // The tails of the tile end runs first_run, first_run + 1, ... (the first
    // of them the open run, if the tile is open): tile_tails of them.
    uint32_t open = 0, tile_tails = 0;
    uint64_t first_run = 0;

    __device__ __forceinline__ ReduceByKeyAgent(const ReduceByKeyParams &params, Storage &s) : p(params), storage(s) {}

    __device__ __forceinline__ bool has(int k) const { return base + uint32_t(k) < valid; }

    __device__ __forceinline__ void take_tile() {
        if (threadIdx.x == 0) {
            uint32_t ticket = 0;
            if (p.num_tiles > 1) ticket = take_tile_ticket(p.ticket, p.num_tiles);
            storage.tile = ticket;
            storage.open_run = kNoRun;
        }
        __syncthreads();
        tile = storage.tile;
        first = uint64_t(tile) * kTileItems;
        const uint64_t left = p.count - first;
        valid = left < kTileItems ? uint32_t(left) : kTileItems;
    }

    // Striped and unrolled: a thread's kItems loads of keys, then of values,
    // are all in flight before the first is used (a loop over the tile had
    // about one in flight a thread). Each goes at a constant offset from the
    // thread's first element, and the plain values (no permutation) take no
    // branch: with a per-element choice between a plain and a permuted load
    // the compiler wrapped every load in a branch and reused registers still
    // awaiting a load, so they came one at a time (ncu, 2^24: 43% of the
    // kernel's stalls were on those loads).
    // Keys of 1, 2 and 4 bytes share the 4-byte kernels (Bits uint32_t,
    // p.key_bytes their width in memory: one set of kernels compiles where
    // three did, and the tile's shape is the same for the three widths,
    // ReduceByKeyShape). The width is chosen once around each loop, not per
    // element (see above).
    template <typename Key>
    __device__ __forceinline__ void load_keys_of() {
        const Key *input = static_cast<const Key *>(p.keys) + first;
        const Key *my_keys = input + threadIdx.x;
#pragma unroll
        for (int k = 0; k < kItems; ++k)
            if (uint32_t(k) * kThreads + threadIdx.x < valid) striped_keys[k] = Bits(my_keys[k * kThreads]);
        // The keys either side of the tile, for the heads and tails at its edges.
        if (threadIdx.x == 0 && first > 0) key_before_tile = Bits(input[-1]);
        if (threadIdx.x == (valid - 1) / kItems && first + valid < p.count) key_after_tile = Bits(input[valid]);
    }

    // Calls f(Key{}) with the keys' type in memory.
    template <typename F>
    __device__ __forceinline__ void with_key_type(F &&f) const {
        if constexpr (sizeof(Bits) == 8) {
            f(Bits{});
        } else {
            if (p.key_bytes == 1) f(uint8_t{});
            else if (p.key_bytes == 2) f(uint16_t{});
            else f(Bits{});
        }
    }

    __device__ __forceinline__ void load_tile() {
        with_key_type([&](auto key) { load_keys_of<decltype(key)>(); });
        if (!p.values) return;
        if (!p.value_order) {
            const T *my_values = static_cast<const T *>(p.values) + first + threadIdx.x;
#pragma unroll
            for (int k = 0; k < kItems; ++k)
                if (uint32_t(k) * kThreads + threadIdx.x < valid)
                    striped_values[k] = Op::load(flip_value(my_values[k * kThreads], p.value_flip));
            return;
        }
        const T *values = static_cast<const T *>(p.values);
#pragma unroll
        for (int k = 0; k < kItems; ++k) {
            const uint32_t s = uint32_t(k) * kThreads + threadIdx.x;
            if (s < valid)
                striped_values[k] = Op::load(
                    flip_value(values[load_index(p.value_order, p.value_order_bytes, first + s)], p.value_flip));
        }
    }

    // Element k heads a run when the key before it differs; it ends one when
    // the key after it does (or it is the input's first / last element).
    __device__ __forceinline__ void arrange_keys() {
        Bits *staged = reinterpret_cast<Bits *>(storage.stage);
#pragma unroll
        for (int k = 0; k < kItems; ++k) {
            const uint32_t s = uint32_t(k) * kThreads + threadIdx.x;
            if (s < valid) staged[s] = striped_keys[k];
        }
        __syncthreads();
        if (has(0)) {
            Bits last_key{};  // the thread's last element's (unrolled: no indexing by a variable)
#pragma unroll
            for (int k = 0; k < kItems; ++k)
                if (has(k)) {
                    keys[k] = staged[base + uint32_t(k)];
                    last_key = keys[k];
                }
            // This thread's elements: kItems of them, or fewer in the last tile.
            const uint32_t mine = min(uint32_t(kItems), valid - base);
            bool first_head;
            if (base > 0) first_head = staged[base - 1] != keys[0];
            else first_head = first == 0 || key_before_tile != keys[0];
            bool last_tail;
            if (base + mine < valid) last_tail = staged[base + mine] != last_key;
            else last_tail = first + valid == p.count || key_after_tile != last_key;
            heads = uint32_t(first_head);
#pragma unroll
            for (int k = 1; k < kItems; ++k)
                if (has(k)) heads |= uint32_t(keys[k - 1] != keys[k]) << k;
            tails = (heads >> 1) | (uint32_t(last_tail) << (mine - 1));
            if (base == 0) storage.open = first_head ? 0u : 1u;
            if (base + mine == valid) storage.last_is_tail = last_tail ? 1u : 0u;
        }
        __syncthreads();  // before the staging array takes the values
    }

    __device__ __forceinline__ void arrange_values() {
        if (!p.values) return;
        Acc *staged = reinterpret_cast<Acc *>(storage.stage);
#pragma unroll
        for (int k = 0; k < kItems; ++k) {
            const uint32_t s = uint32_t(k) * kThreads + threadIdx.x;
            if (s < valid) staged[s] = striped_values[k];
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < kItems; ++k)
            if (has(k)) values[k] = staged[base + uint32_t(k)];
    }

    __device__ __forceinline__ Acc value(int k) const { return p.values ? values[k] : Acc{}; }

    __device__ __forceinline__ Piece fold_thread() const {
        Piece mine = empty_piece();
#pragma unroll
        for (int k = 0; k < kItems; ++k)
            if (has(k)) extend(mine, (heads >> k) & 1u, base + uint32_t(k), value(k));
        return mine;
    }

    // before: the threads before this one, joined; tile_total: all of them.
    __device__ __forceinline__ void scan_block(const Piece &mine) {
        Piece inclusive = mine;
#pragma unroll
        for (unsigned offset = 1; offset < 32; offset *= 2) {
            const Piece other = shuffle_up_piece(inclusive, offset);
            if (unsigned(lane) >= offset) inclusive = join(other, inclusive);
        }
        Piece lane_before = shuffle_up_piece(inclusive, 1);
        if (lane == 0) lane_before = empty_piece();
        if (lane == 31) storage.warps[warp] = inclusive;
        __syncthreads();
        Piece warp_before = empty_piece();
        tile_total = empty_piece();
#pragma unroll
        for (int w = 0; w < kWarps; ++w) {
            const Piece total = storage.warps[w];
            if (w < warp) warp_before = join(warp_before, total);
            tile_total = join(tile_total, total);
        }
        before = join(warp_before, lane_before);
    }

    // Warp 0: the runs begun before this tile and where the last began.
    __device__ __forceinline__ void find_prefix() {
        if (warp == 0) {
            const SelectTileStatus status{p.status_slots};
            const SelectPrefix aggregate{tile_total.heads,
                                         tile_total.last_head >= 0 ? first + uint64_t(tile_total.last_head) + 1 : 0};
            SelectPrefix found{0, 0};
            if (p.num_tiles > 1)
                found = publish_and_look_back<SelectPrefixFold>(status, tile, aggregate, lane, p.poll_ns);
            if (lane == 0) {
                if (tile == p.num_tiles - 1)
                    write_count_sinks(p.count_out, p.count_out_bytes, p.count_host, found.count + tile_total.heads);
                storage.prefix = found;
            }
        }
        __syncthreads();
        prefix = storage.prefix;
        open = storage.open;
        tile_tails = tile_total.heads + open - (storage.last_is_tail ? 0u : 1u);
        first_run = prefix.count - open;
    }

    // Heads of this thread's elements 0..k, and the rank in the tile of the
    // run element k belongs to (0: the open run, if any).
    __device__ __forceinline__ uint32_t heads_up_to(int k) const { return heads & ((2u << k) - 1u); }
    __device__ __forceinline__ uint32_t run_rank(int k) const {
        return before.heads + uint32_t(__popc(heads_up_to(k))) + open - 1u;
    }

    // The staged runs [0, tile_tails) out in rank order (consecutive threads,
    // consecutive outputs); skip_open: not the open run's (rank 0).
    template <typename V, typename Store>
    __device__ __forceinline__ void write_staged(bool skip_open, Store store) {
        __syncthreads();
        const V *staged = reinterpret_cast<const V *>(storage.stage);
        for (uint32_t s = threadIdx.x; s < tile_tails; s += kThreads)
            if (!(skip_open && open && s == 0)) store(first_run + s, staged[s]);
        __syncthreads();  // before the staging array is filled again
    }

    // Runs are numbered from prefix.count - 1 (the run open at the tile's
    // start, if its first element is no head) on: the run of an element is
    // prefix.count + (heads in the tile up to it) - 1. A run that began in
    // the tile gets its result here; the open run's goes to the
    // crossing-runs kernel. Results, keys and lengths each go through the
    // staging array by rank (CUB's two-phase scatter), so a warp's stores
    // are coalesced.
    __device__ __forceinline__ void write_results() {
        if (!p.results) return;
        T *staged = reinterpret_cast<T *>(storage.stage);
        Piece run = before;
#pragma unroll
        for (int k = 0; k < kItems; ++k) {
            if (!has(k)) break;
            const uint32_t local = base + uint32_t(k);
            extend(run, (heads >> k) & 1u, local, value(k));
            if ((tails >> k) & 1u) {
                if (run.heads > 0) {
                    staged[run.heads - 1 + open] = flip_value(Op::store(run.value), p.value_flip);
                } else {  // the crossing-runs kernel folds it with the pieces before
                    storage.open_value = to_slot(run.value);
                    storage.open_run = prefix.count - 1;
                }
            }
            if (local + 1 == valid) storage.last_value = to_slot(run.value);
        }
        T *results = static_cast<T *>(p.results);
        write_staged<T>(true, [&](uint64_t at, T v) { results[at] = v; });
    }

    __device__ __forceinline__ void write_keys() {
        if (!p.keys_out) return;
        Bits *staged = reinterpret_cast<Bits *>(storage.stage);
#pragma unroll
        for (int k = 0; k < kItems; ++k)
            if (has(k) && ((tails >> k) & 1u)) staged[run_rank(k)] = keys[k];
        with_key_type([&](auto key) {
            using Key = decltype(key);
            Key *keys_out = static_cast<Key *>(p.keys_out);
            write_staged<Bits>(false, [&](uint64_t at, Bits v) { keys_out[at] = Key(v); });
        });
    }

    // A run's length: its tail's position + 1 less its start, the last head
    // at or before the tail (this thread's, an earlier thread's) or, for the
    // open run, the look-back's mark.
    __device__ __forceinline__ void write_lengths() {
        if (!p.lengths) return;
        unsigned long long *staged = storage.stage;
#pragma unroll
        for (int k = 0; k < kItems; ++k) {
            if (!has(k) || !((tails >> k) & 1u)) continue;
            const uint32_t mine = heads_up_to(k);
            const uint32_t rank = run_rank(k);
            uint64_t start = prefix.mark - 1;  // the open run
            if (mine) start = first + base + uint32_t(31 - __clz(mine));
            else if (before.heads > 0) start = first + uint64_t(before.last_head);
            staged[rank] = first + base + uint32_t(k) + 1 - start;
        }
        write_staged<unsigned long long>(
            false, [&](uint64_t at, unsigned long long v) { store_index(p.lengths, p.length_bytes, at, v); });
    }

    // Group-by's inverse: each element's run, through the permutation.
    __device__ __forceinline__ void write_element_runs() const {
        if (!p.element_runs) return;
#pragma unroll
        for (int k = 0; k < kItems; ++k) {
            if (!has(k)) break;
            const uint64_t i = first + base + uint32_t(k);
            const uint64_t run_index = first_run + run_rank(k);
            const uint64_t at = p.value_order ? load_index(p.value_order, p.value_order_bytes, i) : i;
            store_index(p.element_runs, p.element_run_bytes, at, run_index);
        }
    }

    __device__ __forceinline__ void write_record() const {
        if (threadIdx.x != 0 || p.num_tiles <= 1) return;
        p.records.heads[tile] = tile_total.heads;
        p.records.last_values[tile] = storage.last_value;
        p.records.open_values[tile] = storage.open_value;
        p.records.open_runs[tile] = storage.open_run;
    }

    __device__ __forceinline__ void run() {
        take_tile();
        load_tile();
        arrange_keys();
        arrange_values();
        scan_block(fold_thread());
        find_prefix();
        write_results();
        write_keys();
        write_lengths();
        write_element_runs();
        write_record();
    }
};

template <typename Bits, typename Op>
__global__ void __launch_bounds__(ReduceByKeyAgent<Bits, Op>::Shape::kThreads,
                                  ReduceByKeyAgent<Bits, Op>::Shape::kMinBlocks)
    reduce_by_key_tiles_kernel(const ReduceByKeyParams p) {
    __shared__ typename ReduceByKeyAgent<Bits, Op>::Storage storage;
    ReduceByKeyAgent<Bits, Op> agent(p, storage);
    agent.run();
}

}  // namespace reduce_by_key_detail
}  // namespace gpuprim::cuda
