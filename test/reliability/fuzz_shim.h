/* SPDX-License-Identifier: Apache-2.0 */
/* int-typed wrappers of the gpuprim calls that take enums; see fuzz_shim.c. */
#ifndef GPUPRIM_FUZZ_SHIM_H
#define GPUPRIM_FUZZ_SHIM_H

#include <gpuprim/gpuprim.h>

#ifdef __cplusplus
extern "C" {
#endif

gpuprim_status_t shim_buffer_create(gpuprim_context_t context, int dtype, uint64_t count,
                                    gpuprim_buffer_t *buffer);
gpuprim_status_t shim_buffer_wrap(gpuprim_context_t context, int dtype, void *data,
                                  uint64_t count, gpuprim_buffer_t *buffer);
gpuprim_status_t shim_reduce(gpuprim_context_t context, int op, gpuprim_buffer_t input,
                             void *result);
gpuprim_status_t shim_argreduce(gpuprim_context_t context, int op, gpuprim_buffer_t input, uint64_t *index);
gpuprim_status_t shim_merge(gpuprim_context_t context, gpuprim_buffer_t keys_a, gpuprim_buffer_t values_a,
                            gpuprim_buffer_t keys_b, gpuprim_buffer_t values_b, gpuprim_buffer_t keys_out,
                            gpuprim_buffer_t values_out, int order);
gpuprim_status_t shim_run_length_encode(gpuprim_context_t context, gpuprim_buffer_t input, int runs,
                                        gpuprim_buffer_t keys_out, gpuprim_buffer_t starts, gpuprim_buffer_t lengths,
                                        uint64_t *count, gpuprim_buffer_t count_out);
gpuprim_status_t shim_reduce_by_key(gpuprim_context_t context, gpuprim_buffer_t keys, gpuprim_buffer_t values, int op,
                                    gpuprim_buffer_t keys_out, gpuprim_buffer_t results, gpuprim_buffer_t lengths,
                                    uint64_t *count, gpuprim_buffer_t count_out);
gpuprim_status_t shim_group_by(gpuprim_context_t context, gpuprim_buffer_t keys, gpuprim_buffer_t values, int op,
                               gpuprim_buffer_t keys_out, gpuprim_buffer_t counts, gpuprim_buffer_t results,
                               gpuprim_buffer_t inverse, uint64_t *count, gpuprim_buffer_t count_out);
gpuprim_status_t shim_searchsorted_rows(gpuprim_context_t context, gpuprim_buffer_t sorted, gpuprim_buffer_t queries,
                                        uint64_t rows, int side, int order, gpuprim_buffer_t indices);
gpuprim_status_t shim_searchsorted(gpuprim_context_t context, gpuprim_buffer_t sorted, gpuprim_buffer_t queries, int side,
                                   int order, gpuprim_buffer_t indices);
gpuprim_status_t shim_reduce_to_buffer(gpuprim_context_t context, int op, gpuprim_buffer_t input,
                                       gpuprim_buffer_t result);
gpuprim_status_t shim_scan(gpuprim_context_t context, int op, int kind, gpuprim_buffer_t input,
                           gpuprim_buffer_t output);
gpuprim_status_t shim_sort(gpuprim_context_t context, gpuprim_buffer_t keys_in,
                           gpuprim_buffer_t values_in, gpuprim_buffer_t keys_out,
                           gpuprim_buffer_t values_out, int order);
gpuprim_status_t shim_segmented_reduce(gpuprim_context_t context, int op, const gpuprim_segments_t *segments,
                                       gpuprim_buffer_t input, gpuprim_buffer_t output);
gpuprim_status_t shim_segmented_scan(gpuprim_context_t context, int op, int kind, const gpuprim_segments_t *segments,
                                     gpuprim_buffer_t input, gpuprim_buffer_t output);
gpuprim_status_t shim_topk(gpuprim_context_t context, gpuprim_buffer_t keys_in, uint64_t k, int order,
                           gpuprim_buffer_t keys_out, gpuprim_buffer_t indices);
gpuprim_status_t shim_segmented_topk(gpuprim_context_t context, const gpuprim_segments_t *segments,
                                     gpuprim_buffer_t keys_in, uint64_t k, int order, gpuprim_buffer_t keys_out,
                                     gpuprim_buffer_t indices);
gpuprim_status_t shim_attach_communicator(gpuprim_context_t context, int kind, void *communicator);
gpuprim_status_t shim_distributed_reduce(gpuprim_context_t context, int op, gpuprim_buffer_t input, void *result);
gpuprim_status_t shim_distributed_scan(gpuprim_context_t context, int op, int kind, gpuprim_buffer_t input,
                                       gpuprim_buffer_t output);
gpuprim_status_t shim_distributed_topk(gpuprim_context_t context, gpuprim_buffer_t keys_in, uint64_t k, int order,
                                       gpuprim_buffer_t keys_out, gpuprim_buffer_t indices);
gpuprim_status_t shim_context_set_offsets_check(gpuprim_context_t context, int mode);
const char *shim_get_error_string(int status);
size_t shim_dtype_size(int dtype);

#ifdef __cplusplus
}
#endif

#endif
