#include "costmodel/training.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <stdexcept>

#include "costmodel/network_gradient.h"
#include "costmodel/ranking_metrics.h"
#include "db/rank_correlation.h"

namespace gpusched {
namespace {

std::vector<double> to_double(const std::vector<float> &v) {
    return {v.begin(), v.end()};
}

std::vector<float> to_float(const std::vector<double> &v) {
    std::vector<float> out(v.size());
    for (std::size_t i = 0; i < v.size(); ++i)
        out[i] = static_cast<float>(v[i]);
    return out;
}

struct Batch {
    std::vector<BatchMember> members;
    bool comparable = false; // drawn from a comparable set: the ranking term across pipelines
};

// Chunks of batch_size (a last chunk of one sample is dropped: it orders nothing).
void add_chunks(std::vector<Batch> &batches, const std::vector<BatchMember> &members, int batch_size,
                bool comparable) {
    const auto size = static_cast<std::size_t>(batch_size);
    for (std::size_t b = 0; b < members.size(); b += size) {
        Batch batch{{members.begin() + static_cast<std::ptrdiff_t>(b),
                     members.begin() + static_cast<std::ptrdiff_t>(std::min(members.size(), b + size))},
                    comparable};
        if (batch.members.size() >= 2) batches.push_back(std::move(batch));
    }
}

RankingQuality quality(const std::vector<double> &params, const std::vector<PreparedPipeline> &pipes,
                       const std::vector<std::vector<int>> &subsets, const LossWeights &loss_weights) {
    RankingQuality q;
    for (std::size_t i = 0; i < pipes.size(); ++i) {
        const auto &idx = subsets[i];
        if (idx.size() < 2) continue;
        const std::vector<double> pred = predict_samples(params, pipes[i], idx);
        std::vector<double> meas;
        for (int s : idx)
            meas.push_back(pipes[i].samples[static_cast<std::size_t>(s)].runtime_ms);
        q.loss += batch_loss(params, pipes[i], idx, loss_weights, nullptr);
        // A group with constant predictions or times orders nothing: it counts 0.
        q.spearman += db::spearman_rho(pred, meas).value_or(0.0);
        q.kendall += db::kendall_tau_b(pred, meas).value_or(0.0);
        q.best_predicted_slowdown += best_predicted_slowdown(pred, meas);
        q.pipelines += 1;
        q.samples += static_cast<int>(idx.size());
    }
    if (q.pipelines > 0) {
        const double n = q.pipelines;
        q.loss /= n;
        q.spearman /= n;
        q.kendall /= n;
        q.best_predicted_slowdown /= n;
    }
    return q;
}

std::vector<PreparedPipeline> prepare_all(const std::vector<PipelineSamples> &data,
                                          const FormulaContext &ctx) {
    std::vector<PreparedPipeline> pipes;
    for (const auto &p : data) {
        try {
            pipes.push_back(prepare_pipeline(p.stages, p.states, p.runtimes_ms, ctx));
        } catch (const std::invalid_argument &e) {
            throw std::invalid_argument("pipeline \"" + p.name + "\": " + e.what());
        }
    }
    return pipes;
}

} // namespace

std::string describe(const RankingQuality &q) {
    char buf[256];
    std::snprintf(
        buf, sizeof buf,
        "loss %.4g, Spearman %.3f, Kendall %.3f, predicted-best slowdown %.1f%% (%d pipelines, %d samples)",
        q.loss, q.spearman, q.kendall, 100.0 * q.best_predicted_slowdown, q.pipelines, q.samples);
    return buf;
}

RankingQuality evaluate_ranking(const NetworkWeights &weights, const std::vector<PipelineSamples> &data,
                                const FormulaContext &ctx, double negative_penalty) {
    const auto pipes = prepare_all(data, ctx);
    std::vector<std::vector<int>> all;
    for (const auto &p : pipes) {
        std::vector<int> idx(p.samples.size());
        std::iota(idx.begin(), idx.end(), 0);
        all.push_back(idx);
    }
    return quality(to_double(weights.flatten()), pipes, all, LossWeights{1, 0, negative_penalty});
}

std::vector<double> predict_runtimes(const NetworkWeights &weights, const PipelineSamples &samples,
                                     const FormulaContext &ctx) {
    const PreparedPipeline pipe = prepare_all({samples}, ctx).front();
    std::vector<int> idx(pipe.samples.size());
    std::iota(idx.begin(), idx.end(), 0);
    return predict_samples(to_double(weights.flatten()), pipe, idx);
}

TrainingReport train_network(NetworkWeights &weights, const std::vector<PipelineSamples> &data,
                             const TrainingOptions &opt) {
    if (!weights.valid_shape()) throw std::invalid_argument("train_network: weights have the wrong shape");
    if (opt.batch_size < 2) throw std::invalid_argument("train_network: batch_size must be >= 2");
    if (!(opt.validation_fraction >= 0 && opt.validation_fraction < 1))
        throw std::invalid_argument("train_network: validation_fraction must be in [0, 1)");
    const auto pipes = prepare_all(data, opt.formula);

    std::mt19937_64 rng(opt.seed);
    std::vector<std::vector<int>> train_idx, val_idx;
    for (const auto &p : pipes) {
        std::vector<int> idx(p.samples.size());
        std::iota(idx.begin(), idx.end(), 0);
        std::shuffle(idx.begin(), idx.end(), rng);
        const auto n_val =
            static_cast<std::size_t>(std::lround(opt.validation_fraction * double(idx.size())));
        val_idx.emplace_back(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(n_val));
        train_idx.emplace_back(idx.begin() + static_cast<std::ptrdiff_t>(n_val), idx.end());
    }

    std::vector<double> params = to_double(weights.flatten());
    const std::vector<double> anchor = params;
    const LossWeights loss_weights{opt.throughput_weight, opt.ranking_weight, opt.negative_penalty,
                                   opt.scale_weight};
    const LossWeights comparable_weights{0, opt.comparable_ranking_weight, opt.negative_penalty, 0};
    for (const auto &set : opt.comparable_sets)
        for (std::size_t p : set)
            if (p >= pipes.size())
                throw std::invalid_argument("train_network: a comparable set names pipeline " +
                                            std::to_string(p) + " of " + std::to_string(pipes.size()));
    TrainingReport report;
    // The starting weights are judged with the terms they were trained for.
    std::vector<PreparedPipeline> as_trained;
    if (opt.initial_formula_version != opt.formula.version) {
        FormulaContext initial = opt.formula;
        initial.version = opt.initial_formula_version;
        as_trained = prepare_all(data, initial);
    }
    const auto &before = as_trained.empty() ? pipes : as_trained;
    report.train_before = quality(params, before, train_idx, loss_weights);
    report.validation_before = quality(params, before, val_idx, loss_weights);

    const std::size_t np = params.size();
    std::vector<double> m(np, 0.0), v(np, 0.0), grad(np);
    long step = 0;
    for (int epoch = 0; epoch < opt.epochs; ++epoch) {
        // Batches: chunks of each pipeline's shuffled training samples, and
        // of each comparable set's samples mixed, visited in random order.
        std::vector<Batch> batches;
        for (std::size_t p = 0; p < pipes.size(); ++p) {
            std::vector<int> idx = train_idx[p];
            if (idx.size() < 2) continue;
            std::shuffle(idx.begin(), idx.end(), rng);
            std::vector<BatchMember> members;
            for (int i : idx)
                members.push_back({&pipes[p], i});
            add_chunks(batches, members, opt.batch_size, false);
        }
        if (opt.comparable_ranking_weight > 0) {
            for (const auto &set : opt.comparable_sets) {
                std::vector<BatchMember> members;
                for (std::size_t p : set)
                    for (int i : train_idx.at(p))
                        members.push_back({&pipes[p], i});
                std::shuffle(members.begin(), members.end(), rng);
                add_chunks(batches, members, opt.batch_size, true);
            }
        }
        std::shuffle(batches.begin(), batches.end(), rng);
        double epoch_loss = 0;
        for (const Batch &batch : batches) {
            std::fill(grad.begin(), grad.end(), 0.0);
            epoch_loss += batch_loss(params, batch.members,
                                     batch.comparable ? comparable_weights : loss_weights, &grad);
            if (opt.anchor_weight > 0)
                for (std::size_t i = 0; i < np; ++i)
                    grad[i] += 2 * opt.anchor_weight * (params[i] - anchor[i]);
            ++step;
            const double c1 = 1.0 - std::pow(opt.beta1, double(step));
            const double c2 = 1.0 - std::pow(opt.beta2, double(step));
            for (std::size_t i = 0; i < np; ++i) {
                m[i] = opt.beta1 * m[i] + (1 - opt.beta1) * grad[i];
                v[i] = opt.beta2 * v[i] + (1 - opt.beta2) * grad[i] * grad[i];
                params[i] -= opt.learning_rate * (m[i] / c1) / (std::sqrt(v[i] / c2) + opt.epsilon);
            }
        }
        if (opt.progress)
            opt.progress(epoch, batches.empty() ? 0.0 : epoch_loss / double(batches.size()),
                         opt.progress_user);
    }

    for (double x : params)
        if (!std::isfinite(x))
            throw std::runtime_error("train_network: training diverged (non-finite parameter); "
                                     "lower the learning rate");
    report.train_after = quality(params, pipes, train_idx, loss_weights);
    report.validation_after = quality(params, pipes, val_idx, loss_weights);
    report.epochs = opt.epochs;
    report.steps = static_cast<int>(step);
    weights = NetworkWeights::unflatten(to_float(params));
    return report;
}

} // namespace gpusched
