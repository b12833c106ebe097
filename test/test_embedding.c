/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Embedding (issue 39), on the backend the default context picks: the host's
 * allocator (options.allocate / .deallocate) gives every block of a
 * context's memory, is given each back with its size, and its failures fail
 * calls with nothing changed; the workspace held still
 * (gpuprim_context_reserve_workspace) neither grows nor moves.
 *
 * The host's allocator here is a pool, as a database's buffer manager would
 * be: one buffer of a second, ordinary context, carved into 256-byte aligned
 * blocks and never reused, so every block the library took and gave back
 * can be checked afterwards.
 */
#include "test_common.h"

#define POOL_BYTES (uint64_t)(192u << 20)
#define POOL_BLOCKS 1024

typedef struct pool_block {
    unsigned char *memory;
    uint64_t bytes;
    int live;
} pool_block_t;

typedef struct pool {
    unsigned char *base;
    uint64_t used;
    pool_block_t blocks[POOL_BLOCKS];
    int block_count;
    long allocations; /* successful */
    long attempts;
    long frees;
    long bad_frees; /* unknown block, a second free, or the wrong size */
    uint64_t live_bytes;
    long fail_from_attempt; /* -1: never; else attempts numbered from here fail */
    int misalign_next;
    void *stream;       /* the stream every callback must be given */
    long wrong_streams; /* callbacks given another */
} pool_t;

static int pool_allocate(void *user, uint64_t bytes, void *stream, void **memory) {
    pool_t *pool = (pool_t *)user;
    uint64_t start = (pool->used + 255u) & ~(uint64_t)255u;
    long attempt = pool->attempts++;
    if (stream != pool->stream) pool->wrong_streams++;
    if (pool->fail_from_attempt >= 0 && attempt >= pool->fail_from_attempt) return 12;
    if (pool->misalign_next) start += 16;
    if (bytes > POOL_BYTES - start || pool->block_count == POOL_BLOCKS) return 1;
    pool->blocks[pool->block_count].memory = pool->base + start;
    pool->blocks[pool->block_count].bytes = bytes;
    pool->blocks[pool->block_count].live = 1;
    pool->block_count++;
    pool->used = start + bytes;
    pool->allocations++;
    pool->live_bytes += bytes;
    pool->misalign_next = 0;
    *memory = pool->base + start;
    return 0;
}

static void pool_deallocate(void *user, void *memory, uint64_t bytes, void *stream) {
    pool_t *pool = (pool_t *)user;
    int i;
    if (stream != pool->stream) pool->wrong_streams++;
    for (i = 0; i < pool->block_count; ++i) {
        if (pool->blocks[i].memory != memory || !pool->blocks[i].live) continue;
        if (pool->blocks[i].bytes != bytes) pool->bad_frees++;
        pool->blocks[i].live = 0;
        pool->live_bytes -= pool->blocks[i].bytes;
        pool->frees++;
        return;
    }
    pool->bad_frees++;
}

static int in_pool(const pool_t *pool, const void *data, uint64_t bytes) {
    const unsigned char *p = (const unsigned char *)data;
    return p >= pool->base && p + bytes <= pool->base + POOL_BYTES;
}

/* The pool's memory: a buffer of `owner`, an ordinary context. */
static gpuprim_buffer_t pool_open(gpuprim_context_t owner, pool_t *pool) {
    gpuprim_buffer_t memory = NULL;
    void *data = NULL;
    memset(pool, 0, sizeof *pool);
    pool->fail_from_attempt = -1;
    REQUIRE_OK(gpuprim_buffer_create(owner, GPUPRIM_DTYPE_U8, POOL_BYTES, &memory));
    REQUIRE_OK(gpuprim_buffer_get_info(owner, memory, NULL, NULL, &data));
    pool->base = (unsigned char *)data;
    return memory;
}

/* A context whose memory comes from `pool`; NULL when creation failed (the
 * status in *status). */
static gpuprim_context_t pool_context(pool_t *pool, gpuprim_status_t *status, char *message, size_t capacity) {
    gpuprim_context_options_t options;
    gpuprim_context_t made = NULL;
    void *stream = NULL;
    gpuprim_context_options_init(&options);
    options.allocate = pool_allocate;
    options.deallocate = pool_deallocate;
    options.allocator_user = pool;
    /* The CUDA context's own stream is not known before it exists: the
     * callbacks made during creation are checked against it afterwards. */
    pool->stream = NULL;
    *status = gpuprim_context_create(&options, &made, message, capacity);
    if (*status != GPUPRIM_SUCCESS) return NULL;
    REQUIRE_OK(gpuprim_context_get_stream(made, &stream));
    if (stream) {
        /* Creation's callbacks (the CUDA counters) saw the real stream. */
        pool->wrong_streams -= pool->attempts;
        pool->stream = stream;
    }
    return made;
}

static void test_options(void) {
    gpuprim_context_options_t options;
    gpuprim_context_t made = (gpuprim_context_t)(uintptr_t)1;
    char message[512] = "";
    pool_t pool;
    memset(&pool, 0, sizeof pool);
    snprintf(tc.where, sizeof tc.where, "options: one callback without the other");
    gpuprim_context_options_init(&options);
    CHECK(options.allocate == NULL && options.deallocate == NULL && options.allocator_user == NULL);
    options.allocate = pool_allocate;
    CHECK_STATUS(gpuprim_context_create(&options, &made, message, sizeof message), GPUPRIM_ERROR_INVALID_ARGUMENT);
    CHECKF(strstr(message, "options->allocate is set but options->deallocate is NULL") != NULL, "message: %s", message);
    CHECK(made == NULL);
    options.allocate = NULL;
    options.deallocate = pool_deallocate;
    CHECK_STATUS(gpuprim_context_create(&options, &made, message, sizeof message), GPUPRIM_ERROR_INVALID_ARGUMENT);
    CHECKF(strstr(message, "options->deallocate is set but options->allocate is NULL") != NULL, "message: %s",
           message);
    CHECK(pool.attempts == 0);
}

/* Every block of a mixed workload comes from the pool and goes back to it,
 * each with its size, and the results are right. */
static void test_every_block_from_the_host(gpuprim_context_t owner, int cuda) {
    enum { N = 200003, ROWS = 7 };
    pool_t pool;
    gpuprim_buffer_t memory = pool_open(owner, &pool);
    gpuprim_status_t status;
    char message[512] = "";
    gpuprim_context_t c = pool_context(&pool, &status, message, sizeof message);
    gpuprim_buffer_t keys, values, keys_out, values_out, offsets, sums, kept, top;
    uint32_t *host_keys = (uint32_t *)tc_xmalloc(N * sizeof(uint32_t));
    uint32_t *host_values = (uint32_t *)tc_xmalloc(N * sizeof(uint32_t));
    int64_t host_offsets[ROWS + 1];
    uint64_t workspace = 0, kept_count = 0, i, buffers_bytes, before_release;
    gpuprim_segments_t segments;
    long creation_blocks;
    void *data;
    int r;
    snprintf(tc.where, sizeof tc.where, "a mixed workload on the host's allocator");
    CHECKF(c != NULL, "gpuprim_context_create with a pool: %d: %s", (int)status, message);
    if (!c) {
        CHECK_OK(gpuprim_buffer_destroy(owner, memory));
        return;
    }
    creation_blocks = pool.allocations;
    /* CUDA: the context's zeroed counters; CPU: nothing at creation. */
    CHECKF(cuda ? creation_blocks == 1 : creation_blocks == 0, "%ld blocks at creation", creation_blocks);
    for (i = 0; i < N; ++i) {
        host_keys[i] = (uint32_t)tc_rand() % 1000u;
        host_values[i] = (uint32_t)i;
    }
    for (r = 0; r <= ROWS; ++r) host_offsets[r] = (int64_t)((uint64_t)N * (uint64_t)r / ROWS);
    keys = tc_buffer_from(c, GPUPRIM_DTYPE_U32, host_keys, N);
    values = tc_buffer_from(c, GPUPRIM_DTYPE_U32, host_values, N);
    offsets = tc_buffer_from(c, GPUPRIM_DTYPE_I64, host_offsets, ROWS + 1);
    REQUIRE_OK(gpuprim_buffer_create(c, GPUPRIM_DTYPE_U32, N, &keys_out));
    REQUIRE_OK(gpuprim_buffer_create(c, GPUPRIM_DTYPE_U32, N, &values_out));
    REQUIRE_OK(gpuprim_buffer_create(c, GPUPRIM_DTYPE_U32, ROWS, &sums));
    REQUIRE_OK(gpuprim_buffer_create(c, GPUPRIM_DTYPE_U32, N, &kept));
    REQUIRE_OK(gpuprim_buffer_create(c, GPUPRIM_DTYPE_U32, ROWS * 100, &top));
    buffers_bytes = (uint64_t)N * 4 * 5 + (ROWS + 1) * 8 + ROWS * 4 + ROWS * 100 * 4;
    {
        gpuprim_buffer_t all[8];
        all[0] = keys, all[1] = values, all[2] = offsets, all[3] = keys_out, all[4] = values_out, all[5] = sums,
        all[6] = kept, all[7] = top;
        for (r = 0; r < 8; ++r) {
            uint64_t count = 0;
            gpuprim_dtype_t dtype;
            CHECK_OK(gpuprim_buffer_get_info(c, all[r], &dtype, &count, &data));
            CHECKF(in_pool(&pool, data, count * tc_size(dtype)), "buffer %d lies outside the pool", r);
        }
    }

    /* Calls that take workspace: sort pairs, a segmented sort and reduce on
     * CSR offsets, top-k, select with the count to the host, group-by. */
    CHECK_OK(gpuprim_sort(c, keys, values, keys_out, values_out, GPUPRIM_ORDER_ASCENDING));
    {
        uint32_t *sorted = (uint32_t *)tc_download(c, keys_out, GPUPRIM_DTYPE_U32, N);
        uint32_t *order = (uint32_t *)tc_download(c, values_out, GPUPRIM_DTYPE_U32, N);
        int ok = 1;
        for (i = 0; i < N && ok; ++i) {
            if (host_keys[order[i]] != sorted[i]) ok = 0;
            if (i > 0 && (sorted[i - 1] > sorted[i] || (sorted[i - 1] == sorted[i] && order[i - 1] > order[i])))
                ok = 0;
        }
        CHECKF(ok, "sort pairs on the pool's memory: wrong at %llu", (unsigned long long)(i - 1));
        free(sorted);
        free(order);
    }
    gpuprim_segments_init_offsets(&segments, offsets);
    CHECK_OK(gpuprim_segmented_sort(c, &segments, keys, values, keys_out, values_out, NULL));
    CHECK_OK(gpuprim_segmented_reduce(c, GPUPRIM_OP_SUM, &segments, keys, sums));
    {
        uint32_t *got = (uint32_t *)tc_download(c, sums, GPUPRIM_DTYPE_U32, ROWS);
        for (r = 0; r < ROWS; ++r) {
            uint32_t want = 0;
            for (i = (uint64_t)host_offsets[r]; i < (uint64_t)host_offsets[r + 1]; ++i) want += host_keys[i];
            CHECKF(got[r] == want, "segmented sum of row %d: %llu, want %llu", r, (unsigned long long)got[r],
                   (unsigned long long)want);
        }
        free(got);
    }
    CHECK_OK(gpuprim_segmented_topk(c, &segments, keys, 100, GPUPRIM_ORDER_DESCENDING, top, NULL));
    {
        const uint32_t below = 10;
        gpuprim_predicate_t keep;
        memset(&keep, 0, sizeof keep);
        keep.kind = GPUPRIM_KEEP_LESS;
        keep.scalar = &below;
        CHECK_OK(gpuprim_select(c, keys, NULL, &keep, kept, NULL, NULL, &kept_count, NULL));
        {
            uint64_t want = 0;
            for (i = 0; i < N; ++i) want += host_keys[i] < 10;
            CHECKF(kept_count == want, "select kept %llu, want %llu", (unsigned long long)kept_count,
                   (unsigned long long)want);
        }
    }
    CHECK_OK(gpuprim_context_get_workspace_size(c, &workspace));
    CHECKF(workspace > 0, "the workload took no workspace");
    CHECKF(pool.live_bytes >= buffers_bytes + workspace, "pool holds %llu bytes, buffers %llu + workspace %llu",
           (unsigned long long)pool.live_bytes, (unsigned long long)buffers_bytes, (unsigned long long)workspace);

    /* Given back: a buffer, the workspace, then everything at destroy. */
    before_release = pool.live_bytes;
    CHECK_OK(gpuprim_buffer_destroy(c, kept));
    CHECKF(pool.live_bytes + (uint64_t)N * 4 <= before_release, "destroying a buffer gave back %llu bytes",
           (unsigned long long)(before_release - pool.live_bytes));
    before_release = pool.live_bytes;
    CHECK_OK(gpuprim_context_release_workspace(c));
    CHECKF(before_release - pool.live_bytes >= workspace, "release gave back %llu of %llu workspace bytes",
           (unsigned long long)(before_release - pool.live_bytes), (unsigned long long)workspace);
    CHECK_OK(gpuprim_context_destroy(c));
    CHECKF(pool.live_bytes == 0, "%llu bytes not given back at destroy", (unsigned long long)pool.live_bytes);
    CHECKF(pool.frees == pool.allocations, "%ld blocks taken, %ld given back", pool.allocations, pool.frees);
    CHECKF(pool.bad_frees == 0, "%ld frees of unknown blocks or with the wrong size", pool.bad_frees);
    CHECKF(pool.wrong_streams == 0, "%ld callbacks got another stream than the context's", pool.wrong_streams);
    CHECK_OK(gpuprim_buffer_destroy(owner, memory));
    free(host_keys);
    free(host_values);
}

/* The host's allocator fails: OUT_OF_MEMORY, nothing changed, the context
 * usable; a misaligned block: INVALID_ARGUMENT, the block given back. */
static void test_host_allocator_failures(gpuprim_context_t owner, int cuda) {
    enum { N = 100000 };
    pool_t pool;
    gpuprim_buffer_t memory = pool_open(owner, &pool);
    gpuprim_status_t status;
    char message[512] = "";
    gpuprim_context_t c;
    gpuprim_buffer_t keys, out, spare = NULL;
    uint32_t *host = (uint32_t *)tc_xmalloc(N * sizeof(uint32_t));
    uint32_t *poison = (uint32_t *)tc_xmalloc(N * sizeof(uint32_t));
    uint64_t i, workspace = 0, grown = 0;
    long frees_before, attempts_before;

    snprintf(tc.where, sizeof tc.where, "the host's allocator fails at creation");
    pool.fail_from_attempt = 0;
    c = pool_context(&pool, &status, message, sizeof message);
    if (cuda) {
        CHECK_STATUS(status, GPUPRIM_ERROR_OUT_OF_MEMORY);
        CHECKF(strstr(message, "options.allocate") != NULL, "message: %s", message);
        CHECK(c == NULL && pool.live_bytes == 0);
    } else {
        CHECK_OK(status); /* nothing to allocate at creation */
        if (c) CHECK_OK(gpuprim_context_destroy(c));
    }
    pool.fail_from_attempt = -1;
    c = pool_context(&pool, &status, message, sizeof message);
    if (!c) {
        CHECKF(0, "gpuprim_context_create with a pool: %d: %s", (int)status, message);
        CHECK_OK(gpuprim_buffer_destroy(owner, memory));
        return;
    }

    for (i = 0; i < N; ++i) host[i] = (uint32_t)tc_rand(), poison[i] = 0xDEADBEEFu;
    keys = tc_buffer_from(c, GPUPRIM_DTYPE_U32, host, N);
    out = tc_buffer_from(c, GPUPRIM_DTYPE_U32, poison, N);

    snprintf(tc.where, sizeof tc.where, "the host's allocator fails a buffer");
    pool.fail_from_attempt = pool.attempts;
    CHECK_STATUS(gpuprim_buffer_create(c, GPUPRIM_DTYPE_U32, 10, &spare), GPUPRIM_ERROR_OUT_OF_MEMORY);
    CHECK_MESSAGE(c, "options.allocate");
    CHECK(spare == NULL);

    snprintf(tc.where, sizeof tc.where, "the host's allocator fails the workspace");
    CHECK_STATUS(gpuprim_sort(c, keys, NULL, out, NULL, GPUPRIM_ORDER_ASCENDING), GPUPRIM_ERROR_OUT_OF_MEMORY);
    CHECK_MESSAGE(c, "options.allocate");
    CHECK_BUFFER_EQ(c, out, GPUPRIM_DTYPE_U32, poison, N, "the output after a failed sort");
    CHECK_BUFFER_EQ(c, keys, GPUPRIM_DTYPE_U32, host, N, "the input after a failed sort");

    snprintf(tc.where, sizeof tc.where, "the host's allocator works again");
    pool.fail_from_attempt = -1;
    CHECK_OK(gpuprim_sort(c, keys, NULL, out, NULL, GPUPRIM_ORDER_ASCENDING));
    CHECK_OK(gpuprim_context_get_workspace_size(c, &workspace));

    /* A reserve that cannot grow the workspace leaves its block where it
     * was, held or not: never given back first (a held block is one a CUDA
     * graph may hold). */
    for (i = 0; i < 2; ++i) {
        snprintf(tc.where, sizeof tc.where, "the host's allocator fails a reserve that grows the workspace, %s",
                 i ? "held" : "not held");
        CHECK_OK(gpuprim_context_reserve_workspace(c, 0, (int)i));
        frees_before = pool.frees;
        pool.fail_from_attempt = pool.attempts;
        CHECK_STATUS(gpuprim_context_reserve_workspace(c, workspace + (1u << 20), 1), GPUPRIM_ERROR_OUT_OF_MEMORY);
        pool.fail_from_attempt = -1;
        CHECKF(pool.frees == frees_before, "the workspace's block was given back (%ld frees)",
               pool.frees - frees_before);
        CHECK_OK(gpuprim_context_get_workspace_size(c, &grown));
        CHECK(grown == workspace);
        attempts_before = pool.attempts;
        CHECK_OK(gpuprim_sort(c, keys, NULL, out, NULL, GPUPRIM_ORDER_DESCENDING));
        CHECKF(pool.attempts == attempts_before, "the sort after it allocated (%ld attempts)",
               pool.attempts - attempts_before);
    }
    CHECK_OK(gpuprim_context_reserve_workspace(c, 0, 0));

    snprintf(tc.where, sizeof tc.where, "a misaligned block");
    frees_before = pool.frees;
    pool.misalign_next = 1;
    CHECK_STATUS(gpuprim_buffer_create(c, GPUPRIM_DTYPE_U32, 10, &spare), GPUPRIM_ERROR_INVALID_ARGUMENT);
    CHECK_MESSAGE(c, "not aligned to 256 bytes");
    CHECK(spare == NULL);
    CHECKF(pool.frees == frees_before + 1, "the misaligned block was not given back (%ld frees)",
           pool.frees - frees_before);

    CHECK_OK(gpuprim_buffer_destroy(c, keys));
    CHECK_OK(gpuprim_buffer_destroy(c, out));
    CHECK_OK(gpuprim_context_destroy(c));
    CHECKF(pool.live_bytes == 0 && pool.bad_frees == 0 && pool.wrong_streams == 0,
           "after destroy: %llu bytes live, %ld bad frees, %ld wrong streams", (unsigned long long)pool.live_bytes,
           pool.bad_frees, pool.wrong_streams);
    CHECK_OK(gpuprim_buffer_destroy(owner, memory));
    free(host);
    free(poison);
}

/* The workspace held still: no growth, no move, a clear OUT_OF_MEMORY; a
 * reserve that grows it; release lets go. */
static void test_workspace_held_still(gpuprim_context_t c) {
    enum { N = 150000 };
    uint32_t *host = (uint32_t *)tc_xmalloc(4 * N * sizeof(uint32_t));
    uint32_t *poison = (uint32_t *)tc_xmalloc(4 * N * sizeof(uint32_t));
    gpuprim_buffer_t small_keys, small_values, big_keys, big_values, small_out, big_out, small_values_out, values_out;
    uint64_t held = 0, now = 0, i;
    for (i = 0; i < 4 * N; ++i) host[i] = (uint32_t)tc_rand(), poison[i] = 0xA5A5A5A5u;
    small_keys = tc_buffer_from(c, GPUPRIM_DTYPE_U32, host, N);
    small_values = tc_buffer_from(c, GPUPRIM_DTYPE_U32, host, N);
    big_keys = tc_buffer_from(c, GPUPRIM_DTYPE_U32, host, 4 * N);
    big_values = tc_buffer_from(c, GPUPRIM_DTYPE_U32, host, 4 * N);
    small_out = tc_buffer_from(c, GPUPRIM_DTYPE_U32, poison, N);
    big_out = tc_buffer_from(c, GPUPRIM_DTYPE_U32, poison, 4 * N);
    REQUIRE_OK(gpuprim_buffer_create(c, GPUPRIM_DTYPE_U32, N, &small_values_out));
    REQUIRE_OK(gpuprim_buffer_create(c, GPUPRIM_DTYPE_U32, 4 * N, &values_out));

    snprintf(tc.where, sizeof tc.where, "workspace: warm up, then hold still");
    CHECK_OK(gpuprim_context_release_workspace(c));
    CHECK_OK(gpuprim_sort(c, small_keys, small_values, small_out, small_values_out, GPUPRIM_ORDER_ASCENDING));
    CHECK_OK(gpuprim_context_get_workspace_size(c, &held));
    CHECKF(held > 0, "sort pairs of %d keys took no workspace", N);
    CHECK_OK(gpuprim_context_reserve_workspace(c, 0, 1));
    CHECK_OK(gpuprim_context_get_workspace_size(c, &now));
    CHECK(now == held);
    CHECK_OK(gpuprim_sort(c, small_keys, small_values, small_out, small_values_out, GPUPRIM_ORDER_DESCENDING));

    snprintf(tc.where, sizeof tc.where, "workspace held still: a call that needs more");
    CHECK_STATUS(gpuprim_sort(c, big_keys, big_values, big_out, values_out, GPUPRIM_ORDER_ASCENDING),
                 GPUPRIM_ERROR_OUT_OF_MEMORY);
    CHECK_MESSAGE(c, "held still");
    CHECK_BUFFER_EQ(c, big_out, GPUPRIM_DTYPE_U32, poison, 4 * N, "the output of a refused sort");
    CHECK_OK(gpuprim_context_get_workspace_size(c, &now));
    CHECK(now == held);

    snprintf(tc.where, sizeof tc.where, "workspace: a reserve that grows it, held");
    CHECK_OK(gpuprim_context_reserve_workspace(c, 64u << 20, 1));
    CHECK_OK(gpuprim_context_get_workspace_size(c, &now));
    CHECKF(now >= (64u << 20), "reserved 64 MiB, holds %llu bytes", (unsigned long long)now);
    CHECK_OK(gpuprim_sort(c, big_keys, big_values, big_out, values_out, GPUPRIM_ORDER_ASCENDING));
    held = now;
    CHECK_OK(gpuprim_context_get_workspace_size(c, &now));
    CHECK(now == held);

    snprintf(tc.where, sizeof tc.where, "workspace: a reserve past any memory keeps the hold");
    CHECK_STATUS(gpuprim_context_reserve_workspace(c, UINT64_MAX / 2, 1), GPUPRIM_ERROR_OUT_OF_MEMORY);
    CHECK_OK(gpuprim_context_get_workspace_size(c, &now));
    CHECK(now == held);
    CHECK_OK(gpuprim_context_release_workspace(c)); /* lets go */
    CHECK_OK(gpuprim_context_get_workspace_size(c, &now));
    CHECK(now == 0);
    CHECK_OK(gpuprim_sort(c, big_keys, big_values, big_out, values_out, GPUPRIM_ORDER_ASCENDING));

    snprintf(tc.where, sizeof tc.where, "workspace: fix = 0 lets go");
    CHECK_OK(gpuprim_context_reserve_workspace(c, 0, 1));
    CHECK_OK(gpuprim_context_release_workspace(c));
    CHECK_OK(gpuprim_sort(c, small_keys, small_values, small_out, small_values_out, GPUPRIM_ORDER_ASCENDING));
    CHECK_OK(gpuprim_context_reserve_workspace(c, 0, 1));
    CHECK_STATUS(gpuprim_sort(c, big_keys, big_values, big_out, values_out, GPUPRIM_ORDER_ASCENDING),
                 GPUPRIM_ERROR_OUT_OF_MEMORY);
    CHECK_OK(gpuprim_context_reserve_workspace(c, 0, 0));
    CHECK_OK(gpuprim_sort(c, big_keys, big_values, big_out, values_out, GPUPRIM_ORDER_ASCENDING));
    CHECK_OK(gpuprim_context_release_workspace(c));

    CHECK_STATUS(gpuprim_context_reserve_workspace(NULL, 0, 1), GPUPRIM_ERROR_NULL_POINTER);
    CHECK_STATUS(gpuprim_context_get_stream(c, NULL), GPUPRIM_ERROR_NULL_POINTER);
    {
        gpuprim_buffer_t all[8];
        int b;
        all[0] = small_keys, all[1] = small_values, all[2] = big_keys, all[3] = big_values, all[4] = small_out,
        all[5] = big_out, all[6] = values_out, all[7] = small_values_out;
        for (b = 0; b < 8; ++b) CHECK_OK(gpuprim_buffer_destroy(c, all[b]));
    }
    free(host);
    free(poison);
}

/* A segmented call held to the workspace of a shorter long segment: many
 * short segments (the networks, or a block's select) and one long one whose
 * sort or select needs more than the held workspace. The call must fail
 * before it writes anything: the CUDA drivers take the long segment's
 * workspace before they write the short ones (they wrote them first). */
static void test_long_segment_held(gpuprim_context_t c, int cuda, int topk) {
    enum { SHORT = 2000, SHORT_LENGTH = 50, K = 16 };
    const uint64_t warm_long = 9000, big_long = 3000000;
    const uint64_t n = (uint64_t)SHORT * SHORT_LENGTH + big_long;
    const uint64_t slots = topk ? (uint64_t)(SHORT + 1) * K : n;
    uint32_t *keys = (uint32_t *)tc_xmalloc(n * sizeof(uint32_t));
    uint32_t *poison = (uint32_t *)tc_xmalloc(slots * sizeof(uint32_t));
    uint64_t offsets[SHORT + 2], i, held = 0, now = 0;
    int64_t *index_poison = (int64_t *)tc_xmalloc(slots * sizeof(int64_t));
    gpuprim_buffer_t keys_in, out, indices, warm_offsets, big_offsets;
    gpuprim_segments_t warm, big;
    gpuprim_status_t status;

    for (i = 0; i < n; ++i) keys[i] = (uint32_t)tc_rand();
    for (i = 0; i < slots; ++i) poison[i] = 0xA5A5A5A5u, index_poison[i] = -7;
    for (i = 0; i <= SHORT; ++i) offsets[i] = i * SHORT_LENGTH;
    offsets[SHORT + 1] = offsets[SHORT] + warm_long;
    warm_offsets = tc_buffer_from(c, GPUPRIM_DTYPE_U64, offsets, SHORT + 2);
    offsets[SHORT + 1] = offsets[SHORT] + big_long;
    big_offsets = tc_buffer_from(c, GPUPRIM_DTYPE_U64, offsets, SHORT + 2);
    gpuprim_segments_init_offsets(&warm, warm_offsets);
    gpuprim_segments_init_offsets(&big, big_offsets);
    keys_in = tc_buffer_from(c, GPUPRIM_DTYPE_U32, keys, n);
    out = tc_buffer_from(c, GPUPRIM_DTYPE_U32, poison, slots);
    indices = tc_buffer_from(c, GPUPRIM_DTYPE_I64, index_poison, slots);

    tc_where("workspace held at a %llu-key segment's need, then a %s of a %llu-key segment",
             (unsigned long long)warm_long, topk ? "segmented top-k" : "segmented sort", (unsigned long long)big_long);
    CHECK_OK(gpuprim_context_release_workspace(c));
    if (topk) CHECK_OK(gpuprim_segmented_topk(c, &warm, keys_in, K, GPUPRIM_ORDER_DESCENDING, out, indices));
    else CHECK_OK(gpuprim_segmented_sort(c, &warm, keys_in, NULL, out, NULL, NULL));
    CHECK_OK(gpuprim_context_get_workspace_size(c, &held));
    CHECK_OK(gpuprim_context_reserve_workspace(c, 0, 1));
    /* Poisoned again: the warm-up wrote its results. */
    CHECK_OK(gpuprim_buffer_upload(c, out, 0, poison, slots));
    CHECK_OK(gpuprim_buffer_upload(c, indices, 0, index_poison, slots));
    if (topk) status = gpuprim_segmented_topk(c, &big, keys_in, K, GPUPRIM_ORDER_DESCENDING, out, indices);
    else status = gpuprim_segmented_sort(c, &big, keys_in, NULL, out, NULL, NULL);
    /* On CUDA the longer segment's sort or select takes more workspace; on
     * the CPU backend it may not (then the call succeeds). */
    CHECKF(status == GPUPRIM_ERROR_OUT_OF_MEMORY || (!cuda && status == GPUPRIM_SUCCESS), "status %d", (int)status);
    if (status == GPUPRIM_ERROR_OUT_OF_MEMORY) {
        CHECK_MESSAGE(c, "held still");
        CHECK_BUFFER_EQ(c, out, GPUPRIM_DTYPE_U32, poison, slots, "the keys of a refused call");
        CHECK_BUFFER_EQ(c, indices, GPUPRIM_DTYPE_I64, index_poison, slots, "the indices of a refused call");
        CHECK_OK(gpuprim_context_get_workspace_size(c, &now));
        CHECK(now == held);
    }
    CHECK_OK(gpuprim_context_reserve_workspace(c, 0, 0));
    if (topk) CHECK_OK(gpuprim_segmented_topk(c, &big, keys_in, K, GPUPRIM_ORDER_DESCENDING, out, indices));
    else CHECK_OK(gpuprim_segmented_sort(c, &big, keys_in, NULL, out, NULL, NULL));
    CHECK_OK(gpuprim_context_release_workspace(c));

    CHECK_OK(gpuprim_buffer_destroy(c, keys_in));
    CHECK_OK(gpuprim_buffer_destroy(c, out));
    CHECK_OK(gpuprim_buffer_destroy(c, indices));
    CHECK_OK(gpuprim_buffer_destroy(c, warm_offsets));
    CHECK_OK(gpuprim_buffer_destroy(c, big_offsets));
    free(keys);
    free(poison);
    free(index_poison);
}

int main(void) {
    gpuprim_context_t ctx = tc_init("test_embedding");
    const int cuda = tc_backend_is_cuda(ctx);
    void *stream = (void *)1;
    CHECK_OK(gpuprim_context_get_stream(ctx, &stream));
    CHECK(cuda ? stream != NULL : stream == NULL);
    test_options();
    test_every_block_from_the_host(ctx, cuda);
    test_host_allocator_failures(ctx, cuda);
    test_workspace_held_still(ctx);
    test_long_segment_held(ctx, cuda, 0);
    test_long_segment_held(ctx, cuda, 1);
    return tc_finish();
}
