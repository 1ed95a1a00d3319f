#pragma once
// The parameters of the cost-model network (Anderson et al. 2021 sec. 5.2,
// sizes of the reference implementation):
//
//   pipeline head:  h1 = Wp * p + bp                p: 280 pipeline features -> 8
//   schedule head:  h2 = relu(Ws * log1p(s) + bs)   s: 75 schedule features  -> 24
//   coefficients:   z  = Wc * [h1; h2] + bc         32 -> 32
//                   c  = softplus(z)                c_i multiplies term i of cost_formula.h
//
// Matrices are row-major, [output][input]. flatten()/unflatten() fix the
// order the weights file and the optimizer use: Wp, bp, Ws, bs, Wc, bc.
//
// Invariant: every vector has exactly the size its constant says (checked by
// valid_shape()); a NetworkWeights that fails it is never evaluated.

#include <cstdint>
#include <vector>

#include "costmodel/cost_formula.h"
#include "costmodel/pipeline_features.h"
#include "costmodel/schedule_features.h"

namespace gpusched {

inline constexpr int kPipelineEmbedding = 8;
inline constexpr int kScheduleEmbedding = 24;
inline constexpr int kHiddenWidth = kPipelineEmbedding + kScheduleEmbedding; // 32
// The coefficients are made positive with softplus rather than the
// reference's leaky ReLU: leaky ReLU lets a coefficient go negative, and a
// network fitted to the analytic teacher with it predicted negative costs for
// 4.7% of stages (docs/costmodel.md, "Why softplus"). softplus(z) > 0 always.
// Pre-activation bias that makes a coefficient start at exactly 1:
// softplus(log(e - 1)) = 1.
inline constexpr float kUnitCoefficientBias = 0.541324854612918f;

struct NetworkWeights {
    std::vector<float> pipeline_w; // kPipelineEmbedding x kNumPipelineFeatures
    std::vector<float> pipeline_b; // kPipelineEmbedding
    std::vector<float> schedule_w; // kScheduleEmbedding x kNumScheduleFeatures
    std::vector<float> schedule_b; // kScheduleEmbedding
    std::vector<float> coef_w;     // kNumCoefficients x kHiddenWidth
    std::vector<float> coef_b;     // kNumCoefficients

    // Zero-sized weights; call one of the initializers.
    NetworkWeights() = default;

    // Total number of floats.
    static constexpr std::size_t num_parameters() {
        return std::size_t(kPipelineEmbedding) * (kNumPipelineFeatures + 1) +
               std::size_t(kScheduleEmbedding) * (kNumScheduleFeatures + 1) +
               std::size_t(kNumCoefficients) * (kHiddenWidth + 1);
    }

    // Small random weights (uniform, scaled by 1/sqrt(fan-in)) and a
    // coefficient-layer bias of kUnitCoefficientBias, so every coefficient
    // starts near 1: the untrained model is the appendix B formula with unit
    // coefficients.
    static NetworkWeights initial(std::uint64_t seed);

    bool valid_shape() const;
    std::vector<float> flatten() const;
    // Throws std::invalid_argument if values.size() != num_parameters().
    static NetworkWeights unflatten(const std::vector<float> &values);
};

} // namespace gpusched
