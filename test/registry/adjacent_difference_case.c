/* SPDX-License-Identifier: Apache-2.0 */
/* gpuprim_adjacent_difference: arg 0 the input, arg 1 the output (poisoned,
 * or in place: arg 0's buffer). One exact answer (integers wrap, floats one
 * rounding, NaN results canonical), so every comparison is bit for bit. */
#include "registry.h"

const tr_case_t tr_adjacent_difference_case;

static gpuprim_status_t adjacent_difference_invoke(const tr_call_t *c, gpuprim_context_t ctx,
                                                   gpuprim_buffer_t const *b, const gpuprim_segments_t *segments,
                                                   void *scalar) {
    (void)c;
    (void)segments;
    (void)scalar;
    return gpuprim_adjacent_difference(ctx, b[0], b[1]);
}

/* poison < 0: in place. */
static void difference_call(tr_visit_t visit, void *user, gpuprim_dtype_t d, uint64_t n, const void *in,
                            int poison) {
    tr_call_t c;
    tr_call_init(&c, &tr_adjacent_difference_case);
    tr_set_arg(&c, 0, d, n, in, 0, 0);
    if (poison < 0) tr_set_in_place(&c, 1, 0, 1);
    else tr_set_arg(&c, 1, d, n, NULL, poison, 1);
    tr_call_label(&c, "adjacent difference %s n=%llu%s", tc_dtype_name(d), (unsigned long long)n,
                  poison < 0 ? " in place" : "");
    visit(&c, user);
    tr_call_free(&c);
}

static void adjacent_difference_each(tr_plan_t plan, tr_visit_t visit, void *user) {
    size_t s, d;
    if (plan == TR_PLAN_SMALL) {
        int32_t a[100];
        tc_fill(GPUPRIM_DTYPE_I32, a, 100, TC_MODERATE);
        difference_call(visit, user, GPUPRIM_DTYPE_I32, 100, a, 0x5A);
    } else if (plan == TR_PLAN_CONCURRENCY) {
        /* every dtype, out of place and in place by turns */
        for (d = 0; d < TC_DTYPE_COUNT; ++d) {
            const uint64_t n = tr_concurrency_count(d + 3);
            void *a = tc_xmalloc(n * 8 + 16);
            tr_fill_small(tc_all_dtypes[d], a, n, 1);
            difference_call(visit, user, tc_all_dtypes[d], n, a, d % 2 ? -1 : 0x5A);
            free(a);
        }
    } else if (plan == TR_PLAN_BACKENDS) {
        /* around the CUDA chunks (128 to 512 elements) and blocks (8 chunks), any bits */
        static const uint64_t sizes[] = {1, 2, 31, 33, 127, 129, 511, 513, 1023, 1025, 4095, 4097, 65537,
                                         (1u << 20) + 3, (1u << 22) + 1};
        for (s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
            for (d = 0; d < TC_DTYPE_COUNT; ++d) {
                const uint64_t n = sizes[s];
                void *a = tc_xmalloc(n * 8 + 16);
                tr_fill_random(tc_all_dtypes[d], a, n, 0, (int)(s % 3 == 2));
                difference_call(visit, user, tc_all_dtypes[d], n, a, 0xA5);
                difference_call(visit, user, tc_all_dtypes[d], n, a, -1);
                free(a);
            }
    } else {
        /* the CPU's parallel pieces start at 2^17 elements */
        static const uint64_t counts[] = {1, 1000, 131071, (1u << 17) + 3, (1u << 20) + 12345};
        for (s = 0; s < sizeof counts / sizeof counts[0]; ++s)
            for (d = 0; d < TC_DTYPE_COUNT; ++d) {
                const uint64_t n = counts[s];
                void *a = tc_xmalloc(n * 8);
                tc_fill(tc_all_dtypes[d], a, n, TC_RANDOM_BITS);
                difference_call(visit, user, tc_all_dtypes[d], n, a, 0);
                difference_call(visit, user, tc_all_dtypes[d], n, a, -1);
                free(a);
            }
    }
}

static int adjacent_difference_reference(const tr_call_t *c, tr_result_t *want) {
    tc_reference_adjacent_difference(c->arg[0].dtype, c->arg[0].host, c->arg[0].count, want->out[1]);
    return 1;
}

const tr_case_t tr_adjacent_difference_case = {.name = "adjacent_difference",
                                               .each = adjacent_difference_each,
                                               .invoke = adjacent_difference_invoke,
                                               .agree = NULL,
                                               .reference = adjacent_difference_reference};
