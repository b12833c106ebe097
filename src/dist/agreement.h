// SPDX-License-Identifier: Apache-2.0
// The step every distributed call takes before any data moves: each rank
// checks its own arguments (and takes its scratch), then the ranks trade one
// fixed record each, so that a failure any rank sees, or arguments that
// differ across ranks, fail the call on every rank instead of leaving the
// others waiting in a collective. What the ranks agree on comes back as the
// global layout of the data (every rank's count and offset).
#pragma once

#include "core/communicator.h"
#include "core/error.h"

#include <gpuprim/gpuprim.h>

#include <cstdint>
#include <vector>

namespace gpuprim::dist {

// The data as the ranks hold it: rank r holds counts[r] elements, global
// positions offsets[r] .. offsets[r] + counts[r] - 1.
struct GlobalLayout {
    int32_t rank = 0;
    int32_t ranks = 1;
    std::vector<uint64_t> counts;
    std::vector<uint64_t> offsets;  // ranks + 1 entries; offsets[ranks] = total
    uint64_t total() const { return offsets.back(); }
    uint64_t local_count() const { return counts[size_t(rank)]; }
    uint64_t local_offset() const { return offsets[size_t(rank)]; }
};

class Agreement {
public:
    // call: the entry point's name (it is part of what must match).
    Agreement(Communicator &communicator, const char *call);

    // An argument that must be the same on every rank (a dtype, an order,
    // k); name: as messages name it. At most kFields of them.
    void must_match(const char *name, uint64_t value);

    // Runs the local checks; a failure is kept for agree() instead of
    // thrown, so this rank still takes part in the agreement.
    template <typename Check>
    void check_locally(Check &&check) {
        try {
            check();
        } catch (const Error &error) {
            keep_failure(error.status(), error.what());
        } catch (const std::bad_alloc &) {
            keep_failure(GPUPRIM_ERROR_OUT_OF_MEMORY, "cannot allocate host memory for the call's bookkeeping");
        } catch (const std::exception &error) {
            keep_failure(GPUPRIM_ERROR_INTERNAL, error.what());
        }
    }

    // Trades the records. Throws this rank's own failure, else the first
    // failing rank's (its status; a message naming it), else
    // INVALID_ARGUMENT for an argument that differs from rank 0's, else
    // OVERFLOW when the counts' sum does not fit 64 bits. Returns the layout.
    GlobalLayout agree(uint64_t local_count);

    // A second agreement, for what a rank can check only once the layout is
    // known (top-k's scratch depends on every rank's count): runs check
    // locally, then every rank learns whether any failed, as in agree().
    template <typename Check>
    void confirm(Check &&check) {
        check_locally(check);
        trade_outcomes();
    }

    static constexpr int kFields = 12;
    static constexpr int kMessageBytes = 400;

private:
    // This rank's failure, else the first failing rank's (`traded`: every
    // rank's Traded record, with status and message, as host_allgather
    // gave them), thrown on every rank alike.
    template <typename Traded>
    void throw_any_failure(const unsigned char *traded) const {
        if (status_ != GPUPRIM_SUCCESS) throw Error(status_, message_);
        for (int32_t r = 0; r < communicator_.size(); ++r) {
            const Traded record = gathered_record<Traded>(traded, r);
            if (record.status != GPUPRIM_SUCCESS)
                fail_as_rank(r, static_cast<gpuprim_status_t>(record.status), record.message);
        }
    }
    [[noreturn]] void fail_as_rank(int32_t rank, gpuprim_status_t status, const char *message) const;
    void trade_outcomes();
    void keep_failure(gpuprim_status_t status, const char *message);

    Communicator &communicator_;
    const char *call_;
    int fields_ = 0;
    const char *field_names_[kFields] = {};
    uint64_t field_values_[kFields] = {};
    gpuprim_status_t status_ = GPUPRIM_SUCCESS;
    char message_[kMessageBytes] = "";
};

}  // namespace gpuprim::dist
