// SPDX-License-Identifier: Apache-2.0
// What cpu/parallel.h asks of the process: how many CPUs it may run on, and
// whether it is a child made by fork() since libgpuprim was loaded.
//
// The fork flag and the pool of idle oneTBB arenas (ArenaPool, below) are
// the global state here (besides the handle registry, core/registry.h), and
// safety needs each. The fork flag: oneTBB's and OpenMP's
// worker pools belong to the process, not to a context, and do not survive
// fork(). The child inherits the pools' bookkeeping without their threads:
// GNU libgomp then waits forever for workers that do not exist (GCC bug
// 60035), and oneTBB documents fork() as unsupported (its arenas run on the
// calling thread alone, at best). No context can tell that from its own
// state, so a pthread_atfork() child handler, registered when the library is
// loaded, sets the flag in every child; it is never cleared (a child's
// children are children too), and is read with one relaxed atomic load.
#include "cpu/parallel.h"

#include "core/float_environment.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#if defined(GPUPRIM_CPU_STD_THREADS)
// For ThreadSanitizer builds only (test/reliability/run_sanitizers.sh): the
// same pieces run on threads started for the call and joined before it
// returns. TSan sees all of that synchronization; it cannot see the
// hand-overs inside the uninstrumented libtbb or libgomp, and reports them.
#elif defined(GPUPRIM_CPU_TBB)
#  include <tbb/blocked_range.h>
#  include <tbb/info.h>
#  include <tbb/parallel_for.h>
#  include <tbb/task_arena.h>
#elif defined(GPUPRIM_CPU_OPENMP)
#  include <omp.h>
#endif

#if defined(__linux__)
#  include <sched.h>
#endif
#if !defined(_WIN32)
#  include <pthread.h>
#  include <unistd.h>
#endif

namespace gpuprim {
namespace cpu {

namespace {

std::atomic<bool> forked{false};

#if !defined(_WIN32)
void on_fork_child() { forked.store(true, std::memory_order_relaxed); }

// getpid() at load, for the rare process where pthread_atfork() failed
// (ENOMEM): then a changed pid tells the child instead.
const pid_t load_pid = getpid();
const bool atfork_registered = pthread_atfork(nullptr, nullptr, on_fork_child) == 0;
#endif

}  // namespace

bool in_forked_child() noexcept {
    if (forked.load(std::memory_order_relaxed)) return true;
#if !defined(_WIN32)
    return !atfork_registered && getpid() != load_pid;
#else
    return false;
#endif
}

int available_cpus() noexcept {
#if defined(__linux__)
    // The affinity mask (taskset, cgroup cpusets, a parent's pinning), as
    // oneTBB and libgomp count it; only the first CPU_SETSIZE (1024) CPUs
    // are seen, and a process on more falls back to the count of all.
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        const int count = CPU_COUNT(&set);
        if (count > 0 && count < CPU_SETSIZE) return count;
    }
#endif
    const unsigned hardware = std::thread::hardware_concurrency();
    if (hardware == 0) return 1;
    return hardware > static_cast<unsigned>(INT_MAX) ? INT_MAX : static_cast<int>(hardware);
}

namespace {

int default_threads() {
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

constexpr bool kHasEngine =
#if defined(GPUPRIM_CPU_TBB) || defined(GPUPRIM_CPU_OPENMP) || defined(GPUPRIM_CPU_STD_THREADS)
    true;
#else
    false;
#endif

}  // namespace

#if defined(GPUPRIM_CPU_TBB)
namespace {

// Arenas of contexts since destroyed, for the next contexts to use: a
// oneTBB arena that has run work does not give all of its memory back when
// destroyed (about 7 KiB each with oneTBB 2021.8; oneTBB issue #967), so a
// program that makes and destroys contexts in a loop would grow without
// bound. Reused instead, the arenas number at most the contexts alive at
// once. An arena here runs nothing: each is used by one context at a time,
// as before. The pool is the one piece of global state this needs (beside
// the fork flag above), behind its lock; it is made once and never
// destroyed (its arenas live as long as the process, as oneTBB's workers
// do), and never touched in a forked child (its lock may have been held by
// a parent's thread at fork()).
class ArenaPool {
public:
    static ArenaPool &instance() {
        static ArenaPool *const pool = new ArenaPool;
        return *pool;
    }

    // An idle arena of `workers` workers, or a new one.
    std::unique_ptr<tbb::task_arena> take(int workers) {
        {
            std::lock_guard<std::mutex> guard(lock_);
            for (auto entry = idle_.begin(); entry != idle_.end(); ++entry) {
                if (entry->workers == workers) {
                    std::unique_ptr<tbb::task_arena> taken = std::move(entry->arena);
                    idle_.erase(entry);
                    return taken;
                }
            }
        }
        return std::make_unique<tbb::task_arena>(workers);
    }

    // Back for the next context (destroyed when the pool cannot keep it:
    // memory for the list's entry was refused).
    void give_back(int workers, std::unique_ptr<tbb::task_arena> arena) noexcept {
        std::lock_guard<std::mutex> guard(lock_);
        try {
            idle_.push_back(Idle{workers, std::move(arena)});
        } catch (...) {
        }
    }

private:
    struct Idle {
        int workers;
        std::unique_ptr<tbb::task_arena> arena;
    };
    std::mutex lock_;
    std::vector<Idle> idle_;
};

}  // namespace
#endif

struct Parallel::Engine {
#if defined(GPUPRIM_CPU_TBB)
    explicit Engine(int arena_workers) : workers(arena_workers), arena(ArenaPool::instance().take(workers)) {}
    ~Engine() { ArenaPool::instance().give_back(workers, std::move(arena)); }
    Engine(const Engine &) = delete;
    Engine &operator=(const Engine &) = delete;
    const int workers;
    std::unique_ptr<tbb::task_arena> arena;
#endif
};

Parallel::Parallel(int threads)
    : threads_(!kHasEngine ? 1 : threads > 0 ? threads : default_threads()),
      workers_(threads_ > 1 ? std::min(threads_, available_cpus()) : 1) {
#if defined(GPUPRIM_CPU_TBB)
    // Not in a forked child: oneTBB's market there is the parent's, without
    // its threads. More threads than oneTBB has workers for would make it
    // print a warning and still use only its workers.
    if (workers_ > 1 && !in_forked_child())
        engine_ = std::make_unique<Engine>(std::min(workers_, default_threads()));
#endif
}

Parallel::~Parallel() {
    // An arena the parent made, destroyed in a child: left alone (a few
    // bytes of the child's copy), since ending it (or giving it back to the
    // pool) takes locks a parent's thread may have held when fork() copied
    // them.
    if (engine_ && in_forked_child()) static_cast<void>(engine_.release());
}

namespace {

// call(body, i) for each i in [0, count) on the calling thread and up to
// workers - 1 threads started here and joined before returning. When a
// thread cannot be started, those that did (and the caller) do it all.
void on_threads_of_the_call(size_t count, int workers, void (*call)(void *, size_t), void *body) {
    std::atomic<size_t> next{0};
    std::exception_ptr failure;
    std::atomic<bool> failed{false};
    auto work = [&] {
        const DefaultFloatEnvironment float_environment;  // (a started thread inherits the caller's)
        for (size_t i; (i = next.fetch_add(1)) < count;) {
            try {
                call(body, i);
            } catch (...) {
                if (!failed.exchange(true)) failure = std::current_exception();
            }
        }
    };
    std::vector<std::thread> helpers;
    const size_t extra = std::min<size_t>(count, static_cast<size_t>(workers)) - 1;
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

}  // namespace

void Parallel::run_in_parallel(size_t count, PieceFunction call, void *body) {
#if defined(GPUPRIM_CPU_TBB)
    // A context made in a forked child has no arena; one made before the
    // fork must not use it either.
    if (!engine_ || in_forked_child()) return on_threads_of_the_call(count, workers_, call, body);
    engine_->arena->execute([&] {
        tbb::parallel_for(tbb::blocked_range<size_t>(0, count, 1), [&](const tbb::blocked_range<size_t> &range) {
            // oneTBB's workers belong to the process: each piece runs in the
            // default floating-point environment and leaves theirs as it was.
            const DefaultFloatEnvironment float_environment;
            for (size_t i = range.begin(); i != range.end(); ++i) call(body, i);
        });
    });
#elif defined(GPUPRIM_CPU_OPENMP)
    if (in_forked_child()) return on_threads_of_the_call(count, workers_, call, body);
    std::exception_ptr failure;
    const long long n = static_cast<long long>(count);
#  pragma omp parallel for num_threads(workers_) schedule(dynamic, 1)
    for (long long i = 0; i < n; ++i) {
        try {
            const DefaultFloatEnvironment float_environment;  // as oneTBB's pieces above
            call(body, static_cast<size_t>(i));
        } catch (...) {
#  pragma omp critical(gpuprim_parallel_failure)
            if (!failure) failure = std::current_exception();
        }
    }
    if (failure) std::rethrow_exception(failure);
#else
    // The sanitizer engine (and, unreachable, no engine: one worker).
    on_threads_of_the_call(count, workers_, call, body);
#endif
}

}  // namespace cpu
}  // namespace gpuprim
