// SPDX-License-Identifier: Apache-2.0
// The CUDA backend's host side: device selection, the stream, memory, the
// workspace cache and the pinned result slot. The algorithms live in their
// own folders, one per primitive, each behind its entry header (LAYERS.txt).
#include "core/backend.h"
#include "core/error.h"
#include "cuda/argreduce/argreduce.h"
#include "cuda/device_env.h"
#include "cuda/distributed/distributed.h"
#include "cuda/engine/reserve_first.h"
#include "cuda/engine/segment_check.h"
#include "cuda/group_by/group_by.h"
#include "cuda/merge/merge.h"
#include "cuda/reduce/reduce.h"
#include "cuda/reduce_by_key/reduce_by_key.h"
#include "cuda/scan/scan.h"
#include "cuda/select/select.h"
#include "cuda/segmented_scan/segmented_scan.h"
#include "cuda/segmented_sort/segmented_sort.h"
#include "cuda/sort/sort.h"
#include "cuda/topk/topk.h"
#include "cuda/util/capture.h"
#include "cuda/util/code_arch.h"

#include <cuda_runtime.h>

#include <cstring>
#include <string>

namespace gpuprim {
namespace cuda {

// The drivers of the calls of core/backend_calls.h, each its primitive's
// front door (<primitive>/<primitive>.h declares the same): declared from
// the list, so that a new one needs no include here.
#define GPUPRIM_DECLARE_CUDA_CALL(name, parameters, arguments) \
    void name(const DeviceEnv &env, GPUPRIM_UNPARENTHESIZED parameters);
GPUPRIM_PLAIN_BACKEND_CALLS(GPUPRIM_DECLARE_CUDA_CALL)
#undef GPUPRIM_DECLARE_CUDA_CALL

namespace {

// Makes the context's device current for the duration of a call and puts the
// caller's device back afterwards: a library must not change a thread's
// current device behind its back.
class DeviceScope {
public:
    explicit DeviceScope(int device) {
        check(cudaGetDevice(&previous_), "cudaGetDevice");
        if (previous_ != device) check(cudaSetDevice(device), "cudaSetDevice");
    }
    ~DeviceScope() {
        int current = previous_;
        if (cudaGetDevice(&current) == cudaSuccess && current != previous_)
            (void)cudaSetDevice(previous_);
    }
    DeviceScope(const DeviceScope &) = delete;
    DeviceScope &operator=(const DeviceScope &) = delete;

private:
    int previous_ = 0;
};

int device_count() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return count;
}

// Why no CUDA device can be used, in the words a user needs: no driver at
// all, a driver too old for the runtime linked in, or a driver without a GPU.
[[noreturn]] void fail_no_device(cudaError_t counted, int count) {
    int driver = 0, runtime = 0;
    // cudaDriverGetVersion gives 0 when no driver is installed.
    if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
    if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) runtime = CUDART_VERSION;
    (void)cudaGetLastError();
    if (driver == 0)
        fail(GPUPRIM_ERROR_BACKEND_UNAVAILABLE,
             "no NVIDIA driver found (the CUDA runtime could not load libcuda; %s)", cudaGetErrorName(counted));
    if (counted == cudaErrorInsufficientDriver)
        fail(GPUPRIM_ERROR_BACKEND_UNAVAILABLE,
             "NVIDIA driver too old: it supports CUDA %d.%d, this libgpuprim's CUDA runtime is %d.%d "
             "(update the driver)",
             driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
    if (counted == cudaErrorNoDevice || (counted == cudaSuccess && count == 0))
        fail(GPUPRIM_ERROR_BACKEND_UNAVAILABLE,
             "no CUDA device found (the NVIDIA driver, CUDA %d.%d, is installed but reports no GPU)",
             driver / 1000, driver % 1000 / 10);
    fail(GPUPRIM_ERROR_BACKEND_UNAVAILABLE, "no usable CUDA device: %s: %s", cudaGetErrorName(counted),
         cudaGetErrorString(counted));
}

// Why calls cannot be captured into a CUDA graph (refuse_during_capture).
constexpr const char *kHostResultWaits =
    "the result goes to the host, which waits for the device (use the _to_buffer form)";
constexpr const char *kOffsetsCheckWaits =
    "the call waits for the device's check of its CSR offsets (uniform rows can be captured, and so can calls "
    "on offsets whose check is deferred: gpuprim_context_set_offsets_check)";
constexpr const char *kHostCountWaits =
    "the count goes to the host, which waits for the device (give only a device count buffer)";

class CudaBackend final : public Backend {
public:
    CudaBackend(int32_t ordinal, void *user_stream, const HostAllocator &allocator)
        : workspace_([this](uint64_t bytes) { return allocate(bytes); },
                     [this](void *memory) { deallocate(memory); }),
          side_workspace_([this](uint64_t bytes) { return allocate(bytes); },
                          [this](void *memory) { deallocate(memory); }),
          main_recorder_(Workspace::Record{}),
          side_recorder_(Workspace::Record{}) {
        host_allocator_ = allocator;
        int count = 0;
        cudaError_t counted = cudaGetDeviceCount(&count);
        if (counted != cudaSuccess || count == 0) fail_no_device(counted, count);
        if (ordinal >= count)
            fail(GPUPRIM_ERROR_BACKEND_UNAVAILABLE,
                 "CUDA device %d asked for, but only %d device(s) exist", ordinal, count);
        env_.device_ordinal = ordinal;
        DeviceScope scope(ordinal);

        cudaDeviceProp properties;
        check(cudaGetDeviceProperties(&properties, ordinal), "cudaGetDeviceProperties");
        name_ = properties.name;
        env_.sm_count = properties.multiProcessorCount;
        env_.max_threads_per_sm = properties.maxThreadsPerMultiProcessor;
        env_.l2_bytes = static_cast<size_t>(properties.l2CacheSize);
        env_.max_shared_per_block_optin = properties.sharedMemPerBlockOptin;
        // The kernels stage tiles with cp.async and are built for sm_80 and
        // newer: an older device would only fail at its first launch.
        if (properties.major * 10 + properties.minor < 80)
            fail(GPUPRIM_ERROR_BACKEND_UNAVAILABLE,
                 "CUDA device %d (%s) has compute capability %d.%d; libgpuprim needs 8.0 or newer",
                 ordinal, name_.c_str(), properties.major, properties.minor);
        env_.code_arch = device_code_arch();

        if (user_stream) {
            env_.stream = static_cast<cudaStream_t>(user_stream);
        } else {
            check(cudaStreamCreateWithFlags(&env_.stream, cudaStreamNonBlocking),
                  "cudaStreamCreateWithFlags");
            owns_stream_ = true;
        }
        try {
            // The counters, then the deferred offsets check's skip word.
            constexpr size_t kWords = kZeroedCounterWords + 1;
            env_.zeroed_counters = static_cast<uint32_t *>(allocate(kWords * sizeof(uint32_t)));
            check(cudaMemsetAsync(env_.zeroed_counters, 0, kWords * sizeof(uint32_t), env_.stream),
                  "cudaMemsetAsync (counters)");
            env_.offsets_skip = env_.zeroed_counters + kZeroedCounterWords;
            // Host-result reductions land here straight from the kernel: no
            // extra copy launch, one synchronization.
            check(cudaHostAlloc(&host_result_, kHostResultBytes, cudaHostAllocMapped),
                  "cudaHostAlloc (result slot)");
            check(cudaHostGetDevicePointer(&host_result_device_, host_result_, 0),
                  "cudaHostGetDevicePointer");
            std::memset(host_result_, 0, kHostResultBytes);
            check(cudaStreamSynchronize(env_.stream), "cudaStreamSynchronize");
        } catch (...) {
            free_resources();
            throw;
        }
        env_.workspace = &workspace_;
        env_.side_workspace = &side_workspace_;
        env_.kernels = &kernels_;
        env_.host_slot = host_result_;
        env_.host_slot_device = host_result_device_;
        env_.host_slot_bytes = kDeferredRecordAt;
        env_.deferred_record = static_cast<char *>(host_result_device_) + kDeferredRecordAt;
    }

    ~CudaBackend() override {
        try {
            DeviceScope scope(env_.device_ordinal);
            workspace_.release();
            side_workspace_.release();
            free_resources();
        } catch (...) {
            // Nothing more can be done from a destructor.
        }
    }

    gpuprim_backend_t kind() const override { return GPUPRIM_BACKEND_CUDA; }
    int32_t device_ordinal() const override { return env_.device_ordinal; }
    const char *device_name() const override { return name_.c_str(); }

    void *allocate_memory(uint64_t bytes) override {
        if (bytes == 0) return nullptr;
        DeviceScope scope(env_.device_ordinal);
        // A block taken during capture would be taken once, not at each
        // replay, and a growing workspace would free the block the graph holds.
        refuse_during_capture("allocating device memory",
                              "the context's memory cannot change while its stream captures (make buffers "
                              "before capture; warm the calls up or reserve the workspace before it)");
        void *memory = nullptr;
        // Whole 16-byte words: cudaMalloc hands out 256-byte granules anyway,
        // and NCCL's transfer kernels read a buffer's last partial word whole
        // (compute-sanitizer flags that on a 7-byte buffer).
        const uint64_t granted = bytes > UINT64_MAX - 15 ? bytes : (bytes + 15) & ~uint64_t(15);
        if (host_allocator_.present()) return host_allocator_.allocate(granted, env_.stream, "device memory");
        cudaError_t result = cudaMalloc(&memory, granted);
        if (result != cudaSuccess) {
            (void)cudaGetLastError();
            if (result == cudaErrorMemoryAllocation)
                fail(GPUPRIM_ERROR_OUT_OF_MEMORY,
                     "cannot allocate %llu bytes of device memory on CUDA device %d",
                     static_cast<unsigned long long>(bytes), env_.device_ordinal);
            check(result, "cudaMalloc");
        }
        return memory;
    }

    void deallocate(void *memory) noexcept override {
        if (!memory) return;
        int previous = 0;
        bool switched = cudaGetDevice(&previous) == cudaSuccess && previous != env_.device_ordinal &&
                        cudaSetDevice(env_.device_ordinal) == cudaSuccess;
        if (!host_allocator_.deallocate(memory, env_.stream)) (void)cudaFree(memory);
        if (switched) (void)cudaSetDevice(previous);
    }

    void check_wrappable(const void *data, uint64_t) override {
        cudaPointerAttributes attributes;
        cudaError_t result = cudaPointerGetAttributes(&attributes, data);
        if (result != cudaSuccess) {
            (void)cudaGetLastError();
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "cannot wrap %p: %s: %s", data,
                 cudaGetErrorName(result), cudaGetErrorString(result));
        }
        if (attributes.type == cudaMemoryTypeManaged) return;
        if (attributes.type != cudaMemoryTypeDevice)
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
                 "cannot wrap %p: it is %s memory, not device memory; upload host data into a "
                 "buffer instead",
                 data, attributes.type == cudaMemoryTypeHost ? "pinned host" : "unregistered host");
        if (attributes.device != env_.device_ordinal)
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
                 "cannot wrap %p: it is memory of CUDA device %d, the context runs on device %d",
                 data, attributes.device, env_.device_ordinal);
    }

    void upload(void *destination, const void *source, uint64_t bytes) override {
        DeviceScope scope(env_.device_ordinal);
        refuse_during_capture("gpuprim_buffer_upload", "it copies from host memory and waits for the device");
        check(cudaMemcpyAsync(destination, source, bytes, cudaMemcpyHostToDevice, env_.stream),
              "upload (cudaMemcpyAsync host to device)");
        check(cudaStreamSynchronize(env_.stream), "upload (cudaStreamSynchronize)");
    }

    void download(void *destination, const void *source, uint64_t bytes) override {
        DeviceScope scope(env_.device_ordinal);
        refuse_during_capture("gpuprim_buffer_download", "it waits for the device");
        check(cudaMemcpyAsync(destination, source, bytes, cudaMemcpyDeviceToHost, env_.stream),
              "download (cudaMemcpyAsync device to host)");
        check(cudaStreamSynchronize(env_.stream), "download (cudaStreamSynchronize)");
    }

    void synchronize() override {
        DeviceScope scope(env_.device_ordinal);
        refuse_during_capture("gpuprim_context_synchronize", "it waits for the device");
        check(cudaStreamSynchronize(env_.stream), "cudaStreamSynchronize");
    }

    void check_deferred() override {
        DeviceScope scope(env_.device_ordinal);
        refuse_during_capture("gpuprim_context_check_deferred", "it waits for the device");
        check(cudaStreamSynchronize(env_.stream), "gpuprim_context_check_deferred (cudaStreamSynchronize)");
        report_deferred();
    }

    uint64_t workspace_bytes() const override { return workspace_.capacity() + side_workspace_.capacity(); }
    void release_workspace() override {
        workspace_.release();
        side_workspace_.release();
    }
    void reserve_workspace(uint64_t bytes, bool hold) override {
        DeviceScope scope(env_.device_ordinal);
        const uint64_t held = workspace_bytes();
        const uint64_t main_bytes = bytes > held ? workspace_.capacity() + (bytes - held) : 0;
        workspace_.grow_and_hold(main_bytes, hold);
        side_workspace_.hold(hold);
    }
    void reserve_workspace_sizes(uint64_t main_bytes, uint64_t side_bytes, bool hold) override {
        DeviceScope scope(env_.device_ordinal);
        Workspace::grow_and_hold(workspace_, main_bytes, side_workspace_, side_bytes, hold);
    }
    void take_workspace(const WorkspaceSizes &sizes) override {
        DeviceScope scope(env_.device_ordinal);
        workspace_.reserve(sizes.main_bytes);
        side_workspace_.reserve(sizes.side_bytes);
    }

    // The query's calls run on measure_env_: env_ with recorders for
    // workspaces and `measuring` set (DeviceEnv).
    void begin_measure() override {
        main_recorder_.forget_requests();
        side_recorder_.forget_requests();
        measure_env_ = env_;
        measure_env_.workspace = &main_recorder_;
        measure_env_.side_workspace = &side_recorder_;
        measure_env_.measuring = true;
        measured_bounded_ = false;
        measuring_ = true;
    }
    WorkspaceSizes end_measure() override {
        measuring_ = false;
        WorkspaceSizes sizes;
        sizes.main_bytes = main_recorder_.largest_request();
        sizes.side_bytes = side_recorder_.largest_request();
        sizes.bounded = measured_bounded_;
        return sizes;
    }
    WorkspaceSizes largest_requests() const override {
        WorkspaceSizes sizes;
        sizes.main_bytes = workspace_.largest_request();
        sizes.side_bytes = side_workspace_.largest_request();
        return sizes;
    }
    void refuse_during_capture(const char *call, const char *why) const override {
        cuda::refuse_during_capture(env_.stream, call, why);
    }

    void reduce(gpuprim_op_t op, gpuprim_dtype_t dtype, const void *input, uint64_t count,
                void *result, bool result_on_host) override {
        DeviceScope scope(env_.device_ordinal);
        if (!result_on_host) return cuda::reduce(call_env(), op, dtype, input, count, result);
        refuse_call_during_capture("gpuprim_reduce", kHostResultWaits);
        cuda::reduce(call_env(), op, dtype, input, count, host_result_device_);
        finish_host_result(result, dtype);
    }

    void dot(gpuprim_dtype_t dtype, const void *a, const void *b, uint64_t count, void *result,
             bool result_on_host) override {
        DeviceScope scope(env_.device_ordinal);
        if (!result_on_host) return cuda::dot(call_env(), dtype, a, b, count, result);
        refuse_call_during_capture("gpuprim_dot", kHostResultWaits);
        cuda::dot(call_env(), dtype, a, b, count, host_result_device_);
        finish_host_result(result, dtype);
    }

    void argreduce(gpuprim_op_t op, gpuprim_dtype_t dtype, const void *input, uint64_t count,
                   uint64_t *index) override {
        DeviceScope scope(env_.device_ordinal);
        refuse_call_during_capture("gpuprim_argreduce", "the position goes to the host, which waits for the device");
        cuda::argreduce(call_env(), op, dtype, input, count, static_cast<uint64_t *>(host_result_device_));
        finish_host_result(index, sizeof(uint64_t), "argreduce (cudaStreamSynchronize)");
    }

    // The calls of core/backend_calls.h.
#define GPUPRIM_DEFINE_CUDA_METHOD(name, parameters, arguments)   \
    void name parameters override {                              \
        DeviceScope scope(env_.device_ordinal);                  \
        cuda::name(call_env(), GPUPRIM_UNPARENTHESIZED arguments); \
    }
    GPUPRIM_PLAIN_BACKEND_CALLS(GPUPRIM_DEFINE_CUDA_METHOD)
#undef GPUPRIM_DEFINE_CUDA_METHOD

    void scan(gpuprim_op_t op, gpuprim_scan_kind_t kind, gpuprim_dtype_t dtype, const void *input,
              void *output, uint64_t count, const void *initial) override {
        DeviceScope scope(env_.device_ordinal);
        cuda::scan(call_env(), op, kind, dtype, input, output, count, initial);
    }

    void sort(const SortRequest &request) override {
        DeviceScope scope(env_.device_ordinal);
        cuda::sort(call_env(), request);
    }

    void segmented_sort(const SortRequest &request, const SegmentLayout &layout) override {
        DeviceScope scope(env_.device_ordinal);
        const DeviceEnv env = segmented_env(
            request.values_are_indices ? SegmentedEntry::kArgsort : SegmentedEntry::kSort, layout);
        reserve_then_run(env, layout, [&](const DeviceEnv &run_env) { cuda::segmented_sort(run_env, request, layout); });
    }

    void topk(const TopkRequest &request, const SegmentLayout &layout) override {
        DeviceScope scope(env_.device_ordinal);
        const DeviceEnv env = segmented_env(SegmentedEntry::kTopk, layout);
        reserve_then_run(env, layout, [&](const DeviceEnv &run_env) { cuda::topk(run_env, request, layout); });
    }

    void segmented_reduce(gpuprim_op_t op, gpuprim_dtype_t dtype, const SegmentLayout &layout, const void *input,
                          void *output) override {
        DeviceScope scope(env_.device_ordinal);
        const DeviceEnv env = segmented_env(SegmentedEntry::kReduce, layout);
        reserve_then_run(env, layout, [&](const DeviceEnv &run_env) {
            cuda::segmented_reduce(run_env, op, dtype, layout, input, output);
        });
    }

    void segmented_scan(gpuprim_op_t op, gpuprim_scan_kind_t kind, gpuprim_dtype_t dtype, const SegmentLayout &layout,
                        const void *input, void *output) override {
        DeviceScope scope(env_.device_ordinal);
        const DeviceEnv env = segmented_env(SegmentedEntry::kScan, layout);
        reserve_then_run(env, layout, [&](const DeviceEnv &run_env) {
            cuda::segmented_scan(run_env, op, kind, dtype, layout, input, output);
        });
    }

    void copy(void *destination, const void *source, uint64_t bytes) override {
        if (bytes == 0) return;
        DeviceScope scope(env_.device_ordinal);
        check(cudaMemcpyAsync(destination, source, bytes, cudaMemcpyDeviceToDevice, env_.stream),
              "copy (cudaMemcpyAsync device to device)");
    }

    void add_to_indices(void *indices, uint64_t count, uint32_t index_bytes, uint64_t offset) override {
        DeviceScope scope(env_.device_ordinal);
        cuda::add_to_indices(env_, indices, count, index_bytes, offset);
    }

    void count_keys_below(const SortRequest &keys, const uint64_t *candidates, uint64_t candidate_count,
                          uint64_t *counts) override {
        DeviceScope scope(env_.device_ordinal);
        cuda::count_keys_below(env_, keys, candidates, candidate_count, counts);
    }

    void merge_sorted_runs(const SortRequest &request, const uint64_t *run_starts, uint32_t runs, void *spare_keys,
                           void *spare_values) override {
        DeviceScope scope(env_.device_ordinal);
        cuda::merge_sorted_runs(call_env(), request, run_starts, runs, spare_keys, spare_values);
    }

    void merge(const MergeRequest &request) override {
        DeviceScope scope(env_.device_ordinal);
        cuda::merge_two(call_env(), request);
    }

    void select(const SelectRequest &request) override {
        DeviceScope scope(env_.device_ordinal);
        if (request.kept.host) refuse_call_during_capture("gpuprim_select / gpuprim_partition", kHostCountWaits);
        cuda::select_elements(call_env(), request);
    }

    void runs(const RunsRequest &request) override {
        DeviceScope scope(env_.device_ordinal);
        if (request.runs.host)
            refuse_call_during_capture("gpuprim_unique / gpuprim_run_length_encode", kHostCountWaits);
        cuda::find_runs(call_env(), request);
    }

    void reduce_by_key(const ReduceByKeyRequest &request) override {
        DeviceScope scope(env_.device_ordinal);
        if (request.runs.host) refuse_call_during_capture("gpuprim_reduce_by_key", kHostCountWaits);
        cuda::reduce_by_key(call_env(), request);
    }

    void group_by(const GroupByRequest &request) override {
        DeviceScope scope(env_.device_ordinal);
        if (request.groups.host) refuse_call_during_capture("gpuprim_group_by", kHostCountWaits);
        cuda::group_by(call_env(), request);
    }

    void *native_stream() const override { return static_cast<void *>(env_.stream); }

private:
    // The pinned slot: host results first, then the deferred offsets
    // check's record.
    static constexpr size_t kDeferredRecordAt = 64;
    static constexpr size_t kHostResultBytes = kDeferredRecordAt + sizeof(DeferredRecord);

    // The environment of a segmented call: on offsets it is numbered for
    // the deferred report and, unless its check is deferred, refused while
    // the stream captures (the check's result is waited for).
    // A query measures the mode's paths; it numbers nothing and, reading
    // no offsets, gives sizes bounded by what they may hold.
    DeviceEnv segmented_env(SegmentedEntry entry, const SegmentLayout &layout) {
        DeviceEnv env = call_env();
        if (!layout.offsets) return env;
        env.defer_offsets_check = offsets_check_deferred();
        if (measuring_) {
            measured_bounded_ = true;
            return env;
        }
        if (!env.defer_offsets_check) refuse_during_capture(segmented_entry_name(entry), kOffsetsCheckWaits);
        env.offsets_entry = uint32_t(entry);
        env.offsets_call = offsets_report_.next_call();
        return env;
    }

    // A deferred offsets check runs as a kernel of its own before the
    // driver takes its workspace: growth refused while the stream captures
    // would fail the call (NOT_CAPTURABLE) with the check already in the
    // caller's graph. The calls that capture size their workspace as a
    // query does (by the offsets' bound; no count is read back), so a pass
    // on recorders (nothing enqueued) gives what they will reserve: taken
    // first. Outside capture the driver reserves what it then finds it
    // needs, which may be less than the bound.
    template <typename Driver>
    static void reserve_then_run(const DeviceEnv &env, const SegmentLayout &layout, Driver &&driver) {
        if (layout.offsets && env.defer_offsets_check && !env.measuring && stream_capturing(env.stream)) {
            const WorkspaceNeeds needs = workspace_needs(env, driver);
            env.workspace->reserve(needs.main_bytes);
            env.side_workspace->reserve(needs.side_bytes);
        }
        try {
            driver(env);
        } catch (...) {
            // A refusal while capturing comes before anything is enqueued
            // (the workspace was taken first): nothing to take back, and a
            // kernel now would be a node in the caller's graph.
            if (check_is_deferred(env, layout) && !may_be_capturing(env.stream)) discard_deferred_fault(env);
            throw;
        }
    }

    // After a wait: moves a failure the device kept into the report, then
    // reports it (clearing both).
    void report_deferred() {
        volatile DeferredRecord &record =
            *reinterpret_cast<DeferredRecord *>(static_cast<char *>(host_result_) + kDeferredRecordAt);
        if (record.kind != 0) {
            SegmentLayout layout{};
            layout.data_count = record.data_count;
            layout.offsets_signed = record.offsets_signed != 0;
            layout.max_length = record.max_length;
            const SegmentFault fault{SegmentFaultKind(record.kind), record.index, record.value, record.previous};
            const auto entry = record.entry < uint32_t(SegmentedEntry::kCount) ? SegmentedEntry(record.entry)
                                                                                : SegmentedEntry::kCount;
            offsets_report_.keep(entry, record.call, segment_fault_message(layout, record.limit, fault));
            offsets_report_.count_more(record.more);
            record.more = 0;
            record.kind = 0;
        }
        offsets_report_.report_and_clear();
    }

    // What a primitive call runs on: env_, or measure_env_ during a query.
    DeviceEnv &call_env() { return measuring_ ? measure_env_ : env_; }
    // A primitive call's refusal: a query enqueues nothing, so it measures
    // while capturing too.
    void refuse_call_during_capture(const char *call, const char *why) const {
        if (!measuring_) refuse_during_capture(call, why);
    }

    void finish_host_result(void *result, gpuprim_dtype_t dtype) {
        finish_host_result(result, dtype_size(dtype), "reduce (cudaStreamSynchronize)");
    }
    // The kernel's result in the pinned slot (bytes <= kHostResultBytes),
    // copied to the caller's host memory once the stream has reached it.
    void finish_host_result(void *result, size_t bytes, const char *what) {
        if (measuring_) return;  // nothing ran: the result is left as it was
        check(cudaStreamSynchronize(env_.stream), what);
        std::memcpy(result, host_result_, bytes);
    }

    void free_resources() noexcept {
        // Not a stream that captures: synchronizing it would invalidate the
        // caller's capture (a context made on such a stream is refused,
        // NOT_CAPTURABLE, before it enqueued anything).
        cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
        if (env_.stream && cudaStreamIsCapturing(env_.stream, &capture) != cudaSuccess) (void)cudaGetLastError();
        if (env_.stream && capture == cudaStreamCaptureStatusNone) (void)cudaStreamSynchronize(env_.stream);
        if (host_result_) (void)cudaFreeHost(host_result_);
        if (env_.zeroed_counters) deallocate(env_.zeroed_counters);
        if (owns_stream_ && env_.stream) (void)cudaStreamDestroy(env_.stream);
        host_result_ = nullptr;
        env_.zeroed_counters = nullptr;
        env_.stream = nullptr;
        (void)cudaGetLastError();
    }

    DeviceEnv env_{};
    Workspace workspace_;
    Workspace side_workspace_;
    Workspace main_recorder_;
    Workspace side_recorder_;
    DeviceEnv measure_env_{};
    bool measured_bounded_ = false;
    KernelCache kernels_;
    std::string name_;
    bool owns_stream_ = false;
    void *host_result_ = nullptr;
    void *host_result_device_ = nullptr;
};

}  // namespace
}  // namespace cuda

bool cuda_backend_built() { return true; }

bool cuda_device_usable(int32_t device_ordinal) {
    return device_ordinal >= 0 && device_ordinal < cuda::device_count();
}

std::unique_ptr<Backend> make_cuda_backend(int32_t device_ordinal, void *stream, const HostAllocator &allocator) {
    return std::make_unique<cuda::CudaBackend>(device_ordinal, stream, allocator);
}

}  // namespace gpuprim
