/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the cross-cutting programs share: their command line
 * ("program [--list] [case ...]": the registry's cases named, or all of
 * them; --list prints the calls without making them) and the loop over the
 * cases.
 */
#ifndef GPUPRIM_TEST_REGISTRY_MAIN_H
#define GPUPRIM_TEST_REGISTRY_MAIN_H

#include "registry.h"

/* "--list": print each call's label instead of running it. */
static inline void tr_list_visit(const tr_call_t *call, void *user) {
    ++*(long *)user;
    printf("    %s\n", call->label);
}

/* "--shard=I/N": whether the argument is one, and its numbers. */
static inline int tr_shard_argument(const char *arg, unsigned *index, unsigned *count) {
    char end = 0;
    return sscanf(arg, "--shard=%u/%u%c", index, count, &end) == 2 && *count > 0 && *index < *count;
}

/* "--shard=I/N": the calls of the run whose place in it is I modulo N go
 * on to the program's visit; the others are only counted. */
typedef struct tr_shard {
    tr_visit_t visit;
    void *user;
    unsigned index, count;
    long seen; /* calls of the run so far, this shard's and the others' */
} tr_shard_t;

static inline void tr_shard_visit(const tr_call_t *call, void *user) {
    tr_shard_t *shard = (tr_shard_t *)user;
    if (shard->seen++ % shard->count == shard->index) shard->visit(call, shard->user);
}

/* Runs every case named on the command line (all without arguments, or
 * "all") through plan, each call to visit; with "--list" only prints the
 * calls. "--shard=I/N" keeps, of those calls, the ones whose place in the
 * run is I modulo N (so N programs started with I = 0 .. N-1 share the
 * calls evenly however unlike the cases' costs are, for a slow build such
 * as ThreadSanitizer's; each prints how many of the run's calls it made).
 * Unknown names fail the program (and the message lists the table).
 * *calls counts the calls visited. */
static inline void tr_for_named_cases(int argc, char **argv, tr_plan_t plan, tr_visit_t visit, void *user,
                                      long *calls) {
    int i, all = 1, list = 0;
    unsigned shard = 0, shards = 1;
    size_t c;
    long calls_before = *calls;
    tr_shard_t filter;
    for (i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--list") == 0) list = 1;
        else if (strncmp(argv[i], "--shard=", 8) == 0) {
            if (!tr_shard_argument(argv[i], &shard, &shards)) {
                fprintf(stderr, "%s: \"%s\" is not --shard=I/N with I < N\n", tc.program, argv[i]);
                tc.failures++;
                return;
            }
        } else if (strcmp(argv[i], "all") != 0) all = 0;
    }
    for (i = 1; i < argc; ++i)
        if (strcmp(argv[i], "all") != 0 && strcmp(argv[i], "--list") != 0 && strncmp(argv[i], "--shard=", 8) != 0 &&
            !tr_find_case(argv[i])) {
            fprintf(stderr, "%s: no case named \"%s\"; the registry has:", tc.program, argv[i]);
            for (c = 0; c < tr_case_count; ++c) fprintf(stderr, " %s", tr_cases[c]->name);
            fprintf(stderr, "\n");
            tc.failures++;
        }
    filter.visit = list ? tr_list_visit : visit;
    filter.user = list ? (void *)calls : user;
    filter.index = shard;
    filter.count = shards;
    filter.seen = 0;
    for (c = 0; c < tr_case_count; ++c) {
        int wanted = all;
        long before = *calls;
        double start = tc_seconds();
        for (i = 1; i < argc && !wanted; ++i) wanted = strcmp(argv[i], tr_cases[c]->name) == 0;
        if (!wanted) continue;
        tr_cases[c]->each(plan, tr_shard_visit, &filter);
        printf("  %s: %ld calls, %.2f s\n", tr_cases[c]->name, *calls - before, tc_seconds() - start);
        fflush(stdout);
    }
    if (shards > 1) printf("  shard %u/%u: %ld of the run's %ld calls\n", shard, shards, *calls - calls_before, filter.seen);
}

#endif /* GPUPRIM_TEST_REGISTRY_MAIN_H */
