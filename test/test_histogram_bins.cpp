// SPDX-License-Identifier: Apache-2.0
// White-box: the f32 shortcut of the even float bin (core/histogram_bins.h,
// even_float_bin_fast) gives the f64 bin (even_float_bin) for every element
// tried: bounds of every magnitude (tiny, unit, 1e30, the whole f32 range),
// 1 to 300,000 bins, and elements at, just below and just above the f64
// position of every kind of bin edge, where the two could part. Host
// arithmetic only (the device computes the floor by a rounding-down add,
// the same value; test_histogram checks the device's counts at every edge).
#include "core/histogram_bins.h"

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <random>
#include <utility>

using gpuprim::EvenBins;

int main() {
    std::mt19937_64 rng(20261127);
    auto uniform = [&](double a, double b) { return float(a + (b - a) * double(rng() >> 11) * 0x1p-53); };
    uint64_t checked = 0, shortcut_calls = 0, failures = 0;
    for (int trial = 0; trial < 4000; ++trial) {
        float lower, upper;
        switch (trial % 5) {
        case 0: lower = uniform(-10, 10); upper = lower + uniform(1e-3, 100); break;
        case 1: lower = uniform(-1e30, 1e30); upper = uniform(-1e30, 1e30); break;
        case 2: lower = 0; upper = 1; break;
        case 3: lower = uniform(-1e-30, 0); upper = uniform(0, 1e-30); break;
        default: lower = -FLT_MAX; upper = uniform(-1, FLT_MAX); break;
        }
        if (upper < lower) std::swap(lower, upper);
        if (!(lower < upper)) continue;
        const uint64_t bins = 1 + rng() % (trial % 3 == 0 ? 300000 : 1024);
        const EvenBins e = gpuprim::even_bins_of<float>(lower, upper, bins);
        if (!e.fast) continue;
        ++shortcut_calls;
        for (int i = 0; i < 1500; ++i) {
            float v;
            if (i % 3 == 0) {
                v = uniform(lower, upper);
            } else {  // near edge k, a few ulps either side
                const uint64_t k = rng() % (bins + 1);
                v = float(double(lower) + double(k) * (double(upper) - double(lower)) / double(bins));
                const int nudge = int(rng() % 7) - 3;
                for (int n = 0; n < std::abs(nudge); ++n) v = std::nextafter(v, nudge < 0 ? -FLT_MAX : FLT_MAX);
            }
            if (!(v >= lower && v < upper)) continue;
            const uint64_t want = gpuprim::even_float_bin(e, double(v));
            const uint64_t got = gpuprim::even_float_bin_fast(e, v);
            ++checked;
            if (got != want && failures++ < 10)
                std::printf("test_histogram_bins: lower %a upper %a bins %llu x %a: shortcut %llu, f64 %llu\n",
                            double(lower), double(upper), (unsigned long long)bins, double(v),
                            (unsigned long long)got, (unsigned long long)want);
        }
    }
    std::printf("test_histogram_bins: %llu elements in %llu shortcut set-ups, %llu failures\n",
                (unsigned long long)checked, (unsigned long long)shortcut_calls, (unsigned long long)failures);
    // The shortcut must have been taken for most set-ups, or the test proves nothing.
    return failures == 0 && shortcut_calls > 2000 && checked > 2000000 ? 0 : 1;
}
