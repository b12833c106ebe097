// SPDX-License-Identifier: Apache-2.0
// DLPack as both directions of the layer read it: dlpack.h's managed tensors
// (the ABI of the "dltensor" and "dltensor_versioned" capsules; nanobind's
// header has their DLTensor) and the library's dtype of a DLPack dtype.
#pragma once

#include "library.h"

#include <nanobind/ndarray.h>

#include <cstdint>

namespace gpuprim_ext {

struct ManagedTensor {
    nanobind::dlpack::dltensor tensor;
    void *manager_context;
    void (*deleter)(ManagedTensor *);
};
struct ManagedTensorVersioned {
    std::uint32_t major, minor;
    void *manager_context;
    void (*deleter)(ManagedTensorVersioned *);
    std::uint64_t flags;  // bit 0: read only
    nanobind::dlpack::dltensor tensor;
};

// DLPack 1.3's C exchange API (dlpack.h's DLPackExchangeAPI): the function
// table a framework puts on its array type as __dlpack_c_exchange_api__, a
// "dlpack_exchange_api" capsule. The common path reads a tensor through
// dltensor_from_py_object_no_sync (a view filled in place: no allocation, no
// capsule) and the framework's stream through current_work_stream, and
// makes its outputs with managed_tensor_allocator (the framework's own
// allocator; only the prototype's dtype, ndim, shape and device are read)
// and managed_tensor_to_py_object_no_sync (which takes the tensor over).
struct ExchangeApiHeader {
    std::uint32_t major, minor;
    ExchangeApiHeader *previous;  // an older table, or null
};
using ExchangeSetError = void (*)(void *error_context, const char *kind, const char *message);
struct ExchangeApi {
    ExchangeApiHeader header;
    int (*managed_tensor_allocator)(nanobind::dlpack::dltensor *prototype, ManagedTensorVersioned **out,
                                    void *error_context, ExchangeSetError set_error);
    void *managed_tensor_from_py_object_no_sync;
    int (*managed_tensor_to_py_object_no_sync)(ManagedTensorVersioned *tensor, void **py_object);
    int (*dltensor_from_py_object_no_sync)(void *py_object, nanobind::dlpack::dltensor *out);
    int (*current_work_stream)(std::int32_t device_type, std::int32_t device_id, void **stream);
};

// The library's dtype of a DLPack dtype (bool: U8 with is_bool set), or -1.
inline int dlpack_code(const nanobind::dlpack::dtype &dtype, bool &is_bool) {
    using nanobind::dlpack::dtype_code;
    is_bool = false;
    if (dtype.lanes != 1) return -1;
    switch (static_cast<dtype_code>(dtype.code)) {
    case dtype_code::Int:
        return dtype.bits == 8 ? GPUPRIM_DTYPE_I8 : dtype.bits == 16 ? GPUPRIM_DTYPE_I16
             : dtype.bits == 32 ? GPUPRIM_DTYPE_I32 : dtype.bits == 64 ? GPUPRIM_DTYPE_I64 : -1;
    case dtype_code::UInt:
        return dtype.bits == 8 ? GPUPRIM_DTYPE_U8 : dtype.bits == 16 ? GPUPRIM_DTYPE_U16
             : dtype.bits == 32 ? GPUPRIM_DTYPE_U32 : dtype.bits == 64 ? GPUPRIM_DTYPE_U64 : -1;
    case dtype_code::Float:
        return dtype.bits == 16 ? GPUPRIM_DTYPE_F16 : dtype.bits == 32 ? GPUPRIM_DTYPE_F32
             : dtype.bits == 64 ? GPUPRIM_DTYPE_F64 : -1;
    case dtype_code::Bfloat:
        return dtype.bits == 16 ? GPUPRIM_DTYPE_BF16 : -1;
    case dtype_code::Bool:
        is_bool = dtype.bits == 8;
        return is_bool ? GPUPRIM_DTYPE_U8 : -1;
    default:
        return -1;
    }
}

// The DLPack dtype of a library dtype (is_bool: U8 as bool), the inverse
// of dlpack_code; false for a code it does not know.
inline bool dlpack_dtype_of(int code, bool is_bool, nanobind::dlpack::dtype &dtype) {
    using nanobind::dlpack::dtype_code;
    dtype_code kind;
    int bits;
    switch (code) {
    case GPUPRIM_DTYPE_I8: kind = dtype_code::Int; bits = 8; break;
    case GPUPRIM_DTYPE_I16: kind = dtype_code::Int; bits = 16; break;
    case GPUPRIM_DTYPE_I32: kind = dtype_code::Int; bits = 32; break;
    case GPUPRIM_DTYPE_I64: kind = dtype_code::Int; bits = 64; break;
    case GPUPRIM_DTYPE_U8: kind = is_bool ? dtype_code::Bool : dtype_code::UInt; bits = 8; break;
    case GPUPRIM_DTYPE_U16: kind = dtype_code::UInt; bits = 16; break;
    case GPUPRIM_DTYPE_U32: kind = dtype_code::UInt; bits = 32; break;
    case GPUPRIM_DTYPE_U64: kind = dtype_code::UInt; bits = 64; break;
    case GPUPRIM_DTYPE_F16: kind = dtype_code::Float; bits = 16; break;
    case GPUPRIM_DTYPE_F32: kind = dtype_code::Float; bits = 32; break;
    case GPUPRIM_DTYPE_F64: kind = dtype_code::Float; bits = 64; break;
    case GPUPRIM_DTYPE_BF16: kind = dtype_code::Bfloat; bits = 16; break;
    default: return false;
    }
    if (is_bool && code != GPUPRIM_DTYPE_U8) return false;
    dtype.code = static_cast<std::uint8_t>(kind);
    dtype.bits = static_cast<std::uint8_t>(bits);
    dtype.lanes = 1;
    return true;
}

}  // namespace gpuprim_ext
