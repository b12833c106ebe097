// SPDX-License-Identifier: Apache-2.0
// Tile status and decoupled look-back for single-pass scans.
//
// Tiles take tickets in launch order from a counter in env.zeroed_counters.
// Each tile publishes its aggregate, looks back over its predecessors in
// warp-wide windows (32 tiles), then publishes its inclusive prefix (float
// SUM: the prefix of its group, see below).
//
// Status slots live in the workspace, which other algorithms also write, so
// stale words cannot be told from fresh ones by content. Instead the kernel
// clears the slots itself, ahead of use: the tile with ticket c*K clears the
// slots of tiles [(c+2)K, (c+3)K) (ticket 0 also the first 2K) and then moves
// a "cleared" watermark forward, in chunk order. A tile waits until the
// watermark has passed it before it publishes or reads any slot; the
// watermark rides in the high half of the 64-bit ticket word, so the ticket
// fetch already brings it and the wait almost never spins. No memset, no
// second launch, and nothing depends on what the workspace held before.
//
// When every counter use is over, the counter words go back to zero, as
// env.zeroed_counters requires: with one tile per block the last tile waits
// for a done count of all others; persistent blocks take tickets until they
// run past the last tile, and the last block to leave resets them.
//
// Look-back result for exactly associative operators (integer SUM, MIN,
// MAX): the newest inclusive prefix found, combined with the aggregates after
// it in any order.
//
// Float SUM (ScanOpTraits::kOrdered) must not depend on which tiles happened
// to have finished, so its association is fixed by tile numbers alone, in
// groups of 32 tiles (one look-back window):
//   S_g     = the Kogge-Stone warp scan of group g's 32 aggregates, lane 31
//   P_0     = -0.0 (neutral; a scan's initial value where it has one),
//   P_{g+1} = P_g + S_g                                  (one add per group)
//   prefix(tile 32g + j) = P_g + KS_g[j - 1]            (P_g when j == 0)
// where KS_g[k] is lane k of that warp scan (it depends on lanes 0..k only).
// Group slot g (after the tile slots) holds P_{g+1} once known; tile slots
// hold aggregates only. A tile reads its own group's aggregates and P_g; if
// P_g is not out yet it walks back a group (or, by the tuning, several) per
// poll, adding the S of the groups it passed: a chain of one add per group,
// where the left fold of every aggregate (the sequential definition) would
// be one add per tile.
#pragma once

#include "core/portable.h"
#include "cuda/util/tile_status.cuh"
#include "cuda/warp/warp_scan.cuh"

#include <cstdint>

namespace gpuprim::cuda {

// Words of env.zeroed_counters the scan uses.
struct ScanCounters {
    // Low 32 bits: next ticket. High 32 bits: slots [0, watermark) cleared.
    unsigned long long *ticket_word;
    unsigned int *done_word;  // tiles (one tile per block) or blocks (persistent) finished

    // `count` consecutive tickets; the first is the low half of the result.
    __device__ __forceinline__ unsigned long long take_tickets(uint32_t count) const {
        unsigned long long old;
        asm volatile("atom.acq_rel.gpu.global.add.u64 %0, [%1], %2;"
                     : "=l"(old)
                     : "l"(ticket_word), "l"(static_cast<unsigned long long>(count))
                     : "memory");
        return old;
    }

    __device__ __forceinline__ uint32_t cleared_acquire() const {
        unsigned long long word;
        asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(word) : "l"(ticket_word) : "memory");
        return static_cast<uint32_t>(word >> 32);
    }
    __device__ __forceinline__ void advance_cleared(uint32_t by) const {
        asm volatile("red.release.gpu.global.add.u64 [%0], %1;" ::"l"(ticket_word),
                     "l"(static_cast<unsigned long long>(by) << 32)
                     : "memory");
    }

    // One thread; `known` is the watermark the ticket fetch returned.
    __device__ __forceinline__ void wait_cleared_past(uint32_t tile, uint32_t known) const {
        if (known > tile) return;  // the ticket's acquire already ordered us after the clears
        while (cleared_acquire() <= tile) __nanosleep(64);
    }

    // One thread per block, after the block's last use of the counters (its
    // last ticket, taken past the end, and any watermark update, both ordered
    // before this by the caller's __syncthreads + __threadfence). The last
    // block to leave puts the words back to zero. No deadlock: blocks only
    // ever wait on tiles, never on other blocks leaving.
    __device__ __forceinline__ void finish_block(uint32_t blocks) const {
        unsigned int left;
        asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;"
                     : "=r"(left)
                     : "l"(done_word)
                     : "memory");
        if (left != blocks - 1) return;
        *reinterpret_cast<volatile unsigned long long *>(ticket_word) = 0;
        *reinterpret_cast<volatile unsigned int *>(done_word) = 0;
    }

    // One-tile-per-block kernels: one thread, after the block's last use of
    // the counters. Every tile but the last counts itself done without
    // waiting for a reply (a returning atomic here would hold the block, and
    // its shared memory, for one more round trip); the last tile waits until
    // all others are counted, then puts the words back to zero. No deadlock: the last ticket is taken, so
    // every block is running, and no tile ever waits on the last one.
    // `advanced_cleared`: this block moved the cleared watermark, a
    // fire-and-forget update of the ticket word that must land first.
    __device__ __forceinline__ void finish_tile(uint32_t tile, uint32_t num_tiles,
                                                bool advanced_cleared) const {
        if (tile != num_tiles - 1) {
            if (advanced_cleared)
                asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(done_word) : "memory");
            else
                asm volatile("red.relaxed.gpu.global.add.u32 [%0], 1;" ::"l"(done_word) : "memory");
            return;
        }
        for (;;) {
            unsigned int done;
            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(done) : "l"(done_word) : "memory");
            if (done == num_tiles - 1) break;
            __nanosleep(128);
        }
        __threadfence();  // after this block's own watermark update, if any
        *reinterpret_cast<volatile unsigned long long *>(ticket_word) = 0;
        *reinterpret_cast<volatile unsigned int *>(done_word) = 0;
    }
};

// Tiles per look-back group of the ordered (float SUM) look-back.
constexpr uint32_t kLookbackGroupTiles = kWarpLanes;

// Status slots a scan of num_tiles tiles needs: one per tile, plus one per
// group of tiles for the ordered look-back.
__host__ __device__ constexpr uint64_t status_slot_count(uint64_t num_tiles, bool ordered) {
    return num_tiles + (ordered ? ceil_div(num_tiles, kLookbackGroupTiles) : 0);
}

// Called by one whole warp of the tile whose ticket is a multiple of chunk
// (a multiple of kLookbackGroupTiles, so a group's slot is cleared with its
// tiles). kGroupSlots: the slots of the ordered look-back's groups follow the
// tile slots.
template <bool kGroupSlots, typename Status>
__device__ __forceinline__ void clear_status_ahead(const Status &status, const ScanCounters &counters,
                                                   uint32_t tile, uint32_t num_tiles, uint32_t chunk,
                                                   int lane) {
    const uint64_t c = tile / chunk;
    const uint64_t begin = tile == 0 ? 0 : (c + 2) * chunk;
    const uint64_t end = (c + 3) * chunk;
    const uint64_t stop = end < num_tiles ? end : num_tiles;
    for (uint64_t s = begin + lane; s < stop; s += kWarpLanes) status.clear(s);
    if constexpr (kGroupSlots) {
        const uint64_t group_stop = (stop + kLookbackGroupTiles - 1) / kLookbackGroupTiles;
        for (uint64_t g = begin / kLookbackGroupTiles + lane; g < group_stop; g += kWarpLanes)
            status.clear(num_tiles + g);
    }
    __threadfence();  // the clears are visible before the watermark announces them
    __syncwarp();
    if (lane == 0) {
        // Watermark moves in chunk order, so it only ever covers cleared slots.
        const uint32_t expected = static_cast<uint32_t>(begin);
        while (counters.cleared_acquire() != expected) __nanosleep(64);
        counters.advance_cleared(static_cast<uint32_t>(end - begin));
    }
    __syncwarp();
}

// Look-back statistics, gathered only by tracing builds of the dev driver.
struct LookbackStats {
    uint32_t windows = 0;  // windows read back past the first
    uint32_t polls = 0;    // status reads of the warp in all
};

// The exclusive prefix of tile `tile` (> 0); called by one whole warp once
// the cleared watermark has passed the tile. saved: kMaxSavedWindows * 32
// elements of shared memory for aggregates of windows passed over.
// A window is usable as soon as its newest inclusive prefix has no invalid
// (unpublished) tile after it; older stragglers do not matter.
// Each poll reads kWindowsPerPoll windows at once (independent loads, one
// round trip), a tuning knob: more windows save round trips when the
// inclusive prefix is far back, but cost reads (on the H100 one was best).
template <typename T, typename Op, int kMaxSavedWindows, int kWindowsPerPoll, typename Status>
__device__ __forceinline__ T lookback_exclusive_prefix(const Status &status, uint32_t tile, T *saved,
                                                       int lane, uint32_t poll_ns,
                                                       LookbackStats &stats) {
    using Traits = ScanOpTraits<T, Op>;
    const Op op;
    int64_t window_end = tile;  // the newest unread window covers [window_end - 32, window_end)
    int saved_windows = 0;
    for (;;) {
        uint32_t flags[kWindowsPerPoll];
        T values[kWindowsPerPoll];
#pragma unroll
        for (int w = 0; w < kWindowsPerPoll; ++w) {
            const int64_t index = window_end - int64_t(w + 1) * kWarpLanes + lane;
            flags[w] = kTileInclusive;  // tiles before 0 act as an empty inclusive prefix
            values[w] = Traits::neutral();
            if (index >= 0) status.load(static_cast<uint64_t>(index), flags[w], values[w]);
        }
        ++stats.polls;
#pragma unroll
        for (int w = 0; w < kWindowsPerPoll; ++w) {
            const uint32_t flag = flags[w];
            const T value = values[w];
            const unsigned invalid = __ballot_sync(kWarpLaneMask, flag == kTileInvalid);
            const unsigned inclusive = __ballot_sync(kWarpLaneMask, flag == kTileInclusive);
            const int newest_inclusive = inclusive ? kWarpLanes - 1 - __clz(inclusive) : -1;
            const int newest_invalid = invalid ? kWarpLanes - 1 - __clz(invalid) : -1;
            if (newest_inclusive > newest_invalid) {
                T acc = __shfl_sync(kWarpLaneMask, value, newest_inclusive);
                if constexpr (Traits::kOrdered) {
                    acc = warp_fold_ordered(acc, value, newest_inclusive + 1, op);
                    for (int s = saved_windows - 1; s >= 0; --s) {
#pragma unroll 8
                        for (int k = 0; k < kWarpLanes; ++k) acc = op(acc, saved[s * kWarpLanes + k]);
                    }
                } else {
                    T mine = lane > newest_inclusive ? value : Traits::neutral();
                    for (int s = 0; s < saved_windows; ++s) mine = op(mine, saved[s * kWarpLanes + lane]);
                    acc = op(acc, warp_reduce_exact(mine, op));
                }
                return acc;
            }
            if (invalid != 0 || saved_windows == kMaxSavedWindows) break;  // poll from here again
            // Only aggregates here: keep them and look further back.
            saved[saved_windows * kWarpLanes + lane] = value;
            __syncwarp();
            ++saved_windows;
            ++stats.windows;
            window_end -= kWarpLanes;
        }
        // A tile after the newest inclusive prefix is still unpublished, or
        // the buffer is full: poll again from the window that stopped us
        // (older tiles never wait on newer ones, so this ends).
        if (poll_ns) __nanosleep(poll_ns);
    }
}

// Float SUM: the exclusive prefix of tile `tile` by the group rule at the top
// of this file. Called by one whole warp once the tile's aggregate is
// published and the cleared watermark has passed the tile. Publishes P_g
// (group slot g - 1) if it had to compute it, and P_{g+1} if the tile is the
// last of its group. At most kMaxSavedGroups groups are walked before it
// waits for the oldest one's P (<= 32: their totals are kept one per lane).
// The walk reads one group per poll (one round trip per group).
// first_prefix: P_0, everything before tile 0 (the neutral element, or the
// scan's initial value).
template <typename T, typename Op, int kMaxSavedGroups, typename Status>
__device__ __forceinline__ T lookback_ordered_prefix(const Status &status, uint32_t num_tiles,
                                                     uint32_t tile, T aggregate, T first_prefix, int lane,
                                                     uint32_t poll_ns, LookbackStats &stats) {
    static_assert(kMaxSavedGroups >= 1 && kMaxSavedGroups <= kWarpLanes, "one saved group total per lane");
    using Traits = ScanOpTraits<T, Op>;
    const Op op;
    const uint32_t group = tile / kLookbackGroupTiles;
    const int position = int(tile % kLookbackGroupTiles);
    constexpr int kLast = kWarpLanes - 1;
    // P_g is in group slot g - 1: slot index num_tiles + g - 1. Lane kLast
    // reads it (for the tile's own group, lane kLast never reads a tile).
    auto read_group_prefix = [&](uint32_t g, uint32_t &flag, T &value) {
        flag = kTileInclusive;  // P_0 is known: first_prefix
        value = first_prefix;
        if (lane == kLast && g > 0) status.load(uint64_t(num_tiles) + g - 1, flag, value);
        flag = __shfl_sync(kWarpLaneMask, flag, kLast);
        value = __shfl_sync(kWarpLaneMask, value, kLast);
    };

    // 1. The aggregates before this tile in its group (lane k: tile 32g + k),
    //    this tile's own at lane `position`, and P_g if already out.
    T scanned[1];
    uint32_t prefix_flag;
    T prefix;
    for (;;) {
        uint32_t flag = kTileAggregate;
        scanned[0] = lane == position ? aggregate : Traits::neutral();
        if (lane < position) status.load(uint64_t(group) * kLookbackGroupTiles + lane, flag, scanned[0]);
        read_group_prefix(group, prefix_flag, prefix);
        ++stats.polls;
        if (!__any_sync(kWarpLaneMask, flag == kTileInvalid)) break;
        if (poll_ns) __nanosleep(poll_ns);
    }
    warp_inclusive_scan(scanned, op, lane);
    const T before_in_group = __shfl_sync(kWarpLaneMask, scanned[0], position > 0 ? position - 1 : 0);
    const T group_total = __shfl_sync(kWarpLaneMask, scanned[0], kLast);  // used by the group's last tile

    // 2. P_g: walk back over older groups until some P is known, keeping each
    //    walked group's total S (newest first: lane s holds S_{group-1-s}).
    if (prefix_flag != kTileInclusive) {
        T totals = Traits::neutral();
        int saved = 0;
        uint32_t g = group - 1;  // group >= 1 here: P_0 is always known
        for (;;) {
            uint32_t flag;
            T value;
            status.load(uint64_t(g) * kLookbackGroupTiles + lane, flag, value);
            uint32_t older_flag;
            T older_prefix;
            read_group_prefix(g, older_flag, older_prefix);
            ++stats.polls;
            if (__any_sync(kWarpLaneMask, flag == kTileInvalid)) {  // read this group again
                if (poll_ns) __nanosleep(poll_ns);
                continue;
            }
            T group_scan[1] = {value};
            warp_inclusive_scan(group_scan, op, lane);
            const T total = __shfl_sync(kWarpLaneMask, group_scan[0], kLast);
            if (lane == saved) totals = total;
            ++saved;
            ++stats.windows;
            while (older_flag != kTileInclusive && saved == kMaxSavedGroups) {
                // Walked as far as allowed: wait for P_g (an older tile publishes it).
                if (poll_ns) __nanosleep(poll_ns);
                read_group_prefix(g, older_flag, older_prefix);
                ++stats.polls;
            }
            if (older_flag == kTileInclusive) {
                // P_{k+1} = P_k + S_k from k = g up to group - 1, publishing each.
                prefix = older_prefix;
                for (int s = saved - 1; s >= 0; --s) {
                    prefix = op(prefix, __shfl_sync(kWarpLaneMask, totals, s));
                    if (lane == 0)
                        status.store(uint64_t(num_tiles) + (group - 1 - uint32_t(s)), kTileInclusive, prefix);
                }
                break;
            }
            --g;
        }
    }

    if (position == kLast && lane == 0)  // P_{g+1} for the next group
        status.store(uint64_t(num_tiles) + group, kTileInclusive, op(prefix, group_total));
    return position > 0 ? op(prefix, before_in_group) : prefix;
}

}  // namespace gpuprim::cuda
