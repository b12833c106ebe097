/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One process driving every GPU: one context and one NCCL communicator
 * (ncclCommInitAll) per device, each context called from its own thread, as
 * the header describes. Runs a distributed sort of pairs, an argsort, a
 * top-k, a reduce and a scan of data spread unevenly over the GPUs (one rank
 * empty) and checks every rank's part against a host reference.
 * Needs GPUPRIM_BACKEND=cuda and two or more GPUs; exits 77 (skipped)
 * otherwise.
 */
#include "../test_common.h"

#include <cuda_runtime.h>
#include <nccl.h>
#include <pthread.h>

#define MAX_DEVICES 16

typedef struct rank_work {
    int rank, ranks;
    ncclComm_t comm;
    const uint32_t *keys; /* every rank's keys, in rank order */
    const uint64_t *perm; /* the stable ascending permutation of all of them */
    const uint64_t *offsets;
    uint64_t total;
    long checks, failures;
    char first_failure[256];
} rank_work_t;

static void fail_rank(rank_work_t *w, const char *what, gpuprim_context_t ctx) {
    w->failures++;
    if (w->failures == 1)
        snprintf(w->first_failure, sizeof w->first_failure, "rank %d: %s (%s)", w->rank, what,
                 ctx ? gpuprim_context_last_error(ctx) : "");
}

#define RANK_CHECK(w, cond, ctx)                     \
    do {                                             \
        (w)->checks++;                               \
        if (!(cond)) fail_rank((w), #cond, (ctx));   \
    } while (0)

static void *run_rank(void *argument) {
    rank_work_t *w = (rank_work_t *)argument;
    const uint64_t n = w->offsets[w->rank + 1] - w->offsets[w->rank], offset = w->offsets[w->rank];
    gpuprim_context_options_t options;
    gpuprim_context_t ctx = NULL;
    gpuprim_buffer_t keys = NULL, values = NULL, indices = NULL, top = NULL, scanned = NULL;
    uint32_t *host = (uint32_t *)tc_xmalloc(n * 4 + 4), *host_values = (uint32_t *)tc_xmalloc(n * 4 + 4);
    uint64_t *host_indices = (uint64_t *)tc_xmalloc(n * 8 + 8), i, sum = 0, expected_sum = 0;
    uint32_t top_keys[16];
    const uint64_t k = w->total < 16 ? w->total : 16;

    gpuprim_context_options_init(&options);
    options.backend = GPUPRIM_BACKEND_CUDA;
    options.device_ordinal = w->rank;
    RANK_CHECK(w, gpuprim_context_create(&options, &ctx, NULL, 0) == GPUPRIM_SUCCESS, NULL);
    if (!ctx) return NULL;
    RANK_CHECK(w, gpuprim_context_attach_communicator(ctx, GPUPRIM_COMM_NCCL, w->comm) == GPUPRIM_SUCCESS, ctx);
    RANK_CHECK(w, gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U32, n, &keys) == GPUPRIM_SUCCESS, ctx);
    RANK_CHECK(w, gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U32, n, &values) == GPUPRIM_SUCCESS, ctx);
    RANK_CHECK(w, gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_I64, n, &indices) == GPUPRIM_SUCCESS, ctx);
    RANK_CHECK(w, gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U32, k, &top) == GPUPRIM_SUCCESS, ctx);
    RANK_CHECK(w, gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U32, n, &scanned) == GPUPRIM_SUCCESS, ctx);
    if (w->failures) goto done;

    /* Reduce and scan of the keys as they are. */
    for (i = 0; i < n; ++i) host_values[i] = (uint32_t)(offset + i);
    RANK_CHECK(w, gpuprim_buffer_upload(ctx, keys, 0, w->keys + offset, n) == GPUPRIM_SUCCESS, ctx);
    RANK_CHECK(w, gpuprim_buffer_upload(ctx, values, 0, host_values, n) == GPUPRIM_SUCCESS, ctx);
    RANK_CHECK(w, gpuprim_distributed_reduce(ctx, GPUPRIM_OP_SUM, keys, &sum) == GPUPRIM_SUCCESS, ctx);
    for (i = 0; i < w->total; ++i) expected_sum += w->keys[i];
    RANK_CHECK(w, (uint32_t)sum == (uint32_t)expected_sum, ctx);
    RANK_CHECK(w, gpuprim_distributed_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_EXCLUSIVE, keys, scanned) ==
                      GPUPRIM_SUCCESS,
               ctx);
    if (n) RANK_CHECK(w, gpuprim_buffer_download(ctx, scanned, 0, host, n) == GPUPRIM_SUCCESS, ctx);
    {
        uint32_t running = 0, errors = 0;
        for (i = 0; i < offset + n; ++i) {
            if (i >= offset && host[i - offset] != running) errors++;
            running += w->keys[i];
        }
        RANK_CHECK(w, errors == 0, ctx);
    }
    /* Top-k of the keys. */
    RANK_CHECK(w, gpuprim_distributed_topk(ctx, keys, k, GPUPRIM_ORDER_ASCENDING, top, NULL) == GPUPRIM_SUCCESS, ctx);
    RANK_CHECK(w, gpuprim_buffer_download(ctx, top, 0, top_keys, k) == GPUPRIM_SUCCESS, ctx);
    for (i = 0; i < k; ++i) RANK_CHECK(w, top_keys[i] == w->keys[w->perm[i]], ctx);
    /* Argsort (keys stay), then the pair sort in place. */
    RANK_CHECK(w, gpuprim_distributed_argsort(ctx, keys, NULL, indices, NULL) == GPUPRIM_SUCCESS, ctx);
    RANK_CHECK(w, gpuprim_distributed_sort(ctx, keys, values, keys, values, NULL) == GPUPRIM_SUCCESS, ctx);
    if (n) {
        RANK_CHECK(w, gpuprim_buffer_download(ctx, keys, 0, host, n) == GPUPRIM_SUCCESS, ctx);
        RANK_CHECK(w, gpuprim_buffer_download(ctx, values, 0, host_values, n) == GPUPRIM_SUCCESS, ctx);
        RANK_CHECK(w, gpuprim_buffer_download(ctx, indices, 0, host_indices, n) == GPUPRIM_SUCCESS, ctx);
    }
    {
        uint64_t errors = 0;
        for (i = 0; i < n; ++i) {
            uint64_t from = w->perm[offset + i];
            if (host[i] != w->keys[from] || host_values[i] != (uint32_t)from || host_indices[i] != from) errors++;
        }
        RANK_CHECK(w, errors == 0, ctx);
    }
done:
    gpuprim_context_destroy(ctx); /* frees the buffers */
    free(host);
    free(host_values);
    free(host_indices);
    return NULL;
}

int main(void) {
    int devices = 0, d;
    ncclComm_t comms[MAX_DEVICES];
    int ordinals[MAX_DEVICES];
    pthread_t threads[MAX_DEVICES];
    rank_work_t work[MAX_DEVICES];
    uint64_t offsets[MAX_DEVICES + 1], total, *perm;
    uint32_t *keys;
    const char *backend = getenv("GPUPRIM_BACKEND");
    long checks = 0, failures = 0;

    tc.program = "test_distributed_threads";
    tc.seed = getenv("GPUPRIM_TEST_SEED") ? strtoull(getenv("GPUPRIM_TEST_SEED"), NULL, 0) : (uint64_t)time(NULL);
    tc.rng = tc.seed;
    if (!backend || strcmp(backend, "cuda") != 0 || cudaGetDeviceCount(&devices) != cudaSuccess || devices < 2) {
        return tc_skip("test_distributed_threads: needs GPUPRIM_BACKEND=cuda and 2+ GPUs (found %d): skipped", devices);
    }
    if (devices > MAX_DEVICES) devices = MAX_DEVICES;
    for (d = 0; d < devices; ++d) ordinals[d] = d;
    if (ncclCommInitAll(comms, devices, ordinals) != ncclSuccess) {
        fprintf(stderr, "test_distributed_threads: ncclCommInitAll failed\n");
        return 1;
    }
    /* Uneven counts; the last GPU holds nothing. */
    offsets[0] = 0;
    for (d = 0; d < devices; ++d)
        offsets[d + 1] = offsets[d] + (d == devices - 1 ? 0 : 100000 + tc_below(300000));
    total = offsets[devices];
    keys = (uint32_t *)tc_xmalloc(total * 4);
    for (uint64_t i = 0; i < total; ++i) keys[i] = (uint32_t)(tc_rand() % 5000); /* many equal keys */
    perm = (uint64_t *)tc_xmalloc(total * 8);
    tc_reference_sort_permutation(GPUPRIM_DTYPE_U32, keys, total, 0, perm);
    for (d = 0; d < devices; ++d) {
        memset(&work[d], 0, sizeof work[d]);
        work[d].rank = d;
        work[d].ranks = devices;
        work[d].comm = comms[d];
        work[d].keys = keys;
        work[d].perm = perm;
        work[d].offsets = offsets;
        work[d].total = total;
        pthread_create(&threads[d], NULL, run_rank, &work[d]);
    }
    for (d = 0; d < devices; ++d) {
        pthread_join(threads[d], NULL);
        checks += work[d].checks;
        failures += work[d].failures;
        if (work[d].failures) fprintf(stderr, "test_distributed_threads: %s\n", work[d].first_failure);
    }
    for (d = 0; d < devices; ++d) ncclCommDestroy(comms[d]);
    printf("test_distributed_threads: %d GPUs, %llu keys, %ld checks, %ld failures%s (seed %llu)\n", devices,
           (unsigned long long)total, checks, failures, failures ? " -- FAILED" : "", (unsigned long long)tc.seed);
    free(keys);
    free(perm);
    return failures ? 1 : 0;
}
