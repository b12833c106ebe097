// SPDX-License-Identifier: Apache-2.0
// searchsorted (gpuprim_searchsorted) beside CUB's DeviceFind::LowerBound
// (random queries) and DeviceFind::LowerBoundSortedValues (sorted queries),
// on the same device buffers (issue 38's table).
//
//   search_bench [--quick] [--log2 N] [--csv FILE]
//
// Keys: n sorted values (uniform random, integers over the whole type,
// floats in [-1, 1)); queries: m values of the same distribution, in random
// order or sorted; U32 indices (U64 for 2^32 keys and more). Each row also
// times ours on the other query order, so "sorted / random" of ours is on
// one line. Timing: CUDA events around one call, warm-up, median of 21;
// copies of the (keys, queries) pair rotate so together they pass the L2;
// inputs of 1 MiB and less are also timed batched (100 calls, divided).
// Every case is checked once: our indices against CUB's (the inputs hold no
// NaN and no -0.0, where the two orders differ).
#include <gpuprim/gpuprim.h>

#include <cub/device/device_find.cuh>
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
#include "device_sort.h"

namespace {

using namespace gpuprim_bench;

BenchSession session;  // set up by main
cudaStream_t &stream = session.stream;
gpuprim_context_t &ctx = session.ctx;
FILE *&csv = session.csv;

struct Less {
    template <typename T>
    __host__ __device__ bool operator()(const T &a, const T &b) const {
        return a < b;
    }
};

template <typename T>
std::vector<T> make_values(uint64_t n, std::mt19937_64 &rng) {
    std::vector<T> v(n);
    for (auto &x : v) {
        const uint64_t r = rng();
        if constexpr (std::is_floating_point_v<T>) x = T(double(r >> 11) * 0x1.0p-52 - 1.0);
        else std::memcpy(&x, &r, sizeof(T));
    }
    return v;
}

struct Copy {
    std::unique_ptr<Device> keys, random_queries, sorted_queries;
    gpuprim_buffer_t keys_buffer, random_buffer, sorted_buffer;
};

template <typename T>
void run_case(const char *dtype_name, gpuprim_dtype_t dtype, uint64_t n, uint64_t m) {
    std::mt19937_64 rng(n * 131 + m);
    const uint64_t bytes = (n + 2 * m) * sizeof(T);
    const int copies = int(std::max<uint64_t>(2, std::min<uint64_t>(32, (120ull << 20) / std::max<uint64_t>(bytes, 1) + 1)));
    const int used = bytes * copies > (6ull << 30) ? 1 : copies;
    std::vector<Copy> inputs(used);
    for (Copy &c : inputs) {
        const std::vector<T> keys = make_values<T>(n, rng), queries = make_values<T>(m, rng);
        c.keys = std::make_unique<Device>(n * sizeof(T));
        c.random_queries = std::make_unique<Device>(m * sizeof(T));
        c.sorted_queries = std::make_unique<Device>(m * sizeof(T));
        CHECK_CUDA(cudaMemcpy(c.keys->p, keys.data(), n * sizeof(T), cudaMemcpyHostToDevice));
        sort_on_device<T>(c.keys->p, n, stream);
        CHECK_CUDA(cudaMemcpy(c.random_queries->p, queries.data(), m * sizeof(T), cudaMemcpyHostToDevice));
        CHECK_CUDA(cudaMemcpy(c.sorted_queries->p, queries.data(), m * sizeof(T), cudaMemcpyHostToDevice));
        sort_on_device<T>(c.sorted_queries->p, m, stream);
        c.keys_buffer = wrap(ctx, dtype, c.keys->p, n);
        c.random_buffer = wrap(ctx, dtype, c.random_queries->p, m);
        c.sorted_buffer = wrap(ctx, dtype, c.sorted_queries->p, m);
    }
    Device out(m * sizeof(uint32_t)), cub_out(m * sizeof(uint32_t));
    gpuprim_buffer_t out_buffer = wrap(ctx, GPUPRIM_DTYPE_U32, out.p, m);
    auto cub_call = [&](void *temp, size_t &tb, const Copy &c, bool sorted) {
        const T *keys = static_cast<const T *>(c.keys->p);
        uint32_t *o = static_cast<uint32_t *>(cub_out.p);
        if (sorted)
            return cub::DeviceFind::LowerBoundSortedValues(temp, tb, keys, int64_t(n),
                                                          static_cast<const T *>(c.sorted_queries->p), int64_t(m), o,
                                                          Less{}, stream);
        return cub::DeviceFind::LowerBound(temp, tb, keys, int64_t(n), static_cast<const T *>(c.random_queries->p),
                                           int64_t(m), o, Less{}, ::cuda::stream_ref{stream});
    };
    const bool batched = bytes <= (1u << 20);
    double ours_us[2] = {0, 0};
    for (int sorted = 0; sorted < 2; ++sorted) {
        size_t temp_bytes = 0;
        CHECK_CUDA(cub_call(nullptr, temp_bytes, inputs[0], sorted));
        Device temp(temp_bytes);
        // The check: ours against CUB's on the first copy.
        CHECK_GP(ctx, gpuprim_searchsorted(ctx, inputs[0].keys_buffer,
                                           sorted ? inputs[0].sorted_buffer : inputs[0].random_buffer,
                                           GPUPRIM_SIDE_LEFT, GPUPRIM_ORDER_ASCENDING, out_buffer));
        size_t tb = temp_bytes;
        CHECK_CUDA(cub_call(temp.p, tb, inputs[0], sorted));
        std::vector<uint32_t> ours_host(m), cub_host(m);
        CHECK_CUDA(cudaStreamSynchronize(stream));
        CHECK_CUDA(cudaMemcpy(ours_host.data(), out.p, m * sizeof(uint32_t), cudaMemcpyDeviceToHost));
        CHECK_CUDA(cudaMemcpy(cub_host.data(), cub_out.p, m * sizeof(uint32_t), cudaMemcpyDeviceToHost));
        const bool agree = ours_host == cub_host;
        const Timing ours = time_call(
            stream, 21,
            [&](int c) {
                CHECK_GP(ctx, gpuprim_searchsorted(ctx, inputs[c].keys_buffer,
                                                   sorted ? inputs[c].sorted_buffer : inputs[c].random_buffer,
                                                   GPUPRIM_SIDE_LEFT, GPUPRIM_ORDER_ASCENDING, out_buffer));
            },
            used, batched);
        const Timing cub = time_call(
            stream, 21,
            [&](int c) {
                size_t t = temp_bytes;
                CHECK_CUDA(cub_call(temp.p, t, inputs[c], sorted));
            },
            used, batched);
        ours_us[sorted] = ours.single_us;
        printf("%-4s n=2^%-2d m=2^%-2d %-7s %10.1f %10.1f %6.2f", dtype_name, int(std::log2(double(n))),
               int(std::log2(double(m))), sorted ? "sorted" : "random", ours.single_us, cub.single_us,
               ours.single_us / cub.single_us);
        if (batched)
            printf("  batched %7.2f %7.2f %5.2f", ours.batched_us, cub.batched_us, ours.batched_us / cub.batched_us);
        if (sorted) printf("  ours random/sorted %5.2f", ours_us[0] / ours_us[1]);
        printf("%s\n", agree ? "" : "  INDICES DIFFER FROM CUB'S");
        if (csv)
            fprintf(csv, "%s,%llu,%llu,%s,%.3f,%.3f,%.3f,%.3f,%d\n", dtype_name, (unsigned long long)n,
                    (unsigned long long)m, sorted ? "sorted" : "random", ours.single_us, cub.single_us,
                    ours.batched_us, cub.batched_us, agree);
        fflush(stdout);
        if (!agree) {
            for (uint64_t j = 0; j < m; ++j)
                if (ours_host[j] != cub_host[j]) {
                    fprintf(stderr, "search_bench: query %llu: ours %u, CUB %u\n", (unsigned long long)j,
                            ours_host[j], cub_host[j]);
                    break;
                }
            exit(1);
        }
    }
    gpuprim_buffer_destroy(ctx, out_buffer);
    for (Copy &c : inputs) {
        gpuprim_buffer_destroy(ctx, c.keys_buffer);
        gpuprim_buffer_destroy(ctx, c.random_buffer);
        gpuprim_buffer_destroy(ctx, c.sorted_buffer);
    }
}

}  // namespace

int main(int argc, char **argv) {
    const char *columns = "dtype,n,m,queries,ours_us,cub_us,ours_batched_us,cub_batched_us,agree";
    if (const int status = start_bench("search_bench", argc, argv, GPUPRIM_BENCH_CUB_VERSION, columns, session))
        return status;
    const bool quick = session.quick;
    const std::vector<int> logs = quick ? std::vector<int>{10, 20, 26} : std::vector<int>{10, 14, 16, 20, 24, 26};
    for (int lg : logs) {
        if (!session.runs(lg)) continue;
        const uint64_t n = uint64_t(1) << lg;
        run_case<uint32_t>("u32", GPUPRIM_DTYPE_U32, n, n);
        if (quick && lg != 26) continue;
        run_case<float>("f32", GPUPRIM_DTYPE_F32, n, n);
        run_case<uint64_t>("u64", GPUPRIM_DTYPE_U64, n, n);
    }
    // Unequal sizes: few queries into many keys, many queries into few keys.
    if (!session.only_log2) run_case<uint32_t>("u32", GPUPRIM_DTYPE_U32, uint64_t(1) << 26, uint64_t(1) << 16);
    if (!session.only_log2) run_case<uint32_t>("u32", GPUPRIM_DTYPE_U32, uint64_t(1) << 12, uint64_t(1) << 26);
    finish_bench(session);
    return 0;
}
