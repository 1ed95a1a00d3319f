// Reductions split across threads (core/reduction_split*.h): which
// reductions are offered a split, that the search takes one where the
// output leaves the GPU idle, that the split pipeline lowers for CUDA with
// the same values, and that the split survives the record and the source.
#include "test/catch2_compat.h"

#include "core/beam_search.h"
#include "core/reduction_split.h"
#include "core/reduction_split_search.h"
#include "core/schedule_apply.h"
#include "core/search_cost_model.h"
#include "core/search_record.h"

using namespace gpusched;
using Halide::Func;
using Halide::ImageParam;
using Halide::RDom;
using Halide::Var;

namespace {

GpuProfile h100() { return *find_builtin_gpu_profile("h100"); }

std::vector<Halide::Internal::Function> functions(const std::vector<Func> &fs) {
    std::vector<Halide::Internal::Function> r;
    for (const Func &f : fs) r.push_back(f.function());
    return r;
}

// A whole image reduced to one value: 4096 x 4096 iterations, one output
// point. Halide makes a repeated Func name unique ("sos_out$1"), so each test
// names its own.
struct SumOfSquares {
    ImageParam in;
    Func out;
    explicit SumOfSquares(const std::string &name, int w = 4096, int h = 4096)
        : in(Halide::Float(32), 2, name + "_in"), out(name) {
        RDom r(0, w, 0, h, "r");
        out() = 0.0f;
        out() += in(r.x, r.y) * in(r.x, r.y);
        in.dim(0).set_estimate(0, w);
        in.dim(1).set_estimate(0, h);
    }
};

// A row softmax: two row reductions (max, then sum of exponentials) of 4096
// columns for 512 rows, then a pointwise normalization.
struct Softmax {
    ImageParam in{Halide::Float(32), 2, "sm_in"};
    Var x{"x"}, y{"y"};
    Func row_max{"sm_row_max"}, row_sum{"sm_row_sum"}, out{"sm_out"};
    Softmax() {
        RDom r(0, 4096, "r");
        row_max(y) = Halide::Float(32).min();
        row_max(y) = Halide::max(row_max(y), in(r, y));
        row_sum(y) = 0.0f;
        row_sum(y) += Halide::exp(in(r, y) - row_max(y));
        out(x, y) = Halide::exp(in(x, y) - row_max(y)) / row_sum(y);
        in.dim(0).set_estimate(0, 4096);
        in.dim(1).set_estimate(0, 512);
        out.set_estimate(x, 0, 4096).set_estimate(y, 0, 512);
    }
};

struct Chosen {
    std::vector<ReductionSplit> splits;
    Decisions decisions;
    double cost = 0, unsplit_cost = 0;
};

// What the plugin does: search as written, search the splits, and apply the
// chosen ones to the pipeline's own Funcs.
Chosen search_and_split(const std::vector<Func> &outs) {
    const auto outputs = functions(outs);
    FunctionDAG dag(outputs);
    std::unique_ptr<CostModel> model = create_search_cost_model(nlohmann::json::object(), h100());
    model->set_pipeline(pipeline_features(dag));
    SearchConfig cfg;
    cfg.beam_size = 8;
    cfg.passes = 2;
    const SearchResult unsplit = beam_search(dag, *model, h100(), cfg);
    ReductionSplitChoice choice = search_reduction_splits(outputs, dag, unsplit, *model, h100(), cfg);
    Chosen c;
    c.splits = choice.splits;
    c.cost = choice.result.cost;
    c.unsplit_cost = choice.unsplit_cost;
    apply_reduction_splits(outputs, c.splits);
    FunctionDAG split_dag(outputs);
    c.decisions = c.splits.empty() ? choice.result.decisions : decisions_from_json(split_dag, choice.decisions);
    return c;
}

std::string schedule_and_lower(const std::vector<Func> &outs, const Chosen &c,
                               const std::map<std::string, int> &get_func_index) {
    FunctionDAG dag(functions(outs));
    Halide::Pipeline p(outs);
    std::string src = schedule_pipeline(dag, c.decisions, c.splits, get_func_index, true);
    Halide::Target t("x86-64-linux-cuda-cuda_capability_86");
    REQUIRE_NOTHROW(p.compile_to_module(p.infer_arguments(), "rs_test", t));
    return src;
}

} // namespace

TEST_CASE("a whole-image sum is offered splits into powers of two of partial sums, inner part of the innermost RVar first",
          "[search][reduction_split]") {
    SumOfSquares p("sos_out");
    FunctionDAG dag(functions({p.out}));
    const std::vector<SplittableReduction> r = reduction_split_options(dag, h100());
    REQUIRE(r.size() == 1);
    CHECK(r[0].func == "sos_out");
    CHECK(r[0].output_points == 1);
    CHECK(r[0].reduction_points == int64_t(4096) * 4096);
    REQUIRE(r[0].options.size() == 3);  // 512, 2048 and 8192 partials
    CHECK(r[0].options[0].partials == 512);
    CHECK(r[0].options[0].preserved == std::vector<PreservedRVar>{{"r$x", 512}});
    CHECK(r[0].options[2].partials == 8192);
    CHECK(r[0].options[2].preserved == std::vector<PreservedRVar>{{"r$x", 0}, {"r$y", 2}});
}

TEST_CASE("reductions whose output fills the GPU, tiny reductions and non-associative updates are not offered splits",
          "[search][reduction_split]") {
    ImageParam in(Halide::Float(32), 2, "ns_in");
    Var x("x"), y("y");
    RDom box(-1, 3, -1, 3, "box");
    Func blur("ns_blur"), small("ns_small"), scan("ns_scan"), out("ns_out");
    blur(x, y) = 0.0f;  // 2048 x 2048 outputs: the GPU is full without a split
    blur(x, y) += in(x + box.x, y + box.y);
    RDom few(0, 16, "few");
    small(y) = 0.0f;  // 16 iterations per output: nothing worth splitting
    small(y) += in(few, y);
    RDom all(0, 2048, "all");
    scan() = 0.0f;  // x * 0.5 + v is not associative: rfactor refuses it
    scan() = scan() * 0.5f + in(all, 0);
    out(x, y) = blur(x, y) + small(y) + scan();
    in.dim(0).set_estimate(-1, 2050);
    in.dim(1).set_estimate(-1, 2050);
    out.set_estimate(x, 0, 2048).set_estimate(y, 0, 2048);
    FunctionDAG dag(functions({out}));
    CHECK(reduction_split_options(dag, h100()).empty());
}

TEST_CASE("the search splits a whole-image sum, predicts it faster, and the split schedule lowers for CUDA",
          "[search][reduction_split]") {
    SumOfSquares p("sos_sum");
    const std::map<std::string, int> index = get_func_indices(Halide::Pipeline(p.out));
    const Chosen c = search_and_split({p.out});
    REQUIRE(c.splits.size() == 1);
    CHECK(c.splits[0].func == "sos_sum");
    CHECK(c.cost < c.unsplit_cost / 2);
    const std::string src = schedule_and_lower({p.out}, c, index);
    CHECK(src.find(".rfactor(") != std::string::npos);
    CHECK(src.find("::Halide::Func sos_sum_intm = sos_sum.update(0)") != std::string::npos);
    CHECK(src.find("sos_sum_intm.gpu_threads(") != std::string::npos);  // the partials run in parallel
}

TEST_CASE("the split pipeline computes the same sum as the pipeline as written, on the CPU with the same splits",
          "[search][reduction_split]") {
    // Halide proves the split correct (rfactor); this checks the way it is
    // applied: the schedule's split, run, against the plain serial sum, on
    // integers so that reassociation cannot change a bit.
    constexpr int W = 300, H = 70;
    auto build = [&](bool split) {
        const std::string name = split ? "eq_split" : "eq_serial";
        ImageParam in(Halide::Int(32), 2, name + "_in");
        Func out(name);
        RDom r(0, W, 0, H, "r");
        out() = 0;
        out() += in(r.x, r.y) * (r.x + 1);
        if (split) {
            ReductionSplit s{name, 0, {{"r$x", 32}, {"r$y", 0}}, 32 * H};
            apply_reduction_splits(functions({out}), {s});
        }
        Halide::Buffer<int32_t> input(W, H);
        input.for_each_element([&](int x, int y) { input(x, y) = (x * 7 + y * 13) % 101 - 50; });
        in.set(input);
        Halide::Buffer<int32_t> result = out.realize(std::vector<int>{});
        return result();
    };
    CHECK(build(true) == build(false));
}

TEST_CASE("a row softmax gets its row reductions split and lowers for CUDA", "[search][reduction_split]") {
    Softmax p;
    FunctionDAG dag(functions({p.out}));
    const std::vector<SplittableReduction> r = reduction_split_options(dag, h100());
    REQUIRE(r.size() == 2);
    const std::map<std::string, int> index = get_func_indices(Halide::Pipeline(p.out));
    const Chosen c = search_and_split({p.out});
    REQUIRE(!c.splits.empty());
    CHECK(c.cost < c.unsplit_cost);
    schedule_and_lower({p.out}, c, index);
}

TEST_CASE("reduction splits round-trip through the record, and a malformed list is refused naming the key",
          "[search][reduction_split][record]") {
    const std::vector<ReductionSplit> splits = {{"f", 1, {{"r$x", 0}, {"r$y", 64}}, 4096}};
    CHECK(reduction_splits_from_json(reduction_splits_to_json(splits)) == splits);
    CHECK_THROWS_WITH(reduction_splits_from_json(nlohmann::json::parse(R"([{"func": "f", "update": 0}])")),
                      Catch::Contains("reduction_splits"));
    CHECK_THROWS_WITH(reduction_splits_from_json(nlohmann::json::parse(R"([{"func": "f", "update": 0, "preserved": []}])")),
                      Catch::Contains("preserves nothing"));
}

TEST_CASE("rfactor's intermediates are named without Halide's uniquing counter", "[search][reduction_split]") {
    CHECK(stable_func_name("out_intm$7") == "out_intm");
    CHECK(stable_func_name("out_intm") == "out_intm");
    CHECK(stable_func_name("f$3") == "f$3");
    CHECK(stable_func_name("out_intm$x") == "out_intm$x");
}
