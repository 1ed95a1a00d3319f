#pragma once
// One pass of the beam search (core/beam_search.h), private to its two
// halves: the pass's bookkeeping in core/beam_search.cpp (the steps, costing
// children in CostModel batches, ranking, selecting each step's beam) and
// its expansion in core/beam_expansion.cpp (the children of one parent state
// for one step: enumerated, pruned, sampled, featurized or priced). A State
// and the per-search root tiling cache are what the two share with
// beam_search(), which runs the passes.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "core/beam_search.h"
#include "core/featurize_schedule.h"
#include "core/loop_nest.h"
#include "core/sampling_buckets.h"
#include "core/search_space.h"

namespace gpusched::detail {

using Clock = std::chrono::steady_clock; // the search's timings (SearchStats::seconds_*)

// A search state. Shared pointers: a pass-through step hands its parent on
// unchanged (no copy, no featurization, no costing), and the decisions stay
// at one address for the loop nest that refers to them.
struct State {
    std::shared_ptr<const Decisions> d;
    // A child not yet selected into a beam keeps only its parent's decisions
    // and the step Func's new one: most children are dropped after costing,
    // and copying a whole state for each was a large part of the search's
    // allocations. materialize() builds d when the child is selected.
    std::shared_ptr<const Decisions> base;
    int changed = -1;
    FuncDecision change;
    uint64_t penalty_hash = 0; // structural hash at the penalty depth (sec. 4.5)
    double cost = 0;
    double ranked_cost = 0;
    std::shared_ptr<const std::vector<double>> stage_costs;
    std::shared_ptr<const StateFeatures> features;
    // Priced from a remembered row of its step's stage (cost set, features
    // null): featurized and costed by the model once selected.
    bool priced = false;
};

using Frozen = std::vector<std::optional<FuncDecision>>; // per Func

// Per search, per root stage: its tiling options and whether each meets the
// soft criteria (root_tiling_meets_soft), both independent of the state
// being expanded; every parent of every pass at that step shares them.
struct RootStageTilings {
    bool built = false;
    std::vector<Span> loops;                // the stage's loops over its Func's region
    RootTilingOptions options;              // root_tiling_options
    std::vector<int8_t> soft;               // per option: 1 meets, 0 fails, -1 not judged yet
    std::map<int, SamplingBuckets> buckets; // by hash depth, made when first sampled
    // Remembered rows (SearchConfig::reuse_tiling_rows). At this step the
    // stage's producers are not scheduled yet in any parent, so once a
    // candidate is seen retiled in place (`alone`: its kernel holds the
    // stage alone), every parent's candidate with option i has the same row
    // but for the state's working_set_at_root (root allocations, not the
    // tiling), and the same pruning verdict. Per option costed so far: the
    // verdict (Ok or Soft; -1: none yet) and the row's cost per working set
    // and layout (the Func's storage_innermost: its stores' coalescing
    // depends on it; a root Func's layout is added after its last tiling
    // step's options, add_layout_variants, so these rows are of the
    // definition's layout today, but nothing here relies on that).
    bool alone = false;
    struct Row {
        double working_set;
        int layout;
        double cost;
    };
    std::vector<int8_t> verdict;
    std::vector<std::vector<Row>> rows;
    std::optional<double> row(size_t i, double working_set, int layout) const {
        if (rows.empty()) return std::nullopt;
        for (const Row &r : rows[i])
            if (r.working_set == working_set && r.layout == layout) return r.cost;
        return std::nullopt;
    }
    void remember(size_t i, Verdict v, double working_set, int layout, double cost) {
        if (verdict.empty()) {
            verdict.assign(options.size(), -1);
            rows.resize(options.size());
        }
        verdict[i] = static_cast<int8_t>(v);
        if (!row(i, working_set, layout)) rows[i].push_back({working_set, layout, cost});
    }

    const SamplingBuckets &buckets_at(int depth) {
        auto it = buckets.find(depth);
        if (it == buckets.end()) it = buckets.emplace(depth, sampling_buckets(options, depth)).first;
        return it->second;
    }
};
using RootTilingCache = std::vector<std::vector<RootStageTilings>>; // [node][stage]

// One pass over every step (the pre-pass, or one of SearchConfig::passes):
// each state of the beam expanded into children, which are costed, ranked
// and selected into the next step's beam.
struct Pass {
    const FunctionDAG &dag;
    CostModel &model;
    const GpuProfile &gpu;
    const SearchConfig &config;
    std::mt19937_64 &rng;
    SearchStats &stats;
    FeatureMemo *memo;
    RegionMemo *regions;                    // shared by every nest of the search
    RootTilingCache *root_tilings;          // shared by every pass of the search
    const Frozen *frozen;                   // null: nothing frozen
    bool prepass;                           // root/inline options only (sec. 3.2)
    int index;                              // hash depths: sampling index + 1, penalty index
    const std::map<uint64_t, int> *earlier; // structures expanded in earlier passes
    std::map<uint64_t, int> *expanded;      // this pass's expansions (null: not recorded)

    std::vector<State> children;
    std::vector<size_t> fresh; // children still to be costed

    // One scratch state and its loop nest: a candidate is written into
    // `work` (the parent with the step Func's decision replaced) and the
    // nest rebuilt in place, so checking and featurizing a candidate
    // allocates almost nothing; only candidates that are kept get their
    // own copy of the decisions.
    Decisions work;
    std::unique_ptr<LoopNest> scratch;

    // In a root tiling step's expansion of one parent, every nest built
    // differs from the one before only in the step's tiling (`work` holds
    // the parent and the option): after the first build, each is retiled
    // (LoopNest::retile_root_stage), and where it was retiled in place
    // (`retiled`: its kernel holds the stage alone) only that kernel is
    // featurized, the rest taken from the features of an earlier candidate
    // of the same expansion (`retile_base`). Reset for every parent.
    bool retile_wanted = false, retile_armed = false, retiled = false, retiled_any = false;
    // At a location step (reuse_parent_nest): the step's Func, whose
    // candidates' nests after the first are made from what the first's
    // build made of the parent (the scratch's base).
    int adding_node = -1;
    bool base_built = false;
    int retile_node = -1, retile_stage = -1;
    std::shared_ptr<const StateFeatures> retile_base = nullptr;

    RootTilingScratch tiling_scratch{}; // fails_soft_without_nest's buffers

    // The parent being expanded and its structural hash at the penalty depth.
    const State *parent = nullptr;
    uint64_t parent_penalty_hash = 0;

    // The pass's bookkeeping (core/beam_search.cpp).
    std::vector<State> run(std::vector<State> beam);
    void rank(State &c) const;
    void cost_pending();
    void cost(std::vector<State> &states, std::vector<size_t> &which);
    void trim(int beam_size);
    void featurize_priced(std::vector<State> &beam);

    // Its expansion (core/beam_expansion.cpp).
    void expand(const State &p, StepId id);
    bool offers_root_layouts(const State &p, StepId id) const;
    void add_layout_variants(const State &p, int n, size_t first);
    void expand_options(const State &p, StepId id);
    bool add_frozen_decision(const FuncDecision &frozen_decision, StepId id);
    void add_passing_options(const std::vector<FuncDecision> &opts, StepId id);
    const LoopNest &nest_for(const FuncDecision &f, int n);
    const LoopNest &nest_for_work();
    RootStageTilings &root_stage(StepId id);
    bool fails_soft_without_nest(const FuncDecision &f, StepId id);
    bool add_unless_hard(const FuncDecision &f, int n, StepId id, bool unchecked);
    bool add_work_unless_hard(int n, StepId id, bool unchecked);
    State child_of_parent(int n, const FuncDecision &change) const;
    void add_featurized(const LoopNest &nest, int n);
    void add_priced(int n, double cost);
};

} // namespace gpusched::detail
