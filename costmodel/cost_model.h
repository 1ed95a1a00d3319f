#pragma once
// The seam between the search and whatever ranks its states. The search core
// (core/) featurizes a candidate loop nest into one ScheduleFeatures row per
// scheduled stage and asks a CostModel for the predicted runtime; it knows
// nothing else about the model. Implementations live in costmodel/: the
// network of Anderson et al. 2021 sec. 5.2 with the cost formula of appendix
// B, and an analytic GPU model used to make honest default weights.
//
// Invariants: set_pipeline() is called once per pipeline before evaluate();
// stage ids index the vector given to set_pipeline(); returned costs are
// finite and > 0, in the model's unit (predicted milliseconds).

#include <memory>
#include <vector>

#include "costmodel/pipeline_features.h"
#include "costmodel/row_cost_cache.h"
#include "costmodel/schedule_features.h"

namespace gpusched {

// One candidate state's features: a row per stage scheduled so far.
struct StateFeatures {
    std::vector<int> stage_ids;             // index into the pipeline's stages
    std::vector<ScheduleFeatures> schedule; // same length as stage_ids
    // Empty, or RowCostCache::prefix(stage_ids[i], schedule[i]) for every
    // row: the search's featurization keeps them with its memo, and the
    // network model then hashes only each row's working_set_at_root. Whoever
    // changes a row's other features after featurization must clear this.
    std::vector<RowCostCache::Prefix> row_hashes;
};

class CostModel {
public:
    virtual ~CostModel() = default;

    // The per-stage algorithm features of the pipeline being scheduled.
    virtual void set_pipeline(std::vector<PipelineFeatures> stage_features) = 0;

    // Predicted cost of each state (batched: implementations evaluate all
    // states' stages together). costs is resized to states.size(). If
    // per_stage is non-null it receives, for each state, the cost of each of
    // its rows in stage_ids order.
    virtual void evaluate(const std::vector<const StateFeatures *> &states, std::vector<double> &costs,
                          std::vector<std::vector<double>> *per_stage = nullptr) = 0;
};

} // namespace gpusched
