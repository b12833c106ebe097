// SPDX-License-Identifier: Apache-2.0
// The argument rules the C entry points (src/api/*_api.cpp) share, and
// guarded(), which runs an entry point's body so that no exception crosses
// the C boundary. Each rule throws (gpuprim::fail) with the message the
// caller reads from gpuprim_context_last_error().
#pragma once

#include "core/context.h"
#include "core/error.h"
#include "core/float_environment.h"
#include "core/registry.h"

#include <gpuprim/gpuprim.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <type_traits>

namespace gpuprim::api {

// A C caller may pass any int in an enum parameter, but in C++ a value outside
// the enum's range is undefined (UBSan reports the load), so enum arguments
// are read as their bits until they are validated.
template <typename Enum>
int enum_bits(const Enum &value) {
    std::underlying_type_t<Enum> bits;
    std::memcpy(&bits, &value, sizeof bits);
    return static_cast<int>(bits);
}

// Keeps message as the context's last error and returns status.
gpuprim_status_t record(Context &context, gpuprim_status_t status, const char *message);

// Runs body(context) on the live context behind handle, holding the context's
// lock (calls on one context are serialized, so threads may share it), in
// the default floating-point environment (core/float_environment.h), with
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
            const DefaultFloatEnvironment float_environment;  // the caller's is back on return
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

void require(const void *pointer, const char *name);

// Enum arguments must hold one of their type's values, first..last.
template <typename Enum>
void require_enum(const Enum &value, Enum first, Enum last, const char *name, const char *type_name) {
    int bits = enum_bits(value);
    if (bits < static_cast<int>(first) || bits > static_cast<int>(last))
        fail(GPUPRIM_ERROR_INVALID_ENUM, "argument '%s' = %d is not a %s", name, bits, type_name);
}

// By reference: copying an out-of-range enum value is already undefined.
void require_dtype(const gpuprim_dtype_t &dtype, const char *name);
void require_op(const gpuprim_op_t &op);
// A known op that is MIN or MAX (argreduce): INVALID_ENUM for an unknown
// value, INVALID_ARGUMENT naming 'op' for SUM. writer: the call ("argreduce").
void require_min_max_op(const gpuprim_op_t &op, const char *writer);
void require_scan_kind(const gpuprim_scan_kind_t &kind);
void require_order(const gpuprim_order_t &order);
void require_side(const gpuprim_side_t &side);

// count * size in bytes, or OVERFLOW when it does not fit in 64 bits.
uint64_t byte_size(uint64_t count, gpuprim_dtype_t dtype, const char *name);

void require_same_dtype(const Buffer &a, const char *a_name, const Buffer &b, const char *b_name);
void require_same_count(const Buffer &a, const char *a_name, const Buffer &b, const char *b_name);

// Wrapped buffers can alias; an output may be its own input only where the
// operation allows in-place use (same_allowed), and must not partly overlap.
void require_no_overlap(const Buffer &a, const char *a_name, const Buffer &b, const char *b_name, bool same_allowed);

// An output that mirrors its input: same dtype and count, and either the
// input itself (in place) or memory apart from it.
void require_output_for(const Buffer &output, const char *output_name, const Buffer &input, const char *input_name);

// [offset, offset + count) lies inside the buffer.
void require_range(const Buffer &buffer, const char *buffer_name, uint64_t offset, uint64_t count);

// The index dtypes (I32, U32, I64, U64), the largest index a buffer of one
// holds, and the rules for an indices output (writer: "argsort", "top-k").
bool is_index_dtype(gpuprim_dtype_t dtype);
uint64_t largest_index(gpuprim_dtype_t dtype);
void require_index_dtype(const Buffer &indices, const char *writer);
// The last index of `longest` keys fits: keys_phrase names them ("argsort of").
void require_index_fits(const Buffer &indices, uint64_t longest, const char *keys_phrase);

// The largest value an indices output receives fits its dtype (searchsorted:
// the sorted count itself); what: the value's phrase ("searchsorted into").
void require_position_fits(const Buffer &indices, uint64_t largest, const char *what);

// An argument buffer and its name, for the rules over several of them.
struct NamedBuffer {
    const Buffer *buffer;  // nullptr: not given (skipped)
    const char *name;
};

// Outputs that must lie apart from every input and from each other (no in
// place): INVALID_ARGUMENT naming the first overlapping pair.
void require_outputs_apart(const NamedBuffer *outputs, size_t output_count, const NamedBuffer *inputs,
                           size_t input_count);

// An output of the calls whose output size depends on the data: at least
// `least` elements (SIZE_MISMATCH naming it otherwise); phrase says what
// the least is ("the 1000 elements of 'input'").
void require_at_least(const Buffer &output, const char *name, uint64_t least, const char *phrase);

// An index-typed output (positions, starts, lengths, count_out): I32, U32,
// I64 or U64 (DTYPE_MISMATCH), and `largest` (the input's count) fits it
// (INVALID_ARGUMENT). what: the value's phrase ("the 1000 elements of 'input'").
void require_index_output(const Buffer &output, const char *name, uint64_t largest, const char *what);

// Where a data-dependent count goes (gpuprim_select and the like): the host
// pointer, count_out's element 0, or both; at least one (INVALID_ARGUMENT);
// count_out an index dtype that holds `largest` (the input's count), at
// least one element. Its buffer, if given, is put in *count_buffer for the
// overlap checks.
CountSink count_sink(Context &context, uint64_t *count, gpuprim_buffer_t count_out, uint64_t largest,
                     const Buffer **count_buffer);

// How many bytes of a caller's options struct of `size` bytes to read (see
// read_options), or fails; known: this version's size of the struct.
uint64_t options_bytes_to_read(const void *options, uint64_t size, size_t known,
                               std::initializer_list<uint64_t> older_sizes, const char *name, const char *init_name);

// The caller's options struct (context or sort options, or segments),
// defaults where NULL; `name` is the argument messages name ("options",
// "segments"). A struct from a newer header (struct_size larger than this
// version's) is accepted when every byte this version does not know is
// zero, i.e. the newer fields keep their defaults. One of an older release's
// size (older_sizes: each release's fields are a prefix of this version's)
// gives the fields it lacks their defaults.
template <typename Options>
Options read_options(const Options *options, const char *name, void (*init)(Options *), const char *init_name,
                     std::initializer_list<uint64_t> older_sizes = {}) {
    Options chosen;
    init(&chosen);
    if (!options) return chosen;
    const uint64_t bytes =
        options_bytes_to_read(options, options->struct_size, sizeof chosen, older_sizes, name, init_name);
    // All of it, or an older release's fields (the newer ones keep their defaults).
    std::memcpy(&chosen, options, bytes);
    chosen.struct_size = sizeof chosen;
    return chosen;
}

// An options struct's `reserved` field (named so that the struct has no
// padding a newer header could put a field in unseen): INVALID_ARGUMENT
// unless 0. field: as messages name it ("options->reserved").
void require_reserved_zero(uint64_t value, const char *field);

// Copies message into the caller's buffer (NULL or capacity 0: nothing).
void copy_message(char *destination, size_t capacity, const char *message);

}  // namespace gpuprim::api
