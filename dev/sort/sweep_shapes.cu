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
    auto pub = [&](int kb, int vb, uint64_t lo) {
        v.push_back({"public", kb, vb, lo, big, [](TestEnv &t, const gpuprim::SortRequest &r) {
                         gc::sort(t.env, r);
                         return true;
                     }});
    };
    // Run 1 of the packed/match.any sweep (dev/sort/NOTES.md) dropped those for large tiles.
    pub(4, 0, 0);
    v.push_back(onesweep<uint32_t, 0, Shape<384, 18, 2, P, false, 4>>("L384x18 packed", kLargeMin, big));
    pub(4, 4, kLargeMin);
    pub(8, 0, kLargeMin);
    // u32 keys, middle sizes
    const uint64_t mid = 1ull << 22;
    v.push_back(onesweep<uint32_t, 0, Shape<256, 8, 4, O, true, 4>>("M256x8 mb4", 1 << 18, mid));
    v.push_back(onesweep<uint32_t, 0, Shape<384, 18, 2, O, false, 4>>("M384x18 (large)", 1 << 18, mid));
    v.push_back(fused<uint32_t, 0, Shape<256, 4, 1, O, true, 16>>("F256x4 w16 or (old)", 1 << 18));
    v.push_back(fused<uint32_t, 0, Shape<256, 8, 1, O, true, 16>>("F256x8 w16 or", 1 << 18));
    return v;
}
