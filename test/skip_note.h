/* SPDX-License-Identifier: Apache-2.0 */
/* tc_skip(): how a test program says it cannot run here. It prints the
 * reason and returns 77, ctest's "skipped" (SKIP_RETURN_CODE). ctest gives
 * such tests GPUPRIM_TEST_SKIP_NOTE, a file for the reason, and prints every
 * skipped test's after the run (cmake/ctest_skip_reasons.cmake), since its
 * own list of skipped tests has no reasons. C and C++. */
#ifndef GPUPRIM_TEST_SKIP_NOTE_H
#define GPUPRIM_TEST_SKIP_NOTE_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 1, 2)))
#endif
static inline int
tc_skip(const char *format, ...) {
    char reason[512];
    const char *note = getenv("GPUPRIM_TEST_SKIP_NOTE");
    va_list args;
    va_start(args, format);
    vsnprintf(reason, sizeof reason, format, args);
    va_end(args);
    printf("%s\n", reason);
    fflush(stdout);
    if (note && *note) {
        FILE *file = fopen(note, "w");
        if (file) {
            fprintf(file, "%s\n", reason);
            fclose(file);
        }
    }
    return 77;
}

#endif
