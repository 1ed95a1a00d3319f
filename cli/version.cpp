// The version banner: gpusched's version, the Halide it targets, where the
// cost model's default weights come from, and which plugin and runner pieces
// this binary found (tuner/install_layout.h: an installed gpusched finds them
// relative to itself).

#include "cli/commands.h"
#include "cli/version_config.h"
#include "costmodel/default_weights.h"
#include "tuner/generate/autoschedulers.h"
#include "tuner/measure/runner/benchmark_build.h"
#include "tuner/measure/validation/pocl_validation.h"

namespace gpusched::cli {

std::string version_string() {
    return GPUSCHED_VERSION;
}

std::string version_text() {
    std::string text = std::string("gpusched ") + GPUSCHED_VERSION + "\n";
    // The plugin directory is the one in use (below), not the build
    // machine's: from a bundle or a moved install they differ.
    text += "Halide " GPUSCHED_HALIDE_VERSION "\n";
    text += "cost model default weights: ";
    text += gpusched::default_weights_provenance();
    auto found = [](const std::string &path) { return path.empty() ? std::string("not found") : path; };
    text += "\nplugin: " + found(locate_gpusched_plugin());
    text += "\nHalide plugins: " + halide_plugin_dir();
    text += "\nvalidation runner: " + found(locate_output_runner_archive());
    text += "\nbenchmark runner: " + found(locate_benchmark_runner_archive());
    text += "\nOpenCL probe: " + found(locate_opencl_probe());
    return text;
}

} // namespace gpusched::cli
