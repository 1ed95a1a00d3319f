#pragma once
// The autoscheduler "gpusched_probe" (params_probe.cpp, in the plugin): how
// the driver checks, before any work is stored, that a generator accepts the
// params it is given (tuner/generate/generator_run.h, check_generator_params).

namespace gpusched {

// What the probe stops the generator with; the driver reads it as success.
inline constexpr const char *kParamsProbeReached =
    "gpusched_probe: the generator accepted its params and built its pipeline";

} // namespace gpusched
