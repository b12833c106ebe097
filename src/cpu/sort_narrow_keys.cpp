// SPDX-License-Identifier: Apache-2.0
// The CPU sort of 1- and 2-byte keys (see cpu/sort_by_width.h).
#include "cpu/sort_by_width.h"

namespace gpuprim {
namespace cpu {

void sort_narrow_keys(Parallel &parallel, Workspace &workspace, const SortRequest &request, uint64_t *measure) {
    if (request.key_bytes == 1) return sort_detail::sort_by_value_width<uint8_t>(parallel, workspace, request, measure);
    if (request.key_bytes == 2) return sort_detail::sort_by_value_width<uint16_t>(parallel, workspace, request, measure);
    fail(GPUPRIM_ERROR_INTERNAL, "sort: %u-byte keys are not narrow", request.key_bytes);
}

}  // namespace cpu
}  // namespace gpuprim
