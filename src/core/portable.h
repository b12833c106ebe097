// SPDX-License-Identifier: Apache-2.0
// Lets the same small helpers compile for host code (CPU backend, tests of
// the transforms) and device code (CUDA kernels).
#pragma once

#if defined(__CUDACC__)
#  define GPUPRIM_HD __host__ __device__ __forceinline__
#else
#  define GPUPRIM_HD inline
#endif
