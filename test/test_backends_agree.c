/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CUDA backend against the CPU backend on the same inputs, for every
 * call of every registry case's backend plan (test/registry/): every dtype,
 * op, order, value width and bit range; segmented calls on rows and CSR of
 * every offset dtype; top-k flat and segmented. Integer results, MIN/MAX,
 * sorts and top-k must be bit-identical (poisoned elements outside the
 * segments and untouched slots included); float SUM, dot and scans within an
 * f32 accumulation bound (the backends associate differently); calls that
 * must fail (bad offsets) fail alike: status, message, outputs untouched.
 *
 *   test_backends_agree [case ...]     (no case: all of them)
 *
 * Skipped (exit 77) when no CUDA device is usable.
 * GPUPRIM_AGREE_SECOND_BACKEND=cpu compares a 1-thread CPU context with the
 * default CPU one instead: a run of this program's own logic on a machine
 * without a GPU (test/README.md).
 */
#include "registry/registry_main.h"

typedef struct {
    gpuprim_context_t first, second;
    long calls;
} agree_run_t;

static void agree_visit(const tr_call_t *call, void *user) {
    agree_run_t *run = (agree_run_t *)user;
    tr_result_t a, b;
    char why[256] = "";
    tc_where("%s", call->label);
    run->calls++;
    tr_run(call, run->first, &a);
    tr_run(call, run->second, &b);
    CHECKF(a.status == call->expect, "CPU returned %d (%s: %s), expected %d", (int)a.status,
           gpuprim_get_error_string(a.status), a.message, (int)call->expect);
    CHECKF(b.status == call->expect, "CUDA returned %d (%s: %s), expected %d", (int)b.status,
           gpuprim_get_error_string(b.status), b.message, (int)call->expect);
    if (a.status == GPUPRIM_SUCCESS && b.status == GPUPRIM_SUCCESS) {
        CHECKF(tr_agree(call, &a, &b, why, sizeof why), "CPU and CUDA differ: %s", why);
    } else if (a.status == b.status) {
        CHECKF(strcmp(a.message, b.message) == 0, "CPU says '%s', CUDA '%s'", a.message, b.message);
        CHECKF(tr_unchanged(call, &a, why, sizeof why), "CPU: %s", why);
        CHECKF(tr_unchanged(call, &b, why, sizeof why), "CUDA: %s", why);
    }
    tr_result_free(&a);
    tr_result_free(&b);
}

static gpuprim_context_t context_of(gpuprim_backend_t backend, int32_t threads) {
    gpuprim_context_options_t options;
    gpuprim_context_t ctx = NULL;
    gpuprim_context_options_init(&options);
    options.backend = backend;
    options.cpu_threads = threads;
    return gpuprim_context_create(&options, &ctx, NULL, 0) == GPUPRIM_SUCCESS ? ctx : NULL;
}

int main(int argc, char **argv) {
    const char *second = getenv("GPUPRIM_AGREE_SECOND_BACKEND");
    const int self_test = second && strcmp(second, "cpu") == 0;
    agree_run_t run;
    memset(&run, 0, sizeof run);
    run.second = self_test ? context_of(GPUPRIM_BACKEND_CPU, 0) : context_of(GPUPRIM_BACKEND_CUDA, 0);
    if (!run.second) {
        return tc_skip("SKIP: no usable CUDA device");
    }
    tc_init("test_backends_agree");
    run.first = context_of(GPUPRIM_BACKEND_CPU, self_test ? 1 : 0);
    if (!run.first) {
        fprintf(stderr, "test_backends_agree: no CPU context\n");
        return 1;
    }
    if (self_test) printf("  GPUPRIM_AGREE_SECOND_BACKEND=cpu: 1 CPU thread against the default CPU context\n");
    tr_for_named_cases(argc, argv, TR_PLAN_BACKENDS, agree_visit, &run, &run.calls);
    printf("test_backends_agree: %ld calls compared\n", run.calls);
    CHECK_OK(gpuprim_context_destroy(run.first));
    CHECK_OK(gpuprim_context_destroy(run.second));
    return tc_finish();
}
