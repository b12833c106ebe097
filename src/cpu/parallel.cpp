// SPDX-License-Identifier: Apache-2.0
// What cpu/parallel.h asks of the process: how many CPUs it may run on, and
// whether it is a child made by fork() since libgpuprim was loaded.
//
// The fork flag is the one piece of global state here (besides the handle
// registry, core/registry.h), and safety needs it: oneTBB's and OpenMP's
// worker pools belong to the process, not to a context, and do not survive
// fork(). The child inherits the pools' bookkeeping without their threads:
// GNU libgomp then waits forever for workers that do not exist (GCC bug
// 60035), and oneTBB documents fork() as unsupported (its arenas run on the
// calling thread alone, at best). No context can tell that from its own
// state, so a pthread_atfork() child handler, registered when the library is
// loaded, sets the flag in every child; it is never cleared (a child's
// children are children too), and is read with one relaxed atomic load.
#include "cpu/parallel.h"

#include <atomic>
#include <climits>
#include <thread>

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

}  // namespace cpu
}  // namespace gpuprim
