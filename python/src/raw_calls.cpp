// SPDX-License-Identifier: Apache-2.0
// The C entry points as Python functions of plain values: handles and
// addresses as ints (0 for NULL), enums as ints, the status code as the
// result; out-parameters come back in a tuple after the status. The package's
// Python layer (_core.py) is written over these; nothing here checks more
// than the library does. Generic where the C signature is all values
// (Raw<>: its Python signature follows from gpuprim.h), written out where a
// call takes a struct or gives values back. Library calls run with the GIL
// released.
#include "raw_calls.h"

#include "library.h"

#include <nanobind/nanobind.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>

namespace nb = nanobind;

namespace gpuprim_ext {
// A pointer argument: an int address in [0, 2^64), 0 (or None where the
// argument is declared .none()) for NULL.
struct Address {
    void *pointer = nullptr;
};
}  // namespace gpuprim_ext

namespace nanobind::detail {
template <> struct type_caster<gpuprim_ext::Address> {
    NB_TYPE_CASTER(gpuprim_ext::Address, const_name("int | None"))
    bool from_python(handle source, uint8_t, cleanup_list *) noexcept {
        if (source.is_none()) {
            value.pointer = nullptr;
            return true;
        }
        if (!PyLong_Check(source.ptr())) return false;
        unsigned long long bits = PyLong_AsUnsignedLongLong(source.ptr());
        if (bits == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
            PyErr_Clear();
            return false;
        }
        value.pointer = reinterpret_cast<void *>(static_cast<std::uintptr_t>(bits));
        return true;
    }
    static handle from_cpp(gpuprim_ext::Address address, rv_policy, cleanup_list *) noexcept {
        if (!address.pointer) return none().release();
        return PyLong_FromUnsignedLongLong(reinterpret_cast<std::uintptr_t>(address.pointer));
    }
};
}  // namespace nanobind::detail

namespace gpuprim_ext {
namespace {

void *address(Address value) { return value.pointer; }

nb::object handle_or_none(const void *pointer) {
    if (!pointer) return nb::none();
    return nb::int_(reinterpret_cast<std::uintptr_t>(pointer));
}

template <class T, class = void> struct PyValue {  // integers
    using type = T;
    static T to_c(T value) { return value; }
};
template <class T> struct PyValue<T, std::enable_if_t<std::is_enum_v<T>>> {  // C enums
    using type = std::int64_t;
    // Any int the C ABI can carry reaches the library, which answers
    // INVALID_ENUM for one that names no value; past an int, ValueError
    // (a cast would cut it to another value). The bits are copied: a cast to
    // a C enum of a value outside its enumerators' range is undefined in C++.
    static T to_c(std::int64_t value) {
        static_assert(sizeof(T) == sizeof(std::int32_t), "the header's enums are int-sized");
        if (value < INT32_MIN || value > INT32_MAX)
            throw nb::value_error(("gpuprim: enum value " + std::to_string(value) + " does not fit a C int").c_str());
        const std::int32_t narrow = static_cast<std::int32_t>(value);
        T converted;
        std::memcpy(&converted, &narrow, sizeof converted);
        return converted;
    }
};
template <class T> struct PyValue<T *> {  // handles, buffers' host addresses
    using type = Address;
    static T *to_c(Address value) { return static_cast<T *>(value.pointer); }
};

[[noreturn]] void missing(const char *name) {
    throw std::runtime_error(std::string("gpuprim: this libgpuprim has no gpuprim_") + name);
}

template <class Field, Field Library::*Member, const char *Name, class Signature> struct Raw;
template <class Field, Field Library::*Member, const char *Name, class R, class... A>
struct Raw<Field, Member, Name, R (*)(A...)> {
    static int call(typename PyValue<A>::type... arguments) {
        auto function = library().*Member;
        if (!function) missing(Name);
        // Arguments converted with the GIL held, the call made without it.
        std::tuple<A...> converted{PyValue<A>::to_c(arguments)...};
        nb::gil_scoped_release unlocked;
        return static_cast<int>(std::apply(function, converted));
    }
};

#define GPUPRIM_EXT_RAW(name)                                                                          \
    {                                                                                                  \
        static constexpr char kName[] = #name;                                                         \
        m.def("gpuprim_" #name, &Raw<decltype(Library::name), &Library::name, kName, decltype(Library::name)>::call); \
    }

gpuprim_sort_options_t sort_options(std::int64_t order, std::uint32_t begin_bit, std::uint32_t end_bit) {
    gpuprim_sort_options_t options;
    library().sort_options_init(&options);
    options.order = static_cast<std::int32_t>(order);
    options.begin_bit = begin_bit;
    options.end_bit = end_bit;
    return options;
}

// Segments as three values: the CSR offsets buffer (0: uniform rows),
// the row count and the row length; with offsets (where the row count and
// length mean nothing) the third is max_segment_length (0: no promise).
gpuprim_segments_t segments(Address offsets, std::uint64_t rows, std::uint64_t length) {
    gpuprim_segments_t result;
    if (!offsets.pointer) {
        library().segments_init_rows(&result, rows, length);
    } else {
        library().segments_init_offsets(&result, static_cast<gpuprim_buffer_t>(address(offsets)));
        result.max_segment_length = length;
    }
    return result;
}

template <class T> T *as(Address value) { return static_cast<T *>(value.pointer); }
using Context = gpuprim_context_s;
using Buffer = gpuprim_buffer_s;

// A context's allocator in Python (gpuprim_context_options_t.allocate): an
// object with allocate(bytes, stream) -> address (0, or an exception, when
// it cannot) and free(address, bytes, stream), the C `user` pointer being
// the object itself (borrowed: whoever creates the context keeps it alive
// until gpuprim_context_destroy has returned; gpuprim.Context does). The
// library calls these from inside its calls, which the bindings make with
// the GIL released (some with it held), on the calling thread with the
// context's lock held: each takes the GIL (PyGILState_Ensure, which nests),
// keeps any error the thread had pending, and lets no exception out.
class PendingError {  // the thread's pending Python error, set aside and put back
public:
#if PY_VERSION_HEX >= 0x030C0000
    PendingError() : error_(PyErr_GetRaisedException()) {}
    ~PendingError() { PyErr_SetRaisedException(error_); }

private:
    PyObject *error_;
#else
    PendingError() { PyErr_Fetch(&type_, &value_, &traceback_); }
    ~PendingError() { PyErr_Restore(type_, value_, traceback_); }

private:
    PyObject *type_ = nullptr, *value_ = nullptr, *traceback_ = nullptr;
#endif
};

int python_allocate(void *user, std::uint64_t bytes, void *stream, void **memory) noexcept {
    PyGILState_STATE gil = PyGILState_Ensure();
    int result = 1;
    {
        PendingError pending;
        PyObject *answer = PyObject_CallMethod(static_cast<PyObject *>(user), "allocate", "KK",
                                               static_cast<unsigned long long>(bytes),
                                               static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(stream)));
        if (answer && PyLong_Check(answer)) {
            unsigned long long address = PyLong_AsUnsignedLongLong(answer);
            if (!PyErr_Occurred() && address != 0) {
                *memory = reinterpret_cast<void *>(static_cast<std::uintptr_t>(address));
                result = 0;
            }
        }
        Py_XDECREF(answer);
        PyErr_Clear();  // the failure is the status (gpuprim.Context keeps the exception itself)
    }
    PyGILState_Release(gil);
    return result;
}

void python_deallocate(void *user, void *memory, std::uint64_t bytes, void *stream) noexcept {
    PyGILState_STATE gil = PyGILState_Ensure();
    {
        PendingError pending;
        PyObject *allocator = static_cast<PyObject *>(user);
        PyObject *answer = PyObject_CallMethod(allocator, "free", "KKK",
                                               static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(memory)),
                                               static_cast<unsigned long long>(bytes),
                                               static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(stream)));
        if (answer) {
            Py_DECREF(answer);
        } else {
            // Nothing to report it to (a free cannot fail in C): sys.unraisablehook.
            PyErr_WriteUnraisable(allocator);
        }
    }
    PyGILState_Release(gil);
}

}  // namespace

void define_raw_calls(nb::module_ &m) {
    // Every all-values call, from library.h's list (comments there). The
    // histogram calls' lower and upper are host addresses of one element
    // each; the distributed ones raise when the library has none of them.
    GPUPRIM_EXT_VALUE_CALLS(GPUPRIM_EXT_RAW, GPUPRIM_EXT_RAW)

    m.def("gpuprim_get_error_string", [](std::int64_t status) {
        const char *text = library().get_error_string(static_cast<gpuprim_status_t>(status));
        return nb::str(text ? text : "");
    });
    m.def("gpuprim_version_string", [] { return nb::str(library().version_string()); });
    m.def("gpuprim_context_last_error", [](Address context) -> nb::object {
        const char *text = library().context_last_error(as<Context>(context));
        if (!text) return nb::none();
        return nb::str(text);
    });
    // (status, context handle or None, the library's message on failure).
    // allocator: None (cudaMalloc / the C allocator), or an object with
    // allocate(bytes, stream) -> int and free(address, bytes, stream) that
    // the caller keeps alive until gpuprim_context_destroy has returned.
    m.def("gpuprim_context_create",
          [](std::int64_t backend, std::int32_t device, Address stream, std::int32_t cpu_threads,
             nb::handle allocator) {
              gpuprim_context_options_t options;
              library().context_options_init(&options);
              options.backend = static_cast<std::int32_t>(backend);
              options.device_ordinal = device;
              options.cuda_stream = address(stream);
              options.cpu_threads = cpu_threads;
              if (!allocator.is_none()) {
                  options.allocate = python_allocate;
                  options.deallocate = python_deallocate;
                  options.allocator_user = allocator.ptr();
              }
              gpuprim_context_t context = nullptr;
              char message[512] = {0};
              int status;
              {
                  nb::gil_scoped_release unlocked;
                  status = library().context_create(&options, &context, message, sizeof message);
              }
              return nb::make_tuple(status, handle_or_none(context), nb::str(message));
          },
          nb::arg("backend"), nb::arg("device"), nb::arg("stream").none(), nb::arg("cpu_threads"),
          nb::arg("allocator").none() = nb::none());
    // (status, stream): the context's cudaStream_t as an int, 0 on the CPU.
    m.def("gpuprim_context_get_stream", [](Address context) {
        void *stream = nullptr;
        gpuprim_context_t c = as<Context>(context);
        int status;
        {
            nb::gil_scoped_release unlocked;
            status = library().context_get_stream(c, &stream);
        }
        return nb::make_tuple(status, reinterpret_cast<std::uintptr_t>(stream));
    });
    // (status, bytes)
    m.def("gpuprim_context_get_workspace_size", [](Address context) {
        std::uint64_t bytes = 0;
        gpuprim_context_t c = as<Context>(context);
        int status;
        {
            nb::gil_scoped_release unlocked;
            status = library().context_get_workspace_size(c, &bytes);
        }
        return nb::make_tuple(status, bytes);
    });
    // (status, main_bytes, side_bytes, bounded); the query ends whatever the status.
    m.def("gpuprim_context_end_workspace_query", [](Address context) {
        gpuprim_workspace_sizes_t sizes{};
        sizes.struct_size = sizeof sizes;
        int status = library().context_end_workspace_query(as<Context>(context), &sizes);
        return nb::make_tuple(status, sizes.main_bytes, sizes.side_bytes, sizes.bounded != 0);
    });
    m.def("gpuprim_context_reserve_workspace_sizes",
          [](Address context, std::uint64_t main_bytes, std::uint64_t side_bytes, std::int32_t fix) {
              gpuprim_workspace_sizes_t sizes{};
              sizes.struct_size = sizeof sizes;
              sizes.main_bytes = main_bytes;
              sizes.side_bytes = side_bytes;
              gpuprim_context_t c = as<Context>(context);
              int status;
              {
                  nb::gil_scoped_release unlocked;  // a growth may call a Python allocator
                  status = library().context_reserve_workspace_sizes(c, &sizes, fix);
              }
              return status;
          });
    m.def("gpuprim_context_get_backend", [](Address context) {
        gpuprim_backend_t backend = GPUPRIM_BACKEND_AUTO;
        int status = library().context_get_backend(as<Context>(context), &backend);
        return nb::make_tuple(status, static_cast<int>(backend));
    });
    m.def("gpuprim_context_get_device", [](Address context) {
        std::int32_t ordinal = -1;
        char name[256] = {0};
        int status = library().context_get_device(as<Context>(context), &ordinal, name, sizeof name);
        return nb::make_tuple(status, ordinal, nb::str(name));
    });
    m.def("gpuprim_buffer_create", [](Address context, std::int64_t dtype, std::uint64_t count) {
        gpuprim_buffer_t buffer = nullptr;
        int status;
        {
            nb::gil_scoped_release unlocked;
            status = library().buffer_create(as<Context>(context), static_cast<gpuprim_dtype_t>(dtype),
                                             count, &buffer);
        }
        return nb::make_tuple(status, handle_or_none(buffer));
    });
    m.def("gpuprim_buffer_wrap",
          [](Address context, std::int64_t dtype, Address data, std::uint64_t count) {
              gpuprim_buffer_t buffer = nullptr;
              void *pointer = address(data);
              int status;
              {
                  nb::gil_scoped_release unlocked;
                  status = library().buffer_wrap(as<Context>(context), static_cast<gpuprim_dtype_t>(dtype),
                                                 pointer, count, &buffer);
              }
              return nb::make_tuple(status, handle_or_none(buffer));
          });
    m.def("gpuprim_argreduce", [](Address context, std::int64_t op, Address input) {
        std::uint64_t index = 0;
        gpuprim_context_t c = as<Context>(context);
        gpuprim_buffer_t in = as<Buffer>(input);
        int status;
        {
            nb::gil_scoped_release unlocked;
            status = library().argreduce(c, static_cast<gpuprim_op_t>(op), in, &index);
        }
        return nb::make_tuple(status, index);
    });
    m.def("gpuprim_sort_with_options",
          [](Address context, Address keys_in, Address values_in, Address keys_out,
             Address values_out, std::int64_t order, std::uint32_t begin_bit, std::uint32_t end_bit) {
              gpuprim_sort_options_t options = sort_options(order, begin_bit, end_bit);
              gpuprim_context_t c = as<Context>(context);
              Buffer *kin = as<Buffer>(keys_in), *vin = as<Buffer>(values_in);
              Buffer *kout = as<Buffer>(keys_out), *vout = as<Buffer>(values_out);
              nb::gil_scoped_release unlocked;
              return static_cast<int>(library().sort_with_options(c, kin, vin, kout, vout, &options));
          });
    m.def("gpuprim_argsort",
          [](Address context, Address keys_in, Address values_in, Address indices_out,
             std::int64_t order, std::uint32_t begin_bit, std::uint32_t end_bit) {
              gpuprim_sort_options_t options = sort_options(order, begin_bit, end_bit);
              gpuprim_context_t c = as<Context>(context);
              Buffer *kin = as<Buffer>(keys_in), *vin = as<Buffer>(values_in), *out = as<Buffer>(indices_out);
              nb::gil_scoped_release unlocked;
              return static_cast<int>(library().argsort(c, kin, vin, out, &options));
          });
    m.def("gpuprim_segmented_sort",
          [](Address context, Address offsets, std::uint64_t rows, std::uint64_t length,
             Address keys_in, Address values_in, Address keys_out, Address values_out,
             std::int64_t order, std::uint32_t begin_bit, std::uint32_t end_bit) {
              gpuprim_sort_options_t options = sort_options(order, begin_bit, end_bit);
              gpuprim_segments_t layout = segments(offsets, rows, length);
              gpuprim_context_t c = as<Context>(context);
              Buffer *kin = as<Buffer>(keys_in), *vin = as<Buffer>(values_in);
              Buffer *kout = as<Buffer>(keys_out), *vout = as<Buffer>(values_out);
              nb::gil_scoped_release unlocked;
              return static_cast<int>(library().segmented_sort(c, &layout, kin, vin, kout, vout, &options));
          });
    m.def("gpuprim_segmented_argsort",
          [](Address context, Address offsets, std::uint64_t rows, std::uint64_t length,
             Address keys_in, Address values_in, Address indices_out, std::int64_t order,
             std::uint32_t begin_bit, std::uint32_t end_bit) {
              gpuprim_sort_options_t options = sort_options(order, begin_bit, end_bit);
              gpuprim_segments_t layout = segments(offsets, rows, length);
              gpuprim_context_t c = as<Context>(context);
              Buffer *kin = as<Buffer>(keys_in), *vin = as<Buffer>(values_in), *out = as<Buffer>(indices_out);
              nb::gil_scoped_release unlocked;
              return static_cast<int>(library().segmented_argsort(c, &layout, kin, vin, out, &options));
          });
    m.def("gpuprim_segmented_reduce",
          [](Address context, std::int64_t op, Address offsets, std::uint64_t rows, std::uint64_t length,
             Address input, Address output) {
              gpuprim_segments_t layout = segments(offsets, rows, length);
              gpuprim_context_t c = as<Context>(context);
              Buffer *in = as<Buffer>(input), *out = as<Buffer>(output);
              nb::gil_scoped_release unlocked;
              return static_cast<int>(
                  library().segmented_reduce(c, static_cast<gpuprim_op_t>(op), &layout, in, out));
          });
    m.def("gpuprim_segmented_scan",
          [](Address context, std::int64_t op, std::int64_t kind, Address offsets, std::uint64_t rows,
             std::uint64_t length, Address input, Address output) {
              gpuprim_segments_t layout = segments(offsets, rows, length);
              gpuprim_context_t c = as<Context>(context);
              Buffer *in = as<Buffer>(input), *out = as<Buffer>(output);
              nb::gil_scoped_release unlocked;
              return static_cast<int>(library().segmented_scan(c, static_cast<gpuprim_op_t>(op),
                                                               static_cast<gpuprim_scan_kind_t>(kind), &layout,
                                                               in, out));
          });
    m.def("gpuprim_segmented_topk",
          [](Address context, Address offsets, std::uint64_t rows, std::uint64_t length,
             Address keys_in, std::uint64_t k, std::int64_t order, Address values_out,
             Address indices_out) {
              gpuprim_segments_t layout = segments(offsets, rows, length);
              gpuprim_context_t c = as<Context>(context);
              Buffer *kin = as<Buffer>(keys_in), *values = as<Buffer>(values_out);
              Buffer *indices = as<Buffer>(indices_out);
              nb::gil_scoped_release unlocked;
              return static_cast<int>(library().segmented_topk(c, &layout, kin, k, static_cast<gpuprim_order_t>(order),
                                                               values, indices));
          });
    // select / partition: the predicate as its four fields (flags: a buffer
    // handle or 0; scalar, scalar_high: host addresses of one element of the
    // input's dtype, or 0); the count comes back on the host: (status, count).
    m.def("gpuprim_select",
          [](Address context, Address input, Address values, std::int32_t kind, Address flags, Address scalar,
             Address scalar_high, Address output, Address values_out, Address positions, Address count_out) {
              gpuprim_predicate_t predicate{kind, as<Buffer>(flags), address(scalar), address(scalar_high)};
              gpuprim_context_t c = as<Context>(context);
              Buffer *in = as<Buffer>(input), *v = as<Buffer>(values), *out = as<Buffer>(output);
              Buffer *vo = as<Buffer>(values_out), *where = as<Buffer>(positions), *co = as<Buffer>(count_out);
              std::uint64_t count = 0;
              int status;
              {
                  nb::gil_scoped_release unlocked;
                  status = library().select(c, in, v, &predicate, out, vo, where, &count, co);
              }
              return nb::make_tuple(status, count);
          });
    m.def("gpuprim_partition",
          [](Address context, Address input, Address values, std::int32_t kind, Address flags, Address scalar,
             Address scalar_high, Address output, Address values_out, Address count_out) {
              gpuprim_predicate_t predicate{kind, as<Buffer>(flags), address(scalar), address(scalar_high)};
              gpuprim_context_t c = as<Context>(context);
              Buffer *in = as<Buffer>(input), *v = as<Buffer>(values), *out = as<Buffer>(output);
              Buffer *vo = as<Buffer>(values_out), *co = as<Buffer>(count_out);
              std::uint64_t count = 0;
              int status;
              {
                  nb::gil_scoped_release unlocked;
                  status = library().partition(c, in, v, &predicate, out, vo, &count, co);
              }
              return nb::make_tuple(status, count);
          });
    m.def("gpuprim_unique",
          [](Address context, Address keys, Address values, Address keys_out, Address values_out, Address count_out) {
              gpuprim_context_t c = as<Context>(context);
              Buffer *k = as<Buffer>(keys), *v = as<Buffer>(values), *ko = as<Buffer>(keys_out);
              Buffer *vo = as<Buffer>(values_out), *co = as<Buffer>(count_out);
              std::uint64_t count = 0;
              int status;
              {
                  nb::gil_scoped_release unlocked;
                  status = library().unique(c, k, v, ko, vo, &count, co);
              }
              return nb::make_tuple(status, count);
          });
    m.def("gpuprim_run_length_encode",
          [](Address context, Address input, std::int64_t runs, Address keys_out, Address starts, Address lengths,
             Address count_out) {
              gpuprim_context_t c = as<Context>(context);
              Buffer *in = as<Buffer>(input), *ko = as<Buffer>(keys_out), *s = as<Buffer>(starts);
              Buffer *l = as<Buffer>(lengths), *co = as<Buffer>(count_out);
              std::uint64_t count = 0;
              int status;
              {
                  nb::gil_scoped_release unlocked;
                  status = library().run_length_encode(c, in, static_cast<gpuprim_runs_t>(runs), ko, s, l, &count,
                                                       co);
              }
              return nb::make_tuple(status, count);
          });
    // reduce-by-key / group-by: op as gpuprim_op_t's value; optional
    // outputs 0; the count comes back on the host: (status, count).
    m.def("gpuprim_reduce_by_key",
          [](Address context, Address keys, Address values, std::int64_t op, Address keys_out, Address results,
             Address lengths, Address count_out) {
              gpuprim_context_t c = as<Context>(context);
              Buffer *k = as<Buffer>(keys), *v = as<Buffer>(values), *ko = as<Buffer>(keys_out);
              Buffer *r = as<Buffer>(results), *l = as<Buffer>(lengths), *co = as<Buffer>(count_out);
              std::uint64_t count = 0;
              int status;
              {
                  nb::gil_scoped_release unlocked;
                  status = library().reduce_by_key(c, k, v, static_cast<gpuprim_op_t>(op), ko, r, l, &count, co);
              }
              return nb::make_tuple(status, count);
          });
    m.def("gpuprim_group_by",
          [](Address context, Address keys, Address values, std::int64_t op, Address keys_out, Address counts,
             Address results, Address inverse, Address count_out) {
              gpuprim_context_t c = as<Context>(context);
              Buffer *k = as<Buffer>(keys), *v = as<Buffer>(values), *ko = as<Buffer>(keys_out);
              Buffer *n = as<Buffer>(counts), *r = as<Buffer>(results), *inv = as<Buffer>(inverse);
              Buffer *co = as<Buffer>(count_out);
              std::uint64_t count = 0;
              int status;
              {
                  nb::gil_scoped_release unlocked;
                  status = library().group_by(c, k, v, static_cast<gpuprim_op_t>(op), ko, n, r, inv, &count, co);
              }
              return nb::make_tuple(status, count);
          });
    m.def("gpuprim_context_get_rank", [](Address context) {
        if (!library().context_get_rank) missing("context_get_rank");
        std::int32_t rank = -1, count = 0;
        int status = library().context_get_rank(as<Context>(context), &rank, &count);
        return nb::make_tuple(status, rank, count);
    });
    // options None: the call with NULL options (a rank's refusal to join).
    m.def("gpuprim_distributed_sort",
          [](Address context, Address keys_in, Address values_in, Address keys_out,
             Address values_out, nb::handle order, std::uint32_t begin_bit, std::uint32_t end_bit) {
              if (!library().distributed_sort) missing("distributed_sort");
              gpuprim_sort_options_t options{};
              if (!order.is_none()) options = sort_options(nb::cast<std::int64_t>(order), begin_bit, end_bit);
              gpuprim_context_t c = as<Context>(context);
              Buffer *kin = as<Buffer>(keys_in), *vin = as<Buffer>(values_in);
              Buffer *kout = as<Buffer>(keys_out), *vout = as<Buffer>(values_out);
              const gpuprim_sort_options_t *given = order.is_none() ? nullptr : &options;
              nb::gil_scoped_release unlocked;
              return static_cast<int>(library().distributed_sort(c, kin, vin, kout, vout, given));
          },
          nb::arg("context"), nb::arg("keys_in"), nb::arg("values_in"), nb::arg("keys_out"),
          nb::arg("values_out"), nb::arg("order").none() = nb::none(), nb::arg("begin_bit") = 0,
          nb::arg("end_bit") = 0);
    m.def("gpuprim_distributed_argsort",
          [](Address context, Address keys_in, Address values_in, Address indices_out,
             nb::handle order, std::uint32_t begin_bit, std::uint32_t end_bit) {
              if (!library().distributed_argsort) missing("distributed_argsort");
              gpuprim_sort_options_t options{};
              if (!order.is_none()) options = sort_options(nb::cast<std::int64_t>(order), begin_bit, end_bit);
              gpuprim_context_t c = as<Context>(context);
              Buffer *kin = as<Buffer>(keys_in), *vin = as<Buffer>(values_in), *out = as<Buffer>(indices_out);
              const gpuprim_sort_options_t *given = order.is_none() ? nullptr : &options;
              nb::gil_scoped_release unlocked;
              return static_cast<int>(library().distributed_argsort(c, kin, vin, out, given));
          },
          nb::arg("context"), nb::arg("keys_in"), nb::arg("values_in"), nb::arg("indices_out"),
          nb::arg("order").none() = nb::none(), nb::arg("begin_bit") = 0, nb::arg("end_bit") = 0);
}

}  // namespace gpuprim_ext
