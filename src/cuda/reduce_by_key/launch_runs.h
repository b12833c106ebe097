// SPDX-License-Identifier: Apache-2.0
// reduce-by-key's launches, one key register width per translation unit so
// that the two sets of tile kernels compile in parallel: the driver
// (reduce_by_key.cu) calls launch_for_values<Bits> (Bits uint32_t for keys
// of 1, 2 and 4 bytes, p.key_bytes their width in memory; uint64_t for 8),
// defined in launch_tiles.cuh and instantiated in tiles_narrow_keys.cu and
// tiles_8byte_keys.cu, which launches the tile kernel and then the
// crossing-runs kernel (crossing_runs.cu, every value dtype and op once).
#pragma once

#include "core/backend.h"
#include "cuda/device_env.h"
#include "cuda/reduce_by_key/reduce_by_key_params.cuh"

#include <cstdint>

namespace gpuprim::cuda {
namespace reduce_by_key_detail {

// The look-back's status words (zeroed: kTileInvalid) and the tile records,
// in env.workspace; nothing for one tile (reduce_by_key.cu).
void lay_out_workspace(const DeviceEnv &env, ReduceByKeyParams &p, const char *what);

// The tiles (their size depends on the key's and running value's widths),
// the workspace, then the two kernels, for keys in Bits registers and the
// request's value dtype and op (tiles_narrow_keys.cu, tiles_8byte_keys.cu).
template <typename Bits>
void launch_for_values(const DeviceEnv &env, const ReduceByKeyParams &p, const ReduceByKeyRequest &request,
                       const char *what);

// The crossing-runs kernel of the request's value dtype and op over p's
// tiles (crossing_runs.cu); p has values and more than one tile.
void launch_crossing_runs(const DeviceEnv &env, const ReduceByKeyParams &p, const ReduceByKeyRequest &request,
                          const char *what);

}  // namespace reduce_by_key_detail
}  // namespace gpuprim::cuda
