// An autoscheduler plugin that times another: registered as "timed", it
// runs the autoscheduler named by GPUSCHED_TIMED_INNER (already loaded, e.g.
// `-p libautoschedule_anderson2021.so,libgpusched_timed_autoscheduler.so`)
// with the generator's own `autoscheduler.KEY=VALUE` options, and writes the
// call's wall and CPU seconds (this process and its ended children) to
// GPUSCHED_TIMED_RECORD as JSON.
//
// Why: the paper's Table 4 compares the autoscheduler's own time, but a
// generator run also builds the pipeline and lowers it (a second or so on
// the suite's apps, the same whichever autoscheduler ran), and Halide's
// Anderson2021 reports its own time only with a debug log that costs more
// than its search. Wrapping both autoschedulers in this one shim measures
// the same span for each (search_time.py --measure autoschedule).

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/cpu_seconds.h"
#include "common/elapsed.h"
#include "core/halide_compat.h"

namespace {

std::string required_env(const char *name) {
    const char *value = std::getenv(name);
    if (!value || !*value)
        gpusched::halide_user_error(std::string("timed autoscheduler: set ") + name +
                                    " (GPUSCHED_TIMED_INNER: the autoscheduler to time; "
                                    "GPUSCHED_TIMED_RECORD: where its times go)");
    return value;
}

void timed(const Halide::Pipeline &pipeline, const Halide::Target &target,
           const gpusched::AutoschedulerOptions &options, Halide::AutoSchedulerResults *results) {
    const std::string inner = required_env("GPUSCHED_TIMED_INNER");
    const std::string record = required_env("GPUSCHED_TIMED_RECORD");
    const auto wall_start = std::chrono::steady_clock::now();
    const double cpu_start = gpusched::cpu_with_children_seconds();
    *results = gpusched::apply_named_autoscheduler(pipeline, target, inner, options);
    const double cpu = gpusched::cpu_with_children_seconds() - cpu_start;
    const double wall = gpusched::seconds_since(wall_start);
    FILE *out = std::fopen(record.c_str(), "w");
    if (!out) gpusched::halide_user_error("timed autoscheduler: cannot write " + record);
    std::fprintf(out, "{\"autoscheduler\": \"%s\", \"seconds\": %.6f, \"cpu_seconds\": %.6f}\n",
                 inner.c_str(), wall, cpu);
    if (std::fclose(out) != 0) gpusched::halide_user_error("timed autoscheduler: cannot write " + record);
}

struct Register {
    Register() { gpusched::register_autoscheduler<timed>("timed"); }
} register_timed;

} // namespace
