#pragma once
// An analytic GPU cost model: predicted milliseconds from a stage's schedule
// features, its pipeline features and a GpuProfile, with no learned part.
// It is the teacher the network's default weights are fitted to before
// measured samples exist (costmodel/tools/fit_default_weights.cpp), and a
// model the search can run on its own (config "cost_model": "analytic").
//
// Per stage it models (docs/costmodel.md has the derivation and sources):
//   - compute: warp instructions issued (points x instructions per point
//     from the op histogram, divided by warp-lane utilization) at the GPU's
//     FP32 issue rate, slowed when too few warps are resident to hide
//     arithmetic latency;
//   - global memory: transactions x 32-byte sectors through L2, the part
//     that misses L2 from DRAM (footprint scaled by how far it overflows L2),
//     slowed when too few warps are resident to cover memory latency;
//   - shared memory: wavefronts per SM per clock;
//   - a soft roofline: (compute^4 + global^4 + shared^4)^(1/4), above the
//     max and strictly increasing in each part (overlap is never perfect);
//   - tail effects: partial waves of blocks, ceil(blocks / wave) x wave /
//     blocks, where a wave is sm_count x resident blocks per SM;
//   - atomic contention: updates of one stored point spread over threads
//     wait for each other at its line (costmodel/atomic_contention.h);
//   - launch overhead per kernel, barrier cost per block-level production,
//     and register spills when the per-thread working set exceeds the
//     register file share.
//
// Invariants: stage costs are finite and > 0 for features obeying
// ScheduleFeatures' invariant; costs do not decrease when traffic, points or
// launches increase, or when occupancy or lane utilization decreases with
// everything else fixed (test/costmodel checks these).

#include <vector>

#include "common/gpu_profile.h"
#include "costmodel/atomic_contention.h"
#include "costmodel/cost_model.h"

namespace gpusched {

struct AnalyticStageCost {
    double compute_ms = 0;
    double global_memory_ms = 0;
    double shared_memory_ms = 0;
    double tail_factor = 1;       // >= 1
    double serial_latency_ms = 0; // waves x one thread's chain of points
    // Atomic stores waiting for each other at their lines: the updates of an
    // output point spread over threads (costmodel/atomic_contention.h).
    double atomic_contention_ms = 0;
    double kernel_ms = 0; // soft max of (soft roofline x tail factor, serial latency, contention)
    double launch_ms = 0;
    double barrier_ms = 0;
    double spill_ms = 0;
    double total_ms = 0;
};

class AnalyticGpuCostModel : public CostModel {
public:
    // Throws std::runtime_error naming the field if the profile lacks a
    // number the model needs (sm_count, bandwidth, FP32 rate, ...).
    explicit AnalyticGpuCostModel(GpuProfile profile);

    void set_pipeline(std::vector<PipelineFeatures> stage_features) override;
    void evaluate(const std::vector<const StateFeatures *> &states, std::vector<double> &costs,
                  std::vector<std::vector<double>> *per_stage = nullptr) override;

    // One stage's cost and its parts. stage_id indexes set_pipeline()'s vector.
    AnalyticStageCost stage_cost(const ScheduleFeatures &f, int stage_id) const;

    const GpuProfile &profile() const { return profile_; }

private:
    GpuProfile profile_;
    std::vector<double> instructions_per_point_; // per stage, from the op histogram
    std::vector<AtomicStore> atomic_stores_;     // per stage, from its store's type
};

// Instructions one point of a stage costs, from its op histogram (exposed for
// tests and docs). At least 1 (the store).
double instructions_per_point(const PipelineFeatures &p);

} // namespace gpusched
