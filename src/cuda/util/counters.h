// SPDX-License-Identifier: Apache-2.0
// The owners of DeviceEnv::zeroed_counters: kZeroedCounterWords 32-bit words
// of device memory that are zero when a call starts. A kernel that uses them
// (tile tickets, "last block" counters) must leave them zero when it
// finishes, so no per-call memset is needed. Calls on a context are ordered
// on its stream, so the primitives may share words; within a primitive each
// word has one name here and nowhere else.
#pragma once

#include <cstdint>

namespace gpuprim::cuda {

constexpr uint32_t kZeroedCounterWords = 1024;

struct ReduceCounterWords {
    static constexpr uint32_t kTicket = 0;  // "last block" ticket
    static constexpr uint32_t kEnd = 1;
};

struct ScanCounterWords {
    // [0,1]: one 64-bit word, low half the next tile ticket, high half the
    // watermark of cleared status slots (8-byte aligned: even).
    static constexpr uint32_t kTicket = 0;
    static constexpr uint32_t kDone = 2;  // tiles or persistent blocks finished
    static constexpr uint32_t kEnd = 3;
};

struct SortCounterWords {
    static constexpr uint32_t kTileTicket = 0;        // onesweep pass tiles
    static constexpr uint32_t kHistogramTicket = 1;   // histogram blocks
    static constexpr uint32_t kHistogramZeroed = 2;   // digit counts cleared
    static constexpr uint32_t kHistogramDone = 3;     // histogram blocks finished
    static constexpr uint32_t kFusedFlag = 4;         // fused kernel's grid flag
    static constexpr uint32_t kOrderBroken = 5;       // order check: not sorted (bit 0), not reversed (bit 1)
    // The histogram's sampled neighbours (radix_histogram_kernel.cuh):
    // keys sampled, then per pass slot (8) keys whose neighbour shares
    // their lower digits, then those whose neighbour shares the pass's digit too.
    static constexpr uint32_t kSampledKeys = 6;
    static constexpr uint32_t kSampledNeighbours = 7;
    static constexpr uint32_t kSampledAgreements = 15;
    static constexpr uint32_t kEnd = 23;
};

struct SegmentCounterWords {
    static constexpr uint32_t kCheckTicket = 0;  // offsets check: "last block" ticket
    static constexpr uint32_t kEnd = 1;
};

struct SelectCounterWords {
    // Tile tickets of select / partition / runs (select/agent_select.cuh):
    // the block that takes the last ticket puts the word back to zero.
    static constexpr uint32_t kTicket = 0;
    static constexpr uint32_t kEnd = 1;
};

struct ReduceByKeyCounterWords {
    // Tile tickets of reduce-by-key (reduce_by_key/agent_reduce_by_key.cuh):
    // the block that takes the last ticket puts the word back to zero.
    static constexpr uint32_t kTicket = 0;
    static constexpr uint32_t kEnd = 1;
};

static_assert(SelectCounterWords::kEnd <= kZeroedCounterWords && ReduceByKeyCounterWords::kEnd <= kZeroedCounterWords &&
                  ReduceCounterWords::kEnd <= kZeroedCounterWords && ScanCounterWords::kEnd <= kZeroedCounterWords &&
                  SortCounterWords::kEnd <= kZeroedCounterWords,
              "every claimed counter word lies inside zeroed_counters");
static_assert(ScanCounterWords::kTicket % 2 == 0 && ScanCounterWords::kDone >= ScanCounterWords::kTicket + 2,
              "the scan's 64-bit ticket word is aligned and does not overlap its done word");
static_assert(SortCounterWords::kSampledAgreements + 8 == SortCounterWords::kEnd &&
                  SortCounterWords::kSampledNeighbours + 8 == SortCounterWords::kSampledAgreements &&
                  SortCounterWords::kSampledKeys + 1 == SortCounterWords::kSampledNeighbours &&
                  SortCounterWords::kOrderBroken < SortCounterWords::kSampledKeys &&
                  SortCounterWords::kFusedFlag < SortCounterWords::kOrderBroken &&
                  SortCounterWords::kHistogramDone < SortCounterWords::kFusedFlag,
              "sort words are distinct and inside its range");

}  // namespace gpuprim::cuda
