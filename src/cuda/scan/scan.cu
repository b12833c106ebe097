// SPDX-License-Identifier: Apache-2.0
// Device-wide prefix scan (inclusive/exclusive; SUM, MIN, MAX).
//
// Inputs of more than one tile: one launch, tiles in ticket order with a
// decoupled look-back (engine/tile_lookback.cuh). A tile waits several
// microseconds for its prefix, so SUM runs persistent blocks that keep
// several tiles in flight in shared memory (a ring of stages filled by
// cp.async, or by bulk copies on sm_90 where the tuning says so): the
// next tiles load while the oldest waits. MIN/MAX, heavier per element,
// run one block per tile with many blocks per SM. One tile: one block
// walks it in registers; no look-back, no workspace.
//
// Tiles are laid out on 16-byte boundaries of the input: "head" pad
// positions before element 0 make every full tile start aligned, so wrapped
// pointers aligned only to the element size still get 16-byte loads. The
// output uses 16-byte stores when it has the input's alignment, element
// stores otherwise. Pads read as the operator's neutral element.
//
// Float SUM is deterministic: within a tile the association is fixed by the
// code, and across tiles by tile numbers alone (groups of 32 tiles, see
// engine/tile_lookback.cuh), whatever the timing. Both paths give the same
// bits.
//
// An initial value (Backend::scan's `initial`, the distributed scan's carry)
// rides in the launch parameters (ScanParams::has_initial / initial; the
// narrow three-pass path's prefix kernel takes it as arguments): it is what
// tile 0 starts from, its exclusive prefix. Exact operators publish it
// combined with tile 0's aggregate as tile 0's inclusive prefix; float SUM
// takes it as P_0 of the grouped look-back. No extra pass, and absent it
// nothing changes.
#include "cuda/scan/scan.h"

#include "cuda/scan/dispatch_scan.cuh"

namespace gpuprim::cuda {

void scan(const DeviceEnv &env, gpuprim_op_t op, gpuprim_scan_kind_t kind, gpuprim_dtype_t dtype,
          const void *input, void *output, uint64_t count, const void *initial) {
    if (count == 0) return;
    const bool exclusive = kind == GPUPRIM_SCAN_EXCLUSIVE;
    dispatch_dtype(dtype, [&](auto zero) {
        scan_detail::scan_typed<decltype(zero)>(env, op, exclusive, input, output, count, initial);
    });
}

}  // namespace gpuprim::cuda
