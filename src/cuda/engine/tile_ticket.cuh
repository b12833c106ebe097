// SPDX-License-Identifier: Apache-2.0
// Tile tickets of the single-pass look-back kernels (select/,
// reduce_by_key/): tiles are numbered in the order blocks start, so a tile
// only ever waits on tiles whose blocks run or are done. The word is one of
// DeviceEnv::zeroed_counters (util/counters.h); the block that takes the last
// ticket puts it back to zero: every other block has taken its own.
#pragma once

#include <cstdint>

namespace gpuprim::cuda {

// One thread of the block calls; num_tiles > 1.
__device__ __forceinline__ uint32_t take_tile_ticket(unsigned int *ticket, uint32_t num_tiles) {
    const uint32_t tile = atomicAdd(ticket, 1u);
    if (tile == num_tiles - 1) atomicExch(ticket, 0u);
    return tile;
}

}  // namespace gpuprim::cuda
