// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <nanobind/nanobind.h>

namespace gpuprim_ext {

// Defines gpuprim_<name>(...) in the module for every entry point the
// Python layer calls (raw_calls.cpp).
void define_raw_calls(nanobind::module_ &m);

}  // namespace gpuprim_ext
