/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fork() after the library was used (the header's fork rules): a parent
 * sorts, reduces and scans on its default context (which starts oneTBB's or
 * OpenMP's threads), then forks. The child, under alarm() so that a hang
 * fails instead of hanging (GNU libgomp's pool does not survive fork()),
 * creates contexts (default and cpu_threads = 4) and runs sort, pairs sort,
 * reduce, scan and a segmented sort and reduce, checks every result against
 * the parent's and a reference, uses the context it inherited too, and
 * forks a grandchild that does the same. Then the parent's context still
 * works. CPU backend; skipped (77) where there is no fork().
 */
#include "test_common.h"

#if defined(_WIN32)
int main(void) {
    return tc_skip("test_fork: no fork() on this platform: skipped");
}
#else

#  include <signal.h>
#  include <sys/types.h>
#  include <sys/wait.h>
#  include <unistd.h>

#  define N ((1u << 20) + 3u)
#  define ROWS 64u
#  define ALARM_SECONDS 30u

static uint32_t *keys;          /* the input */
static uint32_t *sorted_keys;   /* reference: keys ascending */
static uint32_t *pair_values;   /* reference: the values sorted by key (stable) */
static uint32_t *scanned;       /* reference: inclusive SUM scan */
static uint32_t *rows_sorted;   /* reference: each of ROWS rows sorted */
static uint32_t *row_sums;      /* reference: each row's SUM */
static uint32_t total;          /* reference: SUM */

static int compare_u32(const void *a, const void *b) {
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Stable by key: the value is the index, so (key, index) orders it. */
static int compare_pairs(const void *a, const void *b) {
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void make_references(void) {
    uint64_t *pairs = (uint64_t *)tc_xmalloc(sizeof(uint64_t) * N);
    const uint32_t row = N / ROWS;
    uint32_t i, r;
    keys = (uint32_t *)tc_xmalloc(sizeof(uint32_t) * N);
    sorted_keys = (uint32_t *)tc_xmalloc(sizeof(uint32_t) * N);
    pair_values = (uint32_t *)tc_xmalloc(sizeof(uint32_t) * N);
    scanned = (uint32_t *)tc_xmalloc(sizeof(uint32_t) * N);
    rows_sorted = (uint32_t *)tc_xmalloc(sizeof(uint32_t) * row * ROWS);
    row_sums = (uint32_t *)tc_xmalloc(sizeof(uint32_t) * ROWS);
    total = 0;
    for (i = 0; i < N; ++i) {
        keys[i] = (uint32_t)(tc_rand() % 100000u); /* ties: the pairs sort must be stable */
        total += keys[i];
        scanned[i] = total;
        pairs[i] = (uint64_t)keys[i] << 32 | i;
    }
    memcpy(sorted_keys, keys, sizeof(uint32_t) * N);
    qsort(sorted_keys, N, sizeof(uint32_t), compare_u32);
    qsort(pairs, N, sizeof(uint64_t), compare_pairs);
    for (i = 0; i < N; ++i) pair_values[i] = (uint32_t)pairs[i];
    memcpy(rows_sorted, keys, sizeof(uint32_t) * row * ROWS);
    for (r = 0; r < ROWS; ++r) {
        qsort(rows_sorted + (size_t)r * row, row, sizeof(uint32_t), compare_u32);
        row_sums[r] = 0;
        for (i = 0; i < row; ++i) row_sums[r] += keys[(size_t)r * row + i];
    }
    free(pairs);
}

/* Every call the test makes, on ctx, checked; `who` names the process. */
static void run_calls(gpuprim_context_t ctx, const char *who) {
    const uint32_t row = N / ROWS;
    gpuprim_buffer_t in, out, values, values_out, rows, sums;
    gpuprim_segments_t seg;
    uint32_t got = 0, *host, i;
    gpuprim_context_t saved = tc.ctx;
    tc.ctx = ctx;
    tc_where("%s: reduce, scan, sort, sort pairs, segmented sort and reduce of %u u32", who, (unsigned)N);

    in = tc_buffer_from(ctx, GPUPRIM_DTYPE_U32, keys, N);
    CHECK_OK(gpuprim_reduce(ctx, GPUPRIM_OP_SUM, in, &got));
    CHECKF(got == total, "%s: reduce %u, expected %u", who, (unsigned)got, (unsigned)total);

    out = tc_buffer(ctx, GPUPRIM_DTYPE_U32, N);
    CHECK_OK(gpuprim_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, in, out));
    host = (uint32_t *)tc_download(ctx, out, GPUPRIM_DTYPE_U32, N);
    CHECKF(memcmp(host, scanned, sizeof(uint32_t) * N) == 0, "%s: scan differs", who);
    free(host);

    CHECK_OK(gpuprim_sort(ctx, in, NULL, out, NULL, GPUPRIM_ORDER_ASCENDING));
    host = (uint32_t *)tc_download(ctx, out, GPUPRIM_DTYPE_U32, N);
    CHECKF(memcmp(host, sorted_keys, sizeof(uint32_t) * N) == 0, "%s: sort differs", who);
    free(host);

    host = (uint32_t *)tc_xmalloc(sizeof(uint32_t) * N);
    for (i = 0; i < N; ++i) host[i] = i;
    values = tc_buffer_from(ctx, GPUPRIM_DTYPE_U32, host, N);
    values_out = tc_buffer(ctx, GPUPRIM_DTYPE_U32, N);
    free(host);
    CHECK_OK(gpuprim_sort(ctx, in, values, out, values_out, GPUPRIM_ORDER_ASCENDING));
    host = (uint32_t *)tc_download(ctx, values_out, GPUPRIM_DTYPE_U32, N);
    CHECKF(memcmp(host, pair_values, sizeof(uint32_t) * N) == 0, "%s: pairs sort differs", who);
    free(host);

    gpuprim_segments_init_rows(&seg, ROWS, row);
    rows = tc_buffer_from(ctx, GPUPRIM_DTYPE_U32, keys, (uint64_t)row * ROWS);
    CHECK_OK(gpuprim_segmented_sort(ctx, &seg, rows, NULL, rows, NULL, NULL));
    host = (uint32_t *)tc_download(ctx, rows, GPUPRIM_DTYPE_U32, (uint64_t)row * ROWS);
    CHECKF(memcmp(host, rows_sorted, sizeof(uint32_t) * row * ROWS) == 0, "%s: segmented sort differs", who);
    free(host);
    sums = tc_buffer(ctx, GPUPRIM_DTYPE_U32, ROWS);
    CHECK_OK(gpuprim_buffer_upload(ctx, rows, 0, keys, (uint64_t)row * ROWS));
    CHECK_OK(gpuprim_segmented_reduce(ctx, GPUPRIM_OP_SUM, &seg, rows, sums));
    host = (uint32_t *)tc_download(ctx, sums, GPUPRIM_DTYPE_U32, ROWS);
    CHECKF(memcmp(host, row_sums, sizeof(uint32_t) * ROWS) == 0, "%s: segmented reduce differs", who);
    free(host);

    CHECK_OK(gpuprim_buffer_destroy(ctx, in));
    CHECK_OK(gpuprim_buffer_destroy(ctx, out));
    CHECK_OK(gpuprim_buffer_destroy(ctx, values));
    CHECK_OK(gpuprim_buffer_destroy(ctx, values_out));
    CHECK_OK(gpuprim_buffer_destroy(ctx, rows));
    CHECK_OK(gpuprim_buffer_destroy(ctx, sums));
    tc.ctx = saved;
}

static gpuprim_context_t cpu_context(int32_t threads) {
    gpuprim_context_options_t options;
    gpuprim_context_t ctx = NULL;
    gpuprim_context_options_init(&options);
    options.backend = GPUPRIM_BACKEND_CPU;
    options.cpu_threads = threads;
    REQUIRE_OK(gpuprim_context_create(&options, &ctx, NULL, 0));
    return ctx;
}

/* In a child: new contexts, then the inherited one; 0 when all passed. */
static int child_work(gpuprim_context_t inherited, const char *who) {
    gpuprim_context_t fresh, four;
    alarm(ALARM_SECONDS); /* a hang ends the child with SIGALRM */
    fresh = cpu_context(0);
    four = cpu_context(4);
    run_calls(fresh, who);
    run_calls(four, who);
    run_calls(inherited, who);
    CHECK_OK(gpuprim_context_destroy(four));
    CHECK_OK(gpuprim_context_destroy(fresh));
    return tc.failures != 0;
}

/* Forks; the child runs child_work and, when `again`, forks a grandchild
 * that does too. Returns whether the child exited 0. */
static int fork_and_check(gpuprim_context_t inherited, int again) {
    pid_t pid, waited;
    int status = 0;
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) {
        CHECKF(0, "fork failed");
        return 0;
    }
    if (pid == 0) {
        int failed = child_work(inherited, again ? "child" : "grandchild");
        if (!failed && again) failed = !fork_and_check(inherited, 0);
        fflush(stdout);
        fflush(stderr);
        _exit(failed ? 1 : 0);
    }
    do {
        waited = waitpid(pid, &status, 0);
    } while (waited < 0);
    if (WIFSIGNALED(status))
        fprintf(stderr, "test_fork: the %s died of signal %d%s\n", again ? "child" : "grandchild",
                WTERMSIG(status), WTERMSIG(status) == SIGALRM ? " (SIGALRM: it hung)" : "");
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main(void) {
    gpuprim_context_t ctx = tc_init("test_fork"), cpu;
    make_references();
    /* The parent's pools are started (and idle) when it forks. */
    cpu = cpu_context(0);
    run_calls(ctx, "parent");
    run_calls(cpu, "parent");
    tc_where("fork");
    CHECKF(fork_and_check(cpu, 1), "the child (or its child) failed or hung: see its messages above");
    /* The parent's contexts after the fork. */
    run_calls(cpu, "parent after fork");
    run_calls(ctx, "parent after fork");
    CHECK_OK(gpuprim_context_destroy(cpu));
    free(keys);
    free(sorted_keys);
    free(pair_values);
    free(scanned);
    free(rows_sorted);
    free(row_sums);
    return tc_finish();
}
#endif
