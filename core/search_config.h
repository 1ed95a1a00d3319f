#pragma once
// The plugin's configuration: a JSON object read from the file named by the
// environment variable GPUSCHED_CONFIG (written by the driver). Keys, all
// optional, in one table (search_options(); docs/search.md lists them).
//
// Invariant: a parsed config is valid; an unknown key or a bad value is a
// UserError naming the key. No file / no variable => the defaults with the
// built-in h100 profile.

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/gpu_profile.h"
#include "core/beam_search.h"
#include "core/reduction_split_search.h"

namespace gpusched {

struct PluginConfig {
    SearchConfig search;
    GpuProfile gpu;
    std::string record_path; // empty: no record written
    std::string replay_path; // non-empty: apply this record's decisions, no search
    // non-empty: write a seeded uniform sample of the states the search costed
    // (a feature-rows file, costmodel/state_sampling_cost_model.h)
    std::string dump_states_path;
    int dump_states_max = 4096;
    // Lower the scheduled pipeline and refuse kernel launches over the GPU's
    // limits (core/launch_check.h). Off only to study what it catches.
    bool check_launches = true;
    // Search splits of small-output reductions across threads
    // (core/reduction_split_search.h). With dump_states_path the variants'
    // states are dumped too, each under its own pipeline.
    bool split_reductions = true;
    // A split may combine its partials with an atomic update (in parallel,
    // in whatever order the GPU's threads reach the output): off for outputs
    // that must be the same bits on every run.
    bool atomic_reductions = true;
    // A second level may combine consecutive partials in block
    // (core/reduction_split.h, in_block): off to search the space without it.
    bool in_block_reductions = true;
    // Predicted costs of a reduction's splits this close (relative) are a
    // tie the cost model cannot resolve, broken by GPU fill
    // (core/reduction_split_search.h); 0: the cheapest always.
    double split_tie_tolerance = kSplitTieTolerance;
    // The naive schedule (core/naive_schedule.h) is costed beside the
    // search's pick and kept where the model predicts it cheaper: a
    // candidate the model ranks instead of one it never sees (issue 55).
    bool offer_naive = true;
    // No search: the naive schedule costed and applied, as the search
    // would emit it (the baseline in the model's terms, for diagnosis).
    bool naive_only = false;
    nlohmann::json cost_model_config = nlohmann::json::object(); // cost_model, weights_path
};

// One key of the config, in the table every use reads: parsing (an unknown
// key is refused with the table's names), the record's echo of the config,
// `docs/search.md` and the CMake helper's keywords (test/search checks both
// against it). Adding an option is one entry here plus its use.
struct SearchOption {
    const char *key;
    const char *type; // what values it takes, for messages and docs
    const char *help;
    // Sets the option in c from v; throws UserError naming the key.
    void (*read)(const nlohmann::json &v, PluginConfig &c);
    // The value as the record echoes it; null: not echoed (unset paths).
    nlohmann::json (*echo)(const PluginConfig &c);
};
const std::vector<SearchOption> &search_options();

PluginConfig parse_plugin_config(const nlohmann::json &j);
// The config as the decision record echoes it: every option's value.
nlohmann::json echo_plugin_config(const PluginConfig &c);
// Reads $GPUSCHED_CONFIG if set (a missing or unparsable file is an error),
// then the generator's `autoscheduler.KEY=VALUE` options (Halide 16 and
// later) on top: the same keys, each VALUE read as JSON where it parses as
// a number or a boolean and as a string otherwise. An unknown key is an
// error, as in Halide's own autoschedulers.
PluginConfig load_plugin_config(const std::map<std::string, std::string> &options = {});

} // namespace gpusched
