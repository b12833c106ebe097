// SPDX-License-Identifier: Apache-2.0
// The workspace of a distributed call's local steps (its local sort, top-k,
// reduce or scan, the merge of what the ranks sent), taken before the ranks
// agree: the steps run once in the backend's query mode, which runs nothing
// and records what each would reserve, and that much is taken at once. So a
// rank short of it (a shortage, or a workspace held still too small) fails
// inside the agreement, and every rank fails alike, instead of one rank
// failing after the others have entered a collective that then never ends.
#pragma once

#include "core/backend.h"

namespace gpuprim::dist {

template <typename Steps>
void take_local_workspace(Backend &backend, Steps &&steps) {
    backend.begin_measure();
    Backend::WorkspaceSizes sizes;
    try {
        steps();
        sizes = backend.end_measure();
    } catch (...) {
        backend.end_measure();
        throw;
    }
    backend.take_workspace(sizes);
}

}  // namespace gpuprim::dist
