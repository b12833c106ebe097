/* SPDX-License-Identifier: Apache-2.0 */
/* gpuprim_argsort: arg 0 keys in, arg 1 keys out (or unused), arg 2 the
 * indices (poisoned). */
#include "registry.h"

const tr_case_t tr_argsort_case;

static gpuprim_status_t argsort_invoke(const tr_call_t *c, gpuprim_context_t ctx, gpuprim_buffer_t const *b,
                                       const gpuprim_segments_t *segments, void *scalar) {
    gpuprim_sort_options_t options;
    (void)segments;
    (void)scalar;
    gpuprim_sort_options_init(&options);
    options.order = (gpuprim_order_t)c->order;
    return gpuprim_argsort(ctx, b[0], b[1], b[2], &options);
}

static void argsort_call(tr_visit_t visit, void *user, gpuprim_dtype_t kd, gpuprim_dtype_t id, const void *keys,
                         uint64_t n, int descending, int with_keys) {
    tr_call_t c;
    tr_call_init(&c, &tr_argsort_case);
    c.order = descending;
    tr_set_arg(&c, 0, kd, n, keys, 0, 0);
    if (with_keys) tr_set_arg(&c, 1, kd, n, NULL, 0, 1);
    tr_set_arg(&c, 2, id, n, NULL, 0x77, 1);
    tr_call_label(&c, "keys %s indices %s n=%llu %s%s", tc_dtype_name(kd), tc_dtype_name(id), (unsigned long long)n,
                  descending ? "descending" : "ascending", with_keys ? ", keys out" : "");
    visit(&c, user);
    tr_call_free(&c);
}

static void argsort_each(tr_plan_t plan, tr_visit_t visit, void *user) {
    static const gpuprim_dtype_t index_dtypes[] = {GPUPRIM_DTYPE_I32, GPUPRIM_DTYPE_U32, GPUPRIM_DTYPE_I64,
                                                   GPUPRIM_DTYPE_U64};
    static const uint64_t backend_sizes[] = {1, 1000, 4097, 100001, (1u << 20) + 7};
    /* past the parallel sort's 2^17 keys */
    static const uint64_t thread_sizes[] = {70001, (1u << 18) + 3};
    const uint64_t *sizes = plan == TR_PLAN_BACKENDS ? backend_sizes : thread_sizes;
    const size_t size_count = plan == TR_PLAN_BACKENDS ? 5 : 2, dtype_count = plan == TR_PLAN_BACKENDS ? 12 : 6;
    size_t s, k;
    int desc;
    if (plan == TR_PLAN_SMALL) {
        float keys[100];
        tc_fill(GPUPRIM_DTYPE_F32, keys, 100, TC_SMALL_RANGE);
        argsort_call(visit, user, GPUPRIM_DTYPE_F32, GPUPRIM_DTYPE_I64, keys, 100, 0, 1);
        return;
    }
    if (plan == TR_PLAN_CONCURRENCY) {
        /* both orders, keys out or not, every index dtype */
        for (k = 0; k < TC_DTYPE_COUNT; ++k) {
            const uint64_t n = tr_concurrency_count(k + 2);
            void *keys = tc_xmalloc(n * 8 + 16);
            tr_fill_small(tc_all_dtypes[k], keys, n, 1);
            for (desc = 0; desc < 2; ++desc)
                argsort_call(visit, user, tc_all_dtypes[k], index_dtypes[(k + (size_t)desc) % 4], keys, n, desc, !desc);
            free(keys);
        }
        return;
    }
    for (s = 0; s < size_count; ++s)
        for (k = 0; k < dtype_count; ++k)
            for (desc = 0; desc < 2; ++desc) {
                const uint64_t n = sizes[s];
                const gpuprim_dtype_t kd = tc_all_dtypes[k];
                void *keys = tc_xmalloc(n * 8 + 16);
                if (plan == TR_PLAN_BACKENDS) {
                    tr_fill_random(kd, keys, n, 0, (int)(n % 2));
                } else {
                    uint64_t i;
                    tc_fill(kd, keys, n, (s + k) % 2 ? TC_SMALL_RANGE : TC_NAN_SPARSE);
                    for (i = 0; i < n; i += 97) tc_set(kd, keys, i, tc_special_value(kd));
                }
                argsort_call(visit, user, kd, index_dtypes[(s + k + (size_t)desc) % 4], keys, n, desc,
                             (int)((s + k) % 2));
                free(keys);
            }
}

static int argsort_reference(const tr_call_t *c, tr_result_t *want) {
    const uint64_t n = c->arg[0].count;
    uint64_t *perm = (uint64_t *)tc_xmalloc(n * sizeof *perm + 16), j;
    tr_stable_order(c, 0, n, perm);
    if (c->arg[1].used) tc_permute(c->arg[0].dtype, c->arg[0].host, perm, n, want->out[1]);
    for (j = 0; j < n; ++j) tc_set(c->arg[2].dtype, want->out[2], j, perm[j]);
    free(perm);
    return 1;
}

const tr_case_t tr_argsort_case = {.name = "argsort",
                                   .each = argsort_each,
                                   .invoke = argsort_invoke,
                                   .reference = argsort_reference};
