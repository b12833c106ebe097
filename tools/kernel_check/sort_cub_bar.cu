// SPDX-License-Identifier: Apache-2.0
// CUB DeviceRadixSort timings on the driver's buffers: the bar to beat.
#include "sort_env.h"

#include <cub/device/device_radix_sort.cuh>

namespace {

template <typename K, typename V>
double time_typed(cudaStream_t stream, void *const keys_in[3], void *keys_out, void *const values_in[3],
                  void *values_out, uint64_t n, int reps) {
    size_t temp_bytes = 0;
    const int count = int(n);
    if constexpr (std::is_void_v<V>) {
        CK(cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, static_cast<const K *>(keys_in[0]),
                                          static_cast<K *>(keys_out), count, 0, int(sizeof(K) * 8), stream));
    } else {
        CK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, static_cast<const K *>(keys_in[0]),
                                           static_cast<K *>(keys_out), static_cast<const V *>(values_in[0]),
                                           static_cast<V *>(values_out), count, 0, int(sizeof(K) * 8),
                                           stream));
    }
    void *temp = nullptr;
    CK(cudaMalloc(&temp, std::max<size_t>(temp_bytes, 1)));
    auto run = [&](int copy) {
        size_t bytes = temp_bytes;
        if constexpr (std::is_void_v<V>) {
            CK(cub::DeviceRadixSort::SortKeys(temp, bytes, static_cast<const K *>(keys_in[copy]),
                                              static_cast<K *>(keys_out), count, 0, int(sizeof(K) * 8),
                                              stream));
        } else {
            CK(cub::DeviceRadixSort::SortPairs(temp, bytes, static_cast<const K *>(keys_in[copy]),
                                               static_cast<K *>(keys_out),
                                               static_cast<const V *>(values_in[copy]),
                                               static_cast<V *>(values_out), count, 0, int(sizeof(K) * 8),
                                               stream));
        }
    };
    double ms = 0;
    if (reps == 0) run(0);  // a single sort (profiling)
    else ms = median_ms(stream, reps, run);
    CK(cudaFree(temp));
    return ms;
}

template <typename K>
double by_values(cudaStream_t stream, int value_bytes, void *const keys_in[3], void *keys_out,
                 void *const values_in[3], void *values_out, uint64_t n, int reps) {
    if (value_bytes == 4) return time_typed<K, uint32_t>(stream, keys_in, keys_out, values_in, values_out, n, reps);
    if (value_bytes == 8) return time_typed<K, uint64_t>(stream, keys_in, keys_out, values_in, values_out, n, reps);
    return time_typed<K, void>(stream, keys_in, keys_out, values_in, values_out, n, reps);
}

}  // namespace

double cub_time(cudaStream_t stream, int dtype, int value_bytes, void *const keys_in[3], void *keys_out,
                void *const values_in[3], void *values_out, uint64_t n, int reps) {
    if (n > uint64_t(INT32_MAX)) return -1;
    switch (dtype) {
    case 0: return by_values<uint32_t>(stream, value_bytes, keys_in, keys_out, values_in, values_out, n, reps);
    case 1: return time_typed<int32_t, void>(stream, keys_in, keys_out, values_in, values_out, n, reps);
    case 2: return time_typed<float, void>(stream, keys_in, keys_out, values_in, values_out, n, reps);
    case 3: return by_values<uint64_t>(stream, value_bytes, keys_in, keys_out, values_in, values_out, n, reps);
    default: return -1;
    }
}
