// SPDX-License-Identifier: Apache-2.0
// The adjacent difference on the CPU: pieces of kDifferencePiece elements
// (bounds by the count alone), each on any of the context's threads past
// kParallelDifferenceMin elements. Each element's result depends only on it
// and the one before it, so neither the thread count nor the pieces change
// a bit of the output.
//
// In place, the element before each piece is read before any piece runs
// (a piece overwrites its own last element, which the next piece needs),
// and a piece goes through its elements in blocks of kInPlaceBlock, each
// copied aside first and differenced from the copy, so the loop is the
// out-of-place one (vectorized) and reads nothing it has written.
#include "cpu/plain_calls.h"

#include "core/dtype.h"
#include "core/ops.h"

#include <algorithm>
#include <cstring>
#include <memory>

namespace gpuprim {
namespace cpu {
namespace {

constexpr uint64_t kDifferencePiece = uint64_t(1) << 16;
constexpr uint64_t kParallelDifferenceMin = uint64_t(1) << 17;
constexpr uint64_t kInPlaceBlock = 1024;  // elements copied aside at a time (at most 8 KiB of stack)

// Out of place: y[i] = x[i] - x[i - 1] for i in [begin, end) (y[0] = x[0]).
template <typename T>
void difference_apart(const T *__restrict x, T *__restrict y, uint64_t begin, uint64_t end) {
    const DifferenceOp<T> op;
    if (begin == 0) {
        y[0] = x[0];
        begin = 1;
    }
    for (uint64_t i = begin; i < end; ++i) y[i] = op(x[i], x[i - 1]);
}

// In place over [begin, end), the element before begin given (position 0
// keeps its element): block by block through a copy on the stack.
template <typename T>
void difference_in_place(T *x, uint64_t begin, uint64_t end, T before) {
    const DifferenceOp<T> op;
    T block[kInPlaceBlock];
    T previous = before;
    for (uint64_t start = begin; start < end; start += kInPlaceBlock) {
        const uint64_t length = std::min<uint64_t>(kInPlaceBlock, end - start);
        std::memcpy(block, x + start, length * sizeof(T));
        T *__restrict y = x + start;
        y[0] = start == 0 ? block[0] : op(block[0], previous);
        for (uint64_t j = 1; j < length; ++j) y[j] = op(block[j], block[j - 1]);
        previous = block[length - 1];
    }
}

template <typename T>
void difference_typed(Parallel &parallel, const T *input, T *output, uint64_t count) {
    const bool parallel_pieces = count >= kParallelDifferenceMin;
    const uint64_t piece = parallel_pieces ? kDifferencePiece : count;
    if (input != output) {
        if (!parallel_pieces) return difference_apart(input, output, 0, count);
        parallel.for_ranges(count, piece, [&](uint64_t begin, uint64_t end) {
            difference_apart(input, output, begin, end);
        });
        return;
    }
    T *x = output;
    if (!parallel_pieces) return difference_in_place(x, 0, count, T{});
    // The element before each piece, read before any piece writes (allocation
    // first: a failure leaves the output as it was).
    const uint64_t pieces = ceil_div(count, piece);
    std::unique_ptr<T[]> before(new T[pieces]);
    before[0] = T{};
    for (uint64_t p = 1; p < pieces; ++p) before[p] = x[p * piece - 1];
    parallel.for_ranges(count, piece, [&](uint64_t begin, uint64_t end) {
        difference_in_place(x, begin, end, before[begin / piece]);
    });
}

}  // namespace

void adjacent_difference(Parallel &parallel, gpuprim_dtype_t dtype, const void *input, void *output,
                         uint64_t count) {
    if (count == 0) return;
    dispatch_dtype(dtype, [&](auto zero) {
        using T = decltype(zero);
        difference_typed(parallel, static_cast<const T *>(input), static_cast<T *>(output), count);
    });
}

}  // namespace cpu
}  // namespace gpuprim
