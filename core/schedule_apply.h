#pragma once
// Turns decisions into a Halide schedule, two ways from one description so
// they cannot drift apart: applied to the pipeline's Funcs, and emitted as
// the C++ body of Halide's `-e schedule` file (apply_schedule_NAME).
//
// The lowering tweaks of sec. 4.7 are applied here: serial loops of total
// extent < 16 are unrolled, and a root Func whose threads compute several points
// gets its small, affine-footprint producers (inlined ones included) staged
// per thread through producer.in(consumer).compute_at(consumer, thread loop). Block-level Funcs are stored in
// MemoryType::GPUShared; thread-level Funcs and staged producers in
// MemoryType::Register: thread-private memory that LLVM/ptxas keep in
// registers once the loops around it are unrolled. Register, not Auto:
// under Auto, Halide 14 moves a per-thread allocation whose size it cannot
// prove constant to a global heap that is too small when the Func's thread
// loops are fewer than the kernel's block (schedule_apply.cpp says more).
// Register makes Halide bound the size by a constant, or refuse to compile.
//
// Invariant: the emitted source, applied to a fresh instance of the same
// generator, gives the same schedule as apply_schedule() did.

#include <map>
#include <string>
#include <vector>

#include <Halide.h>

#include "core/function_dag.h"
#include "core/reduction_split.h"
#include "core/schedule_decisions.h"

namespace gpusched {

// The C++ identifier a schedule source gives a Func, from its stable name
// (core/stable_names.h).
std::string func_handle(const std::string &stable_name);

// Where apply_schedule_NAME finds each Func: pipeline.get_func(i), by name.
// Taken before any reduction split, since the schedule is applied to a
// fresh, unsplit instance of the pipeline.
std::map<std::string, int> get_func_indices(Halide::Pipeline pipeline);

// Applies d to the Funcs of dag (if apply) and returns the C++ source that
// does the same. The source first performs `splits` (core/reduction_split.h)
// on the Funcs it finds through get_func_index; dag must already be the split
// pipeline (apply does not split, the caller did that before building dag).
std::string schedule_pipeline(const FunctionDAG &dag, const Decisions &d,
                              const std::vector<ReductionSplit> &splits,
                              const std::map<std::string, int> &get_func_index, bool apply);
// The same for a pipeline without splits.
std::string schedule_pipeline(const FunctionDAG &dag, const Decisions &d, Halide::Pipeline pipeline,
                              bool apply);

} // namespace gpusched
