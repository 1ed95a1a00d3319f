#pragma once
// The GPU kernels of a lowered pipeline: how each will be launched (threads
// and shared memory per block) and the assertions left inside it.
//
// Read from the statement Halide's lowering hands its GPU offload (the last
// custom lowering pass runs on exactly that statement), the way the offload
// reads it (OffloadGPULoops.cpp, ExtractBounds; the same in Halide 14, 19
// and 21): each outermost GPU loop is a kernel; its threads per block in x,
// y, z are the extents of the loops whose names end in thread_id_x/y/z (after
// the thread loops were fused, one per dimension), its shared memory the sum
// of its GPUShared allocations. The launch call the offload then writes
// passes exactly those expressions, which here are written with the
// enclosing lets substituted, so a constant shows as one.

#include <optional>
#include <string>
#include <vector>

#include <Halide.h>

#include "core/kernel_assertions.h"

namespace gpusched {

// One kernel launch, as Halide will make it.
struct KernelLaunch {
    std::string kernel;                      // the entry name
    std::optional<int64_t> threads[3];       // x, y, z; nullopt: not a constant
    std::optional<int64_t> shared_mem_bytes; // nullopt: not a constant
    std::string threads_expr[3];             // as lowered, for messages
    std::string shared_mem_expr;
};

struct LoweredKernels {
    std::vector<KernelLaunch> launches;      // one per kernel, in program order
    std::vector<KernelAssertion> assertions; // every assertion inside a GPU loop
};

// The kernels of a statement lowered up to the GPU offload.
LoweredKernels lowered_kernels(const Halide::Internal::Stmt &s);

// Every kernel launch in a compiled module's host code (the halide_*_run
// calls the offload wrote, with the enclosing lets substituted): what
// lowered_kernels reads before the offload, read after it.
std::vector<KernelLaunch> kernel_launches(const Halide::Module &module);

} // namespace gpusched
