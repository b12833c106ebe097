// SPDX-License-Identifier: Apache-2.0
// Device-wide histograms (agent_histogram.cuh has the kernels): the counts
// cleared (cudaMemsetAsync), then launches of at most
// kHistogramLaunchElements elements each, a grid of at most one wave. The
// _rows calls: launches of at most kHistogramLaunchRows rows (blockIdx.y
// the row), each row's elements in launches as above.
// 1-byte dtypes count their 256 values per block and fold them into bins.
// Otherwise bins whose counters (and edge keys) fit the tuning's shared
// bytes are counted per block in shared memory; more bins (65,536 even bins
// on Hopper) are counted with atomics on the output itself. No workspace.
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

// The launches of kernel over the request's rows and elements: rows in
// launches of at most kHistogramLaunchRows (grid.y, blockIdx.y the row),
// each row's elements in launches of at most kHistogramLaunchElements; a
// launch's grid at most `most` blocks over all its rows (at least one a
// row), a block for each tile_elements elements of a row below that.
template <typename T>
void launch_rows(const DeviceEnv &env, void (*kernel)(HistogramArgs<T>), HistogramArgs<T> args,
                 const HistogramRequest &request, uint64_t most, uint64_t tile_elements, size_t shared,
                 const char *what) {
    const T *input = static_cast<const T *>(request.input);
    const uint64_t row_count_bytes = checked_mul(request.bins, request.count_bytes, "histogram counts of a row");
    args.row_elements = request.count;
    for (uint64_t row = 0; row < request.rows; row += kHistogramLaunchRows) {
        const uint64_t rows = std::min(request.rows - row, kHistogramLaunchRows);
        const uint64_t most_per_row = std::max<uint64_t>(1, most / rows);
        args.counts = static_cast<unsigned char *>(request.counts) +
                      checked_mul(row, row_count_bytes, "histogram counts");
        const T *row_input = input + checked_mul(row, request.count, "histogram input");
        for (uint64_t done = 0; done < request.count; done += kHistogramLaunchElements) {
            args.input = row_input + done;
            args.count = std::min(request.count - done, kHistogramLaunchElements);
            const uint64_t tiles = ceil_div(args.count, tile_elements);
            const dim3 grid(static_cast<uint32_t>(std::min(tiles, most_per_row)), static_cast<uint32_t>(rows));
            kernel<<<grid, kHistogramBlockThreads, shared, env.stream>>>(args);
            check_launch(what);
        }
    }
}

// What every launch of a request shares: its bins and how to count them.
template <typename T>
HistogramArgs<T> request_args(const HistogramRequest &request) {
    HistogramArgs<T> args{};
    args.bins = request.bins;
    args.count_bytes = request.count_bytes;
    args.edges = static_cast<const T *>(request.edges);
    args.even = request.even;
    return args;
}

// 1-byte dtypes: value counts folded into bins (value_histogram_kernel),
// whatever the bins.
template <typename T, bool kEdges>
void launch_by_value(const DeviceEnv &env, const HistogramTuning &tuning, const HistogramRequest &request) {
    const auto kernel = value_histogram_kernel<T, kEdges>;
    const char *what = "histogram launch";
    HistogramArgs<T> args = request_args<T>(request);
    args.columns = kHistogramValueColumns;
    const int blocks_per_sm = std::max(
        1, std::min(tuning.value_blocks_per_sm,
                    resident_blocks(env, reinterpret_cast<const void *>(kernel), kHistogramBlockThreads, 0, what)));
    const uint64_t most = uint64_t(std::max(env.sm_count, 1)) * uint64_t(blocks_per_sm);
    // Blocks for one 16-byte vector a thread, at most one wave: small
    // inputs spread over many SMs (2^16 bytes: 16 blocks, not 4).
    launch_rows<T>(env, kernel, args, request, most, uint64_t(kHistogramBlockThreads) * 16, 0, what);
}

// Wider dtypes: each element's bin counted (histogram_kernel).
template <typename T, bool kEdges>
void launch_by_bin(const DeviceEnv &env, const HistogramTuning &tuning, const HistogramRequest &request) {
    const auto kernel = histogram_kernel<T, kEdges>;
    const char *what = "histogram launch";
    HistogramArgs<T> args = request_args<T>(request);
    const uint64_t shared_bytes = histogram_shared_bytes<T>(request.bins, kEdges);
    args.shared = shared_bytes <= tuning.shared_bytes;
    args.columns = counter_columns(request.bins);
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
    launch_rows<T>(env, kernel, args, request, most,
                   uint64_t(kHistogramBlockThreads) * kHistogramItems * (16 / sizeof(T)), launch_shared, what);
}

template <typename T, bool kEdges>
void launch(const DeviceEnv &env, const HistogramTuning &tuning, const HistogramRequest &request) {
    if constexpr (sizeof(T) == 1) launch_by_value<T, kEdges>(env, tuning, request);
    else launch_by_bin<T, kEdges>(env, tuning, request);
}

inline void histogram_with(const DeviceEnv &env, const HistogramTuning &tuning, const HistogramRequest &request) {
    if (request.count_bytes != 4 && request.count_bytes != 8)
        fail(GPUPRIM_ERROR_INTERNAL, "histogram: %u-byte counts", request.count_bytes);
    if (request.bins == 0) fail(GPUPRIM_ERROR_INTERNAL, "histogram: no bins (the API refuses them)");
    if (request.rows == 0) fail(GPUPRIM_ERROR_INTERNAL, "histogram: no rows (the API refuses them)");
    const uint64_t bytes =
        CheckedSize(request.bins, "histogram counts").times(request.rows).times(request.count_bytes).value();
    // No workspace: a query has nothing to record.
    if (env.measuring) return;
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
    histogram_detail::histogram_with(env, histogram_tuning(env.code_arch), request);
}

}  // namespace gpuprim::cuda
