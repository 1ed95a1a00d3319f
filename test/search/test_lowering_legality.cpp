// Compute levels below root must lower: Halide bounds a producer's region at
// its compute level from the simplified definition, with the loops outside
// that level fixed, and the search (staging, Block and Thread locations)
// must only choose levels where those bounds are finite.
//
// The pipeline is the access pattern of the max_filter suite app: a column
// read at y - h(t) and y + h(t) + 1 - (1 << lvl(t)), where lvl counts how
// many powers of two fit in 2h + 1. The footprint is small and affine in the
// loop bounds when every loop is an interval, but Halide 14 simplifies
// `1 << lvl` to shift_left(1, uint32(lvl)) and, with t a fixed outer loop,
// bounds it as [0, +inf): lowering a per-thread or per-block copy of the
// input failed with "accessed over an unbounded domain in dimension _1".
#include "test/catch2_compat.h"

#include <set>

#include "core/beam_search.h"
#include "core/schedule_apply.h"
#include "core/search_space.h"
#include "test/gpu_profiles.h"
#include "test/search/dag_lookup.h"
#include "test/search/pipelines.h"
#include "test/search/test_cost_model.h"

using namespace gpusched;

namespace {

using gpusched::test::h100;

// max_filter's vertical pass at radius r, reduced to its indexing.
struct ShiftedColumn {
    Halide::Var x{"x"}, y{"y"}, c{"c"}, t{"t"};
    Halide::ImageParam in{Halide::Float(32), 3, "sc_in"};
    Halide::Func clamped{"sc_clamped"}, vert{"sc_vert"}, out{"sc_out"};
    explicit ShiftedColumn(int r = 26) {
        using namespace Halide;
        clamped = BoundaryConditions::repeat_edge(in);
        Expr h = clamp(cast<int>(floor(sqrt(cast<float>(r * r - t * t)))), 0, r);
        Expr lvl = 0;
        for (int l = 1; (1 << l) <= 2 * r + 1; l++)
            lvl += select(2 * h + 1 >= (1 << l), 1, 0);
        vert(x, y, c, t) = max(clamped(x, y - h, c), clamped(x, y + h + 1 - (1 << lvl), c));
        RDom dx(-r, 2 * r + 1, "sc_dx");
        out(x, y, c) = maximum(vert(x + dx, y, c, cast<int>(abs(dx))));
        in.dim(0).set_estimate(0, 512);
        in.dim(1).set_estimate(0, 512);
        in.dim(2).set_estimate(0, 3);
        out.set_estimate(x, 0, 512).set_estimate(y, 0, 512).set_estimate(c, 0, 3);
    }
    std::vector<Halide::Internal::Function> outputs() const { return {out.function()}; }
};

// 3-tap blur of a repeat_edge'd input: plain affine reads, the control.
struct PlainBlur {
    Halide::Var x{"x"}, y{"y"};
    Halide::ImageParam in{Halide::Float(32), 2, "pb_in"};
    Halide::Func clamped{"pb_clamped"}, out{"pb_out"};
    PlainBlur() {
        clamped = Halide::BoundaryConditions::repeat_edge(in);
        out(x, y) = clamped(x, y - 1) + clamped(x, y) + clamped(x, y + 1);
        in.dim(0).set_estimate(0, 512);
        in.dim(1).set_estimate(0, 512);
        out.set_estimate(x, 0, 512).set_estimate(y, 0, 512);
    }
    std::vector<Halide::Internal::Function> outputs() const { return {out.function()}; }
};

// bilateral_grid's histogram, reduced: each (x, y) cell adds its 4x4 pixels
// into the z bin their value falls in, and a blur in z reads it.
struct ScatteredHistogram {
    Halide::Var x{"x"}, y{"y"}, z{"z"};
    Halide::ImageParam in{Halide::Float(32), 2, "sh_in"};
    Halide::RDom r{0, 4, 0, 4, "sh_r"};
    Halide::Func hist{"sh_hist"}, out{"sh_out"};
    ScatteredHistogram() {
        using namespace Halide;
        hist(x, y, z) = 0.0f;
        Expr bin = clamp(cast<int>(in(x * 4 + r.x, y * 4 + r.y) * 8), 0, 7);
        hist(x, y, bin) += 1.0f;
        out(x, y, z) = hist(x, y, z - 1) + 2.0f * hist(x, y, z) + hist(x, y, z + 1);
        in.dim(0).set_estimate(0, 256);
        in.dim(1).set_estimate(0, 256);
        out.set_estimate(x, 0, 64).set_estimate(y, 0, 64).set_estimate(z, 0, 8);
    }
    std::vector<Halide::Internal::Function> outputs() const { return {out.function()}; }
};

// The control: a reduction that accumulates in place, f(x, y) += ...
struct InPlaceSum {
    Halide::Var x{"x"}, y{"y"}, z{"z"};
    Halide::ImageParam in{Halide::Float(32), 2, "ip_in"};
    Halide::RDom r{0, 4, "ip_r"};
    Halide::Func sum{"ip_sum"}, out{"ip_out"};
    InPlaceSum() {
        sum(x, y, z) = 0.0f;
        sum(x, y, z) += in(x * 4 + r, y) * Halide::cast<float>(z);
        out(x, y, z) = sum(x, y, z - 1) + 2.0f * sum(x, y, z) + sum(x, y, z + 1);
        in.dim(0).set_estimate(0, 256);
        in.dim(1).set_estimate(0, 64);
        out.set_estimate(x, 0, 64).set_estimate(y, 0, 64).set_estimate(z, 0, 8);
    }
    std::vector<Halide::Internal::Function> outputs() const { return {out.function()}; }
};

// out reads f at (x, y) and at (y, x): per block, f's region is the union of
// the tile and its transpose, whose extent grows with the distance from the
// diagonal (random_pipeline seed 46).
struct ReadAndTranspose {
    Halide::Var x{"x"}, y{"y"};
    Halide::ImageParam in{Halide::Float(32), 2, "rt_in"};
    Halide::Func f{"rt_f"}, out{"rt_out"};
    explicit ReadAndTranspose(bool transpose) {
        f(x, y) = in(x, y) * 2.0f + 1.0f;
        out(x, y) = transpose ? f(x, y) + f(y, x) : f(x, y) + f(x + 1, y);
        in.dim(0).set_estimate(0, 512);
        in.dim(1).set_estimate(0, 512);
        out.set_estimate(x, 0, 256).set_estimate(y, 0, 256);
    }
    std::vector<Halide::Internal::Function> outputs() const { return {out.function()}; }
};

using gpusched::test::node_named;

const Edge &edge_into(const FunctionDAG &dag, int consumer, int producer) {
    for (const Edge &e : dag.nodes[consumer].stages[0].edges)
        if (!e.producer.is_image && e.producer.index == producer) return e;
    FAIL("no edge from " << dag.nodes[consumer].name << " to " << dag.nodes[producer].name);
    return dag.nodes[consumer].stages[0].edges[0];
}

// Applies the decisions and lowers for CUDA (PTX codegen needs no GPU).
void lower_for_cuda(const Halide::Func &out, const FunctionDAG &dag, const Decisions &d) {
    Halide::Pipeline p(out);
    schedule_pipeline(dag, d, p, true);
    Halide::Target target("x86-64-linux-cuda-cuda_capability_86");
    REQUIRE_NOTHROW(p.compile_to_module(p.infer_arguments(), "gs_legality", target));
}

// Every Func at root (one thread, one serial point per loop), the inlinable
// rest inline.
Decisions all_root(const FunctionDAG &dag) {
    Decisions d;
    for (const Node &n : dag.nodes) {
        FuncDecision f;
        f.location = n.always_inline ? ComputeLocation::Inline : ComputeLocation::Root;
        f.tiled = f.location == ComputeLocation::Root;
        if (f.tiled)
            for (const gpusched::Stage &st : n.stages)
                f.stages.push_back(StageTiling{std::vector<int64_t>(st.loops.size(), 1),
                                               std::vector<int64_t>(st.loops.size(), 1)});
        d.funcs.push_back(f);
    }
    return d;
}

} // namespace

TEST_CASE("a footprint through a shift by a loop-fixed amount is not bounded below root",
          "[search][legality]") {
    ShiftedColumn p;
    FunctionDAG dag(p.outputs());
    const int vert = node_named(dag, p.vert), clamped = node_named(dag, p.clamped);
    const Edge &e = edge_into(dag, vert, clamped);
    // The search's own footprint (every loop an interval) is affine and small ...
    CHECK(e.affine);
    // ... but Halide cannot bound it once t is fixed outside the level.
    CHECK_FALSE(e.bounded_below_root);
    CHECK_FALSE(dag.nodes[clamped].bounded_below_root);
    // vert is read at x + dx with t = |dx|: Halide bounds that everywhere.
    CHECK(dag.nodes[vert].bounded_below_root);

    PlainBlur b;
    FunctionDAG bdag(b.outputs());
    CHECK(bdag.nodes[node_named(bdag, b.clamped)].bounded_below_root);
}

TEST_CASE("staging skips a producer Halide cannot bound per thread", "[search][legality]") {
    // The failing schedule of the max_filter bug: vert at root, 32x8 threads
    // each computing 2 rows, clamped at root; staging clamped into vert's
    // threads made lowering throw.
    ShiftedColumn p;
    FunctionDAG dag(p.outputs());
    Decisions d = all_root(dag);
    const int vert = node_named(dag, p.vert);
    REQUIRE(d.funcs[vert].location == ComputeLocation::Root);
    d.funcs[vert].stages[0].serial = {1, 2, 1, 1};
    d.funcs[vert].stages[0].thread = {32, 8, 1, 1};
    d.funcs[0].stages[0].thread = std::vector<int64_t>(dag.nodes[0].stages[0].loops.size(), 1);
    d.funcs[0].stages[0].thread[0] = 32;
    lower_for_cuda(p.out, dag, d);

    // The control: a blur's producer is still staged, and lowers.
    PlainBlur b;
    FunctionDAG bdag(b.outputs());
    Decisions bd = all_root(bdag);
    bd.funcs[0].stages[0].serial = {1, 4};
    bd.funcs[0].stages[0].thread = {32, 8};
    Halide::Pipeline bp(b.out);
    std::string src = schedule_pipeline(bdag, bd, bp, false);
    CHECK(src.find(".in(") != std::string::npos);
    lower_for_cuda(b.out, bdag, bd);
}

namespace {

// Locations offered (before pruning) to producer when every earlier step
// took its first child, and the Func host was put at root tiled with
// `serial` and `thread`.
std::set<ComputeLocation> offered_locations(const FunctionDAG &dag, int producer, int host,
                                            const std::vector<int64_t> &serial,
                                            const std::vector<int64_t> &thread) {
    Decisions d = initial_decisions(dag);
    StepId target{producer, 0};
    for (int step = 0; step < num_steps(dag); step++) {
        StepId id = step_at(dag, step);
        if (id.node == target.node && id.phase == target.phase) break;
        auto kids = enumerate_children(dag, d, id, h100(), PruningLimits{});
        REQUIRE(!kids.empty());
        d = kids[0];
        if (id.node == host && id.phase == 0) REQUIRE(d.funcs[host].location == ComputeLocation::Root);
        if (id.node == host && id.phase == 1) {
            d.funcs[host].stages[0].serial = serial;
            d.funcs[host].stages[0].thread = thread;
        }
    }
    std::set<ComputeLocation> offered;
    for (const FuncDecision &f : enumerate_options(dag, d, target, h100()))
        offered.insert(f.location);
    return offered;
}

} // namespace

TEST_CASE("the search space offers no block or thread level Halide cannot bound", "[search][legality]") {
    ShiftedColumn p;
    FunctionDAG dag(p.outputs());
    std::set<ComputeLocation> offered = offered_locations(
        dag, node_named(dag, p.clamped), node_named(dag, p.vert), {1, 2, 1, 1}, {32, 8, 1, 1});
    CHECK(offered.count(ComputeLocation::Root));
    CHECK_FALSE(offered.count(ComputeLocation::Block));
    CHECK_FALSE(offered.count(ComputeLocation::Thread));

    // The control: the blur's producer gets both.
    PlainBlur b;
    FunctionDAG bdag(b.outputs());
    std::set<ComputeLocation> boffered =
        offered_locations(bdag, node_named(bdag, b.clamped), node_named(bdag, b.out), {1, 2}, {32, 8});
    CHECK(boffered.count(ComputeLocation::Block));
    CHECK(boffered.count(ComputeLocation::Thread));
}

TEST_CASE("beam search on the max_filter access pattern gives a schedule that lowers", "[search][legality]") {
    ShiftedColumn p;
    FunctionDAG dag(p.outputs());
    test_support::TestCostModel model;
    model.set_pipeline(pipeline_features(dag));
    SearchConfig cfg;
    cfg.beam_size = 8;
    cfg.passes = 2;
    cfg.seed = 1;
    SearchResult r = beam_search(dag, model, h100(), cfg);
    lower_for_cuda(p.out, dag, r.decisions);
}

TEST_CASE("a Func whose update writes a data-dependent point is never put in a thread's registers",
          "[search][legality]") {
    ScatteredHistogram p;
    FunctionDAG dag(p.outputs());
    const int hist = node_named(dag, p.hist), out = node_named(dag, p.out);
    CHECK_FALSE(dag.nodes[hist].updates_write_own_point);
    std::set<ComputeLocation> offered = offered_locations(dag, hist, out, {1, 1, 2}, {16, 8, 1});
    CHECK(offered.count(ComputeLocation::Root));
    CHECK_FALSE(offered.count(ComputeLocation::Thread));

    // Why: forced there, Halide 14 refuses the register allocation (its size
    // is the union of the consumer's bins and the data-dependent store).
    Decisions d = all_root(dag);
    d.funcs[out].stages[0].thread = {16, 8, 1};
    d.funcs[out].stages[0].serial = {1, 1, 2};
    FuncDecision at_thread;
    at_thread.location = ComputeLocation::Thread;
    at_thread.host = out;
    d.funcs[hist] = at_thread;
    Halide::Pipeline pipe(p.out);
    schedule_pipeline(dag, d, pipe, true);
    CHECK_THROWS(pipe.compile_to_module(pipe.infer_arguments(), "gs_legality",
                                        Halide::Target("x86-64-linux-cuda-cuda_capability_86")));

    // The control: an in-place reduction is offered thread level, and lowers there.
    InPlaceSum q;
    FunctionDAG qdag(q.outputs());
    const int sum = node_named(qdag, q.sum), qout = node_named(qdag, q.out);
    CHECK(qdag.nodes[sum].updates_write_own_point);
    CHECK(offered_locations(qdag, sum, qout, {1, 1, 2}, {16, 8, 1}).count(ComputeLocation::Thread));
    Decisions qd = all_root(qdag);
    qd.funcs[qout].stages[0].thread = {16, 8, 1};
    qd.funcs[qout].stages[0].serial = {1, 1, 2};
    FuncDecision q_thread = at_thread;
    q_thread.host = qout;
    qd.funcs[sum] = q_thread;
    lower_for_cuda(q.out, qdag, qd);
}

TEST_CASE("a Func read both as is and transposed in one kernel is not computed per block or per thread",
          "[search][legality]") {
    ReadAndTranspose p(true);
    FunctionDAG dag(p.outputs());
    std::set<ComputeLocation> offered =
        offered_locations(dag, node_named(dag, p.f), node_named(dag, p.out), {1, 2}, {32, 8});
    CHECK(offered.count(ComputeLocation::Root));
    CHECK_FALSE(offered.count(ComputeLocation::Block));
    CHECK_FALSE(offered.count(ComputeLocation::Thread));

    // The control: two reads that move together with the tile.
    ReadAndTranspose q(false);
    FunctionDAG qdag(q.outputs());
    std::set<ComputeLocation> qoffered =
        offered_locations(qdag, node_named(qdag, q.f), node_named(qdag, q.out), {1, 2}, {32, 8});
    CHECK(qoffered.count(ComputeLocation::Block));
    CHECK(qoffered.count(ComputeLocation::Thread));
}

namespace {

SearchResult small_beam_search(const FunctionDAG &dag) {
    test_support::TestCostModel model;
    model.set_pipeline(pipeline_features(dag));
    SearchConfig cfg;
    cfg.beam_size = 8;
    cfg.passes = 2;
    cfg.seed = 1;
    return beam_search(dag, model, h100(), cfg);
}

} // namespace

TEST_CASE("a Func read through its estimate stays at root or inline, and the schedule lowers",
          "[search][legality][estimates]") {
    // r_sigma without an estimate: the grid's z extent comes from the
    // Funcs' estimates, and Halide sizes it from r_sigma at run time.
    test_pipelines::EstimatedGrid p(0.0f, true, 128, 128);
    FunctionDAG dag(p.outputs());
    SearchResult r = small_beam_search(dag);
    // gy's z extent is the estimate; the blurs below it are sized from
    // gy's tiles, which Halide bounds, so only gy is held at root.
    const ComputeLocation loc = r.decisions.funcs[node_named(dag, p.gy)].location;
    CHECK((loc == ComputeLocation::Root || loc == ComputeLocation::Inline));
    lower_for_cuda(p.out, dag, r.decisions);
}

TEST_CASE("a table read at an index Halide cannot bound is inlined by the search, and the schedule lowers",
          "[search][legality][estimates]") {
    test_pipelines::UnclampedLookup p(true, false);
    FunctionDAG dag(p.outputs());
    SearchResult r = small_beam_search(dag);
    CHECK(r.decisions.funcs[node_named(dag, p.lut)].location == ComputeLocation::Inline);
    lower_for_cuda(p.out, dag, r.decisions);
    // Why: at root Halide refuses it (a fresh pipeline: the search's
    // schedule is applied to p's Funcs).
    test_pipelines::UnclampedLookup q(true, false);
    FunctionDAG qdag(q.outputs());
    Decisions d = all_root(qdag);
    const int lut = node_named(qdag, q.lut);
    d.funcs[lut].location = ComputeLocation::Root;
    d.funcs[lut].tiled = true;
    d.funcs[lut].stages = {StageTiling{{1}, {1}}};
    Halide::Pipeline pipe(q.out);
    schedule_pipeline(qdag, d, pipe, true);
    CHECK_THROWS_WITH(pipe.compile_to_module(pipe.infer_arguments(), "gs_legality",
                                             Halide::Target("x86-64-linux-cuda-cuda_capability_86")),
                      Catch::Contains("unbounded"));
}

namespace {

// mix is read by a 3-tap stencil in out and, when `row_sum`, along whole
// rows by rowsum (RDom(0, in.width())), which out adds per row.
struct StencilAndRowSum {
    Halide::ImageParam in{Halide::Float(32), 2, "srs_in"};
    Halide::Var x{"x"}, y{"y"};
    Halide::Func mix{"srs_mix"}, rowsum{"srs_rowsum"}, out{"srs_out"};
    // fixed_window: the row reduction covers columns 0..15, not the row.
    explicit StencilAndRowSum(bool row_sum, bool fixed_window = false) {
        mix(x, y) = in(x, y) * 2.0f + 1.0f;
        Halide::Expr v = mix(x - 1, y) + mix(x + 1, y);
        if (row_sum) {
            Halide::RDom r(0, fixed_window ? Halide::Expr(16) : in.width(), "srs_r");
            rowsum(y) = 0.0f;
            rowsum(y) += mix(r, y);
            v += rowsum(y);
        }
        out(x, y) = v;
        in.dim(0).set_estimate(-1, 130);
        in.dim(1).set_estimate(0, 96);
        out.set_estimate(x, 0, 128).set_estimate(y, 0, 96);
    }
    std::vector<Halide::Internal::Function> outputs() const { return {out.function()}; }
};

std::set<ComputeLocation> offered_with_out_tiled(const FunctionDAG &dag, Decisions d, int producer) {
    const int out = 0; // consumers first: the output is node 0
    d.funcs[out].stages[0].serial = {1, 1};
    d.funcs[out].stages[0].thread = {32, 4};
    std::set<ComputeLocation> offered;
    for (const FuncDecision &f : enumerate_options(dag, d, StepId{producer, 0}, h100()))
        offered.insert(f.location);
    return offered;
}

// Locations offered to mix when the row reduction is at the output's Block level.
std::set<ComputeLocation> offered_beside_row_reduction(const StencilAndRowSum &p) {
    FunctionDAG dag(p.outputs());
    Decisions d = all_root(dag);
    const int rowsum = node_named(dag, p.rowsum);
    d.funcs[rowsum].location = ComputeLocation::Block;
    d.funcs[rowsum].host = 0;
    return offered_with_out_tiled(dag, d, node_named(dag, p.mix));
}

} // namespace

TEST_CASE("a Func read in one kernel by a stencil and by a row reduction below root sized by the image stays "
          "at root",
          "[search][legality]") {
    // Fuzz seeds 119 and 124 of reductions=true: at the kernel's Block level
    // the row sum's read does not move with the tile, the stencil's does, and
    // at the image's edge their union is a column wider than the nest sized
    // it; Halide's bound check failed in the first block.
    const std::set<ComputeLocation> offered = offered_beside_row_reduction(StencilAndRowSum(true));
    CHECK(offered.count(ComputeLocation::Root));
    CHECK_FALSE(offered.count(ComputeLocation::Block));
    CHECK_FALSE(offered.count(ComputeLocation::Thread));

    // The control: read by the stencil alone, it may go into the kernel.
    StencilAndRowSum alone(false);
    FunctionDAG adag(alone.outputs());
    CHECK(offered_with_out_tiled(adag, all_root(adag), node_named(adag, alone.mix))
              .count(ComputeLocation::Block));
}

TEST_CASE(
    "a Func read in one kernel by a stencil and by a reduction below root over a fixed window stays at root",
    "[search][legality]") {
    // gs_blur's row_max(y) over columns 0..15 at the output's Block level and
    // its 3-tap stencil read the same boundary condition: per block, their
    // union runs from column 0 to the tile, wider the farther the block, so
    // Halide sizes its threads and shared memory with the image (the e2e
    // test's launch check refused it once the analytic model chose it).
    const std::set<ComputeLocation> offered = offered_beside_row_reduction(StencilAndRowSum(true, true));
    CHECK(offered.count(ComputeLocation::Root));
    CHECK_FALSE(offered.count(ComputeLocation::Block));
    CHECK_FALSE(offered.count(ComputeLocation::Thread));
}
