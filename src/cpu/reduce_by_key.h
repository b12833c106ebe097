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

// group_by when the keys (4 or 8 bytes, at least 2^15 of them) take at most
// 4,096 distinct values: the same outputs by hashing instead of a sort
// (group_by_few_keys.cpp). False, with nothing written, where it does not
// apply; group_by then sorts.
bool group_by_few_keys(Parallel &parallel, Workspace &workspace, const GroupByRequest &request);

}  // namespace cpu
}  // namespace gpuprim
