// SPDX-License-Identifier: Apache-2.0
// Block-level scan of one tile, held in registers or staged in shared memory.
//
// Arrangement ("warp-striped vectors"): each warp owns a contiguous segment
// of 32 * kItems elements; lane l holds the 16-byte vectors l, l+32, l+64, ...
// of that segment. Loads and stores are then fully coalesced 16-byte accesses
// and every thread only touches its own vectors, so no transpose and no
// barrier is needed between loading and scanning; the price is one warp scan
// per vector instead of one per thread, which is cheap next to the memory
// time.
//
// Within a tile the association of every combination is fixed by this code,
// so float sums come out the same on every run.
#pragma once

#include "cuda/util/ptx.cuh"
#include "cuda/warp/warp_scan.cuh"

#include <cstdint>

namespace gpuprim::cuda {

// A 16-byte vector as kVec elements and back, in registers.
template <typename T>
__device__ __forceinline__ void unpack_vector(uint4 v, T *x) {
    if constexpr (sizeof(T) == 4) {
        x[0] = bit_cast<T>(v.x);
        x[1] = bit_cast<T>(v.y);
        x[2] = bit_cast<T>(v.z);
        x[3] = bit_cast<T>(v.w);
    } else {
        x[0] = bit_cast<T>((static_cast<unsigned long long>(v.y) << 32) | v.x);
        x[1] = bit_cast<T>((static_cast<unsigned long long>(v.w) << 32) | v.z);
    }
}
template <typename T>
__device__ __forceinline__ uint4 pack_vector(const T *x) {
    if constexpr (sizeof(T) == 4) {
        return make_uint4(bit_cast<uint32_t>(x[0]), bit_cast<uint32_t>(x[1]),
                          bit_cast<uint32_t>(x[2]), bit_cast<uint32_t>(x[3]));
    } else {
        const unsigned long long a = bit_cast<unsigned long long>(x[0]);
        const unsigned long long b = bit_cast<unsigned long long>(x[1]);
        return make_uint4(static_cast<uint32_t>(a), static_cast<uint32_t>(a >> 32),
                          static_cast<uint32_t>(b), static_cast<uint32_t>(b >> 32));
    }
}

template <typename T, typename Op, int kThreads, int kVectors>
struct BlockVectorScan {
    static constexpr int kVec = 16 / int(sizeof(T));  // elements per 16-byte vector
    static constexpr int kItems = kVec * kVectors;     // elements per thread
    static constexpr int kWarps = kThreads / kWarpLanes;
    static constexpr int kWarpItems = kWarpLanes * kItems;
    static constexpr int kTileItems = kThreads * kItems;
    static_assert(kThreads % kWarpLanes == 0, "whole warps only");
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "4- or 8-byte elements");

    using Traits = ScanOpTraits<T, Op>;
    using Items = T[kVectors][kVec];

    struct TempStorage {
        T warp_totals[kWarps];
    };

    // Offset within the tile of the first element of this lane's vector k.
    __device__ __forceinline__ static uint32_t vector_offset(int warp, int lane, int k) {
        return uint32_t(warp) * kWarpItems + uint32_t(k * kWarpLanes + lane) * kVec;
    }

    // ---- loads -----------------------------------------------------------
    // A full tile whose first element is 16-byte aligned.
    template <CacheHint H>
    __device__ __forceinline__ static void load_full(const T *tile_in, Items &x, int warp, int lane) {
#pragma unroll
        for (int k = 0; k < kVectors; ++k) {
            unpack_vector(load_vector<H>(tile_in + vector_offset(warp, lane, k)), &x[k][0]);
        }
    }

    // Any tile: element i of the input sits at tile offset i - tile_first;
    // positions outside [0, count) read as the operator's neutral element.
    __device__ __forceinline__ static void load_partial(const T *in, int64_t tile_first,
                                                        uint64_t count, Items &x, int warp,
                                                        int lane) {
#pragma unroll
        for (int k = 0; k < kVectors; ++k) {
#pragma unroll
            for (int j = 0; j < kVec; ++j) {
                const int64_t i = tile_first + vector_offset(warp, lane, k) + j;
                x[k][j] = (i >= 0 && uint64_t(i) < count) ? in[i] : Traits::neutral();
            }
        }
    }

    // ---- the scan ----------------------------------------------------------
    // In: the tile's values. Out: x[k][j] is the inclusive scan within vector
    // k; lane_prefix[k] combines everything in the warp's segment before that
    // vector. Returns the warp segment's total (same in every lane).
    __device__ __forceinline__ static T scan_warp_segment(Items &x, T (&lane_prefix)[kVectors],
                                                          int lane) {
        const Op op;
#pragma unroll
        for (int k = 0; k < kVectors; ++k) {
#pragma unroll
            for (int j = 1; j < kVec; ++j) x[k][j] = op(x[k][j - 1], x[k][j]);
        }
        T scanned[kVectors];
#pragma unroll
        for (int k = 0; k < kVectors; ++k) scanned[k] = x[k][kVec - 1];
        warp_inclusive_scan(scanned, op, lane);
        return vector_prefixes(scanned, lane_prefix, lane);
    }

    // scanned[k]: the warp's inclusive scan of its vector-k totals. Out:
    // lane_prefix[k], everything in the warp's segment before this lane's
    // vector k; returns the segment total.
    __device__ __forceinline__ static T vector_prefixes(const T (&scanned)[kVectors],
                                                        T (&lane_prefix)[kVectors], int lane) {
        const Op op;
        T carry = Traits::neutral();
#pragma unroll
        for (int k = 0; k < kVectors; ++k) {
            T before = __shfl_up_sync(kWarpLaneMask, scanned[k], 1);
            if (lane == 0) before = Traits::neutral();
            const T total = __shfl_sync(kWarpLaneMask, scanned[k], kWarpLanes - 1);
            lane_prefix[k] = op(carry, before);
            carry = op(carry, total);
        }
        return carry;
    }

    // After the warp totals are in temp and the block has synchronized:
    // the fold of the totals of the warps before this one.
    __device__ __forceinline__ static T warp_prefix(const TempStorage &temp, int warp) {
        const Op op;
        T acc = Traits::neutral();
#pragma unroll
        for (int w = 0; w < kWarps - 1; ++w)
            if (w < warp) acc = op(acc, temp.warp_totals[w]);
        return acc;
    }

    __device__ __forceinline__ static T tile_total(const TempStorage &temp) {
        const Op op;
        T acc = temp.warp_totals[0];
#pragma unroll
        for (int w = 1; w < kWarps; ++w) acc = op(acc, temp.warp_totals[w]);
        return acc;
    }

    // Turns the scanned x into the output values given the prefix of
    // everything before this warp's segment.
    __device__ __forceinline__ static void finish(Items &x, const T (&lane_prefix)[kVectors],
                                                  T segment_prefix, bool exclusive) {
        const Op op;
#pragma unroll
        for (int k = 0; k < kVectors; ++k) {
            const T base = op(segment_prefix, lane_prefix[k]);
            if (exclusive) {
#pragma unroll
                for (int j = kVec - 1; j > 0; --j) x[k][j] = op(base, x[k][j - 1]);
                x[k][0] = base;
            } else {
#pragma unroll
                for (int j = 0; j < kVec; ++j) x[k][j] = op(base, x[k][j]);
            }
        }
    }

    // ---- staged tiles --------------------------------------------------------
    // The same scan with the tile parked in shared memory: loads land there
    // by cp.async without passing through registers, and the scan keeps one
    // vector in registers at a time, so a block needs few registers and many
    // tiles can wait for their prefixes on one SM. Each thread only ever
    // touches its own vectors of the staged tile, so no block barrier is
    // needed between loading and scanning. Same association as above.
    // Starts the copies of this thread's vectors (cp.async); they land by the
    // thread's next cp_async_wait that covers them.
    __device__ __forceinline__ static void stage_full_async(T *staged, const T *tile_in, int warp,
                                                            int lane) {
#pragma unroll
        for (int k = 0; k < kVectors; ++k) {
            const uint32_t offset = vector_offset(warp, lane, k);
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(shared_address(staged + offset)),
                         "l"(tile_in + offset)
                         : "memory");
        }
    }
    __device__ __forceinline__ static void stage_partial(T *staged, const T *in, int64_t tile_first,
                                                         uint64_t count, int warp, int lane) {
#pragma unroll
        for (int k = 0; k < kVectors; ++k) {
            T v[kVec];
#pragma unroll
            for (int j = 0; j < kVec; ++j) {
                const int64_t i = tile_first + vector_offset(warp, lane, k) + j;
                v[j] = (i >= 0 && uint64_t(i) < count) ? in[i] : Traits::neutral();
            }
            *reinterpret_cast<uint4 *>(staged + vector_offset(warp, lane, k)) = pack_vector(v);
        }
    }
    __device__ __forceinline__ static void read_staged(const T *staged, int warp, int lane, int k, T *v) {
        unpack_vector(*reinterpret_cast<const uint4 *>(staged + vector_offset(warp, lane, k)), v);
    }
    // The total of this warp's segment of a staged tile (same in every lane),
    // with the association scan_staged_segment uses, so it equals that
    // function's return value bit for bit.
    __device__ __forceinline__ static T reduce_staged_segment(const T *staged, int warp, int lane) {
        T scanned[kVectors];
        vector_totals(staged, scanned, warp, lane);
        T lane_prefix[kVectors];
        scan_vector_totals(scanned, lane);
        return vector_prefixes(scanned, lane_prefix, lane);
    }
    // As scan_warp_segment, reading the staged tile.
    __device__ __forceinline__ static T scan_staged_segment(const T *staged, T (&lane_prefix)[kVectors],
                                                            int warp, int lane) {
        T scanned[kVectors];
        vector_totals(staged, scanned, warp, lane);
        scan_vector_totals(scanned, lane);
        return vector_prefixes(scanned, lane_prefix, lane);
    }
    // scanned[k]: the total of this lane's staged vector k.
    __device__ __forceinline__ static void vector_totals(const T *staged, T (&scanned)[kVectors], int warp,
                                                         int lane) {
        const Op op;
#pragma unroll
        for (int k = 0; k < kVectors; ++k) {
            T v[kVec];
            read_staged(staged, warp, lane, k, v);
            T acc = v[0];
#pragma unroll
            for (int j = 1; j < kVec; ++j) acc = op(acc, v[j]);
            scanned[k] = acc;
        }
    }
    // Warp-wide inclusive scan of each vector total across the lanes.
    __device__ __forceinline__ static void scan_vector_totals(T (&scanned)[kVectors], int lane) {
        const Op op;
        // 8-byte values: scan up to four vectors at a time (a divisor of
        // kVectors) to stay within the register budget of many resident blocks.
        constexpr int kGroup = sizeof(T) == 4        ? kVectors
                               : kVectors % 4 == 0 ? 4
                               : kVectors % 3 == 0 ? 3
                               : kVectors % 2 == 0 ? 2
                                                   : 1;
#pragma unroll
        for (int g = 0; g < kVectors; g += kGroup) {
            T part[kGroup];
#pragma unroll
            for (int k = 0; k < kGroup; ++k) part[k] = scanned[g + k];
            warp_inclusive_scan(part, op, lane);
#pragma unroll
            for (int k = 0; k < kGroup; ++k) scanned[g + k] = part[k];
        }
    }
    // Vector k of the output, as finish() computes it.
    __device__ __forceinline__ static void finish_staged_vector(const T *staged, int warp, int lane, int k,
                                                                T base, bool exclusive, T *v) {
        const Op op;
        read_staged(staged, warp, lane, k, v);
#pragma unroll
        for (int j = 1; j < kVec; ++j) v[j] = op(v[j - 1], v[j]);
        if (exclusive) {
#pragma unroll
            for (int j = kVec - 1; j > 0; --j) v[j] = op(base, v[j - 1]);
            v[0] = base;
        } else {
#pragma unroll
            for (int j = 0; j < kVec; ++j) v[j] = op(base, v[j]);
        }
    }

    // ---- stores ------------------------------------------------------------
    template <CacheHint H>
    __device__ __forceinline__ static void store_full(T *tile_out, const Items &x, int warp,
                                                      int lane) {
#pragma unroll
        for (int k = 0; k < kVectors; ++k) {
            store_vector<H>(tile_out + vector_offset(warp, lane, k), pack_vector(&x[k][0]));
        }
    }

    // Element by element, skipping positions outside [0, count); also the
    // path for an output whose alignment differs from the input's.
    __device__ __forceinline__ static void store_partial(T *out, int64_t tile_first, uint64_t count,
                                                         const Items &x, int warp, int lane) {
#pragma unroll
        for (int k = 0; k < kVectors; ++k) {
#pragma unroll
            for (int j = 0; j < kVec; ++j) {
                const int64_t i = tile_first + vector_offset(warp, lane, k) + j;
                if (i >= 0 && uint64_t(i) < count) out[i] = x[k][j];
            }
        }
    }
};

}  // namespace gpuprim::cuda
