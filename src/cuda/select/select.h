// SPDX-License-Identifier: Apache-2.0
// The select primitive's front door (select.cu): gpuprim_select /
// gpuprim_partition (SelectRequest) and gpuprim_unique /
// gpuprim_run_length_encode (RunsRequest), one tile agent for all four
// (agent_select.cuh).
#pragma once

#include "core/backend.h"
#include "cuda/device_env.h"

namespace gpuprim::cuda {

// Keeps the elements request.keep keeps, in order (partition: then the
// others, in order), with their values and positions; the number kept goes
// to request.kept. Stream-ordered on env.stream, except that a host count
// waits for the stream. Reserves env.workspace: 16 bytes per tile when the
// input spans more than one tile (select_policy.cuh).
void select_elements(const DeviceEnv &env, const SelectRequest &request);

// The runs of equal key bits (non_trivial_only: those of 2 or more): their
// first keys, values, starts and lengths, in order; the number of runs goes
// to request.runs. Stream-ordered as select_elements, same workspace.
void find_runs(const DeviceEnv &env, const RunsRequest &request);

}  // namespace gpuprim::cuda
