// SPDX-License-Identifier: Apache-2.0
// The CPU backend's histograms (gpuprim_histogram_even, _range, bincount),
// histogram.cpp.
#pragma once

#include "core/backend.h"
#include "cpu/parallel.h"

namespace gpuprim {
namespace cpu {

// counts[b] = the number of the request's elements in bin b
// (core/backend.h HistogramRequest; core/histogram_bins.h the bins).
void histogram(Parallel &parallel, const HistogramRequest &request);

}  // namespace cpu
}  // namespace gpuprim
