// SPDX-License-Identifier: Apache-2.0
// The floating-point environment a call computes in: the default one (round
// to nearest, subnormals kept, no traps), whatever the caller's thread has
// set (flush-to-zero or denormals-are-zero from -ffast-math or
// torch.set_flush_denormal, a rounding mode from fesetround, a trap from
// feenableexcept), so that results are the header's IEEE results, the same
// on every thread and for every caller. The caller's environment, with its
// exception flags, is back when the guard goes: the library's own compares
// of NaNs raise no flag the caller sees.
//
// On x86-64 the library's float arithmetic is SSE's (no long double), whose
// whole environment is MXCSR: saving and setting it takes about 10 ns,
// where fegetenv/fesetenv (the x87 state too) take about 300.
#pragma once

#if defined(__x86_64__) || defined(_M_X64)
#  include <xmmintrin.h>
#else
#  include <cfenv>
#endif

namespace gpuprim {

class DefaultFloatEnvironment {
public:
#if defined(__x86_64__) || defined(_M_X64)
    // Every exception masked, round to nearest, FTZ and DAZ off, no flags.
    static constexpr unsigned int kDefaultMxcsr = 0x1F80u;
    DefaultFloatEnvironment() noexcept : caller_(_mm_getcsr()) { _mm_setcsr(kDefaultMxcsr); }
    ~DefaultFloatEnvironment() { _mm_setcsr(caller_); }
#else
    DefaultFloatEnvironment() noexcept {
        saved_ = std::fegetenv(&caller_) == 0;
        if (saved_) std::fesetenv(FE_DFL_ENV);
    }
    ~DefaultFloatEnvironment() {
        if (saved_) std::fesetenv(&caller_);
    }
#endif
    DefaultFloatEnvironment(const DefaultFloatEnvironment &) = delete;
    DefaultFloatEnvironment &operator=(const DefaultFloatEnvironment &) = delete;

private:
#if defined(__x86_64__) || defined(_M_X64)
    unsigned int caller_;
#else
    std::fenv_t caller_;
    bool saved_;
#endif
};

}  // namespace gpuprim
