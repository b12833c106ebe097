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
    if (bytes > most_allgather_bytes() || gathered_.size() < uint64_t(size_) * most_allgather_bytes())
        fail(GPUPRIM_ERROR_INTERNAL, "host_allgather of %llu bytes a rank, past the %llu its receive area holds",
             static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(most_allgather_bytes()));
    gather(send, gathered_.data(), bytes);
    return gathered_.data();
}

void Communicator::take_gather_area() {
    gathered_ = host_array<unsigned char>(
        CheckedSize(size_, "the communicator's gather area").times(most_allgather_bytes()).value(),
        "the communicator's gather area");
}

bool communicator_engine_built(gpuprim_comm_kind_t kind) {
    switch (kind) {
    case GPUPRIM_COMM_NCCL:
#if defined(GPUPRIM_HAVE_NCCL)
        return true;
#else
        return false;
#endif
    case GPUPRIM_COMM_MPI:
#if defined(GPUPRIM_HAVE_MPI)
        return true;
#else
        return false;
#endif
    }
    return false;
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
