// SPDX-License-Identifier: Apache-2.0
// check_select: select / partition / unique / run-length encode
// (src/cuda/select/) driven directly, not through the C API, against a host
// reference: the kept elements (then, partition, the others) in order, their
// values, positions, run starts and lengths, the count in device memory
// (4 or 8 bytes) and on the host; every output poisoned before the call and
// every element past the count checked untouched; the zeroed counter words
// left zero.
//
//   check_select [check | small | big]
//
// check: every dtype × every keep kind (flags of 1, 2, 4, 8 bytes) × select
//        and partition, and the runs (unique, all, non-trivial) of every key
//        width, on random, special (NaN payloads of both signs, ±0, ±inf,
//        subnormals, min/max), few-valued, sorted, all-equal and long-run
//        inputs, at sizes around one tile, two tiles, 33 tiles (look-back
//        past a window) and a few larger; values of 1, 2, 4, 8 bytes.
// small: sizes up to three tiles, one dtype of each width, for
//        compute-sanitizer (run.sh's sanitizers: slow per launch).
// big:   2^32 + 4099 u8 keys: a count, positions and a run length past 2^32
//        (~48 GB of device memory, ~80 GB of host memory at the peak,
//        several minutes: the host reference is plain loops).
#include "harness.h"

#include "core/backend.h"
#include "core/keep_rule.h"
#include "cuda/select/select.h"

#include <cstring>
#include <exception>

namespace {

using gpuprim::KeepRule;
using gpuprim::RunsRequest;
using gpuprim::SelectRequest;

constexpr uint8_t kPoison = 0xA5;
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

// Device memory of `bytes` bytes (a copy of host bytes, or poisoned).
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

// out[j] == in[order[j]] (width bytes each) for j < written, poison after.
void check_gather(const std::string &label, const DeviceBytes &out, const uint8_t *in, uint32_t width,
                  const std::vector<uint64_t> &order, uint64_t written) {
    const std::vector<uint8_t> got = out.download();
    for (uint64_t j = 0; j < written; ++j)
        if (std::memcmp(&got[j * width], in + order[j] * width, width) != 0)
            return report(label, "element %llu differs (from input position %llu)", j, order[j]);
    for (uint64_t b = written * width; b < got.size(); ++b)
        if (got[b] != kPoison) return report(label, "byte %llu past the %llu written was changed", b, written);
}

// out[j] == want[j] as width-byte integers for j < want.size(), poison after.
void check_indices(const std::string &label, const DeviceBytes &out, uint32_t width,
                   const std::vector<uint64_t> &want) {
    const std::vector<uint8_t> got = out.download();
    for (uint64_t j = 0; j < want.size(); ++j)
        if (read_index(&got[j * width], width) != want[j])
            return report(label, "index %llu is %llu", j, read_index(&got[j * width], width));
    for (uint64_t b = want.size() * width; b < got.size(); ++b)
        if (got[b] != kPoison) return report(label, "byte %llu past the %llu written was changed", b, want.size());
}

// Where the count goes: device (0, 4 or 8 bytes) and/or host.
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

std::vector<uint8_t> random_bytes(uint64_t bytes) {
    std::vector<uint8_t> v(bytes);
    for (auto &b : v) b = uint8_t(next_random() >> 24);
    return v;
}

// Bit patterns worth testing, as T: for floats ±0, ±1, ±inf, quiet NaNs of
// both signs, a NaN payload, ± the least subnormal, ±max, the least normal;
// for integers 0, 1, all ones, the sign bit alone, the largest signed, 2.
template <typename T>
std::vector<T> specials() {
    using Bits = gpuprim::bits_t<T>;
    std::vector<uint64_t> bits;
    if constexpr (std::is_same_v<T, float>)
        bits = {0, 0x80000000, 0x3f800000, 0xbf800000, 0x7f800000, 0xff800000, 0x7fc00000,
                0xffc00000, 0x7f800001, 1, 0x80000001, 0x7f7fffff, 0xff7fffff, 0x00800000};
    else if constexpr (std::is_same_v<T, double>)
        bits = {0, 0x8000000000000000, 0x3ff0000000000000, 0xbff0000000000000, 0x7ff0000000000000,
                0xfff0000000000000, 0x7ff8000000000000, 0xfff8000000000000, 0x7ff0000000000001, 1,
                0x8000000000000001, 0x7fefffffffffffff, 0xffefffffffffffff, 0x0010000000000000};
    else if constexpr (std::is_same_v<T, gpuprim::float16>)
        bits = {0, 0x8000, 0x3c00, 0xbc00, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01, 1, 0x8001, 0x7bff, 0xfbff, 0x0400};
    else if constexpr (std::is_same_v<T, gpuprim::bfloat16>)
        bits = {0, 0x8000, 0x3f80, 0xbf80, 0x7f80, 0xff80, 0x7fc0, 0xffc0, 0x7f81, 1, 0x8001, 0x7f7f, 0xff7f, 0x0080};
    else {
        const uint64_t sign = uint64_t(1) << (sizeof(T) * 8 - 1);
        bits = {0, 1, ~uint64_t(0), sign, sign - 1, 2};
    }
    std::vector<T> out;
    for (uint64_t b : bits) out.push_back(gpuprim::bit_cast<T>(Bits(b)));
    return out;
}

enum class Pattern { kRandom, kSpecial, kFew, kSorted, kAllEqual, kRuns };
const char *pattern_name(Pattern p) {
    switch (p) {
    case Pattern::kRandom: return "random";
    case Pattern::kSpecial: return "special";
    case Pattern::kFew: return "few";
    case Pattern::kSorted: return "sorted";
    case Pattern::kAllEqual: return "all-equal";
    case Pattern::kRuns: return "runs";
    }
    return "?";
}

template <typename T>
std::vector<T> make_keys(Pattern pattern, uint64_t n, uint64_t tile) {
    using Bits = gpuprim::bits_t<T>;
    const std::vector<T> special = specials<T>();
    std::vector<T> keys(n);
    const T fixed = special[next_random() % special.size()];
    for (uint64_t i = 0; i < n;) {
        switch (pattern) {
        case Pattern::kRandom: keys[i++] = gpuprim::bit_cast<T>(Bits(next_random())); break;
        case Pattern::kSpecial: keys[i++] = special[next_random() % special.size()]; break;
        case Pattern::kFew: keys[i++] = special[next_random() % 3]; break;
        case Pattern::kSorted: keys[i] = gpuprim::bit_cast<T>(Bits(i)); ++i; break;
        case Pattern::kAllEqual: keys[i++] = fixed; break;
        case Pattern::kRuns: {
            // Runs of 1, 2, 3, about half a tile or past a tile, of few values.
            const uint64_t lengths[] = {1, 1, 2, 3, tile / 2 + 1, tile + 3, 40};
            const uint64_t length = lengths[next_random() % 7];
            const T value = special[next_random() % 4];
            for (uint64_t j = 0; j < length && i < n; ++j) keys[i++] = value;
            break;
        }
        }
    }
    return keys;
}

// A select or partition case: outputs and where the count goes.
struct SelectShape {
    bool partition;
    bool keys_out;
    uint32_t value_bytes;     // 0: no values
    uint32_t position_bytes;  // 0: none (always 0 for partition)
    uint32_t count_bytes;     // 0: host only
    bool host_count;
};

template <typename T>
void run_select(kernel_check::KernelEnv &k, const std::string &label, const std::vector<T> &keys, KeepRule rule,
                const std::vector<uint8_t> &flags_host, const SelectShape &shape) {
    ++cases;
    const uint64_t n = keys.size();
    const uint32_t width = sizeof(T);
    std::vector<uint64_t> order, others;
    const gpuprim::KeepTest<T> test = rule.kind == GPUPRIM_KEEP_FLAGGED ? gpuprim::KeepTest<T>{} : gpuprim::keep_test_of<T>(rule);
    for (uint64_t i = 0; i < n; ++i) {
        const bool keep = rule.kind == GPUPRIM_KEEP_FLAGGED ? gpuprim::flag_is_set(flags_host.data(), rule.flag_bytes, i)
                                                            : gpuprim::keeps(test, keys[i]);
        (keep ? order : others).push_back(i);
    }
    const uint64_t kept = order.size();
    if (shape.partition) order.insert(order.end(), others.begin(), others.end());
    const uint64_t written = order.size();

    const auto *key_bytes = reinterpret_cast<const uint8_t *>(keys.data());
    DeviceBytes in(key_bytes, n * width), flags(flags_host.data(), flags_host.size());
    DeviceBytes out(n * width);
    const std::vector<uint8_t> values = random_bytes(n * shape.value_bytes);
    DeviceBytes values_in(values.data(), values.size()), values_out(values.size());
    DeviceBytes positions(n * shape.position_bytes);
    CountCheck count(shape.count_bytes, shape.host_count);

    SelectRequest request{};
    request.dtype = kernel_check::DT<T>::v;
    request.input = in.p;
    request.count = n;
    rule.flags = rule.kind == GPUPRIM_KEEP_FLAGGED ? flags.p : nullptr;
    request.keep = rule;
    request.output = shape.keys_out || shape.partition ? out.p : nullptr;
    request.values = shape.value_bytes ? values_in.p : nullptr;
    request.values_out = shape.value_bytes ? values_out.p : nullptr;
    request.value_bytes = shape.value_bytes;
    request.positions = shape.position_bytes ? positions.p : nullptr;
    request.position_bytes = shape.position_bytes;
    request.partition = shape.partition;
    request.kept = count.sink();
    try {
        gpuprim::cuda::select_elements(k.env, request);
    } catch (const std::exception &e) {
        return report(label + ": " + e.what(), "threw (n %llu, kept %llu)", n, kept);
    }
    CK(cudaStreamSynchronize(k.env.stream));
    count.verify(label, kept);
    check_gather(label + " keys", out, key_bytes, width, order, request.output ? written : 0);
    if (shape.value_bytes) check_gather(label + " values", values_out, values.data(), shape.value_bytes, order, written);
    if (shape.position_bytes)
        check_indices(label + " positions", positions, shape.position_bytes,
                      std::vector<uint64_t>(order.begin(), order.begin() + kept));
}

// The runs of equal bits: (start, length), non-trivial ones only if asked.
template <typename T>
void host_runs(const std::vector<T> &keys, bool non_trivial, std::vector<uint64_t> &starts,
               std::vector<uint64_t> &lengths) {
    const uint64_t n = keys.size();
    for (uint64_t i = 0; i < n;) {
        uint64_t j = i + 1;
        while (j < n && std::memcmp(&keys[j], &keys[i], sizeof(T)) == 0) ++j;
        if (!non_trivial || j - i >= 2) {
            starts.push_back(i);
            lengths.push_back(j - i);
        }
        i = j;
    }
}

struct RunsShape {
    bool non_trivial;
    bool keys_out;
    uint32_t value_bytes;
    uint32_t start_bytes;
    uint32_t length_bytes;
    uint32_t count_bytes;
    bool host_count;
};

template <typename T>
void run_runs(kernel_check::KernelEnv &k, const std::string &label, const std::vector<T> &keys,
              const RunsShape &shape) {
    ++cases;
    const uint64_t n = keys.size();
    const uint32_t width = sizeof(T);
    std::vector<uint64_t> starts, lengths;
    host_runs(keys, shape.non_trivial, starts, lengths);
    const auto *key_bytes = reinterpret_cast<const uint8_t *>(keys.data());
    DeviceBytes in(key_bytes, n * width), out(n * width);
    const std::vector<uint8_t> values = random_bytes(n * shape.value_bytes);
    DeviceBytes values_in(values.data(), values.size()), values_out(values.size());
    DeviceBytes starts_out(n * shape.start_bytes), lengths_out(n * shape.length_bytes);
    CountCheck count(shape.count_bytes, shape.host_count);

    RunsRequest request{};
    request.key_bytes = width;
    request.keys = in.p;
    request.count = n;
    request.keys_out = shape.keys_out ? out.p : nullptr;
    request.values = shape.value_bytes ? values_in.p : nullptr;
    request.values_out = shape.value_bytes ? values_out.p : nullptr;
    request.value_bytes = shape.value_bytes;
    request.non_trivial_only = shape.non_trivial;
    request.starts = shape.start_bytes ? starts_out.p : nullptr;
    request.start_bytes = shape.start_bytes;
    request.lengths = shape.length_bytes ? lengths_out.p : nullptr;
    request.length_bytes = shape.length_bytes;
    request.runs = count.sink();
    try {
        gpuprim::cuda::find_runs(k.env, request);
    } catch (const std::exception &e) {
        return report(label + ": " + e.what(), "threw (n %llu, runs %llu)", n, starts.size());
    }
    CK(cudaStreamSynchronize(k.env.stream));
    count.verify(label, starts.size());
    check_gather(label + " keys", out, key_bytes, width, starts, shape.keys_out ? starts.size() : 0);
    if (shape.value_bytes)
        check_gather(label + " values", values_out, values.data(), shape.value_bytes, starts, starts.size());
    if (shape.start_bytes) check_indices(label + " starts", starts_out, shape.start_bytes, starts);
    if (shape.length_bytes) check_indices(label + " lengths", lengths_out, shape.length_bytes, lengths);
}

// Flags of `width` bytes: random half, all, none, alternating or 1 in 97.
std::vector<uint8_t> make_flags(uint64_t n, uint32_t width, int style) {
    std::vector<uint8_t> flags(n * width, 0);
    for (uint64_t i = 0; i < n; ++i) {
        const bool set = style == 0 ? (next_random() & 1) : style == 1 ? true : style == 2 ? false
                       : style == 3 ? (i % 2 == 0) : (i % 97 == 5);
        // A set flag has one bit set somewhere in its width (high bytes too).
        if (set) flags[i * width + (next_random() % width)] = uint8_t(1u << (next_random() % 8));
    }
    return flags;
}

template <typename T>
uint64_t tile_of() {
    return sizeof(T) == 8 ? 3072 : 4096;
}

template <typename T>
std::vector<uint64_t> sizes_for(bool small) {
    const uint64_t t = tile_of<T>();
    if (small) return {0, 1, 33, t + 1, 2 * t + 5};
    return {0, 1, 2, 33, t - 1, t, t + 1, 2 * t - 1, 2 * t + 1, 33 * t + 7, 70 * t + 3, 200003};
}

template <typename T>
void check_dtype(kernel_check::KernelEnv &k, bool small) {
    const char *name = gpuprim::dtype_name(kernel_check::DT<T>::v);
    const std::vector<Pattern> patterns =
        small ? std::vector<Pattern>{Pattern::kRandom, Pattern::kRuns}
              : std::vector<Pattern>{Pattern::kRandom, Pattern::kSpecial, Pattern::kFew, Pattern::kRuns};
    const uint32_t value_widths[] = {0, 4, 1, 8, 2};
    const uint32_t index_widths[] = {4, 8, 0};
    const uint32_t count_widths[] = {4, 8, 0};
    int turn = 0;
    for (uint64_t n : sizes_for<T>(small)) {
        for (Pattern pattern : patterns) {
            const std::vector<T> keys = make_keys<T>(pattern, n, tile_of<T>());
            const std::vector<T> special = specials<T>();
            for (int kind = GPUPRIM_KEEP_FLAGGED; kind <= GPUPRIM_KEEP_NOT_NAN; ++kind) {
                for (int partition = 0; partition < 2; ++partition, ++turn) {
                    KeepRule rule{};
                    rule.kind = gpuprim_keep_t(kind);
                    std::vector<uint8_t> flags;
                    if (kind == GPUPRIM_KEEP_FLAGGED) {
                        rule.flag_bytes = 1u << (turn % 4);
                        flags = make_flags(n, rule.flag_bytes, turn % 5);
                    }
                    // Scalars from the input (or the specials), their bits in the low bytes.
                    const T low = n && (turn % 3) ? keys[next_random() % n] : special[next_random() % special.size()];
                    const T high = n ? keys[next_random() % n] : special[next_random() % special.size()];
                    std::memcpy(&rule.scalar_bits, &low, sizeof(T));
                    std::memcpy(&rule.scalar_high_bits, &high, sizeof(T));
                    const SelectShape shape{partition != 0, partition != 0 || turn % 4 != 3, value_widths[turn % 5],
                                            partition ? 0u : index_widths[turn % 3], count_widths[turn % 3],
                                            turn % 2 == 0};
                    char label[160];
                    std::snprintf(label, sizeof label, "%s %s n=%llu %s kind %d", partition ? "partition" : "select",
                                  name, (unsigned long long)n, pattern_name(pattern), kind);
                    run_select<T>(k, label, keys, rule, flags, shape);
                }
            }
        }
    }
}

template <typename T>
void check_runs_of(kernel_check::KernelEnv &k, bool small) {
    const char *name = gpuprim::dtype_name(kernel_check::DT<T>::v);
    const Pattern patterns[] = {Pattern::kRandom, Pattern::kSpecial, Pattern::kFew,     Pattern::kSorted,
                                Pattern::kAllEqual, Pattern::kRuns};
    const uint32_t value_widths[] = {0, 4, 1, 8, 2};
    const uint32_t index_widths[] = {4, 8, 0};
    int turn = 0;
    for (uint64_t n : sizes_for<T>(small)) {
        for (Pattern pattern : patterns) {
            const std::vector<T> keys = make_keys<T>(pattern, n, tile_of<T>());
            for (int mode = 0; mode < 3; ++mode, ++turn) {
                // 0: unique (keys, values), 1: all runs, 2: non-trivial runs.
                const RunsShape shape{mode == 2,
                                      mode == 0 || turn % 2 == 0,
                                      mode == 0 ? value_widths[turn % 5] : 0u,
                                      mode == 0 ? 0u : index_widths[turn % 3],
                                      mode == 0 ? 0u : index_widths[(turn + 1) % 3],
                                      index_widths[turn % 3],
                                      turn % 2 == 1};
                char label[160];
                std::snprintf(label, sizeof label, "%s %s n=%llu %s",
                              mode == 0 ? "unique" : mode == 1 ? "runs" : "non-trivial runs", name,
                              (unsigned long long)n, pattern_name(pattern));
                run_runs<T>(k, label, keys, shape);
            }
        }
    }
}

// small (for the sanitizers, slow per launch): one dtype of each width.
void check_all(kernel_check::KernelEnv &k, bool small) {
    if (small) {
        check_dtype<uint8_t>(k, true);
        check_dtype<gpuprim::float16>(k, true);
        check_dtype<int32_t>(k, true);
        check_dtype<double>(k, true);
        check_runs_of<uint8_t>(k, true);
        check_runs_of<uint32_t>(k, true);
        check_runs_of<uint64_t>(k, true);
        return;
    }
#define GPUPRIM_CHECK_DTYPE(e, type, name) check_dtype<type>(k, false);
    GPUPRIM_DTYPE_TABLE(GPUPRIM_CHECK_DTYPE)
#undef GPUPRIM_CHECK_DTYPE
    check_runs_of<uint8_t>(k, false);
    check_runs_of<uint16_t>(k, false);
    check_runs_of<gpuprim::float16>(k, false);
    check_runs_of<uint32_t>(k, false);
    check_runs_of<float>(k, false);
    check_runs_of<uint64_t>(k, false);
    check_runs_of<double>(k, false);
}

// Past 2^32: u8 keys, every one kept (a 64-bit count), one value kept (its
// position past 2^32), one run of every key (a length past 2^32), and a
// partition of half.
void check_big(kernel_check::KernelEnv &k) {
    const uint64_t n = (uint64_t(1) << 32) + 4099;
    std::vector<uint8_t> keys(n, 7);
    keys[n - 5] = 9;
    std::printf("big: %llu u8 keys\n", (unsigned long long)n);
    KeepRule all{};
    all.kind = GPUPRIM_KEEP_NOT_NAN;
    run_select<uint8_t>(k, "big select all", keys, all, {}, SelectShape{false, true, 0, 0, 8, true});
    KeepRule nine{};
    nine.kind = GPUPRIM_KEEP_EQUAL;
    nine.scalar_bits = 9;
    run_select<uint8_t>(k, "big select one", keys, nine, {}, SelectShape{false, true, 0, 8, 8, true});
    run_runs<uint8_t>(k, "big runs", keys, RunsShape{false, true, 0, 8, 8, 8, true});
    run_runs<uint8_t>(k, "big non-trivial runs", keys, RunsShape{true, true, 0, 8, 8, 8, true});
    for (uint64_t i = 0; i < n; i += 2) keys[i] = 1;
    KeepRule below{};
    below.kind = GPUPRIM_KEEP_LESS;
    below.scalar_bits = 5;
    run_select<uint8_t>(k, "big partition", keys, below, {}, SelectShape{true, true, 0, 0, 8, false});
}

}  // namespace

int main(int argc, char **argv) {
    const std::string mode = argc > 1 ? argv[1] : "check";
    if (mode != "check" && mode != "small" && mode != "big") {
        std::printf("usage: check_select [check | small | big]\n");
        return 2;
    }
    kernel_check::KernelEnv k(true);  // a blocking stream: ordered with the plain copies here
    k.print_device();
    void *slot = nullptr, *slot_device = nullptr;
    CK(cudaHostAlloc(&slot, 64, cudaHostAllocMapped));
    CK(cudaHostGetDevicePointer(&slot_device, slot, 0));
    k.env.host_slot = slot;
    k.env.host_slot_device = slot_device;
    k.env.host_slot_bytes = 64;
    if (mode == "big") check_big(k);
    else check_all(k, mode == "small");
    if (!k.counters_zero()) {
        std::printf("FAIL: a zeroed counter word was left non-zero\n");
        ++failures;
    }
    std::printf("check_select %s: %llu cases, %d failures\n", mode.c_str(), (unsigned long long)cases, failures);
    CK(cudaFreeHost(slot));
    return failures ? 1 : 0;
}
