// SPDX-License-Identifier: Apache-2.0
// Instantiates the Onesweep radix sort (radix_sort.cuh) by key and value
// width, with the tile shape for the size class (sort_tuning.cuh).
#include "core/dtype.h"
#include "cuda/sort/radix_sort.cuh"

namespace gpuprim::cuda {
namespace {

// Size classes: the fused launch, the medium tile, then per key and value
// width the tiles measured best for each range (sort_tuning.cuh).
template <typename K, int kValueBytes>
void sort_by_size(const DeviceEnv &env, const SortRequest &request, const SortTuning &tuning) {
    using Fused = typename OnesweepFusedShape<sizeof(K), kValueBytes>::type;
    if (tuning.fused && request.count <= uint64_t(kFusedMaxTiles) * Fused::kTile &&
        radix_detail::fused_sort<K, kValueBytes, Fused>(env, request))
        return;
    if (request.count <= tuning.medium_max)
        radix_detail::onesweep_sort<K, kValueBytes, typename OnesweepMediumShape<sizeof(K), kValueBytes>::type>(
            env, request, tuning);
    else if constexpr (sizeof(K) == 4 && kValueBytes == 0) {
        if (request.count <= tuning.keys4_small_max)
            radix_detail::onesweep_sort<K, 0, OnesweepKeys4SmallShape>(env, request, tuning);
        else if (request.count <= tuning.keys4_mid_max)
            radix_detail::onesweep_sort<K, 0, OnesweepKeys4MidShape>(env, request, tuning);
        else
            radix_detail::onesweep_sort<K, 0, typename OnesweepLargeShape<4, 0>::type>(env, request, tuning);
    } else if constexpr (sizeof(K) == 8 && kValueBytes == 0) {
        if (request.count <= tuning.keys8_mid_max)
            radix_detail::onesweep_sort<K, 0, OnesweepKeys8MidShape>(env, request, tuning);
        else
            radix_detail::onesweep_sort<K, 0, typename OnesweepLargeShape<8, 0>::type>(env, request, tuning);
    } else if constexpr (sizeof(K) == 4 && kValueBytes == 4) {
        const bool packed = radix_detail::placed_alike(request);
        if (packed && request.count <= tuning.pairs4_mid_max)
            radix_detail::onesweep_sort<K, 4, OnesweepPackedPairMidShape, true>(env, request, tuning);
        else if (packed)
            radix_detail::onesweep_sort<K, 4, OnesweepPackedPairShape, true>(env, request, tuning);
        else
            radix_detail::onesweep_sort<K, 4, typename OnesweepLargeShape<4, 4>::type>(env, request, tuning);
    } else
        radix_detail::onesweep_sort<K, kValueBytes, typename OnesweepLargeShape<sizeof(K), kValueBytes>::type>(
            env, request, tuning);
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
