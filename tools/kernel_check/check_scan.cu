// SPDX-License-Identifier: Apache-2.0
// Standalone check and timing of the CUDA scan (src/cuda/scan/).
//   check_scan full   : correctness (op x dtype x kind, in place / out of place,
//                       misaligned views, adversarial inputs, both paths, garbage
//                       workspace), determinism, > 2^32 elements, tuning sweep,
//                       timings vs CUB and a device-to-device copy
//   check_scan small  : correctness at small sizes only (for compute-sanitizer)
// Build: cmake -DGPUPRIM_BUILD_TOOLS=ON (tools/kernel_check/README.md).
#include "cuda/scan/dispatch_scan.cuh"
#include "cuda/scan/scan.h"
#include "harness.h"

#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <chrono>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>


namespace scan_check {
using namespace gpuprim;
using namespace gpuprim::cuda;
using scan_detail::ScanPath;


static long g_cases = 0, g_failures = 0, g_skipped = 0;
static std::mt19937_64 g_rng(20240601);
static bool g_small = false;
static const char *g_tuning_name = "library";
static const auto g_start = std::chrono::steady_clock::now();

using kernel_check::DT;

static const char *op_name[] = {"sum", "min", "max"};

struct Harness {
    kernel_check::KernelEnv *kernel_env = nullptr;
    DeviceEnv env{};
    Workspace *workspace = nullptr;
    uint32_t *counters = nullptr;
    char *scratch = nullptr;  // inputs and outputs of the checks
    size_t scratch_bytes = 0;

    void init(size_t bytes) {
        kernel_env = new kernel_check::KernelEnv(false);
        env = kernel_env->env;
        workspace = &kernel_env->workspace;
        counters = env.zeroed_counters;
        scratch_bytes = bytes;
        CK(cudaMalloc(&scratch, bytes));
        kernel_env->print_device();
    }
    bool counters_zero() { return kernel_env->counters_zero(); }
};
static Harness H;

// ------------------------------------------------------------ the call
// Candidate tunings: threads x vectors, min blocks/SM, stages, windows per
// look-back poll, saved groups (float SUM's grouped look-back only), poll
// back-off.
template <int Th, int V, int MB, int Stages, int WPP = 1, int MS = 16, uint32_t Poll = 64,
          CacheHint Store = CacheHint::Default, int Bulk = 0>
struct Sweep {
    using Config = ScanKernelConfig<Th, V, CacheHint::Default, Store, MS, MB, Stages, WPP, Bulk>;
    static constexpr uint32_t kSingleBlockMaxTiles = 1;
    static constexpr uint64_t kPipelineMinTilesPerBlock = 0;  // measure the configuration itself
    static constexpr uint64_t kPipelineMinTilesPerBlockOrdered = 0;
    using MidConfig = ScanKernelConfig<128, 8, CacheHint::Default, CacheHint::Default, 8, 12, 1, 1>;
    static constexpr uint32_t kClearChunk = 256;
    static constexpr uint32_t kPollNs = Poll;
};
struct LibraryTuning {};  // the public entry point with the library's own tuning

template <typename T> using SumType = std::conditional_t<std::is_integral_v<T>, bits_t<T>, T>;
// The configuration a tuning runs T's SUM with (float SUM may have its own).
template <typename T, typename Tu> using SumConfig = typename ScanConfigFor<Tu, SumOp<SumType<T>>>::type;

template <typename T, typename Tuning, bool SumOnly = false>
static void run_scan(int op, bool exclusive, const T *in, T *out, uint64_t n, ScanPath path,
                     unsigned long long *trace = nullptr) {
    if constexpr (std::is_same_v<Tuning, LibraryTuning>) {
        if (path == ScanPath::Auto) {
            gpuprim::cuda::scan(H.env, gpuprim_op_t(op), exclusive ? GPUPRIM_SCAN_EXCLUSIVE : GPUPRIM_SCAN_INCLUSIVE,
                                DT<T>::v, in, out, n);
            return;
        }
        run_scan<T, ScanTuningSm90<int(sizeof(T))>>(op, exclusive, in, out, n, path, trace);
    } else {
        using S = SumType<T>;
        if (op == 0) scan_detail::launch_scan_with<S, SumOp<S>, Tuning>(H.env, exclusive, (const S *)in, (S *)out, n, {path, trace});
        if constexpr (!SumOnly) {
            if (op == 1) scan_detail::launch_scan_with<T, MinOp<T>, Tuning>(H.env, exclusive, in, out, n, {path, trace});
            if (op == 2) scan_detail::launch_scan_with<T, MaxOp<T>, Tuning>(H.env, exclusive, in, out, n, {path, trace});
        }
    }
}

// Fill the status area with words that look like published inclusive
// prefixes, so a kernel that trusted stale slots would give wrong sums.
__global__ void poison_status_kernel(unsigned long long *p, uint64_t words, int wide) {
    for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < words;
         i += uint64_t(gridDim.x) * blockDim.x)
        p[i] = wide ? ((i & 1) ? 0x3ff0000000000000ull : 2ull) : ((2ull << 32) | 0x3f800000ull);
}
template <typename T>
static void poison_workspace(uint64_t n) {
    const uint64_t tiles = n / 1024 + 64;
    const uint64_t bytes = tiles * 16;
    void *p = H.workspace->reserve(bytes);
    poison_status_kernel<<<64, 256, 0, H.env.stream>>>((unsigned long long *)p, bytes / 8, sizeof(T) == 8);
    CK(cudaGetLastError());
}

// ------------------------------------------------------------ references
template <typename T>
static T apply(int op, T a, T b) {
    if (op == 0) return SumOp<T>()(a, b);
    if (op == 1) return MinOp<T>()(a, b);
    return MaxOp<T>()(a, b);
}
template <typename T>
static T identity(int op) {
    if (op == 0) return SumOp<T>::identity();
    if (op == 1) return MinOp<T>::identity();
    return MaxOp<T>::identity();
}

using kernel_check::show;

// Returns "" when got is the scan of x, else the first problem.
template <typename T>
static std::string judge(int op, bool exclusive, const std::vector<T> &x, const std::vector<T> &got) {
    const size_t n = x.size();
    using B = bits_t<T>;
    if (!(std::is_floating_point_v<T> && op == 0)) {
        T acc = identity<T>(op);
        for (size_t i = 0; i < n; ++i) {
            T want;
            if (exclusive) {
                want = i == 0 ? identity<T>(op) : acc;
                acc = i == 0 ? x[0] : apply(op, acc, x[i]);
            } else {
                acc = i == 0 ? x[0] : apply(op, acc, x[i]);
                want = acc;
            }
            if (bit_cast<B>(want) != bit_cast<B>(got[i]))
                return "at " + std::to_string(i) + " want " + show(want) + " got " + show(got[i]);
        }
        return "";
    }
    // Float sum: within terms * eps * sum|x| of a long double reference.
    // NaN/inf follow IEEE whatever the order; an intermediate overflow is
    // order dependent and skipped. A prefix of -0.0 only stays -0.0.
    const long double eps = std::numeric_limits<T>::epsilon() * (LDBL_MANT_DIG <= 53 ? 2 : 1);
    const long double big = std::numeric_limits<T>::max();
    long double s = 0, a = 0, a_finite = 0;
    bool all_neg_zero = true;
    for (size_t i = 0; i < n; ++i) {
        auto add = [&] {
            s += (long double)x[i];
            a += std::fabs((long double)x[i]);
            if (std::isfinite(x[i])) a_finite += std::fabs((long double)x[i]);
            if (bit_cast<B>(x[i]) != bit_cast<B>(T(-0.0))) all_neg_zero = false;
        };
        if (!exclusive) add();
        const size_t terms = exclusive ? i : i + 1;
        const T g = got[i];
        bool ok;
        if (terms == 0) ok = bit_cast<B>(g) == 0;
        else if (std::isnan(s)) ok = std::isnan(g);
        else if (a_finite >= big / 2) { ok = true; ++g_skipped; }  // partial sums may overflow
        else if (std::isinf(s)) ok = (long double)g == s;
        else if (all_neg_zero) ok = bit_cast<B>(g) == bit_cast<B>(T(-0.0));
        else ok = std::isfinite(g) && std::fabs((long double)g - s) <= terms * eps * a + std::numeric_limits<T>::denorm_min();
        if (!ok) {
            char buf[256];
            std::snprintf(buf, sizeof buf, "at %zu ref %.17Lg (sum|x| %.6Lg) got %s", i, s, a, show(g).c_str());
            return buf;
        }
        if (exclusive) add();
    }
    return "";
}

// ------------------------------------------------------------ one case
template <typename T, typename Tuning, bool SumOnly = false>
static bool run_case(int op, bool exclusive, const std::vector<T> &x, size_t in_off, size_t out_off,
                     bool in_place, ScanPath path, const char *what, std::vector<T> *result = nullptr) {
    const size_t n = x.size();
    const size_t half = H.scratch_bytes / 2 / sizeof(T);
    if (n + 8 > half) { std::printf("scratch too small\n"); std::exit(2); }
    T *base_in = reinterpret_cast<T *>(H.scratch), *base_out = base_in + half;
    T *exact = nullptr;
    if (g_small) {
        // Allocations of exactly the extent used, so memcheck sees any overrun.
        CK(cudaMalloc(&exact, (in_off + n + out_off + n) * sizeof(T) + (n == 0 ? 16 : 0)));
        base_in = exact;
        base_out = exact + in_off + n;
    }
    T *in = base_in + in_off;
    T *out = in_place ? in : base_out + out_off;
    // Everything on the scan's stream: the legacy stream does not order
    // against a non-blocking stream.
    if (n) CK(cudaMemcpyAsync(in, x.data(), n * sizeof(T), cudaMemcpyHostToDevice, H.env.stream));
    if (!in_place && n) CK(cudaMemsetAsync(out, 0xA7, n * sizeof(T), H.env.stream));
    if (path != ScanPath::SingleBlock && !g_small) poison_workspace<T>(n);
    try {
        run_scan<T, Tuning, SumOnly>(op, exclusive, in, out, n, path);
    } catch (const Error &e) {
        std::printf("FAIL %s: threw %s\n", what, e.what());
        ++g_failures;
        return false;
    }
    // A scan that never finishes is a deadlock: name the case and stop.
    for (auto start = std::chrono::steady_clock::now();;) {
        const cudaError_t state = cudaStreamQuery(H.env.stream);
        if (state == cudaSuccess) break;
        if (state != cudaErrorNotReady) CK(state);
        if (std::chrono::steady_clock::now() - start > std::chrono::seconds(g_small ? 120 : 20)) {
            std::printf("HANG [%s] %s %s %s %s n=%zu in_off=%zu out_off=%zu in_place=%d path=%d\n", g_tuning_name,
                        dtype_name(DT<T>::v), op_name[op], exclusive ? "excl" : "incl", what, n, in_off, out_off,
                        in_place, int(path));
            std::fflush(stdout);
            std::_Exit(3);
        }
    }
    std::vector<T> got(n), after(in_place ? 0 : n);
    if (n) CK(cudaMemcpyAsync(got.data(), out, n * sizeof(T), cudaMemcpyDeviceToHost, H.env.stream));
    if (!in_place && n) CK(cudaMemcpyAsync(after.data(), in, n * sizeof(T), cudaMemcpyDeviceToHost, H.env.stream));
    CK(cudaStreamSynchronize(H.env.stream));
    if (exact) CK(cudaFree(exact));
    ++g_cases;
    std::string why = judge(op, exclusive, x, got);
    if (why.empty() && !in_place && n && std::memcmp(after.data(), x.data(), n * sizeof(T)))
        why = "input changed by an out-of-place scan";
    if (result) *result = std::move(got);
    if (why.empty()) return true;
    if (++g_failures <= 40)
        std::printf("FAIL [%s] %s %s %s %s n=%zu in_off=%zu out_off=%zu in_place=%d path=%d: %s\n",
                    g_tuning_name, dtype_name(DT<T>::v), op_name[op], exclusive ? "excl" : "incl", what, n, in_off,
                    out_off, in_place, int(path), why.c_str());
    return false;
}

// ------------------------------------------------------------ inputs
template <typename T>
static T random_value(int style) {
    if constexpr (std::is_integral_v<T>) {
        if (style == 0) return T(g_rng());
        return T(int64_t(g_rng() % 2001) - 1000);
    } else {
        std::uniform_real_distribution<double> u(-1.0, 1.0);
        if (style == 0) return T(std::ldexp(u(g_rng), int(g_rng() % 19) - 8));
        return T(0.5 + 1.5 * (u(g_rng) + 1) / 2);  // positive, well conditioned
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
    if constexpr (std::is_floating_point_v<T>) make("special-sprinkled", [&](size_t i) {
        static const T specials[] = {L::quiet_NaN(), T(-0.0), T(0.0), L::infinity(), -L::infinity(),
                                     L::max(), L::lowest(), L::denorm_min(), -L::denorm_min()};
        if (g_rng() % 97 == 0) {
            const T v = specials[g_rng() % 9];
            if (std::isnan(v)) {  // NaNs of both signs and several payloads
                bits_t<T> b = bit_cast<bits_t<T>>(v) | (g_rng() % 8);
                if (g_rng() & 1) b |= bits_t<T>(1) << (sizeof(T) * 8 - 1);
                return bit_cast<T>(b);
            }
            return v;
        }
        (void)i;
        return random_value<T>(0);
    });
    if (!all) return out;
    make("small-or-positive", [&](size_t) { return random_value<T>(1); });
    make("type-extremes", [&](size_t) {
        const int r = int(g_rng() % 4);
        return r == 0 ? L::max() : r == 1 ? L::lowest() : r == 2 ? T(0) : T(1);
    });
    if constexpr (std::is_floating_point_v<T>) {
        make("all-neg-zero", [&](size_t) { return T(-0.0); });
        make("signed-zeros", [&](size_t) { return g_rng() % 2 ? T(-0.0) : T(0.0); });
        make("inf-and-nan", [&](size_t i) {
            return i % 5 == 1 ? L::infinity() : i % 7 == 3 ? -L::infinity() : i % 11 == 5 ? L::quiet_NaN() : random_value<T>(0);
        });
        make("first-nan", [&](size_t i) { return i == 0 ? bit_cast<T>(bits_t<T>(~bits_t<T>(0))) : random_value<T>(0); });
    }
    return out;
}

// The single-block path and the look-back kernel of Tuning on the same
// input: each checked against the reference by run_case, and the two equal
// bit for bit (float sums combine tile aggregates by the same group rule of
// engine/tile_lookback.cuh on both).
template <typename T, typename Tuning, bool SumOnly>
static void check_paths_agree(int op, int ex, const std::vector<T> &data, size_t tile, const char *label) {
    const size_t n = data.size();
    std::vector<T> single, lookback;
    run_case<T, Tuning, SumOnly>(op, ex, data, 1, 1, false, ScanPath::SingleBlock, "random", &single);
    run_case<T, Tuning, SumOnly>(op, ex, data, 1, 1, false, ScanPath::Lookback, "random", &lookback);
    ++g_cases;
    if (single.size() != n || lookback.size() != n ||
        (n && std::memcmp(single.data(), lookback.data(), n * sizeof(T)))) {
        ++g_failures;
        std::printf("FAIL %s %s %s %s n=%zu (%zu tiles): single-block and look-back paths differ\n", label,
                    dtype_name(DT<T>::v), op_name[op], ex ? "excl" : "incl", n, (n + tile - 1) / tile);
    }
}

// Float sums across many groups of 32 tiles, including inputs whose
// look-backs walk past the saved-group limit and wait.
template <typename T, typename Tuning>
static void compare_paths(const char *label) {
    using Block = BlockVectorScan<T, SumOp<T>, SumConfig<T, Tuning>::kThreads, SumConfig<T, Tuning>::kVectors>;
    const size_t tile = Block::kTileItems;
    std::vector<size_t> sizes = {31 * tile + 5, 32 * tile, 32 * tile + 1, 64 * tile + 1, 97 * tile + 3,
                                 400 * tile + 7, 900 * tile + 7};
    if (g_small) sizes = {65 * tile + 1};
    for (size_t n : sizes) {
        if ((n + 8) * sizeof(T) > H.scratch_bytes / 2) continue;  // run_case's scratch
        std::vector<T> data(n);
        for (T &v : data) v = random_value<T>(0);
        for (int ex = 0; ex < 2; ++ex) check_paths_agree<T, Tuning, true>(0, ex, data, tile, label);
    }
}

template <typename T, typename Tuning = LibraryTuning, bool SumOnly = false>
static void test_dtype(bool quick = false) {
    using Tu = std::conditional_t<std::is_same_v<Tuning, LibraryTuning>, ScanTuningSm90<int(sizeof(T))>, Tuning>;
    using Block = BlockVectorScan<T, SumOp<T>, SumConfig<T, Tu>::kThreads, SumConfig<T, Tu>::kVectors>;
    const size_t tile = Block::kTileItems;
    // MIN/MAX may run a smaller tile (ScanConfigFor): its edges too.
    using MinMaxConfig = typename ScanConfigFor<Tu, MinOp<T>>::type;
    const size_t tile2 = BlockVectorScan<T, MinOp<T>, MinMaxConfig::kThreads, MinMaxConfig::kVectors>::kTileItems;
    const size_t vec = 16 / sizeof(T);
    std::vector<size_t> sizes;
    if (g_small)
        sizes = {1, 37, tile + 1, 3 * tile + 5, 40 * tile + 3};
    else if (quick)
        sizes = {1, 33, tile + 1, 2 * tile + 3, 70 * tile + 13, 300 * tile + 1};
    else
        sizes = {0, 1, 2, 3, 5, 31, 32, 33, 127, tile - 5, tile - 1, tile, tile + 1, 2 * tile - 1,
                 2 * tile, 2 * tile + 3, 5 * tile + 7, 33 * tile + 1, 70 * tile + 13, 300 * tile + 1,
                 1000003};
    if (tile2 != tile && !quick) {
        sizes.push_back(tile2 + 1);
        if (!g_small) sizes.insert(sizes.end(), {tile2 - 1, 3 * tile2 + 2});
    }
    struct Layout { size_t in_off, out_off; bool in_place; };
    std::vector<Layout> layouts_all, layouts_few;
    for (size_t a = 0; a < vec; ++a) layouts_all.push_back({a, a, false});        // same alignment
    for (size_t a = 0; a < vec; ++a) layouts_all.push_back({a, (a + 1) % vec, false});  // differing
    for (size_t a = 0; a < vec; ++a) layouts_all.push_back({a, 0, true});
    layouts_few = {{0, 0, false}, {1, 0, false}, {1, 1, true}};
    if (g_small || quick) layouts_all = layouts_few = {{0, 0, false}, {1, 2 % vec, false}, {1, 0, true}};
    const long fails_before = g_failures, cases_before = g_cases;
    for (size_t n : sizes) {
        const bool big = n > 40 * tile;
        for (auto &[name, data] : patterns<T>(n, !big && !g_small && !quick)) {
            const auto &layouts = big ? layouts_few : layouts_all;
            for (int op = 0; op < (SumOnly ? 1 : 3); ++op) {
                for (int ex = 0; ex < 2; ++ex) {
                    for (const Layout &l : layouts) {
                        run_case<T, Tuning, SumOnly>(op, ex, data, l.in_off, l.out_off, l.in_place, ScanPath::Auto, name.c_str());
                        // Auto gives mid sizes smaller tiles: the operator's own kernel here too.
                        if (big) run_case<T, Tuning, SumOnly>(op, ex, data, l.in_off, l.out_off, l.in_place, ScanPath::Lookback, name.c_str());
                    }
                    // Both paths on the same input; float sums must agree bitwise.
                    if (n <= 6 * tile && name == "random")
                        check_paths_agree<T, Tuning, SumOnly>(op, ex, data, tile, "library");
                }
            }
        }
    }
    if (!H.counters_zero()) {
        ++g_failures;
        std::printf("FAIL %s: zeroed counters not zero after the scans\n", dtype_name(DT<T>::v));
    }
    std::printf("  [%s] %-4s %6ld cases, %ld failures (%.0f s)\n", g_tuning_name, dtype_name(DT<T>::v),
                g_cases - cases_before, g_failures - fails_before,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - g_start).count());
}

// ------------------------------------------------------------ device helpers
__device__ __forceinline__ uint64_t mix64(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

template <typename T>
__global__ void fill_kernel(T *p, uint64_t n, uint64_t seed, int positive) {
    for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x) {
        const uint64_t h = mix64(i * 0x9E3779B97F4A7C15ull + seed);
        if constexpr (std::is_floating_point_v<T>) {
            const T u = T(h >> 11) * T(1.0 / 9007199254740992.0);
            p[i] = positive ? T(0.5) + T(1.5) * u : (T(2) * u - T(1)) * T(1 << (h & 7));
        } else {
            p[i] = T(h);
        }
    }
}

// Order-independent hash of an array: xor of mixed (index, bits).
template <typename T>
__global__ void hash_kernel(const T *p, uint64_t n, unsigned long long *out) {
    uint64_t h = 0;
    for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
        h ^= mix64(i * 0x9E3779B97F4A7C15ull ^ uint64_t(bit_cast<bits_t<T>>(p[i])) * 0xD6E8FEB86659FD93ull);
    for (int d = 16; d > 0; d >>= 1) h ^= __shfl_xor_sync(0xffffffffu, h, d);
    if ((threadIdx.x & 31) == 0) atomicXor(out, (unsigned long long)h);
}

// > 2^32 check on the device: x(i) regenerated from i.
__device__ __forceinline__ uint32_t big_x(uint64_t i) { return uint32_t(mix64(i + 77)) & 0xFFFFFu; }
__global__ void big_fill(uint32_t *p, uint64_t n) {
    for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
        p[i] = big_x(i);
}
// op 0: inclusive sum (out[i] = out[i-1] + x(i)); op 2: exclusive max (out[i] = max(out[i-1], x(i-1))).
__global__ void big_check(const uint32_t *p, uint64_t n, int op, unsigned long long *bad) {
    unsigned long long local = 0;
    for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x) {
        uint32_t want;
        if (op == 0) want = i == 0 ? big_x(0) : p[i - 1] + big_x(i);
        else want = i == 0 ? 0u : max(p[i - 1], big_x(i - 1));
        local += p[i] != want;
    }
    if (local) atomicAdd(bad, local);
}

static void test_past_2_32() {
    const uint64_t n = (uint64_t(1) << 32) + 4099;
    uint32_t *d = nullptr;
    if (cudaMalloc(&d, n * 4) != cudaSuccess) {
        cudaGetLastError();
        std::printf("  > 2^32: skipped (no memory)\n");
        return;
    }
    unsigned long long *bad;
    CK(cudaMalloc(&bad, 8));
    for (int op : {0, 2}) {
        big_fill<<<4096, 256, 0, H.env.stream>>>(d, n);
        CK(cudaMemsetAsync(bad, 0, 8, H.env.stream));
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        CK(cudaEventRecord(e0, H.env.stream));
        gpuprim::cuda::scan(H.env, gpuprim_op_t(op), op == 0 ? GPUPRIM_SCAN_INCLUSIVE : GPUPRIM_SCAN_EXCLUSIVE,
                   GPUPRIM_DTYPE_U32, d, d, n);
        CK(cudaEventRecord(e1, H.env.stream));
        big_check<<<4096, 256, 0, H.env.stream>>>(d, n, op, bad);
        unsigned long long h = 0;
        CK(cudaStreamSynchronize(H.env.stream));
        CK(cudaMemcpy(&h, bad, 8, cudaMemcpyDeviceToHost));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        ++g_cases;
        if (h) ++g_failures;
        std::printf("  u32 %s in place n=2^32+4099: %llu wrong, %.2f ms (%.0f GB/s) %s\n",
                    op == 0 ? "inclusive sum" : "exclusive max", h, ms, 8.0 * n / ms / 1e6, h ? "FAIL" : "ok");
    }
    if (!H.counters_zero()) { ++g_failures; std::printf("FAIL counters after > 2^32\n"); }
    CK(cudaFree(d));
    CK(cudaFree(bad));
}

// Same input, many runs: every output hash equal.
template <typename T>
static void test_determinism(uint64_t n, int runs, bool exclusive) {
    T *in, *out;
    unsigned long long *h;
    CK(cudaMalloc(&in, n * sizeof(T)));
    CK(cudaMalloc(&out, n * sizeof(T)));
    CK(cudaMalloc(&h, 8));
    fill_kernel<<<2048, 256, 0, H.env.stream>>>(in, n, 99, 0);
    std::vector<unsigned long long> hashes;
    for (int r = 0; r < runs; ++r) {
        CK(cudaMemsetAsync(out, r & 0xFF, n * sizeof(T), H.env.stream));
        CK(cudaMemsetAsync(h, 0, 8, H.env.stream));
        gpuprim::cuda::scan(H.env, GPUPRIM_OP_SUM, exclusive ? GPUPRIM_SCAN_EXCLUSIVE : GPUPRIM_SCAN_INCLUSIVE,
                   DT<T>::v, in, out, n);
        hash_kernel<<<1024, 256, 0, H.env.stream>>>(out, n, h);
        unsigned long long v;
        CK(cudaMemcpyAsync(&v, h, 8, cudaMemcpyDeviceToHost, H.env.stream));
        CK(cudaStreamSynchronize(H.env.stream));
        hashes.push_back(v);
    }
    const size_t distinct = std::count_if(hashes.begin(), hashes.end(), [&](unsigned long long v) { return v != hashes[0]; });
    ++g_cases;
    if (distinct) ++g_failures;
    std::printf("  %s sum %s n=%llu: %d runs, hash %016llx, %zu differing %s\n", dtype_name(DT<T>::v),
                exclusive ? "excl" : "incl", (unsigned long long)n, runs, hashes[0], distinct, distinct ? "FAIL" : "ok");
    CK(cudaFree(in));
    CK(cudaFree(out));
    CK(cudaFree(h));
}

// ------------------------------------------------------------ timing
using kernel_check::median;
// Median device time (us) of launch(i), each bracketed by events.
static float time_us(const std::function<void(int)> &launch, int reps = 25) {
    return kernel_check::launch_time_us(H.env.stream, launch, reps, 4);
}
// Average device time (us) of `batch` back-to-back launches (what a profiler
// would show per kernel, minus the per-event overhead).
static float time_batched_us(const std::function<void(int)> &launch, int batch = 200) {
    return kernel_check::batch_time_us(H.env.stream, launch, batch, 1, 10);
}

struct Pool {
    std::vector<char *> in, out;
    int copies = 1;
    void make(size_t bytes) {
        release();
        copies = bytes > (size_t(50) << 20) ? 3 : 1;
        for (int c = 0; c < copies; ++c) {
            char *a, *b;
            CK(cudaMalloc(&a, bytes));
            CK(cudaMalloc(&b, bytes));
            in.push_back(a);
            out.push_back(b);
        }
    }
    void release() {
        for (char *p : in) cudaFree(p);
        for (char *p : out) cudaFree(p);
        in.clear();
        out.clear();
    }
};
static Pool g_pool;

template <typename T>
static void pool_fill(uint64_t n) {
    g_pool.make(n * sizeof(T));
    for (int c = 0; c < g_pool.copies; ++c)
        fill_kernel<<<2048, 256, 0, H.env.stream>>>((T *)g_pool.in[c], n, 1000 + c, 1);
    CK(cudaStreamSynchronize(H.env.stream));
}

template <typename T>
static float time_ours(uint64_t n, int op = 0, bool exclusive = false, bool in_place = false) {
    return time_us([&](int i) {
        const int c = i % g_pool.copies;
        run_scan<T, LibraryTuning>(op, exclusive, (const T *)g_pool.in[c], in_place ? (T *)g_pool.in[c] : (T *)g_pool.out[c], n, ScanPath::Auto);
    });
}

template <typename T, typename Tuning, typename Op = SumOp<T>>
static float time_tuning(uint64_t n, ScanPath path = ScanPath::Auto) {
    return time_us([&](int i) {
        const int c = i % g_pool.copies;
        scan_detail::launch_scan_with<T, Op, Tuning>(H.env, false, (const T *)g_pool.in[c], (T *)g_pool.out[c], n, {path});
    });
}

// CUB's inclusive sum: event median of single calls, or (batch > 0) the
// mean of `batch` back-to-back calls.
template <typename T>
static float time_cub(uint64_t n, int batch = 0) {
    size_t temp_bytes = 0;
    CK(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, (const T *)g_pool.in[0], (T *)g_pool.out[0], (int64_t)n, H.env.stream));
    void *temp;
    CK(cudaMalloc(&temp, temp_bytes));
    const auto call = [&](int i) {
        const int c = i % g_pool.copies;
        CK(cub::DeviceScan::InclusiveSum(temp, temp_bytes, (const T *)g_pool.in[c], (T *)g_pool.out[c], (int64_t)n, H.env.stream));
    };
    const float t = batch > 0 ? time_batched_us(call, batch) : time_us(call);
    CK(cudaFree(temp));
    return t;
}

static float time_copy(size_t bytes) {
    return time_us([&](int i) {
        const int c = i % g_pool.copies;
        CK(cudaMemcpyAsync(g_pool.out[c], g_pool.in[c], bytes, cudaMemcpyDeviceToDevice, H.env.stream));
    });
}

static double gbps(uint64_t n, size_t elem, float us) { return 2.0 * n * elem / (us * 1e3); }

// Per-tile trace summary: where a tile's life goes.
template <typename T, typename Tuning>
static void trace_summary(uint64_t n, const char *label) {
    // Room for the smallest tile any configuration runs (the mid-size one
    // has 4096 or 8192 elements); slots of tiles that did not run stay zero.
    const uint64_t tiles = n / 1024 + 2;
    unsigned long long *d;
    CK(cudaMalloc(&d, tiles * 64));
    CK(cudaMemsetAsync(d, 0, tiles * 64, H.env.stream));
    for (int r = 0; r < 3; ++r)
        run_scan<T, Tuning, true>(0, false, (const T *)g_pool.in[r % g_pool.copies], (T *)g_pool.out[r % g_pool.copies], n, ScanPath::Auto, d);
    std::vector<unsigned long long> h(tiles * 8);
    CK(cudaStreamSynchronize(H.env.stream));
    CK(cudaMemcpy(h.data(), d, tiles * 64, cudaMemcpyDeviceToHost));
    CK(cudaFree(d));
    uint64_t t_min = ~0ull, t_max = 0, used = 0;
    std::vector<double> ticket, agg, prefix, tail, life, windows, polls;
    for (uint64_t t = 1; t < tiles; ++t) {
        const unsigned long long *r = &h[t * 8];
        if (!r[0] || !r[4]) continue;
        ++used;
        t_min = std::min<uint64_t>(t_min, r[0]);
        t_max = std::max<uint64_t>(t_max, r[4]);
        ticket.push_back(double(r[1] - r[0]));
        agg.push_back(double(r[2] - r[1]));
        prefix.push_back(double(r[3] - r[1]));
        tail.push_back(double(r[4]) - double(std::max(r[2], r[3])));
        life.push_back(double(r[4] - r[0]));
        windows.push_back(double(r[5] >> 32));
        polls.push_back(double(r[5] & 0xffffffffu));
    }
    auto stat = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        double m = 0;
        for (double x : v) m += x;
        char buf[80];
        std::snprintf(buf, sizeof buf, "%.0f/%.0f/%.0f", v.empty() ? 0 : m / v.size(), v.empty() ? 0 : v[v.size() / 2],
                      v.empty() ? 0 : v[v.size() * 9 / 10]);
        return std::string(buf);
    };
    double life_sum = 0;
    for (double x : life) life_sum += x;
    std::printf("  trace %-22s tiles %llu span %.0f us, resident tiles avg %.0f (%.1f/SM); mean/median/p90 ns: "
                "load %s, landed-to-aggregate %s, landed-to-prefix %s, tail %s, life %s; windows %s; polls %s\n",
                label, (unsigned long long)used, (t_max - t_min) / 1e3, life_sum / double(t_max - t_min),
                life_sum / double(t_max - t_min) / H.env.sm_count, stat(ticket).c_str(), stat(agg).c_str(),
                stat(prefix).c_str(), stat(tail).c_str(), stat(life).c_str(), stat(windows).c_str(), stat(polls).c_str());
}

template <typename T, typename Tuning>
static void show_tuning(uint64_t n, const char *name) {
    const float us = time_us([&](int i) {
        const int c = i % g_pool.copies;
        run_scan<T, Tuning, true>(0, false, (const T *)g_pool.in[c], (T *)g_pool.out[c], n, ScanPath::Auto);
    });
    std::printf("  %s %.1fus/%.0f", name, us, gbps(n, sizeof(T), us));
}

// MIN/MAX tunings on a sum-free op (op 2 = MAX), to compare kernels.
template <typename T, typename Tuning>
static void show_max_tuning(uint64_t n, const char *name) {
    const float us = time_us([&](int i) {
        const int c = i % g_pool.copies;
        scan_detail::launch_scan<T, MaxOp<T>, Tuning>(H.env, false, (const T *)g_pool.in[c], (T *)g_pool.out[c], n);
    });
    std::printf("  %s %.1fus/%.0f", name, us, gbps(n, sizeof(T), us));
}

template <typename T>
static void sweep(uint64_t n, const char *label) {
    pool_fill<T>(n);
    std::printf("  %s n=%llu:\n  ", label, (unsigned long long)n);
    show_tuning<T, LibraryTuning>(n, "library");
    show_tuning<T, Sweep<384, 12, 1, 3, 1>>(n, "384x12s3w1");
    show_tuning<T, Sweep<384, 12, 1, 3, 4>>(n, "384x12s3w4");
    show_tuning<T, Sweep<256, 24, 1, 2, 2>>(n, "256x24s2w2");
    std::printf("\n  ");
    show_tuning<T, Sweep<512, 12, 1, 2, 2>>(n, "512x12s2w2");
    show_tuning<T, Sweep<256, 16, 1, 3, 2>>(n, "256x16s3w2");
    show_tuning<T, Sweep<128, 16, 6, 1, 1, 8>>(n, "128x16 tile/block");
    std::printf("\n  bulk loads:");
    show_tuning<T, Sweep<384, 12, 1, 3, 1, 16, 64, CacheHint::Default, 1>>(n, "384x12s3w1 bulk");
    show_tuning<T, Sweep<512, 12, 1, 2, 1, 16, 64, CacheHint::Default, 1>>(n, "512x12s2w1 bulk");
    show_tuning<T, Sweep<256, 24, 1, 2, 1, 16, 64, CacheHint::Default, 1>>(n, "256x24s2w1 bulk");
    show_tuning<T, Sweep<256, 16, 1, 3, 1, 16, 64, CacheHint::Default, 1>>(n, "256x16s3w1 bulk");
    std::printf("\n  stores:");
    show_tuning<T, Sweep<384, 12, 1, 3, 1, 16, 64, CacheHint::Streaming>>(n, "384x12s3w1 st.cs");
    show_tuning<T, Sweep<384, 12, 1, 3, 1, 16, 64, CacheHint::Global>>(n, "384x12s3w1 st.cg");
    show_tuning<T, Sweep<384, 12, 1, 3, 1, 16, 64>>(n, "384x12s3w1 again");
    std::printf("\n  max:");
    show_max_tuning<T, ScanTuningSm90<int(sizeof(T))>>(n, "library");
    std::printf("\n");
    if (n >= (uint64_t(1) << 27)) trace_summary<T, ScanTuningSm90<int(sizeof(T))>>(n, "library");
}

// A/B of stage fills (bulk copy vs cp.async) and geometries at large sizes:
// variants measured round-robin (so drifts hit all alike), median of rounds.
template <typename T, typename... Tunings>
static void ab_row(uint64_t n, const char *label, const std::vector<const char *> &names) {
    pool_fill<T>(n);
    std::vector<std::function<float()>> runs = {[&] { return time_ours<T>(n); },
                                                [&] { return time_tuning<T, Tunings>(n); }...};
    std::vector<std::vector<float>> us(runs.size());
    std::vector<float> copy;
    for (int round = 0; round < 7; ++round) {
        for (size_t v = 0; v < runs.size(); ++v) us[v].push_back(runs[v]());
        copy.push_back(time_copy(n * sizeof(T)));
    }
    const float copy_us = median(copy);
    std::printf("  %-10s copy %.1f us |", label, copy_us);
    for (size_t v = 0; v < runs.size(); ++v)
        std::printf(" %s %.1f (%.1f%%)", v == 0 ? "library" : names[v - 1], median(us[v]), 100.0 * copy_us / median(us[v]));
    std::printf("\n");
}

// The library's tuning with another mid-size (one tile per block) shape:
// MS saved groups of float SUM's grouped look-back (integer SUM walks without
// limit: the field does not change its kernels).
template <int kBytes, int MS>
struct MidVariant : ScanTuningSm90<kBytes> {
    using MidConfig = ScanKernelConfig<128, 16, CacheHint::Default, CacheHint::Default, MS, 6, 1, 1, 0>;
};

static void ab_timings() {
    std::printf("\n== A/B, mid sizes (library: one group per poll), median of 7 rounds (us, %% of copy) ==\n");
    const std::vector<const char *> mid_names = {"M8(old)", "M16", "M32"};
    for (int lg : {20, 22, 23, 24}) {
        ab_row<float, MidVariant<4, 8>, MidVariant<4, 16>, MidVariant<4, 32>>(uint64_t(1) << lg, lg == 20 ? "f32 2^20" : lg == 22 ? "f32 2^22" : lg == 23 ? "f32 2^23" : "f32 2^24", mid_names);
        ab_row<double, MidVariant<8, 8>, MidVariant<8, 16>, MidVariant<8, 32>>(uint64_t(1) << lg, lg == 20 ? "f64 2^20" : lg == 22 ? "f64 2^22" : lg == 23 ? "f64 2^23" : "f64 2^24", mid_names);
    }
    std::printf("\n== A/B, SUM, median of 7 round-robin rounds (us, %% of copy) ==\n");
    // Float SUM geometries (cp.async, three stages; C<threads>x<vectors>,
    // m<saved groups>, p<poll ns>). The 4-byte integer choice (bulk
    // 256x28, two stages) is in docs/tuning/scan.md.
    using C320x14 = Sweep<320, 14, 1, 3, 1>;
    using C448x10 = Sweep<448, 10, 1, 3, 1>;
    using C512x9 = Sweep<512, 9, 1, 3, 1>;
    using C352x13 = Sweep<352, 13, 1, 3, 1>;
    using C256x18 = Sweep<256, 18, 1, 3, 1>;
    using C384x12m32 = Sweep<384, 12, 1, 3, 1, 32>;
    using C384x12p0 = Sweep<384, 12, 1, 3, 1, 16, 0>;
    const std::vector<const char *> names = {"C320x14", "C448x10", "C512x9", "C352x13", "C256x18", "C384x12m32", "C384x12p0"};
    for (int rep = 0; rep < 1; ++rep) {
        ab_row<double, C320x14, C448x10, C512x9, C352x13, C256x18, C384x12m32, C384x12p0>(uint64_t(1) << 27, "f64 2^27", names);
        ab_row<float, C320x14, C448x10, C512x9, C352x13, C256x18, C384x12m32, C384x12p0>(uint64_t(1) << 28, "f32 2^28", names);
    }
    std::printf("\n== mid-size traces (library, one tile per block) ==\n");
    pool_fill<uint32_t>(uint64_t(1) << 22);
    trace_summary<uint32_t, ScanTuningSm90<4>>(uint64_t(1) << 22, "u32 2^22");
    pool_fill<float>(uint64_t(1) << 22);
    trace_summary<float, ScanTuningSm90<4>>(uint64_t(1) << 22, "f32 2^22");
    pool_fill<double>(uint64_t(1) << 22);
    trace_summary<double, ScanTuningSm90<8>>(uint64_t(1) << 22, "f64 2^22");
    pool_fill<float>(uint64_t(1) << 20);
    trace_summary<float, ScanTuningSm90<4>>(uint64_t(1) << 20, "f32 2^20");
    g_pool.release();
}

// Mid sizes, SUM: the library's choice (one tile per block below 8 tiles per
// resident pipelined block, 4 for float SUM) against the pipelined kernel at every
// multi-tile size, batched device time (us per call), CUB alongside.
template <int kBytes>
struct AlwaysPipelined : ScanTuningSm90<kBytes> {
    static constexpr uint64_t kPipelineMinTilesPerBlock = 0;
    static constexpr uint64_t kPipelineMinTilesPerBlockOrdered = 0;
};

template <typename T>
static void mid_row(const char *name) {
    using Tu = ScanTuningSm90<int(sizeof(T))>;
    using Always = AlwaysPipelined<int(sizeof(T))>;
    for (int lg = 14; lg <= 26; lg += 2) {
        const uint64_t n = uint64_t(1) << lg;
        pool_fill<T>(n);
        auto run = [&](auto tuning_tag) {
            using Tuning = decltype(tuning_tag);
            return time_batched_us([&](int i) {
                const int c = i % g_pool.copies;
                scan_detail::launch_scan<T, SumOp<T>, Tuning>(H.env, false, (const T *)g_pool.in[c], (T *)g_pool.out[c], n);
            }, 50);
        };
        const float cub = time_cub<T>(n, 50);
        std::printf("  %-4s 2^%-3d library %9.2f  pipelined %9.2f  CUB %9.2f\n", name, lg, run(Tu{}), run(Always{}), cub);
    }
}

// Smaller one-tile-per-block shapes at the sizes where CUB 3.6 leads
// (issue 34): batched device time (us per call), the library's choice and
// CUB alongside.
template <int Th, int V, int MinBlocks>
struct TilePerBlock {
    using Config = ScanKernelConfig<Th, V, CacheHint::Default, CacheHint::Default, 8, MinBlocks, 1, 1>;
    static constexpr uint32_t kSingleBlockMaxTiles = 1;
    static constexpr uint64_t kPipelineMinTilesPerBlock = 0;
    static constexpr uint64_t kPipelineMinTilesPerBlockOrdered = 0;
    using MidConfig = Config;
    static constexpr uint32_t kClearChunk = 256;
    static constexpr uint32_t kPollNs = 64;
};

template <typename T>
static void small_tiles_row(const char *name) {
    for (int lg = 12; lg <= 24; lg += 2) {
        const uint64_t n = uint64_t(1) << lg;
        pool_fill<T>(n);
        auto run = [&](auto tuning_tag) {
            using Tuning = decltype(tuning_tag);
            return time_batched_us([&](int i) {
                const int c = i % g_pool.copies;
                scan_detail::launch_scan<T, SumOp<T>, Tuning>(H.env, false, (const T *)g_pool.in[c], (T *)g_pool.out[c], n);
            }, 50);
        };
        std::printf("  %-4s 2^%-3d library %7.2f  128x16 %7.2f  128x8 %7.2f  128x4 %7.2f  256x4 %7.2f  256x2 %7.2f  "
                    "64x4 %7.2f  CUB %7.2f\n",
                    name, lg, run(ScanTuningSm90<int(sizeof(T))>{}), run(TilePerBlock<128, 16, 6>{}),
                    run(TilePerBlock<128, 8, 8>{}), run(TilePerBlock<128, 4, 12>{}), run(TilePerBlock<256, 4, 6>{}),
                    run(TilePerBlock<256, 2, 8>{}), run(TilePerBlock<64, 4, 16>{}), time_cub<T>(n, 50));
    }
}

static void small_tile_timings() {
    std::printf("\n== 2^12..2^24 inclusive SUM, one tile per block: tile shapes (threads x 16-byte vectors) ==\n");
    small_tiles_row<uint32_t>("u32");
    small_tiles_row<float>("f32");
    small_tiles_row<uint64_t>("u64");
    std::printf("\n== traces (library) ==\n");
    for (int lg : {14, 16, 20}) {
        pool_fill<uint32_t>(uint64_t(1) << lg);
        char label[32];
        std::snprintf(label, sizeof label, "u32 2^%d", lg);
        trace_summary<uint32_t, ScanTuningSm90<4>>(uint64_t(1) << lg, label);
    }
}

static void mid_timings() {
    std::printf("\n== mid sizes, inclusive SUM: library choice vs always pipelined (us per call, batch) ==\n");
    mid_row<float>("f32");
    mid_row<double>("f64");
    mid_row<uint32_t>("u32");
    mid_row<uint64_t>("u64");
}

static void timings() {
    std::printf("\n== tuning sweep (us / GB/s, read+write) ==\n");
    sweep<uint32_t>(uint64_t(1) << 28, "u32 sum");
    sweep<float>(uint64_t(1) << 28, "f32 sum");
    sweep<uint32_t>(uint64_t(1) << 20, "u32 sum");
    sweep<double>(uint64_t(1) << 27, "f64 sum");
    sweep<double>(uint64_t(1) << 20, "f64 sum");

    std::printf("\n== single block vs look-back, i32 sum (us, batched avg / event median) ==\n");
    for (uint64_t n : {uint64_t(1) << 10, uint64_t(1) << 12, uint64_t(4096 + 1), uint64_t(1) << 13, uint64_t(1) << 14, uint64_t(1) << 15}) {
        pool_fill<uint32_t>(n);
        using Tu = ScanTuningSm90<4>;
        auto launch = [&](ScanPath p) {
            return [&, p](int i) {
                const int c = i % g_pool.copies;
                scan_detail::launch_scan_with<uint32_t, SumOp<uint32_t>, Tu>(H.env, false, (const uint32_t *)g_pool.in[c], (uint32_t *)g_pool.out[c], n, {p});
            };
        };
        std::printf("  n=%-6llu single %.2f / %.2f   look-back %.2f / %.2f\n", (unsigned long long)n,
                    time_batched_us(launch(ScanPath::SingleBlock)), time_us(launch(ScanPath::SingleBlock)),
                    time_batched_us(launch(ScanPath::Lookback)), time_us(launch(ScanPath::Lookback)));
    }

    std::printf("\n== timings (median us; GB/s = (read+write) bytes / time) ==\n");
    std::printf("  %-28s %10s %8s %10s %8s %10s %8s %7s\n", "case", "ours us", "GB/s", "CUB us", "GB/s", "copy us", "GB/s", "%copy");
    auto row = [&](const char *name, uint64_t n, size_t elem, float ours, float cub, float copy) {
        std::printf("  %-28s %10.2f %8.0f %10.2f %8.0f %10.2f %8.0f %6.1f%%\n", name, ours, gbps(n, elem, ours), cub,
                    cub > 0 ? gbps(n, elem, cub) : 0.0, copy, gbps(n, elem, copy), 100.0 * copy / ours);
    };
    for (int lg : {10, 16, 20, 24, 28}) {
        const uint64_t n = uint64_t(1) << lg;
        pool_fill<int32_t>(n);
        char name[64];
        std::snprintf(name, sizeof name, "i32 incl sum 2^%d", lg);
        row(name, n, 4, time_ours<int32_t>(n), time_cub<int32_t>(n), time_copy(n * 4));
        if (lg <= 20) {
            const float b = time_batched_us([&](int i) {
                const int c = i % g_pool.copies;
                run_scan<int32_t, LibraryTuning>(0, false, (const int32_t *)g_pool.in[c], (int32_t *)g_pool.out[c], n, ScanPath::Auto);
            });
            std::printf("  %-28s %10.2f   (batched average of 200 back-to-back calls)\n", name, b);
        }
        if (lg == 28) {
            row("i32 excl sum 2^28", n, 4, time_ours<int32_t>(n, 0, true), 0, time_copy(n * 4));
            row("i32 incl max 2^28", n, 4, time_ours<int32_t>(n, 2), 0, time_copy(n * 4));
            row("i32 incl sum 2^28 in place", n, 4, time_ours<int32_t>(n, 0, false, true), 0, time_copy(n * 4));
        }
    }
    {
        const uint64_t n = uint64_t(1) << 28;
        pool_fill<float>(n);
        row("f32 incl sum 2^28", n, 4, time_ours<float>(n), time_cub<float>(n), time_copy(n * 4));
        row("f32 incl min 2^28", n, 4, time_ours<float>(n, 1), 0, time_copy(n * 4));
    }
    {
        const uint64_t n = uint64_t(1) << 27;
        pool_fill<double>(n);
        row("f64 incl sum 2^27", n, 8, time_ours<double>(n), time_cub<double>(n), time_copy(n * 8));
        row("f64 excl max 2^27", n, 8, time_ours<double>(n, 2, true), 0, time_copy(n * 8));
        pool_fill<int64_t>(n);
        row("i64 incl sum 2^27", n, 8, time_ours<int64_t>(n), time_cub<int64_t>(n), time_copy(n * 8));
    }
    g_pool.release();
}

int run(int argc, char **argv) {
    const std::string mode = argc > 1 ? argv[1] : "full";
    std::setvbuf(stdout, nullptr, _IOLBF, 0);  // a run cut off by a timeout keeps its log
    g_small = mode == "small";
    H.init(size_t(192) << 20);  // run_case: input and output of up to 300 tiles of 112 KB
    // Under the sanitizers: a grid of two SMs' worth of persistent blocks, so
    // that each block runs many tiles through its ring of stages even at the
    // small sizes an instrumented run can afford.
    if (g_small) H.env.sm_count = 2;
    if (mode == "time") {
        timings();
        return 0;
    }
    if (mode == "ab") {
        ab_timings();
        return 0;
    }
    if (mode == "mid") {
        mid_timings();
        return 0;
    }
    if (mode == "smalltiles") {
        small_tile_timings();
        return 0;
    }
    std::printf("== correctness (%s) ==\n", mode.c_str());
    test_dtype<int32_t>();
    test_dtype<uint32_t>();
    test_dtype<int64_t>();
    test_dtype<uint64_t>();
    test_dtype<float>();
    test_dtype<double>();
    compare_paths<float, ScanTuningSm90<4>>("pipelined");
    compare_paths<double, ScanTuningSm90<8>>("pipelined");
    compare_paths<float, Sweep<128, 16, 6, 1, 1, 8>>("tile per block");
    compare_paths<double, Sweep<128, 16, 6, 1, 1, 8>>("tile per block");
    compare_paths<float, Sweep<128, 16, 6, 1, 1, 4>>("tile per block, 4 saved");
    // Candidate tunings of the sweep: the same checks on fewer sizes, sum only.
    auto candidates = [](auto tuning, const char *name) {
        using Tu = decltype(tuning);
        g_tuning_name = name;
        test_dtype<int32_t, Tu, true>(true);
        test_dtype<float, Tu, true>(true);
        test_dtype<int64_t, Tu, true>(true);
        test_dtype<double, Tu, true>(true);
        g_tuning_name = "library";
    };
    // Bulk-copy stage fills, in every mode so that the sanitizers run them too.
    candidates(Sweep<384, 12, 1, 3, 1, 16, 64, CacheHint::Default, 1>{}, "384x12s3w1 bulk");
    candidates(Sweep<256, 24, 1, 2, 1, 16, 64, CacheHint::Default, 4>{}, "256x24s2w1 bulk x4");
    if (mode == "full") {
        candidates(Sweep<256, 24, 1, 2, 2>{}, "256x24s2w2");
        candidates(Sweep<512, 12, 1, 2, 2>{}, "512x12s2w2");
        std::printf("== determinism ==\n");
        test_determinism<float>(uint64_t(1) << 26, 100, false);
        test_determinism<float>(uint64_t(1) << 26, 10, true);
        test_determinism<double>(uint64_t(1) << 25, 20, false);
        std::printf("== past 2^32 ==\n");
        test_past_2_32();
    }
    if (!H.counters_zero()) { ++g_failures; std::printf("FAIL counters not zero at the end\n"); }
    std::printf("== %ld cases, %ld failures, %ld float-sum elements skipped (order-dependent overflow) ==\n",
                g_cases, g_failures, g_skipped);
    std::fflush(stdout);
    if (mode == "full") timings();
    return g_failures ? 1 : 0;
}

}  // namespace scan_check

int main(int argc, char **argv) { return scan_check::run(argc, argv); }
