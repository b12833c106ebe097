// SPDX-License-Identifier: Apache-2.0
// The searchsorted kernel (search.cu drives it). Keys and queries are
// compared as the order-preserving unsigned bits of core/key_transform.h
// (the sort's order, descending by complement), so one kernel per key width
// serves every dtype of that width.
//
// Each block takes tiles of consecutive queries of one row (blocks
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
//   keys for an unordered tile), its searches in lockstep so their loads
//   overlap (branchless: the same number of steps for every query).
// - An unordered tile over many keys first searches kSamples evenly spaced
//   keys the block keeps in shared memory (loaded once, at its first such
//   tile): the top log2(kSamples) levels of every search cost no global
//   load, and the search in global memory spans n / kSamples keys. (A plain
//   binary search over 2^26 keys makes 26 dependent loads a query; here
//   15.) Queries are read and indices written with evict-first hints: their
//   streams would otherwise push the keys' middle levels out of L2 (ncu,
//   2^24 random u32 queries: L2 hit rate 43% and 2x CUB's DRAM bytes
//   without them).
// The answer is the one bound the rule defines, whichever way a tile goes.
// A tile is args.tile queries (at most kTile; the driver makes it smaller
// when there are few queries, so that they spread over every SM).
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
    uint32_t tile;         // queries per tile: a multiple of the block's threads, at most SearchShape::kTile
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
    static constexpr int kSamples = kSearchSamplesFor<Bits>;
};

template <typename Bits, typename Index>
struct SearchStorage {
    Bits queries[SearchShape<Bits>::kTile];
    Bits keys[SearchShape<Bits>::kWindow];
    // A merged tile's results or the samples, never both in one tile: a
    // merged tile makes the block load the samples again (static shared
    // memory stays within 48 KiB: u32 keys with u64 indices take 40).
    union {
        Index results[SearchShape<Bits>::kTile];
        Bits samples[SearchShape<Bits>::kSamples];
    };
    uint64_t bounds[2];
};

// Keys searched through the samples: enough that each sample stands for at
// least two keys.
template <typename Bits>
__host__ __device__ constexpr bool uses_samples(uint64_t count) {
    return count >= 2 * uint64_t(SearchShape<Bits>::kSamples);
}

// Where sample j (0 <= j < kSamples) sits among count keys: (j + 1) *
// count / (kSamples + 1), without overflow; strictly increasing in j when
// uses_samples(count).
template <typename Bits>
__device__ __forceinline__ uint64_t sample_position(uint64_t count, uint32_t j) {
    constexpr uint64_t kParts = uint64_t(SearchShape<Bits>::kSamples) + 1;
    return count / kParts * (j + 1) + count % kParts * (j + 1) / kParts;
}

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

// Each thread's queries (x = threadIdx.x + r * threads) binary-searched,
// query r's bound known to lie in [at[r], at[r] + length], in lockstep (the
// same steps for every query), results straight to global memory. Keys at
// and past args.count count as never before a query, so a span may run
// past the keys.
template <bool kUpper, typename Bits, typename Index>
__device__ void search_queries(const SearchArgs<Bits, Index> &args, const Bits (&query)[SearchShape<Bits>::kItems],
                               uint64_t (&at)[SearchShape<Bits>::kItems], uint64_t length, uint64_t tile_begin,
                               uint32_t tile_count) {
    constexpr int kItems = SearchShape<Bits>::kItems;
    bool active[kItems];
#pragma unroll
    for (int r = 0; r < kItems; ++r) active[r] = threadIdx.x + uint32_t(r) * kSearchBlockThreads < tile_count;
    while (length > 0) {
        const uint64_t half = (length + 1) / 2;  // probe at + half - 1: the answer is past it or at most it
#pragma unroll
        for (int r = 0; r < kItems; ++r) {
            const uint64_t probe = at[r] + half - 1;
            if (active[r] && probe < args.count && before<kUpper>(key_at(args, probe), query[r])) at[r] += half;
        }
        length -= half;
    }
#pragma unroll
    for (int r = 0; r < kItems; ++r) {
        const uint32_t x = threadIdx.x + uint32_t(r) * kSearchBlockThreads;
        if (active[r]) args.indices[tile_begin + x] = Index(at[r]);
    }
}

// The tile's queries searched in keys [lo, lo + length).
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
    search_queries<kUpper>(args, query, at, length, tile_begin, tile_count);
}

// The tile's queries searched among all keys through the samples: c = the
// samples before the query (in shared memory), so the bound lies after
// sample c - 1 and at most at sample c.
template <bool kUpper, typename Bits, typename Index>
__device__ void search_tile_sampled(const SearchArgs<Bits, Index> &args, const SearchStorage<Bits, Index> &s,
                                    uint64_t tile_begin, uint32_t tile_count) {
    constexpr int kItems = SearchShape<Bits>::kItems, kSamples = SearchShape<Bits>::kSamples;
    static_assert((kSamples & (kSamples - 1)) == 0, "a power of two: the shared search halves it");
    Bits query[kItems];
    uint64_t at[kItems];
    uint32_t taken[kItems];
#pragma unroll
    for (int r = 0; r < kItems; ++r) {
        const uint32_t x = threadIdx.x + uint32_t(r) * kSearchBlockThreads;
        query[r] = s.queries[x < tile_count ? x : 0];
        taken[r] = 0;
    }
    for (uint32_t half = kSamples / 2; half > 0; half /= 2) {
#pragma unroll
        for (int r = 0; r < kItems; ++r)
            if (before<kUpper>(s.samples[taken[r] + half - 1], query[r])) taken[r] += half;
    }
    // taken < kSamples here; the last sample decides kSamples.
#pragma unroll
    for (int r = 0; r < kItems; ++r) {
        taken[r] += before<kUpper>(s.samples[taken[r]], query[r]) ? 1 : 0;
        at[r] = taken[r] == 0 ? 0 : sample_position<Bits>(args.count, taken[r] - 1) + 1;
    }
    // Samples c - 1 and c are at most ceil(count / (kSamples + 1)) apart
    // (and so are the ends from the first and last).
    const uint64_t span = ceil_div(args.count, uint64_t(kSamples) + 1);
    search_queries<kUpper>(args, query, at, span, tile_begin, tile_count);
}

// The samples of the keys (sorted rows: they are in order too).
template <typename Bits, typename Index>
__device__ void load_samples(const SearchArgs<Bits, Index> &args, SearchStorage<Bits, Index> &s) {
    for (uint32_t j = threadIdx.x; j < uint32_t(SearchShape<Bits>::kSamples); j += kSearchBlockThreads)
        s.samples[j] = key_at(args, sample_position<Bits>(args.count, j));
    __syncthreads();
}

template <typename Bits, typename Index, bool kUpper>
__global__ void __launch_bounds__(kSearchBlockThreads) search_tiles_kernel(const SearchArgs<Bits, Index> all_rows) {
    using Shape = SearchShape<Bits>;
    __shared__ SearchStorage<Bits, Index> s;
    const uint64_t row_tiles = ceil_div(all_rows.query_count, uint64_t(all_rows.tile));
    const uint64_t tiles = row_tiles * all_rows.rows;
    const bool sampled = uses_samples<Bits>(all_rows.count);
    uint64_t sampled_row = ~uint64_t(0);  // the row whose samples s.samples holds (none yet)
    for (uint64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        // A tile lies in one row: the row's keys, queries and indices.
        const uint64_t row = tile / row_tiles;
        SearchArgs<Bits, Index> args = all_rows;
        args.keys += row * args.count;
        args.queries += row * args.query_count;
        args.indices += row * args.query_count;
        const uint64_t tile_begin = (tile - row * row_tiles) * args.tile;
        const uint64_t left = args.query_count - tile_begin;
        const uint32_t tile_count = left < uint64_t(args.tile) ? uint32_t(left) : args.tile;
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
            sampled_row = ~uint64_t(0);  // the results took the samples' room
        } else if (!in_order && sampled) {
            if (sampled_row != row) {  // block-uniform, like in_order
                load_samples(args, s);
                sampled_row = row;
            }
            search_tile_sampled<kUpper>(args, s, tile_begin, tile_count);
        } else {
            search_tile<kUpper>(args, s, tile_begin, tile_count, lo, hi - lo);
        }
        __syncthreads();  // the next tile reuses the shared memory
    }
}

}  // namespace search_detail
}  // namespace gpuprim::cuda
