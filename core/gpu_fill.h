#pragma once
// GPU fill: how much of the GPU a schedule keeps busy, measurable without a
// GPU (issue 27). For each stage the loop nest computes outside registers,
// the threads it launches (blocks x threads per block, as the search
// featurized them) against the threads the GPU can hold at once (SMs x
// resident threads per SM), weighted by the stage's share of the pipeline's
// instructions. A schedule that leaves the whole GPU to one thread for most
// of its work (a serial reduction to one value) has a fill near 0; one whose
// every kernel launches a full wave or more has 1.
//
// Inlined Funcs have no launch of their own: their instructions run in their
// consumers' threads, and they are left out of both the shares and the fill.

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/function_dag.h"
#include "core/gpu_profile.h"
#include "costmodel/cost_model.h"

namespace gpusched {

struct StageFill {
    std::string stage;        // "f" or "f.update(0)"
    double threads = 0;       // launched: blocks x threads per block
    double fill = 0;          // min(1, threads / capacity)
    double work_share = 0;    // of the non-inlined stages' instructions, in [0, 1]
};

struct GpuFill {
    double capacity_threads = 0;  // SMs x resident threads per SM
    double weighted = 1;          // sum over stages of work_share x fill
    // The lowest fill among stages with at least kSignificantShare of the
    // work (1 when there is none), and which stage that is.
    double least = 1;
    std::string least_stage;
    std::vector<StageFill> stages;  // dense stage order

    static constexpr double kSignificantShare = 0.01;
};

// The fill of a complete state's featurization (SearchResult::features).
GpuFill gpu_fill(const FunctionDAG &dag, const StateFeatures &features, const GpuProfile &gpu);

// {"capacity_threads", "weighted", "least", "least_stage", "stages": [...]}:
// the decision record's "gpu_fill".
nlohmann::json gpu_fill_to_json(const GpuFill &fill);

} // namespace gpusched
