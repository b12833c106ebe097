// SPDX-License-Identifier: Apache-2.0
// The C entry points: validate every argument, then hand over to core and the
// backend. Nothing below lets an exception cross the C boundary.
#include "core/checked_size.h"
#include "core/context.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/registry.h"

#include <gpuprim/gpuprim.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <type_traits>

using gpuprim::Buffer;
using gpuprim::Context;
using gpuprim::fail;
using gpuprim::Registry;

namespace {

// "MAJOR.MINOR.PATCH", built from the header's version macros.
#define GPUPRIM_API_STRINGIZE_(x) #x
#define GPUPRIM_API_STRINGIZE(x) GPUPRIM_API_STRINGIZE_(x)
constexpr const char *kVersionString =
    GPUPRIM_API_STRINGIZE(GPUPRIM_VERSION_MAJOR) "." GPUPRIM_API_STRINGIZE(GPUPRIM_VERSION_MINOR) "."
    GPUPRIM_API_STRINGIZE(GPUPRIM_VERSION_PATCH);
#undef GPUPRIM_API_STRINGIZE
#undef GPUPRIM_API_STRINGIZE_

// A C caller may pass any int in an enum parameter, but in C++ a value outside
// the enum's range is undefined (UBSan reports the load), so enum arguments
// are read as their bits until they are validated.
template <typename Enum>
int enum_bits(const Enum &value) {
    std::underlying_type_t<Enum> bits;
    std::memcpy(&bits, &value, sizeof bits);
    return static_cast<int>(bits);
}

gpuprim_status_t record(Context &context, gpuprim_status_t status, const char *message) {
    context.set_last_error(message);
    return status;
}

// Runs body(context) on the live context behind handle, holding the context's
// lock (calls on one context are serialized, so threads may share it), with
// every failure mapped to a status and message. The handle is looked up in
// the registry, never read through.
// function: the entry point's name, for the message of an allocation failure
// that has no more specific one.
template <typename Body>
gpuprim_status_t guarded(const char *function, gpuprim_context_t handle, Body &&body) {
    if (!handle) return GPUPRIM_ERROR_NULL_POINTER;
    std::shared_ptr<Context> context;
    try {
        context = Registry::instance().find_context(handle);
        if (!context) return GPUPRIM_ERROR_INVALID_HANDLE;
        std::lock_guard<std::mutex> lock(context->mutex);
        // Destroyed by another thread while this call waited for the lock.
        if (context->destroyed) return GPUPRIM_ERROR_INVALID_HANDLE;
        try {
            body(*context);
            return GPUPRIM_SUCCESS;
        } catch (const gpuprim::Error &error) {
            return record(*context, error.status(), error.what());
        } catch (const std::bad_alloc &) {
            // Host bookkeeping (a segment plan, a buffer table entry): sized
            // allocations say what they were for (host_array); the rest
            // name the call.
            char message[160];
            std::snprintf(message, sizeof message,
                          "%s: cannot allocate host memory for libgpuprim's bookkeeping of the call", function);
            return record(*context, GPUPRIM_ERROR_OUT_OF_MEMORY, message);
        } catch (const std::exception &error) {
            return record(*context, GPUPRIM_ERROR_INTERNAL, error.what());
        } catch (...) {
            return record(*context, GPUPRIM_ERROR_INTERNAL, "unknown internal exception");
        }
    } catch (...) {
        // Locking failed (std::system_error): nothing ran, there is no message to keep.
        return GPUPRIM_ERROR_INTERNAL;
    }
}

void require(const void *pointer, const char *name) {
    if (!pointer) fail(GPUPRIM_ERROR_NULL_POINTER, "argument '%s' is NULL", name);
}

// Enum arguments must hold one of their type's values, first..last.
template <typename Enum>
void require_enum(const Enum &value, Enum first, Enum last, const char *name,
                  const char *type_name) {
    int bits = enum_bits(value);
    if (bits < static_cast<int>(first) || bits > static_cast<int>(last))
        fail(GPUPRIM_ERROR_INVALID_ENUM, "argument '%s' = %d is not a %s", name, bits, type_name);
}

// By reference: copying an out-of-range enum value is already undefined.
void require_dtype(const gpuprim_dtype_t &dtype, const char *name) {
    require_enum(dtype, gpuprim::kDtypeFirst, gpuprim::kDtypeLast, name, "gpuprim_dtype_t");
}

void require_op(const gpuprim_op_t &op) {
    require_enum(op, GPUPRIM_OP_SUM, GPUPRIM_OP_MAX, "op", "gpuprim_op_t");
}

// count * size in bytes, or OVERFLOW when it does not fit in 64 bits.
uint64_t byte_size(uint64_t count, gpuprim_dtype_t dtype, const char *name) {
    uint64_t bytes = 0;
    if (!gpuprim::multiply_fits(count, gpuprim::dtype_size(dtype), &bytes))
        fail(GPUPRIM_ERROR_OVERFLOW,
             "argument '%s' = %llu elements of %s is more than 2^64 bytes", name,
             static_cast<unsigned long long>(count), gpuprim::dtype_name(dtype));
    return bytes;
}

void require_same_dtype(const Buffer &a, const char *a_name, const Buffer &b,
                        const char *b_name) {
    if (a.dtype != b.dtype)
        fail(GPUPRIM_ERROR_DTYPE_MISMATCH, "'%s' is %s but '%s' is %s", a_name,
             gpuprim::dtype_name(a.dtype), b_name, gpuprim::dtype_name(b.dtype));
}

void require_same_count(const Buffer &a, const char *a_name, const Buffer &b,
                        const char *b_name) {
    if (a.count != b.count)
        fail(GPUPRIM_ERROR_SIZE_MISMATCH, "'%s' has %llu elements but '%s' has %llu", a_name,
             static_cast<unsigned long long>(a.count), b_name,
             static_cast<unsigned long long>(b.count));
}

bool overlap(const Buffer &a, const Buffer &b) {
    if (a.bytes() == 0 || b.bytes() == 0) return false;
    auto a_begin = reinterpret_cast<uintptr_t>(a.data);
    auto b_begin = reinterpret_cast<uintptr_t>(b.data);
    return a_begin < b_begin + b.bytes() && b_begin < a_begin + a.bytes();
}

// Wrapped buffers can alias; an output may be its own input only where the
// operation allows in-place use (same_allowed), and must not partly overlap.
void require_no_overlap(const Buffer &a, const char *a_name, const Buffer &b,
                        const char *b_name, bool same_allowed) {
    bool same = a.data == b.data && a.count == b.count;
    if (same && same_allowed) return;
    if (&a == &b || overlap(a, b))
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "'%s' and '%s' overlap in memory%s", a_name, b_name,
             same_allowed ? " without being the same buffer" : "");
}

// An output that mirrors its input: same dtype and count, and either the
// input itself (in place) or memory apart from it.
void require_output_for(const Buffer &output, const char *output_name,
                        const Buffer &input, const char *input_name) {
    require_same_dtype(input, input_name, output, output_name);
    require_same_count(input, input_name, output, output_name);
    require_no_overlap(input, input_name, output, output_name, true);
}

void require_range(const Buffer &buffer, uint64_t offset, uint64_t count) {
    if (offset > buffer.count || count > buffer.count - offset)
        fail(GPUPRIM_ERROR_OUT_OF_RANGE,
             "range [%llu, %llu + %llu) is outside the buffer of %llu elements",
             static_cast<unsigned long long>(offset), static_cast<unsigned long long>(offset),
             static_cast<unsigned long long>(count),
             static_cast<unsigned long long>(buffer.count));
}

// The caller's options struct (context or sort options, or segments),
// defaults where NULL; `name` is the argument messages name ("options",
// "segments"). A struct from a newer header (struct_size larger than this
// version's) is accepted when every byte this version does not know is
// zero, i.e. the newer fields keep their defaults. One of an older release's
// size (oldest_size: its fields are a prefix of this version's) gives the
// fields it lacks their defaults.
template <typename Options>
Options read_options(const Options *options, const char *name, void (*init)(Options *), const char *init_name,
                     uint64_t oldest_size = sizeof(Options)) {
    Options chosen;
    init(&chosen);
    if (!options) return chosen;
    constexpr uint64_t kLargestAccepted = 4096;
    const uint64_t size = options->struct_size;
    if ((size < sizeof chosen && size != oldest_size) || size > kLargestAccepted) {
        if (oldest_size != sizeof chosen)
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
                 "%s->struct_size = %llu, expected %zu (or 0.2.0's %llu, or a newer header's "
                 "larger size): initialize it with %s()",
                 name, static_cast<unsigned long long>(size), sizeof chosen,
                 static_cast<unsigned long long>(oldest_size), init_name);
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
             "%s->struct_size = %llu, expected %zu (or a newer header's larger size): "
             "initialize it with %s()",
             name, static_cast<unsigned long long>(size), sizeof chosen, init_name);
    }
    if (size < sizeof chosen) {
        // An older release's struct: its fields; the newer ones keep their defaults.
        std::memcpy(&chosen, options, size);
        chosen.struct_size = sizeof chosen;
        return chosen;
    }
    const auto *bytes = reinterpret_cast<const unsigned char *>(options);
    for (uint64_t i = sizeof chosen; i < size; ++i)
        if (bytes[i] != 0)
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
                 "%s->struct_size = %llu: byte %llu, past the %zu bytes this version "
                 "(libgpuprim %s) knows, is not zero: a newer field was set that this version "
                 "cannot honour",
                 name, static_cast<unsigned long long>(size), static_cast<unsigned long long>(i),
                 sizeof chosen, kVersionString);
    std::memcpy(&chosen, options, sizeof chosen);
    chosen.struct_size = sizeof chosen;
    return chosen;
}

void copy_message(char *destination, size_t capacity, const char *message) {
    if (!destination || capacity == 0) return;
    std::snprintf(destination, capacity, "%s", message);
}

}  // namespace

extern "C" {

const char *gpuprim_get_error_string(gpuprim_status_t status) {
    switch (enum_bits(status)) {
    case GPUPRIM_SUCCESS: return "success";
    case GPUPRIM_ERROR_NULL_POINTER: return "NULL pointer argument";
    case GPUPRIM_ERROR_INVALID_HANDLE: return "invalid handle";
    case GPUPRIM_ERROR_CONTEXT_MISMATCH: return "buffer belongs to another context";
    case GPUPRIM_ERROR_INVALID_ENUM: return "unknown enum value";
    case GPUPRIM_ERROR_DTYPE_MISMATCH: return "dtype mismatch";
    case GPUPRIM_ERROR_SIZE_MISMATCH: return "size mismatch";
    case GPUPRIM_ERROR_OUT_OF_RANGE: return "range out of bounds";
    case GPUPRIM_ERROR_OVERFLOW: return "size overflow";
    case GPUPRIM_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case GPUPRIM_ERROR_OUT_OF_MEMORY: return "out of memory";
    case GPUPRIM_ERROR_BACKEND_UNAVAILABLE: return "backend unavailable";
    case GPUPRIM_ERROR_DEVICE: return "device error";
    case GPUPRIM_ERROR_INTERNAL: return "internal error";
    }
    return "unknown status";
}

uint32_t gpuprim_version_number(void) { return GPUPRIM_VERSION_NUMBER; }

const char *gpuprim_version_string(void) { return kVersionString; }

size_t gpuprim_dtype_size(gpuprim_dtype_t dtype) {
    return gpuprim::dtype_is_valid(enum_bits(dtype)) ? gpuprim::dtype_size(dtype) : 0;
}

void gpuprim_context_options_init(gpuprim_context_options_t *options) {
    if (!options) return;
    std::memset(options, 0, sizeof *options);
    options->struct_size = sizeof *options;
    options->backend = GPUPRIM_BACKEND_AUTO;
    options->device_ordinal = 0;
    options->cuda_stream = nullptr;
    options->cpu_threads = 0;
}

gpuprim_status_t gpuprim_context_create(const gpuprim_context_options_t *options,
                                        gpuprim_context_t *context, char *error_message,
                                        size_t error_message_capacity) {
    copy_message(error_message, error_message_capacity, "");
    if (!context) {
        copy_message(error_message, error_message_capacity, "argument 'context' is NULL");
        return GPUPRIM_ERROR_NULL_POINTER;
    }
    *context = nullptr;
    try {
        // 0.2.0's struct ends after cuda_stream (cpu_threads came later).
        constexpr uint64_t kOptions020Bytes = offsetof(gpuprim_context_options_t, cpu_threads);
        static_assert(kOptions020Bytes == 24, "0.2.0's options struct is 24 bytes");
        gpuprim_context_options_t chosen = read_options(options, "options", gpuprim_context_options_init,
                                                        "gpuprim_context_options_init", kOptions020Bytes);
        if (chosen.backend < GPUPRIM_BACKEND_AUTO || chosen.backend > GPUPRIM_BACKEND_CUDA)
            fail(GPUPRIM_ERROR_INVALID_ENUM, "options->backend = %d is not a gpuprim_backend_t",
                 static_cast<int>(chosen.backend));
        // Checked on every backend, so options valid on one machine are valid on all.
        if (chosen.device_ordinal < 0)
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "options->device_ordinal = %d is negative",
                 static_cast<int>(chosen.device_ordinal));
        if (chosen.cpu_threads < 0)
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
                 "options->cpu_threads = %d is negative (0 means every core)",
                 static_cast<int>(chosen.cpu_threads));
        auto backend = gpuprim::create_backend(static_cast<gpuprim_backend_t>(chosen.backend),
                                               chosen.device_ordinal, chosen.cuda_stream,
                                               chosen.cpu_threads);
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

gpuprim_status_t gpuprim_context_get_backend(gpuprim_context_t context,
                                             gpuprim_backend_t *backend) {
    return guarded(__func__, context, [&](Context &ctx) {
        require(backend, "backend");
        *backend = ctx.backend->kind();
    });
}

gpuprim_status_t gpuprim_context_get_device(gpuprim_context_t context, int32_t *ordinal,
                                            char *name, size_t name_capacity) {
    return guarded(__func__, context, [&](Context &ctx) {
        if (ordinal) *ordinal = ctx.backend->device_ordinal();
        copy_message(name, name_capacity, ctx.backend->device_name());
    });
}

gpuprim_status_t gpuprim_context_synchronize(gpuprim_context_t context) {
    return guarded(__func__, context, [&](Context &ctx) { ctx.backend->synchronize(); });
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
        *bytes = ctx.backend->workspace_bytes();
    });
}

gpuprim_status_t gpuprim_context_release_workspace(gpuprim_context_t context) {
    return guarded(__func__, context, [&](Context &ctx) {
        ctx.backend->synchronize();
        ctx.backend->release_workspace();
    });
}

gpuprim_status_t gpuprim_buffer_create(gpuprim_context_t context, gpuprim_dtype_t dtype,
                                       uint64_t count, gpuprim_buffer_t *buffer) {
    return guarded(__func__, context, [&](Context &ctx) {
        require(buffer, "buffer");
        require_dtype(dtype, "dtype");
        uint64_t bytes = byte_size(count, dtype, "count");
        void *data = ctx.backend->allocate(bytes);
        try {
            *buffer = ctx.add_buffer(dtype, count, data, true);
        } catch (...) {
            ctx.backend->deallocate(data);
            throw;
        }
    });
}

gpuprim_status_t gpuprim_buffer_wrap(gpuprim_context_t context, gpuprim_dtype_t dtype, void *data,
                                     uint64_t count, gpuprim_buffer_t *buffer) {
    return guarded(__func__, context, [&](Context &ctx) {
        require(buffer, "buffer");
        require_dtype(dtype, "dtype");
        uint64_t bytes = byte_size(count, dtype, "count");
        if (count > 0) {
            require(data, "data");
            if (reinterpret_cast<uintptr_t>(data) % gpuprim::dtype_size(dtype) != 0)
                fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
                     "argument 'data' = %p is not aligned to the %zu-byte %s element size", data,
                     gpuprim::dtype_size(dtype), gpuprim::dtype_name(dtype));
            if (reinterpret_cast<uintptr_t>(data) > UINTPTR_MAX - bytes)
                fail(GPUPRIM_ERROR_OVERFLOW, "wrapped range of %llu bytes at %p passes the end "
                     "of the address space", static_cast<unsigned long long>(bytes), data);
            ctx.backend->check_wrappable(data, bytes);
        }
        *buffer = ctx.add_buffer(dtype, count, count > 0 ? data : nullptr, false);
    });
}

gpuprim_status_t gpuprim_buffer_destroy(gpuprim_context_t context, gpuprim_buffer_t buffer) {
    return guarded(__func__, context, [&](Context &ctx) {
        if (!buffer) return;
        Buffer &resolved = ctx.resolve(buffer, "buffer");
        // Work queued on the buffer must finish before its memory goes back;
        // nothing changes when that fails, and nothing after it can fail.
        if (resolved.owned) ctx.backend->synchronize();
        ctx.destroy_buffer(buffer);
    });
}

gpuprim_status_t gpuprim_buffer_get_info(gpuprim_context_t context, gpuprim_buffer_t buffer,
                                         gpuprim_dtype_t *dtype, uint64_t *count, void **data) {
    return guarded(__func__, context, [&](Context &ctx) {
        Buffer &resolved = ctx.resolve(buffer, "buffer");
        if (dtype) *dtype = resolved.dtype;
        if (count) *count = resolved.count;
        if (data) *data = resolved.data;
    });
}

gpuprim_status_t gpuprim_buffer_upload(gpuprim_context_t context, gpuprim_buffer_t buffer,
                                       uint64_t offset, const void *host_data, uint64_t count) {
    return guarded(__func__, context, [&](Context &ctx) {
        Buffer &resolved = ctx.resolve(buffer, "buffer");
        require_range(resolved, offset, count);
        if (count == 0) return;
        require(host_data, "host_data");
        size_t size = gpuprim::dtype_size(resolved.dtype);
        ctx.backend->upload(static_cast<char *>(resolved.data) + offset * size, host_data,
                            count * size);
    });
}

gpuprim_status_t gpuprim_buffer_download(gpuprim_context_t context, gpuprim_buffer_t buffer,
                                         uint64_t offset, void *host_data, uint64_t count) {
    return guarded(__func__, context, [&](Context &ctx) {
        Buffer &resolved = ctx.resolve(buffer, "buffer");
        require_range(resolved, offset, count);
        if (count == 0) return;
        require(host_data, "host_data");
        size_t size = gpuprim::dtype_size(resolved.dtype);
        ctx.backend->download(host_data, static_cast<const char *>(resolved.data) + offset * size,
                              count * size);
    });
}

gpuprim_status_t gpuprim_reduce(gpuprim_context_t context, gpuprim_op_t op,
                                gpuprim_buffer_t input, void *result) {
    return guarded(__func__, context, [&](Context &ctx) {
        require_op(op);
        Buffer &in = ctx.resolve(input, "input");
        require(result, "result");
        ctx.backend->reduce(op, in.dtype, in.data, in.count, result, true);
    });
}

// The checks shared by the *_to_buffer variants: one element of the input's dtype.
static void require_result_buffer(const Buffer &result, const Buffer &input,
                                  const char *input_name) {
    require_same_dtype(result, "result", input, input_name);
    if (result.count == 0)
        fail(GPUPRIM_ERROR_SIZE_MISMATCH, "'result' has no elements; it needs at least one");
    // Only element 0 is written, so only that element must not alias the input.
    Buffer first = result;
    first.count = 1;
    require_no_overlap(first, "result", input, input_name, false);
}

gpuprim_status_t gpuprim_reduce_to_buffer(gpuprim_context_t context, gpuprim_op_t op,
                                          gpuprim_buffer_t input, gpuprim_buffer_t result) {
    return guarded(__func__, context, [&](Context &ctx) {
        require_op(op);
        Buffer &in = ctx.resolve(input, "input");
        Buffer &out = ctx.resolve(result, "result");
        require_result_buffer(out, in, "input");
        ctx.backend->reduce(op, in.dtype, in.data, in.count, out.data, false);
    });
}

static void require_dot_operands(const Buffer &a, const Buffer &b) {
    require_same_dtype(a, "a", b, "b");
    require_same_count(a, "a", b, "b");
}

gpuprim_status_t gpuprim_dot(gpuprim_context_t context, gpuprim_buffer_t a, gpuprim_buffer_t b,
                             void *result) {
    return guarded(__func__, context, [&](Context &ctx) {
        Buffer &left = ctx.resolve(a, "a");
        Buffer &right = ctx.resolve(b, "b");
        require_dot_operands(left, right);
        require(result, "result");
        ctx.backend->dot(left.dtype, left.data, right.data, left.count, result, true);
    });
}

gpuprim_status_t gpuprim_dot_to_buffer(gpuprim_context_t context, gpuprim_buffer_t a,
                                       gpuprim_buffer_t b, gpuprim_buffer_t result) {
    return guarded(__func__, context, [&](Context &ctx) {
        Buffer &left = ctx.resolve(a, "a");
        Buffer &right = ctx.resolve(b, "b");
        Buffer &out = ctx.resolve(result, "result");
        require_dot_operands(left, right);
        require_result_buffer(out, left, "a");
        require_result_buffer(out, right, "b");
        ctx.backend->dot(left.dtype, left.data, right.data, left.count, out.data, false);
    });
}

gpuprim_status_t gpuprim_scan(gpuprim_context_t context, gpuprim_op_t op,
                              gpuprim_scan_kind_t kind, gpuprim_buffer_t input,
                              gpuprim_buffer_t output) {
    return guarded(__func__, context, [&](Context &ctx) {
        require_op(op);
        require_enum(kind, GPUPRIM_SCAN_INCLUSIVE, GPUPRIM_SCAN_EXCLUSIVE, "kind",
                     "gpuprim_scan_kind_t");
        Buffer &in = ctx.resolve(input, "input");
        Buffer &out = ctx.resolve(output, "output");
        require_output_for(out, "output", in, "input");
        if (in.count == 0) return;
        ctx.backend->scan(op, kind, in.dtype, in.data, out.data, in.count);
    });
}

void gpuprim_sort_options_init(gpuprim_sort_options_t *options) {
    if (!options) return;
    std::memset(options, 0, sizeof *options);
    options->struct_size = sizeof *options;
    options->order = GPUPRIM_ORDER_ASCENDING;
    options->begin_bit = 0;
    options->end_bit = 0;
}

}  // extern "C"

namespace {

// The sort request that options and keys ask for (order, bit range), without
// its values.
gpuprim::SortRequest sort_request_for(const gpuprim_sort_options_t *options, const Buffer &keys_in,
                                      const Buffer *keys_out) {
    const gpuprim_sort_options_t chosen =
        read_options(options, "options", gpuprim_sort_options_init, "gpuprim_sort_options_init");
    if (chosen.order != GPUPRIM_ORDER_ASCENDING && chosen.order != GPUPRIM_ORDER_DESCENDING)
        fail(GPUPRIM_ERROR_INVALID_ENUM, "options->order = %d is not a gpuprim_order_t",
             static_cast<int>(chosen.order));
    gpuprim::SortRequest request{};
    request.key_kind = gpuprim::key_kind(keys_in.dtype);
    request.key_bytes = static_cast<uint32_t>(gpuprim::dtype_size(keys_in.dtype));
    const uint32_t key_bits = request.key_bytes * 8;
    const uint32_t end_bit = chosen.end_bit == 0 ? key_bits : chosen.end_bit;
    if (chosen.begin_bit >= end_bit || end_bit > key_bits)
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
             "options->begin_bit = %u and options->end_bit = %u: the bit range must satisfy "
             "begin_bit < end_bit <= %u, the bits of a %s key (end_bit 0 means %u)",
             chosen.begin_bit, chosen.end_bit, key_bits, gpuprim::dtype_name(keys_in.dtype), key_bits);
    request.begin_bit = chosen.begin_bit;
    request.end_bit = end_bit;
    request.descending = chosen.order == GPUPRIM_ORDER_DESCENDING;
    request.keys_in = keys_in.data;
    request.keys_out = keys_out ? keys_out->data : nullptr;
    request.count = keys_in.count;
    return request;
}

// Adds values_in/values_out (both NULL: keys only) to a sort request.
void add_sort_values(Context &ctx, gpuprim::SortRequest &request, const Buffer &kin, const Buffer &kout,
                     gpuprim_buffer_t values_in, gpuprim_buffer_t values_out) {
    if ((values_in == nullptr) != (values_out == nullptr))
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
             "'values_in' and 'values_out' must both be given or both be NULL");
    if (!values_in) return;
    Buffer &vin = ctx.resolve(values_in, "values_in");
    Buffer &vout = ctx.resolve(values_out, "values_out");
    require_same_count(kin, "keys_in", vin, "values_in");
    require_output_for(vout, "values_out", vin, "values_in");
    require_no_overlap(kin, "keys_in", vin, "values_in", false);
    require_no_overlap(kin, "keys_in", vout, "values_out", false);
    require_no_overlap(kout, "keys_out", vin, "values_in", false);
    require_no_overlap(kout, "keys_out", vout, "values_out", false);
    request.value_bytes = static_cast<uint32_t>(gpuprim::dtype_size(vin.dtype));
    request.values_in = vin.data;
    request.values_out = vout.data;
}

bool is_index_dtype(gpuprim_dtype_t dtype) {
    return dtype == GPUPRIM_DTYPE_I32 || dtype == GPUPRIM_DTYPE_U32 || dtype == GPUPRIM_DTYPE_I64 ||
           dtype == GPUPRIM_DTYPE_U64;
}

// The largest index a buffer of an index dtype holds.
uint64_t largest_index(gpuprim_dtype_t dtype) {
    switch (dtype) {
    case GPUPRIM_DTYPE_I32: return INT32_MAX;
    case GPUPRIM_DTYPE_U32: return UINT32_MAX;
    case GPUPRIM_DTYPE_I64: return INT64_MAX;
    default: return UINT64_MAX;
    }
}

// The argsort part of a request: keys_out (NULL or the sorted keys) and the
// generated indices. longest: the most elements one segment (or the whole
// input) can have, whose last index must fit the indices' dtype (offsets:
// the data's count here; the backend checks the real longest segment).
void add_argsort_indices(Context &ctx, gpuprim::SortRequest &request, const Buffer &kin, Buffer *kout,
                         gpuprim_buffer_t indices, uint64_t longest, bool longest_is_exact) {
    Buffer &idx = ctx.resolve(indices, "indices");
    if (!is_index_dtype(idx.dtype))
        fail(GPUPRIM_ERROR_DTYPE_MISMATCH, "'indices' is %s; argsort writes I32, U32, I64 or U64 indices",
             gpuprim::dtype_name(idx.dtype));
    require_same_count(kin, "keys_in", idx, "indices");
    require_no_overlap(kin, "keys_in", idx, "indices", false);
    if (kout) require_no_overlap(*kout, "keys_out", idx, "indices", false);
    if (longest_is_exact && longest > 0 && longest - 1 > largest_index(idx.dtype))
        fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
             "argsort of %llu keys: index %llu does not fit the %s 'indices' (at most %llu)",
             static_cast<unsigned long long>(longest), static_cast<unsigned long long>(longest - 1),
             gpuprim::dtype_name(idx.dtype), static_cast<unsigned long long>(largest_index(idx.dtype)));
    request.values_are_indices = true;
    request.largest_index = largest_index(idx.dtype);
    request.value_bytes = static_cast<uint32_t>(gpuprim::dtype_size(idx.dtype));
    request.values_in = nullptr;
    request.values_out = idx.data;
}

void segments_defaults(gpuprim_segments_t *segments) { gpuprim_segments_init_rows(segments, 0, 0); }

// What gpuprim_segments_init_offsets(segments, NULL) leaves in both row
// fields: no real rows (they would overflow 64 bits), so a call given these
// segments names the NULL offsets instead of reading "0 rows of 0".
constexpr uint64_t kNullOffsetsMark = UINT64_MAX;

// The layout a segments descriptor gives data of data_count elements: rows
// must cover the data exactly; offsets are checked by the backend.
gpuprim::SegmentLayout segment_layout(Context &ctx, const gpuprim_segments_t *segments, uint64_t data_count) {
    require(segments, "segments");
    const gpuprim_segments_t chosen = read_options(segments, "segments", segments_defaults,
                                                   "gpuprim_segments_init_rows() or gpuprim_segments_init_offsets");
    gpuprim::SegmentLayout layout{};
    layout.data_count = data_count;
    if (!chosen.offsets) {
        const uint64_t rows = chosen.row_count, length = chosen.row_length;
        if (rows == kNullOffsetsMark && length == kNullOffsetsMark)
            fail(GPUPRIM_ERROR_NULL_POINTER,
                 "segments->offsets is NULL: gpuprim_segments_init_offsets() was given no offsets buffer "
                 "(uniform rows are made by gpuprim_segments_init_rows())");
        uint64_t covered = 0;
        if (!gpuprim::multiply_fits(rows, length, &covered))
            fail(GPUPRIM_ERROR_SIZE_MISMATCH,  // the header lists SIZE_MISMATCH (rows not covering the data), not OVERFLOW
                 "segments: %llu rows of %llu elements overflow 64 bits, so they cannot cover the data",
                 static_cast<unsigned long long>(rows), static_cast<unsigned long long>(length));
        if (covered != data_count)
            fail(GPUPRIM_ERROR_SIZE_MISMATCH,
                 "segments: %llu rows of %llu elements are %llu elements, but the data has %llu",
                 static_cast<unsigned long long>(rows), static_cast<unsigned long long>(length),
                 static_cast<unsigned long long>(covered), static_cast<unsigned long long>(data_count));
        layout.segments = rows;
        layout.row_length = length;
        return layout;
    }
    Buffer &offsets = ctx.resolve(chosen.offsets, "segments->offsets");
    if (!is_index_dtype(offsets.dtype))
        fail(GPUPRIM_ERROR_DTYPE_MISMATCH, "'segments->offsets' is %s; offsets are I32, U32, I64 or U64",
             gpuprim::dtype_name(offsets.dtype));
    if (offsets.count == 0)
        fail(GPUPRIM_ERROR_SIZE_MISMATCH,
             "'segments->offsets' has no elements; it needs segment count + 1 (at least 1)");
    layout.segments = offsets.count - 1;
    layout.offsets = offsets.data;
    layout.offset_bytes = static_cast<uint32_t>(gpuprim::dtype_size(offsets.dtype));
    layout.offsets_signed = offsets.dtype == GPUPRIM_DTYPE_I32 || offsets.dtype == GPUPRIM_DTYPE_I64;
    return layout;
}

// The most elements one segment can have: the rows' length (none when there
// are no rows, whatever length they declare), or with offsets the data's
// count (the backend checks the real longest segment).
uint64_t longest_segment_bound(const gpuprim::SegmentLayout &layout, uint64_t data_count) {
    if (layout.offsets) return data_count;
    return layout.segments ? layout.row_length : 0;
}

// Offsets are read by the call: they must not be written by it.
void require_offsets_apart(const gpuprim_segments_t *segments, Context &ctx, const Buffer &output,
                           const char *output_name) {
    if (!segments->offsets) return;
    Buffer &offsets = ctx.resolve(segments->offsets, "segments->offsets");
    require_no_overlap(offsets, "segments->offsets", output, output_name, false);
}

}  // namespace

extern "C" {

gpuprim_status_t gpuprim_sort_with_options(gpuprim_context_t context, gpuprim_buffer_t keys_in,
                                           gpuprim_buffer_t values_in, gpuprim_buffer_t keys_out,
                                           gpuprim_buffer_t values_out,
                                           const gpuprim_sort_options_t *options) {
    return guarded(__func__, context, [&](Context &ctx) {
        Buffer &kin = ctx.resolve(keys_in, "keys_in");
        Buffer &kout = ctx.resolve(keys_out, "keys_out");
        gpuprim::SortRequest request = sort_request_for(options, kin, &kout);
        require_output_for(kout, "keys_out", kin, "keys_in");
        add_sort_values(ctx, request, kin, kout, values_in, values_out);
        if (request.count == 0) return;
        ctx.backend->sort(request);
    });
}

gpuprim_status_t gpuprim_argsort(gpuprim_context_t context, gpuprim_buffer_t keys_in, gpuprim_buffer_t keys_out,
                                 gpuprim_buffer_t indices, const gpuprim_sort_options_t *options) {
    return guarded(__func__, context, [&](Context &ctx) {
        Buffer &kin = ctx.resolve(keys_in, "keys_in");
        Buffer *kout = keys_out ? &ctx.resolve(keys_out, "keys_out") : nullptr;
        gpuprim::SortRequest request = sort_request_for(options, kin, kout);
        if (kout) require_output_for(*kout, "keys_out", kin, "keys_in");
        add_argsort_indices(ctx, request, kin, kout, indices, kin.count, true);
        if (request.count == 0) return;
        ctx.backend->sort(request);
    });
}

void gpuprim_segments_init_rows(gpuprim_segments_t *segments, uint64_t row_count, uint64_t row_length) {
    if (!segments) return;
    std::memset(segments, 0, sizeof *segments);
    segments->struct_size = sizeof *segments;
    segments->offsets = nullptr;
    segments->row_count = row_count;
    segments->row_length = row_length;
}

void gpuprim_segments_init_offsets(gpuprim_segments_t *segments, gpuprim_buffer_t offsets) {
    if (!segments) return;
    gpuprim_segments_init_rows(segments, 0, 0);
    segments->offsets = offsets;
    if (!offsets) segments->row_count = segments->row_length = kNullOffsetsMark;
}

gpuprim_status_t gpuprim_segmented_sort(gpuprim_context_t context, const gpuprim_segments_t *segments,
                                        gpuprim_buffer_t keys_in, gpuprim_buffer_t values_in,
                                        gpuprim_buffer_t keys_out, gpuprim_buffer_t values_out,
                                        const gpuprim_sort_options_t *options) {
    return guarded(__func__, context, [&](Context &ctx) {
        Buffer &kin = ctx.resolve(keys_in, "keys_in");
        Buffer &kout = ctx.resolve(keys_out, "keys_out");
        gpuprim::SortRequest request = sort_request_for(options, kin, &kout);
        require_output_for(kout, "keys_out", kin, "keys_in");
        add_sort_values(ctx, request, kin, kout, values_in, values_out);
        const gpuprim::SegmentLayout layout = segment_layout(ctx, segments, kin.count);
        require_offsets_apart(segments, ctx, kout, "keys_out");
        if (values_out) require_offsets_apart(segments, ctx, ctx.resolve(values_out, "values_out"), "values_out");
        if (layout.segments == 0 && !layout.offsets) return;  // offsets: checked even so
        ctx.backend->segmented_sort(request, layout);
    });
}

gpuprim_status_t gpuprim_segmented_argsort(gpuprim_context_t context, const gpuprim_segments_t *segments,
                                           gpuprim_buffer_t keys_in, gpuprim_buffer_t keys_out,
                                           gpuprim_buffer_t indices, const gpuprim_sort_options_t *options) {
    return guarded(__func__, context, [&](Context &ctx) {
        Buffer &kin = ctx.resolve(keys_in, "keys_in");
        Buffer *kout = keys_out ? &ctx.resolve(keys_out, "keys_out") : nullptr;
        gpuprim::SortRequest request = sort_request_for(options, kin, kout);
        if (kout) require_output_for(*kout, "keys_out", kin, "keys_in");
        const gpuprim::SegmentLayout layout = segment_layout(ctx, segments, kin.count);
        // Rows: the longest segment is known here; offsets: the backend
        // checks the longest segment against the indices' dtype.
        add_argsort_indices(ctx, request, kin, kout, indices, longest_segment_bound(layout, kin.count),
                            layout.offsets == nullptr);
        if (kout) require_offsets_apart(segments, ctx, *kout, "keys_out");
        require_offsets_apart(segments, ctx, ctx.resolve(indices, "indices"), "indices");
        if (layout.segments == 0 && !layout.offsets) return;  // offsets: checked even so
        ctx.backend->segmented_sort(request, layout);
    });
}

gpuprim_status_t gpuprim_segmented_reduce(gpuprim_context_t context, gpuprim_op_t op,
                                          const gpuprim_segments_t *segments, gpuprim_buffer_t input,
                                          gpuprim_buffer_t output) {
    return guarded(__func__, context, [&](Context &ctx) {
        require_op(op);
        Buffer &in = ctx.resolve(input, "input");
        Buffer &out = ctx.resolve(output, "output");
        require_same_dtype(in, "input", out, "output");
        const gpuprim::SegmentLayout layout = segment_layout(ctx, segments, in.count);
        if (out.count != layout.segments)
            fail(GPUPRIM_ERROR_SIZE_MISMATCH, "'output' has %llu elements but there are %llu segments",
                 static_cast<unsigned long long>(out.count), static_cast<unsigned long long>(layout.segments));
        require_no_overlap(in, "input", out, "output", false);
        require_offsets_apart(segments, ctx, out, "output");
        if (layout.segments == 0 && !layout.offsets) return;
        ctx.backend->segmented_reduce(op, in.dtype, layout, in.data, out.data);
    });
}

gpuprim_status_t gpuprim_segmented_scan(gpuprim_context_t context, gpuprim_op_t op, gpuprim_scan_kind_t kind,
                                        const gpuprim_segments_t *segments, gpuprim_buffer_t input,
                                        gpuprim_buffer_t output) {
    return guarded(__func__, context, [&](Context &ctx) {
        require_op(op);
        require_enum(kind, GPUPRIM_SCAN_INCLUSIVE, GPUPRIM_SCAN_EXCLUSIVE, "kind", "gpuprim_scan_kind_t");
        Buffer &in = ctx.resolve(input, "input");
        Buffer &out = ctx.resolve(output, "output");
        require_output_for(out, "output", in, "input");
        const gpuprim::SegmentLayout layout = segment_layout(ctx, segments, in.count);
        require_offsets_apart(segments, ctx, out, "output");
        if (layout.segments == 0 && !layout.offsets) return;
        ctx.backend->segmented_scan(op, kind, in.dtype, layout, in.data, out.data);
    });
}

}  // extern "C"

namespace {

// The top-k request for keys_in: order, outputs (each NULL or exactly
// `slots` elements), and the positions the indices must hold (longest: the
// most elements one segment can have; exact unless offsets, which the
// backend checks).
gpuprim::TopkRequest topk_request_for(Context &ctx, const Buffer &kin, uint64_t k, const gpuprim_order_t &order,
                                      gpuprim_buffer_t keys_out, gpuprim_buffer_t indices, uint64_t slots,
                                      uint64_t longest, bool longest_is_exact) {
    require_enum(order, GPUPRIM_ORDER_ASCENDING, GPUPRIM_ORDER_DESCENDING, "order", "gpuprim_order_t");
    if (!keys_out && !indices)
        fail(GPUPRIM_ERROR_NULL_POINTER, "'keys_out' and 'indices' are both NULL: top-k needs one of them to write");
    gpuprim::TopkRequest request{};
    request.key_kind = gpuprim::key_kind(kin.dtype);
    request.key_bytes = static_cast<uint32_t>(gpuprim::dtype_size(kin.dtype));
    request.descending = enum_bits(order) == GPUPRIM_ORDER_DESCENDING;
    request.keys_in = kin.data;
    request.k = k;
    Buffer *kout = keys_out ? &ctx.resolve(keys_out, "keys_out") : nullptr;
    Buffer *idx = indices ? &ctx.resolve(indices, "indices") : nullptr;
    if (kout) {
        require_same_dtype(kin, "keys_in", *kout, "keys_out");
        if (kout->count != slots)
            fail(GPUPRIM_ERROR_SIZE_MISMATCH, "'keys_out' has %llu elements; top-k writes %llu",
                 static_cast<unsigned long long>(kout->count), static_cast<unsigned long long>(slots));
        require_no_overlap(kin, "keys_in", *kout, "keys_out", false);
        request.keys_out = kout->data;
    }
    if (idx) {
        if (!is_index_dtype(idx->dtype))
            fail(GPUPRIM_ERROR_DTYPE_MISMATCH, "'indices' is %s; top-k writes I32, U32, I64 or U64 indices",
                 gpuprim::dtype_name(idx->dtype));
        if (idx->count != slots)
            fail(GPUPRIM_ERROR_SIZE_MISMATCH, "'indices' has %llu elements; top-k writes %llu",
                 static_cast<unsigned long long>(idx->count), static_cast<unsigned long long>(slots));
        require_no_overlap(kin, "keys_in", *idx, "indices", false);
        if (kout) require_no_overlap(*kout, "keys_out", *idx, "indices", false);
        if (longest_is_exact && longest > 0 && longest - 1 > largest_index(idx->dtype))
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT,
                 "top-k over %llu keys: index %llu does not fit the %s 'indices' (at most %llu)",
                 static_cast<unsigned long long>(longest), static_cast<unsigned long long>(longest - 1),
                 gpuprim::dtype_name(idx->dtype), static_cast<unsigned long long>(largest_index(idx->dtype)));
        request.indices = idx->data;
        request.index_bytes = static_cast<uint32_t>(gpuprim::dtype_size(idx->dtype));
        request.largest_index = largest_index(idx->dtype);
    }
    return request;
}

}  // namespace

extern "C" {

gpuprim_status_t gpuprim_topk(gpuprim_context_t context, gpuprim_buffer_t keys_in, uint64_t k,
                              gpuprim_order_t order, gpuprim_buffer_t keys_out, gpuprim_buffer_t indices) {
    return guarded(__func__, context, [&](Context &ctx) {
        Buffer &kin = ctx.resolve(keys_in, "keys_in");
        if (k > kin.count)
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "k = %llu is more than the %llu keys of 'keys_in'",
                 static_cast<unsigned long long>(k), static_cast<unsigned long long>(kin.count));
        const gpuprim::TopkRequest request =
            topk_request_for(ctx, kin, k, order, keys_out, indices, k, kin.count, true);
        if (k == 0) return;
        gpuprim::SegmentLayout layout{};
        layout.segments = 1;
        layout.row_length = kin.count;
        layout.data_count = kin.count;
        ctx.backend->topk(request, layout);
    });
}

gpuprim_status_t gpuprim_segmented_topk(gpuprim_context_t context, const gpuprim_segments_t *segments,
                                        gpuprim_buffer_t keys_in, uint64_t k, gpuprim_order_t order,
                                        gpuprim_buffer_t keys_out, gpuprim_buffer_t indices) {
    return guarded(__func__, context, [&](Context &ctx) {
        Buffer &kin = ctx.resolve(keys_in, "keys_in");
        const gpuprim::SegmentLayout layout = segment_layout(ctx, segments, kin.count);
        if (!layout.offsets && k > layout.row_length)
            fail(GPUPRIM_ERROR_INVALID_ARGUMENT, "k = %llu is more than the rows' length, %llu",
                 static_cast<unsigned long long>(k), static_cast<unsigned long long>(layout.row_length));
        uint64_t slots = 0;
        if (!gpuprim::multiply_fits(layout.segments, k, &slots))
            fail(GPUPRIM_ERROR_SIZE_MISMATCH, "%llu segments of k = %llu results overflow 64 bits",
                 static_cast<unsigned long long>(layout.segments), static_cast<unsigned long long>(k));
        // Rows: the longest segment is known here; offsets: the backend
        // checks the longest segment against the indices' dtype.
        const gpuprim::TopkRequest request =
            topk_request_for(ctx, kin, k, order, keys_out, indices, slots,
                             longest_segment_bound(layout, kin.count), layout.offsets == nullptr);
        if (keys_out) require_offsets_apart(segments, ctx, ctx.resolve(keys_out, "keys_out"), "keys_out");
        if (indices) require_offsets_apart(segments, ctx, ctx.resolve(indices, "indices"), "indices");
        if ((layout.segments == 0 || k == 0) && !layout.offsets) return;  // offsets: checked even so
        ctx.backend->topk(request, layout);
    });
}

gpuprim_status_t gpuprim_sort(gpuprim_context_t context, gpuprim_buffer_t keys_in,
                              gpuprim_buffer_t values_in, gpuprim_buffer_t keys_out,
                              gpuprim_buffer_t values_out, gpuprim_order_t order) {
    // The order is checked here, by reference, so that the message names this
    // function's argument; the options path checks it again.
    {
        const int bits = enum_bits(order);
        if (bits < GPUPRIM_ORDER_ASCENDING || bits > GPUPRIM_ORDER_DESCENDING) {
            return guarded(__func__, context, [&](Context &) {
                fail(GPUPRIM_ERROR_INVALID_ENUM, "argument 'order' = %d is not a gpuprim_order_t", bits);
            });
        }
    }
    gpuprim_sort_options_t options;
    gpuprim_sort_options_init(&options);
    options.order = enum_bits(order);
    return gpuprim_sort_with_options(context, keys_in, values_in, keys_out, values_out, &options);
}

}  // extern "C"
