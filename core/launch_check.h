#pragma once
// The last check between the search and a GPU: the kernel launches of the
// lowered pipeline, against the GPU profile's limits.
//
// The search sizes blocks, threads and shared memory from its own footprint
// model. Where that model and Halide's bounds inference disagree (a scan
// whose reduction domain reaches past the consumer's tile; per-block regions
// that change extent with the block's position through rounding divisions),
// the kernel compiles and ptxas accepts it, but the launch asks for more
// threads or shared memory than a block may have, and the GPU refuses it at
// run time (POCL: CL_INVALID_WORK_GROUP_SIZE). So the plugin lowers what it
// scheduled, as the generator will, and reads every launch from the host
// code: the arguments of each halide_cuda_run / halide_opencl_run call, with
// the enclosing lets substituted. A launch is legal when its thread extents
// are constants within the per-dimension and per-block limits and its shared
// memory is a constant within the per-block limit. Halide sizes both at run
// time from expressions otherwise, which the search must never leave to
// chance. The lowering runs in a forked child, so this process's Halide
// names (kernel names among them) stay exactly as the generator would make
// them from the emitted schedule.

#include <optional>
#include <string>
#include <vector>

#include <Halide.h>

#include "common/gpu_profile.h"
#include "core/function_dag.h"

namespace gpusched {

// One kernel launch in the host code, as Halide will make it.
struct KernelLaunch {
    std::string kernel;                      // the entry name
    std::optional<int64_t> threads[3];       // x, y, z; nullopt: not a constant
    std::optional<int64_t> shared_mem_bytes; // nullopt: not a constant
    std::string threads_expr[3];             // as lowered, for messages
    std::string shared_mem_expr;
};

// Every GPU kernel launch in the module's host code.
std::vector<KernelLaunch> kernel_launches(const Halide::Module &module);

// One line per limit a launch breaks, naming the kernel, the limit and what
// it asks for; empty if it breaks none.
std::vector<std::string> launch_violations(const KernelLaunch &launch, const GpuProfile &gpu);

// The target the check lowers for: a CUDA target's OpenCL twin (same host,
// OpenCL with doubles instead of CUDA), any other target itself. Lowering
// compiles every kernel for its device; for CUDA that is LLVM's PTX backend,
// most of a lowering's time (and the generator compiles the same kernels
// again right after), for OpenCL it is printing C. The launches come from
// the device-independent passes before that (thread loop fusion, shared
// memory extraction), so both lowerings launch every kernel with the same
// threads and shared memory (tested on the search space's shapes in
// test/search/test_launch_shapes.cpp). Where the OpenCL lowering fails,
// the check lowers for the target itself.
Halide::Target launch_check_target(const Halide::Target &target);

// Lowers the pipeline (as scheduled now) for the target, in a child process,
// and checks every launch, and every assertion left inside a kernel at the
// estimated shapes (core/kernel_assertions.h; FunctionDAG::estimated_shapes):
// empty if all are legal (or if lowering failed, which the generator
// reports itself), else the violations joined by "; ".
std::string check_kernel_launches(const Halide::Pipeline &pipeline, const Halide::Target &target,
                                  const GpuProfile &gpu, const EstimatedShapes &shapes);

} // namespace gpusched
