// SPDX-License-Identifier: Apache-2.0
// The CPU backend's searchsorted (gpuprim_searchsorted), search.cpp.
#pragma once

#include "core/backend.h"
#include "cpu/parallel.h"

namespace gpuprim {
namespace cpu {

// For each query of request, its lower or upper bound among the sorted keys
// (core/backend.h SearchRequest). Pieces of kSearchPiece queries: a piece
// whose queries are in order walks the keys from one query's bound to the
// next (galloping), any other piece binary-searches each query.
void searchsorted(Parallel &parallel, const SearchRequest &request);

}  // namespace cpu
}  // namespace gpuprim
