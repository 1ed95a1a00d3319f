#pragma once
// The plugin's configuration: a JSON object read from the file named by the
// environment variable GPUSCHED_CONFIG (written by the driver). Keys, all
// optional (docs/search.md): beam_size, passes, seed, dropout, cost_model,
// weights_path, gpu_profile, record_path, replay, memoize,
// hierarchical_sampling, freezing, dump_states_path, dump_states_max,
// check_launches, split_reductions, atomic_reductions.
//
// Invariant: a parsed config is valid; an unknown key or a bad value is a
// UserError naming the key. No file / no variable => the defaults with the
// built-in h100 profile.

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "core/beam_search.h"
#include "core/gpu_profile.h"

namespace gpusched {

struct PluginConfig {
    SearchConfig search;
    GpuProfile gpu;
    std::string record_path;  // empty: no record written
    std::string replay_path;  // non-empty: apply this record's decisions, no search
    // non-empty: write a seeded uniform sample of the states the search costed
    // (a feature-rows file, costmodel/state_sampling_cost_model.h)
    std::string dump_states_path;
    int dump_states_max = 4096;
    // Lower the scheduled pipeline and refuse kernel launches over the GPU's
    // limits (core/launch_check.h). Off only to study what it catches.
    bool check_launches = true;
    // Search splits of small-output reductions across threads
    // (core/reduction_split_search.h). Not with dump_states_path: the dumped
    // states must all be of one pipeline.
    bool split_reductions = true;
    // A split may combine its partials with an atomic update (in parallel,
    // in whatever order the GPU's threads reach the output): off for outputs
    // that must be the same bits on every run.
    bool atomic_reductions = true;
    nlohmann::json cost_model_config = nlohmann::json::object();  // cost_model, weights_path
};

PluginConfig parse_plugin_config(const nlohmann::json &j);
// Reads $GPUSCHED_CONFIG if set (a missing or unparsable file is an error),
// then the generator's `autoscheduler.KEY=VALUE` options (Halide 16 and
// later) on top: the same keys, each VALUE read as JSON where it parses as
// a number or a boolean and as a string otherwise. An unknown key is an
// error, as in Halide's own autoschedulers.
PluginConfig load_plugin_config(const std::map<std::string, std::string> &options = {});

} // namespace gpusched
