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

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <Halide.h>

#include "core/halide_compat.h"
#include "core/reduction_split.h"
#include "core/schedule_apply.h"
#include "core/search_config.h"
#include "core/search_record.h"
#include "core/stable_names.h"
#include "core/user_error.h"

namespace gpusched {
namespace {

void schedule_all_at_root(const Halide::Pipeline &pipeline, const Halide::Target &, const AutoschedulerOptions &options,
                          Halide::AutoSchedulerResults *results) {
    if (!options.empty())
        halide_user_error("gpusched_root takes no options; got autoscheduler." + options.begin()->first);
    std::vector<Halide::Internal::Function> outputs;
    for (const Halide::Func &f : pipeline.outputs())
        outputs.push_back(f.function());
    std::vector<ReductionSplit> splits;
    try {
        const PluginConfig cfg = load_plugin_config();
        if (!cfg.replay_path.empty()) splits = read_record_reduction_splits(cfg.replay_path);
    } catch (const UserError &e) {
        halide_user_error(std::string("gpusched_root: ") + e.what());
    }
    // pipeline.get_func(i) numbers the Funcs in realization order, as the
    // generated schedule header names them (before any split).
    const std::map<std::string, int> index = get_func_indices(pipeline);
    std::ostringstream source;
    for (const auto &[name, i] : index)
        source << "    ::Halide::Func " << func_handle(name) << " = pipeline.get_func(" << i << ");\n";
    try {
        apply_reduction_splits(outputs, splits);
    } catch (const UserError &e) {
        halide_user_error(std::string("gpusched_root: ") + e.what());
    }
    for (const ReductionSplit &s : splits)
        source << reduction_split_source(s, func_handle(s.func), func_handle(s.intermediate()));
    const std::map<std::string, Halide::Internal::Function> env = Halide::Internal::build_environment(outputs);
    const std::map<std::string, std::string> stable = stable_func_names(env);
    for (const auto &[name, f] : env) {
        Halide::Func(f).compute_root();
        source << "    " << func_handle(stable.at(name)) << ".compute_root();\n";
    }
    name_results(results, "gpusched_root");
    results->schedule_source = source.str();
}

struct RegisterGpuschedRoot {
    RegisterGpuschedRoot() { register_autoscheduler<schedule_all_at_root>("gpusched_root"); }
} register_gpusched_root;

} // namespace
} // namespace gpusched
