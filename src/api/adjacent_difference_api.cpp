// SPDX-License-Identifier: Apache-2.0
// The adjacent-difference entry point (experimental): output[i] = input[i] -
// input[i - 1], output[0] = input[0].
#include "api/validate.h"
#include "core/context.h"

#include <gpuprim/gpuprim.h>

using gpuprim::Buffer;
using gpuprim::Context;
using namespace gpuprim::api;  // guarded() and the argument rules

extern "C" {

gpuprim_status_t gpuprim_adjacent_difference(gpuprim_context_t context, gpuprim_buffer_t input,
                                             gpuprim_buffer_t output) {
    return guarded(__func__, context, [&](Context &ctx) {
        Buffer &in = ctx.resolve(input, "input");
        Buffer &out = ctx.resolve(output, "output");
        require_output_for(out, "output", in, "input");  // same dtype and count; in place or apart
        if (in.count == 0) return;
        ctx.backend->adjacent_difference(in.dtype, in.data, out.data, in.count);
    });
}

}  // extern "C"
