// SPDX-License-Identifier: Apache-2.0
// reduce-by-key's tile kernels for 2-byte keys (launch_tiles.cuh).
#include "cuda/reduce_by_key/launch_tiles.cuh"

namespace gpuprim::cuda::reduce_by_key_detail {
template void launch_for_values<uint16_t>(const DeviceEnv &, const ReduceByKeyParams &, const ReduceByKeyRequest &,
                                        const char *);
}  // namespace gpuprim::cuda::reduce_by_key_detail
