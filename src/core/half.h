// SPDX-License-Identifier: Apache-2.0
// The 16-bit float formats as storage types (IEEE binary16 and bfloat16):
// a bit pattern, widened to float exactly and rounded back once, to nearest
// even. The same bits on the host and in kernels: the device widens and
// rounds f16 with the hardware's cvt instructions, the host with the integer
// algorithms below (both IEEE round-to-nearest-even); bf16 takes the integer
// path on both. A NaN rounds to the format's canonical quiet NaN (what float
// sums give anyway: see canonical_nan_if_nan in core/ops.h).
#pragma once

#include "core/portable.h"

#include <cstdint>
#include <cstring>

namespace gpuprim {

struct float16 {
    uint16_t bits;
};
struct bfloat16 {
    uint16_t bits;
};

namespace half_detail {
GPUPRIM_HD float float_of_bits(uint32_t bits) {
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}
GPUPRIM_HD uint32_t bits_of_float(float f) {
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return bits;
}
}  // namespace half_detail

GPUPRIM_HD float widen(float16 h) {
#if defined(__CUDA_ARCH__)
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.bits));
    return f;
#else
    using namespace half_detail;
    const uint32_t sign = uint32_t(h.bits & 0x8000u) << 16;
    const uint32_t exponent = (h.bits >> 10) & 0x1Fu;
    const uint32_t mantissa = h.bits & 0x3FFu;
    if (exponent == 0x1F) return float_of_bits(sign | 0x7F800000u | (mantissa << 13));  // inf, NaN payload kept
    if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in float
        const float magnitude = float(mantissa) * float_of_bits(0x33800000u);
        return float_of_bits(sign | bits_of_float(magnitude));
    }
    return float_of_bits(sign | ((exponent + 112) << 23) | (mantissa << 13));
#endif
}

GPUPRIM_HD float widen(bfloat16 h) { return half_detail::float_of_bits(uint32_t(h.bits) << 16); }

template <typename Half>
GPUPRIM_HD Half round_to(float f);

template <>
GPUPRIM_HD float16 round_to<float16>(float f) {
    if (f != f) return float16{0x7E00u};
#if defined(__CUDA_ARCH__)
    uint16_t h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return float16{h};
#else
    // F. Giesen's float_to_half_fast3_rtne: overflow to inf, subnormals by
    // one float addition (which rounds to nearest even), normals by integer
    // rounding of the dropped 13 bits.
    using namespace half_detail;
    uint32_t x = bits_of_float(f);
    const uint16_t sign = uint16_t((x >> 16) & 0x8000u);
    x &= 0x7FFFFFFFu;
    uint16_t h;
    if (x >= 0x477FF000u) {  // 65520 and up round to inf
        h = 0x7C00u;
    } else if (x < 0x38800000u) {  // below 2^-14: a subnormal result (or zero)
        const uint32_t magic = 0x3F000000u;  // 0.5f: aligns the mantissa's last kept bit to 2^-24
        h = uint16_t(bits_of_float(float_of_bits(x) + float_of_bits(magic)) - magic);
    } else {
        const uint32_t odd = (x >> 13) & 1u;
        x += (uint32_t(15 - 127) << 23) + 0xFFFu + odd;
        h = uint16_t(x >> 13);
    }
    return float16{uint16_t(h | sign)};
#endif
}

template <>
GPUPRIM_HD bfloat16 round_to<bfloat16>(float f) {
    if (f != f) return bfloat16{0x7FC0u};
    const uint32_t x = half_detail::bits_of_float(f);
    return bfloat16{uint16_t((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16)};
}

}  // namespace gpuprim
