// Instantiates the Onesweep radix sort (radix_sort.cuh) by key and value
// width, with the tile shape for the size class (sort_tuning.cuh).
#include "cuda/radix_sort.cuh"

namespace gpuprim::cuda {
namespace {

template <typename K, int kValueBytes>
void sort_by_size(const DeviceEnv &env, const SortRequest &request, const SortTuning &tuning) {
    using Fused = typename OnesweepFusedShape<sizeof(K), kValueBytes>::type;
    if (tuning.fused && request.count <= uint64_t(kFusedMaxTiles) * Fused::kTile &&
        radix_detail::fused_sort<K, kValueBytes, Fused>(env, request))
        return;
    const bool same_placement = (request.keys_out == request.keys_in) == (request.values_out == request.values_in);
    if (request.count <= tuning.medium_max)
        radix_detail::onesweep_sort<K, kValueBytes, typename OnesweepMediumShape<sizeof(K), kValueBytes>::type>(
            env, request, tuning);
    else if constexpr (sizeof(K) == 4 && kValueBytes == 0) {
        if (request.count <= tuning.keys_small_max)
            radix_detail::onesweep_sort<K, 0, OnesweepKeysSmallShape>(env, request, tuning);
        else if (request.count <= tuning.keys_mid_max)
            radix_detail::onesweep_sort<K, 0, OnesweepKeysMidShape>(env, request, tuning);
        else
            radix_detail::onesweep_sort<K, 0, typename OnesweepLargeShape<4, 0>::type>(env, request, tuning);
    } else if constexpr (sizeof(K) == 4 && kValueBytes == 4) {
        if (same_placement)
            radix_detail::onesweep_sort<K, 4, OnesweepPackedPairShape, typename RadixHistogramShapeFor<4>::type, true>(
                env, request, tuning);
        else
            radix_detail::onesweep_sort<K, 4, typename OnesweepLargeShape<4, 4>::type>(env, request, tuning);
    } else
        radix_detail::onesweep_sort<K, kValueBytes, typename OnesweepLargeShape<sizeof(K), kValueBytes>::type>(
            env, request, tuning);
}

template <typename K>
void sort_by_values(const DeviceEnv &env, const SortRequest &request, const SortTuning &tuning) {
    switch (request.value_bytes) {
    case 0: return sort_by_size<K, 0>(env, request, tuning);
    case 4: return sort_by_size<K, 4>(env, request, tuning);
    case 8: return sort_by_size<K, 8>(env, request, tuning);
    }
    fail(GPUPRIM_ERROR_INTERNAL, "radix sort: unsupported value width %u", request.value_bytes);
}

}  // namespace

void radix_sort(const DeviceEnv &env, const SortRequest &request, const SortTuning &tuning) {
    if (request.key_bytes == 4) return sort_by_values<uint32_t>(env, request, tuning);
    if (request.key_bytes == 8) return sort_by_values<uint64_t>(env, request, tuning);
    fail(GPUPRIM_ERROR_INTERNAL, "radix sort: unsupported key width %u", request.key_bytes);
}

}  // namespace gpuprim::cuda
