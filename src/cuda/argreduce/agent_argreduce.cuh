// SPDX-License-Identifier: Apache-2.0
// The argreduce (argmin / argmax) kernels and their agent's named steps
// (argreduce.cu has the design and launches them).
//
// Every element becomes its ArgKey (core/ops.h): the answer is the first
// position of the least key, NaNs (key 0) first, -0.0 tied with +0.0. What
// threads, warps and blocks carry is a Candidate, a (key, position) pair,
// and they combine by FirstLeast: the lesser key, equal keys the lesser
// position. That is a total order on pairs (positions are distinct), so
// every combination tree, grid size and visiting order gives the same pair:
// correct whatever order a thread meets its elements in, deterministic
// without relying on the shapes (which are fixed anyway).
#pragma once

#include "core/dtype.h"
#include "core/ops.h"
#include "cuda/argreduce/argreduce_policy.cuh"
#include "cuda/block/block_reduce.cuh"

#include <cstdint>

namespace gpuprim::cuda {
namespace argreduce_detail {

// An element's key (zero-extended to 64 bits: the order is kept) and its
// position. 16 bytes, no padding: shuffled as four words (warp_reduce.cuh).
struct Candidate {
    uint64_t key;
    uint64_t position;
};

// The pair of the lesser key, or of equal keys the lesser position. Its
// identity, (all ones, all ones), loses to every element: positions are
// below 2^64 - 1, so an element whose key is all ones (a u64 MIN of
// UINT64_MAX) still wins on its position.
struct FirstLeast {
    __device__ __forceinline__ static Candidate identity() { return {~uint64_t(0), ~uint64_t(0)}; }
    __device__ __forceinline__ static bool precedes(const Candidate &a, const Candidate &b) {
        return a.key < b.key || (a.key == b.key && a.position < b.position);
    }
    __device__ __forceinline__ Candidate operator()(const Candidate &a, const Candidate &b) const {
        return precedes(b, a) ? b : a;
    }
};

constexpr int kVectorBytes = 16;

// What one load brings in: a 16-byte vector of elements, or one element.
template <typename T, int kElements>
struct alignas(sizeof(T) * kElements) ArgUnit {
    T elements[kElements];
};

template <typename T, bool kMin>
struct ArgreduceAgent {
    using Key = typename ArgKey<T, kMin>::Key;
    using Block = BlockReduce<Candidate, kArgreduceBlockThreads>;
    using TempStorage = typename Block::TempStorage;

    // Elements of a 16-byte vector.
    static constexpr int kVec = kVectorBytes / int(sizeof(T));
    // 16-byte vectors each thread loads per tile (argreduce_policy.cuh).
    static constexpr int kVectorsPerThread = kArgreduceVectorsFor<T>;

    static __device__ __forceinline__ T load_element(const T *p) {
        return bit_cast<T>(__ldg(reinterpret_cast<const bits_t<T> *>(p)));
    }

    template <int kElements>
    static __device__ __forceinline__ ArgUnit<T, kElements> load_unit(const T *base, uint64_t index) {
        if constexpr (kElements == 1) {
            return ArgUnit<T, 1>{{load_element(base + index)}};
        } else {
            static_assert(sizeof(ArgUnit<T, kElements>) == kVectorBytes, "a vector unit is 16 bytes");
            return bit_cast<ArgUnit<T, kElements>>(__ldg(reinterpret_cast<const uint4 *>(base) + index));
        }
    }

    // Step 1: one unit's least key and its first position (position: that of
    // the unit's element 0). Starts from element 0 itself, so a strict
    // compare keeps the first of equal keys and no identity is involved.
    template <int kElements>
    static __device__ __forceinline__ Candidate fold_unit(const ArgUnit<T, kElements> &unit, uint64_t position) {
        Key best = ArgKey<T, kMin>::key(unit.elements[0]);
        int at = 0;
#pragma unroll
        for (int e = 1; e < kElements; ++e) {
            const Key key = ArgKey<T, kMin>::key(unit.elements[e]);
            if (key < best) {
                best = key;
                at = e;
            }
        }
        return {uint64_t(best), position + uint64_t(at)};
    }

    // Step 2: a thread's candidate over units [0, units) of body (whose
    // element 0 is input position body_position): tiles of
    // kArgreduceBlockThreads * kVectorsPerThread units dealt to blocks round
    // robin; in a tile thread t takes units t, t + kArgreduceBlockThreads,
    // ... (each warp load contiguous), all loads issued before the keys are
    // compared. Only the last tile may be partial: its loads are guarded.
    template <int kElements>
    static __device__ __forceinline__ Candidate fold_tiles(const T *body, uint64_t body_position, uint64_t units) {
        constexpr int kPerThread = kVectorsPerThread;
        using U = ArgUnit<T, kElements>;
        const uint64_t tile_units = uint64_t(kArgreduceBlockThreads) * kPerThread;
        const uint64_t stride = uint64_t(gridDim.x) * tile_units;
        const FirstLeast combine;
        Candidate best = FirstLeast::identity();
        for (uint64_t tile_start = uint64_t(blockIdx.x) * tile_units; tile_start < units; tile_start += stride) {
            const bool full = tile_start + tile_units <= units;
            const uint64_t first = tile_start + threadIdx.x;
            U loaded[kPerThread];
#pragma unroll
            for (int k = 0; k < kPerThread; ++k) {
                const uint64_t unit = first + uint64_t(k) * kArgreduceBlockThreads;
                if (full || unit < units) loaded[k] = load_unit<kElements>(body, unit);
            }
#pragma unroll
            for (int k = 0; k < kPerThread; ++k) {
                const uint64_t unit = first + uint64_t(k) * kArgreduceBlockThreads;
                if (full || unit < units)
                    best = combine(best, fold_unit<kElements>(loaded[k], body_position + unit * kElements));
            }
        }
        return best;
    }

    // Step 3: the elements outside the vector body, taken one each by
    // block 0's threads: the head [0, head) before the first 16-byte
    // boundary (head < kVec) and the tail [tail_start, count) after the last
    // whole vector (fewer than kVec).
    static __device__ __forceinline__ Candidate fold_edges(const T *input, uint64_t head, uint64_t tail_start,
                                                           uint64_t count) {
        const FirstLeast combine;
        Candidate best = FirstLeast::identity();
        if (threadIdx.x < head) best = fold_unit<1>(ArgUnit<T, 1>{{load_element(input + threadIdx.x)}}, threadIdx.x);
        const uint64_t tail = tail_start + threadIdx.x;
        if (tail < count) best = combine(best, fold_unit<1>(ArgUnit<T, 1>{{load_element(input + tail)}}, tail));
        return best;
    }

    // Where the vector body starts: the elements before input's first
    // 16-byte boundary (input is aligned to its element size, so that
    // distance is whole elements).
    static __host__ __device__ __forceinline__ uint64_t head_of(const T *input, uint64_t count) {
        const uint64_t misalign = uint64_t(reinterpret_cast<uintptr_t>(input) % kVectorBytes);
        const uint64_t head = (kVectorBytes - misalign) % kVectorBytes / sizeof(T);
        return head < count ? head : count;
    }

    // Steps 1-3 for this thread: the head, the body of whole 16-byte vectors
    // (every dtype: 8-byte elements are two a vector), the tail.
    static __device__ __forceinline__ Candidate fold_input(const T *input, uint64_t count) {
        const uint64_t head = head_of(input, count);
        const uint64_t units = (count - head) / kVec;
        const uint64_t tail_start = head + units * kVec;
        Candidate best = fold_tiles<kVec>(input + head, head, units);
        if (blockIdx.x == 0) best = FirstLeast()(best, fold_edges(input, head, tail_start, count));
        return best;
    }

    // Step 4: the block's candidate (thread 0 receives it).
    static __device__ __forceinline__ Candidate reduce_block(Candidate best, TempStorage &storage) {
        return Block::reduce(best, FirstLeast(), storage);
    }
};

// Pass 1: block b reduces its tiles (and block 0 the edges) to one
// candidate: partials[b], or with one block the position itself.
// partials is unused when gridDim.x is 1.
template <typename T, bool kMin>
__global__ void __launch_bounds__(kArgreduceBlockThreads, kArgreduceMinBlocksPerSm)
    argreduce_tiles_kernel(const T *__restrict__ input, uint64_t count, Candidate *__restrict__ partials,
                           uint64_t *position) {
    using Agent = ArgreduceAgent<T, kMin>;
    __shared__ typename Agent::TempStorage storage;
    const Candidate best = Agent::reduce_block(Agent::fold_input(input, count), storage);
    if (threadIdx.x != 0) return;
    if (gridDim.x == 1) *position = best.position;
    else partials[blockIdx.x] = best;
}

// Pass 2: one block reduces the `count` partials of pass 1 (ordered after
// it on the stream) and writes the position: thread t folds partials t,
// t + kArgreduceBlockThreads, ..., then the block tree.
__global__ void __launch_bounds__(kArgreduceBlockThreads)
    argreduce_partials_kernel(const Candidate *__restrict__ partials, uint32_t count, uint64_t *position) {
    using Block = BlockReduce<Candidate, kArgreduceBlockThreads>;
    __shared__ typename Block::TempStorage storage;
    const FirstLeast combine;
    Candidate best = FirstLeast::identity();
    for (uint32_t i = threadIdx.x; i < count; i += kArgreduceBlockThreads) best = combine(best, partials[i]);
    best = Block::reduce(best, combine, storage);
    if (threadIdx.x == 0) *position = best.position;
}

}  // namespace argreduce_detail
}  // namespace gpuprim::cuda
