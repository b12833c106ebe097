// SPDX-License-Identifier: Apache-2.0
// PTX wrappers shared by every primitive, in one place: vector loads and
// stores with cache hints, relaxed global loads and stores, programmatic
// dependent launch, cp.async (per element and 16-byte pieces, groups), and
// the bulk copies with their mbarrier (sm_90). The wall clock for traces is
// in util/trace_clock.cuh.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace gpuprim::cuda {

enum class CacheHint { Default, Streaming, Global };

template <CacheHint H>
__device__ __forceinline__ uint4 load_vector(const void *address) {
    const uint4 *p = static_cast<const uint4 *>(address);
    if constexpr (H == CacheHint::Streaming) return __ldcs(p);
    else if constexpr (H == CacheHint::Global) return __ldcg(p);
    else return *p;
}

// Inline PTX so the compiler cannot split the store into element stores
// (it does when it merges the full-tile path with the element path).
template <CacheHint H>
__device__ __forceinline__ void store_vector(void *address, uint4 v) {
    if constexpr (H == CacheHint::Streaming)
        asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(address), "r"(v.x),
                     "r"(v.y), "r"(v.z), "r"(v.w)
                     : "memory");
    else if constexpr (H == CacheHint::Global)
        asm volatile("st.global.cg.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(address), "r"(v.x),
                     "r"(v.y), "r"(v.z), "r"(v.w)
                     : "memory");
    else
        asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(address), "r"(v.x),
                     "r"(v.y), "r"(v.z), "r"(v.w)
                     : "memory");
}

__device__ __forceinline__ uint32_t load_relaxed(const uint32_t *address) {
    uint32_t value;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(value) : "l"(address) : "memory");
    return value;
}
__device__ __forceinline__ void store_relaxed(uint32_t *address, uint32_t value) {
    asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(address), "r"(value) : "memory");
}
// A flag other blocks wait on: the release orders this thread's earlier
// writes (and those a barrier ordered before them) before the flag; the
// acquire orders the reader's later reads after it.
__device__ __forceinline__ uint32_t load_acquire(const uint32_t *address) {
    uint32_t value;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(value) : "l"(address) : "memory");
    return value;
}
__device__ __forceinline__ void store_release(uint32_t *address, uint32_t value) {
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(address), "r"(value) : "memory");
}

// Programmatic dependent launch (sm_90+): a kernel may start while the one
// before it finishes; it waits here before touching anything that one wrote.
__device__ __forceinline__ void wait_for_previous_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void allow_next_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;");
#endif
}

template <typename T>
__device__ __forceinline__ void copy_to_shared_async(T *shared, const T *global) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const uint32_t address = static_cast<uint32_t>(__cvta_generic_to_shared(shared));
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(address), "l"(global),
                 "n"(int(sizeof(T)))
                 : "memory");
#else
    *shared = *global;
#endif
}
// 16 bytes in one copy (both addresses 16-byte aligned).
constexpr int kValuePieceBytes = 16;
template <typename T>
__device__ __forceinline__ void copy_piece_to_shared_async(T *shared, const T *global) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const uint32_t address = static_cast<uint32_t>(__cvta_generic_to_shared(shared));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(address), "l"(global) : "memory");
#else
    *reinterpret_cast<uint4 *>(shared) = *reinterpret_cast<const uint4 *>(global);
#endif
}
// cp.async groups: each thread closes a group after issuing copies, then
// waits until at most kPending of its groups are still in flight.
__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
#endif
}

// Bulk copies (sm_90 and later): one thread (or a few) hands a whole tile to
// the copy engine, and the block waits on a transaction barrier (mbarrier)
// in shared memory that completes when the bytes have landed. Code compiled for an
// older architecture must not take this path (kHasBulkCopy is false there).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
constexpr bool kHasBulkCopy = true;
#define GPUPRIM_BULK_COPY_ASM(...) asm volatile(__VA_ARGS__)
#else
constexpr bool kHasBulkCopy = false;
#define GPUPRIM_BULK_COPY_ASM(...) ((void)0)
#endif

__device__ __forceinline__ uint32_t shared_address(const void *p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
// One thread, before any use; the block synchronizes before the barrier is used.
__device__ __forceinline__ void stage_barrier_init(unsigned long long *barrier) {
    GPUPRIM_BULK_COPY_ASM("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(barrier)) : "memory");
    GPUPRIM_BULK_COPY_ASM("fence.mbarrier_init.release.cluster;" ::: "memory");
}
// One thread: the barrier's current phase completes once `bytes` more have
// landed (copies may complete before or after this).
__device__ __forceinline__ void stage_barrier_expect(unsigned long long *barrier, uint32_t bytes) {
    GPUPRIM_BULK_COPY_ASM("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(barrier)),
                          "r"(bytes)
                          : "memory");
}
// Copies `bytes` (a multiple of 16; both addresses 16-byte aligned) into
// shared memory, counted against the barrier's expected bytes.
__device__ __forceinline__ void bulk_load_to_shared(void *shared, const void *global, uint32_t bytes,
                                                    unsigned long long *barrier) {
    GPUPRIM_BULK_COPY_ASM(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
            shared_address(shared)),
        "l"(global), "r"(bytes), "r"(shared_address(barrier))
        : "memory");
}
// One thread: completes the barrier's current phase with no copy.
__device__ __forceinline__ void stage_barrier_arrive(unsigned long long *barrier) {
    GPUPRIM_BULK_COPY_ASM("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(shared_address(barrier)) : "memory");
}
// Every thread: waits until the phase with this parity has completed.
__device__ __forceinline__ void stage_barrier_wait(unsigned long long *barrier, uint32_t parity) {
    uint32_t done = 1;
    do {
        GPUPRIM_BULK_COPY_ASM(
            "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
            : "=r"(done)
            : "r"(shared_address(barrier)), "r"(parity)
            : "memory");
    } while (!done);
}
#undef GPUPRIM_BULK_COPY_ASM

}  // namespace gpuprim::cuda
