/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The registry's table: one line per primitive, TR_CASE(name) for the case
 * `tr_<name>_case` defined in <name>_case.c. registry.c includes this list
 * twice (declarations, then the table); test/CMakeLists.txt reads the names
 * from it for the per-case ctest tests. The order is the programs' order.
 */
TR_CASE(reduce)           /* gpuprim_reduce, gpuprim_dot */
TR_CASE(argreduce)        /* gpuprim_argreduce */
TR_CASE(searchsorted)     /* gpuprim_searchsorted */
TR_CASE(histogram)        /* gpuprim_histogram_even, gpuprim_histogram_range, gpuprim_bincount */
TR_CASE(merge)            /* gpuprim_merge */
TR_CASE(select)           /* gpuprim_select, gpuprim_partition, gpuprim_unique, gpuprim_run_length_encode */
TR_CASE(reduce_by_key)    /* gpuprim_reduce_by_key, gpuprim_group_by */
TR_CASE(scan)             /* gpuprim_scan */
TR_CASE(sort)             /* gpuprim_sort, gpuprim_sort_with_options */
TR_CASE(argsort)          /* gpuprim_argsort */
TR_CASE(segmented_sort)   /* gpuprim_segmented_sort, gpuprim_segmented_argsort */
TR_CASE(segmented_reduce) /* gpuprim_segmented_reduce */
TR_CASE(segmented_scan)   /* gpuprim_segmented_scan */
TR_CASE(topk)             /* gpuprim_topk, gpuprim_segmented_topk */
