/* SPDX-License-Identifier: Apache-2.0 */
/* Concurrency: gpuprim.h says "every function may be called from any thread.
 * Calls on one context are serialized by the context's lock: threads may
 * share a context ... distinct contexts never wait for each other". Many
 * threads (default 8), each with its own context, run every call of the test
 * registry's concurrency plan at once in a loop (TR_PLAN_CONCURRENCY: every
 * registry case, so every entry point, on all twelve dtypes, sizes
 * 0..65537), each thread starting at another place in the list so that
 * different primitives overlap, and check every result bit for bit against
 * the case's reference. The plan's values are small integers, so float sums
 * have one exact answer too (tr_float_sum_exact); a call without an exact
 * reference is compared with an undisturbed single-threaded run of it
 * instead. A call that must fail (argreduce of nothing) fails with the same
 * status, message and untouched outputs. The threads also share the
 * read-only functions (error strings, version).
 * With "shared", all threads work on one context at once (calls on a
 * context are serialized by its lock), and then race a
 * gpuprim_context_destroy() with the registry's small calls
 * (TR_PLAN_SMALL): each call completes correctly or gets INVALID_HANDLE.
 *   rel_concurrency [threads] [iterations] [shared]
 * The registry's check counters are atomic (test_common.h), so the threads
 * count in the program's totals. Run under ThreadSanitizer by
 * test/reliability/run_sanitizers.sh. */
#define _POSIX_C_SOURCE 200809L /* pthread barriers, nanosleep */

#include "../registry/registry.h"

#include <pthread.h>

#define MAX_THREADS 64

/* A call of a plan, kept for the threads (they only read it), and what it
 * must give. */
typedef struct {
    tr_call_t *call;
    tr_result_t want; /* the reference's result, or the undisturbed run's */
} planned_t;

typedef struct {
    planned_t *calls;
    size_t count, capacity;
    size_t without_reference; /* compared with the undisturbed run */
} plan_t;

static void plan_add(const tr_call_t *call, void *user) {
    plan_t *plan = (plan_t *)user;
    if (plan->count == plan->capacity) {
        plan->capacity = plan->capacity ? 2 * plan->capacity : 256;
        plan->calls = (planned_t *)realloc(plan->calls, plan->capacity * sizeof *plan->calls);
        if (!plan->calls) tc_abort();
    }
    memset(&plan->calls[plan->count], 0, sizeof plan->calls[plan->count]);
    plan->calls[plan->count++].call = tr_call_clone(call);
}

/* Every case's calls of the plan, each with what it must give: the
 * reference where it has one (the undisturbed run on ctx checked against it
 * too), else that run. */
static plan_t plan_make(tr_plan_t which, gpuprim_context_t ctx) {
    plan_t plan = {NULL, 0, 0, 0};
    size_t c, i;
    char why[256];
    for (c = 0; c < tr_case_count; ++c) {
        const size_t before = plan.count;
        tr_cases[c]->each(which, plan_add, &plan);
        CHECKF(plan.count > before, "case %s makes no calls for this plan", tr_cases[c]->name);
        printf("%s %s: %zu calls", c ? "," : "  ", tr_cases[c]->name, plan.count - before);
    }
    printf("\n");
    for (i = 0; i < plan.count; ++i) {
        planned_t *p = &plan.calls[i];
        tr_result_t alone;
        tc_where("%s (single-threaded)", p->call->label);
        tr_run(p->call, ctx, &alone);
        CHECKF(alone.status == p->call->expect, "returned %d (%s), expected %d", (int)alone.status, alone.message,
               (int)p->call->expect);
        if (tr_reference(p->call, &p->want)) {
            CHECKF(tr_same_bits(p->call, &alone, &p->want, why, sizeof why), "not the reference: %s", why);
            tr_result_free(&alone);
        } else {
            p->want = alone;
            plan.without_reference++;
        }
        p->want.status = alone.status;
        memcpy(p->want.message, alone.message, sizeof p->want.message);
    }
    return plan;
}

static void plan_free(plan_t *plan) {
    size_t i;
    for (i = 0; i < plan->count; ++i) {
        tr_result_free(&plan->calls[i].want);
        tr_call_destroy(plan->calls[i].call);
    }
    free(plan->calls);
}

/* ------------------------------------------------------------------------ */
/* Threads running the concurrency plan, a context each or one shared.     */
/* ------------------------------------------------------------------------ */

typedef struct {
    int index, threads, iterations;
    const plan_t *plan;
    gpuprim_context_t shared; /* NULL: a context of its own */
} worker_t;

static pthread_barrier_t g_start;

/* One call on ctx, checked against what it must give. The message of a
 * failure is compared only on a context of the thread's own: on a shared
 * one another thread's failed call may have replaced it meanwhile. */
static void run_planned(const worker_t *w, gpuprim_context_t ctx, const planned_t *p) {
    tr_result_t got;
    char why[256] = "";
    tr_run(p->call, ctx, &got);
    CHECKF(got.status == p->call->expect, "thread %d: %s: returned %d (%s), expected %d", w->index, p->call->label,
           (int)got.status, got.message, (int)p->call->expect);
    CHECKF(tr_same_bits(p->call, &got, &p->want, why, sizeof why), "thread %d: %s: %s", w->index, p->call->label,
           why);
    if (got.status != GPUPRIM_SUCCESS && !w->shared)
        CHECKF(strcmp(got.message, p->want.message) == 0, "thread %d: %s: message \"%s\", alone \"%s\"", w->index,
               p->call->label, got.message, p->want.message);
    tr_result_free(&got);
}

static void *worker_main(void *argument) {
    const worker_t *w = (const worker_t *)argument;
    const size_t count = w->plan->count, first = count * (size_t)w->index / (size_t)w->threads;
    gpuprim_context_t ctx = w->shared;
    char message[256];
    int iteration;
    size_t j;
    /* Everyone creates at once too. */
    pthread_barrier_wait(&g_start);
    if (!ctx && gpuprim_context_create(NULL, &ctx, message, sizeof message) != GPUPRIM_SUCCESS) {
        CHECKF(0, "thread %d: context_create: %s", w->index, message);
        return NULL;
    }
    for (iteration = 0; iteration < w->iterations; ++iteration) {
        for (j = 0; j < count; ++j) run_planned(w, ctx, &w->plan->calls[(first + j) % count]);
        CHECKF(strcmp(gpuprim_get_error_string(GPUPRIM_ERROR_OVERFLOW), "size overflow") == 0 &&
                   gpuprim_version_number() == GPUPRIM_VERSION_NUMBER,
               "thread %d: the shared read-only functions", w->index);
        if (iteration % 4 == 3) CHECKF(gpuprim_context_release_workspace(ctx) == GPUPRIM_SUCCESS,
                                       "thread %d: release_workspace", w->index);
        /* Growth by another thread between calls; never held, so the others' calls may grow it too. */
        if (iteration % 4 == 1)
            CHECKF(gpuprim_context_reserve_workspace(ctx, (uint64_t)(w->index + 1) << 20, 0) == GPUPRIM_SUCCESS,
                   "thread %d: reserve_workspace", w->index);
    }
    if (!w->shared) CHECKF(gpuprim_context_destroy(ctx) == GPUPRIM_SUCCESS, "thread %d: context_destroy", w->index);
    return NULL;
}

static void run_threads(int threads, int iterations, const plan_t *plan, gpuprim_context_t shared) {
    pthread_t ids[MAX_THREADS];
    worker_t workers[MAX_THREADS];
    int i;
    if (pthread_barrier_init(&g_start, NULL, (unsigned)threads) != 0) tc_abort();
    for (i = 0; i < threads; ++i) {
        workers[i].index = i;
        workers[i].threads = threads;
        workers[i].iterations = iterations;
        workers[i].plan = plan;
        workers[i].shared = shared;
        if (pthread_create(&ids[i], NULL, worker_main, &workers[i]) != 0) tc_abort();
    }
    for (i = 0; i < threads; ++i) pthread_join(ids[i], NULL);
    pthread_barrier_destroy(&g_start);
}

/* ------------------------------------------------------------------------ */
/* A context destroyed while other threads are inside calls on it: each    */
/* call either completes (SUCCESS, right result) or finds the context gone */
/* (INVALID_HANDLE), and once destroy has returned every call is           */
/* INVALID_HANDLE. The racers cycle through every small call, each on      */
/* buffers made for it before the race.                                    */
/* ------------------------------------------------------------------------ */

typedef struct {
    int index;
    gpuprim_context_t context;
    const plan_t *plan;
    tr_made_t *made; /* per call of the plan, on context */
} racer_t;

static int g_destroyed; /* read and written with __atomic builtins */

/* The call's arguments back to their initial contents (in place calls
 * overwrite their inputs), the call, its outputs downloaded: the first
 * status that is not SUCCESS. */
static gpuprim_status_t race_call(gpuprim_context_t ctx, const tr_call_t *call, const tr_made_t *made,
                                  tr_result_t *got) {
    gpuprim_status_t status = GPUPRIM_SUCCESS;
    int i;
    memset(got, 0, sizeof *got);
    for (i = 0; i < TR_MAX_ARGS && status == GPUPRIM_SUCCESS; ++i) {
        const tr_arg_t *a = &call->arg[i];
        if (a->used && a->same_as < 0 && a->count)
            status = gpuprim_buffer_upload(ctx, made->b[i], 0, a->host, a->count);
    }
    if (status == GPUPRIM_SUCCESS) status = tr_invoke(call, ctx, made, got->scalar);
    for (i = 0; i < TR_MAX_ARGS; ++i) {
        const tr_arg_t *a = &call->arg[i];
        if (!a->used || !a->read_back) continue;
        got->out[i] = (unsigned char *)tc_xmalloc((size_t)a->count * tc_size(a->dtype) + 16);
        if (status == GPUPRIM_SUCCESS && a->count)
            status = gpuprim_buffer_download(ctx, made->b[i], 0, got->out[i], a->count);
    }
    return status;
}

static void *racer_main(void *argument) {
    const racer_t *r = (const racer_t *)argument;
    const size_t count = r->plan->count;
    int round, after_destroy_seen = 0;
    pthread_barrier_wait(&g_start);
    for (round = 0; round < 100000 && after_destroy_seen <= 100; ++round) {
        const size_t j = ((size_t)r->index + (size_t)round) % count;
        const planned_t *p = &r->plan->calls[j];
        const int destroyed_before = __atomic_load_n(&g_destroyed, __ATOMIC_SEQ_CST);
        tr_result_t got;
        char why[256] = "";
        const gpuprim_status_t status = race_call(r->context, p->call, &r->made[j], &got);
        if (status == p->call->expect) {
            CHECKF(!destroyed_before, "racer %d: %s succeeded after destroy returned", r->index, p->call->label);
            CHECKF(tr_same_bits(p->call, &got, &p->want, why, sizeof why), "racer %d: %s: %s", r->index,
                   p->call->label, why);
        } else {
            CHECKF(status == GPUPRIM_ERROR_INVALID_HANDLE, "racer %d: %s racing destroy returned %d", r->index,
                   p->call->label, (int)status);
            ++after_destroy_seen;
        }
        tr_result_free(&got);
    }
    return NULL;
}

static void destroy_race(int threads, const plan_t *plan) {
    pthread_t ids[MAX_THREADS];
    racer_t racers[MAX_THREADS];
    gpuprim_context_t context = NULL;
    char message[256];
    struct timespec pause = {0, 2000000}; /* 2 ms of calls before the destroy */
    const long failures_before = tc.failures;
    int i;
    size_t j;
    tc_where("destroy race");
    __atomic_store_n(&g_destroyed, 0, __ATOMIC_SEQ_CST);
    if (gpuprim_context_create(NULL, &context, message, sizeof message) != GPUPRIM_SUCCESS) {
        CHECKF(0, "context_create: %s", message);
        return;
    }
    if (pthread_barrier_init(&g_start, NULL, (unsigned)threads + 1) != 0) tc_abort();
    for (i = 0; i < threads; ++i) {
        racers[i].index = i;
        racers[i].context = context;
        racers[i].plan = plan;
        racers[i].made = (tr_made_t *)tc_xmalloc(plan->count * sizeof *racers[i].made);
        for (j = 0; j < plan->count; ++j) tr_make(plan->calls[j].call, context, &racers[i].made[j]);
    }
    for (i = 0; i < threads; ++i)
        if (pthread_create(&ids[i], NULL, racer_main, &racers[i]) != 0) tc_abort();
    pthread_barrier_wait(&g_start);
    nanosleep(&pause, NULL);
    CHECKF(gpuprim_context_destroy(context) == GPUPRIM_SUCCESS, "destroy while threads call");
    __atomic_store_n(&g_destroyed, 1, __ATOMIC_SEQ_CST);
    CHECKF(gpuprim_context_destroy(context) == GPUPRIM_ERROR_INVALID_HANDLE, "second destroy");
    for (i = 0; i < threads; ++i) {
        pthread_join(ids[i], NULL);
        free(racers[i].made); /* the buffers went with their context */
    }
    pthread_barrier_destroy(&g_start);
    printf("rel_concurrency: destroy raced %d threads' calls (%zu small calls): %s\n", threads, plan->count,
           tc.failures > failures_before ? "FAILED" : "every call completed or saw INVALID_HANDLE");
}

int main(int argc, char **argv) {
    const int threads = argc > 1 ? atoi(argv[1]) : 8;
    const int iterations = argc > 2 ? atoi(argv[2]) : 6;
    const int shared = argc > 3 && strcmp(argv[3], "shared") == 0;
    gpuprim_context_t ctx = tc_init("rel_concurrency"), shared_ctx = NULL;
    char message[256];
    double start;
    plan_t plan;
    if (threads < 1 || threads > MAX_THREADS) {
        fprintf(stderr, "rel_concurrency: threads must be 1..%d\n", MAX_THREADS);
        return 2;
    }
    tc_where("the concurrency plan");
    start = tc_seconds();
    plan = plan_make(TR_PLAN_CONCURRENCY, ctx);
    printf("rel_concurrency: %zu calls of %zu registry cases (%zu without an exact reference), each "
           "single-threaded first (%.2f s)\n",
           plan.count, tr_case_count, plan.without_reference, tc_seconds() - start);
    printf("rel_concurrency: %d threads x %d iterations, %s\n", threads, iterations,
           shared ? "all on one shared context" : "a context each");
    fflush(stdout);
    tc_where("threads");
    if (shared && gpuprim_context_create(NULL, &shared_ctx, message, sizeof message) != GPUPRIM_SUCCESS) {
        fprintf(stderr, "rel_concurrency: context_create: %s\n", message);
        return 1;
    }
    start = tc_seconds();
    run_threads(threads, iterations, &plan, shared_ctx);
    printf("rel_concurrency: the threads ran %zu calls in %.2f s\n", plan.count * (size_t)threads * (size_t)iterations,
           tc_seconds() - start);
    if (shared_ctx) CHECK_OK(gpuprim_context_destroy(shared_ctx));
    plan_free(&plan);
    if (shared) {
        tc_where("the small plan");
        plan = plan_make(TR_PLAN_SMALL, ctx);
        destroy_race(threads, &plan);
        plan_free(&plan);
    }
    return tc_finish();
}
