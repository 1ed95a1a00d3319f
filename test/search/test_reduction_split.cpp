// Reductions split across threads (core/reduction_split*.h): which
// reductions are offered a split, that the search takes one where the
// output leaves the GPU idle, that the split pipeline lowers for CUDA with
// the same values, and that the split survives the record and the source.
#include "test/catch2_compat.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/beam_search.h"
#include "core/loop_nest.h"
#include "core/reduction_split.h"
#include "core/reduction_split_search.h"
#include "core/schedule_apply.h"
#include "core/search_config.h"
#include "core/search_cost_model.h"
#include "core/search_record.h"
#include "core/stable_names.h"
#include "test/gpu_profiles.h"

using namespace gpusched;
using Halide::Func;
using Halide::ImageParam;
using Halide::RDom;
using Halide::Var;

namespace {

using gpusched::test::h100;

std::vector<Halide::Internal::Function> functions(const std::vector<Func> &fs) {
    std::vector<Halide::Internal::Function> r;
    for (const Func &f : fs)
        r.push_back(f.function());
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
// columns for 512 rows, then a pointwise normalization. The rows are as wide
// as the input (known only at run time), as in benchmarks/apps/softmax: a
// split of such an RVar guards its tail, which Halide writes with a let.
struct Softmax {
    ImageParam in{Halide::Float(32), 2, "sm_in"};
    Var x{"x"}, y{"y"};
    Func row_max{"sm_row_max"}, row_sum{"sm_row_sum"}, out{"sm_out"};
    Softmax() {
        RDom r(in.dim(0).min(), in.dim(0).extent(), "r");
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

SearchConfig beam_8(int passes) {
    SearchConfig cfg;
    cfg.beam_size = 8;
    cfg.passes = passes;
    return cfg;
}

// The plugin's search with the default weights at beam 8: the pipeline as
// written and its splits.
ReductionSplitChoice search_splits_at_beam_8(const std::vector<Halide::Internal::Function> &outputs,
                                             int passes) {
    FunctionDAG dag(outputs);
    std::unique_ptr<CostModel> model = create_search_cost_model(nlohmann::json::object(), h100());
    model->set_pipeline(pipeline_features(dag));
    return search_reduction_splits(outputs, dag, *model, h100(), beam_8(passes));
}

// The full search of the pipeline as written, at the same beam (the split
// search leaves it out where a split wins clearly).
SearchResult unsplit_search_at_beam_8(const std::vector<Halide::Internal::Function> &outputs, int passes) {
    FunctionDAG dag(outputs);
    std::unique_ptr<CostModel> model = create_search_cost_model(nlohmann::json::object(), h100());
    model->set_pipeline(pipeline_features(dag));
    return beam_search(dag, *model, h100(), beam_8(passes));
}

// What the plugin does: search as written and its splits, and apply the
// chosen ones to the pipeline's own Funcs.
Chosen search_and_split(const std::vector<Func> &outs) {
    const auto outputs = functions(outs);
    const ReductionSplitChoice choice = search_splits_at_beam_8(outputs, 2);
    Chosen c;
    c.splits = choice.splits;
    c.cost = choice.result.cost;
    c.unsplit_cost = unsplit_search_at_beam_8(outputs, 2).cost;
    apply_reduction_splits(outputs, c.splits);
    FunctionDAG split_dag(outputs);
    c.decisions =
        c.splits.empty() ? choice.result.decisions : decisions_from_json(split_dag, choice.decisions);
    return c;
}

// The default weights' pick at a small beam (4 x 1): enough to place and
// tile a split's Funcs.
Decisions small_beam_decisions(const FunctionDAG &dag) {
    std::unique_ptr<CostModel> model = create_search_cost_model(nlohmann::json::object(), h100());
    model->set_pipeline(pipeline_features(dag));
    SearchConfig cfg;
    cfg.beam_size = 4;
    cfg.passes = 1;
    return beam_search(dag, *model, h100(), cfg).decisions;
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

TEST_CASE(
    "a whole-image sum is offered splits into partial sums near fractions of the idle threads and the square "
    "root of its domain, inner part of the innermost RVar first",
    "[search][reduction_split]") {
    SumOfSquares p("sos_out");
    FunctionDAG dag(functions({p.out}));
    const std::vector<SplittableReduction> r = reduction_split_options(dag, h100());
    REQUIRE(r.size() == 1);
    CHECK(r[0].func == p.out.name());
    CHECK(r[0].output_points == 1);
    CHECK(r[0].reduction_points == int64_t(4096) * 4096);
    // H100: 132 SMs x 2048 threads = 270336 idle; powers of two below 1/16,
    // 1/4 and all of them, and below sqrt(4096^2); each combined serially,
    // then the same with an atomic combining update (a float sum has one).
    REQUIRE(r[0].options.size() == 8);
    std::vector<ReductionSplit> serial;
    for (size_t i = 0; i < r[0].options.size(); i += 2) {
        ReductionSplit twin = r[0].options[i + 1];
        CHECK(!r[0].options[i].atomic);
        CHECK(twin.atomic);
        twin.atomic = false;
        CHECK(twin == r[0].options[i]);
        serial.push_back(r[0].options[i]);
    }
    CHECK(serial[0].partials == 16384);
    CHECK(serial[0].preserved == std::vector<PreservedRVar>{{"r$x", 0}, {"r$y", 4}});
    CHECK(serial[2].partials == 262144);
    CHECK(serial[2].preserved == std::vector<PreservedRVar>{{"r$x", 0}, {"r$y", 64}});
    CHECK(serial[3].partials == 4096);
    CHECK(serial[3].preserved == std::vector<PreservedRVar>{{"r$x", 0}});
    for (const ReductionSplit &s : r[0].options)
        CHECK(s.level == 0);
}

TEST_CASE("only reductions of one 32-bit value are offered an atomic combining update",
          "[search][reduction_split]") {
    // CUDA and OpenCL have atomic stores for 32-bit values; a Tuple would
    // need a mutex, which neither GPU backend has.
    ImageParam in(Halide::Float(32), 2, "at_in");
    RDom r(0, 4096, 0, 4096, "r");
    Func moments("at_moments"), total("at_total"), wide("at_wide");
    // A sum and a sum of squares in one Tuple (a mean and variance).
    moments() = Halide::Tuple(0.0f, 0.0f);
    moments() = Halide::Tuple(moments()[0] + in(r.x, r.y), moments()[1] + in(r.x, r.y) * in(r.x, r.y));
    total() = 0;
    total() += Halide::cast<int32_t>(in(r.x, r.y));
    wide() = Halide::cast<double>(0);
    wide() += Halide::cast<double>(in(r.x, r.y));
    in.dim(0).set_estimate(0, 4096);
    in.dim(1).set_estimate(0, 4096);
    FunctionDAG dag(functions({moments, total, wide}));
    std::map<std::string, int> atomic_options, serial_options;
    for (const SplittableReduction &sr : reduction_split_options(dag, h100()))
        for (const ReductionSplit &o : sr.options)
            (o.atomic ? atomic_options : serial_options)[sr.func]++;
    CHECK(serial_options[moments.name()] > 0);
    CHECK(atomic_options[moments.name()] == 0);
    CHECK(atomic_options[total.name()] == serial_options[total.name()]);
    CHECK(serial_options[wide.name()] > 0);
    CHECK(atomic_options[wide.name()] == 0);
}

TEST_CASE("a float sum whose result becomes an index or an integer downstream is offered no atomic "
          "combining, an integer one is",
          "[search][reduction_split]") {
    // Random pipeline seed 1166: a channel mean, then a histogram of an
    // image minus it. Atomic adds change the mean's last bits from run to
    // run, which moved a value into the next bin one run in three.
    ImageParam in(Halide::Float(32), 2, "bin_in");
    RDom r(0, 4096, 0, 4096, "r");
    RDom p(0, 256, 0, 256, "p");
    Var x("x"), y("y"), b("b");
    Func mean("bin_mean"), centred("bin_centred"), hist("bin_hist"), count("bin_count"), plain("bin_plain");
    mean() = 0.0f;
    mean() += in(r.x, r.y);
    centred(x, y) = in(x, y) - mean() / (4096.0f * 4096.0f);
    hist(b) = 0;
    hist(Halide::clamp(Halide::cast<int>(centred(p.x, p.y) * 64.0f), 0, 127)) += 1;
    // Seed 1757: a mean, then an 8-bit image of the input minus it.
    Func mean8("bin_mean8"), image8("bin_image8");
    mean8() = 0.0f;
    mean8() += in(r.x, r.y);
    image8(x, y) = Halide::cast<uint8_t>(Halide::clamp(in(x, y) - mean8(), 0.0f, 255.0f));
    image8.set_estimate(x, 0, 4096).set_estimate(y, 0, 4096);
    // The same kinds of sum with nothing discretizing them downstream.
    count() = 0;
    count() += Halide::cast<int32_t>(in(r.x, r.y));
    plain() = 0.0f;
    plain() += in(r.x, r.y) * 2.0f;
    in.dim(0).set_estimate(0, 4096);
    in.dim(1).set_estimate(0, 4096);
    hist.set_estimate(b, 0, 128);
    FunctionDAG dag(functions({hist, image8, count, plain}));
    std::map<std::string, int> atomic_options, serial_options;
    for (const SplittableReduction &sr : reduction_split_options(dag, h100()))
        for (const ReductionSplit &o : sr.options)
            (o.atomic ? atomic_options : serial_options)[sr.func]++;
    CHECK(serial_options[mean.name()] > 0);
    CHECK(atomic_options[mean.name()] == 0); // its bits decide bins
    CHECK(serial_options[mean8.name()] > 0);
    CHECK(atomic_options[mean8.name()] == 0); // and 8-bit steps
    CHECK(atomic_options[plain.name()] == serial_options[plain.name()]);
    CHECK(atomic_options[count.name()] == serial_options[count.name()]);
}

TEST_CASE("with atomic_reductions off no split combines atomically: outputs stay the same bits every run",
          "[search][reduction_split][config]") {
    const PluginConfig off = parse_plugin_config(nlohmann::json::parse(R"({"atomic_reductions": false})"));
    CHECK(!off.atomic_reductions);
    CHECK(parse_plugin_config(nlohmann::json::object()).atomic_reductions);
    CHECK_THROWS_WITH(parse_plugin_config(nlohmann::json::parse(R"({"atomic_reductions": 1})")),
                      Catch::Contains("atomic_reductions"));
    SumOfSquares p("sos_no_atomic");
    FunctionDAG dag(functions({p.out}));
    const std::vector<SplittableReduction> r =
        reduction_split_options(dag, h100(), {}, off.atomic_reductions);
    REQUIRE(r.size() == 1);
    CHECK(r[0].options.size() == 4);
    for (const ReductionSplit &s : r[0].options)
        CHECK(!s.atomic);
}

TEST_CASE("a split whole-image sum is offered a second level for its combining loop, at most 8192 partials, "
          "and no third",
          "[search][reduction_split]") {
    SumOfSquares p("sos_two");
    const auto outputs = functions({p.out});
    const std::string name = p.out.name(); // "sos_two", or "sos_two$N" where Halide's name counters collide
    const ReductionSplit first{name, 0, 0, {{"r$x", 0}, {"r$y", 64}}, 262144};
    FunctionDAG split_dag(split_copy(outputs, {first}));
    const std::vector<SplittableReduction> r = reduction_split_options(split_dag, h100(), {first});
    REQUIRE(r.size() == 1);
    CHECK(r[0].func == name);
    CHECK(r[0].reduction_points == 262144);
    REQUIRE(!r[0].options.empty());
    for (const ReductionSplit &s : r[0].options) {
        CHECK(s.level == 1);
        CHECK(s.partials <= kMaxSerialPartials);
        CHECK(s.intermediate() == name + "_intm2");
    }
    const ReductionSplit second = r[0].options.back();
    FunctionDAG two_dag(split_copy(outputs, {first, second}));
    CHECK(reduction_split_options(two_dag, h100(), {first, second}).empty());
}

TEST_CASE("reductions whose output fills the GPU, tiny reductions and non-associative updates are not "
          "offered splits",
          "[search][reduction_split]") {
    ImageParam in(Halide::Float(32), 2, "ns_in");
    Var x("x"), y("y");
    RDom box(-1, 3, -1, 3, "box");
    Func blur("ns_blur"), small("ns_small"), scan("ns_scan"), out("ns_out");
    blur(x, y) = 0.0f; // 2048 x 2048 outputs: the GPU is full without a split
    blur(x, y) += in(x + box.x, y + box.y);
    RDom few(0, 16, "few");
    small(y) = 0.0f; // 16 iterations per output: nothing worth splitting
    small(y) += in(few, y);
    RDom all(0, 2048, "all");
    scan() = 0.0f; // x * 0.5 + v is not associative: rfactor refuses it
    scan() = scan() * 0.5f + in(all, 0);
    out(x, y) = blur(x, y) + small(y) + scan();
    in.dim(0).set_estimate(-1, 2050);
    in.dim(1).set_estimate(-1, 2050);
    out.set_estimate(x, 0, 2048).set_estimate(y, 0, 2048);
    FunctionDAG dag(functions({out}));
    CHECK(reduction_split_options(dag, h100()).empty());
}

TEST_CASE("the search splits a whole-image sum into thousands of partials that no thread combines serially, "
          "predicts "
          "it faster, and the split schedule lowers for CUDA",
          "[search][reduction_split]") {
    SumOfSquares p("sos_sum");
    const std::map<std::string, int> index = get_func_indices(Halide::Pipeline(p.out));
    const Chosen c = search_and_split({p.out});
    // 16.7 million iterations: thousands of partials, combined in parallel
    // (an atomic combining update) or by a second level of partials.
    REQUIRE(!c.splits.empty());
    CHECK(c.splits[0].func == p.out.name());
    CHECK(c.splits[0].level == 0);
    CHECK(c.splits[0].partials >= 4096);
    const ReductionSplit &last = c.splits.back();
    CHECK((last.atomic || (c.splits.size() == 2 && last.level == 1 && last.partials <= kMaxSerialPartials)));
    CHECK(c.cost < c.unsplit_cost / 2);
    const std::string src = schedule_and_lower({p.out}, c, index);
    INFO(src);
    // Halide names a Func uniquely per process ("sos_sum$1" where a test
    // before this one made a "sos_sum"), and the source writes that name
    // as an identifier ("sos_sum_1").
    std::string out = p.out.name();
    std::replace(out.begin(), out.end(), '$', '_');
    CHECK(src.find("::Halide::Func " + out + "_intm = " + out + ".update(0)") != std::string::npos);
    CHECK(src.find(out + "_intm.gpu_threads(") != std::string::npos); // the partials run in parallel
    if (last.in_block()) {
        // The partials per block of the second level's update (shared memory).
        CHECK(src.find(out + "_intm.compute_at(" + out + "_intm2") != std::string::npos);
        if (last.atomic) CHECK(src.find(out + ".update(0).atomic();") != std::string::npos);
    } else if (last.atomic) {
        CHECK(src.find(out + ".update(0).atomic();") != std::string::npos);
        CHECK(src.find(out + ".update(0).gpu_threads(") != std::string::npos); // so does the combining
    } else {
        CHECK(src.find(out + "_intm2.gpu_threads(") != std::string::npos);
    }
}

TEST_CASE("a second level that combines partials in block computes them in shared memory one thread each, "
          "a few combined points per block, and the schedule lowers for CUDA",
          "[search][reduction_split]") {
    SumOfSquares p("sos_inblock");
    const std::string name = p.out.name();
    const auto outputs = functions({p.out});
    const std::map<std::string, int> index = get_func_indices(Halide::Pipeline(p.out));
    const ReductionSplit first{name, 0, 0, {{"r$x", 0}, {"r$y", 64}}, 262144};
    // The combining loop (4096 x 64 partials) is offered in-block levels of
    // 256 and 1024 consecutive partials, serial and atomic.
    const std::vector<SplittableReduction> r =
        reduction_split_options(FunctionDAG(split_copy(outputs, {first})), h100(), {first});
    REQUIRE(r.size() == 1);
    std::optional<ReductionSplit> in_block;
    for (const ReductionSplit &s : r[0].options)
        if (s.in_block() && !s.atomic && s.preserved[0].factor == 256) in_block = s;
    REQUIRE(in_block);
    CHECK(in_block->partials == 4096 / 256 * 64);
    Chosen c;
    c.splits = {first, *in_block};
    apply_reduction_splits(outputs, c.splits);
    FunctionDAG dag(outputs);
    mark_in_block_combining(dag, c.splits);
    int partials = -1, combiner = -1;
    for (size_t n = 0; n < dag.nodes.size(); n++) {
        if (dag.nodes[n].stable_name == name + "_intm") partials = static_cast<int>(n);
        if (dag.nodes[n].stable_name == name + "_intm2") combiner = static_cast<int>(n);
    }
    REQUIRE(partials >= 0);
    REQUIRE(combiner >= 0);
    CHECK(dag.nodes[partials].combined_in_block_of == combiner);
    c.decisions = small_beam_decisions(dag);
    REQUIRE(c.decisions.funcs[partials].location == ComputeLocation::Block);
    CHECK(c.decisions.funcs[partials].host == combiner);
    // A few combined points per block, each a thread, and their 256
    // partials each a thread: all 262,144 partials in one kernel, in shared
    // memory.
    LoopNest nest(dag, c.decisions);
    const ScheduledStage &combine = nest.stages.at(nest.stage_at[combiner].back());
    const Kernel &k = nest.kernels.at(combine.kernel);
    CHECK(combine.threads >= 1);
    CHECK(combine.threads <= 8);
    CHECK(k.threads_per_block == 256 * combine.threads);
    CHECK(k.num_blocks * k.threads_per_block == 262144);
    CHECK(k.shared_bytes == k.threads_per_block * 4);
    CHECK(nest.stages.at(nest.stage_at[partials][0]).kernel == combine.kernel);
    const std::string src = schedule_and_lower({p.out}, c, index);
    CHECK(src.find(".rfactor({{::Halide::RVar(\"r$x_o\")") != std::string::npos);
    // The source's handles are C++ names: a Func name Halide made unique
    // ("sos_inblock$4", where another name's counter shares its hash) has '_' for '$'.
    std::string handle = name;
    std::replace(handle.begin(), handle.end(), '$', '_');
    CHECK(src.find(handle + "_intm.compute_at(" + handle + "_intm2") != std::string::npos);
}

TEST_CASE("a Func whose name Halide made unique keeps its in-block second level and its intermediates' "
          "names however many copies were split before",
          "[search][reduction_split]") {
    // Two Funcs called "sos_dup": the second is "sos_dup$1", and once its
    // intermediate's name was given (the copies the options are tried on),
    // Halide writes the next "sos_dup_1_intm$N".
    SumOfSquares earlier("sos_dup"), p("sos_dup");
    const std::string name = p.out.name();
    REQUIRE(name.find('$') != std::string::npos);
    const auto outputs = functions({p.out});
    const ReductionSplit first{name, 0, 0, {{"r$x", 0}, {"r$y", 64}}, 262144};
    for (int copies = 0; copies < 2; copies++) {
        const std::vector<SplittableReduction> r =
            reduction_split_options(FunctionDAG(split_copy(outputs, {first})), h100(), {first});
        REQUIRE(r.size() == 1);
        CHECK(std::any_of(r[0].options.begin(), r[0].options.end(),
                          [](const ReductionSplit &s) { return s.in_block(); }));
    }
    const std::vector<SplittableReduction> r =
        reduction_split_options(FunctionDAG(split_copy(outputs, {first})), h100(), {first});
    REQUIRE(r.size() == 1);
    std::optional<ReductionSplit> in_block;
    for (const ReductionSplit &s : r[0].options)
        if (s.in_block() && !s.atomic) in_block = s;
    REQUIRE(in_block);
    apply_reduction_splits(outputs, {first, *in_block});
    FunctionDAG dag(outputs);
    mark_in_block_combining(dag, {first, *in_block});
    const int partials = dag.stable_node_index(name + "_intm"),
              combiner = dag.stable_node_index(name + "_intm2");
    REQUIRE(partials >= 0);
    REQUIRE(combiner >= 0);
    CHECK(dag.nodes[partials].combined_in_block_of == combiner);
}

TEST_CASE("an atomic combining update runs its partials in parallel threads and the schedule lowers for CUDA",
          "[search][reduction_split]") {
    SumOfSquares p("sos_atomic");
    const std::string name = p.out.name();
    const auto outputs = functions({p.out});
    const std::map<std::string, int> index = get_func_indices(Halide::Pipeline(p.out));
    ReductionSplit split{name, 0, 0, {{"r$x", 0}, {"r$y", 64}}, 262144};
    split.atomic = true;
    Chosen c;
    c.splits = {split};
    apply_reduction_splits(outputs, c.splits);
    FunctionDAG dag(outputs);
    const Node *out = nullptr;
    for (const Node &n : dag.nodes)
        if (n.stable_name == name) out = &n;
    REQUIRE(out != nullptr);
    REQUIRE(out->stages.size() == 2);
    CHECK(!out->stages[0].atomic);
    CHECK(out->stages[1].atomic);
    for (size_t l = 0; l < out->stages[1].loops.size(); l++)
        CHECK(out->stages[1].tileable(l));
    c.decisions = small_beam_decisions(dag);
    // The combining loop over 262,144 partials: thousands of blocks of threads.
    LoopNest nest(dag, c.decisions);
    const ScheduledStage &combine = nest.stages.at(nest.stage_at[out - dag.nodes.data()][1]);
    CHECK(nest.kernels.at(combine.kernel).num_blocks * combine.threads >= 262144 / 8);
    const std::string src = schedule_and_lower({p.out}, c, index);
    CHECK(src.find(name + ".update(0).atomic();") != std::string::npos);
    CHECK(src.find(name + ".update(0).gpu_threads(") != std::string::npos);
}

TEST_CASE(
    "the split pipeline computes the same sum as the pipeline as written, on the CPU with the same splits",
    "[search][reduction_split]") {
    // Halide proves the split correct (rfactor); this checks the way it is
    // applied: the schedule's split, run, against the plain serial sum, on
    // integers so that reassociation cannot change a bit.
    constexpr int W = 300, H = 70;
    auto build = [&](int levels) {
        const std::string name = levels < 0 ? std::string("eq_atomic") : "eq_levels" + std::to_string(levels);
        ImageParam in(Halide::Int(32), 2, name + "_in");
        Func out(name);
        RDom r(0, W, 0, H, "r");
        out() = 0;
        out() += in(r.x, r.y) * (r.x + 1);
        std::vector<ReductionSplit> splits;
        if (levels >= 1) splits.push_back({out.name(), 0, 0, {{"r$x", 32}, {"r$y", 0}}, 32 * H});
        // The combining loop (32 x 70 partials) split again into 7 (a tail).
        if (levels == 2) splits.push_back({out.name(), 0, 1, {{"r$y", 7}}, 7});
        // Or the 32 x 70 partials combined 8 at a time in block (an outer
        // piece kept: 4 x 70 partials of the partials; 8 divides 32).
        if (levels == 3) splits.push_back({out.name(), 0, 1, {{"r$x_i", 8, true}, {"r$y", 0}}, 4 * H});
        // Or combined with atomic stores (here on the CPU, in serial order).
        if (levels < 0) {
            splits.push_back({out.name(), 0, 0, {{"r$x", 32}, {"r$y", 0}}, 32 * H});
            splits.back().atomic = true;
        }
        apply_reduction_splits(functions({out}), splits);
        Halide::Buffer<int32_t> input(W, H);
        input.for_each_element([&](int x, int y) { input(x, y) = (x * 7 + y * 13) % 101 - 50; });
        in.set(input);
        Halide::Buffer<int32_t> result = out.realize(std::vector<int>{});
        return result();
    };
    const int serial = build(0);
    CHECK(build(1) == serial);
    CHECK(build(2) == serial);
    CHECK(build(3) == serial);
    CHECK(build(-1) == serial);
}

TEST_CASE("a split row reduction reads its input at known strides: adjacent partials 1 apart and serial "
          "steps P apart",
          "[search][reduction_split][featurize]") {
    // Halide's rfactor of a split RVar binds the original coordinate in a
    // let (t = r.x_o * P + rf); the load indexed by it must still be seen as
    // affine, or the featurizer counts every lane's load as its own sector
    // and the cost model sees an uncoalesced reduction.
    Softmax p;
    constexpr int64_t P = 128;
    const std::vector<ReductionSplit> splits = {{p.row_max.name(), 0, 0, {{"r$x", P}}, P}};
    FunctionDAG dag(split_copy(functions({p.out}), splits));
    const gpusched::Stage *update = nullptr;
    for (const Node &n : dag.nodes)
        if (n.stable_name == p.row_max.name() + "_intm") update = &n.stages.at(1);
    REQUIRE(update != nullptr);
    int rf = -1, rxo = -1;
    for (size_t l = 0; l < update->loops.size(); l++) {
        if (!update->loops[l].is_rvar)
            rf = update->loops[l].var.rfind("rf", 0) == 0 ? int(l) : rf;
        else
            rxo = int(l);
    }
    REQUIRE(rf >= 0);
    REQUIRE(rxo >= 0);
    int input_loads = 0;
    for (const Access &a : update->accesses) {
        if (a.is_self) continue; // the other load is the input's (its wrapper Func, sm_in_im)
        input_loads++;
        REQUIRE(a.jacobian.size() == 2);
        REQUIRE(a.jacobian[0][rf].has_value());
        REQUIRE(a.jacobian[0][rxo].has_value());
        CHECK(*a.jacobian[0][rf] == 1);
        CHECK(*a.jacobian[0][rxo] == P);
    }
    CHECK(input_loads == 1);
}

TEST_CASE("a split that wins clearly spares the pipeline as written its full search, and a pipeline with "
          "nothing to split gets exactly that full search",
          "[search][reduction_split]") {
    // A whole-image sum: its split wins by orders of magnitude at the
    // refinement's beam, so only the split variant gets the full search.
    SumOfSquares p("sos_clear");
    const auto outputs = functions({p.out});
    const ReductionSplitChoice choice = search_splits_at_beam_8(outputs, 2);
    REQUIRE(!choice.splits.empty());
    CHECK(std::isnan(choice.unsplit_cost));
    CHECK(choice.result.cost * kClearWin < choice.unsplit_refined_cost);
    // ...and the full search it was spared would not have won.
    CHECK(choice.result.cost < unsplit_search_at_beam_8(outputs, 2).cost);
    // The call's state count covers the rankings and refinements too.
    CHECK(choice.states_featurized_all > choice.result.stats.states_featurized);

    // A pointwise pipeline: no reduction, so the result is the pipeline's
    // own full search, decisions indexing the DAG as written.
    ImageParam in(Halide::Float(32), 2, "clear_pointwise_in");
    Var x("x"), y("y");
    Func scaled("clear_pointwise");
    scaled(x, y) = in(x, y) * 2.0f;
    scaled.set_estimate(x, 0, 1024).set_estimate(y, 0, 1024);
    const auto pointwise = functions({scaled});
    const ReductionSplitChoice none = search_splits_at_beam_8(pointwise, 2);
    CHECK(none.splits.empty());
    CHECK(std::isnan(none.unsplit_refined_cost));
    const SearchResult direct = unsplit_search_at_beam_8(pointwise, 2);
    CHECK(none.result.cost == direct.cost);
    CHECK(none.unsplit_cost == direct.cost);
    CHECK(none.result.decisions == direct.decisions);
    CHECK(none.states_featurized_all == direct.stats.states_featurized); // the only search made
}

TEST_CASE(
    "a sample's search of its chosen split variant keeps the sample's dropout, not the greedy ranking's "
    "none",
    "[search][reduction_split]") {
    SumOfSquares p("sos_dropout");
    const auto outputs = functions({p.out});
    std::unique_ptr<CostModel> model = create_search_cost_model(nlohmann::json::object(), h100());
    SearchConfig sample; // as One Shot's samples: beam 1, one pass, dropout
    sample.beam_size = 1;
    sample.passes = 1;
    sample.dropout = 0.5;
    sample.seed = 3;
    FunctionDAG dag(outputs);
    model->set_pipeline(pipeline_features(dag));
    const ReductionSplitChoice choice = search_reduction_splits(outputs, dag, *model, h100(), sample);
    REQUIRE(!choice.splits.empty());
    // The chosen variant searched directly, with the sample's configuration
    // and without its dropout.
    FunctionDAG variant(split_copy(outputs, choice.splits));
    mark_in_block_combining(variant, choice.splits);
    model->set_pipeline(pipeline_features(variant));
    const SearchResult with_dropout = beam_search(variant, *model, h100(), sample);
    SearchConfig no_dropout = sample;
    no_dropout.dropout = 0;
    const SearchResult without_dropout = beam_search(variant, *model, h100(), no_dropout);
    REQUIRE(with_dropout.cost != without_dropout.cost); // else this seed tells the two apart by nothing
    CHECK(choice.result.cost == with_dropout.cost);
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

TEST_CASE(
    "refined splits of a reduction that tie within the tolerance go to the one filling more of the GPU, "
    "a cheaper one beyond it wins",
    "[search][reduction_split]") {
    // {refined cost, fill of the reduction's kernels}, a tolerance of 2%
    CHECK(pick_refined({{1.0, 0.3}, {1.01, 0.9}}, 0.02) == 1);
    CHECK(pick_refined({{1.0, 0.3}, {1.05, 0.9}}, 0.02) == 0);
    CHECK(pick_refined({{1.01, 0.9}, {1.0, 0.3}, {1.015, 0.95}}, 0.02) == 2);
    // Fills beyond the whole GPU are no better than the whole GPU: the cheaper.
    CHECK(pick_refined({{1.0, 1.0}, {1.01, 4.0}}, 0.02) == 0);
    CHECK(pick_refined({{1.01, 0.5}, {1.0, 0.5}}, 0.02) == 1);
    // No tolerance: the cheapest always.
    CHECK(pick_refined({{1.0, 0.3}, {1.0001, 0.9}}, 0) == 0);

    // The search's own refinements of a row softmax's two reductions, with
    // the default weights: each keeps, among the candidates that tie the
    // cheapest, the one whose kernels fill the GPU most.
    Softmax p;
    const ReductionSplitChoice choice = search_splits_at_beam_8(functions({p.out}), 1);
    REQUIRE(choice.refinements.size() >= 1);
    const double tolerance = kSplitTieTolerance;
    for (const nlohmann::json &r : choice.refinements) {
        const std::vector<double> costs = r.at("refined_costs"), fills = r.at("fills");
        REQUIRE(costs.size() == fills.size());
        const size_t picked = r.at("picked");
        REQUIRE(picked < costs.size());
        const double cheapest = *std::min_element(costs.begin(), costs.end());
        CHECK(costs[picked] <= cheapest * (1 + tolerance));
        for (size_t i = 0; i < costs.size(); i++)
            if (costs[i] <= cheapest * (1 + tolerance))
                CHECK(std::min(1.0, fills[i]) <= std::min(1.0, fills[picked]));
    }
}

TEST_CASE("reduction splits round-trip through the record with their atomic combining, and a malformed list "
          "is refused naming the key",
          "[search][reduction_split][record]") {
    std::vector<ReductionSplit> splits = {{"f", 1, 0, {{"r$x", 0}, {"r$y", 64}}, 4096},
                                          {"f", 1, 1, {{"r$x", 64}}, 64}};
    CHECK(reduction_splits_from_json(reduction_splits_to_json(splits)) == splits);
    splits.pop_back();
    splits[0].atomic = true;
    CHECK(reduction_splits_from_json(reduction_splits_to_json(splits)) == splits);
    CHECK(reduction_splits_to_json(splits)[0].at("atomic") == true);
    // An in-block second level keeps the outer piece of its split.
    splits = {{"f", 1, 0, {{"r$x", 0}, {"r$y", 64}}, 262144},
              {"f", 1, 1, {{"r$x", 256, true}, {"r$y_i", 0}}, 1024}};
    splits[1].atomic = true;
    CHECK(reduction_splits_from_json(reduction_splits_to_json(splits)) == splits);
    CHECK(splits[1].in_block());
    CHECK(!splits[0].in_block());
    CHECK_THROWS_WITH(
        reduction_splits_from_json(nlohmann::json::parse(
            R"([{"func": "f", "update": 0, "preserved": [{"rvar": "r", "factor": 8, "outer": true}]}])")),
        Catch::Contains("outer part"));
    CHECK_THROWS_WITH(reduction_splits_from_json(nlohmann::json::parse(R"([{"func": "f", "update": 0}])")),
                      Catch::Contains("reduction_splits"));
    CHECK_THROWS_WITH(
        reduction_splits_from_json(nlohmann::json::parse(R"([{"func": "f", "update": 0, "preserved": []}])")),
        Catch::Contains("preserves nothing"));
}

TEST_CASE("rfactor's intermediates are named by their order of creation, without Halide's uniquing counter",
          "[search][reduction_split]") {
    // A process's first intermediate of a Func has no counter, later ones do,
    // and counters grow: 12 after 9, numerically.
    auto fresh = stable_func_names({"out", "out_intm", "out_intm$1", "g$3"});
    CHECK(fresh.at("out") == "out");
    CHECK(fresh.at("out_intm") == "out_intm");
    CHECK(fresh.at("out_intm$1") == "out_intm2");
    CHECK(fresh.at("g$3") == "g$3");
    auto later = stable_func_names({"out_intm$12", "out_intm$9", "h_intm$4"});
    CHECK(later.at("out_intm$9") == "out_intm");
    CHECK(later.at("out_intm$12") == "out_intm2");
    CHECK(later.at("h_intm$4") == "h_intm");
    CHECK(stable_func_names({"out_intm$x"}).at("out_intm$x") == "out_intm$x");
    // A Func named twice ("out$2"): Halide writes its intermediates' names
    // with '_' for '$' once it has given them before, and they are still its.
    auto counted = stable_func_names({"out", "out$2", "out$2_intm", "out_2_intm$1", "out_intm$7"});
    CHECK(counted.at("out$2_intm") == "out$2_intm");
    CHECK(counted.at("out_2_intm$1") == "out$2_intm2");
    CHECK(counted.at("out_intm$7") == "out_intm");
    auto counted_later = stable_func_names({"out$2", "out_2_intm$3", "out_2_intm$6"});
    CHECK(counted_later.at("out_2_intm$3") == "out$2_intm");
    CHECK(counted_later.at("out_2_intm$6") == "out$2_intm2");
    // A Func that is called the prefix keeps its intermediates.
    CHECK(stable_func_names({"out$2", "out_2", "out_2_intm$3"}).at("out_2_intm$3") == "out_2_intm");
    // A Func of the user's already called what an intermediate would be: Halide's names stay.
    auto clash = stable_func_names({"out_intm2", "out_intm$3", "out_intm$5"});
    CHECK(clash.at("out_intm2") == "out_intm2");
    CHECK(clash.at("out_intm$3") == "out_intm$3");
    CHECK(clash.at("out_intm$5") == "out_intm$5");
}

TEST_CASE(
    "a split variant's DAG built with the call's memo bounds the same footprints below root as one built "
    "without it, reusing the analysis of the stages the split left alone",
    "[search][reduction_split]") {
    Softmax sm;
    const auto outputs = functions({sm.out});
    DagBuildMemo memo;
    const FunctionDAG written(outputs, &memo);
    const int64_t misses_written = memo.misses;
    CHECK(memo.hits == 0);
    const auto reductions = reduction_split_options(written, h100(), {}, true, true);
    REQUIRE_FALSE(reductions.empty());
    REQUIRE_FALSE(reductions[0].options.empty());
    const std::vector<ReductionSplit> split = {reductions[0].options[0]};
    INFO("split of " << split[0].func << " into " << split[0].partials);

    const FunctionDAG plain(split_copy(outputs, split));
    const FunctionDAG memoized(split_copy(outputs, split), &memo);
    // The split Func's update and its intermediate are new; the rest is the
    // pipeline as written.
    CHECK(memo.hits > 0);
    CHECK(memo.misses > misses_written);
    REQUIRE(plain.nodes.size() == memoized.nodes.size());
    int edges = 0;
    for (size_t n = 0; n < plain.nodes.size(); n++) {
        REQUIRE(plain.nodes[n].stable_name == memoized.nodes[n].stable_name);
        CHECK(plain.nodes[n].bounded_below_root == memoized.nodes[n].bounded_below_root);
        REQUIRE(plain.nodes[n].stages.size() == memoized.nodes[n].stages.size());
        for (size_t s = 0; s < plain.nodes[n].stages.size(); s++) {
            const gpusched::Stage &a = plain.nodes[n].stages[s], &b = memoized.nodes[n].stages[s];
            REQUIRE(a.edges.size() == b.edges.size());
            for (size_t e = 0; e < a.edges.size(); e++, edges++) {
                INFO(a.name << " edge " << e);
                CHECK(a.edges[e].producer == b.edges[e].producer);
                CHECK(a.edges[e].bounded_below_root == b.edges[e].bounded_below_root);
            }
        }
    }
    CHECK(edges > 3);
}
