#include "core/reduction_split_search.h"

#include "core/search_record.h"

namespace gpusched {

using Halide::Internal::Function;

namespace {

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
                                             const SearchResult &unsplit, CostModel &model, const GpuProfile &gpu,
                                             const SearchConfig &config) {
    ReductionSplitChoice choice;
    choice.result = unsplit;
    choice.unsplit_cost = unsplit.cost;
    const std::vector<SplittableReduction> reductions = reduction_split_options(dag, gpu);
    if (reductions.empty()) return choice;

    SearchConfig greedy = config;
    greedy.beam_size = 1;
    greedy.passes = 1;
    greedy.dropout = 0;
    std::vector<ReductionSplit> chosen;
    // The pipeline as written is dag, already the model's pipeline.
    double chosen_cost = beam_search(dag, model, gpu, greedy).cost;
    for (const SplittableReduction &r : reductions) {
        std::vector<ReductionSplit> best;  // this reduction's split(s), if any beats the choice so far
        auto rank = [&](const std::vector<ReductionSplit> &splits) {
            std::vector<ReductionSplit> variant = chosen;
            variant.insert(variant.end(), splits.begin(), splits.end());
            double cost;
            try {
                cost = search_variant(outputs, variant, model, gpu, greedy, nullptr).cost;
            } catch (const UserError &) {
                return;  // the split pipeline cannot be bounded (FunctionDAG says why)
            }
            choice.variants_ranked++;
            if (cost < chosen_cost) {
                chosen_cost = cost;
                best = splits;
            }
        };
        for (const ReductionSplit &option : r.options) {
            if (option.partials <= kMaxSerialPartials) {
                rank({option});
                continue;
            }
            // Too many partials for one thread: only with its combining loop split too.
            std::vector<ReductionSplit> variant = chosen;
            variant.push_back(option);
            std::vector<SplittableReduction> combine;
            try {
                combine = reduction_split_options(FunctionDAG(split_copy(outputs, variant)), gpu, variant);
            } catch (const UserError &) {
                continue;
            }
            for (const SplittableReduction &c : combine) {
                if (c.func != option.func) continue;
                for (const ReductionSplit &second : c.options) rank({option, second});
            }
        }
        chosen.insert(chosen.end(), best.begin(), best.end());
    }
    if (!chosen.empty()) {
        nlohmann::json decisions;
        SearchResult split = search_variant(outputs, chosen, model, gpu, config, &decisions);
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
