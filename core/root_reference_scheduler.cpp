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

#include <sstream>
#include <string>
#include <vector>

#include <Halide.h>

#include "core/halide_compat.h"

namespace gpusched {
namespace {

void schedule_all_at_root(const Halide::Pipeline &pipeline, const Halide::Target &, const AutoschedulerOptions &options,
                          Halide::AutoSchedulerResults *results) {
    if (!options.empty())
        halide_user_error("gpusched_root takes no options; got autoscheduler." + options.begin()->first);
    std::vector<Halide::Internal::Function> outputs;
    for (const Halide::Func &f : pipeline.outputs())
        outputs.push_back(f.function());
    const std::size_t funcs = Halide::Internal::build_environment(outputs).size();
    std::ostringstream source;
    // pipeline.get_func(i) numbers the Funcs in realization order, as the
    // generated schedule header names them.
    Halide::Pipeline p = pipeline;
    for (std::size_t i = 0; i < funcs; ++i) {
        Halide::Func f = p.get_func(i);
        f.compute_root();
        source << "    pipeline.get_func(" << i << ").compute_root();  // " << f.name() << "\n";
    }
    name_results(results, "gpusched_root");
    results->schedule_source = source.str();
}

struct RegisterGpuschedRoot {
    RegisterGpuschedRoot() { register_autoscheduler<schedule_all_at_root>("gpusched_root"); }
} register_gpusched_root;

} // namespace
} // namespace gpusched
