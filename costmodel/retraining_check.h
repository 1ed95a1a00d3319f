#pragma once
// Would retraining help? Before a retrained model replaces the one a run is
// searching with, k-fold cross-validation on the same samples asks it: for
// each fold, a copy of the starting weights is trained on the other folds
// and both are judged on the fold, within each pipeline, on held-out
// samples only: the whole order (Kendall's tau-b) and the pick (how much
// slower the sample predicted fastest is than the fastest). Autotune keeps
// its current weights when the retrained copies are worse on both: with a
// handful of samples, training can fit the noise of one batch and make the
// next batch's search worse (issue 31: on POCL, harris's tau fell from 0.50
// to 0.07 after retraining on 8 samples, and the model's pick went from the
// batch's best to 1.3-1.7x it). Either one alone is not enough: the loss
// weighs the fast end, so a retraining that sharpens the pick may reorder
// the slow samples and lower tau (test/costmodel/retraining_check_test.cpp).
//
// Measured on POCL it did not help (docs/results/retrain-policy-pocl.md):
// with 8 samples a batch each half holds 4, a copy trained on 4 is weaker
// than the retraining on 8 it stands for, and tau over 6 pairs is noise;
// so Autotune uses it only with --retrain if-better. Pooling the folds'
// predictions to judge all samples at once was tried and is worse: fold
// models differ in scale, and their pooled order fell below the start's
// even on data the retraining learns (tau 0.62 against 0.63 before, where
// judging each fold alone gives 0.89).
//
// Invariants: deterministic for a seed; the starting weights are judged with
// the cost formula they were trained for (TrainingOptions::initial_formula_version);
// a fold with no pipeline holding two held-out samples judges nothing.

#include "costmodel/training.h"

namespace gpusched {

struct RetrainingCheck {
    int folds = 0;
    int judged_folds = 0;     // folds with a pipeline of >= 2 held-out samples
    int held_out_samples = 0; // samples judged, over the judged folds
    // Means over the judged pipelines: the starting weights, and the copies
    // retrained without each fold. Slowdown: measured(predicted fastest) /
    // fastest - 1, 0 for a perfect pick.
    double kendall_start = 0, kendall_retrained = 0;
    double slowdown_start = 0, slowdown_retrained = 0;
    bool decided() const { return judged_folds > 0; }
    // Keep the starting weights: the retrained copies order the held-out
    // samples worse and pick no better.
    bool keep_start() const {
        return decided() && kendall_retrained < kendall_start && slowdown_retrained >= slowdown_start;
    }
};

// Cross-validates retraining `start` on `data` with `options` (its
// validation_fraction is ignored: the folds are the validation). folds >= 2.
RetrainingCheck cross_validate_retraining(const NetworkWeights &start,
                                          const std::vector<PipelineSamples> &data,
                                          const TrainingOptions &options, int folds = 2);

// One line for logs and provenance: "2-fold cross-validation, 8 held-out
// samples: Kendall 0.50 before, 0.07 retrained; pick 0% over the best
// before, 30% retrained".
std::string describe(const RetrainingCheck &check);

} // namespace gpusched
