/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CUDA graph capture of libgpuprim calls (gpuprim.h, experimental section
 * "Embedding: the workspace held still, CUDA graphs"), on the CUDA backend:
 *
 * 1. Every family of stream-ordered calls, at n = 5,000 and at 300,001 (past
 *    the CUDA tiles): sort of u32 and f32 keys (out of place and in place),
 *    sort of pairs and argsort, an inclusive i32 sum scan, reduce and dot to
 *    a buffer, segmented sort / reduce / scan on uniform rows, top-k on
 *    uniform rows and flat, searchsorted (both sides), histograms (even,
 *    range, bincount), merge, select and partition, unique and run-length
 *    encoding, reduce-by-key and group-by, each with its count going to a
 *    device buffer only. Each family: warmed up uncaptured (the workspace
 *    grows to its need; that result is checked too), the workspace held
 *    still (gpuprim_context_reserve_workspace(ctx, 0, 1)), the calls captured
 *    on the context's stream (gpuprim_context_get_stream) into one graph,
 *    which must run nothing while capturing (the poisoned outputs stay
 *    poisoned), then replayed three times, each on new data of another
 *    pattern uploaded into the same buffers with the outputs poisoned, and
 *    compared with references written from the header (test_common.h). The
 *    workspace keeps its size throughout. The CSR family (segmented sort and
 *    argsort with max_segment_length 4096, reduce and scan without a
 *    promise, top-k with 8192) runs with its offsets check deferred
 *    (gpuprim_context_set_offsets_check), and each replay writes new
 *    offsets into the same buffer.
 * 1b. Deferred checks in replays of the CSR family's graph: bad offsets (the
 *    last past the end; one decreasing) write nothing, and check_deferred
 *    then reports the captured sort's call number and "4 more"; a segment
 *    past the sorts' promise fails only them (synchronize reports it, the
 *    other calls' results are right); good offsets again replay correctly.
 * 1c. Each family again, sized by a workspace query instead of the warm-up:
 *    the query, made while the stream captures, adds no node to the graph,
 *    allocates nothing and runs nothing; its sizes reserved held still
 *    (gpuprim_context_reserve_workspace_sizes with fix) serve the capture
 *    and the replays without growing.
 * 2. The refusals (GPUPRIM_ERROR_NOT_CAPTURABLE) inside a capture: results
 *    or counts to the host (reduce, dot, argreduce, select, unique,
 *    reduce-by-key, group-by), synchronize, upload, download, buffer create,
 *    destroy of an owned buffer (which still works afterwards), releasing or
 *    growing the workspace, segmented sort / reduce / top-k on CSR offsets
 *    with their check waiting; with it deferred, a segmented sort or argsort
 *    whose segments may pass the largest sorting network (no promise and
 *    n > 4096; max_segment_length 4097), a top-k whose segments may pass
 *    8192 keys (max_segment_length 8193 or no promise, n = 9000), and check_deferred (a deferred reduce is
 *    captured between the frame's scans instead); and a sort whose
 *    workspace would have to grow: OUT_OF_MEMORY while the
 *    workspace is held, NOT_CAPTURABLE once it is let go. After each refusal
 *    the capture is still active, takes another call, ends, instantiates and
 *    replays correctly, and whatever the refused call would have written is
 *    as it was.
 * 3. Outside capture: a sort that needs more than the held workspace fails
 *    with OUT_OF_MEMORY and writes nothing; gpuprim_context_release_workspace
 *    lets go, and the same sort then succeeds; a workspace reserved by size
 *    (instead of a warm-up) serves a captured sort.
 * 4. A context on the caller's own stream (options.cuda_stream): get_stream
 *    returns it, and a capture on it replays. A CPU context's stream is NULL.
 *    Made while that stream captures: NOT_CAPTURABLE, the capture intact.
 *    A group-by on a fresh context whose reduce-by-key needs main workspace
 *    its sort does not: refused with no node captured, OUT_OF_MEMORY held.
 *    A deferred segmented scan whose main workspace must grow past what its
 *    offsets check took: refused with no node captured, runs outside.
 *
 * Skipped (exit 77) unless the default context runs on CUDA (set
 * GPUPRIM_BACKEND=cuda on a machine with a GPU). GPUPRIM_TEST_SEED repeats
 * the random inputs; GPUPRIM_TEST_MAX_COUNT below 300,001 leaves out the
 * larger size.
 */
#include "test_common.h"

#include <cuda_runtime.h>

#include "cuda_checks.h"

static gpuprim_context_t ctx;
static cudaStream_t stream; /* the context's, from gpuprim_context_get_stream */
static int32_t ordinal;

/* ------------------------------------------------------------------------ */
/* CUDA calls and the capture                                               */
/* ------------------------------------------------------------------------ */

/* CUDA_OK and capture_state: cuda_checks.h. */
static void begin_capture(cudaStream_t s) {
    CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CHECKF(capture_state(s) == 1, "the stream is not capturing after cudaStreamBeginCapture");
}

/* Ends the capture on s and instantiates its graph; NULL (with a failure
 * counted) when either fails. The stream is no longer capturing after.
 * node_count (optional) receives the number of nodes the graph holds. */
static cudaGraphExec_t end_capture(cudaStream_t s, size_t *node_count) {
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    size_t nodes = 0;
    if (node_count) *node_count = 0;
    const int ended = CUDA_OK(cudaStreamEndCapture(s, &graph));
    CHECKF(capture_state(s) == 0, "the stream still captures after cudaStreamEndCapture");
    if (!ended || !graph) {
        CHECKF(graph != NULL || !ended, "cudaStreamEndCapture gave no graph");
        if (graph) (void)cudaGraphDestroy(graph);
        return NULL;
    }
    if (CUDA_OK(cudaGraphGetNodes(graph, NULL, &nodes))) CHECKF(nodes > 0, "the captured graph has no nodes");
    if (node_count) *node_count = nodes;
    if (!CUDA_OK(cudaGraphInstantiate(&exec, graph, 0))) exec = NULL;
    CUDA_OK(cudaGraphDestroy(graph)); /* the executable graph lives on without it */
    return exec;
}

static int replay(cudaGraphExec_t exec, cudaStream_t s) {
    return CUDA_OK(cudaGraphLaunch(exec, s)) && CUDA_OK(cudaStreamSynchronize(s));
}

static void destroy_exec(cudaGraphExec_t exec) {
    if (exec) CUDA_OK(cudaGraphExecDestroy(exec));
}

static uint64_t workspace_size(void) {
    uint64_t bytes = 0;
    CHECK_OK(gpuprim_context_get_workspace_size(ctx, &bytes));
    return bytes;
}

/* ------------------------------------------------------------------------ */
/* Host arrays and expected outputs                                         */
/* ------------------------------------------------------------------------ */

/* n elements of up to 8 bytes, zeroed. */
static void *host_array(uint64_t n) {
    void *p = tc_xmalloc(n * 8 + 8);
    memset(p, 0, n * 8 + 8);
    return p;
}

/* What an output holds after tc_poison: the expected contents of an output
 * before the elements a call writes are set. */
static void *poisoned(gpuprim_dtype_t d, uint64_t n) {
    void *p = host_array(n);
    tc_poison_host(d, p, n);
    return p;
}

static void put(gpuprim_buffer_t b, const void *host, uint64_t n) {
    REQUIRE_OK(gpuprim_buffer_upload(ctx, b, 0, host, n));
}

/* Sorts a host array (stable, by the sort order) in place. */
static void sort_host(gpuprim_dtype_t d, void *p, uint64_t n, int descending) {
    uint64_t *perm = (uint64_t *)tc_xmalloc(n * sizeof *perm + 8);
    void *tmp = host_array(n);
    tc_reference_sort_permutation(d, p, n, descending, perm);
    tc_permute(d, p, perm, n, tmp);
    memcpy(p, tmp, n * tc_size(d));
    free(tmp);
    free(perm);
}

/* Runs of equal values: lengths 1 to longest, values below distinct. */
static void fill_runs(gpuprim_dtype_t d, void *x, uint64_t n, uint64_t longest, uint64_t distinct) {
    uint64_t i = 0;
    while (i < n) {
        const uint64_t length = 1 + tc_below(longest), v = tc_below(distinct);
        uint64_t j;
        for (j = 0; j < length && i < n; ++j, ++i) tc_set(d, x, i, v);
    }
}

/* The largest divisor of n that is at most limit (1 when there is none). */
static uint64_t divisor_at_most(uint64_t n, uint64_t limit) {
    uint64_t d;
    for (d = limit < n ? limit : n; d > 1; --d)
        if (n % d == 0) return d;
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Families: the calls of one graph, their inputs, outputs and references   */
/* ------------------------------------------------------------------------ */

#define MAX_BUFFERS 16
#define MAX_HOSTS 8

/* The first member of every family's state: the buffers it made (destroyed
 * at the end), which of them are outputs (poisoned before each run), and its
 * host arrays. */
typedef struct base {
    int buffers, outputs, hosts;
    gpuprim_buffer_t buffer[MAX_BUFFERS];
    gpuprim_buffer_t output[MAX_BUFFERS];
    gpuprim_dtype_t output_dtype[MAX_BUFFERS];
    uint64_t output_count[MAX_BUFFERS];
    void *host[MAX_HOSTS];
} base_t;

static void *new_state(size_t bytes) {
    void *p = tc_xmalloc(bytes);
    memset(p, 0, bytes);
    return p;
}

static gpuprim_buffer_t new_input(base_t *b, gpuprim_dtype_t d, uint64_t n) {
    gpuprim_buffer_t buffer = tc_buffer(ctx, d, n);
    if (b->buffers >= MAX_BUFFERS) {
        fprintf(stderr, "test_graph_capture: too many buffers in one family\n");
        tc_abort();
    }
    b->buffer[b->buffers++] = buffer;
    return buffer;
}

static gpuprim_buffer_t new_output(base_t *b, gpuprim_dtype_t d, uint64_t n) {
    gpuprim_buffer_t buffer = new_input(b, d, n);
    b->output[b->outputs] = buffer;
    b->output_dtype[b->outputs] = d;
    b->output_count[b->outputs] = n;
    b->outputs++;
    return buffer;
}

static void *new_host(base_t *b, uint64_t n) {
    void *p = host_array(n);
    if (b->hosts >= MAX_HOSTS) {
        fprintf(stderr, "test_graph_capture: too many host arrays in one family\n");
        tc_abort();
    }
    b->host[b->hosts++] = p;
    return p;
}

static void poison_outputs(const base_t *b) {
    int i;
    for (i = 0; i < b->outputs; ++i) tc_poison(ctx, b->output[i], b->output_dtype[i], b->output_count[i]);
}

static void check_poisoned(const base_t *b, const char *when) {
    int i;
    char what[160];
    for (i = 0; i < b->outputs; ++i) {
        void *want = poisoned(b->output_dtype[i], b->output_count[i]);
        snprintf(what, sizeof what, "output %d %s", i, when);
        CHECK_BUFFER_EQ(ctx, b->output[i], b->output_dtype[i], want, b->output_count[i], what);
        free(want);
    }
}

static void free_state(void *state) {
    base_t *b = (base_t *)state;
    int i;
    for (i = 0; i < b->buffers; ++i) CHECK_OK(gpuprim_buffer_destroy(ctx, b->buffer[i]));
    for (i = 0; i < b->hosts; ++i) free(b->host[i]);
    free(state);
}

/* fill(round): new inputs of the round's pattern, uploaded (round 0 is the
 * warm-up's and the capture's data, rounds 1 to 3 the replays'). call: the
 * family's gpuprim calls, each checked to succeed. check: the outputs
 * against the references of the inputs last filled. */
typedef struct family {
    const char *name;
    void *(*setup)(uint64_t n);
    void (*fill)(void *state, int round);
    void (*call)(void *state);
    void (*check)(void *state);
} family_t;

#define ROUNDS 4

/* --- sort of keys: out of place, and in place --------------------------- */

typedef struct sort_keys {
    base_t b;
    uint64_t n;
    gpuprim_dtype_t d;
    gpuprim_order_t order;
    void *keys;
    gpuprim_buffer_t in, in_place, sorted;
} sort_keys_t;

static void *sort_keys_setup(gpuprim_dtype_t d, gpuprim_order_t order, uint64_t n) {
    sort_keys_t *s = (sort_keys_t *)new_state(sizeof *s);
    s->n = n;
    s->d = d;
    s->order = order;
    s->keys = new_host(&s->b, n);
    s->in = new_input(&s->b, d, n);
    s->in_place = new_input(&s->b, d, n);
    s->sorted = new_output(&s->b, d, n);
    return s;
}
static void *sort_u32_setup(uint64_t n) { return sort_keys_setup(GPUPRIM_DTYPE_U32, GPUPRIM_ORDER_ASCENDING, n); }
static void *sort_f32_setup(uint64_t n) { return sort_keys_setup(GPUPRIM_DTYPE_F32, GPUPRIM_ORDER_DESCENDING, n); }

static void sort_keys_fill(void *state, int round) {
    static const tc_pattern_t patterns[ROUNDS] = {TC_MODERATE, TC_NAN_SPARSE, TC_SORTED, TC_SMALL_RANGE};
    sort_keys_t *s = (sort_keys_t *)state;
    tc_fill(s->d, s->keys, s->n, patterns[round]);
    put(s->in, s->keys, s->n);
    put(s->in_place, s->keys, s->n);
}

static void sort_keys_call(void *state) {
    sort_keys_t *s = (sort_keys_t *)state;
    CHECK_OK(gpuprim_sort(ctx, s->in, NULL, s->sorted, NULL, s->order));
    CHECK_OK(gpuprim_sort(ctx, s->in_place, NULL, s->in_place, NULL, s->order));
}

static void sort_keys_check(void *state) {
    sort_keys_t *s = (sort_keys_t *)state;
    uint64_t *perm = (uint64_t *)tc_xmalloc(s->n * sizeof *perm + 8);
    void *want = host_array(s->n);
    tc_reference_sort_permutation(s->d, s->keys, s->n, s->order == GPUPRIM_ORDER_DESCENDING, perm);
    tc_permute(s->d, s->keys, perm, s->n, want);
    CHECK_BUFFER_EQ(ctx, s->sorted, s->d, want, s->n, "sorted keys (out of place)");
    CHECK_BUFFER_EQ(ctx, s->in_place, s->d, want, s->n, "sorted keys (in place)");
    CHECK_BUFFER_EQ(ctx, s->in, s->d, s->keys, s->n, "keys_in of the out-of-place sort");
    free(want);
    free(perm);
}

/* --- sort of pairs (u32 keys, i64 values), argsort of f32 descending ----- */

typedef struct pairs {
    base_t b;
    uint64_t n;
    void *keys, *values, *akeys;
    gpuprim_buffer_t keys_in, values_in, keys_out, values_out, akeys_in, akeys_out, indices;
} pairs_t;

static void *pairs_setup(uint64_t n) {
    pairs_t *s = (pairs_t *)new_state(sizeof *s);
    s->n = n;
    s->keys = new_host(&s->b, n);
    s->values = new_host(&s->b, n);
    s->akeys = new_host(&s->b, n);
    s->keys_in = new_input(&s->b, GPUPRIM_DTYPE_U32, n);
    s->values_in = new_input(&s->b, GPUPRIM_DTYPE_I64, n);
    s->akeys_in = new_input(&s->b, GPUPRIM_DTYPE_F32, n);
    s->keys_out = new_output(&s->b, GPUPRIM_DTYPE_U32, n);
    s->values_out = new_output(&s->b, GPUPRIM_DTYPE_I64, n);
    s->akeys_out = new_output(&s->b, GPUPRIM_DTYPE_F32, n);
    s->indices = new_output(&s->b, GPUPRIM_DTYPE_U32, n);
    return s;
}

static void pairs_fill(void *state, int round) {
    static const tc_pattern_t key_patterns[ROUNDS] = {TC_SMALL_RANGE, TC_MODERATE, TC_SMALL_RANGE, TC_EQUAL};
    static const tc_pattern_t akey_patterns[ROUNDS] = {TC_MODERATE, TC_NAN_SPARSE, TC_SMALL_RANGE, TC_REVERSED};
    pairs_t *s = (pairs_t *)state;
    tc_fill(GPUPRIM_DTYPE_U32, s->keys, s->n, key_patterns[round]);
    tc_fill(GPUPRIM_DTYPE_I64, s->values, s->n, TC_RANDOM_BITS);
    tc_fill(GPUPRIM_DTYPE_F32, s->akeys, s->n, akey_patterns[round]);
    put(s->keys_in, s->keys, s->n);
    put(s->values_in, s->values, s->n);
    put(s->akeys_in, s->akeys, s->n);
}

static void pairs_call(void *state) {
    pairs_t *s = (pairs_t *)state;
    gpuprim_sort_options_t options;
    gpuprim_sort_options_init(&options);
    options.order = GPUPRIM_ORDER_DESCENDING;
    CHECK_OK(gpuprim_sort(ctx, s->keys_in, s->values_in, s->keys_out, s->values_out, GPUPRIM_ORDER_ASCENDING));
    CHECK_OK(gpuprim_argsort(ctx, s->akeys_in, s->akeys_out, s->indices, &options));
}

static void pairs_check(void *state) {
    pairs_t *s = (pairs_t *)state;
    uint64_t *perm = (uint64_t *)tc_xmalloc(s->n * sizeof *perm + 8), i;
    void *want = host_array(s->n);
    tc_reference_sort_permutation(GPUPRIM_DTYPE_U32, s->keys, s->n, 0, perm);
    tc_permute(GPUPRIM_DTYPE_U32, s->keys, perm, s->n, want);
    CHECK_BUFFER_EQ(ctx, s->keys_out, GPUPRIM_DTYPE_U32, want, s->n, "sorted keys of the pairs");
    tc_permute(GPUPRIM_DTYPE_I64, s->values, perm, s->n, want);
    CHECK_BUFFER_EQ(ctx, s->values_out, GPUPRIM_DTYPE_I64, want, s->n, "values moved with their keys");
    tc_reference_sort_permutation(GPUPRIM_DTYPE_F32, s->akeys, s->n, 1, perm);
    tc_permute(GPUPRIM_DTYPE_F32, s->akeys, perm, s->n, want);
    CHECK_BUFFER_EQ(ctx, s->akeys_out, GPUPRIM_DTYPE_F32, want, s->n, "argsort's sorted keys");
    for (i = 0; i < s->n; ++i) tc_set(GPUPRIM_DTYPE_U32, want, i, perm[i]);
    CHECK_BUFFER_EQ(ctx, s->indices, GPUPRIM_DTYPE_U32, want, s->n, "argsort's indices (stable, descending)");
    free(want);
    free(perm);
}

/* --- inclusive sum scan of i32 ------------------------------------------ */

typedef struct scan {
    base_t b;
    uint64_t n;
    void *x;
    gpuprim_buffer_t in, out;
} scan_t;

static void *scan_setup(uint64_t n) {
    scan_t *s = (scan_t *)new_state(sizeof *s);
    s->n = n;
    s->x = new_host(&s->b, n);
    s->in = new_input(&s->b, GPUPRIM_DTYPE_I32, n);
    s->out = new_output(&s->b, GPUPRIM_DTYPE_I32, n);
    return s;
}

static void scan_fill(void *state, int round) {
    static const tc_pattern_t patterns[ROUNDS] = {TC_MODERATE, TC_SMALL_RANGE, TC_SPECIAL, TC_MODERATE};
    scan_t *s = (scan_t *)state;
    tc_fill(GPUPRIM_DTYPE_I32, s->x, s->n, patterns[round]);
    put(s->in, s->x, s->n);
}

static void scan_call(void *state) {
    scan_t *s = (scan_t *)state;
    CHECK_OK(gpuprim_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, s->in, s->out));
}

/* want[i] = the wrapping inclusive sum of x[0..i] (i32) */
static void inclusive_sum_i32(const void *x, uint64_t n, void *want) {
    uint64_t i, acc = 0;
    for (i = 0; i < n; ++i) {
        acc = tc_apply(GPUPRIM_OP_SUM, GPUPRIM_DTYPE_I32, acc, tc_get(GPUPRIM_DTYPE_I32, x, i));
        tc_set(GPUPRIM_DTYPE_I32, want, i, acc);
    }
}

static void scan_check(void *state) {
    scan_t *s = (scan_t *)state;
    void *want = host_array(s->n);
    inclusive_sum_i32(s->x, s->n, want);
    CHECK_BUFFER_EQ(ctx, s->out, GPUPRIM_DTYPE_I32, want, s->n, "inclusive i32 sum scan");
    free(want);
}

/* --- reduce and dot to a buffer ----------------------------------------- */

typedef struct reduce {
    base_t b;
    uint64_t n;
    void *x, *y, *f;
    gpuprim_buffer_t x_in, y_in, f_in, sum, dot, max;
} reduce_t;

static void *reduce_setup(uint64_t n) {
    reduce_t *s = (reduce_t *)new_state(sizeof *s);
    s->n = n;
    s->x = new_host(&s->b, n);
    s->y = new_host(&s->b, n);
    s->f = new_host(&s->b, n);
    s->x_in = new_input(&s->b, GPUPRIM_DTYPE_I32, n);
    s->y_in = new_input(&s->b, GPUPRIM_DTYPE_I32, n);
    s->f_in = new_input(&s->b, GPUPRIM_DTYPE_F32, n);
    /* two elements each: only element 0 may be written */
    s->sum = new_output(&s->b, GPUPRIM_DTYPE_I32, 2);
    s->dot = new_output(&s->b, GPUPRIM_DTYPE_I32, 2);
    s->max = new_output(&s->b, GPUPRIM_DTYPE_F32, 2);
    return s;
}

static void reduce_fill(void *state, int round) {
    static const tc_pattern_t patterns[ROUNDS] = {TC_MODERATE, TC_NAN_SPARSE, TC_INF_SPARSE, TC_TINY};
    reduce_t *s = (reduce_t *)state;
    tc_fill(GPUPRIM_DTYPE_I32, s->x, s->n, TC_MODERATE);
    tc_fill(GPUPRIM_DTYPE_I32, s->y, s->n, round == 2 ? TC_SMALL_RANGE : TC_MODERATE);
    tc_fill(GPUPRIM_DTYPE_F32, s->f, s->n, patterns[round]);
    put(s->x_in, s->x, s->n);
    put(s->y_in, s->y, s->n);
    put(s->f_in, s->f, s->n);
}

static void reduce_call(void *state) {
    reduce_t *s = (reduce_t *)state;
    CHECK_OK(gpuprim_reduce_to_buffer(ctx, GPUPRIM_OP_SUM, s->x_in, s->sum));
    CHECK_OK(gpuprim_dot_to_buffer(ctx, s->x_in, s->y_in, s->dot));
    CHECK_OK(gpuprim_reduce_to_buffer(ctx, GPUPRIM_OP_MAX, s->f_in, s->max));
}

static void reduce_check(void *state) {
    reduce_t *s = (reduce_t *)state;
    void *want = poisoned(GPUPRIM_DTYPE_I32, 2);
    uint64_t i, sum = 0, dot = 0, max = tc_identity(GPUPRIM_OP_MAX, GPUPRIM_DTYPE_F32);
    for (i = 0; i < s->n; ++i) {
        const int64_t a = tc_int_value(GPUPRIM_DTYPE_I32, tc_get(GPUPRIM_DTYPE_I32, s->x, i));
        const int64_t b = tc_int_value(GPUPRIM_DTYPE_I32, tc_get(GPUPRIM_DTYPE_I32, s->y, i));
        sum = (sum + (uint64_t)a) & 0xFFFFFFFFu;
        dot = (dot + (uint64_t)(a * b)) & 0xFFFFFFFFu;
        max = tc_apply(GPUPRIM_OP_MAX, GPUPRIM_DTYPE_F32, max, tc_get(GPUPRIM_DTYPE_F32, s->f, i));
    }
    tc_set(GPUPRIM_DTYPE_I32, want, 0, sum);
    CHECK_BUFFER_EQ(ctx, s->sum, GPUPRIM_DTYPE_I32, want, 2, "i32 sum to a buffer (element 1 untouched)");
    tc_set(GPUPRIM_DTYPE_I32, want, 0, dot);
    CHECK_BUFFER_EQ(ctx, s->dot, GPUPRIM_DTYPE_I32, want, 2, "i32 dot to a buffer (element 1 untouched)");
    free(want);
    want = poisoned(GPUPRIM_DTYPE_F32, 2);
    tc_set(GPUPRIM_DTYPE_F32, want, 0, max);
    CHECK_BUFFER_EQ(ctx, s->max, GPUPRIM_DTYPE_F32, want, 2, "f32 max to a buffer (element 1 untouched)");
    free(want);
}

/* --- segmented sort, reduce and scan on uniform rows -------------------- */

typedef struct rows {
    base_t b;
    uint64_t n, rows, length;
    void *keys, *values, *x;
    gpuprim_buffer_t keys_in, values_in, x_in, keys_out, values_out, sums, scanned;
} rows_t;

static void *rows_setup(uint64_t n) {
    rows_t *s = (rows_t *)new_state(sizeof *s);
    s->n = n;
    /* rows of at most 512 keys: 10 rows of 500 at n = 5,000, 611 of 491 at 300,001 */
    s->length = divisor_at_most(n, 512);
    s->rows = n / s->length;
    s->keys = new_host(&s->b, n);
    s->values = new_host(&s->b, n);
    s->x = new_host(&s->b, n);
    s->keys_in = new_input(&s->b, GPUPRIM_DTYPE_F32, n);
    s->values_in = new_input(&s->b, GPUPRIM_DTYPE_U32, n);
    s->x_in = new_input(&s->b, GPUPRIM_DTYPE_I32, n);
    s->keys_out = new_output(&s->b, GPUPRIM_DTYPE_F32, n);
    s->values_out = new_output(&s->b, GPUPRIM_DTYPE_U32, n);
    s->sums = new_output(&s->b, GPUPRIM_DTYPE_I32, s->rows);
    s->scanned = new_output(&s->b, GPUPRIM_DTYPE_I32, n);
    return s;
}

static void rows_fill(void *state, int round) {
    static const tc_pattern_t patterns[ROUNDS] = {TC_MODERATE, TC_SMALL_RANGE, TC_NAN_SPARSE, TC_SORTED};
    rows_t *s = (rows_t *)state;
    tc_fill(GPUPRIM_DTYPE_F32, s->keys, s->n, patterns[round]);
    tc_fill(GPUPRIM_DTYPE_U32, s->values, s->n, TC_RANDOM_BITS);
    tc_fill(GPUPRIM_DTYPE_I32, s->x, s->n, round == 3 ? TC_SMALL_RANGE : TC_MODERATE);
    put(s->keys_in, s->keys, s->n);
    put(s->values_in, s->values, s->n);
    put(s->x_in, s->x, s->n);
}

static void rows_call(void *state) {
    rows_t *s = (rows_t *)state;
    gpuprim_segments_t segments;
    gpuprim_segments_init_rows(&segments, s->rows, s->length);
    CHECK_OK(gpuprim_segmented_sort(ctx, &segments, s->keys_in, s->values_in, s->keys_out, s->values_out, NULL));
    CHECK_OK(gpuprim_segmented_reduce(ctx, GPUPRIM_OP_SUM, &segments, s->x_in, s->sums));
    CHECK_OK(gpuprim_segmented_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, &segments, s->x_in, s->scanned));
}

static void rows_check(void *state) {
    rows_t *s = (rows_t *)state;
    const uint64_t len = s->length;
    uint64_t *perm = (uint64_t *)tc_xmalloc(len * sizeof *perm + 8), r, j;
    void *want_keys = host_array(s->n), *want_values = host_array(s->n), *want_sums = host_array(s->rows);
    void *want_scan = host_array(s->n);
    for (r = 0; r < s->rows; ++r) {
        const uint64_t at = r * len;
        tc_reference_sort_permutation(GPUPRIM_DTYPE_F32, (const char *)s->keys + at * 4, len, 0, perm);
        for (j = 0; j < len; ++j) {
            tc_set(GPUPRIM_DTYPE_F32, want_keys, at + j, tc_get(GPUPRIM_DTYPE_F32, s->keys, at + perm[j]));
            tc_set(GPUPRIM_DTYPE_U32, want_values, at + j, tc_get(GPUPRIM_DTYPE_U32, s->values, at + perm[j]));
        }
        inclusive_sum_i32((const char *)s->x + at * 4, len, (char *)want_scan + at * 4);
        tc_set(GPUPRIM_DTYPE_I32, want_sums, r, tc_get(GPUPRIM_DTYPE_I32, want_scan, at + len - 1));
    }
    CHECK_BUFFER_EQ(ctx, s->keys_out, GPUPRIM_DTYPE_F32, want_keys, s->n, "segmented sort's keys (rows)");
    CHECK_BUFFER_EQ(ctx, s->values_out, GPUPRIM_DTYPE_U32, want_values, s->n, "segmented sort's values (rows)");
    CHECK_BUFFER_EQ(ctx, s->sums, GPUPRIM_DTYPE_I32, want_sums, s->rows, "segmented reduce (rows)");
    CHECK_BUFFER_EQ(ctx, s->scanned, GPUPRIM_DTYPE_I32, want_scan, s->n, "segmented scan (rows)");
    free(want_keys);
    free(want_values);
    free(want_sums);
    free(want_scan);
    free(perm);
}

/* --- top-k: uniform rows (descending) and flat (ascending) -------------- */

typedef struct topk {
    base_t b;
    uint64_t n, rows, length, k, flat_k;
    void *keys;
    gpuprim_buffer_t keys_in, row_keys, row_indices, flat_keys, flat_indices;
} topk_t;

static void *topk_setup(uint64_t n) {
    topk_t *s = (topk_t *)new_state(sizeof *s);
    s->n = n;
    /* at least 4 rows of at most 30,000 keys: 4 of 1,250 at n = 5,000, 13 of 23,077 (past the one-block
       top-k of 8,192 keys) at 300,001 */
    s->length = divisor_at_most(n, n / 4 < 30000 ? (n / 4 ? n / 4 : 1) : 30000);
    s->rows = n / s->length;
    s->k = s->length < 33 ? s->length : 33;
    s->flat_k = n < 100 ? n : 100;
    s->keys = new_host(&s->b, n);
    s->keys_in = new_input(&s->b, GPUPRIM_DTYPE_F32, n);
    s->row_keys = new_output(&s->b, GPUPRIM_DTYPE_F32, s->rows * s->k);
    s->row_indices = new_output(&s->b, GPUPRIM_DTYPE_I64, s->rows * s->k);
    s->flat_keys = new_output(&s->b, GPUPRIM_DTYPE_F32, s->flat_k);
    s->flat_indices = new_output(&s->b, GPUPRIM_DTYPE_U32, s->flat_k);
    return s;
}

static void topk_fill(void *state, int round) {
    static const tc_pattern_t patterns[ROUNDS] = {TC_MODERATE, TC_SMALL_RANGE, TC_NAN_SPARSE, TC_EQUAL};
    topk_t *s = (topk_t *)state;
    tc_fill(GPUPRIM_DTYPE_F32, s->keys, s->n, patterns[round]);
    put(s->keys_in, s->keys, s->n);
}

static void topk_call(void *state) {
    topk_t *s = (topk_t *)state;
    gpuprim_segments_t segments;
    gpuprim_segments_init_rows(&segments, s->rows, s->length);
    CHECK_OK(gpuprim_segmented_topk(ctx, &segments, s->keys_in, s->k, GPUPRIM_ORDER_DESCENDING, s->row_keys,
                                    s->row_indices));
    CHECK_OK(gpuprim_topk(ctx, s->keys_in, s->flat_k, GPUPRIM_ORDER_ASCENDING, s->flat_keys, s->flat_indices));
}

static void topk_check(void *state) {
    topk_t *s = (topk_t *)state;
    uint64_t *perm = (uint64_t *)tc_xmalloc(s->n * sizeof *perm + 8), r, j;
    void *want_keys = host_array(s->rows * s->k), *want_indices = host_array(s->rows * s->k);
    for (r = 0; r < s->rows; ++r) {
        const uint64_t at = r * s->length;
        tc_reference_sort_permutation(GPUPRIM_DTYPE_F32, (const char *)s->keys + at * 4, s->length, 1, perm);
        for (j = 0; j < s->k; ++j) {
            tc_set(GPUPRIM_DTYPE_F32, want_keys, r * s->k + j, tc_get(GPUPRIM_DTYPE_F32, s->keys, at + perm[j]));
            tc_set(GPUPRIM_DTYPE_I64, want_indices, r * s->k + j, perm[j]);
        }
    }
    CHECK_BUFFER_EQ(ctx, s->row_keys, GPUPRIM_DTYPE_F32, want_keys, s->rows * s->k, "top-k keys of the rows");
    CHECK_BUFFER_EQ(ctx, s->row_indices, GPUPRIM_DTYPE_I64, want_indices, s->rows * s->k,
                    "top-k indices of the rows (positions within the row)");
    tc_reference_sort_permutation(GPUPRIM_DTYPE_F32, s->keys, s->n, 0, perm);
    for (j = 0; j < s->flat_k; ++j) {
        tc_set(GPUPRIM_DTYPE_F32, want_keys, j, tc_get(GPUPRIM_DTYPE_F32, s->keys, perm[j]));
        tc_set(GPUPRIM_DTYPE_U32, want_indices, j, perm[j]);
    }
    CHECK_BUFFER_EQ(ctx, s->flat_keys, GPUPRIM_DTYPE_F32, want_keys, s->flat_k, "flat top-k keys (ascending)");
    CHECK_BUFFER_EQ(ctx, s->flat_indices, GPUPRIM_DTYPE_U32, want_indices, s->flat_k, "flat top-k indices");
    free(want_keys);
    free(want_indices);
    free(perm);
}

/* --- searchsorted, both sides ------------------------------------------- */

typedef struct search {
    base_t b;
    uint64_t n, m;
    void *sorted, *queries;
    gpuprim_buffer_t sorted_in, queries_in, left, right;
} search_t;

static void *search_setup(uint64_t n) {
    search_t *s = (search_t *)new_state(sizeof *s);
    s->n = n;
    s->m = n / 2 + 7;
    s->sorted = new_host(&s->b, n);
    s->queries = new_host(&s->b, s->m);
    s->sorted_in = new_input(&s->b, GPUPRIM_DTYPE_F32, n);
    s->queries_in = new_input(&s->b, GPUPRIM_DTYPE_F32, s->m);
    s->left = new_output(&s->b, GPUPRIM_DTYPE_U64, s->m);
    s->right = new_output(&s->b, GPUPRIM_DTYPE_I32, s->m);
    return s;
}

static void search_fill(void *state, int round) {
    static const tc_pattern_t patterns[ROUNDS] = {TC_MODERATE, TC_SMALL_RANGE, TC_NAN_SPARSE, TC_MODERATE};
    search_t *s = (search_t *)state;
    uint64_t j;
    tc_fill(GPUPRIM_DTYPE_F32, s->sorted, s->n, patterns[round]);
    sort_host(GPUPRIM_DTYPE_F32, s->sorted, s->n, 0);
    for (j = 0; j < s->m; ++j) /* half of them keys of the data (ties), half anything */
        tc_set(GPUPRIM_DTYPE_F32, s->queries, j,
               (tc_rand() & 1) ? tc_get(GPUPRIM_DTYPE_F32, s->sorted, tc_below(s->n))
                               : tc_random_moderate(GPUPRIM_DTYPE_F32));
    put(s->sorted_in, s->sorted, s->n);
    put(s->queries_in, s->queries, s->m);
}

static void search_call(void *state) {
    search_t *s = (search_t *)state;
    CHECK_OK(gpuprim_searchsorted(ctx, s->sorted_in, s->queries_in, GPUPRIM_SIDE_LEFT, GPUPRIM_ORDER_ASCENDING,
                                  s->left));
    CHECK_OK(gpuprim_searchsorted(ctx, s->sorted_in, s->queries_in, GPUPRIM_SIDE_RIGHT, GPUPRIM_ORDER_ASCENDING,
                                  s->right));
}

static void search_check(void *state) {
    search_t *s = (search_t *)state;
    void *want_left = host_array(s->m), *want_right = host_array(s->m);
    uint64_t j;
    for (j = 0; j < s->m; ++j) {
        const uint64_t q = tc_get(GPUPRIM_DTYPE_F32, s->queries, j);
        tc_set(GPUPRIM_DTYPE_U64, want_left, j, tc_searchsorted_bound(GPUPRIM_DTYPE_F32, s->sorted, s->n, q, 0, 0));
        tc_set(GPUPRIM_DTYPE_I32, want_right, j, tc_searchsorted_bound(GPUPRIM_DTYPE_F32, s->sorted, s->n, q, 0, 1));
    }
    CHECK_BUFFER_EQ(ctx, s->left, GPUPRIM_DTYPE_U64, want_left, s->m, "searchsorted, side left");
    CHECK_BUFFER_EQ(ctx, s->right, GPUPRIM_DTYPE_I32, want_right, s->m, "searchsorted, side right");
    free(want_left);
    free(want_right);
}

/* --- histograms: even bins, edges, bincount ----------------------------- */

#define EVEN_BINS 64
#define EDGE_COUNT 17
#define BINCOUNT_BINS 100
static const float even_lower = -512.0f, even_upper = 512.0f;

typedef struct hist {
    base_t b;
    uint64_t n;
    void *f, *v, *edges;
    gpuprim_buffer_t f_in, v_in, edges_in, even, range, bins;
} hist_t;

static void *hist_setup(uint64_t n) {
    hist_t *s = (hist_t *)new_state(sizeof *s);
    s->n = n;
    s->f = new_host(&s->b, n);
    s->v = new_host(&s->b, n);
    s->edges = new_host(&s->b, EDGE_COUNT);
    s->f_in = new_input(&s->b, GPUPRIM_DTYPE_F32, n);
    s->v_in = new_input(&s->b, GPUPRIM_DTYPE_I32, n);
    s->edges_in = new_input(&s->b, GPUPRIM_DTYPE_F32, EDGE_COUNT);
    s->even = new_output(&s->b, GPUPRIM_DTYPE_U32, EVEN_BINS);
    s->range = new_output(&s->b, GPUPRIM_DTYPE_U64, EDGE_COUNT - 1);
    s->bins = new_output(&s->b, GPUPRIM_DTYPE_U32, BINCOUNT_BINS);
    return s;
}

static void hist_fill(void *state, int round) {
    static const tc_pattern_t patterns[ROUNDS] = {TC_MODERATE, TC_NAN_SPARSE, TC_INF_SPARSE, TC_SMALL_RANGE};
    hist_t *s = (hist_t *)state;
    uint64_t i;
    tc_fill(GPUPRIM_DTYPE_F32, s->f, s->n, patterns[round]);
    for (i = 0; i < s->n; ++i) /* -10 .. 109 (round 3: 0 .. 6): some below and past the bins */
        tc_set(GPUPRIM_DTYPE_I32, s->v, i, (uint64_t)(round == 3 ? (int64_t)tc_below(7) : (int64_t)tc_below(120) - 10));
    for (i = 0; i < EDGE_COUNT; ++i) /* increasing: new edges each round, read from the buffer at each replay */
        tc_set(GPUPRIM_DTYPE_F32, s->edges, i, tc_from_double(GPUPRIM_DTYPE_F32, -700.0 + 85.0 * (double)i + 40.0 * tc_uniform()));
    put(s->f_in, s->f, s->n);
    put(s->v_in, s->v, s->n);
    put(s->edges_in, s->edges, EDGE_COUNT);
}

static void hist_call(void *state) {
    hist_t *s = (hist_t *)state;
    CHECK_OK(gpuprim_histogram_even(ctx, s->f_in, &even_lower, &even_upper, s->even));
    CHECK_OK(gpuprim_histogram_range(ctx, s->f_in, s->edges_in, s->range));
    CHECK_OK(gpuprim_bincount(ctx, s->v_in, s->bins));
}

static void hist_check(void *state) {
    hist_t *s = (hist_t *)state;
    const uint64_t lower = tc_from_double(GPUPRIM_DTYPE_F32, even_lower);
    const uint64_t upper = tc_from_double(GPUPRIM_DTYPE_F32, even_upper);
    uint64_t even[EVEN_BINS], range[EDGE_COUNT - 1], bins[BINCOUNT_BINS], i;
    void *want = host_array(BINCOUNT_BINS);
    memset(even, 0, sizeof even);
    memset(range, 0, sizeof range);
    memset(bins, 0, sizeof bins);
    for (i = 0; i < s->n; ++i) {
        const uint64_t x = tc_get(GPUPRIM_DTYPE_F32, s->f, i);
        const int64_t e = tc_histogram_even_bin(GPUPRIM_DTYPE_F32, x, lower, upper, EVEN_BINS);
        const int64_t r = tc_histogram_range_bin(GPUPRIM_DTYPE_F32, x, s->edges, EDGE_COUNT - 1);
        const int64_t c = tc_bincount_bin(GPUPRIM_DTYPE_I32, tc_get(GPUPRIM_DTYPE_I32, s->v, i), BINCOUNT_BINS);
        if (e >= 0) even[e]++;
        if (r >= 0) range[r]++;
        if (c >= 0) bins[c]++;
    }
    for (i = 0; i < EVEN_BINS; ++i) tc_set(GPUPRIM_DTYPE_U32, want, i, even[i]);
    CHECK_BUFFER_EQ(ctx, s->even, GPUPRIM_DTYPE_U32, want, EVEN_BINS, "histogram_even counts");
    for (i = 0; i < EDGE_COUNT - 1; ++i) tc_set(GPUPRIM_DTYPE_U64, want, i, range[i]);
    CHECK_BUFFER_EQ(ctx, s->range, GPUPRIM_DTYPE_U64, want, EDGE_COUNT - 1, "histogram_range counts");
    for (i = 0; i < BINCOUNT_BINS; ++i) tc_set(GPUPRIM_DTYPE_U32, want, i, bins[i]);
    CHECK_BUFFER_EQ(ctx, s->bins, GPUPRIM_DTYPE_U32, want, BINCOUNT_BINS, "bincount counts");
    free(want);
}

/* --- merge of two sorted runs with values ------------------------------- */

typedef struct merge {
    base_t b;
    uint64_t n, na, nb;
    void *a, *bk, *va, *vb;
    gpuprim_buffer_t a_in, b_in, va_in, vb_in, keys_out, values_out;
} merge_t;

static void *merge_setup(uint64_t n) {
    merge_t *s = (merge_t *)new_state(sizeof *s);
    s->n = n;
    s->na = n / 3;
    s->nb = n - s->na;
    s->a = new_host(&s->b, s->na);
    s->bk = new_host(&s->b, s->nb);
    s->va = new_host(&s->b, s->na);
    s->vb = new_host(&s->b, s->nb);
    s->a_in = new_input(&s->b, GPUPRIM_DTYPE_U32, s->na);
    s->b_in = new_input(&s->b, GPUPRIM_DTYPE_U32, s->nb);
    s->va_in = new_input(&s->b, GPUPRIM_DTYPE_U16, s->na);
    s->vb_in = new_input(&s->b, GPUPRIM_DTYPE_U16, s->nb);
    s->keys_out = new_output(&s->b, GPUPRIM_DTYPE_U32, n);
    s->values_out = new_output(&s->b, GPUPRIM_DTYPE_U16, n);
    return s;
}

/* A sorted run of n u32 keys below range (0: any). */
static void sorted_run(void *p, uint64_t n, uint64_t range) {
    uint64_t i;
    for (i = 0; i < n; ++i) tc_set(GPUPRIM_DTYPE_U32, p, i, range ? tc_below(range) : tc_rand());
    sort_host(GPUPRIM_DTYPE_U32, p, n, 0);
}

static void merge_fill(void *state, int round) {
    merge_t *s = (merge_t *)state;
    const uint64_t ranges[ROUNDS] = {s->n / 4 + 1, 0, 3, s->n};
    sorted_run(s->a, s->na, ranges[round]);
    sorted_run(s->bk, s->nb, ranges[round]);
    tc_fill(GPUPRIM_DTYPE_U16, s->va, s->na, TC_RANDOM_BITS);
    tc_fill(GPUPRIM_DTYPE_U16, s->vb, s->nb, TC_RANDOM_BITS);
    put(s->a_in, s->a, s->na);
    put(s->b_in, s->bk, s->nb);
    put(s->va_in, s->va, s->na);
    put(s->vb_in, s->vb, s->nb);
}

static void merge_call(void *state) {
    merge_t *s = (merge_t *)state;
    CHECK_OK(gpuprim_merge(ctx, s->a_in, s->va_in, s->b_in, s->vb_in, s->keys_out, s->values_out,
                           GPUPRIM_ORDER_ASCENDING));
}

static void merge_check(void *state) {
    merge_t *s = (merge_t *)state;
    uint64_t *perm = (uint64_t *)tc_xmalloc(s->n * sizeof *perm + 8), i;
    void *want_keys = host_array(s->n), *want_values = host_array(s->n);
    tc_reference_merge_permutation(GPUPRIM_DTYPE_U32, s->a, s->na, s->bk, s->nb, 0, perm);
    for (i = 0; i < s->n; ++i) {
        const int from_a = perm[i] < s->na;
        const uint64_t at = from_a ? perm[i] : perm[i] - s->na;
        tc_set(GPUPRIM_DTYPE_U32, want_keys, i, tc_get(GPUPRIM_DTYPE_U32, from_a ? s->a : s->bk, at));
        tc_set(GPUPRIM_DTYPE_U16, want_values, i, tc_get(GPUPRIM_DTYPE_U16, from_a ? s->va : s->vb, at));
    }
    CHECK_BUFFER_EQ(ctx, s->keys_out, GPUPRIM_DTYPE_U32, want_keys, s->n, "merged keys");
    CHECK_BUFFER_EQ(ctx, s->values_out, GPUPRIM_DTYPE_U16, want_values, s->n, "merged values (ties: run a first)");
    free(want_keys);
    free(want_values);
    free(perm);
}

/* --- select (x > 0.25) and partition (flagged), counts to a buffer ------ */

static const float select_scalar = 0.25f;

typedef struct sel {
    base_t b;
    uint64_t n;
    void *x, *values, *flags;
    gpuprim_buffer_t x_in, values_in, flags_in, output, values_out, positions, count_out, parted, parted_count;
} sel_t;

static void *sel_setup(uint64_t n) {
    sel_t *s = (sel_t *)new_state(sizeof *s);
    s->n = n;
    s->x = new_host(&s->b, n);
    s->values = new_host(&s->b, n);
    s->flags = new_host(&s->b, n);
    s->x_in = new_input(&s->b, GPUPRIM_DTYPE_F32, n);
    s->values_in = new_input(&s->b, GPUPRIM_DTYPE_U32, n);
    s->flags_in = new_input(&s->b, GPUPRIM_DTYPE_U8, n);
    s->output = new_output(&s->b, GPUPRIM_DTYPE_F32, n);
    s->values_out = new_output(&s->b, GPUPRIM_DTYPE_U32, n);
    s->positions = new_output(&s->b, GPUPRIM_DTYPE_I64, n);
    s->count_out = new_output(&s->b, GPUPRIM_DTYPE_U32, 2);
    s->parted = new_output(&s->b, GPUPRIM_DTYPE_F32, n);
    s->parted_count = new_output(&s->b, GPUPRIM_DTYPE_I64, 2);
    return s;
}

static void sel_fill(void *state, int round) {
    static const tc_pattern_t patterns[ROUNDS] = {TC_MODERATE, TC_NAN_SPARSE, TC_SMALL_RANGE, TC_ZEROS};
    sel_t *s = (sel_t *)state;
    uint64_t i;
    tc_fill(GPUPRIM_DTYPE_F32, s->x, s->n, patterns[round]);
    tc_fill(GPUPRIM_DTYPE_U32, s->values, s->n, TC_RANDOM_BITS);
    for (i = 0; i < s->n; ++i) /* denser or sparser each round; any set bit keeps */
        tc_set(GPUPRIM_DTYPE_U8, s->flags, i, tc_below((uint64_t)round + 2) == 0 ? (tc_rand() | 1) & 0xFF : 0);
    put(s->x_in, s->x, s->n);
    put(s->values_in, s->values, s->n);
    put(s->flags_in, s->flags, s->n);
}

static void sel_call(void *state) {
    sel_t *s = (sel_t *)state;
    gpuprim_predicate_t greater, flagged;
    memset(&greater, 0, sizeof greater);
    memset(&flagged, 0, sizeof flagged);
    greater.kind = GPUPRIM_KEEP_GREATER;
    greater.scalar = &select_scalar;
    flagged.kind = GPUPRIM_KEEP_FLAGGED;
    flagged.flags = s->flags_in;
    CHECK_OK(gpuprim_select(ctx, s->x_in, s->values_in, &greater, s->output, s->values_out, s->positions, NULL,
                            s->count_out));
    CHECK_OK(gpuprim_partition(ctx, s->x_in, NULL, &flagged, s->parted, NULL, NULL, s->parted_count));
}

static void sel_check(void *state) {
    sel_t *s = (sel_t *)state;
    unsigned char *keep = (unsigned char *)tc_xmalloc(s->n + 8);
    uint64_t *perm = (uint64_t *)tc_xmalloc(s->n * sizeof *perm + 8), kept, j;
    void *want_out = poisoned(GPUPRIM_DTYPE_F32, s->n), *want_values = poisoned(GPUPRIM_DTYPE_U32, s->n);
    void *want_positions = poisoned(GPUPRIM_DTYPE_I64, s->n), *want_count = poisoned(GPUPRIM_DTYPE_U32, 2);
    void *want_parted = host_array(s->n), *want_parted_count = poisoned(GPUPRIM_DTYPE_I64, 2);
    (void)tc_reference_keep(GPUPRIM_DTYPE_F32, s->x, s->n, GPUPRIM_KEEP_GREATER,
                            tc_from_double(GPUPRIM_DTYPE_F32, select_scalar), 0, GPUPRIM_DTYPE_U8, NULL, keep);
    kept = tc_reference_select_permutation(keep, s->n, 0, perm);
    for (j = 0; j < kept; ++j) {
        tc_set(GPUPRIM_DTYPE_F32, want_out, j, tc_get(GPUPRIM_DTYPE_F32, s->x, perm[j]));
        tc_set(GPUPRIM_DTYPE_U32, want_values, j, tc_get(GPUPRIM_DTYPE_U32, s->values, perm[j]));
        tc_set(GPUPRIM_DTYPE_I64, want_positions, j, perm[j]);
    }
    tc_set(GPUPRIM_DTYPE_U32, want_count, 0, kept);
    CHECK_BUFFER_EQ(ctx, s->output, GPUPRIM_DTYPE_F32, want_out, s->n, "select output (the rest untouched)");
    CHECK_BUFFER_EQ(ctx, s->values_out, GPUPRIM_DTYPE_U32, want_values, s->n, "select values_out");
    CHECK_BUFFER_EQ(ctx, s->positions, GPUPRIM_DTYPE_I64, want_positions, s->n, "select positions");
    CHECK_BUFFER_EQ(ctx, s->count_out, GPUPRIM_DTYPE_U32, want_count, 2, "select count_out");
    (void)tc_reference_keep(GPUPRIM_DTYPE_F32, s->x, s->n, GPUPRIM_KEEP_FLAGGED, 0, 0, GPUPRIM_DTYPE_U8, s->flags,
                            keep);
    kept = tc_reference_select_permutation(keep, s->n, 1, perm);
    tc_permute(GPUPRIM_DTYPE_F32, s->x, perm, s->n, want_parted);
    tc_set(GPUPRIM_DTYPE_I64, want_parted_count, 0, kept);
    CHECK_BUFFER_EQ(ctx, s->parted, GPUPRIM_DTYPE_F32, want_parted, s->n, "partition output (flagged first)");
    CHECK_BUFFER_EQ(ctx, s->parted_count, GPUPRIM_DTYPE_I64, want_parted_count, 2, "partition count_out");
    free(keep);
    free(perm);
    free(want_out);
    free(want_values);
    free(want_positions);
    free(want_count);
    free(want_parted);
    free(want_parted_count);
}

/* --- unique and run-length encoding, counts to a buffer ----------------- */

typedef struct runs {
    base_t b;
    uint64_t n;
    void *x, *values;
    gpuprim_buffer_t x_in, values_in, unique_keys, unique_values, unique_count, run_keys, starts, lengths, run_count;
} runs_t;

static void *runs_setup(uint64_t n) {
    runs_t *s = (runs_t *)new_state(sizeof *s);
    s->n = n;
    s->x = new_host(&s->b, n);
    s->values = new_host(&s->b, n);
    s->x_in = new_input(&s->b, GPUPRIM_DTYPE_I32, n);
    s->values_in = new_input(&s->b, GPUPRIM_DTYPE_U16, n);
    s->unique_keys = new_output(&s->b, GPUPRIM_DTYPE_I32, n);
    s->unique_values = new_output(&s->b, GPUPRIM_DTYPE_U16, n);
    s->unique_count = new_output(&s->b, GPUPRIM_DTYPE_U64, 2);
    s->run_keys = new_output(&s->b, GPUPRIM_DTYPE_I32, n);
    s->starts = new_output(&s->b, GPUPRIM_DTYPE_U32, n);
    s->lengths = new_output(&s->b, GPUPRIM_DTYPE_I64, n);
    s->run_count = new_output(&s->b, GPUPRIM_DTYPE_I32, 2);
    return s;
}

/* Runs of each round: longest run and distinct values. */
static const uint64_t run_longest[ROUNDS] = {4, 1, 50, 3000};
static const uint64_t run_distinct[ROUNDS] = {3, 1000, 2, 5};

static void runs_fill(void *state, int round) {
    runs_t *s = (runs_t *)state;
    fill_runs(GPUPRIM_DTYPE_I32, s->x, s->n, run_longest[round], run_distinct[round]);
    tc_fill(GPUPRIM_DTYPE_U16, s->values, s->n, TC_RANDOM_BITS);
    put(s->x_in, s->x, s->n);
    put(s->values_in, s->values, s->n);
}

static void runs_call(void *state) {
    runs_t *s = (runs_t *)state;
    CHECK_OK(gpuprim_unique(ctx, s->x_in, s->values_in, s->unique_keys, s->unique_values, NULL, s->unique_count));
    CHECK_OK(gpuprim_run_length_encode(ctx, s->x_in, GPUPRIM_RUNS_ALL, s->run_keys, s->starts, s->lengths, NULL,
                                       s->run_count));
}

static void runs_check(void *state) {
    runs_t *s = (runs_t *)state;
    uint64_t *starts = (uint64_t *)tc_xmalloc(s->n * 8 + 8), *lengths = (uint64_t *)tc_xmalloc(s->n * 8 + 8), r;
    const uint64_t runs = tc_reference_runs(GPUPRIM_DTYPE_I32, s->x, s->n, 0, starts, lengths);
    void *want_keys = poisoned(GPUPRIM_DTYPE_I32, s->n), *want_values = poisoned(GPUPRIM_DTYPE_U16, s->n);
    void *want_starts = poisoned(GPUPRIM_DTYPE_U32, s->n), *want_lengths = poisoned(GPUPRIM_DTYPE_I64, s->n);
    void *want_ucount = poisoned(GPUPRIM_DTYPE_U64, 2), *want_rcount = poisoned(GPUPRIM_DTYPE_I32, 2);
    for (r = 0; r < runs; ++r) {
        tc_set(GPUPRIM_DTYPE_I32, want_keys, r, tc_get(GPUPRIM_DTYPE_I32, s->x, starts[r]));
        tc_set(GPUPRIM_DTYPE_U16, want_values, r, tc_get(GPUPRIM_DTYPE_U16, s->values, starts[r]));
        tc_set(GPUPRIM_DTYPE_U32, want_starts, r, starts[r]);
        tc_set(GPUPRIM_DTYPE_I64, want_lengths, r, lengths[r]);
    }
    tc_set(GPUPRIM_DTYPE_U64, want_ucount, 0, runs);
    tc_set(GPUPRIM_DTYPE_I32, want_rcount, 0, runs);
    CHECK_BUFFER_EQ(ctx, s->unique_keys, GPUPRIM_DTYPE_I32, want_keys, s->n, "unique keys (the rest untouched)");
    CHECK_BUFFER_EQ(ctx, s->unique_values, GPUPRIM_DTYPE_U16, want_values, s->n, "unique values (each run's first)");
    CHECK_BUFFER_EQ(ctx, s->unique_count, GPUPRIM_DTYPE_U64, want_ucount, 2, "unique count_out");
    CHECK_BUFFER_EQ(ctx, s->run_keys, GPUPRIM_DTYPE_I32, want_keys, s->n, "run-length keys");
    CHECK_BUFFER_EQ(ctx, s->starts, GPUPRIM_DTYPE_U32, want_starts, s->n, "run-length starts");
    CHECK_BUFFER_EQ(ctx, s->lengths, GPUPRIM_DTYPE_I64, want_lengths, s->n, "run-length lengths");
    CHECK_BUFFER_EQ(ctx, s->run_count, GPUPRIM_DTYPE_I32, want_rcount, 2, "run-length count_out");
    free(starts);
    free(lengths);
    free(want_keys);
    free(want_values);
    free(want_starts);
    free(want_lengths);
    free(want_ucount);
    free(want_rcount);
}

/* --- reduce-by-key (i32 sums of runs of u32 keys), count to a buffer ---- */

typedef struct rbk {
    base_t b;
    uint64_t n;
    void *keys, *values;
    gpuprim_buffer_t keys_in, values_in, keys_out, results, lengths, count_out;
} rbk_t;

static void *rbk_setup(uint64_t n) {
    rbk_t *s = (rbk_t *)new_state(sizeof *s);
    s->n = n;
    s->keys = new_host(&s->b, n);
    s->values = new_host(&s->b, n);
    s->keys_in = new_input(&s->b, GPUPRIM_DTYPE_U32, n);
    s->values_in = new_input(&s->b, GPUPRIM_DTYPE_I32, n);
    s->keys_out = new_output(&s->b, GPUPRIM_DTYPE_U32, n);
    s->results = new_output(&s->b, GPUPRIM_DTYPE_I32, n);
    s->lengths = new_output(&s->b, GPUPRIM_DTYPE_U64, n);
    s->count_out = new_output(&s->b, GPUPRIM_DTYPE_U32, 2);
    return s;
}

static void rbk_fill(void *state, int round) {
    rbk_t *s = (rbk_t *)state;
    fill_runs(GPUPRIM_DTYPE_U32, s->keys, s->n, run_longest[round], run_distinct[round]);
    tc_fill(GPUPRIM_DTYPE_I32, s->values, s->n, round == 2 ? TC_SMALL_RANGE : TC_MODERATE);
    put(s->keys_in, s->keys, s->n);
    put(s->values_in, s->values, s->n);
}

static void rbk_call(void *state) {
    rbk_t *s = (rbk_t *)state;
    CHECK_OK(gpuprim_reduce_by_key(ctx, s->keys_in, s->values_in, GPUPRIM_OP_SUM, s->keys_out, s->results,
                                   s->lengths, NULL, s->count_out));
}

static void rbk_check(void *state) {
    rbk_t *s = (rbk_t *)state;
    uint64_t *order = (uint64_t *)tc_xmalloc(s->n * 8 + 8), *first = (uint64_t *)tc_xmalloc(s->n * 8 + 8);
    uint64_t *length = (uint64_t *)tc_xmalloc(s->n * 8 + 8), i, groups;
    void *want_keys = poisoned(GPUPRIM_DTYPE_U32, s->n), *want_results = poisoned(GPUPRIM_DTYPE_I32, s->n);
    void *want_lengths = poisoned(GPUPRIM_DTYPE_U64, s->n), *want_count = poisoned(GPUPRIM_DTYPE_U32, 2);
    for (i = 0; i < s->n; ++i) order[i] = i;
    groups = tc_reference_groups(GPUPRIM_DTYPE_U32, s->keys, order, s->n, first, length);
    for (i = 0; i < groups; ++i) {
        tc_set(GPUPRIM_DTYPE_U32, want_keys, i, tc_get(GPUPRIM_DTYPE_U32, s->keys, first[i]));
        tc_set(GPUPRIM_DTYPE_I32, want_results, i,
               tc_reference_reduce_at(GPUPRIM_OP_SUM, GPUPRIM_DTYPE_I32, s->values, order, first[i], first[i] + length[i]));
        tc_set(GPUPRIM_DTYPE_U64, want_lengths, i, length[i]);
    }
    tc_set(GPUPRIM_DTYPE_U32, want_count, 0, groups);
    CHECK_BUFFER_EQ(ctx, s->keys_out, GPUPRIM_DTYPE_U32, want_keys, s->n, "reduce-by-key keys (the rest untouched)");
    CHECK_BUFFER_EQ(ctx, s->results, GPUPRIM_DTYPE_I32, want_results, s->n, "reduce-by-key sums");
    CHECK_BUFFER_EQ(ctx, s->lengths, GPUPRIM_DTYPE_U64, want_lengths, s->n, "reduce-by-key lengths");
    CHECK_BUFFER_EQ(ctx, s->count_out, GPUPRIM_DTYPE_U32, want_count, 2, "reduce-by-key count_out");
    free(order);
    free(first);
    free(length);
    free(want_keys);
    free(want_results);
    free(want_lengths);
    free(want_count);
}

/* --- group-by (i32 sums by u32 key, inverse), count to a buffer --------- */

typedef struct grp {
    base_t b;
    uint64_t n;
    void *keys, *values;
    gpuprim_buffer_t keys_in, values_in, keys_out, counts, results, inverse, count_out;
} grp_t;

static void *grp_setup(uint64_t n) {
    grp_t *s = (grp_t *)new_state(sizeof *s);
    s->n = n;
    s->keys = new_host(&s->b, n);
    s->values = new_host(&s->b, n);
    s->keys_in = new_input(&s->b, GPUPRIM_DTYPE_U32, n);
    s->values_in = new_input(&s->b, GPUPRIM_DTYPE_I32, n);
    s->keys_out = new_output(&s->b, GPUPRIM_DTYPE_U32, n);
    s->counts = new_output(&s->b, GPUPRIM_DTYPE_U32, n);
    s->results = new_output(&s->b, GPUPRIM_DTYPE_I32, n);
    s->inverse = new_output(&s->b, GPUPRIM_DTYPE_I64, n);
    s->count_out = new_output(&s->b, GPUPRIM_DTYPE_U64, 2);
    return s;
}

static void grp_fill(void *state, int round) {
    grp_t *s = (grp_t *)state;
    const uint64_t distinct[ROUNDS] = {7, s->n / 16 + 1, 4 * s->n, 1};
    uint64_t i;
    for (i = 0; i < s->n; ++i) tc_set(GPUPRIM_DTYPE_U32, s->keys, i, tc_below(distinct[round]));
    tc_fill(GPUPRIM_DTYPE_I32, s->values, s->n, round == 1 ? TC_SMALL_RANGE : TC_MODERATE);
    put(s->keys_in, s->keys, s->n);
    put(s->values_in, s->values, s->n);
}

static void grp_call(void *state) {
    grp_t *s = (grp_t *)state;
    CHECK_OK(gpuprim_group_by(ctx, s->keys_in, s->values_in, GPUPRIM_OP_SUM, s->keys_out, s->counts, s->results,
                              s->inverse, NULL, s->count_out));
}

static void grp_check(void *state) {
    grp_t *s = (grp_t *)state;
    uint64_t *perm = (uint64_t *)tc_xmalloc(s->n * 8 + 8), *first = (uint64_t *)tc_xmalloc(s->n * 8 + 8);
    uint64_t *length = (uint64_t *)tc_xmalloc(s->n * 8 + 8), g, j, groups;
    void *want_keys = poisoned(GPUPRIM_DTYPE_U32, s->n), *want_counts = poisoned(GPUPRIM_DTYPE_U32, s->n);
    void *want_results = poisoned(GPUPRIM_DTYPE_I32, s->n), *want_inverse = poisoned(GPUPRIM_DTYPE_I64, s->n);
    void *want_count = poisoned(GPUPRIM_DTYPE_U64, 2);
    tc_reference_sort_permutation(GPUPRIM_DTYPE_U32, s->keys, s->n, 0, perm);
    groups = tc_reference_groups(GPUPRIM_DTYPE_U32, s->keys, perm, s->n, first, length);
    for (g = 0; g < groups; ++g) {
        tc_set(GPUPRIM_DTYPE_U32, want_keys, g, tc_get(GPUPRIM_DTYPE_U32, s->keys, perm[first[g]]));
        tc_set(GPUPRIM_DTYPE_U32, want_counts, g, length[g]);
        tc_set(GPUPRIM_DTYPE_I32, want_results, g,
               tc_reference_reduce_at(GPUPRIM_OP_SUM, GPUPRIM_DTYPE_I32, s->values, perm, first[g], first[g] + length[g]));
        for (j = 0; j < length[g]; ++j) tc_set(GPUPRIM_DTYPE_I64, want_inverse, perm[first[g] + j], g);
    }
    tc_set(GPUPRIM_DTYPE_U64, want_count, 0, groups);
    CHECK_BUFFER_EQ(ctx, s->keys_out, GPUPRIM_DTYPE_U32, want_keys, s->n, "group-by keys (the rest untouched)");
    CHECK_BUFFER_EQ(ctx, s->counts, GPUPRIM_DTYPE_U32, want_counts, s->n, "group-by counts");
    CHECK_BUFFER_EQ(ctx, s->results, GPUPRIM_DTYPE_I32, want_results, s->n, "group-by sums");
    CHECK_BUFFER_EQ(ctx, s->inverse, GPUPRIM_DTYPE_I64, want_inverse, s->n, "group-by inverse");
    CHECK_BUFFER_EQ(ctx, s->count_out, GPUPRIM_DTYPE_U64, want_count, 2, "group-by count_out");
    free(perm);
    free(first);
    free(length);
    free(want_keys);
    free(want_counts);
    free(want_results);
    free(want_inverse);
    free(want_count);
}

/* --- segmented calls on CSR offsets, their offsets check deferred -------- */

/* gpuprim_context_set_offsets_check(DEFERRED) (set by the family's setup;
 * main and test_refusals set WAIT again): segmented sort of f32 pairs and
 * argsort (max_segment_length 4096, the largest sorting network), reduce
 * and scan (no promise), top-k (max_segment_length 8192), on U32 offsets
 * that each round writes anew into the same buffer: short random lengths,
 * lengths up to 4096 (one of exactly 4096), mostly empty segments, and
 * offsets that start past 0 and end before n. Outputs outside the segments
 * (and top-k's slots past a short segment) stay poisoned. */

typedef struct csr {
    base_t b;
    uint64_t n, segments, k;
    uint64_t *off; /* segments + 1, this round's */
    void *keys, *values, *x, *off_host;
    gpuprim_buffer_t offsets, keys_in, values_in, x_in, keys_out, values_out, indices, sums, scanned, topk_keys,
        topk_indices;
} csr_t;

#define CSR_SORT_PROMISE 4096
#define CSR_TOPK_PROMISE 8192

static void *csr_setup(uint64_t n) {
    csr_t *s = (csr_t *)new_state(sizeof *s);
    s->n = n;
    s->segments = n / 100 ? n / 100 : 1; /* 50 at n = 5,000, 3,000 at 300,001 */
    s->k = 5;
    s->off = (uint64_t *)new_host(&s->b, s->segments + 1);
    s->off_host = new_host(&s->b, s->segments + 1);
    s->keys = new_host(&s->b, n);
    s->values = new_host(&s->b, n);
    s->x = new_host(&s->b, n);
    s->offsets = new_input(&s->b, GPUPRIM_DTYPE_U32, s->segments + 1);
    s->keys_in = new_input(&s->b, GPUPRIM_DTYPE_F32, n);
    s->values_in = new_input(&s->b, GPUPRIM_DTYPE_U32, n);
    s->x_in = new_input(&s->b, GPUPRIM_DTYPE_I32, n);
    s->keys_out = new_output(&s->b, GPUPRIM_DTYPE_F32, n);
    s->values_out = new_output(&s->b, GPUPRIM_DTYPE_U32, n);
    s->indices = new_output(&s->b, GPUPRIM_DTYPE_I32, n);
    s->sums = new_output(&s->b, GPUPRIM_DTYPE_I32, s->segments);
    s->scanned = new_output(&s->b, GPUPRIM_DTYPE_I32, n);
    s->topk_keys = new_output(&s->b, GPUPRIM_DTYPE_F32, s->segments * s->k);
    s->topk_indices = new_output(&s->b, GPUPRIM_DTYPE_I64, s->segments * s->k);
    REQUIRE_OK(gpuprim_context_set_offsets_check(ctx, GPUPRIM_OFFSETS_CHECK_DEFERRED));
    return s;
}

/* s->off (host) into the offsets buffer. */
static void csr_put_offsets(csr_t *s) {
    uint64_t i;
    for (i = 0; i <= s->segments; ++i) tc_set(GPUPRIM_DTYPE_U32, s->off_host, i, s->off[i]);
    put(s->offsets, s->off_host, s->segments + 1);
}

static void csr_fill(void *state, int round) {
    static const tc_pattern_t patterns[ROUNDS] = {TC_MODERATE, TC_SMALL_RANGE, TC_NAN_SPARSE, TC_SORTED};
    static const uint64_t longest[ROUNDS] = {300, CSR_SORT_PROMISE, 40, 64};
    csr_t *s = (csr_t *)state;
    const uint64_t lead = round == 3 ? 11 : 0, tail = round == 3 ? 7 : 0;
    uint64_t budget = s->n > lead + tail ? s->n - lead - tail : 0, at = lead, i;
    for (i = 0; i < s->segments; ++i) {
        uint64_t length = tc_below(longest[round] + 1);
        if (round == 1 && i == 1) length = CSR_SORT_PROMISE;
        if (round == 2 && i % 3 != 0) length = 0;
        if (length > budget) length = budget;
        budget -= length;
        s->off[i] = at;
        at += length;
    }
    s->off[s->segments] = at;
    csr_put_offsets(s);
    tc_fill(GPUPRIM_DTYPE_F32, s->keys, s->n, patterns[round]);
    tc_fill(GPUPRIM_DTYPE_U32, s->values, s->n, TC_RANDOM_BITS);
    tc_fill(GPUPRIM_DTYPE_I32, s->x, s->n, round == 3 ? TC_SMALL_RANGE : TC_MODERATE);
    put(s->keys_in, s->keys, s->n);
    put(s->values_in, s->values, s->n);
    put(s->x_in, s->x, s->n);
}

static void csr_call(void *state) {
    csr_t *s = (csr_t *)state;
    gpuprim_segments_t sorts, plain, topk;
    gpuprim_sort_options_t descending;
    gpuprim_segments_init_offsets(&plain, s->offsets);
    sorts = plain;
    sorts.max_segment_length = CSR_SORT_PROMISE;
    topk = plain;
    topk.max_segment_length = CSR_TOPK_PROMISE;
    gpuprim_sort_options_init(&descending);
    descending.order = GPUPRIM_ORDER_DESCENDING;
    CHECK_OK(gpuprim_segmented_sort(ctx, &sorts, s->keys_in, s->values_in, s->keys_out, s->values_out, NULL));
    CHECK_OK(gpuprim_segmented_argsort(ctx, &sorts, s->keys_in, NULL, s->indices, &descending));
    CHECK_OK(gpuprim_segmented_reduce(ctx, GPUPRIM_OP_SUM, &plain, s->x_in, s->sums));
    CHECK_OK(gpuprim_segmented_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, &plain, s->x_in, s->scanned));
    CHECK_OK(gpuprim_segmented_topk(ctx, &topk, s->keys_in, s->k, GPUPRIM_ORDER_DESCENDING, s->topk_keys,
                                    s->topk_indices));
}

/* The sort's and argsort's outputs against the reference of this round. */
static void csr_check_sorts(csr_t *s) {
    uint64_t *perm = (uint64_t *)tc_xmalloc(s->n * sizeof *perm + 8), i, j;
    void *want_keys = poisoned(GPUPRIM_DTYPE_F32, s->n), *want_values = poisoned(GPUPRIM_DTYPE_U32, s->n);
    void *want_indices = poisoned(GPUPRIM_DTYPE_I32, s->n);
    for (i = 0; i < s->segments; ++i) {
        const uint64_t at = s->off[i], len = s->off[i + 1] - at;
        tc_reference_sort_permutation(GPUPRIM_DTYPE_F32, (const char *)s->keys + at * 4, len, 0, perm);
        for (j = 0; j < len; ++j) {
            tc_set(GPUPRIM_DTYPE_F32, want_keys, at + j, tc_get(GPUPRIM_DTYPE_F32, s->keys, at + perm[j]));
            tc_set(GPUPRIM_DTYPE_U32, want_values, at + j, tc_get(GPUPRIM_DTYPE_U32, s->values, at + perm[j]));
        }
        tc_reference_sort_permutation(GPUPRIM_DTYPE_F32, (const char *)s->keys + at * 4, len, 1, perm);
        for (j = 0; j < len; ++j) tc_set(GPUPRIM_DTYPE_I32, want_indices, at + j, perm[j]);
    }
    CHECK_BUFFER_EQ(ctx, s->keys_out, GPUPRIM_DTYPE_F32, want_keys, s->n, "segmented sort's keys (CSR, deferred)");
    CHECK_BUFFER_EQ(ctx, s->values_out, GPUPRIM_DTYPE_U32, want_values, s->n,
                    "segmented sort's values (CSR, deferred)");
    CHECK_BUFFER_EQ(ctx, s->indices, GPUPRIM_DTYPE_I32, want_indices, s->n,
                    "segmented argsort's indices (CSR, deferred)");
    free(want_keys);
    free(want_values);
    free(want_indices);
    free(perm);
}

/* Reduce, scan and top-k against the reference of this round. */
static void csr_check_rest(csr_t *s) {
    uint64_t *perm = (uint64_t *)tc_xmalloc(s->n * sizeof *perm + 8), i, j;
    void *want_sums = host_array(s->segments), *want_scan = poisoned(GPUPRIM_DTYPE_I32, s->n);
    void *want_keys = poisoned(GPUPRIM_DTYPE_F32, s->segments * s->k);
    void *want_indices = poisoned(GPUPRIM_DTYPE_I64, s->segments * s->k);
    for (i = 0; i < s->segments; ++i) {
        const uint64_t at = s->off[i], len = s->off[i + 1] - at;
        inclusive_sum_i32((const char *)s->x + at * 4, len, (char *)want_scan + at * 4);
        tc_set(GPUPRIM_DTYPE_I32, want_sums, i, len ? tc_get(GPUPRIM_DTYPE_I32, want_scan, at + len - 1) : 0);
        tc_reference_sort_permutation(GPUPRIM_DTYPE_F32, (const char *)s->keys + at * 4, len, 1, perm);
        for (j = 0; j < len && j < s->k; ++j) {
            tc_set(GPUPRIM_DTYPE_F32, want_keys, i * s->k + j, tc_get(GPUPRIM_DTYPE_F32, s->keys, at + perm[j]));
            tc_set(GPUPRIM_DTYPE_I64, want_indices, i * s->k + j, perm[j]);
        }
    }
    CHECK_BUFFER_EQ(ctx, s->sums, GPUPRIM_DTYPE_I32, want_sums, s->segments, "segmented reduce (CSR, deferred)");
    CHECK_BUFFER_EQ(ctx, s->scanned, GPUPRIM_DTYPE_I32, want_scan, s->n, "segmented scan (CSR, deferred)");
    CHECK_BUFFER_EQ(ctx, s->topk_keys, GPUPRIM_DTYPE_F32, want_keys, s->segments * s->k,
                    "segmented top-k keys (CSR, deferred)");
    CHECK_BUFFER_EQ(ctx, s->topk_indices, GPUPRIM_DTYPE_I64, want_indices, s->segments * s->k,
                    "segmented top-k indices (CSR, deferred)");
    free(want_sums);
    free(want_scan);
    free(want_keys);
    free(want_indices);
    free(perm);
}

static void csr_check(void *state) {
    csr_t *s = (csr_t *)state;
    CHECK_OK(gpuprim_context_check_deferred(ctx)); /* good offsets: nothing to report */
    csr_check_sorts(s);
    csr_check_rest(s);
}

static const family_t families[] = {
    {"sort of u32 keys (ascending; out of place and in place)", sort_u32_setup, sort_keys_fill, sort_keys_call,
     sort_keys_check},
    {"sort of f32 keys (descending; out of place and in place)", sort_f32_setup, sort_keys_fill, sort_keys_call,
     sort_keys_check},
    {"sort of pairs and argsort", pairs_setup, pairs_fill, pairs_call, pairs_check},
    {"inclusive i32 sum scan", scan_setup, scan_fill, scan_call, scan_check},
    {"reduce and dot to a buffer", reduce_setup, reduce_fill, reduce_call, reduce_check},
    {"segmented sort, reduce and scan on uniform rows", rows_setup, rows_fill, rows_call, rows_check},
    {"top-k on uniform rows and flat", topk_setup, topk_fill, topk_call, topk_check},
    {"searchsorted", search_setup, search_fill, search_call, search_check},
    {"histograms", hist_setup, hist_fill, hist_call, hist_check},
    {"merge", merge_setup, merge_fill, merge_call, merge_check},
    {"select and partition, count to a buffer", sel_setup, sel_fill, sel_call, sel_check},
    {"unique and run-length encode, count to a buffer", runs_setup, runs_fill, runs_call, runs_check},
    {"reduce-by-key, count to a buffer", rbk_setup, rbk_fill, rbk_call, rbk_check},
    {"group-by, count to a buffer", grp_setup, grp_fill, grp_call, grp_check},
    {"segmented sort, argsort, reduce, scan and top-k on CSR offsets, their check deferred", csr_setup, csr_fill,
     csr_call, csr_check},
};

/* One family at n: warm-up, hold, capture, three replays on new data. */
static void run_family(const family_t *f, uint64_t n) {
    void *state;
    base_t *b;
    cudaGraphExec_t exec;
    uint64_t held;
    int round;

    tc_where("%s, n = %llu: setup", f->name, (unsigned long long)n);
    state = f->setup(n);
    b = (base_t *)state;

    /* Warm-up, uncaptured: the workspace grows to what these shapes need. */
    tc_where("%s, n = %llu: warm-up (uncaptured)", f->name, (unsigned long long)n);
    CHECK_OK(gpuprim_context_reserve_workspace(ctx, 0, 0)); /* let go: the warm-up may grow it */
    f->fill(state, 0);
    poison_outputs(b);
    f->call(state);
    f->check(state);
    CHECK_OK(gpuprim_context_reserve_workspace(ctx, 0, 1)); /* hold it still from here */
    held = workspace_size();

    /* Capture: nothing runs, the outputs stay poisoned. */
    tc_where("%s, n = %llu: capture", f->name, (unsigned long long)n);
    poison_outputs(b);
    begin_capture(stream);
    f->call(state);
    exec = end_capture(stream, NULL);
    check_poisoned(b, "after the capture, before any launch (a captured call ran)");

    for (round = 1; round < ROUNDS && exec; ++round) {
        tc_where("%s, n = %llu: replay %d on new data", f->name, (unsigned long long)n, round);
        f->fill(state, round);
        poison_outputs(b);
        if (!replay(exec, stream)) break;
        f->check(state);
    }
    CHECKF(workspace_size() == held, "the held workspace changed size: %llu bytes, held %llu",
           (unsigned long long)workspace_size(), (unsigned long long)held);
    destroy_exec(exec);
    free_state(state);
}

/* Ends a capture that must have recorded nothing: its graph has no nodes. */
static void end_empty_capture(cudaStream_t s, const char *what) {
    cudaGraph_t graph = NULL;
    size_t nodes = 0;
    if (!CUDA_OK(cudaStreamEndCapture(s, &graph)) || !graph) return;
    if (CUDA_OK(cudaGraphGetNodes(graph, NULL, &nodes)))
        CHECKF(nodes == 0, "%s: the graph has %llu nodes, expected none", what, (unsigned long long)nodes);
    CUDA_OK(cudaGraphDestroy(graph));
}

/* One family at n sized by a workspace query instead of a warm-up: from a
 * released workspace, the calls measured in a query made while the stream
 * captures (the graph gets no nodes, nothing is allocated, the outputs stay
 * poisoned), the query's sizes reserved held still
 * (gpuprim_context_reserve_workspace_sizes with fix), then captured and
 * replayed as run_family does, the workspace never growing. */
static void run_family_by_query(const family_t *f, uint64_t n) {
    gpuprim_workspace_sizes_t sizes;
    void *state;
    base_t *b;
    cudaGraphExec_t exec;
    uint64_t held;
    int round;

    tc_where("%s, n = %llu, sized by a query: setup", f->name, (unsigned long long)n);
    state = f->setup(n);
    b = (base_t *)state;
    CHECK_OK(gpuprim_context_release_workspace(ctx));
    CHECK(workspace_size() == 0);

    tc_where("%s, n = %llu: workspace query while capturing", f->name, (unsigned long long)n);
    memset(&sizes, 0, sizeof sizes);
    sizes.struct_size = sizeof sizes;
    f->fill(state, 0);
    poison_outputs(b);
    begin_capture(stream);
    CHECK_OK(gpuprim_context_begin_workspace_query(ctx));
    f->call(state);
    CHECK_OK(gpuprim_context_end_workspace_query(ctx, &sizes));
    CHECKF(capture_state(stream) == 1, "the capture did not survive the query");
    end_empty_capture(stream, "a workspace query");
    CUDA_OK(cudaStreamSynchronize(stream));
    check_poisoned(b, "after a workspace query (a measured call ran)");
    CHECKF(workspace_size() == 0, "the query allocated workspace: %llu bytes", (unsigned long long)workspace_size());

    tc_where("%s, n = %llu: the query's sizes held, capture", f->name, (unsigned long long)n);
    CHECK_OK(gpuprim_context_reserve_workspace_sizes(ctx, &sizes, 1));
    held = workspace_size();
    begin_capture(stream);
    f->call(state);
    exec = end_capture(stream, NULL);
    check_poisoned(b, "after the capture, before any launch (a captured call ran)");
    for (round = 1; round < ROUNDS && exec; ++round) {
        tc_where("%s, n = %llu, sized by a query: replay %d on new data", f->name, (unsigned long long)n, round);
        f->fill(state, round);
        poison_outputs(b);
        if (!replay(exec, stream)) break;
        f->check(state);
    }
    CHECKF(workspace_size() == held, "the held workspace changed size: %llu bytes, held %llu",
           (unsigned long long)workspace_size(), (unsigned long long)held);
    destroy_exec(exec);
    CHECK_OK(gpuprim_context_reserve_workspace(ctx, 0, 0));
    free_state(state);
}

/* ------------------------------------------------------------------------ */
/* Deferred checks in replays                                               */
/* ------------------------------------------------------------------------ */

/* The number the context's last error gives a deferred failure ("(call N
 * on CSR offsets"), or 0. */
static uint64_t reported_call(void) {
    const char *message = gpuprim_context_last_error(ctx);
    const char *at = message ? strstr(message, "(call ") : NULL;
    unsigned long long call = 0;
    if (!at || sscanf(at, "(call %llu on CSR offsets", &call) != 1) return 0;
    return (uint64_t)call;
}

/* The CSR family's graph replayed on bad offsets (its calls write nothing,
 * check_deferred reports the captured sort's number and the four others),
 * on offsets that break the sorts' promise only (the sorts write nothing,
 * the others run), and on good offsets again. */
static void test_csr_deferred_replays(uint64_t n) {
    csr_t *s;
    cudaGraphExec_t exec;
    uint64_t first = 0, i;
    char fault[256];
    int replays;

    tc_where("deferred replays, n = %llu: setup", (unsigned long long)n);
    s = (csr_t *)csr_setup(n);
    CHECK_OK(gpuprim_context_reserve_workspace(ctx, 0, 0));
    /* a bad call outside capture first: its number gives the captured calls' */
    csr_fill(s, 0);
    s->off[s->segments] = n + 1;
    csr_put_offsets(s);
    poison_outputs(&s->b);
    {
        gpuprim_segments_t plain;
        gpuprim_segments_init_offsets(&plain, s->offsets);
        CHECK_OK(gpuprim_segmented_reduce(ctx, GPUPRIM_OP_SUM, &plain, s->x_in, s->sums));
    }
    CHECK_STATUS(gpuprim_context_check_deferred(ctx), GPUPRIM_ERROR_INVALID_ARGUMENT);
    first = reported_call();
    CHECKF(first > 0, "no call number in \"%s\"", gpuprim_context_last_error(ctx));
    check_poisoned(&s->b, "after an uncaptured call on bad offsets");
    /* warm-up (calls first + 1 to first + 5), then the capture (+ 6 to + 10) */
    csr_fill(s, 0);
    poison_outputs(&s->b);
    csr_call(s);
    csr_check(s);
    CHECK_OK(gpuprim_context_reserve_workspace(ctx, 0, 1));
    poison_outputs(&s->b);
    begin_capture(stream);
    csr_call(s);
    exec = end_capture(stream, NULL);
    check_poisoned(&s->b, "after the capture, before any launch (a captured call ran)");

    for (replays = 0; replays < 2 && exec; ++replays) {
        tc_where("deferred replays, n = %llu: a replay on bad offsets (%d)", (unsigned long long)n, replays);
        csr_fill(s, 1 + replays);
        if (replays == 0) {
            s->off[s->segments] = n + 1; /* the last past the end */
            snprintf(fault, sizeof fault,
                     "segment offsets: offsets[%llu] = %llu is past the end of the data (%llu elements)",
                     (unsigned long long)s->segments, (unsigned long long)(n + 1), (unsigned long long)n);
        } else {
            i = s->segments / 2;
            if (s->off[i - 1] == 0) s->off[i - 1] = 2; /* every one before is 0 too */
            s->off[i] = s->off[i - 1] - 1;
            snprintf(fault, sizeof fault,
                     "segment offsets: offsets[%llu] = %llu is less than offsets[%llu] = %llu (offsets must not "
                     "decrease)",
                     (unsigned long long)i, (unsigned long long)s->off[i], (unsigned long long)(i - 1),
                     (unsigned long long)s->off[i - 1]);
        }
        csr_put_offsets(s);
        poison_outputs(&s->b);
        if (!replay(exec, stream)) break;
        check_poisoned(&s->b, "after a replay on bad offsets");
        CHECK_STATUS(gpuprim_context_check_deferred(ctx), GPUPRIM_ERROR_INVALID_ARGUMENT);
        CHECK_MESSAGE(ctx, "gpuprim_segmented_sort (call ");
        CHECK_MESSAGE(ctx, fault);
        CHECK_MESSAGE(ctx, "; 4 more call(s) on offsets failed their deferred check after it");
        CHECKF(reported_call() == first + 6, "a replay reports call %llu, the captured sort was call %llu",
               (unsigned long long)reported_call(), (unsigned long long)(first + 6));
        CHECK_OK(gpuprim_context_check_deferred(ctx));
    }

    if (exec && n > CSR_SORT_PROMISE) {
        tc_where("deferred replays, n = %llu: a segment past the sorts' promise", (unsigned long long)n);
        csr_fill(s, 0);
        s->off[0] = 0;
        s->off[1] = CSR_SORT_PROMISE + 1;
        for (i = 2; i <= s->segments; ++i) s->off[i] = s->off[1] + (i - 1 < n - s->off[1] ? i - 1 : n - s->off[1]);
        csr_put_offsets(s);
        poison_outputs(&s->b);
        if (replay(exec, stream)) {
            /* the sort and argsort fail their check and write nothing; the others run */
            CHECK_STATUS(gpuprim_context_synchronize(ctx), GPUPRIM_ERROR_INVALID_ARGUMENT);
            snprintf(fault, sizeof fault,
                     "segments: segment 0 has %llu elements, more than segments->max_segment_length = %llu",
                     (unsigned long long)(CSR_SORT_PROMISE + 1), (unsigned long long)CSR_SORT_PROMISE);
            CHECK_MESSAGE(ctx, "gpuprim_segmented_sort (call ");
            CHECK_MESSAGE(ctx, fault);
            CHECK_MESSAGE(ctx, "; 1 more call(s) on offsets failed their deferred check after it");
            CHECK_OK(gpuprim_context_check_deferred(ctx));
            {
                void *want = poisoned(GPUPRIM_DTYPE_F32, n);
                CHECK_BUFFER_EQ(ctx, s->keys_out, GPUPRIM_DTYPE_F32, want, n, "sort's keys past its promise");
                free(want);
                want = poisoned(GPUPRIM_DTYPE_U32, n);
                CHECK_BUFFER_EQ(ctx, s->values_out, GPUPRIM_DTYPE_U32, want, n, "sort's values past its promise");
                free(want);
                want = poisoned(GPUPRIM_DTYPE_I32, n);
                CHECK_BUFFER_EQ(ctx, s->indices, GPUPRIM_DTYPE_I32, want, n, "argsort's indices past its promise");
                free(want);
            }
            csr_check_rest(s);
        }
    }

    for (replays = 0; replays < 2 && exec; ++replays) {
        tc_where("deferred replays, n = %llu: good offsets again (%d)", (unsigned long long)n, replays);
        csr_fill(s, 3 - replays);
        poison_outputs(&s->b);
        if (!replay(exec, stream)) break;
        csr_check(s);
    }
    destroy_exec(exec);
    CHECK_OK(gpuprim_context_reserve_workspace(ctx, 0, 0));
    REQUIRE_OK(gpuprim_context_set_offsets_check(ctx, GPUPRIM_OFFSETS_CHECK_WAIT));
    free_state(s);
}

/* ------------------------------------------------------------------------ */
/* Refusals during capture                                                  */
/* ------------------------------------------------------------------------ */

/* The frame around each refused call: a capture holding a scan before the
 * refused call and another after it; at the end the graph must replay both
 * on new data. */
typedef struct frame {
    uint64_t n;
    void *x;
    gpuprim_buffer_t in, scan_a, scan_b;
    size_t nodes; /* of the two scans' graph alone */
} frame_t;
static frame_t frame;

static void frame_setup(uint64_t n) {
    frame.n = n;
    frame.x = host_array(n);
    tc_fill(GPUPRIM_DTYPE_I32, frame.x, n, TC_MODERATE);
    frame.in = tc_buffer_from(ctx, GPUPRIM_DTYPE_I32, frame.x, n);
    frame.scan_a = tc_buffer(ctx, GPUPRIM_DTYPE_I32, n);
    frame.scan_b = tc_buffer(ctx, GPUPRIM_DTYPE_I32, n);
    /* warm-up of both scans */
    CHECK_OK(gpuprim_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, frame.in, frame.scan_a));
    CHECK_OK(gpuprim_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_EXCLUSIVE, frame.in, frame.scan_b));
    CHECK_OK(gpuprim_context_synchronize(ctx));
}

/* The nodes of the frame's graph with nothing between its two scans: a
 * refused call (NOT_CAPTURABLE) enqueues nothing, so its frame's graph must
 * have as many. Called with the workspace as the frames will have it. */
static void frame_baseline(void) {
    cudaGraphExec_t exec;
    tc_where("refusals: the frame's graph without a refused call");
    begin_capture(stream);
    CHECK_OK(gpuprim_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, frame.in, frame.scan_a));
    CHECK_OK(gpuprim_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_EXCLUSIVE, frame.in, frame.scan_b));
    exec = end_capture(stream, &frame.nodes);
    destroy_exec(exec);
}

static void frame_free(void) {
    CHECK_OK(gpuprim_buffer_destroy(ctx, frame.in));
    CHECK_OK(gpuprim_buffer_destroy(ctx, frame.scan_a));
    CHECK_OK(gpuprim_buffer_destroy(ctx, frame.scan_b));
    free(frame.x);
}

static void frame_open(const char *what) {
    tc_where("refused during capture: %s", what);
    tc_poison(ctx, frame.scan_a, GPUPRIM_DTYPE_I32, frame.n);
    tc_poison(ctx, frame.scan_b, GPUPRIM_DTYPE_I32, frame.n);
    begin_capture(stream);
    CHECK_OK(gpuprim_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, frame.in, frame.scan_a));
}

/* After the refused call: the capture is still active and takes another
 * call, ends, instantiates; two replays on new data compute both scans.
 * same_nodes: the refused call must have added no node to the graph
 * (NOT_CAPTURABLE: refused before anything was enqueued). */
static void frame_close(int same_nodes) {
    cudaGraphExec_t exec;
    size_t nodes = 0;
    int replays;
    CHECKF(capture_state(stream) == 1, "the capture is no longer active after the refused call");
    CHECK_OK(gpuprim_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_EXCLUSIVE, frame.in, frame.scan_b));
    exec = end_capture(stream, &nodes);
    if (exec && same_nodes)
        CHECKF(nodes == frame.nodes, "the refused call left %lld node(s) in the graph (%llu nodes, %llu without it)",
               (long long)nodes - (long long)frame.nodes, (unsigned long long)nodes,
               (unsigned long long)frame.nodes);
    for (replays = 0; replays < 2 && exec; ++replays) {
        void *want_a = host_array(frame.n), *want_b = host_array(frame.n);
        uint64_t i;
        tc_fill(GPUPRIM_DTYPE_I32, frame.x, frame.n, replays ? TC_SMALL_RANGE : TC_MODERATE);
        put(frame.in, frame.x, frame.n);
        tc_poison(ctx, frame.scan_a, GPUPRIM_DTYPE_I32, frame.n);
        tc_poison(ctx, frame.scan_b, GPUPRIM_DTYPE_I32, frame.n);
        if (replay(exec, stream)) {
            inclusive_sum_i32(frame.x, frame.n, want_a);
            tc_set(GPUPRIM_DTYPE_I32, want_b, 0, 0);
            for (i = 1; i < frame.n; ++i) tc_set(GPUPRIM_DTYPE_I32, want_b, i, tc_get(GPUPRIM_DTYPE_I32, want_a, i - 1));
            CHECK_BUFFER_EQ(ctx, frame.scan_a, GPUPRIM_DTYPE_I32, want_a, frame.n,
                            "the scan captured before the refused call");
            CHECK_BUFFER_EQ(ctx, frame.scan_b, GPUPRIM_DTYPE_I32, want_b, frame.n,
                            "the scan captured after the refused call");
        }
        free(want_a);
        free(want_b);
    }
    destroy_exec(exec);
}

#define CHECK_REFUSED(call)                                       \
    do {                                                          \
        CHECK_STATUS(call, GPUPRIM_ERROR_NOT_CAPTURABLE);         \
        CHECK_MESSAGE(ctx, "CUDA graph");                         \
    } while (0)

/* The big sort: u32 keys whose extra copy alone is well past the held
 * workspace. */
typedef struct big_sort {
    uint64_t n;
    uint32_t *keys;
    gpuprim_buffer_t in;
    tc_known_t out; /* poisoned, and its host copy */
} big_sort_t;

static int compare_u32(const void *a, const void *b) {
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static void big_fill(big_sort_t *big) {
    uint64_t i;
    for (i = 0; i < big->n; ++i) big->keys[i] = (uint32_t)tc_rand();
    put(big->in, big->keys, big->n);
}

/* big->out holds the keys sorted (the keys of the last fill). */
static void big_check_sorted(big_sort_t *big, const char *what) {
    uint32_t *want = (uint32_t *)tc_xmalloc(big->n * 4 + 8);
    memcpy(want, big->keys, big->n * 4);
    qsort(want, big->n, 4, compare_u32);
    CHECK_BUFFER_EQ(ctx, big->out.b, GPUPRIM_DTYPE_U32, want, big->n, what);
    free(want);
}

static void big_repoison(big_sort_t *big) {
    tc_poison_host(GPUPRIM_DTYPE_U32, big->out.host, big->n);
    put(big->out.b, big->out.host, big->n);
}

static void test_refusals(void) {
    const uint64_t n = 5000;
    gpuprim_predicate_t greater;
    gpuprim_segments_t csr;
    gpuprim_buffer_t values, seg_keys, offsets, made;
    tc_known_t victim, seg_out, seg_sums, topk_keys, topk_indices, sel_out, sel_count, unique_out, rbk_out, grp_out;
    /* the deferred refusals: 8-byte pairs, argsort indices, 9,000 keys in 2 segments */
    gpuprim_segments_t promised, long_csr;
    gpuprim_buffer_t long_keys, long_offsets;
    tc_known_t seg_indices, long_topk;
    static const uint64_t long_offsets_host[3] = {0, 100, 9000};
    static const int32_t zero = 0;
    static const uint64_t offsets_host[5] = {0, 1000, 1000, 3500, 5000}; /* an empty segment too */
    uint32_t fresh[64], downloaded[64], sorted_victim[64];
    int32_t host_result = 0x5A5A5A5A;
    uint64_t index = 77, count = 77, held, i;
    gpuprim_status_t status;
    big_sort_t big;
    void *host;
    cudaGraphExec_t exec;

    tc_where("refusals: setup");
    REQUIRE_OK(gpuprim_context_set_offsets_check(ctx, GPUPRIM_OFFSETS_CHECK_WAIT)); /* CSR calls refused below */
    CHECK_OK(gpuprim_context_reserve_workspace(ctx, 0, 0));
    frame_setup(n);
    CHECK_OK(gpuprim_context_reserve_workspace(ctx, 0, 1));
    held = workspace_size();
    frame_baseline();

    host = host_array(n);
    tc_fill(GPUPRIM_DTYPE_I32, host, n, TC_MODERATE);
    values = tc_buffer_from(ctx, GPUPRIM_DTYPE_I32, host, n);
    tc_fill(GPUPRIM_DTYPE_F32, host, n, TC_MODERATE);
    seg_keys = tc_buffer_from(ctx, GPUPRIM_DTYPE_F32, host, n);
    free(host);
    offsets = tc_buffer_from(ctx, GPUPRIM_DTYPE_U64, offsets_host, 5);
    gpuprim_segments_init_offsets(&csr, offsets);
    host = host_array(9000);
    tc_fill(GPUPRIM_DTYPE_F32, host, 9000, TC_MODERATE);
    long_keys = tc_buffer_from(ctx, GPUPRIM_DTYPE_F32, host, 9000);
    free(host);
    long_offsets = tc_buffer_from(ctx, GPUPRIM_DTYPE_U64, long_offsets_host, 3);
    gpuprim_segments_init_offsets(&long_csr, long_offsets);
    seg_indices = tc_known(ctx, GPUPRIM_DTYPE_I32, n);
    long_topk = tc_known(ctx, GPUPRIM_DTYPE_F32, 2 * 5);
    victim = tc_known(ctx, GPUPRIM_DTYPE_U32, 64);
    seg_out = tc_known(ctx, GPUPRIM_DTYPE_F32, n);
    seg_sums = tc_known(ctx, GPUPRIM_DTYPE_I32, 4);
    topk_keys = tc_known(ctx, GPUPRIM_DTYPE_F32, 4 * 5);
    topk_indices = tc_known(ctx, GPUPRIM_DTYPE_I32, 4 * 5);
    sel_out = tc_known(ctx, GPUPRIM_DTYPE_I32, n);
    sel_count = tc_known(ctx, GPUPRIM_DTYPE_U32, 2);
    unique_out = tc_known(ctx, GPUPRIM_DTYPE_I32, n);
    rbk_out = tc_known(ctx, GPUPRIM_DTYPE_I32, n);
    grp_out = tc_known(ctx, GPUPRIM_DTYPE_I32, n);
    memset(&greater, 0, sizeof greater);
    greater.kind = GPUPRIM_KEEP_GREATER;
    greater.scalar = &zero;
    for (i = 0; i < 64; ++i) fresh[i] = (uint32_t)tc_rand();

    /* Results to the host. */
    frame_open("gpuprim_reduce to the host");
    CHECK_REFUSED(gpuprim_reduce(ctx, GPUPRIM_OP_SUM, frame.in, &host_result));
    frame_close(1);
    CHECKF(host_result == 0x5A5A5A5A, "gpuprim_reduce wrote its result: %d", (int)host_result);

    frame_open("gpuprim_dot to the host");
    CHECK_REFUSED(gpuprim_dot(ctx, frame.in, values, &host_result));
    frame_close(1);
    CHECKF(host_result == 0x5A5A5A5A, "gpuprim_dot wrote its result: %d", (int)host_result);

    frame_open("gpuprim_argreduce");
    CHECK_REFUSED(gpuprim_argreduce(ctx, GPUPRIM_OP_MAX, frame.in, &index));
    frame_close(1);
    CHECKF(index == 77, "gpuprim_argreduce wrote its index: %llu", (unsigned long long)index);

    frame_open("gpuprim_context_synchronize");
    CHECK_STATUS(gpuprim_context_synchronize(ctx), GPUPRIM_ERROR_NOT_CAPTURABLE);
    frame_close(1);

    /* Copies between host and device. */
    frame_open("gpuprim_buffer_upload");
    CHECK_STATUS(gpuprim_buffer_upload(ctx, victim.b, 0, fresh, 64), GPUPRIM_ERROR_NOT_CAPTURABLE);
    frame_close(1);
    TC_CHECK_UNCHANGED(ctx, victim);

    frame_open("gpuprim_buffer_download");
    memset(downloaded, 0xAB, sizeof downloaded);
    CHECK_STATUS(gpuprim_buffer_download(ctx, victim.b, 0, downloaded, 64), GPUPRIM_ERROR_NOT_CAPTURABLE);
    frame_close(1);
    for (i = 0; i < 64; ++i)
        if (downloaded[i] != 0xABABABABu) break;
    CHECKF(i == 64, "gpuprim_buffer_download wrote host memory (element %llu)", (unsigned long long)i);

    /* Buffers made and destroyed. */
    frame_open("gpuprim_buffer_create");
    made = victim.b;
    CHECK_STATUS(gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U32, 1000, &made), GPUPRIM_ERROR_NOT_CAPTURABLE);
    frame_close(1);
    CHECK(made == victim.b);

    frame_open("gpuprim_buffer_destroy of an owned buffer");
    CHECK_STATUS(gpuprim_buffer_destroy(ctx, victim.b), GPUPRIM_ERROR_NOT_CAPTURABLE);
    frame_close(1);
    TC_CHECK_UNCHANGED(ctx, victim); /* alive, its contents as they were */
    CHECK_OK(gpuprim_buffer_upload(ctx, victim.b, 0, fresh, 64));
    CHECK_OK(gpuprim_sort(ctx, victim.b, NULL, victim.b, NULL, GPUPRIM_ORDER_ASCENDING));
    memcpy(sorted_victim, fresh, sizeof fresh);
    qsort(sorted_victim, 64, 4, compare_u32);
    CHECK_BUFFER_EQ(ctx, victim.b, GPUPRIM_DTYPE_U32, sorted_victim, 64, "the buffer destroy refused, used after");

    /* The workspace given back or grown. */
    frame_open("gpuprim_context_release_workspace");
    CHECK_STATUS(gpuprim_context_release_workspace(ctx), GPUPRIM_ERROR_NOT_CAPTURABLE);
    frame_close(1); /* its replays also need the workspace where it was */
    CHECKF(workspace_size() == held, "release refused, yet the workspace is %llu bytes (held %llu)",
           (unsigned long long)workspace_size(), (unsigned long long)held);

    frame_open("gpuprim_context_reserve_workspace growing the workspace");
    CHECK_STATUS(gpuprim_context_reserve_workspace(ctx, held + (64u << 20), 1), GPUPRIM_ERROR_NOT_CAPTURABLE);
    /* No growth is not among the refusals; any call may still say NOT_CAPTURABLE while capturing. */
    status = gpuprim_context_reserve_workspace(ctx, 0, 1);
    CHECKF(status == GPUPRIM_SUCCESS || status == GPUPRIM_ERROR_NOT_CAPTURABLE,
           "gpuprim_context_reserve_workspace(ctx, 0, 1) while capturing returned %d (%s)", (int)status,
           gpuprim_get_error_string(status));
    frame_close(1);
    CHECKF(workspace_size() == held, "growth refused, yet the workspace is %llu bytes (held %llu)",
           (unsigned long long)workspace_size(), (unsigned long long)held);

    /* Segmented calls on CSR offsets. */
    frame_open("gpuprim_segmented_sort on CSR offsets");
    CHECK_REFUSED(gpuprim_segmented_sort(ctx, &csr, seg_keys, NULL, seg_out.b, NULL, NULL));
    frame_close(1);
    TC_CHECK_UNCHANGED(ctx, seg_out);

    frame_open("gpuprim_segmented_reduce on CSR offsets");
    CHECK_REFUSED(gpuprim_segmented_reduce(ctx, GPUPRIM_OP_SUM, &csr, frame.in, seg_sums.b));
    frame_close(1);
    TC_CHECK_UNCHANGED(ctx, seg_sums);

    frame_open("gpuprim_segmented_topk on CSR offsets");
    CHECK_REFUSED(gpuprim_segmented_topk(ctx, &csr, seg_keys, 5, GPUPRIM_ORDER_DESCENDING, topk_keys.b,
                                         topk_indices.b));
    frame_close(1);
    TC_CHECK_UNCHANGED(ctx, topk_keys);
    TC_CHECK_UNCHANGED(ctx, topk_indices);

    /* The same with their offsets check deferred: captured (the CSR family),
     * except a segmented sort whose segments may be longer than the largest
     * sorting network (4096 keys; less for 8-byte keys with 8-byte values)
     * and a top-k whose segments may be longer than 8192 keys: "may" by
     * max_segment_length when given, else by n. check_deferred waits.
     * First, uncaptured, the deferred reduce captured below: the workspace
     * (let go, then held again) holds what it needs. */
    tc_where("refusals: a deferred segmented reduce warmed up");
    REQUIRE_OK(gpuprim_context_set_offsets_check(ctx, GPUPRIM_OFFSETS_CHECK_DEFERRED));
    CHECK_OK(gpuprim_context_reserve_workspace(ctx, 0, 0));
    CHECK_OK(gpuprim_segmented_reduce(ctx, GPUPRIM_OP_SUM, &csr, frame.in, seg_sums.b));
    CHECK_OK(gpuprim_context_check_deferred(ctx));
    put(seg_sums.b, seg_sums.host, 4);
    CHECK_OK(gpuprim_context_reserve_workspace(ctx, 0, 1));
    held = workspace_size();
    frame_baseline();
    frame_open("deferred gpuprim_segmented_sort on CSR offsets, no promise, n = 5,000 > 4,096");
    CHECK_REFUSED(gpuprim_segmented_sort(ctx, &csr, seg_keys, NULL, seg_out.b, NULL, NULL));
    frame_close(1);
    TC_CHECK_UNCHANGED(ctx, seg_out);

    promised = csr;
    promised.max_segment_length = 4097;
    frame_open("deferred gpuprim_segmented_sort and _argsort on CSR offsets, max_segment_length 4,097");
    CHECK_REFUSED(gpuprim_segmented_sort(ctx, &promised, seg_keys, NULL, seg_out.b, NULL, NULL));
    CHECK_REFUSED(gpuprim_segmented_argsort(ctx, &promised, seg_keys, NULL, seg_indices.b, NULL));
    frame_close(1);
    TC_CHECK_UNCHANGED(ctx, seg_out);
    TC_CHECK_UNCHANGED(ctx, seg_indices);

    /* The bound is the promise or n, whichever is less: a promise of 8193
     * over n = 9000 keys (n = 5000 would bound the segments at 5000). */
    promised = long_csr;
    promised.max_segment_length = 8193;
    frame_open("deferred gpuprim_segmented_topk on CSR offsets, max_segment_length 8,193, n = 9,000");
    CHECK_REFUSED(gpuprim_segmented_topk(ctx, &promised, long_keys, 5, GPUPRIM_ORDER_DESCENDING, long_topk.b,
                                         NULL));
    frame_close(1);
    TC_CHECK_UNCHANGED(ctx, long_topk);

    frame_open("deferred gpuprim_segmented_topk on CSR offsets, no promise, n = 9,000 > 8,192");
    CHECK_REFUSED(gpuprim_segmented_topk(ctx, &long_csr, long_keys, 5, GPUPRIM_ORDER_DESCENDING, long_topk.b,
                                         NULL));
    frame_close(1);
    TC_CHECK_UNCHANGED(ctx, long_topk);

    frame_open("gpuprim_context_check_deferred");
    CHECK_STATUS(gpuprim_context_check_deferred(ctx), GPUPRIM_ERROR_NOT_CAPTURABLE);
    frame_close(1);

    /* a deferred reduce between the frame's scans is captured, and replays */
    frame_open("deferred gpuprim_segmented_reduce on CSR offsets, captured between the scans");
    CHECK_OK(gpuprim_segmented_reduce(ctx, GPUPRIM_OP_SUM, &csr, frame.in, seg_sums.b));
    frame_close(0);
    CHECK_OK(gpuprim_context_check_deferred(ctx)); /* the refusals kept nothing */
    {
        int32_t want[4] = {0, 0, 0, 0};
        uint64_t s;
        for (s = 0; s < 4; ++s)
            for (i = offsets_host[s]; i < offsets_host[s + 1]; ++i)
                want[s] = (int32_t)((uint32_t)want[s] + (uint32_t)tc_get(GPUPRIM_DTYPE_I32, frame.x, i));
        CHECK_BUFFER_EQ(ctx, seg_sums.b, GPUPRIM_DTYPE_I32, want, 4,
                        "a deferred segmented reduce captured in the frame, after its last replay");
        tc_poison_host(GPUPRIM_DTYPE_I32, seg_sums.host, 4);
        put(seg_sums.b, seg_sums.host, 4);
    }
    REQUIRE_OK(gpuprim_context_set_offsets_check(ctx, GPUPRIM_OFFSETS_CHECK_WAIT));

    /* Counts to the host. */
    frame_open("gpuprim_select with the count to the host");
    CHECK_REFUSED(gpuprim_select(ctx, frame.in, NULL, &greater, sel_out.b, NULL, NULL, &count, NULL));
    frame_close(1);
    TC_CHECK_UNCHANGED(ctx, sel_out);
    CHECKF(count == 77, "*count written by a refused select: %llu", (unsigned long long)count);

    frame_open("gpuprim_select with the count to the host and to a buffer");
    CHECK_REFUSED(gpuprim_select(ctx, frame.in, NULL, &greater, sel_out.b, NULL, NULL, &count, sel_count.b));
    frame_close(1);
    TC_CHECK_UNCHANGED(ctx, sel_out);
    TC_CHECK_UNCHANGED(ctx, sel_count);
    CHECKF(count == 77, "*count written by a refused select: %llu", (unsigned long long)count);

    frame_open("gpuprim_unique with the count to the host");
    CHECK_REFUSED(gpuprim_unique(ctx, frame.in, NULL, unique_out.b, NULL, &count, NULL));
    frame_close(1);
    TC_CHECK_UNCHANGED(ctx, unique_out);
    CHECKF(count == 77, "*count written by a refused unique: %llu", (unsigned long long)count);

    frame_open("gpuprim_reduce_by_key with the count to the host");
    CHECK_REFUSED(gpuprim_reduce_by_key(ctx, frame.in, values, GPUPRIM_OP_SUM, NULL, rbk_out.b, NULL, &count, NULL));
    frame_close(1);
    TC_CHECK_UNCHANGED(ctx, rbk_out);
    CHECKF(count == 77, "*count written by a refused reduce-by-key: %llu", (unsigned long long)count);

    frame_open("gpuprim_group_by with the count to the host");
    CHECK_REFUSED(gpuprim_group_by(ctx, frame.in, NULL, GPUPRIM_OP_SUM, grp_out.b, NULL, NULL, NULL, &count, NULL));
    frame_close(1);
    TC_CHECK_UNCHANGED(ctx, grp_out);
    CHECKF(count == 77, "*count written by a refused group-by: %llu", (unsigned long long)count);

    /* A sort whose workspace would have to grow. */
    tc_where("refusals: the big sort's buffers");
    big.n = held / 2 + (1u << 20); /* keys of 4 bytes: one copy is twice the held workspace, and more */
    if (big.n > (1ull << 25)) big.n = 1ull << 25;
    printf("test_graph_capture: workspace held at %llu bytes; the big sort has %llu keys\n",
           (unsigned long long)held, (unsigned long long)big.n);
    big.keys = (uint32_t *)tc_xmalloc(big.n * 4 + 8);
    big.in = tc_buffer(ctx, GPUPRIM_DTYPE_U32, big.n);
    big.out = tc_known(ctx, GPUPRIM_DTYPE_U32, big.n);
    big_fill(&big);

    frame_open("a sort needing more workspace, the workspace held (OUT_OF_MEMORY)");
    CHECK_STATUS(gpuprim_sort(ctx, big.in, NULL, big.out.b, NULL, GPUPRIM_ORDER_ASCENDING),
                 GPUPRIM_ERROR_OUT_OF_MEMORY);
    CHECK_MESSAGE(ctx, "held");
    frame_close(0); /* OUT_OF_MEMORY, not NOT_CAPTURABLE: its buffers unchanged is what is promised */
    TC_CHECK_UNCHANGED(ctx, big.out);
    CHECKF(workspace_size() == held, "the held workspace is %llu bytes after the refused sort (held %llu)",
           (unsigned long long)workspace_size(), (unsigned long long)held);

    tc_where("refusals: the workspace let go");
    CHECK_OK(gpuprim_context_reserve_workspace(ctx, 0, 0));
    frame_open("a sort needing more workspace, the workspace let go (NOT_CAPTURABLE)");
    CHECK_REFUSED(gpuprim_sort(ctx, big.in, NULL, big.out.b, NULL, GPUPRIM_ORDER_ASCENDING));
    frame_close(1);
    TC_CHECK_UNCHANGED(ctx, big.out);
    CHECKF(workspace_size() == held, "the workspace grew during capture: %llu bytes (had %llu)",
           (unsigned long long)workspace_size(), (unsigned long long)held);

    /* Outside capture: held, the big sort fails and writes nothing; released, it runs. */
    tc_where("outside capture: the big sort with the workspace held");
    CHECK_OK(gpuprim_context_reserve_workspace(ctx, 0, 1));
    CHECK_STATUS(gpuprim_sort(ctx, big.in, NULL, big.out.b, NULL, GPUPRIM_ORDER_ASCENDING),
                 GPUPRIM_ERROR_OUT_OF_MEMORY);
    CHECK_MESSAGE(ctx, "held");
    TC_CHECK_UNCHANGED(ctx, big.out);
    CHECKF(workspace_size() == held, "the held workspace is %llu bytes after the failed sort (held %llu)",
           (unsigned long long)workspace_size(), (unsigned long long)held);

    tc_where("outside capture: the workspace released, then the big sort");
    CHECK_OK(gpuprim_context_release_workspace(ctx));
    CHECKF(workspace_size() == 0, "%llu bytes of workspace after the release", (unsigned long long)workspace_size());
    CHECK_OK(gpuprim_sort(ctx, big.in, NULL, big.out.b, NULL, GPUPRIM_ORDER_ASCENDING));
    big_check_sorted(&big, "the big sort after the release");
    held = workspace_size();
    CHECKF(held > 0, "the big sort kept no workspace");

    /* A workspace reserved by size (no warm-up) serves a captured sort. */
    tc_where("the workspace reserved by size, then a captured big sort");
    CHECK_OK(gpuprim_context_release_workspace(ctx));
    CHECK_OK(gpuprim_context_reserve_workspace(ctx, held, 1));
    CHECKF(workspace_size() >= held, "reserved %llu bytes, the workspace holds %llu", (unsigned long long)held,
           (unsigned long long)workspace_size());
    held = workspace_size();
    big_repoison(&big);
    begin_capture(stream);
    CHECK_OK(gpuprim_sort(ctx, big.in, NULL, big.out.b, NULL, GPUPRIM_ORDER_ASCENDING));
    exec = end_capture(stream, NULL);
    TC_CHECK_UNCHANGED(ctx, big.out); /* nothing ran during the capture */
    for (i = 0; i < 2 && exec; ++i) {
        big_fill(&big);
        big_repoison(&big);
        if (!replay(exec, stream)) break;
        big_check_sorted(&big, "the captured big sort, replayed on new keys");
    }
    destroy_exec(exec);
    CHECKF(workspace_size() == held, "the reserved workspace changed: %llu bytes (held %llu)",
           (unsigned long long)workspace_size(), (unsigned long long)held);
    CHECK_OK(gpuprim_context_reserve_workspace(ctx, 0, 0));

    tc_where("refusals: teardown");
    free(big.keys);
    CHECK_OK(gpuprim_buffer_destroy(ctx, big.in));
    tc_free_known(ctx, big.out);
    tc_free_known(ctx, victim);
    tc_free_known(ctx, seg_out);
    tc_free_known(ctx, seg_sums);
    tc_free_known(ctx, topk_keys);
    tc_free_known(ctx, topk_indices);
    tc_free_known(ctx, sel_out);
    tc_free_known(ctx, sel_count);
    tc_free_known(ctx, unique_out);
    tc_free_known(ctx, rbk_out);
    tc_free_known(ctx, grp_out);
    tc_free_known(ctx, seg_indices);
    tc_free_known(ctx, long_topk);
    CHECK_OK(gpuprim_buffer_destroy(ctx, long_keys));
    CHECK_OK(gpuprim_buffer_destroy(ctx, long_offsets));
    CHECK_OK(gpuprim_buffer_destroy(ctx, values));
    CHECK_OK(gpuprim_buffer_destroy(ctx, seg_keys));
    CHECK_OK(gpuprim_buffer_destroy(ctx, offsets));
    frame_free();
}

/* ------------------------------------------------------------------------ */
/* Other contexts: the caller's stream, and the CPU backend                 */
/* ------------------------------------------------------------------------ */

/* Options for a CUDA context on the test's device over the caller's stream s. */
static void options_on_stream(gpuprim_context_options_t *options, cudaStream_t s) {
    gpuprim_context_options_init(options);
    options->backend = GPUPRIM_BACKEND_CUDA;
    options->device_ordinal = ordinal;
    options->cuda_stream = (void *)s;
}

static void test_user_stream(void) {
    const uint64_t n = 5000;
    cudaStream_t mine = NULL;
    cudaGraphExec_t exec;
    gpuprim_context_options_t options;
    gpuprim_context_t own = NULL, main_ctx = ctx;
    gpuprim_buffer_t in, out;
    void *got = NULL, *keys = host_array(n), *want = host_array(n);
    uint64_t *perm = (uint64_t *)tc_xmalloc(n * 8 + 8);
    int round;

    tc_where("a context on the caller's stream");
    if (!CUDA_OK(cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking))) goto done;
    options_on_stream(&options, mine);
    CHECK_OK(gpuprim_context_create(&options, &own, NULL, 0));
    if (!own) goto done;
    ctx = tc.ctx = own; /* the helpers (put, tc_poison, checks) work on ctx */
    CHECK_OK(gpuprim_context_get_stream(own, &got));
    CHECKF(got == (void *)mine, "gpuprim_context_get_stream gave %p, the options' stream is %p", got, (void *)mine);

    in = tc_buffer(own, GPUPRIM_DTYPE_F32, n);
    out = tc_buffer(own, GPUPRIM_DTYPE_F32, n);
    tc_fill(GPUPRIM_DTYPE_F32, keys, n, TC_MODERATE);
    put(in, keys, n);
    CHECK_OK(gpuprim_sort(own, in, NULL, out, NULL, GPUPRIM_ORDER_DESCENDING)); /* warm-up */
    CHECK_OK(gpuprim_context_reserve_workspace(own, 0, 1));
    tc_poison(own, out, GPUPRIM_DTYPE_F32, n);
    begin_capture(mine);
    CHECK_OK(gpuprim_sort(own, in, NULL, out, NULL, GPUPRIM_ORDER_DESCENDING));
    exec = end_capture(mine, NULL);
    for (round = 0; round < 2 && exec; ++round) {
        tc_fill(GPUPRIM_DTYPE_F32, keys, n, round ? TC_NAN_SPARSE : TC_SMALL_RANGE);
        put(in, keys, n);
        tc_poison(own, out, GPUPRIM_DTYPE_F32, n);
        if (!replay(exec, mine)) break;
        tc_reference_sort_permutation(GPUPRIM_DTYPE_F32, keys, n, 1, perm);
        tc_permute(GPUPRIM_DTYPE_F32, keys, perm, n, want);
        CHECK_BUFFER_EQ(own, out, GPUPRIM_DTYPE_F32, want, n, "a sort captured on the caller's stream");
    }
    destroy_exec(exec);
    CHECK_OK(gpuprim_buffer_destroy(own, in));
    CHECK_OK(gpuprim_buffer_destroy(own, out));
    CHECK_OK(gpuprim_context_destroy(own));
done:
    ctx = tc.ctx = main_ctx;
    if (mine) CUDA_OK(cudaStreamDestroy(mine));
    free(keys);
    free(want);
    free(perm);
}

/* A fresh context on the caller's stream, its main workspace empty:
 * - made while that stream captures: NOT_CAPTURABLE, and the caller's
 *   capture still active and empty (the failed creation must not
 *   synchronize the stream: that would invalidate the capture);
 * - a group-by whose sort needs no main workspace (3,000 pairs: one block)
 *   but whose reduce-by-key does (two tiles), with only the side block
 *   reserved: while capturing, NOT_CAPTURABLE with no node in the graph
 *   (reduce-by-key's block is taken before the sort is enqueued); held
 *   still, OUT_OF_MEMORY with the outputs as they were; let go, right. */
static void test_fresh_context_refusals(void) {
    const uint64_t n = 3000;
    cudaStream_t mine = NULL;
    gpuprim_context_options_t options;
    gpuprim_workspace_sizes_t sizes;
    gpuprim_context_t own = NULL, main_ctx = ctx;
    char message[512] = "";
    tc_known_t keys_out, counts, sums, groups;
    gpuprim_buffer_t keys, values;
    uint32_t *host_keys = (uint32_t *)tc_xmalloc(n * 4);
    double *host_values = (double *)tc_xmalloc(n * 8);
    uint64_t i, count = 0;

    tc_where("a context made while its stream captures");
    if (!CUDA_OK(cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking))) goto done;
    options_on_stream(&options, mine);
    begin_capture(mine);
    CHECK_STATUS(gpuprim_context_create(&options, &own, message, sizeof message), GPUPRIM_ERROR_NOT_CAPTURABLE);
    CHECKF(own == NULL, "a refused context_create left a handle");
    CHECKF(capture_state(mine) == 1, "the capture is no longer active after the refused context_create");
    end_empty_capture(mine, "the capture around a refused context_create");
    if (own) goto done;

    tc_where("group-by on a fresh context: reduce-by-key's workspace before the sort");
    CHECK_OK(gpuprim_context_create(&options, &own, message, sizeof message));
    if (!own) goto done;
    ctx = tc.ctx = own;
    for (i = 0; i < n; ++i) {
        host_keys[i] = (uint32_t)((i * 2654435761u) % 97u);
        host_values[i] = (double)(i % 13) - 6.0;
    }
    keys = tc_buffer_from(own, GPUPRIM_DTYPE_U32, host_keys, n);
    values = tc_buffer_from(own, GPUPRIM_DTYPE_F64, host_values, n);
    keys_out = tc_known(own, GPUPRIM_DTYPE_U32, n);
    counts = tc_known(own, GPUPRIM_DTYPE_U64, n);
    sums = tc_known(own, GPUPRIM_DTYPE_F64, n);
    groups = tc_known(own, GPUPRIM_DTYPE_U64, 1);
    memset(&sizes, 0, sizeof sizes);
    sizes.struct_size = sizeof sizes;
    sizes.side_bytes = (uint64_t)1 << 20;
    CHECK_OK(gpuprim_context_reserve_workspace_sizes(own, &sizes, 0));
    CHECK_OK(gpuprim_context_synchronize(own));
    begin_capture(mine);
    CHECK_STATUS(gpuprim_group_by(own, keys, values, GPUPRIM_OP_SUM, keys_out.b, counts.b, sums.b, NULL, NULL,
                                  groups.b),
                 GPUPRIM_ERROR_NOT_CAPTURABLE);
    CHECKF(capture_state(mine) == 1, "the capture is no longer active after the refused group-by");
    end_empty_capture(mine, "the capture around a group-by refused for its workspace");
    CHECK_OK(gpuprim_context_reserve_workspace_sizes(own, &sizes, 1));
    CHECK_STATUS(gpuprim_group_by(own, keys, values, GPUPRIM_OP_SUM, keys_out.b, counts.b, sums.b, NULL, NULL,
                                  groups.b),
                 GPUPRIM_ERROR_OUT_OF_MEMORY);
    TC_CHECK_UNCHANGED(own, keys_out);
    TC_CHECK_UNCHANGED(own, counts);
    TC_CHECK_UNCHANGED(own, sums);
    TC_CHECK_UNCHANGED(own, groups);
    CHECK_OK(gpuprim_context_reserve_workspace(own, 0, 0));
    CHECK_OK(gpuprim_group_by(own, keys, values, GPUPRIM_OP_SUM, keys_out.b, counts.b, sums.b, NULL, &count, NULL));
    CHECKF(count == 97, "group-by of 97 distinct keys: %llu groups", (unsigned long long)count);

    tc_where("flat top-k past 4096 chosen on a fresh context: its sorts' workspace before the select");
    {
        const uint64_t topk_n = 60000, k = 5000;
        float *host_x = (float *)tc_xmalloc(topk_n * 4);
        gpuprim_buffer_t x;
        tc_known_t top, where;
        for (i = 0; i < topk_n; ++i) host_x[i] = (float)((i * 2654435761u) % 100003u) - 50000.0f;
        x = tc_buffer_from(own, GPUPRIM_DTYPE_F32, host_x, topk_n);
        top = tc_known(own, GPUPRIM_DTYPE_F32, k);
        where = tc_known(own, GPUPRIM_DTYPE_U32, k);
        /* The select's own scratch (side) is there; the sorts' (main) is not. */
        CHECK_OK(gpuprim_context_release_workspace(own));
        memset(&sizes, 0, sizeof sizes);
        sizes.struct_size = sizeof sizes;
        sizes.side_bytes = (uint64_t)1 << 22;
        CHECK_OK(gpuprim_context_reserve_workspace_sizes(own, &sizes, 0));
        CHECK_OK(gpuprim_context_synchronize(own));
        begin_capture(mine);
        CHECK_STATUS(gpuprim_topk(own, x, k, GPUPRIM_ORDER_DESCENDING, top.b, where.b), GPUPRIM_ERROR_NOT_CAPTURABLE);
        CHECKF(capture_state(mine) == 1, "the capture is no longer active after the refused top-k");
        end_empty_capture(mine, "the capture around a top-k refused for its sorts' workspace");
        CHECK_OK(gpuprim_context_reserve_workspace_sizes(own, &sizes, 1));
        CHECK_STATUS(gpuprim_topk(own, x, k, GPUPRIM_ORDER_DESCENDING, top.b, where.b), GPUPRIM_ERROR_OUT_OF_MEMORY);
        TC_CHECK_UNCHANGED(own, top);
        TC_CHECK_UNCHANGED(own, where);
        CHECK_OK(gpuprim_context_reserve_workspace(own, 0, 0));
        CHECK_OK(gpuprim_topk(own, x, k, GPUPRIM_ORDER_DESCENDING, top.b, where.b));
        CHECK_OK(gpuprim_buffer_destroy(own, x));
        tc_free_known(own, top);
        tc_free_known(own, where);
        free(host_x);
    }

    tc_where("a context destroyed while its stream captures");
    begin_capture(mine);
    CHECK_STATUS(gpuprim_context_destroy(own), GPUPRIM_ERROR_NOT_CAPTURABLE);
    CHECKF(strstr(gpuprim_context_last_error(own), "gpuprim_context_destroy") != NULL,
           "the refused destroy's message does not name it: \"%s\"", gpuprim_context_last_error(own));
    CHECKF(capture_state(mine) == 1, "the capture is no longer active after the refused context_destroy");
    end_empty_capture(mine, "the capture around a refused context_destroy");
    count = 0;
    CHECK_OK(gpuprim_group_by(own, keys, values, GPUPRIM_OP_SUM, keys_out.b, counts.b, sums.b, NULL, &count, NULL));
    CHECKF(count == 97, "group-by after the refused destroy: %llu groups", (unsigned long long)count);
    CHECK_OK(gpuprim_buffer_destroy(own, keys));
    CHECK_OK(gpuprim_buffer_destroy(own, values));
    tc_free_known(own, keys_out);
    tc_free_known(own, counts);
    tc_free_known(own, sums);
    tc_free_known(own, groups);
    CHECK_OK(gpuprim_context_destroy(own));
done:
    ctx = tc.ctx = main_ctx;
    if (mine) CUDA_OK(cudaStreamDestroy(mine));
    free(host_keys);
    free(host_values);
}

/* Outside capture, with one granule held still: a deferred scan on bad
 * offsets fails (OUT_OF_MEMORY) after its check kernel has run. That call
 * changed nothing, the deferred report included: alone, nothing is
 * reported; after a small call whose bad offsets were kept, that one is
 * reported with no later call counted. The offsets and the workspace are
 * put back as they were. */
static void test_failed_call_keeps_no_fault(gpuprim_context_t own, gpuprim_buffer_t values, gpuprim_buffer_t offsets,
                                            uint64_t *host_offsets, uint64_t segments, uint64_t n,
                                            const gpuprim_segments_t *seg, gpuprim_buffer_t out,
                                            const gpuprim_workspace_sizes_t *granule) {
    static const double small_values[6] = {1, 2, 3, 4, 5, 6};
    static const uint64_t small_bad_offsets[3] = {0, 3, 7}; /* 7: past the 6 values */
    gpuprim_buffer_t small = NULL, small_offsets = NULL, small_out = NULL;
    gpuprim_segments_t small_seg;
    const char *message;
    uint64_t good_last = host_offsets[segments];

    tc_where("a deferred call that fails after its check keeps no fault");
    host_offsets[segments] = n + 1;
    put(offsets, host_offsets, segments + 1);
    CHECK_OK(gpuprim_context_reserve_workspace_sizes(own, granule, 1));
    CHECK_STATUS(gpuprim_segmented_scan(own, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, seg, values, out),
                 GPUPRIM_ERROR_OUT_OF_MEMORY);
    CHECK_OK(gpuprim_context_check_deferred(own));

    small = tc_buffer_from(own, GPUPRIM_DTYPE_F64, small_values, 6);
    small_offsets = tc_buffer_from(own, GPUPRIM_DTYPE_U64, small_bad_offsets, 3);
    small_out = tc_buffer(own, GPUPRIM_DTYPE_F64, 6);
    if (small && small_offsets && small_out) {
        gpuprim_segments_init_offsets(&small_seg, small_offsets);
        CHECK_OK(gpuprim_segmented_scan(own, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, &small_seg, small, small_out));
        CHECK_STATUS(gpuprim_segmented_scan(own, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, seg, values, out),
                     GPUPRIM_ERROR_OUT_OF_MEMORY);
        CHECK_STATUS(gpuprim_context_check_deferred(own), GPUPRIM_ERROR_INVALID_ARGUMENT);
        message = gpuprim_context_last_error(own);
        CHECKF(strstr(message, "more call") == NULL,
               "the failed call was counted in the deferred report: \"%s\"", message);
        CHECK_OK(gpuprim_context_check_deferred(own));
    }
    if (small) CHECK_OK(gpuprim_buffer_destroy(own, small));
    if (small_offsets) CHECK_OK(gpuprim_buffer_destroy(own, small_offsets));
    if (small_out) CHECK_OK(gpuprim_buffer_destroy(own, small_out));
    CHECK_OK(gpuprim_context_reserve_workspace(own, 0, 0));
    host_offsets[segments] = good_last;
    put(offsets, host_offsets, segments + 1);
}

/* A deferred offsets check is a kernel of its own, enqueued before the
 * driver's workspace: a segmented scan of f64 past 2^27 elements (its tile
 * states need more than 1 MiB) in 2,048 segments, on a fresh context whose
 * main workspace is one 1 MiB granule (enough for the check's partials,
 * not for the scan), is refused while capturing with no node in the graph
 * (the scan's workspace is taken before the check is enqueued), writes
 * nothing, and runs outside capture. Needs GPUPRIM_TEST_MAX_COUNT past n. */
static void test_deferred_check_workspace_first(void) {
    const uint64_t n = ((uint64_t)1 << 27) + ((uint64_t)1 << 22), segments = 2048, length = n / segments;
    cudaStream_t mine = NULL;
    gpuprim_context_options_t options;
    gpuprim_workspace_sizes_t sizes, granule;
    gpuprim_segments_t seg;
    gpuprim_context_t own = NULL, main_ctx = ctx;
    gpuprim_buffer_t values = NULL, offsets = NULL, out = NULL;
    double *host = NULL;
    uint64_t *host_offsets = NULL, i;

    if (tc_max_count() < n) {
        printf("test_graph_capture: the deferred check's workspace-first case skipped (GPUPRIM_TEST_MAX_COUNT "
               "below %llu)\n", (unsigned long long)n);
        return;
    }
    tc_where("a deferred offsets check: the scan's workspace taken first");
    if (!CUDA_OK(cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking))) goto done;
    options_on_stream(&options, mine);
    CHECK_OK(gpuprim_context_create(&options, &own, NULL, 0));
    if (!own) goto done;
    ctx = tc.ctx = own;
    REQUIRE_OK(gpuprim_context_set_offsets_check(own, GPUPRIM_OFFSETS_CHECK_DEFERRED));
    host = (double *)tc_xmalloc(n * 8);
    host_offsets = (uint64_t *)tc_xmalloc((segments + 1) * 8);
    for (i = 0; i < n; ++i) host[i] = 1.0;
    for (i = 0; i <= segments; ++i) host_offsets[i] = i * length;
    values = tc_buffer_from(own, GPUPRIM_DTYPE_F64, host, n);
    offsets = tc_buffer_from(own, GPUPRIM_DTYPE_U64, host_offsets, segments + 1);
    out = tc_buffer(own, GPUPRIM_DTYPE_F64, n);
    if (!values || !offsets || !out) goto done;
    tc_poison(own, out, GPUPRIM_DTYPE_F64, n);
    gpuprim_segments_init_offsets(&seg, offsets);
    memset(&sizes, 0, sizeof sizes);
    sizes.struct_size = sizeof sizes;
    CHECK_OK(gpuprim_context_begin_workspace_query(own));
    CHECK_OK(gpuprim_segmented_scan(own, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, &seg, values, out));
    CHECK_OK(gpuprim_context_end_workspace_query(own, &sizes));
    CHECKF(sizes.main_bytes > ((uint64_t)1 << 20),
           "the premise: a segmented scan of %llu f64 needs more than 1 MiB of main workspace (the query says %llu "
           "bytes)", (unsigned long long)n, (unsigned long long)sizes.main_bytes);
    if (sizes.main_bytes > ((uint64_t)1 << 20)) {
        memset(&granule, 0, sizeof granule);
        granule.struct_size = sizeof granule;
        granule.main_bytes = 1; /* one granule */
        CHECK_OK(gpuprim_context_reserve_workspace_sizes(own, &granule, 0));
        CHECK_OK(gpuprim_context_synchronize(own));
        begin_capture(mine);
        CHECK_STATUS(gpuprim_segmented_scan(own, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, &seg, values, out),
                     GPUPRIM_ERROR_NOT_CAPTURABLE);
        CHECKF(capture_state(mine) == 1, "the capture is no longer active after the refused segmented scan");
        end_empty_capture(mine, "the capture around a deferred segmented scan refused for its workspace");
        CHECK_OK(gpuprim_context_check_deferred(own));
        {
            /* nothing written: a sample of the output is still the poison */
            double probe[4], poison[4];
            memset(poison, 0, sizeof poison);
            tc_poison_host(GPUPRIM_DTYPE_F64, poison, 4);
            CHECK_OK(gpuprim_buffer_download(own, out, n / 2, probe, 4));
            CHECKF(memcmp(probe, poison, sizeof probe) == 0, "the refused segmented scan wrote its output");
        }
        test_failed_call_keeps_no_fault(own, values, offsets, host_offsets, segments, n, &seg, out, &granule);
    }
    /* Outside capture the workspace grows and the scan runs. */
    CHECK_OK(gpuprim_segmented_scan(own, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, &seg, values, out));
    CHECK_OK(gpuprim_context_check_deferred(own));
    CHECK_OK(gpuprim_buffer_download(own, out, 0, host, n));
    for (i = 0; i < n; ++i) {
        if (host[i] != (double)(i % length + 1)) {
            CHECKF(0, "deferred segmented scan: element %llu is %g, expected %g", (unsigned long long)i, host[i],
                   (double)(i % length + 1));
            break;
        }
    }
done:
    if (own) {
        if (values) CHECK_OK(gpuprim_buffer_destroy(own, values));
        if (offsets) CHECK_OK(gpuprim_buffer_destroy(own, offsets));
        if (out) CHECK_OK(gpuprim_buffer_destroy(own, out));
        CHECK_OK(gpuprim_context_destroy(own));
    }
    ctx = tc.ctx = main_ctx;
    if (mine) CUDA_OK(cudaStreamDestroy(mine));
    free(host);
    free(host_offsets);
}

static void test_stream_queries(void) {
    gpuprim_context_options_t options;
    gpuprim_context_t cpu = NULL;
    void *got = (void *)&options;
    tc_where("gpuprim_context_get_stream");
    CHECK_STATUS(gpuprim_context_get_stream(ctx, NULL), GPUPRIM_ERROR_NULL_POINTER);
    CHECK_OK(gpuprim_context_get_stream(ctx, &got));
    CHECK(got == (void *)stream);
    gpuprim_context_options_init(&options);
    options.backend = GPUPRIM_BACKEND_CPU;
    CHECK_OK(gpuprim_context_create(&options, &cpu, NULL, 0));
    if (!cpu) return;
    got = (void *)&options;
    CHECK_OK(gpuprim_context_get_stream(cpu, &got));
    CHECKF(got == NULL, "a CPU context's stream is %p, not NULL", got);
    CHECK_STATUS(gpuprim_context_get_stream(cpu, NULL), GPUPRIM_ERROR_NULL_POINTER);
    CHECK_OK(gpuprim_context_reserve_workspace(cpu, 0, 1));
    CHECK_OK(gpuprim_context_reserve_workspace(cpu, 0, 0));
    CHECK_OK(gpuprim_context_destroy(cpu));
}

int main(void) {
    static const uint64_t sizes[2] = {5000, 300001};
    gpuprim_context_t probe = NULL;
    gpuprim_backend_t backend = GPUPRIM_BACKEND_AUTO;
    gpuprim_status_t status;
    char message[512] = "";
    void *raw_stream = NULL;
    uint64_t max_count = tc_max_count();
    size_t f, s;
    double start;

    /* Skip unless the default context runs on CUDA. */
    status = gpuprim_context_create(NULL, &probe, message, sizeof message);
    if (status == GPUPRIM_ERROR_BACKEND_UNAVAILABLE)
        return tc_skip("test_graph_capture: skipped: the CUDA backend is not usable here (%s)", message);
    if (status != GPUPRIM_SUCCESS) {
        fprintf(stderr, "test_graph_capture: gpuprim_context_create failed: %d (%s): %s\n", (int)status,
                gpuprim_get_error_string(status), message);
        return 1;
    }
    status = gpuprim_context_get_backend(probe, &backend);
    (void)gpuprim_context_destroy(probe);
    if (status != GPUPRIM_SUCCESS) {
        fprintf(stderr, "test_graph_capture: gpuprim_context_get_backend failed: %d\n", (int)status);
        return 1;
    }
    if (backend != GPUPRIM_BACKEND_CUDA)
        return tc_skip("test_graph_capture: skipped: the default context runs on the CPU backend; CUDA graphs "
                       "need the CUDA backend (GPUPRIM_BACKEND=cuda on a machine with a GPU)");

    ctx = tc_init("test_graph_capture");
    start = tc_seconds();
    REQUIRE_OK(gpuprim_context_get_device(ctx, &ordinal, NULL, 0));
    if (!CUDA_OK(cudaSetDevice(ordinal))) tc_abort();
    REQUIRE_OK(gpuprim_context_get_stream(ctx, &raw_stream));
    CHECK(raw_stream != NULL);
    if (!raw_stream) tc_abort();
    stream = (cudaStream_t)raw_stream;
    test_stream_queries();

    for (s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
        if (sizes[s] > max_count) continue;
        for (f = 0; f < sizeof families / sizeof families[0]; ++f) run_family(&families[f], sizes[s]);
        printf("test_graph_capture: every family captured and replayed at n = %llu (%.1f s)\n",
               (unsigned long long)sizes[s], tc_seconds() - start);
        for (f = 0; f < sizeof families / sizeof families[0]; ++f) run_family_by_query(&families[f], sizes[s]);
        printf("test_graph_capture: every family sized by a workspace query at n = %llu (%.1f s)\n",
               (unsigned long long)sizes[s], tc_seconds() - start);
        REQUIRE_OK(gpuprim_context_set_offsets_check(ctx, GPUPRIM_OFFSETS_CHECK_WAIT)); /* the CSR family's DEFERRED */
        test_csr_deferred_replays(sizes[s]);
        printf("test_graph_capture: deferred offsets checks in replays done at n = %llu (%.1f s)\n",
               (unsigned long long)sizes[s], tc_seconds() - start);
    }
    test_refusals();
    printf("test_graph_capture: refusals and the held workspace done (%.1f s)\n", tc_seconds() - start);
    test_user_stream();
    test_fresh_context_refusals();
    test_deferred_check_workspace_first();
    printf("test_graph_capture: the caller's stream done (%.1f s)\n", tc_seconds() - start);
    return tc_finish();
}
