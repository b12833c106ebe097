// SPDX-License-Identifier: Apache-2.0
// What the standalone benchmarks (segmented_bench.cu, topk_bench.cu, ...)
// share: checks that exit on an error, CUDA-event timing (warm-up, median,
// and optionally batched), device allocations and wrapping them as buffers,
// a CUDA context on a given stream, and the command line and set-up of the
// small benchmarks against CUB (BenchSession).
#pragma once

#include <gpuprim/gpuprim.h>

#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

// GPUPRIM_BENCH_PROFILE=1: the first timed call of every time_call() runs
// between cudaProfilerStart() and cudaProfilerStop(), so that `ncu
// --profile-from-start off` (with --row and --log2) sees exactly one call
// of ours and one of CUB's, kernel by kernel, and none of the set-up or
// warm-up launches. Without a profiler attached the two calls do nothing.
inline bool profile_one_call() {
    static const bool on = [] {
        const char *v = getenv("GPUPRIM_BENCH_PROFILE");
        return v && *v && strcmp(v, "0") != 0;
    }();
    return on;
}

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
        const bool profiled = r == 0 && profile_one_call();
        if (profiled) CHECK_CUDA(cudaProfilerStart());
        CHECK_CUDA(cudaEventRecord(start, stream));
        fn(r % copies);
        CHECK_CUDA(cudaEventRecord(stop, stream));
        CHECK_CUDA(cudaEventSynchronize(stop));
        if (profiled) CHECK_CUDA(cudaProfilerStop());
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
    // The benches upload inputs with cudaMemcpy from pageable memory, which
    // may return before its DMA ends, and time on a non-blocking stream that
    // does not wait for it: the data is complete once it is wrapped.
    CHECK_CUDA(cudaDeviceSynchronize());
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

// The command line of the small benchmarks against CUB ([--quick] [--log2
// N] [--csv FILE]) and their set-up: a non-blocking stream, a CUDA context
// on it, the header line naming the GPU and the CUB version, the CSV's
// column line.
struct BenchSession {
    bool quick = false;
    int only_log2 = 0;             // --log2 N: that size alone (for a profiler)
    const char *only_row = nullptr;  // --row NAME: that row alone (for a profiler)
    FILE *csv = nullptr;
    cudaStream_t stream = nullptr;
    gpuprim_context_t ctx = nullptr;

    // Whether the size 2^lg runs (every size, or the one --log2 names).
    bool runs(int lg) const { return only_log2 == 0 || lg == only_log2; }
    // Whether the row named name runs (every row, or the one --row names).
    bool runs_row(const char *name) const { return !only_row || !strcmp(name, only_row); }
};

// The CUB version start_bench prints, where CUB's headers are included.
#define GPUPRIM_BENCH_CUB_VERSION CUB_MAJOR_VERSION, CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION

// 0 when the benchmark can go on (session set up), else the exit status:
// 2 for a bad command line, 77 without a CUDA context.
inline int start_bench(const char *name, int argc, char **argv, int cub_major, int cub_minor, int cub_subminor,
                       const char *csv_columns, BenchSession &session) {
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--quick")) session.quick = true;
        else if (!strcmp(argv[i], "--log2") && i + 1 < argc) session.only_log2 = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--row") && i + 1 < argc) session.only_row = argv[++i];
        else if (!strcmp(argv[i], "--csv") && i + 1 < argc) session.csv = fopen(argv[++i], "w");
        else {
            fprintf(stderr, "usage: %s [--quick] [--log2 N] [--row NAME] [--csv FILE]\n", name);
            return 2;
        }
    }
    CHECK_CUDA(cudaStreamCreateWithFlags(&session.stream, cudaStreamNonBlocking));
    session.ctx = cuda_context(session.stream);
    if (!session.ctx) {
        fprintf(stderr, "%s: no CUDA context\n", name);
        return 77;
    }
    cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    printf("%s: %s, libgpuprim %s, CUB %d.%d.%d; times in us (ours, CUB, ours/CUB)\n", name, prop.name,
           gpuprim_version_string(), cub_major, cub_minor, cub_subminor);
    if (session.csv) fprintf(session.csv, "%s\n", csv_columns);
    return 0;
}

inline void finish_bench(BenchSession &session) {
    gpuprim_context_destroy(session.ctx);
    if (session.csv) fclose(session.csv);
    CHECK_CUDA(cudaStreamDestroy(session.stream));
}

}  // namespace gpuprim_bench
