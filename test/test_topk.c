/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpuprim_topk and gpuprim_segmented_topk on whichever backend
 * GPUPRIM_BACKEND picks, against a reference written here from the header's
 * definition: the top-k of a segment is the first min(k, length) of its
 * stable argsort in the requested order (the documented float order, -0 <
 * +0, NaNs last ascending by the documented pattern order; descending the
 * exact reverse with ties still lower position first). The reference orders
 * (order key of test_common.h, position) pairs, a total order, with qsort;
 * it is checked against the suite's LSD reference sort on small inputs.
 *
 * Covered: all 12 dtypes x both orders x flat / uniform rows / CSR offsets
 * (I32, U32, I64, U64) x indices I32 / U32 / I64 / U64 x keys_out only /
 * indices only / both; every input pattern of test_common.h (all equal, few
 * values, NaN payloads of both signs, +-0, +-inf, subnormals, type extremes,
 * sorted, reversed, random); n = 0 .. 2^20 + 3 and k = 0, 1, 2, 7, 8, 16, 63,
 * 64, 65, 1024, 4096, 4097, n - 1, n; rows of 1 .. 70000; CSR with empty
 * segments, segments shorter than k (only min(k, length) slots written, the
 * rest left as poisoned), segments longer than 2^16, power-law lengths,
 * elements outside every segment holding the value that would rank first;
 * the CPU filter's hardest arrangements (test_filter_arrangements); and
 * inputs that mislead the CUDA long select's sample (runs of consecutive keys)
 * (test_sampled_threshold, test_sampled_threshold_counts), in one segment of
 * a call and not in the others (test_mixed_segment_rounds).
 * Outputs are views into larger poisoned buffers, so a write past the k
 * slots is caught too. Errors: every documented status, each leaving every
 * buffer unchanged, with a message naming the problem.
 * GPUPRIM_TEST_MAX_COUNT caps the data sizes.
 */
#include "test_common.h"

static gpuprim_context_t ctx;
static uint64_t max_count;

static const gpuprim_dtype_t index_dtypes[4] = {GPUPRIM_DTYPE_I32, GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_I64,
                                                GPUPRIM_DTYPE_U64};

typedef enum out_mode { OUT_KEYS = 0, OUT_INDICES, OUT_BOTH, OUT_MODES } out_mode_t;
static const char *const out_mode_names[OUT_MODES] = {"keys_out only", "indices only", "keys_out and indices"};

/* Outputs are views at element GUARD_LEAD of a buffer GUARD_LEAD + slots + GUARD_TAIL long. */
#define GUARD_LEAD 3
#define GUARD_TAIL 5

/* No test case writes more output slots than this (CSR: segments * k). */
#define MAX_SLOTS (4u << 20)

static void destroy(gpuprim_buffer_t b) {
    if (b) CHECK_OK(gpuprim_buffer_destroy(ctx, b));
}

/* ------------------------------------------------------------------------ */
/* Reference                                                                */
/* ------------------------------------------------------------------------ */

typedef struct ref_item {
    uint64_t key, position;
} ref_item_t;

static int ref_compare(const void *a, const void *b) {
    const ref_item_t *x = (const ref_item_t *)a, *y = (const ref_item_t *)b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->position < y->position ? -1 : x->position > y->position ? 1 : 0;
}

/* perm[0, n): the positions of keys[0, n) in their stable order (ties lower
 * position first, in both orders). items: scratch of n elements. */
static void reference_order(gpuprim_dtype_t d, const void *keys, uint64_t n, int descending, uint64_t *perm,
                            ref_item_t *items) {
    uint64_t i;
    for (i = 0; i < n; ++i) {
        items[i].key = tc_sort_key(d, tc_get(d, keys, i), descending);
        items[i].position = i;
    }
    if (n > 1) qsort(items, (size_t)n, sizeof *items, ref_compare);
    for (i = 0; i < n; ++i) perm[i] = items[i].position;
}

/* ------------------------------------------------------------------------ */
/* Layouts                                                                  */
/* ------------------------------------------------------------------------ */

/* The whole input (gpuprim_topk): one row of n, marked flat. */
static tc_layout_t layout_flat(uint64_t n) {
    tc_layout_t L = tc_layout_rows(1, n);
    L.name = "flat";
    L.flat = 1;
    return L;
}

/* The CSR layouts (kind 0 .. CSR_KINDS - 1: those of tc_layout_of_kind,
 * 5 segments of 0..9, 6 no segments), offsets of dtype od. */
#define CSR_KINDS 7
static tc_layout_t layout_of_kind(int kind, gpuprim_dtype_t od) {
    /* kind 0: boundary lengths, one past 2^16 (as is kind 2's giant segment) */
    static const uint64_t boundary[] = {1, 2, 31, 32, 33, 0, 255, 256, 257, 4095, 4096, 4097, 65537};
    tc_csr_kinds_t kinds;
    if (kind == 5) { /* segments all shorter than most k, some empty */
        uint64_t lengths[60], budget = max_count, lead, tail, i;
        lead = tc_capped(4, &budget);
        for (i = 0; i < 60; ++i) lengths[i] = tc_capped(tc_below(10), &budget);
        tail = tc_capped(4, &budget);
        return tc_layout_csr("segments of 0..9", lengths, 60, lead, tail, od);
    }
    kinds.boundary = boundary;
    kinds.boundary_count = sizeof boundary / sizeof boundary[0];
    kinds.empty_lead = 2;
    kinds.giant = 70001;
    kinds.power_law_max = 40000;
    return tc_layout_of_kind(kind, od, max_count, &kinds);
}

/* The value that ranks first in the order (so that an element outside every
 * segment holding it would show up in any top-k that wrongly read it). */
static uint64_t first_in_order(gpuprim_dtype_t d, int descending) {
    const uint64_t mask = tc_mask(d), sign = tc_sign_bit(d);
    uint64_t candidates[TC_FLOAT_SPECIAL_COUNT + 4], best = 0;
    unsigned count = 0, i;
    if (tc_is_float(d)) {
        for (i = 0; i < TC_FLOAT_SPECIAL_COUNT; ++i) candidates[count++] = tc_float_specials(d)[i];
    } else {
        candidates[count++] = 0;
        candidates[count++] = mask;
        candidates[count++] = sign;
        candidates[count++] = sign - 1;
    }
    for (i = 0; i < count; ++i)
        if (i == 0 || tc_sort_key(d, candidates[i], descending) < tc_sort_key(d, best, descending)) best = candidates[i];
    return best;
}

/* ------------------------------------------------------------------------ */
/* One data set, many calls                                                 */
/* ------------------------------------------------------------------------ */

/* Keys over a layout with the reference order of every segment. */
typedef struct data {
    const tc_layout_t *L;
    gpuprim_dtype_t kd;
    int descending;
    tc_pattern_t pattern;
    const char *pattern_name; /* the pattern's, or the arrangement of data_make_from's keys */
    void *keys;     /* n keys */
    uint64_t *perm; /* perm[off[s] + j]: position within segment s of its j-th key in order */
    gpuprim_buffer_t kin, offsets;
    gpuprim_segments_t seg;
} data_t;

/* keys: NULL for the pattern's, else these (named by name). */
static data_t data_make_from(const tc_layout_t *L, gpuprim_dtype_t kd, int descending, tc_pattern_t pattern,
                             const void *keys, const char *name) {
    data_t D;
    uint64_t s, i;
    ref_item_t *items = (ref_item_t *)tc_xmalloc((L->longest ? L->longest : 1) * sizeof *items);
    memset(&D, 0, sizeof D);
    D.L = L;
    D.kd = kd;
    D.descending = descending;
    D.pattern = pattern;
    D.pattern_name = keys ? name : tc_pattern_names[pattern];
    D.keys = tc_xmalloc((L->n ? L->n : 1) * tc_size(kd));
    if (keys) memcpy(D.keys, keys, L->n * tc_size(kd));
    else tc_fill(kd, D.keys, L->n, pattern);
    if (!L->uniform && L->nseg > 0) { /* outside every segment: the key that would rank first */
        const uint64_t best = first_in_order(kd, descending);
        for (i = 0; i < L->off[0]; ++i) tc_set(kd, D.keys, i, best);
        for (i = L->off[L->nseg]; i < L->n; ++i) tc_set(kd, D.keys, i, best);
    }
    D.perm = (uint64_t *)tc_xmalloc((L->n ? L->n : 1) * sizeof *D.perm);
    for (s = 0; s < L->nseg; ++s) {
        const void *segment = (const char *)D.keys + L->off[s] * tc_size(kd);
        const uint64_t length = L->off[s + 1] - L->off[s];
        /* Long segments by the suite's LSD reference (qsort was most of this
         * test's time); test_reference checks the two agree. */
        if (length > 256) tc_reference_sort_permutation(kd, segment, length, descending, D.perm + L->off[s]);
        else reference_order(kd, segment, length, descending, D.perm + L->off[s], items);
    }
    free(items);
    D.kin = tc_buffer_from(ctx, kd, D.keys, L->n);
    D.seg = tc_make_segments(ctx, L, &D.offsets);
    return D;
}

static data_t data_make(const tc_layout_t *L, gpuprim_dtype_t kd, int descending, tc_pattern_t pattern) {
    return data_make_from(L, kd, descending, pattern, NULL, NULL);
}

static void data_free(data_t *D) {
    void *after = tc_download(ctx, D->kin, D->kd, D->L->n);
    tc_where("top-k %s, %s: keys_in after the calls", tc_dtype_name(D->kd), D->L->name);
    CHECK_ARRAY_EQ(D->kd, after, D->keys, D->L->n, "top-k: keys_in unchanged");
    free(after);
    destroy(D->kin);
    destroy(D->offsets);
    free(D->keys);
    free(D->perm);
}

/* A poisoned buffer of GUARD_LEAD + slots + GUARD_TAIL elements and the view
 * of its slots. */
typedef struct guarded_out {
    gpuprim_buffer_t base, view;
    gpuprim_dtype_t d;
    uint64_t slots;
} guarded_out_t;

static guarded_out_t guarded_out(gpuprim_dtype_t d, uint64_t slots) {
    guarded_out_t g;
    g.d = d;
    g.slots = slots;
    g.base = tc_buffer(ctx, d, GUARD_LEAD + slots + GUARD_TAIL);
    tc_poison(ctx, g.base, d, GUARD_LEAD + slots + GUARD_TAIL);
    g.view = tc_view(ctx, g.base, d, GUARD_LEAD, slots);
    return g;
}

/* The whole base as expected: poisoned, then the results written. */
static void *guarded_expected(gpuprim_dtype_t d, uint64_t slots) {
    void *want = tc_xmalloc((GUARD_LEAD + slots + GUARD_TAIL) * tc_size(d));
    tc_poison_host(d, want, GUARD_LEAD + slots + GUARD_TAIL);
    return want;
}

static void guarded_check_free(guarded_out_t *g, const void *want, const char *what) {
    void *got = tc_download(ctx, g->base, g->d, GUARD_LEAD + g->slots + GUARD_TAIL);
    CHECK_ARRAY_EQ(g->d, got, want, GUARD_LEAD + g->slots + GUARD_TAIL, what);
    free(got);
    destroy(g->view);
    destroy(g->base);
}

/* One call with k, index dtype id and output mode; checks every output
 * element (and the guards around them) bit for bit. */
static void run_topk(const data_t *D, uint64_t k, gpuprim_dtype_t id, out_mode_t mode) {
    const tc_layout_t *L = D->L;
    const gpuprim_order_t order = D->descending ? GPUPRIM_ORDER_DESCENDING : GPUPRIM_ORDER_ASCENDING;
    const uint64_t slots = L->nseg * k;
    guarded_out_t kout, idx;
    void *want_keys = NULL, *want_idx = NULL;
    uint64_t s, j;
    gpuprim_status_t status;
    memset(&kout, 0, sizeof kout);
    memset(&idx, 0, sizeof idx);
    tc_where("top-k %s %s, %s, k %llu, %s, indices %s, %s, %s, n %llu, %llu segments (longest %llu)",
             tc_dtype_name(D->kd), D->descending ? "descending" : "ascending", L->name, (unsigned long long)k,
             out_mode_names[mode], mode == OUT_KEYS ? "-" : tc_dtype_name(id), L->uniform ? "-" : tc_dtype_name(L->od),
             D->pattern_name, (unsigned long long)L->n, (unsigned long long)L->nseg,
             (unsigned long long)L->longest);
    if (mode != OUT_INDICES) {
        kout = guarded_out(D->kd, slots);
        want_keys = guarded_expected(D->kd, slots);
    }
    if (mode != OUT_KEYS) {
        idx = guarded_out(id, slots);
        want_idx = guarded_expected(id, slots);
    }
    if (L->flat) status = gpuprim_topk(ctx, D->kin, k, order, kout.view, idx.view);
    else status = gpuprim_segmented_topk(ctx, &D->seg, D->kin, k, order, kout.view, idx.view);
    CHECK_STATUS(status, GPUPRIM_SUCCESS);
    for (s = 0; s < L->nseg; ++s) {
        const uint64_t b = L->off[s], len = L->off[s + 1] - b, m = k < len ? k : len;
        for (j = 0; j < m; ++j) {
            const uint64_t at = GUARD_LEAD + s * k + j, position = D->perm[b + j];
            if (want_keys) tc_set(D->kd, want_keys, at, tc_get(D->kd, D->keys, b + position));
            if (want_idx) tc_set(id, want_idx, at, position);
        }
    }
    if (kout.base) guarded_check_free(&kout, want_keys, "top-k keys_out (with guards)");
    if (idx.base) guarded_check_free(&idx, want_idx, "top-k indices (with guards)");
    free(want_keys);
    free(want_idx);
}

/* Appends k to ks[*count] unless it is there already. */
static void add_k(uint64_t *ks, unsigned *count, uint64_t k) {
    unsigned i;
    for (i = 0; i < *count; ++i)
        if (ks[i] == k) return;
    ks[(*count)++] = k;
}

static const uint64_t k_list[] = {0, 1, 2, 7, 8, 16, 63, 64, 65, 1024, 4096, 4097};
#define K_LIST_COUNT (sizeof k_list / sizeof k_list[0])

/* The k values to try on L: k_list, limited to the longest segment for flat
 * and rows (k <= n there), plus longest - 1 and longest, and a third of it
 * (a selection of more than a quarter); CSR: k_list and longest, longest + 1,
 * limited to MAX_SLOTS output slots. Returns the count (at most 20). */
static unsigned k_values(const tc_layout_t *L, uint64_t *ks) {
    unsigned count = 0, i;
    const int bounded = L->flat || L->uniform;
    const uint64_t longest = L->longest;
    for (i = 0; i < K_LIST_COUNT; ++i)
        if (!bounded || k_list[i] <= longest) add_k(ks, &count, k_list[i]);
    if (longest > 0) add_k(ks, &count, longest - 1);
    add_k(ks, &count, longest);
    if (longest >= 30) add_k(ks, &count, longest / 3);
    if (!bounded) add_k(ks, &count, longest + 1);
    if (!bounded && L->nseg > 0) { /* keep the outputs bounded */
        unsigned kept = 0;
        for (i = 0; i < count; ++i)
            if (ks[i] <= MAX_SLOTS / L->nseg) ks[kept++] = ks[i];
        count = kept;
    }
    return count;
}

static unsigned turn; /* rotates index dtypes, output modes, patterns and k subsets */

/* Runs every k of k_values on D (every = 0), or `every` of them chosen by
 * turn; index dtype and output mode rotate with turn. */
static void run_ks(const data_t *D, unsigned every) {
    uint64_t ks[24];
    const unsigned count = k_values(D->L, ks);
    unsigned i;
    for (i = 0; i < count; ++i) {
        if (every && (i + turn) % ((count + every - 1) / every) != 0) continue;
        run_topk(D, ks[i], index_dtypes[turn % 4], (out_mode_t)((turn / 4) % OUT_MODES));
        ++turn;
    }
}

/* ------------------------------------------------------------------------ */
/* Test groups                                                              */
/* ------------------------------------------------------------------------ */

/* The reference itself against the suite's LSD reference sort. */
static void test_reference(void) {
    static const uint64_t sizes[] = {0, 1, 2, 33, 64, 65, 1000}; /* 64 / 65: the LSD reference's insertion / radix */
    unsigned di, order, si;
    for (di = 0; di < TC_DTYPE_COUNT; ++di)
        for (order = 0; order < 2; ++order)
            for (si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
                const gpuprim_dtype_t d = tc_all_dtypes[di];
                const uint64_t n = sizes[si];
                const tc_pattern_t pattern = (tc_pattern_t)((di + order + si) % TC_PATTERN_COUNT);
                void *keys = tc_xmalloc(n * tc_size(d));
                uint64_t *a = (uint64_t *)tc_xmalloc((n + 1) * sizeof *a), *b = (uint64_t *)tc_xmalloc((n + 1) * sizeof *b);
                ref_item_t *items = (ref_item_t *)tc_xmalloc((n + 1) * sizeof *items);
                tc_where("reference order vs LSD reference: %s %s n %llu %s", tc_dtype_name(d),
                         order ? "descending" : "ascending", (unsigned long long)n, tc_pattern_names[pattern]);
                tc_fill(d, keys, n, pattern);
                reference_order(d, keys, n, (int)order, a, items);
                tc_reference_sort_permutation(d, keys, n, (int)order, b);
                CHECK(n == 0 || memcmp(a, b, n * sizeof *a) == 0);
                free(keys);
                free(a);
                free(b);
                free(items);
            }
    /* Bit ranges (the LSD reference packs a range of up to 32 bits with the
     * position in one word: 64-bit keys' [32, 56) too), against a stable
     * insertion sort of the bits. */
    for (di = 0; di < TC_DTYPE_COUNT; ++di)
        for (order = 0; order < 3; ++order) {
            const gpuprim_dtype_t d = tc_all_dtypes[di];
            const unsigned width = tc_bits(d);
            const unsigned begin = order == 0 ? 0 : order == 1 ? width / 4 : width / 2;
            const unsigned end = order == 0 ? width / 2 + 1 : order == 1 ? width : width / 2 + (width > 48 ? 24 : width / 2);
            const uint64_t n = 1000;
            void *keys = tc_xmalloc(n * tc_size(d));
            uint64_t *a = (uint64_t *)tc_xmalloc(n * sizeof *a), *b = (uint64_t *)tc_xmalloc(n * sizeof *b), i;
            const int descending = order == 1;
            tc_where("reference order vs LSD reference: %s %s bits [%u, %u)", tc_dtype_name(d),
                     descending ? "descending" : "ascending", begin, end);
            tc_fill(d, keys, n, (tc_pattern_t)((di + order) % TC_PATTERN_COUNT));
            for (i = 0; i < n; ++i) { /* insert position i after every earlier key of bits not above its own */
                const uint64_t bits = tc_sort_bits(d, tc_get(d, keys, i), descending, begin, end);
                uint64_t j = i;
                for (; j > 0 && tc_sort_bits(d, tc_get(d, keys, a[j - 1]), descending, begin, end) > bits; --j)
                    a[j] = a[j - 1];
                a[j] = i;
            }
            tc_reference_sort_permutation_bits(d, keys, n, descending, begin, end, b);
            CHECK(memcmp(a, b, n * sizeof *a) == 0);
            free(keys);
            free(a);
            free(b);
        }
}

/* Spelled-out answers: ties by position in both orders, -0 < +0, NaN first
 * descending and last ascending, CSR slots of short segments untouched. */
static void test_known_answers(void) {
    /* positions:            0     1    2     3    4      5     6     7    8 */
    const float keys[9] = {2.0f, 1.0f, 2.0f, NAN, -0.0f, 0.0f, 1.0f, 2.0f, -INFINITY};
    const int32_t want_desc_idx[4] = {3, 0, 2, 7};
    const float want_desc[4] = {NAN, 2.0f, 2.0f, 2.0f};
    const int32_t want_asc_idx[4] = {8, 4, 5, 1};
    const float want_asc[4] = {-INFINITY, -0.0f, 0.0f, 1.0f};
    gpuprim_buffer_t kin = tc_buffer_from(ctx, GPUPRIM_DTYPE_F32, keys, 9);
    gpuprim_buffer_t kout = tc_buffer(ctx, GPUPRIM_DTYPE_F32, 4), idx = tc_buffer(ctx, GPUPRIM_DTYPE_I32, 4);
    float got[8];
    int32_t got_idx[8];
    tc_where("top-k known answers");
    CHECK_OK(gpuprim_topk(ctx, kin, 4, GPUPRIM_ORDER_DESCENDING, kout, idx));
    REQUIRE_OK(gpuprim_buffer_download(ctx, kout, 0, got, 4));
    REQUIRE_OK(gpuprim_buffer_download(ctx, idx, 0, got_idx, 4));
    CHECK(memcmp(got_idx, want_desc_idx, sizeof want_desc_idx) == 0);
    CHECK(isnan(got[0]) && memcmp(got + 1, want_desc + 1, 3 * sizeof(float)) == 0);
    CHECK_OK(gpuprim_topk(ctx, kin, 4, GPUPRIM_ORDER_ASCENDING, kout, idx));
    REQUIRE_OK(gpuprim_buffer_download(ctx, kout, 0, got, 4));
    REQUIRE_OK(gpuprim_buffer_download(ctx, idx, 0, got_idx, 4));
    CHECK(memcmp(got_idx, want_asc_idx, sizeof want_asc_idx) == 0);
    CHECK(memcmp(got, want_asc, sizeof want_asc) == 0); /* -0.0f before +0.0f, bit for bit */
    destroy(kout);
    destroy(idx);
    /* CSR [1, 4) [4, 4) [4, 9), k = 4: segment 0 fills 3 slots, segment 1 none. */
    {
        const uint64_t offsets[4] = {1, 4, 4, 9};
        /* ascending, positions within the segments: 1 2 NaN | - | -inf -0 +0 1 */
        const int32_t want_idx[12] = {0, 1, 2, -7, -7, -7, -7, -7, 4, 0, 1, 2};
        /* descending: NaN 2 1 | - | 2 1 +0 -0 */
        const int32_t want_idx_desc[12] = {2, 1, 0, -7, -7, -7, -7, -7, 3, 2, 1, 0};
        int32_t fill[12];
        int i;
        gpuprim_buffer_t off = tc_buffer_from(ctx, GPUPRIM_DTYPE_U64, offsets, 4);
        gpuprim_segments_t seg;
        for (i = 0; i < 12; ++i) fill[i] = -7;
        idx = tc_buffer_from(ctx, GPUPRIM_DTYPE_I32, fill, 12);
        gpuprim_segments_init_offsets(&seg, off);
        CHECK_OK(gpuprim_segmented_topk(ctx, &seg, kin, 4, GPUPRIM_ORDER_ASCENDING, NULL, idx));
        {
            int32_t all[12];
            REQUIRE_OK(gpuprim_buffer_download(ctx, idx, 0, all, 12));
            CHECK(memcmp(all, want_idx, sizeof all) == 0);
        }
        REQUIRE_OK(gpuprim_buffer_upload(ctx, idx, 0, fill, 12));
        CHECK_OK(gpuprim_segmented_topk(ctx, &seg, kin, 4, GPUPRIM_ORDER_DESCENDING, NULL, idx));
        {
            int32_t all[12];
            REQUIRE_OK(gpuprim_buffer_download(ctx, idx, 0, all, 12));
            CHECK(memcmp(all, want_idx_desc, sizeof all) == 0);
        }
        destroy(idx);
        destroy(off);
    }
    /* All equal: the k smallest positions, in order, for both orders. */
    {
        const uint16_t same[6] = {0x3C00, 0x3C00, 0x3C00, 0x3C00, 0x3C00, 0x3C00};
        const uint64_t want[3] = {0, 1, 2};
        uint64_t got64[3];
        unsigned order;
        gpuprim_buffer_t h = tc_buffer_from(ctx, GPUPRIM_DTYPE_F16, same, 6), i64 = tc_buffer(ctx, GPUPRIM_DTYPE_U64, 3);
        for (order = 0; order < 2; ++order) {
            CHECK_OK(gpuprim_topk(ctx, h, 3, (gpuprim_order_t)order, NULL, i64));
            REQUIRE_OK(gpuprim_buffer_download(ctx, i64, 0, got64, 3));
            CHECK(memcmp(got64, want, sizeof want) == 0);
        }
        destroy(h);
        destroy(i64);
    }
    destroy(kin);
}

/* Flat top-k over every size: all dtypes and orders up to 65537 keys (every
 * k), the large sizes with every dtype in one order each and fewer k. */
static void test_flat_sizes(void) {
    static const uint64_t sizes[] = {0,    1,    2,    31,   32,    33,     255,    256,
                                     257,  1000, 4095, 4096, 4097,  8191,   8192,   8193,
                                     65537, 300000, (1u << 20) + 3};
    unsigned si, di, order;
    for (si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
        const uint64_t n = sizes[si];
        const int large = n > 70000;
        tc_layout_t L;
        if (n > max_count) continue;
        L = layout_flat(n);
        for (di = 0; di < TC_DTYPE_COUNT; ++di)
            for (order = 0; order < 2; ++order) {
                data_t D;
                if (large && order != (di + si) % 2) continue;
                D = data_make(&L, tc_all_dtypes[di], (int)order, (tc_pattern_t)(turn % TC_PATTERN_COUNT));
                run_ks(&D, large ? 6 : 0);
                data_free(&D);
                ++turn;
            }
        tc_layout_free(&L);
        printf("test_topk: flat n = %llu done\n", (unsigned long long)n);
        fflush(stdout);
    }
}

/* Every pattern with every dtype and order (flat, 4097 keys, a few k). */
static void test_flat_patterns(void) {
    unsigned di, order, p;
    tc_layout_t L = layout_flat(max_count < 4097 ? max_count : 4097);
    for (di = 0; di < TC_DTYPE_COUNT; ++di)
        for (order = 0; order < 2; ++order)
            for (p = 0; p < TC_PATTERN_COUNT; ++p) {
                data_t D = data_make(&L, tc_all_dtypes[di], (int)order, (tc_pattern_t)p);
                run_ks(&D, 3);
                data_free(&D);
            }
    tc_layout_free(&L);
}

/* The whole matrix of dtype x order x flat / rows / CSR of each offset dtype
 * x index dtype x output mode, on a few hundred keys. */
static void test_output_matrix(void) {
    unsigned di, order, shape, ii, mode;
    for (shape = 0; shape < 6; ++shape) {
        tc_layout_t L;
        if (shape == 0) L = layout_flat(max_count < 300 ? max_count : 300);
        else if (shape == 1) L = tc_layout_rows(max_count < 300 ? 1 : 20, max_count < 300 ? max_count : 15);
        else L = layout_of_kind(shape == 5 ? 4 : 5, index_dtypes[shape - 2]);
        for (di = 0; di < TC_DTYPE_COUNT; ++di)
            for (order = 0; order < 2; ++order) {
                static const tc_pattern_t patterns[] = {TC_SMALL_RANGE, TC_NAN_HEAVY, TC_EQUAL, TC_RANDOM_BITS};
                data_t D = data_make(&L, tc_all_dtypes[di], (int)order, patterns[(di + order + shape) % 4]);
                for (ii = 0; ii < 4; ++ii)
                    for (mode = 0; mode < OUT_MODES; ++mode) {
                        const uint64_t k = (ii + mode) % 3 == 0 ? 1 : (ii + mode) % 3 == 1 ? 7 : L.longest;
                        run_topk(&D, k, index_dtypes[ii], (out_mode_t)mode);
                    }
                data_free(&D);
            }
        tc_layout_free(&L);
    }
}

/* Uniform rows: very many short rows to a few long ones. */
static void test_rows(void) {
    static const uint64_t lengths[] = {1, 2, 16, 32, 33, 256, 4096, 5000, 70000};
    const uint64_t budget = max_count < (1u << 17) ? max_count : (1u << 17);
    unsigned li, di, order;
    for (li = 0; li < sizeof lengths / sizeof lengths[0]; ++li) {
        const uint64_t len = lengths[li];
        uint64_t rows = budget / len;
        tc_layout_t L;
        if (len == 70000 && 2 * len <= max_count) rows = 2;
        if (rows == 0) continue;
        L = tc_layout_rows(rows, len);
        for (di = 0; di < TC_DTYPE_COUNT; ++di)
            for (order = 0; order < 2; ++order) {
                data_t D = data_make(&L, tc_all_dtypes[di], (int)order, (tc_pattern_t)(turn % TC_PATTERN_COUNT));
                run_ks(&D, 3);
                data_free(&D);
                ++turn;
            }
        tc_layout_free(&L);
    }
    /* Rows with k = 0 only: empty rows, no rows. */
    {
        tc_layout_t L = tc_layout_rows(5, 0);
        data_t D = data_make(&L, GPUPRIM_DTYPE_F32, 0, TC_MODERATE);
        run_topk(&D, 0, GPUPRIM_DTYPE_I64, OUT_BOTH);
        data_free(&D);
        tc_layout_free(&L);
        L = tc_layout_rows(0, 9);
        D = data_make(&L, GPUPRIM_DTYPE_U8, 1, TC_MODERATE);
        run_topk(&D, 4, GPUPRIM_DTYPE_I32, OUT_BOTH);
        data_free(&D);
        tc_layout_free(&L);
    }
}

/* CSR offsets of every kind with every dtype and order. */
static void test_csr(void) {
    unsigned kind, di, order;
    for (kind = 0; kind < CSR_KINDS; ++kind)
        for (di = 0; di < TC_DTYPE_COUNT; ++di)
            for (order = 0; order < 2; ++order) {
                tc_layout_t L = layout_of_kind((int)kind, index_dtypes[(turn + kind) % 4]);
                data_t D = data_make(&L, tc_all_dtypes[di], (int)order, (tc_pattern_t)(turn % TC_PATTERN_COUNT));
                run_ks(&D, 4);
                data_free(&D);
                tc_layout_free(&L);
                ++turn;
            }
}

/* Each of `count` k values up to the data's count, the index dtype and the
 * outputs taken in turn. */
static void run_listed_ks(const data_t *D, const uint64_t *ks, unsigned count) {
    unsigned ki;
    for (ki = 0; ki < count; ++ki) {
        if (ks[ki] > D->L->n) continue;
        run_topk(D, ks[ki], index_dtypes[turn % 4], (out_mode_t)((turn / 4) % OUT_MODES));
        ++turn;
    }
}

/* The CPU backend's filter (segments of 1024 keys or more, k at most a
 * quarter of them; several chunks sharing a limit on several threads) on
 * arrangements that work it hardest: keys in the requested order (few
 * candidates), in the reverse order (every key a candidate, the buffer
 * refilled again and again), reversed runs of 1000 (a sawtooth), all keys
 * equal (ties at the cut, decided by position), and every key the one that
 * ranks first (radix key 0: the filter stops early). */
static void test_filter_arrangements(void) {
    static const gpuprim_dtype_t dtypes[] = {GPUPRIM_DTYPE_F32, GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_I64,
                                             GPUPRIM_DTYPE_F64, GPUPRIM_DTYPE_U16, GPUPRIM_DTYPE_I8};
    static const char *const names[5] = {"in order", "reversed", "reversed runs of 1000", "all equal",
                                         "all the first key"};
    static const uint64_t sizes[] = {1024, 4099, 70001, 300007};
    unsigned si, di, order, arrangement;
    for (si = 0; si < sizeof sizes / sizeof sizes[0]; ++si) {
        const uint64_t n = sizes[si];
        tc_layout_t L;
        if (n > max_count) continue;
        L = layout_flat(n);
        for (di = 0; di < sizeof dtypes / sizeof dtypes[0]; ++di)
            for (order = 0; order < 2; ++order) {
                const gpuprim_dtype_t d = dtypes[di];
                const size_t size = tc_size(d);
                char *sorted = (char *)tc_sorted_keys(d, n, TC_MODERATE, (int)order);
                char *keys = (char *)tc_xmalloc(n * size);
                uint64_t i;
                for (arrangement = 0; arrangement < 5; ++arrangement) {
                    const uint64_t ks[] = {1, 16, 255, 1024, n / 4, n / 4 + 1};
                    data_t D;
                    for (i = 0; i < n; ++i) {
                        uint64_t from = i;
                        if (arrangement == 1) from = n - 1 - i;
                        if (arrangement == 2) from = i / 1000 * 1000 + (i / 1000 * 1000 + 1000 <= n ? 999 - i % 1000
                                                                                                    : n - 1 - i);
                        if (arrangement == 3) from = n / 2;
                        memcpy(keys + i * size, sorted + from * size, size);
                        if (arrangement == 4) tc_set(d, keys, i, first_in_order(d, (int)order));
                    }
                    D = data_make_from(&L, d, (int)order, TC_MODERATE, keys, names[arrangement]);
                    run_listed_ks(&D, ks, sizeof ks / sizeof ks[0]);
                    data_free(&D);
                }
                free(sorted);
                free(keys);
            }
        tc_layout_free(&L);
    }
}

/* Inputs that mislead the CUDA long-segment select's sample (512 runs of 8
 * consecutive keys, run r from r * n / 512, taken before the first pass to
 * bound the candidates it keeps; both backends run them, the CPU's filter
 * sees them as any input), 262,144 keys:
 * - "the sample sees the best": the sampled positions (sampled_position)
 *   hold the 4,096 best keys, so the sample ranks them too high and fewer
 *   than k keys may pass its bound: the select must read the input again;
 * - "ties at the threshold": 1% of the keys (every 101st: the runs, 512
 *   apart, meet both kinds) are the best, 3% one tied value just behind
 *   them, where the sample's rank falls for k past n / 101; k cuts into the
 *   tie, which positions decide;
 * - "best at the end": the keys in the reverse of the requested order, so one
 *   block's tiles hold every candidate;
 * - "narrow range": every key shares its leading bits (f32 / f64 in [1, 2),
 *   i64 in [2^40, 2^40 + 2^24), u16 in [0x4000, 0x4100)), so the first digit's
 *   bin holds far more keys than the candidates a sample keeps, and the
 *   later passes must not count the keys past the bound;
 * - "ties kept in place": the best key at every 43rd position (6,097
 *   copies), every other key from the worse half: the sample's threshold is
 *   the tied key, so the candidates are the ties, more than one sweep's
 *   2,048 loads and fewer than the pairs the CUDA finishing block keeps in
 *   shared memory (8,192 of 4-byte keys and positions); each later pass (the
 *   key's digits, then the position's: k cuts into the tie) compacts the
 *   kept keys in place over several rounds, which must read every key before
 *   a later slot is written. */
/* Whether the CUDA select samples position i of n keys (n a multiple of
 * 4,096: its 512 runs of 8 keys, run r from r * n / 512). */
static int sampled_position(uint64_t i, uint64_t n) { return i % (n / 512) < 8; }

/* The rank (0: best) of the key at position i of n when the sampled
 * positions hold the 4,096 best in order and the others follow in order. */
static uint64_t rank_placed_at(uint64_t i, uint64_t n) {
    const uint64_t spacing = n / 512;
    return sampled_position(i, n) ? i / spacing * 8 + i % spacing : 4096 + i - (i / spacing + 1) * 8;
}

/* The n keys at `at` rearranged so that the sampled positions hold their
 * 4,096 best (order: the sort order), the others after them in order. */
static void place_best_at_samples(gpuprim_dtype_t d, char *at, uint64_t n, int order) {
    const size_t size = tc_size(d);
    char *sorted = (char *)tc_sorted_keys(d, n, TC_RANDOM_BITS, order);
    uint64_t i;
    for (i = 0; i < n; ++i) memcpy(at + i * size, sorted + rank_placed_at(i, n) * size, size);
    free(sorted);
}

/* A key whose leading bits are the same for every call (see above). */
static uint64_t narrow_key(gpuprim_dtype_t d) {
    const uint64_t r = tc_rand();
    switch (d) {
    case GPUPRIM_DTYPE_F32: return 0x3F800000u | (r & 0x7FFFFFu);
    case GPUPRIM_DTYPE_F64: return 0x3FF0000000000000ull | (r & 0xFFFFFFFFFFFFFull);
    case GPUPRIM_DTYPE_I64: return (1ull << 40) | (r & 0xFFFFFFu);
    default: return 0x4000u | (r & 0xFFu); /* U16 */
    }
}

static void test_sampled_threshold(void) {
    static const gpuprim_dtype_t dtypes[] = {GPUPRIM_DTYPE_F32, GPUPRIM_DTYPE_I64, GPUPRIM_DTYPE_U16,
                                             GPUPRIM_DTYPE_F64};
    static const char *const names[5] = {"the sample sees the best", "ties at the threshold", "best at the end",
                                         "narrow range", "ties kept in place"};
    const uint64_t n = 4096 * 64;
    unsigned di, order, arrangement;
    tc_layout_t L;
    if (n > max_count) return;
    L = layout_flat(n);
    for (di = 0; di < sizeof dtypes / sizeof dtypes[0]; ++di)
        for (order = 0; order < 2; ++order) {
            const gpuprim_dtype_t d = dtypes[di];
            const size_t size = tc_size(d);
            char *sorted = (char *)tc_sorted_keys(d, n, TC_RANDOM_BITS, (int)order);
            char *keys = (char *)tc_xmalloc(n * size);
            uint64_t i;
            for (arrangement = 0; arrangement < 5; ++arrangement) {
                const uint64_t ties = (n + 42) / 43;
                const uint64_t ks[] = {arrangement == 4 ? 1 : 16, 1024, arrangement == 4 ? 3000 : n / 101 + 5,
                                       arrangement == 4 ? ties - 5 : n / 101 + 3000};
                data_t D;
                for (i = 0; i < n; ++i) {
                    uint64_t from;
                    if (arrangement == 3) {
                        tc_set(d, keys, i, narrow_key(d));
                        continue;
                    }
                    if (arrangement == 4) from = i % 43 == 0 ? 0 : n / 2 + i % (n / 2);
                    else if (arrangement == 0) from = rank_placed_at(i, n);
                    else if (arrangement == 1) from = i % 101 == 0 ? i / 101 : i % 101 <= 3 ? n / 101 + 1 : n / 10 + i % (n / 2);
                    else from = n - 1 - i;
                    memcpy(keys + i * size, sorted + from * size, size);
                }
                D = data_make_from(&L, d, (int)order, TC_RANDOM_BITS, keys, names[arrangement]);
                run_listed_ks(&D, ks, sizeof ks / sizeof ks[0]);
                data_free(&D);
            }
            free(sorted);
            free(keys);
        }
    tc_layout_free(&L);
}

/* Two inputs where the keys a sample keeps are far fewer than the keys of
 * the first digit's bin, so a select that counts the kept keys must never
 * go back to the input for that bin (262,144 keys, flat):
 * - "101 values": I32 keys in [-50, 50], about 2,600 copies of each, k = 3,
 *   16 and 100 in both orders (the ties decide every position);
 * - "the smallest at the sampled positions": U32, the 16 smallest keys
 *   (0x100) at the first two runs' positions (0-7, 512-519), every other
 *   key 0x101 + i % 0x2ff,
 *   so every key shares the top 22 bits; k = 16 ascending takes exactly the
 *   0x100s. */
static void test_sampled_threshold_counts(void) {
    const uint64_t n = 4096 * 64;
    tc_layout_t L;
    char *keys;
    uint64_t i;
    unsigned order, ki;
    if (n > max_count) return;
    L = layout_flat(n);
    keys = (char *)tc_xmalloc(n * 4);
    for (i = 0; i < n; ++i) tc_set(GPUPRIM_DTYPE_I32, keys, i, (uint64_t)(uint32_t)((int32_t)tc_below(101) - 50));
    for (order = 0; order < 2; ++order) {
        static const uint64_t ks[] = {3, 16, 100};
        data_t D = data_make_from(&L, GPUPRIM_DTYPE_I32, (int)order, TC_MODERATE, keys, "101 values");
        for (ki = 0; ki < 3; ++ki) {
            run_topk(&D, ks[ki], index_dtypes[turn % 4], OUT_BOTH);
            ++turn;
        }
        data_free(&D);
    }
    for (i = 0; i < n; ++i)
        tc_set(GPUPRIM_DTYPE_U32, keys, i, sampled_position(i, n) && i < 1024 ? 0x100 : 0x101 + i % 0x2ff);
    for (order = 0; order < 2; ++order) {
        data_t D = data_make_from(&L, GPUPRIM_DTYPE_U32, (int)order, TC_MODERATE, keys,
                                  "the smallest at the sampled positions");
        run_topk(&D, 16, index_dtypes[turn % 4], OUT_BOTH);
        ++turn;
        data_free(&D);
    }
    free(keys);
    tc_layout_free(&L);
}

/* CSR segments past a block's select whose selects take different courses
 * in one call: few candidates after the first pass (random keys), every key
 * tied (the position digits decide), three values (ties on every key
 * digit), the best keys last (the sample sees them only at its end), one
 * just past the block select's limit, and one whose sampled positions
 * (sampled_position) hold its 4,096 best keys (the CUDA sample misleads:
 * that segment counts its first digit again, a pass behind the others);
 * with a short and an empty one between. On CUDA some finish early in one
 * block while others still need passes over all their keys, and k takes
 * the values around the one-block sort of the chosen (4096). */
static void test_mixed_segment_rounds(void) {
    static const uint64_t lengths[] = {40000, 0, 70000, 5000, 20000, 100000, 9000, 81920};
    static const tc_pattern_t patterns[] = {TC_MODERATE,    TC_MODERATE, TC_EQUAL,       TC_MODERATE,
                                            TC_SMALL_RANGE, TC_REVERSED, TC_RANDOM_BITS, TC_RANDOM_BITS};
    const unsigned misled = 7; /* the segment whose sample sees its best keys */
    static const gpuprim_dtype_t dtypes[] = {GPUPRIM_DTYPE_F32, GPUPRIM_DTYPE_U64, GPUPRIM_DTYPE_I16,
                                             GPUPRIM_DTYPE_F64, GPUPRIM_DTYPE_U8};
    static const uint64_t ks[] = {1, 16, 1000, 4096, 4097};
    const unsigned segments = sizeof lengths / sizeof lengths[0];
    unsigned di, order, si;
    tc_layout_t L = tc_layout_csr("mixed rounds", lengths, segments, 3, 2, GPUPRIM_DTYPE_I64);
    if (L.n > max_count) {
        tc_layout_free(&L);
        return;
    }
    for (di = 0; di < sizeof dtypes / sizeof dtypes[0]; ++di)
        for (order = 0; order < 2; ++order) {
            const gpuprim_dtype_t d = dtypes[di];
            char *keys = (char *)tc_xmalloc(L.n * tc_size(d));
            data_t D;
            tc_fill(d, keys, L.n, TC_MODERATE);
            for (si = 0; si < segments; ++si) {
                char *at = keys + L.off[si] * tc_size(d);
                const uint64_t length = L.off[si + 1] - L.off[si];
                /* TC_REVERSED here: the best last, in either order */
                if (patterns[si] == TC_REVERSED) tc_fill(d, at, length, order ? TC_SORTED : TC_REVERSED);
                else tc_fill(d, at, length, patterns[si]);
                if (si == misled) place_best_at_samples(d, at, length, (int)order);
            }
            D = data_make_from(&L, d, (int)order, TC_MODERATE, keys, "mixed rounds");
            run_listed_ks(&D, ks, sizeof ks / sizeof ks[0]);
            data_free(&D);
            free(keys);
        }
    tc_layout_free(&L);
}

/* Segments past a block's shared memory up to 2^16 keys, k up to 4096: on
 * CUDA one block a segment reads them from global memory (the streamed block
 * select) while at most one a resident block; these are its cases:
 * - flat lengths just past the block select (8193), odd ones, its limit
 *   (65536) and past it (the grid select);
 * - patterns: logits-like keys (one round over the input, then the
 *   candidates in shared memory), keys sharing their leading bits ("narrow
 *   range": the first digit's bin holds every key, so it takes more rounds
 *   over the input before the candidates fit), all equal (every key digit
 *   ties, the position's digits decide), NaN-heavy (NaNs of both signs and
 *   every payload, +-0, +-inf);
 * - k around the sort of the chosen in registers of 2 items a thread (2048)
 *   and 4 (4096), and 4097 (the grid select);
 * - CSR segments starting at odd offsets (the loads before the first 16-byte
 *   boundary and after the last whole load), beside short ones the block
 *   select takes in the same call. */
static void test_streamed_block_select(void) {
    static const uint64_t flat_lengths[] = {8193, 16411, 65536, 65537, 131072};
    static const gpuprim_dtype_t dtypes[] = {GPUPRIM_DTYPE_F32, GPUPRIM_DTYPE_U8,  GPUPRIM_DTYPE_I16,
                                             GPUPRIM_DTYPE_F16, GPUPRIM_DTYPE_F64, GPUPRIM_DTYPE_U64};
    static const char *const names[4] = {"logits", "narrow range", "all equal", "NaN-heavy"};
    static const uint64_t ks[] = {1, 16, 2048, 2049, 4096, 4097};
    unsigned li, di, arrangement;
    for (li = 0; li < sizeof flat_lengths / sizeof flat_lengths[0]; ++li) {
        const uint64_t n = flat_lengths[li];
        tc_layout_t L;
        if (n > max_count) continue;
        L = layout_flat(n);
        for (di = 0; di < sizeof dtypes / sizeof dtypes[0]; ++di) {
            const gpuprim_dtype_t d = dtypes[di];
            char *keys = (char *)tc_xmalloc(n * tc_size(d));
            for (arrangement = 0; arrangement < 4; ++arrangement) {
                const int order = (int)((li + di + arrangement) & 1);
                uint64_t i;
                data_t D;
                if (arrangement == 0) tc_fill(d, keys, n, TC_MODERATE);
                if (arrangement == 1) {
                    if (d == GPUPRIM_DTYPE_F32 || d == GPUPRIM_DTYPE_F64 || d == GPUPRIM_DTYPE_U16)
                        for (i = 0; i < n; ++i) tc_set(d, keys, i, narrow_key(d));
                    else if (d == GPUPRIM_DTYPE_U64)
                        for (i = 0; i < n; ++i) tc_set(d, keys, i, narrow_key(GPUPRIM_DTYPE_I64));
                    else tc_fill(d, keys, n, TC_SMALL_RANGE);
                }
                if (arrangement == 2) tc_fill(d, keys, n, TC_EQUAL);
                if (arrangement == 3) tc_fill(d, keys, n, TC_NAN_HEAVY);
                D = data_make_from(&L, d, order, TC_MODERATE, keys, names[arrangement]);
                run_listed_ks(&D, ks, sizeof ks / sizeof ks[0]);
                data_free(&D);
            }
            free(keys);
        }
        tc_layout_free(&L);
        printf("test_topk: streamed block select, flat n = %llu done\n", (unsigned long long)n);
        fflush(stdout);
    }
    {
        static const uint64_t lengths[] = {3, 9001, 1, 60001, 5, 65536, 8192, 12345};
        unsigned order;
        tc_layout_t L = tc_layout_csr("odd offsets", lengths, sizeof lengths / sizeof lengths[0], 1, 2,
                                      GPUPRIM_DTYPE_I32);
        if (L.n > max_count) {
            tc_layout_free(&L);
            return;
        }
        for (di = 0; di < sizeof dtypes / sizeof dtypes[0]; ++di)
            for (order = 0; order < 2; ++order) {
                static const uint64_t csr_ks[] = {1, 16, 1000, 4096};
                data_t D = data_make(&L, dtypes[di], (int)order, order ? TC_NAN_HEAVY : TC_MODERATE);
                run_listed_ks(&D, csr_ks, sizeof csr_ks / sizeof csr_ks[0]);
                data_free(&D);
            }
        tc_layout_free(&L);
    }
}

/* Many long rows: the CUDA select finishes them in one launch with at most
 * one row a resident block (200 rows: teams of one block on an H200's 264),
 * and takes the launches a pass past that (300 and 600 rows). */
static void test_many_long_rows(void) {
    static const uint64_t shapes[3][2] = {{200, 9000}, {300, 16500}, {600, 8200}};
    static const gpuprim_dtype_t dtypes[] = {GPUPRIM_DTYPE_F32, GPUPRIM_DTYPE_U8, GPUPRIM_DTYPE_I64};
    static const uint64_t ks[] = {1, 16, 1000};
    const uint64_t limit = tc_max_count();
    unsigned si;
    for (si = 0; si < 3; ++si) {
        tc_layout_t L;
        unsigned di;
        if (shapes[si][0] * shapes[si][1] > limit) continue;
        L = tc_layout_rows(shapes[si][0], shapes[si][1]);
        for (di = 0; di < sizeof dtypes / sizeof dtypes[0]; ++di) {
            data_t D = data_make(&L, dtypes[di], (int)((si + di) & 1), (tc_pattern_t)(turn % TC_PATTERN_COUNT));
            run_listed_ks(&D, ks, sizeof ks / sizeof ks[0]);
            data_free(&D);
            ++turn;
        }
        tc_layout_free(&L);
    }
}

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */
/* ------------------------------------------------------------------------ */

static void test_errors(void) {
    /* 8 keys; outputs of 3 (k = 3), rows 2 x 4 give 6 slots */
    tc_known_t keys = tc_known(ctx, GPUPRIM_DTYPE_F32, 8), kout = tc_known(ctx, GPUPRIM_DTYPE_F32, 3),
               idx = tc_known(ctx, GPUPRIM_DTYPE_U32, 3);
    tc_known_t kout6 = tc_known(ctx, GPUPRIM_DTYPE_F32, 6), idx6 = tc_known(ctx, GPUPRIM_DTYPE_I64, 6);
    tc_known_t f64 = tc_known(ctx, GPUPRIM_DTYPE_F64, 3), i16 = tc_known(ctx, GPUPRIM_DTYPE_I16, 3),
               idx4 = tc_known(ctx, GPUPRIM_DTYPE_I32, 4);
    gpuprim_segments_t rows, seg;
    unsigned oi;
    const gpuprim_order_t asc = GPUPRIM_ORDER_ASCENDING;
    tc_where("top-k errors");
    gpuprim_segments_init_rows(&rows, 2, 4);

    /* NULL pointers */
    CHECK_STATUS(gpuprim_topk(NULL, keys.b, 3, asc, kout.b, idx.b), GPUPRIM_ERROR_NULL_POINTER);
    TC_EXPECT_FAIL(ctx, gpuprim_topk(ctx, NULL, 3, asc, kout.b, idx.b), GPUPRIM_ERROR_NULL_POINTER, "keys_in");
    TC_EXPECT_FAIL(ctx, gpuprim_topk(ctx, keys.b, 3, asc, NULL, NULL), GPUPRIM_ERROR_NULL_POINTER, "both NULL");
    TC_EXPECT_FAIL(ctx, gpuprim_topk(ctx, keys.b, 0, asc, NULL, NULL), GPUPRIM_ERROR_NULL_POINTER, "both NULL");
    CHECK_STATUS(gpuprim_segmented_topk(NULL, &rows, keys.b, 3, asc, kout6.b, NULL), GPUPRIM_ERROR_NULL_POINTER);
    TC_EXPECT_FAIL(ctx, gpuprim_segmented_topk(ctx, NULL, keys.b, 3, asc, kout6.b, NULL), GPUPRIM_ERROR_NULL_POINTER,
                   "segments");
    TC_EXPECT_FAIL(ctx, gpuprim_segmented_topk(ctx, &rows, NULL, 3, asc, kout6.b, NULL), GPUPRIM_ERROR_NULL_POINTER,
                   "keys_in");
    TC_EXPECT_FAIL(ctx, gpuprim_segmented_topk(ctx, &rows, keys.b, 3, asc, NULL, NULL), GPUPRIM_ERROR_NULL_POINTER,
                   "both NULL");

    /* k past n; rows shorter than k */
    TC_EXPECT_FAIL(ctx, gpuprim_topk(ctx, keys.b, 9, asc, kout.b, idx.b), GPUPRIM_ERROR_INVALID_ARGUMENT, "k = 9");
    TC_EXPECT_FAIL(ctx, gpuprim_topk(ctx, keys.b, UINT64_MAX, asc, kout.b, NULL), GPUPRIM_ERROR_INVALID_ARGUMENT,
                   "k = ");
    TC_EXPECT_FAIL(ctx, gpuprim_segmented_topk(ctx, &rows, keys.b, 5, asc, kout6.b, idx6.b),
                   GPUPRIM_ERROR_INVALID_ARGUMENT, "k = 5");
    {
        gpuprim_segments_t eight;
        gpuprim_segments_init_rows(&eight, 8, 1);
        TC_EXPECT_FAIL(ctx, gpuprim_segmented_topk(ctx, &eight, keys.b, 2, asc, NULL, idx6.b),
                       GPUPRIM_ERROR_INVALID_ARGUMENT, "length");
    }

    /* enums */
    TC_EXPECT_FAIL(ctx, gpuprim_topk(ctx, keys.b, 3, (gpuprim_order_t)2, kout.b, idx.b), GPUPRIM_ERROR_INVALID_ENUM,
                   "order");
    TC_EXPECT_FAIL(ctx, gpuprim_topk(ctx, keys.b, 3, (gpuprim_order_t)-1, kout.b, idx.b), GPUPRIM_ERROR_INVALID_ENUM,
                   "order");
    TC_EXPECT_FAIL(ctx, gpuprim_segmented_topk(ctx, &rows, keys.b, 3, (gpuprim_order_t)7, kout6.b, NULL),
                   GPUPRIM_ERROR_INVALID_ENUM, "order");

    /* dtypes */
    TC_EXPECT_FAIL(ctx, gpuprim_topk(ctx, keys.b, 3, asc, f64.b, idx.b), GPUPRIM_ERROR_DTYPE_MISMATCH, "keys_out");
    TC_EXPECT_FAIL(ctx, gpuprim_topk(ctx, keys.b, 3, asc, kout.b, f64.b), GPUPRIM_ERROR_DTYPE_MISMATCH, "indices");
    TC_EXPECT_FAIL(ctx, gpuprim_topk(ctx, keys.b, 3, asc, NULL, i16.b), GPUPRIM_ERROR_DTYPE_MISMATCH, "indices");
    TC_EXPECT_FAIL(ctx, gpuprim_topk(ctx, keys.b, 3, asc, NULL, kout.b), GPUPRIM_ERROR_DTYPE_MISMATCH, "indices");
    TC_EXPECT_FAIL(ctx, gpuprim_segmented_topk(ctx, &rows, keys.b, 3, asc, idx6.b, NULL), GPUPRIM_ERROR_DTYPE_MISMATCH,
                   "keys_out");

    /* counts */
    TC_EXPECT_FAIL(ctx, gpuprim_topk(ctx, keys.b, 2, asc, kout.b, NULL), GPUPRIM_ERROR_SIZE_MISMATCH, "keys_out");
    TC_EXPECT_FAIL(ctx, gpuprim_topk(ctx, keys.b, 3, asc, kout.b, idx4.b), GPUPRIM_ERROR_SIZE_MISMATCH, "indices");
    TC_EXPECT_FAIL(ctx, gpuprim_topk(ctx, keys.b, 4, asc, kout.b, idx4.b), GPUPRIM_ERROR_SIZE_MISMATCH, "keys_out");
    TC_EXPECT_FAIL(ctx, gpuprim_segmented_topk(ctx, &rows, keys.b, 3, asc, kout.b, NULL), GPUPRIM_ERROR_SIZE_MISMATCH,
                   "keys_out");
    TC_EXPECT_FAIL(ctx, gpuprim_segmented_topk(ctx, &rows, keys.b, 2, asc, NULL, idx6.b), GPUPRIM_ERROR_SIZE_MISMATCH,
                   "indices");
    TC_EXPECT_FAIL(ctx, gpuprim_topk(ctx, keys.b, 0, asc, kout.b, NULL), GPUPRIM_ERROR_SIZE_MISMATCH, "keys_out");

    /* overlaps: outputs with keys_in, with each other (wrapped views) */
    {
        gpuprim_buffer_t in_view = tc_view(ctx, keys.b, GPUPRIM_DTYPE_F32, 5, 3);
        gpuprim_buffer_t in_as_idx = tc_view(ctx, keys.b, GPUPRIM_DTYPE_U32, 0, 3);
        gpuprim_buffer_t kout_as_idx = tc_view(ctx, kout.b, GPUPRIM_DTYPE_I32, 0, 3);
        gpuprim_buffer_t idx6_tail = tc_view(ctx, idx6.b, GPUPRIM_DTYPE_F32, 6, 6); /* its last 3 I64 */
        TC_EXPECT_FAIL(ctx, gpuprim_topk(ctx, keys.b, 3, asc, in_view, NULL), GPUPRIM_ERROR_INVALID_ARGUMENT,
                       "overlap");
        TC_EXPECT_FAIL(ctx, gpuprim_topk(ctx, keys.b, 3, asc, NULL, in_as_idx), GPUPRIM_ERROR_INVALID_ARGUMENT,
                       "overlap");
        TC_EXPECT_FAIL(ctx, gpuprim_topk(ctx, keys.b, 3, asc, kout.b, kout_as_idx), GPUPRIM_ERROR_INVALID_ARGUMENT,
                       "overlap");
        TC_EXPECT_FAIL(ctx, gpuprim_segmented_topk(ctx, &rows, keys.b, 3, asc, idx6_tail, idx6.b),
                       GPUPRIM_ERROR_INVALID_ARGUMENT, "overlap");
        destroy(in_view);
        destroy(in_as_idx);
        destroy(kout_as_idx);
        destroy(idx6_tail);
    }

    /* segments: struct_size, rows that do not cover the data, offsets of a
       non-index dtype or of no elements */
    seg = rows;
    seg.struct_size = 8;
    TC_EXPECT_FAIL(ctx, gpuprim_segmented_topk(ctx, &seg, keys.b, 3, asc, kout6.b, NULL),
                   GPUPRIM_ERROR_INVALID_ARGUMENT, "struct_size");
    gpuprim_segments_init_rows(&seg, 3, 4);
    TC_EXPECT_FAIL(ctx, gpuprim_segmented_topk(ctx, &seg, keys.b, 2, asc, kout6.b, NULL), GPUPRIM_ERROR_SIZE_MISMATCH,
                   "rows");
    gpuprim_segments_init_offsets(&seg, f64.b);
    TC_EXPECT_FAIL(ctx, gpuprim_segmented_topk(ctx, &seg, keys.b, 3, asc, kout6.b, NULL), GPUPRIM_ERROR_DTYPE_MISMATCH,
                   "offsets");
    {
        gpuprim_buffer_t empty = tc_buffer(ctx, GPUPRIM_DTYPE_I64, 0);
        gpuprim_segments_init_offsets(&seg, empty);
        TC_EXPECT_FAIL(ctx, gpuprim_segmented_topk(ctx, &seg, keys.b, 3, asc, kout6.b, NULL),
                       GPUPRIM_ERROR_SIZE_MISMATCH, "offsets");
        destroy(empty);
    }

    /* segment_count * k past 64 bits (CSR takes any k) */
    {
        const uint32_t offsets[6] = {0, 1, 2, 3, 4, 8};
        gpuprim_buffer_t off = tc_buffer_from(ctx, GPUPRIM_DTYPE_U32, offsets, 6);
        gpuprim_segments_init_offsets(&seg, off);
        TC_EXPECT_FAIL(ctx, gpuprim_segmented_topk(ctx, &seg, keys.b, (uint64_t)1 << 62, asc, kout6.b, NULL),
                       GPUPRIM_ERROR_SIZE_MISMATCH, "overflow");
        TC_EXPECT_FAIL(ctx, gpuprim_segmented_topk(ctx, &seg, keys.b, (uint64_t)1 << 40, asc, NULL, idx6.b),
                       GPUPRIM_ERROR_SIZE_MISMATCH, "indices");
        /* offsets may not be an output */
        {
            gpuprim_buffer_t off_as_out = tc_view(ctx, off, GPUPRIM_DTYPE_I32, 1, 5);
            TC_EXPECT_FAIL(ctx, gpuprim_segmented_topk(ctx, &seg, keys.b, 1, asc, NULL, off_as_out),
                           GPUPRIM_ERROR_INVALID_ARGUMENT, "offsets");
            destroy(off_as_out);
        }
        {
            gpuprim_buffer_t off_as_keys = tc_view(ctx, off, GPUPRIM_DTYPE_F32, 1, 5);
            TC_EXPECT_FAIL(ctx, gpuprim_segmented_topk(ctx, &seg, keys.b, 1, asc, off_as_keys, NULL),
                           GPUPRIM_ERROR_INVALID_ARGUMENT, "offsets");
            destroy(off_as_keys);
        }
        {
            uint32_t got[6];
            REQUIRE_OK(gpuprim_buffer_download(ctx, off, 0, got, 6));
            CHECK(memcmp(got, offsets, sizeof got) == 0);
        }
        destroy(off);
    }

    /* bad offsets: INVALID_ARGUMENT naming the first bad index, nothing written */
    for (oi = 0; oi < 4; ++oi) {
        const gpuprim_dtype_t od = index_dtypes[oi];
        const int is_signed = od == GPUPRIM_DTYPE_I32 || od == GPUPRIM_DTYPE_I64;
        static const int64_t cases[][4] = {{0, 5, 3, 8}, {0, 2, 9, 9}, {9, 9, 9, 9}, {1, 1, 2, 7}};
        static const uint64_t first_bad[] = {2, 2, 0, 99};
        unsigned c;
        for (c = 0; c < 5; ++c) {
            int64_t values[4];
            uint64_t host[4], i, bad;
            char needle[32];
            gpuprim_buffer_t off;
            if (c < 4) {
                memcpy(values, cases[c], sizeof values);
                bad = first_bad[c];
            } else {
                values[0] = 0, values[1] = 3, values[2] = is_signed ? -1 : (int64_t)tc_mask(od), values[3] = 8;
                bad = 2;
            }
            for (i = 0; i < 4; ++i) tc_set(od, host, i, (uint64_t)values[i]);
            off = tc_buffer_from(ctx, od, host, 4);
            gpuprim_segments_init_offsets(&seg, off);
            tc_where("top-k errors: offsets %s case %u", tc_dtype_name(od), c);
            if (bad == 99) { /* a good one, with a segment shorter than k: accepted (control) */
                tc_known_t out = tc_known(ctx, GPUPRIM_DTYPE_F32, 9);
                CHECK_OK(gpuprim_segmented_topk(ctx, &seg, keys.b, 3, asc, out.b, NULL));
                tc_free_known(ctx, out);
            } else {
                snprintf(needle, sizeof needle, "offsets[%llu]", (unsigned long long)bad);
                TC_EXPECT_FAIL(ctx, gpuprim_segmented_topk(ctx, &seg, keys.b, 2, asc, kout6.b, idx6.b),
                               GPUPRIM_ERROR_INVALID_ARGUMENT, needle);
                TC_EXPECT_FAIL(ctx, gpuprim_segmented_topk(ctx, &seg, keys.b, 0, asc, kout.b, NULL), /* 0 slots? 3 given */
                               GPUPRIM_ERROR_SIZE_MISMATCH, "keys_out");
                {
                    gpuprim_buffer_t none = tc_buffer(ctx, GPUPRIM_DTYPE_F32, 0);
                    TC_EXPECT_FAIL(ctx, gpuprim_segmented_topk(ctx, &seg, keys.b, 0, asc, none, NULL),
                                   GPUPRIM_ERROR_INVALID_ARGUMENT, needle); /* checked even for k = 0 */
                    destroy(none);
                }
            }
            destroy(off);
        }
    }
    tc_where("top-k errors");
    TC_CHECK_UNCHANGED(ctx, keys);
    TC_CHECK_UNCHANGED(ctx, kout);
    TC_CHECK_UNCHANGED(ctx, idx);
    TC_CHECK_UNCHANGED(ctx, kout6);
    TC_CHECK_UNCHANGED(ctx, idx6);
    TC_CHECK_UNCHANGED(ctx, f64);
    TC_CHECK_UNCHANGED(ctx, i16);
    TC_CHECK_UNCHANGED(ctx, idx4);
    tc_free_known(ctx, keys);
    tc_free_known(ctx, kout);
    tc_free_known(ctx, idx);
    tc_free_known(ctx, kout6);
    tc_free_known(ctx, idx6);
    tc_free_known(ctx, f64);
    tc_free_known(ctx, i16);
    tc_free_known(ctx, idx4);
}

/* Indices too small for the positions: n - 1 past INT32_MAX (I32) or
 * UINT32_MAX (U32). Needs keys_in of 2^31 + 1 (2^32 + 1) one-byte keys that
 * are never read: on the CPU backend a wrap of a host allocation that is
 * never touched (virtual memory only), on CUDA a device buffer (2 or 4 GiB,
 * skipped when it cannot be had). Flat and rows are refused by the call's
 * checks, CSR offsets (one segment that long) by the backend's check of the
 * longest segment, before anything is read or written. */
static void test_index_too_small(void) {
    static const struct {
        gpuprim_dtype_t id;
        uint64_t n;
    } cases[2] = {{GPUPRIM_DTYPE_I32, ((uint64_t)1 << 31) + 1}, {GPUPRIM_DTYPE_U32, ((uint64_t)1 << 32) + 1}};
    const int cuda = tc_backend_is_cuda(ctx);
    unsigned c;
    if (sizeof(size_t) < 8) {
        printf("test_topk: indices too small: skipped (32-bit size_t)\n");
        return;
    }
    for (c = 0; c < 2; ++c) {
        const uint64_t n = cases[c].n;
        void *host = NULL;
        gpuprim_buffer_t kin = NULL, off;
        tc_known_t idx = tc_known(ctx, cases[c].id, 1), idx2 = tc_known(ctx, cases[c].id, 2),
                   kout = tc_known(ctx, GPUPRIM_DTYPE_U8, 1);
        gpuprim_segments_t seg;
        uint64_t offsets[3];
        tc_where("top-k: %llu keys with %s indices", (unsigned long long)n, tc_dtype_name(cases[c].id));
        if (cuda) {
            if (gpuprim_buffer_create(ctx, GPUPRIM_DTYPE_U8, n, &kin) != GPUPRIM_SUCCESS) kin = NULL;
        } else {
            host = malloc((size_t)n + 64);
            if (host && gpuprim_buffer_wrap(ctx, GPUPRIM_DTYPE_U8, host, n, &kin) != GPUPRIM_SUCCESS) kin = NULL;
        }
        if (!kin) {
            printf("test_topk: indices too small (%s, %llu keys): skipped, no memory for the keys\n",
                   tc_dtype_name(cases[c].id), (unsigned long long)n);
            free(host);
            tc_free_known(ctx, idx);
            tc_free_known(ctx, idx2);
            tc_free_known(ctx, kout);
            continue;
        }
        TC_EXPECT_FAIL(ctx, gpuprim_topk(ctx, kin, 1, GPUPRIM_ORDER_DESCENDING, kout.b, idx.b),
                       GPUPRIM_ERROR_INVALID_ARGUMENT, "does not fit");
        gpuprim_segments_init_rows(&seg, 1, n);
        TC_EXPECT_FAIL(ctx, gpuprim_segmented_topk(ctx, &seg, kin, 1, GPUPRIM_ORDER_ASCENDING, NULL, idx.b),
                       GPUPRIM_ERROR_INVALID_ARGUMENT, "does not fit");
        /* CSR: a segment of all n keys, then an empty one */
        offsets[0] = 0, offsets[1] = n, offsets[2] = n;
        off = tc_buffer_from(ctx, GPUPRIM_DTYPE_U64, offsets, 3);
        gpuprim_segments_init_offsets(&seg, off);
        TC_EXPECT_FAIL(ctx, gpuprim_segmented_topk(ctx, &seg, kin, 1, GPUPRIM_ORDER_ASCENDING, NULL, idx2.b),
                       GPUPRIM_ERROR_INVALID_ARGUMENT, "does not fit");
        destroy(off);
        /* the same with k = 0 (no slots): the indices must still hold every position */
        offsets[0] = 0, offsets[1] = 0, offsets[2] = n;
        off = tc_buffer_from(ctx, GPUPRIM_DTYPE_U64, offsets, 3);
        gpuprim_segments_init_offsets(&seg, off);
        {
            gpuprim_buffer_t none = tc_buffer(ctx, cases[c].id, 0);
            TC_EXPECT_FAIL(ctx, gpuprim_segmented_topk(ctx, &seg, kin, 0, GPUPRIM_ORDER_ASCENDING, NULL, none),
                           GPUPRIM_ERROR_INVALID_ARGUMENT, "does not fit");
            destroy(none);
        }
        destroy(off);
        TC_CHECK_UNCHANGED(ctx, idx);
        TC_CHECK_UNCHANGED(ctx, idx2);
        TC_CHECK_UNCHANGED(ctx, kout);
        destroy(kin);
        free(host);
        tc_free_known(ctx, idx);
        tc_free_known(ctx, idx2);
        tc_free_known(ctx, kout);
    }
}

int main(void) {
    double start;
    ctx = tc_init("test_topk");
    max_count = tc_max_count();
    if (max_count > (1u << 20) + 3) max_count = (1u << 20) + 3;
    start = tc_seconds();
    test_reference();
    test_known_answers();
    test_errors();
    test_index_too_small();
    printf("test_topk: known answers and errors done (%.1f s)\n", tc_seconds() - start);
    test_output_matrix();
    printf("test_topk: output matrix done (%.1f s)\n", tc_seconds() - start);
    test_flat_patterns();
    printf("test_topk: patterns done (%.1f s)\n", tc_seconds() - start);
    test_flat_sizes();
    printf("test_topk: flat sizes done (%.1f s)\n", tc_seconds() - start);
    test_rows();
    printf("test_topk: rows done (%.1f s)\n", tc_seconds() - start);
    test_csr();
    printf("test_topk: CSR offsets done (%.1f s)\n", tc_seconds() - start);
    test_filter_arrangements();
    printf("test_topk: filter arrangements done (%.1f s)\n", tc_seconds() - start);
    test_sampled_threshold();
    test_sampled_threshold_counts();
    printf("test_topk: sampled threshold done (%.1f s)\n", tc_seconds() - start);
    test_mixed_segment_rounds();
    printf("test_topk: mixed segment rounds done (%.1f s)\n", tc_seconds() - start);
    test_many_long_rows();
    printf("test_topk: many long rows done (%.1f s)\n", tc_seconds() - start);
    test_streamed_block_select();
    printf("test_topk: streamed block select done (%.1f s)\n", tc_seconds() - start);
    return tc_finish();
}
