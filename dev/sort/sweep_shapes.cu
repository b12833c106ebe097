// Shape variants timed by `check_sort sweep`. Each applies to one key/value
// width and a range of counts. H* variants time the histogram kernel alone.
#include "sort_test_env.h"

#include "cuda/block_sort.cuh"
#include "cuda/radix_sort.cuh"
#include "cuda/sort_tuning.cuh"

namespace gc = gpuprim::cuda;
namespace rd = gpuprim::cuda::radix_detail;
using gc::RadixMatch;

namespace {

constexpr RadixMatch O = RadixMatch::AtomicOr;
constexpr uint64_t kLargeMin = 1ull << 24;

template <typename K, int VB, typename Shape>
SortVariant onesweep(const char *name, uint64_t min_n, uint64_t max_n) {
    return {name, int(sizeof(K)), VB, min_n, max_n, [](TestEnv &t, const gpuprim::SortRequest &r) {
                const gc::SortTuning tuning = gc::sort_tuning(t.env.compute_capability, r.key_bytes, r.value_bytes);
                rd::onesweep_sort<K, VB, Shape>(t.env, r, tuning);
                return true;
            }};
}

template <typename K, int VB, typename Shape>
SortVariant fused(const char *name, uint64_t max_n) {
    return {name, int(sizeof(K)), VB, 0, max_n, [](TestEnv &t, const gpuprim::SortRequest &r) {
                return rd::fused_sort<K, VB, Shape>(t.env, r);
            }};
}

template <int T, int I, int MB, RadixMatch M, bool S, int W, bool P = false>
using Shape = gc::OnesweepShape<T, I, MB, M, S, W, P>;

}  // namespace

std::vector<SortVariant> sweep_variants() {
    std::vector<SortVariant> v;
    const uint64_t big = ~0ull;
    constexpr RadixMatch P = RadixMatch::AtomicOrPacked;
    constexpr RadixMatch A = RadixMatch::MatchAny;
    auto pub = [&](int kb, int vb, uint64_t lo) {
        v.push_back({"public", kb, vb, lo, big, [](TestEnv &t, const gpuprim::SortRequest &r) {
                         gc::sort(t.env, r);
                         return true;
                     }});
    };
    // u32 keys, large
    pub(4, 0, 0);
    v.push_back(onesweep<uint32_t, 0, Shape<384, 18, 2, O, false, 4>>("L384x18 or (old)", kLargeMin, big));
    v.push_back(onesweep<uint32_t, 0, Shape<384, 18, 2, A, false, 4>>("L384x18 any", kLargeMin, big));
    v.push_back(onesweep<uint32_t, 0, Shape<384, 20, 2, P, false, 4>>("L384x20 packed", kLargeMin, big));
    v.push_back(onesweep<uint32_t, 0, Shape<384, 23, 2, P, false, 4>>("L384x23 packed", kLargeMin, big));
    v.push_back(onesweep<uint32_t, 0, Shape<384, 23, 2, A, false, 4>>("L384x23 any", kLargeMin, big));
    v.push_back(onesweep<uint32_t, 0, Shape<256, 20, 3, P, false, 4>>("L256x20 mb3 packed", kLargeMin, big));
    // u32/u32 pairs, large
    pub(4, 4, kLargeMin);
    v.push_back(onesweep<uint32_t, 4, Shape<384, 16, 2, O, true, 4>>("L384x16 stage or (old)", kLargeMin, big));
    v.push_back(onesweep<uint32_t, 4, Shape<384, 16, 2, A, true, 4>>("L384x16 stage any", kLargeMin, big));
    v.push_back(onesweep<uint32_t, 4, Shape<384, 18, 2, P, true, 4>>("L384x18 stage packed", kLargeMin, big));
    v.push_back(onesweep<uint32_t, 4, Shape<384, 14, 2, P, false, 4>>("L384x14 nostage packed", kLargeMin, big));
    // u64 keys, large
    pub(8, 0, kLargeMin);
    v.push_back(onesweep<uint64_t, 0, Shape<384, 14, 2, O, false, 4>>("L384x14 or (old)", kLargeMin, big));
    v.push_back(onesweep<uint64_t, 0, Shape<384, 14, 2, A, false, 4>>("L384x14 any", kLargeMin, big));
    v.push_back(onesweep<uint64_t, 0, Shape<384, 12, 2, P, false, 4>>("L384x12 packed", kLargeMin, big));
    v.push_back(onesweep<uint64_t, 0, Shape<384, 16, 2, P, false, 4>>("L384x16 packed", kLargeMin, big));
    // u32 keys, middle sizes
    const uint64_t mid = 1ull << 22;
    v.push_back(onesweep<uint32_t, 0, Shape<256, 8, 4, O, true, 4>>("M256x8 mb4 or (old)", 1 << 18, mid));
    v.push_back(onesweep<uint32_t, 0, Shape<384, 18, 2, P, false, 4>>("M384x18 (large)", 1 << 18, mid));
    v.push_back(fused<uint32_t, 0, Shape<256, 4, 1, O, true, 16>>("F256x4 w16 or (old)", 1 << 18));
    v.push_back(fused<uint32_t, 0, Shape<256, 8, 1, P, true, 16>>("F256x8 w16 packed", 1 << 18));
    return v;
}
