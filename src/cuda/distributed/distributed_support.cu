// SPDX-License-Identifier: Apache-2.0
// Support kernels of the distributed calls (distributed/distributed.h):
// - add_to_indices: a grid-stride loop adding one offset to every index (a
//   rank's local argsort positions made global);
// - count_keys_below: one thread per candidate splitter, a binary search of
//   the rank's sorted keys by their sort bits (core/key_transform.h), the
//   lower bound: how many keys sort before the candidate. Indices are 64-bit
//   throughout (a rank may hold more than 2^32 keys).
#include "cuda/distributed/distributed.h"

#include "core/error.h"
#include "core/key_transform.h"
#include "core/portable.h"
#include "cuda/util/check.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace gpuprim::cuda {
namespace distributed_detail {

constexpr int kThreads = 256;

// Blocks for a grid-stride loop over n items: one thread per item, at most
// `per_sm` blocks per SM (more only queue up), at least one.
inline unsigned grid_for(const DeviceEnv &env, uint64_t n, uint64_t per_sm) {
    const uint64_t wanted = ceil_div(n, uint64_t(kThreads));
    const uint64_t most = uint64_t(std::max(env.sm_count, 1)) * per_sm;
    return unsigned(std::max<uint64_t>(1, std::min(wanted, most)));
}

template <typename U>
__global__ void __launch_bounds__(kThreads) add_to_indices_kernel(U *indices, uint64_t count, U offset) {
    const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
        indices[i] = U(indices[i] + offset);
}

// The keys [0, count) are sorted ascending by sort_bits(to_radix_key(key)).
// counts[j]: the first position whose sort bits are not below candidates[j].
template <typename Bits>
__global__ void __launch_bounds__(kThreads)
    count_keys_below_kernel(const Bits *keys, uint64_t count, KeyKind kind, bool descending, uint32_t begin_bit,
                            uint32_t end_bit, const uint64_t *candidates, uint64_t candidate_count,
                            uint64_t *counts) {
    const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
    for (uint64_t j = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < candidate_count; j += stride) {
        const uint64_t candidate = candidates[j];
        uint64_t low = 0, high = count;  // the answer lies in [low, high]
        while (low < high) {
            const uint64_t middle = low + (high - low) / 2;
            const uint64_t bits = sort_bits(to_radix_key<Bits>(keys[middle], kind, descending), begin_bit, end_bit);
            if (bits < candidate) low = middle + 1;
            else high = middle;
        }
        counts[j] = low;
    }
}

template <typename Bits>
void launch_count_keys_below(const DeviceEnv &env, const SortRequest &keys, const uint64_t *candidates,
                             uint64_t candidate_count, uint64_t *counts) {
    // The searches are latency-bound: every candidate a thread of its own
    // (a few hundred thousand at most), the grid-stride loop only a guard.
    const unsigned blocks = grid_for(env, candidate_count, 64);
    count_keys_below_kernel<Bits><<<blocks, kThreads, 0, env.stream>>>(
        static_cast<const Bits *>(keys.keys_in), keys.count, keys.key_kind, keys.descending, keys.begin_bit,
        sort_end_bit(keys), candidates, candidate_count, counts);
    check_launch("count_keys_below launch");
}

}  // namespace distributed_detail

void add_to_indices(const DeviceEnv &env, void *indices, uint64_t count, uint32_t index_bytes, uint64_t offset) {
    using namespace distributed_detail;
    if (count == 0) return;
    const unsigned blocks = grid_for(env, count, 8);
    if (index_bytes == 4) {
        add_to_indices_kernel<uint32_t><<<blocks, kThreads, 0, env.stream>>>(static_cast<uint32_t *>(indices), count,
                                                                             static_cast<uint32_t>(offset));
    } else if (index_bytes == 8) {
        add_to_indices_kernel<uint64_t><<<blocks, kThreads, 0, env.stream>>>(static_cast<uint64_t *>(indices), count,
                                                                             offset);
    } else {
        fail(GPUPRIM_ERROR_INTERNAL, "add_to_indices: %u-byte indices", index_bytes);
    }
    check_launch("add_to_indices launch");
}

void count_keys_below(const DeviceEnv &env, const SortRequest &keys, const uint64_t *candidates,
                      uint64_t candidate_count, uint64_t *counts) {
    using namespace distributed_detail;
    if (candidate_count == 0) return;
    switch (keys.key_bytes) {
    case 1: return launch_count_keys_below<uint8_t>(env, keys, candidates, candidate_count, counts);
    case 2: return launch_count_keys_below<uint16_t>(env, keys, candidates, candidate_count, counts);
    case 4: return launch_count_keys_below<uint32_t>(env, keys, candidates, candidate_count, counts);
    case 8: return launch_count_keys_below<uint64_t>(env, keys, candidates, candidate_count, counts);
    }
    fail(GPUPRIM_ERROR_INTERNAL, "count_keys_below: %u-byte keys", keys.key_bytes);
}

}  // namespace gpuprim::cuda
