// SPDX-License-Identifier: Apache-2.0
// Sizes that cannot wrap. Every byte count, and every sum or product of
// element counts that comes from a caller's counts, is computed through
// CheckedSize (or checked_add / checked_mul for a single step), so a count
// near 2^64 fails with a message instead of wrapping into a small size that
// a later write runs past. test/reliability/test_huge_counts.c drives the
// entry points that size memory with such counts.
//
// An overflow throws `status` (OUT_OF_MEMORY for memory the library sizes
// for itself: no allocator can give 2^64 bytes; OVERFLOW where the header
// says a caller's own count is refused) with a message naming `what`.
#pragma once

#include "core/error.h"

#include <cstdint>
#include <new>
#include <vector>

namespace gpuprim {

// Whether a * b (a + b) fits 64 bits (then *product, *sum holds it): for the
// checks that fail with a message of their own.
inline bool multiply_fits(uint64_t a, uint64_t b, uint64_t *product) { return !__builtin_mul_overflow(a, b, product); }
inline bool add_fits(uint64_t a, uint64_t b, uint64_t *sum) { return !__builtin_add_overflow(a, b, sum); }

[[noreturn]] inline void fail_size_overflow(const char *what, gpuprim_status_t status) {
    fail(status, "cannot allocate %s: it needs more than 2^64 bytes (its size overflows 64 bits)", what);
}

inline uint64_t checked_add(uint64_t a, uint64_t b, const char *what,
                            gpuprim_status_t status = GPUPRIM_ERROR_OUT_OF_MEMORY) {
    uint64_t sum;
    if (__builtin_add_overflow(a, b, &sum)) fail_size_overflow(what, status);
    return sum;
}

inline uint64_t checked_mul(uint64_t a, uint64_t b, const char *what,
                            gpuprim_status_t status = GPUPRIM_ERROR_OUT_OF_MEMORY) {
    uint64_t product;
    if (__builtin_mul_overflow(a, b, &product)) fail_size_overflow(what, status);
    return product;
}

// A size built up step by step, each step checked:
//   CheckedSize(n, "segmented sort scratch").times(16).plus(staging).aligned(64).value()
class CheckedSize {
public:
    CheckedSize(uint64_t value, const char *what, gpuprim_status_t status = GPUPRIM_ERROR_OUT_OF_MEMORY)
        : value_(value), what_(what), status_(status) {}

    CheckedSize times(uint64_t factor) const { return with(checked_mul(value_, factor, what_, status_)); }
    CheckedSize plus(uint64_t addend) const { return with(checked_add(value_, addend, what_, status_)); }
    // Rounded up to a multiple of alignment (> 0).
    CheckedSize aligned(uint64_t alignment) const {
        const uint64_t remainder = value_ % alignment;
        return remainder == 0 ? *this : plus(alignment - remainder);
    }
    uint64_t value() const { return value_; }

private:
    CheckedSize with(uint64_t value) const { return CheckedSize(value, what_, status_); }

    uint64_t value_;
    const char *what_;
    gpuprim_status_t status_;
};

// A host array of count elements for `what`: OUT_OF_MEMORY naming what and
// how many bytes when it cannot be had (not a bare std::bad_alloc).
template <typename T>
std::vector<T> host_array(uint64_t count, const char *what) {
    const uint64_t bytes = checked_mul(count, sizeof(T), what);
    try {
        if (count > std::vector<T>().max_size()) throw std::bad_alloc();
        return std::vector<T>(static_cast<size_t>(count));
    } catch (const std::bad_alloc &) {
        fail(GPUPRIM_ERROR_OUT_OF_MEMORY, "cannot allocate %llu bytes of host memory for %s",
             static_cast<unsigned long long>(bytes), what);
    }
}

}  // namespace gpuprim
