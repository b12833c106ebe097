// SPDX-License-Identifier: Apache-2.0
// The device check of CSR offsets. One launch reads offsets[0..segments]
// once: each block finds its first bad index, its first segment longer than
// the call's limit and its longest segment, stores them in the workspace
// and takes a ticket; the last block folds the blocks' results in block
// order, reads the offsets the message names, and resets the ticket
// (env.zeroed_counters must read zero after every call). Then:
// - waiting mode: it writes the result to the mapped host slot; the host
//   waits for the stream and reads it, so a fault is reported before any
//   kernel that would write has been launched;
// - deferred mode: it sets the call's skip word (0 or 1) for the kernels
//   that follow, and keeps a fault in the context's DeferredRecord.

#include "cuda/engine/segment_check.h"

#include "core/offsets_check.h"
#include "cuda/device_env.h"
#include "cuda/engine/in_kernel_check.cuh"
#include "cuda/util/check.h"
#include "cuda/util/counters.h"

#include <cuda_runtime.h>

#include <algorithm>

namespace gpuprim::cuda {
namespace {

constexpr int kCheckThreads = 256;
constexpr uint64_t kNone = kNoFault;

struct CheckResult {
    unsigned long long first_bad;   // kNone: every offset keeps the rules
    unsigned long long first_long;  // the first segment longer than the limit (kNone: none)
    unsigned long long longest;
    unsigned long long first_offset;  // offsets[0] and offsets[segments]: what the segments cover
    unsigned long long last_offset;
    long long value;     // the fault's values, as SegmentFault holds them
    long long previous;
};

struct CheckArgs {
    const void *offsets;
    uint32_t offset_bytes;
    bool offsets_signed;
    uint64_t segments;
    uint64_t data_count;
    uint64_t limit;         // segment_length_limit
    CheckResult *partials;  // one per block
    uint32_t *ticket;
    CheckResult *result;  // waiting mode: mapped host memory; deferred: nullptr
    // Deferred mode.
    uint32_t *skip;
    DeferredRecord *record;  // mapped host memory
    uint32_t entry;
    uint64_t call;
    uint64_t max_length;
};

__device__ __forceinline__ int64_t offset_at(const CheckArgs &args, uint64_t i) {
    return checked_offset_at(args.offsets, args.offset_bytes, args.offsets_signed, i);
}

// The folded result of all blocks, with the fault's values read back. Every
// thread of the last block folds a strided share of the blocks' results into
// the block's shared totals (one thread alone took a dependent L2 read per
// block: ~55 us for the 512 blocks of a million offsets); thread 0 gets it.
// Inline like every device function here: nvcc gives a non-inline one a host
// copy whose body is exit(1) (cmake/check_library_symbols.cmake refuses it).
__device__ __forceinline__ CheckResult fold(const CheckArgs &args, unsigned long long &block_bad,
                                            unsigned long long &block_long, unsigned long long &block_longest) {
    unsigned long long bad = kNone, first_long = kNone, longest = 0;
    for (uint32_t b = threadIdx.x; b < gridDim.x; b += kCheckThreads) {
        const volatile CheckResult &part = args.partials[b];
        bad = min(bad, part.first_bad);
        first_long = min(first_long, part.first_long);
        longest = max(longest, part.longest);
    }
    if (bad != kNone) atomicMin(&block_bad, bad);
    if (first_long != kNone) atomicMin(&block_long, first_long);
    if (longest != 0) atomicMax(&block_longest, longest);
    __syncthreads();
    CheckResult total{block_bad, block_long, block_longest, 0, 0, 0, 0};
    if (threadIdx.x != 0) return total;
    total.first_offset = (unsigned long long)offset_at(args, 0);
    total.last_offset = (unsigned long long)offset_at(args, args.segments);
    if (total.first_bad != kNone) {
        const uint64_t i = total.first_bad;
        total.value = offset_at(args, i);
        total.previous = i > 0 ? offset_at(args, i - 1) : 0;
    } else if (total.first_long != kNone) {
        const uint64_t s = total.first_long;
        total.value = int64_t(uint64_t(offset_at(args, s + 1)) - uint64_t(offset_at(args, s)));
    }
    return total;
}

// Deferred mode: the skip word for the call's kernels, and the first fault
// kept for the host.
__device__ __forceinline__ void defer(const CheckArgs &args, const CheckResult &total) {
    const bool bad = total.first_bad != kNone;
    const bool failed = bad || total.first_long != kNone;
    *args.skip = failed ? 1u : 0u;
    if (!failed) return;
    keep_deferred_fault(args.record, args.entry, args.call,
                        bad ? SegmentFaultKind::kBadOffset : SegmentFaultKind::kTooLong,
                        bad ? total.first_bad : total.first_long, total.value, bad ? total.previous : 0,
                        args.data_count, args.max_length, args.limit, args.offsets_signed);
}

// One thread: takes back what call's check kept (the record's first fault,
// or one count of `more`), the call having failed on the host after it.
__global__ void discard_deferred_fault_kernel(DeferredRecord *record_address, uint64_t call) {
    volatile DeferredRecord &record = *record_address;
    if (record.last_failed_call != call) return;
    if (record.kind != 0 && record.call == call)
        record.kind = 0;  // the first fault kept: no later call has run
    else if (record.more != 0)
        record.more = record.more - 1;
    record.last_failed_call = 0;
}

__global__ void __launch_bounds__(kCheckThreads) segment_check_kernel(const CheckArgs args) {
    __shared__ unsigned long long block_bad;
    __shared__ unsigned long long block_long;
    __shared__ unsigned long long block_longest;
    __shared__ bool last_block;
    if (threadIdx.x == 0) {
        block_bad = kNone;
        block_long = kNone;
        block_longest = 0;
    }
    __syncthreads();
    unsigned long long bad = kNone, first_long = kNone, longest = 0;
    const uint64_t stride = uint64_t(gridDim.x) * kCheckThreads;
    for (uint64_t i = uint64_t(blockIdx.x) * kCheckThreads + threadIdx.x; i <= args.segments; i += stride) {
        const int64_t value = offset_at(args, i);
        const int64_t previous = i > 0 ? offset_at(args, i - 1) : 0;
        if (offset_is_bad(args.offsets_signed, value, previous, i == 0, args.data_count)) {
            bad = i;  // the first of this thread: later ones are larger
            break;
        }
        // A bad previous offset makes this length meaningless, but then the
        // call fails on that offset first.
        if (i > 0) {
            const unsigned long long length = uint64_t(value) - uint64_t(previous);
            longest = max(longest, length);
            if (length > args.limit && first_long == kNone) first_long = i - 1;
        }
    }
    if (bad != kNone) atomicMin(&block_bad, bad);
    if (first_long != kNone) atomicMin(&block_long, first_long);
    if (longest != 0) atomicMax(&block_longest, longest);
    __syncthreads();
    if (threadIdx.x == 0) {
        args.partials[blockIdx.x] = {block_bad, block_long, block_longest, 0, 0, 0, 0};
        __threadfence();
        last_block = atomicAdd(args.ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last_block) return;
    __threadfence();
    const CheckResult total = fold(args, block_bad, block_long, block_longest);
    if (threadIdx.x != 0) return;
    if (args.skip) {
        defer(args, total);
    } else {
        volatile CheckResult &result = *args.result;
        result.first_bad = total.first_bad;
        result.first_long = total.first_long;
        result.longest = total.longest;
        result.first_offset = total.first_offset;
        result.last_offset = total.last_offset;
        result.value = total.value;
        result.previous = total.previous;
    }
    *args.ticket = 0;
}

}  // namespace

bool can_check_in_kernel(const DeviceEnv &env, const SegmentLayout &layout) {
    if (!layout.offsets || layout.segments >= kInKernelCheckMax) return false;
    return check_is_deferred(env, layout) ? env.deferred_record != nullptr
                                          : env.host_slot_bytes >= sizeof(InKernelFault);
}

SegmentSummary check_in_kernel(const DeviceEnv &env, const SegmentLayout &layout, uint64_t largest_index) {
    if (!can_check_in_kernel(env, layout))
        fail(GPUPRIM_ERROR_INTERNAL, "segment check: %llu offsets cannot be checked in the call's kernel",
             (unsigned long long)(layout.segments + 1));
    SegmentSummary summary{longest_segment_bound(layout, largest_index), 0, layout.data_count};
    InKernelCheck &check = summary.in_kernel;
    check.offsets = layout.offsets;
    check.offset_bytes = layout.offset_bytes;
    check.offsets_signed = layout.offsets_signed;
    check.segments = layout.segments;
    check.data_count = layout.data_count;
    check.limit = segment_length_limit(layout, largest_index);
    check.max_length = layout.max_length;
    if (check_is_deferred(env, layout)) {
        check.record = static_cast<DeferredRecord *>(env.deferred_record);
        check.entry = env.offsets_entry;
        check.call = env.offsets_call;
    } else {
        check.waited = static_cast<InKernelFault *>(env.host_slot_device);
        // No fault until the kernel writes one (a query launches nothing).
        if (!env.measuring) static_cast<volatile InKernelFault *>(env.host_slot)->kind = 0;
    }
    return summary;
}

void await_in_kernel_check(const DeviceEnv &env, const SegmentLayout &layout, const SegmentSummary &summary) {
    const InKernelCheck &in_kernel = summary.in_kernel;
    if (!in_kernel.offsets || !in_kernel.waited || env.measuring) return;
    check(cudaStreamSynchronize(env.stream), "segment offsets check in the kernel (cudaStreamSynchronize)");
    const volatile InKernelFault &slot = *static_cast<const InKernelFault *>(env.host_slot);
    if (slot.kind == 0) return;
    fail_segment_fault(layout, in_kernel.limit,
                       {SegmentFaultKind(slot.kind), slot.index, slot.value, slot.previous});
}

SegmentSummary check_segments(const DeviceEnv &env, const SegmentLayout &layout, uint64_t largest_index) {
    if (!layout.offsets) return {layout.row_length, 0, layout.data_count};
    static_assert(sizeof(CheckResult) <= 64, "the result fits the host slot");
    if (env.host_slot_bytes < sizeof(CheckResult))
        fail(GPUPRIM_ERROR_INTERNAL, "segment check: the host result slot is too small");
    const bool deferred = check_is_deferred(env, layout);
    if (deferred && (!env.offsets_skip || !env.deferred_record))
        fail(GPUPRIM_ERROR_INTERNAL, "segment check: no deferred record");
    const uint64_t entries = layout.segments + 1;
    const uint64_t wanted = (entries + kCheckThreads * 8 - 1) / (kCheckThreads * 8);
    const uint32_t blocks = uint32_t(std::max<uint64_t>(1, std::min<uint64_t>(wanted, uint64_t(env.sm_count) * 4)));
    CheckArgs args{};
    args.offsets = layout.offsets;
    args.offset_bytes = layout.offset_bytes;
    args.offsets_signed = layout.offsets_signed;
    args.segments = layout.segments;
    args.data_count = layout.data_count;
    args.limit = segment_length_limit(layout, largest_index);
    args.partials = static_cast<CheckResult *>(env.workspace->reserve(uint64_t(blocks) * sizeof(CheckResult)));
    // A workspace query reads no offsets: the bound (the promise, the
    // indices' type, else the whole data), nothing narrowed.
    if (env.measuring)
        return {longest_segment_bound(layout, largest_index), 0, layout.data_count, deferred ? env.offsets_skip : nullptr};
    args.ticket = env.zeroed_counters + SegmentCounterWords::kCheckTicket;
    if (deferred) {
        args.skip = env.offsets_skip;
        args.record = static_cast<DeferredRecord *>(env.deferred_record);
        args.entry = env.offsets_entry;
        args.call = env.offsets_call;
        args.max_length = layout.max_length;
    } else {
        args.result = static_cast<CheckResult *>(env.host_slot_device);
    }
    segment_check_kernel<<<blocks, kCheckThreads, 0, env.stream>>>(args);
    check_launch("segment offsets check launch");
    if (deferred) return {longest_segment_bound(layout, largest_index), 0, layout.data_count, env.offsets_skip};
    check(cudaStreamSynchronize(env.stream), "segment offsets check (cudaStreamSynchronize)");
    const volatile CheckResult &slot = *static_cast<CheckResult *>(env.host_slot);
    const CheckResult result{slot.first_bad,    slot.first_long, slot.longest, slot.first_offset,
                             slot.last_offset, slot.value,      slot.previous};
    if (result.first_bad != kNone)
        fail_segment_fault(layout, args.limit,
                           {SegmentFaultKind::kBadOffset, result.first_bad, result.value, result.previous});
    if (result.first_long != kNone)
        fail_segment_fault(layout, args.limit, {SegmentFaultKind::kTooLong, result.first_long, result.value, 0});
    return {result.longest, result.first_offset, result.last_offset - result.first_offset};
}

void discard_deferred_fault(const DeviceEnv &env) noexcept {
    if (!env.deferred_record || env.measuring || env.offsets_call == 0) return;
    discard_deferred_fault_kernel<<<1, 1, 0, env.stream>>>(static_cast<DeferredRecord *>(env.deferred_record),
                                                           env.offsets_call);
    (void)cudaGetLastError();  // the call's own failure is the one reported
}

SegmentLayout narrowed_to_covered(const SegmentLayout &layout, const SegmentSummary &summary) {
    SegmentLayout narrowed = layout;
    narrowed.origin = summary.covered_begin;
    narrowed.data_count = summary.covered_length;
    narrowed.skip = summary.skip;
    return narrowed;
}

}  // namespace gpuprim::cuda
