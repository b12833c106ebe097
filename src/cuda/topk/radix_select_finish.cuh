// SPDX-License-Identifier: Apache-2.0
// The rest of a long-segment select after pass 0 (radix_select.cuh), in one
// cooperative launch instead of a launch a pass: up to 2^22 keys a call was
// mostly launches (nine of them, four finding the select already done).
//
// The blocks are split into one team a long segment (so at most one long
// segment a resident block: topk.cu keeps the per-pass launches past that),
// and each team runs its segment's passes on its own:
// - while more than kFinishMaxKeys keys are in play, the grid pass
//   (SelectPassAgent) on as many of the team's blocks as the keys have
//   tiles (state.members); its last block writes the next state and then
//   passes_done (a release), which the others wait for;
// - then the team's first block finishes alone (BlockFinish: the same
//   passes, counted in shared memory, a block barrier between them instead
//   of a launch) and the others end.
// Then the first block sorts the segment's chosen (sort_chosen_of). The
// cooperative launch only guarantees that every block is resident, so
// that waiting for another cannot hang.
//
// Between passes a block's L1 may hold what another block has since
// rewritten (states, candidate buffers): those are read with __ldcg.
#pragma once

#include "cuda/topk/radix_select.cuh"

namespace gpuprim::cuda::selection {

// One block finishes long segment j's select from the state the last pass
// left, when at most kFinishMaxKeys keys are in play. Each pass sweeps the
// keys in play (sweep: the pass's source at first, then the ones kept in
// shared memory once they fit it), writing the keys that fell
// below the chosen prefix as results and counting the digit of those still
// matching it; choose_bin then extends the prefix as the grid pass's last
// block does. The collecting pass writes the chosen bin's keys too.
template <typename K, typename I>
struct BlockFinish {
    using R = SelectKey<K>;
    static constexpr int kThreads = RadixSelectPolicy::kThreads;
    static constexpr int kBins = RadixSelectPolicy::kBins;
    static constexpr int kReplicas = RadixSelectPolicy::kReplicas;
    static constexpr int kBinsPerThread = kBins / kThreads;
    // Loads a thread has in flight a sweep (8 made the kernel spill).
    static constexpr int kSweepItems = 4;
    // Pairs the kept memory holds (a multiple of 4, so that the positions
    // after the keys stay aligned). A sweep over the kept keys compacts them
    // in place (sweep), so one area serves: 8,192 pairs of 4-byte keys and
    // positions, which keeps 2^22 keys' k = 1024 bin (about 4,700 keys) where
    // two halves of 4,096 sent the next pass back to the candidate buffer.
    static constexpr uint32_t kKeptSlots =
        uint32_t(RadixSelectPolicy::kFinishKeptBytes / int(sizeof(R) + sizeof(I))) & ~3u;

    struct Shared {
        uint32_t *bins;       // kBins * kReplicas
        uint32_t *warp_sums;  // 33
        unsigned char *kept;  // kFinishKeptBytes: kKeptSlots pairs
        uint32_t &kept_count;  // pairs kept by the sweep running
        // Results written to the segment: at most kBlockSortMax, and 32 bits
        // wide because a 64-bit shared atomicAdd is a compare-and-swap loop
        // (826 of them at 2^22, k = 1024, in the forty-ninth run).
        uint32_t &results;
        uint32_t &chosen_bin, &chosen_below, &chosen_count;
    };

    const Shared sh;
    const TopkArgs &args;
    const SelectBuffers<R, I> &buffers;
    SelectState &state;
    const SelectDigits digits;
    const uint64_t j;
    const K *const in;
    const bool from_input;
    const uint32_t reading;  // the candidate buffer read, when not the input
    const uint64_t capacity_at;
    const uint32_t replica;

    // The pass (the index of its digit: the launch's pass less the
    // segment's digit_lag), the prefix chosen so far and the one before the
    // last choice.
    uint32_t pass;
    R key_prefix, key_mask, previous_key_mask;
    I index_prefix, index_mask, previous_index_mask;
    uint32_t remaining;  // keys matching the prefix still wanted (at most kBlockSortMax)
    uint32_t matching;   // at most this many keys match the prefix
    bool collecting;
    // Where the pass reads (count keys): the source, or the kept keys.
    bool from_kept;
    uint32_t count;
    // Results written before the finish (the view's: loading the state's
    // again would be one more round trip to the L2 before the first sweep).
    const uint32_t first_results;

    __device__ __forceinline__ BlockFinish(const Shared &shared, const TopkArgs &a, const SelectBuffers<R, I> &b,
                                           const SelectState &view, SelectDigits select_digits, uint32_t first_pass,
                                           uint64_t segment, uint64_t begin, uint64_t length)
        : sh(shared),
          args(a),
          buffers(b),
          state(b.states[segment]),
          digits(select_digits),
          j(segment),
          in(static_cast<const K *>(a.keys_in) + begin),
          from_input(view.source == 0),
          reading(view.source == 0 ? 0 : view.source - 1),
          capacity_at(candidate_first(begin)),
          replica(threadIdx.x % kReplicas),
          pass(first_pass),
          key_prefix(R(view.key_prefix)),
          key_mask(R(view.key_mask)),
          previous_key_mask(R(view.previous_key_mask)),
          index_prefix(I(view.index_prefix)),
          index_mask(I(view.index_mask)),
          previous_index_mask(I(view.previous_index_mask)),
          remaining(uint32_t(view.remaining)),
          matching(uint32_t(view.matching < kKeptSlots + 1 ? view.matching : kKeptSlots + 1)),
          collecting(view.phase == kCollecting),
          from_kept(false),
          count(uint32_t(view.source == 0 ? length : view.source_count)),
          first_results(uint32_t(view.results)) {}

    __device__ __forceinline__ R *kept_keys() const { return reinterpret_cast<R *>(sh.kept); }
    __device__ __forceinline__ I *kept_positions() const {
        return reinterpret_cast<I *>(sh.kept + kKeptSlots * sizeof(R));
    }

    // Runs the passes to the end and marks the segment finished.
    __device__ __forceinline__ void run() {
        if (threadIdx.x == 0) sh.results = first_results;
        while (true) {
            // Pass `passes` only collects (the position's last digit left
            // one key a bin); a guard against a loop without end.
            if (pass >= digits.passes) collecting = true;
            const PassDigit digit = digits.digit(pass);
            // Keep the keys still in play when they surely fit.
            const bool keep = !collecting && (matching <= kKeptSlots || count <= kKeptSlots);
            sweep(digit, keep);
            if (collecting) break;
            choose_bin(digit);
            if (keep) {
                from_kept = true;
                count = sh.kept_count;
            }
            ++pass;
            __syncthreads();  // kept_count and the chosen bin are read
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            state.results = sh.results;
            state.phase = kFinished;
        }
    }

    // Pass `pass` over the keys in play: results written, the digit of the
    // ones matching the prefix counted, and those kept (keep) in the kept
    // memory. A sweep over the kept keys writes them back in place: a key's
    // slot is below the number of keys kept so far, which is at most the
    // number read so far, and a block barrier after each round's loads puts
    // every read of those before any write.
    __device__ __forceinline__ void sweep(PassDigit digit, bool keep) {
        const uint32_t digit_mask = (1u << digit.width) - 1;
        for (int b = threadIdx.x; b < kBins * kReplicas; b += kThreads) sh.bins[b] = 0;
        if (threadIdx.x == 0) sh.kept_count = 0;
        __syncthreads();
        R *const next_keys = kept_keys();
        I *const next_positions = kept_positions();
        // kSweepItems loads a thread in flight (from the L2 each is a round
        // trip of about a microsecond), then their marks.
        for (uint32_t first = 0; first < count; first += kThreads * kSweepItems) {  // uniform: whole warps
            R keys[kSweepItems];
            I positions[kSweepItems];
#pragma unroll
            for (int e = 0; e < kSweepItems; ++e) {
                const uint32_t i = first + e * kThreads + threadIdx.x;
                keys[e] = 0;
                positions[e] = 0;
                if (i < count) load(i, keys[e], positions[e]);
            }
            if (from_kept && keep) __syncthreads();  // uniform: in place, reads before writes
#pragma unroll
            for (int e = 0; e < kSweepItems; ++e) {
                const R key = keys[e];
                const I position = positions[e];
                bool is_result = false, in_play = false;
                if (first + e * kThreads + threadIdx.x < count) {
                    const bool matched_before =
                        (key & previous_key_mask) == (key_prefix & previous_key_mask) &&
                        (position & previous_index_mask) == (index_prefix & previous_index_mask);
                    const R masked_key = key & key_mask;
                    const I masked_position = position & index_mask;
                    const bool equal = masked_key == key_prefix && masked_position == index_prefix;
                    const bool below =
                        masked_key < key_prefix || (masked_key == key_prefix && masked_position < index_prefix);
                    is_result = matched_before && (below || (equal && collecting));
                    in_play = matched_before && equal && !collecting;
                }
                if (in_play) {
                    const uint64_t field = digit.in_index ? uint64_t(position) : uint64_t(key);
                    atomicAdd(&sh.bins[(uint32_t(field >> digit.shift) & digit_mask) * kReplicas + replica], 1u);
                }
                // A warp's slots from one shared atomic.
                const uint32_t results = __ballot_sync(0xffffffffu, is_result);
                if (results) {
                    const uint32_t rank = warp_append_slot(results, sh.results);
                    if (is_result && rank < buffers.result_stride) {  // never into the next segment's slots
                        buffers.result_keys[j * buffers.result_stride + rank] = key;
                        buffers.result_positions[j * buffers.result_stride + rank] = position;
                    }
                }
                const uint32_t kept = keep ? __ballot_sync(0xffffffffu, in_play) : 0u;
                if (kept) {
                    const uint32_t slot = warp_append_slot(kept, sh.kept_count);
                    if (in_play && slot < kKeptSlots) {  // matching bounds it; a guard
                        next_keys[slot] = key;
                        next_positions[slot] = position;
                    }
                }
            }
        }
        __syncthreads();
    }

    // Key i in play: from the kept memory, the input or the candidate buffer.
    __device__ __forceinline__ void load(uint32_t i, R &key, I &position) const {
        if (from_kept) {
            key = kept_keys()[i];
            position = kept_positions()[i];
        } else if (from_input) {
            key = select_key<K>(args, in[i]);
            position = I(i);
        } else {
            key = __ldcg(&buffers.candidate_keys[reading][capacity_at + i]);
            position = __ldcg(&buffers.candidate_positions[reading][capacity_at + i]);
        }
    }

    // The bin holding rank `remaining`: the prefix extended by it.
    __device__ __forceinline__ void choose_bin(PassDigit digit) {
        uint32_t counts[kBinsPerThread];
#pragma unroll
        for (int b = 0; b < kBinsPerThread; ++b) {
            uint32_t c = 0;
#pragma unroll
            for (int r = 0; r < kReplicas; ++r) c += sh.bins[(threadIdx.x * kBinsPerThread + b) * kReplicas + r];
            counts[b] = c;
        }
        choose_rank_bin(counts, remaining, sh.warp_sums, sh.chosen_bin, sh.chosen_below, sh.chosen_count);
        previous_key_mask = key_mask;
        previous_index_mask = index_mask;
        extend_prefix(digit, sh.chosen_bin, key_prefix, key_mask, index_prefix, index_mask);
        remaining -= sh.chosen_below;
        matching = sh.chosen_count;
        collecting = matching == remaining;
    }
};

// Everything after pass 0, every long segment (at most one a block), then
// the sort of the chosen. Dynamic shared memory: finish_shared_bytes.
template <typename K, typename I>
__global__ void __launch_bounds__(RadixSelectPolicy::kThreads, RadixSelectPolicy::kBlocksPerSm)
    radix_select_finish_kernel(const TopkArgs args, const SelectBuffers<SelectKey<K>, I> buffers,
                               const SelectDigits digits) {
    using Agent = SelectPassAgent<K, I>;
    using Finish = BlockFinish<K, I>;
    __shared__ uint32_t bins[Agent::kBins * Agent::kReplicas];
    __shared__ SelectState view;
    __shared__ uint32_t warp_sums[33];
    __shared__ uint32_t warp_bases[Agent::kThreads / 32][2];
    __shared__ uint32_t tile_counts[2];
    __shared__ unsigned long long result_base, candidate_base;
    __shared__ uint32_t last_block;
    __shared__ uint32_t chosen_bin;
    __shared__ unsigned long long chosen_below, chosen_count;
    __shared__ uint32_t staged;
    __shared__ uint32_t finish_chosen_below, finish_chosen_count, kept_count;
    __shared__ uint32_t finish_results;
    extern __shared__ __align__(16) unsigned char dynamic_shared[];
    // Pass 0's stage is not used after it (first_writes is false from pass
    // 1): both its names point at the start of the dynamic memory.
    auto &staged_keys = *reinterpret_cast<SelectKey<K>(*)[Agent::kStageSlots]>(dynamic_shared);
    auto &staged_positions = *reinterpret_cast<I(*)[Agent::kStageSlots]>(dynamic_shared);
    const typename Agent::Shared shared{bins,         view,         warp_sums,   warp_bases,     tile_counts,
                                        result_base,  candidate_base, last_block, chosen_bin,   chosen_below,
                                        chosen_count, staged_keys,  staged_positions, staged};
    const typename Finish::Shared finish_shared{bins,          warp_sums,  dynamic_shared,      kept_count,
                                                finish_results, chosen_bin, finish_chosen_below, finish_chosen_count};

    // Launched as a programmatic dependent of pass 0 (on sm_90): wait for it
    // to finish and its writes to show before reading any state.
    wait_for_previous_grid();
    // Teams: block b works on segment b % groups, as member b / groups. At
    // most one segment a block (topk.cu), so 32 bits hold it all (the 64-bit
    // division was a fifth of every block's prologue).
    const uint32_t groups = uint32_t(args.groups);
    const uint32_t team = gridDim.x / groups;
    const uint32_t j = blockIdx.x % groups;
    const uint32_t rank = blockIdx.x / groups;
    if (rank >= team) return;
    const uint64_t s = segment_of(args, j);
    const uint64_t begin = args.bounds.offset(s);
    const uint64_t length = args.bounds.offset(s + 1) - begin;
    SelectState &state = buffers.states[j];
    // Up to passes + 1: a segment whose sample misled counts its first digit
    // twice (SelectState::digit_lag); the others are finished by then.
    for (uint32_t pass = 1; pass <= digits.passes + 1; ++pass) {
        // The view, then the pass's members from it (one load from the L2
        // where reading members first took two, ~0.7 us each, in series).
        // A member reads the state safely: the pass's last block changes it
        // only after every member took part. A block left out may read a
        // state changing under it, but uses only its members word, which
        // never grows: an old or a new value leaves it out alike.
        const bool unfinished = Agent::read_view(shared, state);
        const uint32_t members = view.members < team ? view.members : team;
        if (rank >= members) return;
        if (!unfinished) break;
        const uint64_t size = view.source == 0 ? length : view.source_count;
        if (size <= RadixSelectPolicy::kFinishMaxKeys) {
            // One block finishes (members is 1 by now).
            if (rank == 0)
                Finish(finish_shared, args, buffers, view, digits, pass - view.digit_lag, j, begin, length).run();
            break;
        }
        Agent(shared, args, buffers, pass, digit_of_pass(digits, pass, view.digit_lag), j, begin, length, rank,
              members)
            .run();
        // Wait for the pass's last block to write the next state.
        if (threadIdx.x == 0)
            while (load_acquire(&state.passes_done) <= pass) __nanosleep(64);
        __syncthreads();
    }
    if (rank == 0) sort_chosen_of<K, I>(args, buffers, j, dynamic_shared);
}

// Dynamic shared memory of the finishing kernel when each segment sorts up
// to `slots` chosen (a power of two).
template <typename K, typename I>
__host__ __device__ constexpr size_t finish_shared_bytes(uint32_t slots) {
    using R = SelectKey<K>;
    const size_t kept = size_t(RadixSelectPolicy::kFinishKeptBytes);
    const size_t stage = size_t(RadixSelectPolicy::kStageBytes);
    const size_t sort = chosen_sort_bytes<R, I>(slots);
    const size_t most = kept > stage ? kept : stage;
    return most > sort ? most : sort;
}

}  // namespace gpuprim::cuda::selection
