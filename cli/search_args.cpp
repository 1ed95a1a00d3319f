#include "cli/search_args.h"

#include <fstream>

#include <nlohmann/json.hpp>

namespace gpusched::cli {

void add_search_options(CLI::App *cmd, SearchArgs &args) {
    cmd->add_option("--beam-size", args.beam_size, "Beam size of the beam-search sample")->capture_default_str();
    cmd->add_option("--passes", args.passes, "Passes of the beam-search sample")->capture_default_str();
    cmd->add_option("--seed", args.seed, "Base seed; greedy sample i uses seed+i")->capture_default_str();
    cmd->add_option("--timeout", args.timeout_s, "Seconds allowed per generator run")->capture_default_str();
    cmd->add_option("--dropout", args.dropout, "Greedy samples: probability of dropping each ranked choice")
        ->check(CLI::Range(0.0, 0.99))
        ->capture_default_str();
    cmd->add_option("--search-config", args.search_config_file,
                    "JSON file of extra plugin config keys (docs/search.md)");
}

void apply_search_args(const SearchArgs &args, OneShotOptions &options) {
    if (args.timeout_s < 1) throw UserError("--timeout must be at least 1 second");
    options.beam_size = args.beam_size;
    options.passes = args.passes;
    options.seed = args.seed;
    options.greedy_dropout = args.dropout;
    options.timeout = std::chrono::seconds(args.timeout_s);
    if (args.search_config_file.empty()) return;
    std::ifstream f(args.search_config_file);
    if (!f) throw UserError("cannot read search config '" + args.search_config_file + "'");
    options.search_config = nlohmann::json::parse(f, nullptr, false);
    if (options.search_config.is_discarded() || !options.search_config.is_object())
        throw UserError("search config '" + args.search_config_file + "' is not a JSON object");
}

} // namespace gpusched::cli
