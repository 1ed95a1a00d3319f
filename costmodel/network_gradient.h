#pragma once
// The training loss of the cost-model network and its hand-written gradient
// (double precision), separate from the float inference path of
// network_evaluator.h so each can be simple: inference is tuned for speed,
// this for being checkably right (test/costmodel compares it with finite
// differences and with the inference path).
//
// Loss of one batch of samples of the same pipeline, with reference sample
// ref = the fastest measured sample in the batch (sec. 5.2 / DESIGN.md):
//
//   L = w_tp * 1/n sum_s (t_ref/p_s - t_ref/t_s)^2           (relative throughput)
//     + w_rank * sum_{t_i<t_j} g_ij softplus(log p_i - log p_j) / sum g_ij   (ranking)
//     + w_scale * (1/n sum_s log(p_s / t_s))^2                (overall scale)
//     + penalty * 1/rows sum_rows sum_m min(z_m, 0)^2         (negative pre-activations)
//
// The paper's loss is the first term alone (w_tp = 1, w_rank = 0, the
// default). The ranking term is an option for fitting to a teacher whose
// differences between sibling states are small next to the scale of its
// predictions: it is RankNet's pairwise logistic loss on log predictions,
// so it does not depend on their scale, with each pair weighted by how much
// the two runtimes differ, g_ij = log(t_j / t_i) (docs/costmodel.md). The
// ranking term leaves the predictions' scale free (fitted alone, the
// predicted milliseconds drifted 140-fold); the scale term pins only the
// batch's mean log ratio of predicted to measured, so it does not compete
// with the order.
//
// where p_s is the predicted cost (sum of stage costs), t_s the measured one,
// z the coefficient layer's pre-activations (coefficients are softplus(z) > 0,
// so p_s > 0 whenever any term is; p_s below kMinPredictedCostMs is clamped
// there, as at inference, and contributes no gradient through p).
//
// Invariant: a PreparedPipeline is immutable once built; it holds everything
// the loss needs that does not depend on the parameters (log-compressed
// schedule features, formula terms, pipeline features), so an epoch does no
// feature work.

#include <vector>

#include "costmodel/cost_formula.h"
#include "costmodel/cost_model.h"
#include "costmodel/network_weights.h"

namespace gpusched {

struct PreparedRow {
    int stage_id = 0;
    std::array<double, kNumScheduleFeatures> x{}; // fast_log1p(features), as inference sees them
    CostTerms terms{};
    double fixed_ms = 0; // the formula's part no coefficient weighs (fixed_stage_cost_ms)
};

struct PreparedSample {
    std::vector<PreparedRow> rows;
    double runtime_ms = 0;
};

struct PreparedPipeline {
    std::vector<std::array<double, kNumPipelineFeatures>> stages;
    std::vector<PreparedSample> samples;
};

// Throws std::invalid_argument if a state's stage id is out of range or a
// runtime is not finite and > 0.
PreparedPipeline prepare_pipeline(const std::vector<PipelineFeatures> &stages,
                                  const std::vector<StateFeatures> &states,
                                  const std::vector<double> &runtimes_ms, const FormulaContext &ctx);

// Predicted cost (ms, unclamped) of each listed sample with flat parameters
// (NetworkWeights::flatten order).
std::vector<double> predict_samples(const std::vector<double> &params, const PreparedPipeline &pipe,
                                    const std::vector<int> &samples);

struct LossWeights {
    double throughput = 1; // w_tp
    double ranking = 0;    // w_rank
    double negative_penalty = 1e-4;
    double scale = 0; // w_scale
};

// The batch loss above; if grad is non-null, adds dL/dparams to it
// (grad->size() must be NetworkWeights::num_parameters()).
double batch_loss(const std::vector<double> &params, const PreparedPipeline &pipe,
                  const std::vector<int> &samples, const LossWeights &weights, std::vector<double> *grad);

// One sample of a batch that may draw on several pipelines: the same
// computation written several ways (a pipeline and its reduction-split
// variants, each with its own stages), whose runtimes compare directly. The
// loss is the same formula over the members, each predicted with its own
// pipeline's features.
struct BatchMember {
    const PreparedPipeline *pipe = nullptr;
    int sample = 0;
};
double batch_loss(const std::vector<double> &params, const std::vector<BatchMember> &samples,
                  const LossWeights &weights, std::vector<double> *grad);
// The paper's loss: relative throughput plus the penalty.
inline double batch_loss(const std::vector<double> &params, const PreparedPipeline &pipe,
                         const std::vector<int> &samples, double negative_penalty,
                         std::vector<double> *grad) {
    return batch_loss(params, pipe, samples, LossWeights{1, 0, negative_penalty}, grad);
}

} // namespace gpusched
