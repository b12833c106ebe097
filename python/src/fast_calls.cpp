// SPDX-License-Identifier: Apache-2.0
// The package's calls on their common path, in C++: a C-contiguous numpy
// array, PyTorch tensor (CPU or CUDA) or CuPy array of a supported dtype,
// the default options, outputs made here or given as out=. Reading the
// arrays, choosing the thread's context, wrapping and the library call take
// about a microsecond here; the same steps in Python took 10-17. Each function
// returns None without doing anything when its arguments are not of that
// path (another framework, a dtype= cast, a subclass, an empty array, ...):
// the caller (gpuprim/__init__.py) then runs the general path in _core.py,
// which gives every case its full handling and error message. The results
// are the general path's, bit for bit: both make the same library call.
#include "fast_calls.h"

#include "dlpack_types.h"
#include "library.h"
#include "wrap_cache.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

namespace nb = nanobind;

namespace gpuprim_ext {
namespace {

enum class Kind { numpy, torch, cupy };

constexpr std::uintptr_t legacy_stream = 1;  // cudaStreamLegacy: what stream 0 means to a framework

constexpr int max_axes = 16;  // more: the general path

// One operand, read without running Python code (but torch's one C call and
// CuPy's few attribute reads).
struct Operand {
    PyObject *object = nullptr;
    Kind kind = Kind::numpy;
    void *data = nullptr;
    std::uint64_t count = 0;
    int ndim = 0;
    std::int64_t shape[max_axes] = {};
    std::uint64_t last = 0;  // length of the last axis
    int code = -1;           // gpuprim_dtype_t
    bool is_bool = false;
    bool on_device = false;
    int device = -1;
    bool writeable = true;
    std::uintptr_t stream = 0;  // cupy: the call's stream, the one the general path picks
    PyObject *dtype = nullptr;  // numpy: the array's descr (borrowed); cupy: its dtype (in keep)
    nb::object keep;            // torch without the exchange table: the DLPack capsule, alive until the
                                // call returns; cupy: the dtype
};

// numpy's PyArrayObject (numpy/ndarraytypes.h, PyArrayObject_fields): the
// layout of these first fields is part of numpy's ABI (1.x and 2.x).
struct NumpyArrayFields {
    PyObject_HEAD
    char *data;
    int nd;
    std::intptr_t *dimensions;
    std::intptr_t *strides;
    PyObject *base;
    PyObject *descr;
    int flags;
};
constexpr int numpy_c_contiguous = 0x0001;
constexpr int numpy_aligned = 0x0100;  // NPY_ARRAY_ALIGNED
constexpr int numpy_writeable = 0x0400;

// The index dtypes of argsort and topk, in the order of their slots
// (index_slot).
constexpr const char *kIndexDtypeNames[4] = {"int32", "uint32", "int64", "uint64"};
// Their library dtypes, slot by slot.
constexpr int kIndexDtypeCodes[4] = {GPUPRIM_DTYPE_I32, GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_I64, GPUPRIM_DTYPE_U64};

// What is looked up once: the frameworks' types and callables, interned
// names, the dtype objects seen (to their codes).
struct Cache {
    PyTypeObject *numpy_array = nullptr;
    nb::object numpy_empty, numpy_empty_like;
    PyTypeObject *torch_tensor = nullptr;
    nb::object torch_empty_like, torch_raw_stream, torch_to_dlpack;
    nb::object torch_exchange_capsule;           // keeps torch_exchange alive
    const ExchangeApi *torch_exchange = nullptr;  // torch >= 2.10; else _to_dlpack and the raw stream
    bool torch_exchange_off = false;              // testing hook (fast_use_torch_exchange)
    PyTypeObject *cupy_array = nullptr;
    nb::object cupy_get_device, cupy_current_stream;
    nb::object dtype_code;             // _arrays._fast_dtype_code(dtype) -> (code, is_bool) or None
    nb::object index_code;             // _core._fast_index_code(dtype) -> code or None
    nb::object context_for_object;     // _core._context_for_object(x) -> Context
    nb::object raise_status;           // _core._raise_status(context, status)
    // The index dtypes' objects, by index_slot() (kIndexDtypeNames' order;
    // a torch without uint32/uint64: those two invalid).
    nb::object numpy_index[4], torch_index[4];
    struct Dtype {
        nb::object keep;  // holds the dtype object, so its address stays its own
        int code;
        bool is_bool;
    };
    std::unordered_map<PyObject *, Dtype> dtypes;
    std::unordered_map<PyObject *, Dtype> index_dtypes;  // dtype= arguments of argsort and topk
    // sys.modules' size when the frameworks not found were last looked for,
    // each then absent (or of a version the common path does not know):
    // until a module is imported, looking again would find the same.
    Py_ssize_t modules_looked = -1;
    nb::str s_new_empty{"new_empty"}, s_wraps{"_wraps"}, s_contexts_key{"gpuprim._ext.contexts"};
    nb::str s_data{"data"}, s_shape{"shape"}, s_strides{"strides"}, s_dtype{"dtype"}, s_device_id{"device_id"},
        s_ptr{"ptr"};
};
Cache *cache = nullptr;

// What the package's Python code answered for a dtype object.
struct DtypeAnswer {
    int code;  // -1: not one the common path takes
    bool is_bool;
};

// The answer for a dtype object from `map`, else from compute() (the Python
// code), kept while the map has fewer than `room` entries; each entry holds
// its object, so that the address stays the object's.
template <typename Compute>
DtypeAnswer cached_answer(std::unordered_map<PyObject *, Cache::Dtype> &map, PyObject *dtype, std::size_t room,
                          Compute &&compute) {
    auto found = map.find(dtype);
    if (found != map.end()) return {found->second.code, found->second.is_bool};
    const DtypeAnswer answer = compute();
    if (map.size() < room) map.emplace(dtype, Cache::Dtype{nb::borrow(dtype), answer.code, answer.is_bool});
    return answer;
}

bool dtype_of(PyObject *dtype, Operand &operand) {
    const DtypeAnswer answer = cached_answer(cache->dtypes, dtype, 256, [&] {
        nb::object found = cache->dtype_code(nb::handle(dtype));
        if (found.is_none()) return DtypeAnswer{-1, false};
        return DtypeAnswer{nb::cast<int>(found[0]), nb::cast<bool>(found[1])};
    });
    operand.code = answer.code;
    operand.is_bool = answer.is_bool;
    operand.dtype = dtype;
    return operand.code >= 0;
}

// Whether a module in sys.modules is still running its import (its spec's
// _initializing, as importlib sets it).
bool still_importing(PyObject *module) {
    PyObject *spec = PyObject_GetAttrString(module, "__spec__");
    if (!spec) {
        PyErr_Clear();
        return false;
    }
    nb::object held = nb::steal(spec);
    PyObject *initializing = PyObject_GetAttrString(spec, "_initializing");
    if (!initializing) {
        PyErr_Clear();
        return false;
    }
    const int truth = PyObject_IsTrue(initializing);
    Py_DECREF(initializing);
    if (truth < 0) PyErr_Clear();
    return truth > 0;
}

// find_numpy, find_torch and find_cupy: false when the framework's module
// is there but not usable yet (still importing): look again next call; a
// module that has finished importing without what the common path needs is
// settled (its arrays take the general path).
bool find_numpy(PyObject *modules) {
    PyObject *numpy = PyDict_GetItemString(modules, "numpy");
    if (!numpy) return true;
    nb::handle np(numpy);
    cache->numpy_array = reinterpret_cast<PyTypeObject *>(np.attr("ndarray").ptr());
    Py_INCREF(cache->numpy_array);
    cache->numpy_empty = np.attr("empty");
    cache->numpy_empty_like = np.attr("empty_like");
    for (int slot = 0; slot < 4; ++slot) cache->numpy_index[slot] = np.attr("dtype")(kIndexDtypeNames[slot]);
    return true;
}

// The type's DLPack C exchange table of major version 1 (walking its
// chain of older tables), with the two calls the common path makes; none
// (null): the type has no table, or none this layer knows.
void find_exchange_api(PyObject *type, nb::object &capsule, const ExchangeApi *&api) {
    PyObject *found = PyObject_GetAttrString(type, "__dlpack_c_exchange_api__");
    if (!found) {
        PyErr_Clear();
        return;
    }
    nb::object held = nb::steal(found);
    if (!PyCapsule_IsValid(found, "dlpack_exchange_api")) return;
    auto *header = static_cast<ExchangeApiHeader *>(PyCapsule_GetPointer(found, "dlpack_exchange_api"));
    while (header && header->major > 1) header = header->previous;
    if (!header || header->major != 1) return;
    const auto *table = reinterpret_cast<const ExchangeApi *>(header);
    if (!table->dltensor_from_py_object_no_sync || !table->current_work_stream) return;
    capsule = std::move(held);
    api = table;
}

bool find_torch(PyObject *modules) {
    PyObject *torch = PyDict_GetItemString(modules, "torch");
    if (!torch) return true;
    if (!PyObject_HasAttrString(torch, "Tensor") || !PyObject_HasAttrString(torch, "_C"))
        return !still_importing(torch);
    nb::handle t(torch);
    nb::object c = t.attr("_C");
    if (!PyObject_HasAttrString(c.ptr(), "_to_dlpack")) return true;  // not a torch the common path knows
    cache->torch_empty_like = t.attr("empty_like");
    for (int slot = 0; slot < 4; ++slot)
        if (PyObject_HasAttrString(torch, kIndexDtypeNames[slot]))
            cache->torch_index[slot] = t.attr(kIndexDtypeNames[slot]);
    cache->torch_to_dlpack = c.attr("_to_dlpack");
    if (PyObject_HasAttrString(c.ptr(), "_cuda_getCurrentRawStream"))
        cache->torch_raw_stream = c.attr("_cuda_getCurrentRawStream");
    cache->torch_tensor = reinterpret_cast<PyTypeObject *>(t.attr("Tensor").ptr());
    Py_INCREF(cache->torch_tensor);
    if (!cache->torch_exchange_off)
        find_exchange_api(reinterpret_cast<PyObject *>(cache->torch_tensor), cache->torch_exchange_capsule,
                          cache->torch_exchange);
    return true;
}

bool find_cupy(PyObject *modules) {
    PyObject *cupy = PyDict_GetItemString(modules, "cupy");
    if (!cupy) return true;
    if (!cache->numpy_array) return false;  // (CuPy imports numpy: its dtypes are numpy's)
    try {
        nb::handle c(cupy);
        nb::object cuda = c.attr("cuda"), array = c.attr("ndarray");
        cache->cupy_get_device = cuda.attr("runtime").attr("getDevice");
        cache->cupy_current_stream = cuda.attr("get_current_stream");
        cache->cupy_array = reinterpret_cast<PyTypeObject *>(array.release().ptr());
    } catch (const nb::python_error &) {
        // A CuPy still importing (looked for again on the next call), or
        // without these: its arrays take the general path.
        return !still_importing(cupy);
    }
    return true;
}

// Looks for the frameworks not found yet, once per change in the number of
// imported modules (a framework imported since changes it; one a module
// replaced in sys.modules under the same count is found at the next import).
void find_frameworks() {
    if (cache->numpy_array && cache->torch_tensor && cache->cupy_array) return;
    PyObject *modules = PyImport_GetModuleDict();
    const Py_ssize_t imported = PyDict_Size(modules);
    if (imported == cache->modules_looked) return;
    bool settled = true;
    if (!cache->numpy_array) settled = find_numpy(modules) && settled;
    if (!cache->torch_tensor) settled = find_torch(modules) && settled;
    if (!cache->cupy_array) settled = find_cupy(modules) && settled;
    cache->modules_looked = settled ? imported : -1;
}

// Sets operand's shape, ndim, count and last from lengths; false when
// strides (nullptr: none given, C-contiguous) are not C-contiguous. unit:
// one element's stride in strides' unit (DLPack counts elements, 1; the CUDA
// Array Interface bytes, the item size). Any stride passes on an axis of
// length 1, as numpy's and torch's contiguity flags have it.
bool read_c_contiguous_shape(Operand &operand, int ndim, const std::int64_t *lengths,
                             const std::int64_t *strides, std::int64_t unit) {
    if (ndim < 0 || ndim > max_axes) return false;
    std::uint64_t count = 1;
    std::int64_t expected_stride = unit;
    for (int axis = ndim - 1; axis >= 0; --axis) {
        std::int64_t length = lengths[axis];
        if (length < 0) return false;
        if (strides && length != 1 && strides[axis] != expected_stride) return false;
        expected_stride *= length;
        operand.shape[axis] = length;
        count *= static_cast<std::uint64_t>(length);
    }
    operand.ndim = ndim;
    operand.count = count;
    operand.last = ndim ? static_cast<std::uint64_t>(lengths[ndim - 1]) : 1;
    return true;
}

bool read_numpy(PyObject *object, Operand &operand) {
    auto *fields = reinterpret_cast<NumpyArrayFields *>(object);
    // Misaligned data (np.frombuffer at an odd offset): the general path
    // says which argument it is.
    if (!(fields->flags & numpy_c_contiguous) || !(fields->flags & numpy_aligned)) return false;
    if (!dtype_of(fields->descr, operand)) return false;
    if (fields->nd > max_axes) return false;
    std::uint64_t count = 1;
    for (int axis = 0; axis < fields->nd; ++axis) {
        operand.shape[axis] = fields->dimensions[axis];
        count *= static_cast<std::uint64_t>(fields->dimensions[axis]);
    }
    operand.object = object;
    operand.kind = Kind::numpy;
    operand.data = fields->data;
    operand.count = count;
    operand.ndim = fields->nd;
    operand.last = fields->nd ? static_cast<std::uint64_t>(fields->dimensions[fields->nd - 1]) : 1;
    operand.on_device = false;
    operand.device = -1;
    operand.writeable = (fields->flags & numpy_writeable) != 0;
    return true;
}

// A torch tensor through torch's DLPack C exchange table (a view filled in
// place, valid while the tensor is), or else torch._C._to_dlpack (one C
// call, a capsule kept unconsumed until the operand goes: its destructor,
// torch's, frees the export).
bool read_torch(PyObject *object, Operand &operand) {
    nb::dlpack::dltensor viewed{};
    const nb::dlpack::dltensor *found = &viewed;
    if (cache->torch_exchange) {
        if (cache->torch_exchange->dltensor_from_py_object_no_sync(object, &viewed) != 0) {
            PyErr_Clear();
            return false;
        }
    } else {
        PyObject *capsule = PyObject_CallOneArg(cache->torch_to_dlpack.ptr(), object);
        if (!capsule) {
            PyErr_Clear();
            return false;
        }
        operand.keep = nb::steal(capsule);
        auto *managed = static_cast<ManagedTensor *>(PyCapsule_GetPointer(capsule, "dltensor"));
        if (!managed) {
            PyErr_Clear();
            return false;
        }
        found = &managed->tensor;
    }
    const nb::dlpack::dltensor &tensor = *found;
    operand.code = dlpack_code(tensor.dtype, operand.is_bool);
    if (operand.code < 0) return false;
    if (tensor.device.device_type == 1) {  // kDLCPU
        operand.on_device = false;
        operand.device = -1;
    } else if (tensor.device.device_type == 2 &&  // kDLCUDA
               (cache->torch_exchange || cache->torch_raw_stream.is_valid())) {
        operand.on_device = true;
        operand.device = tensor.device.device_id;
    } else {
        return false;
    }
    if (!read_c_contiguous_shape(operand, tensor.ndim, tensor.shape, tensor.strides, 1)) return false;
    operand.object = object;
    operand.kind = Kind::torch;
    operand.data = static_cast<char *>(tensor.data) + tensor.byte_offset;
    operand.writeable = true;  // torch has no read-only tensors
    operand.dtype = nullptr;
    return true;
}

std::int64_t item_size(int code) {
    switch (code) {
    case GPUPRIM_DTYPE_I8: case GPUPRIM_DTYPE_U8: return 1;
    case GPUPRIM_DTYPE_I16: case GPUPRIM_DTYPE_U16: case GPUPRIM_DTYPE_F16: case GPUPRIM_DTYPE_BF16: return 2;
    case GPUPRIM_DTYPE_I32: case GPUPRIM_DTYPE_U32: case GPUPRIM_DTYPE_F32: return 4;
    default: return 8;
    }
}

std::uintptr_t framework_stream(std::uintptr_t stream) { return stream ? stream : legacy_stream; }

// Whether two C-contiguous operands may share a byte (true too where a
// byte count would not fit 64 bits: the general path then decides).
bool overlap(const Operand &a, const Operand &b) {
    const std::uint64_t begin_a = reinterpret_cast<std::uintptr_t>(a.data),
                        begin_b = reinterpret_cast<std::uintptr_t>(b.data);
    std::uint64_t bytes_a, bytes_b, end_a, end_b;
    if (__builtin_mul_overflow(a.count, std::uint64_t(item_size(a.code)), &bytes_a) ||
        __builtin_mul_overflow(b.count, std::uint64_t(item_size(b.code)), &bytes_b) ||
        __builtin_add_overflow(begin_a, bytes_a, &end_a) || __builtin_add_overflow(begin_b, bytes_b, &end_b))
        return true;
    return begin_a < end_b && begin_b < end_a;
}

// A CuPy array, read as the general path reads it (_arrays._cupy): its
// attributes, not its __cuda_array_interface__, whose dictionary CuPy
// builds in Python code on every read (dtype.descr, a list, among it: half
// a microsecond, then its entries and dtype, device and stream read again;
// 2.4-3.4 us in all, against 1.1 now: bench/RESULTS.md). The data address
// and device from x.data (a MemoryPointer), shape and strides (bytes) from x.shape and x.strides, the dtype from
// x.dtype. CuPy arrays have no read-only flag: always writeable. The call
// runs on CuPy's current stream on that device (the general path's
// stream); an array off the current device is left to the general path.
// Anything unexpected declines too. An output of the call (`input`: the
// call's x, read already) skips the device and stream lookups (half of the
// reading's time): its device is compared with x's by the caller, and the
// call's stream is x's.
bool read_cupy(PyObject *object, Operand &operand, const Operand *input) {
    try {
        nb::handle x(object);
        nb::object shape = x.attr(cache->s_shape), strides = x.attr(cache->s_strides);
        if (!PyTuple_Check(shape.ptr()) || !PyTuple_Check(strides.ptr())) return false;
        Py_ssize_t ndim = PyTuple_GET_SIZE(shape.ptr());
        if (ndim > max_axes || PyTuple_GET_SIZE(strides.ptr()) != ndim) return false;
        std::int64_t lengths[max_axes], steps[max_axes];
        for (Py_ssize_t axis = 0; axis < ndim; ++axis) {
            lengths[axis] = nb::cast<std::int64_t>(nb::handle(PyTuple_GET_ITEM(shape.ptr(), axis)));
            steps[axis] = nb::cast<std::int64_t>(nb::handle(PyTuple_GET_ITEM(strides.ptr(), axis)));
        }
        operand.keep = x.attr(cache->s_dtype);
        if (!dtype_of(operand.keep.ptr(), operand)) return false;
        if (!read_c_contiguous_shape(operand, static_cast<int>(ndim), lengths, steps, item_size(operand.code)))
            return false;
        nb::object memory = x.attr(cache->s_data);
        int device = nb::cast<int>(memory.attr(cache->s_device_id));
        const bool of_cupy_input = input && input->kind == Kind::cupy;
        if (!of_cupy_input && nb::cast<int>(cache->cupy_get_device()) != device) return false;
        operand.object = object;
        operand.kind = Kind::cupy;
        operand.data = reinterpret_cast<void *>(nb::cast<std::uintptr_t>(memory.attr(cache->s_ptr)));
        operand.on_device = true;
        operand.device = device;
        operand.stream = of_cupy_input ? input->stream
                                       : framework_stream(nb::cast<std::uintptr_t>(
                                             cache->cupy_current_stream().attr(cache->s_ptr)));
        operand.writeable = true;
        return true;
    } catch (const nb::python_error &) {
        return false;
    } catch (const nb::cast_error &) {
        return false;
    }
}

// Reads x when it is of the common path: numpy array, torch tensor or CuPy
// array (exact types), C-contiguous, a supported dtype, not empty. `input`:
// the call's x when this is one of its outputs (read_cupy).
bool read(PyObject *object, Operand &operand, bool zero_dimensional = false, const Operand *input = nullptr) {
    find_frameworks();
    PyTypeObject *type = Py_TYPE(object);
    bool ok;
    if (type == cache->numpy_array) {
        ok = read_numpy(object, operand);
    } else if (type == cache->torch_tensor) {
        ok = read_torch(object, operand);
    } else if (type == cache->cupy_array) {
        ok = read_cupy(object, operand, input);
    } else {
        return false;
    }
    return ok && operand.count > 0 && (operand.ndim > 0 || zero_dimensional);
}

// Reads an output of the call whose x is `input`.
bool read_output(PyObject *object, Operand &operand, const Operand &input, bool zero_dimensional = false) {
    return read(object, operand, zero_dimensional, &input);
}

// torch's current stream on the device (0: the default stream).
std::uintptr_t torch_current_stream(int device) {
    if (cache->torch_exchange) {
        void *stream = nullptr;
        if (cache->torch_exchange->current_work_stream(2 /* kDLCUDA */, device, &stream) != 0)
            throw nb::python_error();
        return reinterpret_cast<std::uintptr_t>(stream);
    }
    return nb::cast<std::uintptr_t>(cache->torch_raw_stream(device));
}

// The thread's contexts by (device, stream, framework): the Context objects
// the general path's context_for() made, kept here too so the common path
// finds them without Python code. The framework counts on the GPU only: a
// CUDA array's context allocates from its framework's allocator (torch's
// caching allocator, CuPy's pool), so torch tensors and CuPy arrays on one
// stream have a context each, as context_for() keys them. Lives in the
// thread's state dict (so a thread's entries go with it, and a forked child
// keeps its forking thread's).
struct ThreadContexts {
    struct Entry {
        int device;
        std::uintptr_t stream;
        int framework;  // Kind of a CUDA array's framework; -1 on the CPU
        nb::object context;
        WrapCache *wraps;
    };
    std::vector<Entry> entries;
};

// The context for the operand (and its wrap cache); nullptr with a Python
// error set on failure.
WrapCache *context_for(const Operand &x, nb::object &context) {
    std::uintptr_t stream = 0;  // the CPU
    if (x.kind == Kind::cupy)
        stream = x.stream;
    else if (x.on_device)
        stream = framework_stream(torch_current_stream(x.device));
    const int framework = x.on_device ? static_cast<int>(x.kind) : -1;
    PyObject *state = PyThreadState_GetDict();
    if (!state) throw nb::python_error();
    PyObject *holder = PyDict_GetItemWithError(state, cache->s_contexts_key.ptr());
    ThreadContexts *contexts;
    if (!holder) {
        if (PyErr_Occurred()) throw nb::python_error();
        nb::object made = nb::cast(ThreadContexts{});
        if (PyDict_SetItem(state, cache->s_contexts_key.ptr(), made.ptr())) throw nb::python_error();
        contexts = nb::inst_ptr<ThreadContexts>(made);
    } else {
        contexts = nb::inst_ptr<ThreadContexts>(nb::handle(holder));
    }
    for (auto entry = contexts->entries.begin(); entry != contexts->entries.end(); ++entry) {
        if (entry->device == x.device && entry->stream == stream && entry->framework == framework) {
            if (entry->wraps->context()) {
                context = entry->context;
                return entry->wraps;
            }
            contexts->entries.erase(entry);  // closed since
            break;
        }
    }
    context = cache->context_for_object(nb::handle(x.object));
    WrapCache *wraps = nb::cast<WrapCache *>(context.attr(cache->s_wraps));
    if (contexts->entries.size() >= 16) contexts->entries.erase(contexts->entries.begin());
    contexts->entries.push_back({x.device, stream, framework, context, wraps});
    return wraps;
}

struct Call {
    nb::object context;
    WrapCache *wraps = nullptr;

    gpuprim_buffer_t wrap(const Operand &operand) {
        gpuprim_buffer_t buffer = nullptr;
        check(wraps->wrap(operand.code, operand.data, operand.count, &buffer));
        return buffer;
    }
    void check(gpuprim_status_t status) {
        if (status != GPUPRIM_SUCCESS) {
            cache->raise_status(context, static_cast<int>(status));
            throw nb::python_error();  // raise_status always raises
        }
    }
};

// out= given: usable on the common path only when it is exactly what the
// call would have made (same framework, device, dtype, count, writeable).
bool output_matches(const Operand &out, const Operand &like, int code, std::uint64_t count) {
    return out.kind == like.kind && out.on_device == like.on_device && out.device == like.device &&
           out.code == code && out.is_bool == (code == like.code && like.is_bool) && out.count == count &&
           out.writeable && out.ndim == like.ndim;
}

bool same_shape(const Operand &a, const Operand &b) {
    if (a.ndim != b.ndim) return false;
    for (int axis = 0; axis < a.ndim; ++axis)
        if (a.shape[axis] != b.shape[axis]) return false;
    return true;
}

// out's shape is x's without its last axis.
bool same_shape_prefix(const Operand &out, const Operand &x) {
    if (out.ndim != x.ndim - 1) return false;
    for (int axis = 0; axis < out.ndim; ++axis)
        if (out.shape[axis] != x.shape[axis]) return false;
    return true;
}

// An output's shape: x's with the last axis `last` long, or (last < 0)
// without it (lengths_of); no axes: a 0-d array.
struct Lengths {
    int ndim = 0;
    std::int64_t at[max_axes] = {};

    nb::tuple tuple() const {
        PyObject *result = PyTuple_New(ndim);
        if (!result) throw nb::python_error();
        for (int axis = 0; axis < ndim; ++axis) {
            PyObject *length = PyLong_FromLongLong(at[axis]);
            if (!length) {
                Py_DECREF(result);
                throw nb::python_error();
            }
            PyTuple_SET_ITEM(result, axis, length);
        }
        return nb::steal<nb::tuple>(result);
    }
};

Lengths lengths_of(const Operand &x, std::int64_t last) {
    Lengths lengths;
    lengths.ndim = last < 0 ? x.ndim - 1 : x.ndim;
    for (int axis = 0; axis < lengths.ndim; ++axis) lengths.at[axis] = axis == x.ndim - 1 ? last : x.shape[axis];
    return lengths;
}

// A new CuPy array: cupy.ndarray(shape, dtype) itself, which is what
// cupy.empty and cupy.empty_like (the general path's) end in after their
// Python-level argument handling (about a microsecond): C order, on the
// current device (read_cupy took x only there), from CuPy's memory pool on
// its current stream.
nb::object new_cupy_array(const Lengths &shape, nb::handle dtype) {
    return nb::handle(reinterpret_cast<PyObject *>(cache->cupy_array))(shape.tuple(), dtype);
}

// The allocator's error report, ignored: a failed allocation is made again
// through torch's Python API (torch_output), which raises torch's own
// error if it fails too.
void ignore_allocation_error(void *, const char *, const char *) {}

// A new C-contiguous tensor of x's device (a torch tensor) through torch's
// DLPack C exchange table: at::empty in torch's allocator (on a GPU its
// caching allocator, on the device's current stream, as new_empty) without
// torch's Python argument parsing of new_empty(shape, dtype=...) (top-k's
// two outputs: 26.8 -> 17.9 us a call on the H200, bench/RESULTS.md
// fifty-ninth run; empty_like's own cost is about at::empty's). Null (not
// valid) when the table lacks the two calls or either fails.
nb::object exchange_empty(const Operand &x, const Lengths &shape, int code, bool is_bool) {
    const ExchangeApi *api = cache->torch_exchange;
    if (!api || !api->managed_tensor_allocator || !api->managed_tensor_to_py_object_no_sync) return {};
    nb::dlpack::dltensor prototype{};
    if (!dlpack_dtype_of(code, is_bool, prototype.dtype)) return {};
    prototype.device.device_type = x.on_device ? 2 /* kDLCUDA */ : 1 /* kDLCPU */;
    prototype.device.device_id = x.on_device ? x.device : 0;
    prototype.ndim = shape.ndim;
    prototype.shape = const_cast<std::int64_t *>(shape.at);
    ManagedTensorVersioned *made = nullptr;
    if (api->managed_tensor_allocator(&prototype, &made, nullptr, ignore_allocation_error) != 0 || !made) {
        PyErr_Clear();  // the table reports through the callback; a producer that also raised is not left raising
        return {};
    }
    void *object = nullptr;
    if (api->managed_tensor_to_py_object_no_sync(made, &object) != 0 || !object) {
        // Not freed here: the table does not say whether a failed call had
        // taken the tensor over already (torch's takes it on its first
        // step), and freeing it twice would be worse than keeping it.
        PyErr_Clear();
        return {};
    }
    return nb::steal(static_cast<PyObject *>(object));
}

// A torch output: through the exchange table, else torch's Python API
// (`slow`, called only then).
template <typename Slow>
nb::object torch_output(const Operand &x, const Lengths &shape, int code, bool is_bool, Slow &&slow) {
    nb::object made = exchange_empty(x, shape, code, is_bool);
    return made.is_valid() ? made : slow();
}

// New arrays of x's framework and device.
nb::object empty_like(const Operand &x) {
    switch (x.kind) {
    case Kind::numpy: return cache->numpy_empty_like(nb::handle(x.object));
    case Kind::cupy: return new_cupy_array(lengths_of(x, static_cast<std::int64_t>(x.last)), nb::handle(x.dtype));
    default:
        return torch_output(x, lengths_of(x, static_cast<std::int64_t>(x.last)), x.code, x.is_bool,
                            [&] { return cache->torch_empty_like(nb::handle(x.object)); });
    }
}

// The slot of an index dtype (dtype= of argsort and topk: None is int64)
// in Cache's numpy_index / torch_index, or -1: not an index dtype, or one
// x's framework lacks (the general path says which are allowed).
int index_slot(const Operand &x, nb::handle dtype) {
    int code = GPUPRIM_DTYPE_I64;
    if (!dtype.is_none())
        code = cached_answer(cache->index_dtypes, dtype.ptr(), 64, [&] {
                   nb::object found = cache->index_code(dtype);
                   return DtypeAnswer{found.is_none() ? -1 : nb::cast<int>(found), false};
               }).code;
    for (int slot = 0; slot < 4; ++slot)
        if (kIndexDtypeCodes[slot] == code)
            return x.kind == Kind::torch && !cache->torch_index[slot].is_valid() ? -1 : slot;
    return -1;
}

// Indices of the dtype in `slot` (index_slot), of `shape`.
nb::object empty_indices(const Operand &x, const Lengths &shape, int slot) {
    switch (x.kind) {
    case Kind::numpy: return cache->numpy_empty(shape.tuple(), cache->numpy_index[slot]);
    case Kind::cupy: return new_cupy_array(shape, cache->numpy_index[slot]);
    default:
        return torch_output(x, shape, kIndexDtypeCodes[slot], false, [&] {
            return nb::handle(x.object).attr(cache->s_new_empty)(shape.tuple(),
                                                                 nb::arg("dtype") = cache->torch_index[slot]);
        });
    }
}

// x's dtype, of `shape`.
nb::object empty_of_dtype(const Operand &x, const Lengths &shape) {
    switch (x.kind) {
    case Kind::numpy: return cache->numpy_empty(shape.tuple(), nb::handle(x.dtype));
    case Kind::cupy: return new_cupy_array(shape, nb::handle(x.dtype));
    default:
        return torch_output(x, shape, x.code, x.is_bool,
                            [&] { return nb::handle(x.object).attr(cache->s_new_empty)(shape.tuple()); });
    }
}


// The layout of a per-axis call: 0 flat (1-D x), 1 rows (N-D x along the
// last axis), -1 not on the common path (another axis: the general path
// says why).
int layout_of(const Operand &x, nb::handle axis) {
    if (axis.is_none()) return x.ndim == 1 ? 0 : -1;
    if (!PyLong_CheckExact(axis.ptr())) return -1;
    long value = PyLong_AsLong(axis.ptr());
    if (value == -1 && PyErr_Occurred()) {  // past a C long: the general path says why
        PyErr_Clear();
        return -1;
    }
    if (value != -1 && value != x.ndim - 1) return -1;
    return x.ndim == 1 ? 0 : 1;
}

gpuprim_segments_t rows_of(const Operand &x) {
    gpuprim_segments_t segments;
    library().segments_init_rows(&segments, x.count / x.last, x.last);
    return segments;
}

gpuprim_order_t order_of(nb::handle flag) {
    return PyObject_IsTrue(flag.ptr()) ? GPUPRIM_ORDER_DESCENDING : GPUPRIM_ORDER_ASCENDING;
}

bool is_bool_value(nb::handle flag) { return flag.ptr() == Py_True || flag.ptr() == Py_False; }

nb::object fast_sort(nb::handle x, nb::handle axis, nb::handle descending, nb::handle out) {
    Operand keys;
    if (!is_bool_value(descending) || !read(x.ptr(), keys)) return nb::none();
    int layout = layout_of(keys, axis);
    if (layout < 0 || keys.last == 0) return nb::none();
    nb::object result;
    Operand target;
    if (out.is_none()) {
        result = empty_like(keys);
        if (!read_output(result.ptr(), target, keys)) return nb::none();
    } else {
        if (!read_output(out.ptr(), target, keys) || !output_matches(target, keys, keys.code, keys.count) ||
            !same_shape(target, keys))
            return nb::none();
        // In place, or apart; an out partly over x is the general path's
        // to refuse, naming out and x.
        if (target.data != keys.data && overlap(target, keys)) return nb::none();
        result = nb::borrow(out);
    }
    Call call;
    call.wraps = context_for(keys, call.context);
    gpuprim_buffer_t in = call.wrap(keys), sorted = call.wrap(target);
    gpuprim_context_t context = call.wraps->context();
    gpuprim_order_t order = order_of(descending);
    gpuprim_status_t status;
    if (layout == 0) {
        nb::gil_scoped_release unlocked;
        status = library().sort(context, in, nullptr, sorted, nullptr, order);
    } else {
        gpuprim_segments_t segments = rows_of(keys);
        gpuprim_sort_options_t options;
        library().sort_options_init(&options);
        options.order = order;
        nb::gil_scoped_release unlocked;
        status = library().segmented_sort(context, &segments, in, nullptr, sorted, nullptr, &options);
    }
    call.check(status);
    return result;
}

nb::object fast_argsort(nb::handle x, nb::handle axis, nb::handle descending, nb::handle dtype) {
    Operand keys;
    if (!is_bool_value(descending) || !read(x.ptr(), keys)) return nb::none();
    int layout = layout_of(keys, axis);
    if (layout < 0 || keys.last == 0) return nb::none();
    const int slot = index_slot(keys, dtype);
    if (slot < 0) return nb::none();
    nb::object result = empty_indices(keys, lengths_of(keys, static_cast<std::int64_t>(keys.last)), slot);
    Operand indices;
    if (!read_output(result.ptr(), indices, keys)) return nb::none();
    Call call;
    call.wraps = context_for(keys, call.context);
    gpuprim_buffer_t in = call.wrap(keys), positions = call.wrap(indices);
    gpuprim_context_t context = call.wraps->context();
    gpuprim_sort_options_t options;
    library().sort_options_init(&options);
    options.order = order_of(descending);
    gpuprim_status_t status;
    if (layout == 0) {
        nb::gil_scoped_release unlocked;
        status = library().argsort(context, in, nullptr, positions, &options);
    } else {
        gpuprim_segments_t segments = rows_of(keys);
        nb::gil_scoped_release unlocked;
        status = library().segmented_argsort(context, &segments, in, nullptr, positions, &options);
    }
    call.check(status);
    return result;
}

nb::object fast_topk(nb::handle x, nb::handle k_object, nb::handle largest, nb::handle axis, nb::handle dtype) {
    Operand keys;
    if (!is_bool_value(largest) || !PyLong_CheckExact(k_object.ptr()) || !read(x.ptr(), keys)) return nb::none();
    int layout = layout_of(keys, axis);
    if (layout < 0) return nb::none();
    long long k = PyLong_AsLongLong(k_object.ptr());
    if (k == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return nb::none();
    }
    if (k <= 0 || static_cast<std::uint64_t>(k) > keys.last) return nb::none();  // the general path's errors
    const int slot = index_slot(keys, dtype);
    if (slot < 0) return nb::none();
    const Lengths shape = lengths_of(keys, k);
    nb::object values = empty_of_dtype(keys, shape);
    nb::object positions = empty_indices(keys, shape, slot);
    Operand values_out, indices_out;
    if (!read_output(values.ptr(), values_out, keys) || !read_output(positions.ptr(), indices_out, keys))
        return nb::none();
    Call call;
    call.wraps = context_for(keys, call.context);
    gpuprim_buffer_t in = call.wrap(keys), chosen = call.wrap(values_out), where = call.wrap(indices_out);
    gpuprim_context_t context = call.wraps->context();
    gpuprim_order_t order = PyObject_IsTrue(largest.ptr()) ? GPUPRIM_ORDER_DESCENDING : GPUPRIM_ORDER_ASCENDING;
    gpuprim_status_t status;
    if (layout == 0) {
        nb::gil_scoped_release unlocked;
        status = library().topk(context, in, static_cast<std::uint64_t>(k), order, chosen, where);
    } else {
        gpuprim_segments_t segments = rows_of(keys);
        nb::gil_scoped_release unlocked;
        status = library().segmented_topk(context, &segments, in, static_cast<std::uint64_t>(k), order, chosen,
                                          where);
    }
    call.check(status);
    return nb::make_tuple(values, positions);
}

// The result of a whole-array sum / min / max: numpy, one element (handed
// back as numpy's scalar); on a GPU, a 0-d array on x's device, as torch's
// and CuPy's own sums give; null (not valid) for a CPU tensor (the general
// path makes its 0-d result).
nb::object whole_result(const Operand &source) {
    if (source.kind == Kind::numpy) return cache->numpy_empty(1, nb::handle(source.dtype));
    if (source.on_device) return empty_of_dtype(source, Lengths{});
    return {};
}

// sum / min / max. Sums only of dtypes a sum keeps (floats, 64-bit
// integers): narrower integers widen on the general path (a cast).
nb::object fast_reduce(int op, nb::handle x, nb::handle axis, nb::handle out) {
    Operand source;
    if (!read(x.ptr(), source) || source.is_bool) return nb::none();
    if (op == GPUPRIM_OP_SUM) {
        switch (source.code) {
        case GPUPRIM_DTYPE_F32: case GPUPRIM_DTYPE_F64: case GPUPRIM_DTYPE_F16: case GPUPRIM_DTYPE_BF16:
        case GPUPRIM_DTYPE_I64: case GPUPRIM_DTYPE_U64: break;
        default: return nb::none();
        }
    }
    bool rows = false;
    if (!axis.is_none()) {
        int layout = layout_of(source, axis);
        if (layout < 0) return nb::none();
        rows = layout == 1;
    }
    nb::object result;
    Operand target;
    if (!out.is_none()) {
        // out= of the result's dtype, kind and device: 0-d for the whole
        // array, x.shape[:-1] for rows; written in place, returned.
        if (!read_output(out.ptr(), target, source, true) || target.kind != source.kind || target.on_device != source.on_device ||
            target.device != source.device || target.code != source.code || target.is_bool != source.is_bool ||
            !target.writeable)
            return nb::none();
        // An out inside x: the general path reduces into a new array first.
        if (overlap(target, source)) return nb::none();
        if (rows) {
            if (!same_shape_prefix(target, source))
                return nb::none();
        } else if (target.ndim != 0) {
            return nb::none();
        }
        result = nb::borrow(out);
    } else if (rows) {
        result = empty_of_dtype(source, lengths_of(source, -1));
        if (!read_output(result.ptr(), target, source)) return nb::none();
    } else {
        result = whole_result(source);
        if (!result.is_valid()) return nb::none();  // a CPU tensor's 0-d result: the general path
        if (!read_output(result.ptr(), target, source, source.on_device)) return nb::none();
    }
    Call call;
    call.wraps = context_for(source, call.context);
    gpuprim_buffer_t in = call.wrap(source), into = call.wrap(target);
    gpuprim_context_t context = call.wraps->context();
    gpuprim_status_t status;
    if (rows) {
        gpuprim_segments_t segments = rows_of(source);
        nb::gil_scoped_release unlocked;
        status = library().segmented_reduce(context, static_cast<gpuprim_op_t>(op), &segments, in, into);
    } else {
        nb::gil_scoped_release unlocked;
        status = library().reduce_to_buffer(context, static_cast<gpuprim_op_t>(op), in, into);
    }
    call.check(status);
    if (!rows && source.kind == Kind::numpy && out.is_none()) {
        PyObject *scalar = PySequence_GetItem(result.ptr(), 0);  // numpy's scalar of the dtype
        if (!scalar) throw nb::python_error();
        return nb::steal(scalar);
    }
    return result;
}

// The benchmark's baseline (python/benchmarks/bench_overhead.py): the bare
// library call a Python call makes, `repeats` times on the buffers the common
// path caches, each after the context synchronized (not timed): nanoseconds
// of each call as the host sees it. what: "sort" (x into out) or "sum" (x
// into the one-element out, reduce_to_buffer).
// The benchmark hooks' steps before a library call: x and out read, the
// thread's context, both wrapped (`who` names the hook in the error).
struct Prepared {
    Call call;
    gpuprim_buffer_t source = nullptr, into = nullptr;
};
Prepared prepare(nb::handle x, nb::handle out, const char *who) {
    Operand in, target;
    if (!read(x.ptr(), in) || !read_output(out.ptr(), target, in))
        throw nb::value_error((std::string(who) + ": x and out must be on the common path").c_str());
    Prepared prepared;
    prepared.call.wraps = context_for(in, prepared.call.context);
    prepared.source = prepared.call.wrap(in);
    prepared.into = prepared.call.wrap(target);
    return prepared;
}

std::vector<std::int64_t> c_call_times(const std::string &what, nb::handle x, nb::handle out, int repeats) {
    const Prepared prepared = prepare(x, out, "c_call_times");
    gpuprim_buffer_t source = prepared.source, into = prepared.into;
    gpuprim_context_t context = prepared.call.wraps->context();
    std::vector<std::int64_t> times;
    nb::gil_scoped_release unlocked;
    for (int i = 0; i < repeats; ++i) {
        library().context_synchronize(context);
        auto begin = std::chrono::steady_clock::now();
        gpuprim_status_t status = what == "sort"
                                      ? library().sort(context, source, nullptr, into, nullptr, GPUPRIM_ORDER_ASCENDING)
                                      : library().reduce_to_buffer(context, GPUPRIM_OP_SUM, source, into);
        auto end = std::chrono::steady_clock::now();
        if (status != GPUPRIM_SUCCESS) break;
        times.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(end - begin).count());
    }
    library().context_synchronize(context);
    return times;
}

// The benchmark's split of the overhead (python/benchmarks/bench_overhead.py):
// the common path's own steps for x and out without the library call
// (reading both, the thread's context with its stream, the two wraps),
// `repeats` times: nanoseconds of each.
std::vector<std::int64_t> c_layer_times(nb::handle x, nb::handle out, int repeats) {
    std::vector<std::int64_t> times;
    for (int i = 0; i < repeats; ++i) {
        auto begin = std::chrono::steady_clock::now();
        const Prepared prepared = prepare(x, out, "c_layer_times");
        auto end = std::chrono::steady_clock::now();  // the wraps are released after it, untimed
        times.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(end - begin).count());
    }
    return times;
}

// The benchmark's split of an allocating call's overhead: making the
// result the way the common path makes it, then dropping it (as a caller
// that discards it does), `repeats` times: nanoseconds of each. scalar:
// a whole-array sum's result (numpy: one element, a GPU array: 0-d); else
// sort's (x's shape and dtype). For torch, the exchange table's allocator
// where torch has one (fast_use_torch_exchange), else torch's Python call.
std::vector<std::int64_t> c_output_times(nb::handle x, bool scalar, int repeats) {
    Operand in;
    if (!read(x.ptr(), in) || (scalar && !in.on_device && in.kind != Kind::numpy))
        throw nb::value_error("c_output_times: x must be on the common path (and, for scalar, numpy or a GPU array)");
    std::vector<std::int64_t> times;
    for (int i = 0; i < repeats; ++i) {
        auto begin = std::chrono::steady_clock::now();
        {
            nb::object made = scalar ? whole_result(in) : empty_like(in);
        }
        auto end = std::chrono::steady_clock::now();
        times.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(end - begin).count());
    }
    return times;
}

// The benchmark hooks' times as a Python list.
nb::list as_list(const std::vector<std::int64_t> &times) {
    nb::list result;
    for (std::int64_t t : times) result.append(t);
    return result;
}

}  // namespace

void define_fast_calls(nb::module_ &m) {
    // The address of a numpy array's first element (gpuprim._arrays.address,
    // on the general path): its data pointer, read from numpy's ABI-stable
    // fields, where __array_interface__ builds a dictionary on every read
    // (1.2 us, three reads a cumsum).
    m.def(
        "numpy_address",
        [](nb::handle array) {
            // numpy.ndarray, looked up once; the reference is kept for the
            // process (a static nb::object would be released after the
            // interpreter has gone).
            static PyObject *ndarray = nb::object(nb::module_::import_("numpy").attr("ndarray")).release().ptr();
            if (!PyObject_TypeCheck(array.ptr(), reinterpret_cast<PyTypeObject *>(ndarray)))
                throw nb::type_error("numpy_address: not a numpy array");
            return reinterpret_cast<std::uintptr_t>(reinterpret_cast<NumpyArrayFields *>(array.ptr())->data);
        },
        nb::arg("array"), "The address of a numpy array's first element (its data pointer)");
    m.def("c_call_times", [](const char *what, nb::handle x, nb::handle out, int repeats) {
        return as_list(c_call_times(what, x, out, repeats));
    });
    m.def("c_layer_times",
          [](nb::handle x, nb::handle out, int repeats) { return as_list(c_layer_times(x, out, repeats)); });
    m.def("c_output_times",
          [](nb::handle x, bool scalar, int repeats) { return as_list(c_output_times(x, scalar, repeats)); });
    nb::class_<ThreadContexts>(m, "_ThreadContexts");
    m.def("fast_init", [](nb::handle dtype_code, nb::handle index_code, nb::handle context_for_object,
                          nb::handle raise_status) {
        if (!cache) cache = new Cache();  // lives as long as the process (the module is never unloaded)
        cache->dtype_code = nb::borrow(dtype_code);
        cache->index_code = nb::borrow(index_code);
        cache->context_for_object = nb::borrow(context_for_object);
        cache->raise_status = nb::borrow(raise_status);
    });
    // Testing hook: whether the common path reads torch tensors through
    // torch's DLPack C exchange table (use=True: when torch has one) or
    // through torch._C._to_dlpack (use=False); returns whether it now does.
    m.def("fast_use_torch_exchange", [](bool use) {
        if (!cache) throw nb::value_error("fast_init first");
        find_frameworks();
        cache->torch_exchange_off = !use;
        cache->torch_exchange = nullptr;
        cache->torch_exchange_capsule = nb::object();
        if (use && cache->torch_tensor)
            find_exchange_api(reinterpret_cast<PyObject *>(cache->torch_tensor), cache->torch_exchange_capsule,
                              cache->torch_exchange);
        return cache->torch_exchange != nullptr;
    }, nb::arg("use"));
    m.def("fast_sort", &fast_sort, nb::arg("x").none(), nb::arg("axis").none(), nb::arg("descending").none(),
          nb::arg("out").none());
    m.def("fast_argsort", &fast_argsort, nb::arg("x").none(), nb::arg("axis").none(),
          nb::arg("descending").none(), nb::arg("dtype").none());
    m.def("fast_topk", &fast_topk, nb::arg("x").none(), nb::arg("k").none(), nb::arg("largest").none(),
          nb::arg("axis").none(), nb::arg("dtype").none());
    m.def("fast_reduce",
          [](int op, nb::handle x, nb::handle axis, nb::handle out) { return fast_reduce(op, x, axis, out); },
          nb::arg("op"), nb::arg("x").none(), nb::arg("axis").none(), nb::arg("out").none() = nb::none());
}

}  // namespace gpuprim_ext
