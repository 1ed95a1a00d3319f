// The autoscheduler "gpusched_probe", in the same plugin as "gpusched". A
// generator reads its params and builds its pipeline before it calls the
// autoscheduler, and lowers it only after; this one stops the generator
// there, with the message of core/params_probe.h. So the driver's params
// check costs the pipeline's construction (a tenth of a second) and none of
// its lowering, which for the same pipeline unscheduled (all inline) took
// six minutes and 24 GiB on a random pipeline, and which no header or stub
// output of GenGen skips while still reading the params.

#include <Halide.h>

#include "core/halide_compat.h"
#include "core/params_probe.h"

namespace gpusched {
namespace {

void stop_after_construction(const Halide::Pipeline &, const Halide::Target &, const AutoschedulerOptions &,
                             Halide::AutoSchedulerResults *) {
    halide_user_error(kParamsProbeReached);
}

struct RegisterGpuschedProbe {
    RegisterGpuschedProbe() { register_autoscheduler<stop_after_construction>("gpusched_probe"); }
} register_gpusched_probe;

} // namespace
} // namespace gpusched
