// SPDX-License-Identifier: Apache-2.0
// Device-wide histograms (agent_histogram.cuh has the kernel): the counts
// cleared (cudaMemsetAsync), then launches of at most
// kHistogramLaunchElements elements each, a grid of at most one wave. The
// _rows calls: launches of at most kHistogramLaunchRows rows (blockIdx.y
// the row), each row's elements in launches as above.
// Bins whose counters (and edge keys) fit the tuning's shared bytes are
// counted per block in shared memory; more bins (65,536 even bins on
// Hopper) are counted with atomics on the output itself. No workspace.
#include "cuda/histogram/histogram.h"

#include "core/checked_size.h"
#include "core/dtype.h"
#include "core/error.h"
#include "cuda/histogram/agent_histogram.cuh"
#include "cuda/histogram/histogram_policy.cuh"

#include <algorithm>
#include <cstdint>

namespace gpuprim::cuda {
namespace histogram_detail {

template <typename T, bool kEdges>
void launch(const DeviceEnv &env, const HistogramTuning &tuning, const HistogramRequest &request) {
    const auto kernel = histogram_kernel<T, kEdges>;
    const char *what = "histogram launch";
    HistogramArgs<T> args{};
    args.bins = request.bins;
    args.count_bytes = request.count_bytes;
    args.edges = static_cast<const T *>(request.edges);
    args.even = request.even;
    const uint64_t shared_bytes = histogram_shared_bytes<T>(request.bins, kEdges);
    args.shared = shared_bytes <= tuning.shared_bytes;
    const size_t dynamic = args.shared ? static_cast<size_t>(shared_bytes) : 0;
    int blocks_per_sm = resident_blocks(env, reinterpret_cast<const void *>(kernel), kHistogramBlockThreads, dynamic,
                                        what);
    if (blocks_per_sm == 0) {  // the counters do not fit this device's blocks: count in global memory
        args.shared = false;
        blocks_per_sm = resident_blocks(env, reinterpret_cast<const void *>(kernel), kHistogramBlockThreads, 0, what);
    }
    const size_t launch_shared = args.shared ? dynamic : 0;
    blocks_per_sm = std::max(1, std::min(blocks_per_sm, tuning.blocks_per_sm));
    const uint64_t most = uint64_t(std::max(env.sm_count, 1)) * uint64_t(blocks_per_sm);
    const T *input = static_cast<const T *>(request.input);
    const uint64_t row_count_bytes = checked_mul(request.bins, request.count_bytes, "histogram counts of a row");
    args.row_elements = request.count;
    // Rows in launches of at most kHistogramLaunchRows (grid.y), each row's
    // elements in launches of at most kHistogramLaunchElements; the grid of
    // a launch about one wave over all its rows (at least a block a row).
    for (uint64_t row = 0; row < request.rows; row += kHistogramLaunchRows) {
        const uint64_t rows = std::min(request.rows - row, kHistogramLaunchRows);
        const uint64_t most_per_row = std::max<uint64_t>(1, most / rows);
        unsigned char *row_counts = static_cast<unsigned char *>(request.counts) +
                                    checked_mul(row, row_count_bytes, "histogram counts");
        const T *row_input = input + checked_mul(row, request.count, "histogram input");
        args.counts = row_counts;
        for (uint64_t done = 0; done < request.count; done += kHistogramLaunchElements) {
            args.input = row_input + done;
            args.count = std::min(request.count - done, kHistogramLaunchElements);
            const uint64_t tiles =
                ceil_div(args.count, uint64_t(kHistogramBlockThreads) * kHistogramItems * (16 / sizeof(T)));
            const dim3 grid(static_cast<uint32_t>(std::min(tiles, most_per_row)), static_cast<uint32_t>(rows));
            kernel<<<grid, kHistogramBlockThreads, launch_shared, env.stream>>>(args);
            check_launch(what);
        }
    }
}

inline void histogram_with(const DeviceEnv &env, const HistogramTuning &tuning, const HistogramRequest &request) {
    if (request.count_bytes != 4 && request.count_bytes != 8)
        fail(GPUPRIM_ERROR_INTERNAL, "histogram: %u-byte counts", request.count_bytes);
    if (request.bins == 0) fail(GPUPRIM_ERROR_INTERNAL, "histogram: no bins (the API refuses them)");
    if (request.rows == 0) fail(GPUPRIM_ERROR_INTERNAL, "histogram: no rows (the API refuses them)");
    const uint64_t bytes =
        CheckedSize(request.bins, "histogram counts").times(request.rows).times(request.count_bytes).value();
    check(cudaMemsetAsync(request.counts, 0, bytes, env.stream), "histogram (cudaMemsetAsync of the counts)");
    if (request.count == 0) return;
    dispatch_dtype(request.dtype, [&](auto tag) {
        using T = decltype(tag);
        if (request.edges) launch<T, true>(env, tuning, request);
        else launch<T, false>(env, tuning, request);
    });
}

}  // namespace histogram_detail

void histogram(const DeviceEnv &env, const HistogramRequest &request) {
    histogram_detail::histogram_with(env, histogram_tuning(env.compute_capability), request);
}

}  // namespace gpuprim::cuda
