// SPDX-License-Identifier: Apache-2.0
// The CPU backend's threads: one Parallel per context, over oneTBB (a
// task_arena of the context's thread count), OpenMP (num_threads), or
// nothing (every loop on the calling thread), as configured
// (GPUPRIM_CPU_THREADS; CMakeLists.txt). No pool of our own: the threads are
// the library's.
//
// Results never depend on which engine runs or on the thread count: callers
// cut their work into pieces whose boundaries depend only on the input size,
// and combine the pieces' results in a fixed order. The engines only decide
// which thread computes which piece.
#pragma once

#include "core/portable.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>

#if defined(GPUPRIM_CPU_STD_THREADS)
// For ThreadSanitizer builds only (test/reliability/run_sanitizers.sh): the
// same pieces run on threads started for the call and joined before it
// returns. TSan sees all of that synchronization; it cannot see the
// hand-overs inside the uninstrumented libtbb or libgomp, and reports them.
#  include <atomic>
#  include <thread>
#  include <vector>
#elif defined(GPUPRIM_CPU_TBB)
#  include <tbb/blocked_range.h>
#  include <tbb/info.h>
#  include <tbb/parallel_for.h>
#  include <tbb/task_arena.h>
#elif defined(GPUPRIM_CPU_OPENMP)
#  include <omp.h>
#endif
#if defined(GPUPRIM_CPU_STD_THREADS) && (defined(GPUPRIM_CPU_TBB) || defined(GPUPRIM_CPU_OPENMP))
#  error "GPUPRIM_CPU_STD_THREADS is an engine of its own"
#endif

namespace gpuprim {
namespace cpu {

// The engine's name, for messages and the benchmark.
inline const char *threads_engine_name() {
#if defined(GPUPRIM_CPU_STD_THREADS)
    return "std::thread per call (sanitizer builds)";
#elif defined(GPUPRIM_CPU_TBB)
    return "oneTBB";
#elif defined(GPUPRIM_CPU_OPENMP)
    return "OpenMP";
#else
    return "one thread (no oneTBB or OpenMP at build time)";
#endif
}

class Parallel {
public:
    // threads: 0 for every core the process may use.
    explicit Parallel(int threads) : threads_(threads > 0 ? threads : default_threads()) {
#if defined(GPUPRIM_CPU_TBB)
        // More threads than oneTBB has workers for would make it print a
        // warning and still use only its workers: the arena takes at most
        // that many, while the work is still cut for threads_ (so a count
        // above the cores only costs finer pieces).
        if (threads_ > 1) arena_.initialize(std::min(threads_, default_threads()));
#endif
    }
    Parallel(const Parallel &) = delete;
    Parallel &operator=(const Parallel &) = delete;

    // The thread count asked for (1 when no engine was built in): work is
    // cut for this many threads.
    int threads() const {
#if defined(GPUPRIM_CPU_TBB) || defined(GPUPRIM_CPU_OPENMP) || defined(GPUPRIM_CPU_STD_THREADS)
        return threads_;
#else
        return 1;
#endif
    }

    // Calls f(i) once for each i in [0, count), in any order and on any
    // thread, and returns when all have returned. An exception thrown by f
    // is rethrown here (one of them, if several throw).
    template <typename F>
    void for_each(size_t count, F &&f) {
        if (count == 0) return;
        if (threads() <= 1 || count == 1) {
            for (size_t i = 0; i < count; ++i) f(i);
            return;
        }
#if defined(GPUPRIM_CPU_STD_THREADS)
        std::atomic<size_t> next{0};
        std::exception_ptr failure;
        std::atomic<bool> failed{false};
        auto work = [&] {
            for (size_t i; (i = next.fetch_add(1)) < count;) {
                try {
                    f(i);
                } catch (...) {
                    if (!failed.exchange(true)) failure = std::current_exception();
                }
            }
        };
        std::vector<std::thread> helpers;
        const size_t extra = std::min<size_t>(count, static_cast<size_t>(threads_)) - 1;
        for (size_t t = 0; t < extra; ++t) helpers.emplace_back(work);
        work();
        for (auto &helper : helpers) helper.join();
        if (failure) std::rethrow_exception(failure);
#elif defined(GPUPRIM_CPU_TBB)
        arena_.execute([&] {
            tbb::parallel_for(tbb::blocked_range<size_t>(0, count, 1),
                              [&](const tbb::blocked_range<size_t> &range) {
                                  for (size_t i = range.begin(); i != range.end(); ++i) f(i);
                              });
        });
#elif defined(GPUPRIM_CPU_OPENMP)
        std::exception_ptr failure;
        const long long n = static_cast<long long>(count);
#  pragma omp parallel for num_threads(threads_) schedule(dynamic, 1)
        for (long long i = 0; i < n; ++i) {
            try {
                f(static_cast<size_t>(i));
            } catch (...) {
#  pragma omp critical(gpuprim_parallel_failure)
                if (!failure) failure = std::current_exception();
            }
        }
        if (failure) std::rethrow_exception(failure);
#endif
    }

    // Calls f(begin, end) over pieces of [0, count) of `grain` elements
    // (the last may be shorter); the pieces' bounds depend on count and
    // grain only.
    template <typename F>
    void for_ranges(uint64_t count, uint64_t grain, F &&f) {
        const uint64_t pieces = ceil_div(count, grain);
        for_each(static_cast<size_t>(pieces), [&](size_t piece) {
            const uint64_t begin = piece * grain;
            const uint64_t end = count - begin < grain ? count : begin + grain;
            f(begin, end);
        });
    }

private:
    static int default_threads() {
#if defined(GPUPRIM_CPU_STD_THREADS)
        return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
#elif defined(GPUPRIM_CPU_TBB)
        return tbb::info::default_concurrency();
#elif defined(GPUPRIM_CPU_OPENMP)
        return omp_get_max_threads();
#else
        return 1;
#endif
    }

    int threads_;
#if defined(GPUPRIM_CPU_TBB)
    tbb::task_arena arena_;
#endif
};

}  // namespace cpu
}  // namespace gpuprim
