// SPDX-License-Identifier: Apache-2.0
// embedding_bench (issue 39): what a host that embeds libgpuprim sees.
// 1. Ten small calls (2^10 elements) captured into one CUDA graph and
//    replayed, against the same ten calls issued one by one: both as one
//    sequence between events (what a caller waits) and 100 sequences between
//    events, divided (throughput). The inputs stay in L2 on both sides: at
//    2^10 every call is bound by launches, not memory.
// 2. A small segmented call on CSR offsets (4 segments of 8) with its
//    offsets check deferred, against the same call on uniform rows and on
//    offsets in waiting mode: one call between events (median; the inputs
//    stay in L2, the calls are bound by launches) and 100 calls, divided.
// 3. Device memory outside the host's allocator: the free memory
//    (cudaMemGetInfo) before a context with a pool allocator is made and
//    after a mixed workload on it, less what the pool handed out; the same
//    workload first runs on an ordinary context, so the CUDA modules it
//    loads are not counted.
#include "bench_util.h"

#include <cstdio>
#include <vector>

using namespace gpuprim_bench;

namespace {

constexpr uint64_t kSmall = 1024;

struct Pool {
    char *base = nullptr;
    uint64_t size = 0, used = 0, live = 0, peak = 0;
    long blocks = 0;
    std::vector<std::pair<void *, uint64_t>> live_blocks;
};

int pool_allocate(void *user, uint64_t bytes, void *, void **memory) {
    Pool &pool = *static_cast<Pool *>(user);
    const uint64_t start = (pool.used + 255) & ~uint64_t(255);
    if (bytes > pool.size - start) return 1;
    pool.used = start + bytes;
    pool.live += bytes;
    pool.peak = std::max(pool.peak, pool.live);
    pool.blocks++;
    *memory = pool.base + start;
    return 0;
}

void pool_deallocate(void *user, void *, uint64_t bytes, void *) {
    Pool &pool = *static_cast<Pool *>(user);
    pool.live -= bytes;
}

// The ten small calls, on buffers made once.
struct TenCalls {
    gpuprim_context_t ctx;
    gpuprim_buffer_t keys, values, keys_out, values_out, scanned, sum, top, sorted, queries, positions, counts,
        kept, kept_count, runs, runs_count, merged;
    float lower = 0.0f, upper = 1.0f;
    uint32_t threshold = 1u << 31;

    explicit TenCalls(gpuprim_context_t c) : ctx(c) {
        std::vector<uint32_t> host(kSmall);
        uint64_t state = 12345;
        for (auto &x : host) x = uint32_t((state = state * 6364136223846793005ull + 1442695040888963407ull) >> 33);
        auto make = [&](gpuprim_dtype_t d, uint64_t n) {
            gpuprim_buffer_t b;
            CHECK_GP(ctx, gpuprim_buffer_create(ctx, d, n, &b));
            return b;
        };
        keys = make(GPUPRIM_DTYPE_U32, kSmall);
        values = make(GPUPRIM_DTYPE_U32, kSmall);
        CHECK_GP(ctx, gpuprim_buffer_upload(ctx, keys, 0, host.data(), kSmall));
        CHECK_GP(ctx, gpuprim_buffer_upload(ctx, values, 0, host.data(), kSmall));
        keys_out = make(GPUPRIM_DTYPE_U32, kSmall);
        values_out = make(GPUPRIM_DTYPE_U32, kSmall);
        scanned = make(GPUPRIM_DTYPE_U32, kSmall);
        sum = make(GPUPRIM_DTYPE_U32, 1);
        top = make(GPUPRIM_DTYPE_U32, 16);
        sorted = make(GPUPRIM_DTYPE_U32, kSmall);
        queries = make(GPUPRIM_DTYPE_U32, kSmall);
        CHECK_GP(ctx, gpuprim_buffer_upload(ctx, queries, 0, host.data(), kSmall));
        std::sort(host.begin(), host.end());
        CHECK_GP(ctx, gpuprim_buffer_upload(ctx, sorted, 0, host.data(), kSmall));
        positions = make(GPUPRIM_DTYPE_I64, kSmall);
        counts = make(GPUPRIM_DTYPE_U32, 256);
        kept = make(GPUPRIM_DTYPE_U32, kSmall);
        kept_count = make(GPUPRIM_DTYPE_U64, 1);
        runs = make(GPUPRIM_DTYPE_U32, kSmall);
        runs_count = make(GPUPRIM_DTYPE_U64, 1);
        merged = make(GPUPRIM_DTYPE_U32, 2 * kSmall);
    }

    void run() {
        gpuprim_predicate_t keep;
        memset(&keep, 0, sizeof keep);
        keep.kind = GPUPRIM_KEEP_LESS;
        keep.scalar = &threshold;
        const uint32_t low = 0, high = 1u << 24;
        CHECK_GP(ctx, gpuprim_sort(ctx, keys, nullptr, keys_out, nullptr, GPUPRIM_ORDER_ASCENDING));
        CHECK_GP(ctx, gpuprim_sort(ctx, keys, values, keys_out, values_out, GPUPRIM_ORDER_DESCENDING));
        CHECK_GP(ctx, gpuprim_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, keys, scanned));
        CHECK_GP(ctx, gpuprim_reduce_to_buffer(ctx, GPUPRIM_OP_MAX, keys, sum));
        CHECK_GP(ctx, gpuprim_topk(ctx, keys, 16, GPUPRIM_ORDER_DESCENDING, top, nullptr));
        CHECK_GP(ctx, gpuprim_searchsorted(ctx, sorted, queries, GPUPRIM_SIDE_LEFT, GPUPRIM_ORDER_ASCENDING,
                                           positions));
        CHECK_GP(ctx, gpuprim_histogram_even(ctx, keys, &low, &high, counts));
        CHECK_GP(ctx, gpuprim_select(ctx, keys, nullptr, &keep, kept, nullptr, nullptr, nullptr, kept_count));
        CHECK_GP(ctx, gpuprim_unique(ctx, sorted, nullptr, runs, nullptr, nullptr, runs_count));
        CHECK_GP(ctx, gpuprim_merge(ctx, sorted, nullptr, keys_out, nullptr, merged, nullptr,
                                    GPUPRIM_ORDER_ASCENDING));
    }
};

double median_us(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

void graph_against_calls(cudaStream_t stream, gpuprim_context_t ctx) {
    TenCalls calls(ctx);
    for (int w = 0; w < 3; ++w) calls.run();  // warm: the workspace grows, modules load
    CHECK_GP(ctx, gpuprim_context_reserve_workspace(ctx, 0, 1));
    CHECK_CUDA(cudaStreamSynchronize(stream));

    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    calls.run();
    CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
    CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    size_t nodes = 0;
    CHECK_CUDA(cudaGraphGetNodes(graph, nullptr, &nodes));
    for (int w = 0; w < 3; ++w) CHECK_CUDA(cudaGraphLaunch(exec, stream));
    if (profile_one_call()) {
        // GPUPRIM_BENCH_PROFILE=1 under `ncu --profile-from-start off`: one
        // sequence of the ten calls, kernel by kernel (what the graph replays).
        CHECK_CUDA(cudaStreamSynchronize(stream));
        CHECK_CUDA(cudaProfilerStart());
        calls.run();
        CHECK_CUDA(cudaStreamSynchronize(stream));
        CHECK_CUDA(cudaProfilerStop());
    }

    cudaEvent_t start, stop;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    auto time = [&](int repeats, int per_round, const std::function<void()> &fn) {
        std::vector<double> samples;
        for (int r = 0; r < repeats; ++r) {
            CHECK_CUDA(cudaEventRecord(start, stream));
            for (int i = 0; i < per_round; ++i) fn();
            CHECK_CUDA(cudaEventRecord(stop, stream));
            CHECK_CUDA(cudaEventSynchronize(stop));
            float ms = 0;
            CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
            samples.push_back(ms * 1000.0 / per_round);
        }
        return median_us(samples);
    };
    const double issued_one = time(51, 1, [&] { calls.run(); });
    const double graph_one = time(51, 1, [&] { CHECK_CUDA(cudaGraphLaunch(exec, stream)); });
    const double issued_batched = time(7, 100, [&] { calls.run(); });
    const double graph_batched = time(7, 100, [&] { CHECK_CUDA(cudaGraphLaunch(exec, stream)); });
    printf("ten calls at 2^10 (sort, sort pairs, scan, max to a buffer, top-16, searchsorted, histogram, "
           "select, unique, merge); graph of %zu nodes\n", nodes);
    printf("  %-34s %10s %10s %8s\n", "", "issued", "graph", "issued/graph");
    printf("  %-34s %10.2f %10.2f %8.2f\n", "one sequence between events (us)", issued_one, graph_one,
           issued_one / graph_one);
    printf("  %-34s %10.2f %10.2f %8.2f\n", "100 sequences, per sequence (us)", issued_batched, graph_batched,
           issued_batched / graph_batched);
    CHECK_CUDA(cudaEventDestroy(start));
    CHECK_CUDA(cudaEventDestroy(stop));
    CHECK_CUDA(cudaGraphExecDestroy(exec));
    CHECK_CUDA(cudaGraphDestroy(graph));
    CHECK_GP(ctx, gpuprim_context_reserve_workspace(ctx, 0, 0));
}

// A mixed workload at 2^20 on ctx: buffers, sorts, segmented calls on CSR
// offsets, top-k, group-by, select, histogram, scan, reduce to the host.
void mixed_workload(gpuprim_context_t ctx) {
    constexpr uint64_t n = uint64_t(1) << 20, rows = 1000;
    std::vector<uint32_t> host(n);
    uint64_t state = 99;
    for (auto &x : host) x = uint32_t((state = state * 6364136223846793005ull + 1442695040888963407ull) >> 40);
    std::vector<int64_t> offsets(rows + 1);
    for (uint64_t r = 0; r <= rows; ++r) offsets[r] = int64_t(n * r / rows);
    auto make = [&](gpuprim_dtype_t d, uint64_t count) {
        gpuprim_buffer_t b;
        CHECK_GP(ctx, gpuprim_buffer_create(ctx, d, count, &b));
        return b;
    };
    gpuprim_buffer_t keys = make(GPUPRIM_DTYPE_U32, n), values = make(GPUPRIM_DTYPE_U32, n);
    gpuprim_buffer_t out = make(GPUPRIM_DTYPE_U32, n), values_out = make(GPUPRIM_DTYPE_U32, n);
    gpuprim_buffer_t csr = make(GPUPRIM_DTYPE_I64, rows + 1), top = make(GPUPRIM_DTYPE_U32, rows * 32);
    gpuprim_buffer_t indices = make(GPUPRIM_DTYPE_I64, n), sums = make(GPUPRIM_DTYPE_U32, rows);
    gpuprim_buffer_t group_keys = make(GPUPRIM_DTYPE_U32, n), group_counts = make(GPUPRIM_DTYPE_U64, n);
    gpuprim_buffer_t counts = make(GPUPRIM_DTYPE_U32, 1024), flat_top = make(GPUPRIM_DTYPE_U32, 5000);
    CHECK_GP(ctx, gpuprim_buffer_upload(ctx, keys, 0, host.data(), n));
    CHECK_GP(ctx, gpuprim_buffer_upload(ctx, values, 0, host.data(), n));
    CHECK_GP(ctx, gpuprim_buffer_upload(ctx, csr, 0, offsets.data(), rows + 1));
    gpuprim_segments_t segments;
    gpuprim_segments_init_offsets(&segments, csr);
    CHECK_GP(ctx, gpuprim_sort(ctx, keys, values, out, values_out, GPUPRIM_ORDER_ASCENDING));
    CHECK_GP(ctx, gpuprim_argsort(ctx, keys, nullptr, indices, nullptr));
    CHECK_GP(ctx, gpuprim_segmented_sort(ctx, &segments, keys, values, out, values_out, nullptr));
    CHECK_GP(ctx, gpuprim_segmented_reduce(ctx, GPUPRIM_OP_SUM, &segments, keys, sums));
    CHECK_GP(ctx, gpuprim_segmented_topk(ctx, &segments, keys, 32, GPUPRIM_ORDER_DESCENDING, top, nullptr));
    CHECK_GP(ctx, gpuprim_topk(ctx, keys, 5000, GPUPRIM_ORDER_DESCENDING, flat_top, nullptr));
    uint64_t groups = 0, kept = 0;
    CHECK_GP(ctx, gpuprim_group_by(ctx, keys, values, GPUPRIM_OP_SUM, group_keys, group_counts, values_out, nullptr,
                                   &groups, nullptr));
    const uint32_t below = 1000;
    gpuprim_predicate_t keep;
    memset(&keep, 0, sizeof keep);
    keep.kind = GPUPRIM_KEEP_LESS;
    keep.scalar = &below;
    CHECK_GP(ctx, gpuprim_select(ctx, keys, values, &keep, out, values_out, indices, &kept, nullptr));
    const uint32_t low = 0, high = 1u << 24;
    CHECK_GP(ctx, gpuprim_histogram_even(ctx, keys, &low, &high, counts));
    CHECK_GP(ctx, gpuprim_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_EXCLUSIVE, keys, out));
    uint32_t largest = 0;
    CHECK_GP(ctx, gpuprim_reduce(ctx, GPUPRIM_OP_MAX, keys, &largest));
    CHECK_GP(ctx, gpuprim_context_synchronize(ctx));
    for (gpuprim_buffer_t b : {keys, values, out, values_out, csr, top, indices, sums, group_keys, group_counts,
                               counts, flat_top})
        CHECK_GP(ctx, gpuprim_buffer_destroy(ctx, b));
}

void memory_outside_allocator(cudaStream_t stream) {
    {
        gpuprim_context_t warm = cuda_context(stream);
        mixed_workload(warm);
        gpuprim_context_destroy(warm);
    }
    Pool pool;
    pool.size = uint64_t(1) << 30;
    CHECK_CUDA(cudaMalloc(reinterpret_cast<void **>(&pool.base), pool.size));
    CHECK_CUDA(cudaDeviceSynchronize());
    size_t free_before = 0, free_after = 0, free_destroyed = 0, total = 0;
    CHECK_CUDA(cudaMemGetInfo(&free_before, &total));
    gpuprim_context_options_t options;
    gpuprim_context_options_init(&options);
    options.backend = GPUPRIM_BACKEND_CUDA;
    options.cuda_stream = stream;
    options.allocate = pool_allocate;
    options.deallocate = pool_deallocate;
    options.allocator_user = &pool;
    gpuprim_context_t ctx = nullptr;
    char message[512] = "";
    if (gpuprim_context_create(&options, &ctx, message, sizeof message) != GPUPRIM_SUCCESS) {
        fprintf(stderr, "context with a pool: %s\n", message);
        exit(1);
    }
    mixed_workload(ctx);
    uint64_t workspace = 0;
    CHECK_GP(ctx, gpuprim_context_get_workspace_size(ctx, &workspace));
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaMemGetInfo(&free_after, &total));
    const uint64_t live_before_destroy = pool.live;
    gpuprim_context_destroy(ctx);
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaMemGetInfo(&free_destroyed, &total));
    printf("mixed workload at 2^20 (buffers, sort, argsort, segmented sort/reduce/top-k on CSR offsets, top-k, "
           "group-by, select, histogram, scan, reduce) on a context with a pool allocator:\n");
    printf("  blocks from the pool %ld, peak %.1f MB, held at the end %.1f MB (workspace %.1f MB), after destroy "
           "%llu bytes\n",
           pool.blocks, pool.peak / 1e6, live_before_destroy / 1e6, workspace / 1e6,
           (unsigned long long)pool.live);
    printf("  device memory outside the pool: %lld bytes after the workload, %lld after destroy "
           "(cudaMemGetInfo)\n",
           (long long)free_before - (long long)free_after, (long long)free_before - (long long)free_destroyed);
    CHECK_CUDA(cudaFree(pool.base));
}

// Segmented sort, reduce, scan and top-4 of 4 x 8 floats: rows, offsets
// waited for, offsets deferred.
void small_offsets_calls(cudaStream_t stream, gpuprim_context_t ctx) {
    constexpr uint64_t kRows = 4, kLength = 8, kCount = kRows * kLength;
    std::vector<float> host(kCount);
    for (uint64_t i = 0; i < kCount; ++i) host[i] = float((i * 7919) % 101) - 50.0f;
    const uint32_t offsets_host[kRows + 1] = {0, 8, 16, 24, 32};
    gpuprim_buffer_t keys, out, sums, top, offsets;
    CHECK_GP(ctx, gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_F32, kCount, &keys));
    CHECK_GP(ctx, gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_F32, kCount, &out));
    CHECK_GP(ctx, gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_F32, kRows, &sums));
    CHECK_GP(ctx, gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_F32, kRows * 4, &top));
    CHECK_GP(ctx, gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U32, kRows + 1, &offsets));
    CHECK_GP(ctx, gpuprim_buffer_upload(ctx, keys, 0, host.data(), kCount));
    CHECK_GP(ctx, gpuprim_buffer_upload(ctx, offsets, 0, offsets_host, kRows + 1));
    gpuprim_segments_t rows, csr;
    gpuprim_segments_init_rows(&rows, kRows, kLength);
    gpuprim_segments_init_offsets(&csr, offsets);
    csr.max_segment_length = kLength;
    struct Call {
        const char *name;
        std::function<void(const gpuprim_segments_t *)> run;
    };
    const Call calls[] = {
        {"segmented sort", [&](const gpuprim_segments_t *seg) {
             CHECK_GP(ctx, gpuprim_segmented_sort(ctx, seg, keys, nullptr, out, nullptr, nullptr));
         }},
        {"segmented reduce (sum)", [&](const gpuprim_segments_t *seg) {
             CHECK_GP(ctx, gpuprim_segmented_reduce(ctx, GPUPRIM_OP_SUM, seg, keys, sums));
         }},
        {"segmented scan (inclusive sum)", [&](const gpuprim_segments_t *seg) {
             CHECK_GP(ctx, gpuprim_segmented_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, seg, keys, out));
         }},
        {"segmented top-4", [&](const gpuprim_segments_t *seg) {
             CHECK_GP(ctx, gpuprim_segmented_topk(ctx, seg, keys, 4, GPUPRIM_ORDER_DESCENDING, top, nullptr));
         }},
    };
    printf("a small segmented call, 4 x 8 f32 (one call between events, median of 51 | 100 calls, divided; us)\n");
    printf("  %-32s %14s %14s %14s %9s\n", "", "rows", "offsets, wait", "deferred", "def/rows");
    for (const Call &call : calls) {
        CHECK_GP(ctx, gpuprim_context_set_offsets_check(ctx, GPUPRIM_OFFSETS_CHECK_WAIT));
        const Timing on_rows = time_call(stream, 51, [&](int) { call.run(&rows); }, 1, true);
        const Timing waited = time_call(stream, 51, [&](int) { call.run(&csr); }, 1, true);
        CHECK_GP(ctx, gpuprim_context_set_offsets_check(ctx, GPUPRIM_OFFSETS_CHECK_DEFERRED));
        const Timing deferred = time_call(stream, 51, [&](int) { call.run(&csr); }, 1, true);
        CHECK_GP(ctx, gpuprim_context_check_deferred(ctx));
        printf("  %-32s %6.2f | %5.2f %6.2f | %5.2f %6.2f | %5.2f %9.2f\n", call.name, on_rows.single_us,
               on_rows.batched_us, waited.single_us, waited.batched_us, deferred.single_us, deferred.batched_us,
               deferred.single_us / on_rows.single_us);
    }
    CHECK_GP(ctx, gpuprim_context_set_offsets_check(ctx, GPUPRIM_OFFSETS_CHECK_WAIT));
    for (gpuprim_buffer_t b : {keys, out, sums, top, offsets}) CHECK_GP(ctx, gpuprim_buffer_destroy(ctx, b));
}

}  // namespace

int main() {
    cudaStream_t stream;
    CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    gpuprim_context_t ctx = cuda_context(stream);
    if (!ctx) {
        fprintf(stderr, "embedding_bench: no CUDA context\n");
        return 77;
    }
    cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    printf("embedding_bench: %s, libgpuprim %s\n", prop.name, gpuprim_version_string());
    graph_against_calls(stream, ctx);
    small_offsets_calls(stream, ctx);
    gpuprim_context_destroy(ctx);
    memory_outside_allocator(stream);
    CHECK_CUDA(cudaStreamDestroy(stream));
    return 0;
}
