#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What a warp of an LSD radix sort's pass holds, per key distribution.

usage: tools/radix_warp_digits.py [--log2 N] [--seed S] [--blocks B] [--tile T]

The Onesweep ranking costs differ by what the 32 keys of a warp hold:
match.any costs more the more distinct digits a warp has, the AtomicOr
ranking more the more lanes share one digit (docs/tuning/sort.md). The
upfront histogram's collision chance (sum of squared digit shares)
describes keys in input order. A pass after the first reads them sorted by
the lower digits, so where keys repeat its warps hold far fewer digits
than the histogram says (16 distinct keys:
about 14 a warp in the first pass, one in the later ones), while a digit
independent of the lower ones (the high byte of f16 keys) looks the same.

For each distribution (the ones of bench/sort_matrix_bench.cu, f16 and
bf16 keys in their sort order) and each pass this prints the collision
chance, the distinct digits of 32 keys in input order, the warps' distinct
digits and largest group in the order the pass reads them (stable sorted by
the lower digits), and what the histogram kernel samples to choose the
ranking (radix_histogram_kernel.cuh's sample_block, for --blocks
blocks of 2 runs of 32 keys): the keys sampled, those with an earlier key
of their run with the same lower digits (a neighbour), those that share
the pass's digit with it, and the estimate the sort compares with its
threshold (cuda/sort/pass_ranking.h); then the ranking sm_90 chooses
with that sample (past 2^21 keys) and without one (below: from the
histogram alone, unsampled_pass_is_skewed). Needs numpy.
"""

import argparse

import numpy as np

M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def mix64(x):
    """splitmix64's finalizer (bench/sort_matrix_bench.cu's)."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def ordered_half_bits(values, bfloat):
    """The 16-bit sort order of f16 or bf16 values (sign flipped, negatives inverted)."""
    if bfloat:
        bits = (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint64)
    else:
        bits = values.astype(np.float16).view(np.uint16).astype(np.uint64)
    negative = (bits >> np.uint64(15)) & np.uint64(1)
    return np.where(negative == 1, bits ^ np.uint64(0xFFFF), bits | np.uint64(0x8000))


def distributions(n, rng):
    def word():
        return rng.integers(0, 2**32, n, dtype=np.uint64)

    sixteen = mix64(np.arange(1000, 1016, dtype=np.uint64))
    few = sixteen[rng.integers(0, 16, n)]
    ranks = np.exp(rng.random(n) * np.log(n)).astype(np.uint64)
    return [
        ("uniform u32", word(), 4),
        ("and2 u32", word() & word(), 4),
        ("and4 u32", word() & word() & word() & word(), 4),
        ("few16 u32", few & np.uint64(0xFFFFFFFF), 4),
        ("zipf u32", mix64(ranks) & np.uint64(0xFFFFFFFF), 4),
        ("few16 u16", few & np.uint64(0xFFFF), 2),
        ("and4 u16", (word() & word() & word() & word()) & np.uint64(0xFFFF), 2),
        ("few16 u8", few & np.uint64(0xFF), 1),
        ("f16 normal", ordered_half_bits(rng.standard_normal(n), False), 2),
        ("f16 unif[0,1)", ordered_half_bits(rng.random(n), False), 2),
        ("f16 unif[-1,1)", ordered_half_bits(rng.random(n) * 2 - 1, False), 2),
        ("bf16 normal", ordered_half_bits(rng.standard_normal(n), True), 2),
        ("bf16 unif[-1,1)", ordered_half_bits(rng.random(n) * 2 - 1, True), 2),
    ]


def warp_digits(digits):
    """Mean distinct digits and mean largest group of warps of 32 consecutive keys."""
    warps = np.sort(digits[: len(digits) // 32 * 32].reshape(-1, 32), axis=1)
    new_run = np.concatenate([np.ones((len(warps), 1), bool), np.diff(warps, axis=1) != 0], axis=1)
    lane = np.arange(32)[None, :]
    run_start = np.maximum.accumulate(np.where(new_run, lane, 0), axis=1)
    return new_run.sum(1).mean(), (lane - run_start + 1).max(1).mean()


def sampled_neighbours(keys, p, blocks, tile, runs=2):
    """What radix_histogram_kernel.cuh's sample_block counts for pass p.

    Each of `blocks` blocks reads `runs` runs of 32 keys spread over its first
    tile; a key has a neighbour when an earlier key of its run has the same
    lower digits, and agrees when the last such key has its digit p too.
    Returns (sampled, neighbours, agreements).
    """
    tiles = np.arange(min(blocks, -(-len(keys) // tile)), dtype=np.int64) * tile
    starts = (tiles[:, None] + np.arange(runs)[None, :] * (tile // runs)).reshape(-1)
    index = starts[:, None] + np.arange(32)[None, :]
    valid = index < len(keys)
    run_keys = keys[np.minimum(index, len(keys) - 1)]
    lower = np.where(valid, run_keys & np.uint64((1 << (8 * p)) - 1), M64)
    digit = (run_keys >> np.uint64(8 * p)) & np.uint64(0xFF)
    neighbours = agreements = 0
    for lane in range(1, 32):
        same = lower[:, :lane] == lower[:, lane : lane + 1]
        has = same.any(axis=1) & valid[:, lane]
        last = lane - 1 - np.argmax(same[:, ::-1], axis=1)
        neighbours += int(has.sum())
        agreements += int((has & (digit[np.arange(len(digit)), last] == digit[:, lane])).sum())
    return int(valid.sum()), neighbours, agreements


def neighbour_agreement(sampled, neighbours, agreements, chance):
    """cuda/sort/pass_ranking.h's estimate (in floating point)."""
    return (agreements + (sampled - neighbours) * chance) / sampled if sampled else chance


def unsampled_choice(first_pass, few_lower_digits, chance, sampled_threshold=0.25, later_threshold=1 / 25):
    """cuda/sort/pass_ranking.h's unsampled_pass_is_skewed: True for match.any."""
    if chance > sampled_threshold:
        return True
    return not first_pass and few_lower_digits and chance > later_threshold


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--log2", type=int, default=20, help="keys per distribution: 2^N (default 20)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--blocks", type=int, default=132, help="histogram blocks (default 132: an H100's SMs)")
    parser.add_argument("--tile", type=int, default=16384, help="keys a histogram tile (default 1,024 x 16)")
    args = parser.parse_args()
    n = 1 << args.log2
    rng = np.random.default_rng(args.seed)
    print(f"{'distribution':16s} pass  chance  in order  warps: digits  largest  "
          "sampled neighbours agreements  estimate  ranking: sampled  unsampled")
    for name, keys, passes in distributions(n, rng):
        order = np.arange(n)
        first_pass, few_lower_digits = True, True
        for p in range(passes):
            digits = (keys >> np.uint64(8 * p)) & np.uint64(0xFF)
            shares = np.bincount(digits.astype(np.int64), minlength=256) / n
            seen = int(np.count_nonzero(shares))
            if shares.max() == 1.0:
                print(f"{name:16s} {p}     one digit: the pass is skipped")
                continue
            in_order = (1 - (1 - shares) ** 32).sum()
            distinct, largest = warp_digits(digits[order])
            chance = np.sum(shares * shares)
            sampled, neighbours, agreements = sampled_neighbours(keys, p, args.blocks, args.tile)
            estimate = neighbour_agreement(sampled, neighbours, agreements, chance)
            rankings = ["match.any" if skewed else "AtomicOr" for skewed in
                        (estimate > 0.25, unsampled_choice(first_pass, few_lower_digits, chance))]
            print(f"{name:16s} {p}     {chance:.3f}   {in_order:5.1f}    "
                  f"{distinct:13.1f}  {largest:7.1f}  {sampled:7d} {neighbours:10d} {agreements:10d}  {estimate:.3f}"
                  f"     {rankings[0]:9s} {rankings[1]}")
            first_pass = False
            few_lower_digits = few_lower_digits and seen <= 32
            order = order[np.argsort(digits[order], kind="stable")]


if __name__ == "__main__":
    main()
