#pragma once
// Per-stage algorithm analysis: walks one stage's Halide IR (its values, and
// for updates its store coordinates) to fill the schedule-independent
// PipelineFeatures histogram (costmodel/pipeline_features.h), the call sites
// with their index jacobians (used for coalescing and bank-conflict analysis),
// and the Strahler number of the computation.
//
// Invariant: the jacobians are exact for affine indices; for piecewise-affine
// ones (clamps of boundary conditions) they are the slope in the interior of
// the domain, where almost all points lie.

#include <functional>
#include <string>
#include <vector>

#include <Halide.h>

#include "core/function_dag.h"

namespace gpusched {

struct StageAnalysisInput {
    const Stage *stage = nullptr;
    std::vector<Halide::Expr> values;     // what the stage computes
    std::vector<Halide::Expr> store_args; // where it stores (the Func's args for pure stages)
    std::string self_name;                // the Func's own name
    const VarValues *params = nullptr;
    // Maps a called Func or image name to a ProducerRef (registering images).
    std::function<ProducerRef(const Halide::Internal::Call *)> resolve;
};

struct StageAnalysis {
    std::vector<Access> accesses;
    Jacobian store_jacobian;
    PipelineFeatures features;
    int strahler = 1;
};

StageAnalysis analyze_stage(const StageAnalysisInput &in);

// Jacobian of index expressions with respect to a stage's loops, at the
// first interior base point where every index has a value.
Jacobian index_jacobian(const std::vector<Halide::Expr> &args, const std::vector<LoopDim> &loops,
                        const VarValues &params);

// True if every argument steps with exactly its own pure loop (f(x, y) read
// as g(x + a, y + b)): inlining such a call never recomputes.
bool is_pointwise_access(const Access &a, const Stage &consumer);

ScalarTypeBucket type_bucket(const Halide::Type &t);

} // namespace gpusched
