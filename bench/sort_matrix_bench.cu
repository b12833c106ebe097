// SPDX-License-Identifier: Apache-2.0
// The sort's distribution matrix (issue 21): gpuprim_sort beside CUB's
// DeviceRadixSort on the same device buffers, for key distributions real data
// has, so no change can quietly lose one of them.
//
//   sort_matrix_bench [--quick] [--filter SUBSTRING] [--csv FILE]
//                     [--min-log2 N] [--max-log2 N] [--no-small] [--no-matrix]
//                     [--no-floats]
//
// Rows: every distribution below x {u32, u64 keys} x {keys only, pairs with
// u32 values} x 2^20, 2^22 ... 2^28, ascending, out of place (u8 and u16
// keys too where the distribution has a meaning for them); then the
// presorted shortcuts (sorted in place, sorted out of place, strictly
// decreasing out of place); float keys with the value ranges real data has
// (f16, bf16, f32, f64 x normal, uniform [0, 1), uniform [-1, 1),
// exponentially spread magnitudes, keys and pairs; with --no-matrix,
// uniform u16 keys beside them, the bar for the 2-byte floats); and small
// sizes 2^10 ... 2^20 (u32 keys, u32/u32 pairs; one call between events and
// batched).
//
// Timing: CUDA events around one call, 3 warm-up calls, median; inputs
// rotate over copies that together exceed L2 (50 MB). Every row's output
// (keys and values) is compared bit for bit with CUB's: both sorts are
// stable, and the values are the input positions.
#include <gpuprim/gpuprim.h>

#include <cub/device/device_radix_sort.cuh>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench_util.h"

namespace {

using namespace gpuprim_bench;

cudaStream_t stream;
gpuprim_context_t ctx;
int repeats = 11;
FILE *csv;
constexpr uint64_t kL2RotationBytes = 100ull << 20;  // copies rotate past twice the 50 MB L2

enum class Dist {
    Uniform,
    And2,          // AND of 2 random words: 0.81 bits of entropy per bit
    And4,          // AND of 4: 0.34 bits per bit
    Few,           // 16 distinct random values
    Equal,         // one value
    Sorted,        // strictly increasing, random gaps
    Reversed,      // strictly decreasing
    LowBits,       // only the low 8 bits vary
    Zipf,          // hashed ids whose frequency falls as 1/rank
    NearlySorted,  // sorted, 0.1% of the elements replaced by random keys
};
const char *dist_name(Dist d) {
    switch (d) {
    case Dist::Uniform: return "uniform";
    case Dist::And2: return "and2";
    case Dist::And4: return "and4";
    case Dist::Few: return "few16";
    case Dist::Equal: return "equal";
    case Dist::Sorted: return "sorted";
    case Dist::Reversed: return "reversed";
    case Dist::LowBits: return "lowbits8";
    case Dist::Zipf: return "zipf";
    case Dist::NearlySorted: return "sorted+0.1%";
    }
    return "?";
}
// The low-entropy rows, whose goal is 1.1x CUB.
bool low_entropy(Dist d) { return d == Dist::And2 || d == Dist::And4 || d == Dist::Few || d == Dist::LowBits || d == Dist::Zipf; }
// Distributions that keep their meaning in 1- and 2-byte keys.
bool narrow_meaningful(Dist d) { return d != Dist::Sorted && d != Dist::Reversed && d != Dist::NearlySorted; }
const Dist kAllDists[] = {Dist::Uniform, Dist::And2,    Dist::And4,     Dist::Few,  Dist::Equal,
                          Dist::Sorted,  Dist::Reversed, Dist::LowBits, Dist::Zipf, Dist::NearlySorted};

// Float keys as real data has them (issue 34): activations, logits,
// probabilities, and magnitudes spread over many binades. Their high byte
// (sign and exponent) takes few values, unlike the full-entropy bit
// patterns of the integer rows.
enum class FloatDist {
    Normal,       // standard normal
    Unit,         // uniform in [0, 1)
    Symmetric,    // uniform in [-1, 1)
    Exponential,  // random sign, magnitude 2^u with u uniform in [-20, 15): fits f16
};
const char *float_dist_name(FloatDist d) {
    switch (d) {
    case FloatDist::Normal: return "normal";
    case FloatDist::Unit: return "unif[0:1)";
    case FloatDist::Symmetric: return "unif[-1:1)";
    case FloatDist::Exponential: return "exp-spread";
    }
    return "?";
}
const FloatDist kFloatDists[] = {FloatDist::Normal, FloatDist::Unit, FloatDist::Symmetric, FloatDist::Exponential};

// The key types of the rows: their name and gpuprim dtype.
template <typename K> struct KeyType;
template <> struct KeyType<uint8_t> { static constexpr const char *name = "u8"; static constexpr gpuprim_dtype_t dtype = GPUPRIM_DTYPE_U8; };
template <> struct KeyType<uint16_t> { static constexpr const char *name = "u16"; static constexpr gpuprim_dtype_t dtype = GPUPRIM_DTYPE_U16; };
template <> struct KeyType<uint32_t> { static constexpr const char *name = "u32"; static constexpr gpuprim_dtype_t dtype = GPUPRIM_DTYPE_U32; };
template <> struct KeyType<uint64_t> { static constexpr const char *name = "u64"; static constexpr gpuprim_dtype_t dtype = GPUPRIM_DTYPE_U64; };
template <> struct KeyType<__half> { static constexpr const char *name = "f16"; static constexpr gpuprim_dtype_t dtype = GPUPRIM_DTYPE_F16; };
template <> struct KeyType<__nv_bfloat16> { static constexpr const char *name = "bf16"; static constexpr gpuprim_dtype_t dtype = GPUPRIM_DTYPE_BF16; };
template <> struct KeyType<float> { static constexpr const char *name = "f32"; static constexpr gpuprim_dtype_t dtype = GPUPRIM_DTYPE_F32; };
template <> struct KeyType<double> { static constexpr const char *name = "f64"; static constexpr gpuprim_dtype_t dtype = GPUPRIM_DTYPE_F64; };

__device__ __host__ inline uint64_t mix64(uint64_t x) {  // splitmix64's finalizer
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
__device__ inline uint64_t random_word(uint64_t i, uint64_t stream_id) { return mix64(i * 8 + stream_id); }

template <typename K>
__global__ void fill_kernel(K *keys, uint64_t n, Dist dist) {
    constexpr int kBits = int(sizeof(K)) * 8;
    const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
    // Sorted rows: key i lies in its own interval of the key range, so the
    // keys are distinct (reversed is then strictly decreasing).
    const uint64_t range_step = kBits == 64 ? (~0ull / n) : (uint64_t(1) << (kBits % 64)) / n;
    const uint64_t step = range_step > 0 ? range_step : 1;
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        const uint64_t r = random_word(i, 0);
        uint64_t key = 0;
        switch (dist) {
        case Dist::Uniform: key = r; break;
        case Dist::And2: key = r & random_word(i, 1); break;
        case Dist::And4: key = r & random_word(i, 1) & random_word(i, 2) & random_word(i, 3); break;
        case Dist::Few: key = mix64(1000 + r % 16); break;
        case Dist::Equal: key = 0x5a5a5a5a12345678ull; break;
        case Dist::Sorted: key = i * step + r % step; break;
        case Dist::Reversed: key = (n - 1 - i) * step + r % step; break;
        case Dist::LowBits: key = 0x7b3a91c4e2d05f00ull | (r & 0xff); break;
        case Dist::Zipf: {
            // rank ~ 1/x over [1, n]: exp of a uniform draw of [0, ln n).
            const double u = double(r >> 11) * (1.0 / 9007199254740992.0);
            const uint64_t rank = uint64_t(exp(u * log(double(n))));
            key = mix64(rank);
            break;
        }
        case Dist::NearlySorted:
            key = random_word(i, 4) % 1000 == 0 ? random_word(i, 5) : i * step + r % step;
            break;
        }
        keys[i] = K(key);
    }
}

// A uniform draw of (0, 1] from 53 random bits.
__device__ inline double unit_draw(uint64_t r) { return (double(r >> 11) + 1.0) * (1.0 / 9007199254740992.0); }

template <typename K> __device__ inline K from_double(double v) { return K(v); }
template <> __device__ inline __half from_double<__half>(double v) { return __float2half_rn(float(v)); }
template <> __device__ inline __nv_bfloat16 from_double<__nv_bfloat16>(double v) { return __float2bfloat16_rn(float(v)); }
template <typename K> __device__ inline bool is_zero(K k) { return k == K(0); }
template <> __device__ inline bool is_zero<__half>(__half k) { return __half2float(k) == 0.0f; }
template <> __device__ inline bool is_zero<__nv_bfloat16>(__nv_bfloat16 k) { return __bfloat162float(k) == 0.0f; }

template <typename K>
__global__ void fill_float_kernel(K *keys, uint64_t n, FloatDist dist) {
    const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        const double u = unit_draw(random_word(i, 0)), v = unit_draw(random_word(i, 1));
        double x = 0;
        switch (dist) {
        case FloatDist::Normal: x = sqrt(-2.0 * log(u)) * cospi(2.0 * v); break;  // Box-Muller
        case FloatDist::Unit: x = 1.0 - u; break;
        case FloatDist::Symmetric: x = 2.0 * (1.0 - u) - 1.0; break;
        case FloatDist::Exponential: x = (v < 0.5 ? -1.0 : 1.0) * exp2(-20.0 + 35.0 * (1.0 - u)); break;
        }
        // No -0.0: CUB orders -0.0 and +0.0 as equal, libgpuprim -0.0 first
        // (gpuprim.h), so the outputs would differ where both occur (tiny
        // normal draws round to zero in f16 and bf16).
        const K key = from_double<K>(x);
        keys[i] = is_zero(key) ? from_double<K>(0.0) : key;
    }
}

__global__ void iota_kernel(uint32_t *values, uint64_t n) {
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
        values[i] = uint32_t(i);
}

__global__ void mismatch_kernel(const unsigned char *a, const unsigned char *b, uint64_t bytes,
                                unsigned long long *first) {
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < bytes; i += uint64_t(gridDim.x) * blockDim.x)
        if (a[i] != b[i]) atomicMin(first, (unsigned long long)i);
}

// Index of the first differing byte, or ~0.
uint64_t first_mismatch(const void *a, const void *b, uint64_t bytes) {
    Device first(sizeof(unsigned long long));
    CHECK_CUDA(cudaMemsetAsync(first.p, 0xff, sizeof(unsigned long long), stream));
    mismatch_kernel<<<1024, 256, 0, stream>>>(static_cast<const unsigned char *>(a),
                                              static_cast<const unsigned char *>(b), bytes,
                                              static_cast<unsigned long long *>(first.p));
    CHECK_CUDA(cudaGetLastError());
    unsigned long long host = 0;
    CHECK_CUDA(cudaMemcpyAsync(&host, first.p, sizeof host, cudaMemcpyDeviceToHost, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    return host;
}

struct Row {
    std::string name;
    uint64_t n;
    Timing ours, cub;
    bool low_entropy;
    double goal;  // CUB time / ours the issue asks for
};
std::vector<Row> rows;

void report(const Row &r) {
    const double ratio = r.cub.single_us / r.ours.single_us;
    printf("%-30s 2^%-2d %10.1f us %10.1f us  %5.2fx  %6.2f Gkeys/s  goal %.2fx %s", r.name.c_str(),
           int(std::log2(double(r.n))), r.ours.single_us, r.cub.single_us, ratio, r.n / r.ours.single_us / 1e3,
           r.goal, ratio >= r.goal ? "met" : "MISSED");
    if (r.ours.batched_us > 0)
        printf("  batched %.2f / %.2f us (%.2fx)", r.ours.batched_us, r.cub.batched_us,
               r.cub.batched_us / r.ours.batched_us);
    printf("\n");
    if (csv)
        fprintf(csv, "%s,%llu,%.3f,%.3f,%.3f,%.3f,%.3f,%.2f\n", r.name.c_str(), (unsigned long long)r.n,
                r.ours.single_us, r.cub.single_us, r.ours.batched_us, r.cub.batched_us, ratio, r.goal);
    fflush(stdout);
}

enum class Mode { OutOfPlace, InPlace };

// One row: keys K (pairs: with u32 positions) made by fill, n keys; label
// names the distribution.
template <typename K>
void run_row(const char *label, const std::function<void(K *)> &fill, bool is_low_entropy, uint64_t n, bool pairs,
             Mode mode, double goal, bool batched, const std::string &filter) {
    char name[96];
    snprintf(name, sizeof name, "%s %s %s%s", label, KeyType<K>::name, pairs ? "pairs" : "keys",
             mode == Mode::InPlace ? " in place" : "");
    if (!filter.empty() && std::string(name).find(filter) == std::string::npos) return;
    const gpuprim_dtype_t key_dtype = KeyType<K>::dtype;
    const uint64_t key_bytes = n * sizeof(K), value_bytes = pairs ? n * 4 : 0;
    const int copies = int(std::max<uint64_t>(1, std::min<uint64_t>(16, kL2RotationBytes / (key_bytes + value_bytes))));

    std::vector<std::unique_ptr<Device>> keys, values;
    for (int c = 0; c < copies; ++c) {
        keys.emplace_back(new Device(key_bytes));
        if (pairs) values.emplace_back(new Device(value_bytes));
    }
    fill(static_cast<K *>(keys[0]->p));
    CHECK_CUDA(cudaGetLastError());
    if (pairs) {
        iota_kernel<<<1024, 256, 0, stream>>>(static_cast<uint32_t *>(values[0]->p), n);
        CHECK_CUDA(cudaGetLastError());
    }
    for (int c = 1; c < copies; ++c) {
        CHECK_CUDA(cudaMemcpyAsync(keys[c]->p, keys[0]->p, key_bytes, cudaMemcpyDeviceToDevice, stream));
        if (pairs)
            CHECK_CUDA(cudaMemcpyAsync(values[c]->p, values[0]->p, value_bytes, cudaMemcpyDeviceToDevice, stream));
    }
    Device keys_out(key_bytes), values_out(value_bytes);
    size_t temp_bytes = 0;
    if (pairs)
        CHECK_CUDA(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, static_cast<const K *>(nullptr),
                                                   static_cast<K *>(nullptr), static_cast<const uint32_t *>(nullptr),
                                                   static_cast<uint32_t *>(nullptr), n, 0, int(sizeof(K) * 8), stream));
    else
        CHECK_CUDA(cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, static_cast<const K *>(nullptr),
                                                  static_cast<K *>(nullptr), n, 0, int(sizeof(K) * 8), stream));
    Device temp(temp_bytes);

    std::vector<gpuprim_buffer_t> wk, wv;
    for (int c = 0; c < copies; ++c) {
        wk.push_back(wrap(ctx, key_dtype, keys[c]->p, n));
        if (pairs) wv.push_back(wrap(ctx, GPUPRIM_DTYPE_U32, values[c]->p, n));
    }
    gpuprim_buffer_t wko = wrap(ctx, key_dtype, keys_out.p, n);
    gpuprim_buffer_t wvo = pairs ? wrap(ctx, GPUPRIM_DTYPE_U32, values_out.p, n) : nullptr;

    // In place: the sorted input stays sorted, so every call sees the same data.
    const auto ours = [&](int c) {
        if (mode == Mode::InPlace)
            CHECK_GP(ctx, gpuprim_sort(ctx, wk[c], pairs ? wv[c] : nullptr, wk[c], pairs ? wv[c] : nullptr,
                                       GPUPRIM_ORDER_ASCENDING));
        else
            CHECK_GP(ctx, gpuprim_sort(ctx, wk[c], pairs ? wv[c] : nullptr, wko, wvo, GPUPRIM_ORDER_ASCENDING));
    };
    const auto cub_sort = [&](int c, void *kout, void *vout) {
        size_t bytes = temp_bytes;
        if (pairs)
            CHECK_CUDA(cub::DeviceRadixSort::SortPairs(temp.p, bytes, static_cast<const K *>(keys[c]->p),
                                                       static_cast<K *>(kout),
                                                       static_cast<const uint32_t *>(values[c]->p),
                                                       static_cast<uint32_t *>(vout), n, 0, int(sizeof(K) * 8), stream));
        else
            CHECK_CUDA(cub::DeviceRadixSort::SortKeys(temp.p, bytes, static_cast<const K *>(keys[c]->p),
                                                      static_cast<K *>(kout), n, 0, int(sizeof(K) * 8), stream));
    };
    Row row{name, n, {}, {}, is_low_entropy, goal};
    row.ours = time_call(stream, repeats, ours, copies, batched);
    row.cub = time_call(stream, repeats, [&](int c) { cub_sort(c, keys_out.p, values_out.p); }, copies, batched);

    // Check: ours (into the poisoned output, or in place on copy 0) against CUB's.
    Device ref_keys(key_bytes), ref_values(value_bytes);
    cub_sort(0, ref_keys.p, ref_values.p);
    CHECK_CUDA(cudaMemsetAsync(keys_out.p, 0xa5, key_bytes, stream));
    if (pairs) CHECK_CUDA(cudaMemsetAsync(values_out.p, 0xa5, value_bytes, stream));
    ours(0);
    const void *got_keys = mode == Mode::InPlace ? keys[0]->p : keys_out.p;
    const void *got_values = mode == Mode::InPlace ? (pairs ? values[0]->p : nullptr) : values_out.p;
    const uint64_t bad_key = first_mismatch(got_keys, ref_keys.p, key_bytes);
    const uint64_t bad_value = pairs ? first_mismatch(got_values, ref_values.p, value_bytes) : ~0ull;
    if (bad_key != ~0ull || bad_value != ~0ull) {
        fprintf(stderr, "%s n=%llu: output differs from CUB's (%s byte %llu)\n", name, (unsigned long long)n,
                bad_key != ~0ull ? "keys" : "values",
                (unsigned long long)(bad_key != ~0ull ? bad_key : bad_value));
        exit(1);
    }
    for (gpuprim_buffer_t b : wk) gpuprim_buffer_destroy(ctx, b);
    for (gpuprim_buffer_t b : wv) gpuprim_buffer_destroy(ctx, b);
    gpuprim_buffer_destroy(ctx, wko);
    if (wvo) gpuprim_buffer_destroy(ctx, wvo);
    CHECK_GP(ctx, gpuprim_context_release_workspace(ctx));
    report(row);
    rows.push_back(row);
}

// A row of the integer distributions.
template <typename K>
void run_row(Dist dist, uint64_t n, bool pairs, Mode mode, double goal, bool batched, const std::string &filter,
             const char *label = nullptr) {
    const auto fill = [&](K *keys) { fill_kernel<K><<<1024, 256, 0, stream>>>(keys, n, dist); };
    run_row<K>(label ? label : dist_name(dist), fill, low_entropy(dist), n, pairs, mode, goal, batched, filter);
}

// A row of float keys K of one distribution.
template <typename K>
void run_float_row(FloatDist dist, uint64_t n, bool pairs, double goal, const std::string &filter) {
    const auto fill = [&](K *keys) { fill_float_kernel<K><<<1024, 256, 0, stream>>>(keys, n, dist); };
    run_row<K>(float_dist_name(dist), fill, false, n, pairs, Mode::OutOfPlace, goal, false, filter);
}

// The float rows of one size: every float type and distribution, keys and
// pairs. Issue 34 asks f16 and bf16 keys at 2^28 for 1.05x CUB and at most
// 1.05x our time for uniform u16 keys, which the matrix has; with_u16 adds
// that row here when the matrix does not run.
void run_float_rows(uint64_t n, bool with_u16, const std::string &filter) {
    const double half_goal = n >= (uint64_t(1) << 28) ? 1.05 : 1.0;
    if (with_u16) run_row<uint16_t>(Dist::Uniform, n, false, Mode::OutOfPlace, 1.0, false, filter);
    for (FloatDist dist : kFloatDists)
        for (bool pairs : {false, true}) {
            run_float_row<__half>(dist, n, pairs, half_goal, filter);
            run_float_row<__nv_bfloat16>(dist, n, pairs, half_goal, filter);
            run_float_row<float>(dist, n, pairs, 1.0, filter);
            run_float_row<double>(dist, n, pairs, 1.0, filter);
        }
}

}  // namespace

int main(int argc, char **argv) {
    bool quick = false, small = true, matrix = true, floats = true;
    int min_log2 = 20, max_log2 = 28;
    std::string filter, csv_path;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--quick")) quick = true;
        else if (!strcmp(argv[i], "--no-small")) small = false;
        else if (!strcmp(argv[i], "--no-matrix")) matrix = false;
        else if (!strcmp(argv[i], "--no-floats")) floats = false;
        else if (!strcmp(argv[i], "--filter") && i + 1 < argc) filter = argv[++i];
        else if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv_path = argv[++i];
        else if (!strcmp(argv[i], "--min-log2") && i + 1 < argc) min_log2 = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--max-log2") && i + 1 < argc) max_log2 = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: sort_matrix_bench [--quick] [--filter SUBSTRING] [--csv FILE] [--min-log2 N] "
                            "[--max-log2 N] [--no-small] [--no-matrix] [--no-floats]\n");
            return 2;
        }
    }
    if (quick) repeats = 5;
    if (!csv_path.empty()) {
        csv = fopen(csv_path.c_str(), "w");
        if (csv) fprintf(csv, "row,n,ours_us,cub_us,ours_batched_us,cub_batched_us,cub_over_ours,goal\n");
    }
    CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    ctx = cuda_context(stream);
    if (!ctx) {
        fprintf(stderr, "no CUDA context\n");
        return 1;
    }
    cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    printf("sort_matrix_bench: %s, libgpuprim %s, CUB %d.%d.%d\n", prop.name, gpuprim_version_string(),
           GPUPRIM_BENCH_CUB_VERSION);
    printf("%-30s %-4s %13s %13s  %6s\n", "row (ascending)", "n", "gpuprim", "CUB", "CUB/us");
    if (matrix) {
        for (int log2n = min_log2; log2n <= max_log2; log2n += 2) {
            const uint64_t n = uint64_t(1) << log2n;
            for (Dist dist : kAllDists) {
                const double goal = low_entropy(dist) ? 1.1 : 1.0;
                run_row<uint32_t>(dist, n, false, Mode::OutOfPlace, goal, false, filter);
                run_row<uint32_t>(dist, n, true, Mode::OutOfPlace, goal, false, filter);
                run_row<uint64_t>(dist, n, false, Mode::OutOfPlace, goal, false, filter);
                run_row<uint64_t>(dist, n, true, Mode::OutOfPlace, goal, false, filter);
                // 1- and 2-byte keys where the distribution has a meaning
                // there (no sorted runs: n exceeds their key range).
                if (narrow_meaningful(dist))
                    for (bool pairs : {false, true}) {
                        run_row<uint16_t>(dist, n, pairs, Mode::OutOfPlace, goal, false, filter);
                        run_row<uint8_t>(dist, n, pairs, Mode::OutOfPlace, goal, false, filter);
                    }
            }
        }
        // The presorted shortcuts at 2^28 u32 keys (issue 21's goals).
        if (max_log2 >= 28) {
            const uint64_t n = uint64_t(1) << 28;
            run_row<uint32_t>(Dist::Sorted, n, false, Mode::InPlace, 10.0, false, filter);
            run_row<uint32_t>(Dist::Sorted, n, false, Mode::OutOfPlace, 5.0, false, filter, "shortcut sorted");
            run_row<uint32_t>(Dist::Reversed, n, false, Mode::OutOfPlace, 5.0, false, filter, "shortcut reversed");
            run_row<uint32_t>(Dist::Sorted, n, true, Mode::InPlace, 10.0, false, filter);
        }
    }
    if (floats)
        for (int log2n = min_log2; log2n <= max_log2; log2n += 2) run_float_rows(uint64_t(1) << log2n, !matrix, filter);
    if (small) {
        for (int log2n = 10; log2n <= 20; ++log2n) {
            const uint64_t n = uint64_t(1) << log2n;
            run_row<uint32_t>(Dist::Uniform, n, false, Mode::OutOfPlace, 1.0, true, filter, "small");
            run_row<uint32_t>(Dist::Uniform, n, true, Mode::OutOfPlace, 1.0, true, filter, "small");
        }
    }
    int missed = 0;
    for (const Row &r : rows) missed += r.cub.single_us / r.ours.single_us < r.goal;
    printf("%zu rows, %d below their goal\n", rows.size(), missed);
    gpuprim_context_destroy(ctx);
    if (csv) fclose(csv);
    return 0;
}
