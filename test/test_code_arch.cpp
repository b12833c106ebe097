// SPDX-License-Identifier: Apache-2.0
// White-box check of cuda/util/code_arch.h, the one switch by which every
// CUDA primitive picks its tuning: by the architecture its device code was
// compiled for (the kernels' PTX version), so sm_80 code running on a newer
// device (PTX compiled at first use) gets sm_80's tuning and no programmatic
// dependent launch (its kernels do not wait for the one before them). Host
// code only: the header has no CUDA include, so CPU-only builds run it too.
#include "cuda/util/code_arch.h"

#include <cstdio>
#include <initializer_list>
#include <type_traits>

using namespace gpuprim::cuda;

namespace {

int g_failures = 0;

#define CHECK(condition, ...)                                             \
    do {                                                                  \
        if (!(condition)) {                                               \
            ++g_failures;                                                 \
            std::printf("FAIL %s:%d: ", __FILE__, __LINE__);              \
            std::printf(__VA_ARGS__);                                     \
            std::printf("\n");                                            \
        }                                                                 \
    } while (0)

struct Sm80 {
    static constexpr int kTag = 80;
};
struct Sm90 {
    static constexpr int kTag = 90;
};
struct Newer {
    static constexpr int kTag = 100;
};

int picked(int code_arch) {
    return with_arch_tuning<Sm80, Sm90, Newer>(code_arch, [](auto arch) { return decltype(arch)::kTag; });
}

}  // namespace

int main() {
    // Ampere and Ada machine code, and their PTX wherever it runs.
    for (int arch : {80, 86, 87, 89}) {
        CHECK(tuning_arch(arch) == TuningArch::Sm80, "code_arch %d: not Sm80", arch);
        CHECK(picked(arch) == 80, "code_arch %d picked %d, not Sm80's", arch, picked(arch));
        CHECK(!programmatic_launch_allowed(arch), "code_arch %d: programmatic launch allowed", arch);
    }
    CHECK(tuning_arch(90) == TuningArch::Sm90 && picked(90) == 90, "code_arch 90 picked %d", picked(90));
    CHECK(programmatic_launch_allowed(90), "code_arch 90: programmatic launch not allowed");
    for (int arch : {100, 103, 110, 120, 121}) {
        CHECK(tuning_arch(arch) == TuningArch::Newer, "code_arch %d: not Newer", arch);
        CHECK(picked(arch) == 100, "code_arch %d picked %d, not Newer's", arch, picked(arch));
        CHECK(programmatic_launch_allowed(arch), "code_arch %d: programmatic launch not allowed", arch);
    }
    // A void f (the scans' with_*_tuning) runs exactly once.
    int calls = 0;
    with_arch_tuning<Sm80, Sm90, Newer>(90, [&](auto) { ++calls; });
    CHECK(calls == 1, "a void f ran %d times", calls);
    static_assert(std::is_same_v<decltype(picked(0)), int>, "with_arch_tuning returns f's result");
    // Configuration arch sets: each TuningArch its own bit, kAllArchs all
    // three; host code compiles every body that some architecture names
    // (the device passes keep only their own: checked by the scan tests on
    // a GPU, in sm_90 and sm_80 builds).
    CHECK(arch_bit(TuningArch::Sm80) != arch_bit(TuningArch::Sm90) &&
              arch_bit(TuningArch::Sm90) != arch_bit(TuningArch::Newer) &&
              (arch_bit(TuningArch::Sm80) & (arch_bit(TuningArch::Sm90) | arch_bit(TuningArch::Newer))) == 0,
          "arch_bit: two architectures share a bit");
    CHECK(kAllArchs == (arch_bit(TuningArch::Sm80) | arch_bit(TuningArch::Sm90) | arch_bit(TuningArch::Newer)),
          "kAllArchs is not the three architectures");
    static_assert(compiled_for_this_pass(arch_bit(TuningArch::Sm80)) && compiled_for_this_pass(kAllArchs),
                  "host code compiles every named configuration");
    static_assert(!compiled_for_this_pass(0u), "a configuration no architecture names compiles nowhere");
    if (g_failures) {
        std::printf("test_code_arch: %d failure(s)\n", g_failures);
        return 1;
    }
    std::printf("test_code_arch: all passed\n");
    return 0;
}
