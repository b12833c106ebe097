// SPDX-License-Identifier: Apache-2.0
// Which communication engines this build has (GPUPRIM_HAVE_NCCL and
// GPUPRIM_HAVE_MPI are set by CMake), the factories of the missing ones,
// which say how to get them, and what every engine shares (host_allgather's
// receive area).
#include "core/checked_size.h"
#include "core/communicator.h"
#include "core/error.h"

namespace gpuprim {

const unsigned char *Communicator::host_allgather(const void *send, uint64_t bytes) {
    if (bytes > kHostRecordBytes || gathered_.size() < uint64_t(size_) * kHostRecordBytes)
        fail(GPUPRIM_ERROR_INTERNAL, "host_allgather of %llu bytes a rank, past the %llu its receive area holds",
             static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(kHostRecordBytes));
    gather(send, gathered_.data(), bytes);
    return gathered_.data();
}

const unsigned char *Communicator::host_allgather_into(const void *send, uint64_t bytes,
                                                       std::vector<unsigned char> &receive) {
    if (bytes > most_allgather_bytes() || receive.size() / uint64_t(size_) < bytes)
        fail(GPUPRIM_ERROR_INTERNAL, "host_allgather of %llu bytes a rank into %llu bytes (at most %llu a rank)",
             static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(receive.size()),
             static_cast<unsigned long long>(most_allgather_bytes()));
    gather(send, receive.data(), bytes);
    return receive.data();
}

void Communicator::take_gather_area() {
    gathered_ = host_array<unsigned char>(
        CheckedSize(size_, "the communicator's gather area").times(kHostRecordBytes).value(),
        "the communicator's gather area");
}

#if !defined(GPUPRIM_HAVE_NCCL)
std::unique_ptr<Communicator> make_nccl_communicator(void *, Backend &) {
    fail(GPUPRIM_ERROR_BACKEND_UNAVAILABLE,
         "argument 'kind' = GPUPRIM_COMM_NCCL, but this libgpuprim was built without NCCL (configure with "
         "-DGPUPRIM_WITH_CUDA=ON where CMake finds nccl.h and libnccl; see README, Distributed calls)");
}
#endif

#if !defined(GPUPRIM_HAVE_MPI)
std::unique_ptr<Communicator> make_mpi_communicator(const void *, Backend &) {
    fail(GPUPRIM_ERROR_BACKEND_UNAVAILABLE,
         "argument 'kind' = GPUPRIM_COMM_MPI, but this libgpuprim was built without MPI (install an MPI, e.g. "
         "apt-get install libopenmpi-dev, and configure again; see README, Distributed calls)");
}
#endif

}  // namespace gpuprim
