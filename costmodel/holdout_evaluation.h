#pragma once
// Ranking quality of a cost model on pipelines it was not trained on: how
// the default weights are judged against their teacher (docs/costmodel.md,
// "The default weights").
//
// Two views of one pipeline's states, predicted vs reference costs:
//  - all states: Spearman, Kendall tau-b and predicted-best slowdown over
//    every state. States sampled from a search have different numbers of
//    Funcs decided, and a state with more Funcs has more rows and costs
//    more, so this view is easy to score well on.
//  - same-step groups: states with the same stage ids in the same order
//    (the same Funcs scheduled, the same ones inlined) are the ones one
//    search step ranks against each other; metrics are computed within each
//    group of at least `min_group` states and averaged over groups with
//    equal weight. The slowdown here is the best-pick regret the search pays
//    at a step.
//
// Invariants: results are deterministic; correlations lie in [-1, 1];
// slowdowns are >= 0 when the reference costs are > 0.

#include <cstdint>
#include <string>
#include <vector>

#include "costmodel/cost_model.h"

namespace gpusched {

struct RankingView {
    double spearman = 0;
    double kendall = 0;
    double slowdown = 0; // reference cost of the predicted best / best reference cost - 1
    int groups = 0;      // sets of states the means run over (1 for "all states")
    int states = 0;      // states in those sets
};

struct HeldOutRanking {
    RankingView all;
    RankingView same_step;
};

// Indices of the states of each same-step group (stage ids equal), groups
// of at least min_group states, in order of first appearance.
std::vector<std::vector<int>> same_step_groups(const std::vector<StateFeatures> &states, int min_group);

HeldOutRanking rank_held_out(const std::vector<double> &predicted, const std::vector<double> &reference,
                             const std::vector<StateFeatures> &states, int min_group = 8);

// Mean of per-pipeline views (pipelines with no group of that view skipped);
// groups and states are summed.
RankingView mean_view(const std::vector<RankingView> &views);

// Which pipelines to hold out, whole: within each group name (e.g. "suite",
// "random"), round(fraction x n) of its n pipeline names, at least one when
// fraction > 0 and the group has two or more, chosen by a shuffle seeded
// with `seed` of the group's names in order of first appearance. Entries
// with the same group and name (a pipeline and its reduction-split variants,
// whose features differ) are held out or kept together, so no variant of a
// held-out pipeline is trained on. names empty: every entry its own name.
// true = held out.
std::vector<bool> choose_held_out(const std::vector<std::string> &groups, double fraction, std::uint64_t seed,
                                  const std::vector<std::string> &names = {});

} // namespace gpusched
