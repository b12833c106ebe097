// SPDX-License-Identifier: Apache-2.0
// check_reduce_by_key: reduce-by-key (src/cuda/reduce_by_key/) and group-by
// (src/cuda/group_by/) driven directly, not through the C API, against a
// host reference: each run's (group's) key, length (count) and result, the
// inverse, the count in device memory (4 or 8 bytes) and on the host; every
// output poisoned before the call and every element past the count checked
// untouched; the zeroed counter words left zero.
//
//   check_reduce_by_key [check | small]
//
// check: every value dtype × SUM/MIN/MAX over keys of every width, on random,
//        special, few-valued, sorted, all-equal and long-run keys (runs past
//        a tile, one run over 70 tiles: the crossing-runs kernel's window),
//        at sizes around one tile, two tiles, 33 and 70 tiles and 200003.
//        Values: SUM of small integers (exact in every dtype, so any
//        association gives the reference's bits), MIN/MAX of the special
//        values (NaN payloads of both signs, ±0, ±inf, subnormals, min/max:
//        exact in any order). Determinism: random f32/f64/f16 sums run twice,
//        the same bits, and within a tolerance of the in-order sum.
//        Group-by: random, few-valued, special, sorted and reversed keys, with
//        and without values, every output.
// small: sizes up to three tiles, a few dtypes (for compute-sanitizer).
#include "harness.h"

#include "core/backend.h"
#include "core/key_transform.h"
#include "cuda/group_by/group_by.h"
#include "cuda/reduce_by_key/reduce_by_key.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <numeric>

namespace {

using gpuprim::GroupByRequest;
using gpuprim::ReduceByKeyRequest;

constexpr uint8_t kPoison = 0xA5;
// ReduceByKeyShape::kTileItems: 256 x 17 for keys and running values of 8
// bytes together (u32 keys, f32 sums), 256 x 9 for wider ones.
constexpr uint64_t kTile = 256 * 17;
constexpr uint64_t kWideTile = 256 * 9;
uint64_t rng_state = 0x9E3779B97F4A7C15ull;
uint64_t next_random() {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

int failures = 0;
uint64_t cases = 0;

void report(const std::string &label, const char *format, uint64_t a, uint64_t b) {
    if (++failures <= 30) {
        std::printf("FAIL %s: ", label.c_str());
        std::printf(format, (unsigned long long)a, (unsigned long long)b);
        std::printf("\n");
    }
}

struct DeviceBytes {
    void *p = nullptr;
    uint64_t bytes = 0;
    explicit DeviceBytes(uint64_t b) : bytes(b) {
        CK(cudaMalloc(&p, b ? b : 1));
        CK(cudaMemset(p, kPoison, b ? b : 1));
    }
    DeviceBytes(const void *host, uint64_t b) : DeviceBytes(b) {
        if (b) CK(cudaMemcpy(p, host, b, cudaMemcpyHostToDevice));
    }
    ~DeviceBytes() { cudaFree(p); }
    DeviceBytes(const DeviceBytes &) = delete;
    DeviceBytes &operator=(const DeviceBytes &) = delete;
    std::vector<uint8_t> download() const {
        std::vector<uint8_t> host(bytes);
        if (bytes) CK(cudaMemcpy(host.data(), p, bytes, cudaMemcpyDeviceToHost));
        return host;
    }
};

uint64_t read_index(const uint8_t *at, uint32_t width) {
    uint64_t v = 0;
    std::memcpy(&v, at, width);
    return v;
}

// got's first want.size() / width elements are want's bytes, poison after.
void check_bytes(const std::string &label, const DeviceBytes &out, const std::vector<uint8_t> &want, uint32_t width) {
    const std::vector<uint8_t> got = out.download();
    for (uint64_t b = 0; b < want.size(); b += width)
        if (std::memcmp(&got[b], &want[b], width) != 0)
            return report(label, "element %llu differs (width %llu)", b / width, width);
    for (uint64_t b = want.size(); b < got.size(); ++b)
        if (got[b] != kPoison) return report(label, "byte %llu past the %llu written was changed", b, want.size());
}

void check_indices(const std::string &label, const DeviceBytes &out, uint32_t width, const std::vector<uint64_t> &want,
                   bool tail_untouched = true) {
    const std::vector<uint8_t> got = out.download();
    for (uint64_t j = 0; j < want.size(); ++j)
        if (read_index(&got[j * width], width) != want[j])
            return report(label, "index %llu is %llu", j, read_index(&got[j * width], width));
    if (tail_untouched)
        for (uint64_t b = want.size() * width; b < got.size(); ++b)
            if (got[b] != kPoison) return report(label, "byte %llu past the %llu written was changed", b, want.size());
}

struct CountCheck {
    DeviceBytes device{8};
    uint32_t device_bytes;
    bool host;
    uint64_t host_count = 0xDEADBEEFull;
    CountCheck(uint32_t bytes, bool on_host) : device_bytes(bytes), host(on_host || bytes == 0) {}
    gpuprim::CountSink sink() {
        gpuprim::CountSink s;
        s.device = device_bytes ? device.p : nullptr;
        s.device_bytes = device_bytes;
        s.host = host ? &host_count : nullptr;
        return s;
    }
    void verify(const std::string &label, uint64_t want) const {
        if (host && host_count != want) report(label, "host count %llu, want %llu", host_count, want);
        const std::vector<uint8_t> got = device.download();
        if (device_bytes && read_index(got.data(), device_bytes) != (device_bytes == 4 ? uint32_t(want) : want))
            report(label, "device count %llu, want %llu", read_index(got.data(), device_bytes), want);
        for (uint32_t b = device_bytes; b < 8; ++b)
            if (got[b] != kPoison) report(label, "count byte %llu changed (count of %llu bytes)", b, device_bytes);
    }
};

template <typename T>
std::vector<T> specials() {
    using Bits = gpuprim::bits_t<T>;
    std::vector<uint64_t> bits;
    if constexpr (std::is_same_v<T, float>)
        bits = {0, 0x80000000, 0x3f800000, 0xbf800000, 0x7f800000, 0xff800000, 0x7fc00000,
                0xffc00000, 0x7f800001, 0xff800005, 1, 0x80000001, 0x7f7fffff, 0xff7fffff, 0x00800000};
    else if constexpr (std::is_same_v<T, double>)
        bits = {0, 0x8000000000000000, 0x3ff0000000000000, 0xbff0000000000000, 0x7ff0000000000000,
                0xfff0000000000000, 0x7ff8000000000000, 0xfff8000000000000, 0x7ff0000000000001,
                0xfff0000000000005, 1, 0x8000000000000001, 0x7fefffffffffffff, 0xffefffffffffffff,
                0x0010000000000000};
    else if constexpr (std::is_same_v<T, gpuprim::float16>)
        bits = {0, 0x8000, 0x3c00, 0xbc00, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01, 0xfc05, 1, 0x8001, 0x7bff, 0xfbff,
                0x0400};
    else if constexpr (std::is_same_v<T, gpuprim::bfloat16>)
        bits = {0, 0x8000, 0x3f80, 0xbf80, 0x7f80, 0xff80, 0x7fc0, 0xffc0, 0x7f81, 0xff85, 1, 0x8001, 0x7f7f, 0xff7f,
                0x0080};
    else {
        const uint64_t sign = uint64_t(1) << (sizeof(T) * 8 - 1);
        bits = {0, 1, ~uint64_t(0), sign, sign - 1, 2};
    }
    std::vector<T> out;
    for (uint64_t b : bits) out.push_back(gpuprim::bit_cast<T>(Bits(b)));
    return out;
}

enum class Pattern { kRandom, kSpecial, kFew, kSorted, kReversed, kAllEqual, kRuns };
const char *pattern_name(Pattern p) {
    switch (p) {
    case Pattern::kRandom: return "random";
    case Pattern::kSpecial: return "special";
    case Pattern::kFew: return "few";
    case Pattern::kSorted: return "sorted";
    case Pattern::kReversed: return "reversed";
    case Pattern::kAllEqual: return "all-equal";
    case Pattern::kRuns: return "runs";
    }
    return "?";
}

template <typename K>
std::vector<K> make_keys(Pattern pattern, uint64_t n) {
    using Bits = gpuprim::bits_t<K>;
    const std::vector<K> special = specials<K>();
    std::vector<K> keys(n);
    const K fixed = special[next_random() % special.size()];
    for (uint64_t i = 0; i < n;) {
        switch (pattern) {
        case Pattern::kRandom: keys[i++] = gpuprim::bit_cast<K>(Bits(next_random())); break;
        case Pattern::kSpecial: keys[i++] = special[next_random() % special.size()]; break;
        case Pattern::kFew: keys[i++] = special[next_random() % 3]; break;
        case Pattern::kSorted: keys[i] = gpuprim::bit_cast<K>(Bits(i / 3)); ++i; break;
        case Pattern::kReversed: keys[i] = gpuprim::bit_cast<K>(Bits(n - i)); ++i; break;
        case Pattern::kAllEqual: keys[i++] = fixed; break;
        case Pattern::kRuns: {
            // Runs of 1, 2, 3, about half a tile, past a tile, of few values.
            const uint64_t lengths[] = {1, 1, 2, 3, kTile / 2 + 1, kTile + 3, 40, 3 * kTile - 1};
            const uint64_t length = lengths[next_random() % 8];
            const K value = special[next_random() % 4];
            for (uint64_t j = 0; j < length && i < n; ++j) keys[i++] = value;
            break;
        }
        }
    }
    return keys;
}

enum class Values { kSmallIntegers, kSpecial, kRandomFloats };

template <typename T>
T value_of_float(float f) {
    if constexpr (gpuprim::kIsHalf<T>) return gpuprim::round_to<T>(f);
    else if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<int64_t>(f));  // wraps for unsigned
    else return T(f);
}

template <typename T>
std::vector<T> make_values(Values kind, uint64_t n) {
    std::vector<T> values(n);
    const std::vector<T> special = specials<T>();
    for (uint64_t i = 0; i < n; ++i) {
        switch (kind) {
        case Values::kSmallIntegers: values[i] = value_of_float<T>(float(int(next_random() % 17) - 8)); break;
        case Values::kSpecial: values[i] = special[next_random() % special.size()]; break;
        case Values::kRandomFloats:
            values[i] = value_of_float<T>(float(int64_t(next_random() >> 40) - (1 << 23)) / float(1 << 20));
            break;
        }
    }
    return values;
}

// The in-order reference of one run's values [from, to) under op, as core/ops.h defines it.
template <typename T>
T reference_fold(const std::vector<T> &values, const std::vector<uint64_t> &order, uint64_t from, uint64_t to,
                 gpuprim_op_t op) {
    auto at = [&](uint64_t j) { return values[order.empty() ? j : order[j]]; };
    if (op == GPUPRIM_OP_SUM) {
        using Acc = gpuprim::sum_accumulator_t<T>;
        Acc acc = gpuprim::to_accumulator(at(from));
        for (uint64_t j = from + 1; j < to; ++j) acc = gpuprim::SumOp<Acc>()(acc, gpuprim::to_accumulator(at(j)));
        return gpuprim::from_accumulator<T>(gpuprim::canonical_nan_if_nan(acc));
    }
    T acc = at(from);
    for (uint64_t j = from + 1; j < to; ++j)
        acc = op == GPUPRIM_OP_MIN ? gpuprim::MinOp<T>()(acc, at(j)) : gpuprim::MaxOp<T>()(acc, at(j));
    return acc;
}

template <typename K>
void host_runs(const std::vector<K> &keys, std::vector<uint64_t> &starts, std::vector<uint64_t> &lengths) {
    const uint64_t n = keys.size();
    for (uint64_t i = 0; i < n;) {
        uint64_t j = i + 1;
        while (j < n && std::memcmp(&keys[j], &keys[i], sizeof(K)) == 0) ++j;
        starts.push_back(i);
        lengths.push_back(j - i);
        i = j;
    }
}

struct Shape {
    bool keys_out;
    uint32_t length_bytes;  // 0: none
    uint32_t count_bytes;   // 0: host only
    bool host_count;
};

template <typename K, typename T>
void run_reduce_by_key(kernel_check::KernelEnv &k, const std::string &label, const std::vector<K> &keys,
                       const std::vector<T> &values, gpuprim_op_t op, const Shape &shape, bool exact) {
    ++cases;
    const uint64_t n = keys.size();
    std::vector<uint64_t> starts, lengths;
    host_runs(keys, starts, lengths);
    const uint64_t runs = starts.size();
    DeviceBytes keys_in(keys.data(), n * sizeof(K)), values_in(values.data(), n * sizeof(T));
    DeviceBytes keys_out(n * sizeof(K)), results(n * sizeof(T)), lengths_out(n * shape.length_bytes);
    CountCheck count(shape.count_bytes, shape.host_count);
    ReduceByKeyRequest request{};
    request.key_bytes = sizeof(K);
    request.keys = keys_in.p;
    request.count = n;
    request.op = op;
    request.value_dtype = kernel_check::DT<T>::v;
    request.values = values_in.p;
    request.keys_out = shape.keys_out ? keys_out.p : nullptr;
    request.results = results.p;
    request.lengths = shape.length_bytes ? lengths_out.p : nullptr;
    request.length_bytes = shape.length_bytes;
    request.runs = count.sink();
    auto call = [&]() -> bool {
        try {
            gpuprim::cuda::reduce_by_key(k.env, request);
        } catch (const std::exception &e) {
            report(label + ": " + e.what(), "threw (n %llu, runs %llu)", n, runs);
            return false;
        }
        CK(cudaStreamSynchronize(k.env.stream));
        return true;
    };
    if (!call()) return;
    count.verify(label, runs);
    std::vector<uint8_t> want_keys(shape.keys_out ? runs * sizeof(K) : 0);
    for (uint64_t r = 0; r < runs && shape.keys_out; ++r) std::memcpy(&want_keys[r * sizeof(K)], &keys[starts[r]], sizeof(K));
    check_bytes(label + " keys", keys_out, want_keys, sizeof(K));
    if (shape.length_bytes) check_indices(label + " lengths", lengths_out, shape.length_bytes, lengths);
    const std::vector<uint8_t> got = results.download();
    if (exact) {
        std::vector<uint8_t> want(runs * sizeof(T));
        for (uint64_t r = 0; r < runs; ++r) {
            const T folded = reference_fold(values, {}, starts[r], starts[r] + lengths[r], op);
            std::memcpy(&want[r * sizeof(T)], &folded, sizeof(T));
        }
        check_bytes(label + " results", results, want, sizeof(T));
    } else {
        // Random floats: within a tolerance of the in-order sum, then the same bits again.
        for (uint64_t r = 0; r < runs; ++r) {
            double magnitude = 0, sum = 0;
            for (uint64_t j = starts[r]; j < starts[r] + lengths[r]; ++j) {
                const double v = double(gpuprim::to_accumulator(values[j]));
                sum += v;
                magnitude += std::fabs(v);
            }
            T g;
            std::memcpy(&g, &got[r * sizeof(T)], sizeof(T));
            const double tolerance = (sizeof(T) == 8 ? 1e-13 : sizeof(T) == 4 ? 1e-5 : 1e-2) * (magnitude + 1.0);
            if (!(std::fabs(double(gpuprim::to_accumulator(g)) - sum) <= tolerance))
                return report(label + " results", "run %llu of %llu off the in-order sum", r, runs);
        }
        CK(cudaMemset(results.p, kPoison, results.bytes));
        if (!call()) return;
        if (results.download() != got) report(label + " results", "a second call gave other bits (n %llu, runs %llu)", n, runs);
    }
}

// The group-by reference: a stable sort by the radix key, the runs of it.
template <typename K, typename T>
void run_group_by(kernel_check::KernelEnv &k, const std::string &label, const std::vector<K> &keys,
                  const std::vector<T> *values, gpuprim_op_t op, uint32_t index_bytes, const Shape &shape) {
    ++cases;
    using Bits = gpuprim::bits_t<K>;
    const uint64_t n = keys.size();
    const gpuprim::KeyKind kind = gpuprim::ElementTraits<K>::kKeyKind;
    std::vector<uint64_t> order(n);
    std::iota(order.begin(), order.end(), uint64_t(0));
    auto radix = [&](uint64_t i) { return gpuprim::to_radix_key(gpuprim::bit_cast<Bits>(keys[i]), kind, false); };
    std::stable_sort(order.begin(), order.end(), [&](uint64_t a, uint64_t b) { return radix(a) < radix(b); });
    std::vector<K> sorted(n);
    for (uint64_t j = 0; j < n; ++j) sorted[j] = keys[order[j]];
    std::vector<uint64_t> starts, lengths;
    host_runs(sorted, starts, lengths);
    const uint64_t groups = starts.size();
    std::vector<uint64_t> inverse(n);
    for (uint64_t g = 0; g < groups; ++g)
        for (uint64_t j = starts[g]; j < starts[g] + lengths[g]; ++j) inverse[order[j]] = g;

    DeviceBytes keys_in(keys.data(), n * sizeof(K));
    DeviceBytes values_in(values ? values->data() : nullptr, values ? n * sizeof(T) : 0);
    DeviceBytes keys_out(n * sizeof(K)), results(n * sizeof(T)), counts(n * shape.length_bytes),
        inverse_out(n * index_bytes);
    CountCheck count(shape.count_bytes, shape.host_count);
    GroupByRequest request{};
    request.key_kind = kind;
    request.key_bytes = sizeof(K);
    request.keys = keys_in.p;
    request.count = n;
    request.op = op;
    request.value_dtype = kernel_check::DT<T>::v;
    request.values = values ? values_in.p : nullptr;
    request.keys_out = shape.keys_out ? keys_out.p : nullptr;
    request.counts = shape.length_bytes ? counts.p : nullptr;
    request.count_bytes = shape.length_bytes;
    request.results = values ? results.p : nullptr;
    request.inverse = index_bytes ? inverse_out.p : nullptr;
    request.inverse_bytes = index_bytes;
    request.groups = count.sink();
    try {
        gpuprim::cuda::group_by(k.env, request);
    } catch (const std::exception &e) {
        return report(label + ": " + e.what(), "threw (n %llu, groups %llu)", n, groups);
    }
    CK(cudaStreamSynchronize(k.env.stream));
    count.verify(label, groups);
    std::vector<uint8_t> want_keys(shape.keys_out ? groups * sizeof(K) : 0);
    for (uint64_t g = 0; g < groups && shape.keys_out; ++g)
        std::memcpy(&want_keys[g * sizeof(K)], &sorted[starts[g]], sizeof(K));
    check_bytes(label + " keys", keys_out, want_keys, sizeof(K));
    if (shape.length_bytes) check_indices(label + " counts", counts, shape.length_bytes, lengths);
    if (index_bytes) check_indices(label + " inverse", inverse_out, index_bytes, inverse);
    if (values) {
        std::vector<uint8_t> want(groups * sizeof(T));
        for (uint64_t g = 0; g < groups; ++g) {
            const T folded = reference_fold(*values, order, starts[g], starts[g] + lengths[g], op);
            std::memcpy(&want[g * sizeof(T)], &folded, sizeof(T));
        }
        check_bytes(label + " results", results, want, sizeof(T));
    } else {
        check_bytes(label + " results (none wanted)", results, {}, sizeof(T));
    }
}

std::vector<uint64_t> sizes(bool small) {
    if (small) return {0, 1, 33, kWideTile + 1, kTile + 1, 2 * kTile + 5};
    return {0,         1,         2,         33,        kWideTile - 1, kWideTile, kWideTile + 1, kTile - 1,
            kTile,     kTile + 1, 2 * kTile - 1, 2 * kTile + 1, 33 * kTile + 7, 70 * kWideTile + 3, 200003};
}

const char *op_name(gpuprim_op_t op) {
    return op == GPUPRIM_OP_SUM ? "sum" : op == GPUPRIM_OP_MIN ? "min" : "max";
}

// Every op over keys of width of K, values T.
template <typename K, typename T>
void check_pair(kernel_check::KernelEnv &k, bool small) {
    const Pattern patterns[] = {Pattern::kRandom, Pattern::kSpecial, Pattern::kFew, Pattern::kSorted,
                                Pattern::kAllEqual, Pattern::kRuns};
    const uint32_t index_widths[] = {4, 8, 0};
    int turn = 0;
    for (uint64_t n : sizes(small)) {
        for (Pattern pattern : patterns) {
            const std::vector<K> keys = make_keys<K>(pattern, n);
            for (gpuprim_op_t op : {GPUPRIM_OP_SUM, GPUPRIM_OP_MIN, GPUPRIM_OP_MAX}) {
                ++turn;
                const Shape shape{turn % 4 != 3, index_widths[turn % 3], index_widths[(turn + 1) % 3], turn % 2 == 1};
                const Values kind = op == GPUPRIM_OP_SUM ? Values::kSmallIntegers : Values::kSpecial;
                char label[200];
                std::snprintf(label, sizeof label, "rbk %s keys %zu values %s n=%llu %s", op_name(op), sizeof(K),
                              gpuprim::dtype_name(kernel_check::DT<T>::v), (unsigned long long)n,
                              pattern_name(pattern));
                run_reduce_by_key<K, T>(k, label, keys, make_values<T>(kind, n), op, shape, true);
                if constexpr (gpuprim::kIsFloat<T>) {
                    if (op == GPUPRIM_OP_SUM)
                        run_reduce_by_key<K, T>(k, std::string(label) + " random floats", keys,
                                                make_values<T>(Values::kRandomFloats, n), op, shape, false);
                }
            }
        }
    }
}

template <typename K, typename T>
void check_group_by(kernel_check::KernelEnv &k, bool small) {
    const Pattern patterns[] = {Pattern::kRandom, Pattern::kSpecial, Pattern::kFew, Pattern::kSorted,
                                Pattern::kReversed, Pattern::kAllEqual};
    const uint32_t index_widths[] = {4, 8, 0};
    int turn = 0;
    for (uint64_t n : sizes(small)) {
        for (Pattern pattern : patterns) {
            const std::vector<K> keys = make_keys<K>(pattern, n);
            for (gpuprim_op_t op : {GPUPRIM_OP_SUM, GPUPRIM_OP_MIN, GPUPRIM_OP_MAX}) {
                ++turn;
                const Shape shape{turn % 4 != 3, index_widths[turn % 3], index_widths[(turn + 1) % 3], turn % 2 == 1};
                const std::vector<T> values =
                    make_values<T>(op == GPUPRIM_OP_SUM ? Values::kSmallIntegers : Values::kSpecial, n);
                char label[200];
                std::snprintf(label, sizeof label, "group-by %s keys %s values %s n=%llu %s", op_name(op),
                              gpuprim::dtype_name(kernel_check::DT<K>::v), gpuprim::dtype_name(kernel_check::DT<T>::v),
                              (unsigned long long)n, pattern_name(pattern));
                run_group_by<K, T>(k, label, keys, turn % 5 == 4 ? nullptr : &values, op, index_widths[(turn + 2) % 3],
                                   shape);
            }
        }
    }
}

void check_all(kernel_check::KernelEnv &k, bool small) {
    if (small) {
        check_pair<uint32_t, float>(k, true);
        check_pair<uint8_t, gpuprim::float16>(k, true);
        check_pair<uint64_t, int8_t>(k, true);
        check_group_by<float, double>(k, true);
        check_group_by<int16_t, uint32_t>(k, true);
        return;
    }
    // Every value dtype over 4-byte keys, every key width with a few value dtypes.
#define GPUPRIM_CHECK_VALUES(e, type, name) check_pair<uint32_t, type>(k, false);
    GPUPRIM_DTYPE_TABLE(GPUPRIM_CHECK_VALUES)
#undef GPUPRIM_CHECK_VALUES
    check_pair<uint8_t, float>(k, false);
    check_pair<uint16_t, gpuprim::bfloat16>(k, false);
    check_pair<uint64_t, double>(k, false);
    check_pair<uint64_t, int64_t>(k, false);
    check_group_by<uint32_t, float>(k, false);
    check_group_by<float, double>(k, false);
    check_group_by<int64_t, gpuprim::float16>(k, false);
    check_group_by<gpuprim::bfloat16, int32_t>(k, false);
    check_group_by<int8_t, uint16_t>(k, false);
    check_group_by<double, float>(k, false);
}

}  // namespace

int main(int argc, char **argv) {
    const std::string mode = argc > 1 ? argv[1] : "check";
    if (mode != "check" && mode != "small") {
        std::printf("usage: check_reduce_by_key [check | small]\n");
        return 2;
    }
    kernel_check::KernelEnv k(true);  // a blocking stream: ordered with the plain copies here
    k.print_device();
    // group-by's sorted keys and permutation live in the side workspace.
    gpuprim::Workspace side(
        [](uint64_t bytes) {
            void *p = nullptr;
            CK(cudaMalloc(&p, bytes));
            return p;
        },
        [](void *p) { cudaFree(p); });
    k.env.side_workspace = &side;
    void *slot = nullptr, *slot_device = nullptr;
    CK(cudaHostAlloc(&slot, 64, cudaHostAllocMapped));
    CK(cudaHostGetDevicePointer(&slot_device, slot, 0));
    k.env.host_slot = slot;
    k.env.host_slot_device = slot_device;
    k.env.host_slot_bytes = 64;
    check_all(k, mode == "small");
    if (!k.counters_zero()) {
        std::printf("FAIL: a zeroed counter word was left non-zero\n");
        ++failures;
    }
    std::printf("check_reduce_by_key %s: %llu cases, %d failures\n", mode.c_str(), (unsigned long long)cases,
                failures);
    CK(cudaFreeHost(slot));
    return failures ? 1 : 0;
}
