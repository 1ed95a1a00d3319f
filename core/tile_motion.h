#pragma once
// How a Func's region inside a kernel changes as the kernel's tile moves.
// Halide sizes a Func computed below root (Block or Thread level)
// symbolically in the position of the tile, so the search space
// (enumerate_options, core/search_space.h) offers such a placement only
// where that size is the same for every tile.

#include <vector>

#include "core/function_dag.h"
#include "core/loop_nest.h"

namespace gpusched {

// Whether a stage of c reads n directly at a coordinate that only its RVars
// move: that read stays put as c's tile moves.
bool reads_at_fixed_coordinate(const FunctionDAG &dag, int c, int n);

// Whether n's extents, computed inside a kernel in `nest`, stay the same as
// the tile moves one tile along each dimension: per block, the tile of the
// kernel root of `stages` (n's consumer stages); per thread (per_thread),
// the thread tile of `stages` (its host's stage) in its block.
bool extent_fixed_as_tile_moves(const FunctionDAG &dag, const LoopNest &nest, int n,
                                const std::vector<int> &stages, bool per_thread);

} // namespace gpusched
