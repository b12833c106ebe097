// SPDX-License-Identifier: Apache-2.0
// Device wall clock for the per-tile traces of the kernel checkers' builds
// (tools/kernel_check: GPUPRIM_SCAN_TRACE, GPUPRIM_SORT_TRACE): nanoseconds,
// comparable across SMs. Release builds define neither, so their kernels take
// no trace pointer and stamp nothing (the trace macros expand to nothing).
#pragma once

#if defined(GPUPRIM_SCAN_TRACE) || defined(GPUPRIM_SORT_TRACE)
namespace gpuprim::cuda {

__device__ __forceinline__ unsigned long long global_timer_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

}  // namespace gpuprim::cuda
#endif
