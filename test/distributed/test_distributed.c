/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The distributed calls, run as an MPI program (one process a rank):
 *   mpirun -np 4 test_distributed                       (CPU contexts, MPI engine)
 *   GPUPRIM_BACKEND=cuda mpirun -np 2 test_distributed  (CUDA contexts, NCCL engine,
 *                                                        one GPU a rank, NCCL bootstrapped over MPI)
 * Every rank makes every rank's data from the same seed (rank 0's, broadcast),
 * so each computes the global reference itself (test_common.h's, written from
 * the header) and checks its own part of the result. Layouts: equal counts,
 * random counts with empty ranks, everything on one rank, everything empty.
 * Then the agreement rules: a bad argument on one rank fails every rank with
 * outputs untouched; arguments that differ across ranks fail everywhere.
 */
#include "../test_common.h"

#include <mpi.h>

#if defined(GPUPRIM_TEST_NCCL)
#  include <cuda_runtime.h>
#  include <nccl.h>
#endif

static int g_rank, g_ranks;
static MPI_Comm g_world;
static int g_cuda;
static gpuprim_context_options_t g_options; /* the options setup() made tc.ctx with */
#if defined(GPUPRIM_TEST_NCCL)
static ncclComm_t g_nccl;
#endif

/* ------------------------------------------------------------------------ */
/* Setup                                                                    */
/* ------------------------------------------------------------------------ */

static void setup(void) {
    char message[512] = "";
    gpuprim_context_options_t options;
    gpuprim_backend_t backend = GPUPRIM_BACKEND_AUTO;
    const char *seed_text = getenv("GPUPRIM_TEST_SEED");
    uint64_t seed = seed_text && *seed_text ? strtoull(seed_text, NULL, 0)
                                            : ((uint64_t)time(NULL) * 2654435761ull) ^ (uint64_t)clock();
    MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    tc.program = "test_distributed";
    tc.seed = seed;
    tc.rng = seed;
    snprintf(tc.where, sizeof tc.where, "setup");

    gpuprim_context_options_init(&options);
    {
        const char *wanted = getenv("GPUPRIM_BACKEND");
        g_cuda = wanted && (strcmp(wanted, "cuda") == 0 || strcmp(wanted, "CUDA") == 0);
    }
#if defined(GPUPRIM_TEST_NCCL)
    if (g_cuda) {
        int devices = 0;
        ncclUniqueId id;
        if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
            fprintf(stderr, "test_distributed: GPUPRIM_BACKEND=cuda but no CUDA device\n");
            exit(1);
        }
        if (devices < g_ranks) {
            /* NCCL takes one rank a GPU. */
            if (g_rank == 0)
                tc_skip("test_distributed: %d ranks but %d GPUs: skipped (NCCL needs one GPU a rank)", g_ranks,
                        devices);
            MPI_Finalize();
            exit(77);
        }
        options.backend = GPUPRIM_BACKEND_CUDA;
        options.device_ordinal = g_rank;
        if (cudaSetDevice(options.device_ordinal) != cudaSuccess) exit(1);
        if (g_rank == 0 && ncclGetUniqueId(&id) != ncclSuccess) exit(1);
        MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
        if (ncclCommInitRank(&g_nccl, g_ranks, id, g_rank) != ncclSuccess) {
            fprintf(stderr, "test_distributed: ncclCommInitRank failed\n");
            exit(1);
        }
    }
#else
    if (g_cuda) {
        if (g_rank == 0) tc_skip("test_distributed: built without NCCL: the CUDA contexts' engine is not here: skipped");
        MPI_Finalize();
        exit(77);
    }
#endif
    if (!g_cuda) options.backend = GPUPRIM_BACKEND_CPU;
    g_options = options;
    if (gpuprim_context_create(&options, &tc.ctx, message, sizeof message) != GPUPRIM_SUCCESS) {
        fprintf(stderr, "test_distributed: gpuprim_context_create failed: %s\n", message);
        exit(1);
    }
    REQUIRE_OK(gpuprim_context_get_backend(tc.ctx, &backend));
    g_world = MPI_COMM_WORLD;
#if defined(GPUPRIM_TEST_NCCL)
    if (g_cuda) REQUIRE_OK(gpuprim_context_attach_communicator(tc.ctx, GPUPRIM_COMM_NCCL, g_nccl));
#endif
    if (!g_cuda) REQUIRE_OK(gpuprim_context_attach_communicator(tc.ctx, GPUPRIM_COMM_MPI, &g_world));
    if (g_rank == 0)
        printf("test_distributed: libgpuprim %s, backend %s, %d ranks, seed %llu\n", gpuprim_version_string(),
               backend == GPUPRIM_BACKEND_CUDA ? "cuda" : "cpu", g_ranks, (unsigned long long)seed);
    fflush(stdout);
}

/* ------------------------------------------------------------------------ */
/* Layouts and data                                                         */
/* ------------------------------------------------------------------------ */

enum layout_kind { EQUAL_COUNTS, RANDOM_COUNTS, ONE_RANK_HOLDS_ALL, ALL_EMPTY, LAYOUT_COUNT };
static const char *const layout_names[LAYOUT_COUNT] = {"equal", "random", "one_rank", "empty"};

typedef struct global_data {
    uint64_t counts[64];
    uint64_t offsets[65];
    uint64_t total;
    void *keys; /* every rank's keys, in rank order */
} global_data_t;

/* The same on every rank: drawn from the shared generator. */
static void make_layout(global_data_t *g, enum layout_kind layout, uint64_t per_rank) {
    int r;
    int holder = (int)tc_below((uint64_t)g_ranks);
    for (r = 0; r < g_ranks; ++r) {
        switch (layout) {
        case EQUAL_COUNTS: g->counts[r] = per_rank; break;
        case RANDOM_COUNTS: g->counts[r] = tc_below(4) == 0 ? 0 : tc_below(2 * per_rank + 1); break;
        case ONE_RANK_HOLDS_ALL: g->counts[r] = r == holder ? per_rank * (uint64_t)g_ranks : 0; break;
        default: g->counts[r] = 0; break;
        }
    }
    g->offsets[0] = 0;
    for (r = 0; r < g_ranks; ++r) g->offsets[r + 1] = g->offsets[r] + g->counts[r];
    g->total = g->offsets[g_ranks];
}

static void make_keys(global_data_t *g, gpuprim_dtype_t d, tc_pattern_t pattern) {
    g->keys = tc_xmalloc(g->total * tc_size(d));
    tc_fill(d, g->keys, g->total, pattern);
}

static const void *local_part(const global_data_t *g, gpuprim_dtype_t d, const void *global) {
    return (const char *)global + g->offsets[g_rank] * tc_size(d);
}

static uint64_t local_count(const global_data_t *g) { return g->counts[g_rank]; }

/* A buffer of this rank's part (a buffer of 0 elements where it has none). */
static gpuprim_buffer_t local_buffer(const global_data_t *g, gpuprim_dtype_t d, const void *global) {
    return tc_buffer_from(tc.ctx, d, local_part(g, d, global), local_count(g));
}

static gpuprim_buffer_t poisoned_in(gpuprim_context_t ctx, gpuprim_dtype_t d, uint64_t n) {
    uint64_t i;
    void *host = tc_xmalloc(n * tc_size(d));
    gpuprim_buffer_t b;
    for (i = 0; i < n; ++i) tc_set(d, host, i, tc_poison_bits(d));
    b = tc_buffer_from(ctx, d, host, n);
    free(host);
    return b;
}

static gpuprim_buffer_t poisoned(gpuprim_dtype_t d, uint64_t n) { return poisoned_in(tc.ctx, d, n); }

static void *download_from(gpuprim_context_t ctx, gpuprim_buffer_t b, gpuprim_dtype_t d, uint64_t n) {
    void *host = tc_xmalloc(n * tc_size(d));
    if (n) REQUIRE_OK(gpuprim_buffer_download(ctx, b, 0, host, n));
    return host;
}

static void *download(gpuprim_buffer_t b, gpuprim_dtype_t d, uint64_t n) { return download_from(tc.ctx, b, d, n); }

/* Every rank's verdict: failures anywhere fail rank 0's summary too. */
static long global_failures(void) {
    long mine = tc.failures, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    return all;
}

/* ------------------------------------------------------------------------ */
/* Sort, argsort                                                            */
/* ------------------------------------------------------------------------ */

static void check_sort(gpuprim_dtype_t d, tc_pattern_t pattern, enum layout_kind layout, uint64_t per_rank,
                       int descending, unsigned begin_bit, unsigned end_bit, gpuprim_dtype_t value_dtype,
                       int in_place) {
    global_data_t g;
    uint64_t *perm, i, n, errors = 0;
    gpuprim_sort_options_t options;
    void *values, *got_keys, *got_values = NULL;
    gpuprim_buffer_t kin, kout, vin = NULL, vout = NULL;

    make_layout(&g, layout, per_rank);
    make_keys(&g, d, pattern);
    n = local_count(&g);
    tc_where("sort %s %s layout %s per_rank %llu %s bits [%u,%u) values %s%s", tc_dtype_name(d),
             tc_pattern_names[pattern], layout_names[layout], (unsigned long long)per_rank,
             descending ? "desc" : "asc", begin_bit, end_bit,
             value_dtype == (gpuprim_dtype_t)-1 ? "none" : tc_dtype_name(value_dtype), in_place ? " in place" : "");
    perm = (uint64_t *)tc_xmalloc(g.total * sizeof *perm);
    tc_reference_sort_permutation_bits(d, g.keys, g.total, descending, begin_bit, end_bit, perm);
    /* Values: each element's global position, so stability shows. */
    values = tc_xmalloc(g.total * 8);
    if (value_dtype != (gpuprim_dtype_t)-1)
        for (i = 0; i < g.total; ++i) tc_set(value_dtype, values, i, i * 2654435761u + 7);

    gpuprim_sort_options_init(&options);
    options.order = descending ? GPUPRIM_ORDER_DESCENDING : GPUPRIM_ORDER_ASCENDING;
    options.begin_bit = begin_bit;
    options.end_bit = end_bit == tc_bits(d) ? 0 : end_bit;
    kin = local_buffer(&g, d, g.keys);
    kout = in_place ? kin : poisoned(d, n);
    if (value_dtype != (gpuprim_dtype_t)-1) {
        vin = local_buffer(&g, value_dtype, values);
        vout = in_place ? vin : poisoned(value_dtype, n);
    }
    CHECK_OK(gpuprim_distributed_sort(tc.ctx, kin, vin, kout, vout, &options));
    got_keys = download(kout, d, n);
    if (vout) got_values = download(vout, value_dtype, n);
    for (i = 0; i < n && errors < 5; ++i) {
        uint64_t from = perm[g.offsets[g_rank] + i];
        if (tc_get(d, got_keys, i) != tc_get(d, g.keys, from) ||
            (got_values && tc_get(value_dtype, got_values, i) != tc_get(value_dtype, values, from))) {
            CHECKF(0, "rank %d element %llu (global %llu): key %llx value %llx, expected key %llx value %llx (global "
                      "input %llu)",
                   g_rank, (unsigned long long)i, (unsigned long long)(g.offsets[g_rank] + i),
                   (unsigned long long)tc_get(d, got_keys, i),
                   (unsigned long long)(got_values ? tc_get(value_dtype, got_values, i) : 0),
                   (unsigned long long)tc_get(d, g.keys, from),
                   (unsigned long long)(got_values ? tc_get(value_dtype, values, from) : 0), (unsigned long long)from);
            ++errors;
        }
    }
    CHECK(errors == 0);
    if (!in_place) REQUIRE_OK(gpuprim_buffer_destroy(tc.ctx, kout));
    if (vout && !in_place) REQUIRE_OK(gpuprim_buffer_destroy(tc.ctx, vout));
    if (vin) REQUIRE_OK(gpuprim_buffer_destroy(tc.ctx, vin));
    REQUIRE_OK(gpuprim_buffer_destroy(tc.ctx, kin));
    free(got_keys);
    free(got_values);
    free(values);
    free(perm);
    free(g.keys);
}

static void check_argsort(gpuprim_dtype_t d, tc_pattern_t pattern, enum layout_kind layout, uint64_t per_rank,
                          int descending, gpuprim_dtype_t index_dtype, int want_keys) {
    global_data_t g;
    uint64_t *perm, i, n, errors = 0;
    gpuprim_sort_options_t options;
    void *got_keys = NULL, *got_indices;
    gpuprim_buffer_t kin, kout = NULL, indices;

    make_layout(&g, layout, per_rank);
    make_keys(&g, d, pattern);
    n = local_count(&g);
    tc_where("argsort %s %s layout %s per_rank %llu %s indices %s keys_out %s", tc_dtype_name(d),
             tc_pattern_names[pattern], layout_names[layout], (unsigned long long)per_rank,
             descending ? "desc" : "asc", tc_dtype_name(index_dtype), want_keys ? "yes" : "NULL");
    perm = (uint64_t *)tc_xmalloc(g.total * sizeof *perm);
    tc_reference_sort_permutation(d, g.keys, g.total, descending, perm);
    gpuprim_sort_options_init(&options);
    options.order = descending ? GPUPRIM_ORDER_DESCENDING : GPUPRIM_ORDER_ASCENDING;
    kin = local_buffer(&g, d, g.keys);
    if (want_keys) kout = poisoned(d, n);
    indices = poisoned(index_dtype, n);
    CHECK_OK(gpuprim_distributed_argsort(tc.ctx, kin, kout, indices, &options));
    got_indices = download(indices, index_dtype, n);
    if (kout) got_keys = download(kout, d, n);
    for (i = 0; i < n && errors < 5; ++i) {
        uint64_t expected = perm[g.offsets[g_rank] + i];
        if (tc_get(index_dtype, got_indices, i) != expected ||
            (got_keys && tc_get(d, got_keys, i) != tc_get(d, g.keys, expected))) {
            CHECKF(0, "rank %d element %llu: index %llu, expected %llu", g_rank, (unsigned long long)i,
                   (unsigned long long)tc_get(index_dtype, got_indices, i), (unsigned long long)expected);
            ++errors;
        }
    }
    CHECK(errors == 0);
    if (kout) REQUIRE_OK(gpuprim_buffer_destroy(tc.ctx, kout));
    REQUIRE_OK(gpuprim_buffer_destroy(tc.ctx, indices));
    REQUIRE_OK(gpuprim_buffer_destroy(tc.ctx, kin));
    free(got_keys);
    free(got_indices);
    free(perm);
    free(g.keys);
}

/* ------------------------------------------------------------------------ */
/* Top-k                                                                    */
/* ------------------------------------------------------------------------ */

static void check_topk(gpuprim_dtype_t d, tc_pattern_t pattern, enum layout_kind layout, uint64_t per_rank,
                       int descending, uint64_t k_wanted, gpuprim_dtype_t index_dtype, int want_keys) {
    global_data_t g;
    uint64_t *perm, i, k, errors = 0;
    void *got_keys = NULL, *got_indices = NULL;
    gpuprim_buffer_t kin, kout = NULL, indices = NULL;

    make_layout(&g, layout, per_rank);
    make_keys(&g, d, pattern);
    k = k_wanted > g.total ? g.total : k_wanted;
    tc_where("topk %s %s layout %s per_rank %llu %s k %llu indices %s keys %s", tc_dtype_name(d),
             tc_pattern_names[pattern], layout_names[layout], (unsigned long long)per_rank,
             descending ? "largest" : "smallest", (unsigned long long)k,
             index_dtype == (gpuprim_dtype_t)-1 ? "none" : tc_dtype_name(index_dtype), want_keys ? "yes" : "no");
    perm = (uint64_t *)tc_xmalloc(g.total * sizeof *perm);
    tc_reference_sort_permutation(d, g.keys, g.total, descending, perm);
    kin = local_buffer(&g, d, g.keys);
    if (want_keys) kout = poisoned(d, k);
    if (index_dtype != (gpuprim_dtype_t)-1) indices = poisoned(index_dtype, k);
    CHECK_OK(gpuprim_distributed_topk(tc.ctx, kin, k,
                                      descending ? GPUPRIM_ORDER_DESCENDING : GPUPRIM_ORDER_ASCENDING, kout,
                                      indices));
    if (kout) got_keys = download(kout, d, k);
    if (indices) got_indices = download(indices, index_dtype, k);
    for (i = 0; i < k && errors < 5; ++i) {
        uint64_t expected = perm[i];
        if ((got_keys && tc_get(d, got_keys, i) != tc_get(d, g.keys, expected)) ||
            (got_indices && tc_get(index_dtype, got_indices, i) != expected)) {
            CHECKF(0, "rank %d result %llu: key %llx index %llu, expected key %llx index %llu", g_rank,
                   (unsigned long long)i, (unsigned long long)(got_keys ? tc_get(d, got_keys, i) : 0),
                   (unsigned long long)(got_indices ? tc_get(index_dtype, got_indices, i) : 0),
                   (unsigned long long)tc_get(d, g.keys, expected), (unsigned long long)expected);
            ++errors;
        }
    }
    CHECK(errors == 0);
    if (kout) REQUIRE_OK(gpuprim_buffer_destroy(tc.ctx, kout));
    if (indices) REQUIRE_OK(gpuprim_buffer_destroy(tc.ctx, indices));
    REQUIRE_OK(gpuprim_buffer_destroy(tc.ctx, kin));
    free(got_keys);
    free(got_indices);
    free(perm);
    free(g.keys);
}

/* ------------------------------------------------------------------------ */
/* Reduce, scan                                                             */
/* ------------------------------------------------------------------------ */

/* A distributed float sum: the ranks' partial results are rounded to the
 * dtype before they combine (gpuprim.h), so 16-bit floats may be off by half
 * a unit of the format per rank boundary on top of the one-rank bound. */
static int dist_float_sum_ok(gpuprim_dtype_t d, uint64_t got_bits, long double ref, long double sumabs,
                             uint64_t nterms) {
    if (tc_is_half(d) && !isnan(ref) && !isinf(ref) && !tc_isnan_bits(d, got_bits)) {
        long double unit = ldexpl(1.0L, d == GPUPRIM_DTYPE_F16 ? -11 : -8);
        long double bound = (long double)(g_ranks + 1) * unit * sumabs + (long double)nterms * ldexpl(sumabs, -24) +
                            ldexpl(1.0L, d == GPUPRIM_DTYPE_F16 ? -24 : -133);
        return fabsl(tc_value(d, got_bits) - ref) <= bound;
    }
    return tc_float_sum_ok(d, got_bits, ref, sumabs, nterms);
}

/* Integer SUM and every MIN/MAX: exact against a fold in global order. */
static int exact_op(gpuprim_op_t op, gpuprim_dtype_t d) { return op != GPUPRIM_OP_SUM || !tc_is_float(d); }

static void check_reduce(gpuprim_dtype_t d, tc_pattern_t pattern, enum layout_kind layout, uint64_t per_rank,
                         gpuprim_op_t op) {
    global_data_t g;
    uint64_t i, expected, got = 0, again = 0;
    long double ref = 0, sumabs = 0;
    gpuprim_buffer_t in;

    make_layout(&g, layout, per_rank);
    make_keys(&g, d, pattern);
    tc_where("reduce %s %s %s layout %s per_rank %llu", tc_op_name(op), tc_dtype_name(d), tc_pattern_names[pattern],
             layout_names[layout], (unsigned long long)per_rank);
    in = local_buffer(&g, d, g.keys);
    CHECK_OK(gpuprim_distributed_reduce(tc.ctx, op, in, &got));
    CHECK_OK(gpuprim_distributed_reduce(tc.ctx, op, in, &again));
    CHECKF(got == again, "two runs gave %llx and %llx", (unsigned long long)got, (unsigned long long)again);
    if (exact_op(op, d)) {
        expected = tc_identity(op, d);
        for (i = 0; i < g.total; ++i) expected = tc_apply(op, d, expected, tc_get(d, g.keys, i));
        CHECKF(got == expected, "got %llx, expected %llx", (unsigned long long)got, (unsigned long long)expected);
    } else {
        for (i = 0; i < g.total; ++i) {
            long double v = tc_value(d, tc_get(d, g.keys, i));
            ref += v;
            sumabs += fabsl(v);
        }
        /* The ranks' partial sums are rounded to the dtype before they combine. */
        CHECKF(dist_float_sum_ok(d, got, ref, sumabs, g.total + (uint64_t)g_ranks), "got %Lg, expected about %Lg",
               tc_value(d, got), ref);
    }
    REQUIRE_OK(gpuprim_buffer_destroy(tc.ctx, in));
    free(g.keys);
}

static void check_scan(gpuprim_dtype_t d, tc_pattern_t pattern, enum layout_kind layout, uint64_t per_rank,
                       gpuprim_op_t op, gpuprim_scan_kind_t kind, int in_place) {
    global_data_t g;
    uint64_t i, n, running, errors = 0;
    long double ref = 0, sumabs = 0;
    gpuprim_buffer_t in, out;
    void *got;

    make_layout(&g, layout, per_rank);
    make_keys(&g, d, pattern);
    n = local_count(&g);
    tc_where("scan %s %s %s %s layout %s per_rank %llu%s", kind == GPUPRIM_SCAN_INCLUSIVE ? "inclusive" : "exclusive",
             tc_op_name(op), tc_dtype_name(d), tc_pattern_names[pattern], layout_names[layout],
             (unsigned long long)per_rank, in_place ? " in place" : "");
    in = local_buffer(&g, d, g.keys);
    out = in_place ? in : poisoned(d, n);
    CHECK_OK(gpuprim_distributed_scan(tc.ctx, op, kind, in, out));
    got = download(out, d, n);
    running = tc_identity(op, d);
    for (i = 0; i < g.offsets[g_rank] + n && errors < 5; ++i) {
        uint64_t x = tc_get(d, g.keys, i);
        long double v = tc_value(d, x);
        int mine = i >= g.offsets[g_rank];
        uint64_t at = i - g.offsets[g_rank];
        if (kind == GPUPRIM_SCAN_INCLUSIVE) {
            running = tc_apply(op, d, running, x);
            ref += v;
            sumabs += fabsl(v);
        }
        if (mine) {
            uint64_t value = tc_get(d, got, at);
            int ok;
            if (exact_op(op, d)) ok = value == running;
            else if (kind == GPUPRIM_SCAN_EXCLUSIVE && i == 0) ok = value == 0 || value == tc_sign_bit(d);
            else ok = dist_float_sum_ok(d, value, ref, sumabs, i + 1 + (uint64_t)g_ranks);
            if (!ok) {
                CHECKF(0, "rank %d output %llu (global %llu): %llx, expected %llx (about %Lg)", g_rank,
                       (unsigned long long)at, (unsigned long long)i, (unsigned long long)value,
                       (unsigned long long)running, ref);
                ++errors;
            }
        }
        if (kind == GPUPRIM_SCAN_EXCLUSIVE) {
            running = tc_apply(op, d, running, x);
            ref += v;
            sumabs += fabsl(v);
        }
    }
    CHECK(errors == 0);
    if (!in_place) REQUIRE_OK(gpuprim_buffer_destroy(tc.ctx, out));
    REQUIRE_OK(gpuprim_buffer_destroy(tc.ctx, in));
    free(got);
    free(g.keys);
}

/* ------------------------------------------------------------------------ */
/* Agreement: failures on one rank, arguments that differ                   */
/* ------------------------------------------------------------------------ */

static void check_untouched(gpuprim_context_t ctx, gpuprim_buffer_t b, gpuprim_dtype_t d, uint64_t n);

/* GPUPRIM_MPI_LARGEST_MESSAGE takes digits from 1 to 2^30 only: a sign,
 * spaces or a value past 64 bits are refused at attach (strtoull took
 * "-18446744073709551615" as 1 and " 4" / "+4" as 4). The test's own
 * setting is put back afterwards. */
static void check_message_size_setting(void) {
    static const char *const refused[] = {"-18446744073709551615", "+4", " 4", "4 ", "0", "1073741825",
                                          "99999999999999999999999", "0x10", "4k"};
    const char *before = getenv("GPUPRIM_MPI_LARGEST_MESSAGE");
    char *kept = before ? strdup(before) : NULL;
    gpuprim_context_options_t options;
    gpuprim_context_t ctx = NULL;
    size_t i;
    gpuprim_context_options_init(&options);
    options.backend = GPUPRIM_BACKEND_CPU;
    REQUIRE_OK(gpuprim_context_create(&options, &ctx, NULL, 0));
    for (i = 0; i < sizeof refused / sizeof refused[0]; ++i) {
        tc_where("GPUPRIM_MPI_LARGEST_MESSAGE = '%s'", refused[i]);
        setenv("GPUPRIM_MPI_LARGEST_MESSAGE", refused[i], 1);
        CHECK_STATUS(gpuprim_context_attach_communicator(ctx, GPUPRIM_COMM_MPI, &g_world),
                     GPUPRIM_ERROR_INVALID_ARGUMENT);
        CHECK_MESSAGE(ctx, "GPUPRIM_MPI_LARGEST_MESSAGE");
    }
    tc_where("GPUPRIM_MPI_LARGEST_MESSAGE = '1073741824'");
    setenv("GPUPRIM_MPI_LARGEST_MESSAGE", "1073741824", 1);
    CHECK_OK(gpuprim_context_attach_communicator(ctx, GPUPRIM_COMM_MPI, &g_world));
    if (kept) setenv("GPUPRIM_MPI_LARGEST_MESSAGE", kept, 1);
    else unsetenv("GPUPRIM_MPI_LARGEST_MESSAGE");
    free(kept);
    REQUIRE_OK(gpuprim_context_destroy(ctx));
}

static void check_agreement(void) {
    const uint64_t n = 100;
    gpuprim_buffer_t keys = poisoned(GPUPRIM_DTYPE_U32, n), out = poisoned(GPUPRIM_DTYPE_U32, n);
    gpuprim_buffer_t f32 = poisoned(GPUPRIM_DTYPE_F32, n);
    gpuprim_sort_options_t options;
    gpuprim_status_t status;
    void *host;
    uint64_t i, result = 0;
    int bad = g_ranks - 1;

    tc_where("agreement: a NULL keys_in on rank %d", bad);
    status = gpuprim_distributed_sort(tc.ctx, g_rank == bad ? NULL : keys, NULL, out, NULL, NULL);
    CHECKF(status == GPUPRIM_ERROR_NULL_POINTER, "status %d", (int)status);
    if (g_rank == bad) CHECK_MESSAGE(tc.ctx, "keys_in");
    else if (g_ranks > 1) CHECK_MESSAGE(tc.ctx, "failed on rank");
    host = download(out, GPUPRIM_DTYPE_U32, n);
    for (i = 0; i < n; ++i) CHECK(tc_get(GPUPRIM_DTYPE_U32, host, i) == tc_poison_bits(GPUPRIM_DTYPE_U32));
    free(host);

    if (g_ranks > 1) {
        tc_where("agreement: rank %d sorts descending, the others ascending", bad);
        gpuprim_sort_options_init(&options);
        if (g_rank == bad) options.order = GPUPRIM_ORDER_DESCENDING;
        CHECK_STATUS(gpuprim_distributed_sort(tc.ctx, keys, NULL, out, NULL, &options), GPUPRIM_ERROR_INVALID_ARGUMENT);
        CHECK_MESSAGE(tc.ctx, "options->order");

        tc_where("agreement: rank %d reduces f32, the others u32", bad);
        CHECK_STATUS(gpuprim_distributed_reduce(tc.ctx, GPUPRIM_OP_SUM, g_rank == bad ? f32 : keys, &result),
                     GPUPRIM_ERROR_INVALID_ARGUMENT);
        CHECK_MESSAGE(tc.ctx, "dtype");

        tc_where("agreement: rank %d asks another k", bad);
        {
            const uint64_t k = g_rank == bad ? 2 : 1;
            gpuprim_buffer_t slots = poisoned(GPUPRIM_DTYPE_U32, k);
            CHECK_STATUS(gpuprim_distributed_topk(tc.ctx, keys, k, GPUPRIM_ORDER_ASCENDING, slots, NULL),
                         GPUPRIM_ERROR_INVALID_ARGUMENT);
            CHECK_MESSAGE(tc.ctx, "k =");
            REQUIRE_OK(gpuprim_buffer_destroy(tc.ctx, slots));
        }

        tc_where("agreement: rank %d argsorts into u64 indices, the others i64", bad);
        {
            gpuprim_buffer_t positions = poisoned(g_rank == bad ? GPUPRIM_DTYPE_U64 : GPUPRIM_DTYPE_I64, n);
            CHECK_STATUS(gpuprim_distributed_argsort(tc.ctx, keys, NULL, positions, NULL),
                         GPUPRIM_ERROR_INVALID_ARGUMENT);
            CHECK_MESSAGE(tc.ctx, "the indices' dtype");
            REQUIRE_OK(gpuprim_buffer_destroy(tc.ctx, positions));
        }
    }
    tc_where("agreement: top-k k past the global count");
    {
        const uint64_t k = n * (uint64_t)g_ranks + 1;
        gpuprim_buffer_t slots = poisoned(GPUPRIM_DTYPE_U32, k);
        CHECK_STATUS(gpuprim_distributed_topk(tc.ctx, keys, k, GPUPRIM_ORDER_ASCENDING, slots, NULL),
                     GPUPRIM_ERROR_INVALID_ARGUMENT);
        CHECK_MESSAGE(tc.ctx, "together");
        REQUIRE_OK(gpuprim_buffer_destroy(tc.ctx, slots));
    }

    /* A workspace query open on one rank: every distributed call refuses
     * it on every rank (the old library returned on that rank alone, before
     * the agreement, and the others waited in it for good), then the ranks
     * are still in step. */
    {
        gpuprim_buffer_t indices = poisoned(GPUPRIM_DTYPE_I64, n), slots = poisoned(GPUPRIM_DTYPE_U32, 2);
        gpuprim_workspace_sizes_t sizes;
        int call;
        if (g_rank == bad) REQUIRE_OK(gpuprim_context_begin_workspace_query(tc.ctx));
        for (call = 0; call < 5; ++call) {
            static const char *const names[5] = {"reduce", "scan", "sort", "argsort", "topk"};
            tc_where("agreement: a workspace query open on rank %d, distributed %s", bad, names[call]);
            switch (call) {
            case 0: status = gpuprim_distributed_reduce(tc.ctx, GPUPRIM_OP_SUM, keys, &result); break;
            case 1: status = gpuprim_distributed_scan(tc.ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, keys, out); break;
            case 2: status = gpuprim_distributed_sort(tc.ctx, keys, NULL, out, NULL, NULL); break;
            case 3: status = gpuprim_distributed_argsort(tc.ctx, keys, NULL, indices, NULL); break;
            default: status = gpuprim_distributed_topk(tc.ctx, keys, 2, GPUPRIM_ORDER_ASCENDING, slots, NULL); break;
            }
            CHECKF(status == GPUPRIM_ERROR_INVALID_ARGUMENT, "status %d", (int)status);
            if (g_rank == bad) CHECK_MESSAGE(tc.ctx, "workspace query is open");
            else if (g_ranks > 1) CHECK_MESSAGE(tc.ctx, "failed on rank");
        }
        if (g_rank == bad) {
            memset(&sizes, 0, sizeof sizes);
            sizes.struct_size = sizeof sizes;
            REQUIRE_OK(gpuprim_context_end_workspace_query(tc.ctx, &sizes));
        }
        check_untouched(tc.ctx, out, GPUPRIM_DTYPE_U32, n);
        check_untouched(tc.ctx, indices, GPUPRIM_DTYPE_I64, n);
        check_untouched(tc.ctx, slots, GPUPRIM_DTYPE_U32, 2);
        tc_where("agreement: after the query, a distributed reduce on every rank");
        REQUIRE_OK(gpuprim_distributed_reduce(tc.ctx, GPUPRIM_OP_MAX, keys, &result));
        REQUIRE_OK(gpuprim_buffer_destroy(tc.ctx, indices));
        REQUIRE_OK(gpuprim_buffer_destroy(tc.ctx, slots));
    }

    /* keys_out given on the even ranks only (each rank's own business, as
     * in top-k): the same indices as without it anywhere, and the sorted
     * keys where given. */
    {
        gpuprim_buffer_t mixed = poisoned(GPUPRIM_DTYPE_I64, n), plain = poisoned(GPUPRIM_DTYPE_I64, n);
        gpuprim_buffer_t sorted = poisoned(GPUPRIM_DTYPE_U32, n), random_keys = poisoned(GPUPRIM_DTYPE_U32, n);
        void *host_keys = tc_xmalloc(n * 4), *a, *b;
        for (i = 0; i < n; ++i) tc_set(GPUPRIM_DTYPE_U32, host_keys, i, tc_rand() % 50);
        REQUIRE_OK(gpuprim_buffer_upload(tc.ctx, random_keys, 0, host_keys, n));
        tc_where("agreement: argsort with keys_out on the even ranks only");
        CHECK_OK(gpuprim_distributed_argsort(tc.ctx, random_keys, g_rank % 2 == 0 ? sorted : NULL, mixed, NULL));
        CHECK_OK(gpuprim_distributed_argsort(tc.ctx, random_keys, NULL, plain, NULL));
        a = download(mixed, GPUPRIM_DTYPE_I64, n);
        b = download(plain, GPUPRIM_DTYPE_I64, n);
        CHECK(memcmp(a, b, n * 8) == 0);
        free(a);
        free(b);
        if (g_rank % 2 != 0) check_untouched(tc.ctx, sorted, GPUPRIM_DTYPE_U32, n);
        free(host_keys);
        REQUIRE_OK(gpuprim_buffer_destroy(tc.ctx, mixed));
        REQUIRE_OK(gpuprim_buffer_destroy(tc.ctx, plain));
        REQUIRE_OK(gpuprim_buffer_destroy(tc.ctx, sorted));
        REQUIRE_OK(gpuprim_buffer_destroy(tc.ctx, random_keys));
    }

    tc_where("agreement: argsort into U32 indices");
    CHECK_STATUS(gpuprim_distributed_argsort(tc.ctx, keys, NULL, out, NULL), GPUPRIM_ERROR_DTYPE_MISMATCH);
    CHECK_MESSAGE(tc.ctx, "I64 or U64");

    tc_where("agreement: a bad scan kind on rank 0");
    CHECK_STATUS(gpuprim_distributed_scan(tc.ctx, GPUPRIM_OP_SUM,
                                          g_rank == 0 ? (gpuprim_scan_kind_t)7 : GPUPRIM_SCAN_INCLUSIVE, keys, out),
                 GPUPRIM_ERROR_INVALID_ENUM);
    REQUIRE_OK(gpuprim_buffer_destroy(tc.ctx, keys));
    REQUIRE_OK(gpuprim_buffer_destroy(tc.ctx, out));
    REQUIRE_OK(gpuprim_buffer_destroy(tc.ctx, f32));
}

/* One rank whose allocator refuses the workspace of the call's local steps
 * (its sort, top-k, reduce or scan, the merge): every rank must fail alike
 * (OUT_OF_MEMORY) before any data moves, with the outputs untouched; a rank
 * failing after the others had entered a collective would leave them
 * waiting (a hang). The checks run on a second context, attached to the
 * same communicator, whose allocator gives the failing rank one more block
 * (the distributed scratch, the call's first) and refuses the next. */
typedef struct refusing_allocator {
    long allowed; /* blocks still given before refusing; -1: all */
    long refused;
} refusing_allocator_t;

static int refusing_allocate(void *user, uint64_t bytes, void *stream, void **memory) {
    refusing_allocator_t *allocator = (refusing_allocator_t *)user;
    (void)stream;
    if (allocator->allowed == 0) {
        allocator->refused++;
        return 1;
    }
    if (allocator->allowed > 0) allocator->allowed--;
#if defined(GPUPRIM_TEST_NCCL)
    if (g_cuda) return cudaMalloc(memory, bytes) == cudaSuccess ? 0 : 1;
#endif
    {
        /* 256-byte aligned from malloc (C99 has no aligned_alloc): the raw
         * pointer is kept just before the block. */
        char *raw = (char *)malloc((size_t)bytes + 256 + sizeof(void *));
        uintptr_t start;
        if (!raw) return 1;
        start = ((uintptr_t)(raw + sizeof(void *)) + 255) & ~(uintptr_t)255;
        ((void **)start)[-1] = raw;
        *memory = (void *)start;
    }
    return 0;
}

static void refusing_deallocate(void *user, void *memory, uint64_t bytes, void *stream) {
    (void)user;
    (void)bytes;
#if defined(GPUPRIM_TEST_NCCL)
    if (g_cuda) {
        cudaStreamSynchronize((cudaStream_t)stream); /* the header's rule for an allocator that frees at once */
        cudaFree(memory);
        return;
    }
#endif
    (void)stream;
    free(((void **)memory)[-1]);
}

/* The call's status on every rank: the same everywhere, and success or
 * OUT_OF_MEMORY. Returns whether it failed. */
static int failed_everywhere(gpuprim_context_t ctx, gpuprim_status_t status, int bad, const char *call) {
    int mine = (int)status, all[64], r, same = 1;
    MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    for (r = 0; r < g_ranks; ++r) same = same && all[r] == mine;
    CHECKF(same, "%s: rank %d got status %d, not every rank's", call, g_rank, mine);
    CHECKF(status == GPUPRIM_SUCCESS || status == GPUPRIM_ERROR_OUT_OF_MEMORY, "%s: status %d (%s)", call, mine,
           gpuprim_context_last_error(ctx));
    if (status != GPUPRIM_SUCCESS && g_ranks > 1 && g_rank != bad) CHECK_MESSAGE(ctx, "failed on rank");
    return status != GPUPRIM_SUCCESS;
}

static void check_untouched(gpuprim_context_t ctx, gpuprim_buffer_t b, gpuprim_dtype_t d, uint64_t n) {
    uint64_t i, changed = 0;
    void *host = download_from(ctx, b, d, n);
    for (i = 0; i < n; ++i) changed += tc_get(d, host, i) != tc_poison_bits(d);
    CHECKF(changed == 0, "%llu of %llu outputs written by a call that failed", (unsigned long long)changed,
           (unsigned long long)n);
    free(host);
}

/* Every rank empties the context's workspace; the failing rank's allocator
 * then gives `allowed` more blocks and refuses the rest. */
static void arm(gpuprim_context_t ctx, refusing_allocator_t *allocator, int bad, long allowed) {
    REQUIRE_OK(gpuprim_context_release_workspace(ctx));
    allocator->refused = 0;
    allocator->allowed = g_rank == bad ? allowed : -1;
}

/* After a call made with arm(): whether the failing rank's allocator refused
 * a block (told to every rank) must match whether the call failed, on
 * every rank alike. must_refuse: the call's local steps are known to take a
 * block on both backends (else the case proves nothing). Returns whether
 * the call succeeded; the allocator gives again. */
static int refusal_fails_everywhere(gpuprim_context_t ctx, refusing_allocator_t *allocator, int bad,
                                    const char *call, gpuprim_status_t status, int must_refuse) {
    int refused = g_rank == bad && allocator->refused > 0;
    const int failed = failed_everywhere(ctx, status, bad, call);
    MPI_Bcast(&refused, 1, MPI_INT, bad, MPI_COMM_WORLD);
    allocator->allowed = -1;
    CHECKF(failed == refused, "%s: rank %d's allocator %s a block, yet the call %s", call, bad,
           refused ? "refused" : "refused no", failed ? "failed" : "succeeded");
    if (must_refuse) CHECKF(refused, "%s: its local steps took no block: the case proves nothing", call);
    return !failed;
}

/* A workspace held still (reserve_workspace with fix): the distributed
 * calls' own block is sized only by running them (no query measures
 * them), so held before any ran, however large the rest, they fail with
 * OUT_OF_MEMORY saying how to size it, on every rank alike, outputs
 * untouched; run once, then held, they run. */
static void check_held_workspace(void) {
    const uint64_t n = 1000, k = 5;
    gpuprim_context_t ctx = NULL;
    gpuprim_buffer_t keys, out, top;
    uint32_t *host = (uint32_t *)tc_xmalloc(n * 4);
    gpuprim_status_t status;
    uint64_t i;
    int round;

    REQUIRE_OK(gpuprim_context_create(&g_options, &ctx, NULL, 0));
#if defined(GPUPRIM_TEST_NCCL)
    if (g_cuda) REQUIRE_OK(gpuprim_context_attach_communicator(ctx, GPUPRIM_COMM_NCCL, g_nccl));
#endif
    if (!g_cuda) REQUIRE_OK(gpuprim_context_attach_communicator(ctx, GPUPRIM_COMM_MPI, &g_world));
    for (i = 0; i < n; ++i) host[i] = (uint32_t)(i * 2654435761u) ^ (uint32_t)g_rank;
    keys = tc_buffer_from(ctx, GPUPRIM_DTYPE_U32, host, n);
    out = poisoned_in(ctx, GPUPRIM_DTYPE_U32, n);
    top = poisoned_in(ctx, GPUPRIM_DTYPE_U32, k);
    tc_where("distributed calls on a workspace held (64 MiB) before they ran");
    REQUIRE_OK(gpuprim_context_reserve_workspace(ctx, (uint64_t)64 << 20, 1));
    status = gpuprim_distributed_sort(ctx, keys, NULL, out, NULL, NULL);
    if (g_ranks > 1) {
        /* every rank's own block is held: each fails with its own message */
        CHECK_STATUS(status, GPUPRIM_ERROR_OUT_OF_MEMORY);
        CHECK_MESSAGE(ctx, "run the distributed calls once before holding");
        check_untouched(ctx, out, GPUPRIM_DTYPE_U32, n);
        CHECK_STATUS(gpuprim_distributed_topk(ctx, keys, k, GPUPRIM_ORDER_ASCENDING, top, NULL),
                     GPUPRIM_ERROR_OUT_OF_MEMORY);
        check_untouched(ctx, top, GPUPRIM_DTYPE_U32, k);
    }
    tc_where("distributed calls run once, then held");
    REQUIRE_OK(gpuprim_context_reserve_workspace(ctx, 0, 0));
    for (round = 0; round < 2; ++round) {
        CHECK_OK(gpuprim_distributed_sort(ctx, keys, NULL, out, NULL, NULL));
        CHECK_OK(gpuprim_distributed_topk(ctx, keys, k, GPUPRIM_ORDER_ASCENDING, top, NULL));
        if (round == 0) REQUIRE_OK(gpuprim_context_reserve_workspace(ctx, 0, 1));
    }
    REQUIRE_OK(gpuprim_buffer_destroy(ctx, keys));
    REQUIRE_OK(gpuprim_buffer_destroy(ctx, out));
    REQUIRE_OK(gpuprim_buffer_destroy(ctx, top));
    REQUIRE_OK(gpuprim_context_destroy(ctx));
    free(host);
}

static void check_refused_workspace(void) {
    enum { kBuffers = 7 };
    const uint64_t n = 5000, k = 16;
    const int bad = g_ranks - 1;
    refusing_allocator_t allocator = {-1, 0};
    gpuprim_context_options_t options = g_options;
    gpuprim_context_t ctx = NULL;
    gpuprim_buffer_t b[kBuffers];
    char message[512] = "";
    unsigned char result[8];
    void *host = tc_xmalloc(n * 4);
    int i;

    options.allocate = refusing_allocate;
    options.deallocate = refusing_deallocate;
    options.allocator_user = &allocator;
    if (gpuprim_context_create(&options, &ctx, message, sizeof message) != GPUPRIM_SUCCESS) {
        CHECKF(0, "gpuprim_context_create with an allocator: %s", message);
        free(host);
        return;
    }
#if defined(GPUPRIM_TEST_NCCL)
    if (g_cuda) REQUIRE_OK(gpuprim_context_attach_communicator(ctx, GPUPRIM_COMM_NCCL, g_nccl));
#endif
    if (!g_cuda) REQUIRE_OK(gpuprim_context_attach_communicator(ctx, GPUPRIM_COMM_MPI, &g_world));
    tc_fill(GPUPRIM_DTYPE_U32, host, n, TC_RANDOM_BITS);
    b[0] = tc_buffer_from(ctx, GPUPRIM_DTYPE_U32, host, n); /* keys */
    b[1] = tc_buffer_from(ctx, GPUPRIM_DTYPE_U32, host, n); /* values */
    b[2] = poisoned_in(ctx, GPUPRIM_DTYPE_U32, n);          /* keys out */
    b[3] = poisoned_in(ctx, GPUPRIM_DTYPE_U32, n);          /* values out */
    b[4] = poisoned_in(ctx, GPUPRIM_DTYPE_I64, n);          /* argsort's indices */
    b[5] = poisoned_in(ctx, GPUPRIM_DTYPE_U32, k);          /* top-k's keys */
    b[6] = poisoned_in(ctx, GPUPRIM_DTYPE_I64, k);          /* top-k's indices */
    free(host);

    /* Each case starts from an empty workspace: on the failing rank the
     * call's first block is its distributed scratch (sort, argsort, top-k;
     * reduce and scan have none) and the next, the local steps', is
     * refused. Whenever a block was refused, every rank must fail. */
    tc_where("refused workspace: rank %d's allocator refuses the local steps' block; distributed sort", bad);
    arm(ctx, &allocator, bad, 1);
    if (!refusal_fails_everywhere(ctx, &allocator, bad, "sort",
                                  gpuprim_distributed_sort(ctx, b[0], b[1], b[2], b[3], NULL), 1)) {
        check_untouched(ctx, b[2], GPUPRIM_DTYPE_U32, n);
        check_untouched(ctx, b[3], GPUPRIM_DTYPE_U32, n);
    }

    tc_where("refused workspace: rank %d; distributed argsort without keys_out", bad);
    arm(ctx, &allocator, bad, 1);
    if (!refusal_fails_everywhere(ctx, &allocator, bad, "argsort",
                                  gpuprim_distributed_argsort(ctx, b[0], NULL, b[4], NULL), 1))
        check_untouched(ctx, b[4], GPUPRIM_DTYPE_I64, n);

    tc_where("refused workspace: rank %d; distributed top-k", bad);
    arm(ctx, &allocator, bad, 1);
    if (!refusal_fails_everywhere(ctx, &allocator, bad, "topk",
                                  gpuprim_distributed_topk(ctx, b[0], k, GPUPRIM_ORDER_DESCENDING, b[5], b[6]), 0)) {
        check_untouched(ctx, b[5], GPUPRIM_DTYPE_U32, k);
        check_untouched(ctx, b[6], GPUPRIM_DTYPE_I64, k);
    }

    tc_where("refused workspace: rank %d refuses every block; distributed reduce", bad);
    arm(ctx, &allocator, bad, 0);
    memset(result, 0x5a, sizeof result);
    if (!refusal_fails_everywhere(ctx, &allocator, bad, "reduce",
                                  gpuprim_distributed_reduce(ctx, GPUPRIM_OP_SUM, b[0], result), 0))
        CHECK(result[0] == 0x5a && result[3] == 0x5a);

    tc_where("refused workspace: rank %d refuses every block; distributed scan", bad);
    arm(ctx, &allocator, bad, 0);
    if (!refusal_fails_everywhere(ctx, &allocator, bad, "scan",
                                  gpuprim_distributed_scan(ctx, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, b[0], b[2]),
                                  0))
        check_untouched(ctx, b[2], GPUPRIM_DTYPE_U32, n);

    tc_where("refused workspace: rank %d's allocator gives again; the ranks are still in step", bad);
    allocator.allowed = -1;
    CHECK_STATUS(gpuprim_distributed_sort(ctx, b[0], b[1], b[2], b[3], NULL), GPUPRIM_SUCCESS);
    CHECK_STATUS(gpuprim_distributed_topk(ctx, b[0], k, GPUPRIM_ORDER_DESCENDING, b[5], b[6]), GPUPRIM_SUCCESS);

    for (i = 0; i < kBuffers; ++i) REQUIRE_OK(gpuprim_buffer_destroy(ctx, b[i]));
    REQUIRE_OK(gpuprim_context_destroy(ctx));
}

/* Attaching and detaching: local calls, no communication. */
static void check_attach(void) {
    int32_t rank = -1, ranks = -1;
    gpuprim_buffer_t keys = poisoned(GPUPRIM_DTYPE_U32, 4);
    uint64_t result;
    tc_where("attach: rank and rank count");
    CHECK_OK(gpuprim_context_get_rank(tc.ctx, &rank, &ranks));
    CHECK(rank == g_rank && ranks == g_ranks);
    CHECK_STATUS(gpuprim_context_get_rank(tc.ctx, NULL, &ranks), GPUPRIM_ERROR_NULL_POINTER);
    tc_where("attach: bad arguments");
    CHECK_STATUS(gpuprim_context_attach_communicator(tc.ctx, GPUPRIM_COMM_MPI, NULL), GPUPRIM_ERROR_NULL_POINTER);
    CHECK_MESSAGE(tc.ctx, "communicator");
    CHECK_STATUS(gpuprim_context_attach_communicator(tc.ctx, (gpuprim_comm_kind_t)9, &g_world),
                 GPUPRIM_ERROR_INVALID_ENUM);
    CHECK_STATUS(gpuprim_context_attach_communicator(NULL, GPUPRIM_COMM_MPI, &g_world), GPUPRIM_ERROR_NULL_POINTER);
    if (g_cuda) {
        CHECK_STATUS(gpuprim_context_attach_communicator(tc.ctx, GPUPRIM_COMM_MPI, &g_world),
                     GPUPRIM_ERROR_INVALID_ARGUMENT);
        CHECK_MESSAGE(tc.ctx, "CPU context");
    } else {
        gpuprim_status_t s = gpuprim_context_attach_communicator(tc.ctx, GPUPRIM_COMM_NCCL, &g_world);
        CHECKF(s == GPUPRIM_ERROR_INVALID_ARGUMENT || s == GPUPRIM_ERROR_BACKEND_UNAVAILABLE, "status %d", (int)s);
    }
    if (!g_cuda && g_ranks >= 2) {
        /* An intercommunicator (the even and the odd ranks): its collectives
         * gather from the other group, MPI_Comm_size counts this one; the
         * old library took it and its calls hung. */
        MPI_Comm half = MPI_COMM_NULL, inter = MPI_COMM_NULL;
        tc_where("attach: an MPI intercommunicator");
        MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, g_rank % 2 == 0 ? 1 : 0, 77, &inter);
        CHECK_STATUS(gpuprim_context_attach_communicator(tc.ctx, GPUPRIM_COMM_MPI, &inter),
                     GPUPRIM_ERROR_INVALID_ARGUMENT);
        CHECK_MESSAGE(tc.ctx, "intercommunicator");
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }
    /* A failed attach keeps the communicator attached before. */
    CHECK_OK(gpuprim_context_get_rank(tc.ctx, &rank, &ranks));
    CHECK(rank == g_rank);
    tc_where("attach: detach, then every distributed call refuses");
    CHECK_OK(gpuprim_context_detach_communicator(tc.ctx));
    CHECK_OK(gpuprim_context_detach_communicator(tc.ctx));
    CHECK_STATUS(gpuprim_distributed_reduce(tc.ctx, GPUPRIM_OP_SUM, keys, &result), GPUPRIM_ERROR_INVALID_ARGUMENT);
    CHECK_MESSAGE(tc.ctx, "no communicator");
    CHECK_STATUS(gpuprim_context_get_rank(tc.ctx, &rank, &ranks), GPUPRIM_ERROR_INVALID_ARGUMENT);
#if defined(GPUPRIM_TEST_NCCL)
    if (g_cuda) REQUIRE_OK(gpuprim_context_attach_communicator(tc.ctx, GPUPRIM_COMM_NCCL, g_nccl));
#endif
    if (!g_cuda) REQUIRE_OK(gpuprim_context_attach_communicator(tc.ctx, GPUPRIM_COMM_MPI, &g_world));
    REQUIRE_OK(gpuprim_buffer_destroy(tc.ctx, keys));

    tc_where("handles: a NULL or destroyed context (no communication), a buffer of another context");
    {
        gpuprim_context_t other = NULL, gone = NULL;
        gpuprim_context_options_t cpu;
        gpuprim_buffer_t foreign = NULL, mine = poisoned(GPUPRIM_DTYPE_U32, 4);
        gpuprim_context_options_init(&cpu);
        cpu.backend = GPUPRIM_BACKEND_CPU;
        REQUIRE_OK(gpuprim_context_create(&cpu, &other, NULL, 0));
        REQUIRE_OK(gpuprim_context_create(&cpu, &gone, NULL, 0));
        REQUIRE_OK(gpuprim_context_destroy(gone));
        REQUIRE_OK(gpuprim_buffer_create(other, GPUPRIM_DTYPE_U32, 4, &foreign));
        CHECK_STATUS(gpuprim_distributed_sort(NULL, mine, NULL, mine, NULL, NULL), GPUPRIM_ERROR_NULL_POINTER);
        CHECK_STATUS(gpuprim_distributed_reduce(gone, GPUPRIM_OP_SUM, mine, &result), GPUPRIM_ERROR_INVALID_HANDLE);
        CHECK_STATUS(gpuprim_context_attach_communicator(gone, GPUPRIM_COMM_MPI, &g_world),
                     GPUPRIM_ERROR_INVALID_HANDLE);
        CHECK_STATUS(gpuprim_distributed_sort(tc.ctx, foreign, NULL, mine, NULL, NULL), GPUPRIM_ERROR_CONTEXT_MISMATCH);
        CHECK_MESSAGE(tc.ctx, "keys_in");
        REQUIRE_OK(gpuprim_buffer_destroy(tc.ctx, mine));
        REQUIRE_OK(gpuprim_context_destroy(other));
    }
}

/* ------------------------------------------------------------------------ */

/* Every check, on the message size the environment sets. */
static void check_everything(void) {
    static const gpuprim_dtype_t sort_dtypes[] = {GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_I32, GPUPRIM_DTYPE_F32,
                                                  GPUPRIM_DTYPE_F64, GPUPRIM_DTYPE_I64, GPUPRIM_DTYPE_U8,
                                                  GPUPRIM_DTYPE_I16, GPUPRIM_DTYPE_F16, GPUPRIM_DTYPE_BF16,
                                                  GPUPRIM_DTYPE_U64, GPUPRIM_DTYPE_I8,  GPUPRIM_DTYPE_U16};
    static const tc_pattern_t patterns[] = {TC_RANDOM_BITS, TC_SMALL_RANGE, TC_EQUAL,  TC_SORTED,
                                            TC_REVERSED,    TC_SPECIAL,     TC_NAN_HEAVY, TC_TINY};
    const int dtypes = (int)(sizeof sort_dtypes / sizeof *sort_dtypes);
    const int pattern_count = (int)(sizeof patterns / sizeof *patterns);
    const uint64_t sizes[] = {1, 7, 300, 5000};
    const uint64_t large = tc_env_flag("GPUPRIM_TEST_LARGE") ? (1u << 22) : 40000;
    int t, p, l, s;

    check_attach();
    check_agreement();
    check_message_size_setting();
    check_refused_workspace();
    check_held_workspace();

    for (t = 0; t < dtypes; ++t) {
        gpuprim_dtype_t d = sort_dtypes[t];
        unsigned bits = tc_bits(d);
        for (l = 0; l < LAYOUT_COUNT; ++l)
            for (s = 0; s < 4; ++s) {
                tc_pattern_t pattern = patterns[(t + l + s) % pattern_count];
                check_sort(d, pattern, (enum layout_kind)l, sizes[s], (t + s) & 1, 0, bits,
                           s == 1 ? GPUPRIM_DTYPE_U8 : s == 2 ? GPUPRIM_DTYPE_U64 : GPUPRIM_DTYPE_U32, s == 3);
            }
        /* Keys only, a bit range, every pattern at one size. */
        for (p = 0; p < pattern_count; ++p)
            check_sort(d, patterns[p], RANDOM_COUNTS, 300, p & 1, bits > 8 ? 3 : 1, bits - 1, (gpuprim_dtype_t)-1,
                       p & 1);
        check_argsort(d, patterns[t % pattern_count], RANDOM_COUNTS, 300, t & 1,
                      (t & 1) ? GPUPRIM_DTYPE_I64 : GPUPRIM_DTYPE_U64, t % 3 != 0);
        check_argsort(d, TC_EQUAL, ONE_RANK_HOLDS_ALL, 200, 0, GPUPRIM_DTYPE_I64, 1);
        check_topk(d, patterns[(t + 1) % pattern_count], RANDOM_COUNTS, 300, t & 1, 1 + tc_below(40),
                   (t & 1) ? GPUPRIM_DTYPE_I32 : GPUPRIM_DTYPE_U64, t % 3 != 1);
        check_topk(d, TC_SMALL_RANGE, EQUAL_COUNTS, 50, 1, UINT64_MAX, GPUPRIM_DTYPE_I64, 1); /* k = all */
        check_topk(d, TC_EQUAL, ONE_RANK_HOLDS_ALL, 100, 0, 33, (gpuprim_dtype_t)-1, 1);
    }
    /* Larger, random layouts. */
    check_sort(GPUPRIM_DTYPE_U32, TC_RANDOM_BITS, RANDOM_COUNTS, large, 0, 0, 32, GPUPRIM_DTYPE_U32, 0);
    check_sort(GPUPRIM_DTYPE_F32, TC_NAN_HEAVY, EQUAL_COUNTS, large, 1, 0, 32, (gpuprim_dtype_t)-1, 1);
    check_sort(GPUPRIM_DTYPE_U64, TC_SMALL_RANGE, ONE_RANK_HOLDS_ALL, large, 0, 0, 64, GPUPRIM_DTYPE_U64, 0);
    check_topk(GPUPRIM_DTYPE_F32, TC_RANDOM_BITS, EQUAL_COUNTS, large, 1, 5000, GPUPRIM_DTYPE_I64, 1);

    for (t = 0; t < TC_DTYPE_COUNT; ++t) {
        gpuprim_dtype_t d = tc_all_dtypes[t];
        for (l = 0; l < LAYOUT_COUNT; ++l) {
            gpuprim_op_t op = (gpuprim_op_t)((t + l) % 3);
            /* Float sums on values whose partial sums stay in range (16-bit floats: subnormals). */
            tc_pattern_t pattern = !tc_is_float(d) || op != GPUPRIM_OP_SUM ? patterns[(t + l) % pattern_count]
                                   : tc_is_half(d)                         ? TC_TINY
                                                                           : TC_MODERATE;
            check_reduce(d, pattern, (enum layout_kind)l, l == 0 ? 3000 : 77, op);
            check_scan(d, pattern, (enum layout_kind)l, l == 1 ? 3000 : 77, op,
                       (t + l) & 1 ? GPUPRIM_SCAN_EXCLUSIVE : GPUPRIM_SCAN_INCLUSIVE, l == 2);
        }
        check_reduce(d, TC_SPECIAL, RANDOM_COUNTS, 500, GPUPRIM_OP_MAX);
        check_scan(d, TC_SPECIAL, RANDOM_COUNTS, 500, GPUPRIM_OP_MIN, GPUPRIM_SCAN_INCLUSIVE, 0);
    }
    check_scan(GPUPRIM_DTYPE_I32, TC_RANDOM_BITS, RANDOM_COUNTS, large, GPUPRIM_OP_SUM, GPUPRIM_SCAN_INCLUSIVE, 0);
    check_reduce(GPUPRIM_DTYPE_F32, TC_MODERATE, RANDOM_COUNTS, large, GPUPRIM_OP_SUM);
}

/* distributed_np3_many_messages (GPUPRIM_TEST_MANY_MESSAGES with 1-byte MPI
 * messages): each rank's block of 15,000 8-byte keys is 120,000 messages to
 * each peer. Posted all at once (before the engine's windows) they arrived
 * out of place on Open MPI's shared-memory transport and the top-k returned
 * wrong keys and indices with SUCCESS. */
static void check_many_messages(void) {
    check_topk(GPUPRIM_DTYPE_I64, TC_SMALL_RANGE, EQUAL_COUNTS, 15000, 0, UINT64_MAX, GPUPRIM_DTYPE_I32, 1);
    check_topk(GPUPRIM_DTYPE_U64, TC_SMALL_RANGE, RANDOM_COUNTS, 15000, 1, 20000, GPUPRIM_DTYPE_I64, 0);
    check_sort(GPUPRIM_DTYPE_U64, TC_SMALL_RANGE, EQUAL_COUNTS, 15000, 0, 0, 64, GPUPRIM_DTYPE_U32, 0);
}

int main(int argc, char **argv) {
    long failures;

    (void)argc;
    (void)argv;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_ranks);
    if (g_ranks > 64) {
        if (g_rank == 0) fprintf(stderr, "test_distributed: at most 64 ranks\n");
        MPI_Finalize();
        return 1;
    }
    setup();
    if (tc_env_flag("GPUPRIM_TEST_MANY_MESSAGES")) check_many_messages();
    else check_everything();

    failures = global_failures();
    if (g_rank != 0 && tc.failures == 0) tc.checks = 0; /* rank 0 prints the summary */
    if (g_rank == 0 && failures > tc.failures) tc.failures = failures;
    {
        int code = (g_rank == 0 || tc.failures) ? tc_finish() : (gpuprim_context_destroy(tc.ctx), 0);
#if defined(GPUPRIM_TEST_NCCL)
        if (g_cuda) ncclCommDestroy(g_nccl);
#endif
        MPI_Finalize();
        return code;
    }
}
