#pragma once
// The learned cost model of Anderson et al. 2021 sec. 5.2 behind the
// CostModel seam: the network (network_weights.h) predicts 32 coefficients
// per stage, the appendix B formula (cost_formula.h) turns them into a stage
// cost, and a state's cost is the sum over its stages.
//
// evaluate() gathers the rows of all states in the batch and runs the ones
// not already in its row cache (row_cost_cache.h) through one
// NetworkEvaluator pass.
//
// Invariants: returned costs are finite and > 0. Coefficients are softplus
// outputs (> 0) and formula terms are >= 0, so a state's cost is > 0 unless
// all its terms are 0 (an empty state); such a sum is floored at
// kMinPredictedCostMs. Per-stage costs are reported unfloored.

#include <memory>
#include <string>
#include <vector>

#include "common/gpu_profile.h"
#include "costmodel/cost_model.h"
#include "costmodel/network_evaluator.h"
#include "costmodel/row_cost_cache.h"
#include "costmodel/weights_file.h"

namespace gpusched {

inline constexpr double kMinPredictedCostMs = 1e-9;

class NetworkCostModel : public CostModel {
public:
    NetworkCostModel(const WeightsFile &weights, const GpuProfile &profile);

    void set_pipeline(std::vector<PipelineFeatures> stage_features) override;
    void evaluate(const std::vector<const StateFeatures *> &states, std::vector<double> &costs,
                  std::vector<std::vector<double>> *per_stage = nullptr) override;

    const std::string &provenance() const { return provenance_; }
    const NetworkEvaluator &evaluator() const { return evaluator_; }
    const RowCostCache &row_cache() const { return row_cache_; }

private:
    NetworkEvaluator evaluator_;
    std::string provenance_;
    // Scratch reused across calls so a batch allocates nothing once warm.
    std::vector<int> ids_;
    std::vector<const ScheduleFeatures *> rows_;
    std::vector<const RowCostCache::Prefix *>
        prefixes_; // per row: its StateFeatures::row_hashes entry, or null
    std::vector<double> stage_costs_;
    RowCostCache row_cache_;
    std::vector<RowCostCache::Key> keys_;
    std::vector<std::size_t> misses_; // indices into rows_ not in the cache
    std::vector<int> miss_ids_;
    std::vector<const ScheduleFeatures *> miss_rows_;
    std::vector<double> miss_costs_;
};

} // namespace gpusched
