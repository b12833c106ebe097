// SPDX-License-Identifier: Apache-2.0
// The CPU backend's reduce-by-key (reduce_by_key.cpp) and group-by
// (group_by.cpp: a stable argsort, then reduce-by-key of the sorted keys;
// group_by_few_keys.cpp: by hashing, for few distinct keys).
#pragma once

#include "core/backend.h"
#include "core/workspace.h"
#include "cpu/parallel.h"

#include <cstdint>

namespace gpuprim {
namespace cpu {

// What group-by adds to a reduce-by-key of sorted keys: for every element j
// of run r, inverse[order[j]] = r (order: the sort's permutation).
struct RunIdScatter {
    const void *order;
    uint32_t order_bytes;    // 4 or 8
    void *inverse;
    uint32_t inverse_bytes;  // 4 or 8
};

// gpuprim_reduce_by_key (core/backend.h ReduceByKeyRequest). Inside the
// backend request.results may be nullptr (group-by without values: no
// aggregate), and scatter, when given, writes each element's run.
void reduce_by_key(Parallel &parallel, const ReduceByKeyRequest &request, const RunIdScatter *scatter = nullptr);

// gpuprim_group_by (core/backend.h GroupByRequest).
void group_by(Parallel &parallel, Workspace &workspace, const GroupByRequest &request);
// The most workspace group_by reserves for this request, reading no data:
// the larger of its two paths where the few-keys one applies (which of them
// runs depends on the keys: *bounded is set), else the sort path's exactly.
uint64_t group_by_bytes(Parallel &parallel, Workspace &workspace, const GroupByRequest &request, bool *bounded);

// The reduce-by-key both group-by paths end with: the request's keys in
// group order (sorted_keys) with their values in the same order
// (grouped_values, nullptr without values), to the request's outputs.
inline ReduceByKeyRequest reduce_of_groups(const GroupByRequest &request, const void *sorted_keys,
                                           const void *grouped_values) {
    ReduceByKeyRequest runs{};
    runs.key_bytes = request.key_bytes;
    runs.keys = sorted_keys;
    runs.count = request.count;
    runs.op = request.op;
    runs.value_dtype = request.value_dtype;
    runs.values = grouped_values;
    runs.keys_out = request.keys_out;
    runs.results = grouped_values ? request.results : nullptr;
    runs.lengths = request.counts;
    runs.length_bytes = request.counts ? request.count_bytes : 0;
    runs.runs = request.groups;
    return runs;
}

// group_by when the keys (4 or 8 bytes, at least 2^15 of them) take at most
// 4,096 distinct values: the same outputs by hashing instead of a sort
// (group_by_few_keys.cpp). False, with nothing written, where it does not
// apply; group_by then sorts.
bool group_by_few_keys(Parallel &parallel, Workspace &workspace, const GroupByRequest &request);
// The workspace group_by_few_keys reserves when it applies; 0 where it does not.
uint64_t group_by_few_keys_bytes(const GroupByRequest &request);

}  // namespace cpu
}  // namespace gpuprim
