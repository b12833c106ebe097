// SPDX-License-Identifier: Apache-2.0
// test_workspace_query's white-box hook: the largest request each of a
// context's real workspace blocks has seen (core/backend.h
// largest_requests), reached through the library's registry, which is why
// that test links the library's objects (as rel_alloc_faults does).
#include "core/context.h"
#include "core/registry.h"

#include <gpuprim/gpuprim.h>

#include <cstdint>
#include <memory>
#include <mutex>

extern "C" int tq_largest_requests(gpuprim_context_t handle, uint64_t *main_bytes, uint64_t *side_bytes) {
    std::shared_ptr<gpuprim::Context> context = gpuprim::Registry::instance().find_context(handle);
    if (!context) return -1;
    std::lock_guard<std::mutex> lock(context->mutex);
    const gpuprim::Backend::WorkspaceSizes sizes = context->backend->largest_requests();
    *main_bytes = sizes.main_bytes;
    *side_bytes = sizes.side_bytes;
    return 0;
}
