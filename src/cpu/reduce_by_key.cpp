// SPDX-License-Identifier: Apache-2.0
// Reduce-by-key on the CPU. Each run of equal keys (by bits) is reduced
// whole, by one thread, with an association fixed by its values alone:
// its SUM is gpuprim_reduce()'s of the run (cpu/reduce_scan.h: leaves of
// kLanes lanes combined pairwise, leaves in a binary tree), so the results
// are the same bits for every thread count. MIN/MAX and integer sums are
// exact in any order and fold (cpu/reduce_scan.h fold_dispatch).
//
// Work: the keys are cut into pieces of kPiece elements, or kMaxPieces equal
// pieces of more (bounds that depend on the count only; no allocation, so
// nothing can fail once outputs are written), and a piece owns the runs
// whose first key (head) lies
// in it, reading past its end to finish its last run. On several workers a
// first pass counts each piece's heads, whose prefix sums say where each
// piece writes; on one worker (or one piece) a single pass keeps a running
// count. A piece finds up to kBatch runs by key width, then writes their
// keys, lengths, reductions (by value dtype and op) and, for group-by, each
// element's run through the sort's permutation.
#include "cpu/reduce_by_key.h"

#include "core/dtype.h"
#include "core/error.h"
#include "core/ops.h"
#include "cpu/count_sink.h"
#include "cpu/reduce_scan.h"

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace gpuprim {
namespace cpu {
namespace {

constexpr uint64_t kPiece = uint64_t(1) << 16;  // elements whose heads one piece owns, at least
constexpr uint64_t kMaxPieces = 1024;           // at most: their run counts live on the stack
constexpr uint64_t kBatch = 256;                // runs found, then written, at a time

// Runs found in a piece: run r is [bounds[r], bounds[r + 1]).
struct Batch {
    uint64_t bounds[kBatch + 1];
    uint64_t runs;
};

// ---- Keys, by width ---------------------------------------------------------

struct KeyFunctions {
    // How many heads [begin, end) holds.
    uint64_t (*count_heads)(const void *keys, uint64_t begin, uint64_t end);
    // The first head in [begin, end), or end.
    uint64_t (*first_head)(const void *keys, uint64_t begin, uint64_t end);
    // From head `head`, the runs whose heads lie below stop (at most kBatch);
    // returns the head after the last run found.
    uint64_t (*find_runs)(const void *keys, uint64_t n, uint64_t head, uint64_t stop, Batch &batch);
    // out[at + r] = the key of run r.
    void (*copy_keys)(const void *keys, const Batch &batch, void *out, uint64_t at);
};

template <typename Bits>
uint64_t count_heads(const void *keys, uint64_t begin, uint64_t end) {
    const Bits *k = static_cast<const Bits *>(keys);
    uint64_t heads = 0;
    uint64_t i = begin;
    if (i == 0 && i < end) {
        heads = 1;
        i = 1;
    }
    for (; i < end; ++i) heads += k[i] != k[i - 1] ? 1 : 0;
    return heads;
}

template <typename Bits>
uint64_t first_head(const void *keys, uint64_t begin, uint64_t end) {
    const Bits *k = static_cast<const Bits *>(keys);
    if (begin == 0) return 0;
    uint64_t i = begin;
    while (i < end && k[i] == k[i - 1]) ++i;
    return i;
}

template <typename Bits>
uint64_t find_runs(const void *keys, uint64_t n, uint64_t head, uint64_t stop, Batch &batch) {
    const Bits *k = static_cast<const Bits *>(keys);
    uint64_t r = 0;
    batch.bounds[0] = head;
    while (r < kBatch && head < stop) {
        const Bits key = k[head];
        uint64_t end = head + 1;
        while (end < n && k[end] == key) ++end;
        batch.bounds[++r] = end;
        head = end;
    }
    batch.runs = r;
    return head;
}

template <typename Bits>
void copy_keys(const void *keys, const Batch &batch, void *out, uint64_t at) {
    const Bits *k = static_cast<const Bits *>(keys);
    Bits *o = static_cast<Bits *>(out) + at;
    for (uint64_t r = 0; r < batch.runs; ++r) o[r] = k[batch.bounds[r]];
}

KeyFunctions key_functions(uint32_t key_bytes) {
    return dispatch_width(key_bytes, "reduce-by-key: key width", [](auto tag) {
        using Bits = decltype(tag);
        return KeyFunctions{count_heads<Bits>, first_head<Bits>, find_runs<Bits>, copy_keys<Bits>};
    });
}

// ---- Values, by dtype and op ------------------------------------------------

// A float SUM of n <= kLanes elements with reduce_leaf's bits: lane k holds
// 0 + x[k], and the lanes combine pairwise (k + w into k, halving). The
// steps of widths past the next power of two only add +0 to lanes already
// of the form 0 + x, which changes nothing, so they are skipped.
template <typename Acc, typename T>
Acc short_float_sum(const T *x, uint64_t n) {
    Acc lanes[kLanes];
    uint64_t width = 1;
    while (width < n) width *= 2;
    for (uint64_t k = 0; k < n; ++k) lanes[k] = Acc(0) + load_as<Acc>(x[k]);
    for (uint64_t k = n; k < width; ++k) lanes[k] = Acc(0);
    for (width /= 2; width > 0; width /= 2)
        for (uint64_t k = 0; k < width; ++k) lanes[k] = lanes[k] + lanes[k + width];
    return lanes[0];
}

// op over x[0, n), n >= 1: gpuprim_reduce()'s result for these elements.
template <typename T, gpuprim_op_t kOp>
T reduce_run(const T *x, uint64_t n) {
    if constexpr (kOp == GPUPRIM_OP_SUM) {
        using Acc = typename Accumulator<T>::type;
        if constexpr (std::is_floating_point_v<Acc>) {
            const Acc total = n <= kLanes ? short_float_sum<Acc>(x, n)
                                          : reduce_tree<Acc>(0, ceil_div(n, kLeaf), LaneSum<Acc>{},
                                                             [&](uint64_t lo, uint64_t hi, Acc *out) {
                                                                 sum_leaves<Acc>(x, n, lo, hi, out);
                                                             });
            return canonical_nan_if_nan(Accumulator<T>::store(total));
        } else {
            return Accumulator<T>::store(
                fold_dispatch(n, Acc(0), LaneSum<Acc>{}, [x](uint64_t i) { return load_as<Acc>(x[i]); }));
        }
    } else {
        using Op = std::conditional_t<kOp == GPUPRIM_OP_MIN, MinOp<T>, MaxOp<T>>;
        return fold_dispatch(n, Op::identity(), Op{}, [x](uint64_t i) { return x[i]; });
    }
}

// results[at + r] = op over run r's values.
using ReduceRuns = void (*)(const void *values, const Batch &batch, void *results, uint64_t at);

template <typename T, gpuprim_op_t kOp>
void reduce_runs(const void *values, const Batch &batch, void *results, uint64_t at) {
    const T *x = static_cast<const T *>(values);
    T *out = static_cast<T *>(results) + at;
    for (uint64_t r = 0; r < batch.runs; ++r) {
        const uint64_t begin = batch.bounds[r];
        out[r] = reduce_run<T, kOp>(x + begin, batch.bounds[r + 1] - begin);
    }
}

ReduceRuns reduce_function(gpuprim_dtype_t dtype, gpuprim_op_t op) {
    return dispatch_dtype(dtype, [op](auto tag) -> ReduceRuns {
        using T = decltype(tag);
        switch (op) {
        case GPUPRIM_OP_SUM: return reduce_runs<T, GPUPRIM_OP_SUM>;
        case GPUPRIM_OP_MIN: return reduce_runs<T, GPUPRIM_OP_MIN>;
        case GPUPRIM_OP_MAX: return reduce_runs<T, GPUPRIM_OP_MAX>;
        }
        fail(GPUPRIM_ERROR_INTERNAL, "reduce-by-key: unknown op %d", static_cast<int>(op));
    });
}

// ---- Lengths and group ids --------------------------------------------------

template <typename U>
void write_lengths(const Batch &batch, void *lengths, uint64_t at) {
    U *out = static_cast<U *>(lengths) + at;
    for (uint64_t r = 0; r < batch.runs; ++r) out[r] = U(batch.bounds[r + 1] - batch.bounds[r]);
}

using ScatterIds = void (*)(const RunIdScatter &scatter, const Batch &batch, uint64_t at);

template <typename Order, typename Id>
void scatter_ids(const RunIdScatter &scatter, const Batch &batch, uint64_t at) {
    const Order *order = static_cast<const Order *>(scatter.order);
    Id *inverse = static_cast<Id *>(scatter.inverse);
    for (uint64_t r = 0; r < batch.runs; ++r) {
        const Id id = Id(at + r);
        for (uint64_t j = batch.bounds[r]; j < batch.bounds[r + 1]; ++j) inverse[order[j]] = id;
    }
}

ScatterIds scatter_function(const RunIdScatter &scatter) {
    const bool wide_order = scatter.order_bytes == 8, wide_ids = scatter.inverse_bytes == 8;
    if ((scatter.order_bytes != 4 && !wide_order) || (scatter.inverse_bytes != 4 && !wide_ids))
        fail(GPUPRIM_ERROR_INTERNAL, "group-by: %u-byte order, %u-byte inverse", scatter.order_bytes,
             scatter.inverse_bytes);
    if (wide_order) return wide_ids ? scatter_ids<uint64_t, uint64_t> : scatter_ids<uint64_t, uint32_t>;
    return wide_ids ? scatter_ids<uint32_t, uint64_t> : scatter_ids<uint32_t, uint32_t>;
}

// ---- Pieces -----------------------------------------------------------------

// One call's functions and outputs.
struct Job {
    const ReduceByKeyRequest &request;
    KeyFunctions keys;
    ReduceRuns reduce;  // nullptr: no results
    const RunIdScatter *scatter;
    ScatterIds scatter_ids;
};

void write_batch(const Job &job, const Batch &batch, uint64_t at) {
    const ReduceByKeyRequest &request = job.request;
    if (request.keys_out) job.keys.copy_keys(request.keys, batch, request.keys_out, at);
    if (request.lengths) {
        if (request.length_bytes == 4) write_lengths<uint32_t>(batch, request.lengths, at);
        else write_lengths<uint64_t>(batch, request.lengths, at);
    }
    if (job.reduce) job.reduce(request.values, batch, request.results, at);
    if (job.scatter) job.scatter_ids(*job.scatter, batch, at);
}

// Writes the runs whose heads lie in [begin, end), the first being run at;
// returns how many.
uint64_t emit_runs(const Job &job, uint64_t begin, uint64_t end, uint64_t at) {
    const ReduceByKeyRequest &request = job.request;
    uint64_t head = job.keys.first_head(request.keys, begin, end);
    uint64_t next = at;
    Batch batch;
    while (head < end) {
        head = job.keys.find_runs(request.keys, request.count, head, end, batch);
        write_batch(job, batch, next);
        next += batch.runs;
    }
    return next - at;
}

}  // namespace

void reduce_by_key(Parallel &parallel, const ReduceByKeyRequest &request, const RunIdScatter *scatter) {
    const uint64_t n = request.count;
    if (request.length_bytes != 0 && request.length_bytes != 4 && request.length_bytes != 8)
        fail(GPUPRIM_ERROR_INTERNAL, "reduce-by-key: %u-byte lengths", request.length_bytes);
    const Job job{request, key_functions(request.key_bytes),
                  request.results ? reduce_function(request.value_dtype, request.op) : nullptr, scatter,
                  scatter ? scatter_function(*scatter) : nullptr};
    const uint64_t piece = std::max(kPiece, ceil_div(n, kMaxPieces));
    const uint64_t pieces = ceil_div(n, piece);
    uint64_t total = 0;
    if (parallel.workers() <= 1 || pieces <= 1) {
        total = emit_runs(job, 0, n, 0);
    } else {
        uint64_t before[kMaxPieces + 1];
        before[0] = 0;
        const auto bounds = [&](uint64_t p, uint64_t &begin, uint64_t &end) {
            begin = p * piece;
            end = std::min(n, begin + piece);
        };
        parallel.for_each(static_cast<size_t>(pieces), [&](size_t p) {
            uint64_t begin, end;
            bounds(p, begin, end);
            before[p + 1] = job.keys.count_heads(request.keys, begin, end);
        });
        for (uint64_t p = 0; p < pieces; ++p) before[p + 1] += before[p];
        total = before[pieces];
        parallel.for_each(static_cast<size_t>(pieces), [&](size_t p) {
            uint64_t begin, end;
            bounds(p, begin, end);
            emit_runs(job, begin, end, before[p]);
        });
    }
    write_count(request.runs, total);
}

}  // namespace cpu
}  // namespace gpuprim
