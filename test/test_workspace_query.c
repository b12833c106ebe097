/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The workspace query (gpuprim_context_begin_workspace_query, issue 39), on
 * the backend the default context picks (GPUPRIM_BACKEND).
 *
 * test_workspace_query <case ...>: every call of those registry cases
 * (test/registry/, the small and the backend plans), each on a fresh
 * context whose memory comes from a counting allocator: the call is made
 * inside a query, which must return the real call's status, call the
 * allocator 0 times, and leave every output and the host scalar as they
 * were; the sizes are then reserved held still
 * (gpuprim_context_reserve_workspace_sizes with fix), and the real call must
 * run without allocating, its workspace's largest request (a white-box
 * hook) equal to the query's sizes, or at most them where the query says
 * `bounded`. A call with its first buffer NULL fails alike in and out of a
 * query.
 * test_workspace_query --rules: the entry points' own rules (begin twice,
 * end without begin, sizes NULL, struct_size, distributed calls, buffer
 * calls during a query, the max over several calls, reserve by sizes).
 * The query during a CUDA graph capture is in test_graph_capture.c.
 */
#include "registry/registry_main.h"

/* workspace_query_hook.cpp: the largest request each real block has seen. */
int tq_largest_requests(gpuprim_context_t context, uint64_t *main_bytes, uint64_t *side_bytes);

/* ---- a counting allocator: blocks carved from one buffer of an ordinary
 * context, from its start again for each call's fresh context ------------ */

#define POOL_BYTES ((uint64_t)384 << 20)

typedef struct pool {
    unsigned char *base;
    uint64_t used;
    long allocations; /* calls of allocate, failed or not */
    long frees;
} pool_t;

static int pool_allocate(void *user, uint64_t bytes, void *stream, void **memory) {
    pool_t *pool = (pool_t *)user;
    const uint64_t start = (pool->used + 255u) & ~(uint64_t)255u;
    (void)stream;
    pool->allocations++;
    if (bytes > POOL_BYTES - start) return 1;
    pool->used = start + bytes;
    *memory = pool->base + start;
    return 0;
}

static void pool_deallocate(void *user, void *memory, uint64_t bytes, void *stream) {
    (void)memory, (void)bytes, (void)stream;
    ((pool_t *)user)->frees++;
}

static pool_t pool;

static gpuprim_context_t pool_context(void) {
    gpuprim_context_options_t options;
    gpuprim_context_t made = NULL;
    char message[256] = "";
    gpuprim_context_options_init(&options);
    options.allocate = pool_allocate;
    options.deallocate = pool_deallocate;
    options.allocator_user = &pool;
    pool.used = 0;
    if (gpuprim_context_create(&options, &made, message, sizeof message) != GPUPRIM_SUCCESS) {
        fprintf(stderr, "test_workspace_query: cannot create a context: %s\n", message);
        tc_abort();
    }
    return made;
}

static gpuprim_workspace_sizes_t sizes_init(void) {
    gpuprim_workspace_sizes_t sizes;
    memset(&sizes, 0, sizeof sizes);
    sizes.struct_size = sizeof sizes;
    return sizes;
}

/* ---- the registry's calls ------------------------------------------------ */

typedef struct query_run {
    long calls;
    long bounded;
} query_run_t;

/* Every read-back argument holds its initial contents still. */
static int outputs_untouched(const tr_call_t *call, gpuprim_context_t q, const tr_made_t *made, char *why,
                             size_t cap) {
    int i;
    for (i = 0; i < TR_MAX_ARGS; ++i) {
        const tr_arg_t *a = &call->arg[i];
        const tr_arg_t *origin = a->same_as >= 0 ? &call->arg[a->same_as] : a;
        size_t bytes = (size_t)a->count * tc_size(a->dtype);
        unsigned char *now;
        int same;
        if (!a->used || !a->read_back || a->count == 0) continue;
        now = (unsigned char *)tc_xmalloc(bytes + 16);
        REQUIRE_OK(gpuprim_buffer_download(q, made->b[i], 0, now, a->count));
        same = memcmp(now, origin->host, bytes) == 0;
        free(now);
        if (!same) {
            snprintf(why, cap, "argument %d (%s) was written", i, tc_dtype_name(a->dtype));
            return 0;
        }
    }
    return 1;
}

/* A data error the query cannot see: it reads no offsets, so a bad offset,
 * or a segment too long for the indices, fails the real call only. */
static int data_error(const tr_call_t *call, gpuprim_status_t in_query, gpuprim_status_t real) {
    return call->layout && !call->layout->uniform && in_query == GPUPRIM_SUCCESS &&
           real == GPUPRIM_ERROR_INVALID_ARGUMENT;
}

static void query_visit(const tr_call_t *call, void *user) {
    query_run_t *run = (query_run_t *)user;
    gpuprim_context_t q = pool_context();
    gpuprim_workspace_sizes_t sizes = sizes_init();
    unsigned char scalar[16], poison[16];
    char message[256] = "", why[160] = "";
    gpuprim_status_t in_query, real;
    uint64_t held = 0, after = 0, main_bytes = 0, side_bytes = 0;
    long allocations, frees;
    tr_made_t made;
    size_t i;
    tc_where("%s", call->label);
    run->calls++;
    tr_make(call, q, &made);
    memset(poison, 0xA5, sizeof poison);
    memcpy(scalar, poison, sizeof scalar);

    allocations = pool.allocations;
    frees = pool.frees;
    REQUIRE_OK(gpuprim_context_begin_workspace_query(q));
    in_query = tr_invoke(call, q, &made, scalar);
    if (in_query != GPUPRIM_SUCCESS) snprintf(message, sizeof message, "%s", gpuprim_context_last_error(q));
    CHECK_OK(gpuprim_context_end_workspace_query(q, &sizes));
    CHECKF(pool.allocations == allocations && pool.frees == frees,
           "the query called the allocator: %ld allocations, %ld frees", pool.allocations - allocations,
           pool.frees - frees);
    CHECKF(outputs_untouched(call, q, &made, why, sizeof why), "the query wrote an output: %s", why);
    CHECKF(memcmp(scalar, poison, sizeof scalar) == 0, "the query wrote the host result");
    CHECK(sizes.struct_size == sizeof sizes);
    if (in_query != GPUPRIM_SUCCESS) CHECK(sizes.main_bytes == 0 && sizes.side_bytes == 0 && !sizes.bounded);
    run->bounded += sizes.bounded != 0;

    /* The sizes held still: the real call must not grow the workspace. */
    CHECK_OK(gpuprim_context_reserve_workspace_sizes(q, &sizes, 1));
    CHECK_OK(gpuprim_context_get_workspace_size(q, &held));
    allocations = pool.allocations;
    real = tr_invoke(call, q, &made, scalar);
    CHECKF(real == in_query || data_error(call, in_query, real),
           "status %d (%s) in the query, %d (%s) for real: \"%s\"", (int)in_query,
           gpuprim_get_error_string(in_query), (int)real, gpuprim_get_error_string(real),
           real != GPUPRIM_SUCCESS ? gpuprim_context_last_error(q) : message);
    if (real != GPUPRIM_SUCCESS && real == in_query)
        CHECKF(strcmp(message, gpuprim_context_last_error(q)) == 0, "messages differ: \"%s\" in the query, \"%s\"",
               message, gpuprim_context_last_error(q));
    if (real == GPUPRIM_SUCCESS) {
        CHECK_OK(gpuprim_context_get_workspace_size(q, &after));
        CHECKF(pool.allocations == allocations && after == held,
               "the call grew a workspace reserved by the query's sizes (main %llu, side %llu): %llu -> %llu bytes",
               (unsigned long long)sizes.main_bytes, (unsigned long long)sizes.side_bytes, (unsigned long long)held,
               (unsigned long long)after);
        REQUIRE_OK(tq_largest_requests(q, &main_bytes, &side_bytes) == 0 ? GPUPRIM_SUCCESS : GPUPRIM_ERROR_INTERNAL);
        if (sizes.bounded)
            CHECKF(main_bytes <= sizes.main_bytes && side_bytes <= sizes.side_bytes,
                   "the call took main %llu, side %llu bytes; the query's bound is %llu, %llu",
                   (unsigned long long)main_bytes, (unsigned long long)side_bytes,
                   (unsigned long long)sizes.main_bytes, (unsigned long long)sizes.side_bytes);
        else
            CHECKF(main_bytes == sizes.main_bytes && side_bytes == sizes.side_bytes,
                   "the call took main %llu, side %llu bytes; the query said %llu, %llu",
                   (unsigned long long)main_bytes, (unsigned long long)side_bytes,
                   (unsigned long long)sizes.main_bytes, (unsigned long long)sizes.side_bytes);
    }

    /* The first buffer NULL: the same error in a query as outside one. */
    if (call->arg[0].used) {
        tr_made_t broken = made;
        gpuprim_status_t broken_in_query, broken_real;
        for (i = 0; i < TR_MAX_ARGS; ++i)
            if (i == 0 || call->arg[i].same_as == 0) broken.b[i] = NULL;
        REQUIRE_OK(gpuprim_context_begin_workspace_query(q));
        broken_in_query = tr_invoke(call, q, &broken, scalar);
        snprintf(message, sizeof message, "%s", gpuprim_context_last_error(q));
        CHECK_OK(gpuprim_context_end_workspace_query(q, &sizes));
        broken_real = tr_invoke(call, q, &broken, scalar);
        CHECKF(broken_in_query == broken_real, "first buffer NULL: status %d in the query, %d for real",
               (int)broken_in_query, (int)broken_real);
        if (broken_real != GPUPRIM_SUCCESS)
            CHECKF(strcmp(message, gpuprim_context_last_error(q)) == 0,
                   "first buffer NULL: \"%s\" in the query, \"%s\"", message, gpuprim_context_last_error(q));
    }
    tr_unmake(call, q, &made);
    REQUIRE_OK(gpuprim_context_destroy(q));
}

/* ---- the entry points' own rules ----------------------------------------- */

static void test_rules(gpuprim_context_t ctx) {
    gpuprim_workspace_sizes_t sizes = sizes_init(), single = sizes_init(), both = sizes_init();
    unsigned char wide[sizeof(gpuprim_workspace_sizes_t) + 16];
    gpuprim_workspace_sizes_t *newer = (gpuprim_workspace_sizes_t *)(void *)wide;
    gpuprim_buffer_t small = tc_buffer(ctx, GPUPRIM_DTYPE_U32, 1000), large = tc_buffer(ctx, GPUPRIM_DTYPE_U32, 300000);
    gpuprim_buffer_t made = NULL;
    uint32_t host[4] = {1, 2, 3, 4}, back[4] = {0, 0, 0, 0};
    uint64_t before = 0, after = 0, result = 0;
    size_t i;

    tc_where("begin twice, end without begin");
    CHECK_OK(gpuprim_context_begin_workspace_query(ctx));
    CHECK_STATUS(gpuprim_context_begin_workspace_query(ctx), GPUPRIM_ERROR_INVALID_ARGUMENT);
    CHECK_MESSAGE(ctx, "already open");
    CHECK_OK(gpuprim_context_end_workspace_query(ctx, &sizes));
    CHECK(sizes.main_bytes == 0 && sizes.side_bytes == 0 && sizes.bounded == 0);
    CHECK_STATUS(gpuprim_context_end_workspace_query(ctx, &sizes), GPUPRIM_ERROR_INVALID_ARGUMENT);
    CHECK_MESSAGE(ctx, "no workspace query is open");

    tc_where("sizes NULL or a bad struct_size end the query");
    CHECK_OK(gpuprim_context_begin_workspace_query(ctx));
    CHECK_STATUS(gpuprim_context_end_workspace_query(ctx, NULL), GPUPRIM_ERROR_NULL_POINTER);
    CHECK_MESSAGE(ctx, "sizes");
    CHECK_STATUS(gpuprim_context_end_workspace_query(ctx, &sizes), GPUPRIM_ERROR_INVALID_ARGUMENT);
    CHECK_OK(gpuprim_context_begin_workspace_query(ctx));
    sizes.struct_size = 8;
    sizes.main_bytes = 77;
    CHECK_STATUS(gpuprim_context_end_workspace_query(ctx, &sizes), GPUPRIM_ERROR_INVALID_ARGUMENT);
    CHECK_MESSAGE(ctx, "struct_size = 8");
    CHECK(sizes.main_bytes == 77); /* nothing written */
    CHECK_STATUS(gpuprim_context_end_workspace_query(ctx, &sizes), GPUPRIM_ERROR_INVALID_ARGUMENT);
    sizes = sizes_init();

    tc_where("a newer header's larger struct");
    memset(wide, 0xEE, sizeof wide);
    newer->struct_size = sizeof wide;
    CHECK_OK(gpuprim_context_begin_workspace_query(ctx));
    CHECK_OK(gpuprim_sort(ctx, large, NULL, large, NULL, GPUPRIM_ORDER_ASCENDING));
    CHECK_OK(gpuprim_context_end_workspace_query(ctx, newer));
    CHECK(newer->struct_size == sizeof wide);
    for (i = sizeof(gpuprim_workspace_sizes_t); i < sizeof wide; ++i) CHECK(wide[i] == 0);
    CHECK_OK(gpuprim_context_reserve_workspace_sizes(ctx, newer, 0));
    wide[sizeof wide - 1] = 1;
    CHECK_STATUS(gpuprim_context_reserve_workspace_sizes(ctx, newer, 0), GPUPRIM_ERROR_INVALID_ARGUMENT);
    CHECK_MESSAGE(ctx, "is not zero");

    tc_where("reserve_workspace_sizes arguments");
    CHECK_STATUS(gpuprim_context_reserve_workspace_sizes(ctx, NULL, 1), GPUPRIM_ERROR_NULL_POINTER);
    sizes.struct_size = 0;
    CHECK_STATUS(gpuprim_context_reserve_workspace_sizes(ctx, &sizes, 1), GPUPRIM_ERROR_INVALID_ARGUMENT);
    CHECK_MESSAGE(ctx, "struct_size = 0");
    sizes.struct_size = 8192;
    CHECK_STATUS(gpuprim_context_reserve_workspace_sizes(ctx, &sizes, 1), GPUPRIM_ERROR_INVALID_ARGUMENT);
    sizes = sizes_init();
    {
        /* The field where the struct had padding until 0.4.0: refused unless 0, the workspace unchanged. */
        uint64_t before = 0, after = 0;
        CHECK_OK(gpuprim_context_get_workspace_size(ctx, &before));
        sizes.main_bytes = before + (8u << 20);
        sizes.reserved = 1;
        CHECK_STATUS(gpuprim_context_reserve_workspace_sizes(ctx, &sizes, 0), GPUPRIM_ERROR_INVALID_ARGUMENT);
        CHECK_MESSAGE(ctx, "sizes->reserved = 1");
        CHECK_OK(gpuprim_context_get_workspace_size(ctx, &after));
        CHECK(after == before);
        sizes = sizes_init();
    }

    tc_where("the query's sizes are the largest over its calls");
    CHECK_OK(gpuprim_context_begin_workspace_query(ctx));
    CHECK_OK(gpuprim_sort(ctx, large, NULL, large, NULL, GPUPRIM_ORDER_ASCENDING));
    CHECK_OK(gpuprim_context_end_workspace_query(ctx, &single));
    CHECK(single.main_bytes > 0);
    CHECK_OK(gpuprim_context_begin_workspace_query(ctx));
    CHECK_OK(gpuprim_sort(ctx, small, NULL, small, NULL, GPUPRIM_ORDER_ASCENDING));
    CHECK_OK(gpuprim_sort(ctx, large, NULL, large, NULL, GPUPRIM_ORDER_DESCENDING));
    CHECK_OK(gpuprim_sort(ctx, small, NULL, small, NULL, GPUPRIM_ORDER_ASCENDING));
    CHECK_OK(gpuprim_context_end_workspace_query(ctx, &both));
    CHECK(both.main_bytes == single.main_bytes && both.side_bytes == single.side_bytes);
    /* A new query starts from nothing. */
    CHECK_OK(gpuprim_context_begin_workspace_query(ctx));
    CHECK_OK(gpuprim_context_end_workspace_query(ctx, &sizes));
    CHECK(sizes.main_bytes == 0 && sizes.side_bytes == 0);

    tc_where("buffer calls during a query");
    CHECK_OK(gpuprim_context_begin_workspace_query(ctx));
    CHECK_OK(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U32, 4, &made));
    CHECK_OK(gpuprim_buffer_upload(ctx, made, 0, host, 4));
    CHECK_OK(gpuprim_context_synchronize(ctx));
    CHECK_OK(gpuprim_buffer_download(ctx, made, 0, back, 4));
    CHECK(memcmp(host, back, sizeof host) == 0);
    CHECK_OK(gpuprim_buffer_destroy(ctx, made));

    /* Without a communicator a rank cannot reach the others: that early
     * return comes first (the header's rules); the refusal of an open
     * query, which every rank then shares, is test_distributed's. Either
     * way nothing is measured and the query stays open. */
    tc_where("distributed calls during a query, no communicator");
    CHECK_STATUS(gpuprim_distributed_reduce(ctx, GPUPRIM_OP_SUM, small, &result), GPUPRIM_ERROR_INVALID_ARGUMENT);
    CHECK_MESSAGE(ctx, "no communicator");
    CHECK_STATUS(gpuprim_distributed_sort(ctx, small, NULL, small, NULL, NULL), GPUPRIM_ERROR_INVALID_ARGUMENT);
    CHECK_MESSAGE(ctx, "no communicator");
    CHECK_OK(gpuprim_context_end_workspace_query(ctx, &sizes));
    CHECK(sizes.main_bytes == 0 && sizes.side_bytes == 0);

    tc_where("reserve_workspace_sizes grows and holds");
    CHECK_OK(gpuprim_context_release_workspace(ctx));
    sizes = sizes_init();
    sizes.main_bytes = (uint64_t)3 << 20;
    sizes.side_bytes = (uint64_t)1 << 20;
    CHECK_OK(gpuprim_context_reserve_workspace_sizes(ctx, &sizes, 1));
    CHECK_OK(gpuprim_context_get_workspace_size(ctx, &before));
    CHECK(before >= ((uint64_t)4 << 20));
    /* Held still: a call that needs more fails, with nothing changed. */
    CHECK_STATUS(gpuprim_sort(ctx, large, NULL, large, NULL, GPUPRIM_ORDER_ASCENDING),
                 single.main_bytes > sizes.main_bytes ? GPUPRIM_ERROR_OUT_OF_MEMORY : GPUPRIM_SUCCESS);
    /* 0: each block as it is. */
    sizes.main_bytes = sizes.side_bytes = 0;
    CHECK_OK(gpuprim_context_reserve_workspace_sizes(ctx, &sizes, 1));
    CHECK_OK(gpuprim_context_get_workspace_size(ctx, &after));
    CHECK(after == before);
    /* A growth that cannot be: OUT_OF_MEMORY, the workspace as it was. */
    sizes.main_bytes = (uint64_t)1 << 62;
    CHECK_STATUS(gpuprim_context_reserve_workspace_sizes(ctx, &sizes, 0), GPUPRIM_ERROR_OUT_OF_MEMORY);
    CHECK_OK(gpuprim_context_get_workspace_size(ctx, &after));
    CHECK(after == before);
    sizes.main_bytes = 0;
    sizes.side_bytes = (uint64_t)1 << 62;
    CHECK_STATUS(gpuprim_context_reserve_workspace_sizes(ctx, &sizes, 0), GPUPRIM_ERROR_OUT_OF_MEMORY);
    CHECK_OK(gpuprim_context_get_workspace_size(ctx, &after));
    CHECK(after == before);
    /* Let go: the call grows it again. */
    CHECK_OK(gpuprim_context_reserve_workspace(ctx, 0, 0));
    CHECK_OK(gpuprim_sort(ctx, large, NULL, large, NULL, GPUPRIM_ORDER_ASCENDING));

    CHECK_OK(gpuprim_buffer_destroy(ctx, small));
    CHECK_OK(gpuprim_buffer_destroy(ctx, large));
}

int main(int argc, char **argv) {
    gpuprim_context_t ctx = tc_init("test_workspace_query");
    query_run_t run;
    gpuprim_buffer_t memory = NULL;
    void *data = NULL;
    if (argc > 1 && strcmp(argv[1], "--rules") == 0) {
        test_rules(ctx);
        return tc_finish();
    }
    REQUIRE_OK(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U8, POOL_BYTES, &memory));
    REQUIRE_OK(gpuprim_buffer_get_info(ctx, memory, NULL, NULL, &data));
    memset(&pool, 0, sizeof pool);
    pool.base = (unsigned char *)data;
    memset(&run, 0, sizeof run);
    tr_for_named_cases(argc, argv, TR_PLAN_SMALL, query_visit, &run, &run.calls);
    tr_for_named_cases(argc, argv, TR_PLAN_BACKENDS, query_visit, &run, &run.calls);
    printf("test_workspace_query: %ld calls measured, %ld of them bounded\n", run.calls, run.bounded);
    REQUIRE_OK(gpuprim_buffer_destroy(ctx, memory));
    return tc_finish();
}
