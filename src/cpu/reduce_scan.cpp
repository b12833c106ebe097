// SPDX-License-Identifier: Apache-2.0
// The one place reduce, dot and scan (cpu/reduce_scan.h) are instantiated,
// for every dtype.
#define GPUPRIM_CPU_REDUCE_SCAN_INSTANTIATIONS 1
#include "cpu/reduce_scan.h"

namespace gpuprim {
namespace cpu {

#define GPUPRIM_CPU_REDUCE_SCAN_INSTANTIATE(e, type, name)                                  \
    template type reduce<type>(Parallel &, gpuprim_op_t, const type *, uint64_t);          \
    template type dot<type>(Parallel &, const type *, const type *, uint64_t);             \
    template void scan<type>(Parallel &, gpuprim_op_t, bool, const type *, type *, uint64_t, \
                             const type *);
GPUPRIM_DTYPE_TABLE(GPUPRIM_CPU_REDUCE_SCAN_INSTANTIATE)
#undef GPUPRIM_CPU_REDUCE_SCAN_INSTANTIATE

}  // namespace cpu
}  // namespace gpuprim
