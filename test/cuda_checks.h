/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the CUDA graph tests (test_graph_capture.c, test_graph_registry.c)
 * share: a checked CUDA runtime call and a stream's capture state. Include
 * after test_common.h (or registry/registry.h) and <cuda_runtime.h>.
 */
#ifndef GPUPRIM_TEST_CUDA_CHECKS_H
#define GPUPRIM_TEST_CUDA_CHECKS_H

/* A CUDA call that must succeed: counted as a check, a failure reported with
 * the call's text, its error name and string. */
#define CUDA_OK(call) cuda_ok((call), #call, __FILE__, __LINE__)
static inline int cuda_ok(cudaError_t result, const char *what, const char *file, int line) {
    TC_COUNT(tc.checks);
    if (result == cudaSuccess) return 1;
    tc_fail(file, line, "%s returned %d (%s: %s)", what, (int)result, cudaGetErrorName(result),
            cudaGetErrorString(result));
    (void)cudaGetLastError(); /* not sticky: the next check sees its own result */
    return 0;
}

/* 1 when s is capturing (an active capture), 0 when not, -1 when the
 * capture was invalidated or the query failed. */
static inline int capture_state(cudaStream_t s) {
    enum cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (!CUDA_OK(cudaStreamIsCapturing(s, &status))) return -1;
    return status == cudaStreamCaptureStatusActive ? 1 : status == cudaStreamCaptureStatusNone ? 0 : -1;
}

#endif /* GPUPRIM_TEST_CUDA_CHECKS_H */
