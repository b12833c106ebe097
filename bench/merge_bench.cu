// SPDX-License-Identifier: Apache-2.0
// gpuprim_merge beside CUB's DeviceMerge::MergeKeys / MergePairs on the same
// device buffers (issue 38's table: 2^27 + 2^27 u32 keys and pairs).
//
//   merge_bench [--quick] [--log2 N] [--csv FILE]
//
// Runs: two sorted runs of uniform random u32 (or u64) keys of 2^(k-1)
// each, u32 values. The bytes-moved bound is (keys + values) read once and
// written once; the table prints our GB/s of that. Timing: CUDA events
// around one call, warm-up, median of 21; copies rotate past the L2; 1 MiB
// and less also batched. Every case is checked once: our outputs against
// CUB's, bit for bit (both are stable, ties to the first run).
#include <gpuprim/gpuprim.h>

#include <cub/device/device_merge.cuh>
#include <cub/version.cuh>
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

template <typename K>
void run_case(const char *key_name, gpuprim_dtype_t key_dtype, uint64_t n, bool pairs) {
    std::mt19937_64 rng(n * 3 + pairs);
    const uint64_t na = n / 2, nb = n - na;
    const uint64_t bytes = n * (sizeof(K) + (pairs ? 4 : 0));
    const int copies = int(std::max<uint64_t>(2, std::min<uint64_t>(32, (120ull << 20) / std::max<uint64_t>(bytes, 1) + 1)));
    const int used = bytes * copies > (6ull << 30) ? 1 : copies;
    struct Copy {
        std::unique_ptr<Device> a, b, va, vb;
        gpuprim_buffer_t ba, bb, bva, bvb;
    };
    std::vector<Copy> inputs(used);
    for (Copy &c : inputs) {
        std::vector<K> a(na), b(nb);
        for (auto &x : a) x = K(rng());
        for (auto &x : b) x = K(rng());
        std::vector<uint32_t> va(na), vb(nb);
        for (uint64_t i = 0; i < na; ++i) va[i] = uint32_t(i);
        for (uint64_t i = 0; i < nb; ++i) vb[i] = uint32_t(na + i);
        c.a = std::make_unique<Device>(na * sizeof(K));
        c.b = std::make_unique<Device>(nb * sizeof(K));
        c.va = std::make_unique<Device>(na * 4);
        c.vb = std::make_unique<Device>(nb * 4);
        CHECK_CUDA(cudaMemcpy(c.a->p, a.data(), na * sizeof(K), cudaMemcpyHostToDevice));
        CHECK_CUDA(cudaMemcpy(c.b->p, b.data(), nb * sizeof(K), cudaMemcpyHostToDevice));
        sort_on_device<K>(c.a->p, na, stream);
        sort_on_device<K>(c.b->p, nb, stream);
        CHECK_CUDA(cudaMemcpy(c.va->p, va.data(), na * 4, cudaMemcpyHostToDevice));
        CHECK_CUDA(cudaMemcpy(c.vb->p, vb.data(), nb * 4, cudaMemcpyHostToDevice));
        c.ba = wrap(ctx, key_dtype, c.a->p, na);
        c.bb = wrap(ctx, key_dtype, c.b->p, nb);
        c.bva = wrap(ctx, GPUPRIM_DTYPE_U32, c.va->p, na);
        c.bvb = wrap(ctx, GPUPRIM_DTYPE_U32, c.vb->p, nb);
    }
    Device keys_out(n * sizeof(K)), values_out(n * 4), cub_keys(n * sizeof(K)), cub_values(n * 4);
    gpuprim_buffer_t bko = wrap(ctx, key_dtype, keys_out.p, n), bvo = wrap(ctx, GPUPRIM_DTYPE_U32, values_out.p, n);
    auto ours_call = [&](int c) {
        const Copy &in = inputs[c];
        CHECK_GP(ctx, gpuprim_merge(ctx, in.ba, pairs ? in.bva : nullptr, in.bb, pairs ? in.bvb : nullptr, bko,
                                    pairs ? bvo : nullptr, GPUPRIM_ORDER_ASCENDING));
    };
    auto cub_call = [&](void *temp, size_t &tb, int c) {
        const Copy &in = inputs[c];
        if (pairs)
            return cub::DeviceMerge::MergePairs(temp, tb, static_cast<const K *>(in.a->p),
                                                static_cast<const uint32_t *>(in.va->p), int64_t(na),
                                                static_cast<const K *>(in.b->p), static_cast<const uint32_t *>(in.vb->p),
                                                int64_t(nb), static_cast<K *>(cub_keys.p),
                                                static_cast<uint32_t *>(cub_values.p), Less{}, stream);
        return cub::DeviceMerge::MergeKeys(temp, tb, static_cast<const K *>(in.a->p), int64_t(na),
                                           static_cast<const K *>(in.b->p), int64_t(nb), static_cast<K *>(cub_keys.p),
                                           Less{}, stream);
    };
    size_t temp_bytes = 0;
    CHECK_CUDA(cub_call(nullptr, temp_bytes, 0));
    Device temp(temp_bytes);
    ours_call(0);
    size_t tb = temp_bytes;
    CHECK_CUDA(cub_call(temp.p, tb, 0));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    std::vector<K> ok(n), ck(n);
    std::vector<uint32_t> ov(n), cv(n);
    CHECK_CUDA(cudaMemcpy(ok.data(), keys_out.p, n * sizeof(K), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(ck.data(), cub_keys.p, n * sizeof(K), cudaMemcpyDeviceToHost));
    bool agree = ok == ck;
    if (pairs) {
        CHECK_CUDA(cudaMemcpy(ov.data(), values_out.p, n * 4, cudaMemcpyDeviceToHost));
        CHECK_CUDA(cudaMemcpy(cv.data(), cub_values.p, n * 4, cudaMemcpyDeviceToHost));
        agree = agree && ov == cv;
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
    printf("%-4s %-5s 2^%-3d %10.1f %10.1f %6.2f", key_name, pairs ? "pairs" : "keys", int(std::log2(double(n))),
           ours.single_us, cub.single_us, ours.single_us / cub.single_us);
    if (batched) printf("  batched %7.2f %7.2f %5.2f", ours.batched_us, cub.batched_us, ours.batched_us / cub.batched_us);
    printf("  %6.0f GB/s moved%s\n", 2.0 * bytes / ours.single_us / 1e3, agree ? "" : "  OUTPUT DIFFERS FROM CUB'S");
    if (csv)
        fprintf(csv, "%s,%s,%llu,%.3f,%.3f,%.3f,%.3f,%d\n", key_name, pairs ? "pairs" : "keys", (unsigned long long)n,
                ours.single_us, cub.single_us, ours.batched_us, cub.batched_us, agree);
    fflush(stdout);
    if (!agree) {
        fprintf(stderr, "merge_bench: output differs from CUB's\n");
        exit(1);
    }
    gpuprim_buffer_destroy(ctx, bko);
    gpuprim_buffer_destroy(ctx, bvo);
    for (Copy &c : inputs) {
        gpuprim_buffer_destroy(ctx, c.ba);
        gpuprim_buffer_destroy(ctx, c.bb);
        gpuprim_buffer_destroy(ctx, c.bva);
        gpuprim_buffer_destroy(ctx, c.bvb);
    }
}

}  // namespace

int main(int argc, char **argv) {
    const char *columns = "keys,kind,n,ours_us,cub_us,ours_batched_us,cub_batched_us,agree";
    if (const int status = start_bench("merge_bench", argc, argv, GPUPRIM_BENCH_CUB_VERSION, columns, session))
        return status;
    const bool quick = session.quick;
    const std::vector<int> logs = quick ? std::vector<int>{10, 20, 28} : std::vector<int>{10, 14, 16, 20, 24, 28};
    for (int lg : logs) {
        if (!session.runs(lg)) continue;
        for (int pairs = 0; pairs < 2; ++pairs) {
            run_case<uint32_t>("u32", GPUPRIM_DTYPE_U32, uint64_t(1) << lg, pairs);
            if (!quick && lg <= 26) run_case<uint64_t>("u64", GPUPRIM_DTYPE_U64, uint64_t(1) << lg, pairs);
        }
    }
    finish_bench(session);
    return 0;
}
