// The launch check (core/launch_check.h): real Halide
// pipelines scheduled by hand past the limits, lowered as the generator
// lowers them, and the plugin refusing a forced schedule over the limit.

#include "test/catch2_compat.h"

#include <filesystem>
#include <fstream>

#include <Halide.h>
#include <nlohmann/json.hpp>

#include "core/kernel_assertions.h"
#include "core/launch_check.h"
#include "test/gpu_profiles.h"
#include "tuner/generate/generator_protocol.h"
#include "tuner/subprocess.h"

using namespace Halide;
using gpusched::GpuProfile;
namespace fs = std::filesystem;

namespace {

using gpusched::test::h100;

const Target kCuda(GPUSCHED_HOST_TARGET "-cuda-cuda_capability_86");

bool contains(const std::string &s, const std::string &part) {
    return s.find(part) != std::string::npos;
}

} // namespace

TEST_CASE("a block of 2048 threads is refused naming the kernel the limit and the size", "[launch_check]") {
    ImageParam in(Float(32), 2, "in");
    Func f("over_threads");
    Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
    f(x, y) = in(x, y) * 2.0f;
    f.gpu_tile(x, y, xo, yo, xi, yi, 64, 32);

    const auto launches = gpusched::lower_kernels(Pipeline(f), kCuda).launches;
    REQUIRE(launches.size() == 1);
    CHECK(launches[0].threads[0] == 64);
    CHECK(launches[0].threads[1] == 32);
    CHECK(launches[0].threads[2] == 1);

    const std::string v = gpusched::check_kernel_launches(Pipeline(f), kCuda, h100(), {});
    INFO(v);
    // Halide numbers kernel names per compilation; the Func's name is kept.
    CHECK(contains(launches[0].kernel, "_kernel_over_threads"));
    CHECK(contains(v, "kernel '_kernel_over_threads"));
    CHECK(contains(v, "2048 threads per block"));
    CHECK(contains(v, "limit of 1024"));
}

TEST_CASE("a legal schedule passes the launch check", "[launch_check]") {
    ImageParam in(Float(32), 2, "in");
    Func g("producer"), f("fits");
    Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
    g(x, y) = in(x, y) + 1.0f;
    f(x, y) = g(x, y) + g(x + 1, y);
    f.gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
    g.compute_at(f, xo).gpu_threads(x, y);
    const auto launches = gpusched::lower_kernels(Pipeline(f), kCuda).launches;
    REQUIRE(launches.size() == 1);
    REQUIRE(launches[0].shared_mem_bytes);
    CHECK(*launches[0].shared_mem_bytes == 33 * 8 * 4); // g's 33 x 8 floats per block
    CHECK(gpusched::check_kernel_launches(Pipeline(f), kCuda, h100(), {}).empty());
}

TEST_CASE("shared memory over 48 KiB per block is refused naming the size", "[launch_check]") {
    // Each 32 x 32 block reads g over 32 + 400 columns: 432 x 32 floats, 55296 bytes.
    ImageParam in(Float(32), 2, "in");
    Func g("wide_producer"), f("over_shared");
    Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
    g(x, y) = in(x, y) + 1.0f;
    f(x, y) = g(x, y) + g(x + 400, y);
    f.gpu_tile(x, y, xo, yo, xi, yi, 32, 32);
    g.compute_at(f, xo).gpu_threads(x, y);
    const std::string v = gpusched::check_kernel_launches(Pipeline(f), kCuda, h100(), {});
    INFO(v);
    CHECK(contains(v, "55296 bytes of shared memory per block"));
    CHECK(contains(v, "limit of 49152"));
}

TEST_CASE("a thread extent that depends on the image size is refused as not constant", "[launch_check]") {
    ImageParam in(Float(32), 2, "in");
    Func f("rows");
    Var x("x"), y("y");
    f(x, y) = in(x, y) * 3.0f;
    f.gpu_blocks(y).gpu_threads(x); // a thread per column: as many as the image is wide
    const std::string v = gpusched::check_kernel_launches(Pipeline(f), kCuda, h100(), {});
    INFO(v);
    CHECK(contains(v, "thread extent in x that is not a constant"));
}

namespace {

// out reads up at x - 1 .. x + 1, up reads coarse at (x - 1) / 2 and
// (x - 1) / 2 + 1: a block of 64 columns needs 34 columns of coarse when it
// starts at an even column and 35 at an odd one, which the last block does
// when the output's width is not a multiple of 64 (ShiftInwards). Fuzz seed
// 47's shape, with coarse bounded to `coarse_extent` per block; with the
// shapes the plugin checks at (its FunctionDAG's estimates, taken before
// the schedule is applied, as the plugin does).
struct OddStart {
    Pipeline pipeline;
    gpusched::EstimatedShapes shapes;
    std::string coarse; // its name: Halide makes it unique ("coarse$1") when made again
};
OddStart odd_start_pipeline(const std::string &name, int coarse_extent, int width) {
    ImageParam in(Float(32), 1, "in");
    Func coarse("coarse"), up("up"), out(name);
    Var x("x"), xo("xo"), xi("xi");
    coarse(x) = in(x)*2.0f;
    const Expr x0 = (x - 1) / 2;
    up(x) = coarse(x0) * 0.25f + coarse(x0 + 1) * 0.75f;
    out(x) = up(x - 1) + up(x) + up(x + 1);
    out.set_estimate(x, 0, width);
    in.set_estimates({{-2, width / 2 + 4}});
    const gpusched::EstimatedShapes shapes = gpusched::FunctionDAG({out.function()}).estimated_shapes();
    out.gpu_tile(x, xo, xi, 64, TailStrategy::ShiftInwards);
    up.compute_at(out, xo).gpu_threads(x);
    coarse.compute_at(out, xo).bound_extent(x, coarse_extent).gpu_threads(x);
    return {Pipeline(out), shapes, coarse.name()};
}

} // namespace

TEST_CASE(
    "a bound narrower than some blocks need is refused naming the kernel the bound and the failing block",
    "[launch_check]") {
    // Bounding coarse to 34 makes Halide check, inside the kernel, that the
    // block starts at an even column; the GPU code drops that check and the
    // odd blocks read what was never computed.
    const auto [p, shapes, coarse] = odd_start_pipeline("odd_start", 34, 256);
    const auto assertions = gpusched::lower_kernels(p, kCuda).assertions;
    REQUIRE_FALSE(assertions.empty());
    CHECK(assertions[0].kernel == "odd_start");
    CHECK(assertions[0].bound == coarse + ".x");
    REQUIRE(shapes.outputs == std::vector<std::string>{"odd_start"});
    CHECK(shapes.values.at("odd_start.extent.0") == 256);
    // At the estimated 256 columns every block starts at a multiple of 64;
    // at 257 the last one starts at 193.
    const std::string failure = gpusched::first_failure(assertions[0], shapes);
    INFO(failure);
    CHECK(contains(failure,
                   "kernel of 'odd_start' checks that the bound of " + coarse + ".x covers what is read"));
    // Halide 14 names the block loop odd_start.s0.x.xo.__block_id_x, later
    // ones odd_start.s0.x.xo.block_id_x.
    CHECK(contains(failure, "fails when odd_start is 257 at odd_start.s0.x.xo."));
    CHECK(contains(failure, "block_id_x = 4"));
    CHECK_FALSE(contains(failure, "__thread_id_x")); // the condition does not read it
    const std::string v = gpusched::check_kernel_launches(p, kCuda, h100(), shapes);
    CHECK(contains(v, "bound of " + coarse + ".x"));
}

TEST_CASE("a bound that covers a block at any start passes the check Halide leaves in the kernel",
          "[launch_check]") {
    // Sized for the odd start: Halide still cannot prove it for every start
    // and keeps a check in the kernel, which holds at every size and block.
    [[maybe_unused]] const auto [p, shapes, coarse] = odd_start_pipeline("any_start", 35, 256);
    for (const auto &a : gpusched::lower_kernels(p, kCuda).assertions)
        CHECK(gpusched::first_failure(a, shapes) == "");
    CHECK(gpusched::check_kernel_launches(p, kCuda, h100(), shapes).empty());
}

TEST_CASE("the plugin refuses a forced schedule over the thread limit with the kernel and the sizes",
          "[launch_check][e2e]") {
    // gs_blur's decisions in DAG order (see test_plugin_e2e.cpp), the output
    // forced to 64 x 32 threads per block.
    nlohmann::json d = nlohmann::json::array();
    d.push_back({{"func", "output"},
                 {"location", "root"},
                 {"host", nullptr},
                 {"stages", {{{"serial", {1, 1}}, {"thread", {64, 32}}}}}});
    d.push_back(
        {{"func", "row_max"},
         {"location", "root"},
         {"host", nullptr},
         {"stages", {{{"serial", {1}}, {"thread", {16}}}, {{"serial", {1, 1}}, {"thread", {1, 16}}}}}});
    for (const char *f : {"blur_x", "repeat_edge", "lambda_0", "input_im"})
        d.push_back(
            {{"func", f}, {"location", "inline"}, {"host", nullptr}, {"stages", nlohmann::json::array()}});
    const fs::path dir = fs::path(GS_WORK_DIR) / "launch_check_forced";
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(dir / "record.json") << nlohmann::json{{"decisions", d}}.dump(2);

    auto run_with = [&](bool check) {
        std::ofstream(dir / "config.json") << nlohmann::json{
            {"replay", (dir / "record.json").string()},
            {"cost_model", "analytic"},
            {"check_launches", check}}.dump(2);
        gpusched::ProcessSpec spec;
        spec.argv = {GS_BLUR_GENERATOR,  "-g",
                     "gs_blur",          "-o",
                     dir.string(),       "-e",
                     "static_library,h", "-p",
                     GS_PLUGIN,          "target=" GPUSCHED_HOST_TARGET "-cuda-cuda_capability_86"};
        for (const std::string &a : gpusched::autoscheduler_args("gpusched"))
            spec.argv.push_back(a);
        spec.env = {{"GPUSCHED_CONFIG", (dir / "config.json").string()}};
        spec.timeout = std::chrono::minutes(5);
        return gpusched::run_process(spec);
    };
    // Without the check the schedule compiles: ptxas could not tell.
    const gpusched::ProcessResult unchecked = run_with(false);
    INFO(unchecked.err);
    REQUIRE(unchecked.ok());

    const gpusched::ProcessResult r = run_with(true);
    INFO(r.err);
    CHECK_FALSE(r.ok());
    CHECK(contains(r.err, "launch check failed"));
    CHECK(contains(r.err, "kernel '_kernel_output"));
    CHECK(contains(r.err, "2048 threads per block (64 x 32 x 1)"));
    CHECK(contains(r.err, "limit of 1024 on h100"));
}
