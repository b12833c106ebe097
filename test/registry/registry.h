/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The test registry: every primitive says once, in its own file
 * (test/registry/<primitive>_case.c), which calls to make for each
 * cross-cutting program (its plans), how to call itself through the public
 * API on the buffers the registry made, when two results of the same call
 * agree, and what the call must give (a CPU reference written from the
 * header). The cross-cutting programs (test_backends_agree,
 * test_cpu_threads, test_handles, rel_alloc_faults, test_graph_registry)
 * loop over the table registry_cases.h (written from the case files'
 * names) and never name a primitive. Adding a primitive: its case file
 * (test/README.md).
 *
 * A call (tr_call_t) is data: its buffer arguments (dtype, count, initial
 * host contents, in place with an earlier one, read back or not), its
 * segments (a tc_layout_t, or none) and its scalars (op, scan kind, order,
 * bit range, k). tr_run() makes the buffers on a context, calls the case's
 * invoke(), reads the outputs back and destroys the buffers, so a program
 * can run the same call on several contexts and compare.
 */
#ifndef GPUPRIM_TEST_REGISTRY_H
#define GPUPRIM_TEST_REGISTRY_H

#define TC_SHARED_STATE 1
#include "../test_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a plan is for: each cross-cutting program asks for its own. */
typedef enum tr_plan {
    TR_PLAN_BACKENDS, /* test_backends_agree: CPU against CUDA, sizes around the CUDA paths */
    TR_PLAN_THREADS,  /* test_cpu_threads: 1, 2 and 7 CPU threads, sizes past the parallel thresholds */
    TR_PLAN_SMALL,    /* a few valid calls on a few elements, each entry point and shape once: for the
                         programs that test how calls are handled (bad handles, ...) */
    TR_PLAN_CONCURRENCY /* rel_concurrency: every entry point and shape on all twelve dtypes, sizes 0..65537
                           (tr_concurrency_count), small integer values (tr_fill_small) so that float sums
                           have one exact answer too; many threads run them at once */
} tr_plan_t;

#define TR_MAX_ARGS 8
#define TR_NO_DTYPE ((gpuprim_dtype_t)-1)

/* One buffer argument of a call. */
typedef struct tr_arg {
    int used;              /* 0: the argument is NULL */
    gpuprim_dtype_t dtype; /* element dtype */
    uint64_t count;        /* elements */
    void *host;            /* initial contents */
    int owns_host;         /* host is the call's (freed with it), not the plan's (borrowed for the visit) */
    int same_as;           /* >= 0: in place, the buffer of that earlier argument */
    int read_back;         /* an output: downloaded after the call and compared */
} tr_arg_t;

struct tr_case;

typedef struct tr_call {
    const struct tr_case *kase;
    char label[240]; /* printed with a failure */
    tr_arg_t arg[TR_MAX_ARGS];
    const tc_layout_t *layout; /* the segments (NULL: a flat call) */
    gpuprim_op_t op;
    int kind;      /* case-defined: scan kind, dot instead of reduce, ... */
    int order;     /* gpuprim_order_t */
    uint32_t begin_bit, end_bit;
    uint64_t k;
    size_t scalar_size; /* > 0: the call writes a host scalar of this size (reduce, dot) */
    /* What the call must return (SUCCESS unless the case makes a bad call
     * on purpose); a failed call must leave its read-back arguments as they
     * were and the same message on every backend. */
    gpuprim_status_t expect;
} tr_call_t;

/* What one run of a call gave back: each read-back argument's contents and
 * the host scalar. */
typedef struct tr_result {
    gpuprim_status_t status;
    char message[256]; /* the context's last error after a failed call */
    unsigned char *out[TR_MAX_ARGS];
    unsigned char scalar[16];
} tr_result_t;

typedef void (*tr_visit_t)(const tr_call_t *call, void *user);

typedef struct tr_case {
    const char *name; /* what ctest and the programs' argument call it: "sort" */
    /* Makes every call of the plan and hands each to visit (calls it may
     * free afterwards: use tr_call_free). The same calls in the same order
     * whatever the seed (only their contents are random): --shard programs
     * share the calls by their place in the run. */
    void (*each)(tr_plan_t plan, tr_visit_t visit, void *user);
    /* The public API on the buffers (b[i] for call->arg[i], NULL where
     * unused) and segments made on ctx; writes a scalar result to scalar. */
    gpuprim_status_t (*invoke)(const tr_call_t *call, gpuprim_context_t ctx, gpuprim_buffer_t const *b,
                               const gpuprim_segments_t *segments, void *scalar);
    /* Whether two backends' results agree (NULL: bit for bit). Not used where
     * results must be bitwise equal (thread counts). */
    int (*agree)(const tr_call_t *call, const tr_result_t *a, const tr_result_t *b, char *why, size_t cap);
    /* The CPU reference, written from the header: fills want (which starts
     * as the read-back arguments' initial contents, tr_reference) with what
     * the call must give; 0 where it is not one exact answer (float sums). */
    int (*reference)(const tr_call_t *call, tr_result_t *want);
    /* The arguments (bit i: arg[i]) the header wants in order, unchecked
     * (merge runs, searchsorted keys, histogram edges): where the registry
     * fuzzer writes over one, the outputs are unspecified and it judges only
     * that nothing breaks (fuzz_registry.cpp). 0: none. */
    unsigned ordered_args;
    /* The arguments (bit i: arg[i]) whose host contents invoke() passes by
     * value instead of their buffer (select's comparison scalars, the even
     * histogram's bounds): a CUDA graph captured the values of its capture,
     * so test_graph_registry keeps them on a replay with new contents. */
    unsigned host_args;
    /* Every call returns its result to the host (argmin/argmax): CUDA graph
     * capture refuses them all (test_graph_registry expects none captured). */
    int host_results_only;
} tr_case_t;

/* The table (registry.c). */
extern const tr_case_t *const tr_cases[];
extern const size_t tr_case_count;
const tr_case_t *tr_find_case(const char *name);

/* Building calls. */
void tr_call_init(tr_call_t *call, const tr_case_t *kase);
void tr_call_label(tr_call_t *call, const char *format, ...) TC_PRINTF(2, 3);
/* Argument i: count elements of dtype, contents host (borrowed: it must
 * outlive the visit), or with host NULL every byte `fill` (owned). */
void tr_set_arg(tr_call_t *call, int i, gpuprim_dtype_t dtype, uint64_t count, const void *host, int fill,
                int read_back);
void tr_set_in_place(tr_call_t *call, int i, int same_as, int read_back);
void tr_call_free(tr_call_t *call);

/* A call kept past its visit (the plans free theirs): a deep copy, the
 * layout included, and its release. */
tr_call_t *tr_call_clone(const tr_call_t *call);
void tr_call_destroy(tr_call_t *call);

/* tr_run in steps, for programs that look between them: the call's buffers
 * and segments made on ctx, the call made with call_ctx, the buffers
 * destroyed. */
typedef struct tr_made {
    gpuprim_buffer_t b[TR_MAX_ARGS]; /* per argument (in place: the same handle) */
    gpuprim_buffer_t offsets;        /* CSR offsets, or NULL */
    gpuprim_segments_t segments;
} tr_made_t;
void tr_make(const tr_call_t *call, gpuprim_context_t ctx, tr_made_t *made);
gpuprim_status_t tr_invoke(const tr_call_t *call, gpuprim_context_t call_ctx, const tr_made_t *made, void *scalar);
void tr_unmake(const tr_call_t *call, gpuprim_context_t ctx, tr_made_t *made);
/* Between the steps: every read-back argument downloaded into result->out
 * (what was there before freed), and every argument's buffer given its
 * initial contents again (inputs as made, outputs poisoned as made). */
void tr_read_back(const tr_call_t *call, gpuprim_context_t ctx, const tr_made_t *made, tr_result_t *result);
void tr_refill(const tr_call_t *call, gpuprim_context_t ctx, const tr_made_t *made);

/* Runs the call on ctx: buffers made and filled, invoke, outputs read back,
 * buffers destroyed. The status is in result->status, the message of a
 * failure in result->message. */
void tr_run(const tr_call_t *call, gpuprim_context_t ctx, tr_result_t *result);
/* The same with the buffers made on ctx and the call made with call_ctx
 * (a bad handle, another context). */
void tr_run_with(const tr_call_t *call, gpuprim_context_t ctx, gpuprim_context_t call_ctx, tr_result_t *result);
void tr_result_free(tr_result_t *result);
/* A failed call left every read-back argument as it was. */
int tr_unchanged(const tr_call_t *call, const tr_result_t *r, char *why, size_t cap);
/* The case's reference for the call (want: freed with tr_result_free);
 * 0 where there is none. */
int tr_reference(const tr_call_t *call, tr_result_t *want);
/* got is the reference's result bit for bit (1 where there is no exact
 * reference). */
int tr_check(const tr_call_t *call, const tr_result_t *got, char *why, size_t cap);
/* Bit for bit: every read-back argument and the scalar. */
int tr_same_bits(const tr_call_t *call, const tr_result_t *a, const tr_result_t *b, char *why, size_t cap);
/* The case's rule (agree, else bit for bit). */
int tr_agree(const tr_call_t *call, const tr_result_t *a, const tr_result_t *b, char *why, size_t cap);

/* Inputs of the backend comparison (a fixed xorshift stream): any bit
 * pattern, or for float sums values of moderate size (so that sums
 * compare), or few distinct values. */
void tr_fill_random(gpuprim_dtype_t d, void *p, uint64_t n, int for_sum, int few);
uint64_t tr_random(void);

/* The concurrency plan's shapes: call i's element count (0 .. 65537, around
 * the tiles and thresholds), and its segments over n elements (rows, or CSR
 * with empty segments and gaps; free with tc_layout_free). */
#define TR_CONCURRENCY_SIZES 15
uint64_t tr_concurrency_count(size_t i);
tc_layout_t tr_concurrency_layout(size_t i, uint64_t n);
/* Small integers (|v| <= 15; 0..15 unsigned): every float sum of them is
 * exact in any order (tr_float_sum_exact). negative_zeros: floats have
 * -0.0 among the zeros (for MIN/MAX and sorts; a sum of them starting with
 * -0.0 has no one answer). */
void tr_fill_small(gpuprim_dtype_t d, void *p, uint64_t n, int negative_zeros);

/* Whether the float sum of the terms [begin, end) of a (times b, when b is
 * not NULL: a dot) has one exact answer however the backend orders it: every
 * term is a multiple of 2^e (>= 2^-149) with sum|x| < 2^(e+24), so every
 * partial sum is exact in the f32 (or f64) accumulator, and the first term
 * is not -0.0, so a zero partial sum is +0.0 in any order. Then the header's
 * result is the exact sum of the terms (tr_float_term, in long double)
 * rounded once to d (tc_from_double), and a scan's running sums likewise. */
int tr_float_sum_exact(gpuprim_dtype_t d, const void *a, const void *b, uint64_t begin, uint64_t end);
long double tr_float_term(gpuprim_dtype_t d, const void *a, const void *b, uint64_t i);

/* Float comparison of the backends: element i of a and b within bound
 * (NaN only with NaN); the f32 accumulation bound of a sum of n inputs. */
double tr_value_of(gpuprim_dtype_t d, const void *p, uint64_t i);
int tr_close_enough(gpuprim_dtype_t d, const void *a, const void *b, uint64_t i, double bound);
double tr_sum_bound(gpuprim_dtype_t d, const void *in, uint64_t n, double result);
/* Scans: every element of two scans within the sum bound plus a few units
 * of the element's own size. */
int tr_scans_close(gpuprim_dtype_t d, const void *in, uint64_t n, const void *a, const void *b, char *why,
                   size_t cap);

/* Reference helpers: segment s's bounds under the call's layout (no layout:
 * the whole of arg 0), and the stable sorting permutation of n keys. */
uint64_t tr_segment_count(const tr_call_t *call);
void tr_segment_bounds(const tr_call_t *call, uint64_t s, uint64_t *begin, uint64_t *end);
/* The stable order of arg 0's keys [begin, end) by the call's order and bit
 * range (end_bit 0: the whole key): perm[j] is a position within the range;
 * perm has end - begin elements. */
void tr_stable_order(const tr_call_t *call, uint64_t begin, uint64_t end, uint64_t *perm);

/* A CSR layout from explicit offsets (gaps allowed), nseg + 1 of them. */
tc_layout_t tr_layout_offsets(const char *name, const uint64_t *offsets, uint64_t nseg, uint64_t n,
                              gpuprim_dtype_t od);

/* The segmentations of the backend plans (12 layouts: rows, CSR of every
 * offset dtype; into layouts[12], count returned) and of the thread plans
 * (shape 0: CSR with gaps, long and short segments; 1: 8192 rows of 16;
 * 2: 2 rows of 150000). */
int tr_backend_layouts(tc_layout_t *layouts);
tc_layout_t tr_threads_layout(int shape);
#define TR_THREADS_SHAPES 3

#ifdef __cplusplus
}
#endif

#endif /* GPUPRIM_TEST_REGISTRY_H */
