// SPDX-License-Identifier: Apache-2.0
// CUB radix sorts for the benchmark (bench_cub.h).
#include "bench_cub.h"

#include <cub/device/device_radix_sort.cuh>

namespace gpuprim_bench {
namespace {

template <typename K, typename N>
cudaError_t cub_sort_keys(void *t, size_t &tb, const void *kin, void *kout, const void *, void *,
                          uint64_t n, cudaStream_t s) {
    return cub::DeviceRadixSort::SortKeys(t, tb, static_cast<const K *>(kin),
                                          static_cast<K *>(kout), N(n), 0, int(sizeof(K) * 8), s);
}
template <typename K>
cudaError_t cub_sort_pairs(void *t, size_t &tb, const void *kin, void *kout, const void *vin,
                           void *vout, uint64_t n, cudaStream_t s) {
    return cub::DeviceRadixSort::SortPairs(t, tb, static_cast<const K *>(kin),
                                           static_cast<K *>(kout), static_cast<const K *>(vin),
                                           static_cast<K *>(vout), uint32_t(n), 0,
                                           int(sizeof(K) * 8), s);
}

}  // namespace

CubSortFn cub_sort_fn(bool pairs, uint32_t key_bytes, bool count_past_32_bits) {
    const bool wide = key_bytes == 8;
    if (pairs)
        return count_past_32_bits ? nullptr
                                  : (wide ? cub_sort_pairs<uint64_t> : cub_sort_pairs<uint32_t>);
    if (count_past_32_bits) return wide ? nullptr : cub_sort_keys<uint32_t, uint64_t>;
    return wide ? cub_sort_keys<uint64_t, uint32_t> : cub_sort_keys<uint32_t, uint32_t>;
}

}  // namespace gpuprim_bench
