// SPDX-License-Identifier: Apache-2.0
// Segmented primitives and argsort (issue 19) beside CUB in the same run:
//
//   segmented_bench [--quick] [--filter SUBSTRING] [--csv FILE] [--long-log2 N]
//
// --long-log2 N: instead, only the shapes of few long segments (256 and 16
// rows) at 2^N elements in total (issue 34's long-segment scans at 2^28:
// `--filter scan --long-log2 28`).
// Shapes of 2^24 f32 in total (rows x length, and power-law CSR lengths):
// segmented sort keys and pairs (ours by rows and by offsets, CUB
// DeviceSegmentedSort), our flat sort of the same total, segmented reduce
// sum (CUB DeviceSegmentedReduce), segmented inclusive sum scan (beside a
// device copy of the same bytes), and flat argsort of u32 keys into u32 and
// u64 indices at 2^20-2^28 (CUB: a pair sort whose values are an iota buffer
// made beforehand, outside the timing).
//
// Timing: CUDA events around one call, warm-up, median of the repetitions;
// inputs rotate over copies that together exceed L2 (each 2^24 f32 input is
// 64 MB, past the H100's 50 MB L2). Small shapes are also timed batched
// (100 calls between events, divided). Every output is checked against CUB
// (or a flat gpuprim call) once, after the timing.
#include <gpuprim/gpuprim.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "bench_util.h"

namespace {

using namespace gpuprim_bench;

cudaStream_t stream;
gpuprim_context_t ctx;
int repeats = 15;
FILE *csv;

void report(const std::string &shape, const std::string &what, const std::string &who, uint64_t n, Timing t,
            double bytes) {
    const double gbps = bytes / t.single_us / 1e3;
    printf("%-26s %-22s %-28s %12.1f us", shape.c_str(), what.c_str(), who.c_str(), t.single_us);
    if (t.batched_us > 0) printf("  batched %9.2f us", t.batched_us);
    printf("  %7.2f Gkeys/s  %7.0f GB/s\n", n / t.single_us / 1e3, gbps);
    if (csv)
        fprintf(csv, "%s,%s,%s,%llu,%.3f,%.3f,%.3f,%.1f\n", shape.c_str(), what.c_str(), who.c_str(),
                (unsigned long long)n, t.single_us, t.batched_us, n / t.single_us / 1e3, gbps);
    fflush(stdout);
}

struct Shape {
    std::string name;
    uint64_t rows, length;  // uniform rows; rows == 0: power-law offsets
};

// Power-law lengths (Pareto, alpha ~1.5, min 16), mean near 96, until the
// total reaches n; the last segment takes the rest.
std::vector<int32_t> power_law_offsets(uint64_t n) {
    std::mt19937_64 rng(42);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::vector<int32_t> offsets{0};
    uint64_t at = 0;
    while (at < n) {
        uint64_t length = uint64_t(32.0 / std::pow(1.0 - u(rng), 1.0 / 1.5)) - 16;
        length = std::min<uint64_t>(length, n - at);
        at += length;
        offsets.push_back(int32_t(at));
    }
    return offsets;
}

void fill_random(void *p, uint64_t n, uint64_t seed) {
    std::vector<float> host(n);
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> u(-1e6f, 1e6f);
    for (auto &x : host) x = u(rng);
    CHECK_CUDA(cudaMemcpy(p, host.data(), n * 4, cudaMemcpyHostToDevice));
}

// Standard normal floats, as torch.randn makes (their top byte, sign and
// exponent, takes a few values).
void fill_normal(void *p, uint64_t n, uint64_t seed) {
    std::vector<float> host(n);
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (auto &x : host) x = normal(rng);
    CHECK_CUDA(cudaMemcpy(p, host.data(), n * 4, cudaMemcpyHostToDevice));
}

bool same_bytes(const void *a, const void *b, size_t bytes) {
    std::vector<unsigned char> x(bytes), y(bytes);
    CHECK_CUDA(cudaMemcpy(x.data(), a, bytes, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(y.data(), b, bytes, cudaMemcpyDeviceToHost));
    return x == y;
}

void mismatch(const std::string &shape, const char *what) {
    printf("MISMATCH %s %s\n", shape.c_str(), what);
    if (csv) fprintf(csv, "%s,%s,MISMATCH,0,0,0,0,0\n", shape.c_str(), what);
}

void run_shape(const Shape &shape, uint64_t total, const std::string &filter) {
    std::vector<int32_t> offsets;
    if (shape.rows == 0) {
        offsets = power_law_offsets(total);
    } else {
        for (uint64_t r = 0; r <= shape.rows; ++r) offsets.push_back(int32_t(r * shape.length));
    }
    const uint64_t n = uint64_t(offsets.back());
    const uint64_t segments = offsets.size() - 1;
    char name[64];
    if (shape.rows) snprintf(name, sizeof name, "%llu x %llu", (unsigned long long)shape.rows, (unsigned long long)shape.length);
    else snprintf(name, sizeof name, "power-law %llu segs", (unsigned long long)segments);
    const std::string label = name;
    const bool small = n < (1u << 20);
    const int copies = small ? 1 : 2;
    printf("\n== %s (%llu elements, %llu segments) ==\n", label.c_str(), (unsigned long long)n, (unsigned long long)segments);

    std::vector<std::unique_ptr<Device>> keys, values;
    for (int c = 0; c < copies; ++c) {
        keys.emplace_back(new Device(n * 4));
        values.emplace_back(new Device(n * 4));
        fill_random(keys.back()->p, n, 7 + c);
        CHECK_CUDA(cudaMemcpy(values.back()->p, keys.back()->p, n * 4, cudaMemcpyDeviceToDevice));
    }
    Device keys_out(n * 4), values_out(n * 4), cub_keys_out(n * 4), cub_values_out(n * 4);
    Device offsets_device(offsets.size() * 4);
    CHECK_CUDA(cudaMemcpy(offsets_device.p, offsets.data(), offsets.size() * 4, cudaMemcpyHostToDevice));
    const int32_t *begin_offsets = static_cast<const int32_t *>(offsets_device.p);
    const int32_t *end_offsets = begin_offsets + 1;

    std::vector<gpuprim_buffer_t> wk, wv;
    for (int c = 0; c < copies; ++c) {
        wk.push_back(wrap(ctx, GPUPRIM_DTYPE_F32, keys[c]->p, n));
        wv.push_back(wrap(ctx, GPUPRIM_DTYPE_U32, values[c]->p, n));
    }
    gpuprim_buffer_t wko = wrap(ctx, GPUPRIM_DTYPE_F32, keys_out.p, n), wvo = wrap(ctx, GPUPRIM_DTYPE_U32, values_out.p, n);
    gpuprim_buffer_t wvo_f = wrap(ctx, GPUPRIM_DTYPE_F32, values_out.p, segments);
    gpuprim_buffer_t woff = wrap(ctx, GPUPRIM_DTYPE_I32, offsets_device.p, offsets.size());
    gpuprim_segments_t by_rows, by_offsets;
    gpuprim_segments_init_rows(&by_rows, shape.rows, shape.length);
    gpuprim_segments_init_offsets(&by_offsets, woff);
    const gpuprim_segments_t *ours_segments = shape.rows ? &by_rows : &by_offsets;

    auto wanted = [&](const char *what) { return filter.empty() || std::string(what).find(filter) != std::string::npos; };

    void *temp = nullptr;
    size_t temp_bytes = 0;
    auto ensure_temp = [&](size_t bytes) {
        if (bytes > temp_bytes) {
            if (temp) CHECK_CUDA(cudaFree(temp));
            CHECK_CUDA(cudaMalloc(&temp, bytes));
            temp_bytes = bytes;
        }
    };

    if (wanted("sort_keys")) {
        const double bytes = 2.0 * n * 4;
        report(label, "sort_keys", "ours", n,
               time_call(stream, repeats, [&](int c) { CHECK_GP(ctx, gpuprim_segmented_sort(ctx, ours_segments, wk[c], nullptr, wko, nullptr, nullptr)); },
                         copies, small),
               bytes);
        if (shape.rows)
            report(label, "sort_keys", "ours (as offsets)", n,
                   time_call(stream, repeats, [&](int c) { CHECK_GP(ctx, gpuprim_segmented_sort(ctx, &by_offsets, wk[c], nullptr, wko, nullptr, nullptr)); },
                             copies, small),
                   bytes);
        size_t need = 0;
        CHECK_CUDA(cub::DeviceSegmentedSort::SortKeys(nullptr, need, (const float *)nullptr, (float *)nullptr, int64_t(n),
                                                      int64_t(segments), begin_offsets, end_offsets, stream));
        ensure_temp(need);
        report(label, "sort_keys", "CUB DeviceSegmentedSort", n,
               time_call(stream, repeats, [&](int c) {
                   size_t b = temp_bytes;
                   CHECK_CUDA(cub::DeviceSegmentedSort::SortKeys(temp, b, static_cast<const float *>(keys[c]->p),
                                                                 static_cast<float *>(cub_keys_out.p), int64_t(n),
                                                                 int64_t(segments), begin_offsets, end_offsets, stream));
               }, copies, small),
               bytes);
        report(label, "sort_keys", "ours flat sort, same n", n,
               time_call(stream, repeats, [&](int c) { CHECK_GP(ctx, gpuprim_sort(ctx, wk[c], nullptr, wko, nullptr, GPUPRIM_ORDER_ASCENDING)); },
                         copies, small),
               bytes);
        // Check: ours against CUB on copy 0 (CUB orders -0.0 and +0.0 as equal; the random input has neither).
        CHECK_GP(ctx, gpuprim_segmented_sort(ctx, ours_segments, wk[0], nullptr, wko, nullptr, nullptr));
        size_t b = temp_bytes;
        CHECK_CUDA(cub::DeviceSegmentedSort::SortKeys(temp, b, static_cast<const float *>(keys[0]->p),
                                                      static_cast<float *>(cub_keys_out.p), int64_t(n), int64_t(segments),
                                                      begin_offsets, end_offsets, stream));
        CHECK_CUDA(cudaStreamSynchronize(stream));
        if (!same_bytes(keys_out.p, cub_keys_out.p, n * 4)) mismatch(label, "sort_keys");
    }
    if (wanted("sort_pairs")) {
        const double bytes = 4.0 * n * 4;
        report(label, "sort_pairs", "ours", n,
               time_call(stream, repeats, [&](int c) { CHECK_GP(ctx, gpuprim_segmented_sort(ctx, ours_segments, wk[c], wv[c], wko, wvo, nullptr)); },
                         copies, small),
               bytes);
        if (shape.rows)
            report(label, "sort_pairs", "ours (as offsets)", n,
                   time_call(stream, repeats, [&](int c) { CHECK_GP(ctx, gpuprim_segmented_sort(ctx, &by_offsets, wk[c], wv[c], wko, wvo, nullptr)); },
                             copies, small),
                   bytes);
        size_t need = 0;
        CHECK_CUDA(cub::DeviceSegmentedSort::StableSortPairs(nullptr, need, (const float *)nullptr, (float *)nullptr,
                                                             (const uint32_t *)nullptr, (uint32_t *)nullptr, int64_t(n),
                                                             int64_t(segments), begin_offsets, end_offsets, stream));
        ensure_temp(need);
        report(label, "sort_pairs", "CUB DeviceSegmentedSort stable", n,
               time_call(stream, repeats, [&](int c) {
                   size_t b = temp_bytes;
                   CHECK_CUDA(cub::DeviceSegmentedSort::StableSortPairs(
                       temp, b, static_cast<const float *>(keys[c]->p), static_cast<float *>(cub_keys_out.p),
                       static_cast<const uint32_t *>(values[c]->p), static_cast<uint32_t *>(cub_values_out.p), int64_t(n),
                       int64_t(segments), begin_offsets, end_offsets, stream));
               }, copies, small),
               bytes);
        report(label, "sort_pairs", "ours flat sort, same n", n,
               time_call(stream, repeats, [&](int c) { CHECK_GP(ctx, gpuprim_sort(ctx, wk[c], wv[c], wko, wvo, GPUPRIM_ORDER_ASCENDING)); },
                         copies, small),
               bytes);
        report(label, "argsort", "ours (u32 indices)", n,
               time_call(stream, repeats, [&](int c) { CHECK_GP(ctx, gpuprim_segmented_argsort(ctx, ours_segments, wk[c], nullptr, wvo, nullptr)); },
                         copies, small),
               2.0 * n * 4);
        CHECK_GP(ctx, gpuprim_segmented_sort(ctx, ours_segments, wk[0], wv[0], wko, wvo, nullptr));
        size_t b = temp_bytes;
        CHECK_CUDA(cub::DeviceSegmentedSort::StableSortPairs(
            temp, b, static_cast<const float *>(keys[0]->p), static_cast<float *>(cub_keys_out.p),
            static_cast<const uint32_t *>(values[0]->p), static_cast<uint32_t *>(cub_values_out.p), int64_t(n),
            int64_t(segments), begin_offsets, end_offsets, stream));
        CHECK_CUDA(cudaStreamSynchronize(stream));
        if (!same_bytes(values_out.p, cub_values_out.p, n * 4)) mismatch(label, "sort_pairs");
    }
    if (wanted("reduce")) {
        const double bytes = 4.0 * n;
        report(label, "reduce_sum", "ours", n,
               time_call(stream, repeats, [&](int c) { CHECK_GP(ctx, gpuprim_segmented_reduce(ctx, GPUPRIM_OP_SUM, ours_segments, wk[c], wvo_f)); },
                         copies, small),
               bytes);
        if (shape.rows)
            report(label, "reduce_sum", "ours (as offsets)", n,
                   time_call(stream, repeats, [&](int c) { CHECK_GP(ctx, gpuprim_segmented_reduce(ctx, GPUPRIM_OP_SUM, &by_offsets, wk[c], wvo_f)); },
                             copies, small),
                   bytes);
        size_t need = 0;
        CHECK_CUDA(cub::DeviceSegmentedReduce::Sum(nullptr, need, (const float *)nullptr, (float *)nullptr,
                                                   int64_t(segments), begin_offsets, end_offsets, stream));
        ensure_temp(need);
        report(label, "reduce_sum", "CUB DeviceSegmentedReduce", n,
               time_call(stream, repeats, [&](int c) {
                   size_t b = temp_bytes;
                   CHECK_CUDA(cub::DeviceSegmentedReduce::Sum(temp, b, static_cast<const float *>(keys[c]->p),
                                                              static_cast<float *>(cub_values_out.p), int64_t(segments),
                                                              begin_offsets, end_offsets, stream));
               }, copies, small),
               bytes);
        // Check: relative to the magnitude of each segment.
        CHECK_GP(ctx, gpuprim_segmented_reduce(ctx, GPUPRIM_OP_SUM, ours_segments, wk[0], wvo_f));
        size_t b = temp_bytes;
        CHECK_CUDA(cub::DeviceSegmentedReduce::Sum(temp, b, static_cast<const float *>(keys[0]->p),
                                                   static_cast<float *>(cub_values_out.p), int64_t(segments),
                                                   begin_offsets, end_offsets, stream));
        CHECK_CUDA(cudaStreamSynchronize(stream));
        std::vector<float> x(segments), y(segments);
        CHECK_CUDA(cudaMemcpy(x.data(), values_out.p, segments * 4, cudaMemcpyDeviceToHost));
        CHECK_CUDA(cudaMemcpy(y.data(), cub_values_out.p, segments * 4, cudaMemcpyDeviceToHost));
        for (uint64_t s = 0; s < segments; ++s) {
            const double length = offsets[s + 1] - offsets[s];
            if (std::fabs(double(x[s]) - y[s]) > 1e6 * length * 1e-6 + 1e-3) {
                mismatch(label, "reduce_sum");
                break;
            }
        }
    }
    if (wanted("scan")) {
        const double bytes = 2.0 * n * 4;
        report(label, "scan_inclusive_sum", "ours", n,
               time_call(stream, repeats, [&](int c) {
                   CHECK_GP(ctx, gpuprim_segmented_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, ours_segments, wk[c], wko));
               }, copies, small),
               bytes);
        report(label, "scan_inclusive_sum", "device copy of the same bytes", n,
               time_call(stream, repeats, [&](int c) { CHECK_CUDA(cudaMemcpyAsync(keys_out.p, keys[c]->p, n * 4, cudaMemcpyDeviceToDevice, stream)); },
                         copies, small),
               bytes);
    }
    if (temp) CHECK_CUDA(cudaFree(temp));
    for (int c = 0; c < copies; ++c) {
        gpuprim_buffer_destroy(ctx, wk[c]);
        gpuprim_buffer_destroy(ctx, wv[c]);
    }
    gpuprim_buffer_destroy(ctx, wko);
    gpuprim_buffer_destroy(ctx, wvo);
    gpuprim_buffer_destroy(ctx, wvo_f);
    gpuprim_buffer_destroy(ctx, woff);
    CHECK_GP(ctx, gpuprim_context_release_workspace(ctx));
}

template <typename I>
__global__ void iota_kernel(I *p, uint64_t n) {
    for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
        p[i] = I(i);
}

// The same argsort into u64 indices (the positions travel as 4 bytes and the
// last pass writes them wide) against CUB's pair sort with a u64 iota; the
// indices checked against CUB's and against the u32 ones widened.
void run_argsort_wide(int log2n, const std::vector<std::unique_ptr<Device>> &keys,
                      const std::vector<gpuprim_buffer_t> &wk, const Device &narrow_indices) {
    const uint64_t n = uint64_t(1) << log2n;
    const int copies = int(keys.size());
    Device indices(n * 8), iota(n * 8), cub_keys(n * 4), cub_values(n * 8);
    iota_kernel<<<1024, 256, 0, stream>>>(static_cast<uint64_t *>(iota.p), n);
    gpuprim_buffer_t wi = wrap(ctx, GPUPRIM_DTYPE_U64, indices.p, n);
    report("argsort 2^" + std::to_string(log2n), "argsort", "ours (u64 indices)", n,
           time_call(stream, repeats, [&](int c) { CHECK_GP(ctx, gpuprim_argsort(ctx, wk[c], nullptr, wi, nullptr)); }, copies, false),
           12.0 * n);
    // The sorted keys returned too: what the last pass's key writes cost (a
    // NULL keys_out leaves them out).
    Device sorted_keys(n * 4);
    gpuprim_buffer_t wsk = wrap(ctx, GPUPRIM_DTYPE_U32, sorted_keys.p, n);
    report("argsort 2^" + std::to_string(log2n), "argsort", "ours (u64 indices, sorted keys too)", n,
           time_call(stream, repeats, [&](int c) { CHECK_GP(ctx, gpuprim_argsort(ctx, wk[c], wsk, wi, nullptr)); }, copies, false),
           16.0 * n);
    size_t need = 0;
    CHECK_CUDA(cub::DeviceRadixSort::SortPairs(nullptr, need, (const uint32_t *)nullptr, (uint32_t *)nullptr,
                                               (const uint64_t *)nullptr, (uint64_t *)nullptr, int64_t(n), 0, 32, stream));
    Device temp(need);
    auto cub_sort = [&](int c) {
        size_t b = need;
        CHECK_CUDA(cub::DeviceRadixSort::SortPairs(temp.p, b, static_cast<const uint32_t *>(keys[c]->p),
                                                   static_cast<uint32_t *>(cub_keys.p), static_cast<const uint64_t *>(iota.p),
                                                   static_cast<uint64_t *>(cub_values.p), int64_t(n), 0, 32, stream));
    };
    report("argsort 2^" + std::to_string(log2n), "argsort", "CUB SortPairs with u64 iota", n,
           time_call(stream, repeats, cub_sort, copies, false), 12.0 * n);
    // Both on copy 0, which the u32 indices hold too.
    CHECK_GP(ctx, gpuprim_argsort(ctx, wk[0], nullptr, wi, nullptr));
    cub_sort(0);
    CHECK_CUDA(cudaStreamSynchronize(stream));
    if (!same_bytes(indices.p, cub_values.p, n * 8)) mismatch("argsort", "u64 indices");
    CHECK_GP(ctx, gpuprim_argsort(ctx, wk[0], wsk, wi, nullptr));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    if (!same_bytes(indices.p, cub_values.p, n * 8) || !same_bytes(sorted_keys.p, cub_keys.p, n * 4))
        mismatch("argsort", "u64 indices with the sorted keys");
    std::vector<uint32_t> narrow(n);
    std::vector<uint64_t> wide(n);
    CHECK_CUDA(cudaMemcpy(narrow.data(), narrow_indices.p, n * 4, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(wide.data(), indices.p, n * 8, cudaMemcpyDeviceToHost));
    for (uint64_t i = 0; i < n; ++i)
        if (wide[i] != narrow[i]) {
            mismatch("argsort", "u64 indices against u32");
            break;
        }
    gpuprim_buffer_destroy(ctx, wsk);
    gpuprim_buffer_destroy(ctx, wi);
}

// Flat argsort of u32 keys into u32 indices against CUB's pair sort of the
// keys with an iota buffer (made once, outside the timing); then into u64
// indices (run_argsort_wide).
void run_argsort(int log2n) {
    const uint64_t n = uint64_t(1) << log2n;
    printf("\n== argsort u32 keys, 2^%d ==\n", log2n);
    std::vector<std::unique_ptr<Device>> keys;
    const int copies = int(std::max<uint64_t>(2, (uint64_t(128) << 20) / (n * 4)));  // past the 50 MB L2
    for (int c = 0; c < copies; ++c) {
        keys.emplace_back(new Device(n * 4));
        fill_random(keys.back()->p, n, 100 + c);  // floats of +-1e6 read as u32 (a top byte of few values)
    }
    Device indices(n * 4), iota(n * 4), cub_keys(n * 4), cub_values(n * 4);
    iota_kernel<<<1024, 256, 0, stream>>>(static_cast<uint32_t *>(iota.p), n);
    std::vector<gpuprim_buffer_t> wk;
    for (int c = 0; c < copies; ++c) wk.push_back(wrap(ctx, GPUPRIM_DTYPE_U32, keys[c]->p, n));
    gpuprim_buffer_t wi = wrap(ctx, GPUPRIM_DTYPE_U32, indices.p, n);
    report("argsort 2^" + std::to_string(log2n), "argsort", "ours (indices only)", n,
           time_call(stream, repeats, [&](int c) { CHECK_GP(ctx, gpuprim_argsort(ctx, wk[c], nullptr, wi, nullptr)); }, copies, false),
           8.0 * n);
    size_t need = 0;
    CHECK_CUDA(cub::DeviceRadixSort::SortPairs(nullptr, need, (const uint32_t *)nullptr, (uint32_t *)nullptr,
                                               (const uint32_t *)nullptr, (uint32_t *)nullptr, int64_t(n), 0, 32, stream));
    Device temp(need);
    report("argsort 2^" + std::to_string(log2n), "argsort", "CUB SortPairs with iota", n,
           time_call(stream, repeats, [&](int c) {
               size_t b = need;
               CHECK_CUDA(cub::DeviceRadixSort::SortPairs(temp.p, b, static_cast<const uint32_t *>(keys[c]->p),
                                                          static_cast<uint32_t *>(cub_keys.p),
                                                          static_cast<const uint32_t *>(iota.p),
                                                          static_cast<uint32_t *>(cub_values.p), int64_t(n), 0, 32, stream));
           }, copies, false),
           8.0 * n);
    // Both on copy 0.
    CHECK_GP(ctx, gpuprim_argsort(ctx, wk[0], nullptr, wi, nullptr));
    {
        size_t b = need;
        CHECK_CUDA(cub::DeviceRadixSort::SortPairs(temp.p, b, static_cast<const uint32_t *>(keys[0]->p),
                                                   static_cast<uint32_t *>(cub_keys.p), static_cast<const uint32_t *>(iota.p),
                                                   static_cast<uint32_t *>(cub_values.p), int64_t(n), 0, 32, stream));
    }
    CHECK_CUDA(cudaStreamSynchronize(stream));
    if (!same_bytes(indices.p, cub_values.p, n * 4)) mismatch("argsort", "indices");
    run_argsort_wide(log2n, keys, wk, indices);
    if (log2n == 24) {
        // f32 keys of a normal distribution (the Python benchmark's torch.randn), u64 indices.
        std::vector<gpuprim_buffer_t> wf;
        for (int c = 0; c < copies; ++c) {
            fill_normal(keys[c]->p, n, 300 + c);
            wf.push_back(wrap(ctx, GPUPRIM_DTYPE_F32, keys[c]->p, n));
        }
        Device wide(n * 8);
        gpuprim_buffer_t wi64 = wrap(ctx, GPUPRIM_DTYPE_I64, wide.p, n);
        report("argsort 2^" + std::to_string(log2n), "argsort", "ours (f32 normal keys, i64 indices)", n,
               time_call(stream, repeats, [&](int c) { CHECK_GP(ctx, gpuprim_argsort(ctx, wf[c], nullptr, wi64, nullptr)); },
                         copies, false),
               12.0 * n);
        // Checked on copy 0: a permutation, keys non-decreasing, ties by position.
        CHECK_GP(ctx, gpuprim_argsort(ctx, wf[0], nullptr, wi64, nullptr));
        CHECK_CUDA(cudaStreamSynchronize(stream));
        std::vector<float> host_keys(n);
        std::vector<int64_t> order(n);
        std::vector<unsigned char> seen(n, 0);
        CHECK_CUDA(cudaMemcpy(host_keys.data(), keys[0]->p, n * 4, cudaMemcpyDeviceToHost));
        CHECK_CUDA(cudaMemcpy(order.data(), wide.p, n * 8, cudaMemcpyDeviceToHost));
        bool good = true;
        for (uint64_t i = 0; i < n && good; ++i) {
            good = order[i] >= 0 && uint64_t(order[i]) < n && !seen[order[i]];
            if (good) seen[order[i]] = 1;
            if (good && i > 0) {
                const float a = host_keys[order[i - 1]], b = host_keys[order[i]];
                good = a < b || (a == b && order[i - 1] < order[i]);
            }
        }
        if (!good) mismatch("argsort", "f32 normal keys, i64 indices");
        gpuprim_buffer_destroy(ctx, wi64);
        for (auto b : wf) gpuprim_buffer_destroy(ctx, b);
    }
    for (auto b : wk) gpuprim_buffer_destroy(ctx, b);
    gpuprim_buffer_destroy(ctx, wi);
    CHECK_GP(ctx, gpuprim_context_release_workspace(ctx));
}

}  // namespace

int main(int argc, char **argv) {
    std::string filter, csv_path;
    bool quick = false;
    int long_log2 = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--quick")) quick = true;
        else if (!strcmp(argv[i], "--filter") && i + 1 < argc) filter = argv[++i];
        else if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv_path = argv[++i];
        else if (!strcmp(argv[i], "--long-log2") && i + 1 < argc) long_log2 = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: segmented_bench [--quick] [--filter SUBSTRING] [--csv FILE] [--long-log2 N]\n");
            return 2;
        }
    }
    // Offsets are i32 here, and the shapes need 2^8 rows of 2^(N-8).
    if (long_log2 != 0 && (long_log2 < 12 || long_log2 > 30)) {
        fprintf(stderr, "segmented_bench: --long-log2 takes 12..30\n");
        return 2;
    }
    if (quick) repeats = 7;
    CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    ctx = cuda_context(stream);
    if (!ctx) {
        fprintf(stderr, "no CUDA context\n");
        return 1;
    }
    if (!csv_path.empty()) {
        csv = fopen(csv_path.c_str(), "w");
        if (csv) fprintf(csv, "shape,primitive,who,n,single_us,batched_us,gkeys_per_s,gbps\n");
    }
    cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    printf("segmented_bench: %s, libgpuprim %s, CUB %d.%d.%d\n", prop.name, gpuprim_version_string(),
           GPUPRIM_BENCH_CUB_VERSION);
    // --long-log2: only the shapes of few long segments, at 2^N in total.
    const uint64_t total = uint64_t(1) << (long_log2 != 0 ? long_log2 : 24);
    const std::vector<Shape> shapes =
        long_log2 != 0 ? std::vector<Shape>{{"", 256, total / 256}, {"", 16, total / 16}}
                       : std::vector<Shape>{{"", 1 << 20, 16}, {"", 1 << 16, 256}, {"", 1 << 12, 1 << 12},
                                            {"", 1 << 8, 1 << 16}, {"", 1 << 4, 1 << 20}, {"", 0, 0},
                                            {"", 4, 8},        {"", 64, 100},     {"", 1, 1024},
                                            {"", 256, 1024}};
    for (const Shape &shape : shapes) run_shape(shape, total, filter);
    if (long_log2 == 0 && (filter.empty() || filter == "argsort")) {
        for (int log2n : {28, 24, 22, 20}) run_argsort(log2n);
    }
    if (csv) fclose(csv);
    gpuprim_context_destroy(ctx);
    cudaStreamDestroy(stream);
    return 0;
}
