// SPDX-License-Identifier: Apache-2.0
// Shape variants timed by `check_sort sweep`. Each applies to one key/value
// width and a range of counts.
#include "sort_env.h"

#include "cuda/sort/block_sort.cuh"
#include "cuda/sort/radix_sort.cuh"
#include "cuda/sort/sort.h"
#include "cuda/sort/sort_policy.cuh"

namespace gc = gpuprim::cuda;
namespace rd = gpuprim::cuda::radix_detail;
using gc::RadixMatch;

namespace {

constexpr RadixMatch O = RadixMatch::AtomicOr;

template <typename K, int VB, typename Shape, typename HistogramShapes = gc::RadixHistogramShapesFor<sizeof(K)>>
SortVariant onesweep(const char *name, uint64_t min_n, uint64_t max_n) {
    return {name, int(sizeof(K)), VB, min_n, max_n, [](TestEnv &t, const gpuprim::SortRequest &r) {
                const gc::SortTuning tuning = gc::sort_tuning(t.env.code_arch, r.key_bytes, r.value_bytes);
                rd::onesweep_sort<K, VB, Shape, false, HistogramShapes>(t.env, r, tuning);
                return true;
            }};
}

template <typename Shape>
SortVariant packed(const char *name, uint64_t min_n, uint64_t max_n) {
    return {name, 4, 4, min_n, max_n, [](TestEnv &t, const gpuprim::SortRequest &r) {
                const gc::SortTuning tuning = gc::sort_tuning(t.env.code_arch, r.key_bytes, r.value_bytes);
                rd::onesweep_sort<uint32_t, 4, Shape, true>(t.env, r, tuning);
                return true;
            }};
}

template <typename K, int VB, typename Shape>
SortVariant fused(const char *name, uint64_t max_n) {
    return {name, int(sizeof(K)), VB, 0, max_n, [](TestEnv &t, const gpuprim::SortRequest &r) {
                return rd::fused_sort<K, VB, Shape>(t.env, r);
            }};
}

template <int T, int I, int MB, RadixMatch M, bool S, int W, bool P = false, bool E = false>
using Shape = gc::OnesweepShape<T, I, MB, M, S, W, P, E>;

}  // namespace

std::vector<SortVariant> sweep_variants() {
    std::vector<SortVariant> v;
    const uint64_t big = ~0ull;
    auto pub = [&](int kb, int vb, uint64_t lo) {
        v.push_back({"public", kb, vb, lo, big, [](TestEnv &t, const gpuprim::SortRequest &r) {
                         gc::sort(t.env, r);
                         return true;
                     }});
    };
    // Session 6: larger look-back windows (8, 16, 32) were 1-14% slower;
    // early counts 4.5% faster (u32 keys 2^28).
    // 2^20-2^22 for u64 keys and u32/u32 pairs: the large tiles' range starts too low.
    const uint64_t lo = (1ull << 19) + 1, hi = 1ull << 22;
    pub(8, 0, 0);
    v.push_back(onesweep<uint64_t, 0, gc::OnesweepMediumShape<8, 0>::type>("M256x8 (medium)", lo, hi));
    v.push_back(onesweep<uint64_t, 0, Shape<384, 14, 2, O, false, 4>>("L384x14 (run 8)", lo, hi));
    v.push_back(onesweep<uint64_t, 0, Shape<384, 14, 2, O, false, 4, false, true>>("L384x14 early", lo, hi));
    v.push_back(onesweep<uint64_t, 0, Shape<256, 14, 3, O, false, 4, false, true>>("L256x14 x3 early", lo, hi));
    pub(4, 4, 0);
    v.push_back(onesweep<uint32_t, 4, gc::OnesweepMediumShape<4, 4>::type>("M256x8 (medium)", lo, hi));
    v.push_back(onesweep<uint32_t, 4, Shape<384, 16, 2, O, true, 4>>("L384x16 split (run 8)", lo, hi));
    v.push_back(packed<Shape<384, 14, 2, O, false, 4, false, true>>("packed 384x14 early", lo, hi));
    v.push_back(packed<Shape<256, 14, 3, O, false, 4, false, true>>("packed 256x14 x3 early", lo, hi));
    // 8-byte keys with 4-byte values: the large tile (384x12) and the huge one
    // (512x12, early counts) on both sides of pairs8_large_max; the other
    // shapes swept (384x16, 448x12, 640x8, 256x16 x3, 384x20) and their times
    // are in sort_policy.cuh.
    const uint64_t from = 1ull << 23;
    pub(8, 4, 0);
    v.push_back(onesweep<uint64_t, 4, gc::OnesweepLargeShape<8, 4>::type>("L384x12 (large)", from, big));
    v.push_back(onesweep<uint64_t, 4, gc::OnesweepPairs8HugeShape>("L512x12 early (huge)", from, big));
    return v;
}
