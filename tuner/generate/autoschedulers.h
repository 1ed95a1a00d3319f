#pragma once
// Where a schedule comes from. gpusched's own plugin is the default; Halide's
// own GPU autoschedulers are baselines where the Halide has them (Li2018
// always, Anderson2021 from 16, Mullapudi2016 from 21); "naive" and
// "manual" are schedules the benchmark generators carry themselves (their
// `schedule` GeneratorParam), run through the same driver so every source is
// measured the same way.

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpusched {

struct ScheduleSource {
    std::string name;                           // as on the command line
    std::optional<std::string> plugin_path;     // autoscheduler plugin to load (-p)
    std::optional<std::string> halide_name;     // autoscheduler to use (tuner/generate/generator_protocol.h)
    std::map<std::string, std::string> options; // its autoscheduler.KEY=VALUE options
    std::optional<std::string> schedule_param;  // value of the generator's `schedule` param
    bool searches = false;                      // true: gpusched's own search (samples, seeds, records)
    std::string description;
};

// Known names: gpusched, li2018, anderson2021 and anderson2021-paper (Halide 16 on), mullapudi2016
// (Halide 21 on), naive, manual. nullopt if unknown or not in this Halide.
std::optional<ScheduleSource> find_schedule_source(const std::string &name);
// Those this build offers.
std::vector<std::string> schedule_source_names();
// Why `name` is not a schedule source here (not in this Halide, or unknown),
// or "" when it is one.
std::string schedule_source_unavailable(const std::string &name);

// Where Halide's own plugins (Li2018, Anderson2021, Mullapudi2016) are:
// $GPUSCHED_HALIDE_PLUGIN_DIR, else the directory this build was configured
// with (Debian's /usr/lib/x86_64-linux-gnu/halide<version>).
std::string halide_plugin_dir();

// The gpusched plugin: $GPUSCHED_PLUGIN, else in the install tree of the
// running binary (<libdir>/gpusched/, tuner/install_layout.h), else in its
// build tree. Empty if not found.
std::string locate_gpusched_plugin();

} // namespace gpusched
