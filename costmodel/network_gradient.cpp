#include "costmodel/network_gradient.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "costmodel/fast_log1p.h"
#include "costmodel/network_cost_model.h"

namespace gpusched {
namespace {

// Offsets of each tensor in the flat parameter vector (flatten() order).
constexpr std::size_t kPw = 0;
constexpr std::size_t kPb = kPw + std::size_t(kPipelineEmbedding) * kNumPipelineFeatures;
constexpr std::size_t kSw = kPb + kPipelineEmbedding;
constexpr std::size_t kSb = kSw + std::size_t(kScheduleEmbedding) * kNumScheduleFeatures;
constexpr std::size_t kCw = kSb + kScheduleEmbedding;
constexpr std::size_t kCb = kCw + std::size_t(kNumCoefficients) * kHiddenWidth;
static_assert(kCb + kNumCoefficients == NetworkWeights::num_parameters(), "parameter layout drifted");

using H1 = std::array<double, kPipelineEmbedding>;

// Exact softplus and its derivative, stable for large |z|.
double softplus(double z) {
    return std::max(z, 0.0) + std::log1p(std::exp(-std::abs(z)));
}
double sigmoid(double z) {
    const double e = std::exp(-std::abs(z));
    return z >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
}

H1 pipeline_head(const std::vector<double> &w, const std::array<double, kNumPipelineFeatures> &p) {
    H1 h{};
    for (int k = 0; k < kPipelineEmbedding; ++k) {
        double acc = w[kPb + k];
        const double *row = &w[kPw + std::size_t(k) * kNumPipelineFeatures];
        for (int j = 0; j < kNumPipelineFeatures; ++j)
            acc += row[j] * p[j];
        h[k] = acc;
    }
    return h;
}

struct RowActivations {
    std::array<double, kScheduleEmbedding> h2pre{};
    std::array<double, kHiddenWidth> hcat{};
    std::array<double, kNumCoefficients> z{};
    double cost = 0;
};

void row_forward(const std::vector<double> &w, const H1 &h1, const PreparedRow &row, RowActivations &a) {
    for (int k = 0; k < kPipelineEmbedding; ++k)
        a.hcat[k] = h1[k];
    for (int k = 0; k < kScheduleEmbedding; ++k) {
        double acc = w[kSb + k];
        const double *wr = &w[kSw + std::size_t(k) * kNumScheduleFeatures];
        for (int j = 0; j < kNumScheduleFeatures; ++j)
            acc += wr[j] * row.x[j];
        a.h2pre[k] = acc;
        a.hcat[kPipelineEmbedding + k] = acc > 0 ? acc : 0.0;
    }
    a.cost = row.fixed_ms;
    for (int m = 0; m < kNumCoefficients; ++m) {
        double acc = w[kCb + m];
        const double *wr = &w[kCw + std::size_t(m) * kHiddenWidth];
        for (int k = 0; k < kHiddenWidth; ++k)
            acc += wr[k] * a.hcat[k];
        a.z[m] = acc;
        a.cost += softplus(acc) * row.terms[m];
    }
}

} // namespace

PreparedPipeline prepare_pipeline(const std::vector<PipelineFeatures> &stages,
                                  const std::vector<StateFeatures> &states,
                                  const std::vector<double> &runtimes_ms, const FormulaContext &ctx) {
    if (states.size() != runtimes_ms.size())
        throw std::invalid_argument("prepare_pipeline: " + std::to_string(states.size()) + " states but " +
                                    std::to_string(runtimes_ms.size()) + " runtimes");
    PreparedPipeline out;
    std::vector<AtomicStore> atomic_stores;
    for (const auto &s : stages) {
        atomic_stores.push_back(atomic_store_of(s));
        std::array<double, kNumPipelineFeatures> p{};
        for (int j = 0; j < kNumPipelineFeatures; ++j)
            p[j] = s.values[j];
        out.stages.push_back(p);
    }
    for (std::size_t i = 0; i < states.size(); ++i) {
        const StateFeatures &st = states[i];
        if (!(std::isfinite(runtimes_ms[i]) && runtimes_ms[i] > 0))
            throw std::invalid_argument("prepare_pipeline: sample " + std::to_string(i) + " has runtime " +
                                        std::to_string(runtimes_ms[i]) + " ms (must be finite and > 0)");
        if (st.stage_ids.size() != st.schedule.size())
            throw std::invalid_argument("prepare_pipeline: sample " + std::to_string(i) +
                                        " has mismatched stage ids and feature rows");
        PreparedSample ps;
        ps.runtime_ms = runtimes_ms[i];
        for (std::size_t r = 0; r < st.schedule.size(); ++r) {
            const int sid = st.stage_ids[r];
            if (sid < 0 || static_cast<std::size_t>(sid) >= stages.size())
                throw std::invalid_argument("prepare_pipeline: sample " + std::to_string(i) +
                                            " names stage " + std::to_string(sid) + " of a " +
                                            std::to_string(stages.size()) + "-stage pipeline");
            PreparedRow row;
            row.stage_id = sid;
            for (int j = 0; j < kNumScheduleFeatures; ++j)
                row.x[j] = fast_log1p(static_cast<float>(st.schedule[r].values[j]));
            compute_cost_terms(st.schedule[r], ctx, row.terms);
            row.fixed_ms =
                fixed_stage_cost_ms(st.schedule[r], atomic_stores[static_cast<std::size_t>(sid)], ctx);
            ps.rows.push_back(row);
        }
        out.samples.push_back(std::move(ps));
    }
    return out;
}

std::vector<double> predict_samples(const std::vector<double> &params, const PreparedPipeline &pipe,
                                    const std::vector<int> &samples) {
    std::vector<H1> h1(pipe.stages.size());
    for (std::size_t s = 0; s < pipe.stages.size(); ++s)
        h1[s] = pipeline_head(params, pipe.stages[s]);
    std::vector<double> out;
    RowActivations a;
    for (int si : samples) {
        double p = 0;
        for (const auto &row : pipe.samples[static_cast<std::size_t>(si)].rows) {
            row_forward(params, h1[static_cast<std::size_t>(row.stage_id)], row, a);
            p += a.cost;
        }
        out.push_back(p);
    }
    return out;
}

double batch_loss(const std::vector<double> &params, const PreparedPipeline &pipe,
                  const std::vector<int> &samples, const LossWeights &weights, std::vector<double> *grad) {
    std::vector<BatchMember> members;
    members.reserve(samples.size());
    for (int s : samples)
        members.push_back({&pipe, s});
    return batch_loss(params, members, weights, grad);
}

double batch_loss(const std::vector<double> &params, const std::vector<BatchMember> &samples,
                  const LossWeights &weights, std::vector<double> *grad) {
    const double negative_penalty = weights.negative_penalty;
    if (samples.empty()) return 0.0;
    if (grad && grad->size() != NetworkWeights::num_parameters())
        throw std::invalid_argument("batch_loss: gradient vector has the wrong size");
    // The pipelines the batch draws on, each's stage embeddings once.
    std::vector<const PreparedPipeline *> pipes;
    std::vector<std::size_t> pipe_of(samples.size());
    for (std::size_t i = 0; i < samples.size(); ++i) {
        auto it = std::find(pipes.begin(), pipes.end(), samples[i].pipe);
        pipe_of[i] = static_cast<std::size_t>(it - pipes.begin());
        if (it == pipes.end()) pipes.push_back(samples[i].pipe);
    }
    std::vector<std::vector<H1>> h1(pipes.size());
    for (std::size_t q = 0; q < pipes.size(); ++q) {
        h1[q].resize(pipes[q]->stages.size());
        for (std::size_t s = 0; s < pipes[q]->stages.size(); ++s)
            h1[q][s] = pipeline_head(params, pipes[q]->stages[s]);
    }
    auto sample_at = [&](std::size_t i) -> const PreparedSample & {
        return samples[i].pipe->samples[static_cast<std::size_t>(samples[i].sample)];
    };

    // Forward, keeping each row's activations for the backward pass.
    std::vector<std::vector<RowActivations>> acts(samples.size());
    std::vector<double> predicted(samples.size(), 0.0);
    std::size_t total_rows = 0;
    double t_ref = INFINITY;
    for (std::size_t i = 0; i < samples.size(); ++i) {
        const PreparedSample &ps = sample_at(i);
        acts[i].resize(ps.rows.size());
        for (std::size_t r = 0; r < ps.rows.size(); ++r) {
            row_forward(params, h1[pipe_of[i]][static_cast<std::size_t>(ps.rows[r].stage_id)], ps.rows[r],
                        acts[i][r]);
            predicted[i] += acts[i][r].cost;
        }
        total_rows += ps.rows.size();
        t_ref = std::min(t_ref, ps.runtime_ms);
    }

    const double n = static_cast<double>(samples.size());
    const double rows = static_cast<double>(std::max<std::size_t>(total_rows, 1));
    double loss = 0;
    std::vector<double> dloss_dp(samples.size(), 0.0);
    std::vector<double> p(samples.size()), t(samples.size());
    std::vector<bool> clamped(samples.size());
    for (std::size_t i = 0; i < samples.size(); ++i) {
        t[i] = sample_at(i).runtime_ms;
        clamped[i] = !(predicted[i] > kMinPredictedCostMs);
        p[i] = clamped[i] ? kMinPredictedCostMs : predicted[i];
    }
    if (weights.throughput != 0) {
        for (std::size_t i = 0; i < samples.size(); ++i) {
            const double diff = t_ref / p[i] - t_ref / t[i];
            loss += weights.throughput * diff * diff / n;
            if (!clamped[i]) dloss_dp[i] += weights.throughput * 2.0 / n * diff * (-t_ref / (p[i] * p[i]));
        }
    }
    if (weights.scale != 0) {
        double mean_log_ratio = 0;
        for (std::size_t i = 0; i < samples.size(); ++i)
            mean_log_ratio += std::log(p[i] / t[i]) / n;
        loss += weights.scale * mean_log_ratio * mean_log_ratio;
        for (std::size_t i = 0; i < samples.size(); ++i)
            if (!clamped[i]) dloss_dp[i] += weights.scale * 2.0 * mean_log_ratio / (n * p[i]);
    }
    if (weights.ranking != 0) {
        // Pairs (i faster than j); d = log p_j - log p_i should be > 0.
        double total_gap = 0;
        for (std::size_t i = 0; i < samples.size(); ++i)
            for (std::size_t j = 0; j < samples.size(); ++j)
                if (t[i] < t[j]) total_gap += std::log(t[j] / t[i]);
        if (total_gap > 0) {
            for (std::size_t i = 0; i < samples.size(); ++i) {
                for (std::size_t j = 0; j < samples.size(); ++j) {
                    if (!(t[i] < t[j])) continue;
                    const double g = weights.ranking * std::log(t[j] / t[i]) / total_gap;
                    const double d = std::log(p[j]) - std::log(p[i]);
                    // softplus(-d), computed without overflow.
                    loss += g * (d > 0 ? std::log1p(std::exp(-d)) : -d + std::log1p(std::exp(d)));
                    const double dl_dd = -g * sigmoid(-d);
                    if (!clamped[j]) dloss_dp[j] += dl_dd / p[j];
                    if (!clamped[i]) dloss_dp[i] -= dl_dd / p[i];
                }
            }
        }
    }
    for (const auto &sample_acts : acts)
        for (const auto &a : sample_acts)
            for (double z : a.z)
                if (z < 0) loss += negative_penalty * z * z / rows;
    if (!grad) return loss;

    std::vector<double> &g = *grad;
    std::vector<std::vector<H1>> dh1(pipes.size());
    for (std::size_t q = 0; q < pipes.size(); ++q)
        dh1[q].assign(pipes[q]->stages.size(), H1{});
    std::array<double, kNumCoefficients> dz;
    std::array<double, kHiddenWidth> dh;
    for (std::size_t i = 0; i < samples.size(); ++i) {
        const PreparedSample &ps = sample_at(i);
        for (std::size_t r = 0; r < ps.rows.size(); ++r) {
            const PreparedRow &row = ps.rows[r];
            const RowActivations &a = acts[i][r];
            for (int m = 0; m < kNumCoefficients; ++m) {
                const double z = a.z[m];
                dz[m] = dloss_dp[i] * row.terms[m] * sigmoid(z);
                if (z < 0) dz[m] += 2.0 * negative_penalty * z / rows;
            }
            dh.fill(0.0);
            for (int m = 0; m < kNumCoefficients; ++m) {
                if (dz[m] == 0) continue;
                double *gw = &g[kCw + std::size_t(m) * kHiddenWidth];
                const double *w = &params[kCw + std::size_t(m) * kHiddenWidth];
                for (int k = 0; k < kHiddenWidth; ++k) {
                    gw[k] += dz[m] * a.hcat[k];
                    dh[k] += w[k] * dz[m];
                }
                g[kCb + m] += dz[m];
            }
            H1 &d1 = dh1[pipe_of[i]][static_cast<std::size_t>(row.stage_id)];
            for (int k = 0; k < kPipelineEmbedding; ++k)
                d1[k] += dh[k];
            for (int k = 0; k < kScheduleEmbedding; ++k) {
                if (!(a.h2pre[k] > 0)) continue;
                const double d = dh[kPipelineEmbedding + k];
                double *gw = &g[kSw + std::size_t(k) * kNumScheduleFeatures];
                for (int j = 0; j < kNumScheduleFeatures; ++j)
                    gw[j] += d * row.x[j];
                g[kSb + k] += d;
            }
        }
    }
    for (std::size_t q = 0; q < pipes.size(); ++q) {
        for (std::size_t s = 0; s < pipes[q]->stages.size(); ++s) {
            for (int k = 0; k < kPipelineEmbedding; ++k) {
                const double d = dh1[q][s][k];
                if (d == 0) continue;
                double *gw = &g[kPw + std::size_t(k) * kNumPipelineFeatures];
                for (int j = 0; j < kNumPipelineFeatures; ++j)
                    gw[j] += d * pipes[q]->stages[s][j];
                g[kPb + k] += d;
            }
        }
    }
    return loss;
}

} // namespace gpusched
