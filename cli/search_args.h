#pragma once
// The options of the searches behind every mode that generates a batch of
// samples (oneshot, tune --mode top5 / autotune): beam size, passes, seeds,
// greedy dropout, the generator timeout and extra plugin config keys. One
// definition, so the modes cannot drift apart in names, defaults or checks.

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "tuner/generate/search_settings.h"
#include "tuner/modes/oneshot.h"

namespace gpusched::cli {

struct SearchArgs {
    SearchSettings search;
    int timeout_s = 600;
    std::string search_config_file;
    std::string weights; // a weights file (gpusched retrain writes them); empty: the embedded
};

// --beam-size, --passes, --seed, --dropout, --timeout, --search-config, --weights.
void add_search_options(CLI::App *cmd, SearchArgs &args);

// --beam-size and --passes alone, for a command whose other search settings
// are its own (fuzz derives each pipeline's seed).
void add_beam_options(CLI::App *cmd, SearchSettings &search);

// Copies them into a batch's options (--weights as the search config's
// weights_path); throws UserError for a timeout below one second, a search
// config that cannot be read, is not a JSON object or sets a key the command
// line owns, or a weights file that cannot be read.
void apply_search_args(const SearchArgs &args, OneShotOptions &options);

} // namespace gpusched::cli
