// SPDX-License-Identifier: Apache-2.0
// The public header compiles as C++ (-pedantic -Werror) and its functions
// link with C linkage.
#include <gpuprim/gpuprim.h>

#include <cstdio>
#include <cstring>

int main() {
    gpuprim_context_options_t options;
    gpuprim_context_options_init(&options);
    gpuprim_status_t status = GPUPRIM_ERROR_INVALID_HANDLE;
    std::printf("header_cxx: libgpuprim %s, status %d is \"%s\"\n", gpuprim_version_string(),
                static_cast<int>(status), gpuprim_get_error_string(status));
    bool ok = gpuprim_version_number() == GPUPRIM_VERSION_NUMBER &&
              options.struct_size == sizeof options &&
              std::strcmp(gpuprim_get_error_string(status), "invalid handle") == 0;
    return ok ? 0 : 1;
}
