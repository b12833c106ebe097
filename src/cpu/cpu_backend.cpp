// SPDX-License-Identifier: Apache-2.0
// The CPU backend: complete for every operation and dtype, and the reference
// behaviour the CUDA backend is held to. It uses the same operator and key
// transform definitions (src/core/ops.h, key_transform.h) as the kernels.
// Every call uses the context's threads (cpu/parallel.h: oneTBB, OpenMP or
// none) and gives bitwise the same results for every thread count: reduce,
// dot and scan cut their input into fixed blocks (cpu/reduce_scan.h), and
// the sort's output is unique (cpu/sort.h).
#include "core/backend.h"
#include "core/checked_size.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/key_transform.h"
#include "core/ops.h"
#include "core/workspace.h"
#include "cpu/argreduce.h"
#include "cpu/merge_runs.h"
#include "cpu/parallel.h"
#include "cpu/plain_calls.h"
#include "cpu/reduce_by_key.h"
#include "cpu/reduce_scan.h"
#include "cpu/select.h"
#include "cpu/segmented.h"
#include "cpu/sort.h"
#include "cpu/sort_by_width.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>

#if defined(__linux__)
#  include <sys/mman.h>
#endif

namespace gpuprim {
namespace {

using cpu::Parallel;

class CpuBackend final : public Backend {
public:
    gpuprim_backend_t kind() const override { return GPUPRIM_BACKEND_CPU; }
    int32_t device_ordinal() const override { return -1; }
    const char *device_name() const override { return "CPU"; }

    void *allocate_memory(uint64_t bytes) override {
        if (bytes == 0) return nullptr;
        if (host_allocator_.present()) return host_allocator_.allocate(bytes, nullptr, "host memory");
        // 64-byte alignment suits every dtype and keeps vector loads aligned.
        // Large blocks: whole 2 MiB pages, which Linux is asked to back with
        // huge pages (as numpy does for its arrays): the memory-bound calls
        // then miss the TLB far less (a page walk costs more in a VM).
        constexpr uint64_t kHugePage = uint64_t(2) << 20;
        const uint64_t alignment = bytes >= kHugePage ? kHugePage : 64;
        // A size within 2 MiB of 2^64 rounds past it: no allocation either
        // way, said of the size asked for (not as an overflow of the caller's).
        uint64_t rounded = 0;
        const bool fits = add_fits(bytes, alignment - 1, &rounded);
        rounded &= ~(alignment - 1);
        if (!fits || rounded > SIZE_MAX)
            fail(GPUPRIM_ERROR_OUT_OF_MEMORY, "cannot allocate %llu bytes of host memory",
                 static_cast<unsigned long long>(bytes));
        void *memory = std::aligned_alloc(alignment, rounded);
        if (!memory)
            fail(GPUPRIM_ERROR_OUT_OF_MEMORY, "cannot allocate %llu bytes of host memory",
                 static_cast<unsigned long long>(bytes));
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        if (alignment == kHugePage) static_cast<void>(madvise(memory, rounded, MADV_HUGEPAGE));  // advice only
#endif
        return memory;
    }
    void deallocate(void *memory) noexcept override {
        if (!host_allocator_.deallocate(memory, nullptr)) std::free(memory);
    }
    void check_wrappable(const void *, uint64_t) override {}
    void upload(void *destination, const void *source, uint64_t bytes) override {
        copy_host_bytes(destination, source, bytes);
    }
    void download(void *destination, const void *source, uint64_t bytes) override {
        copy_host_bytes(destination, source, bytes);
    }
    void synchronize() override {}
    void check_deferred() override { offsets_report_.report_and_clear(); }

    // Scratch (the sort's packed keys) is kept between calls, as on CUDA.
    uint64_t workspace_bytes() const override { return workspace_.capacity(); }
    void release_workspace() override { workspace_.release(); }
    void reserve_workspace(uint64_t bytes, bool hold) override { workspace_.grow_and_hold(bytes, hold); }
    // One block: the side bytes a query reports here are 0, and any asked
    // for anyway are room in it too.
    void reserve_workspace_sizes(uint64_t main_bytes, uint64_t side_bytes, bool hold) override {
        workspace_.grow_and_hold(checked_add(main_bytes, side_bytes, "workspace"), hold);
    }
    void take_workspace(const WorkspaceSizes &sizes) override {
        workspace_.reserve(checked_add(sizes.main_bytes, sizes.side_bytes, "workspace"));
    }

    // While measuring, the calls that use no workspace return at once; the
    // others compute what they would reserve (measure_) and return.
    void begin_measure() override {
        measuring_ = true;
        measured_ = WorkspaceSizes{};
    }
    WorkspaceSizes end_measure() override {
        measuring_ = false;
        return measured_;
    }
    WorkspaceSizes largest_requests() const override {
        WorkspaceSizes sizes;
        sizes.main_bytes = workspace_.largest_request();
        return sizes;
    }

    void reduce(gpuprim_op_t op, gpuprim_dtype_t dtype, const void *input, uint64_t count,
                void *result, bool) override {
        if (measuring_) return;
        dispatch_dtype(dtype, [&](auto zero) {
            using T = decltype(zero);
            T value = cpu::reduce<T>(parallel_, op, static_cast<const T *>(input), count);
            std::memcpy(result, &value, sizeof value);
        });
    }

    void dot(gpuprim_dtype_t dtype, const void *a, const void *b, uint64_t count, void *result,
             bool) override {
        if (measuring_) return;
        dispatch_dtype(dtype, [&](auto zero) {
            using T = decltype(zero);
            T value = cpu::dot<T>(parallel_, static_cast<const T *>(a), static_cast<const T *>(b),
                                  count);
            std::memcpy(result, &value, sizeof value);
        });
    }

    void argreduce(gpuprim_op_t op, gpuprim_dtype_t dtype, const void *input, uint64_t count,
                   uint64_t *index) override {
        if (measuring_) return;
        *index = cpu::argreduce(parallel_, op, dtype, input, count);
    }

    // The calls of core/backend_calls.h: none takes workspace.
#define GPUPRIM_DEFINE_CPU_METHOD(name, parameters, arguments)                  \
    void name parameters override {                                             \
        if (!measuring_) cpu::name(parallel_, GPUPRIM_UNPARENTHESIZED arguments); \
    }
    GPUPRIM_PLAIN_BACKEND_CALLS(GPUPRIM_DEFINE_CPU_METHOD)
#undef GPUPRIM_DEFINE_CPU_METHOD

    void merge(const MergeRequest &request) override {
        if (!measuring_) cpu::merge_two(parallel_, request);
    }

    void select(const SelectRequest &request) override {
        if (!measuring_) cpu::select(parallel_, request);
    }

    void runs(const RunsRequest &request) override {
        if (!measuring_) cpu::runs(parallel_, request);
    }

    void reduce_by_key(const ReduceByKeyRequest &request) override {
        if (!measuring_) cpu::reduce_by_key(parallel_, request);
    }

    void group_by(const GroupByRequest &request) override {
        if (measuring_) return measure(cpu::group_by_bytes(parallel_, workspace_, request, &measured_.bounded));
        cpu::group_by(parallel_, workspace_, request);
    }

    void scan(gpuprim_op_t op, gpuprim_scan_kind_t kind, gpuprim_dtype_t dtype, const void *input,
              void *output, uint64_t count, const void *initial) override {
        if (measuring_) return;
        dispatch_dtype(dtype, [&](auto zero) {
            using T = decltype(zero);
            // A host pointer of any alignment: copied out.
            T start{};
            if (initial) std::memcpy(&start, initial, sizeof start);
            cpu::scan<T>(parallel_, op, kind == GPUPRIM_SCAN_EXCLUSIVE,
                         static_cast<const T *>(input), static_cast<T *>(output), count,
                         initial ? &start : nullptr);
        });
    }

    void sort(const SortRequest &request) override {
        if (request.count == 0) return;
        uint64_t bytes = 0;
        uint64_t *measure = measuring_ ? &bytes : nullptr;
        if (request.key_bytes <= 2) cpu::sort_narrow_keys(parallel_, workspace_, request, measure);
        else cpu::sort_wide_keys(parallel_, workspace_, request, measure);
        if (measure) this->measure(bytes);
    }

    void segmented_sort(const SortRequest &request, const SegmentLayout &layout) override {
        uint64_t bytes = 0;
        if (measuring_) {
            cpu::segmented_sort(parallel_, workspace_, request, layout, &bytes);
            return measure(bytes, layout.offsets != nullptr);
        }
        const bool argsort = request.values_are_indices;
        if (deferred_fault(layout, argsort ? request.largest_index : UINT64_MAX,
                           argsort ? SegmentedEntry::kArgsort : SegmentedEntry::kSort))
            return;
        cpu::segmented_sort(parallel_, workspace_, request, layout, nullptr);
    }
    void segmented_reduce(gpuprim_op_t op, gpuprim_dtype_t dtype, const SegmentLayout &layout, const void *input,
                          void *output) override {
        if (measuring_ || deferred_fault(layout, UINT64_MAX, SegmentedEntry::kReduce)) return;
        cpu::segmented_reduce(parallel_, op, dtype, layout, input, output);
    }
    void segmented_scan(gpuprim_op_t op, gpuprim_scan_kind_t kind, gpuprim_dtype_t dtype, const SegmentLayout &layout,
                        const void *input, void *output) override {
        if (measuring_ || deferred_fault(layout, UINT64_MAX, SegmentedEntry::kScan)) return;
        cpu::segmented_scan(parallel_, op, kind, dtype, layout, input, output);
    }
    void topk(const TopkRequest &request, const SegmentLayout &layout) override {
        uint64_t bytes = 0;
        if (measuring_) {
            cpu::topk(parallel_, workspace_, request, layout, &bytes);
            return measure(bytes, layout.offsets != nullptr);
        }
        if (deferred_fault(layout, request.largest_index, SegmentedEntry::kTopk)) return;
        cpu::topk(parallel_, workspace_, request, layout, nullptr);
    }

    void copy(void *destination, const void *source, uint64_t bytes) override {
        if (bytes != 0) std::memcpy(destination, source, bytes);
    }

    void add_to_indices(void *indices, uint64_t count, uint32_t index_bytes, uint64_t offset) override {
        if (index_bytes == 4) add_offset(static_cast<uint32_t *>(indices), count, static_cast<uint32_t>(offset));
        else if (index_bytes == 8) add_offset(static_cast<uint64_t *>(indices), count, offset);
        else fail(GPUPRIM_ERROR_INTERNAL, "add_to_indices: %u-byte indices", index_bytes);
    }

    void count_keys_below(const SortRequest &keys, const uint64_t *candidates, uint64_t candidate_count,
                          uint64_t *counts) override {
        switch (keys.key_bytes) {
        case 1: return count_below<uint8_t>(keys, candidates, candidate_count, counts);
        case 2: return count_below<uint16_t>(keys, candidates, candidate_count, counts);
        case 4: return count_below<uint32_t>(keys, candidates, candidate_count, counts);
        case 8: return count_below<uint64_t>(keys, candidates, candidate_count, counts);
        }
        fail(GPUPRIM_ERROR_INTERNAL, "count_keys_below: %u-byte keys", keys.key_bytes);
    }

    void merge_sorted_runs(const SortRequest &request, const uint64_t *run_starts, uint32_t runs, void *spare_keys,
                           void *spare_values) override {
        if (measuring_) return measure(cpu::merge_sorted_runs_bytes(request, runs));
        cpu::merge_sorted_runs(parallel_, workspace_, request, run_starts, runs, spare_keys, spare_values);
    }

    CpuBackend(int32_t threads, const HostAllocator &allocator)
        : parallel_(threads),
          workspace_([this](uint64_t bytes) { return allocate(bytes); },
                     [this](void *memory) { deallocate(memory); }) {
        host_allocator_ = allocator;
    }
    ~CpuBackend() override { workspace_.release(); }

private:
    // A wrapped buffer may overlap the caller's host range, so overlapping
    // ranges take memmove; apart ones memcpy, which is the same code in
    // glibc but 3x faster under AddressSanitizer (whose memmove is its own
    // plain loop: 8% of the sanitizer build's test time).
    static void copy_host_bytes(void *destination, const void *source, uint64_t bytes) {
        const auto to = reinterpret_cast<uintptr_t>(destination), from = reinterpret_cast<uintptr_t>(source);
        if (to - from >= bytes && from - to >= bytes)
            std::memcpy(destination, source, bytes);
        else
            std::memmove(destination, source, bytes);
    }

    // Pieces of the index and candidate loops: their bounds depend on the
    // count only (the results do not depend on them at all).
    static constexpr uint64_t kIndexGrain = 1 << 16;
    static constexpr uint64_t kCandidateGrain = 1 << 10;

    // A call on offsets in deferred mode checks them here first, as the CUDA
    // backend's device check does: on a fault it keeps the message for
    // check_deferred(), writes nothing and returns true.
    bool deferred_fault(const SegmentLayout &layout, uint64_t largest_index, SegmentedEntry entry) {
        if (!layout.offsets) return false;
        const uint64_t call = offsets_report_.next_call();
        if (!offsets_report_.deferred()) return false;
        const uint64_t limit = segment_length_limit(layout, largest_index);
        const SegmentFault fault = find_segment_fault_on_host(layout, limit);
        if (fault.kind == SegmentFaultKind::kNone) return false;
        offsets_report_.keep(entry, call, segment_fault_message(layout, limit, fault));
        return true;
    }

    // A measured call's workspace; bounded: it depends on the data (CSR
    // offsets: the longest segment), and this is the most it can take.
    void measure(uint64_t bytes, bool bounded = false) {
        measured_.main_bytes = std::max(measured_.main_bytes, bytes);
        measured_.bounded = measured_.bounded || bounded;
    }

    template <typename U>
    void add_offset(U *indices, uint64_t count, U offset) {
        parallel_.for_ranges(count, kIndexGrain, [&](uint64_t begin, uint64_t end) {
            for (uint64_t i = begin; i < end; ++i) indices[i] = U(indices[i] + offset);
        });
    }

    // counts[j]: the keys whose sort bits are below candidates[j], by binary
    // search (the keys are sorted by those bits).
    template <typename Bits>
    void count_below(const SortRequest &keys, const uint64_t *candidates, uint64_t candidate_count,
                     uint64_t *counts) {
        const Bits *data = static_cast<const Bits *>(keys.keys_in);
        const uint32_t begin_bit = keys.begin_bit, end_bit = sort_end_bit(keys);
        const KeyKind kind = keys.key_kind;
        const bool descending = keys.descending;
        parallel_.for_ranges(candidate_count, kCandidateGrain, [&](uint64_t first, uint64_t last) {
            for (uint64_t j = first; j < last; ++j) {
                const uint64_t candidate = candidates[j];
                uint64_t low = 0, high = keys.count;  // the answer lies in [low, high]
                while (low < high) {
                    const uint64_t middle = low + (high - low) / 2;
                    const uint64_t bits =
                        sort_bits(to_radix_key<Bits>(data[middle], kind, descending), begin_bit, end_bit);
                    if (bits < candidate) low = middle + 1;
                    else high = middle;
                }
                counts[j] = low;
            }
        });
    }

    Parallel parallel_;
    Workspace workspace_;
    WorkspaceSizes measured_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(int32_t threads, const HostAllocator &allocator) {
    return std::make_unique<CpuBackend>(threads, allocator);
}

}  // namespace gpuprim
