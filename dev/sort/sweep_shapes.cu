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

constexpr RadixMatch B = RadixMatch::Ballot;
constexpr RadixMatch O = RadixMatch::AtomicOr;
constexpr uint64_t kLargeMin = 1ull << 24;

template <typename K, int VB, typename Shape, typename Hist = gc::RadixHistogramShape>
SortVariant onesweep(const char *name, uint64_t min_n, uint64_t max_n, int passes = 8, bool programmatic = true) {
    return {name, int(sizeof(K)), VB, min_n, max_n, [programmatic, passes](TestEnv &t, const gpuprim::SortRequest &r) {
                gc::SortTuning tuning = gc::sort_tuning(t.env.compute_capability, r.key_bytes, r.value_bytes);
                tuning.programmatic_launch = programmatic;
                rd::onesweep_sort<K, VB, Shape, Hist>(t.env, r, tuning, rd::kMaxPortionKeys, passes);
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
    // u32 keys, large
    v.push_back(onesweep<uint32_t, 0, Shape<384, 18, 2, B, true, 4>>("L384x18", kLargeMin, big));
    v.push_back(onesweep<uint32_t, 0, Shape<384, 18, 2, B, true, 4, true>>("L384x18 prefetch", kLargeMin, big));
    v.push_back(onesweep<uint32_t, 0, Shape<384, 18, 2, O, true, 4>>("L384x18 atomicor", kLargeMin, big));
    v.push_back(onesweep<uint32_t, 0, Shape<384, 18, 2, O, true, 4, true>>("L384x18 atomicor prefetch", kLargeMin, big));
    v.push_back(onesweep<uint32_t, 0, Shape<384, 21, 2, B, true, 4, true>>("L384x21 prefetch", kLargeMin, big));
    v.push_back(onesweep<uint32_t, 0, Shape<256, 16, 3, B, true, 4, true>>("L256x16 mb3 prefetch", kLargeMin, big));
    v.push_back(onesweep<uint32_t, 0, Shape<256, 16, 3, O, true, 4, true>>("L256x16 mb3 atomicor prefetch", kLargeMin, big));
    v.push_back(onesweep<uint32_t, 0, Shape<512, 12, 2, B, true, 4, true>>("L512x12 mb2 prefetch", kLargeMin, big));
    v.push_back(onesweep<uint32_t, 0, Shape<384, 18, 2, B, true, 4>, gc::HistogramShape<256, 16, 1>>("H hist 256x16 r1", kLargeMin, big, 0));
    v.push_back(onesweep<uint32_t, 0, Shape<384, 18, 2, B, true, 4>, gc::HistogramShape<256, 16, 4>>("H hist 256x16 r4", kLargeMin, big, 0));
    v.push_back(onesweep<uint32_t, 0, Shape<384, 18, 2, B, true, 4>, gc::HistogramShape<256, 16, 8>>("H hist 256x16 r8", kLargeMin, big, 0));
    v.push_back(onesweep<uint32_t, 0, Shape<384, 18, 2, B, true, 4>, gc::HistogramShape<512, 8, 4>>("H hist 512x8 r4", kLargeMin, big, 0));
    // u32/u32 pairs, large
    v.push_back(onesweep<uint32_t, 4, Shape<384, 16, 2, B, true, 4>>("L384x16 stage", kLargeMin, big));
    v.push_back(onesweep<uint32_t, 4, Shape<384, 16, 2, B, true, 4, true>>("L384x16 stage prefetch", kLargeMin, big));
    v.push_back(onesweep<uint32_t, 4, Shape<384, 16, 2, O, true, 4, true>>("L384x16 atomicor stage prefetch", kLargeMin, big));
    v.push_back(onesweep<uint32_t, 4, Shape<384, 16, 2, B, false, 4, true>>("L384x16 nostage prefetch", kLargeMin, big));
    v.push_back(onesweep<uint32_t, 4, Shape<256, 16, 3, B, true, 4, true>>("L256x16 mb3 stage prefetch", kLargeMin, big));
    v.push_back(onesweep<uint32_t, 4, Shape<384, 12, 3, B, true, 4, true>>("L384x12 mb3 stage prefetch", kLargeMin, big));
    // u64 keys, large
    v.push_back(onesweep<uint64_t, 0, Shape<384, 14, 2, B, true, 4>>("L384x14", kLargeMin, big));
    v.push_back(onesweep<uint64_t, 0, Shape<384, 14, 2, B, true, 4, true>>("L384x14 prefetch", kLargeMin, big));
    v.push_back(onesweep<uint64_t, 0, Shape<384, 14, 2, O, true, 4, true>>("L384x14 atomicor prefetch", kLargeMin, big));
    v.push_back(onesweep<uint64_t, 0, Shape<256, 16, 3, B, true, 4, true>>("L256x16 mb3 prefetch", kLargeMin, big));
    v.push_back(onesweep<uint64_t, 0, Shape<384, 10, 3, B, true, 4, true>>("L384x10 mb3 prefetch", kLargeMin, big));
    v.push_back(onesweep<uint64_t, 0, Shape<384, 14, 2, B, true, 4>, gc::HistogramShape<256, 16, 1>>("H hist 256x16 r1", kLargeMin, big, 0));
    v.push_back(onesweep<uint64_t, 0, Shape<384, 14, 2, B, true, 4>, gc::HistogramShape<256, 16, 4>>("H hist 256x16 r4", kLargeMin, big, 0));
    v.push_back(onesweep<uint64_t, 0, Shape<384, 14, 2, B, true, 4>, gc::HistogramShape<256, 8, 2>>("H hist 256x8 r2", kLargeMin, big, 0));
    // u32 keys, middle sizes
    const uint64_t mid = 1ull << 22;
    v.push_back(onesweep<uint32_t, 0, Shape<256, 8, 4, B, true, 4>>("M256x8 mb4", 4096, mid));
    v.push_back(onesweep<uint32_t, 0, Shape<512, 4, 3, B, true, 4>>("M512x4 mb3", 4096, mid));
    v.push_back(onesweep<uint32_t, 0, Shape<256, 8, 4, B, true, 4, true>>("M256x8 mb4 prefetch", 4096, mid));
    v.push_back(onesweep<uint32_t, 0, Shape<256, 8, 4, O, true, 4, true>>("M256x8 mb4 atomicor prefetch", 4096, mid));
    v.push_back(onesweep<uint32_t, 0, Shape<384, 18, 2, B, true, 4, true>>("M384x18 prefetch (large)", 1 << 18, mid));
    v.push_back(fused<uint32_t, 0, Shape<256, 4, 1, B, true, 32>>("F256x4 w32", 1 << 19));
    v.push_back(fused<uint32_t, 0, Shape<256, 4, 1, B, true, 16>>("F256x4 w16", 1 << 19));
    v.push_back(fused<uint32_t, 0, Shape<256, 8, 1, B, true, 32>>("F256x8 w32", 1 << 19));
    v.push_back(fused<uint32_t, 0, Shape<512, 4, 1, B, true, 32>>("F512x4 w32", 1 << 19));
    v.push_back(fused<uint32_t, 0, Shape<256, 2, 1, B, true, 32>>("F256x2 w32", 1 << 19));
    v.push_back({"B block sort", 4, 0, 0, 4096, [](TestEnv &t, const gpuprim::SortRequest &r) {
                     gc::block_sort(t.env, r);
                     return true;
                 }});
    return v;
}
