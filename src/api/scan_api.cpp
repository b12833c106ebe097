// SPDX-License-Identifier: Apache-2.0
// The scan entry point.
#include "api/requests.h"
#include "api/validate.h"
#include "core/context.h"

#include <gpuprim/gpuprim.h>

using gpuprim::Buffer;
using gpuprim::Context;
using namespace gpuprim::api;  // guarded() and the argument rules

extern "C" {

gpuprim_status_t gpuprim_scan(gpuprim_context_t context, gpuprim_op_t op, gpuprim_scan_kind_t kind,
                              gpuprim_buffer_t input, gpuprim_buffer_t output) {
    return guarded(__func__, context, [&](Context &ctx) {
        const ScanOperands operands = scan_operands(ctx, op, kind, input, output);
        const Buffer &in = *operands.in;
        if (in.count == 0) return;
        ctx.backend->scan(op, kind, in.dtype, in.data, operands.out->data, in.count, nullptr);
    });
}

}  // extern "C"
