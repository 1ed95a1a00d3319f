// Regression test for random_pipeline seed 6 (docs/results/fuzz-search.md):
// a thread-level Func read at half resolution (x/2) inside a kernel whose
// thread block is larger than its consumer's own thread loops.
//
// Such a Func's per-thread footprint depends on the parity of the thread's
// first point, so Halide cannot prove its size constant. Left at
// MemoryType::Auto, Halide 14 moves it to a global heap that
// FuseGPUThreadLoops sizes by the consumer's thread loops but indexes by the
// whole block: the kernel wrote past the heap (heap corruption on POCL; the
// same lowering for CUDA). The schedule must keep it in registers, which
// needs no global memory at all.
#include <regex>

#include "test/catch2_compat.h"

#include <sstream>

#include <Halide.h>

#include "core/function_dag.h"
#include "core/loop_nest.h"
#include "core/schedule_apply.h"
#include "core/search_space.h"

using namespace gpusched;
using namespace Halide;

namespace {

// in -> pointwise p -> nearest upsample u (reads p(x/2, y/2)) -> 3x3 stencil out.
struct UpsampleChain {
    Var x{"x"}, y{"y"};
    ImageParam in{Float(32), 2, "ts_in"};
    Func p{"ts_pointwise"}, u{"ts_upsample"}, out{"ts_out"};
    UpsampleChain() {
        p(x, y) = in(x, y) * 2.0f + 1.0f;
        u(x, y) = p(x / 2, y / 2) * 0.5f;
        out(x, y) = u(x - 1, y - 1) + u(x + 1, y - 1) + u(x, y) + u(x - 1, y + 1) + u(x + 1, y + 1);
        in.dim(0).set_estimate(0, 130);
        in.dim(1).set_estimate(0, 130);
        out.set_estimate(x, 0, 256).set_estimate(y, 0, 256);
    }
};

// The seed-6 shape: out a kernel of 64x4 threads, u fused at its block level
// with 2x2 points per thread (so about 33x3 threads), p per thread of u.
Decisions seed6_shape(const FunctionDAG &dag, const UpsampleChain &c) {
    Decisions d = initial_decisions(dag);
    const int out = dag.node_index(c.out.name()), u = dag.node_index(c.u.name()),
              p = dag.node_index(c.p.name());
    REQUIRE(out >= 0);
    REQUIRE(u >= 0);
    REQUIRE(p >= 0);
    for (auto &f : d.funcs)
        f.location = ComputeLocation::Inline;
    d.funcs[out].location = ComputeLocation::Root;
    d.funcs[out].tiled = true;
    d.funcs[out].stages = {StageTiling{{1, 1}, {64, 4}}};
    d.funcs[u].location = ComputeLocation::Block;
    d.funcs[u].host = out;
    d.funcs[u].stages = {StageTiling{{2, 2}, {1, 1}}};
    d.funcs[p].location = ComputeLocation::Thread;
    d.funcs[p].host = u;
    return d;
}

std::string lowered_host_and_kernels(Pipeline pipeline, const std::string &target) {
    Module m = pipeline.compile_to_module(pipeline.infer_arguments(), "ts", Target(target));
    std::ostringstream s;
    for (const auto &f : m.functions())
        s << f.body << "\n";
    return s.str();
}

} // namespace

TEST_CASE("a thread-level Func read at half resolution in a wider kernel needs no global heap",
          "[fuzz][schedule]") {
    UpsampleChain c;
    FunctionDAG dag({c.out.function()});
    const Decisions d = seed6_shape(dag, c);

    // The precondition of the Halide 14 bug: u's own thread loops are fewer
    // threads than the kernel's block.
    LoopNest nest(dag, d);
    const ScheduledStage &us = nest.stages[nest.stage_at[dag.node_index(c.u.name())][0]];
    REQUIRE(nest.kernels.size() == 1);
    REQUIRE(us.threads < nest.kernels[0].threads_per_block);

    Pipeline pipeline(c.out);
    const std::string source = schedule_pipeline(dag, d, pipeline, true);
    INFO(source);
    // (The Var's number depends on what else the block declares, such as a
    // bound_storage, or bound_extent on Halide 14, for a region reached
    // through x / 2. With bound_extent in x and y, Halide 21 failed to
    // compile the kernel for CUDA: core/halide_compat.h, kRegisterBoundMethod.)
    CHECK(std::regex_search(
        source,
        std::regex(
            R"(ts_pointwise\.compute_at\(ts_upsample, v\d+_x_gt\)\.store_in\(::Halide::MemoryType::Register\))")));

    for (const char *target :
         {GPUSCHED_HOST_TARGET "-opencl", GPUSCHED_HOST_TARGET "-cuda-cuda_capability_86"}) {
        // Only the output lives in global memory; a halide_device_malloc is the
        // kernel heap that FuseGPUThreadLoops sized wrongly.
        const std::string stmt = lowered_host_and_kernels(pipeline, target);
        INFO(target << "\n" << stmt);
        CHECK(stmt.find("halide_device_malloc") == std::string::npos);
    }
}
