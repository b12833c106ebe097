// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <nanobind/nanobind.h>

namespace gpuprim_ext {

// Defines fast_init() and the common-path calls fast_sort, fast_argsort,
// fast_topk and fast_reduce (fast_calls.cpp).
void define_fast_calls(nanobind::module_ &m);

}  // namespace gpuprim_ext
