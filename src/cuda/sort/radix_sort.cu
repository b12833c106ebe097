// SPDX-License-Identifier: Apache-2.0
// Instantiates the Onesweep radix sort (radix_sort.cuh) by key and value
// width, with the tile shape the policy's size ladder picks (sort_policy.cuh).
#include "core/dtype.h"
#include "cuda/sort/radix_sort.cuh"

namespace gpuprim::cuda {
namespace {

// The tile shape for the size class comes from the policy's ladder
// (sort_policy.cuh); this file only launches what it picks.
template <typename K, int kValueBytes>
void sort_by_size(const DeviceEnv &env, const SortRequest &request, const SortTuning &tuning) {
    radix_size_ladder<K, kValueBytes>(
        tuning, request.count, radix_detail::placed_alike(request),
        sorts_whole_key(request),
        [&](auto shape) { return radix_detail::fused_sort<K, kValueBytes, typename decltype(shape)::type>(env, request); },
        [&](auto shape, auto packed) {
            radix_detail::onesweep_sort<K, kValueBytes, typename decltype(shape)::type, decltype(packed)::value>(
                env, request, tuning);
        });
}

template <typename K>
void sort_by_values(const DeviceEnv &env, const SortRequest &request, const SortTuning &tuning) {
    if (request.value_bytes == 0) return sort_by_size<K, 0>(env, request, tuning);
    dispatch_width(request.value_bytes, "radix sort: unsupported value width", [&](auto value_bits) {
        sort_by_size<K, int(sizeof(value_bits))>(env, request, tuning);
    });
}

}  // namespace

void radix_sort(const DeviceEnv &env, const SortRequest &request, const SortTuning &tuning) {
    dispatch_width(request.key_bytes, "radix sort: unsupported key width",
                   [&](auto key_bits) { sort_by_values<decltype(key_bits)>(env, request, tuning); });
}

}  // namespace gpuprim::cuda
