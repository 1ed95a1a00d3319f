#pragma once
// Training the cost-model network from samples: measured (or teacher)
// runtimes of states of pipelines. Samples are grouped by pipeline because
// the loss compares samples of the same pipeline (network_gradient.h).
//
// train_network() holds out a share of every pipeline's samples for
// validation (chosen by the seed), runs Adam on mini-batches drawn within one
// pipeline at a time, and reports loss and ranking quality (Spearman,
// Kendall, slowdown of the predicted-best sample) on the training and the
// validation samples, before and after.
//
// Invariants: training is deterministic for a given seed and data; the
// weights passed in are only replaced if training completes.

#include <cstdint>
#include <string>
#include <vector>

#include "costmodel/cost_formula.h"
#include "costmodel/cost_model.h"
#include "costmodel/network_weights.h"

namespace gpusched {

// The samples of one pipeline: its stages' features, and per sample the
// state's features and its runtime in ms (finite, > 0).
struct PipelineSamples {
    std::string name; // for reports
    std::vector<PipelineFeatures> stages;
    std::vector<StateFeatures> states;
    std::vector<double> runtimes_ms;
};

struct TrainingOptions {
    int epochs = 200;
    double learning_rate = 1e-3;
    double beta1 = 0.9;
    double beta2 = 0.999;
    double epsilon = 1e-8;
    int batch_size = 64; // samples per Adam step (all from one pipeline)
    double validation_fraction = 0.2;
    double negative_penalty = 1e-4; // weight of sum min(z, 0)^2
    double throughput_weight = 1;   // the paper's relative-throughput term (network_gradient.h)
    double ranking_weight = 0;      // the optional pairwise ranking term (network_gradient.h)
    double scale_weight = 0;        // the optional mean-log-ratio scale term (network_gradient.h)
    // Weight of sum (w - w_start)^2 added to each batch's loss: keeps what
    // the starting weights knew where a few samples say little.
    double anchor_weight = 0;
    // Sets of pipelines (indices into the data) whose runtimes compare
    // directly across pipelines: the complete schedules of a pipeline and of
    // its reduction-split variants. The search picks a variant by comparing
    // predicted costs across them, which batches within one pipeline never
    // teach. Each epoch adds, per set, batches of its pipelines' training
    // samples mixed, under the ranking term with comparable_ranking_weight
    // (0: no such batches).
    std::vector<std::vector<std::size_t>> comparable_sets;
    double comparable_ranking_weight = 0;
    std::uint64_t seed = 1;
    FormulaContext formula; // the GPU the runtimes were measured on; the formula trained for
    // The cost-formula version the starting weights were trained for: the
    // "before" figures judge them with its terms (a format-1 file's weights
    // know nothing of formula 2's serial chain).
    int initial_formula_version = kCostFormulaVersion;
    // Called after each epoch with (epoch, mean training batch loss); may be empty.
    void (*progress)(int epoch, double loss, void *user) = nullptr;
    void *progress_user = nullptr;
};

// Ranking quality over a set of samples: means over pipelines with >= 2 samples.
struct RankingQuality {
    double loss = 0; // mean batch loss (one batch per pipeline)
    double spearman = 0;
    double kendall = 0;
    double best_predicted_slowdown = 0; // measured(predicted best) / measured best - 1
    int pipelines = 0;
    int samples = 0;
};

struct TrainingReport {
    RankingQuality train_before, train_after;
    RankingQuality validation_before, validation_after;
    int epochs = 0;
    int steps = 0;
};

// Quality of weights on all samples of data (no split).
RankingQuality evaluate_ranking(const NetworkWeights &weights, const std::vector<PipelineSamples> &data,
                                const FormulaContext &ctx, double negative_penalty = 0);

TrainingReport train_network(NetworkWeights &weights, const std::vector<PipelineSamples> &data,
                             const TrainingOptions &options);

// The network's predicted runtime (ms) of each of samples' states: what
// the search's cost model says of them with these weights.
std::vector<double> predict_runtimes(const NetworkWeights &weights, const PipelineSamples &samples,
                                     const FormulaContext &ctx);

// One line per quality, for logs and provenance strings.
std::string describe(const RankingQuality &q);

} // namespace gpusched
