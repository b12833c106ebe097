// SPDX-License-Identifier: Apache-2.0
// The backend calls every backend makes the same way, listed once.
//
// Each is a primitive whose backend method only hands its arguments on: the
// CPU backend calls cpu::<name>(parallel, arguments) unless a workspace
// query is measuring (these calls take no CPU workspace); the CUDA backend
// calls cuda::<name>(env, arguments) on the context's device (its driver
// reserves its workspace and, while measuring, returns before it launches).
// core/backend.h declares each as a Backend method; cpu/cpu_backend.cpp and
// cuda/cuda_backend.cpp define them from this list; cpu/plain_calls.h and
// cuda_backend.cpp declare the two sides' functions from it too, so a new
// primitive of this kind adds its line here and touches no backend file.
//
// X(name, (parameters), (arguments)): the arguments name the parameters.
#pragma once

// Strips the parentheses from a parameter or argument list.
#define GPUPRIM_UNPARENTHESIZED(...) __VA_ARGS__

#define GPUPRIM_PLAIN_BACKEND_CALLS(X)                                                                    \
    /* For each query its lower or upper bound in the sorted keys (SearchRequest);                   */ \
    /* stream-ordered on CUDA.                                                                        */ \
    X(searchsorted, (const SearchRequest &request), (request))                                            \
    /* Counts of the input's elements in bins (HistogramRequest); stream-ordered on CUDA.             */ \
    X(histogram, (const HistogramRequest &request), (request))                                            \
    /* output[0] = input[0], output[i] = input[i] - input[i - 1] (core/ops.h DifferenceOp: integers   */ \
    /* wrap, f16/bf16 in f32 rounded once) for count >= 1 elements; output is input (in place) or     */ \
    /* lies apart from it.                                                                            */ \
    X(adjacent_difference, (gpuprim_dtype_t dtype, const void *input, void *output, uint64_t count),      \
      (dtype, input, output, count))
