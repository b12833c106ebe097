// SPDX-License-Identifier: Apache-2.0
// CUB radix sorts for the benchmark (bench_cub.h).
#include "bench_cub.h"

#include <cub/device/device_radix_sort.cuh>

namespace gpuprim_bench {
namespace {

template <typename K, typename N>
cudaError_t cub_sort_keys(void *t, size_t &tb, const void *kin, void *kout, const void *, void *,
                          uint64_t n, int begin_bit, int end_bit, cudaStream_t s) {
    return cub::DeviceRadixSort::SortKeys(t, tb, static_cast<const K *>(kin),
                                          static_cast<K *>(kout), N(n), begin_bit, end_bit, s);
}
template <typename K, typename V>
cudaError_t cub_sort_pairs(void *t, size_t &tb, const void *kin, void *kout, const void *vin,
                           void *vout, uint64_t n, int begin_bit, int end_bit, cudaStream_t s) {
    return cub::DeviceRadixSort::SortPairs(t, tb, static_cast<const K *>(kin),
                                           static_cast<K *>(kout), static_cast<const V *>(vin),
                                           static_cast<V *>(vout), uint32_t(n), begin_bit,
                                           end_bit, s);
}

}  // namespace

CubSortFn cub_sort_fn(bool pairs, uint32_t key_bytes, uint32_t value_bytes,
                      bool count_past_32_bits) {
    if (pairs) {
        if (count_past_32_bits) return nullptr;
        if (key_bytes == 8 && value_bytes == 8) return cub_sort_pairs<uint64_t, uint64_t>;
        if (key_bytes == 4 && value_bytes == 4) return cub_sort_pairs<uint32_t, uint32_t>;
        if (key_bytes == 2 && value_bytes == 4) return cub_sort_pairs<uint16_t, uint32_t>;
        return nullptr;
    }
    if (count_past_32_bits) return key_bytes == 4 ? cub_sort_keys<uint32_t, uint64_t> : nullptr;
    switch (key_bytes) {
    case 1: return cub_sort_keys<uint8_t, uint32_t>;
    case 2: return cub_sort_keys<uint16_t, uint32_t>;
    case 4: return cub_sort_keys<uint32_t, uint32_t>;
    case 8: return cub_sort_keys<uint64_t, uint32_t>;
    default: return nullptr;
    }
}

}  // namespace gpuprim_bench
