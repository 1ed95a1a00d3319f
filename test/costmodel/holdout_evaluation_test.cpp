// Held-out ranking: same-step groups, both views of the metrics, and the
// whole-pipeline split the default weights are judged on.
#include "test/catch2_compat.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "costmodel/holdout_evaluation.h"

using namespace gpusched;

namespace {

StateFeatures state_with(std::vector<int> ids) {
    StateFeatures s;
    s.stage_ids = std::move(ids);
    s.schedule.resize(s.stage_ids.size());
    return s;
}

// Two steps of a search: 10 states deciding stage 0 only, 10 deciding 0 and 1.
std::vector<StateFeatures> two_steps() {
    std::vector<StateFeatures> v;
    for (int i = 0; i < 10; ++i)
        v.push_back(state_with({0}));
    for (int i = 0; i < 10; ++i)
        v.push_back(state_with({0, 1}));
    return v;
}

} // namespace

TEST_CASE("same-step groups gather states with equal stage ids and drop small groups", "[holdout]") {
    auto v = two_steps();
    v.push_back(state_with({1, 0})); // another order: another step's state
    const auto g = same_step_groups(v, 8);
    REQUIRE(g.size() == 2);
    CHECK(g[0].size() == 10);
    CHECK(g[1].front() == 10);
    CHECK(same_step_groups(v, 11).empty());
}

TEST_CASE("a predictor that only gets the step right scores well on all states but not within steps",
          "[holdout]") {
    const auto states = two_steps();
    std::vector<double> reference, step_only, perfect;
    for (int i = 0; i < 20; ++i) {
        const double step_cost = i < 10 ? 1.0 : 100.0;
        reference.push_back(step_cost + (i % 10));
        step_only.push_back(step_cost + (9 - i % 10)); // reversed inside each step
        perfect.push_back(2 * reference.back());
    }
    const HeldOutRanking p = rank_held_out(perfect, reference, states);
    CHECK(p.all.spearman == Approx(1));
    CHECK(p.same_step.spearman == Approx(1));
    CHECK(p.same_step.slowdown == Approx(0));
    CHECK(p.same_step.groups == 2);
    CHECK(p.same_step.states == 20);

    const HeldOutRanking s = rank_held_out(step_only, reference, states);
    CHECK(s.all.spearman > 0.4);
    CHECK(s.same_step.spearman == Approx(-1));
    CHECK(s.same_step.kendall == Approx(-1));
    // It picks the worst of each step: 10 / 1 - 1 and 109 / 100 - 1.
    CHECK(s.same_step.slowdown == Approx((9.0 + 0.09) / 2));
}

TEST_CASE("mean view skips pipelines with no groups and sums counts", "[holdout]") {
    RankingView a, b, empty;
    a.spearman = 1;
    a.groups = 2;
    a.states = 20;
    b.spearman = 0.5;
    b.slowdown = 0.2;
    b.groups = 1;
    b.states = 9;
    const RankingView m = mean_view({a, empty, b});
    CHECK(m.spearman == Approx(0.75));
    CHECK(m.slowdown == Approx(0.1));
    CHECK(m.groups == 3);
    CHECK(m.states == 29);
}

TEST_CASE("whole-pipeline hold-out takes a share of every group and keeps one to train on", "[holdout]") {
    std::vector<std::string> groups;
    for (int i = 0; i < 17; ++i)
        groups.push_back("suite");
    for (int i = 0; i < 30; ++i)
        groups.push_back("random");
    groups.push_back("lonely");
    const auto held = choose_held_out(groups, 0.25, 1);
    int suite = 0, random = 0;
    for (std::size_t i = 0; i < groups.size(); ++i) {
        if (!held[i]) continue;
        (groups[i] == "suite" ? suite : random) += groups[i] != "lonely";
        CHECK(groups[i] != "lonely");
    }
    CHECK(suite == 4);  // round(0.25 x 17)
    CHECK(random == 8); // round(0.25 x 30) = 7.5 -> 8
    CHECK(choose_held_out(groups, 0.25, 1) == held);
    CHECK(choose_held_out(groups, 0.25, 2) != held);
    const auto none = choose_held_out(groups, 0, 1);
    CHECK(std::none_of(none.begin(), none.end(), [](bool b) { return b; }));
    const auto most = choose_held_out({"a", "a"}, 0.9, 1);
    CHECK(most[0] != most[1]);
}

TEST_CASE("a pipeline and its split variants of the same name are held out or trained on together",
          "[holdout]") {
    // Twelve pipelines, the first four with two more variants each (the
    // merge tool names a variant after the pipeline it came from).
    std::vector<std::string> groups, names;
    for (int i = 0; i < 12; ++i)
        for (int v = 0; v < (i < 4 ? 3 : 1); ++v) {
            groups.push_back("suite");
            names.push_back("p" + std::to_string(i));
        }
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
        const auto held = choose_held_out(groups, 0.25, seed, names);
        std::map<std::string, std::set<bool>> fate;
        for (std::size_t i = 0; i < names.size(); ++i)
            fate[names[i]].insert(held[i]);
        int held_names = 0;
        for (const auto &[name, f] : fate) {
            INFO("seed " << seed << ", " << name);
            CHECK(f.size() == 1);
            held_names += f.count(true) ? 1 : 0;
        }
        CHECK(held_names == 3); // round(0.25 x 12 names), not a share of the 20 entries
    }
    // Every name distinct: the same choice as without names.
    std::vector<std::string> distinct;
    for (std::size_t i = 0; i < groups.size(); ++i)
        distinct.push_back("q" + std::to_string(i));
    CHECK(choose_held_out(groups, 0.25, 3, distinct) == choose_held_out(groups, 0.25, 3));
    CHECK_THROWS(choose_held_out(groups, 0.25, 3, {"too", "few"}));
}
