// SPDX-License-Identifier: Apache-2.0
// CUDA graph capture: whether the context's stream is capturing, and the
// refusal of what cannot be captured (a wait, a read-back, an allocation, a
// copy from pageable host memory), made before the call enqueues anything,
// so the caller's capture stays intact.
#pragma once

#include <cuda_runtime.h>

namespace gpuprim::cuda {

bool stream_capturing(cudaStream_t stream);
// For failure paths: never throws; true also when the query itself fails.
bool may_be_capturing(cudaStream_t stream) noexcept;

// Throws NOT_CAPTURABLE when `stream` is capturing: "<call> cannot be
// captured into a CUDA graph: <why>".
void refuse_during_capture(cudaStream_t stream, const char *call, const char *why);

}  // namespace gpuprim::cuda
