// SPDX-License-Identifier: Apache-2.0
// What every CUDA algorithm driver receives from the backend: the stream to
// order work on, cached device properties, and the context's workspaces.
// Drivers (reduce.cu, scan.cu, radix_sort.cu, ...) are host functions that
// launch their kernels on env.stream and never synchronize unless they must.
#pragma once

#include "core/backend.h"
#include "core/workspace.h"
#include "cuda/util/check.h"
#include "cuda/util/counters.h"

#include <cuda_runtime.h>
#include <gpuprim/gpuprim.h>

#include <cstdint>
#include <array>
#include <type_traits>

namespace gpuprim::cuda {

class KernelCache;

struct DeviceEnv {
    cudaStream_t stream;
    int device_ordinal;
    int sm_count;
    int compute_capability;      // major * 10 + minor, e.g. 90
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

// Algorithm drivers; each lives in its own file.
// result: one element, device memory or mapped pinned host memory.
void reduce(const DeviceEnv &env, gpuprim_op_t op, gpuprim_dtype_t dtype, const void *input,
            uint64_t count, void *result);
void dot(const DeviceEnv &env, gpuprim_dtype_t dtype, const void *a, const void *b,
         uint64_t count, void *result);
// output may equal input.
void scan(const DeviceEnv &env, gpuprim_op_t op, gpuprim_scan_kind_t kind, gpuprim_dtype_t dtype,
          const void *input, void *output, uint64_t count);
void sort(const DeviceEnv &env, const SortRequest &request);
// Sorts the segments [bounds[2s], bounds[2s+1]) of request's buffers (host
// array, `segments` pairs; they must not overlap) each on its own in one
// Onesweep sort (sort/segmented_radix_sort.cu); nothing else is touched.
// False (nothing done) for what it does not take: keys other than 4 or 8
// bytes, values other than none, 4 or 8 bytes, no keys_out, segments of
// 2^30 keys or more, more than 2^24 segments.
bool segmented_radix_sort(const DeviceEnv &env, const SortRequest &request, const unsigned long long *bounds,
                          uint64_t segments);
// What the device check of CSR offsets learns about the segments, for the
// drivers that pick a path by shape.
struct SegmentSummary {
    uint64_t longest;  // the longest segment's length
    // The elements the segments cover together, [covered_begin,
    // covered_begin + covered_length): CSR segments follow each other from
    // offsets[0] to offsets[segments]; rows cover all the data. Scratch
    // sized by this stays proportional to the work, not to the buffer.
    uint64_t covered_begin;
    uint64_t covered_length;
};
// The check every segmented call runs first (segment/segment_check.cu).
// Uniform rows: computed on the host. Offsets: one kernel reads them all,
// the call waits for its result (written to the context's mapped host slot),
// and throws INVALID_ARGUMENT naming the first bad index (fail_bad_offset).
SegmentSummary check_segments(const DeviceEnv &env, const SegmentLayout &layout);
// The call narrowed to the elements its segments cover (checked offsets):
// data_count becomes summary.covered_length and origin covered_begin, so
// tiles, scratch and workspace follow the segments, not the whole buffer.
// The caller moves its data pointers by the same covered_begin elements
// (at_covered). Rows cover all the data: nothing changes.
SegmentLayout narrowed_to_covered(const SegmentLayout &layout, const SegmentSummary &summary);
template <typename Pointer>
Pointer at_covered(Pointer data, const SegmentSummary &summary, uint64_t element_bytes) {
    if (!data) return data;
    using Byte = std::conditional_t<std::is_const_v<std::remove_pointer_t<Pointer>>, const char, char>;
    return static_cast<Pointer>(static_cast<Byte *>(data) + summary.covered_begin * element_bytes);
}
// Segmented calls (src/cuda/segment/): each checks layout's offsets first.
void segmented_sort(const DeviceEnv &env, const SortRequest &request, const SegmentLayout &layout);
void segmented_reduce(const DeviceEnv &env, gpuprim_op_t op, gpuprim_dtype_t dtype, const SegmentLayout &layout,
                      const void *input, void *output);
void segmented_scan(const DeviceEnv &env, gpuprim_op_t op, gpuprim_scan_kind_t kind, gpuprim_dtype_t dtype,
                    const SegmentLayout &layout, const void *input, void *output);
// Top-k of every segment (src/cuda/topk/); a flat top-k is one row.
void topk(const DeviceEnv &env, const TopkRequest &request, const SegmentLayout &layout);
// Top-k of segments (offsets checked) of at most `longest` keys by the
// segmented sort's networks, storing each segment's first k ranks
// (segment/segmented_sort.cu). False (nothing done) when longest is past
// what a network holds.
bool network_topk(const DeviceEnv &env, const TopkRequest &request, const SegmentLayout &layout, uint64_t longest);

}  // namespace gpuprim::cuda
