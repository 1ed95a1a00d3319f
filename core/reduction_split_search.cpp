#include "core/reduction_split_search.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "common/elapsed.h"
#include "core/search_record.h"

namespace gpusched {

using Halide::Internal::Function;

namespace {

// The beam with which the two best-ranked splits of a reduction are compared.
constexpr int kRefineBeam = 8;

SearchResult search_variant(const std::vector<Function> &outputs, const std::vector<ReductionSplit> &splits,
                            CostModel &model, const GpuProfile &gpu, const SearchConfig &config,
                            nlohmann::json *decisions) {
    FunctionDAG dag(split_copy(outputs, splits));
    model.set_pipeline(pipeline_features(dag));
    SearchResult r = beam_search(dag, model, gpu, config);
    if (decisions) *decisions = decisions_to_json(dag, r.decisions);
    return r;
}

} // namespace

ReductionSplitChoice search_reduction_splits(const std::vector<Function> &outputs, const FunctionDAG &dag,
                                             const SearchResult &unsplit, CostModel &model,
                                             const GpuProfile &gpu, const SearchConfig &config,
                                             bool atomic_combining) {
    ReductionSplitChoice choice;
    choice.result = unsplit;
    choice.unsplit_cost = unsplit.cost;
    const std::vector<SplittableReduction> reductions =
        reduction_split_options(dag, gpu, {}, atomic_combining);
    if (reductions.empty()) return choice;

    SearchConfig greedy = config;
    greedy.beam_size = 1;
    greedy.passes = 1;
    greedy.dropout = 0;
    std::vector<ReductionSplit> chosen;
    // The pipeline as written is dag, already the model's pipeline.
    double chosen_cost = beam_search(dag, model, gpu, greedy).cost;
    // The two best greedy rankings of a reduction are searched again with a
    // small beam: a greedy search's tiling of a split pipeline can be far
    // from its best (a two-level whole-image sum: 0.09 greedy, 0.07 at
    // beam 32, while a one-level split it lost to by greedy is 0.51 either
    // way under the analytic model), and which split wins decides how much
    // of the GPU the schedule fills.
    SearchConfig refine = greedy;
    refine.beam_size = std::min(config.beam_size, kRefineBeam);
    for (const SplittableReduction &r : reductions) {
        std::vector<std::pair<double, std::vector<ReductionSplit>>>
            ranked; // greedy cost, this reduction's split(s)
        auto rank = [&](const std::vector<ReductionSplit> &splits) {
            std::vector<ReductionSplit> variant = chosen;
            variant.insert(variant.end(), splits.begin(), splits.end());
            const auto t0 = std::chrono::steady_clock::now();
            std::optional<double> cost;
            try {
                cost = search_variant(outputs, variant, model, gpu, greedy, nullptr).cost;
            } catch (const UserError &) {
                // the split pipeline cannot be bounded (FunctionDAG says why)
            }
            choice.seconds_ranking += seconds_since(t0);
            if (!cost) return;
            ranked.emplace_back(*cost, splits);
            choice.variants_ranked++;
        };
        // Each split of option's combining loop (a second level), ranked.
        auto rank_second_levels = [&](const ReductionSplit &option) {
            std::vector<ReductionSplit> variant = chosen;
            variant.push_back(option);
            std::vector<SplittableReduction> combine;
            try {
                combine = reduction_split_options(FunctionDAG(split_copy(outputs, variant)), gpu, variant);
            } catch (const UserError &) {
                return;
            }
            for (const SplittableReduction &c : combine) {
                if (c.func != option.func) continue;
                for (const ReductionSplit &second : c.options)
                    rank({option, second});
            }
        };
        for (const ReductionSplit &option : r.options) {
            // Too many partials for one thread: only with its combining loop split too.
            if (option.atomic || option.partials <= kMaxSerialPartials)
                rank({option});
            else
                rank_second_levels(option);
        }
        // Fewer, but still a long serial chain in the combining thread: the
        // best such one-level split is also tried with its combining loop
        // split (the best only: every one of them costs a greedy search per
        // second-level option, and the random pipelines' search took 2.5x
        // as long when all were tried).
        const std::pair<double, std::vector<ReductionSplit>> *best_long = nullptr;
        for (const auto &entry : ranked) {
            if (entry.second.size() != 1 || entry.second[0].atomic ||
                entry.second[0].partials < kSecondLevelFrom)
                continue;
            if (!best_long || entry.first < best_long->first) best_long = &entry;
        }
        if (best_long) {
            const ReductionSplit option = best_long->second[0]; // a copy: rank() grows `ranked`
            rank_second_levels(option);
        }
        for (const auto &[cost, splits] : ranked)
            choice.ranking.push_back(
                {{"func", r.func}, {"splits", reduction_splits_to_json(splits)}, {"greedy_cost", cost}});
        std::stable_sort(ranked.begin(), ranked.end(),
                         [](const auto &a, const auto &b) { return a.first < b.first; });
        while (!ranked.empty() && !(ranked.back().first < chosen_cost))
            ranked.pop_back();
        if (ranked.empty()) continue; // no split of this reduction beats the choice so far
        size_t pick = 0;
        if (ranked.size() >= 2 && refine.beam_size > 1) {
            double best_refined = 0;
            nlohmann::json refined_costs = nlohmann::json::array();
            for (size_t i = 0; i < 2; i++) {
                std::vector<ReductionSplit> variant = chosen;
                variant.insert(variant.end(), ranked[i].second.begin(), ranked[i].second.end());
                const auto t0 = std::chrono::steady_clock::now();
                const double refined = search_variant(outputs, variant, model, gpu, refine, nullptr).cost;
                choice.seconds_refining += seconds_since(t0);
                choice.variants_refined++;
                refined_costs.push_back(refined);
                if (i == 0 || refined < best_refined) {
                    best_refined = refined;
                    pick = i;
                }
            }
            choice.refinements.push_back({{"func", r.func},
                                          {"greedy_costs", {ranked[0].first, ranked[1].first}},
                                          {"refined_costs", refined_costs},
                                          {"picked", pick}});
        }
        chosen_cost = ranked[pick].first;
        chosen.insert(chosen.end(), ranked[pick].second.begin(), ranked[pick].second.end());
    }
    if (!chosen.empty()) {
        nlohmann::json decisions;
        const auto t0 = std::chrono::steady_clock::now();
        SearchResult split = search_variant(outputs, chosen, model, gpu, config, &decisions);
        choice.seconds_final = seconds_since(t0);
        if (split.cost < unsplit.cost) {
            choice.splits = chosen;
            choice.result = std::move(split);
            choice.decisions = std::move(decisions);
            return choice;
        }
    }
    model.set_pipeline(pipeline_features(dag));
    return choice;
}

} // namespace gpusched
