#pragma once
// The last check between the search and a GPU: every kernel of the lowered
// pipeline, against the GPU profile's limits.
//
// The search sizes blocks, threads and shared memory from its own footprint
// model. Where that model and Halide's bounds inference disagree (a scan
// whose reduction domain reaches past the consumer's tile; per-block regions
// that change extent with the block's position through rounding divisions),
// the kernel compiles and ptxas accepts it, but the launch asks for more
// threads or shared memory than a block may have, and the GPU refuses it at
// run time (POCL: CL_INVALID_WORK_GROUP_SIZE). A launch is legal when its
// thread extents are constants within the per-dimension and per-block limits
// and its shared memory is a constant within the per-block limit (Halide
// sizes both at run time from expressions otherwise, which the search must
// never leave to chance), and every assertion left inside a kernel holds at
// the estimated shapes (core/kernel_assertions.h).
//
// The plugin checks inside the lowering that compiles what it scheduled: it
// leaves a custom lowering pass on the pipeline, which reads the kernels
// from the statement Halide's GPU offload is about to take
// (core/lowered_kernels.h) and stops the compile with the violations. A
// generator lowers its pipeline right after the autoscheduler returns (also
// with `-e schedule` only, in Halide 14, 19 and 21), so every schedule the
// plugin hands over is checked, in the compile that would launch it, at the
// cost of a walk over the statement instead of a lowering of its own.

#include <string>
#include <vector>

#include <Halide.h>

#include "common/gpu_profile.h"
#include "core/function_dag.h"
#include "core/lowered_kernels.h"

namespace gpusched {

// One line per limit a launch breaks, naming the kernel, the limit and what
// it asks for; empty if it breaks none.
std::vector<std::string> launch_violations(const KernelLaunch &launch, const GpuProfile &gpu);

// Every launch limit the kernels break and every assertion inside them that
// fails at `shapes`, joined by "; "; empty if none.
std::string kernel_violations(const LoweredKernels &kernels, const GpuProfile &gpu,
                              const EstimatedShapes &shapes);

// Leaves the check on the pipeline: each later lowering of it (for any
// target) reads its kernels before the GPU offload and fails with
// "gpusched: launch check failed (a search bug): ..." where
// kernel_violations finds any. Installed once per pipeline; calling it again
// (the pipeline scheduled again) replaces the profile and shapes.
void check_launches_when_lowered(const Halide::Pipeline &pipeline, const GpuProfile &gpu,
                                 const EstimatedShapes &shapes);
// Takes it off again: later lowerings are not checked.
void no_launch_check(const Halide::Pipeline &pipeline);

// Lowers the pipeline (as scheduled now) for the target up to the GPU
// offload, in this process, and returns its kernels; the lowering stops
// there (no device code is generated). A lowering error is thrown. The pass
// stays on the pipeline, doing nothing in its later lowerings unless
// check_launches_when_lowered arms it.
LoweredKernels lower_kernels(const Halide::Pipeline &pipeline, const Halide::Target &target);

// kernel_violations of lower_kernels.
std::string check_kernel_launches(const Halide::Pipeline &pipeline, const Halide::Target &target,
                                  const GpuProfile &gpu, const EstimatedShapes &shapes);

} // namespace gpusched
