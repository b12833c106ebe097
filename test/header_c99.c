/* SPDX-License-Identifier: Apache-2.0 */
/* The public header compiles as strict C99 (-std=c99 -pedantic -Werror) and links. */
#include <gpuprim/gpuprim.h>

#include <stdio.h>

int main(void) {
    gpuprim_context_options_t options;
    gpuprim_sort_options_t sort_options;
    gpuprim_status_t (*sort_with_options)(gpuprim_context_t, gpuprim_buffer_t, gpuprim_buffer_t,
                                          gpuprim_buffer_t, gpuprim_buffer_t,
                                          const gpuprim_sort_options_t *) = gpuprim_sort_with_options;
    gpuprim_context_options_init(&options);
    gpuprim_sort_options_init(&sort_options);
    printf("header_c99: libgpuprim %s (%u)\n", gpuprim_version_string(), (unsigned)gpuprim_version_number());
    return gpuprim_version_number() == GPUPRIM_VERSION_NUMBER &&
                   options.struct_size == sizeof options &&
                   sort_options.struct_size == sizeof sort_options && sort_options.end_bit == 0 &&
                   sort_with_options(NULL, NULL, NULL, NULL, NULL, &sort_options) ==
                       GPUPRIM_ERROR_NULL_POINTER &&
                   gpuprim_dtype_size(GPUPRIM_DTYPE_F64) == 8 &&
                   gpuprim_dtype_size(GPUPRIM_DTYPE_BF16) == 2 && gpuprim_dtype_size(GPUPRIM_DTYPE_U8) == 1
               ? 0
               : 1;
}
