// SPDX-License-Identifier: Apache-2.0
// The distributed entry points: communicators attached to contexts, and the
// collective reduce, scan, sort, argsort and top-k. Each collective checks
// its arguments on this rank (the same rules and messages as the one-rank
// call), takes its scratch, then agrees with the other ranks
// (dist/agreement.h) before any data moves; the algorithms are in src/dist.
#include "api/requests.h"
#include "api/validate.h"
#include "core/communicator.h"
#include "core/context.h"
#include "core/dtype.h"
#include "dist/agreement.h"
#include "dist/distributed.h"

#include <gpuprim/gpuprim.h>

using gpuprim::Buffer;
using gpuprim::Communicator;
using gpuprim::Context;
using gpuprim::fail;
using gpuprim::dist::Agreement;
using gpuprim::dist::GlobalLayout;
using namespace gpuprim::api;  // guarded() and the argument rules

namespace {

// The context's communicator, on a stream not being captured. A rank
// without one, or capturing (its collectives would be recorded into the
// graph, not run), cannot take part in the agreement at all: it fails
// alone, before it (the header's early returns).
Communicator &require_communicator(Context &ctx, const char *call) {
    ctx.backend->refuse_during_capture(call, "it exchanges data with the other ranks and waits for them");
    if (!ctx.communicator)
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
             "%s: this context has no communicator; attach the caller's with "
             "gpuprim_context_attach_communicator() first",
             call);
    return *ctx.communicator;
}

// The distributed calls communicate before their workspace is known (the
// counts after the exchange depend on every rank's data), so a workspace
// query cannot measure them. Checked first inside the agreement's local
// checks, so that every rank fails with this one: returning before the
// agreement left the other ranks waiting in it.
void refuse_during_query(Context &ctx, const char *call) {
    if (ctx.backend->measuring())
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
             "%s: a workspace query is open on this context, and distributed calls cannot be measured "
             "(end the query with gpuprim_context_end_workspace_query first)",
             call);
}

// The distributed calls' own block (their plan: splitters, counts), which
// no workspace query can size (the calls cannot be measured) and which
// reserve_workspace(bytes) does not grow: held too small, the call fails
// saying how to size it.
void *distributed_block(Context &ctx, uint64_t bytes, const char *call) {
    if (!bytes) return nullptr;
    gpuprim::Workspace &block = ctx.distributed_workspace;
    if (block.held() && bytes > block.capacity())
        fail(GPUPRIM_ERROR_OUT_OF_MEMORY,
             "%s needs %llu bytes in the distributed calls' own workspace block, which is held still at %llu "
             "bytes: run the distributed calls once before holding the workspace "
             "(gpuprim_context_reserve_workspace with fix), which sizes that block; a workspace query cannot",
             call, static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(block.capacity()));
    return block.reserve(bytes);
}

// What identifies a buffer's dtype in the agreement (none: no buffer).
uint64_t dtype_field(const Buffer *buffer) { return buffer ? uint64_t(buffer->dtype) : UINT64_MAX; }

// The fields of a sort request that every rank must share. carried: the
// values (sort) or the indices (argsort), named so by carried_name.
void must_match_sort(Agreement &agreement, const gpuprim::SortRequest &request, const Buffer &keys,
                     const Buffer *carried, const char *carried_name) {
    agreement.must_match("the keys' dtype", dtype_field(&keys));
    agreement.must_match(carried_name, dtype_field(carried));
    agreement.must_match("options->order", request.descending ? GPUPRIM_ORDER_DESCENDING : GPUPRIM_ORDER_ASCENDING);
    agreement.must_match("options->begin_bit", request.begin_bit);
    agreement.must_match("options->end_bit", gpuprim::sort_end_bit(request));
}

// The sort and argsort entry points: the request build_request makes from
// the arguments (checked on this rank, its must-match fields registered),
// the sort's scratch from the context's distributed workspace and its local
// steps' workspace (inside the local checks: a rank short of memory fails the
// call on every rank), the agreement, then the distributed sort. An
// argsort's indices must hold every global position (the same verdict on
// every rank: the layout and the indices' dtype are shared).
template <typename BuildRequest>
gpuprim_status_t distributed_sort_call(const char *name, gpuprim_context_t context, BuildRequest &&build_request) {
    return guarded(name, context, [&](Context &ctx) {
        Communicator &communicator = require_communicator(ctx, name);
        Agreement agreement(communicator, name);
        gpuprim::SortRequest request{};
        gpuprim::dist::SortScratch scratch{};
        void *block = nullptr;
        bool checked = false;
        agreement.check_locally([&] {
            refuse_during_query(ctx, name);
            request = build_request(ctx, agreement);
            scratch = gpuprim::dist::plan_sort_scratch(request, communicator);
            block = distributed_block(ctx, scratch.plan.bytes(), name);
            gpuprim::dist::take_sort_workspace(*ctx.backend, request, scratch, block, communicator.size());
            checked = true;
        });
        const GlobalLayout layout = agreement.agree(checked ? request.count : 0);
        if (request.values_are_indices && layout.total() > 0 && layout.total() - 1 > request.largest_index)
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
                 "'indices' cannot hold global position %llu (its dtype holds at most %llu; the ranks hold %llu "
                 "keys together)",
                 static_cast<unsigned long long>(layout.total() - 1),
                 static_cast<unsigned long long>(request.largest_index),
                 static_cast<unsigned long long>(layout.total()));
        gpuprim::dist::sort(*ctx.backend, communicator, layout, request, scratch, block);
    });
}

}  // namespace

extern "C" {

gpuprim_status_t gpuprim_context_attach_communicator(gpuprim_context_t context, gpuprim_comm_kind_t kind,
                                                     void *communicator) {
    return guarded(__func__, context, [&](Context &ctx) {
        require_enum(kind, GPUPRIM_COMM_NCCL, GPUPRIM_COMM_MPI, "kind", "gpuprim_comm_kind_t");
        require(communicator, "communicator");
        auto attached = enum_bits(kind) == GPUPRIM_COMM_NCCL
                            ? gpuprim::make_nccl_communicator(communicator, *ctx.backend)
                            : gpuprim::make_mpi_communicator(communicator, *ctx.backend);
        ctx.communicator = std::move(attached);
    });
}

gpuprim_status_t gpuprim_context_detach_communicator(gpuprim_context_t context) {
    return guarded(__func__, context, [&](Context &ctx) { ctx.communicator.reset(); });
}

gpuprim_status_t gpuprim_context_get_rank(gpuprim_context_t context, int32_t *rank, int32_t *rank_count) {
    const char *const name = __func__;
    return guarded(name, context, [&](Context &ctx) {
        require(rank, "rank");
        require(rank_count, "rank_count");
        const Communicator &communicator = require_communicator(ctx, name);
        *rank = communicator.rank();
        *rank_count = communicator.size();
    });
}

gpuprim_status_t gpuprim_distributed_reduce(gpuprim_context_t context, gpuprim_op_t op, gpuprim_buffer_t input,
                                            void *result) {
    const char *const name = __func__;
    return guarded(name, context, [&](Context &ctx) {
        Communicator &communicator = require_communicator(ctx, name);
        Agreement agreement(communicator, name);
        const Buffer *in = nullptr;
        agreement.check_locally([&] {
            refuse_during_query(ctx, name);
            require_op(op);
            in = &ctx.resolve(input, "input");
            require(result, "result");
            agreement.must_match("op", uint64_t(enum_bits(op)));
            agreement.must_match("the input's dtype", dtype_field(in));
            gpuprim::dist::take_reduce_workspace(*ctx.backend, op, in->dtype, in->data, in->count);
        });
        const GlobalLayout layout = agreement.agree(in ? in->count : 0);
        gpuprim::dist::reduce(*ctx.backend, communicator, layout, op, in->dtype, in->data, result);
    });
}

gpuprim_status_t gpuprim_distributed_scan(gpuprim_context_t context, gpuprim_op_t op, gpuprim_scan_kind_t kind,
                                          gpuprim_buffer_t input, gpuprim_buffer_t output) {
    const char *const name = __func__;
    return guarded(name, context, [&](Context &ctx) {
        Communicator &communicator = require_communicator(ctx, name);
        Agreement agreement(communicator, name);
        const Buffer *in = nullptr;
        void *out = nullptr;
        agreement.check_locally([&] {
            refuse_during_query(ctx, name);
            const ScanOperands operands = scan_operands(ctx, op, kind, input, output);
            in = operands.in;
            out = operands.out->data;
            agreement.must_match("op", uint64_t(enum_bits(op)));
            agreement.must_match("kind", uint64_t(enum_bits(kind)));
            agreement.must_match("the input's dtype", dtype_field(in));
            gpuprim::dist::take_scan_workspace(*ctx.backend, communicator.size(), op, kind, in->dtype, in->data, out,
                                               in->count);
        });
        const GlobalLayout layout = agreement.agree(in ? in->count : 0);
        gpuprim::dist::scan(*ctx.backend, communicator, layout, op, kind, in->dtype, in->data, out);
    });
}

gpuprim_status_t gpuprim_distributed_sort(gpuprim_context_t context, gpuprim_buffer_t keys_in,
                                          gpuprim_buffer_t values_in, gpuprim_buffer_t keys_out,
                                          gpuprim_buffer_t values_out, const gpuprim_sort_options_t *options) {
    return distributed_sort_call(__func__, context, [&](Context &ctx, Agreement &agreement) {
        SortKeys keys = sort_keys_for(ctx, options, keys_in, keys_out, false);
        add_sort_values(ctx, keys.request, *keys.in, *keys.out, values_in, values_out);
        must_match_sort(agreement, keys.request, *keys.in,
                        values_in ? &ctx.resolve(values_in, "values_in") : nullptr, "the values' dtype");
        return keys.request;
    });
}

gpuprim_status_t gpuprim_distributed_argsort(gpuprim_context_t context, gpuprim_buffer_t keys_in,
                                             gpuprim_buffer_t keys_out, gpuprim_buffer_t indices,
                                             const gpuprim_sort_options_t *options) {
    return distributed_sort_call(__func__, context, [&](Context &ctx, Agreement &agreement) {
        SortKeys keys = sort_keys_for(ctx, options, keys_in, keys_out, true);
        add_argsort_indices(ctx, keys.request, *keys.in, keys.out, indices, keys.in->count, true);
        const Buffer &idx = ctx.resolve(indices, "indices");
        if (gpuprim::dtype_size(idx.dtype) != 8)
            fail(GPUPRIM_ERROR_DTYPE_MISMATCH,
                 "'indices' is %s; the distributed argsort writes global positions, which need I64 or U64",
                 gpuprim::dtype_name(idx.dtype));
        // keys_out is this rank's own business (without it the keys sort
        // into scratch; they travel alike), so it need not match.
        must_match_sort(agreement, keys.request, *keys.in, &idx, "the indices' dtype");
        return keys.request;
    });
}

gpuprim_status_t gpuprim_distributed_topk(gpuprim_context_t context, gpuprim_buffer_t keys_in, uint64_t k,
                                          gpuprim_order_t order, gpuprim_buffer_t keys_out,
                                          gpuprim_buffer_t indices) {
    const char *const name = __func__;
    return guarded(name, context, [&](Context &ctx) {
        Communicator &communicator = require_communicator(ctx, name);
        Agreement agreement(communicator, name);
        gpuprim::TopkRequest request{};
        const Buffer *in = nullptr;
        const Buffer *idx = nullptr;
        agreement.check_locally([&] {
            refuse_during_query(ctx, name);
            in = &ctx.resolve(keys_in, "keys_in");
            // The index dtype's reach is checked against the global count below.
            request = topk_request_for(ctx, *in, k, order, keys_out, indices, k, in->count, false);
            idx = indices ? &ctx.resolve(indices, "indices") : nullptr;
            agreement.must_match("k", k);
            agreement.must_match("order", uint64_t(enum_bits(order)));
            agreement.must_match("the keys' dtype", dtype_field(in));
            agreement.must_match("the indices' dtype", dtype_field(idx));
        });
        const GlobalLayout layout = agreement.agree(in ? in->count : 0);
        // The same on every rank (the layout and k are), so every rank fails alike.
        if (k > layout.total())
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "k = %llu is more than the %llu keys of every rank's 'keys_in' together",
                 static_cast<unsigned long long>(k), static_cast<unsigned long long>(layout.total()));
        if (idx && layout.total() > 0 && layout.total() - 1 > request.largest_index)
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
                 "'indices' is %s, which cannot hold global position %llu (the ranks hold %llu keys together)",
                 gpuprim::dtype_name(idx->dtype), static_cast<unsigned long long>(layout.total() - 1),
                 static_cast<unsigned long long>(layout.total()));
        gpuprim::dist::TopkScratch scratch{};
        void *block = nullptr;
        agreement.confirm([&] {
            scratch = gpuprim::dist::plan_topk_scratch(request, layout, communicator);
            block = distributed_block(ctx, scratch.plan.bytes(), name);
            gpuprim::dist::take_topk_workspace(*ctx.backend, layout, request, scratch, block);
            gpuprim::dist::topk_candidates(*ctx.backend, layout, request, scratch, block);
        });
        gpuprim::dist::topk(*ctx.backend, communicator, layout, request, scratch, block);
    });
}

}  // extern "C"
