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
//
// Two limits hold on every engine (the header's cpu_threads and fork rules):
// - A call runs on at most available_cpus() threads (read when the context
//   is made), whatever count it was asked for: OpenMP would otherwise start
//   every thread asked for (100,000 of them crash libgomp). The work is still
//   cut for the count asked (threads()), as oneTBB always did; that only
//   makes pieces finer.
// - In a child made by fork() (in_forked_child()), neither oneTBB nor
//   OpenMP is touched: their pools do not survive fork() (libgomp hangs), so
//   there every parallel loop runs on std::threads started for the loop and
//   joined before it returns, as the sanitizer engine does everywhere.
#pragma once

#include "core/portable.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

#if defined(GPUPRIM_CPU_STD_THREADS)
// For ThreadSanitizer builds only (test/reliability/run_sanitizers.sh): the
// same pieces run on threads started for the call and joined before it
// returns. TSan sees all of that synchronization; it cannot see the
// hand-overs inside the uninstrumented libtbb or libgomp, and reports them.
#elif defined(GPUPRIM_CPU_TBB)
#  include <memory>

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

// How many CPUs this process may run on: its affinity mask where the system
// tells (Linux), else std::thread::hardware_concurrency(); at least 1.
int available_cpus() noexcept;

// Whether this process is a child made by fork() after libgpuprim was
// loaded (parallel.cpp says why that is process-wide state).
bool in_forked_child() noexcept;

class Parallel {
public:
    // threads: 0 for every core the process may use. Any count is safe: the
    // threads a call runs on are at most available_cpus().
    explicit Parallel(int threads)
        : threads_(threads > 0 ? threads : default_threads()),
          workers_(this->threads() > 1 ? std::min(this->threads(), available_cpus()) : 1) {
#if defined(GPUPRIM_CPU_TBB)
        // Not in a forked child: oneTBB's market there is the parent's,
        // without its threads. More threads than oneTBB has workers for
        // would make it print a warning and still use only its workers.
        if (workers_ > 1 && !in_forked_child())
            arena_ = std::make_unique<tbb::task_arena>(std::min(workers_, default_threads()));
#endif
    }
    ~Parallel() {
#if defined(GPUPRIM_CPU_TBB)
        // An arena the parent made, destroyed in a child: left alone (a few
        // bytes of the child's copy), since ending it takes oneTBB's locks,
        // which a parent's worker may have held when fork() copied them.
        if (arena_ && in_forked_child()) static_cast<void>(arena_.release());
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

    // The most threads a call runs on: threads(), at most available_cpus().
    int workers() const { return workers_; }

    // Calls f(i) once for each i in [0, count), in any order and on any
    // thread, and returns when all have returned. An exception thrown by f
    // is rethrown here (one of them, if several throw).
    template <typename F>
    void for_each(size_t count, F &&f) {
        if (count == 0) return;
        if (workers_ <= 1 || count == 1) {
            for (size_t i = 0; i < count; ++i) f(i);
            return;
        }
#if defined(GPUPRIM_CPU_STD_THREADS)
        on_threads_of_the_call(count, f);
#elif defined(GPUPRIM_CPU_TBB) || defined(GPUPRIM_CPU_OPENMP)
        if (in_forked_child() || !engine_usable()) {
            on_threads_of_the_call(count, f);
            return;
        }
#  if defined(GPUPRIM_CPU_TBB)
        arena_->execute([&] {
            tbb::parallel_for(tbb::blocked_range<size_t>(0, count, 1),
                              [&](const tbb::blocked_range<size_t> &range) {
                                  for (size_t i = range.begin(); i != range.end(); ++i) f(i);
                              });
        });
#  else
        std::exception_ptr failure;
        const long long n = static_cast<long long>(count);
#    pragma omp parallel for num_threads(workers_) schedule(dynamic, 1)
        for (long long i = 0; i < n; ++i) {
            try {
                f(static_cast<size_t>(i));
            } catch (...) {
#    pragma omp critical(gpuprim_parallel_failure)
                if (!failure) failure = std::current_exception();
            }
        }
        if (failure) std::rethrow_exception(failure);
#  endif
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

    // Whether the engine's own threads may run this context's loops: a
    // context made in a forked child has no arena (oneTBB); OpenMP is
    // checked per call (in_forked_child()) only.
    bool engine_usable() const {
#if defined(GPUPRIM_CPU_TBB)
        return arena_ != nullptr;
#else
        return true;
#endif
    }

    // f(i) for each i in [0, count) on the calling thread and up to
    // workers_ - 1 threads started here and joined before returning. When
    // a thread cannot be started, those that did (and the caller) do it all.
    template <typename F>
    void on_threads_of_the_call(size_t count, F &f) {
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
        const size_t extra = std::min<size_t>(count, static_cast<size_t>(workers_)) - 1;
        try {
            helpers.reserve(extra);
            for (size_t t = 0; t < extra; ++t) helpers.emplace_back(work);
        } catch (...) {
            // std::system_error (no thread) or bad_alloc: fewer helpers.
        }
        work();
        for (auto &helper : helpers) helper.join();
        if (failure) std::rethrow_exception(failure);
    }

    int threads_;
    int workers_;
#if defined(GPUPRIM_CPU_TBB)
    std::unique_ptr<tbb::task_arena> arena_;  // null on one worker, and in a forked child
#endif
};

}  // namespace cpu
}  // namespace gpuprim
