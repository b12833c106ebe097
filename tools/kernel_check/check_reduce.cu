// SPDX-License-Identifier: Apache-2.0
// Standalone check and timing of the CUDA reduce (src/cuda/reduce/: reduce + dot).
//   check_reduce full    : correctness (all ops x dtypes, adversarial inputs,
//                          misalignment, mapped host result, determinism,
//                          > 2^32 elements), tuning sweep, timings vs CUB
//   check_reduce small   : correctness on small sizes only (for compute-sanitizer)
// Build: cmake -DGPUPRIM_BUILD_TOOLS=ON (tools/kernel_check/README.md).
#include "cuda/reduce/dispatch_reduce.cuh"
#include "cuda/reduce/reduce.h"
#include "harness.h"

#include <cub/cub.cuh>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>


// Inside a namespace: a global using-directive would make `cuda` ambiguous
// with CUB's ::cuda in nvcc's generated stubs.
namespace rcheck {
using namespace gpuprim;
using namespace gpuprim::cuda;


static long g_cases = 0, g_failures = 0, g_skipped_bound = 0;
static std::mt19937_64 g_rng(12345);

enum Kind { kSum = 0, kMin = 1, kMax = 2, kDot = 3 };
static const char *kind_name[] = {"sum", "min", "max", "dot"};

using kernel_check::DT;

struct Harness {
    kernel_check::KernelEnv *kernel_env = nullptr;
    DeviceEnv env{};
    Workspace *workspace = nullptr;
    uint32_t *counters = nullptr;
    char *scratch_a = nullptr, *scratch_b = nullptr;  // test inputs
    size_t scratch_bytes = 0;
    void *d_result = nullptr;
    void *h_mapped = nullptr;
    bool exact_allocations = false;

    void init(size_t scratch) {
        // A blocking stream: the plain cudaMemcpy/cudaMemset calls below (legacy
        // default stream) then order with the kernels.
        kernel_env = new kernel_check::KernelEnv(true);
        env = kernel_env->env;
        workspace = &kernel_env->workspace;
        counters = env.zeroed_counters;
        scratch_bytes = scratch;
        CK(cudaMalloc(&scratch_a, scratch));
        CK(cudaMalloc(&scratch_b, scratch));
        CK(cudaMalloc(&d_result, 64));
        CK(cudaHostAlloc(&h_mapped, 64, cudaHostAllocMapped));
        kernel_env->print_device();
    }
    void free_scratch() {
        cudaFree(scratch_a);
        cudaFree(scratch_b);
        scratch_a = scratch_b = nullptr;
    }
    bool counters_zero() { return kernel_env->counters_zero(); }
};
static Harness H;

// ---------------------------------------------------------------- references
template <typename T>
static T ref_exact(Kind k, const T *a, const T *b, size_t n) {
    T acc;
    if (k == kSum || k == kDot) acc = SumOp<T>::identity();
    else if (k == kMin) acc = MinOp<T>::identity();
    else acc = MaxOp<T>::identity();
    for (size_t i = 0; i < n; ++i) {
        switch (k) {
        case kSum: acc = SumOp<T>()(acc, a[i]); break;
        case kMin: acc = MinOp<T>()(acc, a[i]); break;
        case kMax: acc = MaxOp<T>()(acc, a[i]); break;
        case kDot: acc = multiply_add(a[i], b[i], acc); break;
        }
    }
    return acc;
}

// Longest chain of roundings any input goes through in the kernel, for the
// given shape: sequential fold per thread, warp + block trees, the last
// block's fold of the block totals, and its trees again. Generous constants.
template <typename T>
static double rounding_depth(const ReduceTuning &t, uint64_t n, int inputs) {
    using namespace reduce_detail;
    // One block per SM: the fewest blocks, the longest per-thread chains;
    // the longer tile of the two (sums and dots fold the same way).
    const uint32_t grid = inputs == 2 ? grid_size<T, SumOp<T>, true>(t, H.env.sm_count, 1, n)
                                      : grid_size<T, SumOp<T>, false>(t, H.env.sm_count, 1, n);
    const uint64_t items = uint64_t(inputs == 2 ? kReduceVectorsPerThreadHeavy : kReduceVectorsPerThread) * (16 / sizeof(T));
    const uint64_t tile = uint64_t(kReduceBlockThreads) * items;
    const uint64_t tiles = (n + tile - 1) / tile;
    const uint64_t per_block = (tiles + grid - 1) / grid + 1;
    return 4.0 + double(per_block * items) + double((grid + kReduceBlockThreads - 1) / kReduceBlockThreads) + 30.0;
}

using kernel_check::show;

// Returns "" when got is right, else a reason. Float SUM/DOT: within a sound
// error bound of a long double reference; everything else bitwise exact.
template <typename T>
static std::string judge(Kind k, const ReduceTuning &t, const T *a, const T *b, size_t n, T got) {
    if (std::is_integral_v<T> || k == kMin || k == kMax) {
        const T want = ref_exact(k, a, b, n);
        if (bit_cast<bits_t<T>>(want) == bit_cast<bits_t<T>>(got)) return "";
        return "want " + show(want) + " got " + show(got);
    } else {
        long double ref = 0, mag = 0;
        bool all_nonneg = true, all_nonpos = true;
        for (size_t i = 0; i < n; ++i) {
            const long double x = k == kDot ? (long double)a[i] * (long double)b[i] : (long double)a[i];
            ref += x;
            mag += std::fabs(x);
            if (!(x >= 0)) all_nonneg = false;
            if (!(x <= 0)) all_nonpos = false;
        }
        // Zeros of either sign add up to +0, as from the +0 identity on the CPU.
        if (mag == 0 && !std::isnan(ref))
            return bit_cast<bits_t<T>>(got) == 0 ? "" : "want +0 got " + show(got);
        if (std::isnan(ref)) return std::isnan(got) ? "" : "want NaN got " + show(got);
        if (std::isinf(ref)) return got == T(ref) ? "" : "want " + show(T(ref)) + " got " + show(got);
        const double u = std::ldexp(1.0, -std::numeric_limits<T>::digits);
        const double d = rounding_depth<T>(t, n, k == kDot ? 2 : 1);
        const long double gamma = d * u / (1 - d * u);
        // Relative rounding per step, plus an absolute denorm_min per step
        // where results fall into the subnormal range.
        // (absolute: any of the n + d roundings may land there).
        const long double bound = gamma * mag + mag * n * std::ldexp(1.0L, -62) +
                                  (n + d) * std::numeric_limits<T>::denorm_min();
        const long double big = std::numeric_limits<T>::max();
        if (mag * (1 + gamma) >= big) {
            if (all_nonneg && ref > 2 * big) return got == std::numeric_limits<T>::infinity() ? "" : "want +inf got " + show(got);
            if (all_nonpos && ref < -2 * big) return got == -std::numeric_limits<T>::infinity() ? "" : "want -inf got " + show(got);
            ++g_skipped_bound;  // an intermediate may overflow: order dependent
            return "";
        }
        const long double err = std::fabs((long double)got - ref);
        if (std::isfinite(got) && err <= bound) return "";
        char buf[200];
        std::snprintf(buf, sizeof buf, "ref %.17Lg got %s err %.3Lg > bound %.3Lg", ref, show(got).c_str(), err, bound);
        return buf;
    }
}

// ---------------------------------------------------------------- one case
// Copies the inputs to scratch at element offsets, poisons the result, runs,
// judges. mode 0: public entry point; 1: reduce_with(tuning); 2: result in
// mapped pinned host memory.
template <typename T>
static bool run_case(Kind k, const std::vector<T> &ha, const std::vector<T> &hb, size_t offa,
                     size_t offb, const char *what, int mode = 0, const ReduceTuning *tuning = nullptr) {
    const size_t n = ha.size();
    if ((n + 4) * sizeof(T) > H.scratch_bytes) { std::printf("scratch too small\n"); std::exit(2); }
    T *da = reinterpret_cast<T *>(H.scratch_a) + offa;
    T *db = reinterpret_cast<T *>(H.scratch_b) + offb;
    T *exact_a = nullptr, *exact_b = nullptr, *exact_result = nullptr;
    if (H.exact_allocations) {
        // Allocations of exactly the input's extent, so memcheck sees any over-read.
        CK(cudaMalloc(&exact_a, (offa + n) * sizeof(T) + (n == 0)));
        CK(cudaMalloc(&exact_b, (offb + n) * sizeof(T) + (n == 0)));
        CK(cudaMalloc(&exact_result, sizeof(T)));
        da = exact_a + offa;
        db = exact_b + offb;
    }
    if (n) CK(cudaMemcpy(da, ha.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    if (n && k == kDot) CK(cudaMemcpy(db, hb.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    void *result = mode == 2 ? H.h_mapped : exact_result ? exact_result : H.d_result;
    std::memset(H.h_mapped, 0xA5, 16);
    CK(cudaMemset(result, 0xA5, sizeof(T)));
    const ReduceTuning t = tuning ? *tuning : reduce_tuning(H.env.code_arch);
    try {
        if (mode == 1) {
            if (k == kDot) reduce_detail::dot_with(H.env, t, DT<T>::v, da, db, n, result);
            else reduce_detail::reduce_with(H.env, t, gpuprim_op_t(k), DT<T>::v, da, n, result);
        } else {
            if (k == kDot) dot(H.env, DT<T>::v, da, db, n, result);
            else reduce(H.env, gpuprim_op_t(k), DT<T>::v, da, n, result);
        }
    } catch (const Error &e) {
        std::printf("FAIL %s: threw %s\n", what, e.what());
        ++g_failures;
        return false;
    }
    CK(cudaStreamSynchronize(H.env.stream));
    T got;
    if (mode == 2) std::memcpy(&got, H.h_mapped, sizeof(T));
    else CK(cudaMemcpy(&got, result, sizeof(T), cudaMemcpyDeviceToHost));
    if (exact_a) {
        CK(cudaFree(exact_a));
        CK(cudaFree(exact_b));
        CK(cudaFree(exact_result));
    }
    ++g_cases;
    const std::string why = judge(k, t, ha.data(), hb.data(), n, got);
    if (why.empty()) return true;
    if (++g_failures <= 40)
        std::printf("FAIL %s %s n=%zu offa=%zu offb=%zu mode=%d: %s\n", kind_name[k], what, n, offa, offb, mode, why.c_str());
    return false;
}

// ---------------------------------------------------------------- inputs
template <typename T>
static T random_value(int style) {
    if constexpr (std::is_integral_v<T>) {
        if (style == 0) return T(g_rng());
        return T(int64_t(g_rng() % 2001) - 1000);  // small, with duplicates
    } else {
        std::uniform_real_distribution<double> u(-1.0, 1.0);
        if (style == 0) return T(u(g_rng));
        // wide exponent range, random sign
        return T(std::ldexp(u(g_rng), int(g_rng() % 60) - 30));
    }
}

template <typename T>
static std::vector<std::pair<std::string, std::vector<T>>> patterns(size_t n, bool all) {
    using L = std::numeric_limits<T>;
    std::vector<std::pair<std::string, std::vector<T>>> out;
    auto make = [&](const char *name, auto gen) {
        std::vector<T> v(n);
        for (size_t i = 0; i < n; ++i) v[i] = gen(i);
        out.emplace_back(name, std::move(v));
    };
    make("random", [&](size_t) { return random_value<T>(0); });
    if (!all) return out;
    make("random-small", [&](size_t) { return random_value<T>(1); });
    make("all-equal", [&](size_t) { return std::is_integral_v<T> ? T(0x5A5A5A5A) : T(0.1); });
    make("type-min", [&](size_t) { return L::lowest(); });
    make("type-max", [&](size_t) { return L::max(); });
    make("alt-min-max", [&](size_t i) { return i % 2 ? L::max() : L::lowest(); });
    // The extreme values at the edges (head, tail) and in the middle.
    for (size_t pos : {size_t(0), n - 1, n / 2, std::min<size_t>(2, n - 1), n >= 3 ? n - 3 : 0}) {
        if (n == 0) break;
        std::vector<T> v(n);
        for (size_t i = 0; i < n; ++i) v[i] = random_value<T>(1);
        v[pos] = L::lowest();
        if (n > 1) v[(pos + n / 3 + 1) % n] = L::max();
        out.emplace_back("extremes@" + std::to_string(pos), std::move(v));
    }
    if constexpr (std::is_floating_point_v<T>) {
        using B = bits_t<T>;
        const T qnan = L::quiet_NaN();
        const T nan_payload = bit_cast<T>(B(bit_cast<B>(qnan) | 5));
        const T neg_nan = bit_cast<T>(B(bit_cast<B>(qnan) | (B(1) << (sizeof(T) * 8 - 1)) | 3));
        const T snan = L::signaling_NaN();
        if (n) {
            for (size_t pos : {size_t(0), n - 1, n / 2}) {
                std::vector<T> v(n);
                for (size_t i = 0; i < n; ++i) v[i] = random_value<T>(0);
                v[pos] = qnan;
                out.emplace_back("nan@" + std::to_string(pos), std::move(v));
            }
            std::vector<T> v(n);
            for (size_t i = 0; i < n; ++i) v[i] = random_value<T>(0);
            v[n - 1] = nan_payload;
            v[n / 2] = neg_nan;
            v[0] = snan;
            if (n > 7) v[7] = qnan;
            out.emplace_back("nans-mixed-payloads", std::move(v));
        }
        make("all-neg-zero", [&](size_t) { return T(-0.0); });
        make("pos-neg-zero", [&](size_t) { return g_rng() % 2 ? T(-0.0) : T(0.0); });
        make("neg-zero-last-pos", [&](size_t i) { return i + 1 == n ? T(0.0) : T(-0.0); });
        make("pos-zero-then-neg", [&](size_t i) { return i + 1 == n ? T(-0.0) : T(0.0); });
        make("with-pos-inf", [&](size_t i) { return i == n / 3 ? L::infinity() : random_value<T>(0); });
        make("with-neg-inf", [&](size_t i) { return i + 1 == n ? -L::infinity() : random_value<T>(0); });
        make("pos-and-neg-inf", [&](size_t i) { return i == 0 ? L::infinity() : i + 1 == n ? -L::infinity() : random_value<T>(0); });
        make("all-inf", [&](size_t) { return L::infinity(); });
        make("denormals", [&](size_t) { return T(random_value<T>(0) * L::denorm_min() * 8); });
    }
    return out;
}

template <typename T>
static void test_dtype(bool small) {
    // Tile sizes of the wide (sums, integer MIN/MAX) and the heavy (float
    // MIN/MAX, dot) kernels: the sizes below straddle both.
    const size_t tile = size_t(kReduceBlockThreads) * kReduceVectorsPerThread * (16 / sizeof(T));
    const size_t heavy_tile = size_t(kReduceBlockThreads) * kReduceVectorsPerThreadHeavy * (16 / sizeof(T));
    std::vector<size_t> sizes;
    if (small) {
        // Sanitizer run: both the one-block and the multi-block paths, partial tiles, head and tail.
        sizes = {0, 1, 5, 33, 257, heavy_tile + 1, tile + 1, 4097, 12345, 65537};
    } else {
        sizes = {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 255, 256, 257,
                 1023, 1024, 1025, 2047, 2048, 2049, tile - 1, tile, tile + 1,
                 2 * tile + 3, 4095, 4096, 4097, 8191, 8192, 8193, 12345, 16383, 16384,
                 16385, 65535, 65537, heavy_tile - 1, heavy_tile, heavy_tile + 1, 2 * heavy_tile + 3};
        // Around the one-wave grids (a tile per block, then the round robin's second turn).
        const size_t blocks = size_t(H.env.sm_count) * reduce_tuning(H.env.code_arch).blocks_per_sm;
        for (size_t s : {size_t(1) << 20, (size_t(1) << 20) + 7, tile * blocks - 1, tile * blocks + 1,
                         3 * tile * blocks + 5, (size_t(1) << 24) + 1, heavy_tile * blocks - 1,
                         heavy_tile * blocks + 1, 3 * heavy_tile * blocks + 5})
            sizes.push_back(s);
    }
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    const size_t max_off = 16 / sizeof(T) - 1;
    const long fails_before = g_failures, cases_before = g_cases;
    for (size_t n : sizes) {
        const bool big = n > 70000;
        for (auto &[name, data] : patterns<T>(n, !big && !small)) {
            std::vector<T> b(n);
            for (auto &x : b) x = random_value<T>(std::is_floating_point_v<T> ? 0 : 1);
            for (size_t off = 0; off <= ((big || small) ? 1 : max_off); ++off) {
                for (int k = 0; k < 3; ++k) run_case<T>(Kind(k), data, b, off, 0, name.c_str());
                run_case<T>(kDot, data, b, off, off, name.c_str());
                run_case<T>(kDot, data, b, off, (off + 1) % (max_off + 1), name.c_str());  // scalar path
            }
        }
    }
    std::printf("  %-4s %6ld cases, %ld failures\n", dtype_name(DT<T>::v), g_cases - cases_before,
                g_failures - fails_before);
}

// ---------------------------------------------------------------- timing
// Median device time (us) of launch(i) over reps, each bracketed by events.
static float time_us(const std::function<void(int)> &launch, int reps = 30) {
    return kernel_check::launch_time_us(H.env.stream, launch, reps, 5);
}

// Mean device time (us) per launch of back-to-back launches: events around
// `batch` launches, median of 7 batches.
static float time_batch_us(const std::function<void(int)> &launch, int batch = 100) {
    return kernel_check::batch_time_us(H.env.stream, launch, batch, 7, 5);
}

static float time_either(bool batch, const std::function<void(int)> &launch) {
    return batch ? time_batch_us(launch) : time_us(launch);
}

template <typename T>
__global__ void fill_kernel(T *p, uint64_t n, uint64_t seed) {
    for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x) {
        uint64_t h = (i + seed) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
        h *= 0xBF58476D1CE4E5B9ull;
        h ^= h >> 32;
        if constexpr (std::is_floating_point_v<T>) p[i] = T(int64_t(h % 2000001) - 1000000) * T(1e-6);
        else p[i] = T(h);
    }
}

static constexpr int kCopies = 3;
static char *g_pool[kCopies];
static const size_t kPoolBytes = size_t(1) << 30;

template <typename T>
static void fill_pool() {
    for (int c = 0; c < kCopies; ++c)
        fill_kernel<T><<<1024, 256, 0, H.env.stream>>>(reinterpret_cast<T *>(g_pool[c]), kPoolBytes / sizeof(T), c * 977 + 1);
    CK(cudaStreamSynchronize(H.env.stream));
}

static int copies_for(size_t bytes) { return bytes > (size_t(50) << 20) ? kCopies : 1; }

// Ours (public entry, or reduce_with for a tuning) on n elements of T at element offset off.
template <typename T>
static float time_ours(Kind k, size_t n, size_t offa = 0, size_t offb = 0, const ReduceTuning *t = nullptr,
                       bool batch = false) {
    const size_t bytes = n * sizeof(T) * (k == kDot ? 2 : 1);
    const int copies = copies_for(bytes);
    return time_either(batch, [&](int i) {
        const T *a = reinterpret_cast<const T *>(g_pool[i % copies]) + offa;
        const T *b = reinterpret_cast<const T *>(g_pool[i % copies] + kPoolBytes / 2) + offb;
        if (t) {
            if (k == kDot) reduce_detail::dot_with(H.env, *t, DT<T>::v, a, b, n, H.d_result);
            else reduce_detail::reduce_with(H.env, *t, gpuprim_op_t(k), DT<T>::v, a, n, H.d_result);
        } else {
            if (k == kDot) dot(H.env, DT<T>::v, a, b, n, H.d_result);
            else reduce(H.env, gpuprim_op_t(k), DT<T>::v, a, n, H.d_result);
        }
    });
}

template <typename T>
static float time_cub_sum(size_t n, bool batch = false) {
    const int copies = copies_for(n * sizeof(T));
    size_t temp_bytes = 0;
    CK(cub::DeviceReduce::Sum(nullptr, temp_bytes, (const T *)g_pool[0], (T *)H.d_result, (int64_t)n, H.env.stream));
    void *temp;
    CK(cudaMalloc(&temp, temp_bytes));
    const float us = time_either(batch, [&](int i) {
        CK(cub::DeviceReduce::Sum(temp, temp_bytes, (const T *)g_pool[i % copies], (T *)H.d_result, (int64_t)n, H.env.stream));
    });
    CK(cudaFree(temp));
    return us;
}

// Ours and CUB agree exactly on an integer sum of the timing data.
template <typename T>
static bool same_as_cub(size_t n) {
    T ours, theirs;
    reduce(H.env, GPUPRIM_OP_SUM, DT<T>::v, g_pool[0], n, H.d_result);
    CK(cudaMemcpy(&ours, H.d_result, sizeof(T), cudaMemcpyDeviceToHost));
    size_t temp_bytes = 0;
    CK(cub::DeviceReduce::Sum(nullptr, temp_bytes, (const T *)g_pool[0], (T *)H.d_result, (int64_t)n, H.env.stream));
    void *temp;
    CK(cudaMalloc(&temp, temp_bytes));
    CK(cub::DeviceReduce::Sum(temp, temp_bytes, (const T *)g_pool[0], (T *)H.d_result, (int64_t)n, H.env.stream));
    CK(cudaMemcpy(&theirs, H.d_result, sizeof(T), cudaMemcpyDeviceToHost));
    CK(cudaFree(temp));
    return ours == theirs;
}

static double gbps(size_t bytes, float us) { return bytes / (us * 1e3); }

// ---------------------------------------------------------------- sections
static void determinism() {
    const size_t n = size_t(1) << 26;
    std::vector<float> hf(n);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    for (auto &x : hf) x = std::ldexp(u(g_rng), int(g_rng() % 16) - 8);
    float *da = reinterpret_cast<float *>(H.scratch_a);
    float *db = reinterpret_cast<float *>(H.scratch_b);
    CK(cudaMemcpy(da, hf.data(), n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(da + n + 1, hf.data(), n * 4, cudaMemcpyHostToDevice));  // misaligned copy
    CK(cudaMemcpy(db, hf.data(), n * 4, cudaMemcpyHostToDevice));
    struct Variant { const char *name; Kind k; const float *a; const float *b; };
    const Variant vars[] = {{"f32 sum 2^26", kSum, da, nullptr},
                            {"f32 sum 2^26 offset 1", kSum, da + n + 1, nullptr},
                            {"f32 dot 2^26", kDot, da, db},
                            {"f32 dot 2^26 a aligned b offset 1", kDot, db, da + n + 1}};
    for (const Variant &v : vars) {
        // The issue's test: 100 runs of an f32 sum; 20 of each other variant.
        const int runs = &v == &vars[0] ? 100 : 20;
        uint32_t first = 0;
        bool same = true;
        for (int r = 0; r < runs; ++r) {
            CK(cudaMemset(H.d_result, 0xA5, 8));
            if (v.k == kDot) dot(H.env, GPUPRIM_DTYPE_F32, v.a, v.b, n, H.d_result);
            else reduce(H.env, GPUPRIM_OP_SUM, GPUPRIM_DTYPE_F32, v.a, n, H.d_result);
            uint32_t bits;
            CK(cudaMemcpy(&bits, H.d_result, 4, cudaMemcpyDeviceToHost));
            if (r == 0) first = bits;
            same = same && bits == first;
        }
        // and within the bound of the long double reference
        const std::string why = judge<float>(v.k, reduce_tuning(H.env.code_arch), hf.data(), hf.data(), n, bit_cast<float>(first));
        ++g_cases;
        if (!same || !why.empty()) ++g_failures;
        std::printf("  %-36s %d runs %s, %s %s\n", v.name, runs, same ? "bitwise identical" : "DIFFER",
                    why.empty() ? "within bound" : "OUT OF BOUND:", why.c_str());
    }
    // f64 likewise
    const size_t m = size_t(1) << 25;
    std::vector<double> hd(m);
    std::uniform_real_distribution<double> ud(-1.0, 1.0);
    for (auto &x : hd) x = ud(g_rng);
    double *dd = reinterpret_cast<double *>(H.scratch_a);
    CK(cudaMemcpy(dd, hd.data(), m * 8, cudaMemcpyHostToDevice));
    uint64_t first = 0;
    bool same = true;
    for (int r = 0; r < 20; ++r) {
        reduce(H.env, GPUPRIM_OP_SUM, GPUPRIM_DTYPE_F64, dd, m, H.d_result);
        uint64_t bits;
        CK(cudaMemcpy(&bits, H.d_result, 8, cudaMemcpyDeviceToHost));
        if (r == 0) first = bits;
        same = same && bits == first;
    }
    const std::string why = judge<double>(kSum, reduce_tuning(H.env.code_arch), hd.data(), hd.data(), m, bit_cast<double>(first));
    ++g_cases;
    if (!same || !why.empty()) ++g_failures;
    std::printf("  %-36s 20 runs %s, %s %s\n", "f64 sum 2^25", same ? "bitwise identical" : "DIFFER",
                why.empty() ? "within bound" : "OUT OF BOUND:", why.c_str());
}

static void mapped_and_shapes() {
    // Result in mapped pinned host memory, single- and multi-block.
    for (size_t n : {size_t(0), size_t(100), size_t(5000), size_t(100000), size_t(1) << 20}) {
        std::vector<int32_t> a(n), b(n);
        for (auto &x : a) x = random_value<int32_t>(0);
        for (auto &x : b) x = random_value<int32_t>(1);
        std::vector<double> f(n), g(n);
        for (auto &x : f) x = random_value<double>(0);
        for (auto &x : g) x = random_value<double>(0);
        run_case<int32_t>(kSum, a, b, 0, 0, "mapped-host", 2);
        run_case<int32_t>(kMax, a, b, 1, 0, "mapped-host", 2);
        run_case<double>(kSum, f, g, 0, 0, "mapped-host", 2);
        run_case<double>(kDot, f, g, 0, 1, "mapped-host", 2);
    }
    // Other grid shapes than the default (used by the sweep): one block per
    // SM, 2 and 4 per SM with multi-block from 1 element, one block up to 1 MiB.
    const ReduceTuning shapes[] = {{1, 0}, {2, 0}, {4, 0}, {8, 1 << 20}};
    for (const ReduceTuning &t : shapes) {
        for (size_t n : {size_t(1), size_t(5000), size_t(300000), size_t(3) << 20}) {
            std::vector<uint32_t> a(n), b(n);
            for (auto &x : a) x = random_value<uint32_t>(0);
            for (auto &x : b) x = random_value<uint32_t>(0);
            std::vector<float> f(n), g(n);
            for (auto &x : f) x = random_value<float>(0);
            for (auto &x : g) x = random_value<float>(0);
            run_case<uint32_t>(kSum, a, b, 1, 0, "shape", 1, &t);
            run_case<uint32_t>(kMin, a, b, 0, 0, "shape", 1, &t);
            run_case<uint32_t>(kDot, a, b, 2, 1, "shape", 1, &t);
            run_case<float>(kSum, f, g, 3, 0, "shape", 1, &t);
            run_case<float>(kMax, f, g, 1, 0, "shape", 1, &t);
            run_case<float>(kDot, f, g, 1, 1, "shape", 1, &t);
        }
    }
}

static void huge() {
    size_t free_b, total_b;
    CK(cudaMemGetInfo(&free_b, &total_b));
    const uint64_t n = (uint64_t(1) << 32) + (1 << 20) + 3;
    if (free_b < n * 4 + (size_t(1) << 30)) { std::printf("  huge: skipped, %zu MB free\n", free_b >> 20); return; }
    uint32_t *p;
    CK(cudaMalloc(&p, n * 4));
    // Every element 0x01010101, except the last (0x02020202) and one past
    // 2^32 (0): sum, min, max and dot have closed forms mod 2^32.
    CK(cudaMemset(p, 0x01, n * 4));
    CK(cudaMemset(p + (n - 1), 0x02, 4));
    const uint64_t zero_at = (uint64_t(1) << 32) + 5;
    CK(cudaMemset(p + zero_at, 0x00, 4));
    const uint32_t one = 0x01010101u, two = 0x02020202u;
    struct Expect { const char *name; int kind; size_t off; uint32_t want; };
    const Expect ex[] = {
        {"u32 sum n=2^32+2^20+3", kSum, 0, uint32_t((n - 2) * one + two)},
        {"u32 min", kMin, 0, 0u},
        {"u32 max", kMax, 0, two},
        {"u32 dot(a,a)", kDot, 0, uint32_t((n - 2) * uint32_t(one * one) + uint32_t(two * two))},
        {"u32 sum from offset 1 (misaligned)", kSum, 1, uint32_t((n - 3) * one + two)},
        {"i32 sum", 10, 0, uint32_t((n - 2) * one + two)},
    };
    for (const Expect &e : ex) {
        CK(cudaMemset(H.d_result, 0xA5, 8));
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        CK(cudaEventRecord(e0, H.env.stream));
        const uint64_t cnt = n - e.off;
        if (e.kind == kDot) dot(H.env, GPUPRIM_DTYPE_U32, p, p, cnt, H.d_result);
        else if (e.kind == 10) reduce(H.env, GPUPRIM_OP_SUM, GPUPRIM_DTYPE_I32, p, cnt, H.d_result);
        else reduce(H.env, gpuprim_op_t(e.kind), GPUPRIM_DTYPE_U32, p + e.off, cnt, H.d_result);
        CK(cudaEventRecord(e1, H.env.stream));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        uint32_t got;
        CK(cudaMemcpy(&got, H.d_result, 4, cudaMemcpyDeviceToHost));
        ++g_cases;
        const bool ok = got == e.want;
        if (!ok) ++g_failures;
        std::printf("  %-36s %s (got 0x%08x want 0x%08x) %.2f ms, %.0f GB/s\n", e.name, ok ? "ok" : "FAIL", got,
                    e.want, ms, gbps(cnt * 4 * (e.kind == kDot ? 2 : 1), ms * 1000));
    }
    CK(cudaFree(p));
    // u64 past 2^32 elements too, when memory allows.
    CK(cudaMemGetInfo(&free_b, &total_b));
    if (free_b < n * 8 + (size_t(1) << 30)) { std::printf("  huge u64: skipped, %zu MB free\n", free_b >> 20); return; }
    uint64_t *q;
    CK(cudaMalloc(&q, n * 8));
    CK(cudaMemset(q, 0x01, n * 8));
    CK(cudaMemset(q + (n - 1), 0x03, 8));
    const uint64_t o8 = 0x0101010101010101ull, t8 = 0x0303030303030303ull;
    uint64_t got;
    reduce(H.env, GPUPRIM_OP_SUM, GPUPRIM_DTYPE_U64, q, n, H.d_result);
    CK(cudaMemcpy(&got, H.d_result, 8, cudaMemcpyDeviceToHost));
    bool ok = got == (n - 1) * o8 + t8;
    reduce(H.env, GPUPRIM_OP_MAX, GPUPRIM_DTYPE_I64, q, n, H.d_result);
    uint64_t got_max;
    CK(cudaMemcpy(&got_max, H.d_result, 8, cudaMemcpyDeviceToHost));
    ok = ok && got_max == t8;
    g_cases += 2;
    if (!ok) ++g_failures;
    std::printf("  %-36s %s\n", "u64 sum / i64 max n=2^32+2^20+3", ok ? "ok" : "FAIL");
    CK(cudaFree(q));
}

// MinMaxKey (core/ops.h): the key order is the order MinOp/MaxOp select by,
// and value(key(x)) == x, on specials (every NaN edge, ±0, ±inf, subnormal
// edges) and random bit patterns. Host only.
template <typename T, bool kMin>
static void key_order_check() {
    using K = MinMaxKey<T, kMin>;
    using B = typename K::Key;
    const B expo = sizeof(T) == 4 ? B(0x7F800000u) : B(0x7FF0000000000000ull);
    std::vector<B> specials;
    for (B sign : {B(0), K::kSign}) {
        for (B m : {B(0), B(1), B(2), B(K::kNans - 1), K::kNans, B(K::kNans >> 1), B((K::kNans >> 1) + 1)})
            specials.push_back(sign | expo | m);
        for (B v : {B(0), B(1), B(expo - 1), B(K::kNans), B(K::kNans + 1)}) specials.push_back(sign | v);
    }
    std::mt19937_64 rng(kMin ? 7 : 8);
    auto pick = [&]() -> B { return (rng() & 1) ? specials[rng() % specials.size()] : B(rng()); };
    long bad = 0;
    for (int i = 0; i < 2000000; ++i) {
        const B a = pick(), b = pick();
        const T fa = bit_cast<T>(a), fb = bit_cast<T>(b);
        const T want = kMin ? MinOp<T>()(fa, fb) : MaxOp<T>()(fa, fb);
        const B ka = K::key(fa), kb = K::key(fb);
        const T got = K::value(kMin ? std::min(ka, kb) : std::max(ka, kb));
        if (bit_cast<B>(got) != bit_cast<B>(want) || bit_cast<B>(K::value(ka)) != a) {
            if (bad++ < 3)
                std::printf("FAIL key order %s %s: 0x%llx 0x%llx\n", sizeof(T) == 4 ? "f32" : "f64",
                            kMin ? "min" : "max", (unsigned long long)a, (unsigned long long)b);
        }
    }
    const T identity = kMin ? MinOp<T>::identity() : MaxOp<T>::identity();
    if (K::key(identity) != (kMin ? std::numeric_limits<B>::max() : B(0))) ++bad;
    ++g_cases;
    if (bad) ++g_failures;
    std::printf("  %-36s %s\n", sizeof(T) == 4 ? (kMin ? "f32 min keys" : "f32 max keys") : (kMin ? "f64 min keys" : "f64 max keys"),
                bad ? "FAIL" : "ok (2M pairs, specials, round trip, identity)");
}

// Tuning A/B: blocks per SM 4 vs 8 (capped by residency), mean per launch of
// 100 back-to-back launches, several dtypes and ops, 2^16..2^26.
static void blocks_per_sm_ab() {
    std::printf("\nblocks/SM 4 vs 8 (us per launch, batch of 100; inputs > 50 MB rotate)\n");
    ReduceTuning four = reduce_tuning(H.env.code_arch), eight = four;
    four.blocks_per_sm = 4;
    eight.blocks_per_sm = 8;
    auto row = [&](const char *name, auto time) {
        for (int lg = 16; lg <= 26; lg += 2)
            std::printf("  %-10s 2^%d  4: %8.2f  8: %8.2f\n", name, lg, time(lg, &four), time(lg, &eight));
    };
    fill_pool<int32_t>();
    row("i32 sum", [](int lg, const ReduceTuning *t) { return time_ours<int32_t>(kSum, size_t(1) << lg, 0, 0, t, true); });
    row("i32 dot", [](int lg, const ReduceTuning *t) { return time_ours<int32_t>(kDot, size_t(1) << lg, 0, 0, t, true); });
    fill_pool<int64_t>();
    row("i64 sum", [](int lg, const ReduceTuning *t) { return time_ours<int64_t>(kSum, size_t(1) << lg, 0, 0, t, true); });
    fill_pool<float>();
    row("f32 min", [](int lg, const ReduceTuning *t) { return time_ours<float>(kMin, size_t(1) << lg, 0, 0, t, true); });
    row("f32 dot", [](int lg, const ReduceTuning *t) { return time_ours<float>(kDot, size_t(1) << lg, 0, 0, t, true); });
    fill_pool<double>();
    row("f64 sum", [](int lg, const ReduceTuning *t) { return time_ours<double>(kSum, size_t(1) << lg, 0, 0, t, true); });
    row("f64 max", [](int lg, const ReduceTuning *t) { return time_ours<double>(kMax, size_t(1) << lg, 0, 0, t, true); });
}

static void sweep() {
    std::printf("\nsweep (us; i32 sum 2^24, 2^28; f64 sum 2^27; f32 dot 2^27; f32 max 2^28)\n");
    for (int per_sm : {1, 2, 4, 6, 8}) {
        const ReduceTuning t{per_sm, 16384};
        fill_pool<int32_t>();
        const float a = time_ours<int32_t>(kSum, size_t(1) << 24, 0, 0, &t);
        const float b = time_ours<int32_t>(kSum, size_t(1) << 28, 0, 0, &t);
        fill_pool<float>();
        const float e = time_ours<float>(kMax, size_t(1) << 28, 0, 0, &t);
        const float d = time_ours<float>(kDot, size_t(1) << 27, 0, 0, &t);
        fill_pool<double>();
        const float c = time_ours<double>(kSum, size_t(1) << 27, 0, 0, &t);
        std::printf("  block %3d x %2d/SM: %7.1f %7.1f (%4.0f GB/s) %7.1f %7.1f %7.1f\n", kReduceBlockThreads, per_sm,
                    a, b, gbps(size_t(1) << 30, b), c, d, e);
    }
    std::printf("single-block vs multi-block (i32 sum, us)\n");
    fill_pool<int32_t>();
    ReduceTuning single = reduce_tuning(H.env.code_arch), multi = single;
    single.single_block_max_bytes = uint64_t(1) << 40;
    multi.single_block_max_bytes = 0;
    for (size_t n = 256; n <= 65536; n *= 2)
        std::printf("  n=%6zu single %5.2f multi %5.2f\n", n, time_ours<int32_t>(kSum, n, 0, 0, &single),
                    time_ours<int32_t>(kSum, n, 0, 0, &multi));
}

static void timings() {
    std::printf("\ntimings (device us, median of 30, event-bracketed; inputs > 50 MB rotate 3 copies)\n");
    std::printf("  (batch: mean per launch of 100 back-to-back launches)\n");
    std::printf("  %-8s %9s %9s %9s %9s %9s %9s  %s\n", "i32 sum", "ours us", "CUB us", "ours bat", "CUB bat",
                "ours GB/s", "CUB GB/s", "ours==CUB");
    fill_pool<int32_t>();
    for (int lg = 10; lg <= 28; lg += 2) {
        const size_t n = size_t(1) << lg;
        const float o = time_ours<int32_t>(kSum, n), c = time_cub_sum<int32_t>(n);
        const float ob = time_ours<int32_t>(kSum, n, 0, 0, nullptr, true), cb = time_cub_sum<int32_t>(n, true);
        std::printf("  2^%-6d %9.2f %9.2f %9.2f %9.2f %9.0f %9.0f  %s\n", lg, o, c, ob, cb, gbps(n * 4, o),
                    gbps(n * 4, c), same_as_cub<int32_t>(n) ? "yes" : "NO");
    }
    std::printf("  1 GiB of input per call:\n");
    auto row = [&](const char *name, float o, float c, size_t bytes) {
        if (c > 0) std::printf("  %-30s %8.1f us %5.0f GB/s   CUB %8.1f us %5.0f GB/s\n", name, o, gbps(bytes, o), c, gbps(bytes, c));
        else std::printf("  %-30s %8.1f us %5.0f GB/s\n", name, o, gbps(bytes, o));
    };
    const size_t G = size_t(1) << 30;
    row("i32 sum 2^28 offset 1", time_ours<int32_t>(kSum, (size_t(1) << 28) - 4, 1), 0, G - 16);
    row("u32 dot 2^27", time_ours<uint32_t>(kDot, size_t(1) << 27), 0, G);
    fill_pool<int64_t>();
    row("i64 sum 2^27", time_ours<int64_t>(kSum, size_t(1) << 27), time_cub_sum<int64_t>(size_t(1) << 27), G);
    row("i64 min 2^27", time_ours<int64_t>(kMin, size_t(1) << 27), 0, G);
    fill_pool<float>();
    row("f32 sum 2^28", time_ours<float>(kSum, size_t(1) << 28), time_cub_sum<float>(size_t(1) << 28), G);
    row("f32 min 2^28", time_ours<float>(kMin, size_t(1) << 28), 0, G);
    row("f32 dot 2^27", time_ours<float>(kDot, size_t(1) << 27), 0, G);
    row("f32 dot 2^27 misaligned pair", time_ours<float>(kDot, (size_t(1) << 27) - 4, 0, 1), 0, G - 32);
    fill_pool<double>();
    row("f64 sum 2^27", time_ours<double>(kSum, size_t(1) << 27), time_cub_sum<double>(size_t(1) << 27), G);
    row("f64 max 2^27", time_ours<double>(kMax, size_t(1) << 27), 0, G);
    row("f64 dot 2^26", time_ours<double>(kDot, size_t(1) << 26), 0, G);
    row("f64 sum 2^20", time_ours<double>(kSum, size_t(1) << 20), time_cub_sum<double>(size_t(1) << 20), size_t(8) << 20);
}

// Launch sequence for `ncu --metrics gpu__time_duration.sum`: each call's
// label goes to labels (CUB calls are one or two kernels, ending with its
// single-tile kernel), so the kernel durations can be matched to calls.
static void ncu_sequence(FILE *labels) {
    fill_pool<int32_t>();
    const ReduceTuning def = reduce_tuning(H.env.code_arch);
    ReduceTuning single = def, multi = def;
    single.single_block_max_bytes = uint64_t(1) << 40;
    multi.single_block_max_bytes = 0;
    size_t temp_bytes = 0;
    CK(cub::DeviceReduce::Sum(nullptr, temp_bytes, (const int32_t *)g_pool[0], (int32_t *)H.d_result, (int64_t)(size_t(1) << 28), H.env.stream));
    void *temp;
    CK(cudaMalloc(&temp, temp_bytes));
    for (int lg = 10; lg <= 28; lg += 2) {
        const size_t n = size_t(1) << lg;
        const int copies = copies_for(n * 4);
        for (int r = 0; r < 5; ++r) {
            reduce(H.env, GPUPRIM_OP_SUM, GPUPRIM_DTYPE_I32, g_pool[r % copies], n, H.d_result);
            std::fprintf(labels, "ours sum %zu\n", n);
            size_t tb = temp_bytes;
            CK(cub::DeviceReduce::Sum(temp, tb, (const int32_t *)g_pool[r % copies], (int32_t *)H.d_result, (int64_t)n, H.env.stream));
            std::fprintf(labels, "cub sum %zu\n", n);
        }
    }
    for (size_t n = 4096; n <= 131072; n *= 2) {
        for (int r = 0; r < 5; ++r) {
            reduce_detail::reduce_with(H.env, single, GPUPRIM_OP_SUM, GPUPRIM_DTYPE_I32, g_pool[0], n, H.d_result);
            std::fprintf(labels, "ours single %zu\n", n);
            reduce_detail::reduce_with(H.env, multi, GPUPRIM_OP_SUM, GPUPRIM_DTYPE_I32, g_pool[0], n, H.d_result);
            std::fprintf(labels, "ours multi %zu\n", n);
        }
    }
    CK(cudaStreamSynchronize(H.env.stream));
    CK(cudaFree(temp));
}

int run(int argc, char **argv) {
    if (argc > 2 && std::strcmp(argv[1], "ncu") == 0) {
        H.init(size_t(1) << 20);
        for (int c = 0; c < kCopies; ++c) CK(cudaMalloc(&g_pool[c], kPoolBytes));
        FILE *labels = std::fopen(argv[2], "w");
        ncu_sequence(labels);
        std::fclose(labels);
        return 0;
    }
    if (argc > 1 && std::strcmp(argv[1], "perf") == 0) {  // timings only
        H.init(size_t(1) << 20);
        for (int c = 0; c < kCopies; ++c) CK(cudaMalloc(&g_pool[c], kPoolBytes));
        timings();
        return 0;
    }
    if (argc > 1 && std::strcmp(argv[1], "bps") == 0) {  // blocks/SM A/B only
        H.init(size_t(1) << 20);
        for (int c = 0; c < kCopies; ++c) CK(cudaMalloc(&g_pool[c], kPoolBytes));
        blocks_per_sm_ab();
        return 0;
    }
    const bool small = argc > 1 && std::strcmp(argv[1], "small") == 0;
    const bool do_sweep = argc > 2 && std::strcmp(argv[2], "sweep") == 0;
    H.init(small ? size_t(1) << 20 : (size_t(1) << 29) + (size_t(1) << 20));
    H.exact_allocations = small;
    std::printf("correctness (%s)\n", small ? "small sizes" : "full");
    key_order_check<float, true>();
    key_order_check<float, false>();
    key_order_check<double, true>();
    key_order_check<double, false>();
    test_dtype<int32_t>(small);
    test_dtype<uint32_t>(small);
    test_dtype<int64_t>(small);
    test_dtype<uint64_t>(small);
    test_dtype<float>(small);
    test_dtype<double>(small);
    if (!small) {
        mapped_and_shapes();
        std::printf("determinism\n");
        determinism();
    }
    bool zero = H.counters_zero();
    std::printf("zeroed_counters left zero: %s\n", zero ? "yes" : "NO");
    if (!zero) ++g_failures;
    if (!small) {
        H.free_scratch();
        for (int c = 0; c < kCopies; ++c) CK(cudaMalloc(&g_pool[c], kPoolBytes));
        if (do_sweep) sweep();
        timings();
        for (int c = 0; c < kCopies; ++c) CK(cudaFree(g_pool[c]));
        std::printf("\nhuge counts\n");
        huge();
        zero = H.counters_zero();
        std::printf("zeroed_counters left zero after all: %s\n", zero ? "yes" : "NO");
        if (!zero) ++g_failures;
    }
    std::printf("\nSUMMARY: %ld cases, %ld failures, %ld float sums unchecked (overflow possible)\n", g_cases,
                g_failures, g_skipped_bound);
    return g_failures ? 1 : 0;
}

}  // namespace rcheck

int main(int argc, char **argv) { return rcheck::run(argc, argv); }
