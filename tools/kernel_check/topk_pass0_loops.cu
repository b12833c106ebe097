// SPDX-License-Identifier: Apache-2.0
// Top-k's first select pass (src/cuda/topk/radix_select.cuh, pass 0) as a
// model on its own, in variants: what its loop costs beside reading the
// keys (bench/RESULTS.md, forty-fourth run). "As the library" is the pass as
// it was then (candidates by the sampled 11-bit bin, written a tile at a
// time behind a block barrier); since the forty-fifth run the library bounds
// them by an exact sampled key and gathers them in shared memory without a
// barrier (about 0.2% of the keys at k = 16, not 1/64). 2^24 f32 normal keys (four
// copies, rotated), k largest (descending select keys), the 11-bit top
// digit, 512 threads x 8 keys, 2 blocks a multiprocessor, 2,048 bins x 4
// replicas in shared memory, double-buffered 16-byte loads; the keys whose
// digit is at most a bound holding about 1/64 of them are candidates,
// written to a buffer as the library does (a block barrier, warp scans,
// one global atomic a tile). Median of 40 launches after 5. Variants:
// "as the library" (run-time key kind, digit shift and mask, bounds checks
// per key); "fixed shift, map, whole" (the top digit at a fixed shift, the
// branch-free key map, whole tiles unchecked); "+ warp-slot writes" (the
// same, candidates placed by one global atomic a warp, no block barrier);
// "no candidates" (counting only); "reading only". The key maps and the warp
// scan are the library's (core/key_transform.h, cuda/topk/select_common.cuh;
// RESULTS' figures came from this file with hand copies of them). The bins of every
// counting variant are compared with the first's.
//
//   topk_pass0_loops       (GPUPRIM_BUILD_TOOLS=ON builds it; no arguments)
#include "core/key_transform.h"
#include "cuda/topk/select_common.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

constexpr int kThreads = 512, kItems = 8, kPerVector = 4, kVectors = 2, kBins = 2048, kReplicas = 4;
constexpr uint32_t kTile = kThreads * kItems;

struct Args {
    const uint32_t *in;
    uint64_t size;
    gpuprim::KeyKind kind;
    bool descending;
    uint32_t shift, mask, first_bound;
    bool first_writes;
    unsigned long long *bins, *buffered;
    uint32_t *candidate_keys, *candidate_positions;
    uint64_t capacity;
};

// V: 0 as the library; 1 fixed shift + key map + whole tiles unchecked; 2 = 1 without candidates;
// 3 = reading only; 4 = 1 with the candidates' writes only where a warp has any (no block barrier)
template <int V>
__global__ void __launch_bounds__(kThreads, 2) pass0(const Args a) {
    __shared__ uint32_t bins[kBins * kReplicas];
    __shared__ uint32_t warp_bases[kThreads / 32];
    __shared__ uint32_t tile_count;
    __shared__ unsigned long long candidate_base;
    for (int b = threadIdx.x; b < kBins * kReplicas; b += kThreads) bins[b] = 0;
    if (threadIdx.x == 0) tile_count = 0;
    __syncthreads();
    const uint32_t replica = threadIdx.x % kReplicas;
    const gpuprim::RadixKeyMap<uint32_t> map = gpuprim::radix_key_map<uint32_t>(a.kind, a.descending);
    const uint64_t stride = uint64_t(gridDim.x) * kTile;
    uint32_t sink = 0;
    uint4 staged[kVectors];
    auto stage = [&](uint64_t tile) {
#pragma unroll
        for (int v = 0; v < kVectors; ++v)
            staged[v] = __ldcs(reinterpret_cast<const uint4 *>(a.in + tile + (uint64_t(v) * kThreads + threadIdx.x) * kPerVector));
    };
    if (uint64_t(blockIdx.x) * kTile + kTile <= a.size) stage(uint64_t(blockIdx.x) * kTile);
    for (uint64_t tile = uint64_t(blockIdx.x) * kTile; tile < a.size; tile += stride) {
        uint32_t keys[kItems], positions[kItems];
        const bool full = tile + kTile <= a.size;
        if (full) {
            uint4 current[kVectors];
#pragma unroll
            for (int v = 0; v < kVectors; ++v) current[v] = staged[v];
            if (tile + stride + kTile <= a.size) stage(tile + stride);
#pragma unroll
            for (int v = 0; v < kVectors; ++v) {
                const uint64_t first = tile + (uint64_t(v) * kThreads + threadIdx.x) * kPerVector;
                uint32_t unpacked[4];
                memcpy(unpacked, &current[v], 16);
#pragma unroll
                for (int u = 0; u < 4; ++u) {
                    keys[v * 4 + u] = V == 0 ? gpuprim::to_radix_key<uint32_t>(unpacked[u], a.kind, a.descending) : map(unpacked[u]);
                    positions[v * 4 + u] = uint32_t(first + u);
                }
            }
        } else {
            for (int e = 0; e < kItems; ++e) {
                const uint64_t at = tile + (uint64_t(e / 4) * kThreads + threadIdx.x) * 4 + e % 4;
                keys[e] = ~0u;
                positions[e] = uint32_t(at);
                if (at < a.size) keys[e] = gpuprim::to_radix_key<uint32_t>(a.in[at], a.kind, a.descending);
            }
        }
        if constexpr (V == 3) {
#pragma unroll
            for (int e = 0; e < kItems; ++e) sink += keys[e];
            continue;
        }
        uint32_t is_candidate = 0, candidates = 0;
#pragma unroll
        for (int e = 0; e < kItems; ++e) {
            if (V == 0 || !full) {
                if (!full && tile + (uint64_t(e / 4) * kThreads + threadIdx.x) * 4 + e % 4 >= a.size) continue;
            }
            const uint32_t d = V == 0 ? (keys[e] >> a.shift) & a.mask : keys[e] >> 21;
            atomicAdd(&bins[d * kReplicas + replica], 1u);
            if (V != 2 && a.first_writes && d <= a.first_bound) {
                is_candidate |= 1u << e;
                ++candidates;
            }
        }
        if constexpr (V == 2) continue;
        if constexpr (V == 4) {
            // A warp with candidates takes its slots with one global atomic.
            if (__any_sync(0xffffffffu, candidates != 0)) {
                uint32_t at = gpuprim::cuda::selection::warp_exclusive_sum(candidates);
                unsigned long long base = 0;
                if ((threadIdx.x & 31) == 31) base = atomicAdd(a.buffered, (unsigned long long)(at + candidates));
                base = __shfl_sync(0xffffffffu, base, 31);
#pragma unroll
                for (int e = 0; e < kItems; ++e)
                    if (is_candidate & (1u << e)) {
                        const uint64_t slot = base + at++;
                        if (slot < a.capacity) {
                            a.candidate_keys[slot] = keys[e];
                            a.candidate_positions[slot] = positions[e];
                        }
                    }
            }
            continue;
        }
        if (__syncthreads_or(candidates)) {
            uint32_t at = gpuprim::cuda::selection::warp_exclusive_sum(candidates);
            if ((threadIdx.x & 31) == 31) {
                const uint32_t warp_total = at + candidates;
                warp_bases[threadIdx.x >> 5] = warp_total ? atomicAdd(&tile_count, warp_total) : 0;
            }
            __syncthreads();
            if (threadIdx.x == 0) {
                candidate_base = tile_count ? atomicAdd(a.buffered, (unsigned long long)tile_count) : 0;
                tile_count = 0;
            }
            __syncthreads();
            at += warp_bases[threadIdx.x >> 5];
            __syncthreads();
#pragma unroll
            for (int e = 0; e < kItems; ++e)
                if (is_candidate & (1u << e)) {
                    const uint64_t slot = candidate_base + at++;
                    if (slot < a.capacity) {
                        a.candidate_keys[slot] = keys[e];
                        a.candidate_positions[slot] = positions[e];
                    }
                }
            __syncthreads();
        }
    }
    __syncthreads();
    if (V == 3 && sink == 0x12345u) bins[0] = 1;
    for (int b = threadIdx.x; b < kBins; b += kThreads) {
        uint32_t count = 0;
        for (int r = 0; r < kReplicas; ++r) count += bins[b * kReplicas + r];
        if (count) atomicAdd(a.bins + b, (unsigned long long)count);
    }
}

template <int V>
float time_variant(Args a, const uint32_t *pool, int copies, std::vector<unsigned long long> &bins_out,
                   unsigned long long &written, int blocks) {
    cudaEvent_t s, e;
    cudaEventCreate(&s);
    cudaEventCreate(&e);
    std::vector<float> ms;
    for (int rep = 0; rep < 45; ++rep) {
        a.in = pool + uint64_t(rep % copies) * a.size;
        cudaMemset(a.bins, 0, kBins * 8);
        cudaMemset(a.buffered, 0, 8);
        cudaEventRecord(s);
        pass0<V><<<blocks, kThreads>>>(a);
        cudaEventRecord(e);
        cudaEventSynchronize(e);
        float t;
        cudaEventElapsedTime(&t, s, e);
        if (rep >= 5) ms.push_back(t);
        if (rep == 0) {
            bins_out.resize(kBins);
            cudaMemcpy(bins_out.data(), a.bins, kBins * 8, cudaMemcpyDeviceToHost);
            cudaMemcpy(&written, a.buffered, 8, cudaMemcpyDeviceToHost);
        }
    }
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) printf("error %s\n", cudaGetErrorString(err));
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2] * 1000.f;
}

int main() {
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    const uint64_t n = uint64_t(1) << 24;
    const int copies = 4;
    std::vector<uint32_t> host(n * copies);
    std::mt19937 rng(7);
    std::normal_distribution<float> normal;
    for (auto &x : host) {
        float f = normal(rng);
        memcpy(&x, &f, 4);
    }
    // The bound: the digit (of descending select keys) below which ~1/64 of the keys lie.
    std::vector<uint64_t> hist(kBins);
    for (uint64_t i = 0; i < n; ++i) {
        uint32_t b = host[i], key = (b & 0x80000000u) ? ~b : (b ^ 0x80000000u);
        key = ~(key - 0x7fffffu);
        ++hist[key >> 21];
    }
    uint32_t bound = 0;
    for (uint64_t below = 0; bound < kBins; ++bound) {
        below += hist[bound];
        if (below >= n / 64) break;
    }
    uint32_t *pool, *ck, *cp;
    unsigned long long *bins, *buffered;
    cudaMalloc(&pool, n * copies * 4);
    cudaMemcpy(pool, host.data(), n * copies * 4, cudaMemcpyHostToDevice);
    cudaMalloc(&ck, n / 16 * 4);
    cudaMalloc(&cp, n / 16 * 4);
    cudaMalloc(&bins, kBins * 8);
    cudaMalloc(&buffered, 8);
    Args a{pool, n, gpuprim::KeyKind::Float, true, 21, 0x7ff, bound, true, bins, buffered, ck, cp, n / 16};
    const int blocks = prop.multiProcessorCount * 2;
    std::vector<unsigned long long> ref, got;
    unsigned long long w0, w;
    printf("%s: top-k pass 0, 2^24 f32 normal keys, bound digit %u\n", prop.name, bound);
    float t0 = time_variant<0>(a, pool, copies, ref, w0, blocks);
    printf("as the library          %6.1f us (candidates %llu)\n", t0, w0);
    float t1 = time_variant<1>(a, pool, copies, got, w, blocks);
    printf("fixed shift, map, whole %6.1f us%s (candidates %llu)\n", t1, got == ref ? "" : " COUNTS DIFFER", w);
    float t4 = time_variant<4>(a, pool, copies, got, w, blocks);
    printf("+ warp-slot writes      %6.1f us%s (candidates %llu)\n", t4, got == ref ? "" : " COUNTS DIFFER", w);
    float t2 = time_variant<2>(a, pool, copies, got, w, blocks);
    printf("no candidates           %6.1f us%s\n", t2, got == ref ? "" : " COUNTS DIFFER");
    float t3 = time_variant<3>(a, pool, copies, got, w, blocks);
    printf("reading only            %6.1f us\n", t3);
    return 0;
}
