// SPDX-License-Identifier: Apache-2.0
// Standalone check and timing driver for the CUDA sort (dev only).
//   check_sort check     all dtypes/orders/values/sizes/patterns vs std::sort reference
//   check_sort sanitize  a few small cases (run under compute-sanitizer)
//   check_sort time      targets vs CUB on the same data
//   check_sort sweep ["k8 v4"]  tile-shape variants (sweep_shapes.cu), those widths only
//   check_sort big       u32 keys past 2^32, verified on the device
//   check_sort histogram the upfront histogram per counter shape and key distribution,
//                        whole sorts with each histogram shape (checked)
#include "sort_env.h"

#include "core/key_transform.h"
#include "cuda/sort/block_sort.cuh"
#include "cuda/sort/radix_sort.cuh"
#include "cuda/sort/sort.h"
#include "cuda/sort/sort_policy.cuh"

#include <array>
#include <chrono>
#include <cstring>
#include <initializer_list>
#include <random>

using gpuprim::KeyKind;
using gpuprim::SortRequest;
namespace gc = gpuprim::cuda;
namespace rd = gpuprim::cuda::radix_detail;

namespace {

struct Dtype {
    const char *name;
    uint32_t bytes;
    KeyKind kind;
    int cub_id;
};
const Dtype kDtypes[] = {{"u32", 4, KeyKind::Unsigned, 0}, {"i32", 4, KeyKind::Signed, 1},
                         {"f32", 4, KeyKind::Float, 2},    {"u64", 8, KeyKind::Unsigned, 3},
                         {"i64", 8, KeyKind::Signed, 4},   {"f64", 8, KeyKind::Float, 5}};

enum Pattern { kRandom, kSorted, kReversed, kEqual, kFew, kSpecial, kLow12, kLow20, kTop8, kPatternCount };
const char *kPatternNames[] = {"random", "sorted", "reversed", "equal", "few", "special", "low12", "low20", "top8"};

// Which sort entry: the public one, or a Onesweep shape directly.
// kHuge: OnesweepPairs8HugeShape, 8-byte keys with 4-byte values only.
enum Path { kPublic, kMedium, kLarge, kFused, kAlt, kHuge };
const char *kPathNames[] = {"public", "medium", "large", "fused", "alt", "huge"};
// The other rank/prefetch code paths: AtomicOr masks, prefetched keys and tickets.
using AltShape = gc::OnesweepShape<384, 16, 2, gc::RadixMatch::AtomicOr, true, 4, true>;

struct Case {
    int dtype;
    bool descending;
    int value_bytes;
    uint64_t n;
    Pattern pattern;
    bool in_place;
    Path path;
    uint64_t portion_limit;
};

bool values_placed_in(const Case &c) { return c.n % 4 == 3 ? false : c.n % 4 == 1 ? true : c.in_place; }

std::string describe(const Case &c) {
    char text[256];
    std::snprintf(text, sizeof text, "%s %s v%d n=%llu %s keys %s values %s %s portion=%llu", kDtypes[c.dtype].name,
                  c.descending ? "desc" : "asc", c.value_bytes, (unsigned long long)c.n,
                  kPatternNames[c.pattern], c.in_place ? "inplace" : "outofplace",
                  values_placed_in(c) ? "inplace" : "outofplace", kPathNames[c.path],
                  (unsigned long long)c.portion_limit);
    return text;
}

void run_sort(TestEnv &t, const SortRequest &request, Path path, uint64_t portion_limit) {
    const gc::SortTuning tuning = gc::sort_tuning(t.env.code_arch, request.key_bytes, request.value_bytes);
    if (path == kPublic) return gc::sort(t.env, request);
    auto go = [&](auto key_tag, auto value_tag) {
        using K = decltype(key_tag);
        constexpr int VB = decltype(value_tag)::value;
        if (path == kHuge) {
            if constexpr (sizeof(K) == 8 && VB == 4)
                rd::onesweep_sort_with<K, VB, gc::OnesweepPairs8HugeShape>(t.env, request, tuning, {portion_limit});
            else
                gpuprim::fail(GPUPRIM_ERROR_INTERNAL, "the huge tile takes 8-byte keys with 4-byte values only");
        } else if (path == kFused) {
            if (!rd::fused_sort<K, VB, typename gc::OnesweepFusedShape<sizeof(K), VB>::type>(t.env, request))
                gpuprim::fail(GPUPRIM_ERROR_INTERNAL, "fused path refused");
        } else if (path == kAlt)
            rd::onesweep_sort_with<K, VB, AltShape>(t.env, request, tuning, {portion_limit});
        else if (path == kMedium)
            rd::onesweep_sort_with<K, VB, typename gc::OnesweepMediumShape<sizeof(K), VB>::type>(t.env, request, tuning,
                                                                                           {portion_limit});
        else if constexpr (sizeof(K) == 4 && (VB == 4 || VB == 8)) {  // as the library: packed where packs_pairs says
            if (rd::packs_pairs(request))
                rd::onesweep_sort_with<K, VB, gc::OnesweepPackedPairShape, true>(t.env, request, tuning, {portion_limit});
            else
                rd::onesweep_sort_with<K, VB, typename gc::OnesweepLargeShape<4, VB>::type>(t.env, request, tuning,
                                                                                       {portion_limit});
        } else
            rd::onesweep_sort_with<K, VB, typename gc::OnesweepLargeShape<sizeof(K), VB>::type>(t.env, request, tuning,
                                                                                          {portion_limit});
    };
    auto by_value = [&](auto key_tag) {
        switch (request.value_bytes) {
        case 0: return go(key_tag, std::integral_constant<int, 0>{});
        case 4: return go(key_tag, std::integral_constant<int, 4>{});
        default: return go(key_tag, std::integral_constant<int, 8>{});
        }
    };
    if (request.key_bytes == 4) by_value(uint32_t{});
    else by_value(uint64_t{});
}

template <typename K>
std::vector<K> special_values() {
    if constexpr (sizeof(K) == 4) {
        return {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u, 0x7f800001u,
                0xffffffffu, 0x7fffffffu, 0x00000001u, 0x80000001u, 0x007fffffu, 0x00800000u, 0x7f7fffffu,
                0xff7fffffu, 0x3f800000u, 0xbf800000u, 0xff800001u, 0x807fffffu, 0x12345678u};
    } else {
        return {0x0ull, 0x8000000000000000ull, 0x7ff0000000000000ull, 0xfff0000000000000ull,
                0x7ff8000000000000ull, 0xfff8000000000000ull, 0x7ff0000000000001ull, 0xffffffffffffffffull,
                0x7fffffffffffffffull, 0x1ull, 0x8000000000000001ull, 0x000fffffffffffffull,
                0x0010000000000000ull, 0x7fefffffffffffffull, 0xffefffffffffffffull, 0x3ff0000000000000ull,
                0xbff0000000000000ull, 0xfff0000000000001ull, 0x800fffffffffffffull, 0x123456789abcdef0ull};
    }
}

template <typename K>
std::vector<K> make_keys(const Case &c, std::mt19937_64 &rng) {
    const KeyKind kind = kDtypes[c.dtype].kind;
    std::vector<K> keys(c.n);
    const K top_mask = K(K(0xff) << (sizeof(K) * 8 - 8));
    switch (c.pattern) {
    case kEqual: {
        const K v = K(rng());
        for (auto &k : keys) k = v;
        break;
    }
    case kFew: {
        K v[5];
        for (auto &x : v) x = K(rng());
        for (auto &k : keys) k = v[rng() % 5];
        break;
    }
    case kSpecial: {
        const std::vector<K> s = special_values<K>();
        for (auto &k : keys) k = (rng() % 4 == 0) ? K(rng()) : s[rng() % s.size()];
        break;
    }
    case kLow12:
        for (auto &k : keys) k = K(rng()) & K(0xfff);
        break;
    case kLow20:
        for (auto &k : keys) k = K(rng()) & K(0xfffff);
        break;
    case kTop8:
        for (auto &k : keys) k = K(rng()) & top_mask;
        break;
    default:
        for (auto &k : keys) k = K(rng());
        break;
    }
    if (c.pattern == kSorted || c.pattern == kReversed) {
        std::sort(keys.begin(), keys.end(), [&](K a, K b) {
            return gpuprim::to_radix_key<K>(a, kind, false) < gpuprim::to_radix_key<K>(b, kind, false);
        });
        if (c.pattern == kReversed) std::reverse(keys.begin(), keys.end());
    }
    return keys;
}

// Output position -> input index, by std::sort on (radix key, index): a stable sort.
template <typename K>
std::vector<uint32_t> reference_order(const std::vector<K> &keys, KeyKind kind, bool descending) {
    std::vector<std::pair<K, uint32_t>> items(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) items[i] = {gpuprim::to_radix_key<K>(keys[i], kind, descending), uint32_t(i)};
    std::sort(items.begin(), items.end());
    std::vector<uint32_t> order(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) order[i] = items[i].second;
    return order;
}

void *device_alloc(uint64_t bytes) {
    void *p = nullptr;
    CK(cudaMalloc(&p, std::max<uint64_t>(bytes, 16)));
    return p;
}

template <typename K>
bool run_case_typed(TestEnv &t, const Case &c, std::mt19937_64 &rng) {
    const Dtype &dt = kDtypes[c.dtype];
    const uint64_t n = c.n;
    const int vb = c.value_bytes;
    std::vector<K> keys = make_keys<K>(c, rng);
    std::vector<unsigned char> values(n * vb);
    for (uint64_t i = 0; i < n; ++i) {
        if (vb == 4) {
            const uint32_t v = uint32_t(i);
            std::memcpy(&values[i * 4], &v, 4);
        } else if (vb == 8) {
            const uint64_t v = (uint64_t(i) * 0x9E3779B97F4A7C15ull) ^ 0xA5A5000000000000ull;
            std::memcpy(&values[i * 8], &v, 8);
        }
    }
    K *d_keys_in = static_cast<K *>(device_alloc(n * sizeof(K)));
    K *d_keys_out = c.in_place ? d_keys_in : static_cast<K *>(device_alloc(n * sizeof(K)));
    // Values follow the keys' placement, except for counts 3 mod 4 (values out
    // of place) and 1 mod 4 (in place): mixed placements.
    const bool values_in_place = values_placed_in(c);
    void *d_values_in = vb ? device_alloc(n * vb) : nullptr;
    void *d_values_out = vb ? (values_in_place ? d_values_in : device_alloc(n * vb)) : nullptr;
    if (n) CK(cudaMemcpy(d_keys_in, keys.data(), n * sizeof(K), cudaMemcpyHostToDevice));
    if (vb && n) CK(cudaMemcpy(d_values_in, values.data(), n * vb, cudaMemcpyHostToDevice));
    if (!c.in_place) CK(cudaMemset(d_keys_out, 0xA5, std::max<uint64_t>(n * sizeof(K), 16)));
    if (vb && !values_in_place) CK(cudaMemset(d_values_out, 0xA5, std::max<uint64_t>(n * vb, 16)));
    // Poison the workspace: 0x5A5A5A5A reads as a published look-back word.
    if (t.workspace.capacity()) {
        void *ws = t.workspace.reserve(t.workspace.capacity());
        CK(cudaMemset(ws, 0x5A, t.workspace.capacity()));
    }
    CK(cudaDeviceSynchronize());

    SortRequest request{};
    request.key_kind = dt.kind;
    request.key_bytes = dt.bytes;
    request.descending = c.descending;
    request.keys_in = d_keys_in;
    request.keys_out = d_keys_out;
    request.value_bytes = uint32_t(vb);
    request.values_in = d_values_in;
    request.values_out = d_values_out;
    request.count = n;
    bool ok = true;
    try {
        run_sort(t, request, c.path, c.portion_limit);
        CK(cudaStreamSynchronize(t.env.stream));
    } catch (const gpuprim::Error &e) {
        std::printf("FAIL %s: threw %s\n", describe(c).c_str(), e.what());
        ok = false;
    }
    std::vector<K> out_keys(n);
    std::vector<unsigned char> out_values(n * vb);
    if (n) CK(cudaMemcpy(out_keys.data(), d_keys_out, n * sizeof(K), cudaMemcpyDeviceToHost));
    if (vb && n) CK(cudaMemcpy(out_values.data(), d_values_out, n * vb, cudaMemcpyDeviceToHost));

    const std::vector<uint32_t> order = reference_order<K>(keys, dt.kind, c.descending);
    int reported = 0;
    for (uint64_t i = 0; i < n && ok; ++i) {
        const bool key_ok = out_keys[i] == keys[order[i]];
        const bool value_ok = vb == 0 || std::memcmp(&out_values[i * vb], &values[uint64_t(order[i]) * vb], vb) == 0;
        if (!key_ok || !value_ok) {
            if (reported++ < 3) {
                uint64_t got_v = 0, want_v = 0;
                if (vb) {
                    std::memcpy(&got_v, &out_values[i * vb], vb);
                    std::memcpy(&want_v, &values[uint64_t(order[i]) * vb], vb);
                }
                std::printf("FAIL %s: at %llu key %llx want %llx value %llx want %llx\n", describe(c).c_str(),
                            (unsigned long long)i, (unsigned long long)out_keys[i],
                            (unsigned long long)keys[order[i]], (unsigned long long)got_v,
                            (unsigned long long)want_v);
            }
        }
    }
    if (reported) ok = false;
    if (!c.in_place && n) {
        std::vector<K> in_after(n);
        CK(cudaMemcpy(in_after.data(), d_keys_in, n * sizeof(K), cudaMemcpyDeviceToHost));
        if (in_after != keys) {
            std::printf("FAIL %s: keys_in modified\n", describe(c).c_str());
            ok = false;
        }
    }
    if (!values_in_place && n) {
        if (vb) {
            std::vector<unsigned char> v_after(n * vb);
            CK(cudaMemcpy(v_after.data(), d_values_in, n * vb, cudaMemcpyDeviceToHost));
            if (v_after != values) {
                std::printf("FAIL %s: values_in modified\n", describe(c).c_str());
                ok = false;
            }
        }
    }
    if (!t.counters_zero()) {
        std::printf("FAIL %s: zeroed counters left non-zero\n", describe(c).c_str());
        CK(cudaMemset(t.env.zeroed_counters, 0, gc::kZeroedCounterWords * 4));
        ok = false;
    }
    CK(cudaFree(d_keys_in));
    if (!c.in_place) CK(cudaFree(d_keys_out));
    if (vb) {
        CK(cudaFree(d_values_in));
        if (!values_in_place) CK(cudaFree(d_values_out));
    }
    return ok;
}

bool run_case(TestEnv &t, const Case &c, std::mt19937_64 &rng) {
    return kDtypes[c.dtype].bytes == 4 ? run_case_typed<uint32_t>(t, c, rng) : run_case_typed<uint64_t>(t, c, rng);
}

int run_cases(TestEnv &t, const std::vector<Case> &cases) {
    std::mt19937_64 rng(12345);
    int failed = 0;
    const auto start = std::chrono::steady_clock::now();
    for (const Case &c : cases) failed += !run_case(t, c, rng);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("checked %zu cases, %d failed (%.1f s)\n", cases.size(), failed, s);
    return failed;
}

// Keys without values past medium_max, up to keys4_small_max: the small
// tier's tile (OnesweepKeys4SmallShape) on Hopper.
constexpr uint64_t kKeys4SmallCount = (uint64_t(1) << 19) + 4099;

std::vector<Case> check_cases() {
    std::vector<Case> cases;
    const uint64_t medium_tile = gc::OnesweepMediumShape<4, 0>::type::kTile;
    const uint64_t large_tile = gc::OnesweepLargeShape<4, 0>::type::kTile;
    // A. every dtype x order x values, random keys, public path, many sizes.
    const uint64_t sizes[] = {0,     1,     2,     3,      31,     33,      255,     256,    257,     1000,
                              1024,  2047,  2048,  2049,   4095,   4096,    4097,    6145,   30000,   65536,
                              65537, 131072, 131073, 700001, 1048577, 1500007};
    int toggle = 0;
    for (int d = 0; d < 6; ++d)
        for (int desc = 0; desc < 2; ++desc)
            for (int vb : {0, 4, 8})
                for (uint64_t n : sizes)
                    cases.push_back({d, bool(desc), vb, n, kRandom, bool(toggle++ % 2), kPublic, rd::kMaxPortionKeys});
    // B. patterns at sizes of the block-sort and medium paths, then the large path.
    for (int d = 0; d < 6; ++d)
        for (int desc = 0; desc < 2; ++desc)
            for (int vb : {0, 8})
                for (int p = 1; p < kPatternCount; ++p)
                    for (uint64_t n : {uint64_t(1000), uint64_t(30001), uint64_t(300007)})
                        cases.push_back({d, bool(desc), vb, n, Pattern(p), bool((n + p + d + desc) % 2), kPublic,
                                         rd::kMaxPortionKeys});
    for (int d : {0, 5})
        for (int vb : {0, 4, 8})
            for (int p = 0; p < kPatternCount; ++p)
                cases.push_back({d, bool((p + d) % 2), vb, 2200003, Pattern(p), bool((p + vb) % 2), kPublic,
                                 rd::kMaxPortionKeys});
    // The small tier of keys without values through every pattern, 4-byte keys.
    for (int d : {0, 1, 2})
        for (int p = 0; p < kPatternCount; ++p)
            cases.push_back({d, bool((p + d) % 2), 0, kKeys4SmallCount, Pattern(p), bool(p % 2), kPublic,
                             rd::kMaxPortionKeys});
    // C. Onesweep shapes directly: tile boundaries, tiny counts, several portions.
    for (Path path : {kMedium, kLarge, kAlt, kHuge}) {
        const uint64_t tile = path == kMedium ? medium_tile
                              : path == kLarge ? large_tile
                              : path == kAlt   ? AltShape::kTile
                                               : gc::OnesweepPairs8HugeShape::kTile;
        // The huge tile runs only 8-byte keys (u64, f64) with 4-byte values.
        auto runs = [&](int d, int vb) { return path != kHuge || (kDtypes[d].bytes == 8 && vb == 4); };
        for (int d : {0, 2, 3, 5})
            for (int vb : {0, 4, 8})
                for (uint64_t n : {uint64_t(1), uint64_t(2), uint64_t(77), tile - 1, tile, tile + 1, 3 * tile + 5})
                    for (Pattern p : {kRandom, kLow20, kTop8})
                        if (runs(d, vb))
                            cases.push_back({d, bool(n % 2), vb, n, p, bool((n / 2) % 2), path, rd::kMaxPortionKeys});
        // Several portions: 2 tiles each, so launches have padding tiles and
        // the look-back codes rotate through many launches.
        for (int d : {0, 1, 3, 5})
            for (int vb : {0, 4, 8})
                for (uint64_t n : {7 * tile + 5, 8 * tile, 9 * tile - 1})
                    for (Pattern p : {kRandom, kLow20, kFew})
                        for (int inplace = 0; inplace < 2; ++inplace)
                            if (runs(d, vb)) cases.push_back({d, bool(vb == 4), vb, n, p, bool(inplace), path, 2 * tile});
    }
    // The huge tile through every pattern, 8-byte keys (u64, i64, f64).
    for (int d : {3, 4, 5})
        for (int p = 0; p < kPatternCount; ++p)
            cases.push_back({d, bool(p % 2), 4, 100003, Pattern(p), bool((p / 2) % 2), kHuge, rd::kMaxPortionKeys});
    // D. The fused kernel directly, small counts included.
    const uint64_t fused_tile = gc::OnesweepFusedShape<4, 0>::type::kTile;
    for (int d : {0, 1, 2, 3, 4, 5})
        for (int vb : {0, 4, 8})
            for (uint64_t n : {uint64_t(1), uint64_t(2), uint64_t(77), fused_tile - 1, fused_tile, fused_tile + 1,
                               3 * fused_tile + 5, 64 * fused_tile})
                for (Pattern p : {kRandom, kLow20, kTop8, kEqual})
                    cases.push_back({d, bool((n + vb) % 2), vb, n, p, bool((n / 2 + d) % 2), kFused, rd::kMaxPortionKeys});
    // E. The alternative large shape through patterns.
    for (int d : {0, 2, 3})
        for (int vb : {0, 4})
            for (int p = 0; p < kPatternCount; ++p)
                cases.push_back({d, bool(p % 2), vb, 200003, Pattern(p), bool((p / 2) % 2), kAlt, rd::kMaxPortionKeys});
    return cases;
}

std::vector<Case> sanitize_cases() {
    std::vector<Case> cases;
    const uint64_t medium_tile = gc::OnesweepMediumShape<4, 0>::type::kTile;
    for (int d : {0, 3})
        for (int vb : {0, 4, 8}) {
            cases.push_back({d, false, vb, 1000, kRandom, false, kPublic, rd::kMaxPortionKeys});
            cases.push_back({d, true, vb, 3000, kFew, true, kPublic, rd::kMaxPortionKeys});
            cases.push_back({d, false, vb, 20001, kRandom, false, kPublic, rd::kMaxPortionKeys});
            cases.push_back({d, true, vb, 20001, kLow20, true, kPublic, rd::kMaxPortionKeys});
            cases.push_back({d, false, vb, 5 * medium_tile + 3, kRandom, true, kMedium, 2 * medium_tile});
        }
    cases.push_back({2, false, 4, 30011, kSpecial, false, kLarge, rd::kMaxPortionKeys});
    // The small tier of 4-byte keys (public path).
    cases.push_back({0, false, 0, kKeys4SmallCount, kRandom, false, kPublic, rd::kMaxPortionKeys});
    cases.push_back({2, true, 0, kKeys4SmallCount, kSpecial, true, kPublic, rd::kMaxPortionKeys});
    cases.push_back({5, true, 4, 3 * gc::OnesweepPairs8HugeShape::kTile + 7, kSpecial, true, kHuge,
                     2 * gc::OnesweepPairs8HugeShape::kTile});
    cases.push_back({0, false, 4, 3 * AltShape::kTile + 7, kRandom, false, kAlt, 2 * AltShape::kTile});
    cases.push_back({3, true, 0, 3 * AltShape::kTile + 7, kFew, true, kAlt, rd::kMaxPortionKeys});
    cases.push_back({5, true, 8, 5000, kRandom, true, kFused, rd::kMaxPortionKeys});
    return cases;
}

// ---------------------------------------------------------------------------
// Device-side data for timing and the big test.

__device__ __forceinline__ uint64_t mix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

template <typename T>
__global__ void fill_random(T *out, uint64_t n, uint64_t seed, uint64_t mask) {
    for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
        out[i] = T(mix64(i ^ (seed << 40) ^ seed) & mask);
}


// sums[0] += sum of keys, sums[1] += sum of mix64(key); sums[2] += out-of-order neighbours.
__global__ void fingerprint(const uint32_t *keys, uint64_t n, unsigned long long *sums) {
    unsigned long long a = 0, b = 0, bad = 0;
    for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x) {
        a += keys[i];
        b += mix64(keys[i]);
        if (i + 1 < n && keys[i] > keys[i + 1]) ++bad;
    }
    atomicAdd(&sums[0], a);
    atomicAdd(&sums[1], b);
    atomicAdd(&sums[2], bad);
}

// fingerprint() of n u32 keys, read back (sums: 3 device words, zeroed here).
std::array<unsigned long long, 3> fingerprint_of(const uint32_t *keys, uint64_t n, unsigned long long *sums) {
    CK(cudaMemset(sums, 0, 3 * 8));
    fingerprint<<<4096, 256>>>(keys, n, sums);
    CK(cudaGetLastError());
    std::array<unsigned long long, 3> h;
    CK(cudaMemcpy(h.data(), sums, sizeof h, cudaMemcpyDeviceToHost));
    return h;
}

// Whether `out` (fingerprint_of) is `in`'s keys in order: the same sum and
// hash, no out-of-order neighbour.
bool sorted_from(const std::array<unsigned long long, 3> &in, const std::array<unsigned long long, 3> &out) {
    return in[0] == out[0] && in[1] == out[1] && out[2] == 0;
}

void fill_device(void *p, int bytes, uint64_t n, uint64_t seed, uint64_t mask = ~0ull) {
    if (bytes == 4) fill_random<uint32_t><<<2048, 256>>>(static_cast<uint32_t *>(p), n, seed, mask);
    else fill_random<uint64_t><<<2048, 256>>>(static_cast<uint64_t *>(p), n, seed, mask);
    CK(cudaGetLastError());
}

// The timing loops' device buffers: `copies` random input copies of n keys
// (and values when value_bytes) to rotate over, aliased up to three, and one
// output; freed when it goes out of scope.
struct TimingBuffers {
    void *keys_in[3] = {}, *values_in[3] = {};
    void *keys_out = nullptr, *values_out = nullptr;
    int copies;
    TimingBuffers(uint64_t n, int key_bytes, int value_bytes, int copies_ = 3) : copies(copies_) {
        for (int i = 0; i < 3; ++i) {
            if (i >= copies) {
                keys_in[i] = keys_in[0];
                values_in[i] = values_in[0];
                continue;
            }
            keys_in[i] = device_alloc(n * key_bytes);
            fill_device(keys_in[i], key_bytes, n, 1000 + i);
            if (value_bytes) {
                values_in[i] = device_alloc(n * value_bytes);
                fill_device(values_in[i], value_bytes, n, 2000 + i);
            }
        }
        keys_out = device_alloc(n * key_bytes);
        values_out = value_bytes ? device_alloc(n * value_bytes) : nullptr;
        CK(cudaDeviceSynchronize());
    }
    ~TimingBuffers() {
        for (int i = 0; i < copies; ++i) {
            CK(cudaFree(keys_in[i]));
            if (values_in[i]) CK(cudaFree(values_in[i]));
        }
        CK(cudaFree(keys_out));
        if (values_out) CK(cudaFree(values_out));
    }
    TimingBuffers(const TimingBuffers &) = delete;
    TimingBuffers &operator=(const TimingBuffers &) = delete;
};

struct TimingCase {
    const char *name;
    int dtype;  // index into kDtypes
    int value_bytes;
    uint64_t n;
    const char *target;
};

__global__ void empty_kernel() {}

// Per-kernel breakdown of the large path: histogram only, + first pass, all.
template <typename K, int VB>
void breakdown(TestEnv &t, const char *name, uint64_t n) {
    using Shape = typename gc::OnesweepLargeShape<sizeof(K), VB>::type;
    TimingBuffers buffers(n, sizeof(K), VB);
    void *const *keys_in = buffers.keys_in, *const *values_in = buffers.values_in;
    void *keys_out = buffers.keys_out, *values_out = buffers.values_out;
    SortRequest request{};
    request.key_kind = KeyKind::Unsigned;
    request.key_bytes = sizeof(K);
    request.value_bytes = VB;
    request.keys_out = keys_out;
    request.values_out = values_out;
    request.count = n;
    const gc::SortTuning tuning = gc::sort_tuning(t.env.code_arch, sizeof(K), VB);
    double ms[3];
    const int passes[3] = {0, 1, 8};
    for (int k = 0; k < 3; ++k)
        ms[k] = median_ms(t.env.stream, 15, [&](int copy) {
            request.keys_in = keys_in[copy];
            request.values_in = values_in[copy];
            rd::onesweep_sort_with<K, VB, Shape>(t.env, request, tuning, {rd::kMaxPortionKeys, passes[k]});
        });
    std::printf("breakdown %-20s histogram %8.1f us, first pass %8.1f us, all %8.1f us (%d passes, %.1f us/pass)\n",
                name, ms[0] * 1e3, (ms[1] - ms[0]) * 1e3, ms[2] * 1e3, int(sizeof(K)), (ms[2] - ms[0]) * 1e3 / sizeof(K));
    t.workspace.release();
}

// Per-tile traces of the large path (built with GPUPRIM_SORT_TRACE): where a
// tile's time goes, per pass, means/medians/p90 in ns.
template <typename K, int VB, typename Shape = typename gc::OnesweepLargeShape<sizeof(K), VB>::type>
void trace_large(TestEnv &t, const char *name, uint64_t n) {
    TimingBuffers buffers(n, sizeof(K), VB, 1);
    SortRequest request{};
    request.key_kind = KeyKind::Unsigned;
    request.key_bytes = sizeof(K);
    request.value_bytes = VB;
    request.keys_in = buffers.keys_in[0];
    request.values_in = buffers.values_in[0];
    request.keys_out = buffers.keys_out;
    request.values_out = buffers.values_out;
    request.count = n;
    const gc::SortTuning tuning = gc::sort_tuning(t.env.code_arch, sizeof(K), VB);
    // The driver's portions: as equal as whole tiles allow.
    const uint64_t all_tiles = (n + Shape::kTile - 1) / Shape::kTile;
    const uint64_t max_portion_tiles = rd::kMaxPortionKeys / Shape::kTile;
    const uint64_t portions = (all_tiles + max_portion_tiles - 1) / max_portion_tiles;
    const uint64_t tiles = (all_tiles + portions - 1) / portions;
    const int passes = int(sizeof(K));
    const uint64_t words = uint64_t(passes) * portions * tiles * 8;
    unsigned long long *d = static_cast<unsigned long long *>(device_alloc(words * 8));
    for (int r = 0; r < 3; ++r) {  // the last run's stamps are kept
        CK(cudaMemsetAsync(d, 0, words * 8, t.env.stream));
        rd::onesweep_sort_with<K, VB, Shape>(t.env, request, tuning, {rd::kMaxPortionKeys, rd::kMaxPasses, d});
    }
    CK(cudaStreamSynchronize(t.env.stream));
    std::vector<unsigned long long> h(words);
    CK(cudaMemcpy(h.data(), d, words * 8, cudaMemcpyDeviceToHost));
    CK(cudaFree(d));
    auto stat = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        double m = 0;
        for (double x : v) m += x;
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.0f/%.0f/%.0f", v.empty() ? 0 : m / v.size(), v.empty() ? 0 : v[v.size() / 2],
                      v.empty() ? 0 : v[v.size() * 9 / 10]);
        return std::string(buf);
    };
    for (int p = 0; p < passes; ++p) {
        std::vector<double> rank, lookback, scatter, rest, life, before_lookback, digit0, windows, stalls;
        uint64_t t_min = ~0ull, t_max = 0;
        double life_sum = 0;
        for (uint64_t tile = 1; tile < tiles; ++tile) {
            const unsigned long long *r = &h[(uint64_t(p) * portions * tiles + tile) * 8];  // portion 0
            if (!r[0] || !r[4]) continue;
            t_min = std::min<uint64_t>(t_min, r[0]);
            t_max = std::max<uint64_t>(t_max, r[4]);
            rank.push_back(double(r[1]) - double(r[0]));
            lookback.push_back(double(r[2]) - double(r[1]));
            scatter.push_back(double(r[3]) - double(r[2]));
            rest.push_back(double(r[4]) - double(r[3]));
            life.push_back(double(r[4]) - double(r[0]));
            before_lookback.push_back(double(r[5]) - double(r[0]));
            digit0.push_back(double(r[6]) - double(r[5]));
            windows.push_back(double(r[7] >> 32));
            stalls.push_back(double(r[7] & 0xffffffffu));
            life_sum += double(r[4]) - double(r[0]);
        }
        if (life.empty()) continue;
        std::printf("trace %-20s pass %d: tiles %zu span %.0f us, busy blocks avg %.0f; mean/median/p90 ns: "
                    "to counts %s, counts to offsets %s, key scatter %s, rest %s, life %s; "
                    "to look-back %s, digit 0 look-back %s, windows %s, unpublished %s\n",
                    name, p, life.size(), (t_max - t_min) / 1e3, life_sum / double(t_max - t_min),
                    stat(rank).c_str(), stat(lookback).c_str(), stat(scatter).c_str(), stat(rest).c_str(),
                    stat(life).c_str(), stat(before_lookback).c_str(), stat(digit0).c_str(), stat(windows).c_str(),
                    stat(stalls).c_str());
    }
    t.workspace.release();
}

void trace_cases(TestEnv &t) {
    trace_large<uint32_t, 0>(t, "u32 keys 2^28", 1ull << 28);
    trace_large<uint32_t, 4>(t, "u32/u32 pairs 2^28", 1ull << 28);
    trace_large<uint64_t, 0>(t, "u64 keys 2^26", 1ull << 26);

}

// One sort, for ncu: which = k32 | p32 | k64, who = ours | cub.
void profile(TestEnv &t, const std::string &which, const std::string &who) {
    const int dtype = which == "k64" ? 3 : 0;
    const int vb = which == "p32" ? 4 : 0;
    const uint64_t n = which == "k64" ? (1ull << 25) : (1ull << 26);
    const Dtype &dt = kDtypes[dtype];
    TimingBuffers buffers(n, dt.bytes, vb, 1);
    void *const *keys_in = buffers.keys_in, *const *values_in = buffers.values_in;
    void *keys_out = buffers.keys_out, *values_out = buffers.values_out;
    if (who == "cub") {
        cub_time(t.env.stream, dt.cub_id, vb, keys_in, keys_out, values_in, values_out, n, 0);
    } else {
        SortRequest request{};
        request.key_kind = dt.kind;
        request.key_bytes = dt.bytes;
        request.value_bytes = uint32_t(vb);
        request.keys_in = keys_in[0];
        request.values_in = values_in[0];
        request.keys_out = keys_out;
        request.values_out = values_out;
        request.count = n;
        gc::sort(t.env, request);
    }
    CK(cudaDeviceSynchronize());
}

void time_cases(TestEnv &t) {
    {
        const double floor_ms = median_ms(t.env.stream, 200, [&](int) {
            empty_kernel<<<1, 32, 0, t.env.stream>>>();
        });
        std::printf("launch floor (empty kernel, same timing): %.1f us\n", floor_ms * 1e3);
    }
    breakdown<uint32_t, 0>(t, "u32 keys 2^28", 1ull << 28);
    breakdown<uint32_t, 4>(t, "u32/u32 pairs 2^28", 1ull << 28);
    breakdown<uint64_t, 0>(t, "u64 keys 2^26", 1ull << 26);
    const TimingCase cases[] = {
        {"u32 keys 2^28", 0, 0, 1ull << 28, ">=50 Gk/s (CUB 41.9)"},
        {"u32/u32 pairs 2^28", 0, 4, 1ull << 28, ">=36 Gk/s (CUB 30.6)"},
        {"u64 keys 2^26", 3, 0, 1ull << 26, ">=18 Gk/s (CUB 15.3)"},
        {"f32 keys 2^28", 2, 0, 1ull << 28, "within 5% of u32"},
        {"i32 keys 2^28", 1, 0, 1ull << 28, "within 5% of u32"},
        {"u32 keys 2^16", 0, 0, 1ull << 16, "<=30 us (CUB 62.5)"},
        {"u32 keys 2^10", 0, 0, 1ull << 10, "<=6 us (CUB 15.2)"},
        {"u32 keys 2^12", 0, 0, 1ull << 12, ""},
        {"u32 keys 2^13", 0, 0, 1ull << 13, ""},
        {"u32 keys 2^14", 0, 0, 1ull << 14, ""},
        {"u32 keys 2^18", 0, 0, 1ull << 18, ""},
        {"u32 keys 2^20", 0, 0, 1ull << 20, ""},
        {"u32 keys 2^22", 0, 0, 1ull << 22, ""},
        {"u32 keys 2^24", 0, 0, 1ull << 24, ""},
        {"u64/u64 pairs 2^25", 3, 8, 1ull << 25, ""},
        {"u32/u64 pairs 2^26", 0, 8, 1ull << 26, ""},
        {"u64/u32 pairs 2^26", 3, 4, 1ull << 26, ""},
    };
    std::printf("\n%-22s %12s %12s %9s %9s %7s  %s\n", "case", "ours us", "cub us", "ours Gk/s", "cub Gk/s", "speedup",
                "target");
    for (const TimingCase &c : cases) {
        const Dtype &dt = kDtypes[c.dtype];
        const uint64_t n = c.n;
        TimingBuffers buffers(n, dt.bytes, c.value_bytes);
        void *const *keys_in = buffers.keys_in, *const *values_in = buffers.values_in;
        void *keys_out = buffers.keys_out, *values_out = buffers.values_out;
        const int reps = n >= (1ull << 24) ? 25 : 200;
        SortRequest request{};
        request.key_kind = dt.kind;
        request.key_bytes = dt.bytes;
        request.value_bytes = uint32_t(c.value_bytes);
        request.keys_out = keys_out;
        request.values_out = values_out;
        request.count = n;
        const double ours = median_ms(t.env.stream, reps, [&](int copy) {
            request.keys_in = keys_in[copy];
            request.values_in = values_in[copy];
            gc::sort(t.env, request);
        });
        // Agreement with CUB on integer keys (same stable order): sort copy 0 with both.
        bool agree = true;
        std::vector<unsigned char> ours_k, ours_v;
        if (dt.kind != KeyKind::Float) {
            request.keys_in = keys_in[0];
            request.values_in = values_in[0];
            gc::sort(t.env, request);
            CK(cudaStreamSynchronize(t.env.stream));
            ours_k.resize(n * dt.bytes);
            CK(cudaMemcpy(ours_k.data(), keys_out, n * dt.bytes, cudaMemcpyDeviceToHost));
            if (c.value_bytes) {
                ours_v.resize(n * c.value_bytes);
                CK(cudaMemcpy(ours_v.data(), values_out, n * c.value_bytes, cudaMemcpyDeviceToHost));
            }
        }
        const double cub = cub_time(t.env.stream, dt.cub_id, c.value_bytes, keys_in, keys_out, values_in, values_out,
                                    n, reps);
        if (dt.kind != KeyKind::Float) {
            // cub_time's last run sorted copy (reps - 1) % 3; sort copy 0 again with CUB for the comparison.
            void *k0[3] = {keys_in[0], keys_in[0], keys_in[0]};
            void *v0[3] = {values_in[0], values_in[0], values_in[0]};
            cub_time(t.env.stream, dt.cub_id, c.value_bytes, k0, keys_out, v0, values_out, n, 1);
            CK(cudaStreamSynchronize(t.env.stream));
            std::vector<unsigned char> cub_k(n * dt.bytes), cub_v(n * c.value_bytes);
            CK(cudaMemcpy(cub_k.data(), keys_out, n * dt.bytes, cudaMemcpyDeviceToHost));
            if (c.value_bytes) CK(cudaMemcpy(cub_v.data(), values_out, n * c.value_bytes, cudaMemcpyDeviceToHost));
            agree = cub_k == ours_k && cub_v == ours_v;
        }
        std::printf("%-22s %12.1f %12.1f %9.2f %9.2f %7.2f  %s%s\n", c.name, ours * 1e3, cub * 1e3, n / ours / 1e6,
                    n / cub / 1e6, cub / ours, c.target, agree ? "" : "  MISMATCH vs CUB");
        std::fflush(stdout);
    }
    t.workspace.release();
}

// Key distributions of the histogram mode, as 32-bit words: uniform bits,
// the AND of 2 and 4 random words, f32 normal, 16 distinct random values a
// word (u64 keys: 256 distinct).
enum HistogramDistribution { kUniformBits, kAnd2, kAnd4, kNormal, kSixteen };
const char *kDistributionNames[] = {"uniform bits", "AND of 2", "AND of 4", "f32 normal", "16 a word"};

__global__ void fill_distribution(uint32_t *out, uint64_t n, uint64_t seed, int distribution) {
    for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x) {
        const uint64_t a = mix64(i ^ (seed << 40) ^ seed), b = mix64(a ^ 0x9e3779b97f4a7c15ull);
        const float u1 = (float(uint32_t(a >> 40)) + 1.0f) * 0x1p-24f, u2 = float(uint32_t(b >> 40)) * 0x1p-24f;
        float f = 0;
        uint32_t bits = 0;
        switch (distribution) {
        case kUniformBits: bits = uint32_t(a); break;
        case kAnd2: bits = uint32_t(a) & uint32_t(b); break;
        case kAnd4: bits = uint32_t(a) & uint32_t(b) & uint32_t(a >> 32) & uint32_t(b >> 32); break;
        case kNormal: f = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2); bits = __float_as_uint(f); break;
        default: bits = uint32_t(mix64(a & 15)); break;
        }
        out[i] = bits;
    }
}

// One histogram shape for every count.
template <typename HistogramShape>
struct OnlyHistogram {
    using few = HistogramShape;
    using many = HistogramShape;
};

// The upfront histogram alone (order check included) with one shape.
template <typename K, typename HistogramShape>
double time_histogram(TestEnv &t, SortRequest request, void *const *keys_in) {
    using Shape = typename gc::OnesweepLargeShape<sizeof(K), 0>::type;
    const gc::SortTuning tuning = gc::sort_tuning(t.env.code_arch, sizeof(K), 0);
    const int reps = request.count * sizeof(K) >= (1ull << 28) ? 25 : 101;
    return median_ms(t.env.stream, reps, [&](int copy) {
        request.keys_in = keys_in[copy];
        rd::onesweep_sort_with<K, 0, Shape, false, OnlyHistogram<HistogramShape>>(t.env, request, tuning,
                                                                                  {rd::kMaxPortionKeys, 0});
    }) * 1e3;
}

void fill_keys(const TimingBuffers &buffers, int key_bytes, uint64_t n, int distribution) {
    for (int c = 0; c < buffers.copies; ++c)
        fill_distribution<<<2048, 256>>>(static_cast<uint32_t *>(buffers.keys_in[c]), n * key_bytes / 4, 1000 + c,
                                         distribution);
    CK(cudaDeviceSynchronize());
}

// One table: the histogram of n keys of type K with each shape (columns
// threads x replicas), a row a distribution.
template <typename K, typename... Shapes>
void histogram_table(TestEnv &t, uint64_t n, std::initializer_list<int> distributions) {
    TimingBuffers buffers(n, sizeof(K), 0);
    std::printf("\n%s histogram n=2^%d (us, order check + histogram; median)\n%-14s", sizeof(K) == 4 ? "u32" : "u64",
                __builtin_ctzll(n), "keys");
    (std::printf(" %5dx%-3d", Shapes::kThreads, Shapes::kReplicas), ...);
    std::printf("\n");
    for (const int d : distributions) {
        fill_keys(buffers, sizeof(K), n, d);
        SortRequest request{};
        request.key_kind = d == kNormal ? KeyKind::Float : KeyKind::Unsigned;
        request.key_bytes = sizeof(K);
        request.keys_out = buffers.keys_out;
        request.count = n;
        std::printf("%-14s", kDistributionNames[d]);
        (std::printf(" %9.1f", time_histogram<K, Shapes>(t, request, buffers.keys_in)), ...);
        std::printf("\n");
        std::fflush(stdout);
    }
}

// `check_sort histogram`: the upfront histogram per counter shape and key
// distribution, then whole sorts (radix path) with the few-keys shape
// against the many-keys shape, u32 keys checked.
int histogram_shapes(TestEnv &t) {
    using gc::HistogramShape;
    int failed = 0;
    for (const uint64_t n : {1ull << 24, 1ull << 28})
        histogram_table<uint32_t, HistogramShape<256, 16, 8>, HistogramShape<256, 16, 16>,
                        HistogramShape<1024, 16, 16>, HistogramShape<1024, 16, 32>>(
            t, n, {kUniformBits, kAnd4, kNormal, kSixteen});
    for (const uint64_t n : {1ull << 24, 1ull << 26})
        histogram_table<uint64_t, HistogramShape<256, 16, 1>, HistogramShape<256, 16, 4>,
                        HistogramShape<1024, 16, 8>, HistogramShape<1024, 16, 16>>(t, n,
                                                                                   {kUniformBits, kAnd2, kSixteen});

    struct WholeCase {
        const char *name;
        int key_bytes, value_bytes;
        bool argsort;
        uint64_t n;
    };
    const WholeCase cases[] = {
        {"u32 keys", 4, 0, false, 1ull << 19},  {"u32 keys", 4, 0, false, 1ull << 20},
        {"u32 keys", 4, 0, false, 1ull << 21},  {"u32 keys", 4, 0, false, 1ull << 22},
        {"u32 keys", 4, 0, false, 1ull << 23},  {"u32 keys", 4, 0, false, 1ull << 24},
        {"u32 keys", 4, 0, false, 1ull << 26},  {"u32 keys", 4, 0, false, 1ull << 28},
        {"u32/u32 pairs", 4, 4, false, 1ull << 21}, {"u32/u32 pairs", 4, 4, false, 1ull << 22},
        {"u32/u32 pairs", 4, 4, false, 1ull << 24}, {"u32/u32 pairs", 4, 4, false, 1ull << 28},
        {"u32 argsort u64", 4, 8, true, 1ull << 22}, {"u32 argsort u64", 4, 8, true, 1ull << 24},
        {"u64 keys", 8, 0, false, 1ull << 21},  {"u64 keys", 8, 0, false, 1ull << 22},
        {"u64 keys", 8, 0, false, 1ull << 24},  {"u64 keys", 8, 0, false, 1ull << 26},
    };
    unsigned long long *sums = static_cast<unsigned long long *>(device_alloc(3 * 8));
    std::printf("\nwhole radix sorts, uniform keys (us, median): few-keys histogram shape vs many-keys\n");
    for (const WholeCase &c : cases) {
        const uint64_t n = c.n;
        TimingBuffers buffers(n, c.key_bytes, c.argsort ? 0 : c.value_bytes);
        if (c.argsort) buffers.values_out = device_alloc(n * c.value_bytes);  // freed with the buffers
        SortRequest request{};
        request.key_kind = KeyKind::Unsigned;
        request.key_bytes = uint32_t(c.key_bytes);
        request.value_bytes = uint32_t(c.value_bytes);
        request.keys_out = buffers.keys_out;
        request.values_out = buffers.values_out;
        request.count = n;
        const int reps = n >= (1ull << 26) ? 25 : 101;
        double us[2];
        bool ok = true;
        for (int v = 0; v < 2; ++v) {
            gc::SortTuning tuning = gc::sort_tuning(t.env.code_arch, request.key_bytes, request.value_bytes);
            tuning.histogram_many_min = v == 0 ? ~0ull : 0;
            us[v] = median_ms(t.env.stream, reps, [&](int copy) {
                request.keys_in = buffers.keys_in[copy];
                request.values_in = c.argsort ? nullptr : buffers.values_in[copy];
                gc::radix_sort(t.env, request, tuning);
            }) * 1e3;
            if (c.key_bytes == 4)  // the last run sorted copy (reps - 1) % 3
                ok = ok &&
                     sorted_from(fingerprint_of(static_cast<const uint32_t *>(buffers.keys_in[(reps - 1) % 3]), n, sums),
                                 fingerprint_of(static_cast<const uint32_t *>(buffers.keys_out), n, sums));
            ok = ok && t.counters_zero();
        }
        failed += !ok;
        std::printf("%-16s 2^%-2d %9.1f %9.1f  %+5.1f%%  %s\n", c.name, __builtin_ctzll(n), us[0], us[1],
                    (us[1] / us[0] - 1) * 100, ok ? (c.key_bytes == 4 ? "sorted" : "") : "WRONG");
        std::fflush(stdout);
    }
    CK(cudaFree(sums));
    t.workspace.release();
    return failed;
}

// only: "k8 v4" (key and value widths) limits the sweep to those sizes.
void sweep(TestEnv &t, const char *only) {
    struct Size {
        int key_bytes, value_bytes;
        uint64_t n;
    };
    const Size sizes[] = {{4, 0, 1ull << 28}, {4, 4, 1ull << 28}, {8, 0, 1ull << 26}, {4, 8, 1ull << 26},
                          {4, 0, 1ull << 12}, {4, 0, 1ull << 16}, {4, 0, 1ull << 18}, {4, 0, 1ull << 20},
                          {4, 0, 1ull << 21}, {4, 0, 1ull << 22}, {4, 0, 1ull << 24}, {8, 0, 1ull << 20},
                          {8, 0, 1ull << 21}, {8, 0, 1ull << 22}, {4, 4, 1ull << 20}, {4, 4, 1ull << 21},
                          {4, 4, 1ull << 22}, {8, 4, 1ull << 24}, {8, 4, 1ull << 26}, {8, 4, 1ull << 28}};
    const std::vector<SortVariant> variants = sweep_variants();
    for (const Size &s : sizes) {
        char widths[32];
        std::snprintf(widths, sizeof widths, "k%d v%d", s.key_bytes, s.value_bytes);
        if (only && std::strcmp(only, widths) != 0) continue;
        const uint64_t n = s.n;
        TimingBuffers buffers(n, s.key_bytes, s.value_bytes);
        void *const *keys_in = buffers.keys_in, *const *values_in = buffers.values_in;
        void *keys_out = buffers.keys_out, *values_out = buffers.values_out;
        SortRequest request{};
        request.key_kind = KeyKind::Unsigned;
        request.key_bytes = uint32_t(s.key_bytes);
        request.value_bytes = uint32_t(s.value_bytes);
        request.keys_out = keys_out;
        request.values_out = values_out;
        request.count = n;
        {
            const int reps = n >= (1ull << 24) ? 15 : 100;
            const double ms = cub_time(t.env.stream, s.key_bytes == 4 ? 0 : 3, s.value_bytes, keys_in, keys_out,
                                       values_in, values_out, n, reps);
            std::printf("sweep k%d v%d n=2^%d %-40s %10.1f us %8.2f Gk/s\n", s.key_bytes, s.value_bytes,
                        63 - __builtin_clzll(n), "CUB", ms * 1e3, n / ms / 1e6);
        }
        std::vector<unsigned char> reference;
        for (const SortVariant &v : variants) {
            if (v.key_bytes != s.key_bytes || v.value_bytes != s.value_bytes) continue;
            if (n < v.min_n || n > v.max_n) continue;
            const int reps = n >= (1ull << 24) ? 15 : 100;
            request.keys_in = keys_in[0];
            request.values_in = values_in[0];
            if (!v.sort(t, request)) {
                std::printf("sweep k%d v%d n=2^%d %-40s n/a\n", s.key_bytes, s.value_bytes, 63 - __builtin_clzll(n),
                            v.name.c_str());
                continue;
            }
            const double ms = median_ms(t.env.stream, reps, [&](int copy) {
                request.keys_in = keys_in[copy];
                request.values_in = values_in[copy];
                v.sort(t, request);
            });
            // Same output as the size's first variant (the library) on copy 0.
            request.keys_in = keys_in[0];
            request.values_in = values_in[0];
            v.sort(t, request);
            CK(cudaStreamSynchronize(t.env.stream));
            std::vector<unsigned char> out(n * (s.key_bytes + s.value_bytes));
            CK(cudaMemcpy(out.data(), keys_out, n * s.key_bytes, cudaMemcpyDeviceToHost));
            if (s.value_bytes)
                CK(cudaMemcpy(out.data() + n * s.key_bytes, values_out, n * s.value_bytes, cudaMemcpyDeviceToHost));
            const bool first = reference.empty();
            if (first) reference = std::move(out);
            std::printf("sweep k%d v%d n=2^%d %-40s %10.1f us %8.2f Gk/s%s\n", s.key_bytes, s.value_bytes,
                        63 - __builtin_clzll(n), v.name.c_str(), ms * 1e3, n / ms / 1e6,
                        first || out == reference ? "" : "  MISMATCH");
            std::fflush(stdout);
        }
        t.workspace.release();
    }
}

// u32 keys past 2^32 keys, sorted on the device and verified there.
int big(TestEnv &t) {
    const uint64_t n = (1ull << 32) + (3ull << 20) + 7;
    int failed = 0;
    unsigned long long *sums = static_cast<unsigned long long *>(device_alloc(3 * 8));
    for (int variant = 0; variant < 2; ++variant) {
        const bool in_place = variant == 0;
        const uint64_t mask = variant == 0 ? 0xffffffffull : 0xffffffull;
        uint32_t *keys = static_cast<uint32_t *>(device_alloc(n * 4));
        uint32_t *out = in_place ? keys : static_cast<uint32_t *>(device_alloc(n * 4));
        fill_device(keys, 4, n, 77 + variant, mask);
        const std::array<unsigned long long, 3> before = fingerprint_of(keys, n, sums);
        SortRequest request{};
        request.key_kind = KeyKind::Unsigned;
        request.key_bytes = 4;
        request.keys_in = keys;
        request.keys_out = out;
        request.count = n;
        cudaEvent_t a, b;
        CK(cudaEventCreate(&a));
        CK(cudaEventCreate(&b));
        CK(cudaEventRecord(a, t.env.stream));
        bool threw = false;
        try {
            gc::sort(t.env, request);
        } catch (const gpuprim::Error &e) {
            std::printf("big: threw %s\n", e.what());
            threw = true;
        }
        CK(cudaEventRecord(b, t.env.stream));
        CK(cudaEventSynchronize(b));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, a, b));
        const std::array<unsigned long long, 3> after = fingerprint_of(out, n, sums);
        const bool ok = !threw && sorted_from(before, after) && t.counters_zero();
        std::printf("big n=%llu (2^32+%llu) %s mask=%llx: %.1f ms, %.2f Gk/s, sum %s, hash %s, disorder %llu -> %s\n",
                    (unsigned long long)n, (unsigned long long)(n - (1ull << 32)), in_place ? "in place" : "out of place",
                    (unsigned long long)mask, ms, n / ms / 1e6, before[0] == after[0] ? "ok" : "BAD",
                    before[1] == after[1] ? "ok" : "BAD", after[2], ok ? "PASS" : "FAIL");
        failed += !ok;
        CK(cudaFree(keys));
        if (!in_place) CK(cudaFree(out));
        t.workspace.release();
    }
    CK(cudaFree(sums));
    return failed;
}

// Small sizes: the one-block sorts (bitonic network, radix passes) against
// the fused radix launch, mean per call of 100 back-to-back calls (the host
// queues a call in ~5 us, so calls shorter than that measure the host); then
// one call between events (median of 51), CUB's DeviceRadixSort beside.
void time_paths(TestEnv &t) {
    struct PathCase {
        const char *name;
        int dtype, value_bytes;
    };
    const PathCase cases[] = {{"u32 keys", 0, 0},      {"f32 keys", 2, 0},       {"u32/u32 pairs", 0, 4},
                              {"u32/u64 pairs", 0, 8}, {"u64 keys", 3, 0},       {"u64/u64 pairs", 3, 8}};
    std::printf("\n%-14s %6s | %8s %8s %8s | %8s %8s %8s   (us; batch of 100 per call | one call, median)\n", "case",
                "n", "network", "radix", "fused", "network", "radix", "CUB");
    for (const PathCase &c : cases) {
        for (uint64_t n : {uint64_t(256), uint64_t(1024), uint64_t(2048), uint64_t(4096)}) {
            const Dtype &dt = kDtypes[c.dtype];
            TimingBuffers buffers(n, dt.bytes, c.value_bytes, 3);
            SortRequest request{};
            request.key_kind = dt.kind;
            request.key_bytes = dt.bytes;
            request.value_bytes = uint32_t(c.value_bytes);
            request.keys_in = buffers.keys_in[0];
            request.values_in = buffers.values_in[0];
            request.keys_out = buffers.keys_out;
            request.values_out = buffers.values_out;
            request.count = n;
            auto batch_us = [&](auto call) {
                for (int i = 0; i < 5; ++i) call();
                cudaEvent_t e0, e1;
                CK(cudaEventCreate(&e0));
                CK(cudaEventCreate(&e1));
                CK(cudaEventRecord(e0, t.env.stream));
                for (int i = 0; i < 100; ++i) call();
                CK(cudaEventRecord(e1, t.env.stream));
                CK(cudaEventSynchronize(e1));
                float ms = 0;
                CK(cudaEventElapsedTime(&ms, e0, e1));
                CK(cudaEventDestroy(e0));
                CK(cudaEventDestroy(e1));
                return ms * 1e3 / 100;
            };
            auto single_us = [&](auto call) {
                return median_ms(t.env.stream, 51, [&](int copy) {
                           SortRequest r = request;
                           r.keys_in = buffers.keys_in[copy];
                           r.values_in = buffers.values_in[copy];
                           call(r);
                       }) * 1e3;
            };
            const bool network_fits = gc::block_sort_fits(t.env, request);
            const bool radix_fits = gc::block_radix_sort_fits(t.env, request);
            auto network = [&](const SortRequest &r) { gc::block_sort(t.env, r); };
            auto radix = [&](const SortRequest &r) { gc::block_radix_sort(t.env, r); };
            const double network_batch = network_fits ? batch_us([&] { network(request); }) : -1;
            const double radix_batch = radix_fits ? batch_us([&] { radix(request); }) : -1;
            const double fused = batch_us([&] { run_sort(t, request, kFused, 0); });
            const double network_one = network_fits ? single_us(network) : -1;
            const double radix_one = radix_fits ? single_us(radix) : -1;
            const double cub = cub_time(t.env.stream, dt.cub_id, c.value_bytes, buffers.keys_in, buffers.keys_out,
                                        buffers.values_in, buffers.values_out, n, 51) * 1e3;
            std::printf("%-14s %6llu | %8.2f %8.2f %8.2f | %8.2f %8.2f %8.2f\n", c.name, (unsigned long long)n,
                        network_batch, radix_batch, fused, network_one, radix_one, cub);
        }
    }
}

}  // namespace

int main(int argc, char **argv) {
    const std::string mode = argc > 1 ? argv[1] : "check";
    TestEnv t;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device %s, %d SMs, cc %d.%d, code sm_%d, mode %s\n", prop.name, prop.multiProcessorCount, prop.major,
                prop.minor, t.env.code_arch, mode.c_str());
    int failed = 0;
    if (mode == "check") failed = run_cases(t, check_cases());
    else if (mode == "sanitize") failed = run_cases(t, sanitize_cases());
    else if (mode == "time") time_cases(t);
    else if (mode == "paths") time_paths(t);
    else if (mode == "sweep") sweep(t, argc > 2 ? argv[2] : nullptr);
    else if (mode == "big") failed = big(t);
    else if (mode == "trace") trace_cases(t);
    else if (mode == "histogram") failed = histogram_shapes(t);
    else if (mode == "profile") profile(t, argc > 2 ? argv[2] : "k32", argc > 3 ? argv[3] : "ours");
    std::printf("%s: %s\n", mode.c_str(), failed ? "FAILED" : "done");
    return failed ? 1 : 0;
}
