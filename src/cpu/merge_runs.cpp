// SPDX-License-Identifier: Apache-2.0
// The CPU stable merge of sorted runs (cpu/merge_runs.h). Each round merges
// runs 0+1, 2+3, ... (an odd last run is copied) into the other buffer; the
// rounds are counted first so that the last one writes the output. A pair's
// merge is cut into pieces of kGrain outputs by merge-path splits (binary
// search on the diagonal, ties to the first run), so the pieces of every pair
// of a round run in parallel and the result does not depend on the threads.
// Keys compare by their sort bits (core/key_transform.h); keys and values are
// carried as bits of their byte width.
#include "cpu/merge_runs.h"

#include "core/checked_size.h"
#include "core/error.h"
#include "core/key_transform.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace gpuprim {
namespace cpu {
namespace {

constexpr uint64_t kGrain = 1 << 16;  // outputs per piece of a pair's merge

// The elements of one round's merge: runs a = [a_begin, b_begin) and
// b = [b_begin, b_end) of the source, merged to [a_begin, b_end) of the
// destination (b empty: a copy).
struct Pair {
    uint64_t a_begin, b_begin, b_end;
};

template <typename KeyBits, typename ValueBits>
class Merger {
public:
    Merger(const SortRequest &request)
        : kind_(request.key_kind), descending_(request.descending), begin_bit_(request.begin_bit),
          end_bit_(sort_end_bit(request)) {}

    uint64_t bits(KeyBits key) const {
        return sort_bits(to_radix_key<KeyBits>(key, kind_, descending_), begin_bit_, end_bit_);
    }

    // How many of the first d outputs of the stable merge of a[0, na) and
    // b[0, nb) come from a (ties: a first).
    uint64_t split(const KeyBits *a, uint64_t na, const KeyBits *b, uint64_t nb, uint64_t d) const {
        uint64_t low = d > nb ? d - nb : 0, high = std::min(d, na);
        while (low < high) {
            const uint64_t middle = low + (high - low) / 2;
            if (bits(a[middle]) <= bits(b[d - 1 - middle])) low = middle + 1;
            else high = middle;
        }
        return low;
    }

    // Outputs [d_begin, d_end) of the pair's merge from keys (values) to
    // keys_to (values_to).
    void merge_piece(const Pair &pair, uint64_t d_begin, uint64_t d_end, const KeyBits *keys,
                     const ValueBits *values, KeyBits *keys_to, ValueBits *values_to) const {
        merge_range(keys + pair.a_begin, values ? values + pair.a_begin : nullptr, pair.b_begin - pair.a_begin,
                    keys + pair.b_begin, values ? values + pair.b_begin : nullptr, pair.b_end - pair.b_begin,
                    d_begin, d_end, keys_to + pair.a_begin, values_to ? values_to + pair.a_begin : nullptr);
    }

    // Outputs [d_begin, d_end) of the stable merge of a[0, na) and b[0, nb)
    // (values va, vb: nullptr for none) to ko (vo). On runs that are not
    // sorted the split is some point of the diagonal: i + j stays d, so no
    // read passes either run.
    void merge_range(const KeyBits *a, const ValueBits *va, uint64_t na, const KeyBits *b, const ValueBits *vb,
                     uint64_t nb, uint64_t d_begin, uint64_t d_end, KeyBits *ko, ValueBits *vo) const {
        uint64_t i = split(a, na, b, nb, d_begin);
        uint64_t j = d_begin - i;
        for (uint64_t d = d_begin; d < d_end; ++d) {
            const bool take_b = i == na || (j < nb && bits(b[j]) < bits(a[i]));
            if (take_b) {
                ko[d] = b[j];
                if (vo) vo[d] = vb[j];
                ++j;
            } else {
                ko[d] = a[i];
                if (vo) vo[d] = va[i];
                ++i;
            }
        }
    }

private:
    KeyKind kind_;
    bool descending_;
    uint32_t begin_bit_, end_bit_;
};

// One piece of a pair's merge: outputs [d_begin, d_end) of pairs[pair].
struct Piece {
    size_t pair;
    uint64_t d_begin, d_end;
};

// The merge's bookkeeping, in the workspace (a distributed sort merges after
// the ranks agreed, when no rank may fail for memory): the run bounds of
// this round and the next, the pairs and their pieces.
struct MergeBookkeeping {
    uint64_t *starts, *next;
    Pair *pairs;
    Piece *pieces;
};

uint64_t most_pieces(uint64_t n, uint32_t runs) {
    // Each pair's pieces: ceil(its length / kGrain); the lengths sum to n.
    return checked_add(n / kGrain, uint64_t(runs) + 1, "the merge's pieces");
}

uint64_t bookkeeping_bytes(uint64_t n, uint32_t runs) {
    const char *what = "the merge's bookkeeping";
    return CheckedSize(uint64_t(runs) + 1, what)
        .times(2 * sizeof(uint64_t))
        .plus(CheckedSize(uint64_t(runs) + 1, what).times(sizeof(Pair)).value())
        .plus(CheckedSize(most_pieces(n, runs), what).times(sizeof(Piece)).value())
        .value();
}

MergeBookkeeping bookkeeping_in(void *memory, uint32_t runs) {
    static_assert(alignof(Pair) <= 8 && alignof(Piece) <= 8, "8-byte aligned parts");
    MergeBookkeeping book;
    book.starts = static_cast<uint64_t *>(memory);
    book.next = book.starts + (runs + 1);
    book.pairs = reinterpret_cast<Pair *>(book.next + (runs + 1));
    book.pieces = reinterpret_cast<Piece *>(book.pairs + (runs + 1));
    return book;
}

template <typename KeyBits, typename ValueBits>
void merge_by_width(Parallel &parallel, const SortRequest &request, const uint64_t *run_starts, uint32_t runs,
                    void *spare_keys, void *spare_values, MergeBookkeeping book) {
    constexpr bool kValues = !std::is_same_v<ValueBits, void>;
    using V = std::conditional_t<kValues, ValueBits, unsigned char>;
    const uint64_t n = request.count;
    const auto *keys_in = static_cast<const KeyBits *>(request.keys_in);
    const V *values_in = kValues ? static_cast<const V *>(request.values_in) : nullptr;
    auto *keys_out = static_cast<KeyBits *>(request.keys_out);
    V *values_out = kValues ? static_cast<V *>(request.values_out) : nullptr;
    auto *keys_spare = static_cast<KeyBits *>(spare_keys);
    V *values_spare = kValues ? static_cast<V *>(spare_values) : nullptr;

    if (runs <= 1) {
        if (n) {
            std::memcpy(keys_out, keys_in, n * sizeof(KeyBits));
            if (kValues) std::memcpy(values_out, values_in, n * sizeof(V));
        }
        return;
    }
    uint32_t rounds = 0;
    for (uint64_t left = runs; left > 1; left = (left + 1) / 2) ++rounds;

    const Merger<KeyBits, V> merger(request);
    uint64_t *starts = book.starts, *next = book.next;
    std::memcpy(starts, run_starts, (size_t(runs) + 1) * sizeof *starts);
    size_t bounds = size_t(runs) + 1;  // entries of starts
    const KeyBits *keys_from = keys_in;
    const V *values_from = values_in;
    for (uint32_t round = 0; round < rounds; ++round) {
        // The last round writes the output; the ones before alternate.
        const bool to_out = (rounds - 1 - round) % 2 == 0;
        KeyBits *keys_to = to_out ? keys_out : keys_spare;
        V *values_to = to_out ? values_out : values_spare;
        size_t pairs = 0, pieces = 0, next_bounds = 0;
        for (size_t r = 0; r + 1 < bounds; r += 2) {
            const bool alone = r + 2 >= bounds;
            const Pair pair{starts[r], starts[r + 1], alone ? starts[r + 1] : starts[r + 2]};
            next[next_bounds++] = pair.a_begin;
            const uint64_t length = pair.b_end - pair.a_begin;
            for (uint64_t d = 0; d < length; d += kGrain)
                book.pieces[pieces++] = {pairs, d, std::min(length, d + kGrain)};
            book.pairs[pairs++] = pair;
        }
        next[next_bounds++] = starts[bounds - 1];
        const Pair *pair_list = book.pairs;
        const Piece *piece_list = book.pieces;
        parallel.for_each(pieces, [&](size_t p) {
            const Piece &piece = piece_list[p];
            merger.merge_piece(pair_list[piece.pair], piece.d_begin, piece.d_end, keys_from,
                               kValues ? values_from : nullptr, keys_to, kValues ? values_to : nullptr);
        });
        std::swap(starts, next);
        bounds = next_bounds;
        keys_from = keys_to;
        values_from = values_to;
    }
}

template <typename KeyBits>
void merge_by_value_width(Parallel &parallel, const SortRequest &request, const uint64_t *run_starts, uint32_t runs,
                          void *spare_keys, void *spare_values, MergeBookkeeping book) {
    auto merge = [&](auto value) {
        using ValueBits = std::conditional_t<std::is_same_v<decltype(value), bool>, void, decltype(value)>;
        merge_by_width<KeyBits, ValueBits>(parallel, request, run_starts, runs, spare_keys, spare_values, book);
    };
    switch (request.value_bytes) {
    case 0: return merge(false);
    case 1: return merge(uint8_t());
    case 2: return merge(uint16_t());
    case 4: return merge(uint32_t());
    case 8: return merge(uint64_t());
    }
    fail(GPUPRIM_ERROR_INTERNAL, "merge_sorted_runs: %u-byte values", request.value_bytes);
}

template <typename KeyBits, typename ValueBits>
void merge_two_by_width(Parallel &parallel, const MergeRequest &request) {
    constexpr bool kValues = !std::is_same_v<ValueBits, void>;
    using V = std::conditional_t<kValues, ValueBits, unsigned char>;
    SortRequest order{};
    order.key_kind = request.key_kind;
    order.key_bytes = request.key_bytes;
    order.descending = request.descending;
    const Merger<KeyBits, V> merger(order);
    const uint64_t total = request.count_a + request.count_b;
    const auto *a = static_cast<const KeyBits *>(request.keys_a), *b = static_cast<const KeyBits *>(request.keys_b);
    const V *va = kValues ? static_cast<const V *>(request.values_a) : nullptr;
    const V *vb = kValues ? static_cast<const V *>(request.values_b) : nullptr;
    auto *ko = static_cast<KeyBits *>(request.keys_out);
    V *vo = kValues ? static_cast<V *>(request.values_out) : nullptr;
    parallel.for_ranges(total, kGrain, [&](uint64_t d_begin, uint64_t d_end) {
        merger.merge_range(a, va, request.count_a, b, vb, request.count_b, d_begin, d_end, ko, vo);
    });
}

template <typename KeyBits>
void merge_two_by_value_width(Parallel &parallel, const MergeRequest &request) {
    switch (request.value_bytes) {
    case 0: return merge_two_by_width<KeyBits, void>(parallel, request);
    case 1: return merge_two_by_width<KeyBits, uint8_t>(parallel, request);
    case 2: return merge_two_by_width<KeyBits, uint16_t>(parallel, request);
    case 4: return merge_two_by_width<KeyBits, uint32_t>(parallel, request);
    case 8: return merge_two_by_width<KeyBits, uint64_t>(parallel, request);
    }
    fail(GPUPRIM_ERROR_INTERNAL, "merge: %u-byte values", request.value_bytes);
}

}  // namespace

void merge_two(Parallel &parallel, const MergeRequest &request) {
    switch (request.key_bytes) {
    case 1: return merge_two_by_value_width<uint8_t>(parallel, request);
    case 2: return merge_two_by_value_width<uint16_t>(parallel, request);
    case 4: return merge_two_by_value_width<uint32_t>(parallel, request);
    case 8: return merge_two_by_value_width<uint64_t>(parallel, request);
    }
    fail(GPUPRIM_ERROR_INTERNAL, "merge: %u-byte keys", request.key_bytes);
}

uint64_t merge_sorted_runs_bytes(const SortRequest &request, uint32_t runs) {
    return runs <= 1 ? 0 : bookkeeping_bytes(request.count, runs);
}

void merge_sorted_runs(Parallel &parallel, Workspace &workspace, const SortRequest &request,
                       const uint64_t *run_starts, uint32_t runs, void *spare_keys, void *spare_values) {
    if (!merge_runs_are_valid(request, run_starts, runs)) return;
    MergeBookkeeping book{};
    if (runs > 1) book = bookkeeping_in(workspace.reserve(merge_sorted_runs_bytes(request, runs)), runs);
    auto merge = [&](auto key) {
        merge_by_value_width<decltype(key)>(parallel, request, run_starts, runs, spare_keys, spare_values, book);
    };
    switch (request.key_bytes) {
    case 1: return merge(uint8_t());
    case 2: return merge(uint16_t());
    case 4: return merge(uint32_t());
    case 8: return merge(uint64_t());
    }
    fail(GPUPRIM_ERROR_INTERNAL, "merge_sorted_runs: %u-byte keys", request.key_bytes);
}

}  // namespace cpu
}  // namespace gpuprim
