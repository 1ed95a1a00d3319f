// A beam pass's expansion (core/beam_pass.h): the children of one parent
// state for one step, its options enumerated, pruned, sampled
// (hierarchical sampling, sec. 3.1 and 4.4) and featurized, or priced from
// a remembered row, built in one scratch loop nest. Costing the children
// and choosing among them is the pass's bookkeeping (core/beam_search.cpp).
#include "core/beam_pass.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <optional>
#include <unordered_map>
#include <utility>

#include "common/elapsed.h"
#include "core/storage_layout.h"

namespace gpusched::detail {

namespace {

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

// One stage's row in a costed state, if it has exactly one: its cost
// and the state's working_set_at_root (every row carries it).
struct RowOf {
    double cost, working_set;
};
std::optional<RowOf> row_of(const State &s, int stage_id) {
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

// Hierarchical sampling (sec. 3.1, 4.4) of one parent's options at one
// step: its candidates in buckets by structural hash at depth index + 1
// (capped); from a bucket of B, ceil(log2 B) (at least 1) random members
// that pass pruning. Pruning is checked lazily in the shuffled order, so
// unsampled candidates never cost a loop nest; a bucket with too few
// members passing the soft criteria is topped up with ones failing only
// those. The options are the per-search list of a root tiling step (`rt`)
// or else `opts`.
struct OptionSampler {
    OptionSampler(Pass &pass, const State &p, StepId id, RootStageTilings *rt,
                  const std::vector<FuncDecision> &opts)
        : pass(pass), p(p), id(id), n(id.node), si(id.phase - 1), rt(rt), opts(opts),
          stage_id(rt && pass.config.reuse_tiling_rows ? pass.dag.stage_id(n, id.phase - 1) : -1),
          parent_row(stage_id >= 0 ? row_of(p, stage_id) : std::nullopt),
          layout(p.d->funcs[n].storage_innermost) {}

    Pass &pass;
    const State &p;
    const StepId id;
    const int n, si;
    RootStageTilings *const rt;
    const std::vector<FuncDecision> &opts;
    // Candidates failing only the soft criteria, in the order examined;
    // those known to fail them without a nest (`unchecked`) still have
    // their hard limits to check.
    std::vector<std::pair<size_t, bool>> soft; // option, unchecked
    // Options judged and costed under an earlier parent are priced
    // without a nest (add_priced): this parent's cost less its row of the
    // stage, plus the option's remembered row at this parent's working
    // set. The others are featurized as usual, their rows remembered
    // once costed (RootStageTilings::rows).
    const int stage_id;
    const std::optional<RowOf> parent_row;
    const int layout;
    struct Featurized {
        size_t child, option;
        Verdict verdict;
    };
    std::vector<Featurized> to_remember;

    // Option i becomes the step Func's decision in `work`.
    void select(size_t i) {
        if (rt)
            rt->options.apply(i, pass.work.funcs[n].stages[si]);
        else
            pass.work.funcs[n] = opts[i];
    }
    // Whether the selected option i fails the soft criteria, known
    // without its nest (a root tiling's verdict is judged once per search).
    bool fails_soft(size_t i) {
        if (!rt) return pass.fails_soft_without_nest(pass.work.funcs[n], id);
        int8_t &known = rt->soft[i];
        if (known < 0) known = pass.fails_soft_without_nest(pass.work.funcs[n], id) ? 0 : 1;
        return known == 0;
    }
    std::optional<double> priced(size_t i) const {
        if (!parent_row) return std::nullopt;
        const std::optional<double> r = rt->row(i, parent_row->working_set, layout);
        if (!r) return std::nullopt;
        return p.cost - parent_row->cost + *r;
    }
    void featurized_option(size_t i, Verdict v) {
        if (parent_row) to_remember.push_back({pass.children.size() - 1, i, v});
    }

    void sample_bucket(std::vector<size_t> &b) {
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
                size_t r = drawn + static_cast<size_t>(pass.rng() % (b.size() - drawn));
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
                    pass.add_priced(n, *cost);
                    ok++;
                } else {
                    soft.emplace_back(b[q], false);
                }
                continue;
            }
            const LoopNest &nest = pass.nest_for_work();
            Verdict v = classify_candidate(nest, id, pass.gpu, pass.config.limits);
            if (v == Verdict::Ok) {
                pass.add_featurized(nest, n);
                featurized_option(b[q], Verdict::Ok);
                ok++;
            } else if (v == Verdict::Soft) {
                soft.emplace_back(b[q], false);
            } else {
                pass.stats.states_pruned_hard++;
            }
        }
        for (const auto &[i, unchecked] : soft) {
            if (ok < want) {
                select(i);
                if (const std::optional<double> cost = priced(i)) {
                    pass.add_priced(n, *cost);
                    ok++;
                } else if (pass.add_work_unless_hard(n, id, unchecked)) {
                    featurized_option(i, Verdict::Soft);
                    ok++;
                }
            } else {
                pass.stats.states_pruned_soft++;
            }
        }
        pass.rng.discard(draws - drawn);
        pass.stats.states_sampled_out += static_cast<int64_t>(b.size() - q);
    }

    // A root tiling step's options, in the per-search buckets at `depth`;
    // then, once the stage is seen retiled in place, the rows of the
    // options featurized here remembered for the parents to come.
    void sample_root_tilings(int depth) {
        const SamplingBuckets &sb = rt->buckets_at(depth);
        std::vector<size_t> b;
        for (size_t g = 0; g < sb.count(); g++) {
            b.assign(sb.members.begin() + static_cast<std::ptrdiff_t>(sb.starts[g]),
                     sb.members.begin() + static_cast<std::ptrdiff_t>(sb.starts[g + 1]));
            sample_bucket(b);
        }
        rt->alone = rt->alone || pass.retiled_any;
        if (rt->alone && !to_remember.empty()) {
            // Only costed options are remembered: one refused for a
            // hard limit is built and refused again under each parent.
            pass.cost_pending();
            for (const Featurized &f : to_remember) {
                const std::optional<RowOf> row = row_of(pass.children[f.child], stage_id);
                if (row) rt->remember(f.option, f.verdict, row->working_set, layout, row->cost);
            }
        }
    }

    // `opts`, in buckets by the parent's structural hash at `depth` with
    // the option in place of the step Func's decision, in the order first
    // seen.
    void sample_by_structure(int depth) {
        std::unordered_map<uint64_t, std::vector<size_t>> buckets;
        std::vector<uint64_t> bucket_order;
        const uint64_t rest = structural_hash(*p.d, depth) - func_structural_hash(n, p.d->funcs[n], depth);
        for (size_t i = 0; i < opts.size(); i++) {
            select(i);
            uint64_t h = rest + func_structural_hash(n, pass.work.funcs[n], depth);
            auto &b = buckets[h];
            if (b.empty()) bucket_order.push_back(h);
            b.push_back(i);
        }
        for (uint64_t h : bucket_order)
            sample_bucket(buckets[h]);
    }
};

} // namespace

// Children of one parent for one step, featurized (not yet costed) or
// priced: the step's options, then, at the last tiling step of a root
// Func its readers walk across, each of them again in every such layout.
void Pass::expand(const State &p, StepId id) {
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
bool Pass::offers_root_layouts(const State &p, StepId id) const {
    const int n = id.node;
    return config.search_layouts && !prepass && !config.root_only &&
           p.d->funcs[n].location == ComputeLocation::Root &&
           id.phase == static_cast<int>(dag.nodes[n].stages.size()) &&
           !(frozen && (*frozen)[n] && p.d->funcs[n] == *(*frozen)[n]);
}
void Pass::add_layout_variants(const State &p, int n, size_t first) {
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

// The step's options for one parent: passed through where the step leaves
// the parent unchanged, its frozen decision where it has one, else every
// option that passes pruning or, with hierarchical sampling, a sample of
// them (OptionSampler).
void Pass::expand_options(const State &p, StepId id) {
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
    if (fz && id.phase == 0 && add_frozen_decision(*fz, id)) return;
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
        add_passing_options(opts, id);
        return;
    }
    OptionSampler sampler(*this, p, id, rt, opts);
    const int depth = std::min(index + 1, config.sampling_max_depth);
    if (rt)
        sampler.sample_root_tilings(depth);
    else
        sampler.sample_by_structure(depth);
}

// A frozen Func takes its pre-pass decision, tiling included, in
// one step. If the unfrozen Funcs around it made that illegal
// (e.g. an inlined Func now recomputes too much), it is searched
// for this state like any other. Whether it was added.
bool Pass::add_frozen_decision(const FuncDecision &frozen_decision, StepId id) {
    const int n = id.node;
    const FuncDecision *fz = &frozen_decision;
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
        return true;
    }
    stats.states_pruned_hard++;
    return false;
}

// All candidates that pass pruning; soft criteria apply only when
// some sibling meets them.
// A candidate known to fail the soft criteria without its nest
// (`unchecked`) is built only where no sibling passes them.
void Pass::add_passing_options(const std::vector<FuncDecision> &opts, StepId id) {
    const int n = id.node;
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
}

// The nest of `work` with Func n's decision replaced by f.
const LoopNest &Pass::nest_for(const FuncDecision &f, int n) {
    work.funcs[n] = f;
    return nest_for_work();
}
// The nest of `work` as it is (its step Func's decision already written).
const LoopNest &Pass::nest_for_work() {
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

// The per-search tilings of the root stage step `id` tiles, built when
// first asked for.
RootStageTilings &Pass::root_stage(StepId id) {
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
// At a root Func's tiling step, whether a candidate fails the soft
// criteria, known without its nest (root_tiling_meets_soft); its hard
// limits are then checked only if it is ever taken.
bool Pass::fails_soft_without_nest(const FuncDecision &f, StepId id) {
    if (id.phase == 0 || f.location != ComputeLocation::Root) return false;
    const size_t si = static_cast<size_t>(id.phase - 1);
    const StageTiling *t = f.tiled && si < f.stages.size() ? &f.stages[si] : nullptr;
    return !root_tiling_meets_soft(dag.nodes[id.node].stages[si], root_stage(id).loops, t, gpu, config.limits,
                                   tiling_scratch);
}

// Featurizes a candidate that passed pruning, or one known to fail only
// the soft criteria without its nest (`unchecked`: its hard limits not
// yet checked, which may refuse it). Whether it was added.
bool Pass::add_unless_hard(const FuncDecision &f, int n, StepId id, bool unchecked) {
    work.funcs[n] = f;
    return add_work_unless_hard(n, id, unchecked);
}
bool Pass::add_work_unless_hard(int n, StepId id, bool unchecked) {
    const LoopNest &nest = nest_for_work();
    if (unchecked && classify_candidate(nest, id, gpu, config.limits) == Verdict::Hard) {
        stats.states_pruned_hard++;
        return false;
    }
    add_featurized(nest, n);
    return true;
}

// A child of `parent` with Func n's decision replaced by `change`: its
// decisions kept as the parent's and the one change until selected.
State Pass::child_of_parent(int n, const FuncDecision &change) const {
    State c;
    c.base = parent->d;
    c.changed = n;
    c.change = change;
    if (earlier && index > 0)
        c.penalty_hash = parent_penalty_hash - func_structural_hash(n, parent->d->funcs[n], index) +
                         func_structural_hash(n, c.change, index);
    return c;
}

void Pass::add_featurized(const LoopNest &nest, int n) {
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

// A child of `parent` whose step decision is work.funcs[n], priced as
// `cost` without a nest (from a remembered row of the step's stage).
void Pass::add_priced(int n, double cost) {
    State c = child_of_parent(n, work.funcs[n]);
    c.cost = cost;
    c.priced = true;
    rank(c);
    stats.states_priced++;
    children.push_back(std::move(c));
}

} // namespace gpusched::detail
