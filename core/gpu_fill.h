#pragma once
// GPU fill: how much of the GPU a schedule keeps busy, measurable without a
// GPU (issue 27). For each kernel, the threads it launches (blocks x threads
// per block: the widest stage of its block sets the launch) against the
// threads the GPU can hold at once (SMs x resident threads per SM), weighted
// by the kernel's share of the pipeline's instructions. A schedule that
// leaves the whole GPU to one thread for most of its work (a serial
// reduction to one value) has a fill near 0; one whose every kernel launches
// a full wave or more has 1.
//
// Kernels, not stages: a split reduction whose partials are computed in
// shared memory inside the kernel that combines them launches as many
// threads as partials, even though the combining loop itself runs in one
// thread per block.
//
// Inlined Funcs have no launch of their own: their instructions run in their
// consumers' threads, and they are left out of both the shares and the fill.

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/gpu_profile.h"
#include "core/function_dag.h"
#include "core/schedule_decisions.h"
#include "costmodel/cost_model.h"

namespace gpusched {

struct KernelFill {
    std::string kernel;              // its root stage: "f" or "f.update(0)"
    std::vector<std::string> stages; // the stages it computes, root first
    double threads = 0;              // launched: blocks x threads per block
    double fill = 0;                 // min(1, threads / capacity)
    double work_share = 0;           // of the non-inlined stages' instructions, in [0, 1]
};

struct GpuFill {
    double capacity_threads = 0; // SMs x resident threads per SM
    double weighted = 1;         // sum over kernels of work_share x fill
    // The lowest fill among kernels with at least kSignificantShare of the
    // work (1 when there is none), and which kernel that is.
    double least = 1;
    std::string least_kernel;
    std::vector<KernelFill> kernels; // in launch order

    static constexpr double kSignificantShare = 0.01;
};

// The fill of a complete state: its decisions (for the kernels) and their
// featurization (SearchResult::features, for each stage's work).
GpuFill gpu_fill(const FunctionDAG &dag, const Decisions &decisions, const StateFeatures &features,
                 const GpuProfile &gpu);

// {"capacity_threads", "weighted", "least", "least_kernel", "kernels": [...]}:
// the decision record's "gpu_fill".
nlohmann::json gpu_fill_to_json(const GpuFill &fill);

} // namespace gpusched
