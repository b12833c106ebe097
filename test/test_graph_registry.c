/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CUDA graph capture of every registry case's calls (test/registry/), on
 * the CUDA backend: the concurrency plan's calls (every entry point and
 * shape on all twelve dtypes, 0..65537 elements, rows and CSR segments) on
 * a context whose CSR offsets checks are deferred. For each call expected
 * to succeed:
 * 1. run once uncaptured (the workspace grows to its need), its result
 *    checked against the case's reference;
 * 2. the workspace grown by a workspace query of the call and held still,
 *    the buffers given their initial contents again, the call made while
 *    the context's stream captures. Either it is
 *    captured, and then the graph ran nothing while capturing (the outputs
 *    still hold their poison); or it is refused with NOT_CAPTURABLE, and
 *    then the capture is intact, the graph empty and the outputs untouched
 *    (the header's refusals: results or counts to the host, ...);
 * 3. a captured call's graph replayed: the outputs are the reference's, and
 *    bit for bit the uncaptured run's; then, unless the case wants some
 *    argument in order (merge runs, histogram edges, sorted keys), replayed
 *    again after new random contents were uploaded into the same buffers,
 *    against the reference on those contents and the CPU backend's result;
 * 4. the workspace kept its size throughout.
 * Every case must have calls that capture (one whose calls are all refused
 * fails), except a case whose calls all return to the host (argmin/argmax:
 * host_results_only), which must have none. test_graph_capture.c keeps the deeper checks of a few calls (sizes
 * past the CUDA tiles, deferred faults in replays, each refusal by name, a
 * workspace query instead of the warm-up).
 *
 *   test_graph_registry [case ...]     (no case, or "all": every case)
 *
 * Skipped (exit 77) unless the default context runs on CUDA.
 */
#include "registry/registry.h"

#include <cuda_runtime.h>

#include "cuda_checks.h"

typedef struct {
    gpuprim_context_t cuda, cpu;
    cudaStream_t stream;
    long calls, captured, refused, replayed_on_new_data, not_expected_to_succeed;
    long case_captured; /* captured calls of the case running now */
} graph_run_t;

static uint64_t workspace_bytes(gpuprim_context_t ctx) {
    uint64_t bytes = 0;
    CHECK_OK(gpuprim_context_get_workspace_size(ctx, &bytes));
    return bytes;
}

/* The call with new random contents (moderate values, so that float sums
 * compare; every third argument few distinct ones) in every argument that
 * is an input (an in-place call's input included; outputs keep their
 * poison), except those whose host contents the capture took by value. */
static tr_call_t *with_new_contents(const tr_call_t *call) {
    tr_call_t *copy = tr_call_clone(call);
    int i;
    for (i = 0; i < TR_MAX_ARGS; ++i) {
        tr_arg_t *a = &copy->arg[i];
        if (a->used && a->same_as < 0 && !a->read_back && a->count && !(call->kase->host_args & (1u << i)))
            tr_fill_random(a->dtype, a->host, a->count, 1, (int)(tr_random() % 3 == 0));
    }
    tr_call_label(copy, "%s, new contents", call->label);
    return copy;
}

/* Replays exec after uploading call's contents into made's buffers; the
 * outputs then must be the reference's on those contents and agree with the
 * CPU backend's (and, with `uncaptured`, be its bits). */
static void replay_and_check(graph_run_t *run, cudaGraphExec_t exec, const tr_call_t *call, const tr_made_t *made,
                             const tr_result_t *uncaptured) {
    tr_result_t got, cpu;
    char why[256] = "";
    memset(&got, 0, sizeof got);
    tr_refill(call, run->cuda, made);
    if (!CUDA_OK(cudaGraphLaunch(exec, run->stream)) || !CUDA_OK(cudaStreamSynchronize(run->stream))) return;
    CHECK_OK(gpuprim_context_check_deferred(run->cuda));
    tr_read_back(call, run->cuda, made, &got);
    CHECKF(tr_check(call, &got, why, sizeof why), "the replay differs from the reference: %s", why);
    if (uncaptured) {
        CHECKF(tr_same_bits(call, &got, uncaptured, why, sizeof why), "the replay differs from the uncaptured run: %s",
               why);
    } else {
        tr_run(call, run->cpu, &cpu);
        CHECKF(cpu.status == GPUPRIM_SUCCESS, "the CPU backend returned %d: %s", (int)cpu.status, cpu.message);
        if (cpu.status == GPUPRIM_SUCCESS)
            CHECKF(tr_agree(call, &cpu, &got, why, sizeof why), "the replay and the CPU backend differ: %s", why);
        tr_result_free(&cpu);
    }
    tr_result_free(&got);
}

/* Whether the call has an output with elements (one without, e.g. n = 0,
 * may enqueue nothing and capture an empty graph). */
static int writes_anything(const tr_call_t *call) {
    int i;
    for (i = 0; i < TR_MAX_ARGS; ++i)
        if (call->arg[i].used && call->arg[i].read_back && call->arg[i].count) return 1;
    return call->scalar_size > 0;
}

static void graph_visit(const tr_call_t *call, void *user) {
    graph_run_t *run = (graph_run_t *)user;
    tr_made_t made;
    tr_result_t first, during;
    unsigned char scalar[16];
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    size_t nodes = 0;
    uint64_t held;
    gpuprim_workspace_sizes_t sizes;
    gpuprim_status_t status;
    char why[256] = "";
    tc_where("%s", call->label);
    run->calls++;
    if (call->expect != GPUPRIM_SUCCESS) {
        run->not_expected_to_succeed++;
        return;
    }
    memset(&first, 0, sizeof first);
    memset(&during, 0, sizeof during);
    memset(scalar, 0, sizeof scalar);
    tr_make(call, run->cuda, &made);

    /* 1. Uncaptured: the workspace grows to what the call needs. */
    status = tr_invoke(call, run->cuda, &made, first.scalar);
    CHECKF(status == GPUPRIM_SUCCESS, "the uncaptured call returned %d: %s", (int)status,
           gpuprim_context_last_error(run->cuda));
    CHECK_OK(gpuprim_context_check_deferred(run->cuda));
    tr_read_back(call, run->cuda, &made, &first);
    CHECKF(tr_check(call, &first, why, sizeof why), "the uncaptured call differs from the reference: %s", why);

    /* 2. Captured, the workspace held still: grown by a query of the call
     * too, as the header asks of CSR calls with a deferred check (the
     * warm-up took what the data needed, the capture takes the bound). */
    memset(&sizes, 0, sizeof sizes);
    sizes.struct_size = sizeof sizes;
    CHECK_OK(gpuprim_context_begin_workspace_query(run->cuda));
    status = tr_invoke(call, run->cuda, &made, scalar);
    CHECK_OK(gpuprim_context_end_workspace_query(run->cuda, &sizes));
    CHECKF(status == GPUPRIM_SUCCESS, "the call returned %d in a workspace query", (int)status);
    CHECK_OK(gpuprim_context_reserve_workspace_sizes(run->cuda, &sizes, 1));
    held = workspace_bytes(run->cuda);
    tr_refill(call, run->cuda, &made);
    if (!CUDA_OK(cudaStreamBeginCapture(run->stream, cudaStreamCaptureModeGlobal))) goto done;
    status = tr_invoke(call, run->cuda, &made, scalar);
    CHECKF(capture_state(run->stream) == 1, "the capture is no longer active after the call (status %d)", (int)status);
    CUDA_OK(cudaStreamEndCapture(run->stream, &graph));
    if (graph) CUDA_OK(cudaGraphGetNodes(graph, NULL, &nodes));
    tr_read_back(call, run->cuda, &made, &during);
    CHECKF(tr_unchanged(call, &during, why, sizeof why), "the capture ran the call: %s", why);
    if (status == GPUPRIM_ERROR_NOT_CAPTURABLE) {
        run->refused++;
        CHECKF(nodes == 0, "a refused call left %zu nodes in the graph", nodes);
    } else {
        CHECKF(status == GPUPRIM_SUCCESS, "the captured call returned %d: %s", (int)status,
               gpuprim_context_last_error(run->cuda));
        CHECKF(nodes > 0 || !writes_anything(call), "the captured call added no node to the graph");
        if (status == GPUPRIM_SUCCESS && graph && nodes == 0) {
            run->captured++; /* nothing to write, nothing enqueued: nothing to replay */
            run->case_captured++;
        } else if (status == GPUPRIM_SUCCESS && graph && CUDA_OK(cudaGraphInstantiate(&exec, graph, 0))) {
            run->captured++;
            run->case_captured++;
            /* 3. Replays: the same contents, then new ones. */
            replay_and_check(run, exec, call, &made, &first);
            if (!call->kase->ordered_args) {
                tr_call_t *fresh = with_new_contents(call);
                tc_where("%s", fresh->label);
                replay_and_check(run, exec, fresh, &made, NULL);
                run->replayed_on_new_data++;
                tr_call_destroy(fresh);
            }
            CUDA_OK(cudaGraphExecDestroy(exec));
        }
    }
    if (graph) CUDA_OK(cudaGraphDestroy(graph));
    /* 4. The workspace kept its size. */
    CHECKF(workspace_bytes(run->cuda) == held, "the held workspace changed size: %llu -> %llu bytes",
           (unsigned long long)held, (unsigned long long)workspace_bytes(run->cuda));
done:
    CHECK_OK(gpuprim_context_reserve_workspace(run->cuda, 0, 0));
    tr_result_free(&first);
    tr_result_free(&during);
    tr_unmake(call, run->cuda, &made);
}

int main(int argc, char **argv) {
    gpuprim_context_options_t options;
    gpuprim_backend_t backend = GPUPRIM_BACKEND_AUTO;
    graph_run_t run;
    void *raw_stream = NULL;
    int32_t ordinal = 0;
    size_t c;
    int i;
    memset(&run, 0, sizeof run);
    if (gpuprim_context_create(NULL, &run.cuda, NULL, 0) != GPUPRIM_SUCCESS)
        return tc_skip("test_graph_registry: skipped: no default context (the CUDA backend is not usable here)");
    if (gpuprim_context_get_backend(run.cuda, &backend) != GPUPRIM_SUCCESS || backend != GPUPRIM_BACKEND_CUDA) {
        (void)gpuprim_context_destroy(run.cuda);
        return tc_skip("test_graph_registry: skipped: the default context runs on the CPU backend; CUDA graphs "
                       "need the CUDA backend (GPUPRIM_BACKEND=cuda on a machine with a GPU)");
    }
    tc_init("test_graph_registry");
    gpuprim_context_options_init(&options);
    options.backend = GPUPRIM_BACKEND_CPU;
    REQUIRE_OK(gpuprim_context_create(&options, &run.cpu, NULL, 0));
    REQUIRE_OK(gpuprim_context_get_device(run.cuda, &ordinal, NULL, 0));
    if (!CUDA_OK(cudaSetDevice(ordinal))) tc_abort();
    REQUIRE_OK(gpuprim_context_get_stream(run.cuda, &raw_stream));
    run.stream = (cudaStream_t)raw_stream;
    /* CSR calls capture only with their check deferred (gpuprim.h). */
    REQUIRE_OK(gpuprim_context_set_offsets_check(run.cuda, GPUPRIM_OFFSETS_CHECK_DEFERRED));

    for (c = 0; c < tr_case_count; ++c) {
        int wanted = argc < 2;
        long calls_before = run.calls;
        double start = tc_seconds();
        for (i = 1; i < argc; ++i) wanted |= strcmp(argv[i], tr_cases[c]->name) == 0 || strcmp(argv[i], "all") == 0;
        if (!wanted) continue;
        run.case_captured = 0;
        tr_cases[c]->each(TR_PLAN_CONCURRENCY, graph_visit, &run);
        printf("  %s: %ld calls, %ld captured, %.2f s\n", tr_cases[c]->name, run.calls - calls_before,
               run.case_captured, tc_seconds() - start);
        fflush(stdout);
        if (tr_cases[c]->host_results_only)
            CHECKF(run.case_captured == 0, "case %s: a call was captured, yet every call returns to the host",
                   tr_cases[c]->name);
        else
            CHECKF(run.case_captured > 0, "case %s: no call of its concurrency plan was captured", tr_cases[c]->name);
    }
    for (i = 1; i < argc; ++i)
        CHECKF(strcmp(argv[i], "all") == 0 || tr_find_case(argv[i]) != NULL, "no case named \"%s\"", argv[i]);
    printf("test_graph_registry: %ld calls: %ld captured and replayed (%ld on new contents too), %ld refused, "
           "%ld expected to fail (not captured)\n",
           run.calls, run.captured, run.replayed_on_new_data, run.refused, run.not_expected_to_succeed);
    CHECK_OK(gpuprim_context_destroy(run.cpu));
    CHECK_OK(gpuprim_context_destroy(run.cuda));
    return tc_finish();
}
