// The version banner: gpusched's version, the Halide it targets, and where
// the cost model's default weights come from.

#include "cli/commands.h"
#include "cli/version_config.h"
#include "costmodel/default_weights.h"

namespace gpusched::cli {

std::string version_string() { return GPUSCHED_VERSION; }

std::string version_text() {
    std::string text = std::string("gpusched ") + GPUSCHED_VERSION + "\n";
    text += "Halide " GPUSCHED_HALIDE_VERSION " (plugins: " GPUSCHED_HALIDE_PLUGIN_DIR ")\n";
    text += "cost model default weights: ";
    text += gpusched::default_weights_provenance();
    return text;
}

} // namespace gpusched::cli
