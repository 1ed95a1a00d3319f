#include "test/catch2_compat.h"

#include "core/function_dag.h"
#include "test/search/pipelines.h"

using namespace gpusched;
using namespace Halide;

TEST_CASE("a 3x3 blur chain has two Funcs, a stencil footprint and an image input", "[dag]") {
    test_pipelines::Blur p;
    FunctionDAG dag(p.outputs());
    // out, blur_x, and the Func that wraps the ImageParam.
    REQUIRE(dag.nodes.size() == 3);
    CHECK(dag.nodes[0].name == p.out.name());
    CHECK(dag.nodes[0].is_output);
    CHECK(dag.nodes[1].name == p.blur_x.name());
    CHECK(dag.nodes[1].consumers == std::vector<int>{0});
    CHECK(dag.nodes[2].always_inline);
    // Output estimate 256x128; blur_y reads rows y-1..y+1 of blur_x.
    REQUIRE(dag.nodes[0].region.size() == 2);
    CHECK(dag.nodes[0].region[0].extent() == 256);
    CHECK(dag.nodes[1].region[0].extent() == 256);
    CHECK(dag.nodes[1].region[1].min == -1);
    CHECK(dag.nodes[1].region[1].max == 128);
    REQUIRE(dag.images.size() == 1);
    CHECK(dag.images[0].region[0].min == -1);
    CHECK(dag.images[0].region[0].max == 256);

    const gpusched::Stage &s = dag.nodes[0].stages[0];
    REQUIRE(s.edges.size() == 1);
    CHECK(s.edges[0].affine);
    CHECK(s.edges[0].num_calls == 3);
    // A 32x8 tile of out needs a 32x10 tile of blur_x.
    auto r = dag.required(s, s.edges[0], {Span{0, 31}, Span{0, 7}});
    REQUIRE(r);
    CHECK((*r)[0].extent() == 32);
    CHECK((*r)[1].extent() == 10);
    CHECK(s.features.op(OpType::Add, ScalarTypeBucket::Float) == 2);
    CHECK(dag.nodes[1].always_inline == false); // a stencil, not pointwise
}

TEST_CASE("a missing output estimate names the Func and the dimension", "[dag]") {
    Var x("x"), y("y");
    Func f("no_estimate_f");
    f(x, y) = x + y;
    f.set_estimate(x, 0, 100);
    try {
        FunctionDAG dag({f.function()});
        FAIL("expected a UserError");
    } catch (const UserError &e) {
        std::string msg = e.what();
        CHECK(msg.find("no_estimate_f") != std::string::npos);
        CHECK(msg.find("'y'") != std::string::npos);
    }
}

TEST_CASE("reductions, tuples and multiple outputs are represented", "[dag]") {
    test_pipelines::Reductions p;
    FunctionDAG dag(p.outputs());
    int hist = dag.node_index(p.hist.name());
    int sum = dag.node_index(p.row_sum.name());
    int tup = dag.node_index(p.tuple_f.name());
    REQUIRE(hist >= 0);
    REQUIRE(sum >= 0);
    REQUIRE(tup >= 0);
    CHECK(dag.nodes[hist].stages.size() == 2);
    // hist(in(r.x, r.y)) += 1: the update's only loops are the two RVars.
    const gpusched::Stage &hu = dag.nodes[hist].stages[1];
    REQUIRE(hu.loops.size() == 2);
    CHECK(hu.loops[0].is_rvar);
    CHECK(hu.loops[0].rvar_extent == 64);
    CHECK(hu.num_pure_loops() == 0);
    // hist's region is what its consumer reads: hist(x * 4), x in 0..63.
    CHECK(dag.nodes[hist].region[0].min == 0);
    CHECK(dag.nodes[hist].region[0].max == 252);
    const gpusched::Stage &su = dag.nodes[sum].stages[1];
    CHECK(su.num_pure_loops() == 1);
    CHECK(dag.nodes[tup].bytes_per_point == 8); // float + int32
    CHECK(dag.nodes[dag.node_index(p.out1.name())].is_output);
    CHECK(dag.nodes[dag.node_index(p.out2.name())].is_output);
    CHECK(dag.nodes[tup].consumers.size() == 2);
    // A pointwise single-stage Func is always inlined.
    CHECK(dag.nodes[dag.node_index(p.scaled.name())].always_inline);
}

TEST_CASE("boundary conditions evaluate with the input's estimates", "[dag]") {
    test_pipelines::Bounded p;
    FunctionDAG dag(p.outputs());
    REQUIRE(dag.images.size() == 1);
    // repeat_edge clamps reads to the input's estimated 0..99 x 0..49.
    CHECK(dag.images[0].region[0].min == 0);
    CHECK(dag.images[0].region[0].max == 99);
    CHECK(dag.images[0].region[1].max == 49);
}

namespace {

const gpusched::Edge &edge_of(const FunctionDAG &dag, const Func &consumer, const Func &producer) {
    int c = dag.node_index(consumer.name()), p = dag.node_index(producer.name());
    REQUIRE(c >= 0);
    REQUIRE(p >= 0);
    for (const gpusched::Edge &e : dag.nodes[c].stages[0].edges)
        if (!e.producer.is_image && e.producer.index == p) return e;
    FAIL("no edge " << consumer.name() << " -> " << producer.name());
    return dag.nodes[c].stages[0].edges[0];
}

const gpusched::Region &region_of(const FunctionDAG &dag, const Func &f) {
    int n = dag.node_index(f.name());
    REQUIRE(n >= 0);
    return dag.nodes[n].region;
}

std::string dag_error(const std::vector<Halide::Internal::Function> &outputs) {
    try {
        FunctionDAG dag(outputs);
    } catch (const UserError &e) {
        return e.what();
    }
    return "";
}

} // namespace

TEST_CASE(
    "a float parameter's estimate bounds a data-dependent gather, in float32 as the pipeline computes it",
    "[dag][estimates]") {
    // bins 0 .. int(1.0f * (1.0f / 0.1f)) = 10, and the slice reads bin + 1:
    // in double, 1 / 0.1f is 9.99999985 and the last bin would be lost.
    test_pipelines::EstimatedGrid p(0.1f, false);
    FunctionDAG dag(p.outputs());
    CHECK(region_of(dag, p.gy)[2].min == 0);
    CHECK(region_of(dag, p.gy)[2].max == 11);
    CHECK(region_of(dag, p.grid)[2].min == -2);
    CHECK(region_of(dag, p.grid)[2].max == 13);
    CHECK(region_of(dag, p.gy)[0].max == 255 / 8 + 1);
    const gpusched::Edge &e = edge_of(dag, p.slice, p.gy);
    CHECK_FALSE(e.from_estimate());
    CHECK_FALSE(e.unbounded_in_halide);
}

TEST_CASE("a Func whose region is bounded through a scalar parameter is not offered below root",
          "[dag][estimates]") {
    // gy's z extent is 1 / r_sigma: a kernel computing it at block or thread
    // level would take its thread count and shared memory from r_sigma at
    // run time (the launch check refused exactly that).
    test_pipelines::EstimatedGrid p(0.1f, false);
    FunctionDAG dag(p.outputs());
    const gpusched::Edge &e = edge_of(dag, p.slice, p.gy);
    CHECK_FALSE(e.from_estimate());
    CHECK_FALSE(e.bounded_below_root);
    CHECK_FALSE(dag.nodes[dag.node_index(p.gy.name())].bounded_below_root);
    // gx is read by gy at fixed offsets in z: its region follows gy's, but
    // the read itself does not go through the parameter.
    CHECK(edge_of(dag, p.gy, p.gx).bounded_below_root);
}

TEST_CASE("a bound computed from parameter estimates wins over the Func's estimate", "[dag][estimates]") {
    // r_sigma 0.25: bins 0 .. 4, read up to 5; the Func estimates say 0 .. 11.
    test_pipelines::EstimatedGrid p(0.25f, true);
    FunctionDAG dag(p.outputs());
    CHECK(region_of(dag, p.gy)[2].min == 0);
    CHECK(region_of(dag, p.gy)[2].max == 5);
    CHECK(region_of(dag, p.grid)[2].max == 7);
    CHECK_FALSE(edge_of(dag, p.slice, p.gy).from_estimate());
}

TEST_CASE(
    "Func estimates bound a gather whose parameter has no estimate, in the regions and in every footprint",
    "[dag][estimates]") {
    test_pipelines::EstimatedGrid p(0.0f, true);
    FunctionDAG dag(p.outputs());
    // gy z from its estimate [0, 12); the blurs and the grid follow from it.
    CHECK(region_of(dag, p.gy)[2].min == 0);
    CHECK(region_of(dag, p.gy)[2].max == 11);
    CHECK(region_of(dag, p.gx)[2].max == 11);
    CHECK(region_of(dag, p.grid)[2].min == -2);
    CHECK(region_of(dag, p.grid)[2].max == 13);
    const gpusched::Edge &e = edge_of(dag, p.slice, p.gy);
    REQUIRE(e.from_estimate());
    CHECK_FALSE(e.unbounded_in_halide);
    // The footprint of a 16x16 tile, as the featurization evaluates it: x, y
    // from the tile, z from the estimate.
    const gpusched::Stage &s = dag.nodes[dag.node_index(p.slice.name())].stages[0];
    auto r = dag.required(s, e, {Span{0, 15}, Span{0, 15}, Span{0, 1}});
    REQUIRE(r);
    CHECK((*r)[0].extent() == 3);
    CHECK((*r)[2].min == 0);
    CHECK((*r)[2].max == 11);
    // Sized by Halide from r_sigma at run time: never below root.
    CHECK_FALSE(e.bounded_below_root);
    CHECK_FALSE(dag.nodes[dag.node_index(p.gy.name())].bounded_below_root);
}

TEST_CASE("a gather with neither a bound nor a Func estimate names the Func and the dimension",
          "[dag][estimates]") {
    test_pipelines::EstimatedGrid p(0.0f, false);
    const std::string msg = dag_error(p.outputs());
    INFO(msg);
    CHECK(msg.find("dimension 2 ('z')") != std::string::npos);
    CHECK(msg.find("'" + p.gy.name() + "'") != std::string::npos);
    CHECK(msg.find("read by " + p.slice.name()) != std::string::npos);
    CHECK(msg.find("set_estimate") != std::string::npos);
}

TEST_CASE(
    "a table read at an index Halide cannot bound is inlined when it has an estimate, refused otherwise",
    "[dag][estimates]") {
    {
        test_pipelines::UnclampedLookup p(true, false);
        FunctionDAG dag(p.outputs());
        const int lut = dag.node_index(p.lut.name());
        REQUIRE(lut >= 0);
        CHECK(dag.nodes[lut].always_inline);
        CHECK(dag.nodes[lut].region[0].min == 0);
        CHECK(dag.nodes[lut].region[0].max == 255);
        CHECK(edge_of(dag, p.out, p.lut).unbounded_in_halide);
    }
    {
        test_pipelines::UnclampedLookup p(false, false);
        const std::string msg = dag_error(p.outputs());
        INFO(msg);
        CHECK(msg.find("dimension 0 ('x') of the region of '" + p.lut.name() + "'") != std::string::npos);
    }
    {
        test_pipelines::UnclampedLookup p(true, true);
        const std::string msg = dag_error(p.outputs());
        INFO(msg);
        CHECK(msg.find("'" + p.lut.name() + "'") != std::string::npos);
        CHECK(msg.find("could only be inlined") != std::string::npos);
    }
}
