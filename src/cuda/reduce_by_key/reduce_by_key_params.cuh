// SPDX-License-Identifier: Apache-2.0
// What the two kernels of reduce-by-key receive (reduce_by_key.cu fills it):
// the inputs and outputs, the count sinks, the look-back's slots and ticket,
// and the tile records the first kernel leaves for the second.
#pragma once

#include <cstdint>

namespace gpuprim::cuda {
namespace reduce_by_key_detail {

// A tile's open_runs entry when no run begun in an earlier tile ends in it.
constexpr unsigned long long kNoRun = ~0ull;

// Per tile (num_tiles > 1 only), written by the tile kernel, read by the
// crossing-runs kernel (the next launch): what a run that crosses tiles is
// made of. Running values as 8-byte slots (run_ops.cuh to_slot).
struct TileRecords {
    uint32_t *heads;                   // run heads in the tile (0: the tile lies inside one run)
    unsigned long long *last_values;   // the fold of the tile's last run piece (its elements in this tile)
    unsigned long long *open_values;   // the fold of the elements before the tile's first head
    unsigned long long *open_runs;     // the index of the run those elements end, or kNoRun
};

struct ReduceByKeyParams {
    const void *keys;  // by width
    // The keys' width in memory (1, 2, 4 or 8): keys of 1 and 2 bytes run in
    // the 4-byte kernels (agent_reduce_by_key.cuh with_key_type).
    uint32_t key_bytes;
    uint64_t count;
    uint32_t num_tiles;
    const void *values;       // nullptr: no values, no results (group-by without an aggregate)
    // XORed into each integer value as it is read and out of each result as
    // it is written: the sign bit of a signed MIN/MAX, run as unsigned
    // (run_ops.cuh dispatch_run_op), else 0.
    unsigned long long value_flip;
    const void *value_order;  // nullptr, or the value of element j is values[value_order[j]] (group-by's permutation)
    uint32_t value_order_bytes;
    void *keys_out;  // each output nullptr when not wanted
    void *results;
    void *lengths;
    uint32_t length_bytes;
    void *element_runs;  // element_runs[value_order ? value_order[j] : j] = the run of element j
    uint32_t element_run_bytes;
    void *count_out;
    uint32_t count_out_bytes;
    uint64_t *count_host;  // device address of the mapped host slot, or nullptr
    unsigned long long *status_slots;  // num_tiles > 1 only
    unsigned int *ticket;  // a zeroed counter word (util/counters.h), left zero
    uint32_t poll_ns;
    TileRecords records;  // num_tiles > 1 only
};

}  // namespace reduce_by_key_detail
}  // namespace gpuprim::cuda
