// SPDX-License-Identifier: Apache-2.0
// The CUB entry points of the benchmark that compile in their own units
// (bench_cub_scan.cu, bench_cub_sort.cu): the CUB instantiations dominate
// compile time, so they build in parallel with gpuprim_bench.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace gpuprim_bench {

// CUB entry points that live in their own parts. A call with temp == nullptr
// only sets temp_bytes, as in CUB.
using CubScanFn = cudaError_t (*)(void *temp, size_t &temp_bytes, const void *in, void *out,
                                  uint64_t n, cudaStream_t stream);
using CubSortFn = cudaError_t (*)(void *temp, size_t &temp_bytes, const void *keys_in,
                                  void *keys_out, const void *values_in, void *values_out,
                                  uint64_t n, cudaStream_t stream);

// Sum scan of float/double (floating) or of the unsigned integer of `bytes`
// (integer sums wrap, so signed ones share it bit for bit). NumItems is 64-bit
// only for counts past 2^32, and only instantiated for 4-byte integers there;
// nullptr where nothing is instantiated.
CubScanFn cub_scan_fn(bool inclusive, bool floating, uint32_t bytes, bool count_past_32_bits);
// Ascending radix sort of unsigned keys of key_bytes, optionally with values
// of the same width; 64-bit counts only for 4-byte keys without values.
CubSortFn cub_sort_fn(bool pairs, uint32_t key_bytes, bool count_past_32_bits);

}  // namespace gpuprim_bench
