// SPDX-License-Identifier: Apache-2.0
// searchsorted on the CPU: keys compared as the order-preserving unsigned
// bits of core/key_transform.h (the sort's order, descending included), so
// one instantiation per key width serves every dtype of that width.
//
// The queries go in pieces of kSearchPiece (boundaries by the count only);
// each piece first checks whether its queries are in order. If they are, the
// bound of each query is at or after the previous one's: a gallop from there
// (steps 1, 2, 4, ... then a binary search inside the last step) costs
// O(log distance), so sorted queries cost about one walk over the keys they
// span. Otherwise each query is a binary search over all keys. Either way the
// answer is the one bound the rule defines: the same for any thread count.
#include "cpu/plain_calls.h"

#include "core/dtype.h"
#include "core/error.h"
#include "core/key_transform.h"

#include <cstdint>

namespace gpuprim {
namespace cpu {
namespace {

constexpr uint64_t kSearchPiece = 4096;

template <typename Bits, bool kUpper>
struct Keys {
    const Bits *keys;
    uint64_t count;
    KeyKind kind;
    bool descending;

    Bits key(uint64_t i) const { return to_radix_key(keys[i], kind, descending); }
    // Key k comes before query q (lower bound: strictly; upper: or equal).
    static bool before(Bits k, Bits q) { return kUpper ? k <= q : k < q; }
    // The first position in [lo, hi) whose key is not before q (hi if none).
    uint64_t bound(Bits q, uint64_t lo, uint64_t hi) const {
        while (lo < hi) {
            const uint64_t mid = lo + (hi - lo) / 2;
            if (before(key(mid), q)) lo = mid + 1;
            else hi = mid;
        }
        return lo;
    }
    // The bound of q, known to be at least from.
    uint64_t gallop(Bits q, uint64_t from) const {
        uint64_t lo = from, step = 1;
        for (;;) {
            if (step > count - lo) return bound(q, lo, count);
            const uint64_t probe = lo + step - 1;
            if (!before(key(probe), q)) return bound(q, lo, probe);
            lo = probe + 1;
            step *= 2;
        }
    }
};

template <typename Bits, typename Index, bool kUpper>
void search_piece(const Keys<Bits, kUpper> &keys, const Bits *queries, Index *indices, uint64_t begin, uint64_t end) {
    const KeyKind kind = keys.kind;
    const bool descending = keys.descending;
    bool in_order = true;
    for (uint64_t j = begin + 1; j < end && in_order; ++j)
        in_order = to_radix_key(queries[j - 1], kind, descending) <= to_radix_key(queries[j], kind, descending);
    if (in_order) {
        uint64_t at = 0;
        for (uint64_t j = begin; j < end; ++j) {
            at = keys.gallop(to_radix_key(queries[j], kind, descending), at);
            indices[j] = static_cast<Index>(at);
        }
        return;
    }
    for (uint64_t j = begin; j < end; ++j)
        indices[j] = static_cast<Index>(keys.bound(to_radix_key(queries[j], kind, descending), 0, keys.count));
}

// Rows: each row's queries in pieces of their own (a piece never spans two
// rows), all rows' pieces on the threads together.
template <typename Bits, typename Index, bool kUpper>
void search_all(Parallel &parallel, const SearchRequest &request) {
    const uint64_t n = request.count, m = request.query_count;
    const uint64_t pieces = ceil_div(m, kSearchPiece);
    parallel.for_each(static_cast<size_t>(request.rows * pieces), [&](size_t p) {
        const uint64_t row = p / pieces, begin = p % pieces * kSearchPiece;
        const uint64_t end = m - begin < kSearchPiece ? m : begin + kSearchPiece;
        const Keys<Bits, kUpper> keys{static_cast<const Bits *>(request.sorted) + row * n, n, request.key_kind,
                                      request.descending};
        search_piece<Bits, Index, kUpper>(keys, static_cast<const Bits *>(request.queries) + row * m,
                                          static_cast<Index *>(request.indices) + row * m, begin, end);
    });
}

template <typename Bits, typename Index>
void search_side(Parallel &parallel, const SearchRequest &request) {
    if (request.upper) search_all<Bits, Index, true>(parallel, request);
    else search_all<Bits, Index, false>(parallel, request);
}

}  // namespace

// For each query of request, its lower or upper bound among the sorted keys
// (core/backend.h SearchRequest).
void searchsorted(Parallel &parallel, const SearchRequest &request) {
    if (request.index_bytes != 4 && request.index_bytes != 8)
        fail(GPUPRIM_ERROR_INTERNAL, "searchsorted: %u-byte indices", request.index_bytes);
    dispatch_width(request.key_bytes, "searchsorted: key width", [&](auto tag) {
        using Bits = decltype(tag);
        if (request.index_bytes == 4) search_side<Bits, uint32_t>(parallel, request);
        else search_side<Bits, uint64_t>(parallel, request);
    });
}

}  // namespace cpu
}  // namespace gpuprim
