// SPDX-License-Identifier: Apache-2.0
// The decoupled look-back of every single-pass tile kernel: the scan
// (scan/agent_scan.cuh, scan/narrow_scan.cuh), the segmented scan and reduce
// (segmented_scan/agent_segmented_scan.cuh), select / partition / runs
// (select/agent_select.cuh) and reduce-by-key
// (reduce_by_key/agent_reduce_by_key.cuh).
//
// A tile publishes its aggregate in its status slot; then one warp finds what
// every tile before it combines to by reading its predecessors' slots in
// windows of 32 tiles (a lane a tile), newest window first, and the tile
// publishes its inclusive prefix. look_back_windows's steps, per poll:
// 1. read kWindowsPerPoll windows (independent loads, one round trip);
// 2. find the window's newest inclusive prefix and newest unpublished tile;
// 3. an inclusive prefix newer than every unpublished tile: the result is it
//    combined with the aggregates after it (finish);
// 4. a window of aggregates only (they never change): pass it and read one
//    window further back;
// 5. otherwise wait poll_ns and read again from the window that stopped the
//    walk. Older tiles never wait on newer ones and tiles are numbered in
//    launch order, so this ends.
//
// Float sums (not associative) must not depend on which tiles happened to be
// done, so the values say how they combine, through a Fold:
//   using Value;
//   static Value empty();                    what precedes tile 0
//   static Value combine(Value older, Value newer);
//   static constexpr bool kLeftFold;
//   static Value fold_lanes_from(Value v, int first, int lane);
//       (kLeftFold false) every lane: lanes first..31's values combined, in
//       lane order unless combine also commutes (then any order will do).
//       combine is associative; passed windows are folded as they are
//       passed, in registers, and the walk has no limit.
//   kLeftFold true: the result must be the left fold of the aggregates one
//       at a time in tile order, as every inclusive prefix is (the segmented
//       scan's float sums: each is the left fold from the last tile with a
//       head). Passed windows are kept in shared memory (`saved`,
//       kMaxSavedWindows windows) and folded at the end, oldest first; a walk
//       that fills them waits where it is for an inclusive prefix. The fold
//       moves Value between lanes with __shfl_sync (a float or a double).
// The flat scan's float SUM takes look_back_grouped below instead: its
// association is fixed by tile numbers alone (groups of 32 tiles), so tiles
// need not wait for their predecessors' inclusive prefixes one by one.
//
// The radix sort's look-back (sort/radix_tile.cuh) is another shape: 256
// digit chains at once, a thread each, in packed 32-bit words, as CUB's
// onesweep agent keeps its own.
#pragma once

#include "core/portable.h"
#include "cuda/util/tile_status.cuh"
#include "cuda/warp/warp_scan.cuh"

#include <cstdint>

namespace gpuprim::cuda {

// Look-back statistics, gathered only by tracing builds of the scan's dev
// driver.
struct LookbackStats {
    uint32_t windows = 0;  // windows (groups) read back past the first
    uint32_t polls = 0;    // status reads of the warp in all
};

// The Fold of a scan operator on single values (integer SUM, MIN, MAX and
// float MIN, MAX by core/ops.h's total order: associative and commutative;
// float SUM: a left fold).
template <typename T, typename Op>
struct OperatorFold {
    using Value = T;
    static constexpr bool kLeftFold = ScanOpTraits<T, Op>::kOrdered;
    __device__ __forceinline__ static T empty() { return ScanOpTraits<T, Op>::neutral(); }
    __device__ __forceinline__ static T combine(T older, T newer) { return Op()(older, newer); }
    __device__ __forceinline__ static T fold_lanes_from(T value, int first, int lane) {
        return warp_reduce_exact(lane >= first ? value : empty(), Op());  // these operators commute
    }
};

namespace lookback_detail {

template <typename Fold>
struct CombineOf {
    __device__ __forceinline__ typename Fold::Value operator()(typename Fold::Value older,
                                                             typename Fold::Value newer) const {
        return Fold::combine(older, newer);
    }
};

// Step 3 of a left fold: the found inclusive prefix, the window's aggregates
// after it, then the saved windows, oldest (highest index) first.
template <typename Fold>
__device__ __forceinline__ typename Fold::Value finish_left_fold(typename Fold::Value value, int newest_inclusive,
                                                                 const typename Fold::Value *saved,
                                                                 int saved_windows) {
    const CombineOf<Fold> op;
    typename Fold::Value acc = __shfl_sync(kWarpLaneMask, value, newest_inclusive);
    acc = warp_fold_ordered(acc, value, newest_inclusive + 1, op);
    for (int s = saved_windows - 1; s >= 0; --s) {
#pragma unroll 8
        for (int k = 0; k < kWarpLanes; ++k) acc = op(acc, saved[s * kWarpLanes + k]);
    }
    return acc;
}

}  // namespace lookback_detail

// What tiles 0..tile-1 combine to (tile > 0), by one whole warp, once this
// tile's aggregate is published (the caller publishes its inclusive prefix)
// and every slot it may read holds this launch's status (the scan: once its
// cleared watermark has passed the tile; the others clear before launch).
// saved: kMaxSavedWindows * 32 values of shared memory when Fold::kLeftFold,
// else unused (may be null).
template <typename Fold, int kMaxSavedWindows, int kWindowsPerPoll, typename Status>
__device__ __forceinline__ typename Fold::Value look_back_windows(const Status &status, uint64_t tile,
                                                                  typename Fold::Value *saved, int lane,
                                                                  uint32_t poll_ns, LookbackStats &stats) {
    using Value = typename Fold::Value;
    static_assert(kWindowsPerPoll >= 1, "a poll reads at least one window");
    static_assert(!Fold::kLeftFold || kMaxSavedWindows >= 1, "a left fold keeps the windows it passes");
    int64_t window_end = int64_t(tile);  // the newest unread window is [window_end - 32, window_end)
    Value passed = Fold::empty();        // not kLeftFold: the windows passed, combined
    int saved_windows = 0;               // kLeftFold: the windows passed, kept in `saved`
    for (;;) {
        uint32_t flags[kWindowsPerPoll];
        Value values[kWindowsPerPoll];
#pragma unroll
        for (int w = 0; w < kWindowsPerPoll; ++w) {
            const int64_t index = window_end - int64_t(w + 1) * kWarpLanes + lane;
            flags[w] = kTileInclusive;  // tiles before 0 act as an empty inclusive prefix
            values[w] = Fold::empty();
            if (index >= 0) status.load(uint64_t(index), flags[w], values[w]);
        }
        ++stats.polls;
#pragma unroll
        for (int w = 0; w < kWindowsPerPoll; ++w) {
            const unsigned invalid = __ballot_sync(kWarpLaneMask, flags[w] == kTileInvalid);
            const unsigned inclusive = __ballot_sync(kWarpLaneMask, flags[w] == kTileInclusive);
            const int newest_inclusive = inclusive ? kWarpLanes - 1 - __clz(inclusive) : -1;
            const int newest_invalid = invalid ? kWarpLanes - 1 - __clz(invalid) : -1;
            if (newest_inclusive > newest_invalid) {
                if constexpr (Fold::kLeftFold)
                    return lookback_detail::finish_left_fold<Fold>(values[w], newest_inclusive, saved,
                                                                   saved_windows);
                else
                    return Fold::combine(Fold::fold_lanes_from(values[w], newest_inclusive, lane), passed);
            }
            if (invalid != 0) break;  // step 5
            if constexpr (Fold::kLeftFold) {
                if (saved_windows == kMaxSavedWindows) break;  // wait here for an inclusive prefix
                saved[saved_windows * kWarpLanes + lane] = values[w];
                __syncwarp();
                ++saved_windows;
            } else {
                passed = Fold::combine(Fold::fold_lanes_from(values[w], 0, lane), passed);
            }
            ++stats.windows;
            window_end -= kWarpLanes;
        }
        if (poll_ns) __nanosleep(poll_ns);
    }
}

// Warp 0 of tile `tile` with its aggregate, for associative values: publishes
// the aggregate, finds what the tiles before combine to, publishes the
// inclusive prefix and returns the exclusive one (tile 0: publishes its
// aggregate as inclusive and returns Fold::empty()).
template <typename Fold, typename Status>
__device__ __forceinline__ typename Fold::Value publish_and_look_back(const Status &status, uint64_t tile,
                                                                      typename Fold::Value aggregate, int lane,
                                                                      uint32_t poll_ns) {
    static_assert(!Fold::kLeftFold, "a left fold needs shared memory for the windows it passes");
    if (tile == 0) {
        if (lane == 0) status.store(0, kTileInclusive, aggregate);
        return Fold::empty();
    }
    if (lane == 0) status.store(tile, kTileAggregate, aggregate);
    LookbackStats stats;
    const typename Fold::Value before = look_back_windows<Fold, 0, 1>(status, tile, nullptr, lane, poll_ns, stats);
    if (lane == 0) status.store(tile, kTileInclusive, Fold::combine(before, aggregate));
    return before;
}

// ---- the grouped look-back of float SUM -------------------------------------
// The flat scan's float SUM (ScanOpTraits::kOrdered) must not depend on which
// tiles happened to have finished, so its association is fixed by tile
// numbers alone, in groups of 32 tiles (one look-back window):
//   S_g     = the Kogge-Stone warp scan of group g's 32 aggregates, lane 31
//   P_0     = -0.0 (neutral; a scan's initial value where it has one),
//   P_{g+1} = P_g + S_g                                  (one add per group)
//   prefix(tile 32g + j) = P_g + KS_g[j - 1]            (P_g when j == 0)
// where KS_g[k] is lane k of that warp scan (it depends on lanes 0..k only).
// Group slot g (after the tile slots) holds P_{g+1} once known; tile slots
// hold aggregates only. A tile reads its own group's aggregates and P_g; if
// P_g is not out yet it walks back a group per poll, adding the S of the
// groups it passed: a chain of one add per group, where the left fold of
// every aggregate (the sequential definition) would be one add per tile.

// Tiles per group of the grouped look-back.
constexpr uint32_t kLookbackGroupTiles = kWarpLanes;

// Status slots a look-back over num_tiles tiles needs: one per tile, plus one
// per group of tiles for the grouped look-back.
__host__ __device__ constexpr uint64_t status_slot_count(uint64_t num_tiles, bool grouped) {
    return num_tiles + (grouped ? ceil_div(num_tiles, kLookbackGroupTiles) : 0);
}

// The exclusive prefix of tile `tile` by the group rule above. Called by one
// whole warp once the tile's aggregate is published. Publishes P_g (group
// slot g - 1) if it had to compute it, and P_{g+1} if the tile is the last of
// its group. At most kMaxSavedGroups groups are walked before it waits for
// the oldest one's P (<= 32: their totals are kept one per lane).
// first_prefix: P_0, everything before tile 0 (the neutral element, or the
// scan's initial value).
template <typename T, typename Op, int kMaxSavedGroups, typename Status>
__device__ __forceinline__ T look_back_grouped(const Status &status, uint32_t num_tiles, uint32_t tile, T aggregate,
                                               T first_prefix, int lane, uint32_t poll_ns, LookbackStats &stats) {
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
