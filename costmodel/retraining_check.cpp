#include "costmodel/retraining_check.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>

namespace gpusched {

namespace {

// The samples of `p` at `indices`, as a pipeline of their own.
PipelineSamples subset(const PipelineSamples &p, const std::vector<int> &indices) {
    PipelineSamples out;
    out.name = p.name;
    out.stages = p.stages;
    for (int i : indices) {
        out.states.push_back(p.states[static_cast<std::size_t>(i)]);
        out.runtimes_ms.push_back(p.runtimes_ms[static_cast<std::size_t>(i)]);
    }
    return out;
}

} // namespace

RetrainingCheck cross_validate_retraining(const NetworkWeights &start,
                                          const std::vector<PipelineSamples> &data,
                                          const TrainingOptions &options, int folds) {
    if (folds < 2) throw std::invalid_argument("cross_validate_retraining: folds must be >= 2");
    // Each pipeline's samples, shuffled by the seed, dealt to the folds in turn.
    std::mt19937_64 rng(options.seed);
    std::vector<std::vector<std::vector<int>>> fold_of(data.size()); // [pipeline][fold] -> indices
    for (std::size_t p = 0; p < data.size(); ++p) {
        std::vector<int> idx(data[p].states.size());
        std::iota(idx.begin(), idx.end(), 0);
        std::shuffle(idx.begin(), idx.end(), rng);
        fold_of[p].resize(static_cast<std::size_t>(folds));
        for (std::size_t k = 0; k < idx.size(); ++k)
            fold_of[p][k % static_cast<std::size_t>(folds)].push_back(idx[k]);
    }
    FormulaContext as_trained = options.formula;
    as_trained.version = options.initial_formula_version;
    TrainingOptions train = options;
    train.validation_fraction = 0;

    RetrainingCheck check;
    check.folds = folds;
    double weighted_start = 0, weighted_retrained = 0, slow_start = 0, slow_retrained = 0;
    int judged_pipelines = 0;
    for (int f = 0; f < folds; ++f) {
        std::vector<PipelineSamples> rest, held;
        for (std::size_t p = 0; p < data.size(); ++p) {
            std::vector<int> others;
            for (int g = 0; g < folds; ++g)
                if (g != f) others.insert(others.end(), fold_of[p][g].begin(), fold_of[p][g].end());
            if (others.size() >= 2) rest.push_back(subset(data[p], others));
            if (fold_of[p][f].size() >= 2) held.push_back(subset(data[p], fold_of[p][f]));
        }
        if (held.empty() || rest.empty()) continue;
        NetworkWeights retrained = start;
        train_network(retrained, rest, train);
        const RankingQuality before = evaluate_ranking(start, held, as_trained);
        const RankingQuality after = evaluate_ranking(retrained, held, options.formula);
        ++check.judged_folds;
        check.held_out_samples += before.samples;
        weighted_start += before.kendall * before.pipelines;
        weighted_retrained += after.kendall * after.pipelines;
        slow_start += before.best_predicted_slowdown * before.pipelines;
        slow_retrained += after.best_predicted_slowdown * after.pipelines;
        judged_pipelines += before.pipelines;
    }
    if (judged_pipelines > 0) {
        check.kendall_start = weighted_start / judged_pipelines;
        check.kendall_retrained = weighted_retrained / judged_pipelines;
        check.slowdown_start = slow_start / judged_pipelines;
        check.slowdown_retrained = slow_retrained / judged_pipelines;
    }
    return check;
}

std::string describe(const RetrainingCheck &c) {
    std::ostringstream s;
    s.precision(3);
    s << c.folds << "-fold cross-validation";
    if (!c.decided()) {
        s << ": no fold held two samples of one pipeline, nothing to judge";
        return s.str();
    }
    s << ", " << c.held_out_samples << " held-out samples: Kendall " << c.kendall_start << " before, "
      << c.kendall_retrained << " retrained; pick " << 100 * c.slowdown_start << "% over the best before, "
      << 100 * c.slowdown_retrained << "% retrained";
    return s.str();
}

} // namespace gpusched
