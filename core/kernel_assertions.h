#pragma once
// Assertions Halide leaves inside GPU kernels, and whether they hold.
//
// Device code generation drops every assertion inside a kernel with only a
// warning ("Ignoring assertion inside OpenCL kernel"), so what it checks goes
// unchecked on the GPU. The search's bound_extent is where they come from: a
// Func computed per block (or per thread) and sized by the largest region
// the search found for any tile position gets a check that the bound covers
// what the tile reads. Where the search's region is too small at some tile
// positions, the kernel reads values it never computed there (fuzz seed 47:
// one column short for blocks at an odd start, the last column of the output
// off by one step); where Halide's bounds are looser than exact (chains of
// rounding divisions), it cannot prove a bound that does hold and keeps the
// check. So each check is evaluated at concrete sizes: the pipeline's
// estimates, every output extent up to kExtentSweep points larger (every
// residue of a tile's start), and every block and thread of each.

#include <string>
#include <vector>

#include <Halide.h>

#include "core/function_dag.h"

namespace gpusched {

// A GPU loop around an assertion: its variable and bounds, as lowered.
struct GpuLoop {
    std::string name;
    Halide::Expr min, extent;
};

struct KernelAssertion {
    std::string kernel;         // the Func whose GPU loops contain it
    std::string bound;          // "func.var" when it checks a bound_extent, else empty
    Halide::Expr condition;     // with the enclosing lets substituted
    std::vector<GpuLoop> loops; // the GPU loops around it, outermost first
};

// Output extents tried beyond the estimates (one tile start per residue).
constexpr int64_t kExtentSweep = 32;

// Where the assertion fails: empty if it holds at every size and GPU loop
// position tried, else one line naming the kernel, the bound, the output
// extents and the loop position. The output buffers' extents of `shapes`
// are swept.
std::string first_failure(const KernelAssertion &a, const EstimatedShapes &shapes);

} // namespace gpusched
