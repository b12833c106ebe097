// SPDX-License-Identifier: Apache-2.0
#include "library.h"

#include <dlfcn.h>

#include <stdexcept>

namespace gpuprim_ext {
namespace {

Library loaded;
void *handle = nullptr;

template <class F> bool find(void *lib, const char *name, F &field) {
    field = reinterpret_cast<F>(dlsym(lib, name));
    return field != nullptr;
}

}  // namespace

const Library &library() { return loaded; }

void load_library(const std::string &path) {
    if (handle) {
        if (path == loaded.path) return;
        throw std::runtime_error("gpuprim: libgpuprim is already loaded from " + loaded.path +
                                 "; a process loads one library");
    }
    void *lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        throw std::runtime_error("gpuprim: cannot load libgpuprim from " + path + ": " +
                                 (why ? why : "dlopen failed"));
    }
    Library table;
#define GPUPRIM_EXT_REQUIRE(name)                                                                      \
    if (!find(lib, "gpuprim_" #name, table.name)) {                                                    \
        dlclose(lib);                                                                                  \
        throw std::runtime_error("gpuprim: " + path + " has no gpuprim_" #name                        \
                                 ": it is not libgpuprim, or one older than this package");            \
    }
#define GPUPRIM_EXT_SKIP(name)
    GPUPRIM_EXT_VALUE_CALLS(GPUPRIM_EXT_REQUIRE, GPUPRIM_EXT_SKIP)
    GPUPRIM_EXT_WRITTEN_CALLS(GPUPRIM_EXT_REQUIRE, GPUPRIM_EXT_SKIP)
#undef GPUPRIM_EXT_REQUIRE
    bool all = true;
#define GPUPRIM_EXT_OPTIONAL(name) all = find(lib, "gpuprim_" #name, table.name) && all;
    GPUPRIM_EXT_VALUE_CALLS(GPUPRIM_EXT_SKIP, GPUPRIM_EXT_OPTIONAL)
    GPUPRIM_EXT_WRITTEN_CALLS(GPUPRIM_EXT_SKIP, GPUPRIM_EXT_OPTIONAL)
#undef GPUPRIM_EXT_OPTIONAL
    if (!all) {  // all or none
#define GPUPRIM_EXT_CLEAR(name) table.name = nullptr;
        GPUPRIM_EXT_VALUE_CALLS(GPUPRIM_EXT_SKIP, GPUPRIM_EXT_CLEAR)
        GPUPRIM_EXT_WRITTEN_CALLS(GPUPRIM_EXT_SKIP, GPUPRIM_EXT_CLEAR)
#undef GPUPRIM_EXT_CLEAR
    }
#undef GPUPRIM_EXT_SKIP
    table.has_distributed = all;
    table.path = path;
    loaded = table;
    handle = lib;
}

}  // namespace gpuprim_ext
