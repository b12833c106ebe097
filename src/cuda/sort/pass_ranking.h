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

// Counts a sample can have: some keys, no more neighbours than keys, no
// more agreements than neighbours (others leave the collision chance alone
// to decide).
GPUPRIM_HD bool sample_is_whole(uint32_t sampled, uint32_t neighbours, uint32_t agreements) {
    return sampled != 0 && neighbours <= sampled && agreements <= neighbours;
}

// neighbour_agreement times the keys sampled (a whole sample only).
GPUPRIM_HD uint64_t sampled_agreement_sum(uint32_t sampled, uint32_t neighbours, uint32_t agreements,
                                          uint32_t collision_chance) {
    return uint64_t(agreements) * kChanceOne + uint64_t(sampled - neighbours) * collision_chance;
}

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
    if (!sample_is_whole(sampled, neighbours, agreements)) return collision_chance;
    return uint32_t(sampled_agreement_sum(sampled, neighbours, agreements, collision_chance) / sampled);
}

// match.any ranking (skewed) where neighbour_agreement, unrounded, exceeds
// the threshold; the AtomicOr one elsewhere. No division: the last
// histogram block decides, and a 64-bit division's registers would count
// against every block of the kernel.
GPUPRIM_HD bool pass_is_skewed(uint32_t sampled, uint32_t neighbours, uint32_t agreements, uint32_t collision_chance,
                               uint32_t threshold) {
    if (!sample_is_whole(sampled, neighbours, agreements)) return collision_chance > threshold;
    return sampled_agreement_sum(sampled, neighbours, agreements, collision_chance) > uint64_t(threshold) * sampled;
}

}  // namespace gpuprim::cuda::radix_detail
