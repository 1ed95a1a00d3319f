#pragma once
// Does retraining learn? (`gpusched learning`, issue 31.) From the measured
// Autotune batches of one device in one or more sample databases:
//
//  - hold-one-out: for each pipeline, the starting weights retrained on the
//    other pipelines' samples only, then both models judged on that
//    pipeline's batches, which neither was trained on: Kendall's tau,
//    pairwise ordering accuracy, the model's pick against the batch's best
//    (Anderson et al. 2021, figure 8) and TenSet's top-1 / top-5 scores;
//  - the learning curve: the same, trained on only the first k
//    batches of every other pipeline (k = 1, 2, 4, 8) of the same device:
//    how many batches of other pipelines the model needs before its
//    ranking holds (all on one device: not a transfer between devices);
//  - Autotune's own loop: each later batch of a run judged by the starting
//    weights retrained on the run's earlier batches (what the next batch's
//    search would use) against the starting weights.
//
// Each batch is judged on its own because a batch is what the model ranks
// in use (Autotune's next batch, Top 5's candidates); figures are means
// over a pipeline's batches, then over pipelines (the pick's slowdown, a
// ratio, geometric over pipelines). Training is the product's
// own (tuner/modes/retrain.h's options: the same loss, epochs and rate), so
// these are the figures of the retraining users get.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/gpu_profile.h"

namespace gpusched {

struct LearningOptions {
    std::vector<std::string> db_paths;
    // The measuring device; empty: the only one the databases have (several
    // are refused, naming them: times of two devices never train one model).
    std::string device;
    GpuProfile gpu;              // the GPU profile the runtimes belong to
    std::string initial_weights; // empty: the embedded defaults
    std::vector<int> curve = {1, 2, 4, 8};
    int epochs = 100;
    double anchor_weight = 0; // TrainingOptions::anchor_weight
    double learning_rate = 1e-3;
    uint64_t seed = 1;
    int jobs = 0; // trainings at once; 0: every core
};

// One model judged on one pipeline's batches: means over the batches.
struct ModelFigures {
    double kendall = 0;
    double pairwise = 0;   // share of differently timed pairs ordered right
    double pick_ratio = 1; // measured time of the model's pick / the batch's best
    double top1 = 1, top5 = 1;
};

struct PipelineLearning {
    std::string name;                // generator name, and its params when it has any
    int samples = 0;                 // measured samples with featurizations
    int batches = 0;                 // judged (two or more samples each)
    double average_sample_ratio = 1; // mean sample / batch best, model-free
    int trained_on = 0;              // samples of the other pipelines (hold-one-out)
    ModelFigures start, held_out;
    std::vector<std::optional<ModelFigures>> curve; // per LearningOptions::curve; none: no data that far
    // Autotune's own retraining (--train-on run): each batch after a run's
    // first judged by the starting weights retrained on the run's earlier
    // batches, and by the starting weights; none without such a batch.
    std::optional<ModelFigures> in_run_start, in_run;
    int in_run_batches = 0;
    int in_run_pick_slower = 0, in_run_pick_faster = 0; // batches, beyond 1%
    // The same under --retrain if-better: the start kept where 2-fold
    // cross-validation on the earlier batches says the retraining is worse.
    std::optional<ModelFigures> in_run_if_better;
    int if_better_kept = 0;
    int if_better_pick_slower = 0, if_better_pick_faster = 0;
};

struct CurvePoint {
    int batches = 0; // of every other pipeline trained on; 0: the starting weights
    int pipelines = 0;
    int trained_on = 0;       // training samples, summed over the hold-one-out models
    bool all_batches = false; // the full hold-one-out models (batches: the most any run has)
    ModelFigures mean;
};

struct LearningReport {
    std::string device;
    std::vector<PipelineLearning> pipelines;
    ModelFigures mean_start, mean_held_out;
    std::optional<ModelFigures> mean_in_run_start, mean_in_run, mean_in_run_if_better;
    std::vector<CurvePoint> curve;             // the starting weights first
    std::optional<int> batches_to_kendall_0_6; // first curve point whose mean tau >= 0.6
    double seconds = 0;
};

LearningReport evaluate_learning(const LearningOptions &options);

} // namespace gpusched
