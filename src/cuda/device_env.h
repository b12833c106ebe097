// SPDX-License-Identifier: Apache-2.0
// What every CUDA algorithm driver receives from the backend: the stream to
// order work on, cached device properties, and the context's workspaces.
// Drivers (reduce.cu, scan.cu, radix_sort.cu, ...) are host functions that
// launch their kernels on env.stream and never synchronize unless they must;
// each primitive declares its own in its entry header (reduce/reduce.h,
// sort/sort.h, ...; the list in LAYERS.txt).
#pragma once

#include "core/workspace.h"
#include "cuda/util/check.h"
#include "cuda/util/counters.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <array>

namespace gpuprim::cuda {

class KernelCache;

struct DeviceEnv {
    cudaStream_t stream;
    int device_ordinal;
    int sm_count;
    // The architecture the kernels were compiled for on this device (their
    // PTX version, major * 10 + minor, util/code_arch.h): what every policy
    // picks its tuning by. The device's own compute capability is not kept
    // here, so that no driver picks by it.
    int code_arch;
    int max_threads_per_sm;
    size_t l2_bytes;
    size_t max_shared_per_block_optin;
    // Grow-only device scratch. A driver calls reserve() once per call and
    // partitions the block itself; it is reused by the next call, which is
    // stream-ordered after this one.
    Workspace *workspace;
    // kZeroedCounterWords 32-bit words of device memory that are zero when a
    // call starts; each primitive's words are named in cuda/util/counters.h.
    uint32_t *zeroed_counters;
    // One-time kernel set-up remembered by the context; may be null (then
    // every call asks the runtime again).
    KernelCache *kernels;
    // A second grow-only scratch, for what a driver keeps across calls of
    // other drivers that reserve `workspace` (the keys an argsort does not
    // return, the segment lists of a segmented sort that sorts its long
    // segments with the flat sort).
    Workspace *side_workspace;
    // Mapped pinned host memory a kernel may write a small result to
    // (host_slot_device) and the host read after synchronizing (host_slot).
    void *host_slot;
    void *host_slot_device;
    size_t host_slot_bytes;
    // Calls on CSR offsets (engine/segment_check.h): whether their check is
    // deferred (gpuprim_context_set_offsets_check), and for the deferred
    // report which call this is (SegmentedEntry, its number on the
    // context), the device word the check sets when the offsets fail
    // (SegmentLayout::skip) and where it keeps the first failure (the
    // device address of a DeferredRecord in mapped host memory).
    bool defer_offsets_check;
    uint32_t offsets_entry;
    uint64_t offsets_call;
    uint32_t *offsets_skip;
    void *deferred_record;
    // A workspace query (gpuprim_context_begin_workspace_query): both
    // workspaces are recorders, and each driver returns after its reserves,
    // before it enqueues, waits for or reads anything (the guards
    // `if (env.measuring) return ...;`). Outer drivers still call the inner
    // ones, so every nested reserve is recorded.
    bool measuring = false;
    // A query's bound on a sort of any count up to the one asked for
    // (sort_bound): paths that switch at a count of their own (the fused
    // radix sort, by the tiles resident at once) record their largest.
    bool measuring_any_count = false;
};

// Per-context memo of what a kernel needs once before its first launch: the
// opt-in to its dynamic shared memory and the number of its blocks one SM
// holds. The runtime queries cost microseconds of host time, as much as a
// small call's whole device time. Calls on a context are serialized by the
// context's lock, so no lock here. Fixed room: remembering a kernel never
// allocates, so a call cannot fail for host memory after it has started
// (a kernel past the room is simply asked about every time).
class KernelCache {
public:
    // Blocks of `threads` threads with `dynamic_shared` bytes of dynamic shared
    // memory that fit on one SM, after opting the kernel in; 0 when one block
    // does not fit this device (static plus dynamic shared memory past
    // `max_shared_optin`, the device's per-block limit), and then no opt-in.
    int resident_blocks(const void *kernel, int threads, size_t dynamic_shared,
                        size_t max_shared_optin, const char *what);

private:
    struct Entry {
        const void *kernel;
        int threads;
        size_t dynamic_shared;
        int blocks;
    };
    static constexpr size_t kRoom = 128;
    std::array<Entry, kRoom> entries_{};
    size_t used_ = 0;
};

inline int query_resident_blocks(const void *kernel, int threads, size_t dynamic_shared,
                                 size_t max_shared_optin, const char *what) {
    cudaFuncAttributes attributes{};
    check(cudaFuncGetAttributes(&attributes, kernel), what);
    if (attributes.sharedSizeBytes + dynamic_shared > max_shared_optin) return 0;
    // The default dynamic limit is 48 KiB less the kernel's static shared
    // memory, so any dynamic request may need the opt-in. It opts in to all
    // the device allows, never to just this request: the limit belongs to the
    // kernel, process-wide, and a smaller request's opt-in would lower it
    // under a larger one that some context's cache already remembered as
    // done (a block sort of 2049 keys then failed to launch after one of
    // 2048: "invalid argument").
    if (dynamic_shared > 0)
        check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   static_cast<int>(max_shared_optin - attributes.sharedSizeBytes)),
              what);
    int blocks = 0;
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, dynamic_shared),
          what);
    return blocks;
}

inline int KernelCache::resident_blocks(const void *kernel, int threads, size_t dynamic_shared,
                                        size_t max_shared_optin, const char *what) {
    for (size_t i = 0; i < used_; ++i) {
        const Entry &entry = entries_[i];
        if (entry.kernel == kernel && entry.threads == threads &&
            entry.dynamic_shared == dynamic_shared)
            return entry.blocks;
    }
    const int blocks = query_resident_blocks(kernel, threads, dynamic_shared, max_shared_optin, what);
    if (used_ < kRoom) entries_[used_++] = Entry{kernel, threads, dynamic_shared, blocks};
    return blocks;
}

// The kernel's resident blocks per SM on env's device (0: a block does not
// fit), through the context's cache when there is one.
inline int resident_blocks(const DeviceEnv &env, const void *kernel, int threads,
                           size_t dynamic_shared, const char *what) {
    return env.kernels ? env.kernels->resident_blocks(kernel, threads, dynamic_shared,
                                                      env.max_shared_per_block_optin, what)
                       : query_resident_blocks(kernel, threads, dynamic_shared,
                                               env.max_shared_per_block_optin, what);
}

}  // namespace gpuprim::cuda
