// SPDX-License-Identifier: Apache-2.0
// White-box check of the radix passes' ranking choice (cuda/sort/pass_ranking.h):
// the estimate from the histogram kernel's sampled runs, its edge cases, and
// the choices it makes on counts that tools/radix_warp_digits.py printed for
// 2^22 keys of the benchmark's distributions, at sm_90's threshold of 1/4;
// and the rule without a sample (unsampled_pass_is_skewed) on their collision chances.
// Host code only: the rule is the same code on the device.
#include "cuda/sort/pass_ranking.h"

#include <cstdint>
#include <cstdio>

using namespace gpuprim::cuda::radix_detail;

namespace {

int g_failures = 0;

void expect_equal(const char *what, uint64_t got, uint64_t expected) {
    if (got == expected) return;
    ++g_failures;
    std::printf("FAIL %s: %llu, expected %llu\n", what, static_cast<unsigned long long>(got),
                static_cast<unsigned long long>(expected));
}

uint32_t chance(double share) { return uint32_t(share * double(kChanceOne)); }

struct Case {
    const char *name;
    uint32_t sampled, neighbours, agreements;
    double collision_chance;
    bool skewed;  // match.any
};

}  // namespace

int main() {
    const uint32_t uniform = chance(1.0 / 256);
    expect_equal("nothing sampled: the collision chance", neighbour_agreement(0, 0, 0, uniform), uniform);
    expect_equal("no neighbours: the collision chance", neighbour_agreement(4096, 0, 0, uniform), uniform);
    expect_equal("every neighbour agrees", neighbour_agreement(4096, 4096, 4096, uniform), kChanceOne);
    expect_equal("no neighbour agrees, all have one", neighbour_agreement(4096, 4096, 0, kChanceOne), 0);
    expect_equal("mixed: measured share plus the rest at the collision chance",
                 neighbour_agreement(1000, 400, 100, uniform), (100 * kChanceOne + 600 * uint64_t(uniform)) / 1000);
    expect_equal("counts that cannot be (neighbours > sampled)", neighbour_agreement(10, 11, 0, uniform), uniform);
    expect_equal("counts that cannot be (agreements > neighbours)", neighbour_agreement(10, 5, 6, uniform), uniform);
    expect_equal("largest counts do not overflow", neighbour_agreement(0xffffffffu, 0xffffffffu, 0xffffffffu, 0),
                 kChanceOne);

    // The threshold itself ranks by AtomicOr: one key in 4 agreeing, every
    // key with a neighbour, is an estimate of exactly 1/4.
    if (pass_is_skewed(4, 4, 1, uniform, chance(1.0 / 4)) || !pass_is_skewed(4, 4, 1, uniform, chance(1.0 / 4) - 1)) {
        ++g_failures;
        std::printf("FAIL an estimate equal to the threshold must rank by AtomicOr, one above it by match.any\n");
    }
    // Without a sample, the collision chance against the threshold.
    if (!pass_is_skewed(0, 0, 0, chance(0.3), chance(1.0 / 4)) ||
        pass_is_skewed(0, 0, 0, chance(0.2), chance(1.0 / 4))) {
        ++g_failures;
        std::printf("FAIL without a sample the collision chance decides\n");
    }

    // tools/radix_warp_digits.py --log2 22: 132 blocks of 2 runs of 32 keys.
    const Case cases[] = {
        {"uniform u32, pass 1", 8448, 478, 1, 0.004, false},
        {"AND of 2 words u32, pass 1", 8448, 1875, 44, 0.023, false},
        {"AND of 4 words u32, first pass", 8448, 8184, 3084, 0.369, true},
        {"AND of 4 words u32, pass 3", 8448, 2129, 765, 0.369, true},
        {"16 distinct u32, first pass (input order)", 8448, 8184, 534, 0.063, false},
        {"16 distinct u32, pass 1", 8448, 4745, 4745, 0.063, true},
        {"16 distinct u32, pass 3", 8448, 4745, 4745, 0.070, true},
        {"Zipf u32, pass 2", 8448, 384, 382, 0.008, false},
        {"f16 uniform in [0, 1), high byte", 8448, 504, 52, 0.083, false},
        {"f16 uniform in [-1, 1), high byte", 8448, 510, 26, 0.042, false},
        {"bf16 normal, high byte", 8448, 451, 99, 0.208, false},
        {"bf16 uniform in [-1, 1), high byte", 8448, 472, 160, 0.200, false},
    };
    const uint32_t threshold = chance(1.0 / 4);
    for (const Case &c : cases) {
        const bool skewed =
            pass_is_skewed(c.sampled, c.neighbours, c.agreements, chance(c.collision_chance), threshold);
        if (skewed != c.skewed) {
            ++g_failures;
            std::printf("FAIL %s: %s, expected %s (estimate %.3f)\n", c.name, skewed ? "match.any" : "AtomicOr",
                        c.skewed ? "match.any" : "AtomicOr",
                        double(neighbour_agreement(c.sampled, c.neighbours, c.agreements, chance(c.collision_chance))) /
                            double(kChanceOne));
        }
    }
    // Below the sampling size (sm_90: 1/4 anywhere, 1/25 for a later pass
    // whose lower passes saw at most 32 digits each): the collision chances
    // above, with whether the lower passes saw that few.
    struct UnsampledCase {
        const char *name;
        bool first_pass;
        bool few_lower_digits;
        double collision_chance;
        bool skewed;
    };
    const UnsampledCase unsampled[] = {
        {"uniform u32, first pass", true, true, 1.0 / 256, false},
        {"uniform u32, later pass", false, false, 1.0 / 256, false},
        {"AND of 2 words u32, later pass", false, false, 0.023, false},
        {"AND of 4 words u32, first pass", true, true, 0.369, true},
        {"AND of 4 words u32, later pass", false, false, 0.369, true},
        {"16 distinct u32, first pass (input order)", true, true, 0.063, false},
        {"16 distinct u32, pass 1", false, true, 0.063, true},
        {"16 distinct u32, pass 3", false, true, 0.070, true},
        {"a lower pass of many digits", false, false, 0.063, false},
        {"16 distinct u16, pass 1", false, true, 0.063, true},
        {"Zipf u32, pass 2", false, false, 0.009, false},
        {"f16 uniform in [0, 1), high byte", false, false, 0.083, false},
        {"bf16 normal, high byte", false, false, 0.207, false},
        {"16 values in the high byte over a constant low byte (the first pass that runs)", true, true, 0.0625, false},
        {"few lower digits, uniform digit", false, true, 1.0 / 256, false},
    };
    for (const UnsampledCase &c : unsampled) {
        const bool skewed = unsampled_pass_is_skewed(c.first_pass, c.few_lower_digits, chance(c.collision_chance),
                                                     threshold, chance(1.0 / 25));
        if (skewed != c.skewed) {
            ++g_failures;
            std::printf("FAIL unsampled %s: %s, expected %s\n", c.name, skewed ? "match.any" : "AtomicOr",
                        c.skewed ? "match.any" : "AtomicOr");
        }
    }
    if (g_failures) {
        std::printf("test_pass_ranking: %d failures\n", g_failures);
        return 1;
    }
    std::printf("test_pass_ranking: passed\n");
    return 0;
}
