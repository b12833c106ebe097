// SPDX-License-Identifier: Apache-2.0
// The context entry points: options, create and destroy, queries, the workspace.
#include "api/validate.h"
#include "core/checked_size.h"
#include "core/context.h"
#include "core/registry.h"

#include <gpuprim/gpuprim.h>

#include <cstddef>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>

using gpuprim::Context;
using gpuprim::fail;
using gpuprim::Registry;
using namespace gpuprim::api;  // guarded() and the argument rules

extern "C" {

void gpuprim_context_options_init(gpuprim_context_options_t *options) {
    if (!options) return;
    std::memset(options, 0, sizeof *options);
    options->struct_size = sizeof *options;
    options->backend = GPUPRIM_BACKEND_AUTO;
    options->device_ordinal = 0;
    options->cuda_stream = nullptr;
    options->cpu_threads = 0;
}

gpuprim_status_t gpuprim_context_create(const gpuprim_context_options_t *options, gpuprim_context_t *context,
                                        char *error_message, size_t error_message_capacity) {
    copy_message(error_message, error_message_capacity, "");
    if (!context) {
        copy_message(error_message, error_message_capacity, "argument 'context' is NULL");
        return GPUPRIM_ERROR_NULL_POINTER;
    }
    *context = nullptr;
    try {
        // 0.2.0's struct ends after cuda_stream (cpu_threads came in 0.3.0),
        // 0.3.0's after cpu_threads and its padding (the allocator came later).
        constexpr uint64_t kOptions020Bytes = offsetof(gpuprim_context_options_t, cpu_threads);
        constexpr uint64_t kOptions030Bytes = offsetof(gpuprim_context_options_t, allocate);
        static_assert(kOptions020Bytes == 24, "0.2.0's options struct is 24 bytes");
        static_assert(kOptions030Bytes == 32, "0.3.0's options struct is 32 bytes");
        // No padding: every byte is a named field (reserved fills what was
        // padding before 0.4.0), so a newer header's field cannot hide in one.
        static_assert(sizeof(gpuprim_context_options_t) == 8 + 4 + 4 + 8 + 4 + 4 + 3 * sizeof(void *),
                      "gpuprim_context_options_t has padding");
        gpuprim_context_options_t chosen =
            read_options(options, "options", gpuprim_context_options_init, "gpuprim_context_options_init",
                         {kOptions020Bytes, kOptions030Bytes});
        // 0.3.0's 32 bytes end with padding where reserved is now: not read.
        if (options && options->struct_size < sizeof chosen) chosen.reserved = 0;
        require_reserved_zero(uint64_t(uint32_t(chosen.reserved)), "options->reserved");
        if (chosen.backend < GPUPRIM_BACKEND_AUTO || chosen.backend > GPUPRIM_BACKEND_CUDA)
            fail(GPUPRIM_ERROR_INVALID_ENUM, "options->backend = %d is not a gpuprim_backend_t",
                 static_cast<int>(chosen.backend));
        // Checked on every backend, so options valid on one machine are valid on all.
        if (chosen.device_ordinal < 0)
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "options->device_ordinal = %d is negative",
                 static_cast<int>(chosen.device_ordinal));
        if (chosen.cpu_threads < 0)
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "options->cpu_threads = %d is negative (0 means every core)",
                 static_cast<int>(chosen.cpu_threads));
        if ((chosen.allocate == nullptr) != (chosen.deallocate == nullptr))
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "options->%s is set but options->%s is NULL (set both or neither)",
                 chosen.allocate ? "allocate" : "deallocate", chosen.allocate ? "deallocate" : "allocate");
        const gpuprim::HostAllocator allocator(chosen.allocate, chosen.deallocate, chosen.allocator_user);
        auto backend = gpuprim::create_backend(static_cast<gpuprim_backend_t>(chosen.backend), chosen.device_ordinal,
                                               chosen.cuda_stream, chosen.cpu_threads, allocator);
        *context = Registry::instance().add_context(std::make_shared<Context>(std::move(backend)));
        return GPUPRIM_SUCCESS;
    } catch (const gpuprim::Error &error) {
        copy_message(error_message, error_message_capacity, error.what());
        return error.status();
    } catch (const std::bad_alloc &) {
        copy_message(error_message, error_message_capacity,
                     "gpuprim_context_create: cannot allocate host memory for the context");
        return GPUPRIM_ERROR_OUT_OF_MEMORY;
    } catch (const std::exception &error) {
        copy_message(error_message, error_message_capacity, error.what());
        return GPUPRIM_ERROR_INTERNAL;
    } catch (...) {
        copy_message(error_message, error_message_capacity, "unknown internal exception");
        return GPUPRIM_ERROR_INTERNAL;
    }
}

gpuprim_status_t gpuprim_context_destroy(gpuprim_context_t context) {
    if (!context) return GPUPRIM_SUCCESS;
    // While its stream captures the context stays: waiting for that stream
    // or giving memory back would invalidate the caller's capture. Only
    // that refusal counts here; a device error asking it does not stop the
    // destroy.
    const gpuprim_status_t capturing = guarded(__func__, context, [](Context &ctx) {
        ctx.backend->refuse_during_capture("gpuprim_context_destroy",
                                           "it waits for the device and gives the context's memory back");
    });
    if (capturing == GPUPRIM_ERROR_NOT_CAPTURABLE) return capturing;
    // Unregistered first: no call can find it any more. Calls already inside
    // finish first (the lock); those waiting for it then see `destroyed`.
    std::shared_ptr<Context> removed = Registry::instance().remove_context(context);
    if (!removed) return GPUPRIM_ERROR_INVALID_HANDLE;
    try {
        std::lock_guard<std::mutex> lock(removed->mutex);
        removed->destroyed = true;
        removed->tear_down();
    } catch (...) {
        // Locking failed: the last reference frees everything all the same.
        removed->destroyed = true;
    }
    return GPUPRIM_SUCCESS;
}

gpuprim_status_t gpuprim_context_get_backend(gpuprim_context_t context, gpuprim_backend_t *backend) {
    return guarded(__func__, context, [&](Context &ctx) {
        require(backend, "backend");
        *backend = ctx.backend->kind();
    });
}

gpuprim_status_t gpuprim_context_get_device(gpuprim_context_t context, int32_t *ordinal, char *name,
                                            size_t name_capacity) {
    return guarded(__func__, context, [&](Context &ctx) {
        if (ordinal) *ordinal = ctx.backend->device_ordinal();
        copy_message(name, name_capacity, ctx.backend->device_name());
    });
}

gpuprim_status_t gpuprim_context_synchronize(gpuprim_context_t context) {
    // The wait (refused under its own name while capturing), then what a
    // deferred offsets check found.
    return guarded(__func__, context, [&](Context &ctx) {
        ctx.backend->synchronize();
        ctx.backend->check_deferred();
    });
}

gpuprim_status_t gpuprim_context_set_offsets_check(gpuprim_context_t context, gpuprim_offsets_check_t mode) {
    return guarded(__func__, context, [&](Context &ctx) {
        const int32_t value = enum_bits(mode);
        if (value != GPUPRIM_OFFSETS_CHECK_WAIT && value != GPUPRIM_OFFSETS_CHECK_DEFERRED)
            fail(GPUPRIM_ERROR_INVALID_ENUM,
                 "mode = %d is not a gpuprim_offsets_check_t (GPUPRIM_OFFSETS_CHECK_WAIT = 0 or "
                 "GPUPRIM_OFFSETS_CHECK_DEFERRED = 1)",
                 static_cast<int>(value));
        ctx.backend->set_offsets_check_deferred(value == GPUPRIM_OFFSETS_CHECK_DEFERRED);
    });
}

gpuprim_status_t gpuprim_context_check_deferred(gpuprim_context_t context) {
    return guarded(__func__, context, [&](Context &ctx) { ctx.backend->check_deferred(); });
}

const char *gpuprim_context_last_error(gpuprim_context_t context) {
    // A copy per thread: another thread sharing the context may record a new
    // message while the caller still reads this one.
    thread_local char message[Context::kMessageCapacity];
    std::shared_ptr<Context> found = context ? Registry::instance().find_context(context) : nullptr;
    if (!found) return "invalid context handle";
    try {
        std::lock_guard<std::mutex> lock(found->mutex);
        if (found->destroyed) return "invalid context handle";
        std::memcpy(message, found->last_error(), sizeof message);
    } catch (...) {
        return "the message could not be read (lock failed)";
    }
    return message;
}

gpuprim_status_t gpuprim_context_get_workspace_size(gpuprim_context_t context, uint64_t *bytes) {
    return guarded(__func__, context, [&](Context &ctx) {
        require(bytes, "bytes");
        *bytes = ctx.backend->workspace_bytes() + ctx.distributed_workspace.capacity();
    });
}

gpuprim_status_t gpuprim_context_release_workspace(gpuprim_context_t context) {
    return guarded(__func__, context, [&](Context &ctx) {
        ctx.backend->refuse_during_capture(__func__, "it waits for the device and gives the workspace back");
        ctx.backend->synchronize();
        ctx.backend->release_workspace();
        ctx.distributed_workspace.release();
    });
}

gpuprim_status_t gpuprim_context_reserve_workspace(gpuprim_context_t context, uint64_t bytes, int32_t fix) {
    return guarded(__func__, context, [&](Context &ctx) {
        // The distributed calls' block is counted, and held, with the rest.
        const uint64_t distributed = ctx.distributed_workspace.capacity();
        ctx.backend->reserve_workspace(bytes > distributed ? bytes - distributed : 0, fix != 0);
        ctx.distributed_workspace.hold(fix != 0);
    });
}

namespace {

// The bytes end_workspace_query writes to the caller's struct: all of
// struct_size, which must be at least this version's size and at most 4096
// (a newer header's struct, its unknown tail then zeroed). The struct is an
// output here, so its tail is not read (reserve_workspace_sizes reads it
// by the options' rules).
uint64_t checked_sizes_bytes(uint64_t size) {
    constexpr uint64_t kLargestAccepted = 4096;
    if (size < sizeof(gpuprim_workspace_sizes_t) || size > kLargestAccepted)
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
             "sizes->struct_size = %llu, expected %zu (sizeof(gpuprim_workspace_sizes_t), or a newer header's "
             "larger size)",
             static_cast<unsigned long long>(size), sizeof(gpuprim_workspace_sizes_t));
    return size;
}

}  // namespace

gpuprim_status_t gpuprim_context_begin_workspace_query(gpuprim_context_t context) {
    return guarded(__func__, context, [&](Context &ctx) {
        if (ctx.backend->measuring())
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
                 "gpuprim_context_begin_workspace_query: a workspace query is already open on this context "
                 "(end it with gpuprim_context_end_workspace_query first)");
        ctx.backend->begin_measure();
    });
}

gpuprim_status_t gpuprim_context_end_workspace_query(gpuprim_context_t context, gpuprim_workspace_sizes_t *sizes) {
    return guarded(__func__, context, [&](Context &ctx) {
        if (!ctx.backend->measuring())
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
                 "gpuprim_context_end_workspace_query: no workspace query is open on this context "
                 "(gpuprim_context_begin_workspace_query starts one)");
        // Ended first: a bad argument ends the query too (the header says so).
        const gpuprim::Backend::WorkspaceSizes measured = ctx.backend->end_measure();
        require(sizes, "sizes");
        const uint64_t size = checked_sizes_bytes(sizes->struct_size);
        gpuprim_workspace_sizes_t written;
        std::memset(&written, 0, sizeof written);
        written.struct_size = size;
        written.main_bytes = measured.main_bytes;
        written.side_bytes = measured.side_bytes;
        written.bounded = measured.bounded ? 1 : 0;
        // A newer header's fields past this version's are zero: their defaults.
        std::memset(reinterpret_cast<unsigned char *>(sizes) + sizeof written, 0, size - sizeof written);
        std::memcpy(sizes, &written, sizeof written);
    });
}

gpuprim_status_t gpuprim_context_reserve_workspace_sizes(gpuprim_context_t context,
                                                         const gpuprim_workspace_sizes_t *sizes, int32_t fix) {
    return guarded(__func__, context, [&](Context &ctx) {
        require(sizes, "sizes");
        // The options structs' rules: this size, or a newer header's with its tail zero.
        options_bytes_to_read(sizes, sizes->struct_size, sizeof *sizes, {}, "sizes",
                              "gpuprim_context_end_workspace_query");
        static_assert(sizeof(gpuprim_workspace_sizes_t) == 8 + 8 + 8 + 4 + 4, "gpuprim_workspace_sizes_t has padding");
        require_reserved_zero(uint64_t(uint32_t(sizes->reserved)), "sizes->reserved");
        // Refused here, before either block grows, on both backends (OUT_OF_MEMORY).
        gpuprim::checked_add(sizes->main_bytes, sizes->side_bytes,
                             "the workspace of argument 'sizes' (main_bytes + side_bytes)");
        ctx.backend->reserve_workspace_sizes(sizes->main_bytes, sizes->side_bytes, fix != 0);
        // The distributed calls' block is held with the rest (as reserve_workspace does).
        ctx.distributed_workspace.hold(fix != 0);
    });
}

gpuprim_status_t gpuprim_context_get_stream(gpuprim_context_t context, void **stream) {
    return guarded(__func__, context, [&](Context &ctx) {
        require(stream, "stream");
        *stream = ctx.backend->native_stream();
    });
}

}  // extern "C"
