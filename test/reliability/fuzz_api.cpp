// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the C API on the CPU backend.
//
// The input is read as a program: a sequence of API calls with arbitrary
// arguments (NULL and destroyed handles, buffers of the other context, wrong
// dtypes, mismatched and absurd counts, unknown enum values, aliasing wrapped
// views of one host arena). The target keeps a model of every buffer (a host
// shadow of its contents) and after each call checks that
// - the status is one the header documents for that function, and one of the
//   errors the arguments actually have (SUCCESS when they have none);
// - a failed call left a message, every buffer and every output unchanged;
// - a successful call produced the reference result (integers, MIN/MAX and
//   sort exactly; float sums within a rounding bound, bitwise repeatable).
// Any violation aborts with a message. Built with -fsanitize=fuzzer by
// run_fuzz.sh, and with fuzz_replay_main.cpp as an ordinary test.
#include "fuzz_input.h"
#include "fuzz_shim.h"

#include <gpuprim/gpuprim.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

// The reference semantics the C tests use (test_common.h: the sort order
// key, MIN/MAX and wrapping sums, argreduce, sort permutations with bit
// ranges, searchsorted bounds, merges, histogram bins, f16/bf16 decoding and
// rounding): one model for the tests, the test registry and this target.
#include "../test_common.h"

namespace {

[[noreturn]] void violation(const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

[[noreturn]] void violation(const char *format, ...) {
    va_list args;
    va_start(args, format);
    std::fprintf(stderr, "\n*** gpuprim fuzz violation: ");
    std::vfprintf(stderr, format, args);
    std::fprintf(stderr, "\n");
    va_end(args);
    std::abort();
}

using gpuprim_fuzz::Input;

// ---------------------------------------------------------------------------
// Status sets
// ---------------------------------------------------------------------------
using Codes = uint32_t;
constexpr Codes bit(gpuprim_status_t status) { return Codes(1) << status; }
constexpr Codes kNull = bit(GPUPRIM_ERROR_NULL_POINTER);
constexpr Codes kHandle = bit(GPUPRIM_ERROR_INVALID_HANDLE);
constexpr Codes kMismatch = bit(GPUPRIM_ERROR_CONTEXT_MISMATCH);
constexpr Codes kEnum = bit(GPUPRIM_ERROR_INVALID_ENUM);
constexpr Codes kDtype = bit(GPUPRIM_ERROR_DTYPE_MISMATCH);
constexpr Codes kSize = bit(GPUPRIM_ERROR_SIZE_MISMATCH);
constexpr Codes kRange = bit(GPUPRIM_ERROR_OUT_OF_RANGE);
constexpr Codes kOverflow = bit(GPUPRIM_ERROR_OVERFLOW);
constexpr Codes kArg = bit(GPUPRIM_ERROR_INVALID_ARGUMENT);
constexpr Codes kOom = bit(GPUPRIM_ERROR_OUT_OF_MEMORY);
constexpr Codes kUnavailable = bit(GPUPRIM_ERROR_BACKEND_UNAVAILABLE);
constexpr Codes kDevice = bit(GPUPRIM_ERROR_DEVICE);

// The codes gpuprim.h lists for each function ("Errors: ..."). Every entry
// point also answers NULL_POINTER for a NULL context and INVALID_HANDLE for
// any value that is not a live context (the conventions at the top of the
// header); those are added to every list below.
constexpr Codes kContextCodes = kNull | kHandle;
constexpr Codes kDocCreateContext = kNull | kArg | kEnum | kUnavailable | kDevice | kOom;
constexpr Codes kDocContextQuery = kContextCodes;  // get_backend, get_device, workspace
// synchronize also reports a deferred offsets check's failure (INVALID_ARGUMENT)
constexpr Codes kDocSynchronize = kContextCodes | kDevice | kArg;
constexpr Codes kDocSetOffsetsCheck = kContextCodes | kEnum;
constexpr Codes kDocCheckDeferred = kContextCodes | kArg | kDevice;  // NOT_CAPTURABLE: no capture here
constexpr Codes kDocReserveWorkspace = kContextCodes | kOom;
constexpr Codes kDocBeginWorkspaceQuery = kContextCodes | kArg;
constexpr Codes kDocEndWorkspaceQuery = kContextCodes | kArg | kNull;
constexpr Codes kDocReserveWorkspaceSizes = kContextCodes | kNull | kArg | kOom;
constexpr Codes kDocBufferCreate = kContextCodes | kEnum | kOverflow | kOom | kDevice;
constexpr Codes kDocBufferWrap = kContextCodes | kEnum | kOverflow | kArg | kDevice | kOom;
constexpr Codes kDocBufferDestroy = kContextCodes | kMismatch | kDevice;
constexpr Codes kDocGetInfo = kContextCodes | kMismatch;
constexpr Codes kDocTransfer = kContextCodes | kMismatch | kRange | kDevice;
constexpr Codes kDocReduce = kContextCodes | kMismatch | kEnum | kDevice | kOom;
constexpr Codes kDocReduceToBuffer = kDocReduce | kDtype | kSize | kArg;
constexpr Codes kDocDot = kDocReduce | kDtype | kSize | kArg;
constexpr Codes kDocScan = kContextCodes | kMismatch | kEnum | kDtype | kSize | kArg | kDevice | kOom;
constexpr Codes kDocAdjacentDifference = kContextCodes | kMismatch | kDtype | kSize | kArg | kDevice | kOom;
constexpr Codes kDocSort = kDocScan;
constexpr Codes kDocSortWithOptions = kDocSort;  // plus INVALID_ARGUMENT (options), INVALID_ENUM (order)
constexpr Codes kDocArgsort = kDocSort;
constexpr Codes kDocSegmented = kDocSort;  // sort, argsort, reduce, scan: the same list
constexpr Codes kDocTopk = kDocSort;       // gpuprim_topk, gpuprim_segmented_topk: the same list too
constexpr Codes kDocArgreduce = kContextCodes | kMismatch | kEnum | kArg | kDevice | kOom;
constexpr Codes kDocSearchsorted = kDocSort;  // the same list
constexpr Codes kDocHistogram = kDocSort;     // histogram_even, histogram_range, bincount: the same list too
constexpr Codes kDocMerge = kDocSort;
constexpr Codes kDocSelect = kDocSort;  // select, partition, unique, run-length encode: the same list
// The distributed calls: every call's list and their one-rank call's.
constexpr Codes kDocDistributed = kDocSort | kOverflow;
constexpr Codes kDocAttach = kContextCodes | kEnum | kUnavailable | kArg | kDevice;
constexpr Codes kDocGetRank = kContextCodes | kArg;

// What the arguments of one call make of it: `must` holds the errors the
// arguments have (empty: the call must succeed); `may` holds outcomes that
// are allowed besides (e.g. a backend that may or may not exist).
struct Expect {
    Codes must = 0;
    Codes may = 0;
};

// ---------------------------------------------------------------------------
// dtypes
// ---------------------------------------------------------------------------
size_t size_of(int dtype) {
    switch (dtype) {
    case GPUPRIM_DTYPE_I8:
    case GPUPRIM_DTYPE_U8: return 1;
    case GPUPRIM_DTYPE_F16:
    case GPUPRIM_DTYPE_BF16:
    case GPUPRIM_DTYPE_I16:
    case GPUPRIM_DTYPE_U16: return 2;
    case GPUPRIM_DTYPE_I32:
    case GPUPRIM_DTYPE_U32:
    case GPUPRIM_DTYPE_F32: return 4;
    case GPUPRIM_DTYPE_I64:
    case GPUPRIM_DTYPE_U64:
    case GPUPRIM_DTYPE_F64: return 8;
    default: return 0;
    }
}
bool valid_dtype(int dtype) { return size_of(dtype) != 0; }
constexpr int kDtypeCount = 12;

// The 16-bit floats as the model's own storage types (bit patterns), with
// their values decoded here from the IEEE layout (gpuprim.h: binary16 and
// bfloat16), not from the library's half.h.
struct Half16 {  // IEEE binary16
    uint16_t bits;
    Half16() = default;
    template <typename I>
    explicit constexpr Half16(I value) : bits(static_cast<uint16_t>(value)) {}
};
struct BHalf16 {  // bfloat16
    uint16_t bits;
    BHalf16() = default;
    template <typename I>
    explicit constexpr BHalf16(I value) : bits(static_cast<uint16_t>(value)) {}
};
template <typename T>
constexpr bool kIsHalf = std::is_same_v<T, Half16> || std::is_same_v<T, BHalf16>;
template <typename T>
constexpr bool kIsFloat = std::is_floating_point_v<T> || kIsHalf<T>;
template <typename T>
constexpr uint16_t kHalfInf = std::is_same_v<T, Half16> ? 0x7C00 : 0x7F80;
template <typename T>
constexpr uint16_t kHalfCanonicalNan = std::is_same_v<T, Half16> ? 0x7E00 : 0x7FC0;

template <typename T>
constexpr gpuprim_dtype_t kHalfDtype = std::is_same_v<T, Half16> ? GPUPRIM_DTYPE_F16 : GPUPRIM_DTYPE_BF16;

template <typename T>
bool half_is_nan(T h) { return tc_isnan_bits(kHalfDtype<T>, h.bits); }

// Decoded and rounded (once, to nearest even; NaN: the canonical NaN) by
// test_common.h, from the IEEE layout, not from the library's half.h.
template <typename T>
long double half_value(T h) { return tc_value(kHalfDtype<T>, h.bits); }

template <typename T>
T half_round(long double v) { return T(tc_round_half(kHalfDtype<T>, v)); }

// An element's value as a long double (floats, halves, integers).
template <typename T>
long double value_of(T x) {
    if constexpr (kIsHalf<T>) return half_value(x);
    else return static_cast<long double>(x);
}

template <typename F>
void with_type(int dtype, F &&f) {
    switch (dtype) {
    case GPUPRIM_DTYPE_I32: f(int32_t{}); return;
    case GPUPRIM_DTYPE_U32: f(uint32_t{}); return;
    case GPUPRIM_DTYPE_I64: f(int64_t{}); return;
    case GPUPRIM_DTYPE_U64: f(uint64_t{}); return;
    case GPUPRIM_DTYPE_F32: f(float{}); return;
    case GPUPRIM_DTYPE_F64: f(double{}); return;
    case GPUPRIM_DTYPE_F16: f(Half16{}); return;
    case GPUPRIM_DTYPE_BF16: f(BHalf16{}); return;
    case GPUPRIM_DTYPE_I8: f(int8_t{}); return;
    case GPUPRIM_DTYPE_U8: f(uint8_t{}); return;
    case GPUPRIM_DTYPE_I16: f(int16_t{}); return;
    case GPUPRIM_DTYPE_U16: f(uint16_t{}); return;
    default: violation("internal: with_type(%d)", dtype);
    }
}

template <size_t kBytes>
struct BitsOfWidth;
template <>
struct BitsOfWidth<1> { using type = uint8_t; };
template <>
struct BitsOfWidth<2> { using type = uint16_t; };
template <>
struct BitsOfWidth<4> { using type = uint32_t; };
template <>
struct BitsOfWidth<8> { using type = uint64_t; };
template <typename T>
using Bits = typename BitsOfWidth<sizeof(T)>::type;

template <typename T>
T load(const uint8_t *bytes) {
    T value;
    std::memcpy(&value, bytes, sizeof value);
    return value;
}
template <typename T>
void store(uint8_t *bytes, T value) {
    std::memcpy(bytes, &value, sizeof value);
}
template <typename T>
Bits<T> bits_of(T value) {
    Bits<T> bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
}

// Enum arguments: mostly valid, sometimes a value no version knows.
int draw_enum(Input &in, int valid_count) {
    static const int kInvalid[] = {3, 4, 6, 7, 12, 16, 255, 1000, -1, -7, INT32_MIN, INT32_MAX};
    uint8_t choice = in.u8();
    if (choice < 232) return choice % valid_count;
    int value = kInvalid[choice % (sizeof kInvalid / sizeof kInvalid[0])];
    return value;
}
bool in_range(int value, int valid_count) { return value >= 0 && value < valid_count; }

// Element counts: mostly small, sometimes up to 4095, sometimes absurd
// (>= 2^60, whose bytes cannot be allocated anywhere or overflow 64 bits).
uint64_t draw_count(Input &in) {
    uint8_t mode = in.u8();
    if (mode < 170) return in.u8() % 40;
    if (mode < 215) return in.u16() % 4096;
    static const uint64_t kEdges[] = {
        UINT64_MAX,           UINT64_MAX / 4,      UINT64_MAX / 4 + 1, UINT64_MAX / 8,
        UINT64_MAX / 8 + 1,   uint64_t(1) << 60,   uint64_t(1) << 61,  uint64_t(1) << 62,
        uint64_t(1) << 63,    (uint64_t(1) << 62) - 1};
    if (mode < 235) return kEdges[mode % (sizeof kEdges / sizeof kEdges[0])];
    return in.u64() | (uint64_t(1) << 60);
}
bool absurd(uint64_t count) { return count >= (uint64_t(1) << 60); }

// Offsets for upload/download: in range, a little out, or absurd.
uint64_t draw_offset(Input &in) {
    uint8_t mode = in.u8();
    if (mode < 200) return in.u8() % 48;
    if (mode < 230) return in.u16() % 4200;
    return UINT64_MAX - in.u8();
}

// One element's bits: raw input bytes, or a palette of the values that
// stress ordering and sums (NaN payloads of both signs, +-0, +-inf,
// denormals, extremes, many duplicates).
template <typename T>
T draw_value(Input &in) {
    uint8_t mode = in.u8();
    if (mode < 48) {
        uint8_t raw[sizeof(T)];
        for (uint8_t &byte : raw) byte = in.u8();
        T value;
        std::memcpy(&value, raw, sizeof value);
        return value;
    }
    if constexpr (kIsHalf<T>) {
        // 0, -0, 1, -1, 0.5, 2, 3, -3, max, -max, +-inf, quiet NaNs of both
        // signs, +-least subnormal, least normal, largest subnormal, epsilon,
        // 0.1, 7, the least NaN payloads of both signs, all-ones NaNs.
        static const uint16_t f16[] = {0x0000, 0x8000, 0x3C00, 0xBC00, 0x3800, 0x4000, 0x4200,
                                       0xC200, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00, 0xFE00,
                                       0x0001, 0x8001, 0x0400, 0x03FF, 0x1400, 0x2E66, 0x4700,
                                       0x7C01, 0xFC01, 0x7FFF, 0xFFFF};
        static const uint16_t bf16[] = {0x0000, 0x8000, 0x3F80, 0xBF80, 0x3F00, 0x4000, 0x4040,
                                        0xC040, 0x7F7F, 0xFF7F, 0x7F80, 0xFF80, 0x7FC0, 0xFFC0,
                                        0x0001, 0x8001, 0x0080, 0x007F, 0x3C00, 0x3DCD, 0x40E0,
                                        0x7F81, 0xFF81, 0x7FFF, 0xFFFF};
        const uint16_t *palette = std::is_same_v<T, Half16> ? f16 : bf16;
        return T(palette[mode % (sizeof f16 / sizeof f16[0])]);
    } else if constexpr (std::is_floating_point_v<T>) {
        using L = std::numeric_limits<T>;
        const T palette[] = {T(0), -T(0), T(1), T(-1), T(0.5), T(2), T(3), T(-3), T(1e30),
                             T(-1e30), L::infinity(), -L::infinity(), L::quiet_NaN(),
                             -L::quiet_NaN(), L::denorm_min(), -L::denorm_min(), L::min(),
                             L::max(), L::lowest(), L::epsilon(), T(1), T(2), T(0.1), T(7)};
        size_t count = sizeof palette / sizeof palette[0];
        size_t pick = mode % (count + 4);
        if (pick < count) return palette[pick];
        // NaN payloads, both signs.
        Bits<T> exponent_all = sizeof(T) == 4 ? Bits<T>(0x7F800000u) : Bits<T>(0x7FF0000000000000ull);
        Bits<T> sign = Bits<T>(1) << (sizeof(T) * 8 - 1);
        Bits<T> payload = Bits<T>(1 + (pick - count));
        Bits<T> nan_bits = exponent_all | payload | (pick & 1 ? sign : 0);
        if (pick == count + 3) nan_bits = ~Bits<T>(0);  // all ones: the largest bit pattern
        T value;
        std::memcpy(&value, &nan_bits, sizeof value);
        return value;
    } else {
        using L = std::numeric_limits<T>;
        const T palette[] = {T(0), T(1), T(2), T(3), T(4), T(5), T(7), L::max(), L::min(),
                             static_cast<T>(L::max() - 1), static_cast<T>(L::min() + 1),
                             static_cast<T>(-1), static_cast<T>(-2), T(1), T(2), T(3)};
        return palette[mode % (sizeof palette / sizeof palette[0])];
    }
}

// ---------------------------------------------------------------------------
// Reference semantics, written from gpuprim.h (not from src/core/ops.h):
// test_common.h's, shared with the C tests and the test registry (the sort
// order key tc_sort_key with its NaN order, tc_apply, tc_reference_argreduce,
// tc_reference_sort_permutation_bits, tc_searchsorted_bound,
// tc_reference_merge_permutation, the histogram bins). The float sums keep
// the fuzzer's own bound (FloatSum): its inputs reach overflow, NaN and
// infinities of both signs and subnormals, which that bound handles.
// ---------------------------------------------------------------------------

// A float sum of terms (products for dot) in an unspecified order. The
// result is checked exactly where IEEE arithmetic fixes it (NaN, +-inf) and
// within n * eps * sum|term| otherwise; skipped where a partial sum might
// overflow in some order.
struct FloatSum {
    long double sum = 0;
    long double magnitude = 0;
    size_t terms = 0;
    bool nan = false, positive_inf = false, negative_inf = false;

    void add(long double term) {
        ++terms;
        if (std::isnan(term)) nan = true;
        else if (std::isinf(term)) (term > 0 ? positive_inf : negative_inf) = true;
        else {
            sum += term;
            magnitude += std::fabs(term);
        }
    }

    // f16/bf16 (gpuprim.h): accumulated in f32 in some order, then rounded
    // once to nearest even. Rounding is monotone, so the result lies between
    // the roundings of sum -+ the f32 accumulation bound; a NaN result is the
    // canonical NaN; skipped where an f32 partial sum might overflow.
    template <typename T>
    void check_half(T got, const char *what, size_t index) const {
        if (nan || (positive_inf && negative_inf)) {
            if (got.bits != kHalfCanonicalNan<T>)
                violation("%s[%zu]: expected the canonical NaN 0x%04x, got 0x%04x", what, index,
                          kHalfCanonicalNan<T>, got.bits);
            return;
        }
        if (magnitude > static_cast<long double>(std::numeric_limits<float>::max()) / 4) return;
        if (positive_inf || negative_inf) {
            if ((got.bits & 0x7FFF) != kHalfInf<T> || ((got.bits & 0x8000) != 0) != negative_inf)
                violation("%s[%zu]: expected %sinf, got 0x%04x", what, index, positive_inf ? "+" : "-",
                          got.bits);
            return;
        }
        const long double bound =
            (terms + 2) * std::ldexp(1.0L, -24) * magnitude + (terms + 2) * std::ldexp(1.0L, -149);
        const long double low = half_value(half_round<T>(sum - bound));
        const long double high = half_value(half_round<T>(sum + bound));
        const long double value = half_value(got);
        if (!(low <= value && value <= high))
            violation("%s[%zu]: got 0x%04x (%.10Lg), reference %.17Lg: not within [%.10Lg, %.10Lg]", what,
                      index, got.bits, value, sum, low, high);
    }

    template <typename T>
    void check(T got, const char *what, size_t index) const {
        if constexpr (kIsHalf<T>) {
            check_half(got, what, index);
            return;
        } else {
            check_float(got, what, index);
        }
    }

    template <typename T>
    void check_float(T got, const char *what, size_t index) const {
        const long double largest = static_cast<long double>(std::numeric_limits<T>::max());
        if (nan || (positive_inf && negative_inf)) {
            if (!std::isnan(got))
                violation("%s[%zu]: expected NaN, got %.17Lg", what, index, (long double)got);
            return;
        }
        if (magnitude > largest / 4) return;  // some order may overflow
        if (positive_inf || negative_inf) {
            if (!std::isinf(got) || (got > 0) != positive_inf)
                violation("%s[%zu]: expected %sinf, got %.17Lg", what, index,
                          positive_inf ? "+" : "-", (long double)got);
            return;
        }
        long double epsilon = std::numeric_limits<T>::epsilon();
        long double bound = (terms + 2) * epsilon * magnitude +
                            (terms + 2) * static_cast<long double>(std::numeric_limits<T>::denorm_min());
        long double error = std::fabs(static_cast<long double>(got) - sum);
        if (!(error <= bound))
            violation("%s[%zu]: got %.17Lg, reference %.17Lg, error %.3Lg > bound %.3Lg", what,
                      index, (long double)got, sum, error, bound);
    }
};

// ---------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------
constexpr size_t kArenaBytes = 4096;
constexpr size_t kMaxBuffers = 24;
constexpr size_t kMaxStale = 64;

struct Buffer {
    gpuprim_buffer_t handle;
    int context;        // context slot
    int dtype;
    uint64_t count;
    bool wrapped;
    size_t arena_offset;          // wrapped: byte offset of element 0 in the arena
    int region;                   // memory identity: 0 the arena, >0 an owned allocation
    std::vector<uint8_t> shadow;  // owned: expected contents

    size_t bytes() const { return static_cast<size_t>(count) * size_of(dtype); }
};

struct ContextSlot {
    gpuprim_context_t handle = nullptr;
    // gpuprim_context_set_offsets_check: DEFERRED, and whether a deferred
    // check's failure waits for check_deferred / synchronize.
    bool deferred = false;
    bool pending = false;
};

// Objects that are not contexts / buffer handles: handles are never read
// through, so pointers to anything are just values that are not handles.
alignas(64) unsigned char g_fake_context[256];
alignas(64) unsigned char g_fake_buffer[64];

class Harness {
public:
    Harness() {
        arena_.reset(static_cast<uint8_t *>(std::aligned_alloc(64, kArenaBytes)));
        std::memset(arena_.get(), 0, kArenaBytes);
        arena_shadow_.assign(kArenaBytes, 0);
        for (ContextSlot &slot : contexts_) slot.handle = create_cpu_context();
    }

    ~Harness() {
        // Destroy some buffers one by one and leave the rest to
        // gpuprim_context_destroy, which must free them (LeakSanitizer checks).
        for (size_t i = 0; i < buffers_.size(); i += 2) {
            Buffer &b = buffers_[i];
            if (gpuprim_buffer_destroy(contexts_[b.context].handle, b.handle) != GPUPRIM_SUCCESS)
                violation("final buffer_destroy failed");
        }
        for (ContextSlot &slot : contexts_)
            if (gpuprim_context_destroy(slot.handle) != GPUPRIM_SUCCESS)
                violation("context_destroy failed");
    }

    void run(Input &in) {
        for (int step = 0; step < 400 && !in.empty(); ++step) {
            uint8_t op = in.u8();
            if (op == 255) {  // the distributed calls and their communicator (op 28 in check messages)
                op_distributed(in);
                check_all_buffers(28);
                continue;
            }
            if (op == 253) {  // searchsorted and the histograms (op 30 in check messages); top-k keeps
                              // 229, 235, 241, 247
                // The call byte % 5 picks the call; a histogram's call byte of 240 and more
                // (241-243, 246-248, 251-253) its _rows form, with a rows byte after its arguments.
                // Call bytes 244, 249 and 254 (% 5 == 4, >= 240: no seed's merge) select, partition, unique
                // and run-length encode; 240, 245, 250 and 255 (% 5 == 0, >= 240: no seed's searchsorted)
                // reduce-by-key and group-by.
                const uint8_t call_byte = in.u8();
                const int call = call_byte % 5;
                if (call == 0 && call_byte >= 240) op_reduce_by_key(in);
                else if (call == 0) op_searchsorted(in);
                else if (call == 4 && call_byte >= 240) op_select(in);
                else if (call == 4) op_merge(in);
                else op_histogram(in, call, call_byte >= 240);
                check_all_buffers(30);
                continue;
            }
            if (op == 254) {  // argreduce (op 29 in check messages); 224 still reaches argsort
                op_argreduce(in);
                check_all_buffers(29);
                continue;
            }
            if (op >= 224) {  // argsort, the segmented calls and top-k (op 22..27 in check messages)
                const int extra = (op - 224) % 6;
                switch (extra) {
                case 0: sort_call(in, kArgsortCall); break;
                case 1: sort_call(in, kSegmentedSortCall); break;
                case 2: sort_call(in, kSegmentedArgsortCall); break;
                case 3: op_segmented_reduce(in); break;
                case 4: op_segmented_scan(in); break;
                default: op_topk(in); break;
                }
                check_all_buffers(22 + extra);
                continue;
            }
            switch (op % 22) {
            case 0: case 1: op_buffer_create(in); break;
            case 2: op_buffer_wrap(in); break;
            case 3: op_buffer_destroy(in); break;
            case 4: case 5: op_fill(in); break;
            case 6: op_upload(in); break;
            case 7: op_download(in); break;
            case 8: op_reduce(in); break;
            case 9: op_reduce_to_buffer(in); break;
            case 10: op_dot(in); break;
            case 11: op_dot_to_buffer(in); break;
            case 12: op_scan(in); break;
            case 13: op_adjacent_difference(in); break;
            case 14: case 15: op_sort(in); break;
            case 16: op_get_info(in); break;
            case 17: op_context_queries(in); break;
            case 18: op_context_create(in); break;
            case 19: op_globals(in); break;
            case 20: op_churn(in); break;
            case 21: op_sort_with_options(in); break;
            }
            check_all_buffers(op % 22);
        }
    }

    // The distributed calls with no communicator attached (the fuzz target
    // is one process): every collective must fail before it reaches any
    // other rank, with a documented status and message, and change nothing
    // (check_all_buffers; the host result below). Attaching fails too: the
    // fuzz build (run_fuzz.sh: GPUPRIM_FUZZ_NO_ENGINES) has no MPI or NCCL
    // engine, and elsewhere (rel_fuzz_replay links the full library) only a
    // NULL communicator is passed, which no engine reads.
    void op_distributed(Input &in) {
        ContextArg context = draw_context(in);
        const int call = in.u8() % 8;
        gpuprim_buffer_t a = draw_buffer(in, context.slot), b = draw_buffer(in, context.slot);
        gpuprim_buffer_t c = draw_buffer(in, context.slot), d = draw_buffer(in, context.slot);
        const int op = draw_enum(in, 3), kind = draw_enum(in, 2), order = draw_enum(in, 2);
        const uint64_t k = in.u8() == 0 ? in.u64() : in.u8();
        Expect expect;
        if (context.slot < 0) {
            expect.must = context.error;
        } else {
            expect.must = kArg;  // no communicator
            expect.may = kDocDistributed;
        }
        gpuprim_status_t status = GPUPRIM_SUCCESS;
        switch (call) {
        case 0: {
            uint8_t result[8];
            std::memset(result, 0x5A, sizeof result);
            status = shim_distributed_reduce(context.handle, op, a, in.u8() == 255 ? nullptr : result);
            check_status("gpuprim_distributed_reduce", kDocDistributed, expect, status, &context);
            for (uint8_t byte : result)
                if (byte != 0x5A) violation("failed distributed_reduce wrote its result");
            return;
        }
        case 1:
            status = shim_distributed_scan(context.handle, op, kind, a, b);
            check_status("gpuprim_distributed_scan", kDocDistributed, expect, status, &context);
            return;
        case 2:
        case 3: {
            gpuprim_sort_options_t options;
            gpuprim_sort_options_init(&options);
            options.order = static_cast<gpuprim_order_t>(order);
            const bool with_options = call == 3 && in.u8() != 255;
            if (call == 2)
                status = gpuprim_distributed_sort(context.handle, a, b, c, d, with_options ? &options : nullptr);
            else
                status = gpuprim_distributed_argsort(context.handle, a, c, d, with_options ? &options : nullptr);
            check_status(call == 2 ? "gpuprim_distributed_sort" : "gpuprim_distributed_argsort", kDocDistributed,
                         expect, status, &context);
            return;
        }
        case 4:
            status = shim_distributed_topk(context.handle, a, k, order, c, d);
            check_status("gpuprim_distributed_topk", kDocDistributed, expect, status, &context);
            return;
        case 5: {
            int32_t rank = -7, ranks = -7;
            const bool null_rank = in.u8() == 255;
            Expect rank_expect;
            rank_expect.must = context.slot < 0 ? context.error : null_rank ? kNull : kArg;
            status = gpuprim_context_get_rank(context.handle, null_rank ? nullptr : &rank, &ranks);
            check_status("gpuprim_context_get_rank", kDocGetRank, rank_expect, status, &context);
            if (rank != -7 || ranks != -7) violation("failed get_rank wrote its outputs");
            return;
        }
        case 6: {
            const int comm_kind = draw_enum(in, 3);  // 1 NCCL, 2 MPI; 0 and past them: no kind
            static uint64_t not_a_communicator[16];
#if defined(GPUPRIM_FUZZ_NO_ENGINES)
            void *communicator = in.u8() == 255 ? nullptr : not_a_communicator;
#else
            void *communicator = nullptr;
            (void)not_a_communicator;
#endif
            Expect attach_expect;
            if (context.slot < 0) {
                attach_expect.must = context.error;
            } else {
                // Which of the argument's errors is reported first is not
                // documented; the call must fail with one of them.
                if (comm_kind != GPUPRIM_COMM_NCCL && comm_kind != GPUPRIM_COMM_MPI) attach_expect.must |= kEnum;
                if (!communicator) attach_expect.must |= kNull;
                attach_expect.must |= kUnavailable | kArg;
            }
            status = shim_attach_communicator(context.handle, comm_kind, communicator);
            check_status("gpuprim_context_attach_communicator", kDocAttach, attach_expect, status, &context);
            return;
        }
        default: {
            Expect detach_expect;
            detach_expect.must = context.slot < 0 ? context.error : 0;  // nothing attached: nothing to do
            status = gpuprim_context_detach_communicator(context.handle);
            check_status("gpuprim_context_detach_communicator", kContextCodes, detach_expect, status, &context);
            return;
        }
        }
    }

private:
    // ----- contexts ---------------------------------------------------------
    static gpuprim_context_t create_cpu_context() {
        gpuprim_context_options_t options;
        gpuprim_context_options_init(&options);
        options.backend = GPUPRIM_BACKEND_CPU;
        gpuprim_context_t context = nullptr;
        char message[256];
        gpuprim_status_t status = gpuprim_context_create(&options, &context, message, sizeof message);
        if (status != GPUPRIM_SUCCESS || !context)
            violation("cannot create a CPU context: %d %s", status, message);
        return context;
    }

    // A context argument: one of the two live contexts, or (rarely) NULL, an
    // object that is not a context, a buffer handle passed as one, a
    // destroyed context, a small integer, a 4-byte stack object, random bits.
    struct ContextArg {
        gpuprim_context_t handle;
        int slot;      // -1 for the invalid ones
        Codes error;   // the status an invalid one must give
    };
    ContextArg draw_context(Input &in) {
        uint8_t choice = in.u8();
        if (choice == 250) return {nullptr, -1, kNull};
        if (choice == 251) return {reinterpret_cast<gpuprim_context_t>(g_fake_context), -1, kHandle};
        if (choice == 252 && !buffers_.empty())
            return {reinterpret_cast<gpuprim_context_t>(buffers_[0].handle), -1, kHandle};
        if (choice == 253 && !stale_contexts_.empty())
            return {stale_contexts_[in.u8() % stale_contexts_.size()], -1, kHandle};
        if (choice == 254) {
            static int32_t small_object;  // 4 bytes: reading 8 through it would overflow
            uintptr_t values[] = {1, 8, UINTPTR_MAX, reinterpret_cast<uintptr_t>(&small_object),
                                  static_cast<uintptr_t>(in.u64())};
            uintptr_t value = values[in.u8() % 5];
            if (value == 0 || value == reinterpret_cast<uintptr_t>(contexts_[0].handle) ||
                value == reinterpret_cast<uintptr_t>(contexts_[1].handle))
                value = 1;
            return {reinterpret_cast<gpuprim_context_t>(value), -1, kHandle};
        }
        int slot = (choice % 8 == 7) ? 1 : 0;  // mostly context 0, so buffers meet
        return {contexts_[slot].handle, slot, 0};
    }

    // ----- buffers ----------------------------------------------------------
    Buffer *find_live(gpuprim_buffer_t handle) {
        for (Buffer &b : buffers_)
            if (b.handle == handle) return &b;
        return nullptr;
    }

    // A buffer argument for context slot `slot`: mostly a live buffer of that
    // context, sometimes of the other one, a destroyed one, NULL, or junk.
    gpuprim_buffer_t draw_buffer(Input &in, int slot) {
        uint8_t choice = in.u8();
        if (choice < 6) return nullptr;
        if (choice < 8) return reinterpret_cast<gpuprim_buffer_t>(g_fake_buffer);
        if (choice < 10) {
            // Random bits (kept off the live handles): never a buffer.
            uintptr_t value = static_cast<uintptr_t>(in.u64()) | 1;
            for (Buffer &b : buffers_)
                if (reinterpret_cast<uintptr_t>(b.handle) == value) value = 1;
            return reinterpret_cast<gpuprim_buffer_t>(value);
        }
        if (choice < 20 && !stale_.empty()) return stale_[choice % stale_.size()];
        if (buffers_.empty()) return nullptr;
        bool any_context = choice < 40 || slot < 0;
        std::vector<gpuprim_buffer_t> candidates;
        for (Buffer &b : buffers_)
            if (any_context || b.context == slot) candidates.push_back(b.handle);
        if (candidates.empty()) return buffers_[choice % buffers_.size()].handle;
        return candidates[in.u8() % candidates.size()];
    }

    // The errors a data-dependent count's sinks must give (the select
    // family's rules): at least one sink; count_out of an index dtype that
    // holds n (judged where the input resolved) and at least one element.
    // Sets *cb to count_out's buffer when it resolves.
    Codes count_sink_errors(int slot, bool host_count, gpuprim_buffer_t count_out, bool input_resolved, uint64_t n,
                            Buffer **cb) {
        Codes must = 0;
        if (!host_count && !count_out) must |= kArg;
        if (count_out) {
            must |= resolve(slot, count_out, cb);
            if (*cb && !is_index_dtype((*cb)->dtype)) must |= kDtype;
            else if (*cb && input_resolved && n > largest_index((*cb)->dtype)) must |= kArg;
            if (*cb && (*cb)->count == 0) must |= kSize;
        }
        return must;
    }

    // The error resolving `handle` on context slot `slot` must give; sets
    // *out to the buffer when it resolves. Exact: only a live buffer of the
    // other context is CONTEXT_MISMATCH; destroyed buffers (alone or with
    // their context) and values that never were handles are INVALID_HANDLE.
    Codes resolve(int slot, gpuprim_buffer_t handle, Buffer **out) {
        *out = nullptr;
        if (!handle) return kNull;
        Buffer *live = find_live(handle);
        if (live && live->context == slot) {
            *out = live;
            return 0;
        }
        return live ? kMismatch : kHandle;
    }

    const uint8_t *contents(const Buffer &b) const {
        return b.wrapped ? arena_shadow_.data() + b.arena_offset : b.shadow.data();
    }
    uint8_t *contents(Buffer &b) {
        return b.wrapped ? arena_shadow_.data() + b.arena_offset : b.shadow.data();
    }

    struct Span {
        int region;
        size_t begin, end;
    };
    static Span span(const Buffer &b) {
        size_t begin = b.wrapped ? b.arena_offset : 0;
        return {b.region, begin, begin + b.bytes()};
    }
    static bool overlap(Span a, Span b) {
        if (a.begin == a.end || b.begin == b.end) return false;
        return a.region == b.region && a.begin < b.end && b.begin < a.end;
    }
    // The address the library reports for element 0 (NULL for no elements).
    static bool same_data(const Buffer &a, const Buffer &b) {
        bool a_null = a.count == 0, b_null = b.count == 0;
        if (a_null || b_null) return a_null && b_null;
        return span(a).region == span(b).region && span(a).begin == span(b).begin;
    }
    // "output may be input": the same memory and count is in place; any
    // other overlap (or, without same_allowed, the same buffer) is forbidden.
    static bool forbidden_alias(const Buffer &a, const Buffer &b, bool same_allowed) {
        if (same_allowed && same_data(a, b) && a.count == b.count) return false;
        return &a == &b || overlap(span(a), span(b));
    }

    void forget(size_t index) {
        Buffer &b = buffers_[index];
        if (stale_.size() < kMaxStale) stale_.push_back(b.handle);
        buffers_.erase(buffers_.begin() + static_cast<std::ptrdiff_t>(index));
    }

    void add_buffer(Buffer b) {
        if (find_live(b.handle)) violation("buffer handle %p handed out twice", (void *)b.handle);
        for (gpuprim_buffer_t old : stale_)
            if (old == b.handle) violation("destroyed buffer handle %p handed out again", (void *)old);
        buffers_.push_back(std::move(b));
    }

    // ----- checks -----------------------------------------------------------
    void check_status(const char *function, Codes documented, const Expect &expect,
                      gpuprim_status_t got, const ContextArg *context) {
        unsigned code = static_cast<unsigned>(got);
        // GPUPRIM_FUZZ_TRACE=1 prints every checked call (to read a crash input).
        static const bool trace = std::getenv("GPUPRIM_FUZZ_TRACE") != nullptr;
        if (trace)
            std::fprintf(stderr, "  %-34s -> %2u %-22s (expected mask 0x%04x, may 0x%04x) %s\n",
                         function, code, shim_get_error_string(static_cast<int>(code)), expect.must,
                         expect.may,
                         got && context && context->slot >= 0
                             ? gpuprim_context_last_error(context->handle)
                             : "");
        if (code >= 32 || !((documented | bit(GPUPRIM_SUCCESS)) & bit(got)))
            violation("%s returned %u (%s), which gpuprim.h does not document for it", function,
                      code, shim_get_error_string(static_cast<int>(code)));
        const char *message = context && context->slot >= 0
                                  ? gpuprim_context_last_error(context->handle)
                                  : "";
        if (got == GPUPRIM_SUCCESS) {
            if (expect.must)
                violation("%s succeeded, but its arguments have errors (mask 0x%x)", function,
                          expect.must);
            return;
        }
        Codes allowed = expect.must | expect.may;
        if (!(allowed & bit(got)))
            violation("%s returned %u (%s), expected %s (mask 0x%x); message: %s", function,
                      code, shim_get_error_string(static_cast<int>(code)),
                      expect.must ? "one of" : "success", allowed, message);
        if (context && context->slot >= 0 && (!message || !*message))
            violation("%s failed with %u but left no message", function, code);
    }

    // Every live buffer must hold what the model says; the arena too.
    void check_all_buffers(int op) {
        if (std::memcmp(arena_.get(), arena_shadow_.data(), kArenaBytes) != 0) {
            size_t i = 0;
            while (arena_.get()[i] == arena_shadow_[i]) ++i;
            violation("after op %d the wrapped host arena changed at byte %zu", op, i);
        }
        std::vector<uint8_t> actual;
        for (Buffer &b : buffers_) {
            if (b.count == 0) continue;
            actual.assign(b.bytes(), 0);
            gpuprim_status_t status = gpuprim_buffer_download(contexts_[b.context].handle,
                                                              b.handle, 0, actual.data(), b.count);
            if (status != GPUPRIM_SUCCESS)
                violation("after op %d, download of a live buffer failed: %d", op, status);
            if (std::memcmp(actual.data(), contents(b), b.bytes()) != 0) {
                size_t i = 0;
                while (actual[i] == contents(b)[i]) ++i;
                size_t size = size_of(b.dtype), element = i / size;
                uint64_t got = 0, want = 0;
                std::memcpy(&got, actual.data() + element * size, size);
                std::memcpy(&want, contents(b) + element * size, size);
                violation("after op %d, buffer %p (%s, dtype %d, count %llu) differs from the "
                          "model at element %zu: bits 0x%llx, expected 0x%llx",
                          op, (void *)b.handle, b.wrapped ? "wrapped" : "owned", b.dtype,
                          (unsigned long long)b.count, element, (unsigned long long)got,
                          (unsigned long long)want);
            }
        }
    }

    // ----- operations -------------------------------------------------------
    void op_buffer_create(Input &in) {
        ContextArg context = draw_context(in);
        int dtype = draw_enum(in, kDtypeCount);
        uint64_t count = draw_count(in);
        bool null_out = in.u8() == 255;
        if (buffers_.size() >= kMaxBuffers && !absurd(count)) count = 5000000000ull << 30;

        Expect expect;
        if (context.slot < 0) {
            expect.must = context.error;
        } else {
            if (null_out) expect.must |= kNull;
            if (!valid_dtype(dtype)) expect.must |= kEnum;
            if (absurd(count)) {
                // Either the bytes overflow 64 bits, or they are far beyond
                // any memory: OVERFLOW before allocating, or OUT_OF_MEMORY.
                size_t size = valid_dtype(dtype) ? size_of(dtype) : 1;
                expect.must |= count > UINT64_MAX / size ? kOverflow : kOom;
                if (!valid_dtype(dtype)) expect.may |= kOverflow | kOom;
            }
        }
        gpuprim_buffer_t sentinel = reinterpret_cast<gpuprim_buffer_t>(g_fake_buffer + 8);
        gpuprim_buffer_t handle = sentinel;
        gpuprim_status_t status =
            shim_buffer_create(context.handle, dtype, count, null_out ? nullptr : &handle);
        check_status("gpuprim_buffer_create", kDocBufferCreate, expect, status, &context);
        if (status != GPUPRIM_SUCCESS) {
            if (handle != sentinel) violation("failed buffer_create wrote its output");
            return;
        }
        Buffer b{handle, context.slot, dtype, count, false, 0, next_region_++, {}};
        // Contents are unspecified until written: read them once, then write
        // a pattern so that a crash input replays the same way.
        b.shadow.assign(b.bytes(), 0);
        if (count && gpuprim_buffer_download(context.handle, handle, 0, b.shadow.data(), count) !=
                         GPUPRIM_SUCCESS)
            violation("download of a new buffer failed");
        for (size_t i = 0; i < b.shadow.size(); ++i) b.shadow[i] = static_cast<uint8_t>(i * 7 + 1);
        if (count && gpuprim_buffer_upload(context.handle, handle, 0, b.shadow.data(), count) !=
                         GPUPRIM_SUCCESS)
            violation("upload to a new buffer failed");
        add_buffer(std::move(b));
    }

    void op_buffer_wrap(Input &in) {
        ContextArg context = draw_context(in);
        int dtype = draw_enum(in, kDtypeCount);
        size_t size = valid_dtype(dtype) ? size_of(dtype) : 1;
        uint8_t placement = in.u8();
        size_t offset = (in.u16() % (kArenaBytes / 8)) * 8;
        if (placement % 16 == 15) offset += 1 + in.u8() % 7;  // misaligned
        if (offset >= kArenaBytes) offset = 0;
        bool null_data = placement % 32 == 14;
        bool null_out = placement == 13;
        uint64_t count;
        uint8_t count_mode = in.u8();
        if (count_mode < 230) {
            size_t fit = (kArenaBytes - offset) / size;
            count = fit ? in.u16() % (fit + 1) : 0;
            if (count_mode < 40) count = std::min<uint64_t>(count, 4);
        } else if (size >= 4) {
            // >= 2^62 elements of 4 or more bytes: the bytes overflow 64 bits.
            count = in.u64() | (uint64_t(1) << 62);
        } else if (size == 2) {
            count = in.u64() | (uint64_t(1) << 63);  // >= 2^64 bytes
        } else {
            // 1-byte elements never overflow 64 bits: a range that runs past
            // the end of the address space (OVERFLOW too, gpuprim.h).
            count = UINT64_MAX - (in.u64() & 0xFFFF);
        }
        if (buffers_.size() >= kMaxBuffers) count = UINT64_MAX;
        void *data = null_data ? nullptr : arena_.get() + offset;

        Expect expect;
        bool huge = count >= (uint64_t(1) << 62);
        if (context.slot < 0) {
            expect.must = context.error;
        } else {
            if (null_out) expect.must |= kNull;
            if (!valid_dtype(dtype)) {
                expect.must |= kEnum;
                expect.may |= kOverflow | kNull | kArg;
            } else {
                if (huge) expect.must |= kOverflow;
                if (count > 0 && null_data) expect.must |= kNull;
                if (count > 0 && !null_data && offset % size != 0) expect.must |= kArg;
            }
        }
        gpuprim_buffer_t sentinel = reinterpret_cast<gpuprim_buffer_t>(g_fake_buffer + 8);
        gpuprim_buffer_t handle = sentinel;
        gpuprim_status_t status =
            shim_buffer_wrap(context.handle, dtype, data, count, null_out ? nullptr : &handle);
        check_status("gpuprim_buffer_wrap", kDocBufferWrap, expect, status, &context);
        if (status != GPUPRIM_SUCCESS) {
            if (handle != sentinel) violation("failed buffer_wrap wrote its output");
            return;
        }
        Buffer b{handle, context.slot, dtype, count, true, count ? offset : 0, 0, {}};
        add_buffer(std::move(b));
        void *reported = nullptr;
        if (gpuprim_buffer_get_info(context.handle, handle, nullptr, nullptr, &reported) !=
                GPUPRIM_SUCCESS ||
            reported != (count ? data : nullptr))
            violation("wrapped buffer reports data %p, wrapped %p", reported, data);
    }

    void op_buffer_destroy(Input &in) {
        ContextArg context = draw_context(in);
        gpuprim_buffer_t handle = draw_buffer(in, context.slot);
        Expect expect;
        Buffer *b = nullptr;
        if (context.slot < 0) expect.must = context.error;
        else if (handle) expect.must = resolve(context.slot, handle, &b);
        gpuprim_status_t status = gpuprim_buffer_destroy(context.handle, handle);
        check_status("gpuprim_buffer_destroy", kDocBufferDestroy, expect, status, &context);
        if (status == GPUPRIM_SUCCESS && b) forget(static_cast<size_t>(b - buffers_.data()));
    }

    // A whole, valid upload of drawn values: keeps interesting data around.
    void op_fill(Input &in) {
        if (buffers_.empty()) return;
        Buffer &b = buffers_[in.u8() % buffers_.size()];
        if (b.count == 0) return;
        std::vector<uint8_t> host(b.bytes());
        with_type(b.dtype, [&](auto zero) {
            using T = decltype(zero);
            uint8_t mode = in.u8();
            T repeated = draw_value<T>(in);
            // Signed zeros only (0/1 for integers): MIN/MAX must still tell
            // -0.0 from +0.0, and sort must keep equal keys stable.
            auto zero_or_one = [&](uint8_t bits) {
                if constexpr (kIsHalf<T>) return T(bits & 1 ? 0x8000 : 0);
                else if constexpr (std::is_floating_point_v<T>) return bits & 1 ? -T(0) : T(0);
                else return T(bits & 1);
            };
            for (uint64_t i = 0; i < b.count; ++i)
                store(host.data() + i * sizeof(T),
                      mode < 32   ? repeated
                      : mode < 64 ? T(b.count - i)
                      : mode < 96 ? zero_or_one(in.u8())
                                  : draw_value<T>(in));
        });
        if (gpuprim_buffer_upload(contexts_[b.context].handle, b.handle, 0, host.data(), b.count) !=
            GPUPRIM_SUCCESS)
            violation("valid upload failed: %s", gpuprim_context_last_error(contexts_[b.context].handle));
        std::memcpy(contents(b), host.data(), b.bytes());
        if (b.wrapped) check_all_buffers(-1);  // the upload went straight into the arena
    }

    // The errors an upload or download of [offset, offset + count) must report.
    Expect transfer_expectation(const ContextArg &context, gpuprim_buffer_t handle, uint64_t offset,
                                uint64_t count, bool null_host, Buffer **b) {
        Expect expect;
        if (context.slot < 0) {
            expect.must = context.error;
            return expect;
        }
        expect.must = resolve(context.slot, handle, b);
        if (*b) {
            if (offset > (*b)->count || count > (*b)->count - offset) expect.must |= kRange;
            else if (count > 0 && null_host) expect.must |= kNull;
        }
        return expect;
    }

    void op_upload(Input &in) {
        ContextArg context = draw_context(in);
        gpuprim_buffer_t handle = draw_buffer(in, context.slot);
        uint64_t offset = draw_offset(in);
        uint64_t count = in.u8() < 230 ? in.u8() % 48 : draw_count(in);
        bool null_host = in.u8() == 255;
        Buffer *b = nullptr;
        Expect expect = transfer_expectation(context, handle, offset, count, null_host, &b);
        size_t size = b ? size_of(b->dtype) : 8;
        // Exactly the bytes a correct call reads, so ASan sees any overread.
        std::vector<uint8_t> host(count <= 4096 ? count * size : 16);
        for (uint8_t &byte : host) byte = in.u8();
        gpuprim_status_t status = gpuprim_buffer_upload(
            context.handle, handle, offset, null_host ? nullptr : host.data(), count);
        check_status("gpuprim_buffer_upload", kDocTransfer, expect, status, &context);
        if (status == GPUPRIM_SUCCESS && b && count)
            std::memcpy(contents(*b) + offset * size, host.data(), count * size);
    }

    void op_download(Input &in) {
        ContextArg context = draw_context(in);
        gpuprim_buffer_t handle = draw_buffer(in, context.slot);
        uint64_t offset = draw_offset(in);
        uint64_t count = in.u8() < 230 ? in.u8() % 48 : draw_count(in);
        bool null_host = in.u8() == 255;
        Buffer *b = nullptr;
        Expect expect = transfer_expectation(context, handle, offset, count, null_host, &b);
        size_t size = b ? size_of(b->dtype) : 8;
        std::vector<uint8_t> host(count <= 4096 ? count * size : 16, 0x5A);
        gpuprim_status_t status = gpuprim_buffer_download(
            context.handle, handle, offset, null_host ? nullptr : host.data(), count);
        check_status("gpuprim_buffer_download", kDocTransfer, expect, status, &context);
        if (status == GPUPRIM_SUCCESS && b && count) {
            if (std::memcmp(host.data(), contents(*b) + offset * size, count * size) != 0)
                violation("download returned data that differs from the model");
        } else {
            for (uint8_t byte : host)
                if (byte != 0x5A) violation("failed download wrote to host memory");
        }
    }

    // Reduce/dot reference value of buffer `b` (and `c` for dot), checked
    // against `got` (element bytes).
    void check_reduce(int op, const Buffer &b, const uint8_t *got, const char *what) {
        check_reduce_span(op, b.dtype, contents(b), b.count, got, what);
    }
    void check_reduce_span(int op, int dtype, const uint8_t *data, uint64_t count, const uint8_t *got,
                           const char *what) {
        struct {
            int dtype;
            uint64_t count;
        } b{dtype, count};
        const gpuprim_dtype_t d = gpuprim_dtype_t(b.dtype);
        if (op == GPUPRIM_OP_SUM && tc_is_float(d)) {
            with_type(b.dtype, [&](auto zero) {
                using T = decltype(zero);
                FloatSum sum;
                for (uint64_t i = 0; i < b.count; ++i) sum.add(value_of(load<T>(data + i * sizeof(T))));
                sum.check(load<T>(got), what, 0);
            });
            return;
        }
        // integer sums wrap; MIN/MAX as the header orders (tc_apply)
        uint64_t expected = tc_identity(gpuprim_op_t(op), d);
        for (uint64_t i = 0; i < b.count; ++i) expected = tc_apply(gpuprim_op_t(op), d, expected, tc_get(d, data, i));
        if (tc_get(d, got, 0) != expected)
            violation("%s (op %d, dtype %d, %llu elements): got bits 0x%llx, expected 0x%llx", what, op, b.dtype,
                      (unsigned long long)b.count, (unsigned long long)tc_get(d, got, 0),
                      (unsigned long long)expected);
    }

    void check_dot(const Buffer &a, const Buffer &b, const uint8_t *got, const char *what) {
        with_type(a.dtype, [&](auto zero) {
            using T = decltype(zero);
            T result = load<T>(got);
            if constexpr (kIsFloat<T>) {
                FloatSum sum;
                for (uint64_t i = 0; i < a.count; ++i)
                    sum.add(value_of(load<T>(contents(a) + i * sizeof(T))) *
                            value_of(load<T>(contents(b) + i * sizeof(T))));
                sum.check(result, what, 0);
            } else {  // products and sums wrap (tc_apply)
                const gpuprim_dtype_t d = gpuprim_dtype_t(a.dtype);
                uint64_t expected = 0;
                for (uint64_t i = 0; i < a.count; ++i)
                    expected = tc_apply(GPUPRIM_OP_SUM, d, expected,
                                        (tc_get(d, contents(a), i) * tc_get(d, contents(b), i)) & tc_mask(d));
                if (expected != uint64_t(bits_of(result)))
                    violation("%s (dtype %d, %llu elements): got 0x%llx, expected 0x%llx", what,
                              a.dtype, (unsigned long long)a.count,
                              (unsigned long long)bits_of(result),
                              (unsigned long long)expected);
            }
        });
    }

    void op_reduce(Input &in) {
        ContextArg context = draw_context(in);
        int op = draw_enum(in, 3);
        gpuprim_buffer_t handle = draw_buffer(in, context.slot);
        bool null_result = in.u8() == 255;
        Buffer *b = nullptr;
        Expect expect;
        if (context.slot < 0) {
            expect.must = context.error;
        } else {
            if (!in_range(op, 3)) expect.must |= kEnum;
            expect.must |= resolve(context.slot, handle, &b);
            if (null_result) expect.must |= kNull;
        }
        size_t size = b ? size_of(b->dtype) : 8;
        std::unique_ptr<uint8_t[]> result(new uint8_t[size]);
        std::memset(result.get(), 0x5A, size);
        gpuprim_status_t status =
            shim_reduce(context.handle, op, handle, null_result ? nullptr : result.get());
        check_status("gpuprim_reduce", kDocReduce, expect, status, &context);
        if (status != GPUPRIM_SUCCESS) {
            for (size_t i = 0; i < size; ++i)
                if (result[i] != 0x5A) violation("failed reduce wrote its result");
            return;
        }
        check_reduce(op, *b, result.get(), "reduce");
        // Deterministic: the same input gives the same bits.
        std::unique_ptr<uint8_t[]> again(new uint8_t[size]);
        if (shim_reduce(context.handle, op, handle, again.get()) != GPUPRIM_SUCCESS ||
            std::memcmp(result.get(), again.get(), size) != 0)
            violation("reduce is not repeatable bit for bit");
    }

    // gpuprim_argreduce: op MIN or MAX (SUM is INVALID_ARGUMENT, an unknown
    // value INVALID_ENUM), a non-empty input, a non-NULL index; a failure
    // leaves the index as it was.
    void op_argreduce(Input &in) {
        ContextArg context = draw_context(in);
        int op = draw_enum(in, 3);
        gpuprim_buffer_t handle = draw_buffer(in, context.slot);
        bool null_index = in.u8() == 255;
        Buffer *b = nullptr;
        Expect expect;
        if (context.slot < 0) {
            expect.must = context.error;
        } else {
            if (!in_range(op, 3)) expect.must |= kEnum;
            else if (op == GPUPRIM_OP_SUM) expect.must |= kArg;
            expect.must |= resolve(context.slot, handle, &b);
            if (null_index) expect.must |= kNull;
            if (b && b->count == 0) expect.must |= kArg;
        }
        const uint64_t poison = 0x5A5A5A5A5A5A5A5Aull;
        uint64_t index = poison;
        gpuprim_status_t status = shim_argreduce(context.handle, op, handle, null_index ? nullptr : &index);
        check_status("gpuprim_argreduce", kDocArgreduce, expect, status, &context);
        if (status != GPUPRIM_SUCCESS) {
            if (index != poison) violation("failed argreduce wrote its index");
            return;
        }
        const uint64_t expected =
            tc_reference_argreduce(gpuprim_op_t(op), gpuprim_dtype_t(b->dtype), contents(*b), b->count);
        if (index != expected)
            violation("argreduce (op %d, dtype %d, %llu elements): got %llu, expected %llu", op, b->dtype,
                      (unsigned long long)b->count, (unsigned long long)index, (unsigned long long)expected);
        uint64_t again = poison;
        if (shim_argreduce(context.handle, op, handle, &again) != GPUPRIM_SUCCESS || again != index)
            violation("argreduce is not repeatable");
    }

    // gpuprim_searchsorted: side and order enums, queries of the keys'
    // dtype, indices of an index dtype with the queries' count that holds
    // the keys' count, indices apart from both inputs. On keys sorted in the
    // order every index is the documented bound (keys before the query in
    // the order key, strictly for LEFT); on any other keys each lies in
    // [0, n]. Repeatable bit for bit either way.
    void op_searchsorted(Input &in) {
        ContextArg context = draw_context(in);
        const int side = draw_enum(in, 2), order = draw_enum(in, 2);
        gpuprim_buffer_t sorted = draw_buffer(in, context.slot), queries = draw_buffer(in, context.slot);
        gpuprim_buffer_t indices = draw_buffer(in, context.slot);
        // gpuprim_searchsorted_rows for a rows byte of 200 and more: rows 0 to 4.
        const uint8_t rows_mode = in.u8();
        const bool by_rows = rows_mode >= 200;
        const uint64_t rows = by_rows ? rows_mode % 5 : 1;
        Buffer *kb = nullptr, *qb = nullptr, *ib = nullptr;
        Expect expect;
        if (context.slot < 0) {
            expect.must = context.error;
        } else {
            if (!in_range(side, 2) || !in_range(order, 2)) expect.must |= kEnum;
            expect.must |= resolve(context.slot, sorted, &kb);
            expect.must |= resolve(context.slot, queries, &qb);
            expect.must |= resolve(context.slot, indices, &ib);
            if (kb && qb && qb->dtype != kb->dtype) expect.must |= kDtype;
            if (ib && !is_index_dtype(ib->dtype)) expect.must |= kDtype;
            if (ib && qb && ib->count != qb->count) expect.must |= kSize;
            if (rows == 0) expect.must |= kArg;
            else if ((kb && kb->count % rows != 0) || (qb && qb->count % rows != 0)) expect.must |= kArg;
            if (ib && kb && is_index_dtype(ib->dtype) && rows != 0) {
                const uint64_t largest = ib->dtype == GPUPRIM_DTYPE_I32   ? uint64_t(INT32_MAX)
                                         : ib->dtype == GPUPRIM_DTYPE_U32 ? uint64_t(UINT32_MAX)
                                         : ib->dtype == GPUPRIM_DTYPE_I64 ? uint64_t(INT64_MAX)
                                                                          : UINT64_MAX;
                if (kb->count / rows > largest) expect.must |= kArg;
            }
            if (ib && kb && forbidden_alias(*ib, *kb, false)) expect.must |= kArg;
            if (ib && qb && forbidden_alias(*ib, *qb, false)) expect.must |= kArg;
        }
        auto call = [&] {
            return by_rows ? shim_searchsorted_rows(context.handle, sorted, queries, rows, side, order, indices)
                           : shim_searchsorted(context.handle, sorted, queries, side, order, indices);
        };
        gpuprim_status_t status = call();
        check_status(by_rows ? "gpuprim_searchsorted_rows" : "gpuprim_searchsorted", kDocSearchsorted, expect, status,
                     &context);
        if (status != GPUPRIM_SUCCESS) return;
        const size_t index_size = size_of(ib->dtype);
        std::vector<uint8_t> got(ib->bytes() + 8), again(ib->bytes() + 8);
        if (ib->count && gpuprim_buffer_download(context.handle, indices, 0, got.data(), ib->count) != GPUPRIM_SUCCESS)
            violation("searchsorted: download of the indices failed");
        {
            const gpuprim_dtype_t d = gpuprim_dtype_t(kb->dtype);
            const bool descending = order == GPUPRIM_ORDER_DESCENDING, upper = side == GPUPRIM_SIDE_RIGHT;
            const uint64_t n = kb->count / rows, m = qb->count / rows;
            bool keys_sorted = true;  // every row, by the documented order key
            for (uint64_t i = 1; i < kb->count && keys_sorted; ++i)
                keys_sorted = i % n == 0 || tc_sort_key(d, tc_get(d, contents(*kb), i - 1), descending) <=
                                                tc_sort_key(d, tc_get(d, contents(*kb), i), descending);
            for (uint64_t j = 0; j < qb->count; ++j) {
                uint64_t have = 0;
                std::memcpy(&have, got.data() + j * index_size, index_size);
                if (have > n)
                    violation("searchsorted: index %llu of query %llu is past the %llu keys", (unsigned long long)have,
                              (unsigned long long)j, (unsigned long long)n);
                if (!keys_sorted) continue;
                const uint64_t first = j / m * n;
                const uint64_t want = tc_searchsorted_bound(d, contents(*kb) + first * size_of(kb->dtype), n,
                                                            tc_get(d, contents(*qb), j), descending, upper);
                if (have != want)
                    violation("searchsorted (dtype %d, %s, %s, %llu keys): query %llu got %llu, expected %llu",
                              kb->dtype, descending ? "descending" : "ascending", upper ? "right" : "left",
                              (unsigned long long)n, (unsigned long long)j, (unsigned long long)have,
                              (unsigned long long)want);
            }
        }
        if (ib->bytes()) std::memcpy(contents(*ib), got.data(), ib->bytes());  // (memcpy of 0 bytes from NULL is undefined)
        if (call() != GPUPRIM_SUCCESS ||
            (ib->count &&
             gpuprim_buffer_download(context.handle, indices, 0, again.data(), ib->count) != GPUPRIM_SUCCESS) ||
            (ib->bytes() && std::memcmp(got.data(), again.data(), ib->bytes()) != 0))
            violation("searchsorted is not repeatable");
    }

    // The histograms (call 1 gpuprim_histogram_even, 2 gpuprim_histogram_range,
    // 3 gpuprim_bincount): counts U32 or U64 with 1 to 2^32 bins apart from
    // the inputs; even bounds read from the input bytes (lower < upper by
    // value, floats finite with a finite f64 difference), NULL now and then;
    // edges of the input's dtype, at least 2, one more than the counts;
    // bincount of integers. The model: integers' even bins exactly, floats'
    // by the header's f64 formula, edges and bincount by value; with edges
    // out of order (unspecified bins) only the total is checked. by_rows:
    // the _rows form, rows 0 to 7 from a byte after the arguments; the input
    // and counts then rows rows each (a multiple of rows, 1 to 2^32 bins a
    // row; edges: counts rows * (edges - 1)), each row modelled on its own.
    void op_histogram(Input &in, int call, bool by_rows) {
        ContextArg context = draw_context(in);
        gpuprim_buffer_t input = draw_buffer(in, context.slot);
        gpuprim_buffer_t edges = call == 2 ? draw_buffer(in, context.slot) : nullptr;
        gpuprim_buffer_t counts = draw_buffer(in, context.slot);
        const uint8_t bound_mode = call == 1 ? in.u8() : 0;
        const uint64_t lower_bits = call == 1 ? in.u64() : 0, upper_bits = call == 1 ? in.u64() : 0;
        const bool null_lower = bound_mode == 255, null_upper = bound_mode == 254;
        const uint64_t rows = by_rows ? in.u8() % 8 : 1;
        Buffer *ib = nullptr, *eb = nullptr, *cb = nullptr;
        Expect expect;
        expect.may = kOom;
        if (context.slot < 0) {
            expect.must = context.error;
        } else {
            expect.must |= resolve(context.slot, input, &ib);
            if (call == 2) expect.must |= resolve(context.slot, edges, &eb);
            expect.must |= resolve(context.slot, counts, &cb);
            if (null_lower || null_upper) expect.must |= kNull;
            if (cb) {
                if (cb->dtype != GPUPRIM_DTYPE_U32 && cb->dtype != GPUPRIM_DTYPE_U64) expect.must |= kDtype;
                if (cb->count == 0) expect.must |= kArg;
                else if (rows != 0 && (cb->count % rows != 0 || cb->count / rows > (uint64_t(1) << 32)))
                    expect.must |= kArg;
                if (ib && forbidden_alias(*cb, *ib, false)) expect.must |= kArg;
                if (eb && forbidden_alias(*cb, *eb, false)) expect.must |= kArg;
            }
            if (call == 2 && eb && ib && eb->dtype != ib->dtype) expect.must |= kDtype;
            if (call == 2 && eb && eb->count < 2) expect.must |= kArg;
            if (rows == 0 || (ib && ib->count % rows != 0)) expect.must |= kArg;
            if (call == 2 && eb && cb && eb->count >= 2 && rows != 0) {
                uint64_t wanted = 0;
                if (__builtin_mul_overflow(rows, eb->count - 1, &wanted) || cb->count != wanted) expect.must |= kSize;
            }
            if (call == 3 && ib && (ib->dtype == GPUPRIM_DTYPE_F32 || ib->dtype == GPUPRIM_DTYPE_F64 ||
                                    ib->dtype == GPUPRIM_DTYPE_F16 || ib->dtype == GPUPRIM_DTYPE_BF16))
                expect.must |= kDtype;
            if (call == 1 && ib && !null_lower && !null_upper)
                with_type(ib->dtype, [&](auto zero) {
                    using T = decltype(zero);
                    const T lo = load<T>(reinterpret_cast<const uint8_t *>(&lower_bits));
                    const T hi = load<T>(reinterpret_cast<const uint8_t *>(&upper_bits));
                    const long double l = value_of(lo), u = value_of(hi);
                    if constexpr (kIsFloat<T>) {
                        if (!std::isfinite(l) || !std::isfinite(u) || !(l < u) ||
                            !std::isfinite(double(u) - double(l)))
                            expect.must |= kArg;
                    } else if (!(l < u)) {
                        expect.must |= kArg;
                    }
                });
        }
        gpuprim_status_t status;
        const void *lower = null_lower ? nullptr : &lower_bits, *upper = null_upper ? nullptr : &upper_bits;
        if (call == 1)
            status = by_rows ? gpuprim_histogram_even_rows(context.handle, input, rows, lower, upper, counts)
                             : gpuprim_histogram_even(context.handle, input, lower, upper, counts);
        else if (call == 2)
            status = by_rows ? gpuprim_histogram_range_rows(context.handle, input, rows, edges, counts)
                             : gpuprim_histogram_range(context.handle, input, edges, counts);
        else
            status = by_rows ? gpuprim_bincount_rows(context.handle, input, rows, counts)
                             : gpuprim_bincount(context.handle, input, counts);
        static const char *const names[2][3] = {
            {"gpuprim_histogram_even", "gpuprim_histogram_range", "gpuprim_bincount"},
            {"gpuprim_histogram_even_rows", "gpuprim_histogram_range_rows", "gpuprim_bincount_rows"}};
        check_status(names[by_rows ? 1 : 0][call - 1], kDocHistogram, expect, status, &context);
        if (status != GPUPRIM_SUCCESS) return;
        const uint64_t bins = cb->count / rows, row_count = ib->count / rows;
        std::vector<uint64_t> want(cb->count, 0);
        const gpuprim_dtype_t d = gpuprim_dtype_t(ib->dtype);
        bool exact = true;  // edges in order by value, no NaN
        for (uint64_t e = 1; call == 2 && e < eb->count && exact; ++e) {
            const uint64_t before = tc_get(d, contents(*eb), e - 1), after = tc_get(d, contents(*eb), e);
            exact = tc_is_float(d) ? !tc_isnan_bits(d, before) && !tc_isnan_bits(d, after) &&
                                         tc_value(d, before) <= tc_value(d, after)
                                   : tc_int_le(d, before, after);
        }
        // each element's bin by the header's rules (test_common.h; edges out of order give some bin)
        const uint64_t lower_key = tc_get(d, &lower_bits, 0), upper_key = tc_get(d, &upper_bits, 0);
        for (uint64_t i = 0; i < ib->count; ++i) {
            const uint64_t x = tc_get(d, contents(*ib), i);
            const int64_t bin = call == 1   ? tc_histogram_even_bin(d, x, lower_key, upper_key, bins)
                                : call == 2 ? tc_histogram_range_bin(d, x, contents(*eb), bins)
                                            : tc_bincount_bin(d, x, bins);
            if (bin >= 0) ++want[i / row_count * bins + uint64_t(bin)];
        }
        const size_t count_size = size_of(cb->dtype);
        std::vector<uint8_t> got(cb->bytes() + 8);
        if (gpuprim_buffer_download(context.handle, counts, 0, got.data(), cb->count) != GPUPRIM_SUCCESS)
            violation("histogram: download of the counts failed");
        uint64_t total = 0, want_total = 0;
        for (uint64_t b = 0; b < cb->count; ++b) {
            uint64_t have = 0;
            std::memcpy(&have, got.data() + b * count_size, count_size);
            const uint64_t expected = count_size == 4 ? want[b] & 0xFFFFFFFFu : want[b];
            total += have;
            want_total += want[b];
            if (exact && have != expected)
                violation("histogram call %d (dtype %d, %llu elements, %llu bins): bin %llu has %llu, expected %llu",
                          call, ib->dtype, (unsigned long long)ib->count, (unsigned long long)bins,
                          (unsigned long long)b, (unsigned long long)have, (unsigned long long)expected);
        }
        if (!exact && total > ib->count) violation("histogram: %llu counts of %llu elements", (unsigned long long)total,
                                                   (unsigned long long)ib->count);
        if (cb->bytes()) std::memcpy(contents(*cb), got.data(), cb->bytes());
    }

    // gpuprim_merge: keys_a, keys_b, keys_out of one dtype (count_a +
    // count_b outputs), values all NULL or all given (one dtype, their keys'
    // counts), outputs apart from every input and each other. The model: on
    // runs sorted in the order (documented order key), the stable merge,
    // values with their keys; on others only that the call succeeds and
    // leaves the inputs alone (the outputs take what it wrote).
    void op_merge(Input &in) {
        ContextArg context = draw_context(in);
        const int order = draw_enum(in, 2);
        gpuprim_buffer_t keys_a = draw_buffer(in, context.slot), keys_b = draw_buffer(in, context.slot);
        gpuprim_buffer_t keys_out = draw_buffer(in, context.slot);
        const uint8_t values_mode = in.u8();
        gpuprim_buffer_t values_a = nullptr, values_b = nullptr, values_out = nullptr;
        if (values_mode & 1) {
            values_a = draw_buffer(in, context.slot);
            values_b = draw_buffer(in, context.slot);
            values_out = draw_buffer(in, context.slot);
        } else if (values_mode == 254) {
            values_a = draw_buffer(in, context.slot);  // the others NULL
        }
        const int given = (values_a != nullptr) + (values_b != nullptr) + (values_out != nullptr);
        Buffer *ka = nullptr, *kb = nullptr, *ko = nullptr, *va = nullptr, *vb = nullptr, *vo = nullptr;
        Expect expect;
        if (context.slot < 0) {
            expect.must = context.error;
        } else {
            if (!in_range(order, 2)) expect.must |= kEnum;
            expect.must |= resolve(context.slot, keys_a, &ka);
            expect.must |= resolve(context.slot, keys_b, &kb);
            expect.must |= resolve(context.slot, keys_out, &ko);
            if (given != 0 && given != 3) expect.must |= kArg;
            if (ka && kb && kb->dtype != ka->dtype) expect.must |= kDtype;
            if (ka && ko && ko->dtype != ka->dtype) expect.must |= kDtype;
            if (ka && kb && ko && (ka->count + kb->count < ka->count || ko->count != ka->count + kb->count))
                expect.must |= kSize;
            if (ko && ka && forbidden_alias(*ko, *ka, false)) expect.must |= kArg;
            if (ko && kb && forbidden_alias(*ko, *kb, false)) expect.must |= kArg;
            if (given == 3) {
                expect.must |= resolve(context.slot, values_a, &va);
                expect.must |= resolve(context.slot, values_b, &vb);
                expect.must |= resolve(context.slot, values_out, &vo);
                if (va && vb && vb->dtype != va->dtype) expect.must |= kDtype;
                if (va && vo && vo->dtype != va->dtype) expect.must |= kDtype;
                if (va && ka && va->count != ka->count) expect.must |= kSize;
                if (vb && kb && vb->count != kb->count) expect.must |= kSize;
                if (vo && ko && vo->count != ko->count) expect.must |= kSize;
                for (Buffer *input : {ka, kb, va, vb, ko})
                    if (vo && input && forbidden_alias(*vo, *input, false)) expect.must |= kArg;
                for (Buffer *input : {va, vb})
                    if (ko && input && forbidden_alias(*ko, *input, false)) expect.must |= kArg;
            }
        }
        gpuprim_status_t status =
            shim_merge(context.handle, keys_a, values_a, keys_b, values_b, keys_out, values_out, order);
        check_status("gpuprim_merge", kDocMerge, expect, status, &context);
        if (status != GPUPRIM_SUCCESS) return;
        const uint64_t na = ka->count, nb = kb->count, n = na + nb;
        std::vector<uint8_t> got_keys(ko->bytes() + 8), got_values(vo ? vo->bytes() + 8 : 8);
        if (n && gpuprim_buffer_download(context.handle, keys_out, 0, got_keys.data(), n) != GPUPRIM_SUCCESS)
            violation("merge: download of keys_out failed");
        if (n && vo && gpuprim_buffer_download(context.handle, values_out, 0, got_values.data(), n) != GPUPRIM_SUCCESS)
            violation("merge: download of values_out failed");
        [&] {
            const gpuprim_dtype_t d = gpuprim_dtype_t(ka->dtype);
            const bool descending = order == GPUPRIM_ORDER_DESCENDING;
            auto rank = [&](const Buffer &b, uint64_t i) { return tc_sort_key(d, tc_get(d, contents(b), i), descending); };
            bool sorted = true;
            for (uint64_t i = 1; i < na && sorted; ++i) sorted = rank(*ka, i - 1) <= rank(*ka, i);
            for (uint64_t i = 1; i < nb && sorted; ++i) sorted = rank(*kb, i - 1) <= rank(*kb, i);
            if (!sorted) return;
            const size_t key_size = size_of(ka->dtype), value_size = vo ? size_of(vo->dtype) : 0;
            std::vector<uint64_t> permutation(n + 1);
            tc_reference_merge_permutation(d, contents(*ka), na, contents(*kb), nb, descending, permutation.data());
            std::vector<uint8_t> want_keys(ko->bytes() + 8), want_values(vo ? vo->bytes() + 8 : 8);
            for (uint64_t out = 0; out < n; ++out) {
                const bool take_b = permutation[out] >= na;
                const uint64_t at = take_b ? permutation[out] - na : permutation[out];
                std::memcpy(want_keys.data() + out * key_size, contents(take_b ? *kb : *ka) + at * key_size, key_size);
                if (vo)
                    std::memcpy(want_values.data() + out * value_size, contents(take_b ? *vb : *va) + at * value_size,
                                value_size);
            }
            if (n && std::memcmp(want_keys.data(), got_keys.data(), n * key_size) != 0)
                violation("merge (dtype %d, %llu + %llu keys, %s): keys_out differs from the stable merge", ka->dtype,
                          (unsigned long long)na, (unsigned long long)nb, descending ? "descending" : "ascending");
            if (n && vo && std::memcmp(want_values.data(), got_values.data(), n * value_size) != 0)
                violation("merge (dtype %d, %llu + %llu keys): values_out differs from the stable merge", ka->dtype,
                          (unsigned long long)na, (unsigned long long)nb);
        }();
        if (ko->bytes()) std::memcpy(contents(*ko), got_keys.data(), ko->bytes());
        if (vo && vo->bytes()) std::memcpy(contents(*vo), got_values.data(), vo->bytes());
    }

    // gpuprim_select, gpuprim_partition, gpuprim_unique and
    // gpuprim_run_length_encode (the next byte % 4 picks the call). A mode
    // byte says which optional arguments are given (bit 0 values and
    // values_out, bit 1 values alone, bit 2 the host count, bit 3 count_out,
    // bit 4 no output / keys_out, bit 5 positions / starts, bit 6 lengths,
    // bit 7 flags with a comparison); a predicate byte: 255 a NULL
    // predicate, 254 NULL scalars, else the kind (% 12: 10 and 11 are not
    // kinds), then the scalars' 8 bytes each. The model (test_common.h's
    // tc_keeps, tc_reference_select_permutation, tc_reference_runs): the
    // written prefix of each output, every element past it unchanged, the
    // count on the host and in count_out's element 0.
    void op_select(Input &in) {
        const int call = in.u8() % 4;  // 0 select, 1 partition, 2 unique, 3 run-length encode
        ContextArg context = draw_context(in);
        gpuprim_buffer_t input = draw_buffer(in, context.slot);
        const uint8_t mode = in.u8();
        gpuprim_buffer_t values = nullptr, values_out = nullptr, output = nullptr, positions = nullptr;
        gpuprim_buffer_t lengths = nullptr, count_out = nullptr, flags = nullptr;
        if (call != 3 && (mode & 3)) {
            values = draw_buffer(in, context.slot);
            if (!(mode & 2)) values_out = draw_buffer(in, context.slot);
        }
        if (!(mode & 16) || call == 1 || call == 2) output = draw_buffer(in, context.slot);
        if ((call == 0 || call == 3) && (mode & 32)) positions = draw_buffer(in, context.slot);
        if (call == 3 && (mode & 64)) lengths = draw_buffer(in, context.slot);
        if (mode & 8) count_out = draw_buffer(in, context.slot);
        const bool host_count = (mode & 4) != 0;
        const int runs = call == 3 ? draw_enum(in, 2) : 0;
        const uint8_t predicate_byte = call <= 1 ? in.u8() : 0;
        const bool null_predicate = predicate_byte == 255, null_scalars = predicate_byte == 254;
        const int kind = predicate_byte % 12;
        if (call <= 1 && !null_predicate && (kind == GPUPRIM_KEEP_FLAGGED || (mode & 128)))
            flags = draw_buffer(in, context.slot);
        const uint64_t scalar_bits = call <= 1 ? in.u64() : 0, high_bits = call <= 1 ? in.u64() : 0;

        Buffer *ib = nullptr, *vb = nullptr, *vo = nullptr, *ob = nullptr, *pb = nullptr, *lb = nullptr;
        Buffer *cb = nullptr, *fb = nullptr;
        Expect expect;
        expect.may = kOom;
        if (context.slot < 0) {
            expect.must = context.error;
        } else {
            expect.must |= resolve(context.slot, input, &ib);
            const uint64_t n = ib ? ib->count : 0;
            // An index-typed output: dtype, the input's count fits, long enough.
            auto index_output = [&](gpuprim_buffer_t handle, Buffer **b) {
                expect.must |= resolve(context.slot, handle, b);
                if (!*b) return;
                if (!is_index_dtype((*b)->dtype)) expect.must |= kDtype;
                else if (ib && n > largest_index((*b)->dtype)) expect.must |= kArg;
                if (ib && (*b)->count < n) expect.must |= kSize;
            };
            if ((values != nullptr) != (values_out != nullptr)) expect.must |= kArg;
            if (values && values_out) {
                expect.must |= resolve(context.slot, values, &vb);
                expect.must |= resolve(context.slot, values_out, &vo);
                if (vb && ib && vb->count != n) expect.must |= kSize;
                if (vb && vo && vo->dtype != vb->dtype) expect.must |= kDtype;
                if (vo && ib && vo->count < n) expect.must |= kSize;
            }
            if (call <= 1) {
                if (null_predicate) {
                    expect.must |= kNull;
                } else if (kind > GPUPRIM_KEEP_NOT_NAN) {
                    expect.must |= kEnum;
                } else if (kind == GPUPRIM_KEEP_FLAGGED) {
                    expect.must |= resolve(context.slot, flags, &fb);
                    if (fb && (fb->dtype == GPUPRIM_DTYPE_F32 || fb->dtype == GPUPRIM_DTYPE_F64 ||
                               fb->dtype == GPUPRIM_DTYPE_F16 || fb->dtype == GPUPRIM_DTYPE_BF16))
                        expect.must |= kDtype;
                    if (fb && ib && fb->count != n) expect.must |= kSize;
                } else {
                    if (flags) expect.must |= kArg;
                    if (null_scalars && kind >= GPUPRIM_KEEP_LESS && kind <= GPUPRIM_KEEP_IN_RANGE)
                        expect.must |= kNull;
                }
            }
            if (call == 0 && !output && !values_out && !positions) expect.must |= kArg;
            if (call == 3 && !output && !positions && !lengths) expect.must |= kArg;
            if (call == 3 && !in_range(runs, 2)) expect.must |= kEnum;
            if (output || call == 1 || call == 2) {
                expect.must |= resolve(context.slot, output, &ob);
                if (ob && ib && ob->dtype != ib->dtype) expect.must |= kDtype;
                if (ob && ib && ob->count < n) expect.must |= kSize;
            }
            if (positions) index_output(positions, &pb);
            if (lengths) index_output(lengths, &lb);
            expect.must |= count_sink_errors(context.slot, host_count, count_out, ib != nullptr, n, &cb);
            Buffer *outputs[] = {ob, vo, pb, lb, cb};
            Buffer *inputs[] = {ib, vb, fb};
            for (size_t o = 0; o < 5; ++o) {
                if (!outputs[o]) continue;
                for (Buffer *other : inputs)
                    if (other && forbidden_alias(*outputs[o], *other, false)) expect.must |= kArg;
                for (size_t p = 0; p < o; ++p)
                    if (outputs[p] && forbidden_alias(*outputs[o], *outputs[p], false)) expect.must |= kArg;
            }
        }
        gpuprim_predicate_t predicate;
        std::memset(&predicate, 0, sizeof predicate);
        predicate.kind = kind;
        predicate.flags = flags;
        predicate.scalar = null_scalars ? nullptr : &scalar_bits;
        predicate.scalar_high = null_scalars ? nullptr : &high_bits;
        const uint64_t kUntouched = 0xFEEDFACECAFEBEEFull;
        uint64_t count = kUntouched;
        uint64_t *count_pointer = host_count ? &count : nullptr;
        gpuprim_status_t status;
        const char *name;
        switch (call) {
        case 0:
            name = "gpuprim_select";
            status = gpuprim_select(context.handle, input, values, null_predicate ? nullptr : &predicate, output,
                                    values_out, positions, count_pointer, count_out);
            break;
        case 1:
            name = "gpuprim_partition";
            status = gpuprim_partition(context.handle, input, values, null_predicate ? nullptr : &predicate, output,
                                       values_out, count_pointer, count_out);
            break;
        case 2:
            name = "gpuprim_unique";
            status = gpuprim_unique(context.handle, input, values, output, values_out, count_pointer, count_out);
            break;
        default:
            name = "gpuprim_run_length_encode";
            status = shim_run_length_encode(context.handle, input, runs, output, positions, lengths, count_pointer,
                                            count_out);
            break;
        }
        check_status(name, kDocSelect, expect, status, &context);
        if (status != GPUPRIM_SUCCESS) {
            if (count != kUntouched) violation("%s failed but wrote *count", name);
            return;
        }
        // The reference, from the inputs' contents before the call (the outputs lie apart from them).
        const gpuprim_dtype_t d = gpuprim_dtype_t(ib->dtype);
        const uint64_t n = ib->count;
        std::vector<uint64_t> order(n + 1), run_lengths(n + 1);
        uint64_t want_count, written;
        if (call <= 1) {
            std::vector<unsigned char> keep(n + 1);
            const uint64_t scalar = tc_get(d, &scalar_bits, 0), high = tc_get(d, &high_bits, 0);
            want_count = tc_reference_keep(d, contents(*ib), n, kind, scalar, high,
                                           fb ? gpuprim_dtype_t(fb->dtype) : GPUPRIM_DTYPE_U8,
                                           fb ? contents(*fb) : nullptr, keep.data());
            tc_reference_select_permutation(keep.data(), n, call == 1, order.data());
            written = call == 1 ? n : want_count;
        } else {
            want_count = tc_reference_runs(d, contents(*ib), n, call == 3 && runs == GPUPRIM_RUNS_NON_TRIVIAL,
                                           order.data(), run_lengths.data());
            written = want_count;
        }
        if (host_count && count != want_count)
            violation("%s (dtype %d, %llu elements): *count = %llu, expected %llu", name, ib->dtype,
                      (unsigned long long)n, (unsigned long long)count, (unsigned long long)want_count);
        // Each output: the written prefix as the reference says, the rest as it was.
        auto check_output = [&](Buffer *b, gpuprim_buffer_t handle, const char *what, uint64_t prefix,
                                auto &&want_at) {
            if (!b) return;
            std::vector<uint8_t> got(b->bytes() + 8);
            if (b->count && gpuprim_buffer_download(context.handle, handle, 0, got.data(), b->count) != GPUPRIM_SUCCESS)
                violation("%s: download of %s failed", name, what);
            const gpuprim_dtype_t bd = gpuprim_dtype_t(b->dtype);
            for (uint64_t j = 0; j < b->count; ++j) {
                const uint64_t want = j < prefix ? want_at(j) : tc_get(bd, contents(*b), j);
                if (tc_get(bd, got.data(), j) != (want & tc_mask(bd)))
                    violation("%s (dtype %d, %llu elements, kind %d): %s[%llu] = 0x%llx, expected 0x%llx", name,
                              ib->dtype, (unsigned long long)n, kind, what, (unsigned long long)j,
                              (unsigned long long)tc_get(bd, got.data(), j), (unsigned long long)(want & tc_mask(bd)));
            }
            if (b->bytes()) std::memcpy(contents(*b), got.data(), b->bytes());
        };
        // Values are read from the shadow before any output's shadow is updated: outputs lie apart from
        // the inputs, so the inputs' shadows stay as they were.
        std::vector<uint8_t> input_copy(contents(*ib), contents(*ib) + ib->bytes());
        std::vector<uint8_t> values_copy;
        if (vb) values_copy.assign(contents(*vb), contents(*vb) + vb->bytes());
        check_output(ob, output, "output", written,
                     [&](uint64_t j) { return tc_get(d, input_copy.data(), order[j]); });
        check_output(vo, values_out, "values_out", written, [&](uint64_t j) {
            return tc_get(gpuprim_dtype_t(vb->dtype), values_copy.data(), order[j]);
        });
        check_output(pb, positions, call == 3 ? "starts" : "positions", want_count,
                     [&](uint64_t j) { return order[j]; });
        check_output(lb, lengths, "lengths", want_count, [&](uint64_t j) { return run_lengths[j]; });
        check_output(cb, count_out, "count_out", 1, [&](uint64_t) { return want_count; });
    }

    // gpuprim_reduce_by_key and gpuprim_group_by (the next byte, odd:
    // group-by). Then the context, keys, the op (draw_enum) and a mode byte
    // saying which optional arguments are given (bit 0 values, bit 1
    // results, bit 2 the host count, bit 3 count_out, bit 4 keys_out, bit 5
    // lengths / counts, bit 6 inverse (group-by)), the buffers it names in
    // that order. The model (test_common.h's tc_reference_groups over the
    // input order or tc_reference_sort_permutation's stable order; each
    // group's result by check_reduce_span on its values in order): the
    // written prefix of each output, every element past it unchanged, the
    // count on the host and in count_out's element 0.
    void op_reduce_by_key(Input &in) {
        const bool group_by = (in.u8() & 1) != 0;
        ContextArg context = draw_context(in);
        gpuprim_buffer_t keys = draw_buffer(in, context.slot);
        const int op = draw_enum(in, 3);
        const uint8_t mode = in.u8();
        gpuprim_buffer_t values = nullptr, results = nullptr, keys_out = nullptr, lengths = nullptr;
        gpuprim_buffer_t inverse = nullptr, count_out = nullptr;
        if (mode & 1) values = draw_buffer(in, context.slot);
        if (mode & 2) results = draw_buffer(in, context.slot);
        if (mode & 8) count_out = draw_buffer(in, context.slot);
        if (mode & 16) keys_out = draw_buffer(in, context.slot);
        if (mode & 32) lengths = draw_buffer(in, context.slot);
        if (group_by && (mode & 64)) inverse = draw_buffer(in, context.slot);
        const bool host_count = (mode & 4) != 0;

        Buffer *kb = nullptr, *vb = nullptr, *rb = nullptr, *ob = nullptr, *lb = nullptr, *ib = nullptr;
        Buffer *cb = nullptr;
        Expect expect;
        expect.may = kOom;
        if (context.slot < 0) {
            expect.must = context.error;
        } else {
            if (!in_range(op, 3)) expect.must |= kEnum;
            expect.must |= resolve(context.slot, keys, &kb);
            const uint64_t n = kb ? kb->count : 0;
            auto index_output = [&](gpuprim_buffer_t handle, Buffer **b) {
                expect.must |= resolve(context.slot, handle, b);
                if (!*b) return;
                if (!is_index_dtype((*b)->dtype)) expect.must |= kDtype;
                else if (kb && n > largest_index((*b)->dtype)) expect.must |= kArg;
                if (kb && (*b)->count < n) expect.must |= kSize;
            };
            if (group_by && (values != nullptr) != (results != nullptr)) expect.must |= kArg;
            if (!group_by || (values && results)) {
                expect.must |= resolve(context.slot, values, &vb);
                expect.must |= resolve(context.slot, results, &rb);
                if (vb && kb && vb->count != n) expect.must |= kSize;
                if (vb && rb && rb->dtype != vb->dtype) expect.must |= kDtype;
                if (rb && kb && rb->count < n) expect.must |= kSize;
            }
            if (group_by && !keys_out && !lengths && !results && !inverse) expect.must |= kArg;
            if (keys_out) {
                expect.must |= resolve(context.slot, keys_out, &ob);
                if (ob && kb && ob->dtype != kb->dtype) expect.must |= kDtype;
                if (ob && kb && ob->count < n) expect.must |= kSize;
            }
            if (lengths) index_output(lengths, &lb);
            if (inverse) index_output(inverse, &ib);
            expect.must |= count_sink_errors(context.slot, host_count, count_out, kb != nullptr, n, &cb);
            Buffer *outputs[] = {ob, rb, lb, ib, cb};
            Buffer *inputs[] = {kb, vb};
            for (size_t o = 0; o < 5; ++o) {
                if (!outputs[o]) continue;
                for (Buffer *other : inputs)
                    if (other && forbidden_alias(*outputs[o], *other, false)) expect.must |= kArg;
                for (size_t p = 0; p < o; ++p)
                    if (outputs[p] && forbidden_alias(*outputs[o], *outputs[p], false)) expect.must |= kArg;
            }
        }
        const uint64_t kUntouched = 0xFEEDFACECAFEBEEFull;
        uint64_t count = kUntouched;
        uint64_t *count_pointer = host_count ? &count : nullptr;
        const char *name = group_by ? "gpuprim_group_by" : "gpuprim_reduce_by_key";
        const gpuprim_status_t status =
            group_by ? shim_group_by(context.handle, keys, values, op, keys_out, lengths, results, inverse,
                                     count_pointer, count_out)
                     : shim_reduce_by_key(context.handle, keys, values, op, keys_out, results, lengths, count_pointer,
                                          count_out);
        check_status(name, kDocSelect, expect, status, &context);
        if (status != GPUPRIM_SUCCESS) {
            if (count != kUntouched) violation("%s failed but wrote *count", name);
            return;
        }
        // The reference, from the inputs' contents before the call (the outputs lie apart from them).
        const gpuprim_dtype_t kd = gpuprim_dtype_t(kb->dtype);
        const uint64_t n = kb->count;
        std::vector<uint8_t> key_copy(contents(*kb), contents(*kb) + kb->bytes());
        std::vector<uint8_t> value_copy;
        if (vb) value_copy.assign(contents(*vb), contents(*vb) + vb->bytes());
        std::vector<uint64_t> order(n + 1), first(n + 1), length(n + 1), group_of(n + 1);
        if (group_by) tc_reference_sort_permutation(kd, key_copy.data(), n, 0, order.data());
        else
            for (uint64_t i = 0; i < n; ++i) order[i] = i;
        const uint64_t groups = tc_reference_groups(kd, key_copy.data(), order.data(), n, first.data(), length.data());
        for (uint64_t g = 0; g < groups; ++g)
            for (uint64_t j = first[g]; j < first[g] + length[g]; ++j) group_of[order[j]] = g;
        if (host_count && count != groups)
            violation("%s (dtype %d, %llu elements): *count = %llu, expected %llu", name, kb->dtype,
                      (unsigned long long)n, (unsigned long long)count, (unsigned long long)groups);
        // Each output: the written prefix as the reference says (results: checked by group), the rest as it was.
        auto check_output = [&](Buffer *b, gpuprim_buffer_t handle, const char *what, uint64_t prefix,
                                auto &&check_at) {
            if (!b) return;
            std::vector<uint8_t> got(b->bytes() + 8);
            if (b->count && gpuprim_buffer_download(context.handle, handle, 0, got.data(), b->count) != GPUPRIM_SUCCESS)
                violation("%s: download of %s failed", name, what);
            const gpuprim_dtype_t bd = gpuprim_dtype_t(b->dtype);
            for (uint64_t j = 0; j < b->count; ++j) {
                if (j < prefix) {
                    check_at(j, got.data() + j * size_of(b->dtype));
                    continue;
                }
                if (tc_get(bd, got.data(), j) != tc_get(bd, contents(*b), j))
                    violation("%s (dtype %d, %llu elements): %s[%llu] past the %llu written changed", name, kb->dtype,
                              (unsigned long long)n, what, (unsigned long long)j, (unsigned long long)prefix);
            }
            if (b->bytes()) std::memcpy(contents(*b), got.data(), b->bytes());
        };
        auto expect_bits = [&](Buffer *b, const char *what, auto &&want_at) {
            return [=](uint64_t j, const uint8_t *got) {  // want_at by value: it outlives this call
                const gpuprim_dtype_t bd = gpuprim_dtype_t(b->dtype);
                const uint64_t want = want_at(j) & tc_mask(bd), have = tc_get(bd, got, 0);
                if (have != want)
                    violation("%s (dtype %d, %llu elements): %s[%llu] = 0x%llx, expected 0x%llx", name, kb->dtype,
                              (unsigned long long)n, what, (unsigned long long)j, (unsigned long long)have,
                              (unsigned long long)want);
            };
        };
        check_output(ob, keys_out, "keys_out", groups, expect_bits(ob, "keys_out", [&](uint64_t g) {
                         return tc_get(kd, key_copy.data(), order[first[g]]);
                     }));
        check_output(lb, lengths, group_by ? "counts" : "lengths", groups,
                     expect_bits(lb, "lengths", [&](uint64_t g) { return length[g]; }));
        check_output(ib, inverse, "inverse", n, expect_bits(ib, "inverse", [&](uint64_t i) { return group_of[i]; }));
        check_output(cb, count_out, "count_out", 1, expect_bits(cb, "count_out", [&](uint64_t) { return groups; }));
        if (rb) {
            const size_t width = size_of(vb->dtype);
            check_output(rb, results, "results", groups, [&](uint64_t g, const uint8_t *got) {
                std::vector<uint8_t> group(length[g] * width + 8);
                for (uint64_t j = 0; j < length[g]; ++j)
                    std::memcpy(group.data() + j * width, value_copy.data() + order[first[g] + j] * width, width);
                check_reduce_span(op, vb->dtype, group.data(), length[g], got, name);
            });
        }
    }

    // Writes a checked float-sum or exact result for element 0 of `out`.
    void op_reduce_to_buffer(Input &in) {
        ContextArg context = draw_context(in);
        int op = draw_enum(in, 3);
        gpuprim_buffer_t input = draw_buffer(in, context.slot);
        gpuprim_buffer_t result = draw_buffer(in, context.slot);
        Buffer *b = nullptr, *r = nullptr;
        Expect expect;
        if (context.slot < 0) {
            expect.must = context.error;
        } else {
            if (!in_range(op, 3)) expect.must |= kEnum;
            expect.must |= resolve(context.slot, input, &b);
            expect.must |= resolve(context.slot, result, &r);
            if (b && r) expect.must |= result_buffer_errors(*r, *b);
        }
        gpuprim_status_t status = shim_reduce_to_buffer(context.handle, op, input, result);
        check_status("gpuprim_reduce_to_buffer", kDocReduceToBuffer, expect, status, &context);
        if (status != GPUPRIM_SUCCESS) return;
        adopt_element0(*r, context.handle, [&](const uint8_t *got) {
            check_reduce(op, *b, got, "reduce_to_buffer");
        });
    }

    // result: same dtype, at least one element, element 0 not inside input.
    static Codes result_buffer_errors(const Buffer &result, const Buffer &input) {
        Codes errors = 0;
        if (result.dtype != input.dtype) errors |= kDtype;
        if (result.count == 0) {
            errors |= kSize;
        } else {
            Span first = span(result);
            first.end = first.begin + size_of(result.dtype);
            if (overlap(first, span(input))) errors |= kArg;
        }
        return errors;
    }

    // Downloads element 0 of `out`, has `check` judge it, and makes it the model.
    template <typename Check>
    void adopt_element0(Buffer &out, gpuprim_context_t context, Check &&check) {
        size_t size = size_of(out.dtype);
        uint8_t got[8];
        if (gpuprim_buffer_download(context, out.handle, 0, got, 1) != GPUPRIM_SUCCESS)
            violation("download of a result element failed");
        check(got);
        std::memcpy(contents(out), got, size);
    }

    void op_dot(Input &in) {
        ContextArg context = draw_context(in);
        gpuprim_buffer_t a = draw_buffer(in, context.slot);
        gpuprim_buffer_t b = in.u8() < 32 ? a : draw_buffer(in, context.slot);
        bool null_result = in.u8() == 255;
        Buffer *ba = nullptr, *bb = nullptr;
        Expect expect;
        if (context.slot < 0) {
            expect.must = context.error;
        } else {
            expect.must |= resolve(context.slot, a, &ba);
            expect.must |= resolve(context.slot, b, &bb);
            if (ba && bb) {
                if (ba->dtype != bb->dtype) expect.must |= kDtype;
                if (ba->count != bb->count) expect.must |= kSize;
            }
            if (null_result) expect.must |= kNull;
        }
        size_t size = ba ? size_of(ba->dtype) : 8;
        std::unique_ptr<uint8_t[]> result(new uint8_t[size]);
        std::memset(result.get(), 0x5A, size);
        gpuprim_status_t status =
            gpuprim_dot(context.handle, a, b, null_result ? nullptr : result.get());
        check_status("gpuprim_dot", kDocDot, expect, status, &context);
        if (status != GPUPRIM_SUCCESS) {
            for (size_t i = 0; i < size; ++i)
                if (result[i] != 0x5A) violation("failed dot wrote its result");
            return;
        }
        check_dot(*ba, *bb, result.get(), "dot");
        std::unique_ptr<uint8_t[]> again(new uint8_t[size]);
        if (gpuprim_dot(context.handle, a, b, again.get()) != GPUPRIM_SUCCESS ||
            std::memcmp(result.get(), again.get(), size) != 0)
            violation("dot is not repeatable bit for bit");
    }

    void op_dot_to_buffer(Input &in) {
        ContextArg context = draw_context(in);
        gpuprim_buffer_t a = draw_buffer(in, context.slot);
        gpuprim_buffer_t b = in.u8() < 32 ? a : draw_buffer(in, context.slot);
        gpuprim_buffer_t result = draw_buffer(in, context.slot);
        Buffer *ba = nullptr, *bb = nullptr, *r = nullptr;
        Expect expect;
        if (context.slot < 0) {
            expect.must = context.error;
        } else {
            expect.must |= resolve(context.slot, a, &ba);
            expect.must |= resolve(context.slot, b, &bb);
            expect.must |= resolve(context.slot, result, &r);
            if (ba && bb) {
                if (ba->dtype != bb->dtype) expect.must |= kDtype;
                if (ba->count != bb->count) expect.must |= kSize;
            }
            if (r && ba) expect.must |= result_buffer_errors(*r, *ba);
            if (r && bb) expect.must |= result_buffer_errors(*r, *bb);
        }
        gpuprim_status_t status = gpuprim_dot_to_buffer(context.handle, a, b, result);
        check_status("gpuprim_dot_to_buffer", kDocDot, expect, status, &context);
        if (status != GPUPRIM_SUCCESS) return;
        adopt_element0(*r, context.handle,
                       [&](const uint8_t *got) { check_dot(*ba, *bb, got, "dot_to_buffer"); });
    }

    // The errors a scan's (or segmented scan's) enums and operands call for:
    // op and kind in range, input and output of one dtype and count, the
    // output the input itself or apart from it.
    Codes scan_operand_errors(int slot, int op, int kind, gpuprim_buffer_t input, gpuprim_buffer_t output,
                                 Buffer **bi, Buffer **bo) {
        Codes errors = 0;
        if (!in_range(op, 3)) errors |= kEnum;
        if (!in_range(kind, 2)) errors |= kEnum;
        return errors | in_place_operand_errors(slot, input, output, bi, bo);
    }

    // The errors of an input and an output of one dtype and count, the
    // output the input itself or apart from it (scans, adjacent differences).
    Codes in_place_operand_errors(int slot, gpuprim_buffer_t input, gpuprim_buffer_t output, Buffer **bi,
                                  Buffer **bo) {
        Codes errors = resolve(slot, input, bi);
        errors |= resolve(slot, output, bo);
        if (*bi && *bo) {
            if ((*bi)->dtype != (*bo)->dtype) errors |= kDtype;
            if ((*bi)->count != (*bo)->count) errors |= kSize;
            if (forbidden_alias(**bi, **bo, true)) errors |= kArg;
        }
        return errors;
    }

    void op_scan(Input &in) {
        ContextArg context = draw_context(in);
        int op = draw_enum(in, 3);
        int kind = draw_enum(in, 2);
        gpuprim_buffer_t input = draw_buffer(in, context.slot);
        gpuprim_buffer_t output = in.u8() < 64 ? input : draw_buffer(in, context.slot);
        Buffer *bi = nullptr, *bo = nullptr;
        Expect expect;
        if (context.slot < 0) {
            expect.must = context.error;
        } else {
            expect.must |= scan_operand_errors(context.slot, op, kind, input, output, &bi, &bo);
        }
        // The reference reads the input as it was before the call.
        std::vector<uint8_t> before;
        if (bi) before.assign(contents(*bi), contents(*bi) + bi->bytes());
        gpuprim_status_t status = shim_scan(context.handle, op, kind, input, output);
        check_status("gpuprim_scan", kDocScan, expect, status, &context);
        if (status != GPUPRIM_SUCCESS) return;
        scan_reference(op, kind == GPUPRIM_SCAN_EXCLUSIVE, bi->dtype, before, whole(bi->count), context.handle,
                       output, *bo);
    }

    // gpuprim_adjacent_difference: the output the input itself (in place:
    // the same handle, or another on the same memory) or apart from it, of
    // one dtype and count; the model takes the header's differences
    // (test_common.h tc_reference_adjacent_difference) of the input as it
    // was.
    void op_adjacent_difference(Input &in) {
        ContextArg context = draw_context(in);
        gpuprim_buffer_t input = draw_buffer(in, context.slot);
        gpuprim_buffer_t output = in.u8() < 64 ? input : draw_buffer(in, context.slot);
        Buffer *bi = nullptr, *bo = nullptr;
        Expect expect;
        if (context.slot < 0) expect.must = context.error;
        else expect.must |= in_place_operand_errors(context.slot, input, output, &bi, &bo);
        std::vector<uint8_t> before;
        if (bi) before.assign(contents(*bi), contents(*bi) + bi->bytes());
        gpuprim_status_t status = gpuprim_adjacent_difference(context.handle, input, output);
        check_status("gpuprim_adjacent_difference", kDocAdjacentDifference, expect, status, &context);
        if (status != GPUPRIM_SUCCESS) return;
        tc_reference_adjacent_difference(gpuprim_dtype_t(bi->dtype), before.data(), bi->count, contents(*bo));
    }

    // Checks (float sums) or computes the scan of each span of `before` and
    // makes it the model of `out` (elements outside the spans keep theirs).
    void scan_reference(int op, bool exclusive, int dtype, const std::vector<uint8_t> &before,
                        const std::vector<std::pair<uint64_t, uint64_t>> &spans, gpuprim_context_t context,
                        gpuprim_buffer_t output, Buffer &bo) {
        with_type(dtype, [&](auto zero) {
            using T = decltype(zero);
            const uint64_t total = bo.count;
            std::vector<uint8_t> got;
            if (op == GPUPRIM_OP_SUM && kIsFloat<T>) {
                got.resize(total * sizeof(T));
                if (total && gpuprim_buffer_download(context, output, 0, got.data(), total) != GPUPRIM_SUCCESS)
                    violation("download after scan failed");
            }
            for (const auto &span_of : spans) {
                const uint64_t first = span_of.first, n = span_of.second;
                std::vector<T> values(n);
                for (uint64_t i = 0; i < n; ++i) values[i] = load<T>(before.data() + (first + i) * sizeof(T));
                std::vector<uint8_t> expected(n * sizeof(T));
                if (op == GPUPRIM_OP_SUM && kIsFloat<T>) {
                    // Float sums: judge the library's output, then adopt it.
                    FloatSum running;
                    for (uint64_t i = 0; i < n; ++i) {
                        if (!exclusive) running.add(value_of(values[i]));
                        running.check(load<T>(got.data() + (first + i) * sizeof(T)), "scan", first + i);
                        if (exclusive) running.add(value_of(values[i]));
                    }
                    if (n) std::memcpy(expected.data(), got.data() + first * sizeof(T), n * sizeof(T));
                } else {  // integer sums wrap; MIN/MAX as the header orders (tc_apply)
                    const gpuprim_dtype_t d = gpuprim_dtype_t(dtype);
                    uint64_t running = tc_identity(gpuprim_op_t(op), d);
                    for (uint64_t i = 0; i < n; ++i) {
                        const uint64_t next = tc_apply(gpuprim_op_t(op), d, running, uint64_t(bits_of(values[i])));
                        tc_set(d, expected.data(), i, exclusive ? running : next);
                        running = next;
                    }
                }
                if (n) std::memcpy(contents(bo) + first * sizeof(T), expected.data(), expected.size());
            }
        });
    }

    // gpuprim_sort (with_options false) or gpuprim_sort_with_options: options
    // NULL, valid, or with a bad order, bit range or struct_size.
    enum SortCall { kSortCall = 0, kSortWithOptionsCall, kArgsortCall, kSegmentedSortCall, kSegmentedArgsortCall };
    void op_sort(Input &in) { sort_call(in, kSortCall); }
    void op_sort_with_options(Input &in) { sort_call(in, kSortWithOptionsCall); }

    // ----- segments ---------------------------------------------------------
    // A segments argument: NULL, uniform rows (mostly covering the data),
    // offsets in a buffer of the model (anything), or a fresh offsets buffer
    // made for the call (mostly valid, sometimes with one bad offset), with
    // struct_size mostly right.
    struct SegmentsArg {
        struct alignas(8) {
            gpuprim_segments_t segments;
            unsigned char newer[64];
        } storage;
        bool null = false;
        bool bad_struct = false;
        gpuprim_buffer_t temp = nullptr;  // a fresh offsets buffer, destroyed after the call
        int temp_dtype = 0;
        std::vector<uint64_t> temp_values;  // as the buffer holds them (bits, zero-extended)
        int temp_context = -1;
        // max_segment_length as the library reads it (0 for a 0.3.0 struct)
        uint64_t promise = 0;
        // Set by segments_errors: the offsets are bad or a segment is longer
        // than the promise, the faults the offsets check finds (WAIT:
        // INVALID_ARGUMENT; DEFERRED: success, nothing written, reported
        // later). Added to the codes by offsets_fault_errors.
        mutable bool offsets_fault = false;
        mutable bool deferred_now = false;  // the call is expected to defer it
        const gpuprim_segments_t *pointer() const { return null ? nullptr : &storage.segments; }
    };

    static bool is_index_dtype(int dtype) {
        return dtype == GPUPRIM_DTYPE_I32 || dtype == GPUPRIM_DTYPE_U32 || dtype == GPUPRIM_DTYPE_I64 ||
               dtype == GPUPRIM_DTYPE_U64;
    }
    // The largest value an index dtype holds.
    static uint64_t largest_index(int dtype) {
        switch (dtype) {
        case GPUPRIM_DTYPE_I32: return uint64_t(INT32_MAX);
        case GPUPRIM_DTYPE_U32: return uint64_t(UINT32_MAX);
        case GPUPRIM_DTYPE_I64: return uint64_t(INT64_MAX);
        default: return UINT64_MAX;
        }
    }
    // An offset as the rules read it: signed dtypes sign-extended, U64 past
    // INT64_MAX as negative.
    static int64_t offset_value(int dtype, uint64_t bits) {
        switch (dtype) {
        case GPUPRIM_DTYPE_I32: return static_cast<int32_t>(static_cast<uint32_t>(bits));
        case GPUPRIM_DTYPE_U32: return static_cast<int64_t>(static_cast<uint32_t>(bits));
        default: return static_cast<int64_t>(bits);
        }
    }

    void draw_segments(Input &in, int slot, uint64_t data_count, SegmentsArg &arg) {
        std::memset(&arg.storage, 0, sizeof arg.storage);
        gpuprim_segments_t &seg = arg.storage.segments;
        const uint8_t mode = in.u8();
        if (mode == 255) {
            arg.null = true;
            return;
        }
        if (mode % 3 == 0) {  // rows
            uint64_t length = in.u8() % 9, rows;
            if (length) rows = data_count / length;
            else rows = data_count == 0 ? in.u8() % 4 : 1;
            const uint8_t twist = in.u8();
            if (twist < 16) rows += 1 + twist % 3;
            else if (twist < 20) rows = UINT64_MAX / (length ? length : 1) + 1, length = length ? length : 2;
            else if (twist < 24) length = in.u64();
            else if (twist < 26) rows = length = UINT64_MAX;  // what NULL offsets leave, but rows
            gpuprim_segments_init_rows(&seg, rows, length);
        } else if (mode % 3 == 1 && slot >= 0) {  // a fresh offsets buffer
            static const int kDtypes[4] = {GPUPRIM_DTYPE_I32, GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_I64, GPUPRIM_DTYPE_U64};
            const int dtype = kDtypes[in.u8() % 4];
            const uint64_t segments = in.u8() % 12;
            std::vector<uint64_t> values(segments + 1);
            uint64_t at = data_count ? in.u8() % (data_count + 1) : 0;
            if (in.u8() < 128) at = 0;
            for (uint64_t s = 0; s <= segments; ++s) {
                values[s] = at;
                const uint64_t left = data_count - at;
                const uint8_t step = in.u8();
                at += left == 0 ? 0 : step < 64 ? 0 : step < 200 ? step % (left + 1) % 9 : step % (left + 1);
            }
            if (in.u8() < 48 && !values.empty()) {  // one bad offset
                const uint64_t where = in.u8() % values.size();
                const uint8_t how = in.u8();
                if (how % 3 == 0) values[where] = data_count + 1 + how % 4;
                else if (how % 3 == 1) values[where] = UINT64_MAX - how % 5;  // negative (or huge)
                else if (where > 0 && values[where - 1] > 0) values[where] = values[where - 1] - 1;
            }
            const size_t size = size_of(dtype);
            std::vector<uint8_t> bytes(values.size() * size);
            for (size_t i = 0; i < values.size(); ++i) {
                const uint64_t v = size == 4 ? (values[i] & 0xFFFFFFFFu) : values[i];
                values[i] = v;
                std::memcpy(bytes.data() + i * size, &v, size);
            }
            gpuprim_buffer_t temp = nullptr;
            if (gpuprim_buffer_create(contexts_[slot].handle, static_cast<gpuprim_dtype_t>(dtype), values.size(),
                                      &temp) != GPUPRIM_SUCCESS ||
                gpuprim_buffer_upload(contexts_[slot].handle, temp, 0, bytes.data(), values.size()) !=
                    GPUPRIM_SUCCESS)
                violation("cannot make an offsets buffer");
            arg.temp = temp;
            arg.temp_dtype = dtype;
            arg.temp_values = values;
            arg.temp_context = slot;
            gpuprim_segments_init_offsets(&seg, temp);
        } else {  // offsets: any buffer argument
            gpuprim_buffer_t offsets = draw_buffer(in, slot);
            gpuprim_segments_init_offsets(&seg, offsets);
            if (!offsets) gpuprim_segments_init_rows(&seg, in.u8() % 3, in.u8() % 3);
        }
        const uint8_t size_mode = in.u8();
        // max_segment_length (offsets; rows ignore it), from the same byte:
        // mostly none, else small, around the data's count, or huge.
        if (seg.offsets) {
            switch (size_mode >> 5) {
            case 4: seg.max_segment_length = 1 + (size_mode & 3); break;
            case 5: seg.max_segment_length = 5 + (size_mode & 7); break;
            case 6: seg.max_segment_length = data_count / 2 + (size_mode & 3); break;
            case 7: seg.max_segment_length = UINT64_MAX - (size_mode & 7); break;
            default: break;
            }
        }
        arg.promise = seg.max_segment_length;
        if (size_mode < 8) {
            switch (size_mode % 4) {
            case 0: seg.struct_size = 0; break;
            // 32: 0.3.0's struct, before max_segment_length (accepted, the
            // field not read); 36: between two releases' sizes (refused)
            case 1: seg.struct_size = size_mode & 4 ? 36 : 32; break;
            case 2: seg.struct_size = sizeof seg + 8; break;  // zero tail: accepted
            default:
                seg.struct_size = sizeof seg + 16;
                arg.storage.newer[3] = 1;
                break;
            }
            arg.bad_struct = (seg.struct_size < sizeof seg && seg.struct_size != 32) || size_mode % 4 == 3;
            if (seg.struct_size == 32) {
                arg.promise = 0;
                seg.max_segment_length = 1 + (size_mode & 7); /* past the struct: not read */
            }
        }
    }

    void release_segments(SegmentsArg &arg) {
        if (arg.temp && gpuprim_buffer_destroy(contexts_[arg.temp_context].handle, arg.temp) != GPUPRIM_SUCCESS)
            violation("cannot destroy an offsets buffer");
        arg.temp = nullptr;
    }

    // The errors of a segments argument over data_count elements with
    // `outputs` (buffers the call writes; offsets must not overlap them);
    // on none, *spans gets the segments. segments_count: the number of
    // segments (for an output of one element per segment), empty when it is
    // not known (every count is a real one: no sentinel value).
    Codes segments_errors(int slot, const SegmentsArg &arg, uint64_t data_count,
                          std::initializer_list<const Buffer *> outputs,
                          std::vector<std::pair<uint64_t, uint64_t>> *spans,
                          std::optional<uint64_t> *segments_count) {
        spans->clear();
        segments_count->reset();
        if (arg.null) return kNull;
        Codes errors = arg.bad_struct ? kArg : 0;
        const gpuprim_segments_t &seg = arg.storage.segments;
        if (!seg.offsets) {
            const uint64_t rows = seg.row_count, length = seg.row_length;
            // What gpuprim_segments_init_offsets(&s, NULL) leaves: NULL offsets, named.
            // (init_rows(UINT64_MAX, UINT64_MAX) leaves max_segment_length 0: rows that overflow.)
            if (rows == UINT64_MAX && length == UINT64_MAX && seg.max_segment_length == UINT64_MAX)
                return errors | kNull;
            if (length != 0 && rows > UINT64_MAX / length) return errors | kSize;
            if (rows * length != data_count) return errors | kSize;
            *segments_count = rows;
            if (rows <= (uint64_t(1) << 20))
                for (uint64_t r = 0; r < rows; ++r) spans->push_back({r * length, length});
            return errors;
        }
        std::vector<uint64_t> values;
        int dtype;
        if (arg.temp) {
            dtype = arg.temp_dtype;
            values = arg.temp_values;
        } else {
            Buffer *ob = nullptr;
            Codes resolved = resolve(slot, seg.offsets, &ob);
            if (resolved) return errors | resolved;
            dtype = ob->dtype;
            if (!is_index_dtype(dtype)) return errors | kDtype;
            if (ob->count == 0) return errors | kSize;
            for (const Buffer *out : outputs)
                if (out && forbidden_alias(*ob, *out, false)) errors |= kArg;
            const size_t size = size_of(dtype);
            for (uint64_t i = 0; i < ob->count; ++i) {
                uint64_t v = 0;
                std::memcpy(&v, contents(*ob) + i * size, size);
                values.push_back(v);
            }
        }
        *segments_count = values.size() - 1;
        // Offsets compare in their own type: a U64 offset of 2^63 or more is
        // past the end (or a real position of a buffer that long), not negative.
        const bool offsets_signed = dtype == GPUPRIM_DTYPE_I32 || dtype == GPUPRIM_DTYPE_I64;
        uint64_t previous = 0;
        bool bad = false;
        for (size_t i = 0; i < values.size(); ++i) {
            const int64_t v = offset_value(dtype, values[i]);
            const uint64_t position = static_cast<uint64_t>(v);
            if ((offsets_signed && v < 0) || position > data_count || (i > 0 && position < previous)) bad = true;
            previous = position;
        }
        if (bad) {
            arg.offsets_fault = true;
            return errors;
        }
        for (size_t i = 0; i + 1 < values.size(); ++i) {
            spans->push_back({values[i], values[i + 1] - values[i]});
            if (arg.promise != 0 && values[i + 1] - values[i] > arg.promise) arg.offsets_fault = true;
        }
        if (arg.offsets_fault) spans->clear();
        return errors;
    }

    // The offsets check's fault (segments_errors), once the call's other
    // errors are known: WAIT, INVALID_ARGUMENT; DEFERRED, and no other error,
    // success with nothing written (deferred_now) and the fault kept.
    void offsets_fault_errors(const ContextArg &context, const SegmentsArg &arg, Expect &expect) {
        if (!arg.offsets_fault || context.slot < 0) return;
        if (contexts_[context.slot].deferred && expect.must == 0) arg.deferred_now = true;
        else if (!contexts_[context.slot].deferred) expect.must |= kArg;
    }

    // check_deferred or synchronize on a live context: a kept failure is
    // reported (with the deferred report's words) and forgotten.
    void deferred_reported(const ContextArg &context, gpuprim_status_t status) {
        ContextSlot &slot = contexts_[context.slot];
        if (slot.pending && status == GPUPRIM_ERROR_INVALID_ARGUMENT) {
            const char *message = gpuprim_context_last_error(context.handle);
            if (!message || !std::strstr(message, "on CSR offsets on this context, its offsets check deferred"))
                violation("a deferred offsets check's report reads '%s'", message ? message : "(null)");
        }
        slot.pending = false;
    }

    // After the call: a deferred fault is kept on the context.
    bool deferred_fault_kept(const ContextArg &context, const SegmentsArg &arg, gpuprim_status_t status) {
        if (!arg.deferred_now || status != GPUPRIM_SUCCESS) return false;
        contexts_[context.slot].pending = true;
        return true;
    }

    // The segments of a layout, or the whole data as one segment (flat calls).
    static std::vector<std::pair<uint64_t, uint64_t>> whole(uint64_t n) { return {{0, n}}; }

    void op_segmented_reduce(Input &in) {
        ContextArg context = draw_context(in);
        int op = draw_enum(in, 3);
        gpuprim_buffer_t input = draw_buffer(in, context.slot);
        gpuprim_buffer_t output = draw_buffer(in, context.slot);
        Buffer *bi = nullptr, *bo = nullptr;
        if (context.slot >= 0) {
            resolve(context.slot, input, &bi);
            resolve(context.slot, output, &bo);
        }
        SegmentsArg seg;
        draw_segments(in, context.slot, bi ? bi->count : 0, seg);
        std::vector<std::pair<uint64_t, uint64_t>> spans;
        Expect expect;
        if (context.slot < 0) {
            expect.must = context.error;
        } else {
            if (!in_range(op, 3)) expect.must |= kEnum;
            expect.must |= resolve(context.slot, input, &bi);
            expect.must |= resolve(context.slot, output, &bo);
            if (bi && bo && bi->dtype != bo->dtype) expect.must |= kDtype;
            if (bi) {
                std::optional<uint64_t> segments;
                Codes seg_errors = segments_errors(context.slot, seg, bi->count, {bo}, &spans, &segments);
                expect.must |= seg_errors;
                if (bo && segments && bo->count != *segments) expect.must |= kSize;
                if (bo && forbidden_alias(*bi, *bo, false)) expect.must |= kArg;
            }
        }
        offsets_fault_errors(context, seg, expect);
        gpuprim_status_t status = shim_segmented_reduce(context.handle, op, seg.pointer(), input, output);
        release_segments(seg);
        check_status("gpuprim_segmented_reduce", kDocSegmented, expect, status, &context);
        if (status != GPUPRIM_SUCCESS || deferred_fault_kept(context, seg, status)) return;
        const size_t size = size_of(bi->dtype);
        std::vector<uint8_t> got(bo->count * size);
        if (bo->count && gpuprim_buffer_download(context.handle, output, 0, got.data(), bo->count) != GPUPRIM_SUCCESS)
            violation("download after segmented reduce failed");
        for (size_t s = 0; s < spans.size(); ++s)
            check_reduce_span(op, bi->dtype, contents(*bi) + spans[s].first * size, spans[s].second,
                              got.data() + s * size, "segmented reduce");
        if (bo->count) std::memcpy(contents(*bo), got.data(), got.size());
    }

    void op_segmented_scan(Input &in) {
        ContextArg context = draw_context(in);
        int op = draw_enum(in, 3);
        int kind = draw_enum(in, 2);
        gpuprim_buffer_t input = draw_buffer(in, context.slot);
        gpuprim_buffer_t output = in.u8() < 64 ? input : draw_buffer(in, context.slot);
        Buffer *bi = nullptr, *bo = nullptr;
        if (context.slot >= 0) resolve(context.slot, input, &bi);
        SegmentsArg seg;
        draw_segments(in, context.slot, bi ? bi->count : 0, seg);
        std::vector<std::pair<uint64_t, uint64_t>> spans;
        Expect expect;
        if (context.slot < 0) {
            expect.must = context.error;
        } else {
            expect.must |= scan_operand_errors(context.slot, op, kind, input, output, &bi, &bo);
            if (bi) {
                std::optional<uint64_t> segments;
                expect.must |= segments_errors(context.slot, seg, bi->count, {bo}, &spans, &segments);
            }
        }
        std::vector<uint8_t> before;
        if (bi) before.assign(contents(*bi), contents(*bi) + bi->bytes());
        offsets_fault_errors(context, seg, expect);
        gpuprim_status_t status = shim_segmented_scan(context.handle, op, kind, seg.pointer(), input, output);
        release_segments(seg);
        check_status("gpuprim_segmented_scan", kDocSegmented, expect, status, &context);
        if (status != GPUPRIM_SUCCESS || deferred_fault_kept(context, seg, status)) return;
        scan_reference(op, kind == GPUPRIM_SCAN_EXCLUSIVE, bi->dtype, before, spans, context.handle, output, *bo);
    }

    // Bit range draws: mostly small (0..69, past every key width), sometimes extreme.
    static uint32_t draw_bit(Input &in) {
        uint8_t mode = in.u8();
        if (mode < 200) return in.u8() % 70;
        static const uint32_t kEdges[] = {0, 1, 8, 16, 32, 64, 65, 128, 0x80000000u, UINT32_MAX};
        return kEdges[mode % (sizeof kEdges / sizeof kEdges[0])];
    }

    void sort_call(Input &in, SortCall call) {
        const bool with_options = call != kSortCall;
        const bool argsort = call == kArgsortCall || call == kSegmentedArgsortCall;
        const bool segmented = call == kSegmentedSortCall || call == kSegmentedArgsortCall;
        ContextArg context = draw_context(in);
        int order = draw_enum(in, 2);
        // Options: room for a newer header's larger struct, up to 4096 bytes.
        struct alignas(8) {
            gpuprim_sort_options_t options;
            unsigned char newer[4096];
        } storage;
        std::memset(&storage, 0, sizeof storage);
        gpuprim_sort_options_t &options = storage.options;
        gpuprim_sort_options_init(&options);
        bool null_options = false, bad_struct = false, want_range = false;
        uint8_t range_mode = 0;
        uint32_t begin_bit = 0, end_bit = 0;
        if (with_options) {
            uint8_t mode = in.u8();
            null_options = mode % 8 == 0;
            options.order = order;
            want_range = mode % 8 >= 3;
            range_mode = in.u8();
            switch ((mode >> 3) % 32) {  // mostly the right struct_size
            case 1: options.struct_size = 0; break;
            case 2: options.struct_size = sizeof options - 1 - in.u8() % (sizeof options - 1); break;
            case 3: options.struct_size = sizeof options + 1 + in.u16() % (4096 - sizeof options); break;
            case 4:
                options.struct_size = sizeof options + 1 + in.u16() % (4096 - sizeof options);
                storage.newer[in.u16() % (options.struct_size - sizeof options)] = in.u8() | 1;
                break;
            case 5: options.struct_size = 4096; break;
            case 6: options.struct_size = 4097; break;
            case 7: options.struct_size = UINT64_MAX; break;
            case 8: options.reserved = in.u8() | 1; break;  // room for a later option: must be 0
            default: break;
            }
            if (null_options) {
                order = GPUPRIM_ORDER_ASCENDING;
            } else {
                bool tail_set = false;
                for (size_t i = 0; i < sizeof storage.newer; ++i) tail_set |= storage.newer[i] != 0;
                bad_struct = options.struct_size < sizeof options || options.struct_size > 4096 || tail_set ||
                             options.reserved != 0;
            }
        }
        uint8_t shape = in.u8();
        gpuprim_buffer_t keys_in = draw_buffer(in, context.slot);
        gpuprim_buffer_t keys_out = shape % 4 == 0 ? draw_buffer(in, context.slot) : keys_in;
        gpuprim_buffer_t values_in = nullptr, values_out = nullptr;
        if (argsort) {  // keys_out NULL, keys_in or any; values_out: the indices
            if (shape % 4 == 1) keys_out = nullptr;
            values_out = draw_buffer(in, context.slot);
        } else if (shape % 3 != 0) {  // with values
            values_in = draw_buffer(in, context.slot);
            values_out = shape % 5 == 0 ? draw_buffer(in, context.slot) : values_in;
            if (shape == 7) values_out = nullptr;  // only one of the pair
            if (shape == 11) values_in = nullptr;
        }
        Buffer *ki = nullptr, *ko = nullptr, *vi = nullptr, *vo = nullptr;
        if (want_range) {
            // Mostly a range inside the keys' width (when keys_in is a live
            // buffer of this context), else anything.
            Buffer *keys = nullptr;
            if (context.slot >= 0) resolve(context.slot, keys_in, &keys);
            const uint32_t width = keys ? uint32_t(8 * size_of(keys->dtype)) : 32;
            if (range_mode < 200) {
                begin_bit = in.u8() % width;
                end_bit = begin_bit + 1 + in.u8() % (width - begin_bit);
                if (range_mode % 8 == 0 && begin_bit) end_bit = 0;  // 0: the whole width
            } else {
                begin_bit = draw_bit(in);
                end_bit = draw_bit(in);
            }
            options.begin_bit = begin_bit;
            options.end_bit = end_bit;
        }
        if (null_options) begin_bit = end_bit = 0;
        SegmentsArg seg;
        if (segmented) {
            Buffer *keys = nullptr;
            if (context.slot >= 0) resolve(context.slot, keys_in, &keys);
            draw_segments(in, context.slot, keys ? keys->count : 0, seg);
        }
        std::vector<std::pair<uint64_t, uint64_t>> spans;
        Expect expect;
        if (context.slot < 0) {
            expect.must = context.error;
        } else {
            if (bad_struct) expect.must |= kArg;
            if (!in_range(order, 2)) expect.must |= kEnum;
            expect.must |= resolve(context.slot, keys_in, &ki);
            if (ki) {
                // the bit range: begin < end <= the key's bits (end 0: the bits)
                const uint32_t key_bits = uint32_t(8 * size_of(ki->dtype));
                const uint32_t end = end_bit == 0 ? key_bits : end_bit;
                if (begin_bit >= end || end > key_bits) expect.must |= kArg;
            }
            if (!argsort || keys_out) expect.must |= resolve(context.slot, keys_out, &ko);
            if (ki && ko) {
                if (ki->dtype != ko->dtype) expect.must |= kDtype;
                if (ki->count != ko->count) expect.must |= kSize;
                if (forbidden_alias(*ki, *ko, true)) expect.must |= kArg;
            }
            if (argsort) {
                expect.must |= resolve(context.slot, values_out, &vo);
                if (vo) {
                    if (!is_index_dtype(vo->dtype)) expect.must |= kDtype;
                    if (ki && vo->count != ki->count) expect.must |= kSize;
                    if (ki && forbidden_alias(*ki, *vo, false)) expect.must |= kArg;
                    if (ko && forbidden_alias(*ko, *vo, false)) expect.must |= kArg;
                }
            } else if ((values_in == nullptr) != (values_out == nullptr)) {
                expect.must |= kArg;
            } else if (values_in) {
                expect.must |= resolve(context.slot, values_in, &vi);
                expect.must |= resolve(context.slot, values_out, &vo);
                if (vi && vo) {
                    if (vi->dtype != vo->dtype) expect.must |= kDtype;
                    if (forbidden_alias(*vi, *vo, true)) expect.must |= kArg;
                }
                for (Buffer *v : {vi, vo}) {
                    if (!v) continue;
                    if (ki && v->count != ki->count) expect.must |= kSize;
                    if (ki && forbidden_alias(*ki, *v, false)) expect.must |= kArg;
                    if (ko && forbidden_alias(*ko, *v, false)) expect.must |= kArg;
                }
            }
        }
        if (segmented && context.slot >= 0 && ki) {
            std::optional<uint64_t> segments;
            expect.must |= segments_errors(context.slot, seg, ki->count, {ko, vo}, &spans, &segments);
        } else if (segmented && context.slot >= 0 && seg.null) {
            expect.must |= kNull;
        }
        if (ki && !segmented) spans = whole(ki->count);
        if (segmented) offsets_fault_errors(context, seg, expect);
        std::vector<uint8_t> keys_before, values_before;
        if (ki) keys_before.assign(contents(*ki), contents(*ki) + ki->bytes());
        if (vi) values_before.assign(contents(*vi), contents(*vi) + vi->bytes());
        const gpuprim_sort_options_t *options_arg = null_options ? nullptr : &options;
        gpuprim_status_t status;
        const char *name;
        Codes documented;
        switch (call) {
        case kSortCall:
            status = shim_sort(context.handle, keys_in, values_in, keys_out, values_out, order);
            name = "gpuprim_sort", documented = kDocSort;
            break;
        case kSortWithOptionsCall:
            status = gpuprim_sort_with_options(context.handle, keys_in, values_in, keys_out, values_out, options_arg);
            name = "gpuprim_sort_with_options", documented = kDocSortWithOptions;
            break;
        case kArgsortCall:
            status = gpuprim_argsort(context.handle, keys_in, keys_out, values_out, options_arg);
            name = "gpuprim_argsort", documented = kDocArgsort;
            break;
        case kSegmentedSortCall:
            status = gpuprim_segmented_sort(context.handle, seg.pointer(), keys_in, values_in, keys_out, values_out,
                                            options_arg);
            name = "gpuprim_segmented_sort", documented = kDocSegmented;
            break;
        default:
            status = gpuprim_segmented_argsort(context.handle, seg.pointer(), keys_in, keys_out, values_out,
                                               options_arg);
            name = "gpuprim_segmented_argsort", documented = kDocSegmented;
            break;
        }
        release_segments(seg);
        check_status(name, documented, expect, status, &context);
        if (status != GPUPRIM_SUCCESS || deferred_fault_kept(context, seg, status)) return;

        size_t value_size = vi ? size_of(vi->dtype) : vo ? size_of(vo->dtype) : 0;
        with_type(ki->dtype, [&](auto zero) {
            using T = decltype(zero);
          for (const auto &span_of : spans) {
            const uint64_t first = span_of.first, n = span_of.second;
            std::vector<uint64_t> permutation(n);
            bool descending = order == GPUPRIM_ORDER_DESCENDING;
            const uint32_t key_bits = uint32_t(8 * sizeof(T));
            const uint32_t end = end_bit == 0 ? key_bits : end_bit;
            // the stable order by bits [begin, end) of the documented order key (descending: its complement)
            tc_reference_sort_permutation_bits(gpuprim_dtype_t(ki->dtype), keys_before.data() + first * sizeof(T), n,
                                               descending, begin_bit, end, permutation.data());
            for (uint64_t i = 0; i < n; ++i) {
                if (ko)
                    std::memcpy(contents(*ko) + (first + i) * sizeof(T),
                                keys_before.data() + (first + permutation[i]) * sizeof(T), sizeof(T));
                if (vo && argsort)  // the index within the segment, in the indices' width
                    std::memcpy(contents(*vo) + (first + i) * value_size, &permutation[i], value_size);
                else if (vo)
                    std::memcpy(contents(*vo) + (first + i) * value_size,
                                values_before.data() + (first + permutation[i]) * value_size, value_size);
            }
          }
        });
    }

    // gpuprim_topk (flat) or gpuprim_segmented_topk: the first min(k, length)
    // of each segment's stable order (the documented order, ties by
    // position), keys to slots [s * k, s * k + m) of keys_out, positions
    // within the segment to the same slots of indices; nothing else written.
    void op_topk(Input &in) {
        ContextArg context = draw_context(in);
        const uint8_t mode = in.u8();
        const bool segmented = mode & 1;
        int order = draw_enum(in, 2);
        const uint8_t k_mode = in.u8(), k_small = in.u8();
        const uint8_t shape = in.u8();
        gpuprim_buffer_t keys_in = draw_buffer(in, context.slot);
        gpuprim_buffer_t keys_out = shape % 4 != 1 ? draw_buffer(in, context.slot) : nullptr;
        gpuprim_buffer_t indices = shape % 4 != 0 ? draw_buffer(in, context.slot) : nullptr;
        if (shape == 255) keys_out = indices = nullptr;  // both NULL
        Buffer *ki = nullptr, *ko = nullptr, *io = nullptr;
        if (context.slot >= 0) {
            resolve(context.slot, keys_in, &ki);
            if (keys_out) resolve(context.slot, keys_out, &ko);
            if (indices) resolve(context.slot, indices, &io);
        }
        SegmentsArg seg;
        if (segmented) draw_segments(in, context.slot, ki ? ki->count : 0, seg);
        std::vector<std::pair<uint64_t, uint64_t>> spans;
        std::optional<uint64_t> segments = 1;
        Codes segment_errors = 0;
        if (segmented && context.slot >= 0 && ki)
            segment_errors = segments_errors(context.slot, seg, ki->count, {ko, io}, &spans, &segments);
        else if (ki)
            spans = whole(ki->count);
        // k: mostly what an output's count asks for (so that calls succeed),
        // else small, near the keys' count, or absurd.
        uint64_t k = k_small % 10;
        const Buffer *out = ko ? ko : io;
        if (k_mode < 110 && out) {
            if (!segmented) k = out->count;
            else if (segments && *segments > 0) k = out->count / *segments;
        } else if (k_mode < 170) {
            k = k_small % 70;
        } else if (k_mode < 230 && ki) {
            k = ki->count + (k_mode % 3) - 1;  // n - 1, n, n + 1
        } else if (k_mode >= 230) {
            static const uint64_t kEdges[] = {UINT64_MAX, uint64_t(1) << 62, uint64_t(1) << 40, uint64_t(1) << 32};
            k = kEdges[k_mode % 4];
        }
        Expect expect;
        if (context.slot < 0) {
            expect.must = context.error;
        } else {
            expect.must |= resolve(context.slot, keys_in, &ki);
            if (!in_range(order, 2)) expect.must |= kEnum;
            if (!keys_out && !indices) expect.must |= kNull;
            if (keys_out) expect.must |= resolve(context.slot, keys_out, &ko);
            if (indices) expect.must |= resolve(context.slot, indices, &io);
            // The outputs' count: k per segment (unknown when the segments
            // are bad; any value, UINT64_MAX too, is a real count).
            std::optional<uint64_t> slots;
            if (ki && !segmented) {
                if (k > ki->count) expect.must |= kArg;
                slots = k;
            }
            if (ki && segmented) {
                expect.must |= segment_errors;
                const gpuprim_segments_t &sg = seg.storage.segments;
                if (!seg.null && !sg.offsets && k > sg.row_length) expect.must |= kArg;
                if (segments) {
                    if (k != 0 && *segments > UINT64_MAX / k) expect.must |= kSize;
                    else slots = *segments * k;
                }
            }
            if (ki && ko) {
                if (ko->dtype != ki->dtype) expect.must |= kDtype;
                if (slots && ko->count != *slots) expect.must |= kSize;
                if (forbidden_alias(*ki, *ko, false)) expect.must |= kArg;
            }
            if (io) {
                if (!is_index_dtype(io->dtype)) expect.must |= kDtype;
                if (slots && io->count != *slots) expect.must |= kSize;
                if (ki && forbidden_alias(*ki, *io, false)) expect.must |= kArg;
                if (ko && forbidden_alias(*ko, *io, false)) expect.must |= kArg;
            }
        }
        if (segmented) offsets_fault_errors(context, seg, expect);
        std::vector<uint8_t> keys_before;
        if (ki) keys_before.assign(contents(*ki), contents(*ki) + ki->bytes());
        gpuprim_status_t status =
            segmented ? shim_segmented_topk(context.handle, seg.pointer(), keys_in, k, order, keys_out, indices)
                      : shim_topk(context.handle, keys_in, k, order, keys_out, indices);
        release_segments(seg);
        check_status(segmented ? "gpuprim_segmented_topk" : "gpuprim_topk", kDocTopk, expect, status, &context);
        if (status != GPUPRIM_SUCCESS || deferred_fault_kept(context, seg, status)) return;
        const size_t index_size = io ? size_of(io->dtype) : 0;
        with_type(ki->dtype, [&](auto zero) {
            using T = decltype(zero);
            const bool descending = order == GPUPRIM_ORDER_DESCENDING;
            for (size_t s = 0; s < spans.size(); ++s) {
                const uint64_t first = spans[s].first, n = spans[s].second, m = k < n ? k : n;
                std::vector<uint64_t> permutation(n);
                tc_reference_sort_permutation(gpuprim_dtype_t(ki->dtype), keys_before.data() + first * sizeof(T), n,
                                              descending, permutation.data());
                for (uint64_t j = 0; j < m; ++j) {
                    const uint64_t slot = s * k + j;
                    if (ko)
                        std::memcpy(contents(*ko) + slot * sizeof(T),
                                    keys_before.data() + (first + permutation[j]) * sizeof(T), sizeof(T));
                    if (io) std::memcpy(contents(*io) + slot * index_size, &permutation[j], index_size);
                }
            }
        });
    }

    void op_get_info(Input &in) {
        ContextArg context = draw_context(in);
        gpuprim_buffer_t handle = draw_buffer(in, context.slot);
        uint8_t outputs = in.u8();
        Buffer *b = nullptr;
        Expect expect;
        if (context.slot < 0) expect.must = context.error;
        else expect.must = resolve(context.slot, handle, &b);
        gpuprim_dtype_t dtype = static_cast<gpuprim_dtype_t>(GPUPRIM_DTYPE_F64);
        uint64_t count = 0xDEADull;
        void *data = g_fake_buffer;
        gpuprim_status_t status = gpuprim_buffer_get_info(
            context.handle, handle, outputs & 1 ? &dtype : nullptr, outputs & 2 ? &count : nullptr,
            outputs & 4 ? &data : nullptr);
        check_status("gpuprim_buffer_get_info", kDocGetInfo, expect, status, &context);
        if (status != GPUPRIM_SUCCESS) {
            if (dtype != GPUPRIM_DTYPE_F64 || count != 0xDEADull || data != g_fake_buffer)
                violation("failed get_info wrote an output");
            return;
        }
        if ((outputs & 1) && static_cast<int>(dtype) != b->dtype) violation("get_info: wrong dtype");
        if ((outputs & 2) && count != b->count) violation("get_info: wrong count");
        if ((outputs & 4) && b->count == 0 && data != nullptr)
            violation("get_info: an empty buffer has data %p", data);
        if ((outputs & 4) && b->wrapped && b->count && data != arena_.get() + b->arena_offset)
            violation("get_info: wrapped data %p is not the wrapped address", data);
    }

    void op_context_queries(Input &in) {
        ContextArg context = draw_context(in);
        uint8_t which = in.u8();
        Expect expect;
        expect.must = context.slot < 0 ? context.error : 0;
        gpuprim_status_t status;
        switch (which % 13) {
        case 0: {
            bool null_out = which & 8;
            gpuprim_backend_t backend = static_cast<gpuprim_backend_t>(GPUPRIM_BACKEND_AUTO);
            if (context.slot >= 0 && null_out) expect.must |= kNull;
            status = gpuprim_context_get_backend(context.handle, null_out ? nullptr : &backend);
            check_status("gpuprim_context_get_backend", kDocContextQuery, expect, status, &context);
            if (status == GPUPRIM_SUCCESS && backend != GPUPRIM_BACKEND_CPU)
                violation("get_backend: %d", backend);
            if (status != GPUPRIM_SUCCESS && backend != GPUPRIM_BACKEND_AUTO)
                violation("failed get_backend wrote its output");
            break;
        }
        case 1: {
            size_t capacity = in.u8() % 12;
            std::unique_ptr<char[]> name(capacity ? new char[capacity] : nullptr);
            if (capacity) std::memset(name.get(), 'x', capacity);
            int32_t ordinal = 1234;
            status = gpuprim_context_get_device(context.handle, which & 8 ? nullptr : &ordinal,
                                                name.get(), capacity);
            check_status("gpuprim_context_get_device", kDocContextQuery, expect, status, &context);
            if (status != GPUPRIM_SUCCESS) {
                if (ordinal != 1234) violation("failed get_device wrote its output");
                break;
            }
            if (!(which & 8) && ordinal != -1) violation("CPU ordinal %d", ordinal);
            if (capacity) {
                if (!std::memchr(name.get(), 0, capacity)) violation("device name not terminated");
                if (std::strncmp(name.get(), "CPU", capacity - 1) != 0)
                    violation("device name '%s'", name.get());
            }
            break;
        }
        case 2:
            // a deferred offsets check's failure comes back here (or from check_deferred)
            if (context.slot >= 0 && contexts_[context.slot].pending) expect.must |= kArg;
            status = gpuprim_context_synchronize(context.handle);
            check_status("gpuprim_context_synchronize", kDocSynchronize, expect, status, &context);
            if (context.slot >= 0) deferred_reported(context, status);
            break;
        case 9: {
            // The offsets check's mode: WAIT, DEFERRED, or not a mode (nothing changes).
            const int mode = draw_enum(in, 2);
            if (context.slot >= 0 && !in_range(mode, 2)) expect.must |= kEnum;
            status = shim_context_set_offsets_check(context.handle, mode);
            check_status("gpuprim_context_set_offsets_check", kDocSetOffsetsCheck, expect, status, &context);
            if (status == GPUPRIM_SUCCESS) contexts_[context.slot].deferred = mode == GPUPRIM_OFFSETS_CHECK_DEFERRED;
            break;
        }
        case 10:
            if (context.slot >= 0 && contexts_[context.slot].pending) expect.must |= kArg;
            status = gpuprim_context_check_deferred(context.handle);
            check_status("gpuprim_context_check_deferred", kDocCheckDeferred, expect, status, &context);
            if (context.slot >= 0) deferred_reported(context, status);
            break;
        case 3: {
            const char *message = gpuprim_context_last_error(context.handle);
            if (!message) violation("last_error returned NULL");
            if (context.slot < 0 && std::strcmp(message, "invalid context handle") != 0)
                violation("last_error of a non-context: '%s'", message);
            break;
        }
        case 4: {
            bool null_out = which & 8;
            uint64_t bytes = 77;
            if (context.slot >= 0 && null_out) expect.must |= kNull;
            status = gpuprim_context_get_workspace_size(context.handle, null_out ? nullptr : &bytes);
            check_status("gpuprim_context_get_workspace_size", kDocContextQuery, expect, status,
                         &context);
            if (status != GPUPRIM_SUCCESS && bytes != 77)
                violation("failed get_workspace_size wrote its output");
            break;
        }
        case 5:
            status = gpuprim_context_release_workspace(context.handle);
            check_status("gpuprim_context_release_workspace", kDocContextQuery, expect, status,
                         &context);
            break;
        case 7: {
            // Grow (up to 4 MiB, or past any memory) and hold still, then let
            // go, so the other ops' workspaces may grow as before.
            const uint64_t bytes = (which & 16) ? (uint64_t(1) << 62) + in.u16() : uint64_t(in.u16()) << (which & 6);
            const int32_t fix = (which >> 5) & 1;
            uint64_t before = 0, after = 0;
            expect.may |= kOom;  // 2^62 bytes never fit; a few MiB may not either
            if (context.slot >= 0) (void)gpuprim_context_get_workspace_size(context.handle, &before);
            status = gpuprim_context_reserve_workspace(context.handle, bytes, fix);
            check_status("gpuprim_context_reserve_workspace", kDocReserveWorkspace, expect, status, &context);
            if (context.slot < 0) break;
            (void)gpuprim_context_get_workspace_size(context.handle, &after);
            if (status == GPUPRIM_SUCCESS && after < bytes)
                violation("reserve_workspace(%llu) holds %llu bytes", (unsigned long long)bytes,
                          (unsigned long long)after);
            if (status != GPUPRIM_SUCCESS && after > before) violation("a failed reserve_workspace grew it");
            if (gpuprim_context_reserve_workspace(context.handle, 0, 0) != GPUPRIM_SUCCESS)
                violation("reserve_workspace(0, 0) failed: %s", gpuprim_context_last_error(context.handle));
            break;
        }
        case 8: {
            bool null_out = which & 8;
            void *stream = &expect;
            if (context.slot >= 0 && null_out) expect.must |= kNull;
            status = gpuprim_context_get_stream(context.handle, null_out ? nullptr : &stream);
            check_status("gpuprim_context_get_stream", kDocContextQuery, expect, status, &context);
            if (status == GPUPRIM_SUCCESS && stream != nullptr) violation("a CPU context's stream is %p", stream);
            if (status != GPUPRIM_SUCCESS && !null_out && stream != &expect) violation("failed get_stream wrote its output");
            break;
        }
        case 11: {
            // A workspace query with nothing in it, opened once or twice,
            // ended with sizes NULL, a bad struct_size or good ones: every
            // way ends it (a second end finds none open), and the sizes of
            // no calls are 0.
            gpuprim_workspace_sizes_t sizes;
            std::memset(&sizes, 0x3C, sizeof sizes);
            sizes.struct_size = (which & 16) ? in.u8() % sizeof sizes : sizeof sizes;  // smaller: refused
            const bool null_out = which & 32;
            status = gpuprim_context_begin_workspace_query(context.handle);
            check_status("gpuprim_context_begin_workspace_query", kDocBeginWorkspaceQuery, expect, status, &context);
            if (which & 64) {
                Expect twice = expect;
                if (context.slot >= 0) twice.must |= kArg;
                status = gpuprim_context_begin_workspace_query(context.handle);
                check_status("gpuprim_context_begin_workspace_query", kDocBeginWorkspaceQuery, twice, status, &context);
            }
            Expect end = expect;
            if (context.slot >= 0 && null_out) end.must |= kNull;
            else if (context.slot >= 0 && sizes.struct_size < sizeof sizes) end.must |= kArg;
            status = gpuprim_context_end_workspace_query(context.handle, null_out ? nullptr : &sizes);
            check_status("gpuprim_context_end_workspace_query", kDocEndWorkspaceQuery, end, status, &context);
            if (status == GPUPRIM_SUCCESS && (sizes.main_bytes != 0 || sizes.side_bytes != 0 || sizes.bounded != 0))
                violation("an empty workspace query measured main %llu, side %llu bytes",
                          (unsigned long long)sizes.main_bytes, (unsigned long long)sizes.side_bytes);
            if (status != GPUPRIM_SUCCESS && !null_out && sizes.main_bytes != 0x3C3C3C3C3C3C3C3Cull)
                violation("failed end_workspace_query wrote its output");
            Expect again = expect;
            if (context.slot >= 0) again.must |= kArg;
            status = gpuprim_context_end_workspace_query(context.handle, &sizes);
            check_status("gpuprim_context_end_workspace_query", kDocEndWorkspaceQuery, again, status, &context);
            break;
        }
        case 12: {
            // Grow each block by its own size (up to 4 MiB, or past any
            // memory) and hold still, then let go; a failure changes nothing.
            gpuprim_workspace_sizes_t sizes;
            std::memset(&sizes, 0, sizeof sizes);
            sizes.struct_size = sizeof sizes;
            sizes.main_bytes = (which & 16) ? (uint64_t(1) << 62) + in.u16() : uint64_t(in.u16()) << (which & 6);
            sizes.side_bytes = (which & 64) ? (uint64_t(1) << 62) : uint64_t(in.u16()) << 4;
            const int32_t fix = (which >> 5) & 1;
            const bool null_in = (which & 128) && !(which & 1);
            // Now and then a nonzero reserved field, which is refused.
            if (in.u8() % 8 == 0) sizes.reserved = int32_t(in.u8() | 1);
            uint64_t before = 0, after = 0;
            if (context.slot >= 0 && null_in) expect.must |= kNull;
            else if (context.slot >= 0 && sizes.reserved != 0) expect.must |= kArg;
            expect.may |= kOom;
            if (context.slot >= 0) (void)gpuprim_context_get_workspace_size(context.handle, &before);
            status = gpuprim_context_reserve_workspace_sizes(context.handle, null_in ? nullptr : &sizes, fix);
            check_status("gpuprim_context_reserve_workspace_sizes", kDocReserveWorkspaceSizes, expect, status,
                         &context);
            if (context.slot < 0) break;
            (void)gpuprim_context_get_workspace_size(context.handle, &after);
            if (status == GPUPRIM_SUCCESS && after < sizes.main_bytes)
                violation("reserve_workspace_sizes(%llu, %llu) holds %llu bytes", (unsigned long long)sizes.main_bytes,
                          (unsigned long long)sizes.side_bytes, (unsigned long long)after);
            if (status != GPUPRIM_SUCCESS && after != before)
                violation("a failed reserve_workspace_sizes changed the workspace: %llu -> %llu bytes",
                          (unsigned long long)before, (unsigned long long)after);
            if (gpuprim_context_reserve_workspace(context.handle, 0, 0) != GPUPRIM_SUCCESS)
                violation("reserve_workspace(0, 0) failed: %s", gpuprim_context_last_error(context.handle));
            break;
        }
        case 6: {
            // Destroy a context with its buffers and make a new one: the
            // buffers become stale handles.
            if (context.slot < 0) {
                status = gpuprim_context_destroy(context.handle);
                Expect destroy_expect;
                destroy_expect.must = context.handle ? kHandle : 0;
                check_status("gpuprim_context_destroy", kContextCodes, destroy_expect, status, nullptr);
                break;
            }
            status = gpuprim_context_destroy(context.handle);
            if (status != GPUPRIM_SUCCESS) violation("context_destroy failed: %d", status);
            for (size_t i = buffers_.size(); i-- > 0;)
                if (buffers_[i].context == context.slot) forget(i);
            if (stale_contexts_.size() < kMaxStale) stale_contexts_.push_back(context.handle);
            contexts_[context.slot] = ContextSlot{};
            contexts_[context.slot].handle = create_cpu_context();
            for (gpuprim_context_t old : stale_contexts_)
                if (old == contexts_[context.slot].handle)
                    violation("destroyed context handle %p handed out again", (void *)old);
            break;
        }
        }
    }

    // Many buffers made and destroyed: every stale handle stays
    // INVALID_HANDLE, and no new handle repeats one (add_buffer checks).
    void op_churn(Input &in) {
        ContextArg context = draw_context(in);
        if (context.slot < 0) return;
        unsigned cycles = in.u16() % 2048;
        for (unsigned i = 0; i < cycles; ++i) {
            gpuprim_buffer_t handle = nullptr;
            if (gpuprim_buffer_create(context.handle, GPUPRIM_DTYPE_U32, i % 3, &handle) !=
                GPUPRIM_SUCCESS)
                violation("churn: buffer_create failed: %s", gpuprim_context_last_error(context.handle));
            for (gpuprim_buffer_t old : stale_)
                if (old == handle) violation("churn: stale handle %p handed out again", (void *)old);
            if (gpuprim_buffer_destroy(context.handle, handle) != GPUPRIM_SUCCESS)
                violation("churn: buffer_destroy failed");
            if (i == 0 && stale_.size() < kMaxStale) stale_.push_back(handle);
        }
        for (gpuprim_buffer_t old : stale_) {
            uint64_t count = 77;
            gpuprim_status_t status = gpuprim_buffer_get_info(context.handle, old, nullptr, &count, nullptr);
            Expect expect;
            expect.must = kHandle;
            check_status("gpuprim_buffer_get_info (stale)", kDocGetInfo, expect, status, &context);
            if (count != 77) violation("get_info of a stale handle wrote its output");
        }
    }

    void op_context_create(Input &in) {
        // Room for a newer header's larger struct: the tail is read by the library.
        struct {
            gpuprim_context_options_t options;
            unsigned char newer[32];
        } storage;
        std::memset(&storage, 0, sizeof storage);
        gpuprim_context_options_t &options = storage.options;
        gpuprim_context_options_init(&options);
        uint8_t shape = in.u8();
        static const int32_t kBackends[] = {0, 1, 2, 1, 0, 3, -1, 1000, INT32_MIN};
        static const int32_t kOrdinals[] = {0, 0, 1, 7, -1, INT32_MIN};
        static const int32_t kThreads[] = {0, 0, 1, 2, 7, -1, INT32_MIN};
        options.backend = kBackends[in.u8() % (sizeof kBackends / sizeof kBackends[0])];
        options.device_ordinal = kOrdinals[in.u8() % (sizeof kOrdinals / sizeof kOrdinals[0])];
        if (shape % 8 == 1) options.struct_size = 0;
        if (shape % 8 == 2) options.struct_size = sizeof options + 1 + in.u8() % sizeof storage.newer;
        options.cpu_threads = kThreads[in.u8() % (sizeof kThreads / sizeof kThreads[0])];
        // 0.2.0's struct (24 bytes, up to cuda_stream: cpu_threads is not read),
        // 0.3.0's (32 bytes, up to cpu_threads: the allocator is not read), or a
        // size between them and this version's.
        static const uint64_t kOlderSizes[] = {24, 28, 32, 36, 40, sizeof(gpuprim_context_options_t) - 8};
        if (shape % 8 == 6) options.struct_size = kOlderSizes[(shape >> 4) % 6];
        bool tail_set = false;
        if (shape % 8 == 2 && shape & 0x80) {
            size_t at = in.u8() % (options.struct_size - sizeof options);
            storage.newer[at] = static_cast<unsigned char>(in.u8() | 1);
            tail_set = true;
        }
        if (shape % 8 == 3) options.struct_size = UINT64_MAX;
        // Room for a later option, read from this version's layout on: must be 0.
        if (shape % 8 == 0 && (shape & 0xF0) == 0x40) options.reserved = int32_t(in.u8() | 1);
        bool null_options = shape % 8 == 4;
        bool null_context = shape == 255;
        size_t capacity = shape % 16 == 5 ? 0 : in.u8() % 96;
        std::unique_ptr<char[]> message(capacity ? new char[capacity] : nullptr);
        if (capacity) std::memset(message.get(), 'x', capacity);

        Expect expect;
        if (null_context) expect.must |= kNull;
        if (!null_options) {
            const bool layout_020 = options.struct_size == offsetof(gpuprim_context_options_t, cpu_threads);
            const bool layout_030 = options.struct_size == offsetof(gpuprim_context_options_t, allocate);
            if ((options.struct_size < sizeof options && !layout_020 && !layout_030) ||
                options.struct_size > sizeof storage || tail_set)
                expect.must |= kArg;
            if (options.struct_size >= sizeof options && options.reserved != 0) expect.must |= kArg;
            if (!layout_020 && options.cpu_threads < 0) expect.must |= kArg;
            if (options.backend < 0 || options.backend > 2) expect.must |= kEnum;
            if (options.device_ordinal < 0) expect.must |= kArg;
        }
        int backend = null_options ? 0 : options.backend;
        if (backend == GPUPRIM_BACKEND_CUDA || backend == GPUPRIM_BACKEND_AUTO) {
            // CUDA: there when built and a device exists; AUTO may also be
            // steered by GPUPRIM_BACKEND.
            expect.may |= kUnavailable | kDevice | kOom | kArg;
        }
        if (!null_options && options.device_ordinal > 0 && backend != GPUPRIM_BACKEND_CPU)
            expect.may |= kUnavailable;
        gpuprim_context_t context = reinterpret_cast<gpuprim_context_t>(g_fake_context + 8);
        gpuprim_status_t status = gpuprim_context_create(
            null_options ? nullptr : &options, null_context ? nullptr : &context, message.get(),
            capacity);
        check_status("gpuprim_context_create", kDocCreateContext, expect, status, nullptr);
        if (capacity && !std::memchr(message.get(), 0, capacity))
            violation("context_create left its message unterminated");
        if (status != GPUPRIM_SUCCESS) {
            if (!null_context && context != nullptr)
                violation("failed context_create did not set *context to NULL");
            if (capacity > 1 && message[0] == 0) violation("failed context_create left no message");
            return;
        }
        if (capacity && message[0] != 0) violation("successful context_create left a message");
        if (gpuprim_context_destroy(context) != GPUPRIM_SUCCESS) violation("destroy of a new context");
    }

    void op_globals(Input &in) {
        static const int kStatuses[] = {0, 1, 5, 13, 14, 15, 100, -1, INT32_MIN, INT32_MAX};
        int status = in.u8() < 128 ? in.u8() % 16 : kStatuses[in.u8() % 10];
        const char *name = shim_get_error_string(status);
        if (!name || !*name) violation("get_error_string(%d) empty", status);
        bool known = status >= 0 && status <= GPUPRIM_ERROR_NOT_CAPTURABLE;
        if (known == (std::strcmp(name, "unknown status") == 0))
            violation("get_error_string(%d) = '%s'", status, name);
        int dtype = draw_enum(in, kDtypeCount);
        if (shim_dtype_size(dtype) != size_of(dtype)) violation("dtype_size(%d)", dtype);
        if (gpuprim_version_number() != GPUPRIM_VERSION_NUMBER) violation("version number");
        char version[32];
        std::snprintf(version, sizeof version, "%d.%d.%d", GPUPRIM_VERSION_MAJOR,
                      GPUPRIM_VERSION_MINOR, GPUPRIM_VERSION_PATCH);
        if (std::strcmp(version, gpuprim_version_string()) != 0) violation("version string");
        gpuprim_context_options_init(nullptr);
    }

    struct FreeDeleter {
        void operator()(uint8_t *p) const { std::free(p); }
    };
    std::unique_ptr<uint8_t, FreeDeleter> arena_;
    std::vector<uint8_t> arena_shadow_;
    ContextSlot contexts_[2];
    std::vector<Buffer> buffers_;
    std::vector<gpuprim_buffer_t> stale_;
    std::vector<gpuprim_context_t> stale_contexts_;
    int next_region_ = 1;
};

}  // namespace

// Huge requests must come back as NULL, not abort the process.
extern "C" const char *__asan_default_options() { return "allocator_may_return_null=1"; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Input in(data, size);
    Harness harness;
    harness.run(in);
    return 0;
}
