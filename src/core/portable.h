// SPDX-License-Identifier: Apache-2.0
// Lets the same small helpers compile for host code (CPU backend, tests of
// the transforms) and device code (CUDA kernels).
#pragma once

#if defined(__CUDACC__)
#  define GPUPRIM_HD __host__ __device__ __forceinline__
#else
#  define GPUPRIM_HD inline
#endif

// A body written once and forced into each caller, so that it compiles for
// each caller's target (the CPU backend's plain and AVX2 entries).
#if defined(__GNUC__)
#  define GPUPRIM_ALWAYS_INLINE __attribute__((always_inline)) inline
#else
#  define GPUPRIM_ALWAYS_INLINE inline
#endif

#include <cstdint>

// a / b rounded up, for any a (the usual (a + b - 1) / b wraps when a is
// within b of 2^64). b > 0.
namespace gpuprim {
GPUPRIM_HD constexpr uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }
}  // namespace gpuprim
