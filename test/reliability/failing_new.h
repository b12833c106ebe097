// SPDX-License-Identifier: Apache-2.0
// Host allocation failure on demand, for the allocation-fault tests
// (test_alloc_faults.cpp, distributed/test_distributed_faults.cpp): the
// program's operator new and delete are replaced, and arm(k) makes the k-th
// operator new from then on fail (std::bad_alloc, or null for the nothrow
// forms), on any thread. Include this header in exactly one source file of
// a program (it defines the replacements).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace failing_new {

inline std::atomic<long> countdown{-1};  // < 0: disarmed; 0: the next operator new fails
inline std::atomic<bool> injected{false};
// Called at the failing allocation when set (a test's stack trace).
inline void (*on_failure)() = nullptr;

// The k-th operator new from now on fails (k = 0: the next one).
inline void arm(long k) {
    injected.store(false);
    countdown.store(k);
}
// Disarms; whether the armed allocation was met (and failed).
inline bool disarm() {
    countdown.store(-1);
    return injected.load();
}

inline bool allocation_fails() {
    long left = countdown.load(std::memory_order_relaxed);
    while (left >= 0) {
        if (countdown.compare_exchange_weak(left, left - 1, std::memory_order_relaxed)) {
            if (left > 0) return false;
            injected.store(true, std::memory_order_relaxed);
            if (on_failure) on_failure();
            return true;
        }
    }
    return false;
}

inline void *checked(void *memory) {
    if (!memory) throw std::bad_alloc();
    return memory;
}

}  // namespace failing_new

void *operator new(std::size_t size) {
    if (failing_new::allocation_fails()) throw std::bad_alloc();
    return failing_new::checked(std::malloc(size ? size : 1));
}
void *operator new[](std::size_t size) { return operator new(size); }
void *operator new(std::size_t size, const std::nothrow_t &) noexcept {
    if (failing_new::allocation_fails()) return nullptr;
    return std::malloc(size ? size : 1);
}
void *operator new[](std::size_t size, const std::nothrow_t &tag) noexcept { return operator new(size, tag); }
void *operator new(std::size_t size, std::align_val_t alignment) {
    if (failing_new::allocation_fails()) throw std::bad_alloc();
    const std::size_t a = static_cast<std::size_t>(alignment);
    return failing_new::checked(std::aligned_alloc(a, (size + a - 1) / a * a));
}
void *operator new[](std::size_t size, std::align_val_t alignment) { return operator new(size, alignment); }
void operator delete(void *memory) noexcept { std::free(memory); }
void operator delete[](void *memory) noexcept { std::free(memory); }
void operator delete(void *memory, std::size_t) noexcept { std::free(memory); }
void operator delete[](void *memory, std::size_t) noexcept { std::free(memory); }
void operator delete(void *memory, std::align_val_t) noexcept { std::free(memory); }
void operator delete[](void *memory, std::align_val_t) noexcept { std::free(memory); }
void operator delete(void *memory, std::size_t, std::align_val_t) noexcept { std::free(memory); }
void operator delete[](void *memory, std::size_t, std::align_val_t) noexcept { std::free(memory); }
