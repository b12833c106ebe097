// SPDX-License-Identifier: Apache-2.0
// Which communication engines this build has (GPUPRIM_HAVE_NCCL and
// GPUPRIM_HAVE_MPI are set by CMake), and the factories of the missing ones,
// which say how to get them.
#include "core/communicator.h"
#include "core/error.h"

namespace gpuprim {

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
