// SPDX-License-Identifier: Apache-2.0
// Device-wide searchsorted (agent_search.cuh has the kernel and says how a
// tile runs): one launch, a grid of at most one wave of blocks looping over
// tiles of queries; no workspace, no atomics. With no keys every bound is 0:
// the indices are cleared instead.
#include "cuda/search/search.h"

#include "core/checked_size.h"
#include "core/dtype.h"
#include "core/error.h"
#include "cuda/search/agent_search.cuh"
#include "cuda/search/search_policy.cuh"

#include <algorithm>
#include <cstdint>

namespace gpuprim::cuda {
namespace search_detail {

template <typename Bits, typename Index, bool kUpper>
void launch(const DeviceEnv &env, const SearchTuning &tuning, const SearchRequest &request) {
    const auto kernel = search_tiles_kernel<Bits, Index, kUpper>;
    const char *what = "searchsorted launch";
    SearchArgs<Bits, Index> args{static_cast<const Bits *>(request.sorted),
                                 request.count,
                                 static_cast<const Bits *>(request.queries),
                                 request.query_count,
                                 static_cast<Index *>(request.indices),
                                 request.key_kind,
                                 request.descending,
                                 request.rows,
                                 uint32_t(SearchShape<Bits>::kTile)};
    const uint64_t queries = checked_mul(request.query_count, request.rows, "searchsorted queries");
    int blocks_per_sm = tuning.blocks_per_sm;
    if (queries > uint64_t(env.sm_count) * kSearchBlockThreads)  // the residency query only where it matters
        blocks_per_sm = std::min(blocks_per_sm, resident_blocks(env, reinterpret_cast<const void *>(kernel),
                                                                kSearchBlockThreads, 0, what));
    const uint64_t most = uint64_t(std::max(env.sm_count, 1)) * uint64_t(std::max(blocks_per_sm, 1));
    // Fewer queries than a wave of whole tiles: smaller tiles (whole blocks
    // of threads), so that every SM searches (2^16 queries: 256 tiles of 256,
    // not 32 of 2048).
    if (queries < most * args.tile) {
        const uint64_t per_block = ceil_div(ceil_div(queries, most), uint64_t(kSearchBlockThreads));
        args.tile = uint32_t(std::max<uint64_t>(per_block, 1) * kSearchBlockThreads);
    }
    const uint64_t tiles = checked_mul(ceil_div(request.query_count, uint64_t(args.tile)), request.rows,
                                       "searchsorted tiles");
    const auto grid = static_cast<uint32_t>(std::min(tiles, most));
    kernel<<<grid, kSearchBlockThreads, 0, env.stream>>>(args);
    check_launch(what);
}

template <typename Bits, typename Index>
void launch_side(const DeviceEnv &env, const SearchTuning &tuning, const SearchRequest &request) {
    if (request.upper) launch<Bits, Index, true>(env, tuning, request);
    else launch<Bits, Index, false>(env, tuning, request);
}

inline void searchsorted_with(const DeviceEnv &env, const SearchTuning &tuning, const SearchRequest &request) {
    if (request.query_count == 0 || request.rows == 0) return;
    if (request.index_bytes != 4 && request.index_bytes != 8)
        fail(GPUPRIM_ERROR_INTERNAL, "searchsorted: %u-byte indices", request.index_bytes);
    // No workspace: a query has nothing to record.
    if (env.measuring) return;
    if (request.count == 0) {
        const uint64_t bytes = checked_mul(checked_mul(request.query_count, request.rows, "searchsorted indices"),
                                           request.index_bytes, "searchsorted indices");
        check(cudaMemsetAsync(request.indices, 0, bytes, env.stream), "searchsorted (cudaMemsetAsync of no keys)");
        return;
    }
    dispatch_width(request.key_bytes, "searchsorted: key width", [&](auto tag) {
        using Bits = decltype(tag);
        if (request.index_bytes == 4) launch_side<Bits, uint32_t>(env, tuning, request);
        else launch_side<Bits, uint64_t>(env, tuning, request);
    });
}

}  // namespace search_detail

void searchsorted(const DeviceEnv &env, const SearchRequest &request) {
    search_detail::searchsorted_with(env, search_tuning(env.code_arch), request);
}

}  // namespace gpuprim::cuda
