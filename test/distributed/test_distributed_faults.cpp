// SPDX-License-Identifier: Apache-2.0
// Host allocation failure on one rank of a distributed call (CPU contexts,
// the MPI engine), run under mpirun like test_distributed: each call is
// repeated with one rank's k-th host allocation (operator new, replaced by
// ../reliability/failing_new.h) made to fail, for k = 0, 1, ... until the call runs through without
// meeting it, and each rank in turn is the one that fails. Every rank must
// return (a rank left waiting in a collective for one that gave up would
// hang: alarm() turns that into a failure), with the same status on every
// rank: OUT_OF_MEMORY with every output as it was, or SUCCESS with the
// result an undisturbed run gives.
#include <gpuprim/gpuprim.h>

#include <mpi.h>

#include <execinfo.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <string>
#include <vector>

// Host allocations: operator new fails the armed one (failing_new.h).
#include "../reliability/failing_new.h"

namespace {

int g_rank = 0, g_ranks = 1;
MPI_Comm g_world = MPI_COMM_WORLD;
gpuprim_context_t g_ctx = nullptr;
long g_failures = 0;

#define FAIL(...)                                                        \
    do {                                                                 \
        std::fprintf(stderr, "rank %d: %s:%d: ", g_rank, __FILE__, __LINE__); \
        std::fprintf(stderr, __VA_ARGS__);                               \
        std::fprintf(stderr, "\n");                                      \
        ++g_failures;                                                    \
    } while (0)

#define REQUIRE_OK(call)                                                                        \
    do {                                                                                        \
        gpuprim_status_t status_ = (call);                                                      \
        if (status_ != GPUPRIM_SUCCESS) {                                                       \
            std::fprintf(stderr, "rank %d: %s:%d: %s returned %d\n", g_rank, __FILE__, __LINE__, #call, \
                         static_cast<int>(status_));                                            \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                        \
        }                                                                                       \
    } while (0)

// One rank's buffer of n elements of dtype (4 or 8 bytes) from host words.
template <typename T>
gpuprim_buffer_t buffer_of(gpuprim_dtype_t dtype, const std::vector<T> &host) {
    gpuprim_buffer_t b = nullptr;
    REQUIRE_OK(gpuprim_buffer_create(g_ctx, dtype, host.size(), &b));
    if (!host.empty()) REQUIRE_OK(gpuprim_buffer_upload(g_ctx, b, 0, host.data(), host.size()));
    return b;
}
template <typename T>
std::vector<T> contents(gpuprim_buffer_t b, size_t n) {
    std::vector<T> host(n);
    if (n) REQUIRE_OK(gpuprim_buffer_download(g_ctx, b, 0, host.data(), n));
    return host;
}

uint64_t g_rng = 0;
uint64_t next_random() {  // splitmix64, the same sequence on every rank
    uint64_t z = (g_rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// A call under test: run() makes the call on this rank's buffers and
// returns its status; outputs() reads every output back (bytes).
struct Scenario {
    const char *name;
    std::function<gpuprim_status_t()> run;
    std::function<std::vector<unsigned char>()> outputs;
};

template <typename T>
std::vector<unsigned char> bytes_of(const std::vector<T> &v) {
    std::vector<unsigned char> out(v.size() * sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), v.data(), out.size());
    return out;
}

// Two outputs' bytes, one after the other.
template <typename A, typename B>
std::vector<unsigned char> bytes_of(const std::vector<A> &a, const std::vector<B> &b) {
    std::vector<unsigned char> all = bytes_of(a);
    const std::vector<unsigned char> tail = bytes_of(b);
    all.insert(all.end(), tail.begin(), tail.end());
    return all;
}

// Runs s with rank `failing`'s k-th host allocation failing, k = 0, 1, ...
void sweep(const Scenario &s, int failing) {
    // The undisturbed result: what every attempt that succeeds must give.
    const gpuprim_status_t clean = s.run();
    if (clean != GPUPRIM_SUCCESS) {
        FAIL("%s: the undisturbed call returned %d", s.name, static_cast<int>(clean));
        return;
    }
    const std::vector<unsigned char> expected = s.outputs();
    long attempts = 0;
    for (long k = 0;; ++k) {
        ++attempts;
        // A failed attempt must leave the outputs as the attempt found them.
        const std::vector<unsigned char> entering = s.outputs();
        if (g_rank == failing) failing_new::arm(k);
        const gpuprim_status_t status = s.run();
        const bool injected_here = failing_new::disarm();
        const char *verbose = std::getenv("GPUPRIM_TEST_VERBOSE");
        if (verbose && *verbose)
            std::fprintf(stderr, "rank %d: %s, rank %d's allocation %ld failing: %d\n", g_rank, s.name, failing, k,
                         static_cast<int>(status));
        int injected = injected_here ? 1 : 0, any_injected = 0;
        MPI_Allreduce(&injected, &any_injected, 1, MPI_INT, MPI_MAX, g_world);
        std::vector<int> statuses(static_cast<size_t>(g_ranks));
        int mine = static_cast<int>(status);
        MPI_Allgather(&mine, 1, MPI_INT, statuses.data(), 1, MPI_INT, g_world);
        for (int r = 0; r < g_ranks; ++r)
            if (statuses[size_t(r)] != mine)
                FAIL("%s, rank %d's allocation %ld failing: rank %d returned %d, this rank %d", s.name, failing, k, r,
                     statuses[size_t(r)], mine);
        if (status == GPUPRIM_SUCCESS) {
            if (s.outputs() != expected)
                FAIL("%s, rank %d's allocation %ld failing: the call succeeded with another result", s.name, failing,
                     k);
        } else if (status == GPUPRIM_ERROR_OUT_OF_MEMORY) {
            if (s.outputs() != entering)
                FAIL("%s, rank %d's allocation %ld failing: OUT_OF_MEMORY changed an output", s.name, failing, k);
        } else {
            FAIL("%s, rank %d's allocation %ld failing: returned %d (OUT_OF_MEMORY or SUCCESS expected)", s.name,
                 failing, k, mine);
        }
        if (!any_injected) break;
        if (k > 100000) {
            FAIL("%s: more than 100000 allocations", s.name);
            break;
        }
    }
    if (g_rank == 0)
        std::printf("  %-44s failing on rank %d: %ld attempts\n", s.name, failing, attempts);
}

}  // namespace

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_ranks);
    const char *wanted = std::getenv("GPUPRIM_BACKEND");
    if (wanted && (std::strcmp(wanted, "cuda") == 0 || std::strcmp(wanted, "CUDA") == 0)) {
        if (g_rank == 0) std::printf("test_distributed_faults: CPU contexts only (MPI engine): skipped\n");
        MPI_Finalize();
        return 77;
    }
    // A rank left waiting for one that gave up never returns: fail instead.
    alarm(240);
    if (std::getenv("GPUPRIM_TEST_TRACE"))
        failing_new::on_failure = [] {
            void *frames[32];
            backtrace_symbols_fd(frames, backtrace(frames, 32), 2);
        };

    gpuprim_context_options_t options;
    gpuprim_context_options_init(&options);
    options.backend = GPUPRIM_BACKEND_CPU;
    char message[512] = "";
    if (gpuprim_context_create(&options, &g_ctx, message, sizeof message) != GPUPRIM_SUCCESS) {
        std::fprintf(stderr, "test_distributed_faults: gpuprim_context_create failed: %s\n", message);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    REQUIRE_OK(gpuprim_context_attach_communicator(g_ctx, GPUPRIM_COMM_MPI, &g_world));
    g_rng = 20261203;
    if (g_rank == 0) std::printf("test_distributed_faults: libgpuprim %s, %d ranks\n", gpuprim_version_string(), g_ranks);

    // This rank's data: random keys (so the splitters and the exchange
    // run), 300 + 50 * rank of them.
    const size_t n = 300 + 50 * size_t(g_rank);
    std::vector<uint32_t> keys(n), values(n);
    std::vector<float> floats(n);
    std::vector<int32_t> ints(n);
    for (int r = 0; r < g_ranks; ++r) {
        const size_t count = 300 + 50 * size_t(r);
        for (size_t i = 0; i < count; ++i) {
            const uint64_t x = next_random();
            if (r != g_rank) continue;
            keys[i] = uint32_t(x);
            values[i] = uint32_t(x >> 32);
            floats[i] = float(int32_t(x % 2001) - 1000) / 8.0f;
            ints[i] = int32_t(x % 1000) - 500;
        }
    }
    const std::vector<uint32_t> poison32(n, 0xDEADBEEFu);
    const std::vector<uint64_t> poison64(n, 0xDEADBEEFDEADBEEFull);
    gpuprim_buffer_t kin = buffer_of(GPUPRIM_DTYPE_U32, keys), vin = buffer_of(GPUPRIM_DTYPE_U32, values);
    gpuprim_buffer_t kout = buffer_of(GPUPRIM_DTYPE_U32, poison32), vout = buffer_of(GPUPRIM_DTYPE_U32, poison32);
    gpuprim_buffer_t indices = buffer_of(GPUPRIM_DTYPE_U64, poison64);
    gpuprim_buffer_t fin = buffer_of(GPUPRIM_DTYPE_F32, floats), iin = buffer_of(GPUPRIM_DTYPE_I32, ints);
    gpuprim_buffer_t iout = buffer_of(GPUPRIM_DTYPE_I32, std::vector<int32_t>(n, -7));
    const uint64_t k = 40;
    gpuprim_buffer_t topk_keys = buffer_of(GPUPRIM_DTYPE_U32, std::vector<uint32_t>(k, 0xDEADBEEFu));
    gpuprim_buffer_t topk_indices = buffer_of(GPUPRIM_DTYPE_U64, std::vector<uint64_t>(k, 0xDEADBEEFull));
    float sum = -1.0f;
    // Other widths take other local paths (the CPU sort's narrow-key and
    // packed-pair paths): u16 keys, u64 keys with u16 values, f64 top-k.
    std::vector<uint16_t> narrow(n);
    std::vector<uint64_t> wide(n);
    std::vector<double> doubles(n);
    for (size_t i = 0; i < n; ++i) {
        narrow[i] = uint16_t(keys[i] % 97);  // few distinct keys: equal keys across ranks
        wide[i] = (uint64_t(keys[i]) << 32) | values[i];
        doubles[i] = double(floats[i]);
    }
    gpuprim_buffer_t nin = buffer_of(GPUPRIM_DTYPE_U16, narrow);
    gpuprim_buffer_t nout = buffer_of(GPUPRIM_DTYPE_U16, std::vector<uint16_t>(n, 0xBEEF));
    gpuprim_buffer_t win = buffer_of(GPUPRIM_DTYPE_U64, wide), wout = buffer_of(GPUPRIM_DTYPE_U64, poison64);
    gpuprim_buffer_t wvalues_out = buffer_of(GPUPRIM_DTYPE_U16, std::vector<uint16_t>(n, 0xBEEF));
    gpuprim_buffer_t din = buffer_of(GPUPRIM_DTYPE_F64, doubles);
    gpuprim_buffer_t dindices = buffer_of(GPUPRIM_DTYPE_I64, std::vector<int64_t>(k, -1));

    gpuprim_sort_options_t sort_options;
    gpuprim_sort_options_init(&sort_options);
    gpuprim_sort_options_t descending_bits;
    gpuprim_sort_options_init(&descending_bits);
    descending_bits.order = GPUPRIM_ORDER_DESCENDING;
    descending_bits.begin_bit = 4;
    descending_bits.end_bit = 12;
    const std::vector<Scenario> scenarios = {
        {"sort keys u32", [&] { return gpuprim_distributed_sort(g_ctx, kin, nullptr, kout, nullptr, &sort_options); },
         [&] { return bytes_of(contents<uint32_t>(kout, n)); }},
        {"sort pairs u32/u32",
         [&] { return gpuprim_distributed_sort(g_ctx, kin, vin, kout, vout, &sort_options); },
         [&] { return bytes_of(contents<uint32_t>(kout, n), contents<uint32_t>(vout, n)); }},
        {"argsort u32", [&] { return gpuprim_distributed_argsort(g_ctx, kin, nullptr, indices, &sort_options); },
         [&] { return bytes_of(contents<uint64_t>(indices, n)); }},
        {"top-k u32", [&] { return gpuprim_distributed_topk(g_ctx, kin, k, GPUPRIM_ORDER_DESCENDING, topk_keys, topk_indices); },
         [&] { return bytes_of(contents<uint32_t>(topk_keys, k), contents<uint64_t>(topk_indices, k)); }},
        {"reduce f32 sum", [&] { return gpuprim_distributed_reduce(g_ctx, GPUPRIM_OP_SUM, fin, &sum); },
         [&] { return bytes_of(std::vector<float>{sum}); }},
        {"sort keys u16", [&] { return gpuprim_distributed_sort(g_ctx, nin, nullptr, nout, nullptr, &sort_options); },
         [&] { return bytes_of(contents<uint16_t>(nout, n)); }},
        {"sort pairs u64/u16 descending bits [4, 12)",
         [&] { return gpuprim_distributed_sort(g_ctx, win, nin, wout, wvalues_out, &descending_bits); },
         [&] { return bytes_of(contents<uint64_t>(wout, n), contents<uint16_t>(wvalues_out, n)); }},
        {"argsort u16", [&] { return gpuprim_distributed_argsort(g_ctx, nin, nullptr, indices, &sort_options); },
         [&] { return bytes_of(contents<uint64_t>(indices, n)); }},
        {"top-k f64 ascending, indices only",
         [&] { return gpuprim_distributed_topk(g_ctx, din, k, GPUPRIM_ORDER_ASCENDING, nullptr, dindices); },
         [&] { return bytes_of(contents<int64_t>(dindices, k)); }},
        {"scan i32 inclusive",
         [&] { return gpuprim_distributed_scan(g_ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, iin, iout); },
         [&] { return bytes_of(contents<int32_t>(iout, n)); }},
    };
    for (const Scenario &s : scenarios)
        for (int failing = 0; failing < g_ranks; ++failing) sweep(s, failing);

    for (gpuprim_buffer_t b : {kin, vin, kout, vout, indices, fin, iin, iout, topk_keys, topk_indices, nin, nout, win,
                               wout, wvalues_out, din, dindices})
        REQUIRE_OK(gpuprim_buffer_destroy(g_ctx, b));
    REQUIRE_OK(gpuprim_context_destroy(g_ctx));
    long all_failures = 0;
    MPI_Allreduce(&g_failures, &all_failures, 1, MPI_LONG, MPI_SUM, g_world);
    if (g_rank == 0)
        std::printf("test_distributed_faults: %s (%ld failures)\n", all_failures ? "FAILED" : "passed", all_failures);
    MPI_Finalize();
    return all_failures ? 1 : 0;
}
