// SPDX-License-Identifier: Apache-2.0
// CUB scans for the benchmark (bench_cub.h).
#include "bench_cub.h"

#include <cub/device/device_scan.cuh>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

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

CubScanFn cub_scan_fn(bool inclusive, CubType type, bool count_past_32_bits) {
    if (count_past_32_bits) {
        if (type != CubType::U32) return nullptr;
        return inclusive ? cub_inclusive<uint32_t, uint64_t> : cub_exclusive<uint32_t, uint64_t>;
    }
    if (inclusive) {
        switch (type) {
        case CubType::U8: return cub_inclusive<uint8_t, uint32_t>;
        case CubType::U32: return cub_inclusive<uint32_t, uint32_t>;
        case CubType::U64: return cub_inclusive<uint64_t, uint32_t>;
        case CubType::F16: return cub_inclusive<__half, uint32_t>;
        case CubType::BF16: return cub_inclusive<__nv_bfloat16, uint32_t>;
        case CubType::F32: return cub_inclusive<float, uint32_t>;
        case CubType::F64: return cub_inclusive<double, uint32_t>;
        default: return nullptr;
        }
    }
    switch (type) {
    case CubType::U32: return cub_exclusive<uint32_t, uint32_t>;
    case CubType::U64: return cub_exclusive<uint64_t, uint32_t>;
    case CubType::F32: return cub_exclusive<float, uint32_t>;
    case CubType::F64: return cub_exclusive<double, uint32_t>;
    default: return nullptr;
    }
}

}  // namespace gpuprim_bench
