// SPDX-License-Identifier: Apache-2.0
// check_merge: the stable merge of sorted runs (src/cuda/merge/merge.cu, the
// distributed sort's last step) against a host merge and timed beside CUB's
// DeviceMerge (merge_cub_bar.cu; CCCL 3.6 when GPUPRIM_BENCH_CCCL_INCLUDE
// names its headers), on the same buffers.
//
//   check_merge [log2 n = 28] [runs = 2] [reps = 15]
//
// u32 keys, then u32/u32 pairs: n elements in `runs` equal runs, each sorted
// with duplicates (increments drawn from [0, 2 * 2^32 / run length)). Times
// are medians of reps calls between CUDA events, inputs rotated over three
// copies (each past L2). Bandwidth: bytes read + written once.
#include "harness.h"

#include "core/backend.h"
#include "cuda/merge/merge.h"

#include <cstring>

double cub_merge_ms(cudaStream_t stream, void *const keys[3], void *const values[3], uint64_t first_count,
                    uint64_t n, void *keys_out, void *values_out, int reps, int *cub_version);

namespace {


uint64_t state = 0x9E3779B97F4A7C15ull;
uint32_t next_random() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return uint32_t(state >> 11);
}

// runs equal runs of n keys, each non-decreasing.
std::vector<uint32_t> sorted_runs(uint64_t n, uint32_t runs, std::vector<uint64_t> &starts) {
    std::vector<uint32_t> keys(n);
    starts.assign(runs + 1, 0);
    for (uint32_t r = 0; r <= runs; ++r) starts[r] = n / runs * r + std::min<uint64_t>(r, n % runs);
    for (uint32_t r = 0; r < runs; ++r) {
        const uint64_t length = starts[r + 1] - starts[r];
        const uint64_t spread = length ? std::max<uint64_t>(2, (uint64_t(2) << 32) / length) : 2;
        uint64_t key = next_random() % spread;
        for (uint64_t i = starts[r]; i < starts[r + 1]; ++i) {
            keys[i] = uint32_t(std::min<uint64_t>(key, 0xFFFFFFFFull));
            key += next_random() % spread;
        }
    }
    return keys;
}

// The stable merge of the runs on the host: keys and their input positions.
void host_merge(const std::vector<uint32_t> &keys, const std::vector<uint64_t> &starts,
                std::vector<uint32_t> &merged, std::vector<uint32_t> &positions) {
    const uint64_t n = keys.size();
    std::vector<uint64_t> order(n);
    for (uint64_t i = 0; i < n; ++i) order[i] = i;
    std::vector<uint64_t> scratch(n);
    std::vector<uint64_t> bounds(starts);
    while (bounds.size() > 2) {  // pairwise rounds, like the kernel: ties from the lower run first
        std::vector<uint64_t> next;
        for (size_t r = 0; r + 1 < bounds.size(); r += 2) {
            const uint64_t lo = bounds[r], mid = bounds[r + 1], hi = r + 2 < bounds.size() ? bounds[r + 2] : mid;
            std::merge(order.begin() + lo, order.begin() + mid, order.begin() + mid, order.begin() + hi,
                       scratch.begin() + lo, [&](uint64_t a, uint64_t b) { return keys[a] < keys[b]; });
            next.push_back(lo);
        }
        next.push_back(bounds.back());
        std::copy(scratch.begin(), scratch.begin() + n, order.begin());
        bounds.swap(next);
    }
    merged.resize(n);
    positions.resize(n);
    for (uint64_t i = 0; i < n; ++i) {
        merged[i] = keys[order[i]];
        positions[i] = uint32_t(order[i]);
    }
}

}  // namespace

int main(int argc, char **argv) {
    const int log_n = argc > 1 ? std::atoi(argv[1]) : 28;
    const uint32_t runs = argc > 2 ? uint32_t(std::atoi(argv[2])) : 2;
    const int reps = argc > 3 ? std::atoi(argv[3]) : 15;
    const uint64_t n = uint64_t(1) << log_n;
    kernel_check::KernelEnv k;
    k.print_device();
    std::vector<uint64_t> starts;
    const std::vector<uint32_t> keys = sorted_runs(n, runs, starts);
    std::vector<uint32_t> values(n);
    for (uint64_t i = 0; i < n; ++i) values[i] = uint32_t(i);
    std::vector<uint32_t> want_keys, want_values;
    host_merge(keys, starts, want_keys, want_values);

    const size_t bytes = n * sizeof(uint32_t);
    void *keys_in[3], *values_in[3], *keys_out, *values_out, *spare_keys, *spare_values;
    for (int c = 0; c < 3; ++c) {
        CK(cudaMalloc(&keys_in[c], bytes));
        CK(cudaMalloc(&values_in[c], bytes));
        CK(cudaMemcpy(keys_in[c], keys.data(), bytes, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(values_in[c], values.data(), bytes, cudaMemcpyHostToDevice));
    }
    CK(cudaMalloc(&keys_out, bytes));
    CK(cudaMalloc(&values_out, bytes));
    CK(cudaMalloc(&spare_keys, bytes));
    CK(cudaMalloc(&spare_values, bytes));

    int failures = 0;
    auto verify = [&](const char *what, bool pairs) {
        std::vector<uint32_t> got(n);
        CK(cudaMemcpy(got.data(), keys_out, bytes, cudaMemcpyDeviceToHost));
        if (std::memcmp(got.data(), want_keys.data(), bytes) != 0) {
            std::printf("FAIL %s: keys differ from the host merge\n", what);
            ++failures;
        }
        if (pairs) {
            CK(cudaMemcpy(got.data(), values_out, bytes, cudaMemcpyDeviceToHost));
            if (std::memcmp(got.data(), want_values.data(), bytes) != 0) {
                std::printf("FAIL %s: values differ from the host merge (not stable?)\n", what);
                ++failures;
            }
        }
    };

    std::printf("merge of %u sorted runs, n = 2^%d (%llu) u32 keys; median of %d calls\n", runs, log_n,
                (unsigned long long)n, reps);
    std::printf("%-22s %12s %10s\n", "case", "time (us)", "GB/s");
    for (int pairs = 0; pairs < 2; ++pairs) {
        gpuprim::SortRequest request{};
        request.count = n;
        request.key_bytes = 4;
        request.value_bytes = pairs ? 4 : 0;
        request.key_kind = gpuprim::KeyKind::Unsigned;
        request.begin_bit = 0;
        request.end_bit = 32;
        request.keys_out = keys_out;
        request.values_out = pairs ? values_out : nullptr;
        auto run = [&](int copy) {
            request.keys_in = keys_in[copy];
            request.values_in = pairs ? values_in[copy] : nullptr;
            gpuprim::cuda::merge_sorted_runs(k.env, request, starts.data(), runs, spare_keys,
                                             pairs ? spare_values : nullptr);
        };
        CK(cudaMemset(keys_out, 0x5A, bytes));
        CK(cudaMemset(values_out, 0x5A, bytes));
        const double ms = kernel_check::median_ms(k.env.stream, reps, run);
        CK(cudaStreamSynchronize(k.env.stream));
        verify(pairs ? "ours pairs" : "ours keys", pairs);
        const double moved = double(bytes) * (pairs ? 4 : 2);
        std::printf("%-22s %12.1f %10.0f\n", pairs ? "ours pairs u32/u32" : "ours keys u32", ms * 1000,
                    moved / (ms * 1e6));
        if (runs == 2) {
            int version = 0;
            CK(cudaMemset(keys_out, 0x5A, bytes));
            CK(cudaMemset(values_out, 0x5A, bytes));
            const double cub_ms = cub_merge_ms(k.env.stream, keys_in, pairs ? values_in : nullptr,
                                               starts[1], n, keys_out, pairs ? values_out : nullptr, reps,
                                               &version);
            verify(pairs ? "CUB pairs" : "CUB keys", pairs);
            char label[64];
            std::snprintf(label, sizeof label, "CUB %d.%d.%d %s", version / 100000, version / 100 % 1000,
                          version % 100, pairs ? "pairs" : "keys");
            std::printf("%-22s %12.1f %10.0f   (ours / CUB time %.3f)\n", label, cub_ms * 1000,
                        moved / (cub_ms * 1e6), ms / cub_ms);
        }
    }
    std::printf("%s\n", failures ? "check_merge: FAILED" : "check_merge: all results match the host merge");
    return failures ? 1 : 0;
}
