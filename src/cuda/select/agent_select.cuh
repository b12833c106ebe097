// SPDX-License-Identifier: Apache-2.0
// The tile agent of select / partition / unique / run-length encode, one
// block a tile, in named steps (SelectAgent::run):
// 1. take_tile: a ticket, in launch order (a tile only ever waits on tiles
//    whose blocks run or are done);
// 2. load_keys: each warp its kItems * 32 consecutive keys, 32 a round
//    (coalesced), into registers;
// 3. flag: the rule (select_rules.cuh) says which keys are kept (and, for
//    runs, which end a run); a ballot per round gives each warp its counts
//    in key order;
// 4. summarize: the warps' counts through shared memory: each thread its
//    warp's offset in the tile, the tile's count;
// 5. find_prefix: warp 0 publishes the tile's count and looks back
//    (engine/tile_lookback.cuh) for what the tiles before kept; partition's
//    second pass reads it instead from the first pass's slots;
// 6. scatter: kept keys (then values, positions, run lengths) go to a
//    shared staging array at their rank in the tile, then out to global
//    memory in rank order: consecutive threads write consecutive outputs
//    (CUB's two-phase scatter, always).
// Partition puts the others after the kept: the first pass (kCount) leaves
// every tile's inclusive count in its slot, so the second (kPartition)
// knows both its prefix and the total: other j of a tile goes to
// total + (others before the tile) + j.
#pragma once

#include "cuda/engine/count_prefix.cuh"
#include "cuda/engine/count_sink.cuh"
#include "cuda/engine/tile_ticket.cuh"
#include "cuda/select/select_policy.cuh"
#include "cuda/select/select_rules.cuh"

#include <cstdint>

namespace gpuprim::cuda {
namespace select_detail {

enum class SelectPhase : uint32_t {
    kSelect,     // look-back, then the kept out
    kCount,      // look-back only (partition's first pass: every slot inclusive)
    kPartition,  // prefixes from the slots (or a lone tile), the kept then the others out
};

struct SelectParams {
    const void *keys;
    uint64_t count;
    uint32_t num_tiles;
    SelectPhase phase;
    const void *flags;      // FlagRule
    uint32_t flag_bytes;
    bool non_trivial;       // RunRule: runs of 2 or more only
    void *keys_out;         // nullptr: not wanted (all outputs alike)
    const void *values;
    void *values_out;
    uint32_t value_bytes;
    void *positions;        // select's positions, the runs' starts
    uint32_t position_bytes;
    void *lengths;          // the runs' lengths
    uint32_t length_bytes;
    bool write_count;       // this launch's last tile writes the count sinks
    void *count_out;
    uint32_t count_out_bytes;
    uint64_t *count_host;   // device address of the mapped host slot, or nullptr
    unsigned long long *status_slots;  // num_tiles > 1 only
    unsigned int *ticket;   // a zeroed counter word (util/counters.h), left zero
    uint32_t poll_ns;
};

// An index output of 4 or 8 bytes (the API checked that the values fit).
__device__ __forceinline__ void store_index(void *to, uint32_t bytes, uint64_t at, uint64_t value) {
    if (bytes == 8) static_cast<uint64_t *>(to)[at] = value;
    else static_cast<uint32_t *>(to)[at] = static_cast<uint32_t>(value);
}

template <typename Rule>
struct SelectAgent {
    using Bits = typename Rule::Bits;
    using Shape = SelectShape<int(sizeof(Bits)), Rule::kRuns>;
    static constexpr int kThreads = Shape::kThreads;
    static constexpr int kItems = Shape::kItems;
    static constexpr int kWarps = kThreads / 32;
    static constexpr uint32_t kWarpItems = uint32_t(kItems) * 32;
    static constexpr uint32_t kTileItems = Shape::kTileItems;
    static_assert(kItems <= 32, "a thread's tails are the bits of one word");

    struct WarpSummary {
        uint32_t kept;
        int32_t last_kept;  // the local index of its last kept key, -1: none
        uint32_t tails;
    };
    struct Storage {
        alignas(16) uint64_t stage[kTileItems];  // keys, values, positions or lengths by rank
        WarpSummary warps[kWarps];
        SelectPrefix prefix;
        uint64_t total;  // partition: kept in the whole input
        uint32_t tile;
    };

    const SelectParams &p;
    const Rule &rule;
    Storage &storage;
    const int warp = int(threadIdx.x) / 32;
    const int lane = int(threadIdx.x) % 32;
    const unsigned lanes_before = (1u << lane) - 1;
    TileSpot spot{};
    Bits keys[kItems];
    uint32_t kept_mask[kItems];  // round k's ballot of kept keys (the warp's)
    uint32_t my_tails = 0;       // runs: bit k set when this thread's key k ends a run
    uint32_t kept_before_warp = 0, tile_kept = 0, tile_tails = 0;
    int32_t last_kept_before_warp = -1, tile_last_kept = -1;
    SelectPrefix prefix{0, 0};
    uint64_t total = 0;

    __device__ __forceinline__ SelectAgent(const SelectParams &params, const Rule &r, Storage &s)
        : p(params), rule(r), storage(s) {}

    __device__ __forceinline__ bool partition() const { return p.phase == SelectPhase::kPartition; }

    __device__ __forceinline__ void take_tile() {
        if (threadIdx.x == 0) {
            uint32_t tile = blockIdx.x;  // partition's second pass and a lone tile wait on nobody
            if (p.phase != SelectPhase::kPartition && p.num_tiles > 1) tile = take_tile_ticket(p.ticket, p.num_tiles);
            storage.tile = tile;
        }
        __syncthreads();
        const uint64_t first = uint64_t(storage.tile) * kTileItems;
        const uint64_t left = p.count - first;
        spot = TileSpot{first, left < kTileItems ? uint32_t(left) : kTileItems,
                        uint32_t(warp) * kWarpItems + uint32_t(lane)};
    }

    __device__ __forceinline__ void load_keys() {
        const Bits *input = static_cast<const Bits *>(p.keys) + spot.first;
        const bool wanted = Rule::kNeedsKeys || (p.keys_out != nullptr && p.phase != SelectPhase::kCount);
#pragma unroll
        for (int k = 0; k < kItems; ++k)
            keys[k] = wanted && spot.local(k) < spot.valid ? input[spot.local(k)] : Bits(0);
    }

    __device__ __forceinline__ void flag() {
        bool keep[kItems], tail[kItems];
        rule.flag(p, spot, keys, keep, tail);
        uint32_t kept = 0, tails = 0;
        int32_t last_kept = -1;
#pragma unroll
        for (int k = 0; k < kItems; ++k) {
            kept_mask[k] = __ballot_sync(kFullWarp, keep[k]);
            kept += __popc(kept_mask[k]);
            if (kept_mask[k]) last_kept = int32_t(spot.local(k) - uint32_t(lane)) + 31 - __clz(kept_mask[k]);
            if constexpr (Rule::kRuns) {
                tails += __popc(__ballot_sync(kFullWarp, tail[k]));
                my_tails |= uint32_t(tail[k]) << k;
            }
        }
        if (lane == 0) storage.warps[warp] = WarpSummary{kept, last_kept, tails};
        __syncthreads();
    }

    __device__ __forceinline__ void summarize() {
#pragma unroll
        for (int w = 0; w < kWarps; ++w) {
            const WarpSummary s = storage.warps[w];
            if (w < warp) {
                kept_before_warp += s.kept;
                last_kept_before_warp = s.last_kept >= 0 ? s.last_kept : last_kept_before_warp;
            }
            tile_kept += s.kept;
            tile_tails += s.tails;
            tile_last_kept = s.last_kept >= 0 ? s.last_kept : tile_last_kept;
        }
    }

    // Warp 0: this tile's prefix (and partition's total) into shared memory.
    __device__ __forceinline__ void find_prefix() {
        if (warp == 0) {
            const uint32_t tile = storage.tile;
            const SelectTileStatus status{p.status_slots};
            const SelectPrefix aggregate{tile_kept, tile_last_kept >= 0 ? spot.first + uint64_t(tile_last_kept) + 1 : 0};
            SelectPrefix before{0, 0};
            uint64_t kept_total = 0;
            if (partition()) {
                kept_total = tile_kept;  // a lone tile
                if (p.num_tiles > 1 && lane == 0) {
                    // The first pass has ended: every slot holds its inclusive prefix.
                    uint32_t flag;
                    SelectPrefix last;
                    if (tile > 0) status.load(tile - 1, flag, before);
                    status.load(p.num_tiles - 1, flag, last);
                    kept_total = last.count;
                }
            } else if (p.num_tiles > 1) {
                before = publish_and_look_back<SelectPrefixFold>(status, tile, aggregate, lane, p.poll_ns);
                kept_total = before.count + tile_kept;
            } else {
                kept_total = tile_kept;
            }
            if (lane == 0) {
                if (p.write_count && tile == p.num_tiles - 1) write_count_sinks(p.count_out, p.count_out_bytes, p.count_host, kept_total);
                storage.prefix = before;
                storage.total = kept_total;
            }
        }
        __syncthreads();
        prefix = storage.prefix;
        total = storage.total;
    }

    // Every thread's keys through get(k) into the staging array as type V:
    // the kept at their rank, partition's others after the tile's kept.
    template <typename V, typename Get>
    __device__ __forceinline__ void stage(Get get) {
        V *staged = reinterpret_cast<V *>(storage.stage);
        uint32_t rank = kept_before_warp;  // kept before round k of this warp
#pragma unroll
        for (int k = 0; k < kItems; ++k) {
            const uint32_t mask = kept_mask[k];
            const uint32_t mine = rank + __popc(mask & lanes_before);
            const uint32_t local = spot.local(k);
            if ((mask >> lane) & 1u) staged[mine] = get(k);
            else if (partition() && local < spot.valid) staged[tile_kept + local - mine] = get(k);
            rank += __popc(mask);
        }
        __syncthreads();
    }

    // The staged elements out in rank order: kept to [prefix, ...), others
    // (partition) to [total + others before the tile, ...).
    template <typename V>
    __device__ __forceinline__ void write_staged(V *out) {
        const V *staged = reinterpret_cast<const V *>(storage.stage);
        const uint32_t staged_count = partition() ? spot.valid : tile_kept;
        const uint64_t others_at = total + (spot.first - prefix.count);
        for (uint32_t s = threadIdx.x; s < staged_count; s += kThreads)
            out[s < tile_kept ? prefix.count + s : others_at + (s - tile_kept)] = staged[s];
        __syncthreads();  // before the staging array is filled again
    }

    __device__ __forceinline__ void scatter_keys() {
        if (!p.keys_out) return;
        stage<Bits>([&](int k) { return keys[k]; });
        write_staged(static_cast<Bits *>(p.keys_out));
    }

    template <typename V>
    __device__ __forceinline__ void scatter_values_of() {
        const V *values = static_cast<const V *>(p.values) + spot.first;
        stage<V>([&](int k) { return values[spot.local(k)]; });
        write_staged(static_cast<V *>(p.values_out));
    }

    __device__ __forceinline__ void scatter_values() {
        if (!p.values_out) return;
        switch (p.value_bytes) {
        case 1: return scatter_values_of<uint8_t>();
        case 2: return scatter_values_of<uint16_t>();
        case 4: return scatter_values_of<uint32_t>();
        default: return scatter_values_of<uint64_t>();
        }
    }

    // Select's positions, the runs' starts (never with partition).
    __device__ __forceinline__ void scatter_positions() {
        if (!p.positions) return;
        stage<uint32_t>([&](int k) { return spot.local(k); });
        const uint32_t *staged = reinterpret_cast<const uint32_t *>(storage.stage);
        for (uint32_t s = threadIdx.x; s < tile_kept; s += kThreads)
            store_index(p.positions, p.position_bytes, prefix.count + s, spot.first + staged[s]);
        __syncthreads();
    }

    // The runs' lengths: a run ends at a tail, and its length is the tail's
    // position + 1 less its start: the last kept (run start) at or before
    // the tail, in the tile or, for a run begun in an earlier tile, the
    // look-back's mark. The tails of a tile are the ends of runs
    // prefix.count - open, ... in order, open when the tile begins inside a
    // run (its first key is no run's first).
    __device__ __forceinline__ void scatter_lengths() {
        if constexpr (Rule::kRuns) {
            if (!p.lengths) return;
            const Bits *input = static_cast<const Bits *>(p.keys);
            const uint32_t open = spot.first > 0 && input[spot.first - 1] == input[spot.first] ? 1u : 0u;
            uint64_t *staged = storage.stage;
            const unsigned lanes_up_to = lanes_before | (1u << lane);
            uint32_t kept = kept_before_warp;  // kept before round k of this warp
            int32_t last_kept = -1;            // the warp's last kept before round k
#pragma unroll
            for (int k = 0; k < kItems; ++k) {
                const uint32_t mask = kept_mask[k];
                const uint32_t round_first = spot.local(k) - uint32_t(lane);
                const uint32_t kept_up_to = mask & lanes_up_to;
                if ((my_tails >> k) & 1u) {
                    int32_t start_local = kept_up_to ? int32_t(round_first) + 31 - __clz(kept_up_to) : last_kept;
                    if (start_local < 0) start_local = last_kept_before_warp;
                    const uint64_t start = start_local >= 0 ? spot.first + uint64_t(start_local) : prefix.mark - 1;
                    const uint32_t slot = kept + __popc(kept_up_to) + open - 1;
                    staged[slot] = spot.first + spot.local(k) + 1 - start;
                }
                if (mask) last_kept = int32_t(round_first) + 31 - __clz(mask);
                kept += __popc(mask);
            }
            __syncthreads();
            const uint64_t first_run = prefix.count - open;
            for (uint32_t s = threadIdx.x; s < tile_tails; s += kThreads)
                store_index(p.lengths, p.length_bytes, first_run + s, staged[s]);
            __syncthreads();
        }
    }

    __device__ __forceinline__ void run() {
        take_tile();
        load_keys();
        flag();
        summarize();
        find_prefix();
        if (p.phase == SelectPhase::kCount) return;
        scatter_keys();
        scatter_values();
        scatter_positions();
        scatter_lengths();
    }
};

template <typename Rule>
__global__ void __launch_bounds__(SelectAgent<Rule>::kThreads, SelectAgent<Rule>::Shape::kMinBlocks)
    select_tiles_kernel(const SelectParams p, const Rule rule) {
    __shared__ typename SelectAgent<Rule>::Storage storage;
    SelectAgent<Rule> agent(p, rule, storage);
    agent.run();
}

}  // namespace select_detail
}  // namespace gpuprim::cuda
