// SPDX-License-Identifier: Apache-2.0
// Tuning of the top-k paths (src/cuda/topk/topk.cu), one place. Which path a
// segment takes depends on its length:
// - up to kNetworkMaxLength keys: the segmented sort's bitonic networks, a
//   thread or a few a segment, storing the first k ranks;
// - up to WarpSelectPolicy::kMaxLength keys and k up to its kMaxK: one warp
//   a segment, the keys in registers, an 8-bit-digit radix select with
//   warp-level counts (a larger k: the networks, up to 256 keys);
// - up to BlockSelectPolicy::kMaxLength: one block a segment, the segment in
//   shared memory, an 8-bit-digit radix select there, then a bitonic sort of
//   the k chosen;
// - up to BlockStreamSelectPolicy::kMaxLength, k up to its kMaxWanted and
//   one block a segment resident at once: one block a segment reading the
//   segment from global memory a few times, the candidates in shared memory;
// - longer: RadixSelectPolicy, every long segment at once, many blocks each,
//   one launch per 11-bit digit.
#pragma once

#include <cstdint>

namespace gpuprim::cuda::selection {

constexpr uint32_t kNetworkMaxLength = 64;

struct WarpSelectPolicy {
    static constexpr int kWarps = 8;              // segments a block
    static constexpr uint32_t kMaxLength = 256;   // 8 keys a lane, in registers
    static constexpr int kReplicas = 2;           // as BlockSelectPolicy::kReplicas (fewer: shared memory)
    // Each chosen key's rank is counted against all the chosen (k^2 / 32
    // steps a lane): past this k the networks are faster (65536 x 256, k =
    // 64: 248 us against 220).
    static constexpr uint64_t kMaxK = 16;
};

struct BlockSelectPolicy {
    static constexpr int kThreads = 256;            // one digit bin a thread
    static constexpr uint32_t kMaxLength = 8192;    // keys of a segment held in shared memory
    static constexpr int kDigitBits = 8;
    // Copies of each bin (lane % kReplicas picks one), so that lanes whose
    // keys share a digit (the exponent bits of floats) do not serialize on
    // one shared-memory address.
    static constexpr int kReplicas = 8;
};

struct BlockStreamSelectPolicy {
    static constexpr int kThreads = 1024;
    // Past this length the grid select (RadixSelectPolicy) wins: one SM
    // issues about two warp instructions a cycle over ~40 a key (H100, ncu):
    // flat f32 2^17, k = 16 / 1,024, took 35.5 / 59.3 us one call against
    // the grid's 30.1 / 39.0 (an earlier version); at 2^16 20.6 / 35.6
    // against 27.3 / 41.9 (bench/RESULTS.md, seventy-third and
    // seventy-fourth runs).
    static constexpr uint32_t kMaxLength = 1u << 16;
    // Chosen sorted in registers: up to 4 a thread.
    static constexpr uint32_t kMaxWanted = 4096;
    static constexpr int kReplicas = 4;  // as BlockSelectPolicy::kReplicas
    // Shared memory for the keys in play once they fit (8,192 pairs of
    // 4-byte keys and positions): f32 logits' chosen 11-bit bin holds tens
    // (k = 16) to a few thousand (k = 1,024 of 2^17) keys.
    static constexpr int kCandidateBytes = 65536;
    // 16-byte loads a thread in a round; the next round's are in flight
    // while a round is counted.
    static constexpr int kLoads = 2;
};

struct RadixSelectPolicy {
    static constexpr int kThreads = 512;
    static constexpr int kItems = 8;                // keys a thread per tile
    static constexpr int kDigitBits = 11;           // 2048 bins
    static constexpr int kBins = 1 << kDigitBits;
    static constexpr int kReplicas = 4;             // as BlockSelectPolicy::kReplicas
    // Each segment's candidate buffers hold 1/kCandidateShare of its keys;
    // when more keys share the leading digits than that, the next pass
    // reads the input again instead.
    static constexpr uint32_t kCandidateShare = 16;
    static constexpr int kBlocksPerSm = 2;  // 64 registers a thread
    // Shared memory a block gathers the first pass's candidates in (the keys
    // at or below the sampled threshold) before writing them out at once:
    // 1,024 pairs of 4-byte keys and positions; past it, a candidate is
    // written on its own.
    static constexpr int kStageBytes = 8192;
    // The k chosen of a long segment are sorted in one block up to this
    // many, else by two flat radix sorts.
    static constexpr uint32_t kBlockSortMax = 4096;
    // After pass 0, one cooperative launch finishes the select
    // (radix_select_finish.cuh): a segment with at most kFinishMaxKeys keys
    // in play is finished by one block (a grid pass over 36,900 keys took
    // 12.5 us, one block 37.5), which keeps them in kFinishKeptBytes of
    // shared memory once they fit (8,192 pairs of 4-byte keys and positions;
    // two blocks an SM still fit).
    static constexpr uint32_t kFinishMaxKeys = 16384;
    static constexpr int kFinishKeptBytes = 65536;
};

// Every long segment (past BlockSelectPolicy::kMaxLength) chooses all k
// when k is at most kBlockSortMax, so the host sizes the sort of the chosen
// for one count, the same for every segment.
static_assert(BlockSelectPolicy::kMaxLength >= RadixSelectPolicy::kBlockSortMax,
              "long segments hold at least kBlockSortMax keys");

}  // namespace gpuprim::cuda::selection
