// SPDX-License-Identifier: Apache-2.0
// The communicator a context borrows for the distributed calls (src/dist):
// the caller's NCCL or MPI communicator behind one interface, so the
// distributed algorithms are written once. The engines are in src/comm
// (nccl_communicator.cpp, mpi_communicator.cpp); a build without one gets a
// factory that throws BACKEND_UNAVAILABLE (comm/missing_engines.cpp).
//
// Memory: "backend memory" is the context backend's address space (device
// memory for NCCL on a CUDA context, host memory for MPI on a CPU context).
// NCCL transfers are enqueued on the backend's stream; the calls that hand
// results to the host wait for it.
#pragma once

#include "core/backend.h"

#include <gpuprim/gpuprim.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace gpuprim {

// One peer's part of an exchange: what this rank sends to it and where what
// it sends here lands. Either byte count may be 0.
struct PeerTransfer {
    const void *send = nullptr;
    uint64_t send_bytes = 0;
    void *receive = nullptr;
    uint64_t receive_bytes = 0;
};

class Communicator {
public:
    virtual ~Communicator() = default;

    virtual gpuprim_comm_kind_t kind() const = 0;
    int32_t rank() const { return rank_; }
    int32_t size() const { return size_; }

    // Every rank's `bytes` bytes of host memory at send, gathered in rank
    // order (size() * bytes) into the communicator's own receive area,
    // returned; it stays valid until the next host_allgather. Blocks. The
    // agreement step and the small exchanges of counts go through here.
    // bytes: at most kHostRecordBytes (INTERNAL past it). The area (and an
    // engine's staging) is taken when the engine is made, so that no rank
    // can fail for memory on its way into the collective while the others
    // wait in it.
    const unsigned char *host_allgather(const void *send, uint64_t bytes);
    // The same into receive (size() * bytes bytes, taken by the caller before
    // the ranks agree), for records past kHostRecordBytes (the splitters'),
    // at most most_allgather_bytes(); returns receive.data().
    const unsigned char *host_allgather_into(const void *send, uint64_t bytes, std::vector<unsigned char> &receive);
    // A rank's record in the agreement, its key range or partial result fit
    // kHostRecordBytes; the splitters take 16 bytes a rank.
    static constexpr uint64_t kHostRecordBytes = 1024;
    uint64_t most_allgather_bytes() const {
        const uint64_t splitters = 16 * uint64_t(size_);
        return splitters > kHostRecordBytes ? splitters : kHostRecordBytes;
    }

    // Element-wise sum over ranks of count uint64 values in backend memory,
    // in place. Ordered on the stream (NCCL): download to read it.
    virtual void allreduce_sum(uint64_t *values, uint64_t count) = 0;

    // transfers[peer] for every peer (size() entries, this rank's own
    // included): the variable all-to-all of the sort's exchange and the
    // gather of top-k candidates. Every rank's receive_bytes from a peer must
    // equal that peer's send_bytes to it. Backend memory. Ordered on the
    // stream (NCCL); complete on return (MPI).
    virtual void exchange(const std::vector<PeerTransfer> &transfers) = 0;

    // Room for exchanges of at most send_bytes sent and receive_bytes
    // received by this rank (what an engine keeps per message), taken
    // before the ranks agree so that exchange() takes no memory once they
    // have (OUT_OF_MEMORY). Kept for later calls.
    virtual void reserve_exchange(uint64_t send_bytes, uint64_t receive_bytes) = 0;

protected:
    // The gather itself: every rank's bytes at send into receive, rank order.
    virtual void gather(const void *send, void *receive, uint64_t bytes) = 0;
    // Takes host_allgather's receive area (size() records of
    // kHostRecordBytes): engines call it once rank_ and size_ are set.
    void take_gather_area();

    int32_t rank_ = 0;
    int32_t size_ = 1;

private:
    std::vector<unsigned char> gathered_;
};

// Record r of a host_allgather's result whose records are sizeof(T) bytes.
template <typename T>
T gathered_record(const unsigned char *gathered, int32_t r) {
    T record;
    std::memcpy(&record, gathered + size_t(r) * sizeof(T), sizeof(T));
    return record;
}

// Whether this build has the engine (GPUPRIM_WITH_NCCL, GPUPRIM_WITH_MPI).
bool communicator_engine_built(gpuprim_comm_kind_t kind);

// Borrow the caller's communicator for a context whose backend is `backend`
// (kind and device already checked to match by the caller where it can:
// the NCCL engine checks the communicator's device against the backend's).
// Throws BACKEND_UNAVAILABLE (not built), INVALID_ARGUMENT (the engine
// rejects the communicator), DEVICE.
std::unique_ptr<Communicator> make_nccl_communicator(void *nccl_comm, Backend &backend);
std::unique_ptr<Communicator> make_mpi_communicator(const void *mpi_comm_address, Backend &backend);

}  // namespace gpuprim
