// SPDX-License-Identifier: Apache-2.0
// The MPI engine of the Communicator (core/communicator.h), for CPU
// contexts: the caller's MPI_Comm, kept by value. Every MPI call is checked;
// the communicator's error handler is the caller's, so with MPI's default
// (MPI_ERRORS_ARE_FATAL) MPI itself ends the job on an error, and with
// MPI_ERRORS_RETURN the failure comes back here as INTERNAL with MPI's text.
#include "core/checked_size.h"
#include "core/communicator.h"
#include "core/error.h"
#include "core/portable.h"

// MPI's C API only: Open MPI's and MPICH's C++ bindings would need their C++ library.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace gpuprim {
namespace {

void check_mpi(int result, const char *what) {
    if (result == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING] = "";
    int length = 0;
    if (MPI_Error_string(result, text, &length) != MPI_SUCCESS) std::strcpy(text, "unknown MPI error");
    fail(GPUPRIM_ERROR_INTERNAL, "MPI failed in %s: %s (error %d)", what, text, result);
}

// The most bytes one MPI message carries here: MPI counts are int. Tests
// set GPUPRIM_MPI_LARGEST_MESSAGE (bytes, the same on every rank) lower to
// run the chunked point-to-point path on small data
// (test/distributed/CMakeLists.txt); it then also bounds what goes through
// MPI_Alltoallv.
constexpr uint64_t kMessageBytes = uint64_t(1) << 30;
// The most messages of one block between two ranks posted at once
// (point_to_point says why).
constexpr uint64_t kMessagesInFlight = uint64_t(1) << 10;

uint64_t largest_message_bytes() {
    const char *text = std::getenv("GPUPRIM_MPI_LARGEST_MESSAGE");
    if (!text || !*text) return kMessageBytes;
    // Digits only: strtoull alone takes a sign (and wraps "-1"), spaces and
    // a value past 64 bits (clamped).
    uint64_t value = 0;
    bool digits = true;
    for (const char *c = text; *c && digits; ++c) {
        digits = *c >= '0' && *c <= '9';
        if (digits && value <= kMessageBytes) value = value * 10 + uint64_t(*c - '0');
    }
    if (!digits || value == 0 || value > kMessageBytes)
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
             "GPUPRIM_MPI_LARGEST_MESSAGE = '%s' is not a byte count from 1 to 2^30", text);
    return value;
}

class MpiCommunicator final : public Communicator {
public:
    explicit MpiCommunicator(MPI_Comm comm)
        : comm_(comm),
          message_bytes_(largest_message_bytes()),
          alltoallv_reach_(message_bytes_ < kMessageBytes ? message_bytes_ : uint64_t(INT_MAX)) {
        int initialized = 0, finalized = 0;
        check_mpi(MPI_Initialized(&initialized), "MPI_Initialized");
        check_mpi(MPI_Finalized(&finalized), "MPI_Finalized");
        if (!initialized || finalized)
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
                 "argument 'communicator': MPI is %s; call MPI_Init first (and MPI_Finalize after the last "
                 "distributed call)",
                 finalized ? "finalized" : "not initialized");
        if (comm == MPI_COMM_NULL)
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "argument 'communicator' points to MPI_COMM_NULL");
        // An intercommunicator's collectives gather from the remote group
        // while MPI_Comm_size counts the local one: every exchange would be
        // sized wrong (ranks waiting, records written past their room).
        int inter = 0;
        check_mpi(MPI_Comm_test_inter(comm, &inter), "MPI_Comm_test_inter");
        if (inter)
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
                 "argument 'communicator' is an MPI intercommunicator; the distributed calls need an "
                 "intracommunicator (MPI_Intercomm_merge makes one)");
        int rank = 0, size = 0;
        check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
        check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
        rank_ = rank;
        size_ = size;
        take_gather_area();
        // MPI_Alltoallv's counts and displacements, taken now (no rank may
        // fail for memory between the ranks' agreement and the exchange).
        const uint64_t ints = CheckedSize(size_, "the MPI engine's all-to-all counts").times(4).value();
        alltoallv_ints_ = host_array<int>(ints, "the MPI engine's all-to-all counts");
    }

    gpuprim_comm_kind_t kind() const override { return GPUPRIM_COMM_MPI; }

    // One request per message of at most message_bytes_ for each peer's
    // block, both ways, up to one window's worth (point_to_point).
    void reserve_exchange(uint64_t send_bytes, uint64_t receive_bytes) override {
        const uint64_t peers = uint64_t(size_);
        const uint64_t every_message = CheckedSize(send_bytes / message_bytes_, "the MPI engine's requests")
                                           .plus(receive_bytes / message_bytes_)
                                           .plus(peers)
                                           .plus(peers)
                                           .value();
        const uint64_t requests =
            std::min(every_message, CheckedSize(peers, "the MPI engine's requests").times(2 * kMessagesInFlight).value());
        if (requests <= requests_.capacity()) return;
        if (requests > requests_.max_size())
            fail(GPUPRIM_ERROR_OUT_OF_MEMORY, "cannot allocate %llu MPI requests for the exchange",
                 static_cast<unsigned long long>(requests));
        try {
            requests_.reserve(size_t(requests));
        } catch (const std::bad_alloc &) {
            fail(GPUPRIM_ERROR_OUT_OF_MEMORY, "cannot allocate %llu MPI requests for the exchange",
                 static_cast<unsigned long long>(requests));
        }
    }

protected:
    void gather(const void *send, void *receive, uint64_t bytes) override {
        if (bytes > uint64_t(INT_MAX))
            fail(GPUPRIM_ERROR_INTERNAL, "host_allgather of %llu bytes a rank exceeds MPI's int count",
                 static_cast<unsigned long long>(bytes));
        check_mpi(MPI_Allgather(send, int(bytes), MPI_BYTE, receive, int(bytes), MPI_BYTE, comm_), "MPI_Allgather");
    }

public:
    void allreduce_sum(uint64_t *values, uint64_t count) override {
        // Pieces of at most INT_MAX values.
        for (uint64_t done = 0; done < count;) {
            const int piece = int(std::min<uint64_t>(count - done, uint64_t(INT_MAX)));
            check_mpi(MPI_Allreduce(MPI_IN_PLACE, values + done, piece, MPI_UINT64_T, MPI_SUM, comm_),
                      "MPI_Allreduce");
            done += uint64_t(piece);
        }
    }

    void exchange(const std::vector<PeerTransfer> &transfers) override {
        // Every rank must take the same path (MPI_Alltoallv is collective),
        // and each sees only its own blocks: the ranks agree first.
        int fits = alltoallv_fits(transfers) ? 1 : 0, all_fit = 0;
        check_mpi(MPI_Allreduce(&fits, &all_fit, 1, MPI_INT, MPI_MIN, comm_), "MPI_Allreduce");
        if (all_fit) return alltoallv(transfers);
        point_to_point(transfers);
    }

private:
    // MPI_Alltoallv takes one send and one receive base with int counts and
    // displacements: usable when every block lies within INT_MAX bytes of
    // the lowest block.
    bool alltoallv_fits(const std::vector<PeerTransfer> &transfers) const {
        const char *send_base = nullptr, *receive_base = nullptr;
        for (const PeerTransfer &t : transfers) {
            if (t.send_bytes && (!send_base || static_cast<const char *>(t.send) < send_base))
                send_base = static_cast<const char *>(t.send);
            if (t.receive_bytes && (!receive_base || static_cast<char *>(t.receive) < receive_base))
                receive_base = static_cast<char *>(t.receive);
        }
        const uint64_t reach = alltoallv_reach_;
        for (const PeerTransfer &t : transfers) {
            if (t.send_bytes && uint64_t(static_cast<const char *>(t.send) - send_base) + t.send_bytes > reach)
                return false;
            if (t.receive_bytes && uint64_t(static_cast<char *>(t.receive) - receive_base) + t.receive_bytes > reach)
                return false;
        }
        return true;
    }

    void alltoallv(const std::vector<PeerTransfer> &transfers) {
        const size_t p = transfers.size();
        const char *send_base = nullptr;
        char *receive_base = nullptr;
        for (const PeerTransfer &t : transfers) {
            if (t.send_bytes && (!send_base || static_cast<const char *>(t.send) < send_base))
                send_base = static_cast<const char *>(t.send);
            if (t.receive_bytes && (!receive_base || static_cast<char *>(t.receive) < receive_base))
                receive_base = static_cast<char *>(t.receive);
        }
        std::fill(alltoallv_ints_.begin(), alltoallv_ints_.end(), 0);
        int *send_counts = alltoallv_ints_.data(), *send_displacements = send_counts + p;
        int *receive_counts = send_displacements + p, *receive_displacements = receive_counts + p;
        for (size_t peer = 0; peer < p; ++peer) {
            const PeerTransfer &t = transfers[peer];
            if (t.send_bytes) {
                send_counts[peer] = int(t.send_bytes);
                send_displacements[peer] = int(static_cast<const char *>(t.send) - send_base);
            }
            if (t.receive_bytes) {
                receive_counts[peer] = int(t.receive_bytes);
                receive_displacements[peer] = int(static_cast<char *>(t.receive) - receive_base);
            }
        }
        // Open MPI wants a valid address even where every count is 0.
        char none = 0;
        check_mpi(MPI_Alltoallv(send_base ? send_base : &none, send_counts, send_displacements, MPI_BYTE,
                                receive_base ? receive_base : &none, receive_counts, receive_displacements, MPI_BYTE,
                                comm_),
                  "MPI_Alltoallv");
    }

    // Blocks past MPI's int counts: every block in messages of at most
    // message_bytes_, posted a window at a time (at most kMessagesInFlight
    // of each block, both ways, then waited for). The requests fit what
    // reserve_exchange took (INTERNAL if a caller skipped it: growing here
    // could fail on one rank with messages already posted).
    //
    // Why windows: with 113,176 one-byte messages of one block posted at
    // once (3 ranks, GPUPRIM_MPI_LARGEST_MESSAGE=1, Open MPI 4.1.4's
    // shared-memory transport) bytes landed in each other's places and the
    // top-k returned wrong indices with SUCCESS, and matching against that
    // many posted receives took ~55 s. The likely cause: Open MPI's ob1
    // numbers the messages between two ranks in 16 bits, and that
    // transport may deliver them out of order.
    // Each rank runs as many windows as its largest block needs; the two
    // ends of a block compute the same windows from the same byte count, so
    // every window's messages meet their partner's in the same window.
    void point_to_point(const std::vector<PeerTransfer> &transfers) {
        uint64_t largest_block = 0;
        for (const PeerTransfer &t : transfers) largest_block = std::max({largest_block, t.send_bytes, t.receive_bytes});
        const uint64_t window_bytes = checked_mul(message_bytes_, kMessagesInFlight, "the MPI engine's window");
        // The last window ends at this rank's largest block, not a multiple
        // of window_bytes (no end past 2^64); a block's messages are the
        // same either way, as exchange_window clips them to the block.
        for (uint64_t from = 0; from < largest_block;) {
            const uint64_t to = from + std::min(window_bytes, largest_block - from);
            exchange_window(transfers, from, to);
            from = to;
        }
    }

    // The messages of bytes [from, to) of every block: posted, then waited for.
    void exchange_window(const std::vector<PeerTransfer> &transfers, uint64_t from, uint64_t to) {
        auto messages_of = [&](uint64_t bytes) {
            return bytes > from ? ceil_div(std::min(bytes, to) - from, message_bytes_) : uint64_t(0);
        };
        CheckedSize messages(0, "the exchange's MPI requests");
        for (const PeerTransfer &t : transfers)
            messages = messages.plus(messages_of(t.receive_bytes)).plus(messages_of(t.send_bytes));
        if (messages.value() > requests_.capacity())
            fail(GPUPRIM_ERROR_INTERNAL, "the exchange needs %llu MPI requests at once; %llu were reserved",
                 static_cast<unsigned long long>(messages.value()),
                 static_cast<unsigned long long>(requests_.capacity()));
        std::vector<MPI_Request> &requests = requests_;
        requests.clear();
        const int tag = 0x6770;  // "gp"
        for (size_t peer = 0; peer < transfers.size(); ++peer) {
            const PeerTransfer &t = transfers[peer];
            for (uint64_t done = from; done < std::min(t.receive_bytes, to); done += message_bytes_) {
                requests.emplace_back();
                check_mpi(MPI_Irecv(static_cast<char *>(t.receive) + done,
                                    int(std::min(message_bytes_, t.receive_bytes - done)), MPI_BYTE, int(peer), tag,
                                    comm_, &requests.back()),
                          "MPI_Irecv");
            }
        }
        for (size_t peer = 0; peer < transfers.size(); ++peer) {
            const PeerTransfer &t = transfers[peer];
            for (uint64_t done = from; done < std::min(t.send_bytes, to); done += message_bytes_) {
                requests.emplace_back();
                check_mpi(MPI_Isend(static_cast<const char *>(t.send) + done,
                                    int(std::min(message_bytes_, t.send_bytes - done)), MPI_BYTE, int(peer), tag,
                                    comm_, &requests.back()),
                          "MPI_Isend");
            }
        }
        check_mpi(MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    }

    MPI_Comm comm_;
    std::vector<int> alltoallv_ints_;      // send counts, displacements, receive counts, displacements
    std::vector<MPI_Request> requests_;  // reserved by reserve_exchange
    uint64_t message_bytes_;
    uint64_t alltoallv_reach_;  // blocks must end within this many bytes of their base
};

}  // namespace

std::unique_ptr<Communicator> make_mpi_communicator(const void *mpi_comm_address, Backend &backend) {
    if (backend.kind() != GPUPRIM_BACKEND_CPU)
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
             "argument 'kind' = GPUPRIM_COMM_MPI needs a CPU context; this context is a CUDA one (attach an NCCL "
             "communicator to it)");
    MPI_Comm comm;
    std::memcpy(&comm, mpi_comm_address, sizeof comm);
    return std::make_unique<MpiCommunicator>(comm);
}

}  // namespace gpuprim
