// SPDX-License-Identifier: Apache-2.0
// Top-k (issues 20 and 34): flat and per-row f32, the k largest with u32
// indices, beside the time of reading the input once (a kernel that reads
// every element and writes one word a block) and, for flat inputs, CUB's
// DeviceTopK::MaxPairs (CCCL 3.3 and later: build against the wheel's
// headers with GPUPRIM_BENCH_CCCL_INCLUDE). CUB's is unsorted and
// non-deterministic (the only mode CUB 3.6 implements); ours is sorted,
// stable and deterministic. torch.topk runs in the same device command from
// python/benchmarks/bench_torch.py --topk.
//
//   topk_bench [--quick] [--filter SUBSTRING] [--csv FILE] [--uniform]
//
// Keys are normally distributed (like logits; --uniform: uniform in [0, 1)).
// Timing: CUDA events around one call, warm-up, median; inputs rotate over
// copies that together exceed L2. Small cases are also timed batched (100
// calls between events, divided). Every result is checked once against the
// first k of a stable descending gpuprim_argsort (per row:
// gpuprim_segmented_argsort) of the same keys.
#include <gpuprim/gpuprim.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_util.h"

#include <cub/version.cuh>
#if CUB_VERSION >= 300300
#include <cub/device/device_topk.cuh>

#include <cuda/execution>
#include <cuda/iterator>
#include <cuda/stream>
#define TOPK_BENCH_HAS_CUB_TOPK 1
#endif

namespace {

using namespace gpuprim_bench;

cudaStream_t stream;
gpuprim_context_t ctx;
int repeats = 21;
FILE *csv;
bool uniform = false;

void report(const std::string &shape, uint64_t k, const std::string &who, uint64_t n, Timing t) {
    printf("%-22s k=%-6llu %-14s %10.1f us", shape.c_str(), (unsigned long long)k, who.c_str(), t.single_us);
    if (t.batched_us > 0) printf("  batched %8.2f us", t.batched_us);
    printf("  %7.0f GB/s read\n", n * 4.0 / t.single_us / 1e3);
    if (csv)
        fprintf(csv, "%s,%llu,%s,%llu,%.3f,%.3f\n", shape.c_str(), (unsigned long long)k, who.c_str(),
                (unsigned long long)n, t.single_us, t.batched_us);
    fflush(stdout);
}

// Reads every element once (16-byte loads), one word out a block: the
// floor a top-k that reads its input once is measured against.
__global__ void read_once_kernel(const float4 *in, uint64_t n4, float *out) {
    float acc = 0;
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n4; i += uint64_t(gridDim.x) * blockDim.x) {
        const float4 v = __ldcs(in + i);
        acc += v.x + v.y + v.z + v.w;
    }
    if (acc == 12345.678f) out[blockIdx.x] = acc;  // keeps the loads alive
}

#ifdef TOPK_BENCH_HAS_CUB_TOPK
// CUB's DeviceTopK::MaxPairs of n f32 keys with u32 indices (a counting
// iterator), the mode CUB 3.6 implements: unsorted, not deterministic.
// Counts as 32-bit integers where they fit (CUB picks its offset type from
// the count's type, and a caller with fewer than 2^32 keys passes an int).
// temp == nullptr: sets temp_bytes only.
cudaError_t cub_topk(void *temp, size_t &temp_bytes, const float *keys, float *out_keys, uint32_t *out_indices,
                     uint64_t n, uint64_t k) {
    const auto requirements = cuda::execution::require(cuda::execution::determinism::not_guaranteed,
                                                       cuda::execution::output_ordering::unsorted);
    const auto env = cuda::std::execution::env{cuda::stream_ref{stream}, requirements};
    if (n <= UINT32_MAX)
        return cub::DeviceTopK::MaxPairs(temp, temp_bytes, keys, out_keys, cuda::counting_iterator<uint32_t>{0u},
                                         out_indices, uint32_t(n), uint32_t(k), env);
    return cub::DeviceTopK::MaxPairs(temp, temp_bytes, keys, out_keys, cuda::counting_iterator<uint32_t>{0u},
                                     out_indices, n, k, env);
}

// CUB's time for the flat case. Its output is unordered and, at a tie on
// the k-th key, any of the tied keys: its keys, sorted, must be the
// reference's first k, and each index must be distinct, inside the input
// and point at a key with the bits CUB gave for it.
void report_cub(const std::string &name, const std::vector<std::unique_ptr<Device>> &keys, int copies, uint64_t n,
                uint64_t k, const std::vector<float> &want_keys, const std::vector<float> &input) {
    Device out_keys(k * 4), out_indices(k * 4);
    size_t temp_bytes = 0;
    CHECK_CUDA(cub_topk(nullptr, temp_bytes, static_cast<const float *>(keys[0]->p), static_cast<float *>(out_keys.p),
                        static_cast<uint32_t *>(out_indices.p), n, k));
    Device temp(temp_bytes);
    auto call = [&](int c) {
        CHECK_CUDA(cub_topk(temp.p, temp_bytes, static_cast<const float *>(keys[c]->p), static_cast<float *>(out_keys.p),
                            static_cast<uint32_t *>(out_indices.p), n, k));
    };
    call(0);
    CHECK_CUDA(cudaStreamSynchronize(stream));
    std::vector<float> got(k);
    std::vector<uint32_t> got_indices(k);
    CHECK_CUDA(cudaMemcpy(got.data(), out_keys.p, k * 4, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(got_indices.data(), out_indices.p, k * 4, cudaMemcpyDeviceToHost));
    bool same = true;
    std::vector<bool> taken(n, false);
    for (uint64_t j = 0; j < k && same; ++j) {
        const uint32_t at = got_indices[j];
        same = at < n && !taken[at] && memcmp(&input[at], &got[j], 4) == 0;
        if (same) taken[at] = true;
    }
    std::sort(got.begin(), got.end(), std::greater<float>());
    if (!same || !std::equal(got.begin(), got.end(), want_keys.begin())) {
        printf("MISMATCH %s k=%llu (CUB)\n", name.c_str(), (unsigned long long)k);
        if (csv) fprintf(csv, "%s,%llu,MISMATCH cub,%llu,0,0\n", name.c_str(), (unsigned long long)k, (unsigned long long)n);
    }
    report(name, k, "cub DeviceTopK", n, time_call(stream, repeats, call, copies, n <= (1u << 20)));
}
#endif

void run_case(uint64_t rows, uint64_t length, const std::vector<uint64_t> &ks, const std::string &filter) {
    const uint64_t n = rows * length;
    char name[64];
    if (rows == 1) snprintf(name, sizeof name, "flat 2^%d", 63 - __builtin_clzll(n));
    else snprintf(name, sizeof name, "%llu x %llu", (unsigned long long)rows, (unsigned long long)length);
    if (!filter.empty() && std::string(name).find(filter) == std::string::npos) return;
    const bool small = n * 4 < (64u << 20);
    const int copies = small ? (n * 4 < (1u << 20) ? 1 : 2) : 2;
    std::vector<std::unique_ptr<Device>> keys;
    std::vector<gpuprim_buffer_t> wk;
    std::vector<float> first_copy;  // copy 0's keys, for CUB's indices
    for (int c = 0; c < copies; ++c) {
        keys.emplace_back(new Device(n * 4));
        std::vector<float> host(n);
        std::mt19937_64 rng(11 + c);
        std::normal_distribution<float> normal(0.f, 1.f);
        std::uniform_real_distribution<float> u01(0.f, 1.f);
        for (auto &x : host) x = uniform ? u01(rng) : normal(rng);
        if (c == 0 && rows == 1) first_copy = host;
        CHECK_CUDA(cudaMemcpy(keys.back()->p, host.data(), n * 4, cudaMemcpyHostToDevice));
        wk.push_back(wrap(ctx, GPUPRIM_DTYPE_F32, keys.back()->p, n));
    }
    Device sink(4096 * 4);
    const Timing read = time_call(stream, repeats,
        [&](int c) {
            read_once_kernel<<<1024, 512, 0, stream>>>(static_cast<const float4 *>(keys[c]->p), n / 4,
                                                       static_cast<float *>(sink.p));
        },
        copies, false);
    printf("\n== %s (%llu keys) ==\n", name, (unsigned long long)n);
    report(name, 0, "read once", n, read);

    // The reference: a stable descending argsort (per row when rows > 1).
    Device sorted_indices(n * 4), sorted_keys(n * 4);
    gpuprim_buffer_t ri = wrap(ctx, GPUPRIM_DTYPE_U32, sorted_indices.p, n);
    gpuprim_buffer_t rk = wrap(ctx, GPUPRIM_DTYPE_F32, sorted_keys.p, n);
    gpuprim_sort_options_t options;
    gpuprim_sort_options_init(&options);
    options.order = GPUPRIM_ORDER_DESCENDING;
    gpuprim_segments_t segments;
    gpuprim_segments_init_rows(&segments, rows, length);
    if (rows == 1) CHECK_GP(ctx, gpuprim_argsort(ctx, wk[0], rk, ri, &options));
    else CHECK_GP(ctx, gpuprim_segmented_argsort(ctx, &segments, wk[0], rk, ri, &options));
    // The copies below are on the default stream, which does not wait for
    // this non-blocking one.
    CHECK_CUDA(cudaStreamSynchronize(stream));
    std::vector<uint32_t> want(n);
    CHECK_CUDA(cudaMemcpy(want.data(), sorted_indices.p, n * 4, cudaMemcpyDeviceToHost));
    std::vector<float> want_keys(rows == 1 ? n : 0);
    if (rows == 1) CHECK_CUDA(cudaMemcpy(want_keys.data(), sorted_keys.p, n * 4, cudaMemcpyDeviceToHost));

    for (const uint64_t k : ks) {
        Device out_keys(rows * k * 4), out_indices(rows * k * 4);
        gpuprim_buffer_t ok = wrap(ctx, GPUPRIM_DTYPE_F32, out_keys.p, rows * k);
        gpuprim_buffer_t oi = wrap(ctx, GPUPRIM_DTYPE_U32, out_indices.p, rows * k);
        auto call = [&](int c) {
            if (rows == 1) CHECK_GP(ctx, gpuprim_topk(ctx, wk[c], k, GPUPRIM_ORDER_DESCENDING, ok, oi));
            else CHECK_GP(ctx, gpuprim_segmented_topk(ctx, &segments, wk[c], k, GPUPRIM_ORDER_DESCENDING, ok, oi));
        };
        call(0);
        CHECK_CUDA(cudaStreamSynchronize(stream));
        std::vector<uint32_t> got(rows * k);
        CHECK_CUDA(cudaMemcpy(got.data(), out_indices.p, rows * k * 4, cudaMemcpyDeviceToHost));
        bool same = true;
        for (uint64_t r = 0; r < rows && same; ++r)
            for (uint64_t j = 0; j < k; ++j)
                if (got[r * k + j] != want[r * length + j]) {
                    same = false;
                    break;
                }
        if (!same) {
            printf("MISMATCH %s k=%llu\n", name, (unsigned long long)k);
            if (csv) fprintf(csv, "%s,%llu,MISMATCH,%llu,0,0\n", name, (unsigned long long)k, (unsigned long long)n);
        }
        report(name, k, "gpuprim", n, time_call(stream, repeats, call, copies, n <= (1u << 20)));
#ifdef TOPK_BENCH_HAS_CUB_TOPK
        if (rows == 1) report_cub(name, keys, copies, n, k, want_keys, first_copy);
#endif
        CHECK_GP(ctx, gpuprim_buffer_destroy(ctx, ok));
        CHECK_GP(ctx, gpuprim_buffer_destroy(ctx, oi));
    }
    CHECK_GP(ctx, gpuprim_buffer_destroy(ctx, ri));
    CHECK_GP(ctx, gpuprim_buffer_destroy(ctx, rk));
    for (auto b : wk) CHECK_GP(ctx, gpuprim_buffer_destroy(ctx, b));
}

}  // namespace

int main(int argc, char **argv) {
    bool quick = false;
    std::string filter, csv_path;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--quick")) quick = true;
        else if (!strcmp(argv[i], "--uniform")) uniform = true;
        else if (!strcmp(argv[i], "--filter") && i + 1 < argc) filter = argv[++i];
        else if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv_path = argv[++i];
        else {
            fprintf(stderr, "usage: topk_bench [--quick] [--filter SUBSTRING] [--csv FILE] [--uniform]\n");
            return 2;
        }
    }
    if (quick) repeats = 7;
    if (!csv_path.empty()) {
        csv = fopen(csv_path.c_str(), "w");
        if (csv) fprintf(csv, "shape,k,who,n,single_us,batched_us\n");
    }
    CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    ctx = cuda_context(stream);
    if (!ctx) {
        fprintf(stderr, "no CUDA context\n");
        return 1;
    }
    printf("top-k, f32 %s keys, the k largest with u32 indices; CUB %d.%d.%d%s\n", uniform ? "uniform [0,1)" : "normal",
           GPUPRIM_BENCH_CUB_VERSION,
#ifdef TOPK_BENCH_HAS_CUB_TOPK
           " (DeviceTopK beside the flat rows)"
#else
           " (no DeviceTopK before 3.3: ours alone)"
#endif
    );
    run_case(1, 1 << 10, {16}, filter);
    run_case(1, 1 << 14, {16, 1024}, filter);
    run_case(1, 1 << 16, {16, 1024}, filter);
    run_case(1, 1 << 17, {16, 1024}, filter);
    run_case(1, 1 << 18, {16, 1024}, filter);
    run_case(1, 1 << 19, {16, 1024}, filter);
    run_case(1, 1 << 20, {16, 1024}, filter);
    run_case(1, 1 << 22, {16, 1024}, filter);
    run_case(1, 1 << 24, {16, 1024}, filter);
    run_case(1, 1 << 26, {16, 1024}, filter);
    run_case(1048576, 16, {8}, filter);
    run_case(262144, 64, {8}, filter);
    run_case(131072, 128, {8}, filter);
    run_case(65536, 256, {8, 64}, filter);
    run_case(4096, 4096, {8, 64}, filter);
    // Rows past the block select: fewer long rows than blocks resident at
    // once (128 of 2^16: one block a row on an H100's 132 SMs), and more.
    run_case(128, 65536, {8, 64}, filter);
    run_case(256, 65536, {8, 64}, filter);
    run_case(1024, 16384, {8, 64}, filter);
    run_case(16, 262144, {8, 64}, filter);
    run_case(16, 1048576, {8, 64}, filter);
    gpuprim_context_destroy(ctx);
    if (csv) fclose(csv);
    return 0;
}
