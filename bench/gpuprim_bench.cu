// SPDX-License-Identifier: Apache-2.0
// libgpuprim benchmark: times reduce, dot, scan and radix sort through the
// public C API against CUB on the same device buffers, with a device-to-device
// copy as the bandwidth ceiling, and checks every result against CUB's.
//
//   gpuprim_bench [--quick] [--filter REGEX] [--dtypes REGEX] [--csv PATH]
//                 [--max-log2 N] [--min-log2 N] [--device N] [--probe] [--list]
//
// Exit status: 0 all rows passed (or were skipped for memory), 1 a result
// mismatch or a failed call, 2 bad arguments or no usable CUDA device.
// bench/README.md describes the columns and the bytes model.
//
// The CUB instantiations dominate compile time, so the program is three
// units that compile in parallel: the CUB scans (bench_cub_scan.cu), the CUB
// radix sorts (bench_cub_sort.cu) and everything else (this file); their
// interface is bench_cub.h.

#include "bench_cub.h"

#include <gpuprim/gpuprim.h>

#include <cub/device/device_reduce.cuh>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <thrust/iterator/counting_iterator.h>

#include <regex.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace gpuprim_bench {
namespace {

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

struct BenchError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

void cuda_check(cudaError_t result, const char *what, int line) {
    if (result != cudaSuccess) {
        char message[512];
        snprintf(message, sizeof message, "%s (line %d): %s: %s", what, line,
                 cudaGetErrorName(result), cudaGetErrorString(result));
        throw BenchError(message);
    }
}
#define CUDA_CHECK(call) cuda_check((call), #call, __LINE__)

void api_check(gpuprim_context_t context, gpuprim_status_t status, const char *what) {
    if (status != GPUPRIM_SUCCESS) {
        throw BenchError(std::string("libgpuprim ") + what + ": " +
                         gpuprim_get_error_string(status) + ": " +
                         gpuprim_context_last_error(context));
    }
}

// ---------------------------------------------------------------------------
// What is measured
// ---------------------------------------------------------------------------

enum class Prim {
    ReduceSum,
    ReduceMin,
    ReduceMax,
    ReduceSumHost,
    Dot,
    ScanInclusive,
    ScanExclusive,
    SortKeys,
    SortPairs,
    SortKeysBits16  // sort_keys by bits [0, 16) only (gpuprim_sort_with_options); last, so
                    // the other rows keep their seeds (seed_for)
};
constexpr Prim kAllPrims[] = {Prim::ReduceSum,     Prim::ReduceMin,     Prim::ReduceMax,
                              Prim::ReduceSumHost, Prim::Dot,           Prim::ScanInclusive,
                              Prim::ScanExclusive, Prim::SortKeys,      Prim::SortKeysBits16,
                              Prim::SortPairs};

const char *prim_name(Prim p) {
    switch (p) {
    case Prim::ReduceSum: return "reduce_sum";
    case Prim::ReduceMin: return "reduce_min";
    case Prim::ReduceMax: return "reduce_max";
    case Prim::ReduceSumHost: return "reduce_sum_host";
    case Prim::Dot: return "dot";
    case Prim::ScanInclusive: return "scan_inclusive";
    case Prim::ScanExclusive: return "scan_exclusive";
    case Prim::SortKeys: return "sort_keys";
    case Prim::SortKeysBits16: return "sort_keys_bits16";
    case Prim::SortPairs: return "sort_pairs";
    }
    return "?";
}

bool is_reduce(Prim p) {
    return p == Prim::ReduceSum || p == Prim::ReduceMin || p == Prim::ReduceMax ||
           p == Prim::ReduceSumHost || p == Prim::Dot;
}
bool is_scan(Prim p) { return p == Prim::ScanInclusive || p == Prim::ScanExclusive; }
bool is_sort(Prim p) {
    return p == Prim::SortKeys || p == Prim::SortKeysBits16 || p == Prim::SortPairs;
}
// Results that must match CUB bit for bit even for floats.
bool is_exact_op(Prim p) { return p == Prim::ReduceMin || p == Prim::ReduceMax || is_sort(p); }

// Half: the 16-bit floats (f16, bf16; dtype id tells which), stored and
// passed as their bits. They order, flip and fill like the wider floats.
enum class Kind { Unsigned, Signed, Float, Half };

struct Dtype {
    gpuprim_dtype_t id;
    const char *name;
    uint32_t bytes;
    Kind kind;
};
constexpr Dtype kDtypes[] = {
    {GPUPRIM_DTYPE_I32, "i32", 4, Kind::Signed},   {GPUPRIM_DTYPE_U32, "u32", 4, Kind::Unsigned},
    {GPUPRIM_DTYPE_I64, "i64", 8, Kind::Signed},   {GPUPRIM_DTYPE_U64, "u64", 8, Kind::Unsigned},
    {GPUPRIM_DTYPE_F32, "f32", 4, Kind::Float},    {GPUPRIM_DTYPE_F64, "f64", 8, Kind::Float},
    // Issue 18: the narrow dtypes. They run only the rows planned() lists.
    {GPUPRIM_DTYPE_I8, "i8", 1, Kind::Signed},     {GPUPRIM_DTYPE_U8, "u8", 1, Kind::Unsigned},
    {GPUPRIM_DTYPE_I16, "i16", 2, Kind::Signed},   {GPUPRIM_DTYPE_U16, "u16", 2, Kind::Unsigned},
    {GPUPRIM_DTYPE_F16, "f16", 2, Kind::Half},     {GPUPRIM_DTYPE_BF16, "bf16", 2, Kind::Half},
};
const Dtype &dtype_of(const char *name) {
    for (const Dtype &d : kDtypes)
        if (strcmp(d.name, name) == 0) return d;
    throw BenchError(std::string("unknown dtype ") + name);
}
// The unsigned dtype of a width: what sorted keys and values compare as.
const Dtype &unsigned_of(uint32_t bytes) {
    return dtype_of(bytes == 1 ? "u8" : bytes == 2 ? "u16" : bytes == 4 ? "u32" : "u64");
}

bool is_floating(const Dtype &d) { return d.kind == Kind::Float || d.kind == Kind::Half; }
bool is_narrow(const Dtype &d) { return d.bytes < 4; }
bool is_bf16(const Dtype &d) { return d.id == GPUPRIM_DTYPE_BF16; }

// The type CUB runs for a dtype's sums: integers as the unsigned type of
// their width (sums wrap, so the bits are the same), floats as themselves.
CubType cub_type(const Dtype &d) {
    if (d.kind == Kind::Half) return is_bf16(d) ? CubType::BF16 : CubType::F16;
    if (d.kind == Kind::Float) return d.bytes == 8 ? CubType::F64 : CubType::F32;
    switch (d.bytes) {
    case 1: return CubType::U8;
    case 2: return CubType::U16;
    case 4: return CubType::U32;
    default: return CubType::U64;
    }
}

// Sort pairs carry values as wide as the keys for 4- and 8-byte keys (u32
// values with 4-byte keys, u64 with 8-byte keys) and u32 values with narrower
// keys; filled with the element's index, as an argsort.
uint32_t value_bytes(Prim p, const Dtype &d) {
    return p == Prim::SortPairs ? std::max<uint32_t>(d.bytes, 4) : 0;
}

// Key bits a sort orders by: all of them, or [0, 16) for sort_keys_bits16.
uint32_t sort_end_bit(Prim p, const Dtype &d) { return p == Prim::SortKeysBits16 ? 16 : 8 * d.bytes; }

// The rows that exist. Wide dtypes: every primitive (sort_keys_bits16 only
// for u32). Narrow dtypes (issue 18), to keep run and compile time down:
// reduce_sum and scan_inclusive of u8, i8, f16, bf16; sort_keys of all six;
// sort_pairs of u16 keys (u32 values).
bool planned(Prim p, const Dtype &d) {
    if (p == Prim::SortKeysBits16) return d.id == GPUPRIM_DTYPE_U32;
    if (!is_narrow(d)) return true;
    switch (p) {
    case Prim::ReduceSum:
    case Prim::ScanInclusive: return d.bytes == 1 || d.kind == Kind::Half;
    case Prim::SortKeys: return true;
    case Prim::SortPairs: return d.id == GPUPRIM_DTYPE_U16;
    default: return false;
    }
}

// Bytes a primitive must move at the least (README "Bytes model").
double model_bytes(Prim p, const Dtype &d, uint64_t n) {
    const double s = d.bytes, count = double(n);
    switch (p) {
    case Prim::ReduceSum:
    case Prim::ReduceMin:
    case Prim::ReduceMax:
    case Prim::ReduceSumHost: return count * s;
    case Prim::Dot: return 2 * count * s;
    case Prim::ScanInclusive:
    case Prim::ScanExclusive: return 2 * count * s;
    case Prim::SortKeys:
    case Prim::SortKeysBits16:
    case Prim::SortPairs: {
        const double passes = (sort_end_bit(p, d) + 7) / 8;  // key bits / 8: passes of 8 bits
        return passes * 2 * count * (s + value_bytes(p, d)) + count * s;
    }
    }
    return 0;
}

// Bytes of input, which is what the reference copy moves (read + write).
uint64_t input_bytes(Prim p, const Dtype &d, uint64_t n) {
    if (p == Prim::Dot) return 2 * n * d.bytes;
    return n * (d.bytes + value_bytes(p, d));
}

// ---------------------------------------------------------------------------
// Device helpers: fill, compare, key flip
// ---------------------------------------------------------------------------

enum class Fill {
    IntRandom,      // uniform bits, never zero
    FloatPositive,  // uniform in [0.5, 2): sums and scans stay well conditioned
    FloatAny,       // any finite non-zero float (random sign, exponent, mantissa)
    Iota            // element index (sort values)
};

__host__ __device__ inline uint64_t mix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// Where a float's fields lie, for the fill: f64, f32, f16, bf16 (integers
// use none of it).
struct FloatLayout {
    uint64_t exponent_mask;  // all exponent bits
    uint64_t exponent_top;   // the exponent's highest bit
    uint64_t magnitude;      // everything but the sign
    uint64_t one, half;      // 1.0 and 0.5
    uint64_t mantissa;       // the fraction bits
};

FloatLayout float_layout(const Dtype &d) {
    if (d.bytes == 8)
        return {0x7FF0000000000000ull, 0x4000000000000000ull, 0x7FFFFFFFFFFFFFFFull,
                0x3FF0000000000000ull, 0x3FE0000000000000ull, 0x000FFFFFFFFFFFFFull};
    if (d.bytes == 4) return {0x7F800000u, 0x40000000u, 0x7FFFFFFFu, 0x3F800000u, 0x3F000000u, 0x007FFFFFu};
    if (is_bf16(d)) return {0x7F80u, 0x4000u, 0x7FFFu, 0x3F80u, 0x3F00u, 0x007Fu};
    return {0x7C00u, 0x4000u, 0x7FFFu, 0x3C00u, 0x3800u, 0x03FFu};  // f16
}

template <typename U>
__global__ void fill_kernel(U *out, uint64_t n, uint64_t seed, Fill fill, FloatLayout f) {
    const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        const uint64_t r = mix64(i ^ mix64(seed));
        U bits = U(r);
        if (fill == Fill::Iota) {
            bits = U(i);
        } else if (fill == Fill::IntRandom) {
            if (bits == 0) bits = 1;
        } else if (fill == Fill::FloatPositive) {
            // exponent of 0.5 or of 1.0, random mantissa
            const bool high = (r >> 63) != 0;
            bits = U((high ? f.one : f.half) | (r & f.mantissa));
        } else {  // FloatAny
            if ((bits & U(f.exponent_mask)) == U(f.exponent_mask))
                bits = U(bits ^ U(f.exponent_top));               // no inf/NaN
            if ((bits & U(f.magnitude)) == 0) bits = U(bits | 1);  // no zeros
        }
        out[i] = bits;
    }
}

int fill_grid(uint64_t n) {
    const uint64_t blocks = (n + 255) / 256;
    return int(std::min<uint64_t>(std::max<uint64_t>(blocks, 1), 65536));
}

// Fills n elements of `bytes` each; `layout` matters for the float fills only.
void fill_device(void *data, uint32_t bytes, uint64_t n, uint64_t seed, Fill fill,
                 const FloatLayout &layout, cudaStream_t stream) {
    if (n == 0) return;
    const int grid = fill_grid(n);
    switch (bytes) {
    case 1:
        fill_kernel<uint8_t><<<grid, 256, 0, stream>>>(static_cast<uint8_t *>(data), n, seed, fill,
                                                       layout);
        break;
    case 2:
        fill_kernel<uint16_t><<<grid, 256, 0, stream>>>(static_cast<uint16_t *>(data), n, seed,
                                                        fill, layout);
        break;
    case 4:
        fill_kernel<uint32_t><<<grid, 256, 0, stream>>>(static_cast<uint32_t *>(data), n, seed,
                                                        fill, layout);
        break;
    default:
        fill_kernel<uint64_t><<<grid, 256, 0, stream>>>(static_cast<uint64_t *>(data), n, seed,
                                                        fill, layout);
    }
    CUDA_CHECK(cudaGetLastError());
}

Fill fill_for(Prim p, const Dtype &d) {
    if (!is_floating(d)) return Fill::IntRandom;
    if (p == Prim::ReduceMin || p == Prim::ReduceMax || is_sort(p)) return Fill::FloatAny;
    return Fill::FloatPositive;
}

// Order-preserving map of signed/float keys to unsigned (in place), so that
// CUB's unsigned sort of the image orders them as libgpuprim does (-0.0 before
// +0.0; inputs carry no NaN). Half floats map like the wider floats.
template <typename U>
__global__ void flip_kernel(U *keys, uint64_t n, Kind kind) {
    constexpr U sign = U(U(1) << (sizeof(U) * 8 - 1));
    const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        const U k = keys[i];
        keys[i] = kind == Kind::Signed ? U(k ^ sign) : ((k & sign) ? U(~k) : U(k ^ sign));
    }
}

void flip_keys(void *keys, const Dtype &d, uint64_t n, cudaStream_t stream) {
    if (d.kind == Kind::Unsigned || n == 0) return;
    const int grid = fill_grid(n);
    switch (d.bytes) {
    case 1:
        flip_kernel<uint8_t><<<grid, 256, 0, stream>>>(static_cast<uint8_t *>(keys), n, d.kind);
        break;
    case 2:
        flip_kernel<uint16_t><<<grid, 256, 0, stream>>>(static_cast<uint16_t *>(keys), n, d.kind);
        break;
    case 4:
        flip_kernel<uint32_t><<<grid, 256, 0, stream>>>(static_cast<uint32_t *>(keys), n, d.kind);
        break;
    default:
        flip_kernel<uint64_t><<<grid, 256, 0, stream>>>(static_cast<uint64_t *>(keys), n, d.kind);
    }
    CUDA_CHECK(cudaGetLastError());
}

// Inverse of flip_kernel for one value on the host.
uint64_t unflip(uint64_t image, const Dtype &d) {
    const uint64_t sign = uint64_t(1) << (d.bytes * 8 - 1);
    const uint64_t mask = d.bytes == 8 ? ~uint64_t(0) : (uint64_t(1) << (d.bytes * 8)) - 1;
    if (d.kind == Kind::Signed) return image ^ sign;
    if (is_floating(d)) return (image & sign) ? (image ^ sign) : (~image & mask);
    return image;
}

// The value of f16 or bf16 bits, exactly, as a double (host and device).
__host__ __device__ inline double half_bits_to_double(uint16_t h, bool bf16) {
    if (bf16) {
        const uint32_t w = uint32_t(h) << 16;
        float f;
        memcpy(&f, &w, sizeof f);
        return f;
    }
    const int exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF;
    const double sign = (h & 0x8000) ? -1.0 : 1.0;
    if (exponent == 0x1F) return mantissa ? NAN : sign * INFINITY;
    if (exponent == 0) return sign * ldexp(double(mantissa), -24);
    return sign * ldexp(double(mantissa | 0x400), exponent - 25);
}

// Largest finite value of f16 / bf16.
double half_max(bool bf16) { return bf16 ? 3.3895313892515355e38 : 65504.0; }

// Sum of n half floats in double on the device (added into *out, which starts
// at 0): the reference for f16/bf16 sums. libgpuprim sums them in f32 and
// rounds once; CUB's DeviceReduce::Sum adds in the half type itself (it
// overflows f16 past ~65504 and loses precision long before), so CUB's
// result is timed but is no reference.
__global__ void half_sum_reference_kernel(const uint16_t *in, uint64_t n, bool bf16, double *out) {
    double acc = 0;
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += uint64_t(gridDim.x) * blockDim.x)
        acc += half_bits_to_double(in[i], bf16);
    for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_down_sync(0xFFFFFFFFu, acc, offset);
    if ((threadIdx.x & 31) == 0) atomicAdd(out, acc);
}

// Widens n half floats to double, for the double scan that is the reference
// of f16/bf16 scans.
__global__ void widen_half_kernel(const uint16_t *in, double *out, uint64_t n, bool bf16) {
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += uint64_t(gridDim.x) * blockDim.x)
        out[i] = half_bits_to_double(in[i], bf16);
}

// Whether a half result x (as a double) agrees with the exact value y: within
// rtol of |y| (for positive inputs, the running magnitude), or both beyond
// the type's largest finite value less rtol (ours may round to inf there).
__host__ __device__ inline bool half_close(double x, double y, double rtol, double max_finite) {
    if (fabs(x - y) <= rtol * fabs(y)) return true;
    return fabs(x) == double(INFINITY) && fabs(y) >= max_finite * (1 - rtol) && (x > 0) == (y > 0);
}

struct Mismatch {
    unsigned long long count;
    unsigned long long first;
};

// Counts elements where a and b differ: bit for bit for U integers, beyond
// rtol relative to b for F floats (NaN always differs).
template <typename T>
__global__ void compare_kernel(const T *a, const T *b, uint64_t n, double rtol, Mismatch *out) {
    const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
    unsigned long long local = 0, first = ~0ull;
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        bool same;
        if constexpr (std::is_floating_point_v<T>) {
            const double x = a[i], y = b[i];
            same = fabs(x - y) <= rtol * fabs(y);
        } else {
            same = a[i] == b[i];
        }
        if (!same) {
            ++local;
            first = i < first ? i : first;
        }
    }
    if (local) {
        atomicAdd(&out->count, local);
        atomicMin(&out->first, first);
    }
}

// Counts half floats in `ours` that are not half_close() to the double
// reference `ref`.
__global__ void compare_half_kernel(const uint16_t *ours, const double *ref, uint64_t n, bool bf16,
                                    double rtol, double max_finite, Mismatch *out) {
    const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
    unsigned long long local = 0, first = ~0ull;
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        if (!half_close(half_bits_to_double(ours[i], bf16), ref[i], rtol, max_finite)) {
            ++local;
            first = i < first ? i : first;
        }
    }
    if (local) {
        atomicAdd(&out->count, local);
        atomicMin(&out->first, first);
    }
}

// ---------------------------------------------------------------------------
// Device memory owned by the benchmark, optionally wrapped as a gpuprim buffer
// ---------------------------------------------------------------------------

struct DeviceArray {
    void *data = nullptr;
    uint64_t bytes = 0;
    DeviceArray() = default;
    explicit DeviceArray(uint64_t size) : bytes(size) {
        if (size) CUDA_CHECK(cudaMalloc(&data, size));
    }
    DeviceArray(const DeviceArray &) = delete;
    DeviceArray &operator=(const DeviceArray &) = delete;
    ~DeviceArray() {
        if (data) cudaFree(data);
    }
};

// Reads `vectors` 16-byte words through L2 and keeps nothing (the sink is
// written only if the data XOR to an unlikely value, so the loads stay).
__global__ void l2_flush_kernel(const uint4 *data, uint64_t vectors, uint32_t *sink) {
    uint4 acc = make_uint4(0, 0, 0, 0);
    for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < vectors;
         i += uint64_t(gridDim.x) * blockDim.x) {
        const uint4 v = __ldcg(data + i);
        acc.x ^= v.x, acc.y ^= v.y, acc.z ^= v.z, acc.w ^= v.w;
    }
    if (acc.x == 0x9e3779b9u && acc.y == 0x7f4a7c15u && acc.z == acc.w) *sink = acc.x;
}

// Before a timed sample whose inputs exceed L2: reads twice the L2's size of
// a buffer of its own, so whatever the previous op left in L2 (above all the
// dirty lines of a write-heavy op such as the reference copy, whose
// write-back would otherwise land in the next op's time) is gone, and every
// op starts from the same clean cache. A read, not a memset, so the flush
// leaves no dirty lines of its own.
struct L2Flush {
    std::unique_ptr<DeviceArray> buffer, sink;
    void allocate(uint64_t l2_bytes, cudaStream_t stream) {
        buffer = std::make_unique<DeviceArray>(2 * l2_bytes);
        sink = std::make_unique<DeviceArray>(sizeof(uint32_t));
        CUDA_CHECK(cudaMemsetAsync(buffer->data, 0x5c, buffer->bytes, stream));
    }
    void run(cudaStream_t stream) const {
        l2_flush_kernel<<<1024, 256, 0, stream>>>(static_cast<const uint4 *>(buffer->data),
                                                  buffer->bytes / sizeof(uint4),
                                                  static_cast<uint32_t *>(sink->data));
        CUDA_CHECK(cudaGetLastError());
    }
};

struct Wrapped {
    gpuprim_context_t context = nullptr;
    gpuprim_buffer_t buffer = nullptr;
    Wrapped(gpuprim_context_t ctx, gpuprim_dtype_t dtype, void *data, uint64_t count)
        : context(ctx) {
        api_check(ctx, gpuprim_buffer_wrap(ctx, dtype, data, count, &buffer), "buffer_wrap");
    }
    Wrapped(const Wrapped &) = delete;
    Wrapped &operator=(const Wrapped &) = delete;
    ~Wrapped() {
        if (buffer) gpuprim_buffer_destroy(context, buffer);
    }
};

// Grow-only CUB temporary storage, reallocated outside timed regions only.
struct TempStorage {
    void *data = nullptr;
    size_t bytes = 0;
    void reserve(size_t need) {
        if (need <= bytes && data) return;
        release();
        CUDA_CHECK(cudaMalloc(&data, std::max<size_t>(need, 1)));
        bytes = need;
    }
    void release() {
        if (data) cudaFree(data);
        data = nullptr;
        bytes = 0;
    }
    ~TempStorage() { release(); }
};

// ---------------------------------------------------------------------------
// CUB reductions, instantiated by width where the work is the same: integer
// sums wrap, so signed ones run as the unsigned type of their width (same
// bits); min/max time CUB's unsigned min/max on the same bytes (one compare
// per element either way) and are checked on the order-preserving image of
// signed/float inputs, which maps min/max onto unsigned min/max exactly.
// ---------------------------------------------------------------------------

using CubReduceFn = cudaError_t (*)(void *temp, size_t &temp_bytes, const void *a, const void *b,
                                    void *out, uint64_t n, cudaStream_t stream);

template <typename T>
cudaError_t cub_sum(void *t, size_t &tb, const void *a, const void *, void *out, uint64_t n,
                    cudaStream_t s) {
    return cub::DeviceReduce::Sum(t, tb, static_cast<const T *>(a), static_cast<T *>(out),
                                  uint32_t(n), s);
}
template <typename T>
cudaError_t cub_min(void *t, size_t &tb, const void *a, const void *, void *out, uint64_t n,
                    cudaStream_t s) {
    return cub::DeviceReduce::Min(t, tb, static_cast<const T *>(a), static_cast<T *>(out),
                                  uint32_t(n), s);
}
template <typename T>
cudaError_t cub_max(void *t, size_t &tb, const void *a, const void *, void *out, uint64_t n,
                    cudaStream_t s) {
    return cub::DeviceReduce::Max(t, tb, static_cast<const T *>(a), static_cast<T *>(out),
                                  uint32_t(n), s);
}

template <typename T>
struct ProductAt {
    const T *a;
    const T *b;
    __device__ T operator()(uint64_t i) const { return a[i] * b[i]; }
};
template <typename T>
cudaError_t cub_dot(void *t, size_t &tb, const void *a, const void *b, void *out, uint64_t n,
                    cudaStream_t s) {
    return cub::DeviceReduce::TransformReduce(
        t, tb, thrust::counting_iterator<uint64_t>(0), static_cast<T *>(out), uint32_t(n),
        ::cuda::std::plus<>{}, ProductAt<T>{static_cast<const T *>(a), static_cast<const T *>(b)},
        T(0), s);
}

bool past_32_bits(uint64_t n) { return n > 0xFFFFFFFFull; }

// nullptr where nothing is instantiated: of the narrow dtypes only the sums
// that planned() lists (u8 for i8 and u8; CUB adds f16/bf16 in their own type).
CubReduceFn cub_reduce_fn(Prim p, const Dtype &d) {
    const bool f = d.kind == Kind::Float, w = d.bytes == 8;
    if (is_narrow(d)) {
        if (p != Prim::ReduceSum) return nullptr;
        switch (cub_type(d)) {
        case CubType::U8: return cub_sum<uint8_t>;
        case CubType::F16: return cub_sum<__half>;
        case CubType::BF16: return cub_sum<__nv_bfloat16>;
        default: return nullptr;
        }
    }
    switch (p) {
    case Prim::ReduceSum:
    case Prim::ReduceSumHost:
        return f ? (w ? cub_sum<double> : cub_sum<float>)
                 : (w ? cub_sum<uint64_t> : cub_sum<uint32_t>);
    case Prim::Dot:
        return f ? (w ? cub_dot<double> : cub_dot<float>)
                 : (w ? cub_dot<uint64_t> : cub_dot<uint32_t>);
    case Prim::ReduceMin: return w ? cub_min<uint64_t> : cub_min<uint32_t>;
    case Prim::ReduceMax: return w ? cub_max<uint64_t> : cub_max<uint32_t>;
    default: return nullptr;
    }
}

// ---------------------------------------------------------------------------
// Timing
// ---------------------------------------------------------------------------

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

struct Events {
    std::vector<cudaEvent_t> events;
    cudaEvent_t get(size_t i) {
        while (events.size() <= i) {
            cudaEvent_t e;
            CUDA_CHECK(cudaEventCreate(&e));
            events.push_back(e);
        }
        return events[i];
    }
    ~Events() {
        for (cudaEvent_t e : events) cudaEventDestroy(e);
    }
};

// Median per-call time (us) of op i of k: its sample in repetition r is the
// event pair 2 * (r * k + i), holding `batch` calls.
double median_sample_us(Events &ev, int reps, size_t k, size_t i, int batch) {
    std::vector<double> us;
    for (int r = 0; r < reps; ++r) {
        const size_t e = 2 * (size_t(r) * k + i);
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, ev.get(e), ev.get(e + 1)));
        us.push_back(ms * 1e3 / batch);
    }
    return median(us);
}

// An operation under test; slot counts every call so rotating inputs never
// give two consecutive calls the same copy.
using Op = std::function<void(uint64_t slot)>;


// ---------------------------------------------------------------------------
// Device time with a blocked stream
// ---------------------------------------------------------------------------

// Most ops one blocked time_ops call measures (ours, CUB, copy).
constexpr size_t kMaxBlockedOps = 4;
// How long block_stream_kernel waits for its release before giving up.
constexpr uint64_t kBlockTimeoutNs = 200'000'000;

__device__ inline uint64_t globaltimer_ns() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Holds the stream until the host writes a release count >= wanted (nvbench's
// blocking kernel): what the host enqueues meanwhile starts back to back once
// it ends. Gives up after timeout_ns and sets *timed_out_word, so that a call
// that waits on the host (and so on this kernel) cannot hang the run.
__global__ void block_stream_kernel(volatile const uint32_t *release_word, uint32_t wanted,
                                    uint64_t timeout_ns, uint32_t *timed_out_word) {
    const uint64_t start = globaltimer_ns();
    while (*release_word < wanted) {
        if (globaltimer_ns() - start > timeout_ns) {
            *timed_out_word = 1;
            return;
        }
#if __CUDA_ARCH__ >= 700
        __nanosleep(1000);  // a poll per microsecond is plenty and keeps the bus quiet
#endif
    }
}

// The words block_stream_kernel polls and reports through, in mapped pinned
// host memory so the host can release the stream without a CUDA call. The
// release word is a counter that only grows (each block waits for its own
// count), so it never needs resetting while a kernel may read it.
struct StreamBlocker {
    struct Words {
        uint32_t release;
        uint32_t pad[15];  // timed_out on its own cache line
        uint32_t timed_out[kMaxBlockedOps];
    };
    Words *host = nullptr;
    Words *device = nullptr;
    uint32_t count = 0;  // last count a block waits for

    void allocate() {
        CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void **>(&host), sizeof(Words),
                                 cudaHostAllocMapped));
        memset(host, 0, sizeof(Words));
        CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void **>(&device), host, 0));
    }
    void free_words() {
        if (host) cudaFreeHost(host);
        host = device = nullptr;
    }

    // Holds the stream; a timeout is reported in timed_out[op].
    void block(cudaStream_t stream, size_t op) {
        block_stream_kernel<<<1, 1, 0, stream>>>(&device->release, ++count, kBlockTimeoutNs,
                                                 &device->timed_out[op]);
        CUDA_CHECK(cudaGetLastError());
    }
    // Releases every block launched so far.
    void unblock() {
        std::atomic_thread_fence(std::memory_order_seq_cst);
        *static_cast<volatile uint32_t *>(&host->release) = count;
    }
    // Only while no block_stream_kernel runs (after a stream synchronize).
    bool timed_out(size_t op) const {
        return *static_cast<volatile const uint32_t *>(&host->timed_out[op]) != 0;
    }
    void clear_timeouts() {
        for (size_t i = 0; i < kMaxBlockedOps; ++i)
            *static_cast<volatile uint32_t *>(&host->timed_out[i]) = 0;
    }
};

// Releases the stream when a sample's scope ends, also when a call throws (a
// held stream would otherwise stall the error path until the timeout).
struct UnblockOnExit {
    StreamBlocker *blocker;  // may be null: nothing to release
    ~UnblockOnExit() {
        if (blocker) blocker->unblock();
    }
};

// Median time (us) of each op, all run round-robin on the same stream after
// warm-up (which op goes first rotates every repetition). Each sample is a
// batch of `batch` back-to-back calls bracketed by one pair of events, divided
// by batch: for calls of a few microseconds a single call's events measure
// the launch latency more than the device time, and a batch lets the device
// run the calls back to back (a call that waits on the host, like a reduce
// to host memory, still pays its full round trip every time). flush (may be
// null) runs before each sample, outside its events.
//
// Where the host enqueues a call slower than the device runs it, the batch
// still measures the host. With a blocker, each sample's batch is enqueued
// behind block_stream_kernel and released only once all of it is queued, so
// the events bracket device work back to back rather than the host's launch
// rate (~5 us a call in a VM): the device time. 0 then for an op whose block
// timed out: its call waits on the host, which the held stream cannot serve
// until the timeout; it is not sampled again.
std::vector<double> time_ops(cudaStream_t stream, Events &ev, int warmup, int reps, int batch,
                             const std::vector<const Op *> &ops, const L2Flush *flush = nullptr,
                             StreamBlocker *blocker = nullptr) {
    const size_t k = ops.size();
    if (blocker && k > kMaxBlockedOps) throw BenchError("time_ops: too many ops for the stream blocker");
    uint64_t slot = 0;
    for (int w = 0; w < warmup; ++w)
        for (const Op *op : ops) (*op)(slot++);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    if (blocker) blocker->clear_timeouts();
    std::vector<bool> valid(k, true);
    for (int r = 0; r < reps; ++r) {
        for (size_t j = 0; j < k; ++j) {
            const size_t i = (size_t(r) + j) % k;
            if (!valid[i]) {
                slot += batch;  // the other ops keep their input rotation
                continue;
            }
            const size_t e = 2 * (size_t(r) * k + i);
            if (flush) flush->run(stream);
            if (blocker) blocker->block(stream, i);
            const UnblockOnExit unblock{blocker};
            CUDA_CHECK(cudaEventRecord(ev.get(e), stream));
            for (int b = 0; b < batch; ++b) (*ops[i])(slot++);
            CUDA_CHECK(cudaEventRecord(ev.get(e + 1), stream));
        }
        // Blocked: a repetition at a time, so the queue stays short and an op
        // that timed out costs one timeout, not one per repetition. Otherwise
        // the host runs ahead, so no sample starts on an idle device.
        if (blocker) {
            CUDA_CHECK(cudaStreamSynchronize(stream));
            for (size_t i = 0; i < k; ++i)
                if (blocker->timed_out(i)) valid[i] = false;
        }
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<double> medians;
    for (size_t i = 0; i < k; ++i) medians.push_back(valid[i] ? median_sample_us(ev, reps, k, i, batch) : 0);
    return medians;
}

// ---------------------------------------------------------------------------
// The benchmark
// ---------------------------------------------------------------------------

struct Options {
    bool quick = false;
    bool probe = false;
    bool list = false;
    std::string filter;
    std::string dtypes;
    std::string csv;
    bool narrow = false;  // --narrow: only the issue-18 rows (and u32 sort_keys beside them)
    int max_log2 = 33;
    int min_log2 = 0;
    int device = 0;
};

// How a row's device-time columns were obtained.
enum class DeviceTiming {
    None,          // n/a: not timed, or the calls wait on the host
    SameAsEvents,  // calls over ~100 us, timed one at a time: the event times are device time
    Blocked        // short calls: time_ops with the stream blocker
};

struct Row {
    Prim prim;
    const Dtype *dtype;
    uint64_t n;
    std::string status = "ok";  // ok | MISMATCH | FAIL | skipped
    std::string note;
    double ours_us = 0, cub_us = 0, copy_us = 0;
    DeviceTiming device_timing = DeviceTiming::None;
    double ours_device_us = 0, cub_device_us = 0, copy_device_us = 0;  // 0: n/a
    double bytes = 0;
    uint64_t copy_bytes = 0;
    int reps = 0, copies = 0;
};

struct Bench {
    Options opt;
    cudaStream_t stream = nullptr;
    gpuprim_context_t ctx = nullptr;
    cudaDeviceProp prop{};
    size_t l2_bytes = 0;
    Events events;
    TempStorage cub_temp;
    void *host_pinned = nullptr;  // CUB's reduce-to-host result lands here
    StreamBlocker blocker;        // device time of short calls (time_ops with it)
    L2Flush l2_flush;             // before each sample of rows whose inputs exceed L2
    struct CopyTime {
        uint64_t bytes;
        double us, device_us;
    };
    std::vector<CopyTime> copy_cache;
    FILE *csv = nullptr;

    ~Bench() {
        if (csv) fclose(csv);
        if (ctx) gpuprim_context_destroy(ctx);
        if (host_pinned) cudaFreeHost(host_pinned);
        blocker.free_words();
        cub_temp.release();
        if (stream) cudaStreamDestroy(stream);
    }

    uint64_t free_bytes() {
        size_t free = 0, total = 0;
        CUDA_CHECK(cudaMemGetInfo(&free, &total));
        return free;
    }
    // Kept free for the driver, libgpuprim's small allocations and fragmentation.
    uint64_t margin() const { return (uint64_t(1) << 30) + prop.totalGlobalMem / 50; }

    // Input copies that rotate: several when the input exceeds L2 (so no run
    // starts with its input in cache) and memory allows, else one.
    int pick_copies(uint64_t per_copy, uint64_t fixed) {
        const uint64_t avail = free_bytes();
        for (int c = per_copy > l2_bytes ? 3 : 1; c >= 1; --c)
            if (c * per_copy + fixed + margin() <= avail) return c;
        return 0;
    }

    int reps_for(double bytes) const {
        const double est_us = bytes / 2.0e6;  // ~2 TB/s
        int reps = est_us < 50 ? 50 : est_us < 1000 ? 30 : est_us < 10000 ? 15 : est_us < 50000 ? 9 : 7;
        if (opt.quick) reps = std::max(5, reps / 2);
        return reps;
    }

    // Calls per timed sample: batches for calls under ~100 us (see time_ops).
    static int batch_for(double bytes) { return bytes / 2.0e6 < 100 ? 10 : 1; }

    void release_all_workspace() {
        api_check(ctx, gpuprim_context_release_workspace(ctx), "release_workspace");
        cub_temp.release();
    }

    // Device-to-device copy of `bytes` in buffers of its own, cached by size:
    // the ceiling for rows too big to hold a copy destination of their own.
    // Also the copy's device time (blocked time_ops when it is short).
    CopyTime standalone_copy(uint64_t bytes, Row &row) {
        for (const CopyTime &entry : copy_cache)
            if (entry.bytes == bytes) return entry;
        release_all_workspace();
        const int copies = pick_copies(bytes, bytes);
        if (copies == 0) {
            row.note += "no memory for the copy reference; ";
            return CopyTime{bytes, 0, 0};
        }
        std::vector<std::unique_ptr<DeviceArray>> src;
        for (int c = 0; c < copies; ++c) {
            src.emplace_back(new DeviceArray(bytes));
            CUDA_CHECK(cudaMemsetAsync(src.back()->data, c + 1, bytes, stream));
        }
        DeviceArray dst(bytes);
        const Op copy = [&](uint64_t slot) {
            CUDA_CHECK(cudaMemcpyAsync(dst.data, src[slot % copies]->data, bytes,
                                       cudaMemcpyDeviceToDevice, stream));
        };
        const int reps = reps_for(2.0 * bytes), batch = batch_for(2.0 * bytes);
        const L2Flush *flush = bytes > l2_bytes ? &l2_flush : nullptr;
        CopyTime t{bytes, time_ops(stream, events, 2, reps, batch, {&copy}, flush)[0], 0};
        t.device_us = batch > 1
                          ? time_ops(stream, events, 2, reps, batch, {&copy}, flush, &blocker)[0]
                          : t.us;
        copy_cache.push_back(t);
        return t;
    }

    // Rotating input copies, and whether the row can also hold a destination
    // for the reference copy (so the copy runs on the row's own buffers, timed
    // in the same round-robin as ours and CUB). Rotation comes first.
    int plan_memory(uint64_t per_copy, uint64_t fixed, uint64_t copy_bytes, bool &copy_in_row) {
        const int without = pick_copies(per_copy, fixed);
        const int with = pick_copies(per_copy, fixed + copy_bytes);
        copy_in_row = with > 0 && with == without;
        return without;
    }

    // The inputs of one row: arrays[j][copy] holds bytes[j] bytes.
    struct Inputs {
        std::vector<std::vector<std::unique_ptr<DeviceArray>> *> arrays;
        std::vector<uint64_t> bytes;
    };

    // Times ours, CUB and (with copy_dst) the D2D copy of the row's inputs.
    void time_row(Row &row, const Op &ours, const Op &cub, const Inputs &inputs,
                  DeviceArray *copy_dst) {
        const Op copy = [&](uint64_t slot) {
            uint64_t offset = 0;
            for (size_t j = 0; j < inputs.arrays.size(); ++j) {
                auto &copies = *inputs.arrays[j];
                CUDA_CHECK(cudaMemcpyAsync(static_cast<char *>(copy_dst->data) + offset,
                                           copies[slot % copies.size()]->data, inputs.bytes[j],
                                           cudaMemcpyDeviceToDevice, stream));
                offset += inputs.bytes[j];
            }
        };
        // Ours and CUB take turns in one round-robin (each goes first in every
        // other repetition, so each follows itself and the other equally
        // often, and both read the same input); the copy is timed after them
        // on the same buffers. Interleaved with them, the op right after the
        // copy paid for the copy's dirty L2 lines, and a rotation of three put
        // ours there in 2 samples of 3 and CUB in 1 of 3.
        const std::vector<const Op *> ops{&ours, &cub};
        row.reps = reps_for(row.bytes);
        const int warmup = row.bytes > 4e9 ? 2 : 3, batch = batch_for(row.bytes);
        uint64_t input_bytes = 0;
        for (uint64_t b : inputs.bytes) input_bytes += b;
        const L2Flush *flush = input_bytes > l2_bytes ? &l2_flush : nullptr;
        const std::vector<double> us = time_ops(stream, events, warmup, row.reps, batch, ops, flush);
        row.ours_us = us[0];
        row.cub_us = us[1];
        if (copy_dst) row.copy_us = time_ops(stream, events, warmup, row.reps, batch, {&copy}, flush)[0];

        // Device time: a held stream would deadlock against calls that wait
        // on the host until the timeout, so those rows get none.
        if (row.prim == Prim::ReduceSumHost) {
            row.note += "device time n/a (call waits on the host); ";
            return;
        }
        if (batch == 1) {
            row.device_timing = DeviceTiming::SameAsEvents;
            row.ours_device_us = row.ours_us;
            row.cub_device_us = row.cub_us;
            row.copy_device_us = row.copy_us;
            return;
        }
        std::vector<double> device =
            time_ops(stream, events, warmup, row.reps, batch, ops, flush, &blocker);
        if (copy_dst)
            device.push_back(time_ops(stream, events, warmup, row.reps, batch, {&copy}, flush, &blocker)[0]);
        row.device_timing = DeviceTiming::Blocked;
        row.ours_device_us = device[0];
        row.cub_device_us = device[1];
        if (copy_dst) row.copy_device_us = device[2];
        const char *which[] = {"ours", "CUB", "copy"};
        for (size_t i = 0; i < device.size(); ++i)
            if (device[i] == 0)
                row.note += std::string(which[i]) +
                            " device time n/a (call waits on the host: blocked stream timed out); ";
    }

    void open_csv() {
        if (opt.csv.empty()) return;
        csv = fopen(opt.csv.c_str(), "w");
        if (!csv) throw BenchError("cannot write " + opt.csv);
        fprintf(csv,
                "primitive,dtype,n,log2n,status,ours_us,cub_us,copy_us,ratio_ours_over_cub,"
                "bytes_model,ours_gbps,cub_gbps,copy_gbps,ours_pct_copy,cub_pct_copy,"
                "ours_gkeys_per_s,cub_gkeys_per_s,reps,input_copies,note,"
                "ours_device_us,cub_device_us,copy_device_us,ratio_device_ours_over_cub\n");
        fflush(csv);
    }

    static double gbps(double bytes, double us) { return us > 0 ? bytes / us / 1e3 : 0; }

    // A device-time CSV field: empty when n/a.
    static std::string csv_us(double us, const char *format = "%.3f") {
        if (us <= 0) return "";
        char buf[32];
        snprintf(buf, sizeof buf, format, us);
        return buf;
    }

    void write_csv(const Row &r) {
        if (!csv) return;
        const double og = gbps(r.bytes, r.ours_us), cg = gbps(r.bytes, r.cub_us);
        const double copy_gbps = gbps(2.0 * r.copy_bytes, r.copy_us);
        std::string note = r.note;
        std::replace(note.begin(), note.end(), ',', ';');
        std::replace(note.begin(), note.end(), '\n', ' ');
        const double device_ratio =
            r.cub_device_us > 0 && r.ours_device_us > 0 ? r.ours_device_us / r.cub_device_us : 0;
        fprintf(csv, "%s,%s,%" PRIu64 ",%.3f,%s,%.3f,%.3f,%.3f,%.4f,%.0f,%.2f,%.2f,%.2f,%.1f,%.1f,%.4f,%.4f,%d,%d,%s,%s,%s,%s,%s\n",
                prim_name(r.prim), r.dtype->name, r.n, std::log2(double(r.n)), r.status.c_str(),
                r.ours_us, r.cub_us, r.copy_us, r.cub_us > 0 ? r.ours_us / r.cub_us : 0, r.bytes,
                og, cg, copy_gbps, copy_gbps > 0 ? 100 * og / copy_gbps : 0,
                copy_gbps > 0 ? 100 * cg / copy_gbps : 0,
                r.ours_us > 0 ? r.n / r.ours_us / 1e3 : 0,
                r.cub_us > 0 ? r.n / r.cub_us / 1e3 : 0, r.reps, r.copies, note.c_str(),
                csv_us(r.ours_device_us).c_str(), csv_us(r.cub_device_us).c_str(),
                csv_us(r.copy_device_us).c_str(), csv_us(device_ratio, "%.4f").c_str());
        fflush(csv);
    }

    // ---- one row --------------------------------------------------------

    void run_row(Row &row) {
        const Prim p = row.prim;
        const Dtype &d = *row.dtype;
        const uint64_t n = row.n;
        row.bytes = model_bytes(p, d, n);
        row.copy_bytes = input_bytes(p, d, n);
        release_all_workspace();
        if (is_reduce(p))
            run_reduce(row);
        else if (is_scan(p))
            run_scan(row);
        else
            run_sort(row);
        release_all_workspace();
        if (row.copy_us == 0 && row.ours_us > 0) {
            const CopyTime copy = standalone_copy(row.copy_bytes, row);
            row.copy_us = copy.us;
            if (row.device_timing != DeviceTiming::None) row.copy_device_us = copy.device_us;
            row.note += "copy timed in separate buffers; ";
        }
    }

    // Fills copy 0 and replicates it, so every copy holds the same input and
    // any output can be checked against any other.
    void make_copies(std::vector<std::unique_ptr<DeviceArray>> &v, int copies, uint32_t elem,
                     uint64_t n, uint64_t seed, Fill fill, const FloatLayout &layout = {}) {
        for (int c = 0; c < copies; ++c) v.emplace_back(new DeviceArray(n * elem));
        fill_device(v[0]->data, elem, n, seed, fill, layout, stream);
        for (int c = 1; c < copies; ++c)
            CUDA_CHECK(cudaMemcpyAsync(v[c]->data, v[0]->data, n * elem,
                                       cudaMemcpyDeviceToDevice, stream));
    }

    uint64_t seed_for(const Row &r, int which) const {
        return mix64(uint64_t(r.prim) * 131 + uint64_t(r.dtype->id) * 7 + r.n * 3 + which);
    }

    double float_rtol(const Dtype &d) const { return d.bytes == 4 ? 2e-3 : 1e-9; }
    // f16/bf16 sums and scans against the f64 reference: rounding to the half
    // type alone is up to 2^-11 (f16) or 2^-8 (bf16) of the value.
    static constexpr double kHalfRtol = 1e-2;

    void run_reduce(Row &row) {
        const Prim p = row.prim;
        const Dtype &d = *row.dtype;
        const uint64_t n = row.n;
        const bool dot = p == Prim::Dot;
        const CubReduceFn cubfn = cub_reduce_fn(p, d);
        if (!cubfn) throw BenchError("no CUB reduction instantiated for this dtype");
        size_t temp_bytes = 0;
        CUDA_CHECK(cubfn(nullptr, temp_bytes, nullptr, nullptr, nullptr, n, stream));
        const uint64_t per_copy = n * d.bytes * (dot ? 2 : 1);
        bool copy_in_row = false;
        const int copies =
            plan_memory(per_copy, temp_bytes + (64u << 20), row.copy_bytes, copy_in_row);
        if (!copies) return skip(row, per_copy);
        row.copies = copies;
        cub_temp.reserve(temp_bytes);

        std::vector<std::unique_ptr<DeviceArray>> a, b;
        const gpuprim_op_t op = p == Prim::ReduceMin ? GPUPRIM_OP_MIN
                                : p == Prim::ReduceMax ? GPUPRIM_OP_MAX
                                                       : GPUPRIM_OP_SUM;
        make_copies(a, copies, d.bytes, n, seed_for(row, 0), fill_for(p, d), float_layout(d));
        if (dot)
            make_copies(b, copies, d.bytes, n, seed_for(row, 1), fill_for(p, d), float_layout(d));
        DeviceArray ours_result(8), cub_result(8);
        CUDA_CHECK(cudaMemsetAsync(ours_result.data, 0xA5, 8, stream));
        CUDA_CHECK(cudaMemsetAsync(cub_result.data, 0x5A, 8, stream));
        std::vector<std::unique_ptr<Wrapped>> wa, wb;
        for (int c = 0; c < copies; ++c) {
            wa.emplace_back(new Wrapped(ctx, d.id, a[c]->data, n));
            if (dot) wb.emplace_back(new Wrapped(ctx, d.id, b[c]->data, n));
        }
        Wrapped wres(ctx, d.id, ours_result.data, 1);
        uint64_t ours_host = 0;  // gpuprim_reduce's host result

        const Op ours = [&](uint64_t slot) {
            const int c = int(slot % copies);
            if (dot)
                api_check(ctx, gpuprim_dot_to_buffer(ctx, wa[c]->buffer, wb[c]->buffer, wres.buffer),
                          "dot_to_buffer");
            else if (p == Prim::ReduceSumHost)
                api_check(ctx, gpuprim_reduce(ctx, op, wa[c]->buffer, &ours_host), "reduce");
            else
                api_check(ctx, gpuprim_reduce_to_buffer(ctx, op, wa[c]->buffer, wres.buffer),
                          "reduce_to_buffer");
        };
        const Op cub = [&](uint64_t slot) {
            const int c = int(slot % copies);
            size_t tb = cub_temp.bytes;
            CUDA_CHECK(cubfn(cub_temp.data, tb, a[c]->data, dot ? b[c]->data : nullptr,
                             cub_result.data, n, stream));
            if (p == Prim::ReduceSumHost) {
                CUDA_CHECK(cudaMemcpyAsync(host_pinned, cub_result.data, d.bytes,
                                           cudaMemcpyDeviceToHost, stream));
                CUDA_CHECK(cudaStreamSynchronize(stream));
            }
        };
        {
            std::unique_ptr<DeviceArray> copy_dst;
            if (copy_in_row) copy_dst = std::make_unique<DeviceArray>(row.copy_bytes);
            Inputs inputs{{&a}, {n * d.bytes}};
            if (dot) {
                inputs.arrays.push_back(&b);
                inputs.bytes.push_back(n * d.bytes);
            }
            time_row(row, ours, cub, inputs, copy_dst.get());
        }

        // Every copy holds the same data, so the last results of both compare.
        uint64_t got = 0, want = 0;
        if (p == Prim::ReduceSumHost) {
            got = ours_host;
            memcpy(&want, host_pinned, d.bytes);
        } else {
            CUDA_CHECK(cudaMemcpyAsync(&got, ours_result.data, d.bytes, cudaMemcpyDeviceToHost,
                                       stream));
            CUDA_CHECK(cudaMemcpyAsync(&want, cub_result.data, d.bytes, cudaMemcpyDeviceToHost,
                                       stream));
            CUDA_CHECK(cudaStreamSynchronize(stream));
        }
        if (d.kind == Kind::Half && !is_exact_op(p)) {
            // f16/bf16 sum: against the sum in f64 (CUB's result, added in
            // the half type, is no reference).
            DeviceArray ref(sizeof(double));
            CUDA_CHECK(cudaMemsetAsync(ref.data, 0, sizeof(double), stream));
            half_sum_reference_kernel<<<std::min(fill_grid(n), prop.multiProcessorCount * 8), 256, 0,
                                        stream>>>(static_cast<const uint16_t *>(a[0]->data), n,
                                                  is_bf16(d), static_cast<double *>(ref.data));
            CUDA_CHECK(cudaGetLastError());
            double y = 0;
            CUDA_CHECK(cudaMemcpyAsync(&y, ref.data, sizeof y, cudaMemcpyDeviceToHost, stream));
            CUDA_CHECK(cudaStreamSynchronize(stream));
            const double x = half_bits_to_double(uint16_t(got), is_bf16(d));
            if (!half_close(x, y, kHalfRtol, half_max(is_bf16(d)))) {
                char msg[160];
                snprintf(msg, sizeof msg, "ours %.9g (0x%04x), f64 reference %.17g (rtol %g); ", x,
                         unsigned(got), y, kHalfRtol);
                mismatch(row, msg);
            }
            return;
        }
        if ((p == Prim::ReduceMin || p == Prim::ReduceMax) && d.kind != Kind::Unsigned) {
            // CUB ran unsigned min/max on the raw bits above; the reference is
            // its min/max of the order-preserving image, mapped back.
            flip_keys(a[0]->data, d, n, stream);
            size_t tb = cub_temp.bytes;
            CUDA_CHECK(cubfn(cub_temp.data, tb, a[0]->data, nullptr, cub_result.data, n, stream));
            want = 0;
            CUDA_CHECK(cudaMemcpyAsync(&want, cub_result.data, d.bytes, cudaMemcpyDeviceToHost,
                                       stream));
            CUDA_CHECK(cudaStreamSynchronize(stream));
            want = unflip(want, d);
        }
        if (d.kind == Kind::Float && !is_exact_op(p)) {
            double x, y;
            if (d.bytes == 4) {
                float fx, fy;
                memcpy(&fx, &got, 4);
                memcpy(&fy, &want, 4);
                x = fx;
                y = fy;
            } else {
                memcpy(&x, &got, 8);
                memcpy(&y, &want, 8);
            }
            if (!(std::fabs(x - y) <= float_rtol(d) * std::fabs(y))) {
                char msg[160];
                snprintf(msg, sizeof msg, "ours %.17g, CUB %.17g (rtol %g); ", x, y, float_rtol(d));
                mismatch(row, msg);
            }
        } else if (got != want) {
            char msg[160];
            snprintf(msg, sizeof msg, "ours 0x%" PRIx64 ", CUB 0x%" PRIx64 " (bits); ", got, want);
            mismatch(row, msg);
        }
    }

    void run_scan(Row &row) {
        const Prim p = row.prim;
        const Dtype &d = *row.dtype;
        const uint64_t n = row.n;
        const bool inclusive = p == Prim::ScanInclusive;
        const CubScanFn cubfn = cub_scan_fn(inclusive, cub_type(d), past_32_bits(n));
        if (!cubfn) throw BenchError("no CUB scan instantiated for this dtype and size");
        size_t temp_bytes = 0;
        CUDA_CHECK(cubfn(nullptr, temp_bytes, nullptr, nullptr, n, stream));
        const uint64_t bytes = n * d.bytes;
        // ours and CUB outputs, CUB temp, an allowance for libgpuprim's
        // workspace; for f16/bf16 the f64 input and scan of the check.
        const uint64_t half_check = d.kind == Kind::Half ? 16 * n : 0;
        const uint64_t fixed = 2 * bytes + temp_bytes + bytes / 32 + (64u << 20) + half_check;
        bool copy_in_row = false;
        const int copies = plan_memory(bytes, fixed, row.copy_bytes, copy_in_row);
        if (!copies) return skip(row, bytes + fixed);
        row.copies = copies;
        cub_temp.reserve(temp_bytes);

        std::vector<std::unique_ptr<DeviceArray>> in;
        make_copies(in, copies, d.bytes, n, seed_for(row, 0), fill_for(p, d), float_layout(d));
        DeviceArray ours_out(bytes), cub_out(bytes);
        CUDA_CHECK(cudaMemsetAsync(ours_out.data, 0xA5, bytes, stream));
        CUDA_CHECK(cudaMemsetAsync(cub_out.data, 0x5A, bytes, stream));
        std::vector<std::unique_ptr<Wrapped>> win;
        for (int c = 0; c < copies; ++c) win.emplace_back(new Wrapped(ctx, d.id, in[c]->data, n));
        Wrapped wout(ctx, d.id, ours_out.data, n);
        const gpuprim_scan_kind_t kind = inclusive ? GPUPRIM_SCAN_INCLUSIVE : GPUPRIM_SCAN_EXCLUSIVE;

        const Op ours = [&](uint64_t slot) {
            api_check(ctx,
                      gpuprim_scan(ctx, GPUPRIM_OP_SUM, kind, win[slot % copies]->buffer,
                                   wout.buffer),
                      "scan");
        };
        const Op cub = [&](uint64_t slot) {
            size_t tb = cub_temp.bytes;
            CUDA_CHECK(cubfn(cub_temp.data, tb, in[slot % copies]->data, cub_out.data, n, stream));
        };
        {
            std::unique_ptr<DeviceArray> copy_dst;
            if (copy_in_row) copy_dst = std::make_unique<DeviceArray>(row.copy_bytes);
            time_row(row, ours, cub, Inputs{{&in}, {bytes}}, copy_dst.get());
        }
        if (d.kind != Kind::Half) {
            compare(row, ours_out.data, cub_out.data, n, d,
                    d.kind == Kind::Float ? float_rtol(d) : 0.0);
            return;
        }
        // f16/bf16: CUB adds in the half type (f16 stops growing at 4096:
        // half an ulp exceeds every addend), so the reference is CUB's f64
        // scan of the input widened to f64, element by element within
        // kHalfRtol of the running sum.
        DeviceArray wide(8 * n), ref(8 * n);
        const int grid = std::min(fill_grid(n), prop.multiProcessorCount * 8);
        widen_half_kernel<<<grid, 256, 0, stream>>>(static_cast<const uint16_t *>(in[0]->data),
                                                    static_cast<double *>(wide.data), n, is_bf16(d));
        CUDA_CHECK(cudaGetLastError());
        const CubScanFn f64fn = cub_scan_fn(inclusive, CubType::F64, false);
        size_t tb = 0;
        CUDA_CHECK(f64fn(nullptr, tb, nullptr, nullptr, n, stream));
        cub_temp.reserve(tb);
        tb = cub_temp.bytes;
        CUDA_CHECK(f64fn(cub_temp.data, tb, wide.data, ref.data, n, stream));
        compare(row, ours_out.data, ref.data, n, d, kHalfRtol);
    }

    void run_sort(Row &row) {
        const Prim p = row.prim;
        const Dtype &d = *row.dtype;
        const uint64_t n = row.n;
        const uint32_t vb = value_bytes(p, d);
        const int end_bit = int(sort_end_bit(p, d));
        const CubSortFn cubfn = cub_sort_fn(p == Prim::SortPairs, d.bytes, vb, past_32_bits(n));
        if (!cubfn) throw BenchError("no CUB sort instantiated for this dtype and size");
        size_t temp_bytes = 0;
        CUDA_CHECK(
            cubfn(nullptr, temp_bytes, nullptr, nullptr, nullptr, nullptr, n, 0, end_bit, stream));
        const uint64_t unit = n * (d.bytes + vb);  // keys (+ values) once
        // Timing holds the input copies, one output shared by ours and CUB,
        // CUB's temp and libgpuprim's workspace (documented as at most one
        // more unit). The check afterwards holds one input, both outputs and
        // CUB's temp, with the workspace released.
        const uint64_t fixed = unit + temp_bytes + unit + (64u << 20);
        bool copy_in_row = false;
        const int copies = plan_memory(unit, fixed, row.copy_bytes, copy_in_row);
        if (!copies) return skip(row, unit + fixed);
        row.copies = copies;
        cub_temp.reserve(temp_bytes);

        std::vector<std::unique_ptr<DeviceArray>> keys, values;
        make_copies(keys, copies, d.bytes, n, seed_for(row, 0), fill_for(p, d), float_layout(d));
        if (vb) make_copies(values, copies, vb, n, 0, Fill::Iota);
        auto keys_out = std::make_unique<DeviceArray>(n * d.bytes);
        auto values_out = std::make_unique<DeviceArray>(n * vb);
        const gpuprim_dtype_t value_dtype = vb == 8 ? GPUPRIM_DTYPE_U64 : GPUPRIM_DTYPE_U32;
        // sort_keys_bits16: bits [0, 16) only; everything else: the whole key
        // through gpuprim_sort.
        gpuprim_sort_options_t sort_options;
        gpuprim_sort_options_init(&sort_options);
        sort_options.order = GPUPRIM_ORDER_ASCENDING;
        sort_options.begin_bit = 0;
        sort_options.end_bit = uint32_t(end_bit);
        const bool bit_range = p == Prim::SortKeysBits16;
        std::vector<std::unique_ptr<Wrapped>> wk, wv;
        for (int c = 0; c < copies; ++c) {
            wk.emplace_back(new Wrapped(ctx, d.id, keys[c]->data, n));
            if (vb) wv.emplace_back(new Wrapped(ctx, value_dtype, values[c]->data, n));
        }
        auto wko = std::make_unique<Wrapped>(ctx, d.id, keys_out->data, n);
        std::unique_ptr<Wrapped> wvo;
        if (vb) wvo = std::make_unique<Wrapped>(ctx, value_dtype, values_out->data, n);

        // Out of place: the input stays unsorted, so no run needs a fresh copy.
        const Op ours = [&](uint64_t slot) {
            const int c = int(slot % copies);
            if (bit_range)
                api_check(ctx,
                          gpuprim_sort_with_options(ctx, wk[c]->buffer, vb ? wv[c]->buffer : nullptr,
                                                    wko->buffer, vb ? wvo->buffer : nullptr,
                                                    &sort_options),
                          "sort_with_options");
            else
                api_check(ctx,
                          gpuprim_sort(ctx, wk[c]->buffer, vb ? wv[c]->buffer : nullptr,
                                       wko->buffer, vb ? wvo->buffer : nullptr,
                                       GPUPRIM_ORDER_ASCENDING),
                          "sort");
        };
        const Op cub = [&](uint64_t slot) {
            const int c = int(slot % copies);
            size_t tb = cub_temp.bytes;
            CUDA_CHECK(cubfn(cub_temp.data, tb, keys[c]->data, keys_out->data,
                             vb ? values[c]->data : nullptr, vb ? values_out->data : nullptr, n, 0,
                             end_bit, stream));
        };
        {
            std::unique_ptr<DeviceArray> copy_dst;
            if (copy_in_row) copy_dst = std::make_unique<DeviceArray>(row.copy_bytes);
            Inputs inputs{{&keys}, {n * d.bytes}};
            if (vb) {
                inputs.arrays.push_back(&values);
                inputs.bytes.push_back(n * vb);
            }
            time_row(row, ours, cub, inputs, copy_dst.get());
        }

        // Check: ours once more into the shared output, then CUB sorts the
        // order-preserving image of the same input into fresh buffers.
        CUDA_CHECK(cudaMemsetAsync(keys_out->data, 0xA5, n * d.bytes, stream));
        if (vb) CUDA_CHECK(cudaMemsetAsync(values_out->data, 0xA5, n * vb, stream));
        ours(0);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        wk.clear();
        wv.clear();
        wko.reset();
        wvo.reset();
        keys.resize(1);
        values.resize(vb ? 1 : 0);
        api_check(ctx, gpuprim_context_release_workspace(ctx), "release_workspace");
        DeviceArray ref_keys(n * d.bytes), ref_values(n * vb);
        flip_keys(keys[0]->data, d, n, stream);
        flip_keys(keys_out->data, d, n, stream);
        size_t tb = cub_temp.bytes;
        CUDA_CHECK(cubfn(cub_temp.data, tb, keys[0]->data, ref_keys.data,
                         vb ? values[0]->data : nullptr, vb ? ref_values.data : nullptr, n, 0,
                         end_bit, stream));
        compare(row, keys_out->data, ref_keys.data, n, unsigned_of(d.bytes), 0.0);
        if (vb && row.status == "ok") {
            compare(row, values_out->data, ref_values.data, n, unsigned_of(vb), 0.0);
            if (row.status != "ok") row.note += "(values); ";
        }
    }

    // Our output against the reference, element by element: bit for bit for
    // integers (and any dtype with rtol 0), within rtol for f32/f64, and for
    // f16/bf16 within rtol (half_close) of a reference in f64.
    void compare(Row &row, const void *ours, const void *ref, uint64_t n, const Dtype &d,
                 double rtol) {
        DeviceArray result(sizeof(Mismatch));
        const Mismatch init{0, ~0ull};
        CUDA_CHECK(cudaMemcpyAsync(result.data, &init, sizeof init, cudaMemcpyHostToDevice, stream));
        auto *m = static_cast<Mismatch *>(result.data);
        const int grid = std::min(fill_grid(n), prop.multiProcessorCount * 8);
        const bool half_ref = d.kind == Kind::Half && rtol > 0;
        if (half_ref) {
            compare_half_kernel<<<grid, 256, 0, stream>>>(static_cast<const uint16_t *>(ours),
                                                          static_cast<const double *>(ref), n,
                                                          is_bf16(d), rtol, half_max(is_bf16(d)), m);
        } else if (d.kind == Kind::Float && rtol > 0) {
            if (d.bytes == 4)
                compare_kernel<float><<<grid, 256, 0, stream>>>(
                    static_cast<const float *>(ours), static_cast<const float *>(ref), n, rtol, m);
            else
                compare_kernel<double><<<grid, 256, 0, stream>>>(
                    static_cast<const double *>(ours), static_cast<const double *>(ref), n, rtol, m);
        } else {
            switch (d.bytes) {
            case 1:
                compare_kernel<uint8_t><<<grid, 256, 0, stream>>>(
                    static_cast<const uint8_t *>(ours), static_cast<const uint8_t *>(ref), n, 0, m);
                break;
            case 2:
                compare_kernel<uint16_t><<<grid, 256, 0, stream>>>(
                    static_cast<const uint16_t *>(ours), static_cast<const uint16_t *>(ref), n, 0, m);
                break;
            case 4:
                compare_kernel<uint32_t><<<grid, 256, 0, stream>>>(
                    static_cast<const uint32_t *>(ours), static_cast<const uint32_t *>(ref), n, 0, m);
                break;
            default:
                compare_kernel<uint64_t><<<grid, 256, 0, stream>>>(
                    static_cast<const uint64_t *>(ours), static_cast<const uint64_t *>(ref), n, 0, m);
            }
        }
        CUDA_CHECK(cudaGetLastError());
        Mismatch host{};
        CUDA_CHECK(cudaMemcpyAsync(&host, m, sizeof host, cudaMemcpyDeviceToHost, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        if (host.count) {
            const uint64_t i = host.first;
            const uint32_t ref_bytes = half_ref ? 8 : d.bytes;
            uint64_t x = 0, y = 0;
            CUDA_CHECK(cudaMemcpy(&x, static_cast<const char *>(ours) + i * d.bytes, d.bytes,
                                  cudaMemcpyDeviceToHost));
            CUDA_CHECK(cudaMemcpy(&y, static_cast<const char *>(ref) + i * ref_bytes, ref_bytes,
                                  cudaMemcpyDeviceToHost));
            char msg[200];
            if (half_ref) {
                double yd;
                memcpy(&yd, &y, sizeof yd);
                snprintf(msg, sizeof msg,
                         "%llu of %" PRIu64 " elements differ, first at %" PRIu64
                         ": ours %.9g (0x%04x), f64 reference %.17g (rtol %g); ",
                         host.count, n, i, half_bits_to_double(uint16_t(x), is_bf16(d)),
                         unsigned(x), yd, rtol);
            } else {
                snprintf(msg, sizeof msg,
                         "%llu of %" PRIu64 " elements differ, first at %" PRIu64
                         ": ours 0x%" PRIx64 " CUB 0x%" PRIx64 "; ",
                         host.count, n, i, x, y);
            }
            mismatch(row, msg);
        }
    }

    void mismatch(Row &row, const char *msg) {
        row.status = "MISMATCH";
        row.note += msg;
    }

    void skip(Row &row, uint64_t need) {
        char msg[128];
        snprintf(msg, sizeof msg, "skipped: needs ~%.1f GiB, %.1f GiB free; ",
                 double(need + margin()) / (1 << 30), double(free_bytes()) / (1 << 30));
        row.status = "skipped";
        row.note += msg;
    }
};

// ---------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------

std::string size_label(uint64_t n) {
    char buf[48];
    if (n && (n & (n - 1)) == 0)
        snprintf(buf, sizeof buf, "2^%d", int(std::log2(double(n)) + 0.5));
    else if (n > (uint64_t(1) << 32))
        snprintf(buf, sizeof buf, "2^32+%" PRIu64, n - (uint64_t(1) << 32));
    else
        snprintf(buf, sizeof buf, "%" PRIu64, n);
    return buf;
}

void print_header() {
    printf("%-16s %-4s %-14s %11s %11s %6s %8s %8s %9s %9s %6s %8s  %s\n", "primitive", "type",
           "n", "ours_us", "cub_us", "ratio", "dev_ours", "dev_cub", "ours_GB/s", "cub_GB/s",
           "%copy", "Gkeys/s", "check");
}

// A device-time cell: "=" where it equals the event time beside it.
std::string device_cell(const Row &r, double us) {
    if (r.device_timing == DeviceTiming::SameAsEvents) return "=";
    if (r.device_timing == DeviceTiming::None || us <= 0) return "n/a";
    char buf[16];
    snprintf(buf, sizeof buf, "%.2f", us);
    return buf;
}

void print_row(const Row &r) {
    const bool timed = r.ours_us > 0 && r.cub_us > 0;
    const double og = Bench::gbps(r.bytes, r.ours_us), cg = Bench::gbps(r.bytes, r.cub_us);
    const double copy_gbps = Bench::gbps(2.0 * r.copy_bytes, r.copy_us);
    char gkeys[16] = "-";
    if (is_sort(r.prim) && r.ours_us > 0) snprintf(gkeys, sizeof gkeys, "%.3f", r.n / r.ours_us / 1e3);
    if (timed)
        printf("%-16s %-4s %-14s %11.2f %11.2f %6.2f %8s %8s %9.1f %9.1f %5.0f%% %8s  %s%s%s\n",
               prim_name(r.prim), r.dtype->name, size_label(r.n).c_str(), r.ours_us, r.cub_us,
               r.ours_us / r.cub_us, device_cell(r, r.ours_device_us).c_str(),
               device_cell(r, r.cub_device_us).c_str(), og, cg,
               copy_gbps > 0 ? 100 * og / copy_gbps : 0.0, gkeys, r.status.c_str(),
               r.note.empty() ? "" : "  ", r.note.c_str());
    else
        printf("%-16s %-4s %-14s %11s %11s %6s %8s %8s %9s %9s %6s %8s  %s  %s\n",
               prim_name(r.prim), r.dtype->name, size_label(r.n).c_str(), "-", "-", "-", "-", "-",
               "-", "-", "-", "-", r.status.c_str(), r.note.c_str());
    fflush(stdout);
}

struct Headline {
    Prim prim;
    const char *dtype;
    int log2n;
};
constexpr Headline kHeadlines[] = {
    {Prim::ReduceSum, "i32", 20},     {Prim::ReduceSum, "i32", 24},
    {Prim::ReduceSum, "i32", 28},     {Prim::ScanInclusive, "i32", 10},
    {Prim::ScanInclusive, "i32", 20}, {Prim::ScanInclusive, "i32", 28},
    {Prim::SortKeys, "u32", 10},      {Prim::SortKeys, "u32", 16},
    {Prim::SortKeys, "u32", 28},      {Prim::SortPairs, "u32", 28},
    {Prim::SortKeys, "u64", 26},      {Prim::ScanInclusive, "f64", 27},
    // issue 18
    {Prim::SortKeys, "u16", 28},      {Prim::SortKeys, "f16", 28},
    {Prim::SortKeys, "bf16", 28},     {Prim::SortKeys, "u8", 28},
    {Prim::SortPairs, "u16", 28},     {Prim::SortKeysBits16, "u32", 28},
    {Prim::ReduceSum, "f16", 28},     {Prim::ScanInclusive, "f16", 28},
};

void usage() {
    printf("usage: gpuprim_bench [--quick] [--narrow] [--filter REGEX] [--dtypes REGEX] [--csv PATH]\n"
           "                     [--max-log2 N] [--min-log2 N] [--device N] [--probe] [--list]\n"
           "  --quick        fewer sizes (2^10,16,20,24,26,28 + headline/2^32+ rows), fewer reps\n"
           "  --narrow       only the rows of issue 18: the narrow dtypes, sort_keys_bits16, and\n"
           "                 sort_keys u32 beside them (2^10,16,20,24,28)\n"
           "  --filter RE    only primitives whose name matches RE (reduce_sum, reduce_min,\n"
           "                 reduce_max, reduce_sum_host, dot, scan_inclusive, scan_exclusive,\n"
           "                 sort_keys, sort_keys_bits16, sort_pairs)\n"
           "  --dtypes RE    only dtypes matching RE (i32 u32 i64 u64 f32 f64; i8 u8 i16 u16\n"
           "                 f16 bf16 run reduce_sum, scan_inclusive, sort_keys, sort_pairs only)\n"
           "  --csv PATH     write every row as CSV\n"
           "  --max-log2 N   largest size 2^N (default 33: up to 2^30 plus the rows past 2^32)\n"
           "  --min-log2 N   smallest size 2^N (default 10)\n"
           "  --device N     CUDA device ordinal (default 0)\n"
           "  --probe        create a context as the tests do (GPUPRIM_BACKEND honoured), print\n"
           "                 its backend and device, exit 0 only if it is CUDA\n"
           "  --list         print the rows that would run and exit (needs no GPU)\n");
}

bool parse(int argc, char **argv, Options &o) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&](const char *name) -> const char * {
            if (i + 1 >= argc) throw BenchError(std::string(name) + " needs a value");
            return argv[++i];
        };
        if (a == "--quick") o.quick = true;
        else if (a == "--narrow") o.narrow = true;
        else if (a == "--probe") o.probe = true;
        else if (a == "--list") o.list = true;
        else if (a == "--filter") o.filter = value("--filter");
        else if (a == "--dtypes") o.dtypes = value("--dtypes");
        else if (a == "--csv") o.csv = value("--csv");
        else if (a == "--max-log2") o.max_log2 = atoi(value("--max-log2"));
        else if (a == "--min-log2") o.min_log2 = atoi(value("--min-log2"));
        else if (a == "--device") o.device = atoi(value("--device"));
        else if (a == "-h" || a == "--help") {
            usage();
            exit(0);
        } else {
            fprintf(stderr, "unknown argument %s\n", a.c_str());
            usage();
            return false;
        }
    }
    return true;
}

// Creates a context the way the tests do (AUTO, so GPUPRIM_BACKEND decides).
int probe() {
    gpuprim_context_t ctx = nullptr;
    char err[512] = "";
    const gpuprim_status_t s = gpuprim_context_create(nullptr, &ctx, err, sizeof err);
    if (s != GPUPRIM_SUCCESS) {
        printf("probe: context creation failed: %s: %s\n", gpuprim_get_error_string(s), err);
        return 2;
    }
    gpuprim_backend_t backend = GPUPRIM_BACKEND_CPU;
    char name[256] = "";
    gpuprim_context_get_backend(ctx, &backend);
    gpuprim_context_get_device(ctx, nullptr, name, sizeof name);
    const bool cuda = backend == GPUPRIM_BACKEND_CUDA;
    printf("probe: libgpuprim %s backend=%s device=%s\n", gpuprim_version_string(),
           cuda ? "cuda" : "cpu", name);
    gpuprim_context_destroy(ctx);
    return cuda ? 0 : 2;
}

// POSIX extended regex, searched anywhere in the name; empty matches all.
struct Regex {
    regex_t compiled{};
    bool any = true;
    explicit Regex(const std::string &pattern) : any(pattern.empty()) {
        if (!any && regcomp(&compiled, pattern.c_str(), REG_EXTENDED | REG_NOSUB) != 0)
            throw BenchError("bad regular expression: " + pattern);
    }
    Regex(const Regex &) = delete;
    Regex &operator=(const Regex &) = delete;
    ~Regex() {
        if (!any) regfree(&compiled);
    }
    bool matches(const char *text) const {
        return any || regexec(&compiled, text, 0, nullptr, 0) == 0;
    }
};

std::vector<Row> plan(const Options &o) {
    std::vector<int> log2s;
    if (o.quick)
        log2s = {10, 16, 20, 24, 26, 28};
    else
        for (int k = 10; k <= 30; k += 2) log2s.push_back(k);
    // Rows of the narrow dtypes and sort_keys_bits16 (issue 18): these sizes
    // only, with or without --quick (and all of --narrow).
    const std::vector<int> narrow_log2s = {10, 16, 20, 24, 28};
    const Regex prim_re(o.filter), dtype_re(o.dtypes);
    const uint64_t past_2_32 = (uint64_t(1) << 32) + (uint64_t(1) << 22) + 17;
    std::vector<Row> rows;
    auto add = [&](Prim p, const Dtype &d, uint64_t n) {
        const double l = std::log2(double(n));
        if (l > o.max_log2 + 1e-9 || l < o.min_log2 - 1e-9) return;
        if (!prim_re.matches(prim_name(p)) || !dtype_re.matches(d.name))
            return;
        Row r;
        r.prim = p;
        r.dtype = &d;
        r.n = n;
        rows.push_back(r);
    };
    for (Prim p : kAllPrims) {
        for (const Dtype &d : kDtypes) {
            if (!planned(p, d)) continue;
            const bool issue18 = is_narrow(d) || p == Prim::SortKeysBits16;
            if (o.narrow) {
                // the rows of issue 18, and the full-width u32 key sort they
                // are measured against
                if (issue18 || (p == Prim::SortKeys && d.id == GPUPRIM_DTYPE_U32))
                    for (int k : narrow_log2s) add(p, d, uint64_t(1) << k);
                continue;
            }
            if (issue18) {
                for (int k : narrow_log2s) add(p, d, uint64_t(1) << k);
                continue;
            }
            for (int k : log2s) {
                add(p, d, uint64_t(1) << k);
                if (k == 26 && p == Prim::ScanInclusive && d.id == GPUPRIM_DTYPE_F64)
                    add(p, d, uint64_t(1) << 27);  // a headline row
            }
            // 64-bit counts: u32 scans and u32 key sort past 2^32 elements.
            if (d.id == GPUPRIM_DTYPE_U32 && (is_scan(p) || p == Prim::SortKeys))
                add(p, d, past_2_32);
        }
    }
    return rows;
}

int list(const Options &o) {
    const std::vector<Row> rows = plan(o);
    for (const Row &r : rows)
        printf("%-16s %-4s %-14s model %.3g GB\n", prim_name(r.prim), r.dtype->name,
               size_label(r.n).c_str(), model_bytes(r.prim, *r.dtype, r.n) / 1e9);
    printf("%zu rows\n", rows.size());
    return rows.empty() ? 2 : 0;
}

int run(const Options &o) {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count <= o.device) {
        fprintf(stderr, "gpuprim_bench: no CUDA device %d\n", o.device);
        return 2;
    }
    Bench b;
    b.opt = o;
    CUDA_CHECK(cudaSetDevice(o.device));
    CUDA_CHECK(cudaGetDeviceProperties(&b.prop, o.device));
    int l2 = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, o.device));
    b.l2_bytes = size_t(l2);
    CUDA_CHECK(cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaMallocHost(&b.host_pinned, 64));
    b.blocker.allocate();
    b.l2_flush.allocate(b.l2_bytes, b.stream);

    gpuprim_context_options_t copt;
    gpuprim_context_options_init(&copt);
    copt.backend = GPUPRIM_BACKEND_CUDA;
    copt.device_ordinal = o.device;
    copt.cuda_stream = b.stream;
    char err[512] = "";
    const gpuprim_status_t cs = gpuprim_context_create(&copt, &b.ctx, err, sizeof err);
    if (cs != GPUPRIM_SUCCESS) {
        fprintf(stderr, "gpuprim_bench: CUDA context creation failed: %s: %s\n",
                gpuprim_get_error_string(cs), err);
        return 2;
    }
    char name[256] = "";
    gpuprim_context_get_device(b.ctx, nullptr, name, sizeof name);
    printf("libgpuprim %s on %s (sm_%d%d, %d SMs, %.0f MiB L2, %.1f GiB); CUB %d.%d.%d\n",
           gpuprim_version_string(), name, b.prop.major, b.prop.minor, b.prop.multiProcessorCount,
           b.l2_bytes / 1048576.0, b.prop.totalGlobalMem / 1073741824.0, CUB_MAJOR_VERSION,
           CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION);
    printf("times: median of reps, CUDA events on one stream (calls under ~100 us: per call "
           "in batches of 10); ratio = ours/CUB time (<1: ours "
           "faster); %%copy = ours GB/s over D2D copy GB/s\n"
           "dev_ours, dev_cub: device time per call, each batch enqueued behind a kernel that "
           "holds the stream (no launch latency); '=': same as ours_us/cub_us (calls over "
           "~100 us); n/a: the call waits on the host\n\n");
    b.open_csv();

    std::vector<Row> rows = plan(o);
    if (rows.empty()) {
        fprintf(stderr, "gpuprim_bench: nothing matches the filters\n");
        return 2;
    }
    print_header();
    bool device_lost = false;
    for (Row &r : rows) {
        if (device_lost) {
            r.status = "FAIL";
            r.note = "not run: device in error state";
            b.write_csv(r);
            continue;
        }
        try {
            b.run_row(r);
        } catch (const std::exception &e) {
            r.status = "FAIL";
            r.note += e.what();
            // A sticky CUDA error ends the run; an ordinary one ends the row.
            cudaGetLastError();
            const cudaError_t sticky = cudaStreamSynchronize(b.stream);
            if (sticky != cudaSuccess && cudaDeviceSynchronize() != cudaSuccess) device_lost = true;
            try {
                b.release_all_workspace();
            } catch (const std::exception &) {
            }
        }
        print_row(r);
        b.write_csv(r);
    }

    int ok = 0, bad = 0, skipped = 0;
    for (const Row &r : rows) {
        if (r.status == "ok") ++ok;
        else if (r.status == "skipped") ++skipped;
        else ++bad;
    }
    if (bad) {
        printf("\nFAILURES:\n");
        for (const Row &r : rows)
            if (r.status != "ok" && r.status != "skipped") print_row(r);
    }
    printf("\nHeadline (ours vs CUB on %s):\n", name);
    print_header();
    for (const Headline &h : kHeadlines) {
        const Row *found = nullptr;
        for (const Row &r : rows)
            if (r.prim == h.prim && strcmp(r.dtype->name, h.dtype) == 0 &&
                r.n == (uint64_t(1) << h.log2n))
                found = &r;
        if (found) print_row(*found);
    }
    printf("\nrows: %d ok, %d skipped (memory), %d failed%s%s\n", ok, skipped, bad,
           o.csv.empty() ? "" : "; csv: ", o.csv.c_str());
    return bad ? 1 : 0;
}

}  // namespace
}  // namespace gpuprim_bench

int main(int argc, char **argv) {
    gpuprim_bench::Options o;
    try {
        if (!gpuprim_bench::parse(argc, argv, o)) return 2;
        if (o.probe) return gpuprim_bench::probe();
        if (o.list) return gpuprim_bench::list(o);
        return gpuprim_bench::run(o);
    } catch (const std::exception &e) {
        fprintf(stderr, "gpuprim_bench: %s\n", e.what());
        return 2;
    }
}
