// SPDX-License-Identifier: Apache-2.0
// Allocation failure at every allocation of every call, on the backend the
// default context picks (GPUPRIM_BACKEND): each call is repeated with its
// k-th allocation made to fail, for k = 0, 1, ... until it runs through
// without meeting the injected failure, once for host allocations (operator
// new, replaced below) and once for backend allocations (buffers and the
// workspace: device memory on CUDA, through the library's testing hook).
// Every failed attempt must return OUT_OF_MEMORY and leave everything as it
// was: every buffer's contents, dtype, count and address, the context's
// buffer table, its workspace, the call's output arguments. The attempt that
// succeeds must give the result an undisturbed run gives. Calls that must not
// allocate at all (destroy, transfers, queries) are checked to allocate
// nothing. LeakSanitizer (run_sanitizers.sh) checks nothing leaks on the way.
//
// Besides its own scenarios, every call of the test registry's small plan
// (test/registry/: each primitive's entry points) is swept the same way.
//
// White-box: it reaches the context behind a handle through the library's
// registry (src/core), so it links the library's objects directly.
#include "core/context.h"
#include "core/registry.h"

#include <gpuprim/gpuprim.h>

#include "../registry/registry.h"

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <string>
#include <vector>

// Host allocations: operator new fails the armed one (failing_new.h).
#include "failing_new.h"

namespace {

long g_checks = 0;
long g_failures = 0;

void report(const char *format, ...) {
    va_list args;
    va_start(args, format);
    std::fprintf(stderr, "FAIL: ");
    std::vfprintf(stderr, format, args);
    std::fprintf(stderr, "\n");
    va_end(args);
    ++g_failures;
}

#define EXPECT(cond, ...)                     \
    do {                                      \
        ++g_checks;                           \
        if (!(cond)) report(__VA_ARGS__);     \
    } while (0)

gpuprim::Backend &backend_of(gpuprim_context_t context) {
    return *gpuprim::Registry::instance().find_context(context)->backend;
}
gpuprim::Context &context_of(gpuprim_context_t context) {
    return *gpuprim::Registry::instance().find_context(context);
}

// ---------------------------------------------------------------------------
// A fixture: a context and buffers with deterministic contents. Two equal
// fixtures give the undisturbed result to compare with.
// ---------------------------------------------------------------------------
constexpr uint64_t kSmall = 5000;
constexpr uint64_t kLarge = 300000;  // past the one-block sort and scan paths

struct Fixture {
    gpuprim_context_t context = nullptr;
    std::vector<gpuprim_buffer_t> buffers;
    tr_made_t made{};  // a registry call's buffers (prepare_registry_call)
    // Named members index `buffers`.
    gpuprim_buffer_t f32_a, f32_b, f32_result, i64, u32_keys, u32_values, u32_keys_out,
        u32_values_out, f64_keys, u64_values, big_keys, big_values, f16_a, bf16_a, i8_keys,
        u16_values, big_bf16_keys, topk_f32_out, topk_i64_out, topk_u32_idx, seg_f32_out, seg_i32_idx,
        topk_offsets;

    Fixture() {
        char message[256];
        if (gpuprim_context_create(nullptr, &context, message, sizeof message) != GPUPRIM_SUCCESS) {
            std::fprintf(stderr, "context_create: %s\n", message);
            std::exit(1);
        }
        f32_a = make(GPUPRIM_DTYPE_F32, kSmall, 1);
        f32_b = make(GPUPRIM_DTYPE_F32, kSmall, 2);
        f32_result = make(GPUPRIM_DTYPE_F32, 3, 3);
        i64 = make(GPUPRIM_DTYPE_I64, kSmall, 4);
        u32_keys = make(GPUPRIM_DTYPE_U32, kSmall, 5);
        u32_values = make(GPUPRIM_DTYPE_U32, kSmall, 6);
        u32_keys_out = make(GPUPRIM_DTYPE_U32, kSmall, 7);
        u32_values_out = make(GPUPRIM_DTYPE_U32, kSmall, 8);
        f64_keys = make(GPUPRIM_DTYPE_F64, kSmall, 9);
        u64_values = make(GPUPRIM_DTYPE_U64, kSmall, 10);
        big_keys = make(GPUPRIM_DTYPE_U32, kLarge, 11);
        big_values = make(GPUPRIM_DTYPE_U32, kLarge, 12);
        f16_a = make(GPUPRIM_DTYPE_F16, kSmall, 13);
        bf16_a = make(GPUPRIM_DTYPE_BF16, kSmall, 14);
        i8_keys = make(GPUPRIM_DTYPE_I8, kSmall, 15);
        u16_values = make(GPUPRIM_DTYPE_U16, kSmall, 16);
        big_bf16_keys = make(GPUPRIM_DTYPE_BF16, kLarge, 17);
        topk_f32_out = make(GPUPRIM_DTYPE_F32, 64, 18);
        topk_i64_out = make(GPUPRIM_DTYPE_I64, 64, 19);
        topk_u32_idx = make(GPUPRIM_DTYPE_U32, 1024, 20);
        seg_f32_out = make(GPUPRIM_DTYPE_F32, 1000, 21);
        seg_i32_idx = make(GPUPRIM_DTYPE_I32, 1000, 22);
        // CSR over kSmall keys: 4 segments (one shorter than k = 250, one empty).
        const uint64_t offsets[5] = {0, 100, 100, 3000, kSmall};
        topk_offsets = make(GPUPRIM_DTYPE_U64, 5, 23);
        if (gpuprim_buffer_upload(context, topk_offsets, 0, offsets, 5) != GPUPRIM_SUCCESS) {
            std::fprintf(stderr, "fixture set-up failed: %s\n", gpuprim_context_last_error(context));
            std::exit(1);
        }
    }
    ~Fixture() {
        if (gpuprim_context_destroy(context) != GPUPRIM_SUCCESS) report("context_destroy failed");
    }
    Fixture(const Fixture &) = delete;
    Fixture &operator=(const Fixture &) = delete;

    gpuprim_buffer_t make(gpuprim_dtype_t dtype, uint64_t count, uint64_t seed) {
        gpuprim_buffer_t buffer = nullptr;
        size_t size = gpuprim_dtype_size(dtype);
        std::vector<uint8_t> bytes(count * size);
        uint64_t state = seed * 0x9E3779B97F4A7C15ull;
        for (uint64_t i = 0; i < count; ++i) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t bits = state >> 17;
            if (dtype == GPUPRIM_DTYPE_F32) {
                float v = static_cast<float>(static_cast<int64_t>(bits % 2001) - 1000) * 0.25f;
                std::memcpy(&bytes[i * size], &v, size);
            } else if (dtype == GPUPRIM_DTYPE_F64) {
                double v = static_cast<double>(static_cast<int64_t>(bits % 20001) - 10000) * 0.125;
                std::memcpy(&bytes[i * size], &v, size);
            } else {
                std::memcpy(&bytes[i * size], &bits, size);
            }
        }
        if (gpuprim_buffer_create(context, dtype, count, &buffer) != GPUPRIM_SUCCESS ||
            gpuprim_buffer_upload(context, buffer, 0, bytes.data(), count) != GPUPRIM_SUCCESS) {
            std::fprintf(stderr, "fixture set-up failed: %s\n", gpuprim_context_last_error(context));
            std::exit(1);
        }
        buffers.push_back(buffer);
        return buffer;
    }
};

struct BufferState {
    gpuprim_dtype_t dtype;
    uint64_t count;
    void *data;
    std::vector<uint8_t> contents;
    bool operator==(const BufferState &o) const {
        return dtype == o.dtype && count == o.count && data == o.data && contents == o.contents;
    }
};

struct State {
    std::vector<BufferState> buffers;
    size_t table_size = 0;
    uint64_t workspace = 0;
};

State snapshot(const Fixture &f, bool with_addresses = true) {
    State state;
    for (gpuprim_buffer_t b : f.buffers) {
        BufferState s{};
        if (gpuprim_buffer_get_info(f.context, b, &s.dtype, &s.count, &s.data) != GPUPRIM_SUCCESS) {
            report("snapshot: a fixture buffer is no longer valid: %s",
                   gpuprim_context_last_error(f.context));
            continue;
        }
        if (!with_addresses) s.data = nullptr;
        s.contents.resize(s.count * gpuprim_dtype_size(s.dtype));
        if (gpuprim_buffer_download(f.context, b, 0, s.contents.data(), s.count) != GPUPRIM_SUCCESS)
            report("snapshot: download failed: %s", gpuprim_context_last_error(f.context));
        state.buffers.push_back(std::move(s));
    }
    state.table_size = context_of(f.context).buffer_count();
    gpuprim_context_get_workspace_size(f.context, &state.workspace);
    return state;
}

// What a call does, and what it leaves in *output (compared on success).
using Call = std::function<gpuprim_status_t(Fixture &, std::vector<uint8_t> &output)>;

struct Scenario {
    const char *name;
    Call call;
    bool allocates;  // false: must succeed without allocating anything
    const tr_call_t *registry_call = nullptr;  // its buffers are made on each fixture first
};

// A registry call's buffers on the fixture, made before anything is armed and
// added to the buffers every snapshot compares.
void prepare_registry_call(Fixture &f, const Scenario &scenario) {
    const tr_call_t *call = scenario.registry_call;
    if (!call) return;
    tr_make(call, f.context, &f.made);
    for (int i = 0; i < TR_MAX_ARGS; ++i)
        if (call->arg[i].used && call->arg[i].same_as < 0) f.buffers.push_back(f.made.b[i]);
    if (f.made.offsets) f.buffers.push_back(f.made.offsets);
}

// Runs the call armed at every host allocation, then at every backend
// allocation, checking each failed attempt changed nothing.
void sweep(const Scenario &scenario) {
    // The undisturbed result.
    Fixture reference_fixture;
    prepare_registry_call(reference_fixture, scenario);
    std::vector<uint8_t> reference_output;
    gpuprim_status_t status = scenario.call(reference_fixture, reference_output);
    if (status != GPUPRIM_SUCCESS) {
        report("%s: fails undisturbed: %d %s", scenario.name, status,
               gpuprim_context_last_error(reference_fixture.context));
        return;
    }
    gpuprim_context_synchronize(reference_fixture.context);
    const State reference = snapshot(reference_fixture, false);

    for (int kind = 0; kind < 2; ++kind) {
        const char *kind_name = kind == 0 ? "host" : "backend";
        Fixture f;
        prepare_registry_call(f, scenario);
        int attempts = 0;
        for (long k = 0;; ++k, ++attempts) {
            if (attempts > 200) {
                report("%s: still failing after %d %s allocations", scenario.name, attempts, kind_name);
                break;
            }
            // Each attempt must grow the workspace afresh, so its allocation is met.
            gpuprim_context_release_workspace(f.context);
            const State before = snapshot(f);
            std::vector<uint8_t> output;
            output.reserve(256);  // host_result() then allocates nothing while armed
            gpuprim::Backend &backend = backend_of(f.context);
            const uint64_t backend_before = backend.allocation_count();
            bool injected = false;
            if (kind == 0) {
                failing_new::arm(k);
                status = scenario.call(f, output);
                injected = failing_new::disarm();
            } else {
                backend.inject_allocation_failures(k, 1);
                status = scenario.call(f, output);
                backend.inject_allocation_failures(0, 0);
                injected = backend.allocation_count() > backend_before + static_cast<uint64_t>(k);
            }
            if (!scenario.allocates) {
                EXPECT(!injected && status == GPUPRIM_SUCCESS,
                       "%s: allocates (%s) though it must not: status %d, %s", scenario.name,
                       kind_name, status, gpuprim_context_last_error(f.context));
                break;
            }
            if (!injected || status == GPUPRIM_SUCCESS) {
                // Ran through, or recovered from the failure (the workspace's
                // second try): either way the result must be right.
                EXPECT(injected || status == GPUPRIM_SUCCESS,
                       "%s: failed without an injected failure: %d %s", scenario.name, status,
                       gpuprim_context_last_error(f.context));
                gpuprim_context_synchronize(f.context);
                State after = snapshot(f, false);
                EXPECT(after.buffers == reference.buffers && output == reference_output,
                       "%s: the result after %s allocation %ld %s differs from an undisturbed run",
                       scenario.name, kind_name, k, injected ? "failed" : "(none failed)");
                break;
            }
            EXPECT(status == GPUPRIM_ERROR_OUT_OF_MEMORY,
                   "%s: %s allocation %ld failed: status %d (%s), expected OUT_OF_MEMORY: %s",
                   scenario.name, kind_name, k, status, gpuprim_get_error_string(status),
                   gpuprim_context_last_error(f.context));
            State after = snapshot(f);
            EXPECT(after.buffers == before.buffers,
                   "%s: %s allocation %ld failed and buffers changed", scenario.name, kind_name, k);
            EXPECT(after.table_size == before.table_size,
                   "%s: %s allocation %ld failed and the buffer table went from %zu to %zu",
                   scenario.name, kind_name, k, before.table_size, after.table_size);
            EXPECT(after.workspace == before.workspace,
                   "%s: %s allocation %ld failed and the workspace went from %llu to %llu bytes",
                   scenario.name, kind_name, k, static_cast<unsigned long long>(before.workspace),
                   static_cast<unsigned long long>(after.workspace));
            EXPECT(output.empty() || output == std::vector<uint8_t>(output.size(), 0xEE),
                   "%s: %s allocation %ld failed and the call wrote its output", scenario.name,
                   kind_name, k);
        }
        std::printf("  %-34s %s: %d failed attempt(s), each changed nothing\n", scenario.name,
                    kind_name, scenario.allocates ? attempts : 0);
    }
}

// Output helpers: host results start as 0xEE bytes (poison). The caller
// reserved the room, so this allocates nothing while a failure is armed.
void *host_result(std::vector<uint8_t> &output, size_t bytes) {
    output.assign(bytes, 0xEE);
    return output.data();
}

std::vector<Scenario> scenarios() {
    std::vector<Scenario> list;
    list.push_back({"buffer_create", [](Fixture &f, std::vector<uint8_t> &out) {
        auto *handle = static_cast<gpuprim_buffer_t *>(host_result(out, sizeof(gpuprim_buffer_t)));
        gpuprim_status_t s = gpuprim_buffer_create(f.context, GPUPRIM_DTYPE_F64, 777, handle);
        if (s == GPUPRIM_SUCCESS) {
            gpuprim_buffer_destroy(f.context, *handle);
            out.clear();  // the new handle's value is not part of the result
        }
        return s;
    }, true});
    list.push_back({"buffer_wrap", [](Fixture &f, std::vector<uint8_t> &out) {
        void *data = nullptr;
        gpuprim_buffer_get_info(f.context, f.i64, nullptr, nullptr, &data);
        auto *handle = static_cast<gpuprim_buffer_t *>(host_result(out, sizeof(gpuprim_buffer_t)));
        gpuprim_status_t s = gpuprim_buffer_wrap(f.context, GPUPRIM_DTYPE_I64, data, 100, handle);
        if (s == GPUPRIM_SUCCESS) {
            gpuprim_buffer_destroy(f.context, *handle);
            out.clear();
        }
        return s;
    }, true});
    list.push_back({"buffer_destroy", [](Fixture &f, std::vector<uint8_t> &) {
        // The fixture's last buffer, made before arming.
        gpuprim_status_t s = gpuprim_buffer_destroy(f.context, f.buffers.back());
        if (s == GPUPRIM_SUCCESS) f.buffers.pop_back();
        return s;
    }, false});
    list.push_back({"upload", [](Fixture &f, std::vector<uint8_t> &) {
        float values[3] = {1.5f, -2.0f, 8.0f};
        return gpuprim_buffer_upload(f.context, f.f32_result, 0, values, 3);
    }, false});
    list.push_back({"download", [](Fixture &f, std::vector<uint8_t> &out) {
        return gpuprim_buffer_download(f.context, f.i64, 10, host_result(out, 80), 10);
    }, false});
    list.push_back({"reserve workspace", [](Fixture &f, std::vector<uint8_t> &out) {
        // A growth of 3 MiB past what the context holds, held still, then let go.
        uint64_t held = 0, after = 0;
        gpuprim_context_get_workspace_size(f.context, &held);
        gpuprim_status_t s = gpuprim_context_reserve_workspace(f.context, held + (uint64_t(3) << 20), 1);
        if (!s) s = gpuprim_context_get_workspace_size(f.context, &after);
        if (!s && after < held + (uint64_t(3) << 20)) report("reserve_workspace: holds %llu bytes", (unsigned long long)after);
        if (!s) s = gpuprim_context_reserve_workspace(f.context, 0, 0);
        out.clear();
        return s;
    }, true});
    list.push_back({"reserve workspace by sizes", [](Fixture &f, std::vector<uint8_t> &out) {
        // Both blocks grown past what the context holds, held still, then
        // let go; a failure leaves both as they were (the sweep checks).
        uint64_t held = 0, after = 0;
        gpuprim_context_get_workspace_size(f.context, &held);
        gpuprim_workspace_sizes_t sizes;
        std::memset(&sizes, 0, sizeof sizes);
        sizes.struct_size = sizeof sizes;
        sizes.main_bytes = held + (uint64_t(3) << 20);
        sizes.side_bytes = uint64_t(2) << 20;
        gpuprim_status_t s = gpuprim_context_reserve_workspace_sizes(f.context, &sizes, 1);
        if (!s) s = gpuprim_context_get_workspace_size(f.context, &after);
        if (!s && after < sizes.main_bytes)
            report("reserve_workspace_sizes: holds %llu bytes", (unsigned long long)after);
        if (!s) s = gpuprim_context_reserve_workspace(f.context, 0, 0);
        out.clear();
        return s;
    }, true});
    list.push_back({"workspace query", [](Fixture &f, std::vector<uint8_t> &out) {
        // Measures a sort and a reduce: nothing is allocated or written.
        gpuprim_workspace_sizes_t sizes;
        std::memset(&sizes, 0, sizeof sizes);
        sizes.struct_size = sizeof sizes;
        gpuprim_status_t s = gpuprim_context_begin_workspace_query(f.context);
        if (!s) s = gpuprim_sort(f.context, f.big_keys, nullptr, f.big_keys, nullptr, GPUPRIM_ORDER_ASCENDING);
        if (!s) s = gpuprim_reduce(f.context, GPUPRIM_OP_SUM, f.f32_a, host_result(out, 4));
        const gpuprim_status_t ended = gpuprim_context_end_workspace_query(f.context, &sizes);
        return s ? s : ended;
    }, false});
    list.push_back({"queries", [](Fixture &f, std::vector<uint8_t> &out) {
        gpuprim_backend_t backend;
        int32_t ordinal;
        char name[64];
        uint64_t bytes, count;
        gpuprim_dtype_t dtype;
        gpuprim_status_t s = gpuprim_context_get_backend(f.context, &backend);
        if (!s) s = gpuprim_context_get_device(f.context, &ordinal, name, sizeof name);
        if (!s) s = gpuprim_context_get_workspace_size(f.context, &bytes);
        void *stream = nullptr;
        if (!s) s = gpuprim_context_get_stream(f.context, &stream);
        if (!s) s = gpuprim_buffer_get_info(f.context, f.f32_a, &dtype, &count, nullptr);
        if (!s) s = gpuprim_context_synchronize(f.context);
        (void)gpuprim_context_last_error(f.context);
        out.clear();
        return s;
    }, false});
    list.push_back({"reduce sum f32", [](Fixture &f, std::vector<uint8_t> &out) {
        return gpuprim_reduce(f.context, GPUPRIM_OP_SUM, f.f32_a, host_result(out, 4));
    }, true});
    list.push_back({"reduce min i64", [](Fixture &f, std::vector<uint8_t> &out) {
        return gpuprim_reduce(f.context, GPUPRIM_OP_MIN, f.i64, host_result(out, 8));
    }, true});
    list.push_back({"reduce_to_buffer max f32", [](Fixture &f, std::vector<uint8_t> &) {
        return gpuprim_reduce_to_buffer(f.context, GPUPRIM_OP_MAX, f.f32_a, f.f32_result);
    }, true});
    list.push_back({"dot f32", [](Fixture &f, std::vector<uint8_t> &out) {
        return gpuprim_dot(f.context, f.f32_a, f.f32_b, host_result(out, 4));
    }, true});
    list.push_back({"dot_to_buffer f32", [](Fixture &f, std::vector<uint8_t> &) {
        return gpuprim_dot_to_buffer(f.context, f.f32_a, f.f32_b, f.f32_result);
    }, true});
    list.push_back({"scan inclusive sum f32 in place", [](Fixture &f, std::vector<uint8_t> &) {
        return gpuprim_scan(f.context, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, f.f32_a, f.f32_a);
    }, true});
    list.push_back({"scan exclusive max u32 (large)", [](Fixture &f, std::vector<uint8_t> &) {
        return gpuprim_scan(f.context, GPUPRIM_OP_MAX, GPUPRIM_SCAN_EXCLUSIVE, f.big_keys,
                            f.big_values);
    }, true});
    list.push_back({"sort u32 keys", [](Fixture &f, std::vector<uint8_t> &) {
        return gpuprim_sort(f.context, f.u32_keys, nullptr, f.u32_keys_out, nullptr,
                            GPUPRIM_ORDER_ASCENDING);
    }, true});
    list.push_back({"sort u32 pairs out of place", [](Fixture &f, std::vector<uint8_t> &) {
        return gpuprim_sort(f.context, f.u32_keys, f.u32_values, f.u32_keys_out, f.u32_values_out,
                            GPUPRIM_ORDER_DESCENDING);
    }, true});
    list.push_back({"sort f64 keys, u64 values in place", [](Fixture &f, std::vector<uint8_t> &) {
        return gpuprim_sort(f.context, f.f64_keys, f.u64_values, f.f64_keys, f.u64_values,
                            GPUPRIM_ORDER_ASCENDING);
    }, true});
    list.push_back({"sort u32 pairs (large) in place", [](Fixture &f, std::vector<uint8_t> &) {
        return gpuprim_sort(f.context, f.big_keys, f.big_values, f.big_keys, f.big_values,
                            GPUPRIM_ORDER_ASCENDING);
    }, true});
    // The narrow dtypes and gpuprim_sort_with_options.
    list.push_back({"reduce sum f16", [](Fixture &f, std::vector<uint8_t> &out) {
        return gpuprim_reduce(f.context, GPUPRIM_OP_SUM, f.f16_a, host_result(out, 2));
    }, true});
    list.push_back({"dot bf16", [](Fixture &f, std::vector<uint8_t> &out) {
        return gpuprim_dot(f.context, f.bf16_a, f.bf16_a, host_result(out, 2));
    }, true});
    list.push_back({"scan inclusive sum bf16 in place", [](Fixture &f, std::vector<uint8_t> &) {
        return gpuprim_scan(f.context, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, f.bf16_a, f.bf16_a);
    }, true});
    list.push_back({"sort_with_options i8 keys, u16 values, bits [2, 7) descending",
                    [](Fixture &f, std::vector<uint8_t> &) {
        gpuprim_sort_options_t options;
        gpuprim_sort_options_init(&options);
        options.order = GPUPRIM_ORDER_DESCENDING;
        options.begin_bit = 2;
        options.end_bit = 7;
        return gpuprim_sort_with_options(f.context, f.i8_keys, f.u16_values, f.i8_keys, f.u16_values,
                                         &options);
    }, true});
    list.push_back({"sort_with_options bf16 keys (large), NULL options", [](Fixture &f, std::vector<uint8_t> &) {
        return gpuprim_sort_with_options(f.context, f.big_bf16_keys, nullptr, f.big_bf16_keys, nullptr,
                                         nullptr);
    }, true});
    list.push_back({"sort_with_options f16 keys, whole key", [](Fixture &f, std::vector<uint8_t> &) {
        gpuprim_sort_options_t options;
        gpuprim_sort_options_init(&options);
        options.end_bit = 16;
        return gpuprim_sort_with_options(f.context, f.f16_a, nullptr, f.f16_a, nullptr, &options);
    }, true});
    // Top-k: flat (small, and large enough for the per-chunk selection on
    // every thread), rows and CSR offsets.
    list.push_back({"topk f32 k 64, keys and i64 indices", [](Fixture &f, std::vector<uint8_t> &) {
        return gpuprim_topk(f.context, f.f32_a, 64, GPUPRIM_ORDER_DESCENDING, f.topk_f32_out, f.topk_i64_out);
    }, true});
    list.push_back({"topk u32 (large) k 1024, u32 indices", [](Fixture &f, std::vector<uint8_t> &) {
        return gpuprim_topk(f.context, f.big_keys, 1024, GPUPRIM_ORDER_ASCENDING, nullptr, f.topk_u32_idx);
    }, true});
    list.push_back({"segmented_topk f32 rows 500 x 10, k 2", [](Fixture &f, std::vector<uint8_t> &) {
        gpuprim_segments_t segments;
        gpuprim_segments_init_rows(&segments, 500, 10);
        return gpuprim_segmented_topk(f.context, &segments, f.f32_a, 2, GPUPRIM_ORDER_ASCENDING, f.seg_f32_out,
                                      f.seg_i32_idx);
    }, true});
    list.push_back({"segmented_topk f32 CSR offsets, k 250", [](Fixture &f, std::vector<uint8_t> &) {
        gpuprim_segments_t segments;
        gpuprim_segments_init_offsets(&segments, f.topk_offsets);
        return gpuprim_segmented_topk(f.context, &segments, f.f32_a, 250, GPUPRIM_ORDER_DESCENDING, f.seg_f32_out,
                                      f.seg_i32_idx);
    }, true});
    return list;
}

// Every call of every registry case's small plan: each primitive's entry
// points and shapes, without naming them here.
std::vector<tr_call_t *> g_registry_calls;

void keep_registry_call(const tr_call_t *call, void *) { g_registry_calls.push_back(tr_call_clone(call)); }

std::vector<Scenario> registry_scenarios() {
    std::vector<Scenario> list;
    for (size_t c = 0; c < tr_case_count; ++c) tr_cases[c]->each(TR_PLAN_SMALL, keep_registry_call, nullptr);
    for (const tr_call_t *call : g_registry_calls) {
        Scenario scenario{call->label, [call](Fixture &f, std::vector<uint8_t> &out) {
            void *scalar = call->scalar_size ? host_result(out, call->scalar_size) : nullptr;
            return tr_invoke(call, f.context, &f.made, scalar);
        }, true};
        scenario.registry_call = call;
        list.push_back(scenario);
    }
    return list;
}

// Context creation under host allocation failure: every failed attempt sets
// *context to NULL and keeps nothing (LeakSanitizer checks at exit).
void sweep_context_create() {
    int attempts = 0;
    for (long k = 0; k < 200; ++k, ++attempts) {
        gpuprim_context_t context = reinterpret_cast<gpuprim_context_t>(uintptr_t(0x1234));
        char message[256] = "";
        failing_new::arm(k);
        gpuprim_status_t status = gpuprim_context_create(nullptr, &context, message, sizeof message);
        const bool injected = failing_new::disarm();
        if (status == GPUPRIM_SUCCESS) {
            gpuprim_context_destroy(context);
            if (!injected) break;
            continue;
        }
        EXPECT(injected, "context_create failed without an injected failure: %s", message);
        EXPECT(status == GPUPRIM_ERROR_OUT_OF_MEMORY, "context_create: allocation %ld: status %d: %s",
               k, status, message);
        EXPECT(context == nullptr, "a failed context_create did not set *context to NULL");
        EXPECT(message[0] != 0, "a failed context_create left no message");
    }
    std::printf("  %-34s host: %d failed attempt(s), each left *context NULL\n", "context_create",
                attempts);
}

// The workspace's growth, when the bigger block cannot be had: the old block
// stays (first try fails, old block given back, second try fails, old block
// retaken), and the call says OUT_OF_MEMORY.
void workspace_growth_keeps_old_block() {
    Fixture f;
    // A small sort first grows the workspace to its small size.
    if (gpuprim_sort(f.context, f.u32_keys, nullptr, f.u32_keys_out, nullptr,
                     GPUPRIM_ORDER_ASCENDING) != GPUPRIM_SUCCESS)
        report("workspace: small sort failed");
    gpuprim_context_synchronize(f.context);
    uint64_t small = 0, after = 0;
    gpuprim_context_get_workspace_size(f.context, &small);
    if (small == 0) {
        std::printf("  workspace growth: the backend caches no workspace, nothing to check\n");
        return;
    }
    const State before = snapshot(f);
    backend_of(f.context).inject_allocation_failures(0, 2);
    gpuprim_status_t status = gpuprim_sort(f.context, f.big_keys, f.big_values, f.big_keys,
                                           f.big_values, GPUPRIM_ORDER_ASCENDING);
    backend_of(f.context).inject_allocation_failures(0, 0);
    EXPECT(status == GPUPRIM_ERROR_OUT_OF_MEMORY, "workspace: growth failing twice gave %d", status);
    gpuprim_context_get_workspace_size(f.context, &after);
    EXPECT(after == small, "workspace: failed growth left %llu bytes, had %llu",
           static_cast<unsigned long long>(after), static_cast<unsigned long long>(small));
    EXPECT(snapshot(f).buffers == before.buffers, "workspace: failed growth changed buffers");
    // One failure only: the second try (after giving the old block back) succeeds.
    backend_of(f.context).inject_allocation_failures(0, 1);
    status = gpuprim_sort(f.context, f.big_keys, f.big_values, f.big_keys, f.big_values,
                          GPUPRIM_ORDER_ASCENDING);
    backend_of(f.context).inject_allocation_failures(0, 0);
    EXPECT(status == GPUPRIM_SUCCESS, "workspace: growth failing once gave %d: %s", status,
           gpuprim_context_last_error(f.context));
    gpuprim_context_get_workspace_size(f.context, &after);
    EXPECT(after > small, "workspace: did not grow after the second try");
    std::printf("  workspace growth: kept %llu bytes after a failed growth, grew to %llu on retry\n",
                static_cast<unsigned long long>(small), static_cast<unsigned long long>(after));
}

}  // namespace

int main() {
    {
        Fixture probe;
        gpuprim_backend_t backend = GPUPRIM_BACKEND_AUTO;
        gpuprim_context_get_backend(probe.context, &backend);
        std::printf("allocation failures on the %s backend\n",
                    backend == GPUPRIM_BACKEND_CUDA ? "CUDA" : "CPU");
    }
    sweep_context_create();
    for (const Scenario &scenario : scenarios()) sweep(scenario);
    for (const Scenario &scenario : registry_scenarios()) sweep(scenario);
    for (tr_call_t *call : g_registry_calls) tr_call_destroy(call);
    g_registry_calls.clear();
    workspace_growth_keeps_old_block();
    // The registry's own checks (its set-up) count too.
    g_checks += tc.checks;
    g_failures += tc.failures;
    std::printf("%ld passed, %ld failed\n", g_checks - g_failures, g_failures);
    return g_failures ? 1 : 0;
}
