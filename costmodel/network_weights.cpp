#include "costmodel/network_weights.h"

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

namespace gpusched {
namespace {

void fill_uniform(std::vector<float> &v, std::size_t n, int fan_in, std::mt19937_64 &rng) {
    const float a = 1.0f / std::sqrt(static_cast<float>(fan_in));
    std::uniform_real_distribution<float> d(-a, a);
    v.resize(n);
    for (auto &x : v)
        x = d(rng);
}

} // namespace

NetworkWeights NetworkWeights::initial(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    NetworkWeights w;
    // The pipeline features are raw counts (often 0..50), so the head's
    // weights are scaled down further to keep h1 O(1).
    fill_uniform(w.pipeline_w, std::size_t(kPipelineEmbedding) * kNumPipelineFeatures,
                 kNumPipelineFeatures * 16, rng);
    w.pipeline_b.assign(kPipelineEmbedding, 0.0f);
    fill_uniform(w.schedule_w, std::size_t(kScheduleEmbedding) * kNumScheduleFeatures,
                 kNumScheduleFeatures * 16, rng);
    w.schedule_b.assign(kScheduleEmbedding, 0.0f);
    fill_uniform(w.coef_w, std::size_t(kNumCoefficients) * kHiddenWidth, kHiddenWidth * 16, rng);
    w.coef_b.assign(kNumCoefficients, kUnitCoefficientBias);
    return w;
}

bool NetworkWeights::valid_shape() const {
    return pipeline_w.size() == std::size_t(kPipelineEmbedding) * kNumPipelineFeatures &&
           pipeline_b.size() == std::size_t(kPipelineEmbedding) &&
           schedule_w.size() == std::size_t(kScheduleEmbedding) * kNumScheduleFeatures &&
           schedule_b.size() == std::size_t(kScheduleEmbedding) &&
           coef_w.size() == std::size_t(kNumCoefficients) * kHiddenWidth &&
           coef_b.size() == std::size_t(kNumCoefficients);
}

std::vector<float> NetworkWeights::flatten() const {
    std::vector<float> out;
    out.reserve(num_parameters());
    for (const auto *v : {&pipeline_w, &pipeline_b, &schedule_w, &schedule_b, &coef_w, &coef_b})
        out.insert(out.end(), v->begin(), v->end());
    return out;
}

NetworkWeights NetworkWeights::unflatten(const std::vector<float> &values) {
    if (values.size() != num_parameters())
        throw std::invalid_argument("NetworkWeights::unflatten: expected " +
                                    std::to_string(num_parameters()) + " floats, got " +
                                    std::to_string(values.size()));
    NetworkWeights w;
    std::size_t pos = 0;
    auto take = [&](std::vector<float> &dst, std::size_t n) {
        dst.assign(values.begin() + static_cast<std::ptrdiff_t>(pos),
                   values.begin() + static_cast<std::ptrdiff_t>(pos + n));
        pos += n;
    };
    take(w.pipeline_w, std::size_t(kPipelineEmbedding) * kNumPipelineFeatures);
    take(w.pipeline_b, kPipelineEmbedding);
    take(w.schedule_w, std::size_t(kScheduleEmbedding) * kNumScheduleFeatures);
    take(w.schedule_b, kScheduleEmbedding);
    take(w.coef_w, std::size_t(kNumCoefficients) * kHiddenWidth);
    take(w.coef_b, kNumCoefficients);
    return w;
}

} // namespace gpusched
