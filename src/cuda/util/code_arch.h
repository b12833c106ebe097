// SPDX-License-Identifier: Apache-2.0
// Which architecture's tuning a CUDA primitive runs with. Chosen by the
// architecture its device code was compiled for (DeviceEnv::code_arch, the
// kernels' PTX version on this device, as CUB's policy chain chooses), not
// by the device's compute capability: a device newer than every machine code
// in the library runs PTX compiled for an older architecture (just in time),
// and that code has only that architecture's features (no programmatic
// dependent launch, no bulk copies below sm_90), so the host must launch it
// with that architecture's tuning. Host code only: no CUDA header.
#pragma once

namespace gpuprim::cuda {

enum class TuningArch { Sm80, Sm90, Newer };

// code_arch: major * 10 + minor of the device code's architecture (80, 86,
// 90, 100, 120, ...); contexts on devices below sm_80 are refused at
// creation (cuda_backend.cpp).
constexpr TuningArch tuning_arch(int code_arch) {
    return code_arch >= 100 ? TuningArch::Newer : code_arch >= 90 ? TuningArch::Sm90 : TuningArch::Sm80;
}

// The one switch every primitive's policy picks through: f(Sm80{}),
// f(Sm90{}) or f(Newer{}) by tuning_arch(code_arch), returning what f
// returns (the same type for all three).
template <typename Sm80, typename Sm90, typename Newer, typename F>
decltype(auto) with_arch_tuning(int code_arch, F &&f) {
    switch (tuning_arch(code_arch)) {
    case TuningArch::Newer: return f(Newer{});
    case TuningArch::Sm90: return f(Sm90{});
    case TuningArch::Sm80: break;
    }
    return f(Sm80{});
}

// The architectures a kernel configuration is for, as a set of TuningArch
// bits. A configuration that only some architectures' tunings name has its
// kernels' bodies compiled only in those architectures' device passes
// (compiled_for_this_pass): an sm_90 pass then skips the sm_80 shapes and
// the reverse. The host launches a kernel only with the tuning of
// code_arch, the architecture the running device code was compiled for, so
// a body left out is never run (its stub traps if it were).
constexpr unsigned arch_bit(TuningArch arch) { return 1u << unsigned(arch); }
constexpr unsigned kAllArchs = arch_bit(TuningArch::Sm80) | arch_bit(TuningArch::Sm90) | arch_bit(TuningArch::Newer);

// In device code, whether the pass compiling it is for one of archs (a set
// of arch_bit); in host code, whether any architecture names it.
constexpr bool compiled_for_this_pass(unsigned archs) {
#if defined(__CUDA_ARCH__)
    return (archs & arch_bit(tuning_arch(__CUDA_ARCH__ / 10))) != 0;
#else
    return archs != 0;
#endif
}

// Whether kernels may be launched as programmatic dependents of the one
// before them: their device code waits for it (griddepcontrol) only when
// compiled for sm_90 or later (util/ptx.cuh wait_for_previous_grid).
constexpr bool programmatic_launch_allowed(int code_arch) { return code_arch >= 90; }

// The device code's architecture on the current device (cudaFuncGetAttributes'
// ptxVersion of a kernel compiled like every other; code_arch.cu).
int device_code_arch();

}  // namespace gpuprim::cuda
