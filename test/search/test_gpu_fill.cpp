// GPU fill (core/gpu_fill.h): a schedule that leaves the GPU to one thread
// shows it, a split reduction launches far more of the GPU, and an image
// kernel that covers the GPU many times over fills it.
#include "test/catch2_compat.h"

#include "core/beam_search.h"
#include "core/gpu_fill.h"
#include "core/loop_nest.h"
#include "core/reduction_split_search.h"
#include "core/search_cost_model.h"
#include "core/search_space.h"
#include "test/gpu_profiles.h"

#include <nlohmann/json.hpp>

using namespace gpusched;
using Halide::Func;
using Halide::ImageParam;
using Halide::RDom;
using Halide::Var;

namespace {

using gpusched::test::h100;

// A separable 3x3 blur of an n x n image: blur_x, then blur (the output).
struct Blur3x3 {
    ImageParam in;
    Var x{"x"}, y{"y"};
    Func blur_x, blur;
    Blur3x3(const std::string &name, int n)
        : in(Halide::Float(32), 2, name + "_in"), blur_x(name + "_x"), blur(name) {
        blur_x(x, y) = in(x - 1, y) + in(x, y) + in(x + 1, y);
        blur(x, y) = blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1);
        in.dim(0).set_estimate(-1, n + 2);
        in.dim(1).set_estimate(-1, n + 2);
        blur.set_estimate(x, 0, n).set_estimate(y, 0, n);
    }
};

SearchConfig small_search() {
    SearchConfig cfg;
    cfg.beam_size = 4;
    cfg.passes = 1;
    return cfg;
}

} // namespace

TEST_CASE("a whole-image sum left in one thread fills a millionth of the GPU, and its reduction is the "
          "least-filled kernel",
          "[search][gpu_fill]") {
    ImageParam in(Halide::Float(32), 2, "fill_in");
    Func out("fill_sum");
    RDom r(0, 4096, 0, 4096, "r");
    out() = 0.0f;
    out() += in(r.x, r.y) * in(r.x, r.y);
    in.dim(0).set_estimate(0, 4096);
    in.dim(1).set_estimate(0, 4096);
    // "fill_sum", or "fill_sum$N" where Halide's name counters collide.
    const std::string reduction = out.name() + ".update(0)";
    const std::vector<Halide::Internal::Function> outputs = {out.function()};
    FunctionDAG dag(outputs);
    std::unique_ptr<CostModel> model = create_search_cost_model(nlohmann::json::object(), h100());
    model->set_pipeline(pipeline_features(dag));
    const SearchResult serial = beam_search(dag, *model, h100(), small_search());

    const GpuFill fill = gpu_fill(dag, serial.decisions, serial.features, h100());
    CHECK(fill.capacity_threads == 132.0 * 2048);
    CHECK(fill.weighted < 1e-5);
    CHECK(fill.least_kernel == reduction);
    double shares = 0;
    bool found = false;
    for (const KernelFill &k : fill.kernels) {
        shares += k.work_share;
        if (k.kernel == reduction) {
            found = true;
            CHECK(k.threads == 1);
            CHECK(k.work_share > 0.99);
        }
    }
    CHECK(found);
    CHECK(shares == Approx(1.0));
    const nlohmann::json j = gpu_fill_to_json(fill);
    CHECK(j.at("least_kernel") == reduction);
    CHECK(j.at("kernels").size() == fill.kernels.size());

    // Split across threads, the same sum launches thousands of times more.
    const ReductionSplitChoice split = search_reduction_splits(outputs, dag, *model, h100(), small_search());
    REQUIRE(!split.splits.empty());
    FunctionDAG split_dag(split_copy(outputs, split.splits));
    const GpuFill split_fill = gpu_fill(split_dag, split.result.decisions, split.result.features, h100());
    CHECK(split_fill.weighted > 1000 * fill.weighted);
}

TEST_CASE("a 2048 x 2048 blur launches more threads than the GPU holds, a fill of 1 in every kernel",
          "[search][gpu_fill]") {
    const Blur3x3 p("fill_blur", 2048);
    const Func &blur = p.blur;
    FunctionDAG dag({blur.function()});
    std::unique_ptr<CostModel> model = create_search_cost_model(nlohmann::json::object(), h100());
    model->set_pipeline(pipeline_features(dag));
    const SearchResult r = beam_search(dag, *model, h100(), small_search());
    const GpuFill fill = gpu_fill(dag, r.decisions, r.features, h100());
    CHECK(fill.weighted == Approx(1.0));
    CHECK(fill.least == Approx(1.0));
    REQUIRE(!fill.kernels.empty());
    for (const KernelFill &k : fill.kernels)
        CHECK(k.threads >= 2048.0 * 2048 / 64); // at most 64 points a thread
}

TEST_CASE(
    "a stage computed at a kernel's Block level counts in its kernel: one launch, the widest stage's threads",
    "[search][gpu_fill]") {
    // A Func fused into its consumer's kernel (shared memory) is not a launch
    // of its own: the kernel's threads per block are the widest of its
    // stages', and its work is the kernel's.
    const Blur3x3 p("fill_fused", 1024);
    const Func &blur_x = p.blur_x, &blur = p.blur;
    FunctionDAG dag({blur.function()});
    const int producer = 1; // consumers first: blur is node 0
    REQUIRE(dag.nodes[producer].func.name() == blur_x.name());
    Decisions d = initial_decisions(dag);
    bool fused = false;
    for (int step = 0; step < num_steps(dag); step++) {
        const StepId id = step_at(dag, step);
        std::vector<Decisions> kids = enumerate_children(dag, d, id, h100(), PruningLimits{});
        REQUIRE(!kids.empty());
        d = kids[0];
        if (id.node == producer && id.phase == 0) {
            for (const Decisions &k : kids) {
                if (k.funcs[producer].location == ComputeLocation::Block) {
                    d = k;
                    fused = true;
                    break;
                }
            }
        }
    }
    REQUIRE(fused);
    std::unique_ptr<CostModel> model = create_search_cost_model(nlohmann::json::object(), h100());
    model->set_pipeline(pipeline_features(dag));
    const SearchResult r = evaluate_decisions(dag, *model, h100(), d);
    const GpuFill fill = gpu_fill(dag, r.decisions, r.features, h100());
    REQUIRE(fill.kernels.size() == 1);
    const KernelFill &k = fill.kernels[0];
    CHECK(k.kernel == blur.name());
    CHECK(k.stages.size() == 2);
    CHECK(k.work_share == Approx(1.0));
    const LoopNest nest(dag, d);
    CHECK(k.threads == double(nest.kernels[0].num_blocks * nest.kernels[0].threads_per_block));
}
