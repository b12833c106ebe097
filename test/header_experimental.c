/* SPDX-License-Identifier: Apache-2.0 */
/* The header's experimental section (GPUPRIM_EXPERIMENTAL_API) compiles as
 * strict C99 and is added by a second include, after the stable part was
 * included without the macro (the zstd ZSTD_STATIC_LINKING_ONLY pattern). */
#include <gpuprim/gpuprim.h>

#ifdef GPUPRIM_GPUPRIM_H_EXPERIMENTAL
#error "the experimental section is visible without GPUPRIM_EXPERIMENTAL_API"
#endif

#define GPUPRIM_EXPERIMENTAL_API
#include <gpuprim/gpuprim.h>

#ifndef GPUPRIM_GPUPRIM_H_EXPERIMENTAL
#error "a second include with GPUPRIM_EXPERIMENTAL_API defined did not add the experimental section"
#endif

#include <stdio.h>

int main(void) {
    printf("header_experimental: libgpuprim %s\n", gpuprim_version_string());
    return gpuprim_version_number() == GPUPRIM_VERSION_NUMBER ? 0 : 1;
}
