// SPDX-License-Identifier: Apache-2.0
// The shared libgpuprim as the extension sees it: a table of its entry
// points, opened with dlopen from the path the package chose (the library in
// the package, or GPUPRIM_LIBRARY). Each field's type is decltype of the
// declaration in gpuprim.h, so a changed signature fails to compile here
// instead of being mirrored by hand.
#pragma once

#define GPUPRIM_EXPERIMENTAL_API
#include <gpuprim/gpuprim.h>

#include <string>

namespace gpuprim_ext {

// Every entry point the package calls, each named once, as
// LIST(CORE, DISTRIBUTED): CORE entries must all be in the library or it is
// refused at load; the DISTRIBUTED ones are optional as a group (a library
// from before them still loads; has_distributed says which).
//
// Calls whose C signature is all values (integers, enums, handles, host
// addresses) and whose result is the status alone: the module gets each as
// gpuprim_<name> with the same arguments from this line alone (Raw<> in
// raw_calls.cpp), so such a new C call is one line here.
#define GPUPRIM_EXT_VALUE_CALLS(CORE, DISTRIBUTED)                                                      \
    CORE(context_destroy) CORE(context_synchronize) CORE(context_release_workspace)                    \
    CORE(context_reserve_workspace) CORE(context_set_offsets_check) CORE(context_check_deferred)        \
    CORE(context_begin_workspace_query) CORE(buffer_destroy) CORE(buffer_upload) CORE(buffer_download) \
    CORE(reduce) CORE(reduce_to_buffer) CORE(dot) CORE(dot_to_buffer) CORE(scan) CORE(sort) CORE(topk)  \
    CORE(adjacent_difference)                                                                           \
    DISTRIBUTED(context_attach_communicator) DISTRIBUTED(context_detach_communicator)                  \
    DISTRIBUTED(distributed_reduce) DISTRIBUTED(distributed_scan) DISTRIBUTED(distributed_topk)        \
    CORE(searchsorted) CORE(searchsorted_rows) CORE(histogram_even) CORE(histogram_range)             \
    CORE(bincount) CORE(histogram_even_rows) CORE(histogram_range_rows) CORE(bincount_rows) CORE(merge)

// The others: their Python functions are written out in raw_calls.cpp (a
// struct argument, values given back), or raw_calls.cpp uses them itself
// (the *_init calls).
#define GPUPRIM_EXT_WRITTEN_CALLS(CORE, DISTRIBUTED)                                                    \
    CORE(get_error_string) CORE(version_string) CORE(context_options_init) CORE(context_create)         \
    CORE(context_get_backend) CORE(context_get_device) CORE(context_last_error) CORE(buffer_create)     \
    CORE(buffer_wrap) CORE(buffer_get_info) CORE(argreduce) CORE(sort_options_init)                    \
    CORE(sort_with_options) CORE(argsort) CORE(segments_init_rows) CORE(segments_init_offsets)         \
    CORE(segmented_sort) CORE(segmented_argsort) CORE(segmented_reduce) CORE(segmented_scan)           \
    CORE(segmented_topk) CORE(select) CORE(partition) CORE(unique) CORE(run_length_encode)             \
    CORE(reduce_by_key) CORE(group_by) CORE(context_get_workspace_size) CORE(context_get_stream)        \
    CORE(context_end_workspace_query) CORE(context_reserve_workspace_sizes)                           \
    DISTRIBUTED(context_get_rank) DISTRIBUTED(distributed_sort) DISTRIBUTED(distributed_argsort)

struct Library {
#define GPUPRIM_EXT_FIELD(name) decltype(&::gpuprim_##name) name = nullptr;
    GPUPRIM_EXT_VALUE_CALLS(GPUPRIM_EXT_FIELD, GPUPRIM_EXT_FIELD)
    GPUPRIM_EXT_WRITTEN_CALLS(GPUPRIM_EXT_FIELD, GPUPRIM_EXT_FIELD)
#undef GPUPRIM_EXT_FIELD
    bool has_distributed = false;
    std::string path;
};

// The table loaded by load_library(); every call reads it. Set once, at the
// package's import, before any call (under the GIL).
const Library &library();

// Opens the library at path (RTLD_NOW | RTLD_LOCAL, as ctypes.CDLL did) and
// fills the table. Throws std::runtime_error naming what failed; a second
// call with another path is refused (one library per process).
void load_library(const std::string &path);

}  // namespace gpuprim_ext
