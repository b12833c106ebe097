// SPDX-License-Identifier: Apache-2.0
// The one harness of the kernel checkers (check_reduce, check_scan,
// check_sort): a DeviceEnv like the backend's (stream, device properties,
// workspace, zeroed counters) without a context, the CUDA error macro, the
// dtype of a C type (from the library's dtype table) and a median timer.
// Dev tools only: built with -DGPUPRIM_BUILD_TOOLS=ON (tools/kernel_check/).
#pragma once

#include "core/dtype_table.h"
#include "core/element_traits.h"
#include "core/ops.h"
#include "core/workspace.h"
#include "cuda/device_env.h"
#include "cuda/util/code_arch.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#define CK(call)                                                                                        \
    do {                                                                                                \
        cudaError_t e_ = (call);                                                                        \
        if (e_ != cudaSuccess) {                                                                        \
            std::printf("CUDA error %s at %s:%d: %s\n", cudaGetErrorName(e_), __FILE__, __LINE__, #call); \
            std::exit(2);                                                                               \
        }                                                                                               \
    } while (0)

namespace kernel_check {

// The dtype whose C type is T (the first such entry of the table).
template <typename T>
constexpr gpuprim_dtype_t dtype_of() {
#define GPUPRIM_DTYPE_OF(e, type, name) \
    if constexpr (std::is_same_v<T, type>) return e; else
    GPUPRIM_DTYPE_TABLE(GPUPRIM_DTYPE_OF)
#undef GPUPRIM_DTYPE_OF
    return gpuprim::kDtypeFirst;
}
template <typename T>
struct DT {
    static constexpr gpuprim_dtype_t v = dtype_of<T>();
};

// Device 0 as the backend sees it. blocking_stream: a stream that orders
// with plain cudaMemcpy/cudaMemset on the legacy default stream.
struct KernelEnv {
    gpuprim::cuda::DeviceEnv env{};
    gpuprim::Workspace workspace;
    cudaDeviceProp properties{};

    explicit KernelEnv(bool blocking_stream = false)
        : workspace(
              [](uint64_t bytes) {
                  void *p = nullptr;
                  CK(cudaMalloc(&p, bytes));
                  return p;
              },
              [](void *p) { cudaFree(p); }) {
        CK(cudaSetDevice(0));
        CK(cudaGetDeviceProperties(&properties, 0));
        if (blocking_stream) CK(cudaStreamCreate(&env.stream));
        else CK(cudaStreamCreateWithFlags(&env.stream, cudaStreamNonBlocking));
        env.device_ordinal = 0;
        env.sm_count = properties.multiProcessorCount;
        env.code_arch = gpuprim::cuda::device_code_arch();
        env.max_threads_per_sm = properties.maxThreadsPerMultiProcessor;
        env.l2_bytes = properties.l2CacheSize;
        env.max_shared_per_block_optin = properties.sharedMemPerBlockOptin;
        env.workspace = &workspace;
        CK(cudaMalloc(&env.zeroed_counters, gpuprim::cuda::kZeroedCounterWords * 4));
        CK(cudaMemset(env.zeroed_counters, 0, gpuprim::cuda::kZeroedCounterWords * 4));
    }
    void print_device() const {
        std::printf("device %s, %d SMs, cc %d.%d, code sm_%d, L2 %zu MB\n", properties.name, env.sm_count,
                    properties.major, properties.minor, env.code_arch, env.l2_bytes >> 20);
    }
    // True if every zeroed counter word is zero (every kernel left its words so).
    bool counters_zero() const {
        std::vector<uint32_t> words(gpuprim::cuda::kZeroedCounterWords);
        CK(cudaStreamSynchronize(env.stream));
        CK(cudaMemcpy(words.data(), env.zeroed_counters, words.size() * 4, cudaMemcpyDeviceToHost));
        for (uint32_t w : words)
            if (w) return false;
        return true;
    }
};

inline float median(std::vector<float> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

// Mean device time (us) per launch of `batch` back-to-back launches between
// two events (what a profiler shows per kernel, less the events' cost): the
// median over `rounds` batches, after `warmups` untimed launches. launch(i)
// gets a running index (warm-ups from 0, then the timed launches from 0).
inline float batch_time_us(cudaStream_t stream, const std::function<void(int)> &launch, int batch,
                           int rounds, int warmups) {
    cudaEvent_t start, stop;
    CK(cudaEventCreate(&start));
    CK(cudaEventCreate(&stop));
    for (int i = 0; i < warmups; ++i) launch(i);
    std::vector<float> ms;
    for (int r = 0; r < rounds; ++r) {
        CK(cudaEventRecord(start, stream));
        for (int i = 0; i < batch; ++i) launch(r * batch + i);
        CK(cudaEventRecord(stop, stream));
        CK(cudaEventSynchronize(stop));
        float t;
        CK(cudaEventElapsedTime(&t, start, stop));
        ms.push_back(t);
    }
    CK(cudaGetLastError());
    CK(cudaEventDestroy(start));
    CK(cudaEventDestroy(stop));
    return median(ms) * 1000.f / batch;
}

// Median device time (us) of `reps` launches, each between two events, after
// `warmups` untimed ones; launch(i) gets the launch's index.
inline float launch_time_us(cudaStream_t stream, const std::function<void(int)> &launch, int reps,
                            int warmups) {
    return batch_time_us(stream, launch, 1, reps, warmups);
}

// Median of `reps` timed runs in ms (after 3 warm-ups); run(copy) with
// copy = rep % 3.
inline double median_ms(cudaStream_t stream, int reps, const std::function<void(int)> &run) {
    return launch_time_us(stream, [&](int i) { run(i % 3); }, reps, 3) / 1000.0;
}

// A value for a failure message: floats with their bits.
template <typename T>
std::string show(T v) {
    char buf[96];
    if constexpr (std::is_floating_point_v<T>)
        std::snprintf(buf, sizeof buf, "%.17g [0x%llx]", double(v),
                      (unsigned long long)gpuprim::bit_cast<gpuprim::bits_t<T>>(v));
    else if constexpr (std::is_signed_v<T>)
        std::snprintf(buf, sizeof buf, "%lld", (long long)v);
    else
        std::snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    return buf;
}

}  // namespace kernel_check
