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

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

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

// The engines (oneTBB, OpenMP, threads of the call) live in parallel.cpp
// behind one non-template loop: a loop body reaches them as a function
// pointer and its object, so no engine's templates are instantiated per loop
// body (they were: 322 oneTBB parallel_for instantiations in one sort file,
// most of the CPU backend's compile time). A body is called once per piece
// of work, so the indirect call costs nothing measurable.
class Parallel {
public:
    // threads: 0 for every core the process may use. Any count is safe: the
    // threads a call runs on are at most available_cpus().
    explicit Parallel(int threads);
    ~Parallel();
    Parallel(const Parallel &) = delete;
    Parallel &operator=(const Parallel &) = delete;

    // The thread count asked for (1 when no engine was built in): work is
    // cut for this many threads.
    int threads() const { return threads_; }

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
        using Body = std::remove_reference_t<F>;
        run_in_parallel(count, [](void *body, size_t i) { (*static_cast<Body *>(body))(i); },
                        const_cast<void *>(static_cast<const void *>(&f)));
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
    using PieceFunction = void (*)(void *body, size_t piece);

    // for_each on more than one worker: body(piece) for every piece on the
    // engine's threads, or, in a forked child (and on the sanitizer
    // engine), on threads started for the call (parallel.cpp).
    void run_in_parallel(size_t count, PieceFunction call, void *body);

    struct Engine;  // the oneTBB arena (parallel.cpp); empty on other engines

    int threads_;
    int workers_;
    std::unique_ptr<Engine> engine_;  // null on one worker, and in a forked child
};

}  // namespace cpu
}  // namespace gpuprim
