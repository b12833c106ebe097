// SPDX-License-Identifier: Apache-2.0
// Histograms (gpuprim_histogram_even, gpuprim_bincount,
// gpuprim_histogram_range) beside CUB's DeviceHistogram::HistogramEven /
// HistogramRange on the same device buffers (issue 38's table).
//
//   histogram_bench [--quick] [--log2 N] [--csv FILE]
//
// Rows: u8 samples into 256 bins (ours: gpuprim_bincount, since even bounds
// are values of the input's dtype and 256 is not a u8; CUB: HistogramEven
// over levels 0..256), f32 uniform in [0, 1) into 256 and 65,536 even bins,
// f32 into 1024 bins given by edges; 2^10 ... 2^28 samples; U32 counts.
// The f32 samples are multiples of 2^-24 below 1 (a double below 1 rounded
// to f32 may be 1.0f, which is outside [0, 1): the f32 rows' one-time
// "COUNTED 16777214 OF 16777216" was two such samples, not dropped ones).
// Timing: CUDA events around one call, warm-up, median of 21; inputs rotate
// over copies that together pass the L2; 1 MiB and less also batched. The
// counts are compared with CUB's: exactly for u8, and for f32 the number of
// bins that differ is printed (CUB bins floats in f32 arithmetic, we in f64:
// an element within a rounding of an edge may land on the other side).
#include <gpuprim/gpuprim.h>

#include <cub/device/device_histogram.cuh>
#include <cub/version.cuh>
#include <cuda/stream_ref>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_util.h"

namespace {

using namespace gpuprim_bench;

BenchSession session;  // set up by main
cudaStream_t &stream = session.stream;
gpuprim_context_t &ctx = session.ctx;
FILE *&csv = session.csv;

enum Kind { kU8Bincount, kF32Even, kF32Edges };

template <typename T>
void run_case(Kind kind, uint64_t n, uint32_t bins) {
    std::mt19937_64 rng(n * 7 + bins);
    const uint64_t bytes = n * sizeof(T);
    const int copies = int(std::max<uint64_t>(2, std::min<uint64_t>(64, (120ull << 20) / std::max<uint64_t>(bytes, 1) + 1)));
    const int used = bytes * copies > (4ull << 30) ? 2 : copies;
    std::vector<std::unique_ptr<Device>> inputs;
    std::vector<gpuprim_buffer_t> buffers;
    for (int c = 0; c < used; ++c) {
        std::vector<T> host(n);
        for (auto &x : host) {
            const uint64_t r = rng();
            if constexpr (std::is_floating_point_v<T>) x = T(r >> 40) * T(0x1.0p-24);  // exactly in [0, 1)
            else x = T(r);
        }
        inputs.push_back(std::make_unique<Device>(bytes));
        CHECK_CUDA(cudaMemcpy(inputs.back()->p, host.data(), bytes, cudaMemcpyHostToDevice));
        buffers.push_back(wrap(ctx, sizeof(T) == 1 ? GPUPRIM_DTYPE_U8 : GPUPRIM_DTYPE_F32, inputs.back()->p, n));
    }
    Device ours_counts(bins * sizeof(uint32_t)), cub_counts(bins * sizeof(uint32_t));
    gpuprim_buffer_t counts = wrap(ctx, GPUPRIM_DTYPE_U32, ours_counts.p, bins);
    // Edges: 0, 1/bins, ... 1 as f32 (CUB's levels and ours).
    std::vector<float> levels(bins + 1);
    for (uint32_t b = 0; b <= bins; ++b) levels[b] = float(double(b) / bins);
    Device edges(levels.size() * sizeof(float));
    CHECK_CUDA(cudaMemcpy(edges.p, levels.data(), levels.size() * sizeof(float), cudaMemcpyHostToDevice));
    gpuprim_buffer_t edge_buffer = wrap(ctx, GPUPRIM_DTYPE_F32, edges.p, bins + 1);
    const float lower = 0.0f, upper = 1.0f;
    auto ours_call = [&](int c) {
        if (kind == kU8Bincount) CHECK_GP(ctx, gpuprim_bincount(ctx, buffers[c], counts));
        else if (kind == kF32Even) CHECK_GP(ctx, gpuprim_histogram_even(ctx, buffers[c], &lower, &upper, counts));
        else CHECK_GP(ctx, gpuprim_histogram_range(ctx, buffers[c], edge_buffer, counts));
    };
    auto cub_call = [&](void *temp, size_t &tb, int c) {
        uint32_t *h = static_cast<uint32_t *>(cub_counts.p);
        const T *in = static_cast<const T *>(inputs[c]->p);
        if (kind == kU8Bincount)
            return cub::DeviceHistogram::HistogramEven(temp, tb, in, h, int(bins + 1), 0, int(bins), int64_t(n),
                                                       ::cuda::stream_ref{stream});
        if (kind == kF32Even)
            return cub::DeviceHistogram::HistogramEven(temp, tb, in, h, int(bins + 1), 0.0f, 1.0f, int64_t(n),
                                                       ::cuda::stream_ref{stream});
        return cub::DeviceHistogram::HistogramRange(temp, tb, in, h, int(bins + 1), static_cast<const float *>(edges.p),
                                                    int64_t(n), ::cuda::stream_ref{stream});
    };
    size_t temp_bytes = 0;
    CHECK_CUDA(cub_call(nullptr, temp_bytes, 0));
    Device temp(temp_bytes);
    ours_call(0);
    size_t tb = temp_bytes;
    CHECK_CUDA(cub_call(temp.p, tb, 0));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    std::vector<uint32_t> a(bins), b(bins);
    CHECK_CUDA(cudaMemcpy(a.data(), ours_counts.p, bins * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(b.data(), cub_counts.p, bins * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    uint64_t differ = 0, total = 0;
    for (uint32_t i = 0; i < bins; ++i) {
        differ += a[i] != b[i];
        total += a[i];
    }
    const bool batched = bytes <= (1u << 20);
    const Timing ours = time_call(stream, 21, ours_call, used, batched);
    const Timing cub = time_call(
        stream, 21,
        [&](int c) {
            size_t t = temp_bytes;
            CHECK_CUDA(cub_call(temp.p, t, c));
        },
        used, batched);
    const char *name = kind == kU8Bincount ? "u8 bincount" : kind == kF32Even ? "f32 even" : "f32 edges";
    printf("%-12s %6u bins 2^%-3d %10.1f %10.1f %6.2f", name, bins, int(std::log2(double(n))), ours.single_us,
           cub.single_us, ours.single_us / cub.single_us);
    if (batched) printf("  batched %7.2f %7.2f %5.2f", ours.batched_us, cub.batched_us, ours.batched_us / cub.batched_us);
    printf("  %6.0f GB/s", bytes / ours.single_us / 1e3);
    if (differ) printf("  %llu bins differ from CUB's", (unsigned long long)differ);
    if (total != n) printf("  COUNTED %llu OF %llu", (unsigned long long)total, (unsigned long long)n);
    printf("\n");
    if (csv)
        fprintf(csv, "%s,%u,%llu,%.3f,%.3f,%.3f,%.3f,%llu\n", name, bins, (unsigned long long)n, ours.single_us,
                cub.single_us, ours.batched_us, cub.batched_us, (unsigned long long)differ);
    fflush(stdout);
    if (total != n || (kind == kU8Bincount && differ)) {
        fprintf(stderr, "histogram_bench: wrong counts\n");
        exit(1);
    }
    gpuprim_buffer_destroy(ctx, edge_buffer);
    gpuprim_buffer_destroy(ctx, counts);
    for (auto buffer : buffers) gpuprim_buffer_destroy(ctx, buffer);
}

}  // namespace

int main(int argc, char **argv) {
    const char *columns = "case,bins,n,ours_us,cub_us,ours_batched_us,cub_batched_us,bins_differing";
    if (const int status = start_bench("histogram_bench", argc, argv, GPUPRIM_BENCH_CUB_VERSION, columns, session))
        return status;
    const bool quick = session.quick;
    const std::vector<int> logs = quick ? std::vector<int>{10, 20, 28} : std::vector<int>{10, 14, 16, 20, 24, 28};
    for (int lg : logs) {
        if (!session.runs(lg)) continue;
        const uint64_t n = uint64_t(1) << lg;
        run_case<uint8_t>(kU8Bincount, n, 256);
        run_case<float>(kF32Even, n, 256);
        run_case<float>(kF32Even, n, 65536);
        if (!quick || lg == 28) run_case<float>(kF32Edges, n, 1024);
    }
    finish_bench(session);
    return 0;
}
