/* SPDX-License-Identifier: Apache-2.0 */
/* The public header compiles as strict C99 (-std=c99 -pedantic -Werror) and links. */
#include <gpuprim/gpuprim.h>

#include <stdio.h>

int main(void) {
    gpuprim_context_options_t options;
    gpuprim_context_options_init(&options);
    printf("header_c99: libgpuprim %s (%u)\n", gpuprim_version_string(), (unsigned)gpuprim_version_number());
    return gpuprim_version_number() == GPUPRIM_VERSION_NUMBER &&
                   options.struct_size == sizeof options &&
                   gpuprim_dtype_size(GPUPRIM_DTYPE_F64) == 8
               ? 0
               : 1;
}
