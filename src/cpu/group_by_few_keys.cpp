// SPDX-License-Identifier: Apache-2.0
// Group-by on the CPU when the keys take few distinct values (at most
// kMostGroups): no sort. Each thread's stretch of the input is factorized
// with a hash table of its own (key bits -> a local id, first seen first),
// the distinct keys of all stretches are ranked in the sort's order (the
// groups' order), and a stable counting scatter writes the keys and the
// values in group order, each group's values in input order. That is what
// the sort path (group_by.cpp) hands reduce-by-key too, so the results are
// the same bits; the inverse is each element's rank, written after
// reduce-by-key has succeeded. Falls back (returns false, nothing written)
// as soon as a stretch or the whole input has more distinct keys: random
// keys overflow a table within its first few thousand elements.
//
// Why: pandas' groupby().sum() factorizes with a hash table in one pass;
// a sort of 10^7 (key, position) pairs and the gather cost more than that
// for 1,024 groups (bench/RESULTS.md, the CPU section of the 27th run).
#include "core/checked_size.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/key_transform.h"
#include "cpu/reduce_by_key.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace gpuprim {
namespace cpu {
namespace {

constexpr uint32_t kMostGroups = 4096;
constexpr uint32_t kTableSlots = 2 * kMostGroups;  // a power of two, at most half full
constexpr uint16_t kEmptySlot = 0xFFFF;
constexpr uint64_t kFewestElements = uint64_t(1) << 15;  // below: the sort path is as quick
constexpr uint64_t kSmallestStretch = uint64_t(1) << 16;

inline uint32_t slot_of(uint64_t bits) {
    return uint32_t((bits * 0x9E3779B97F4A7C15ull) >> 51) & (kTableSlots - 1);  // the top 13 bits
}

// Key bits to ids 0, 1, ... in the order first seen, at most kMostGroups of
// them: open addressing, linear probing, at most half full.
class KeyTable {
public:
    KeyTable() : slot_keys_(kTableSlots, 0), slot_ids_(kTableSlots, kEmptySlot) {}

    // bits' id (*added: first seen now), or kEmptySlot when bits is new and
    // the table already holds kMostGroups keys.
    uint16_t id_of(uint64_t bits, bool &added) {
        uint32_t slot = slot_of(bits);
        while (slot_ids_[slot] != kEmptySlot && slot_keys_[slot] != bits) slot = (slot + 1) & (kTableSlots - 1);
        added = slot_ids_[slot] == kEmptySlot;
        if (added) {
            if (size_ == kMostGroups) return kEmptySlot;
            slot_ids_[slot] = uint16_t(size_++);
            slot_keys_[slot] = bits;
        }
        return slot_ids_[slot];
    }

private:
    std::vector<uint64_t> slot_keys_;
    std::vector<uint16_t> slot_ids_;
    uint32_t size_ = 0;
};

// One stretch of the input: its distinct keys (by local id, first seen
// first), how often each occurs, and, once ranked, where each local id's
// elements go next.
struct Stretch {
    uint64_t begin = 0, end = 0;
    std::vector<uint64_t> keys;    // by local id: the key's bits
    std::vector<uint64_t> counts;  // by local id
    std::vector<uint32_t> ranks;   // by local id: the group
    std::vector<uint64_t> next;    // by local id: the next position in group order
    bool overflow = false;
};

// Local ids of [begin, end) into ids; false on more than kMostGroups keys.
template <typename Bits>
bool factorize(const Bits *keys, Stretch &s, uint16_t *ids) {
    KeyTable table;
    s.keys.reserve(kMostGroups);
    s.counts.reserve(kMostGroups);
    for (uint64_t i = s.begin; i < s.end; ++i) {
        bool added;
        const uint16_t id = table.id_of(keys[i], added);
        if (id == kEmptySlot) return false;
        if (added) {
            s.keys.push_back(keys[i]);
            s.counts.push_back(0);
        }
        ++s.counts[id];
        ids[i] = id;
    }
    return true;
}

// Every stretch's local ids ranked among all distinct keys in the sort's
// order; the groups' sizes into sizes. False on more than kMostGroups keys.
template <typename Bits>
bool rank_groups(std::vector<Stretch> &stretches, KeyKind kind, std::vector<uint64_t> &sizes) {
    KeyTable table;
    std::vector<Bits> radix_keys;  // by global id
    std::vector<std::vector<uint32_t>> global_of(stretches.size());
    for (size_t t = 0; t < stretches.size(); ++t) {
        for (const uint64_t bits : stretches[t].keys) {
            bool added;
            const uint16_t id = table.id_of(bits, added);
            if (id == kEmptySlot) return false;
            if (added) radix_keys.push_back(to_radix_key(Bits(bits), kind, false));
            global_of[t].push_back(id);
        }
    }
    // The radix transform is a bijection of the bits: no two distinct keys tie.
    std::vector<uint32_t> by_radix(radix_keys.size());
    for (uint32_t g = 0; g < by_radix.size(); ++g) by_radix[g] = g;
    std::sort(by_radix.begin(), by_radix.end(), [&](uint32_t a, uint32_t b) { return radix_keys[a] < radix_keys[b]; });
    std::vector<uint32_t> rank_of_global(radix_keys.size());
    for (uint32_t r = 0; r < by_radix.size(); ++r) rank_of_global[by_radix[r]] = r;
    sizes.assign(radix_keys.size(), 0);
    for (size_t t = 0; t < stretches.size(); ++t) {
        Stretch &s = stretches[t];
        s.ranks.resize(s.keys.size());
        for (size_t local = 0; local < s.keys.size(); ++local) {
            s.ranks[local] = rank_of_global[global_of[t][local]];
            sizes[s.ranks[local]] += s.counts[local];
        }
    }
    return true;
}

// The scratch: each element's id (16 bits), then the keys and the values
// grouped.
struct FewKeysScratch {
    uint64_t keys_at, values_at, total;
};
FewKeysScratch few_keys_scratch(const GroupByRequest &request, uint64_t key_bytes) {
    const uint64_t n = request.count;
    const uint32_t value_bytes = request.values ? static_cast<uint32_t>(dtype_size(request.value_dtype)) : 0;
    const char *what = "group-by scratch";
    FewKeysScratch scratch;
    scratch.keys_at = CheckedSize(n, what).times(sizeof(uint16_t)).aligned(64).value();
    scratch.values_at = CheckedSize(n, what).times(key_bytes).plus(scratch.keys_at).aligned(64).value();
    scratch.total = CheckedSize(n, what).times(value_bytes).plus(scratch.values_at).value();
    return scratch;
}

template <typename Bits>
bool group_by_few_keys_of(Parallel &parallel, Workspace &workspace, const GroupByRequest &request) {
    const uint64_t n = request.count;
    const uint32_t value_bytes = request.values ? static_cast<uint32_t>(dtype_size(request.value_dtype)) : 0;
    const uint64_t stretch_count =
        std::max<uint64_t>(1, std::min<uint64_t>(uint64_t(parallel.workers()), n / kSmallestStretch));
    const FewKeysScratch scratch = few_keys_scratch(request, sizeof(Bits));
    auto *base = static_cast<unsigned char *>(workspace.reserve(scratch.total));
    const uint64_t keys_at = scratch.keys_at, values_at = scratch.values_at;
    auto *ids = reinterpret_cast<uint16_t *>(base);
    auto *grouped_keys = reinterpret_cast<Bits *>(base + keys_at);
    unsigned char *grouped_values = value_bytes ? base + values_at : nullptr;

    std::vector<Stretch> stretches(static_cast<size_t>(stretch_count));
    for (uint64_t t = 0; t < stretch_count; ++t) {
        stretches[t].begin = n * t / stretch_count;
        stretches[t].end = n * (t + 1) / stretch_count;
    }
    const Bits *keys = static_cast<const Bits *>(request.keys);
    parallel.for_each(stretches.size(), [&](size_t t) { stretches[t].overflow = !factorize(keys, stretches[t], ids); });
    for (const Stretch &s : stretches)
        if (s.overflow) return false;
    std::vector<uint64_t> sizes;
    if (!rank_groups<Bits>(stretches, request.key_kind, sizes)) return false;

    // Group r's elements go to [start of r, ...), stretch by stretch in input order.
    std::vector<uint64_t> starts(sizes.size());
    uint64_t at = 0;
    for (size_t r = 0; r < sizes.size(); ++r) {
        starts[r] = at;
        at += sizes[r];
    }
    for (Stretch &s : stretches) {
        s.next.resize(s.keys.size());
        for (size_t local = 0; local < s.keys.size(); ++local) {
            s.next[local] = starts[s.ranks[local]];
            starts[s.ranks[local]] += s.counts[local];
        }
    }
    parallel.for_each(stretches.size(), [&](size_t t) {
        Stretch &s = stretches[t];
        if (!grouped_values) {
            for (uint64_t i = s.begin; i < s.end; ++i) grouped_keys[s.next[ids[i]]++] = keys[i];
            return;
        }
        dispatch_width(value_bytes, "group-by: value width", [&](auto tag) {
            using Value = decltype(tag);
            const Value *in = static_cast<const Value *>(request.values);
            Value *out = reinterpret_cast<Value *>(grouped_values);
            for (uint64_t i = s.begin; i < s.end; ++i) {
                const uint64_t to = s.next[ids[i]]++;
                grouped_keys[to] = keys[i];
                out[to] = in[i];
            }
        });
    });

    reduce_by_key(parallel, reduce_of_groups(request, grouped_keys, grouped_values));

    if (request.inverse) {
        parallel.for_each(stretches.size(), [&](size_t t) {
            const Stretch &s = stretches[t];
            if (request.inverse_bytes == 8) {
                auto *inverse = static_cast<uint64_t *>(request.inverse);
                for (uint64_t i = s.begin; i < s.end; ++i) inverse[i] = s.ranks[ids[i]];
            } else {
                auto *inverse = static_cast<uint32_t *>(request.inverse);
                for (uint64_t i = s.begin; i < s.end; ++i) inverse[i] = s.ranks[ids[i]];
            }
        });
    }
    return true;
}

// 1- and 2-byte keys sort by counting already (cpu/sort_narrow_keys.cpp).
bool few_keys_apply(const GroupByRequest &request) {
    return request.count >= kFewestElements && request.key_bytes >= 4;
}

}  // namespace

uint64_t group_by_few_keys_bytes(const GroupByRequest &request) {
    return few_keys_apply(request) ? few_keys_scratch(request, request.key_bytes).total : 0;
}

bool group_by_few_keys(Parallel &parallel, Workspace &workspace, const GroupByRequest &request) {
    if (!few_keys_apply(request)) return false;
    if (request.key_bytes == 4) return group_by_few_keys_of<uint32_t>(parallel, workspace, request);
    if (request.key_bytes == 8) return group_by_few_keys_of<uint64_t>(parallel, workspace, request);
    fail(GPUPRIM_ERROR_INTERNAL, "group-by: %u-byte keys", request.key_bytes);
}

}  // namespace cpu
}  // namespace gpuprim
