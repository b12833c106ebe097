// SPDX-License-Identifier: Apache-2.0
// Tile tickets and status clearing of the single-pass scans (scan/agent_scan.cuh,
// scan/narrow_scan.cuh); their look-back is engine/tile_lookback.cuh.
//
// Tiles take tickets in launch order from a counter in env.zeroed_counters.
// Status slots live in the workspace, which other algorithms also write, so
// stale words cannot be told from fresh ones by content. Instead the kernel
// clears the slots itself, ahead of use: the tile with ticket c*K clears the
// slots of tiles [(c+2)K, (c+3)K) (ticket 0 also the first 2K) and then moves
// a "cleared" watermark forward, in chunk order. A tile waits until the
// watermark has passed it before it publishes or reads any slot; the
// watermark rides in the high half of the 64-bit ticket word, so the ticket
// fetch already brings it and the wait almost never spins. No memset, no
// second launch, and nothing depends on what the workspace held before.
//
// When every counter use is over, the counter words go back to zero, as
// env.zeroed_counters requires: with one tile per block the last tile waits
// for a done count of all others; persistent blocks take tickets until they
// run past the last tile, and the last block to leave resets them.
#pragma once

#include "cuda/engine/tile_lookback.cuh"
#include "cuda/util/tile_status.cuh"

#include <cstdint>

namespace gpuprim::cuda {

// Words of env.zeroed_counters the scan uses.
struct ScanCounters {
    // Low 32 bits: next ticket. High 32 bits: slots [0, watermark) cleared.
    unsigned long long *ticket_word;
    unsigned int *done_word;  // tiles (one tile per block) or blocks (persistent) finished

    // `count` consecutive tickets; the first is the low half of the result.
    __device__ __forceinline__ unsigned long long take_tickets(uint32_t count) const {
        unsigned long long old;
        asm volatile("atom.acq_rel.gpu.global.add.u64 %0, [%1], %2;"
                     : "=l"(old)
                     : "l"(ticket_word), "l"(static_cast<unsigned long long>(count))
                     : "memory");
        return old;
    }

    __device__ __forceinline__ uint32_t cleared_acquire() const {
        unsigned long long word;
        asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(word) : "l"(ticket_word) : "memory");
        return static_cast<uint32_t>(word >> 32);
    }
    __device__ __forceinline__ void advance_cleared(uint32_t by) const {
        asm volatile("red.release.gpu.global.add.u64 [%0], %1;" ::"l"(ticket_word),
                     "l"(static_cast<unsigned long long>(by) << 32)
                     : "memory");
    }

    // One thread; `known` is the watermark the ticket fetch returned.
    __device__ __forceinline__ void wait_cleared_past(uint32_t tile, uint32_t known) const {
        if (known > tile) return;  // the ticket's acquire already ordered us after the clears
        while (cleared_acquire() <= tile) __nanosleep(64);
    }

    // One thread per block, after the block's last use of the counters (its
    // last ticket, taken past the end, and any watermark update, both ordered
    // before this by the caller's __syncthreads + __threadfence). The last
    // block to leave puts the words back to zero. No deadlock: blocks only
    // ever wait on tiles, never on other blocks leaving.
    __device__ __forceinline__ void finish_block(uint32_t blocks) const {
        unsigned int left;
        asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;"
                     : "=r"(left)
                     : "l"(done_word)
                     : "memory");
        if (left != blocks - 1) return;
        *reinterpret_cast<volatile unsigned long long *>(ticket_word) = 0;
        *reinterpret_cast<volatile unsigned int *>(done_word) = 0;
    }

    // One-tile-per-block kernels: one thread, after the block's last use of
    // the counters. Every tile but the last counts itself done without
    // waiting for a reply (a returning atomic here would hold the block, and
    // its shared memory, for one more round trip); the last tile waits until
    // all others are counted, then puts the words back to zero. No deadlock: the last ticket is taken, so
    // every block is running, and no tile ever waits on the last one.
    // `advanced_cleared`: this block moved the cleared watermark, a
    // fire-and-forget update of the ticket word that must land first.
    __device__ __forceinline__ void finish_tile(uint32_t tile, uint32_t num_tiles,
                                                bool advanced_cleared) const {
        if (tile != num_tiles - 1) {
            if (advanced_cleared)
                asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(done_word) : "memory");
            else
                asm volatile("red.relaxed.gpu.global.add.u32 [%0], 1;" ::"l"(done_word) : "memory");
            return;
        }
        for (;;) {
            unsigned int done;
            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(done) : "l"(done_word) : "memory");
            if (done == num_tiles - 1) break;
            __nanosleep(128);
        }
        __threadfence();  // after this block's own watermark update, if any
        *reinterpret_cast<volatile unsigned long long *>(ticket_word) = 0;
        *reinterpret_cast<volatile unsigned int *>(done_word) = 0;
    }
};

// Called by one whole warp of the tile whose ticket is a multiple of chunk
// (a multiple of kLookbackGroupTiles, so a group's slot is cleared with its
// tiles). kGroupSlots: the slots of the grouped look-back's groups follow the
// tile slots.
template <bool kGroupSlots, typename Status>
__device__ __forceinline__ void clear_status_ahead(const Status &status, const ScanCounters &counters,
                                                   uint32_t tile, uint32_t num_tiles, uint32_t chunk,
                                                   int lane) {
    const uint64_t c = tile / chunk;
    const uint64_t begin = tile == 0 ? 0 : (c + 2) * chunk;
    const uint64_t end = (c + 3) * chunk;
    const uint64_t stop = end < num_tiles ? end : num_tiles;
    for (uint64_t s = begin + lane; s < stop; s += kWarpLanes) status.clear(s);
    if constexpr (kGroupSlots) {
        const uint64_t group_stop = (stop + kLookbackGroupTiles - 1) / kLookbackGroupTiles;
        for (uint64_t g = begin / kLookbackGroupTiles + lane; g < group_stop; g += kWarpLanes)
            status.clear(num_tiles + g);
    }
    __threadfence();  // the clears are visible before the watermark announces them
    __syncwarp();
    if (lane == 0) {
        // Watermark moves in chunk order, so it only ever covers cleared slots.
        const uint32_t expected = static_cast<uint32_t>(begin);
        while (counters.cleared_acquire() != expected) __nanosleep(64);
        counters.advance_cleared(static_cast<uint32_t>(end - begin));
    }
    __syncwarp();
}

}  // namespace gpuprim::cuda
