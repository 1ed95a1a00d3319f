#pragma once
// A CostModel decorator that passes every evaluation through to the model it
// wraps and keeps, per pipeline it is set to, a uniform random sample
// (reservoir sampling, seeded) of the states it was asked to cost. The
// plugin uses it for the config key "dump_states_path": the samples are
// written as one feature-rows file (costmodel/feature_rows_file.h), the
// training set on which the default weights are fitted to the analytic GPU
// model (docs/costmodel.md).
//
// Why per pipeline: one search may cost states of several pipelines, the
// pipeline as written and each reduction-split variant of it
// (core/reduction_split_search.h), each with its own pipeline features.
// Those variants are what teaches a model that a split reduction is cheaper
// than a serial one, so each keeps its own sample; setting a pipeline seen
// before goes on with its sample.
//
// Why a sample: a beam search costs up to hundreds of thousands of states of
// tens of rows each; all of them would be gigabytes. A reservoir keeps the
// sample's memory bounded and its distribution that of the search's.
//
// Invariant: the costs returned are exactly the wrapped model's; each
// sample depends only on the sequence of pipelines and states evaluated and
// the seed.

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "costmodel/cost_model.h"

namespace gpusched {

class StateSamplingCostModel : public CostModel {
public:
    // capacity: states kept per pipeline.
    StateSamplingCostModel(std::unique_ptr<CostModel> inner, std::size_t capacity, std::uint64_t seed);

    void set_pipeline(std::vector<PipelineFeatures> stage_features) override;
    void evaluate(const std::vector<const StateFeatures *> &states, std::vector<double> &costs,
                  std::vector<std::vector<double>> *per_stage = nullptr) override;

    // Of the pipeline set last.
    std::int64_t states_seen() const;
    const std::vector<StateFeatures> &sample() const;
    // Pipelines with at least one state costed.
    std::size_t pipelines_sampled() const;

    // Writes every pipeline's sample, keyed by a hash of its pipeline
    // features (so files from many searches can be concatenated into one
    // training set), in the order the pipelines were first set, with
    // runtimes unmeasured (NaN).
    void write(const std::string &path) const;

private:
    struct Reservoir {
        std::vector<PipelineFeatures> pipeline;
        std::vector<StateFeatures> sample;
        std::int64_t seen = 0;
    };
    std::unique_ptr<CostModel> inner_;
    std::size_t capacity_;
    std::mt19937_64 rng_;
    std::map<std::uint32_t, Reservoir> reservoirs_;
    std::vector<std::uint32_t> order_; // keys in order of first set_pipeline
    Reservoir *current_ = nullptr;
};

// FNV-1a over the pipeline features' values: the same pipeline gives the same
// key in every process.
std::uint32_t pipeline_features_key(const std::vector<PipelineFeatures> &stage_features);

} // namespace gpusched
