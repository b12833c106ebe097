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

// Whether kernels may be launched as programmatic dependents of the one
// before them: their device code waits for it (griddepcontrol) only when
// compiled for sm_90 or later (util/ptx.cuh wait_for_previous_grid).
constexpr bool programmatic_launch_allowed(int code_arch) { return code_arch >= 90; }

// The device code's architecture on the current device (cudaFuncGetAttributes'
// ptxVersion of a kernel compiled like every other; code_arch.cu).
int device_code_arch();

}  // namespace gpuprim::cuda
