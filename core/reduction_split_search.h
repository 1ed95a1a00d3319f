#pragma once
// The search over reduction splits (core/reduction_split.h): which of a
// pipeline's small-output reductions to split, and into how many partials.
//
// Each choice is a different pipeline, so each is searched on its own
// FunctionDAG, built from a deep copy of the pipeline with the splits
// applied (the caller's Funcs stay untouched until a split is chosen).
// The choice is made greedily, one reduction at a time in DAG order: every
// option of that reduction, with the choices already made, is ranked by a
// greedy search (beam 1, one pass, the config's seed); the best is kept if it
// beats not splitting. An option with more partials than one thread should
// combine serially (kMaxSerialPartials) is ranked together with each split
// of its combining loop (a second level), never alone (its atomic twin,
// combining in parallel, is ranked alone); the best-ranked option with
// kSecondLevelFrom partials or more is also ranked with each such split. Where two or more options
// beat the choice so far, the two best are compared again with a beam of 8
// (one pass), with the one filling the GPU best among those whose greedy
// cost is within tie_tolerance of the best, and the best kept (where
// their costs are within tie_tolerance, the one filling more of the
// GPU; a greedy search, which refines nothing, breaks the same ties among
// its greedy costs). Then the chosen variant gets the full beam search, and
// so does the pipeline as written unless the split's full search is clearly
// cheaper (kClearWin) than the pipeline as written at the refinement's
// beam; the cheaper by the same cost model wins: splitting never makes the
// predicted cost worse than not splitting.
//
// Invariant: the model's pipeline is the unsplit DAG's again when this
// returns with no splits chosen; with splits, the caller applies them to
// its Funcs, rebuilds the DAG and sets the model's pipeline from it.

#include <limits>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/beam_search.h"
#include "core/reduction_split.h"

namespace gpusched {

// Predicted costs of a reduction's splits this close (relative) are a tie
// the cost model cannot resolve, and the split whose schedule fills more of
// the GPU wins it. The learned model's ranking regret within one pipeline is
// around 10% (docs/costmodel.md); on layer_norm it put 8 partials a row
// 0.3-2.9% ahead of 32 (beam and greedy samples), which leave half the GPU
// idle and which the analytic model judges 1.2-1.3x slower.
inline constexpr double kSplitTieTolerance = 0.05;

struct ReductionSplitChoice {
    std::vector<ReductionSplit> splits; // empty: the pipeline as written
    SearchResult result;                // the full search of the chosen variant
    nlohmann::json decisions;           // result.decisions by Func name (search_record.h)
    int variants_ranked = 0;            // greedy searches of split variants
    int variants_refined = 0;           // small-beam searches of the two best of a reduction
    // States featurized by every search this made (the pipeline as written
    // and every split variant, each search once): the call's whole count,
    // where result.stats has the chosen pipeline's full search only.
    int64_t states_featurized_all = 0;
    // The pipeline as written: its full search's cost (NaN where a split
    // won clearly enough that it got none) and its cost at the
    // refinement's beam (NaN where no split got a full search).
    double unsplit_cost = std::numeric_limits<double>::quiet_NaN();
    double unsplit_refined_cost = std::numeric_limits<double>::quiet_NaN();
    // Wall seconds: greedy rankings, small-beam refinements, the chosen variant's full search.
    double seconds_ranking = 0, seconds_refining = 0, seconds_final = 0;
    // Every variant ranked, in the order tried: {"func", "splits", "greedy_cost"}
    // (the record's reduction_split_search.ranking: why a split won or lost).
    nlohmann::json ranking = nlohmann::json::array();
    // Each reduction whose best were compared again: {"func",
    // "greedy_costs", "refined_costs", "fills", "picked"} (an index into those
    // lists): the two best that combine nowhere in block, then any in-block
    // variant among the two best, then the best-filling variant whose greedy
    // cost ties the best, where it is none of those.
    nlohmann::json refinements = nlohmann::json::array();
    // Where an in-block split was picked: the choice made without in-block
    // combining ({"splits", "refined_cost", "with_refined_cost",
    // "full_searches": [{"in_block", "cost"}], "kept"}). Both complete
    // choices are costed at the refinement's beam; the clearly cheaper one
    // there, or both where they are close, get the full search, and the
    // cheapest result is kept. Null otherwise. The counts and seconds above
    // include that choice's rankings and refinements.
    nlohmann::json without_in_block;
};

// A split whose full search's cost is below the pipeline as written's cost
// at the refinement's beam by this factor or more wins without the pipeline
// as written getting a full search of its own. On the standard set (session
// 29) the full search of the pipeline as written came within 0.95-1.06x of
// its refinement's cost, where the splits won by 7x to 213x.
inline constexpr double kClearWin = 2.0;

// Which of the refined candidates ({cost, fill}: the least fill of the
// significant kernels that compute the reduction or its intermediates) a
// reduction keeps: the cheapest, unless another within tie_tolerance of its
// cost (relative) fills more of the GPU (fills above 1 count as 1); among
// equal fills, the cheaper.
size_t pick_refined(const std::vector<std::pair<double, double>> &refined, double tie_tolerance);

// The whole search of a pipeline that may have reductions to split: dag is
// the pipeline as written (its full search is the result where no split
// wins; the result's decisions then index dag's nodes). atomic_combining:
// offer atomic combining updates; in_block_combining: second levels that
// combine in block. tie_tolerance: PluginConfig::split_tie_tolerance.
ReductionSplitChoice search_reduction_splits(const std::vector<Halide::Internal::Function> &outputs,
                                             const FunctionDAG &dag, CostModel &model, const GpuProfile &gpu,
                                             const SearchConfig &config, bool atomic_combining = true,
                                             bool in_block_combining = true,
                                             double tie_tolerance = kSplitTieTolerance);

} // namespace gpusched
