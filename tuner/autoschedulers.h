#pragma once
// Where a schedule comes from. gpusched's own plugin is the default; Halide
// 14's Li2018 GPU autoscheduler is the permanent baseline; "naive" and
// "manual" are schedules the benchmark generators carry themselves (their
// `schedule` GeneratorParam), run through the same driver so every source is
// measured the same way.

#include <optional>
#include <string>
#include <vector>

namespace gpusched {

struct ScheduleSource {
    std::string name;                         // as on the command line
    std::optional<std::string> plugin_path;   // autoscheduler plugin to load (-p)
    std::optional<std::string> halide_name;   // autoscheduler to use (-s)
    std::optional<std::string> schedule_param; // value of the generator's `schedule` param
    bool searches = false;                    // true: gpusched's own search (samples, seeds, records)
    std::string description;
};

// Known names: gpusched, li2018, naive, manual. nullopt if unknown.
std::optional<ScheduleSource> find_schedule_source(const std::string &name);
std::vector<std::string> schedule_source_names();

// Where Halide 14's own plugins (Li2018, Mullapudi2016) are:
// $GPUSCHED_HALIDE_PLUGIN_DIR, else the directory this build was configured
// with (Debian's /usr/lib/x86_64-linux-gnu/halide14).
std::string halide_plugin_dir();

// The gpusched plugin: $GPUSCHED_PLUGIN, else in the install tree of the
// running binary (<libdir>/gpusched/, tuner/install_layout.h), else in its
// build tree. Empty if not found.
std::string locate_gpusched_plugin();

} // namespace gpusched
