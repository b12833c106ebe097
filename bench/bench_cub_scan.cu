// SPDX-License-Identifier: Apache-2.0
// CUB scans for the benchmark (bench_cub.h).
#include "bench_cub.h"

#include <cub/device/device_scan.cuh>

namespace gpuprim_bench {
namespace {

template <typename T, typename N>
cudaError_t cub_inclusive(void *t, size_t &tb, const void *in, void *out, uint64_t n,
                          cudaStream_t s) {
    return cub::DeviceScan::InclusiveSum(t, tb, static_cast<const T *>(in), static_cast<T *>(out),
                                         N(n), s);
}
template <typename T, typename N>
cudaError_t cub_exclusive(void *t, size_t &tb, const void *in, void *out, uint64_t n,
                          cudaStream_t s) {
    return cub::DeviceScan::ExclusiveSum(t, tb, static_cast<const T *>(in), static_cast<T *>(out),
                                         N(n), s);
}

}  // namespace

CubScanFn cub_scan_fn(bool inclusive, bool floating, uint32_t bytes, bool count_past_32_bits) {
    const bool wide = bytes == 8;
    if (count_past_32_bits) {
        if (wide || floating) return nullptr;
        return inclusive ? cub_inclusive<uint32_t, uint64_t> : cub_exclusive<uint32_t, uint64_t>;
    }
    if (inclusive)
        return floating ? (wide ? cub_inclusive<double, uint32_t> : cub_inclusive<float, uint32_t>)
                        : (wide ? cub_inclusive<uint64_t, uint32_t>
                                : cub_inclusive<uint32_t, uint32_t>);
    return floating ? (wide ? cub_exclusive<double, uint32_t> : cub_exclusive<float, uint32_t>)
                    : (wide ? cub_exclusive<uint64_t, uint32_t> : cub_exclusive<uint32_t, uint32_t>);
}

}  // namespace gpuprim_bench
