// SPDX-License-Identifier: Apache-2.0
// The distributed calls (issue 32) on p GPUs, weak scaling (a fixed count of
// keys per GPU), each beside the one-GPU call on rank 0 in the same run.
//
//   mpirun -np P -x NCCL_NVLS_ENABLE=0 distributed_bench [--log2 N] [--reps N]
//          [--cases LIST] [--csv FILE]
//   distributed_bench --single-process [--log2 N] [--reps N] [--cases LIST] [--csv FILE]
//
// One process per GPU under mpirun: GPU = the process's local rank on its
// node (set before anything else), an NCCL communicator bootstrapped over
// MPI (rank 0's ncclGetUniqueId, MPI_Bcast, ncclCommInitRank), one CUDA
// context per rank on a stream of its own, the communicator attached with
// gpuprim_context_attach_communicator. --single-process: one process drives
// every visible GPU (ncclCommInitAll, one context and one std::thread per
// GPU), by default the sort keys case only, to show that mode works.
// NVLink multicast (NVLS) stays off: NCCL_NVLS_ENABLE=0 is set here before
// any communicator is made, unless the environment sets it already.
//
// Cases (--cases, comma list; default all), n = 2^log2 (default 2^28) per GPU:
//   sort        gpuprim_distributed_sort, u32 keys, n per GPU
//   pairs       the same with u32 values
//   alltoall    a plain NCCL all-to-all (ncclGroupStart; ncclSend/ncclRecv
//               of n*4/p bytes to and from each rank; ncclGroupEnd) of the
//               sort's key bytes: the floor of the sort's exchange step
//   reduce      gpuprim_distributed_reduce, sum of f32 in [0.5, 2)
//   scan        gpuprim_distributed_scan, inclusive sum of i32 in [-128, 127]
//   topk        gpuprim_distributed_topk, the k = 1024 largest of n/4 f32
//               (normal) per GPU, keys and u64 global positions
//   skew_one    the sort with every key on rank 0 (n keys) and none elsewhere
//   skew_equal  the sort of n equal keys per GPU
// One-GPU baseline (rank 0 alone, the others waiting): the matching call of
// the per-GPU count (gpuprim_sort_with_options, gpuprim_reduce,
// gpuprim_scan, gpuprim_topk); for skew_one and skew_equal the one-GPU sort
// of all the keys (n, p*n).
//
// Timing: 2 warm-up calls, then --reps (7) timed calls. Each timed call:
// prepare (sorts: cudaMemcpyAsync from a pristine copy, in place from a
// fresh input every call; then an L2 flush by reading twice the L2; stream
// synchronized), MPI_Barrier, then host wall clock (steady_clock) and CUDA
// events on the context's stream around the call (the distributed calls
// block; the plain all-to-all is followed by cudaStreamSynchronize). Per
// rank the median of each; reported: the max over ranks (MPI_Reduce MAX).
// The one-GPU baseline is timed the same way (call + cudaStreamSynchronize
// inside the wall-clock time). Inputs rotate over 2 copies where memory
// allows (random, from a per-rank seed).
// speedup = (global keys / t_dist) / (one-GPU keys / t_one), t = wall time;
// with the one-GPU call of the per-GPU count that is (p n / t_dist) /
// (n / t_one).
//
// Checks, once, on the outputs of the last timed call: sorts: each rank's
// keys sorted, the last key of each rank <= the first of the next non-empty
// rank, the keys' multiset unchanged (global count, sum and sum of a hash of
// the keys), values still with their keys (value = a bijection of the key);
// reduce: against the MPI_Allreduce of the ranks' f64 sums (relative 1e-3),
// the same bits on every rank; scan: every output element (out[i] -
// out[i-1] == in[i], out[0] == the ranks before + in[0]); top-k: the same
// result on every rank, keys non-increasing, each key at its global
// position, distinct positions, and #(keys > k-th) < k <= #(keys >= k-th).
// A failed check prints FAIL and the run exits with status 1.
#include <gpuprim/gpuprim.h>

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "bench_util.h"

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 13, 0)
#define GPUPRIM_BENCH_NCCL_LAST_ERROR() ncclGetLastError(nullptr)
#else
#define GPUPRIM_BENCH_NCCL_LAST_ERROR() ""
#endif
#define CHECK_NCCL(call)                                                                                \
    do {                                                                                                \
        ncclResult_t r_ = (call);                                                                       \
        if (r_ != ncclSuccess) {                                                                        \
            fprintf(stderr, "%s:%d: %s: %s %s\n", __FILE__, __LINE__, #call, ncclGetErrorString(r_),    \
                    GPUPRIM_BENCH_NCCL_LAST_ERROR());                                                   \
            exit(1);                                                                                    \
        }                                                                                               \
    } while (0)

namespace {

using namespace gpuprim_bench;
using Clock = std::chrono::steady_clock;

constexpr int kWarmups = 2;
constexpr uint64_t kTopK = 1024;
constexpr uint32_t kEqualKey = 0x5A5A5A5Au;                // skew_equal: every key (a byte pattern: memset)
constexpr double kMaxBytesPerGpu = 40e9;                    // inputs, outputs, workspace
const char *const kAllCases[] = {"sort", "pairs", "alltoall", "reduce", "scan", "topk", "skew_one", "skew_equal"};

struct Options {
    int log2 = 28;
    int reps = 7;
    std::vector<std::string> cases;
    std::string csv_path;
    bool single_process = false;
};
Options opt;

// ---------------------------------------------------------------------------
// The ranks: MPI processes or threads of one process, behind one interface.
// ---------------------------------------------------------------------------

class Group {
public:
    virtual ~Group() = default;
    int rank = 0;
    int size = 1;
    virtual void barrier() = 0;
    // Every rank's `bytes` bytes at send, in rank order, into receive (size * bytes).
    virtual void allgather(const void *send, void *receive, size_t bytes) = 0;
    // The max over ranks, valid on rank 0 (MPI_Reduce MAX).
    virtual double max_to_root(double v) = 0;
    // The sum over ranks, on every rank (MPI_Allreduce SUM).
    virtual double allreduce_sum(double v) = 0;

    template <class T>
    std::vector<T> all(const T &v) {
        static_assert(std::is_trivially_copyable<T>::value, "plain data only");
        std::vector<T> out(size);
        allgather(&v, out.data(), sizeof(T));
        return out;
    }
};

class MpiGroup final : public Group {
public:
    MpiGroup() {
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
    }
    void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }
    void allgather(const void *send, void *receive, size_t bytes) override {
        MPI_Allgather(send, int(bytes), MPI_BYTE, receive, int(bytes), MPI_BYTE, MPI_COMM_WORLD);
    }
    double max_to_root(double v) override {
        double out = 0;
        MPI_Reduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        return out;
    }
    double allreduce_sum(double v) override {
        double out = 0;
        MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        return out;
    }
};

// What the threads of --single-process share: a reusable barrier and one
// slot per thread for the gathers.
struct ThreadShared {
    explicit ThreadShared(int n) : size(n), slots(n) {}
    int size;
    std::mutex mutex;
    std::condition_variable cv;
    int arrived = 0;
    uint64_t generation = 0;
    std::vector<std::vector<char>> slots;

    void barrier() {
        std::unique_lock<std::mutex> lock(mutex);
        const uint64_t gen = generation;
        if (++arrived == size) {
            arrived = 0;
            ++generation;
            cv.notify_all();
        } else {
            cv.wait(lock, [&] { return generation != gen; });
        }
    }
};

class ThreadGroup final : public Group {
public:
    ThreadGroup(ThreadShared *shared, int r) : shared_(shared) {
        rank = r;
        size = shared->size;
    }
    void barrier() override { shared_->barrier(); }
    void allgather(const void *send, void *receive, size_t bytes) override {
        {
            std::lock_guard<std::mutex> lock(shared_->mutex);
            const char *s = static_cast<const char *>(send);
            shared_->slots[rank].assign(s, s + bytes);
        }
        shared_->barrier();
        for (int r = 0; r < size; ++r) memcpy(static_cast<char *>(receive) + r * bytes, shared_->slots[r].data(), bytes);
        shared_->barrier();  // nobody overwrites a slot before everyone has read it
    }
    double max_to_root(double v) override {
        const std::vector<double> a = all(v);
        return *std::max_element(a.begin(), a.end());
    }
    double allreduce_sum(double v) override {
        double s = 0;
        for (double x : all(v)) s += x;
        return s;
    }

private:
    ThreadShared *shared_;
};

// One rank: its GPU, stream, context and communicator.
struct Rank {
    Group *group = nullptr;
    int device = 0;
    cudaStream_t stream = nullptr;
    gpuprim_context_t ctx = nullptr;
    ncclComm_t comm = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    std::unique_ptr<Device> flush;  // 2 x L2, read before every timed call
    uint64_t flush_bytes = 0;
    std::string mode;               // "mpi" or "1proc"

    int rank() const { return group->rank; }
    int size() const { return group->size; }
    bool root() const { return group->rank == 0; }
};

// ---------------------------------------------------------------------------
// Device kernels: inputs, L2 flush, checks.
// ---------------------------------------------------------------------------

__host__ __device__ inline uint64_t mix64(uint64_t x) {  // splitmix64's finalizer
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}
// The value that travels with key k in the pairs case (a bijection).
__host__ __device__ inline uint32_t pair_value(uint32_t k) { return (k * 2654435761u) ^ 0x5BD1E995u; }

constexpr int kThreads = 256;
inline unsigned grid_for(uint64_t n) {
    return unsigned(std::max<uint64_t>(1, std::min<uint64_t>((n + kThreads - 1) / kThreads, 132 * 16)));
}

__global__ void fill_u32_kernel(uint32_t *out, uint64_t n, uint64_t seed) {
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
        out[i] = uint32_t(mix64(seed ^ mix64(i)) >> 16);
}
__global__ void fill_values_kernel(uint32_t *values, const uint32_t *keys, uint64_t n) {
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
        values[i] = pair_value(keys[i]);
}
// f32 in [0.5, 2) (sum) or normal (top-k, like logits).
__global__ void fill_f32_kernel(float *out, uint64_t n, uint64_t seed, bool normal) {
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x) {
        const uint64_t h = mix64(seed ^ mix64(i));
        const float u1 = (float(uint32_t(h >> 40)) + 0.5f) * (1.0f / 16777216.0f);
        const float u2 = float(uint32_t(h >> 8) & 0xFFFFFFu) * (1.0f / 16777216.0f);
        out[i] = normal ? sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2) : 0.5f + 1.5f * u2;
    }
}
__global__ void fill_i32_kernel(int32_t *out, uint64_t n, uint64_t seed) {
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
        out[i] = int32_t(mix64(seed ^ mix64(i)) & 0xFF) - 128;
}
// Reads every word once: evicts the input of the previous call from L2.
__global__ void read_kernel(const uint4 *in, uint64_t n4, uint32_t *sink) {
    uint32_t acc = 0;
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n4; i += uint64_t(gridDim.x) * blockDim.x) {
        const uint4 v = __ldcs(in + i);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x12345678u) sink[blockIdx.x] = acc;  // keeps the loads alive
}

__device__ inline void warp_add(unsigned long long *counter, unsigned long long v) {
    for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xFFFFFFFFu, v, o);
    if ((threadIdx.x & 31) == 0 && v) atomicAdd(counter, v);
}
// counters: [0] adjacent pairs out of order, [1] sum of keys, [2] sum of
// mix64(key), [3] values not pair_value(key) (values may be null).
__global__ void sort_stats_kernel(const uint32_t *keys, const uint32_t *values, uint64_t n,
                                  unsigned long long *counters) {
    unsigned long long unsorted = 0, sum = 0, mixsum = 0, bad = 0;
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x) {
        const uint32_t k = keys[i];
        if (i + 1 < n && k > keys[i + 1]) ++unsorted;
        sum += k;
        mixsum += mix64(k);
        if (values && values[i] != pair_value(k)) ++bad;
    }
    warp_add(counters + 0, unsorted);
    warp_add(counters + 1, sum);
    warp_add(counters + 2, mixsum);
    warp_add(counters + 3, bad);
}
__global__ void sum_f64_kernel(const float *in, uint64_t n, double *out) {
    double acc = 0;
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
        acc += in[i];
    for (int o = 16; o > 0; o /= 2) acc += __shfl_down_sync(0xFFFFFFFFu, acc, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(out, acc);
}
// counters: [0] the sum of in (two's complement, mod 2^64); [1] outputs that
// are not the inclusive scan started from `before` (mod 2^32).
__global__ void scan_check_kernel(const int32_t *in, const int32_t *out, uint64_t n, uint32_t before,
                                  unsigned long long *counters) {
    unsigned long long sum = 0, bad = 0;
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x) {
        const uint32_t x = uint32_t(in[i]);
        sum += (unsigned long long)(long long)in[i];
        const uint32_t prev = i == 0 ? before : uint32_t(out[i - 1]);
        if (uint32_t(out[i]) - prev != x) ++bad;
    }
    warp_add(counters + 0, sum);
    warp_add(counters + 1, bad);
}
// counters: [0] keys > t, [1] keys >= t.
__global__ void count_above_kernel(const float *in, uint64_t n, float t, unsigned long long *counters) {
    unsigned long long gt = 0, ge = 0;
    for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x) {
        gt += in[i] > t;
        ge += in[i] >= t;
    }
    warp_add(counters + 0, gt);
    warp_add(counters + 1, ge);
}

// Small device counters, read back after the kernel.
template <int N>
struct Counters {
    Device mem{N * sizeof(unsigned long long)};
    unsigned long long *get(cudaStream_t s) {
        CHECK_CUDA(cudaMemsetAsync(mem.p, 0, N * sizeof(unsigned long long), s));
        return static_cast<unsigned long long *>(mem.p);
    }
    std::vector<unsigned long long> read(cudaStream_t s) {
        std::vector<unsigned long long> h(N);
        CHECK_CUDA(cudaMemcpyAsync(h.data(), mem.p, N * sizeof(unsigned long long), cudaMemcpyDeviceToHost, s));
        CHECK_CUDA(cudaStreamSynchronize(s));
        return h;
    }
};

void fill_u32(Rank &rk, void *p, uint64_t n, uint64_t seed) {
    if (n) fill_u32_kernel<<<grid_for(n), kThreads, 0, rk.stream>>>(static_cast<uint32_t *>(p), n, seed);
    CHECK_CUDA(cudaGetLastError());
}
void flush_l2(Rank &rk) {
    read_kernel<<<grid_for(rk.flush_bytes / 16), kThreads, 0, rk.stream>>>(static_cast<const uint4 *>(rk.flush->p),
                                                                             rk.flush_bytes / 16,
                                                                             static_cast<uint32_t *>(rk.flush->p));
    CHECK_CUDA(cudaGetLastError());
}
uint64_t seed_for(const Rank &rk, int salt, int copy) {
    return mix64(uint64_t(rk.rank()) * 1000003u + uint64_t(salt) * 101u + uint64_t(copy));
}

// ---------------------------------------------------------------------------
// Timing
// ---------------------------------------------------------------------------

struct Times {
    double wall_ms = 0;   // host wall clock, median
    double event_ms = 0;  // CUDA events on the context's stream, median
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

// prep(i) readies call i (copy, flush), outside the timing; call(i) makes
// the call and returns when it is complete. Warm-ups, then opt.reps timed
// calls. collective: every rank, a barrier before each call, result = the
// max over ranks of the per-rank medians (on rank 0). Otherwise this rank
// alone, medians of its own.
Times time_calls(Rank &rk, bool collective, const std::function<void(int)> &prep,
                 const std::function<void(int)> &call) {
    for (int w = 0; w < kWarmups; ++w) {
        prep(w);
        CHECK_CUDA(cudaStreamSynchronize(rk.stream));
        if (collective) rk.group->barrier();
        call(w);
    }
    std::vector<double> wall, event;
    for (int r = 0; r < opt.reps; ++r) {
        const int i = kWarmups + r;
        prep(i);
        CHECK_CUDA(cudaStreamSynchronize(rk.stream));
        if (collective) rk.group->barrier();
        const Clock::time_point t0 = Clock::now();
        CHECK_CUDA(cudaEventRecord(rk.start, rk.stream));
        call(i);
        CHECK_CUDA(cudaEventRecord(rk.stop, rk.stream));
        CHECK_CUDA(cudaEventSynchronize(rk.stop));
        const Clock::time_point t1 = Clock::now();
        float ms = 0;
        CHECK_CUDA(cudaEventElapsedTime(&ms, rk.start, rk.stop));
        wall.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        event.push_back(ms);
    }
    Times t{median(wall), median(event)};
    if (collective) {
        t.wall_ms = rk.group->max_to_root(t.wall_ms);
        t.event_ms = rk.group->max_to_root(t.event_ms);
    }
    return t;
}
int last_call() { return kWarmups + opt.reps - 1; }

// ---------------------------------------------------------------------------
// Results (rank 0)
// ---------------------------------------------------------------------------

struct Row {
    std::string mode, name;
    int p = 0;
    uint64_t n_per_gpu = 0, global_n = 0;
    Times dist;
    uint64_t one_n = 0;
    Times one;
    double gbps_per_gpu = 0;  // alltoall
    bool bound = false;       // the exchange bound: a difference of two rows' times
    std::string goal, met, check, note;
    int copies = 0;
    double speedup() const {
        if (dist.wall_ms <= 0 || one.wall_ms <= 0 || one_n == 0) return 0;
        return (double(global_n) / dist.wall_ms) / (double(one_n) / one.wall_ms);
    }
};

struct Header {
    std::string gpu, nccl, gpuprim, date, cuda, hosts;
    int p = 0;
};

std::vector<Row> rows;
Header header;
FILE *csv = nullptr;
bool any_failed = false;  // agreed on every rank

// The speedup a case must reach on p GPUs (issue 32's table); 0: none for this p.
double goal_for(const std::string &c, int p) {
    if (c == "skew_one" || c == "skew_equal") return p >= 2 ? 1.0 : 0;
    const bool two = p == 2, four = p == 4;
    if (!two && !four) return 0;
    if (c == "sort") return two ? 1.6 : 2.8;
    if (c == "pairs") return two ? 1.5 : 2.6;
    if (c == "reduce" || c == "scan") return two ? 1.9 : 3.6;
    if (c == "topk") return two ? 1.8 : 3.2;
    return 0;
}

std::string fmt(const char *f, double v) {
    char b[64];
    snprintf(b, sizeof b, f, v);
    return b;
}
std::string log2_name(uint64_t n) {
    if (n == 0) return "0";
    if ((n & (n - 1)) == 0) return "2^" + std::to_string(63 - __builtin_clzll(n));
    return std::to_string(n);
}

void csv_row(const Row &r) {
    if (!csv) return;
    auto q = [](const std::string &s) {  // quoted, inner quotes doubled
        std::string o = "\"";
        for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
        return o + "\"";
    };
    fprintf(csv, "%s,%s,%d,%llu,%llu,%.4f,%.4f,%.4f,%llu,%.4f,%.4f,%.4f,%s,%s,%.2f,%s,%d,%d,%s,%s,%s,%s,%s\n",
            r.mode.c_str(), r.name.c_str(), r.p, (unsigned long long)r.n_per_gpu, (unsigned long long)r.global_n,
            r.dist.wall_ms, r.dist.event_ms, r.dist.wall_ms > 0 && !r.bound && r.gbps_per_gpu == 0 ? r.global_n / r.dist.wall_ms / 1e6 : 0.0,
            (unsigned long long)r.one_n, r.one.wall_ms, r.one.event_ms, r.speedup(), q(r.goal).c_str(),
            q(r.met).c_str(), r.gbps_per_gpu, q(r.check).c_str(), opt.reps, r.copies, q(header.gpu).c_str(),
            header.nccl.c_str(), header.gpuprim.c_str(), q(header.date).c_str(), q(r.note).c_str());
    fflush(csv);
}

// Fills goal and met from the speedup, prints a progress line, keeps the row.
void add_row(Row r, const std::string &case_name) {
    if (r.mode != "mpi") r.name += " (1 process)";
    const double g = goal_for(case_name, r.p);
    if (r.goal.empty()) {
        if (g > 0) {
            r.goal = (case_name.rfind("skew", 0) == 0 ? ">= " + fmt("%.1fx", g) + " (no slower than one GPU sorting it all)"
                                                      : ">= " + fmt("%.1fx", g));
            r.met = r.speedup() >= g ? "yes" : "NO";
        } else {
            r.goal = "n/a (goals for 2 and 4 GPUs)";
            r.met = "n/a";
        }
    }
    if (r.check.rfind("FAIL", 0) == 0) any_failed = true;
    printf("%-24s dist %9.3f ms (events %9.3f)", r.name.c_str(), r.dist.wall_ms, r.dist.event_ms);
    if (r.one.wall_ms > 0)
        printf("  one GPU %9.3f ms (%s keys)  speedup %.2fx", r.one.wall_ms, log2_name(r.one_n).c_str(), r.speedup());
    if (r.gbps_per_gpu > 0) printf("  %.1f GB/s per GPU", r.gbps_per_gpu);
    printf("  goal %s: %s  check %s%s%s\n", r.goal.c_str(), r.met.c_str(), r.check.c_str(), r.note.empty() ? "" : "  ",
           r.note.c_str());
    fflush(stdout);
    csv_row(r);
    rows.push_back(r);
}

void print_table() {
    printf("\n## libgpuprim distributed benchmark (issue 32)\n\n");
    printf("- GPU: %s; p = %d (%s); hosts: %s\n", header.gpu.c_str(), header.p,
           rows.empty() ? "" : (rows[0].mode == "mpi" ? "one process per GPU, mpirun" : "one process, a thread per GPU"),
           header.hosts.c_str());
    printf("- NCCL %s; libgpuprim %s; %s\n", header.nccl.c_str(), header.gpuprim.c_str(), header.cuda.c_str());
    printf("- %s; NCCL_NVLS_ENABLE=%s; %d warm-up + %d timed calls, median per rank, max over ranks\n",
           header.date.c_str(), getenv("NCCL_NVLS_ENABLE") ? getenv("NCCL_NVLS_ENABLE") : "(unset)", kWarmups,
           opt.reps);
    printf("- speedup = (global keys / t_dist) / (one-GPU keys / t_one), wall-clock medians\n\n");
    printf("| case | keys/GPU | global keys | time ms | events ms | Gkeys/s | one GPU ms (keys) | speedup | goal | met | check | note |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (const Row &r : rows) {
        const std::string gk =
            r.dist.wall_ms > 0 && r.gbps_per_gpu == 0 && !r.bound ? fmt("%.2f", r.global_n / r.dist.wall_ms / 1e6) : "";
        const std::string ev = r.bound ? "" : fmt("%.3f", r.dist.event_ms);
        const std::string one = r.one.wall_ms > 0 ? fmt("%.3f", r.one.wall_ms) + " (" + log2_name(r.one_n) + ")" : "";
        const std::string sp = r.speedup() > 0 ? fmt("%.2fx", r.speedup()) : "";
        std::string note = r.note;
        if (r.gbps_per_gpu > 0) note = fmt("%.1f GB/s per GPU", r.gbps_per_gpu) + (note.empty() ? "" : "; " + note);
        printf("| %s | %s | %s | %.3f | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.name.c_str(),
               log2_name(r.n_per_gpu).c_str(), log2_name(r.global_n).c_str(), r.dist.wall_ms, ev.c_str(),
               gk.c_str(), one.c_str(), sp.c_str(), r.goal.c_str(), r.met.c_str(), r.check.c_str(), note.c_str());
    }
    fflush(stdout);
}

// ---------------------------------------------------------------------------
// Checks: each rank's finding, agreed on every rank.
// ---------------------------------------------------------------------------

// "ok", or "FAIL: <the first failing rank's message>", on every rank; the
// failing ranks also print theirs to stderr.
std::string agree(Rank &rk, const std::string &local_failure) {
    struct Msg {
        int failed;
        char text[200];
    } m{};
    m.failed = !local_failure.empty();
    snprintf(m.text, sizeof m.text, "%s", local_failure.c_str());
    if (m.failed) fprintf(stderr, "[rank %d] check failed: %s\n", rk.rank(), m.text);
    for (const Msg &x : rk.group->all(m))
        if (x.failed) return std::string("FAIL: ") + x.text;
    return "ok";
}

struct SortStats {
    unsigned long long unsorted = 0, sum = 0, mixsum = 0, bad_values = 0;
};
SortStats sort_stats(Rank &rk, const void *keys, const void *values, uint64_t n) {
    Counters<4> c;
    unsigned long long *d = c.get(rk.stream);
    if (n)
        sort_stats_kernel<<<grid_for(n), kThreads, 0, rk.stream>>>(static_cast<const uint32_t *>(keys),
                                                                   static_cast<const uint32_t *>(values), n, d);
    CHECK_CUDA(cudaGetLastError());
    const std::vector<unsigned long long> h = c.read(rk.stream);
    return SortStats{h[0], h[1], h[2], h[3]};
}

// The distributed sort's output (keys, values: n u32 each, values may be
// null) against its input's stats.
std::string check_sorted(Rank &rk, const SortStats &before, const void *keys, const void *values, uint64_t n) {
    const SortStats after = sort_stats(rk, keys, values, n);
    std::string fail;
    if (after.unsorted) fail = std::to_string(after.unsorted) + " adjacent keys out of order on rank " + std::to_string(rk.rank());
    else if (after.bad_values)
        fail = std::to_string(after.bad_values) + " values away from their keys on rank " + std::to_string(rk.rank());
    // Rank boundaries: the last key of each non-empty rank <= the first of the next.
    struct Ends {
        uint64_t n;
        uint32_t first, last;
    } e{n, 0, 0};
    if (n) {
        CHECK_CUDA(cudaMemcpy(&e.first, keys, 4, cudaMemcpyDeviceToHost));
        CHECK_CUDA(cudaMemcpy(&e.last, static_cast<const uint32_t *>(keys) + (n - 1), 4, cudaMemcpyDeviceToHost));
    }
    const std::vector<Ends> ends = rk.group->all(e);
    if (fail.empty() && rk.root()) {
        int prev = -1;
        for (int r = 0; r < rk.size(); ++r) {
            if (!ends[r].n) continue;
            if (prev >= 0 && ends[prev].last > ends[r].first) {
                fail = "last key of rank " + std::to_string(prev) + " (" + std::to_string(ends[prev].last) +
                       ") > first key of rank " + std::to_string(r) + " (" + std::to_string(ends[r].first) + ")";
                break;
            }
            prev = r;
        }
    }
    // The multiset: global count, sum and hash sum unchanged.
    struct Sums {
        unsigned long long n, sum, mixsum;
    };
    const std::vector<Sums> b = rk.group->all(Sums{n, before.sum, before.mixsum});
    const std::vector<Sums> a = rk.group->all(Sums{n, after.sum, after.mixsum});
    Sums gb{0, 0, 0}, ga{0, 0, 0};
    for (int r = 0; r < rk.size(); ++r) {
        gb.n += b[r].n;
        gb.sum += b[r].sum;
        gb.mixsum += b[r].mixsum;
        ga.n += a[r].n;
        ga.sum += a[r].sum;
        ga.mixsum += a[r].mixsum;
    }
    if (fail.empty() && rk.root() && (gb.n != ga.n || gb.sum != ga.sum || gb.mixsum != ga.mixsum))
        fail = "the keys differ from the input's (global count " + std::to_string(ga.n) + " of " +
               std::to_string(gb.n) + ", or sum or hash sum)";
    return agree(rk, fail);
}

// Rank 0: whether the one-GPU call's output is sorted (the baseline must be a real sort).
std::string one_gpu_note(Rank &rk, const void *keys, uint64_t n) {
    const SortStats s = sort_stats(rk, keys, nullptr, n);
    if (s.unsorted) {
        any_failed = true;
        return "FAIL: the one-GPU sort's output is not sorted";
    }
    return "";
}

// ---------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------

gpuprim_sort_options_t sort_options() {
    gpuprim_sort_options_t o;
    gpuprim_sort_options_init(&o);
    return o;
}

// 2 input copies when every rank has room for them (and the total stays
// under 40 GB), else 1. fixed: bytes besides the copies (outputs, workspace).
int input_copies(Rank &rk, double fixed, double per_copy) {
    size_t free_b = 0, total_b = 0;
    CHECK_CUDA(cudaMemGetInfo(&free_b, &total_b));
    const double need = fixed + 2 * per_copy;
    const int mine = need < 0.9 * double(free_b) && need < kMaxBytesPerGpu ? 2 : 1;
    int copies = 2;
    for (int c : rk.group->all(mine)) copies = std::min(copies, c);
    return copies;
}

void release(Rank &rk, std::vector<gpuprim_buffer_t> buffers) {
    for (gpuprim_buffer_t b : buffers)
        if (b) CHECK_GP(rk.ctx, gpuprim_buffer_destroy(rk.ctx, b));
    CHECK_GP(rk.ctx, gpuprim_context_release_workspace(rk.ctx));
    CHECK_CUDA(cudaStreamSynchronize(rk.stream));
}

// Wall times of the distributed sort and of the one-GPU sort of the same
// per-GPU count, kept for the exchange estimate.
double sort_dist_ms = 0, sort_one_ms = 0;

// sort, pairs, skew_one, skew_equal.
void case_sort(Rank &rk, const std::string &which) {
    const bool pairs = which == "pairs", skew_one = which == "skew_one", equal = which == "skew_equal";
    const int p = rk.size();
    const uint64_t n_gpu = 1ull << opt.log2;
    const uint64_t n = skew_one && !rk.root() ? 0 : n_gpu;  // this rank's keys
    uint64_t global_n = 0;
    for (uint64_t x : rk.group->all(n)) global_n += x;
    const double bytes = double(n) * 4 * (pairs ? 2 : 1);
    // Fresh input per call: a pristine copy (equal keys: a memset), the
    // buffers sorted in place, the workspace (~ 2.2 copies).
    const int copies = equal ? 0 : input_copies(rk, 3.5 * bytes, bytes);
    std::vector<std::unique_ptr<Device>> pk, pv;
    for (int c = 0; c < copies; ++c) {
        pk.emplace_back(new Device(n * 4));
        fill_u32(rk, pk.back()->p, n, seed_for(rk, 1, c));
        if (pairs) {
            pv.emplace_back(new Device(n * 4));
            if (n) fill_values_kernel<<<grid_for(n), kThreads, 0, rk.stream>>>(static_cast<uint32_t *>(pv.back()->p),
                                                                               static_cast<const uint32_t *>(pk.back()->p), n);
            CHECK_CUDA(cudaGetLastError());
        }
    }
    Device wk(n * 4), wv(pairs ? n * 4 : 0);
    gpuprim_buffer_t bk = wrap(rk.ctx, GPUPRIM_DTYPE_U32, wk.p, n);
    gpuprim_buffer_t bv = pairs ? wrap(rk.ctx, GPUPRIM_DTYPE_U32, wv.p, n) : nullptr;
    const gpuprim_sort_options_t so = sort_options();
    auto prep = [&](int i) {
        if (n) {
            if (equal) {
                CHECK_CUDA(cudaMemsetAsync(wk.p, kEqualKey & 0xFF, n * 4, rk.stream));
            } else {
                CHECK_CUDA(cudaMemcpyAsync(wk.p, pk[i % copies]->p, n * 4, cudaMemcpyDeviceToDevice, rk.stream));
                if (pairs)
                    CHECK_CUDA(cudaMemcpyAsync(wv.p, pv[i % copies]->p, n * 4, cudaMemcpyDeviceToDevice, rk.stream));
            }
        }
        flush_l2(rk);
    };
    const Times dist = time_calls(rk, true, prep, [&](int) {
        CHECK_GP(rk.ctx, gpuprim_distributed_sort(rk.ctx, bk, bv, bk, bv, &so));
    });

    // Check the last call's output against its input.
    SortStats before;
    if (equal) {
        before.sum = (unsigned long long)n * kEqualKey;
        before.mixsum = (unsigned long long)n * (unsigned long long)mix64(kEqualKey);
    } else {
        before = sort_stats(rk, pk[last_call() % copies]->p, pairs ? pv[last_call() % copies]->p : nullptr, n);
    }
    const std::string check = check_sorted(rk, before, wk.p, pairs ? wv.p : nullptr, n);
    release(rk, {});

    // The one-GPU baseline, rank 0 alone: the per-GPU count, or every key
    // (skew_one: rank 0's n are all of them; skew_equal: p * n equal keys).
    Times one;
    uint64_t one_n = equal ? global_n : n_gpu;
    std::string note;
    if (rk.root()) {
        if (equal && p > 1) {
            size_t free_b = 0, total_b = 0;
            CHECK_CUDA(cudaMemGetInfo(&free_b, &total_b));
            if (double(one_n) * 4 * 3.5 > 0.9 * double(free_b)) {
                one_n = n_gpu;
                note = "one-GPU baseline at the per-GPU count (no room for p*n keys on one GPU)";
            }
        }
        std::unique_ptr<Device> big;
        void *keys = wk.p;
        if (one_n != n) {
            big.reset(new Device(one_n * 4));
            keys = big->p;
        }
        gpuprim_buffer_t ok = wrap(rk.ctx, GPUPRIM_DTYPE_U32, keys, one_n);
        auto prep1 = [&](int i) {
            if (equal) CHECK_CUDA(cudaMemsetAsync(keys, kEqualKey & 0xFF, one_n * 4, rk.stream));
            else {
                CHECK_CUDA(cudaMemcpyAsync(keys, pk[i % copies]->p, one_n * 4, cudaMemcpyDeviceToDevice, rk.stream));
                if (pairs) CHECK_CUDA(cudaMemcpyAsync(wv.p, pv[i % copies]->p, one_n * 4, cudaMemcpyDeviceToDevice, rk.stream));
            }
            flush_l2(rk);
        };
        one = time_calls(rk, false, prep1, [&](int) {
            CHECK_GP(rk.ctx, gpuprim_sort_with_options(rk.ctx, ok, bv, ok, bv, &so));
            CHECK_CUDA(cudaStreamSynchronize(rk.stream));
        });
        const std::string bad = one_gpu_note(rk, keys, one_n);
        if (!bad.empty()) note = bad + (note.empty() ? "" : "; " + note);
        release(rk, {ok});
    }
    rk.group->barrier();
    release(rk, {bk, bv});

    if (rk.root()) {
        Row r;
        r.mode = rk.mode;
        r.name = pairs ? "sort pairs u32/u32" : skew_one ? "skew: all keys on rank 0" : equal ? "skew: all keys equal" : "sort keys u32";
        r.p = p;
        r.n_per_gpu = skew_one ? global_n : n_gpu;
        r.global_n = global_n;
        r.dist = dist;
        r.one_n = one_n;
        r.one = one;
        r.check = check;
        r.note = skew_one ? "rank 0 holds all " + log2_name(global_n) + " keys, the others none" : note;
        r.copies = copies;
        if (which == "sort") sort_dist_ms = dist.wall_ms, sort_one_ms = one.wall_ms;
        add_row(r, which);
    }
}

// The plain NCCL all-to-all of the sort's key bytes.
double alltoall_ms = 0, alltoall_gbps = 0;
void case_alltoall(Rank &rk) {
    const int p = rk.size();
    const uint64_t n = 1ull << opt.log2;
    const uint64_t chunk = n / uint64_t(p);  // u32 per peer
    const int copies = input_copies(rk, double(n) * 4, double(n) * 4);
    std::vector<std::unique_ptr<Device>> send;
    for (int c = 0; c < copies; ++c) {
        send.emplace_back(new Device(n * 4));
        fill_u32(rk, send.back()->p, n, seed_for(rk, 3, c));
    }
    Device receive(n * 4);
    const Times t = time_calls(rk, true, [&](int) { flush_l2(rk); }, [&](int i) {
        const uint32_t *s = static_cast<const uint32_t *>(send[i % copies]->p);
        uint32_t *d = static_cast<uint32_t *>(receive.p);
        CHECK_NCCL(ncclGroupStart());
        for (int peer = 0; peer < p; ++peer) {
            CHECK_NCCL(ncclSend(s + peer * chunk, chunk, ncclUint32, peer, rk.comm, rk.stream));
            CHECK_NCCL(ncclRecv(d + peer * chunk, chunk, ncclUint32, peer, rk.comm, rk.stream));
        }
        CHECK_NCCL(ncclGroupEnd());
        CHECK_CUDA(cudaStreamSynchronize(rk.stream));
    });
    rk.group->barrier();
    if (rk.root()) {
        Row r;
        r.mode = rk.mode;
        r.name = "exchange: NCCL all-to-all";
        r.p = p;
        r.n_per_gpu = n;
        r.global_n = n * uint64_t(p);
        r.dist = t;
        // Bytes each GPU sends to the other GPUs per second (nccl-tests'
        // busbw of alltoall: size / time * (p - 1) / p).
        r.gbps_per_gpu = t.wall_ms > 0 ? double(chunk) * 4 * (p - 1) / (t.wall_ms * 1e6) : 0;
        r.goal = "reference: the sort's exchange <= 1.15x this";
        r.met = "n/a";
        r.check = "-";
        r.note = log2_name(chunk * 4) + " bytes to each rank (itself included)";
        r.copies = copies;
        alltoall_ms = t.wall_ms;
        alltoall_gbps = r.gbps_per_gpu;
        add_row(r, "alltoall");
    }
}

// The exchange step can only be bounded from outside the library: the
// distributed sort's time minus the one-GPU sort of the same per-GPU count.
void exchange_estimate(Rank &rk) {
    if (!rk.root() || sort_dist_ms <= 0 || sort_one_ms <= 0 || alltoall_ms <= 0) return;
    Row r;
    r.mode = rk.mode;
    r.name = "exchange step (bound)";
    r.bound = true;
    r.p = rk.size();
    r.n_per_gpu = 1ull << opt.log2;
    r.global_n = r.n_per_gpu * uint64_t(r.p);
    r.dist.wall_ms = sort_dist_ms - sort_one_ms;
    r.goal = "<= 1.15x all-to-all = " + fmt("%.3f ms", 1.15 * alltoall_ms);
    r.met = r.dist.wall_ms <= 1.15 * alltoall_ms ? "yes" : "unknown (bound above goal)";
    r.check = "-";
    r.note = "upper bound: sort keys time - one-GPU sort time (" + fmt("%.3f", sort_dist_ms) + " - " +
             fmt("%.3f", sort_one_ms) + " ms); " + fmt("%.2fx", r.dist.wall_ms / alltoall_ms) + " the all-to-all";
    add_row(r, "exchange");
}

void case_reduce(Rank &rk) {
    const uint64_t n = 1ull << opt.log2;
    const int copies = input_copies(rk, 1e8, double(n) * 4);
    std::vector<std::unique_ptr<Device>> in;
    std::vector<gpuprim_buffer_t> b;
    for (int c = 0; c < copies; ++c) {
        in.emplace_back(new Device(n * 4));
        fill_f32_kernel<<<grid_for(n), kThreads, 0, rk.stream>>>(static_cast<float *>(in.back()->p), n,
                                                                 seed_for(rk, 4, c), false);
        CHECK_CUDA(cudaGetLastError());
        b.push_back(wrap(rk.ctx, GPUPRIM_DTYPE_F32, in.back()->p, n));
    }
    float result = 0;
    const Times dist = time_calls(rk, true, [&](int) { flush_l2(rk); }, [&](int i) {
        CHECK_GP(rk.ctx, gpuprim_distributed_reduce(rk.ctx, GPUPRIM_OP_SUM, b[i % copies], &result));
    });
    // Check: the f64 sum over ranks of the last call's input; the same bits everywhere.
    Device dsum(8);
    CHECK_CUDA(cudaMemsetAsync(dsum.p, 0, 8, rk.stream));
    sum_f64_kernel<<<grid_for(n), kThreads, 0, rk.stream>>>(static_cast<const float *>(in[last_call() % copies]->p), n,
                                                            static_cast<double *>(dsum.p));
    CHECK_CUDA(cudaGetLastError());
    double local = 0;
    CHECK_CUDA(cudaMemcpyAsync(&local, dsum.p, 8, cudaMemcpyDeviceToHost, rk.stream));
    CHECK_CUDA(cudaStreamSynchronize(rk.stream));
    const double want = rk.group->allreduce_sum(local);
    std::string fail;
    if (!(std::fabs(double(result) - want) <= 1e-3 * std::fabs(want)))
        fail = "rank " + std::to_string(rk.rank()) + ": sum " + fmt("%.9g", result) + ", f64 sum " + fmt("%.9g", want);
    uint32_t bits;
    memcpy(&bits, &result, 4);
    for (uint32_t x : rk.group->all(bits))
        if (x != bits && fail.empty()) fail = "the ranks received different sums";
    const std::string check = agree(rk, fail);

    Times one;
    if (rk.root()) {
        float r1 = 0;
        one = time_calls(rk, false, [&](int) { flush_l2(rk); }, [&](int i) {
            CHECK_GP(rk.ctx, gpuprim_reduce(rk.ctx, GPUPRIM_OP_SUM, b[i % copies], &r1));
        });
    }
    rk.group->barrier();
    release(rk, b);
    if (rk.root()) {
        Row r;
        r.mode = rk.mode;
        r.name = "reduce sum f32";
        r.p = rk.size();
        r.n_per_gpu = n;
        r.global_n = n * uint64_t(r.p);
        r.dist = dist;
        r.one_n = n;
        r.one = one;
        r.check = check;
        r.copies = copies;
        add_row(r, "reduce");
    }
}

void case_scan(Rank &rk) {
    const uint64_t n = 1ull << opt.log2;
    const int copies = input_copies(rk, 3.0 * n * 4, double(n) * 4);
    std::vector<std::unique_ptr<Device>> in;
    std::vector<gpuprim_buffer_t> b;
    for (int c = 0; c < copies; ++c) {
        in.emplace_back(new Device(n * 4));
        fill_i32_kernel<<<grid_for(n), kThreads, 0, rk.stream>>>(static_cast<int32_t *>(in.back()->p), n,
                                                                 seed_for(rk, 5, c));
        CHECK_CUDA(cudaGetLastError());
        b.push_back(wrap(rk.ctx, GPUPRIM_DTYPE_I32, in.back()->p, n));
    }
    Device out(n * 4);
    gpuprim_buffer_t bo = wrap(rk.ctx, GPUPRIM_DTYPE_I32, out.p, n);
    const Times dist = time_calls(rk, true, [&](int) { flush_l2(rk); }, [&](int i) {
        CHECK_GP(rk.ctx, gpuprim_distributed_scan(rk.ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, b[i % copies], bo));
    });
    // Check every element: the local totals first (the kernel's sum with
    // before = 0), then out against in from the sum of the ranks before.
    const int32_t *last_in = static_cast<const int32_t *>(in[last_call() % copies]->p);
    Counters<2> c;
    scan_check_kernel<<<grid_for(n), kThreads, 0, rk.stream>>>(last_in, static_cast<const int32_t *>(out.p), n, 0,
                                                               c.get(rk.stream));
    CHECK_CUDA(cudaGetLastError());
    const unsigned long long total = c.read(rk.stream)[0];
    unsigned long long before = 0;
    const std::vector<unsigned long long> totals = rk.group->all(total);
    for (int r = 0; r < rk.rank(); ++r) before += totals[r];
    scan_check_kernel<<<grid_for(n), kThreads, 0, rk.stream>>>(last_in, static_cast<const int32_t *>(out.p), n,
                                                               uint32_t(before), c.get(rk.stream));
    CHECK_CUDA(cudaGetLastError());
    const unsigned long long bad = c.read(rk.stream)[1];
    const std::string check =
        agree(rk, bad ? std::to_string(bad) + " wrong outputs on rank " + std::to_string(rk.rank()) : "");

    Times one;
    if (rk.root()) {
        one = time_calls(rk, false, [&](int) { flush_l2(rk); }, [&](int i) {
            CHECK_GP(rk.ctx, gpuprim_scan(rk.ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, b[i % copies], bo));
            CHECK_CUDA(cudaStreamSynchronize(rk.stream));
        });
    }
    rk.group->barrier();
    b.push_back(bo);
    release(rk, b);
    if (rk.root()) {
        Row r;
        r.mode = rk.mode;
        r.name = "scan i32 inclusive";
        r.p = rk.size();
        r.n_per_gpu = n;
        r.global_n = n * uint64_t(r.p);
        r.dist = dist;
        r.one_n = n;
        r.one = one;
        r.check = check;
        r.copies = copies;
        add_row(r, "scan");
    }
}

void case_topk(Rank &rk) {
    const uint64_t n = 1ull << (opt.log2 - 2);
    const uint64_t k = kTopK;
    const int copies = input_copies(rk, 1.5 * n * 4, double(n) * 4);
    std::vector<std::unique_ptr<Device>> in;
    std::vector<gpuprim_buffer_t> b;
    for (int c = 0; c < copies; ++c) {
        in.emplace_back(new Device(n * 4));
        fill_f32_kernel<<<grid_for(n), kThreads, 0, rk.stream>>>(static_cast<float *>(in.back()->p), n,
                                                                 seed_for(rk, 6, c), true);
        CHECK_CUDA(cudaGetLastError());
        b.push_back(wrap(rk.ctx, GPUPRIM_DTYPE_F32, in.back()->p, n));
    }
    Device out_keys(k * 4), out_indices(k * 8);
    gpuprim_buffer_t bk = wrap(rk.ctx, GPUPRIM_DTYPE_F32, out_keys.p, k);
    gpuprim_buffer_t bi = wrap(rk.ctx, GPUPRIM_DTYPE_U64, out_indices.p, k);
    const Times dist = time_calls(rk, true, [&](int) { flush_l2(rk); }, [&](int i) {
        CHECK_GP(rk.ctx, gpuprim_distributed_topk(rk.ctx, b[i % copies], k, GPUPRIM_ORDER_DESCENDING, bk, bi));
    });

    // Check the last call's result.
    const float *last_in = static_cast<const float *>(in[last_call() % copies]->p);
    std::vector<float> keys(k);
    std::vector<uint64_t> idx(k);
    CHECK_CUDA(cudaMemcpy(keys.data(), out_keys.p, k * 4, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(idx.data(), out_indices.p, k * 8, cudaMemcpyDeviceToHost));
    const uint64_t offset = n * uint64_t(rk.rank()), global_n = n * uint64_t(rk.size());
    std::string fail;
    uint64_t hash = 0;
    for (uint64_t j = 0; j < k; ++j) {
        uint32_t bits;
        memcpy(&bits, &keys[j], 4);
        hash = mix64(hash ^ bits) ^ mix64(idx[j] + j);
    }
    for (uint64_t h : rk.group->all(hash))
        if (h != hash) fail = "the ranks received different results";
    for (uint64_t j = 1; j < k && fail.empty(); ++j)
        if (!(keys[j - 1] >= keys[j])) fail = "keys not in descending order at " + std::to_string(j);
    std::vector<uint64_t> sorted_idx(idx);
    std::sort(sorted_idx.begin(), sorted_idx.end());
    if (fail.empty() && std::adjacent_find(sorted_idx.begin(), sorted_idx.end()) != sorted_idx.end())
        fail = "a position appears twice";
    if (fail.empty() && !sorted_idx.empty() && sorted_idx.back() >= global_n) fail = "a position past the global count";
    uint64_t owned = 0;
    for (uint64_t j = 0; j < k && fail.empty(); ++j) {
        if (idx[j] < offset || idx[j] >= offset + n) continue;
        float v;
        CHECK_CUDA(cudaMemcpy(&v, last_in + (idx[j] - offset), 4, cudaMemcpyDeviceToHost));
        if (memcmp(&v, &keys[j], 4) != 0)
            fail = "rank " + std::to_string(rk.rank()) + ": key " + std::to_string(j) + " is not the key at its position";
        ++owned;
    }
    Counters<2> c;
    count_above_kernel<<<grid_for(n), kThreads, 0, rk.stream>>>(last_in, n, keys[k - 1], c.get(rk.stream));
    CHECK_CUDA(cudaGetLastError());
    const std::vector<unsigned long long> above = c.read(rk.stream);
    struct Counts {
        unsigned long long owned, gt, ge;
    };
    Counts sum{0, 0, 0};
    for (const Counts &x : rk.group->all(Counts{owned, above[0], above[1]})) {
        sum.owned += x.owned;
        sum.gt += x.gt;
        sum.ge += x.ge;
    }
    if (fail.empty() && rk.root()) {
        if (sum.owned != k) fail = std::to_string(sum.owned) + " of the k positions hold their key";
        else if (!(sum.gt < k && sum.ge >= k))
            fail = "not the k largest: " + std::to_string(sum.gt) + " keys above the k-th, " + std::to_string(sum.ge) +
                   " at or above it";
    }
    const std::string check = agree(rk, fail);

    Times one;
    if (rk.root()) {
        one = time_calls(rk, false, [&](int) { flush_l2(rk); }, [&](int i) {
            CHECK_GP(rk.ctx, gpuprim_topk(rk.ctx, b[i % copies], k, GPUPRIM_ORDER_DESCENDING, bk, bi));
            CHECK_CUDA(cudaStreamSynchronize(rk.stream));
        });
    }
    rk.group->barrier();
    b.push_back(bk);
    b.push_back(bi);
    release(rk, b);
    if (rk.root()) {
        Row r;
        r.mode = rk.mode;
        r.name = "top-k f32 k=1024";
        r.p = rk.size();
        r.n_per_gpu = n;
        r.global_n = global_n;
        r.dist = dist;
        r.one_n = n;
        r.one = one;
        r.check = check;
        r.note = "keys and u64 global positions";
        r.copies = copies;
        add_row(r, "topk");
    }
}

// ---------------------------------------------------------------------------
// Set-up and the run of one rank
// ---------------------------------------------------------------------------

std::string date_utc() {
    char b[64];
    const time_t t = time(nullptr);
    struct tm tm_utc;
    gmtime_r(&t, &tm_utc);
    strftime(b, sizeof b, "%Y-%m-%d %H:%M:%S UTC", &tm_utc);
    return b;
}

std::string nccl_version() {
    int v = 0;
    CHECK_NCCL(ncclGetVersion(&v));
    const int major = v >= 20900 ? v / 10000 : v / 1000;
    const int minor = v >= 20900 ? (v / 100) % 100 : (v / 100) % 10;
    char b[64];
    snprintf(b, sizeof b, "%d.%d.%d", major, minor, v % 100);
    return b;
}

// The context of rank rk on its device, with the communicator attached.
void open_rank(Rank &rk) {
    CHECK_CUDA(cudaSetDevice(rk.device));
    CHECK_CUDA(cudaStreamCreateWithFlags(&rk.stream, cudaStreamNonBlocking));
    CHECK_CUDA(cudaEventCreate(&rk.start));
    CHECK_CUDA(cudaEventCreate(&rk.stop));
    gpuprim_context_options_t options;
    gpuprim_context_options_init(&options);
    options.backend = GPUPRIM_BACKEND_CUDA;
    options.device_ordinal = rk.device;
    options.cuda_stream = rk.stream;
    char message[512] = "";
    if (gpuprim_context_create(&options, &rk.ctx, message, sizeof message) != GPUPRIM_SUCCESS) {
        fprintf(stderr, "[rank %d] no CUDA context on device %d: %s\n", rk.rank(), rk.device, message);
        exit(1);
    }
    CHECK_GP(rk.ctx, gpuprim_context_attach_communicator(rk.ctx, GPUPRIM_COMM_NCCL, static_cast<void *>(rk.comm)));
    int32_t r = -1, size = -1;
    CHECK_GP(rk.ctx, gpuprim_context_get_rank(rk.ctx, &r, &size));
    if (r != rk.rank() || size != rk.size()) {
        fprintf(stderr, "[rank %d] the context reports rank %d of %d, expected %d of %d\n", rk.rank(), r, size,
                rk.rank(), rk.size());
        exit(1);
    }
    int l2 = 0;
    CHECK_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, rk.device));
    rk.flush_bytes = std::max<uint64_t>(uint64_t(2) * uint64_t(l2), 1u << 20) / 16 * 16;
    rk.flush.reset(new Device(rk.flush_bytes));
    CHECK_CUDA(cudaMemsetAsync(rk.flush->p, 0, rk.flush_bytes, rk.stream));
    CHECK_CUDA(cudaStreamSynchronize(rk.stream));
}

void close_rank(Rank &rk) {
    CHECK_GP(rk.ctx, gpuprim_context_detach_communicator(rk.ctx));
    CHECK_GP(rk.ctx, gpuprim_context_destroy(rk.ctx));
    rk.flush.reset();
    CHECK_CUDA(cudaEventDestroy(rk.start));
    CHECK_CUDA(cudaEventDestroy(rk.stop));
    CHECK_CUDA(cudaStreamDestroy(rk.stream));
}

// Every rank: the header (rank 0 keeps it), the cases, the table. Returns
// whether every check passed.
bool run_rank(Rank &rk) {
    struct Name {
        char gpu[256];
        char host[64];
    } me{};
    cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, rk.device));
    snprintf(me.gpu, sizeof me.gpu, "%s", prop.name);
    gethostname(me.host, sizeof me.host - 1);
    const std::vector<Name> names = rk.group->all(me);
    if (rk.root()) {
        std::set<std::string> gpus, hosts;
        for (const Name &x : names) {
            gpus.insert(x.gpu);
            hosts.insert(x.host);
        }
        for (const std::string &g : gpus) header.gpu += (header.gpu.empty() ? "" : " + ") + g;
        header.hosts = std::to_string(hosts.size()) + " (" + *hosts.begin() + (hosts.size() > 1 ? ", ..." : "") + ")";
        header.p = rk.size();
        header.nccl = nccl_version();
        header.gpuprim = gpuprim_version_string();
        header.date = date_utc();
        int rt = 0, drv = 0;
        CHECK_CUDA(cudaRuntimeGetVersion(&rt));
        CHECK_CUDA(cudaDriverGetVersion(&drv));
        header.cuda = "CUDA runtime " + std::to_string(rt / 1000) + "." + std::to_string(rt % 1000 / 10) + ", driver " +
                      std::to_string(drv / 1000) + "." + std::to_string(drv % 1000 / 10);
        printf("distributed_bench: %s, p = %d (%s), NCCL %s, libgpuprim %s, %s, %s\n", header.gpu.c_str(), header.p,
               rk.mode == "mpi" ? "mpirun, one process per GPU" : "one process, a thread per GPU",
               header.nccl.c_str(), header.gpuprim.c_str(), header.cuda.c_str(), header.date.c_str());
        printf("keys per GPU 2^%d (top-k 2^%d), %d timed calls\n", opt.log2, opt.log2 - 2, opt.reps);
        fflush(stdout);
        if (!opt.csv_path.empty()) {
            csv = fopen(opt.csv_path.c_str(), "w");
            if (!csv) fprintf(stderr, "cannot write %s\n", opt.csv_path.c_str());
            else
                fprintf(csv, "mode,case,p,n_per_gpu,global_n,dist_wall_ms,dist_event_ms,global_gkeys_per_s,one_gpu_n,"
                             "one_gpu_wall_ms,one_gpu_event_ms,speedup,goal,goal_met,gbps_per_gpu,check,reps,"
                             "input_copies,gpu,nccl,gpuprim,date,note\n");
        }
    }
    for (const std::string &c : opt.cases) {
        if (c == "sort" || c == "pairs" || c == "skew_one" || c == "skew_equal") case_sort(rk, c);
        else if (c == "alltoall") case_alltoall(rk);
        else if (c == "reduce") case_reduce(rk);
        else if (c == "scan") case_scan(rk);
        else if (c == "topk") case_topk(rk);
    }
    exchange_estimate(rk);
    int failed = rk.root() ? int(any_failed) : 0;
    int total = 0;
    for (int f : rk.group->all(failed)) total += f;
    if (rk.root()) {
        print_table();
        if (csv) fclose(csv);
        if (total) printf("\nFAILED: a check failed (see the check column)\n");
    }
    return total == 0;
}

// The local rank on this node from the launcher's environment, before MPI
// is initialized; -1 when none says.
int local_rank_from_env() {
    for (const char *v : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "MV2_COMM_WORLD_LOCAL_RANK", "PMI_LOCAL_RANK",
                          "SLURM_LOCALID"})
        if (const char *s = getenv(v)) return atoi(s);
    return -1;
}

int main_mpi(int argc, char **argv) {
    int devices = 0;
    CHECK_CUDA(cudaGetDeviceCount(&devices));
    int local = local_rank_from_env();
    if (local >= 0 && local < devices) CHECK_CUDA(cudaSetDevice(local));  // before anything else
    MPI_Init(&argc, &argv);
    MpiGroup group;
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, group.rank, MPI_INFO_NULL, &node);
    int node_rank = 0;
    MPI_Comm_rank(node, &node_rank);
    MPI_Comm_free(&node);
    if (local < 0) local = node_rank;
    if (local >= devices) {
        fprintf(stderr, "[rank %d] local rank %d but %d visible GPU(s): one process per GPU\n", group.rank, local, devices);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    CHECK_CUDA(cudaSetDevice(local));

    Rank rk;
    rk.group = &group;
    rk.device = local;
    rk.mode = "mpi";
    ncclUniqueId id;
    if (group.rank == 0) CHECK_NCCL(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    CHECK_NCCL(ncclCommInitRank(&rk.comm, group.size, id, group.rank));
    open_rank(rk);
    const bool ok = run_rank(rk);
    close_rank(rk);
    CHECK_NCCL(ncclCommDestroy(rk.comm));
    MPI_Finalize();
    return ok ? 0 : 1;
}

int main_single_process() {
    int devices = 0;
    CHECK_CUDA(cudaGetDeviceCount(&devices));
    if (devices < 1) {
        fprintf(stderr, "no GPU\n");
        return 1;
    }
    std::vector<ncclComm_t> comms(devices);
    std::vector<int> list(devices);
    for (int d = 0; d < devices; ++d) list[d] = d;
    CHECK_NCCL(ncclCommInitAll(comms.data(), devices, list.data()));
    ThreadShared shared(devices);
    std::vector<std::unique_ptr<ThreadGroup>> groups;
    for (int d = 0; d < devices; ++d) groups.emplace_back(new ThreadGroup(&shared, d));
    std::vector<int> ok(devices, 0);
    std::vector<std::thread> threads;
    for (int d = 0; d < devices; ++d)
        threads.emplace_back([&, d] {
            CHECK_CUDA(cudaSetDevice(d));
            Rank rk;
            rk.group = groups[d].get();
            rk.device = d;
            rk.comm = comms[d];
            rk.mode = "1proc";
            open_rank(rk);
            ok[d] = run_rank(rk);
            close_rank(rk);
        });
    for (std::thread &t : threads) t.join();
    for (ncclComm_t c : comms) CHECK_NCCL(ncclCommDestroy(c));
    return std::all_of(ok.begin(), ok.end(), [](int x) { return x != 0; }) ? 0 : 1;
}

int usage() {
    fprintf(stderr,
            "usage: mpirun -np P -x NCCL_NVLS_ENABLE=0 distributed_bench [--log2 N] [--reps N] [--cases LIST] [--csv FILE]\n"
            "       distributed_bench --single-process [--log2 N] [--reps N] [--cases LIST] [--csv FILE]\n"
            "  --log2 N      keys per GPU 2^N (12..31, default 28; top-k 2^(N-2))\n"
            "  --reps N      timed calls (default 7), after 2 warm-up calls\n"
            "  --cases LIST  comma list of sort,pairs,alltoall,reduce,scan,topk,skew_one,skew_equal\n"
            "                (default all; with --single-process: sort)\n"
            "  --csv FILE    the rows as CSV too (rank 0 writes it)\n"
            "  --single-process  one process drives every visible GPU (ncclCommInitAll, a thread per GPU)\n");
    return 2;
}

}  // namespace

int main(int argc, char **argv) {
    // NVLink multicast (NVLS) off, before any NCCL communicator exists.
    setenv("NCCL_NVLS_ENABLE", "0", 0);
    std::string cases;
    for (int i = 1; i < argc; ++i) {
        const bool has_value = i + 1 < argc;
        if (!strcmp(argv[i], "--log2") && has_value) opt.log2 = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && has_value) opt.reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cases") && has_value) cases = argv[++i];
        else if (!strcmp(argv[i], "--csv") && has_value) opt.csv_path = argv[++i];
        else if (!strcmp(argv[i], "--single-process")) opt.single_process = true;
        else return usage();
    }
    if (opt.log2 < 12 || opt.log2 > 31 || opt.reps < 1) return usage();
    if (cases.empty()) cases = opt.single_process ? "sort" : "sort,pairs,alltoall,reduce,scan,topk,skew_one,skew_equal";
    for (size_t pos = 0; pos <= cases.size();) {
        const size_t comma = std::min(cases.find(',', pos), cases.size());
        const std::string c = cases.substr(pos, comma - pos);
        pos = comma + 1;
        if (c.empty()) continue;
        if (std::find(std::begin(kAllCases), std::end(kAllCases), c) == std::end(kAllCases)) {
            fprintf(stderr, "unknown case '%s'\n", c.c_str());
            return usage();
        }
        opt.cases.push_back(c);
    }
    return opt.single_process ? main_single_process() : main_mpi(argc, argv);
}
