#pragma once
// How the plugin gets its cost model: the one factory of costmodel/
// (make_cost_model), given the config keys it owns ("cost_model",
// "weights_path") and the GPU profile. The search itself only sees the
// CostModel interface.

#include <memory>

#include <nlohmann/json.hpp>

#include "common/gpu_profile.h"
#include "costmodel/cost_model.h"

namespace gpusched {

std::unique_ptr<CostModel> create_search_cost_model(const nlohmann::json &config, const GpuProfile &gpu);

} // namespace gpusched
