/* SPDX-License-Identifier: Apache-2.0 */
/* What library_symbols_self_test feeds cmake/check_library_symbols.cmake:
 * an object that ends the process, as nvcc's stub for a host call of a
 * __device__-only function does (`{ int volatile ___ = 1; ::exit(___); }`). */
#include <stdlib.h>

void ends_the_process(void) {
    volatile int status = 1;
    exit(status);
}
