// The search's scalability switches (Anderson et al. 2021 sec. 3): freezing,
// the bounded kernel memo, hierarchical sampling and the structural hash.
// Each switch must do what it claims and nothing else: fewer states, the
// same features, frozen Funcs keeping their pre-pass decisions, and the same
// schedule for the same config and seed.
#include "test/catch2_compat.h"

#include <algorithm>
#include <cmath>

#include "core/beam_search.h"
#include "core/featurize_schedule.h"
#include "core/region_memo.h"
#include "core/search_space.h"
#include "test/gpu_profiles.h"
#include "test/search/pipelines.h"
#include "test/search/test_cost_model.h"

using namespace gpusched;

namespace {

using gpusched::test::h100;

// Six 3-tap stencils in a chain behind a repeat_edge: seven Funcs with a
// choice of location among nine Funcs (the input wrapper and repeat_edge's
// inner lambda are always inlined), so freezing keeps ceil(log2 9) = 4 of
// them free (the paper's N counts every stage) and freezes the other 3.
struct Chain6 {
    Halide::Var x{"x"}, y{"y"};
    Halide::ImageParam in{Halide::Float(32), 2, "chain_in"};
    std::vector<Halide::Func> f;
    Chain6() {
        Halide::Func prev = Halide::BoundaryConditions::repeat_edge(in);
        for (int i = 0; i < 6; i++) {
            Halide::Func g("chain" + std::to_string(i));
            if (i % 2 == 0)
                g(x, y) = prev(x - 1, y) + prev(x, y) * 2.0f + prev(x + 1, y);
            else
                g(x, y) = prev(x, y - 1) + prev(x, y) * 2.0f + prev(x, y + 1);
            f.push_back(g);
            prev = g;
        }
        in.dim(0).set_estimate(0, 1024);
        in.dim(1).set_estimate(0, 512);
        f.back().set_estimate(x, 0, 1024).set_estimate(y, 0, 512);
    }
    std::vector<Halide::Internal::Function> outputs() const { return test_pipelines::functions({f.back()}); }
};

SearchResult run(const FunctionDAG &dag, SearchConfig cfg) {
    test_support::TestCostModel model;
    model.set_pipeline(pipeline_features(dag));
    return beam_search(dag, model, h100(), cfg);
}

SearchConfig small(bool sampling, bool freezing, bool memoize) {
    SearchConfig cfg;
    cfg.beam_size = 4;
    cfg.passes = 2;
    cfg.seed = 3;
    cfg.hierarchical_sampling = sampling;
    cfg.freezing = freezing;
    cfg.freezing_min_funcs = 0; // the mechanism, on a small pipeline
    cfg.memoize = memoize;
    return cfg;
}

} // namespace

TEST_CASE("freezing keeps the pre-pass decisions of all but the log2 N costliest Funcs",
          "[search][freezing]") {
    Chain6 p;
    FunctionDAG dag(p.outputs());
    SearchResult r = run(dag, small(true, true, true));
    int choices = 0;
    for (const Node &n : dag.nodes)
        choices += n.always_inline ? 0 : 1;
    REQUIRE(choices == 7);
    REQUIRE(dag.nodes.size() == 9);
    CHECK(r.stats.funcs_frozen == 3);
    REQUIRE(r.frozen.size() == dag.nodes.size());
    for (size_t n = 0; n < dag.nodes.size(); n++) {
        ComputeLocation pre = r.prepass_decisions.funcs[n].location;
        // The pre-pass offers only a kernel of its own or inlining.
        CHECK((pre == ComputeLocation::Root || pre == ComputeLocation::Inline));
        if (r.frozen[n]) CHECK(r.decisions.funcs[n] == r.prepass_decisions.funcs[n]);
    }
    // Which ones: the pre-pass state's predicted cost per Func (its stages'
    // rows summed), by the same model; every Func left free costs at least
    // as much as every frozen one.
    test_support::TestCostModel model;
    model.set_pipeline(pipeline_features(dag));
    const SearchResult pre = evaluate_decisions(dag, model, h100(), r.prepass_decisions);
    std::vector<int> node_of_stage;
    for (size_t n = 0; n < dag.nodes.size(); n++)
        for (size_t s = 0; s < dag.nodes[n].stages.size(); s++)
            node_of_stage.push_back(static_cast<int>(n));
    std::vector<double> cost(dag.nodes.size(), 0);
    for (size_t i = 0; i < pre.stage_ids.size(); i++)
        cost[node_of_stage.at(pre.stage_ids[i])] += pre.stage_costs[i];
    double cheapest_free = INFINITY, costliest_frozen = 0;
    for (size_t n = 0; n < dag.nodes.size(); n++) {
        if (dag.nodes[n].always_inline) continue;
        INFO(dag.nodes[n].name << (r.frozen[n] ? " frozen" : " free") << ", pre-pass cost " << cost[n]);
        CHECK(cost[n] > 0);
        if (r.frozen[n])
            costliest_frozen = std::max(costliest_frozen, cost[n]);
        else
            cheapest_free = std::min(cheapest_free, cost[n]);
    }
    INFO("cheapest free Func " << cheapest_free << ", costliest frozen " << costliest_frozen);
    CHECK(cheapest_free >= costliest_frozen);
}

TEST_CASE("with freeze_tilings off frozen Funcs keep their pre-pass location and their tilings are searched",
          "[search][freezing]") {
    Chain6 p;
    FunctionDAG dag(p.outputs());
    SearchConfig keep = small(true, true, true), loose = keep;
    loose.freeze_tilings = false;
    SearchResult r_keep = run(dag, keep), r_loose = run(dag, loose);
    REQUIRE(r_loose.stats.funcs_frozen == 3);
    // Same pre-pass, same Funcs frozen.
    CHECK(r_loose.prepass_decisions.funcs == r_keep.prepass_decisions.funcs);
    CHECK(r_loose.frozen == r_keep.frozen);
    int frozen_root = 0;
    for (size_t n = 0; n < dag.nodes.size(); n++) {
        if (!r_loose.frozen[n]) continue;
        CHECK(r_loose.decisions.funcs[n].location == r_loose.prepass_decisions.funcs[n].location);
        frozen_root += r_loose.prepass_decisions.funcs[n].location == ComputeLocation::Root ? 1 : 0;
    }
    REQUIRE(frozen_root > 0);
    // The frozen root Funcs' tiling steps are searched: more states costed.
    CHECK(r_loose.stats.states_featurized > r_keep.stats.states_featurized);
}

TEST_CASE("freezing leaves pipelines with fewer Funcs than freezing_min_funcs unfrozen",
          "[search][freezing]") {
    Chain6 p;
    FunctionDAG dag(p.outputs());
    SearchConfig below = small(true, true, true), at = small(true, true, true);
    below.freezing_min_funcs = 10; // the pipeline has 9 Funcs
    at.freezing_min_funcs = 9;
    SearchResult r_below = run(dag, below), r_at = run(dag, at);
    CHECK(r_below.stats.funcs_frozen == 0);
    CHECK(r_below.frozen.empty());
    CHECK(r_at.stats.funcs_frozen == 3);
    // Below the threshold the search is the unfrozen one, decision for decision.
    SearchResult r_off = run(dag, small(true, false, true));
    CHECK(r_below.decisions.funcs == r_off.decisions.funcs);
}

TEST_CASE("freezing featurizes fewer states over the paper's five passes", "[search][freezing]") {
    Chain6 p;
    FunctionDAG dag(p.outputs());
    // The pre-pass tiles every Func as a kernel of its own, which costs about
    // one unrestricted pass; the frozen passes then pay off (sec. 3.2).
    SearchConfig on = small(true, true, true), off = small(true, false, true);
    on.passes = off.passes = 5;
    SearchResult frozen = run(dag, on);
    SearchResult free = run(dag, off);
    CHECK(free.stats.funcs_frozen == 0);
    CHECK(free.frozen.empty());
    CHECK(frozen.stats.states_featurized < free.stats.states_featurized);
    CHECK(frozen.cost > 0);
}

TEST_CASE("every switch combination is deterministic for a seed", "[search][sampling][freezing][memo]") {
    Chain6 p;
    FunctionDAG dag(p.outputs());
    for (int mask = 0; mask < 8; mask++) {
        SearchConfig cfg = small(mask & 1, mask & 2, mask & 4);
        cfg.beam_size = 2; // keeps the unsampled configurations quick
        SearchResult a = run(dag, cfg);
        SearchResult b = run(dag, cfg);
        INFO("sampling " << (mask & 1) << " freezing " << (mask & 2) << " memo " << (mask & 4));
        CHECK(a.decisions == b.decisions);
        CHECK(a.cost == b.cost);
        CHECK(a.stats.states_featurized == b.stats.states_featurized);
    }
}

TEST_CASE("a memo bounded to a few kernels evicts and still gives identical features", "[search][memo]") {
    Chain6 p;
    FunctionDAG dag(p.outputs());
    SearchConfig tiny = small(true, false, true);
    tiny.memo_max_bytes = 8 * 1024; // about ten kernels' rows
    SearchResult bounded = run(dag, tiny);
    SearchResult unbounded = run(dag, small(true, false, true));
    SearchResult off = run(dag, small(true, false, false));
    CHECK(bounded.stats.memo_evictions > 0);
    CHECK(unbounded.stats.memo_evictions == 0);
    CHECK(unbounded.stats.memo_hits > bounded.stats.memo_hits);
    CHECK(off.stats.memo_hits == 0);
    for (const SearchResult *r : {&bounded, &off}) {
        CHECK(r->decisions == unbounded.decisions);
        CHECK(r->cost == unbounded.cost);
        REQUIRE(r->features.schedule.size() == unbounded.features.schedule.size());
        for (size_t i = 0; i < r->features.schedule.size(); i++)
            CHECK(r->features.schedule[i].values == unbounded.features.schedule[i].values);
    }
}

TEST_CASE("a root stage's row per tiling is costed once per search: the same schedule from fewer "
          "featurized states",
          "[search][sampling]") {
    // At a root tiling step the stage's producers are scheduled in no
    // parent yet, so a tiling's row is the same under every parent (but for
    // the working set at root): candidates with a costed tiling are priced
    // from it and featurized only if the beam keeps them. A stencil chain
    // (stages reading Funcs) and reductions (initial values reading none).
    test_pipelines::Reductions reductions;
    Chain6 chain;
    for (const auto &outputs : {reductions.outputs(), chain.outputs()}) {
        FunctionDAG dag(outputs);
        SearchConfig on = small(true, false, true);
        on.beam_size = 8;
        on.passes = 3;
        SearchConfig off = on;
        off.reuse_tiling_rows = false;
        SearchResult reused = run(dag, on);
        SearchResult featurized = run(dag, off);
        INFO(dag.nodes.front().func.name());
        CHECK(featurized.stats.states_priced == 0);
        CHECK(reused.stats.states_priced > 0);
        CHECK(reused.stats.states_featurized < featurized.stats.states_featurized);
        CHECK(reused.decisions == featurized.decisions);
        CHECK(reused.cost == Approx(featurized.cost).epsilon(1e-12));
        REQUIRE(reused.features.schedule.size() == featurized.features.schedule.size());
        for (size_t i = 0; i < reused.features.schedule.size(); i++)
            CHECK(reused.features.schedule[i].values == featurized.features.schedule[i].values);
    }
}

TEST_CASE("the feature memo stays under its byte bound and evicts the least recently used kernel", "[memo]") {
    const size_t row = sizeof(ScheduleFeatures);
    FeatureMemo memo(3 * (row + 8 + 128)); // room for three one-row entries
    auto rows = [](double v) {
        FeatureMemo::KernelRows r;
        r.rows.resize(1);
        r.rows[0].values[0] = v;
        return r;
    };
    memo.insert({1}, rows(1));
    memo.insert({2}, rows(2));
    memo.insert({3}, rows(3));
    REQUIRE(memo.find({1}) != nullptr); // 1 becomes the most recent
    memo.insert({4}, rows(4));          // evicts 2, the least recent
    CHECK(memo.size() == 3);
    CHECK(memo.evictions == 1);
    CHECK(memo.find({2}) == nullptr);
    REQUIRE(memo.find({1}) != nullptr);
    CHECK(memo.find({1})->rows[0].values[0] == 1);
    CHECK(memo.find({4}) != nullptr);
    CHECK(memo.bytes() <= 3 * (row + 8 + 128));
}

TEST_CASE("rows taken from the feature memo carry their row hashes, whatever the state's working set",
          "[memo]") {
    // The network model keys its row cache by these hashes; a stale one
    // would give a row another row's cost. The second state inlines a Func,
    // which changes working_set_at_root for every row, and takes its other
    // kernels from the memo.
    Chain6 p;
    FunctionDAG dag(p.outputs());
    Decisions d;
    d.funcs.resize(dag.nodes.size());
    for (size_t n = 0; n < dag.nodes.size(); n++) {
        d.funcs[n].location = dag.nodes[n].always_inline ? ComputeLocation::Inline : ComputeLocation::Root;
    }
    FeatureMemo memo;
    LoopNest first(dag, d);
    const StateFeatures a = featurize(first, h100(), &memo);
    int inlined = -1;
    for (size_t n = 1; n < dag.nodes.size() && inlined < 0; n++)
        if (!dag.nodes[n].always_inline) inlined = static_cast<int>(n);
    REQUIRE(inlined > 0);
    d.funcs[inlined].location = ComputeLocation::Inline;
    LoopNest second(dag, d);
    const StateFeatures b = featurize(second, h100(), &memo);
    CHECK(memo.hits > 0);
    for (const StateFeatures *s : {&a, &b}) {
        REQUIRE(s->row_hashes.size() == s->schedule.size());
        for (size_t i = 0; i < s->schedule.size(); i++) {
            const RowCostCache::Key from_hash = RowCostCache::key(s->row_hashes[i], s->schedule[i]),
                                    whole = RowCostCache::key(s->stage_ids[i], s->schedule[i]);
            CHECK(from_hash.a == whole.a);
            CHECK(from_hash.b == whole.b);
        }
    }
    CHECK(a.schedule[0][ScheduleFeature::working_set_at_root] !=
          b.schedule[0][ScheduleFeature::working_set_at_root]);
    // Without a memo there are none, and the model hashes each row whole.
    CHECK(featurize(second, h100(), nullptr).row_hashes.empty());
}

TEST_CASE("a stage's loads after inlining are remembered by which of its producers are inlined", "[memo]") {
    // Chain6's nodes: 0 is the output (chain5), node k reads node k + 1.
    Chain6 p;
    FunctionDAG dag(p.outputs());
    Decisions d;
    d.funcs.resize(dag.nodes.size());
    for (size_t n = 0; n < dag.nodes.size(); n++)
        d.funcs[n].location = dag.nodes[n].always_inline ? ComputeLocation::Inline : ComputeLocation::Root;
    RegionMemo memo;
    LoopNest nest(dag, d, &memo);
    const gpusched::Stage &st = dag.nodes[2].stages[0];
    auto same = [](const EffectiveAccesses &a, const EffectiveAccesses &b) {
        if (a.size() != b.size()) return false;
        for (size_t i = 0; i < a.size(); i++)
            if (!(a[i].producer == b[i].producer) || a[i].bytes != b[i].bytes ||
                a[i].jacobian != b[i].jacobian || a[i].count != b[i].count)
                return false;
        return true;
    };
    const auto first = nest.accesses(st);
    CHECK(same(*first, collect_accesses(nest, st)));
    CHECK(memo.access_misses == 1);
    // A consumer inlined: the stage reads the same, from the memo.
    d.funcs[1].location = ComputeLocation::Inline;
    nest.rebuild();
    const auto consumer_inlined = nest.accesses(st);
    CHECK(memo.access_hits == 1);
    CHECK(consumer_inlined == first);
    // Its producer inlined: the loads reach through it, computed again.
    d.funcs[3].location = ComputeLocation::Inline;
    nest.rebuild();
    const auto producer_inlined = nest.accesses(st);
    CHECK(memo.access_misses == 2);
    CHECK(same(*producer_inlined, collect_accesses(nest, st)));
    CHECK_FALSE(same(*producer_inlined, *first));
}

TEST_CASE("sampling featurizes fewer states than enumerating and keeps the beam through pass-through steps",
          "[search][sampling]") {
    Chain6 p;
    FunctionDAG dag(p.outputs());
    SearchResult sampled = run(dag, small(true, false, true));
    SearchResult full = run(dag, small(false, false, true));
    CHECK(sampled.stats.states_sampled_out > 0);
    CHECK(full.stats.states_sampled_out == 0);
    CHECK(sampled.stats.states_featurized * 2 < full.stats.states_featurized);
    // Pass-through steps (a Func that is not a kernel has no tiling step)
    // reuse the parent's features: nothing is featurized twice for them.
    CHECK(sampled.stats.states_featurized < sampled.stats.states_enumerated);
}

TEST_CASE("the structural hash sees tilings coarsely at depth 3 and thread then serial sizes deeper",
          "[search][hash]") {
    Chain6 p;
    FunctionDAG dag(p.outputs());
    Decisions a = initial_decisions(dag);
    a.funcs[0].location = ComputeLocation::Root;
    a.funcs[0].tiled = true;
    size_t loops = dag.nodes[0].stages[0].loops.size();
    a.funcs[0].stages.push_back(StageTiling{std::vector<int64_t>(loops, 1), std::vector<int64_t>(loops, 1)});
    a.funcs[0].stages[0].serial[0] = 2;
    a.funcs[0].stages[0].thread[0] = 32;
    Decisions b = a;
    b.funcs[0].stages[0].serial[0] = 4; // same shape, other serial size
    Decisions c = a;
    c.funcs[0].stages[0].thread[0] = 64; // same shape, other thread size
    Decisions e = a;
    e.funcs[0].stages[0].serial[0] = 1; // another shape
    for (int d = 0; d <= 2; d++)
        CHECK(structural_hash(a, d) == structural_hash(e, d));
    CHECK(structural_hash(a, 3) != structural_hash(e, 3));
    for (int d = 0; d <= 3; d++)
        CHECK(structural_hash(a, d) == structural_hash(c, d));
    CHECK(structural_hash(a, 4) != structural_hash(c, 4));
    for (int d = 0; d <= 5; d++)
        CHECK(structural_hash(a, d) == structural_hash(b, d));
    CHECK(structural_hash(a, 6) != structural_hash(b, 6));
    // A sum of per-Func terms: replacing one Func's term gives the child's hash.
    for (int d = 0; d <= 6; d++) {
        uint64_t h = structural_hash(a, d) - func_structural_hash(0, a.funcs[0], d) +
                     func_structural_hash(0, b.funcs[0], d);
        CHECK(h == structural_hash(b, d));
    }
}
