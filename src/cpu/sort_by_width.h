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
    const uint64_t extra = sort_scratch_elements(parallel, n);
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
    sort_and_emit(parallel, keys, extra ? keys + n : nullptr, n,
                       [out, kind, descending](uint64_t k, KeyBits key) {
                           out[k] = from_radix_key(key, kind, descending);
                       });
}

// Pairs: the keys packed with their positions into Packed (uint64_t or Wide),
// sorted, then keys unpacked and values gathered by position as the sorted
// packed keys are written out. kIndices (argsort): the values are the
// positions themselves, written as ValueBits (uint32_t or uint64_t); keys_out
// may be null.
template <typename KeyBits, typename ValueBits, typename Packed, bool kIndices = false>
void sort_pairs_packed(Parallel &parallel, Workspace &workspace, const SortRequest &request,
                       uint64_t *measure) {
    static_assert(sizeof(ValueBits) <= sizeof(Packed), "values in place reuse the scratch");
    const uint64_t n = request.count;
    // Values in place: gathered into scratch first, then copied.
    const bool in_place = !kIndices && request.values_out == request.values_in;
    const uint64_t rounds = sort_scratch_elements(parallel, n);
    const uint64_t extra = checked_add(rounds, in_place ? n : 0, "sort scratch");
    const uint64_t bytes = bytes_of<Packed>(checked_add(n, extra, "sort scratch"));
    auto *packed = static_cast<Packed *>(reserve_or_measure(workspace, bytes, measure));
    if (measure) return;
    Packed *scratch = rounds ? packed + n : nullptr;
    const auto *keys_in = static_cast<const KeyBits *>(request.keys_in);
    const auto *values_in = static_cast<const ValueBits *>(request.values_in);
    auto *keys_out = static_cast<KeyBits *>(request.keys_out);
    auto *values_out = static_cast<ValueBits *>(request.values_out);
    const KeyKind kind = request.key_kind;
    const bool descending = request.descending;
    parallel.for_ranges(n, kGrain, [&](uint64_t begin, uint64_t end) {
        for (uint64_t i = begin; i < end; ++i) {
            const KeyBits key = to_radix_key(keys_in[i], kind, descending);
            if constexpr (std::is_same_v<Packed, Wide>) packed[i] = Wide{i, uint64_t(key)};
            else packed[i] = (uint64_t(key) << 32) | i;
        }
    });
    // In place, the gather must not write values_out while values_in (the
    // same memory) is still being read: it goes to scratch past the merge's.
    ValueBits *gathered =
        in_place ? reinterpret_cast<ValueBits *>(packed + n + rounds) : values_out;
    // The positions, below the keys, are in order: a stable sort of the keys sorts.
    constexpr unsigned kPositionBits = std::is_same_v<Packed, Wide> ? 64 : 32;
    sort_and_emit(parallel, packed, scratch, n, [&](uint64_t k, const Packed &p) {
        uint64_t position;
        KeyBits key;
        if constexpr (std::is_same_v<Packed, Wide>) {
            position = p.lo;
            key = KeyBits(p.hi);
        } else {
            position = p & 0xFFFFFFFFu;
            key = KeyBits(p >> 32);
        }
        if constexpr (kIndices) {
            if (keys_out) keys_out[k] = from_radix_key(key, kind, descending);
            gathered[k] = ValueBits(position);
        } else {
            keys_out[k] = from_radix_key(key, kind, descending);
            gathered[k] = values_in[position];
        }
    }, kPositionBits);
    if (in_place)
        parallel.for_ranges(n, kGrain, [&](uint64_t begin, uint64_t end) {
            std::memcpy(values_out + begin, gathered + begin, (end - begin) * sizeof(ValueBits));
        });
}

template <typename KeyBits, typename ValueBits, bool kIndices = false>
void sort_pairs(Parallel &parallel, Workspace &workspace, const SortRequest &request, uint64_t *measure) {
    if constexpr (sizeof(KeyBits) <= 4) {
        if (request.count <= (uint64_t(1) << 32))
            return sort_pairs_packed<KeyBits, ValueBits, uint64_t, kIndices>(parallel, workspace, request, measure);
    }
    sort_pairs_packed<KeyBits, ValueBits, Wide, kIndices>(parallel, workspace, request, measure);
}

// A sort by a bit range of the keys: the sort bits (core/key_transform.h
// sort_bits) packed with positions, sorted, then keys and values gathered by
// position into scratch and copied out (keys_out may be keys_in: the key is
// no longer the packed value, so it comes from the input). ValueBits void:
// keys only. kIndices (argsort): the positions are written straight to
// values_out as ValueBits (they alias no key), keys_out may be null.
template <typename KeyBits, typename ValueBits, typename Packed, bool kIndices = false>
void sort_bit_range_packed(Parallel &parallel, Workspace &workspace, const SortRequest &request,
                           uint64_t *measure) {
    constexpr bool kValues = !std::is_void_v<ValueBits> && !kIndices;
    using V = std::conditional_t<std::is_void_v<ValueBits>, uint8_t, ValueBits>;
    const uint64_t n = request.count;
    const uint64_t rounds = sort_scratch_elements(parallel, n);
    const char *what = "sort scratch (bit range)";
    const uint64_t keys_at = CheckedSize(bytes_of<Packed>(checked_add(n, rounds, what)), what).aligned(64).value();
    const uint64_t values_at = CheckedSize(keys_at, what).plus(bytes_of<KeyBits>(n)).aligned(64).value();
    const uint64_t total = checked_add(values_at, kValues ? bytes_of<V>(n) : 0, what);
    auto *base = static_cast<unsigned char *>(reserve_or_measure(workspace, total, measure));
    if (measure) return;
    auto *packed = reinterpret_cast<Packed *>(base);
    Packed *scratch = rounds ? packed + n : nullptr;
    auto *keys = reinterpret_cast<KeyBits *>(base + keys_at);
    auto *values = reinterpret_cast<V *>(base + values_at);
    const auto *keys_in = static_cast<const KeyBits *>(request.keys_in);
    const auto *values_in = static_cast<const V *>(request.values_in);
    const KeyKind kind = request.key_kind;
    const bool descending = request.descending;
    const uint32_t begin_bit = request.begin_bit, end_bit = sort_end_bit(request);
    parallel.for_ranges(n, kGrain, [&](uint64_t begin, uint64_t end) {
        for (uint64_t i = begin; i < end; ++i) {
            const uint64_t bits = sort_bits(to_radix_key(keys_in[i], kind, descending), begin_bit, end_bit);
            if constexpr (std::is_same_v<Packed, Wide>) packed[i] = Wide{i, bits};
            else packed[i] = (bits << 32) | i;
        }
    });
    auto *keys_out = static_cast<KeyBits *>(request.keys_out);
    auto *values_out = static_cast<V *>(request.values_out);
    constexpr unsigned kPositionBits = std::is_same_v<Packed, Wide> ? 64 : 32;
    sort_and_emit(parallel, packed, scratch, n, [&](uint64_t k, const Packed &p) {
        uint64_t position;
        if constexpr (std::is_same_v<Packed, Wide>) position = p.lo;
        else position = p & 0xFFFFFFFFu;
        if constexpr (kIndices) {
            if (keys_out) keys[k] = keys_in[position];
            values_out[k] = V(position);
        } else {
            keys[k] = keys_in[position];
            if constexpr (kValues) values[k] = values_in[position];
        }
    }, kPositionBits);
    if (kIndices && !keys_out) return;
    parallel.for_ranges(n, kGrain, [&](uint64_t begin, uint64_t end) {
        std::memcpy(keys_out + begin, keys + begin, (end - begin) * sizeof(KeyBits));
        if constexpr (kValues) std::memcpy(values_out + begin, values + begin, (end - begin) * sizeof(V));
    });
}

template <typename KeyBits, typename ValueBits, bool kIndices = false>
void sort_bit_range(Parallel &parallel, Workspace &workspace, const SortRequest &request, uint64_t *measure) {
    // 32 sort bits or fewer and positions below 2^32 pack into 64 bits.
    if (sort_end_bit(request) - request.begin_bit <= 32 && request.count <= (uint64_t(1) << 32))
        return sort_bit_range_packed<KeyBits, ValueBits, uint64_t, kIndices>(parallel, workspace, request, measure);
    sort_bit_range_packed<KeyBits, ValueBits, Wide, kIndices>(parallel, workspace, request, measure);
}

// Argsort: the positions are the indices (4- or 8-byte).
template <typename KeyBits>
void sort_indices(Parallel &parallel, Workspace &workspace, const SortRequest &request, uint64_t *measure) {
    const bool whole = sorts_whole_key(request);
    if (request.value_bytes == 4) {
        if (whole) return sort_pairs<KeyBits, uint32_t, true>(parallel, workspace, request, measure);
        return sort_bit_range<KeyBits, uint32_t, true>(parallel, workspace, request, measure);
    }
    if (request.value_bytes == 8) {
        if (whole) return sort_pairs<KeyBits, uint64_t, true>(parallel, workspace, request, measure);
        return sort_bit_range<KeyBits, uint64_t, true>(parallel, workspace, request, measure);
    }
    fail(GPUPRIM_ERROR_INTERNAL, "argsort: %u-byte indices", request.value_bytes);
}

template <typename KeyBits>
void sort_by_value_width(Parallel &parallel, Workspace &workspace, const SortRequest &request,
                         uint64_t *measure) {
    if (request.values_are_indices) return sort_indices<KeyBits>(parallel, workspace, request, measure);
    if (!sorts_whole_key(request)) {
        if (request.value_bytes == 0) return sort_bit_range<KeyBits, void>(parallel, workspace, request, measure);
        return dispatch_width(request.value_bytes, "sort: unsupported value width", [&](auto value_bits) {
            sort_bit_range<KeyBits, decltype(value_bits)>(parallel, workspace, request, measure);
        });
    }
    if (request.value_bytes == 0) return sort_keys<KeyBits>(parallel, workspace, request, measure);
    dispatch_width(request.value_bytes, "sort: unsupported value width", [&](auto value_bits) {
        sort_pairs<KeyBits, decltype(value_bits)>(parallel, workspace, request, measure);
    });
}

}  // namespace sort_detail
}  // namespace cpu
}  // namespace gpuprim
