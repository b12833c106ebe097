// SPDX-License-Identifier: Apache-2.0
// Top-k of long segments (and of a long flat input): a radix select over
// 11-bit digits, every long segment at once, many blocks a segment, one
// launch a pass. The digits run over the select key from the top, then over
// the position (so that the k-th place among equal keys is chosen by
// position too: the pair (key, position) is unique, and "the k smallest
// pairs" is exactly the stable sort's first k).
//
// Pass p, for segment j (state[j] holds the digits chosen so far, the prefix):
// - keys whose chosen digits match the prefix are counted by their digit p
//   (a 2048-bin count per block in shared memory, added into the segment's
//   global count); while they fit 1/kCandidateShare of the segment they are
//   also written to a candidate buffer, which the next pass reads instead of
//   the input;
// - keys that matched the previous prefix but fall below the current one are
//   wanted whatever comes next: they are written to the segment's results;
// - the last block to finish (a ticket) scans the global count for the bin
//   that holds the wanted rank, extends the prefix, and when that bin holds
//   exactly the keys still wanted, marks the segment "collecting": the next
//   pass writes the keys of the bin to the results too and the segment is
//   finished; later passes return at once.
// A sample taken before pass 0 (radix_select_init_kernel) gives a threshold
// that the wanted keys pass with a margin (sample_threshold_rank); pass 0
// then writes the keys at or below it as candidates, gathered in shared
// memory (no block barrier a tile), and counts only those: when at least k
// of them came, the wanted keys are among them, so their counts choose the
// same bin as every key's would, and pass 1 reads them instead of the input.
// When fewer came (the sample misled), the next pass counts the first digit
// again over every key (SelectState::digit_lag). Without a sample, pass 0
// counts every key.
// Results are written in any order (block-aggregated atomics); they are a
// unique set, sorted afterwards (topk.cu), so the output does not depend on
// that order.
#pragma once

#include "cuda/block/block_bitonic_sort.cuh"
#include "cuda/topk/select_common.cuh"
#include "cuda/topk/topk_policy.cuh"
#include "cuda/util/ptx.cuh"

namespace gpuprim::cuda::selection {

enum SelectPhase : uint32_t { kSelecting = 0, kCollecting = 1, kFinished = 2 };

// One long segment's progress, in device memory (zeroed before pass 0).
struct SelectState {
    unsigned long long key_prefix, key_mask;  // chosen digits of the select key
    unsigned long long index_prefix, index_mask;  // ... and of the position, after all the key's
    unsigned long long previous_key_mask, previous_index_mask;  // before the last choice
    unsigned long long remaining;  // keys matching the prefix still wanted
    unsigned long long matching;   // keys matching the prefix
    unsigned long long results;    // results written
    unsigned long long buffered[2];  // candidates written to each buffer
    unsigned long long source_count;  // candidates in the buffer this pass reads
    uint32_t source;  // 0: this pass reads the input; 1 + b: buffer b
    uint32_t phase;   // SelectPhase
    uint32_t ticket;  // blocks of this pass finished
    // From a sample (radix_select_init_kernel): pass 0 also writes the keys
    // whose select key is at most first_threshold to buffer 0, when they are
    // expected to hold the wanted ones and fit; when they do (at least
    // `remaining` of them, within capacity), pass 1 reads them, not the input.
    unsigned long long first_threshold;
    uint32_t first_writes;
    // Passes finished, set last (store_release) by the pass's last block:
    // the finishing launch's other blocks of the segment wait for it.
    uint32_t passes_done;
    // Blocks the finishing launch lets take part in the next pass: 1 once
    // one block finishes alone (or the segment is done), else the tiles in
    // play, never more than before (so a block once left out never needs
    // the state again, and may stop reading it while it changes).
    uint32_t members;
    // Passes that repeated a digit: pass p counts digit p - digit_lag. 1 once
    // pass 0's sampled candidates held fewer than the wanted keys (its
    // counts, of those candidates alone, chose nothing): pass 1 counts the
    // first digit again, over every key.
    uint32_t digit_lag;
};

// Where a pass's digit lies: in the select key or in the position.
struct PassDigit {
    uint32_t in_index;  // 0: key bits, 1: position bits
    uint32_t shift;
    uint32_t width;     // 1..11
};

// A select's prefix (the chosen digits of the select key, then of the
// position) extended by `bin` at `digit`.
template <typename R, typename I>
__device__ __forceinline__ void extend_prefix(PassDigit digit, uint32_t bin, R &key_prefix, R &key_mask,
                                              I &index_prefix, I &index_mask) {
    const uint64_t field_mask = uint64_t((1u << digit.width) - 1) << digit.shift;
    const uint64_t field_prefix = uint64_t(bin) << digit.shift;
    if (digit.in_index) {
        index_mask |= I(field_mask);
        index_prefix |= I(field_prefix);
    } else {
        key_mask |= R(field_mask);
        key_prefix |= R(field_prefix);
    }
}

// The digits of a select: key_bits of the select key, then index_bits of
// the position; `passes` of them, and one pass after them that collects.
struct SelectDigits {
    uint32_t key_bits, index_bits, passes;

    __host__ __device__ static SelectDigits of(uint32_t key_bits, uint32_t index_bits) {
        constexpr uint32_t kDigit = RadixSelectPolicy::kDigitBits;
        return {key_bits, index_bits, (key_bits + kDigit - 1) / kDigit + (index_bits + kDigit - 1) / kDigit};
    }
    // The digit of pass p < passes: the select key's digits from the top,
    // then the position's, 11 bits each (the last of each shorter). Pass
    // `passes` reads no digit: it only collects the chosen bin.
    __host__ __device__ PassDigit digit(uint32_t pass) const {
        constexpr uint32_t kDigit = RadixSelectPolicy::kDigitBits;
        if (pass >= passes) return {0, 0, 1};
        const uint32_t key_passes = (key_bits + kDigit - 1) / kDigit;
        const bool in_index = pass >= key_passes;
        const uint32_t bits = in_index ? index_bits : key_bits;
        const uint32_t q = in_index ? pass - key_passes : pass;
        const uint32_t top = bits - q * kDigit;
        const uint32_t width = top < kDigit ? top : kDigit;
        return {in_index ? 1u : 0u, top - width, width};
    }
};

// The digit pass `pass` of a segment counts (SelectState::digit_lag).
__host__ __device__ __forceinline__ PassDigit digit_of_pass(const SelectDigits &digits, uint32_t pass,
                                                            uint32_t digit_lag) {
    return digits.digit(pass - digit_lag);
}

// Workspace of the long segments (j: the long segment's ordinal).
template <typename R, typename I>
struct SelectBuffers {
    SelectState *states;       // one a long segment
    unsigned long long *bins;  // kBins a long segment
    R *candidate_keys[2];      // at capacity_first(j), capacity(j) each
    I *candidate_positions[2];
    R *result_keys;            // result_stride a long segment
    I *result_positions;
    // min(k, the longest segment): what one segment can choose, so the
    // results take room for the work, not for a k far past every segment.
    uint64_t result_stride;
};

__device__ __forceinline__ uint64_t candidate_capacity(uint64_t length) {
    return length / RadixSelectPolicy::kCandidateShare;
}
// Segments do not overlap, so neither do [begin / share, begin / share + length / share).
__device__ __forceinline__ uint64_t candidate_first(uint64_t begin) {
    return begin / RadixSelectPolicy::kCandidateShare;
}

// Which of a thread's items a pass keeps (bit e: item e) and how many.
struct SelectMarks {
    uint32_t results = 0, candidates = 0;
    uint32_t is_result = 0, is_candidate = 0;
};

// One block's part of a select pass over one long segment j: it reads its
// tiles (load_tile), marks each key as a result, a candidate or neither
// while counting the digits of the keys still in play (mark_first_pass,
// mark), writes the marked keys (write_marked), adds its counts to the
// segment's (add_block_counts); the last block to finish (last_block)
// chooses the bin holding the wanted rank (choose_bin) and writes the
// segment's next state (advance_state).
template <typename K, typename I>
struct SelectPassAgent {
    using R = SelectKey<K>;
    static constexpr int kThreads = RadixSelectPolicy::kThreads;
    static constexpr int kPerVector = 16 / int(sizeof(K));
    static constexpr int kItems = kPerVector > RadixSelectPolicy::kItems ? kPerVector : RadixSelectPolicy::kItems;
    static constexpr int kVectors = kItems / kPerVector;
    static constexpr int kBins = RadixSelectPolicy::kBins;
    static constexpr uint32_t kTile = kThreads * kItems;
    static constexpr int kBinsPerThread = kBins / kThreads;
    static constexpr int kReplicas = RadixSelectPolicy::kReplicas;
    static constexpr int kStageSlots = RadixSelectPolicy::kStageBytes / int(sizeof(R) + sizeof(I));

    // The kernel's shared variables (declared there one by one, as the
    // compiler lays them out best).
    struct Shared {
        uint32_t (&bins)[kBins * kReplicas];
        SelectState &view;  // the segment's state as the pass began
        uint32_t (&warp_sums)[33];
        uint32_t (&warp_bases)[kThreads / 32][2];
        uint32_t (&tile_counts)[2];  // zero between tiles
        unsigned long long &result_base, &candidate_base;
        uint32_t &last_block;
        uint32_t &chosen_bin;
        unsigned long long &chosen_below, &chosen_count;
        // Pass 0's candidates, gathered here and written out once a block
        // (stage_candidates, write_staged).
        R (&staged_keys)[kStageSlots];
        I (&staged_positions)[kStageSlots];
        uint32_t &staged;
    };

    const Shared sh;
    const TopkArgs &args;
    const SelectBuffers<R, I> &buffers;
    SelectState &state;
    const SelectState &view;
    const uint32_t pass;
    const PassDigit digit;
    const uint64_t j;
    const uint64_t length;
    const bool collecting;
    const bool from_input;
    const uint64_t size;       // keys this pass reads
    const uint32_t reading;    // candidate buffer read (when not from the input)
    const uint32_t writing;    // candidate buffer written
    const bool write_candidates;
    const R key_prefix, key_mask;
    const I index_prefix, index_mask;
    const R previous_key_mask;
    const I previous_index_mask;
    const uint32_t digit_mask;
    const K *const in;
    const uint64_t capacity_at;
    const uint64_t capacity;
    const bool first_writes;
    const R first_threshold;
    const uint32_t replica;
    // The blocks that share this segment's pass (the pass kernel: the grid's
    // x dimension; the finishing launch: the segment's team) and this one's
    // rank among them.
    const uint32_t block_rank, block_count;
    // Full tiles of a 16-byte aligned input load 16 bytes at a time.
    const bool vector_input;
    const bool keys_only;  // no position digit chosen yet

    // Reads the segment's state into shared memory (written only by the last
    // block, after every block has read it); false: the segment is finished.
    // Read past the L1: in the finishing launch another block wrote it in
    // an earlier pass of the same kernel.
    __device__ __forceinline__ static bool read_view(const Shared &sh, const SelectState &state) {
        static_assert(sizeof(SelectState) % 8 == 0, "the state is read as 8-byte words");
        static_assert(sizeof(SelectState) / 8 <= kThreads, "a thread a word");
        constexpr int kWords = int(sizeof(SelectState) / 8);
        __syncthreads();  // the previous segment's view is no longer read
        if (threadIdx.x < kWords)
            reinterpret_cast<unsigned long long *>(&sh.view)[threadIdx.x] =
                __ldcg(reinterpret_cast<const unsigned long long *>(&state) + threadIdx.x);
        __syncthreads();
        return sh.view.phase != kFinished;
    }

    __device__ __forceinline__ SelectPassAgent(const Shared &shared, const TopkArgs &a, const SelectBuffers<R, I> &b,
                                               uint32_t pass_index, PassDigit pass_digit, uint64_t segment,
                                               uint64_t begin, uint64_t segment_length, uint32_t rank,
                                               uint32_t blocks)
        : sh(shared),
          args(a),
          buffers(b),
          state(b.states[segment]),
          view(shared.view),
          pass(pass_index),
          digit(pass_digit),
          j(segment),
          length(segment_length),
          collecting(shared.view.phase == kCollecting),
          from_input(shared.view.source == 0),
          size(shared.view.source == 0 ? segment_length : shared.view.source_count),
          reading(shared.view.source == 0 ? 0 : shared.view.source - 1),
          writing(pass_index & 1),
          // A pass that reads a buffer writes its candidates (at most what
          // it reads: they fit) even when `matching`, a count over the input
          // after pass 0's sampled buffer, says more: the input holds keys
          // past the sample's threshold that the buffer's counts left out, so
          // a later pass must not go back to it.
          write_candidates(shared.view.phase != kCollecting &&
                           (shared.view.source != 0 || shared.view.matching <= candidate_capacity(segment_length))),
          key_prefix(R(shared.view.key_prefix)),
          key_mask(R(shared.view.key_mask)),
          index_prefix(I(shared.view.index_prefix)),
          index_mask(I(shared.view.index_mask)),
          previous_key_mask(R(shared.view.previous_key_mask)),
          previous_index_mask(I(shared.view.previous_index_mask)),
          digit_mask((1u << pass_digit.width) - 1),
          in(static_cast<const K *>(a.keys_in) + begin),
          capacity_at(candidate_first(begin)),
          capacity(candidate_capacity(segment_length)),
          first_writes(pass_index == 0 && shared.view.first_writes),
          first_threshold(R(shared.view.first_threshold)),
          replica(threadIdx.x % kReplicas),
          block_rank(rank),
          block_count(blocks),
          vector_input(shared.view.source == 0 && (reinterpret_cast<uintptr_t>(in) % 16) == 0),
          keys_only((shared.view.index_mask | shared.view.previous_index_mask) == 0) {}

    // Where item e of this thread lies in a tile: thread t's vector v holds
    // keys [(v * kThreads + t) * kPerVector, ...), item e = v * kPerVector + u.
    __device__ __forceinline__ static uint64_t item_position(uint64_t tile, int e) {
        return tile + (uint64_t(e / kPerVector) * kThreads + threadIdx.x) * kPerVector + e % kPerVector;
    }

    // True in the block that marks the segment finished (the last block of
    // a collecting pass).
    __device__ __forceinline__ bool run() {
        if (threadIdx.x < 2) sh.tile_counts[threadIdx.x] = 0;
        if (threadIdx.x == 0) sh.staged = 0;
        if (!collecting)
            for (int b = threadIdx.x; b < kBins * kReplicas; b += kThreads) sh.bins[b] = 0;
        __syncthreads();
        read_tiles();
        if (first_writes) write_staged();
        add_block_counts();
        if (!last_block()) return false;
        __threadfence();
        if (collecting) {
            if (threadIdx.x == 0) {
                state.phase = kFinished;
                state.ticket = 0;
                state.members = 1;
                store_release(&state.passes_done, pass + 1);
            }
            return true;
        }
        choose_bin();
        __syncthreads();
        unsigned long long *global_bins = buffers.bins + j * kBins;
        for (int b = threadIdx.x; b < kBins; b += kThreads) global_bins[b] = 0;
        __syncthreads();  // the zeroed bins come before the state's release
        if (threadIdx.x == 0) advance_state();
        return false;
    }

    // The block's tiles, grid-strided. Full tiles of a vector input are
    // double-buffered: the next tile's loads are in flight while this one is
    // counted.
    __device__ __forceinline__ void read_tiles() {
        const uint64_t tile_stride = uint64_t(block_count) * kTile;
        const uint64_t first_tile = uint64_t(block_rank) * kTile;
        uint4 staged[kVectors];
        if (vector_input && first_tile + kTile <= size) stage(staged, first_tile);
        for (uint64_t tile = first_tile; tile < size; tile += tile_stride) {
            R keys[kItems];
            I positions[kItems];
            load_tile(tile, tile_stride, staged, keys, positions);
            SelectMarks marks;
            const bool full = tile + kTile <= size;  // every item valid
            if (pass == 0) {
                mark_first_pass(tile, full, keys, marks);
                if (first_writes) stage_candidates(keys, positions, marks);
                continue;
            }
            mark(tile, full, keys, positions, marks);
            if (__syncthreads_or(marks.results | marks.candidates)) write_marked(keys, positions, marks);
        }
    }

    __device__ __forceinline__ void stage(uint4 (&staged)[kVectors], uint64_t tile) const {
#pragma unroll
        for (int v = 0; v < kVectors; ++v)
            staged[v] = __ldcs(reinterpret_cast<const uint4 *>(in + tile + (uint64_t(v) * kThreads + threadIdx.x) * kPerVector));
    }

    // This thread's keys (as select keys) and positions of the tile; past the
    // end, the largest key.
    __device__ __forceinline__ void load_tile(uint64_t tile, uint64_t tile_stride, uint4 (&staged)[kVectors],
                                              R (&keys)[kItems], I (&positions)[kItems]) const {
        if (vector_input && tile + kTile <= size) {
            uint4 current[kVectors];
#pragma unroll
            for (int v = 0; v < kVectors; ++v) current[v] = staged[v];
            if (tile + tile_stride + kTile <= size) stage(staged, tile + tile_stride);
#pragma unroll
            for (int v = 0; v < kVectors; ++v) {
                const uint64_t first = tile + (uint64_t(v) * kThreads + threadIdx.x) * kPerVector;
                K unpacked[kPerVector];
                memcpy(unpacked, &current[v], sizeof current[v]);
#pragma unroll
                for (int u = 0; u < kPerVector; ++u) {
                    keys[v * kPerVector + u] = select_key<K>(args, unpacked[u]);
                    positions[v * kPerVector + u] = I(first + u);
                }
            }
            return;
        }
#pragma unroll
        for (int e = 0; e < kItems; ++e) {
            const uint64_t at = item_position(tile, e);
            keys[e] = ~R(0);
            positions[e] = I(at);
            if (at >= size) continue;
            if (from_input) {
                keys[e] = select_key<K>(args, in[at]);
            } else {
                // Past the L1: the finishing launch rewrites a buffer between passes.
                keys[e] = __ldcg(&buffers.candidate_keys[reading][capacity_at + at]);
                positions[e] = __ldcg(&buffers.candidate_positions[reading][capacity_at + at]);
            }
        }
    }

    // Pass 0, nothing chosen yet. With the sample's threshold, the keys at
    // or below it go to buffer 0 (past its capacity they are dropped, and
    // pass 1 reads the input) and only they count (advance_state); without
    // it, every key counts.
    __device__ __forceinline__ void mark_first_pass(uint64_t tile, bool full, const R (&keys)[kItems],
                                                    SelectMarks &marks) {
#pragma unroll
        for (int e = 0; e < kItems; ++e) {
            if (!full && item_position(tile, e) >= size) continue;
            const bool candidate = first_writes && keys[e] <= first_threshold;
            if (candidate) {
                marks.is_candidate |= 1u << e;
                ++marks.candidates;
            }
            if (candidate || !first_writes) {
                const uint32_t d = uint32_t(keys[e] >> digit.shift) & digit_mask;
                atomicAdd(&sh.bins[d * kReplicas + replica], 1u);
            }
        }
    }

    // Later passes: of the keys that matched the previous prefix, those below
    // the current one (or equal, when collecting) are results; those equal
    // to it are counted by their digit and, while they fit, are candidates.
    __device__ __forceinline__ void mark(uint64_t tile, bool full, const R (&keys)[kItems],
                                         const I (&positions)[kItems], SelectMarks &marks) {
#pragma unroll
        for (int e = 0; e < kItems; ++e) {
            if (!full && item_position(tile, e) >= size) continue;
            const R key = keys[e];
            const I position = positions[e];
            const R masked_key = key & key_mask;
            bool equal, below;
            if (keys_only) {
                if ((key & previous_key_mask) != (key_prefix & previous_key_mask)) continue;
                equal = masked_key == key_prefix;
                below = masked_key < key_prefix;
            } else {
                const bool matched_before = (key & previous_key_mask) == (key_prefix & previous_key_mask) &&
                                            (position & previous_index_mask) == (index_prefix & previous_index_mask);
                if (!matched_before) continue;
                const I masked_position = position & index_mask;
                equal = masked_key == key_prefix && masked_position == index_prefix;
                below = masked_key < key_prefix || (masked_key == key_prefix && masked_position < index_prefix);
            }
            if (below || (equal && collecting)) {
                marks.is_result |= 1u << e;
                ++marks.results;
            } else if (equal) {
                const uint64_t field = digit.in_index ? uint64_t(position) : uint64_t(key);
                atomicAdd(&sh.bins[(uint32_t(field >> digit.shift) & digit_mask) * kReplicas + replica], 1u);
                if (write_candidates) {
                    marks.is_candidate |= 1u << e;
                    ++marks.candidates;
                }
            }
        }
    }

    // Pass 0's candidates into the block's stage: a warp's slots from one
    // shared counter, no block barrier (a tile rarely holds any: the sample's
    // threshold takes a few keys in a thousand). The warp's slots past the
    // stage take one range of the buffer (one global atomic a warp).
    __device__ __forceinline__ void stage_candidates(const R (&keys)[kItems], const I (&positions)[kItems],
                                                     const SelectMarks &marks) {
        if (!__any_sync(0xffffffffu, marks.candidates)) return;
        constexpr uint32_t kSlots = uint32_t(kStageSlots);
        uint32_t at = warp_exclusive_sum(marks.candidates);
        const uint32_t warp_count = __shfl_sync(0xffffffffu, at + marks.candidates, 31);
        uint32_t base = 0;
        unsigned long long direct_base = 0;
        if ((threadIdx.x & 31) == 31) {
            base = atomicAdd(&sh.staged, warp_count);
            const uint32_t staged_end = base + warp_count;
            if (staged_end > kSlots)
                direct_base = atomicAdd(&state.buffered[writing],
                                        (unsigned long long)(staged_end - (base > kSlots ? base : kSlots)));
        }
        base = __shfl_sync(0xffffffffu, base, 31);
        direct_base = __shfl_sync(0xffffffffu, direct_base, 31);
        const uint32_t first_direct = base > kSlots ? base : kSlots;  // the warp's first slot past the stage
        at += base;
#pragma unroll
        for (int e = 0; e < kItems; ++e) {
            if (!(marks.is_candidate & (1u << e))) continue;
            const uint32_t slot = at++;
            if (slot < kSlots) {
                sh.staged_keys[slot] = keys[e];
                sh.staged_positions[slot] = positions[e];
            } else if (const unsigned long long direct = direct_base + (slot - first_direct); direct < capacity) {
                buffers.candidate_keys[writing][capacity_at + direct] = keys[e];
                buffers.candidate_positions[writing][capacity_at + direct] = positions[e];
            }
        }
    }

    // The block's staged candidates into buffer 0 (one global atomic).
    __device__ __forceinline__ void write_staged() {
        __syncthreads();
        const uint32_t count = sh.staged < uint32_t(kStageSlots) ? sh.staged : uint32_t(kStageSlots);
        if (threadIdx.x == 0)
            sh.candidate_base = count ? atomicAdd(&state.buffered[writing], (unsigned long long)count) : 0;
        __syncthreads();
        for (uint32_t i = threadIdx.x; i < count; i += kThreads) {
            const uint64_t slot = sh.candidate_base + i;
            if (slot < capacity) {
                buffers.candidate_keys[writing][capacity_at + slot] = sh.staged_keys[i];
                buffers.candidate_positions[writing][capacity_at + slot] = sh.staged_positions[i];
            }
        }
    }

    // Writes the marked keys: a warp's slots from one shared counter each
    // (its lanes' by a warp scan), the block's from one global atomic each;
    // the order of the writes does not matter.
    __device__ __forceinline__ void write_marked(const R (&keys)[kItems], const I (&positions)[kItems],
                                                 const SelectMarks &marks) {
        uint32_t result_at = warp_exclusive_sum(marks.results);
        uint32_t candidate_at = warp_exclusive_sum(marks.candidates);
        if ((threadIdx.x & 31) == 31) {
            const uint32_t warp_results = result_at + marks.results, warp_candidates = candidate_at + marks.candidates;
            sh.warp_bases[threadIdx.x >> 5][0] = warp_results ? atomicAdd(&sh.tile_counts[0], warp_results) : 0;
            sh.warp_bases[threadIdx.x >> 5][1] = warp_candidates ? atomicAdd(&sh.tile_counts[1], warp_candidates) : 0;
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            sh.result_base = sh.tile_counts[0] ? atomicAdd(&state.results, (unsigned long long)sh.tile_counts[0]) : 0;
            sh.candidate_base =
                sh.tile_counts[1] ? atomicAdd(&state.buffered[writing], (unsigned long long)sh.tile_counts[1]) : 0;
            sh.tile_counts[0] = sh.tile_counts[1] = 0;
        }
        __syncthreads();
        result_at += sh.warp_bases[threadIdx.x >> 5][0];
        candidate_at += sh.warp_bases[threadIdx.x >> 5][1];
        __syncthreads();
#pragma unroll
        for (int e = 0; e < kItems; ++e) {
            if (marks.is_result & (1u << e)) {
                // A segment chooses at most result_stride; never write into
                // the next one's slots.
                const uint64_t rank = sh.result_base + result_at++;
                if (rank >= buffers.result_stride) continue;
                const uint64_t slot = j * buffers.result_stride + rank;
                buffers.result_keys[slot] = keys[e];
                buffers.result_positions[slot] = positions[e];
            } else if (marks.is_candidate & (1u << e)) {
                const uint64_t slot = sh.candidate_base + candidate_at++;
                if (slot < capacity) {  // a guard: `matching` or the buffer read bounds them
                    buffers.candidate_keys[writing][capacity_at + slot] = keys[e];
                    buffers.candidate_positions[writing][capacity_at + slot] = positions[e];
                }
            }
        }
        __syncthreads();  // result_base and candidate_base are the next tile's
    }

    // The block's counts into the segment's global bins.
    __device__ __forceinline__ void add_block_counts() {
        if (collecting) return;
        unsigned long long *global_bins = buffers.bins + j * kBins;
        __syncthreads();
        for (int b = threadIdx.x; b < kBins; b += kThreads) {
            uint32_t count = 0;
#pragma unroll
            for (int r = 0; r < kReplicas; ++r) count += sh.bins[b * kReplicas + r];
            if (count) atomicAdd(global_bins + b, (unsigned long long)count);
        }
    }

    // Whether this block is the pass's last to finish the segment (a ticket).
    __device__ __forceinline__ bool last_block() {
        __threadfence();
        __syncthreads();
        if (threadIdx.x == 0) sh.last_block = atomicAdd(&state.ticket, 1u) == block_count - 1;
        __syncthreads();
        return sh.last_block;
    }

    // The bin that holds rank `remaining`: chosen_bin, the count below it and its own.
    __device__ __forceinline__ void choose_bin() {
        const unsigned long long *global_bins = buffers.bins + j * kBins;
        unsigned long long counts[kBinsPerThread];
        unsigned long long mine = 0;
#pragma unroll
        for (int b = 0; b < kBinsPerThread; ++b) {
            counts[b] = __ldcg(global_bins + threadIdx.x * kBinsPerThread + b);
            mine += counts[b];
        }
        if (length < (uint64_t(1) << 32)) {
            uint32_t total;
            unsigned long long below = block_exclusive_sum(uint32_t(mine), sh.warp_sums, total);
#pragma unroll
            for (int b = 0; b < kBinsPerThread; ++b) {
                if (below < view.remaining && view.remaining <= below + counts[b]) {
                    sh.chosen_bin = threadIdx.x * kBinsPerThread + b;
                    sh.chosen_below = below;
                    sh.chosen_count = counts[b];
                }
                below += counts[b];
            }
        } else if (threadIdx.x == 0) {
            // Counts past 32 bits (a segment of 2^32 keys or more): one thread, 64-bit.
            unsigned long long below = 0;
            for (int b = 0; b < kBins; ++b) {
                const unsigned long long c = __ldcg(global_bins + b);
                if (below < view.remaining && view.remaining <= below + c) {
                    sh.chosen_bin = b;
                    sh.chosen_below = below;
                    sh.chosen_count = c;
                }
                below += c;
            }
        }
    }

    // Thread 0 of the last block: the prefix extended by the chosen bin, and
    // where the next pass reads.
    __device__ __forceinline__ void advance_state() {
        SelectState next = view;
        // Counters other blocks added to: read past the L1 (view is stale).
        const unsigned long long written = __ldcg(&state.buffered[writing]);
        next.results = __ldcg(&state.results);
        next.ticket = 0;
        if (first_writes && written < view.remaining) {
            // Fewer keys at or below the sample's threshold than wanted, and
            // the counts were of those alone: the next pass counts the first
            // digit again, over every key (the prefix stays empty).
            next.digit_lag = view.digit_lag + 1;
            next.first_writes = 0;
            next.matching = length;
            next.source = 0;
            next.source_count = 0;
            next.buffered[0] = next.buffered[1] = 0;
            next.phase = kSelecting;
        } else {
            choose_next(written, next);
        }
        const uint64_t in_play = next.source == 0 ? length : next.source_count;
        const uint64_t wanted_blocks =
            in_play <= RadixSelectPolicy::kFinishMaxKeys ? 1 : (in_play + kTile - 1) / kTile;
        next.members = uint32_t(wanted_blocks < view.members ? wanted_blocks : view.members);
        state = next;
        store_release(&state.passes_done, pass + 1);
    }

    // advance_state's next state after a choice: the prefix extended by the
    // chosen bin, and where the next pass reads.
    __device__ __forceinline__ void choose_next(unsigned long long written, SelectState &next) const {
        next.previous_key_mask = view.key_mask;
        next.previous_index_mask = view.index_mask;
        extend_prefix(digit, sh.chosen_bin, next.key_prefix, next.key_mask, next.index_prefix, next.index_mask);
        next.remaining = view.remaining - sh.chosen_below;
        next.matching = sh.chosen_count;
        // Pass 0 wrote and counted the keys up to the sample's threshold T,
        // at least `remaining` of them: the wanted keys are all at most T, so
        // every key below the chosen bin is a candidate (the bins below T's
        // counted the same as over every key), and the chosen bin's keys up to
        // T rank first in it. When the buffer holds them all, the later passes
        // read and count only those, and their choices are the same as over
        // the input's; when it does not, they read the input, where T's bin
        // may also hold some of the length - written keys past T.
        const bool wrote = pass == 0 ? first_writes && written <= candidate_capacity(length) : write_candidates;
        const uint32_t threshold_bin = uint32_t(R(view.first_threshold) >> digit.shift) & digit_mask;
        if (first_writes && !wrote && sh.chosen_bin == threshold_bin) next.matching += length - written;
        next.source = wrote ? 1 + writing : 0;
        next.source_count = wrote ? written : 0;
        next.buffered[writing] = written;
        next.buffered[writing ^ 1] = 0;  // the next pass writes there
        next.phase = next.matching == next.remaining ? kCollecting : kSelecting;
    }
};

// One select pass over every long segment (blockIdx.y strides the segments).
template <typename K, typename I>
__global__ void __launch_bounds__(RadixSelectPolicy::kThreads, RadixSelectPolicy::kBlocksPerSm)
    radix_select_pass_kernel(const TopkArgs args, const SelectBuffers<SelectKey<K>, I> buffers, uint32_t pass,
                             SelectDigits digits) {
    using Agent = SelectPassAgent<K, I>;
    __shared__ uint32_t bins[Agent::kBins * Agent::kReplicas];
    __shared__ SelectState view;
    __shared__ uint32_t warp_sums[33];
    __shared__ uint32_t warp_bases[Agent::kThreads / 32][2];
    __shared__ uint32_t tile_counts[2];
    __shared__ unsigned long long result_base, candidate_base;
    __shared__ uint32_t last_block;
    __shared__ uint32_t chosen_bin;
    __shared__ unsigned long long chosen_below, chosen_count;
    __shared__ SelectKey<K> staged_keys[Agent::kStageSlots];
    __shared__ I staged_positions[Agent::kStageSlots];
    __shared__ uint32_t staged;
    const typename Agent::Shared shared{bins,         view,         warp_sums,   warp_bases,     tile_counts,
                                        result_base,  candidate_base, last_block, chosen_bin,   chosen_below,
                                        chosen_count, staged_keys,  staged_positions, staged};
    // Launched as a programmatic dependent of the previous pass: wait for it
    // to finish (and its writes to show), and let the next pass's blocks
    // launch while this one runs, hiding the launch latency.
    wait_for_previous_grid();
    allow_next_grid();
    for (uint64_t j = blockIdx.y; j < args.groups; j += gridDim.y) {
        if (!Agent::read_view(shared, buffers.states[j])) continue;
        const uint64_t s = segment_of(args, j);
        const uint64_t begin = args.bounds.offset(s);
        Agent(shared, args, buffers, pass, digit_of_pass(digits, pass, view.digit_lag), j, begin,
              args.bounds.offset(s + 1) - begin, blockIdx.x, gridDim.x)
            .run();
    }
}

// One block a long segment: zeroes its state and bins, gives its
// `remaining` (its wanted count), and samples kSampleKeys of its keys
// (kSampleRuns runs of kSampleRun consecutive keys, spread evenly) for pass
// 0's threshold: the sample's r-th smallest select key, r the
// wanted share of the sample plus a margin (sample_threshold_rank), so that
// the keys up to it hold the wanted ones; pass 0 writes them when they are
// expected to fill at most half of the candidate buffer. The r-th smallest
// is found exactly, by a radix select over the sample in shared memory
// (sample_rank_key). A larger sample gives a tighter threshold: pass 0
// writes about r / kSampleKeys of the keys.
constexpr uint32_t kSampleKeys = 4096;
constexpr int kSampleThreads = 256;
// Runs of 8 keys: a warp's sample load reads 4 sectors of 4-byte keys
// where evenly spaced keys took 32, and the sample kernel stalls on its
// loads a sixth as long (ninety-first run, H100: 9.4 -> 7.3 us; flat 2^22
// k = 16 42.1 -> 37.1 us a call). For keys in random order a run is as good
// a sample as spaced keys.
constexpr uint32_t kSampleRun = 8;
constexpr uint32_t kSampleRuns = kSampleKeys / kSampleRun;

// The sample rank r of pass 0's threshold. For keys in random order, the
// number of sampled keys among the wanted ones is about Poisson(m), m =
// wanted * samples / length, so r = m + 5 standard deviations + 2 falls
// short of the wanted keys in about one call in 10^5 at worst (m near 1;
// about 10^-6 for most m), which costs time only: pass 1 then reads the
// input again. The rank was 2m + 8 before: 9 for k = 16 of 2^22 keys (m =
// 1/64) where 3 does, three times the candidates to write and to sweep.
__device__ __forceinline__ uint64_t sample_threshold_rank(uint64_t wanted, uint32_t samples, uint64_t length) {
    const double share = double(wanted) * double(samples) / double(length);
    return uint64_t(ceil(share + 5.0 * sqrt(share))) + 2;
}

// The rank-th smallest (1-based) of the block's sampled select keys, each
// thread holding kPerThread of them (those at or past `samples` ignored).
// Every thread of the block calls it; every thread gets the key. A radix
// select over 11-bit digits, until the chosen bin holds at most a key a
// thread: those are gathered and ranked by comparing each with all (one
// round of counts instead of up to two more, each a 2048-bin count with
// five block barriers; a sample's wanted rank is small, so the first
// round's bin is usually that small).
template <typename R, int kPerThread>
__device__ __forceinline__ R sample_rank_key(const R (&sampled)[kPerThread], uint32_t samples, uint32_t rank,
                                             uint32_t *bins, uint32_t *warp_sums) {
    constexpr int kDigit = RadixSelectPolicy::kDigitBits;
    constexpr int kBins = RadixSelectPolicy::kBins;
    constexpr int kBinsPerThread = kBins / kSampleThreads;
    __shared__ R chosen_prefix;
    __shared__ uint32_t chosen_rank, chosen_count;
    __shared__ R gathered[kSampleThreads];
    __shared__ uint32_t gathered_count;
    R prefix = 0, mask = 0;
    for (int top = int(8 * sizeof(R)); top > 0; top -= kDigit) {
        const int width = top < kDigit ? top : kDigit;
        const int shift = top - width;
        for (int b = threadIdx.x; b < kBins; b += kSampleThreads) bins[b] = 0;
        if (threadIdx.x == 0) gathered_count = 0;
        __syncthreads();
#pragma unroll
        for (int u = 0; u < kPerThread; ++u) {
            const uint32_t i = u * kSampleThreads + threadIdx.x;
            if (i < samples && (sampled[u] & mask) == prefix)
                atomicAdd(&bins[uint32_t(sampled[u] >> shift) & ((1u << width) - 1)], 1u);
        }
        __syncthreads();
        uint32_t counts[kBinsPerThread], mine = 0;
#pragma unroll
        for (int b = 0; b < kBinsPerThread; ++b) mine += counts[b] = bins[threadIdx.x * kBinsPerThread + b];
        uint32_t total;
        uint32_t below = block_exclusive_sum(mine, warp_sums, total);
#pragma unroll
        for (int b = 0; b < kBinsPerThread; ++b) {
            if (below < rank && rank <= below + counts[b]) {
                chosen_prefix = prefix | (R(threadIdx.x * kBinsPerThread + b) << shift);
                chosen_rank = rank - below;
                chosen_count = counts[b];
            }
            below += counts[b];
        }
        __syncthreads();
        prefix = chosen_prefix;
        rank = chosen_rank;
        const uint32_t count = chosen_count;
        mask |= R((1u << width) - 1) << shift;
        if (count <= uint32_t(kSampleThreads)) {
#pragma unroll
            for (int u = 0; u < kPerThread; ++u) {
                const uint32_t i = u * kSampleThreads + threadIdx.x;
                if (i < samples && (sampled[u] & mask) == prefix) gathered[atomicAdd(&gathered_count, 1u)] = sampled[u];
            }
            __syncthreads();  // every thread has read chosen_* and gathered its keys
            if (threadIdx.x < count) {
                // Key x with `less` smaller ones and `equal` copies holds
                // ranks less + 1 ... less + equal; its first copy writes it.
                const R key = gathered[threadIdx.x];
                uint32_t less = 0, equal = 0, equal_before = 0;
                for (uint32_t g = 0; g < count; ++g) {
                    const R other = gathered[g];
                    less += other < key;
                    equal += other == key;
                    equal_before += other == key && g < threadIdx.x;
                }
                if (equal_before == 0 && less < rank && rank <= less + equal) chosen_prefix = key;
            }
            __syncthreads();
            return chosen_prefix;
        }
        __syncthreads();  // chosen_* are the next round's
    }
    return prefix;
}

template <typename K>
__global__ void __launch_bounds__(kSampleThreads) radix_select_init_kernel(const TopkArgs args, SelectState *states,
                                                                           unsigned long long *all_bins) {
    using R = SelectKey<K>;
    constexpr int kBins = RadixSelectPolicy::kBins;
    constexpr int kSamplesPerThread = kSampleKeys / kSampleThreads;
    __shared__ uint32_t sample_bins[kBins];
    __shared__ uint32_t warp_sums[33];
    allow_next_grid();  // pass 0 may launch (it waits for this grid to finish)
    for (uint64_t j = blockIdx.x; j < args.groups; j += gridDim.x) {
        const uint64_t s = segment_of(args, j);
        const uint64_t begin = args.bounds.offset(s);
        const uint64_t length = args.bounds.offset(s + 1) - begin;
        const uint64_t wanted = args.k < length ? args.k : length;
        unsigned long long *bins = all_bins + j * kBins;
        for (int b = threadIdx.x; b < kBins; b += kSampleThreads) bins[b] = 0;
        const uint32_t samples = uint32_t(length < kSampleKeys ? length : kSampleKeys);
        const K *in = static_cast<const K *>(args.keys_in) + begin;
        // Every sample load of a thread issued before any is used. The
        // sample is kSampleRuns runs of kSampleRun consecutive keys (a
        // 32-byte sector of 4-byte keys: 8 lanes a sector, a warp load 4
        // sectors where evenly spaced keys took 32), run r starting at
        // r * length / kSampleRuns rounded down to a multiple of kSampleRun
        // (the runs are at least kSampleRun apart and end before length,
        // since length >= kSampleKeys; the product stays below 2^64 for any
        // segment a device holds).
        K raw[kSamplesPerThread] = {};
#pragma unroll
        for (int u = 0; u < kSamplesPerThread; ++u) {
            const uint32_t i = u * kSampleThreads + threadIdx.x;
            const uint64_t run_start =
                (uint64_t(i / kSampleRun) * length) / kSampleRuns / kSampleRun * kSampleRun;
            if (i < samples) raw[u] = in[samples == kSampleKeys ? run_start + i % kSampleRun : i];
        }
        R sampled[kSamplesPerThread];
#pragma unroll
        for (int u = 0; u < kSamplesPerThread; ++u) sampled[u] = select_key<K>(args, raw[u]);
        // The rank r in the sample (at most `samples`: else no threshold).
        const uint64_t rank = sample_threshold_rank(wanted, samples, length);
        const bool bounded = wanted > 0 && rank <= samples;
        const R threshold =
            bounded ? sample_rank_key<R, kSamplesPerThread>(sampled, samples, uint32_t(rank), sample_bins, warp_sums)
                    : ~R(0);
        if (threadIdx.x == 0) {
            SelectState state{};
            state.remaining = wanted;
            state.matching = length;
            state.phase = wanted == 0 ? kFinished : kSelecting;
            state.members = ~0u;
            const uint64_t expected = bounded ? rank * length / samples : length;
            state.first_threshold = threshold;
            state.first_writes = bounded && expected <= candidate_capacity(length) / 2;
            states[j] = state;
        }
        __syncthreads();
    }
}

// Shared memory of the sort of `slots` chosen pairs: the keys, then the
// positions from the next 16-byte boundary (8-byte positions after an odd
// number of 4-byte keys would be misaligned).
template <typename R, typename I>
__host__ __device__ constexpr size_t chosen_positions_offset(uint32_t slots) {
    return (size_t(slots) * sizeof(R) + 15) / 16 * 16;
}

// Chosen counts past kChosenRegisterMin up to one item a thread more than
// the block's threads, with 32-bit positions, are sorted in registers
// (block/block_bitonic_sort.cuh: 10 block barriers for 1,024 where the
// shared-memory network takes 55).
constexpr int kChosenRegisterItems = 2;
constexpr uint32_t kChosenRegisterMin = 64;
using ChosenRegisterSort32 = BlockBitonicSort<SortKeyIndex<uint32_t>, kChosenRegisterItems>;
using ChosenRegisterSort64 = BlockBitonicSort<SortKeyIndex<uint64_t>, kChosenRegisterItems>;
template <typename R>
using ChosenRegisterSort = std::conditional_t<sizeof(R) == 8, ChosenRegisterSort64, ChosenRegisterSort32>;
template <typename R, typename I>
__host__ __device__ constexpr bool chosen_in_registers(uint32_t slots) {
    return sizeof(I) == 4 && slots > kChosenRegisterMin &&
           slots <= uint32_t(RadixSelectPolicy::kThreads) * kChosenRegisterItems;
}

template <typename R, typename I>
__host__ __device__ constexpr size_t chosen_sort_bytes(uint32_t slots) {
    if (chosen_in_registers<R, I>(slots))
        return 2 * size_t(ChosenRegisterSort<R>::buffer_items(RadixSelectPolicy::kThreads * kChosenRegisterItems)) *
               sizeof(SortKeyIndex<R>);
    return chosen_positions_offset<R, I>(slots) + size_t(slots) * sizeof(I);
}

// Sorts and writes segment s's `wanted` chosen in registers
// (chosen_in_registers): a block of RadixSelectPolicy::kThreads threads.
template <typename K>
__device__ __forceinline__ void sort_chosen_in_registers(const TopkArgs &args, const SelectKey<K> *keys,
                                                         const uint32_t *positions, uint64_t s, uint32_t wanted,
                                                         unsigned char *shared) {
    using R = SelectKey<K>;
    using Sort = ChosenRegisterSort<R>;
    using Item = SortKeyIndex<R>;
    Item items[kChosenRegisterItems];
#pragma unroll
    for (int e = 0; e < kChosenRegisterItems; ++e) {
        const uint32_t i = threadIdx.x * kChosenRegisterItems + e;
        // Past the chosen: the largest item (a position no segment of
        // 32-bit positions reaches).
        items[e] = i < wanted ? sort_make_item(__ldcg(keys + i), __ldcg(positions + i)) : sort_make_item(~R(0), ~0u);
    }
    Sort::sort(items, reinterpret_cast<Item *>(shared));
#pragma unroll
    for (int e = 0; e < kChosenRegisterItems; ++e) {
        const uint32_t r = threadIdx.x * kChosenRegisterItems + e;
        if (r < wanted) write_result<K>(args, s, r, sort_item_key(items[e]), sort_item_index(items[e]));
    }
    __syncthreads();  // shared memory is the next segment's
}

// Long segment j's chosen pairs (at most kBlockSortMax), sorted by one block
// in `shared` (chosen_sort_bytes of the padded count) and written out.
template <typename K, typename I>
__device__ __forceinline__ void sort_chosen_of(const TopkArgs &args, const SelectBuffers<SelectKey<K>, I> &buffers,
                                               uint64_t j, unsigned char *shared) {
    using R = SelectKey<K>;
    const uint64_t s = segment_of(args, j);
    const uint64_t length = args.bounds.offset(s + 1) - args.bounds.offset(s);
    const uint32_t wanted = uint32_t(args.k < length ? args.k : length);
    const uint32_t padded = next_power_of_two(wanted);
    if constexpr (sizeof(I) == 4) {
        if (chosen_in_registers<R, I>(padded))
            return sort_chosen_in_registers<K>(args, buffers.result_keys + j * buffers.result_stride,
                                               buffers.result_positions + j * buffers.result_stride, s, wanted,
                                               shared);
    }
    R *keys = reinterpret_cast<R *>(shared);
    I *positions = reinterpret_cast<I *>(shared + chosen_positions_offset<R, I>(padded));
    for (uint32_t i = threadIdx.x; i < padded; i += blockDim.x) {
        keys[i] = i < wanted ? __ldcg(&buffers.result_keys[j * buffers.result_stride + i]) : ~R(0);
        positions[i] = i < wanted ? __ldcg(&buffers.result_positions[j * buffers.result_stride + i]) : ~I(0);
    }
    __syncthreads();
    block_sort_pairs(keys, positions, padded);
    for (uint32_t r = threadIdx.x; r < wanted; r += blockDim.x) write_result<K>(args, s, r, keys[r], positions[r]);
    __syncthreads();  // shared memory is the next segment's
}

// The chosen pairs of each long segment, sorted one block a segment.
template <typename K, typename I>
__global__ void __launch_bounds__(RadixSelectPolicy::kThreads)
    sort_chosen_kernel(const TopkArgs args, const SelectBuffers<SelectKey<K>, I> buffers) {
    extern __shared__ __align__(16) unsigned char shared_bytes[];
    wait_for_previous_grid();  // launched as a programmatic dependent of the last pass
    for (uint64_t j = blockIdx.x; j < args.groups; j += gridDim.x) sort_chosen_of<K, I>(args, buffers, j, shared_bytes);
}

// The chosen pairs after the flat sorts (k past kBlockSortMax), written out.
template <typename K, typename I>
__global__ void __launch_bounds__(256) write_chosen_kernel(const TopkArgs args, const SelectKey<K> *keys,
                                                           const I *positions, uint64_t j, uint64_t count) {
    const uint64_t s = segment_of(args, j);
    const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
    for (uint64_t r = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < count; r += stride)
        write_result<K>(args, s, r, keys[r], positions[r]);
}

}  // namespace gpuprim::cuda::selection
