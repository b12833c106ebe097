// SPDX-License-Identifier: Apache-2.0
// Shared by the sort check driver (check_sort.cu), the CUB bar
// (cub_bar.cu) and the shape sweep (sweep_shapes.cu). Dev only.
#pragma once

#include "core/backend.h"
#include "core/workspace.h"
#include "cuda/device_env.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            std::exit(2);                                                                          \
        }                                                                                          \
    } while (0)

struct TestEnv {
    gpuprim::cuda::DeviceEnv env{};
    gpuprim::Workspace workspace;
    TestEnv()
        : workspace(
              [](uint64_t bytes) {
                  void *p = nullptr;
                  CK(cudaMalloc(&p, bytes));
                  return p;
              },
              [](void *p) { cudaFree(p); }) {
        cudaDeviceProp prop;
        CK(cudaGetDeviceProperties(&prop, 0));
        CK(cudaStreamCreateWithFlags(&env.stream, cudaStreamNonBlocking));
        env.device_ordinal = 0;
        env.sm_count = prop.multiProcessorCount;
        env.compute_capability = prop.major * 10 + prop.minor;
        env.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
        env.l2_bytes = prop.l2CacheSize;
        env.max_shared_per_block_optin = prop.sharedMemPerBlockOptin;
        env.workspace = &workspace;
        CK(cudaMalloc(&env.zeroed_counters, gpuprim::cuda::kZeroedCounterWords * 4));
        CK(cudaMemset(env.zeroed_counters, 0, gpuprim::cuda::kZeroedCounterWords * 4));
    }
    // True if every zeroed counter word is zero.
    bool counters_zero() {
        std::vector<uint32_t> words(gpuprim::cuda::kZeroedCounterWords);
        CK(cudaStreamSynchronize(env.stream));
        CK(cudaMemcpy(words.data(), env.zeroed_counters, words.size() * 4, cudaMemcpyDeviceToHost));
        for (uint32_t w : words)
            if (w) return false;
        return true;
    }
};

// Median of `reps` timed runs (after 3 warm-ups); run(copy) with copy = rep % 3.
inline double median_ms(cudaStream_t stream, int reps, const std::function<void(int)> &run) {
    cudaEvent_t start, stop;
    CK(cudaEventCreate(&start));
    CK(cudaEventCreate(&stop));
    for (int w = 0; w < 3; ++w) run(w % 3);
    CK(cudaStreamSynchronize(stream));
    std::vector<float> times;
    for (int r = 0; r < reps; ++r) {
        CK(cudaEventRecord(start, stream));
        run(r % 3);
        CK(cudaEventRecord(stop, stream));
        CK(cudaEventSynchronize(stop));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, start, stop));
        times.push_back(ms);
    }
    CK(cudaGetLastError());
    CK(cudaEventDestroy(start));
    CK(cudaEventDestroy(stop));
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

// CUB on the same buffers (cub_bar.cu). dtype: 0 u32, 1 i32, 2 f32, 3 u64, 4 i64, 5 f64.
// Returns the median ms of out-of-place sorts rotating over keys_in[0..2].
double cub_time(cudaStream_t stream, int dtype, int value_bytes, void *const keys_in[3], void *keys_out,
                void *const values_in[3], void *values_out, uint64_t n, int reps);

// Shape variants for the sweep (sweep_shapes.cu).
struct SortVariant {
    std::string name;
    int key_bytes, value_bytes;
    uint64_t min_n, max_n;  // counts it applies to
    std::function<bool(TestEnv &, const gpuprim::SortRequest &)> sort;  // false: not applicable
};
std::vector<SortVariant> sweep_variants();
