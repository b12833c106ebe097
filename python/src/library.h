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

// Every entry point the package calls. Core: all present, or the library is
// refused at load.
#define GPUPRIM_EXT_CORE_ENTRIES(X)                                                                     \
    X(get_error_string) X(version_string) X(context_options_init) X(context_create)                   \
    X(context_destroy) X(context_get_backend) X(context_get_device) X(context_last_error)              \
    X(context_synchronize) X(buffer_create) X(buffer_wrap) X(buffer_destroy) X(buffer_upload)         \
    X(buffer_download) X(buffer_get_info) X(reduce) X(reduce_to_buffer) X(argreduce) X(dot) X(dot_to_buffer) X(scan)     \
    X(sort) X(sort_options_init) X(sort_with_options) X(argsort) X(segments_init_rows)                \
    X(segments_init_offsets) X(segmented_sort) X(segmented_argsort) X(segmented_reduce)              \
    X(segmented_scan) X(topk) X(segmented_topk) X(searchsorted) X(searchsorted_rows) X(histogram_even)  \
    X(histogram_range) X(bincount) X(histogram_even_rows) X(histogram_range_rows) X(bincount_rows) X(merge)      \
    X(select) X(partition) X(unique) X(run_length_encode) X(reduce_by_key) X(group_by)                \
    X(context_get_workspace_size) X(context_release_workspace) X(context_reserve_workspace)            \
    X(context_get_stream) X(context_set_offsets_check) X(context_check_deferred)                       \
    X(context_begin_workspace_query) X(context_end_workspace_query) X(context_reserve_workspace_sizes)

// The distributed calls: optional as a group (a library from before them
// still loads; has_distributed says which).
#define GPUPRIM_EXT_DISTRIBUTED_ENTRIES(X)                                                              \
    X(context_attach_communicator) X(context_detach_communicator) X(context_get_rank)                  \
    X(distributed_reduce) X(distributed_scan) X(distributed_sort) X(distributed_argsort)              \
    X(distributed_topk)

struct Library {
#define GPUPRIM_EXT_FIELD(name) decltype(&::gpuprim_##name) name = nullptr;
    GPUPRIM_EXT_CORE_ENTRIES(GPUPRIM_EXT_FIELD)
    GPUPRIM_EXT_DISTRIBUTED_ENTRIES(GPUPRIM_EXT_FIELD)
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
