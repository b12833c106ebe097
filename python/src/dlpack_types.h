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
// capsule) and the framework's stream through current_work_stream.
struct ExchangeApiHeader {
    std::uint32_t major, minor;
    ExchangeApiHeader *previous;  // an older table, or null
};
struct ExchangeApi {
    ExchangeApiHeader header;
    void *managed_tensor_allocator;
    void *managed_tensor_from_py_object_no_sync;
    void *managed_tensor_to_py_object_no_sync;
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

}  // namespace gpuprim_ext
