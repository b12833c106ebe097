// SPDX-License-Identifier: Apache-2.0
// The CPU sort of 4- and 8-byte keys (see cpu/sort_by_width.h).
#include "cpu/sort_by_width.h"

namespace gpuprim {
namespace cpu {

void sort_wide_keys(Parallel &parallel, Workspace &workspace, const SortRequest &request, uint64_t *measure) {
    if (request.key_bytes == 4) return sort_detail::sort_by_value_width<uint32_t>(parallel, workspace, request, measure);
    if (request.key_bytes == 8) return sort_detail::sort_by_value_width<uint64_t>(parallel, workspace, request, measure);
    fail(GPUPRIM_ERROR_INTERNAL, "sort: %u-byte keys are not 4 or 8 bytes", request.key_bytes);
}

}  // namespace cpu
}  // namespace gpuprim
