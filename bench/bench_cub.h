// SPDX-License-Identifier: Apache-2.0
// The CUB entry points of the benchmark that compile in their own units
// (bench_cub_scan.cu, bench_cub_sort.cu): the CUB instantiations dominate
// compile time, so they build in parallel with gpuprim_bench.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace gpuprim_bench {

// The element types CUB is instantiated for (integers by their unsigned
// type of the same width: wrapping sums and unsigned radix sorts give the
// same bits for signed ones).
enum class CubType { U8, U16, U32, U64, F16, BF16, F32, F64 };

// CUB entry points that live in their own parts. A call with temp == nullptr
// only sets temp_bytes, as in CUB.
using CubScanFn = cudaError_t (*)(void *temp, size_t &temp_bytes, const void *in, void *out,
                                  uint64_t n, cudaStream_t stream);
// Sorts by bits [begin_bit, end_bit) of the (unsigned) keys, as CUB does.
using CubSortFn = cudaError_t (*)(void *temp, size_t &temp_bytes, const void *keys_in,
                                  void *keys_out, const void *values_in, void *values_out,
                                  uint64_t n, int begin_bit, int end_bit, cudaStream_t stream);

// Sum scan of `type`. Instantiated: inclusive and exclusive of U32, U64,
// F32, F64; inclusive of U8, F16, BF16 (CUB adds F16/BF16 in their own
// type). NumItems is 64-bit only for counts past 2^32, and only instantiated
// for U32 there; nullptr where nothing is instantiated.
CubScanFn cub_scan_fn(bool inclusive, CubType type, bool count_past_32_bits);
// Ascending radix sort of unsigned keys of key_bytes (1, 2, 4, 8), optionally
// with values of value_bytes: as wide as the keys for 4- and 8-byte keys,
// u32 values with 2-byte keys (no pairs of 1-byte keys); 64-bit counts only
// for 4-byte keys without values. nullptr where nothing is instantiated.
CubSortFn cub_sort_fn(bool pairs, uint32_t key_bytes, uint32_t value_bytes,
                      bool count_past_32_bits);

}  // namespace gpuprim_bench
