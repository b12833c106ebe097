// SPDX-License-Identifier: Apache-2.0
// Group-by on the CPU: a stable argsort of the keys (cpu/sort_by_width.h:
// the sorted keys and the permutation), the values gathered in that order,
// then reduce-by-key of the sorted keys (cpu/reduce_by_key.cpp), which also
// writes each element's group through the permutation (the inverse). The
// radix order is a bijection of the bits, so keys with equal bits are
// adjacent once sorted and the runs are the groups; a stable sort keeps
// each group's values in input order. Keys of few distinct values take
// group_by_few_keys.cpp's hashing instead, with the same outputs.
//
// Scratch, one workspace block reserved before anything is written: the
// sort's own scratch first (the sort then finds the workspace big enough
// and uses that part), then the sorted keys, the permutation and the
// gathered values.
#include "core/checked_size.h"
#include "core/dtype.h"
#include "core/error.h"
#include "cpu/count_sink.h"
#include "cpu/reduce_by_key.h"
#include "cpu/sort_by_width.h"

#include <algorithm>
#include <cstdint>

namespace gpuprim {
namespace cpu {
namespace {

constexpr uint64_t kGatherGrain = uint64_t(1) << 16;

void stable_argsort(Parallel &parallel, Workspace &workspace, const SortRequest &request, uint64_t *measure) {
    if (request.key_bytes <= 2) sort_narrow_keys(parallel, workspace, request, measure);
    else sort_wide_keys(parallel, workspace, request, measure);
}

// gathered[j] = values[order[j]] for j < n.
template <typename Bits, typename Order>
void gather(Parallel &parallel, const void *values, const void *order, void *gathered, uint64_t n) {
    const Bits *in = static_cast<const Bits *>(values);
    const Order *at = static_cast<const Order *>(order);
    Bits *out = static_cast<Bits *>(gathered);
    parallel.for_ranges(n, kGatherGrain, [&](uint64_t begin, uint64_t end) {
        for (uint64_t j = begin; j < end; ++j) out[j] = in[at[j]];
    });
}

void gather_values(Parallel &parallel, uint32_t value_bytes, const void *values, uint32_t order_bytes,
                   const void *order, void *gathered, uint64_t n) {
    dispatch_width(value_bytes, "group-by: value width", [&](auto tag) {
        using Bits = decltype(tag);
        if (order_bytes == 4) gather<Bits, uint32_t>(parallel, values, order, gathered, n);
        else gather<Bits, uint64_t>(parallel, values, order, gathered, n);
    });
}

// The sort path: a stable argsort of the keys (by position, order_bytes
// each), then its sorted keys, the order and the gathered values side by
// side in the workspace.
struct SortPath {
    SortRequest sort;
    uint64_t keys_at, order_at, values_at, total;
};
SortPath sort_path(Parallel &parallel, Workspace &workspace, const GroupByRequest &request) {
    const uint64_t n = request.count;
    const uint32_t key_bytes = request.key_bytes;
    const uint32_t value_bytes = request.values ? static_cast<uint32_t>(dtype_size(request.value_dtype)) : 0;
    // Positions below 2^32 fit 4 bytes.
    const uint32_t order_bytes = n <= (uint64_t(1) << 32) ? 4 : 8;
    SortPath path{};
    SortRequest &sort = path.sort;
    sort.key_kind = request.key_kind;
    sort.key_bytes = key_bytes;
    sort.begin_bit = 0;
    sort.end_bit = 0;
    sort.descending = false;
    sort.keys_in = request.keys;
    sort.value_bytes = order_bytes;
    sort.values_in = nullptr;
    sort.count = n;
    sort.values_are_indices = true;
    uint64_t sort_bytes = 0;
    stable_argsort(parallel, workspace, sort, &sort_bytes);

    const char *what = "group-by scratch";
    path.keys_at = CheckedSize(sort_bytes, what).aligned(64).value();
    path.order_at = CheckedSize(n, what).times(key_bytes).plus(path.keys_at).aligned(64).value();
    path.values_at = CheckedSize(n, what).times(order_bytes).plus(path.order_at).aligned(64).value();
    path.total = CheckedSize(n, what).times(value_bytes).plus(path.values_at).value();
    return path;
}

}  // namespace

uint64_t group_by_bytes(Parallel &parallel, Workspace &workspace, const GroupByRequest &request, bool *bounded) {
    if (request.count == 0) return 0;
    const uint64_t few = group_by_few_keys_bytes(request);
    if (few != 0) *bounded = true;
    return std::max(few, sort_path(parallel, workspace, request).total);
}

void group_by(Parallel &parallel, Workspace &workspace, const GroupByRequest &request) {
    const uint64_t n = request.count;
    if (n == 0) {
        write_count(request.groups, 0);
        return;
    }
    if (group_by_few_keys(parallel, workspace, request)) return;
    const uint32_t value_bytes = request.values ? static_cast<uint32_t>(dtype_size(request.value_dtype)) : 0;
    SortPath path = sort_path(parallel, workspace, request);
    SortRequest &sort = path.sort;
    const uint32_t order_bytes = sort.value_bytes;
    const uint64_t keys_at = path.keys_at, order_at = path.order_at, values_at = path.values_at;
    const uint64_t total = path.total;
    auto *base = static_cast<unsigned char *>(workspace.reserve(total));
    void *sorted_keys = base + keys_at;
    void *order = base + order_at;
    void *gathered = value_bytes ? base + values_at : nullptr;

    sort.keys_out = sorted_keys;
    sort.values_out = order;
    stable_argsort(parallel, workspace, sort, nullptr);
    if (gathered) gather_values(parallel, value_bytes, request.values, order_bytes, order, gathered, n);

    const RunIdScatter scatter{order, order_bytes, request.inverse, request.inverse_bytes};
    reduce_by_key(parallel, reduce_of_groups(request, sorted_keys, gathered), request.inverse ? &scatter : nullptr);
}

}  // namespace cpu
}  // namespace gpuprim
