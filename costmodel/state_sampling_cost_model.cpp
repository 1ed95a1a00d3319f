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
    const std::uint32_t key = pipeline_features_key(stage_features);
    auto [it, added] = reservoirs_.try_emplace(key);
    if (added) {
        it->second.pipeline = stage_features;
        order_.push_back(key);
    }
    current_ = &it->second;
    inner_->set_pipeline(std::move(stage_features));
}

void StateSamplingCostModel::evaluate(const std::vector<const StateFeatures *> &states,
                                      std::vector<double> &costs,
                                      std::vector<std::vector<double>> *per_stage) {
    inner_->evaluate(states, costs, per_stage);
    if (!current_) return; // no pipeline set: nothing to key the states by
    for (const StateFeatures *s : states) {
        // Algorithm R: the n-th state replaces a random slot with
        // probability capacity / n.
        current_->seen++;
        if (current_->sample.size() < capacity_) {
            current_->sample.push_back(*s);
            continue;
        }
        std::uint64_t slot = rng_() % static_cast<std::uint64_t>(current_->seen);
        if (slot < capacity_) current_->sample[slot] = *s;
    }
}

std::int64_t StateSamplingCostModel::states_seen() const {
    return current_ ? current_->seen : 0;
}

const std::vector<StateFeatures> &StateSamplingCostModel::sample() const {
    static const std::vector<StateFeatures> none;
    return current_ ? current_->sample : none;
}

std::size_t StateSamplingCostModel::pipelines_sampled() const {
    std::size_t n = 0;
    for (const auto &[key, r] : reservoirs_)
        n += r.seen > 0 ? 1 : 0;
    return n;
}

void StateSamplingCostModel::write(const std::string &path) const {
    std::vector<FeatureRowsRecord> records;
    for (std::uint32_t key : order_) {
        const Reservoir &r = reservoirs_.at(key);
        for (const StateFeatures &s : r.sample) {
            FeatureRowsRecord rec;
            rec.pipeline_key = key;
            rec.runtime_ms = std::numeric_limits<double>::quiet_NaN();
            rec.pipeline = r.pipeline;
            rec.state = s;
            records.push_back(std::move(rec));
        }
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
