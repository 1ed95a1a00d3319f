#include "tuner/generate/search_settings.h"

namespace gpusched {

void write_search_settings(const SearchSettings &s, nlohmann::json &config) {
    config["seed"] = s.seed;
    config["beam_size"] = s.beam_size;
    config["passes"] = s.passes;
    config["dropout"] = s.greedy_dropout;
}

SearchSettings read_search_settings(const nlohmann::json &config) {
    SearchSettings s;
    s.seed = config.at("seed").get<uint64_t>();
    s.beam_size = config.at("beam_size").get<int>();
    s.passes = config.at("passes").get<int>();
    s.greedy_dropout = config.at("dropout").get<double>();
    return s;
}

} // namespace gpusched
