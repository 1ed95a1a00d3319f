#include <catch2/catch.hpp>

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
    CHECK(dag.nodes[1].always_inline == false);  // a stencil, not pointwise
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
    CHECK(dag.nodes[tup].bytes_per_point == 8);  // float + int32
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
