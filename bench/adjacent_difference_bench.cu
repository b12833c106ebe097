// SPDX-License-Identifier: Apache-2.0
// gpuprim_adjacent_difference beside CUB's
// DeviceAdjacentDifference::SubtractLeftCopy (out of place) and SubtractLeft
// (in place), both stream-ordered.
//
//   adjacent_difference_bench [--quick] [--log2 N] [--csv FILE]
//
// Inputs: uniform random bits (integers) or values in [-1, 1) (floats).
// Timing: CUDA events around one call, warm-up, median of 21; inputs rotate
// over copies that together exceed L2; inputs of 1 MiB and less are also
// timed batched (100 calls between events, divided). Every case is checked
// once, bit for bit: our output against CUB's (the same subtraction; these
// inputs hold no NaN, whose bits would differ).
#include <gpuprim/gpuprim.h>

#include <cub/device/device_adjacent_difference.cuh>
#include <cub/version.cuh>
#include <cuda/stream_ref>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "bench_util.h"

namespace {

using namespace gpuprim_bench;

BenchSession session;  // set up by main
cudaStream_t &stream = session.stream;
gpuprim_context_t &ctx = session.ctx;
// Some row's output differed from CUB's (the rows after it still run).
bool any_output_differs = false;
FILE *&csv = session.csv;

template <typename T>
std::vector<T> make_input(uint64_t n, std::mt19937_64 &rng) {
    std::vector<T> v(n);
    for (auto &x : v) {
        const uint64_t r = rng();
        if constexpr (std::is_same_v<T, __half>) x = __double2half(double(r >> 11) * 0x1.0p-52 - 1.0);
        else if constexpr (std::is_floating_point_v<T>) x = T(double(r >> 11) * 0x1.0p-52 - 1.0);
        else std::memcpy(&x, &r, sizeof(T));
    }
    return v;
}

// Host to device, finished before the bench's stream reads it: a plain
// cudaMemcpy from pageable memory may return before its DMA lands, and the
// non-blocking stream is not ordered after the legacy stream's copy (the
// likely cause of the first run's in-place u8 2^20 row differing from CUB:
// CUB's run after such a restore of the input ours had overwritten).
void upload(void *device, const void *host, uint64_t bytes) {
    CHECK_CUDA(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));
}

// The header's difference on the host (the inputs are finite, so no NaN
// rule is needed): integers wrap, floats one subtraction, f16 in f32
// rounded once.
template <typename T>
T host_difference(T x, T previous) {
    if constexpr (std::is_same_v<T, __half>) return __float2half(__half2float(x) - __half2float(previous));
    else if constexpr (std::is_floating_point_v<T>) return T(x - previous);
    else return T(std::make_unsigned_t<T>(std::make_unsigned_t<T>(x) - std::make_unsigned_t<T>(previous)));
}

// Where ours and CUB's differ: how many elements, the first, and which side
// the host's difference takes there.
template <typename T>
void report_difference(const char *dtype_name, bool in_place, const std::vector<T> &input, const std::vector<T> &ours,
                       const std::vector<T> &cub) {
    uint64_t differing = 0, first = 0, ours_wrong = 0, cub_wrong = 0;
    for (uint64_t i = 0; i < input.size(); ++i) {
        const T want = i == 0 ? input[0] : host_difference(input[i], input[i - 1]);
        const bool ours_right = std::memcmp(&ours[i], &want, sizeof(T)) == 0;
        const bool cub_right = std::memcmp(&cub[i], &want, sizeof(T)) == 0;
        ours_wrong += !ours_right;
        cub_wrong += !cub_right;
        if (std::memcmp(&ours[i], &cub[i], sizeof(T)) != 0 && differing++ == 0) first = i;
    }
    fprintf(stderr,
            "adjacent_difference_bench: %s %s n=%zu: ours differs from CUB's at %llu elements, the first %llu; "
            "against the host's differences ours is wrong at %llu, CUB's at %llu\n",
            dtype_name, in_place ? "in place" : "out of place", input.size(), (unsigned long long)differing,
            (unsigned long long)first, (unsigned long long)ours_wrong, (unsigned long long)cub_wrong);
}

template <typename T>
void run_case(const char *dtype_name, gpuprim_dtype_t dtype, uint64_t n, bool in_place) {
    std::mt19937_64 rng(n * 31 + in_place);
    const uint64_t bytes = n * sizeof(T);
    // Copies that together pass the 50 MB L2 (at least 2), within 4 GiB.
    const int copies = int(std::max<uint64_t>(2, std::min<uint64_t>(64, (120ull << 20) / std::max<uint64_t>(bytes, 1) + 1)));
    const int used = 2 * bytes * copies > (4ull << 30) ? 2 : copies;
    std::vector<std::unique_ptr<Device>> inputs, outputs;
    std::vector<gpuprim_buffer_t> in_buffers, out_buffers;
    std::vector<T> first_input;
    for (int c = 0; c < used; ++c) {
        const std::vector<T> host = make_input<T>(n, rng);
        if (c == 0) first_input = host;
        inputs.push_back(std::make_unique<Device>(bytes));
        outputs.push_back(std::make_unique<Device>(bytes));
        upload(inputs.back()->p, host.data(), bytes);
        in_buffers.push_back(wrap(ctx, dtype, inputs.back()->p, n));
        out_buffers.push_back(in_place ? in_buffers.back() : wrap(ctx, dtype, outputs.back()->p, n));
    }

    size_t temp_bytes = 0;
    auto cub_call = [&](void *temp, size_t &tb, int c) {
        T *in = static_cast<T *>(inputs[c]->p);
        if (in_place) return cub::DeviceAdjacentDifference::SubtractLeft(temp, tb, in, int64_t(n), ::cuda::std::minus<>{}, stream);
        return cub::DeviceAdjacentDifference::SubtractLeftCopy(temp, tb, in, static_cast<T *>(outputs[c]->p), int64_t(n),
                                                               ::cuda::std::minus<>{}, stream);
    };
    CHECK_CUDA(cub_call(nullptr, temp_bytes, 0));
    Device temp(std::max<size_t>(temp_bytes, 1));

    // The check, on copy 0 (then put back): ours, then CUB's, bit for bit.
    std::vector<T> ours_out(n), cub_out(n);
    CHECK_GP(ctx, gpuprim_adjacent_difference(ctx, in_buffers[0], out_buffers[0]));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    CHECK_CUDA(cudaMemcpy(ours_out.data(), in_place ? inputs[0]->p : outputs[0]->p, bytes, cudaMemcpyDeviceToHost));
    upload(inputs[0]->p, first_input.data(), bytes);
    size_t tb = temp_bytes;
    CHECK_CUDA(cub_call(temp.p, tb, 0));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    CHECK_CUDA(cudaMemcpy(cub_out.data(), in_place ? inputs[0]->p : outputs[0]->p, bytes, cudaMemcpyDeviceToHost));
    const bool agree = std::memcmp(ours_out.data(), cub_out.data(), bytes) == 0;

    // In place, each timed call works on the last one's output: the same
    // bytes move, and the values do not matter to either side.
    const bool batched = bytes <= (1u << 20);
    const Timing ours = time_call(
        stream, 21, [&](int c) { CHECK_GP(ctx, gpuprim_adjacent_difference(ctx, in_buffers[c], out_buffers[c])); },
        used, batched);
    const Timing cub = time_call(
        stream, 21,
        [&](int c) {
            size_t t = temp_bytes;
            CHECK_CUDA(cub_call(temp.p, t, c));
        },
        used, batched);
    printf("%-12s %-4s 2^%-3d %10.1f %10.1f %6.2f", in_place ? "in place" : "out of place", dtype_name,
           int(std::log2(double(n))), ours.single_us, cub.single_us, ours.single_us / cub.single_us);
    if (batched) printf("  batched %7.2f %7.2f %5.2f", ours.batched_us, cub.batched_us, ours.batched_us / cub.batched_us);
    printf("  %6.0f GB/s%s\n", 2.0 * bytes / ours.single_us / 1e3, agree ? "" : "  OUTPUT DIFFERS FROM CUB'S");
    if (csv)
        fprintf(csv, "%s,%s,%llu,%.3f,%.3f,%.3f,%.3f,%d\n", in_place ? "in_place" : "out_of_place", dtype_name,
                (unsigned long long)n, ours.single_us, cub.single_us, ours.batched_us, cub.batched_us, agree);
    fflush(stdout);
    if (!agree) {
        report_difference(dtype_name, in_place, first_input, ours_out, cub_out);
        any_output_differs = true;
    }
    for (int c = 0; c < used; ++c) {
        gpuprim_buffer_destroy(ctx, in_buffers[c]);
        if (!in_place) gpuprim_buffer_destroy(ctx, out_buffers[c]);
    }
}

}  // namespace

int main(int argc, char **argv) {
    const char *columns = "call,dtype,n,ours_us,cub_us,ours_batched_us,cub_batched_us,agree";
    if (const int status =
            start_bench("adjacent_difference_bench", argc, argv, GPUPRIM_BENCH_CUB_VERSION, columns, session))
        return status;
    const std::vector<int> logs = session.quick ? std::vector<int>{10, 20, 24} : std::vector<int>{10, 16, 20, 24, 28};
    for (int in_place = 0; in_place < 2; ++in_place)
        for (int lg : logs) {
            if (!session.runs(lg)) continue;
            const uint64_t n = uint64_t(1) << lg;
            run_case<uint8_t>("u8", GPUPRIM_DTYPE_U8, n, in_place);
            run_case<__half>("f16", GPUPRIM_DTYPE_F16, n, in_place);
            run_case<int32_t>("i32", GPUPRIM_DTYPE_I32, n, in_place);
            run_case<float>("f32", GPUPRIM_DTYPE_F32, n, in_place);
            run_case<uint64_t>("u64", GPUPRIM_DTYPE_U64, n, in_place);
            run_case<double>("f64", GPUPRIM_DTYPE_F64, n, in_place);
        }
    finish_bench(session);
    return any_output_differs ? 1 : 0;
}
