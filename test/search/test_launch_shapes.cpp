// Shapes whose schedules compiled and passed ptxas but asked for more
// threads per block than a GPU allows (issue 12): a scan whose reduction
// domain reaches past its consumer's tile, and a down/up-sampling pyramid
// whose per-block regions change extent with the block's position through
// chains of rounding divisions. Every schedule the search space keeps for
// them must launch within the limits: the tests walk the pruned search space
// at random (biased towards block and thread levels, where the footprint
// model decides the launch) and run the search itself, lower each result as
// the generator would, and read the launches (core/launch_check.h).

#include "test/catch2_compat.h"

#include <functional>
#include <random>
#include <set>

#include <Halide.h>

#include "core/beam_search.h"
#include "core/featurize_schedule.h"
#include "core/kernel_assertions.h"
#include "core/launch_check.h"
#include "core/loop_nest.h"
#include "core/schedule_apply.h"
#include "core/search_space.h"
#include "test/gpu_profiles.h"
#include "test/search/dag_lookup.h"
#include "test/search/test_cost_model.h"

using namespace gpusched;

namespace {

using gpusched::test::h100;

const Halide::Target kCuda(GPUSCHED_HOST_TARGET "-cuda-cuda_capability_86");

// f(x, y) = in(x, y); f(x, r) = a f(x, r - 1) + b in(x, r) over almost all
// rows, read pointwise by the output.
struct Scan {
    Halide::Var x{"x"}, y{"y"};
    Halide::ImageParam in{Halide::Float(32), 2, "scan_in"};
    Halide::Func f{"scan_f"}, out{"scan_out"};
    Halide::RDom r;
    explicit Scan(int w = 512, int h = 1024) : r(1, h - 1, "scan_r") {
        f(x, y) = in(x, y);
        f(x, r) = 0.75f * f(x, r - 1) + 0.25f * in(x, r);
        out(x, y) = f(x, y) * 2.0f + 1.0f;
        in.dim(0).set_estimate(0, w);
        in.dim(1).set_estimate(0, h);
        out.set_estimate(x, 0, w).set_estimate(y, 0, h);
    }
    std::vector<Halide::Internal::Function> outputs() const { return {out.function()}; }
};

// A Laplacian-style pyramid: `levels` downsamplings with (2x-1, 2x, 2x+1)
// taps, then back up level by level, each upsampling reading the coarser
// level at (x/2, (x+1)/2) in both dimensions.
struct Pyramid {
    Halide::Var x{"x"}, y{"y"};
    Halide::ImageParam in{Halide::Float(32), 2, "pyr_in"};
    std::vector<Halide::Func> down, up;
    Halide::Func out{"pyr_out"};
    explicit Pyramid(int levels = 4, int w = 1024, int h = 1024) {
        using Halide::Expr;
        down.emplace_back("pyr_down_0");
        down[0](x, y) = Halide::BoundaryConditions::repeat_edge(in)(x, y);
        for (int k = 1; k <= levels; k++) {
            down.emplace_back("pyr_down_" + std::to_string(k));
            const Halide::Func &p = down[k - 1];
            Expr row = [&](Expr yy) {
                return p(2 * x - 1, yy) + 2.0f * p(2 * x, yy) + p(2 * x + 1, yy);
            }(2 * y - 1);
            Expr mid = p(2 * x - 1, 2 * y) + 2.0f * p(2 * x, 2 * y) + p(2 * x + 1, 2 * y);
            Expr bot = p(2 * x - 1, 2 * y + 1) + 2.0f * p(2 * x, 2 * y + 1) + p(2 * x + 1, 2 * y + 1);
            down[k](x, y) = (row + 2.0f * mid + bot) * (1.0f / 16);
        }
        up.resize(levels + 1);
        up[levels] = Halide::Func("pyr_up_" + std::to_string(levels));
        up[levels](x, y) = down[levels](x, y);
        for (int k = levels - 1; k >= 0; k--) {
            up[k] = Halide::Func("pyr_up_" + std::to_string(k));
            const Halide::Func &c = up[k + 1];
            Expr coarse = (c(x / 2, y / 2) + c((x + 1) / 2, y / 2) + c(x / 2, (y + 1) / 2) +
                           c((x + 1) / 2, (y + 1) / 2)) *
                          0.25f;
            up[k](x, y) = down[k](x, y) * 0.5f + coarse;
        }
        out(x, y) = up[0](x, y);
        in.dim(0).set_estimate(0, w);
        in.dim(1).set_estimate(0, h);
        out.set_estimate(x, 0, w).set_estimate(y, 0, h);
    }
    std::vector<Halide::Internal::Function> outputs() const { return {out.function()}; }
};

// Fuzz seed 47's shape: a 3x3 stencil, a bilinear 2x upsampling of it that
// reads the coarse level at ((x - 1) / 2, (x - 1) / 2 + 1), and a 3x3 stencil
// of that. A block of the last stencil that starts at an odd column needs one
// more column of the first stencil than one that starts at an even column.
struct UpsampleChain {
    Halide::Var x{"x"}, y{"y"};
    Halide::ImageParam in{Halide::Float(32), 2, "chain_in"};
    Halide::Func first{"chain_first"}, up{"chain_up"}, out{"chain_out"};
    explicit UpsampleChain(int w = 128, int h = 96) {
        using Halide::Expr;
        Halide::Func b = Halide::BoundaryConditions::mirror_image(in);
        first(x, y) = (b(x - 1, y) + 2.0f * b(x, y) + b(x + 1, y) + b(x, y - 1) + b(x, y + 1)) * (1.0f / 6);
        const Expr x0 = (x - 1) / 2, y0 = (y - 1) / 2;
        const Expr wx = Halide::select(x % 2 == 0, 0.25f, 0.75f),
                   wy = Halide::select(y % 2 == 0, 0.25f, 0.75f);
        up(x, y) = ((first(x0, y0) * (1 - wx) + first(x0 + 1, y0) * wx) * (1 - wy) +
                    (first(x0, y0 + 1) * (1 - wx) + first(x0 + 1, y0 + 1) * wx) * wy);
        out(x, y) = (up(x - 1, y) + up(x, y) + up(x + 1, y) + up(x, y - 1) + up(x, y + 1)) * 0.2f;
        in.dim(0).set_estimate(0, w);
        in.dim(1).set_estimate(0, h);
        out.set_estimate(x, 0, 2 * w).set_estimate(y, 0, 2 * h);
    }
    std::vector<Halide::Internal::Function> outputs() const { return {out.function()}; }
};

// Fuzz seed 1500's shape: `mix` read along two paths that move apart as a
// block moves: by a 3x3 stencil that a transpose then reads, and by a
// pointwise stage read plainly; the output adds the two. Below root in the
// output's kernel, mix's region per block is the union of a tile and its
// transpose, which grows with the block's distance from the diagonal.
struct TransposePaths {
    Halide::Var x{"x"}, y{"y"};
    Halide::ImageParam in{Halide::Float(32), 2, "tp_in"};
    Halide::Func mix{"tp_mix"}, blur{"tp_blur"}, flip{"tp_flip"}, wave{"tp_wave"}, out{"tp_out"};
    explicit TransposePaths(int size = 96) {
        Halide::Func b = Halide::BoundaryConditions::repeat_edge(in);
        mix(x, y) = b(x, y) * 0.5f + 1.0f;
        blur(x, y) = (mix(x - 1, y) + mix(x + 1, y) + mix(x, y - 1) + mix(x, y + 1) + mix(x, y)) * 0.2f;
        flip(x, y) = blur(y, x);
        wave(x, y) = Halide::sin(mix(x, y));
        out(x, y) = flip(x, y) + wave(x, y);
        in.dim(0).set_estimate(0, size);
        in.dim(1).set_estimate(0, size);
        out.set_estimate(x, 0, size).set_estimate(y, 0, size);
    }
    std::vector<Halide::Internal::Function> outputs() const { return {out.function()}; }
};

// A Func read at two strides in one kernel: `fine` reads it pointwise and
// `coarse` at 2x and 2x + 1, both read by `both`; the output reads `both`
// at (x + 1) / 4, so every Func above it is sized by its largest extent over
// the tile's starts. In a kernel of `both` the region of src moves with slope
// 1 along one path and 2 along the other: its extent bends (convex), and the
// region of fine or coarse alone moves as a line. In the output's kernel a
// tile 2 mod 4 wide needs the most of `both` at starts 2 mod 4 only, which
// neither the first nor the last start (1, 31) is. `band`, read through a
// clamp to columns 40..50, is read most by tiles that start in between: its
// shape is unknown, and every start must be walked.
struct MixedStrides {
    Halide::Var x{"x"}, y{"y"};
    Halide::ImageParam in{Halide::Float(32), 2, "ms_in"};
    Halide::Func src{"ms_src"}, fine{"ms_fine"}, coarse{"ms_coarse"}, band{"ms_band"}, edge{"ms_edge"},
        both{"ms_both"}, out{"ms_out"};
    explicit MixedStrides(int size = 256) {
        Halide::Func b = Halide::BoundaryConditions::repeat_edge(in);
        src(x, y) = b(x, y) * 0.5f + b(x, y + 1);
        fine(x, y) = src(x, y) + src(x + 1, y);
        coarse(x, y) = src(2 * x, y) + src(2 * x + 1, y);
        band(x, y) = b(x + 1, y) * 2.0f;
        edge(x, y) = band(Halide::clamp(x, 40, 50), y);
        both(x, y) = fine(x, y) * coarse(x, y) + edge(x, y);
        out(x, y) = both((x + 1) / 4, y) * 2.0f;
        in.dim(0).set_estimate(0, 2 * size);
        in.dim(1).set_estimate(0, size);
        out.set_estimate(x, 0, size).set_estimate(y, 0, size);
    }
    std::vector<Halide::Internal::Function> outputs() const { return {out.function()}; }
};

bool below_root(ComputeLocation l) {
    return l == ComputeLocation::Block || l == ComputeLocation::Thread;
}

// A complete schedule from the pruned search space, each step's child drawn
// at random; at a location step, a block or thread level is taken 3 times in
// 4 when one is offered. on_children sees every step's children first.
Decisions random_walk(const FunctionDAG &dag, std::mt19937 &rng,
                      const std::function<void(const std::vector<Decisions> &)> &on_children = {}) {
    Decisions d = initial_decisions(dag);
    for (int step = 0; step < num_steps(dag); step++) {
        const StepId id = step_at(dag, step);
        std::vector<Decisions> kids = enumerate_children(dag, d, id, h100(), PruningLimits{});
        REQUIRE(!kids.empty());
        if (on_children) on_children(kids);
        std::vector<size_t> low;
        for (size_t i = 0; i < kids.size(); i++)
            if (id.phase == 0 && below_root(kids[i].funcs[id.node].location)) low.push_back(i);
        size_t pick = std::uniform_int_distribution<size_t>(0, kids.size() - 1)(rng);
        if (!low.empty() && std::uniform_int_distribution<int>(0, 3)(rng) != 0)
            pick = low[std::uniform_int_distribution<size_t>(0, low.size() - 1)(rng)];
        d = kids[pick];
    }
    return d;
}

// d applied to a fresh instance of P, with the shapes the plugin checks at.
struct ScheduledPipeline {
    Halide::Pipeline pipeline;
    EstimatedShapes shapes;
};
template <typename P, typename... Args> ScheduledPipeline scheduled(const Decisions &d, Args... args) {
    P p(args...);
    FunctionDAG dag(p.outputs());
    Halide::Pipeline pipe(p.out);
    schedule_pipeline(dag, d, pipe, true);
    return {pipe, dag.estimated_shapes()};
}

// The launch check's verdict on d, applied to a fresh instance of P.
template <typename P, typename... Args> std::string launch_violations_of(const Decisions &d, Args... args) {
    const ScheduledPipeline s = scheduled<P>(d, args...);
    return check_kernel_launches(s.pipeline, kCuda, h100(), s.shapes);
}

std::string describe(const FunctionDAG &dag, const Decisions &d) {
    std::string s;
    for (size_t n = 0; n < dag.nodes.size(); n++) {
        const FuncDecision &f = d.funcs[n];
        s += dag.nodes[n].name + ":" + std::to_string(static_cast<int>(f.location));
        if (f.host >= 0) s += "@" + dag.nodes[f.host].name;
        for (const StageTiling &t : f.stages) {
            s += " [";
            for (size_t i = 0; i < t.serial.size(); i++)
                s += std::to_string(t.serial[i]) + "x" + std::to_string(t.thread[i]) + " ";
            s += "]";
        }
        s += "; ";
    }
    return s;
}

// Random walks plus the search (beam 8 x 2 and greedy samples, with the
// test cost model): every schedule must launch within the limits. Returns
// how many of the walks put some Func below root.
template <typename P, typename... Args> int check_schedules_launch(int walks, Args... args) {
    P p(args...);
    FunctionDAG dag(p.outputs());
    std::vector<Decisions> schedules;
    std::mt19937 rng(12);
    for (int w = 0; w < walks; w++)
        schedules.push_back(random_walk(dag, rng));
    test_support::TestCostModel model;
    model.set_pipeline(pipeline_features(dag));
    for (int seed = 0; seed < 3; seed++) {
        SearchConfig cfg;
        cfg.beam_size = seed == 0 ? 8 : 1;
        cfg.passes = seed == 0 ? 2 : 1;
        cfg.dropout = seed == 0 ? 0 : 0.5;
        cfg.seed = static_cast<uint64_t>(seed);
        schedules.push_back(beam_search(dag, model, h100(), cfg).decisions);
    }
    int below = 0;
    for (const Decisions &d : schedules) {
        bool any = false;
        for (const FuncDecision &f : d.funcs)
            any = any || below_root(f.location);
        below += any ? 1 : 0;
        INFO(describe(dag, d));
        CHECK(launch_violations_of<P>(d, args...) == "");
    }
    return below;
}

using gpusched::test::node_named;

// `out` at root in blocks of `tiling` (serial, threads), and each Func of
// `at_block` at its Block level, one point a thread.
Decisions blocks_of(const FunctionDAG &dag, int out, const StageTiling &tiling,
                    const std::vector<int> &at_block) {
    Decisions d = initial_decisions(dag);
    d.funcs[out].location = ComputeLocation::Root;
    d.funcs[out].tiled = true;
    d.funcs[out].stages = {tiling};
    for (int n : at_block) {
        d.funcs[n].location = ComputeLocation::Block;
        d.funcs[n].host = out;
        d.funcs[n].tiled = true;
        d.funcs[n].stages.clear();
        for (const gpusched::Stage &st : dag.nodes[n].stages)
            d.funcs[n].stages.push_back(StageTiling{std::vector<int64_t>(st.loops.size(), 1),
                                                    std::vector<int64_t>(st.loops.size(), 1)});
    }
    return d;
}

} // namespace

TEST_CASE("a scan's region per block includes the rows its reduction domain reaches", "[search][launch]") {
    Scan p;
    FunctionDAG dag(p.outputs());
    const int f = node_named(dag, p.f), out = node_named(dag, p.out);
    // out in 16 x 16 tiles of 32 x 8 threads (16 x 128 points), f at its block level.
    const Decisions d = blocks_of(dag, out, StageTiling{{1, 16}, {16, 8}}, {f});
    LoopNest nest(dag, d);
    // The update runs r over rows 1..1023 and reads row r - 1: whatever the
    // tile, the block computes f's rows 0..1023.
    REQUIRE(nest.realization_region[f].size() == 2);
    CHECK(nest.realization_region[f][0].extent() == 16);
    CHECK(nest.realization_region[f][1].min == 0);
    CHECK(nest.realization_region[f][1].max == 1023);
    // So the pure definition alone needs 16 x 1024 threads: the search must refuse it.
    CHECK_FALSE(hard_limit_violation(dag, d, h100(), PruningLimits{}).empty());
    // And Halide agrees: that schedule asks for more threads than a block may have.
    CHECK(launch_violations_of<Scan>(d) != "");
}

TEST_CASE("every scan schedule the search space keeps launches within the limits", "[search][launch]") {
    check_schedules_launch<Scan>(12);
    // Why none: its region per block would be the reduction domain's.
    Scan p;
    FunctionDAG dag(p.outputs());
    CHECK_FALSE(dag.nodes[node_named(dag, p.f)].updates_stay_in_tile);
}

TEST_CASE("every pyramid schedule the search space keeps launches within the limits", "[search][launch]") {
    CHECK(check_schedules_launch<Pyramid>(16, 4, 1024, 1024) > 0);
}

// Walks the pruned space as the search does: at every step, the nests of all
// the children of the current state are built with one memo, and each must
// have the regions and the features (which read what each stage demands,
// also memoized) of a nest built without the memo. Returns the memo's hits
// of regions below root and of demands.
template <typename P, typename... Args>
std::pair<int64_t, int64_t> check_region_memo_matches(int walks, Args... args) {
    P p(args...);
    FunctionDAG dag(p.outputs());
    RegionMemo memo;
    std::mt19937 rng(5);
    auto compare = [&](const std::vector<Decisions> &kids) {
        for (const Decisions &kid : kids) {
            const LoopNest with(dag, kid, &memo), without(dag, kid);
            INFO(describe(dag, kid));
            REQUIRE(with.realization_region.size() == without.realization_region.size());
            for (size_t n = 0; n < dag.nodes.size(); n++) {
                INFO("Func " << dag.nodes[n].name);
                CHECK(with.realization_region[n] == without.realization_region[n]);
                CHECK(with.block_region[n] == without.block_region[n]);
            }
            const StateFeatures fw = featurize(with, h100()), fo = featurize(without, h100());
            REQUIRE(fw.schedule.size() == fo.schedule.size());
            CHECK(fw.stage_ids == fo.stage_ids);
            for (size_t r = 0; r < fw.schedule.size(); r++)
                CHECK(fw.schedule[r].values == fo.schedule[r].values);
        }
    };
    for (int w = 0; w < walks; w++)
        random_walk(dag, rng, compare);
    return {memo.hits, memo.demand_hits};
}

TEST_CASE("a Func read along two paths that move apart is flagged and every schedule kept launches within "
          "the limits",
          "[search][launch]") {
    TransposePaths p;
    FunctionDAG dag(p.outputs());
    // Each consumer reads mix with one plain pattern; the transpose is one
    // Func further down, on one of the two paths only.
    CHECK_FALSE(dag.nodes[node_named(dag, p.mix)].reads_vary_with_tile);
    CHECK(dag.nodes[node_named(dag, p.mix)].paths_move_apart);
    CHECK_FALSE(dag.nodes[node_named(dag, p.blur)].paths_move_apart); // one path: its region moves whole
    CHECK(check_schedules_launch<TransposePaths>(24) > 0);
}

// Walks the pruned space: every child's nest built walking only the tile
// starts its regions' shapes leave possible (core/shift_shape.h) must have
// the regions of a nest walked at every start. Returns the walks saved.
template <typename P, typename... Args> int64_t check_shapes_size_as_every_start(int walks, Args... args) {
    P p(args...);
    FunctionDAG dag(p.outputs());
    std::mt19937 rng(11);
    int64_t saved = 0;
    auto compare = [&](const std::vector<Decisions> &kids) {
        for (const Decisions &kid : kids) {
            const LoopNest shaped(dag, kid, nullptr, TileStarts::WhereShapeAllows),
                every(dag, kid, nullptr, TileStarts::Every);
            INFO(describe(dag, kid));
            for (size_t n = 0; n < dag.nodes.size(); n++) {
                INFO("Func " << dag.nodes[n].name);
                CHECK(shaped.realization_region[n] == every.realization_region[n]);
                CHECK(shaped.block_region[n] == every.block_region[n]);
            }
            CHECK(every.shift_walks_saved == 0);
            saved += shaped.shift_walks_saved;
        }
    };
    for (int w = 0; w < walks; w++)
        random_walk(dag, rng, compare);
    return saved;
}

TEST_CASE("regions sized from the tile starts their shapes leave possible are those sized from every start",
          "[search][launch]") {
    // Lines and a bend: walks saved where the way from the tile to a Func
    // has no division.
    CHECK(check_shapes_size_as_every_start<MixedStrides>(8) > 0);
    // Pyramids, rounding chains and paths that move apart: mostly every
    // start, and the same regions wherever a shape is trusted.
    check_shapes_size_as_every_start<Pyramid>(4, 4, 1024, 1024);
    check_shapes_size_as_every_start<UpsampleChain>(6);
    check_shapes_size_as_every_start<TransposePaths>(6);
}

TEST_CASE("a Func read through (x + 1) / 4 is sized from one period of tile starts, where only starts 2 "
          "mod 4 need its widest region",
          "[search][launch]") {
    MixedStrides p;
    FunctionDAG dag(p.outputs());
    const int out = node_named(dag, p.out), both = node_named(dag, p.both);
    // out in blocks of 2 x 1 points, `both` at its block level: a block at
    // column x0 reads both over [(x0 + 1) / 4, (x0 + 2) / 4], 2 columns
    // where x0 is 2 mod 4 and 1 elsewhere.
    const Decisions d = blocks_of(dag, out, StageTiling{{1, 1}, {2, 1}}, {both});
    const LoopNest shaped(dag, d, nullptr, TileStarts::WhereShapeAllows),
        every(dag, d, nullptr, TileStarts::Every);
    REQUIRE(every.block_region[both].size() == 2);
    CHECK(every.block_region[both][0].extent() == 2);
    CHECK(shaped.block_region[both] == every.block_region[both]);
    // Period 4 in x (the shape's x / 4 of a line), a line in y: 4 of the 31
    // tile starts walked.
    CHECK(shaped.shift_walks_saved == 27);
}

TEST_CASE("a Func read through a clamp is sized from every tile start, its widest region at starts inside "
          "the clamp's range",
          "[search][launch]") {
    MixedStrides p;
    FunctionDAG dag(p.outputs());
    const int both = node_named(dag, p.both), edge = node_named(dag, p.edge), band = node_named(dag, p.band);
    // `both` in blocks of 4 x 1 points, edge inlined into it, band at its
    // block level. The nest's block is the middle one of both's 17 (65
    // columns, 0..64, for out's 256): columns 32..35, moved to 33..36 at the
    // first start walked and 63..66 at the last. It reads band over
    // clamp([x0, x0 + 3], 40, 50): one column at both of those, four where
    // the block starts at 40..47.
    Decisions d = blocks_of(dag, both, StageTiling{{1, 1}, {4, 1}}, {band});
    d.funcs[edge].location = ComputeLocation::Inline;
    const LoopNest shaped(dag, d, nullptr, TileStarts::WhereShapeAllows),
        every(dag, d, nullptr, TileStarts::Every);
    REQUIRE(every.block_region[band].size() == 2);
    CHECK(every.block_region[band][0].extent() == 4);
    CHECK(shaped.block_region[band] == every.block_region[band]);
    CHECK(shaped.shift_walks_saved == 0);
}

TEST_CASE("regions and features from nests built with the search's region memo are the ones computed "
          "without it",
          "[search][launch]") {
    // Pyramids and rounding chains: the regions sized over every tile start.
    const auto [pyramid_regions, pyramid_demands] = check_region_memo_matches<Pyramid>(4, 4, 1024, 1024);
    CHECK(pyramid_regions > 0);
    CHECK(pyramid_demands > 0);
    const auto [chain_regions, chain_demands] = check_region_memo_matches<UpsampleChain>(6);
    CHECK(chain_regions > 0);
    CHECK(chain_demands > 0);
    // A scan's Func stays at root; the memo must not change that either.
    check_region_memo_matches<Scan>(3);
}

TEST_CASE("a producer two rounding levels below the block is sized for a block at an odd start",
          "[search][launch]") {
    UpsampleChain p;
    FunctionDAG dag(p.outputs());
    const int out = node_named(dag, p.out), up = node_named(dag, p.up), first = node_named(dag, p.first);
    // out in blocks of 64 x 2 points (64 threads, 2 rows each), up and first
    // at its block level: fuzz seed 47's greedy schedule.
    const Decisions d = blocks_of(dag, out, StageTiling{{1, 2}, {64, 1}}, {up, first});
    LoopNest nest(dag, d);
    // A block over out's columns [x0, x0 + 63] reads up over [x0 - 1, x0 + 64]
    // and first over [(x0 - 2) / 2, (x0 + 63) / 2 + 1]: 34 columns when x0 is
    // even, 35 when it is odd (the last block, shifted inwards, may start
    // there). The same in y for 2 rows: 3 or 4.
    REQUIRE(nest.block_region[first].size() == 2);
    CHECK(nest.block_region[first][0].extent() == 35);
    CHECK(nest.block_region[first][1].extent() == 4);
    // Halide agrees: no bound it cannot check is left inside the kernel.
    CHECK(launch_violations_of<UpsampleChain>(d) == "");
}

TEST_CASE("every schedule of a stencil over a bilinear upsampling launches with no unchecked bound",
          "[search][launch]") {
    CHECK(check_schedules_launch<UpsampleChain>(16) > 0);
}

namespace {

// Random walks of P's search space (most with Funcs below root), each
// applied to a fresh instance of P: the kernels the launch check reads
// before the GPU offload (lower_kernels), against the launch calls the
// offload writes into the host code of a whole CUDA compile (PTX included).
// The same kernels in the same order, each with the same threads and shared
// memory. Returns how many launches were compared.
template <typename P, typename... Args> size_t compare_with_host_launches(int walks, Args... args) {
    P p(args...);
    FunctionDAG dag(p.outputs());
    std::mt19937 rng(29);
    size_t compared = 0;
    for (int w = 0; w < walks; w++) {
        const Decisions d = random_walk(dag, rng);
        INFO(describe(dag, d));
        // One pipeline for both: the pass lower_kernels leaves on it does
        // nothing in the compile.
        Halide::Pipeline pipeline = scheduled<P>(d, args...).pipeline;
        const std::vector<KernelLaunch> read = lower_kernels(pipeline, kCuda).launches;
        const std::vector<KernelLaunch> host =
            kernel_launches(pipeline.compile_to_module(pipeline.infer_arguments(), "walk", kCuda));
        REQUIRE(read.size() == host.size());
        for (size_t k = 0; k < host.size(); k++) {
            const KernelLaunch &a = host[k], &b = read[k];
            INFO("kernel " << a.kernel << ": threads " << a.threads_expr[0] << " x " << a.threads_expr[1]
                           << " x " << a.threads_expr[2] << ", shared " << a.shared_mem_expr
                           << "; read before the offload as " << b.kernel << ": " << b.threads_expr[0]
                           << " x " << b.threads_expr[1] << " x " << b.threads_expr[2] << ", shared "
                           << b.shared_mem_expr);
            for (int i = 0; i < 3; i++)
                CHECK(a.threads[i] == b.threads[i]);
            CHECK(a.shared_mem_bytes == b.shared_mem_bytes);
            ++compared;
        }
    }
    return compared;
}

} // namespace

TEST_CASE("the launch check reads every kernel's threads and shared memory before the GPU offload as the "
          "offload launches it",
          "[search][launch]") {
    CHECK(compare_with_host_launches<Scan>(6) > 0);
    CHECK(compare_with_host_launches<Pyramid>(6, 4, 1024, 1024) > 0);
    CHECK(compare_with_host_launches<UpsampleChain>(6) > 0);
}
