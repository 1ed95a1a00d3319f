#pragma once
// How a generator is told to use an autoscheduler, in the protocol of the
// Halide gpusched was built with (GPUSCHED_HALIDE_PROTOCOL, set by
// cmake/halide_version.cmake): Halide 14's `-s NAME auto_schedule=true`, or
// `autoscheduler=NAME` from Halide 16 on. gpusched's own options cross as
// GPUSCHED_CONFIG on both, which its plugin reads whatever the Halide.
// Header-only, so the tests that run generators by hand speak it too.

#include <map>
#include <string>
#include <vector>

#ifndef GPUSCHED_HALIDE_PROTOCOL
#error "GPUSCHED_HALIDE_PROTOCOL is set by cmake/halide_version.cmake"
#endif

namespace gpusched {

// The generator arguments that select autoscheduler `name` from a loaded
// plugin, with `options` as autoscheduler.KEY=VALUE from Halide 16 on.
// Halide 14 takes no autoscheduler options on a generator's command line;
// none of the autoschedulers gpusched uses with it needs one.
inline std::vector<std::string> autoscheduler_args(const std::string &name,
                                                   const std::map<std::string, std::string> &options = {}) {
#if GPUSCHED_HALIDE_PROTOCOL >= 16
    std::vector<std::string> args = {"autoscheduler=" + name};
    for (const auto &[key, value] : options)
        args.push_back("autoscheduler." + key + "=" + value);
    return args;
#else
    (void)options;
    return {"-s", name, "auto_schedule=true"};
#endif
}

// The GeneratorParams that select an autoscheduler, which the driver sets
// itself.
inline const std::vector<std::string> &autoscheduler_param_names() {
#if GPUSCHED_HALIDE_PROTOCOL >= 16
    static const std::vector<std::string> names = {"autoscheduler"};
#else
    static const std::vector<std::string> names = {"auto_schedule", "machine_params"};
#endif
    return names;
}

} // namespace gpusched
