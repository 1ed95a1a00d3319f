#include "costmodel/network_cost_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gpusched {

namespace {
FormulaContext context_for(const WeightsFile &weights, const GpuProfile &profile) {
    FormulaContext c = formula_context_for(profile);
    c.version = weights.formula_version; // the terms the weights were trained for
    return c;
}
} // namespace

NetworkCostModel::NetworkCostModel(const WeightsFile &weights, const GpuProfile &profile)
    : evaluator_(weights.weights, context_for(weights, profile)), provenance_(weights.provenance) {}

void NetworkCostModel::set_pipeline(std::vector<PipelineFeatures> stage_features) {
    evaluator_.set_pipeline(stage_features);
    row_cache_.clear();
}

void NetworkCostModel::evaluate(const std::vector<const StateFeatures *> &states, std::vector<double> &costs,
                                std::vector<std::vector<double>> *per_stage) {
    ids_.clear();
    rows_.clear();
    prefixes_.clear();
    for (const StateFeatures *s : states) {
        if (s->stage_ids.size() != s->schedule.size())
            throw std::invalid_argument("network cost model: state has " +
                                        std::to_string(s->stage_ids.size()) + " stage ids but " +
                                        std::to_string(s->schedule.size()) + " feature rows");
        ids_.insert(ids_.end(), s->stage_ids.begin(), s->stage_ids.end());
        const bool hashed = s->row_hashes.size() == s->schedule.size();
        for (std::size_t i = 0; i < s->schedule.size(); ++i) {
            rows_.push_back(&s->schedule[i]);
            prefixes_.push_back(hashed ? &s->row_hashes[i] : nullptr);
        }
    }
    stage_costs_.resize(rows_.size());
    keys_.resize(rows_.size());
    misses_.clear();
    miss_ids_.clear();
    miss_rows_.clear();
    for (std::size_t i = 0; i < rows_.size(); ++i) {
        keys_[i] = prefixes_[i] ? RowCostCache::key(*prefixes_[i], *rows_[i])
                                : RowCostCache::key(ids_[i], *rows_[i]);
        if (row_cache_.lookup(keys_[i], stage_costs_[i])) continue;
        misses_.push_back(i);
        miss_ids_.push_back(ids_[i]);
        miss_rows_.push_back(rows_[i]);
    }
    miss_costs_.resize(misses_.size());
    evaluator_.evaluate_rows(miss_ids_.data(), miss_rows_.data(), miss_rows_.size(), miss_costs_.data());
    for (std::size_t m = 0; m < misses_.size(); ++m) {
        stage_costs_[misses_[m]] = miss_costs_[m];
        row_cache_.store(keys_[misses_[m]], miss_costs_[m]);
    }

    costs.assign(states.size(), 0.0);
    if (per_stage) per_stage->assign(states.size(), {});
    std::size_t pos = 0;
    for (std::size_t s = 0; s < states.size(); ++s) {
        const std::size_t n = states[s]->schedule.size();
        double total = 0;
        for (std::size_t i = 0; i < n; ++i)
            total += stage_costs_[pos + i];
        if (per_stage)
            (*per_stage)[s].assign(stage_costs_.begin() + static_cast<std::ptrdiff_t>(pos),
                                   stage_costs_.begin() + static_cast<std::ptrdiff_t>(pos + n));
        pos += n;
        costs[s] = (std::isfinite(total) && total > kMinPredictedCostMs) ? total : kMinPredictedCostMs;
    }
}

} // namespace gpusched
