// SPDX-License-Identifier: Apache-2.0
// The CPU backend's sort of one key width (keys, pairs, bit ranges), on the
// unsigned sort of cpu/sort.h. Instantiated by key width in two translation
// units (sort_narrow_keys.cpp: 1- and 2-byte keys; sort_wide_keys.cpp: 4-
// and 8-byte keys), which compile in parallel: one unit took 100 s.
#pragma once

#include "core/backend.h"
#include "core/checked_size.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/key_transform.h"
#include "core/workspace.h"
#include "cpu/parallel.h"
#include "cpu/sort.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace gpuprim {
namespace cpu {

// The sorts of 1- and 2-byte keys and of 4- and 8-byte keys (any value width;
// argsort: request.values_are_indices, the positions written as the values).
// measure non-null: nothing is sorted, *measure is set to the workspace bytes
// the sort would reserve (the segmented sort reserves the most any of its
// sorts needs before it writes anything).
void sort_narrow_keys(Parallel &parallel, Workspace &workspace, const SortRequest &request,
                      uint64_t *measure = nullptr);
void sort_wide_keys(Parallel &parallel, Workspace &workspace, const SortRequest &request,
                    uint64_t *measure = nullptr);

namespace sort_detail {


constexpr uint64_t kGrain = 1 << 16;  // elements per task of the element-wise passes

// count elements of T in bytes, or OUT_OF_MEMORY when that overflows.
template <typename T>
uint64_t bytes_of(uint64_t count, uint64_t copies = 1) {
    return CheckedSize(count, "sort scratch").times(sizeof(T)).times(copies).value();
}

// workspace.reserve(bytes), or, when measuring, *measure = bytes and null
// (the caller then returns without doing anything).
inline void *reserve_or_measure(Workspace &workspace, uint64_t bytes, uint64_t *measure) {
    if (measure) {
        *measure = bytes;
        return nullptr;
    }
    return workspace.reserve(bytes);
}

template <typename KeyBits>
void sort_keys(Parallel &parallel, Workspace &workspace, const SortRequest &request, uint64_t *measure) {
    const uint64_t n = request.count;
    const uint64_t extra = sort_scratch_elements<KeyBits>(parallel, n);
    const uint64_t bytes = bytes_of<KeyBits>(checked_add(n, extra, "sort scratch"));
    auto *keys = static_cast<KeyBits *>(reserve_or_measure(workspace, bytes, measure));
    if (measure) return;
    const auto *in = static_cast<const KeyBits *>(request.keys_in);
    auto *out = static_cast<KeyBits *>(request.keys_out);
    const KeyKind kind = request.key_kind;
    const bool descending = request.descending;
    parallel.for_ranges(n, kGrain, [&](uint64_t begin, uint64_t end) {
        for (uint64_t i = begin; i < end; ++i) keys[i] = to_radix_key(in[i], kind, descending);
    });
    // keys_in is read: from here on keys_out (which may be keys_in) is written.
    const auto emit = [out, kind, descending](uint64_t first, const KeyBits *sorted, uint64_t count) {
        for (uint64_t i = 0; i < count; ++i) out[first + i] = from_radix_key(sorted[i], kind, descending);
    };
    sort_and_emit(parallel, keys, extra ? keys + n : nullptr, n, SortedSink<KeyBits>(emit));
}

// A pairs sort's values by their width at run time (dispatch_width; none:
// uint8_t, unused): f(value_bits) with V = decltype(value_bits). Only the
// loops that write each sorted block are compiled per value width; the sort
// and its merges (sort_and_emit) once per packed type, whatever the values
// (instantiating the whole sort per value width made it most of the CPU
// backend's compile time).
template <typename F>
void with_value_carrier(uint32_t value_bytes, F &&f) {
    if (value_bytes == 0) return f(uint8_t{});
    dispatch_width(value_bytes, "sort: unsupported value width", f);
}

// The width of what a pairs sort writes beside its keys, checked before
// anything is reserved or written: a value dtype's width, or 4 or 8 for an
// argsort's indices.
inline void check_value_width(const SortRequest &request) {
    if (request.values_are_indices ? request.value_bytes != 4 && request.value_bytes != 8
                                   : request.value_bytes != 0 && !is_dtype_width(request.value_bytes))
        fail(GPUPRIM_ERROR_INTERNAL, "sort: %u-byte %s", request.value_bytes,
             request.values_are_indices ? "indices" : "values");
}

// Pairs: the keys packed with their positions into Packed (uint64_t or Wide),
// sorted, then keys unpacked and values gathered by position as the sorted
// packed keys are written out. An argsort (values_are_indices): the values
// are the positions themselves; keys_out may be null.
template <typename KeyBits, typename Packed>
void sort_pairs_packed(Parallel &parallel, Workspace &workspace, const SortRequest &request, uint64_t *measure) {
    const uint64_t n = request.count;
    const bool indices = request.values_are_indices;
    const uint32_t value_bytes = request.value_bytes;  // at most 8: fits a Packed slot
    // Values in place: gathered into scratch first, then copied.
    const bool in_place = !indices && request.values_out == request.values_in;
    const uint64_t rounds = sort_scratch_elements<Packed>(parallel, n);
    const uint64_t extra = checked_add(rounds, in_place ? n : 0, "sort scratch");
    const uint64_t bytes = bytes_of<Packed>(checked_add(n, extra, "sort scratch"));
    auto *packed = static_cast<Packed *>(reserve_or_measure(workspace, bytes, measure));
    if (measure) return;
    Packed *scratch = rounds ? packed + n : nullptr;
    const auto *keys_in = static_cast<const KeyBits *>(request.keys_in);
    auto *keys_out = static_cast<KeyBits *>(request.keys_out);
    const KeyKind kind = request.key_kind;
    const bool descending = request.descending;
    parallel.for_ranges(n, kGrain, [&](uint64_t begin, uint64_t end) {
        for (uint64_t i = begin; i < end; ++i)
            packed[i] = pack<Packed>(to_radix_key(keys_in[i], kind, descending), i);
    });
    // In place, the gather must not write values_out while values_in (the
    // same memory) is still being read: it goes to scratch past the merge's.
    void *gathered = in_place ? static_cast<void *>(packed + n + rounds) : request.values_out;
    // The positions, below the keys, are in order: a stable sort of the keys sorts.
    constexpr unsigned kPositionBits = std::is_same_v<Packed, Wide> ? 64 : 32;
    with_value_carrier(value_bytes, [&](auto value_bits) {
        using V = decltype(value_bits);
        const auto *values_in = static_cast<const V *>(request.values_in);
        auto *values_out = static_cast<V *>(gathered);
        // The loops read only locals: stores of narrow values could alias
        // anything the lambda refers to, which would then be reloaded per element.
        const auto emit = [&](uint64_t first, const Packed *sorted, uint64_t count) {
            KeyBits *const keys_to = keys_out ? keys_out + first : nullptr;
            V *const values_to = values_out + first;
            const V *const from = values_in;
            const KeyKind key_kind = kind;
            const bool reversed = descending;
            if (indices) {
                for (uint64_t i = 0; i < count; ++i) values_to[i] = V(packed_position(sorted[i]));
                if (keys_to)
                    for (uint64_t i = 0; i < count; ++i)
                        keys_to[i] = from_radix_key(KeyBits(packed_bits(sorted[i])), key_kind, reversed);
                return;
            }
            for (uint64_t i = 0; i < count; ++i) {
                keys_to[i] = from_radix_key(KeyBits(packed_bits(sorted[i])), key_kind, reversed);
                values_to[i] = from[packed_position(sorted[i])];
            }
        };
        sort_and_emit(parallel, packed, scratch, n, SortedSink<Packed>(emit), kPositionBits);
    });
    if (in_place) {
        auto *out = static_cast<unsigned char *>(request.values_out);
        const auto *from = static_cast<const unsigned char *>(gathered);
        parallel.for_ranges(n, kGrain, [&](uint64_t begin, uint64_t end) {
            std::memcpy(out + begin * value_bytes, from + begin * value_bytes, (end - begin) * value_bytes);
        });
    }
}

template <typename KeyBits>
void sort_pairs(Parallel &parallel, Workspace &workspace, const SortRequest &request, uint64_t *measure) {
    if constexpr (sizeof(KeyBits) <= 4) {
        if (request.count <= (uint64_t(1) << 32))
            return sort_pairs_packed<KeyBits, uint64_t>(parallel, workspace, request, measure);
    }
    sort_pairs_packed<KeyBits, Wide>(parallel, workspace, request, measure);
}

// A sort by a bit range of the keys: the sort bits (core/key_transform.h
// sort_bits) packed with positions, sorted, then keys and values gathered by
// position into scratch and copied out (keys_out may be keys_in: the key is
// no longer the packed value, so it comes from the input). An argsort
// (values_are_indices): the positions are written straight to values_out
// (they alias no key), and keys_out may be null.
template <typename KeyBits, typename Packed>
void sort_bit_range_packed(Parallel &parallel, Workspace &workspace, const SortRequest &request,
                           uint64_t *measure) {
    const bool indices = request.values_are_indices;
    const uint32_t value_bytes = request.value_bytes;
    const bool gathers_values = !indices && value_bytes != 0;
    const uint64_t n = request.count;
    const uint64_t rounds = sort_scratch_elements<Packed>(parallel, n);
    const char *what = "sort scratch (bit range)";
    const uint64_t keys_at = CheckedSize(bytes_of<Packed>(checked_add(n, rounds, what)), what).aligned(64).value();
    const uint64_t values_at = CheckedSize(keys_at, what).plus(bytes_of<KeyBits>(n)).aligned(64).value();
    const uint64_t values_size = gathers_values ? CheckedSize(n, what).times(value_bytes).value() : 0;
    const uint64_t total = checked_add(values_at, values_size, what);
    auto *base = static_cast<unsigned char *>(reserve_or_measure(workspace, total, measure));
    if (measure) return;
    auto *packed = reinterpret_cast<Packed *>(base);
    Packed *scratch = rounds ? packed + n : nullptr;
    auto *keys = reinterpret_cast<KeyBits *>(base + keys_at);
    unsigned char *values = base + values_at;
    const auto *keys_in = static_cast<const KeyBits *>(request.keys_in);
    const KeyKind kind = request.key_kind;
    const bool descending = request.descending;
    const uint32_t begin_bit = request.begin_bit, end_bit = sort_end_bit(request);
    parallel.for_ranges(n, kGrain, [&](uint64_t begin, uint64_t end) {
        for (uint64_t i = begin; i < end; ++i)
            packed[i] = pack<Packed>(sort_bits(to_radix_key(keys_in[i], kind, descending), begin_bit, end_bit), i);
    });
    auto *keys_out = static_cast<KeyBits *>(request.keys_out);
    const bool writes_keys = !indices || keys_out;
    constexpr unsigned kPositionBits = std::is_same_v<Packed, Wide> ? 64 : 32;
    with_value_carrier(value_bytes, [&](auto value_bits) {
        using V = decltype(value_bits);
        const auto *values_in = static_cast<const V *>(request.values_in);
        auto *values_to = static_cast<V *>(indices ? request.values_out : static_cast<void *>(values));
        const auto emit = [&](uint64_t first, const Packed *sorted, uint64_t count) {
            KeyBits *const keys_to = writes_keys ? keys + first : nullptr;
            V *const to = values_to + first;
            const KeyBits *const keys_from = keys_in;
            const V *const from = values_in;
            if (keys_to)
                for (uint64_t i = 0; i < count; ++i) keys_to[i] = keys_from[packed_position(sorted[i])];
            if (indices)
                for (uint64_t i = 0; i < count; ++i) to[i] = V(packed_position(sorted[i]));
            else if (gathers_values)
                for (uint64_t i = 0; i < count; ++i) to[i] = from[packed_position(sorted[i])];
        };
        sort_and_emit(parallel, packed, scratch, n, SortedSink<Packed>(emit), kPositionBits);
    });
    if (!writes_keys) return;
    auto *values_out = static_cast<unsigned char *>(request.values_out);
    parallel.for_ranges(n, kGrain, [&](uint64_t begin, uint64_t end) {
        std::memcpy(keys_out + begin, keys + begin, (end - begin) * sizeof(KeyBits));
        if (gathers_values)
            std::memcpy(values_out + begin * value_bytes, values + begin * value_bytes, (end - begin) * value_bytes);
    });
}

template <typename KeyBits>
void sort_bit_range(Parallel &parallel, Workspace &workspace, const SortRequest &request, uint64_t *measure) {
    // 32 sort bits or fewer and positions below 2^32 pack into 64 bits.
    if (sort_end_bit(request) - request.begin_bit <= 32 && request.count <= (uint64_t(1) << 32))
        return sort_bit_range_packed<KeyBits, uint64_t>(parallel, workspace, request, measure);
    sort_bit_range_packed<KeyBits, Wide>(parallel, workspace, request, measure);
}

// One key width, any values: each sort instantiated per key width only (the
// values' width is read at run time: with_value_carrier).
template <typename KeyBits>
void sort_by_value_width(Parallel &parallel, Workspace &workspace, const SortRequest &request,
                         uint64_t *measure) {
    check_value_width(request);
    if (!sorts_whole_key(request)) return sort_bit_range<KeyBits>(parallel, workspace, request, measure);
    if (request.value_bytes == 0) return sort_keys<KeyBits>(parallel, workspace, request, measure);
    sort_pairs<KeyBits>(parallel, workspace, request, measure);
}

}  // namespace sort_detail
}  // namespace cpu
}  // namespace gpuprim
