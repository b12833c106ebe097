// SPDX-License-Identifier: Apache-2.0
#include "dist/agreement.h"

#include "core/checked_size.h"

#include <cstdio>
#include <cstring>

namespace gpuprim::dist {
namespace {

// One rank's record, the same bytes on every rank's build.
struct Record {
    int32_t status;
    int32_t fields;
    uint64_t count;
    uint64_t call_hash;
    uint64_t values[Agreement::kFields];
    char message[Agreement::kMessageBytes];
};

static_assert(sizeof(Record) <= Communicator::kHostRecordBytes, "the agreement's record outgrew host_allgather's");

uint64_t name_hash(const char *name) {
    uint64_t hash = 1469598103934665603ull;  // FNV-1a
    for (; *name; ++name) hash = (hash ^ uint8_t(*name)) * 1099511628211ull;
    return hash;
}

}  // namespace

Agreement::Agreement(Communicator &communicator, const char *call) : communicator_(communicator), call_(call) {}

void Agreement::must_match(const char *name, uint64_t value) {
    if (fields_ == kFields) fail(GPUPRIM_ERROR_INTERNAL, "%s: more than %d arguments to agree on", call_, kFields);
    field_names_[fields_] = name;
    field_values_[fields_] = value;
    ++fields_;
}

void Agreement::keep_failure(gpuprim_status_t status, const char *message) {
    if (status_ != GPUPRIM_SUCCESS) return;  // the first one counts
    status_ = status;
    std::snprintf(message_, sizeof message_, "%s", message);
}

GlobalLayout Agreement::agree(uint64_t local_count) {
    const int32_t ranks = communicator_.size();
    // The layout's arrays before the trade: a rank that cannot have them
    // says so in its record instead of failing alone after it.
    GlobalLayout layout;
    check_locally([&] {
        layout.counts = host_array<uint64_t>(uint64_t(ranks), "the distributed call's layout");
        layout.offsets = host_array<uint64_t>(uint64_t(ranks) + 1, "the distributed call's layout");
    });
    Record mine{};
    mine.status = status_;
    mine.fields = fields_;
    mine.count = local_count;
    mine.call_hash = name_hash(call_);
    std::memcpy(mine.values, field_values_, sizeof mine.values);
    std::memcpy(mine.message, message_, sizeof mine.message);

    const unsigned char *records = communicator_.host_allgather(&mine, sizeof mine);
    throw_any_failure<Record>(records);
    const Record first = gathered_record<Record>(records, 0);
    for (int32_t r = 1; r < ranks; ++r) {
        const Record theirs = gathered_record<Record>(records, r);
        if (theirs.call_hash != first.call_hash || theirs.fields != first.fields)
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
                 "%s: rank %d made another distributed call at the same time (every rank must make the same "
                 "distributed calls in the same order)",
                 call_, static_cast<int>(r));
        for (int f = 0; f < fields_; ++f) {
            if (theirs.values[f] != first.values[f])
                fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
                     "%s: rank %d passed %s = %llu, rank 0 passed %llu (it must be the same on every rank)", call_,
                     static_cast<int>(r), field_names_[f], static_cast<unsigned long long>(theirs.values[f]),
                     static_cast<unsigned long long>(first.values[f]));
        }
    }

    layout.rank = communicator_.rank();
    layout.ranks = ranks;
    uint64_t total = 0;
    for (int32_t r = 0; r < ranks; ++r) {
        const uint64_t count = gathered_record<Record>(records, r).count;
        layout.counts[size_t(r)] = count;
        layout.offsets[size_t(r)] = total;
        if (__builtin_add_overflow(total, count, &total))
            fail(GPUPRIM_ERROR_OVERFLOW, "%s: the ranks' counts add up past 2^64 - 1 elements", call_);
    }
    layout.offsets[size_t(ranks)] = total;
    return layout;
}

void Agreement::fail_as_rank(int32_t rank, gpuprim_status_t status, const char *message) const {
    char text[Agreement::kMessageBytes + 96];
    std::snprintf(text, sizeof text, "%s failed on rank %d, so on every rank: %.*s", call_, static_cast<int>(rank),
                  Agreement::kMessageBytes - 1, message);
    throw Error(status, text);
}

void Agreement::trade_outcomes() {
    struct Outcome {
        int32_t status;
        char message[Agreement::kMessageBytes];
    };
    static_assert(sizeof(Outcome) <= Communicator::kHostRecordBytes, "the outcome outgrew host_allgather's");
    Outcome mine{};
    mine.status = status_;
    std::memcpy(mine.message, message_, sizeof mine.message);
    throw_any_failure<Outcome>(communicator_.host_allgather(&mine, sizeof mine));
}

}  // namespace gpuprim::dist
