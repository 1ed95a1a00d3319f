#include "costmodel/state_sampling_cost_model.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "costmodel/feature_rows_file.h"

namespace gpusched {

StateSamplingCostModel::StateSamplingCostModel(std::unique_ptr<CostModel> inner, std::size_t capacity,
                                               std::uint64_t seed)
    : inner_(std::move(inner)), capacity_(capacity), rng_(seed) {
    if (!inner_) throw std::invalid_argument("StateSamplingCostModel: no model to wrap");
}

void StateSamplingCostModel::set_pipeline(std::vector<PipelineFeatures> stage_features) {
    pipeline_ = stage_features;
    sample_.clear();
    seen_ = 0;
    inner_->set_pipeline(std::move(stage_features));
}

void StateSamplingCostModel::evaluate(const std::vector<const StateFeatures *> &states,
                                      std::vector<double> &costs,
                                      std::vector<std::vector<double>> *per_stage) {
    inner_->evaluate(states, costs, per_stage);
    for (const StateFeatures *s : states) {
        // Algorithm R: the n-th state replaces a random slot with
        // probability capacity / n.
        seen_++;
        if (sample_.size() < capacity_) {
            sample_.push_back(*s);
            continue;
        }
        std::uint64_t slot = rng_() % static_cast<std::uint64_t>(seen_);
        if (slot < capacity_) sample_[slot] = *s;
    }
}

void StateSamplingCostModel::write(const std::string &path) const {
    const std::uint32_t key = pipeline_features_key(pipeline_);
    std::vector<FeatureRowsRecord> records;
    records.reserve(sample_.size());
    for (const StateFeatures &s : sample_) {
        FeatureRowsRecord r;
        r.pipeline_key = key;
        r.runtime_ms = std::numeric_limits<double>::quiet_NaN();
        r.pipeline = pipeline_;
        r.state = s;
        records.push_back(std::move(r));
    }
    write_feature_rows(path, records);
}

std::uint32_t pipeline_features_key(const std::vector<PipelineFeatures> &stage_features) {
    std::uint32_t h = 2166136261u;
    auto mix = [&h](const void *data, std::size_t n) {
        const auto *p = static_cast<const unsigned char *>(data);
        for (std::size_t i = 0; i < n; i++) {
            h ^= p[i];
            h *= 16777619u;
        }
    };
    std::uint32_t n = static_cast<std::uint32_t>(stage_features.size());
    mix(&n, sizeof n);
    for (const PipelineFeatures &f : stage_features)
        mix(f.values.data(), f.values.size() * sizeof(float));
    return h;
}

} // namespace gpusched
