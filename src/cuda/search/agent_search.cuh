// SPDX-License-Identifier: Apache-2.0
// The searchsorted kernel (search.cu drives it). Keys and queries are
// compared as the order-preserving unsigned bits of core/key_transform.h
// (the sort's order, descending by complement), so one kernel per key width
// serves every dtype of that width.
//
// Each block takes tiles of kTile consecutive queries of one row (blocks
// loop over the tiles; the flat call is one row) and loads them,
// transformed, to shared memory. Then:
// - If the tile's queries are in order, warps 0 and 1 find the bounds of its
//   first and last query with 32-way searches (warp_bound: about log32(n)
//   rounds of one load per lane); every query's bound lies between them.
//   When they span at most kWindow keys, the block loads those keys to
//   shared memory and merges the queries with them along merge paths: each
//   thread takes an equal share of the (queries + keys) diagonals, finds its
//   start by a binary search in shared memory and walks both sequences,
//   writing a query's bound when it passes it. So sorted queries cost about
//   one read of the keys they span.
// - Otherwise (queries out of order, or spread over more keys than the
//   window), each thread binary-searches its queries inside the span (all
//   keys for an unordered tile), its kItems searches in lockstep so their
//   loads overlap (branchless: the same number of steps for every query).
// The answer is the one bound the rule defines, whichever way a tile goes.
#pragma once

#include "core/element_traits.h"
#include "core/key_transform.h"
#include "core/portable.h"
#include "cuda/search/search_policy.cuh"

#include <cuda_runtime.h>

#include <cstdint>

namespace gpuprim::cuda {
namespace search_detail {

template <typename Bits, typename Index>
struct SearchArgs {
    const Bits *keys;      // row 0's; row r's start r * count keys on
    uint64_t count;        // keys per row
    const Bits *queries;   // row 0's; row r's start r * query_count queries on (indices alike)
    uint64_t query_count;  // queries per row
    Index *indices;
    KeyKind kind;
    bool descending;
    uint64_t rows;         // 1 for the flat call
};

// Key k comes before query q: strictly (lower bound) or before or equal (upper).
template <bool kUpper, typename Bits>
__device__ __forceinline__ bool before(Bits k, Bits q) {
    return kUpper ? k <= q : k < q;
}

template <typename Bits, typename Index>
__device__ __forceinline__ Bits key_at(const SearchArgs<Bits, Index> &args, uint64_t i) {
    return to_radix_key(args.keys[i], args.kind, args.descending);
}

// The bound of q, known to lie in [lo, hi], by the 32 lanes of one warp
// (every lane gets it): each round the lanes probe 32 evenly spaced keys and
// the ballot of "before q" narrows the span to one step.
template <bool kUpper, typename Bits, typename Index>
__device__ uint64_t warp_bound(const SearchArgs<Bits, Index> &args, Bits q, uint64_t lo, uint64_t hi) {
    const uint32_t lane = threadIdx.x % 32;
    while (hi - lo > 32) {
        const uint64_t step = ceil_div(hi - lo, 32);
        const uint64_t probe = lo + (uint64_t(lane) + 1) * step - 1;
        const bool is_before = probe < hi && before<kUpper>(key_at(args, probe), q);
        const uint32_t taken = uint32_t(__popc(__ballot_sync(0xFFFFFFFFu, is_before)));
        // Keys up to the last probe before q come before it; the first probe
        // not before q bounds it from above.
        if (taken < 32) {
            const uint64_t stop = lo + (uint64_t(taken) + 1) * step - 1;
            hi = stop < hi ? stop : hi;
        }
        lo += uint64_t(taken) * step;
        if (lo > hi) lo = hi;  // only on keys out of order (a caller's error): stay in [0, n]
    }
    const bool is_before = lane < hi - lo && before<kUpper>(key_at(args, lo + lane), q);
    return lo + uint64_t(__popc(__ballot_sync(0xFFFFFFFFu, is_before)));
}

template <typename Bits>
struct SearchShape {
    static constexpr int kItems = kSearchItemsFor<Bits>;
    static constexpr int kTile = kSearchBlockThreads * kItems;
    static constexpr int kWindow = kSearchWindowTiles * kTile;
};

template <typename Bits, typename Index>
struct SearchStorage {
    Bits queries[SearchShape<Bits>::kTile];
    Bits keys[SearchShape<Bits>::kWindow];
    Index results[SearchShape<Bits>::kTile];
    uint64_t bounds[2];
};

// A sorted tile whose bounds lie in [lo, hi], hi - lo <= kWindow: the merge
// of its tile_count queries with keys [lo, hi), results to shared memory.
template <bool kUpper, typename Bits, typename Index>
__device__ void merge_tile(const SearchArgs<Bits, Index> &args, SearchStorage<Bits, Index> &s, uint32_t tile_count,
                           uint64_t lo, uint64_t hi) {
    const uint32_t window = uint32_t(hi - lo);
    for (uint32_t x = threadIdx.x; x < window; x += kSearchBlockThreads) s.keys[x] = key_at(args, lo + x);
    __syncthreads();
    const uint32_t diagonals = tile_count + window;
    const uint32_t first = uint32_t(uint64_t(threadIdx.x) * diagonals / kSearchBlockThreads);
    const uint32_t last = uint32_t(uint64_t(threadIdx.x + 1) * diagonals / kSearchBlockThreads);
    // The merge path at diagonal `first`: i queries and first - i keys precede it.
    uint32_t begin = first > window ? first - window : 0, end = first < tile_count ? first : tile_count;
    while (begin < end) {
        const uint32_t mid = (begin + end) / 2;
        if (!before<kUpper>(s.keys[first - 1 - mid], s.queries[mid])) begin = mid + 1;
        else end = mid;
    }
    uint32_t i = begin, j = first - begin;
    for (uint32_t d = first; d < last; ++d) {
        if (i < tile_count && (j >= window || !before<kUpper>(s.keys[j], s.queries[i]))) {
            s.results[i] = Index(lo + j);
            ++i;
        } else {
            ++j;
        }
    }
    __syncthreads();
}

// Each thread's queries (x = threadIdx.x + r * threads) binary-searched in
// [lo, lo + length), in lockstep, results straight to global memory.
template <bool kUpper, typename Bits, typename Index>
__device__ void search_tile(const SearchArgs<Bits, Index> &args, const SearchStorage<Bits, Index> &s,
                            uint64_t tile_begin, uint32_t tile_count, uint64_t lo, uint64_t length) {
    constexpr int kItems = SearchShape<Bits>::kItems;
    Bits query[kItems];
    uint64_t at[kItems];
#pragma unroll
    for (int r = 0; r < kItems; ++r) {
        const uint32_t x = threadIdx.x + uint32_t(r) * kSearchBlockThreads;
        query[r] = s.queries[x < tile_count ? x : 0];
        at[r] = lo;
    }
    if (length > 0) {
        // The answer lies in [at, at + length]; probes stay below lo + length.
        while (length > 1) {
            const uint64_t half = length / 2;
#pragma unroll
            for (int r = 0; r < kItems; ++r)
                if (before<kUpper>(key_at(args, at[r] + half), query[r])) at[r] += half;
            length -= half;
        }
#pragma unroll
        for (int r = 0; r < kItems; ++r) at[r] += before<kUpper>(key_at(args, at[r]), query[r]) ? 1 : 0;
    }
#pragma unroll
    for (int r = 0; r < kItems; ++r) {
        const uint32_t x = threadIdx.x + uint32_t(r) * kSearchBlockThreads;
        if (x < tile_count) args.indices[tile_begin + x] = Index(at[r]);
    }
}

template <typename Bits, typename Index, bool kUpper>
__global__ void __launch_bounds__(kSearchBlockThreads) search_tiles_kernel(const SearchArgs<Bits, Index> all_rows) {
    using Shape = SearchShape<Bits>;
    __shared__ SearchStorage<Bits, Index> s;
    const uint64_t row_tiles = ceil_div(all_rows.query_count, Shape::kTile);
    const uint64_t tiles = row_tiles * all_rows.rows;
    for (uint64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        // A tile lies in one row: the row's keys, queries and indices.
        const uint64_t row = tile / row_tiles;
        SearchArgs<Bits, Index> args = all_rows;
        args.keys += row * args.count;
        args.queries += row * args.query_count;
        args.indices += row * args.query_count;
        const uint64_t tile_begin = (tile - row * row_tiles) * Shape::kTile;
        const uint64_t left = args.query_count - tile_begin;
        const uint32_t tile_count = left < uint64_t(Shape::kTile) ? uint32_t(left) : uint32_t(Shape::kTile);
        bool out_of_order = false;
#pragma unroll
        for (int r = 0; r < Shape::kItems; ++r) {
            const uint32_t x = threadIdx.x + uint32_t(r) * kSearchBlockThreads;
            if (x < tile_count)
                s.queries[x] = to_radix_key(args.queries[tile_begin + x], args.kind, args.descending);
        }
        __syncthreads();
#pragma unroll
        for (int r = 0; r < Shape::kItems; ++r) {
            const uint32_t x = threadIdx.x + uint32_t(r) * kSearchBlockThreads;
            if (x + 1 < tile_count && s.queries[x + 1] < s.queries[x]) out_of_order = true;
        }
        const bool in_order = !__syncthreads_or(out_of_order);
        uint64_t lo = 0, hi = args.count;
        if (in_order) {
            const uint32_t warp = threadIdx.x / 32;
            if (warp < 2) {
                const uint64_t bound = warp_bound<kUpper>(args, s.queries[warp == 0 ? 0 : tile_count - 1],
                                                          uint64_t(0), args.count);
                if (threadIdx.x % 32 == 0) s.bounds[warp] = bound;
            }
            __syncthreads();
            lo = s.bounds[0];
            hi = s.bounds[1];
            if (hi < lo) {  // only on keys out of order (a caller's error): search them all
                lo = 0;
                hi = args.count;
            }
        }
        if (in_order && hi - lo <= uint64_t(Shape::kWindow)) {
            merge_tile<kUpper>(args, s, tile_count, lo, hi);
#pragma unroll
            for (int r = 0; r < Shape::kItems; ++r) {
                const uint32_t x = threadIdx.x + uint32_t(r) * kSearchBlockThreads;
                if (x < tile_count) args.indices[tile_begin + x] = s.results[x];
            }
        } else {
            search_tile<kUpper>(args, s, tile_begin, tile_count, lo, hi - lo);
        }
        __syncthreads();  // the next tile reuses the shared memory
    }
}

}  // namespace search_detail
}  // namespace gpuprim::cuda
