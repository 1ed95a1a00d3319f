#include "core/search_cost_model.h"

#include "costmodel/make_cost_model.h"

namespace gpusched {

std::unique_ptr<CostModel> create_search_cost_model(const nlohmann::json &config, const GpuProfile &gpu) {
    return make_cost_model(config, gpu);
}

} // namespace gpusched
