// SPDX-License-Identifier: Apache-2.0
#include "cuda/util/capture.h"

#include "core/error.h"
#include "cuda/util/check.h"

namespace gpuprim::cuda {

bool stream_capturing(cudaStream_t stream) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    check(cudaStreamIsCapturing(stream, &status), "cudaStreamIsCapturing");
    // An invalidated capture still has to be ended by its owner; enqueueing
    // more into it would only fail later, so it counts as capturing.
    return status != cudaStreamCaptureStatusNone;
}

bool may_be_capturing(cudaStream_t stream) noexcept {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
        (void)cudaGetLastError();
        return true;
    }
    return status != cudaStreamCaptureStatusNone;
}

void refuse_during_capture(cudaStream_t stream, const char *call, const char *why) {
    if (stream_capturing(stream))
        fail(GPUPRIM_ERROR_NOT_CAPTURABLE, "%s cannot be captured into a CUDA graph: %s", call, why);
}

}  // namespace gpuprim::cuda
