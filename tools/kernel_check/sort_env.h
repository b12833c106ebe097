// SPDX-License-Identifier: Apache-2.0
// Shared by the sort checker (check_sort.cu), the CUB bar (sort_cub_bar.cu)
// and the shape sweep (sort_sweep_shapes.cu), on the shared harness.
#pragma once

#include "core/backend.h"
#include "harness.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace kc = kernel_check;
using kernel_check::median_ms;
// The sort tools' environment: the shared one (harness.h).
using TestEnv = kernel_check::KernelEnv;

// CUB on the same buffers (sort_cub_bar.cu). dtype: 0 u32, 1 i32, 2 f32, 3 u64, 4 i64, 5 f64.
// Returns the median ms of out-of-place sorts rotating over keys_in[0..2].
double cub_time(cudaStream_t stream, int dtype, int value_bytes, void *const keys_in[3], void *keys_out,
                void *const values_in[3], void *values_out, uint64_t n, int reps);

// Shape variants for the sweep (sort_sweep_shapes.cu).
struct SortVariant {
    std::string name;
    int key_bytes, value_bytes;
    uint64_t min_n, max_n;  // counts it applies to
    std::function<bool(TestEnv &, const gpuprim::SortRequest &)> sort;  // false: not applicable
};
std::vector<SortVariant> sweep_variants();
