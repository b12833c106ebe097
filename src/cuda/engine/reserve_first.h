// SPDX-License-Identifier: Apache-2.0
// Reserving a later step's workspace before the first work is enqueued: a
// driver that writes some segments' results and then sorts the rest
// (segmented sort's long class, top-k's long segments), group-by (its
// reduce after its sort), and the backend's segmented calls whose deferred
// offsets check runs first while the stream captures run the later steps
// once in a workspace query's mode on recorders, which enqueues nothing,
// and take what they recorded now. A shortage (or growth refused while the
// stream captures) then fails the call before anything ran, and the later
// steps' own reserves no longer grow.
#pragma once

#include "core/workspace.h"
#include "cuda/device_env.h"

#include <cstdint>

namespace gpuprim::cuda {

struct WorkspaceNeeds {
    uint64_t main_bytes = 0;  // env.workspace
    uint64_t side_bytes = 0;  // env.side_workspace
};

// What steps(recording_env) reserves of each workspace.
template <typename Steps>
WorkspaceNeeds workspace_needs(const DeviceEnv &env, Steps &&steps) {
    Workspace main_recorder{Workspace::Record{}}, side_recorder{Workspace::Record{}};
    DeviceEnv recording = env;
    recording.workspace = &main_recorder;
    recording.side_workspace = &side_recorder;
    recording.measuring = true;
    steps(static_cast<const DeviceEnv &>(recording));
    return {main_recorder.largest_request(), side_recorder.largest_request()};
}

}  // namespace gpuprim::cuda
