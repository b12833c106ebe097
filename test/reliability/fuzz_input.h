// SPDX-License-Identifier: Apache-2.0
// The fuzz targets' reader of their input (fuzz_api.cpp, fuzz_registry.cpp):
// it runs dry gracefully (zeros), so every input is a valid program. And the
// fixed generator the replays make inputs with (fuzz_replay_main.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpuprim_fuzz {

class Input {
public:
    Input(const uint8_t *data, size_t size) : data_(data), size_(size) {}
    bool empty() const { return position_ >= size_; }
    uint8_t u8() { return position_ < size_ ? data_[position_++] : 0; }
    uint16_t u16() { return static_cast<uint16_t>(u8() | (u8() << 8)); }
    uint32_t u32() { return u16() | (static_cast<uint32_t>(u16()) << 16); }
    uint64_t u64() { return u32() | (static_cast<uint64_t>(u32()) << 32); }

private:
    const uint8_t *data_;
    size_t size_;
    size_t position_ = 0;
};

// xorshift64*: the same bytes on every run and platform.
inline uint8_t next_fixed_byte(uint64_t &state) {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return static_cast<uint8_t>((state * 0x2545F4914F6CDD1Dull) >> 56);
}

}  // namespace gpuprim_fuzz
