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
// histogram alone. A pass whose collision chance exceeds the sampled rule's
// threshold is skewed wherever it runs. The first pass that runs reads the
// keys in input order, where a warp holds about as many digits as the
// histogram says, so nothing less makes it skewed. A later pass reads the
// keys stably sorted by the lower digits. Where every lower pass saw at
// most kFewLowerDigits digits (few_lower_digits), the keys likely take few
// values and repeat (16 distinct keys), and a warp then holds one digit, so
// a lower chance (later_threshold) makes the pass skewed. A lower pass of
// many digits leaves this digit independent of them (the high byte of f16
// keys over 256 mantissa bytes), held as in input order. What this cannot
// tell apart, and the sample can: lower digits of few values each that
// combine into many keys (independent bytes of 16 values each), whose
// warps hold as many digits as in input order.
constexpr uint32_t kFewLowerDigits = 32;

GPUPRIM_HD bool unsampled_pass_is_skewed(bool first_pass, bool few_lower_digits, uint32_t collision_chance,
                                         uint32_t sampled_threshold, uint32_t later_threshold) {
    if (collision_chance > sampled_threshold) return true;
    return !first_pass && few_lower_digits && collision_chance > later_threshold;
}

}  // namespace gpuprim::cuda::radix_detail
