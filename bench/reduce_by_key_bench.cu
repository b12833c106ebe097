// SPDX-License-Identifier: Apache-2.0
// reduce-by-key and group-by (issue 37) beside CUB's DeviceReduce::ReduceByKey
// (and, for group-by, DeviceRadixSort::SortPairs then ReduceByKey, timed
// together) on the same device buffers.
//
//   reduce_by_key_bench [--quick] [--log2 N] [--csv FILE]
//
// Rows:
//   rbk-run4 / rbk-run1000   gpuprim_reduce_by_key SUM, u32 keys, f32 values,
//                            runs of 4 / 1000 on average (2^10 to 2^28)
//                            vs DeviceReduce::ReduceByKey
//   groupby-d1k / -d1M       gpuprim_group_by SUM (keys_out, results), u32
//                            keys uniform over 2^10 / 2^20 distinct values,
//                            f32 values (2^20 and 2^26)
//                            vs SortPairs + ReduceByKey in one timed call
//   groupby-d1M+inv          the same, also counts (u32) and the inverse
//                            (u32), which CUB's pair does not give: what the
//                            extra outputs cost (CUB column: the same pair)
// The runs' keys are the running count of random run starts (each position
// starts a run with probability 1/4 or 1/1000), so they ascend; the groups'
// keys are hashed positions reduced to 2^10 or 2^20 values, spread over the
// u32 range. Values are multiples of 1/256 in [-1, 1): every partial sum is
// exact in f32 while below 2^15, so both sides' sums agree whatever the
// association; they are still compared with a tolerance (1e-6 relative),
// keys and counts exactly. Both sides write the count to device memory (no
// host wait in the timed call). CUB is called with int item counts.
// Bytes moved: keys and values read once, the outputs written once; the
// table prints our GB/s of that. Timing: CUDA events around one call,
// warm-up, median of 21; copies rotate past the L2; 1 MiB and less also
// batched. The bench exits non-zero on a mismatch.
#include <gpuprim/gpuprim.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/version.cuh>
#include <cuda/std/functional>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench_util.h"

namespace {

using namespace gpuprim_bench;

BenchSession session;  // set up by main
cudaStream_t &stream = session.stream;
gpuprim_context_t &ctx = session.ctx;
FILE *&csv = session.csv;

enum class Row { Runs4, Runs1000, GroupBy1k, GroupBy1M, GroupBy1MInverse };

const char *row_name(Row row) {
    switch (row) {
    case Row::Runs4: return "rbk-run4";
    case Row::Runs1000: return "rbk-run1000";
    case Row::GroupBy1k: return "groupby-d1k";
    case Row::GroupBy1M: return "groupby-d1M";
    case Row::GroupBy1MInverse: return "groupby-d1M+inv";
    }
    return "?";
}

bool is_group_by(Row row) { return row != Row::Runs4 && row != Row::Runs1000; }

__host__ __device__ inline uint32_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return uint32_t(x);
}

// Run starts (1 with probability 1/period), scanned into ascending keys.
__global__ void fill_run_starts(uint32_t *keys, uint64_t n, uint64_t seed, uint32_t period) {
    for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
        keys[i] = mix(i * 0x9e3779b97f4a7c15ull + seed) % period == 0 ? 1u : 0u;
}

// Keys uniform over `distinct` (a power of two) values spread over u32.
__global__ void fill_group_keys(uint32_t *keys, uint64_t n, uint64_t seed, uint32_t distinct) {
    for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
        keys[i] = (mix(i * 0x9e3779b97f4a7c15ull + seed) & (distinct - 1)) * 0x9e3779b1u;
}

// Multiples of 1/256 in [-1, 1).
__global__ void fill_values(float *values, uint64_t n, uint64_t seed) {
    for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
        values[i] = float(int(mix(i + seed * 0x632be59bd9b4e019ull) & 511u) - 256) / 256.0f;
}

// One copy of the inputs, made on the device and complete when this returns.
struct Inputs {
    std::unique_ptr<Device> keys, values;
    gpuprim_buffer_t bkeys = nullptr, bvalues = nullptr;
};

Inputs make_inputs(Row row, uint64_t n, uint64_t seed) {
    Inputs in;
    in.keys = std::make_unique<Device>(n * 4);
    in.values = std::make_unique<Device>(n * 4);
    const unsigned blocks = unsigned(std::min<uint64_t>(4096, (n + 255) / 256));
    auto *keys = static_cast<uint32_t *>(in.keys->p);
    if (is_group_by(row)) {
        fill_group_keys<<<blocks, 256, 0, stream>>>(keys, n, seed, row == Row::GroupBy1k ? 1u << 10 : 1u << 20);
        CHECK_CUDA(cudaGetLastError());
    } else {
        fill_run_starts<<<blocks, 256, 0, stream>>>(keys, n, seed, row == Row::Runs4 ? 4u : 1000u);
        CHECK_CUDA(cudaGetLastError());
        size_t temp_bytes = 0;
        CHECK_CUDA(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, keys, keys, int64_t(n), stream));
        Device temp(temp_bytes);
        CHECK_CUDA(cub::DeviceScan::InclusiveSum(temp.p, temp_bytes, keys, keys, int64_t(n), stream));
        CHECK_CUDA(cudaStreamSynchronize(stream));  // before temp goes
    }
    fill_values<<<blocks, 256, 0, stream>>>(static_cast<float *>(in.values->p), n, seed);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaStreamSynchronize(stream));
    in.bkeys = wrap(ctx, GPUPRIM_DTYPE_U32, in.keys->p, n);
    in.bvalues = wrap(ctx, GPUPRIM_DTYPE_F32, in.values->p, n);
    return in;
}

// Outputs of one side: keys, results, counts, inverse (ours only), the
// count; CUB's sorted pairs for group-by.
struct Outputs {
    Device keys, results, counts, inverse, count;
    gpuprim_buffer_t bkeys, bresults, bcounts, binverse, bcount;
    std::unique_ptr<Device> sorted_keys, sorted_values;  // CUB's group-by
    explicit Outputs(uint64_t n) : keys(n * 4), results(n * 4), counts(n * 4), inverse(n * 4), count(8) {
        bkeys = wrap(ctx, GPUPRIM_DTYPE_U32, keys.p, n);
        bresults = wrap(ctx, GPUPRIM_DTYPE_F32, results.p, n);
        bcounts = wrap(ctx, GPUPRIM_DTYPE_U32, counts.p, n);
        binverse = wrap(ctx, GPUPRIM_DTYPE_U32, inverse.p, n);
        bcount = wrap(ctx, GPUPRIM_DTYPE_U32, count.p, 1);
    }
    ~Outputs() {
        gpuprim_buffer_destroy(ctx, bkeys);
        gpuprim_buffer_destroy(ctx, bresults);
        gpuprim_buffer_destroy(ctx, bcounts);
        gpuprim_buffer_destroy(ctx, binverse);
        gpuprim_buffer_destroy(ctx, bcount);
    }
};

void call_ours(Row row, const Inputs &in, Outputs &out) {
    if (!is_group_by(row)) {
        CHECK_GP(ctx, gpuprim_reduce_by_key(ctx, in.bkeys, in.bvalues, GPUPRIM_OP_SUM, out.bkeys, out.bresults,
                                            nullptr, nullptr, out.bcount));
        return;
    }
    const bool extras = row == Row::GroupBy1MInverse;
    CHECK_GP(ctx, gpuprim_group_by(ctx, in.bkeys, in.bvalues, GPUPRIM_OP_SUM, out.bkeys, extras ? out.bcounts : nullptr,
                                   out.bresults, extras ? out.binverse : nullptr, nullptr, out.bcount));
}

// CUB's calls; temp_bytes in/out as CUB's own (query with temp == nullptr).
// Group-by: the sort's temp, then the reduce's, in one allocation.
cudaError_t call_cub(Row row, void *temp, size_t &temp_bytes, const Inputs &in, Outputs &out, uint64_t n) {
    const int items = int(n);
    auto *keys = static_cast<const uint32_t *>(in.keys->p);
    auto *values = static_cast<const float *>(in.values->p);
    auto *keys_out = static_cast<uint32_t *>(out.keys.p);
    auto *results = static_cast<float *>(out.results.p);
    auto *count = static_cast<uint32_t *>(out.count.p);
    if (!is_group_by(row))
        return cub::DeviceReduce::ReduceByKey(temp, temp_bytes, keys, keys_out, values, results, count,
                                              cuda::std::plus<float>{}, items, stream);
    auto *sorted_keys = static_cast<uint32_t *>(out.sorted_keys->p);
    auto *sorted_values = static_cast<float *>(out.sorted_values->p);
    size_t sort_bytes = 0, reduce_bytes = 0;
    cudaError_t e = cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, keys, sorted_keys, values, sorted_values,
                                                    items, 0, 32, stream);
    if (e != cudaSuccess) return e;
    e = cub::DeviceReduce::ReduceByKey(nullptr, reduce_bytes, sorted_keys, keys_out, sorted_values, results, count,
                                       cuda::std::plus<float>{}, items, stream);
    if (e != cudaSuccess) return e;
    const size_t reduce_at = (sort_bytes + 255) / 256 * 256;
    if (!temp) {
        temp_bytes = reduce_at + reduce_bytes;
        return cudaSuccess;
    }
    e = cub::DeviceRadixSort::SortPairs(temp, sort_bytes, keys, sorted_keys, values, sorted_values, items, 0, 32,
                                        stream);
    if (e != cudaSuccess) return e;
    return cub::DeviceReduce::ReduceByKey(static_cast<char *>(temp) + reduce_at, reduce_bytes, sorted_keys, keys_out,
                                          sorted_values, results, count, cuda::std::plus<float>{}, items, stream);
}

template <typename T>
std::vector<T> download(const Device &d, uint64_t n) {
    std::vector<T> host(n);
    if (n) CHECK_CUDA(cudaMemcpy(host.data(), d.p, n * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
}

// Ours against CUB's: the counts and keys exactly, the sums within 1e-6
// relative; with the extras, every count and inverse against CUB's keys.
bool agrees(Row row, const Outputs &ours, const Outputs &cub, const Inputs &in, uint64_t n, uint64_t &count) {
    count = download<uint32_t>(ours.count, 1)[0];
    if (count != download<uint32_t>(cub.count, 1)[0]) return false;
    const std::vector<uint32_t> keys = download<uint32_t>(ours.keys, count);
    if (keys != download<uint32_t>(cub.keys, count)) return false;
    const std::vector<float> a = download<float>(ours.results, count), b = download<float>(cub.results, count);
    for (uint64_t r = 0; r < count; ++r)
        if (!(std::fabs(a[r] - b[r]) <= 1e-6 * (1.0 + std::fabs(b[r])))) return false;
    if (row != Row::GroupBy1MInverse) return true;
    const std::vector<uint32_t> counts = download<uint32_t>(ours.counts, count);
    const std::vector<uint32_t> inverse = download<uint32_t>(ours.inverse, n);
    const std::vector<uint32_t> input = download<uint32_t>(*in.keys, n);
    std::vector<uint64_t> seen(count, 0);
    for (uint64_t i = 0; i < n; ++i) {
        if (inverse[i] >= count || keys[inverse[i]] != input[i]) return false;
        ++seen[inverse[i]];
    }
    for (uint64_t g = 0; g < count; ++g)
        if (seen[g] != counts[g]) return false;
    return true;
}

// The least bytes the call moves: keys and values read, outputs written.
double bytes_moved(Row row, uint64_t n, uint64_t count) {
    double bytes = 8.0 * n + 8.0 * count;
    if (row == Row::GroupBy1MInverse) bytes += 4.0 * n + 4.0 * count;
    return bytes;
}

void run_case(Row row, uint64_t n) {
    const uint64_t input_bytes = n * 8;
    const int copies =
        int(std::max<uint64_t>(2, std::min<uint64_t>(32, (120ull << 20) / std::max<uint64_t>(input_bytes, 1) + 1)));
    const int used = input_bytes * copies > (6ull << 30) ? 1 : copies;
    std::vector<Inputs> inputs;
    for (int c = 0; c < used; ++c) inputs.push_back(make_inputs(row, n, uint64_t(c) * 7919 + n));
    Outputs ours(n), cub(n);
    if (is_group_by(row)) {
        cub.sorted_keys = std::make_unique<Device>(n * 4);
        cub.sorted_values = std::make_unique<Device>(n * 4);
    }
    size_t temp_bytes = 0;
    CHECK_CUDA(call_cub(row, nullptr, temp_bytes, inputs[0], cub, n));
    Device temp(temp_bytes);
    call_ours(row, inputs[0], ours);
    size_t tb = temp_bytes;
    CHECK_CUDA(call_cub(row, temp.p, tb, inputs[0], cub, n));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    uint64_t count = 0;
    const bool agree = agrees(row, ours, cub, inputs[0], n, count);
    const bool batched = input_bytes <= (1u << 20);
    const Timing t_ours = time_call(stream, 21, [&](int c) { call_ours(row, inputs[c], ours); }, used, batched);
    const Timing t_cub = time_call(
        stream, 21,
        [&](int c) {
            size_t t = temp_bytes;
            CHECK_CUDA(call_cub(row, temp.p, t, inputs[c], cub, n));
        },
        used, batched);
    const double bytes = bytes_moved(row, n, count);
    printf("%-16s 2^%-3d %10.1f %10.1f %6.2f", row_name(row), int(std::log2(double(n))), t_ours.single_us,
           t_cub.single_us, t_ours.single_us / t_cub.single_us);
    if (batched)
        printf("  batched %7.2f %7.2f %5.2f", t_ours.batched_us, t_cub.batched_us, t_ours.batched_us / t_cub.batched_us);
    printf("  %6.0f GB/s moved (CUB %6.0f)%s\n", bytes / t_ours.single_us / 1e3, bytes / t_cub.single_us / 1e3,
           agree ? "" : "  OUTPUT DIFFERS FROM CUB'S");
    if (csv)
        fprintf(csv, "%s,%llu,%llu,%.3f,%.3f,%.3f,%.3f,%d\n", row_name(row), (unsigned long long)n,
                (unsigned long long)count, t_ours.single_us, t_cub.single_us, t_ours.batched_us, t_cub.batched_us,
                agree);
    fflush(stdout);
    for (Inputs &in : inputs) {
        gpuprim_buffer_destroy(ctx, in.bkeys);
        gpuprim_buffer_destroy(ctx, in.bvalues);
    }
    if (!agree) {
        fprintf(stderr, "reduce_by_key_bench: %s 2^%d: output differs from CUB's\n", row_name(row),
                int(std::log2(double(n))));
        exit(1);
    }
}

}  // namespace

int main(int argc, char **argv) {
    const char *columns = "row,n,count,ours_us,cub_us,ours_batched_us,cub_batched_us,agree";
    if (const int status =
            start_bench("reduce_by_key_bench", argc, argv, GPUPRIM_BENCH_CUB_VERSION, columns, session))
        return status;
    const std::vector<int> run_logs = session.quick ? std::vector<int>{10, 20, 28} : std::vector<int>{10, 16, 20, 24, 28};
    for (int lg : run_logs) {
        if (!session.runs(lg)) continue;
        for (Row row : {Row::Runs4, Row::Runs1000}) run_case(row, uint64_t(1) << lg);
    }
    for (int lg : {20, 26}) {
        if (!session.runs(lg)) continue;
        for (Row row : {Row::GroupBy1k, Row::GroupBy1M, Row::GroupBy1MInverse}) run_case(row, uint64_t(1) << lg);
    }
    finish_bench(session);
    return 0;
}
