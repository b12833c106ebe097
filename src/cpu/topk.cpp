// SPDX-License-Identifier: Apache-2.0
// The CPU top-k (gpuprim_topk, gpuprim_segmented_topk). Each key becomes its
// radix key (core/key_transform.h; descending is the complement) packed with
// its position in the segment, so the wanted result is exactly the m
// smallest packed values, m = min(k, length), in increasing order: packed
// values are unique, so the selection and the order are the stable sort's,
// ties lower position first.
//
// Where m is at most a quarter of a range of keys, the range is filtered in
// one read: a buffer of a few times m candidates takes every key at or
// below a limit (at first every key); when it fills, std::nth_element keeps
// its m smallest and the limit drops to just below the m-th smallest key (a
// later key equal to it has a later position, so it cannot come before).
// Keys are compared in blocks first (the least radix key of a block, a loop
// the compiler vectorizes, also for AVX2 where the CPU has it): most blocks
// hold no candidate. Where m is larger, the range is packed whole and
// selected with std::nth_element.
//
// Short segments run whole on one thread, many to a task (cpu/segmented.h).
// A long segment is cut into chunks: each chunk keeps its own m smallest in
// parallel, then one selection over the survivors (at most chunks * m)
// finds the segment's m. The result is unique, so it is the same for every
// thread count and chunking. The scratch (one packed value per key) is
// reserved from the workspace before anything is written.
#include "core/checked_size.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/key_transform.h"
#include "core/offsets_check.h"
#include "core/portable.h"
#include "cpu/segmented.h"
#include "cpu/sort.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <type_traits>
#include <vector>

namespace gpuprim {
namespace cpu {
namespace {

constexpr uint64_t kChunk = uint64_t(1) << 16;
// The filter: for ranges of at least kFilterMin keys and m at most a
// quarter of them; a buffer of kFilterSlack * m candidates (at least
// kFilterMinBuffer), keys probed kProbe at a time.
constexpr uint64_t kFilterMin = 1024;
constexpr uint64_t kFilterSlack = 8;
constexpr uint64_t kFilterMinBuffer = 512;
constexpr uint64_t kProbe = 32;

// p[0, n) loses all but its m smallest, which end up sorted in p[0, m).
template <typename Packed>
void keep_smallest(Packed *p, uint64_t n, uint64_t m) {
    if (m < n) std::nth_element(p, p + m, p + n, [](const Packed &a, const Packed &b) { return a < b; });
    small_sort(p, m);
}

// The first i from `from` (in steps of kProbe) whose block keys[i, i +
// kProbe) holds a radix key at or below limit, or the first i with fewer
// than kProbe keys left. One body, inlined into a plain and (x86) an AVX2
// entry, so the compiler vectorizes the block's minimum for each target.
template <typename Bits>
GPUPRIM_ALWAYS_INLINE uint64_t probe_blocks(const Bits *keys, uint64_t from, uint64_t n, const RadixKeyMap<Bits> &map,
                                            Bits limit) {
    uint64_t i = from;
    for (; i + kProbe <= n; i += kProbe) {
        Bits low = Bits(~Bits(0));
        for (uint64_t j = 0; j < kProbe; ++j) {
            const Bits key = map(keys[i + j]);
            low = key < low ? key : low;
        }
        if (low <= limit) break;
    }
    return i;
}
template <typename Bits>
uint64_t next_probe_hit(const Bits *keys, uint64_t from, uint64_t n, const RadixKeyMap<Bits> &map, Bits limit) {
    return probe_blocks(keys, from, n, map, limit);
}
#if defined(__x86_64__) && defined(__GNUC__)
template <typename Bits>
__attribute__((target("avx2"))) uint64_t next_probe_hit_avx2(const Bits *keys, uint64_t from, uint64_t n,
                                                             const RadixKeyMap<Bits> &map, Bits limit) {
    return probe_blocks(keys, from, n, map, limit);
}
#endif

// A bound shared by the chunks of one segment: a chunk whose buffer holds m
// keys at or below some key K tells the others that no key above K is
// among the segment's m smallest (a key equal to K may be: its position may
// come first).
struct SharedLimit {
    explicit SharedLimit(uint64_t wanted) : m(wanted) {}
    const uint64_t m;  // the segment's m: only a buffer of m keys lowers the bound
    std::atomic<uint64_t> key{~uint64_t(0)};
    void lower_to(uint64_t k) {
        uint64_t now = key.load(std::memory_order_relaxed);
        while (k < now && !key.compare_exchange_weak(now, k, std::memory_order_relaxed)) {
        }
    }
};

// The smallest packed values of keys[0, n) (positions first, first + 1,
// ...), sorted, into buffer: min(m, n) of them, or fewer where `shared` (if
// given) rules the others out; returns how many. buffer holds capacity
// values: more than m, or n; m >= 1.
template <typename KeyBits, typename Packed>
uint64_t filter_smallest(const TopkRequest &request, const KeyBits *keys, uint64_t first, uint64_t n, uint64_t m,
                         Packed *buffer, uint64_t capacity, SharedLimit *shared = nullptr) {
    const RadixKeyMap<KeyBits> map = radix_key_map<KeyBits>(request.key_kind, request.descending);
#if defined(__x86_64__) && defined(__GNUC__)
    const bool avx2 = __builtin_cpu_supports("avx2");
#endif
    constexpr KeyBits kTop = KeyBits(~KeyBits(0));
    KeyBits own = kTop;    // after a compaction: below this chunk's m-th key
    KeyBits limit = kTop;  // candidates: radix key <= limit
    auto refresh = [&] {
        limit = own;
        if (shared) limit = KeyBits(std::min<uint64_t>(limit, shared->key.load(std::memory_order_relaxed)));
    };
    uint64_t count = 0;
    bool more = true;  // false: no later key can be a candidate
    auto take = [&](uint64_t i) {
        const KeyBits key = map(keys[i]);
        if (key > limit) return;
        buffer[count++] = pack<Packed>(uint64_t(key), first + i);
        if (count < capacity) return;
        std::nth_element(buffer, buffer + (m - 1), buffer + count,
                         [](const Packed &a, const Packed &b) { return a < b; });
        count = m;
        const KeyBits kth = KeyBits(packed_bits(buffer[m - 1]));
        if (shared && m == shared->m) shared->lower_to(kth);
        if (kth == 0) more = false;
        own = KeyBits(kth - 1);
        refresh();
    };
    uint64_t i = 0;
    while (more && i < n) {
        if (shared) refresh();
#if defined(__x86_64__) && defined(__GNUC__)
        i = avx2 ? next_probe_hit_avx2(keys, i, n, map, limit) : next_probe_hit(keys, i, n, map, limit);
#else
        i = next_probe_hit(keys, i, n, map, limit);
#endif
        const uint64_t end = std::min(n, i + kProbe);
        for (; more && i < end; ++i) take(i);
    }
    const uint64_t kept = std::min(m, count);
    keep_smallest(buffer, count, kept);
    if (shared && kept == shared->m) shared->lower_to(packed_bits(buffer[kept - 1]));
    return kept;
}

// Whether keys[0, n) with m = min(k, n) are filtered (else packed whole).
inline bool filtered(uint64_t n, uint64_t m) { return n >= kFilterMin && m <= n / 4; }
inline uint64_t filter_capacity(uint64_t n, uint64_t m) {
    return std::min(n, std::max(kFilterMinBuffer, kFilterSlack * m));
}

template <typename KeyBits, typename Packed>
void pack_keys(const TopkRequest &request, const KeyBits *keys, uint64_t first, uint64_t n, Packed *to) {
    const RadixKeyMap<KeyBits> map = radix_key_map<KeyBits>(request.key_kind, request.descending);
    for (uint64_t i = 0; i < n; ++i) to[i] = pack<Packed>(uint64_t(map(keys[i])), first + i);
}

// Result j of the segment whose slots start at slot.
template <typename KeyBits, typename Packed>
void write_result(const TopkRequest &request, uint64_t slot, uint64_t j, const Packed &p) {
    if (request.keys_out)
        static_cast<KeyBits *>(request.keys_out)[slot + j] =
            from_radix_key(KeyBits(packed_bits(p)), request.key_kind, request.descending);
    if (request.indices) {
        if (request.index_bytes == 4) static_cast<uint32_t *>(request.indices)[slot + j] = uint32_t(packed_position(p));
        else static_cast<uint64_t *>(request.indices)[slot + j] = packed_position(p);
    }
}

template <typename KeyBits, typename Packed>
void write_results(const TopkRequest &request, const Packed *p, uint64_t m, uint64_t slot) {
    for (uint64_t j = 0; j < m; ++j) write_result<KeyBits>(request, slot, j, p[j]);
}

// One segment on the calling thread; scratch holds its length.
template <typename KeyBits, typename Packed>
void select_short(const TopkRequest &request, uint64_t begin, uint64_t n, uint64_t slot, Packed *scratch) {
    const uint64_t m = std::min(request.k, n);
    const auto *keys = static_cast<const KeyBits *>(request.keys_in) + begin;
    if (filtered(n, m)) {
        filter_smallest(request, keys, 0, n, m, scratch, filter_capacity(n, m));
    } else {
        pack_keys(request, keys, 0, n, scratch);
        keep_smallest(scratch, n, m);
    }
    write_results<KeyBits>(request, scratch, m, slot);
}

// One long segment on every thread.
// A long segment is filtered in at most this many pieces (about four a
// worker), so their counts are allocated before anything changes.
inline uint64_t pieces_per_segment(Parallel &parallel) { return 4 * uint64_t(std::max(1, parallel.workers())); }

// merge_scratch: sort_scratch_elements<Packed>(parallel, n) elements; piece_kept:
// pieces_per_segment(parallel) counts.
template <typename KeyBits, typename Packed>
void select_long(Parallel &parallel, const TopkRequest &request, uint64_t begin, uint64_t n, uint64_t slot,
                 Packed *scratch, Packed *merge_scratch, uint64_t *piece_kept) {
    const uint64_t m = std::min(request.k, n);
    const auto *keys = static_cast<const KeyBits *>(request.keys_in) + begin;
    const uint64_t chunks = ceil_div(n, kChunk);
    if (m > n / 4) {
        parallel.for_each(chunks, [&](size_t c) {
            const uint64_t first = c * kChunk;
            pack_keys(request, keys + first, first, std::min(kChunk, n - first), scratch + first);
        });
        if (m < n)
            std::nth_element(scratch, scratch + m, scratch + n, [](const Packed &a, const Packed &b) { return a < b; });
        const auto emit = [&](uint64_t first, const Packed *sorted, uint64_t count) {
            for (uint64_t i = 0; i < count; ++i) write_result<KeyBits>(request, slot, first + i, sorted[i]);
        };
        sort_and_emit(parallel, scratch, merge_scratch, m, SortedSink<Packed>(emit));
        return;
    }
    // Chunks of at least kChunk keys, about four a worker, each filtered
    // (the result does not depend on the cut); their limits shared.
    const uint64_t chunk = std::max(kChunk, ceil_div(n, pieces_per_segment(parallel)));
    const uint64_t pieces = ceil_div(n, chunk);
    uint64_t *const kept = piece_kept;
    SharedLimit shared(m);
    parallel.for_each(pieces, [&](size_t c) {
        const uint64_t first = c * chunk;
        const uint64_t length = std::min(chunk, n - first);
        kept[c] = filter_smallest(request, keys + first, first, length, std::min(m, length), scratch + first,
                                  filter_capacity(length, m), &shared);
    });
    // The survivors to the front, chunk by chunk (each chunk's lies at or
    // after the place it moves to).
    uint64_t survivors = 0;
    for (uint64_t c = 0; c < pieces; ++c) {
        std::memmove(scratch + survivors, scratch + c * chunk, kept[c] * sizeof(Packed));
        survivors += kept[c];
    }
    keep_smallest(scratch, survivors, m);
    write_results<KeyBits>(request, scratch, m, slot);
}

template <typename KeyBits, typename Packed>
void run_topk(Parallel &parallel, const TopkRequest &request, const SegmentLayout &layout, const SegmentPlan &plan,
              const std::function<bool(uint64_t)> &is_long, Packed *scratch, uint64_t *piece_kept) {
    // scratch: one packed value per key the segments cover, then the merge scratch.
    const SegmentSpan covered = covered_span(layout);
    Packed *merge_scratch = scratch + covered.length;
    parallel.for_each(plan.tasks(), [&](size_t t) {
        for (uint64_t s = plan.task_bounds[t]; s < plan.task_bounds[t + 1]; ++s) {
            const SegmentSpan span = segment_span(layout, s);
            if (span.length == 0 || is_long(span.length)) continue;
            select_short<KeyBits>(request, span.begin, span.length, s * request.k,
                                  scratch + (span.begin - covered.begin));
        }
    });
    for (const uint64_t s : plan.long_segments) {
        const SegmentSpan span = segment_span(layout, s);
        select_long<KeyBits>(parallel, request, span.begin, span.length, s * request.k,
                             scratch + (span.begin - covered.begin), merge_scratch, piece_kept);
    }
}

// The scratch bytes for segments of at most `longest` keys covering
// `covered` elements, `any_long` of them past kChunk.
uint64_t topk_bytes(const Parallel &parallel, const TopkRequest &request, uint64_t longest, uint64_t covered,
                    bool any_long) {
    // (radix key << 32 | position) while both fit 32 bits, else 128 bits.
    const bool packed64 = request.key_bytes <= 4 && longest <= (uint64_t(1) << 32);
    const uint64_t element = packed64 ? sizeof(uint64_t) : sizeof(Wide);
    // One packed value per key the segments cover (not the whole buffer,
    // which may be far longer), then the long segments' merge scratch.
    const uint64_t merge_elements =
        !any_long ? 0
        : packed64 ? sort_scratch_elements<uint64_t>(parallel, longest)
                   : sort_scratch_elements<Wide>(parallel, longest);
    return CheckedSize(covered, "top-k scratch").plus(merge_elements).times(element).value();
}

}  // namespace

void topk(Parallel &parallel, Workspace &workspace, const TopkRequest &request, const SegmentLayout &layout,
          uint64_t *measure) {
    const bool threaded = parallel.threads() > 1;
    const std::function<bool(uint64_t)> is_long = [&](uint64_t length) { return threaded && length > kChunk; };
    if (measure) {
        // No offsets read: a CSR segment may be as long as the data or the promise.
        const uint64_t longest = longest_segment_bound(layout);
        *measure = request.k == 0 || layout.data_count == 0 || layout.segments == 0
                       ? 0
                       : topk_bytes(parallel, request, longest, layout.data_count, is_long(longest));
        return;
    }
    // largest_index is UINT64_MAX without indices. Not request.indices: an
    // indices buffer of no elements (k = 0) has no data pointer, and its
    // dtype must still hold every position (as gpuprim_topk and rows check).
    check_offsets_on_host(layout, request.largest_index);
    const SegmentPlan plan = plan_segments(layout, is_long);
    if (request.k == 0 || layout.data_count == 0) return;
    const bool packed64 = request.key_bytes <= 4 && plan.longest <= (uint64_t(1) << 32);
    const uint64_t bytes = topk_bytes(parallel, request, plan.longest, covered_span(layout).length,
                                      !plan.long_segments.empty());
    // Allocated before the workspace grows: a failure here changes nothing.
    std::vector<uint64_t> piece_kept(plan.long_segments.empty() ? 0 : pieces_per_segment(parallel));
    void *scratch = workspace.reserve(bytes);
    dispatch_width(request.key_bytes, "top-k: unsupported key width", [&](auto key_bits) {
        using K = decltype(key_bits);
        if (packed64)
            run_topk<K>(parallel, request, layout, plan, is_long, static_cast<uint64_t *>(scratch), piece_kept.data());
        else run_topk<K>(parallel, request, layout, plan, is_long, static_cast<Wide *>(scratch), piece_kept.data());
    });
}

}  // namespace cpu
}  // namespace gpuprim
