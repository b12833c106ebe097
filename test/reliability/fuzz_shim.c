/* SPDX-License-Identifier: Apache-2.0 */
/* Calls with enum arguments made from C, the way a C caller makes them: any
 * int converts to the enum parameter. (In the C++ fuzz target a value
 * outside an enum's range would be undefined behaviour in the caller itself,
 * and UBSan would flag the fuzzer rather than the library.) */
#include "fuzz_shim.h"

gpuprim_status_t shim_buffer_create(gpuprim_context_t context, int dtype, uint64_t count,
                                    gpuprim_buffer_t *buffer) {
    return gpuprim_buffer_create(context, dtype, count, buffer);
}

gpuprim_status_t shim_buffer_wrap(gpuprim_context_t context, int dtype, void *data,
                                  uint64_t count, gpuprim_buffer_t *buffer) {
    return gpuprim_buffer_wrap(context, dtype, data, count, buffer);
}

gpuprim_status_t shim_reduce(gpuprim_context_t context, int op, gpuprim_buffer_t input,
                             void *result) {
    return gpuprim_reduce(context, op, input, result);
}

gpuprim_status_t shim_argreduce(gpuprim_context_t context, int op, gpuprim_buffer_t input, uint64_t *index) {
    return gpuprim_argreduce(context, op, input, index);
}

gpuprim_status_t shim_merge(gpuprim_context_t context, gpuprim_buffer_t keys_a, gpuprim_buffer_t values_a,
                            gpuprim_buffer_t keys_b, gpuprim_buffer_t values_b, gpuprim_buffer_t keys_out,
                            gpuprim_buffer_t values_out, int order) {
    return gpuprim_merge(context, keys_a, values_a, keys_b, values_b, keys_out, values_out, order);
}

gpuprim_status_t shim_run_length_encode(gpuprim_context_t context, gpuprim_buffer_t input, int runs,
                                        gpuprim_buffer_t keys_out, gpuprim_buffer_t starts, gpuprim_buffer_t lengths,
                                        uint64_t *count, gpuprim_buffer_t count_out) {
    return gpuprim_run_length_encode(context, input, runs, keys_out, starts, lengths, count, count_out);
}

gpuprim_status_t shim_reduce_by_key(gpuprim_context_t context, gpuprim_buffer_t keys, gpuprim_buffer_t values, int op,
                                    gpuprim_buffer_t keys_out, gpuprim_buffer_t results, gpuprim_buffer_t lengths,
                                    uint64_t *count, gpuprim_buffer_t count_out) {
    return gpuprim_reduce_by_key(context, keys, values, op, keys_out, results, lengths, count, count_out);
}

gpuprim_status_t shim_group_by(gpuprim_context_t context, gpuprim_buffer_t keys, gpuprim_buffer_t values, int op,
                               gpuprim_buffer_t keys_out, gpuprim_buffer_t counts, gpuprim_buffer_t results,
                               gpuprim_buffer_t inverse, uint64_t *count, gpuprim_buffer_t count_out) {
    return gpuprim_group_by(context, keys, values, op, keys_out, counts, results, inverse, count, count_out);
}

gpuprim_status_t shim_searchsorted_rows(gpuprim_context_t context, gpuprim_buffer_t sorted, gpuprim_buffer_t queries,
                                        uint64_t rows, int side, int order, gpuprim_buffer_t indices) {
    return gpuprim_searchsorted_rows(context, sorted, queries, rows, side, order, indices);
}

gpuprim_status_t shim_searchsorted(gpuprim_context_t context, gpuprim_buffer_t sorted, gpuprim_buffer_t queries, int side,
                                   int order, gpuprim_buffer_t indices) {
    return gpuprim_searchsorted(context, sorted, queries, side, order, indices);
}

gpuprim_status_t shim_reduce_to_buffer(gpuprim_context_t context, int op, gpuprim_buffer_t input,
                                       gpuprim_buffer_t result) {
    return gpuprim_reduce_to_buffer(context, op, input, result);
}

gpuprim_status_t shim_scan(gpuprim_context_t context, int op, int kind, gpuprim_buffer_t input,
                           gpuprim_buffer_t output) {
    return gpuprim_scan(context, op, kind, input, output);
}

gpuprim_status_t shim_sort(gpuprim_context_t context, gpuprim_buffer_t keys_in,
                           gpuprim_buffer_t values_in, gpuprim_buffer_t keys_out,
                           gpuprim_buffer_t values_out, int order) {
    return gpuprim_sort(context, keys_in, values_in, keys_out, values_out, order);
}

gpuprim_status_t shim_segmented_reduce(gpuprim_context_t context, int op, const gpuprim_segments_t *segments,
                                       gpuprim_buffer_t input, gpuprim_buffer_t output) {
    return gpuprim_segmented_reduce(context, op, segments, input, output);
}

gpuprim_status_t shim_segmented_scan(gpuprim_context_t context, int op, int kind, const gpuprim_segments_t *segments,
                                     gpuprim_buffer_t input, gpuprim_buffer_t output) {
    return gpuprim_segmented_scan(context, op, kind, segments, input, output);
}

gpuprim_status_t shim_topk(gpuprim_context_t context, gpuprim_buffer_t keys_in, uint64_t k, int order,
                           gpuprim_buffer_t keys_out, gpuprim_buffer_t indices) {
    return gpuprim_topk(context, keys_in, k, order, keys_out, indices);
}

gpuprim_status_t shim_segmented_topk(gpuprim_context_t context, const gpuprim_segments_t *segments,
                                     gpuprim_buffer_t keys_in, uint64_t k, int order, gpuprim_buffer_t keys_out,
                                     gpuprim_buffer_t indices) {
    return gpuprim_segmented_topk(context, segments, keys_in, k, order, keys_out, indices);
}

gpuprim_status_t shim_attach_communicator(gpuprim_context_t context, int kind, void *communicator) {
    return gpuprim_context_attach_communicator(context, kind, communicator);
}

gpuprim_status_t shim_distributed_reduce(gpuprim_context_t context, int op, gpuprim_buffer_t input, void *result) {
    return gpuprim_distributed_reduce(context, op, input, result);
}

gpuprim_status_t shim_distributed_scan(gpuprim_context_t context, int op, int kind, gpuprim_buffer_t input,
                                       gpuprim_buffer_t output) {
    return gpuprim_distributed_scan(context, op, kind, input, output);
}

gpuprim_status_t shim_distributed_topk(gpuprim_context_t context, gpuprim_buffer_t keys_in, uint64_t k, int order,
                                       gpuprim_buffer_t keys_out, gpuprim_buffer_t indices) {
    return gpuprim_distributed_topk(context, keys_in, k, order, keys_out, indices);
}

gpuprim_status_t shim_context_set_offsets_check(gpuprim_context_t context, int mode) {
    return gpuprim_context_set_offsets_check(context, mode);
}

const char *shim_get_error_string(int status) { return gpuprim_get_error_string(status); }

size_t shim_dtype_size(int dtype) { return gpuprim_dtype_size(dtype); }
