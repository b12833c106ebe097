// SPDX-License-Identifier: Apache-2.0
// The interface core uses to reach a backend. Arguments are validated before
// they get here (src/api): pointers are non-NULL where counts are non-zero,
// dtypes and enums are known, counts match. Backends report failures by
// throwing gpuprim::Error.
#pragma once

#include "core/backend_calls.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/histogram_bins.h"
#include "core/host_allocator.h"
#include "core/offsets_check.h"
#include "core/portable.h"

// The requests use the header's experimental types (gpuprim_keep_t): every
// includer sees them, whatever it defined (test_backend_ops, the kernel
// checkers include this header without the library's definitions).
#ifndef GPUPRIM_EXPERIMENTAL_API
#  define GPUPRIM_EXPERIMENTAL_API
#endif
#include <gpuprim/gpuprim.h>

#include <cstdint>
#include <memory>
#include <string>

namespace gpuprim {

// One sort request, by byte width: key and value bits are carried, and the
// key kind plus the order select the bit transform.
struct SortRequest {
    KeyKind key_kind;
    uint32_t key_bytes;    // 1, 2, 4 or 8
    uint32_t begin_bit;    // sort by bits [begin_bit, end_bit) of the radix key
    uint32_t end_bit;      // begin_bit < end_bit <= key_bytes * 8; 0: key_bytes * 8
    bool descending;
    const void *keys_in;
    void *keys_out;        // may equal keys_in
    uint32_t value_bytes;  // 0 (keys only), 1, 2, 4 or 8
    const void *values_in;
    void *values_out;      // may equal values_in
    uint64_t count;
    // Argsort: values_in is NULL and the values are generated, each key's
    // position (within its segment for a segmented sort), value_bytes 4 or 8.
    // keys_out may then be NULL (the sorted keys are not wanted).
    bool values_are_indices = false;
    // Set by a backend that gave an argsort's NULL keys_out scratch memory
    // of its own: the last pass need not write the sorted keys there.
    bool keys_discarded = false;
    // Argsort: the largest index the indices' dtype holds (I32: 2^31 - 1).
    // The API checks it where the longest segment is known (flat argsort,
    // uniform rows); with CSR offsets the backend checks the longest segment
    // against it before writing anything.
    uint64_t largest_index = UINT64_MAX;
};

// Backend::merge_sorted_runs's run offsets as both backends check them
// (the callers build them; a wrong plan is a library bug): false when there
// is nothing to merge (no runs of no elements), INTERNAL when the runs do not
// lie back to back over the request's elements or the request asks for
// generated indices.
inline bool merge_runs_are_valid(const SortRequest &request, const uint64_t *run_starts, uint32_t runs) {
    if (request.values_are_indices) fail(GPUPRIM_ERROR_INTERNAL, "merge_sorted_runs: generated indices");
    if (runs == 0 && request.count == 0) return false;
    if (runs == 0 || run_starts[0] != 0 || run_starts[runs] != request.count)
        fail(GPUPRIM_ERROR_INTERNAL, "merge_sorted_runs: the runs do not cover the %llu elements",
             static_cast<unsigned long long>(request.count));
    for (uint32_t r = 0; r < runs; ++r)
        if (run_starts[r + 1] < run_starts[r])
            fail(GPUPRIM_ERROR_INTERNAL, "merge_sorted_runs: run %u ends before it starts", r);
    return true;
}

// One top-k request (gpuprim_topk, gpuprim_segmented_topk): the first k of
// a stable sort of each segment's keys in the request's order, with their
// positions within the segment. Segment s writes outputs [s * k, s * k + m),
// m = min(k, its length); nothing else is written.
struct TopkRequest {
    KeyKind key_kind;
    uint32_t key_bytes;    // 1, 2, 4 or 8
    bool descending;       // the k largest; else the k smallest
    const void *keys_in;
    uint64_t k;            // >= 1 when a backend is called with segments to fill
    void *keys_out;        // nullptr: keys not wanted
    void *indices;         // nullptr: indices not wanted
    uint32_t index_bytes;  // 4 or 8 when indices are wanted
    // The largest index the indices' dtype holds; with CSR offsets the
    // backend checks the longest segment against it before writing anything.
    uint64_t largest_index = UINT64_MAX;
};

// One searchsorted request (gpuprim_searchsorted, _rows), by key width: for each
// query, the number of the `count` sorted keys that come before it in the
// order of to_radix_key(key, key_kind, descending) (core/key_transform.h):
// strictly before (lower bound), or before or equal (upper bound). The keys
// are sorted in that order (not checked: an unsorted buffer still gives
// indices in [0, count]).
struct SearchRequest {
    KeyKind key_kind;
    uint32_t key_bytes;  // 1, 2, 4 or 8
    bool descending;
    bool upper;          // SIDE_RIGHT
    const void *sorted;
    uint64_t count;
    const void *queries;
    uint64_t query_count;
    void *indices;        // query_count indices; count fits them
    uint32_t index_bytes;  // 4 or 8
    // Rows (gpuprim_searchsorted_rows): `rows` rows of `count` keys and of
    // `query_count` queries (and indices) each, row r searched on its own;
    // 1 for the flat call.
    uint64_t rows = 1;
};

// One histogram request (gpuprim_histogram_even, gpuprim_histogram_range,
// gpuprim_bincount and their _rows forms): counts[b] = the number of input
// elements whose bin is b (core/histogram_bins.h: even_bin with `even`, or
// range_bin among the bins + 1 edges), every count written (U32 counts wrap
// modulo 2^32). With rows > 1, row r's counts are those of its own count
// elements: counts[r * bins + b] counts input[r * count .. (r + 1) * count)
// (the API checked rows * count and rows * bins fit).
struct HistogramRequest {
    gpuprim_dtype_t dtype;
    const void *input;     // rows * count elements, row-major
    uint64_t count;        // elements of each row
    uint64_t bins;         // 1 to 2^32 bins of each row
    void *counts;          // rows * bins counts
    uint32_t count_bytes;  // 4 or 8
    const void *edges;     // bins + 1 edges of dtype in backend memory, or nullptr: even bins
    EvenBins even;
    uint64_t rows = 1;     // >= 1 (the flat calls: 1)
};

// One merge request (gpuprim_merge): the stable merge of two sorted runs in
// separate buffers, a (count_a keys) and b (count_b keys), each sorted by
// to_radix_key(key, key_kind, descending) (core/key_transform.h), into
// keys_out (count_a + count_b keys; ties: a first, then position), values
// carried along (value_bytes 0: keys only). Outputs apart from the inputs.
// Runs not sorted (a caller's error) give unspecified outputs, never a
// read or write outside the buffers.
struct MergeRequest {
    KeyKind key_kind;
    uint32_t key_bytes;    // 1, 2, 4 or 8
    bool descending;
    const void *keys_a;
    const void *values_a;
    uint64_t count_a;
    const void *keys_b;
    const void *values_b;
    uint64_t count_b;
    void *keys_out;
    void *values_out;
    uint32_t value_bytes;  // 0 (keys only), 1, 2, 4 or 8
};

// Where a call whose output size depends on the data (select, partition,
// unique, run-length encode) puts that size: in backend memory (device, 4 or
// 8 bytes, stream-ordered), on the host (the call blocks until it is
// written), or both; at least one (src/api checks).
struct CountSink {
    void *device = nullptr;  // backend memory, or nullptr
    uint32_t device_bytes = 0;  // 4 (I32/U32) or 8 (I64/U64); the count fits (src/api checked)
    uint64_t *host = nullptr;   // host memory, or nullptr
};

// Which elements gpuprim_select / gpuprim_partition keep (gpuprim_keep_t):
// flags by bits, or a comparison with the scalars by value (IEEE for floats,
// f16/bf16 widened; the header's rules).
struct KeepRule {
    gpuprim_keep_t kind;
    const void *flags = nullptr;  // KEEP_FLAGGED: the input's count of flags, backend memory
    uint32_t flag_bytes = 0;      // 1, 2, 4 or 8 (any integer dtype: nonzero bits keep)
    uint64_t scalar_bits = 0;     // the scalars' bits in the low bytes (the input's dtype)
    uint64_t scalar_high_bits = 0;  // KEEP_IN_RANGE: the upper bound
};

// One gpuprim_select / gpuprim_partition. Outputs lie apart from the inputs
// and each other (src/api checked) and hold at least count elements.
struct SelectRequest {
    gpuprim_dtype_t dtype;      // the input's
    const void *input;
    uint64_t count;
    KeepRule keep;
    void *output = nullptr;     // select: nullptr when not wanted; partition: always given
    const void *values = nullptr;  // value_bytes 0: no values
    void *values_out = nullptr;
    uint32_t value_bytes = 0;   // 0, 1, 2, 4 or 8
    void *positions = nullptr;  // select only: the kept elements' positions, or nullptr
    uint32_t position_bytes = 0;  // 4 or 8 (signedness does not matter: they fit)
    bool partition = false;     // the others after the kept, in their order
    CountSink kept;             // the number kept
};

// One gpuprim_unique or gpuprim_run_length_encode: runs of consecutive keys
// with equal bits. For each run (or, non_trivial_only, each run of 2 or
// more), in order: keys_out its first key, values_out that key's value,
// starts its first position, lengths its length; each output nullptr when
// not wanted. Outputs apart from the inputs and each other.
struct RunsRequest {
    uint32_t key_bytes;         // 1, 2, 4 or 8: keys compare by bits
    const void *keys;
    uint64_t count;
    void *keys_out = nullptr;
    const void *values = nullptr;  // unique only; value_bytes 0: none
    void *values_out = nullptr;
    uint32_t value_bytes = 0;
    bool non_trivial_only = false;  // run-length encode of GPUPRIM_RUNS_NON_TRIVIAL
    void *starts = nullptr;
    uint32_t start_bytes = 0;   // 4 or 8
    void *lengths = nullptr;
    uint32_t length_bytes = 0;  // 4 or 8
    CountSink runs;             // the number of runs written
};

// One gpuprim_reduce_by_key: for each run of consecutive keys with equal
// bits, in order: keys_out its key, results op over its values (the rules of
// Backend::reduce: SumAccumulator, float MIN/MAX rules; float sums in an
// order fixed by the data, never by timing or threads), lengths its length.
// Outputs nullptr when not wanted (results always given), apart from the
// inputs and each other.
struct ReduceByKeyRequest {
    uint32_t key_bytes;         // 1, 2, 4 or 8: keys compare by bits
    const void *keys;
    uint64_t count;
    gpuprim_op_t op;
    gpuprim_dtype_t value_dtype;
    const void *values;
    void *keys_out = nullptr;
    void *results;
    void *lengths = nullptr;
    uint32_t length_bytes = 0;  // 4 or 8
    CountSink runs;             // the number of runs
};

// One gpuprim_group_by: the groups of equal keys (by bits) in ascending
// sort order (key_kind's radix order, core/key_transform.h), each group's
// elements in input order: keys_out its key, counts its size, results op
// over its values (ReduceByKeyRequest's rules), inverse[i] the group of
// element i. Each output nullptr when not wanted (values and results both or
// neither), apart from the inputs and each other.
struct GroupByRequest {
    KeyKind key_kind;
    uint32_t key_bytes;         // 1, 2, 4 or 8
    const void *keys;
    uint64_t count;
    gpuprim_op_t op;
    gpuprim_dtype_t value_dtype;
    const void *values = nullptr;
    void *keys_out = nullptr;
    void *counts = nullptr;
    uint32_t count_bytes = 0;   // 4 or 8
    void *results = nullptr;
    void *inverse = nullptr;
    uint32_t inverse_bytes = 0; // 4 or 8
    CountSink groups;           // the number of groups
};

// How the data of a segmented call divides into segments (src/api checked
// that uniform rows cover the data; offsets are checked by the backend,
// before it writes anything, through check_segment_offsets below).
struct SegmentLayout {
    uint64_t segments;      // number of segments
    uint64_t row_length;    // uniform rows: offsets == nullptr
    const void *offsets;    // segments + 1 integers in backend memory, or nullptr
    uint32_t offset_bytes;  // 4 or 8
    bool offsets_signed;
    uint64_t data_count;    // elements of the data buffers
    // The offset value of the data buffers' first element: 0, except where
    // the CUDA backend narrows a call to the elements its segments cover
    // (its data pointers then start at offsets[0]; narrowed_to_covered in
    // cuda/engine/segment_check.cu). Offsets as kernels read them are
    // offsets[s] - origin.
    uint64_t origin = 0;
    // The caller's promise that no segment is longer (offsets only,
    // segments->max_segment_length; 0: none). A longer one fails the check.
    uint64_t max_length = 0;
    // CUDA, offsets checked in deferred mode (cuda/engine/segment_check.h):
    // a device word the check sets nonzero when the offsets fail it; every
    // kernel that reads the offsets then returns at once, writing nothing.
    const uint32_t *skip = nullptr;
};

// The first index of a CSR offsets array that breaks the rules (negative,
// past data_count, or less than the one before), with the values the message
// names. Throws INVALID_ARGUMENT naming it.
[[noreturn]] void fail_bad_offset(const SegmentLayout &layout, uint64_t index, int64_t value, int64_t previous);

// Checks offsets that lie in host memory (the CPU backend's), index by
// index, then each segment's length against the promise (max_length) and,
// for calls writing indices, the indices' type (largest_index; UINT64_MAX:
// none). Throws INVALID_ARGUMENT naming the first fault (core/offsets_check.h).
void check_offsets_on_host(const SegmentLayout &layout, uint64_t largest_index = UINT64_MAX);

// Reads offsets[index] of a host copy of the array as a 64-bit value: I32
// and I64 sign-extended, U32 and U64 as their bits (a U64 past INT64_MAX
// reads negative here; offset_is_bad compares unsigned offsets as unsigned).
inline int64_t read_offset(const void *offsets, uint32_t offset_bytes, bool offsets_signed, uint64_t index) {
    if (offset_bytes == 4) {
        if (offsets_signed) return static_cast<const int32_t *>(offsets)[index];
        return static_cast<const uint32_t *>(offsets)[index];
    }
    return static_cast<int64_t>(static_cast<const uint64_t *>(offsets)[index]);
}

// The offsets rule (the CPU's check and the CUDA check kernel's): an offset
// is bad when negative (signed dtypes), past data_count, or less than the one
// before (compared in the offsets' own type). previous: the offset before
// (ignored for the first), already found good.
GPUPRIM_HD bool offset_is_bad(bool offsets_signed, int64_t value, int64_t previous, bool first, uint64_t data_count) {
    if (offsets_signed && value < 0) return true;
    if (static_cast<uint64_t>(value) > data_count) return true;
    return !first && static_cast<uint64_t>(value) < static_cast<uint64_t>(previous);
}

// Segment s's first element and its length (offsets already checked, host
// offsets or uniform rows).
struct SegmentSpan {
    uint64_t begin;
    uint64_t length;
};
inline SegmentSpan segment_span(const SegmentLayout &layout, uint64_t s) {
    if (!layout.offsets) return {s * layout.row_length, layout.row_length};
    const auto begin = static_cast<uint64_t>(read_offset(layout.offsets, layout.offset_bytes, layout.offsets_signed, s));
    const auto end = static_cast<uint64_t>(read_offset(layout.offsets, layout.offset_bytes, layout.offsets_signed, s + 1));
    return {begin, end - begin};
}

// The elements the segments cover together: CSR segments follow each other
// without gaps, from offsets[0] to offsets[segments] (offsets already
// checked, in host memory); rows cover all the data. Scratch sized by this,
// not by data_count, stays proportional to the work.
inline SegmentSpan covered_span(const SegmentLayout &layout) {
    if (!layout.offsets) return {0, layout.data_count};
    if (layout.segments == 0) return {0, 0};
    const SegmentSpan first = segment_span(layout, 0), last = segment_span(layout, layout.segments - 1);
    return {first.begin, last.begin + last.length - first.begin};
}

// The end of the request's bit range (end_bit 0: the whole key).
inline uint32_t sort_end_bit(const SortRequest &request) {
    return request.end_bit != 0 ? request.end_bit : request.key_bytes * 8;
}
// Whether the request sorts by every bit of its keys (no bit range).
inline bool sorts_whole_key(const SortRequest &request) {
    return request.begin_bit == 0 && sort_end_bit(request) == request.key_bytes * 8;
}

class Backend {
public:
    virtual ~Backend() = default;

    virtual gpuprim_backend_t kind() const = 0;
    virtual int32_t device_ordinal() const = 0;
    // Static or owned by the backend: reading it allocates nothing.
    virtual const char *device_name() const = 0;

    // Memory in the backend's address space (device memory on CUDA): every
    // allocation of buffers and workspace goes through here. Throws
    // OUT_OF_MEMORY (or DEVICE).
    void *allocate(uint64_t bytes) {
        if (bytes == 0) return allocate_memory(0);
        ++allocations_;
        if (injected_failures_left_ > 0 && injected_successes_left_-- <= 0) {
            --injected_failures_left_;
            fail(GPUPRIM_ERROR_OUT_OF_MEMORY,
                 "cannot allocate %llu bytes (allocation failure injected for testing)",
                 static_cast<unsigned long long>(bytes));
        }
        return allocate_memory(bytes);
    }
    virtual void deallocate(void *memory) noexcept = 0;

    // Testing hook (test/reliability/test_alloc_faults.cpp): after
    // `successes` more allocations, the next `failures` ones fail as a real
    // shortage would. allocation_count() counts the allocations asked for.
    void inject_allocation_failures(int64_t successes, int64_t failures) {
        injected_successes_left_ = successes;
        injected_failures_left_ = failures;
    }
    uint64_t allocation_count() const { return allocations_; }

    // Throws INVALID_ARGUMENT unless [data, data+bytes) may be used as a buffer.
    virtual void check_wrappable(const void *data, uint64_t bytes) = 0;
    virtual void upload(void *destination, const void *host_source, uint64_t bytes) = 0;
    virtual void download(void *host_destination, const void *source, uint64_t bytes) = 0;
    virtual void synchronize() = 0;

    // How calls on CSR offsets check them (gpuprim_context_set_offsets_check):
    // waiting for the check (the default) or deferring its result.
    void set_offsets_check_deferred(bool deferred) { offsets_report_.set_deferred(deferred); }
    bool offsets_check_deferred() const { return offsets_report_.deferred(); }
    // Waits for the context's work, then throws INVALID_ARGUMENT with the
    // first failure a deferred offsets check found since the last report,
    // and forgets it (gpuprim_context_check_deferred).
    virtual void check_deferred() = 0;

    virtual uint64_t workspace_bytes() const = 0;
    virtual void release_workspace() = 0;
    // Grows the workspace to hold at least `bytes` in all (the growth goes
    // to the main block), then holds every block still when `hold`, or lets
    // them grow again when not (gpuprim_context_reserve_workspace).
    virtual void reserve_workspace(uint64_t bytes, bool hold) = 0;
    // Grows the main block to at least main_bytes and the second block (the
    // CUDA backend's side workspace) to at least side_bytes (0: as it is),
    // then holds both still or not. On failure neither block has changed,
    // nor has either hold (gpuprim_context_reserve_workspace_sizes).
    virtual void reserve_workspace_sizes(uint64_t main_bytes, uint64_t side_bytes, bool hold) = 0;

    // The workspace query (gpuprim_context_begin_workspace_query). While
    // measuring, every primitive call checks its arguments as usual but runs
    // nothing: it enqueues, allocates, reads and writes nothing, and its
    // workspace reserves go to recorders. end_measure() gives the largest
    // request of each block over the calls since begin_measure().
    struct WorkspaceSizes {
        uint64_t main_bytes = 0;
        uint64_t side_bytes = 0;
        bool bounded = false;  // some size depends on the data: it is the most the call can take
    };
    virtual void begin_measure() = 0;
    virtual WorkspaceSizes end_measure() = 0;
    // Grows each block to at least its size in `sizes`, as the calls' own
    // reserves do (a block held still and too small: OUT_OF_MEMORY; the hold
    // is left as it is): for a call that must know before it starts that
    // its steps will find their workspace (the distributed calls, whose
    // other ranks would otherwise wait in a collective for a rank that
    // failed).
    virtual void take_workspace(const WorkspaceSizes &sizes) = 0;
    bool measuring() const { return measuring_; }
    // Testing hook (test_workspace_query): the largest request each real
    // block has seen since the backend was made.
    virtual WorkspaceSizes largest_requests() const = 0;

    // Throws NOT_CAPTURABLE, before anything is enqueued, when the context's
    // stream is capturing a CUDA graph: `call` cannot be captured because
    // `why`. The CPU backend captures nothing.
    virtual void refuse_during_capture(const char *call, const char *why) const {
        static_cast<void>(call);
        static_cast<void>(why);
    }

    // result_on_host: result is a host pointer and the call blocks until it is
    // written; otherwise result is backend memory and the call is stream-ordered.
    virtual void reduce(gpuprim_op_t op, gpuprim_dtype_t dtype, const void *input, uint64_t count,
                        void *result, bool result_on_host) = 0;
    virtual void dot(gpuprim_dtype_t dtype, const void *a, const void *b, uint64_t count,
                     void *result, bool result_on_host) = 0;
    // argmin (op MIN) / argmax (op MAX) of count >= 1 elements: the first
    // position of the extreme, NaN first (core/ops.h ArgKey). index: a host
    // pointer, written only on success; the call blocks until it is.
    virtual void argreduce(gpuprim_op_t op, gpuprim_dtype_t dtype, const void *input, uint64_t count,
                           uint64_t *index) = 0;
    // output may equal input. initial: nullptr, or a host pointer to one
    // element of dtype that the scan starts from (the distributed scan's
    // carry from the ranks before): inclusive output i is then
    // initial op x0 op ... op xi, exclusive output 0 is initial. It enters
    // the scan as its first partial total (f16/bf16 sums: in f32).
    virtual void scan(gpuprim_op_t op, gpuprim_scan_kind_t kind, gpuprim_dtype_t dtype,
                      const void *input, void *output, uint64_t count, const void *initial = nullptr) = 0;
    virtual void sort(const SortRequest &request) = 0;

    // Segmented calls. Each first checks layout's offsets (when given) and
    // throws through fail_bad_offset before writing anything.
    // request.count is layout.data_count; outside every segment nothing is
    // written.
    virtual void segmented_sort(const SortRequest &request, const SegmentLayout &layout) = 0;
    // output: layout.segments elements of dtype.
    virtual void segmented_reduce(gpuprim_op_t op, gpuprim_dtype_t dtype, const SegmentLayout &layout,
                                  const void *input, void *output) = 0;
    // output may equal input.
    virtual void segmented_scan(gpuprim_op_t op, gpuprim_scan_kind_t kind, gpuprim_dtype_t dtype,
                                const SegmentLayout &layout, const void *input, void *output) = 0;

    // Top-k of every segment (a flat top-k is one row of data_count
    // elements).
    virtual void topk(const TopkRequest &request, const SegmentLayout &layout) = 0;

    // The calls of core/backend_calls.h (searchsorted, histogram, ...): one
    // method each, its parameters as listed there.
#define GPUPRIM_DECLARE_BACKEND_METHOD(name, parameters, arguments) virtual void name parameters = 0;
    GPUPRIM_PLAIN_BACKEND_CALLS(GPUPRIM_DECLARE_BACKEND_METHOD)
#undef GPUPRIM_DECLARE_BACKEND_METHOD

    // What the distributed calls (src/dist) need besides the primitives.
    // All stream-ordered on CUDA, like the primitives.
    //
    // Copies bytes between two places of backend memory (they must not overlap).
    virtual void copy(void *destination, const void *source, uint64_t bytes) = 0;
    // indices[i] += offset for count indices of index_bytes (4 or 8) bytes,
    // wrapping in the unsigned type (the caller checked the sums fit).
    virtual void add_to_indices(void *indices, uint64_t count, uint32_t index_bytes, uint64_t offset) = 0;
    // keys.keys_in holds keys.count keys already sorted as keys asks (stable
    // sort order: key kind, order, bit range). For each of the
    // candidate_count candidates, counts[j] = the number of those keys whose
    // sort bits are below candidates[j]. A key's sort bits:
    // sort_bits(to_radix_key(key, kind, descending), begin_bit, end_bit)
    // (core/key_transform.h), the value a stable sort orders by, ascending.
    // candidates and counts lie in backend memory.
    virtual void count_keys_below(const SortRequest &keys, const uint64_t *candidates, uint64_t candidate_count,
                                  uint64_t *counts) = 0;
    // request.keys_in (and values_in when value_bytes) hold `runs` sorted runs back to back, run r being
    // elements [run_starts[r], run_starts[r + 1]) (host array of runs + 1 offsets, run_starts[runs] ==
    // request.count), each sorted as request asks (sort bits of core/key_transform.h, stable order).
    // Writes their stable merge (equal sort bits: lower run first, then position) to keys_out/values_out,
    // which must not overlap the inputs. spare_keys / spare_values: request.count elements each (values only
    // when value_bytes) the merge may use as scratch (clobbered). values_are_indices is false here.
    virtual void merge_sorted_runs(const SortRequest &request, const uint64_t *run_starts, uint32_t runs,
                                   void *spare_keys, void *spare_values) = 0;
    // gpuprim_merge (MergeRequest); stream-ordered on CUDA.
    virtual void merge(const MergeRequest &request) = 0;
    // gpuprim_select / gpuprim_partition (SelectRequest) and gpuprim_unique /
    // gpuprim_run_length_encode (RunsRequest); stream-ordered on CUDA unless
    // the count goes to the host.
    virtual void select(const SelectRequest &request) = 0;
    virtual void runs(const RunsRequest &request) = 0;
    // gpuprim_reduce_by_key (ReduceByKeyRequest) and gpuprim_group_by
    // (GroupByRequest); stream-ordered on CUDA unless the count goes to the
    // host.
    virtual void reduce_by_key(const ReduceByKeyRequest &request) = 0;
    virtual void group_by(const GroupByRequest &request) = 0;
    // The cudaStream_t every call is ordered on (the NCCL engine enqueues its
    // transfers there); nullptr on the CPU backend.
    virtual void *native_stream() const { return nullptr; }

protected:
    virtual void *allocate_memory(uint64_t bytes) = 0;

    // The host's allocator from the context's options; when present, every
    // allocate_memory takes its blocks from it.
    HostAllocator host_allocator_;
    // The calls on CSR offsets and the first failure of a deferred check.
    DeferredOffsetsReport offsets_report_;

    // Between begin_measure() and end_measure().
    bool measuring_ = false;

private:
    int64_t injected_successes_left_ = 0;
    int64_t injected_failures_left_ = 0;
    uint64_t allocations_ = 0;
};

// threads: how many threads one call may use; 0 for every core.
std::unique_ptr<Backend> make_cpu_backend(int32_t threads, const HostAllocator &allocator = HostAllocator());

// True when libgpuprim was built with the CUDA backend.
bool cuda_backend_built();
// Throws BACKEND_UNAVAILABLE (not built, no device, bad ordinal) or DEVICE.
// stream: a cudaStream_t or NULL for a stream of the context's own.
std::unique_ptr<Backend> make_cuda_backend(int32_t device_ordinal, void *stream,
                                          const HostAllocator &allocator = HostAllocator());
// Whether make_cuda_backend(device_ordinal, ...) would find a device; never throws.
bool cuda_device_usable(int32_t device_ordinal);

}  // namespace gpuprim
