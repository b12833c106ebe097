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
    v.push_back({"public", 4, 0, 0, big, [](TestEnv &t, const gpuprim::SortRequest &r) {
                     gc::sort(t.env, r);
                     return true;
                 }});
    // u32 keys, large
    v.push_back(onesweep<uint32_t, 0, Shape<384, 16, 2, O, false, 4>>("L384x16", kLargeMin, big));
    v.push_back(onesweep<uint32_t, 0, Shape<384, 20, 2, O, false, 4>>("L384x20", kLargeMin, big));
    v.push_back(onesweep<uint32_t, 0, Shape<512, 14, 2, O, false, 4>>("L512x14 mb2", kLargeMin, big));
    v.push_back(onesweep<uint32_t, 0, Shape<256, 16, 3, O, false, 4>>("L256x16 mb3", kLargeMin, big));
    v.push_back(onesweep<uint32_t, 0, Shape<256, 20, 3, O, false, 4>>("L256x20 mb3", kLargeMin, big));
    // u32/u32 pairs, large
    v.push_back({"public", 4, 4, kLargeMin, big, [](TestEnv &t, const gpuprim::SortRequest &r) {
                     gc::sort(t.env, r);
                     return true;
                 }});
    v.push_back(onesweep<uint32_t, 4, Shape<384, 12, 2, O, true, 4>>("L384x12 stage", kLargeMin, big));
    v.push_back(onesweep<uint32_t, 4, Shape<384, 14, 2, O, false, 4>>("L384x14 nostage", kLargeMin, big));
    v.push_back(onesweep<uint32_t, 4, Shape<256, 16, 3, O, true, 4>>("L256x16 mb3 stage", kLargeMin, big));
    v.push_back(onesweep<uint32_t, 4, Shape<512, 12, 2, O, true, 4>>("L512x12 mb2 stage", kLargeMin, big));
    // u64 keys, large
    v.push_back({"public", 8, 0, kLargeMin, big, [](TestEnv &t, const gpuprim::SortRequest &r) {
                     gc::sort(t.env, r);
                     return true;
                 }});
    v.push_back(onesweep<uint64_t, 0, Shape<384, 12, 2, O, false, 4>>("L384x12", kLargeMin, big));
    v.push_back(onesweep<uint64_t, 0, Shape<256, 16, 3, O, false, 4>>("L256x16 mb3", kLargeMin, big));
    v.push_back(onesweep<uint64_t, 0, Shape<512, 10, 2, O, false, 4>>("L512x10 mb2", kLargeMin, big));
    // u32 keys, middle sizes
    const uint64_t mid = 1ull << 22;
    v.push_back(onesweep<uint32_t, 0, Shape<256, 8, 4, O, true, 4>>("M256x8 mb4", 4096, mid));
    v.push_back(onesweep<uint32_t, 0, Shape<512, 4, 3, O, true, 4>>("M512x4 mb3", 4096, mid));
    v.push_back(onesweep<uint32_t, 0, Shape<384, 18, 2, O, false, 4>>("M384x18 (large)", 1 << 18, mid));
    v.push_back(fused<uint32_t, 0, Shape<256, 4, 1, O, true, 16>>("F256x4 w16", 1 << 18));
    v.push_back(fused<uint32_t, 0, Shape<256, 4, 1, O, true, 32>>("F256x4 w32", 1 << 18));
    v.push_back(fused<uint32_t, 0, Shape<256, 8, 1, O, true, 16>>("F256x8 w16", 1 << 18));
    v.push_back(fused<uint32_t, 0, Shape<512, 4, 1, O, true, 16>>("F512x4 w16", 1 << 18));
    v.push_back({"B block sort", 4, 0, 0, 4096, [](TestEnv &t, const gpuprim::SortRequest &r) {
                     gc::block_sort(t.env, r);
                     return true;
                 }});
    return v;
}
