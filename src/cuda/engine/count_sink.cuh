// SPDX-License-Identifier: Apache-2.0
// Where a call whose output size depends on the data puts that size
// (core/backend.h CountSink), for the primitives that count in one tile
// kernel (select/, reduce_by_key/): the device word (4 or 8 bytes) and the
// mapped pinned host slot, written by the kernel's last tile; the host copy
// after the stream is done; the zero of an empty input.
#pragma once

#include "core/backend.h"
#include "cuda/device_env.h"
#include "cuda/util/check.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

namespace gpuprim::cuda {

// The kernel side: count_host is the device address of the host slot, or nullptr.
__device__ __forceinline__ void write_count_sinks(void *count_out, uint32_t count_out_bytes, uint64_t *count_host,
                                                  uint64_t count) {
    if (count_out) {
        if (count_out_bytes == 8) *static_cast<uint64_t *>(count_out) = count;
        else *static_cast<uint32_t *>(count_out) = static_cast<uint32_t>(count);
    }
    if (count_host) *count_host = count;
}

// The device address the kernel writes a host count to: env's mapped slot.
inline uint64_t *host_count_slot(const DeviceEnv &env, const CountSink &sink) {
    return sink.host ? static_cast<uint64_t *>(env.host_slot_device) : nullptr;
}

// After the launches: a host count waits for the stream, then is copied out.
// A workspace query ran nothing: the count is left as it was.
inline void finish_host_count(const DeviceEnv &env, const CountSink &sink, const char *what) {
    if (!sink.host || env.measuring) return;
    check(cudaStreamSynchronize(env.stream), what);
    std::memcpy(sink.host, env.host_slot, sizeof(uint64_t));
}

// An empty input: the count is 0.
inline void write_zero_count(const DeviceEnv &env, const CountSink &sink, const char *what) {
    if (env.measuring) return;
    if (sink.device) check(cudaMemsetAsync(sink.device, 0, sink.device_bytes, env.stream), what);
    if (sink.host) *sink.host = 0;
}

}  // namespace gpuprim::cuda
