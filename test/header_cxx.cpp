// SPDX-License-Identifier: Apache-2.0
// The public header compiles as C++ (-pedantic -Werror) and its functions
// link with C linkage.
#include <gpuprim/gpuprim.h>

#include <cstdio>
#include <cstring>

int main() {
    gpuprim_context_options_t options;
    gpuprim_context_options_init(&options);
    gpuprim_sort_options_t sort_options;
    gpuprim_sort_options_init(&sort_options);
    sort_options.order = GPUPRIM_ORDER_DESCENDING;
    sort_options.begin_bit = 0u;
    sort_options.end_bit = 16u;
    gpuprim_status_t status = GPUPRIM_ERROR_INVALID_HANDLE;
    std::printf("header_cxx: libgpuprim %s, status %d is \"%s\"\n", gpuprim_version_string(),
                static_cast<int>(status), gpuprim_get_error_string(status));
    bool ok = gpuprim_version_number() == GPUPRIM_VERSION_NUMBER &&
              options.struct_size == sizeof options && sort_options.struct_size == sizeof sort_options &&
              gpuprim_sort_with_options(nullptr, nullptr, nullptr, nullptr, nullptr, &sort_options) ==
                  GPUPRIM_ERROR_NULL_POINTER &&
              gpuprim_dtype_size(GPUPRIM_DTYPE_F16) == 2u && gpuprim_dtype_size(GPUPRIM_DTYPE_I8) == 1u &&
              std::strcmp(gpuprim_get_error_string(status), "invalid handle") == 0;
    return ok ? 0 : 1;
}
