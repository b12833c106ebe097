// SPDX-License-Identifier: Apache-2.0
// libFuzzer target over the test registry (test/registry/): every primitive
// registered there is fuzzed without fuzzer code of its own.
//
// An input picks a case of the registry and one call of its concurrency plan
// (TR_PLAN_CONCURRENCY: every entry point and shape of the case on all twelve
// dtypes, up to 4,097 elements), then changes it:
// - contents (modes 0-3): bytes of the input written over the call's input
//   buffers (any bit pattern: NaN payloads, both zeros, infinities, extreme
//   integers), and in mode 3 the order turned. The call stays one the
//   case's reference knows, so a success must give the reference's result
//   (where there is one exact answer) and the same bits on a context of 1
//   and of 3 CPU threads; a failure must leave a message and every output
//   unchanged. Where the input wrote over an argument the header wants in
//   order (the case's ordered_args: merge runs, searchsorted keys, histogram
//   edges), or turned the order of such a call, the outputs are unspecified
//   and only the failure rule holds.
// - the call's shape (modes 4-7): one argument's dtype or count changed (its
//   contents then from the input), one argument left out, an output made
//   the same buffer as an input, the order, bit range, k or op set to any
//   value, or a segment offset or the rows changed. Such a call may be valid
//   or not: nothing may crash or trip a sanitizer, a failure must leave a
//   message and every output unchanged.
// Any violation aborts with a message. Built with -fsanitize=fuzzer by
// run_fuzz.sh, and with fuzz_replay_main.cpp as an ordinary test
// (rel_fuzz_registry_replay), which first runs every call of every case
// unchanged and with its contents from a fixed generator.
#include "../registry/registry.h"
#include "fuzz_input.h"

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

[[noreturn]] void violation(const tr_call_t &call, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

[[noreturn]] void violation(const tr_call_t &call, const char *format, ...) {
    va_list args;
    va_start(args, format);
    std::fprintf(stderr, "\n*** gpuprim registry fuzz violation (%s: %s): ", call.kase->name, call.label);
    std::vfprintf(stderr, format, args);
    std::fprintf(stderr, "\n");
    va_end(args);
    std::abort();
}

using gpuprim_fuzz::Input;

// Larger calls of a plan are left out: the fuzzer's time goes to many inputs.
constexpr uint64_t kMaxElements = 5000;

struct Plans {
    gpuprim_context_t one_thread = nullptr, three_threads = nullptr;
    bool trace = false;  // GPUPRIM_FUZZ_TRACE=1: every call and its status on stderr
    std::vector<std::vector<tr_call_t *>> calls;  // per case
};

void keep_call(const tr_call_t *call, void *user) {
    for (const tr_arg_t &a : call->arg)
        if (a.used && a.count > kMaxElements) return;
    static_cast<std::vector<tr_call_t *> *>(user)->push_back(tr_call_clone(call));
}

gpuprim_context_t cpu_context(int threads) {
    gpuprim_context_options_t options;
    gpuprim_context_options_init(&options);
    options.backend = GPUPRIM_BACKEND_CPU;
    options.cpu_threads = threads;
    gpuprim_context_t ctx = nullptr;
    char message[256];
    if (gpuprim_context_create(&options, &ctx, message, sizeof message) != GPUPRIM_SUCCESS) {
        std::fprintf(stderr, "fuzz_registry: no CPU context of %d threads: %s\n", threads, message);
        std::abort();
    }
    return ctx;
}

// Made once per process: the contexts and every case's calls.
Plans &plans() {
    static Plans *p = [] {
        Plans *made = new Plans;
        made->one_thread = cpu_context(1);
        made->three_threads = cpu_context(3);
        made->trace = std::getenv("GPUPRIM_FUZZ_TRACE") != nullptr;
        tc.ctx = made->one_thread;
        made->calls.resize(tr_case_count);
        for (size_t c = 0; c < tr_case_count; ++c) tr_cases[c]->each(TR_PLAN_CONCURRENCY, keep_call, &made->calls[c]);
        return made;
    }();
    return *p;
}

// The arguments the call reads: used, not an output, with contents.
std::vector<int> input_args(const tr_call_t &call) {
    std::vector<int> args;
    for (int i = 0; i < TR_MAX_ARGS; ++i) {
        const tr_arg_t &a = call.arg[i];
        if (a.used && !a.read_back && a.same_as < 0 && a.host && a.count) args.push_back(i);
    }
    return args;
}

// Writes runs of the input's bytes over the call's input buffers; returns
// the mask of the arguments written.
unsigned write_contents(tr_call_t &call, Input &in) {
    const std::vector<int> args = input_args(call);
    unsigned written = 0;
    if (args.empty()) return 0;
    while (!in.empty()) {
        const int i = args[in.u8() % args.size()];
        tr_arg_t &a = call.arg[i];
        const size_t size = tc_size(a.dtype), bytes = size_t(a.count) * size;
        size_t at = (in.u16() % a.count) * size;
        const size_t run = size_t(1 + in.u8() % 64) * size;
        for (size_t k = 0; k < run && at < bytes && !in.empty(); ++k, ++at) static_cast<uint8_t *>(a.host)[at] = in.u8();
        written |= 1u << i;
    }
    return written;
}

// Argument i (not in place with another) becomes count elements of dtype,
// its contents from the input.
void reshape_arg(tr_call_t &call, int i, gpuprim_dtype_t dtype, uint64_t count, Input &in) {
    tr_arg_t &a = call.arg[i];
    const size_t bytes = size_t(count) * tc_size(dtype);
    uint8_t *host = static_cast<uint8_t *>(tc_xmalloc(bytes + 16));
    for (size_t k = 0; k < bytes; ++k) host[k] = in.u8();
    if (a.owns_host) free(a.host);
    a.host = host;
    a.owns_host = 1;
    a.dtype = dtype;
    a.count = count;
    for (tr_arg_t &other : call.arg)  // outputs in place with it keep its shape
        if (other.used && &other != &a && other.same_as == i) {
            other.dtype = dtype;
            other.count = count;
        }
}

// One change of the call's shape, chosen by the input.
void change_shape(tr_call_t &call, Input &in) {
    std::vector<int> used;
    for (int i = 0; i < TR_MAX_ARGS; ++i)
        if (call.arg[i].used) used.push_back(i);
    const int i = used.empty() ? 0 : used[in.u8() % used.size()];
    tr_arg_t &a = call.arg[i];
    switch (in.u8() % 9) {
    case 0:  // another dtype
        if (a.used && a.same_as < 0) reshape_arg(call, i, tc_all_dtypes[in.u8() % TC_DTYPE_COUNT], a.count, in);
        break;
    case 1:  // another count
        if (a.used && a.same_as < 0) reshape_arg(call, i, a.dtype, in.u16() % (2 * a.count + 4), in);
        break;
    case 2:  // left out (NULL)
        a.used = 0;
        for (tr_arg_t &other : call.arg)
            if (other.same_as == i) other.used = 0;
        break;
    case 3:  // an output in place with an input of the same shape
        if (a.used && a.read_back && a.same_as < 0)
            for (int j = 0; j < i; ++j)
                if (call.arg[j].used && call.arg[j].same_as < 0 && call.arg[j].dtype == a.dtype &&
                    call.arg[j].count == a.count) {
                    tr_set_in_place(&call, i, j, 1);
                    break;
                }
        break;
    case 4: call.order = int(int32_t(in.u32())); break;
    case 5:
        call.begin_bit = in.u8();
        call.end_bit = in.u8();
        break;
    case 6: call.k = in.u8() < 128 ? in.u16() : in.u64(); break;
    case 7: call.op = gpuprim_op_t(int32_t(in.u32())); break;
    case 8:  // the segments
        if (call.layout) {
            tc_layout_t *layout = const_cast<tc_layout_t *>(call.layout);  // the clone's own copy
            if (layout->uniform) {
                layout->rows = in.u16() % 300;
                layout->len = in.u16() % 300;
            } else if (layout->nseg > 0) {
                const uint64_t s = in.u16() % (layout->nseg + 1);
                layout->off[s] = in.u8() < 192 ? in.u16() % 5000 : in.u64();
            }
        }
        break;
    }
}

void check_failure(const tr_call_t &call, const tr_result_t &r) {
    char why[256];
    // Bad arguments get a named error, never INTERNAL or a value outside the enum.
    if (int(r.status) < int(GPUPRIM_ERROR_NULL_POINTER) || int(r.status) > int(GPUPRIM_ERROR_NOT_CAPTURABLE) ||
        r.status == GPUPRIM_ERROR_INTERNAL)
        violation(call, "status %d (%s): %s", int(r.status), gpuprim_get_error_string(r.status), r.message);
    if (r.message[0] == '\0') violation(call, "failed (%s) without a message", gpuprim_get_error_string(r.status));
    if (!tr_unchanged(&call, &r, why, sizeof why))
        violation(call, "failed (%s: %s) but %s", gpuprim_get_error_string(r.status), r.message, why);
}

void run_input(const uint8_t *data, size_t size, int replay_case = -1, int replay_call = -1) {
    Plans &p = plans();
    Input in(data, size);
    const size_t case_index = replay_case >= 0 ? size_t(replay_case) : in.u8() % tr_case_count;
    const std::vector<tr_call_t *> &calls = p.calls[case_index];
    if (calls.empty()) return;
    const size_t call_index = replay_call >= 0 ? size_t(replay_call) : in.u16() % calls.size();
    tr_call_t *call = tr_call_clone(calls[call_index]);
    const int mode = in.u8() % 8;
    bool judged = mode < 4;
    if (judged) {
        // Mode 3 also turns an ascending call descending or back (calls whose
        // inputs must be in order then have them out of order).
        if (mode == 3 && (call->order == 0 || call->order == 1)) {
            call->order ^= 1;
            if (call->kase->ordered_args) judged = false;
        }
        if (write_contents(*call, in) & call->kase->ordered_args) judged = false;
    } else {
        change_shape(*call, in);
        write_contents(*call, in);
    }

    tr_result_t got, other;
    tr_run(call, p.one_thread, &got);
    if (p.trace)
        std::fprintf(stderr, "%s: %s, %s: %s %s\n", call->kase->name, call->label,
                     mode < 4 ? (judged ? "contents" : "contents of ordered arguments") : "shape changed",
                     gpuprim_get_error_string(got.status), got.message);
    if (got.status != GPUPRIM_SUCCESS) {
        check_failure(*call, got);
    } else if (judged) {
        char why[256];
        if (!tr_check(call, &got, why, sizeof why)) violation(*call, "not the reference's result: %s", why);
        tr_run(call, p.three_threads, &other);
        if (other.status != GPUPRIM_SUCCESS)
            violation(*call, "succeeded on 1 thread, failed on 3: %s", other.message);
        if (!tr_same_bits(call, &got, &other, why, sizeof why)) violation(*call, "1 and 3 threads differ: %s", why);
        tr_result_free(&other);
    }
    tr_result_free(&got);
    tr_call_destroy(call);
    if (tc.failures) {
        std::fprintf(stderr, "fuzz_registry: a registry check failed\n");
        std::abort();
    }
}

}  // namespace

// Every call of every case, unchanged and then with contents from a fixed
// generator (the replay test's first part).
extern "C" int gpuprim_fuzz_registry_each_call(void) {
    Plans &p = plans();
    uint64_t state = 0x243F6A8885A308D3ull;
    int calls = 0;
    std::vector<uint8_t> bytes(600);
    for (size_t c = 0; c < tr_case_count; ++c)
        for (size_t k = 0; k < p.calls[c].size(); ++k) {
            run_input(nullptr, 0, int(c), int(k));  // mode 0, nothing written
            for (uint8_t &byte : bytes) byte = gpuprim_fuzz::next_fixed_byte(state);
            bytes[0] = uint8_t(k % 4);  // a contents mode
            run_input(bytes.data(), bytes.size(), int(c), int(k));
            calls += 2;
        }
    return calls;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    run_input(data, size);
    return 0;
}
