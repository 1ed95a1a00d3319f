#include "core/reduction_split_search.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>

#include "common/elapsed.h"
#include "core/gpu_fill.h"
#include "core/search_record.h"

namespace gpusched {

using Halide::Internal::Function;

namespace {

// The beam with which the best-ranked splits of a reduction are compared.
constexpr int kRefineBeam = 8;

// Complete choices whose costs at the refinement's beam differ by more than
// this (relative) are ranked by it alone; closer ones get a full search
// each. On the standard set (session 29) the full searches reversed the
// refinement's order of the two where they were 1.3%, 2% and 7.8% apart,
// and kept it where they were 28% and 4.5x apart.
constexpr double kFinalistMargin = 0.10;

// A greedy search: beam 1, one pass, no dropout.
SearchConfig greedy_config(const SearchConfig &config) {
    SearchConfig greedy = config;
    greedy.beam_size = 1;
    greedy.passes = 1;
    greedy.dropout = 0;
    return greedy;
}

// The refinement's search: one pass at a small beam.
SearchConfig refine_config(const SearchConfig &config) {
    SearchConfig refine = greedy_config(config);
    refine.beam_size = std::min(config.beam_size, kRefineBeam);
    return refine;
}

// What makes two of one call's searches of a pipeline differ (the seed is
// the call's): beam, passes and dropout. A sample's search (beam 1, dropout)
// is not the greedy ranking's (beam 1, no dropout).
std::string search_key(const SearchConfig &config) {
    return std::to_string(config.beam_size) + "x" + std::to_string(config.passes) + " dropout " +
           std::to_string(config.dropout);
}

bool same_search(const SearchConfig &a, const SearchConfig &b) {
    return search_key(a) == search_key(b);
}

// Searches already made of a variant, by variant and configuration
// (search_key): the choice without in-block combining (made where that
// option mattered) ranks and refines mostly the same variants again, and
// the search is deterministic, so each is searched once.
struct VariantSearch {
    SearchResult result;
    nlohmann::json decisions; // result.decisions by Func name
    GpuFill fill;             // of the result
};

// The searches made, by variant and configuration, and the states they
// featurized in all.
struct VariantMemo {
    std::map<std::string, VariantSearch> searches;
    int64_t states_featurized = 0;
    DagBuildMemo dags; // the variants' DAGs differ from each other in a Func or two
    // Each variant's DAG, built once: a variant is ranked, then may be
    // refined, searched in full, and listed for second levels, and building
    // its DAG (a deep copy of the pipeline, bounds, algorithm features) was
    // a sixth of random_s2's call when every use built it again.
    std::map<std::string, std::unique_ptr<const FunctionDAG>> variant_dags;
};

// Variant `splits`' DAG (in-block combining marked), from the memo where it
// was built before. Throws UserError where the split pipeline cannot be
// bounded (FunctionDAG says why); nothing is kept then.
const FunctionDAG &variant_dag(const std::vector<Function> &outputs,
                               const std::vector<ReductionSplit> &splits, VariantMemo &memo) {
    const std::string key = reduction_splits_to_json(splits).dump();
    if (auto known = memo.variant_dags.find(key); known != memo.variant_dags.end()) return *known->second;
    auto dag = std::make_unique<FunctionDAG>(split_copy(outputs, splits), &memo.dags);
    mark_in_block_combining(*dag, splits);
    return *memo.variant_dags.emplace(key, std::move(dag)).first->second;
}

// The least fill among the significant kernels that compute a stage of
// these Funcs (1 where none does): how much of the GPU one reduction's
// split leaves busy, whatever the other reductions' kernels do.
double fill_of_funcs(const GpuFill &fill, const std::vector<std::string> &funcs) {
    double least = 1;
    for (const KernelFill &k : fill.kernels) {
        if (k.work_share < GpuFill::kSignificantShare) continue;
        const bool computes = std::any_of(k.stages.begin(), k.stages.end(), [&](const std::string &stage) {
            const std::string func = stage.substr(0, stage.find(".update("));
            return std::find(funcs.begin(), funcs.end(), func) != funcs.end();
        });
        if (computes) least = std::min(least, k.fill);
    }
    return least;
}

// The search of a variant at config's beam, from the memo where it was made
// before (the map's entries stay where they are, so the reference lasts).
const VariantSearch &search_variant(const std::vector<Function> &outputs,
                                    const std::vector<ReductionSplit> &splits, CostModel &model,
                                    const GpuProfile &gpu, const SearchConfig &config, VariantMemo &memo) {
    const std::string key = search_key(config) + " " + reduction_splits_to_json(splits).dump();
    if (auto known = memo.searches.find(key); known != memo.searches.end()) return known->second;
    const FunctionDAG &dag = variant_dag(outputs, splits, memo);
    model.set_pipeline(pipeline_features(dag));
    VariantSearch v;
    v.result = beam_search(dag, model, gpu, config);
    v.decisions = decisions_to_json(dag, v.result.decisions);
    v.fill = gpu_fill(dag, v.result.decisions, v.result.features, gpu);
    memo.states_featurized += v.result.stats.states_featurized;
    return memo.searches.emplace(key, std::move(v)).first->second;
}

// The splits ranking and refinement choose (before any full search), and
// whether some reduction's pick combines in block.
struct SplitPlan {
    std::vector<ReductionSplit> chosen;
    bool picked_in_block = false;
};

// Ranks and refines every reduction's splits, one reduction at a time,
// against the pipeline as written (its greedy cost), adding to choice's
// counts, seconds, ranking and refinements.
SplitPlan plan_splits(const std::vector<Function> &outputs, const FunctionDAG &dag,
                      const std::vector<SplittableReduction> &reductions, CostModel &model,
                      const GpuProfile &gpu, const SearchConfig &config, bool atomic_combining,
                      bool in_block_combining, double tie_tolerance, double unsplit_greedy_cost,
                      VariantMemo &memo, ReductionSplitChoice &choice);

} // namespace

size_t pick_refined(const std::vector<std::pair<double, double>> &refined, double tie_tolerance) {
    size_t cheapest = 0;
    for (size_t i = 1; i < refined.size(); i++)
        if (refined[i].first < refined[cheapest].first) cheapest = i;
    size_t pick = cheapest;
    const double within = refined[cheapest].first * (1 + tie_tolerance);
    for (size_t i = 0; i < refined.size(); i++) {
        const double fill = std::min(1.0, refined[i].second),
                     picked_fill = std::min(1.0, refined[pick].second);
        if (refined[i].first <= within &&
            (fill > picked_fill || (fill == picked_fill && refined[i].first < refined[pick].first)))
            pick = i;
    }
    return pick;
}

ReductionSplitChoice search_reduction_splits(const std::vector<Function> &outputs, const FunctionDAG &dag,
                                             CostModel &model, const GpuProfile &gpu,
                                             const SearchConfig &config, bool atomic_combining,
                                             bool in_block_combining, double tie_tolerance) {
    ReductionSplitChoice choice;
    // The pipeline as written, searched on dag itself (its decisions index
    // dag's nodes), once per configuration.
    std::map<std::string, SearchResult> unsplit_memo;
    auto search_unsplit = [&](const SearchConfig &c) -> const SearchResult & {
        const std::string key = search_key(c);
        if (auto known = unsplit_memo.find(key); known != unsplit_memo.end()) return known->second;
        model.set_pipeline(pipeline_features(dag));
        const SearchResult &r = unsplit_memo.emplace(key, beam_search(dag, model, gpu, c)).first->second;
        choice.states_featurized_all += r.stats.states_featurized;
        return r;
    };
    const std::vector<SplittableReduction> reductions =
        reduction_split_options(dag, gpu, {}, atomic_combining, true, config.max_split_bytes);
    if (reductions.empty()) {
        choice.result = search_unsplit(config);
        choice.unsplit_cost = choice.result.cost;
        return choice;
    }

    VariantMemo memo;
    const SearchConfig refine = refine_config(config);
    const double unsplit_greedy_cost = search_unsplit(greedy_config(config)).cost;
    const SplitPlan plan = plan_splits(outputs, dag, reductions, model, gpu, config, atomic_combining,
                                       in_block_combining, tie_tolerance, unsplit_greedy_cost, memo, choice);
    std::vector<std::vector<ReductionSplit>> finalists = {plan.chosen};
    // An in-block pick changes what the later reductions are ranked with,
    // and a small beam's ranking is not the full search's: the choice can
    // end worse than the search without the option would have (random_s2:
    // 0.164 then 0.184; softmax under the analytic model 0.0437 then
    // 0.0450). So then the choice without it is made too (its searches of
    // the same variants from the memo), and the cheaper is kept.
    if (in_block_combining && plan.picked_in_block) {
        ReductionSplitChoice without_counts;
        const SplitPlan without =
            plan_splits(outputs, dag, reductions, model, gpu, config, atomic_combining, false, tie_tolerance,
                        unsplit_greedy_cost, memo, without_counts);
        choice.variants_ranked += without_counts.variants_ranked;
        choice.variants_refined += without_counts.variants_refined;
        choice.seconds_ranking += without_counts.seconds_ranking;
        choice.seconds_refining += without_counts.seconds_refining;
        choice.without_in_block = {{"splits", reduction_splits_to_json(without.chosen)}};
        if (without.chosen != plan.chosen && !without.chosen.empty()) {
            // Both complete choices at the refinement's beam (the last
            // reduction's refinement mostly searched them already): where
            // one is clearly cheaper there, only it gets the full search;
            // where they are close, both do, and the cheaper is kept.
            const auto t0 = std::chrono::steady_clock::now();
            const double with_refined =
                             search_variant(outputs, plan.chosen, model, gpu, refine, memo).result.cost,
                         without_refined =
                             search_variant(outputs, without.chosen, model, gpu, refine, memo).result.cost;
            choice.seconds_refining += seconds_since(t0);
            choice.without_in_block["refined_cost"] = without_refined;
            choice.without_in_block["with_refined_cost"] = with_refined;
            if (same_search(refine, config)) // the refinement is the full search: exact
                finalists = {with_refined <= without_refined ? plan.chosen : without.chosen};
            else if (without_refined < with_refined * (1 - kFinalistMargin))
                finalists = {without.chosen};
            else if (with_refined < without_refined * (1 - kFinalistMargin))
                finalists = {plan.chosen};
            else
                finalists = {plan.chosen, without.chosen};
        }
        // Where nothing is split without the option, its result is the
        // unsplit search's, which the finalist is compared with below.
    }
    // The full search of each finalist; the cheapest is kept.
    nlohmann::json full_searches = nlohmann::json::array();
    std::optional<SearchResult> best;
    for (const std::vector<ReductionSplit> &splits : finalists) {
        if (splits.empty()) continue;
        const auto t0 = std::chrono::steady_clock::now();
        const VariantSearch &v = search_variant(outputs, splits, model, gpu, config, memo);
        choice.seconds_final += seconds_since(t0);
        full_searches.push_back({{"in_block", splits == plan.chosen}, {"cost", v.result.cost}});
        if (!best || v.result.cost < best->cost) {
            best = v.result;
            choice.splits = splits;
            choice.decisions = v.decisions;
        }
    }
    if (choice.without_in_block.is_object()) {
        choice.without_in_block["kept"] = !choice.splits.empty() && choice.splits != plan.chosen;
        choice.without_in_block["full_searches"] = full_searches;
    }
    // The pipeline as written gets its full search too unless the split is
    // clearly cheaper than its search at the refinement's beam: on the
    // standard set the full search's cost came within 6% of the
    // refinement's (docs/search.md, "The pipeline as written").
    if (best) choice.unsplit_refined_cost = search_unsplit(refine).cost;
    if (!best || !(best->cost * kClearWin < choice.unsplit_refined_cost)) {
        const SearchResult &unsplit = search_unsplit(config);
        choice.unsplit_cost = unsplit.cost;
        if (!best || !(best->cost < unsplit.cost)) {
            choice.splits.clear();
            choice.decisions = nlohmann::json();
            best = unsplit;
        }
    }
    choice.result = std::move(*best);
    choice.states_featurized_all += memo.states_featurized;
    if (choice.splits.empty()) model.set_pipeline(pipeline_features(dag));
    return choice;
}

namespace {

// One of a reduction's split variants, ranked by its greedy search.
struct RankedSplit {
    double cost = 0;                    // greedy
    double fill = 1;                    // fill_of_funcs of the greedy schedule
    std::vector<ReductionSplit> splits; // this reduction's split(s)
};

// The Funcs whose kernels a variant's fill is taken from: the reduction's
// and its splits' intermediates.
std::vector<std::string> split_funcs(const SplittableReduction &r,
                                     const std::vector<ReductionSplit> &splits) {
    std::vector<std::string> funcs = {r.func};
    for (const ReductionSplit &split : splits)
        funcs.push_back(split.intermediate());
    return funcs;
}

bool combines_in_block(const RankedSplit &entry) {
    return std::any_of(entry.splits.begin(), entry.splits.end(),
                       [](const ReductionSplit &s) { return s.in_block(); });
}

// Which second levels rank_second_levels ranks.
using SecondLevelFilter = bool (*)(const ReductionSplit &);
bool any_second_level(const ReductionSplit &) {
    return true;
}
bool in_block_second_level(const ReductionSplit &s) {
    return s.in_block();
}
bool not_in_block_second_level(const ReductionSplit &s) {
    return !s.in_block();
}

// plan_splits' work: one reduction at a time, its split options ranked by
// greedy searches, the best refined, and the pick added to `chosen`.
class SplitPlanner {
public:
    SplitPlanner(const std::vector<Function> &outputs, CostModel &model, const GpuProfile &gpu,
                 const SearchConfig &config, bool atomic_combining, bool in_block_combining,
                 double tie_tolerance, VariantMemo &memo, ReductionSplitChoice &choice)
        : outputs(outputs), model(model), gpu(gpu), config(config), greedy(greedy_config(config)),
          refine(refine_config(config)), atomic_combining(atomic_combining),
          in_block_combining(in_block_combining), tie_tolerance(tie_tolerance), memo(memo), choice(choice) {}

    SplitPlan plan(const std::vector<SplittableReduction> &reductions, double unsplit_greedy_cost) {
        // Whether some reduction's pick combines in block: only then can the
        // choices differ from those of the search without the option.
        bool picked_in_block = false;
        double chosen_cost = unsplit_greedy_cost;
        for (const SplittableReduction &r : reductions) {
            std::vector<RankedSplit> ranked = rank_options(r);
            for (const RankedSplit &entry : ranked)
                choice.ranking.push_back({{"func", r.func},
                                          {"splits", reduction_splits_to_json(entry.splits)},
                                          {"greedy_cost", entry.cost},
                                          {"fill", entry.fill}});
            std::stable_sort(ranked.begin(), ranked.end(),
                             [](const RankedSplit &a, const RankedSplit &b) { return a.cost < b.cost; });
            while (!ranked.empty() && !(ranked.back().cost < chosen_cost))
                ranked.pop_back();
            if (ranked.empty()) continue; // no split of this reduction beats the choice so far
            const size_t pick = pick_ranked(r, ranked);
            picked_in_block = picked_in_block || combines_in_block(ranked[pick]);
            chosen_cost = ranked[pick].cost;
            chosen.insert(chosen.end(), ranked[pick].splits.begin(), ranked[pick].splits.end());
        }
        return {chosen, picked_in_block};
    }

private:
    // Every split option of r (and the second levels worth trying) ranked
    // by a greedy search on top of the splits chosen so far.
    std::vector<RankedSplit> rank_options(const SplittableReduction &r) {
        std::vector<RankedSplit> ranked;
        for (const ReductionSplit &option : r.options) {
            // Too many partials for one thread: only with its combining loop split too.
            if (option.atomic || option.partials <= kMaxSerialPartials) {
                rank(r, {option}, ranked);
                if (fills_quarter(r, option)) rank_second_levels(r, option, in_block_second_level, ranked);
            } else {
                rank_second_levels(r, option, any_second_level, ranked);
            }
        }
        // Fewer, but still a long serial chain in the combining thread: the
        // best such one-level split is also tried with its combining loop
        // split (the best only: every one of them costs a greedy search per
        // second-level option, and the random pipelines' search took 2.5x
        // as long when all were tried).
        const RankedSplit *best_long = nullptr;
        for (const RankedSplit &entry : ranked) {
            if (entry.splits.size() != 1 || entry.splits[0].atomic ||
                entry.splits[0].partials < kSecondLevelFrom)
                continue;
            if (!best_long || entry.cost < best_long->cost) best_long = &entry;
        }
        if (best_long) {
            const ReductionSplit option = best_long->splits[0]; // a copy: rank() grows `ranked`
            // Its in-block second levels are ranked above.
            if (fills_quarter(r, option))
                rank_second_levels(r, option, not_in_block_second_level, ranked);
            else
                rank_second_levels(r, option, any_second_level, ranked);
        }
        return ranked;
    }

    // The greedy search of `splits` on top of the splits chosen so far,
    // added to `ranked` where the split pipeline can be bounded.
    void rank(const SplittableReduction &r, const std::vector<ReductionSplit> &splits,
              std::vector<RankedSplit> &ranked) {
        std::vector<ReductionSplit> variant = chosen;
        variant.insert(variant.end(), splits.begin(), splits.end());
        const auto t0 = std::chrono::steady_clock::now();
        const VariantSearch *searched = nullptr;
        try {
            searched = &search_variant(outputs, variant, model, gpu, greedy, memo);
        } catch (const UserError &) {
            // the split pipeline cannot be bounded (FunctionDAG says why)
        }
        choice.seconds_ranking += seconds_since(t0);
        if (!searched) return;
        ranked.push_back(
            {searched->result.cost, fill_of_funcs(searched->fill, split_funcs(r, splits)), splits});
        choice.variants_ranked++;
    }

    // The splits of option's combining loop (a second level) that
    // `wanted` accepts, each ranked.
    void rank_second_levels(const SplittableReduction &r, const ReductionSplit &option,
                            SecondLevelFilter wanted, std::vector<RankedSplit> &ranked) {
        std::vector<ReductionSplit> variant = chosen;
        variant.push_back(option);
        std::vector<SplittableReduction> combine;
        try {
            combine = reduction_split_options(variant_dag(outputs, variant, memo), gpu, variant,
                                              atomic_combining, in_block_combining, config.max_split_bytes);
        } catch (const UserError &) {
            return;
        }
        for (const SplittableReduction &c : combine) {
            if (c.func != option.func) continue;
            for (const ReductionSplit &second : c.options)
                if (wanted(second)) rank(r, {option, second}, ranked);
        }
    }

    // The options reduction_split_options gives in-block second levels.
    bool fills_quarter(const SplittableReduction &r, const ReductionSplit &option) const {
        return in_block_combining && !option.atomic &&
               worth_combining_in_block(option.partials, r.output_points, gpu);
    }

    // Which of `ranked` (sorted by greedy cost, all cheaper than the choice
    // so far) is picked: by refinement where the search's beam allows one,
    // else by the greedy costs' tie-break.
    size_t pick_ranked(const SplittableReduction &r, const std::vector<RankedSplit> &ranked) {
        if (ranked.size() >= 2 && refine.beam_size > 1) return pick_by_refinement(r, ranked);
        if (ranked.size() >= 2) {
            // A greedy search (a sample's): no refinement, so the greedy
            // costs themselves are what a tie is broken on.
            std::vector<std::pair<double, double>> greedy_ranked;
            for (const RankedSplit &entry : ranked)
                greedy_ranked.emplace_back(entry.cost, entry.fill);
            return pick_refined(greedy_ranked, tie_tolerance);
        }
        return 0;
    }

    // The indices in `ranked` that the refinement searches again.
    std::vector<size_t> refinement_candidates(const std::vector<RankedSplit> &ranked) const {
        // The two best without in-block combining (the variants the
        // search without the option compares), and any in-block one
        // among the two best: where none of those wins, the pick is the
        // one the search without the option makes.
        std::vector<size_t> candidates;
        for (size_t i = 0; i < ranked.size() && candidates.size() < 2; i++)
            if (!combines_in_block(ranked[i])) candidates.push_back(i);
        for (size_t i = 0; i < 2; i++)
            if (combines_in_block(ranked[i])) candidates.push_back(i);
        // And the one filling the GPU best among those whose greedy cost
        // ties the best (tie_tolerance): the tie pick_refined breaks
        // may be with a variant ranked third or lower.
        std::optional<size_t> fullest;
        for (size_t i = 0; i < ranked.size(); i++)
            if (!combines_in_block(ranked[i]) && ranked[i].cost <= ranked[0].cost * (1 + tie_tolerance) &&
                (!fullest || std::min(1.0, ranked[i].fill) > std::min(1.0, ranked[*fullest].fill)))
                fullest = i;
        if (fullest && std::find(candidates.begin(), candidates.end(), *fullest) == candidates.end())
            candidates.push_back(*fullest);
        return candidates;
    }

    // The refinement's pick: the candidates searched again at the small
    // beam, the tie broken by fill (pick_refined); recorded in choice.
    size_t pick_by_refinement(const SplittableReduction &r, const std::vector<RankedSplit> &ranked) {
        const std::vector<size_t> candidates = refinement_candidates(ranked);
        nlohmann::json greedy_costs = nlohmann::json::array(), refined_costs = nlohmann::json::array(),
                       fills = nlohmann::json::array();
        std::vector<std::pair<double, double>> refined; // cost, fill_of_funcs; per candidate
        for (size_t c = 0; c < candidates.size(); c++) {
            const size_t i = candidates[c];
            std::vector<ReductionSplit> variant = chosen;
            variant.insert(variant.end(), ranked[i].splits.begin(), ranked[i].splits.end());
            const auto t0 = std::chrono::steady_clock::now();
            const VariantSearch &v = search_variant(outputs, variant, model, gpu, refine, memo);
            choice.seconds_refining += seconds_since(t0);
            choice.variants_refined++;
            const double fill = fill_of_funcs(v.fill, split_funcs(r, ranked[i].splits));
            greedy_costs.push_back(ranked[i].cost);
            refined_costs.push_back(v.result.cost);
            fills.push_back(fill);
            refined.emplace_back(v.result.cost, fill);
        }
        const size_t picked = pick_refined(refined, tie_tolerance);
        choice.refinements.push_back({{"func", r.func},
                                      {"greedy_costs", greedy_costs},
                                      {"refined_costs", refined_costs},
                                      {"fills", fills},
                                      {"picked", picked}});
        return candidates[picked];
    }

    const std::vector<Function> &outputs;
    CostModel &model;
    const GpuProfile &gpu;
    const SearchConfig &config;
    const SearchConfig greedy;
    // The two best greedy rankings of a reduction are searched again with a
    // small beam: a greedy search's tiling of a split pipeline can be far
    // from its best (a two-level whole-image sum: 0.09 greedy, 0.07 at
    // beam 32, while a one-level split it lost to by greedy is 0.51 either
    // way under the analytic model), and which split wins decides how much
    // of the GPU the schedule fills.
    const SearchConfig refine;
    const bool atomic_combining;
    const bool in_block_combining;
    const double tie_tolerance;
    VariantMemo &memo;
    ReductionSplitChoice &choice;
    std::vector<ReductionSplit> chosen; // the picks so far, reduction by reduction
};

SplitPlan plan_splits(const std::vector<Function> &outputs, const FunctionDAG &dag,
                      const std::vector<SplittableReduction> &reductions, CostModel &model,
                      const GpuProfile &gpu, const SearchConfig &config, bool atomic_combining,
                      bool in_block_combining, double tie_tolerance, double unsplit_greedy_cost,
                      VariantMemo &memo, ReductionSplitChoice &choice) {
    SplitPlanner planner(outputs, model, gpu, config, atomic_combining, in_block_combining, tie_tolerance,
                         memo, choice);
    return planner.plan(reductions, unsplit_greedy_cost);
}

} // namespace

} // namespace gpusched
