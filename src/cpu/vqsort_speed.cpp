// SPDX-License-Identifier: Apache-2.0
// Whether Highway's vqsort of 4-byte elements is slow on this CPU (cpu/sort.h).
#include "cpu/sort.h"

#if defined(GPUPRIM_CPU_HWY)
#  include <hwy/targets.h>
// Highway releases without a target for AMD's AVX-512 (HWY_AVX3_ZEN4, from
// 1.1) run their AVX3 code there.
#  if !defined(HWY_AVX3_ZEN4) && (defined(__x86_64__) || defined(__i386__)) && \
      (defined(__GNUC__) || defined(__clang__))
#    define GPUPRIM_CHECK_VQSORT_ON_AMD 1
#  endif
#endif

namespace gpuprim {
namespace cpu {
namespace {

#if defined(GPUPRIM_CHECK_VQSORT_ON_AMD)
// An AMD CPU with AVX-512 (Highway's AVX3 or AVX3_DL target), where those
// targets' sort of 32-bit lanes is slow.
bool detect_slow_4byte_vqsort() noexcept {
    return __builtin_cpu_is("amd") && (hwy::SupportedTargets() & (HWY_AVX3 | HWY_AVX3_DL)) != 0;
}
#endif

}  // namespace

bool vqsort_slow_for_4byte_elements() noexcept {
#if defined(GPUPRIM_CHECK_VQSORT_ON_AMD)
    // The CPU does not change under the process: asked once (Highway's
    // target detection runs cpuid, which traps to the hypervisor in a VM),
    // never written after.
    static const bool slow = detect_slow_4byte_vqsort();
    return slow;
#else
    return false;
#endif
}

}  // namespace cpu
}  // namespace gpuprim
