// SPDX-License-Identifier: Apache-2.0
// argmin / argmax on the CPU: every element becomes its ArgKey (core/ops.h),
// whose least value's first position is the answer.
//
// Fixed chunking (the answer does not depend on it, but the work does not
// depend on the thread count either): the input is cut into pieces by its
// count alone, as the exact reduces cut theirs (reduce_scan.h: at most
// kExactPieces pieces of at least kExactMinPiece elements; one piece below
// kParallelReduceMin elements). Two steps:
// 1. each piece's least key, in the vectorized fold of the exact reduces
//    (fold_dispatch: AVX2 where the CPU has it), on the context's threads
//    when the input is past kParallelReduceMin (else on the calling thread);
// 2. the least of those keys, and the first piece that holds it; that one
//    piece is searched for the key's first position, kSearchBlock elements at
//    a time (each block's least key by the same vectorized fold; only the
//    first block whose least key is the key is searched element by element).
// So the input is read once, and one piece (at most 1/kExactPieces of it,
// or all of a small input, which is in cache) a second time.
#include "cpu/argreduce.h"

#include "core/dtype.h"
#include "core/error.h"
#include "core/ops.h"
#include "cpu/reduce_scan.h"

#include <algorithm>

namespace gpuprim {
namespace cpu {
namespace {

constexpr uint64_t kSearchBlock = 256;

template <typename T, bool kMin>
bits_t<T> least_key(const T *x, uint64_t n) {
    using Key = bits_t<T>;
    return fold_dispatch(n, MinOp<Key>::identity(), MinOp<Key>{},
                         [x](uint64_t i) { return ArgKey<T, kMin>::key(x[i]); });
}

// The first i in [0, n) with key(x[i]) == key; one exists. Blocks of
// kSearchBlock elements are tested through least_key (the same vectorized
// fold: a block holds the key when its least key is the key, which is the
// least of all), and only the block that holds it element by element.
template <typename T, bool kMin>
uint64_t first_with_key(const T *x, uint64_t n, bits_t<T> key) {
    for (uint64_t begin = 0; begin < n; begin += kSearchBlock) {
        const uint64_t end = std::min(n, begin + kSearchBlock);
        if (least_key<T, kMin>(x + begin, end - begin) != key) continue;
        for (uint64_t i = begin; i < end; ++i)
            if (ArgKey<T, kMin>::key(x[i]) == key) return i;
    }
    fail(GPUPRIM_ERROR_INTERNAL, "argreduce: the least key is in no element of its piece");
}

template <typename T, bool kMin>
uint64_t argreduce_typed(Parallel &parallel, const T *input, uint64_t count) {
    using Key = bits_t<T>;
    const uint64_t pieces = count < kParallelReduceMin ? 1 : std::min(kExactPieces, ceil_div(count, kExactMinPiece));
    const uint64_t size = ceil_div(count, pieces);
    auto piece_begin = [&](uint64_t p) { return std::min(count, p * size); };
    auto piece_length = [&](uint64_t p) { return std::min(size, count - piece_begin(p)); };
    Key least[kExactPieces];
    auto fold_piece = [&](size_t p) { least[p] = least_key<T, kMin>(input + piece_begin(p), piece_length(p)); };
    if (pieces > 1 && parallel.threads() > 1) {
        parallel.for_each(static_cast<size_t>(pieces), fold_piece);
    } else {
        for (size_t p = 0; p < pieces; ++p) fold_piece(p);
    }
    uint64_t chosen = 0;
    for (uint64_t p = 1; p < pieces; ++p)
        if (piece_length(p) != 0 && least[p] < least[chosen]) chosen = p;  // strict: the first piece wins ties
    const uint64_t begin = piece_begin(chosen);
    return begin + first_with_key<T, kMin>(input + begin, piece_length(chosen), least[chosen]);
}

}  // namespace

uint64_t argreduce(Parallel &parallel, gpuprim_op_t op, gpuprim_dtype_t dtype, const void *input, uint64_t count) {
    if (count == 0) fail(GPUPRIM_ERROR_INTERNAL, "argreduce: no elements (the API refuses an empty input)");
    return dispatch_dtype(dtype, [&](auto zero) -> uint64_t {
        using T = decltype(zero);
        const T *x = static_cast<const T *>(input);
        switch (op) {
        case GPUPRIM_OP_MIN: return argreduce_typed<T, true>(parallel, x, count);
        case GPUPRIM_OP_MAX: return argreduce_typed<T, false>(parallel, x, count);
        default: break;
        }
        fail(GPUPRIM_ERROR_INTERNAL, "argreduce: op %d is neither MIN nor MAX", static_cast<int>(op));
    });
}

}  // namespace cpu
}  // namespace gpuprim
