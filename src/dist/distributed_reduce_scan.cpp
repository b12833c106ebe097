// SPDX-License-Identifier: Apache-2.0
// Distributed reduce and scan (docs/DISTRIBUTED.md): each rank reduces its
// own elements, the ranks' results are gathered, and every rank combines
// them in rank order on the host, so float results are the same run to run
// for a given layout. The scan starts each rank's local scan from the
// combination of the totals of the ranks before it (no second pass).
#include "dist/distributed.h"
#include "dist/local_workspace.h"

#include "core/dtype.h"
#include "core/ops.h"

#include <cstring>

namespace gpuprim::dist {
namespace {

// One rank's result: whether it had elements, and its value's bytes.
struct Partial {
    uint64_t has_value;
    unsigned char bytes[8];
};

// Every rank's Partial, in rank order, as host_allgather gave them.
struct Partials {
    const unsigned char *gathered;
    Partial operator[](size_t r) const { return gathered_record<Partial>(gathered, int32_t(r)); }
};

template <typename T>
T value_of(const Partial &partial) {
    T value;
    std::memcpy(&value, partial.bytes, sizeof value);
    return value;
}

// op over the partials [0, end) that have a value, in rank order, folded as
// the kernels fold (narrow dtypes through their wide operator). Returns
// false when none has a value.
template <typename T, typename OpFor>
bool fold(const Partials &partials, size_t end, T *result) {
    bool any = false;
    if constexpr (kIsNarrow<T>) {
        typename OpFor::Accumulator running{};
        typename OpFor::Combine combine;
        for (size_t r = 0; r < end; ++r) {
            const Partial partial = partials[r];
            if (!partial.has_value) continue;
            const auto loaded = OpFor::load(value_of<T>(partial));
            running = any ? combine(running, loaded) : loaded;
            any = true;
        }
        if (any) *result = OpFor::store(running);
    } else {
        OpFor combine;
        T running{};
        for (size_t r = 0; r < end; ++r) {
            const Partial partial = partials[r];
            if (!partial.has_value) continue;
            const T value = value_of<T>(partial);
            running = any ? combine(running, value) : value;
            any = true;
        }
        if (any) *result = running;
    }
    return any;
}

template <typename T>
bool combine_in_rank_order(gpuprim_op_t op, const Partials &partials, size_t end, T *result) {
    switch (op) {
    case GPUPRIM_OP_SUM: return fold<T, SumOpFor<T>>(partials, end, result);
    case GPUPRIM_OP_MIN: return fold<T, MinOpFor<T>>(partials, end, result);
    case GPUPRIM_OP_MAX: return fold<T, MaxOpFor<T>>(partials, end, result);
    }
    fail(GPUPRIM_ERROR_INTERNAL, "distributed reduce: unknown op %d", static_cast<int>(op));
}

// Every rank's reduction of its own elements, in rank order.
Partials gather_partials(Backend &backend, Communicator &communicator, gpuprim_op_t op, gpuprim_dtype_t dtype,
                         const void *input, uint64_t count) {
    Partial mine{};
    if (count) {
        backend.reduce(op, dtype, input, count, mine.bytes, true);
        mine.has_value = 1;
    }
    return {communicator.host_allgather(&mine, sizeof mine)};
}

}  // namespace

void take_reduce_workspace(Backend &backend, gpuprim_op_t op, gpuprim_dtype_t dtype, const void *input,
                           uint64_t count) {
    if (count == 0) return;
    take_local_workspace(backend, [&] {
        Partial mine{};
        backend.reduce(op, dtype, input, count, mine.bytes, true);
    });
}

void take_scan_workspace(Backend &backend, int32_t ranks, gpuprim_op_t op, gpuprim_scan_kind_t kind,
                         gpuprim_dtype_t dtype, const void *input, void *output, uint64_t count) {
    if (count == 0) return;
    take_local_workspace(backend, [&] {
        if (ranks == 1) return backend.scan(op, kind, dtype, input, output, count, nullptr);
        Partial mine{};
        backend.reduce(op, dtype, input, count, mine.bytes, true);
        // A carry, as every rank but the first with elements before it has.
        const unsigned char carry[8] = {};
        backend.scan(op, kind, dtype, input, output, count, carry);
    });
}

void reduce(Backend &backend, Communicator &communicator, const GlobalLayout &layout, gpuprim_op_t op,
            gpuprim_dtype_t dtype, const void *input, void *result) {
    const Partials partials = gather_partials(backend, communicator, op, dtype, input, layout.local_count());
    bool any = false;
    dispatch_dtype(dtype, [&](auto zero) {
        using T = decltype(zero);
        T value;
        any = combine_in_rank_order(op, partials, size_t(layout.ranks), &value);
        if (any) std::memcpy(result, &value, sizeof value);
    });
    // No elements anywhere: the identity, as gpuprim_reduce() of none gives it.
    if (!any) backend.reduce(op, dtype, input, 0, result, true);
}

void scan(Backend &backend, Communicator &communicator, const GlobalLayout &layout, gpuprim_op_t op,
          gpuprim_scan_kind_t kind, gpuprim_dtype_t dtype, const void *input, void *output) {
    const uint64_t n = layout.local_count();
    if (layout.ranks == 1) {
        if (n) backend.scan(op, kind, dtype, input, output, n, nullptr);
        backend.synchronize();
        return;
    }
    const Partials partials = gather_partials(backend, communicator, op, dtype, input, n);
    if (n == 0) return;
    dispatch_dtype(dtype, [&](auto zero) {
        using T = decltype(zero);
        T carry;
        const bool has_carry = combine_in_rank_order(op, partials, size_t(layout.rank), &carry);
        backend.scan(op, kind, dtype, input, output, n, has_carry ? &carry : nullptr);
    });
    backend.synchronize();
}

}  // namespace gpuprim::dist
