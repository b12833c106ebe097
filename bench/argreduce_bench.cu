// SPDX-License-Identifier: Apache-2.0
// argmin / argmax (gpuprim_argreduce) beside CUB's DeviceReduce::ArgMin /
// ArgMax, each with its index brought to the host as a caller needs it
// (ours blocks until the index is on the host; CUB's side copies its index
// into pinned memory and waits for the stream).
//
//   argreduce_bench [--quick] [--log2 N] [--csv FILE]
//
// Inputs: uniform random values (integers over the whole type, floats in
// [-1, 1)), and "few distinct" (values 0..15, so the extreme repeats and
// the first position must win). Timing: CUDA events around one call,
// warm-up, median of 21; inputs rotate over copies that together exceed L2;
// inputs of 1 MiB and less are also timed batched (100 calls between
// events, divided). Every case is checked once: our index against CUB's
// (both give the first position of the extreme on these NaN-free inputs).
#include <gpuprim/gpuprim.h>

#include <cub/device/device_reduce.cuh>
#include <cub/version.cuh>
#include <cuda/stream_ref>
#include <cuda_runtime.h>

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

template <typename T>
std::vector<T> make_input(uint64_t n, bool few, std::mt19937_64 &rng) {
    std::vector<T> v(n);
    for (auto &x : v) {
        const uint64_t r = rng();
        if (few) x = T(r % 16);
        else if constexpr (std::is_floating_point_v<T>) x = T(double(r >> 11) * 0x1.0p-52 - 1.0);
        else std::memcpy(&x, &r, sizeof(T));
    }
    return v;
}

template <typename T>
void run_case(const char *dtype_name, gpuprim_dtype_t dtype, uint64_t n, bool few, bool is_max) {
    std::mt19937_64 rng(n * 31 + few);
    const uint64_t bytes = n * sizeof(T);
    // Copies that together pass the 50 MB L2 (at least 2), within 4 GiB.
    const int copies = int(std::max<uint64_t>(2, std::min<uint64_t>(64, (120ull << 20) / std::max<uint64_t>(bytes, 1) + 1)));
    const int used = bytes * copies > (4ull << 30) ? 2 : copies;
    std::vector<std::unique_ptr<Device>> inputs;
    std::vector<gpuprim_buffer_t> buffers;
    for (int c = 0; c < used; ++c) {
        const std::vector<T> host = make_input<T>(n, few, rng);
        inputs.push_back(std::make_unique<Device>(bytes));
        CHECK_CUDA(cudaMemcpy(inputs.back()->p, host.data(), bytes, cudaMemcpyHostToDevice));
        buffers.push_back(wrap(ctx, dtype, inputs.back()->p, n));
    }
    const gpuprim_op_t op = is_max ? GPUPRIM_OP_MAX : GPUPRIM_OP_MIN;

    Device cub_value(sizeof(T)), cub_index(sizeof(int64_t));
    size_t temp_bytes = 0;
    auto cub_call = [&](void *temp, size_t &tb, const T *in) {
        if (is_max)
            return cub::DeviceReduce::ArgMax(temp, tb, in, static_cast<T *>(cub_value.p),
                                             static_cast<int64_t *>(cub_index.p), int64_t(n), ::cuda::stream_ref{stream});
        return cub::DeviceReduce::ArgMin(temp, tb, in, static_cast<T *>(cub_value.p),
                                         static_cast<int64_t *>(cub_index.p), int64_t(n), ::cuda::stream_ref{stream});
    };
    CHECK_CUDA(cub_call(nullptr, temp_bytes, static_cast<const T *>(inputs[0]->p)));
    Device temp(temp_bytes);
    int64_t *pinned = nullptr;
    CHECK_CUDA(cudaMallocHost(&pinned, sizeof(int64_t)));

    // The check: ours against CUB's on the first copy.
    uint64_t ours_index = ~uint64_t(0);
    CHECK_GP(ctx, gpuprim_argreduce(ctx, op, buffers[0], &ours_index));
    size_t tb = temp_bytes;
    CHECK_CUDA(cub_call(temp.p, tb, static_cast<const T *>(inputs[0]->p)));
    CHECK_CUDA(cudaMemcpyAsync(pinned, cub_index.p, sizeof(int64_t), cudaMemcpyDeviceToHost, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    const bool agree = ours_index == uint64_t(*pinned);

    const bool batched = bytes <= (1u << 20);
    const Timing ours = time_call(
        stream, 21,
        [&](int c) {
            uint64_t index;
            CHECK_GP(ctx, gpuprim_argreduce(ctx, op, buffers[c], &index));
        },
        used, batched);
    const Timing cub = time_call(
        stream, 21,
        [&](int c) {
            size_t t = temp_bytes;
            CHECK_CUDA(cub_call(temp.p, t, static_cast<const T *>(inputs[c]->p)));
            CHECK_CUDA(cudaMemcpyAsync(pinned, cub_index.p, sizeof(int64_t), cudaMemcpyDeviceToHost, stream));
            CHECK_CUDA(cudaStreamSynchronize(stream));
        },
        used, batched);
    const char *input_name = few ? "few distinct" : "uniform";
    printf("%-7s %-4s %-12s 2^%-3d %10.1f %10.1f %6.2f", is_max ? "argmax" : "argmin", dtype_name, input_name,
           int(std::log2(double(n))), ours.single_us, cub.single_us, ours.single_us / cub.single_us);
    if (batched) printf("  batched %7.2f %7.2f %5.2f", ours.batched_us, cub.batched_us, ours.batched_us / cub.batched_us);
    printf("  %6.0f GB/s%s\n", bytes / ours.single_us / 1e3, agree ? "" : "  INDEX DIFFERS FROM CUB'S");
    if (csv)
        fprintf(csv, "%s,%s,%s,%llu,%.3f,%.3f,%.3f,%.3f,%d\n", is_max ? "argmax" : "argmin", dtype_name, input_name,
                (unsigned long long)n, ours.single_us, cub.single_us, ours.batched_us, cub.batched_us, agree);
    fflush(stdout);
    if (!agree) {
        fprintf(stderr, "argreduce_bench: ours %llu, CUB %lld\n", (unsigned long long)ours_index, (long long)*pinned);
        exit(1);
    }
    for (auto b : buffers) gpuprim_buffer_destroy(ctx, b);
    CHECK_CUDA(cudaFreeHost(pinned));
}

}  // namespace

int main(int argc, char **argv) {
    const char *columns = "op,dtype,input,n,ours_us,cub_us,ours_batched_us,cub_batched_us,agree";
    if (const int status = start_bench("argreduce_bench", argc, argv, GPUPRIM_BENCH_CUB_VERSION, columns, session))
        return status;
    const bool quick = session.quick;
    const std::vector<int> logs = quick ? std::vector<int>{10, 20, 24} : std::vector<int>{10, 16, 20, 24, 28};
    for (int is_max = 0; is_max < 2; ++is_max)
        for (int few = 0; few < 2; ++few)
            for (int lg : logs) {
                if (!session.runs(lg)) continue;
                const uint64_t n = uint64_t(1) << lg;
                run_case<float>("f32", GPUPRIM_DTYPE_F32, n, few, is_max);
                if (few) continue;
                run_case<int32_t>("i32", GPUPRIM_DTYPE_I32, n, few, is_max);
                run_case<uint64_t>("u64", GPUPRIM_DTYPE_U64, n, few, is_max);
                run_case<double>("f64", GPUPRIM_DTYPE_F64, n, few, is_max);
            }
    finish_bench(session);
    return 0;
}
