// SPDX-License-Identifier: Apache-2.0
// select / partition / unique / run-length encode (issue 37) beside CUB's
// DeviceSelect, DevicePartition and DeviceRunLengthEncode on the same device
// buffers.
//
//   select_bench [--quick] [--log2 N] [--row NAME] [--csv FILE]
//
// Rows (u32 keys, 2^10 to 2^28):
//   select<50%  select<1%   gpuprim_select LESS        vs DeviceSelect::If
//   flagged                 gpuprim_select FLAGGED (u8 flags, 50% set)
//                                                      vs DeviceSelect::Flagged
//   partition               gpuprim_partition LESS, 50% kept
//                                                      vs DevicePartition::If
//   unique                  gpuprim_unique, runs of 4 on average
//                                                      vs DeviceSelect::Unique
//   rle                     gpuprim_run_length_encode ALL (keys, u32 lengths)
//                                                      vs DeviceRunLengthEncode::Encode
//   rle-nontrivial          NON_TRIVIAL (u32 starts, u32 lengths)
//                                                      vs NonTrivialRuns
// Keys are uniform random u32 (a hash of the position) for the selects; the
// runs' keys are the running count of random run starts (each position
// starts a run with probability 1/4), so they ascend. Both sides write the
// count to device memory (no host wait in the timed call). CUB is called
// with int item counts (its 32-bit offsets), ours always counts in 64 bits.
// Bytes moved: what the call must read and write at least (keys and flags
// read once, outputs written once); the table prints our GB/s of that.
// Timing: CUDA events around one call, warm-up, median of 21; copies rotate
// past the L2; 1 MiB and less also batched. Every case is checked once:
// counts and outputs against CUB's (partition: CUB reverses the others, we
// keep their order); the bench exits non-zero on a mismatch.
#include <gpuprim/gpuprim.h>

#include <cub/device/device_partition.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <cub/version.cuh>
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

enum class Op { Select50, Select1, Flagged, Partition, Unique, Rle, RleNonTrivial };

const char *op_name(Op op) {
    switch (op) {
    case Op::Select50: return "select<50%";
    case Op::Select1: return "select<1%";
    case Op::Flagged: return "flagged";
    case Op::Partition: return "partition";
    case Op::Unique: return "unique";
    case Op::Rle: return "rle";
    case Op::RleNonTrivial: return "rle-nontrivial";
    }
    return "?";
}

__host__ __device__ inline uint32_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return uint32_t(x);
}

__global__ void fill_keys(uint32_t *keys, uint64_t n, uint64_t seed) {
    for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
        keys[i] = mix(i * 0x9e3779b97f4a7c15ull + seed);
}

// Run starts (1 with probability 1/4), scanned into ascending keys below.
__global__ void fill_run_starts(uint32_t *keys, uint64_t n, uint64_t seed) {
    for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
        keys[i] = (mix(i * 0x9e3779b97f4a7c15ull + seed) & 3u) == 0 ? 1u : 0u;
}

__global__ void fill_flags(uint8_t *flags, uint64_t n, uint64_t seed) {
    for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
        flags[i] = uint8_t(mix(i + seed * 0x632be59bd9b4e019ull) & 1u);
}

struct LessThan {
    uint32_t bound;
    __host__ __device__ bool operator()(const uint32_t &x) const { return x < bound; }
};

bool is_runs(Op op) { return op == Op::Unique || op == Op::Rle || op == Op::RleNonTrivial; }

uint32_t select_bound(Op op) { return op == Op::Select1 ? uint32_t(0xffffffffull / 100) : 0x80000000u; }

// One copy of the inputs, made on the device and complete when this returns.
struct Inputs {
    std::unique_ptr<Device> keys, flags;
    gpuprim_buffer_t bkeys = nullptr, bflags = nullptr;
};

Inputs make_inputs(Op op, uint64_t n, uint64_t seed) {
    Inputs in;
    in.keys = std::make_unique<Device>(n * 4);
    const unsigned blocks = unsigned(std::min<uint64_t>(4096, (n + 255) / 256));
    auto *keys = static_cast<uint32_t *>(in.keys->p);
    if (is_runs(op)) {
        fill_run_starts<<<blocks, 256, 0, stream>>>(keys, n, seed);
        CHECK_CUDA(cudaGetLastError());
        size_t temp_bytes = 0;
        CHECK_CUDA(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, keys, keys, int64_t(n), stream));
        Device temp(temp_bytes);
        CHECK_CUDA(cub::DeviceScan::InclusiveSum(temp.p, temp_bytes, keys, keys, int64_t(n), stream));
        CHECK_CUDA(cudaStreamSynchronize(stream));  // before temp goes
    } else {
        fill_keys<<<blocks, 256, 0, stream>>>(keys, n, seed);
        CHECK_CUDA(cudaGetLastError());
    }
    if (op == Op::Flagged) {
        in.flags = std::make_unique<Device>(n);
        fill_flags<<<blocks, 256, 0, stream>>>(static_cast<uint8_t *>(in.flags->p), n, seed);
        CHECK_CUDA(cudaGetLastError());
        in.bflags = wrap(ctx, GPUPRIM_DTYPE_U8, in.flags->p, n);
    }
    CHECK_CUDA(cudaStreamSynchronize(stream));
    in.bkeys = wrap(ctx, GPUPRIM_DTYPE_U32, in.keys->p, n);
    return in;
}

// Outputs of one side: keys (or partition's all), a second u32 array
// (lengths; starts for the non-trivial runs' first), the count.
struct Outputs {
    Device first, second, count;
    gpuprim_buffer_t bfirst, bsecond, bcount;
    explicit Outputs(uint64_t n) : first(n * 4), second(n * 4), count(8) {
        bfirst = wrap(ctx, GPUPRIM_DTYPE_U32, first.p, n);
        bsecond = wrap(ctx, GPUPRIM_DTYPE_U32, second.p, n);
        bcount = wrap(ctx, GPUPRIM_DTYPE_U32, count.p, 1);
    }
    ~Outputs() {
        gpuprim_buffer_destroy(ctx, bfirst);
        gpuprim_buffer_destroy(ctx, bsecond);
        gpuprim_buffer_destroy(ctx, bcount);
    }
};

void call_ours(Op op, const Inputs &in, Outputs &out) {
    const uint32_t bound = select_bound(op);
    gpuprim_predicate_t predicate{GPUPRIM_KEEP_LESS, nullptr, &bound, nullptr};
    switch (op) {
    case Op::Select50:
    case Op::Select1:
        CHECK_GP(ctx, gpuprim_select(ctx, in.bkeys, nullptr, &predicate, out.bfirst, nullptr, nullptr, nullptr,
                                     out.bcount));
        return;
    case Op::Flagged:
        predicate = gpuprim_predicate_t{GPUPRIM_KEEP_FLAGGED, in.bflags, nullptr, nullptr};
        CHECK_GP(ctx, gpuprim_select(ctx, in.bkeys, nullptr, &predicate, out.bfirst, nullptr, nullptr, nullptr,
                                     out.bcount));
        return;
    case Op::Partition:
        CHECK_GP(ctx, gpuprim_partition(ctx, in.bkeys, nullptr, &predicate, out.bfirst, nullptr, nullptr, out.bcount));
        return;
    case Op::Unique:
        CHECK_GP(ctx, gpuprim_unique(ctx, in.bkeys, nullptr, out.bfirst, nullptr, nullptr, out.bcount));
        return;
    case Op::Rle:
        CHECK_GP(ctx, gpuprim_run_length_encode(ctx, in.bkeys, GPUPRIM_RUNS_ALL, out.bfirst, nullptr, out.bsecond,
                                                nullptr, out.bcount));
        return;
    case Op::RleNonTrivial:
        CHECK_GP(ctx, gpuprim_run_length_encode(ctx, in.bkeys, GPUPRIM_RUNS_NON_TRIVIAL, nullptr, out.bfirst,
                                                out.bsecond, nullptr, out.bcount));
        return;
    }
}

cudaError_t call_cub(Op op, void *temp, size_t &temp_bytes, const Inputs &in, Outputs &out, uint64_t n) {
    const auto *keys = static_cast<const uint32_t *>(in.keys->p);
    auto *first = static_cast<uint32_t *>(out.first.p);
    auto *second = static_cast<uint32_t *>(out.second.p);
    auto *count = static_cast<uint32_t *>(out.count.p);
    const int items = int(n);
    switch (op) {
    case Op::Select50:
    case Op::Select1:
        return cub::DeviceSelect::If(temp, temp_bytes, keys, first, count, items, LessThan{select_bound(op)}, stream);
    case Op::Flagged:
        return cub::DeviceSelect::Flagged(temp, temp_bytes, keys, static_cast<const uint8_t *>(in.flags->p), first,
                                          count, items, stream);
    case Op::Partition:
        return cub::DevicePartition::If(temp, temp_bytes, keys, first, count, items, LessThan{select_bound(op)},
                                        stream);
    case Op::Unique: return cub::DeviceSelect::Unique(temp, temp_bytes, keys, first, count, items, stream);
    case Op::Rle:
        return cub::DeviceRunLengthEncode::Encode(temp, temp_bytes, keys, first, second, count, items, stream);
    case Op::RleNonTrivial:
        return cub::DeviceRunLengthEncode::NonTrivialRuns(temp, temp_bytes, keys, first, second, count, items, stream);
    }
    return cudaErrorInvalidValue;
}

std::vector<uint32_t> download(const Device &d, uint64_t n) {
    std::vector<uint32_t> host(n);
    if (n) CHECK_CUDA(cudaMemcpy(host.data(), d.p, n * 4, cudaMemcpyDeviceToHost));
    return host;
}

// Our outputs against CUB's: the counts, then the elements written.
bool agrees(Op op, const Outputs &ours, const Outputs &cub, uint64_t n, uint64_t &count) {
    count = download(ours.count, 1)[0];
    if (count != download(cub.count, 1)[0]) return false;
    const bool second = op == Op::Rle || op == Op::RleNonTrivial;
    const uint64_t written = op == Op::Partition ? n : count;
    const std::vector<uint32_t> a = download(ours.first, written), b = download(cub.first, written);
    if (op == Op::Partition) {
        // Kept alike; CUB's others are ours reversed.
        for (uint64_t i = 0; i < n; ++i)
            if (a[i] != (i < count ? b[i] : b[n - 1 - (i - count)])) return false;
        return true;
    }
    if (a != b) return false;
    return !second || download(ours.second, count) == download(cub.second, count);
}

// The least bytes the call moves: keys (and flags) read, outputs written.
double bytes_moved(Op op, uint64_t n, uint64_t count) {
    double bytes = 4.0 * n;
    switch (op) {
    case Op::Flagged: bytes += n + 4.0 * count; break;
    case Op::Partition: bytes += 4.0 * n; break;
    case Op::Rle:
    case Op::RleNonTrivial: bytes += 8.0 * count; break;
    default: bytes += 4.0 * count;
    }
    return bytes;
}

void run_case(Op op, uint64_t n) {
    const uint64_t input_bytes = n * (op == Op::Flagged ? 5 : 4);
    const int copies =
        int(std::max<uint64_t>(2, std::min<uint64_t>(32, (120ull << 20) / std::max<uint64_t>(input_bytes, 1) + 1)));
    const int used = input_bytes * copies > (6ull << 30) ? 1 : copies;
    std::vector<Inputs> inputs;
    for (int c = 0; c < used; ++c) inputs.push_back(make_inputs(op, n, uint64_t(c) * 7919 + n));
    Outputs ours(n), cub(n);
    size_t temp_bytes = 0;
    CHECK_CUDA(call_cub(op, nullptr, temp_bytes, inputs[0], cub, n));
    Device temp(temp_bytes);
    call_ours(op, inputs[0], ours);
    size_t tb = temp_bytes;
    CHECK_CUDA(call_cub(op, temp.p, tb, inputs[0], cub, n));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    uint64_t count = 0;
    const bool agree = agrees(op, ours, cub, n, count);
    const bool batched = input_bytes <= (1u << 20);
    const Timing t_ours = time_call(stream, 21, [&](int c) { call_ours(op, inputs[c], ours); }, used, batched);
    const Timing t_cub = time_call(
        stream, 21,
        [&](int c) {
            size_t t = temp_bytes;
            CHECK_CUDA(call_cub(op, temp.p, t, inputs[c], cub, n));
        },
        used, batched);
    const double bytes = bytes_moved(op, n, count);
    printf("%-15s 2^%-3d %10.1f %10.1f %6.2f", op_name(op), int(std::log2(double(n))), t_ours.single_us,
           t_cub.single_us, t_ours.single_us / t_cub.single_us);
    if (batched)
        printf("  batched %7.2f %7.2f %5.2f", t_ours.batched_us, t_cub.batched_us, t_ours.batched_us / t_cub.batched_us);
    printf("  %6.0f GB/s moved (CUB %6.0f)%s\n", bytes / t_ours.single_us / 1e3, bytes / t_cub.single_us / 1e3,
           agree ? "" : "  OUTPUT DIFFERS FROM CUB'S");
    if (csv)
        fprintf(csv, "%s,%llu,%llu,%.3f,%.3f,%.3f,%.3f,%d\n", op_name(op), (unsigned long long)n,
                (unsigned long long)count, t_ours.single_us, t_cub.single_us, t_ours.batched_us, t_cub.batched_us,
                agree);
    fflush(stdout);
    for (Inputs &in : inputs) {
        gpuprim_buffer_destroy(ctx, in.bkeys);
        if (in.bflags) gpuprim_buffer_destroy(ctx, in.bflags);
    }
    if (!agree) {
        fprintf(stderr, "select_bench: %s 2^%d: output differs from CUB's\n", op_name(op), int(std::log2(double(n))));
        exit(1);
    }
}

}  // namespace

int main(int argc, char **argv) {
    const char *columns = "op,n,count,ours_us,cub_us,ours_batched_us,cub_batched_us,agree";
    if (const int status = start_bench("select_bench", argc, argv, GPUPRIM_BENCH_CUB_VERSION, columns, session))
        return status;
    const std::vector<int> logs = session.quick ? std::vector<int>{10, 20, 28} : std::vector<int>{10, 16, 20, 24, 28};
    const Op ops[] = {Op::Select50, Op::Select1, Op::Flagged, Op::Partition, Op::Unique, Op::Rle, Op::RleNonTrivial};
    for (int lg : logs) {
        if (!session.runs(lg)) continue;
        for (Op op : ops)
            if (session.runs_row(op_name(op))) run_case(op, uint64_t(1) << lg);
    }
    finish_bench(session);
    return 0;
}
