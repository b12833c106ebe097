// SPDX-License-Identifier: Apache-2.0
// The CPU backend: complete for every operation and dtype, and the reference
// behaviour the CUDA backend is held to. It uses the same operator and key
// transform definitions (src/core/ops.h, key_transform.h) as the kernels.
// Every call uses the context's threads (cpu/parallel.h: oneTBB, OpenMP or
// none) and gives bitwise the same results for every thread count: reduce,
// dot and scan cut their input into fixed blocks (cpu/reduce_scan.h), and
// the sort's output is unique (cpu/sort.h).
#include "core/backend.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/key_transform.h"
#include "core/ops.h"
#include "core/workspace.h"
#include "cpu/parallel.h"
#include "cpu/reduce_scan.h"
#include "cpu/sort.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>

namespace gpuprim {
namespace {

using cpu::Parallel;
using cpu::Wide;

constexpr uint64_t kGrain = 1 << 16;  // elements per task of the element-wise passes

// count elements of T in bytes, or OUT_OF_MEMORY when that overflows.
template <typename T>
uint64_t bytes_of(uint64_t count, uint64_t copies = 1) {
    if (count > UINT64_MAX / sizeof(T) / copies)
        fail(GPUPRIM_ERROR_OUT_OF_MEMORY, "sort: %llu elements need more than 2^64 bytes of scratch",
             static_cast<unsigned long long>(count));
    return count * sizeof(T) * copies;
}

template <typename KeyBits>
void sort_keys(Parallel &parallel, Workspace &workspace, const SortRequest &request) {
    const uint64_t n = request.count;
    const uint64_t extra = cpu::sort_scratch_elements(parallel, n);
    auto *keys = static_cast<KeyBits *>(workspace.reserve(bytes_of<KeyBits>(n + extra)));
    const auto *in = static_cast<const KeyBits *>(request.keys_in);
    auto *out = static_cast<KeyBits *>(request.keys_out);
    const KeyKind kind = request.key_kind;
    const bool descending = request.descending;
    parallel.for_ranges(n, kGrain, [&](uint64_t begin, uint64_t end) {
        for (uint64_t i = begin; i < end; ++i) keys[i] = to_radix_key(in[i], kind, descending);
    });
    // keys_in is read: from here on keys_out (which may be keys_in) is written.
    cpu::sort_and_emit(parallel, keys, extra ? keys + n : nullptr, n,
                       [out, kind, descending](uint64_t k, KeyBits key) {
                           out[k] = from_radix_key(key, kind, descending);
                       });
}

// Pairs: the keys packed with their positions into Packed (uint64_t or Wide),
// sorted, then keys unpacked and values gathered by position as the sorted
// packed keys are written out.
template <typename KeyBits, typename ValueBits, typename Packed>
void sort_pairs_packed(Parallel &parallel, Workspace &workspace, const SortRequest &request) {
    static_assert(sizeof(ValueBits) <= sizeof(Packed), "values in place reuse the scratch");
    const uint64_t n = request.count;
    // Values in place: gathered into scratch first, then copied.
    const bool in_place = request.values_out == request.values_in;
    const uint64_t rounds = cpu::sort_scratch_elements(parallel, n);
    const uint64_t extra = rounds + (in_place ? n : 0);
    auto *packed = static_cast<Packed *>(workspace.reserve(bytes_of<Packed>(n + extra)));
    Packed *scratch = rounds ? packed + n : nullptr;
    const auto *keys_in = static_cast<const KeyBits *>(request.keys_in);
    const auto *values_in = static_cast<const ValueBits *>(request.values_in);
    auto *keys_out = static_cast<KeyBits *>(request.keys_out);
    auto *values_out = static_cast<ValueBits *>(request.values_out);
    const KeyKind kind = request.key_kind;
    const bool descending = request.descending;
    parallel.for_ranges(n, kGrain, [&](uint64_t begin, uint64_t end) {
        for (uint64_t i = begin; i < end; ++i) {
            const KeyBits key = to_radix_key(keys_in[i], kind, descending);
            if constexpr (std::is_same_v<Packed, Wide>) packed[i] = Wide{i, uint64_t(key)};
            else packed[i] = (uint64_t(key) << 32) | i;
        }
    });
    // In place, the gather must not write values_out while values_in (the
    // same memory) is still being read: it goes to scratch past the merge's.
    ValueBits *gathered =
        in_place ? reinterpret_cast<ValueBits *>(packed + n + rounds) : values_out;
    cpu::sort_and_emit(parallel, packed, scratch, n, [&](uint64_t k, const Packed &p) {
        uint64_t position;
        KeyBits key;
        if constexpr (std::is_same_v<Packed, Wide>) {
            position = p.lo;
            key = KeyBits(p.hi);
        } else {
            position = p & 0xFFFFFFFFu;
            key = KeyBits(p >> 32);
        }
        keys_out[k] = from_radix_key(key, kind, descending);
        gathered[k] = values_in[position];
    });
    if (in_place)
        parallel.for_ranges(n, kGrain, [&](uint64_t begin, uint64_t end) {
            std::memcpy(values_out + begin, gathered + begin, (end - begin) * sizeof(ValueBits));
        });
}

template <typename KeyBits, typename ValueBits>
void sort_pairs(Parallel &parallel, Workspace &workspace, const SortRequest &request) {
    if constexpr (sizeof(KeyBits) <= 4) {
        if (request.count <= (uint64_t(1) << 32))
            return sort_pairs_packed<KeyBits, ValueBits, uint64_t>(parallel, workspace, request);
    }
    sort_pairs_packed<KeyBits, ValueBits, Wide>(parallel, workspace, request);
}

// A sort by a bit range of the keys: the sort bits (core/key_transform.h
// sort_bits) packed with positions, sorted, then keys and values gathered by
// position into scratch and copied out (keys_out may be keys_in: the key is
// no longer the packed value, so it comes from the input). ValueBits void:
// keys only.
template <typename KeyBits, typename ValueBits, typename Packed>
void sort_bit_range_packed(Parallel &parallel, Workspace &workspace, const SortRequest &request) {
    constexpr bool kValues = !std::is_void_v<ValueBits>;
    using V = std::conditional_t<kValues, ValueBits, uint8_t>;
    const uint64_t n = request.count;
    const uint64_t rounds = cpu::sort_scratch_elements(parallel, n);
    auto aligned = [](uint64_t bytes) { return (bytes + 63) / 64 * 64; };
    const uint64_t keys_at = aligned(bytes_of<Packed>(n + rounds));
    const uint64_t values_at = aligned(keys_at + bytes_of<KeyBits>(n));
    auto *base = static_cast<unsigned char *>(
        workspace.reserve(values_at + (kValues ? bytes_of<V>(n) : 0)));
    auto *packed = reinterpret_cast<Packed *>(base);
    Packed *scratch = rounds ? packed + n : nullptr;
    auto *keys = reinterpret_cast<KeyBits *>(base + keys_at);
    auto *values = reinterpret_cast<V *>(base + values_at);
    const auto *keys_in = static_cast<const KeyBits *>(request.keys_in);
    const auto *values_in = static_cast<const V *>(request.values_in);
    const KeyKind kind = request.key_kind;
    const bool descending = request.descending;
    const uint32_t begin_bit = request.begin_bit, end_bit = sort_end_bit(request);
    parallel.for_ranges(n, kGrain, [&](uint64_t begin, uint64_t end) {
        for (uint64_t i = begin; i < end; ++i) {
            const uint64_t bits = sort_bits(to_radix_key(keys_in[i], kind, descending), begin_bit, end_bit);
            if constexpr (std::is_same_v<Packed, Wide>) packed[i] = Wide{i, bits};
            else packed[i] = (bits << 32) | i;
        }
    });
    cpu::sort_and_emit(parallel, packed, scratch, n, [&](uint64_t k, const Packed &p) {
        uint64_t position;
        if constexpr (std::is_same_v<Packed, Wide>) position = p.lo;
        else position = p & 0xFFFFFFFFu;
        keys[k] = keys_in[position];
        if constexpr (kValues) values[k] = values_in[position];
    });
    auto *keys_out = static_cast<KeyBits *>(request.keys_out);
    auto *values_out = static_cast<V *>(request.values_out);
    parallel.for_ranges(n, kGrain, [&](uint64_t begin, uint64_t end) {
        std::memcpy(keys_out + begin, keys + begin, (end - begin) * sizeof(KeyBits));
        if constexpr (kValues) std::memcpy(values_out + begin, values + begin, (end - begin) * sizeof(V));
    });
}

template <typename KeyBits, typename ValueBits>
void sort_bit_range(Parallel &parallel, Workspace &workspace, const SortRequest &request) {
    // 32 sort bits or fewer and positions below 2^32 pack into 64 bits.
    if (sort_end_bit(request) - request.begin_bit <= 32 && request.count <= (uint64_t(1) << 32))
        return sort_bit_range_packed<KeyBits, ValueBits, uint64_t>(parallel, workspace, request);
    sort_bit_range_packed<KeyBits, ValueBits, Wide>(parallel, workspace, request);
}

template <typename KeyBits>
void sort_by_value_width(Parallel &parallel, Workspace &workspace, const SortRequest &request) {
    if (!sorts_whole_key(request)) {
        if (request.value_bytes == 0) return sort_bit_range<KeyBits, void>(parallel, workspace, request);
        return dispatch_width(request.value_bytes, "sort: unsupported value width", [&](auto value_bits) {
            sort_bit_range<KeyBits, decltype(value_bits)>(parallel, workspace, request);
        });
    }
    if (request.value_bytes == 0) return sort_keys<KeyBits>(parallel, workspace, request);
    dispatch_width(request.value_bytes, "sort: unsupported value width", [&](auto value_bits) {
        sort_pairs<KeyBits, decltype(value_bits)>(parallel, workspace, request);
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

    // Scratch (the sort's packed keys) is kept between calls, as on CUDA.
    uint64_t workspace_bytes() const override { return workspace_.capacity(); }
    void release_workspace() override { workspace_.release(); }

    void reduce(gpuprim_op_t op, gpuprim_dtype_t dtype, const void *input, uint64_t count,
                void *result, bool) override {
        dispatch_dtype(dtype, [&](auto zero) {
            using T = decltype(zero);
            T value = cpu::reduce<T>(parallel_, op, static_cast<const T *>(input), count);
            std::memcpy(result, &value, sizeof value);
        });
    }

    void dot(gpuprim_dtype_t dtype, const void *a, const void *b, uint64_t count, void *result,
             bool) override {
        dispatch_dtype(dtype, [&](auto zero) {
            using T = decltype(zero);
            T value = cpu::dot<T>(parallel_, static_cast<const T *>(a), static_cast<const T *>(b),
                                  count);
            std::memcpy(result, &value, sizeof value);
        });
    }

    void scan(gpuprim_op_t op, gpuprim_scan_kind_t kind, gpuprim_dtype_t dtype, const void *input,
              void *output, uint64_t count) override {
        dispatch_dtype(dtype, [&](auto zero) {
            using T = decltype(zero);
            cpu::scan<T>(parallel_, op, kind == GPUPRIM_SCAN_EXCLUSIVE,
                         static_cast<const T *>(input), static_cast<T *>(output), count);
        });
    }

    void sort(const SortRequest &request) override {
        if (request.count == 0) return;
        dispatch_width(request.key_bytes, "sort: unsupported key width", [&](auto key_bits) {
            sort_by_value_width<decltype(key_bits)>(parallel_, workspace_, request);
        });
    }

    explicit CpuBackend(int32_t threads)
        : parallel_(threads),
          workspace_([this](uint64_t bytes) { return allocate(bytes); },
                     [this](void *memory) { deallocate(memory); }) {}
    ~CpuBackend() override { workspace_.release(); }

private:
    Parallel parallel_;
    Workspace workspace_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(int32_t threads) {
    return std::make_unique<CpuBackend>(threads);
}

}  // namespace gpuprim
