#pragma once
// A CostModel decorator that passes every evaluation through to the model it
// wraps and keeps a uniform random sample (reservoir sampling, seeded) of the
// states it was asked to cost. The plugin uses it for the config key
// "dump_states_path": the sample is written as a feature-rows file
// (costmodel/feature_rows_file.h), the training set on which the default
// weights are fitted to the analytic GPU model (docs/costmodel.md).
//
// Why a sample: a beam search costs up to hundreds of thousands of states of
// tens of rows each; all of them would be gigabytes. A reservoir keeps the
// sample's memory bounded and its distribution that of the search's.
//
// Invariant: the costs returned are exactly the wrapped model's; the sample
// depends only on the sequence of states evaluated and the seed.

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "costmodel/cost_model.h"

namespace gpusched {

class StateSamplingCostModel : public CostModel {
public:
    StateSamplingCostModel(std::unique_ptr<CostModel> inner, std::size_t capacity, std::uint64_t seed);

    void set_pipeline(std::vector<PipelineFeatures> stage_features) override;
    void evaluate(const std::vector<const StateFeatures *> &states, std::vector<double> &costs,
                  std::vector<std::vector<double>> *per_stage = nullptr) override;

    std::int64_t states_seen() const { return seen_; }
    const std::vector<StateFeatures> &sample() const { return sample_; }

    // Writes the sample, keyed by a hash of the pipeline features (so files
    // from many pipelines can be concatenated into one training set), with
    // runtimes unmeasured (NaN).
    void write(const std::string &path) const;

private:
    std::unique_ptr<CostModel> inner_;
    std::size_t capacity_;
    std::mt19937_64 rng_;
    std::vector<PipelineFeatures> pipeline_;
    std::vector<StateFeatures> sample_;
    std::int64_t seen_ = 0;
};

// FNV-1a over the pipeline features' values: the same pipeline gives the same
// key in every process.
std::uint32_t pipeline_features_key(const std::vector<PipelineFeatures> &stage_features);

} // namespace gpusched
