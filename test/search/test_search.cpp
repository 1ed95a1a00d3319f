// The search: legal schedules on real pipelines, determinism by seed,
// pruning limits, replayable records and config errors.
#include "test/catch2_compat.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "core/beam_search.h"
#include "core/loop_nest.h"
#include "core/region_memo.h"
#include "core/schedule_apply.h"
#include "core/search_config.h"
#include "core/search_record.h"
#include "core/search_space.h"
#include "test/gpu_profiles.h"
#include "test/search/pipelines.h"
#include "test/search/test_cost_model.h"

using namespace gpusched;
namespace fs = std::filesystem;

namespace {

using gpusched::test::h100;

std::string read_text_file(const std::string &path) {
    std::ifstream in(path);
    REQUIRE(in.good());
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}
} // namespace

namespace {

SearchResult search(const FunctionDAG &dag, const SearchConfig &cfg) {
    test_support::TestCostModel model;
    model.set_pipeline(pipeline_features(dag));
    return beam_search(dag, model, h100(), cfg);
}

SearchResult search(const FunctionDAG &dag, int beam, int passes, uint64_t seed, double dropout = 0,
                    bool memoize = true) {
    SearchConfig cfg;
    cfg.beam_size = beam;
    cfg.passes = passes;
    cfg.seed = seed;
    cfg.dropout = dropout;
    cfg.memoize = memoize;
    return search(dag, cfg);
}

// Applies the decisions and lowers the pipeline for CUDA (PTX codegen needs
// no GPU): Halide throws if the schedule is illegal.
void lower_for_cuda(const std::vector<Halide::Func> &outs, const FunctionDAG &dag, const Decisions &d) {
    Halide::Pipeline p(outs);
    std::string src = schedule_pipeline(dag, d, p, true);
    CHECK(!src.empty());
    Halide::Target t("x86-64-linux-cuda-cuda_capability_86");
    REQUIRE_NOTHROW(p.compile_to_module(p.infer_arguments(), "gs_test", t));
}

} // namespace

TEST_CASE("beam search schedules a blur into legal CUDA", "[search]") {
    test_pipelines::Blur p(512, 256);
    FunctionDAG dag(p.outputs());
    SearchResult r = search(dag, 4, 2, 7);
    REQUIRE(r.decisions.funcs.size() == dag.nodes.size());
    for (const FuncDecision &f : r.decisions.funcs)
        CHECK(f.location != ComputeLocation::Unscheduled);
    CHECK(r.cost > 0);
    CHECK(r.stats.states_costed > 0);
    CHECK(r.stats.states_featurized <= r.stats.states_costed);
    CHECK(hard_limit_violation(dag, r.decisions, h100(), PruningLimits{}).empty());
    lower_for_cuda({p.out}, dag, r.decisions);
}

TEST_CASE("reductions, tuples, two outputs and boundary conditions lower after search", "[search]") {
    SECTION("reductions") {
        test_pipelines::Reductions p;
        FunctionDAG dag(p.outputs());
        SearchResult r = search(dag, 2, 1, 3);
        lower_for_cuda({p.out1, p.out2}, dag, r.decisions);
    }
    SECTION("boundary condition") {
        test_pipelines::Bounded p;
        FunctionDAG dag(p.outputs());
        SearchResult r = search(dag, 2, 1, 3);
        lower_for_cuda({p.out}, dag, r.decisions);
    }
}

TEST_CASE("every location the search space offers lowers", "[search]") {
    // Force each legal location of blur_x in turn (root, block/shared,
    // thread/registers, inline) and lower the result.
    test_pipelines::Blur p(512, 256);
    FunctionDAG dag(p.outputs());
    int bx = dag.node_index(p.blur_x.name());
    Decisions d = initial_decisions(dag);
    // Tile the output 32x8 with 2 serial rows, then enumerate blur_x.
    for (int step = 0; step < num_steps(dag); step++) {
        StepId id = step_at(dag, step);
        if (id.node != 0) break;
        auto kids = enumerate_children(dag, d, id, h100(), PruningLimits{});
        REQUIRE(!kids.empty());
        d = kids[0];
        if (id.phase == 1) {
            d.funcs[0].stages[0].thread = {32, 8};
            d.funcs[0].stages[0].serial = {1, 2};
        }
    }
    StepId bx_step{bx, 0};
    auto kids = enumerate_children(dag, d, bx_step, h100(), PruningLimits{});
    std::set<ComputeLocation> seen;
    for (const Decisions &k : kids) {
        ComputeLocation loc = k.funcs[bx].location;
        if (seen.count(loc)) continue;
        seen.insert(loc);
        Decisions full = k;
        for (size_t n = 0; n < dag.nodes.size(); n++) {
            if (full.funcs[n].location != ComputeLocation::Unscheduled) continue;
            full.funcs[n].location = ComputeLocation::Inline;
        }
        if (loc == ComputeLocation::Root) full.funcs[bx].stages[0].thread = {32, 4};
        INFO("blur_x at " << location_name(loc));
        test_pipelines::Blur fresh(512, 256);
        FunctionDAG fresh_dag(fresh.outputs());
        lower_for_cuda({fresh.out}, fresh_dag, full);
    }
    CHECK(seen.count(ComputeLocation::Root));
    CHECK(seen.count(ComputeLocation::Block));
    CHECK(seen.count(ComputeLocation::Thread));
    CHECK(seen.count(ComputeLocation::Inline));
}

TEST_CASE("the same config and seed give the same schedule", "[search]") {
    test_pipelines::Blur p(512, 256);
    FunctionDAG dag(p.outputs());
    SearchResult a = search(dag, 1, 1, 42, 0.5);
    SearchResult b = search(dag, 1, 1, 42, 0.5);
    CHECK(a.decisions == b.decisions);
    CHECK(a.cost == b.cost);
    // Greedy samples with dropout explore: some seed gives another schedule.
    bool differs = false;
    for (uint64_t seed = 1; seed < 20 && !differs; seed++)
        differs = !(search(dag, 1, 1, seed, 0.5).decisions == a.decisions);
    CHECK(differs);
}

TEST_CASE("a stage of more loops than a tiling keeps inline is searched, lowered and recorded with every "
          "size",
          "[search]") {
    // Eight pure loops: past LoopSizes::kInline, so the tilings' sizes live
    // on the heap and every copy the search makes must carry them.
    Halide::ImageParam in(Halide::Float(32), 2, "wide_in");
    std::vector<Halide::Var> v;
    for (int i = 0; i < 8; i++)
        v.emplace_back("w" + std::to_string(i));
    Halide::Func wide("wide");
    Halide::Expr sum = in(v[0], v[1]);
    for (size_t i = 2; i < v.size(); i++)
        sum = sum + Halide::cast<float>(v[i]);
    wide(v) = sum;
    wide.set_estimate(v[0], 0, 256).set_estimate(v[1], 0, 256);
    for (size_t i = 2; i < v.size(); i++)
        wide.set_estimate(v[i], 0, 2);
    FunctionDAG dag({wide.function()});
    REQUIRE(dag.nodes[0].stages[0].loops.size() > LoopSizes::kInline);
    const SearchResult r = search(dag, 4, 1, 0);
    const StageTiling &t = r.decisions.funcs[0].stages.at(0);
    CHECK(t.serial.size() == dag.nodes[0].stages[0].loops.size());
    CHECK(t.thread.size() == t.serial.size());
    for (size_t l = 0; l < t.serial.size(); l++) {
        CHECK(t.serial[l] >= 1);
        CHECK(t.thread[l] >= 1);
    }
    CHECK(decisions_from_json(dag, decisions_to_json(dag, r.decisions)) == r.decisions);
    lower_for_cuda({wide}, dag, r.decisions);
    // A copy grown past the inline sizes keeps what it had.
    LoopSizes grown = t.serial;
    grown.push_back(7);
    CHECK(grown.size() == t.serial.size() + 1);
    CHECK(std::equal(t.serial.begin(), t.serial.end(), grown.begin()));
    CHECK(grown[t.serial.size()] == 7);
    LoopSizes small{1, 2, 3};
    for (int64_t x = 4; x <= 9; x++)
        small.push_back(x);
    CHECK(small.to_vector() == std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9});
}

TEST_CASE("pruning enforces hardware limits", "[search][pruning]") {
    test_pipelines::Staged p(false);
    FunctionDAG dag(p.outputs());
    int pn = dag.node_index(p.p.name());
    Decisions d = initial_decisions(dag);
    for (auto &f : d.funcs)
        f.location = ComputeLocation::Inline;
    d.funcs[0].location = ComputeLocation::Root;
    d.funcs[0].tiled = true;
    d.funcs[0].stages = {StageTiling{{1, 1}, {64, 32}}};
    CHECK(hard_limit_violation(dag, d, h100(), PruningLimits{}).find("threads per block") !=
          std::string::npos);
    // 128x128 floats of p (16x16 threads x 8x8 serial) in shared memory = 64 KiB > 48 KiB per block.
    d.funcs[0].stages = {StageTiling{{8, 8}, {16, 16}}};
    d.funcs[pn].location = ComputeLocation::Block;
    d.funcs[pn].host = 0;
    d.funcs[pn].tiled = true;
    d.funcs[pn].stages = {StageTiling{{8, 8}, {1, 1}}};
    std::string why = hard_limit_violation(dag, d, h100(), PruningLimits{});
    CHECK(why.find("shared memory") != std::string::npos);
    // Serial tiles of 8x8 = 64 are allowed; 8x8x... beyond the limit is not.
    PruningLimits tight;
    tight.max_unrolled_serial = 16;
    d.funcs[pn].location = ComputeLocation::Inline;
    CHECK(hard_limit_violation(dag, d, h100(), tight).find("serial extent") != std::string::npos);
    // No enumerated child ever violates a hard limit.
    Decisions s = initial_decisions(dag);
    for (int step = 0; step < num_steps(dag); step++) {
        auto kids = enumerate_children(dag, s, step_at(dag, step), h100(), PruningLimits{});
        REQUIRE(!kids.empty());
        for (const Decisions &k : kids)
            CHECK(hard_limit_violation(dag, k, h100(), PruningLimits{}).empty());
        s = kids.back();
    }
}

TEST_CASE("too few blocks for the SMs is pruned when there is a choice", "[search][pruning]") {
    test_pipelines::Copy p(false, 2048, 2048);
    FunctionDAG dag(p.outputs());
    Decisions d = initial_decisions(dag);
    d = enumerate_children(dag, d, StepId{0, 0}, h100(), PruningLimits{}).at(0);
    auto kids = enumerate_children(dag, d, StepId{0, 1}, h100(), PruningLimits{});
    REQUIRE(!kids.empty());
    for (const Decisions &k : kids) {
        LoopNest nest(dag, k);
        CHECK(nest.kernels[0].num_blocks >= 132);
        CHECK(nest.stages[0].threads >= 16); // lane utilization >= 0.5
    }
}

TEST_CASE("at a root tiling step the soft verdict known without the loop nest is the nest's own",
          "[search][pruning]") {
    // The search skips building the nest of a tiling that fails the soft
    // criteria (root_tiling_meets_soft): every candidate of every tiling
    // step of these pipelines, each Func put at root where it may be.
    test_pipelines::Reductions red;
    test_pipelines::Staged staged(false);
    test_pipelines::Copy copy(false, 2048, 2048);
    int ok = 0, soft = 0;
    for (const auto &outputs : {red.outputs(), staged.outputs(), copy.outputs()}) {
        FunctionDAG dag(outputs);
        Decisions s = initial_decisions(dag);
        RootTilingScratch scratch;
        for (int step = 0; step < num_steps(dag); step++) {
            const StepId id = step_at(dag, step);
            const std::vector<Decisions> candidates = enumerate_candidates(dag, s, id, h100());
            REQUIRE(!candidates.empty());
            if (id.phase > 0 && s.funcs[id.node].location == ComputeLocation::Root) {
                const Node &node = dag.nodes[id.node];
                const gpusched::Stage &st = node.stages[id.phase - 1];
                const std::vector<Span> loops = dag.loop_bounds(st, node.region);
                for (const Decisions &c : candidates) {
                    const FuncDecision &f = c.funcs[id.node];
                    const bool meets =
                        root_tiling_meets_soft(st, loops, f.tiled ? &f.stages.at(id.phase - 1) : nullptr,
                                               h100(), PruningLimits{}, scratch);
                    const Verdict v = classify_candidate(dag, c, id, h100(), PruningLimits{});
                    CHECK((v != Verdict::Ok || meets));
                    CHECK((v != Verdict::Soft || !meets));
                    ok += v == Verdict::Ok;
                    soft += v == Verdict::Soft;
                }
            }
            // Go on from a candidate at root where there is one, so the Func's tiling steps come.
            const std::vector<Decisions> kids = enumerate_children(dag, s, id, h100(), PruningLimits{});
            REQUIRE(!kids.empty());
            s = kids.front();
            for (const Decisions &k : kids)
                if (k.funcs[id.node].location == ComputeLocation::Root) s = k;
        }
    }
    // Both verdicts were met, so the checks above compared something.
    CHECK(ok > 10);
    CHECK(soft > 10);
}

TEST_CASE("enumerate_options offers the same candidates from one nest rebuilt in place as from fresh nests",
          "[search]") {
    // The search hands enumerate_options its scratch nest, last built for
    // some other state, and a region memo; without them each nest is built
    // afresh. Walks that put Funcs at every location, so the Block and
    // Thread options (which judge the parent's nests) are offered.
    struct InPlace final : ParentNests {
        const FunctionDAG &dag;
        RegionMemo memo;
        Decisions work;
        std::unique_ptr<LoopNest> nest;
        explicit InPlace(const FunctionDAG &d) : dag(d) {}
        const LoopNest &with(int n, const FuncDecision &f) override {
            work.funcs[n] = f;
            if (!nest)
                nest = std::make_unique<LoopNest>(dag, work, &memo);
            else
                nest->rebuild();
            return *nest;
        }
    };
    test_pipelines::Staged staged(false);
    test_pipelines::Copy copy(false, 2048, 2048);
    test_pipelines::DiamondChain diamond(6, 4096);
    int compared = 0, below_root = 0;
    for (const auto &outputs : {staged.outputs(), copy.outputs(), diamond.outputs()}) {
        FunctionDAG dag(outputs);
        for (int walk = 0; walk < 3; walk++) {
            InPlace scratch(dag);
            Decisions s = initial_decisions(dag);
            for (int step = 0; step < num_steps(dag); step++) {
                const StepId id = step_at(dag, step);
                scratch.work = s;
                const std::vector<FuncDecision> fresh = enumerate_options(dag, s, id, h100());
                const std::vector<FuncDecision> reused =
                    enumerate_options(dag, s, id, h100(), false, &scratch.memo, &scratch);
                CHECK(fresh == reused);
                compared++;
                for (const FuncDecision &f : fresh)
                    below_root +=
                        f.location == ComputeLocation::Block || f.location == ComputeLocation::Thread;
                const std::vector<Decisions> kids = enumerate_children(dag, s, id, h100(), PruningLimits{});
                REQUIRE(!kids.empty());
                s = kids[static_cast<size_t>(walk + step) % kids.size()];
            }
        }
    }
    CHECK(compared > 20);
    CHECK(below_root > 5); // the options judged on the parent's nests were offered
}

TEST_CASE("a root-only search puts every Func at root, inlining only what must be", "[search]") {
    // Validation's device reference: the device's arithmetic under the
    // simplest GPU schedule, one kernel per Func.
    test_pipelines::Blur p(512, 256);
    FunctionDAG dag(p.outputs());
    SearchConfig cfg;
    cfg.beam_size = 1;
    cfg.passes = 1;
    const SearchResult free = search(dag, cfg);
    cfg.root_only = true;
    const SearchResult root = search(dag, cfg);
    int inlined_freely = 0;
    for (size_t n = 0; n < dag.nodes.size(); n++) {
        INFO(dag.nodes[n].name);
        if (dag.nodes[n].always_inline)
            CHECK(root.decisions.funcs[n].location == ComputeLocation::Inline);
        else
            CHECK(root.decisions.funcs[n].location == ComputeLocation::Root);
        inlined_freely +=
            !dag.nodes[n].always_inline && free.decisions.funcs[n].location != ComputeLocation::Root;
    }
    CHECK(inlined_freely > 0); // the unrestricted search does not, on this blur
}

TEST_CASE("a record replays to the same decisions", "[search][record]") {
    test_pipelines::Blur p(512, 256);
    FunctionDAG dag(p.outputs());
    SearchResult r = search(dag, 2, 1, 5);
    nlohmann::json rec = record_to_json(dag, r, nlohmann::json::object(), false, 1.0);
    CHECK(rec["statistics"]["states_costed"].get<int64_t>() == r.stats.states_costed);
    CHECK(rec["stage_costs"].size() == r.stage_costs.size());
    Decisions back = decisions_from_json(dag, rec["decisions"]);
    CHECK(back == r.decisions);
    rec["decisions"][0]["func"] = "not_a_func";
    CHECK_THROWS_WITH(decisions_from_json(dag, rec["decisions"]), Catch::Contains("not_a_func"));
}

TEST_CASE("the record counts each pass's steps, and the counts add up to the search's totals",
          "[search][record]") {
    test_pipelines::Blur p(512, 256);
    FunctionDAG dag(p.outputs());
    SearchConfig cfg;
    cfg.beam_size = 4;
    cfg.passes = 3;
    cfg.seed = 2;
    cfg.freezing = true;
    cfg.freezing_min_funcs = 0; // a pre-pass too, on this small pipeline
    const SearchResult r = search(dag, cfg);
    const nlohmann::json rec = record_to_json(dag, r, nlohmann::json::object(), false, 1.0);
    const nlohmann::json &steps = rec["statistics"]["steps"];
    REQUIRE(steps.is_array());
    int64_t enumerated = 0, costed = 0, hard = 0, soft = 0, sampled = 0;
    std::set<int> passes;
    for (const nlohmann::json &s : steps) {
        passes.insert(s["pass"].get<int>());
        CHECK(s["kept"].get<int64_t>() >= 1);
        CHECK(s["kept"].get<int64_t>() <= cfg.beam_size);
        CHECK(!s["func"].get<std::string>().empty());
        enumerated += s["enumerated"].get<int64_t>();
        costed += s["costed"].get<int64_t>();
        hard += s["pruned_hard"].get<int64_t>();
        soft += s["pruned_soft"].get<int64_t>();
        sampled += s["sampled_out"].get<int64_t>();
    }
    CHECK(passes == std::set<int>{-1, 0, 1, 2});
    CHECK(enumerated == r.stats.states_enumerated);
    CHECK(costed == r.stats.states_costed);
    CHECK(hard == r.stats.states_pruned_hard);
    CHECK(soft == r.stats.states_pruned_soft);
    CHECK(sampled == r.stats.states_sampled_out);
    // Every pass takes the same steps, in the same order.
    CHECK(steps.size() == 4 * static_cast<size_t>(num_steps(dag)));
}

TEST_CASE("a replayed record whose decisions the search cannot produce is refused naming the Func",
          "[search][record]") {
    // A hand-edited or foreign record: the nest would read hosts and
    // consumers that are not where the decisions say (it crashed on one).
    test_pipelines::DiamondChain p(2, 256);
    FunctionDAG dag(p.outputs());
    // By the Funcs' own names: Halide makes a name used before unique ("diamond_1$2").
    const std::string out_name = p.out.name(), d2_name = p.level[2].name(), d1_name = p.level[1].name();
    const int out = dag.node_index(out_name), d2 = dag.node_index(d2_name), d1 = dag.node_index(d1_name);
    REQUIRE((out >= 0 && d2 >= 0 && d1 >= 0));
    Decisions d = initial_decisions(dag);
    for (FuncDecision &f : d.funcs)
        f.location = ComputeLocation::Inline;
    auto at_root = [&](int n) {
        d.funcs[n].location = ComputeLocation::Root;
        d.funcs[n].host = -1;
        d.funcs[n].tiled = true;
        d.funcs[n].stages = {StageTiling{{1}, {32}}};
    };
    at_root(out);
    at_root(d2);
    d.funcs[d1].location = ComputeLocation::Block;
    d.funcs[d1].host = d2;
    d.funcs[d1].tiled = true;
    d.funcs[d1].stages = {StageTiling{{1}, {1}}};
    CHECK(decisions_from_json(dag, decisions_to_json(dag, d)) == d); // a legal one comes back whole
    // Inside out's kernel, but diamond_2 (a kernel of its own) reads it.
    d.funcs[d1].host = out;
    CHECK_THROWS_WITH(decisions_from_json(dag, decisions_to_json(dag, d)),
                      Catch::Contains("'" + d1_name + "'") &&
                          Catch::Contains("'" + d2_name + "' reads it from outside"));
    // A host that is not a kernel.
    d.funcs[d1].host = d2;
    d.funcs[d2].location = ComputeLocation::Inline;
    d.funcs[d2].tiled = false;
    d.funcs[d2].stages.clear();
    CHECK_THROWS_WITH(decisions_from_json(dag, decisions_to_json(dag, d)),
                      Catch::Contains("'" + d1_name + "'") && Catch::Contains("host is not a Func at root"));
    // An output inlined; a tile size of 0.
    at_root(d2);
    d.funcs[out].location = ComputeLocation::Inline;
    d.funcs[out].tiled = false;
    d.funcs[out].stages.clear();
    CHECK_THROWS_WITH(decisions_from_json(dag, decisions_to_json(dag, d)),
                      Catch::Contains("'" + out_name + "' is inlined"));
    at_root(out);
    d.funcs[d2].stages = {StageTiling{{0}, {32}}};
    CHECK_THROWS_WITH(decisions_from_json(dag, decisions_to_json(dag, d)),
                      Catch::Contains("'" + d2_name + "' has a tile size below 1"));
}

TEST_CASE("config errors name the key", "[config]") {
    using nlohmann::json;
    CHECK_THROWS_WITH(parse_plugin_config(json{{"beam_sise", 3}}), Catch::Contains("beam_sise"));
    CHECK_THROWS_WITH(parse_plugin_config(json{{"beam_size", 0}}), Catch::Contains("beam_size"));
    CHECK_THROWS_WITH(parse_plugin_config(json{{"dropout", 1.5}}), Catch::Contains("dropout"));
    CHECK_THROWS_WITH(parse_plugin_config(json{{"split_tie_tolerance", -0.1}}),
                      Catch::Contains("split_tie_tolerance"));
    CHECK_THROWS_WITH(parse_plugin_config(json{{"gpu_profile", "gtx9000"}}), Catch::Contains("gpu_profile"));
    CHECK_THROWS_WITH(parse_plugin_config(json{{"dump_states_path", ""}}),
                      Catch::Contains("dump_states_path"));
    CHECK_THROWS_WITH(parse_plugin_config(json{{"dump_states_max", -4}}), Catch::Contains("dump_states_max"));
    CHECK_THROWS_WITH(parse_plugin_config(json{{"freezing_min_funcs", "many"}}),
                      Catch::Contains("freezing_min_funcs"));
    CHECK(parse_plugin_config(json{{"freezing_min_funcs", 0}}).search.freezing_min_funcs == 0);
    PluginConfig c =
        parse_plugin_config(json{{"beam_size", 3}, {"passes", 2}, {"seed", 9}, {"gpu_profile", "a100"}});
    CHECK(c.search.beam_size == 3);
    CHECK(c.search.passes == 2);
    CHECK(c.search.seed == 9);
    CHECK(c.gpu.name == "a100");
    PluginConfig def = parse_plugin_config(json::object());
    CHECK(def.search.beam_size == 32);
    CHECK(def.search.passes == 5);
    CHECK(def.gpu.name == "h100");
}

// The option table (core/search_config.h) is the one list: what it
// parses is what the record echoes, docs/search.md documents each key, and
// every keyword of the CMake helper sets one of its keys.
TEST_CASE("every search option is parsed from one table and is echoed and documented, and the CMake helper "
          "sets only table keys",
          "[config]") {
    using nlohmann::json;
    std::set<std::string> keys;
    for (const SearchOption &o : search_options()) {
        INFO(o.key);
        CHECK(keys.insert(o.key).second); // no key twice
        CHECK(std::string(o.type).size() > 0);
        CHECK(std::string(o.help).size() > 0);
    }
    // Non-default values of every kind, parsed and echoed back.
    const json values = {{"beam_size", 7},
                         {"passes", 3},
                         {"seed", 11},
                         {"dropout", 0.25},
                         {"memoize", false},
                         {"hierarchical_sampling", false},
                         {"sampling_max_depth", 2},
                         {"freezing", false},
                         {"freezing_min_funcs", 0},
                         {"freeze_tilings", false},
                         {"reuse_tiling_rows", false},
                         {"reuse_parent_nest", false},
                         {"search_layouts", false},
                         {"search_shared_padding", true},
                         {"root_only", true},
                         {"offer_naive", false},
                         {"naive_only", true},
                         {"check_launches", false},
                         {"split_reductions", false},
                         {"atomic_reductions", false},
                         {"in_block_reductions", false},
                         {"split_tie_tolerance", 0.125},
                         {"max_split_bytes", 1048576},
                         {"cost_model", "analytic"},
                         {"weights_path", "w.weights"},
                         {"gpu_profile", "a100"},
                         {"record_path", "r.json"},
                         {"replay", "old.json"},
                         {"dump_states_path", "s.rows"},
                         {"dump_states_max", 9}};
    for (const SearchOption &o : search_options()) {
        INFO(o.key);
        CHECK(values.contains(o.key)); // this test covers every option
    }
    const json echo = echo_plugin_config(parse_plugin_config(values));
    for (const auto &[key, value] : values.items()) {
        INFO(key);
        if (key == "record_path") {
            CHECK_FALSE(echo.contains(key)); // the record is that file
        } else if (key == "gpu_profile") {
            CHECK(echo[key]["name"] == "a100");
        } else {
            CHECK(echo[key] == value);
        }
    }
    const std::string docs = read_text_file(std::string(GPUSCHED_SOURCE_DIR) + "/docs/search.md");
    for (const std::string &k : keys) {
        INFO(k);
        CHECK(docs.find("| `" + k + "` |") != std::string::npos);
    }
    // gpusched_configure_generator's keywords, as its string(JSON SET ...) lines write them.
    const std::string cmake =
        read_text_file(std::string(GPUSCHED_SOURCE_DIR) + "/cmake/gpuschedHelpers.cmake");
    const std::regex set_key(R"(string\(JSON config SET "\$\{config\}" (\w+))");
    int written = 0;
    for (auto it = std::sregex_iterator(cmake.begin(), cmake.end(), set_key); it != std::sregex_iterator();
         ++it) {
        ++written;
        INFO((*it)[1].str());
        CHECK(keys.count((*it)[1].str()) == 1);
    }
    // ...and the keywords it lowercases into keys (foreach(key BEAM_SIZE ...)).
    std::smatch each;
    REQUIRE(std::regex_search(cmake, each, std::regex(R"(foreach\(key ([A-Z_ ]+)\))")));
    std::istringstream words(each[1].str());
    for (std::string w; words >> w; ++written) {
        for (char &ch : w)
            ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        INFO(w);
        CHECK(keys.count(w) == 1);
    }
    CHECK(written >= 5);
}

TEST_CASE("autoscheduler options are laid over the GPUSCHED_CONFIG file, typed like its values, unknown keys "
          "refused",
          "[config]") {
    // A generator's `autoscheduler.KEY=VALUE` arguments (Halide 16 and
    // later) reach the plugin as strings.
    const std::string file = (fs::temp_directory_path() / "gpusched-options-config.json").string();
    std::ofstream(file) << R"({"beam_size": 7, "passes": 3, "gpu_profile": "a100"})";
    ::setenv("GPUSCHED_CONFIG", file.c_str(), 1);
    PluginConfig c = load_plugin_config({{"passes", "2"}, {"freezing", "false"}, {"gpu_profile", "v100"}});
    CHECK(c.search.beam_size == 7); // from the file
    CHECK(c.search.passes == 2);    // the option wins
    CHECK_FALSE(c.search.freezing);
    CHECK(c.gpu.name == "v100");
    // A number where a string is expected, and the reverse, are named.
    CHECK_THROWS_WITH(load_plugin_config({{"passes", "two"}}), Catch::Contains("passes"));
    CHECK_THROWS_WITH(load_plugin_config({{"bogus", "1"}}), Catch::Contains("\"bogus\": unknown key"));
    ::unsetenv("GPUSCHED_CONFIG");
    CHECK(load_plugin_config({{"beam_size", "4"}}).search.beam_size == 4);
    fs::remove(file);
}

TEST_CASE("kernel memoization changes no feature and no decision", "[search][memo]") {
    test_pipelines::Blur p(512, 256);
    FunctionDAG dag(p.outputs());
    SearchResult with = search(dag, 4, 2, 9, 0, true);
    SearchResult without = search(dag, 4, 2, 9, 0, false);
    CHECK(with.decisions == without.decisions);
    CHECK(with.cost == without.cost);
    CHECK(with.stats.memo_hits > 0);
    CHECK(without.stats.memo_hits == 0);
    REQUIRE(with.features.schedule.size() == without.features.schedule.size());
    for (size_t i = 0; i < with.features.schedule.size(); i++)
        CHECK(with.features.schedule[i].values == without.features.schedule[i].values);
}

TEST_CASE("hierarchical sampling featurizes fewer states and stays deterministic", "[search][sampling]") {
    test_pipelines::Blur p(512, 256);
    FunctionDAG dag(p.outputs());
    SearchConfig cfg;
    cfg.beam_size = 4;
    cfg.passes = 2;
    cfg.seed = 5;
    cfg.freezing = false; // sampling alone (freezing: test_scalability.cpp)
    SearchResult sampled = search(dag, cfg);
    SearchResult again = search(dag, cfg);
    cfg.hierarchical_sampling = false;
    SearchResult full = search(dag, cfg);
    CHECK(sampled.decisions == again.decisions);
    CHECK(sampled.stats.states_sampled_out > 0);
    CHECK(full.stats.states_sampled_out == 0);
    CHECK(sampled.stats.states_featurized < full.stats.states_featurized);
    CHECK(full.cost <= sampled.cost * (1 + 1e-9));
}
