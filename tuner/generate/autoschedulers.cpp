#include "tuner/generate/autoschedulers.h"

#include <cstdlib>
#include <filesystem>

#include "tuner/install_layout.h"

namespace gpusched {
namespace fs = std::filesystem;

std::string halide_plugin_dir() {
    if (const char *env = std::getenv("GPUSCHED_HALIDE_PLUGIN_DIR"); env && *env) return env;
    return GPUSCHED_HALIDE_PLUGIN_DIR;
}

std::string locate_gpusched_plugin() {
    if (const char *env = std::getenv("GPUSCHED_PLUGIN"); env && *env) return env;
    const std::string dir = running_executable_dir();
    const std::vector<std::string> candidates = {
        installed_pkglib_dir() + "/libgpusched_autoscheduler.so", // install tree (tuner/install_layout.h)
        dir + "/../core/libgpusched_autoscheduler.so",            // build tree: build/cli/gpusched
        dir + "/libgpusched_autoscheduler.so",
#ifdef GPUSCHED_BUILD_PLUGIN_PATH
        GPUSCHED_BUILD_PLUGIN_PATH,
#endif
    };
    for (const auto &c : candidates) {
        std::error_code ec;
        if (fs::exists(c, ec)) return fs::weakly_canonical(c, ec).string();
    }
    return {};
}

namespace {

// Halide's own autoschedulers, and the first Halide whose plugin makes GPU
// schedules: Li2018 always did; Anderson2021 (the paper's) ships from
// Halide 16; Mullapudi2016 schedules GPUs from Halide 21.
struct HalideAutoscheduler {
    const char *name, *halide_name, *plugin, *description;
    int since;
    // The options that make it schedule for the GPU (autoscheduler.KEY=VALUE).
    std::map<std::string, std::string> gpu_options = {};
};
const HalideAutoscheduler kHalideAutoschedulers[] = {
    {"li2018", "Li2018", "libautoschedule_li2018.so", "Halide's Li2018 GPU autoscheduler (baseline)", 14},
    {"anderson2021", "Anderson2021", "libautoschedule_anderson2021.so",
     "Halide's own Anderson2021, the paper's autoscheduler (the reference), at its defaults", 16},
    // The settings of the paper's evaluation (Anderson et al. 2021, sec. 6),
    // which Halide's defaults leave off: tilings sampled at random rather
    // than only the best-ranked, and a first pass that fixes which Funcs are
    // inlined or at root before the tilings are searched.
    {"anderson2021-paper",
     "Anderson2021",
     "libautoschedule_anderson2021.so",
     "Halide's own Anderson2021 at the paper's settings (randomized tilings, inline and root "
     "decisions frozen first)",
     16,
     {{"randomize_tilings", "1"}, {"freeze_inline_compute_root", "1"}}},
    // Without experimental_gpu_schedule, Halide 21's Mullapudi2016 writes a
    // CPU schedule even for a CUDA target: no kernel at all (seen as the
    // Top 5 row "no CUDA kernels in the compiled library").
    {"mullapudi2016",
     "Mullapudi2016",
     "libautoschedule_mullapudi2016.so",
     "Halide's Mullapudi2016, with the GPU schedules of Halide 21",
     21,
     {{"experimental_gpu_schedule", "1"}}},
};

} // namespace

std::optional<ScheduleSource> find_schedule_source(const std::string &name) {
    ScheduleSource s;
    s.name = name;
    if (name == "gpusched") {
        s.plugin_path = locate_gpusched_plugin();
        s.halide_name = "gpusched";
        s.searches = true;
        s.description = "gpusched's search (Anderson et al. 2021)";
        return s;
    }
    for (const HalideAutoscheduler &a : kHalideAutoschedulers) {
        if (name != a.name || GPUSCHED_HALIDE_VERSION < a.since) continue;
        s.plugin_path = halide_plugin_dir() + "/" + a.plugin;
        s.halide_name = a.halide_name;
        s.options = a.gpu_options;
        s.description = a.description;
        return s;
    }
    if (name == "naive" || name == "manual") {
        s.schedule_param = name;
        s.description = name == "naive" ? "every Func compute_root with a 16x16 gpu_tile (the floor)"
                                        : "the generator's expert hand-written GPU schedule";
        return s;
    }
    return std::nullopt;
}

std::string schedule_source_unavailable(const std::string &name) {
    for (const HalideAutoscheduler &a : kHalideAutoschedulers) {
        if (name == a.name && GPUSCHED_HALIDE_VERSION < a.since)
            return std::string(a.halide_name) + " makes GPU schedules from Halide " +
                   std::to_string(a.since) + " on; this gpusched is built with Halide " +
                   std::to_string(GPUSCHED_HALIDE_VERSION);
    }
    return find_schedule_source(name) ? "" : "unknown schedule source '" + name + "'";
}

std::vector<std::string> schedule_source_names() {
    std::vector<std::string> names = {"gpusched"};
    for (const HalideAutoscheduler &a : kHalideAutoschedulers)
        if (GPUSCHED_HALIDE_VERSION >= a.since) names.push_back(a.name);
    names.push_back("naive");
    names.push_back("manual");
    return names;
}

} // namespace gpusched
