/* SPDX-License-Identifier: Apache-2.0 */
/* gpuprim_topk (no layout) and gpuprim_segmented_topk: arg 0 keys, arg 1
 * keys out, arg 2 indices out (either may be unused); outputs are segments
 * x k slots, poisoned, so a short segment's untouched slots are compared
 * too. */
#include "registry.h"

const tr_case_t tr_topk_case;

static gpuprim_status_t topk_invoke(const tr_call_t *c, gpuprim_context_t ctx, gpuprim_buffer_t const *b,
                                    const gpuprim_segments_t *segments, void *scalar) {
    (void)scalar;
    if (segments) return gpuprim_segmented_topk(ctx, segments, b[0], c->k, (gpuprim_order_t)c->order, b[1], b[2]);
    return gpuprim_topk(ctx, b[0], c->k, (gpuprim_order_t)c->order, b[1], b[2]);
}

/* mode: 0 keys out only, 1 indices only, 2 both. */
static void topk_call(tr_visit_t visit, void *user, const tc_layout_t *L, uint64_t flat_n, gpuprim_dtype_t kd,
                      gpuprim_dtype_t id, uint64_t k, int descending, int mode, const void *keys) {
    const uint64_t n = L ? L->n : flat_n, slots = (L ? L->nseg : 1) * k;
    tr_call_t c;
    tr_call_init(&c, &tr_topk_case);
    c.layout = L;
    c.k = k;
    c.order = descending;
    tr_set_arg(&c, 0, kd, n, keys, 0, 0);
    if (mode != 1) tr_set_arg(&c, 1, kd, slots, NULL, 0x5A, 1);
    if (mode != 0) tr_set_arg(&c, 2, id, slots, NULL, 0x77, 1);
    tr_call_label(&c, "%s n=%llu, %llu segments (%s), k=%llu %s, %s%s%s", tc_dtype_name(kd), (unsigned long long)n,
                  (unsigned long long)(L ? L->nseg : 1), L ? L->name : "flat", (unsigned long long)k,
                  descending ? "descending" : "ascending", mode != 1 ? "keys " : "", mode != 0 ? "indices " : "",
                  mode != 0 ? tc_dtype_name(id) : "");
    visit(&c, user);
    tr_call_free(&c);
}

static gpuprim_dtype_t index_dtype(size_t i) {
    static const gpuprim_dtype_t index_dtypes[] = {GPUPRIM_DTYPE_I32, GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_I64,
                                                   GPUPRIM_DTYPE_U64};
    return index_dtypes[i % 4];
}

/* The keys of one call (a fresh draw each time, as the calls of the
 * backend plan had). */
static void *topk_keys(gpuprim_dtype_t kd, uint64_t n, int few) {
    void *keys = tc_xmalloc(n * 8 + 16);
    tr_fill_random(kd, keys, n, 0, few);
    return keys;
}

static void topk_backends(tr_visit_t visit, void *user) {
    /* flat: the argsort sizes and the selection's edges, k from 0 to n */
    static const uint64_t sizes[] = {1, 33, 1000, 4097, 8193, 100001, (1u << 20) + 7};
    static const uint64_t flat_ks[] = {0, 1, 2, 8, 64, 65, 1024, 4097};
    static const uint64_t segment_ks[] = {0, 1, 8, 64, 65, 1024, 4097};
    tc_layout_t layouts[12];
    int count, i, desc;
    size_t s, k, j;
    void *keys;
    for (s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
        const uint64_t n = sizes[s];
        for (k = 0; k < TC_DTYPE_COUNT; ++k)
            for (desc = 0; desc < 2; ++desc) {
                const gpuprim_dtype_t kd = tc_all_dtypes[k];
                for (j = 0; j < sizeof flat_ks / sizeof flat_ks[0]; ++j)
                    if (flat_ks[j] <= n) {
                        keys = topk_keys(kd, n, (int)((k + j) % 2));
                        topk_call(visit, user, NULL, n, kd, index_dtype(s + k + j), flat_ks[j], desc,
                                  (int)((s + j + (size_t)desc) % 3), keys);
                        free(keys);
                    }
                keys = topk_keys(kd, n, (int)(k % 2));
                topk_call(visit, user, NULL, n, kd, index_dtype(s + k), n - 1, desc, 2, keys);
                free(keys);
                keys = topk_keys(kd, n, 1);
                topk_call(visit, user, NULL, n, kd, index_dtype(s + k + 1), n, desc, (int)(s % 3), keys);
                free(keys);
            }
    }
    /* segments: k past the rows is refused, so rows take k up to their length; CSR any k */
    count = tr_backend_layouts(layouts);
    for (i = 0; i < count; ++i) {
        const tc_layout_t *L = &layouts[i];
        for (k = 0; k < TC_DTYPE_COUNT; ++k)
            for (desc = 0; desc < 2; ++desc) {
                const gpuprim_dtype_t kd = tc_all_dtypes[k];
                for (j = 0; j < sizeof segment_ks / sizeof segment_ks[0]; ++j) {
                    if (L->uniform && segment_ks[j] > L->len) continue;
                    if (L->nseg * segment_ks[j] > (8u << 20)) continue;
                    keys = topk_keys(kd, L->n, (int)((k + j) % 2));
                    topk_call(visit, user, L, 0, kd, index_dtype(k + j + (size_t)desc), segment_ks[j], desc,
                              (int)((k + j + (size_t)desc) % 3), keys);
                    free(keys);
                }
                if (L->uniform && L->len > 0) {
                    keys = topk_keys(kd, L->n, 0);
                    topk_call(visit, user, L, 0, kd, index_dtype(k), L->len, desc, 2, keys);
                    free(keys);
                }
            }
    }
    for (i = 0; i < count; ++i) tc_layout_free(&layouts[i]);
}

/* Short and long segments (past the 2^16-key chunks that select on every
 * thread), small k and k past a quarter of a segment; shape 3 is flat. */
static void topk_threads(tr_visit_t visit, void *user) {
    static const gpuprim_dtype_t dts[] = {GPUPRIM_DTYPE_F32, GPUPRIM_DTYPE_I8, GPUPRIM_DTYPE_F16, GPUPRIM_DTYPE_U64};
    static const uint64_t ks[] = {1, 8, 64, 1024, 4097};
    int shape;
    size_t di, ki;
    for (shape = 0; shape < TR_THREADS_SHAPES + 1; ++shape) {
        tc_layout_t L;
        const tc_layout_t *layout = NULL;
        uint64_t n = (1u << 20) + 3, segments = 1;
        if (shape < TR_THREADS_SHAPES) {
            L = tr_threads_layout(shape);
            layout = &L;
            n = L.n;
            segments = L.nseg;
        }
        for (di = 0; di < sizeof dts / sizeof dts[0]; ++di) {
            const gpuprim_dtype_t d = dts[di];
            void *keys = tc_xmalloc(n * 8);
            uint64_t i;
            tc_fill(d, keys, n, (di + (size_t)shape) % 2 ? TC_SMALL_RANGE : TC_NAN_SPARSE);
            for (i = 0; i < n; i += 89) tc_set(d, keys, i, tc_special_value(d));
            for (ki = 0; ki < sizeof ks / sizeof ks[0]; ++ki) {
                const uint64_t k = shape == 1 && ks[ki] > 16 ? 16 : ks[ki];
                topk_call(visit, user, layout, n, d, ki % 2 ? GPUPRIM_DTYPE_U32 : GPUPRIM_DTYPE_I64, k,
                          (int)((ki + di) & 1), 2, keys);
            }
            if (shape >= 2) /* more than a quarter of a long segment: selected whole */
                topk_call(visit, user, layout, n, d, GPUPRIM_DTYPE_I32, n / segments / 3, (int)(di & 1), 2, keys);
            free(keys);
        }
        if (layout) tc_layout_free(&L);
    }
}

static void topk_each(tr_plan_t plan, tr_visit_t visit, void *user) {
    if (plan == TR_PLAN_SMALL) {
        static const uint64_t lengths[] = {30, 2, 0, 60};
        tc_layout_t L = tc_layout_csr("csr", lengths, 4, 5, 3, GPUPRIM_DTYPE_U64);
        uint16_t keys[100];
        tc_fill(GPUPRIM_DTYPE_BF16, keys, 100, TC_NAN_SPARSE);
        topk_call(visit, user, NULL, 100, GPUPRIM_DTYPE_BF16, GPUPRIM_DTYPE_U32, 7, 1, 2, keys);
        topk_call(visit, user, &L, 0, GPUPRIM_DTYPE_BF16, GPUPRIM_DTYPE_I64, 4, 0, 2, keys);
        tc_layout_free(&L);
    } else if (plan == TR_PLAN_CONCURRENCY) {
        /* flat: the first third of each order, both outputs; segmented: a few slots a segment, one output now
           and then */
        size_t d;
        int desc;
        for (d = 0; d < TC_DTYPE_COUNT; ++d) {
            const gpuprim_dtype_t kd = tc_all_dtypes[d];
            const uint64_t n = tr_concurrency_count(d + 4);
            tc_layout_t L = tr_concurrency_layout(d, tr_concurrency_count(d + 8));
            const uint64_t segment_k = L.uniform && L.len < 4 ? L.len : 4;
            void *keys = tc_xmalloc(n * 8 + 16), *segment_keys = tc_xmalloc(L.n * 8 + 16);
            tr_fill_small(kd, keys, n, 1);
            tr_fill_small(kd, segment_keys, L.n, 1);
            for (desc = 0; desc < 2; ++desc)
                topk_call(visit, user, NULL, n, kd, index_dtype(d + (size_t)desc), n / 3 + (n > 0), desc, 2, keys);
            topk_call(visit, user, &L, 0, kd, index_dtype(d), segment_k, (int)(d & 1), (int)(d % 3), segment_keys);
            free(keys);
            free(segment_keys);
            tc_layout_free(&L);
        }
    } else if (plan == TR_PLAN_BACKENDS) topk_backends(visit, user);
    else topk_threads(visit, user);
}

/* The header's definition: segment s's first min(k, length) of its stable
 * argsort to slots [s * k, s * k + m), positions within s; the other slots
 * as they were. */
static int topk_reference(const tr_call_t *c, tr_result_t *want) {
    const gpuprim_dtype_t kd = c->arg[0].dtype;
    uint64_t s, j, begin, end;
    for (s = 0; s < tr_segment_count(c); ++s) {
        uint64_t *perm, m;
        tr_segment_bounds(c, s, &begin, &end);
        m = end - begin < c->k ? end - begin : c->k;
        perm = (uint64_t *)tc_xmalloc((end - begin) * sizeof *perm + 16);
        tr_stable_order(c, begin, end, perm);
        for (j = 0; j < m; ++j) {
            if (c->arg[1].used) tc_set(kd, want->out[1], s * c->k + j, tc_get(kd, c->arg[0].host, begin + perm[j]));
            if (c->arg[2].used) tc_set(c->arg[2].dtype, want->out[2], s * c->k + j, perm[j]);
        }
        free(perm);
    }
    return 1;
}

const tr_case_t tr_topk_case = {.name = "topk",
                                .each = topk_each,
                                .invoke = topk_invoke,
                                .reference = topk_reference};
