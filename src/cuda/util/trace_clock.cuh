// SPDX-License-Identifier: Apache-2.0
// Device wall clock for the per-tile traces of dev builds (GPUPRIM_SCAN_TRACE,
// GPUPRIM_SORT_TRACE): nanoseconds, comparable across SMs.
#pragma once

namespace gpuprim::cuda {

__device__ __forceinline__ unsigned long long global_timer_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

}  // namespace gpuprim::cuda
