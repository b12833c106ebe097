// SPDX-License-Identifier: Apache-2.0
// Checks the segmented scan and reduce (src/cuda/segmented_scan/segmented_scan.cu)
// against a sequential host reference on rows and CSR layouts (empty
// segments, uncovered heads and tails, segments over many tiles, in place),
// and times the four shapes the design aims at. Usage: check_segmented_scan
// [quick]
#include "harness.h"

#include "core/half.h"
#include "cuda/segmented_scan/agent_segmented_scan.cuh"
#include "cuda/segmented_scan/segmented_scan.h"

#include <cmath>
#include <cstring>
#include <random>

using namespace gpuprim;
using namespace gpuprim::cuda;
using kernel_check::DT;
using kernel_check::KernelEnv;

namespace {

struct TestLayout {
    std::string name;
    uint64_t n = 0;
    bool rows = false;
    uint64_t row_count = 0, row_length = 0;
    std::vector<uint64_t> offsets;
    uint32_t offset_bytes = 8;
    uint64_t segments() const { return rows ? row_count : offsets.size() - 1; }
    uint64_t begin(uint64_t s) const { return rows ? s * row_length : offsets[s]; }
    uint64_t end(uint64_t s) const { return rows ? (s + 1) * row_length : offsets[s + 1]; }
};

TestLayout rows_layout(uint64_t r, uint64_t l) {
    TestLayout t;
    t.name = "rows " + std::to_string(r) + "x" + std::to_string(l);
    t.rows = true;
    t.row_count = r;
    t.row_length = l;
    t.n = r * l;
    return t;
}

TestLayout csr_layout(const std::string &name, uint64_t n, std::vector<uint64_t> offsets, uint32_t bytes) {
    TestLayout t;
    t.name = name + " (" + std::to_string(bytes) + "-byte offsets)";
    t.n = n;
    t.offsets = std::move(offsets);
    t.offset_bytes = bytes;
    return t;
}

struct DeviceLayout {
    SegmentLayout layout{};
    void *offsets = nullptr;
    explicit DeviceLayout(const TestLayout &t) {
        layout.segments = t.segments();
        layout.row_length = t.row_length;
        layout.offset_bytes = t.offset_bytes;
        layout.offsets_signed = false;
        layout.data_count = t.n;
        if (!t.rows) {
            std::vector<unsigned char> bytes(t.offsets.size() * t.offset_bytes);
            for (size_t i = 0; i < t.offsets.size(); ++i) {
                if (t.offset_bytes == 4) {
                    const uint32_t v = uint32_t(t.offsets[i]);
                    memcpy(&bytes[i * 4], &v, 4);
                } else {
                    memcpy(&bytes[i * 8], &t.offsets[i], 8);
                }
            }
            CK(cudaMalloc(&offsets, bytes.size()));
            CK(cudaMemcpy(offsets, bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
            layout.offsets = offsets;
        }
    }
    ~DeviceLayout() {
        if (offsets) cudaFree(offsets);
    }
};

template <typename T>
T random_value(std::mt19937_64 &rng, bool nans) {
    if constexpr (kIsHalf<T>) {
        const float f = float(int(rng() % 2001) - 1000) / 1000.f;
        return round_to<T>(f);
    } else if constexpr (std::is_floating_point_v<T>) {
        if (nans && rng() % 5000 == 0) return bit_cast<T>(bits_t<T>(FloatFormat<T>::kCanonicalNan | 1));
        return T(int(rng() % 2001) - 1000) / T(1000);
    } else {
        return T(rng());
    }
}

template <typename T>
double as_double(T x) {
    if constexpr (kIsHalf<T>) return widen(x);
    else return double(x);
}

template <typename T, typename Op>
constexpr bool kFloatSum = kIsFloat<T> && (std::is_same_v<Op, SumOp<T>> || std::is_same_v<Op, WideSumOp<T>>);

int failures = 0;

template <typename T, typename Op>
bool same(T got, T want, double abs_sum) {
    if (bit_cast<bits_t<T>>(got) == bit_cast<bits_t<T>>(want)) return true;
    if constexpr (kFloatSum<T, Op>) {
        const double g = as_double(got), w = as_double(want);
        const double eps = sizeof(T) == 8 ? 1e-13 : sizeof(T) == 4 ? 1e-5 : 2e-3;
        return std::fabs(g - w) <= eps * (abs_sum + std::fabs(w)) + 1e-30;
    }
    return false;
}

// The host reference: sequential folds in the kernel's running value type.
template <typename T, typename Op>
void reference(const TestLayout &t, const std::vector<T> &in, bool reduce, bool exclusive, std::vector<T> &out,
               std::vector<double> &abs_sum) {
    using Accumulate = segmented_scan_detail::Accumulation<T, Op>;
    using Acc = typename Accumulate::Acc;
    const typename Accumulate::Combine op;
    const Acc identity = Accumulate::Combine::identity();
    for (uint64_t s = 0; s < t.segments(); ++s) {
        const uint64_t b = t.begin(s), e = t.end(s);
        Acc acc = identity;
        double sum = 0;
        for (uint64_t i = b; i < e; ++i) {
            const Acc previous = acc;
            const double sum_before = sum;
            acc = i == b ? Accumulate::load(in[i]) : op(acc, Accumulate::load(in[i]));
            sum += std::fabs(as_double(in[i]));
            if (!reduce) {
                out[i] = Accumulate::store(exclusive ? (i == b ? identity : previous) : acc);
                abs_sum[i] = exclusive ? sum_before : sum;  // the elements the output sums
            }
        }
        if (reduce) {
            out[s] = Accumulate::store(b == e ? identity : acc);
            abs_sum[s] = sum;
        }
    }
}

template <typename T, typename Op>
void check_one(KernelEnv &k, gpuprim_op_t op, const char *op_name, const TestLayout &t, bool reduce, bool exclusive,
               bool in_place, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<T> in(t.n);
    for (auto &x : in) x = random_value<T>(rng, true);
    const uint64_t out_count = reduce ? t.segments() : t.n;
    std::vector<T> sentinel(out_count);
    for (auto &x : sentinel) x = bit_cast<T>(bits_t<T>(0x5a5a5a5a5a5a5a5aull));
    std::vector<T> want = in_place ? in : sentinel;
    std::vector<double> abs_sum(out_count, 0.0);
    reference<T, Op>(t, in, reduce, exclusive, want, abs_sum);

    DeviceLayout dl(t);
    T *d_in = nullptr, *d_out = nullptr;
    CK(cudaMalloc(&d_in, std::max<uint64_t>(1, t.n) * sizeof(T)));
    CK(cudaMalloc(&d_out, std::max<uint64_t>(1, out_count) * sizeof(T)));
    std::vector<T> got(out_count), first_run;
    for (int run = 0; run < 2; ++run) {
        CK(cudaMemcpy(d_in, in.data(), t.n * sizeof(T), cudaMemcpyHostToDevice));
        if (!in_place) CK(cudaMemcpy(d_out, sentinel.data(), out_count * sizeof(T), cudaMemcpyHostToDevice));
        T *target = in_place ? d_in : d_out;
        try {
            if (reduce) segmented_reduce(k.env, op, DT<T>::v, dl.layout, d_in, target);
            else segmented_scan(k.env, op, exclusive ? GPUPRIM_SCAN_EXCLUSIVE : GPUPRIM_SCAN_INCLUSIVE, DT<T>::v,
                                dl.layout, d_in, target);
        } catch (const std::exception &e) {
            std::printf("FAIL %s: exception %s\n", t.name.c_str(), e.what());
            ++failures;
            return;
        }
        CK(cudaStreamSynchronize(k.env.stream));
        CK(cudaMemcpy(got.data(), target, out_count * sizeof(T), cudaMemcpyDeviceToHost));
        if (run == 0) first_run = got;
    }
    uint64_t bad = 0, first_bad = 0;
    for (uint64_t i = 0; i < out_count; ++i)
        if (!same<T, Op>(got[i], want[i], abs_sum[i])) {
            if (bad++ == 0) first_bad = i;
        }
    const bool deterministic = memcmp(got.data(), first_run.data(), out_count * sizeof(T)) == 0;
    const char *what = reduce ? "reduce" : exclusive ? "exclusive" : "inclusive";
    if (bad || !deterministic) {
        ++failures;
        std::printf("FAIL %-5s %-4s %-9s%s %s: %llu bad (first %llu: got %.17g want %.17g)%s\n", dtype_name(DT<T>::v),
                    op_name, what, in_place ? " in place" : "", t.name.c_str(), (unsigned long long)bad,
                    (unsigned long long)first_bad, bad ? as_double(got[first_bad]) : 0.0,
                    bad ? as_double(want[first_bad]) : 0.0, deterministic ? "" : " NOT DETERMINISTIC");
    }
    cudaFree(d_in);
    cudaFree(d_out);
}

template <typename T, typename Op>
void check_all(KernelEnv &k, gpuprim_op_t op, const char *op_name, const std::vector<TestLayout> &layouts) {
    uint64_t seed = 1;
    for (const auto &t : layouts) {
        check_one<T, Op>(k, op, op_name, t, false, false, false, seed++);
        check_one<T, Op>(k, op, op_name, t, false, true, false, seed++);
        check_one<T, Op>(k, op, op_name, t, false, true, true, seed++);
        check_one<T, Op>(k, op, op_name, t, true, false, false, seed++);
    }
    std::printf("checked %s %s (%d failures so far)\n", dtype_name(DT<T>::v), op_name, failures);
}

std::vector<uint64_t> random_offsets(uint64_t n, uint64_t segments, uint64_t first, uint64_t last,
                                     std::mt19937_64 &rng) {
    std::vector<uint64_t> o(segments + 1);
    for (auto &x : o) x = first + (last > first ? rng() % (last - first + 1) : 0);
    std::sort(o.begin(), o.end());
    o[0] = first;
    o[segments] = last;
    (void)n;
    return o;
}

// Power-law segment lengths (Pareto-ish), some empty.
std::vector<uint64_t> power_law_offsets(uint64_t n, std::mt19937_64 &rng) {
    std::vector<uint64_t> o{0};
    std::uniform_real_distribution<double> u(0.0, 1.0);
    while (o.back() < n) {
        const double len = std::floor(2.0 / std::pow(1.0 - u(rng), 1.0 / 1.1)) - 2.0;
        o.push_back(std::min<uint64_t>(n, o.back() + uint64_t(std::min(len, 1e9))));
    }
    return o;
}

template <typename T, typename Op>
void time_shape(KernelEnv &k, gpuprim_op_t op, const TestLayout &t, bool reduce) {
    DeviceLayout dl(t);
    T *d_in = nullptr, *d_out = nullptr;
    CK(cudaMalloc(&d_in, t.n * sizeof(T)));
    CK(cudaMalloc(&d_out, t.n * sizeof(T)));
    CK(cudaMemset(d_in, 0, t.n * sizeof(T)));
    const float us = kernel_check::launch_time_us(
        k.env.stream,
        [&](int) {
            if (reduce) segmented_reduce(k.env, op, DT<T>::v, dl.layout, d_in, d_out);
            else segmented_scan(k.env, op, GPUPRIM_SCAN_INCLUSIVE, DT<T>::v, dl.layout, d_in, d_out);
        },
        20, 3);
    const double bytes = double(t.n) * sizeof(T) * (reduce ? 1 : 2);
    std::printf("time %-5s %s %-40s %9.1f us  %7.1f GB/s\n", dtype_name(DT<T>::v), reduce ? "reduce" : "scan  ",
                t.name.c_str(), us, bytes / us / 1e3);
    cudaFree(d_in);
    cudaFree(d_out);
}

}  // namespace

int main(int argc, char **argv) {
    const bool quick = argc > 1 && std::string(argv[1]) == "quick";
    KernelEnv k(true);
    k.print_device();
    void *slot = nullptr;
    CK(cudaHostAlloc(&slot, 64, cudaHostAllocMapped));
    k.env.host_slot = slot;
    CK(cudaHostGetDevicePointer(&k.env.host_slot_device, slot, 0));
    k.env.host_slot_bytes = 64;

    std::mt19937_64 rng(42);
    std::vector<TestLayout> layouts;
    layouts.push_back(rows_layout(1, 1));
    layouts.push_back(rows_layout(3, 7));
    layouts.push_back(rows_layout(10000, 16));
    layouts.push_back(rows_layout(1000, 4097));
    layouts.push_back(rows_layout(3, 300001));
    layouts.push_back(rows_layout(50000, 1));
    layouts.push_back(rows_layout(5, 0));
    layouts.push_back(csr_layout("all empty at 0", 10000, std::vector<uint64_t>(9, 0), 4));
    layouts.push_back(csr_layout("all empty at 5000", 10000, std::vector<uint64_t>(300, 5000), 8));
    layouts.push_back(csr_layout("all empty at end", 10000, std::vector<uint64_t>(7, 10000), 8));
    layouts.push_back(csr_layout("no segments", 10000, std::vector<uint64_t>(1, 17), 4));
    layouts.push_back(csr_layout("random gap 100..n-50", 200000, random_offsets(200000, 3000, 100, 199950, rng), 4));
    layouts.push_back(csr_layout("random 0..n", 1000003, random_offsets(1000003, 20000, 0, 1000003, rng), 8));
    layouts.push_back(csr_layout("one long + small", 2000000, {0, 1, 1, 2, 1900000, 1900001, 2000000}, 8));
    layouts.push_back(csr_layout("tile edges", 20000, {4095, 4096, 4096, 8191, 8192, 12288, 16384, 16385, 19999}, 4));
    {
        TestLayout t = csr_layout("power law", 3000000, power_law_offsets(3000000, rng), 8);
        layouts.push_back(t);
    }

    check_all<float, SumOp<float>>(k, GPUPRIM_OP_SUM, "sum", layouts);
    check_all<int32_t, MinOp<int32_t>>(k, GPUPRIM_OP_MIN, "min", layouts);
    if (!quick) {
        check_all<uint32_t, SumOp<uint32_t>>(k, GPUPRIM_OP_SUM, "sum", layouts);
        check_all<float, MaxOp<float>>(k, GPUPRIM_OP_MAX, "max", layouts);
        check_all<double, SumOp<double>>(k, GPUPRIM_OP_SUM, "sum", layouts);
        check_all<int64_t, MaxOp<int64_t>>(k, GPUPRIM_OP_MAX, "max", layouts);
        check_all<uint8_t, WideSumOp<uint8_t>>(k, GPUPRIM_OP_SUM, "sum", layouts);
        check_all<int8_t, WideMinMaxOp<int8_t, false>>(k, GPUPRIM_OP_MAX, "max", layouts);
        check_all<int16_t, WideMinMaxOp<int16_t, true>>(k, GPUPRIM_OP_MIN, "min", layouts);
        check_all<float16, WideSumOp<float16>>(k, GPUPRIM_OP_SUM, "sum", layouts);
        check_all<bfloat16, WideMinMaxOp<bfloat16, true>>(k, GPUPRIM_OP_MIN, "min", layouts);
    }

    std::vector<TestLayout> shapes;
    shapes.push_back(rows_layout(1 << 20, 16));
    shapes.push_back(rows_layout(65536, 256));
    shapes.push_back(rows_layout(16, 1 << 20));
    shapes.push_back(csr_layout("power law 2^24", 1 << 24, power_law_offsets(1 << 24, rng), 8));
    shapes.push_back(rows_layout(1, 1 << 26));
    for (const auto &t : shapes) {
        time_shape<float, SumOp<float>>(k, GPUPRIM_OP_SUM, t, false);
        time_shape<float, SumOp<float>>(k, GPUPRIM_OP_SUM, t, true);
    }
    std::printf("%s: %d failures\n", failures ? "FAILED" : "PASSED", failures);
    return failures ? 1 : 0;
}
