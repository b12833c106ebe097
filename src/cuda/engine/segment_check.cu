// SPDX-License-Identifier: Apache-2.0
// The device check of CSR offsets. One launch reads offsets[0..segments]
// once: each block finds its first bad index and its longest segment, stores
// them in the workspace and takes a ticket; the last block folds the blocks'
// results in block order, writes them to the mapped host slot and resets the
// ticket (env.zeroed_counters must read zero after every call). The host
// waits for the stream, then reads the slot: a bad offset is reported before
// any kernel that would write has been launched.

#include "cuda/engine/segment_check.h"

#include "cuda/device_env.h"
#include "cuda/util/check.h"
#include "cuda/util/counters.h"

#include <cuda_runtime.h>

#include <algorithm>

namespace gpuprim::cuda {
namespace {

constexpr int kCheckThreads = 256;
constexpr uint64_t kNoBadIndex = ~uint64_t(0);

struct CheckResult {
    unsigned long long first_bad;
    unsigned long long longest;
    unsigned long long first_offset;  // offsets[0] and offsets[segments]: what the segments cover
    unsigned long long last_offset;
};

struct CheckArgs {
    const void *offsets;
    uint32_t offset_bytes;
    bool offsets_signed;
    uint64_t segments;
    uint64_t data_count;
    CheckResult *partials;  // one per block
    uint32_t *ticket;
    CheckResult *result;    // mapped host memory
};

// offsets[i] as a signed 64-bit value (U64 past INT64_MAX reads negative,
// which the rules reject), as the host's read_offset does.
__device__ __forceinline__ int64_t offset_at(const CheckArgs &args, uint64_t i) {
    if (args.offset_bytes == 4) {
        const uint32_t bits = __ldg(static_cast<const uint32_t *>(args.offsets) + i);
        return args.offsets_signed ? int64_t(int32_t(bits)) : int64_t(bits);
    }
    return int64_t(__ldg(static_cast<const unsigned long long *>(args.offsets) + i));
}

__global__ void __launch_bounds__(kCheckThreads) segment_check_kernel(const CheckArgs args) {
    __shared__ unsigned long long block_bad;
    __shared__ unsigned long long block_longest;
    __shared__ bool last_block;
    if (threadIdx.x == 0) {
        block_bad = kNoBadIndex;
        block_longest = 0;
    }
    __syncthreads();
    unsigned long long bad = kNoBadIndex, longest = 0;
    const uint64_t stride = uint64_t(gridDim.x) * kCheckThreads;
    for (uint64_t i = uint64_t(blockIdx.x) * kCheckThreads + threadIdx.x; i <= args.segments; i += stride) {
        const int64_t value = offset_at(args, i);
        const int64_t previous = i > 0 ? offset_at(args, i - 1) : 0;
        const bool wrong = offset_is_bad(args.offsets_signed, value, previous, i == 0, args.data_count);
        // A bad previous offset makes this length meaningless, but then the
        // call fails and the length is never used.
        if (!wrong && i > 0) longest = max(longest, (unsigned long long)(uint64_t(value) - uint64_t(previous)));
        if (wrong) {
            bad = i;  // the first of this thread: later ones are larger
            break;
        }
    }
    if (bad != kNoBadIndex) atomicMin(&block_bad, bad);
    if (longest != 0) atomicMax(&block_longest, longest);
    __syncthreads();
    if (threadIdx.x == 0) {
        args.partials[blockIdx.x] = {block_bad, block_longest};
        __threadfence();
        last_block = atomicAdd(args.ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last_block || threadIdx.x != 0) return;
    __threadfence();
    CheckResult total{kNoBadIndex, 0, 0, 0};
    for (uint32_t b = 0; b < gridDim.x; ++b) {
        const volatile CheckResult &part = args.partials[b];
        total.first_bad = min(total.first_bad, part.first_bad);
        total.longest = max(total.longest, part.longest);
    }
    volatile CheckResult &result = *args.result;
    result.first_bad = total.first_bad;
    result.longest = total.longest;
    result.first_offset = (unsigned long long)offset_at(args, 0);
    result.last_offset = (unsigned long long)offset_at(args, args.segments);
    *args.ticket = 0;
}

}  // namespace

SegmentSummary check_segments(const DeviceEnv &env, const SegmentLayout &layout) {
    if (!layout.offsets) return {layout.row_length, 0, layout.data_count};
    static_assert(sizeof(CheckResult) <= 64, "the result fits the host slot");
    if (env.host_slot_bytes < sizeof(CheckResult))
        fail(GPUPRIM_ERROR_INTERNAL, "segment check: the host result slot is too small");
    const uint64_t entries = layout.segments + 1;
    const uint64_t wanted = (entries + kCheckThreads * 8 - 1) / (kCheckThreads * 8);
    const uint32_t blocks = uint32_t(std::max<uint64_t>(1, std::min<uint64_t>(wanted, uint64_t(env.sm_count) * 4)));
    CheckArgs args{};
    args.offsets = layout.offsets;
    args.offset_bytes = layout.offset_bytes;
    args.offsets_signed = layout.offsets_signed;
    args.segments = layout.segments;
    args.data_count = layout.data_count;
    args.partials = static_cast<CheckResult *>(env.workspace->reserve(uint64_t(blocks) * sizeof(CheckResult)));
    // A workspace query reads no offsets: the bound, every segment possibly the whole data.
    if (env.measuring) return {layout.data_count, 0, layout.data_count};
    args.ticket = env.zeroed_counters + SegmentCounterWords::kCheckTicket;
    args.result = static_cast<CheckResult *>(env.host_slot_device);
    segment_check_kernel<<<blocks, kCheckThreads, 0, env.stream>>>(args);
    check_launch("segment offsets check launch");
    check(cudaStreamSynchronize(env.stream), "segment offsets check (cudaStreamSynchronize)");
    const volatile CheckResult &slot = *static_cast<CheckResult *>(env.host_slot);
    const CheckResult result{slot.first_bad, slot.longest, slot.first_offset, slot.last_offset};
    if (result.first_bad != kNoBadIndex) {
        // The two offsets the message names, read back from the device.
        const uint64_t i = result.first_bad;
        unsigned char pair[16] = {};
        const uint64_t first = i > 0 ? i - 1 : i;
        const char *base = static_cast<const char *>(layout.offsets);
        check(cudaMemcpyAsync(pair, base + first * layout.offset_bytes, (i - first + 1) * layout.offset_bytes,
                              cudaMemcpyDeviceToHost, env.stream),
              "segment offsets check (cudaMemcpyAsync)");
        check(cudaStreamSynchronize(env.stream), "segment offsets check (cudaStreamSynchronize)");
        const int64_t value = read_offset(pair, layout.offset_bytes, layout.offsets_signed, i - first);
        const int64_t previous = i > 0 ? read_offset(pair, layout.offset_bytes, layout.offsets_signed, 0) : 0;
        fail_bad_offset(layout, i, value, previous);
    }
    return {result.longest, result.first_offset, result.last_offset - result.first_offset};
}

SegmentLayout narrowed_to_covered(const SegmentLayout &layout, const SegmentSummary &summary) {
    SegmentLayout narrowed = layout;
    narrowed.origin = summary.covered_begin;
    narrowed.data_count = summary.covered_length;
    return narrowed;
}

}  // namespace gpuprim::cuda
