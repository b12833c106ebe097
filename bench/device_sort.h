// SPDX-License-Identifier: Apache-2.0
// Sorted benchmark inputs made on the device (search_bench.cu,
// merge_bench.cu), apart from bench_util.h so that the benchmarks that do
// not need it do not parse CUB's radix sort.
#pragma once

#include "bench_util.h"

#include <cub/device/device_radix_sort.cuh>

#include <cstdint>

namespace gpuprim_bench {

// n keys of T at device pointer data sorted ascending on the device (CUB's
// radix sort; floats: -0.0 before +0.0, in order for operator< too): std::sort
// of 2^26-2^27 keys on the host took most of a benchmark's minutes.
template <typename T>
void sort_on_device(void *data, uint64_t n, cudaStream_t stream) {
    // data was just uploaded with cudaMemcpy from pageable memory, which may
    // return before its DMA ends; stream does not wait for the legacy stream.
    CHECK_CUDA(cudaDeviceSynchronize());
    Device sorted(n * sizeof(T));
    size_t temp_bytes = 0;
    CHECK_CUDA(cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, static_cast<const T *>(data),
                                              static_cast<T *>(sorted.p), int64_t(n), 0, int(sizeof(T) * 8), stream));
    Device temp(temp_bytes);
    CHECK_CUDA(cub::DeviceRadixSort::SortKeys(temp.p, temp_bytes, static_cast<const T *>(data),
                                              static_cast<T *>(sorted.p), int64_t(n), 0, int(sizeof(T) * 8), stream));
    CHECK_CUDA(cudaMemcpyAsync(data, sorted.p, n * sizeof(T), cudaMemcpyDeviceToDevice, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));
}

}  // namespace gpuprim_bench
