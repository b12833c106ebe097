// SPDX-License-Identifier: Apache-2.0
// DLPack both ways for arrays of frameworks the package has no reader of
// its own for (JAX, and any producer of the protocol): dlpack_view() reads a
// capsule a producer's __dlpack__() gave (without consuming it: the
// producer's capsule destructor frees the export, once the package drops the
// capsule after the call); export_empty() makes an output in a buffer of a
// context (gpuprim_buffer_create) that the result's framework takes in
// through DLPack (nanobind's ndarray, exported zero copy), the buffer freed
// when that framework lets go of it.
#include "dlpack_calls.h"

#include "dlpack_types.h"
#include "library.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <vector>

namespace nb = nanobind;

namespace gpuprim_ext {
namespace {

constexpr std::uint64_t read_only_flag = 1;  // ManagedTensorVersioned::flags

nb::dlpack::dtype dlpack_dtype(int code, bool is_bool) {
    using nb::dlpack::dtype_code;
    auto make = [](dtype_code kind, int bits) {
        return nb::dlpack::dtype{static_cast<std::uint8_t>(kind), static_cast<std::uint8_t>(bits), 1};
    };
    if (is_bool) return make(dtype_code::Bool, 8);
    switch (code) {
    case GPUPRIM_DTYPE_I8: return make(dtype_code::Int, 8);
    case GPUPRIM_DTYPE_I16: return make(dtype_code::Int, 16);
    case GPUPRIM_DTYPE_I32: return make(dtype_code::Int, 32);
    case GPUPRIM_DTYPE_I64: return make(dtype_code::Int, 64);
    case GPUPRIM_DTYPE_U8: return make(dtype_code::UInt, 8);
    case GPUPRIM_DTYPE_U16: return make(dtype_code::UInt, 16);
    case GPUPRIM_DTYPE_U32: return make(dtype_code::UInt, 32);
    case GPUPRIM_DTYPE_U64: return make(dtype_code::UInt, 64);
    case GPUPRIM_DTYPE_F16: return make(dtype_code::Float, 16);
    case GPUPRIM_DTYPE_F32: return make(dtype_code::Float, 32);
    case GPUPRIM_DTYPE_F64: return make(dtype_code::Float, 64);
    case GPUPRIM_DTYPE_BF16: return make(dtype_code::Bfloat, 16);
    default: throw nb::type_error("gpuprim: export_empty: not a dtype code");
    }
}

// (address, shape, dtype code or -1, is bool, read only, C-contiguous,
// device type, device id)
nb::tuple view(nb::handle capsule) {
    const nb::dlpack::dltensor *tensor = nullptr;
    bool read_only = false;
    if (PyCapsule_IsValid(capsule.ptr(), "dltensor_versioned")) {
        auto *managed = static_cast<ManagedTensorVersioned *>(PyCapsule_GetPointer(capsule.ptr(), "dltensor_versioned"));
        if (managed->major != 1) throw nb::type_error("a DLPack capsule of a version other than 1.x");
        tensor = &managed->tensor;
        read_only = (managed->flags & read_only_flag) != 0;
    } else if (PyCapsule_IsValid(capsule.ptr(), "dltensor")) {
        tensor = &static_cast<ManagedTensor *>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"))->tensor;
    } else {
        throw nb::type_error("not an unconsumed DLPack capsule (\"dltensor\")");
    }
    // The producer's tensor is read as it is, so what it claims is checked
    // first: a shape to read, lengths that multiply without wrapping, and
    // data where there are elements.
    if (tensor->ndim < 0) throw nb::value_error("a DLPack tensor of a negative number of dimensions");
    if (tensor->ndim > 0 && !tensor->shape) throw nb::value_error("a DLPack tensor without its shape");
    std::uint64_t elements = 1;
    for (int axis = 0; axis < tensor->ndim; ++axis) {
        if (tensor->shape[axis] < 0) throw nb::value_error("a DLPack tensor with a negative length in its shape");
        if (__builtin_mul_overflow(elements, std::uint64_t(tensor->shape[axis]), &elements) ||
            elements > std::uint64_t(INT64_MAX))
            throw nb::value_error("a DLPack tensor of 2^63 elements or more");
    }
    if (elements > 0 && !tensor->data) throw nb::value_error("a DLPack tensor of elements without data (NULL)");
    bool is_bool = false;
    int code = dlpack_code(tensor->dtype, is_bool);
    nb::list shape;
    bool contiguous = true;
    std::int64_t expected = 1;  // fits: the lengths' product does
    for (int axis = tensor->ndim - 1; axis >= 0; --axis) {
        std::int64_t length = tensor->shape[axis];
        if (tensor->strides && length != 1 && tensor->strides[axis] != expected) contiguous = false;
        expected *= length;
    }
    if (elements == 0) contiguous = true;  // no elements: any strides
    for (int axis = 0; axis < tensor->ndim; ++axis) shape.append(tensor->shape[axis]);
    auto address = reinterpret_cast<std::uintptr_t>(static_cast<char *>(tensor->data) + tensor->byte_offset);
    return nb::make_tuple(address, nb::tuple(shape), code, is_bool, read_only, contiguous,
                          static_cast<int>(tensor->device.device_type), tensor->device.device_id);
}

struct Exported {
    gpuprim_context_t context;
    gpuprim_buffer_t buffer;
};

// (array exporting the new buffer through DLPack, its address): count
// elements of shape, dtype code (bool when is_bool), in a new buffer of
// context on device (device_type 1 CPU, 2 CUDA; device_id). fill_byte
// 0..255: every byte of it set so before the export (an output the call
// leaves partly unwritten; the framework's array takes no write after it).
nb::tuple export_empty(std::uint64_t context_handle, int code, bool is_bool, nb::tuple shape_tuple,
                       int device_type, int device_id, int fill_byte) {
    auto context = reinterpret_cast<gpuprim_context_t>(static_cast<std::uintptr_t>(context_handle));
    std::vector<std::size_t> shape;
    std::uint64_t count = 1;
    for (nb::handle length : shape_tuple) {
        shape.push_back(nb::cast<std::size_t>(length));
        if (__builtin_mul_overflow(count, std::uint64_t(shape.back()), &count))
            return nb::make_tuple(static_cast<int>(GPUPRIM_ERROR_OVERFLOW), nb::none());
    }
    gpuprim_buffer_t buffer = nullptr;
    // At least one element: a DLPack export of an empty array still needs an address.
    gpuprim_status_t status =
        library().buffer_create(context, static_cast<gpuprim_dtype_t>(code), count ? count : 1, &buffer);
    if (status != GPUPRIM_SUCCESS) return nb::make_tuple(static_cast<int>(status), nb::none());
    void *data = nullptr;
    status = library().buffer_get_info(context, buffer, nullptr, nullptr, &data);
    if (status != GPUPRIM_SUCCESS) {
        library().buffer_destroy(context, buffer);
        return nb::make_tuple(static_cast<int>(status), nb::none());
    }
    if (fill_byte >= 0 && count) {
        // count elements' bytes: the size of the buffer buffer_create just made (checked there)
        const std::size_t bytes = static_cast<std::size_t>(count) * (dlpack_dtype(code, is_bool).bits / 8);
        std::vector<unsigned char> pattern;
        try {
            pattern.assign(bytes, static_cast<unsigned char>(fill_byte));
        } catch (const std::bad_alloc &) {
            library().buffer_destroy(context, buffer);
            return nb::make_tuple(static_cast<int>(GPUPRIM_ERROR_OUT_OF_MEMORY), nb::none());
        }
        status = library().buffer_upload(context, buffer, 0, pattern.data(), count);
        if (status != GPUPRIM_SUCCESS) {
            library().buffer_destroy(context, buffer);
            return nb::make_tuple(static_cast<int>(status), nb::none());
        }
    }
    auto *record = new Exported{context, buffer};
    nb::capsule owner(record, [](void *pointer) noexcept {
        auto *exported = static_cast<Exported *>(pointer);
        library().buffer_destroy(exported->context, exported->buffer);  // INVALID_HANDLE after exit's close: ignored
        delete exported;
    });
    nb::ndarray<nb::array_api> array(data, shape.size(), shape.data(), owner, nullptr, dlpack_dtype(code, is_bool),
                                     device_type, device_id);
    return nb::make_tuple(static_cast<int>(GPUPRIM_SUCCESS),
                          nb::make_tuple(nb::cast(array, nb::rv_policy::reference),
                                         reinterpret_cast<std::uintptr_t>(data)));
}

// The first count elements of `source`, a 1-D array of export_empty's, as a
// DLPack array of its own that shares the buffer and keeps source alive: the
// count-sized results (select and friends) for a producer whose framework
// has no from_dlpack to slice them with.
nb::object export_prefix(nb::object source, std::size_t count) {
    auto array = nb::cast<nb::ndarray<>>(source);
    if (array.ndim() != 1 || count > array.shape(0))
        throw nb::value_error("export_prefix: not a 1-D array of at least count elements");
    const std::size_t shape[1] = {count};
    nb::ndarray<nb::array_api> prefix(array.data(), 1, shape, source, nullptr, array.dtype(), array.device_type(),
                                      array.device_id());
    return nb::cast(prefix, nb::rv_policy::reference);
}

}  // namespace

void define_dlpack_calls(nb::module_ &m) {
    m.def("dlpack_view", &view, nb::arg("capsule").none(),
          "(address, shape, dtype code or -1, is bool, read only, C-contiguous, device type, device id) of a "
          "DLPack capsule");
    m.def("export_empty", &export_empty, nb::arg("context"), nb::arg("code"), nb::arg("is_bool"),
          nb::arg("shape"), nb::arg("device_type"), nb::arg("device_id"), nb::arg("fill_byte") = -1,
          "(status, (DLPack array, address) or None): a new buffer of the context, exported "
          "(every byte fill_byte when 0..255)");
    m.def("export_prefix", &export_prefix, nb::arg("array"), nb::arg("count"),
          "the first count elements of a 1-D array of export_empty's, sharing its buffer");
}

}  // namespace gpuprim_ext
