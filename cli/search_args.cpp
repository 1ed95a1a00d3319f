#include "cli/search_args.h"

#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/value_checks.h"
#include "costmodel/weights_file.h"
#include "tuner/user_paths.h"

namespace gpusched::cli {

void add_beam_options(CLI::App *cmd, SearchSettings &search) {
    cmd->add_option("--beam-size", search.beam_size, "Beam size of the beam-search sample")
        ->check(whole_number_at_least(1))
        ->capture_default_str();
    cmd->add_option("--passes", search.passes, "Passes of the beam-search sample")
        ->check(whole_number_at_least(1))
        ->capture_default_str();
}

void add_search_options(CLI::App *cmd, SearchArgs &args) {
    add_beam_options(cmd, args.search);
    cmd->add_option("--seed", args.search.seed, "Base seed; greedy sample i uses seed+i")
        ->check(unsigned_whole_number())
        ->capture_default_str();
    cmd->add_option("--timeout", args.timeout_s, "Seconds allowed per generator run")
        ->check(whole_number_at_least(1))
        ->capture_default_str();
    cmd->add_option("--dropout", args.search.greedy_dropout,
                    "Greedy samples: probability of dropping each ranked choice")
        ->check(finite_number_in(0.0, 0.99))
        ->capture_default_str();
    cmd->add_option("--search-config", args.search_config_file,
                    "JSON file of extra plugin config keys (docs/search.md)");
    cmd->add_option(
        "--weights", args.weights,
        "Cost-model weights file the searches use, as gpusched retrain writes (default: the embedded; "
        "Autotune: the first batch's)");
}

namespace {

// The --search-config file, read into the batch options.
void apply_search_config_file(const SearchArgs &args, OneShotOptions &options) {
    if (args.search_config_file.empty()) return;
    check_input_file(args.search_config_file, "--search-config");
    std::ifstream f(args.search_config_file);
    if (!f) throw UserError("cannot read search config '" + args.search_config_file + "'");
    options.search_config = nlohmann::json::parse(f, nullptr, false);
    if (options.search_config.is_discarded() || !options.search_config.is_object())
        throw UserError("search config '" + args.search_config_file + "' is not a JSON object");
    // Keys each sample's config gets from the command line: in the file they
    // would be overwritten without a word ({"beam_size": -4} ran at 32).
    static const std::vector<std::pair<std::string, std::string>> owned = {
        {"beam_size", "--beam-size"}, {"passes", "--passes"},
        {"seed", "--seed"},           {"dropout", "--dropout"},
        {"gpu_profile", "--gpu"},     {"record_path", "the driver (each sample's own)"}};
    for (const auto &[key, option] : owned)
        if (options.search_config.contains(key))
            throw UserError("search config '" + args.search_config_file + "': key \"" + key +
                            "\" is set by " + option + ", not by the file");
}

} // namespace

void apply_search_args(const SearchArgs &args, OneShotOptions &options) {
    if (args.timeout_s < 1) throw UserError("--timeout must be at least 1 second");
    options.search = args.search;
    options.timeout = std::chrono::seconds(args.timeout_s);
    apply_search_config_file(args, options);
    if (args.weights.empty()) return;
    if (options.search_config.contains("weights_path"))
        throw UserError("the weights are given twice: --weights and weights_path in search config '" +
                        args.search_config_file + "'");
    check_input_file(args.weights, "--weights");
    const std::string path = std::filesystem::absolute(args.weights).string();
    read_weights_file(path); // a bad file is refused before any work
    if (!options.search_config.is_object()) options.search_config = nlohmann::json::object();
    options.search_config["weights_path"] = path;
}

} // namespace gpusched::cli
