// SPDX-License-Identifier: Apache-2.0
// White-box checks of the Backend operations the distributed calls use
// (core/backend.h), which the C API does not reach:
// - scan with an `initial` value: inclusive and exclusive, SUM/MIN/MAX, every
//   dtype, counts around the CPU's scan blocks and the CUDA tiles, against a
//   plain loop; float data are small integers so that every association
//   gives the same sums (exact comparison); unaligned and in-place buffers;
//   the CPU's results the same on 1 and several threads, the CUDA's the same
//   on every run;
// - count_keys_below on sorted keys of several widths, kinds, orders and bit
//   ranges, against a brute-force count;
// - add_to_indices (4- and 8-byte, wrapping) and copy, touching nothing past
//   their counts;
// - merge_sorted_runs: 1 to 9 runs (empty ones among them) and 16 to 100
//   short ones, random and few-distinct keys (ties across runs), every key
//   width and kind, both orders, bit ranges, values of 0 to 8 bytes, sizes
//   around the CUDA tiles and past 100000, against a stable sort of the
//   concatenation; nothing past the outputs written, and no host memory
//   taken by a repeated call (its operator new fails).
// The backend: GPUPRIM_BACKEND=cpu|cuda|auto like the other tests (auto or
// unset: CUDA where built and a device is usable, else the CPU); 77 (skip)
// when cuda is asked for and there is none.
#include "reliability/failing_new.h"
#include "skip_note.h"

#include "core/backend.h"
#include "core/dtype.h"
#include "core/element_traits.h"
#include "core/error.h"
#include "core/key_transform.h"
#include "core/ops.h"

#include <gpuprim/gpuprim.h>

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

using namespace gpuprim;

namespace {

// The tests' random bits: SplitMix64 (a tenth of std::mt19937_64's time,
// which was 15% of this program's).
struct TestRng {
    using result_type = uint64_t;  // a UniformRandomBitGenerator, for the std:: distributions
    static constexpr uint64_t min() { return 0; }
    static constexpr uint64_t max() { return UINT64_MAX; }
    uint64_t state;
    explicit TestRng(uint64_t seed) : state(seed) {}
    uint64_t operator()() {
        uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
};

int g_failures = 0;
uint64_t g_seed = 12345;

#define CHECK(condition, ...)                                                 \
    do {                                                                      \
        if (!(condition)) {                                                   \
            ++g_failures;                                                     \
            if (g_failures <= 40) {                                           \
                std::printf("FAIL %s:%d: ", __FILE__, __LINE__);              \
                std::printf(__VA_ARGS__);                                     \
                std::printf("\n");                                            \
            }                                                                 \
        }                                                                     \
    } while (0)

// Backend memory, freed with the backend's deallocate.
class Memory {
public:
    Memory(Backend &backend, uint64_t bytes) : backend_(backend), data_(backend.allocate(bytes)), bytes_(bytes) {}
    ~Memory() { backend_.deallocate(data_); }
    Memory(const Memory &) = delete;
    Memory &operator=(const Memory &) = delete;
    void *data() const { return data_; }
    template <typename T>
    T *as() const { return static_cast<T *>(data_); }
    void upload(const void *host, uint64_t bytes, uint64_t offset = 0) {
        if (bytes) backend_.upload(static_cast<char *>(data_) + offset, host, bytes);
    }
    void download(void *host, uint64_t bytes, uint64_t offset = 0) {
        if (bytes) backend_.download(host, static_cast<char *>(data_) + offset, bytes);
    }

private:
    Backend &backend_;
    void *data_;
    uint64_t bytes_;
};

template <typename T>
gpuprim_dtype_t dtype_of() {
#define GPUPRIM_DTYPE_OF(e, type, name) \
    if constexpr (std::is_same_v<T, type>) return e;
    GPUPRIM_DTYPE_TABLE(GPUPRIM_DTYPE_OF)
#undef GPUPRIM_DTYPE_OF
    return GPUPRIM_DTYPE_I32;
}

template <typename T>
constexpr bool kFloatLike = std::is_floating_point_v<T> || kIsHalf<T>;

template <typename T>
double as_double(T x) {
    if constexpr (kIsHalf<T>) return double(widen(x));
    else return double(x);
}

template <typename T>
T from_int(int value) {
    if constexpr (kIsHalf<T>) return round_to<T>(float(value));
    else return T(value);
}

template <typename T>
bool same_bits(T a, T b) {
    return std::memcmp(&a, &b, sizeof a) == 0;
}

// SUM results compare by value for floats (the ±0 of a zero sum is not
// promised), MIN/MAX results and integers bit for bit.
template <typename T>
bool agree(gpuprim_op_t op, T got, T want) {
    if constexpr (kFloatLike<T>) {
        if (op == GPUPRIM_OP_SUM) return as_double(got) == as_double(want);
    }
    return same_bits(got, want);
}

template <typename T>
std::string show(T x) {
    char text[64];
    if constexpr (kFloatLike<T>) std::snprintf(text, sizeof text, "%.9g", as_double(x));
    else if constexpr (std::is_signed_v<T>) std::snprintf(text, sizeof text, "%lld", (long long)x);
    else std::snprintf(text, sizeof text, "%llu", (unsigned long long)x);
    return text;
}

// Data for the scan checks: integers over their whole range (SUM wraps),
// floats as small integers (every order of adding gives the same sums), a
// few -0.0 among them for MIN/MAX.
template <typename T>
T random_element(TestRng &rng) {
    if constexpr (kFloatLike<T>) {
        const int value = int(rng() % 9) - 4;
        if (value == 0 && rng() % 2) {
            T negative_zero;
            const bits_t<T> bits = ElementTraits<T>::kSignBit;
            std::memcpy(&negative_zero, &bits, sizeof bits);
            return negative_zero;
        }
        return from_int<T>(value);
    } else {
        const uint64_t bits = rng();
        T value;
        std::memcpy(&value, &bits, sizeof value);
        return value;
    }
}

template <typename T>
T random_initial(TestRng &rng) {
    if constexpr (kFloatLike<T>) return from_int<T>(int(rng() % 101) - 50);
    else return random_element<T>(rng);
}

// The scan as a plain loop: SUM in core/ops.h's accumulator (the initial
// value its first partial total), MIN/MAX with their operators.
template <typename T>
void reference_scan(gpuprim_op_t op, bool exclusive, const std::vector<T> &x, const T *initial,
                    std::vector<T> &out) {
    out.resize(x.size());
    if (op == GPUPRIM_OP_SUM) {
        using Acc = sum_accumulator_t<T>;
        const SumOp<Acc> sum;
        Acc acc = initial ? to_accumulator(*initial) : Acc(0);
        for (size_t i = 0; i < x.size(); ++i) {
            if (exclusive) out[i] = from_accumulator<T>(acc);
            acc = sum(acc, to_accumulator(x[i]));
            if (!exclusive) out[i] = from_accumulator<T>(acc);
        }
        return;
    }
    auto run = [&](auto combine) {
        using Op = decltype(combine);
        T acc = initial ? *initial : Op::identity();
        for (size_t i = 0; i < x.size(); ++i) {
            if (exclusive) out[i] = acc;
            acc = combine(acc, x[i]);
            if (!exclusive) out[i] = acc;
        }
    };
    if (op == GPUPRIM_OP_MIN) run(MinOp<T>{});
    else run(MaxOp<T>{});
}

const char *op_name(gpuprim_op_t op) {
    return op == GPUPRIM_OP_SUM ? "sum" : op == GPUPRIM_OP_MIN ? "min" : "max";
}

// One scan through the backend. in_offset/out_offset: elements the input
// and output start past an allocation's (aligned) start; in_place: output
// is the input.
template <typename T>
std::vector<T> backend_scan(Backend &backend, gpuprim_op_t op, bool exclusive, const std::vector<T> &x,
                            const T *initial, uint64_t in_offset, uint64_t out_offset, bool in_place) {
    const uint64_t n = x.size();
    const uint64_t guard = 4;  // elements after the output that must stay as they were
    Memory in(backend, (n + in_offset + guard) * sizeof(T));
    Memory separate_out(backend, in_place ? 0 : (n + out_offset + guard) * sizeof(T));
    Memory &out = in_place ? in : separate_out;
    if (in_place) out_offset = in_offset;
    std::vector<T> sentinel(n + out_offset + guard);
    std::vector<unsigned char> pattern(sentinel.size() * sizeof(T), 0xA5);
    std::memcpy(sentinel.data(), pattern.data(), pattern.size());
    out.upload(sentinel.data(), sentinel.size() * sizeof(T));
    in.upload(x.data(), n * sizeof(T), in_offset * sizeof(T));
    // A copy of the initial value at an odd host address: any alignment goes.
    alignas(16) unsigned char initial_bytes[sizeof(T) + 1];
    if (initial) std::memcpy(initial_bytes + 1, initial, sizeof(T));
    backend.scan(op, exclusive ? GPUPRIM_SCAN_EXCLUSIVE : GPUPRIM_SCAN_INCLUSIVE, dtype_of<T>(),
                 in.as<T>() + in_offset, out.as<T>() + out_offset, n, initial ? initial_bytes + 1 : nullptr);
    std::vector<T> all(n + out_offset + guard);
    out.download(all.data(), all.size() * sizeof(T));
    for (uint64_t i = 0; i < guard; ++i)
        CHECK(same_bits(all[out_offset + n + i], sentinel[0]), "scan wrote past its output (element %llu)",
              (unsigned long long)(n + i));
    if (!in_place)
        for (uint64_t i = 0; i < out_offset; ++i)
            CHECK(same_bits(all[i], sentinel[0]), "scan wrote before its output");
    return std::vector<T>(all.begin() + out_offset, all.begin() + out_offset + n);
}

template <typename T>
void check_scan_case(Backend &backend, gpuprim_op_t op, bool exclusive, uint64_t n, bool with_initial,
                     uint64_t in_offset, uint64_t out_offset, bool in_place, TestRng &rng) {
    std::vector<T> x(n);
    for (auto &v : x) v = random_element<T>(rng);
    const T initial = random_initial<T>(rng);
    std::vector<T> want;
    reference_scan<T>(op, exclusive, x, with_initial ? &initial : nullptr, want);
    const std::vector<T> got =
        backend_scan<T>(backend, op, exclusive, x, with_initial ? &initial : nullptr, in_offset, out_offset, in_place);
    uint64_t bad = 0, first_bad = 0;
    for (uint64_t i = 0; i < n; ++i)
        if (!agree(op, got[i], want[i]) && bad++ == 0) first_bad = i;
    CHECK(bad == 0,
          "scan %s %s %s n=%llu initial=%s offsets %llu/%llu%s: %llu wrong, first at %llu: got %s, want %s",
          dtype_name(dtype_of<T>()), op_name(op), exclusive ? "exclusive" : "inclusive", (unsigned long long)n,
          with_initial ? show(initial).c_str() : "none", (unsigned long long)in_offset,
          (unsigned long long)out_offset, in_place ? " in place" : "", (unsigned long long)bad,
          (unsigned long long)first_bad, bad ? show(got[first_bad]).c_str() : "",
          bad ? show(want[first_bad]).c_str() : "");
}

const gpuprim_op_t kOps[] = {GPUPRIM_OP_SUM, GPUPRIM_OP_MIN, GPUPRIM_OP_MAX};

template <typename T>
void check_scan_dtype(Backend &backend, bool large) {
    TestRng rng(g_seed ^ (uint64_t(dtype_of<T>()) << 32));
    const uint64_t counts[] = {0, 1, 2, 31, 8191, 8192, 8193, 100000};
    for (gpuprim_op_t op : kOps)
        for (bool exclusive : {false, true})
            for (uint64_t n : counts)
                for (bool with_initial : {false, true}) {
                    check_scan_case<T>(backend, op, exclusive, n, with_initial, 0, 0, false, rng);
                    if (n == 8193 || n == 31) {
                        // Misaligned buffers (the CUDA tiles' head pads, element stores) and in place.
                        check_scan_case<T>(backend, op, exclusive, n, with_initial, 1, 0, false, rng);
                        check_scan_case<T>(backend, op, exclusive, n, with_initial, 3, 3, false, rng);
                        check_scan_case<T>(backend, op, exclusive, n, with_initial, 1, 0, true, rng);
                    }
                }
    if (!large) return;
    // Past the CUDA single-pass sizes: the narrow dtypes' three launches
    // (more than 256 tiles of 32 bytes a thread), the 4-byte dtypes'
    // pipelined look-back (on an H100 from ~7.6M elements for integer SUM,
    // ~9.5M for float SUM); the CPU's parallel blocks.
    const uint64_t big = sizeof(T) <= 2 ? (uint64_t(1) << 22) + 3 : (uint64_t(1) << 24) + 5;
    for (gpuprim_op_t op : kOps)
        for (bool exclusive : {false, true}) check_scan_case<T>(backend, op, exclusive, big, true, 1, 1, false, rng);
}

// Real-valued data: the backend's float SUM with an initial value gives the
// same bits every time (CUDA: run twice) and on every thread count (CPU: the
// other backend, of one thread).
template <typename T>
void check_scan_determinism(Backend &backend, Backend &other) {
    TestRng rng(g_seed + 7);
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    for (uint64_t n : {uint64_t(100000), uint64_t(1) << 21})
        for (bool exclusive : {false, true}) {
            std::vector<T> x(n);
            for (auto &v : x) {
                if constexpr (kIsHalf<T>) v = round_to<T>(value(rng));
                else v = T(value(rng));
            }
            T initial;
            if constexpr (kIsHalf<T>) initial = round_to<T>(0.3711f);
            else initial = T(0.3711);
            const auto a = backend_scan<T>(backend, GPUPRIM_OP_SUM, exclusive, x, &initial, 0, 0, false);
            const auto b = backend_scan<T>(other, GPUPRIM_OP_SUM, exclusive, x, &initial, 0, 0, false);
            uint64_t bad = 0;
            for (uint64_t i = 0; i < n; ++i) bad += !same_bits(a[i], b[i]);
            CHECK(bad == 0, "scan %s sum %s n=%llu with initial: %llu outputs differ between runs/thread counts",
                  dtype_name(dtype_of<T>()), exclusive ? "exclusive" : "inclusive", (unsigned long long)n,
                  (unsigned long long)bad);
            // And close to the plain loop in double.
            double running = as_double(initial), worst = 0;
            for (uint64_t i = 0; i < n; ++i) {
                if (!exclusive) running += as_double(x[i]);
                worst = std::max(worst, std::abs(as_double(a[i]) - running));
                if (exclusive) running += as_double(x[i]);
            }
            // f16 outputs round to ~3 digits; f32 adds ~2^-24 of a partial sum a step.
            const double tolerance = kIsHalf<T> ? 4.0 : std::is_same_v<T, float> ? 1e-6 * double(n) + 1e-3 : 1e-9;
            CHECK(worst <= tolerance, "scan %s sum n=%llu with initial: off by %g from the exact sum",
                  dtype_name(dtype_of<T>()), (unsigned long long)n, worst);
        }
}

// ---------------------------------------------------------------------------
// count_keys_below
// ---------------------------------------------------------------------------

template <typename Bits>
void check_count_keys_below_case(Backend &backend, KeyKind kind, bool descending, uint32_t begin_bit,
                                 uint32_t end_bit, uint64_t n, TestRng &rng) {
    constexpr uint32_t kWidth = sizeof(Bits) * 8;
    const uint32_t end = end_bit ? end_bit : kWidth;
    // Keys with repeats: a few distinct values, or any bits.
    std::vector<Bits> keys(n);
    const bool few = rng() % 2;
    std::vector<Bits> pool(16);
    for (auto &p : pool) p = Bits(rng());
    for (auto &k : keys) k = few ? pool[rng() % pool.size()] : Bits(rng());
    auto bits_of = [&](Bits key) { return sort_bits(to_radix_key<Bits>(key, kind, descending), begin_bit, end); };
    std::stable_sort(keys.begin(), keys.end(), [&](Bits a, Bits b) { return bits_of(a) < bits_of(b); });

    // Candidates: the ends of the range, every key's bits and one past, random.
    const uint32_t width = end - begin_bit;
    const uint64_t top = width >= 64 ? UINT64_MAX : (uint64_t(1) << width);  // one past the largest (or 2^64 - 1)
    std::vector<uint64_t> candidates = {0, 1, top, top - 1, UINT64_MAX};
    for (uint64_t i = 0; i < std::min<uint64_t>(n, 40); ++i) {
        const uint64_t b = bits_of(keys[rng() % n]);
        candidates.push_back(b);
        candidates.push_back(b + 1);
    }
    for (int i = 0; i < 40; ++i) candidates.push_back(width >= 64 ? rng() : rng() % (top + 1));

    Memory device_keys(backend, n * sizeof(Bits));
    device_keys.upload(keys.data(), n * sizeof(Bits));
    const uint64_t m = candidates.size();
    Memory device_candidates(backend, m * sizeof(uint64_t));
    device_candidates.upload(candidates.data(), m * sizeof(uint64_t));
    Memory device_counts(backend, (m + 1) * sizeof(uint64_t));
    std::vector<uint64_t> counts(m + 1, 0xDEADBEEFull);
    device_counts.upload(counts.data(), counts.size() * sizeof(uint64_t));

    SortRequest request{};
    request.key_kind = kind;
    request.key_bytes = sizeof(Bits);
    request.begin_bit = begin_bit;
    request.end_bit = end_bit;
    request.descending = descending;
    request.keys_in = device_keys.data();
    request.count = n;
    backend.count_keys_below(request, device_candidates.as<uint64_t>(), m, device_counts.as<uint64_t>());
    device_counts.download(counts.data(), counts.size() * sizeof(uint64_t));

    for (uint64_t j = 0; j < m; ++j) {
        uint64_t want = 0;
        for (uint64_t i = 0; i < n; ++i) want += bits_of(keys[i]) < candidates[j];
        CHECK(counts[j] == want,
              "count_keys_below %zu-byte kind %d %s bits [%u,%u) n=%llu candidate %llu: got %llu, want %llu",
              sizeof(Bits), int(kind), descending ? "descending" : "ascending", begin_bit, end,
              (unsigned long long)n, (unsigned long long)candidates[j], (unsigned long long)counts[j],
              (unsigned long long)want);
    }
    CHECK(counts[m] == 0xDEADBEEFull, "count_keys_below wrote past its counts");

    // No candidates: nothing written.
    backend.count_keys_below(request, device_candidates.as<uint64_t>(), 0, device_counts.as<uint64_t>() + m);
    device_counts.download(counts.data(), counts.size() * sizeof(uint64_t));
    CHECK(counts[m] == 0xDEADBEEFull, "count_keys_below with no candidates wrote a count");
}

template <typename Bits>
void check_count_keys_below_width(Backend &backend, TestRng &rng) {
    constexpr uint32_t kWidth = sizeof(Bits) * 8;
    std::vector<KeyKind> kinds = {KeyKind::Unsigned, KeyKind::Signed};
    if (sizeof(Bits) >= 2) kinds.push_back(KeyKind::Float);
    if (sizeof(Bits) == 2) kinds.push_back(KeyKind::BFloat);
    struct Range {
        uint32_t begin, end;
    };
    const Range ranges[] = {{0, 0}, {0, kWidth}, {1, kWidth - 2}, {kWidth / 2, 0}, {3, kWidth / 2 + 1}};
    for (KeyKind kind : kinds)
        for (bool descending : {false, true})
            for (const Range &range : ranges)
                for (uint64_t n : {uint64_t(0), uint64_t(1), uint64_t(7), uint64_t(1000)})
                    check_count_keys_below_case<Bits>(backend, kind, descending, range.begin, range.end, n, rng);
    check_count_keys_below_case<Bits>(backend, KeyKind::Signed, false, 0, 0, 200003, rng);
}

// ---------------------------------------------------------------------------
// add_to_indices, copy, native_stream
// ---------------------------------------------------------------------------

template <typename U>
void check_add_to_indices(Backend &backend, uint64_t n, uint64_t offset, TestRng &rng) {
    const uint64_t guard = 3;
    std::vector<U> indices(n + guard);
    for (auto &i : indices) i = U(rng());
    Memory memory(backend, indices.size() * sizeof(U));
    memory.upload(indices.data(), indices.size() * sizeof(U));
    backend.add_to_indices(memory.data(), n, sizeof(U), offset);
    std::vector<U> got(indices.size());
    memory.download(got.data(), got.size() * sizeof(U));
    uint64_t bad = 0;
    for (uint64_t i = 0; i < n; ++i) bad += got[i] != U(indices[i] + U(offset));
    for (uint64_t i = n; i < n + guard; ++i) bad += got[i] != indices[i];
    CHECK(bad == 0, "add_to_indices %zu-byte n=%llu offset %llu: %llu wrong", sizeof(U), (unsigned long long)n,
          (unsigned long long)offset, (unsigned long long)bad);
}

void check_copy(Backend &backend, uint64_t bytes, TestRng &rng) {
    const uint64_t guard = 5;
    std::vector<unsigned char> source(bytes + 3), destination(bytes + guard + 1);
    for (auto &b : source) b = static_cast<unsigned char>(rng());
    for (auto &b : destination) b = static_cast<unsigned char>(rng());
    Memory from(backend, source.size()), to(backend, destination.size());
    from.upload(source.data(), source.size());
    to.upload(destination.data(), destination.size());
    // From an odd byte to an odd byte.
    backend.copy(to.as<unsigned char>() + 1, from.as<unsigned char>() + 3, bytes);
    std::vector<unsigned char> got(destination.size());
    to.download(got.data(), got.size());
    CHECK(got[0] == destination[0], "copy wrote before its destination");
    CHECK(std::memcmp(got.data() + 1, source.data() + 3, bytes) == 0, "copy of %llu bytes: wrong bytes",
          (unsigned long long)bytes);
    CHECK(std::memcmp(got.data() + 1 + bytes, destination.data() + 1 + bytes, guard) == 0,
          "copy of %llu bytes wrote past its destination", (unsigned long long)bytes);
}

// ---------------------------------------------------------------------------
// merge_sorted_runs
// ---------------------------------------------------------------------------

// Values of value_bytes bytes (0: none), held as uint64_t in the test (their
// bits at the bottom) and as bytes of that width in the buffers, so that one
// function per key width checks every value width.
uint64_t value_mask(uint32_t value_bytes) {
    return value_bytes >= 8 ? ~uint64_t(0) : (uint64_t(1) << (8 * value_bytes)) - 1;
}

// Values as the backend reads them: unsigned integers of value_bytes bytes
// (dispatch_width, core/dtype.h); none when value_bytes is 0.
std::vector<unsigned char> packed_values(const std::vector<uint64_t> &values, uint32_t value_bytes) {
    std::vector<unsigned char> bytes(values.size() * value_bytes);
    if (value_bytes == 0) return bytes;
    dispatch_width(value_bytes, "test_backend_ops: value width", [&](auto value_bits) {
        using V = decltype(value_bits);
        for (size_t i = 0; i < values.size(); ++i) {
            const V narrow = V(values[i]);
            std::memcpy(&bytes[i * sizeof(V)], &narrow, sizeof(V));
        }
    });
    return bytes;
}

std::vector<uint64_t> unpacked_values(const std::vector<unsigned char> &bytes, uint32_t value_bytes) {
    std::vector<uint64_t> values(value_bytes ? bytes.size() / value_bytes : 0, 0);
    if (value_bytes == 0) return values;
    dispatch_width(value_bytes, "test_backend_ops: value width", [&](auto value_bits) {
        using V = decltype(value_bits);
        for (size_t i = 0; i < values.size(); ++i) {
            V narrow;
            std::memcpy(&narrow, &bytes[i * sizeof(V)], sizeof(V));
            values[i] = narrow;
        }
    });
    return values;
}

template <typename Bits>
void check_merge_case(Backend &backend, KeyKind kind, bool descending, uint32_t begin_bit, uint32_t end_bit,
                      uint32_t value_bytes, const std::vector<uint64_t> &lengths, bool few, TestRng &rng) {
    constexpr uint32_t kWidth = sizeof(Bits) * 8;
    const uint32_t end = end_bit ? end_bit : kWidth;
    const uint32_t runs = uint32_t(lengths.size());
    std::vector<uint64_t> starts(runs + 1, 0);
    for (uint32_t r = 0; r < runs; ++r) starts[r + 1] = starts[r] + lengths[r];
    const uint64_t n = starts[runs];
    auto bits_of = [&](Bits key) { return sort_bits(to_radix_key<Bits>(key, kind, descending), begin_bit, end); };

    std::vector<Bits> pool(5);
    for (auto &p : pool) p = Bits(rng());
    std::vector<Bits> keys(n);
    for (auto &k : keys) k = few ? pool[rng() % pool.size()] : Bits(rng());
    // Values: each element's input position where they hold it, else random bits.
    std::vector<uint64_t> values(value_bytes ? n : 0);
    for (uint64_t i = 0; i < values.size(); ++i) values[i] = (value_bytes >= 4 ? i : rng()) & value_mask(value_bytes);
    // Each run sorted stably (keys with their values).
    std::vector<uint64_t> order(n);
    for (uint64_t i = 0; i < n; ++i) order[i] = i;
    auto by_bits = [&](uint64_t x, uint64_t y) { return bits_of(keys[x]) < bits_of(keys[y]); };
    for (uint32_t r = 0; r < runs; ++r)
        std::stable_sort(order.begin() + starts[r], order.begin() + starts[r + 1], by_bits);
    {
        std::vector<Bits> k(n);
        std::vector<uint64_t> v(values.size());
        for (uint64_t i = 0; i < n; ++i) {
            k[i] = keys[order[i]];
            if (value_bytes) v[i] = values[order[i]];
        }
        keys.swap(k);
        values.swap(v);
    }
    // The reference: a stable sort of the concatenation.
    for (uint64_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), by_bits);

    const uint64_t guard = 3;
    const uint64_t vb = value_bytes;
    Memory keys_in(backend, n * sizeof(Bits)), keys_out(backend, (n + guard) * sizeof(Bits)),
        spare_keys(backend, n * sizeof(Bits));
    Memory values_in(backend, n * vb), values_out(backend, (n + guard) * vb), spare_values(backend, n * vb);
    keys_in.upload(keys.data(), n * sizeof(Bits));
    if (vb) values_in.upload(packed_values(values, value_bytes).data(), n * vb);
    std::vector<Bits> sentinel_keys(n + guard, Bits(0x5A));
    const std::vector<uint64_t> sentinel_values(vb ? n + guard : 0, 0x3C);
    const std::vector<unsigned char> sentinel_value_bytes = packed_values(sentinel_values, value_bytes);
    keys_out.upload(sentinel_keys.data(), (n + guard) * sizeof(Bits));
    if (vb) values_out.upload(sentinel_value_bytes.data(), (n + guard) * vb);

    SortRequest request{};
    request.key_kind = kind;
    request.key_bytes = sizeof(Bits);
    request.begin_bit = begin_bit;
    request.end_bit = end_bit;
    request.descending = descending;
    request.keys_in = keys_in.data();
    request.keys_out = keys_out.data();
    request.value_bytes = value_bytes;
    request.values_in = vb ? values_in.data() : nullptr;
    request.values_out = vb ? values_out.data() : nullptr;
    request.count = n;
    // Twice: the second call, with its workspace already there, must not
    // take host memory (the distributed sort merges after the ranks traded
    // their keys: a rank failing an allocation there alone splits them), so
    // its first operator new fails; its outputs are the ones checked.
    backend.merge_sorted_runs(request, starts.data(), runs, spare_keys.data(), vb ? spare_values.data() : nullptr);
    backend.synchronize();
    keys_out.upload(sentinel_keys.data(), (n + guard) * sizeof(Bits));
    if (vb) values_out.upload(sentinel_value_bytes.data(), (n + guard) * vb);
    bool allocated = false;
    failing_new::arm(0);
    try {
        backend.merge_sorted_runs(request, starts.data(), runs, spare_keys.data(), vb ? spare_values.data() : nullptr);
    } catch (const std::bad_alloc &) {
        allocated = true;
    } catch (const Error &error) {
        allocated = error.status() == GPUPRIM_ERROR_OUT_OF_MEMORY;
        if (!allocated) throw;
    }
    allocated = failing_new::disarm() || allocated;
    backend.synchronize();

    std::vector<Bits> got_keys(n + guard);
    keys_out.download(got_keys.data(), (n + guard) * sizeof(Bits));
    std::vector<unsigned char> got_value_bytes(vb ? (n + guard) * vb : 0);
    if (vb) values_out.download(got_value_bytes.data(), (n + guard) * vb);
    const std::vector<uint64_t> got_values = unpacked_values(got_value_bytes, value_bytes);
    uint64_t bad = 0, first_bad = 0;
    for (uint64_t i = 0; i < n; ++i) {
        const bool wrong = got_keys[i] != keys[order[i]] || (vb && got_values[i] != values[order[i]]);
        if (wrong && bad++ == 0) first_bad = i;
    }
    for (uint64_t i = n; i < n + guard; ++i)
        bad += got_keys[i] != sentinel_keys[i] || (vb && got_values[i] != sentinel_values[i]);
    std::string shape;
    for (uint64_t length : lengths) shape += (shape.empty() ? "" : ",") + std::to_string(length);
    CHECK(!allocated, "merge_sorted_runs %zu-byte values %u runs [%s]: took host memory on a repeated call",
          sizeof(Bits), value_bytes, shape.size() > 80 ? (shape.substr(0, 80) + "...").c_str() : shape.c_str());
    CHECK(bad == 0,
          "merge_sorted_runs %zu-byte kind %d %s bits [%u,%u) values %u runs [%s]%s: %llu wrong, first at %llu",
          sizeof(Bits), int(kind), descending ? "descending" : "ascending", begin_bit, end, value_bytes,
          shape.size() > 80 ? (shape.substr(0, 80) + "...").c_str() : shape.c_str(), few ? " few distinct" : "",
          (unsigned long long)bad, (unsigned long long)first_bad);
}

template <typename Bits>
void check_merge_width(Backend &backend, TestRng &rng) {
    constexpr uint32_t kWidth = sizeof(Bits) * 8;
    std::vector<KeyKind> kinds = {KeyKind::Unsigned, KeyKind::Signed};
    if (sizeof(Bits) >= 2) kinds.push_back(KeyKind::Float);
    if (sizeof(Bits) == 2) kinds.push_back(KeyKind::BFloat);
    struct Range {
        uint32_t begin, end;
    };
    const Range ranges[] = {{0, 0}, {1, kWidth - 2}, {kWidth / 2, 0}};
    const uint32_t value_widths[] = {0, 1, 2, 4, 8};
    // Run shapes: small, with empty runs, and around 2048 outputs.
    const std::vector<std::vector<uint64_t>> shapes = {
        {0},          {5},          {3, 4},          {0, 6},         {6, 0},       {0, 0, 0},
        {1, 2, 3},    {3, 0, 7, 0, 0, 2, 1, 0, 9},   {2047, 1},      {2048, 2049}, {1, 2047, 2048, 4095, 1},
        {2049, 0, 2047, 4097, 0}, {700, 800, 900, 1000, 1100, 1200, 1300, 1400, 1500}};
    uint32_t v = 0;
    for (KeyKind kind : kinds)
        for (bool descending : {false, true})
            for (const Range &range : ranges)
                for (const auto &shape : shapes) {
                    const uint32_t value_bytes = value_widths[v++ % 5];
                    check_merge_case<Bits>(backend, kind, descending, range.begin, range.end, value_bytes,
                                                  shape, rng() % 2 == 0, rng);
                }
    // Around the CUDA merge's tiles: 512 outputs a thread of min(15, 60 / (key
    // + value bytes)) each (src/cuda/merge/merge.cu MergeShape), per value width.
    for (uint32_t value_bytes : value_widths) {
        const uint64_t element_bytes = sizeof(Bits) + value_bytes;
        const uint64_t tile = 512 * std::min<uint64_t>(15, std::max<uint64_t>(1, 60 / element_bytes));
        const std::vector<std::vector<uint64_t>> tile_shapes = {
            {tile - 1, 1}, {tile, tile + 1}, {1, tile - 1, tile, 2 * tile - 1, 1}, {0, tile + 1, 0, tile - 1}};
        for (const auto &shape : tile_shapes)
            check_merge_case<Bits>(backend, kinds[rng() % kinds.size()], rng() % 2, 0, 0, value_bytes, shape,
                                          rng() % 2 == 0, rng);
    }
    // Many runs (as many as ranks): 5 to 7 rounds with odd groups out at
    // several of them; short runs, a quarter empty.
    for (uint32_t runs : {16u, 17u, 33u, 100u}) {
        std::vector<uint64_t> lengths(runs);
        for (auto &length : lengths) length = rng() % 4 == 0 ? 0 : rng() % 300;
        check_merge_case<Bits>(backend, kinds[rng() % kinds.size()], rng() % 2, 0, 0, runs % 2 ? 4 : 0,
                                      lengths, rng() % 2 == 0, rng);
    }
    // Random run counts 1..9, random lengths (some empty).
    for (uint32_t runs = 1; runs <= 9; ++runs)
        for (uint32_t value_bytes : {0u, 4u, 8u}) {
            std::vector<uint64_t> lengths(runs);
            for (auto &length : lengths) length = rng() % 4 == 0 ? 0 : rng() % 5000;
            check_merge_case<Bits>(backend, kinds[rng() % kinds.size()], rng() % 2, 0, 0, value_bytes,
                                          lengths, rng() % 2 == 0, rng);
        }
    // Past 100000, ties across runs and none.
    for (bool few : {true, false}) {
        check_merge_case<Bits>(backend, KeyKind::Signed, false, 0, 0, 8, {100003, 50000, 7, 0, 60001}, few,
                                      rng);
        check_merge_case<Bits>(backend, kinds.back(), true, 0, 0, 4, {150000, 150001}, few, rng);
    }
}

void check_merge_edges(Backend &backend) {
    // No runs of no elements, and one run (a copy).
    SortRequest request{};
    request.key_kind = KeyKind::Unsigned;
    request.key_bytes = 4;
    request.count = 0;
    const uint64_t zero = 0;
    backend.merge_sorted_runs(request, &zero, 0, nullptr, nullptr);
    const uint64_t none[2] = {0, 0};
    backend.merge_sorted_runs(request, none, 1, nullptr, nullptr);
    // A width the merge does not know: INTERNAL, not a silent success.
    request.key_bytes = 3;
    request.count = 0;
    bool failed = false;
    try {
        backend.merge_sorted_runs(request, none, 1, nullptr, nullptr);
    } catch (const Error &error) {
        failed = error.status() == GPUPRIM_ERROR_INTERNAL;
    }
    CHECK(failed, "merge_sorted_runs of 3-byte keys did not fail with INTERNAL");
}

std::string lowered(const char *text) {
    std::string s;
    for (const char *c = text; c && *c; ++c) s += char(std::tolower(static_cast<unsigned char>(*c)));
    return s;
}

void run_all(Backend &backend, Backend &other, bool large) {
    check_scan_dtype<int32_t>(backend, large);
    check_scan_dtype<float>(backend, large);
    check_scan_dtype<float16>(backend, large);
    check_scan_dtype<uint8_t>(backend, large);
    check_scan_dtype<uint32_t>(backend, false);
    check_scan_dtype<int64_t>(backend, false);
    check_scan_dtype<uint64_t>(backend, false);
    check_scan_dtype<double>(backend, false);
    check_scan_dtype<bfloat16>(backend, false);
    check_scan_dtype<int8_t>(backend, false);
    check_scan_dtype<int16_t>(backend, false);
    check_scan_dtype<uint16_t>(backend, false);
    std::printf("  scan with initial: done (%d failures so far)\n", g_failures);

    check_scan_determinism<float>(backend, other);
    check_scan_determinism<float16>(backend, other);
    check_scan_determinism<double>(backend, other);
    std::printf("  scan determinism: done (%d failures so far)\n", g_failures);

    TestRng rng(g_seed + 99);
    check_count_keys_below_width<uint8_t>(backend, rng);
    check_count_keys_below_width<uint16_t>(backend, rng);
    check_count_keys_below_width<uint32_t>(backend, rng);
    check_count_keys_below_width<uint64_t>(backend, rng);
    std::printf("  count_keys_below: done (%d failures so far)\n", g_failures);

    for (uint64_t n : {uint64_t(0), uint64_t(1), uint64_t(5), uint64_t(100003)}) {
        check_add_to_indices<uint32_t>(backend, n, 12345, rng);
        check_add_to_indices<uint32_t>(backend, n, 0xFFFFFFF0ull, rng);  // wraps
        check_add_to_indices<uint64_t>(backend, n, uint64_t(1) << 40, rng);
        check_add_to_indices<uint64_t>(backend, n, UINT64_MAX - 2, rng);  // wraps
    }
    for (uint64_t bytes : {uint64_t(0), uint64_t(1), uint64_t(17), uint64_t(1000003)}) check_copy(backend, bytes, rng);
    std::printf("  add_to_indices, copy: done (%d failures so far)\n", g_failures);

    check_merge_edges(backend);
    check_merge_width<uint8_t>(backend, rng);
    check_merge_width<uint16_t>(backend, rng);
    check_merge_width<uint32_t>(backend, rng);
    check_merge_width<uint64_t>(backend, rng);
    std::printf("  merge_sorted_runs: done (%d failures so far)\n", g_failures);

    if (backend.kind() == GPUPRIM_BACKEND_CPU) CHECK(backend.native_stream() == nullptr, "CPU native_stream not null");
    else CHECK(backend.native_stream() != nullptr, "CUDA native_stream is null");
}

}  // namespace

int main() {
    if (const char *seed = std::getenv("GPUPRIM_TEST_SEED")) g_seed = std::strtoull(seed, nullptr, 10);
    const std::string wanted = lowered(std::getenv("GPUPRIM_BACKEND"));
    try {
        std::unique_ptr<Backend> backend, other;
        bool use_cuda = false;
        if (wanted == "cuda") {
            if (!cuda_backend_built() || !cuda_device_usable(0)) {
                return tc_skip("test_backend_ops: GPUPRIM_BACKEND=cuda but no usable CUDA device: skipped");
            }
            use_cuda = true;
        } else if (wanted.empty() || wanted == "auto") {
            use_cuda = cuda_backend_built() && cuda_device_usable(0);
        } else if (wanted != "cpu") {
            std::printf("test_backend_ops: GPUPRIM_BACKEND='%s' is not one of cpu, cuda, auto\n", wanted.c_str());
            return 1;
        }
        if (use_cuda) {
            backend = make_cuda_backend(0, nullptr);
            other = make_cuda_backend(0, nullptr);
        } else {
            backend = make_cpu_backend(2);
            other = make_cpu_backend(1);
        }
        std::printf("test_backend_ops: backend %s (%s), seed %llu\n", use_cuda ? "cuda" : "cpu",
                    backend->device_name(), (unsigned long long)g_seed);
        run_all(*backend, *other, true);
    } catch (const Error &error) {
        std::printf("test_backend_ops: gpuprim error %d: %s\n", int(error.status()), error.what());
        return 1;
    }
    if (g_failures) {
        std::printf("test_backend_ops: %d failures\n", g_failures);
        return 1;
    }
    std::printf("test_backend_ops: all passed\n");
    return 0;
}
