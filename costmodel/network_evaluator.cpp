#include "costmodel/network_evaluator.h"

#include <stdexcept>
#include <string>

#include "costmodel/fast_log1p.h"
#include "costmodel/fast_softplus.h"

namespace gpusched {

NetworkEvaluator::NetworkEvaluator(const NetworkWeights &weights, const FormulaContext &ctx)
    : ctx_(ctx), weights_(weights) {
    if (!weights_.valid_shape())
        throw std::invalid_argument("NetworkEvaluator: network weights have the wrong shape");
    schedule_wt_.resize(std::size_t(kNumScheduleFeatures) * kScheduleEmbedding);
    for (int k = 0; k < kScheduleEmbedding; ++k)
        for (int j = 0; j < kNumScheduleFeatures; ++j)
            schedule_wt_[std::size_t(j) * kScheduleEmbedding + k] =
                weights_.schedule_w[std::size_t(k) * kNumScheduleFeatures + j];
    coef_wt_.resize(std::size_t(kScheduleEmbedding) * kNumCoefficients);
    for (int m = 0; m < kNumCoefficients; ++m)
        for (int k = 0; k < kScheduleEmbedding; ++k)
            coef_wt_[std::size_t(k) * kNumCoefficients + m] =
                weights_.coef_w[std::size_t(m) * kHiddenWidth + kPipelineEmbedding + k];
}

void NetworkEvaluator::set_pipeline(const std::vector<PipelineFeatures> &stages) {
    stage_bias_.assign(stages.size() * kNumCoefficients, 0.0f);
    atomic_stores_.clear();
    for (const auto &p : stages)
        atomic_stores_.push_back(atomic_store_of(p));
    for (std::size_t s = 0; s < stages.size(); ++s) {
        float h1[kPipelineEmbedding];
        for (int k = 0; k < kPipelineEmbedding; ++k) {
            float acc = weights_.pipeline_b[k];
            const float *w = &weights_.pipeline_w[std::size_t(k) * kNumPipelineFeatures];
            for (int j = 0; j < kNumPipelineFeatures; ++j)
                acc += w[j] * stages[s].values[j];
            h1[k] = acc;
        }
        float *bias = &stage_bias_[s * kNumCoefficients];
        for (int m = 0; m < kNumCoefficients; ++m) {
            float acc = weights_.coef_b[m];
            const float *w = &weights_.coef_w[std::size_t(m) * kHiddenWidth];
            for (int k = 0; k < kPipelineEmbedding; ++k)
                acc += w[k] * h1[k];
            bias[m] = acc;
        }
    }
}

// Its two matrix-vector products are most of a stage evaluation and a
// tenth of the search: on x86-64 a second copy is compiled for AVX2 (8
// floats a vector, where the baseline's SSE2 has 4), picked at load time by
// the CPU. Without the FMA extension the compiler cannot fuse a multiply
// and an add, so each lane does the same IEEE operations in the same order
// and both copies give bit-identical costs (random_s1: 3.4% fewer
// instructions in the whole call, the same cost and states).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
void NetworkEvaluator::evaluate_rows(const int *stage_ids, const ScheduleFeatures *const *rows, std::size_t n,
                                     double *stage_costs, float *coefficients) const {
    const std::size_t stages = num_stages();
    alignas(32) float raw[kNumScheduleFeatures];
    alignas(32) float x[kNumScheduleFeatures];
    alignas(32) float h2[kScheduleEmbedding];
    alignas(32) float z[kNumCoefficients];
    CostTerms terms;
    for (std::size_t r = 0; r < n; ++r) {
        const int sid = stage_ids[r];
        if (sid < 0 || static_cast<std::size_t>(sid) >= stages)
            throw std::out_of_range("NetworkEvaluator: stage id " + std::to_string(sid) +
                                    " outside the pipeline's " + std::to_string(stages) +
                                    " stages (was set_pipeline called?)");
        const ScheduleFeatures &f = *rows[r];
        for (int j = 0; j < kNumScheduleFeatures; ++j)
            raw[j] = static_cast<float>(f.values[j]);
        fast_log1p_array(raw, x, kNumScheduleFeatures);

        for (int k = 0; k < kScheduleEmbedding; ++k)
            h2[k] = weights_.schedule_b[k];
        for (int j = 0; j < kNumScheduleFeatures; ++j) {
            const float xj = x[j];
            const float *w = &schedule_wt_[std::size_t(j) * kScheduleEmbedding];
            for (int k = 0; k < kScheduleEmbedding; ++k)
                h2[k] += xj * w[k];
        }

        const float *bias = &stage_bias_[std::size_t(sid) * kNumCoefficients];
        for (int m = 0; m < kNumCoefficients; ++m)
            z[m] = bias[m];
        for (int k = 0; k < kScheduleEmbedding; ++k) {
            const float h = h2[k] > 0.0f ? h2[k] : 0.0f;
            const float *w = &coef_wt_[std::size_t(k) * kNumCoefficients];
            for (int m = 0; m < kNumCoefficients; ++m)
                z[m] += h * w[m];
        }
        alignas(32) float c[kNumCoefficients];
        fast_softplus_array(z, c, kNumCoefficients);
        if (coefficients) {
            for (int m = 0; m < kNumCoefficients; ++m)
                coefficients[r * kNumCoefficients + m] = c[m];
        }

        compute_cost_terms(f, ctx_, terms);
        double cost = 0.0;
        for (int m = 0; m < kNumCoefficients; ++m)
            cost += static_cast<double>(c[m]) * terms[m];
        stage_costs[r] = cost + fixed_stage_cost_ms(f, atomic_stores_[static_cast<std::size_t>(sid)], ctx_);
    }
}

} // namespace gpusched
