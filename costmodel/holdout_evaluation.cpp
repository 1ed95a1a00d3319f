#include "costmodel/holdout_evaluation.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <stdexcept>

#include "costmodel/ranking_metrics.h"
#include "db/rank_correlation.h"

namespace gpusched {

std::vector<std::vector<int>> same_step_groups(const std::vector<StateFeatures> &states, int min_group) {
    std::map<std::vector<int>, std::size_t> index;
    std::vector<std::vector<int>> groups;
    for (std::size_t i = 0; i < states.size(); ++i) {
        auto it = index.find(states[i].stage_ids);
        if (it == index.end()) {
            it = index.emplace(states[i].stage_ids, groups.size()).first;
            groups.emplace_back();
        }
        groups[it->second].push_back(static_cast<int>(i));
    }
    std::vector<std::vector<int>> kept;
    for (auto &g : groups)
        if (static_cast<int>(g.size()) >= std::max(min_group, 2)) kept.push_back(std::move(g));
    return kept;
}

namespace {

void add_group(RankingView &v, const std::vector<double> &predicted, const std::vector<double> &reference,
               const std::vector<int> &idx) {
    std::vector<double> p, r;
    for (int i : idx) {
        p.push_back(predicted[static_cast<std::size_t>(i)]);
        r.push_back(reference[static_cast<std::size_t>(i)]);
    }
    // A group with constant predictions or times orders nothing: it counts 0.
    v.spearman += db::spearman_rho(p, r).value_or(0.0);
    v.kendall += db::kendall_tau_b(p, r).value_or(0.0);
    v.slowdown += best_predicted_slowdown(p, r);
    v.groups += 1;
    v.states += static_cast<int>(idx.size());
}

void finish(RankingView &v) {
    if (v.groups == 0) return;
    v.spearman /= v.groups;
    v.kendall /= v.groups;
    v.slowdown /= v.groups;
}

} // namespace

HeldOutRanking rank_held_out(const std::vector<double> &predicted, const std::vector<double> &reference,
                             const std::vector<StateFeatures> &states, int min_group) {
    if (predicted.size() != reference.size() || predicted.size() != states.size())
        throw std::invalid_argument("rank_held_out: predicted, reference and states differ in length");
    HeldOutRanking h;
    if (states.size() >= 2) {
        std::vector<int> all(states.size());
        for (std::size_t i = 0; i < all.size(); ++i)
            all[i] = static_cast<int>(i);
        add_group(h.all, predicted, reference, all);
    }
    for (const auto &g : same_step_groups(states, min_group))
        add_group(h.same_step, predicted, reference, g);
    finish(h.all);
    finish(h.same_step);
    return h;
}

RankingView mean_view(const std::vector<RankingView> &views) {
    RankingView m;
    int n = 0;
    for (const RankingView &v : views) {
        if (v.groups == 0) continue;
        m.spearman += v.spearman;
        m.kendall += v.kendall;
        m.slowdown += v.slowdown;
        m.groups += v.groups;
        m.states += v.states;
        ++n;
    }
    if (n > 0) {
        m.spearman /= n;
        m.kendall /= n;
        m.slowdown /= n;
    }
    return m;
}

std::vector<bool> choose_held_out(const std::vector<std::string> &groups, double fraction, std::uint64_t seed,
                                  const std::vector<std::string> &names) {
    if (!(fraction >= 0 && fraction < 1))
        throw std::invalid_argument("choose_held_out: fraction must be in [0, 1)");
    if (!names.empty() && names.size() != groups.size())
        throw std::invalid_argument("choose_held_out: one name per group entry, or none");
    // Units: the distinct names of each group, each with its entries.
    std::map<std::string, std::vector<std::vector<std::size_t>>> members;
    std::map<std::pair<std::string, std::string>, std::size_t> unit_of;
    for (std::size_t i = 0; i < groups.size(); ++i) {
        auto &units = members[groups[i]];
        if (names.empty()) {
            units.push_back({i});
            continue;
        }
        auto [it, added] = unit_of.try_emplace({groups[i], names[i]}, units.size());
        if (added) units.emplace_back();
        units[it->second].push_back(i);
    }
    std::vector<bool> held(groups.size(), false);
    std::mt19937_64 rng(seed);
    for (auto &[group, units] : members) {
        if (fraction == 0 || units.size() < 2) continue;
        auto n = static_cast<std::size_t>(std::lround(fraction * static_cast<double>(units.size())));
        n = std::clamp<std::size_t>(n, 1, units.size() - 1);
        // Fisher-Yates with our own draws: std::shuffle's sequence differs
        // between standard libraries, and the split is part of a recipe.
        for (std::size_t i = units.size() - 1; i > 0; --i)
            std::swap(units[i], units[rng() % (i + 1)]);
        for (std::size_t k = 0; k < n; ++k)
            for (std::size_t i : units[k])
                held[i] = true;
    }
    return held;
}

} // namespace gpusched
