// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <nanobind/nanobind.h>

namespace gpuprim_ext {

// Defines dlpack_view() and export_empty() (dlpack_calls.cpp).
void define_dlpack_calls(nanobind::module_ &m);

}  // namespace gpuprim_ext
