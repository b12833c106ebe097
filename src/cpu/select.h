// SPDX-License-Identifier: Apache-2.0
// The CPU backend's select, partition, unique and run-length encode
// (select.cpp).
#pragma once

#include "core/backend.h"
#include "cpu/parallel.h"

namespace gpuprim {
namespace cpu {

// gpuprim_select / gpuprim_partition (core/backend.h SelectRequest; the
// keep rule core/keep_rule.h).
void select(Parallel &parallel, const SelectRequest &request);

// gpuprim_unique / gpuprim_run_length_encode (core/backend.h RunsRequest).
void runs(Parallel &parallel, const RunsRequest &request);

}  // namespace cpu
}  // namespace gpuprim
