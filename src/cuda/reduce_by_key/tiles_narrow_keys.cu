// SPDX-License-Identifier: Apache-2.0
// reduce-by-key's tile kernels for keys of 1, 2 and 4 bytes, held in 4-byte
// registers (launch_tiles.cuh; p.key_bytes picks the loads and stores).
#include "cuda/reduce_by_key/launch_tiles.cuh"

namespace gpuprim::cuda::reduce_by_key_detail {
template void launch_for_values<uint32_t>(const DeviceEnv &, const ReduceByKeyParams &, const ReduceByKeyRequest &,
                                        const char *);
}  // namespace gpuprim::cuda::reduce_by_key_detail
