#pragma once
// The one way the search plugin and the driver make a cost model from the
// plugin's JSON config and the GPU profile.
//
// Config keys (all optional):
//   "cost_model":   "network" (default) | "analytic"
//   "weights_path": path of a weights file for "network" (docs/weights-format.md);
//                   absent or null: the embedded default weights. Ignored by
//                   "analytic".
// Other keys are left to their owners (the search reads its own).
//
// Errors: a key with a bad type or value, an unreadable or invalid weights
// file, or a profile the analytic model cannot use throw std::runtime_error
// naming the key (or the file) and what is wrong.

#include <memory>

#include <nlohmann/json_fwd.hpp>

#include "common/gpu_profile.h"
#include "costmodel/cost_model.h"

namespace gpusched {

std::unique_ptr<CostModel> make_cost_model(const nlohmann::json &config, const GpuProfile &profile);

// How the built-in default weights were made (for gpusched --version).
const char *default_weights_provenance();

} // namespace gpusched
