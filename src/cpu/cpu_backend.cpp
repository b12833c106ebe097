// SPDX-License-Identifier: Apache-2.0
// The CPU backend: complete for every operation and dtype, and the reference
// behaviour the CUDA backend is held to. It uses the same operator and key
// transform definitions (src/core/ops.h, key_transform.h) as the kernels.
// Float sums run in a fixed order (sequential), so they are deterministic.
#include "core/backend.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/key_transform.h"
#include "core/ops.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

namespace gpuprim {
namespace {

template <typename T, typename Op>
T reduce_range(const T *input, uint64_t count, Op op) {
    T accumulator = Op::identity();
    for (uint64_t i = 0; i < count; ++i) accumulator = op(accumulator, input[i]);
    return accumulator;
}

// SUM runs in the element's accumulator (core/ops.h: 32 bits for narrow
// integers, f32 for the 16-bit floats) and is rounded once at the end.
template <typename T>
T sum_range(const T *input, uint64_t count) {
    using A = sum_accumulator_t<T>;
    A accumulator = A(0);
    const SumOp<A> add;
    for (uint64_t i = 0; i < count; ++i) accumulator = add(accumulator, to_accumulator(input[i]));
    return from_accumulator<T>(accumulator);
}

template <typename T>
T reduce_with(gpuprim_op_t op, const T *input, uint64_t count) {
    switch (op) {
    case GPUPRIM_OP_SUM: return sum_range(input, count);
    case GPUPRIM_OP_MIN: return reduce_range(input, count, MinOp<T>{});
    case GPUPRIM_OP_MAX: return reduce_range(input, count, MaxOp<T>{});
    }
    fail(GPUPRIM_ERROR_INTERNAL, "reduce: unknown op %d", static_cast<int>(op));
}

template <typename T>
T dot_range(const T *a, const T *b, uint64_t count) {
    using A = sum_accumulator_t<T>;
    A accumulator = A(0);
    for (uint64_t i = 0; i < count; ++i)
        accumulator = multiply_add(to_accumulator(a[i]), to_accumulator(b[i]), accumulator);
    return from_accumulator<T>(accumulator);
}

// Reads the whole input before writing, so output may alias input.
template <typename T, typename Op>
void scan_range(const T *input, T *output, uint64_t count, bool exclusive, Op op) {
    T running = Op::identity();
    for (uint64_t i = 0; i < count; ++i) {
        T value = input[i];
        T next = op(running, value);
        output[i] = exclusive ? running : next;
        running = next;
    }
}

// SUM scans keep the running sum in the accumulator; each output is
// rounded from it once.
template <typename T>
void sum_scan_range(const T *input, T *output, uint64_t count, bool exclusive) {
    using A = sum_accumulator_t<T>;
    A running = A(0);
    const SumOp<A> add;
    for (uint64_t i = 0; i < count; ++i) {
        const A next = add(running, to_accumulator(input[i]));
        output[i] = from_accumulator<T>(exclusive ? running : next);
        running = next;
    }
}

template <typename T>
void scan_with(gpuprim_op_t op, bool exclusive, const T *input, T *output, uint64_t count) {
    switch (op) {
    case GPUPRIM_OP_SUM: return sum_scan_range(input, output, count, exclusive);
    case GPUPRIM_OP_MIN: return scan_range(input, output, count, exclusive, MinOp<T>{});
    case GPUPRIM_OP_MAX: return scan_range(input, output, count, exclusive, MaxOp<T>{});
    }
    fail(GPUPRIM_ERROR_INTERNAL, "scan: unknown op %d", static_cast<int>(op));
}

// Stable sort on the sort bits of transformed keys. Bits are carried by
// width, so one instantiation serves every dtype of that width.
template <typename KeyBits>
void sort_keys(const SortRequest &request) {
    std::vector<KeyBits> keys(request.count);
    const auto *in = static_cast<const KeyBits *>(request.keys_in);
    for (uint64_t i = 0; i < request.count; ++i)
        keys[i] = to_radix_key(in[i], request.key_kind, request.descending);
    if (sorts_whole_key(request)) {
        // Equal radix keys are equal bit patterns, so stability is moot here.
        std::sort(keys.begin(), keys.end());
    } else {
        const uint32_t begin = request.begin_bit, end = sort_end_bit(request);
        std::stable_sort(keys.begin(), keys.end(), [begin, end](KeyBits a, KeyBits b) {
            return sort_bits(a, begin, end) < sort_bits(b, begin, end);
        });
    }
    auto *out = static_cast<KeyBits *>(request.keys_out);
    for (uint64_t i = 0; i < request.count; ++i)
        out[i] = from_radix_key(keys[i], request.key_kind, request.descending);
}

template <typename KeyBits, typename ValueBits>
void sort_pairs(const SortRequest &request) {
    struct Pair {
        KeyBits key;
        ValueBits value;
    };
    std::vector<Pair> pairs(request.count);
    const auto *keys_in = static_cast<const KeyBits *>(request.keys_in);
    const auto *values_in = static_cast<const ValueBits *>(request.values_in);
    for (uint64_t i = 0; i < request.count; ++i)
        pairs[i] = Pair{to_radix_key(keys_in[i], request.key_kind, request.descending),
                        values_in[i]};
    const uint32_t begin = request.begin_bit, end = sort_end_bit(request);
    std::stable_sort(pairs.begin(), pairs.end(), [begin, end](const Pair &a, const Pair &b) {
        return sort_bits(a.key, begin, end) < sort_bits(b.key, begin, end);
    });
    auto *keys_out = static_cast<KeyBits *>(request.keys_out);
    auto *values_out = static_cast<ValueBits *>(request.values_out);
    for (uint64_t i = 0; i < request.count; ++i) {
        keys_out[i] = from_radix_key(pairs[i].key, request.key_kind, request.descending);
        values_out[i] = pairs[i].value;
    }
}

template <typename KeyBits>
void sort_by_value_width(const SortRequest &request) {
    if (request.value_bytes == 0) return sort_keys<KeyBits>(request);
    dispatch_width(request.value_bytes, "sort: unsupported value width", [&](auto value_bits) {
        sort_pairs<KeyBits, decltype(value_bits)>(request);
    });
}

class CpuBackend final : public Backend {
public:
    gpuprim_backend_t kind() const override { return GPUPRIM_BACKEND_CPU; }
    int32_t device_ordinal() const override { return -1; }
    const char *device_name() const override { return "CPU"; }

    void *allocate_memory(uint64_t bytes) override {
        if (bytes == 0) return nullptr;
        // 64-byte alignment suits every dtype and keeps vector loads aligned.
        constexpr uint64_t alignment = 64;
        if (bytes > SIZE_MAX - alignment)
            fail(GPUPRIM_ERROR_OUT_OF_MEMORY, "cannot allocate %llu bytes of host memory",
                 static_cast<unsigned long long>(bytes));
        uint64_t rounded = (bytes + alignment - 1) / alignment * alignment;
        void *memory = std::aligned_alloc(alignment, rounded);
        if (!memory)
            fail(GPUPRIM_ERROR_OUT_OF_MEMORY, "cannot allocate %llu bytes of host memory",
                 static_cast<unsigned long long>(bytes));
        return memory;
    }
    void deallocate(void *memory) noexcept override { std::free(memory); }
    void check_wrappable(const void *, uint64_t) override {}
    void upload(void *destination, const void *source, uint64_t bytes) override {
        std::memmove(destination, source, bytes);
    }
    void download(void *destination, const void *source, uint64_t bytes) override {
        std::memmove(destination, source, bytes);
    }
    void synchronize() override {}

    // Temporary storage comes from the C++ allocator per call; nothing is cached.
    uint64_t workspace_bytes() const override { return 0; }
    void release_workspace() override {}

    void reduce(gpuprim_op_t op, gpuprim_dtype_t dtype, const void *input, uint64_t count,
                void *result, bool) override {
        dispatch_dtype(dtype, [&](auto zero) {
            using T = decltype(zero);
            T value = reduce_with<T>(op, static_cast<const T *>(input), count);
            std::memcpy(result, &value, sizeof value);
        });
    }

    void dot(gpuprim_dtype_t dtype, const void *a, const void *b, uint64_t count, void *result,
             bool) override {
        dispatch_dtype(dtype, [&](auto zero) {
            using T = decltype(zero);
            const T value = dot_range(static_cast<const T *>(a), static_cast<const T *>(b), count);
            std::memcpy(result, &value, sizeof value);
        });
    }

    void scan(gpuprim_op_t op, gpuprim_scan_kind_t kind, gpuprim_dtype_t dtype, const void *input,
              void *output, uint64_t count) override {
        dispatch_dtype(dtype, [&](auto zero) {
            using T = decltype(zero);
            scan_with<T>(op, kind == GPUPRIM_SCAN_EXCLUSIVE, static_cast<const T *>(input),
                         static_cast<T *>(output), count);
        });
    }

    void sort(const SortRequest &request) override {
        dispatch_width(request.key_bytes, "sort: unsupported key width",
                       [&](auto key_bits) { sort_by_value_width<decltype(key_bits)>(request); });
    }
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace gpuprim
