// SPDX-License-Identifier: Apache-2.0
// White-box check of core/key_transform.h's RadixKeyMap (the CUDA radix
// sort's upfront histogram and the CPU top-k map keys with it, branch-free)
// against to_radix_key,
// the reference every sort path uses: every kind of every key width, both
// orders; every bit pattern of 1- and 2-byte keys, and for 4- and 8-byte
// keys the special values (+-0, +-inf, NaNs of both signs with low and high
// payloads, subnormals, each type's extremes) and random patterns. Host code
// only: the map is the same code on the device.
#include "core/element_traits.h"
#include "core/key_transform.h"

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

using namespace gpuprim;

namespace {

int g_failures = 0;

template <typename Bits>
void check_pattern(Bits bits, KeyKind kind, bool descending, const RadixKeyMap<Bits> &map) {
    const Bits expected = to_radix_key<Bits>(bits, kind, descending);
    const Bits got = map(bits);
    if (got != expected) {
        if (++g_failures <= 20)
            std::printf("FAIL %zu-byte key 0x%" PRIx64 ", kind %d, %s: map 0x%" PRIx64 ", to_radix_key 0x%" PRIx64 "\n",
                        sizeof(Bits), uint64_t(bits), int(kind), descending ? "descending" : "ascending",
                        uint64_t(got), uint64_t(expected));
    }
}

template <typename Bits>
std::vector<KeyKind> kinds_of() {
    if constexpr (sizeof(Bits) == 1) return {KeyKind::Unsigned, KeyKind::Signed};
    else if constexpr (sizeof(Bits) == 2) return {KeyKind::Unsigned, KeyKind::Signed, KeyKind::Float, KeyKind::BFloat};
    else return {KeyKind::Unsigned, KeyKind::Signed, KeyKind::Float};
}

template <typename Bits>
uint64_t check_width(const std::vector<Bits> &patterns) {
    uint64_t checked = 0;
    for (KeyKind kind : kinds_of<Bits>())
        for (bool descending : {false, true}) {
            const RadixKeyMap<Bits> map = radix_key_map<Bits>(kind, descending);
            for (Bits bits : patterns) check_pattern(bits, kind, descending, map);
            checked += patterns.size();
        }
    return checked;
}

template <typename Bits>
std::vector<Bits> every_pattern() {
    std::vector<Bits> patterns;
    for (uint64_t bits = 0; bits <= uint64_t(Bits(~Bits(0))); ++bits) patterns.push_back(Bits(bits));
    return patterns;
}

// Specials of the width's float format and integer extremes, then random
// patterns.
template <typename Bits>
std::vector<Bits> sampled_patterns(std::mt19937_64 &rng) {
    constexpr int kBits = int(sizeof(Bits) * 8);
    constexpr int kMantissa = kBits == 32 ? 23 : 52;
    const Bits sign = Bits(Bits(1) << (kBits - 1));
    const Bits exponent = Bits(Bits(~Bits(0)) >> 1) & Bits(~((Bits(1) << kMantissa) - 1));  // +inf
    std::vector<Bits> patterns = {Bits(0), sign, exponent, Bits(exponent | sign), Bits(exponent | 1),
                                  Bits(exponent | sign | 1), Bits(~Bits(0)), Bits(~Bits(0) >> 1),
                                  Bits(exponent | (Bits(1) << (kMantissa - 1))), Bits(1), Bits(sign | 1),
                                  Bits((Bits(1) << kMantissa) - 1), Bits(sign | ((Bits(1) << kMantissa) - 1)),
                                  Bits(sign - 1), Bits(sign + 1)};
    for (int i = 0; i < 200000; ++i) patterns.push_back(Bits(rng()));
    return patterns;
}

}  // namespace

int main() {
    std::mt19937_64 rng(20261202);
    uint64_t checked = 0;
    checked += check_width(every_pattern<uint8_t>());
    checked += check_width(every_pattern<uint16_t>());
    checked += check_width(sampled_patterns<uint32_t>(rng));
    checked += check_width(sampled_patterns<uint64_t>(rng));
    if (g_failures) {
        std::printf("test_key_transform: %d of %" PRIu64 " checks failed\n", g_failures, checked);
        return 1;
    }
    std::printf("test_key_transform: %" PRIu64 " checks passed\n", checked);
    return 0;
}
