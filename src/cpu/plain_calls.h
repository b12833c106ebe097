// SPDX-License-Identifier: Apache-2.0
// The CPU backend's functions for the calls of core/backend_calls.h, each
// defined in its own file (search.cpp, histogram.cpp, ...): what it computes
// is said there, with the request it takes (core/backend.h).
#pragma once

#include "core/backend.h"
#include "cpu/parallel.h"

namespace gpuprim {
namespace cpu {

#define GPUPRIM_DECLARE_CPU_CALL(name, parameters, arguments) \
    void name(Parallel &parallel, GPUPRIM_UNPARENTHESIZED parameters);
GPUPRIM_PLAIN_BACKEND_CALLS(GPUPRIM_DECLARE_CPU_CALL)
#undef GPUPRIM_DECLARE_CPU_CALL

}  // namespace cpu
}  // namespace gpuprim
