// SPDX-License-Identifier: Apache-2.0
// What the standalone benchmarks (segmented_bench.cu, topk_bench.cu) share:
// checks that exit on an error, CUDA-event timing (warm-up, median, and
// optionally batched), device allocations and wrapping them as buffers, and
// a CUDA context on a given stream.
#pragma once

#include <gpuprim/gpuprim.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#define CHECK_CUDA(call)                                                                        \
    do {                                                                                        \
        cudaError_t e_ = (call);                                                                \
        if (e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)
// A gpuprim call on ctx; a failure prints ctx's last error.
#define CHECK_GP(ctx, call)                                                                          \
    do {                                                                                             \
        gpuprim_status_t s_ = (call);                                                                \
        if (s_ != GPUPRIM_SUCCESS) {                                                                 \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, gpuprim_context_last_error(ctx)); \
            exit(1);                                                                                 \
        }                                                                                            \
    } while (0)

namespace gpuprim_bench {

struct Timing {
    double single_us;   // one call between events (median)
    double batched_us;  // 100 calls between events, divided (0: not timed)
};

// fn(copy) runs one call on input copy `copy`, on stream: 3 warm-up calls,
// then the median of `repeats` calls each between events; batched: also the
// median of 5 rounds of 100 calls.
inline Timing time_call(cudaStream_t stream, int repeats, const std::function<void(int)> &fn, int copies,
                        bool batched) {
    cudaEvent_t start, stop;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    for (int w = 0; w < 3; ++w) fn(w % copies);
    std::vector<double> times;
    for (int r = 0; r < repeats; ++r) {
        CHECK_CUDA(cudaEventRecord(start, stream));
        fn(r % copies);
        CHECK_CUDA(cudaEventRecord(stop, stream));
        CHECK_CUDA(cudaEventSynchronize(stop));
        float ms = 0;
        CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
        times.push_back(ms * 1000.0);
    }
    std::sort(times.begin(), times.end());
    Timing t{times[times.size() / 2], 0};
    if (batched) {
        std::vector<double> batches;
        for (int r = 0; r < 5; ++r) {
            CHECK_CUDA(cudaEventRecord(start, stream));
            for (int i = 0; i < 100; ++i) fn(i % copies);
            CHECK_CUDA(cudaEventRecord(stop, stream));
            CHECK_CUDA(cudaEventSynchronize(stop));
            float ms = 0;
            CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
            batches.push_back(ms * 1000.0 / 100);
        }
        std::sort(batches.begin(), batches.end());
        t.batched_us = batches[batches.size() / 2];
    }
    CHECK_CUDA(cudaEventDestroy(start));
    CHECK_CUDA(cudaEventDestroy(stop));
    return t;
}

// Device memory of `bytes` (at least 1), freed with the object.
struct Device {
    void *p = nullptr;
    explicit Device(size_t bytes) { CHECK_CUDA(cudaMalloc(&p, std::max<size_t>(bytes, 1))); }
    ~Device() { cudaFree(p); }
    Device(const Device &) = delete;
    Device &operator=(const Device &) = delete;
};

// n elements of d at device pointer p, as a buffer of ctx.
inline gpuprim_buffer_t wrap(gpuprim_context_t ctx, gpuprim_dtype_t d, void *p, uint64_t n) {
    gpuprim_buffer_t b;
    CHECK_GP(ctx, gpuprim_buffer_wrap(ctx, d, p, n, &b));
    return b;
}

// A context of the CUDA backend that runs on stream; nullptr when none can
// be created.
inline gpuprim_context_t cuda_context(cudaStream_t stream) {
    gpuprim_context_options_t options;
    gpuprim_context_options_init(&options);
    options.backend = GPUPRIM_BACKEND_CUDA;
    options.cuda_stream = stream;
    gpuprim_context_t ctx = nullptr;
    if (gpuprim_context_create(&options, &ctx, nullptr, 0) != GPUPRIM_SUCCESS) return nullptr;
    return ctx;
}

}  // namespace gpuprim_bench
