// SPDX-License-Identifier: Apache-2.0
// The sorting networks of short segments (segment_network.cu), shared by the
// segmented sort and top-k. Segments of up to kMaxNetwork keys sort in
// registers and shared memory: a bitonic network of N positions (N the
// segment's length rounded up to a power of two, at least kMinNetwork) per
// segment, N / 4 threads a segment, as many segments a block as fit
// (block/block_bitonic_sort.cuh, sort_groups). Items are radix keys (keys
// only, whole keys) or radix keys with their position in the segment, which
// makes them distinct (stable) and tells where values, generated indices,
// and, for a bit range, the keys themselves come from. Everything a segment
// needs is read before a barrier and written after it, so in-place calls are
// safe. With SegmentNetworkArgs::topk set, each segment stores only its
// first k ranks (top-k).
#pragma once

#include "core/backend.h"
#include "cuda/device_env.h"
#include "cuda/engine/segment_bounds.cuh"
#include "cuda/engine/segment_check.h"

#include <cstdint>

namespace gpuprim::cuda {

constexpr uint32_t kMinNetwork = 4;     // one thread a segment
constexpr uint32_t kMaxNetwork = 4096;  // 1024 threads

// Where each sorted element's value comes from: none, values_in, or its
// position in the segment (an argsort).
enum class SegmentValueSource : uint32_t { kNone, kCopy, kIndex };

// One launch of the networks (launch_network_sort): the segments, the keys
// and values, and the network size.
struct SegmentNetworkArgs {
    const void *keys_in;
    void *keys_out;  // NULL only in the segmented sort's composite unpack (an argsort without keys)
    const void *values_in;
    void *values_out;
    SegmentValueSource values;
    bool gather_keys;  // a bit range: the network holds only the range's bits
    KeyKind kind;
    bool descending;
    uint32_t begin_bit;
    uint32_t range_bits;  // end_bit - begin_bit
    SegmentBounds bounds;
    const void *list;  // the segment ids to sort (a length class), or nullptr (segment = group)
    bool list_wide;    // ids are 8 bytes
    uint64_t groups;   // segments this launch sorts (with group_count: at most)
    // nullptr, or the device count of the list's entries, written by an
    // earlier kernel of the call: the launch is sized by `groups`, a bound
    // known on the host, and the blocks past the count return at once.
    const unsigned long long *group_count;
    // The first group of this launch's block 0 (set by launch_network_sort: a
    // launch holds at most 2^31 - 1 blocks, so more groups take several).
    uint64_t group_base;
    uint32_t network;  // positions a segment
    // A deferred offsets check this launch does itself (offsets == nullptr:
    // none): the call's only kernel, on a small offsets array.
    InKernelCheck in_kernel;
    // Top-k (network_topk): segment s writes only its first min(k, length)
    // ranks, to [s * topk, ...) of keys_out (if given) and values_out; 0: a sort.
    uint64_t topk;
};

// The network for a segment of `length` keys: the next power of two, at
// least kMinNetwork.
inline uint32_t network_for(uint64_t length) {
    uint32_t network = kMinNetwork;
    while (network < length) network <<= 1;
    return network;
}

// One launch sorting args.groups segments of up to args.network keys each.
// K is the unsigned type of the key's width (1, 2, 4 or 8 bytes), and
// (kValueBytes, kWithIndex) one of (0, false) or (1, 2, 4 or 8, true): the
// instances segment_network.cu compiles.
template <typename K, int kValueBytes, bool kWithIndex>
void launch_network_sort(const DeviceEnv &env, SegmentNetworkArgs args);

// The largest network this device's shared memory holds for these items.
template <typename K, int kValueBytes, bool kWithIndex>
uint32_t largest_network(const DeviceEnv &env);

}  // namespace gpuprim::cuda
