#include "costmodel/make_cost_model.h"

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "costmodel/analytic_cost_model.h"
#include "costmodel/default_weights.h"
#include "costmodel/network_cost_model.h"

namespace gpusched {

std::unique_ptr<CostModel> make_cost_model(const nlohmann::json &config, const GpuProfile &profile) {
    if (!config.is_null() && !config.is_object())
        throw std::runtime_error("cost model config: expected a JSON object, got " +
                                 std::string(config.type_name()));

    std::string kind = "network";
    if (config.is_object() && config.contains("cost_model")) {
        const auto &v = config.at("cost_model");
        if (!v.is_string())
            throw std::runtime_error("cost model config: key \"cost_model\" must be a string (\"network\" or "
                                     "\"analytic\"), got " +
                                     std::string(v.type_name()));
        kind = v.get<std::string>();
    }

    std::string weights_path;
    if (config.is_object() && config.contains("weights_path") && !config.at("weights_path").is_null()) {
        const auto &v = config.at("weights_path");
        if (!v.is_string() || v.get<std::string>().empty())
            throw std::runtime_error(
                "cost model config: key \"weights_path\" must be a non-empty string (a weights "
                "file path) or absent, got " +
                v.dump());
        weights_path = v.get<std::string>();
    }

    if (kind == "analytic") return std::make_unique<AnalyticGpuCostModel>(profile);
    if (kind == "network") {
        if (weights_path.empty()) return std::make_unique<NetworkCostModel>(default_weights(), profile);
        try {
            return std::make_unique<NetworkCostModel>(read_weights_file(weights_path), profile);
        } catch (const std::runtime_error &e) {
            throw std::runtime_error(std::string("cost model config: key \"weights_path\": ") + e.what());
        }
    }
    throw std::runtime_error("cost model config: key \"cost_model\" has unknown value \"" + kind +
                             "\" (expected \"network\" or \"analytic\")");
}

} // namespace gpusched
