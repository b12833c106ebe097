// Warp-level reduction by shuffles. The combination tree is fixed (lane i
// takes lane i + delta, lower lane on the left), so a float sum over a warp is
// the same every run.
#pragma once

#include "core/ops.h"

namespace gpuprim::cuda {

// Shuffles by bit pattern: one overload set for every 4- and 8-byte type.
template <typename T>
__device__ __forceinline__ T shuffle_down(T value, unsigned delta) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "shuffle_down takes 4- or 8-byte types");
    return bit_cast<T>(__shfl_down_sync(0xffffffffu, bit_cast<bits_t<T>>(value), delta));
}

// All 32 lanes must call it; lane 0 receives the reduction of the warp.
template <typename T, typename Op>
__device__ __forceinline__ T warp_reduce(T value, Op op) {
#pragma unroll
    for (unsigned delta = 16; delta > 0; delta >>= 1) value = op(value, shuffle_down(value, delta));
    return value;
}

}  // namespace gpuprim::cuda
