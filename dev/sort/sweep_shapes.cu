// Tile-shape variants timed by `check_sort sweep`. Names: L* large-input
// shapes, M* shapes for middle sizes, B* the block sort.
#include "sort_test_env.h"

#include "cuda/block_sort.cuh"
#include "cuda/radix_sort.cuh"
#include "cuda/sort_tuning.cuh"

namespace gc = gpuprim::cuda;
namespace rd = gpuprim::cuda::radix_detail;
using gc::RadixMatch;

namespace {

template <typename K, int VB, int T, int I, int MB, RadixMatch M, bool S, int W>
SortVariant variant(const char *name, bool programmatic = true) {
    using Shape = gc::OnesweepShape<T, I, MB, M, S, W>;
    return {name, int(sizeof(K)), VB, [programmatic](TestEnv &t, const gpuprim::SortRequest &r) {
                gc::SortTuning tuning = gc::sort_tuning(t.env.compute_capability, r.key_bytes, r.value_bytes);
                tuning.programmatic_launch = programmatic;
                rd::onesweep_sort<K, VB, Shape>(t.env, r, tuning);
            }};
}

constexpr RadixMatch B = RadixMatch::Ballot;
constexpr RadixMatch A = RadixMatch::MatchAny;

}  // namespace

std::vector<SortVariant> sweep_variants() {
    std::vector<SortVariant> v;
    // u32 keys, large
    v.push_back(variant<uint32_t, 0, 384, 18, 2, B, true, 4>("L384x18 mb2"));
    v.push_back(variant<uint32_t, 0, 384, 21, 2, B, true, 4>("L384x21 mb2"));
    v.push_back(variant<uint32_t, 0, 384, 16, 2, A, true, 4>("L384x16 mb2 matchany"));
    v.push_back(variant<uint32_t, 0, 512, 14, 2, B, true, 4>("L512x14 mb2"));
    v.push_back(variant<uint32_t, 0, 256, 16, 3, B, true, 4>("L256x16 mb3"));
    v.push_back(variant<uint32_t, 0, 256, 24, 2, B, true, 4>("L256x24 mb2"));
    v.push_back(variant<uint32_t, 0, 384, 12, 3, B, true, 4>("L384x12 mb3"));
    v.push_back(variant<uint32_t, 0, 384, 18, 2, B, true, 1>("L384x18 mb2 window1"));
    // u32/u32 pairs, large
    v.push_back(variant<uint32_t, 4, 384, 16, 2, B, true, 4>("L384x16 mb2 stage"));
    v.push_back(variant<uint32_t, 4, 384, 16, 2, B, false, 4>("L384x16 mb2 nostage"));
    v.push_back(variant<uint32_t, 4, 256, 16, 3, B, true, 4>("L256x16 mb3 stage"));
    v.push_back(variant<uint32_t, 4, 384, 12, 3, B, true, 4>("L384x12 mb3 stage"));
    v.push_back(variant<uint32_t, 4, 512, 12, 2, B, true, 4>("L512x12 mb2 stage"));
    v.push_back(variant<uint32_t, 4, 384, 20, 2, B, true, 4>("L384x20 mb2 stage"));
    // u64 keys, large
    v.push_back(variant<uint64_t, 0, 384, 14, 2, B, true, 4>("L384x14 mb2"));
    v.push_back(variant<uint64_t, 0, 384, 12, 2, B, true, 4>("L384x12 mb2"));
    v.push_back(variant<uint64_t, 0, 256, 16, 3, B, true, 4>("L256x16 mb3"));
    v.push_back(variant<uint64_t, 0, 512, 10, 2, B, true, 4>("L512x10 mb2"));
    v.push_back(variant<uint64_t, 0, 384, 10, 3, B, true, 4>("L384x10 mb3"));
    // u32 keys, middle sizes
    v.push_back(variant<uint32_t, 0, 256, 8, 4, B, true, 4>("M256x8 mb4"));
    v.push_back(variant<uint32_t, 0, 256, 8, 4, B, true, 4>("M256x8 mb4 nopdl", false));
    v.push_back(variant<uint32_t, 0, 256, 8, 4, B, true, 16>("M256x8 mb4 window16"));
    v.push_back(variant<uint32_t, 0, 256, 8, 4, B, true, 32>("M256x8 mb4 window32"));
    v.push_back(variant<uint32_t, 0, 256, 4, 4, B, true, 4>("M256x4 mb4"));
    v.push_back(variant<uint32_t, 0, 512, 4, 3, B, true, 4>("M512x4 mb3"));
    v.push_back(variant<uint32_t, 0, 256, 16, 3, B, true, 4>("M256x16 mb3"));
    v.push_back(variant<uint32_t, 0, 384, 18, 2, B, true, 4>("M384x18 mb2 (large shape)"));
    v.push_back({"B block sort", 4, 0, [](TestEnv &t, const gpuprim::SortRequest &r) { gc::block_sort(t.env, r); }});
    return v;
}
