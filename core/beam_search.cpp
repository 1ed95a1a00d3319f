#include "core/beam_search.h"

#include <algorithm>
#include <cmath>
#include <chrono>
#include <map>
#include <random>
#include <set>
#include <stdexcept>

#include "core/featurize_schedule.h"
#include "core/loop_nest.h"

namespace gpusched {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Portable uniform double in [0, 1) from the generator (std::uniform_real
// distribution's algorithm is implementation-defined).
double uniform01(std::mt19937_64 &rng) { return static_cast<double>(rng() >> 11) * (1.0 / 9007199254740992.0); }

struct State {
    Decisions d;
    double cost = 0;
    double ranked_cost = 0;
    std::vector<double> stage_costs;
    std::shared_ptr<const StateFeatures> features;
};

} // namespace

std::vector<PipelineFeatures> pipeline_features(const FunctionDAG &dag) {
    std::vector<PipelineFeatures> v;
    for (const Node &n : dag.nodes)
        for (const Stage &s : n.stages) v.push_back(s.features);
    return v;
}

SearchResult evaluate_decisions(const FunctionDAG &dag, CostModel &model, const GpuProfile &gpu, const Decisions &d) {
    SearchResult r;
    r.decisions = d;
    LoopNest nest(dag, d);
    r.features = featurize(nest, gpu);
    std::vector<double> costs;
    std::vector<std::vector<double>> per_stage;
    model.evaluate({&r.features}, costs, &per_stage);
    r.cost = costs.at(0);
    r.stage_ids = r.features.stage_ids;
    r.stage_costs = per_stage.at(0);
    return r;
}

SearchResult beam_search(const FunctionDAG &dag, CostModel &model, const GpuProfile &gpu, const SearchConfig &config) {
    auto t_start = Clock::now();
    SearchStats stats;
    std::mt19937_64 rng(config.seed);
    const int steps = num_steps(dag);
    const int beam_size = std::max(1, config.beam_size);
    const int passes = std::max(1, config.passes);

    std::map<uint64_t, int> expanded_in_earlier_passes;  // structural hash -> times
    FeatureMemo memo;

    bool have_best = false;
    State best;
    for (int pass = 0; pass < passes; pass++) {
        std::vector<State> beam(1);
        beam[0].d = initial_decisions(dag);
        std::map<uint64_t, int> expanded_this_pass;
        for (int step = 0; step < steps; step++) {
            StepId id = step_at(dag, step);
            auto t0 = Clock::now();
            std::vector<State> children;
            if (!config.hierarchical_sampling) {
                for (const State &s : beam) {
                    expanded_this_pass[structural_hash(s.d, pass)]++;
                    EnumerationStats es;
                    for (Decisions &c : enumerate_children(dag, s.d, id, gpu, config.limits, &es)) {
                        State ch;
                        ch.d = std::move(c);
                        children.push_back(std::move(ch));
                    }
                    stats.states_enumerated += es.enumerated;
                    stats.states_pruned_hard += es.pruned_hard;
                    stats.states_pruned_soft += es.pruned_soft;
                }
            } else {
                // Hierarchical sampling (sec. 3.1, 4.4): bucket all candidates
                // of the step by structural hash at depth pass + 1, and from a
                // bucket of B take ceil(log2 B) (at least 1) random members that
                // pass pruning. Pruning is checked lazily, in the shuffled
                // order, so unsampled candidates never cost a loop nest; a
                // bucket with too few candidates passing the soft criteria is
                // topped up with ones that fail only those.
                std::vector<Decisions> cands;
                for (const State &s : beam) {
                    expanded_this_pass[structural_hash(s.d, pass)]++;
                    for (Decisions &c : enumerate_candidates(dag, s.d, id, gpu)) cands.push_back(std::move(c));
                }
                stats.states_enumerated += static_cast<int64_t>(cands.size());
                std::map<uint64_t, std::vector<size_t>> buckets;
                std::vector<uint64_t> bucket_order;
                for (size_t i = 0; i < cands.size(); i++) {
                    uint64_t h = structural_hash(cands[i], pass + 1);
                    auto &b = buckets[h];
                    if (b.empty()) bucket_order.push_back(h);
                    b.push_back(i);
                }
                std::vector<bool> keep(cands.size(), false);
                for (uint64_t h : bucket_order) {
                    std::vector<size_t> &b = buckets[h];
                    size_t want = std::max<size_t>(1, static_cast<size_t>(std::ceil(std::log2(static_cast<double>(b.size())))));
                    for (size_t q = 0; q + 1 < b.size(); q++) {
                        size_t r = q + static_cast<size_t>(rng() % (b.size() - q));
                        std::swap(b[q], b[r]);
                    }
                    size_t ok = 0;
                    std::vector<size_t> soft;
                    size_t q = 0;
                    for (; q < b.size() && ok < want; q++) {
                        Verdict v = classify_candidate(dag, cands[b[q]], id, gpu, config.limits);
                        if (v == Verdict::Ok) {
                            keep[b[q]] = true;
                            ok++;
                        } else if (v == Verdict::Soft) {
                            soft.push_back(b[q]);
                        } else {
                            stats.states_pruned_hard++;
                        }
                    }
                    for (size_t f = 0; f < soft.size(); f++) {
                        if (ok < want) {
                            keep[soft[f]] = true;
                            ok++;
                        } else {
                            stats.states_pruned_soft++;
                        }
                    }
                    stats.states_sampled_out += static_cast<int64_t>(b.size() - q);
                }
                for (size_t i = 0; i < cands.size(); i++) {
                    if (!keep[i]) continue;
                    State ch;
                    ch.d = std::move(cands[i]);
                    children.push_back(std::move(ch));
                }
            }
            if (children.empty()) {
                // Every candidate was pruned (not expected: the untiled root
                // location always passes); this pass has no complete state.
                beam.clear();
                break;
            }
            stats.seconds_enumerate += since(t0);

            // Steps that do not change a state (pass-through) need no costing
            // when the beam already holds costed states.
            auto t1 = Clock::now();
            std::vector<const StateFeatures *> batch;
            for (State &c : children) {
                LoopNest nest(dag, c.d);
                c.features = std::make_shared<const StateFeatures>(featurize(nest, gpu, config.memoize ? &memo : nullptr));
                stats.states_featurized++;
                batch.push_back(c.features.get());
            }
            stats.seconds_featurize += since(t1);
            auto t2 = Clock::now();
            std::vector<double> costs;
            std::vector<std::vector<double>> per_stage;
            model.evaluate(batch, costs, &per_stage);
            stats.states_costed += static_cast<int64_t>(batch.size());
            stats.seconds_cost += since(t2);
            for (size_t i = 0; i < children.size(); i++) {
                children[i].cost = costs[i];
                children[i].stage_costs = per_stage.size() > i ? per_stage[i] : std::vector<double>{};
                // Avoid known states (sec. 4.5): structures expanded in earlier
                // passes are ranked as if they cost more, once per time seen.
                double penalty = 1;
                if (pass > 0) {
                    auto it = expanded_in_earlier_passes.find(structural_hash(children[i].d, pass));
                    if (it != expanded_in_earlier_passes.end()) penalty += it->second;
                }
                children[i].ranked_cost = costs[i] * penalty;
            }
            std::vector<size_t> order(children.size());
            for (size_t i = 0; i < order.size(); i++) order[i] = i;
            std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
                return children[a].ranked_cost < children[b].ranked_cost;
            });
            std::vector<State> next;
            for (size_t q = 0; q < order.size() && static_cast<int>(next.size()) < beam_size; q++) {
                bool last_chance = q + 1 == order.size() && next.empty();
                if (config.dropout > 0 && !last_chance && uniform01(rng) < config.dropout) continue;
                next.push_back(std::move(children[order[q]]));
            }
            beam = std::move(next);
        }
        for (auto &kv : expanded_this_pass) expanded_in_earlier_passes[kv.first] += kv.second;
        stats.memo_hits = memo.hits;
        stats.memo_misses = memo.misses;
        for (State &s : beam) {
            if (!have_best || s.cost < best.cost) {
                best = s;
                have_best = true;
            }
        }
    }
    if (!have_best) throw std::runtime_error("the search found no schedule within the pruning limits");
    SearchResult r;
    r.decisions = best.d;
    r.cost = best.cost;
    if (best.features) {
        r.features = *best.features;
        r.stage_ids = best.features->stage_ids;
    }
    r.stage_costs = best.stage_costs;
    stats.seconds_total = since(t_start);
    r.stats = stats;
    return r;
}

} // namespace gpusched
