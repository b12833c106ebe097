// SPDX-License-Identifier: Apache-2.0
// Select, partition, unique and run-length encode on the CPU: stream
// compaction. The input is cut into pieces of kPiece elements (bounds that
// depend on the count only), each piece into blocks of kBlock. A block's
// mask says which elements are picked (select/partition: the keep rule of
// core/keep_rule.h, per dtype and kind; unique/runs: run heads or tails,
// keys by bits, per width); the picked elements, their values and positions
// are then copied to their places by byte width only.
//
// Where each piece writes is the number picked before it: on one worker
// (or one piece) a running count, on several a count pass over the pieces,
// their prefix sum, then every piece in parallel. The outputs are the same
// either way: each element has one place.
//
// Run-length encode's lengths: a first pass writes the starts (into
// 'lengths' itself when 'starts' is not wanted); then, every run reported,
// run r's length is start r + 1 (n after the last) - start r; only the
// runs of 2 or more, a second pass over the runs' last elements (tails: the
// r-th tail ends run r) makes it that last position + 1 - start r.
#include "cpu/select.h"

#include "core/dtype.h"
#include "core/error.h"
#include "core/keep_rule.h"
#include "core/portable.h"
#include "cpu/count_sink.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace gpuprim {
namespace cpu {
namespace {

constexpr uint64_t kBlock = 1024;               // elements of a mask (on the stack)
constexpr uint64_t kPiece = uint64_t(1) << 16;  // elements of a piece of work, a multiple of kBlock

// Which elements of [begin, begin + m) are picked: mask[k] is 1 or 0;
// returns how many are picked (m <= kBlock).
struct MaskSource;
using FillMask = uint32_t (*)(const MaskSource &source, uint64_t begin, uint64_t m, uint8_t *mask);

struct MaskSource {
    FillMask fill;
    const void *data;  // the input, the flags or the keys
    uint64_t count;    // the input's count (runs: where the last run ends)
    KeepRule rule;     // select / partition comparisons
};

// ---- Masks ----------------------------------------------------------------

// Each mask loop is written once (GPUPRIM_ALWAYS_INLINE) and compiled into
// a plain entry and, on x86-64, an AVX2 one (chosen when the CPU has it:
// 8-byte compares and wide stores vectorize there, not in baseline SSE2).
#if defined(__x86_64__) && defined(__GNUC__)
#  define GPUPRIM_SELECT_AVX2 1
#  define GPUPRIM_SELECT_AVX2_TARGET __attribute__((target("avx2")))
#else
#  define GPUPRIM_SELECT_AVX2 0
#endif

bool use_avx2() {
#if GPUPRIM_SELECT_AVX2
    return __builtin_cpu_supports("avx2");
#else
    return false;
#endif
}

#if !GPUPRIM_SELECT_AVX2
#  define GPUPRIM_SELECT_AVX2_TARGET
#endif

template <typename T, gpuprim_keep_t kKind>
GPUPRIM_ALWAYS_INLINE uint32_t compare_body(const MaskSource &source, uint64_t begin, uint64_t m, uint8_t *mask) {
    const KeepTest<T> test = keep_test_of<T>(source.rule);
    const T *x = static_cast<const T *>(source.data) + begin;
    uint32_t picked = 0;
    for (uint64_t k = 0; k < m; ++k) {
        const uint8_t keep = compare_keeps<kKind>(keep_value(x[k]), test.scalar, test.scalar_high) ? 1 : 0;
        mask[k] = keep;
        picked += keep;
    }
    return picked;
}

template <typename T, gpuprim_keep_t kKind>
uint32_t fill_compare(const MaskSource &source, uint64_t begin, uint64_t m, uint8_t *mask) {
    return compare_body<T, kKind>(source, begin, m, mask);
}
template <typename T, gpuprim_keep_t kKind>
GPUPRIM_SELECT_AVX2_TARGET uint32_t fill_compare_avx2(const MaskSource &source, uint64_t begin, uint64_t m,
                                                      uint8_t *mask) {
    return compare_body<T, kKind>(source, begin, m, mask);
}

// flag_is_set (core/keep_rule.h) with the width known: nonzero bits keep.
template <typename Flag>
GPUPRIM_ALWAYS_INLINE uint32_t flags_body(const MaskSource &source, uint64_t begin, uint64_t m, uint8_t *mask) {
    const Flag *f = static_cast<const Flag *>(source.data) + begin;
    uint32_t picked = 0;
    for (uint64_t k = 0; k < m; ++k) {
        const uint8_t keep = f[k] != 0 ? 1 : 0;
        mask[k] = keep;
        picked += keep;
    }
    return picked;
}

template <typename Flag>
uint32_t fill_flags(const MaskSource &source, uint64_t begin, uint64_t m, uint8_t *mask) {
    return flags_body<Flag>(source, begin, m, mask);
}
template <typename Flag>
GPUPRIM_SELECT_AVX2_TARGET uint32_t fill_flags_avx2(const MaskSource &source, uint64_t begin, uint64_t m,
                                                    uint8_t *mask) {
    return flags_body<Flag>(source, begin, m, mask);
}

template <typename T, gpuprim_keep_t kKind>
FillMask compare_entry(bool avx2) {
    return avx2 ? fill_compare_avx2<T, kKind> : fill_compare<T, kKind>;
}

template <typename T>
FillMask compare_fill(gpuprim_keep_t kind, bool avx2) {
    switch (kind) {
    case GPUPRIM_KEEP_LESS: return compare_entry<T, GPUPRIM_KEEP_LESS>(avx2);
    case GPUPRIM_KEEP_LESS_EQUAL: return compare_entry<T, GPUPRIM_KEEP_LESS_EQUAL>(avx2);
    case GPUPRIM_KEEP_GREATER: return compare_entry<T, GPUPRIM_KEEP_GREATER>(avx2);
    case GPUPRIM_KEEP_GREATER_EQUAL: return compare_entry<T, GPUPRIM_KEEP_GREATER_EQUAL>(avx2);
    case GPUPRIM_KEEP_EQUAL: return compare_entry<T, GPUPRIM_KEEP_EQUAL>(avx2);
    case GPUPRIM_KEEP_NOT_EQUAL: return compare_entry<T, GPUPRIM_KEEP_NOT_EQUAL>(avx2);
    case GPUPRIM_KEEP_IN_RANGE: return compare_entry<T, GPUPRIM_KEEP_IN_RANGE>(avx2);
    case GPUPRIM_KEEP_NAN: return compare_entry<T, GPUPRIM_KEEP_NAN>(avx2);
    case GPUPRIM_KEEP_NOT_NAN: return compare_entry<T, GPUPRIM_KEEP_NOT_NAN>(avx2);
    case GPUPRIM_KEEP_FLAGGED: break;
    }
    fail(GPUPRIM_ERROR_INTERNAL, "select: keep kind %d", static_cast<int>(kind));
}

MaskSource keep_source(const SelectRequest &request) {
    MaskSource source{};
    source.count = request.count;
    source.rule = request.keep;
    const bool avx2 = use_avx2();
    if (request.keep.kind == GPUPRIM_KEEP_FLAGGED) {
        source.data = request.keep.flags;
        source.fill = dispatch_width(request.keep.flag_bytes, "select: flag width", [&](auto tag) -> FillMask {
            return avx2 ? fill_flags_avx2<decltype(tag)> : fill_flags<decltype(tag)>;
        });
        return source;
    }
    source.data = request.input;
    source.fill = dispatch_dtype(request.dtype,
                                 [&](auto tag) { return compare_fill<decltype(tag)>(request.keep.kind, avx2); });
    return source;
}

// Runs of keys with equal bits. A head starts a run, a tail ends one;
// kNonTrivial: only those of runs of 2 or more (a head that is not also a
// tail, and the other way round).
template <typename Bits, bool kTail, bool kNonTrivial>
GPUPRIM_ALWAYS_INLINE uint32_t run_edges_body(const MaskSource &source, uint64_t begin, uint64_t m, uint8_t *mask) {
    const Bits *x = static_cast<const Bits *>(source.data);
    const uint64_t n = source.count;
    // Elements 0 and n - 1 start and end a run whatever their neighbours:
    // the loop compares with both neighbours of the others only, so it has
    // no per-element bounds test (and vectorizes).
    const uint64_t first = begin == 0 ? 1 : 0;
    const uint64_t last = begin + m == n ? m - 1 : m;  // the loop's end (exclusive)
    uint32_t picked = 0;
    for (uint64_t k = first; k < last; ++k) {
        const uint64_t i = begin + k;
        const bool head = x[i] != x[i - 1];
        const bool tail = x[i] != x[i + 1];
        const bool edge = kNonTrivial ? (kTail ? tail && !head : head && !tail) : (kTail ? tail : head);
        mask[k] = edge ? 1 : 0;
        picked += edge ? 1 : 0;
    }
    for (uint64_t k : {uint64_t(0), m - 1}) {
        if (k >= first && k < last) continue;  // done above
        const uint64_t i = begin + k;
        const bool head = i == 0 || x[i] != x[i - 1];
        const bool tail = i + 1 == n || x[i] != x[i + 1];
        const bool edge = kNonTrivial ? (kTail ? tail && !head : head && !tail) : (kTail ? tail : head);
        mask[k] = edge ? 1 : 0;
        picked += edge ? 1 : 0;
        if (m == 1) break;  // k = 0 and m - 1 are one element
    }
    return picked;
}

template <typename Bits, bool kTail, bool kNonTrivial>
uint32_t fill_run_edges(const MaskSource &source, uint64_t begin, uint64_t m, uint8_t *mask) {
    return run_edges_body<Bits, kTail, kNonTrivial>(source, begin, m, mask);
}
template <typename Bits, bool kTail, bool kNonTrivial>
GPUPRIM_SELECT_AVX2_TARGET uint32_t fill_run_edges_avx2(const MaskSource &source, uint64_t begin, uint64_t m,
                                                        uint8_t *mask) {
    return run_edges_body<Bits, kTail, kNonTrivial>(source, begin, m, mask);
}

template <typename Bits, bool kTail, bool kNonTrivial>
FillMask run_entry(bool avx2) {
    return avx2 ? fill_run_edges_avx2<Bits, kTail, kNonTrivial> : fill_run_edges<Bits, kTail, kNonTrivial>;
}

MaskSource run_source(const RunsRequest &request, bool tails) {
    MaskSource source{};
    source.data = request.keys;
    source.count = request.count;
    const bool avx2 = use_avx2();
    source.fill = dispatch_width(request.key_bytes, "runs: key width", [&](auto tag) -> FillMask {
        using Bits = decltype(tag);
        if (tails) return request.non_trivial_only ? run_entry<Bits, true, true>(avx2) : run_entry<Bits, true, false>(avx2);
        return request.non_trivial_only ? run_entry<Bits, false, true>(avx2) : run_entry<Bits, false, false>(avx2);
    });
    return source;
}

// ---- Compaction by width --------------------------------------------------

// The last k < m with mask[k] == side (one exists).
uint64_t last_picked(const uint8_t *mask, uint64_t m, uint8_t side) {
    uint64_t k = m - 1;
    while (mask[k] != side) --k;
    return k;
}

// Eight mask bytes of 1: the compactions read the mask eight bytes at a
// time and skip eight with nothing of their side, so a sparse mask (few
// runs in many elements, few kept) costs little more than its reading.
constexpr uint64_t kAllOnes = 0x0101010101010101ull;

// dst[j] = src[k] for the j-th k with mask[k] == side, for the `picked`
// such k. Branch-free within eight elements: one not picked is written
// where the next picked one goes, so the last eight stop at the last picked
// one and nothing is written past dst[picked - 1].
template <typename Bits>
void compact(const Bits *src, const uint8_t *mask, uint64_t m, uint8_t side, uint64_t picked, Bits *dst) {
    if (picked == 0) return;
    const uint64_t last = last_picked(mask, m, side);
    const uint64_t skip = side ? 0 : kAllOnes;  // eight mask bytes with nothing of this side
    uint64_t j = 0, k = 0;
    for (; k + 8 <= last; k += 8) {
        uint64_t word;
        std::memcpy(&word, mask + k, sizeof word);
        if (word == skip) continue;
        for (uint64_t e = k; e < k + 8; ++e) {
            dst[j] = src[e];
            j += mask[e] == side ? 1 : 0;
        }
    }
    for (; k <= last; ++k) {
        dst[j] = src[k];
        j += mask[k] == side ? 1 : 0;
    }
}

// compact() of the elements' positions begin + k.
template <typename U>
void compact_positions(uint64_t begin, const uint8_t *mask, uint64_t m, uint64_t picked, U *dst) {
    if (picked == 0) return;
    const uint64_t last = last_picked(mask, m, 1);
    uint64_t j = 0, k = 0;
    for (; k + 8 <= last; k += 8) {
        uint64_t word;
        std::memcpy(&word, mask + k, sizeof word);
        if (word == 0) continue;
        for (uint64_t e = k; e < k + 8; ++e) {
            dst[j] = U(begin + e);
            j += mask[e];
        }
    }
    for (; k <= last; ++k) {
        dst[j] = U(begin + k);
        j += mask[k];
    }
}

// compact() of `bytes`-wide elements: src and dst at element 0 of the
// arrays, the block at begin, the picked ones to dst + at.
void compact_bytes(uint32_t bytes, const void *src, uint64_t begin, const uint8_t *mask, uint64_t m, uint8_t side,
                   uint64_t picked, void *dst, uint64_t at) {
    switch (bytes) {
    case 1: return compact(static_cast<const uint8_t *>(src) + begin, mask, m, side, picked, static_cast<uint8_t *>(dst) + at);
    case 2:
        return compact(static_cast<const uint16_t *>(src) + begin, mask, m, side, picked,
                       static_cast<uint16_t *>(dst) + at);
    case 4:
        return compact(static_cast<const uint32_t *>(src) + begin, mask, m, side, picked,
                       static_cast<uint32_t *>(dst) + at);
    case 8:
        return compact(static_cast<const uint64_t *>(src) + begin, mask, m, side, picked,
                       static_cast<uint64_t *>(dst) + at);
    }
    fail(GPUPRIM_ERROR_INTERNAL, "select: %u-byte elements", bytes);
}

void compact_position_bytes(uint32_t bytes, uint64_t begin, const uint8_t *mask, uint64_t m, uint64_t picked,
                            void *dst, uint64_t at) {
    if (bytes == 4) return compact_positions(begin, mask, m, picked, static_cast<uint32_t *>(dst) + at);
    if (bytes == 8) return compact_positions(begin, mask, m, picked, static_cast<uint64_t *>(dst) + at);
    fail(GPUPRIM_ERROR_INTERNAL, "select: %u-byte positions", bytes);
}

uint64_t read_index(const void *indices, uint32_t bytes, uint64_t r) {
    if (bytes == 4) return static_cast<const uint32_t *>(indices)[r];
    return static_cast<const uint64_t *>(indices)[r];
}

void write_index(void *indices, uint32_t bytes, uint64_t r, uint64_t value) {
    if (bytes == 4) static_cast<uint32_t *>(indices)[r] = uint32_t(value);
    else static_cast<uint64_t *>(indices)[r] = value;
}

// ---- Pieces ---------------------------------------------------------------

// A block's mask (bytes of 0 or 1) as bits, one word for 64 elements, and
// back, 8 elements a multiply (little-endian, as the library assumes): byte
// k of a word of 8 mask bytes lands on
// bit 56 + k of its product with kPackBytes (no two partial products
// overlap below bit 64), and bit k of a mask byte, spread to every byte by
// kSpreadByte and kept in byte k by kBitOfByte, sets that byte's top bit
// once 0x7F is added. (The scalar loops they replace made the parallel
// path, which packs in the count pass and unpacks in the emit pass, slower
// on 2 threads than one thread's single pass: bench/RESULTS.md.)
constexpr uint64_t kPackBytes = 0x0102040810204080ull;
constexpr uint64_t kSpreadByte = 0x0101010101010101ull;
constexpr uint64_t kBitOfByte = 0x8040201008040201ull;

GPUPRIM_ALWAYS_INLINE uint64_t pack_8(const uint8_t *mask) {
    uint64_t bytes;
    std::memcpy(&bytes, mask, 8);
    return (bytes * kPackBytes) >> 56;
}

GPUPRIM_ALWAYS_INLINE void unpack_8(uint64_t byte, uint8_t *mask) {
    const uint64_t bytes = ((((byte * kSpreadByte) & kBitOfByte) + 0x7F7F7F7F7F7F7F7Full) >> 7) & kSpreadByte;
    std::memcpy(mask, &bytes, 8);
}

void pack_mask(const uint8_t *mask, uint64_t m, uint64_t *words) {
    for (uint64_t w = 0; w * 64 < m; ++w) {
        const uint64_t length = std::min<uint64_t>(64, m - w * 64);
        const uint8_t *bytes = mask + w * 64;
        uint64_t bits = 0;
        uint64_t k = 0;
        for (; k + 8 <= length; k += 8) bits |= pack_8(bytes + k) << k;
        for (; k < length; ++k) bits |= uint64_t(bytes[k]) << k;
        words[w] = bits;
    }
}

// The masks of the emit pass: where there was a count pass, its masks kept
// as bits (the emit pass then reads n / 8 bytes, not the input again: most
// of the work where few elements are picked, as unique's few runs), else
// made anew.
struct Masks {
    const MaskSource &source;
    const uint64_t *bits;  // nullptr: made anew

    uint64_t load(uint64_t begin, uint64_t m, uint8_t *mask) const {
        if (!bits) return source.fill(source, begin, m, mask);
        const uint64_t *words = bits + begin / 64;  // blocks start on multiples of 64
        uint64_t picked = 0;
        for (uint64_t w = 0; w * 64 < m; ++w) {
            const uint64_t length = std::min<uint64_t>(64, m - w * 64), word = words[w];
            uint8_t *out = mask + w * 64;
            if (word == 0) {
                std::memset(out, 0, length);
                continue;
            }
            picked += uint64_t(__builtin_popcountll(word));
            uint64_t k = 0;
            for (; k + 8 <= length; k += 8) unpack_8((word >> k) & 0xFF, out + k);
            for (; k < length; ++k) out[k] = uint8_t((word >> k) & 1);
        }
        return picked;
    }
};

// How many of [begin, end) source picks; the masks to bits (bits + begin / 64).
uint64_t count_picked(const MaskSource &source, uint64_t begin, uint64_t end, uint64_t *bits) {
    uint8_t mask[kBlock];
    uint64_t picked = 0;
    for (uint64_t b = begin; b < end; b += kBlock) {
        const uint64_t m = std::min(kBlock, end - b);
        picked += source.fill(source, b, m, mask);
        pack_mask(mask, m, bits + b / 64);
    }
    return picked;
}

// What over_pieces needs besides the data when it runs the pieces in
// parallel (a count pass first): the pieces' running counts and the masks
// as bits. Made before a call writes anything, so that a shortage is an
// error with every output unchanged (a call with two passes makes both
// first). Empty when the pieces run in one pass.
struct PieceScratch {
    std::vector<uint64_t> before;  // pieces + 1 running counts
    std::vector<uint64_t> bits;    // the masks, a bit an element
    PieceScratch(const Parallel &parallel, uint64_t n, bool total_first) {
        const uint64_t pieces = ceil_div(n, kPiece);
        if (!total_first && (parallel.workers() <= 1 || pieces <= 1)) return;
        before.assign(pieces + 1, 0);
        bits.resize(ceil_div(n, 64));
    }
    bool one_pass() const { return before.empty(); }
};

// Calls emit(begin, end, before, masks) for each piece [begin, end) of
// [0, n), before = how many source picks ahead of it, masks its blocks'
// masks; emit returns how many it picked. Returns the total. total_first:
// the total is needed before any piece is emitted (partition's others
// start there): *total is set first. scratch: made for the same n and
// total_first.
template <typename Emit>
uint64_t over_pieces(Parallel &parallel, const MaskSource &source, uint64_t n, PieceScratch &scratch,
                     uint64_t *total, Emit &&emit) {
    static_assert(kPiece % 64 == 0 && kBlock % 64 == 0, "blocks start on words of the bit masks");
    const uint64_t pieces = ceil_div(n, kPiece);
    const auto bounds = [&](uint64_t p, uint64_t &begin, uint64_t &end) {
        begin = p * kPiece;
        end = std::min(n, begin + kPiece);
    };
    if (scratch.one_pass()) {
        const Masks anew{source, nullptr};
        uint64_t before = 0;
        for (uint64_t p = 0; p < pieces; ++p) {
            uint64_t begin, end;
            bounds(p, begin, end);
            before += emit(begin, end, before, anew);
        }
        *total = before;
        return before;
    }
    std::vector<uint64_t> &before = scratch.before, &bits = scratch.bits;
    parallel.for_each(static_cast<size_t>(pieces), [&](size_t p) {
        uint64_t begin, end;
        bounds(p, begin, end);
        before[p + 1] = count_picked(source, begin, end, bits.data());
    });
    for (uint64_t p = 0; p < pieces; ++p) before[p + 1] += before[p];
    *total = before[pieces];
    const Masks kept{source, bits.data()};
    parallel.for_each(static_cast<size_t>(pieces), [&](size_t p) {
        uint64_t begin, end;
        bounds(p, begin, end);
        emit(begin, end, before[p], kept);
    });
    return before[pieces];
}

// Every run's length when every run is reported: the next run's start (n
// after the last) minus its own. starts may be the lengths themselves:
// each piece of runs goes up from its first, reading start r + 1 before
// writing r, and the start just past each piece is read before any piece
// writes. next_start: room for ceil(n / kPiece) starts (runs <= n), made
// before the call wrote anything.
void lengths_from_starts(Parallel &parallel, const void *starts, uint32_t start_bytes, void *lengths,
                         uint32_t length_bytes, uint64_t runs, uint64_t n, std::vector<uint64_t> &next_start) {
    const uint64_t pieces = ceil_div(runs, kPiece);
    for (uint64_t p = 0; p < pieces; ++p) {
        const uint64_t end = std::min(runs, (p + 1) * kPiece);
        next_start[p] = end < runs ? read_index(starts, start_bytes, end) : n;
    }
    parallel.for_each(static_cast<size_t>(pieces), [&](size_t p) {
        const uint64_t begin = p * kPiece, end = std::min(runs, begin + kPiece);
        for (uint64_t r = begin; r < end; ++r) {
            const uint64_t next = r + 1 < end ? read_index(starts, start_bytes, r + 1) : next_start[p];
            write_index(lengths, length_bytes, r, next - read_index(starts, start_bytes, r));
        }
    });
}

}  // namespace

void select(Parallel &parallel, const SelectRequest &request) {
    const MaskSource source = keep_source(request);
    const uint32_t element_bytes = static_cast<uint32_t>(dtype_size(request.dtype));
    const uint64_t n = request.count;
    uint64_t total = 0;
    PieceScratch scratch(parallel, n, request.partition);
    over_pieces(parallel, source, n, scratch, &total,
                [&](uint64_t begin, uint64_t end, uint64_t before, const Masks &masks) {
        uint8_t mask[kBlock];
        uint64_t kept = before;                        // where the block's kept elements go
        uint64_t others = total + (begin - before);    // partition: where its others go
        for (uint64_t b = begin; b < end; b += kBlock) {
            const uint64_t m = std::min(kBlock, end - b);
            const uint64_t picked = masks.load(b, m, mask);
            if (request.output) compact_bytes(element_bytes, request.input, b, mask, m, 1, picked, request.output, kept);
            if (request.values_out)
                compact_bytes(request.value_bytes, request.values, b, mask, m, 1, picked, request.values_out, kept);
            if (request.positions) compact_position_bytes(request.position_bytes, b, mask, m, picked, request.positions, kept);
            if (request.partition) {
                compact_bytes(element_bytes, request.input, b, mask, m, 0, m - picked, request.output, others);
                if (request.values_out)
                    compact_bytes(request.value_bytes, request.values, b, mask, m, 0, m - picked, request.values_out,
                                  others);
            }
            kept += picked;
            others += m - picked;
        }
        return kept - before;
    });
    write_count(request.kept, total);
}

void runs(Parallel &parallel, const RunsRequest &request) {
    const uint64_t n = request.count;
    const MaskSource heads = run_source(request, false);
    // Run-length encode without starts: the starts go to the lengths first.
    void *starts = request.starts ? request.starts : request.lengths;
    const uint32_t start_bytes = request.starts ? request.start_bytes : request.length_bytes;
    uint64_t total = 0;
    // Everything both passes need, before the first writes.
    PieceScratch head_scratch(parallel, n, false);
    std::vector<uint64_t> next_start;
    std::unique_ptr<PieceScratch> tail_scratch;
    if (request.lengths && !request.non_trivial_only) next_start.resize(ceil_div(n, kPiece));
    else if (request.lengths) tail_scratch = std::make_unique<PieceScratch>(parallel, n, false);
    over_pieces(parallel, heads, n, head_scratch, &total, [&](uint64_t begin, uint64_t end, uint64_t before,
                                                       const Masks &masks) {
        uint8_t mask[kBlock];
        uint64_t at = before;
        for (uint64_t b = begin; b < end; b += kBlock) {
            const uint64_t m = std::min(kBlock, end - b);
            const uint64_t picked = masks.load(b, m, mask);
            if (request.keys_out) compact_bytes(request.key_bytes, request.keys, b, mask, m, 1, picked, request.keys_out, at);
            if (request.values_out)
                compact_bytes(request.value_bytes, request.values, b, mask, m, 1, picked, request.values_out, at);
            if (starts) compact_position_bytes(start_bytes, b, mask, m, picked, starts, at);
            at += picked;
        }
        return at - before;
    });
    if (request.lengths && !request.non_trivial_only) {
        lengths_from_starts(parallel, starts, start_bytes, request.lengths, request.length_bytes, total, n, next_start);
    } else if (request.lengths) {
        const MaskSource tails = run_source(request, true);
        uint64_t tail_total = 0;
        over_pieces(parallel, tails, n, *tail_scratch, &tail_total, [&](uint64_t begin, uint64_t end, uint64_t before,
                                                                const Masks &masks) {
            uint8_t mask[kBlock];
            uint64_t r = before;
            for (uint64_t b = begin; b < end; b += kBlock) {
                const uint64_t m = std::min(kBlock, end - b);
                if (masks.load(b, m, mask) == 0) continue;
                for (uint64_t k = 0; k < m; ++k) {
                    if (!mask[k]) continue;
                    const uint64_t start = read_index(starts, start_bytes, r);
                    write_index(request.lengths, request.length_bytes, r, b + k + 1 - start);
                    ++r;
                }
            }
            return r - before;
        });
        if (tail_total != total)
            fail(GPUPRIM_ERROR_INTERNAL, "run-length encode: %llu run heads but %llu tails",
                 static_cast<unsigned long long>(total), static_cast<unsigned long long>(tail_total));
    }
    write_count(request.runs, total);
}

}  // namespace cpu
}  // namespace gpuprim
