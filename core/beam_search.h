#pragma once
// Beam search over the search space (core/search_space.h), ranked by a
// CostModel (Anderson et al. 2021 sec. 4). A pass keeps the beam_size
// cheapest states after each step; later passes penalize states whose
// structural hash at depth = pass index was already expanded in an earlier
// pass (sec. 4.5). Greedy samples are beam 1, 1 pass, with random dropout.
//
// Freezing (sec. 3.2): a pre-pass offers every Func only root or inline;
// then all but the ceil(log2 N) costliest of the N Funcs with a choice keep
// the pre-pass's decisions (location and tiling) and only the rest are
// searched without restriction.
//
// Invariants: the result depends only on the DAG, the profile, the model and
// the SearchConfig (same seed => same decisions): all randomness comes from
// one std::mt19937_64 seeded with config.seed, and ties are broken by
// enumeration order. Each step's children are featurized and costed in one
// batched CostModel::evaluate call.

#include <cstdint>
#include <string>
#include <vector>

#include "common/gpu_profile.h"
#include "core/function_dag.h"
#include "core/schedule_decisions.h"
#include "core/search_defaults.h"
#include "core/search_space.h"
#include "costmodel/cost_model.h"

namespace gpusched {

struct SearchConfig {
    int beam_size = kDefaultBeamSize;
    int passes = kDefaultPasses;
    uint64_t seed = 0;
    double dropout = 0;  // probability of dropping each costed child (one always survives)
    bool memoize = true; // sec. 3.3: reuse kernel featurizations
    // sec. 3.1/4.4: bucket each step's children by structural hash at depth
    // pass + 1 and featurize only ceil(log2(B)) random members of a bucket
    // of B (at least one).
    bool hierarchical_sampling = true;
    // The sampling depth grows with the pass up to this cap (3: which loops
    // are split, sizes free; docs/search.md says why).
    int sampling_max_depth = 3;
    // sec. 3.2: pre-pass over root/inline options, then freeze the decisions
    // of all but the ceil(log2 N) costliest Funcs.
    bool freezing = true;
    // Freezing applies only to pipelines with at least this many Funcs (0:
    // always). It exists to make large pipelines searchable; on our suite's
    // 15-35-Func pipelines it cost 1.3x-3.7x in predicted cost (harris,
    // camera_pipe, stencil_chain) while the unfrozen search stayed under
    // 10 CPU s (docs/results/search-ablation.md).
    int freezing_min_funcs = 40;
    // Whether a frozen root Func also keeps the pre-pass's tiling, or only
    // its location (root or inline) and has its tiling searched as usual.
    bool freeze_tilings = true;
    // At a root Func's tiling step its producers are scheduled in no parent
    // yet, so where the stage is a kernel of its own, its row for a tiling
    // is the same under every parent but for the state's working set at
    // root. Each option's row is costed once per search and working set;
    // a later candidate with that option is priced as its parent's cost
    // with the row replaced, and featurized only if the beam selects it
    // (issue 30).
    bool reuse_tiling_rows = true;
    // At a Func's location step every candidate's loop nest is its parent's
    // (where the Func and those after it are unscheduled) with the Func
    // added: the first candidate's build keeps what the Funcs before it
    // made, and each later candidate's is made from that
    // (LoopNest::rebuild_adding). The same nests; only the time changes
    // (issue 30).
    bool reuse_parent_nest = true;
    // Offer an intermediate's Block placements (at its location step) and
    // its Root tilings (at its last stage's tiling step) also with each
    // dimension its readers walk stored innermost (core/storage_layout.h;
    // issue 59).
    bool search_layouts = true;
    // With search_layouts: each such Block placement also with its shared
    // tile padded against bank conflicts (FuncDecision::pad_shared). Off by
    // default: offered beside every tiling at the location step, the padded
    // tiles displaced states of the beam (learned_demosaic's beam pick
    // predicted 2.25x worse, random_s5's 1.09x; docs/results/storage-layout.md).
    bool search_shared_padding = false;
    size_t memo_max_bytes = size_t(64) << 20; // LRU bound of the sec. 3.3 memo
    // The most device memory a reduction split's partials may take
    // (core/reduction_split.h).
    int64_t max_split_bytes = kDefaultMaxSplitBytes;
    // Every Func at root, its own kernel (inlined only where it must be):
    // validation's device reference, the pipeline's arithmetic on the
    // device with the simplest GPU schedule (tuner/measure/validation).
    bool root_only = false;
    PruningLimits limits;
};

// What one step of one pass did (issue 30: where a search's states come
// from). Counts are of that step alone; kept is the beam it left.
struct StepCounts {
    int pass = 0;     // -1: the freezing pre-pass
    int step = 0;     // index in the pass's step order
    std::string func; // the step's Func
    int phase = 0;    // 0: its location; k >= 1: the tiling of its stage k-1
    int64_t enumerated = 0, pruned_hard = 0, pruned_soft = 0, sampled_out = 0, costed = 0;
    int64_t kept = 0;
};

struct SearchStats {
    int64_t states_enumerated = 0;
    int64_t states_pruned_hard = 0;
    int64_t states_pruned_soft = 0;
    int64_t states_sampled_out = 0; // not featurized: hierarchical sampling
    int64_t states_featurized = 0;
    int64_t states_costed = 0;
    // Priced from a remembered row of a root tiling step (reuse_tiling_rows),
    // not featurized; those the beam selects are featurized afterwards.
    int64_t states_priced = 0;
    int64_t memo_hits = 0;   // kernel featurizations reused (sec. 3.3)
    int64_t memo_misses = 0; // kernel featurizations computed
    int64_t memo_evictions = 0;
    // Regions of Funcs below root taken from the search's RegionMemo
    // (core/region_memo.h), or computed and remembered.
    int64_t region_memo_hits = 0, region_memo_misses = 0;
    int64_t region_memo_resets = 0; // times a table passed its bound and was emptied
    int64_t funcs_frozen = 0;       // Funcs whose pre-pass decisions were kept
    // Wall seconds per phase; enumerate includes pruning (and the loop nests
    // it builds), prepass is the freezing pre-pass (also counted in the
    // phases). cpu_seconds_total: the process's CPU time during the search.
    double seconds_enumerate = 0, seconds_featurize = 0, seconds_cost = 0, seconds_total = 0;
    double seconds_prepass = 0, cpu_seconds_total = 0;
    std::vector<StepCounts> steps; // per pass, per step, in the order run
};

struct SearchResult {
    Decisions decisions;
    // Per Func: kept from the freezing pre-pass (empty when freezing is off).
    std::vector<bool> frozen;
    Decisions prepass_decisions; // the pre-pass's best state (freezing only)
    double cost = 0;
    std::vector<int> stage_ids;      // dense ids of the costed stages
    std::vector<double> stage_costs; // same order
    StateFeatures features;
    SearchStats stats;
};

SearchResult beam_search(const FunctionDAG &dag, CostModel &model, const GpuProfile &gpu,
                         const SearchConfig &config);

// Features and predicted cost of a given complete state (used for replay).
SearchResult evaluate_decisions(const FunctionDAG &dag, CostModel &model, const GpuProfile &gpu,
                                const Decisions &d);

// This process's CPU time in seconds (what SearchStats::cpu_seconds_total
// counts), for callers that time more than one search.
double process_cpu_seconds();

// The pipeline features in dense stage order, for CostModel::set_pipeline.
std::vector<PipelineFeatures> pipeline_features(const FunctionDAG &dag);

} // namespace gpusched
