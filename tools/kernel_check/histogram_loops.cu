// SPDX-License-Identifier: Apache-2.0
// The radix sort's upfront histogram loop, in variants, on its own: which
// part of the counting loop costs what (bench/RESULTS.md, forty-second
// run). Each variant counts the 4 byte digits of 2^24 or 2^28 u32 keys
// (uniform, f32 normal, AND of 4 random words) into 16 replicas of shared
// counters with 1,024 threads x 16 keys, as radix_histogram_kernel's many-
// keys shape did, then adds them to global counters; the counts of every
// variant are compared with the first's ("!" after a time: they differ).
// Median of 20 launches after 5, inputs rotated past L2 at 2^24.
//
//   histogram_loops        (GPUPRIM_BUILD_TOOLS=ON builds it; no arguments)
//
// Variants: cur = the loop before (run-time digit windows, key kind and
// order per key, bounds checks per key); ct+hoist = digits at fixed byte
// shifts, the key map without branches; +full = whole tiles without
// bounds checks; +vec = the same with 16-byte loads; 1pass = +vec counting
// one digit a key; noatom = +vec reading the keys only; [r][bin] = +vec
// with the replicas outermost (lanes counting one digit meet in one bank).
// RESULTS' figures came from this file with hand copies of both key maps
// (the branch-free one with the float case fixed at compile time).
#include "core/key_transform.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

// The key maps are the library's (core/key_transform.h): to_radix_key as
// the loop before called it per key, RadixKeyMap as count_digits does now.
using gpuprim::KeyKind;

constexpr int kThreads = 1024, kItems = 16, kReplicas = 16, kPasses = 4, kDigits = 256;
struct Window { uint32_t shift, mask; };
struct Args { const uint32_t *keys; uint64_t n; KeyKind kind; bool descending; Window w[4]; unsigned long long *counts; };

// V: 0 cur, 1 ct+hoist, 2 +full, 3 +vec, 4 1pass, 5 noatom, 6 [r][bin] (the header says what each is).
template <int V>
__global__ void __launch_bounds__(kThreads) hist(const Args args) {
    extern __shared__ uint32_t histogram[];
    for (int i = threadIdx.x; i < kPasses * kDigits * kReplicas; i += kThreads) histogram[i] = 0;
    __syncthreads();
    const uint32_t *keys = args.keys;
    const uint64_t n = args.n;
    constexpr uint64_t kTile = uint64_t(kThreads) * kItems;
    const uint32_t replica = threadIdx.x % kReplicas;
    const gpuprim::RadixKeyMap<uint32_t> map = gpuprim::radix_key_map<uint32_t>(args.kind, args.descending);
    uint32_t sink = 0;
    auto count = [&](uint32_t radix_key) {
        if constexpr (V == 5) { sink += radix_key; return; }
        constexpr int passes = V == 4 ? 1 : kPasses;
#pragma unroll
        for (int p = 0; p < passes; ++p) {
            const uint32_t digit = (radix_key >> (8 * p)) & 0xffu;
            if constexpr (V == 6) atomicAdd(&histogram[replica * (kPasses * kDigits) + p * kDigits + digit], 1u);
            else atomicAdd(&histogram[(p * kDigits + digit) * kReplicas + replica], 1u);
        }
    };
    if constexpr (V <= 1) {
        for (uint64_t base = uint64_t(blockIdx.x) * kTile; base < n; base += uint64_t(gridDim.x) * kTile) {
            uint32_t key[kItems];
#pragma unroll
            for (int i = 0; i < kItems; ++i) {
                const uint64_t index = base + uint64_t(i) * kThreads + threadIdx.x;
                key[i] = index < n ? keys[index] : 0u;
            }
#pragma unroll
            for (int i = 0; i < kItems; ++i) {
                const uint64_t index = base + uint64_t(i) * kThreads + threadIdx.x;
                if (index >= n) continue;
                if constexpr (V == 1) {
                    count(map(key[i]));
                } else {
                    const uint32_t radix_key = gpuprim::to_radix_key<uint32_t>(key[i], args.kind, args.descending);
#pragma unroll
                    for (int p = 0; p < kPasses; ++p) {
                        if (args.w[p].mask == 0) continue;
                        const uint32_t digit = (radix_key >> args.w[p].shift) & args.w[p].mask;
                        atomicAdd(&histogram[(p * kDigits + digit) * kReplicas + replica], 1u);
                    }
                }
            }
        }
    } else if constexpr (V == 2) {
        const uint64_t full = n / kTile * kTile;
        uint64_t base = uint64_t(blockIdx.x) * kTile;
        for (; base < full; base += uint64_t(gridDim.x) * kTile) {
            uint32_t key[kItems];
#pragma unroll
            for (int i = 0; i < kItems; ++i) key[i] = keys[base + uint64_t(i) * kThreads + threadIdx.x];
#pragma unroll
            for (int i = 0; i < kItems; ++i) count(map(key[i]));
        }
        if (base < n) {
            for (int i = 0; i < kItems; ++i) {
                const uint64_t index = base + uint64_t(i) * kThreads + threadIdx.x;
                if (index < n) count(map(keys[index]));
            }
        }
    } else {
        const uint64_t full = n / kTile * kTile;
        uint64_t base = uint64_t(blockIdx.x) * kTile;
        for (; base < full; base += uint64_t(gridDim.x) * kTile) {
            uint4 vec[kItems / 4];
            const uint4 *v = reinterpret_cast<const uint4 *>(keys + base);
#pragma unroll
            for (int i = 0; i < kItems / 4; ++i) vec[i] = __ldg(&v[uint64_t(i) * kThreads + threadIdx.x]);
#pragma unroll
            for (int i = 0; i < kItems / 4; ++i) {
                count(map(vec[i].x));
                count(map(vec[i].y));
                count(map(vec[i].z));
                count(map(vec[i].w));
            }
        }
        if (base < n) {
            for (int i = 0; i < kItems; ++i) {
                const uint64_t index = base + uint64_t(i) * kThreads + threadIdx.x;
                if (index < n) count(map(keys[index]));
            }
        }
    }
    __syncthreads();
    if (V == 5 && sink == 0x12345678u) histogram[0] = 1;
    for (int i = threadIdx.x; i < kPasses * kDigits; i += kThreads) {
        uint32_t sum = 0;
        for (int r = 0; r < kReplicas; ++r)
            sum += V == 6 ? histogram[r * kPasses * kDigits + i] : histogram[i * kReplicas + (r + i) % kReplicas];
        if (sum) atomicAdd(&args.counts[i], (unsigned long long)sum);
    }
}

__device__ uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull; x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull; x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
__global__ void fill(uint32_t *out, uint64_t n, int dist) {
    for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x) {
        uint64_t a = mix(i * 4 + 1 + dist * 0x100000000000ull), b = mix(i * 4 + 2 + dist * 0x100000000000ull);
        if (dist == 0) out[i] = uint32_t(a);
        else if (dist == 1) {
            float u1 = (uint32_t(a >> 40) + 1) * (1.0f / 16777217.0f), u2 = uint32_t(b >> 40) * (1.0f / 16777216.0f);
            float f = sqrtf(-2.f * logf(u1)) * cospif(2.f * u2);
            out[i] = __float_as_uint(f);
        } else out[i] = uint32_t(a) & uint32_t(a >> 32) & uint32_t(b) & uint32_t(b >> 32);
    }
}

template <int V, bool F>
float time_variant(const uint32_t *pool, uint64_t n, int copies, unsigned long long *counts, int blocks,
                   std::vector<unsigned long long> &out) {
    auto k = hist<V>;
    size_t shared = size_t(kPasses) * kDigits * kReplicas * 4;
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared));
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    std::vector<float> ms;
    for (int rep = 0; rep < 25; ++rep) {
        Args args{pool + uint64_t(rep % copies) * n, n, F ? KeyKind::Float : KeyKind::Unsigned, false, {{0, 255}, {8, 255}, {16, 255}, {24, 255}}, counts};
        cudaMemset(counts, 0, 1024 * 8);
        cudaEventRecord(a);
        k<<<blocks, kThreads, shared>>>(args);
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float t;
        cudaEventElapsedTime(&t, a, b);
        if (rep >= 5) ms.push_back(t);
        if (rep == 0) {
            out.resize(1024);
            cudaMemcpy(out.data(), counts, 1024 * 8, cudaMemcpyDeviceToHost);
        }
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2] * 1000.f;
}

// Times every variant; ok[v]: variant v's counts equal the first's.
template <bool F>
void run_variants(const uint32_t *pool, uint64_t n, int copies, unsigned long long *counts, int blocks, float *t,
                  bool *ok) {
    std::vector<unsigned long long> ref, got;
    t[0] = time_variant<0, F>(pool, n, copies, counts, blocks, ref);
    t[1] = time_variant<1, F>(pool, n, copies, counts, blocks, got), ok[1] = got == ref;
    t[2] = time_variant<2, F>(pool, n, copies, counts, blocks, got), ok[2] = got == ref;
    t[3] = time_variant<3, F>(pool, n, copies, counts, blocks, got), ok[3] = got == ref;
    t[4] = time_variant<4, F>(pool, n, copies, counts, blocks, got);
    t[5] = time_variant<5, F>(pool, n, copies, counts, blocks, got);
    t[6] = time_variant<6, F>(pool, n, copies, counts, blocks, got), ok[6] = got == ref;
}

int main() {
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("%s, %d SMs\n", prop.name, prop.multiProcessorCount);
    for (uint64_t n : {uint64_t(1) << 24, uint64_t(1) << 28}) {
        const int copies = n >= (uint64_t(1) << 26) ? 1 : 8;
        for (int dist = 0; dist < 3; ++dist) {
            uint32_t *pool;
            unsigned long long *counts;
            CK(cudaMalloc(&pool, n * copies * 4));
            CK(cudaMalloc(&counts, 1024 * 8));
            fill<<<4096, 256>>>(pool, n * copies, dist);
            CK(cudaDeviceSynchronize());
            const char *names[] = {"u32 uniform", "f32 normal", "u32 AND of 4"};
            for (int bps : {1, 2}) {
                int blocks = prop.multiProcessorCount * bps;
                float t[7];
                bool ok[7];
                if (dist == 1) run_variants<true>(pool, n, copies, counts, blocks, t, ok);
                else run_variants<false>(pool, n, copies, counts, blocks, t, ok);
                printf("n=2^%d %-13s blocks/SM %d: cur %.1f | ct+hoist %.1f%s | +full %.1f%s | +vec %.1f%s | 1pass %.1f "
                       "| noatom %.1f | [r][bin] %.1f%s\n",
                       n == (1ull << 24) ? 24 : 28, names[dist], bps, t[0], t[1], ok[1] ? "" : "!", t[2],
                       ok[2] ? "" : "!", t[3], ok[3] ? "" : "!", t[4], t[5], t[6], ok[6] ? "" : "!");
            }
            cudaFree(pool);
            cudaFree(counts);
        }
    }
    return 0;
}
