// The autoscheduler "gpusched_root", in the same plugin as
// "gpusched": every Func of the pipeline computed at root, serially, with no
// other directive. It makes the CPU reference that samples are validated
// against when Mullapudi2016 cannot schedule a pipeline. Unscheduled (all
// inline) is just as correct but not bounded: inlining a chain of Funcs that
// each read their producer several times (pyramids, stencils of stencils)
// multiplies the expression at every level, and lowering one such random
// pipeline took more than 24 GiB. At root, each Func's expression is its own
// definition, so compile time and memory grow with the pipeline's size.
// Halide guarantees that a schedule never changes what is computed.
//
// A gpusched schedule that splits reductions (core/reduction_split.h) sums
// in another order than the pipeline as written, and in float that is a
// different result (a 16.7-million-term sum of squares: 2% apart). When
// GPUSCHED_CONFIG names a record to replay, the reference performs that
// record's splits first, so that it sums in the order the schedule under
// test does, and only the schedule differs.
//
// The autoscheduler "gpusched_root_reordered" makes a second reference for
// schedules that sum in an order no record describes (Li2018's rfactor, an
// expert schedule, a GPU's atomic adds): every float reduction with a long
// domain split into about sqrt(N) partials of sqrt(N) terms each, then
// combined. A serial float sum of N terms can drift by N ulps (the 16.7
// million squares: 2% low); two sums of sqrt(N) drift by about 2 sqrt(N)
// (4096 ulps there: 0.02%), so this reference sits near the exact value,
// where any well-ordered parallel sum lands too. Validation accepts an
// output that agrees with either reference (tuner/measure/validation/output_file.h):
// both are the pipeline's float arithmetic in a legitimate order, and a
// schedule bug agrees with neither. It writes the splits it made to
// $GPUSCHED_REORDER_REPORT (a JSON list) before anything else, and stops
// the generator with an error when there are none, so that a pipeline
// without a long float reduction costs one generator start, not a build.

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <Halide.h>

#include "common/errors.h"
#include "core/function_dag.h"
#include "core/halide_compat.h"
#include "core/reduction_split.h"
#include "core/schedule_apply.h"
#include "core/search_config.h"
#include "core/search_record.h"
#include "core/stable_names.h"

namespace gpusched {
namespace {

// Every Func at root after the splits; the schedule source does the same.
void schedule_at_root_after(const Halide::Pipeline &pipeline,
                            const std::vector<Halide::Internal::Function> &outputs,
                            const std::vector<ReductionSplit> &splits, const char *name,
                            Halide::AutoSchedulerResults *results) {
    // pipeline.get_func(i) numbers the Funcs in realization order, as the
    // generated schedule header names them (before any split).
    const std::map<std::string, int> index = get_func_indices(pipeline);
    std::ostringstream source;
    for (const auto &[func, i] : index)
        source << "    ::Halide::Func " << func_handle(func) << " = pipeline.get_func(" << i << ");\n";
    try {
        apply_reduction_splits(outputs, splits);
    } catch (const UserError &e) {
        halide_user_error(std::string(name) + ": " + e.what());
    }
    for (const ReductionSplit &s : splits)
        source << reduction_split_source(s, func_handle(s.func), func_handle(s.intermediate()));
    const std::map<std::string, Halide::Internal::Function> env =
        Halide::Internal::build_environment(outputs);
    const std::map<std::string, std::string> stable = stable_func_names(env);
    for (const auto &[func, f] : env) {
        Halide::Func(f).compute_root();
        source << "    " << func_handle(stable.at(func)) << ".compute_root();\n";
    }
    name_results(results, name);
    results->schedule_source = source.str();
}

std::vector<Halide::Internal::Function> output_functions(const Halide::Pipeline &pipeline) {
    std::vector<Halide::Internal::Function> outputs;
    for (const Halide::Func &f : pipeline.outputs())
        outputs.push_back(f.function());
    return outputs;
}

void schedule_all_at_root(const Halide::Pipeline &pipeline, const Halide::Target &,
                          const AutoschedulerOptions &options, Halide::AutoSchedulerResults *results) {
    if (!options.empty())
        halide_user_error("gpusched_root takes no options; got autoscheduler." + options.begin()->first);
    std::vector<ReductionSplit> splits;
    try {
        const PluginConfig cfg = load_plugin_config();
        if (!cfg.replay_path.empty()) splits = read_record_reduction_splits(cfg.replay_path);
    } catch (const UserError &e) {
        halide_user_error(std::string("gpusched_root: ") + e.what());
    }
    schedule_at_root_after(pipeline, output_functions(pipeline), splits, "gpusched_root", results);
}

// Float reductions of at most this many terms per point need no second
// reference. Two summation orders of N same-signed float terms differ by at
// most about 2 N u of their sum (u = 2^-24, the unit roundoff): 9.8e-4 for
// N = 8192, inside validation's relative tolerance of 1e-3
// (tuner/measure/validation/output_file.h, ComparisonTolerance). A longer
// serial sum may drift past it (16.7 million squares: 2%). Building the
// blocked reference for every reduction of 64 or more terms cost minutes
// on sgemm (a 2048-term dot product per output, computed serially through
// a 2048 x 2048 x 64 intermediate of 1 GiB) and spent a tuning run's whole
// budget before its first sample, for no verdict it could change.
constexpr int64_t kLongestExactEnoughSum = 8192;

// The split of each long float reduction into about sqrt(N) partials. The
// options come from the search's own list (core/reduction_split.h), asked
// of a GPU without a thread limit so that every reduction qualifies,
// whatever its output's size; of those longer than kLongestExactEnoughSum,
// the level-0 split whose partials are nearest sqrt(N). Integer reductions
// are left alone: their sums are the same in every order.
std::vector<ReductionSplit> blocked_float_sums(const std::vector<Halide::Internal::Function> &outputs) {
    GpuProfile unlimited = *find_builtin_gpu_profile("h100");
    unlimited.sm_count = 1;
    unlimited.max_threads_per_sm = std::numeric_limits<int>::max() / 4;
    const FunctionDAG dag(outputs);
    std::vector<ReductionSplit> chosen;
    for (const SplittableReduction &r :
         reduction_split_options(dag, unlimited, {}, /*atomic_combining=*/false, /*in_block_combining=*/true,
                                 /*max_partial_bytes=*/std::numeric_limits<int64_t>::max())) {
        const int index = dag.stable_node_index(r.func);
        if (index < 0) continue;
        const Node *node = &dag.nodes[static_cast<size_t>(index)];
        if (!update_sums_floats(node->func, r.update) || r.reduction_points <= kLongestExactEnoughSum)
            continue;
        const double want = std::log2(std::sqrt(static_cast<double>(r.reduction_points)));
        const ReductionSplit *best = nullptr;
        for (const ReductionSplit &s : r.options)
            if (s.level == 0 && !s.atomic &&
                (!best || std::abs(std::log2(double(s.partials)) - want) <
                              std::abs(std::log2(double(best->partials)) - want)))
                best = &s;
        if (best) chosen.push_back(*best);
    }
    return chosen;
}

void schedule_at_root_reordered(const Halide::Pipeline &pipeline, const Halide::Target &,
                                const AutoschedulerOptions &options, Halide::AutoSchedulerResults *results) {
    if (!options.empty())
        halide_user_error("gpusched_root_reordered takes no options; got autoscheduler." +
                          options.begin()->first);
    const std::vector<Halide::Internal::Function> outputs = output_functions(pipeline);
    std::vector<ReductionSplit> splits;
    try {
        splits = blocked_float_sums(outputs);
    } catch (const UserError &e) {
        halide_user_error(std::string("gpusched_root_reordered: ") + e.what());
    }
    if (const char *report = std::getenv("GPUSCHED_REORDER_REPORT"); report && *report)
        std::ofstream(report) << reduction_splits_to_json(splits).dump() << "\n";
    if (splits.empty())
        halide_user_error("gpusched_root_reordered: the pipeline has no long float reduction to reorder");
    schedule_at_root_after(pipeline, outputs, splits, "gpusched_root_reordered", results);
}

struct RegisterGpuschedRoot {
    RegisterGpuschedRoot() {
        register_autoscheduler<schedule_all_at_root>("gpusched_root");
        register_autoscheduler<schedule_at_root_reordered>("gpusched_root_reordered");
    }
} register_gpusched_root;

} // namespace
} // namespace gpusched
