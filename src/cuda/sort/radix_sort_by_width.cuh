// SPDX-License-Identifier: Apache-2.0
// The radix sort of one key width: every value width, the tile shape the
// policy's size ladder picks (sort_policy.cuh). Instantiated by key width in
// two translation units (radix_sort.cu: 4- and 8-byte keys;
// radix_sort_narrow.cu: 1- and 2-byte keys), which build in parallel.
#pragma once

#include "core/dtype.h"
#include "cuda/sort/radix_sort.cuh"

namespace gpuprim::cuda {
namespace radix_detail {

template <typename K, int kValueBytes>
void sort_by_size(const DeviceEnv &env, const SortRequest &request, const SortTuning &tuning) {
    radix_size_ladder<K, kValueBytes>(
        tuning, request.count, packs_pairs(request), sorts_whole_key(request),
        [&](auto shape) { return fused_sort<K, kValueBytes, typename decltype(shape)::type>(env, request); },
        [&](auto shape, auto packed) {
            onesweep_sort<K, kValueBytes, typename decltype(shape)::type, decltype(packed)::value>(env, request,
                                                                                                   tuning);
        });
}

template <typename K>
void sort_by_values(const DeviceEnv &env, const SortRequest &request, const SortTuning &tuning) {
    if (request.value_bytes == 0) return sort_by_size<K, 0>(env, request, tuning);
    dispatch_width(request.value_bytes, "radix sort: unsupported value width", [&](auto value_bits) {
        sort_by_size<K, int(sizeof(value_bits))>(env, request, tuning);
    });
}

}  // namespace radix_detail
}  // namespace gpuprim::cuda
