// SPDX-License-Identifier: Apache-2.0
// The NCCL engine of the Communicator (core/communicator.h), for CUDA
// contexts: the caller's ncclComm_t, borrowed. Transfers are enqueued on the
// context's stream; host_allgather stages through a small device buffer of
// its own, taken when the communicator is attached, and waits for the stream.
#include "core/checked_size.h"
#include "core/communicator.h"
#include "core/error.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstring>

namespace gpuprim {
namespace {

void check_nccl(ncclResult_t result, const char *what) {
    if (result == ncclSuccess) return;
    fail(result == ncclInvalidArgument || result == ncclInvalidUsage ? GPUPRIM_ERROR_INVALID_ARGUMENT
                                                                     : GPUPRIM_ERROR_INTERNAL,
         "NCCL failed in %s: %s (ncclResult_t %d)", what, ncclGetErrorString(result), static_cast<int>(result));
}

void check_cuda(cudaError_t result, const char *what) {
    if (result == cudaSuccess) return;
    fail(GPUPRIM_ERROR_DEVICE, "CUDA error in %s: %s (%s)", what, cudaGetErrorString(result),
         cudaGetErrorName(result));
}

class NcclCommunicator final : public Communicator {
public:
    NcclCommunicator(ncclComm_t comm, Backend &backend)
        : comm_(comm), backend_(backend), stream_(static_cast<cudaStream_t>(backend.native_stream())) {
        int count = 0, rank = 0, device = -1;
        check_nccl(ncclCommCount(comm, &count), "ncclCommCount (argument 'communicator')");
        check_nccl(ncclCommUserRank(comm, &rank), "ncclCommUserRank (argument 'communicator')");
        check_nccl(ncclCommCuDevice(comm, &device), "ncclCommCuDevice (argument 'communicator')");
        if (device != backend.device_ordinal())
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
                 "argument 'communicator' is an NCCL communicator of CUDA device %d; this context's device is %d "
                 "(one communicator per device: make it with that device current)",
                 device, static_cast<int>(backend.device_ordinal()));
        rank_ = rank;
        size_ = count;
        // The staging of host_allgather, taken now for the largest one (a
        // rank failing to grow it inside a distributed call would leave the
        // others waiting in ncclAllGather).
        staging_ = backend_.allocate(
            checked_mul(uint64_t(size_) + 1, most_allgather_bytes(), "the NCCL engine's staging buffer"));
        try {
            take_gather_area();
        } catch (...) {
            backend_.deallocate(staging_);
            throw;
        }
    }
    ~NcclCommunicator() override {
        if (staging_) backend_.deallocate(staging_);
    }

    gpuprim_comm_kind_t kind() const override { return GPUPRIM_COMM_NCCL; }

    // NCCL keeps no host state per message.
    void reserve_exchange(uint64_t, uint64_t) override {}

protected:
    void gather(const void *send, void *receive, uint64_t bytes) override {
        const uint64_t total = bytes * uint64_t(size_);
        char *staging = static_cast<char *>(staging_);
        check_cuda(cudaMemcpyAsync(staging, send, bytes, cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync");
        check_nccl(ncclAllGather(staging, staging + bytes, bytes, ncclChar, comm_, stream_), "ncclAllGather");
        check_cuda(cudaMemcpyAsync(receive, staging + bytes, total, cudaMemcpyDeviceToHost, stream_),
                   "cudaMemcpyAsync");
        check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    }

public:
    void allreduce_sum(uint64_t *values, uint64_t count) override {
        if (count == 0) return;
        check_nccl(ncclAllReduce(values, values, count, ncclUint64, ncclSum, comm_, stream_), "ncclAllReduce");
    }

    void exchange(const std::vector<PeerTransfer> &transfers) override {
        check_nccl(ncclGroupStart(), "ncclGroupStart");
        ncclResult_t failed = ncclSuccess;
        const char *what = "";
        for (size_t peer = 0; peer < transfers.size() && failed == ncclSuccess; ++peer) {
            const PeerTransfer &t = transfers[peer];
            if (t.send_bytes) {
                failed = ncclSend(t.send, t.send_bytes, ncclChar, int(peer), comm_, stream_);
                what = "ncclSend";
            }
            if (failed == ncclSuccess && t.receive_bytes) {
                failed = ncclRecv(t.receive, t.receive_bytes, ncclChar, int(peer), comm_, stream_);
                what = "ncclRecv";
            }
        }
        // The group is closed whatever happened inside it.
        const ncclResult_t ended = ncclGroupEnd();
        check_nccl(failed, what);
        check_nccl(ended, "ncclGroupEnd");
    }

private:
    ncclComm_t comm_;
    Backend &backend_;
    cudaStream_t stream_;
    void *staging_ = nullptr;
};

}  // namespace

std::unique_ptr<Communicator> make_nccl_communicator(void *nccl_comm, Backend &backend) {
    if (backend.kind() != GPUPRIM_BACKEND_CUDA)
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
             "argument 'kind' = GPUPRIM_COMM_NCCL needs a CUDA context; this context is a CPU one (attach an MPI "
             "communicator to it)");
    return std::make_unique<NcclCommunicator>(static_cast<ncclComm_t>(nccl_comm), backend);
}

}  // namespace gpuprim
