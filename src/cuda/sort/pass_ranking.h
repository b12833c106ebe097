// SPDX-License-Identifier: Apache-2.0
// Which ranking a radix pass uses (PassPlan::skewed), from what the upfront
// histogram kernel counted and sampled (radix_histogram_kernel.cuh). Host
// and device code: test/test_pass_ranking.cpp checks it on the host.
#pragma once

#include "core/portable.h"

#include <cstdint>

namespace gpuprim::cuda::radix_detail {

// Chances in 2^-30ths (integers: the same plan every run).
constexpr uint64_t kChanceOne = uint64_t(1) << 30;

// The chance that a key shares the pass's digit with the key a warp of the
// pass holds beside it. A pass reads the keys stably sorted by the digits
// of the passes before it, so that neighbour is the last earlier key with
// the same lower digits. Of `sampled` keys read in runs, `neighbours` had
// such a key earlier in their run and `agreements` of those shared the
// pass's digit with it; the keys without one (their lower digits are rare)
// count as independent of it, at the pass's collision chance (sum over
// digits of the squared shares).
GPUPRIM_HD uint32_t neighbour_agreement(uint32_t sampled, uint32_t neighbours, uint32_t agreements,
                                        uint32_t collision_chance) {
    if (sampled == 0 || neighbours > sampled || agreements > neighbours) return collision_chance;
    const uint64_t alone = sampled - neighbours;
    return uint32_t((uint64_t(agreements) * kChanceOne + alone * collision_chance) / sampled);
}

// match.any ranking (skewed) where neighbour_agreement, unrounded, exceeds
// the threshold; the AtomicOr one elsewhere. No division: the last
// histogram block decides, and a 64-bit division's registers would count
// against every block of the kernel.
GPUPRIM_HD bool pass_is_skewed(uint32_t sampled, uint32_t neighbours, uint32_t agreements, uint32_t collision_chance,
                               uint32_t threshold) {
    if (sampled == 0 || neighbours > sampled || agreements > neighbours) return collision_chance > threshold;
    const uint64_t alone = sampled - neighbours;
    return uint64_t(agreements) * kChanceOne + alone * collision_chance > uint64_t(threshold) * sampled;
}

// Without a sample (sorts below SortTuning::ranking_sample_min), from the
// collision chance alone. The first pass that runs reads the keys in input
// order, where a warp holds about as many digits as the histogram says, so
// it takes the sampled rule's threshold (sampled_threshold); a later pass
// reads repeating keys grouped by the lower digits, a digit or two a warp,
// so a lower chance (later_threshold) makes it skewed. (What the sample
// tells apart and this cannot: a digit independent of the lower ones, such
// as the high byte of f16 keys, is held like a first pass's.)
GPUPRIM_HD bool unsampled_pass_is_skewed(bool first_pass, uint32_t collision_chance, uint32_t sampled_threshold,
                                         uint32_t later_threshold) {
    return collision_chance > (first_pass ? sampled_threshold : later_threshold);
}

}  // namespace gpuprim::cuda::radix_detail
