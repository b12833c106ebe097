// SPDX-License-Identifier: Apache-2.0
// The offsets check's device side, shared by the check kernel
// (segment_check.cu) and the kernels that check small offsets arrays
// themselves (InKernelCheck): the offsets rule as one offset sees it, and
// the keeping of a fault in the context's DeferredRecord (deferred mode) or
// in the host slot the call waits for (waiting mode, InKernelFault).
#pragma once

#include "core/backend.h"
#include "core/offsets_check.h"
#include "cuda/engine/segment_check.h"

#include <cstdint>

namespace gpuprim::cuda {

constexpr unsigned long long kNoFault = ~0ull;

// offsets[i] as a signed 64-bit value (U64 past INT64_MAX reads negative,
// which the rules reject), as the host's read_offset does.
__device__ __forceinline__ int64_t checked_offset_at(const void *offsets, uint32_t offset_bytes, bool offsets_signed,
                                                     uint64_t i) {
    if (offset_bytes == 4) {
        const uint32_t bits = __ldg(static_cast<const uint32_t *>(offsets) + i);
        return offsets_signed ? int64_t(int32_t(bits)) : int64_t(bits);
    }
    return int64_t(__ldg(static_cast<const unsigned long long *>(offsets) + i));
}

// Keeps a fault in the record (one thread): the first one whole, later
// ones counted. A context's calls run in stream order, graph replays too,
// so no other thread writes the record meanwhile.
__device__ inline void keep_deferred_fault(DeferredRecord *record_address, uint32_t entry, uint64_t call,
                                           SegmentFaultKind kind, uint64_t index, int64_t value, int64_t previous,
                                           uint64_t data_count, uint64_t max_length, uint64_t limit,
                                           bool offsets_signed) {
    volatile DeferredRecord &record = *record_address;
    record.last_failed_call = call;
    if (record.kind != 0) {
        record.more = record.more + 1;
        return;
    }
    record.entry = entry;
    record.call = call;
    record.index = index;
    record.value = value;
    record.previous = previous;
    record.data_count = data_count;
    record.max_length = max_length;
    record.limit = limit;
    record.offsets_signed = offsets_signed;
    record.more = 0;
    __threadfence_system();  // the fields before the kind that says they are there
    record.kind = uint32_t(kind);
}

// Every thread of the block calls it before anything reads the offsets; it
// returns, to every thread, whether they fail the check. Each block reads
// all segments + 1 offsets (at most kInKernelCheckMax, from L2 after the
// first block), so all blocks agree; block 0 keeps the fault.
__device__ inline bool in_kernel_offsets_fail(const InKernelCheck &check) {
    __shared__ unsigned long long first_bad, first_long;
    if (threadIdx.x == 0) {
        first_bad = kNoFault;
        first_long = kNoFault;
    }
    __syncthreads();
    for (uint64_t i = threadIdx.x; i <= check.segments; i += blockDim.x) {
        const int64_t value = checked_offset_at(check.offsets, check.offset_bytes, check.offsets_signed, i);
        const int64_t previous =
            i > 0 ? checked_offset_at(check.offsets, check.offset_bytes, check.offsets_signed, i - 1) : 0;
        if (offset_is_bad(check.offsets_signed, value, previous, i == 0, check.data_count))
            atomicMin(&first_bad, (unsigned long long)i);
        else if (i > 0 && uint64_t(value) - uint64_t(previous) > check.limit)
            atomicMin(&first_long, (unsigned long long)(i - 1));
    }
    __syncthreads();
    const unsigned long long bad = first_bad, too_long = first_long;
    const bool failed = bad != kNoFault || too_long != kNoFault;
    if (failed && blockIdx.x == 0 && threadIdx.x == 0) {
        const auto at = [&](uint64_t i) {
            return checked_offset_at(check.offsets, check.offset_bytes, check.offsets_signed, i);
        };
        const SegmentFaultKind kind = bad != kNoFault ? SegmentFaultKind::kBadOffset : SegmentFaultKind::kTooLong;
        const uint64_t index = bad != kNoFault ? bad : too_long;
        const int64_t value = bad != kNoFault ? at(bad) : int64_t(uint64_t(at(too_long + 1)) - uint64_t(at(too_long)));
        const int64_t previous = bad != kNoFault && bad > 0 ? at(bad - 1) : 0;
        if (check.waited) {
            volatile InKernelFault &fault = *check.waited;
            fault.index = index;
            fault.value = value;
            fault.previous = previous;
            __threadfence_system();  // the fields before the kind that says they are there
            fault.kind = uint32_t(kind);
        } else {
            keep_deferred_fault(check.record, check.entry, check.call, kind, index, value, previous, check.data_count,
                                check.max_length, check.limit, check.offsets_signed);
        }
    }
    return failed;
}

}  // namespace gpuprim::cuda
