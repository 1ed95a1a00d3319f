#include "core/beam_search.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "common/elapsed.h"
#include "core/featurize_schedule.h"
#include "core/loop_nest.h"
#include "core/sampling_buckets.h"
#include "core/storage_layout.h"

namespace gpusched {

namespace {

using Clock = std::chrono::steady_clock;
double cpu_now() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Portable uniform double in [0, 1) from the generator (std::uniform_real
// distribution's algorithm is implementation-defined).
double uniform01(std::mt19937_64 &rng) {
    return static_cast<double>(rng() >> 11) * (1.0 / 9007199254740992.0);
}

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

void materialize(State &s) {
    if (s.changed < 0) return;
    auto d = std::make_shared<Decisions>(*s.base);
    d->funcs[s.changed] = std::move(s.change);
    s.d = std::move(d);
    s.base.reset();
    s.changed = -1;
}

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

    const LoopNest &nest_for(const FuncDecision &f, int n) {
        work.funcs[n] = f;
        return nest_for_work();
    }
    // The nest of `work` as it is (its step Func's decision already written).
    const LoopNest &nest_for_work() {
        retiled = false;
        if (!scratch)
            scratch = std::make_unique<LoopNest>(dag, work, regions);
        else if (retile_armed)
            retiled = scratch->retile_root_stage(retile_node, retile_stage);
        else if (adding_node >= 0 && !base_built) {
            scratch->rebuild_keeping_base(adding_node);
            base_built = true;
        } else if (adding_node >= 0)
            scratch->rebuild_adding(adding_node);
        else
            scratch->rebuild();
        retiled_any = retiled_any || retiled;
        retile_armed = retile_wanted;
        return *scratch;
    }
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

    // enumerate_options' nests of the parent with one Func's decision
    // replaced, from the scratch nest (work holds the parent meanwhile); the
    // Func is the parent's again afterwards.
    class ScratchNests final : public ParentNests {
    public:
        ScratchNests(Pass &pass, const Decisions &parent) : pass_(pass), parent_(parent) {}
        ~ScratchNests() override {
            if (changed_ >= 0) pass_.work.funcs[changed_] = parent_.funcs[changed_];
        }
        const LoopNest &with(int n, const FuncDecision &f) override {
            if (changed_ >= 0 && changed_ != n) pass_.work.funcs[changed_] = parent_.funcs[changed_];
            changed_ = n;
            return pass_.nest_for(f, n);
        }

    private:
        Pass &pass_;
        const Decisions &parent_;
        int changed_ = -1;
    };

    // At a root Func's tiling step, whether a candidate fails the soft
    // criteria, known without its nest (root_tiling_meets_soft); its hard
    // limits are then checked only if it is ever taken.
    RootTilingScratch tiling_scratch{};
    RootStageTilings &root_stage(StepId id) {
        RootTilingCache &cache = *root_tilings;
        if (cache.empty()) cache.resize(dag.nodes.size());
        std::vector<RootStageTilings> &stages = cache[id.node];
        if (stages.empty()) stages.resize(dag.nodes[id.node].stages.size());
        const int si = id.phase - 1;
        RootStageTilings &r = stages[si];
        if (!r.built) {
            const Node &node = dag.nodes[id.node];
            r.loops = dag.loop_bounds(node.stages[si], node.region);
            r.options = root_tiling_options(dag, id.node, si, gpu);
            r.soft.assign(r.options.size(), -1);
            r.built = true;
        }
        return r;
    }
    bool fails_soft_without_nest(const FuncDecision &f, StepId id) {
        if (id.phase == 0 || f.location != ComputeLocation::Root) return false;
        const size_t si = static_cast<size_t>(id.phase - 1);
        const StageTiling *t = f.tiled && si < f.stages.size() ? &f.stages[si] : nullptr;
        return !root_tiling_meets_soft(dag.nodes[id.node].stages[si], root_stage(id).loops, t, gpu,
                                       config.limits, tiling_scratch);
    }

    // Featurizes a candidate that passed pruning, or one known to fail only
    // the soft criteria without its nest (`unchecked`: its hard limits not
    // yet checked, which may refuse it). Whether it was added.
    bool add_unless_hard(const FuncDecision &f, int n, StepId id, bool unchecked) {
        work.funcs[n] = f;
        return add_work_unless_hard(n, id, unchecked);
    }
    bool add_work_unless_hard(int n, StepId id, bool unchecked) {
        const LoopNest &nest = nest_for_work();
        if (unchecked && classify_candidate(nest, id, gpu, config.limits) == Verdict::Hard) {
            stats.states_pruned_hard++;
            return false;
        }
        add_featurized(nest, n);
        return true;
    }

    // The parent being expanded and its structural hash at the penalty depth.
    const State *parent = nullptr;
    uint64_t parent_penalty_hash = 0;

    // A child of `parent` with Func n's decision replaced by `change`: its
    // decisions kept as the parent's and the one change until selected.
    State child_of_parent(int n, const FuncDecision &change) const {
        State c;
        c.base = parent->d;
        c.changed = n;
        c.change = change;
        if (earlier && index > 0)
            c.penalty_hash = parent_penalty_hash - func_structural_hash(n, parent->d->funcs[n], index) +
                             func_structural_hash(n, c.change, index);
        return c;
    }

    void add_featurized(const LoopNest &nest, int n) {
        auto t = Clock::now();
        State c = child_of_parent(n, nest.decisions.funcs[n]);
        if (retiled && retile_base)
            c.features = std::make_shared<const StateFeatures>(
                featurize_retiled(nest, gpu, memo, *retile_base, nest.stage_at[retile_node][retile_stage]));
        else
            c.features = std::make_shared<const StateFeatures>(featurize(nest, gpu, memo));
        if (retile_wanted) retile_base = c.features;
        stats.seconds_featurize += seconds_since(t);
        stats.states_featurized++;
        fresh.push_back(children.size());
        children.push_back(std::move(c));
    }

    // One stage's row in a costed state, if it has exactly one: its cost
    // and the state's working_set_at_root (every row carries it).
    struct RowOf {
        double cost, working_set;
    };
    static std::optional<RowOf> row_of(const State &s, int stage_id) {
        if (!s.features || !s.stage_costs) return std::nullopt;
        const std::vector<int> &ids = s.features->stage_ids;
        std::optional<RowOf> row;
        for (size_t r = 0; r < ids.size() && r < s.stage_costs->size(); r++) {
            if (ids[r] != stage_id) continue;
            if (row) return std::nullopt; // two rows: not a kernel of its own
            row = RowOf{(*s.stage_costs)[r], s.features->schedule[r][ScheduleFeature::working_set_at_root]};
        }
        return row;
    }

    // A child of `parent` whose step decision is work.funcs[n], priced as
    // `cost` without a nest (from a remembered row of the step's stage).
    void add_priced(int n, double cost) {
        State c = child_of_parent(n, work.funcs[n]);
        c.cost = cost;
        c.priced = true;
        rank(c);
        stats.states_priced++;
        children.push_back(std::move(c));
    }

    // The priced states the beam selected, featurized and costed by the
    // model, as every other state is when it is made.
    void featurize_priced(std::vector<State> &beam) {
        std::vector<size_t> selected;
        for (State &s : beam) {
            if (!s.priced) continue;
            auto t = Clock::now();
            work = *s.d;
            retile_wanted = retile_armed = false;
            adding_node = -1;
            s.features = std::make_shared<const StateFeatures>(featurize(nest_for_work(), gpu, memo));
            stats.seconds_featurize += seconds_since(t);
            stats.states_featurized++;
            s.priced = false;
            selected.push_back(static_cast<size_t>(&s - beam.data()));
        }
        cost(beam, selected);
    }

    // Children of one parent for one step, featurized (not yet costed) or
    // priced: the step's options, then, at the last tiling step of a root
    // Func its readers walk across, each of them again in every such layout.
    void expand(const State &p, StepId id) {
        const size_t first = children.size();
        expand_options(p, id);
        if (offers_root_layouts(p, id)) add_layout_variants(p, id.node, first);
    }

    // A root Func's layout (core/storage_layout.h) is chosen with the tiling
    // of its last stage: at its location step its stages are untiled, one
    // lane per block, whose stores cost the same in any layout, so every
    // layout a reader favours would look free there and be kept whatever
    // the tilings that follow make of its own stores (a greedy search put
    // iir_blur's scanned columns across their scan that way, predicted 6x
    // slower). Here its every stage is tiled.
    bool offers_root_layouts(const State &p, StepId id) const {
        const int n = id.node;
        return config.search_layouts && !prepass && !config.root_only &&
               p.d->funcs[n].location == ComputeLocation::Root &&
               id.phase == static_cast<int>(dag.nodes[n].stages.size()) &&
               !(frozen && (*frozen)[n] && p.d->funcs[n] == *(*frozen)[n]);
    }
    void add_layout_variants(const State &p, int n, size_t first) {
        const std::vector<int> dims = dimensions_readers_walk(dag, *p.d, n);
        if (dims.empty()) return;
        const size_t end = children.size();
        parent = &p;
        work = *p.d;
        retile_wanted = retile_armed = false;
        adding_node = -1;
        for (int dim : dims) {
            for (size_t i = first; i < end; i++) {
                if (children[i].changed != n) continue; // the parent passed through
                FuncDecision f = children[i].change;
                f.storage_innermost = dim;
                stats.states_enumerated++;
                add_featurized(nest_for(f, n), n); // the nest is the child's: the same verdict
            }
        }
    }

    void expand_options(const State &p, StepId id) {
        const int n = id.node;
        retile_wanted = retile_armed = retiled = retiled_any = false;
        retile_base.reset();
        adding_node = -1;
        const FuncDecision *fz = frozen && (*frozen)[n] ? &*(*frozen)[n] : nullptr;
        if (fz && !config.freeze_tilings && id.phase > 0) fz = nullptr; // tiling searched freely
        if (is_pass_through(*p.d, id) || (fz && id.phase > 0 && p.d->funcs[n] == *fz)) {
            stats.states_enumerated++;
            children.push_back(p); // unchanged: same features, same cost
            return;
        }
        work = *p.d; // copy-assignment: reuses the scratch's capacity
        parent = &p;
        if (earlier && index > 0) parent_penalty_hash = structural_hash(*p.d, index);
        if (fz && id.phase == 0) {
            // A frozen Func takes its pre-pass decision, tiling included, in
            // one step. If the unfrozen Funcs around it made that illegal
            // (e.g. an inlined Func now recomputes too much), it is searched
            // for this state like any other.
            stats.states_enumerated++;
            FuncDecision location_only;
            if (!config.freeze_tilings && fz->location == ComputeLocation::Root) {
                // The untiled root option, as enumerate_options offers it:
                // the tiling steps that follow choose the tiling.
                location_only.location = ComputeLocation::Root;
                location_only.tiled = true;
                for (const Stage &st : dag.nodes[n].stages)
                    location_only.stages.push_back(StageTiling{std::vector<int64_t>(st.loops.size(), 1),
                                                               std::vector<int64_t>(st.loops.size(), 1)});
                fz = &location_only;
            }
            const LoopNest &nest = nest_for(*fz, n);
            if (classify_candidate(nest, id, gpu, config.limits) != Verdict::Hard) {
                add_featurized(nest, n);
                return;
            }
            stats.states_pruned_hard++;
        }
        if (id.phase == 0 && config.reuse_parent_nest) {
            adding_node = n;
            base_built = false;
        }
        // A root tiling step's options are the same for every parent: the
        // sampled search writes each into `work` from the per-search list
        // instead of enumerating a decision per option and parent.
        RootStageTilings *rt =
            config.hierarchical_sampling && is_root_tiling_step(dag, *p.d, id) ? &root_stage(id) : nullptr;
        std::vector<FuncDecision> opts;
        if (!rt) {
            ScratchNests nests(*this, *p.d);
            opts = enumerate_options(dag, *p.d, id, gpu, prepass || config.root_only, regions, &nests,
                                     config.search_layouts, config.search_shared_padding);
        }
        if (config.root_only && id.phase == 0) {
            opts.erase(std::remove_if(opts.begin(), opts.end(),
                                      [&](const FuncDecision &f) {
                                          return f.location != ComputeLocation::Root &&
                                                 !(f.location == ComputeLocation::Inline &&
                                                   dag.nodes[n].always_inline);
                                      }),
                       opts.end());
        }
        if (rt) {
            retile_wanted = true;
            retile_node = n;
            retile_stage = id.phase - 1;
        }
        const size_t count = rt ? rt->options.size() : opts.size();
        stats.states_enumerated += static_cast<int64_t>(count);
        if (!config.hierarchical_sampling) {
            // All candidates that pass pruning; soft criteria apply only when
            // some sibling meets them.
            // A candidate known to fail the soft criteria without its nest
            // (`unchecked`) is built only where no sibling passes them.
            std::vector<Verdict> verdict(opts.size());
            std::vector<bool> unchecked(opts.size(), false);
            bool any_ok = false;
            for (size_t i = 0; i < opts.size(); i++) {
                if (fails_soft_without_nest(opts[i], id)) {
                    verdict[i] = Verdict::Soft;
                    unchecked[i] = true;
                    continue;
                }
                verdict[i] = classify_candidate(nest_for(opts[i], n), id, gpu, config.limits);
                if (verdict[i] == Verdict::Hard) stats.states_pruned_hard++;
                any_ok = any_ok || verdict[i] == Verdict::Ok;
            }
            const Verdict take = any_ok ? Verdict::Ok : Verdict::Soft;
            for (size_t i = 0; i < opts.size(); i++) {
                if (verdict[i] == take)
                    add_unless_hard(opts[i], n, id, unchecked[i]);
                else if (verdict[i] == Verdict::Soft)
                    stats.states_pruned_soft++;
            }
            return;
        }
        // Hierarchical sampling (sec. 3.1, 4.4): this parent's candidates in
        // buckets by structural hash at depth index + 1 (capped); from a bucket of B,
        // ceil(log2 B) (at least 1) random members that pass pruning.
        // Pruning is checked lazily in the shuffled order, so unsampled
        // candidates never cost a loop nest; a bucket with too few members
        // passing the soft criteria is topped up with ones failing only those.
        // Option i becomes the step Func's decision in `work`.
        const int si = id.phase - 1;
        auto select = [&](size_t i) {
            if (rt)
                rt->options.apply(i, work.funcs[n].stages[si]);
            else
                work.funcs[n] = opts[i];
        };
        // Whether the selected option i fails the soft criteria, known
        // without its nest (a root tiling's verdict is judged once per search).
        auto fails_soft = [&](size_t i) {
            if (!rt) return fails_soft_without_nest(work.funcs[n], id);
            int8_t &known = rt->soft[i];
            if (known < 0) known = fails_soft_without_nest(work.funcs[n], id) ? 0 : 1;
            return known == 0;
        };
        // Candidates failing only the soft criteria, in the order examined;
        // those known to fail them without a nest (`unchecked`) still have
        // their hard limits to check.
        std::vector<std::pair<size_t, bool>> soft; // option, unchecked
        // Options judged and costed under an earlier parent are priced
        // without a nest (add_priced): this parent's cost less its row of the
        // stage, plus the option's remembered row at this parent's working
        // set. The others are featurized as usual, their rows remembered
        // once costed (RootStageTilings::rows).
        const int stage_id = rt && config.reuse_tiling_rows ? dag.stage_id(n, id.phase - 1) : -1;
        const std::optional<RowOf> parent_row = stage_id >= 0 ? row_of(p, stage_id) : std::nullopt;
        const int layout = p.d->funcs[n].storage_innermost;
        auto priced = [&](size_t i) -> std::optional<double> {
            if (!parent_row) return std::nullopt;
            const std::optional<double> r = rt->row(i, parent_row->working_set, layout);
            if (!r) return std::nullopt;
            return p.cost - parent_row->cost + *r;
        };
        struct Featurized {
            size_t child, option;
            Verdict verdict;
        };
        std::vector<Featurized> to_remember;
        auto featurized_option = [&](size_t i, Verdict v) {
            if (parent_row) to_remember.push_back({children.size() - 1, i, v});
        };
        auto sample_bucket = [&](std::vector<size_t> &b) {
            size_t want =
                std::max<size_t>(1, static_cast<size_t>(std::ceil(std::log2(static_cast<double>(b.size())))));
            // A Fisher-Yates shuffle, taken only as far as the members
            // examined (those before position q are final after q steps);
            // the draws the rest would take are skipped, so the generator
            // ends where a whole shuffle leaves it.
            const size_t draws = b.empty() ? 0 : b.size() - 1;
            size_t drawn = 0;
            auto shuffle_to = [&](size_t q) {
                for (; drawn <= q && drawn < draws; drawn++) {
                    size_t r = drawn + static_cast<size_t>(rng() % (b.size() - drawn));
                    std::swap(b[drawn], b[r]);
                }
            };
            size_t ok = 0;
            soft.clear();
            size_t q = 0;
            for (; q < b.size() && ok < want; q++) {
                shuffle_to(q);
                select(b[q]);
                if (fails_soft(b[q])) {
                    soft.emplace_back(b[q], true);
                    continue;
                }
                if (const std::optional<double> cost = priced(b[q])) {
                    if (rt->verdict[b[q]] == static_cast<int8_t>(Verdict::Ok)) {
                        add_priced(n, *cost);
                        ok++;
                    } else {
                        soft.emplace_back(b[q], false);
                    }
                    continue;
                }
                const LoopNest &nest = nest_for_work();
                Verdict v = classify_candidate(nest, id, gpu, config.limits);
                if (v == Verdict::Ok) {
                    add_featurized(nest, n);
                    featurized_option(b[q], Verdict::Ok);
                    ok++;
                } else if (v == Verdict::Soft) {
                    soft.emplace_back(b[q], false);
                } else {
                    stats.states_pruned_hard++;
                }
            }
            for (const auto &[i, unchecked] : soft) {
                if (ok < want) {
                    select(i);
                    if (const std::optional<double> cost = priced(i)) {
                        add_priced(n, *cost);
                        ok++;
                    } else if (add_work_unless_hard(n, id, unchecked)) {
                        featurized_option(i, Verdict::Soft);
                        ok++;
                    }
                } else {
                    stats.states_pruned_soft++;
                }
            }
            rng.discard(draws - drawn);
            stats.states_sampled_out += static_cast<int64_t>(b.size() - q);
        };
        const int depth = std::min(index + 1, config.sampling_max_depth);
        if (rt) {
            const SamplingBuckets &sb = rt->buckets_at(depth);
            std::vector<size_t> b;
            for (size_t g = 0; g < sb.count(); g++) {
                b.assign(sb.members.begin() + static_cast<std::ptrdiff_t>(sb.starts[g]),
                         sb.members.begin() + static_cast<std::ptrdiff_t>(sb.starts[g + 1]));
                sample_bucket(b);
            }
            rt->alone = rt->alone || retiled_any;
            if (rt->alone && !to_remember.empty()) {
                // Only costed options are remembered: one refused for a
                // hard limit is built and refused again under each parent.
                cost_pending();
                for (const Featurized &f : to_remember) {
                    const std::optional<RowOf> row = row_of(children[f.child], stage_id);
                    if (row) rt->remember(f.option, f.verdict, row->working_set, layout, row->cost);
                }
            }
            return;
        }
        std::unordered_map<uint64_t, std::vector<size_t>> buckets;
        std::vector<uint64_t> bucket_order;
        const uint64_t rest = structural_hash(*p.d, depth) - func_structural_hash(n, p.d->funcs[n], depth);
        for (size_t i = 0; i < count; i++) {
            select(i);
            uint64_t h = rest + func_structural_hash(n, work.funcs[n], depth);
            auto &b = buckets[h];
            if (b.empty()) bucket_order.push_back(h);
            b.push_back(i);
        }
        for (uint64_t h : bucket_order)
            sample_bucket(buckets[h]);
    }

    static constexpr size_t kChunk = 2048;

    // Avoid known states (sec. 4.5): structures expanded in earlier passes
    // are ranked as if they cost more, once per time seen.
    void rank(State &c) const {
        double penalty = 1;
        if (earlier && index > 0) {
            auto it = earlier->find(c.changed >= 0 ? c.penalty_hash : structural_hash(*c.d, index));
            if (it != earlier->end()) penalty += it->second;
        }
        c.ranked_cost = c.cost * penalty;
    }

    // Costs the featurized children in one CostModel batch.
    void cost_pending() { cost(children, fresh); }

    // Costs states[i] for every i in `which` in one CostModel batch, and
    // empties `which`.
    void cost(std::vector<State> &states, std::vector<size_t> &which) {
        if (which.empty()) return;
        auto t2 = Clock::now();
        std::vector<const StateFeatures *> batch;
        batch.reserve(which.size());
        for (size_t i : which)
            batch.push_back(states[i].features.get());
        std::vector<double> costs;
        std::vector<std::vector<double>> per_stage;
        model.evaluate(batch, costs, &per_stage);
        stats.states_costed += static_cast<int64_t>(batch.size());
        for (size_t q = 0; q < which.size(); q++) {
            State &c = states[which[q]];
            c.cost = costs[q];
            c.stage_costs = std::make_shared<const std::vector<double>>(
                per_stage.size() > q ? std::move(per_stage[q]) : std::vector<double>{});
            rank(c);
        }
        which.clear();
        stats.seconds_cost += seconds_since(t2);
    }

    // Without dropout only the beam_size best-ranked children can be
    // selected: drop the rest now, keeping enumeration order among the kept
    // so the final stable sort (ties by order) selects exactly as before.
    void trim(int beam_size) {
        if (config.dropout > 0 || children.size() <= static_cast<size_t>(beam_size)) return;
        std::vector<size_t> order(children.size());
        for (size_t i = 0; i < order.size(); i++)
            order[i] = i;
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
            return children[a].ranked_cost < children[b].ranked_cost;
        });
        order.resize(beam_size);
        std::sort(order.begin(), order.end());
        std::vector<State> kept;
        kept.reserve(order.size());
        for (size_t i : order)
            kept.push_back(std::move(children[i]));
        children = std::move(kept);
    }

    std::vector<State> run(std::vector<State> beam) {
        const int steps = num_steps(dag);
        const int beam_size = std::max(1, config.beam_size);
        for (int step = 0; step < steps; step++) {
            StepId id = step_at(dag, step);
            const int64_t enumerated0 = stats.states_enumerated, hard0 = stats.states_pruned_hard,
                          soft0 = stats.states_pruned_soft, sampled0 = stats.states_sampled_out,
                          costed0 = stats.states_costed;
            auto t0 = Clock::now();
            double featurize_before = stats.seconds_featurize, cost_before = stats.seconds_cost;
            children.clear();
            fresh.clear();
            for (const State &s : beam) {
                if (expanded) (*expanded)[structural_hash(*s.d, index)]++;
                size_t before = children.size();
                expand(s, id);
                for (size_t i = before; i < children.size(); i++)
                    if (children[i].features == s.features) rank(children[i]); // passed through
                // Bounded memory on large pipelines: cost what is pending
                // every few thousand states and keep only the candidates that
                // can still be selected.
                if (fresh.size() >= kChunk) {
                    cost_pending();
                    trim(beam_size);
                }
            }
            stats.seconds_enumerate += seconds_since(t0) - (stats.seconds_featurize - featurize_before) -
                                       (stats.seconds_cost - cost_before);
            if (children.empty()) {
                // Every candidate was pruned (not expected: the untiled root
                // location always passes); this pass has no complete state.
                return {};
            }
            cost_pending();
            std::vector<size_t> order(children.size());
            for (size_t i = 0; i < order.size(); i++)
                order[i] = i;
            std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
                return children[a].ranked_cost < children[b].ranked_cost;
            });
            std::vector<State> next;
            for (size_t q = 0; q < order.size() && static_cast<int>(next.size()) < beam_size; q++) {
                bool last_chance = q + 1 == order.size() && next.empty();
                if (config.dropout > 0 && !last_chance && uniform01(rng) < config.dropout) continue;
                next.push_back(std::move(children[order[q]]));
            }
            for (State &s : next)
                materialize(s);
            featurize_priced(next);
            beam = std::move(next);
            StepCounts c;
            c.pass = prepass ? -1 : index;
            c.step = step;
            c.func = dag.nodes[id.node].func.name();
            c.phase = id.phase;
            c.enumerated = stats.states_enumerated - enumerated0;
            c.pruned_hard = stats.states_pruned_hard - hard0;
            c.pruned_soft = stats.states_pruned_soft - soft0;
            c.sampled_out = stats.states_sampled_out - sampled0;
            c.costed = stats.states_costed - costed0;
            c.kept = static_cast<int64_t>(beam.size());
            stats.steps.push_back(std::move(c));
        }
        return beam;
    }
};

const State *cheapest(const std::vector<State> &beam) {
    const State *best = nullptr;
    for (const State &s : beam)
        if (!best || s.cost < best->cost) best = &s;
    return best;
}

// Sec. 3.2: keep unfrozen the ceil(log2 N) Funcs of the pre-pass's best state
// with the highest predicted cost (their stages' costs summed, an inlined
// Func's own row included) and freeze the decisions of the others. N is every
// Func of the pipeline, as in the paper ("all but log2(N) stages"); the kept
// ones are chosen among the Funcs with any choice (always-inlined ones have
// none). Counting only the Funcs with a choice in N (as before) froze one
// Func too many on small pipelines: on bilateral_grid it froze blurz at
// root, ruling out the fusion into blurx that the unfrozen search finds
// (predicted 0.8595 vs 0.7997 with freezing off).
Frozen choose_frozen(const FunctionDAG &dag, const State &pre) {
    std::vector<int> node_of_stage;
    for (size_t n = 0; n < dag.nodes.size(); n++)
        for (size_t s = 0; s < dag.nodes[n].stages.size(); s++)
            node_of_stage.push_back(static_cast<int>(n));
    std::vector<double> cost(dag.nodes.size(), 0);
    if (pre.features && pre.stage_costs) {
        for (size_t i = 0; i < pre.features->stage_ids.size() && i < pre.stage_costs->size(); i++)
            cost[node_of_stage.at(pre.features->stage_ids[i])] += (*pre.stage_costs)[i];
    }
    std::vector<int> choice;
    for (size_t n = 0; n < dag.nodes.size(); n++)
        if (!dag.nodes[n].always_inline) choice.push_back(static_cast<int>(n));
    const double n_funcs = static_cast<double>(dag.nodes.size());
    size_t keep = std::min(choice.size(),
                           n_funcs <= 1 ? size_t(1) : static_cast<size_t>(std::ceil(std::log2(n_funcs))));
    std::stable_sort(choice.begin(), choice.end(), [&](int a, int b) { return cost[a] > cost[b]; });
    Frozen frozen(dag.nodes.size());
    for (size_t q = keep; q < choice.size(); q++)
        frozen[choice[q]] = pre.d->funcs[choice[q]];
    return frozen;
}

} // namespace

std::vector<PipelineFeatures> pipeline_features(const FunctionDAG &dag) {
    std::vector<PipelineFeatures> v;
    for (const Node &n : dag.nodes)
        for (const Stage &s : n.stages)
            v.push_back(s.features);
    return v;
}

SearchResult evaluate_decisions(const FunctionDAG &dag, CostModel &model, const GpuProfile &gpu,
                                const Decisions &d) {
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

double process_cpu_seconds() {
    return cpu_now();
}

SearchResult beam_search(const FunctionDAG &dag, CostModel &model, const GpuProfile &gpu,
                         const SearchConfig &config) {
    auto t_start = Clock::now();
    double cpu_start = cpu_now();
    SearchResult r;
    SearchStats stats;
    std::mt19937_64 rng(config.seed);
    const int passes = std::max(1, config.passes);
    FeatureMemo memo(config.memo_max_bytes);
    FeatureMemo *memo_ptr = config.memoize ? &memo : nullptr;
    RegionMemo regions;
    RootTilingCache root_tilings;
    std::vector<State> start(1);
    start[0].d = std::make_shared<const Decisions>(initial_decisions(dag));

    Frozen frozen;
    const bool freeze =
        config.freezing && dag.nodes.size() >= static_cast<size_t>(std::max(0, config.freezing_min_funcs));
    if (freeze) {
        auto tp = Clock::now();
        Pass pre{dag,     model, gpu, config,  rng,     stats, memo_ptr, &regions, &root_tilings,
                 nullptr, true,  0,   nullptr, nullptr, {},    {},       {},       {}};
        std::vector<State> beam = pre.run(start);
        if (const State *best = cheapest(beam)) {
            frozen = choose_frozen(dag, *best);
            r.prepass_decisions = *best->d;
        }
        stats.seconds_prepass = seconds_since(tp);
    }
    r.frozen.assign(freeze ? dag.nodes.size() : 0, false);
    for (size_t n = 0; n < frozen.size(); n++) {
        r.frozen[n] = frozen[n].has_value();
        stats.funcs_frozen += frozen[n].has_value() ? 1 : 0;
    }

    std::map<uint64_t, int> expanded_in_earlier_passes; // structural hash -> times
    bool have_best = false;
    State best;
    for (int pass = 0; pass < passes; pass++) {
        std::map<uint64_t, int> expanded_this_pass;
        Pass p{dag,
               model,
               gpu,
               config,
               rng,
               stats,
               memo_ptr,
               &regions,
               &root_tilings,
               frozen.empty() ? nullptr : &frozen,
               false,
               pass,
               &expanded_in_earlier_passes,
               &expanded_this_pass,
               {},
               {},
               {},
               {}};
        std::vector<State> beam = p.run(start);
        for (auto &kv : expanded_this_pass)
            expanded_in_earlier_passes[kv.first] += kv.second;
        for (State &s : beam) {
            if (!have_best || s.cost < best.cost) {
                best = s;
                have_best = true;
            }
        }
    }
    if (!have_best) throw std::runtime_error("the search found no schedule within the pruning limits");
    r.decisions = *best.d;
    r.cost = best.cost;
    if (best.features) {
        r.features = *best.features;
        r.stage_ids = best.features->stage_ids;
    }
    if (best.stage_costs) r.stage_costs = *best.stage_costs;
    stats.memo_hits = memo.hits;
    stats.memo_misses = memo.misses;
    stats.memo_evictions = memo.evictions;
    stats.region_memo_hits = regions.hits;
    stats.region_memo_misses = regions.misses;
    stats.region_memo_resets = regions.resets;
    stats.seconds_total = seconds_since(t_start);
    stats.cpu_seconds_total = cpu_now() - cpu_start;
    r.stats = stats;
    return r;
}

} // namespace gpusched
